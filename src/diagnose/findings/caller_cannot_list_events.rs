//! `caller-cannot-list-events`: the caller may not list events in the object's namespace, so
//! whether Warnings were posted is not known.

use super::{Ctx, finding};
use crate::diagnose::finding::{Finding, FindingId, Severity};
use crate::diagnose::rbac;
use crate::evidence::GapReason;

/// `caller-cannot-list-events`: the events are a Forbidden gap: a warning, with the Role rule to
/// ask for.
pub(crate) fn check(ctx: &Ctx<'_>) -> Vec<Finding> {
    match ctx.snapshot.events.gap() {
        Some(gap) if matches!(gap.reason, GapReason::Forbidden(_)) => vec![finding(
            FindingId::CallerCannotListEvents,
            Severity::Warning,
            format!("you cannot list events in {}: whether events exist is unknown", ctx.ns),
            vec![gap.to_string()],
            Some(format!(
                "ask for this rule in a Role bound to you in {}:\n{}",
                ctx.ns,
                rbac::rule_yaml("", "events", &["get", "list"])
            )),
        )],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::ctx::fixture::run;
    use super::*;
    use crate::diagnose::finding::FindingId::*;
    use crate::diagnose::finding::Severity::*;

    /// Events the caller may not list: a warning; none for a healthy object.
    #[test]
    fn events_the_caller_may_not_list() {
        assert_eq!(
            run("bundles-synthetic/caller-cannot-list-events", check),
            [(CallerCannotListEvents, Warning)]
        );
        assert_eq!(run("bundles/healthy", check), []);
    }
}
