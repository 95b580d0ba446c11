//! What the operator's logs say about each object's handling cycles, for the staleness verdict:
//! the last `<Title> is processed: N succeeded; M failed.` per object, the last retry line, the
//! last rejected PATCH (Kopf's `Throttling for N seconds due to an unexpected error: ...`), and
//! how far back the logs reach. Parsing is [`crate::logs::RecordParser`]'s.

use std::collections::HashMap;

use chrono::{DateTime, Utc};

use super::staleness::{CycleEnd, LogFacts, Rejection};
use crate::evidence::{LogSource, Snapshot};
use crate::kopf::messages::{Lifecycle, Outcome};
use crate::logs::lines::LineSplitter;
use crate::logs::zone::LogZone;
use crate::logs::{Record, RecordParser};

/// Every record of one container's log, its zoneless times read in `zone`
/// ([`Snapshot::log_zone`]).
pub fn records(source: &LogSource, zone: LogZone) -> Vec<Record> {
    let mut splitter = LineSplitter::new();
    let mut parser = RecordParser::in_zone(zone);
    let mut out = Vec::new();
    let mut collect = |r: Record| out.push(r);
    let mut lines = Vec::new();
    splitter.push(source.text.as_bytes(), &mut |l| lines.push(l));
    splitter.finish(&mut |l| lines.push(l));
    for line in lines {
        parser.push(line, &mut collect);
    }
    parser.flush(&mut collect);
    out
}

/// `ns/name` → what the logs say about it. Objects the logs never mention get the logs'
/// coverage and no cycle. Empty when the snapshot has no logs (callers then use
/// [`LogFacts::Unavailable`]).
pub fn log_facts(snapshot: &Snapshot) -> HashMap<String, LogFacts> {
    let Some(sources) = snapshot.operator.logs.get() else {
        return HashMap::new();
    };
    let mut covers_from: Option<DateTime<Utc>> = None;
    let mut last_cycle: HashMap<String, CycleEnd> = HashMap::new();
    let mut last_retry: HashMap<String, (Option<DateTime<Utc>>, String)> = HashMap::new();
    let mut last_rejection: HashMap<String, Rejection> = HashMap::new();
    for source in sources {
        for record in records(source, snapshot.log_zone(source)) {
            if let Some(t) = record.time() {
                covers_from = Some(covers_from.map_or(t, |c| c.min(t)));
            }
            let Some(object) = &record.object else { continue };
            let key = format!("{}/{}", object.namespace.as_deref().unwrap_or(""), object.name);
            let line = record.lines.first().cloned().unwrap_or_default();
            match record.lifecycle() {
                Lifecycle::CycleProcessed { succeeded, failed, .. } => {
                    let clock = record
                        .stamp
                        .map(|s| s.clock.describe())
                        .unwrap_or("no time in the line");
                    let end = CycleEnd {
                        time: record.time(),
                        clock,
                        succeeded,
                        failed,
                        line,
                    };
                    let newer = last_cycle.get(&key).is_none_or(|prev| prev.time <= end.time);
                    if newer {
                        last_cycle.insert(key, end);
                    }
                }
                Lifecycle::Throttled(failure) => {
                    let clock = record
                        .stamp
                        .map(|s| s.clock.describe())
                        .unwrap_or("no time in the line");
                    let count = last_rejection.get(&key).map_or(0, |r| r.count) + 1;
                    let newer = last_rejection.get(&key).is_none_or(|prev| prev.time <= record.time());
                    let entry = last_rejection.entry(key).or_insert_with(|| Rejection {
                        time: record.time(),
                        clock,
                        failure: failure.clone(),
                        line: line.clone(),
                        count: 0,
                    });
                    if newer {
                        *entry = Rejection {
                            time: record.time(),
                            clock,
                            failure,
                            line,
                            count: 0,
                        };
                    }
                    entry.count = count;
                }
                Lifecycle::HandlerOutcome {
                    outcome: Outcome::Retrying,
                    ..
                } => {
                    let newer = last_retry.get(&key).is_none_or(|(t, _)| *t <= record.time());
                    if newer {
                        last_retry.insert(key, (record.time(), line));
                    }
                }
                _ => {}
            }
        }
    }
    let mut keys: Vec<String> = last_cycle
        .keys()
        .chain(last_retry.keys())
        .chain(last_rejection.keys())
        .cloned()
        .collect();
    keys.sort();
    keys.dedup();
    let mut facts: HashMap<String, LogFacts> = keys
        .into_iter()
        .map(|key| {
            let facts = LogFacts::Read {
                covers_from,
                last_cycle: last_cycle.get(&key).cloned(),
                last_retry: last_retry.get(&key).map(|(_, l)| l.clone()),
                last_retry_time: last_retry.get(&key).and_then(|(t, _)| *t),
                last_rejection: last_rejection.get(&key).cloned().map(Box::new),
            };
            (key, facts)
        })
        .collect();
    for obj in snapshot.microservices.get().into_iter().flatten() {
        facts.entry(obj.key()).or_insert_with(|| unmentioned(covers_from));
    }
    facts
}

/// What the logs say of an object they never mention: their coverage, no cycle.
fn unmentioned(covers_from: Option<DateTime<Utc>>) -> LogFacts {
    LogFacts::Read {
        covers_from,
        last_cycle: None,
        last_retry: None,
        last_retry_time: None,
        last_rejection: None,
    }
}

/// What the logs say of an object that is not among the snapshot's Microservices (a live list
/// judged page by page, whose objects are not kept): when the snapshot has logs, their
/// coverage and no cycle, as [`log_facts`] gives the objects they do not mention; else
/// [`LogFacts::Unavailable`] with the logs' gap.
pub fn facts_of_unlisted(snapshot: &Snapshot) -> LogFacts {
    match snapshot.operator.logs.get() {
        Some(_) => {
            let covers_from = snapshot
                .operator
                .logs
                .get()
                .into_iter()
                .flatten()
                .flat_map(|source| records(source, snapshot.log_zone(source)))
                .filter_map(|r| r.time())
                .min();
            unmentioned(covers_from)
        }
        None => LogFacts::Unavailable(
            snapshot
                .operator
                .logs
                .gap()
                .map(ToString::to_string)
                .unwrap_or_else(|| "operator logs: none".into()),
        ),
    }
}
