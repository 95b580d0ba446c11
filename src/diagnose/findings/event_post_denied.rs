//! `event-post-denied`: the operator's event POSTs are refused by something other than RBAC —
//! an admission webhook, a ValidatingAdmissionPolicy, a ResourceQuota, a namespace being
//! deleted, validation — as the API's own message says ([`crate::diagnose::refusal`]). The
//! finding names the refuser and gives the fix that follows from it; RBAC's grant and its
//! timing (`event-post-failed`, `rbac-events`) have nothing to do with it: the API server
//! authorizes a request before admission sees it.

use super::event_posts::{attempt_denied, refusal, refused_attempt_lines, refused_post_lines};
use super::{Ctx, Line, finding};
use crate::diagnose::finding::{Finding, FindingId, Severity};
use crate::diagnose::refusal::Refusal;
use crate::text::count;

/// `event-post-denied`: a problem when the object's failed event POSTs (or Kopf's retries of
/// them, still going on) were refused by admission, a quota, a terminating namespace or
/// validation; the refuser is the latest refusal's. Nothing when none was.
pub(crate) fn check(ctx: &Ctx<'_>) -> Vec<Finding> {
    let mut denied: Vec<(&Line, Refusal, Option<String>)> = refused_post_lines(ctx)
        .into_iter()
        .filter_map(|(l, f)| {
            let r = refusal(&f).filter(|r| !matches!(r, Refusal::Rbac { .. } | Refusal::Other))?;
            Some((l, r, f.message.clone()))
        })
        .collect();
    let attempts: Vec<(&Line, Refusal)> = refused_attempt_lines(ctx)
        .into_iter()
        .filter_map(|l| attempt_denied(l).map(|r| (l, r)))
        .collect();
    if denied.is_empty() {
        denied.extend(attempts.iter().map(|(l, r)| (*l, r.clone(), None)));
    }
    denied.sort_by_key(|(l, _, _)| l.record.time());
    let Some((last, by, message)) = denied.last() else {
        return Vec::new();
    };
    let mut evidence = vec![
        format!(
            "{} refused by {by} (refusedBy: {}); last: {}",
            count(denied.len() as u64, "event POST"),
            by.kind(),
            last.cite()
        ),
        "the API server authorizes a request before admission sees it: RBAC allowed these POSTs".into(),
    ];
    if let Some(m) = message {
        evidence.push(format!("API message: {m}"));
    }
    if let Some((l, _)) = attempts.last() {
        evidence.push(format!(
            "{} refused the same way (Kopf tries each POST up to 9 times); last: {}",
            count(attempts.len() as u64, "request attempt"),
            l.cite()
        ));
    }
    let others: Vec<String> = denied
        .iter()
        .map(|(_, r, _)| r.to_string())
        .filter(|r| *r != by.to_string())
        .collect();
    if let Some(other) = others.first() {
        evidence.push(format!("earlier refusals by {other} too"));
    }
    vec![finding(
        FindingId::EventPostDenied,
        Severity::Problem,
        format!(
            "the operator's event POSTs are refused by {by}, not by RBAC ({}); it logged and ignored the refusals",
            count(denied.len() as u64, "refusal")
        ),
        evidence,
        by.fix(ctx.ns),
    )]
}
