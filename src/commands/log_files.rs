//! The files of `--log-file FILE` ([`LogFileArgs`], the flag `explain-events`, `status`,
//! `collect` and `logs` share), read for the command: the operator's log from a file, beside or
//! instead of `pods/log` ([`crate::logs::file`] reads and names it).

use crate::cli::LogFileArgs;
use crate::error::AppError;
use crate::evidence::Snapshot;
use crate::logs::LogSource;
use crate::logs::file;

/// Reads every file of `flag` (empty when none was given). Errors (exit 2) name the file:
/// unreadable, a directory, `-`, or two files of the same name.
pub fn read(flag: &LogFileArgs) -> Result<Vec<LogSource>, AppError> {
    file::read_sources(&flag.paths)
}

/// Reads the files of `flag` and adds them to `snapshot`'s operator logs
/// ([`crate::evidence::add_log_files`]).
pub fn add_to(flag: &LogFileArgs, snapshot: &mut Snapshot) -> Result<(), AppError> {
    crate::evidence::add_log_files(&mut snapshot.operator.logs, &read(flag)?);
    Ok(())
}
