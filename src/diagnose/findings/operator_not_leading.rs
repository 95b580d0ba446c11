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
//!   the object: nothing makes one of them the handler ([`several_operators`]).

//!
//! The Lease's finding is `operator_not_leading/lease.rs`, the peering's
//! `operator_not_leading/kopf.rs`; what they read, [`super::leading_facts`].

mod kopf;
mod lease;

use chrono::{DateTime, Utc};

use super::Ctx;
use super::leading_facts::{Input, Observed, input};
use super::operator_facts::{Replicas, Served, served};
use crate::diagnose::finding::{Finding, FindingId, Severity};
use crate::diagnose::handlings::Handling;
use crate::evidence::operator::{Leadership, OperatorRef};
use crate::kopf::peering::PeeringMode;
use crate::time::DurationStyle;

/// The finding's id (Contracts).
pub(crate) const ID: FindingId = FindingId::OperatorNotLeading;

/// `operator-not-leading` of the Deployment diagnosed ([`operator_not_leading`]); for a process
/// outside the cluster that holds a current Lease, `ok`: it leads.
pub(crate) fn check(ctx: &Ctx<'_>) -> Vec<Finding> {
    match served(ctx) {
        Served::Deployment(op) => {
            let replicas = Replicas::of(ctx, op);
            let observed = Observed::of(ctx, op);
            operator_not_leading(&input(ctx, op, &replicas, &observed))
                .into_iter()
                .collect()
        }
        Served::Process => process_leads(ctx).into_iter().collect(),
        _ => Vec::new(),
    }
}

/// A process outside the cluster (a laptop `operate`) whose Lease is current leads, its log the
/// one given or not in evidence.
fn process_leads(ctx: &Ctx<'_>) -> Option<Finding> {
    let resolution = ctx.resolution();
    let process = resolution.process.as_ref()?;
    let (Some(lease), true) = (&process.lease, process.current) else {
        return None;
    };
    let name = resolution.label();
    let mut evidence: Vec<String> = resolution.evidence.clone();
    if let Some(c) = resolution.candidates.first() {
        evidence.extend(c.evidence.iter().cloned());
    }
    Some(ok(
        match process.log.as_deref() {
            Some(log) => format!("{name} leads (Lease {lease}); its log is the one given ({log})"),
            None => format!("{name} leads (Lease {lease}); its log is not in evidence (give it with --log-file)"),
        },
        evidence,
    ))
}

/// Double handling by several operators ([`handled_by_several`]), a warning of this id.
pub(crate) fn several_operators(ctx: &Ctx<'_>) -> Vec<Finding> {
    let served_by = ctx.judged.resolution.operator.as_deref();
    let opt_out = |h: &Handling| opt_out_command(ctx, h);
    handled_by_several(ctx.ns, &ctx.judged.handlings, served_by, &opt_out)
        .into_iter()
        .collect()
}

/// Whether several operators each handled the object ([`several_operators`] finds it).
pub(crate) fn several_handle(ctx: &Ctx<'_>) -> bool {
    ctx.judged.handlings.len() >= 2
}

/// `operator-not-leading` for `input.operator`, or `None` when the evidence cannot tell (a gap,
/// no "now") or when no replica runs (`operator-not-running` says that).
pub(crate) fn operator_not_leading(input: &Input<'_>) -> Option<Finding> {
    match input.operator.leadership_in(input.namespace) {
        Leadership::Standalone if input.running.len() > 1 => Some(double_handling(
            input,
            "with --standalone: no Lease".into(),
            vec![format!("its command: {}", input.operator.command.display())],
        )),
        Leadership::Kopf(PeeringMode::Standalone) if input.running.len() > 1 => Some(double_handling(
            input,
            "with --standalone: no peering".into(),
            vec![format!("its command: {}", input.operator.command.display())],
        )),
        Leadership::Standalone => Some(ok(
            format!(
                "the operator {} runs with --standalone: no Lease, every replica handles",
                input.operator.display()
            ),
            vec![format!("its command: {}", input.operator.command.display())],
        )),
        Leadership::Lease { namespace, name } => lease::finding(input, &namespace, &name),
        Leadership::Kopf(PeeringMode::Standalone) => Some(ok(
            format!(
                "the Kopf operator {} runs with --standalone: no peering pauses it",
                input.operator.display()
            ),
            vec![format!("its command: {}", input.operator.command.display())],
        )),
        Leadership::Kopf(PeeringMode::Peering {
            name,
            mandatory,
            clusterwide,
            priority,
        }) => kopf::finding(input, &name, mandatory, clusterwide, priority),
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

/// Two or more operators (Deployments) serve `namespace` and each one's logs show it handled
/// the object ([`crate::diagnose::handlings::handlings`]): nothing elects one of them (two `--standalone` Kopf operators, or
/// Kopf without peering between them, or ours beside Kopf), so each handles every object of the
/// namespace, patches its status and posts its events, racing on its record. A warning of
/// `operator-not-leading`, naming each and its line; the fix that works: keep one operator for
/// the namespace (remove the others, or give them a `--namespace` that leaves it out). The one
/// kept is `served_by`, the operator the resolver says serves the object, when it is among
/// them: never the fix that removes the team's own serving operator to leave another team's.
/// The change to the object itself that takes it out of `h`'s operator's handlers: `kubectl
/// label -n NS TYPE/NAME KEY-` when its source's handlers select the object by that label
/// alone ([`crate::evidence::selection::OperatorHandlers::opt_out_label`]); `None` when the
/// source is not in evidence or no one label decides.
fn opt_out_command(ctx: &Ctx<'_>, h: &Handling) -> Option<String> {
    let deployments = ctx.snapshot.operator.deployments.get()?;
    let d = crate::evidence::pods::find(deployments, &h.namespace, &h.name)?;
    let configmaps = ctx.snapshot.operator.configmaps.get().map_or(&[][..], Vec::as_slice);
    let handlers =
        crate::evidence::selection::OperatorHandlers::read_deployment(ctx.snapshot, &h.operator, d, configmaps)?;
    let key = handlers.opt_out_label(ctx.obj)?;
    Some(format!(
        "kubectl label -n {} {}/{} {key}-",
        ctx.ns,
        ctx.snapshot.resource.kubectl_type(),
        ctx.name
    ))
}

/// `opt_out`: the change to the object itself that takes it out of a handling's operator
/// ([`opt_out_command`]): where the operator to change selects the object by a label, that
/// label's removal is the first fix (the object's own namespace), before any change to the
/// operator (another team's, labelled).
pub(crate) fn handled_by_several(
    namespace: &str,
    handlings: &[Handling],
    served_by: Option<&str>,
    opt_out: &dyn Fn(&Handling) -> Option<String>,
) -> Option<Finding> {
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
    // The one kept: the serving operator. The one to change: another, in the namespace itself
    // if there is one, else the last; one in another namespace (a cluster-wide operator,
    // another team's) is labelled.
    let kept = handlings.iter().find(|h| Some(h.operator.as_str()) == served_by);
    let others = || {
        handlings
            .iter()
            .rev()
            .filter(|h| !kept.is_some_and(|k| std::ptr::eq(*h, k)))
    };
    let change = others()
        .find(|h| h.namespace == namespace)
        .or_else(|| others().next())
        .unwrap_or(last);
    let keep = kept.unwrap_or_else(|| handlings.iter().find(|h| !std::ptr::eq(*h, change)).unwrap_or(first));
    let label = if change.namespace == namespace {
        String::new()
    } else {
        format!(
            " {}",
            crate::diagnose::finding::shared_resource(&format!(
                "the operator in {}, another team's, which serves other namespaces",
                change.namespace
            ))
        )
    };
    let fix = match opt_out(change) {
        Some(command) => format!(
            "keep {keep} for this object: {other} handles it only for one of its labels; to take it out of that operator, remove the label ({command}); else remove that operator (kubectl -n {ns} delete deployment {name}{label})",
            keep = keep.operator,
            other = change.operator,
            ns = change.namespace,
            name = change.name,
        ),
        None => format!(
            "keep one operator for namespace {namespace} ({keep}): remove {other} (kubectl -n {ns} delete deployment {name}{label}), or give it a --namespace that leaves {namespace} out (kubectl -n {ns} edit deployment {name}{label}); operators that each run --standalone, or without peering between them, never coordinate",
            keep = keep.operator,
            other = change.operator,
            ns = change.namespace,
            name = change.name,
        ),
    };
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
    use crate::diagnose::findings::leading_facts::{ElectionLine, PauseEvidence};
    use crate::diagnose::rbac::Answer;
    use crate::evidence::Evidence;
    use crate::evidence::operator::recognise;
    use crate::kopf::peering::PauseLine;
    use chrono::Duration;
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::coordination::v1::Lease;
    use k8s_openapi::api::core::v1::Pod;
    use serde_json::Value;
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
        let f = handled_by_several("t", &both, None, &|_| None).unwrap();
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
        assert!(handled_by_several("t", &both[..1], None, &|_| None).is_none());
        assert!(handled_by_several("t", &[], None, &|_| None).is_none());
        // The serving operator is kept, whichever else handled it: the one to change is the
        // other (labelled when it is another namespace's).
        let fix = handled_by_several("t", &both, Some("t/deployment/b"), &|_| None)
            .unwrap()
            .fix
            .unwrap();
        assert!(fix.starts_with("keep one operator for namespace t (t/deployment/b): remove t/deployment/a (kubectl -n t delete deployment a)"), "{fix}");
    }
}
