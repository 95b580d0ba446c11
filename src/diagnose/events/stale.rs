//! `accepted-stale`: `status`'s verdict for the object ([`crate::diagnose::staleness`]), when it
//! says that the handler has not accepted the current spec.

use super::{Ctx, finding};
use crate::diagnose::cycles::log_facts;
use crate::diagnose::finding::{Finding, FindingId, Severity};
use crate::diagnose::staleness::{self, LogFacts, Verdict};

/// `status`'s assessment of the object, as `status` makes it (the same facts and order).
pub(super) fn verdict_of(ctx: &Ctx<'_>) -> staleness::Assessment {
    let facts = log_facts(ctx.snapshot);
    let unavailable = LogFacts::Unavailable("operator logs: none".into());
    let a = staleness::assess(
        ctx.obj,
        facts.get(&ctx.key).unwrap_or(&unavailable),
        staleness::Options {
            skew: ctx.options.skew,
            now: ctx.now,
            operators: None,
        },
    );
    staleness::with_pruned_status(
        a,
        ctx.obj,
        crate::diagnose::cycles::pruned_fields(ctx.snapshot).get(&ctx.key),
    )
}

/// `accepted-stale`: `status`'s verdict for the object, when it says that the handler has not
/// accepted the current spec (`stale`, or `never-handled` while a handler tries: Kopf's
/// progress annotation or a retry in the logs or events) — the same assessment `status` makes
/// ([`staleness::assess`] over [`log_facts`]), so the two commands never disagree. Its title
/// names the verdict and its first reason (a retry, a failed last cycle, the changed fields).
/// A never-handled object that nothing tried is not this finding (the operator findings say
/// why nothing handles it); a pending deletion is `deletion-pending`'s.
pub(super) fn stale(ctx: &Ctx<'_>) -> Vec<Finding> {
    let a = verdict_of(ctx);
    let Some(first) = a.reasons.first() else {
        return Vec::new();
    };
    // The dropped status is `status-pruned`'s finding (first, as status's first reason).
    if first.code == "status-pruned" {
        return Vec::new();
    }
    let facts = log_facts(ctx.snapshot);
    let unavailable = LogFacts::Unavailable("operator logs: none".into());
    let logs = facts.get(&ctx.key).unwrap_or(&unavailable);
    let tried = match logs {
        LogFacts::Read { last_retry, .. } => last_retry.is_some(),
        LogFacts::Unavailable(_) => false,
    } || first
        .evidence
        .iter()
        .any(|e| e.starts_with("kopf.zalando.org/") || e.contains(" tries for purpose "));
    let counts = match a.verdict {
        Verdict::Stale => true,
        Verdict::NeverHandled => tried,
        _ => false,
    };
    if !counts {
        return Vec::new();
    }
    let verdict = a.verdict.as_str();
    let title = match first.code {
        "retrying" => {
            format!("the handler is failing and being retried for the current spec (status: {verdict} [retrying])")
        }
        "never-handled" => {
            format!("the handler has tried and not yet succeeded for this object (status: {verdict} [never-handled])")
        }
        "last-handling-failed" => {
            format!("the handler's last cycle for the current spec failed (status: {verdict} [last-handling-failed])")
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
    vec![finding(
        FindingId::AcceptedStale,
        Severity::Problem,
        title,
        evidence,
        Some(format!(
            "see the handler's runs and their errors: kubectl microservice logs --handler accept {} -n {}",
            ctx.name, ctx.ns
        )),
    )]
}
