//! Values on the command line that once crashed the binary or reached the API server: each is a
//! usage error (exit 2) whose first line names the flag, the input and what was expected, and
//! nothing is printed on stdout. The cluster is unreachable (loopback port 1), so a value that
//! slipped through validation would show as exit 3 instead.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

#[path = "support/kubeconfig.rs"]
mod kubeconfig;

const BIN: &str = env!("CARGO_BIN_EXE_kubectl-microservice");

fn fixture(rel: &str) -> String {
    format!("{}/tests/fixtures/{rel}", env!("CARGO_MANIFEST_DIR"))
}

/// A kubeconfig for a server that refuses connections, in a directory kept for the test.
fn unreachable() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = kubeconfig::write(dir.path(), "https://127.0.0.1:1");
    (dir, path)
}

fn run(args: &[&str], kubeconfig: &Path) -> Output {
    Command::new(BIN)
        .args(args)
        .env("KUBECONFIG", kubeconfig)
        .env_remove("NO_COLOR")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

/// Asserts exit 2, empty stdout, and `first_line` as stderr's first line.
#[track_caller]
fn usage_error(args: &[&str], first_line: &str) {
    let (_dir, kubeconfig) = unreachable();
    let out = run(args, &kubeconfig);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(out.stdout.is_empty(), "{args:?}");
    assert_eq!(stderr.lines().next(), Some(first_line), "{args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
}

const TOO_LONG: &str = "expected at most 2562047h (about 292 years, kubectl's limit)";

/// Was a panic: `DateTime - TimeDelta overflowed` (exit 134 in a release build).
#[test]
fn since_of_9999999999999h_is_a_usage_error() {
    let file = fixture("kopf-1.38-real/ab-run1-create-update-shutdown.log");
    usage_error(
        &[
            "logs",
            "--handler",
            "accept",
            "--local",
            "--log-file",
            &file,
            "--since",
            "9999999999999h",
        ],
        &format!("error: invalid value '9999999999999h' for '--since <DURATION>': {TOO_LONG}"),
    );
}

/// Was a panic: `cannot convert float seconds to Duration`.
#[test]
fn since_of_99999999999999999999s_is_a_usage_error() {
    usage_error(
        &["logs", "--handler", "accept", "--since", "99999999999999999999s"],
        &format!("error: invalid value '99999999999999999999s' for '--since <DURATION>': {TOO_LONG}"),
    );
}

/// Was a panic: `cannot convert float seconds to Duration`.
#[test]
fn request_timeout_of_99999999999999999999h_is_a_usage_error() {
    for command in [
        &["status"][..],
        &["explain-events", "x"],
        &["operate"],
        &["collect", "b"],
    ] {
        let args = [command, &["--request-timeout", "99999999999999999999h"]].concat();
        usage_error(
            &args,
            &format!("error: invalid value '99999999999999999999h' for '--request-timeout <DURATION>': {TOO_LONG}"),
        );
    }
}

/// Every other duration flag has the same range.
#[test]
fn every_duration_flag_stops_at_kubectls_maximum() {
    let healthy = fixture("bundles/healthy");
    let cases: [(&[&str], &str); 5] = [
        (&["status", "--bundle", &healthy, "--skew"], "--skew <DURATION>"),
        (
            &["status", "--bundle", &healthy, "-w", "--interval"],
            "--interval <DURATION>",
        ),
        (
            &["explain-events", "x", "--bundle", &healthy, "--event-ttl"],
            "--event-ttl <DURATION>",
        ),
        (
            &["explain-events", "x", "--bundle", &healthy, "--skew"],
            "--skew <DURATION>",
        ),
        (
            &["logs", "--handler", "accept", "--run-timeout"],
            "--run-timeout <DURATION>",
        ),
    ];
    for (args, flag) in cases {
        let args = [args, &["2562048h"]].concat();
        usage_error(
            &args,
            &format!("error: invalid value '2562048h' for '{flag}': {TOO_LONG}"),
        );
    }
}

/// The longest accepted `--since` reaches back before any log line: every run is shown, and the
/// subtraction from "now" does not overflow.
#[test]
fn the_longest_since_keeps_every_run() {
    let (_dir, kubeconfig) = unreachable();
    let file = fixture("kopf-1.38-real/ab-run1-create-update-shutdown.log");
    let base = [
        "logs",
        "--handler",
        "accept",
        "--local",
        "--log-file",
        &file,
        "-o",
        "json",
    ];
    let all = run(&base, &kubeconfig);
    let longest = run(
        &[&base[..], &["--since", "2562047h47m16.854775807s"]].concat(),
        &kubeconfig,
    );
    assert_eq!(
        longest.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&longest.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&longest.stdout).lines().count(), 3);
    assert_eq!(longest.stdout, all.stdout);
}

/// A malformed duration names what was expected.
#[test]
fn a_malformed_duration_names_the_expected_shape() {
    usage_error(
        &["status", "--request-timeout", "1h30"],
        "error: invalid value '1h30' for '--request-timeout <DURATION>': expected a duration such as 10s, 1m, 1m30s, 500ms or 2h",
    );
}

/// `--tail` is the kubelet's `tailLines` (as `kubectl logs --tail`, -1 meaning all lines), never
/// below -1; `--log-lines` is its old name.
#[test]
fn a_tail_below_minus_one_is_a_usage_error() {
    usage_error(
        &["logs", "--handler", "accept", "--tail", "-2"],
        "error: invalid value '-2' for '--tail <LINES>': expected a number of lines ≥ 0 (at most 9223372036854775807), or -1 for all",
    );
    usage_error(
        &["logs", "--handler", "accept", "--log-lines", "99999999999999999999"],
        "error: invalid value '99999999999999999999' for '--tail <LINES>': expected a number of lines ≥ 0 (at most 9223372036854775807), or -1 for all",
    );
}

/// Was clap's `unexpected argument '-1' found / tip: use '-- -1'` (issue 14 item 5): a value
/// that starts with '-' is the flag's value, as kubectl's pflag takes it, and is refused naming
/// the flag, the value and what was expected. Every duration and number flag.
#[test]
fn negative_durations_and_numbers_are_the_flags_values_and_refused() {
    let duration = "expected a duration ≥ 0 such as 10s, 1m, 1m30s, 500ms or 2h";
    let cases: &[(&[&str], &str, &str)] = &[
        (
            &["status", "--request-timeout", "-1s"],
            "--request-timeout <DURATION>",
            duration,
        ),
        (
            &["--request-timeout", "-1s", "status"],
            "--request-timeout <DURATION>",
            duration,
        ),
        (
            &["operate", "--request-timeout", "-1s"],
            "--request-timeout <DURATION>",
            duration,
        ),
        (&["status", "--skew", "-5s"], "--skew <DURATION>", duration),
        (
            &["status", "-w", "--interval", "-1s"],
            "--interval <DURATION>",
            duration,
        ),
        (&["explain-events", "x", "--skew", "-5s"], "--skew <DURATION>", duration),
        (
            &["explain-events", "x", "--event-ttl", "-1h"],
            "--event-ttl <DURATION>",
            duration,
        ),
        (
            &["logs", "--handler", "accept", "--since", "-1h"],
            "--since <DURATION>",
            duration,
        ),
        (
            &["logs", "--handler", "accept", "--run-timeout", "-1m"],
            "--run-timeout <DURATION>",
            duration,
        ),
        (
            &["logs", "--handler", "accept", "--last", "-1"],
            "--last <RUNS>",
            "expected a number of runs ≥ 1",
        ),
        (
            &["operate", "--max-concurrent", "-1"],
            "--max-concurrent <N>",
            "expected a whole number from 1 to 65535",
        ),
        (
            &["operate", "--max-concurrent", "0"],
            "--max-concurrent <N>",
            "expected a whole number from 1 to 65535",
        ),
    ];
    for (args, flag, expected) in cases {
        let value = args[args.iter().position(|a| flag.starts_with(a)).unwrap() + 1];
        usage_error(
            args,
            &format!("error: invalid value '{value}' for '{flag}': {expected}"),
        );
    }
    // -1 is `--tail`'s "all lines", as kubectl's.
    let (_dir, kubeconfig) = unreachable();
    let out = run(&["logs", "--handler", "accept", "--tail", "-1"], &kubeconfig);
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
}

/// `--last 0` printed "No run ... in these logs" and then "Handler accept ran ...: last run
/// started at ..." (issue 14 item 6): a count of runs is 1 or more.
#[test]
fn last_zero_is_a_usage_error() {
    let file = fixture("kopf-1.38-real/ab-run1-create-update-shutdown.log");
    usage_error(
        &[
            "logs",
            "--handler",
            "accept",
            "--local",
            "--log-file",
            &file,
            "--last",
            "0",
        ],
        "error: invalid value '0' for '--last <RUNS>': expected a number of runs ≥ 1",
    );
}

const FORMS: &str = "expected NAME, TYPE/NAME (TYPE: ms, microservice, microservices or microservices.platform.example.io) or NAMESPACE/NAME";
const LABEL: &str =
    "a DNS-1123 label: at most 63 lowercase letters, digits or '-', starting and ending with a letter or digit";
const SUBDOMAIN: &str = "a DNS-1123 subdomain: at most 253 lowercase letters, digits, '-' or '.', each '.'-separated part starting and ending with a letter or digit";

/// Was a raw 404 or `invalid uri character` from the API server (exit 3).
#[test]
fn explain_events_names_that_are_not_kubernetes_names_are_usage_errors() {
    for name in ["a b", "", "UPPER"] {
        usage_error(
            &["explain-events", name],
            &format!(
                "error: invalid value '{name}' for '<NAME>': {FORMS}: {name:?} is not a Microservice name ({SUBDOMAIN})"
            ),
        );
    }
}

/// `status NAME`, `explain-events NAME` and `logs OBJECT` take NAME, TYPE/NAME or
/// NAMESPACE/NAME; the part at fault is named.
#[test]
fn object_names_with_or_without_namespace_are_checked() {
    let cases = [
        (&["status"][..], "[NAME]"),
        (&["explain-events"][..], "<NAME>"),
        (&["logs", "--handler", "accept"][..], "[OBJECT]"),
    ];
    for (command, shown) in cases {
        usage_error(
            &[command, &["../../etc"]].concat(),
            &format!("error: invalid value '../../etc' for '{shown}': {FORMS}: \"..\" is not a Microservice type"),
        );
        usage_error(
            &[command, &["UPPER"]].concat(),
            &format!(
                "error: invalid value 'UPPER' for '{shown}': {FORMS}: \"UPPER\" is not a Microservice name ({SUBDOMAIN})"
            ),
        );
        usage_error(
            &[command, &["Todo/api"]].concat(),
            &format!(
                "error: invalid value 'Todo/api' for '{shown}': {FORMS}: \"Todo\" is not a namespace name ({LABEL})"
            ),
        );
    }
}

/// `-n` is a namespace name in every subcommand that takes it, before or after the subcommand,
/// each comma-separated part on its own.
#[test]
fn namespaces_are_checked_in_every_subcommand() {
    let commands: [&[&str]; 6] = [
        &["status"],
        &["logs", "--handler", "accept"],
        &["explain-events", "x"],
        &["collect", "bundle"],
        &["operate"],
        &["manifests", "-A"],
    ];
    for command in commands {
        for bad in ["a b", "", "UPPER", "../../etc", "x.y"] {
            let want =
                format!("error: invalid value '{bad}' for '--namespace <NS>': expected a namespace name ({LABEL})");
            usage_error(&[command, &["-n", bad]].concat(), &want);
            usage_error(&[&["-n", bad][..], command].concat(), &want);
        }
        usage_error(
            &[command, &["-n", "ok,Not_Ok"]].concat(),
            &format!("error: invalid value 'Not_Ok' for '--namespace <NS>': expected a namespace name ({LABEL})"),
        );
    }
}

/// `--operator NS/deployment/NAME`: its shape and both names, wherever it is taken.
#[test]
fn operator_references_are_checked() {
    let commands: [&[&str]; 4] = [
        &["status"],
        &["logs", "--handler", "accept"],
        &["explain-events", "x"],
        &["collect", "bundle"],
    ];
    let flag = "--operator <NS/deployment/NAME>";
    for command in commands {
        usage_error(
            &[command, &["--operator", "ops/op"]].concat(),
            &format!("error: invalid value 'ops/op' for '{flag}': expected NAMESPACE/deployment/NAME"),
        );
        usage_error(
            &[command, &["--operator", "../deployment/op"]].concat(),
            &format!(
                "error: invalid value '../deployment/op' for '{flag}': expected NAMESPACE/deployment/NAME: \"..\" is not a namespace name ({LABEL})"
            ),
        );
        usage_error(
            &[command, &["--operator", "ops/deployment/Op"]].concat(),
            &format!(
                "error: invalid value 'ops/deployment/Op' for '{flag}': expected NAMESPACE/deployment/NAME: \"Op\" is not a Deployment name ({SUBDOMAIN})"
            ),
        );
    }
}

/// `logs -c` is a container name (a DNS-1123 label).
#[test]
fn container_names_are_checked() {
    for bad in ["app.v2", "a b", "", "App"] {
        usage_error(
            &["logs", "--handler", "accept", "-c", bad],
            &format!("error: invalid value '{bad}' for '--container <NAME>': expected a container name ({LABEL})"),
        );
    }
}
