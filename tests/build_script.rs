//! `build.rs`'s watched git files, in the checkouts cargo builds in: a repository, a linked
//! worktree (whose `.git` is a file), a detached `HEAD`, a packed branch, and no git at all. A
//! watched path that does not exist makes cargo rerun the build script, and so rebuild the
//! crate, on every build: every path must exist, and a commit must change one of them.

use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "../build.rs"]
#[allow(dead_code)]
mod build_script;

/// `git ARGS` in `dir`, with no user or system configuration; its stdout, or a panic.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

fn canonical(paths: Vec<PathBuf>) -> Vec<PathBuf> {
    paths.into_iter().map(|p| p.canonicalize().unwrap()).collect()
}

/// A repository with one commit on `main` in `root/repo`.
fn repository(root: &Path) -> PathBuf {
    let repo = root.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q"]);
    std::fs::write(repo.join("f"), "1").unwrap();
    git(&repo, &["add", "f"]);
    git(&repo, &["commit", "-qm", "one"]);
    repo
}

#[test]
fn a_repository_watches_head_and_its_branch_ref() {
    let root = tempfile::tempdir().unwrap();
    let repo = repository(root.path());
    let git_dir = repo.join(".git").canonicalize().unwrap();
    assert_eq!(
        canonical(build_script::watched_paths(&repo)),
        vec![git_dir.join("HEAD"), git_dir.join("refs/heads/main")]
    );
    // From a subfolder (a crate inside the repository) the same files.
    std::fs::create_dir_all(repo.join("sub")).unwrap();
    assert_eq!(
        canonical(build_script::watched_paths(&repo.join("sub"))),
        vec![git_dir.join("HEAD"), git_dir.join("refs/heads/main")]
    );
}

#[test]
fn a_linked_worktree_watches_its_own_head_and_the_common_ref() {
    let root = tempfile::tempdir().unwrap();
    let repo = repository(root.path());
    let tree = root.path().join("tree");
    git(&repo, &["worktree", "add", "-q", "-b", "topic", tree.to_str().unwrap()]);
    assert!(tree.join(".git").is_file(), "a linked worktree's .git is a file");
    let common = repo.join(".git").canonicalize().unwrap();
    let own = common.join("worktrees/tree");
    let watched = canonical(build_script::watched_paths(&tree));
    assert_eq!(watched, vec![own.join("HEAD"), common.join("refs/heads/topic")]);

    // A commit there rewrites the watched ref.
    let before = std::fs::read_to_string(common.join("refs/heads/topic")).unwrap();
    std::fs::write(tree.join("f"), "2").unwrap();
    git(&tree, &["commit", "-qam", "two"]);
    let after = std::fs::read_to_string(common.join("refs/heads/topic")).unwrap();
    assert_ne!(before, after);

    // Detached: HEAD itself holds the commit, and no branch ref is watched.
    git(&tree, &["checkout", "-q", "--detach"]);
    assert_eq!(canonical(build_script::watched_paths(&tree)), vec![own.join("HEAD")]);
}

#[test]
fn a_packed_branch_watches_packed_refs_and_the_folder_its_loose_ref_goes_to() {
    let root = tempfile::tempdir().unwrap();
    let repo = repository(root.path());
    git(&repo, &["pack-refs", "--all"]);
    let git_dir = repo.join(".git").canonicalize().unwrap();
    assert!(!git_dir.join("refs/heads/main").exists());
    assert_eq!(
        canonical(build_script::watched_paths(&repo)),
        vec![
            git_dir.join("HEAD"),
            git_dir.join("refs/heads"),
            git_dir.join("packed-refs")
        ]
    );
    // The next commit writes the loose ref into that folder.
    std::fs::write(repo.join("f"), "2").unwrap();
    git(&repo, &["commit", "-qam", "two"]);
    assert_eq!(
        canonical(build_script::watched_paths(&repo)),
        vec![
            git_dir.join("HEAD"),
            git_dir.join("refs/heads/main"),
            git_dir.join("packed-refs")
        ]
    );
}

#[test]
fn outside_git_nothing_is_watched() {
    let root = tempfile::tempdir().unwrap();
    let inside_a_repository = Command::new("git")
        .arg("-C")
        .arg(root.path())
        .args(["rev-parse", "--git-dir"])
        .output()
        .is_ok_and(|o| o.status.success());
    if inside_a_repository {
        eprintln!(
            "skipped: the temporary folder {} is inside a git repository",
            root.path().display()
        );
        return;
    }
    assert_eq!(build_script::watched_paths(root.path()), Vec::<PathBuf>::new());
}
