//! `status` against a cluster that cannot be reached: one line naming the server and the
//! context, exit 3, within the request timeout.

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
    let start = Instant::now();
    let out = Command::new(BIN)
        .args(["status", "--request-timeout", "3s", "--kubeconfig"])
        .arg(&kubeconfig)
        .output()
        .unwrap();
    assert!(start.elapsed() < Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(
        errors[0].contains("https://127.0.0.1:1") && errors[0].contains("context down"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn a_missing_kubeconfig_is_a_usage_error() {
    let out = Command::new(BIN)
        .args(["status", "--kubeconfig", "/no/such/kubeconfig"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/no/such/kubeconfig"));
}
