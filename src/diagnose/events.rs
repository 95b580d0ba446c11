//! `explain-events`: why is there no Warning event on a Microservice? Findings over a
//! [`Snapshot`] (pure, no I/O), each with a stable id (docs/contracts.md), a severity, the
//! evidence it rests on (log lines with their time and clock, access reviews with their method,
//! settings with file:line, field values) and a concrete fix.
//!
//! This file assembles the report: the checks of `super::findings` (one file per finding id)
//! run in the one declared order, `ORDER`, then the named passes over what they found
//! (`POST_PASSES`), then the headline, the gaps and the exit code.

use serde::Serialize;

pub use super::finding::{Finding, FindingId, Severity};
pub use super::findings::ctx::Options;
use super::findings::{
    Ctx, accepted_stale, caller_cannot_list_events, deletion_pending, errors_not_posted, event_post_denied,
    event_post_failed, events_elsewhere, events_expired, handler_failing, handler_filtered, operator_not_found,
    operator_not_leading, operator_not_running, operator_not_watching, patch_rejected, posting_disabled, rbac_events,
    rbac_resource, status_pruned,
};
use crate::evidence::resolve::Verdict as Resolved;
use crate::evidence::{Gap, GapReason, Snapshot};
use crate::resource::MicroserviceObject;
use crate::text::count;

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
    /// Contracts: 0 nothing hidden, 1 something hidden or stale (a problem or a warning), or
    /// the object not handled by design (`handler-filtered`: nothing failed, but nothing serves
    /// it, as `status --exit-code` says of its `never-handled`; 0 would be an all-clear), 3
    /// could not decide.
    pub fn exit_code(&self) -> u8 {
        if self
            .findings
            .iter()
            .any(|f| f.severity > Severity::Ok || f.id == FindingId::HandlerFiltered)
        {
            1
        } else if self.decided {
            0
        } else {
            3
        }
    }
}

/// A check: the findings of one id about the object ([`super::findings`]).
pub(crate) type Check = fn(&Ctx<'_>) -> Vec<Finding>;

/// The checks, in the order their findings are listed (before [`sort_by_severity`], which keeps
/// this order within a severity): the one place that orders them, in causal order (issue 18):
/// what keeps the object from being handled first (a pending deletion, no operator, the operator
/// not running — a crash loop, scaled to 0, unschedulable, an image pull —, not watching the
/// namespace, not leading, not allowed to handle it), then the handler failing (its own error),
/// then the handler's cycle failing to save
/// (a refused PATCH, a status the CRD's schema drops), then why its events are missing (refused, and by whom; posting off;
/// expired; under another object or type), and last the verdict that follows from them
/// (`accepted-stale`), so that the headline names the cause first. An id may have more than one
/// check where its findings of different cases stand apart: a process outside the cluster says
/// that it runs before that it leads, and the double handling of several operators comes after
/// both.
pub(crate) const ORDER: &[(FindingId, Check)] = &[
    // First: a pending deletion is `status`'s verdict too (`terminating`).
    (FindingId::DeletionPending, deletion_pending::check),
    // The operator: none, not running, not watching, not leading.
    (FindingId::OperatorNotFound, operator_not_found::check),
    (FindingId::OperatorNotRunning, operator_not_running::of_process),
    (FindingId::OperatorNotRunning, operator_not_running::of_deployment),
    (FindingId::OperatorNotWatching, operator_not_watching::check),
    // Right after: the operator watches, but its handlers' filters exclude the object.
    (FindingId::HandlerFiltered, handler_filtered::check),
    (FindingId::OperatorNotLeading, operator_not_leading::check),
    (FindingId::OperatorNotLeading, operator_not_leading::several_operators),
    (FindingId::RbacResource, rbac_resource::check),
    // The handler runs and fails: its own error, the failure whose events the checks below
    // look for (issue 18 trial P4: before `errors-not-posted`, never after).
    (FindingId::HandlerFailing, handler_failing::check),
    // The handler's cycle runs but is not saved, or not as written (a cycle that cannot
    // complete, a status the CRD's schema drops: `status`'s first reason too).
    (FindingId::PatchRejected, patch_rejected::check),
    (FindingId::StatusPruned, status_pruned::check),
    // Its events: refused (by admission, by RBAC), posting off, expired, elsewhere.
    (FindingId::EventPostDenied, event_post_denied::check),
    (FindingId::RbacEvents, rbac_events::check),
    (FindingId::EventPostFailed, event_post_failed::check),
    (FindingId::PostingDisabled, posting_disabled::check),
    (FindingId::ErrorsNotPosted, errors_not_posted::check),
    (FindingId::EventsExpired, events_expired::check),
    (FindingId::EventsElsewhere, events_elsewhere::check),
    (FindingId::CallerCannotListEvents, caller_cannot_list_events::check),
    // Last: the verdict, the consequence of the causes above.
    (FindingId::AcceptedStale, accepted_stale::check),
];

/// A pass over the findings of every check, in [`ORDER`]'s order: what one finding means for
/// another.
pub(crate) type PostPass = fn(&Ctx<'_>, &mut Vec<Finding>);

/// The passes, in the order they run.
pub(crate) const POST_PASSES: &[PostPass] = &[
    double_handling_replaces_leading_ok,
    refused_posts_explain_errors_not_posted,
    never_posted_is_not_expired,
    a_filter_excluding_the_object_voids_its_event_problems,
    no_ok_a_problem_refutes,
    stale_names_the_blocking_operator,
    sort_by_severity,
    a_filter_excluding_the_object_leads_the_fine,
    a_pending_deletion_leads,
];

/// The `ok` findings whose claim a problem of another check refutes, with the words that
/// replace the claim: `(problem, ok, the ok's new title)`. Issue 18 item 11: with the events rule
/// removed, `rbac-events` a problem, `errors-not-posted` may not say "no handler failure went
/// unposted": any failure would have been refused.
const REFUTED_BY: &[(FindingId, FindingId, &str)] = &[
    (
        FindingId::RbacEvents,
        FindingId::ErrorsNotPosted,
        "no handler failure in the logs is without its event, but none could be posted now: the operator may not create events (see rbac-events)",
    ),
    (
        FindingId::EventPostDenied,
        FindingId::ErrorsNotPosted,
        "no handler failure in the logs is without its event, but none could be posted now: the operator's event POSTs are refused (see event-post-denied)",
    ),
    (
        FindingId::EventPostFailed,
        FindingId::ErrorsNotPosted,
        "no handler failure in the logs is without its event, but the operator's event POSTs fail (see event-post-failed)",
    ),
];

/// No `ok` beside a problem that refutes it ([`REFUTED_BY`], the first pair that applies): the
/// `ok` keeps its evidence and says what the problem means for it.
#[allow(
    clippy::ptr_arg,
    reason = "every pass has PostPass's signature; some remove findings"
)]
fn no_ok_a_problem_refutes(_: &Ctx<'_>, findings: &mut Vec<Finding>) {
    let problems: Vec<(FindingId, String)> = findings
        .iter()
        .filter(|f| f.severity == Severity::Problem)
        .map(|f| (f.id, format!("{}: {}", f.id, f.title)))
        .collect();
    for f in findings.iter_mut().filter(|f| f.severity == Severity::Ok) {
        let refuted = REFUTED_BY.iter().find_map(|(problem, ok, title)| {
            let (_, cause) = problems.iter().find(|(id, _)| id == problem).filter(|_| *ok == f.id)?;
            Some((cause.clone(), *title))
        });
        if let Some((cause, title)) = refuted {
            f.evidence.push(format!("was: {}", f.title));
            f.evidence.push(cause);
            f.title = title.to_string();
        }
    }
}

/// The findings about the object: every check of [`ORDER`], then [`POST_PASSES`].
fn findings(ctx: &Ctx<'_>) -> Vec<Finding> {
    let mut findings = Vec::new();
    for (id, check) in ORDER {
        let found = check(ctx);
        debug_assert!(found.iter().all(|f| f.id == *id), "{id}'s check found another id");
        findings.extend(found);
    }
    for pass in POST_PASSES {
        pass(ctx, &mut findings);
    }
    findings
}

/// Two operators that serve the namespace and both handled the object: the double handling
/// replaces a leadership `ok` of the one diagnosed (its `--standalone` pauses nothing, but
/// another operator handles too).
fn double_handling_replaces_leading_ok(ctx: &Ctx<'_>, findings: &mut Vec<Finding>) {
    if operator_not_leading::several_handle(ctx) {
        findings.retain(|x| !(x.id == FindingId::OperatorNotLeading && x.severity == Severity::Ok));
    }
}

/// Refused event POSTs (`rbac-events` a problem, `event-post-failed` not ok), when they are why
/// handler errors have no event, are the cause `errors-not-posted` names, not the posting
/// settings ([`errors_not_posted::because`]).
#[allow(
    clippy::ptr_arg,
    reason = "every pass has PostPass's signature; some remove findings"
)]
fn refused_posts_explain_errors_not_posted(ctx: &Ctx<'_>, findings: &mut Vec<Finding>) {
    let Some(because) = errors_not_posted::because(ctx, findings) else {
        return;
    };
    for f in findings.iter_mut().filter(|f| f.id == FindingId::ErrorsNotPosted) {
        *f = because.clone();
    }
}

/// The problems that say the object's handler errors were never posted as events: the errors
/// only logged (`errors-not-posted`), posting off (`posting-disabled`), the POSTs failing or
/// refused by the operator's own log lines (`event-post-failed`, `event-post-denied`).
const NEVER_POSTED: &[FindingId] = &[
    FindingId::ErrorsNotPosted,
    FindingId::PostingDisabled,
    FindingId::EventPostFailed,
    FindingId::EventPostDenied,
];

/// `events-expired` says the old failures' events were posted and are gone; a problem of
/// [`NEVER_POSTED`] says they were never posted. Both cannot hold (issue 18 trial P5): the
/// problem rests on the operator's settings or its own log lines about posting, the expiry only
/// on the failures' age, so `events-expired` goes, and the problem says what became of the
/// old failures.
fn never_posted_is_not_expired(_: &Ctx<'_>, findings: &mut Vec<Finding>) {
    let Some(expired) = findings.iter().position(|f| f.id == FindingId::EventsExpired) else {
        return;
    };
    let Some(never) = findings
        .iter()
        .position(|f| f.severity == Severity::Problem && NEVER_POSTED.contains(&f.id))
    else {
        return;
    };
    let old = findings[expired].title.clone();
    let note = format!(
        "{} (events-expired left out: they were never posted, so none expired)",
        old.split_once(';').map_or(old.as_str(), |(failures, _)| failures)
    );
    findings[never].evidence.push(note);
    findings.remove(expired);
}

/// A problem of the operator itself (not running, not leading, not watching) is why nothing
/// handles: `accepted-stale`'s fix then points to it (the first found) rather than to a restart
/// ([`accepted_stale::fix`]).
#[allow(
    clippy::ptr_arg,
    reason = "every pass has PostPass's signature; some remove findings"
)]
fn stale_names_the_blocking_operator(ctx: &Ctx<'_>, findings: &mut Vec<Finding>) {
    let Some(blocking) = findings
        .iter()
        .find(|f| f.severity == Severity::Problem && f.id.as_str().starts_with("operator-not-"))
        .map(|f| f.id)
    else {
        return;
    };
    for f in findings.iter_mut().filter(|f| f.id == FindingId::AcceptedStale) {
        f.fix = Some(accepted_stale::fix(ctx, Some(blocking)));
    }
}

/// Problems first, then warnings, then ok; within a severity, [`ORDER`]'s order (a stable sort).
#[allow(
    clippy::ptr_arg,
    reason = "every pass has PostPass's signature; some remove findings"
)]
fn sort_by_severity(_: &Ctx<'_>, findings: &mut Vec<Finding>) {
    findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
}

/// The findings about the object's events (posting them, finding them): what
/// [`a_filter_excluding_the_object_voids_its_event_problems`] voids.
const EVENT_FINDINGS: &[FindingId] = &[
    FindingId::EventPostDenied,
    FindingId::RbacEvents,
    FindingId::EventPostFailed,
    FindingId::PostingDisabled,
    FindingId::ErrorsNotPosted,
    FindingId::EventsExpired,
    FindingId::EventsElsewhere,
];

/// Every handler excludes the object by its filters (`handler-filtered` ok, issue 18 D2): Kopf
/// never handles it, so no event about it is due, and no event problem is its (a refused or
/// disabled posting, unposted, expired or misplaced events). Each such warning or problem is
/// said as `ok` for this object, its title saying why, with its evidence kept and what it was
/// (it still matters to the objects the handlers select); its fix goes (nothing to do for this
/// object).
#[allow(
    clippy::ptr_arg,
    reason = "every pass has PostPass's signature; some remove findings"
)]
fn a_filter_excluding_the_object_voids_its_event_problems(ctx: &Ctx<'_>, findings: &mut Vec<Finding>) {
    if !findings
        .iter()
        .any(|f| f.id == FindingId::HandlerFiltered && f.severity == Severity::Ok)
    {
        return;
    }
    for f in findings
        .iter_mut()
        .filter(|f| f.severity > Severity::Ok && EVENT_FINDINGS.contains(&f.id))
    {
        f.evidence.push(format!("was {}: {}", f.severity.as_str(), f.title));
        if let Some(fix) = f.fix.take() {
            f.evidence
                .push(format!("its fix, for the objects the handlers select: {fix}"));
        }
        f.title = format!(
            "no event about {} is due: its handlers' filters exclude it (see handler-filtered); for the objects they select: {}",
            ctx.key, f.title
        );
        f.severity = Severity::Ok;
    }
}

/// The handlers exclude the object by design (`handler-filtered`, severity ok): that is the
/// answer to why it was never handled, so it leads the findings of its severity — an all-ok
/// report opens with the filter, not with "the operator runs" ([`ORDER`] lists the operator's
/// checks before it, as causes when they fail).
fn a_filter_excluding_the_object_leads_the_fine(_: &Ctx<'_>, findings: &mut Vec<Finding>) {
    let filtered = |f: &Finding| f.id == FindingId::HandlerFiltered && f.severity == Severity::Ok;
    if let Some(at) = findings.iter().position(filtered)
        && let Some(first_ok) = findings.iter().position(|f| f.severity == Severity::Ok)
    {
        let finding = findings.remove(at);
        findings.insert(first_ok, finding);
    }
}

/// A pending deletion is `status`'s verdict (`terminating`) and what the user sees first: its
/// finding leads when it is a problem; every other verdict follows its causes ([`ORDER`]).
fn a_pending_deletion_leads(ctx: &Ctx<'_>, findings: &mut Vec<Finding>) {
    let verdict = &ctx.judged.assessment;
    if verdict.reasons.first().is_some_and(|r| r.code == "deletion-pending")
        && let Some(at) = findings
            .iter()
            .position(|f| f.id == FindingId::DeletionPending && f.severity == Severity::Problem)
    {
        let f = findings.remove(at);
        findings.insert(0, f);
    }
}

/// The cause `report` names first: its first finding when that is a warning or a problem
/// other than the verdict (`accepted-stale`), which follows from its causes. `status NAME`
/// leads its Why with it.
pub fn cause(report: &Report) -> Option<&Finding> {
    report
        .findings
        .first()
        .filter(|f| f.severity > Severity::Ok && f.id != FindingId::AcceptedStale)
}

/// Explains `obj` from `snapshot`.
pub fn explain(snapshot: &Snapshot, obj: &MicroserviceObject, options: Options) -> Report {
    let ctx = Ctx::new(snapshot, obj, options);
    let findings = findings(&ctx);
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
        gaps: gaps(&ctx),
        notes,
        operator: ctx.resolution().operator.clone(),
        operator_resolution: ctx.resolution().clone(),
        decided: decided(&ctx),
    }
}

/// What the evidence lacks (not-collected parts left out): the snapshot's gaps, the resolved
/// operator's logs, and an ambiguous operator.
fn gaps(ctx: &Ctx<'_>) -> Vec<Gap> {
    let mut gaps: Vec<Gap> = ctx
        .snapshot
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
    if ctx.resolution().verdict == Resolved::Ambiguous {
        gaps.push(Gap {
            evidence: "operator".into(),
            reason: GapReason::Failed(ctx.resolution().summary.clone()),
        });
    }
    gaps
}

/// Whether the evidence could decide: the events read, the operator decided (none serves, or
/// its logs read), and its logs not silent by its log level ([`quiet_logs`]).
fn decided(ctx: &Ctx<'_>) -> bool {
    quiet_logs(ctx).is_none()
        && ctx.snapshot.events.get().is_some()
        && match ctx.resolution().verdict {
            Resolved::Unknown | Resolved::Ambiguous => false,
            Resolved::NoneServes => true,
            Resolved::Deployment | Resolved::Process => ctx.logs.is_ok(),
        }
}

/// The verdict's `operator-logs-quiet` reason, when it is its first: the operator logs above
/// INFO, so its logs cannot show how the object was handled ([`crate::diagnose::verdict`]).
fn quiet_logs<'c>(ctx: &'c Ctx<'_>) -> Option<&'c crate::diagnose::staleness::Reason> {
    ctx.judged
        .assessment
        .reasons
        .first()
        .filter(|r| r.code == "operator-logs-quiet")
}

fn summary(ctx: &Ctx<'_>, findings: &[Finding]) -> String {
    let failures = ctx.failures();
    let recent = failures.iter().filter(|l| ctx.within_ttl(l)).count();
    let ttl = crate::time::human(ctx.options.event_ttl, crate::time::DurationStyle::Exact);
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
    // The cause first (explain() put the findings in causal order), then what follows from it:
    // the verdict (`accepted-stale`); without one (or after a pending deletion), a cause the
    // verdict's own finding (a deletion, a dropped status, a refused PATCH) stands before: the
    // first other problem, never left out of the headline.
    let stale = findings
        .iter()
        .find(|c| c.severity == Severity::Problem && c.id == FindingId::AcceptedStale);
    // The handler's own error first, then why it has no event (the question explain-events
    // answers): the next finding above ok, in its own words.
    let unposted = top.filter(|f| f.id == FindingId::HandlerFailing).and_then(|f| {
        findings
            .iter()
            .find(|c| c.severity > Severity::Ok && c.id != f.id && c.id != FindingId::AcceptedStale)
    });
    let cause = match top {
        Some(f) if f.id == FindingId::AcceptedStale => String::new(),
        Some(_) if let Some(next) = unposted => {
            let what = headline(next.id, next.severity < Severity::Problem);
            let mut chars = what.chars();
            let what: String = chars
                .next()
                .map(|c| c.to_lowercase().chain(chars).collect())
                .unwrap_or_default();
            let so = stale.map(|stale| format!("; so {}", stale.title)).unwrap_or_default();
            // `also:` keeps it in the short form's fitted headline (the question is the events').
            format!("; also: {what}: {}{so}", next.title)
        }
        Some(f) => match stale.filter(|_| f.id != FindingId::DeletionPending) {
            Some(stale) => format!("; so {}", stale.title),
            None => findings
                .iter()
                .find(|c| c.severity == Severity::Problem && c.id != f.id && c.id != FindingId::AcceptedStale)
                .filter(|_| {
                    f.severity == Severity::Problem
                        && matches!(
                            f.id,
                            FindingId::DeletionPending | FindingId::StatusPruned | FindingId::PatchRejected
                        )
                })
                .map(|c| format!("; also: {}", c.title))
                .unwrap_or_default(),
        },
        None => String::new(),
    };
    // Several operators serve alike (the resolver's tie): said in the headline, never
    // "Nothing is hidden" about an operator that was not decided.
    // Double handling names the operators that serve the namespace already: the ambiguity is
    // said without naming them twice (issue 20; the `Operator:` line gives the resolution).
    let double_handling = |f: &Finding| f.id == FindingId::OperatorNotLeading && f.title.ends_with("(double handling)");
    let tail = match ctx.resolution().verdict {
        Resolved::Ambiguous if top.is_some_and(double_handling) => format!("{tail}; the operator is ambiguous"),
        Resolved::Ambiguous => format!("{tail}; the operator is ambiguous: {}", ctx.resolution().summary),
        _ => tail,
    };
    let by_design = findings.iter().find(|f| f.id == FindingId::HandlerFiltered);
    match top {
        None if ctx.resolution().verdict == Resolved::Ambiguous => {
            format!("Could not decide which operator handles the object{tail}")
        }
        Some(f) if f.severity == Severity::Problem => format!("{}{cause}{tail}", lead(headline(f.id, false), &f.title)),
        Some(f) if double_handling(f) => {
            format!("This object is handled more than once: {}{tail}", f.title)
        }
        Some(f) => format!("{}{cause}{tail}", lead(headline(f.id, true), &f.title)),
        // The handlers exclude the object by design: an explanation, never "Nothing is hidden".
        None if let Some(f) = by_design => format!("{}{tail}", lead(headline(f.id, false), &f.title)),
        None if quiet_logs(ctx).is_some() => format!(
            "Nothing found hidden, but {} (status: {} [operator-logs-quiet]){tail}",
            quiet_logs(ctx).map_or("", |r| r.message.as_str()),
            ctx.judged.assessment.verdict.as_str()
        ),
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

/// `HEADLINE: TITLE`, without saying a word twice: a title that opens with the headline's last
/// word and a colon (`deletion-pending`'s `Terminating: deletion requested ...` under `The
/// object is Terminating`) loses that opening (issue 18 trial P7).
fn lead(headline: &str, title: &str) -> String {
    let last = headline.rsplit(' ').next().unwrap_or(headline);
    let title = match title.split_once(": ") {
        Some((opening, rest)) if opening.eq_ignore_ascii_case(last) || opening.eq_ignore_ascii_case(headline) => rest,
        _ => title,
    };
    format!("{headline}: {title}")
}

/// What the first finding means for the user, for the headline: the verdict its family states
/// (events not posted, the status not current, nothing handling the object, ...), never more
/// than that finding shows; `maybe` for a warning (the evidence only suggests it).
fn headline(id: FindingId, maybe: bool) -> &'static str {
    match (id, maybe) {
        (
            FindingId::RbacEvents
            | FindingId::EventPostFailed
            | FindingId::EventPostDenied
            | FindingId::PostingDisabled
            | FindingId::ErrorsNotPosted,
            false,
        ) => "Events are not posted",
        (
            FindingId::RbacEvents
            | FindingId::EventPostFailed
            | FindingId::EventPostDenied
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
        (FindingId::HandlerFailing, _) => "The handler fails",
        (FindingId::HandlerFiltered, false) => "Not handled by design",
        (FindingId::HandlerFiltered, true) => "The operator's handler filters may exclude the object",
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
        r.findings.push(Finding {
            id: FindingId::RbacEvents,
            severity: Severity::Warning,
            title: "t".into(),
            evidence: vec![],
            fix: None,
        });
        assert_eq!(r.exit_code(), 1);
        // Not handled by design: an `ok` that is never the all-clear.
        r.findings[0].severity = Severity::Ok;
        assert_eq!(r.exit_code(), 3);
        r.decided = true;
        assert_eq!(r.exit_code(), 0);
        r.findings[0].id = FindingId::HandlerFiltered;
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

    fn bundle(dir: &str) -> Snapshot {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(dir);
        crate::evidence::bundle::read(&path).unwrap()
    }

    /// Issue 18 D2: the operator may not create events (its SubjectAccessReviews denied) and
    /// its handlers' filters exclude store/ledger-api: the object's headline is the filter, and
    /// `rbac-events` is no problem of it (ok, saying why, its fix gone), while catalog-api,
    /// which the handlers select, keeps `rbac-events` as its problem.
    #[test]
    fn a_filter_excluding_the_object_voids_its_event_problems() {
        let mut s = bundle("bundles-synthetic/handler-filtered-labels");
        let mut reviews = s.rbac.access_reviews.get().unwrap().clone();
        for r in &mut reviews {
            if r.spec.resource_attributes.as_ref().and_then(|a| a.resource.as_deref()) == Some("events") {
                r.status = Some(k8s_openapi::api::authorization::v1::SubjectAccessReviewStatus {
                    allowed: false,
                    ..Default::default()
                });
            }
        }
        s.rbac.access_reviews = crate::evidence::Evidence::Present(reviews);
        let objects = s.microservices.get().unwrap().clone();
        let by_name = |name: &str| {
            objects
                .iter()
                .find(|o| o.metadata.name.as_deref() == Some(name))
                .unwrap()
                .clone()
        };
        let report = explain(&s, &by_name("ledger-api"), Default::default());
        assert!(
            report.summary.starts_with("Not handled by design"),
            "{}",
            report.summary
        );
        assert_eq!(
            report.findings[0].id,
            FindingId::HandlerFiltered,
            "{:?}",
            report.findings
        );
        let rbac = report
            .findings
            .iter()
            .find(|f| f.id == FindingId::RbacEvents)
            .expect("rbac-events");
        assert_eq!(rbac.severity, Severity::Ok, "{rbac:?}");
        assert!(
            rbac.title.starts_with("no event about store/ledger-api is due"),
            "{rbac:?}"
        );
        assert_eq!(rbac.fix, None);
        assert!(
            report
                .findings
                .iter()
                .all(|f| f.severity == Severity::Ok || !EVENT_FINDINGS.contains(&f.id)),
            "{:?}",
            report.findings
        );
        let report = explain(&s, &by_name("catalog-api"), Default::default());
        let rbac = report
            .findings
            .iter()
            .find(|f| f.id == FindingId::RbacEvents)
            .expect("rbac-events");
        assert_eq!(rbac.severity, Severity::Problem, "{rbac:?}");
    }

    /// Issue 18 trial P7: a pending deletion's headline says "Terminating" once, the finding's
    /// title keeps its words; other titles are left whole.
    #[test]
    fn a_pending_deletions_headline_says_terminating_once() {
        let s = bundle("bundles-captured/kopf-finalizer-terminating");
        let obj = s.microservices.get().unwrap()[0].clone();
        let report = explain(&s, &obj, Default::default());
        assert!(
            report
                .summary
                .starts_with("The object is Terminating: deletion requested at 2026-12-01T03:55:38Z"),
            "{}",
            report.summary
        );
        assert_eq!(report.summary.matches("Terminating").count(), 1, "{}", report.summary);
        assert!(report.findings[0].title.starts_with("Terminating: deletion requested"));
        assert_eq!(
            lead("Events are not posted", "handler errors are only logged: x"),
            "Events are not posted: handler errors are only logged: x"
        );
    }

    /// Issue 18 trial P4: a handler retrying whose errors Kopf 1.44 does not post: the handler's
    /// own error first (`handler-failing`, quoted), then why it has no event, then the verdict;
    /// the headline names the error, then the unposted errors.
    #[test]
    fn the_handlers_own_error_precedes_errors_not_posted() {
        let s = bundle("bundles-synthetic/kopf-1.44-errors-not-posted");
        let obj = s.microservices.get().unwrap()[0].clone();
        let report = explain(&s, &obj, Default::default());
        let ids: Vec<(&str, Severity)> = report.findings.iter().map(|f| (f.id.as_str(), f.severity)).collect();
        assert_eq!(
            ids[..3],
            [
                ("handler-failing", Severity::Problem),
                ("errors-not-posted", Severity::Problem),
                ("accepted-stale", Severity::Problem)
            ]
        );
        assert!(
            report.summary.starts_with(
                "The handler fails: \"registry unreachable\" from handler 'accept': 8 failures since 2026-11-29T17:13:32Z, retrying; also: events are not posted: handler errors are only logged — Kopf 1.44"
            ),
            "{}",
            report.summary
        );
        assert_eq!(cause(&report).map(|f| f.id), Some(FindingId::HandlerFailing));
    }

    /// Issue 18 trial P5: the same failures 2 h later. Kopf 1.44 never posted them
    /// (`errors-not-posted` a problem, by the version's default), so `events-expired` ("their
    /// events are gone") is not printed beside it; the problem says what became of them.
    #[test]
    fn never_posted_errors_are_not_also_expired() {
        let mut s = bundle("bundles-synthetic/kopf-1.44-errors-not-posted");
        let obj = s.microservices.get().unwrap()[0].clone();
        s.captured_at = s.now().map(|t| t + chrono::Duration::hours(2));
        let report = explain(&s, &obj, Default::default());
        let unposted = report
            .findings
            .iter()
            .find(|f| f.id == FindingId::ErrorsNotPosted)
            .expect("errors-not-posted");
        assert_eq!(unposted.severity, Severity::Problem, "{unposted:?}");
        assert!(
            report.findings.iter().all(|f| f.id != FindingId::EventsExpired),
            "{:?}",
            report.findings
        );
        assert!(
            unposted.evidence.iter().any(|e| e
                == "8 handler failures are older than the event TTL (1h) (events-expired left out: they were never posted, so none expired)"),
            "{:?}",
            unposted.evidence
        );
        // Posting that works (the real bundle's failures, 2 h later, no setting that keeps them
        // out): events-expired stands, errors-not-posted is ok.
        let report = explain(
            &bundle("bundles-synthetic/events-expired"),
            &bundle("bundles-synthetic/events-expired").microservices.get().unwrap()[0].clone(),
            Default::default(),
        );
        assert!(
            report
                .findings
                .iter()
                .any(|f| f.id == FindingId::EventsExpired && f.severity == Severity::Warning),
            "{:?}",
            report.findings
        );
    }

    mod with_the_resolver {
        //! `operator-not-running` and the report over what the resolver and the live gathering
        //! give (here, beside `explain`, as they read the whole report).

        use serde_json::json;

        use crate::evidence::resolve::tests::{deployment, lease, others, snapshot, todo_api};
        use crate::evidence::{Evidence, GapReason};
        use crate::logs::LogSource;
        use crate::logs::file::FILE_CONTAINER;

        /// Two that serve alike: explain-events says nothing about either, names the ambiguity as a
        /// gap and cannot decide (exit 3).
        #[test]
        fn an_ambiguous_operator_is_a_gap_and_undecided() {
            let mut s = snapshot(vec![
                deployment("a", "op", json!(["kopf", "run", "-A", "op.py"])),
                deployment("b", "op", json!(["kopf", "run", "-A", "op.py"])),
            ]);
            s.microservices = Evidence::Present(vec![todo_api()]);
            let report = crate::diagnose::events::explain(&s, &todo_api(), Default::default());
            assert_eq!(report.operator, None);
            assert_eq!(
                report.operator_resolution.verdict,
                crate::evidence::resolve::Verdict::Ambiguous
            );
            assert!(
                report
                    .gaps
                    .iter()
                    .any(|g| g.evidence == "operator" && g.to_string().contains("--operator")),
                "{:?}",
                report.gaps
            );
            assert!(
                report
                    .findings
                    .iter()
                    .all(|f| !f.id.as_str().starts_with("operator-") && f.id != "rbac-events"),
                "{:?}",
                report.findings
            );
            assert_eq!(report.exit_code(), 3);
        }

        /// A laptop `operate` whose log is given but whose Lease expired: it stopped, and nothing
        /// else serves the namespace: a problem, not "ok".
        #[test]
        fn a_stopped_laptop_operate_is_a_problem() {
            let mut s = snapshot(others());
            s.microservices = Evidence::Present(vec![todo_api()]);
            s.operator.leases = Evidence::Present(vec![lease(
                "todo",
                "alice-laptop_0123456789abcdef",
                "2026-12-01T08:50:00Z",
            )]);
            s.operator.logs = Evidence::Present(vec![LogSource {
            pod: "op.log".into(),
            container: FILE_CONTAINER.into(),
            previous: false,
            text: "2026-12-01T08:41:00.000Z  INFO Became the leader: acquired the lease lease=todo/microservice-operator identity=alice-laptop_0123456789abcdef term=1\n2026-12-01T08:41:01.000Z  INFO [todo/todo-api] Creation is processed: 1 succeeded; 0 failed. handler=accept cause=create\n".into(),
        }]);
            let report = crate::diagnose::events::explain(&s, &todo_api(), Default::default());
            assert_eq!(
                report.operator.as_deref(),
                Some("process/alice-laptop_0123456789abcdef")
            );
            let running = report
                .findings
                .iter()
                .find(|f| f.id == "operator-not-running")
                .expect("operator-not-running");
            assert_eq!(
                running.severity,
                crate::diagnose::events::Severity::Problem,
                "{running:?}"
            );
            assert!(running.title.contains("stopped"), "{}", running.title);
            // Renewed a moment ago instead: it runs and leads, and nothing is raised.
            s.operator.leases = Evidence::Present(vec![lease(
                "todo",
                "alice-laptop_0123456789abcdef",
                "2026-12-01T08:59:58Z",
            )]);
            let report = crate::diagnose::events::explain(&s, &todo_api(), Default::default());
            assert!(
                report
                    .findings
                    .iter()
                    .all(|f| f.severity == crate::diagnose::events::Severity::Ok),
                "{:?}",
                report.findings
            );
            assert_eq!(report.exit_code(), 0);
        }

        /// Issue 18 trial P2, live against a mocked API: team-delta/api's own Kopf Deployment
        /// (scaled to 0, `--namespace=team-delta`), a cluster-wide Kopf operator whose mounted
        /// source handles Backups only, and one whose scope stayed a literal `$(WATCH)`. What
        /// `status NAME` gathers (the operator, no logs) and what `explain-events` gathers (the
        /// operator, then everything) give the same operator and the same candidates: the
        /// Backups operator is no candidate in either (status read no ConfigMap before, so it
        /// listed 3 candidates to explain-events' 2).
        #[tokio::test]
        async fn status_and_explain_events_gather_the_same_candidates() {
            let source =
                "import kopf\n\n@kopf.on.create('backups.example.io', 'v1', 'backups')\ndef make(**_):\n    pass\n";
            let kopf = |ns: &str, name: &str, args: serde_json::Value, replicas: i32, cm: Option<&str>| {
                let volumes: Vec<serde_json::Value> = cm
                    .map(|c| json!({"name": "code", "configMap": {"name": c}}))
                    .into_iter()
                    .collect();
                json!({"metadata": {"name": name, "namespace": ns},
                    "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                        "template": {"metadata": {"labels": {"app": name}}, "spec": {
                            "containers": [{"name": "operator", "image": "python:3.12", "command": args}],
                            "volumes": volumes}}}})
            };
            let deployments = json!({"kind": "DeploymentList", "apiVersion": "apps/v1", "metadata": {}, "items": [
                kopf("backups", "backup-operator", json!(["kopf", "run", "--all-namespaces", "/src/op.py"]), 1, Some("backup-code")),
                kopf("team-echo", "kopf-op", json!(["kopf", "run", "--namespace=$(WATCH)", "/src/op.py"]), 1, None),
                kopf("team-delta", "api-operator", json!(["kopf", "run", "--standalone", "--namespace=team-delta", "/src/op.py"]), 0, None),
            ]});
            let configmap = json!({"kind": "ConfigMap", "apiVersion": "v1",
                "metadata": {"name": "backup-code", "namespace": "backups"}, "data": {"op.py": source}});
            let not_found = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "not found", "reason": "NotFound", "code": 404});
            let empty = |kind: &str| json!({"kind": kind, "apiVersion": "v1", "metadata": {}, "items": []});
            let (client, _) = crate::evidence::live::fake_api(move |path, _| match path {
                "/apis/apps/v1/deployments" => (200, deployments.to_string()),
                "/api/v1/namespaces/backups/configmaps/backup-code" => (200, configmap.to_string()),
                p if p.ends_with("/pods") => (200, empty("PodList").to_string()),
                p if p.ends_with("/leases") => (200, empty("LeaseList").to_string()),
                _ => (404, not_found.to_string()),
            });
            let plan = crate::evidence::live::LiveScope {
                namespace: Some("team-delta".into()),
                selector: None,
                name: Some("api".into()),
                operator: None,
                context: None,
                server: "https://127.0.0.1:1".into(),
                ..Default::default()
            };
            let mut obj = todo_api();
            obj.metadata.namespace = Some("team-delta".into());
            obj.metadata.name = Some("api".into());
            let mut status = crate::evidence::live::skeleton(&plan);
            status.microservices = Evidence::Present(vec![obj.clone()]);
            crate::evidence::live::add_operator(&client, &mut status, &plan, crate::evidence::live::Logs::None).await;
            let mut explain = crate::evidence::live::skeleton(&plan);
            explain.microservices = Evidence::Present(vec![obj.clone()]);
            crate::evidence::live::add_operator(
                &client,
                &mut explain,
                &plan,
                crate::evidence::live::Logs::WithPrevious,
            )
            .await;
            crate::evidence::live::add_everything(&client, &mut explain).await;
            let (by_status, by_explain) = (status.operator_for(&obj), explain.operator_for(&obj));
            let serving = |r: &crate::evidence::resolve::Resolution| -> Vec<String> {
                r.serving().map(|c| c.operator.clone()).collect()
            };
            assert_eq!(
                serving(&by_status),
                ["team-delta/deployment/api-operator", "team-echo/deployment/kopf-op"],
                "{by_status:?}"
            );
            assert_eq!(serving(&by_status), serving(&by_explain));
            assert_eq!(by_status.candidates, by_explain.candidates);
            for r in [&by_status, &by_explain] {
                assert_eq!(
                    r.operator.as_deref(),
                    Some("team-delta/deployment/api-operator"),
                    "{r:?}"
                );
            }
            // The report names it, and its first finding is the cause: scaled to 0.
            let report = crate::diagnose::events::explain(&explain, &obj, Default::default());
            assert_eq!(report.operator.as_deref(), Some("team-delta/deployment/api-operator"));
            let first = &report.findings[0];
            assert_eq!(
                (first.id.as_str(), first.severity),
                ("operator-not-running", crate::diagnose::events::Severity::Problem),
                "{:?}",
                report.findings
            );
            assert!(first.title.contains("0"), "{}", first.title);
        }

        /// A Deployment the caller may not read is a gap, not "no operator" (which says "install it").
        #[tokio::test]
        async fn an_unreadable_operator_deployment_is_a_gap() {
            let forbidden = serde_json::json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "deployments.apps \"microservice-operator\" is forbidden: User \"dev\" cannot get resource \"deployments\" in API group \"apps\" in the namespace \"ops\"",
            "reason": "Forbidden", "details": {"name": "microservice-operator", "group": "apps", "kind": "deployments"}, "code": 403});
            let empty_list =
                serde_json::json!({"kind": "DeploymentList", "apiVersion": "apps/v1", "metadata": {}, "items": []});
            let (client, _) = crate::evidence::live::fake_api(move |path, _| match path {
                // Cluster-wide list forbidden; the namespace's own list readable but without an operator.
                "/apis/apps/v1/deployments" => (403, forbidden.to_string()),
                "/apis/apps/v1/namespaces/store/deployments" => (200, empty_list.to_string()),
                _ => (403, forbidden.to_string()),
            });
            let bundle = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bundles/healthy");
            let plan = |operator: Option<&str>| crate::evidence::live::LiveScope {
                namespace: Some("store".into()),
                selector: None,
                name: Some("catalog-api".into()),
                operator: operator.map(str::to_string),
                context: None,
                server: "https://127.0.0.1:1".into(),
                resource: Default::default(),
            };
            for operator in [Some("ops/deployment/microservice-operator"), None] {
                let mut snapshot = crate::evidence::bundle::read(&bundle).unwrap();
                crate::evidence::live::add_operator(
                    &client,
                    &mut snapshot,
                    &plan(operator),
                    crate::evidence::live::Logs::None,
                )
                .await;
                let gap = snapshot
                    .operator
                    .deployments
                    .gap()
                    .unwrap_or_else(|| panic!("{operator:?}: a gap"));
                assert!(matches!(gap.reason, GapReason::Forbidden(_)), "{operator:?}: {gap}");
                let obj = snapshot.microservices.get().unwrap()[0].clone();
                let report = crate::diagnose::events::explain(&snapshot, &obj, Default::default());
                assert!(
                    report.findings.iter().all(|f| f.id != "operator-not-found"),
                    "{operator:?}: {:?}",
                    report.findings
                );
                assert_eq!(report.exit_code(), 3, "{operator:?}: undecided without the operator");
            }
        }
    }
}
