//! `--resource TYPE` through the binary (issue 19), on the captures of Kopf's examples
//! (tests/fixtures/kopf-examples-captured): kubectl's type forms, `TYPE/NAME`, the errors of a
//! malformed type (exit 2) and of a type the bundle does not have (exit 3, kubectl's words), and
//! the verdicts `status` gives those captures.

#[allow(dead_code)] // this file uses fixtures() only
mod support;

use std::path::PathBuf;
use std::process::{Command, Output};

fn capture(name: &str) -> PathBuf {
    support::fixtures().join("kopf-examples-captured").join(name)
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kubectl-microservice"))
        .args(args)
        .env("KUBECONFIG", "/nonexistent/kubeconfig")
        .output()
        .unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Every kubectl form of the type, as `--resource` and as the `TYPE/` of the object, gives the
/// same runs.
#[test]
fn kubectls_type_forms_name_the_same_resource_and_object() {
    let dir = capture("03-1.38");
    let dir = dir.to_str().unwrap();
    let logs = |resource: &str, object: &str| {
        let out = run(&[
            "logs",
            "--bundle",
            dir,
            "--resource",
            resource,
            "--handler",
            "eventual_success_with_a_few_messages",
            object,
            "-o",
            "json",
        ]);
        assert!(out.status.success(), "{resource} {object}: {}", stderr(&out));
        stdout(&out)
    };
    let expected = logs("kopfexamples.kopf.dev", "kopf-example-1");
    assert_eq!(expected.lines().count(), 4, "3 retries and a success: {expected}");
    for (resource, object) in [
        ("kopfexamples", "kopf-example-1"),
        ("kopfexample", "default/kopf-example-1"),
        ("kex", "kex/kopf-example-1"),
        ("KopfExample", "kopfexamples.kopf.dev/kopf-example-1"),
        ("kopfexamples.v1.kopf.dev", "KopfExample/kopf-example-1"),
    ] {
        assert_eq!(logs(resource, object), expected, "{resource} {object}");
    }
}

#[test]
fn a_malformed_type_is_a_usage_error_naming_the_forms() {
    for command in [
        vec!["status", "--resource", "Bad_Type"],
        vec!["logs", "--handler", "x", "--resource", "Bad_Type"],
        vec!["explain-events", "x", "--resource", "Bad_Type"],
        vec!["collect", "dir", "--resource", "Bad_Type"],
    ] {
        let out = run(&command);
        assert_eq!(out.status.code(), Some(2), "{command:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains(
                "error: invalid value 'Bad_Type' for '--resource <TYPE>': expected a resource type as kubectl names one: PLURAL[.GROUP] (kopfexamples.kopf.dev, kopfexamples)"
            ),
            "{command:?}: {}",
            stderr(&out)
        );
    }
}

/// A type the bundle has no CRD for: kubectl's answer for a server, exit 3 (could not decide).
#[test]
fn a_type_the_bundle_does_not_have_is_named_with_what_it_has() {
    let dir = capture("01-1.38-created");
    let dir = dir.to_str().unwrap();
    for command in [
        vec!["status", "--bundle", dir, "--resource", "backups.example.io"],
        vec![
            "explain-events",
            "kopf-example-1",
            "--bundle",
            dir,
            "--resource",
            "backups.example.io",
        ],
        vec![
            "logs",
            "--handler",
            "create_fn",
            "--bundle",
            dir,
            "--resource",
            "backups.example.io",
        ],
    ] {
        let out = run(&command);
        assert_eq!(out.status.code(), Some(3), "{command:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains(&format!(
                "error: the bundle {dir} doesn't have a resource type \"backups.example.io\": it has kopfexamples.kopf.dev, microservices.platform.example.io"
            )),
            "{command:?}: {}",
            stderr(&out)
        );
        assert!(out.stdout.is_empty());
    }
}

/// A `TYPE/NAME` of another type than `--resource`'s is refused, naming the type names taken.
#[test]
fn type_slash_name_of_another_resource_is_refused() {
    let dir = capture("01-1.38-created");
    let out = run(&[
        "status",
        "--bundle",
        dir.to_str().unwrap(),
        "--resource",
        "kex",
        "microservices.platform.example.io/kopf-example-1",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("\"microservices.platform.example.io\" is not a type of kopfexamples.kopf.dev"),
        "{}",
        stderr(&out)
    );
}

/// The verdict of each capture, from the object as the create cycle left it and the log: the
/// handlers all succeeded (`fresh`), some failed permanently (03: `stale`, the cycle's failures
/// named), none has finished while `create_fn` retries (02 without the ServiceAccount:
/// `never-handled`). A bundle `collect --resource` wrote is read as that resource without the flag.
#[test]
fn status_on_the_captures_says_whether_every_handler_finished() {
    for (name, verdict, reason) in [
        ("01-1.38-created", "fresh", "last-cycle-succeeded"),
        ("02-1.38-created", "fresh", "last-cycle-succeeded"),
        ("02-1.38-no-serviceaccount-created", "never-handled", "never-handled"),
        ("03-1.38-created", "stale", "last-handling-failed"),
        ("04-1.38-created", "fresh", "last-cycle-succeeded"),
        ("05-1.38-created", "fresh", "last-cycle-succeeded"),
        ("11-1.38-created", "fresh", "last-cycle-succeeded"),
    ] {
        let dir = capture(name);
        for resource in [Some("kopfexamples.kopf.dev"), None] {
            let mut args = vec!["status", "--bundle", dir.to_str().unwrap(), "-o", "json"];
            args.extend(resource.map(|r| ["--resource", r]).into_iter().flatten());
            let out = run(&args);
            assert!(out.status.success(), "{name}: {}", stderr(&out));
            let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
            let items = doc["items"].as_array().unwrap();
            assert_eq!(items.len(), 1, "{name}: {doc}");
            assert_eq!(items[0]["name"], "kopf-example-1");
            assert_eq!(items[0]["verdict"], verdict, "{name}: {doc}");
            assert_eq!(items[0]["reasons"][0]["code"], reason, "{name}: {doc}");
        }
    }
}

/// Kopf 1.38 posts a handler's error as an event of type `Error` (reason `Logging`), which a
/// `type=Warning` filter hides: `explain-events` on 03-exceptions says so of its events.
#[test]
fn explain_events_on_03_says_the_errors_are_type_error_events() {
    let dir = capture("03-1.38-created");
    let out = run(&[
        "explain-events",
        "kopf-example-1",
        "--bundle",
        dir.to_str().unwrap(),
        "--resource",
        "kopfexamples.kopf.dev",
        "-o",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let elsewhere = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "events-elsewhere")
        .unwrap_or_else(|| panic!("{doc}"));
    let hidden = elsewhere["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e.as_str())
        .filter(|e| e.contains("type Error reason Logging") && e.ends_with("`--field-selector type=Warning` hides it"))
        .count();
    assert_eq!(hidden, 9, "{elsewhere}");
    // Not "0 Warning/Error events": the object's own Error events are seen (the events' kind is
    // the resource's, KopfExample).
    assert!(!doc.to_string().contains("0 Warning/Error events"), "{doc}");
}

/// For another resource than the Microservice, the counts and the commands speak of it: the
/// Error events of 03's object are its WARNINGS (kind KopfExample), and `accepted-stale`'s fix is
/// a `logs --resource ... --handler` of the handler that failed, a command that runs.
#[test]
fn counts_and_fixes_speak_of_the_resource() {
    let dir = capture("03-1.38-created");
    let dir = dir.to_str().unwrap();
    let out = run(&["status", "--bundle", dir, "-o", "json"]);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(doc["items"][0]["warnings"], 9, "{doc}");
    let out = run(&[
        "explain-events",
        "kopf-example-1",
        "--bundle",
        dir,
        "--resource",
        "kex",
        "-o",
        "json",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let fix = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "accepted-stale")
        .and_then(|f| f["fix"].as_str())
        .unwrap_or_else(|| panic!("{doc}"))
        .to_string();
    let command = fix
        .strip_prefix("see the handler's runs and their errors: kubectl microservice ")
        .unwrap_or_else(|| panic!("{fix}"));
    assert!(
        command.starts_with(
            "logs --resource kopfexamples.kopf.dev --handler eventual_failure_with_tracebacks kopf-example-1 -n default --bundle "
        ),
        "{command}"
    );
    let words: Vec<&str> = command.split(' ').collect();
    let out = run(&words);
    // The handler's latest run failed: exit 1 (docs/contracts.md, `logs`).
    assert_eq!(out.status.code(), Some(1), "{command}: {}", stderr(&out));
    assert!(stdout(&out).contains("outcome=failed"), "{}", stdout(&out));
    let elsewhere = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "events-elsewhere")
        .unwrap();
    // One scoped listing per place, by the uid the events carry (issue 20): never `-A`, never
    // the Microservice kind for another resource's events.
    let fix = elsewhere["fix"].as_str().unwrap();
    assert!(
        fix.split("; ")
            .all(|c| c.starts_with("kubectl get events -n default --field-selector involvedObject.uid=")),
        "{elsewhere}"
    );
    assert!(!fix.contains("Microservice") && !fix.contains(" -A"), "{elsewhere}");
}

/// `status NAME`'s `Next:` for another resource names it (`--resource`) and reads the runs
/// through `explain-events`, whose fixes name the handler: never `logs --handler accept`.
#[test]
fn status_next_names_the_resource() {
    let dir = capture("03-1.38-created");
    let out = run(&["status", "kopf-example-1", "--bundle", dir.to_str().unwrap()]);
    let text = stdout(&out);
    let next = text
        .lines()
        .find(|l| l.trim_start().starts_with("Next:"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(!next.contains("--handler accept"), "{next}");
    let command = &next[next.find("kubectl microservice ").unwrap() + "kubectl microservice ".len()..];
    assert!(
        command.starts_with("explain-events kopf-example-1 -n default --bundle ")
            && command.ends_with(" --resource kopfexamples.kopf.dev"),
        "{command}"
    );
    let words: Vec<&str> = command.split(' ').collect();
    let out = run(&words);
    assert_eq!(out.status.code(), Some(1), "{command}: {}", stderr(&out));
}

/// `logs --file` reads no cluster and no CRD: `--resource`'s own word is the one `TYPE` its
/// `TYPE/NAME` takes, and a dotted type it cannot check is refused, saying what it takes.
#[test]
fn logs_file_takes_the_type_word_given() {
    let log = capture("03-1.38").join("operator/logs/kopf.log.file.log");
    let log = log.to_str().unwrap();
    let logs = |object: &str| {
        run(&[
            "logs",
            "--local",
            "--log-file",
            log,
            "--resource",
            "kex",
            "--handler",
            "instant_failure_with_traceback",
            object,
            "-o",
            "json",
        ])
    };
    let out = logs("kex/kopf-example-1");
    // Its one run failed: exit 1 (docs/contracts.md, `logs`).
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let runs: Vec<serde_json::Value> = stdout(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["outcome"], "failed");
    assert_eq!(runs[0]["object"], "default/kopf-example-1");
    let out = logs("kopfexamples.kopf.dev/kopf-example-1");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("\"kopfexamples.kopf.dev\" is not a type of kex"),
        "{}",
        stderr(&out)
    );
}
