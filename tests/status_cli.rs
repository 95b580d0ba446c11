//! `status` (and every subcommand that asks a cluster) against a cluster that cannot be reached:
//! one line naming the server and the context, exit 3, within the request timeout.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

#[path = "support/kubeconfig.rs"]
mod kubeconfig;

const BIN: &str = env!("CARGO_BIN_EXE_kubectl-microservice");

#[test]
fn unreachable_cluster_is_one_line_and_exit_3() {
    let dir = tempfile::tempdir().unwrap();
    // Port 1 on loopback: nothing listens, the connection is refused at once.
    let kubeconfig = kubeconfig::write(dir.path(), "https://127.0.0.1:1");
    let out_dir = dir.path().join("bundle");
    let out_dir = out_dir.to_str().unwrap();
    for command in [
        &["status"][..],
        &["operate", "--standalone", "-n", "todo"],
        &["explain-events", "todo-api"],
        // logs used to report a dead server as a missing operator, in kube's raw words.
        &["logs", "--handler", "accept"],
        &["logs", "--handler", "accept", "--operator", "ops/deployment/op"],
        &["collect", out_dir],
    ] {
        let start = Instant::now();
        let out = Command::new(BIN)
            .args(command)
            .args(["--request-timeout", "3s", "--kubeconfig"])
            .arg(&kubeconfig)
            .output()
            .unwrap();
        assert!(start.elapsed() < Duration::from_secs(10), "{command:?}");
        assert_eq!(out.status.code(), Some(3), "{command:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
        assert_eq!(errors.len(), 1, "{command:?}: {stderr}");
        assert!(
            errors[0].contains("https://127.0.0.1:1") && errors[0].contains("context down"),
            "{command:?}: {stderr}"
        );
        assert!(
            errors[0].starts_with("error: cannot reach the API server https://127.0.0.1:1/ (context down): "),
            "{command:?}: {stderr}"
        );
        // No library line before ours (kube-client's bare `ERROR failed with error ...`), and
        // not kube's type name.
        assert!(!stderr.contains("failed with error"), "{command:?}: {stderr}");
        assert!(!stderr.contains("ServiceError"), "{command:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{command:?}");
    }
}

#[test]
fn a_missing_kubeconfig_is_a_usage_error() {
    let out = Command::new(BIN)
        .args(["status", "--kubeconfig", "/no/such/kubeconfig"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    // The path once, plainly (kube-client's own text quoted it twice: '"/no/such/kubeconfig"').
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "error: cannot read --kubeconfig /no/such/kubeconfig: No such file or directory (os error 2)"
    );
}

/// Runs `command` with `flags` and `--kubeconfig kubeconfig`; asserts exit 2 and no stdout, and
/// returns stderr, trimmed.
fn usage_error(command: &[&str], flags: &[&str], kubeconfig: &Path) -> String {
    let out = Command::new(BIN)
        .args(command)
        .args(flags)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{command:?} {flags:?}");
    assert!(out.stdout.is_empty(), "{command:?} {flags:?}");
    String::from_utf8_lossy(&out.stderr).trim().to_string()
}

/// A `--context` the kubeconfig lacks names the kubeconfig and the contexts it has, exit 2,
/// whether the kubeconfig comes from --kubeconfig or KUBECONFIG, for every command that
/// builds a client.
#[test]
fn an_unknown_context_names_the_kubeconfig_and_its_contexts() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = kubeconfig::write(dir.path(), "https://127.0.0.1:1");
    let shown = kubeconfig.display().to_string();
    for command in [&["status"][..], &["operate", "--standalone"], &["explain-events", "x"]] {
        assert_eq!(
            usage_error(command, &["--context", "nope"], &kubeconfig),
            format!("error: context \"nope\" not in --kubeconfig {shown} (contexts: down)"),
            "{command:?}"
        );
    }
    let out = Command::new(BIN)
        .args(["status", "--context", "nope"])
        .env("KUBECONFIG", &kubeconfig)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        format!("error: context \"nope\" not in KUBECONFIG={shown} (contexts: down)")
    );
}

#[test]
fn interval_without_watch_is_a_usage_error_naming_both_flags() {
    let healthy = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/bundles/healthy");
    let out = Command::new(BIN)
        .args(["status", "--interval", "5s", "--bundle", healthy])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("required arguments were not provided") && stderr.contains("--watch --interval"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
    // With -w it parses (and is refused for another reason: a bundle cannot be watched).
    let out = Command::new(BIN)
        .args(["status", "-w", "--interval", "5s", "--bundle", healthy])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--watch needs a cluster"));
    // The default interval alone is no error.
    let out = Command::new(BIN)
        .args(["status", "--bundle", healthy])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}

/// A server that accepts TCP connections and never answers (no TLS handshake, no HTTP): every
/// diagnostic subcommand says it timed out after the request timeout, exit 3, in about that time.
#[test]
fn a_server_that_never_answers_is_a_timeout_naming_the_request_timeout() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let server = format!("https://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            held.push(stream);
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = kubeconfig::write(dir.path(), &server);
    let bundle = dir.path().join("bundle").display().to_string();
    for (args, needle) in [
        (vec!["status"], "within the request timeout of 1s: timed out ("),
        (
            vec!["explain-events", "todo-api"],
            "within the request timeout of 1s: timed out (",
        ),
        (
            vec!["collect", bundle.as_str()],
            "within the request timeout of 1s: timed out (",
        ),
        (
            vec!["logs", "--handler", "accept"],
            "within the request timeout of 1s: timed out (",
        ),
    ] {
        let start = Instant::now();
        let out = Command::new(BIN)
            .args(&args)
            .args(["--request-timeout", "1s", "--kubeconfig"])
            .arg(&kubeconfig)
            .output()
            .unwrap();
        let elapsed = start.elapsed();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {stderr}");
        assert!(elapsed < Duration::from_secs(8), "{args:?} took {elapsed:?}");
        let error = stderr.lines().find(|l| l.starts_with("error:")).unwrap_or_default();
        assert!(error.contains(&server), "{args:?}: {stderr}");
        assert!(error.contains(needle), "{args:?}: {stderr}");
        assert!(
            stderr.contains("hint: the API server did not answer in time"),
            "{args:?}: {stderr}"
        );
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    assert!(!Path::new(&bundle).exists(), "collect wrote something");
}

/// Values that would make a command spin or say nothing useful are usage errors naming them.
#[test]
fn zero_durations_and_meaningless_output_flags_are_usage_errors() {
    let healthy = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/bundles/healthy");
    let cases: [(&[&str], &str); 3] = [
        // A zero interval would poll the API server without a pause.
        (
            &["status", "-w", "--interval", "0", "--bundle", healthy],
            "expected at least 1s",
        ),
        (
            &[
                "explain-events",
                "catalog-api",
                "--event-ttl",
                "0s",
                "--bundle",
                healthy,
            ],
            "expected at least 1s",
        ),
        (
            &["operate", "-o", "json", "--standalone"],
            "-o/--output does not apply to operate: it prints no objects; its log format is --log-format text|json",
        ),
    ];
    for (args, want) in cases {
        let out = Command::new(BIN).args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(want), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

/// A meta.json that is not JSON would silently shift "now" and the namespace: exit 2 naming it.
#[test]
fn a_corrupt_meta_json_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let healthy = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bundles/healthy");
    for file in ["microservices.json", "events.json"] {
        std::fs::copy(healthy.join(file), dir.path().join(file)).unwrap();
    }
    std::fs::write(
        dir.path().join("meta.json"),
        "{\"capturedAt\": \"2026-11-29T17:12:03Z\",",
    )
    .unwrap();
    for command in [&["status"][..], &["explain-events", "catalog-api", "-n", "store"]] {
        let out = Command::new(BIN)
            .args(command)
            .arg("--bundle")
            .arg(dir.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{command:?}: {stderr}");
        assert!(stderr.contains("meta.json cannot be read"), "{command:?}: {stderr}");
    }
}

/// A bad `-l` is a usage error before any cluster call (the cluster here refuses connections,
/// which would be exit 3), for `status` and `collect` alike, in the API server's words.
#[test]
fn a_bad_selector_is_refused_before_the_cluster() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = kubeconfig::write(dir.path(), "https://127.0.0.1:1");
    let target = dir.path().join("bundle");
    for command in [vec!["status"], vec!["collect", target.to_str().unwrap()]] {
        assert_eq!(
            usage_error(&command, &["-l", "!!bad"], &kubeconfig),
            r#"error: invalid -l/--selector "!!bad": unable to parse requirement: found '!', expected: identifier"#,
            "{command:?}"
        );
    }
    assert!(!target.exists());
}

/// `-l` is shared, as kubectl's, but only `status` and `collect` select by label: elsewhere it
/// would be silently ignored, so it is refused naming the subcommand and what to give instead.
#[test]
fn a_selector_where_nothing_selects_by_label_is_a_usage_error() {
    let healthy = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/bundles/healthy");
    for (args, hint) in [
        (
            &["explain-events", "catalog-api", "--bundle", healthy][..],
            "give the NAME",
        ),
        (&["logs", "--handler", "accept", "--bundle", healthy], "give OBJECT"),
        (&["operate", "--standalone"], "handles every Microservice"),
    ] {
        let out = Command::new(BIN).args(args).args(["-l", "app=todo"]).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.starts_with(&format!("error: -l/--selector does not apply to {}: ", args[0]))
                && stderr.contains("does not select Microservices by label")
                && stderr.contains(hint),
            "{args:?}: {stderr}"
        );
    }
    // status takes it, with a bundle too.
    let out = Command::new(BIN)
        .args(["status", "--bundle", healthy, "-l", "app=todo"])
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
}

/// kubectl's TYPE/NAME forms name a Microservice in every command that takes a NAME, and
/// `-o name`'s output reads back (issue 14 item 9: `status ms/todo-api` was read as namespace
/// `ms`; `status $(status -o name)` exited 2; `explain-events NS/NAME` was refused).
#[test]
fn type_slash_name_and_the_o_name_round_trip() {
    let bundle = format!("{}/examples/healthy", env!("CARGO_MANIFEST_DIR"));
    let run = |args: &[&str]| {
        Command::new(BIN)
            .args(args)
            .args(["--bundle", &bundle])
            .env("NO_COLOR", "1")
            .output()
            .unwrap()
    };
    let listed = run(&["status", "-o", "name", "-n", "store"]);
    assert_eq!(listed.status.code(), Some(0));
    let name = String::from_utf8(listed.stdout).unwrap().trim().to_string();
    assert_eq!(name, "microservice.platform.example.io/catalog-api");
    for given in [
        name.as_str(),
        "ms/catalog-api",
        "microservice/catalog-api",
        "microservices/catalog-api",
        "microservices.platform.example.io/catalog-api",
        "microservices.v1alpha1.platform.example.io/catalog-api",
        "Microservice/catalog-api",
        "store/catalog-api",
        "catalog-api",
    ] {
        for command in [
            vec!["status", given, "-n", "store"],
            vec!["explain-events", given, "-n", "store"],
            vec!["logs", "--handler", "accept", given, "-n", "store"],
        ] {
            let out = run(&command);
            let (stdout, stderr) = (
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr),
            );
            assert_eq!(out.status.code(), Some(0), "{command:?}: {stderr}");
            assert!(stdout.contains("store/catalog-api"), "{command:?}: {stdout}");
        }
    }
    // A type that is not the Microservice's is refused, naming the forms taken.
    for command in [
        vec!["status", "deployment/catalog-api"],
        vec!["explain-events", "deployment/catalog-api"],
        vec!["logs", "--handler", "accept", "deployment/catalog-api"],
    ] {
        let out = run(&command);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{command:?}: {stderr}");
        assert!(
            stderr.contains("expected NAME, TYPE/NAME (TYPE: ms, microservice, microservices or microservices.platform.example.io) or NAMESPACE/NAME: \"deployment\" is not a Microservice type"),
            "{command:?}: {stderr}"
        );
        assert!(out.stdout.is_empty());
    }
    // NAMESPACE/NAME against -n: the same refusal in every command.
    for command in [
        vec!["status", "store/catalog-api", "-n", "todo"],
        vec!["explain-events", "store/catalog-api", "-n", "todo"],
        vec!["logs", "--handler", "accept", "store/catalog-api", "-n", "todo"],
    ] {
        let out = run(&command);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{command:?}: {stderr}");
        assert!(
            stderr.starts_with("error: store/catalog-api names namespace store; it contradicts -n todo"),
            "{command:?}: {stderr}"
        );
    }
}

/// A plain-HTTP API server that answers every GET of a list with an empty list, a GET of one
/// object with 404, `/version` with a version, anything else with 403; and records each path
/// asked. For seeing which namespace a command reads.
fn recording_server() -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let server = format!("http://{}", listener.local_addr().unwrap());
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let record = record.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut request = String::new();
                if reader.read_line(&mut request).is_err() {
                    return;
                }
                let mut length = 0;
                loop {
                    let mut header = String::new();
                    if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
                        break;
                    }
                    if let Some(v) = header.to_ascii_lowercase().strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                }
                let mut body = vec![0; length];
                let _ = std::io::Read::read_exact(&mut reader, &mut body);
                let mut parts = request.split_whitespace();
                let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
                let path = target.split('?').next().unwrap_or("").to_string();
                record.lock().unwrap().push(path.clone());
                let segments = path.trim_start_matches('/').split('/').count();
                // /api/v1/pods, /apis/G/V/R, /api/v1/namespaces/NS/pods, /apis/G/V/namespaces/NS/R:
                // a list; one more segment: one object.
                let core = path.starts_with("/api/");
                let list_len = match (core, path.contains("/namespaces/")) {
                    (true, false) => 3,
                    (true, true) => 5,
                    (false, false) => 4,
                    (false, true) => 6,
                };
                let (code, text) = if path == "/version" {
                    (200, r#"{"major":"1","minor":"31","gitVersion":"v1.31.0"}"#.to_string())
                } else if let Some(ns) = path.strip_prefix("/api/v1/namespaces/").filter(|n| !n.contains('/')) {
                    (
                        200,
                        format!(r#"{{"kind":"Namespace","apiVersion":"v1","metadata":{{"name":"{ns}"}}}}"#),
                    )
                } else if method == "GET" && segments == list_len {
                    (
                        200,
                        r#"{"kind":"List","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[]}"#
                            .to_string(),
                    )
                } else if method == "GET" {
                    (404, r#"{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,"message":"not found"}"#.to_string())
                } else {
                    (403, r#"{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,"message":"forbidden"}"#.to_string())
                };
                let _ = write!(
                    stream,
                    "HTTP/1.1 {code} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
                    text.len()
                );
            });
        }
    });
    (server, seen)
}

/// Defect 5 of the issue 11 trial: `logs --handler` ignored the kubeconfig context's namespace
/// (`<ambiguous>: N operators serve any namespace`). Every command that reads a cluster takes
/// its namespace by one rule (`cli::namespace_in_context`): without `-n`, the context's
/// (`todo` here): each asks the API server about namespace `todo` and no other.
#[test]
fn every_command_reads_the_contexts_namespace() {
    let (server, seen) = recording_server();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = kubeconfig::write(dir.path(), &server);
    let bundle = dir.path().join("bundle").display().to_string();
    for args in [
        vec!["status"],
        vec!["status", "todo-api"],
        vec!["explain-events", "todo-api"],
        vec!["collect", bundle.as_str()],
        vec!["logs", "--handler", "accept"],
        vec!["logs", "--handler", "accept", "todo-api"],
    ] {
        seen.lock().unwrap().clear();
        let out = Command::new(BIN)
            .args(&args)
            .args(["--request-timeout", "5s", "--kubeconfig"])
            .arg(&kubeconfig)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let paths = seen.lock().unwrap().clone();
        let namespaced: Vec<&String> = paths.iter().filter(|p| p.contains("/namespaces/")).collect();
        assert!(
            namespaced
                .iter()
                .any(|p| p.contains("/namespaces/todo/") || p.ends_with("/namespaces/todo")),
            "{args:?} asked nothing of namespace todo: {paths:?}\n{stderr}"
        );
        assert!(
            namespaced
                .iter()
                .all(|p| p.contains("/namespaces/todo/") || p.ends_with("/namespaces/todo")),
            "{args:?} asked another namespace: {paths:?}"
        );
        assert!(!stderr.contains("any namespace"), "{args:?}: {stderr}");
    }
}
