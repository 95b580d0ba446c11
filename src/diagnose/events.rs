//! `explain-events`: why is there no Warning event on a Microservice? Findings over a
//! [`Snapshot`] (pure, no I/O), each with a stable id (docs/contracts.md), a severity, the
//! evidence it rests on (log lines with their time and clock, access reviews with their method,
//! settings with file:line, field values) and a concrete fix.
//!
//! The families: the operator (found, running, watching), its RBAC ([`super::rbac`]), what its
//! logs say about event POSTs and handler failures, its posting settings (our `--events` flag;
//! Kopf's source and version, [`crate::kopf::settings`]), the events that exist (elsewhere,
//! expired), and the object's own status ([`super::staleness`]).

use std::collections::BTreeSet;

use chrono::{DateTime, Duration, Utc};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Event, Pod};
use serde::Serialize;

use super::cycles::{log_facts, records};
use super::leading::{self, ElectionLine, PauseEvidence};
use super::rbac::{self, Account, Answer, Need};
use super::staleness::{self, LogFacts, Verdict};
use crate::evidence::operator::{Leadership, OperatorKind, OperatorRef, find_operators};
use crate::evidence::resolve::Verdict as Resolved;
use crate::evidence::{Gap, GapReason, Snapshot, event_time};
use crate::kopf::messages::{EventPostFailure, Lifecycle, Outcome};
use crate::kopf::peering as kopf_peering;
use crate::kopf::settings::{self, KopfVersion, LevelSetting, PostingSetting};
use crate::kopf::wording::VersionRange;
use crate::logs::Record;
use crate::operate::leader::{LEASE_GROUP, LEASE_VERBS};
use crate::resource::{GROUP, MicroserviceObject, PLURAL};
use crate::text::{count, is_are};
use crate::time::rfc3339_millis;

/// Every finding id `explain-events` reports (`findings[].id` of `-o json`): the ids of
/// docs/contracts.md, which users and scripts match on, so an id is never renamed (new ones may be
/// added). `operator-not-leading` ([`super::leading`]) joins this list together with a bundle
/// that proves it. A unit test holds this list and the ids the code emits equal;
/// tests/explain_bundles.rs requires a bundle that must find each listed id.
pub const FINDING_IDS: &[&str] = &[
    "rbac-events",
    "event-post-failed",
    "posting-disabled",
    "errors-not-posted",
    "events-expired",
    "events-elsewhere",
    "caller-cannot-list-events",
    "status-pruned",
    "accepted-stale",
    "operator-not-running",
    "operator-not-watching",
    "rbac-resource",
    "operator-not-found",
    "operator-not-leading",
    "deletion-pending",
    "patch-rejected",
];

/// How bad a finding is (Contracts: `ok` | `warning` | `problem`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Checked, nothing wrong.
    Ok,
    /// Probably hides events, or the evidence only suggests it.
    Warning,
    /// Proven to hide events or make the status stale.
    Problem,
}

impl Severity {
    /// `ok`, `warning`, `problem`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Ok => "ok",
            Severity::Warning => "warning",
            Severity::Problem => "problem",
        }
    }
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Stable id (Contracts), e.g. `rbac-events`.
    pub id: &'static str,
    /// Severity.
    pub severity: Severity,
    /// One sentence.
    pub title: String,
    /// The facts it rests on, one per entry.
    pub evidence: Vec<String>,
    /// What to do (a Role rule as YAML, a settings line, a command); `None` for `ok`.
    pub fix: Option<String>,
}

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
    /// The resolver's answer for this object ([`Snapshot::operator_for`]).
    resolution: crate::evidence::resolve::Resolution,
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

/// Explains `obj` from `snapshot`.
pub fn explain(snapshot: &Snapshot, obj: &MicroserviceObject, options: Options) -> Report {
    let ns = obj.metadata.namespace.as_deref().unwrap_or("");
    let name = obj.metadata.name.as_deref().unwrap_or("");
    let deployments = snapshot.operator.deployments.get().map(Vec::as_slice).unwrap_or(&[]);
    let operators = find_operators(deployments);
    let resolution = snapshot.operator_for(obj);
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
    let sources: Vec<&crate::evidence::LogSource> = snapshot
        .operator
        .logs
        .get()
        .into_iter()
        .flatten()
        .filter(|s| resolution.owns_log(snapshot, s))
        .collect();
    let parsed = crate::logs::copies::records_once(&sources, |s| records(s, snapshot.log_zone(s)));
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
    let ctx = Ctx {
        snapshot,
        obj,
        ns,
        name,
        key: obj.key(),
        now: snapshot.now(),
        options,
        resolution,
        operator,
        deployment,
        lines,
        unattributed,
        own_events,
    };
    let mut findings = Vec::new();
    // First: a pending deletion is `status`'s verdict too (`terminating`), and the sort is stable.
    findings.extend(deletion_pending(&ctx));
    // Next: a cycle that cannot complete is `status`'s first reason too.
    findings.extend(patch_rejected(&ctx));
    findings.extend(operator_findings(&ctx));
    findings.extend(rbac_findings(&ctx));
    findings.extend(post_failures(&ctx));
    findings.extend(posting(&ctx).into_iter().map(|f| posting_off_hides(&ctx, f)));
    findings.extend(expired(&ctx));
    findings.extend(elsewhere(&ctx));
    findings.extend(caller_events(&ctx));
    findings.extend(pruned(&ctx));
    // A problem of the operator itself (not running, not leading, not watching) is why nothing
    // handles: `accepted-stale` then points to it rather than to a restart.
    let blocking: Vec<&'static str> = findings
        .iter()
        .filter(|f| f.severity == Severity::Problem && f.id.starts_with("operator-not-"))
        .map(|f| f.id)
        .collect();
    findings.extend(stale(&ctx, &blocking));
    findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
    // Issue 11, one verdict: `status`'s first reason is the first finding when a problem states
    // it; the headline then names the first other problem as its cause.
    let status_verdict = verdict_of(&ctx);
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
    let verdict = ctx.resolution.verdict;
    if verdict == Resolved::Ambiguous {
        gaps.push(Gap {
            evidence: "operator".into(),
            reason: GapReason::Failed(ctx.resolution.summary.clone()),
        });
    }
    let decided = snapshot.events.get().is_some()
        && match verdict {
            Resolved::Unknown | Resolved::Ambiguous => false,
            Resolved::NoneServes => true,
            Resolved::Deployment | Resolved::Process => snapshot.operator.logs.get().is_some(),
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
        operator: ctx.resolution.operator.clone(),
        operator_resolution: ctx.resolution.clone(),
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
                "accepted-stale" | "status-pruned" | "patch-rejected" | "deletion-pending"
            )
    });
    let cause = match top {
        Some(f) if verdict_first => findings
            .iter()
            .skip(1)
            .find(|c| c.severity == Severity::Problem && c.id != f.id && c.id != "accepted-stale")
            .map(|c| format!("; also: {}", c.title))
            .unwrap_or_default(),
        _ => String::new(),
    };
    match top {
        Some(f) if f.severity == Severity::Problem => format!("{}: {}{cause}{tail}", headline(f.id, false), f.title),
        Some(f) if f.id == "operator-not-leading" && f.title.ends_with("(double handling)") => {
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
fn headline(id: &str, maybe: bool) -> &'static str {
    match (id, maybe) {
        ("rbac-events" | "event-post-failed" | "posting-disabled" | "errors-not-posted", false) => {
            "Events are not posted"
        }
        ("rbac-events" | "event-post-failed" | "posting-disabled" | "errors-not-posted", true) => {
            "Events may not be posted"
        }
        ("events-expired", _) => "The events have expired",
        ("events-elsewhere", _) => "Events exist where a filter or describe does not show them",
        ("caller-cannot-list-events", _) => "You cannot see the events",
        ("status-pruned", false) => "Status fields are dropped",
        ("status-pruned", true) => "Status fields are dropped (the verdict is not affected)",
        ("accepted-stale", _) => "The handler has not accepted the current spec",
        ("patch-rejected", _) => "No handling cycle completes",
        ("deletion-pending", _) => "The object is Terminating",
        ("operator-not-leading", false) => "No replica handles",
        ("operator-not-leading", true) => "The operator's leadership may keep it from handling",
        ("operator-not-found" | "operator-not-running" | "operator-not-watching", false) => {
            "Nothing handles the object"
        }
        ("operator-not-found" | "operator-not-running" | "operator-not-watching", true) => {
            "The object may not be handled"
        }
        ("rbac-resource", _) => "The operator may not handle the object",
        (_, false) => "A problem was found",
        (_, true) => "A warning was found",
    }
}

fn human_duration(d: Duration) -> String {
    let s = d.num_seconds();
    if s % 3600 == 0 {
        format!("{}h", s / 3600)
    } else if s % 60 == 0 {
        format!("{}m", s / 60)
    } else {
        format!("{s}s")
    }
}

fn finding(id: &'static str, severity: Severity, title: String, evidence: Vec<String>, fix: Option<String>) -> Finding {
    Finding {
        id,
        severity,
        title,
        evidence,
        fix,
    }
}

// ---- the operator: found, watching, running ----------------------------------------------

fn operator_findings(ctx: &Ctx<'_>) -> Vec<Finding> {
    let resolution = &ctx.resolution;
    let op = match (&ctx.operator, resolution.verdict) {
        (Some(op), _) => op,
        // The operators could not be read, or several serve alike (a gap says which): nothing
        // is said about any of them.
        (None, Resolved::Unknown | Resolved::Ambiguous) => return Vec::new(),
        (None, Resolved::Process) => return process_findings(ctx),
        (None, _) if resolution.candidates.is_empty() => {
            let deployments = ctx.snapshot.operator.deployments.get().map_or(0, Vec::len);
            let mut evidence = vec![format!(
                "{} in evidence; none runs `kopf run`, `python -m kopf` or `kubectl-microservice operate`",
                count(deployments as u64, "Deployment")
            )];
            evidence.extend(resolution.evidence.iter().cloned());
            return vec![finding(
                "operator-not-found",
                Severity::Problem,
                "no operator Deployment for Microservices was found".into(),
                evidence,
                Some(format!(
                    "install it (`{}`), or name the one you run: --operator NAMESPACE/deployment/NAME",
                    install_command(ctx)
                )),
            )];
        }
        (None, _) => return none_serves(ctx),
    };
    let mut out = Vec::new();
    if !op.watches(ctx.ns) {
        out.push(finding(
            "operator-not-watching",
            Severity::Problem,
            format!("the operator {} does not watch namespace {}", op.display(), ctx.ns),
            vec![format!(
                "its command: {} (watches {})",
                op.argv.join(" "),
                op.watches.as_deref().unwrap_or_default().join(",")
            )],
            Some(serve_fix(ctx, op)),
        ));
    }
    let pods = ctx.snapshot.operator.pods.get().map(Vec::as_slice).unwrap_or(&[]);
    let mine: Vec<&Pod> = pods.iter().filter(|p| selected(ctx.deployment, p)).collect();
    let running_names: Vec<String> = mine
        .iter()
        .filter(|p| container_running(p, &op.container))
        .filter_map(|p| p.metadata.name.clone())
        .collect();
    let pause_lines: Vec<PauseEvidence> = ctx
        .unattributed
        .iter()
        .filter_map(|l| {
            kopf_peering::pause_line(&l.record.message).map(|line| PauseEvidence {
                source: l.pod.clone(),
                cite: l.cite(),
                line,
            })
        })
        .collect();
    let election_lines: Vec<ElectionLine> = ctx
        .unattributed
        .iter()
        .filter(|l| leading::is_election_line(&l.record.message))
        .map(|l| ElectionLine {
            source: l.pod.clone(),
            cite: l.cite(),
            message: std::iter::once(l.record.message.clone())
                .chain(l.record.fields.iter().map(|(k, v)| format!("{k}={v}")))
                .collect::<Vec<_>>()
                .join(" "),
        })
        .collect();
    let lease_access: Vec<(String, Answer)> = match op.leadership_in(ctx.ns) {
        Leadership::Lease { namespace, name } => {
            let account = Account {
                namespace: &op.namespace,
                name: &op.service_account,
            };
            LEASE_VERBS
                .iter()
                .map(|(verb, named)| {
                    let need = Need {
                        group: LEASE_GROUP,
                        resource: "leases",
                        verb,
                        namespace: &namespace,
                        name: named.then_some(name.as_str()),
                    };
                    (verb.to_string(), rbac::decide(&ctx.snapshot.rbac, account, need))
                })
                .collect()
        }
        _ => Vec::new(),
    };
    let status = ctx.deployment.and_then(|d| d.status.as_ref());
    let ready_replicas = status.and_then(|s| s.ready_replicas).unwrap_or(0);
    let leading_input = leading::Input {
        operator: op,
        pods: &mine,
        running: &running_names,
        ready_replicas,
        leases: &ctx.snapshot.operator.leases,
        peerings: &ctx.snapshot.operator.peerings,
        pause_lines: &pause_lines,
        election_lines: &election_lines,
        lease_access: &lease_access,
        namespace: ctx.ns,
        now: ctx.now,
        skew: ctx.options.skew,
        given_holder: given_holder(ctx),
    };
    out.extend(leading::operator_not_leading(&leading_input));
    let elsewhere = leading::leader_elsewhere(&leading_input);
    if ctx.snapshot.operator.pods.get().is_some() {
        let running: Vec<&&Pod> = mine.iter().filter(|p| container_running(p, &op.container)).collect();
        let mut evidence = vec![format!(
            "Deployment {}: spec.replicas={} status.replicas={} readyReplicas={} availableReplicas={}",
            op.display(),
            ctx.deployment
                .and_then(|d| d.spec.as_ref())
                .and_then(|s| s.replicas)
                .map_or_else(|| "unset (1)".to_string(), |r| r.to_string()),
            status.and_then(|s| s.replicas).unwrap_or(0),
            status.and_then(|s| s.ready_replicas).unwrap_or(0),
            status.and_then(|s| s.available_replicas).unwrap_or(0)
        )];
        for p in &mine {
            evidence.push(pod_state(p, &op.container));
        }
        if mine.is_empty() && ready_replicas > 0 {
            // The Deployment's status (from the controller) says its Pods are ready; the Pods in
            // evidence do not match its selector (a hand-made bundle's `-l` that misses them).
            out.push(finding(
                "operator-not-running",
                Severity::Ok,
                format!(
                    "the operator {} reports {} (its Pods are not in evidence)",
                    op.display(),
                    count(ready_replicas as u64, "ready replica")
                ),
                evidence,
                None,
            ));
        } else if let (true, Some(holder)) = (running.is_empty(), &elsewhere) {
            // Its log given: the user runs that process on purpose (the README's laptop flow).
            let own = leading_input.given_holder == Some(holder.as_str());
            out.push(finding(
                "operator-not-running",
                if own { Severity::Ok } else { Severity::Warning },
                if own {
                    format!(
                        "the `operate` process whose log was given holds the Lease of {} as {holder} and handles the objects; the Deployment has no running Pod",
                        op.display()
                    )
                } else {
                    format!(
                        "the operator {} has no running Pod; another process, holding its Lease as {holder}, handles the objects (see operator-not-leading)",
                        op.display()
                    )
                },
                evidence,
                (!own).then(|| {
                    format!(
                        "if that process is meant to be temporary (a laptop), get the Deployment running: kubectl -n {ns} describe deployment {n}",
                        ns = op.namespace,
                        n = op.name
                    )
                }),
            ));
        } else if running.is_empty() {
            let (why, fix) = not_running_cause(op, ctx.deployment, &mine);
            evidence.insert(0, why.clone());
            out.push(finding(
                "operator-not-running",
                Severity::Problem,
                format!(
                    "the operator {} has no running Pod ({why}): no handler runs and nothing is posted",
                    op.display()
                ),
                evidence,
                Some(fix),
            ));
        } else {
            out.push(finding(
                "operator-not-running",
                Severity::Ok,
                format!(
                    "the operator {} runs ({} running)",
                    op.display(),
                    count(running.len() as u64, "Pod")
                ),
                evidence,
                None,
            ));
        }
    }
    out
}

impl Ctx<'_> {
    /// The Deployment whose settings (RBAC, `--events`, Kopf's source) decide what is posted:
    /// the resolved one, never the Deployment that stands by while a process outside the
    /// cluster handles.
    fn handler(&self) -> Option<&OperatorRef> {
        (self.resolution.verdict == Resolved::Deployment)
            .then_some(self.operator.as_ref())
            .flatten()
    }
}

/// `posting-disabled` for a process outside the cluster, from its own log's `Operator started`
/// line (`events=none|warnings|all`); `None` when that is not the answer's operator or its log
/// has no such line.
fn process_posting(ctx: &Ctx<'_>) -> Option<Finding> {
    if ctx.resolution.verdict != Resolved::Process {
        return None;
    }
    let log = ctx.resolution.process.as_ref()?.log.as_deref()?;
    let started = ctx
        .unattributed
        .iter()
        .rfind(|l| l.pod == log && l.record.message.starts_with("Operator started"))?;
    let events = started.record.fields.iter().find(|(k, _)| k == "events")?.1.clone();
    let evidence = vec![format!("its start line: {}", started.cite())];
    Some(if events == "none" {
        finding(
            "posting-disabled",
            Severity::Problem,
            format!("{} posts no events (`--events none`)", ctx.resolution.label()),
            evidence,
            Some("restart it with `--events all` (or `warnings`)".into()),
        )
    } else {
        finding(
            "posting-disabled",
            Severity::Ok,
            format!("{} posts events (--events {events})", ctx.resolution.label()),
            evidence,
            None,
        )
    })
}

/// The Lease holder whose own log was given (`--log-file`, or a bundle's `.file.log`): the
/// resolver matched its `Became the leader ... identity=` line to the Lease's `holderIdentity`.
fn given_holder<'a>(ctx: &'a Ctx<'_>) -> Option<&'a str> {
    let process = ctx.resolution.process.as_ref()?;
    process.log.as_ref()?;
    process.holder.as_deref()
}

/// `operator-not-watching` when no operator in evidence serves the namespace: what exists and
/// what each watches. None of them is diagnosed (their RBAC, Pods and logs say nothing about
/// this namespace).
fn none_serves(ctx: &Ctx<'_>) -> Vec<Finding> {
    let resolution = &ctx.resolution;
    let mut evidence: Vec<String> = resolution
        .candidates
        .iter()
        .map(|c| {
            let kind = match c.kind {
                Some(OperatorKind::Ours) => " (ours)",
                Some(OperatorKind::Kopf) => " (Kopf)",
                None => "",
            };
            let how = c.evidence.first().map(|e| format!(": {e}")).unwrap_or_default();
            format!("{}{kind}{how}", c.operator)
        })
        .collect();
    evidence.extend(resolution.evidence.iter().cloned());
    let operators = ctx
        .snapshot
        .operator
        .deployments
        .get()
        .map(|d| find_operators(d))
        .unwrap_or_default();
    // Of an operator seen but not collected (another namespace's), only its kind and what it
    // watches are in evidence: the general edit.
    let mut ways: Vec<String> = Vec::new();
    let mut edits: Vec<String> = Vec::new();
    for c in resolution.candidates.iter().take(3) {
        let Some((ns, name)) = c.operator.split_once("/deployment/") else {
            continue;
        };
        match operators
            .iter()
            .find(|o| o.namespace == ns && o.name == name)
            .and_then(|op| manifests_serving(ctx, op))
        {
            Some(line) => ways.push(format!("for {}: {line}", c.operator)),
            None => edits.push(format!("kubectl -n {ns} edit deployment {name}")),
        }
    }
    if !edits.is_empty() {
        ways.push(format!(
            "add `--namespace={}` to its container's command or args and give its ServiceAccount there the Role and RoleBinding it has where it watches ({})",
            ctx.ns,
            edits.join("; ")
        ));
    }
    let edit = if ways.is_empty() {
        String::new()
    } else {
        format!(", or have the one that should serve it do so: {}", ways.join("; "))
    };
    vec![finding(
        "operator-not-watching",
        Severity::Problem,
        format!(
            "no operator serves namespace {}: {} watch{} other namespaces; nothing handles {} or posts its events",
            ctx.ns,
            count(resolution.candidates.len() as u64, "operator"),
            if resolution.candidates.len() == 1 { "es" } else { "" },
            ctx.key
        ),
        evidence,
        Some(format!(
            "run one for it (`{install}`, or `kubectl microservice operate --namespace {ns}` with its log given as --log-file){edit}; if one of them does serve it, name it with --operator NS/deployment/NAME",
            install = install_command(ctx),
            ns = ctx.ns
        )),
    )]
}

/// How `op`, which does not watch the object's namespace, comes to serve it. Watching is not
/// enough: its ServiceAccount needs its rights there too (a Role and RoleBinding in the
/// namespace). So for a Deployment `manifests` made (its command is the one `manifests` renders
/// for its namespaces, image, `--standalone` and `--events`), the `manifests` line with the
/// namespace added, which re-renders the Deployment and adds the Roles (`--without-shared`: the
/// CRD and the cluster roles stay as they are); for any other, the edit of its command or args
/// and the Role to copy.
fn serve_fix(ctx: &Ctx<'_>, op: &OperatorRef) -> String {
    if let Some(line) = manifests_serving(ctx, op) {
        return line;
    }
    edit_fix(
        ctx.ns,
        &op.namespace,
        &op.name,
        &format!("its ServiceAccount {}/{}", op.namespace, op.service_account),
    )
}

/// [`serve_fix`] of a Deployment `manifests` did not make, or whose spec is not in evidence:
/// the namespace added to its command or args, and the rights copied.
fn edit_fix(ns: &str, op_namespace: &str, op_name: &str, account: &str) -> String {
    format!(
        "add `--namespace={ns}` to its container's command or args (kubectl -n {op_namespace} edit deployment {op_name}) and give {account} in {ns} the Role and RoleBinding it has where it watches"
    )
}

/// The `manifests ... | kubectl apply -f -` line of [`serve_fix`], when `op` is as `manifests`
/// renders it.
fn manifests_serving(ctx: &Ctx<'_>, op: &OperatorRef) -> Option<String> {
    if op.kind != OperatorKind::Ours {
        return None;
    }
    let watch = op.watches.clone().filter(|w| !w.is_empty())?;
    let deployment = ctx.snapshot.operator.deployments.get()?.iter().find(|d| {
        d.metadata.namespace.as_deref() == Some(op.namespace.as_str())
            && d.metadata.name.as_deref() == Some(op.name.as_str())
    })?;
    let image = deployment
        .spec
        .as_ref()?
        .template
        .spec
        .as_ref()?
        .containers
        .iter()
        .find(|c| c.name == op.container)?
        .image
        .clone()?;
    let events = match op.flag("--events")? {
        "all" => "all",
        "warnings" => "warnings",
        "none" => "none",
        _ => return None,
    };
    let standalone = op.argv.iter().any(|a| a == "--standalone");
    let plan = crate::manifests::Plan {
        operator_namespace: op.namespace.clone(),
        watch: watch.clone(),
        image: image.clone(),
        standalone,
        events,
    };
    let rendered = crate::manifests::objects(&plan)
        .into_iter()
        .find(|o| o["kind"] == "Deployment")?;
    let container = &rendered["spec"]["template"]["spec"]["containers"][0];
    if rendered["metadata"]["name"] != op.name.as_str() || container["command"] != serde_json::json!(op.argv) {
        return None;
    }
    let mut line = format!(
        "kubectl microservice manifests --namespace {} --without-shared",
        op.namespace
    );
    for w in watch.iter().map(String::as_str).chain([ctx.ns]) {
        line.push_str(&format!(" --watch-namespace {w}"));
    }
    if image != crate::manifests::DEFAULT_IMAGE {
        line.push_str(&format!(" --image {image}"));
    }
    if standalone {
        line.push_str(" --standalone");
    }
    if events != "all" {
        line.push_str(&format!(" --events {events}"));
    }
    line.push_str(" | kubectl apply -f -");
    Some(format!("`{line}` (its Deployment, and its Roles in {})", ctx.ns))
}

/// The README's install of an operator for the object's namespace, as one shell line that works
/// when pasted: the operator's namespace is created first (`manifests | kubectl apply` fails
/// without it), and it is `ops` unless `ops` already holds a Deployment named as the manifests'
/// one, which the apply would take over (its `--watch-namespace` replaced: the namespaces it
/// serves would lose their operator); then `NS-ops`. `create namespace` of one that exists
/// fails alone: the `;` goes on.
fn install_command(ctx: &Ctx<'_>) -> String {
    let deployments = ctx.snapshot.operator.deployments.get().map_or(&[][..], Vec::as_slice);
    install_line(deployments, ctx.ns)
}

/// [`install_command`] given the Deployments in evidence.
fn install_line(deployments: &[Deployment], ns: &str) -> String {
    let taken = |namespace: &str| {
        deployments.iter().any(|d| {
            d.metadata.namespace.as_deref() == Some(namespace)
                && d.metadata.name.as_deref() == Some(crate::manifests::OPERATOR_NAME)
        })
    };
    let ops = if taken("ops") {
        // A DNS label: at most 63 characters.
        let stem = &ns[..ns.len().min(59)];
        format!("{}-ops", stem.trim_end_matches('-'))
    } else {
        "ops".to_string()
    };
    format!(
        "kubectl create namespace {ops}; kubectl microservice manifests --namespace {ops} --watch-namespace {ns} | kubectl apply -f -"
    )
}

/// The operator is a process outside the cluster (a laptop `operate`) and no Deployment of ours
/// serves the namespace: whether it runs and leads, from its Lease and the log given.
fn process_findings(ctx: &Ctx<'_>) -> Vec<Finding> {
    let Some(process) = &ctx.resolution.process else {
        return Vec::new();
    };
    let name = ctx.resolution.label();
    let mut evidence: Vec<String> = ctx.resolution.evidence.clone();
    if let Some(c) = ctx.resolution.candidates.first() {
        evidence.extend(c.evidence.iter().cloned());
    }
    let log = process.log.as_deref();
    let mut out = Vec::new();
    match (&process.lease, process.current) {
        (Some(lease), true) => {
            let renewed = match (ctx.now, process.renewed) {
                (Some(now), Some(r)) => format!(", renewed {}s ago", (now - r).num_seconds().max(0)),
                _ => String::new(),
            };
            out.push(finding(
                "operator-not-running",
                Severity::Ok,
                format!("the `operate` process {name} runs: it holds the Lease {lease}{renewed}"),
                evidence.clone(),
                None,
            ));
            out.push(finding(
                leading::ID,
                Severity::Ok,
                match log {
                    Some(log) => format!("{name} leads (Lease {lease}); its log is the one given ({log})"),
                    None => format!("{name} leads (Lease {lease}); its log is not in evidence (give it with --log-file)"),
                },
                evidence,
                None,
            ));
        }
        (Some(lease), false) => out.push(finding(
            "operator-not-running",
            Severity::Problem,
            format!(
                "the `operate` process {name} stopped: its Lease {lease} is no longer renewed, and no Deployment serves namespace {}",
                ctx.ns
            ),
            evidence,
            Some(format!(
                "start it again (`kubectl microservice operate --namespace {ns}`), or run the operator in the cluster: `{install}`",
                install = install_command(ctx),
                ns = ctx.ns
            )),
        )),
        (None, _) => out.push(finding(
            "operator-not-running",
            Severity::Ok,
            format!(
                "the operator is the process whose log was given ({}): it names {}; no Lease or Pod says whether it still runs",
                log.unwrap_or("?"),
                ctx.key
            ),
            evidence,
            None,
        )),
    }
    out
}

/// How many replicas the operator's Deployment should run when it runs at all, for the
/// `kubectl scale` fix of a Deployment scaled to zero: the manifests' default (ours: 2 with
/// leader election, 1 with `--standalone`, `src/manifests.rs`); a Kopf operator 1, since Kopf
/// has no leader election (replicas without peering each handle every object, with peering
/// of one priority they all pause: Kopf 1.38 `docs/peering.rst`).
fn default_replicas(op: &OperatorRef) -> u32 {
    match op.kind {
        OperatorKind::Ours if !op.argv.iter().any(|a| a == "--standalone") => 2,
        _ => 1,
    }
}

/// Why no Pod of `op` runs, as one phrase naming the field or container state it rests on,
/// and the fix for that cause, each command one that achieves it when pasted:
/// `spec.replicas: 0` → `kubectl scale --replicas=N` (a `rollout restart` keeps 0 replicas);
/// an image that cannot be pulled (`waiting` reason `ErrImagePull`, `ImagePullBackOff`,
/// `ErrImageNeverPull`, `InvalidImageName`) → make the image available or set another; a
/// container that keeps exiting (`CrashLoopBackOff`, `terminated`) → its previous log, of that
/// Pod (a Pod that never started has none); a Pod not scheduled → its events; no Pod at all →
/// the Deployment's conditions (quota, admission), in `describe`.
fn not_running_cause(op: &OperatorRef, deployment: Option<&Deployment>, pods: &[&Pod]) -> (String, String) {
    let (ns, n, c) = (&op.namespace, &op.name, &op.container);
    let spec_replicas = deployment.and_then(|d| d.spec.as_ref()).and_then(|s| s.replicas);
    if spec_replicas == Some(0) {
        let want = default_replicas(op);
        return (
            "spec.replicas=0: the Deployment is scaled to zero".into(),
            format!(
                "scale it up (a rollout restart keeps 0 replicas): kubectl -n {ns} scale deployment/{n} --replicas={want}{}",
                if want == 1 && op.kind == OperatorKind::Kopf {
                    " (one replica: Kopf has no leader election)"
                } else {
                    ""
                }
            ),
        );
    }
    for pod in pods {
        let pod_name = pod.metadata.name.as_deref().unwrap_or("?");
        let status = pod.status.as_ref();
        let cs = status
            .and_then(|s| s.container_statuses.as_ref())
            .and_then(|cs| cs.iter().find(|s| &s.name == c));
        let waiting = cs.and_then(|s| s.state.as_ref()).and_then(|s| s.waiting.as_ref());
        let reason = waiting.and_then(|w| w.reason.as_deref()).unwrap_or("");
        let image = cs.map(|s| s.image.as_str()).unwrap_or("");
        if matches!(
            reason,
            "ErrImagePull" | "ImagePullBackOff" | "ErrImageNeverPull" | "InvalidImageName"
        ) {
            let message = waiting.and_then(|w| w.message.as_deref()).unwrap_or("");
            return (
                format!("container {c} of Pod {pod_name} waits: {reason} for image {image}"),
                format!(
                    "the nodes cannot get the image {image}{}: import it into the nodes or push it where they pull from, or set one they can: kubectl -n {ns} set image deployment/{n} {c}=IMAGE",
                    if message.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", message.trim())
                    }
                ),
            );
        }
        let terminated = cs.and_then(|s| s.state.as_ref()).and_then(|s| s.terminated.as_ref());
        let last = cs
            .and_then(|s| s.last_state.as_ref())
            .and_then(|s| s.terminated.as_ref())
            .or(terminated);
        if reason == "CrashLoopBackOff" || terminated.is_some() {
            let exit = last
                .map(|t| {
                    format!(
                        ", last exit code {} ({})",
                        t.exit_code,
                        t.reason.as_deref().unwrap_or("?")
                    )
                })
                .unwrap_or_default();
            let restarts = cs.map_or(0, |s| s.restart_count);
            let state = if reason.is_empty() { "terminated" } else { reason };
            let previous = if restarts > 0 { " --previous" } else { "" };
            return (
                format!("container {c} of Pod {pod_name} is {state}{exit}, {restarts} restarts"),
                format!(
                    "read why it exits and fix that (its command, config or permissions): kubectl -n {ns} logs {pod_name} -c {c}{previous}"
                ),
            );
        }
        if status.and_then(|s| s.phase.as_deref()) == Some("Pending") && cs.is_none() {
            let unscheduled = status
                .and_then(|s| s.conditions.as_ref())
                .and_then(|cs| cs.iter().find(|c| c.type_ == "PodScheduled" && c.status == "False"));
            if let Some(cond) = unscheduled {
                return (
                    format!(
                        "Pod {pod_name} is not scheduled: {}",
                        cond.message.as_deref().unwrap_or("no node fits")
                    ),
                    format!("see what no node offers: kubectl -n {ns} describe pod {pod_name}"),
                );
            }
        }
    }
    if pods.is_empty() {
        let failure = deployment
            .and_then(|d| d.status.as_ref())
            .and_then(|s| s.conditions.as_ref())
            .and_then(|cs| cs.iter().find(|c| c.type_ == "ReplicaFailure" && c.status == "True"));
        if let Some(cond) = failure {
            return (
                format!(
                    "spec.replicas={}, no Pod: {}",
                    spec_replicas.unwrap_or(1),
                    cond.message.as_deref().unwrap_or("ReplicaFailure")
                ),
                format!(
                    "the Deployment's ReplicaSet cannot create Pods; fix what its condition names: kubectl -n {ns} describe deployment {n}"
                ),
            );
        }
        return (
            format!("spec.replicas={}, no Pod in evidence", spec_replicas.unwrap_or(1)),
            format!("see why it has no Pod (its conditions and events): kubectl -n {ns} describe deployment {n}"),
        );
    }
    (
        "no container is running".into(),
        format!(
            "see each Pod's state and events: kubectl -n {ns} describe pods -l {}",
            selector_text(deployment)
        ),
    )
}

/// The Deployment's `matchLabels` as a `-l` value (`k=v,k2=v2`).
fn selector_text(deployment: Option<&Deployment>) -> String {
    deployment
        .and_then(|d| d.spec.as_ref())
        .and_then(|s| s.selector.match_labels.as_ref())
        .map(|l| l.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(","))
        .unwrap_or_default()
}

fn selected(deployment: Option<&Deployment>, pod: &Pod) -> bool {
    let Some(labels) = deployment
        .and_then(|d| d.spec.as_ref())
        .and_then(|s| s.selector.match_labels.as_ref())
    else {
        return true;
    };
    let pod_labels = pod.metadata.labels.as_ref();
    pod.metadata.namespace == deployment.and_then(|d| d.metadata.namespace.clone())
        && labels.iter().all(|(k, v)| pod_labels.and_then(|l| l.get(k)) == Some(v))
}

fn container_running(pod: &Pod, container: &str) -> bool {
    let Some(status) = &pod.status else { return false };
    status.phase.as_deref() == Some("Running")
        && status
            .container_statuses
            .iter()
            .flatten()
            .any(|c| c.name == container && c.state.as_ref().is_some_and(|s| s.running.is_some()))
}

fn pod_state(pod: &Pod, container: &str) -> String {
    let name = pod.metadata.name.as_deref().unwrap_or("?");
    let status = pod.status.as_ref();
    let phase = status.and_then(|s| s.phase.as_deref()).unwrap_or("<none>");
    let cs = status
        .and_then(|s| s.container_statuses.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.name == container));
    let state = match cs.and_then(|c| c.state.as_ref()) {
        Some(s) if s.running.is_some() => format!("running, ready={}", cs.is_some_and(|c| c.ready)),
        Some(s) if s.terminated.is_some() => {
            let t = s.terminated.as_ref().unwrap_or_else(|| unreachable!());
            format!(
                "terminated (reason {}, exitCode {}{})",
                t.reason.as_deref().unwrap_or("?"),
                t.exit_code,
                t.finished_at
                    .as_ref()
                    .map(|f| format!(
                        ", finishedAt {}",
                        crate::time::rfc3339_seconds(crate::time::from_jiff(f.0))
                    ))
                    .unwrap_or_default()
            )
        }
        Some(s) if s.waiting.is_some() => format!(
            "waiting ({})",
            s.waiting.as_ref().and_then(|w| w.reason.as_deref()).unwrap_or("?")
        ),
        _ => "no container status".into(),
    };
    format!("Pod {name}: phase {phase}, container {container} {state}")
}

// ---- RBAC ---------------------------------------------------------------------------------

/// The events API group and verbs this operator posts with: Kopf core/v1 create; ours (and
/// kube-rs's Recorder) events.k8s.io create + patch.
fn event_needs(kind: OperatorKind) -> (&'static str, &'static [&'static str]) {
    match kind {
        OperatorKind::Kopf => ("", &["create"]),
        OperatorKind::Ours => ("events.k8s.io", &["create", "patch"]),
    }
}

fn method(answer: &Answer) -> String {
    match answer {
        Answer::Reviewed { allowed, reason } => format!(
            "SubjectAccessReview: {}{}",
            if *allowed { "allowed" } else { "denied" },
            reason.as_ref().map(|r| format!(" ({r})")).unwrap_or_default()
        ),
        Answer::RulesAllow(by) => format!("read from RBAC objects: allowed by {by}"),
        Answer::RulesSilent => {
            "read from RBAC objects (no SubjectAccessReview in evidence): no bound Role or ClusterRole grants it; other authorizers may still allow it".into()
        }
        Answer::Unknown => "unknown: neither access reviews nor RBAC objects are in evidence".into(),
    }
}

/// Without an operator in evidence, the 403s of failed event POSTs are the evidence: the API's
/// message names the user and the API group (`... cannot create resource "events" in API group "X"`).
fn rbac_from_logs(ctx: &Ctx<'_>) -> Vec<Finding> {
    let forbidden: Vec<(&Line, EventPostFailure)> = post_failure_lines(ctx)
        .into_iter()
        .filter(|(_, f)| f.code == Some(403))
        .collect();
    let Some((_, first)) = forbidden.first() else {
        return Vec::new();
    };
    let message = first.message.clone().unwrap_or_default();
    let group = message
        .split("in API group \"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or("");
    let verbs: &[&str] = if group.is_empty() {
        &["create"]
    } else {
        &["create", "patch"]
    };
    let group_name = if group.is_empty() {
        "core (\"\")".to_string()
    } else {
        group.to_string()
    };
    let mut evidence = vec![format!(
        "no operator Deployment in evidence: the {} with code 403 {} the evidence",
        count(forbidden.len() as u64, "failed event POST"),
        is_are(forbidden.len() as u64)
    )];
    evidence.extend(
        forbidden
            .iter()
            .take(3)
            .map(|(l, _)| format!("403 in the logs: {}", l.cite())),
    );
    vec![finding(
        "rbac-events",
        Severity::Problem,
        format!(
            "the operator may not create events in API group {group_name} in {}",
            ctx.ns
        ),
        evidence,
        Some(format!(
            "add to a Role in {} bound to the operator's ServiceAccount (named in the 403 message):\n{}",
            ctx.ns,
            rbac::rule_yaml(group, "events", verbs)
        )),
    )]
}

fn rbac_findings(ctx: &Ctx<'_>) -> Vec<Finding> {
    // A process outside the cluster posts with its own credentials, not the ServiceAccount of
    // the Deployment that stands by: only its 403 lines say anything.
    let Some(op) = ctx.handler() else {
        return rbac_from_logs(ctx);
    };
    let account = Account {
        namespace: &op.namespace,
        name: &op.service_account,
    };
    let rbac = &ctx.snapshot.rbac;
    let role = rbac::bound_role(rbac, account, ctx.ns);
    let role_hint = match &role {
        Some(r) => format!("add to the rules of Role {}/{r}", ctx.ns),
        None => format!(
            "add to a Role in {} bound to ServiceAccount {}/{}",
            ctx.ns, op.namespace, op.service_account
        ),
    };
    let mut out = Vec::new();

    // Events.
    let (group, verbs) = event_needs(op.kind);
    let answers: Vec<(Need<'_>, Answer)> = verbs
        .iter()
        .map(|verb| {
            let need = Need {
                group,
                resource: "events",
                verb,
                namespace: ctx.ns,
                name: None,
            };
            (need, rbac::decide(rbac, account, need))
        })
        .collect();
    let user = account.user();
    let evidence: Vec<String> = answers
        .iter()
        .map(|(need, a)| format!("{user} {}: {}", need.describe(), method(a)))
        .collect();
    let denied_by_review = answers
        .iter()
        .any(|(_, a)| matches!(a, Answer::Reviewed { allowed: false, .. }));
    let silent = answers.iter().any(|(_, a)| *a == Answer::RulesSilent);
    let unknown = answers.iter().all(|(_, a)| *a == Answer::Unknown);
    let forbidden_lines: Vec<&Line> = post_failure_lines(ctx)
        .into_iter()
        .filter(|(_, f)| f.code == Some(403))
        .map(|(l, _)| l)
        .collect();
    let who = match op.kind {
        OperatorKind::Kopf => "Kopf posts core/v1 events",
        OperatorKind::Ours => "kubectl-microservice posts events.k8s.io/v1 events",
    };
    let group_name = if group.is_empty() {
        "core (\"\")".to_string()
    } else {
        group.to_string()
    };
    let fix = Some(match &role {
        // The Role bound in the namespace: one JSON patch appends the rule, and can-i checks it.
        Some(r) => format!(
            "{role_hint}:\n{}\nwith: kubectl -n {} patch role {r} --type=json -p '[{{\"op\":\"add\",\"path\":\"/rules/-\",\"value\":{{\"apiGroups\":[\"{group}\"],\"resources\":[\"events\"],\"verbs\":[{}]}}}}]'\nthen {}",
            rbac::rule_yaml(group, "events", verbs),
            ctx.ns,
            verbs.iter().map(|v| format!("\"{v}\"")).collect::<Vec<_>>().join(","),
            after_the_grant(ctx)
        ),
        None => format!(
            "{role_hint}:\n{}\nthen {}",
            rbac::rule_yaml(group, "events", verbs),
            after_the_grant(ctx)
        ),
    });
    let title = format!(
        "the operator's ServiceAccount {}/{} may not {} events in API group {group_name} in {} ({who})",
        op.namespace,
        op.service_account,
        verbs.join("/"),
        ctx.ns
    );
    if denied_by_review {
        out.push(finding("rbac-events", Severity::Problem, title, evidence, fix));
    } else if silent {
        out.push(finding(
            "rbac-events",
            Severity::Warning,
            format!("{title} — by reading Roles and bindings only"),
            evidence,
            fix,
        ));
    } else if unknown && !forbidden_lines.is_empty() {
        let mut evidence = evidence;
        evidence.extend(forbidden_lines.iter().map(|l| format!("403 in the logs: {}", l.cite())));
        out.push(finding("rbac-events", Severity::Problem, title, evidence, fix));
    } else if !unknown {
        out.push(finding(
            "rbac-events",
            Severity::Ok,
            format!(
                "the operator's ServiceAccount may {} events in API group {group_name} in {}",
                verbs.join("/"),
                ctx.ns
            ),
            evidence,
            None,
        ));
    }

    // The resource itself. Kopf also patches the object (its annotations: progress and
    // last-handled-configuration; `kopf/_cogs/clients/patching.py`), ours only the status.
    let mut needs = vec![
        (GROUP, PLURAL, "list"),
        (GROUP, PLURAL, "watch"),
        (GROUP, "microservices/status", "patch"),
    ];
    if op.kind == OperatorKind::Kopf {
        needs.push((GROUP, PLURAL, "patch"));
    }
    let mut denied = Vec::new();
    let mut suggested = Vec::new();
    let mut evidence = Vec::new();
    for (group, resource, verb) in needs {
        let need = Need {
            group,
            resource,
            verb,
            namespace: ctx.ns,
            name: None,
        };
        let answer = rbac::decide(rbac, account, need);
        evidence.push(format!("{user} {}: {}", need.describe(), method(&answer)));
        match answer {
            Answer::Reviewed { allowed: false, .. } => denied.push((resource, verb)),
            Answer::RulesSilent => suggested.push((resource, verb)),
            _ => {}
        }
    }
    let missing: Vec<(&str, &str)> = denied.iter().chain(&suggested).copied().collect();
    if !missing.is_empty() {
        out.push(finding(
            "rbac-resource",
            if denied.is_empty() {
                Severity::Warning
            } else {
                Severity::Problem
            },
            format!(
                "the operator's ServiceAccount may not {} in {}{}",
                missing
                    .iter()
                    .map(|(r, v)| format!("{v} {r}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                ctx.ns,
                if denied.is_empty() {
                    " — by reading Roles and bindings only"
                } else {
                    ""
                }
            ),
            evidence,
            Some(resource_fix(&role_hint, role.as_deref(), ctx.ns, &user, &missing)),
        ));
    }
    out
}

/// The fix of `rbac-resource`: the rules; with the Role bound in the namespace, the JSON patch
/// that appends them; and the `kubectl auth can-i` checks, which print yes once they hold.
fn resource_fix(role_hint: &str, role: Option<&str>, ns: &str, user: &str, missing: &[(&str, &str)]) -> String {
    let rules: Vec<String> = missing
        .iter()
        .map(|(resource, verb)| rbac::rule_yaml(GROUP, resource, &[verb]))
        .collect();
    let with = match role {
        Some(r) => {
            let ops: Vec<String> = missing
                .iter()
                .map(|(resource, verb)| {
                    format!(
                        r#"{{"op":"add","path":"/rules/-","value":{{"apiGroups":["{GROUP}"],"resources":["{resource}"],"verbs":["{verb}"]}}}}"#
                    )
                })
                .collect();
            format!(
                "\nwith: kubectl -n {ns} patch role {r} --type=json -p '[{}]'",
                ops.join(",")
            )
        }
        None => String::new(),
    };
    let checks: Vec<String> = missing
        .iter()
        .map(|(resource, verb)| can_i_ours(verb, resource, ns, user))
        .collect();
    format!(
        "{role_hint}:\n{}{with}\nthen check it with {} (it prints yes)",
        rules.join("\n"),
        checks.join(" and ")
    )
}

/// `kubectl auth can-i VERB` on `resource` of our API group in `ns` as `user`: a subresource
/// (`microservices/status`) is asked with `--subresource`, as `kubectl auth can-i` takes it
/// (`microservices/status.GROUP` would ask about an object named `status.GROUP`).
fn can_i_ours(verb: &str, resource: &str, ns: &str, user: &str) -> String {
    let (plural, sub) = match resource.split_once('/') {
        Some((plural, sub)) => (plural, format!(" --subresource={sub}")),
        None => (resource, String::new()),
    };
    format!("kubectl auth can-i {verb} {plural}.{GROUP}{sub} -n {ns} --as={user}")
}

// ---- the logs: failed POSTs ------------------------------------------------------------------

/// The failed event POSTs that concern this object: its own lines, and lines without an object
/// (Kopf logs `Failed to post an event ...` from `kopf._core.engines.posting`, with no
/// `[ns/name]` prefix) unless their API message names another namespace (`... in the namespace
/// "other"`): an operator serving several namespaces fails there for other objects.
fn post_failure_lines<'a>(ctx: &'a Ctx<'_>) -> Vec<(&'a Line, EventPostFailure)> {
    let elsewhere = |l: &Line, f: &EventPostFailure| {
        let text = f.message.as_deref().unwrap_or(&l.record.message);
        forbidden_namespace(text).is_some_and(|ns| ns != ctx.ns)
    };
    ctx.lines
        .iter()
        .filter_map(|l| match l.record.lifecycle() {
            Lifecycle::EventPostFailed(f) => Some((l, f)),
            _ => None,
        })
        .chain(ctx.unattributed.iter().filter_map(|l| match l.record.lifecycle() {
            Lifecycle::EventPostFailed(f) if !elsewhere(l, &f) => Some((l, f)),
            _ => None,
        }))
        .collect()
}

/// The namespace an API server's 403 names: `... in the namespace "NS"` (the RBAC authorizer's
/// wording, kubernetes `staging/src/k8s.io/apiserver/pkg/endpoints/handlers/responsewriters`).
fn forbidden_namespace(message: &str) -> Option<&str> {
    let at = message.find("in the namespace ")? + "in the namespace ".len();
    let rest = message[at..].trim_start_matches(['\\', '"', '\'']);
    let end = rest.find(['\\', '"', '\''])?;
    Some(&rest[..end])
}

/// Kopf's retries of an event POST (`Request attempt #N/9 failed; will retry: POST .../events
/// -> APIForbiddenError(...)`, ERROR, logger `kopf._core.engines.p`): each POST is tried up to 9
/// times before the `Failed to post an event` line.
fn post_attempt_lines<'a>(ctx: &'a Ctx<'_>) -> Vec<&'a Line> {
    ctx.unattributed
        .iter()
        .filter(|l| {
            let m = &l.record.message;
            m.starts_with("Request attempt #") && m.contains("POST ") && m.contains("/events")
        })
        .collect()
}

/// What dates the operator's event-POST 403s against a fix of its RBAC: the events rule as it
/// is now, when the granting Role/binding was last written, and events the operator posted on
/// the object after the 403s (a POST that went through).
struct Fixed {
    /// The events rule allows the operator now, and how that was learned.
    allowed_now: Option<String>,
    /// The granting objects' latest write (API server clock), when the rules are in evidence.
    granted: Option<rbac::Grant>,
    /// The latest event the operator posted on the object: its time (API server clock) and a
    /// description.
    last_post: Option<(DateTime<Utc>, String)>,
}

impl Fixed {
    fn of(ctx: &Ctx<'_>) -> Fixed {
        let Some(op) = &ctx.operator else {
            return Fixed {
                allowed_now: None,
                granted: None,
                last_post: last_operator_post(ctx, None),
            };
        };
        let account = Account {
            namespace: &op.namespace,
            name: &op.service_account,
        };
        let (group, verbs) = event_needs(op.kind);
        let mut allowed = Vec::new();
        let mut granted: Option<rbac::Grant> = None;
        for verb in verbs {
            let need = Need {
                group,
                resource: "events",
                verb,
                namespace: ctx.ns,
                name: None,
            };
            match rbac::decide(&ctx.snapshot.rbac, account, need) {
                a @ (Answer::Reviewed { allowed: true, .. } | Answer::RulesAllow(_)) => allowed.push(method(&a)),
                _ => {
                    allowed.clear();
                    break;
                }
            }
            let g = rbac::grant(&ctx.snapshot.rbac, account, need);
            granted = match (granted, g) {
                (Some(a), Some(b)) => Some(if b.written > a.written { b } else { a }),
                (a, b) => a.or(b),
            };
        }
        Fixed {
            allowed_now: (!allowed.is_empty()).then(|| allowed.join("; ")),
            granted,
            last_post: last_operator_post(ctx, Some(op.kind)),
        }
    }

    /// Whether a 403 logged at `t` (operator clock) is older than the fix: before the grant's
    /// last write, or followed by a POST that went through (less the skew either way).
    fn predates(&self, t: Option<DateTime<Utc>>, skew: Duration) -> bool {
        let Some(t) = t else { return false };
        self.granted
            .as_ref()
            .and_then(|g| g.written)
            .is_some_and(|w| t + skew < w)
            || self.last_post.as_ref().is_some_and(|(p, _)| t + skew < *p)
    }
}

/// The latest event on the object posted by the operator (Kopf: `reportingComponent`/
/// `source.component` `kopf`; ours: `kubectl-microservice`; either when the kind is unknown).
fn last_operator_post(ctx: &Ctx<'_>, kind: Option<OperatorKind>) -> Option<(DateTime<Utc>, String)> {
    let names: &[&str] = match kind {
        Some(OperatorKind::Kopf) => &["kopf"],
        Some(OperatorKind::Ours) => &[crate::resource::FIELD_MANAGER],
        None => &["kopf", crate::resource::FIELD_MANAGER],
    };
    ctx.own_events
        .iter()
        .filter(|e| {
            let by = e
                .reporting_component
                .as_deref()
                .filter(|c| !c.is_empty())
                .or(e.source.as_ref().and_then(|s| s.component.as_deref()));
            by.is_some_and(|b| names.contains(&b))
        })
        .filter_map(|e| {
            let t = event_time(e)?;
            Some((
                t,
                format!(
                    "event {} type {} reason {} at {} (API server clock): {}",
                    e.metadata.name.as_deref().unwrap_or("?"),
                    e.type_.as_deref().unwrap_or("<none>"),
                    e.reason.as_deref().unwrap_or("<none>"),
                    rfc3339_millis(t),
                    e.message.as_deref().unwrap_or("").chars().take(120).collect::<String>()
                ),
            ))
        })
        .max_by_key(|(t, _)| *t)
}

/// How to check the events rule for the operator and what a grant brings back: the events not
/// posted are lost; the next log records of the object are posted. A restart is a resume: ours
/// writes and posts nothing then (docs/operate.md); Kopf runs only the handlers registered with
/// `@kopf.on.resume`, and posts their log records.
fn after_the_grant(ctx: &Ctx<'_>) -> String {
    let Some(op) = &ctx.operator else {
        return "events that failed before are not posted again; the object's next handler run posts again".into();
    };
    let user = format!("system:serviceaccount:{}:{}", op.namespace, op.service_account);
    let (group, verbs) = event_needs(op.kind);
    let resource = if group.is_empty() {
        "events".to_string()
    } else {
        format!("events.{group}")
    };
    let checks: Vec<String> = verbs
        .iter()
        .map(|v| format!("kubectl auth can-i {v} {resource} -n {} --as={user}", ctx.ns))
        .collect();
    let next = match op.kind {
        OperatorKind::Ours => {
            "the object's next handler run posts again (a spec change: an update; a restart is a resume, which writes and posts nothing)"
        }
        OperatorKind::Kopf => {
            "the object's next handler run posts its log records again (a spec change; a restart re-runs only the handlers registered with @kopf.on.resume, and Kopf 1.38 posts their records too)"
        }
    };
    format!(
        "check the rule with {} (it prints yes); events that failed before are not posted again, and {next}",
        checks.join(" and ")
    )
}

fn post_failures(ctx: &Ctx<'_>) -> Vec<Finding> {
    let found = post_failure_lines(ctx);
    let attempts = post_attempt_lines(ctx);
    let Some((last, _)) = found.iter().max_by_key(|(l, _)| l.record.time()) else {
        let Some(last) = attempts.last() else { return Vec::new() };
        return vec![finding(
            "event-post-failed",
            Severity::Problem,
            format!(
                "the operator's event POSTs are failing ({}, still retrying)",
                count(attempts.len() as u64, "failed attempt")
            ),
            vec![format!("last attempt: {}", last.cite())],
            Some(format!(
                "see the error in the attempt line; for a 403 grant the events rule named by rbac-events, then {}",
                after_the_grant(ctx)
            )),
        )];
    };
    let codes: BTreeSet<String> = found
        .iter()
        .map(|(_, f)| f.code.map_or("no code".into(), |c| c.to_string()))
        .collect();
    let mut evidence = vec![
        format!(
            "{} in the operator's logs, codes: {}",
            count(found.len() as u64, "failed event POST"),
            codes.into_iter().collect::<Vec<_>>().join(", ")
        ),
        format!("last: {}", last.cite()),
    ];
    if let Some(a) = attempts.last() {
        evidence.push(format!(
            "{} before giving up (Kopf tries each POST up to 9 times); last: {}",
            count(attempts.len() as u64, "failed request attempt"),
            a.cite()
        ));
    }
    if let Some(message) = found.iter().rev().find_map(|(_, f)| f.message.clone()) {
        evidence.push(format!("API message: {message}"));
    }
    let forbidden: Vec<&Line> = found
        .iter()
        .filter(|(_, f)| f.code == Some(403))
        .map(|(l, _)| *l)
        .collect();
    let others = found.len() - forbidden.len();
    let title = format!(
        "the operator failed to post {}; it logged and ignored the failure",
        count(found.len() as u64, "event")
    );
    if forbidden.is_empty() {
        return vec![finding(
            "event-post-failed",
            Severity::Problem,
            title,
            evidence,
            Some("the POSTs failed for a reason other than RBAC: check the API server's reachability from the operator Pod and its events quota".into()),
        )];
    }
    // A 403 older than the fix of the events rule is history, not a problem now.
    let fixed = Fixed::of(ctx);
    let skew = ctx.options.skew;
    let current: Vec<&&Line> = forbidden
        .iter()
        .filter(|l| !fixed.predates(l.record.time(), skew))
        .collect();
    let mut dating = Vec::new();
    if let Some(how) = &fixed.allowed_now {
        dating.push(format!("the events rule allows it now: {how}"));
    }
    if let Some(g) = &fixed.granted {
        dating.push(match g.written {
            Some(w) => format!(
                "granted by {}, last written at {} (API server clock, managedFields/creationTimestamp)",
                g.by,
                crate::time::rfc3339_seconds(w)
            ),
            None => format!("granted by {} (no write time in evidence)", g.by),
        });
    }
    if let Some((_, post)) = &fixed.last_post {
        dating.push(format!("a later POST went through: {post}"));
    }
    let grant_fix = format!(
        "grant the events rule named by rbac-events (the 403 above), then {}",
        after_the_grant(ctx)
    );
    if fixed.allowed_now.is_some() && current.is_empty() && others == 0 {
        evidence.extend(dating);
        return vec![finding(
            "event-post-failed",
            Severity::Ok,
            format!(
                "the operator's {} failed with 403 before the events rule was granted; none failed since",
                count(forbidden.len() as u64, "event POST")
            ),
            evidence,
            None,
        )];
    }
    if fixed.allowed_now.is_some() && others == 0 {
        // Allowed now, yet nothing dates the 403s before the grant (or some come after it).
        evidence.extend(dating);
        let after = current.len() < forbidden.len();
        return vec![finding(
            "event-post-failed",
            Severity::Warning,
            if after {
                format!(
                    "{} of the operator's 403s on event POSTs came after the events rule was granted: another namespace or ServiceAccount, or clocks apart?",
                    current.len()
                )
            } else if fixed.granted.as_ref().is_some_and(|g| g.written.is_some()) || fixed.last_post.is_some() {
                format!(
                    "the operator's {} failed with 403, but the events rule allows it now; the grant (or a later POST) is within the clock skew tolerance ({} s) of them, so which came first cannot be told",
                    count(forbidden.len() as u64, "event POST"),
                    skew.num_seconds()
                )
            } else {
                format!(
                    "the operator's {} failed with 403, but the events rule allows it now: probably granted since, though nothing in evidence dates the grant",
                    count(forbidden.len() as u64, "event POST")
                )
            },
            evidence,
            Some(after_the_grant(ctx)),
        )];
    }
    evidence.extend(dating);
    vec![finding(
        "event-post-failed",
        Severity::Problem,
        title,
        evidence,
        Some(grant_fix),
    )]
}

// ---- posting settings -------------------------------------------------------------------------

/// The operator's source files (ConfigMap keys ending in `.py`) mounted by its Deployment.
fn sources(ctx: &Ctx<'_>) -> Vec<(String, String)> {
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
fn posting_off_hides(ctx: &Ctx<'_>, mut f: Finding) -> Finding {
    if f.id != "posting-disabled" || f.severity != Severity::Problem || !failures(ctx).is_empty() {
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

fn posting(ctx: &Ctx<'_>) -> Vec<Finding> {
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
            "errors-not-posted",
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
                    "posting-disabled",
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
                    "posting-disabled",
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
fn undecidable_line(at: &settings::SourceLine, guard: Option<&settings::SourceLine>, why: &str) -> String {
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
    fn describe(&self, at: &settings::SourceLine) -> String {
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
    let version: Option<KopfVersion> = ctx.deployment.and_then(settings::kopf_version);
    let files = sources(ctx);
    // The container's env decides `os.environ` conditions (ConfigMaps in evidence included;
    // Secrets are never read).
    let env = match ctx.deployment {
        Some(d) => settings::Env::of_deployment(
            d,
            &op.container,
            ctx.snapshot.operator.configmaps.get().map(Vec::as_slice).unwrap_or(&[]),
        ),
        None => settings::Env::unknown(),
    };
    let analyses: Vec<settings::PostingSource> = files
        .iter()
        .map(|(f, s)| settings::posting_settings_in(f, s, &env))
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
            "posting-disabled",
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
            "errors-not-posted",
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
        return vec![finding("errors-not-posted", Severity::Ok, title.into(), evidence, None)];
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
        "errors-not-posted",
        Severity::Problem,
        title,
        evidence,
        Some(fix),
    )]
}

// ---- the events that exist ---------------------------------------------------------------------

fn expired(ctx: &Ctx<'_>) -> Vec<Finding> {
    let Some(now) = ctx.now else { return Vec::new() };
    if ctx.snapshot.events.get().is_none() || !ctx.own_events.is_empty() {
        return Vec::new();
    }
    let old: Vec<&Line> = failures(ctx)
        .into_iter()
        .filter(|l| l.record.time().is_some_and(|t| now - t > ctx.options.event_ttl))
        .collect();
    let Some(last) = old.last() else { return Vec::new() };
    vec![finding(
        "events-expired",
        Severity::Warning,
        format!(
            "{} {} older than the event TTL ({}); {} gone",
            count(old.len() as u64, "handler failure"),
            is_are(old.len() as u64),
            human_duration(ctx.options.event_ttl),
            if old.len() == 1 {
                "its event is"
            } else {
                "their events are"
            }
        ),
        vec![
            format!("now: {} (evidence clock)", rfc3339_millis(now)),
            format!("last expired failure: {}", last.cite()),
            "no events left on the object".into(),
        ],
        Some(format!(
            "read the failures from the logs instead: kubectl microservice logs --handler accept {} -n {}",
            ctx.name, ctx.ns
        )),
    )]
}

fn elsewhere(ctx: &Ctx<'_>) -> Vec<Finding> {
    let Some(events) = ctx.snapshot.events.get() else {
        return Vec::new();
    };
    let mut evidence = Vec::new();
    let mut stale = false;
    for e in events {
        let io = &e.involved_object;
        if io.kind.as_deref() != Some("Microservice") || io.name.as_deref() != Some(ctx.name) {
            continue;
        }
        let ns = io.namespace.as_ref().or(e.metadata.namespace.as_ref());
        let describe = |why: String| {
            format!(
                "event {}/{} type {} reason {} at {}: {why}",
                e.metadata.namespace.as_deref().unwrap_or(""),
                e.metadata.name.as_deref().unwrap_or("?"),
                e.type_.as_deref().unwrap_or("<none>"),
                e.reason.as_deref().unwrap_or("<none>"),
                event_time(e)
                    .map(rfc3339_millis)
                    .unwrap_or_else(|| "unknown time".into()),
            )
        };
        if ns.map(String::as_str) != Some(ctx.ns) {
            stale = true;
            evidence.push(describe(format!(
                "in namespace {}, not {}",
                ns.map(String::as_str).unwrap_or("<none>"),
                ctx.ns
            )));
        } else if io.uid.is_none() {
            stale = true;
            evidence.push(describe(
                "involvedObject.uid is missing: kubectl describe does not show it".into(),
            ));
        } else if io.uid != ctx.obj.metadata.uid {
            stale = true;
            evidence.push(describe(format!(
                "involvedObject.uid {} is not this object's uid {} (a predecessor with the same name)",
                io.uid.as_deref().unwrap_or(""),
                ctx.obj.metadata.uid.as_deref().unwrap_or("?")
            )));
        } else if !matches!(e.type_.as_deref(), Some("Normal") | Some("Warning")) {
            evidence.push(describe(
                "type is neither Normal nor Warning: `--field-selector type=Warning` hides it".into(),
            ));
        }
    }
    if evidence.is_empty() {
        return Vec::new();
    }
    let title = if stale {
        "events matching the name are about another object (another namespace or uid)"
    } else {
        "events of a type other than Normal/Warning exist: a type=Warning filter hides them"
    };
    vec![finding(
        "events-elsewhere",
        Severity::Warning,
        title.into(),
        evidence,
        Some(format!(
            "list them all: kubectl get events -A --field-selector involvedObject.kind=Microservice,involvedObject.name={}",
            ctx.name
        )),
    )]
}

fn caller_events(ctx: &Ctx<'_>) -> Vec<Finding> {
    match ctx.snapshot.events.gap() {
        Some(gap) if matches!(gap.reason, GapReason::Forbidden(_)) => vec![finding(
            "caller-cannot-list-events",
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

// ---- the object's status ------------------------------------------------------------------------

/// Status fields the operator writes that the CRD's status schema (of its storage version)
/// would prune: no `x-kubernetes-preserve-unknown-fields` and no such property. Ours writes
/// `phase`, `observedGeneration`, `conditions`; a Kopf handler here writes `phase` (Kopf's own
/// progress under `status.kopf` is not counted: Kopf falls back to annotations).
fn pruned_by_schema(ctx: &Ctx<'_>) -> Vec<String> {
    let Some(crd) = ctx.snapshot.crd.get() else {
        return Vec::new();
    };
    // The object is read as its storage version (the one objects are persisted in).
    let Some(v) = crd.spec.versions.iter().find(|v| v.storage) else {
        return Vec::new();
    };
    let Some(root) = v.schema.as_ref().and_then(|s| s.open_api_v3_schema.as_ref()) else {
        return Vec::new();
    };
    if root.x_kubernetes_preserve_unknown_fields == Some(true) {
        return Vec::new();
    }
    let status = root.properties.as_ref().and_then(|p| p.get("status"));
    if status.is_some_and(|s| s.x_kubernetes_preserve_unknown_fields == Some(true)) {
        return Vec::new();
    }
    let writes: &[&str] = match ctx.operator.as_ref().map(|o| o.kind) {
        Some(OperatorKind::Ours) => &["phase", "observedGeneration", "conditions"],
        _ => &["phase"],
    };
    writes
        .iter()
        .filter(|f| {
            !status
                .and_then(|s| s.properties.as_ref())
                .is_some_and(|p| p.contains_key(**f))
        })
        .map(|f| format!("status.{f}"))
        .collect()
}

fn pruned(ctx: &Ctx<'_>) -> Vec<Finding> {
    let lines: Vec<&Line> = ctx
        .lines
        .iter()
        .filter(|l| l.record.lifecycle() == Lifecycle::PatchInconsistencies)
        .collect();
    let by_schema = pruned_by_schema(ctx);
    if lines.is_empty() && !by_schema.is_empty() {
        return vec![finding(
            "status-pruned",
            Severity::Problem,
            format!(
                "the CRD's status schema drops {} that the operator writes",
                by_schema.join(", ")
            ),
            vec![format!(
                "CRD {}: the status schema has no property {} and no x-kubernetes-preserve-unknown-fields",
                crate::resource::CRD_NAME,
                by_schema.join(", ")
            )],
            Some(schema_fix(ctx, &by_schema)),
        )];
    }
    let Some(last) = lines.last() else { return Vec::new() };
    // What the API server dropped, field by field, from every such line.
    let mut removed: Vec<(String, char)> = Vec::new();
    for l in &lines {
        for (field, first) in crate::kopf::messages::removed_status_fields(&l.record.message) {
            if !removed.iter().any(|(f, _)| *f == field) {
                removed.push((field, first));
            }
        }
    }
    let cite = format!("{}; last: {}", count(lines.len() as u64, "such line"), last.cite());
    // Kopf's own progress (`status.kopf.progress`): Kopf up to 1.43 writes it to the status and
    // to annotations `kopf.zalando.org/<handler>` (SmartProgressStorage, the default), and
    // reads either, so nothing is lost unless the operator keeps state only in the status.
    let status_only_storage = sources(ctx)
        .iter()
        .any(|(_, text)| text.contains("StatusProgressStorage") || text.contains("StatusDiffBaseStorage"));
    let read_by_status = staleness::STATUS_FIELDS_READ;
    let (kopf, rest): (Vec<_>, Vec<_>) = removed.iter().partition(|(f, _)| f == "kopf");
    let (verdict_fields, results): (Vec<_>, Vec<_>) = rest
        .into_iter()
        .partition(|(f, _)| read_by_status.contains(&f.as_str()));
    let mut out = Vec::new();
    if !verdict_fields.is_empty() || (removed.is_empty()) {
        let names: Vec<String> = verdict_fields.iter().map(|(f, _)| format!("status.{f}")).collect();
        out.push(finding(
            "status-pruned",
            Severity::Problem,
            if names.is_empty() {
                "the API server dropped status fields the operator wrote: the CRD's status schema does not allow them"
                    .into()
            } else {
                format!(
                    "the API server dropped {} that the operator wrote: the CRD's status schema does not allow {}",
                    names.join(", "),
                    if names.len() == 1 { "it" } else { "them" }
                )
            },
            vec![cite.clone()],
            Some(field_fix(ctx, &verdict_fields)),
        ));
    }
    if !results.is_empty() {
        let names: Vec<String> = results.iter().map(|(f, _)| format!("status.{f}")).collect();
        out.push(finding(
            "status-pruned",
            Severity::Warning,
            format!(
                "the API server dropped {} (a handler's return value, which Kopf stores as status.<handler id>): the CRD's status schema has no such property; the handling itself is not affected",
                names.join(", ")
            ),
            vec![cite.clone()],
            Some(field_fix(ctx, &results)),
        ));
    }
    if !kopf.is_empty() && out.is_empty() {
        out.push(finding(
            "status-pruned",
            if status_only_storage { Severity::Problem } else { Severity::Ok },
            if status_only_storage {
                "the API server dropped status.kopf, where this operator keeps Kopf's state (a Status*Storage in its source): the CRD's status schema does not allow it".into()
            } else {
                "the API server dropped status.kopf (Kopf's progress copy): nothing is lost, Kopf keeps its progress in annotations kopf.zalando.org/<handler> too".into()
            },
            vec![
                cite,
                "Kopf 1.38's default SmartProgressStorage writes progress to the annotations and to status.kopf.progress, and reads either".into(),
            ],
            status_only_storage.then(|| field_fix(ctx, &kopf)),
        ));
    }
    out
}

/// The fix for dropped `status.<field>`s: a JSON patch that adds each as a property of the
/// CRD's status schema (its type from the value written; a dict keeps what it holds), on the
/// storage version. The CRD is shared: it is every operator's and user's of Microservices on
/// the cluster, so the patch only adds room, and says so. Without the CRD in evidence, or with
/// no field named, the general edit.
fn field_fix(ctx: &Ctx<'_>, fields: &[&(String, char)]) -> String {
    let Some(index) = storage_version_index(ctx).filter(|_| !fields.is_empty()) else {
        return crd_status_fix();
    };
    let schemas: Vec<(&str, &str)> = fields
        .iter()
        .map(|(field, first)| {
            let schema = match first {
                '\'' | '"' => r#"{"type":"string"}"#,
                '0'..='9' | '-' => r#"{"type":"integer"}"#,
                'T' | 'F' => r#"{"type":"boolean"}"#,
                '[' => r#"{"type":"array","items":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}"#,
                _ => r#"{"type":"object","x-kubernetes-preserve-unknown-fields":true}"#,
            };
            (field.as_str(), schema)
        })
        .collect();
    let root = format!("/spec/versions/{index}/schema/openAPIV3Schema/properties/status");
    // An `add` needs the parent: a status schema without `properties`, or no `status` at all,
    // gets them in one op.
    let status = ctx
        .snapshot
        .crd
        .get()
        .and_then(|crd| crd.spec.versions.get(index))
        .and_then(|v| {
            v.schema
                .as_ref()?
                .open_api_v3_schema
                .as_ref()?
                .properties
                .as_ref()?
                .get("status")
        });
    let properties = || {
        let each: Vec<String> = schemas.iter().map(|(f, schema)| format!(r#""{f}":{schema}"#)).collect();
        format!("{{{}}}", each.join(","))
    };
    let ops: Vec<String> = match status {
        None => vec![format!(
            r#"{{"op":"add","path":"{root}","value":{{"type":"object","properties":{}}}}}"#,
            properties()
        )],
        Some(s) if s.properties.is_none() => vec![format!(
            r#"{{"op":"add","path":"{root}/properties","value":{}}}"#,
            properties()
        )],
        Some(_) => schemas
            .iter()
            .map(|(field, schema)| format!(r#"{{"op":"add","path":"{root}/properties/{field}","value":{schema}}}"#))
            .collect(),
    };
    format!(
        "add {} to the CRD's status schema; the CRD {} is shared by every operator and user of Microservices on the cluster (this adds properties and changes nothing else):\n  kubectl patch crd {} --type=json -p '[{}]'",
        fields
            .iter()
            .map(|(f, _)| format!("status.{f}"))
            .collect::<Vec<_>>()
            .join(", "),
        crate::resource::CRD_NAME,
        crate::resource::CRD_NAME,
        ops.join(",")
    )
}

/// The fix for `status.<field>`s the CRD's status schema lacks ([`pruned_by_schema`]): the JSON
/// patch of [`field_fix`], each field typed as the operator writes it (`observedGeneration` an
/// integer, `conditions` a list, `phase` a string). An operator of ours retries a refused status
/// write, so the patch alone gets the status written.
fn schema_fix(ctx: &Ctx<'_>, fields: &[String]) -> String {
    let typed: Vec<(String, char)> = fields
        .iter()
        .map(|f| {
            let name = f.strip_prefix("status.").unwrap_or(f).to_string();
            let first = match name.as_str() {
                "observedGeneration" => '0',
                "conditions" => '[',
                _ => '"',
            };
            (name, first)
        })
        .collect();
    field_fix(ctx, &typed.iter().collect::<Vec<_>>())
}

/// The fix of `status-pruned`, whichever operator writes the status (the CRD is shared).
fn crd_status_fix() -> String {
    format!(
        "add the fields to the CRD's status schema (or `x-kubernetes-preserve-unknown-fields: true` under `status`): kubectl edit crd {}",
        crate::resource::CRD_NAME
    )
}

/// `status`'s assessment of the object, as `status` makes it (the same facts and order).
fn verdict_of(ctx: &Ctx<'_>) -> staleness::Assessment {
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
    staleness::with_pruned_status(a, ctx.obj, super::cycles::pruned_fields(ctx.snapshot).get(&ctx.key))
}

/// The finding that states `status`'s first reason, when one does: `patch-rejected`,
/// `deletion-pending`, `status-pruned`, else `accepted-stale` for a verdict that says the handler
/// has not accepted the current spec.
fn verdict_finding(code: &str) -> &'static str {
    match code {
        "patch-rejected" => "patch-rejected",
        "deletion-pending" => "deletion-pending",
        "status-pruned" => "status-pruned",
        _ => "accepted-stale",
    }
}

/// `accepted-stale`: `status`'s verdict for the object, when it says that the handler has not
/// accepted the current spec (`stale`, or `never-handled` while a handler tries: Kopf's
/// progress annotation or a retry in the logs or events) — the same assessment `status` makes
/// ([`staleness::assess`] over [`log_facts`]), so the two commands never disagree. Its title
/// names the verdict and its first reason (a retry, a failed last cycle, the changed fields).
/// A never-handled object that nothing tried is not this finding (the operator findings say
/// why nothing handles it); a pending deletion is `deletion-pending`'s.
fn stale(ctx: &Ctx<'_>, blocking: &[&'static str]) -> Vec<Finding> {
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
    let fix = match first.code {
        "handler-running" | "nothing-logged-since-change" => {
            let (states, fix) = not_handling(ctx, first.code);
            evidence.extend(states);
            match blocking.first() {
                Some(id) => {
                    format!("the operator is kept from handling: {id} says why, and its fix (a restart alone does not)")
                }
                None => fix,
            }
        }
        _ => format!(
            "see the handler's runs and their errors: kubectl microservice logs --handler accept {} -n {}",
            ctx.name, ctx.ns
        ),
    };
    vec![finding("accepted-stale", Severity::Problem, title, evidence, Some(fix))]
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
            format!(
                "see what the operator logged: kubectl microservice logs --handler accept {} -n {}",
                ctx.name, ctx.ns
            ),
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
            "the handler does not return: see what it waits on in its log (kubectl microservice logs --handler accept {} -n {}); restarting frees the run: {restart}",
            ctx.name, ctx.ns
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

/// `patch-rejected`: Kopf logged the object's final PATCH as rejected (`Throttling for N seconds
/// due to an unexpected error: APIClientError(...)` right after `... is processed`), and no cycle
/// completed since ([`staleness::LogFacts::latest_rejection`], the same facts as `status`'s
/// `patch-rejected` reason): the handler runs, nothing of it is saved, and Kopf runs it again at
/// every event and restart. The fix follows the API error: for the annotation size limit
/// (nolar/kopf#1087) the object's largest annotation, or Kopf's `StatusDiffBaseStorage`; for a
/// 403 the RBAC rule. An earlier rejection followed by a completed cycle is `ok`.
fn patch_rejected(ctx: &Ctx<'_>) -> Vec<Finding> {
    let facts = log_facts(ctx.snapshot);
    let Some(logs) = facts.get(&ctx.key) else {
        return Vec::new();
    };
    let LogFacts::Read {
        last_rejection: Some(last),
        ..
    } = logs
    else {
        return Vec::new();
    };
    let Some(rejection) = logs.latest_rejection() else {
        return vec![finding(
            "patch-rejected",
            Severity::Ok,
            format!(
                "Kopf's PATCH of this object was rejected earlier ({}), and a later handling cycle completed",
                count(last.count, "time")
            ),
            vec![format!("last rejection: {}", last.line)],
            None,
        )];
    };
    let annotation_fact =
        staleness::handled_record(ctx.obj).map(|r| format!("{} records an earlier spec", r.annotation));
    let reason = staleness::patch_rejected(ctx.obj, rejection, logs, annotation_fact.as_deref());
    let mut evidence = reason.evidence.clone();
    // The handler successes since the last cycle whose PATCH went through (a cycle end not
    // followed by a Throttling line before the next cycle's end).
    let mut saved_upto = 0;
    let mut last_end: Option<usize> = None;
    let mut rejected = false;
    for (i, l) in ctx.lines.iter().enumerate() {
        match l.record.lifecycle() {
            Lifecycle::CycleProcessed { .. } => {
                if let (Some(end), false) = (last_end, rejected) {
                    saved_upto = end + 1;
                }
                last_end = Some(i);
                rejected = false;
            }
            Lifecycle::Throttled(_) => rejected = true,
            _ => {}
        }
    }
    let unsaved: Vec<&Line> = ctx.lines[saved_upto.min(ctx.lines.len())..]
        .iter()
        .filter(|l| {
            matches!(
                l.record.lifecycle(),
                Lifecycle::HandlerOutcome {
                    outcome: Outcome::Succeeded,
                    ..
                }
            )
        })
        .collect();
    if let Some(last) = unsaved.last() {
        evidence.push(format!(
            "{} logged for {} since its last saved cycle, none saved; last: {}",
            crate::text::count_as(unsaved.len() as u64, "handler success", "handler successes"),
            ctx.key,
            last.cite()
        ));
    }
    let normal = ctx
        .own_events
        .iter()
        .filter(|e| e.type_.as_deref() == Some("Normal") && e.reason.as_deref() == Some("Logging"))
        .count();
    if normal > 0 {
        evidence.push(format!(
            "the object's {} `Logging` events (such as \"Handler 'accept' succeeded.\") are posted before Kopf's PATCH: they do not mean that the handling was saved",
            count(normal as u64, "Normal")
        ).replace("Normals", "Normal"));
    }
    let failure = &rejection.failure;
    let op = ctx.operator.as_ref();
    let restart = op
        .map(|op| format!("kubectl -n {} rollout restart deployment {}", op.namespace, op.name))
        .unwrap_or_else(|| "restart the operator".into());
    let fix = if failure.annotations_too_long() {
        let value = serde_json::to_value(ctx.obj).unwrap_or_default();
        let budget = crate::kopf::diffbase::annotation_budget(&value);
        let remove = match &budget.largest {
            Some((key, bytes)) => format!(
                "keep the object's annotations under half of the {}-byte limit, since Kopf's record copies them: move the content of the largest, {key} ({bytes} bytes), elsewhere (a ConfigMap) or remove it:\n  kubectl annotate microservice {} -n {} {key}-\nKopf handles the object again at that change (it is an event) and its PATCH then fits.",
                crate::kopf::diffbase::ANNOTATIONS_LIMIT_BYTES,
                ctx.name,
                ctx.ns
            ),
            None => "make the object's annotations smaller: Kopf copies them into its record.".into(),
        };
        let crd_keeps = status_keeps_kopf(ctx);
        let crd_step = match crd_keeps {
            Some(true) => "the CRD's status schema keeps it".to_string(),
            Some(false) => format!(
                "the CRD's status schema does not keep it, so first let it (this also keeps Kopf's status.kopf.progress):\n  kubectl patch crd {} --type=json -p '[{{\"op\":\"add\",\"path\":\"/spec/versions/{}/schema/openAPIV3Schema/properties/status/properties/kopf\",\"value\":{{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true}}}}]'",
                crate::resource::CRD_NAME,
                storage_version_index(ctx).unwrap_or(0)
            ),
            None => "the CRD's status schema must keep it (the CRD is not in evidence)".to_string(),
        };
        format!(
            "{remove}\nOr keep Kopf's record out of the annotations: in the operator's @kopf.on.startup function set\n  settings.persistence.diffbase_storage = kopf.StatusDiffBaseStorage()\n(Kopf then writes status.kopf.last-handled-configuration; {crd_step}), then {restart}. Objects handled before lose their record once and are handled as new; the annotation left behind can go: kubectl annotate microservice {} -n {} {}-",
            ctx.name,
            ctx.ns,
            crate::kopf::diffbase::DIFFBASE_ANNOTATION
        )
    } else if failure.code == Some(403) {
        let user = op
            .map(|op| format!("system:serviceaccount:{}:{}", op.namespace, op.service_account))
            .unwrap_or_else(|| "the operator's ServiceAccount".into());
        // The API's 403 names the verb and resource: `... cannot patch resource "microservices"
        // in API group ...` (the object: Kopf's annotations) or `"microservices/status"`.
        let message = failure.message.as_deref().unwrap_or("");
        let resource = message
            .split("cannot patch resource \"")
            .nth(1)
            .and_then(|r| r.split('"').next())
            .filter(|r| *r == PLURAL || *r == "microservices/status")
            .unwrap_or(PLURAL);
        let role = op.and_then(|op| {
            rbac::bound_role(
                &ctx.snapshot.rbac,
                Account {
                    namespace: &op.namespace,
                    name: &op.service_account,
                },
                ctx.ns,
            )
        });
        let patch = match &role {
            Some(r) => format!(
                "\nwith: kubectl -n {} patch role {r} --type=json -p '[{{\"op\":\"add\",\"path\":\"/rules/-\",\"value\":{{\"apiGroups\":[\"{GROUP}\"],\"resources\":[\"{resource}\"],\"verbs\":[\"patch\"]}}}}]'",
                ctx.ns
            ),
            None => String::new(),
        };
        format!(
            "let {user} patch {resource} in {} (Kopf writes its annotations with a PATCH of the object, the status with one of microservices/status), in its Role:\n{}{patch}\ncheck it: {} (it prints yes); then Kopf handles the object again at its next event, or now: {restart}",
            ctx.ns,
            rbac::rule_yaml(GROUP, resource, &["patch"]),
            can_i_ours("patch", resource, ctx.ns, &user)
        )
    } else if failure.is_api_error() {
        format!(
            "the API server refuses the PATCH ({}): fix what its message names; Kopf tries again at the object's next event or at {restart}",
            failure.describe()
        )
    } else {
        format!(
            "the operator raised {} while processing the object, outside its handlers: see the traceback after the Throttling line in its log; Kopf tries again at the object's next event",
            failure.describe()
        )
    };
    vec![finding(
        "patch-rejected",
        Severity::Problem,
        format!(
            "Kopf's handling of this object never completes: the API server rejects its final PATCH ({})",
            failure.describe()
        ),
        evidence,
        Some(fix),
    )]
}

/// Whether the CRD's storage version keeps `status.kopf` (Kopf's status-side records):
/// `x-kubernetes-preserve-unknown-fields` on the root or the status, or a `kopf` property that
/// does. `None` without the CRD.
fn status_keeps_kopf(ctx: &Ctx<'_>) -> Option<bool> {
    let crd = ctx.snapshot.crd.get()?;
    let v = crd.spec.versions.iter().find(|v| v.storage)?;
    let Some(root) = v.schema.as_ref().and_then(|s| s.open_api_v3_schema.as_ref()) else {
        // No schema at all: apiextensions/v1 requires one; treat as unknown.
        return None;
    };
    if root.x_kubernetes_preserve_unknown_fields == Some(true) {
        return Some(true);
    }
    let Some(status) = root.properties.as_ref().and_then(|p| p.get("status")) else {
        return Some(false);
    };
    if status.x_kubernetes_preserve_unknown_fields == Some(true) {
        return Some(true);
    }
    Some(
        status
            .properties
            .as_ref()
            .and_then(|p| p.get("kopf"))
            .is_some_and(|k| k.x_kubernetes_preserve_unknown_fields == Some(true)),
    )
}

/// The index of the CRD's storage version in `spec.versions` (for a JSON-patch path).
fn storage_version_index(ctx: &Ctx<'_>) -> Option<usize> {
    ctx.snapshot.crd.get()?.spec.versions.iter().position(|v| v.storage)
}

/// `deletion-pending`: the object has a deletionTimestamp and finalizers hold it (the same facts
/// as `status`'s `terminating` verdict). A problem when a finalizer's owner is not running (nothing
/// will remove it), else a warning.
fn deletion_pending(ctx: &Ctx<'_>) -> Vec<Finding> {
    let operators = ctx.snapshot.operator.deployments.get().map(|d| find_operators(d));
    let Some(pending) = super::deletion::pending(ctx.obj, ctx.now, operators.as_deref()) else {
        return Vec::new();
    };
    let severity = if pending.finalizers.iter().any(|f| f.owner_running == Some(false)) {
        Severity::Problem
    } else {
        Severity::Warning
    };
    vec![finding(
        "deletion-pending",
        severity,
        pending.message(),
        pending.evidence(ctx.obj),
        pending.fix(),
    )]
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
        r.findings
            .push(finding("rbac-events", Severity::Warning, "t".into(), vec![], None));
        assert_eq!(r.exit_code(), 1);
    }

    /// A module's code, without its tests.
    fn code(source: &'static str) -> &'static str {
        source.split(concat!("#[cfg", "(test)]")).next().unwrap_or(source)
    }

    /// The ids passed to `finding(...)` in this module's code.
    fn emitted_ids() -> BTreeSet<String> {
        let call = concat!("finding", "(");
        let source = code(include_str!("events.rs"));
        let mut ids = BTreeSet::new();
        for (at, _) in source.match_indices(call) {
            let rest = source[at + call.len()..].trim_start();
            if let Some(literal) = rest.strip_prefix('"') {
                ids.insert(literal.split('"').next().unwrap_or_default().to_string());
            }
        }
        ids
    }

    /// The `Finding { id: <what>, .. }` literals of a module's code: the text after `id:` (`id`
    /// for the shorthand `Finding { id, .. }`).
    fn struct_literal_ids(source: &'static str) -> Vec<&'static str> {
        let source = code(source);
        source
            .match_indices(concat!("Finding", " {"))
            .filter_map(|(at, m)| source[at + m.len()..].trim_start().strip_prefix("id"))
            .filter_map(|rest| match rest.trim_start().strip_prefix(':') {
                Some(value) => value.split(',').next().map(str::trim),
                None => rest.trim_start().starts_with(',').then_some("id"),
            })
            .collect()
    }

    #[test]
    fn the_emitted_ids_are_the_listed_ids() {
        // Findings are built by `finding(...)` here and with `id: ID` in diagnose::leading.
        assert_eq!(struct_literal_ids(include_str!("events.rs")), vec!["id"]);
        let leading = struct_literal_ids(include_str!("leading.rs"));
        assert!(
            !leading.is_empty() && leading.iter().all(|id| *id == "ID"),
            "{leading:?}"
        );
        let mut emitted = emitted_ids();
        emitted.insert(leading::ID.to_string());
        let listed: BTreeSet<String> = FINDING_IDS.iter().map(|s| s.to_string()).collect();
        assert_eq!(listed.len(), FINDING_IDS.len(), "duplicates in FINDING_IDS");
        assert_eq!(emitted, listed);
    }

    fn kopf_deployment(replicas: i64) -> (OperatorRef, Deployment) {
        let d: Deployment = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "kopf-operator", "namespace": "ops"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "op"}}, "template": {"spec": {"containers": [
                {"name": "operator", "image": "localhost/kopf:1.38", "command": ["kopf"], "args": ["run", "--standalone", "op.py"]}]}}}
        }))
        .unwrap();
        (crate::evidence::operator::recognise(&d).unwrap(), d)
    }

    fn pod_with(container_status: serde_json::Value) -> Pod {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "kopf-operator-abc", "namespace": "ops"},
            "status": {"phase": "Pending", "containerStatuses": [container_status]}
        }))
        .unwrap()
    }

    /// A pasted install creates the operator's namespace first (`manifests | kubectl apply`
    /// fails without it), and never takes over a Deployment of ours already in `ops` (its
    /// `--watch-namespace` would be replaced, its namespaces left without an operator).
    #[test]
    fn the_install_line_creates_its_namespace_and_takes_over_no_operator() {
        assert_eq!(
            install_line(&[], "todo"),
            "kubectl create namespace ops; kubectl microservice manifests --namespace ops --watch-namespace todo | kubectl apply -f -"
        );
        let (_, kopf_in_ops) = kopf_deployment(1);
        let mut ours_in_ops = kopf_in_ops.clone();
        ours_in_ops.metadata.name = Some("microservice-operator".into());
        // A Deployment of another name in ops is not touched by the manifests' objects.
        assert!(install_line(std::slice::from_ref(&kopf_in_ops), "todo").contains("--namespace ops "));
        assert_eq!(
            install_line(&[kopf_in_ops, ours_in_ops], "todo"),
            "kubectl create namespace todo-ops; kubectl microservice manifests --namespace todo-ops --watch-namespace todo | kubectl apply -f -"
        );
    }

    /// rbac-resource's fix appends the rules to the bound Role with one JSON patch and checks
    /// them; a subresource is asked with `--subresource` (`microservices/status.GROUP` names an
    /// object `status.GROUP`, not the subresource).
    #[test]
    fn rbac_resource_fix_patches_the_role_and_checks_the_subresource() {
        let fix = resource_fix(
            "add to the rules of Role store/op",
            Some("op"),
            "store",
            "system:serviceaccount:ops:op",
            &[("microservices/status", "patch"), ("microservices", "watch")],
        );
        assert_eq!(
            fix,
            "add to the rules of Role store/op:\n- apiGroups: [\"platform.example.io\"]\n  resources: [\"microservices/status\"]\n  verbs: [\"patch\"]\n- apiGroups: [\"platform.example.io\"]\n  resources: [\"microservices\"]\n  verbs: [\"watch\"]\nwith: kubectl -n store patch role op --type=json -p '[{\"op\":\"add\",\"path\":\"/rules/-\",\"value\":{\"apiGroups\":[\"platform.example.io\"],\"resources\":[\"microservices/status\"],\"verbs\":[\"patch\"]}},{\"op\":\"add\",\"path\":\"/rules/-\",\"value\":{\"apiGroups\":[\"platform.example.io\"],\"resources\":[\"microservices\"],\"verbs\":[\"watch\"]}}]'\nthen check it with kubectl auth can-i patch microservices.platform.example.io --subresource=status -n store --as=system:serviceaccount:ops:op and kubectl auth can-i watch microservices.platform.example.io -n store --as=system:serviceaccount:ops:op (it prints yes)"
        );
        assert!(!resource_fix("add to a Role", None, "store", "u", &[("microservices", "list")]).contains("with:"));
    }

    /// Issue 11 trial B: each cause of "no running Pod" gets the fix that clears it; a
    /// `rollout restart` (which keeps 0 replicas) is never the fix.
    #[test]
    fn no_running_pod_names_its_cause_and_a_working_fix() {
        let (op, d) = kopf_deployment(0);
        let (why, fix) = not_running_cause(&op, Some(&d), &[]);
        assert!(why.contains("spec.replicas=0"), "{why}");
        assert!(
            fix.contains("kubectl -n ops scale deployment/kopf-operator --replicas=1"),
            "{fix}"
        );
        assert!(!fix.contains("kubectl -n ops rollout restart"), "{fix}");

        let (op, d) = kopf_deployment(1);
        let pull = pod_with(
            serde_json::json!({"name": "operator", "image": "localhost/kopf:1.39", "imageID": "", "ready": false, "restartCount": 0,
            "state": {"waiting": {"reason": "ErrImageNeverPull", "message": "Container image \"localhost/kopf:1.39\" is not present"}}}),
        );
        let (why, fix) = not_running_cause(&op, Some(&d), &[&pull]);
        assert!(why.contains("ErrImageNeverPull for image localhost/kopf:1.39"), "{why}");
        assert!(
            fix.contains("kubectl -n ops set image deployment/kopf-operator operator=IMAGE"),
            "{fix}"
        );

        let crash = pod_with(
            serde_json::json!({"name": "operator", "image": "localhost/kopf:1.38", "imageID": "", "ready": false, "restartCount": 4,
            "state": {"waiting": {"reason": "CrashLoopBackOff"}},
            "lastState": {"terminated": {"exitCode": 1, "reason": "Error"}}}),
        );
        let (why, fix) = not_running_cause(&op, Some(&d), &[&crash]);
        assert!(
            why.contains("CrashLoopBackOff, last exit code 1 (Error), 4 restarts"),
            "{why}"
        );
        assert!(
            fix.contains("kubectl -n ops logs kopf-operator-abc -c operator --previous"),
            "{fix}"
        );

        let (why, fix) = not_running_cause(&op, Some(&d), &[]);
        assert!(why.contains("no Pod"), "{why}");
        assert!(
            fix.contains("kubectl -n ops describe deployment kopf-operator"),
            "{fix}"
        );
        // Ours: the manifests' two replicas with leader election.
        let ours: Deployment = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "microservice-operator", "namespace": "ops"},
            "spec": {"replicas": 0, "selector": {}, "template": {"spec": {"containers": [
                {"name": "operator", "image": "x", "command": ["kubectl-microservice", "operate"]}]}}}
        }))
        .unwrap();
        let op = crate::evidence::operator::recognise(&ours).unwrap();
        let (_, fix) = not_running_cause(&op, Some(&ours), &[]);
        assert!(
            fix.contains("scale deployment/microservice-operator --replicas=2"),
            "{fix}"
        );
    }

    /// A 403 for another namespace is not this object's (issue 11 trial re-check).
    #[test]
    fn a_403_names_its_namespace() {
        let kopf = r#"Failed to post an event. Ignoring and continuing. Code: 403. Message: events is forbidden: User "system:serviceaccount:ops:op" cannot create resource "events" in API group "" in the namespace "team-b". Details: {'kind': 'events'}Event: type='Error'"#;
        assert_eq!(forbidden_namespace(kopf), Some("team-b"));
        let ours = r#"message="events.events.k8s.io is forbidden: User \"system:serviceaccount:store:op\" cannot create resource \"events\" in API group \"events.k8s.io\" in the namespace \"store\"""#;
        assert_eq!(forbidden_namespace(ours), Some("store"));
        assert_eq!(forbidden_namespace("connection reset"), None);
    }

    /// Kopf 1.38's inconsistencies line, field by field (issue 11 trial C).
    #[test]
    fn removed_status_fields_are_read_from_kopfs_tuples() {
        let line = "Patching failed with inconsistencies: (('remove', ('status', 'kopf'), {'progress': {'accept': {'started': '2026-12-01T09:24:21.651833+00:00'}}}, None), ('remove', ('status', 'accept'), {'image': 'x', 'port': 7000}, None), ('remove', ('status', 'note'), 'hi', None))";
        assert_eq!(
            crate::kopf::messages::removed_status_fields(line),
            vec![
                ("kopf".to_string(), '{'),
                ("accept".to_string(), '{'),
                ("note".to_string(), '\'')
            ]
        );
        // The whole status removed (`('status',)`) names no field.
        assert!(
            crate::kopf::messages::removed_status_fields(
                "Patching failed with inconsistencies: (('remove', ('status',), {'phase': 'Accepted'}, None),)"
            )
            .is_empty()
        );
    }

    /// Each headline states its finding's family, never "hidden or stale" for everything.
    #[test]
    fn headlines_state_the_first_findings_family() {
        assert_eq!(headline("rbac-events", false), "Events are not posted");
        assert_eq!(headline("operator-not-running", false), "Nothing handles the object");
        assert_eq!(
            headline("accepted-stale", false),
            "The handler has not accepted the current spec"
        );
        for id in FINDING_IDS {
            assert!(!headline(id, false).starts_with("A problem"), "{id} has no headline");
            assert!(!headline(id, true).starts_with("A warning"), "{id} has no headline");
        }
    }

    #[test]
    fn durations() {
        assert_eq!(human_duration(Duration::hours(1)), "1h");
        assert_eq!(human_duration(Duration::minutes(90)), "90m");
        assert_eq!(human_duration(Duration::seconds(5)), "5s");
    }
}
