//! `handler-failing`: the object's handler fails, by the resolved operator's own log lines
//! about the object: its latest outcome a retry or a permanent failure, its error quoted, how
//! many tries since when. A cause (issue 18: "the handler failing (its error)"), listed before
//! why its errors have no events and before the verdict that follows (`accepted-stale`).

use super::{Ctx, Line, finding};
use crate::diagnose::finding::{Finding, FindingId, Severity};
use crate::kopf::messages::{Lifecycle, Outcome};
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
    let title = match last.outcome {
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
    let handler = last.handler.split('/').next().unwrap_or(&last.handler);
    let fix = format!(
        "fix what the error names, in the handler or in what it calls; its runs: kubectl microservice logs --handler {handler} {} -n {}",
        ctx.name, ctx.ns
    );
    vec![finding(
        FindingId::HandlerFailing,
        Severity::Problem,
        title,
        evidence,
        Some(fix),
    )]
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
