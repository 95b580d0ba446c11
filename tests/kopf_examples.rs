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
#[allow(dead_code)] // this file uses fixtures() and copy_dir() only
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

/// `explain-events --resource kopfexamples.kopf.dev kopf-example-1 -o json` over `bundle`: its
/// `handler-failing` finding (title, evidence), which must be there.
fn handler_failing(bundle: &Path) -> (String, Vec<String>) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kubectl-microservice"))
        .args([
            "explain-events",
            "--resource",
            "kopfexamples.kopf.dev",
            "kopf-example-1",
            "-n",
            "default",
        ])
        .arg("--bundle")
        .arg(bundle)
        .args(["-o", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let found = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "handler-failing")
        .unwrap_or_else(|| panic!("no handler-failing in {json}"));
    let evidence = found["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap().to_string())
        .collect();
    (found["title"].as_str().unwrap().to_string(), evidence)
}

/// The evidence line `handler-failing` gives `handler`'s permanent failure.
fn failure_line<'e>(evidence: &'e [String], handler: &str) -> &'e str {
    evidence
        .iter()
        .find(|e| e.starts_with(&format!("handler '{handler}' failed permanently: ")))
        .unwrap_or_else(|| panic!("{handler} not named: {evidence:#?}"))
}

/// Issue 19 acceptance 2, Kopf 1.38 (03-exceptions, the object after its create cycle): every
/// handler of the example's `E2E_FAILURE_COUNTS` is named as failed permanently, each posted as
/// type `Error` reason `Logging` (the events of the object's uid, as Kopf 1.38's K8sPoster posts
/// an ERROR record), with the type=Warning filter that hides it and the command that shows it.
#[test]
fn exceptions_names_each_permanent_failure_and_how_kopf_1_38_posted_it() {
    let bundle = fixtures().join("kopf-examples-captured/03-1.38-created");
    let failures = mark(&example_py(&bundle), "E2E_FAILURE_COUNTS").unwrap();
    let (title, evidence) = handler_failing(&bundle);
    assert!(
        title.starts_with(&format!("{} handlers failed permanently", failures.len())),
        "{title}"
    );
    let uid = "63906bf7-1d4c-4bf8-b1b7-c5192b7887b5";
    for handler in failures.keys() {
        assert!(title.contains(&format!("'{handler}'")), "{handler} not in {title}");
        let line = failure_line(&evidence, handler);
        assert!(
            line.contains("posted as 1 event type Error reason Logging, which a `--field-selector type=Warning`"),
            "{line}"
        );
        assert!(
            line.ends_with(&format!(
                "kubectl get events -n default --field-selector involvedObject.uid={uid},type=Error"
            )),
            "{line}"
        );
    }
}

/// Issue 19 acceptance 2, Kopf 1.44: the same log with Kopf 1.44.6's start line and no event
/// (as 1.44 posts none without `settings.posting.loggers`; derived from 03-1.38-created in a
/// temporary copy until a 03-1.44-created capture exists): each failure is said not posted, with
/// the setting that posts it.
#[test]
fn exceptions_says_kopf_1_44_posted_no_failure_without_posting_loggers() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = dir.path().join("03-1.44-derived");
    support::copy_dir(&fixtures().join("kopf-examples-captured/03-1.38-created"), &bundle);
    let log = bundle.join("operator/logs/kopf.log.file.log");
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("Starting Kopf 1.38.0."));
    std::fs::write(&log, text.replace("Starting Kopf 1.38.0.", "Starting Kopf 1.44.6.")).unwrap();
    std::fs::write(
        bundle.join("events.json"),
        r#"{"apiVersion":"v1","kind":"List","items":[]}"#,
    )
    .unwrap();
    let failures = mark(&example_py(&bundle), "E2E_FAILURE_COUNTS").unwrap();
    let (_, evidence) = handler_failing(&bundle);
    for handler in failures.keys() {
        let line = failure_line(&evidence, handler);
        assert!(
            line.contains("not posted: Kopf 1.44 (the log's start line `Starting Kopf 1.44.6.`) posts no handler failure as an event unless the operator sets settings.posting.loggers = True"),
            "{line}"
        );
    }
}

/// `status --resource kopfexamples.kopf.dev -n default` over `bundle`, as text (`-o json` when
/// `json`).
fn status(bundle: &Path, json: bool) -> String {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_kubectl-microservice"));
    command
        .args([
            "status",
            "--resource",
            "kopfexamples.kopf.dev",
            "-n",
            "default",
            "--bundle",
        ])
        .arg(bundle);
    if json {
        command.args(["-o", "json"]);
    }
    let out = command.env("NO_COLOR", "1").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Issue 19 acceptance 3, the create cycle of each example as Kopf 1.38 left it (`NN-1.38-created`):
/// `status --resource` gives the columns of a resource without the Microservice's status
/// convention (NAME, HANDLERS, VERDICT, WARNINGS, AGE), and each verdict and HANDLERS count
/// follows from the log's own cycle end (`Creation is processed: S succeeded; F failed.`, read
/// here from the bundle's log): `S/(S+F)`, `fresh` when none failed, else `stale` (the last
/// handling of this spec failed). Kopf's progress record of a handler still retrying (02's first
/// run, its Pod POST refused) is the cycle in flight: `0/1`, `never-handled`.
#[test]
fn status_of_each_example_counts_the_cycles_handlers_as_its_log_ends_it() {
    let dir = fixtures().join("kopf-examples-captured");
    let mut seen = 0;
    for nn in ["01", "02", "03", "04", "05", "11"] {
        let bundle = dir.join(format!("{nn}-1.38-created"));
        let log = std::fs::read_to_string(bundle.join("operator/logs/kopf.log.file.log")).unwrap();
        let end = log
            .lines()
            .rev()
            .find_map(|l| l.split("Creation is processed: ").nth(1))
            .unwrap_or_else(|| panic!("{nn}: no cycle end in its log"));
        let number = |word: &str| -> u32 {
            end.split("; ")
                .find_map(|part| part.trim_end_matches('.').strip_suffix(word))
                .and_then(|n| n.trim().parse().ok())
                .unwrap_or_else(|| panic!("{nn}: {end:?}"))
        };
        let (succeeded, failed) = (number(" succeeded"), number(" failed"));
        let verdict = if failed == 0 { "fresh" } else { "stale" };
        let text = status(&bundle, false);
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
        assert_eq!(
            header,
            ["NAME", "HANDLERS", "VERDICT", "WARNINGS", "AGE"],
            "{nn}: {text}"
        );
        let row: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
        assert_eq!(
            row[..3],
            [
                "kopf-example-1",
                format!("{succeeded}/{}", succeeded + failed).as_str(),
                verdict
            ],
            "{nn}: {text}"
        );
        let json: serde_json::Value = serde_json::from_str(&status(&bundle, true)).unwrap();
        let item = &json["items"][0];
        assert_eq!(item["verdict"], verdict, "{nn}");
        assert_eq!(
            item["handlers"],
            serde_json::json!({"succeeded": succeeded, "failed": failed,
                "total": succeeded + failed, "from": "cycle-end"}),
            "{nn}"
        );
        seen += 1;
    }
    assert_eq!(seen, 6);

    let retrying = dir.join("02-1.38-no-serviceaccount-created");
    let text = status(&retrying, false);
    let row: Vec<&str> = text.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(row[..3], ["kopf-example-1", "0/1", "never-handled"], "{text}");
    let json: serde_json::Value = serde_json::from_str(&status(&retrying, true)).unwrap();
    assert_eq!(json["items"][0]["handlers"]["from"], "progress");
}

/// `CMD --resource kopfexamples.kopf.dev NAME -n kms-a3 -o json` over a derived bundle, with its
/// exit code.
fn derived(command: &str, bundle: &str, name: &str) -> (Option<i32>, serde_json::Value) {
    let dir = fixtures().join("kopf-examples-derived").join(bundle);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kubectl-microservice"))
        .args([
            command,
            "--resource",
            "kopfexamples.kopf.dev",
            name,
            "-n",
            "kms-a3",
            "-o",
            "json",
            "--bundle",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    let json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{command} {bundle} {name}: {e}: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code(), json)
}

/// Issue 19 (which operator handles which resource; acceptance 3): a Kopf example operator in a
/// Pod on a shared cluster where two cluster-wide Kopf operators of Microservices also watch
/// its namespace. Its objects are its own (their sources handle Microservices only), the RBAC
/// review is of `kopfexamples` (a refused `kopfexamples/status` PATCH, never "may not list
/// microservices"), an object every handler's filter excludes is `never-handled` with the
/// filters and the label that includes it, and a handler retrying after a spec change is
/// `stale` until its cycle ends, then `fresh` (tests/fixtures/kopf-examples-derived/README.md).
#[test]
fn a_kopf_example_operator_on_a_shared_cluster_is_judged_by_its_own_resource() {
    let operator = "kms-a3/deployment/kopfexample-operator";
    let (code, status) = derived("status", "a3-status-forbidden", "kopf-example-1");
    assert_eq!(code, Some(0));
    let item = &status["items"][0];
    assert_eq!(
        (item["verdict"].as_str(), item["operator"].as_str()),
        (Some("fresh"), Some(operator))
    );
    assert_eq!(item["handlers"]["total"], 3);
    let (code, explained) = derived("explain-events", "a3-status-forbidden", "kopf-example-1");
    assert_eq!(code, Some(1));
    let first = &explained["findings"][0];
    assert_eq!(first["id"], "rbac-resource", "{explained}");
    let fix = first["fix"].as_str().unwrap();
    assert!(
        fix.contains(r#"- apiGroups: ["kopf.dev"]"#) && fix.contains(r#"resources: ["kopfexamples/status"]"#),
        "{fix}"
    );
    assert!(
        fix.contains("kubectl auth can-i patch kopfexamples.kopf.dev --subresource=status -n kms-a3"),
        "{fix}"
    );
    // The other operators' candidacies may say what they handle; no finding speaks of Microservices.
    let text = explained["findings"].to_string();
    assert!(
        !text.contains("microservices"),
        "a Microservice fact for a kopfexample: {text}"
    );

    let (_, status) = derived("status", "a3-status-forbidden", "kopf-example-2");
    let item = &status["items"][0];
    assert_eq!(
        (item["verdict"].as_str(), item["operator"].as_str()),
        (Some("never-handled"), Some(operator))
    );
    assert_eq!(item["reasons"][0]["code"], "handler-filtered");
    let evidence: Vec<&str> = item["reasons"][0]["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e.as_str())
        .collect();
    assert!(
        evidence
            .iter()
            .any(|e| e.starts_with("example.py:9: @kopf.on.create('kopfexamples', labels={'somelabel': 'somevalue'})")),
        "{evidence:?}"
    );
    assert!(
        evidence.contains(
            &"to have it handled: kubectl label -n kms-a3 kopfexamples.kopf.dev/kopf-example-2 somelabel=somevalue"
        ),
        "{evidence:?}"
    );

    let (_, status) = derived("status", "a3-update-retrying", "kopf-example-1");
    let item = &status["items"][0];
    assert_eq!(item["verdict"], "stale");
    assert_eq!(item["reasons"][0]["code"], "retrying");
    assert_eq!(
        item["handlers"],
        serde_json::json!({"succeeded": 0, "failed": 0, "total": 1, "from": "progress"})
    );
    assert_eq!(item["cause"]["finding"], "handler-failing");

    let (code, status) = derived("status", "a3-update-succeeded", "kopf-example-1");
    assert_eq!(code, Some(0));
    let item = &status["items"][0];
    assert_eq!(item["verdict"], "fresh");
    assert_eq!(
        item["handlers"],
        serde_json::json!({"succeeded": 1, "failed": 0, "total": 1, "from": "cycle-end"})
    );
}
