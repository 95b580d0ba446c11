//! `operator-not-leading`: the operator runs, but none of its replicas is the one that handles.
//!
//! - Ours elects a leader on a `coordination.k8s.io/v1` Lease (client-go's algorithm,
//!   `operate`'s elector, src/operate/leader.rs): only the holder handles; a Lease whose `renewTime +
//!   leaseDurationSeconds` has passed means nobody leads, and a holder that is not one of the
//!   Deployment's Pods means another `operate` process (a laptop one, a second install) leads.
//! - Kopf pauses while a live peer in its peering object has a higher or the same priority
//!   ([`crate::kopf::peering`]); a mandatory peering (`--peering`) whose object is missing keeps
//!   it paused; its `Pausing operations ...` log lines say the same from the other side.
//!
//! Pure: the inputs are the Snapshot's Lease and peering objects, the Deployment's Pods and the
//! operator's log lines.
//!
//! - Two or more operators (Deployments) that serve the namespace and whose logs each handled
//!   the object: nothing makes one of them the handler ([`handled_by_several`]).

use chrono::{DateTime, Duration, Utc};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Pod;
use serde_json::Value;

use super::finding::{Finding, FindingId, Severity};
use super::handlings::Handling;
use super::rbac::Answer;
use crate::evidence::Evidence;
use crate::evidence::operator::{Leadership, OperatorRef};
use crate::kopf::peering::{DEV_PRIORITY, PauseLine, Peer, Peering, PeeringMode};
use crate::text::count;
use crate::time::{DurationStyle, plus, rfc3339_seconds, seconds, sum};
use crate::vocab::lease::{LEASE_DURATION, RETRY_PERIOD};

/// The finding's id (Contracts).
pub const ID: FindingId = FindingId::OperatorNotLeading;

/// A Kopf pause or resume line, cited.
#[derive(Debug, Clone)]
pub struct PauseEvidence {
    /// Which log (`POD/CONTAINER`); the last line of each log says its current state.
    pub source: String,
    /// The line with its time and clock.
    pub cite: String,
    /// Pause or resume.
    pub line: PauseLine,
}

/// A log line of ours about leader election (`Became the leader`, `Standing by`, `Leader
/// election: ...`, `Lost the lease`), cited.
#[derive(Debug, Clone)]
pub struct ElectionLine {
    /// Which log (`POD/CONTAINER`).
    pub source: String,
    /// The line with its time and clock.
    pub cite: String,
    /// The message followed by its structured fields (`key=value`, values unquoted).
    pub message: String,
}

/// Whether `message` is one of our elector's lines (`operate`'s elector, src/operate/leader.rs).
pub fn is_election_line(message: &str) -> bool {
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
pub struct Input<'a> {
    /// The operator serving the object.
    pub operator: &'a OperatorRef,
    /// Its Deployment's Pods.
    pub pods: &'a [&'a Pod],
    /// Names of those Pods whose operator container is running.
    pub running: &'a [String],
    /// The Deployment's `status.readyReplicas`: when none of its Pods is in evidence but it
    /// reports ready replicas, they run (the Pods' evidence missed them).
    pub ready_replicas: i32,
    /// Leases in evidence.
    pub leases: &'a Evidence<Vec<Lease>>,
    /// Kopf peering objects in evidence.
    pub peerings: &'a Evidence<Vec<Value>>,
    /// Kopf's pause/resume lines, in log order.
    pub pause_lines: &'a [PauseEvidence],
    /// Our elector's lines, in log order.
    pub election_lines: &'a [ElectionLine],
    /// May the operator's ServiceAccount do what the elector does with its Lease: (verb,
    /// answer) per [`crate::vocab::lease::LEASE_VERBS`]; empty when not ours.
    pub lease_access: &'a [(String, Answer)],
    /// The object's namespace (a namespaced Kopf operator peers in each namespace it serves).
    pub namespace: &'a str,
    /// "Now" of the snapshot.
    pub now: Option<DateTime<Utc>>,
    /// Times closer than this cannot be ordered.
    pub skew: Duration,
    /// The `holderIdentity` of the process whose own log was given (`--log-file`), when the
    /// resolver matched it to the Lease ([`crate::evidence::resolve::Process`]): that it leads
    /// is what its user runs it for, not a warning.
    pub given_holder: Option<&'a str>,
}

/// `operator-not-leading` for `input.operator`, or `None` when the evidence cannot tell (a gap,
/// no "now") or when no replica runs (`operator-not-running` says that).
pub fn operator_not_leading(input: &Input<'_>) -> Option<Finding> {
    match input.operator.leadership_in(input.namespace) {
        Leadership::Standalone if input.running.len() > 1 => Some(double_handling(
            input,
            "with --standalone: no Lease".into(),
            vec![format!("its command: {}", input.operator.argv.join(" "))],
        )),
        Leadership::Kopf(PeeringMode::Standalone) if input.running.len() > 1 => Some(double_handling(
            input,
            "with --standalone: no peering".into(),
            vec![format!("its command: {}", input.operator.argv.join(" "))],
        )),
        Leadership::Standalone => Some(ok(
            format!(
                "the operator {} runs with --standalone: no Lease, every replica handles",
                input.operator.display()
            ),
            vec![format!("its command: {}", input.operator.argv.join(" "))],
        )),
        Leadership::Lease { namespace, name } => lease(input, &namespace, &name),
        Leadership::Kopf(PeeringMode::Standalone) => Some(ok(
            format!(
                "the Kopf operator {} runs with --standalone: no peering pauses it",
                input.operator.display()
            ),
            vec![format!("its command: {}", input.operator.argv.join(" "))],
        )),
        Leadership::Kopf(PeeringMode::Peering {
            name,
            mandatory,
            clusterwide,
            priority,
        }) => kopf(input, &name, mandatory, clusterwide, priority),
    }
}

/// Several replicas of `input.operator` run and nothing makes one of them the handler
/// (`how`: `--standalone`, or Kopf without a peering object): each replica's watch gets every
/// event, so each handles every object (two `cause=update` runs at one moment, one per Pod),
/// patches its status and posts its events twice. A warning: the handling happens, doubled,
/// and the replicas race on the object's record. The fix that works for every kind: one
/// replica (`kubectl scale --replicas=1`); for ours, leader election (drop `--standalone`);
/// Kopf has no leader election: with peering, replicas of one priority all pause (Kopf 1.38
/// `docs/peering.rst`), so peering does not make several Kopf replicas share the work.
fn double_handling(input: &Input<'_>, how: String, mut evidence: Vec<String>) -> Finding {
    let op = input.operator;
    let n = input.running.len();
    evidence.push(format!("{n} Pods running: {}", input.running.join(", ")));
    let scale = format!("kubectl -n {} scale deployment/{} --replicas=1", op.namespace, op.name);
    let fix = match op.kind {
        crate::evidence::operator::OperatorKind::Ours => format!(
            "run one replica ({scale}), or drop --standalone from its args so that the replicas elect one handler on the Lease: kubectl -n {} edit deployment {}",
            op.namespace, op.name
        ),
        _ => format!(
            "run one replica: {scale} (and `strategy: Recreate`, so that a rollout never runs two). Kopf has no leader election: with Kopf's peering CRDs installed and `--peering`, replicas of the same priority all pause, so peering only keeps a second operator out"
        ),
    };
    Finding {
        id: ID,
        severity: Severity::Warning,
        title: format!(
            "{n} replicas of the operator {} each handle every object: it runs {how}, so nothing elects one handler (double handling)",
            op.display()
        ),
        evidence,
        fix: Some(fix),
    }
}

fn ok(title: String, evidence: Vec<String>) -> Finding {
    Finding {
        id: ID,
        severity: Severity::Ok,
        title,
        evidence,
        fix: None,
    }
}

/// How long ago `then` was at `now`, for a Lease: `45s`, `2m5s`, `3h10m`.
fn age(now: DateTime<Utc>, then: DateTime<Utc>) -> String {
    crate::time::human(
        now - then,
        DurationStyle::Pair {
            lead_at: 2,
            days: false,
        },
    )
}

// ---- ours: the Lease ------------------------------------------------------------------------

fn lease(input: &Input<'_>, namespace: &str, name: &str) -> Option<Finding> {
    let leases = input.leases.get()?;
    let op = input.operator;
    // Without a running replica, `operator-not-running` says it all, unless another process
    // holds a current Lease: then objects ARE handled, by something outside the Deployment.
    let none_runs = input.running.is_empty() && !(input.pods.is_empty() && input.ready_replicas > 0);
    let lease_ref = format!("{namespace}/{name}");
    let mut evidence = Vec::new();
    let access = LeaseAccess::of(input, namespace, name);
    // Nobody leads: the rights on the Lease and the elector's own lines say why, and the fix
    // follows from them.
    let nobody_leads = |title: String, mut evidence: Vec<String>, stuck_holder: Option<&str>| {
        evidence.extend(access.evidence.iter().cloned());
        evidence.extend(access.last_lines.iter().cloned());
        Finding {
            id: ID,
            severity: Severity::Problem,
            title,
            evidence,
            fix: Some(access.fix(input, namespace, name, stuck_holder)),
        }
    };
    let Some(lease) = leases
        .iter()
        .find(|l| l.metadata.namespace.as_deref() == Some(namespace) && l.metadata.name.as_deref() == Some(name))
    else {
        if none_runs {
            return None;
        }
        evidence.push(format!("GET coordination.k8s.io/v1 leases {lease_ref}: not found"));
        evidence.push(running(input));
        return Some(nobody_leads(
            format!(
                "no replica of {} leads: its Lease {lease_ref} does not exist",
                op.display()
            ),
            evidence,
            None,
        ));
    };
    let now = input.now?;
    let LeaseView {
        holder,
        holder_pod,
        holder_is_ours,
        holder_runs,
        renewed,
        duration,
        transitions,
    } = LeaseView::of(lease, input);
    let holder_pod = holder_pod.as_deref();
    evidence.push(format!(
        "Lease {lease_ref}: holderIdentity {}, renewTime {}, leaseDurationSeconds {}, leaseTransitions {transitions}",
        holder.as_deref().unwrap_or("<none>"),
        renewed.map(rfc3339_seconds).unwrap_or_else(|| "<none>".into()),
        duration.num_seconds(),
    ));
    evidence.push(format!("now: {} (the snapshot's clock)", rfc3339_seconds(now)));
    evidence.push(running(input));
    let current_elsewhere = holder.is_some() && !holder_is_ours;
    if none_runs && !current_elsewhere {
        return None;
    }
    let Some(renewed) = renewed else {
        return Some(nobody_leads(
            format!(
                "no replica of {} leads: its Lease {lease_ref} was never renewed",
                op.display()
            ),
            evidence,
            None,
        ));
    };
    let deadline = plus(renewed, duration);
    let expired = now > plus(deadline, input.skew);
    if none_runs && expired {
        // The process outside the Deployment that handled has stopped renewing too: nothing
        // handles now, and this names the last one that did.
        let h = holder.clone().unwrap_or_default();
        return Some(Finding {
            id: ID,
            severity: Severity::Problem,
            title: format!(
                "nothing leads: the Lease {lease_ref} of {h}, not a Pod of {}, expired {} ago, and the Deployment has no running replica",
                op.display(),
                age(now, deadline)
            ),
            evidence,
            fix: Some(format!(
                "that process (holderIdentity `<POD_NAME or host name>_<random>`) stopped; run it again, or get the Deployment's Pods running: kubectl -n {} describe deployment {}",
                op.namespace, op.name
            )),
        });
    }
    // A released Lease (no holder) is taken by a standby within one retry period.
    let handover = sum(Duration::seconds(2 * RETRY_PERIOD.as_secs() as i64), input.skew);
    if expired || (holder.is_none() && now - renewed > handover) {
        let title = match &holder {
            Some(h) => format!(
                "no replica of {} leads: the Lease {lease_ref} of {h} expired {} ago",
                op.display(),
                age(now, deadline)
            ),
            None => format!(
                "no replica of {} leads: the Lease {lease_ref} was released {} ago and nobody took it",
                op.display(),
                age(now, renewed)
            ),
        };
        let stuck_holder = holder_runs.then_some(holder_pod).flatten();
        return Some(nobody_leads(title, evidence, stuck_holder));
    }
    evidence.extend(access.last_lines.iter().cloned());
    match (&holder, holder_is_ours, holder_runs) {
        (None, _, _) => Some(ok(
            format!(
                "the Lease {lease_ref} was released {} ago: a standby takes it within {}s",
                age(now, renewed),
                RETRY_PERIOD.as_secs()
            ),
            evidence,
        )),
        (Some(h), true, true) => Some(ok(
            format!(
                "{} leads {} (Lease {lease_ref} held by {h}, renewed {} ago)",
                holder_pod.unwrap_or_default(),
                op.display(),
                age(now, renewed)
            ),
            evidence,
        )),
        (Some(h), true, false) => Some(Finding {
            id: ID,
            severity: Severity::Warning,
            title: format!(
                "the Lease {lease_ref} is held by {h}, whose Pod is not running: nobody handles until it expires at {}",
                rfc3339_seconds(plus(renewed, duration))
            ),
            evidence,
            fix: Some(format!(
                "a standby takes over by itself when the Lease expires; if it does not, see {}",
                find_log(op)
            )),
        }),
        (Some(h), false, _) if input.given_holder == Some(h.as_str()) => Some(ok(
            format!(
                "the Lease {lease_ref} is held by {h}, the `operate` process whose log was given: it handles, {}",
                if none_runs {
                    format!("and {} has no running replica", op.display())
                } else {
                    format!("and the replicas of {} stand by", op.display())
                }
            ),
            evidence,
        )),
        (Some(h), false, _) => Some(Finding {
            id: ID,
            severity: Severity::Warning,
            title: format!(
                "the Lease {lease_ref} is held by {h}, which is not a Pod of {}: another `operate` process leads and handles, {}",
                op.display(),
                if none_runs {
                    "and the Deployment has no running replica"
                } else {
                    "and the Deployment's replicas stand by"
                }
            ),
            evidence,
            fix: Some(format!(
                "that process handles (and posts events for) these objects with its own flags and permissions; find it by its holderIdentity (`<POD_NAME or host name>_<random>`) and stop it, or give it its own Lease (`operate --lease-name NAME`) or `--standalone` on other namespaces; watch the handover: kubectl -n {namespace} get lease {name} -w"
            )),
        }),
    }
}

/// A Lease as the elector left it, against the Deployment's Pods.
#[derive(Debug, Clone)]
struct LeaseView {
    /// `spec.holderIdentity`, `None` when released.
    holder: Option<String>,
    /// The holder's instance: `holderIdentity` up to its last `_` (the Pod or host name).
    holder_pod: Option<String>,
    /// The holder is one of the Deployment's Pods.
    holder_is_ours: bool,
    /// ... and it runs.
    holder_runs: bool,
    /// `spec.renewTime`, else `spec.acquireTime`.
    renewed: Option<DateTime<Utc>>,
    /// `spec.leaseDurationSeconds` (the elector's default when unset).
    duration: Duration,
    /// `spec.leaseTransitions`.
    transitions: i32,
}

impl LeaseView {
    fn of(lease: &Lease, input: &Input<'_>) -> LeaseView {
        let spec = lease.spec.clone().unwrap_or_default();
        let holder = spec.holder_identity.filter(|h| !h.is_empty());
        let holder_pod = holder
            .as_deref()
            .map(|h| h.rsplit_once('_').map_or(h, |(instance, _)| instance).to_string());
        // Without its Pods in evidence, a Deployment's Pod is known by its name: `NAME-<hash>-<id>`.
        let prefix = format!("{}-", input.operator.name);
        let named = |p: &str| {
            input.pods.iter().any(|pod| pod.metadata.name.as_deref() == Some(p))
                || (input.pods.is_empty() && p.starts_with(&prefix))
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
pub fn leader_elsewhere(input: &Input<'_>) -> Option<String> {
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

fn running(input: &Input<'_>) -> String {
    let names = if input.running.is_empty() {
        "none".to_string()
    } else {
        input.running.join(", ")
    };
    format!("running Pods of {}: {names}", input.operator.display())
}

fn find_log(op: &OperatorRef) -> String {
    format!(
        "kubectl -n {} logs deployment/{} -c {} | grep -i lease",
        op.namespace, op.name, op.container
    )
}

/// What the evidence says about the ServiceAccount's rights on the Lease: access reviews (or
/// RBAC objects), and the 403s in the elector's own log lines.
struct LeaseAccess {
    /// Verbs proven or suggested denied.
    denied: Vec<String>,
    /// Lines for the finding: the answers and the 403 lines.
    evidence: Vec<String>,
    /// The last election line of each log: what each replica last said.
    last_lines: Vec<String>,
}

impl LeaseAccess {
    fn of(input: &Input<'_>, namespace: &str, name: &str) -> LeaseAccess {
        let mut denied = Vec::new();
        let mut evidence = Vec::new();
        for (verb, answer) in input.lease_access {
            let (allowed, how) = match answer {
                Answer::Reviewed { allowed, reason } => (
                    Some(*allowed),
                    format!(
                        "SubjectAccessReview: {}{}",
                        if *allowed { "allowed" } else { "denied" },
                        reason.as_ref().map(|r| format!(" ({r})")).unwrap_or_default()
                    ),
                ),
                Answer::RulesAllow(by) => (Some(true), format!("allowed by {by}")),
                Answer::RulesSilent => (
                    None,
                    "no bound Role or ClusterRole grants it (read from RBAC objects)".into(),
                ),
                Answer::Unknown => continue,
            };
            if allowed != Some(true) {
                denied.push(verb.clone());
            }
            evidence.push(format!(
                "may system:serviceaccount:{}:{} {verb} the Lease {namespace}/{name}: {how}",
                input.operator.namespace, input.operator.service_account
            ));
        }
        // The elector's own lines: the last one of each log, and every 403 (the API's message
        // names the verb it was denied).
        let last = last_per_log(input.election_lines, |l| &l.source);
        for line in input.election_lines.iter().filter(|l| l.message.contains("(403)")) {
            if let Some(verb) = forbidden_verb(&line.message)
                && !denied.contains(&verb)
            {
                denied.push(verb);
            }
            if !last.iter().any(|l| std::ptr::eq(*l, line)) {
                evidence.push(format!("log: {}", line.cite));
            }
        }
        let last_lines = last
            .iter()
            .map(|l| format!("log (its last election line): {}", l.cite))
            .collect();
        LeaseAccess {
            denied,
            evidence,
            last_lines,
        }
    }

    /// The fix: the Role rule when a verb is denied, else where to look.
    fn fix(&self, input: &Input<'_>, namespace: &str, name: &str, stuck_holder: Option<&str>) -> String {
        let op = input.operator;
        if !self.denied.is_empty() {
            let rules = crate::render::yaml(&crate::manifests::lease_rules(name));
            return format!(
                "its ServiceAccount {}/{} may not {} the Lease: grant the elector's verbs in a Role in {namespace} bound to it (`kubectl microservice manifests --namespace {} --watch-namespace {}` prints it as {}):\n{}",
                op.namespace,
                op.service_account,
                self.denied.join(", "),
                op.namespace,
                input.namespace,
                crate::manifests::LEASE_ROLE_NAME,
                rules.trim_end()
            );
        }
        match stuck_holder {
            Some(pod) => format!(
                "its holder {pod} runs but does not renew: its API calls fail (see {}); restart it: kubectl -n {} delete pod {pod}",
                find_log(op),
                op.namespace
            ),
            None => format!(
                "the running replicas do not take the Lease: see {}; their Role needs coordination.k8s.io leases get, create, update in {namespace}",
                find_log(op)
            ),
        }
    }
}

/// `... cannot update resource "leases" ...` → `update`.
fn forbidden_verb(message: &str) -> Option<String> {
    let rest = &message[message.find("cannot ")? + "cannot ".len()..];
    let verb = rest.split_whitespace().next()?;
    rest.contains("resource \"leases\"").then(|| verb.to_string())
}

// ---- Kopf: peering --------------------------------------------------------------------------

fn kopf(input: &Input<'_>, name: &str, mandatory: bool, clusterwide: bool, priority: i64) -> Option<Finding> {
    let op = input.operator;
    let paused_lines: Vec<&PauseEvidence> = last_per_log(input.pause_lines, |l| &l.source)
        .into_iter()
        .filter(|p| p.line == PauseLine::Paused)
        .collect();
    let (kind, where_) = if clusterwide {
        ("ClusterKopfPeering", name.to_string())
    } else {
        ("KopfPeering", format!("{}/{name}", input.namespace))
    };
    let priority_source = if op.argv.iter().any(|a| a == "--dev") {
        "--dev".to_string()
    } else if priority == 0 {
        "default".to_string()
    } else {
        "--priority".to_string()
    };
    let Some(peerings) = input.peerings.get() else {
        return from_logs(input, &paused_lines, &format!("{kind} {where_}: not in evidence"));
    };
    let peering = peerings
        .iter()
        .filter_map(Peering::parse)
        .find(|p| p.kind == kind && p.name == name && (clusterwide || p.namespace.as_deref() == Some(input.namespace)));
    let Some(peering) = peering else {
        if mandatory {
            return Some(Finding {
                id: ID,
                severity: Severity::Problem,
                title: format!(
                    "the Kopf operator {} waits for its peering {kind} {where_} (--peering {name}), which does not exist: it stays paused",
                    op.display()
                ),
                evidence: vec![
                    format!("its command: {}", op.argv.join(" ")),
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
            return from_logs(input, &paused_lines, &format!("{kind} {where_}: not found now"));
        }
        if input.running.len() > 1 {
            return Some(double_handling(
                input,
                format!("without a peering object ({kind} {where_} not found, so Kopf falls back to standalone)"),
                vec![
                    format!("its command: {}", op.argv.join(" ")),
                    format!("GET kopf.dev/v1 and zalando.org/v1 {kind} {where_}: not found"),
                ],
            ));
        }
        return Some(ok(
            format!(
                "no peering object {kind} {where_}: the Kopf operator {} runs standalone (Kopf auto-detects `{name}`)",
                op.display()
            ),
            vec![format!("GET kopf.dev/v1 and zalando.org/v1 {kind} {where_}: not found")],
        ));
    };
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
    let higher: Vec<&&Peer> = paused.iter().filter(|p| p.priority > priority).collect();
    let siblings_only = paused.iter().all(|p| own(p));
    let until = paused
        .iter()
        .filter_map(|p| p.deadline())
        .max()
        .map(rfc3339_seconds)
        .unwrap_or_else(|| "?".into());
    let (title, fix) = if !higher.is_empty() {
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
    } else if siblings_only {
        (
            format!(
                "{} replicas of the Kopf operator {} pause each other: peers of the same priority all pause (Kopf has no leader election)",
                own_live.len(),
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
    Some(Finding {
        id: ID,
        severity: Severity::Problem,
        title,
        evidence,
        fix: Some(fix),
    })
}

/// The last line of each log (lines in log order, `source` naming the log): its current state.
fn last_per_log<T>(lines: &[T], source: impl Fn(&T) -> &str) -> Vec<&T> {
    let mut last: Vec<&T> = Vec::new();
    for line in lines {
        match last.iter_mut().find(|l| source(l) == source(line)) {
            Some(slot) => *slot = line,
            None => last.push(line),
        }
    }
    last
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

/// Two or more operators (Deployments) serve `namespace` and each one's logs show it handled
/// the object ([`super::handlings::handlings`]): nothing elects one of them (two `--standalone` Kopf operators, or
/// Kopf without peering between them, or ours beside Kopf), so each handles every object of the
/// namespace, patches its status and posts its events, racing on its record. A warning of
/// `operator-not-leading`, naming each and its line; the fix that works: keep one operator for
/// the namespace (remove the others, or give them a `--namespace` that leaves it out).
pub fn handled_by_several(namespace: &str, handlings: &[Handling]) -> Option<Finding> {
    let [first, rest @ ..] = handlings else { return None };
    let last = rest.last()?;
    let names: Vec<&str> = handlings.iter().map(|h| h.operator.as_str()).collect();
    let evidence = handlings
        .iter()
        .flat_map(|h| {
            [
                format!("{} handled it: {}", h.operator, h.line),
                format!("{} command: {}", h.operator, h.command),
            ]
        })
        .collect();
    let fix = format!(
        "keep one operator for namespace {namespace} ({keep}): remove {other} (kubectl -n {ns} delete deployment {name}), or give it a --namespace that leaves {namespace} out (kubectl -n {ns} edit deployment {name}); operators that each run --standalone, or without peering between them, never coordinate",
        keep = first.operator,
        other = last.operator,
        ns = last.namespace,
        name = last.name,
    );
    Some(Finding {
        id: ID,
        severity: Severity::Warning,
        title: format!(
            "{} operators serve namespace {namespace} and each handled this object: {}; nothing makes one of them the handler (double handling)",
            handlings.len(),
            names.join(", ")
        ),
        evidence,
        fix: Some(fix),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::operator::recognise;
    use k8s_openapi::api::apps::v1::Deployment;
    use serde_json::json;

    fn t(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    fn operator(command: serde_json::Value) -> OperatorRef {
        let d: Deployment = serde_json::from_value(json!({
            "metadata": {"name": "microservice-operator", "namespace": "ops"},
            "spec": {"selector": {}, "template": {"spec": {"containers": [{"name": "operator", "image": "x", "command": command}]}}}
        }))
        .unwrap();
        recognise(&d).unwrap()
    }

    fn pod(name: &str) -> Pod {
        serde_json::from_value(json!({"metadata": {"name": name, "namespace": "ops"}})).unwrap()
    }

    fn lease(holder: Option<&str>, renewed: &str) -> Lease {
        serde_json::from_value(json!({
            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": "microservice-operator", "namespace": "ops"},
            "spec": {"holderIdentity": holder, "leaseDurationSeconds": 15, "renewTime": renewed, "acquireTime": renewed, "leaseTransitions": 2}
        }))
        .unwrap()
    }

    struct Case {
        op: OperatorRef,
        pods: Vec<Pod>,
        running: Vec<String>,
        leases: Evidence<Vec<Lease>>,
        peerings: Evidence<Vec<Value>>,
        pause_lines: Vec<PauseEvidence>,
        election_lines: Vec<ElectionLine>,
        lease_access: Vec<(String, Answer)>,
        now: &'static str,
    }

    impl Case {
        fn ours(leases: Vec<Lease>, now: &'static str) -> Case {
            Case {
                // As `manifests` wrote it before the default became one Lease per watched
                // namespace: one named Lease in the operator's namespace.
                op: operator(json!([
                    "kubectl-microservice",
                    "operate",
                    "-n",
                    "todo",
                    "--lease-namespace",
                    "ops"
                ])),
                pods: vec![pod("microservice-operator-5d7f-a"), pod("microservice-operator-5d7f-b")],
                running: vec![
                    "microservice-operator-5d7f-a".into(),
                    "microservice-operator-5d7f-b".into(),
                ],
                leases: Evidence::Present(leases),
                peerings: Evidence::Present(vec![]),
                pause_lines: vec![],
                election_lines: vec![],
                lease_access: vec![],
                now,
            }
        }

        fn kopf(command: serde_json::Value, peerings: Vec<Value>, now: &'static str) -> Case {
            Case {
                op: operator(command),
                pods: vec![pod("microservice-operator-5d7f-a")],
                running: vec!["microservice-operator-5d7f-a".into()],
                leases: Evidence::Present(vec![]),
                peerings: Evidence::Present(peerings),
                pause_lines: vec![],
                election_lines: vec![],
                lease_access: vec![],
                now,
            }
        }

        fn run(&self) -> Option<Finding> {
            let pods: Vec<&Pod> = self.pods.iter().collect();
            operator_not_leading(&Input {
                operator: &self.op,
                pods: &pods,
                running: &self.running,
                ready_replicas: 0,
                leases: &self.leases,
                peerings: &self.peerings,
                pause_lines: &self.pause_lines,
                election_lines: &self.election_lines,
                lease_access: &self.lease_access,
                namespace: "todo",
                now: Some(t(self.now)),
                skew: Duration::seconds(2),
                given_holder: None,
            })
        }
    }

    #[test]
    fn a_fresh_lease_held_by_a_pod_is_ok() {
        let f = Case::ours(
            vec![lease(
                Some("microservice-operator-5d7f-b_0123456789abcdef"),
                "2026-11-29T17:00:00Z",
            )],
            "2026-11-29T17:00:05Z",
        )
        .run()
        .unwrap();
        assert_eq!(f.severity, Severity::Ok, "{f:?}");
        assert!(f.title.starts_with("microservice-operator-5d7f-b leads"), "{}", f.title);
    }

    #[test]
    fn an_expired_lease_is_a_problem_naming_its_holder_and_age() {
        let f = Case::ours(
            vec![lease(
                Some("microservice-operator-5d7f-b_0123456789abcdef"),
                "2026-11-29T17:00:00Z",
            )],
            "2026-11-29T17:01:15Z",
        )
        .run()
        .unwrap();
        assert_eq!(f.severity, Severity::Problem);
        assert!(f.title.contains("expired 60s ago"), "{}", f.title);
        assert!(
            f.evidence[0].contains("renewTime 2026-11-29T17:00:00Z, leaseDurationSeconds 15"),
            "{:?}",
            f.evidence
        );
        // Its holder's Pod runs: it is alive but cannot renew.
        assert!(f.fix.unwrap().contains("runs but does not renew"));
        // Within the lease duration plus the skew tolerance it is not yet expired.
        let edge = Case::ours(
            vec![lease(
                Some("microservice-operator-5d7f-b_0123456789abcdef"),
                "2026-11-29T17:00:00Z",
            )],
            "2026-11-29T17:00:17Z",
        );
        assert_eq!(edge.run().unwrap().severity, Severity::Ok);
    }

    #[test]
    fn a_forbidden_renewal_names_the_verb_and_the_role_rule() {
        let mut case = Case::ours(
            vec![lease(
                Some("microservice-operator-5d7f-a_abbdab38a61d7b8d"),
                "2026-11-29T20:28:32Z",
            )],
            "2026-11-29T20:33:57Z",
        );
        // The elector's own line, as our text format writes it (captured from a real API server).
        case.election_lines = vec![ElectionLine {
            source: "microservice-operator-5d7f-a/operator".into(),
            cite: "microservice-operator-5d7f-a/operator line 9".into(),
            message: "Leader election: the lease request failed; retrying lease=ops/microservice-operator error=Forbidden (403): leases.coordination.k8s.io \"microservice-operator\" is forbidden: User \"system:serviceaccount:ops:microservice-operator\" cannot update resource \"leases\" in API group \"coordination.k8s.io\" in the namespace \"ops\" leading=true".into(),
        }];
        let f = case.run().unwrap();
        assert_eq!(f.severity, Severity::Problem);
        let fix = f.fix.unwrap();
        assert!(fix.contains("may not update the Lease"), "{fix}");
        assert!(fix.contains("resourceNames:\n  - microservice-operator"), "{fix}");
        assert!(
            f.evidence.iter().any(|e| e.contains("its last election line")),
            "{:?}",
            f.evidence
        );
        // A denied SubjectAccessReview says the same without logs.
        case.election_lines.clear();
        case.lease_access = vec![
            (
                "get".into(),
                Answer::Reviewed {
                    allowed: true,
                    reason: None,
                },
            ),
            (
                "update".into(),
                Answer::Reviewed {
                    allowed: false,
                    reason: None,
                },
            ),
        ];
        let f = case.run().unwrap();
        assert!(f.fix.unwrap().contains("may not update the Lease"));
        assert!(
            f.evidence
                .iter()
                .any(|e| e.ends_with("update the Lease ops/microservice-operator: SubjectAccessReview: denied")),
            "{:?}",
            f.evidence
        );
    }

    #[test]
    fn a_holder_outside_the_deployment_is_a_warning() {
        let f = Case::ours(
            vec![lease(Some("alice-laptop_fedcba9876543210"), "2026-11-29T17:00:00Z")],
            "2026-11-29T17:00:03Z",
        )
        .run()
        .unwrap();
        assert_eq!(f.severity, Severity::Warning);
        assert!(
            f.title
                .contains("alice-laptop_fedcba9876543210, which is not a Pod of ops/deployment/microservice-operator")
        );
    }

    #[test]
    fn released_missing_and_standalone() {
        let released = Case::ours(vec![lease(None, "2026-11-29T17:00:00Z")], "2026-11-29T17:00:01Z");
        assert_eq!(released.run().unwrap().severity, Severity::Ok);
        let abandoned = Case::ours(vec![lease(None, "2026-11-29T17:00:00Z")], "2026-11-29T17:00:30Z");
        let f = abandoned.run().unwrap();
        assert_eq!(f.severity, Severity::Problem);
        assert!(f.title.contains("released 30s ago and nobody took it"), "{}", f.title);
        let missing = Case::ours(vec![], "2026-11-29T17:00:30Z").run().unwrap();
        assert_eq!(missing.severity, Severity::Problem);
        assert!(missing.title.contains("Lease ops/microservice-operator does not exist"));
        let mut gap = Case::ours(vec![], "2026-11-29T17:00:30Z");
        gap.leases = Evidence::missing("Leases", crate::evidence::GapReason::Forbidden("no".into()));
        assert!(gap.run().is_none(), "a gap cannot tell");
        let mut stopped = Case::ours(vec![], "2026-11-29T17:00:30Z");
        stopped.running.clear();
        assert!(stopped.run().is_none(), "operator-not-running says it");
        let mut standalone = Case::ours(vec![], "2026-11-29T17:00:30Z");
        standalone.op = operator(json!(["kubectl-microservice", "operate", "--standalone"]));
        // Two replicas with --standalone each handle every object (issue 11 trial, D).
        assert_eq!(standalone.running.len(), 2);
        let doubled = standalone.run().unwrap();
        assert_eq!(doubled.severity, Severity::Warning);
        assert!(doubled.title.contains("double handling"), "{}", doubled.title);
        assert!(
            doubled
                .fix
                .unwrap()
                .contains("kubectl -n ops scale deployment/microservice-operator --replicas=1")
        );
        standalone.running.truncate(1);
        assert_eq!(standalone.run().unwrap().severity, Severity::Ok);
    }

    fn peering(peers: serde_json::Value) -> Value {
        json!({"apiVersion": "kopf.dev/v1", "kind": "KopfPeering", "metadata": {"name": "default", "namespace": "todo"}, "status": peers})
    }

    #[test]
    fn kopf_paused_by_a_dev_peer_with_higher_priority() {
        let case = Case::kopf(
            json!(["kopf", "run", "--namespace=todo", "/src/operator.py"]),
            vec![peering(json!({
                "root@microservice-operator-5d7f-a/20261129165900/abc": {"priority": 0, "lifetime": 60, "lastseen": "2026-11-29T17:00:00+00:00"},
                "alice@laptop/20261129165930/xyz": {"priority": 666, "lifetime": 60, "lastseen": "2026-11-29T17:00:10+00:00"}
            }))],
            "2026-11-29T17:00:30Z",
        );
        let f = case.run().unwrap();
        assert_eq!(f.severity, Severity::Problem);
        assert!(
            f.title.contains("paused in favour of alice@laptop/20261129165930/xyz"),
            "{}",
            f.title
        );
        assert!(f.fix.as_deref().unwrap().contains("kopf run --dev"));
        // Once the laptop's keep-alive has expired, nothing pauses it.
        let later = Case {
            now: "2026-11-29T17:01:11Z",
            ..case
        };
        assert_eq!(later.run().unwrap().severity, Severity::Ok);
    }

    #[test]
    fn kopf_replicas_of_the_same_priority_pause_each_other() {
        let mut case = Case::kopf(
            json!(["kopf", "run", "-A", "/src/operator.py"]),
            vec![
                json!({"apiVersion": "kopf.dev/v1", "kind": "ClusterKopfPeering", "metadata": {"name": "default"}, "status": {
                    "microservice-operator-5d7f-a": {"priority": 0, "lifetime": 60, "lastseen": "2026-11-29T17:00:00+00:00"},
                    "microservice-operator-5d7f-b": {"priority": 0, "lifetime": 60, "lastseen": "2026-11-29T17:00:01+00:00"}
                }}),
            ],
            "2026-11-29T17:00:30Z",
        );
        case.pods.push(pod("microservice-operator-5d7f-b"));
        case.running.push("microservice-operator-5d7f-b".into());
        let f = case.run().unwrap();
        assert_eq!(f.severity, Severity::Problem);
        assert!(f.title.starts_with("2 replicas of the Kopf operator"), "{}", f.title);
        assert!(f.fix.unwrap().contains("--replicas=1"));
    }

    #[test]
    fn kopf_without_a_peering_object() {
        let auto = Case::kopf(
            json!(["kopf", "run", "--namespace=todo", "op.py"]),
            vec![],
            "2026-11-29T17:00:30Z",
        );
        assert_eq!(auto.run().unwrap().severity, Severity::Ok);
        let mandatory = Case::kopf(
            json!(["kopf", "run", "--namespace=todo", "--peering=team", "op.py"]),
            vec![],
            "2026-11-29T17:00:30Z",
        );
        let f = mandatory.run().unwrap();
        assert_eq!(f.severity, Severity::Problem);
        assert!(
            f.title
                .contains("KopfPeering todo/team (--peering team), which does not exist"),
            "{}",
            f.title
        );
        assert!(
            f.fix
                .unwrap()
                .contains("kind: KopfPeering\nmetadata:\n  name: team\n  namespace: todo")
        );
        let mut standalone = Case::kopf(
            json!(["kopf", "run", "--standalone", "op.py"]),
            vec![],
            "2026-11-29T17:00:30Z",
        );
        standalone.running.truncate(1);
        assert_eq!(standalone.run().unwrap().severity, Severity::Ok);
        // Without a peering object, two replicas fall back to standalone: both handle.
        let mut unpeered = Case::kopf(json!(["kopf", "run", "op.py"]), vec![], "2026-11-29T17:00:30Z");
        unpeered.running = vec!["op-1".into(), "op-2".into()];
        let f = unpeered.run().unwrap();
        assert_eq!(f.severity, Severity::Warning, "{}", f.title);
        assert!(
            f.title.contains("2 replicas") && f.title.contains("double handling"),
            "{}",
            f.title
        );
        unpeered.running.truncate(1);
        assert_eq!(unpeered.run().unwrap().severity, Severity::Ok);
    }

    #[test]
    fn kopf_pause_lines_decide_without_the_peering_object() {
        let mut case = Case::kopf(
            json!(["kopf", "run", "-n", "todo", "op.py"]),
            vec![],
            "2026-11-29T17:00:30Z",
        );
        case.peerings = Evidence::missing("Kopf peerings", crate::evidence::GapReason::Forbidden("no".into()));
        let paused = |source: &str, line| PauseEvidence {
            source: source.into(),
            cite: format!("{source} line 9: ..."),
            line,
        };
        case.pause_lines = vec![paused("a/operator", PauseLine::Paused)];
        assert_eq!(case.run().unwrap().severity, Severity::Problem);
        case.pause_lines.push(paused("a/operator", PauseLine::Resumed));
        assert!(case.run().is_none(), "resumed since: the logs cannot tell more");
    }

    fn handling(op: &str, line: &str) -> Handling {
        Handling {
            operator: format!("t/deployment/{op}"),
            namespace: "t".into(),
            name: op.into(),
            command: "kopf run --standalone --namespace=t op.py".into(),
            line: line.into(),
        }
    }

    /// Two operators that both handled the object: a warning naming both, their lines, and a
    /// fix that keeps the first; one alone is nothing to say.
    #[test]
    fn two_operators_that_handled_the_object_are_double_handling() {
        let both = [
            handling(
                "a",
                "a-1-x/operator line 3: Creation is processed: 1 succeeded; 0 failed.",
            ),
            handling(
                "b",
                "b-1-y/operator line 4: Resuming is processed: 1 succeeded; 0 failed.",
            ),
        ];
        let f = handled_by_several("t", &both).unwrap();
        assert_eq!((f.id, f.severity), (ID, Severity::Warning));
        assert_eq!(
            f.title,
            "2 operators serve namespace t and each handled this object: t/deployment/a, t/deployment/b; nothing makes one of them the handler (double handling)"
        );
        assert!(
            f.evidence.iter().any(|e| e
                == "t/deployment/b handled it: b-1-y/operator line 4: Resuming is processed: 1 succeeded; 0 failed.")
        );
        let fix = f.fix.unwrap();
        assert!(fix.starts_with("keep one operator for namespace t (t/deployment/a): remove t/deployment/b (kubectl -n t delete deployment b)"), "{fix}");
        assert!(handled_by_several("t", &both[..1]).is_none());
        assert!(handled_by_several("t", &[]).is_none());
    }
}
