//! `operator-not-leading` for Kopf: its peering object ([`crate::kopf::peering`]): a live peer
//! with a higher or the same priority pauses it; a mandatory peering (`--peering`) whose object is
//! missing keeps it paused; its `Pausing operations ...` log lines say the same from the other
//! side.

use super::super::leading_facts::{Input, PauseEvidence};
use super::{ID, double_handling, last_per_log, ok};
use crate::diagnose::finding::{Finding, Severity};
use crate::kopf::peering::{DEV_PRIORITY, PauseLine, Peer, Peering};
use crate::text::count;
use crate::time::rfc3339_seconds;

/// The peering object a Kopf operator peers in, and how its priority was set.
struct Peers<'a> {
    /// `--peering NAME` (or Kopf's auto-detected default).
    name: &'a str,
    /// `KopfPeering` or `ClusterKopfPeering`.
    kind: &'static str,
    /// `NS/NAME`, or `NAME` for a cluster-wide one.
    where_: String,
    mandatory: bool,
    clusterwide: bool,
    /// Its priority, and where it came from (`--dev`, `--priority`, default).
    priority: i64,
    priority_source: &'static str,
    /// The last line of each log when it is a pause (no resume after it).
    paused_lines: Vec<&'a PauseEvidence>,
}

/// `operator-not-leading` of a Kopf operator peering in `name` (`mandatory`: `--peering`;
/// `clusterwide`: a `ClusterKopfPeering`) with `priority`: from its peering object when in
/// evidence ([`of_peering`]), else its pause lines ([`from_logs`]); a missing object
/// ([`missing_peering`]).
pub(super) fn finding(
    input: &Input<'_>,
    name: &str,
    mandatory: bool,
    clusterwide: bool,
    priority: i64,
) -> Option<Finding> {
    let op = input.operator;
    let (kind, where_) = if clusterwide {
        ("ClusterKopfPeering", name.to_string())
    } else {
        ("KopfPeering", format!("{}/{name}", input.namespace))
    };
    let peers = Peers {
        name,
        kind,
        where_,
        mandatory,
        clusterwide,
        priority,
        priority_source: if op.argv.iter().any(|a| a == "--dev") {
            "--dev"
        } else if priority == 0 {
            "default"
        } else {
            "--priority"
        },
        paused_lines: last_per_log(input.pause_lines, |l| &l.source)
            .into_iter()
            .filter(|p| p.line == PauseLine::Paused)
            .collect(),
    };
    let Some(peerings) = input.peerings.get() else {
        return from_logs(
            input,
            &peers.paused_lines,
            &format!("{kind} {}: not in evidence", peers.where_),
        );
    };
    let peering = peerings
        .iter()
        .filter_map(Peering::parse)
        .find(|p| p.kind == kind && p.name == name && (clusterwide || p.namespace.as_deref() == Some(input.namespace)));
    match peering {
        Some(peering) => of_peering(input, &peers, &peering),
        None => missing_peering(input, &peers),
    }
}

/// No peering object: a mandatory one keeps it paused (a problem, with the object to create);
/// else its pause lines, or several replicas that each handle (Kopf falls back to standalone),
/// or one that runs standalone (`ok`).
fn missing_peering(input: &Input<'_>, peers: &Peers<'_>) -> Option<Finding> {
    let op = input.operator;
    let Peers {
        name,
        kind,
        mandatory,
        clusterwide,
        ..
    } = *peers;
    let where_ = &peers.where_;
    let paused_lines = &peers.paused_lines;
    if mandatory {
        return Some(Finding {
            id: ID,
            severity: Severity::Problem,
            title: format!(
                "the Kopf operator {} waits for its peering {kind} {where_} (--peering {name}), which does not exist: it stays paused",
                op.display()
            ),
            evidence: vec![
                format!("its command: {}", op.command.display()),
                format!("GET kopf.dev/v1 and zalando.org/v1 {kind} {where_}: not found"),
            ],
            fix: Some(format!(
                "create it (the {kind} CRD from Kopf's peering.yaml must be installed):\n\napiVersion: kopf.dev/v1\nkind: {kind}\nmetadata:\n  name: {name}{}\n\nor drop --peering to let Kopf run standalone",
                if clusterwide {
                    String::new()
                } else {
                    format!("\n  namespace: {}", input.namespace)
                }
            )),
        });
    }
    if !paused_lines.is_empty() {
        return from_logs(input, paused_lines, &format!("{kind} {where_}: not found now"));
    }
    if input.running.len() > 1 {
        return Some(double_handling(
            input,
            format!("without a peering object ({kind} {where_} not found, so Kopf falls back to standalone)"),
            vec![
                format!("its command: {}", op.command.display()),
                format!("GET kopf.dev/v1 and zalando.org/v1 {kind} {where_}: not found"),
            ],
        ));
    }
    Some(ok(
        format!(
            "no peering object {kind} {where_}: the Kopf operator {} runs standalone (Kopf auto-detects `{name}`)",
            op.display()
        ),
        vec![format!("GET kopf.dev/v1 and zalando.org/v1 {kind} {where_}: not found")],
    ))
}

/// The peering object in evidence, at "now": its live peers that outrank the operator (of
/// every one of its own live Pods, or of the operator when none of its Pods keeps alive) pause
/// it ([`paused_by`]); none: `ok`.
fn of_peering(input: &Input<'_>, peers: &Peers<'_>, peering: &Peering) -> Option<Finding> {
    let op = input.operator;
    let (priority, priority_source, kind) = (peers.priority, peers.priority_source, peers.kind);
    let paused_lines = &peers.paused_lines;
    let now = input.now?;
    let own = |peer: &Peer| {
        input
            .pods
            .iter()
            .filter_map(|p| p.metadata.name.as_deref())
            .any(|pod| peer.is_pod(pod))
    };
    let live: Vec<&Peer> = peering.peers.iter().filter(|p| p.alive_at(now)).collect();
    let own_live: Vec<&Peer> = live.iter().copied().filter(|p| own(p)).collect();
    let blockers_of = |me: Option<&str>| -> Vec<&Peer> {
        live.iter()
            .copied()
            .filter(|p| Some(p.identity.as_str()) != me && p.priority >= priority)
            .filter(|p| me.is_some() || !own(p))
            .collect()
    };
    let mut evidence = vec![format!(
        "{}: {} peer entries, {} alive at {}",
        peering.display(),
        peering.peers.len(),
        live.len(),
        rfc3339_seconds(now)
    )];
    evidence.push(format!("its priority: {priority} ({priority_source})"));
    for peer in &peering.peers {
        let state = match peer.deadline() {
            Some(d) if d > now => format!("alive until {}", rfc3339_seconds(d)),
            Some(d) => format!("dead since {}", rfc3339_seconds(d)),
            None => "alive (no lastseen)".into(),
        };
        let whose = if own(peer) { "its Pod" } else { "another operator" };
        evidence.push(format!("peer {}: {whose}, {state}", peer.describe()));
    }
    evidence.extend(paused_lines.iter().map(|p| format!("log: {}", p.cite)));
    let paused: Vec<&Peer> = if own_live.is_empty() {
        blockers_of(None)
    } else {
        let per_pod: Vec<Vec<&Peer>> = own_live.iter().map(|me| blockers_of(Some(&me.identity))).collect();
        if per_pod.iter().all(|b| !b.is_empty()) {
            let mut all: Vec<&Peer> = per_pod.into_iter().flatten().collect();
            all.sort_by(|a, b| a.identity.cmp(&b.identity));
            all.dedup_by(|a, b| a.identity == b.identity);
            all
        } else {
            Vec::new()
        }
    };
    if paused.is_empty() {
        if own_live.is_empty() {
            evidence.push(format!(
                "no live keep-alive of {}'s Pods: it may not be allowed to patch {kind} (RBAC), or it has just started",
                op.display()
            ));
        }
        return Some(ok(
            format!(
                "no live peer in {} outranks the Kopf operator {} (priority {priority})",
                peering.display(),
                op.display()
            ),
            evidence,
        ));
    }
    Some(paused_by(input, peers, peering, &paused, own_live.len(), evidence))
}

/// Paused by `paused` (live peers of the same or a higher priority; `own_live` of the
/// operator's own Pods keep alive): the title and fix by who they are: a higher priority (stop
/// it, or `kopf resume` a freeze), only its own replicas (Kopf has no leader election: one
/// replica), or others of the same priority.
fn paused_by(
    input: &Input<'_>,
    peers: &Peers<'_>,
    peering: &Peering,
    paused: &[&Peer],
    own_live: usize,
    evidence: Vec<String>,
) -> Finding {
    let op = input.operator;
    let priority = peers.priority;
    let own = |peer: &Peer| {
        input
            .pods
            .iter()
            .filter_map(|p| p.metadata.name.as_deref())
            .any(|pod| peer.is_pod(pod))
    };
    let higher: Vec<&&Peer> = paused.iter().filter(|p| p.priority > priority).collect();
    let siblings_only = paused.iter().all(|p| own(p));
    let until = paused
        .iter()
        .filter_map(|p| p.deadline())
        .max()
        .map(rfc3339_seconds)
        .unwrap_or_else(|| "?".into());
    let (title, fix) = if !higher.is_empty() {
        outranked(input, peers, peering, &higher, &until)
    } else if siblings_only {
        (
            format!(
                "{} replicas of the Kopf operator {} pause each other: peers of the same priority all pause (Kopf has no leader election)",
                own_live,
                op.display()
            ),
            format!(
                "run one replica: kubectl -n {} scale deployment/{} --replicas=1 (with `strategy: Recreate`), or give it --standalone",
                op.namespace, op.name
            ),
        )
    } else {
        let who: Vec<String> = paused.iter().filter(|p| !own(p)).map(|p| p.identity.clone()).collect();
        (
            format!(
                "the Kopf operator {} is paused: {} with the same priority {priority} in {} ({}); Kopf pauses all of them",
                op.display(),
                count(who.len() as u64, "peer"),
                peering.display(),
                who.join(", ")
            ),
            "stop the other operator, or give one of them a higher priority (`kopf run --priority N`)".to_string(),
        )
    };
    Finding {
        id: ID,
        severity: Severity::Problem,
        title,
        evidence,
        fix: Some(fix),
    }
}

/// Paused in favour of `higher` (live peers of a higher priority, paused until `until` at the
/// latest): stop that operator, or resume a `kopf freeze`.
fn outranked(
    input: &Input<'_>,
    peers: &Peers<'_>,
    peering: &Peering,
    higher: &[&&Peer],
    until: &str,
) -> (String, String) {
    let op = input.operator;
    let (name, clusterwide) = (peers.name, peers.clusterwide);
    let who: Vec<String> = higher.iter().map(|p| p.identity.clone()).collect();
    (
        format!(
            "the Kopf operator {} is paused in favour of {} with a higher priority (peering {})",
            op.display(),
            who.join(", "),
            peering.display()
        ),
        format!(
            "stop that operator{} or, if it is a `kopf freeze`, run `kopf resume --peering {name}{}`; it pauses {} until its keep-alive expires ({until} at the latest)",
            if higher.iter().any(|p| p.priority == DEV_PRIORITY) {
                " (priority 666 is `kopf run --dev`, usually a developer's laptop)"
            } else {
                ""
            },
            if clusterwide {
                String::new()
            } else {
                format!(" --namespace {}", input.namespace)
            },
            op.display()
        ),
    )
}

/// Without the peering object, Kopf's own `Pausing operations ...` line, not followed by a
/// resume, is the evidence.
fn from_logs(input: &Input<'_>, paused: &[&PauseEvidence], missing: &str) -> Option<Finding> {
    if paused.is_empty() {
        return None;
    }
    let op = input.operator;
    let mut evidence = vec![missing.to_string()];
    evidence.extend(paused.iter().map(|p| format!("log (no resume after it): {}", p.cite)));
    Some(Finding {
        id: ID,
        severity: Severity::Problem,
        title: format!(
            "the Kopf operator {} logged that it paused for its peers and has not resumed",
            op.display()
        ),
        evidence,
        fix: Some(format!(
            "see who it pauses for: kubectl get kopfpeerings,clusterkopfpeerings -A -o yaml; stop the other operator, or run this one with --standalone (kubectl -n {} edit deployment {})",
            op.namespace, op.name
        )),
    })
}
