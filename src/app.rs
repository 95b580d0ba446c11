//! Dispatch of subcommands; the single place that turns outcomes into exit codes.

use std::process::ExitCode;

use crate::cli::{Cli, Command};
use crate::error::AppError;

/// Runs the parsed command line. `Ok` carries the exit code of a completed run.
pub fn run(cli: Cli) -> Result<ExitCode, AppError> {
    match &cli.command {
        Command::Manifests(args) => {
            crate::commands::manifests::run(&cli.global, args)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Completion(args) => {
            crate::commands::completion::print(args.shell)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Operate(args) => {
            let runtime = tokio::runtime::Runtime::new().map_err(|e| AppError::Io {
                context: "start the async runtime".into(),
                source: e,
            })?;
            runtime.block_on(crate::operate::run(&cli.global, args))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Logs(args) => crate::commands::logs::run(&cli.global, args),
        Command::Status(args) => Ok(ExitCode::from(crate::commands::status::run(&cli.global, args)?)),
        Command::Collect(args) => Ok(ExitCode::from(crate::commands::collect::run(&cli.global, args)?)),
        Command::ExplainEvents(args) => Ok(ExitCode::from(crate::commands::explain_events::run(&cli.global, args)?)),
        Command::Version(args) => Ok(ExitCode::from(crate::commands::version::run(&cli.global, args)?)),
    }
}
