//! The flags of `explain-events`.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::log_files::LogFileArgs;
use super::values::{parse_duration, parse_duration_at_least_1s};

/// Flags of `explain-events`.
#[derive(Debug, Clone, Args)]
#[command(after_help = concat!(
    "Examples:\n",
    "  # Why is there no Warning event on todo-api?\n",
    "  kubectl microservice explain-events todo-api -n todo\n",
    "\n",
    "  # The same from a bundle, with the operator's log from a file\n",
    "  kubectl microservice explain-events todo-api --bundle ./bundle --log-file operator.log",
))]
pub struct ExplainEventsArgs {
    /// The Microservice: NAME, TYPE/NAME as kubectl's (ms/NAME, microservice.platform.example.io/NAME) or
    /// NAMESPACE/NAME (when the first part is no Microservice type name).
    #[arg(value_name = "NAME", value_parser = crate::names::object_ref_arg)]
    pub name: String,

    /// Read evidence from a bundle directory instead of a cluster.
    #[arg(long, value_name = "DIR", value_hint = clap::ValueHint::DirPath)]
    pub bundle: Option<PathBuf>,

    /// The operator, as NAMESPACE/deployment/NAME (default: discovered).
    #[arg(long, value_name = "NS/deployment/NAME", value_parser = crate::names::operator_ref_arg)]
    pub operator: Option<String>,

    /// The API server's event TTL (kube-apiserver `--event-ttl`): failures older than this have
    /// no events left.
    #[arg(long, default_value = "1h", value_parser = parse_duration_at_least_1s, allow_hyphen_values = true, value_name = "DURATION")]
    pub event_ttl: Duration,

    /// Times closer than this cannot be ordered (clock skew, 1 s managedFields resolution).
    #[arg(long, default_value = "2s", value_parser = parse_duration, allow_hyphen_values = true, value_name = "DURATION")]
    pub skew: Duration,

    /// Print the long form: every evidence line in full, as `-o json` holds it (the default
    /// form aggregates repeated events, cuts log lines to their message and fits one screen).
    #[arg(long)]
    pub verbose: bool,

    /// `--log-file FILE`: the operator's log from a file.
    #[command(flatten)]
    pub log_files: LogFileArgs,

    /// `--resource TYPE`: the resource diagnosed (default: the Microservice).
    #[command(flatten)]
    pub resource: super::resource::ResourceArgs,
}
