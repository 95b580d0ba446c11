//! `errors-not-posted`: handler failures only logged, not posted as events: a Kopf operator's
//! `settings.posting.level`, a condition around its posting settings, Kopf ≥ 1.44's
//! `posting.loggers` ([`crate::kopf::posting`]); or, when `rbac-events` or `event-post-failed`
//! explain it, their cause ([`because`]).

use super::posting_facts::{Doubt, Failures, KopfPosting, has_warning_or_error, process_start};
use super::{Ctx, finding};
use crate::diagnose::finding::{Finding, FindingId, Severity};
use crate::evidence::operator::{OperatorKind, OperatorRef};
use crate::text::count;

/// `errors-not-posted`: without an operator in evidence, failures within the TTL with no event
/// and no failed POST; for a Kopf operator that does not turn posting off (that is
/// `posting-disabled`'s), what its source and version say of handler errors ([`kopf`]). Nothing
/// for ours or for a process whose start line says its `--events` (`posting-disabled` says it).
pub(crate) fn check(ctx: &Ctx<'_>) -> Vec<Finding> {
    if process_start(ctx).is_some() {
        return Vec::new();
    }
    let failures = Failures::of(ctx);
    let Some(op) = ctx.handler() else {
        // No operator in evidence: its settings are unknown, the failures are not.
        if !failures.hidden {
            return Vec::new();
        }
        let mut evidence = failures.evidence(ctx);
        evidence.push(
            "the operator's Deployment and source are not in evidence: posting settings and version unknown".into(),
        );
        return vec![finding(
            FindingId::ErrorsNotPosted,
            Severity::Problem,
            "handler errors are only logged: no event was posted for them and no POST failed".into(),
            evidence,
            Some("give the operator (--operator NS/deployment/NAME) to check its posting settings; Kopf before 1.44 posts errors as type Error (reason Logging), from 1.44 only with settings.posting.loggers".into()),
        )];
    };
    if op.kind == OperatorKind::Ours {
        return Vec::new();
    }
    let posting = KopfPosting::of(ctx, op);
    if posting.disabled.is_some() {
        return Vec::new();
    }
    kopf(ctx, op, &posting, &failures).into_iter().collect()
}

/// A Kopf operator's handler errors: unposted (a problem, [`unposted_finding`]) when failures are hidden,
/// or when older or unchecked ones would not have been posted by default (a level above ERROR,
/// `posting.loggers = False`, a Kopf ≥ 1.44 default); a doubt the events could not settle (a
/// warning); else `ok`.
fn kopf(ctx: &Ctx<'_>, op: &OperatorRef, posting: &KopfPosting, failures: &Failures<'_>) -> Option<Finding> {
    // A Kopf that does not post log records by default proves the failures unposted even when
    // their events would have expired by now.
    let loggers_value = posting.loggers_value();
    let unposted_by_default = posting.level_filter.is_some()
        || (posting.undecidable.is_none()
            && (loggers_value == Some(false)
                || (posting.loggers.is_none() && posting.posts_by_default == Some(false))));
    let unposted = failures.hidden || ((failures.expired_only || failures.unchecked) && unposted_by_default);
    if !unposted && failures.unchecked {
        // Failures whose events could not be read: only an undecidable setting is worth saying.
        let u = posting.undecidable.as_ref()?;
        let mut evidence = failures.evidence(ctx);
        evidence.push(posting.version_text.clone());
        evidence.push(u.line());
        evidence.extend(posting.ignored.iter().cloned());
        return Some(finding(
            FindingId::ErrorsNotPosted,
            Severity::Warning,
            format!(
                "handler errors may be only logged: {}, and the events could not be read to check",
                u.doubt.describe(&u.at)
            ),
            evidence,
            Some(format!(
                "list the events with rights to (see caller-cannot-list-events), or make posting explicit around line {} of {}",
                u.at.line, u.at.file
            )),
        ));
    }
    if !unposted {
        let mut evidence = vec![posting.version_text.clone()];
        if posting.no_source {
            evidence.push("operator source: not in evidence (no mounted ConfigMap with .py files)".into());
        }
        evidence.extend(posting.ignored.iter().cloned());
        let title = if failures.expired_only {
            "the handler failures are older than the event TTL: whether they were posted cannot be told from the events (see events-expired)"
        } else {
            "no handler failure went unposted"
        };
        return Some(finding(
            FindingId::ErrorsNotPosted,
            Severity::Ok,
            title.into(),
            evidence,
            None,
        ));
    }
    Some(unposted_finding(ctx, op, posting, failures))
}

/// Handler errors proven unposted: by a level above ERROR, an undecidable setting, or Kopf's
/// `posting.loggers` (set, or its version's default).
fn unposted_finding(ctx: &Ctx<'_>, op: &OperatorRef, posting: &KopfPosting, failures: &Failures<'_>) -> Finding {
    let mut evidence = failures.evidence(ctx);
    evidence.push(posting.version_text.clone());
    let (title, fix) = if let Some((at, level)) = &posting.level_filter {
        evidence.push(format!(
            "{at} (unconditional, in an @kopf.on.startup function): Kopf posts only log records at or above posting.level (kopf/_core/engines/posting.py K8sPoster.filter); handler errors are logged at ERROR (40)"
        ));
        (
            format!(
                "handler errors are not posted: posting.level is {level} at {}:{}, above ERROR (40)",
                at.file, at.line
            ),
            format!(
                "set `settings.posting.level = logging.ERROR` (or lower) at line {} of {}, then restart: kubectl -n {} rollout restart deployment {}",
                at.line, at.file, op.namespace, op.name
            ),
        )
    } else if let Some(u) = &posting.undecidable {
        evidence.push(u.line());
        (
            format!("handler errors are only logged: {}", u.doubt.describe(&u.at)),
            if u.doubt == Doubt::Unparsed {
                format!(
                    "check line {} of {}: it does not parse as Python 3 (is the operator running another Python, or is the ConfigMap cut?); then set posting explicitly in an @kopf.on.startup function",
                    u.at.line, u.at.file
                )
            } else if let Some((_, input)) = u.why.split_once("; ") {
                // The condition reads the env, but the evidence does not give the value: name it.
                format!(
                    "make posting explicit: remove the condition around line {} of {}, or check its input ({input}) in deployment {}/{}",
                    u.at.line, u.at.file, op.namespace, op.name
                )
            } else {
                format!(
                    "make posting explicit: remove the condition around line {} of {} or check its inputs (env of deployment {}/{})",
                    u.at.line, u.at.file, op.namespace, op.name
                )
            },
        )
    } else {
        by_loggers(posting)
    };
    evidence.extend(posting.ignored.iter().cloned());
    finding(
        FindingId::ErrorsNotPosted,
        Severity::Problem,
        title,
        evidence,
        Some(fix),
    )
}

/// Kopf ≥ 1.41: `settings.posting.loggers: bool`, False by default from 1.44 (Kopf's
/// configuration.py). A handler's failure is a log record on its per-object logger, so raising
/// another exception type does not post it; `kopf.warn(...)` posts explicitly. The title and fix
/// by what the source sets and what the version posts by default.
fn by_loggers(posting: &KopfPosting) -> (String, String) {
    let turn_on = "in an @kopf.on.startup function set `settings.posting.loggers = True` (Kopf ≥ 1.41), or post from the handler with `kopf.warn(body, reason=..., message=...)`";
    let loggers_value = posting.loggers_value();
    let label = &posting.label;
    match (posting.posts_by_default, &posting.loggers) {
        (_, Some(at)) if loggers_value == Some(false) => (
            format!(
                "handler errors are only logged — {}:{} sets posting.loggers = False: log records are not posted",
                at.file, at.line
            ),
            format!(
                "post them: set it True at line {} of {}, or post from the handler with `kopf.warn(body, reason=..., message=...)`",
                at.line, at.file
            ),
        ),
        (Some(false), None) => (
            format!("handler errors are only logged — Kopf {label} does not post log records by default"),
            format!("post them: {turn_on}"),
        ),
        (_, Some(at)) => (
            format!(
                "handler errors are only logged although {}:{} sets posting.loggers{}",
                at.file,
                at.line,
                if loggers_value == Some(true) {
                    " = True"
                } else {
                    " (to a value not known before it runs)"
                }
            ),
            format!("check the value it sets ({at}) and posting.level in the same startup handler"),
        ),
        (Some(true), None) => (
            format!("handler errors are only logged although Kopf {label} posts them by default"),
            "check posting.level in the startup handler and whether events expired (--event-ttl)".into(),
        ),
        (None, None) => (
            "handler errors are only logged: Kopf before 1.44 posts them as type Error (reason Logging), from 1.44 not unless posting.loggers".into(),
            format!(
                "pin the Kopf version; from 1.44: {turn_on}; before 1.44 list events without a type filter (type Error)"
            ),
        ),
    }
}

/// `errors-not-posted` when what `rbac-events` and `event-post-failed` found (in `found`)
/// explains it: handler failures within the event TTL, no Warning/Error event on the object,
/// and the operator may not create events (`rbac-events` a problem) or its event POSTs fail
/// (`event-post-failed` not `ok`) or are refused by admission (`event-post-denied`). That is the cause, not the posting settings or the TTL: the
/// finding names it and gives `rbac-events`' fix. `None` when they do not explain it.
pub(crate) fn because(ctx: &Ctx<'_>, found: &[Finding]) -> Option<Finding> {
    ctx.snapshot.events.get()?;
    let recent: Vec<_> = ctx.failures().into_iter().filter(|l| ctx.within_ttl(l)).collect();
    let last = recent.last()?;
    if has_warning_or_error(ctx) {
        return None;
    }
    let rbac = found
        .iter()
        .find(|f| f.id == FindingId::RbacEvents && f.severity == Severity::Problem);
    let posts = found.iter().find(|f| {
        (f.id == FindingId::EventPostDenied && f.severity == Severity::Problem)
            || (f.id == FindingId::EventPostFailed && f.severity != Severity::Ok)
    });
    if rbac.is_none() && posts.is_none() {
        return None;
    }
    let mut evidence = vec![
        format!(
            "{} in the logs for {} within the event TTL, no Warning/Error event on its uid",
            count(recent.len() as u64, "handler failure"),
            ctx.key
        ),
        format!("last failure: {}", last.cite()),
    ];
    evidence.extend(rbac.map(|f| format!("rbac-events: {}", f.title)));
    evidence.extend(posts.map(|f| format!("{}: {}", f.id, f.title)));
    let (title, fix) = match rbac {
        Some(r) => (
            "handler errors are not posted: the operator may not create events (see rbac-events), so their POSTs are refused",
            r.fix.clone(),
        ),
        None if posts.is_some_and(|p| p.id == FindingId::EventPostDenied) => (
            "handler errors are not posted: the operator's event POSTs are refused (see event-post-denied)",
            posts.and_then(|p| p.fix.clone()),
        ),
        None => (
            "handler errors are not posted: the operator's event POSTs fail (see event-post-failed)",
            posts.and_then(|p| p.fix.clone()),
        ),
    };
    let source = match (rbac, posts) {
        (Some(_), _) => "rbac-events",
        (None, Some(p)) => p.id.as_str(),
        (None, None) => "event-post-failed",
    };
    Some(finding(
        FindingId::ErrorsNotPosted,
        Severity::Problem,
        title.into(),
        evidence,
        Some(match fix {
            Some(fix) => format!("{source}'s fix (not posting.level, not the event TTL): {fix}"),
            None => format!("{source}'s fix (not posting.level, not the event TTL)"),
        }),
    ))
}

#[cfg(test)]
mod tests {
    use super::super::ctx::fixture::run;
    use super::*;
    use crate::diagnose::finding::FindingId::*;
    use crate::diagnose::finding::Severity::*;

    /// Kopf 1.44's handler errors not posted are a problem; a healthy operator's are checked
    /// `ok`; a Kopf operator whose posting is off says nothing here (`posting-disabled` does).
    #[test]
    fn errors_only_logged() {
        assert_eq!(
            run("bundles-synthetic/kopf-1.44-errors-not-posted", check),
            [(ErrorsNotPosted, Problem)]
        );
        assert_eq!(run("bundles/healthy", check), [(ErrorsNotPosted, Ok)]);
        assert_eq!(run("bundles/conditional-posting", check), []);
    }
}
