//! `completions/` holds exactly what `kubectl microservice completion SHELL` prints today.
//!
//! Regenerate after a CLI change with:
//! `KMS_UPDATE_COMPLETIONS=1 cargo test --test completions`

use std::path::Path;
use std::process::Command;

use kubectl_microservice::cli::CompletionShell;
use kubectl_microservice::commands::completion;

const BIN: &str = env!("CARGO_BIN_EXE_kubectl-microservice");

/// `(argument of completion, file under completions/)`, as `commands::completion::file_name` names them.
const SCRIPTS: [(&str, &str); 6] = [
    ("bash", "kubectl-microservice.bash"),
    ("zsh", "_kubectl-microservice"),
    ("fish", "kubectl-microservice.fish"),
    ("powershell", "_kubectl-microservice.ps1"),
    ("elvish", "kubectl-microservice.elv"),
    ("kubectl", "kubectl_complete-microservice"),
];

#[test]
fn completions_dir_is_up_to_date() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("completions");
    let update = std::env::var_os("KMS_UPDATE_COMPLETIONS").is_some_and(|v| !v.is_empty());
    let mut stale = Vec::new();
    for (shell, file) in SCRIPTS {
        let value = <CompletionShell as clap::ValueEnum>::from_str(shell, false).unwrap();
        assert_eq!(completion::file_name(value), file);
        let output = Command::new(BIN).args(["completion", shell]).output().unwrap();
        assert!(output.status.success(), "completion {shell}: {output:?}");
        let generated = String::from_utf8(output.stdout).unwrap();
        let path = dir.join(file);
        if update {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &generated).unwrap();
            if shell == "kubectl" {
                make_executable(&path);
            }
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(checked_in) if checked_in == generated => {}
            Ok(_) => stale.push(format!("{} differs from `completion {shell}`", path.display())),
            Err(e) => stale.push(format!("{}: {e}", path.display())),
        }
    }
    assert!(
        stale.is_empty(),
        "completions/ is out of date:\n  {}\nregenerate with: KMS_UPDATE_COMPLETIONS=1 cargo test --test completions",
        stale.join("\n  ")
    );
    let mut expected: Vec<&str> = SCRIPTS.iter().map(|(_, f)| *f).collect();
    let mut present: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    expected.sort();
    present.sort();
    assert_eq!(present, expected, "completions/ holds files no command generates");
}

/// kubectl only runs `kubectl_complete-microservice` when it is executable.
#[cfg(unix)]
#[test]
fn the_kubectl_helper_is_executable() {
    use std::os::unix::fs::PermissionsExt;
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("completions/kubectl_complete-microservice");
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o111, 0o111, "{} has mode {mode:o}", path.display());
}

#[cfg(unix)]
fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[cfg(not(unix))]
fn make_executable(_: &Path) {}
