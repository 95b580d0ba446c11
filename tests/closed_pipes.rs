//! Every command's exit code survives closed output pipes.
//!
//! `kubectl microservice explain-events x 2>&1 | head -1`, or a `tee` that a Ctrl-C ended first,
//! leaves the plugin writing to a pipe nobody reads. `println!`/`eprintln!` panic there (exit 101
//! and a backtrace note), replacing the answer's exit code — the one thing a script can still
//! read. Here each command runs with stdout and stderr on a pipe whose reading end is already
//! closed, and must exit with the code it gives when its output is read.

use std::path::Path;
use std::process::{Command, Stdio};

#[allow(dead_code)] // this file uses fixtures() only
mod support;

/// Runs the plugin with `args`; with `closed`, stdout and stderr are the writing ends of pipes
/// whose reading ends are dropped before the child starts. Returns the exit code (None: killed
/// by a signal — SIGPIPE is ignored by the Rust runtime, so a write fails with EPIPE instead).
fn exit_code(args: &[&str], closed: bool) -> Option<i32> {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kubectl-microservice"));
    command
        .args(args)
        .env("NO_COLOR", "1")
        .env("KUBECONFIG", "/nonexistent/kubeconfig")
        .stdin(Stdio::null());
    if closed {
        let (out_reader, out_writer) = std::io::pipe().expect("pipe");
        let (err_reader, err_writer) = std::io::pipe().expect("pipe");
        drop(out_reader);
        drop(err_reader);
        command.stdout(out_writer).stderr(err_writer);
    } else {
        command.stdout(Stdio::null()).stderr(Stdio::null());
    }
    command.status().expect("run the plugin").code()
}

fn bundle(name: &str) -> String {
    let dir = support::fixtures().join("bundles-captured").join(name);
    assert!(Path::new(&dir).is_dir(), "{} is a bundle", dir.display());
    dir.display().to_string()
}

/// The cases: answers with problems (exit 1), a clean one (exit 0), an error (a bundle that is
/// not there) and a usage error (exit 2), each printing on stdout and stderr.
fn cases() -> Vec<Vec<String>> {
    let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let pull = bundle("kopf-image-pull-failing");
    let terminating = bundle("kopf-finalizer-terminating");
    let healthy = bundle("s11-kopf-healthy");
    vec![
        owned(&["explain-events", "--bundle", &pull, "pull-api"]),
        owned(&["explain-events", "--bundle", &terminating, "--all"]),
        owned(&["status", "--bundle", &pull]),
        owned(&["status", "--bundle", &healthy]),
        owned(&["status", "--bundle", &pull, "-o", "json"]),
        owned(&["logs", "--bundle", &pull, "--handler", "accept", "pull-api"]),
        owned(&["status", "--bundle", "/nonexistent/bundle"]),
        owned(&["status", "--no-such-flag"]),
        owned(&["no-such-command"]),
        owned(&["version", "--client"]),
    ]
}

#[test]
fn every_command_exits_with_its_own_code_when_its_output_pipes_are_closed() {
    for args in cases() {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let read = exit_code(&args, false);
        let closed = exit_code(&args, true);
        assert_ne!(read, Some(101), "{args:?} panicked with its output read");
        assert_eq!(
            closed, read,
            "{args:?}: exit code with closed pipes differs from the code with output read"
        );
    }
}

#[test]
fn the_cases_cover_answers_errors_and_usage() {
    let codes: Vec<Option<i32>> = cases()
        .iter()
        .map(|args| {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            exit_code(&args, false)
        })
        .collect();
    for wanted in [0, 1, 2] {
        assert!(codes.contains(&Some(wanted)), "no case exits {wanted}: {codes:?}");
    }
}
