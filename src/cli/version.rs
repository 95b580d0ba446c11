//! The flags of `version`.

use clap::Args;

/// Flags of `version`.
#[derive(Debug, Clone, Args)]
#[command(
    after_help = "Examples:\n  kubectl microservice version\n  kubectl microservice version --client -o json\n  kubectl microservice version -o jsonpath='{.clientVersion.version}'\n\nWithout --client, the operators' versions are read from the cluster (Deployments running `kubectl-microservice operate`). When the cluster cannot be asked, the client's version is still printed, a note goes to stderr, and the exit code is 0."
)]
pub struct VersionArgs {
    /// Print the client's version only; do not ask the cluster.
    #[arg(long)]
    pub client: bool,
}
