//! `logs --handler` parsing and grouping on every real operator log in tests/fixtures (copied from
//! shared/fixtures): the runs, causes and outcomes that kopf-1.38-real/INDEX.md and each bundle's
//! expected.json `logs_runs` give, in each format, with and without the kubelet prefix.

use std::path::{Path, PathBuf};

use serde_json::Value;

use kubectl_microservice::kopf::messages::{Lifecycle, Outcome};
use kubectl_microservice::kopf::progress::cause_hints;
use kubectl_microservice::logs::runs::{CauseHint, GroupConfig, Run};
use kubectl_microservice::logs::stream::{LogStream, SourceLabel};
use kubectl_microservice::logs::{Clock, Format};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(rel)
}

fn runs_of(bytes: &[u8], hints: Vec<CauseHint>) -> (Vec<Run>, LogStream) {
    let mut stream = LogStream::new(SourceLabel::default(), GroupConfig::default(), hints);
    let runs = stream.read_all(bytes).unwrap();
    (runs, stream)
}

fn summary(runs: &[Run]) -> Vec<String> {
    runs.iter()
        .map(|r| {
            format!(
                "{} {} {} {}",
                r.handler,
                r.object,
                r.cause.map_or("unknown", |c| c.as_str()),
                r.outcome
            )
        })
        .collect()
}

/// Adds a kubelet `--timestamps` prefix to every line, as `kubectl logs --timestamps` does.
fn with_kubelet_prefix(text: &str) -> String {
    text.lines()
        .enumerate()
        .map(|(i, l)| format!("2026-11-29T18:00:{:02}.{:09}Z {l}\n", i % 60, i))
        .collect()
}

/// The text as it is and with the kubelet prefix, with a label.
fn both_ways(text: &str) -> [(bool, String); 2] {
    [(false, text.to_string()), (true, with_kubelet_prefix(text))]
}

fn check(file: &str, hints: Vec<CauseHint>, want: &[&str]) {
    let text = std::fs::read_to_string(fixture(file)).unwrap();
    for (prefixed, input) in both_ways(&text) {
        let (runs, stream) = runs_of(input.as_bytes(), hints.clone());
        assert_eq!(summary(&runs), want, "{file} (kubelet prefix: {prefixed})");
        let stats = stream.parse_stats();
        assert_eq!(stats.lines as usize, text.lines().count(), "{file}");
        assert_eq!(stats.unmatched_lines, 0, "{file}: every line matches a format");
        if prefixed {
            assert_eq!(stats.kubelet_stamped_lines, stats.lines);
            assert!(runs.iter().all(|r| r.started.unwrap().clock == Clock::Kubelet));
        }
    }
}

#[test]
fn ab_run1_create_then_two_field_handler_updates() {
    check(
        "kopf-1.38-real/ab-run1-create-update-shutdown.log",
        vec![],
        &[
            "accept todo/todo-api create succeeded",
            "accept/spec todo/todo-api update succeeded",
            "accept/spec todo/todo-api update succeeded",
        ],
    );
    let text = std::fs::read_to_string(fixture("kopf-1.38-real/ab-run1-create-update-shutdown.log")).unwrap();
    let (runs, _) = runs_of(text.as_bytes(), vec![]);
    // The handler's own Accepted line is attributed by object and order.
    assert!(runs[1].records[0].message.ends_with("port=9090"));
    assert!(runs[2].records[0].message.ends_with("port=8080"));
    assert_eq!(
        runs[0].started.unwrap().at.to_rfc3339(),
        "2026-11-29T16:21:14.099+00:00"
    );
    assert_eq!(runs[0].started.unwrap().clock, Clock::OperatorLocal);
    assert_eq!(
        runs[0].finished.unwrap().at.to_rfc3339(),
        "2026-11-29T16:21:14.100+00:00",
        "finished is the outcome line"
    );
}

#[test]
fn a2_verbose_runs_start_at_the_invocation_line() {
    check(
        "kopf-1.38-real/a2-create-update.verbose.log",
        vec![],
        &[
            "accept todo/todo-api create succeeded",
            "accept/spec todo/todo-api update succeeded",
            "accept/spec todo/todo-api update succeeded",
        ],
    );
    let text = std::fs::read_to_string(fixture("kopf-1.38-real/a2-create-update.verbose.log")).unwrap();
    let (runs, _) = runs_of(text.as_bytes(), vec![]);
    assert_eq!(runs[0].records[0].message, "Handler 'accept' is invoked.");
}

#[test]
fn resume_after_restart() {
    for file in [
        "kopf-1.38-real/c-run2-restart-resume.log",
        "kopf-1.38-real/c-run4-restart-resume.verbose.log",
    ] {
        check(file, vec![], &["accept todo/todo-api resume succeeded"]);
    }
}

#[test]
fn stale_update_caught_up_after_restart_runs_both_handlers_as_update() {
    check(
        "kopf-1.38-real/f2-restart-after-stale-update.verbose.log",
        vec![],
        &[
            "accept todo/todo-api update succeeded",
            "accept/spec todo/todo-api update succeeded",
        ],
    );
}

#[test]
fn temporary_failures_are_four_retrying_runs_in_both_formats() {
    let four = ["accept todo/todo-api unknown retrying"; 4];
    check("kopf-1.38-real/d-temperr-posting-default.log", vec![], &four);
    check("kopf-1.38-real/d-temperr-posting-disabled.log", vec![], &four);
    // The json capture holds two of the tries.
    check("kopf-1.38-real/d-temperr-posting-default.json.log", vec![], &four[..2]);
    let text = std::fs::read_to_string(fixture("kopf-1.38-real/d-temperr-posting-default.log")).unwrap();
    let (runs, _) = runs_of(text.as_bytes(), vec![]);
    assert!(
        runs.iter()
            .all(|r| r.detail.as_deref() == Some("image pull check failed"))
    );
    assert!(runs.iter().all(|r| r.records.len() == 2), "Checking + failed");
}

#[test]
fn temporary_failures_take_their_cause_from_the_progress_annotation() {
    let yaml = std::fs::read_to_string(fixture("kopf-1.38-real/d-temperr-posting-default.todo-api.yaml")).unwrap();
    let object: Value = serde_saphyr::from_str(&yaml).unwrap();
    let hints = cause_hints(&object);
    check(
        "kopf-1.38-real/d-temperr-posting-default.log",
        hints,
        &["accept todo/todo-api create retrying"; 4],
    );
}

#[test]
fn event_post_403_does_not_disturb_the_run_and_is_found() {
    check(
        "kopf-1.38-real/e-event-403.log",
        vec![],
        &["accept todo/todo-api create succeeded"],
    );
    let text = std::fs::read_to_string(fixture("kopf-1.38-real/e-event-403.log")).unwrap();
    let mut parser = kubectl_microservice::logs::RecordParser::new();
    let mut splitter = kubectl_microservice::logs::lines::LineSplitter::new();
    let mut failures = Vec::new();
    let mut on_record = |r: kubectl_microservice::logs::Record| {
        if let Lifecycle::EventPostFailed(f) = r.lifecycle() {
            failures.push(f);
        }
    };
    let mut push = |l| parser.push(l, &mut on_record);
    splitter.push(text.as_bytes(), &mut push);
    splitter.finish(&mut push);
    parser.flush(&mut on_record);
    assert_eq!(failures.len(), 4);
    assert!(failures.iter().all(|f| f.code == Some(403)));
    assert!(
        failures
            .iter()
            .any(|f| f.event_reason.as_deref() == Some("ReconcileFailed"))
    );
}

#[test]
fn grep_excerpt_with_a_traceback_is_kept_and_counted() {
    let text = std::fs::read_to_string(fixture("kopf-1.38-real/restart-429.excerpt.log")).unwrap();
    let (runs, stream) = runs_of(text.as_bytes(), vec![]);
    assert!(runs.is_empty(), "an excerpt without handler outcomes has no runs");
    let stats = stream.parse_stats();
    assert_eq!(stats.lines as usize, text.lines().count());
    // The comment and the four `276:[...]` grep-prefixed lines match no format; the traceback
    // (and the `...` after it) continues the one Throttling record.
    assert_eq!(stats.unmatched_lines, 5);
    assert_eq!(stats.records_in(Format::KopfFull), 1);
    assert_eq!(stats.records, 6);
    assert_eq!(stats.continuation_lines, stats.lines - stats.records);
}

#[test]
fn every_bundle_log_gives_the_expected_runs() {
    let bundles = fixture("bundles");
    let mut seen = 0;
    for entry in std::fs::read_dir(&bundles).unwrap() {
        let dir = entry.unwrap().path();
        let Ok(expected) = std::fs::read_to_string(dir.join("expected.json")) else {
            continue;
        };
        let expected: Value = serde_json::from_str(&expected).unwrap();
        let want: Vec<String> = expected["logs_runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                format!(
                    "{} {} {} {}",
                    r["handler"].as_str().unwrap(),
                    r["object"].as_str().unwrap(),
                    r["cause"].as_str().unwrap(),
                    r["outcome"].as_str().unwrap()
                )
            })
            .collect();
        let objects: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("microservices.json")).unwrap()).unwrap();
        let hints: Vec<CauseHint> = objects["items"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(cause_hints)
            .collect();
        for log in std::fs::read_dir(dir.join("operator/logs")).unwrap() {
            let log = log.unwrap().path();
            let text = std::fs::read_to_string(&log).unwrap();
            for (prefixed, input) in both_ways(&text) {
                let (runs, stream) = runs_of(input.as_bytes(), hints.clone());
                assert_eq!(summary(&runs), want, "{} ({prefixed})", log.display());
                assert_eq!(stream.parse_stats().unmatched_lines, 0);
            }
            seen += 1;
        }
    }
    assert_eq!(seen, 6, "six bundles with one operator log each");
}

#[test]
fn ours_text_run_carries_the_failed_event_post() {
    let dir = fixture("bundles/ours-style-rbac/operator/logs");
    let log = std::fs::read_dir(dir).unwrap().next().unwrap().unwrap().path();
    let text = std::fs::read_to_string(log).unwrap();
    let (runs, stream) = runs_of(text.as_bytes(), vec![]);
    assert_eq!(runs.len(), 1);
    assert_eq!(stream.parse_stats().records_in(Format::OursText), 4);
    let run = &runs[0];
    assert_eq!(run.records.len(), 4);
    assert!(run.records[1].message.starts_with("Failed to post an event: code=403"));
    assert_eq!(run.outcome, Outcome::Succeeded);
    assert_eq!(run.started.unwrap().clock, Clock::OperatorUtc);
}
