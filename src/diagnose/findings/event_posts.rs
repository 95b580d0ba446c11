//! What the operator's logs say about its event POSTs, for `event-post-failed`, `rbac-events`
//! and `errors-not-posted`: the failed POSTs that concern the object, Kopf's retries of them, and
//! what a grant of the events rule brings back.

use super::{Ctx, Line};
use crate::diagnose::rbac::event_needs;
use crate::diagnose::refusal::Refusal;
use crate::evidence::operator::OperatorKind;
use crate::kopf::messages::{EventPostFailure, Lifecycle};

/// The failed event POSTs that concern this object: its own lines, and lines without an object
/// (Kopf logs `Failed to post an event ...` from `kopf._core.engines.posting`, with no
/// `[ns/name]` prefix) unless their API message names another namespace (`... in the namespace
/// "other"`): an operator serving several namespaces fails there for other objects.
pub(crate) fn post_failure_lines<'a>(ctx: &'a Ctx<'_>) -> Vec<(&'a Line, EventPostFailure)> {
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

/// Who refused a failed POST, from the API's Status as logged ([`Refusal::classify`]); `None`
/// for a failure that is no API refusal (no code and no message: a lost connection, a timeout).
pub(crate) fn refusal(f: &EventPostFailure) -> Option<Refusal> {
    if f.code.is_none() && f.message.is_none() {
        return None;
    }
    Some(Refusal::classify(f.code, None, f.message.as_deref().unwrap_or("")))
}

/// Whether something other than RBAC refused the POST (an admission webhook or policy, a
/// quota, a terminating namespace, validation): `event-post-denied`'s, never RBAC's.
pub(crate) fn denied_by_admission(f: &EventPostFailure) -> bool {
    refusal(f).is_some_and(|r| !matches!(r, Refusal::Rbac { .. } | Refusal::Other))
}

/// Whether a failed POST is a 403 of RBAC's (`cannot create resource ...`, or a 403 whose
/// message names no other refuser): what `rbac-events` and the grant timing read.
pub(crate) fn rbac_403(f: &EventPostFailure) -> bool {
    f.code == Some(403) && !denied_by_admission(f)
}

/// The refusal a Kopf retry line names (`... -> APIForbiddenError('MESSAGE', {...})`), when it
/// names one other than RBAC's.
pub(crate) fn attempt_denied(l: &Line) -> Option<Refusal> {
    let m = &l.record.message;
    let code = if m.contains("APIForbiddenError") {
        Some(403)
    } else {
        None
    };
    Some(Refusal::classify(code, None, m)).filter(|r| !matches!(r, Refusal::Rbac { .. } | Refusal::Other))
}

/// Kopf's retries of an event POST (`Request attempt #N/9 failed; will retry: POST .../events
/// -> APIForbiddenError(...)`, ERROR, logger `kopf._core.engines.p`): each POST is tried up to 9
/// times before the `Failed to post an event` line. Only POSTs to the object's namespace's
/// events (`/namespaces/NS/events`, and a 403 naming no other namespace): a POST to another
/// namespace's events is about another object (issue 18, facts scoped).
pub(crate) fn post_attempt_lines<'a>(ctx: &'a Ctx<'_>) -> Vec<&'a Line> {
    ctx.unattributed
        .iter()
        .filter(|l| {
            let m = &l.record.message;
            m.starts_with("Request attempt #")
                && m.contains("POST ")
                && m.contains("/events")
                && posted_namespace(m).is_none_or(|ns| ns == ctx.ns)
                && forbidden_namespace(m).is_none_or(|ns| ns == ctx.ns)
        })
        .collect()
}

/// The namespace of the events collection a POST's URL names: `POST
/// https://.../api/v1/namespaces/NS/events -> ...` → `NS`.
fn posted_namespace(message: &str) -> Option<&str> {
    let url = &message[message.find("POST ")?..];
    let at = url.find("/namespaces/")? + "/namespaces/".len();
    let rest = &url[at..];
    let end = rest.find('/')?;
    rest[end..].starts_with("/events").then_some(&rest[..end])
}

/// How to check the events rule for the operator and what a grant brings back: the events not
/// posted are lost; the next log records of the object are posted. A restart is a resume: ours
/// writes and posts nothing then (docs/operate.md); Kopf runs only the handlers registered with
/// `@kopf.on.resume`, and posts their log records.
pub(crate) fn after_the_grant(ctx: &Ctx<'_>) -> String {
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
            "the object's next handler run on a spec change posts again (a restart's resume posts nothing)"
        }
        OperatorKind::Kopf => {
            "the object's next handler run posts its records again (a spec change; a restart re-runs only @kopf.on.resume handlers, whose records Kopf 1.38 posts too)"
        }
    };
    format!(
        "check the rule with {} (it prints yes); events that failed before are not posted again, and {next}",
        checks.join(" and ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A retried POST to another namespace's events is not this object's (issue 18).
    #[test]
    fn a_post_names_the_namespace_of_its_events() {
        let kopf = r#"Request attempt #1/9 failed; will retry: POST https://kubernetes.default.svc/api/v1/namespaces/kms-tr-norbac/events -> APIForbiddenError('events is forbidden')"#;
        assert_eq!(posted_namespace(kopf), Some("kms-tr-norbac"));
        let group = "Request attempt #2/9 failed; will retry: POST https://h/apis/events.k8s.io/v1/namespaces/store/events -> x";
        assert_eq!(posted_namespace(group), Some("store"));
        assert_eq!(
            posted_namespace(
                "Request attempt #1/9 failed; will retry: POST https://h/api/v1/namespaces/store/pods -> x"
            ),
            None
        );
        assert_eq!(posted_namespace("no url"), None);
    }

    /// A 403 for another namespace is not this object's (issue 11 trial re-check).
    #[test]
    fn a_403_names_its_namespace() {
        let kopf = r#"Failed to post an event. Ignoring and continuing. Code: 403. Message: events is forbidden: User "system:serviceaccount:ops:op" cannot create resource "events" in API group "" in the namespace "team-b". Details: {'kind': 'events'}Event: type='Error'"#;
        assert_eq!(forbidden_namespace(kopf), Some("team-b"));
        let ours = r#"message="events.events.k8s.io is forbidden: User \"system:serviceaccount:store:op\" cannot create resource \"events\" in API group \"events.k8s.io\" in the namespace \"store\"""#;
        assert_eq!(forbidden_namespace(ours), Some("store"));
        assert_eq!(forbidden_namespace("connection reset"), None);
    }
}
