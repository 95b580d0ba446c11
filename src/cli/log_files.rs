//! `--log-file FILE`, the one flag `explain-events`, `status`, `collect` and `logs` share
//! (flattened into each): the operator's log read from a file, beside or instead of `pods/log`
//! (the commands read the files).

use std::path::PathBuf;

use clap::Args;

/// The `--log-file` flag.
#[derive(Debug, Clone, Default, Args)]
pub struct LogFileArgs {
    /// The operator's log, read from FILE beside the Pods' logs (repeatable).
    ///
    /// For an operator without a Pod (`operate` on a laptop) or logs exported from a log store.
    /// Our text or json format or Kopf's, with or without the kubelet `--timestamps` prefix.
    /// Findings cite it as FILE-NAME/file; `collect` writes it into the bundle as
    /// `operator/logs/FILE-NAME.file.log`.
    #[arg(id = "log_file", long = "log-file", value_name = "FILE")]
    pub paths: Vec<PathBuf>,
}
