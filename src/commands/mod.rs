//! Subcommands other than `operate` and `manifests`.

pub mod collect;
pub mod complete;
pub mod completion;
pub mod explain_events;
pub mod log_files;
pub mod logs;
pub mod status;
pub mod version;

use std::io::Write;

use crate::error::AppError;

/// Writes `text` to stdout; a closed pipe (`| head`) is not an error.
pub fn write_stdout(text: &str) -> Result<(), AppError> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(AppError::Io {
            context: "write to stdout".into(),
            source: e,
        }),
        Ok(()) => Ok(()),
    }
}
