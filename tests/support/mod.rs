//! Helpers shared by the bundle tests: the fixtures folder, copying a bundle to derive one, the
//! global flags with colour off, and pinned snapshots (`UPDATE_SNAPSHOTS=1` rewrites them).

use std::fs;
use std::path::{Path, PathBuf};

use kubectl_microservice::cli::GlobalArgs;
use kubectl_microservice::render::{ColorChoice, OutputFormat};

/// tests/fixtures.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Copies a directory tree.
pub fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Global flags with `-o` set and colour off.
pub fn global(output: Option<OutputFormat>) -> GlobalArgs {
    GlobalArgs {
        kubeconfig: None,
        context: None,
        namespaces: vec![],
        all_namespaces: false,
        output,
        allow_missing_template_keys: true,
        selector: None,
        no_headers: false,
        as_user: None,
        as_groups: vec![],
        request_timeout: None,
        color: ColorChoice::Never,
    }
}

/// Compares `actual` with tests/snapshots/NAME (rewrites it with `UPDATE_SNAPSHOTS=1`).
pub fn check_snapshot(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots").join(name);
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        fs::write(&path, actual).unwrap();
    }
    let expected =
        fs::read_to_string(&path).unwrap_or_else(|_| panic!("missing snapshot {name}; run with UPDATE_SNAPSHOTS=1"));
    assert_eq!(actual, expected, "snapshot {name} differs");
}
