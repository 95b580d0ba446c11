//! Lease identity and timing, shared by `operate`'s elector (src/operate/leader.rs), the
//! manifests that grant it, and the diagnostics that read a Lease: the Lease group and verbs, its
//! default name, the client-go timings, the watch-namespaces annotation, and which Lease(s) an
//! `operate` process elects on ([`plan_leases`]).

use std::time::Duration;

/// The API group of Leases (`coordination.k8s.io/v1`).
pub const LEASE_GROUP: &str = "coordination.k8s.io";

/// What the elector does with its Lease, as (verb, on the Lease by name): `get` and `update` name
/// it; `create` cannot (RBAC cannot limit `create` by name). Manifests grant exactly these, and
/// `explain-events` checks them.
pub const LEASE_VERBS: &[(&str, bool)] = &[("get", true), ("create", false), ("update", true)];

/// The Lease name unless `--lease-name` is given.
pub const DEFAULT_LEASE_NAME: &str = "microservice-operator";
/// How long a Lease stays valid after its last renewal (client-go default; `leaseDurationSeconds`).
pub const LEASE_DURATION: Duration = Duration::from_secs(15);
/// The leader steps down when no renewal succeeded for this long (client-go default).
pub const RENEW_DEADLINE: Duration = Duration::from_secs(10);
/// How often the Lease is read, and renewed by the leader (client-go default).
pub const RETRY_PERIOD: Duration = Duration::from_secs(2);

/// Annotation our elector writes on its Lease: the namespaces the holder handles while it
/// leads, comma-separated in the order given, or `*` for all namespaces. A standby reads it to
/// tell when the leader serves other namespaces than it would (two `operate` processes sharing
/// one Lease over different `--namespace`s: one of them is never served).
pub const WATCH_NAMESPACES_ANNOTATION: &str = "microservice.platform.example.io/watch-namespaces";

/// One Lease and the watched namespaces it governs (see [`plan_leases`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeasePlan {
    /// Namespace of the Lease.
    pub namespace: String,
    /// Name of the Lease.
    pub name: String,
    /// The watched namespaces handled only while holding it; `None`: all namespaces (`-A`).
    pub serves: Option<Vec<String>>,
}

impl LeasePlan {
    /// `namespace/name`.
    pub fn lease_ref(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    /// Whether the holder of this Lease handles objects in `namespace`.
    pub fn governs(&self, namespace: &str) -> bool {
        self.serves
            .as_ref()
            .is_none_or(|list| list.iter().any(|ns| ns == namespace))
    }

    /// The value of [`WATCH_NAMESPACES_ANNOTATION`] for this plan.
    pub fn serves_annotation(&self) -> String {
        match &self.serves {
            None => "*".into(),
            Some(list) => list.join(","),
        }
    }
}

/// Which Lease(s) an `operate` process elects on, from its flags. Pure: `operate` and the
/// diagnostics (reading a Deployment's args) use this one rule.
///
/// - `--lease-namespace` or `--lease-name` given, or `-A` (`watches` = `None`): ONE Lease
///   (`--lease-namespace`, default `own_namespace`; `--lease-name`, default
///   [`DEFAULT_LEASE_NAME`]) governs every watched namespace, as in client-go.
/// - Otherwise, one Lease [`DEFAULT_LEASE_NAME`] IN EACH watched namespace, governing that
///   namespace alone: Kopf's namespaced peering lives in the namespace it serves too. So
///   `operate -n a` and `operate -n b` on one cluster both handle their objects, while an
///   `operate -n todo` on a laptop and the Deployment of `manifests --watch-namespace todo` share
///   `todo/microservice-operator` and only one of them handles.
pub fn plan_leases(
    watches: Option<&[String]>,
    lease_namespace: Option<&str>,
    lease_name: Option<&str>,
    own_namespace: &str,
) -> Vec<LeasePlan> {
    match watches {
        Some(list) if lease_namespace.is_none() && lease_name.is_none() => list
            .iter()
            .map(|ns| LeasePlan {
                namespace: ns.clone(),
                name: DEFAULT_LEASE_NAME.into(),
                serves: Some(vec![ns.clone()]),
            })
            .collect(),
        _ => vec![LeasePlan {
            namespace: lease_namespace.unwrap_or(own_namespace).to_string(),
            name: lease_name.unwrap_or(DEFAULT_LEASE_NAME).to_string(),
            serves: watches.map(<[String]>::to_vec),
        }],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_watched_namespace_has_its_own_lease_unless_one_is_named() {
        let ns = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let plan = |ns: &str, name: &str, serves: Option<&[&str]>| LeasePlan {
            namespace: ns.into(),
            name: name.into(),
            serves: serves.map(|l| l.iter().map(|s| s.to_string()).collect()),
        };
        // operate -n a and operate -n b: different Leases, both handle.
        assert_eq!(
            plan_leases(Some(&ns(&["a"])), None, None, "laptop"),
            [plan("a", DEFAULT_LEASE_NAME, Some(&["a"]))]
        );
        assert_eq!(
            plan_leases(Some(&ns(&["a", "b"])), None, None, "ops"),
            [
                plan("a", DEFAULT_LEASE_NAME, Some(&["a"])),
                plan("b", DEFAULT_LEASE_NAME, Some(&["b"]))
            ]
        );
        // -A: one Lease in the operator's own namespace.
        assert_eq!(
            plan_leases(None, None, None, "ops"),
            [plan("ops", DEFAULT_LEASE_NAME, None)]
        );
        // A named Lease governs every watched namespace, as before.
        assert_eq!(
            plan_leases(Some(&ns(&["a", "b"])), Some("ops"), None, "x"),
            [plan("ops", DEFAULT_LEASE_NAME, Some(&["a", "b"]))]
        );
        assert_eq!(
            plan_leases(Some(&ns(&["a"])), None, Some("mine"), "x"),
            [plan("x", "mine", Some(&["a"]))]
        );
        let one = plan("ops", "l", Some(&["a", "b"]));
        assert!(one.governs("a") && !one.governs("c"));
        assert!(plan("ops", "l", None).governs("anything"));
        assert_eq!(one.serves_annotation(), "a,b");
        assert_eq!(plan("ops", "l", None).serves_annotation(), "*");
    }
}
