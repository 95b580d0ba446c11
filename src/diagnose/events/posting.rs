//! `posting-disabled`, `errors-not-posted`: whether the operator posts events at all, and its
//! handler errors in particular: our `--events` flag (the Deployment's args, or a process's own
//! `Operator started` line); Kopf's `settings.posting` in its source ([`crate::kopf::posting`])
//! and its version.

use std::collections::BTreeSet;

use super::post_failures::post_failure_lines;
use super::{Ctx, failures, finding, within_ttl};
use crate::diagnose::finding::{Finding, FindingId, Severity};
use crate::evidence::operator::{OperatorKind, OperatorRef};
use crate::evidence::resolve::Verdict as Resolved;
use crate::kopf::posting::{self, LevelSetting, PostingSetting};
use crate::kopf::source::{Env, SourceLine};
use crate::kopf::version::{KopfVersion, kopf_version};
use crate::kopf::wording::VersionRange;
use crate::text::count;

/// `posting-disabled` for a process outside the cluster, from its own log's `Operator started`
/// line (`events=none|warnings|all`); `None` when that is not the answer's operator or its log
/// has no such line.
fn process_posting(ctx: &Ctx<'_>) -> Option<Finding> {
    if ctx.judged.resolution.verdict != Resolved::Process {
        return None;
    }
    let log = ctx.judged.resolution.process.as_ref()?.log.as_deref()?;
    let started = ctx
        .unattributed
        .iter()
        .rfind(|l| l.pod == log && l.record.message.starts_with("Operator started"))?;
    let events = started.record.fields.iter().find(|(k, _)| k == "events")?.1.clone();
    let evidence = vec![format!("its start line: {}", started.cite())];
    Some(if events == "none" {
        finding(
            FindingId::PostingDisabled,
            Severity::Problem,
            format!("{} posts no events (`--events none`)", ctx.judged.resolution.label()),
            evidence,
            Some("restart it with `--events all` (or `warnings`)".into()),
        )
    } else {
        finding(
            FindingId::PostingDisabled,
            Severity::Ok,
            format!("{} posts events (--events {events})", ctx.judged.resolution.label()),
            evidence,
            None,
        )
    })
}

/// The operator's source files (ConfigMap keys ending in `.py`) mounted by its Deployment.
pub(super) fn sources(ctx: &Ctx<'_>) -> Vec<(String, String)> {
    let mounted: BTreeSet<String> = ctx
        .deployment
        .and_then(|d| d.spec.as_ref())
        .and_then(|s| s.template.spec.as_ref())
        .and_then(|s| s.volumes.as_ref())
        .into_iter()
        .flatten()
        .filter_map(|v| v.config_map.as_ref().map(|c| c.name.clone()))
        .collect();
    ctx.snapshot
        .operator
        .configmaps
        .get()
        .into_iter()
        .flatten()
        .filter(|cm| cm.metadata.name.as_ref().is_some_and(|n| mounted.contains(n)))
        .flat_map(|cm| cm.data.iter().flatten())
        .filter(|(k, _)| k.ends_with(".py"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// A `posting-disabled` problem says what it hides: with handler failures in the logs it stays
/// a problem (their events were never made); with logs in evidence and no failure in them,
/// nothing is hidden now, so it is `ok` (titled so: the next failure will not be posted, and
/// the setup is otherwise healthy: exit 0); without the operator's logs it cannot tell, a
/// warning.
pub(super) fn posting_off_hides(ctx: &Ctx<'_>, mut f: Finding) -> Finding {
    if f.id != FindingId::PostingDisabled || f.severity != Severity::Problem || !failures(ctx).is_empty() {
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

/// `errors-not-posted` when what `rbac-events` and `event-post-failed` found (in `found`)
/// explains it: handler failures within the event TTL, no Warning/Error event on the object,
/// and the operator may not create events (`rbac-events` a problem) or its event POSTs fail
/// (`event-post-failed` not `ok`). That is the cause, not the posting settings or the TTL: the
/// finding names it and gives `rbac-events`' fix. `None` when they do not explain it.
pub(super) fn not_posted_because(ctx: &Ctx<'_>, found: &[Finding]) -> Option<Finding> {
    ctx.snapshot.events.get()?;
    let recent: Vec<_> = failures(ctx).into_iter().filter(|l| within_ttl(ctx, l)).collect();
    let last = recent.last()?;
    if ctx
        .own_events
        .iter()
        .any(|e| matches!(e.type_.as_deref(), Some("Warning") | Some("Error")))
    {
        return None;
    }
    let rbac = found
        .iter()
        .find(|f| f.id == FindingId::RbacEvents && f.severity == Severity::Problem);
    let posts = found
        .iter()
        .find(|f| f.id == FindingId::EventPostFailed && f.severity != Severity::Ok);
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
    evidence.extend(posts.map(|f| format!("event-post-failed: {}", f.title)));
    let (title, fix) = match rbac {
        Some(r) => (
            "handler errors are not posted: the operator may not create events (see rbac-events), so their POSTs are refused",
            r.fix.clone(),
        ),
        None => (
            "handler errors are not posted: the operator's event POSTs fail (see event-post-failed)",
            posts.and_then(|p| p.fix.clone()),
        ),
    };
    let source = if rbac.is_some() {
        "rbac-events"
    } else {
        "event-post-failed"
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

pub(super) fn posting(ctx: &Ctx<'_>) -> Vec<Finding> {
    let failures = failures(ctx);
    // Only failures within the event TTL can still have their events: an older failure without
    // an event says nothing about posting (events-expired reports it).
    let expired_only = !failures.is_empty() && !failures.iter().any(|l| within_ttl(ctx, l));
    // Without the events (not listable, not in the bundle), "no event for them" cannot be said.
    let events_known = ctx.snapshot.events.get().is_some();
    let unchecked = !events_known && !failures.is_empty() && !expired_only;
    let hidden_failures = events_known
        && !failures.is_empty()
        && !expired_only
        && !ctx
            .own_events
            .iter()
            .any(|e| matches!(e.type_.as_deref(), Some("Warning") | Some("Error")))
        && post_failure_lines(ctx).is_empty();
    let failure_evidence = || -> Vec<String> {
        let events = if events_known {
            let n = ctx
                .own_events
                .iter()
                .filter(|e| matches!(e.type_.as_deref(), Some("Warning") | Some("Error")))
                .count();
            format!("{} on its uid", count(n as u64, "Warning/Error event"))
        } else {
            "its events could not be read".to_string()
        };
        let mut ev = vec![format!(
            "{} in the logs for {}, {events}",
            count(failures.len() as u64, "handler failure"),
            ctx.key,
        )];
        if let Some(last) = failures.last() {
            ev.push(format!("last failure: {}", last.cite()));
        }
        ev
    };
    if let Some(found) = process_posting(ctx) {
        return vec![found];
    }
    let Some(op) = ctx.handler() else {
        // No operator in evidence: its settings are unknown, the failures are not.
        if !hidden_failures {
            return Vec::new();
        }
        let mut evidence = failure_evidence();
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
    match op.kind {
        OperatorKind::Ours => {
            let flag = op.flag("--events");
            let evidence = vec![format!(
                "Deployment {} args: --events {}",
                op.display(),
                flag.unwrap_or("(unset: all)")
            )];
            if flag == Some("none") {
                vec![finding(
                    FindingId::PostingDisabled,
                    Severity::Problem,
                    "the operator posts no events (`--events none`)".into(),
                    evidence,
                    Some(format!(
                        "set `--events all` (or `warnings`): kubectl -n {} edit deployment {}",
                        op.namespace, op.name
                    )),
                )]
            } else {
                vec![finding(
                    FindingId::PostingDisabled,
                    Severity::Ok,
                    format!("the operator posts events (--events {})", flag.unwrap_or("all")),
                    evidence,
                    None,
                )]
            }
        }
        OperatorKind::Kopf => kopf_posting(
            ctx,
            op,
            Failures {
                hidden: hidden_failures,
                expired_only,
                unchecked,
            },
            failure_evidence,
        ),
    }
}

/// `operator.py:11: ...: undecidable, line 11 (why: the guard)`.
fn undecidable_line(at: &SourceLine, guard: Option<&SourceLine>, why: &str) -> String {
    format!(
        "{at}: undecidable, line {} ({why}{})",
        at.line,
        guard.map(|g| format!(": {}", g.text)).unwrap_or_default()
    )
}

/// What in the operator's source may keep handler errors out of events but cannot be decided.
#[derive(PartialEq)]
enum Doubt {
    /// The file does not parse.
    Unparsed,
    /// `settings.posting.enabled`.
    Enabled,
    /// `settings.posting.level`.
    Level,
}

impl Doubt {
    /// The doubt in words, citing `at`.
    fn describe(&self, at: &SourceLine) -> String {
        match self {
            Doubt::Unparsed => format!(
                "{} does not parse (line {}), so whether it turns posting off is undecidable",
                at.file, at.line
            ),
            Doubt::Enabled => format!(
                "posting may be turned off at {}:{} (undecidable from the source)",
                at.file, at.line
            ),
            Doubt::Level => format!(
                "posting.level may be above ERROR at {}:{} (undecidable from the source)",
                at.file, at.line
            ),
        }
    }
}

/// What the logs and events say about handler failures, for the posting findings.
struct Failures {
    /// Failures within the event TTL, and no Warning/Error event nor failed POST for them.
    hidden: bool,
    /// Failures, all older than the event TTL.
    expired_only: bool,
    /// Failures within the TTL, but the events are not in evidence: cannot tell.
    unchecked: bool,
}

fn kopf_posting(
    ctx: &Ctx<'_>,
    op: &OperatorRef,
    failures: Failures,
    failure_evidence: impl Fn() -> Vec<String>,
) -> Vec<Finding> {
    let Failures {
        hidden: hidden_failures,
        expired_only,
        unchecked,
    } = failures;
    let version: Option<KopfVersion> = ctx.deployment.and_then(kopf_version);
    let files = sources(ctx);
    // The container's env decides `os.environ` conditions (ConfigMaps in evidence included;
    // Secrets are never read).
    let env = match ctx.deployment {
        Some(d) => Env::of_deployment(
            d,
            &op.container,
            ctx.snapshot.operator.configmaps.get().map(Vec::as_slice).unwrap_or(&[]),
        ),
        None => Env::unknown(),
    };
    let analyses: Vec<posting::PostingSource> = files
        .iter()
        .map(|(f, s)| posting::posting_settings_in(f, s, &env))
        .collect();
    let disabled = analyses.iter().find_map(|a| match &a.enabled {
        PostingSetting::Disabled(at) => Some((at.clone(), a.enabled_decided_by.clone())),
        _ => None,
    });
    // What may turn posting off (or keep ERROR records out) but cannot be decided, and what.
    let undecidable = analyses
        .iter()
        .find_map(|a| match (&a.enabled, &a.parse_error) {
            (PostingSetting::Undecidable { at, guard, why }, parse) => Some((
                at.clone(),
                guard.clone(),
                why.clone(),
                if parse.is_some() {
                    Doubt::Unparsed
                } else {
                    Doubt::Enabled
                },
            )),
            _ => None,
        })
        .or_else(|| {
            analyses.iter().find_map(|a| match &a.level {
                LevelSetting::Undecidable { at, guard, why } => {
                    Some((at.clone(), guard.clone(), why.clone(), Doubt::Level))
                }
                _ => None,
            })
        });
    // A level above ERROR keeps handler errors (logged at ERROR) out of events.
    let level_filter = analyses.iter().find_map(|a| match &a.level {
        LevelSetting::AboveError { at, level } => Some((at.clone(), *level)),
        _ => None,
    });
    let ignored: Vec<String> = analyses
        .iter()
        .flat_map(|a| &a.ignored)
        .map(|i| format!("{}: ignored ({})", i.at, i.why))
        .collect();
    let loggers = analyses.iter().find_map(|a| a.loggers.clone());
    // Without a pin or tag, the wording of its own lines bounds the version.
    let range = VersionRange::from_lines(
        ctx.lines
            .iter()
            .chain(&ctx.unattributed)
            .map(|l| (l.record.message.as_str(), l.cite())),
    );
    let version_text = match &version {
        Some(v) => format!("Kopf {} ({})", v.short(), v.source),
        None if !range.is_empty() => range.describe(),
        None => "Kopf version unknown (no kopf==X.Y pin or kopf image tag in the Deployment)".into(),
    };
    // Whether this Kopf posts log records by default, and how to name it: "1.38" or "≥ 1.44".
    let (label, posts_by_default) = match &version {
        Some(v) => (v.short(), Some(v.posts_log_records_by_default())),
        None => (range.bounds(), range.posts_log_records_by_default()),
    };
    if let Some((at, decided)) = disabled {
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
        evidence.push(version_text);
        if hidden_failures {
            evidence.extend(failure_evidence());
        }
        let edit = format!(
            "delete line {} of {} (or set `settings.posting.enabled = True`), then restart: kubectl -n {} rollout restart deployment {}",
            at.line, at.file, op.namespace, op.name
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
        return vec![finding(
            FindingId::PostingDisabled,
            Severity::Problem,
            title,
            evidence,
            Some(fix),
        )];
    }
    // A Kopf that does not post log records by default proves the failures unposted even when
    // their events would have expired by now.
    // `settings.posting.loggers = True|False` (Kopf ≥ 1.41, a bool): its literal value, when it
    // has one; anything else (an expression) is undecidable.
    let loggers_value: Option<bool> = loggers.as_ref().and_then(|at| {
        let statement = at.text.replace(' ', "");
        if statement.ends_with("=True") {
            Some(true)
        } else if statement.ends_with("=False") {
            Some(false)
        } else {
            None
        }
    });
    let unposted_by_default = level_filter.is_some()
        || (undecidable.is_none()
            && (loggers_value == Some(false) || (loggers.is_none() && posts_by_default == Some(false))));
    let unposted = hidden_failures || ((expired_only || unchecked) && unposted_by_default);
    if !unposted && unchecked {
        // Failures whose events could not be read: only an undecidable setting is worth saying.
        let Some((at, guard, why, doubt)) = undecidable else {
            return Vec::new();
        };
        let mut evidence = failure_evidence();
        evidence.push(version_text);
        evidence.push(undecidable_line(&at, guard.as_ref(), &why));
        evidence.extend(ignored);
        return vec![finding(
            FindingId::ErrorsNotPosted,
            Severity::Warning,
            format!(
                "handler errors may be only logged: {}, and the events could not be read to check",
                doubt.describe(&at)
            ),
            evidence,
            Some(format!(
                "list the events with rights to (see caller-cannot-list-events), or make posting explicit around line {} of {}",
                at.line, at.file
            )),
        )];
    }
    if !unposted {
        let mut evidence = vec![version_text];
        if files.is_empty() {
            evidence.push("operator source: not in evidence (no mounted ConfigMap with .py files)".into());
        }
        evidence.extend(ignored);
        let title = if expired_only {
            "the handler failures are older than the event TTL: whether they were posted cannot be told from the events (see events-expired)"
        } else {
            "no handler failure went unposted"
        };
        return vec![finding(
            FindingId::ErrorsNotPosted,
            Severity::Ok,
            title.into(),
            evidence,
            None,
        )];
    }
    let mut evidence = failure_evidence();
    evidence.push(version_text);
    let (title, fix) = if let Some((at, level)) = level_filter {
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
    } else if let Some((at, guard, why, doubt)) = undecidable {
        evidence.push(undecidable_line(&at, guard.as_ref(), &why));
        (
            format!("handler errors are only logged: {}", doubt.describe(&at)),
            if doubt == Doubt::Unparsed {
                format!(
                    "check line {} of {}: it does not parse as Python 3 (is the operator running another Python, or is the ConfigMap cut?); then set posting explicitly in an @kopf.on.startup function",
                    at.line, at.file
                )
            } else if let Some((_, input)) = why.split_once("; ") {
                // The condition reads the env, but the evidence does not give the value: name it.
                format!(
                    "make posting explicit: remove the condition around line {} of {}, or check its input ({input}) in deployment {}/{}",
                    at.line, at.file, op.namespace, op.name
                )
            } else {
                format!(
                    "make posting explicit: remove the condition around line {} of {} or check its inputs (env of deployment {}/{})",
                    at.line, at.file, op.namespace, op.name
                )
            },
        )
    } else {
        // Kopf ≥ 1.41: `settings.posting.loggers: bool`, False by default from 1.44 (Kopf's
        // configuration.py). A handler's failure is a log record on its per-object logger, so
        // raising another exception type does not post it; `kopf.warn(...)` posts explicitly.
        let turn_on = "in an @kopf.on.startup function set `settings.posting.loggers = True` (Kopf ≥ 1.41), or post from the handler with `kopf.warn(body, reason=..., message=...)`";
        match (posts_by_default, &loggers) {
            (_, Some(at)) if loggers_value == Some(false) => (
                format!(
                    "handler errors are only logged — {}:{} sets posting.loggers = False: log records are not posted",
                    at.file, at.line
                ),
                format!("post them: set it True at line {} of {}, or post from the handler with `kopf.warn(body, reason=..., message=...)`", at.line, at.file),
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
                    if loggers_value == Some(true) { " = True" } else { " (to a value not known before it runs)" }
                ),
                format!("check the value it sets ({at}) and posting.level in the same startup handler"),
            ),
            (Some(true), None) => (
                format!("handler errors are only logged although Kopf {label} posts them by default"),
                "check posting.level in the startup handler and whether events expired (--event-ttl)".into(),
            ),
            (None, None) => (
                "handler errors are only logged: Kopf before 1.44 posts them as type Error (reason Logging), from 1.44 not unless posting.loggers".into(),
                format!("pin the Kopf version; from 1.44: {turn_on}; before 1.44 list events without a type filter (type Error)"),
            ),
        }
    };
    evidence.extend(ignored);
    vec![finding(
        FindingId::ErrorsNotPosted,
        Severity::Problem,
        title,
        evidence,
        Some(fix),
    )]
}

#[cfg(test)]
mod tests {
    use super::super::fixture::run;
    use super::*;
    use crate::diagnose::finding::FindingId::*;
    use crate::diagnose::finding::Severity::*;

    /// Kopf's posting turned off by a condition the env decides, and Kopf 1.44's handler errors
    /// not posted, are problems; a healthy operator's posting is checked `ok`.
    #[test]
    fn posting_off_and_errors_only_logged() {
        assert_eq!(
            run("bundles/conditional-posting", posting),
            [(PostingDisabled, Problem)]
        );
        assert_eq!(
            run("bundles-synthetic/kopf-1.44-errors-not-posted", posting),
            [(ErrorsNotPosted, Problem)]
        );
        assert_eq!(run("bundles/healthy", posting), [(ErrorsNotPosted, Ok)]);
    }
}
