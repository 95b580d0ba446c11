//! Issue 19 acceptance 1: Kopf's own example operators as the oracle. For each capture in
//! tests/fixtures/kopf-examples-captured (a real `kopf run --all-namespaces --standalone
//! --verbose example.py` of Kopf 1.38 or 1.44 against a real API server, obj.yaml applied then
//! deleted, collected with `collect --resource kopfexamples.kopf.dev --log-file`), this test
//! computes Kopf's e2e marks from the log itself, as nolar/kopf `tests/e2e/test_examples.py`
//! does (`'NAME' succeeded` and `'NAME' failed permanently|with an exception. Will stop.|with an
//! exception and will stop` counted per name, checked against the example's
//! `E2E_SUCCESS_COUNTS` / `E2E_FAILURE_COUNTS`, else each handler succeeded exactly once and
//! none failed), then requires `logs --resource kopfexamples.kopf.dev --handler ID
//! kopf-example-1 -o json` over the bundle to count as many succeeded and failed runs for
//! every handler.

#[allow(dead_code)] // this file uses fixtures() only
mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use support::fixtures;

/// The captures: `NN-VER/`, each a bundle collected after the object was deleted and Kopf stopped.
fn captures() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(fixtures().join("kopf-examples-captured"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() && !p.to_string_lossy().ends_with("-created"))
        .collect();
    dirs.sort();
    dirs
}

/// The example's `example.py` (the 1.38.0 copies every capture ran).
fn example_py(capture: &Path) -> String {
    let nn = &capture.file_name().unwrap().to_string_lossy()[..2];
    let dir = std::fs::read_dir(fixtures().join("kopf-examples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with(&format!("{nn}-")))
        .unwrap_or_else(|| panic!("no example {nn}"));
    std::fs::read_to_string(dir.join("example.py")).unwrap()
}

/// `E2E_NAME = {'a': 1, 'b': 2}` of an example (a dict literal of string keys and int values,
/// over one or more lines, as Kopf's examples write them), or `None` when it sets no such mark.
fn mark(source: &str, name: &str) -> Option<BTreeMap<String, usize>> {
    let start = source.find(&format!("{name} = {{"))?;
    let body = &source[start..];
    let body = &body[body.find('{').unwrap() + 1..body.find('}').unwrap()];
    let entry = regex::Regex::new(r"'([^']+)'\s*:\s*(\d+)").unwrap();
    Some(
        entry
            .captures_iter(body)
            .map(|c| (c[1].to_string(), c[2].parse().unwrap()))
            .collect(),
    )
}

/// Kopf's `re.findall(pattern, runner.output)` counted per name.
fn count(log: &str, pattern: &str) -> BTreeMap<String, usize> {
    let re = regex::Regex::new(pattern).unwrap();
    let mut counts = BTreeMap::new();
    for c in re.captures_iter(log) {
        *counts.entry(c[1].to_string()).or_insert(0) += 1;
    }
    counts
}

/// test_examples.py's check of one kind of mark: the counts of the names the mark lists equal
/// it; without a mark, `expect_without` (successes: every count is 1; failures: none).
fn kopf_check(counts: &BTreeMap<String, usize>, mark: Option<&BTreeMap<String, usize>>, successes: bool) -> bool {
    match mark {
        Some(mark) => {
            let checked: BTreeMap<String, usize> = counts
                .iter()
                .filter(|(name, _)| mark.contains_key(*name))
                .map(|(n, c)| (n.clone(), *c))
                .collect();
            &checked == mark
        }
        None if successes => counts.values().all(|c| *c == 1) && !counts.is_empty(),
        None => counts.is_empty(),
    }
}

/// Our counts of `outcome` `succeeded` and `failed` runs of `handler` for kopf-example-1.
fn ours(capture: &Path, handler: &str) -> (usize, usize) {
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-microservice"))
        .args([
            "logs",
            "--resource",
            "kopfexamples.kopf.dev",
            "--handler",
            handler,
            "kopf-example-1",
            "-o",
            "json",
        ])
        .arg("--bundle")
        .arg(capture)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{handler}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut counts = (0, 0);
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let run: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(run["object"], "default/kopf-example-1", "{line}");
        assert_eq!(run["handler"], handler, "{line}");
        match run["outcome"].as_str().unwrap() {
            "succeeded" => counts.0 += 1,
            "failed" => counts.1 += 1,
            _ => {}
        }
    }
    counts
}

#[test]
fn handler_counts_equal_kopfs_e2e_marks_computed_from_the_same_log() {
    let captures = captures();
    let names: Vec<String> = captures
        .iter()
        .map(|c| c.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for nn in ["01", "02", "03", "04", "05", "11"] {
        assert!(
            names.iter().any(|n| n == &format!("{nn}-1.38")),
            "no capture of {nn} with Kopf 1.38: {names:?}"
        );
    }
    for capture in &captures {
        let log = std::fs::read_to_string(capture.join("operator/logs/kopf.log.file.log")).unwrap();
        let source = example_py(capture);
        let succeeded = count(&log, r"'(.+?)' succeeded");
        let failed = count(
            &log,
            r"'(.+?)' failed (?:permanently|with an exception. Will stop.|with an exception and will stop)",
        );
        // The log is a passing run of Kopf's own test.
        let (success_mark, failure_mark) = (mark(&source, "E2E_SUCCESS_COUNTS"), mark(&source, "E2E_FAILURE_COUNTS"));
        assert!(
            kopf_check(&succeeded, success_mark.as_ref(), true),
            "{capture:?}: {succeeded:?} vs {success_mark:?}"
        );
        assert!(
            kopf_check(&failed, failure_mark.as_ref(), false),
            "{capture:?}: {failed:?} vs {failure_mark:?}"
        );
        // Every handler of the object (Kopf's count also holds its activities, `login_via_pykube`).
        let handlers: std::collections::BTreeSet<String> =
            count(&log, r"\[default/kopf-example-1\] Handler '(.+?)' (?:succeeded|failed)")
                .into_keys()
                .collect();
        assert!(!handlers.is_empty(), "{capture:?}: no handler outcome in the log");
        for handler in handlers {
            let expected = (
                succeeded.get(&handler).copied().unwrap_or(0),
                failed.get(&handler).copied().unwrap_or(0),
            );
            assert_eq!(
                ours(capture, &handler),
                expected,
                "{capture:?} handler {handler} (succeeded, failed)"
            );
        }
    }
}

/// The parts the oracle rests on, on Kopf's own lines: a mark over several lines, both
/// versions' wording of a final failure, the activity Kopf's count includes.
#[test]
fn the_oracle_reads_marks_and_wording_as_kopfs_test_does() {
    let source = example_py(&fixtures().join("kopf-examples-captured/03-1.38"));
    let failures = mark(&source, "E2E_FAILURE_COUNTS").unwrap();
    assert_eq!(failures.len(), 3);
    assert_eq!(failures["instant_failure_with_only_a_message"], 1);
    assert_eq!(mark(&source, "E2E_STARTUP_STOP_WORDS"), None);
    let log = "[x] kopf.objects [ERROR] [default/kopf-example-1] Handler 'a' failed with an exception. Will stop.\n\
               [x] kopf.objects [ERROR] [default/kopf-example-1] Handler 'b' failed with an exception and will stop now: boom\n\
               [x] kopf.activities.auth [INFO] Activity 'login_via_pykube' succeeded.\n";
    let failed = count(
        log,
        r"'(.+?)' failed (?:permanently|with an exception. Will stop.|with an exception and will stop)",
    );
    assert_eq!(failed.len(), 2);
    assert!(kopf_check(&count(log, r"'(.+?)' succeeded"), None, true));
    assert!(!kopf_check(&failed, None, false));
}
