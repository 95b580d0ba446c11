//! The one verdict of a Microservice, which `status` (its table, `-o wide|json|yaml`, NAME,
//! `-w`) and `explain-events` (its `accepted-stale` finding and the finding it puts first) both
//! read, so that the two commands never disagree: [`Judge::judge`], or [`verdict`] for one
//! object.
//!
//! The verdict is [`super::staleness::assess`] over what the object's own operator's logs and
//! its Kopf `Logging` events say of it ([`super::cycles`]), then the status fields the API server
//! dropped ([`super::staleness::with_pruned_status`]), then the operators that each handled it
//! ([`with_double_handling`]).

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use chrono::{DateTime, Duration, Utc};

use super::cycles;
use super::filtered::{self, Filtered, OperatorHandlers};
use super::handlings::Handling;
use super::log_facts::LogFacts;
use super::staleness::{self, Assessment, Reason, Verdict};
use crate::evidence::Snapshot;
use crate::evidence::operator::OperatorRef;
use crate::evidence::resolve::Resolution;
use crate::resource::MicroserviceObject;

/// The verdict of one object and what it was made from.
#[derive(Debug, Clone)]
pub struct Judged {
    /// The operator that serves the object, as the resolver decided ([`Snapshot::operator_for`]).
    pub resolution: Resolution,
    /// What that operator's logs and the object's Kopf events say of it.
    pub facts: LogFacts,
    /// The operators that each handled it, when two or more serve its namespace ([`handlings`]).
    pub handlings: Vec<Handling>,
    /// Whether the operator's handler filters select the object ([`filtered`]).
    pub filtered: Filtered,
    /// The verdict, its reasons and what `status` shows with it.
    pub assessment: Assessment,
}

impl Judged {
    /// Whether the verdict says that the handler has not accepted the current spec, which
    /// `explain-events` states as `accepted-stale`: `stale`, or `never-handled` while a handler
    /// tries (a retry in the logs or the object's Kopf events, an open run, Kopf's progress
    /// annotation); never when the first reason is `status-pruned` (that finding's own) or there
    /// is no reason. A never-handled object that nothing tried is not: nothing handles it, which
    /// the operator findings say.
    pub fn not_accepted(&self) -> bool {
        let Some(first) = self.assessment.reasons.first() else {
            return false;
        };
        if first.code == "status-pruned" {
            return false;
        }
        match self.assessment.verdict {
            Verdict::Stale => true,
            Verdict::NeverHandled => self.tried(first),
            _ => false,
        }
    }

    /// Whether a handler tried the object: a retry in the facts, an open run (`handler-running`),
    /// or the first reason citing Kopf's progress annotation or its tries.
    fn tried(&self, first: &Reason) -> bool {
        let retried = match &self.facts {
            LogFacts::Read { last_retry, .. } => last_retry.is_some(),
            LogFacts::Unavailable(_) => false,
        };
        retried
            || first.code == "handler-running"
            || first
                .evidence
                .iter()
                .any(|e| e.starts_with("kopf.zalando.org/") || e.contains(" tries for purpose "))
    }
}

/// Judges Microservices one at a time against the rest of a snapshot's evidence (operator
/// Deployments and logs, events, its "now"), so that a live list can be judged page by page as
/// it arrives and its objects dropped. What each operator's logs say is read once per operator
/// (by the log sources it owns), not once per object: a list of 10,000 objects parses each log
/// once.
pub struct Judge<'a> {
    snapshot: &'a Snapshot,
    now: Option<DateTime<Utc>>,
    skew: Duration,
    /// The recognised operator Deployments (who removes a finalizer); `None` when they could
    /// not be listed.
    operators: Option<Vec<OperatorRef>>,
    /// What each operator's logs say, by the logs an object's operator owns
    /// ([`Resolution::logs`]): read once per operator, so that an object is judged by its own
    /// operator's logs only (`-A` holds every operator's).
    by_logs: RefCell<HashMap<LogsKey, Rc<OperatorFacts>>>,
    /// Each Kopf operator's handlers, by its `NS/deployment/NAME`: its source parsed once.
    handlers: RefCell<HashMap<String, Option<Rc<OperatorHandlers>>>>,
    /// Kopf's log-record events by the uid they are about: the events read once for all objects.
    kopf_events: cycles::KopfEvents<'a>,
    /// Who serves each object: the operators recognised once for all objects.
    resolver: crate::evidence::resolve::Resolver<'a>,
    /// Which operators handled each object: their logs' ends read once for all objects.
    handlings: super::handlings::Handlings<'a>,
    /// Each operator Deployment's diff-base storage (its mounted source read once), by
    /// `NS/deployment/NAME`.
    diffbases: RefCell<HashMap<String, Option<crate::kopf::diffbase::DiffbaseStorage>>>,
    /// Each operator's log level above INFO ([`Judge::quiet`], read once), by its name.
    quiet_by: RefCell<HashMap<String, Option<crate::kopf::log_level::Quiet>>>,
    /// The snapshot's resource as kubectl commands name it (`microservice`,
    /// `kopfexamples.kopf.dev`), for the fixes the verdict's reasons print.
    kubectl_type: String,
    /// Whether the snapshot's resource is the Microservice (its verdict reads status fields).
    microservice: bool,
}

/// Which logs an object's facts come from: the addresses of its operator's log sources in the
/// snapshot, or the gap that says why there are none.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum LogsKey {
    /// The log sources, by address in the snapshot.
    Sources(Vec<usize>),
    /// No logs: the gap, in words.
    Gap(String),
}

/// What one operator's logs say ([`super::cycles`]).
struct OperatorFacts {
    /// `ns/name` → what the logs say of it.
    facts: HashMap<String, LogFacts>,
    /// What the logs say of an object they do not mention (or their gap).
    unlisted: LogFacts,
    /// `ns/name` → the status fields the API server dropped ([`cycles::pruned_fields`]).
    pruned: HashMap<String, (Vec<String>, String)>,
}

impl<'a> Judge<'a> {
    /// A judge over `snapshot`'s evidence other than its Microservices ("now" included: its
    /// `captured_at`, else the latest time in its evidence). `skew`: times closer than this
    /// cannot be ordered (`--skew`).
    pub fn new(snapshot: &'a Snapshot, skew: Duration) -> Self {
        Self::at(snapshot, skew, snapshot.now())
    }

    /// [`Judge::new`] with "now" given (a live list judged as its pages arrive: the API
    /// server's clock of the first page).
    pub fn at(snapshot: &'a Snapshot, skew: Duration, now: Option<DateTime<Utc>>) -> Self {
        Judge {
            snapshot,
            now,
            skew,
            operators: snapshot
                .operator
                .deployments
                .get()
                .map(|_| snapshot.operator.operators()),
            by_logs: RefCell::new(HashMap::new()),
            handlers: RefCell::new(HashMap::new()),
            kopf_events: snapshot
                .events
                .get()
                .map(|e| cycles::KopfEvents::of(e))
                .unwrap_or_default(),
            resolver: crate::evidence::resolve::Resolver::new(snapshot),
            handlings: super::handlings::Handlings::new(snapshot),
            diffbases: RefCell::new(HashMap::new()),
            quiet_by: RefCell::new(HashMap::new()),
            kubectl_type: snapshot.resource.kubectl_type(),
            microservice: snapshot.resource.is_microservice(),
        }
    }

    /// The verdict of `obj` ([`Judged::assessment`]).
    pub fn verdict(&self, obj: &MicroserviceObject) -> Assessment {
        self.judge(obj).assessment
    }

    /// The verdict of `obj`, with the operator, facts and handlings it was made from. `obj`
    /// need not be among the snapshot's Microservices (a page of a live list).
    pub fn judge(&self, obj: &MicroserviceObject) -> Judged {
        let resolution = self.resolver.resolve(obj.metadata.namespace.as_deref(), Some(obj));
        let diffbase = self.diffbase(&resolution);
        let options = staleness::Options {
            skew: self.skew,
            now: self.now,
            operators: self.operators.as_deref(),
            diffbase: diffbase.as_ref(),
            kubectl_type: Some(&self.kubectl_type),
        };
        let read = self.facts_of(&resolution);
        let key = obj.key();
        let facts = cycles::facts_for(read.facts.get(&key), &read.unlisted, &self.kopf_events, obj);
        let assessed = staleness::assess(obj, &facts, options);
        let assessed = staleness::with_pruned_status(assessed, obj, read.pruned.get(&key), self.microservice);
        let handlings = self.handlings.of(obj);
        let assessment = with_double_handling(assessed, &handlings);
        let assessment = with_quiet_logs(assessment, || self.quiet_once(&resolution));
        let filtered = self.filtered(&resolution, obj);
        let mut judged = Judged {
            resolution,
            facts,
            handlings,
            filtered,
            assessment,
        };
        with_filtered(&mut judged, obj, &self.kubectl_type);
        judged
    }

    /// What the resolved operator's handler filters say of `obj` (its source read once).
    fn filtered(&self, resolution: &Resolution, obj: &MicroserviceObject) -> Filtered {
        let Some(key) = resolution.deployment() else {
            return Filtered::Unread;
        };
        let read = self
            .handlers
            .borrow_mut()
            .entry(key.to_string())
            .or_insert_with(|| filtered::read(self.snapshot, resolution).map(Rc::new))
            .clone();
        read.map_or(Filtered::Unread, |h| h.of(obj))
    }

    /// The level above INFO that the resolved Kopf operator logs at ([`crate::kopf::log_level`]):
    /// from its Deployment's command line and mounted source.
    /// [`Snapshot::kopf_diffbase_for`] of `resolution`, read once per operator Deployment.
    fn diffbase(&self, resolution: &Resolution) -> Option<crate::kopf::diffbase::DiffbaseStorage> {
        let key = resolution.deployment()?.to_string();
        self.diffbases
            .borrow_mut()
            .entry(key)
            .or_insert_with(|| self.snapshot.kopf_diffbase_for(resolution))
            .clone()
    }

    /// [`Judge::quiet`], read once per operator.
    fn quiet_once(&self, resolution: &Resolution) -> Option<crate::kopf::log_level::Quiet> {
        let name = resolution.operator.as_deref()?.to_string();
        if let Some(known) = self.quiet_by.borrow().get(&name) {
            return known.clone();
        }
        let read = self.quiet(resolution);
        self.quiet_by.borrow_mut().insert(name, read.clone());
        read
    }

    fn quiet(&self, resolution: &Resolution) -> Option<crate::kopf::log_level::Quiet> {
        let name = resolution.operator.as_deref()?;
        let op = self.operators.as_deref()?.iter().find(|op| op.display() == name)?;
        if op.kind != crate::evidence::operator::OperatorKind::Kopf {
            return None;
        }
        let files = self
            .snapshot
            .operator
            .deployments
            .get()
            .into_iter()
            .flatten()
            .find(|d| {
                d.metadata.name.as_deref() == Some(op.name.as_str())
                    && d.metadata.namespace.as_deref() == Some(op.namespace.as_str())
            })
            .map(|d| {
                let configmaps = self
                    .snapshot
                    .operator
                    .configmaps
                    .get()
                    .map(Vec::as_slice)
                    .unwrap_or(&[]);
                crate::kopf::source::mounted_sources(d, configmaps)
            })
            .unwrap_or_default();
        crate::kopf::log_level::quiet(&op.argv, &files)
    }

    /// What the logs of `operator` say (read once per set of logs).
    fn facts_of(&self, operator: &Resolution) -> Rc<OperatorFacts> {
        let logs = operator.logs(self.snapshot);
        let key = match &logs {
            Ok(sources) => LogsKey::Sources(sources.iter().map(|s| std::ptr::from_ref(*s) as usize).collect()),
            Err(gap) => LogsKey::Gap(gap.to_string()),
        };
        if let Some(read) = self.by_logs.borrow().get(&key) {
            return read.clone();
        }
        let read = Rc::new(OperatorFacts {
            facts: cycles::log_facts(self.snapshot, &logs),
            unlisted: cycles::facts_of_unlisted(self.snapshot, &logs),
            pruned: cycles::pruned_fields(self.snapshot, &logs),
        });
        self.by_logs.borrow_mut().insert(key, read.clone());
        read
    }
}

/// The verdict of `obj` over `snapshot` ([`Judge::verdict`]); to judge many objects of one
/// snapshot, one [`Judge`] reads each operator's logs once.
pub fn verdict(snapshot: &Snapshot, obj: &MicroserviceObject, skew: Duration) -> Assessment {
    Judge::new(snapshot, skew).verdict(obj)
}

/// A never-handled object that nothing tried and that every handler's filters exclude: the
/// `handler-filtered` reason first (not handled by design), before `never-handled`. Anything
/// that shows a handler at work on it (a retry, an open run, Kopf's progress) contradicts the
/// filters' reading, which is then left out.
fn with_filtered(judged: &mut Judged, obj: &MicroserviceObject, kubectl_type: &str) {
    let Some(first) = judged.assessment.reasons.first() else {
        return;
    };
    if judged.assessment.verdict != Verdict::NeverHandled || judged.tried(first) {
        return;
    }
    let ns = obj.metadata.namespace.as_deref().unwrap_or("");
    let name = obj.metadata.name.as_deref().unwrap_or("");
    if let Some(reason) = filtered::reason(kubectl_type, ns, name, &judged.filtered) {
        judged.assessment.reasons.insert(0, reason);
    }
}

/// The double handling of [`handlings`] in the verdict: a reason `handled-by-several-operators`
/// after the verdict's own (it leaves the verdict as it is: each cycle's result is what the
/// verdict reads, but the object is handled twice), so that `status` never says "nothing to do"
/// while `explain-events` warns of double handling. A pending deletion's verdict is left alone.
pub fn with_double_handling(mut a: Assessment, handlings: &[Handling]) -> Assessment {
    if handlings.len() < 2 || a.verdict == Verdict::Terminating {
        return a;
    }
    let names: Vec<&str> = handlings.iter().map(|h| h.operator.as_str()).collect();
    a.reasons.push(Reason {
        code: "handled-by-several-operators",
        message: format!(
            "{} operators serve the namespace and each handled this object ({}): nothing makes one of them the handler",
            handlings.len(),
            names.join(", ")
        ),
        evidence: handlings
            .iter()
            .map(|h| format!("{} handled it: {}", h.operator, h.line))
            .collect(),
    });
    a
}

/// An `unknown` verdict of an operator that logs above INFO (`quiet`, asked only then): its
/// first reason `operator-logs-quiet` says that the level is why the logs show no cycle end,
/// not a bare "no log lines".
pub fn with_quiet_logs(mut a: Assessment, quiet: impl FnOnce() -> Option<crate::kopf::log_level::Quiet>) -> Assessment {
    if a.verdict != Verdict::Unknown {
        return a;
    }
    let Some(q) = quiet() else { return a };
    a.reasons.insert(
        0,
        Reason {
            code: "operator-logs-quiet",
            message: format!(
                "the operator logs at {} ({}): Kopf writes its cycle and handler lines (`... is processed`, `Handler '...' succeeded.`) at INFO, so their absence does not tell how the object was handled; run it without -q (at INFO) to see them",
                q.level, q.how
            ),
            evidence: vec![format!("log level {}: {}", q.level, q.how)],
        },
    );
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundle(dir: &str) -> Snapshot {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(dir);
        crate::evidence::bundle::read(&path).unwrap_or_else(|e| panic!("{dir}: {e}"))
    }

    /// One judge over a snapshot gives each object the verdict [`verdict`] gives it alone.
    #[test]
    fn a_judge_of_many_objects_gives_each_its_own_verdict() {
        let snapshot = bundle("bundles-captured/trial-kopf-handler-sleeping-info");
        let objects = snapshot.microservices.get().unwrap();
        assert!(objects.len() > 2);
        let judge = Judge::new(&snapshot, Duration::seconds(2));
        for obj in objects {
            assert_eq!(
                judge.verdict(obj),
                verdict(&snapshot, obj, Duration::seconds(2)),
                "{}",
                obj.key()
            );
        }
        assert_eq!(judge.by_logs.borrow().len(), 1, "one operator's logs, read once");
    }

    /// A failed last cycle is not accepted; a healthy object is.
    #[test]
    fn not_accepted_is_stale_or_tried_and_never_handled() {
        for (dir, want) in [("bundles/failed-cycle", true), ("bundles/healthy", false)] {
            let snapshot = bundle(dir);
            let judge = Judge::new(&snapshot, Duration::seconds(2));
            let obj = &snapshot.microservices.get().unwrap()[0];
            assert_eq!(judge.judge(obj).not_accepted(), want, "{dir}");
        }
    }
}
