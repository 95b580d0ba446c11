//! `--log-file FILE` of `explain-events`, `status` and `collect`, through the binary: the
//! operator's log read from a file (an operator without a Pod) gives the findings the same log
//! gives inside a bundle, cited by the file's name; bad paths are usage errors (exit 2) named
//! before any cluster call.

#[allow(dead_code)] // this file uses fixtures() and copy_dir() only
mod support;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use support::{copy_dir, fixtures};

#[path = "support/kubeconfig.rs"]
mod kubeconfig;

const BIN: &str = env!("CARGO_BIN_EXE_kubectl-microservice");

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(BIN).args(args).env("NO_COLOR", "1").output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn real(file: &str) -> PathBuf {
    fixtures().join("kopf-1.38-real").join(file)
}

/// The real Kopf 1.38 403 capture (tests/fixtures/kopf-1.38-real, scenario e) as a bundle
/// WITHOUT its log: the object and its (absent) events, optionally the in-cluster Deployment.
fn e_bundle_without_logs(with_deployment: bool) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let obj: Value =
        serde_saphyr::from_str(&fs::read_to_string(real("e-todo-api-after-create.yaml")).unwrap()).unwrap();
    fs::write(
        dir.join("microservices.json"),
        serde_json::json!({"apiVersion": "v1", "kind": "List", "items": [obj]}).to_string(),
    )
    .unwrap();
    fs::copy(real("e-events-after-403.json"), dir.join("events.json")).unwrap();
    if with_deployment {
        fs::create_dir_all(dir.join("operator")).unwrap();
        fs::copy(real("deployment/deployment.json"), dir.join("operator/deployment.json")).unwrap();
        fs::copy(real("deployment/configmap.json"), dir.join("operator/configmaps.json")).unwrap();
    }
    fs::write(dir.join("meta.json"), r#"{"namespace": "todo"}"#).unwrap();
    tmp
}

fn explain_json(args: &[&str]) -> (i32, Value) {
    let mut all = vec!["explain-events", "todo-api", "-o", "json"];
    all.extend_from_slice(args);
    let (code, out, err) = run(&all);
    let doc = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{all:?}: {e}: {err}"));
    (code, doc)
}

fn finding<'a>(doc: &'a Value, id: &str) -> Option<&'a Value> {
    doc["findings"].as_array().unwrap().iter().find(|f| f["id"] == id)
}

#[test]
fn a_real_kopf_403_log_via_log_file_gives_event_post_failed() {
    let log = real("e-event-403.log").display().to_string();
    for with_deployment in [false, true] {
        let tmp = e_bundle_without_logs(with_deployment);
        let bundle = tmp.path().display().to_string();

        // Without the log: no failed POST can be seen.
        let (_, before) = explain_json(&["--bundle", &bundle]);
        assert!(finding(&before, "event-post-failed").is_none(), "{before:#}");

        let (code, doc) = explain_json(&["--bundle", &bundle, "--log-file", &log]);
        assert_eq!(code, 1, "{doc:#}");
        let post = finding(&doc, "event-post-failed").unwrap_or_else(|| panic!("{doc:#}"));
        assert_eq!(post["severity"], "problem");
        let evidence = |i: usize| post["evidence"][i].as_str().unwrap_or_default();
        assert!(
            evidence(0).starts_with("4 failed event POSTs in the operator's logs, codes: 403"),
            "{post:#}"
        );
        // The last of the 4 `Failed to post an event` lines, cited by the file's name.
        assert!(
            evidence(1).starts_with("last: file e-event-403.log line 47, 2026-11-29T16:28:05.223Z"),
            "{post:#}"
        );
        let rbac = finding(&doc, "rbac-events").unwrap_or_else(|| panic!("{doc:#}"));
        assert_eq!(rbac["severity"], "problem", "{rbac:#}");
        assert!(
            rbac["evidence"]
                .to_string()
                .contains("403 in the logs: file e-event-403.log line "),
            "{rbac:#}"
        );
        assert!(rbac["fix"].as_str().unwrap().contains("apiGroups: [\"\"]"), "{rbac:#}");
        if !with_deployment {
            assert!(
                rbac["evidence"][0]
                    .as_str()
                    .unwrap()
                    .starts_with("no operator Deployment in evidence"),
                "{rbac:#}"
            );
        }

        // The same file inside the bundle, as `collect --log-file` names it: the same report.
        let logs = tmp.path().join("operator/logs");
        fs::create_dir_all(&logs).unwrap();
        fs::copy(real("e-event-403.log"), logs.join("e-event-403.log.file.log")).unwrap();
        let (code_in, inside) = explain_json(&["--bundle", &bundle]);
        assert_eq!((code_in, &inside), (code, &doc));
        // Given again beside the bundle's copy, it replaces the copy: nothing counted twice.
        let (_, again) = explain_json(&["--bundle", &bundle, "--log-file", &log]);
        assert_eq!(again, doc);
    }
}

#[test]
fn status_reads_the_log_file_as_it_reads_a_bundle_log() {
    let original = fixtures().join("bundles/failed-cycle");
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&original, tmp.path());
    let logs = tmp.path().join("operator/logs");
    let log = fs::read_dir(&logs).unwrap().next().unwrap().unwrap().path();
    let moved = tmp.path().join("operator.log");
    fs::rename(&log, &moved).unwrap();
    // The object's Kopf events carry the cycle end too (they decide without logs): without
    // them, only the log does.
    for events in ["events.json", "events.k8s.io.json"] {
        let _ = fs::remove_file(tmp.path().join(events));
    }
    let status = |dir: &Path, extra: &[&str]| {
        let dir = dir.display().to_string();
        let mut args = vec!["status", "pricing-api", "--bundle", &dir, "-o", "json"];
        args.extend_from_slice(extra);
        let (code, out, err) = run(&args);
        assert_eq!(code, 0, "{err}");
        let doc: Value = serde_json::from_str(&out).unwrap();
        let item = doc["items"][0].clone();
        let codes: Vec<String> = item["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["code"].as_str().unwrap().to_string())
            .collect();
        (item["verdict"].as_str().unwrap().to_string(), codes)
    };
    let with_bundle_log = status(&original, &[]);
    assert_eq!(with_bundle_log.0, "stale");
    assert!(
        with_bundle_log.1.contains(&"last-handling-failed".to_string()),
        "{with_bundle_log:?}"
    );
    let without = status(tmp.path(), &[]);
    assert_ne!(without, with_bundle_log, "the log decides this verdict");
    let moved = moved.display().to_string();
    assert_eq!(status(tmp.path(), &["--log-file", &moved]), with_bundle_log);
}

#[test]
fn bad_log_file_paths_are_usage_errors_before_any_cluster_call() {
    let tmp = tempfile::tempdir().unwrap();
    // A cluster that refuses connections: exit 3 if it were asked first.
    let kubeconfig = kubeconfig::write(tmp.path(), "https://127.0.0.1:1")
        .display()
        .to_string();
    let missing = tmp.path().join("no-such-operate.log").display().to_string();
    let bundle_dir = tmp.path().join("bundle").display().to_string();
    let healthy = fixtures().join("bundles/healthy").display().to_string();
    for args in [
        vec![
            "explain-events",
            "todo-api",
            "--kubeconfig",
            &kubeconfig,
            "--log-file",
            &missing,
        ],
        vec![
            "explain-events",
            "catalog-api",
            "--bundle",
            &healthy,
            "--log-file",
            &missing,
        ],
        vec!["status", "--kubeconfig", &kubeconfig, "--log-file", &missing],
        vec!["status", "--bundle", &healthy, "--log-file", &missing],
        vec![
            "collect",
            &bundle_dir,
            "--kubeconfig",
            &kubeconfig,
            "--log-file",
            &missing,
        ],
    ] {
        let (code, out, err) = run(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(
            err.contains(&format!("cannot read --log-file {missing}")) && err.contains("No such file"),
            "{args:?}: {err}"
        );
        assert!(out.is_empty(), "{args:?}: {out}");
    }
    assert!(!Path::new(&bundle_dir).exists(), "collect wrote something");

    // A directory, stdin, and two files of the same name.
    let tmp_dir = tmp.path().display().to_string();
    let (code, _, err) = run(&["status", "--bundle", &healthy, "--log-file", &tmp_dir]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(&tmp_dir), "{err}");
    let (code, _, err) = run(&["status", "--bundle", &healthy, "--log-file", "-"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--log-file -") && err.contains("stdin"), "{err}");
    fs::create_dir_all(tmp.path().join("a")).unwrap();
    fs::create_dir_all(tmp.path().join("b")).unwrap();
    let a = tmp.path().join("a/op.log");
    let b = tmp.path().join("b/op.log");
    fs::write(&a, "").unwrap();
    fs::write(&b, "").unwrap();
    let (code, _, err) = run(&[
        "explain-events",
        "catalog-api",
        "--bundle",
        &healthy,
        "--log-file",
        &a.display().to_string(),
        "--log-file",
        &b.display().to_string(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("the same file name \"op.log\""), "{err}");
}

/// Where `text` spells the old flag `--file` (not `--file-...`, not `--log-file`).
fn spells_file_flag(text: &str) -> Vec<String> {
    text.match_indices("--file")
        .filter(|(at, _)| {
            let after = text[at + "--file".len()..].chars().next();
            !after.is_some_and(|c| c.is_alphanumeric() || c == '-' || c == '_')
        })
        .map(|(at, _)| {
            let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
            let line_end = text[at..].find('\n').map_or(text.len(), |i| at + i);
            text[line_start..line_end].to_string()
        })
        .collect()
}

/// Issue 20 acceptance 3: `--log-file` is the one spelling of the operator's log file. No
/// `--help` or `-h` of any subcommand (nor the top level) spells `--file`, nor does any error a
/// file flag gives; the errors that concern it name `--log-file` (or `logs --local`). `logs`'s
/// old `--file` is hidden and still reads the files alone (tests/logs_cli.rs
/// `json_output_is_one_run_per_line_with_the_contract_fields`).
#[test]
fn no_help_text_or_error_spells_file_for_the_log_file() {
    let mut command = kubectl_microservice::cli::command();
    command.build();
    let mut helps = vec![("(top)".to_string(), command.render_long_help().to_string())];
    helps.push(("(top) -h".to_string(), command.render_help().to_string()));
    for sub in command.get_subcommands_mut() {
        let name = sub.get_name().to_string();
        helps.push((format!("{name} --help"), sub.render_long_help().to_string()));
        helps.push((format!("{name} -h"), sub.render_help().to_string()));
    }
    assert!(
        helps
            .iter()
            .any(|(n, h)| n == "logs --help" && h.contains("--log-file <FILE|->") && h.contains("--local"))
    );
    for (name, help) in &helps {
        assert_eq!(spells_file_flag(help), Vec::<String>::new(), "{name}");
    }

    let tmp = tempfile::tempdir().unwrap();
    // A cluster that refuses connections: a file error must come first (exit 2).
    let kubeconfig = kubeconfig::write(tmp.path(), "https://127.0.0.1:1")
        .display()
        .to_string();
    let missing = tmp.path().join("no-such-operate.log").display().to_string();
    let healthy = fixtures().join("bundles/healthy").display().to_string();
    let log = real("ab-run1-create-update-shutdown.log").display().to_string();
    let logs = |rest: &[&str]| {
        let mut all = vec!["logs", "--handler", "accept"];
        all.extend_from_slice(rest);
        all.into_iter().map(str::to_string).collect::<Vec<_>>()
    };
    let owned = |args: &[&str]| args.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    // (args, what the error must name)
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            logs(&["--kubeconfig", &kubeconfig, "--log-file", "-", "--log-file", "-"]),
            "--log-file - given twice",
        ),
        (
            logs(&["--kubeconfig", &kubeconfig, "--log-file", &missing]),
            "cannot read --log-file",
        ),
        (logs(&["--log-file", &missing, "--local"]), "cannot read --log-file"),
        (logs(&["--bundle", &healthy, "--log-file", "-", "-f"]), "not a bundle"),
        (logs(&["--local"]), "--log-file <FILE|->"),
        (logs(&["--local", "--log-file", &log, "--bundle", &healthy]), "--local"),
        (
            logs(&["--local", "--log-file", &log, "-c", "operator"]),
            "--log-file read with --local",
        ),
        (
            logs(&["--local", "--log-file", &log, "--log-file", &log, "-f"]),
            "--follow --local reads one --log-file",
        ),
        (logs(&["--local", "--log-file", &log, "--previous"]), "--local"),
        (logs(&["--local", "--log-file", &log, "--tail", "3"]), "--local"),
        (
            logs(&["--local", "--log-file", &log, "--operator", "ops/deployment/op"]),
            "--local",
        ),
        (
            logs(&["--local", "--log-file", &log, "--context", "prod"]),
            "logs --local",
        ),
        (
            logs(&["--kubeconfig", &kubeconfig, "--log-file", &log, "-f"]),
            "one --log-file with --local",
        ),
        (
            owned(&["status", "--kubeconfig", &kubeconfig, "--log-file", "-"]),
            "`logs --handler NAME --log-file -` reads stdin",
        ),
        (
            owned(&["explain-events", "x", "--bundle", &healthy, "--log-file", &missing]),
            "cannot read --log-file",
        ),
        (
            owned(&["collect", "d", "--kubeconfig", &kubeconfig, "--log-file", "-"]),
            "--log-file -",
        ),
    ];
    for (args, names) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, _, err) = run(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(names), "{args:?}: {err}");
        assert_eq!(spells_file_flag(&err), Vec::<String>::new(), "{args:?}");
    }
}
