//! Kopf peering: how Kopf operators decide which of them works, and how to read it from the
//! cluster (Kopf `kopf/_core/engines/peering.py`, `kopf/_cogs/configs/configuration.py`,
//! `kopf/cli.py`; the same in 1.29–1.38 and on Kopf's main branch of 2026-06).
//!
//! - Peering objects are `KopfPeering` (namespaced: one in each namespace the operator serves)
//!   or `ClusterKopfPeering` (an operator serving the cluster, `-A`), in `kopf.dev/v1` (also the
//!   legacy `zalando.org/v1`), named `default` unless `--peering NAME` / `KOPF_RUN_PEERING`.
//! - Each operator patches its keep-alive into the object's `status`:
//!   `{IDENTITY: {"priority": int, "lifetime": seconds, "lastseen": ISO time}}`; an entry is dead
//!   once `lastseen + lifetime` has passed (lifetime 60 when absent).
//! - An operator **pauses** while another live peer has a higher priority, and also — with a
//!   warning — while another live peer has the *same* priority: then all of them pause. Kopf has
//!   no leader election, so two replicas of one Deployment pause each other.
//! - `--standalone` turns peering off. Without it and without `--peering`, the `default` object
//!   is auto-detected: absent means standalone. `--peering NAME` makes peering mandatory: the
//!   operator stays paused until that object exists.
//! - Priority: `--priority N` / `-p N` (default 0); `--dev` means 666. `kopf freeze` writes an
//!   entry of priority 100 (by default) for `--lifetime` seconds.
//! - Identity: `POD_ID` from the environment, else `USER@HOST/TIMESTAMP/RND` (HOST is the Pod
//!   name, or its FQDN, in a Pod).

use chrono::{DateTime, Duration, Utc};
use serde_json::Value;

/// The peering object's name unless `--peering` / `KOPF_RUN_PEERING` says otherwise.
pub const DEFAULT_PEERING: &str = "default";
/// Kopf's `--dev` priority.
pub const DEV_PRIORITY: i64 = 666;
/// A peer's lifetime when its entry does not give one (Kopf's hard-coded 60 s).
pub const DEFAULT_LIFETIME_SECONDS: i64 = 60;

/// The API groups Kopf looks for peering objects in, newest first.
pub const PEERING_GROUPS: &[&str] = &["kopf.dev", "zalando.org"];

/// How a Kopf operator takes part in peering, from its command line and environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PeeringMode {
    /// `--standalone`: no peering; nothing pauses it.
    Standalone,
    /// Peering through the object `name`.
    Peering {
        /// The peering object's name.
        name: String,
        /// `--peering`/`KOPF_RUN_PEERING` given: the object must exist, else the operator pauses.
        mandatory: bool,
        /// `ClusterKopfPeering` (operator serves the cluster) rather than a `KopfPeering` in each
        /// served namespace.
        clusterwide: bool,
        /// Its priority.
        priority: i64,
    },
}

/// Reads the peering mode from `kopf run`'s argv and the container's literal environment.
/// `clusterwide` is whether the operator serves the cluster (no `--namespace`).
pub fn mode(argv: &[String], env: &[(String, String)], clusterwide: bool) -> PeeringMode {
    if argv.iter().any(|a| a == "--standalone") {
        return PeeringMode::Standalone;
    }
    let flag = |long: &str, short: &str| -> Option<String> {
        let mut found = None;
        let mut iter = argv.iter();
        while let Some(arg) = iter.next() {
            if let Some(v) = arg.strip_prefix(long).and_then(|r| r.strip_prefix('=')) {
                found = Some(v.to_string());
            } else if (arg == long || arg == short)
                && let Some(v) = iter.next()
            {
                found = Some(v.clone());
            }
        }
        found
    };
    let named = flag("--peering", "-P").or_else(|| {
        env.iter()
            .find(|(k, _)| k == "KOPF_RUN_PEERING")
            .map(|(_, v)| v.clone())
    });
    let priority = if argv.iter().any(|a| a == "--dev") {
        DEV_PRIORITY
    } else {
        flag("--priority", "-p").and_then(|p| p.parse().ok()).unwrap_or(0)
    };
    PeeringMode::Peering {
        mandatory: named.is_some(),
        name: named.unwrap_or_else(|| DEFAULT_PEERING.to_string()),
        clusterwide,
        priority,
    }
}

/// One keep-alive entry of a peering object's `status`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Peer {
    /// The operator's identity (the status key).
    pub identity: String,
    /// Its priority.
    pub priority: i64,
    /// How long the entry stays valid after `lastseen`.
    pub lifetime: Duration,
    /// When it last wrote its keep-alive.
    pub lastseen: Option<DateTime<Utc>>,
}

impl Peer {
    /// When the entry expires (`lastseen + lifetime`); `None` without a `lastseen` (Kopf then
    /// takes "now", i.e. alive).
    pub fn deadline(&self) -> Option<DateTime<Utc>> {
        self.lastseen.map(|t| crate::time::plus(t, self.lifetime))
    }

    /// Whether the entry is alive at `now`.
    pub fn alive_at(&self, now: DateTime<Utc>) -> bool {
        self.deadline().is_none_or(|d| d > now)
    }

    /// Whether this is the keep-alive of the Pod named `pod`: the identity is the Pod name
    /// (`POD_ID`), or `USER@POD[.domain][/...]`.
    pub fn is_pod(&self, pod: &str) -> bool {
        if self.identity == pod {
            return true;
        }
        let Some((_, host)) = self.identity.split_once('@') else {
            return false;
        };
        let host = host.split('/').next().unwrap_or(host);
        host == pod || host.strip_prefix(pod).is_some_and(|rest| rest.starts_with('.'))
    }

    /// `IDENTITY (priority P, lastseen T, lifetime Ns)`.
    pub fn describe(&self) -> String {
        format!(
            "{} (priority {}, lastseen {}, lifetime {}s)",
            self.identity,
            self.priority,
            self.lastseen
                .map(crate::time::rfc3339_seconds)
                .unwrap_or_else(|| "none".into()),
            self.lifetime.num_seconds()
        )
    }
}

/// A `KopfPeering` / `ClusterKopfPeering` as `kubectl get -o json` prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Peering {
    /// `KopfPeering` or `ClusterKopfPeering`.
    pub kind: String,
    /// Its namespace (`None` for `ClusterKopfPeering`).
    pub namespace: Option<String>,
    /// Its name.
    pub name: String,
    /// The keep-alive entries of its `status`.
    pub peers: Vec<Peer>,
}

impl Peering {
    /// Reads a peering object; `None` when `object` is not one.
    pub fn parse(object: &Value) -> Option<Peering> {
        let kind = object.get("kind")?.as_str()?;
        if kind != "KopfPeering" && kind != "ClusterKopfPeering" {
            return None;
        }
        let meta = object.get("metadata")?;
        let peers = object
            .get("status")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter_map(|(identity, entry)| {
                let entry = entry.as_object()?;
                Some(Peer {
                    identity: identity.clone(),
                    priority: entry.get("priority").and_then(Value::as_i64).unwrap_or(0),
                    lifetime: crate::time::seconds(
                        entry
                            .get("lifetime")
                            .and_then(Value::as_i64)
                            .unwrap_or(DEFAULT_LIFETIME_SECONDS),
                    ),
                    lastseen: entry.get("lastseen").and_then(Value::as_str).and_then(parse_iso_time),
                })
            })
            .collect();
        Some(Peering {
            kind: kind.to_string(),
            namespace: meta.get("namespace").and_then(Value::as_str).map(str::to_string),
            name: meta.get("name")?.as_str()?.to_string(),
            peers,
        })
    }

    /// `KopfPeering NS/NAME` or `ClusterKopfPeering NAME`.
    pub fn display(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{} {ns}/{}", self.kind, self.name),
            None => format!("{} {}", self.kind, self.name),
        }
    }
}

/// Kopf writes `lastseen` with Python's `isoformat()`: `2026-11-29T17:01:02.123456+00:00`
/// (RFC 3339); tolerate a missing zone as UTC, as Kopf's `iso8601.parse_date` does.
fn parse_iso_time(s: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&Utc))
        .ok()
        .or_else(|| {
            chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S%.f")
                .ok()
                .map(|t| t.and_utc())
        })
}

/// What a Kopf log line says about pausing (logger `kopf._core.engines.peering`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PauseLine {
    /// `Pausing operations in favour of [...]` or `Pausing all operators, including self: [...]`.
    Paused,
    /// `Resuming operations after the pause...`.
    Resumed,
}

/// Classifies a log message as a pause or resume line of Kopf's peering.
pub fn pause_line(message: &str) -> Option<PauseLine> {
    if message.starts_with("Pausing operations in favour of") || message.starts_with("Pausing all operators") {
        Some(PauseLine::Paused)
    } else if message.starts_with("Resuming operations after the pause") {
        Some(PauseLine::Resumed)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn modes_from_the_command_line() {
        assert_eq!(
            mode(&argv("kopf run --standalone --namespace=todo op.py"), &[], false),
            PeeringMode::Standalone
        );
        assert_eq!(
            mode(&argv("kopf run -n todo op.py"), &[], false),
            PeeringMode::Peering {
                name: "default".into(),
                mandatory: false,
                clusterwide: false,
                priority: 0
            }
        );
        assert_eq!(
            mode(&argv("kopf run -A --peering=ops -p 10 op.py"), &[], true),
            PeeringMode::Peering {
                name: "ops".into(),
                mandatory: true,
                clusterwide: true,
                priority: 10
            }
        );
        let env = vec![("KOPF_RUN_PEERING".to_string(), "team".to_string())];
        assert_eq!(
            mode(&argv("kopf run --dev op.py"), &env, true),
            PeeringMode::Peering {
                name: "team".into(),
                mandatory: true,
                clusterwide: true,
                priority: DEV_PRIORITY
            }
        );
    }

    #[test]
    fn reads_a_peering_object_as_kopf_writes_it() {
        let obj = json!({
            "apiVersion": "kopf.dev/v1", "kind": "KopfPeering",
            "metadata": {"name": "default", "namespace": "todo"},
            "status": {
                "microservice-operator-7d9c-abcde": {"priority": 0, "lifetime": 60, "lastseen": "2026-11-29T17:00:00.123456+00:00"},
                "alice@laptop.example.com/20261129170000/x1z": {"priority": 666, "lifetime": 60, "lastseen": "2026-11-29T17:00:30"},
                "broken": "not an entry"
            }
        });
        let p = Peering::parse(&obj).unwrap();
        assert_eq!(p.display(), "KopfPeering todo/default");
        assert_eq!(p.peers.len(), 2);
        let laptop = p.peers.iter().find(|x| x.priority == 666).unwrap();
        let t = DateTime::parse_from_rfc3339("2026-11-29T17:01:29Z")
            .unwrap()
            .with_timezone(&Utc);
        assert!(laptop.alive_at(t));
        assert!(!laptop.alive_at(t + Duration::seconds(1)));
        assert!(laptop.is_pod("laptop"));
        assert!(!laptop.is_pod("lap"));
        assert!(p.peers.iter().any(|x| x.is_pod("microservice-operator-7d9c-abcde")));
        assert!(Peering::parse(&json!({"kind": "Pod", "metadata": {"name": "x"}})).is_none());
    }

    /// A lifetime beyond chrono's range (data from a bundle or a cluster) once panicked in
    /// `TimeDelta::seconds`; it now means "alive for ever", and a negative one "dead".
    #[test]
    fn extreme_lifetimes_do_not_panic() {
        let entry = |lifetime: i64| {
            let obj = json!({
                "kind": "KopfPeering", "metadata": {"name": "default", "namespace": "todo"},
                "status": {"x": {"priority": 0, "lifetime": lifetime, "lastseen": "2026-11-29T17:00:00Z"}}
            });
            Peering::parse(&obj).unwrap().peers.remove(0)
        };
        let t = DateTime::parse_from_rfc3339("2026-11-29T17:01:29Z")
            .unwrap()
            .with_timezone(&Utc);
        assert!(entry(i64::MAX).alive_at(t));
        assert_eq!(entry(i64::MAX).deadline(), Some(DateTime::<Utc>::MAX_UTC));
        assert!(!entry(i64::MIN).alive_at(t));
    }

    #[test]
    fn pause_lines() {
        assert_eq!(
            pause_line("Pausing operations in favour of [<Peer alice@laptop: priority=666>]."),
            Some(PauseLine::Paused)
        );
        assert_eq!(
            pause_line("Pausing all operators, including self: [<Peer a>, <Peer b>]"),
            Some(PauseLine::Paused)
        );
        assert_eq!(
            pause_line("Resuming operations after the pause. Conflicting operators with the same priority are gone."),
            Some(PauseLine::Resumed)
        );
        assert_eq!(
            pause_line("Possibly conflicting operators with the same priority: []."),
            None
        );
    }
}
