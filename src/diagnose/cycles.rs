//! What the operator's logs say about each object's handling cycles, for the staleness verdict:
//! the last `<Title> is processed: N succeeded; M failed.` per object, the last retry line, the
//! last rejected PATCH (Kopf's `Throttling for N seconds due to an unexpected error: ...`), and
//! how far back the logs reach. Parsing is [`LogSource::records_in`]'s.

use std::collections::HashMap;

use chrono::{DateTime, Utc};

use super::log_facts::{Activity, CycleEnd, EVENT_CLOCK, LogFacts, OpenStart, Rejection};
use crate::evidence::Snapshot;
use crate::evidence::resolve::OperatorLogs;
use crate::kopf::messages::{Lifecycle, Outcome, classify};
use crate::logs::{LogSource, Record};
use crate::resource::MicroserviceObject;
use crate::resource::identity::ResourceId;
use crate::time::rfc3339_millis;
use k8s_openapi::api::core::v1::Event;

/// `ns/name` → what the logs say about it. Objects the logs never mention get the logs'
/// coverage and no cycle. Empty when the snapshot has no logs (callers then use
/// [`LogFacts::Unavailable`]).
///
/// Kopf posts its per-object log records as events (reason `Logging`, by default up to Kopf
/// 1.43: `settings.posting.loggers`), so the object's own events on its uid carry the same
/// cycle ends (`Creation is processed: 0 succeeded; 1 failed.`, type Normal) and retries
/// (`Handler 'accept' failed temporarily: ...`, type Error) as the logs, on the API server's
/// clock: they fill in what the logs lack (the logs' own line wins where they have one), so a cycle whose
/// Pod (and log) is gone is still known while its events live (`--event-ttl`, 1 h by default).
/// An object with such events gets facts even when no logs are in evidence.
///
/// `logs` are the logs of the object's operator ([`crate::evidence::resolve::Resolution::logs`]):
/// the facts are read from them alone; their gap makes the objects' facts (other than their
/// events') absent.
pub fn log_facts(snapshot: &Snapshot, logs: &OperatorLogs<'_>) -> HashMap<String, LogFacts> {
    let logs = logs.as_ref().ok();
    // From the object's events first, into their own maps: the logs' own lines win where they
    // have one (each event is one of their records, and they carry the finer clock); events
    // fill in what the logs lack (the Pod that logged it is gone, or its log rotated).
    let (event_cycle, event_retry) = events_of_objects(snapshot);
    if logs.is_none() && event_cycle.is_empty() && event_retry.is_empty() {
        return HashMap::new();
    }
    let mut reading = Reading::default();
    // A file that copies a Pod's log counts once (crate::logs::copies).
    let sources: Vec<&LogSource> = logs.into_iter().flatten().copied().collect();
    let parsed = crate::logs::copies::records_once(&sources, |s| s.records_in(snapshot.log_zone(s)));
    for (source, source_records) in sources.into_iter().zip(parsed) {
        reading.source(source, source_records, &snapshot.resource);
    }
    for (key, end) in event_cycle {
        reading.last_cycle.entry(key).or_insert(end);
    }
    for (key, retry) in event_retry {
        reading.last_retry.entry(key).or_insert(retry);
    }
    let (covers_from, log_last) = (reading.covers_from, reading.log_last.clone());
    let mut facts = reading.facts();
    if logs.is_none() {
        return facts;
    }
    for obj in snapshot.microservices.get().into_iter().flatten() {
        facts
            .entry(obj.key())
            .or_insert_with(|| unmentioned(covers_from, log_last.clone()));
    }
    facts
}

/// The Kopf log-record events of each of the snapshot's Microservices ([`event_facts`]): its
/// latest cycle end and retry, by `ns/name`. The events are indexed once ([`KopfEvents`]), so
/// the work is one pass over the events plus one lookup per object.
fn events_of_objects(snapshot: &Snapshot) -> (HashMap<String, CycleEnd>, HashMap<String, Retry>) {
    let mut event_cycle: HashMap<String, CycleEnd> = HashMap::new();
    let mut event_retry: HashMap<String, Retry> = HashMap::new();
    if let Some(events) = snapshot.events.get() {
        let index = KopfEvents::of(events);
        for obj in snapshot.microservices.get().into_iter().flatten() {
            let (cycle, retry) = event_facts(index.of_object(obj));
            if let Some(cycle) = cycle {
                event_cycle.insert(obj.key(), cycle);
            }
            if let Some(retry) = retry {
                event_retry.insert(obj.key(), retry);
            }
        }
    }
    (event_cycle, event_retry)
}

/// Kopf's log-record events (`reason: Logging`) about the snapshot's objects (Microservices, or
/// the `--resource` ones), by their `involvedObject.uid`: built in one pass over the events, so that judging N objects reads the
/// events once rather than N times (issue 22: work per object is the object's own). Events
/// without a uid are left out: they cannot be told from a predecessor's of the same name.
#[derive(Debug, Default)]
pub struct KopfEvents<'a> {
    by_uid: HashMap<&'a str, Vec<&'a Event>>,
}

impl<'a> KopfEvents<'a> {
    /// The index of `events` (any order; core/v1 events as the snapshot holds them).
    pub fn of(events: &'a [Event]) -> Self {
        let mut by_uid: HashMap<&'a str, Vec<&'a Event>> = HashMap::new();
        for event in events {
            // The uid alone names the object, of any resource (`--resource`): no kind filter.
            if event.reason.as_deref() != Some("Logging") {
                continue;
            }
            if let Some(uid) = event.involved_object.uid.as_deref() {
                by_uid.entry(uid).or_default().push(event);
            }
        }
        KopfEvents { by_uid }
    }

    /// The events on `obj`'s own uid (none when it has no uid), in the snapshot's order.
    pub fn of_object(&self, obj: &MicroserviceObject) -> &[&'a Event] {
        obj.metadata
            .uid
            .as_deref()
            .and_then(|uid| self.by_uid.get(uid))
            .map_or(&[], Vec::as_slice)
    }
}

/// What the logs say so far, as [`log_facts`] reads them source by source.
#[derive(Default)]
struct Reading {
    /// The earliest time of any line.
    covers_from: Option<DateTime<Utc>>,
    /// `ns/name` → its latest cycle end.
    last_cycle: HashMap<String, CycleEnd>,
    /// `ns/name` → its latest retry line.
    last_retry: HashMap<String, Retry>,
    /// `ns/name` → its latest rejected PATCH (with how many).
    last_rejection: HashMap<String, Rejection>,
    /// `ns/name` → its refused PATCH attempts (`Request attempt #N/9 failed; ...: PATCH ...`).
    refused_patches: HashMap<String, u64>,
    /// `ns/name` → its last line and open run.
    activity: HashMap<String, Activity>,
    /// The latest line of a current container's log, and where.
    log_last: Option<(DateTime<Utc>, String)>,
}

impl Reading {
    /// The records of one log `source`: each one's time, and what it says of its object (of
    /// `resource`: a json line about another kind's object says nothing of it); then the
    /// object's runs still open at the log's end.
    fn source(&mut self, source: &LogSource, records: Vec<Record>, resource: &ResourceId) {
        let place = source_place(source);
        let named = only_handler(&records);
        let mut source_last: Option<DateTime<Utc>> = None;
        let mut open: HashMap<String, OpenStart> = HashMap::new();
        for record in records {
            if let Some(t) = record.time() {
                self.covers_from = Some(self.covers_from.map_or(t, |c| c.min(t)));
                if !source.previous {
                    source_last = Some(source_last.map_or(t, |l| l.max(t)));
                }
            }
            let Some(object) = &record.object else { continue };
            // A json line about another kind's object of the same name is none of ours.
            if crate::evidence::naming::of_other_kind(&record, resource) {
                continue;
            }
            let key = format!("{}/{}", object.namespace.as_deref().unwrap_or(""), object.name);
            let line = record.lines.first().cloned().unwrap_or_default();
            let lifecycle = record.lifecycle();
            if !source.previous {
                let from_pod = source.container != crate::logs::file::FILE_CONTAINER;
                track_activity(
                    &mut self.activity,
                    &mut open,
                    &key,
                    &record,
                    &lifecycle,
                    &line,
                    (&place, from_pod),
                );
            }
            if refused_patch_attempt(&record.message) {
                *self.refused_patches.entry(key.clone()).or_insert(0) += 1;
            }
            self.lifecycle(key, &record, lifecycle, line);
        }
        if let Some(last) = source_last {
            self.close(open, last, named.as_deref(), place);
        }
    }

    /// A cycle end, a rejected PATCH or a retry of the object `key`: the latest of each kind is
    /// kept (rejections counted).
    fn lifecycle(&mut self, key: String, record: &Record, lifecycle: Lifecycle, line: String) {
        let clock = record
            .stamp
            .map(|s| s.clock.describe())
            .unwrap_or("no time in the line");
        match lifecycle {
            Lifecycle::CycleProcessed { succeeded, failed, .. } => {
                let end = CycleEnd {
                    time: record.time(),
                    clock,
                    succeeded,
                    failed,
                    line,
                };
                if self.last_cycle.get(&key).is_none_or(|prev| prev.time <= end.time) {
                    self.last_cycle.insert(key, end);
                }
            }
            Lifecycle::Throttled(failure) => {
                let count = self.last_rejection.get(&key).map_or(0, |r| r.count) + 1;
                let newer = self
                    .last_rejection
                    .get(&key)
                    .is_none_or(|prev| prev.time <= record.time());
                let entry = self.last_rejection.entry(key).or_insert_with(|| Rejection {
                    time: record.time(),
                    clock,
                    failure: failure.clone(),
                    line: line.clone(),
                    count: 0,
                    attempts: 0,
                });
                if newer {
                    *entry = Rejection {
                        time: record.time(),
                        clock,
                        failure,
                        line,
                        count: 0,
                        attempts: 0,
                    };
                }
                entry.count = count;
            }
            Lifecycle::HandlerOutcome {
                outcome: Outcome::Retrying,
                ..
            } if self.last_retry.get(&key).is_none_or(|(t, _)| *t <= record.time()) => {
                self.last_retry.insert(key, (record.time(), line));
            }
            _ => {}
        }
    }

    /// The runs still `open` at the end of a current container's log whose last line is at
    /// `last` (read at `place`): each object's latest, named by the log's only handler when its
    /// start line does not name one.
    fn close(&mut self, open: HashMap<String, OpenStart>, last: DateTime<Utc>, named: Option<&str>, place: String) {
        for (key, mut start) in open {
            start.log_last = Some(last);
            if start.handler.is_empty()
                && let Some(h) = named
            {
                start.handler = h.to_string();
            }
            let entry = self.activity.entry(key).or_default();
            if entry.open_run.as_ref().is_none_or(|o| o.time <= start.time) {
                entry.open_run = Some(start);
            }
        }
        if self.log_last.as_ref().is_none_or(|(l, _)| *l < last) {
            self.log_last = Some((last, place));
        }
    }

    /// The facts of every object the logs (or its events) name.
    fn facts(self) -> HashMap<String, LogFacts> {
        let mut keys: Vec<&String> = self
            .last_cycle
            .keys()
            .chain(self.last_retry.keys())
            .chain(self.last_rejection.keys())
            .chain(self.activity.keys())
            .collect();
        keys.sort();
        keys.dedup();
        keys.into_iter()
            .map(|key| {
                let facts = LogFacts::Read {
                    covers_from: self.covers_from,
                    last_cycle: self.last_cycle.get(key).cloned(),
                    last_retry: self.last_retry.get(key).map(|(_, l)| l.clone()),
                    last_retry_time: self.last_retry.get(key).and_then(|(t, _)| *t),
                    last_rejection: self.last_rejection.get(key).cloned().map(|mut r| {
                        r.attempts = self.refused_patches.get(key).copied().unwrap_or(0);
                        Box::new(r)
                    }),
                    activity: Box::new(Activity {
                        log_last: self.log_last.clone(),
                        ..self.activity.get(key).cloned().unwrap_or_default()
                    }),
                };
                (key.clone(), facts)
            })
            .collect()
    }
}

/// Whether a Kopf line is a refused attempt of the object's PATCH: `Request attempt #3/9
/// failed; will retry: PATCH https://...` (or `; escalating:` for the last), as Kopf 1.38's
/// `kopf/_cogs/clients/api.py` logs each retried request.
fn refused_patch_attempt(message: &str) -> bool {
    message.strip_prefix("Request attempt #").is_some_and(|rest| {
        rest.split_once(" failed; ")
            .and_then(|(_, tail)| tail.split_once(": "))
            .is_some_and(|(_, request)| request.starts_with("PATCH "))
    })
}

/// Where a log was read, in words: `pod/container` (`, previous` for the instance before the
/// last restart), or `file NAME` for a `--log-file`.
fn source_place(source: &LogSource) -> String {
    if source.container == crate::logs::file::FILE_CONTAINER {
        format!("file {}", source.pod)
    } else if source.previous {
        format!("{}/{}, previous", source.pod, source.container)
    } else {
        format!("{}/{}", source.pod, source.container)
    }
}

/// One record of a current container's log into the object's [`Activity`]: its last line, and
/// its open run in this log (`open`: a handler start, ended by an outcome or a cycle end).
fn track_activity(
    activity: &mut HashMap<String, Activity>,
    open: &mut HashMap<String, OpenStart>,
    key: &str,
    record: &Record,
    lifecycle: &Lifecycle,
    line: &str,
    (place, from_pod): (&str, bool),
) {
    let Some(t) = record.time() else { return };
    let entry = activity.entry(key.to_string()).or_default();
    if entry.object_last.as_ref().is_none_or(|(l, _)| *l <= t) {
        entry.object_last = Some((t, line.to_string()));
    }
    let start = |handler: String| OpenStart {
        handler,
        time: t,
        clock: record.stamp.map_or("no time in the line", |s| s.clock.describe()),
        line: line.to_string(),
        place: place.to_string(),
        log_last: None,
        read_from_pod: from_pod,
    };
    match lifecycle {
        Lifecycle::Invoked { handler } => {
            open.insert(key.to_string(), start(handler.clone()));
        }
        // The handler's own line (`Accepted ns/name: ...`, Kopf's per-object logger at INFO):
        // a run is under way. At Kopf's default level nothing else says a run started; it
        // stays open until an outcome or a cycle end (trial defect 1: a handler that logged its
        // line, then slept).
        Lifecycle::Other if !open.contains_key(key) && !record.cut => {
            open.insert(key.to_string(), start(record.handler.clone().unwrap_or_default()));
        }
        Lifecycle::HandlerOutcome { .. } | Lifecycle::CycleProcessed { .. } | Lifecycle::Superseded { .. } => {
            open.remove(key);
        }
        _ => {}
    }
}

/// The handler a log names, when it names exactly one (`Handler 'accept' succeeded.`, `Handler
/// 'accept' is invoked.`, in any object's lines): the handler of an open run that began with the
/// handler's own line, which does not name it. `None` when the log names none or several.
fn only_handler(records: &[Record]) -> Option<String> {
    let mut named: Option<String> = None;
    for record in records {
        if let Lifecycle::Invoked { handler } | Lifecycle::HandlerOutcome { handler, .. } = record.lifecycle() {
            match &named {
                Some(h) if *h != handler => return None,
                Some(_) => {}
                None => named = Some(handler),
            }
        }
    }
    named
}

/// What the logs say of an object they never mention: their coverage, no cycle.
fn unmentioned(covers_from: Option<DateTime<Utc>>, log_last: Option<(DateTime<Utc>, String)>) -> LogFacts {
    LogFacts::Read {
        covers_from,
        last_cycle: None,
        last_retry: None,
        last_retry_time: None,
        last_rejection: None,
        activity: Box::new(Activity {
            log_last,
            ..Activity::default()
        }),
    }
}

/// What the logs say of an object that is not among the snapshot's Microservices (a live list
/// judged page by page, whose objects are not kept): when the snapshot has logs, their
/// coverage and no cycle, as [`log_facts`] gives the objects they do not mention; else
/// [`LogFacts::Unavailable`] with the logs' gap.
///
/// `logs`: the logs of the object's operator ([`crate::evidence::resolve::Resolution::logs`]).
pub fn facts_of_unlisted(snapshot: &Snapshot, logs: &OperatorLogs<'_>) -> LogFacts {
    match logs {
        Err(gap) => LogFacts::Unavailable(gap.to_string()),
        Ok(sources) => {
            let mut covers_from: Option<DateTime<Utc>> = None;
            let mut log_last: Option<(DateTime<Utc>, String)> = None;
            for source in sources {
                let times: Vec<DateTime<Utc>> = source
                    .records_in(snapshot.log_zone(source))
                    .iter()
                    .filter_map(Record::time)
                    .collect();
                covers_from = times.iter().copied().chain(covers_from).min();
                let last = times.iter().copied().max();
                if let Some(last) = last.filter(|_| !source.previous)
                    && log_last.as_ref().is_none_or(|(l, _)| *l < last)
                {
                    log_last = Some((last, source_place(source)));
                }
            }
            unmentioned(covers_from, log_last)
        }
    }
}

/// A retry line and its time.
type Retry = (Option<DateTime<Utc>>, String);

/// Kopf's log-record events (`reason: Logging`) on one object's own uid ([`KopfEvents::of_object`]),
/// read as its cycles: the latest `... is processed` (a cycle end) and the latest temporary
/// failure (a retry), each as evidence text on the API server's clock. Events on a
/// predecessor's uid (a deleted object of the same name) or without uid are not among them:
/// they are not this object's cycles.
fn event_facts(own: &[&Event]) -> (Option<CycleEnd>, Option<Retry>) {
    let mut cycle: Option<CycleEnd> = None;
    let mut retry: Option<Retry> = None;
    for event in own {
        let time = precise_event_time(event);
        let message = event.message.as_deref().unwrap_or("").trim();
        let line = format!(
            "event {}/{} type {} reason Logging at {}: {message}",
            event.metadata.namespace.as_deref().unwrap_or(""),
            event.metadata.name.as_deref().unwrap_or(""),
            event.type_.as_deref().unwrap_or("?"),
            time.map(rfc3339_millis).unwrap_or_else(|| "?".into())
        );
        match classify(message) {
            Lifecycle::CycleProcessed { succeeded, failed, .. } => {
                let end = CycleEnd {
                    time,
                    clock: EVENT_CLOCK,
                    succeeded,
                    failed,
                    line,
                };
                if cycle.as_ref().is_none_or(|prev| prev.time <= end.time) {
                    cycle = Some(end);
                }
            }
            Lifecycle::HandlerOutcome {
                outcome: Outcome::Retrying,
                ..
            } if retry.as_ref().is_none_or(|(t, _)| *t <= time) => {
                retry = Some((time, line));
            }
            _ => {}
        }
    }
    (cycle, retry)
}

/// What is known of `obj`'s cycles when it is judged apart from the snapshot's Microservices
/// (a live list judged page by page, [`super::verdict::Judge`]): `logged`, its entry
/// of [`log_facts`] when the logs name it, else `unlisted` ([`facts_of_unlisted`]), with its own
/// Kopf events filling in what the logs lack, as [`log_facts`] does for the objects it is given
/// (the logs' own line wins where they have one). The same answer as [`log_facts`] for an
/// object in the snapshot.
pub fn facts_for(
    logged: Option<&LogFacts>,
    unlisted: &LogFacts,
    events: &KopfEvents<'_>,
    obj: &MicroserviceObject,
) -> LogFacts {
    let base = logged.unwrap_or(unlisted).clone();
    let (cycle, retry) = event_facts(events.of_object(obj));
    if cycle.is_none() && retry.is_none() {
        return base;
    }
    match base {
        LogFacts::Read {
            covers_from,
            last_cycle,
            last_retry,
            last_retry_time,
            last_rejection,
            activity,
        } => {
            let (last_retry, last_retry_time) = match (last_retry, retry) {
                (Some(line), _) => (Some(line), last_retry_time),
                (None, Some((time, line))) => (Some(line), time),
                (None, None) => (None, last_retry_time),
            };
            LogFacts::Read {
                covers_from,
                last_cycle: last_cycle.or(cycle),
                last_retry,
                last_retry_time,
                last_rejection,
                activity,
            }
        }
        LogFacts::Unavailable(_) => LogFacts::Read {
            covers_from: None,
            last_cycle: cycle,
            last_retry: retry.as_ref().map(|(_, l)| l.clone()),
            last_retry_time: retry.and_then(|(t, _)| t),
            last_rejection: None,
            activity: Box::default(),
        },
    }
}

/// An event's time with its best resolution: `series.lastObservedTime`, `eventTime`
/// (microseconds; Kopf sets it), else [`crate::evidence::event_time`] (`lastTimestamp`, 1 s).
fn precise_event_time(e: &Event) -> Option<DateTime<Utc>> {
    e.series
        .as_ref()
        .and_then(|s| s.last_observed_time.as_ref())
        .or(e.event_time.as_ref())
        .map(|t| crate::time::from_jiff(t.0))
        .or_else(|| crate::evidence::event_time(e))
}

/// `ns/name` → the `status.<field>`s the API server dropped from the operator's writes, by
/// Kopf's `Patching failed with inconsistencies: ...` (≥ 1.44 `Merge-patching finished with
/// inconsistencies: ...`) lines for the object ([`crate::kopf::messages::removed_status_fields`]),
/// with the last such line for evidence.
///
/// `logs`: the logs of the object's operator ([`crate::evidence::resolve::Resolution::logs`]).
pub fn pruned_fields(snapshot: &Snapshot, logs: &OperatorLogs<'_>) -> HashMap<String, (Vec<String>, String)> {
    let mut out: HashMap<String, (Vec<String>, String)> = HashMap::new();
    for source in logs.as_ref().into_iter().flatten().copied() {
        for record in source.records_in(snapshot.log_zone(source)) {
            let Some(object) = &record.object else { continue };
            if record.lifecycle() != Lifecycle::PatchInconsistencies
                || crate::evidence::naming::of_other_kind(&record, &snapshot.resource)
            {
                continue;
            }
            let key = format!("{}/{}", object.namespace.as_deref().unwrap_or(""), object.name);
            let entry = out.entry(key).or_default();
            for (field, _) in crate::kopf::messages::removed_status_fields(&record.message) {
                if !entry.0.contains(&field) {
                    entry.0.push(field);
                }
            }
            entry.1 = record.lines.first().cloned().unwrap_or_default();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::resolve::tests::microservice_and_backup_operators;

    /// Issue 18 D9: a json line about a Backup named `api` (`object.kind: Backup`) is no fact of
    /// the Microservice `team-alpha/api`, even in the logs read for it; a plain line of the
    /// same words is (the resolver decided whose logs these are).
    #[test]
    fn a_json_line_of_another_kind_is_no_fact_of_the_object() {
        let (s, _) = microservice_and_backup_operators(false, true);
        let logs = s.operator.logs.get().unwrap();
        let backup = &logs[1];
        let cycle = |facts: &HashMap<String, LogFacts>| {
            matches!(
                facts.get("team-alpha/api"),
                Some(LogFacts::Read {
                    last_cycle: Some(_),
                    ..
                })
            )
        };
        let facts = log_facts(&s, &Ok(vec![backup]));
        assert!(!cycle(&facts), "{facts:?}");
        let facts = log_facts(&s, &Ok(vec![&logs[0]]));
        assert!(cycle(&facts), "{facts:?}");
    }
}
