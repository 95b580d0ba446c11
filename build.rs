//! Records the git commit for `--version` (falls back to "unknown" outside a git checkout), and
//! tells cargo which git files to watch so that the commit is re-read after a commit or checkout,
//! and only then.
//!
//! The files are asked of git, not assumed: in a linked worktree `.git` is a file naming the
//! worktree's own git directory (which holds its `HEAD`), while branch refs live in the common
//! git directory, loose (`refs/heads/NAME`) or in `packed-refs`. A watched path that does not
//! exist makes cargo rerun the script on every build, so only existing paths are printed.
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let here = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_else(|| ".".into()));
    let commit = git(&here, &["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=KMS_GIT_COMMIT={commit}");
    let watched = watched_paths(&here);
    if watched.is_empty() {
        // Not a git checkout (a crate tarball, an export): nothing to watch but this script.
        println!("cargo:rerun-if-changed=build.rs");
    }
    for path in watched {
        println!("cargo:rerun-if-changed={}", path.display());
    }
}

/// The trimmed stdout of `git ARGS` run in `dir`, or `None` when git is missing, fails or prints
/// nothing.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// The files whose change means `HEAD` may name another commit, for the checkout around `dir`
/// (every one exists; empty outside git):
///
/// - `HEAD` of this worktree's git directory (`git rev-parse --absolute-git-dir`): a checkout,
///   or a commit on a detached `HEAD`;
/// - when `HEAD` is a branch (`git symbolic-ref HEAD`), its loose ref under the common git
///   directory (`git rev-parse --git-common-dir`), or, while it has none, the nearest existing
///   folder it would be written into (a commit on a packed branch writes it there);
/// - `packed-refs` of the common git directory, when there is one (`git pack-refs` moves the
///   branch there).
pub fn watched_paths(dir: &Path) -> Vec<PathBuf> {
    let Some(git_dir) = git(dir, &["rev-parse", "--absolute-git-dir"]).map(PathBuf::from) else {
        return Vec::new();
    };
    // Printed relative to `dir` unless it is elsewhere (a linked worktree prints it absolute).
    let common = git(dir, &["rev-parse", "--git-common-dir"])
        .map(|c| dir.join(c))
        .unwrap_or_else(|| git_dir.clone());
    let mut paths = vec![git_dir.join("HEAD")];
    if let Some(branch) = git(dir, &["symbolic-ref", "-q", "HEAD"]) {
        let loose = common.join(&branch);
        if loose.is_file() {
            paths.push(loose);
        } else if let Some(folder) = loose.ancestors().skip(1).find(|f| f.is_dir()) {
            paths.push(folder.to_path_buf());
        }
    }
    paths.push(common.join("packed-refs"));
    paths.retain(|p| p.exists());
    paths
}
