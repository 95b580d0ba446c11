//! Issue 21, acceptance 2: one verdict function. On every bundle of tests/fixtures (`bundles`,
//! `bundles-captured`, `bundles-synthetic`) and of examples/, for every object, the verdict and
//! reasons of `diagnose::verdict` are what `status -o json` gives its item and `status NAME -o
//! json` its one item, and what `explain-events -o json` states: its `accepted-stale` finding is
//! there exactly when the verdict says the handler has not accepted the current spec
//! ([`Judged::not_accepted`]), titled with the verdict and its first reason. Issue 18, causes
//! before symptoms: the first finding is the cause when one is found (then `status NAME -o json`
//! names the same one as its `cause`, and the headline states its title first), else the finding
//! that states the first reason of a problem verdict; `accepted-stale` follows every other
//! problem. Through the binary as a user runs it.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use chrono::Duration;
use serde_json::Value;

use kubectl_microservice::diagnose::verdict::{Judge, Judged};
use kubectl_microservice::evidence::bundle;

const BIN: &str = env!("CARGO_BIN_EXE_kubectl-microservice");

/// Every bundle directory: tests/fixtures' three folders and examples/, sorted.
fn bundles() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs = Vec::new();
    for folder in [
        "tests/fixtures/bundles",
        "tests/fixtures/bundles-captured",
        "tests/fixtures/bundles-synthetic",
        "examples",
    ] {
        let mut found: Vec<PathBuf> = fs::read_dir(root.join(folder))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.join("meta.json").is_file())
            .collect();
        found.sort();
        dirs.extend(found);
    }
    dirs
}

/// The `-o json` document the binary prints for `args` (exit 0, 1 or 3).
fn json_of(args: &[&str]) -> Value {
    let out = Command::new(BIN)
        .args(args)
        .env("NO_COLOR", "1")
        .env_remove("KUBECONFIG")
        .output()
        .expect("the binary runs");
    let code = out.status.code().unwrap_or(-1);
    assert!(
        matches!(code, 0 | 1 | 3),
        "{args:?}: exit {code}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&out.stdout)))
}

/// `(verdict, reasons)` of a `status -o json` item.
fn of_item(item: &Value) -> (Value, Value) {
    (item["verdict"].clone(), item["reasons"].clone())
}

/// The finding that states a verdict's first reason (`explain-events` puts it first when the
/// verdict is a problem and it is one).
fn states(code: &str) -> &'static str {
    match code {
        "patch-rejected" => "patch-rejected",
        "deletion-pending" => "deletion-pending",
        "status-pruned" => "status-pruned",
        _ => "accepted-stale",
    }
}

/// What `explain-events -o json` says of the verdict `judged`, checked; `cause` is the `cause`
/// of `status NAME -o json`'s item.
fn explain_agrees(dir: &str, key: &str, judged: &Judged, report: &Value, cause: &Value) {
    let findings = report["findings"].as_array().unwrap();
    let stale: Vec<&Value> = findings.iter().filter(|f| f["id"] == "accepted-stale").collect();
    let a = &judged.assessment;
    assert_eq!(
        !stale.is_empty(),
        judged.not_accepted(),
        "{dir} {key}: accepted-stale {stale:?}, verdict {:?} {:?}",
        a.verdict,
        a.reasons.iter().map(|r| r.code).collect::<Vec<_>>()
    );
    if let (Some(finding), Some(first)) = (stale.first(), a.reasons.first()) {
        let said = format!("(status: {} [{}])", a.verdict.as_str(), first.code);
        assert!(
            finding["title"].as_str().unwrap().ends_with(&said),
            "{dir} {key}: {} does not end with {said}",
            finding["title"]
        );
    }
    causes_first(dir, key, findings, report, cause);
    let Some(first) = a.reasons.first() else { return };
    let id = states(first.code);
    let stated = findings.iter().any(|f| f["id"] == id && f["severity"] == "problem");
    if a.verdict.is_problem() && stated && cause.is_null() {
        assert_eq!(
            findings[0]["id"], id,
            "{dir} {key}: no cause before it, yet the verdict's first reason {} is not the first finding",
            first.code
        );
    }
}

/// Issue 18: the first finding, when a warning or a problem other than `accepted-stale`, is the
/// cause: `status NAME`'s `cause` names it, and the headline states its title; `accepted-stale`
/// follows every other problem (the consequence).
fn causes_first(dir: &str, key: &str, findings: &[Value], report: &Value, cause: &Value) {
    let ids: Vec<&str> = findings.iter().map(|f| f["id"].as_str().unwrap()).collect();
    let first = findings.first();
    let is_cause = first.is_some_and(|f| f["severity"] != "ok" && f["id"] != "accepted-stale");
    match first.filter(|_| is_cause) {
        Some(f) => {
            assert_eq!(
                cause["finding"], f["id"],
                "{dir} {key}: status NAME's cause {cause} is not explain-events' first finding {ids:?}"
            );
            assert_eq!(cause["title"], f["title"], "{dir} {key}: the cause's title");
            let summary = report["summary"].as_str().unwrap();
            let title = f["title"].as_str().unwrap();
            assert!(
                summary
                    .find(title)
                    .is_some_and(|at| summary.find("(status: ").is_none_or(|verdict| at < verdict)),
                "{dir} {key}: the headline does not state the cause {title:?} first: {summary}"
            );
        }
        None => assert!(
            cause.is_null(),
            "{dir} {key}: status NAME names a cause {cause}, explain-events {ids:?}"
        ),
    }
    if let Some(at) = findings
        .iter()
        .position(|f| f["id"] == "accepted-stale" && f["severity"] == "problem")
    {
        assert!(
            findings[at + 1..].iter().all(|f| f["severity"] != "problem"),
            "{dir} {key}: a problem after accepted-stale: {ids:?}"
        );
    }
}

#[test]
fn status_and_explain_events_reach_the_one_verdict_on_every_bundle() {
    let mut objects = 0;
    let mut not_accepted = 0;
    for dir in bundles() {
        let d = dir.to_str().unwrap();
        let snapshot = bundle::read(&dir).unwrap_or_else(|e| panic!("{d}: {e}"));
        let judge = Judge::new(&snapshot, Duration::seconds(2));
        let listed = json_of(&["status", "-A", "--bundle", d, "-o", "json"]);
        let items = listed["items"].as_array().unwrap();
        for obj in snapshot.microservices.get().into_iter().flatten() {
            let key = obj.key();
            let (ns, name) = key.split_once('/').unwrap();
            let judged = judge.judge(obj);
            let one = (
                serde_json::to_value(judged.assessment.verdict).unwrap(),
                serde_json::to_value(&judged.assessment.reasons).unwrap(),
            );
            let item = items
                .iter()
                .find(|i| i["namespace"] == ns && i["name"] == name)
                .unwrap_or_else(|| panic!("{d}: status -o json has no {key}"));
            assert_eq!(of_item(item), one, "{d} {key}: status -o json");
            let named = json_of(&["status", name, "-n", ns, "--bundle", d, "-o", "json"]);
            assert_eq!(named["items"].as_array().unwrap().len(), 1, "{d} {key}");
            assert_eq!(of_item(&named["items"][0]), one, "{d} {key}: status NAME -o json");
            let report = json_of(&["explain-events", name, "-n", ns, "--bundle", d, "-o", "json"]);
            explain_agrees(d, &key, &judged, &report, &named["items"][0]["cause"]);
            objects += 1;
            not_accepted += usize::from(judged.not_accepted());
        }
    }
    assert!(objects >= 60, "only {objects} objects");
    assert!(not_accepted >= 10, "only {not_accepted} objects not accepted");
}
