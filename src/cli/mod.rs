//! The command line: clap definitions with kubectl's habits.
//!
//! Shared flags (`--kubeconfig`, `--context`, `-n`, `-A`, `-o`, `-l`, `--no-headers`, `--as`,
//! `--as-group`, `--request-timeout`, `--color`) are accepted before or after the subcommand,
//! because kubectl passes its plugin everything after `microservice`: `kubectl microservice
//! --context prod status` and `kubectl microservice status --context prod` are the same. Each
//! subcommand's `--help` lists only the shared flags it takes, and a shared flag it does not
//! take is refused (exit 2, naming the subcommand): [`scope`] says which, and [`parse_from`]
//! enforces it.
//!
//! Every flag and every help text is here, one file per subcommand's flags; the subcommands'
//! code imports them, never the reverse.

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

pub mod collect;
pub mod completion;
pub mod explain_events;
pub mod global;
pub mod log_files;
pub mod logs;
pub mod manifests;
pub mod operate;
pub mod resource;
pub mod scope;
pub mod status;
pub mod values;
pub mod version;

pub use collect::CollectArgs;
pub use completion::{CompletionArgs, CompletionShell};
pub use explain_events::ExplainEventsArgs;
pub use global::{GlobalArgs, OutputFormatParser, namespace_in_context};
pub use log_files::LogFileArgs;
pub use logs::{LogsArgs, RunCause, RunOutcome};
pub use manifests::ManifestsArgs;
pub use operate::{EventsPolicy, LogFormat, OperateArgs};
pub use resource::ResourceArgs;
pub use status::StatusArgs;
pub use values::{
    MAX_DURATION, parse_concurrency, parse_count, parse_duration, parse_duration_at_least_1s, parse_runs,
    parse_tail_lines,
};
pub use version::VersionArgs;

/// `kubectl microservice`: the Microservice controller and its diagnostics.
///
/// Parse it with [`parse_from`], and get its definition with [`command`]: they scope the shared
/// flags to the subcommands that take them ([`scope`]); clap's own `Cli::try_parse_from` and
/// `Cli::command()` do not. This doc comment is for Rust readers: `long_about = None` keeps it
/// out of `--help`, which shows `about` (clap would otherwise print the whole comment as the
/// long help; `tests/flags_cli.rs` holds every `--help` free of Rust doc syntax).
#[derive(Debug, Parser)]
#[command(
    name = "kubectl-microservice",
    bin_name = "kubectl microservice",
    version = crate::VERSION_LINE,
    about = "Run the Microservice controller, and explain from the cluster's own evidence what happened to a Microservice.",
    long_about = None,
    after_help = "Shared flags go before or after the subcommand; each subcommand's --help lists the ones it takes.\nExit codes: 0 ok, 1 a problem was diagnosed, 2 usage error, 3 could not decide (cluster unreachable, not found, forbidden).",
    propagate_version = true
)]
pub struct Cli {
    /// Flags shared by the subcommands (each takes some of them).
    #[command(flatten)]
    pub global: GlobalArgs,

    /// The subcommand to run.
    #[command(subcommand)]
    pub command: Command,
}

/// Parses a command line (`args` starts with the program name), then refuses shared flags the
/// subcommand does not take ([`scope::check`]). Errors are clap's: exit 2 for usage errors,
/// 0 for `--help` and `--version`.
pub fn parse_from<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
    let mut command = command();
    if resource::given(&args) {
        command = resource::lenient_objects(command);
    }
    let matches = command.try_get_matches_from_mut(args)?;
    scope::check(&mut command, &matches)?;
    let mut cli = Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut command))?;
    // `--allow-missing-template-keys` applies to the template `-o` parsed.
    let allow = cli.global.allow_missing_template_keys;
    cli.global.output = cli.global.output.take().map(|o| o.allowing_missing_keys(allow));
    Ok(cli)
}

/// The command-line definition as parsed, shown by `--help` and walked by `__complete`: each
/// subcommand shows only the shared flags it takes ([`scope::scoped`]).
pub fn command() -> clap::Command {
    scope::scoped(Cli::command())
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the controller for Microservice objects (the `accept` handler).
    Operate(OperateArgs),
    /// Is Accepted still true for the spec each Microservice has now?
    Status(StatusArgs),
    /// Every run of a handler, with its cause and outcome, from the operator's logs.
    Logs(LogsArgs),
    /// Why is there no Warning event on a Microservice?
    ExplainEvents(ExplainEventsArgs),
    /// Write an evidence bundle (a directory of `kubectl get -o json` outputs and logs).
    Collect(CollectArgs),
    /// Print the manifests that install the CRD, RBAC and the operator Deployment.
    Manifests(ManifestsArgs),
    /// Print a shell completion script.
    #[command(after_long_help = completion::INSTALL_HELP)]
    Completion(CompletionArgs),
    /// Print the client's version and, from the cluster, its operators' versions.
    Version(VersionArgs),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    /// Every `kubectl microservice ...` line of every subcommand's Examples parses (up to a
    /// pipe or a redirection), so the examples stay true to the flags.
    #[test]
    fn every_example_parses() {
        let root = command();
        let mut seen = 0;
        for sub in root.get_subcommands() {
            let help = sub.get_after_help().map(|h| h.to_string()).unwrap_or_default();
            assert!(help.starts_with("Examples:\n"), "{} has no Examples", sub.get_name());
            for line in help
                .lines()
                .filter_map(|l| l.trim().strip_prefix("kubectl microservice "))
            {
                let words: Vec<&str> = line.split(['|', '>']).next().unwrap().split_whitespace().collect();
                let parsed = parse_from(std::iter::once("kubectl-microservice").chain(words.iter().copied()));
                assert!(parsed.is_ok(), "{line}: {}", parsed.unwrap_err());
                seen += 1;
            }
        }
        assert!(seen >= 14, "{seen}");
    }
}
