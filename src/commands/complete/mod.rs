//! The hidden `__complete` subcommand: answers kubectl's plugin-completion protocol.
//!
//! kubectl (>= 1.26) completes `kubectl microservice <words> <TAB>` by running
//! `kubectl_complete-microservice <words> <current>` (see [`super::completion`]), which runs
//! `kubectl-microservice __complete <words> <current>`. The answer ([`protocol::render`]) is
//! one candidate per line, then `:<directive>`.
//!
//! Guarantees, because a shell is waiting: exit 0 always; nothing on stderr, ever (a panic
//! prints nothing either); cluster lookups end within [`BUDGET`] and never start an interactive
//! login. It is dispatched in `main` before clap parses the line, because the words are a
//! partial command line, not arguments of `__complete`.

pub mod engine;
pub mod live;
pub mod protocol;

use std::ffi::OsString;
use std::process::ExitCode;
use std::time::Duration;

use engine::CandidateSource;
use protocol::{Candidate, Directive};

/// The name of the hidden subcommand (cobra's `ShellCompRequestCmd`).
pub const SUBCOMMAND: &str = "__complete";

/// The longest a cluster lookup may take, connect included. With kubectl's start-up (about
/// 0.1 s) and ours (a few ms), an answer reaches the shell within one second, also when the
/// server never answers. An exec credential plugin slower than this (some cloud CLIs are) means
/// no names: completion prefers an empty answer in time to a late one.
pub const BUDGET: Duration = Duration::from_millis(600);

/// Runs `__complete` on `words` (the arguments after `__complete`) and prints the answer.
/// Always exit 0: kubectl discards the output of a completion helper that fails.
pub fn run(words: &[OsString]) -> ExitCode {
    std::panic::set_hook(Box::new(|_| {}));
    let words: Vec<String> = words.iter().map(|w| w.to_string_lossy().into_owned()).collect();
    let text = answer(&words, BUDGET);
    let _ = super::write_stdout(&text);
    ExitCode::SUCCESS
}

/// The rendered answer for `words`, cluster lookups bounded by `budget`.
pub fn answer(words: &[String], budget: Duration) -> String {
    let mut root = crate::cli::command();
    root.build();
    let request = engine::request(&root, words);
    let names = |lookup: fn(&crate::cli::GlobalArgs, &str, Duration) -> Vec<String>| match &request.global {
        Some(global) => lookup(global, &request.prefix, budget),
        None => Vec::new(),
    };
    let (candidates, directive) = match request.source {
        CandidateSource::Fixed { candidates, directive } => (candidates, directive),
        CandidateSource::MicroserviceNames => (plain(names(live::microservice_names)), Directive::NO_FILE_COMP),
        CandidateSource::Namespaces => (plain(names(live::namespaces)), Directive::NO_FILE_COMP),
        CandidateSource::ResourceTypes { bundle } => {
            let types = bundle
                .map(|dir| crate::evidence::target::kopf_handled_in_bundle(std::path::Path::new(&dir)))
                .unwrap_or_default();
            let types = types.into_iter().filter(|t| t.starts_with(&request.prefix)).collect();
            (plain(types), Directive::NO_FILE_COMP)
        }
        CandidateSource::Contexts => {
            let contexts = request
                .global
                .as_ref()
                .map(|g| live::contexts(g, &request.prefix))
                .unwrap_or_default();
            (plain(contexts), Directive::NO_FILE_COMP)
        }
    };
    protocol::render(&candidates, directive)
}

fn plain(names: Vec<String>) -> Vec<Candidate> {
    names.into_iter().map(|n| Candidate::new(n, None)).collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::cli::GlobalArgs;

    /// `GlobalArgs` as parsed from a line without flags.
    pub(crate) fn no_flags() -> GlobalArgs {
        crate::cli::parse_from(["kubectl-microservice", "manifests"])
            .unwrap()
            .global
    }

    #[test]
    fn static_answers_need_no_cluster() {
        let out = answer(&["operate".into(), "--log-format".into(), "".into()], BUDGET);
        assert!(out.starts_with("text\t"), "{out}");
        assert!(out.contains("\njson\t"), "{out}");
        assert!(out.ends_with("\n:4\n"), "{out}");
    }

    #[test]
    fn an_invalid_global_flag_means_no_lookup() {
        let words: Vec<String> = ["--kubeconfig", "/nonexistent", "--request-timeout", "ten", "status", ""]
            .iter()
            .map(|w| w.to_string())
            .collect();
        assert_eq!(answer(&words, BUDGET), ":4\n");
    }
}

#[test]
fn resource_values_are_the_bundles_kopf_handled_resources() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/kopf-examples-captured/03-1.38-created"
    );
    let words: Vec<String> = ["status", "--bundle", dir, "--resource", "kop"]
        .map(String::from)
        .to_vec();
    assert_eq!(answer(&words, BUDGET), "kopfexamples.kopf.dev\n:4\n");
}
