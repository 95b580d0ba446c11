//! Entry point: parse, run, map the outcome to an exit code (see `error::AppError::exit_code`).
//! The hidden `__complete` subcommand is answered before parsing: its words are a partial line.

use std::io::Write as _;
use std::process::ExitCode;

use kubectl_microservice::commands::complete;
use kubectl_microservice::{app, cli, error::AppError};

fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|a| a == complete::SUBCOMMAND) {
        return complete::run(&args[2..]);
    }
    let cli = match cli::parse_from(args) {
        Ok(cli) => cli,
        Err(err) => {
            // clap prints help/version (exit 0) and usage errors (exit 2) itself.
            let _ = err.print();
            return ExitCode::from(err.exit_code() as u8);
        }
    };
    match app::run(cli) {
        Ok(code) => code,
        Err(err) => {
            // Not eprintln!, which panics (exit 101) when stderr is a closed pipe: the exit code
            // still tells what happened.
            let mut stderr = std::io::stderr();
            let _ = writeln!(
                stderr,
                "error: {}",
                kubectl_microservice::text::sanitize(&err.to_string())
            );
            if let Some(hint) = err.hint() {
                let _ = writeln!(stderr, "hint: {hint}");
            }
            ExitCode::from(AppError::exit_code(&err))
        }
    }
}
