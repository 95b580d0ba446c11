//! Dispatch of subcommands; the single place that turns outcomes into exit codes.

use std::process::ExitCode;

use crate::cli::{Cli, Command};
use crate::error::AppError;

/// Runs the parsed command line. `Ok` carries the exit code of a completed run.
pub fn run(cli: Cli) -> Result<ExitCode, AppError> {
    reject_unused_selector(&cli)?;
    match &cli.command {
        Command::Manifests(args) => {
            let out = crate::manifests::render(&cli.global, args)?;
            crate::commands::write_stdout(&out)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Completion(args) => {
            crate::commands::completion::print(args.shell)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Operate(args) => {
            if let Some(output) = &cli.global.output {
                return Err(AppError::Usage(format!(
                    "operate does not print objects, so -o {} has no meaning: its log format is --log-format text|json",
                    output.kind()
                )));
            }
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

/// `-l/--selector` is global (as kubectl's) but selects Microservices only for `status` and
/// `collect`; elsewhere it would be silently ignored, so it is a usage error naming the command.
fn reject_unused_selector(cli: &Cli) -> Result<(), AppError> {
    let (Some(selector), name) = (&cli.global.selector, command_name(&cli.command)) else {
        return Ok(());
    };
    match &cli.command {
        Command::Status(_) | Command::Collect(_) => Ok(()),
        _ => Err(AppError::Usage(format!(
            "-l {selector}: {name} does not select Microservices by label (only status and collect do){}",
            match &cli.command {
                Command::ExplainEvents(_) => ": give the NAME of one Microservice",
                Command::Logs(_) => ": give OBJECT (NAME or NS/NAME) to filter runs",
                Command::Operate(_) => ": it handles every Microservice in its --namespace(s)",
                _ => "",
            }
        ))),
    }
}

fn command_name(command: &Command) -> &'static str {
    match command {
        Command::Operate(_) => "operate",
        Command::Status(_) => "status",
        Command::Logs(_) => "logs",
        Command::ExplainEvents(_) => "explain-events",
        Command::Collect(_) => "collect",
        Command::Manifests(_) => "manifests",
        Command::Completion(_) => "completion",
        Command::Version(_) => "version",
    }
}
