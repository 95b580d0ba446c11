//! The flags of `collect`.

use std::path::PathBuf;

use clap::Args;

use super::log_files::LogFileArgs;

/// Flags of `collect`.
#[derive(Debug, Clone, Args)]
#[command(after_help = concat!(
    "Examples:\n",
    "  # Write the evidence about the todo namespace into ./bundle\n",
    "  kubectl microservice collect ./bundle -n todo\n",
    "\n",
    "  # Every namespace, naming the operator\n",
    "  kubectl microservice collect ./bundle -A --operator ops/deployment/microservice-operator",
))]
pub struct CollectArgs {
    /// The directory to create (must not exist, or be empty).
    #[arg(value_name = "DIR", value_hint = clap::ValueHint::DirPath)]
    pub dir: PathBuf,

    /// The operator, as NAMESPACE/deployment/NAME (default: discovered).
    #[arg(long, value_name = "NS/deployment/NAME", value_parser = crate::names::operator_ref_arg)]
    pub operator: Option<String>,

    /// `--log-file FILE`: the operator's log from a file, written into the bundle.
    #[command(flatten)]
    pub log_files: LogFileArgs,

    /// `--resource TYPE`: the resource diagnosed (default: the Microservice).
    #[command(flatten)]
    pub resource: super::resource::ResourceArgs,
}
