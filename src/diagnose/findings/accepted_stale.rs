//! `accepted-stale`: `status`'s verdict for the object ([`crate::diagnose::staleness`]), when it
//! says that the handler has not accepted the current spec.

use k8s_openapi::api::core::v1::Pod;

use super::operator_facts::{container_running, pod_state, selected};
use super::{Ctx, finding};
use crate::diagnose::finding::{Finding, FindingId, Severity};
use crate::evidence::operator::OperatorKind;

/// `accepted-stale`: `status`'s verdict for the object, when it says that the handler has not
/// accepted the current spec (`stale`, or `never-handled` while a handler tries: Kopf's
/// progress annotation or a retry in the logs or events) — the same assessment `status` makes
/// ([`crate::diagnose::verdict::Judged::not_accepted`]), so the two commands never disagree. Its title
/// names the verdict and its first reason (a retry, a failed last cycle, the changed fields).
/// A never-handled object that nothing tried is not this finding (the operator findings say
/// why nothing handles it); a pending deletion is `deletion-pending`'s. Its fix is [`fix`]'s.
pub(crate) fn check(ctx: &Ctx<'_>) -> Vec<Finding> {
    let a = &ctx.judged.assessment;
    if !ctx.judged.not_accepted() {
        return Vec::new();
    }
    let Some(first) = a.reasons.first() else {
        return Vec::new();
    };
    let verdict = a.verdict.as_str();
    let title = match first.code {
        "retrying" => {
            // Not "for the current spec": the headline says it (issue 20: nothing said twice).
            format!("the handler is failing and being retried (status: {verdict} [retrying])")
        }
        "never-handled" => {
            format!("the handler's runs have not yet succeeded for this object (status: {verdict} [never-handled])")
        }
        "last-handling-failed" => {
            format!("the handler's last cycle failed (status: {verdict} [last-handling-failed])")
        }
        // Issue 11 item 6: the operator alive but not handling; the reason says what the logs show.
        code @ ("handler-running" | "nothing-logged-since-change") => {
            format!("{} (status: {verdict} [{code}])", first.message)
        }
        code if ctx.obj.phase() == Some("Accepted") => {
            format!("status.phase says Accepted, but not for the spec the object has now (status: {verdict} [{code}])")
        }
        code => format!("the status is not the handling of the current spec (status: {verdict} [{code}])"),
    };
    let mut evidence: Vec<String> = a
        .changed_fields
        .iter()
        .map(|c| format!("{}: {} → {} (handled → now)", c.field, c.old, c.new))
        .collect();
    for r in &a.reasons {
        evidence.push(format!("{} [{}]", r.message, r.code));
        evidence.extend(r.evidence.iter().cloned());
    }
    if matches!(first.code, "handler-running" | "nothing-logged-since-change") {
        evidence.extend(not_handling(ctx, first.code).0);
    }
    vec![finding(
        FindingId::AcceptedStale,
        Severity::Problem,
        title,
        evidence,
        Some(fix(ctx, None)),
    )]
}

/// The fix of `accepted-stale`, by its first reason. For an operator alive but not handling
/// (`handler-running`, `nothing-logged-since-change`), what [`not_handling`] allows; else the
/// handler's runs in `logs --handler`, or, without the operator's logs, what gets them. When an
/// operator problem `blocking` (`operator-not-running`, `-leading`, `-watching`) keeps it from
/// handling, that finding and its fix, not a restart.
pub(crate) fn fix(ctx: &Ctx<'_>, blocking: Option<FindingId>) -> String {
    let code = ctx.judged.assessment.reasons.first().map_or("", |r| r.code);
    match code {
        "handler-running" | "nothing-logged-since-change" => match blocking {
            Some(id) => {
                format!("the operator is kept from handling: {id} says why, and its fix (a restart alone does not)")
            }
            None => not_handling(ctx, code).1,
        },
        // `logs --handler` needs the operator's logs: without them, what gets them.
        _ => match ctx.snapshot.handler_logs_missing(ctx.resolution()) {
            Some(why) => match blocking {
                Some(id) => format!(
                    "the handler's runs are in the operator's logs, and none is in evidence ({why}): {id} says why the operator does not handle, and its fix; its logs then hold the runs"
                ),
                None => format!(
                    "the handler's runs are in the operator's logs, and none is in evidence ({why}): {}",
                    crate::evidence::NO_LOGS_GET_THEM
                ),
            },
            None => format!("see the handler's runs and their errors: {}", ctx.logs_command()),
        },
    }
}

/// For an operator alive but not handling (`handler-running`, `nothing-logged-since-change`):
/// the state of the resolved operator's Pods (a Running Pod that logs nothing for the object is
/// alive but not handling), and the fix the reason allows.
///
/// - An open run: the handler waits on something (or loops). Kopf 1.38's `timeout=` option of
///   a handler is checked only before each attempt (`kopf/_core/actions/execution.py`:
///   `HandlerTimeoutError` when `runtime >= timeout` at invocation) and never interrupts a
///   running one, so the fix is in the handler: bound what it awaits and raise
///   `kopf.TemporaryError` so that Kopf retries. A restart frees the stuck run, but Kopf runs
///   the update again for the same spec.
/// - Nothing logged: the cause is not in the evidence (a frozen process, a stalled watch, or a
///   handler that runs without logging at INFO); the fix says how to tell them apart and that a
///   restart handles the change (Kopf runs the update at start when the spec differs from its
///   last-handled record; ours reconciles every object at start).
fn not_handling(ctx: &Ctx<'_>, code: &str) -> (Vec<String>, String) {
    let Some(op) = ctx.handler() else {
        return (
            Vec::new(),
            format!("see what the operator logged: {}", ctx.logs_command()),
        );
    };
    let mine: Vec<&Pod> = ctx
        .snapshot
        .operator
        .pods
        .get()
        .into_iter()
        .flatten()
        .filter(|p| selected(ctx.deployment, p))
        .collect();
    let running: Vec<&str> = mine
        .iter()
        .filter(|p| container_running(p, &op.container))
        .filter_map(|p| p.metadata.name.as_deref())
        .collect();
    let mut states: Vec<String> = mine.iter().map(|p| pod_state(p, &op.container)).collect();
    if !running.is_empty() {
        let what = if code == "handler-running" {
            "while the run is open: the operator is alive, its handler has not returned"
        } else {
            "while nothing was logged for the object: the operator is alive but not handling it"
        };
        states.push(format!("{} Running {what}", running.join(", ")));
    }
    let pod = running.first().copied().unwrap_or("POD");
    let restart = format!("kubectl -n {} rollout restart deployment/{}", op.namespace, op.name);
    let fix = match (code, op.kind) {
        ("handler-running", OperatorKind::Kopf) => format!(
            "the handler does not return: bound what it waits on (`await asyncio.wait_for(call, timeout=30)`, a client timeout) and raise `kopf.TemporaryError` on timeout so that Kopf retries; Kopf's `timeout=` handler option is checked only before each retry and does not stop a running attempt (Kopf 1.38). Restarting frees the stuck run, but Kopf runs the update again for the same spec: {restart}"
        ),
        ("handler-running", _) => format!(
            "the handler does not return: see what it waits on in its log ({}); restarting frees the run: {restart}",
            ctx.logs_command()
        ),
        (_, OperatorKind::Kopf) => format!(
            "the cause is not in the evidence: a frozen process (`kubectl -n {ns} exec {pod} -- grep State /proc/1/status` says `T (stopped)`), a stalled watch, or a handler that Kopf does not log at INFO (run Kopf with `--verbose` to log each handler's start); a restart handles the change (Kopf runs the update at start, the spec differing from its last-handled record): {restart}",
            ns = op.namespace
        ),
        _ => format!(
            "the cause is not in the evidence (a frozen process or a stalled watch: the Pod's readiness probe fails when the watch is down); a restart handles the change (the operator reconciles every object at start): {restart}"
        ),
    };
    (states, fix)
}

#[cfg(test)]
mod tests {
    use super::super::ctx::fixture::run;
    use super::*;
    use crate::diagnose::finding::FindingId::*;
    use crate::diagnose::finding::Severity::*;

    /// A failed last cycle is `accepted-stale`; a fresh object is not.
    #[test]
    fn a_spec_not_accepted_is_stale() {
        assert_eq!(run("bundles/failed-cycle", check), [(AcceptedStale, Problem)]);
        assert_eq!(run("bundles/healthy", check), []);
    }
}
