//! `kubectl microservice logs --handler NAME [OBJECT]`: every run of a handler, with its cause
//! and outcome, from operator logs (Kopf's or ours).
//!
//! Sources: `--log-file FILE|-` with `--local` (repeatable; the files alone, `--file` is its old
//! name), `--bundle DIR` (the logs of the operator the resolver
//! names, or `--operator`'s), else the operator's Pods (`--operator NS/deployment/NAME`, or the
//! one [`crate::evidence::resolve`] decides for the namespace, as `status` and `explain-events`
//! do; every Pod of the Deployment is read and merged, the Lease holder's marked). Without
//! `--local`, `--log-file FILE` is read beside the cluster's or the bundle's evidence, as
//! `status` and `explain-events` read it.
//!
//! Flow: sources → one [`LogStream`] per container log (bytes → records → runs) → filters
//! ([`RunFilter`], `--last`) → output (grouped human blocks, `--raw` lines, or `-o json` one
//! object per run) → what the logs cover ([`ContainerCoverage`]). Human output goes to stdout
//! with the coverage after the runs; with `-o json` and `--raw` the coverage goes to stderr so
//! stdout stays machine-readable.
//!
//! When the object is named and is in evidence (a bundle's `microservices.json`, or a `get`
//! live), the answer also says whether the handler ran since the spec changed — only when the
//! logs begin before that change ([`crate::logs::coverage::since`]).
//!
//! Exit codes (docs/contracts.md): 0 whether or not runs were found; 2 for usage errors (bad
//! flag, unreadable `--log-file` path, bad `--bundle` path); 3 when the operator or the object
//! cannot be found, the cluster cannot be asked, or no log at all could be read.

use std::io::Read;
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use kube::{Api, Client};

use crate::cli::{GlobalArgs, LogsArgs, RunCause, RunOutcome};
use crate::client::Usage;
use crate::commands::write_stdout;
use crate::error::AppError;
use crate::evidence::gather::{Bundle, EvidenceSource, Needs, Objects, gather, gather_bundle};
use crate::kopf::messages::Outcome;
use crate::logs::coverage::{ContainerCoverage, SinceVerdict};
use crate::logs::filter::{ObjectSelector, RunFilter, select};
use crate::logs::live::{Fetch, Followed, LINGER, Target, describe_error, follow, read_once};
use crate::logs::runs::{CauseHint, GroupConfig, Run};
use crate::logs::stream::{LogStream, SourceLabel};
use crate::logs::view::{self, Tally};
use crate::render::OutputFormat;
use crate::resource::MicroserviceObject;
use crate::text::sanitize;
use crate::vocab::cause::Cause;

/// How long a followed stream may be quiet before its held-back record and runs are released.
const IDLE: Duration = Duration::from_secs(1);

/// What to print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// Grouped runs, then the coverage.
    Human {
        /// Colour on.
        color: bool,
        /// `--verbose`: every run in full, none aggregated ([`crate::logs::view::aggregate`]).
        verbose: bool,
    },
    /// `--raw`: the runs' lines as read.
    Raw,
    /// `-o json`: one object per line per run.
    Json,
    /// `-o jsonpath=` / `-o jsonpath-as-json=`: the template over each run's `-o json`
    /// object, printed as it comes (no line break added, as `kubectl get -w -o jsonpath`).
    Template {
        /// The template.
        template: crate::jsonpath::Template,
        /// `jsonpath-as-json`.
        as_json: bool,
    },
}

/// What `logs` was asked, its flags validated: which runs (filters, `--since`, `--last`), how
/// they print, how runs are grouped, and (once known) whose logs they are.
#[derive(Debug, Clone)]
pub struct LogsQuery {
    /// Which runs.
    pub filter: RunFilter,
    /// `--since`, applied against "now" once known.
    pub since: Option<Duration>,
    /// `--last`: only the last N runs.
    pub last: Option<usize>,
    /// How.
    pub output: Output,
    /// Grouping settings (`--run-timeout`).
    pub config: GroupConfig,
    /// The operator whose logs are read, as every command names it (the resolver's label:
    /// `NS/deployment/NAME`, `process/...`, `<none serves NS>`, ...); `None` for `--local`.
    pub operator: Option<String>,
    /// The resource of the object (`--resource`, resolved; the Microservice by default).
    pub resource: crate::resource::identity::ResourceId,
    /// With `--resource`: the OBJECT as given and `-n`, parsed once the resource is resolved
    /// ([`LogsQuery::settle_object`]), since its `TYPE/NAME` is that resource's.
    pending_object: Option<(String, Option<String>)>,
}

impl LogsQuery {
    /// Validates the flags. Errors (exit 2) name the flag and what was expected.
    pub fn new(global: &GlobalArgs, args: &LogsArgs, color: bool) -> Result<LogsQuery, AppError> {
        if args.handler.trim().is_empty() {
            return Err(AppError::Usage(
                "--handler must name a handler id, e.g. --handler accept".into(),
            ));
        }
        let output = output(global, args, color)?;
        if args.follow && args.last.is_some() {
            return Err(AppError::Usage(
                "--last selects the last N runs of logs read to their end; it cannot be combined with --follow".into(),
            ));
        }
        // -A is refused while parsing (crate::cli::scope). Without -n, a cluster read takes the
        // context's namespace (from_cluster); a file or bundle has no context: NAME matches anywhere.
        let namespace = global.one_namespace("logs")?;
        if args.bundle.is_some() {
            global.refuse_connection_flags("logs --bundle")?;
        } else if args.local_files().is_some() {
            global.refuse_connection_flags("logs --local")?;
        }
        let pending_object = match (&args.resource.resource, &args.object) {
            (Some(_), Some(given)) => Some((given.clone(), namespace.clone())),
            _ => None,
        };
        let object = args
            .object
            .as_deref()
            .filter(|_| pending_object.is_none())
            .map(|o| ObjectSelector::parse(o, namespace.as_deref()))
            .transpose()
            .map_err(|e| AppError::Usage(e.to_string()))?;
        if args.run_timeout.is_zero() {
            return Err(AppError::Usage("--run-timeout must be longer than 0, e.g. 10m".into()));
        }
        Ok(LogsQuery {
            filter: run_filter(args, object),
            since: args.since,
            last: args.last,
            output,
            config: GroupConfig {
                run_timeout: args.run_timeout,
                ..GroupConfig::default()
            },
            operator: None,
            resource: crate::resource::identity::ResourceId::microservice(),
            pending_object,
        })
    }

    /// Sets the resolved `resource` and parses a `--resource` OBJECT against it: its `TYPE/NAME`
    /// ([`crate::evidence::target::object_arg`]), then as every OBJECT (exit 2 on a bad one).
    pub fn settle_object(&mut self, resource: crate::resource::identity::ResourceId) -> Result<(), AppError> {
        if let Some((given, namespace)) = self.pending_object.take() {
            let given = crate::evidence::target::object_arg(&given, &resource)?;
            self.filter.object =
                Some(ObjectSelector::parse(&given, namespace.as_deref()).map_err(|e| AppError::Usage(e.to_string()))?);
        }
        self.resource = resource;
        Ok(())
    }

    /// The namespace given: the object's (`NS/NAME`, or `-n` for a bare NAME), else `-n`'s.
    fn given_namespace(&self, global: &GlobalArgs) -> Option<String> {
        self.filter
            .object
            .as_ref()
            .and_then(|o| o.namespace.clone())
            .or_else(|| global.namespaces.first().cloned())
    }

    /// Sets `--since` against `now`.
    pub fn anchor_since(&mut self, now: Option<DateTime<Utc>>) {
        if let (Some(since), Some(now)) = (self.since, now) {
            self.filter.started_after = Some(crate::time::minus(now, crate::time::delta(since)));
        }
    }
}

/// What `logs` prints for `-o` and `--raw`: grouped text (`color`: coloured), raw lines, one
/// JSON object per run, or a template over each run's. Errors (exit 2): `--raw` with a JSON
/// format, and the formats a stream of runs cannot be (`-o name|yaml|wide`).
fn output(global: &GlobalArgs, args: &LogsArgs, color: bool) -> Result<Output, AppError> {
    match (&global.output, args.raw) {
        (None, false) => Ok(Output::Human {
            color,
            verbose: args.verbose,
        }),
        (None, true) => Ok(Output::Raw),
        (Some(other @ (OutputFormat::Json | OutputFormat::JsonPath(_) | OutputFormat::JsonPathAsJson(_))), true) => {
            Err(AppError::Usage(format!(
                "--raw and -o {} exclude each other",
                other.kind()
            )))
        }
        (Some(OutputFormat::Json), false) => Ok(Output::Json),
        (Some(OutputFormat::JsonPath(template)), false) => Ok(Output::Template {
            template: template.clone(),
            as_json: false,
        }),
        (Some(OutputFormat::JsonPathAsJson(template)), false) => Ok(Output::Template {
            template: template.clone(),
            as_json: true,
        }),
        (Some(OutputFormat::Name), _) => Err(AppError::Usage(format!(
            "logs prints handler runs, not objects: -o name has no meaning here; -o takes {}; -o jsonpath='{{.object}}{{\"\\n\"}}' prints the objects of the runs",
            crate::cli::scope::output_formats("logs").unwrap_or_default()
        ))),
        (Some(other), _) => Err(AppError::Usage(format!(
            "logs prints runs as grouped text (default), --raw lines, or -o {}; not -o {}: a stream of runs is one JSON object per line, as jq reads it (kubectl has no logs -o)",
            crate::cli::scope::output_formats("logs").unwrap_or_default(),
            other.kind()
        ))),
    }
}

/// Which runs the flags select: `--handler`, the object, `--cause` and `--outcome` (`--since`
/// is set once "now" is known: [`LogsQuery::anchor_since`]).
fn run_filter(args: &LogsArgs, object: Option<ObjectSelector>) -> RunFilter {
    RunFilter {
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
    }
}

/// Runs `logs`.
pub fn run(global: &GlobalArgs, args: &LogsArgs) -> Result<ExitCode, AppError> {
    let mut query = LogsQuery::new(global, args, crate::render::use_color(global.color))?;
    // The files read beside the evidence (none with `--local`): read first, so that a bad path
    // is a usage error before any cluster call, as in the other commands.
    if args.follow && args.bundle.is_some() {
        return Err(AppError::Usage(
            "--follow reads a cluster or a file, not a bundle".into(),
        ));
    }
    if args.follow && args.local_files().is_none() && !args.log_file.is_empty() {
        return Err(AppError::Usage(
            "--follow reads the Pods, or one --log-file with --local; without --local a --log-file is read once, beside the cluster's evidence".into(),
        ));
    }
    let files = beside_files(args)?;
    if let Some(dir) = &args.bundle {
        query.settle_object(crate::evidence::target::in_bundle(
            dir,
            args.resource.resource.as_deref(),
        )?)?;
        let namespace = query.given_namespace(global);
        return from_bundle(
            &mut query,
            dir,
            namespace.as_deref(),
            args.container.as_deref(),
            args.operator.as_deref(),
            &files,
        );
    }
    let Some(local) = args.local_files() else {
        let runtime = tokio::runtime::Runtime::new().map_err(|e| AppError::Io {
            context: "start the async runtime".into(),
            source: e,
        })?;
        return runtime.block_on(from_cluster(global, args, &mut query, &files));
    };
    if args.container.is_some() {
        return Err(AppError::Usage(
            "-c/--container selects a container of the operator's Pods, not of a --log-file read with --local".into(),
        ));
    }
    // A file names no resource: `--resource`'s own word is the one TYPE of a TYPE/NAME.
    if let Some(typed) = &args.resource.resource {
        query.settle_object(crate::resource::identity::ResourceId::named(typed))?;
    }
    if args.follow {
        let [path] = local else {
            return Err(AppError::Usage("--follow --local reads one --log-file".into()));
        };
        return follow_file(&mut query, path);
    }
    let mut runs = Vec::new();
    let mut coverage = Vec::new();
    for path in local {
        let label = SourceLabel {
            path: Some(path.clone()),
            ..Default::default()
        };
        let mut stream = LogStream::new(label.clone(), query.config.clone(), Vec::new());
        let result = stream.read_all(crate::logs::file::open(path, "--log-file")?);
        let error = match result {
            Ok(found) => {
                runs.extend(found);
                None
            }
            Err(e) => Some(format!("read error: {e}")),
        };
        coverage.push(ContainerCoverage::of(&stream, error, Vec::new()));
    }
    // "Now" for a file is its latest line: the file may have been written long ago.
    let now = latest_line(&coverage);
    finish_batch(&mut query, runs, &coverage, now, None)
}

/// The `--log-file` files read beside the cluster's or the bundle's evidence (none with
/// `--local`), as the other commands read them; `-` is stdin, read here to its end (once: `logs`
/// does not read them again, and `--follow` does not take them). Errors (exit 2): a bad path,
/// `-` twice, a file named like stdin's log.
fn beside_files(args: &LogsArgs) -> Result<Vec<crate::logs::LogSource>, AppError> {
    use crate::logs::file;
    let flag = args.log_files();
    let (stdin, paths): (Vec<&std::path::PathBuf>, Vec<&std::path::PathBuf>) =
        flag.paths.iter().partition(|p| p.as_os_str() == "-");
    if stdin.len() > 1 {
        return Err(AppError::Usage("--log-file - given twice: stdin is read once".into()));
    }
    let mut sources = file::read_sources(&paths)?;
    if !stdin.is_empty() {
        if let Some(clash) = sources.iter().find(|s| s.pod == file::STDIN_NAME) {
            return Err(AppError::Usage(format!(
                "--log-file -: stdin's log is named {:?}, as another --log-file is ({}): copy that file under another name",
                file::STDIN_NAME,
                clash.pod
            )));
        }
        sources.push(file::read_stream_source(
            std::io::stdin().lock(),
            file::TAIL_LIMIT_BYTES,
        )?);
    }
    Ok(sources)
}

fn latest_line(coverage: &[ContainerCoverage]) -> Option<DateTime<Utc>> {
    coverage.iter().filter_map(|c| c.parse.last).map(|s| s.at).max()
}

/// Filters, prints, and decides the exit code of a read-to-the-end answer.
fn finish_batch(
    query: &mut LogsQuery,
    runs: Vec<Run>,
    coverage: &[ContainerCoverage],
    now: Option<DateTime<Utc>>,
    object: Option<&MicroserviceObject>,
) -> Result<ExitCode, AppError> {
    query.anchor_since(now);
    // One run read from its Pod and from a file (or two files) is shown once.
    let runs = crate::logs::copies::merge_copies(runs);
    let all_times = RunFilter {
        started_after: None,
        ..query.filter.clone()
    };
    let starts = || {
        runs.iter()
            .filter(|r| all_times.matches(r))
            .filter_map(|r| r.started.map(|s| s.at))
    };
    let span = (starts().min(), starts().max());
    // The format of the earliest run's lines: what tells a predecessor's runs apart.
    let first_format = runs
        .iter()
        .filter(|r| all_times.matches(r))
        .filter(|r| r.started.is_some())
        .min_by_key(|r| r.started.map(|s| s.at))
        .and_then(|r| r.records.first())
        .map(|r| r.format);
    // The latest run, when it is still open at its log's end (`running: ...`).
    let open = runs
        .iter()
        .filter(|r| all_times.matches(r))
        .max_by_key(|r| r.started.map(|s| s.at))
        .filter(|r| r.outcome == Outcome::Unknown)
        .and_then(|r| r.detail.clone())
        .filter(|d| d.starts_with("running:"));
    // A mistyped handler looks like "no run": name the handlers these logs do have.
    let other_handlers =
        (!runs.is_empty() && !runs.iter().any(|r| r.matches_handler(&query.filter.handler))).then(|| {
            let mut handlers: Vec<&str> = runs.iter().map(|r| r.handler.as_str()).collect();
            handlers.sort_unstable();
            handlers.dedup();
            format!("Handlers in these logs: {}.\n", sanitize(&handlers.join(", ")))
        });
    let selected = select(runs, &query.filter, query.last);
    let mut closing = report(query, Tally::of(&selected), coverage);
    if let Some(line) = other_handlers {
        closing.insert_str(closing.find("Coverage:\n").unwrap_or(0), &line);
    }
    if let Some(line) = object.and_then(|o| since_statement(query, o, span, first_format, open.as_deref(), coverage)) {
        closing.insert_str(
            closing.find("Coverage:\n").unwrap_or(0),
            &format!("{}\n", sanitize(&line)),
        );
    }
    print_batch(query, &selected, &closing)?;
    if !coverage.is_empty() && coverage.iter().all(|c| c.error.is_some()) {
        return Err(AppError::Undecided("no operator log could be read".into()));
    }
    Ok(exit_code(&selected))
}

/// docs/contracts.md: 1 when a problem was diagnosed — the latest run shown of some object's
/// handler is a failure or a retry (the handler is failing now); else 0.
fn exit_code(runs: &[Run]) -> ExitCode {
    let mut latest: std::collections::BTreeMap<(String, &str), &Run> = std::collections::BTreeMap::new();
    for run in runs {
        let key = (run.object.to_string(), run.handler.as_str());
        let later = latest
            .get(&key)
            .is_none_or(|l| run.started.map(|s| s.at) >= l.started.map(|s| s.at));
        if later {
            latest.insert(key, run);
        }
    }
    if latest
        .values()
        .any(|r| matches!(r.outcome, Outcome::Retrying | Outcome::Failed))
    {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// When the spec last changed, by the object's own records: `metadata.creationTimestamp` for
/// generation 1, else the latest managedFields entry that owns `spec` fields (whose time moves
/// with any field that manager owns: `exact` is false when it owns more than `spec`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecChange {
    /// When.
    pub at: DateTime<Utc>,
    /// Whether `at` is the spec change itself, or only the last write of a manager that also
    /// owns other fields (the spec changed at or before `at`).
    pub exact: bool,
    /// `created` or the entry, e.g. `kubectl-patch (Update) at 2026-11-29T17:12:30Z`.
    pub by: String,
}

/// See [`SpecChange`].
pub fn spec_change(object: &MicroserviceObject) -> Option<SpecChange> {
    let meta = &object.metadata;
    if meta.generation == Some(1) {
        let at = crate::time::from_jiff(meta.creation_timestamp.as_ref()?.0);
        return Some(SpecChange {
            at,
            exact: true,
            by: "created".into(),
        });
    }
    let entries = crate::evidence::managed_fields::entries(meta.managed_fields.as_ref());
    let (_, spec) = crate::evidence::managed_fields::latest_status_and_spec(&entries);
    let spec = spec?;
    Some(SpecChange {
        at: spec.time?,
        exact: spec.spec_only(),
        by: spec.describe(),
    })
}

/// Why runs before the object's creation are a predecessor's, by the operator whose lines they
/// are (`format`, the earliest run's): Kopf's lines and our text lines name no uid, so the time
/// tells them apart; our json lines carry `object.uid`, and the time agrees with it.
fn predecessor_basis(format: Option<crate::logs::Format>) -> &'static str {
    use crate::logs::Format;
    match format {
        Some(Format::KopfFull | Format::KopfPlain | Format::KopfJson) => "Kopf's logs carry no uid: told apart by time",
        Some(Format::OursText) => "our operator's text log lines carry no uid: told apart by time",
        Some(Format::OursJson) => "told apart by time; our operator's json lines carry the object's uid too",
        Some(Format::Unmatched | Format::Crash | Format::PythonWarning) | None => "told apart by time",
    }
}

/// "No run since the spec changed at X" — only when the logs begin before X.
fn since_statement(
    query: &LogsQuery,
    object: &MicroserviceObject,
    (first_run, last_run): (Option<DateTime<Utc>>, Option<DateTime<Utc>>),
    first_format: Option<crate::logs::Format>,
    open: Option<&str>,
    coverage: &[ContainerCoverage],
) -> Option<String> {
    let change = spec_change(object)?;
    let name = format!(
        "{}/{}",
        object.metadata.namespace.as_deref().unwrap_or(""),
        object.metadata.name.as_deref().unwrap_or("")
    );
    let handler = &query.filter.handler;
    let when = crate::time::rfc3339_seconds(change.at);
    let what = if change.exact {
        format!("the spec changed at {when} ({})", change.by)
    } else {
        format!(
            "the spec was last written by {} (that manager owns more than spec, so the spec may have changed earlier)",
            change.by
        )
    };
    let begin = crate::logs::coverage::logs_begin(coverage).map(|s| s.at);
    let created = object
        .metadata
        .creation_timestamp
        .as_ref()
        .map(|t| crate::time::from_jiff(t.0));
    let skew = crate::time::delta(crate::logs::coverage::SKEW);
    let predecessor = match (created, first_run) {
        (Some(created), Some(first)) if crate::time::plus(first, skew) < created => format!(
            " Runs before {} predate this object: they were for an earlier object with the same name ({}).",
            crate::time::rfc3339_seconds(created),
            predecessor_basis(first_format)
        ),
        _ => String::new(),
    };
    let verdict = match crate::logs::coverage::since(change.at, last_run, begin) {
        SinceVerdict::RanSince(t) => match open {
            // Started, not ended: not "ran".
            Some(detail) => format!(
                "Handler {handler} started for {name} since {what}, at {}, and has no outcome: {detail}.",
                crate::time::rfc3339_millis(t)
            ),
            None => format!(
                "Handler {handler} ran for {name} since {what}: last run started at {}.",
                crate::time::rfc3339_millis(t)
            ),
        },
        SinceVerdict::NoRunSince { logs_begin } => {
            let end = latest_line(coverage)
                .filter(|end| *end < change.at)
                .map_or(String::new(), |end| {
                    format!(
                        " They end at {}, before the change: the operator logged nothing after it.",
                        crate::time::rfc3339_millis(end)
                    )
                });
            format!(
                "No run of handler {handler} for {name} since {what}; the logs begin before it, at {}.{end}",
                crate::time::rfc3339_millis(logs_begin)
            )
        }
        SinceVerdict::CannotTell {
            logs_begin: Some(begin),
        } => format!(
            "Cannot tell whether handler {handler} ran for {name} since {what}: logs begin at {}.",
            crate::time::rfc3339_millis(begin)
        ),
        // Not "logs begin at no time (no timed line)": one plain sentence on what was read.
        SinceVerdict::CannotTell { logs_begin: None } => format!(
            "Cannot tell whether handler {handler} ran for {name} since {what}: the logs read{} hold no line with a time.",
            if query.since.is_some() { " (--since)" } else { "" }
        ),
    };
    Some(verdict + &predecessor)
}

/// The one object OBJECT names in `objects`, if exactly one.
fn named_object<'a>(query: &LogsQuery, objects: &'a [MicroserviceObject]) -> Option<&'a MicroserviceObject> {
    let selector = query.filter.object.as_ref()?;
    let mut found = objects.iter().filter(|o| {
        let key = crate::logs::ObjectKey {
            namespace: o.metadata.namespace.clone(),
            name: o.metadata.name.clone().unwrap_or_default(),
        };
        selector.matches(&key)
    });
    let one = found.next()?;
    found.next().is_none().then_some(one)
}

fn hints_of(objects: &[MicroserviceObject]) -> Vec<CauseHint> {
    objects
        .iter()
        .filter_map(|o| serde_json::to_value(o).ok())
        .flat_map(|v| crate::kopf::progress::cause_hints(&v))
        .collect()
}

/// What `logs` gathers ([`gather`]) to name the operator: the Microservices read already
/// (`objects`: causes and the spec-change statement, [`objects_in_evidence`]), no events, and
/// the operator without logs (its Pods' logs are read, or followed, by [`read_once`] and
/// [`follow`]). A bundle holds what it holds.
fn evidence_plan(objects: Vec<MicroserviceObject>) -> Needs<'static> {
    Needs {
        objects: Objects::Given {
            objects,
            no_events: "logs reads no events",
        },
        operator: Some(crate::evidence::live::Logs::None),
        everything: false,
        log_files: &[],
        progress: None,
    }
}

/// `--bundle DIR`: the `operator/logs/*.log` of the operator the resolver names for the object
/// (or `--operator`; [`crate::evidence::resolve::Resolution::owns_log`]), with the bundle's Pods for the coverage and its
/// Microservices for causes (progress annotations) and the spec-change statement.
fn from_bundle(
    query: &mut LogsQuery,
    dir: &std::path::Path,
    namespace: Option<&str>,
    container: Option<&str>,
    operator: Option<&str>,
    log_files: &[crate::logs::LogSource],
) -> Result<ExitCode, AppError> {
    let resource = query.resource.clone();
    let source = Bundle {
        dir,
        namespace,
        operator,
        selector: None,
        resource: &resource,
    };
    let snapshot = gather_bundle(
        source,
        Needs {
            log_files,
            ..evidence_plan(Vec::new())
        },
    )?;
    from_snapshot(query, &snapshot, &dir.display().to_string(), container, log_files)
}

/// The runs of the operator the resolver names in `snapshot` (a bundle's, or the cluster's with
/// `--log-file`): its logs held there (and the `--log-file`s), each read in the zone every
/// command reads it in ([`crate::evidence::Snapshot::log_zone`]). `place` names where the logs
/// are, for the errors; `given` are the `--log-file`s of this command line.
fn from_snapshot(
    query: &mut LogsQuery,
    snapshot: &crate::evidence::Snapshot,
    place: &str,
    container: Option<&str>,
    given: &[crate::logs::LogSource],
) -> Result<ExitCode, AppError> {
    let objects: &[MicroserviceObject] = snapshot.microservices.get().map_or(&[], Vec::as_slice);
    let hints = hints_of(objects);
    // The operator every command names for this bundle; only its logs (and any `--log-file`
    // the bundle holds) are read: another operator's say nothing about the object.
    let resolution = match named_object(query, objects) {
        Some(o) => snapshot.operator_for(o),
        None => snapshot.operator_for_namespace(
            query
                .filter
                .object
                .as_ref()
                .and_then(|o| o.namespace.as_deref())
                .or(snapshot.namespace.as_deref()),
        ),
    };
    query.operator = Some(resolution.label());
    let sources = snapshot_sources(snapshot, &resolution, place, container)?;
    // The resolved operator's Deployment, never the first one of the evidence (another
    // team's, whose creation would date this one's Pods).
    let deployment_created = resolution
        .deployment()
        .and_then(|op| op.split_once("/deployment/"))
        .and_then(|(ns, name)| {
            snapshot
                .operator
                .deployments
                .get()
                .into_iter()
                .flatten()
                .find(|d| d.metadata.namespace.as_deref() == Some(ns) && d.metadata.name.as_deref() == Some(name))
        })
        .and_then(|d| d.metadata.creation_timestamp.as_ref())
        .map(|t| crate::time::from_jiff(t.0));
    let mut runs = Vec::new();
    let mut coverage = Vec::new();
    for source in &sources {
        let label = SourceLabel {
            pod: Some(source.pod.clone()),
            container: Some(source.container.clone()),
            previous: source.previous,
            path: None,
        };
        let mut stream = LogStream::new(label, query.config.clone(), hints.clone()).in_zone(snapshot.log_zone(source));
        runs.extend(stream.read_all(source.text.as_bytes()).map_err(|e| AppError::Io {
            context: "read a bundle log".into(),
            source: e,
        })?);
        let notes = source_notes(snapshot, source, &sources, deployment_created, given);
        coverage.push(ContainerCoverage::of(&stream, None, notes));
    }
    let now = snapshot.now().or_else(|| latest_line(&coverage));
    let object = named_object(query, objects);
    finish_batch(query, runs, &coverage, now, object)
}

/// The logs of `snapshot` that `resolution`'s operator owns, of `container` when `-c` names
/// one. Errors (exit 3) when there are none, saying why: none of that operator in `place`, no
/// container of that name (naming the containers there are), or the logs' gap.
fn snapshot_sources<'a>(
    snapshot: &'a crate::evidence::Snapshot,
    resolution: &crate::evidence::resolve::Resolution,
    place: &str,
    container: Option<&str>,
) -> Result<Vec<&'a crate::logs::LogSource>, AppError> {
    let keep = |source: &crate::logs::LogSource| resolution.owns_log(snapshot, source);
    let Some(all) = snapshot.operator.logs.get() else {
        let gap = snapshot.operator.logs.gap().map(|g| g.to_string()).unwrap_or_default();
        return Err(AppError::Undecided(format!(
            "{place}: no operator logs: {gap}; Operator: {}",
            resolution.line()
        )));
    };
    let sources: Vec<_> = all
        .iter()
        .filter(|s| container.is_none_or(|c| s.container == c))
        .filter(|s| keep(s))
        .collect();
    if !sources.is_empty() {
        return Ok(sources);
    }
    if resolution.scaled_to_zero(snapshot) {
        return Err(AppError::Undecided(format!(
            "{place}: the operator is scaled to zero (spec.replicas=0): it runs no Pod, so there is no log to read; Operator: {}",
            resolution.line()
        )));
    }
    if resolution.deployment().is_none() {
        return Err(AppError::Undecided(format!(
            "{place}: no log of the operator in operator/logs/; Operator: {}",
            resolution.line()
        )));
    }
    // `-c` naming a container the bundle's operator logs are not of: say which containers they
    // are of, as one error (nothing on stdout).
    let mut held: Vec<&str> = all
        .iter()
        .filter(|s| keep(s) && s.container != crate::logs::file::FILE_CONTAINER)
        .map(|s| s.container.as_str())
        .collect();
    held.sort_unstable();
    held.dedup();
    Err(AppError::Undecided(match container {
        Some(c) if !held.is_empty() => format!(
            "-c {c}: the operator's Pods have no container {c} in {place}/operator/logs/; their containers: {}",
            held.join(", ")
        ),
        _ => format!(
            "{place}: no operator log{} in operator/logs/",
            container.map(|c| format!(" of container {c}")).unwrap_or_default()
        ),
    }))
}

/// What the coverage says of one log of `snapshot` beside its lines: its Pod's state (restarts,
/// a previous container's log, `deployment_created`), or that it was read from a file, or that
/// its Pod is not in evidence. `sources` are the logs read; `given` the `--log-file`s of this
/// command line (a bundle's other files were given to collect).
fn source_notes(
    snapshot: &crate::evidence::Snapshot,
    source: &crate::logs::LogSource,
    sources: &[&crate::logs::LogSource],
    deployment_created: Option<DateTime<Utc>>,
    given: &[crate::logs::LogSource],
) -> Vec<String> {
    let given_now = given
        .iter()
        .any(|g| g.pod == source.pod && g.container == source.container);
    let pods: &[Pod] = snapshot.operator.pods.get().map_or(&[], Vec::as_slice);
    let has_previous = sources
        .iter()
        .any(|s| s.previous && s.pod == source.pod && s.container == source.container);
    match pods
        .iter()
        .find(|p| p.metadata.name.as_deref() == Some(source.pod.as_str()))
    {
        Some(pod) if !source.previous => {
            crate::logs::live::pod_notes(pod, &source.container, has_previous, deployment_created)
        }
        Some(_) => Vec::new(),
        None if source.container == crate::logs::file::FILE_CONTAINER => match snapshot.source {
            crate::evidence::Provenance::Bundle(_) if !given_now => {
                vec!["read from a file (`--log-file` of collect), not from a Pod".into()]
            }
            crate::evidence::Provenance::Bundle(_) | crate::evidence::Provenance::Live { .. } => {
                vec!["read from a file (`--log-file`), not from a Pod".into()]
            }
        },
        None => vec!["this Pod is not in operator/pods.json (replaced before the bundle was made?)".into()],
    }
}

/// Which operator and container to read: `--operator` (read even when it runs no operator we
/// recognise), else the one the resolver decides for the object's namespace
/// ([`crate::evidence::resolve`], the same answer `status` and `explain-events` give), from
/// the Deployments, their Pods and the Leases. `objects` are the Microservices in evidence (the
/// named one gives its managedFields). Errors (exit 3) when no operator serves the namespace
/// (naming what exists and what each watches), when several serve it alike, when the operator
/// is a process outside the cluster (no Pod log: `--log-file`), or when the
/// Deployments cannot be read.
async fn resolve_target(
    client: &Client,
    global: &GlobalArgs,
    args: &LogsArgs,
    (objects, object): (&[MicroserviceObject], Option<&MicroserviceObject>),
    resource: &crate::resource::identity::ResourceId,
) -> Result<Target, AppError> {
    use crate::evidence::live::label_selector;
    use crate::evidence::operator::recognise;
    let namespace = global
        .namespaces
        .first()
        .cloned()
        .or_else(|| object.and_then(|o| o.metadata.namespace.clone()));
    // The `--operator` Deployment must exist: read it first.
    let given = match &args.operator {
        Some(spec) => Some(given_operator(client, spec).await?),
        None => None,
    };
    let snapshot = operator_evidence(client, args, objects, namespace.clone(), resource).await?;
    let deployment = match given {
        Some(deployment) => deployment,
        None => resolved_deployment(&snapshot, object, namespace.as_deref())?,
    };
    let operator = recognise(&deployment);
    let ns = deployment.metadata.namespace.clone().unwrap_or_default();
    let name = deployment.metadata.name.clone().unwrap_or_default();
    let pod_spec = deployment.spec.as_ref().and_then(|s| s.template.spec.as_ref());
    let first_container = pod_spec.and_then(|s| s.containers.first()).map(|c| c.name.clone());
    if let (Some(wanted), Some(spec)) = (&args.container, pod_spec) {
        check_container(wanted, spec, &format!("{ns}/deployment/{name}"))?;
    }
    // The Pod holding the Lease that governs the namespace: the one that handles.
    let leader = operator
        .as_ref()
        .and_then(|op| lease_holder_pod(&snapshot, op, namespace.as_deref().unwrap_or(&ns), &deployment));
    let container = args
        .container
        .clone()
        .or(operator.map(|o| o.container))
        .or(first_container)
        .ok_or_else(|| AppError::Undecided(format!("Deployment {ns}/{name} has no container")))?;
    let selector = label_selector(&deployment);
    if selector.is_empty() {
        return Err(AppError::Undecided(format!(
            "Deployment {ns}/{name} has no matchLabels selector"
        )));
    }
    Ok(Target {
        leader,
        describe: format!("{ns}/deployment/{name}"),
        created: deployment
            .metadata
            .creation_timestamp
            .as_ref()
            .map(|t| crate::time::from_jiff(t.0)),
        namespace: ns,
        selector,
        container,
    })
}

/// The Deployment `--operator NS/deployment/NAME` names, read (exit 3 when it cannot be).
async fn given_operator(client: &Client, spec: &str) -> Result<Deployment, AppError> {
    let (ns, name) = crate::evidence::live::parse_operator_spec(spec).map_err(|e| AppError::Usage(e.to_string()))?;
    Api::<Deployment>::namespaced(client.clone(), &ns)
        .get(&name)
        .await
        .map_err(|e| AppError::kube(format!("get Deployment {ns}/{name}"), e))
}

/// What the resolver reads of the operators for `namespace` (Deployments, their Pods, the
/// Leases; `--operator`'s when given), with the Microservices `objects` given, no events.
async fn operator_evidence(
    client: &Client,
    args: &LogsArgs,
    objects: &[MicroserviceObject],
    namespace: Option<String>,
    resource: &crate::resource::identity::ResourceId,
) -> Result<crate::evidence::Snapshot, AppError> {
    use crate::evidence::live;
    let scope = live::LiveScope {
        namespace,
        operator: args.operator.clone(),
        resource: resource.clone(),
        ..Default::default()
    };
    // `captured_at`: the API server's clock, from the Deployments' list (add_operator).
    // Not reviewed: through this scope nothing is listed but the operator (the objects are
    // given, no events are read).
    let access = live::CallerAccess {
        list_microservices: false,
        list_events: false,
    };
    let source = EvidenceSource::Live {
        client,
        access: &access,
        scope: &scope,
    };
    gather(source, evidence_plan(objects.to_vec()))
        .await
        .map_err(|e| e.into_app(|e| AppError::kube("cannot read the operator", e)))
}

/// The operator Deployment the resolver decides in `snapshot` for `object` (else for
/// `namespace`), as `status` and `explain-events` decide it. Errors (exit 3) say why there is
/// none to read: a process outside the cluster (read its log with `--log-file`), none serves, several
/// serve alike, the operators are unknown, or the chosen one is not among the Deployments read.
fn resolved_deployment(
    snapshot: &crate::evidence::Snapshot,
    object: Option<&MicroserviceObject>,
    namespace: Option<&str>,
) -> Result<Deployment, AppError> {
    use crate::evidence::resolve::Verdict;
    let resolution = match object {
        Some(o) => snapshot.operator_for(o),
        None => snapshot.operator_for_namespace(namespace),
    };
    let chosen = match resolution.verdict {
        Verdict::Deployment => resolution.deployment().map(str::to_string),
        Verdict::Process => {
            return Err(AppError::Undecided(format!(
                "Operator: {}; its log is in no Pod: read it with --log-file FILE",
                resolution.line()
            )));
        }
        Verdict::NoneServes => {
            return Err(AppError::Undecided(format!(
                "Operator: {}; give --operator NS/deployment/NAME to read one anyway",
                resolution.line()
            )));
        }
        Verdict::Ambiguous => return Err(AppError::Undecided(format!("Operator: {}", resolution.line()))),
        Verdict::Unknown => {
            return Err(AppError::Undecided(format!(
                "cannot look for the operator: {}; give --operator NS/deployment/NAME",
                resolution.line()
            )));
        }
    };
    let found = snapshot.operator.deployments.get().into_iter().flatten().find(|d| {
        chosen.as_deref()
            == Some(
                format!(
                    "{}/deployment/{}",
                    d.metadata.namespace.as_deref().unwrap_or(""),
                    d.metadata.name.as_deref().unwrap_or("")
                )
                .as_str(),
            )
    });
    found.cloned().ok_or_else(|| {
        AppError::Undecided(format!(
            "the operator {} is not among the Deployments read",
            chosen.unwrap_or_default()
        ))
    })
}

/// `-c wanted` naming a container the operator's Pods (`spec`, of the Deployment `describe`) do
/// not have: one error naming it and the containers they have (init containers too, as kubectl
/// logs -c takes them), before any log is read, rather than "no run ..." on stdout and then "no
/// operator log could be read".
fn check_container(wanted: &str, spec: &k8s_openapi::api::core::v1::PodSpec, describe: &str) -> Result<(), AppError> {
    let names: Vec<&str> = spec
        .containers
        .iter()
        .chain(spec.init_containers.iter().flatten())
        .map(|c| c.name.as_str())
        .collect();
    if names.contains(&wanted) {
        return Ok(());
    }
    Err(AppError::Undecided(format!(
        "-c {wanted}: the Pods of {describe} have no container {wanted}; their containers: {}",
        names.join(", ")
    )))
}

/// The Pod of `deployment` that holds the Lease governing `namespace` for `operator` (its
/// holder identity `POD_...`, a Pod of the Deployment by [`crate::evidence::pods::is_named_pod_of`]),
/// when the Lease is in `snapshot`; `None` otherwise.
fn lease_holder_pod(
    snapshot: &crate::evidence::Snapshot,
    operator: &crate::evidence::operator::OperatorRef,
    namespace: &str,
    deployment: &k8s_openapi::api::apps::v1::Deployment,
) -> Option<String> {
    use crate::evidence::operator::Leadership;
    let Leadership::Lease {
        namespace: lns,
        name: lname,
    } = operator.leadership_in(namespace)
    else {
        return None;
    };
    let lease = snapshot.operator.leases.get()?.iter().find(|l| {
        l.metadata.namespace.as_deref() == Some(lns.as_str()) && l.metadata.name.as_deref() == Some(lname.as_str())
    })?;
    let holder = lease
        .spec
        .as_ref()?
        .holder_identity
        .as_deref()
        .filter(|h| !h.is_empty())?;
    let pod = holder.rsplit_once('_').map_or(holder, |(pod, _)| pod);
    let pods = snapshot.operator.pods.get().map_or(&[][..], Vec::as_slice);
    crate::evidence::pods::is_named_pod_of(deployment, pod, pods).then(|| pod.to_string())
}

/// The Microservices that give causes and the spec-change statement: the named object (a
/// `get`), or those of `-n NS`; none otherwise. Failures are notes, not errors, except that a
/// named object that does not exist is "object not found" (exit 3).
async fn objects_in_evidence(
    client: &Client,
    query: &LogsQuery,
    namespace: Option<&str>,
) -> Result<(Vec<MicroserviceObject>, Option<String>), AppError> {
    let selector = query.filter.object.as_ref();
    match (
        selector.and_then(|o| o.namespace.as_deref().map(|ns| (ns, o.name.as_str()))),
        namespace,
    ) {
        (Some((ns, name)), _) => match get_object(client, &query.resource, ns, name).await {
            Ok(o) => Ok((vec![o], None)),
            Err(kube::Error::Api(s)) if s.code == 404 => {
                Err(AppError::Undecided(query.resource.not_found_message(Some(ns), name)))
            }
            Err(e) => Ok((
                Vec::new(),
                Some(format!(
                    "cannot get {} {ns}/{name}: {}",
                    query.resource.kind,
                    describe_error(&e)
                )),
            )),
        },
        (None, Some(ns)) => match list_objects(client, &query.resource, ns).await {
            Ok(items) => Ok((items, None)),
            Err(e) => Ok((
                Vec::new(),
                Some(format!(
                    "cannot list {} in {ns}: {}",
                    query.resource.plural,
                    describe_error(&e)
                )),
            )),
        },
        (None, None) => Ok((Vec::new(), None)),
    }
}

/// One object of `resource` in `ns`, by a GET of its URL.
async fn get_object(
    client: &Client,
    resource: &crate::resource::identity::ResourceId,
    ns: &str,
    name: &str,
) -> Result<MicroserviceObject, kube::Error> {
    let request = kube::core::Request::new(resource.url_path(Some(ns)))
        .get(name, &Default::default())
        .map_err(kube::Error::BuildRequest)?;
    crate::client::lists::send_json::<MicroserviceObject>(client, request)
        .await
        .map(|(o, _)| o)
}

/// The objects of `resource` in `ns`, every page.
async fn list_objects(
    client: &Client,
    resource: &crate::resource::identity::ResourceId,
    ns: &str,
) -> Result<Vec<MicroserviceObject>, kube::Error> {
    let mut items = Vec::new();
    crate::client::lists::list_pages(client, &resource.url_path(Some(ns)), Default::default(), |page, _| {
        items.extend(page)
    })
    .await?;
    Ok(items)
}

/// What to ask `pods/log` for: `--previous`, `--since` (whole seconds, at least 1) and `--tail`
/// (`tailLines`; -1, as kubectl's, is every line).
fn fetch(args: &LogsArgs, query: &LogsQuery) -> Fetch {
    Fetch {
        previous: args.previous,
        since_seconds: query.since.map(|d| d.as_secs().max(1) as i64),
        tail_lines: args.tail.filter(|n| *n >= 0),
    }
}

/// The operator's Pods, read to the end or followed; with `--log-file`, the files beside the
/// cluster's evidence instead.
async fn from_cluster(
    global: &GlobalArgs,
    args: &LogsArgs,
    query: &mut LogsQuery,
    files: &[crate::logs::LogSource],
) -> Result<ExitCode, AppError> {
    let usage = if args.follow {
        Usage::Controller
    } else {
        Usage::Diagnostics
    };
    let connection = global.connection();
    let (client, config) = crate::client::client(&connection, usage).await?;
    // The first call says whether the server answers at all, as every subcommand says it
    // (`cannot reach the API server URL (context NAME): ...`); the operator lookup after it
    // would otherwise report a dead server as a missing operator.
    client
        .apiserver_version()
        .await
        .map_err(|e| crate::client::unreachable(&connection, &config, e))?;
    super::check_operator_exists(&client, &connection, &config, args.operator.as_deref()).await?;
    query.settle_object(crate::evidence::target::live(&client, args.resource.resource.as_deref()).await?)?;
    // The namespace as every command takes it (crate::cli::namespace_in_context): NS/NAME's or
    // -n's, else the kubeconfig context's.
    let ns = crate::cli::namespace_in_context(false, query.given_namespace(global), &config.default_namespace)
        .unwrap_or_default();
    if let Some(object) = &mut query.filter.object {
        object.namespace = Some(ns.clone());
    }
    let mut global = global.clone();
    global.namespaces = vec![ns.clone()];
    let objects = objects_in_evidence(&client, query, Some(&ns)).await?;
    if files.is_empty() {
        from_pods(&client, &global, args, query, objects).await
    } else {
        beside_cluster(
            &client,
            args,
            query,
            files,
            &ns,
            objects,
            &config.cluster_url.to_string(),
        )
        .await
    }
}

/// `--log-file` live: the files beside the cluster's evidence, as status reads them (the
/// operator, its Pods and Deployment for the files' clock, the object's managedFields), from
/// the cluster `place` in namespace `ns`; `objects` are the Microservices in evidence with a
/// note when they could not be read. (--follow with --log-file is refused in run.)
async fn beside_cluster(
    client: &Client,
    args: &LogsArgs,
    query: &mut LogsQuery,
    files: &[crate::logs::LogSource],
    ns: &str,
    (objects, objects_note): (Vec<MicroserviceObject>, Option<String>),
    place: &str,
) -> Result<ExitCode, AppError> {
    let scope = crate::evidence::live::LiveScope {
        namespace: Some(ns.to_string()),
        operator: args.operator.clone(),
        resource: query.resource.clone(),
        ..Default::default()
    };
    let access = crate::evidence::live::CallerAccess {
        list_microservices: false,
        list_events: false,
    };
    let source = EvidenceSource::Live {
        client,
        access: &access,
        scope: &scope,
    };
    let snapshot = gather(
        source,
        Needs {
            log_files: files,
            ..evidence_plan(objects)
        },
    )
    .await
    .map_err(|e| e.into_app(|e| AppError::kube("cannot read the operator", e)))?;
    if let Some(note) = &objects_note {
        crate::commands::say(format_args!("note: {}", sanitize(note)));
    }
    from_snapshot(query, &snapshot, place, args.container.as_deref(), files)
}

/// The runs in the logs of the operator's Pods ([`resolve_target`] finds them), read to the end
/// or followed (`-f`); `objects` are the Microservices in evidence, with a note when they could
/// not be read.
async fn from_pods(
    client: &Client,
    global: &GlobalArgs,
    args: &LogsArgs,
    query: &mut LogsQuery,
    (objects, objects_note): (Vec<MicroserviceObject>, Option<String>),
) -> Result<ExitCode, AppError> {
    let target = resolve_target(
        client,
        global,
        args,
        (&objects, named_object(query, &objects)),
        &query.resource,
    )
    .await?;
    query.operator = Some(target.describe.clone());
    let hints = hints_of(&objects);
    let fetch = fetch(args, query);
    if let Some(note) = &objects_note {
        crate::commands::say(format_args!("note: {}", sanitize(note)));
    }
    if args.follow {
        return follow_cluster(client, query, &target, &fetch, &hints).await;
    }
    let (pods, server_now) = crate::logs::live::pods(client, &target)
        .await
        .map_err(|e| AppError::kube(format!("list the Pods of {}", target.describe), e))?;
    if pods.is_empty() {
        return Err(AppError::Undecided(format!(
            "{} has no Pods: no logs to read",
            target.describe
        )));
    }
    let (runs, coverage) = read_once(client, &target, &pods, &fetch, &query.config, &hints).await;
    let object = named_object(query, &objects);
    // "Now" is the API server's clock, else ours.
    finish_batch(
        query,
        runs,
        &coverage,
        Some(server_now.unwrap_or_else(Utc::now)),
        object,
    )
}

/// Follows the operator's Pods until Ctrl-C, printing runs as they end.
async fn follow_cluster(
    client: &Client,
    query: &mut LogsQuery,
    target: &Target,
    fetch: &Fetch,
    hints: &[CauseHint],
) -> Result<ExitCode, AppError> {
    let since = query.since;
    let mut shown = Tally::default();
    let mut failure = None;
    let stop = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let coverage = follow(
        client,
        target,
        fetch,
        &query.config.clone(),
        hints,
        stop,
        &mut |event| match event {
            Followed::Runs(runs) => {
                if let Err(e) = emit(query, since, &runs, &mut shown) {
                    failure.get_or_insert(e);
                }
            }
            Followed::Note(note) => crate::commands::say(format_args!("note: {}", sanitize(&note))),
        },
    )
    .await;
    if let Some(e) = failure {
        return Err(e);
    }
    let closing = report(query, shown, &coverage);
    match query.output {
        Output::Human { .. } => write_stdout(&closing)?,
        _ => crate::commands::write_stderr(&closing),
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints the runs for the chosen output, then the closing report: to stdout for humans, to
/// stderr otherwise.
fn print_batch(query: &LogsQuery, runs: &[Run], closing: &str) -> Result<(), AppError> {
    let mut out = String::new();
    match query.output {
        // Repeated runs of one kind as one line each (issue 18 trial P6: 2,268 lines of one
        // retry), the others in full.
        Output::Human { color, verbose: false } => {
            let entries = view::aggregate(runs);
            for entry in &entries {
                match entry {
                    view::Entry::One(run) => out.push_str(&view::human_block(run, color)),
                    view::Entry::Repeated(group) => out.push_str(&view::repeated_line(group, color)),
                }
                out.push('\n');
            }
            if entries.iter().any(|e| matches!(e, view::Entry::Repeated(_))) {
                out.push_str("Repeated runs are one line each: --verbose prints every run, -o json holds them all.\n");
            }
        }
        _ => {
            for run in runs {
                out.push_str(&render_run(&query.output, run)?);
                if matches!(query.output, Output::Human { .. }) {
                    out.push('\n');
                }
            }
        }
    }
    match query.output {
        Output::Human { .. } => {
            out.push_str(closing);
            write_stdout(&out)
        }
        Output::Raw | Output::Json | Output::Template { .. } => {
            write_stdout(&out)?;
            crate::commands::write_stderr(closing);
            Ok(())
        }
    }
}

fn render_run(output: &Output, run: &Run) -> Result<String, AppError> {
    Ok(match output {
        Output::Human { color, .. } => view::human_block(run, *color),
        Output::Raw => view::raw_lines(run),
        Output::Json => view::json_line(run),
        Output::Template { template, as_json } => {
            let document = serde_json::to_value(view::run_json(run)).expect("a run always serialises");
            template
                .render(&document, *as_json)
                .map_err(|e| AppError::Usage(e.to_string()))?
        }
    })
}

/// The answer's closing lines: what was found, and what the logs cover.
pub fn report(query: &LogsQuery, tally: Tally, coverage: &[ContainerCoverage]) -> String {
    let who = match &query.filter.object {
        Some(o) => format!("handler {} for {}", query.filter.handler, o.describe()),
        None => format!("handler {}", query.filter.handler),
    };
    // The filters that left runs out, so that "no run" is not read as "the handler never ran"
    // beside a statement of its last run (the spec-change sentence counts every run).
    let mut filters = Vec::new();
    if let Some(since) = query.since {
        filters.push(format!("--since {}", crate::logs::runs::humantime(since)));
    }
    if !query.filter.causes.is_empty() {
        let causes: Vec<&str> = query
            .filter
            .causes
            .iter()
            .map(|c| c.map_or("unknown", |c| c.as_str()))
            .collect();
        filters.push(format!("--cause {}", causes.join(",")));
    }
    if !query.filter.outcomes.is_empty() {
        let outcomes: Vec<String> = query.filter.outcomes.iter().map(ToString::to_string).collect();
        filters.push(format!("--outcome {}", outcomes.join(",")));
    }
    let mut out = if tally.total() == 0 && !filters.is_empty() {
        format!(
            "No run of {} in these logs matches {}.\n",
            sanitize(&who),
            filters.join(" and ")
        )
    } else if tally.total() == 0 {
        format!("No run of {} in these logs.\n", sanitize(&who))
    } else {
        format!("{}: {tally}.\n", sanitize(&who))
    };
    if let Some(op) = &query.operator {
        out.push_str(&format!("Operator: {}\n", sanitize(op)));
    }
    out.push_str("Coverage:\n");
    for c in coverage {
        for line in c.describe() {
            out.push_str(&format!("  {}\n", sanitize(&line)));
        }
    }
    let local: Vec<&ContainerCoverage> = coverage.iter().filter(|c| c.local_times()).collect();
    if !local.is_empty() {
        let mut zones: Vec<crate::logs::zone::LogZone> = Vec::new();
        for zone in local.iter().filter_map(|c| c.zone.clone()) {
            if !zones.contains(&zone) {
                zones.push(zone);
            }
        }
        let marker = [crate::logs::Clock::OperatorLocal.describe()];
        if let Some(note) = crate::logs::local_time_note(marker, &zones) {
            out.push_str(&format!("Note: {note}\n"));
        }
    }
    out
}

/// Follows one file (or stdin): runs are printed as they end; at the end of stdin the coverage.
fn follow_file(query: &mut LogsQuery, path: &str) -> Result<ExitCode, AppError> {
    let label = SourceLabel {
        path: Some(path.to_string()),
        ..Default::default()
    };
    let mut reader = crate::logs::file::open(path, "--log-file")?;
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
    let since = query.since;
    let mut stream = LogStream::new(label.clone(), query.config.clone(), Vec::new());
    let mut shown = Tally::default();
    let mut last_data = Instant::now();
    let linger = crate::time::delta(LINGER);
    loop {
        let released = match rx.recv_timeout(IDLE) {
            Ok(Some(chunk)) => {
                stream.push_bytes(&chunk);
                last_data = Instant::now();
                let cutoff = stream_latest(&stream).map(|t| crate::time::minus(t, linger));
                cutoff.map(|c| stream.drain(Some(c))).unwrap_or_default()
            }
            Ok(None) | Err(mpsc::RecvTimeoutError::Disconnected) => {
                stream.finish();
                let runs = stream.drain(None);
                emit(query, since, &runs, &mut shown)?;
                break;
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                stream.flush_record();
                if let Some(latest) = stream_latest(&stream) {
                    let quiet = crate::time::delta(last_data.elapsed());
                    stream.expire(latest + quiet);
                }
                stream.drain(None)
            }
        };
        emit(query, since, &released, &mut shown)?;
    }
    let coverage = [ContainerCoverage::of(&stream, None, Vec::new())];
    let report = report(query, shown, &coverage);
    match query.output {
        Output::Human { .. } => write_stdout(&report)?,
        _ => crate::commands::write_stderr(&report),
    }
    Ok(ExitCode::SUCCESS)
}

fn stream_latest(stream: &LogStream) -> Option<DateTime<Utc>> {
    stream.parse_stats().last.map(|s| s.at)
}

/// Prints released runs that pass the filters, counting them for the closing line.
fn emit(query: &mut LogsQuery, since: Option<Duration>, runs: &[Run], shown: &mut Tally) -> Result<(), AppError> {
    if since.is_some() {
        query.anchor_since(Some(Utc::now()));
    }
    let mut out = String::new();
    for run in runs.iter().filter(|r| query.filter.matches(r)) {
        out.push_str(&render_run(&query.output, run)?);
        if matches!(query.output, Output::Human { .. }) {
            out.push('\n');
        }
        shown.add(run.outcome);
    }
    if out.is_empty() { Ok(()) } else { write_stdout(&out) }
}

#[cfg(test)]
mod tests {
    //! Finding the operator against a mocked API server.

    use clap::Parser;
    use serde_json::{Value, json};

    use super::*;
    use crate::cli::{Cli, Command};
    use crate::client::fake::fake_api;

    fn parse(args: &[&str]) -> (GlobalArgs, LogsArgs) {
        let cli =
            Cli::try_parse_from([&["kubectl-microservice", "logs", "--handler", "accept"], args].concat()).unwrap();
        match cli.command {
            Command::Logs(a) => (cli.global, a),
            _ => unreachable!(),
        }
    }

    fn deployment(ns: &str, name: &str, command: &[&str]) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": ns, "creationTimestamp": "2026-11-29T16:00:00Z"},
            "spec": {"selector": {"matchLabels": {"app": name}},
                "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [
                    {"name": "sidecar", "image": "envoy"},
                    {"name": "operator", "image": "x", "command": command}]}}}})
    }

    fn list(kind: &str, items: Vec<Value>) -> String {
        json!({"apiVersion": "v1", "kind": kind, "metadata": {}, "items": items}).to_string()
    }

    const FORBIDDEN: &str = r#"{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,"message":"forbidden"}"#;

    #[test]
    fn tail_counts_lines_as_kubectl_and_last_counts_runs() {
        let (global, args) = parse(&["--tail", "20", "--last", "3"]);
        let query = LogsQuery::new(&global, &args, false).unwrap();
        assert_eq!(fetch(&args, &query).tail_lines, Some(20));
        assert_eq!(query.last, Some(3));
        // The old name of --tail still works; -1 is every line, as kubectl's.
        let (global, args) = parse(&["--log-lines", "7"]);
        assert_eq!(
            fetch(&args, &LogsQuery::new(&global, &args, false).unwrap()).tail_lines,
            Some(7)
        );
        let (global, args) = parse(&["--tail", "-1"]);
        assert_eq!(
            fetch(&args, &LogsQuery::new(&global, &args, false).unwrap()).tail_lines,
            None
        );
        let (global, args) = parse(&["--tail", "0", "-f"]);
        assert_eq!(
            fetch(&args, &LogsQuery::new(&global, &args, false).unwrap()).tail_lines,
            Some(0)
        );
        for (bad, needle) in [
            (&["--tail", "-2"][..], "-2"),
            (&["--tail", "x"][..], "x"),
            (&["--last", "2", "-f"][..], "--last"),
            (&["--last", "-1"][..], "-1"),
        ] {
            let err = Cli::try_parse_from([&["kubectl-microservice", "logs", "--handler", "accept"], bad].concat())
                .unwrap_err();
            assert_eq!(err.exit_code(), 2, "{bad:?}");
            assert!(err.to_string().contains(needle), "{bad:?}: {err}");
        }
    }

    /// Two Deployments serve `todo`; the Lease `todo/microservice-operator` is held by a Pod of
    /// one: that one is read, its holder first.
    #[tokio::test]
    async fn the_lease_holder_decides_between_two_that_serve_the_namespace() {
        let (client, seen) = fake_api(|path, _| match path {
            "/apis/coordination.k8s.io/v1/namespaces/todo/leases/microservice-operator" => (
                200,
                json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                    "metadata": {"name": "microservice-operator", "namespace": "todo"},
                    "spec": {"holderIdentity": "op-7d9f8b-x2x4z_0123456789abcdef", "leaseDurationSeconds": 15,
                             "renewTime": "2026-11-29T17:19:59.000000Z"}})
                .to_string(),
            ),
            "/apis/apps/v1/deployments" => (
                200,
                list(
                    "DeploymentList",
                    vec![
                        deployment("ops", "op", &["kubectl-microservice", "operate", "--namespace", "todo"]),
                        deployment(
                            "ops",
                            "spare",
                            &["kubectl-microservice", "operate", "--namespace", "todo"],
                        ),
                    ],
                ),
            ),
            _ => (404, "{}".into()),
        });
        let (global, args) = parse(&["-n", "todo"]);
        let target = resolve_target(&client, &global, &args, (&[], None), &Default::default())
            .await
            .unwrap();
        assert_eq!(
            (
                target.namespace.as_str(),
                target.selector.as_str(),
                target.container.as_str()
            ),
            ("ops", "app=op", "operator")
        );
        assert_eq!(target.leader.as_deref(), Some("op-7d9f8b-x2x4z"));
        assert_eq!(target.describe, "ops/deployment/op");
        let seen = seen.lock().unwrap().clone();
        assert!(
            seen.iter().all(|u| !u.contains("/pods/") && !u.ends_with("/log")),
            "no log is read to decide: {seen:?}"
        );
    }

    #[tokio::test]
    async fn without_a_lease_deployments_running_kopf_or_ours_are_found() {
        let (client, _) = fake_api(|path, _| match path {
            "/apis/apps/v1/deployments" => (
                200,
                list(
                    "DeploymentList",
                    vec![
                        deployment("web", "frontend", &["nginx"]),
                        deployment(
                            "store",
                            "catalog-operator",
                            &["kopf", "run", "--standalone", "--namespace=store", "/src/operator.py"],
                        ),
                    ],
                ),
            ),
            _ => (404, "{}".into()),
        });
        let (global, args) = parse(&["-c", "operator"]);
        let target = resolve_target(&client, &global, &args, (&[], None), &Default::default())
            .await
            .unwrap();
        assert_eq!(target.describe, "store/deployment/catalog-operator");
        assert_eq!(target.leader, None);
        let (global, args) = parse(&["-n", "store"]);
        let target = resolve_target(&client, &global, &args, (&[], None), &Default::default())
            .await
            .unwrap();
        assert_eq!(target.describe, "store/deployment/catalog-operator");
    }

    /// The defect of issue 11 item 1: an operator of another namespace is never read; the
    /// answer names what exists and what each watches.
    #[tokio::test]
    async fn an_operator_of_another_namespace_is_never_read() {
        let (client, seen) = fake_api(|path, _| match path {
            "/apis/apps/v1/deployments" => (
                200,
                list(
                    "DeploymentList",
                    vec![
                        deployment(
                            "team-b",
                            "shop-operator",
                            &["kubectl-microservice", "operate", "-n", "shop"],
                        ),
                        deployment("team-c", "catalog", &["kopf", "run", "--namespace=store", "op.py"]),
                    ],
                ),
            ),
            _ => (404, "{}".into()),
        });
        let (global, args) = parse(&["-n", "todo"]);
        let err = resolve_target(&client, &global, &args, (&[], None), &Default::default())
            .await
            .unwrap_err();
        assert_eq!(err.exit_code(), 3);
        let text = err.to_string();
        assert!(
            text.contains("no operator serves namespace todo")
                && text.contains("team-b/deployment/shop-operator watches shop")
                && text.contains("team-c/deployment/catalog watches store"),
            "{text}"
        );
        let seen = seen.lock().unwrap().clone();
        assert!(
            seen.iter().all(|u| !u.contains("/namespaces/team-")),
            "nothing of theirs is read: {seen:?}"
        );
    }

    #[tokio::test]
    async fn two_operators_cannot_be_decided_and_none_is_not_found() {
        let two = list(
            "DeploymentList",
            vec![
                deployment("a", "op-a", &["kopf", "run", "x.py"]),
                deployment("b", "op-b", &["kubectl-microservice", "operate"]),
            ],
        );
        let (client, _) = fake_api(move |path, _| match path {
            "/apis/apps/v1/deployments" => (200, two.clone()),
            _ => (404, "{}".into()),
        });
        let (global, args) = parse(&[]);
        let err = resolve_target(&client, &global, &args, (&[], None), &Default::default())
            .await
            .unwrap_err();
        assert_eq!(err.exit_code(), 3);
        let text = err.to_string();
        assert!(
            text.contains("a/deployment/op-a") && text.contains("b/deployment/op-b") && text.contains("--operator"),
            "{text}"
        );

        let (client, _) = fake_api(|path, _| match path {
            "/apis/apps/v1/deployments" => (
                200,
                list("DeploymentList", vec![deployment("web", "frontend", &["nginx"])]),
            ),
            _ => (403, FORBIDDEN.into()),
        });
        let err = resolve_target(&client, &global, &args, (&[], None), &Default::default())
            .await
            .unwrap_err();
        assert_eq!(err.exit_code(), 3);
        assert!(err.to_string().contains("no operator serves any namespace"), "{err}");
    }

    #[tokio::test]
    async fn an_explicit_operator_is_read_even_when_not_recognised() {
        let (client, seen) = fake_api(|path, _| {
            match path {
            "/apis/apps/v1/namespaces/ops/deployments/custom" => (200, deployment("ops", "custom", &["python", "/op.py"]).to_string()),
            "/apis/coordination.k8s.io/v1/leases" => (200, list("LeaseList", vec![])),
            _ => (404, r#"{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,"message":"not found"}"#.into()),
        }
        });
        let (global, args) = parse(&["--operator", "ops/deployment/custom"]);
        let target = resolve_target(&client, &global, &args, (&[], None), &Default::default())
            .await
            .unwrap();
        // Not recognised: the first container, unless -c says otherwise.
        assert_eq!(target.container, "sidecar");
        assert!(
            seen.lock()
                .unwrap()
                .iter()
                .any(|u| u.starts_with("/apis/apps/v1/namespaces/ops/deployments/custom"))
        );
        let (global, args) = parse(&["--operator", "ops/deployment/missing"]);
        let err = resolve_target(&client, &global, &args, (&[], None), &Default::default())
            .await
            .unwrap_err();
        assert_eq!(err.exit_code(), 3);
        // -c naming a container the Pods do not have: one error naming it and theirs, before
        // any Pod or log is read (issue 14 item 7).
        let (global, args) = parse(&["--operator", "ops/deployment/custom", "-c", "nope"]);
        let err = resolve_target(&client, &global, &args, (&[], None), &Default::default())
            .await
            .unwrap_err();
        assert_eq!(err.exit_code(), 3);
        assert_eq!(
            err.to_string(),
            "-c nope: the Pods of ops/deployment/custom have no container nope; their containers: sidecar, operator"
        );
        let (global, args) = parse(&["--operator", "ops/deployment/custom", "-c", "operator"]);
        assert_eq!(
            resolve_target(&client, &global, &args, (&[], None), &Default::default())
                .await
                .unwrap()
                .container,
            "operator"
        );
        // A malformed --operator never gets this far: it is refused while parsing.
        let err = Cli::try_parse_from([
            "kubectl-microservice",
            "logs",
            "--handler",
            "accept",
            "--operator",
            "ops/missing",
        ])
        .unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(err.to_string().contains("'ops/missing'"), "{err}");
    }
}
