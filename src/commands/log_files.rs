//! `--log-file FILE`, the one flag `explain-events`, `status` and `collect` share (flattened into
//! each): the operator's log read from a file, beside or instead of `pods/log`
//! ([`crate::logs::file`] reads and names it).

use std::path::PathBuf;

use clap::Args;

use crate::error::AppError;
use crate::evidence::Snapshot;
use crate::logs::LogSource;
use crate::logs::file;

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

impl LogFileArgs {
    /// Reads every file (empty when none was given). Errors (exit 2) name the file: unreadable,
    /// a directory, `-`, or two files of the same name.
    pub fn read(&self) -> Result<Vec<LogSource>, AppError> {
        file::read_sources(&self.paths)
    }

    /// Reads the files and adds them to `snapshot`'s operator logs
    /// ([`crate::evidence::add_log_files`]).
    pub fn add_to(&self, snapshot: &mut Snapshot) -> Result<(), AppError> {
        crate::evidence::add_log_files(&mut snapshot.operator.logs, &self.read()?);
        Ok(())
    }
}
