//! What `operator-not-leading` and `operator-not-running` read about the leadership of the
//! Deployment diagnosed ([`Input`]): its Pods, Leases and Kopf peering objects, Kopf's pause
//! lines and our elector's lines in its log, its ServiceAccount's rights on its Lease; and
//! whether a process outside the Deployment holds its Lease ([`leader_elsewhere`]).

use chrono::{DateTime, Duration, Utc};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Pod;
use serde_json::Value;

use super::Ctx;
use super::operator_facts::{Replicas, given_holder};
use crate::diagnose::rbac::{self, Account, Answer, Need};
use crate::evidence::Evidence;
use crate::evidence::operator::{Leadership, OperatorRef};
use crate::kopf::peering::{self as kopf_peering, PauseLine};
use crate::time::{plus, seconds};
use crate::vocab::lease::{LEASE_DURATION, LEASE_GROUP, LEASE_VERBS};

/// A Kopf pause or resume line, cited.
#[derive(Debug, Clone)]
pub(crate) struct PauseEvidence {
    /// Which log (`POD/CONTAINER`); the last line of each log says its current state.
    pub(crate) source: String,
    /// The line with its time and clock.
    pub(crate) cite: String,
    /// Pause or resume.
    pub(crate) line: PauseLine,
}

/// A log line of ours about leader election (`Became the leader`, `Standing by`, `Leader
/// election: ...`, `Lost the lease`), cited.
#[derive(Debug, Clone)]
pub(crate) struct ElectionLine {
    /// Which log (`POD/CONTAINER`).
    pub(crate) source: String,
    /// The line with its time and clock.
    pub(crate) cite: String,
    /// The message followed by its structured fields (`key=value`, values unquoted).
    pub(crate) message: String,
}

/// Whether `message` is one of our elector's lines (`operate`'s elector, src/operate/leader.rs).
pub(crate) fn is_election_line(message: &str) -> bool {
    [
        "Leader election: ",
        "Became the leader",
        "Standing by: ",
        "Lost the lease",
    ]
    .iter()
    .any(|p| message.starts_with(p))
}

/// What the finding looks at.
pub(crate) struct Input<'a> {
    /// The operator serving the object.
    pub(crate) operator: &'a OperatorRef,
    /// Its Deployment's Pods.
    pub(crate) pods: &'a [&'a Pod],
    /// Names of those Pods whose operator container is running.
    pub(crate) running: &'a [String],
    /// The Deployment's `status.readyReplicas`: when none of its Pods is in evidence but it
    /// reports ready replicas, they run (the Pods' evidence missed them).
    pub(crate) ready_replicas: i32,
    /// Leases in evidence.
    pub(crate) leases: &'a Evidence<Vec<Lease>>,
    /// Kopf peering objects in evidence.
    pub(crate) peerings: &'a Evidence<Vec<Value>>,
    /// Kopf's pause/resume lines, in log order.
    pub(crate) pause_lines: &'a [PauseEvidence],
    /// Our elector's lines, in log order.
    pub(crate) election_lines: &'a [ElectionLine],
    /// May the operator's ServiceAccount do what the elector does with its Lease: (verb,
    /// answer) per [`crate::vocab::lease::LEASE_VERBS`]; empty when not ours.
    pub(crate) lease_access: &'a [(String, Answer)],
    /// The object's namespace (a namespaced Kopf operator peers in each namespace it serves).
    pub(crate) namespace: &'a str,
    /// "Now" of the snapshot.
    pub(crate) now: Option<DateTime<Utc>>,
    /// Times closer than this cannot be ordered.
    pub(crate) skew: Duration,
    /// The `holderIdentity` of the process whose own log was given (`--log-file`), when the
    /// resolver matched it to the Lease ([`crate::evidence::resolve::Process`]): that it leads
    /// is what its user runs it for, not a warning.
    pub(crate) given_holder: Option<&'a str>,
}

/// What the Deployment's own log lines and its rights say of its leadership, read from the
/// object's context: Kopf's pause and resume lines and our elector's lines (of the lines about no
/// object), and, for ours, whether its ServiceAccount may do what the elector does with the
/// Lease that governs the namespace.
pub(crate) struct Observed {
    /// Kopf's pause/resume lines, in log order.
    pub(crate) pause_lines: Vec<PauseEvidence>,
    /// Our elector's lines, in log order.
    pub(crate) election_lines: Vec<ElectionLine>,
    /// (verb, answer) per [`LEASE_VERBS`]; empty when not ours.
    pub(crate) lease_access: Vec<(String, Answer)>,
}

impl Observed {
    /// What `ctx`'s lines and RBAC evidence say of `op`'s leadership.
    pub(crate) fn of(ctx: &Ctx<'_>, op: &OperatorRef) -> Observed {
        let pause_lines = ctx
            .unattributed
            .iter()
            .filter_map(|l| {
                kopf_peering::pause_line(&l.record.message).map(|line| PauseEvidence {
                    source: l.pod.clone(),
                    cite: l.cite(),
                    line,
                })
            })
            .collect();
        let election_lines = ctx
            .unattributed
            .iter()
            .filter(|l| is_election_line(&l.record.message))
            .map(|l| ElectionLine {
                source: l.pod.clone(),
                cite: l.cite(),
                message: std::iter::once(l.record.message.clone())
                    .chain(l.record.fields.iter().map(|(k, v)| format!("{k}={v}")))
                    .collect::<Vec<_>>()
                    .join(" "),
            })
            .collect();
        let lease_access = match op.leadership_in(ctx.ns) {
            Leadership::Lease { namespace, name } => {
                let account = Account {
                    namespace: &op.namespace,
                    name: &op.service_account,
                };
                LEASE_VERBS
                    .iter()
                    .map(|(verb, named)| {
                        let need = Need {
                            group: LEASE_GROUP,
                            resource: "leases",
                            verb,
                            namespace: &namespace,
                            name: named.then_some(name.as_str()),
                        };
                        (verb.to_string(), rbac::decide(&ctx.snapshot.rbac, account, need))
                    })
                    .collect()
            }
            _ => Vec::new(),
        };
        Observed {
            pause_lines,
            election_lines,
            lease_access,
        }
    }
}

/// The [`Input`] of `op`, its `replicas` and what was `observed` of it, in `ctx`.
pub(crate) fn input<'x>(
    ctx: &'x Ctx<'_>,
    op: &'x OperatorRef,
    replicas: &'x Replicas<'_>,
    observed: &'x Observed,
) -> Input<'x> {
    Input {
        operator: op,
        pods: &replicas.mine,
        running: &replicas.running,
        ready_replicas: replicas.ready_replicas,
        leases: &ctx.snapshot.operator.leases,
        peerings: &ctx.snapshot.operator.peerings,
        pause_lines: &observed.pause_lines,
        election_lines: &observed.election_lines,
        lease_access: &observed.lease_access,
        namespace: ctx.ns,
        now: ctx.now,
        skew: ctx.options.skew,
        given_holder: given_holder(ctx),
    }
}

/// A Lease as the elector left it, against the Deployment's Pods.
#[derive(Debug, Clone)]
pub(crate) struct LeaseView {
    /// `spec.holderIdentity`, `None` when released.
    pub(crate) holder: Option<String>,
    /// The holder's instance: `holderIdentity` up to its last `_` (the Pod or host name).
    pub(crate) holder_pod: Option<String>,
    /// The holder is one of the Deployment's Pods.
    pub(crate) holder_is_ours: bool,
    /// ... and it runs.
    pub(crate) holder_runs: bool,
    /// `spec.renewTime`, else `spec.acquireTime`.
    pub(crate) renewed: Option<DateTime<Utc>>,
    /// `spec.leaseDurationSeconds` (the elector's default when unset).
    pub(crate) duration: Duration,
    /// `spec.leaseTransitions`.
    pub(crate) transitions: i32,
}

impl LeaseView {
    pub(crate) fn of(lease: &Lease, input: &Input<'_>) -> LeaseView {
        let spec = lease.spec.clone().unwrap_or_default();
        let holder = spec.holder_identity.filter(|h| !h.is_empty());
        let holder_pod = holder
            .as_deref()
            .map(|h| h.rsplit_once('_').map_or(h, |(instance, _)| instance).to_string());
        // Without its Pods in evidence, a Deployment's Pod is known by its name,
        // `NAME-<hash>-<suffix>` (never `NAME-other-<hash>-<suffix>`, another Deployment's).
        let named = |p: &str| {
            input.pods.iter().any(|pod| pod.metadata.name.as_deref() == Some(p))
                || (input.pods.is_empty() && crate::evidence::pods::named_as_pod_of(p, &input.operator.name))
        };
        let runs = |p: &str| input.running.iter().any(|r| r == p);
        LeaseView {
            holder_is_ours: holder_pod.as_deref().is_some_and(named),
            holder_runs: holder_pod.as_deref().is_some_and(runs),
            renewed: spec
                .renew_time
                .as_ref()
                .or(spec.acquire_time.as_ref())
                .map(|t| crate::time::from_jiff(t.0)),
            duration: spec
                .lease_duration_seconds
                .map(|s| seconds(s.into()))
                .unwrap_or(Duration::seconds(LEASE_DURATION.as_secs() as i64)),
            transitions: spec.lease_transitions.unwrap_or(0),
            holder,
            holder_pod,
        }
    }
}

/// The `holderIdentity` of a current Lease of ours held by a process that is not one of the
/// Deployment's Pods (a laptop `operate`): objects ARE handled then, by that process, even when
/// none of the Deployment's Pods runs.
pub(crate) fn leader_elsewhere(input: &Input<'_>) -> Option<String> {
    let Leadership::Lease { namespace, name } = input.operator.leadership_in(input.namespace) else {
        return None;
    };
    let now = input.now?;
    let lease = input.leases.get()?.iter().find(|l| {
        l.metadata.namespace.as_deref() == Some(namespace.as_str()) && l.metadata.name.as_deref() == Some(name.as_str())
    })?;
    let view = LeaseView::of(lease, input);
    let current = view
        .renewed
        .is_some_and(|r| now <= plus(plus(r, view.duration), input.skew));
    (current && !view.holder_is_ours).then_some(view.holder).flatten()
}
