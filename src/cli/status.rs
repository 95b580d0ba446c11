//! The flags of `status`.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::log_files::LogFileArgs;
use super::values::{parse_duration, parse_duration_at_least_1s};

/// Flags of `status`.
#[derive(Debug, Clone, Args)]
#[command(after_help = concat!(
    "Examples:\n",
    "  # Is Accepted still true for each Microservice's spec in the current namespace?\n",
    "  kubectl microservice status\n",
    "\n",
    "  # Every namespace, more columns; exit 1 if any is stale, never handled or invalid\n",
    "  kubectl microservice status -A -o wide --exit-code\n",
    "\n",
    "  # One Microservice's verdict explained in sentences\n",
    "  kubectl microservice status todo-api -n todo\n",
    "\n",
    "  # Print a row whenever a verdict changes\n",
    "  kubectl microservice status -w\n",
    "\n",
    "  # From a bundle written by collect, as JSON\n",
    "  kubectl microservice status --bundle ./bundle -o json",
))]
pub struct StatusArgs {
    /// A Microservice: explain its verdict in sentences. NAME, TYPE/NAME as kubectl's (ms/NAME, or
    /// what -o name prints), or NAMESPACE/NAME when the first part is no Microservice type name.
    #[arg(value_name = "NAME", value_parser = crate::names::object_ref_arg)]
    pub name: Option<String>,

    /// Read evidence from a bundle directory instead of a cluster.
    #[arg(long, value_name = "DIR", value_hint = clap::ValueHint::DirPath)]
    pub bundle: Option<PathBuf>,

    /// Exit 1 when any shown object is stale, never-handled, invalid or terminating; without
    /// it `status` exits 0 whatever the verdicts, as `kubectl get` does (docs/contracts.md).
    #[arg(long)]
    pub exit_code: bool,

    /// After the table, print a row whenever an object's phase, generation or verdict changes.
    #[arg(short = 'w', long)]
    pub watch: bool,

    /// Poll interval of `--watch` (only with it).
    #[arg(long, requires = "watch", default_value = "2s", value_parser = parse_duration_at_least_1s, allow_hyphen_values = true, value_name = "DURATION")]
    pub interval: Duration,

    /// The operator, as NAMESPACE/deployment/NAME (default: discovered).
    #[arg(long, value_name = "NS/deployment/NAME", value_parser = crate::names::operator_ref_arg)]
    pub operator: Option<String>,

    /// Times closer than this cannot be ordered (clock skew, 1 s managedFields resolution).
    #[arg(long, default_value = "2s", value_parser = parse_duration, allow_hyphen_values = true, value_name = "DURATION")]
    pub skew: Duration,

    /// With NAME: print the long form, every evidence line in full, as `-o json` holds it (the
    /// default form aggregates repeated events, cuts log lines to their message, fits one screen).
    #[arg(long)]
    pub verbose: bool,

    /// `--log-file FILE`: the operator's log from a file (read again on every `--watch` poll).
    #[command(flatten)]
    pub log_files: LogFileArgs,

    /// `--resource TYPE`: the resource diagnosed (default: the Microservice).
    #[command(flatten)]
    pub resource: super::resource::ResourceArgs,
}
