//! What the operator's logs say about its event POSTs, for `event-post-failed`, `rbac-events`
//! and `errors-not-posted`: the failed POSTs that concern the object, Kopf's retries of them, and
//! what a grant of the events rule brings back.

use std::collections::BTreeSet;

use super::{Ctx, Line};
use crate::diagnose::rbac::event_needs;
use crate::diagnose::refusal::Refusal;
use crate::evidence::operator::OperatorKind;
use crate::kopf::messages::{EventPostFailure, Lifecycle};

/// What a failed event POST (or a retry of one) is tied to (issue 18 D3: only the POSTs of
/// events whose involvedObject is this object count for it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Tie {
    /// This object's: its own line (ours logs `[ns/name] Failed to post an event: ...`), or a
    /// Kopf line whose event's message is the message of this object's record before it in the
    /// same log, and of no other object's (Kopf posts a record's message as its event's).
    This,
    /// Another object's (`ns/name`), or another namespace's events (`namespace NS`).
    Other(String),
    /// Nothing ties it to one object: why, in words.
    Untied(String),
}

/// What Kopf's `Failed to post an event ... Event: type=..., reason=..., message='...'` line
/// `l` (which names no object: Kopf logs it from `kopf._core.engines.posting`) is tied to
/// ([`Tie`]): a 403 for another namespace's events is that namespace's; else the records of the
/// same log before it whose message is the event's message, when they name one object.
pub(crate) fn tie(ctx: &Ctx<'_>, l: &Line, f: &EventPostFailure) -> Tie {
    let text = f.message.as_deref().unwrap_or(&l.record.message);
    if let Some(ns) = forbidden_namespace(text).filter(|ns| *ns != ctx.ns) {
        return Tie::Other(format!("namespace {ns}"));
    }
    let Some(message) = f.event_message.as_deref() else {
        return Tie::Untied("the line names no object and no event message".into());
    };
    let said: BTreeSet<(bool, &str)> = ctx
        .named
        .iter()
        .filter(|n| n.pod == l.pod && n.line < l.record.line_number && n.message == message)
        .map(|n| (n.this, n.key.as_str()))
        .collect();
    match said.iter().collect::<Vec<_>>().as_slice() {
        // An event the handler posted itself (`kopf.warn(...)`, no log record of it): tied
        // by the one object's `ns/name` its message names, if any.
        [] => match named_keys(ctx, message).as_slice() {
            [key] if *key == ctx.key => Tie::This,
            [key] => Tie::Other(key.clone()),
            _ if only_object_of_namespace(ctx) => Tie::This,
            _ => Tie::Untied(format!(
                "no record before it in {} says its event's message, which names no one object",
                l.pod
            )),
        },
        [(true, _)] => Tie::This,
        [(false, key)] => Tie::Other((*key).to_string()),
        several => Tie::Untied(format!(
            "{} records of objects say its event's message ({})",
            several.len(),
            several.iter().map(|(_, k)| *k).collect::<Vec<_>>().join(", ")
        )),
    }
}

/// Whether this object is the only object of its namespace the operator's logs name (and they
/// name it): Kopf posts events only about the objects it handles, so a POST to the namespace's
/// events that nothing else ties is then this object's.
fn only_object_of_namespace(ctx: &Ctx<'_>) -> bool {
    let prefix = format!("{}/", ctx.ns);
    let mut of_namespace = ctx.named.iter().filter(|n| n.key.starts_with(&prefix)).peekable();
    of_namespace.peek().is_some() && of_namespace.all(|n| n.this)
}

/// The objects (`ns/name`: this one, and those the logs name) whose key `message` names as a
/// word: not inside a longer name (`todo/todo-api` is not named by `todo/todo-api-2`; a
/// sentence's final `.` ends it).
fn named_keys(ctx: &Ctx<'_>, message: &str) -> Vec<String> {
    let keys: BTreeSet<&str> = ctx
        .named
        .iter()
        .map(|n| n.key.as_str())
        .chain(std::iter::once(ctx.key.as_str()))
        .collect();
    let name_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '/' | '_');
    let bounded = |at: usize, key: &str| {
        let before = message[..at].chars().next_back();
        let mut after = message[at + key.len()..].chars();
        let ends = match after.next() {
            None => true,
            Some('.') => after.next().is_none_or(|c| !name_char(c)),
            Some(c) => !name_char(c),
        };
        before.is_none_or(|c| !name_char(c)) && ends
    };
    keys.into_iter()
        .filter(|key| message.match_indices(key).any(|(at, _)| bounded(at, key)))
        .map(str::to_string)
        .collect()
}

/// The Kopf failed-POST lines without an object, each with what it is tied to ([`tie`]).
fn unattributed_failures<'a>(ctx: &'a Ctx<'_>) -> Vec<(&'a Line, EventPostFailure, Tie)> {
    ctx.unattributed
        .iter()
        .filter_map(|l| match l.record.lifecycle() {
            Lifecycle::EventPostFailed(f) => {
                let t = tie(ctx, l, &f);
                Some((l, f, t))
            }
            _ => None,
        })
        .collect()
}

/// The failed event POSTs of this object's events: its own lines, and Kopf's lines without an
/// object that are tied to it ([`Tie::This`]); never a POST for another object or namespace,
/// nor one nothing ties to an object ([`untied_post_failures`]).
pub(crate) fn post_failure_lines<'a>(ctx: &'a Ctx<'_>) -> Vec<(&'a Line, EventPostFailure)> {
    ctx.lines
        .iter()
        .filter_map(|l| match l.record.lifecycle() {
            Lifecycle::EventPostFailed(f) => Some((l, f)),
            _ => None,
        })
        .chain(
            unattributed_failures(ctx)
                .into_iter()
                .filter(|(_, _, t)| *t == Tie::This)
                .map(|(l, f, _)| (l, f)),
        )
        .collect()
}

/// The failed event POSTs that may be this object's: [`post_failure_lines`] and those of its
/// namespace that nothing ties to one object ([`Tie::Untied`]), never another object's or
/// another namespace's. What a refusal of the namespace's POSTs is read from (who refuses
/// them: RBAC, an admission webhook), which holds for every object there; a count of the
/// object's failed POSTs reads [`post_failure_lines`] alone.
pub(crate) fn refused_post_lines<'a>(ctx: &'a Ctx<'_>) -> Vec<(&'a Line, EventPostFailure)> {
    let mut lines = post_failure_lines(ctx);
    lines.extend(untied_post_failures(ctx).into_iter().map(|(l, f, _)| (l, f)));
    lines
}

/// The failed event POSTs of the object's namespace that nothing ties to one object
/// ([`Tie::Untied`]), with why: not counted for the object, said when they are all there is.
pub(crate) fn untied_post_failures<'a>(ctx: &'a Ctx<'_>) -> Vec<(&'a Line, EventPostFailure, String)> {
    unattributed_failures(ctx)
        .into_iter()
        .filter_map(|(l, f, t)| match t {
            Tie::Untied(why) => Some((l, f, why)),
            _ => None,
        })
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
/// -> APIForbiddenError(...)`, ERROR, logger `kopf._core.engines.p`) of the object's namespace's
/// events (`/namespaces/NS/events`, and a 403 naming no other namespace), each with what it is
/// tied to: Kopf posts one event at a time and tries each POST up to 9 times before its `Failed
/// to post an event` line, so a retry is the next such line's in its log ([`tie`]); a retry with
/// none after it (still retrying) is tied to nothing.
fn attempts<'a>(ctx: &'a Ctx<'_>) -> Vec<(&'a Line, Tie)> {
    let failures = unattributed_failures(ctx);
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
        .map(|l| {
            let next = failures
                .iter()
                .filter(|(f, _, _)| f.pod == l.pod && f.record.line_number > l.record.line_number)
                .min_by_key(|(f, _, _)| f.record.line_number);
            let t = match next {
                Some((_, _, t)) => t.clone(),
                None if only_object_of_namespace(ctx) => Tie::This,
                None => Tie::Untied(
                    "a retry with no `Failed to post an event` line after it, in a log that names several objects of the namespace"
                        .into(),
                ),
            };
            (l, t)
        })
        .collect()
}

/// The retries of this object's event POSTs ([`attempts`] tied to it).
pub(crate) fn post_attempt_lines<'a>(ctx: &'a Ctx<'_>) -> Vec<&'a Line> {
    attempts(ctx)
        .into_iter()
        .filter(|(_, t)| *t == Tie::This)
        .map(|(l, _)| l)
        .collect()
}

/// The retries that may be this object's POSTs' ([`post_attempt_lines`] and the untied ones,
/// [`refused_post_lines`]'s rule), in log order.
pub(crate) fn refused_attempt_lines<'a>(ctx: &'a Ctx<'_>) -> Vec<&'a Line> {
    attempts(ctx)
        .into_iter()
        .filter(|(_, t)| !matches!(t, Tie::Other(_)))
        .map(|(l, _)| l)
        .collect()
}

/// The retries of event POSTs in the object's namespace that nothing ties to one object, with
/// why.
pub(crate) fn untied_attempt_lines<'a>(ctx: &'a Ctx<'_>) -> Vec<(&'a Line, String)> {
    attempts(ctx)
        .into_iter()
        .filter_map(|(l, t)| match t {
            Tie::Untied(why) => Some((l, why)),
            _ => None,
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
