//! What decides whether the operator posts events, for `posting-disabled` and
//! `errors-not-posted`: the object's handler failures and whether events exist for them
//! ([`Failures`]), a process's own `Operator started` line ([`process_start`]), and a Kopf
//! operator's `settings.posting` in its source and its version ([`KopfPosting`],
//! [`crate::kopf::posting`]).

use super::event_posts::refused_post_lines;
use super::{Ctx, Line};
use crate::evidence::operator::OperatorRef;
use crate::evidence::resolve::Verdict as Resolved;
use crate::kopf::posting::{self, LevelSetting, PostingSetting};
use crate::kopf::source::conditions::EnvDecision;
use crate::kopf::source::{Env, SourceLine};
use crate::kopf::version::{KopfVersion, kopf_version};
use crate::kopf::wording::VersionRange;
use crate::text::count;

/// What the logs and events say about the object's handler failures.
pub(crate) struct Failures<'c> {
    /// The failures in the logs ([`Ctx::failures`]).
    pub(crate) lines: Vec<&'c Line>,
    /// Failures within the event TTL, and no Warning/Error event nor failed POST for them.
    pub(crate) hidden: bool,
    /// Failures, all older than the event TTL: they cannot have their events any more
    /// (`events-expired` reports it).
    pub(crate) expired_only: bool,
    /// Failures within the TTL, but the events are not in evidence: "no event for them" cannot
    /// be said.
    pub(crate) unchecked: bool,
}

impl<'c> Failures<'c> {
    /// The object's failures and what its events say of them.
    pub(crate) fn of(ctx: &'c Ctx<'_>) -> Failures<'c> {
        let lines = ctx.failures();
        let expired_only = !lines.is_empty() && !lines.iter().any(|l| ctx.within_ttl(l));
        let events_known = ctx.snapshot.events.get().is_some();
        let unchecked = !events_known && !lines.is_empty() && !expired_only;
        let hidden = events_known
            && !lines.is_empty()
            && !expired_only
            && !has_warning_or_error(ctx)
            && refused_post_lines(ctx).is_empty();
        Failures {
            lines,
            hidden,
            expired_only,
            unchecked,
        }
    }

    /// How many failures, for which object, against its Warning/Error events; and the last one.
    pub(crate) fn evidence(&self, ctx: &Ctx<'_>) -> Vec<String> {
        let events = if ctx.snapshot.events.get().is_some() {
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
            count(self.lines.len() as u64, "handler failure"),
            ctx.key,
        )];
        if let Some(last) = self.lines.last() {
            ev.push(format!("last failure: {}", last.cite()));
        }
        ev
    }
}

/// Whether the object has a Warning or Error event on its uid.
pub(crate) fn has_warning_or_error(ctx: &Ctx<'_>) -> bool {
    ctx.own_events
        .iter()
        .any(|e| matches!(e.type_.as_deref(), Some("Warning") | Some("Error")))
}

/// For a process outside the cluster, its own log's `Operator started` line and the `events`
/// it gives (`none`, `warnings`, `all`); `None` when that is not the answer's operator or its
/// log has no such line.
pub(crate) fn process_start<'c>(ctx: &'c Ctx<'_>) -> Option<(&'c Line, String)> {
    if ctx.resolution().verdict != Resolved::Process {
        return None;
    }
    let log = ctx.resolution().process.as_ref()?.log.as_deref()?;
    let started = ctx
        .unattributed
        .iter()
        .rfind(|l| l.pod == log && l.record.message.starts_with("Operator started"))?;
    let events = started.record.fields.iter().find(|(k, _)| k == "events")?.1.clone();
    Some((started, events))
}

/// The operator's source files (ConfigMap keys ending in `.py`) mounted by its Deployment.
pub(crate) fn sources(ctx: &Ctx<'_>) -> Vec<(String, String)> {
    let Some(d) = ctx.deployment else {
        return Vec::new();
    };
    crate::kopf::source::mounted_sources(
        d,
        ctx.snapshot.operator.configmaps.get().map(Vec::as_slice).unwrap_or(&[]),
    )
}

/// What in the operator's source may keep handler errors out of events but cannot be decided.
#[derive(PartialEq)]
pub(crate) enum Doubt {
    /// The file does not parse.
    Unparsed,
    /// `settings.posting.enabled`.
    Enabled,
    /// `settings.posting.level`.
    Level,
}

impl Doubt {
    /// The doubt in words, citing `at`.
    pub(crate) fn describe(&self, at: &SourceLine) -> String {
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

/// A setting that cannot be decided: the assignment, its guard, why, and what it may do.
pub(crate) struct Undecidable {
    /// The assignment (or the line of a syntax error).
    pub(crate) at: SourceLine,
    /// The enclosing condition, when there is one.
    pub(crate) guard: Option<SourceLine>,
    /// Why it cannot be decided, in words.
    pub(crate) why: String,
    /// What it may do.
    pub(crate) doubt: Doubt,
}

impl Undecidable {
    /// `operator.py:11: ...: undecidable, line 11 (why: the guard)`.
    pub(crate) fn line(&self) -> String {
        format!(
            "{}: undecidable, line {} ({}{})",
            self.at,
            self.at.line,
            self.why,
            self.guard.as_ref().map(|g| format!(": {}", g.text)).unwrap_or_default()
        )
    }
}

/// What a Kopf operator's source and version say about its posting.
pub(crate) struct KopfPosting {
    /// An unconditional (or env-decided) `settings.posting.enabled = False`, and the conditions
    /// the env decided on the way.
    pub(crate) disabled: Option<(SourceLine, Vec<EnvDecision>)>,
    /// What may turn posting off (or keep ERROR records out) but cannot be decided.
    pub(crate) undecidable: Option<Undecidable>,
    /// A level above ERROR, which keeps handler errors (logged at ERROR) out of events.
    pub(crate) level_filter: Option<(SourceLine, i64)>,
    /// Assignments that look like posting settings but do not reach Kopf's, for evidence.
    pub(crate) ignored: Vec<String>,
    /// The last `settings.posting.loggers = ...` (Kopf ≥ 1.41).
    pub(crate) loggers: Option<SourceLine>,
    /// The Kopf version, in words (a pin, a tag, or the bounds its log wording gives).
    pub(crate) version_text: String,
    /// The version as a short label: `1.38`, or `≥ 1.44`.
    pub(crate) label: String,
    /// Whether this Kopf posts log records by default (before 1.44); `None`: not known.
    pub(crate) posts_by_default: Option<bool>,
    /// Whether no source is in evidence.
    pub(crate) no_source: bool,
}

impl KopfPosting {
    /// The posting settings of `op`'s mounted source (its container's env deciding
    /// `os.environ` conditions: ConfigMaps in evidence included, Secrets never read), and its
    /// version (a `kopf==X.Y` pin or image tag, else the wording of its own lines).
    pub(crate) fn of(ctx: &Ctx<'_>, op: &OperatorRef) -> KopfPosting {
        let version: Option<KopfVersion> = ctx.deployment.and_then(kopf_version);
        let files = sources(ctx);
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
        let (label, posts_by_default) = match &version {
            Some(v) => (v.short(), Some(v.posts_log_records_by_default())),
            None => (range.bounds(), range.posts_log_records_by_default()),
        };
        KopfPosting {
            disabled: analyses.iter().find_map(|a| match &a.enabled {
                PostingSetting::Disabled(at) => Some((at.clone(), a.enabled_decided_by.clone())),
                _ => None,
            }),
            undecidable: undecidable(&analyses),
            level_filter: analyses.iter().find_map(|a| match &a.level {
                LevelSetting::AboveError { at, level } => Some((at.clone(), *level)),
                _ => None,
            }),
            ignored: analyses
                .iter()
                .flat_map(|a| &a.ignored)
                .map(|i| format!("{}: ignored ({})", i.at, i.why))
                .collect(),
            loggers: analyses.iter().find_map(|a| a.loggers.clone()),
            version_text,
            label,
            posts_by_default,
            no_source: files.is_empty(),
        }
    }

    /// `settings.posting.loggers = True|False` (Kopf ≥ 1.41, a bool): its literal value, when
    /// it has one; anything else (an expression) is undecidable.
    pub(crate) fn loggers_value(&self) -> Option<bool> {
        self.loggers.as_ref().and_then(|at| {
            let statement = at.text.replace(' ', "");
            if statement.ends_with("=True") {
                Some(true)
            } else if statement.ends_with("=False") {
                Some(false)
            } else {
                None
            }
        })
    }
}

/// The first undecidable `enabled` (a source that does not parse says so), else the first
/// undecidable `level`.
fn undecidable(analyses: &[posting::PostingSource]) -> Option<Undecidable> {
    analyses
        .iter()
        .find_map(|a| match (&a.enabled, &a.parse_error) {
            (PostingSetting::Undecidable { at, guard, why }, parse) => Some(Undecidable {
                at: at.clone(),
                guard: guard.clone(),
                why: why.clone(),
                doubt: if parse.is_some() {
                    Doubt::Unparsed
                } else {
                    Doubt::Enabled
                },
            }),
            _ => None,
        })
        .or_else(|| {
            analyses.iter().find_map(|a| match &a.level {
                LevelSetting::Undecidable { at, guard, why } => Some(Undecidable {
                    at: at.clone(),
                    guard: guard.clone(),
                    why: why.clone(),
                    doubt: Doubt::Level,
                }),
                _ => None,
            })
        })
}
