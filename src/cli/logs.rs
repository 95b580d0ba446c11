//! The flags of `logs --handler`: which runs, from where, and how they print.

use std::time::Duration;

use clap::{Args, ValueEnum};

use super::log_files::LogFileArgs;
use super::values::{parse_duration, parse_runs, parse_tail_lines};

/// Flags of `logs`: every run of a handler, from a file, a bundle or the operator's Pods.
#[derive(Debug, Clone, Args)]
#[command(after_help = concat!(
    "Examples:\n",
    "  # Every run of the accept handler for one Microservice, from the operator's Pods\n",
    "  kubectl microservice logs --handler accept todo-api -n todo\n",
    "\n",
    "  # Runs in an operator's log file, one JSON object per run\n",
    "  kubectl microservice logs --handler accept --log-file operator.log --local -o json\n",
    "\n",
    "  # Runs in logs read by kubectl, on stdin\n",
    "  kubectl logs deploy/op --timestamps | kubectl microservice logs --handler accept --log-file - --local",
))]
pub struct LogsArgs {
    /// The handler id; `accept` also matches Kopf's field handler `accept/spec` (`accept/*`).
    #[arg(long, value_name = "NAME")]
    pub handler: String,

    /// Only runs for this object: NAME (in -n NS, else the context's namespace; with --local or --bundle, in any namespace), TYPE/NAME as
    /// kubectl's (ms/NAME, microservice.platform.example.io/NAME), or NAMESPACE/NAME when the first
    /// part is no Microservice type name.
    #[arg(value_name = "OBJECT", value_parser = crate::names::object_ref_arg)]
    pub object: Option<String>,

    /// The operator's log, read from FILE (`-`: stdin; repeatable) beside the cluster's (or
    /// `--bundle`'s) evidence, as `status` and `explain-events` read it: its clock is theirs (the
    /// Kopf operator's `TZ`, checked against the API server), and the answer names the operator
    /// and what ran since the spec changed. With `--local`, the files alone. With or without
    /// kubelet `--timestamps` prefixes.
    #[arg(id = "log_file", long = "log-file", value_name = "FILE|-", value_hint = clap::ValueHint::FilePath)]
    pub log_file: Vec<String>,

    /// Read only the `--log-file` files (`-`: stdin), no cluster and no bundle, as `kubectl set
    /// --local` reads no API server: Kopf's zoneless times are read as UTC, said so, and no
    /// operator or spec change is named.
    #[arg(long, requires = "log_file", conflicts_with = "bundle")]
    pub local: bool,

    /// The old spelling of `--log-file FILE --local` (hidden; kept so that scripts keep working).
    /// Its conflicts are named here only: the completion scripts leave it out
    /// ([`crate::cli::scope::flattened`]).
    #[arg(long, hide = true, value_name = "PATH|-", conflicts_with_all = ["bundle", "log_file", "operator", "previous", "tail"])]
    pub file: Vec<String>,

    /// `--resource TYPE`: the resource diagnosed (default: the Microservice).
    #[command(flatten)]
    pub resource: super::resource::ResourceArgs,

    /// Read the operator logs of a bundle directory (`operator/logs/POD.CONTAINER[.previous].log`).
    #[arg(long, value_name = "DIR", value_hint = clap::ValueHint::DirPath)]
    pub bundle: Option<std::path::PathBuf>,

    /// The operator Deployment (default: the one the resolver decides for the object's namespace,
    /// among Deployments running `kopf run`, `python -m kopf` or `kubectl-microservice operate`);
    /// with `--bundle`, the bundle's Deployment whose logs are read.
    #[arg(long, value_name = "NS/deployment/NAME", conflicts_with = "local", value_parser = crate::names::operator_ref_arg)]
    pub operator: Option<String>,

    /// The operator's container (default: the one running the operator).
    #[arg(short = 'c', long, value_name = "NAME", value_parser = crate::names::container)]
    pub container: Option<String>,

    /// Also read the container before its last restart (live; a bundle's `.previous.log`
    /// files are always read).
    #[arg(long, conflicts_with_all = ["local", "bundle"])]
    pub previous: bool,

    /// Read only the last N lines of each container log, as `kubectl logs --tail` (the
    /// kubelet's `tailLines`; -1: all). For the last N runs, see --last. (`--log-lines` is an old
    /// name of this flag.)
    #[arg(long, alias = "log-lines", value_name = "LINES", allow_hyphen_values = true, value_parser = parse_tail_lines, conflicts_with_all = ["local", "bundle"])]
    pub tail: Option<i64>,

    /// Only runs started within this long before now (`10m`, `1h`); with `--local`, "now" is the
    /// files' last time (a file has no other clock).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, allow_hyphen_values = true)]
    pub since: Option<Duration>,

    /// Only the last N runs (after the other filters; not with --follow). For the last lines of
    /// each log, see --tail.
    #[arg(long, value_name = "RUNS", value_parser = parse_runs, allow_hyphen_values = true, conflicts_with = "follow")]
    pub last: Option<usize>,

    /// Only runs with this cause (repeatable or comma-separated).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub cause: Vec<RunCause>,

    /// Only runs with this outcome (repeatable or comma-separated).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub outcome: Vec<RunOutcome>,

    /// Print the matching runs' log lines as they are, without grouping.
    #[arg(long)]
    pub raw: bool,

    /// Print every run in full (the default prints runs of one object, handler, outcome and
    /// message that repeat as one line with their count, as kubectl aggregates events; `-o
    /// json` always holds every run).
    #[arg(long, conflicts_with = "raw")]
    pub verbose: bool,

    /// Keep following the logs; runs are printed as they end.
    #[arg(short = 'f', long)]
    pub follow: bool,

    /// A run with no outcome after this long is closed with outcome `unknown`.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, allow_hyphen_values = true, default_value = "10m")]
    pub run_timeout: Duration,
}

impl LogsArgs {
    /// The files read alone, without a cluster or a bundle: `--log-file ... --local`, or the old
    /// `--file` (`-`: stdin); `None` when the files (if any) are read beside the evidence.
    pub fn local_files(&self) -> Option<&[String]> {
        if !self.file.is_empty() {
            Some(&self.file)
        } else if self.local {
            Some(&self.log_file)
        } else {
            None
        }
    }

    /// The `--log-file` files read beside the cluster's or the bundle's evidence (none with
    /// `--local`), as the other commands take them.
    pub fn log_files(&self) -> LogFileArgs {
        LogFileArgs {
            paths: match self.local_files() {
                Some(_) => Vec::new(),
                None => self.log_file.iter().map(std::path::PathBuf::from).collect(),
            },
        }
    }
}

/// `--cause` values of `logs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RunCause {
    /// Creation.
    Create,
    /// Updating (a spec change).
    Update,
    /// Resuming (operator restart).
    Resume,
    /// Not named in the logs.
    Unknown,
}

/// `--outcome` values of `logs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RunOutcome {
    /// The handler succeeded (or its error was ignored).
    Succeeded,
    /// A temporary failure: Kopf retries.
    Retrying,
    /// A permanent failure, or retries exhausted.
    Failed,
    /// No outcome logged.
    Unknown,
}
