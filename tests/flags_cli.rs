//! Which flags each subcommand takes, as a user meets them: `--help` lists only those, with
//! Examples; a shared flag that does not apply is refused (exit 2, naming the subcommand)
//! before or after the subcommand; `-A` beats `-n`, as in kubectl; flags that need or exclude
//! another are refused. The cluster is unreachable (loopback port 1), so anything that got past
//! the checks would exit 3 instead.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

#[path = "support/kubeconfig.rs"]
mod kubeconfig;

const BIN: &str = env!("CARGO_BIN_EXE_kubectl-microservice");

fn fixture(rel: &str) -> String {
    format!("{}/tests/fixtures/{rel}", env!("CARGO_MANIFEST_DIR"))
}

fn unreachable() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = kubeconfig::write(dir.path(), "https://127.0.0.1:1");
    (dir, path)
}

fn run(args: &[&str], kubeconfig: &Path) -> Output {
    Command::new(BIN)
        .args(args)
        .env("KUBECONFIG", kubeconfig)
        .env("NO_COLOR", "1")
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
}

fn help(args: &[&str]) -> String {
    let (_dir, kubeconfig) = unreachable();
    let out = run(args, &kubeconfig);
    assert_eq!(out.status.code(), Some(0), "{args:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn explain_events_refuses_o_wide() {
    usage_error(
        &["explain-events", "todo-api", "-o", "wide"],
        "error: explain-events prints findings about one Microservice, not a list of objects: -o wide has no meaning here; -o takes json, yaml, jsonpath=TEMPLATE or jsonpath-as-json=TEMPLATE, e.g. -o jsonpath='{.findings[*].id}'",
    );
}

#[test]
fn collect_refuses_o_json_before_or_after_it() {
    let first = "error: -o/--output does not apply to collect: it writes a bundle directory (JSON files and logs), not a listing";
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("bundle");
    let target = target.to_str().unwrap();
    usage_error(&["collect", target, "-o", "json"], first);
    usage_error(&["-o", "json", "collect", target], first);
    assert!(!Path::new(target).exists());
}

#[test]
fn status_name_refuses_o_wide() {
    usage_error(
        &["status", "todo-api", "-o", "wide"],
        "error: -o wide widens the table; status todo-api explains one Microservice in sentences (-o json|yaml give its item)",
    );
}

#[test]
fn completion_refuses_o_json_and_kubeconfig() {
    let why = "it prints a shell script; it reads no cluster and prints no objects";
    usage_error(
        &["completion", "bash", "-o", "json"],
        &format!("error: -o/--output does not apply to completion: {why}"),
    );
    usage_error(
        &["completion", "bash", "--kubeconfig", "x"],
        &format!("error: --kubeconfig does not apply to completion: {why}"),
    );
    usage_error(
        &["--kubeconfig", "x", "completion", "bash"],
        &format!("error: --kubeconfig does not apply to completion: {why}"),
    );
}

/// Every (subcommand, shared flag) pair a subcommand does not take, each side of it.
#[test]
fn every_shared_flag_a_subcommand_does_not_take_is_refused() {
    let healthy = fixture("bundles/healthy");
    let cases: [(&[&str], &[&str], &str); 14] = [
        (&["operate"], &["-o", "json"], "-o/--output"),
        (&["operate"], &["--no-headers"], "--no-headers"),
        (&["operate"], &["--color", "never"], "--color"),
        (&["operate"], &["-l", "app=x"], "-l/--selector"),
        (&["logs", "--handler", "accept"], &["-A"], "-A/--all-namespaces"),
        (&["logs", "--handler", "accept"], &["--no-headers"], "--no-headers"),
        (&["logs", "--handler", "accept"], &["-l", "app=x"], "-l/--selector"),
        (
            &["explain-events", "x", "--bundle", &healthy],
            &["-A"],
            "-A/--all-namespaces",
        ),
        (&["explain-events", "x"], &["--no-headers"], "--no-headers"),
        (&["explain-events", "x"], &["-l", "app=x"], "-l/--selector"),
        (&["collect", "b"], &["--no-headers"], "--no-headers"),
        (&["collect", "b"], &["--color", "always"], "--color"),
        (&["manifests", "-n", "ops", "-A"], &["--no-headers"], "--no-headers"),
        (&["completion", "zsh"], &["-n", "x"], "-n/--namespace"),
    ];
    for (command, flag, shown) in cases {
        let name = command[0];
        for line in [[command, flag].concat(), [flag, command].concat()] {
            let (_dir, kubeconfig) = unreachable();
            let out = run(&line, &kubeconfig);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{line:?}: {stderr}");
            assert!(
                stderr.starts_with(&format!("error: {shown} does not apply to {name}: ")),
                "{line:?}: {stderr}"
            );
            assert!(
                stderr.contains(&format!("Usage: kubectl microservice {name}")),
                "{stderr}"
            );
        }
    }
}

/// `completion -h` lists no cluster or output flag; `operate -h` no -o or --no-headers; -n is
/// described for the subcommand at hand; every subcommand has Examples.
#[test]
fn help_lists_what_applies() {
    let completion = help(&["completion", "-h"]);
    for absent in ["--kubeconfig", "--all-namespaces", "--output", "--namespace", "--color"] {
        assert!(
            !completion.contains(absent),
            "completion -h shows {absent}:\n{completion}"
        );
    }
    let operate = help(&["operate", "-h"]);
    for absent in ["--output", "--no-headers", "--selector", "--color"] {
        assert!(!operate.contains(absent), "operate -h shows {absent}:\n{operate}");
    }
    assert!(
        operate.contains("Namespaces to watch: repeatable or comma-separated"),
        "{operate}"
    );
    for command in ["status", "logs", "explain-events", "collect", "manifests", "completion"] {
        let text = help(&[command, "-h"]);
        assert!(!text.contains("Repeatable"), "{command} -h: {text}");
        assert!(!text.contains("`manifests`"), "{command} -h: {text}");
    }
    for command in [
        "operate",
        "status",
        "logs",
        "explain-events",
        "collect",
        "manifests",
        "completion",
    ] {
        let text = help(&[command, "-h"]);
        assert!(
            text.contains("\nExamples:\n  # ") && text.contains("\n  kubectl microservice "),
            "{command} -h:\n{text}"
        );
    }
    let manifests = help(&["manifests", "-h"]);
    assert!(
        manifests.contains("The operator watches all namespaces (cluster-wide RBAC), instead of"),
        "{manifests}"
    );
    let status = help(&["status", "--help"]);
    for shown in [
        "--kubeconfig",
        "--all-namespaces",
        "--selector",
        "--no-headers",
        "--output",
        "--color",
    ] {
        assert!(status.contains(shown), "status --help lacks {shown}");
    }
}

/// `-A` beats `-n`, as kubectl's ("Namespace in current context is ignored even if specified
/// with --namespace").
#[test]
fn all_namespaces_beats_namespace() {
    let (_dir, kubeconfig) = unreachable();
    let healthy = fixture("bundles/healthy");
    let all = run(&["status", "--bundle", &healthy, "-A"], &kubeconfig);
    assert_eq!(all.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&all.stdout).contains("catalog-api"));
    for order in [&["-A", "-n", "elsewhere"][..], &["-n", "elsewhere", "-A"]] {
        let both = run(&[&["status", "--bundle", &healthy][..], order].concat(), &kubeconfig);
        assert_eq!(both.status.code(), Some(0), "{}", String::from_utf8_lossy(&both.stderr));
        assert_eq!(both.stdout, all.stdout, "{order:?}");
    }
    // Past the flag checks, to the cluster (unreachable: exit 3), not a usage error.
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("bundle");
    for command in [
        vec!["collect", target.to_str().unwrap(), "-A", "-n", "a"],
        vec!["operate", "--standalone", "-A", "-n", "a"],
        vec!["status", "-A", "-n", "a"],
    ] {
        let out = run(&command, &kubeconfig);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{command:?}: {stderr}");
        assert!(stderr.contains("cannot reach the API server"), "{command:?}: {stderr}");
    }
    // An explicit NS/NAME still contradicts -A.
    usage_error(
        &["status", "store/catalog-api", "--bundle", &healthy, "-A"],
        "error: store/catalog-api names namespace store; it contradicts -A (a NAMESPACE/NAME's first part is a namespace unless it is a Microservice type name: ms, microservice, ...)",
    );
    // manifests: -n is the operator's namespace, -A what it watches; they go together.
    let out = run(&["manifests", "-n", "ops", "-A"], &kubeconfig);
    assert_eq!(out.status.code(), Some(0));
    usage_error(
        &["manifests", "-n", "ops", "-A", "--watch-namespace", "todo"],
        "error: --watch-namespace and --all-namespaces exclude each other",
    );
}

/// Flags that need, or exclude, another: each refused with exit 2.
#[test]
fn flag_dependencies_are_refused() {
    let healthy = fixture("bundles/healthy");
    let file = fixture("kopf-1.38-real/ab-run1-create-update-shutdown.log");
    usage_error(
        &["status", "--interval", "5s"],
        "error: the following required arguments were not provided:",
    );
    usage_error(
        &[
            "logs",
            "--handler",
            "accept",
            "--previous",
            "--local",
            "--log-file",
            &file,
        ],
        "error: the argument '--previous' cannot be used with '--local'",
    );
    usage_error(
        &["logs", "--handler", "accept", "--previous", "--bundle", &healthy],
        "error: the argument '--previous' cannot be used with '--bundle <DIR>'",
    );
    usage_error(
        &["status", "--bundle", &healthy, "--context", "prod"],
        "error: --context does not apply to status --bundle: it reads no cluster",
    );
    usage_error(
        &[
            "--request-timeout",
            "5s",
            "explain-events",
            "catalog-api",
            "--bundle",
            &healthy,
        ],
        "error: --request-timeout does not apply to explain-events --bundle: it reads no cluster",
    );
    usage_error(
        &[
            "logs",
            "--handler",
            "accept",
            "--local",
            "--log-file",
            &file,
            "--kubeconfig",
            "/x",
        ],
        "error: --kubeconfig does not apply to logs --local: it reads no cluster",
    );
    usage_error(
        &["logs", "--handler", "accept", "--bundle", &healthy, "--as", "jane"],
        "error: --as does not apply to logs --bundle: it reads no cluster",
    );
    usage_error(
        &["status", "catalog-api", "--bundle", &healthy, "--no-headers"],
        "error: --no-headers applies to the table; status catalog-api explains one Microservice in sentences",
    );
    usage_error(
        &["status", "--bundle", &healthy, "-o", "json", "--no-headers"],
        "error: --no-headers applies to the table (default or -o wide), which this -o does not print",
    );
    usage_error(
        &["operate", "--standalone", "--lease-name", "x"],
        "error: the argument '--standalone' cannot be used with '--lease-name <NAME>'",
    );
}

/// No help text is a Rust doc comment leaking into clap's long help (issue 14 item 1: the root
/// `--help` began "Parse it with [`parse_from`] ..."): `-h`, `--help` and `help [SUB]` of the root
/// and of every subcommand hold no intra-doc link, no `crate::` path, no `Self`.
#[test]
fn no_help_shows_rust_doc_syntax() {
    let subcommands = [
        "operate",
        "status",
        "logs",
        "explain-events",
        "collect",
        "manifests",
        "completion",
        "version",
    ];
    let mut lines: Vec<Vec<&str>> = vec![vec!["-h"], vec!["--help"], vec!["help"]];
    for sub in subcommands {
        lines.push(vec![sub, "-h"]);
        lines.push(vec![sub, "--help"]);
        lines.push(vec!["help", sub]);
    }
    for args in lines {
        let text = help(&args);
        assert!(text.contains("Usage: kubectl microservice"), "{args:?}: {text}");
        for rust in ["[`", "`]", "crate::", "Self", "::command()", "](", "///"] {
            assert!(!text.contains(rust), "{args:?} shows {rust:?}:\n{text}");
        }
    }
    // The root's long help is its one-line about, then the subcommands.
    let root = help(&["--help"]);
    assert!(
        root.starts_with("Run the Microservice controller, and explain"),
        "{root}"
    );
}

/// Runs `args` with `KUBECONFIG=value` and HOME an empty directory (no ~/.kube/config).
fn run_with_kubeconfig_env(args: &[&str], value: &str) -> Output {
    let home = tempfile::tempdir().unwrap();
    Command::new(BIN)
        .args(args)
        .env("KUBECONFIG", value)
        .env("HOME", home.path())
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

/// Every subcommand that reads a cluster, with what it needs.
const CLUSTER_LINES: &[&[&str]] = &[
    &["status"],
    &["status", "todo-api", "-n", "todo"],
    &["logs", "--handler", "accept"],
    &["explain-events", "todo-api"],
    &["collect", "{DIR}"],
    &["operate"],
    &["version"],
];

fn with_dir<'a>(line: &[&'a str], dir: &'a str) -> Vec<&'a str> {
    line.iter().map(|w| if *w == "{DIR}" { dir } else { w }).collect()
}

/// `KUBECONFIG=/nonexist` was exit 3 with kube-client's chain ("failed to infer config:
/// in-cluster: (...), kubeconfig: (failed to read kubeconfig from '"/nonexist"' ...)") while
/// `--kubeconfig /nonexist` was exit 2 (issue 14 item 4). Now both are a usage error naming the
/// variable and the path, in every subcommand. A list skips its missing files, as kubectl's
/// loader does; a list none of whose files exists names each.
#[test]
fn a_missing_kubeconfig_in_kubeconfig_is_a_usage_error_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("nonexist");
    let missing2 = tmp.path().join("nonexist2");
    let (m, m2) = (missing.display().to_string(), missing2.display().to_string());
    let list = format!("{m}:{m2}");
    for line in CLUSTER_LINES {
        let bundle_dir = tmp.path().join("bundle");
        let args = with_dir(line, bundle_dir.to_str().unwrap());
        for (value, first) in [
            (
                m.clone(),
                format!("error: cannot read KUBECONFIG={m}: {m}: no such file"),
            ),
            (
                list.clone(),
                format!("error: cannot read KUBECONFIG={list}: none of its files exists ({m}, {m2})"),
            ),
        ] {
            let out = run_with_kubeconfig_env(&args, &value);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{args:?} {value}: {stderr}");
            assert!(
                out.stdout.is_empty(),
                "{args:?}: {}",
                String::from_utf8_lossy(&out.stdout)
            );
            assert_eq!(stderr.lines().next(), Some(first.as_str()), "{args:?}: {stderr}");
            assert!(!stderr.contains("infer"), "{args:?}: {stderr}");
        }
        assert!(!bundle_dir.exists(), "{args:?} wrote a bundle");
    }
    // A missing file beside a usable one is skipped: the usable one is used (the server refuses
    // connections: exit 3, naming it, not the missing file).
    let (_dir, usable) = unreachable();
    let out = run_with_kubeconfig_env(&["status"], &format!("{m}:{}", usable.display()));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("cannot reach the API server https://127.0.0.1:1"),
        "{stderr}"
    );
    assert!(!stderr.contains("nonexist"), "{stderr}");
    // A file that is no kubeconfig is named, in one line.
    let junk = tmp.path().join("junk");
    std::fs::write(&junk, "root:x:0:0:root:/root:/bin/bash\n").unwrap();
    let out = run_with_kubeconfig_env(&["status"], junk.to_str().unwrap());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "error: cannot read KUBECONFIG={}: {}: failed to parse kubeconfig YAML",
            junk.display(),
            junk.display()
        )),
        "{stderr}"
    );
}

/// No flag, no KUBECONFIG, no ~/.kube/config, not in a Pod: one sentence saying so (exit 3),
/// never kube-client's "failed to infer config" chain.
#[test]
fn no_kubeconfig_at_all_is_one_sentence() {
    let home = tempfile::tempdir().unwrap();
    for line in CLUSTER_LINES {
        let bundle_dir = home.path().join("bundle");
        let args = with_dir(line, bundle_dir.to_str().unwrap());
        let out = Command::new(BIN)
            .args(&args)
            .env_remove("KUBECONFIG")
            .env_remove("KUBERNETES_SERVICE_HOST")
            .env("HOME", home.path())
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        // `version` prints the client's version without a cluster, and notes why no operator.
        let (code, prefix) = if args == ["version"] {
            (0, "note: operators not shown")
        } else {
            (3, "error")
        };
        assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
        assert!(
            stderr.lines().any(|l| l
                == format!(
                    "{prefix}: no cluster configured: no --kubeconfig, KUBECONFIG is not set, {}/.kube/config does not exist, and not in a Pod (KUBERNETES_SERVICE_HOST is not set)",
                    home.path().display()
                )),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("infer"), "{args:?}: {stderr}");
    }
}

/// Each subcommand's `-o` refusal lists exactly what that subcommand accepts, and its `--help`
/// lists the same (issue 14 item 8: `manifests -o wide` listed "yaml, json, name or jsonpath"
/// while its help said "yaml or json"; `logs -o yaml` was refused while the docs listed yaml
/// for every subcommand). Every value of the list is accepted.
#[test]
fn each_o_refusal_and_help_list_what_the_subcommand_accepts() {
    let bundle = format!("{}/examples/healthy", env!("CARGO_MANIFEST_DIR"));
    let (_dir, kubeconfig) = unreachable();
    let cases: &[(&str, &[&str], &[&str], &str)] = &[
        // subcommand, its line, refused values, accepted list
        (
            "explain-events",
            &["explain-events", "catalog-api", "--bundle", &bundle],
            &["wide", "name"],
            "json, yaml, jsonpath=TEMPLATE or jsonpath-as-json=TEMPLATE",
        ),
        (
            "logs",
            &["logs", "--handler", "accept", "--bundle", &bundle],
            &["yaml", "wide", "name"],
            "json, jsonpath=TEMPLATE or jsonpath-as-json=TEMPLATE",
        ),
        (
            "manifests",
            &["manifests", "-n", "ops", "-A"],
            &["wide"],
            "yaml, json, name, jsonpath=TEMPLATE or jsonpath-as-json=TEMPLATE",
        ),
        (
            "version",
            &["version"],
            &["wide", "name"],
            "json, yaml, jsonpath=TEMPLATE or jsonpath-as-json=TEMPLATE",
        ),
        (
            "status",
            &["status", "--bundle", &bundle],
            &[],
            "json, yaml, wide, name, jsonpath=TEMPLATE or jsonpath-as-json=TEMPLATE",
        ),
    ];
    for (sub, line, refused, list) in cases {
        let text = help(&[sub, "--help"]).split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(text.contains(&format!("Output format: {list}")), "{sub} --help: {text}");
        for value in *refused {
            let out = run(&[line, &["-o", value][..]].concat(), &kubeconfig);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{sub} -o {value}: {stderr}");
            assert!(stderr.contains(list), "{sub} -o {value}: {stderr}");
        }
        for value in list.split([',', ' ']).filter(|w| !w.is_empty() && *w != "or") {
            let value = value.replace("TEMPLATE", "{.a}");
            let out = run(&[line, &["-o", &value][..]].concat(), &kubeconfig);
            let stderr = String::from_utf8_lossy(&out.stderr);
            // version reaches for the (unreachable) cluster only for its note: exit 0.
            assert_eq!(out.status.code(), Some(0), "{sub} -o {value}: {stderr}");
        }
    }
}
