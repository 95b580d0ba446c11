//! `collect DIR` checks DIR before anything else: a DIR it cannot create, or one that is not
//! empty, is a usage error (exit 2) naming DIR, with no cluster call, no sensitive-data warning
//! and nothing written.

use std::fs;
use std::path::Path;
use std::process::Command;

#[path = "support/kubeconfig.rs"]
mod kubeconfig;

const BIN: &str = env!("CARGO_BIN_EXE_kubectl-microservice");

/// Runs `collect DIR` against a cluster that refuses connections (exit 3 if it were asked).
fn collect(dir: &Path, kubeconfig: &Path) -> (i32, String) {
    let out = Command::new(BIN)
        .arg("collect")
        .arg(dir)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .output()
        .unwrap();
    assert!(out.stdout.is_empty());
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn an_unusable_dir_is_refused_before_the_cluster_and_the_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let kubeconfig = kubeconfig::write(tmp.path(), "https://127.0.0.1:1");
    let file = tmp.path().join("a-file");
    fs::write(&file, "x").unwrap();
    let full = tmp.path().join("full");
    fs::create_dir(&full).unwrap();
    fs::write(full.join("keep.txt"), "x").unwrap();
    for (dir, needle) in [
        (file.join("bundle"), "cannot create the bundle there"),
        (file.clone(), "exists and is not a directory"),
        (full.clone(), "exists and is not empty"),
    ] {
        let (code, stderr) = collect(&dir, &kubeconfig);
        assert_eq!(code, 2, "{}: {stderr}", dir.display());
        assert!(
            stderr.contains(&format!("{}: {needle}", dir.display())),
            "{}: {stderr}",
            dir.display()
        );
        assert!(!stderr.contains("sensitive data"), "{stderr}");
    }
    assert_eq!(entries(tmp.path()), ["a-file", "config", "full"]);
    assert_eq!(entries(&full), ["keep.txt"]);

    // A directory without write permission (meaningless as root, who may write anyway).
    use std::os::unix::fs::PermissionsExt;
    let locked = tmp.path().join("locked");
    fs::create_dir(&locked).unwrap();
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o555)).unwrap();
    let root = fs::create_dir(locked.join("probe")).is_ok();
    if !root {
        let (code, stderr) = collect(&locked.join("bundle"), &kubeconfig);
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains("cannot create the bundle there"), "{stderr}");
        assert!(!stderr.contains("sensitive data"), "{stderr}");
        assert!(entries(&locked).is_empty());
    }
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o755)).unwrap();

    // A usable DIR passes the check and only then meets the cluster (refused: exit 3).
    let fresh = tmp.path().join("new/bundle");
    let (code, stderr) = collect(&fresh, &kubeconfig);
    assert_eq!(code, 3, "{stderr}");
    assert!(
        stderr.contains("cannot reach the API server https://127.0.0.1:1"),
        "{stderr}"
    );
    assert!(!stderr.contains("sensitive data"), "{stderr}");
    assert!(!tmp.path().join("new").exists(), "the check created something");
}
