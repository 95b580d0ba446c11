//! `handler-failing`: the object's handler fails, by the resolved operator's own log lines
//! about the object: its latest outcome a retry or a permanent failure, its error quoted, how
//! many tries since when. A cause (issue 18: "the handler failing (its error)"), listed before
//! why its errors have no events and before the verdict that follows (`accepted-stale`).

use super::{Ctx, Line, finding};
use crate::diagnose::finding::{Finding, FindingId, Severity};
use crate::kopf::messages::{Lifecycle, Outcome};
use crate::kopf::version::{KopfVersion, kopf_version, kopf_version_from_start};
use crate::text::count;
use crate::time::rfc3339_seconds;

/// One handler outcome line about the object: the line, its handler id, outcome and message.
struct Run<'c> {
    line: &'c Line,
    handler: String,
    outcome: Outcome,
    detail: Option<String>,
}

/// The object's handler outcome lines ([`Ctx::lines`], the resolved operator's only), in time
/// order (a line without a time keeps its place in its log).
fn runs<'c>(ctx: &'c Ctx<'_>) -> Vec<Run<'c>> {
    let mut runs: Vec<Run<'c>> = ctx
        .lines
        .iter()
        .filter_map(|line| match line.record.lifecycle() {
            Lifecycle::HandlerOutcome {
                handler,
                outcome,
                detail,
            } if outcome != Outcome::Unknown => Some(Run {
                line,
                handler,
                outcome,
                detail,
            }),
            _ => None,
        })
        .collect();
    if runs.iter().all(|r| r.line.record.time().is_some()) {
        runs.sort_by_key(|r| r.line.record.time());
    }
    runs
}

/// `handler-failing`: when `status` says the handler has not accepted the current spec
/// ([`crate::diagnose::verdict::Judged::not_accepted`]) and the object's latest handler outcome
/// in the resolved operator's logs is a failure: a problem quoting the error, with the tries of
/// that handler since its last success (or since its first run in the logs) and when they
/// began. Nothing when the latest outcome is a success or the logs hold none: the verdict's
/// other reasons, and the operator's findings, say why then.
pub(crate) fn check(ctx: &Ctx<'_>) -> Vec<Finding> {
    if !ctx.judged.not_accepted() {
        return Vec::new();
    }
    let runs = runs(ctx);
    let Some(last) = runs.last() else { return Vec::new() };
    if !matches!(last.outcome, Outcome::Retrying | Outcome::Failed) {
        return Vec::new();
    }
    // The tries of this handler since its last success.
    let streak: Vec<&Run<'_>> = {
        let mine: Vec<&Run<'_>> = runs.iter().filter(|r| r.handler == last.handler).collect();
        let from = mine
            .iter()
            .rposition(|r| r.outcome == Outcome::Succeeded)
            .map_or(0, |at| at + 1);
        mine[from..].to_vec()
    };
    let first = streak.first().copied().unwrap_or(last);
    let error = last
        .detail
        .as_deref()
        .map_or_else(|| "no message in the line".to_string(), |m| format!("\"{m}\""));
    let since = first
        .line
        .record
        .time()
        .map_or_else(String::new, |t| format!(" since {}", rfc3339_seconds(t)));
    let tries = count(streak.len() as u64, "failure");
    let stopped = failed_permanently(&runs);
    let title = match last.outcome {
        // Several handlers of the cycle failed for good: each is named (Kopf's e2e marks count
        // them one by one, `E2E_FAILURE_COUNTS`), the last one's error quoted.
        Outcome::Failed if stopped.len() > 1 => format!(
            "{} failed permanently, not retried for this cause: {}; the last: {error} from '{}'",
            count(stopped.len() as u64, "handler"),
            stopped
                .iter()
                .map(|r| format!("'{}'", r.handler))
                .collect::<Vec<_>>()
                .join(", "),
            last.handler
        ),
        // No parentheses: the short form's fitting drops asides, and the count is the point.
        Outcome::Retrying => format!("{error} from handler '{}': {tries}{since}, retrying", last.handler),
        _ => format!(
            "{error} from handler '{}': {tries}{since}, failed permanently, not retried for this cause",
            last.handler
        ),
    };
    let succeeded = runs
        .iter()
        .rfind(|r| r.handler == last.handler && r.outcome == Outcome::Succeeded);
    let before = match succeeded {
        Some(s) => format!("the last success before it: {}", s.line.cite()),
        None => format!("no success of handler '{}' before it in the logs", last.handler),
    };
    let mut evidence = vec![format!("last failure: {}", last.line.cite())];
    if streak.len() > 1 {
        evidence.push(format!("first of these failures: {}; {before}", first.line.cite()));
    } else {
        evidence.push(before);
    }
    // Another resource's handlers (a Microservice has one, `accept`, whose posting the posting
    // checks say): each permanent failure and how it was posted.
    let resource = &ctx.snapshot.resource;
    let version = started_version(ctx);
    for r in stopped.iter().filter(|_| !resource.is_microservice()) {
        evidence.push(format!(
            "handler '{}' failed permanently: {}; {}",
            r.handler,
            r.line.cite(),
            posted(ctx, r, version.as_ref())
        ));
    }
    let handler = last.handler.split('/').next().unwrap_or(&last.handler);
    let fix = format!(
        "fix what the error names, in the handler or in what it calls; its runs: {}",
        ctx.logs_command_for(handler)
    );
    vec![finding(
        FindingId::HandlerFailing,
        Severity::Problem,
        title,
        evidence,
        Some(fix),
    )]
}

/// The last run of each handler whose last outcome is a permanent failure, in the order of those
/// runs.
fn failed_permanently<'r, 'c>(runs: &'r [Run<'c>]) -> Vec<&'r Run<'c>> {
    let mut last: Vec<&Run<'c>> = Vec::new();
    for r in runs {
        last.retain(|l| l.handler != r.handler);
        last.push(r);
    }
    last.retain(|r| r.outcome == Outcome::Failed);
    last
}

/// The Kopf version the resolved operator's log names in its start line (`Starting Kopf X.Y.Z.`),
/// else its Deployment's pin or image tag; `None` when neither says.
fn started_version(ctx: &Ctx<'_>) -> Option<KopfVersion> {
    ctx.unattributed
        .iter()
        .chain(&ctx.lines)
        .find_map(|l| kopf_version_from_start(&l.record.message))
        .or_else(|| ctx.deployment.and_then(kopf_version))
}

/// How the permanent failure `run` was posted, from the object's own events (its uid): their type and
/// reason, and for a type a `type=Warning` field selector hides (Kopf posts a log record at
/// ERROR as type `Error`, reason `Logging`: `kopf/_core/engines/posting.py`, `K8sPoster.emit`)
/// the command that lists them. None posted: what the Kopf version says of it (from 1.44 log
/// records are posted only with `settings.posting.loggers = True`, `posting.py`'s
/// `K8sPoster.filter`), else that none is in the events read.
fn posted(ctx: &Ctx<'_>, run: &Run<'_>, version: Option<&KopfVersion>) -> String {
    // The event's message is the record's, formatted (a traceback appended, truncated): its
    // first line is the record's.
    let first = |m: &str| m.lines().next().unwrap_or("").trim().to_string();
    let said = first(&run.line.record.message);
    let mine: Vec<_> = ctx
        .own_events
        .iter()
        .filter(|e| !said.is_empty() && e.message.as_deref().is_some_and(|m| first(m) == said))
        .collect();
    let uid = ctx.obj.metadata.uid.as_deref().unwrap_or("UID");
    if let Some(e) = mine.first() {
        let kind = e.type_.as_deref().unwrap_or("(none)");
        let reason = e.reason.as_deref().unwrap_or("(none)");
        let how = format!(
            "posted as {} type {kind} reason {reason}",
            count(mine.len() as u64, "event")
        );
        if matches!(kind, "Normal" | "Warning") {
            return how;
        }
        return format!(
            "{how}, which a `--field-selector type=Warning` (and `kubectl events --types=Warning`) hides: kubectl get events -n {} --field-selector involvedObject.uid={uid},type={kind}",
            ctx.ns
        );
    }
    if ctx.snapshot.events.get().is_none() {
        return "whether it was posted is unknown: the events were not read".into();
    }
    match version {
        Some(v) if !v.posts_log_records_by_default() => format!(
            "not posted: Kopf {} ({}) posts no handler failure as an event unless the operator sets settings.posting.loggers = True in its @kopf.on.startup() handler",
            v.short(),
            v.source
        ),
        _ => format!("no event of it for uid {uid} in the events read"),
    }
}

#[cfg(test)]
mod tests {
    use super::super::ctx::fixture::run;
    use super::*;
    use crate::diagnose::finding::FindingId::*;
    use crate::diagnose::finding::Severity::*;

    /// A handler retrying with no success (8 `failed temporarily`): a problem; a healthy object
    /// (its last run succeeded) has none.
    #[test]
    fn a_retrying_handler_is_failing_and_a_succeeded_one_is_not() {
        assert_eq!(
            run("bundles-synthetic/kopf-1.44-errors-not-posted", check),
            [(HandlerFailing, Problem)]
        );
        assert_eq!(run("bundles/healthy", check), []);
    }

    /// The title quotes the error, counts the tries since the first and says it is retried.
    #[test]
    fn the_title_quotes_the_error_and_counts_the_tries() {
        let snapshot = super::super::ctx::fixture::bundle("bundles-synthetic/kopf-1.44-errors-not-posted");
        let obj = snapshot.microservices.get().unwrap()[0].clone();
        let ctx = Ctx::new(&snapshot, &obj, Default::default());
        let found = check(&ctx);
        assert_eq!(
            found[0].title,
            "\"registry unreachable\" from handler 'accept': 8 failures since 2026-11-29T17:13:32Z, retrying"
        );
        assert!(found[0].evidence[0].contains("line 20"), "{:?}", found[0].evidence);
        assert!(
            found[0]
                .fix
                .as_deref()
                .is_some_and(|f| f.ends_with("logs --handler accept basket-api -n store")),
            "{:?}",
            found[0].fix
        );
    }
}
