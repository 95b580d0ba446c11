//! `-o name`, `-o jsonpath=TEMPLATE` and `-o jsonpath-as-json=TEMPLATE`, through the binary, on
//! bundles and log files: every spelling kubectl accepts, the documents they evaluate over, and
//! the commands that refuse them (exit 2, naming the command).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_kubectl-microservice");

fn fixture(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(path)
}

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).env("NO_COLOR", "1").output().unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The stale-port bundle with a second Microservice, `catalog-web`, in the same namespace.
fn two_object_bundle() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let source = fixture("bundles/stale-port");
    copy_dir(&source, dir.path());
    let path = dir.path().join("microservices.json");
    let mut list: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let mut second = list["items"][0].clone();
    second["metadata"]["name"] = "catalog-web".into();
    second["metadata"]["uid"] = "00000000-0000-0000-0000-000000000002".into();
    list["items"].as_array_mut().unwrap().push(second);
    std::fs::write(&path, serde_json::to_string(&list).unwrap()).unwrap();
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[test]
fn status_o_name_prints_resource_group_slash_name_per_object() {
    let bundle = two_object_bundle();
    let dir = bundle.path().to_str().unwrap();
    let out = run(&["status", "--bundle", dir, "-o", "name"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "microservice.platform.example.io/catalog-api\nmicroservice.platform.example.io/catalog-web\n"
    );
    // With NAME, one line, as `kubectl get microservice NAME -o name`.
    let out = run(&["status", "catalog-web", "--bundle", dir, "-oname"]);
    assert_eq!(stdout(&out), "microservice.platform.example.io/catalog-web\n");
    // --exit-code still decides the exit code.
    let out = run(&["status", "--bundle", dir, "-o", "name", "--exit-code"]);
    assert_eq!(out.status.code(), Some(1), "both objects are stale");
}

#[test]
fn status_jsonpath_in_every_spelling_kubectl_accepts() {
    let bundle = two_object_bundle();
    let dir = bundle.path().to_str().unwrap();
    let template = "{.items[*].name}";
    for spelling in [
        vec!["-o".to_string(), format!("jsonpath={template}")],
        vec![format!("-ojsonpath={template}")],
        vec![format!("-o=jsonpath={template}")],
        vec![format!("--output=jsonpath={template}")],
        vec!["--output".to_string(), format!("jsonpath={template}")],
    ] {
        let mut args = vec!["status", "--bundle", dir];
        args.extend(spelling.iter().map(String::as_str));
        let out = run(&args);
        assert_eq!(out.status.code(), Some(0), "{spelling:?}: {}", stderr(&out));
        assert_eq!(stdout(&out), "catalog-api catalog-web", "{spelling:?}");
    }
}

#[test]
fn status_jsonpath_evaluates_over_the_json_document() {
    let bundle = two_object_bundle();
    let dir = bundle.path().to_str().unwrap();
    let json: Value = serde_json::from_slice(&run(&["status", "--bundle", dir, "-o", "json"]).stdout).unwrap();
    let out = run(&[
        "status",
        "--bundle",
        dir,
        "-o",
        r#"jsonpath={.schemaVersion} {.capturedAt}{"\n"}{range .items[*]}{.namespace}/{.name}{"\t"}{.verdict}{"\t"}{.port}{"\n"}{end}"#,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let mut expected = format!("1 {}\n", json["capturedAt"].as_str().unwrap());
    for item in json["items"].as_array().unwrap() {
        expected += &format!(
            "{}/{}\t{}\t{}\n",
            item["namespace"].as_str().unwrap(),
            item["name"].as_str().unwrap(),
            item["verdict"].as_str().unwrap(),
            item["port"]
        );
    }
    assert_eq!(stdout(&out), expected);
    assert!(expected.contains("store/catalog-web\tstale\t7100\n"), "{expected}");
    // A filter, and the first reason's code of the filtered object.
    let out = run(&[
        "status",
        "--bundle",
        dir,
        "-o",
        r#"jsonpath={.items[?(@.name=="catalog-web")].reasons[0].code}"#,
    ]);
    assert_eq!(stdout(&out), json["items"][1]["reasons"][0]["code"].as_str().unwrap());
    // jsonpath-as-json: one JSON array per action, indented by four spaces as kubectl's.
    let out = run(&["status", "--bundle", dir, "-o", "jsonpath-as-json={.items[*].port}"]);
    assert_eq!(stdout(&out), "[\n    7100,\n    7100\n]\n");
    // A missing key prints nothing, as kubectl's default --allow-missing-template-keys.
    let out = run(&["status", "--bundle", dir, "-o", "jsonpath={.items[*].metadata.name}"]);
    assert_eq!((out.status.code(), stdout(&out).as_str()), (Some(0), ""));
}

#[test]
fn bad_output_values_and_templates_are_usage_errors_naming_them() {
    let dir = fixture("bundles/stale-port");
    let dir = dir.to_str().unwrap();
    for (value, needle) in [
        ("jsonpath", "-o jsonpath needs a template"),
        ("jsonpath=", "empty"),
        ("jsonpath={.items[*].name", "\"{.items[*].name\": unclosed action"),
        (
            r#"jsonpath={.items[?(@.name=~"^cat")].name}"#,
            "regular-expression filters (=~) are not supported",
        ),
        ("jsonpath={range .items[*]}{.name}", "{range ...} without {end}"),
        (
            "go-template={{.x}}",
            "invalid -o \"go-template={{.x}}\": expected json, yaml, wide, name, jsonpath=TEMPLATE",
        ),
    ] {
        let out = run(&["status", "--bundle", dir, "-o", value]);
        assert_eq!(out.status.code(), Some(2), "{value}");
        assert!(out.stdout.is_empty(), "{value}");
        assert!(stderr(&out).contains(needle), "{value}: {}", stderr(&out));
    }
}

#[test]
fn explain_events_jsonpath_reads_its_report_and_name_is_refused() {
    let dir = fixture("bundles/stale-port");
    let dir = dir.to_str().unwrap();
    let json: Value =
        serde_json::from_slice(&run(&["explain-events", "catalog-api", "--bundle", dir, "-o", "json"]).stdout).unwrap();
    let out = run(&[
        "explain-events",
        "catalog-api",
        "--bundle",
        dir,
        "-o",
        r#"jsonpath={range .findings[?(@.severity=="problem")]}{.id}{"\n"}{end}"#,
    ]);
    // The exit code is the answer's, whatever the format.
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let problems: String = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "problem")
        .map(|f| format!("{}\n", f["id"].as_str().unwrap()))
        .collect();
    assert!(!problems.is_empty());
    assert_eq!(stdout(&out), problems);
    let out = run(&[
        "explain-events",
        "catalog-api",
        "--bundle",
        dir,
        "-o",
        "jsonpath={.object}",
    ]);
    assert_eq!(stdout(&out), "store/catalog-api");
    for refused in ["name", "wide"] {
        let out = run(&["explain-events", "catalog-api", "--bundle", dir, "-o", refused]);
        assert_eq!(out.status.code(), Some(2), "{refused}");
        assert!(out.stdout.is_empty());
        let err = stderr(&out);
        assert!(
            err.contains("explain-events") && err.contains(&format!("-o {refused} has no meaning")),
            "{err}"
        );
    }
}

#[test]
fn logs_jsonpath_is_evaluated_per_run_and_name_is_refused() {
    let log = fixture("kopf-1.38-real/d-temperr-posting-default.log");
    let log = log.to_str().unwrap();
    let json = run(&[
        "logs",
        "--handler",
        "accept",
        "--local",
        "--log-file",
        log,
        "-o",
        "json",
    ]);
    let runs: Vec<Value> = stdout(&json)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(runs.len() > 1, "the fixture has several runs");
    let out = run(&[
        "logs",
        "--handler",
        "accept",
        "--local",
        "--log-file",
        log,
        "-o",
        r#"jsonpath={.object} {.cause} {.outcome}{"\n"}"#,
    ]);
    // The fixture's last run is a retry: exit 1, whatever the output format.
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let expected: String = runs
        .iter()
        .map(|r| {
            format!(
                "{} {} {}\n",
                r["object"].as_str().unwrap(),
                r["cause"].as_str().unwrap(),
                r["outcome"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(stdout(&out), expected);
    // The closing report goes to stderr, as with -o json.
    assert!(stderr(&out).contains("Coverage:"), "{}", stderr(&out));
    let out = run(&[
        "logs",
        "--handler",
        "accept",
        "--local",
        "--log-file",
        log,
        "-o",
        "name",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("logs prints handler runs, not objects: -o name has no meaning"));
    let out = run(&[
        "logs",
        "--handler",
        "accept",
        "--local",
        "--log-file",
        log,
        "--raw",
        "-o",
        "jsonpath={.object}",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--raw and -o jsonpath exclude each other"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn manifests_name_and_jsonpath() {
    let out = run(&[
        "manifests",
        "--namespace",
        "ops",
        "--watch-namespace",
        "todo",
        "-o",
        "name",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let names = stdout(&out);
    let lines: Vec<&str> = names.lines().collect();
    assert_eq!(
        lines[0],
        "customresourcedefinition.apiextensions.k8s.io/microservices.platform.example.io"
    );
    assert!(lines.contains(&"serviceaccount/microservice-operator"), "{names}");
    assert!(lines.contains(&"deployment.apps/microservice-operator"), "{names}");
    let list: Value = serde_json::from_slice(
        &run(&[
            "manifests",
            "--namespace",
            "ops",
            "--watch-namespace",
            "todo",
            "-o",
            "json",
        ])
        .stdout,
    )
    .unwrap();
    assert_eq!(lines.len(), list["items"].as_array().unwrap().len());
    let out = run(&[
        "manifests",
        "--namespace",
        "ops",
        "--watch-namespace",
        "todo",
        "-o",
        "jsonpath={.items[?(@.kind==\"Deployment\")].spec.replicas}",
    ]);
    assert_eq!(stdout(&out), "2");
}

/// Issue 20: a kubectl user's `{.items[*].metadata.name}` walks the `-o json` document, which has
/// no `metadata`: nothing printed, exit 0, as kubectl's `--allow-missing-template-keys` default;
/// with `--allow-missing-template-keys=false` (before or after the subcommand) an error in
/// kubectl's words naming the key, nothing on stdout, exit 2 (the Contracts' usage error; kubectl
/// exits 1, which here means a problem was diagnosed). The flag alone means true; each command
/// with `-o jsonpath` takes it (`logs` per run); `collect`, which prints no document, refuses it.
#[test]
fn missing_template_keys_print_nothing_or_fail_with_the_flag() {
    let healthy = fixture("bundles/healthy").display().to_string();
    let kubectl_path = "jsonpath={.items[*].metadata.name}";
    let out = run(&["status", "--bundle", &healthy, "-o", kubectl_path]);
    assert_eq!(
        (out.status.code(), stdout(&out).as_str()),
        (Some(0), ""),
        "{}",
        stderr(&out)
    );
    for args in [
        vec![
            "status",
            "--bundle",
            &healthy,
            "-o",
            kubectl_path,
            "--allow-missing-template-keys=false",
        ],
        vec![
            "--allow-missing-template-keys=false",
            "status",
            "--bundle",
            &healthy,
            "-o",
            kubectl_path,
        ],
    ] {
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert_eq!(stdout(&out), "", "{args:?}");
        assert_eq!(
            stderr(&out).trim_end(),
            r#"error: error executing jsonpath "{.items[*].metadata.name}": Error executing template: metadata is not found"#,
            "{args:?}"
        );
    }
    for allow in ["--allow-missing-template-keys", "--allow-missing-template-keys=true"] {
        let out = run(&["status", "--bundle", &healthy, "-o", kubectl_path, allow]);
        assert_eq!(
            (out.status.code(), stdout(&out).as_str()),
            (Some(0), ""),
            "{allow}: {}",
            stderr(&out)
        );
    }
    // The document's own paths print with the flag too.
    let out = run(&[
        "status",
        "--bundle",
        &healthy,
        "-o",
        "jsonpath={.items[*].name}",
        "--allow-missing-template-keys=false",
    ]);
    assert_eq!(
        (out.status.code(), stdout(&out).as_str()),
        (Some(0), "catalog-api"),
        "{}",
        stderr(&out)
    );
    let out = run(&[
        "explain-events",
        "catalog-api",
        "--bundle",
        &healthy,
        "-o",
        "jsonpath={.metadata.name}",
        "--allow-missing-template-keys=false",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("metadata is not found"), "{}", stderr(&out));
    let log = fixture("kopf-1.38-real/ab-run1-create-update-shutdown.log")
        .display()
        .to_string();
    let out = run(&[
        "logs",
        "--handler",
        "accept",
        "--local",
        "--log-file",
        &log,
        "-o",
        "jsonpath={.runId}",
        "--allow-missing-template-keys=false",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("runId is not found"), "{}", stderr(&out));
    let out = run(&["collect", "d", "--allow-missing-template-keys=false"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--allow-missing-template-keys does not apply to collect"),
        "{}",
        stderr(&out)
    );
}
