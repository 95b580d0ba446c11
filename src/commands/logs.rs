//! `kubectl microservice logs --handler NAME [OBJECT]`: every run of a handler, with its cause
//! and outcome, from operator logs (Kopf's or ours).
//!
//! Flow: sources → one [`LogStream`] per container log (bytes → records → runs) → filters
//! ([`RunFilter`], `--tail`) → output (grouped human blocks, `--raw` lines, or `-o json` one
//! object per run) → what the logs cover ([`ContainerCoverage`]). Human output goes to stdout
//! with the coverage after the runs; with `-o json` and `--raw` the coverage goes to stderr so
//! stdout stays machine-readable.
//!
//! Exit codes (DESIGN.md Contracts): 0 whether or not runs were found; 2 for usage errors (bad
//! flag, unreadable `--file` path); 3 when no log at all could be read.

use std::io::{IsTerminal, Read};
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use crate::cli::{ColorChoice, GlobalArgs, LogsArgs, OutputFormat, RunCause, RunOutcome};
use crate::commands::write_stdout;
use crate::error::AppError;
use crate::kopf::messages::Outcome;
use crate::logs::coverage::ContainerCoverage;
use crate::logs::filter::{ObjectSelector, RunFilter, select};
use crate::logs::runs::{GroupConfig, Run};
use crate::logs::stream::{LogStream, SourceLabel};
use crate::logs::view::{self, Tally};
use crate::operate::cause::Cause;
use crate::text::sanitize;

/// How long a followed stream may be quiet before its held-back record and runs are released.
const IDLE: Duration = Duration::from_secs(1);
/// How long (log time) a closed run is held in follow mode for its cycle's end and late lines.
const LINGER: Duration = Duration::from_secs(2);

/// What to print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// Grouped runs, then the coverage.
    Human {
        /// Colour on.
        color: bool,
    },
    /// `--raw`: the runs' lines as read.
    Raw,
    /// `-o json`: one object per line per run.
    Json,
}

/// The validated command line.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Which runs.
    pub filter: RunFilter,
    /// `--since`, applied against "now" once known.
    pub since: Option<Duration>,
    /// `--tail`.
    pub tail: Option<usize>,
    /// How.
    pub output: Output,
    /// Grouping settings (`--run-timeout`).
    pub config: GroupConfig,
}

impl Plan {
    /// Validates the flags. Errors (exit 2) name the flag and what was expected.
    pub fn new(global: &GlobalArgs, args: &LogsArgs, color: bool) -> Result<Plan, AppError> {
        if args.handler.trim().is_empty() {
            return Err(AppError::Usage(
                "--handler must name a handler id, e.g. --handler accept".into(),
            ));
        }
        let output = match (global.output, args.raw) {
            (None, false) => Output::Human { color },
            (None, true) => Output::Raw,
            (Some(OutputFormat::Json), false) => Output::Json,
            (Some(OutputFormat::Json), true) => {
                return Err(AppError::Usage("--raw and -o json exclude each other".into()));
            }
            (Some(other), _) => {
                return Err(AppError::Usage(format!(
                    "logs prints runs as grouped text, --raw lines or -o json; -o {} is not supported",
                    format!("{other:?}").to_lowercase()
                )));
            }
        };
        if args.follow && args.tail.is_some() {
            return Err(AppError::Usage(
                "--tail selects the last N runs of logs read to their end; it cannot be combined with --follow".into(),
            ));
        }
        if global.namespaces.len() > 1 {
            return Err(AppError::Usage("logs takes at most one -n NAMESPACE".into()));
        }
        let object = args
            .object
            .as_deref()
            .map(|o| ObjectSelector::parse(o, global.namespaces.first().map(String::as_str)))
            .transpose()
            .map_err(AppError::Usage)?;
        if args.run_timeout.is_zero() {
            return Err(AppError::Usage("--run-timeout must be longer than 0, e.g. 10m".into()));
        }
        Ok(Plan {
            filter: RunFilter {
                handler: args.handler.clone(),
                object,
                started_after: None,
                causes: args
                    .cause
                    .iter()
                    .map(|c| match c {
                        RunCause::Create => Some(Cause::Create),
                        RunCause::Update => Some(Cause::Update),
                        RunCause::Resume => Some(Cause::Resume),
                        RunCause::Unknown => None,
                    })
                    .collect(),
                outcomes: args
                    .outcome
                    .iter()
                    .map(|o| match o {
                        RunOutcome::Succeeded => Outcome::Succeeded,
                        RunOutcome::Retrying => Outcome::Retrying,
                        RunOutcome::Failed => Outcome::Failed,
                        RunOutcome::Unknown => Outcome::Unknown,
                    })
                    .collect(),
            },
            since: args.since,
            tail: args.tail,
            output,
            config: GroupConfig {
                run_timeout: args.run_timeout,
                ..GroupConfig::default()
            },
        })
    }

    /// Sets `--since` against `now`.
    pub fn anchor_since(&mut self, now: Option<DateTime<Utc>>) {
        if let (Some(since), Some(now)) = (self.since, now) {
            self.filter.started_after = Some(now - chrono::Duration::from_std(since).unwrap_or(chrono::Duration::MAX));
        }
    }
}

/// Whether to colour stdout: `--color always|never` wins; `auto` colours a terminal unless
/// `NO_COLOR` is set to a non-empty value.
fn use_color(choice: ColorChoice) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    }
}

/// Runs `logs`.
pub fn run(global: &GlobalArgs, args: &LogsArgs) -> Result<ExitCode, AppError> {
    let mut plan = Plan::new(global, args, use_color(global.color))?;
    if args.file.is_empty() {
        return Err(AppError::Usage(
            "give the operator's log with --file PATH (or --file - for stdin)".into(),
        ));
    }
    if args.follow {
        let [path] = args.file.as_slice() else {
            return Err(AppError::Usage("--follow reads one --file".into()));
        };
        return follow_file(&mut plan, path);
    }
    let mut runs = Vec::new();
    let mut coverage = Vec::new();
    for path in &args.file {
        let label = SourceLabel {
            path: Some(path.clone()),
            ..Default::default()
        };
        let mut stream = LogStream::new(label.clone(), plan.config.clone(), Vec::new());
        let result = stream.read_all(open(path)?);
        let error = match result {
            Ok(found) => {
                runs.extend(found);
                None
            }
            Err(e) => Some(format!("read error: {e}")),
        };
        coverage.push(ContainerCoverage {
            label,
            parse: stream.parse_stats().clone(),
            group: stream.group_stats().clone(),
            error,
            notes: Vec::new(),
        });
    }
    // "Now" for a file is its latest line: the file may have been written long ago.
    let now = coverage.iter().filter_map(|c| c.parse.last).map(|s| s.at).max();
    plan.anchor_since(now);
    let selected = select(runs, &plan.filter, plan.tail);
    print_batch(&plan, &selected, &coverage)?;
    if coverage.iter().all(|c| c.error.is_some()) {
        return Err(AppError::Io {
            context: "read the operator logs".into(),
            source: std::io::Error::other("no log could be read"),
        });
    }
    Ok(ExitCode::SUCCESS)
}

fn open(path: &str) -> Result<Box<dyn Read + Send>, AppError> {
    if path == "-" {
        return Ok(Box::new(std::io::stdin()));
    }
    std::fs::File::open(path)
        .map(|f| Box::new(f) as Box<dyn Read + Send>)
        .map_err(|e| AppError::Usage(format!("cannot read --file {path}: {e}")))
}

/// Renders the runs for the chosen output; the summary and coverage go to stdout for humans,
/// to stderr otherwise.
fn print_batch(plan: &Plan, runs: &[Run], coverage: &[ContainerCoverage]) -> Result<(), AppError> {
    let mut out = String::new();
    for run in runs {
        out.push_str(&render_run(plan.output, run));
        if matches!(plan.output, Output::Human { .. }) {
            out.push('\n');
        }
    }
    let report = report(plan, Tally::of(runs), coverage);
    match plan.output {
        Output::Human { .. } => {
            out.push_str(&report);
            write_stdout(&out)
        }
        Output::Raw | Output::Json => {
            write_stdout(&out)?;
            eprint!("{report}");
            Ok(())
        }
    }
}

fn render_run(output: Output, run: &Run) -> String {
    match output {
        Output::Human { color } => view::human_block(run, color),
        Output::Raw => view::raw_lines(run),
        Output::Json => view::json_line(run),
    }
}

/// The answer's closing lines: what was found, and what the logs cover.
pub fn report(plan: &Plan, tally: Tally, coverage: &[ContainerCoverage]) -> String {
    let who = match &plan.filter.object {
        Some(o) => format!("handler {} for {}", plan.filter.handler, o.describe()),
        None => format!("handler {}", plan.filter.handler),
    };
    let mut out = if tally.total() == 0 {
        format!("No run of {} in these logs.\n", sanitize(&who))
    } else {
        format!("{}: {tally}.\n", sanitize(&who))
    };
    out.push_str("Coverage:\n");
    for c in coverage {
        for line in c.describe() {
            out.push_str(&format!("  {}\n", sanitize(&line)));
        }
    }
    out
}

/// Follows one file (or stdin): runs are printed as they end; at the end of stdin the coverage.
fn follow_file(plan: &mut Plan, path: &str) -> Result<ExitCode, AppError> {
    let label = SourceLabel {
        path: Some(path.to_string()),
        ..Default::default()
    };
    let mut reader = open(path)?;
    let is_stdin = path == "-";
    let (tx, rx) = mpsc::sync_channel::<Option<Vec<u8>>>(4);
    std::thread::spawn(move || {
        let mut chunk = vec![0u8; 64 * 1024];
        loop {
            match reader.read(&mut chunk) {
                Ok(0) if is_stdin => break,
                // A file that does not grow: poll like `tail -f`.
                Ok(0) => std::thread::sleep(Duration::from_millis(250)),
                Ok(n) => {
                    if tx.send(Some(chunk[..n].to_vec())).is_err() {
                        return;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        let _ = tx.send(None);
    });
    let since = plan.since;
    let mut stream = LogStream::new(label.clone(), plan.config.clone(), Vec::new());
    let mut shown = Tally::default();
    let mut last_data = Instant::now();
    let linger = chrono::Duration::from_std(LINGER).unwrap_or_default();
    loop {
        let released = match rx.recv_timeout(IDLE) {
            Ok(Some(chunk)) => {
                stream.push_bytes(&chunk);
                last_data = Instant::now();
                let cutoff = stream_latest(&stream).map(|t| t - linger);
                cutoff.map(|c| stream.drain(Some(c))).unwrap_or_default()
            }
            Ok(None) | Err(mpsc::RecvTimeoutError::Disconnected) => {
                stream.finish();
                let runs = stream.drain(None);
                emit(plan, since, &runs, &mut shown)?;
                break;
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                stream.flush_record();
                if let Some(latest) = stream_latest(&stream) {
                    let quiet = chrono::Duration::from_std(last_data.elapsed()).unwrap_or_default();
                    stream.expire(latest + quiet);
                }
                stream.drain(None)
            }
        };
        emit(plan, since, &released, &mut shown)?;
    }
    let coverage = [ContainerCoverage {
        label,
        parse: stream.parse_stats().clone(),
        group: stream.group_stats().clone(),
        error: None,
        notes: Vec::new(),
    }];
    let report = report(plan, shown, &coverage);
    match plan.output {
        Output::Human { .. } => write_stdout(&report)?,
        _ => eprint!("{report}"),
    }
    Ok(ExitCode::SUCCESS)
}

fn stream_latest(stream: &LogStream) -> Option<DateTime<Utc>> {
    stream.parse_stats().last.map(|s| s.at)
}

/// Prints released runs that pass the filters, counting them for the closing line.
fn emit(plan: &mut Plan, since: Option<Duration>, runs: &[Run], shown: &mut Tally) -> Result<(), AppError> {
    if since.is_some() {
        plan.anchor_since(Some(Utc::now()));
    }
    let mut out = String::new();
    for run in runs.iter().filter(|r| plan.filter.matches(r)) {
        out.push_str(&render_run(plan.output, run));
        if matches!(plan.output, Output::Human { .. }) {
            out.push('\n');
        }
        shown.add(run.outcome);
    }
    if out.is_empty() { Ok(()) } else { write_stdout(&out) }
}
