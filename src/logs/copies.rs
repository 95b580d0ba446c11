//! One run read twice is one run: the same operator log read from its Pod (kubelet
//! timestamps) and from a file (`--log-file`, a `*.file.log` of a bundle, another `--log-file`: no
//! kubelet prefix, or another one, such as a log store's) gives the same runs twice. A run read
//! from a file is a copy of a run read elsewhere when it is of the same handler, object and
//! outcome and its lines are the other's line for line, up to a prefix: each line is the other's
//! with something before it (the kubelet's time, a log store's fields), or the same text. The
//! operator's own text (Kopf's and our formats carry their own time, to the millisecond) is what
//! makes two runs one; the clocks they were read on are not compared, as a file's may be read in
//! another zone.
//!
//! Runs of two Pods (two replicas both handling) or of one Pod's two container instances are
//! never merged: they are different processes, and a double handling is what
//! `operator-not-leading` reports. Copies pair one to one, so a file that holds a run twice
//! (the same lines logged twice) keeps its second.

use std::collections::HashMap;

use super::file::FILE_CONTAINER;
use super::record::split_kubelet_prefix;
use super::runs::Run;
use super::{LogSource, ObjectKey, Record};

/// Whether `run` was read from a file rather than from a Pod.
fn from_file(run: &Run) -> bool {
    run.container.as_deref() == Some(FILE_CONTAINER) || (run.pod.is_none() && run.container.is_none())
}

/// A line's own text: without the kubelet's time when it has one.
fn own(line: &str) -> &str {
    split_kubelet_prefix(line).1
}

/// Whether two lines are one line read twice: one is the other with a prefix before it (ending
/// in a space or a tab), or they are equal, once the kubelet's time is left out.
fn same_line(a: &str, b: &str) -> bool {
    let (a, b) = (own(a), own(b));
    let (long, short) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    !short.trim().is_empty()
        && long.ends_with(short)
        && (long.len() == short.len() || long[..long.len() - short.len()].ends_with([' ', '\t']))
}

/// Whether `a` and `b` are one run read from two logs (see the module docs): same handler,
/// object, outcome, and the same lines, up to a prefix.
pub fn same_run(a: &Run, b: &Run) -> bool {
    a.handler == b.handler
        && a.object == b.object
        && a.outcome == b.outcome
        && a.omitted_records == b.omitted_records
        && !a.records.is_empty()
        && a.records.len() == b.records.len()
        && a.records.iter().zip(&b.records).all(|(x, y)| same_record(x, y))
}

/// The runs with each copy read from a file dropped in favour of the run it copies: a Pod's
/// (whose kubelet clock is the better one) before another file's. Each kept run lists in
/// [`Run::also_read_from`] where its copies were read. The order of the kept runs is kept.
pub fn merge_copies(runs: Vec<Run>) -> Vec<Run> {
    if !runs.iter().any(from_file) || runs.iter().all(|r| origin(r) == origin(&runs[0])) {
        return runs;
    }
    // Pods' runs first, so that a file's copy folds into the Pod's run, whatever the order.
    let mut given: Vec<(usize, String, Run)> = runs.into_iter().enumerate().map(|(i, r)| (i, origin(&r), r)).collect();
    given.sort_by_key(|(i, _, run)| (from_file(run), *i));
    let mut kept: Vec<(usize, String, Run)> = Vec::with_capacity(given.len());
    // (handler, object, first message) → the kept runs with it: (position in `kept`, copied yet).
    let mut seen: HashMap<(String, ObjectKey, String), Vec<(usize, bool)>> = HashMap::new();
    for (i, place, run) in given {
        let key = (
            run.handler.clone(),
            run.object.clone(),
            run.records.first().map(|r| r.message.clone()).unwrap_or_default(),
        );
        let bucket = seen.entry(key).or_default();
        let original = if from_file(&run) {
            bucket
                .iter_mut()
                .find(|(k, copied)| !*copied && kept[*k].1 != place && same_run(&kept[*k].2, &run))
        } else {
            None
        };
        match original {
            Some((k, copied)) => {
                *copied = true;
                kept[*k].2.also_read_from.push(place);
            }
            None => {
                bucket.push((kept.len(), false));
                kept.push((i, place, run));
            }
        }
    }
    // Back in the order they were given.
    kept.sort_by_key(|(i, _, _)| *i);
    kept.into_iter().map(|(_, _, run)| run).collect()
}

/// Where a run was read, as `logs` names it (`pod=POD/CONTAINER`, `file=NAME`).
pub fn origin(run: &Run) -> String {
    super::file::source_field(run.pod.as_deref().unwrap_or("log"), run.container.as_deref())
}

/// Whether two records are one record read from two logs: same object and message, and the
/// same lines up to a prefix ([`same_line`]).
fn same_record(a: &Record, b: &Record) -> bool {
    a.object == b.object
        && a.message == b.message
        && a.lines.len() == b.lines.len()
        && a.omitted_lines == b.omitted_lines
        && a.lines.iter().zip(&b.lines).all(|(x, y)| same_line(x, y))
}

/// A record kept by [`records_once`]: its source, its position among the kept, copied yet.
type Kept = (usize, usize, bool);

/// The records of every log in `sources` (parsed by `parse`), by source (the records of
/// `sources[i]` at `i`, in log order), where a record read from a file ([`FILE_CONTAINER`]) that copies one read from
/// another log is left out: a Pod's kept before a file's, one to one (see the module docs).
/// What `explain-events` and `status` count (handler failures, rejections) is then counted once.
/// Records of Pods are never left out.
pub fn records_once<'a>(
    sources: &[&'a LogSource],
    mut parse: impl FnMut(&'a LogSource) -> Vec<Record>,
) -> Vec<Vec<Record>> {
    let mut parsed: Vec<(usize, Vec<Record>)> = sources.iter().enumerate().map(|(i, s)| (i, parse(s))).collect();
    if !sources.iter().any(|s| s.container == FILE_CONTAINER) {
        return parsed.into_iter().map(|(_, records)| records).collect();
    }
    // Pods first: their records are the originals of a file's copies.
    let is_file = |i: usize| sources[i].container == FILE_CONTAINER;
    parsed.sort_by_key(|(i, _)| (is_file(*i), *i));
    // (object, message) → the kept records with it: (source, position in `kept`, copied yet).
    let mut seen: HashMap<(Option<ObjectKey>, String), Vec<Kept>> = HashMap::new();
    let mut kept: Vec<(usize, Record)> = Vec::new();
    for (i, records) in parsed {
        for record in records {
            let key = (record.object.clone(), record.message.clone());
            let bucket = seen.entry(key).or_default();
            let original = is_file(i)
                .then(|| {
                    bucket
                        .iter_mut()
                        .find(|(src, at, copied)| !*copied && *src != i && same_record(&kept[*at].1, &record))
                })
                .flatten();
            match original {
                Some(entry) => entry.2 = true,
                None => {
                    bucket.push((i, kept.len(), false));
                    kept.push((i, record));
                }
            }
        }
    }
    let mut by_source: Vec<Vec<Record>> = vec![Vec::new(); sources.len()];
    for (i, record) in kept {
        by_source[i].push(record);
    }
    for records in &mut by_source {
        records.sort_by_key(|r| r.line_number);
    }
    by_source
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logs::runs::GroupConfig;
    use crate::logs::runs::tests::group;

    /// The captured Pod log and `--log-file` of Kopf with TZ=Asia/Taipei (the same process:
    /// kubelet timestamps in the Pod's, none in the file).
    fn captured() -> (String, String) {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/bundles-captured/s11-kopf-tz-taipei-log-file/operator/logs");
        let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
        (
            read("kopf-operator-65c5fc7dd-l58l8.operator.log"),
            read("kopf-tz.log.file.log"),
        )
    }

    fn runs_of(text: &str, pod: &str, container: &str) -> Vec<Run> {
        let (mut runs, _) = group(text, GroupConfig::default());
        for r in &mut runs {
            r.pod = Some(pod.into());
            r.container = Some(container.into());
        }
        runs
    }

    fn source(pod: &str, container: &str, text: &str) -> LogSource {
        LogSource {
            pod: pod.into(),
            container: container.into(),
            previous: false,
            text: text.into(),
        }
    }

    #[test]
    fn a_file_of_the_pods_log_is_the_same_runs_once() {
        let (pod, file) = captured();
        let pods = runs_of(&pod, "kopf-operator-65c5fc7dd-l58l8", "operator");
        assert_eq!(pods.len(), 2);
        // Whatever the order: the file's runs before or after the Pod's.
        for pods_first in [false, true] {
            let mut runs = runs_of(&file, "kopf-tz.log", FILE_CONTAINER);
            assert_eq!(runs.len(), 2, "the file's runs");
            if pods_first {
                runs.splice(0..0, pods.clone());
            } else {
                runs.extend(pods.clone());
            }
            let merged = merge_copies(runs);
            assert_eq!(merged.len(), 2, "{merged:#?}");
            for run in &merged {
                assert_eq!(run.container.as_deref(), Some("operator"), "the Pod's run is kept");
                assert_eq!(run.also_read_from, ["file=kopf-tz.log"]);
            }
        }
        // Records: the file's copies are left out, the Pod's kept, each once.
        let (p, f) = (
            source("kopf-operator-65c5fc7dd-l58l8", "operator", &pod),
            source("kopf-tz.log", FILE_CONTAINER, &file),
        );
        let by_source = records_once(&[&f, &p], LogSource::records);
        assert_eq!(by_source[1].len(), p.records().len());
        assert!(by_source[0].is_empty(), "{:#?}", by_source[0]);
    }

    #[test]
    fn distinct_runs_are_never_merged() {
        let (pod, file) = captured();
        // Two replicas logging the same lines (both handling): both kept, as Pods' runs are.
        let mut runs = runs_of(&pod, "kopf-operator-a", "operator");
        runs.extend(runs_of(&pod, "kopf-operator-b", "operator"));
        assert_eq!(merge_copies(runs.clone()).len(), 4);
        let (a, b) = (
            source("kopf-operator-a", "operator", &pod),
            source("kopf-operator-b", "operator", &pod),
        );
        let by_source = records_once(&[&a, &b], LogSource::records);
        assert_eq!(by_source[0].len() + by_source[1].len(), 2 * a.records().len());
        // A file whose runs are other runs (another time in the operator's own text): kept.
        let later = file.replace("19:19:36", "19:29:36").replace("19:18:15", "19:28:15");
        let mut runs = runs_of(&later, "kopf-tz.log", FILE_CONTAINER);
        runs.extend(runs_of(&pod, "kopf-operator-a", "operator"));
        assert_eq!(merge_copies(runs).len(), 4);
        let f = source("kopf-tz.log", FILE_CONTAINER, &later);
        let by_source = records_once(&[&f, &a], LogSource::records);
        let object_lines = |rs: &[Record]| rs.iter().filter(|r| r.object.is_some()).count();
        assert_eq!(object_lines(&by_source[0]), object_lines(&f.records()));
        // A file that holds a run twice keeps the second: copies pair one to one.
        let twice = format!("{file}{file}");
        let mut runs = runs_of(&twice, "kopf-tz.log", FILE_CONTAINER);
        runs.extend(runs_of(&pod, "kopf-operator-a", "operator"));
        assert_eq!(merge_copies(runs).len(), 4);
    }

    #[test]
    fn lines_are_the_same_up_to_a_prefix() {
        let own = "[2026-12-01 19:18:15,648] kopf.objects [INFO    ] [ns/a] Handler 'accept' succeeded.";
        assert!(same_line(&format!("2026-12-01T11:18:15.648513Z {own}"), own));
        assert!(same_line(own, &format!("store-prefix\t{own}")));
        assert!(!same_line("", ""));
    }
}
