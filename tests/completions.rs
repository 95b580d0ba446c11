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

/// What bash offers for `words` (the last one is being completed) with the script of
/// `completion bash` loaded and nothing else: plain `complete -F`, no bash-completion package.
/// The function is the one the script registers for `kubectl-microservice`, called as bash
/// calls it (command, current word, previous word; COMP_WORDS/COMP_CWORD set).
fn bash_completes(words: &[&str]) -> Vec<String> {
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let program = format!(
        r#"source <("$KMS_BIN" completion bash) || exit 9
spec=$(complete -p kubectl-microservice) || exit 8
fn=${{spec#*-F }}; fn=${{fn%% *}}
COMP_WORDS=(kubectl-microservice {words})
COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
COMP_LINE="${{COMP_WORDS[*]}}"; COMP_POINT=${{#COMP_LINE}}
"$fn" kubectl-microservice "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}" 2>/dev/null
printf '%s\n' "${{COMPREPLY[@]}}""#,
        words = quoted.join(" ")
    );
    let output = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &program])
        .env("KMS_BIN", BIN)
        .output()
        .expect("bash runs");
    assert!(output.status.success(), "bash: {output:?}");
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

/// The bare binary's bash completion completes the flags of every subcommand and their fixed
/// values: clap_complete's labels for a hyphenated binary never matched (`cmd` was
/// `kubectl__microservice__subcmd__status`, the label `kubectl__subcmd__microservice__...`), so
/// `status --col<TAB>` gave nothing and `--color <TAB>` fell back to file names.
#[test]
fn bash_completes_flags_and_values_of_every_subcommand() {
    assert_eq!(bash_completes(&["status", "--col"]), ["--color"]);
    assert_eq!(bash_completes(&["status", "--color", ""]), ["auto", "always", "never"]);
    assert_eq!(bash_completes(&["operate", "--events", "w"]), ["warnings"]);
    assert_eq!(
        bash_completes(&["explain-events", "-o", ""]),
        ["json", "yaml", "wide", "name", "jsonpath=", "jsonpath-as-json="]
    );
    let mut root = kubectl_microservice::cli::command();
    root.build();
    for sc in root.get_subcommands().filter(|sc| sc.get_name() != "help") {
        let offered = bash_completes(&[sc.get_name(), "--"]);
        // Exactly the flags its --help lists: a shared flag it refuses (hidden) is not offered.
        for arg in sc.get_arguments() {
            if let Some(long) = arg.get_long() {
                let flag = format!("--{long}");
                assert_eq!(
                    offered.contains(&flag),
                    !arg.is_hide_set(),
                    "{} --<TAB> and {flag}: {offered:?}",
                    sc.get_name()
                );
            }
        }
        if offered.iter().any(|f| f == "--color") {
            assert_eq!(
                bash_completes(&[sc.get_name(), "--color", "a"]),
                ["auto", "always"],
                "{} --color a<TAB>",
                sc.get_name()
            );
        }
    }
    // Shared flags a subcommand does not take are not offered after it.
    let collect = bash_completes(&["collect", "--"]);
    assert!(!collect.contains(&"--output".to_string()) && collect.contains(&"--selector".to_string()));
    let completion = bash_completes(&["completion", "--"]);
    assert!(!completion.contains(&"--kubeconfig".to_string()), "{completion:?}");
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
