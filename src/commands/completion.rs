//! `kubectl microservice completion SHELL`: completion scripts generated from the clap definitions.

use clap::CommandFactory;
use clap_complete::Shell;

use crate::cli::Cli;
use crate::error::AppError;

/// The completion script for `shell`, for the bare binary `kubectl-microservice`.
pub fn script(shell: Shell) -> String {
    let mut cmd = Cli::command();
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, "kubectl-microservice", &mut buf);
    String::from_utf8(buf).expect("completion scripts are UTF-8")
}

/// Prints the completion script for `shell` to stdout.
pub fn print(shell: Shell) -> Result<(), AppError> {
    super::write_stdout(&script(shell))
}
