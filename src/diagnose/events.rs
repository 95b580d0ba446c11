//! `explain-events`: why is there no Warning event on a Microservice? Findings over a
//! [`Snapshot`] (pure, no I/O), each with a stable id (docs/contracts.md), a severity, the
//! evidence it rests on (log lines with their time and clock, access reviews with their method,
//! settings with file:line, field values) and a concrete fix.
//!
//! This file assembles the report (the families' findings, their order, the headline, the exit
//! code); each family of findings is a file of its own beside it, with its tests:
//! - `events/operator.rs`: the operator (found, running, watching); leadership is
//!   [`super::leading`]'s;
//! - `events/permissions.rs`: its RBAC for events and for Microservices ([`super::rbac`]);
//! - `events/post_failures.rs`: what its logs say about event POSTs;
//! - `events/posting.rs`: its posting settings (our `--events` flag; Kopf's source and version,
//!   [`crate::kopf::posting`]) and handler failures only logged;
//! - `events/existing.rs`: the events that exist (expired, elsewhere, not listable);
//! - `events/pruned.rs`, `events/stale.rs`, `events/patch.rs`, `events/terminating.rs`: the
//!   object's own status ([`super::staleness`]): dropped by the schema, not current, a cycle
//!   that never completes, a pending deletion.

mod existing;
mod operator;
mod patch;
mod permissions;
mod post_failures;
mod posting;
mod pruned;
mod stale;
mod terminating;

use chrono::{DateTime, Duration, Utc};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Event;
use serde::Serialize;

pub use super::finding::{Finding, FindingId, Severity};
use crate::evidence::operator::{OperatorKind, OperatorRef, find_operators};
use crate::evidence::resolve::Verdict as Resolved;
use crate::evidence::{Gap, GapReason, Snapshot};
use crate::kopf::messages::{Lifecycle, Outcome};
use crate::logs::Record;
use crate::resource::MicroserviceObject;
use crate::text::count;
use crate::time::rfc3339_millis;
use existing::{caller_events, elsewhere, expired};
use operator::operator_findings;
use patch::patch_rejected;
use permissions::rbac_findings;
use post_failures::post_failures;
use posting::{posting, posting_off_hides};
use pruned::pruned;
use stale::stale;
use terminating::deletion_pending;

/// `explain-events -o json`: `{"schemaVersion": 1, "object", "summary", "findings", "gaps"}`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// Always 1.
    pub schema_version: u32,
    /// `NS/NAME`.
    pub object: String,
    /// The one-line verdict.
    pub summary: String,
    /// Problems first, then warnings, then ok.
    pub findings: Vec<Finding>,
    /// What the evidence lacks (not-collected parts left out).
    pub gaps: Vec<Gap>,
    /// Notes on how to read the evidence, each said once (e.g. what "operator's local time"
    /// means); absent when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The operator the findings are about, as the resolver decided (the same value `status`
    /// prints: `NS/deployment/NAME`, `process/HOLDER` or `log-file/NAME`); `null` when none
    /// serves the namespace, several do alike, or the operators are unknown.
    pub operator: Option<String>,
    /// How it was decided ([`crate::evidence::resolve::Resolution`]), as `status -o json` gives it.
    pub operator_resolution: crate::evidence::resolve::Resolution,
    /// Whether the evidence could decide: false when nothing was found but deciding evidence
    /// (events, the operator, its logs) is missing.
    #[serde(skip)]
    pub decided: bool,
}

impl Report {
    /// Contracts: 0 nothing hidden, 1 something hidden or stale (a problem or a warning), 3
    /// could not decide.
    pub fn exit_code(&self) -> u8 {
        if self.findings.iter().any(|f| f.severity > Severity::Ok) {
            1
        } else if self.decided {
            0
        } else {
            3
        }
    }
}

/// Tunables.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// The API server's event TTL (`--event-ttl`, kube-apiserver default 1h).
    pub event_ttl: Duration,
    /// Times closer than this cannot be ordered.
    pub skew: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            event_ttl: Duration::hours(1),
            skew: Duration::seconds(2),
        }
    }
}

/// A log record with where it came from, for evidence.
struct Line {
    pod: String,
    record: Record,
}

impl Line {
    fn cite(&self) -> String {
        let time = match self.record.stamp {
            Some(s) => format!("{} ({})", rfc3339_millis(s.at), s.clock.describe()),
            None => "no time in the line".into(),
        };
        let text = self.record.lines.first().map(String::as_str).unwrap_or("");
        format!("{} line {}, {time}: {}", self.pod, self.record.line_number, text.trim())
    }
}

/// Everything the families share.
struct Ctx<'a> {
    snapshot: &'a Snapshot,
    obj: &'a MicroserviceObject,
    ns: &'a str,
    name: &'a str,
    key: String,
    now: Option<DateTime<Utc>>,
    options: Options,
    /// `status`'s verdict of the object ([`crate::diagnose::verdict`]), with the resolver's
    /// answer for it ([`Snapshot::operator_for`]), what that operator's logs and the object's
    /// Kopf events say of it, and the operators that each handled it.
    judged: crate::diagnose::verdict::Judged,
    /// The resolved operator's logs, the only ones its facts are read from
    /// ([`crate::evidence::resolve::Resolution::logs`]).
    logs: crate::evidence::resolve::OperatorLogs<'a>,
    /// The Deployment diagnosed: the resolved one; for a process outside the cluster, the
    /// serving Deployment of ours that stands by on the Lease it holds; never one that does not
    /// serve the namespace (unless `--operator` names it).
    operator: Option<OperatorRef>,
    deployment: Option<&'a Deployment>,
    /// Records about this object (after its creation, so a predecessor's are left out).
    lines: Vec<Line>,
    /// Records without an object (posting failures may have none).
    unattributed: Vec<Line>,
    /// Events about this uid (or without uid) in its namespace.
    own_events: Vec<&'a Event>,
}

impl<'a> Ctx<'a> {
    /// What the families share about `obj` in `snapshot`: the operator the resolver names (or
    /// the one of ours that stands by for a process that leads), its log records about the
    /// object (after its creation, of its uid) and those about no object, and the object's own
    /// events.
    fn new(snapshot: &'a Snapshot, obj: &'a MicroserviceObject, options: Options) -> Ctx<'a> {
        let ns = obj.metadata.namespace.as_deref().unwrap_or("");
        let name = obj.metadata.name.as_deref().unwrap_or("");
        let deployments = snapshot.operator.deployments.get().map(Vec::as_slice).unwrap_or(&[]);
        let operators = find_operators(deployments);
        let judged = crate::diagnose::verdict::Judge::new(snapshot, options.skew).judge(obj);
        let resolution = &judged.resolution;
        let by_name = |name: &str| operators.iter().find(|op| op.display() == name).cloned();
        let operator = match resolution.verdict {
            Resolved::Deployment => resolution.operator.as_deref().and_then(by_name),
            // A process leads: the Deployment of ours that serves the namespace (standing by, or
            // not running) is still the one to diagnose, for its leadership.
            Resolved::Process => resolution
                .serving()
                .filter(|c| c.kind == Some(OperatorKind::Ours))
                .find_map(|c| by_name(&c.operator)),
            _ => None,
        };
        let deployment = operator.as_ref().and_then(|op| {
            deployments.iter().find(|d| {
                d.metadata.name.as_deref() == Some(op.name.as_str())
                    && d.metadata.namespace.as_deref() == Some(op.namespace.as_str())
            })
        });
        let created = obj
            .metadata
            .creation_timestamp
            .as_ref()
            .map(|t| crate::time::from_jiff(t.0));
        let mut lines = Vec::new();
        let mut unattributed = Vec::new();
        // Only the resolved operator's logs (and any --log-file): another operator's lines say
        // nothing about this object.
        // A file that copies a Pod's log counts once (crate::logs::copies).
        let logs = resolution.logs(snapshot);
        let sources: Vec<&crate::logs::LogSource> = logs.clone().unwrap_or_default();
        let parsed = crate::logs::copies::records_once(&sources, |s| s.records_in(snapshot.log_zone(s)));
        for (source, source_records) in sources.iter().zip(parsed) {
            for record in source_records {
                let pod = crate::logs::file::source_name(&source.pod, &source.container);
                match &record.object {
                    Some(o) if o.name == name && o.namespace.as_deref().is_none_or(|n| n == ns) => {
                        let before = match (record.time(), created) {
                            (Some(t), Some(c)) => crate::time::plus(t, options.skew) < c,
                            _ => false,
                        };
                        let other_uid = record
                            .uid
                            .as_ref()
                            .is_some_and(|u| Some(u) != obj.metadata.uid.as_ref());
                        if !before && !other_uid {
                            lines.push(Line { pod, record });
                        }
                    }
                    None => unattributed.push(Line { pod, record }),
                    _ => {}
                }
            }
        }
        let own_events = snapshot
            .events
            .get()
            .into_iter()
            .flatten()
            .filter(|e| about(e, obj) && e.involved_object.uid.is_some() && e.involved_object.uid == obj.metadata.uid)
            .collect();
        Ctx {
            snapshot,
            obj,
            ns,
            name,
            key: obj.key(),
            now: snapshot.now(),
            options,
            judged,
            logs,
            operator,
            deployment,
            lines,
            unattributed,
            own_events,
        }
    }
}

/// Explains `obj` from `snapshot`.
pub fn explain(snapshot: &Snapshot, obj: &MicroserviceObject, options: Options) -> Report {
    let ctx = Ctx::new(snapshot, obj, options);
    let mut findings = Vec::new();
    // First: a pending deletion is `status`'s verdict too (`terminating`), and the sort is stable.
    findings.extend(deletion_pending(&ctx));
    // Next: a cycle that cannot complete is `status`'s first reason too.
    findings.extend(patch_rejected(&ctx));
    findings.extend(operator_findings(&ctx));
    // Two operators that serve the namespace and both handled the object: the double handling
    // replaces a leadership `ok` of the one diagnosed (its --standalone pauses nothing, but
    // another operator handles too).
    if let Some(f) = crate::diagnose::leading::handled_by_several(ctx.ns, &ctx.judged.handlings) {
        findings.retain(|x| !(x.id == FindingId::OperatorNotLeading && x.severity == Severity::Ok));
        findings.push(f);
    }
    findings.extend(rbac_findings(&ctx));
    findings.extend(post_failures(&ctx));
    // Refused event POSTs, when they are why handler errors have no event, are the cause
    // `errors-not-posted` names (not the posting settings).
    let because = posting::not_posted_because(&ctx, &findings);
    findings.extend(
        posting(&ctx)
            .into_iter()
            .map(|f| posting_off_hides(&ctx, f))
            .map(|f| match &because {
                Some(b) if f.id == FindingId::ErrorsNotPosted => b.clone(),
                _ => f,
            }),
    );
    findings.extend(expired(&ctx));
    findings.extend(elsewhere(&ctx));
    findings.extend(caller_events(&ctx));
    findings.extend(pruned(&ctx));
    // A problem of the operator itself (not running, not leading, not watching) is why nothing
    // handles: `accepted-stale` then points to it rather than to a restart.
    let blocking: Vec<FindingId> = findings
        .iter()
        .filter(|f| f.severity == Severity::Problem && f.id.as_str().starts_with("operator-not-"))
        .map(|f| f.id)
        .collect();
    findings.extend(stale(&ctx, &blocking));
    findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
    // Issue 11, one verdict: `status`'s first reason is the first finding when a problem states
    // it; the headline then names the first other problem as its cause.
    let status_verdict = &ctx.judged.assessment;
    if let Some(first) = status_verdict.reasons.first()
        && status_verdict.verdict.is_problem()
        && let Some(at) = findings
            .iter()
            .position(|f| f.id == verdict_finding(first.code) && f.severity == Severity::Problem)
    {
        let f = findings.remove(at);
        findings.insert(0, f);
    }
    let mut gaps: Vec<Gap> = snapshot
        .gaps()
        .into_iter()
        .filter(|g| !matches!(g.reason, GapReason::NotCollected(_)))
        .cloned()
        .collect();
    if let Err(gap) = &ctx.logs
        && !gaps.contains(gap)
    {
        gaps.push(gap.clone());
    }
    let verdict = ctx.judged.resolution.verdict;
    if verdict == Resolved::Ambiguous {
        gaps.push(Gap {
            evidence: "operator".into(),
            reason: GapReason::Failed(ctx.judged.resolution.summary.clone()),
        });
    }
    let decided = snapshot.events.get().is_some()
        && match verdict {
            Resolved::Unknown | Resolved::Ambiguous => false,
            Resolved::NoneServes => true,
            Resolved::Deployment | Resolved::Process => ctx.logs.is_ok(),
        };
    let summary = summary(&ctx, &findings);
    let notes = crate::logs::local_time_note(
        findings
            .iter()
            .flat_map(|f| std::iter::once(&f.title).chain(&f.evidence))
            .map(String::as_str),
        &snapshot.log_zones(),
    )
    .into_iter()
    .collect();
    Report {
        schema_version: 1,
        object: ctx.key.clone(),
        summary,
        findings,
        gaps,
        notes,
        operator: ctx.judged.resolution.operator.clone(),
        operator_resolution: ctx.judged.resolution.clone(),
        decided,
    }
}

/// Whether `e` names this object by kind, name and namespace (any uid).
fn about(e: &Event, obj: &MicroserviceObject) -> bool {
    e.involved_object.kind.as_deref() == Some("Microservice")
        && e.involved_object.name == obj.metadata.name
        && e.involved_object.namespace.as_ref().or(e.metadata.namespace.as_ref()) == obj.metadata.namespace.as_ref()
}

fn failures<'a>(ctx: &'a Ctx<'_>) -> Vec<&'a Line> {
    ctx.lines
        .iter()
        .filter(|l| {
            matches!(
                l.record.lifecycle(),
                Lifecycle::HandlerOutcome {
                    outcome: Outcome::Retrying | Outcome::Failed,
                    ..
                }
            )
        })
        .collect()
}

/// Whether the event of `line` can still exist: it is not older than the event TTL (true when
/// "now" or the line's time is unknown).
fn within_ttl(ctx: &Ctx<'_>, line: &Line) -> bool {
    match (ctx.now, line.record.time()) {
        (Some(now), Some(t)) => now - t <= ctx.options.event_ttl,
        _ => true,
    }
}

fn summary(ctx: &Ctx<'_>, findings: &[Finding]) -> String {
    let failures = failures(ctx);
    let recent = failures.iter().filter(|l| within_ttl(ctx, l)).count();
    let ttl = human_duration(ctx.options.event_ttl);
    let older = failures.len() - recent;
    let tail = match (recent, older) {
        (0, 0) => String::new(),
        (0, older) => format!(
            "; {} in the logs, {}older than {ttl}",
            count(older as u64, "handler failure"),
            if older == 1 { "" } else { "all " }
        ),
        (recent, 0) => format!(
            "; {} in the last {ttl} of logs",
            count(recent as u64, "handler failure")
        ),
        (recent, older) => format!(
            "; {} in the last {ttl} of logs ({older} older)",
            count(recent as u64, "handler failure")
        ),
    };
    let top = findings.iter().find(|f| f.severity > Severity::Ok);
    // The verdict first (`status`'s first reason, when a problem states it: explain() put it
    // first), then the first other problem, never left out of the headline.
    let verdict_first = top.is_some_and(|f| {
        f.severity == Severity::Problem
            && matches!(
                f.id,
                FindingId::AcceptedStale
                    | FindingId::StatusPruned
                    | FindingId::PatchRejected
                    | FindingId::DeletionPending
            )
    });
    let cause = match top {
        Some(f) if verdict_first => findings
            .iter()
            .skip(1)
            .find(|c| c.severity == Severity::Problem && c.id != f.id && c.id != FindingId::AcceptedStale)
            .map(|c| format!("; also: {}", c.title))
            .unwrap_or_default(),
        _ => String::new(),
    };
    // Several operators serve alike (the resolver's tie): said in the headline, never
    // "Nothing is hidden" about an operator that was not decided.
    let tail = match ctx.judged.resolution.verdict {
        Resolved::Ambiguous => format!("{tail}; the operator is ambiguous: {}", ctx.judged.resolution.summary),
        _ => tail,
    };
    match top {
        None if ctx.judged.resolution.verdict == Resolved::Ambiguous => {
            format!("Could not decide which operator handles the object{tail}")
        }
        Some(f) if f.severity == Severity::Problem => format!("{}: {}{cause}{tail}", headline(f.id, false), f.title),
        Some(f) if f.id == FindingId::OperatorNotLeading && f.title.ends_with("(double handling)") => {
            format!("Every object is handled more than once: {}{tail}", f.title)
        }
        Some(f) => format!("{}: {}{tail}", headline(f.id, true), f.title),
        None if ctx.snapshot.events.get().is_none() => {
            format!("Nothing found hidden, but the events could not be read{tail}")
        }
        None => {
            let warnings = ctx
                .own_events
                .iter()
                .filter(|e| e.type_.as_deref() == Some("Warning"))
                .count();
            format!(
                "Nothing is hidden: {} on this object ({warnings} Warning){tail}",
                count(ctx.own_events.len() as u64, "event")
            )
        }
    }
}

/// What the first finding means for the user, for the headline: the verdict its family states
/// (events not posted, the status not current, nothing handling the object, ...), never more
/// than that finding shows; `maybe` for a warning (the evidence only suggests it).
fn headline(id: FindingId, maybe: bool) -> &'static str {
    match (id, maybe) {
        (
            FindingId::RbacEvents
            | FindingId::EventPostFailed
            | FindingId::PostingDisabled
            | FindingId::ErrorsNotPosted,
            false,
        ) => "Events are not posted",
        (
            FindingId::RbacEvents
            | FindingId::EventPostFailed
            | FindingId::PostingDisabled
            | FindingId::ErrorsNotPosted,
            true,
        ) => "Events may not be posted",
        (FindingId::EventsExpired, _) => "The events have expired",
        (FindingId::EventsElsewhere, _) => "Events exist where a filter or describe does not show them",
        (FindingId::CallerCannotListEvents, _) => "You cannot see the events",
        (FindingId::StatusPruned, false) => "Status fields are dropped",
        (FindingId::StatusPruned, true) => "Status fields are dropped (the verdict is not affected)",
        (FindingId::AcceptedStale, _) => "The handler has not accepted the current spec",
        (FindingId::PatchRejected, _) => "No handling cycle completes",
        (FindingId::DeletionPending, _) => "The object is Terminating",
        (FindingId::OperatorNotLeading, false) => "No replica handles",
        (FindingId::OperatorNotLeading, true) => "The operator's leadership may keep it from handling",
        (FindingId::OperatorNotFound | FindingId::OperatorNotRunning | FindingId::OperatorNotWatching, false) => {
            "Nothing handles the object"
        }
        (FindingId::OperatorNotFound | FindingId::OperatorNotRunning | FindingId::OperatorNotWatching, true) => {
            "The object may not be handled"
        }
        (FindingId::RbacResource, _) => "The operator may not handle the object",
    }
}

/// The event TTL as `--event-ttl` writes it: `1h`, `90m`, `5s`.
fn human_duration(d: Duration) -> String {
    crate::time::human(d, crate::time::DurationStyle::Exact)
}

fn finding(id: FindingId, severity: Severity, title: String, evidence: Vec<String>, fix: Option<String>) -> Finding {
    Finding {
        id,
        severity,
        title,
        evidence,
        fix,
    }
}

impl Ctx<'_> {
    /// The Deployment whose settings (RBAC, `--events`, Kopf's source) decide what is posted:
    /// the resolved one, never the Deployment that stands by while a process outside the
    /// cluster handles.
    fn handler(&self) -> Option<&OperatorRef> {
        (self.judged.resolution.verdict == Resolved::Deployment)
            .then_some(self.operator.as_ref())
            .flatten()
    }
}

/// The finding that states `status`'s first reason, when one does: `patch-rejected`,
/// `deletion-pending`, `status-pruned`, else `accepted-stale` for a verdict that says the handler
/// has not accepted the current spec.
fn verdict_finding(code: &str) -> FindingId {
    match code {
        "patch-rejected" => FindingId::PatchRejected,
        "deletion-pending" => FindingId::DeletionPending,
        "status-pruned" => FindingId::StatusPruned,
        _ => FindingId::AcceptedStale,
    }
}

/// For the families' unit tests: a family's function over one bundle of tests/fixtures.
#[cfg(test)]
mod fixture {
    use super::{Ctx, Finding, FindingId, Options, Severity};
    use crate::evidence::Snapshot;

    /// The bundle tests/fixtures/`dir`, read as `--bundle` reads it.
    pub(super) fn bundle(dir: &str) -> Snapshot {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(dir);
        crate::evidence::bundle::read(&path).unwrap_or_else(|e| panic!("{dir}: {e}"))
    }

    /// What `check` finds for the object the bundle's `expected.json` names (`NS/NAME`): each
    /// finding's id and severity, in its order.
    pub(super) fn run(dir: &str, check: impl Fn(&Ctx<'_>) -> Vec<Finding>) -> Vec<(FindingId, Severity)> {
        let snapshot = bundle(dir);
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(dir)
            .join("expected.json");
        let expected: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let key = expected["object"].as_str().unwrap();
        let objects = snapshot.microservices.get().unwrap();
        let obj = objects
            .iter()
            .find(|o| o.key() == key)
            .unwrap_or_else(|| panic!("{dir}: no {key}"));
        let ctx = Ctx::new(&snapshot, obj, Options::default());
        check(&ctx).into_iter().map(|f| (f.id, f.severity)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes() {
        let mut r = Report {
            schema_version: 1,
            object: "a/b".into(),
            summary: String::new(),
            findings: vec![],
            gaps: vec![],
            notes: vec![],
            operator: None,
            operator_resolution: Default::default(),
            decided: true,
        };
        assert_eq!(r.exit_code(), 0);
        r.decided = false;
        assert_eq!(r.exit_code(), 3);
        r.findings.push(finding(
            FindingId::RbacEvents,
            Severity::Warning,
            "t".into(),
            vec![],
            None,
        ));
        assert_eq!(r.exit_code(), 1);
    }

    /// Each headline states its finding's family, never "hidden or stale" for everything.
    #[test]
    fn headlines_state_the_first_findings_family() {
        assert_eq!(headline(FindingId::RbacEvents, false), "Events are not posted");
        assert_eq!(
            headline(FindingId::OperatorNotRunning, false),
            "Nothing handles the object"
        );
        assert_eq!(
            headline(FindingId::AcceptedStale, false),
            "The handler has not accepted the current spec"
        );
    }

    #[test]
    fn durations() {
        assert_eq!(human_duration(Duration::hours(1)), "1h");
        assert_eq!(human_duration(Duration::minutes(90)), "90m");
        assert_eq!(human_duration(Duration::seconds(5)), "5s");
    }
}
