//! `posting-disabled`: whether the operator posts events at all: our `--events` flag (the
//! Deployment's args, or a process's own `Operator started` line); Kopf's
//! `settings.posting.enabled` in its source ([`crate::kopf::posting`]).

use super::posting_facts::{Failures, KopfPosting, process_start, sources};
use super::{Ctx, finding};
use crate::diagnose::finding::{Finding, FindingId, Severity};
use crate::evidence::operator::{OperatorKind, OperatorRef};
use crate::kopf::source::{Module, SourceLine, edit};

/// `posting-disabled`: for a process outside the cluster, its start line's `events=`; for a
/// Deployment of ours, its `--events`; for a Kopf operator, a `settings.posting.enabled = False`
/// that holds. A problem when off, said as what it hides ([`hides`]); `ok` when ours posts.
pub(crate) fn check(ctx: &Ctx<'_>) -> Vec<Finding> {
    let found = match process(ctx) {
        Some(found) => Some(found),
        None => match ctx.handler() {
            Some(op) if op.kind == OperatorKind::Ours => Some(ours(op)),
            Some(op) => kopf(ctx, op, &KopfPosting::of(ctx, op)),
            None => None,
        },
    };
    found.map(|f| hides(ctx, f)).into_iter().collect()
}

/// A process outside the cluster, by its own log's `Operator started` line.
fn process(ctx: &Ctx<'_>) -> Option<Finding> {
    let (started, events) = process_start(ctx)?;
    let evidence = vec![format!("its start line: {}", started.cite())];
    Some(if events == "none" {
        finding(
            FindingId::PostingDisabled,
            Severity::Problem,
            format!("{} posts no events (`--events none`)", ctx.resolution().label()),
            evidence,
            Some("restart it with `--events all` (or `warnings`)".into()),
        )
    } else {
        finding(
            FindingId::PostingDisabled,
            Severity::Ok,
            format!("{} posts events (--events {events})", ctx.resolution().label()),
            evidence,
            None,
        )
    })
}

/// A Deployment of ours, by its `--events` argument (unset: `all`).
fn ours(op: &OperatorRef) -> Finding {
    let flag = op.flag("--events");
    let evidence = vec![format!(
        "Deployment {} args: --events {}",
        op.display(),
        flag.unwrap_or("(unset: all)")
    )];
    if flag == Some("none") {
        finding(
            FindingId::PostingDisabled,
            Severity::Problem,
            "the operator posts no events (`--events none`)".into(),
            evidence,
            Some(format!(
                "set `--events all` (or `warnings`): kubectl -n {} edit deployment {}",
                op.namespace, op.name
            )),
        )
    } else {
        finding(
            FindingId::PostingDisabled,
            Severity::Ok,
            format!("the operator posts events (--events {})", flag.unwrap_or("all")),
            evidence,
            None,
        )
    }
}

/// A Kopf operator whose source turns posting off (unconditionally in an `@kopf.on.startup`
/// function, or under conditions its env decides): the line to delete, or the env to change.
/// `None` when posting is not turned off (`errors-not-posted` says what else keeps errors out).
fn kopf(ctx: &Ctx<'_>, op: &OperatorRef, posting: &KopfPosting) -> Option<Finding> {
    let (at, decided) = posting.disabled.as_ref()?;
    let vars: Vec<&str> = decided.iter().flat_map(|d| d.vars.iter().map(String::as_str)).collect();
    let mut evidence = if decided.is_empty() {
        vec![format!("{at} (unconditional, in an @kopf.on.startup function)")]
    } else {
        let mut e = vec![format!(
            "{at} (in an @kopf.on.startup function, under conditions that the operator's env decides)"
        )];
        e.extend(decided.iter().map(|d| d.describe()));
        e
    };
    evidence.push(posting.version_text.clone());
    let failures = Failures::of(ctx);
    if failures.hidden {
        evidence.extend(failures.evidence(ctx));
    }
    let edit = format!(
        "{} (Kopf posts by default), then restart: kubectl -n {} rollout restart deployment {}",
        removal(ctx, at),
        op.namespace,
        op.name
    );
    let (title, fix) = if vars.is_empty() {
        (format!("Kopf posting is turned off at {}:{}", at.file, at.line), edit)
    } else {
        let guard = decided.last().map(|d| d.guard.line).unwrap_or(at.line);
        (
            format!(
                "Kopf posting is turned off at {}:{}, because of {} in the operator's env",
                at.file,
                at.line,
                vars.join(", ")
            ),
            format!(
                "remove {} from the operator's env (or give {} another value), so that the condition on line {guard} of {} does not hold; this rolls its Pods: kubectl -n {} set env deployment/{} -c {} {}\nor {edit}",
                vars.join(", "),
                if vars.len() == 1 { "it" } else { "them" },
                at.file,
                op.namespace,
                op.name,
                op.container,
                vars.iter().map(|v| format!("{v}-")).collect::<Vec<_>>().join(" ")
            ),
        )
    };
    Some(finding(
        FindingId::PostingDisabled,
        Severity::Problem,
        title,
        evidence,
        Some(fix),
    ))
}

/// The edit that removes the assignment `at` and keeps the file valid ([`edit::removal`]:
/// `pass` in place of the only statement of a block); where lines cannot be removed alone
/// (`x = 1; settings.posting.enabled = False`), the change of that statement in words.
fn removal(ctx: &Ctx<'_>, at: &SourceLine) -> String {
    sources(ctx)
        .iter()
        .filter(|(file, _)| *file == at.file)
        .find_map(|(file, text)| edit::removal(&Module::parse(file, text).ok()?, at.line))
        .map(|e| e.describe())
        .unwrap_or_else(|| format!("change `{}` on line {} of {} to set True", at.text, at.line, at.file))
}

/// A `posting-disabled` problem says what it hides: with handler failures in the logs it stays
/// a problem (their events were never made); with logs in evidence and no failure in them,
/// nothing is hidden now, so it is `ok` (titled so: the next failure will not be posted, and
/// the setup is otherwise healthy: exit 0); without the operator's logs it cannot tell, a
/// warning.
fn hides(ctx: &Ctx<'_>, mut f: Finding) -> Finding {
    if f.severity != Severity::Problem || !ctx.failures().is_empty() {
        return f;
    }
    let logs = ctx.snapshot.operator.logs.get().is_some_and(|l| !l.is_empty());
    if logs {
        f.severity = Severity::Ok;
        f.title = format!(
            "{}: nothing is hidden now (no handler failure in the logs), but a failure will not become an event",
            f.title
        );
        f.fix = None;
    } else {
        f.severity = Severity::Warning;
        f.title = format!(
            "{}: a handler failure would not become an event (no operator logs in evidence to tell whether one happened)",
            f.title
        );
    }
    f
}

#[cfg(test)]
mod tests {
    use super::super::ctx::fixture::run;
    use super::*;
    use crate::diagnose::finding::FindingId::*;
    use crate::diagnose::finding::Severity::*;

    /// Kopf's posting turned off by a condition the env decides is a problem (failures are
    /// hidden); a healthy Kopf operator says nothing here.
    #[test]
    fn posting_turned_off() {
        assert_eq!(run("bundles/conditional-posting", check), [(PostingDisabled, Problem)]);
        assert_eq!(run("bundles/healthy", check), []);
    }
}
