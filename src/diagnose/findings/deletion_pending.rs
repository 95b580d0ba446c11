//! `deletion-pending`: the object is Terminating and finalizers hold it
//! ([`crate::diagnose::deletion`] has the facts).

use super::{Ctx, finding};
use crate::diagnose::finding::{Finding, FindingId, Severity};

/// `deletion-pending`: the object has a deletionTimestamp and finalizers hold it (the same facts
/// as `status`'s `terminating` verdict). A problem when a finalizer's owner is not running (nothing
/// will remove it), else a warning.
pub(crate) fn check(ctx: &Ctx<'_>) -> Vec<Finding> {
    let operators = ctx
        .snapshot
        .operator
        .deployments
        .get()
        .map(|_| ctx.snapshot.operator.operators());
    let Some(pending) = crate::diagnose::deletion::pending(
        &ctx.snapshot.resource.kubectl_type(),
        ctx.obj,
        ctx.now,
        operators.as_deref(),
    ) else {
        return Vec::new();
    };
    let severity = if pending.finalizers.iter().any(|f| f.owner_running == Some(false)) {
        Severity::Problem
    } else {
        Severity::Warning
    };
    vec![finding(
        FindingId::DeletionPending,
        severity,
        pending.message(),
        pending.evidence(ctx.obj),
        pending.fix(),
    )]
}

#[cfg(test)]
mod tests {
    use super::super::ctx::fixture::run;
    use super::*;
    use crate::diagnose::finding::FindingId::*;
    use crate::diagnose::finding::Severity::*;

    /// Kopf's finalizer left behind by a removed operator holds the deletion: a problem.
    #[test]
    fn a_finalizer_without_its_operator_holds_the_deletion() {
        assert_eq!(
            run("bundles-captured/kopf-finalizer-terminating", check),
            [(DeletionPending, Problem)]
        );
        assert_eq!(run("bundles/healthy", check), []);
    }
}
