//! `operator-not-leading` for ours: the `coordination.k8s.io/v1` Lease that governs the
//! namespace (client-go's algorithm, `operate`'s elector), its holder against the Deployment's
//! Pods, and the ServiceAccount's rights on it.

use chrono::{DateTime, Duration, Utc};
use k8s_openapi::api::coordination::v1::Lease;

use super::super::leading_facts::{Input, LeaseView};
use super::{ID, age, find_log, last_per_log, ok, running};
use crate::diagnose::finding::{Finding, Severity};
use crate::diagnose::rbac::Answer;
use crate::time::{plus, rfc3339_seconds, sum};
use crate::vocab::lease::RETRY_PERIOD;

/// The Lease `namespace/name` of `input.operator` and what it says.
struct At<'a, 'i> {
    input: &'a Input<'i>,
    namespace: &'a str,
    name: &'a str,
    /// `NS/NAME`.
    lease_ref: String,
    /// No replica runs (and no ready replica is reported without its Pods in evidence):
    /// `operator-not-running` says it all, unless another process holds a current Lease (then
    /// objects ARE handled, by something outside the Deployment).
    none_runs: bool,
    access: LeaseAccess,
}

impl At<'_, '_> {
    /// Nobody leads: the rights on the Lease and the elector's own lines say why, and the fix
    /// follows from them.
    fn nobody_leads(&self, title: String, mut evidence: Vec<String>, stuck_holder: Option<&str>) -> Finding {
        evidence.extend(self.access.evidence.iter().cloned());
        evidence.extend(self.access.last_lines.iter().cloned());
        Finding {
            id: ID,
            severity: Severity::Problem,
            title,
            evidence,
            fix: Some(self.access.fix(self.input, self.namespace, self.name, stuck_holder)),
        }
    }
}

/// `operator-not-leading` of ours on its Lease `namespace/name`: missing, never renewed, expired
/// or released and not taken (a problem naming the rights or the stuck holder), held by a Pod
/// that does not run or by a process outside the Deployment (a warning), or held and renewed
/// (`ok`). `None` without the Leases or "now", or when no replica runs and no other process holds
/// it.
pub(super) fn finding(input: &Input<'_>, namespace: &str, name: &str) -> Option<Finding> {
    let leases = input.leases.get()?;
    let at = At {
        input,
        namespace,
        name,
        lease_ref: format!("{namespace}/{name}"),
        none_runs: input.running.is_empty() && !(input.pods.is_empty() && input.ready_replicas > 0),
        access: LeaseAccess::of(input, namespace, name),
    };
    let Some(lease) = leases
        .iter()
        .find(|l| l.metadata.namespace.as_deref() == Some(namespace) && l.metadata.name.as_deref() == Some(name))
    else {
        if at.none_runs {
            return None;
        }
        let evidence = vec![
            format!("GET coordination.k8s.io/v1 leases {}: not found", at.lease_ref),
            running(input),
        ];
        return Some(at.nobody_leads(
            format!(
                "no replica of {} leads: its Lease {} does not exist",
                input.operator.display(),
                at.lease_ref
            ),
            evidence,
            None,
        ));
    };
    let now = input.now?;
    of_lease(&at, lease, now)
}

/// [`finding`] of the Lease found, at `now`.
fn of_lease(at: &At<'_, '_>, lease: &Lease, now: DateTime<Utc>) -> Option<Finding> {
    let input = at.input;
    let view = LeaseView::of(lease, input);
    let mut evidence = vec![
        format!(
            "Lease {}: holderIdentity {}, renewTime {}, leaseDurationSeconds {}, leaseTransitions {}",
            at.lease_ref,
            view.holder.as_deref().unwrap_or("<none>"),
            view.renewed.map(rfc3339_seconds).unwrap_or_else(|| "<none>".into()),
            view.duration.num_seconds(),
            view.transitions
        ),
        format!("now: {} (the snapshot's clock)", rfc3339_seconds(now)),
        running(input),
    ];
    let current_elsewhere = view.holder.is_some() && !view.holder_is_ours;
    if at.none_runs && !current_elsewhere {
        return None;
    }
    let Some(renewed) = view.renewed else {
        return Some(at.nobody_leads(
            format!(
                "no replica of {} leads: its Lease {} was never renewed",
                input.operator.display(),
                at.lease_ref
            ),
            evidence,
            None,
        ));
    };
    if let Some(lapsed) = lapsed(at, &view, now, renewed, &evidence) {
        return Some(lapsed);
    }
    evidence.extend(at.access.last_lines.iter().cloned());
    Some(held(at, &view, now, renewed, evidence))
}

/// The Lease lapsed: expired while no replica runs (the process outside the Deployment that
/// handled stopped renewing too: nothing handles now, and this names the last one that did), or
/// expired, or released and not taken within the handover (a standby takes a released Lease
/// within one retry period).
fn lapsed(
    at: &At<'_, '_>,
    view: &LeaseView,
    now: DateTime<Utc>,
    renewed: DateTime<Utc>,
    evidence: &[String],
) -> Option<Finding> {
    let op = at.input.operator;
    let lease_ref = &at.lease_ref;
    let deadline = plus(renewed, view.duration);
    let expired = now > plus(deadline, at.input.skew);
    if at.none_runs && expired {
        let h = view.holder.clone().unwrap_or_default();
        return Some(Finding {
            id: ID,
            severity: Severity::Problem,
            title: format!(
                "nothing leads: the Lease {lease_ref} of {h}, not a Pod of {}, expired {} ago, and the Deployment has no running replica",
                op.display(),
                age(now, deadline)
            ),
            evidence: evidence.to_vec(),
            fix: Some(format!(
                "that process (holderIdentity `<POD_NAME or host name>_<random>`) stopped; run it again, or get the Deployment's Pods running: kubectl -n {} describe deployment {}",
                op.namespace, op.name
            )),
        });
    }
    let handover = sum(Duration::seconds(2 * RETRY_PERIOD.as_secs() as i64), at.input.skew);
    if !(expired || (view.holder.is_none() && now - renewed > handover)) {
        return None;
    }
    let title = match &view.holder {
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
    let stuck_holder = view.holder_runs.then_some(view.holder_pod.as_deref()).flatten();
    Some(at.nobody_leads(title, evidence.to_vec(), stuck_holder))
}

/// A current Lease: released (a standby takes it), held by a running Pod (`ok`), by a Pod that
/// does not run (a warning until it expires), by the process whose log was given (`ok`), or by
/// another process outside the Deployment (a warning: it handles with its own flags and rights).
fn held(
    at: &At<'_, '_>,
    view: &LeaseView,
    now: DateTime<Utc>,
    renewed: DateTime<Utc>,
    evidence: Vec<String>,
) -> Finding {
    let input = at.input;
    let op = input.operator;
    let (lease_ref, namespace, name, none_runs) = (&at.lease_ref, at.namespace, at.name, at.none_runs);
    let (holder, holder_pod, duration) = (&view.holder, view.holder_pod.as_deref(), view.duration);
    match (holder, view.holder_is_ours, view.holder_runs) {
        (None, _, _) => ok(
            format!(
                "the Lease {lease_ref} was released {} ago: a standby takes it within {}s",
                age(now, renewed),
                RETRY_PERIOD.as_secs()
            ),
            evidence,
        ),
        (Some(h), true, true) => ok(
            format!(
                "{} leads {} (Lease {lease_ref} held by {h}, renewed {} ago)",
                holder_pod.unwrap_or_default(),
                op.display(),
                age(now, renewed)
            ),
            evidence,
        ),
        (Some(h), true, false) => Finding {
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
        },
        (Some(h), false, _) if input.given_holder == Some(h.as_str()) => ok(
            format!(
                "the Lease {lease_ref} is held by {h}, the `operate` process whose log was given: it handles, {}",
                if none_runs {
                    format!("and {} has no running replica", op.display())
                } else {
                    format!("and the replicas of {} stand by", op.display())
                }
            ),
            evidence,
        ),
        (Some(h), false, _) => Finding {
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
        },
    }
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
            let rules = crate::yaml::to_string(&crate::install::lease_rules(name));
            return format!(
                "its ServiceAccount {}/{} may not {} the Lease: grant the elector's verbs in a Role in {namespace} bound to it (`kubectl microservice manifests --namespace {} --watch-namespace {}` prints it as {}):\n{}",
                op.namespace,
                op.service_account,
                self.denied.join(", "),
                op.namespace,
                input.namespace,
                crate::install::LEASE_ROLE_NAME,
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
