//! `kubectl-microservice logs` as a user runs it: files and stdin, filters, output modes, colour,
//! follow, exit codes.

// Only `copy_dir` of the shared test support is used here.
#[allow(dead_code)]
mod support;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_kubectl-microservice");

fn fixture(rel: &str) -> String {
    format!("{}/tests/fixtures/{rel}", env!("CARGO_MANIFEST_DIR"))
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(BIN).args(args).env_remove("NO_COLOR").output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn json_runs(stdout: &str) -> Vec<Value> {
    stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn json_output_is_one_run_per_line_with_the_contract_fields() {
    let file = fixture("kopf-1.38-real/ab-run1-create-update-shutdown.log");
    let (code, stdout, stderr) = run(&[
        "logs",
        "--handler",
        "accept",
        "--local",
        "--log-file",
        &file,
        "-o",
        "json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    // `--file` (hidden) is the old name of `--log-file FILE --local`: the same answer.
    let (code, old, err) = run(&["logs", "--handler", "accept", "--file", &file, "-o", "json"]);
    assert_eq!((code, old.as_str()), (0, stdout.as_str()), "{err}");
    // Without `--local`, `--log-file` reads the file beside the cluster's or a bundle's
    // evidence, as the other subcommands do (tests/explain_bundles.rs
    // `status_logs_and_explain_events_read_a_log_file_on_one_clock`); the old `--file` and it
    // exclude each other.
    let (code, _, err) = run(&["logs", "--handler", "accept", "--file", &file, "--log-file", &file]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--log-file"), "{err}");
    let runs = json_runs(&stdout);
    let got: Vec<(&str, &str, &str)> = runs
        .iter()
        .map(|r| {
            (
                r["handler"].as_str().unwrap(),
                r["cause"].as_str().unwrap(),
                r["outcome"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("accept", "create", "succeeded"),
            ("accept/spec", "update", "succeeded"),
            ("accept/spec", "update", "succeeded")
        ]
    );
    for r in &runs {
        assert_eq!(r["schemaVersion"], 1);
        assert_eq!(r["object"], "todo/todo-api");
        assert!(r["started"].as_str().unwrap().ends_with('Z'));
        assert!(r["lines"].as_array().unwrap().len() >= 3);
    }
    // The coverage goes to stderr so stdout stays JSON.
    assert!(stderr.contains("Coverage:") && stderr.contains("14 lines"), "{stderr}");
}

#[test]
fn filters_select_runs() {
    let file = fixture("kopf-1.38-real/ab-run1-create-update-shutdown.log");
    let count = |extra: &[&str]| {
        let mut args = vec![
            "logs",
            "--handler",
            "accept",
            "--local",
            "--log-file",
            file.as_str(),
            "-o",
            "json",
        ];
        args.extend_from_slice(extra);
        let (code, stdout, stderr) = run(&args);
        assert_eq!(code, 0, "{stderr}");
        json_runs(&stdout).len()
    };
    assert_eq!(count(&["--cause", "update"]), 2);
    assert_eq!(count(&["--cause", "create,resume"]), 1);
    assert_eq!(count(&["--outcome", "failed"]), 0);
    assert_eq!(count(&["--last", "1"]), 1);
    assert_eq!(count(&["todo-api"]), 3);
    assert_eq!(count(&["-n", "other", "todo-api"]), 0);
    assert_eq!(count(&["todo/todo-api"]), 3);
    // "now" for a file is its last line (16:21:35.958): the two updates started within 12 s.
    assert_eq!(count(&["--since", "12s"]), 2);
    let (_, stdout, _) = run(&[
        "logs",
        "--handler",
        "accept/spec",
        "--local",
        "--log-file",
        &file,
        "-o",
        "json",
    ]);
    assert_eq!(json_runs(&stdout).len(), 2);
    let (code, stdout, stderr) = run(&["logs", "--handler", "other", "--local", "--log-file", &file]);
    assert!(
        stdout.contains("No run of handler other in these logs.\nHandlers in these logs: accept, accept/spec.\n"),
        "{stdout}{stderr}"
    );
    assert_eq!(code, 0);
    // A known handler filtered to nothing is not a mistyped one: no list.
    let (_, stdout, _) = run(&[
        "logs",
        "--handler",
        "accept",
        "--outcome",
        "failed",
        "--local",
        "--log-file",
        &file,
    ]);
    assert!(
        stdout.contains("No run of handler accept in these logs matches --outcome failed."),
        "{stdout}"
    );
    assert!(!stdout.contains("Handlers in these logs"), "{stdout}");
}

#[test]
fn several_files_and_stdin_merge_by_time() {
    let a = fixture("kopf-1.38-real/c-run2-restart-resume.log");
    let b = fixture("kopf-1.38-real/ab-run1-create-update-shutdown.log");
    let mut child = Command::new(BIN)
        .args([
            "logs",
            "--handler",
            "accept",
            "--local",
            "--log-file",
            &a,
            "--log-file",
            "-",
            "-o",
            "json",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&std::fs::read(&b).unwrap())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let runs = json_runs(&String::from_utf8(out.stdout).unwrap());
    let causes: Vec<&str> = runs.iter().map(|r| r["cause"].as_str().unwrap()).collect();
    assert_eq!(causes, ["create", "update", "update", "resume"]);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("stdin:"), "{stderr}");
}

#[test]
fn colour_follows_the_flag_and_no_color() {
    let file = fixture("bundles/failed-cycle/operator/logs/catalog-operator-6d4f9f788f-gdc4g.operator.log");
    let base = ["logs", "--handler", "accept", "--local", "--log-file", file.as_str()];
    // A pipe: no colour.
    let (_, plain, _) = run(&base);
    assert!(!plain.contains('\u{1b}'));
    // --color always beats NO_COLOR.
    let out = Command::new(BIN)
        .args(base)
        .args(["--color", "always"])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(String::from_utf8(out.stdout).unwrap().contains('\u{1b}'));
    let out = Command::new(BIN)
        .args(base)
        .args(["--color", "never"])
        .output()
        .unwrap();
    assert!(!String::from_utf8(out.stdout).unwrap().contains('\u{1b}'));
}

#[test]
fn control_characters_in_logs_are_escaped_in_human_and_raw_output() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("evil.log");
    std::fs::write(
        &path,
        "[2026-11-29 16:00:00,000] kopf.objects         [ERROR   ] [ns/x] Handler 'accept' failed permanently: \u{1b}[2J\u{1b}]0;pwned\u{7}\n",
    )
    .unwrap();
    for extra in [None, Some("--raw")] {
        let mut args = vec![
            "logs",
            "--handler",
            "accept",
            "--local",
            "--log-file",
            path.to_str().unwrap(),
            "--color",
            "never",
        ];
        args.extend(extra);
        let (code, stdout, _) = run(&args);
        // The latest run failed: a problem diagnosed (docs/contracts.md, `logs`).
        assert_eq!(code, 1);
        assert!(!stdout.contains('\u{1b}') && !stdout.contains('\u{7}'), "{stdout}");
        assert!(stdout.contains("\\u{1b}[2J"), "{stdout}");
    }
}

#[test]
fn usage_errors_exit_2_and_name_the_input() {
    let file = fixture("kopf-1.38-real/c-run2-restart-resume.log");
    for (args, needle) in [
        (
            vec!["logs", "--handler", "accept", "--local", "--log-file", "/no/such/file"],
            "/no/such/file",
        ),
        (
            vec!["logs", "--handler", "accept", "--local", "--log-file", &file, "a/b/c"],
            "'a/b/c' for '[OBJECT]'",
        ),
        (
            vec![
                "logs",
                "--handler",
                "accept",
                "--local",
                "--log-file",
                &file,
                "--raw",
                "-o",
                "json",
            ],
            "--raw",
        ),
        (
            vec![
                "logs",
                "--handler",
                "accept",
                "--local",
                "--log-file",
                &file,
                "-o",
                "yaml",
            ],
            "-o yaml",
        ),
        (
            vec![
                "logs",
                "--handler",
                "accept",
                "--local",
                "--log-file",
                &file,
                "--since",
                "ten",
            ],
            "ten",
        ),
        (
            vec![
                "logs",
                "--handler",
                "accept",
                "--local",
                "--log-file",
                &file,
                "-f",
                "--last",
                "2",
            ],
            "--last",
        ),
        // --tail is lines of a container log (kubectl's), which a file does not have.
        (
            vec![
                "logs",
                "--handler",
                "accept",
                "--local",
                "--log-file",
                &file,
                "--tail",
                "2",
            ],
            "--tail",
        ),
        (
            vec![
                "logs",
                "--handler",
                "accept",
                "--local",
                "--log-file",
                &file,
                "--outcome",
                "meh",
            ],
            "meh",
        ),
        (vec!["logs", "--local", "--log-file", &file], "--handler"),
    ] {
        let (code, _, stderr) = run(&args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
}

/// `--follow` prints each run when it ends, before the stream does.
#[test]
fn follow_prints_runs_as_they_end() {
    let mut child = Command::new(BIN)
        .args([
            "logs",
            "--handler",
            "accept",
            "--local",
            "--log-file",
            "-",
            "-f",
            "-o",
            "json",
            "--run-timeout",
            "1m",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let _ = tx.send(line.unwrap());
        }
    });
    let log = std::fs::read_to_string(fixture("kopf-1.38-real/ab-run1-create-update-shutdown.log")).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    // The create run and its cycle end (lines 5-7), but not yet the stream.
    for l in &lines[..7] {
        writeln!(stdin, "{l}").unwrap();
    }
    stdin.flush().unwrap();
    let first = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("the first run is printed while the stream is open");
    let v: Value = serde_json::from_str(&first).unwrap();
    assert_eq!(
        (v["handler"].as_str(), v["cause"].as_str()),
        (Some("accept"), Some("create"))
    );
    for l in &lines[7..] {
        writeln!(stdin, "{l}").unwrap();
    }
    drop(stdin);
    let started = Instant::now();
    let mut rest = Vec::new();
    while let Ok(line) = rx.recv_timeout(Duration::from_secs(20)) {
        rest.push(line);
        if started.elapsed() > Duration::from_secs(20) {
            break;
        }
    }
    assert_eq!(rest.len(), 2, "{rest:?}");
    assert!(child.wait().unwrap().success());
}

/// Issue 11 item 4, captured live (nolar/kopf#1087): the handler succeeds, Kopf's final PATCH is
/// refused with a 422. Those runs are `failed` with the 422 as their detail, not `succeeded`; the
/// run whose PATCH went through stays succeeded.
#[test]
fn runs_whose_patch_was_rejected_are_failed() {
    let dir = fixture("bundles-captured/kopf-patch-rejected-annotations");
    let (code, stdout, stderr) = run(&["logs", "--handler", "accept", "--bundle", &dir, "-o", "json"]);
    // The latest runs failed: exit 1 (docs/contracts.md, `logs`).
    assert_eq!(code, 1, "{stderr}");
    let got: Vec<(String, String, String)> = json_runs(&stdout)
        .iter()
        .map(|r| {
            (
                r["object"].as_str().unwrap().to_string(),
                r["cause"].as_str().unwrap().to_string(),
                r["outcome"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let want = [
        ("grown-api", "create", "succeeded"),
        ("big-api", "create", "failed"),
        ("grown-api", "update", "failed"),
        ("big-api", "create", "failed"),
        ("grown-api", "update", "failed"),
        ("grown-api", "update", "failed"),
    ]
    .map(|(o, c, out)| (format!("kms-k11k-annot/{o}"), c.to_string(), out.to_string()));
    assert_eq!(got, want);
    for r in json_runs(&stdout).iter().filter(|r| r["outcome"] == "failed") {
        let detail = r["detail"].as_str().unwrap();
        assert!(
            detail.starts_with(
                "the handler succeeded, but Kopf's PATCH at the end of the cycle was rejected (422 Invalid: "
            ) && detail.contains("metadata.annotations: Too long"),
            "{detail}"
        );
    }
}

/// Issue 18 trial P6: a handler retrying (8 `failed temporarily`): the default answer is one
/// line for the 8 runs, `--verbose` every run in full, `-o json` every run; and the exit code
/// is 1 while the latest run is a retry (docs/contracts.md, `logs`), 0 once it succeeded.
#[test]
fn repeated_retries_are_one_line_and_exit_1_while_the_handler_fails() {
    let dir = fixture("bundles/conditional-posting");
    let logs = |extra: &[&str]| {
        let mut args = vec!["logs", "--handler", "accept", "basket-api", "--bundle", &dir];
        args.extend(extra);
        run(&args)
    };
    let (code, stdout, stderr) = logs(&[]);
    assert_eq!(code, 1, "{stderr}");
    let runs: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("  accept  store/basket-api  "))
        .collect();
    assert_eq!(runs.len(), 1, "{stdout}");
    assert!(
        runs[0].contains("outcome=retrying x8 over 35s (first 2026-11-29T17:13:32.227Z): \"registry unreachable\""),
        "{stdout}"
    );
    assert!(stdout.contains("--verbose prints every run"), "{stdout}");
    let (code, verbose, _) = logs(&["--verbose"]);
    assert_eq!(code, 1);
    assert_eq!(verbose.matches("outcome=retrying").count(), 8, "{verbose}");
    assert!(!verbose.contains(" x8 "), "{verbose}");
    let (_, json, _) = logs(&["-o", "json"]);
    assert_eq!(json_runs(&json).len(), 8);
    // The handler's latest run succeeded: 0.
    let (code, _, stderr) = run(&["logs", "--handler", "accept", "--bundle", &fixture("bundles/healthy")]);
    assert_eq!(code, 0, "{stderr}");
}

/// Every bundle: the runs its expected.json `logs_runs` gives, causes from progress annotations
/// included (conditional-posting's retries are a create cycle that never ended).
#[test]
fn bundles_give_the_expected_runs() {
    // (bundle, exit): 1 where an object's latest run of a handler failed or is retrying
    // (failed-cycle's accept/spec failed, conditional-posting's retries), else 0.
    for (bundle, exit) in [
        ("healthy", 0),
        ("stale-port", 0),
        ("failed-cycle", 1),
        ("conditional-posting", 1),
        ("recreated-uid", 0),
        ("ours-style-rbac", 0),
    ] {
        let dir = fixture(&format!("bundles/{bundle}"));
        let expected: Value =
            serde_json::from_str(&std::fs::read_to_string(format!("{dir}/expected.json")).unwrap()).unwrap();
        let (code, stdout, stderr) = run(&["logs", "--handler", "accept", "--bundle", &dir, "-o", "json"]);
        assert_eq!(code, exit, "{bundle}: {stderr}");
        let got: Vec<Value> = json_runs(&stdout)
            .iter()
            .map(|r| serde_json::json!({"handler": r["handler"], "object": r["object"], "cause": r["cause"], "outcome": r["outcome"]}))
            .collect();
        assert_eq!(Value::Array(got), expected["logs_runs"], "{bundle}");
        for r in json_runs(&stdout) {
            assert!(r["pod"].as_str().unwrap().starts_with("catalog-operator-"), "{bundle}");
            assert_eq!(r["container"], "operator");
        }
    }
}

#[test]
fn bundles_say_whether_the_handler_ran_since_the_spec_changed() {
    let answer = |bundle: &str, object: &str| {
        let dir = fixture(&format!("bundles/{bundle}"));
        let (code, stdout, stderr) = run(&["logs", "--handler", "accept", "--bundle", &dir, object]);
        assert_eq!(code, 0, "{stderr}");
        stdout
    };
    let stale = answer("stale-port", "store/catalog-api");
    assert!(
        stale.contains("No run of handler accept for store/catalog-api since the spec changed at 2026-11-29T17:12:27Z"),
        "{stale}"
    );
    assert!(
        stale.contains("They end at 2026-11-29T17:12:16.685Z, before the change"),
        "{stale}"
    );
    let healthy = answer("healthy", "catalog-api");
    assert!(
        healthy.contains("Handler accept ran for store/catalog-api since the spec changed"),
        "{healthy}"
    );
    let recreated = answer("recreated-uid", "store/wishlist-api");
    assert!(
        recreated.contains(
            "No run of handler accept for store/wishlist-api since the spec changed at 2026-11-29T17:14:54Z (created)"
        ),
        "{recreated}"
    );
    assert!(recreated.contains("predate this object"), "{recreated}");
    assert!(
        recreated.contains("(Kopf's logs carry no uid: told apart by time)"),
        "{recreated}"
    );
    // The coverage of the Pod, and its clock.
    assert!(
        stale.contains(
            "catalog-operator-6d4f9f788f-4759c/operator: 2026-11-29T17:11:48.337Z .. 2026-11-29T17:12:16.685Z"
        ),
        "{stale}"
    );
}

#[test]
fn bundle_errors_exit_2_for_a_bad_path_and_3_without_logs() {
    let (code, _, stderr) = run(&["logs", "--handler", "accept", "--bundle", "/no/such/bundle"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("/no/such/bundle"), "{stderr}");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("microservices.json"),
        r#"{"kind": "List", "items": []}"#,
    )
    .unwrap();
    let (code, _, stderr) = run(&["logs", "--handler", "accept", "--bundle", dir.path().to_str().unwrap()]);
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("no operator logs"), "{stderr}");
    let healthy = fixture("bundles/healthy");
    let (code, _, stderr) = run(&["logs", "--handler", "accept", "--bundle", &healthy, "-c", "sidecar"]);
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("container sidecar"), "{stderr}");
}

/// A log that `collect --log-file` put into a bundle is a file, not a replaced Pod.
#[test]
fn a_collected_log_file_is_described_as_a_file() {
    let tmp = tempfile::tempdir().unwrap();
    let bundle = std::path::Path::new(&fixture("bundles/ours-style-rbac")).to_path_buf();
    support::copy_dir(&bundle, tmp.path());
    let logs = tmp.path().join("operator/logs");
    let pod_log = std::fs::read_dir(&logs).unwrap().next().unwrap().unwrap().path();
    std::fs::rename(&pod_log, logs.join("operate.log.file.log")).unwrap();
    let dir = tmp.path().display().to_string();
    let (code, stdout, stderr) = run(&["logs", "--handler", "accept", "--bundle", &dir]);
    assert_eq!(code, 0, "{stderr}");
    // Named as a file, not as a Pod and container.
    assert!(stdout.contains("  file=operate.log\n"), "{stdout}");
    assert!(stdout.contains("file operate.log: "), "{stdout}");
    assert!(
        !stdout.contains("pod=operate.log") && !stdout.contains("operate.log/file"),
        "{stdout}"
    );
    assert!(
        stdout.contains("read from a file (`--log-file` of collect), not from a Pod"),
        "{stdout}"
    );
    assert!(!stdout.contains("replaced before the bundle was made"), "{stdout}");
}

/// Kopf's `full` times are the operator's local time: the answer says once what that means,
/// however many logs have such times.
#[test]
fn what_operator_local_time_means_is_said_once() {
    let file = fixture("kopf-1.38-real/d-temperr-posting-default.log");
    let (code, stdout, stderr) = run(&[
        "logs",
        "--handler",
        "accept",
        "--local",
        "--log-file",
        &file,
        "--log-file",
        &file,
    ]);
    // Its last run is a retry: exit 1 (docs/contracts.md, `logs`).
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(
        stdout.matches("(operator's local time), 14 lines").count(),
        2,
        "{stdout}"
    );
    assert_eq!(stdout.matches("read as UTC").count(), 1, "{stdout}");
    assert!(
        stdout.ends_with(&format!("Note: {}\n", kubectl_microservice::logs::LOCAL_TIME_NOTE)),
        "{stdout}"
    );
}

/// Counts agree with their nouns: `1 line`, not `1 lines`.
#[test]
fn a_one_line_log_is_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("one.log");
    std::fs::write(
        &path,
        "[2026-11-29 16:22:38,707] kopf.activities.star [INFO    ] Activity 'startup' succeeded.\n",
    )
    .unwrap();
    let (code, stdout, stderr) = run(&[
        "logs",
        "--handler",
        "accept",
        "--local",
        "--log-file",
        path.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("(operator's local time), 1 line\n"), "{stdout}");
    assert!(!stdout.contains("1 lines"), "{stdout}");
}

/// A log with no line, or no run in the `--since` window, is said in plain sentences (issue 14
/// item 12: "logs begin at no time (no timed line)", "no lines, 0 lines"; item 6: "No run ... in
/// these logs" beside "last run started at ..." read as a contradiction).
#[test]
fn no_line_and_no_run_in_the_window_are_plain_sentences() {
    let tmp = tempfile::tempdir().unwrap();
    let bundle = tmp.path().join("b");
    support::copy_dir(
        std::path::Path::new(&format!("{}/examples/healthy", env!("CARGO_MANIFEST_DIR"))),
        &bundle,
    );
    std::fs::write(
        bundle.join("operator/logs/catalog-operator-6d4f9f788f-4759c.operator.log"),
        "",
    )
    .unwrap();
    let (code, stdout, stderr) = run(&[
        "logs",
        "--handler",
        "accept",
        "catalog-api",
        "--bundle",
        bundle.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("Cannot tell whether handler accept ran for store/catalog-api since the spec changed at 2026-11-29T17:11:55Z (created): the logs read hold no line with a time.\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("  catalog-operator-6d4f9f788f-4759c/operator: no lines\n"),
        "{stdout}"
    );
    assert!(!stdout.contains("0 lines") && !stdout.contains("no time"), "{stdout}");
    // Runs outside --since: the first line names the filter that left them out.
    let healthy = format!("{}/examples/healthy", env!("CARGO_MANIFEST_DIR"));
    let (code, stdout, stderr) = run(&[
        "logs",
        "--handler",
        "accept",
        "catalog-api",
        "--bundle",
        &healthy,
        "--since",
        "1s",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.starts_with("No run of handler accept for catalog-api in these logs matches --since 1s.\n"),
        "{stdout}"
    );
}

/// `-c` naming a container the operator's Pods do not have was "No run of handler accept..." on
/// stdout, then `error: no operator log could be read` (issue 14 item 7): one error naming the
/// container and the containers the Pods have, nothing on stdout.
#[test]
fn a_container_the_pods_do_not_have_is_one_error_naming_theirs() {
    let healthy = format!("{}/examples/healthy", env!("CARGO_MANIFEST_DIR"));
    let (code, stdout, stderr) = run(&[
        "logs",
        "--handler",
        "accept",
        "catalog-api",
        "--bundle",
        &healthy,
        "-c",
        "nope",
    ]);
    assert_eq!((code, stdout.as_str()), (3, ""), "{stderr}");
    assert_eq!(
        stderr.trim(),
        format!(
            "error: -c nope: the operator's Pods have no container nope in {healthy}/operator/logs/; their containers: operator"
        )
    );
    let (code, _, stderr) = run(&[
        "logs",
        "--handler",
        "accept",
        "catalog-api",
        "--bundle",
        &healthy,
        "-c",
        "operator",
    ]);
    assert_eq!(code, 0, "{stderr}");
}

/// Issue 11 trial C: a predecessor's runs in our operator's text log are told apart by time,
/// and the answer says so in our operator's words, not Kopf's (the captured ours bundle, with a
/// laptop `operate`'s log of the deleted predecessor's create beside it as a `--log-file` copy).
#[test]
fn a_predecessors_runs_in_our_log_are_worded_for_our_operator() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("b");
    support::copy_dir(
        std::path::Path::new(&fixture("bundles-captured/trial-ours-recreated-fresh")),
        &dir,
    );
    std::fs::write(
        dir.join("operator/logs/laptop.file.log"),
        "2026-12-01T12:22:20.700Z  INFO [kms-tr-lap/re-api] Accepted kms-tr-lap/re-api: image=reg/ok:1 port=9000 handler=accept cause=create\n\
         2026-12-01T12:22:20.701Z  INFO [kms-tr-lap/re-api] Handler 'accept' succeeded. handler=accept cause=create\n\
         2026-12-01T12:22:20.702Z  INFO [kms-tr-lap/re-api] Creation is processed: 1 succeeded; 0 failed. handler=accept cause=create\n",
    )
    .unwrap();
    let (code, stdout, stderr) = run(&[
        "logs",
        "--handler",
        "accept",
        "--bundle",
        dir.to_str().unwrap(),
        "re-api",
        "-n",
        "kms-tr-lap",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("Runs before 2026-12-01T12:22:24Z predate this object"),
        "{stdout}"
    );
    assert!(
        stdout.contains("(our operator's text log lines carry no uid: told apart by time)"),
        "{stdout}"
    );
    assert!(!stdout.contains("Kopf"), "{stdout}");
}
