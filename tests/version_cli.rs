//! `version` through the binary: the client part always, the cluster part when it answers, an
//! unreachable cluster as one note on stderr with exit 0, and usage errors as everywhere.

use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;

#[path = "support/kubeconfig.rs"]
mod kubeconfig;

const BIN: &str = env!("CARGO_BIN_EXE_kubectl-microservice");
const VERSION: &str = env!("CARGO_PKG_VERSION");

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

fn client_line(stdout: &str) -> &str {
    stdout.lines().next().unwrap_or_default()
}

#[test]
fn client_only_prints_the_version_and_commit() {
    let out = run(&["version", "--client"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    let line = client_line(&stdout);
    assert!(
        line.starts_with(&format!("Client Version: {VERSION} (commit ")),
        "{line}"
    );
    // The same commit as --version.
    let flag = String::from_utf8(run(&["--version"]).stdout).unwrap();
    assert_eq!(
        flag.trim(),
        format!("kubectl-microservice {}", line.trim_start_matches("Client Version: "))
    );

    let out = run(&["version", "--client", "-o", "json"]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["schemaVersion"], 1);
    assert_eq!(doc["clientVersion"]["version"], VERSION);
    assert!(
        doc.get("operators").is_none() && doc.get("clusterError").is_none(),
        "{doc}"
    );
    let out = run(&["version", "--client", "-o", "jsonpath={.clientVersion.version}"]);
    assert_eq!(String::from_utf8(out.stdout).unwrap(), VERSION);
}

#[test]
fn an_unreachable_cluster_is_one_note_and_exit_0() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = kubeconfig::write(dir.path(), "https://127.0.0.1:1");
    let kubeconfig = kubeconfig.to_str().unwrap();
    let start = Instant::now();
    let out = run(&["version", "--kubeconfig", kubeconfig]);
    assert!(start.elapsed() < Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert!(client_line(&stdout).starts_with("Client Version: "));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(
            "note: operators not shown: cannot reach the API server https://127.0.0.1:1/ (context down): "
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("ServiceError"), "{stderr}");

    let out = run(&["version", "--kubeconfig", kubeconfig, "-o", "json"]);
    assert_eq!(out.status.code(), Some(0));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc.get("operators").is_none(), "{doc}");
    assert!(
        doc["clusterError"]
            .as_str()
            .unwrap()
            .contains("cannot reach the API server"),
        "{doc}"
    );
}

#[test]
fn usage_errors_exit_2() {
    let out = run(&["version", "--kubeconfig", "/no/such/kubeconfig"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("/no/such/kubeconfig"));
    for format in ["name", "wide"] {
        let out = run(&["version", "--client", "-o", format]);
        assert_eq!(out.status.code(), Some(2), "{format}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(&format!(
                "version prints versions, not objects: -o {format} has no meaning"
            )),
            "{stderr}"
        );
    }
}

/// The shared flags `version` does not take are refused, before or after it, naming it (as every
/// subcommand does; `src/cli/scope.rs`), not accepted silently.
#[test]
fn shared_flags_that_do_not_apply_are_refused() {
    for (line, flag) in [
        (&["version", "--client", "-l", "app=x"][..], "-l/--selector"),
        (&["-l", "app=x", "version", "--client"], "-l/--selector"),
        (&["version", "--client", "-A"], "-A/--all-namespaces"),
        (&["version", "--client", "--no-headers"], "--no-headers"),
    ] {
        let out = run(line);
        assert_eq!(out.status.code(), Some(2), "{line:?}");
        assert!(out.stdout.is_empty(), "{line:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(&format!("{flag} does not apply to version")),
            "{line:?}: {stderr}"
        );
    }
    // Taken: -n (where to look when listing cluster-wide is forbidden) and the connection flags.
    let out = run(&["version", "--client", "-n", "ops", "--context", "nowhere"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}
