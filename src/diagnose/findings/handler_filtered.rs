//! `handler-filtered`: the operator's own handlers do not select the object, by their filters
//! (`labels=`, `annotations=`, `field=`/`value=`, `when=`; [`crate::diagnose::filtered`]). Kopf
//! is then blind to it by design: no handler runs, nothing fails, no event is due. Said as an
//! explanation (`ok`: nothing failed), never as an all-clear: the headline
//! says "Not handled by design", the exit code is 1 (nothing serves the object), the evidence
//! quotes each filter (file:line) and the fix is the change of the object that would include it. When no handler is known to select it and some
//! filter cannot be decided from the source (a callback), a warning naming that filter.

use super::{Ctx, finding};
use crate::diagnose::filtered::{Filtered, describe_all, include_commands};
use crate::diagnose::finding::{Finding, FindingId, Severity};
use crate::diagnose::staleness::Verdict;

/// `handler-filtered`: every resource-changing handler of the resolved Kopf operator excludes
/// the object (`ok`, with the change that includes it); or none is known to select it, some
/// cannot be decided, and the object was never handled (`warning`).
pub(crate) fn check(ctx: &Ctx<'_>) -> Vec<Finding> {
    match &ctx.judged.filtered {
        Filtered::Excluded { operator, handlers } => {
            let evidence = describe_all(handlers);
            let commands: Vec<String> =
                include_commands(&ctx.snapshot.resource.kubectl_type(), ctx.ns, ctx.name, handlers)
                    .into_iter()
                    .map(|(command, at)| format!("{command} (the filters at {at})"))
                    .collect();
            let fix = match commands.as_slice() {
                [] => "nothing to change if that is intended; to have it handled, change the filters quoted above in the operator's source".to_string(),
                _ => format!(
                    "nothing to change if that is intended; to have it handled, give it what a handler selects: {}",
                    commands.join("; or ")
                ),
            };
            vec![finding(
                FindingId::HandlerFiltered,
                Severity::Ok,
                format!(
                    "no handler of {operator} selects {} (its handler filters exclude it), so Kopf ignores it: nothing runs, fails or posts events for it",
                    ctx.key
                ),
                evidence,
                Some(fix),
            )]
        }
        Filtered::Undecided {
            operator,
            unknown,
            handlers,
        } if ctx.judged.assessment.verdict == Verdict::NeverHandled && !ctx.judged.not_accepted() => {
            let mut evidence: Vec<String> = unknown
                .iter()
                .map(|(at, why)| format!("{at}: undecidable ({})", why.join("; ")))
                .collect();
            evidence.extend(describe_all(handlers));
            vec![finding(
                FindingId::HandlerFiltered,
                Severity::Warning,
                format!(
                    "no handler of {operator} is known to select {}: a filter the source does not decide may exclude it",
                    ctx.key
                ),
                evidence,
                Some(format!(
                    "read the filter quoted above; with Kopf's `--verbose`, the operator logs each object it handles: kubectl -n {} logs deployment/{} | grep {}",
                    operator.split('/').next().unwrap_or_default(),
                    operator.rsplit('/').next().unwrap_or_default(),
                    ctx.name
                )),
            )]
        }
        _ => Vec::new(),
    }
}
