//! `event-post-failed`: the operator logged failed event POSTs and carried on. A 403 older than
//! the grant that fixed the events rule is `ok` (or a warning when nothing dates it); the fix says
//! how to check the grant and what posts again.

use std::collections::BTreeSet;

use chrono::{DateTime, Duration, Utc};

use super::permissions::{event_needs, method};
use super::{Ctx, Line, finding};
use crate::diagnose::finding::{Finding, FindingId, Severity};
use crate::diagnose::rbac::{self, Account, Answer, Need};
use crate::evidence::event_time;
use crate::evidence::operator::OperatorKind;
use crate::kopf::messages::{EventPostFailure, Lifecycle};
use crate::text::count;
use crate::time::rfc3339_millis;

/// The failed event POSTs that concern this object: its own lines, and lines without an object
/// (Kopf logs `Failed to post an event ...` from `kopf._core.engines.posting`, with no
/// `[ns/name]` prefix) unless their API message names another namespace (`... in the namespace
/// "other"`): an operator serving several namespaces fails there for other objects.
pub(super) fn post_failure_lines<'a>(ctx: &'a Ctx<'_>) -> Vec<(&'a Line, EventPostFailure)> {
    let elsewhere = |l: &Line, f: &EventPostFailure| {
        let text = f.message.as_deref().unwrap_or(&l.record.message);
        forbidden_namespace(text).is_some_and(|ns| ns != ctx.ns)
    };
    ctx.lines
        .iter()
        .filter_map(|l| match l.record.lifecycle() {
            Lifecycle::EventPostFailed(f) => Some((l, f)),
            _ => None,
        })
        .chain(ctx.unattributed.iter().filter_map(|l| match l.record.lifecycle() {
            Lifecycle::EventPostFailed(f) if !elsewhere(l, &f) => Some((l, f)),
            _ => None,
        }))
        .collect()
}

/// The namespace an API server's 403 names: `... in the namespace "NS"` (the RBAC authorizer's
/// wording, kubernetes `staging/src/k8s.io/apiserver/pkg/endpoints/handlers/responsewriters`).
fn forbidden_namespace(message: &str) -> Option<&str> {
    let at = message.find("in the namespace ")? + "in the namespace ".len();
    let rest = message[at..].trim_start_matches(['\\', '"', '\'']);
    let end = rest.find(['\\', '"', '\''])?;
    Some(&rest[..end])
}

/// Kopf's retries of an event POST (`Request attempt #N/9 failed; will retry: POST .../events
/// -> APIForbiddenError(...)`, ERROR, logger `kopf._core.engines.p`): each POST is tried up to 9
/// times before the `Failed to post an event` line.
fn post_attempt_lines<'a>(ctx: &'a Ctx<'_>) -> Vec<&'a Line> {
    ctx.unattributed
        .iter()
        .filter(|l| {
            let m = &l.record.message;
            m.starts_with("Request attempt #") && m.contains("POST ") && m.contains("/events")
        })
        .collect()
}

/// What dates the operator's event-POST 403s against a fix of its RBAC: the events rule as it
/// is now, when the granting Role/binding was last written, and events the operator posted on
/// the object after the 403s (a POST that went through).
struct Fixed {
    /// The events rule allows the operator now, and how that was learned.
    allowed_now: Option<String>,
    /// The granting objects' latest write (API server clock), when the rules are in evidence.
    granted: Option<rbac::Grant>,
    /// The latest event the operator posted on the object: its time (API server clock) and a
    /// description.
    last_post: Option<(DateTime<Utc>, String)>,
}

impl Fixed {
    fn of(ctx: &Ctx<'_>) -> Fixed {
        let Some(op) = &ctx.operator else {
            return Fixed {
                allowed_now: None,
                granted: None,
                last_post: last_operator_post(ctx, None),
            };
        };
        let account = Account {
            namespace: &op.namespace,
            name: &op.service_account,
        };
        let (group, verbs) = event_needs(op.kind);
        let mut allowed = Vec::new();
        let mut granted: Option<rbac::Grant> = None;
        for verb in verbs {
            let need = Need {
                group,
                resource: "events",
                verb,
                namespace: ctx.ns,
                name: None,
            };
            match rbac::decide(&ctx.snapshot.rbac, account, need) {
                a @ (Answer::Reviewed { allowed: true, .. } | Answer::RulesAllow(_)) => allowed.push(method(&a)),
                _ => {
                    allowed.clear();
                    break;
                }
            }
            let g = rbac::grant(&ctx.snapshot.rbac, account, need);
            granted = match (granted, g) {
                (Some(a), Some(b)) => Some(if b.written > a.written { b } else { a }),
                (a, b) => a.or(b),
            };
        }
        Fixed {
            allowed_now: (!allowed.is_empty()).then(|| allowed.join("; ")),
            granted,
            last_post: last_operator_post(ctx, Some(op.kind)),
        }
    }

    /// Whether a 403 logged at `t` (operator clock) is older than the fix: before the grant's
    /// last write, or followed by a POST that went through (less the skew either way).
    fn predates(&self, t: Option<DateTime<Utc>>, skew: Duration) -> bool {
        let Some(t) = t else { return false };
        self.granted
            .as_ref()
            .and_then(|g| g.written)
            .is_some_and(|w| t + skew < w)
            || self.last_post.as_ref().is_some_and(|(p, _)| t + skew < *p)
    }
}

/// The latest event on the object posted by the operator (Kopf: `reportingComponent`/
/// `source.component` `kopf`; ours: `kubectl-microservice`; either when the kind is unknown).
fn last_operator_post(ctx: &Ctx<'_>, kind: Option<OperatorKind>) -> Option<(DateTime<Utc>, String)> {
    let names: &[&str] = match kind {
        Some(OperatorKind::Kopf) => &["kopf"],
        Some(OperatorKind::Ours) => &[crate::resource::FIELD_MANAGER],
        None => &["kopf", crate::resource::FIELD_MANAGER],
    };
    ctx.own_events
        .iter()
        .filter(|e| {
            let by = e
                .reporting_component
                .as_deref()
                .filter(|c| !c.is_empty())
                .or(e.source.as_ref().and_then(|s| s.component.as_deref()));
            by.is_some_and(|b| names.contains(&b))
        })
        .filter_map(|e| {
            let t = event_time(e)?;
            Some((
                t,
                format!(
                    "event {} type {} reason {} at {} (API server clock): {}",
                    e.metadata.name.as_deref().unwrap_or("?"),
                    e.type_.as_deref().unwrap_or("<none>"),
                    e.reason.as_deref().unwrap_or("<none>"),
                    rfc3339_millis(t),
                    e.message.as_deref().unwrap_or("").chars().take(120).collect::<String>()
                ),
            ))
        })
        .max_by_key(|(t, _)| *t)
}

/// How to check the events rule for the operator and what a grant brings back: the events not
/// posted are lost; the next log records of the object are posted. A restart is a resume: ours
/// writes and posts nothing then (docs/operate.md); Kopf runs only the handlers registered with
/// `@kopf.on.resume`, and posts their log records.
pub(super) fn after_the_grant(ctx: &Ctx<'_>) -> String {
    let Some(op) = &ctx.operator else {
        return "events that failed before are not posted again; the object's next handler run posts again".into();
    };
    let user = format!("system:serviceaccount:{}:{}", op.namespace, op.service_account);
    let (group, verbs) = event_needs(op.kind);
    let resource = if group.is_empty() {
        "events".to_string()
    } else {
        format!("events.{group}")
    };
    let checks: Vec<String> = verbs
        .iter()
        .map(|v| format!("kubectl auth can-i {v} {resource} -n {} --as={user}", ctx.ns))
        .collect();
    let next = match op.kind {
        OperatorKind::Ours => {
            "the object's next handler run posts again (a spec change: an update; a restart is a resume, which writes and posts nothing)"
        }
        OperatorKind::Kopf => {
            "the object's next handler run posts its log records again (a spec change; a restart re-runs only the handlers registered with @kopf.on.resume, and Kopf 1.38 posts their records too)"
        }
    };
    format!(
        "check the rule with {} (it prints yes); events that failed before are not posted again, and {next}",
        checks.join(" and ")
    )
}

pub(super) fn post_failures(ctx: &Ctx<'_>) -> Vec<Finding> {
    let found = post_failure_lines(ctx);
    let attempts = post_attempt_lines(ctx);
    let Some((last, _)) = found.iter().max_by_key(|(l, _)| l.record.time()) else {
        let Some(last) = attempts.last() else { return Vec::new() };
        // Retries that stopped failing once the events rule was granted (a later POST went
        // through, or the grant is newer than every attempt): history, as a 403 given up below.
        let fixed = Fixed::of(ctx);
        if fixed.allowed_now.is_some()
            && attempts
                .iter()
                .all(|l| fixed.predates(l.record.time(), ctx.options.skew))
        {
            let mut evidence = vec![format!("last attempt: {}", last.cite())];
            if let Some(how) = &fixed.allowed_now {
                evidence.push(format!("the events rule allows it now: {how}"));
            }
            if let Some((_, post)) = &fixed.last_post {
                evidence.push(format!("a later POST went through: {post}"));
            }
            return vec![finding(
                FindingId::EventPostFailed,
                Severity::Ok,
                format!(
                    "the operator's event POSTs failed ({}) before the events rule was granted; none failed since",
                    count(attempts.len() as u64, "attempt")
                ),
                evidence,
                None,
            )];
        }
        return vec![finding(
            FindingId::EventPostFailed,
            Severity::Problem,
            format!(
                "the operator's event POSTs are failing ({}, still retrying)",
                count(attempts.len() as u64, "failed attempt")
            ),
            vec![format!("last attempt: {}", last.cite())],
            Some(format!(
                "see the error in the attempt line; for a 403 grant the events rule named by rbac-events, then {}",
                after_the_grant(ctx)
            )),
        )];
    };
    let codes: BTreeSet<String> = found
        .iter()
        .map(|(_, f)| f.code.map_or("no code".into(), |c| c.to_string()))
        .collect();
    let mut evidence = vec![
        format!(
            "{} in the operator's logs, codes: {}",
            count(found.len() as u64, "failed event POST"),
            codes.into_iter().collect::<Vec<_>>().join(", ")
        ),
        format!("last: {}", last.cite()),
    ];
    if let Some(a) = attempts.last() {
        evidence.push(format!(
            "{} before giving up (Kopf tries each POST up to 9 times); last: {}",
            count(attempts.len() as u64, "failed request attempt"),
            a.cite()
        ));
    }
    if let Some(message) = found.iter().rev().find_map(|(_, f)| f.message.clone()) {
        evidence.push(format!("API message: {message}"));
    }
    let forbidden: Vec<&Line> = found
        .iter()
        .filter(|(_, f)| f.code == Some(403))
        .map(|(l, _)| *l)
        .collect();
    let others = found.len() - forbidden.len();
    let title = format!(
        "the operator failed to post {}; it logged and ignored the failure",
        count(found.len() as u64, "event")
    );
    if forbidden.is_empty() {
        return vec![finding(
            FindingId::EventPostFailed,
            Severity::Problem,
            title,
            evidence,
            Some("the POSTs failed for a reason other than RBAC: check the API server's reachability from the operator Pod and its events quota".into()),
        )];
    }
    // A 403 older than the fix of the events rule is history, not a problem now.
    let fixed = Fixed::of(ctx);
    let skew = ctx.options.skew;
    let current: Vec<&&Line> = forbidden
        .iter()
        .filter(|l| !fixed.predates(l.record.time(), skew))
        .collect();
    let mut dating = Vec::new();
    if let Some(how) = &fixed.allowed_now {
        dating.push(format!("the events rule allows it now: {how}"));
    }
    if let Some(g) = &fixed.granted {
        dating.push(match g.written {
            Some(w) => format!(
                "granted by {}, last written at {} (API server clock, managedFields/creationTimestamp)",
                g.by,
                crate::time::rfc3339_seconds(w)
            ),
            None => format!("granted by {} (no write time in evidence)", g.by),
        });
    }
    if let Some((_, post)) = &fixed.last_post {
        dating.push(format!("a later POST went through: {post}"));
    }
    let grant_fix = format!(
        "grant the events rule named by rbac-events (the 403 above), then {}",
        after_the_grant(ctx)
    );
    if fixed.allowed_now.is_some() && current.is_empty() && others == 0 {
        evidence.extend(dating);
        return vec![finding(
            FindingId::EventPostFailed,
            Severity::Ok,
            format!(
                "the operator's {} failed with 403 before the events rule was granted; none failed since",
                count(forbidden.len() as u64, "event POST")
            ),
            evidence,
            None,
        )];
    }
    if fixed.allowed_now.is_some() && others == 0 {
        // Allowed now, yet nothing dates the 403s before the grant (or some come after it).
        evidence.extend(dating);
        let after = current.len() < forbidden.len();
        return vec![finding(
            FindingId::EventPostFailed,
            Severity::Warning,
            if after {
                format!(
                    "{} of the operator's 403s on event POSTs came after the events rule was granted: another namespace or ServiceAccount, or clocks apart?",
                    current.len()
                )
            } else if fixed.granted.as_ref().is_some_and(|g| g.written.is_some()) || fixed.last_post.is_some() {
                format!(
                    "the operator's {} failed with 403, but the events rule allows it now; the grant (or a later POST) is within the clock skew tolerance ({} s) of them, so which came first cannot be told",
                    count(forbidden.len() as u64, "event POST"),
                    skew.num_seconds()
                )
            } else {
                format!(
                    "the operator's {} failed with 403, but the events rule allows it now: probably granted since, though nothing in evidence dates the grant",
                    count(forbidden.len() as u64, "event POST")
                )
            },
            evidence,
            Some(after_the_grant(ctx)),
        )];
    }
    evidence.extend(dating);
    vec![finding(
        FindingId::EventPostFailed,
        Severity::Problem,
        title,
        evidence,
        Some(grant_fix),
    )]
}

#[cfg(test)]
mod tests {
    use super::super::fixture::run;
    use super::*;
    use crate::diagnose::finding::FindingId::*;
    use crate::diagnose::finding::Severity::*;

    /// A 403 for another namespace is not this object's (issue 11 trial re-check).
    #[test]
    fn a_403_names_its_namespace() {
        let kopf = r#"Failed to post an event. Ignoring and continuing. Code: 403. Message: events is forbidden: User "system:serviceaccount:ops:op" cannot create resource "events" in API group "" in the namespace "team-b". Details: {'kind': 'events'}Event: type='Error'"#;
        assert_eq!(forbidden_namespace(kopf), Some("team-b"));
        let ours = r#"message="events.events.k8s.io is forbidden: User \"system:serviceaccount:store:op\" cannot create resource \"events\" in API group \"events.k8s.io\" in the namespace \"store\"""#;
        assert_eq!(forbidden_namespace(ours), Some("store"));
        assert_eq!(forbidden_namespace("connection reset"), None);
    }

    /// The 403s of a real log are `event-post-failed`; a log without failed POSTs says nothing.
    #[test]
    fn failed_posts_in_the_log_are_found() {
        assert_eq!(
            run("bundles/ours-style-rbac", post_failures),
            [(EventPostFailed, Problem)]
        );
        assert_eq!(
            run("bundles-synthetic/rbac-events-403-in-logs", post_failures),
            [(EventPostFailed, Problem)]
        );
        assert_eq!(run("bundles/healthy", post_failures), []);
    }
}
