//! The staleness verdict of `status`: is `Accepted` still true for the spec the object has now?
//!
//! Evidence, in order of strength (docs/diagnostics.md, `status`):
//! 1. ours: `status.observedGeneration` vs `metadata.generation`;
//! 2. a Kopf operator: the `*/last-handled-configuration` spec vs the current spec (each changed
//!    field named, old → new). Equal only means a cycle finished — Kopf rewrites the annotation
//!    also after a permanent failure — so fresh needs the logs' last `... is processed: N
//!    succeeded; 0 failed.` for the object, from its logs or its Kopf `Logging` events
//!    ([`super::cycles::log_facts`]); a failed last cycle is stale (`last-handling-failed`);
//!    no cycle end in evidence is `unknown` with reason `unconfirmed-no-logs`;
//! 3. managedFields alone: stale only when the latest spec writer owns nothing but spec fields and
//!    wrote more than the skew tolerance after the latest status write; otherwise unknown.
//!
//! A resume that has not happened yet is not staleness (a resume writes nothing).
//!
//! Before all of these: an object with `metadata.deletionTimestamp` is `terminating`
//! ([`super::deletion`]); the deletion's generation bump is never read as a spec change.

use chrono::{DateTime, Duration, Utc};
use serde::Serialize;
use serde_json::Value;

use super::deletion::{self, Pending};
use super::log_facts::{Activity, CycleEnd, EVENT_CLOCK, LogFacts, OpenStart, Rejection};
use crate::evidence::managed_fields::{self, Entry};
use crate::evidence::operator::OperatorRef;
use crate::kopf::diffbase::{self, ANNOTATIONS_LIMIT_BYTES};
use crate::kopf::messages::ApiFailure;
use crate::kopf::progress::{self, Progress};
use crate::resource::MicroserviceObject;
use crate::time::{rfc3339_millis, rfc3339_seconds};
use crate::vocab::cause::{KopfRecord, LAST_HANDLED_SUFFIX, kopf_record};

/// The verdicts of `status` (docs/contracts.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The status describes the current spec.
    Fresh,
    /// The status describes an older spec, or the last handling of this spec failed.
    Stale,
    /// No handler ever finished for this object.
    NeverHandled,
    /// The handler found the current spec invalid.
    Invalid,
    /// The evidence cannot decide.
    Unknown,
    /// A deletion is pending (`metadata.deletionTimestamp` set), held by finalizers
    /// ([`super::deletion`]). Added in schemaVersion 1 as a new enum value.
    Terminating,
}

impl Verdict {
    /// The contract spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Fresh => "fresh",
            Verdict::Stale => "stale",
            Verdict::NeverHandled => "never-handled",
            Verdict::Invalid => "invalid",
            Verdict::Unknown => "unknown",
            Verdict::Terminating => "terminating",
        }
    }

    /// Whether `status --exit-code` exits 1 for it. `terminating` is: the object neither serves
    /// its spec nor is gone, and the reason names who must act.
    pub fn is_problem(self) -> bool {
        matches!(
            self,
            Verdict::Stale | Verdict::NeverHandled | Verdict::Invalid | Verdict::Terminating
        )
    }
}

/// One reason behind a verdict, with the evidence it rests on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reason {
    /// Stable code, e.g. `generation-ahead`, `spec-changed-since-handled`, `last-handling-failed`.
    pub code: &'static str,
    /// One sentence.
    pub message: String,
    /// The facts: fields with values, log lines with their time, managedFields entries.
    pub evidence: Vec<String>,
}

/// A spec field whose value differs from the one last handled.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChangedField {
    /// Dotted path, e.g. `spec.port`.
    pub field: String,
    /// The handled value (`null` when absent).
    pub old: Value,
    /// The current value (`null` when absent).
    pub new: Value,
}

/// Who handled the object, by the records it carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum HandledBy {
    /// `status.observedGeneration` (our operator).
    KubectlMicroservice,
    /// A Kopf diff-base annotation.
    Kopf,
    /// No record.
    Unknown,
}

/// Tunables and context of the verdict.
#[derive(Debug, Clone, Copy)]
pub struct Options<'a> {
    /// Clock skew below which two times cannot be ordered (managedFields have 1 s resolution).
    pub skew: Duration,
    /// The evidence's "now" (for ages), when known.
    pub now: Option<DateTime<Utc>>,
    /// The recognised operator Deployments (who should remove a finalizer); `None` when they
    /// could not be listed.
    pub operators: Option<&'a [OperatorRef]>,
    /// Where the object's Kopf operator keeps its diff-base record, as its source sets it
    /// ([`crate::kopf::diffbase::storage_in`]); `None`: not set there, or not known.
    pub diffbase: Option<&'a diffbase::DiffbaseStorage>,
    /// The object's resource as kubectl commands name it
    /// ([`crate::resource::identity::ResourceId::kubectl_type`]); `None`: the Microservice.
    pub kubectl_type: Option<&'a str>,
}

impl Options<'_> {
    /// Whether the object is a Microservice (whose status convention, `status.phase: Accepted`,
    /// the reasons may name), not another resource of `--resource`.
    pub fn is_microservice(&self) -> bool {
        self.kubectl_type.is_none_or(|t| t == "microservice")
    }
}

impl Default for Options<'_> {
    fn default() -> Self {
        Options {
            skew: Duration::seconds(2),
            now: None,
            operators: None,
            diffbase: None,
            kubectl_type: None,
        }
    }
}

/// The verdict for one object, with everything `status` shows about it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Assessment {
    /// The verdict.
    pub verdict: Verdict,
    /// Why, with evidence.
    pub reasons: Vec<Reason>,
    /// Whose records the verdict used.
    pub handled_by: HandledBy,
    /// Spec fields changed since last handled (Kopf diff-base), old → new.
    pub changed_fields: Vec<ChangedField>,
    /// The latest status write (managedFields), when known.
    pub last_handled: Option<DateTime<Utc>>,
    /// The latest spec write (managedFields), when known.
    pub spec_changed: Option<DateTime<Utc>>,
    /// The pending deletion, when `verdict` is `terminating` (absent from JSON otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deletion: Option<Pending>,
}

/// Assesses `obj` (see the module docs), in the order of the evidence's strength: a pending
/// deletion (`terminating`), ours' generations (`by_generation`), Kopf's record
/// (`by_kopf_record`), a rejected PATCH without a record (`rejected_unrecorded`), no status at
/// all (`never_handled`), else managedFields alone (`by_managed_fields`).
pub fn assess(obj: &MicroserviceObject, logs: &LogFacts, options: Options<'_>) -> Assessment {
    let entries = managed_fields::entries(obj.metadata.managed_fields.as_ref());
    let (status_entry, spec_entry) = managed_fields::latest_status_and_spec(&entries);
    let a = Assessment {
        verdict: Verdict::Unknown,
        reasons: Vec::new(),
        handled_by: HandledBy::Unknown,
        changed_fields: Vec::new(),
        last_handled: status_entry.and_then(|e| e.time),
        spec_changed: spec_entry.and_then(|e| e.time),
        deletion: None,
    };
    if let Some(pending) = deletion::pending(
        options.kubectl_type.unwrap_or("microservice"),
        obj,
        options.now,
        options.operators,
    ) {
        return terminating(a, obj, pending);
    }
    if let Some(observed) = obj.observed_generation() {
        return by_generation(a, obj, observed, logs, &entries, options);
    }
    if let Some(record) = handled_record(obj) {
        return by_kopf_record(a, obj, &record, logs, &entries, options);
    }
    if let Some(rejection) = logs.latest_rejection() {
        return rejected_unrecorded(a, obj, rejection, logs);
    }
    if obj.phase().is_none() {
        return never_handled(a, obj, logs, options);
    }
    if let Some(reason) = retrying(
        obj,
        logs,
        "no */last-handled-configuration annotation: no cycle has completed",
    ) {
        return phase_in_an_unfinished_cycle(a, reason);
    }
    by_managed_fields(a, obj, (status_entry, spec_entry), &entries, options)
}

/// A phase, no Kopf record, and a handler still retrying (Kopf's progress records, or a retry
/// the logs hold after their last cycle end): one handler wrote the phase while another keeps
/// failing, so the cycle never completed and Kopf recorded no spec as handled (issue 18,
/// scenario team-india: `accept` set `Accepted`, `audit` failed 37 times). `stale` with
/// `retrying` first, as a rejected final PATCH with a phase is: the phase speaks for one
/// handler, not for the object's handling. managedFields would only say "undecidable" here.
/// `handled_by` stays unknown: the object holds no handling record (no diff-base).
fn phase_in_an_unfinished_cycle(mut a: Assessment, retrying: Reason) -> Assessment {
    a.verdict = Verdict::Stale;
    a.reasons.push(retrying);
    a
}

/// `terminating`: a pending deletion, whoever handled the object (the deletion's generation
/// bump is never read as a spec change).
fn terminating(mut a: Assessment, obj: &MicroserviceObject, pending: Pending) -> Assessment {
    a.verdict = Verdict::Terminating;
    a.handled_by = if obj.observed_generation().is_some() {
        HandledBy::KubectlMicroservice
    } else if handled_record(obj).is_some() {
        HandledBy::Kopf
    } else {
        HandledBy::Unknown
    };
    a.reasons.push(Reason {
        code: "deletion-pending",
        message: pending.message(),
        evidence: pending.evidence(obj),
    });
    a.deletion = Some(pending);
    a
}

/// Ours: `status.observedGeneration` against `metadata.generation`: behind is `stale` (with
/// what the logs say since the change, and the fields changed since accepted); current is
/// `invalid` or `fresh` by the phase.
fn by_generation(
    mut a: Assessment,
    obj: &MicroserviceObject,
    observed: i64,
    logs: &LogFacts,
    entries: &[Entry],
    options: Options<'_>,
) -> Assessment {
    let generation = obj.metadata.generation.unwrap_or(0);
    a.handled_by = HandledBy::KubectlMicroservice;
    let facts = vec![
        format!("metadata.generation={generation}"),
        format!("status.observedGeneration={observed}"),
    ];
    if observed < generation {
        a.verdict = Verdict::Stale;
        let fields = changed_since_accepted(&mut a, obj, entries);
        let fact = format!("status.observedGeneration={observed} < metadata.generation={generation}");
        a.reasons
            .extend(since_change(obj, logs, &fact, a.spec_changed, options));
        a.reasons.push(Reason {
            code: "generation-ahead",
            message: format!(
                "the spec changed (generation {generation}) after the handler last saw generation {observed}{fields}"
            ),
            evidence: facts,
        });
    } else if obj.phase() == Some("Invalid") {
        a.verdict = Verdict::Invalid;
        a.reasons.push(Reason {
            code: "invalid-spec",
            message: format!(
                "the handler found generation {observed} invalid: {}",
                condition_message(obj).unwrap_or_default()
            ),
            evidence: facts,
        });
    } else {
        a.verdict = Verdict::Fresh;
        a.reasons.push(Reason {
            code: "observed-generation-current",
            message: format!("the handler saw the current generation {generation}"),
            evidence: facts,
        });
    }
    a
}

/// What changed since our handler last accepted the spec, as the tail of the
/// `generation-ahead` message: with `status.acceptedSpec`, the exact fields, old → new (kept in
/// `a.changed_fields`); written by an older version without it, the spec fields managedFields
/// say were written since (a manager's fields, not which changed).
fn changed_since_accepted(a: &mut Assessment, obj: &MicroserviceObject, entries: &[Entry]) -> String {
    let accepted = obj.status.as_ref().and_then(|s| s.get("acceptedSpec"));
    match accepted {
        // Our handler recorded what it accepted: the exact changed fields, old → new.
        Some(accepted) => {
            let current = serde_json::json!({
                "image": obj.spec.get("image").cloned().unwrap_or(Value::Null),
                "port": obj.spec.get("port").cloned().unwrap_or(Value::Null),
            });
            a.changed_fields = diff("spec", accepted, &current);
            let names: Vec<String> = a
                .changed_fields
                .iter()
                .map(|c| format!("{} {} → {}", c.field, compact(&c.old), compact(&c.new)))
                .collect();
            if names.is_empty() {
                "; spec.image and spec.port equal status.acceptedSpec (another spec field changed)".to_string()
            } else {
                format!("; changed since accepted: {}", names.join(", "))
            }
        }
        // Written by an older version: managedFields name a manager's fields, not which changed.
        None => {
            let written = managed_fields::spec_fields_written_after(entries, a.last_handled);
            if written.is_empty() {
                String::new()
            } else {
                format!(
                    "; spec fields written since: {} (managedFields cannot tell which of a manager's fields changed)",
                    written.join(", ")
                )
            }
        }
    }
}

/// A Kopf operator's record of the spec it last handled ([`handled_record`]): left over from an
/// earlier setup (`unknown`, [`leftover_record`]); a rejected final PATCH (`stale`); a changed
/// spec (`stale`, with what the logs say since); a retry (`stale`); else the last cycle decides
/// ([`kopf_equal_spec`]).
fn by_kopf_record(
    mut a: Assessment,
    obj: &MicroserviceObject,
    record: &KopfRecord,
    logs: &LogFacts,
    entries: &[Entry],
    options: Options<'_>,
) -> Assessment {
    let (_, spec_entry) = managed_fields::latest_status_and_spec(entries);
    a.handled_by = HandledBy::Kopf;
    let recorded = record.spec.clone().unwrap_or(Value::Null);
    a.changed_fields = diff("spec", &recorded, &obj.spec);
    let annotation_fact = format!("{} records spec {}", record.annotation, compact(&recorded));
    if let Some(reason) = leftover_record(obj, record, &a.changed_fields, entries, options) {
        // The operator's settings keep its record elsewhere: the one read is not its current
        // record, and it disagrees with the spec: no verdict on it.
        a.verdict = Verdict::Unknown;
        a.reasons.push(reason);
        return a;
    }
    if let Some(rejection) = logs.latest_rejection() {
        // The last cycle's results were never saved: whatever the annotation says, the
        // status is not the handling of this spec.
        a.verdict = Verdict::Stale;
        a.reasons
            .push(patch_rejected(obj, rejection, logs, Some(&annotation_fact)));
        if !a.changed_fields.is_empty() {
            a.reasons.push(spec_changed_reason(
                &a.changed_fields,
                &annotation_fact,
                obj,
                spec_entry,
            ));
        }
        return a;
    }
    if !a.changed_fields.is_empty() {
        a.verdict = Verdict::Stale;
        a.reasons
            .extend(since_change(obj, logs, &annotation_fact, a.spec_changed, options));
        a.reasons.push(spec_changed_reason(
            &a.changed_fields,
            &annotation_fact,
            obj,
            spec_entry,
        ));
        return a;
    }
    if let Some(reason) = retrying(obj, logs, &annotation_fact) {
        a.verdict = Verdict::Stale;
        a.reasons.push(reason);
        return a;
    }
    let (verdict, reason) = kopf_equal_spec(logs, annotation_fact, options);
    a.verdict = verdict;
    a.reasons.push(reason);
    a
}

/// The spec equals Kopf's record, which Kopf rewrites after a permanent failure too: the last
/// cycle end (logs or the object's events) decides: failed is `stale`, succeeded `fresh`;
/// without one nothing says how the cycle ended, so the verdict is `unknown`, never a `fresh`
/// that the evidence does not hold.
fn kopf_equal_spec(logs: &LogFacts, annotation_fact: String, options: Options<'_>) -> (Verdict, Reason) {
    match logs {
        LogFacts::Read {
            last_cycle: Some(cycle),
            ..
        } if cycle.failed > 0 => (
            Verdict::Stale,
            Reason {
                code: "last-handling-failed",
                message: format!(
                    "the last handling cycle ended with {}: {}",
                    crate::text::count(u64::from(cycle.failed), "failed handler"),
                    if options.is_microservice() {
                        "the annotation was rewritten, but the status was not accepted for this spec"
                    } else {
                        "Kopf rewrote its record of the spec it handled, but not every handler succeeded for this spec"
                    }
                ),
                evidence: vec![annotation_fact, log_fact(cycle)],
            },
        ),
        LogFacts::Read {
            last_cycle: Some(cycle),
            ..
        } => (
            Verdict::Fresh,
            Reason {
                code: "last-cycle-succeeded",
                message: "the spec equals the one last handled, and the last cycle succeeded".into(),
                evidence: vec![annotation_fact, log_fact(cycle)],
            },
        ),
        LogFacts::Read {
            last_cycle: None,
            covers_from,
            ..
        } => {
            let logs = match covers_from {
                Some(since) => format!("the operator's logs (from {})", rfc3339_seconds(*since)),
                None => "no operator log lines in evidence".into(),
            };
            (
                Verdict::Unknown,
                Reason {
                    code: "unconfirmed-no-logs",
                    message: format!(
                        "the spec equals the one Kopf last recorded, which it records after a failed cycle too; {logs} and the object's events show no cycle end for it, so whether it succeeded is unknown"
                    ),
                    evidence: vec![annotation_fact],
                },
            )
        }
        LogFacts::Unavailable(why) => (
            Verdict::Unknown,
            Reason {
                code: "unconfirmed-no-logs",
                message:
                    "the spec equals the one Kopf last recorded, which it records after a failed cycle too; no operator logs and no Kopf event of the object show how the cycle ended, so whether it succeeded is unknown"
                        .into(),
                evidence: vec![annotation_fact, why.clone()],
            },
        ),
    }
}

/// A rejected PATCH and no Kopf record: `never-handled` without a phase, else `stale`.
fn rejected_unrecorded(
    mut a: Assessment,
    obj: &MicroserviceObject,
    rejection: &Rejection,
    logs: &LogFacts,
) -> Assessment {
    a.verdict = if obj.phase().is_none() {
        Verdict::NeverHandled
    } else {
        Verdict::Stale
    };
    a.reasons.push(patch_rejected(obj, rejection, logs, None));
    a
}

/// No phase, no record: `never-handled`, with a run open since the object was created or last
/// changed (the run in progress now), Kopf's progress annotations and the last retry.
fn never_handled(mut a: Assessment, obj: &MicroserviceObject, logs: &LogFacts, options: Options<'_>) -> Assessment {
    a.verdict = Verdict::NeverHandled;
    // A run open since the object was created or last changed: the run in progress now.
    let changed = a.spec_changed.or(obj
        .metadata
        .creation_timestamp
        .as_ref()
        .map(|t| crate::time::from_jiff(t.0)));
    if let Some(open) = handling_since(logs, changed, options).filter(|r| r.code == "handler-running") {
        a.reasons.push(open);
    }
    let mut evidence =
        vec!["no status.phase, no status.observedGeneration, no */last-handled-configuration annotation".to_string()];
    evidence.extend(kopf_progress(obj));
    if let LogFacts::Read {
        last_retry: Some(line), ..
    } = logs
    {
        evidence.push(format!("last retry (logs or the object's Kopf events): {line}"));
    }
    a.reasons.push(Reason {
        code: "never-handled",
        message: "no handler has finished for this object".into(),
        evidence,
    });
    a
}

/// A phase without any handling record: only managedFields can tell: `stale` when the latest
/// spec writer owns only spec fields and wrote more than the skew after the latest status
/// write; otherwise no verdict.
fn by_managed_fields(
    mut a: Assessment,
    obj: &MicroserviceObject,
    (status_entry, spec_entry): (Option<&Entry>, Option<&Entry>),
    entries: &[Entry],
    options: Options<'_>,
) -> Assessment {
    let phase = obj.phase().unwrap_or_default();
    match (status_entry, spec_entry) {
        (Some(status), Some(spec)) => {
            let shown = vec![
                format!("status: {}", status.describe()),
                format!("spec: {}", spec.describe()),
            ];
            match (status.time, spec.time) {
                (Some(st), Some(sp)) if spec.spec_only() && sp - st > options.skew => {
                    a.verdict = Verdict::Stale;
                    a.reasons.push(Reason {
                            code: "spec-written-after-status",
                            message: format!(
                                "status.phase {phase} was written at {}, the spec at {} by {} (which owns only spec fields)",
                                rfc3339_seconds(st),
                                rfc3339_seconds(sp),
                                spec.manager
                            ),
                            evidence: shown,
                        });
                }
                _ => {
                    a.reasons.push(Reason {
                        code: "managed-fields-undecidable",
                        message: undecidable_message(status, spec, options),
                        evidence: shown,
                    });
                }
            }
        }
        _ => a.reasons.push(Reason {
            code: "no-handling-record",
            message: format!("status.phase is {phase}, but nothing records which spec it describes"),
            evidence: entries.iter().map(Entry::describe).collect(),
        }),
    }
    a
}

/// The status fields the verdicts read: ours and the tutorial's Kopf handler write them. One
/// of them dropped by the CRD's status schema bears on the verdict (`status-pruned`).
pub const STATUS_FIELDS_READ: [&str; 4] = ["phase", "observedGeneration", "conditions", "acceptedSpec"];

/// Issue 11 item 8, one verdict: a Kopf cycle that succeeded while the API server dropped the
/// `status.phase` it wrote (the CRD's status schema has no such property; Kopf logs the removal
/// as an inconsistency) leaves no `Accepted` for the spec: not `fresh`, but `stale` with reason
/// `status-pruned` first, naming the fields and the line (`explain-events` gives the CRD patch).
/// `pruned`: the object's dropped fields and the last line saying so ([`super::cycles::pruned_fields`]).
/// A `fresh` verdict whose dropped fields are only ones it does not read (a handler's return
/// value, which Kopf stores as `status.<handler id>`) stays `fresh`, with a second reason
/// `status-pruned` naming them, so that `status` never says "nothing to do" while
/// `explain-events` warns of them. Any other assessment is returned as it is.
///
/// `microservice`: whether `obj` is a Microservice. Only its verdict reads status fields
/// ([`STATUS_FIELDS_READ`]: the `Accepted` convention); another resource's (`--resource`) asks
/// whether every handler finished for the spec (Kopf's annotations), so a dropped field never
/// makes it stale and is never said to keep an `Accepted` from it.
pub fn with_pruned_status(
    mut a: Assessment,
    obj: &MicroserviceObject,
    pruned: Option<&(Vec<String>, String)>,
    microservice: bool,
) -> Assessment {
    let Some((fields, line)) = pruned else { return a };
    let read: Vec<String> = fields
        .iter()
        .filter(|f| microservice && STATUS_FIELDS_READ.contains(&f.as_str()))
        .map(|f| format!("status.{f}"))
        .collect();
    // `status.kopf` is Kopf's progress copy, kept in annotations too (`explain-events` says ok).
    let dropped: Vec<String> = fields
        .iter()
        .filter(|f| f.as_str() != "kopf")
        .map(|f| format!("status.{f}"))
        .collect();
    if a.verdict == Verdict::Fresh && a.handled_by == HandledBy::Kopf && read.is_empty() && !dropped.is_empty() {
        a.reasons.push(Reason {
            code: "status-pruned",
            message: format!(
                "the API server dropped {} that the operator wrote (the CRD's status schema does not allow it; a handler's return value is stored as status.<handler id>): the verdict is not affected, what was written is lost",
                dropped.join(", ")
            ),
            evidence: vec![format!("last such line: {line}")],
        });
        return a;
    }
    if a.verdict != Verdict::Fresh || a.handled_by != HandledBy::Kopf || read.is_empty() || obj.phase().is_some() {
        return a;
    }
    a.verdict = Verdict::Stale;
    a.reasons.insert(
        0,
        Reason {
            code: "status-pruned",
            message: format!(
                "the handler's last cycle succeeded, but the API server dropped {} that it wrote (the CRD's status schema does not allow it): the status does not say Accepted for this spec",
                read.join(", ")
            ),
            evidence: vec![format!("last such line: {line}")],
        },
    );
    a
}

/// Kopf's record of the spec it last handled: `status.kopf.last-handled-configuration` (written by
/// `kopf.StatusDiffBaseStorage()`, Kopf's documented alternative to the annotation, the fix of
/// nolar/kopf#1087; it wins when present, since an operator switched to it leaves the old
/// annotation behind), else the `*/last-handled-configuration` annotation. `annotation` names
/// where it was read.
pub fn handled_record(obj: &MicroserviceObject) -> Option<KopfRecord> {
    let from_status = obj
        .status
        .as_ref()
        .and_then(|s| s.get("kopf"))
        .and_then(|k| k.get("last-handled-configuration"))
        .and_then(Value::as_str);
    if let Some(text) = from_status {
        return Some(KopfRecord {
            annotation: "status.kopf.last-handled-configuration".into(),
            spec: serde_json::from_str::<Value>(text)
                .ok()
                .and_then(|v| v.get("spec").cloned()),
        });
    }
    kopf_record(obj.metadata.annotations.as_ref())
}

/// `diffbase-elsewhere`: the Kopf operator's source puts its diff-base record somewhere other
/// than where `record` was read (`kopf.StatusDiffBaseStorage()`, or another annotation key), and
/// that place holds none (a status field the CRD prunes, or never written), so `record` is left
/// over from an earlier setup, not the operator's current record. When it disagrees with the
/// spec (`changed` not empty) the verdict cannot rest on it: the reason names the conflict with
/// the other evidence (Kopf's status writes after the latest spec write). `None` when the
/// settings are not known, or agree with where `record` was read.
fn leftover_record(
    obj: &MicroserviceObject,
    record: &KopfRecord,
    changed: &[ChangedField],
    entries: &[managed_fields::Entry],
    options: Options<'_>,
) -> Option<Reason> {
    let storage = options.diffbase?;
    if record.annotation == storage.place() || changed.is_empty() {
        return None;
    }
    let place = storage.place();
    let absent = absent_record(obj, storage)?;
    let spec_written = entries
        .iter()
        .filter(|e| e.owns.iter().any(|f| f == "spec"))
        .filter_map(|e| e.time)
        .max();
    let mut evidence = vec![
        format!(
            "{} records spec {}",
            record.annotation,
            compact(&record.spec.clone().unwrap_or(Value::Null))
        ),
        format!("current spec {}", compact(&obj.spec)),
        format!(
            "the operator's source sets settings.persistence.diffbase_storage at {}: its record is {place}",
            storage.at()
        ),
    ];
    let later = kopf_writes_after(entries, spec_written, options.skew);
    let conflict = if later.is_empty() {
        String::new()
    } else {
        "; and Kopf wrote the object after the latest spec write, which suggests it handled the current spec"
            .to_string()
    };
    evidence.extend(later);
    Some(Reason {
        code: "diffbase-elsewhere",
        message: format!(
            "{} records an earlier spec ({}), but it is not the operator's current record: its settings keep the record in {place}, and {absent}{conflict}: the evidence conflicts, so neither fresh nor stale",
            record.annotation,
            changed
                .iter()
                .map(|c| format!("{} {} → {}", c.field, compact(&c.old), compact(&c.new)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        evidence,
    })
}

/// How the operator's own record `storage` is absent from `obj`, in words (for a status field,
/// whether Kopf wrote it and the API server dropped it); `None` when it is there (then the record
/// read is not left over).
fn absent_record(obj: &MicroserviceObject, storage: &diffbase::DiffbaseStorage) -> Option<String> {
    let place = storage.place();
    Some(match storage {
        diffbase::DiffbaseStorage::Status { field, .. } => {
            let pointer = format!("/{}", field.replace('.', "/"));
            let fields_pointer = format!(
                "/{}",
                field.split('.').map(|p| format!("f:{p}")).collect::<Vec<_>>().join("/")
            );
            let written_by_kopf = obj.metadata.managed_fields.iter().flatten().any(|m| {
                m.manager.as_deref().is_some_and(|n| n.starts_with("kopf"))
                    && m.fields_v1
                        .as_ref()
                        .is_some_and(|f| f.0.pointer(&fields_pointer).is_some())
            });
            let present = serde_json::to_value(obj)
                .ok()
                .and_then(|v| v.pointer(&pointer).cloned())
                .is_some();
            if present {
                return None;
            }
            if written_by_kopf {
                format!(
                    "{place} is absent: Kopf wrote it (managedFields), and the API server dropped it (the CRD's status schema does not allow it)"
                )
            } else {
                format!("{place} is absent")
            }
        }
        diffbase::DiffbaseStorage::Annotation { .. } => format!("annotation {place} is absent"),
    })
}

/// Kopf's writes of the object more than `skew` after the latest spec write (at
/// `spec_written`), in words: they suggest it handled the current spec.
fn kopf_writes_after(
    entries: &[managed_fields::Entry],
    spec_written: Option<DateTime<Utc>>,
    skew: Duration,
) -> Vec<String> {
    entries
        .iter()
        .filter(|e| e.manager.starts_with("kopf"))
        .filter(|e| matches!((e.time, spec_written), (Some(t), Some(s)) if t > s + skew))
        .map(|e| {
            format!(
                "{} wrote {}{} at {}, after the latest spec write{}",
                e.manager,
                e.owns.join(", "),
                e.subresource
                    .as_deref()
                    .map(|r| format!(" (subresource {r})"))
                    .unwrap_or_default(),
                e.time.map(rfc3339_seconds).unwrap_or_default(),
                spec_written
                    .map(|s| format!(" ({})", rfc3339_seconds(s)))
                    .unwrap_or_default()
            )
        })
        .collect()
}

/// How long a handler's run stays open without an outcome before `handler-running` names it: a
/// handler of the tutorial's kind returns in well under a second, and a shorter open run is
/// one in progress (a handler that waits with a timeout of its own, e.g. 20 s, ends before).
pub const OPEN_RUN_NOTED: Duration = Duration::seconds(60);

/// What the logs show after the object's latest spec change at `changed`, for a stale verdict
/// (issue 11 item 6, an operator alive but not handling), as the first reason:
/// - `handler-running`: a run of the object started and logged no outcome for
///   [`OPEN_RUN_NOTED`] or more, up to now (a Pod's log) or its last line (a file)
///   ([`super::log_facts::Activity::open_run`]): after the change, the run of the current spec; before it,
///   a run of an earlier spec, which the change waits for (Kopf handles one cycle of an object
///   at a time);
/// - `nothing-logged-since-change`: the logs reach back before the change and hold no line about
///   the object after it: either nothing at all after it (the operator logged nothing: a frozen
///   process, a stalled watch, or a run that Kopf does not log at INFO), or only lines about
///   other objects.
///
/// `None` without logs, without a known change time, or when the object has lines after the
/// change (an outcome or a retry, which the other reasons read). Times within `skew` of the
/// change count as after it (managedFields have 1 s resolution).
pub fn handling_since(logs: &LogFacts, changed: Option<DateTime<Utc>>, options: Options<'_>) -> Option<Reason> {
    let LogFacts::Read {
        covers_from, activity, ..
    } = logs
    else {
        return None;
    };
    let changed = changed?;
    if let Some(open) = &activity.open_run {
        return open_run(open, changed, options);
    }
    nothing_logged_since(*covers_from, activity, changed, options)
}

/// `a` to `b` in words (`1m30s`).
fn ago(from: DateTime<Utc>, to: DateTime<Utc>) -> String {
    crate::time::human(to - from, crate::time::DurationStyle::Compact)
}

/// `handler-running`: the object's `open` run, when it has been open [`OPEN_RUN_NOTED`] or
/// more up to now (a Pod's log, read at "now": nothing came up to then) or up to its log's last
/// line (a file); started after the spec change at `changed`, or before it (the change waits).
fn open_run(open: &OpenStart, changed: DateTime<Utc>, options: Options<'_>) -> Option<Reason> {
    let after = |t: DateTime<Utc>| t + options.skew >= changed;
    let change = format!("the spec change at {}", rfc3339_seconds(changed));
    // A Pod's log was read at "now": nothing came up to then. A file ends at its last line.
    let (until, to) = match options.now.filter(|n| open.read_from_pod && *n > open.time) {
        Some(now) => (
            now,
            format!("up to now ({}, when its Pod's log was read)", rfc3339_seconds(now)),
        ),
        None => {
            let last = open.log_last.unwrap_or(open.time);
            (last, format!("up to its log's last line ({})", rfc3339_millis(last)))
        }
    };
    // A run younger than that is a run in progress: nothing to say yet.
    if until - open.time < OPEN_RUN_NOTED {
        return None;
    }
    let when = if after(open.time) {
        format!("started at {}, after {change}", rfc3339_millis(open.time))
    } else {
        format!(
            "started at {} for an earlier spec, before {change} (Kopf handles one cycle of an object at a time: the change waits for it)",
            rfc3339_millis(open.time)
        )
    };
    let who = if open.handler.is_empty() {
        "a handler (its log names none, or several)".to_string()
    } else {
        format!("handler {}", open.handler)
    };
    let mut evidence = vec![format!("its start: {} ({}, {})", open.line, open.place, open.clock)];
    if let Some(last) = open.log_last {
        evidence.push(format!(
            "its log's last line: {} ({})",
            rfc3339_millis(last),
            open.place
        ));
    }
    Some(Reason {
        code: "handler-running",
        message: format!(
            "{who} {when}, and has logged no outcome in the {} since, {to}: the run is still open",
            ago(open.time, until)
        ),
        evidence,
    })
}

/// `nothing-logged-since-change`: logs that reach back before the change at `changed` and hold
/// no line about the object after it: nothing at all after it, or only other objects' lines.
fn nothing_logged_since(
    covers_from: Option<DateTime<Utc>>,
    activity: &Activity,
    changed: DateTime<Utc>,
    options: Options<'_>,
) -> Option<Reason> {
    let after = |t: DateTime<Utc>| t + options.skew >= changed;
    let change = format!("the spec change at {}", rfc3339_seconds(changed));
    // Only logs that reach back before the change can say that nothing came after it.
    if covers_from.is_none_or(|from| from > changed) {
        return None;
    }
    if activity.object_last.as_ref().is_some_and(|(t, _)| after(*t)) {
        return None;
    }
    let (last, place) = activity.log_last.as_ref()?;
    let mut evidence: Vec<String> = activity
        .object_last
        .iter()
        .map(|(t, line)| format!("the object's last line, at {}: {line}", rfc3339_millis(*t)))
        .collect();
    evidence.push(format!("the logs' last line: {} ({place})", rfc3339_millis(*last)));
    let message = if *last < changed {
        format!(
            "the operator logged nothing after {change}: its logs end at {} ({} before it), and the change was not handled",
            rfc3339_millis(*last),
            ago(*last, changed)
        )
    } else {
        format!(
            "the operator logged nothing about this object after {change}; its logs go on to {} with other lines",
            rfc3339_millis(*last)
        )
    };
    Some(Reason {
        code: "nothing-logged-since-change",
        message,
        evidence,
    })
}

/// The reasons of a spec change not yet handled, before the change itself: what the latest
/// cycle after the latest spec change at `changed` shows (issue 11, one verdict). A handler
/// still retrying ([`retrying`]) whose retry falls after the change, by the logs (a retry line
/// at or after it, within `skew`) or by Kopf's progress record (its cycle started after the
/// change, or its next try is due after it: that try handles the current spec), is `retrying`
/// with its tries, last error and next try; an open run ([`handling_since`]'s
/// `handler-running`) comes before it, as the run in progress now, and a silence of the logs
/// since the change (`nothing-logged-since-change`) after it, as the retry's delay may explain
/// it. Without a retry after the change, [`handling_since`]'s reason alone. `fact`: the record
/// that shows the change (Kopf's annotation, or the generations).
fn since_change(
    obj: &MicroserviceObject,
    logs: &LogFacts,
    fact: &str,
    changed: Option<DateTime<Utc>>,
    options: Options<'_>,
) -> Vec<Reason> {
    let since = handling_since(logs, changed, options);
    let after = |t: Option<DateTime<Utc>>| match (t, changed) {
        (Some(t), Some(changed)) => t + options.skew >= changed,
        // No change time: the retry is later than the last cycle end, the latest news.
        (_, None) => true,
        (None, Some(_)) => false,
    };
    let log_retry_after = match logs {
        LogFacts::Read { last_retry_time, .. } => after(*last_retry_time),
        LogFacts::Unavailable(_) => false,
    };
    let record_after = progress_of(obj)
        .iter()
        .filter(|r| r.retrying())
        .any(|r| after(r.started) || after(r.delayed));
    let retry = (log_retry_after || record_after)
        .then(|| retrying(obj, logs, fact))
        .flatten();
    let Some(retry) = retry else {
        return since.into_iter().collect();
    };
    match since {
        Some(open) if open.code == "handler-running" => vec![open, retry],
        Some(other) => vec![retry, other],
        None => vec![retry],
    }
}

/// The `spec-changed-since-handled` reason: the fields that differ from Kopf's record.
fn spec_changed_reason(
    changed: &[ChangedField],
    annotation_fact: &str,
    obj: &MicroserviceObject,
    spec_entry: Option<&Entry>,
) -> Reason {
    let names: Vec<String> = changed
        .iter()
        .map(|c| format!("{} {} → {}", c.field, compact(&c.old), compact(&c.new)))
        .collect();
    Reason {
        code: "spec-changed-since-handled",
        message: format!("the spec changed since it was last handled: {}", names.join(", ")),
        evidence: vec![
            annotation_fact.to_string(),
            format!("current spec {}", compact(&obj.spec)),
        ]
        .into_iter()
        .chain(spec_entry.map(|e| format!("last spec write: {}", e.describe())))
        .collect(),
    }
}

/// The `patch-rejected` reason: Kopf logged the last cycle's final PATCH as rejected
/// ([`LogFacts::latest_rejection`]), so nothing of that cycle was saved and the cycle never
/// completes; for the annotation size limit, what the object's annotations weigh
/// ([`diffbase::annotation_budget`]).
pub fn patch_rejected(
    obj: &MicroserviceObject,
    rejection: &Rejection,
    logs: &LogFacts,
    annotation_fact: Option<&str>,
) -> Reason {
    let mut evidence = Vec::new();
    let when = rejection
        .time
        .map(|t| format!(" (logged at {}, {})", rfc3339_seconds(t), rejection.clock))
        .unwrap_or_default();
    evidence.push(format!("last rejection{when}: {}", rejection.line));
    if let LogFacts::Read {
        last_cycle: Some(cycle),
        ..
    } = logs
    {
        evidence.push(format!("the cycle it ended: {}", log_fact(cycle)));
    }
    if let Some(fact) = annotation_fact {
        evidence.push(format!("{fact} (an earlier cycle's)"));
    }
    if let Some(budget) = budget_fact(obj, &rejection.failure) {
        evidence.push(budget);
    }
    let saved = if annotation_fact.is_some() {
        "neither the status nor Kopf's record of this spec was saved"
    } else {
        "nothing was saved: no status, no Kopf record"
    };
    Reason {
        code: "patch-rejected",
        message: format!(
            "Kopf's PATCH at the end of the last handling cycle was rejected ({}): the handler ran, but {saved}; the cycle never completes and Kopf runs it again at every event and restart ({} in the logs)",
            rejection.failure.describe(),
            rejection.tally()
        ),
        evidence,
    }
}

/// For a rejection by the annotation size limit (or an object whose annotations are over it with
/// Kopf's record), what they weigh: `annotations: 150071 bytes now (largest: KEY, 150016
/// bytes); Kopf's kopf.zalando.org/last-handled-configuration would add about 150130 bytes:
/// about 300201 in all, over the API server's 262144-byte limit (nolar/kopf#1087)`.
pub fn budget_fact(obj: &MicroserviceObject, failure: &ApiFailure) -> Option<String> {
    let value = serde_json::to_value(obj).ok()?;
    let budget = diffbase::annotation_budget(&value);
    if !failure.annotations_too_long() && !budget.over_limit() {
        return None;
    }
    let largest = budget
        .largest
        .as_ref()
        .map(|(k, n)| format!(" (largest: {k}, {n} bytes)"))
        .unwrap_or_default();
    Some(format!(
        "annotations: {} bytes now{largest}; Kopf's {} would add about {} bytes: about {} in all, {} the API server's {ANNOTATIONS_LIMIT_BYTES}-byte limit (Kopf copies the annotations into it: nolar/kopf#1087)",
        budget.total,
        diffbase::DIFFBASE_ANNOTATION,
        budget.record,
        budget.after_patch,
        if budget.over_limit() { "over" } else { "under" }
    ))
}

/// Kopf's progress records of `obj` ([`progress::read`]), read from its typed metadata and raw status.
pub(crate) fn progress_of(obj: &MicroserviceObject) -> Vec<Progress> {
    let annotations = obj
        .metadata
        .annotations
        .iter()
        .flatten()
        .map(|(k, v)| (k.as_str(), v.as_str()));
    progress::read_parts(obj.status.as_ref(), annotations)
}

/// The `retrying` reason: the handling of the current spec is still being retried, by Kopf's
/// progress annotation (a record with retries and no success: Kopf purges records when a cycle
/// ends) or by the logs (a retry line later than the last cycle end, e.g. a resume failing after
/// a restart whose earlier cycle succeeded). `None` when neither shows a retry.
fn retrying(obj: &MicroserviceObject, logs: &LogFacts, annotation_fact: &str) -> Option<Reason> {
    let records: Vec<Progress> = progress_of(obj).into_iter().filter(Progress::retrying).collect();
    let (retry_line, retry_time, cycle) = match logs {
        LogFacts::Read {
            last_retry,
            last_retry_time,
            last_cycle,
            ..
        } => (last_retry.as_ref(), *last_retry_time, last_cycle.as_ref()),
        LogFacts::Unavailable(_) => (None, None, None),
    };
    // A retry line after the last cycle end (or with no cycle end at all) is the latest news.
    let log_retry = retry_line.filter(|_| match (cycle, retry_time) {
        (None, _) => true,
        (Some(c), Some(rt)) => c.time.is_some_and(|ct| rt > ct),
        (Some(_), None) => false,
    });
    if records.is_empty() && log_retry.is_none() {
        return None;
    }
    let mut evidence = vec![annotation_fact.to_string()];
    let mut parts = Vec::new();
    for r in &records {
        let tries = r.retries.unwrap_or(0);
        let mut text = format!(
            "handler {} has tried {tries} time(s) for purpose {}",
            r.handler,
            r.purpose.as_deref().unwrap_or("?")
        );
        if let Some(m) = &r.message {
            text.push_str(&format!(", last error {m:?}"));
        }
        if let Some(d) = r.delayed {
            text.push_str(&format!(", next try at {}", rfc3339_seconds(d)));
        }
        evidence.push(format!(
            "progress annotation {}: retries={tries} success={} delayed={}",
            r.handler,
            r.success.map_or("?".to_string(), |b| b.to_string()),
            r.delayed.map(rfc3339_seconds).unwrap_or_else(|| "none".into())
        ));
        parts.push(text);
    }
    if let Some(line) = log_retry {
        let when = retry_time
            .map(|t| format!(" (logged at {})", rfc3339_seconds(t)))
            .unwrap_or_default();
        evidence.push(format!("last retry (logs or the object's Kopf events){when}: {line}"));
        if parts.is_empty() {
            parts.push(format!("the logs' last word on it is a retry{when}"));
        }
    }
    if let Some(c) = cycle {
        evidence.push(format!("earlier cycle end, not the latest news: {}", log_fact(c)));
    }
    Some(Reason {
        code: "retrying",
        message: format!(
            "the handling of this spec is failing and being retried: {}",
            parts.join("; ")
        ),
        evidence,
    })
}

fn undecidable_message(status: &Entry, spec: &Entry, options: Options<'_>) -> String {
    if !spec.spec_only() {
        format!(
            "the latest spec writer {} also owns {} fields, so its time does not date the spec",
            spec.manager,
            spec.owns
                .iter()
                .filter(|o| *o != "spec")
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        )
    } else {
        format!(
            "the spec and status writes are within the skew tolerance ({} s) or in the other order",
            options.skew.num_seconds()
        )
    }
    .replace("  ", " ")
        + &format!(" (status by {})", status.manager)
}

fn log_fact(cycle: &CycleEnd) -> String {
    match cycle.time {
        Some(_) if cycle.clock == EVENT_CLOCK => format!("{} ({})", cycle.line, cycle.clock),
        Some(t) => format!("{} (logged at {}, {})", cycle.line, rfc3339_seconds(t), cycle.clock),
        None => cycle.line.clone(),
    }
}

fn condition_message(obj: &MicroserviceObject) -> Option<String> {
    obj.status
        .as_ref()?
        .get("conditions")?
        .as_array()?
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some("Accepted"))?
        .get("message")?
        .as_str()
        .map(str::to_string)
}

/// Kopf's per-handler progress annotations (`<prefix>/<handler-id>`, JSON with retries,
/// purpose, message), as evidence lines. Kopf purges them when a cycle completes.
fn kopf_progress(obj: &MicroserviceObject) -> Vec<String> {
    obj.metadata
        .annotations
        .iter()
        .flatten()
        .filter(|(k, _)| !k.ends_with(LAST_HANDLED_SUFFIX) && !k.starts_with("kubectl.kubernetes.io/"))
        .filter_map(|(key, value)| {
            let progress: Value = serde_json::from_str(value).ok()?;
            let retries = progress.get("retries")?.as_u64()?;
            let purpose = progress.get("purpose").and_then(Value::as_str).unwrap_or("?");
            let message = progress.get("message").and_then(Value::as_str).unwrap_or("");
            let success = progress.get("success").and_then(Value::as_bool).unwrap_or(false);
            Some(format!(
                "{key}: {} for purpose {purpose}, {}{}",
                crate::text::count_as(retries, "try", "tries"),
                if success { "succeeded" } else { "not succeeded" },
                if message.is_empty() {
                    String::new()
                } else {
                    format!(", last message {message:?}")
                }
            ))
        })
        .collect()
}

/// Leaf-level differences between two JSON values, named by dotted path from `prefix`.
pub fn diff(prefix: &str, old: &Value, new: &Value) -> Vec<ChangedField> {
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter()
                .flat_map(|k| {
                    diff(
                        &format!("{prefix}.{k}"),
                        a.get(k).unwrap_or(&Value::Null),
                        b.get(k).unwrap_or(&Value::Null),
                    )
                })
                .collect()
        }
        (a, b) if a == b => Vec::new(),
        (a, b) => vec![ChangedField {
            field: prefix.to_string(),
            old: a.clone(),
            new: b.clone(),
        }],
    }
}

fn compact(v: &Value) -> String {
    v.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::log_facts::{Activity, OpenStart};
    use serde_json::json;

    /// Logs whose last cycle for the object is a succeeded creation (no time in the line).
    fn succeeded_creation() -> LogFacts {
        LogFacts::Read {
            covers_from: None,
            last_cycle: Some(CycleEnd {
                time: None,
                clock: "kubelet clock",
                succeeded: 1,
                failed: 0,
                line: "Creation is processed: 1 succeeded; 0 failed.".into(),
            }),
            last_retry: None,
            last_retry_time: None,
            last_rejection: None,
            activity: Box::default(),
        }
    }

    fn obj(value: Value) -> MicroserviceObject {
        serde_json::from_value(value).unwrap()
    }

    fn no_logs() -> LogFacts {
        LogFacts::Unavailable("operator logs: not in the bundle".into())
    }

    fn at(s: &str) -> DateTime<Utc> {
        s.parse().unwrap()
    }

    /// Logs read from 11:18:49 on, with `activity` (times of the s11-kopf-handler-hung and
    /// s11-kopf-operator-stalled captures).
    fn logs_with(activity: Activity) -> LogFacts {
        LogFacts::Read {
            covers_from: Some(at("2026-12-01T11:17:41.779Z")),
            last_cycle: None,
            last_retry: None,
            last_retry_time: None,
            last_rejection: None,
            activity: Box::new(activity),
        }
    }

    /// The hung capture: Kopf -v logged `Handler 'accept/spec' is invoked.` at 11:19:14.477, and
    /// nothing after; its Pod's log read at 11:21:32.
    fn hung(read_from_pod: bool) -> Activity {
        let start = at("2026-12-01T11:19:14.477Z");
        Activity {
            open_run: Some(OpenStart {
                handler: "accept/spec".into(),
                time: start,
                clock: "kubelet clock",
                line: "[kms-s11-hung/hung-api] Handler 'accept/spec' is invoked.".into(),
                place: "kopf-operator-7c744bd7bf-pptlw/operator".into(),
                log_last: Some(start),
                read_from_pod,
            }),
            object_last: Some((start, "Handler 'accept/spec' is invoked.".into())),
            log_last: Some((start, "kopf-operator-7c744bd7bf-pptlw/operator".into())),
        }
    }

    fn now_at(now: &str) -> Options<'static> {
        Options {
            now: Some(at(now)),
            ..Options::default()
        }
    }

    #[test]
    fn an_open_run_read_from_its_pod_is_running_until_now() {
        let changed = Some(at("2026-12-01T11:19:14Z"));
        let r = handling_since(&logs_with(hung(true)), changed, now_at("2026-12-01T11:21:32Z")).unwrap();
        assert_eq!(r.code, "handler-running");
        assert!(
            r.message.starts_with("handler accept/spec started at 2026-12-01T11:19:14.477Z, after the spec change at 2026-12-01T11:19:14Z, and has logged no outcome in the 2m17s since, up to now (2026-12-01T11:21:32Z"),
            "{}",
            r.message
        );
        assert!(
            r.evidence[0].contains("Handler 'accept/spec' is invoked."),
            "{:?}",
            r.evidence
        );
        // Younger than a minute: a run in progress, nothing said.
        assert_eq!(
            handling_since(&logs_with(hung(true)), changed, now_at("2026-12-01T11:20:00Z")),
            None
        );
    }

    #[test]
    fn an_open_run_in_a_file_is_open_only_to_the_files_last_line() {
        let changed = Some(at("2026-12-01T11:19:14Z"));
        let mut activity = hung(false);
        // The file ends at its start line: however late "now" is, the file says nothing after it.
        assert_eq!(
            handling_since(&logs_with(activity.clone()), changed, now_at("2026-12-01T12:00:00Z")),
            None
        );
        activity.open_run.as_mut().unwrap().log_last = Some(at("2026-12-01T11:21:00.000Z"));
        let r = handling_since(&logs_with(activity), changed, now_at("2026-12-01T12:00:00Z")).unwrap();
        assert_eq!(r.code, "handler-running");
        assert!(
            r.message
                .contains("in the 1m45s since, up to its log's last line (2026-12-01T11:21:00.000Z)"),
            "{}",
            r.message
        );
    }

    #[test]
    fn a_run_open_since_before_the_change_holds_the_change_back() {
        let changed = Some(at("2026-12-01T11:25:00Z"));
        let r = handling_since(&logs_with(hung(true)), changed, now_at("2026-12-01T11:26:00Z")).unwrap();
        assert_eq!(r.code, "handler-running");
        assert!(
            r.message
                .contains("for an earlier spec, before the spec change at 2026-12-01T11:25:00Z"),
            "{}",
            r.message
        );
    }

    #[test]
    fn nothing_logged_after_the_change_is_said_with_the_last_line() {
        // The stalled capture: the last line (the creation's end) at 11:18:15.370, the change at 11:19:30.
        let last = at("2026-12-01T11:18:15.370Z");
        let activity = Activity {
            open_run: None,
            object_last: Some((
                last,
                "[kms-s11-stall/stall-api] Creation is processed: 1 succeeded; 0 failed.".into(),
            )),
            log_last: Some((last, "kopf-operator-79f7cf768f-6q95j/operator".into())),
        };
        let changed = Some(at("2026-12-01T11:19:30Z"));
        let r = handling_since(&logs_with(activity.clone()), changed, now_at("2026-12-01T11:21:32Z")).unwrap();
        assert_eq!(r.code, "nothing-logged-since-change");
        assert_eq!(
            r.message,
            "the operator logged nothing after the spec change at 2026-12-01T11:19:30Z: its logs end at 2026-12-01T11:18:15.370Z (1m14s before it), and the change was not handled"
        );
        // Lines about other objects after the change: said as such.
        let busy = Activity {
            log_last: Some((at("2026-12-01T11:20:00Z"), "pod/operator".into())),
            ..activity.clone()
        };
        let r = handling_since(&logs_with(busy), changed, Options::default()).unwrap();
        assert!(
            r.message.contains("nothing about this object after the spec change"),
            "{}",
            r.message
        );
        // A line of the object after the change (an outcome, a retry): the other reasons say it.
        let handled = Activity {
            object_last: Some((at("2026-12-01T11:19:31Z"), "Handler 'accept/spec' succeeded.".into())),
            ..activity.clone()
        };
        assert_eq!(handling_since(&logs_with(handled), changed, Options::default()), None);
        // Logs that begin after the change cannot say that nothing came after it.
        let late = LogFacts::Read {
            covers_from: Some(at("2026-12-01T11:20:00Z")),
            last_cycle: None,
            last_retry: None,
            last_retry_time: None,
            last_rejection: None,
            activity: Box::new(activity),
        };
        assert_eq!(handling_since(&late, changed, Options::default()), None);
        assert_eq!(handling_since(&no_logs(), changed, Options::default()), None);
        assert_eq!(
            handling_since(&logs_with(Activity::default()), None, Options::default()),
            None
        );
    }

    #[test]
    fn a_stale_kopf_verdict_names_the_open_run_first() {
        let o = obj(
            json!({"apiVersion": "platform.example.io/v1alpha1", "kind": "Microservice",
            "metadata": {"name": "hung-api", "namespace": "kms-s11-hung", "generation": 2,
                "annotations": {"kopf.zalando.org/last-handled-configuration": "{\"spec\":{\"image\":\"x\",\"port\":8080}}\n"},
                "managedFields": [{"manager": "kubectl-patch", "operation": "Update", "apiVersion": "platform.example.io/v1alpha1",
                    "time": "2026-12-01T11:19:14Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:port": {}}}}]},
            "spec": {"image": "x", "port": 9999}, "status": {"phase": "Accepted"}}),
        );
        let a = assess(&o, &logs_with(hung(true)), now_at("2026-12-01T11:21:32Z"));
        assert_eq!(a.verdict, Verdict::Stale);
        let codes: Vec<&str> = a.reasons.iter().map(|r| r.code).collect();
        assert_eq!(codes, ["handler-running", "spec-changed-since-handled"]);
    }

    #[test]
    fn ours_by_generation() {
        let fresh = obj(
            json!({"metadata": {"name": "a", "generation": 3}, "spec": {}, "status": {"phase": "Accepted", "observedGeneration": 3}}),
        );
        let a = assess(&fresh, &no_logs(), Options::default());
        assert_eq!(
            (a.verdict, a.handled_by),
            (Verdict::Fresh, HandledBy::KubectlMicroservice)
        );
        let stale = obj(
            json!({"metadata": {"name": "a", "generation": 4}, "spec": {}, "status": {"phase": "Accepted", "observedGeneration": 3}}),
        );
        let a = assess(&stale, &no_logs(), Options::default());
        assert_eq!(a.verdict, Verdict::Stale);
        assert_eq!(a.reasons[0].code, "generation-ahead");
        assert!(
            a.reasons[0]
                .evidence
                .contains(&"status.observedGeneration=3".to_string())
        );
        let invalid = obj(
            json!({"metadata": {"name": "a", "generation": 1}, "spec": {}, "status": {"phase": "Invalid", "observedGeneration": 1,
            "conditions": [{"type": "Accepted", "status": "False", "message": "spec.port: expected an integer 1..65535, got \"eighty\""}]}}),
        );
        let a = assess(&invalid, &no_logs(), Options::default());
        assert_eq!(a.verdict, Verdict::Invalid);
        assert!(a.reasons[0].message.contains("spec.port"));
    }

    #[test]
    fn ours_names_exactly_the_fields_changed_since_accepted() {
        // Only spec.image was patched; one manager (kubectl) owns both image and port.
        let fields = json!([{"manager": "kubectl-client-side-apply", "operation": "Update", "time": "2026-12-01T04:10:00Z",
            "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:image": {}, "f:port": {}}}},
            {"manager": "kubectl-microservice", "operation": "Apply", "subresource": "status", "time": "2026-12-01T04:00:00Z",
            "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {"f:phase": {}}}}]);
        let with = obj(
            json!({"metadata": {"name": "a", "generation": 2, "managedFields": fields},
            "spec": {"image": "nginx:1.28", "port": 8080},
            "status": {"phase": "Accepted", "observedGeneration": 1, "acceptedSpec": {"image": "nginx:1.27", "port": 8080}}}),
        );
        let a = assess(&with, &no_logs(), Options::default());
        assert_eq!(a.verdict, Verdict::Stale);
        assert_eq!(
            a.changed_fields,
            vec![ChangedField {
                field: "spec.image".into(),
                old: json!("nginx:1.27"),
                new: json!("nginx:1.28")
            }]
        );
        let m = &a.reasons[0].message;
        assert!(
            m.contains(r#"spec.image "nginx:1.27" → "nginx:1.28""#) && !m.contains("spec.port"),
            "{m}"
        );
        // An object written by an older version: no acceptedSpec; the fields are not claimed changed.
        let mut without = with.clone();
        without
            .status
            .as_mut()
            .unwrap()
            .as_object_mut()
            .unwrap()
            .remove("acceptedSpec");
        let a = assess(&without, &no_logs(), Options::default());
        assert!(a.changed_fields.is_empty());
        let m = &a.reasons[0].message;
        assert!(
            m.contains("spec fields written since: spec.image (by kubectl-client-side-apply")
                && m.contains("spec.port (by kubectl-client-side-apply")
                && m.contains("managedFields cannot tell which of a manager's fields changed"),
            "{m}"
        );
    }

    #[test]
    fn real_kopf_object_changed_while_the_operator_was_stopped() {
        let stale: MicroserviceObject =
            serde_json::from_str(include_str!("../../tests/fixtures/f-todo-api-stale-accepted.json")).unwrap();
        let a = assess(&stale, &no_logs(), Options::default());
        assert_eq!(a.verdict, Verdict::Stale);
        assert_eq!(a.handled_by, HandledBy::Kopf);
        assert_eq!(
            a.changed_fields,
            vec![
                ChangedField {
                    field: "spec.image".into(),
                    old: json!("ghcr.io/yrw9281/it30-todo-api:0.1.0"),
                    new: json!("ghcr.io/yrw9281/it30-todo-api:0.2.0")
                },
                ChangedField {
                    field: "spec.port".into(),
                    old: json!(8080),
                    new: json!(9090)
                },
            ]
        );
        assert!(
            a.reasons[0].message.contains("spec.port 8080 → 9090"),
            "{}",
            a.reasons[0].message
        );
        assert!(
            a.reasons[0]
                .evidence
                .iter()
                .any(|e| e.contains("kubectl-patch (Update) at 2026-11-29T16:22:16Z")),
            "{:?}",
            a.reasons[0].evidence
        );
    }

    #[test]
    fn kopf_equal_spec_needs_the_logs() {
        let handled = obj(json!({"metadata": {"name": "a", "generation": 2, "annotations": {
            "kopf.zalando.org/last-handled-configuration": "{\"spec\":{\"image\":\"x\",\"port\":1}}\n"}}, "spec": {"image": "x", "port": 1}, "status": {"phase": "Accepted"}}));
        let a = assess(&handled, &no_logs(), Options::default());
        // Kopf records the spec after a permanent failure too: unknown, never fresh.
        assert_eq!(
            (a.verdict, a.reasons[0].code),
            (Verdict::Unknown, "unconfirmed-no-logs")
        );
        let failed = LogFacts::Read {
            covers_from: None,
            last_cycle: Some(CycleEnd {
                time: None,
                clock: "kubelet clock",
                succeeded: 0,
                failed: 1,
                line: "Updating is processed: 0 succeeded; 1 failed.".into(),
            }),
            last_retry: None,
            last_retry_time: None,
            last_rejection: None,
            activity: Box::default(),
        };
        let a = assess(&handled, &failed, Options::default());
        assert_eq!((a.verdict, a.reasons[0].code), (Verdict::Stale, "last-handling-failed"));
        let ok = succeeded_creation();
        assert_eq!(
            assess(&handled, &ok, Options::default()).reasons[0].code,
            "last-cycle-succeeded"
        );
    }

    /// The trial's defect 1: a never-handled object whose run is open (created at 11:19:09, the
    /// run from 11:19:14, read 2m17s later) is `handler-running` first; one read before the run
    /// is 60 s old, or with no open run, is `never-handled` alone.
    #[test]
    fn a_never_handled_object_with_an_open_run_is_handler_running() {
        let created = obj(json!({"metadata": {"name": "a", "namespace": "t", "generation": 1,
            "creationTimestamp": "2026-12-01T11:19:09Z"}, "spec": {}}));
        let a = assess(&created, &logs_with(hung(true)), now_at("2026-12-01T11:21:32Z"));
        assert_eq!(a.verdict, Verdict::NeverHandled);
        let codes: Vec<&str> = a.reasons.iter().map(|r| r.code).collect();
        assert_eq!(codes, ["handler-running", "never-handled"]);
        assert!(
            a.reasons[0].message.starts_with(
                "handler accept/spec started at 2026-12-01T11:19:14.477Z, after the spec change at 2026-12-01T11:19:09Z"
            ),
            "{}",
            a.reasons[0].message
        );
        let early = assess(&created, &logs_with(hung(true)), now_at("2026-12-01T11:19:40Z"));
        assert_eq!(
            early.reasons.iter().map(|r| r.code).collect::<Vec<_>>(),
            ["never-handled"]
        );
        let idle = assess(
            &created,
            &logs_with(Activity::default()),
            now_at("2026-12-01T11:21:32Z"),
        );
        assert_eq!(
            idle.reasons.iter().map(|r| r.code).collect::<Vec<_>>(),
            ["never-handled"]
        );
    }

    #[test]
    fn never_handled_shows_kopf_progress() {
        let retrying = obj(json!({"metadata": {"name": "a", "generation": 1, "annotations": {
            "kopf.zalando.org/accept": "{\"started\":\"2026-11-29T17:13:32.227308+00:00\",\"purpose\":\"create\",\"retries\":8,\"success\":false,\"failure\":false,\"message\":\"registry unreachable\"}"}},
            "spec": {}, "status": {"kopf": {"progress": {}}}}));
        let a = assess(&retrying, &no_logs(), Options::default());
        assert_eq!(a.verdict, Verdict::NeverHandled);
        assert!(
            a.reasons[0]
                .evidence
                .iter()
                .any(|e| e.contains("8 tries for purpose create") && e.contains("registry unreachable")),
            "{:?}",
            a.reasons[0].evidence
        );
    }

    fn with_fields(fields: Value) -> MicroserviceObject {
        obj(
            json!({"metadata": {"name": "a", "generation": 2, "managedFields": fields}, "spec": {"image": "x", "port": 1}, "status": {"phase": "Accepted"}}),
        )
    }

    #[test]
    fn managed_fields_only() {
        let status = json!({"manager": "someone", "operation": "Update", "subresource": "status", "time": "2026-11-29T16:21:14Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {"f:phase": {}}}});
        let later_spec_only = json!({"manager": "kubectl-patch", "operation": "Update", "time": "2026-11-29T16:22:16Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:port": {}}}});
        let a = assess(
            &with_fields(json!([status, later_spec_only])),
            &no_logs(),
            Options::default(),
        );
        assert_eq!(
            (a.verdict, a.reasons[0].code),
            (Verdict::Stale, "spec-written-after-status")
        );
        // The spec writer also owns an annotation: its time does not date the spec.
        let mixed = json!({"manager": "kubectl-client-side-apply", "operation": "Update", "time": "2026-11-29T16:22:16Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}, "f:metadata": {}}});
        let a = assess(&with_fields(json!([status, mixed])), &no_logs(), Options::default());
        assert_eq!(
            (a.verdict, a.reasons[0].code),
            (Verdict::Unknown, "managed-fields-undecidable")
        );
        assert_eq!(a.reasons[0].evidence.len(), 2, "both entries shown");
        // Within the skew tolerance: undecidable.
        let close = json!({"manager": "kubectl-patch", "operation": "Update", "time": "2026-11-29T16:21:15Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}}});
        assert_eq!(
            assess(&with_fields(json!([status, close])), &no_logs(), Options::default()).verdict,
            Verdict::Unknown
        );
    }

    #[test]
    fn deletion_is_terminating_not_a_spec_change() {
        // Ours: the deletion bumped generation 1 → 2; observedGeneration stays 1.
        let ours = obj(json!({"metadata": {"name": "a", "namespace": "n", "generation": 2,
            "deletionTimestamp": "2026-12-01T04:00:00Z", "finalizers": ["kopf.zalando.org/KopfFinalizerMarker"]},
            "spec": {}, "status": {"phase": "Accepted", "observedGeneration": 1}}));
        let a = assess(&ours, &no_logs(), Options::default());
        assert_eq!(
            (a.verdict, a.reasons[0].code),
            (Verdict::Terminating, "deletion-pending")
        );
        assert!(a.reasons.iter().all(|r| r.code != "generation-ahead"));
        assert!(a.verdict.is_problem());
        assert!(a.deletion.is_some());
        // Kopf: spec equal to the annotation, a succeeded cycle in the logs: still terminating.
        let kopf = obj(json!({"metadata": {"name": "a", "namespace": "n", "generation": 2,
            "deletionTimestamp": "2026-12-01T04:00:00Z", "finalizers": ["kopf.zalando.org/KopfFinalizerMarker"],
            "annotations": {"kopf.zalando.org/last-handled-configuration": "{\"spec\":{\"image\":\"x\"}}"}},
            "spec": {"image": "x"}, "status": {"phase": "Accepted"}}));
        let ok = succeeded_creation();
        let a = assess(&kopf, &ok, Options::default());
        assert_eq!((a.verdict, a.handled_by), (Verdict::Terminating, HandledBy::Kopf));
        let json = serde_json::to_value(&a).unwrap();
        assert_eq!(json["verdict"], "terminating");
        assert_eq!(json["deletion"]["finalizers"][0]["index"], 0);
    }

    /// A Kopf operator restarted; its resume handler fails and retries (the progress annotation of
    /// d-temperr-posting-default.todo-api.yaml, purpose resume); the success line before the
    /// restart is not the latest cycle.
    #[test]
    fn resume_retrying_after_a_restart_is_not_fresh() {
        let handled = |progress: Option<&str>| {
            let mut annotations = serde_json::Map::new();
            annotations.insert(
                "kopf.zalando.org/last-handled-configuration".into(),
                json!("{\"spec\":{\"image\":\"x\",\"port\":1}}\n"),
            );
            if let Some(p) = progress {
                annotations.insert("kopf.zalando.org/accept".into(), json!(p));
            }
            obj(
                json!({"metadata": {"name": "a", "namespace": "n", "generation": 1, "annotations": annotations},
                "spec": {"image": "x", "port": 1}, "status": {"phase": "Accepted"}}),
            )
        };
        let before_restart = CycleEnd {
            time: Some("2026-11-29T16:20:00Z".parse().unwrap()),
            clock: "kubelet clock",
            succeeded: 1,
            failed: 0,
            line: "Creation is processed: 1 succeeded; 0 failed.".into(),
        };
        let succeeded_only = LogFacts::Read {
            covers_from: None,
            last_cycle: Some(before_restart.clone()),
            last_retry: None,
            last_retry_time: None,
            last_rejection: None,
            activity: Box::default(),
        };
        // The annotation alone decides.
        let progress = r#"{"started":"2026-11-29T16:22:42.532213+00:00","delayed":"2026-11-29T16:23:02.882155+00:00","purpose":"resume","retries":3,"success":false,"failure":false,"message":"image pull check failed"}"#;
        let a = assess(&handled(Some(progress)), &succeeded_only, Options::default());
        assert_eq!((a.verdict, a.reasons[0].code), (Verdict::Stale, "retrying"));
        let m = &a.reasons[0].message;
        assert!(
            m.contains("tried 3 time(s) for purpose resume")
                && m.contains("image pull check failed")
                && m.contains("next try at 2026-11-29T16:23:02Z"),
            "{m}"
        );
        assert!(
            a.reasons[0]
                .evidence
                .iter()
                .any(|e| e.contains("Creation is processed")),
            "{:?}",
            a.reasons[0].evidence
        );
        // The logs alone decide: a retry line after the last cycle end.
        let retry_after = LogFacts::Read {
            covers_from: None,
            last_cycle: Some(before_restart.clone()),
            last_retry: Some("Handler 'accept' failed temporarily: image pull check failed".into()),
            last_retry_time: Some("2026-11-29T16:22:43Z".parse().unwrap()),
            last_rejection: None,
            activity: Box::default(),
        };
        let a = assess(&handled(None), &retry_after, Options::default());
        assert_eq!((a.verdict, a.reasons[0].code), (Verdict::Stale, "retrying"));
        assert!(
            a.reasons[0]
                .evidence
                .iter()
                .any(|e| e.contains("logged at 2026-11-29T16:22:43Z"))
        );
        // A retry line before the cycle end was followed by a success: fresh.
        let retry_before = LogFacts::Read {
            covers_from: None,
            last_cycle: Some(before_restart),
            last_retry: Some("Handler 'accept' failed temporarily: x".into()),
            last_retry_time: Some("2026-11-29T16:19:00Z".parse().unwrap()),
            last_rejection: None,
            activity: Box::default(),
        };
        let a = assess(&handled(None), &retry_before, Options::default());
        assert_eq!((a.verdict, a.reasons[0].code), (Verdict::Fresh, "last-cycle-succeeded"));
        // A succeeded record (not yet purged) is no retry.
        let done =
            r#"{"started":"2026-11-29T16:22:42+00:00","purpose":"resume","retries":1,"success":true,"failure":false}"#;
        let a = assess(&handled(Some(done)), &retry_before_none(), Options::default());
        assert_eq!(
            (a.verdict, a.reasons[0].code),
            (Verdict::Unknown, "unconfirmed-no-logs")
        );
    }

    /// Issue 11, one verdict: the latest cycle after the latest spec change decides. A handler
    /// retrying after the change is `retrying` first (tries, last error, next try), before the
    /// change itself, by Kopf's progress record or by the logs, for Kopf's record and for ours;
    /// a retry from before the change, with nothing after it, says nothing of the current spec.
    #[test]
    fn a_retry_after_the_spec_change_is_the_first_reason() {
        let changed_at = "2026-12-01T04:27:00Z";
        let kopf = |progress: Option<&str>| {
            let mut annotations = serde_json::Map::new();
            annotations.insert(
                "kopf.zalando.org/last-handled-configuration".into(),
                json!("{\"spec\":{\"image\":\"x\",\"port\":8080}}\n"),
            );
            if let Some(p) = progress {
                annotations.insert("kopf.zalando.org/accept".into(), json!(p));
            }
            obj(
                json!({"metadata": {"name": "a", "namespace": "n", "generation": 2, "annotations": annotations,
                "managedFields": [{"manager": "kubectl-patch", "operation": "Update", "apiVersion": "platform.example.io/v1alpha1",
                    "time": changed_at, "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:port": {}}}}]},
                "spec": {"image": "x", "port": 9090}, "status": {"phase": "Accepted"}}),
            )
        };
        let ours = obj(json!({"metadata": {"name": "a", "namespace": "n", "generation": 3,
            "managedFields": [{"manager": "kubectl-patch", "operation": "Update", "apiVersion": "platform.example.io/v1alpha1",
                "time": changed_at, "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:port": {}}}}]},
            "spec": {"image": "x", "port": 9090}, "status": {"phase": "Accepted", "observedGeneration": 2}}));
        let retry_at = |t: &str| LogFacts::Read {
            covers_from: Some(at("2026-12-01T04:26:00Z")),
            last_cycle: None,
            last_retry: Some("Handler 'accept' failed temporarily: image pull check failed".into()),
            last_retry_time: Some(at(t)),
            last_rejection: None,
            activity: Box::new(Activity {
                object_last: Some((
                    at(t),
                    "Handler 'accept' failed temporarily: image pull check failed".into(),
                )),
                log_last: Some((at(t), "kopf-operator-6b644ff8c9-qd8wj/operator".into())),
                ..Activity::default()
            }),
        };
        let codes = |a: &Assessment| -> Vec<&'static str> { a.reasons.iter().map(|r| r.code).collect() };
        let options = now_at("2026-12-01T04:27:55Z");
        // The progress record of a cycle started after the change.
        let record = r#"{"started":"2026-12-01T04:27:06.092494+00:00","delayed":"2026-12-01T04:28:06.472903+00:00","purpose":"update","retries":3,"success":false,"failure":false,"message":"image pull check failed"}"#;
        let a = assess(&kopf(Some(record)), &no_logs(), options);
        assert_eq!(
            (a.verdict, codes(&a)),
            (Verdict::Stale, vec!["retrying", "spec-changed-since-handled"])
        );
        let m = &a.reasons[0].message;
        assert!(
            m.contains("tried 3 time(s) for purpose update")
                && m.contains("last error \"image pull check failed\"")
                && m.contains("next try at 2026-12-01T04:28:06Z"),
            "{m}"
        );
        // A record whose cycle began before the change, next try due after it: that try
        // handles the current spec.
        let before = r#"{"started":"2026-12-01T04:26:50+00:00","delayed":"2026-12-01T04:27:30+00:00","purpose":"update","retries":1,"success":false}"#;
        let a = assess(&kopf(Some(before)), &no_logs(), options);
        assert_eq!(codes(&a), ["retrying", "spec-changed-since-handled"]);
        // The logs alone: a retry line after the change, for Kopf and for ours.
        let a = assess(&kopf(None), &retry_at("2026-12-01T04:27:46Z"), options);
        assert_eq!(codes(&a), ["retrying", "spec-changed-since-handled"]);
        let a = assess(&ours, &retry_at("2026-12-01T04:27:46Z"), options);
        assert_eq!(
            (a.verdict, codes(&a)),
            (Verdict::Stale, vec!["retrying", "generation-ahead"])
        );
        assert!(a.reasons[0].evidence[0].contains("status.observedGeneration=2 < metadata.generation=3"));
        // A retry (line or record) entirely before the change, nothing about the object after it:
        // the logs' silence since the change, never `retrying`.
        let old = r#"{"started":"2026-12-01T04:26:30+00:00","delayed":"2026-12-01T04:26:50+00:00","purpose":"update","retries":1,"success":false}"#;
        for o in [kopf(None), kopf(Some(old))] {
            let a = assess(&o, &retry_at("2026-12-01T04:26:40Z"), options);
            assert_eq!(codes(&a), ["nothing-logged-since-change", "spec-changed-since-handled"]);
        }
        let a = assess(&ours, &retry_at("2026-12-01T04:26:40Z"), options);
        assert_eq!(codes(&a), ["nothing-logged-since-change", "generation-ahead"]);
        // A run open since the retry after the change is the news now: it comes first.
        let mut open = hung(true);
        open.open_run.as_mut().unwrap().time = at("2026-12-01T04:27:10Z");
        let mut logs = retry_at("2026-12-01T04:27:06Z");
        if let LogFacts::Read { activity, .. } = &mut logs {
            activity.open_run = open.open_run;
        }
        let a = assess(&kopf(Some(record)), &logs, now_at("2026-12-01T04:29:00Z"));
        assert_eq!(codes(&a), ["handler-running", "retrying", "spec-changed-since-handled"]);
    }

    /// nolar/kopf#1087: the handler succeeds, `Creation is processed: 1 succeeded; 0 failed.`,
    /// then the final PATCH is refused (422, annotations too long). Never fresh, and the 422 named.
    #[test]
    fn a_rejected_final_patch_is_never_fresh() {
        let cycle = CycleEnd {
            time: Some("2026-12-01T09:00:00.102Z".parse().unwrap()),
            clock: "kubelet clock",
            succeeded: 1,
            failed: 0,
            line: "Creation is processed: 1 succeeded; 0 failed.".into(),
        };
        let line = "Throttling for 1 seconds due to an unexpected error: APIClientError('Microservice.platform.example.io \"big\" is invalid: metadata.annotations: Too long: must have at most 262144 bytes', {'reason': 'Invalid', 'code': 422})";
        let crate::kopf::messages::Lifecycle::Throttled(failure) = crate::kopf::messages::classify(line) else {
            panic!()
        };
        let rejected = |at: &str| LogFacts::Read {
            covers_from: None,
            last_cycle: Some(cycle.clone()),
            last_retry: None,
            last_retry_time: None,
            last_rejection: Some(Box::new(Rejection {
                time: Some(at.parse().unwrap()),
                clock: "kubelet clock",
                failure: failure.clone(),
                line: line.into(),
                count: 3,
                attempts: 0,
            })),
            activity: Box::default(),
        };
        let blob = "x".repeat(140_000);
        // Created with the blob: nothing was ever saved.
        let new = obj(json!({"metadata": {"name": "big", "namespace": "n", "generation": 1,
            "annotations": {"example.com/blob": blob}}, "spec": {"image": "x", "port": 1}}));
        let a = assess(&new, &rejected("2026-12-01T09:00:00.140Z"), Options::default());
        assert_eq!(
            (a.verdict, a.reasons[0].code),
            (Verdict::NeverHandled, "patch-rejected")
        );
        assert_eq!(a.reasons.len(), 1, "not also `no handler has finished`: it did finish");
        let m = &a.reasons[0].message;
        assert!(
            m.contains("422 Invalid: ") && m.contains("metadata.annotations: Too long") && m.contains("3 rejections"),
            "{m}"
        );
        let budget = a.reasons[0]
            .evidence
            .iter()
            .find(|e| e.starts_with("annotations: "))
            .unwrap();
        assert!(
            budget.contains("largest: example.com/blob, 140016 bytes")
                && budget.contains("over the API server's 262144-byte limit"),
            "{budget}"
        );
        // Handled before, then the blob and a spec change: stale, the 422 first, the fields next.
        let handled = |spec: Value| {
            obj(
                json!({"metadata": {"name": "big", "namespace": "n", "generation": 2, "annotations": {
                "example.com/blob": blob,
                "kopf.zalando.org/last-handled-configuration": "{\"spec\":{\"image\":\"x\",\"port\":1}}\n"}},
                "spec": spec, "status": {"phase": "Accepted"}}),
            )
        };
        let a = assess(
            &handled(json!({"image": "x", "port": 2})),
            &rejected("2026-12-01T09:00:00.140Z"),
            Options::default(),
        );
        assert_eq!(a.verdict, Verdict::Stale);
        assert_eq!(
            a.reasons.iter().map(|r| r.code).collect::<Vec<_>>(),
            ["patch-rejected", "spec-changed-since-handled"]
        );
        // Only the blob was added: the spec equals the record, but the cycle cannot complete.
        let a = assess(
            &handled(json!({"image": "x", "port": 1})),
            &rejected("2026-12-01T09:00:00.140Z"),
            Options::default(),
        );
        assert_eq!((a.verdict, a.reasons[0].code), (Verdict::Stale, "patch-rejected"));
        // A cycle that ended after the rejection (its PATCH went through): fresh again.
        let a = assess(
            &handled(json!({"image": "x", "port": 1})),
            &rejected("2026-12-01T08:59:00Z"),
            Options::default(),
        );
        assert_eq!((a.verdict, a.reasons[0].code), (Verdict::Fresh, "last-cycle-succeeded"));
    }

    /// The fix of nolar/kopf#1087 applied live: the operator switched to
    /// `kopf.StatusDiffBaseStorage()`; its record in the status wins over the annotation left
    /// behind (as on kms-k11k-annot/grown-api after the switch).
    #[test]
    fn kopf_status_diffbase_wins_over_a_leftover_annotation() {
        let o = obj(
            json!({"metadata": {"name": "grown-api", "namespace": "n", "generation": 2, "annotations": {
            "kopf.zalando.org/last-handled-configuration": "{\"spec\":{\"image\":\"x\",\"port\":7100}}\n"}},
            "spec": {"image": "x", "port": 7101},
            "status": {"phase": "Accepted", "kopf": {"last-handled-configuration": "{\"spec\":{\"image\":\"x\",\"port\":7101},\"metadata\":{}}"}}}),
        );
        let ok = succeeded_creation();
        let a = assess(&o, &ok, Options::default());
        assert_eq!((a.verdict, a.handled_by), (Verdict::Fresh, HandledBy::Kopf));
        assert!(a.reasons[0].evidence[0].starts_with("status.kopf.last-handled-configuration records spec"));
    }

    /// The operator's source keeps the record in the status (`kopf.StatusDiffBaseStorage()`),
    /// the CRD prunes it, and an earlier setup's annotation records an older spec: the annotation
    /// is not the operator's record, so no `stale` on it (kms-k11k-annot/grown-api).
    #[test]
    fn a_leftover_annotation_against_status_settings_is_unknown() {
        let o = obj(
            json!({"metadata": {"name": "grown-api", "namespace": "n", "generation": 2,
            "annotations": {"kopf.zalando.org/last-handled-configuration": "{\"spec\":{\"image\":\"x\",\"port\":7100}}\n"},
            "managedFields": [
                {"manager": "kubectl-patch", "operation": "Update", "apiVersion": "platform.example.io/v1alpha1",
                 "time": "2026-12-01T08:40:44Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:port": {}}}},
                {"manager": "kopf", "operation": "Update", "apiVersion": "platform.example.io/v1alpha1", "subresource": "status",
                 "time": "2026-12-01T08:41:42Z", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:status": {".": {}, "f:phase": {}, "f:kopf": {".": {}, "f:last-handled-configuration": {}}}}}]},
            "spec": {"image": "x", "port": 7101}, "status": {"phase": "Accepted"}}),
        );
        let status = diffbase::DiffbaseStorage::Status {
            field: "status.kopf.last-handled-configuration".into(),
            at: "operator.py:8".into(),
        };
        let with = Options {
            diffbase: Some(&status),
            ..Options::default()
        };
        let a = assess(&o, &no_logs(), with);
        assert_eq!((a.verdict, a.handled_by), (Verdict::Unknown, HandledBy::Kopf));
        assert_eq!(a.reasons[0].code, "diffbase-elsewhere");
        assert!(
            a.reasons[0].message.contains("the API server dropped it"),
            "{}",
            a.reasons[0].message
        );
        assert!(a.reasons[0].evidence.iter().any(|e| e.contains("operator.py:8")));
        assert!(
            a.reasons[0]
                .evidence
                .iter()
                .any(|e| e.starts_with("kopf wrote status (subresource status) at 2026-12-01T08:41:42Z"))
        );
        // Settings not known, or naming that very annotation: the annotation is the record.
        assert_eq!(assess(&o, &no_logs(), Options::default()).verdict, Verdict::Stale);
        let same = diffbase::DiffbaseStorage::Annotation {
            key: "kopf.zalando.org/last-handled-configuration".into(),
            at: "operator.py:8".into(),
        };
        let a = assess(
            &o,
            &no_logs(),
            Options {
                diffbase: Some(&same),
                ..Options::default()
            },
        );
        assert_eq!(a.verdict, Verdict::Stale);
        // Another annotation key in the settings: the one present is left over too.
        let other = diffbase::DiffbaseStorage::Annotation {
            key: "ops.example.com/last-handled-configuration".into(),
            at: "operator.py:8".into(),
        };
        let a = assess(
            &o,
            &no_logs(),
            Options {
                diffbase: Some(&other),
                ..Options::default()
            },
        );
        assert_eq!((a.verdict, a.reasons[0].code), (Verdict::Unknown, "diffbase-elsewhere"));
    }

    fn retry_before_none() -> LogFacts {
        LogFacts::Read {
            covers_from: None,
            last_cycle: None,
            last_retry: None,
            last_retry_time: None,
            last_rejection: None,
            activity: Box::default(),
        }
    }

    #[test]
    fn diff_names_leaves() {
        let d = diff(
            "spec",
            &json!({"a": 1, "b": {"c": 2}}),
            &json!({"a": 1, "b": {"c": 3}, "d": true}),
        );
        assert_eq!(
            d.iter().map(|c| c.field.as_str()).collect::<Vec<_>>(),
            ["spec.b.c", "spec.d"]
        );
        assert_eq!(d[1].old, Value::Null);
    }

    /// A Kopf cycle that succeeded while the API server dropped `status.phase`: a Microservice
    /// has no `Accepted` for its spec (stale, `status-pruned` first); another resource's verdict
    /// reads no status field, so it stays fresh, the loss said as a second reason, never that
    /// the status "does not say Accepted".
    #[test]
    fn a_pruned_phase_makes_only_a_microservice_stale() {
        let fresh = || Assessment {
            verdict: Verdict::Fresh,
            reasons: vec![Reason {
                code: "last-cycle-succeeded",
                message: "the last cycle succeeded".into(),
                evidence: Vec::new(),
            }],
            handled_by: HandledBy::Kopf,
            changed_fields: Vec::new(),
            last_handled: None,
            spec_changed: None,
            deletion: None,
        };
        let o = obj(json!({"metadata": {"name": "api", "namespace": "t"}, "spec": {}}));
        let pruned = (vec!["phase".to_string()], "op line 7: ...".to_string());
        let ms = with_pruned_status(fresh(), &o, Some(&pruned), true);
        assert_eq!((ms.verdict, ms.reasons[0].code), (Verdict::Stale, "status-pruned"));
        assert!(
            ms.reasons[0].message.contains("does not say Accepted"),
            "{}",
            ms.reasons[0].message
        );
        let other = with_pruned_status(fresh(), &o, Some(&pruned), false);
        assert_eq!(other.verdict, Verdict::Fresh);
        let codes: Vec<&str> = other.reasons.iter().map(|r| r.code).collect();
        assert_eq!(codes, ["last-cycle-succeeded", "status-pruned"]);
        assert!(
            other.reasons[1].message.contains("status.phase"),
            "{}",
            other.reasons[1].message
        );
        assert!(
            !other.reasons[1].message.contains("Accepted"),
            "{}",
            other.reasons[1].message
        );
    }
}
