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

#[path = "support/kopf_oracle.rs"]
mod kopf_oracle;
#[allow(dead_code)] // this file uses fixtures() only
mod support;

use std::path::{Path, PathBuf};

use kopf_oracle::{count, example_py, kopf_check, mark};
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

/// Our counts of `outcome` `succeeded` and `failed` runs of `handler` for kopf-example-1.
fn ours(capture: &Path, handler: &str) -> (usize, usize) {
    kopf_oracle::logs_counts(
        handler,
        "default/kopf-example-1",
        &["--bundle".as_ref(), capture.as_os_str()],
    )
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
        let succeeded = count(&log, kopf_oracle::SUCCEEDED);
        let failed = count(&log, kopf_oracle::FAILED);
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
        let handlers = kopf_oracle::object_handlers(&log, "default/kopf-example-1");
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
    let failed = count(log, kopf_oracle::FAILED);
    assert_eq!(failed.len(), 2);
    assert!(kopf_check(&count(log, kopf_oracle::SUCCEEDED), None, true));
    assert!(!kopf_check(&failed, None, false));
}
