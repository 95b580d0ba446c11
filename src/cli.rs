//! The command line: clap definitions with kubectl's habits.
//!
//! Shared flags (`--kubeconfig`, `--context`, `-n`, `-A`, `-o`, `-l`, `--no-headers`, `--as`,
//! `--as-group`, `--request-timeout`, `--color`) are accepted before or after the subcommand,
//! because kubectl passes its plugin everything after `microservice`: `kubectl microservice
//! --context prod status` and `kubectl microservice status --context prod` are the same. Each
//! subcommand's `--help` lists only the shared flags it takes, and a shared flag it does not
//! take is refused (exit 2, naming the subcommand): [`scope`] says which, and [`parse_from`]
//! enforces it.

use std::time::Duration;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};

use crate::render::{ColorChoice, OutputFormat};

pub mod scope;

/// `kubectl microservice`: the Microservice controller and its diagnostics.
///
/// Parse it with [`parse_from`], and get its definition with [`command`]: they scope the shared
/// flags to the subcommands that take them ([`scope`]); clap's own `Cli::try_parse_from` and
/// `Cli::command()` do not. This doc comment is for Rust readers: `long_about = None` keeps it
/// out of `--help`, which shows `about` (clap would otherwise print the whole comment as the
/// long help; `tests/flags_cli.rs` holds every `--help` free of Rust doc syntax).
#[derive(Debug, Parser)]
#[command(
    name = "kubectl-microservice",
    bin_name = "kubectl microservice",
    version = crate::VERSION_LINE,
    about = "Run the Microservice controller, and explain from the cluster's own evidence what happened to a Microservice.",
    long_about = None,
    after_help = "Shared flags go before or after the subcommand; each subcommand's --help lists the ones it takes.\nExit codes: 0 ok, 1 a problem was diagnosed, 2 usage error, 3 could not decide (cluster unreachable, not found, forbidden).",
    propagate_version = true
)]
pub struct Cli {
    /// Flags shared by the subcommands (each takes some of them).
    #[command(flatten)]
    pub global: GlobalArgs,

    /// The subcommand to run.
    #[command(subcommand)]
    pub command: Command,
}

/// Parses a command line (`args` starts with the program name), then refuses shared flags the
/// subcommand does not take ([`scope::check`]). Errors are clap's: exit 2 for usage errors,
/// 0 for `--help` and `--version`.
pub fn parse_from<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let mut command = command();
    let matches = command.try_get_matches_from_mut(args)?;
    scope::check(&mut command, &matches)?;
    Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut command))
}

/// The command-line definition as parsed, shown by `--help` and walked by `__complete`: each
/// subcommand shows only the shared flags it takes ([`scope::scoped`]).
pub fn command() -> clap::Command {
    scope::scoped(Cli::command())
}

/// kubectl's global flags. Each is `global` (accepted after the subcommand too); the help text
/// here is the one shown where a subcommand does not give its own ([`scope`]).
#[derive(Debug, Clone, Args)]
pub struct GlobalArgs {
    /// Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config; in a Pod, the in-cluster config).
    #[arg(long, global = true, value_name = "PATH", help_heading = scope::CONNECTION)]
    pub kubeconfig: Option<std::path::PathBuf>,

    /// The kubeconfig context to use.
    #[arg(long, global = true, value_name = "NAME", help_heading = scope::CONNECTION)]
    pub context: Option<String>,

    /// The namespace (default: the context's namespace).
    #[arg(
        short = 'n',
        long = "namespace",
        global = true,
        value_name = "NS",
        value_delimiter = ',',
        value_parser = crate::names::namespace,
        help_heading = scope::SCOPE
    )]
    pub namespaces: Vec<String>,

    /// All namespaces; beats -n, as in kubectl.
    #[arg(short = 'A', long = "all-namespaces", global = true, help_heading = scope::SCOPE)]
    pub all_namespaces: bool,

    /// Output format, as kubectl's; jsonpath templates (-o jsonpath='{.items[*].name}')
    /// evaluate over the -o json document.
    #[arg(short = 'o', long = "output", global = true, value_parser = OutputFormatParser, value_name = "FORMAT", help_heading = scope::OUTPUT)]
    pub output: Option<OutputFormat>,

    /// Label selector, as kubectl's (`app=todo,tier!=db`).
    #[arg(short = 'l', long = "selector", global = true, value_name = "SELECTOR", help_heading = scope::SCOPE)]
    pub selector: Option<String>,

    /// Do not print table headers.
    #[arg(long, global = true, help_heading = scope::OUTPUT)]
    pub no_headers: bool,

    /// Username to impersonate for the operation.
    #[arg(long = "as", global = true, value_name = "USER", help_heading = scope::CONNECTION)]
    pub as_user: Option<String>,

    /// Group to impersonate (repeatable).
    #[arg(long = "as-group", global = true, value_name = "GROUP", help_heading = scope::CONNECTION)]
    pub as_groups: Vec<String>,

    /// Time to wait for one API request, e.g. `10s`, `1m`, `500ms` (`0` = no limit; default 10s).
    #[arg(long, global = true, value_name = "DURATION", value_parser = parse_duration, allow_hyphen_values = true, help_heading = scope::CONNECTION)]
    pub request_timeout: Option<Duration>,

    /// When to colour human output. The flag beats NO_COLOR; `auto` colours only a terminal and
    /// honours a non-empty NO_COLOR.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN", help_heading = scope::OUTPUT)]
    pub color: ColorChoice,
}

/// The one rule every command that reads a cluster takes its namespace by, once it knows the
/// kubeconfig context's (`context_namespace`: kube's `default_namespace`, `default` when the
/// context names none, as kubectl): `-A` is every namespace (`None`); else the one given (`-n`,
/// or the `NS/` of `NS/NAME`: `given`); else the context's. `status`, `explain-events`,
/// `collect`, `logs --handler` and `version` all read it here, so that a context whose
/// namespace is `team-a` means `team-a` to each of them.
pub fn namespace_in_context(all_namespaces: bool, given: Option<String>, context_namespace: &str) -> Option<String> {
    if all_namespaces {
        return None;
    }
    Some(given.unwrap_or_else(|| context_namespace.to_string()))
}

impl GlobalArgs {
    /// The namespace of a subcommand that reads one namespace (or, where it takes `-A`, all):
    /// `None` with `-A` (which beats `-n`, as kubectl's "Namespace in current context is
    /// ignored even if specified with --namespace") or without `-n` (the caller then uses the
    /// context's); `Some` for one `-n`. Errors (exit 2) on several, naming `subcommand`.
    pub fn one_namespace(&self, subcommand: &str) -> Result<Option<String>, crate::error::AppError> {
        if self.all_namespaces {
            return Ok(None);
        }
        match self.namespaces.as_slice() {
            [] => Ok(None),
            [ns] => Ok(Some(ns.clone())),
            many => Err(crate::error::AppError::Usage(format!(
                "{subcommand} takes one -n/--namespace, got {}",
                many.join(",")
            ))),
        }
    }

    /// The connection flags (`--kubeconfig`, `--context`, `--as`, `--as-group`,
    /// `--request-timeout`), as [`crate::client`] takes them.
    pub fn connection(&self) -> crate::client::ConnectionSettings {
        crate::client::ConnectionSettings {
            kubeconfig: self.kubeconfig.clone(),
            context: self.context.clone(),
            as_user: self.as_user.clone(),
            as_groups: self.as_groups.clone(),
            request_timeout: self.request_timeout,
        }
    }

    /// The first cluster-connection flag given (`--kubeconfig`, `--context`, `--as`,
    /// `--as-group`, `--request-timeout`), for refusing it where nothing reads a cluster
    /// (`--bundle`, `logs --file`).
    pub fn connection_flag(&self) -> Option<&'static str> {
        [
            (self.kubeconfig.is_some(), "--kubeconfig"),
            (self.context.is_some(), "--context"),
            (self.as_user.is_some(), "--as"),
            (!self.as_groups.is_empty(), "--as-group"),
            (self.request_timeout.is_some(), "--request-timeout"),
        ]
        .into_iter()
        .find_map(|(given, flag)| given.then_some(flag))
    }

    /// Refuses a cluster-connection flag given to `what` (e.g. `status --bundle`), which reads
    /// no cluster: a usage error naming the flag.
    pub fn refuse_connection_flags(&self, what: &str) -> Result<(), crate::error::AppError> {
        match self.connection_flag() {
            Some(flag) => Err(crate::error::AppError::Usage(format!(
                "{flag} does not apply to {what}: it reads no cluster"
            ))),
            None => Ok(()),
        }
    }
}

/// clap's parser for `-o`: [`OutputFormat::parse`], with the fixed values listed for help and
/// shell completion (`jsonpath=` and `jsonpath-as-json=` as prefixes to complete).
#[derive(Debug, Clone, Copy)]
pub struct OutputFormatParser;

impl clap::builder::TypedValueParser for OutputFormatParser {
    type Value = OutputFormat;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<OutputFormat, clap::Error> {
        let text = value.to_str().ok_or_else(|| {
            clap::Error::raw(clap::error::ErrorKind::InvalidUtf8, "-o: the value is not UTF-8\n").with_cmd(cmd)
        })?;
        OutputFormat::parse(text)
            .map_err(|e| clap::Error::raw(clap::error::ErrorKind::ValueValidation, format!("{e}\n")).with_cmd(cmd))
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        use clap::builder::PossibleValue;
        Some(Box::new(
            [
                PossibleValue::new("json").help("JSON documents"),
                PossibleValue::new("yaml").help("YAML documents"),
                PossibleValue::new("wide").help("A wider table"),
                PossibleValue::new("name").help("RESOURCE.GROUP/NAME per object"),
                PossibleValue::new("jsonpath=").help("kubectl's JSONPath template, e.g. jsonpath='{.items[*].name}'"),
                PossibleValue::new("jsonpath-as-json=").help("The template's values as JSON arrays"),
            ]
            .into_iter(),
        ))
    }
}

/// `--color` values ([`ColorChoice`]), each with the help `--help` shows.
impl ValueEnum for ColorChoice {
    fn value_variants<'a>() -> &'a [Self] {
        &[ColorChoice::Auto, ColorChoice::Always, ColorChoice::Never]
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        use clap::builder::PossibleValue;
        Some(match self {
            ColorChoice::Auto => {
                PossibleValue::new("auto").help("Colour a terminal unless NO_COLOR is set and non-empty")
            }
            ColorChoice::Always => PossibleValue::new("always").help("Always colour"),
            ColorChoice::Never => PossibleValue::new("never").help("Never colour"),
        })
    }
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the controller for Microservice objects (the `accept` handler).
    Operate(OperateArgs),
    /// Is Accepted still true for the spec each Microservice has now?
    Status(crate::commands::status::StatusArgs),
    /// Every run of a handler, with its cause and outcome, from the operator's logs.
    Logs(LogsArgs),
    /// Why is there no Warning event on a Microservice?
    ExplainEvents(crate::commands::explain_events::ExplainEventsArgs),
    /// Write an evidence bundle (a directory of `kubectl get -o json` outputs and logs).
    Collect(crate::commands::collect::CollectArgs),
    /// Print the manifests that install the CRD, RBAC and the operator Deployment.
    Manifests(ManifestsArgs),
    /// Print a shell completion script.
    #[command(after_long_help = crate::commands::completion::INSTALL_HELP)]
    Completion(CompletionArgs),
    /// Print the client's version and, from the cluster, its operators' versions.
    Version(crate::commands::version::VersionArgs),
}

/// `--log-format` values of `operate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// `<RFC3339 time> <LEVEL> [ns/name] <message> handler=<id> cause=<cause>`
    Text,
    /// One JSON object per line: `{"timestamp","level","message","object":{...},"handler","cause"}`
    Json,
}

/// `--events` values of `operate`: which events are posted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EventsPolicy {
    /// Normal `Accepted` and every Warning.
    All,
    /// Warnings only (`ReconcileFailed`, `InvalidSpec`, `StatusPruned`).
    Warnings,
    /// Post nothing; outcomes are only in the logs and in `status`.
    None,
}

impl EventsPolicy {
    /// The flag value as written in a Deployment's args (`all`, `warnings`, `none`).
    pub fn as_arg(self) -> &'static str {
        match self {
            EventsPolicy::All => "all",
            EventsPolicy::Warnings => "warnings",
            EventsPolicy::None => "none",
        }
    }
}

/// Flags of `operate`.
#[derive(Debug, Clone, Args)]
#[command(after_help = concat!(
    "Examples:\n",
    "  # Run the controller for the context's namespace (leader election on a Lease)\n",
    "  kubectl microservice operate\n",
    "\n",
    "  # Watch two namespaces, one replica only, JSON log lines\n",
    "  kubectl microservice operate -n todo,shop --standalone --log-format json\n",
    "\n",
    "  # Watch all namespaces; serve /healthz, /readyz and /metrics on port 8080\n",
    "  kubectl microservice operate -A --health-listen 0.0.0.0:8080",
))]
pub struct OperateArgs {
    /// Log line format.
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,

    /// Which events to post.
    #[arg(long, value_enum, default_value_t = EventsPolicy::All)]
    pub events: EventsPolicy,

    /// How many objects are handled at once (one object is never handled twice at once).
    #[arg(long, default_value_t = 16, value_name = "N", value_parser = parse_concurrency, allow_hyphen_values = true)]
    pub max_concurrent: u16,

    /// Run without leader election (one replica only; Kopf's flag of the same name). By default
    /// replicas elect a leader on a coordination.k8s.io/v1 Lease and only the leader handles objects.
    #[arg(long)]
    pub standalone: bool,

    /// Name of one Lease that governs every watched namespace. Without this and
    /// `--lease-namespace`, each watched namespace has its own Lease `microservice-operator` in
    /// that namespace (so operators of different namespaces never block each other); with `-A`,
    /// one Lease `microservice-operator` in the operator's own namespace.
    #[arg(long, value_name = "NAME", conflicts_with = "standalone", value_parser = crate::names::lease)]
    pub lease_name: Option<String>,

    /// Namespace of one Lease that governs every watched namespace (its name: `--lease-name`,
    /// default `microservice-operator`). Default: see `--lease-name`; with `-A`, the operator's
    /// own namespace (the service account's in a Pod, else the kubeconfig context's).
    #[arg(long, value_name = "NS", conflicts_with = "standalone", value_parser = crate::names::namespace)]
    pub lease_namespace: Option<String>,

    /// Serve /healthz, /readyz and /metrics (Prometheus text) over HTTP on this address, e.g.
    /// `0.0.0.0:8080` (port 0 picks a free port; the address is logged).
    #[arg(long, value_name = "ADDR")]
    pub health_listen: Option<std::net::SocketAddr>,

    /// Do not check the CRD at start-up (for an operator that may not read CRDs).
    #[arg(long)]
    pub skip_crd_check: bool,
}

/// Flags of `logs`: every run of a handler, from a file, a bundle or the operator's Pods.
#[derive(Debug, Clone, Args)]
#[command(after_help = concat!(
    "Examples:\n",
    "  # Every run of the accept handler for one Microservice, from the operator's Pods\n",
    "  kubectl microservice logs --handler accept todo-api -n todo\n",
    "\n",
    "  # Runs in an operator's log file, one JSON object per run\n",
    "  kubectl microservice logs --handler accept --file operator.log -o json\n",
    "\n",
    "  # Runs in logs read by kubectl, on stdin\n",
    "  kubectl logs deploy/op --timestamps | kubectl microservice logs --handler accept --file -",
))]
pub struct LogsArgs {
    /// The handler id; `accept` also matches Kopf's field handler `accept/spec` (`accept/*`).
    #[arg(long, value_name = "NAME")]
    pub handler: String,

    /// Only runs for this object: NAME (in -n NS, else the context's namespace; in any namespace of a --file or --bundle), TYPE/NAME as
    /// kubectl's (ms/NAME, microservice.platform.example.io/NAME), or NAMESPACE/NAME when the first
    /// part is no Microservice type name.
    #[arg(value_name = "OBJECT", value_parser = crate::names::object_ref_arg)]
    pub object: Option<String>,

    /// Read an operator log file instead of a cluster (`-` for stdin); repeatable. With or
    /// without kubelet `--timestamps` prefixes. Nothing else is read: Kopf's zoneless times are
    /// read as UTC, said so; `--log-file` reads the file beside the cluster's (or a bundle's)
    /// evidence, as `status` and `explain-events` do.
    #[arg(long, value_name = "PATH|-", conflicts_with_all = ["bundle", "log_file"])]
    pub file: Vec<String>,

    /// The operator's log, read from FILE beside the cluster's (or `--bundle`'s) evidence, as
    /// `status` and `explain-events` read it: its clock is theirs (the Kopf operator's `TZ`,
    /// checked against the API server), and the answer names the operator and what ran since
    /// the spec changed.
    #[command(flatten)]
    pub log_files: crate::commands::log_files::LogFileArgs,

    /// Read the operator logs of a bundle directory (`operator/logs/POD.CONTAINER[.previous].log`).
    #[arg(long, value_name = "DIR", value_hint = clap::ValueHint::DirPath)]
    pub bundle: Option<std::path::PathBuf>,

    /// The operator Deployment (default: the one the resolver decides for the object's namespace,
    /// among Deployments running `kopf run`, `python -m kopf` or `kubectl-microservice operate`);
    /// with `--bundle`, the bundle's Deployment whose logs are read.
    #[arg(long, value_name = "NS/deployment/NAME", conflicts_with = "file", value_parser = crate::names::operator_ref_arg)]
    pub operator: Option<String>,

    /// The operator's container (default: the one running the operator).
    #[arg(short = 'c', long, value_name = "NAME", value_parser = crate::names::container)]
    pub container: Option<String>,

    /// Also read the container before its last restart (live; a bundle's `.previous.log`
    /// files are always read).
    #[arg(long, conflicts_with_all = ["file", "bundle"])]
    pub previous: bool,

    /// Read only the last N lines of each container log, as `kubectl logs --tail` (the
    /// kubelet's `tailLines`; -1: all). For the last N runs, see --last. (`--log-lines` is an old
    /// name of this flag.)
    #[arg(long, alias = "log-lines", value_name = "LINES", allow_hyphen_values = true, value_parser = parse_tail_lines, conflicts_with_all = ["file", "bundle"])]
    pub tail: Option<i64>,

    /// Only runs started within this long before now (`10m`, `1h`); with `--file`, "now" is the
    /// file's last time (a file has no other clock).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, allow_hyphen_values = true)]
    pub since: Option<Duration>,

    /// Only the last N runs (after the other filters; not with --follow). For the last lines of
    /// each log, see --tail.
    #[arg(long, value_name = "RUNS", value_parser = parse_runs, allow_hyphen_values = true, conflicts_with = "follow")]
    pub last: Option<usize>,

    /// Only runs with this cause (repeatable or comma-separated).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub cause: Vec<RunCause>,

    /// Only runs with this outcome (repeatable or comma-separated).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub outcome: Vec<RunOutcome>,

    /// Print the matching runs' log lines as they are, without grouping.
    #[arg(long)]
    pub raw: bool,

    /// Keep following the logs; runs are printed as they end.
    #[arg(short = 'f', long)]
    pub follow: bool,

    /// A run with no outcome after this long is closed with outcome `unknown`.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, allow_hyphen_values = true, default_value = "10m")]
    pub run_timeout: Duration,
}

/// `--cause` values of `logs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RunCause {
    /// Creation.
    Create,
    /// Updating (a spec change).
    Update,
    /// Resuming (operator restart).
    Resume,
    /// Not named in the logs.
    Unknown,
}

/// `--outcome` values of `logs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RunOutcome {
    /// The handler succeeded (or its error was ignored).
    Succeeded,
    /// A temporary failure: Kopf retries.
    Retrying,
    /// A permanent failure, or retries exhausted.
    Failed,
    /// No outcome logged.
    Unknown,
}

/// Flags of `manifests`.
#[derive(Debug, Clone, Args)]
#[command(after_help = concat!(
    "Examples:\n",
    "  # Install the operator in ops, watching todo and shop (needs cluster-admin: CRD, ClusterRoles)\n",
    "  kubectl microservice manifests -n ops --watch-namespace todo,shop | kubectl apply -f -\n",
    "\n",
    "  # One replica watching all namespaces, as JSON\n",
    "  kubectl microservice manifests -n ops -A --standalone -o json\n",
    "\n",
    "  # Uninstall that team's operator, keeping the CRD (every team's Microservices) and the shared ClusterRoles\n",
    "  kubectl microservice manifests -n ops --watch-namespace todo,shop --without-shared | kubectl delete -f -",
))]
pub struct ManifestsArgs {
    /// Namespace the operator watches (repeatable or comma-separated). Give this or `-A`.
    #[arg(long = "watch-namespace", value_name = "NS", value_delimiter = ',', value_parser = crate::names::namespace)]
    pub watch_namespaces: Vec<String>,

    /// Operator image.
    #[arg(long, value_name = "REF", default_value = crate::manifests::DEFAULT_IMAGE)]
    pub image: String,

    /// One replica, `Recreate` strategy, `operate --standalone`.
    #[arg(long)]
    pub standalone: bool,

    /// `--events` value written into the operator Deployment's args.
    #[arg(long, value_enum, default_value_t = EventsPolicy::All)]
    pub events: EventsPolicy,

    /// Leave out what every installation shares: the CRD (deleting it deletes every team's
    /// Microservices) and the ClusterRoles. What is left is this operator's own objects, for
    /// `kubectl delete -f -` to uninstall one team's operator.
    #[arg(long)]
    pub without_shared: bool,
}

/// Flags of `completion`.
#[derive(Debug, Clone, Args)]
#[command(after_help = crate::commands::completion::EXAMPLES)]
pub struct CompletionArgs {
    /// The shell, or `kubectl` for the executable that kubectl runs to complete `kubectl microservice`.
    #[arg(value_enum)]
    pub shell: CompletionShell,
}

/// What `completion` prints a script for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompletionShell {
    /// bash, for the bare `kubectl-microservice` binary.
    Bash,
    /// zsh, for the bare binary.
    Zsh,
    /// fish, for the bare binary.
    Fish,
    /// PowerShell, for the bare binary.
    Powershell,
    /// elvish, for the bare binary.
    Elvish,
    /// `kubectl_complete-microservice` (POSIX sh), which kubectl >= 1.26 runs for `kubectl microservice <TAB>`.
    Kubectl,
}

/// A duration of at least one second (`--interval`, `--event-ttl`): zero would poll without a
/// pause or call every failure expired.
pub fn parse_duration_at_least_1s(input: &str) -> Result<Duration, String> {
    let d = parse_duration(input)?;
    if d < Duration::from_secs(1) {
        return Err(format!("expected at least 1s, got {input:?}"));
    }
    Ok(d)
}

/// A count of lines (`--log-lines`, the kubelet's `tailLines`): a whole number, 0 or more, that
/// fits the API's int64. The error says so (clap's own range error prints `0..9223372036854775807`).
pub fn parse_count(input: &str) -> Result<i64, String> {
    input
        .parse::<i64>()
        .ok()
        .filter(|n| *n >= 0)
        .ok_or_else(|| "expected a whole number, 0 or more (at most 9223372036854775807)".to_string())
}

/// `logs --tail LINES`, as `kubectl logs --tail`: a number of lines, 0 or more, or -1 for all
/// (the kubelet's `tailLines`, an int64).
pub fn parse_tail_lines(input: &str) -> Result<i64, String> {
    input
        .trim()
        .parse::<i64>()
        .ok()
        .filter(|n| *n >= -1)
        .ok_or_else(|| "expected a number of lines ≥ 0 (at most 9223372036854775807), or -1 for all".to_string())
}

/// `logs --last RUNS`: a number of runs, 1 or more. Zero is refused rather than read as "print
/// nothing": `--last 0` could only print an empty answer beside a report of runs it did not show
/// (kubectl's own count flags, `--tail`, `--max-log-requests`, refuse what cannot mean anything).
pub fn parse_runs(input: &str) -> Result<usize, String> {
    input
        .trim()
        .parse::<usize>()
        .ok()
        .filter(|n| *n >= 1)
        .ok_or_else(|| "expected a number of runs ≥ 1".to_string())
}

/// `operate --max-concurrent N`: how many objects at once, 1 to 65535.
pub fn parse_concurrency(input: &str) -> Result<u16, String> {
    input
        .trim()
        .parse::<u16>()
        .ok()
        .filter(|n| *n >= 1)
        .ok_or_else(|| "expected a whole number from 1 to 65535".to_string())
}

/// The longest duration a flag accepts: Go's `time.Duration` maximum (2^63 − 1 ns, 2562047h47m16s,
/// about 292 years), the limit kubectl's own duration flags have. Anything this long added to or
/// subtracted from a timestamp of years 0–9999 stays inside chrono's range (±262143 years), and
/// it converts to a `chrono::TimeDelta` without loss.
pub const MAX_DURATION: Duration = Duration::new(9_223_372_036, 854_775_807);

/// Parses kubectl-style durations: `10s`, `1m`, `1m30s`, `500ms`, `1.5h`, `2h`, Go's `ns`, `us`
/// (`µs`), or a bare number of seconds; at most [`MAX_DURATION`].
///
/// Our own code rather than a crate's (humantime, go-parse-duration) because the accepted shape
/// must be kubectl's (bare seconds included, Go's units) with kubectl's range, and it is
/// computed exactly in whole nanoseconds (no float rounding, no overflow on any input).
/// Errors say what was expected; clap's message around them names the flag and the input
/// (`invalid value '9999999999999h' for '--since <DURATION>': expected at most ...`).
pub fn parse_duration(input: &str) -> Result<Duration, String> {
    let s = input.trim();
    let expected = || "expected a duration such as 10s, 1m, 1m30s, 500ms or 2h".to_string();
    let too_long = || "expected at most 2562047h (about 292 years, kubectl's limit)".to_string();
    if s.is_empty() {
        return Err(expected());
    }
    if s.starts_with('-') {
        // Taken as the flag's value (`allow_hyphen_values`), as kubectl's pflag takes it, rather
        // than clap's "unexpected argument '-5'".
        return Err("expected a duration ≥ 0 such as 10s, 1m, 1m30s, 500ms or 2h".to_string());
    }
    let max_nanos = MAX_DURATION.as_nanos();
    // A bare number is seconds.
    let s_owned;
    let s = if s.bytes().all(|b| b.is_ascii_digit()) {
        s_owned = format!("{s}s");
        s_owned.as_str()
    } else {
        s
    };
    let mut total: u128 = 0;
    let mut rest = s;
    while !rest.is_empty() {
        let number_len = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .unwrap_or(rest.len());
        let (number, after) = rest.split_at(number_len);
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        if (whole.is_empty() && fraction.is_empty()) || fraction.contains('.') {
            return Err(expected());
        }
        let unit_len = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, after) = after.split_at(unit_len);
        let unit_nanos: u128 = match unit {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return Err(expected()),
        };
        // Whole part: digit by digit, stopping as soon as it exceeds the maximum.
        let mut part: u128 = 0;
        for digit in whole.bytes() {
            part = part * 10 + u128::from(digit - b'0');
            if part * unit_nanos > max_nanos {
                return Err(too_long());
            }
        }
        part *= unit_nanos;
        // Fraction: digits beyond the 18th are below a nanosecond even in hours.
        let mut scale: u128 = 1;
        let mut numerator: u128 = 0;
        for digit in fraction.bytes().take(18) {
            numerator = numerator * 10 + u128::from(digit - b'0');
            scale *= 10;
        }
        part += numerator * unit_nanos / scale;
        total += part;
        if total > max_nanos {
            return Err(too_long());
        }
        rest = after;
    }
    let secs = u64::try_from(total / 1_000_000_000).map_err(|_| too_long())?;
    Ok(Duration::new(secs, (total % 1_000_000_000) as u32))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// The one namespace rule: -A is all, a given one wins, else the context's.
    #[test]
    fn the_namespace_is_the_given_one_else_the_contexts() {
        assert_eq!(namespace_in_context(true, Some("a".into()), "ctx"), None);
        assert_eq!(
            namespace_in_context(false, Some("a".into()), "ctx").as_deref(),
            Some("a")
        );
        assert_eq!(namespace_in_context(false, None, "ctx").as_deref(), Some("ctx"));
    }

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn durations_parse_like_kubectl() {
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2h"), Ok(Duration::from_secs(7200)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        assert_eq!(
            parse_duration("ten"),
            Err("expected a duration such as 10s, 1m, 1m30s, 500ms or 2h".into())
        );
        assert!(parse_duration("5x").is_err());
        assert!(parse_duration("").is_err());
        assert_eq!(parse_duration("1.5h"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("0.1s"), Ok(Duration::from_millis(100)));
        assert_eq!(parse_duration("1h2m3s4ms5us6ns"), Ok(Duration::new(3723, 4_005_006)));
        assert_eq!(parse_duration("2µs"), Ok(Duration::from_micros(2)));
        assert_eq!(
            parse_duration("-5s"),
            Err("expected a duration ≥ 0 such as 10s, 1m, 1m30s, 500ms or 2h".into())
        );
        for bad in ["1h30", ".s", "1..2s", "1.2.3s", "s", "1e5s", "10 s", "NaN", "inf"] {
            let err = parse_duration(bad).unwrap_err();
            assert!(err.starts_with("expected a duration such as"), "{bad}: {err}");
        }
    }

    /// Go's `time.Duration` range, as kubectl's flags: the maximum parses, one nanosecond more
    /// does not, and no input overflows on the way (these panicked in `Duration::from_secs_f64`).
    #[test]
    fn durations_stop_at_kubectls_maximum() {
        assert_eq!(parse_duration("2562047h47m16.854775807s"), Ok(MAX_DURATION));
        assert_eq!(parse_duration("9223372036854775807ns"), Ok(MAX_DURATION));
        assert_eq!(parse_duration("9223372036"), Ok(Duration::from_secs(9_223_372_036)));
        for bad in [
            "2562047h47m16.854775808s",
            "2562048h",
            "9223372037",
            "99999999999999999999",
            "99999999999999999999s",
            "99999999999999999999h",
            "9999999999999h",
            "1h2562047h",
            "340282366920938463463374607431768211456ns",
        ] {
            assert_eq!(
                parse_duration(bad),
                Err("expected at most 2562047h (about 292 years, kubectl's limit)".into()),
                "{bad}"
            );
        }
        // MAX_DURATION fits chrono, and stays in range around any RFC 3339 timestamp.
        let max = chrono::TimeDelta::from_std(MAX_DURATION).unwrap();
        let last = chrono::DateTime::parse_from_rfc3339("9999-12-31T23:59:59Z").unwrap();
        let first = chrono::DateTime::parse_from_rfc3339("0000-01-01T00:00:00Z").unwrap();
        assert!(last.checked_add_signed(max).is_some() && first.checked_sub_signed(max).is_some());
    }

    #[test]
    fn leader_election_flags() {
        let cli = Cli::try_parse_from(["kubectl-microservice", "operate"]).unwrap();
        let Command::Operate(args) = cli.command else {
            unreachable!()
        };
        assert!(!args.standalone);
        assert_eq!(args.lease_name, None);
        assert_eq!(args.lease_namespace, None);
        assert_eq!(args.health_listen, None);
        let cli = Cli::try_parse_from([
            "kubectl-microservice",
            "operate",
            "--lease-name",
            "ops.lock",
            "--lease-namespace",
            "ops",
            "--health-listen",
            "0.0.0.0:8080",
        ])
        .unwrap();
        let Command::Operate(args) = cli.command else {
            unreachable!()
        };
        assert_eq!(args.lease_name.as_deref(), Some("ops.lock"));
        assert_eq!(args.lease_namespace.as_deref(), Some("ops"));
        assert_eq!(args.health_listen, Some("0.0.0.0:8080".parse().unwrap()));
        for (bad, needle) in [
            (&["--standalone", "--lease-name", "x"][..], "cannot be used with"),
            (
                &["--lease-name", "Bad_Name"][..],
                "'Bad_Name' for '--lease-name <NAME>': expected a Lease name",
            ),
            (
                &["--lease-namespace", "Ops"][..],
                "'Ops' for '--lease-namespace <NS>': expected a namespace name",
            ),
            (&["--health-listen", "localhost"][..], "localhost"),
        ] {
            let err = Cli::try_parse_from(
                ["kubectl-microservice", "operate"]
                    .into_iter()
                    .chain(bad.iter().copied()),
            )
            .unwrap_err();
            assert_eq!(err.exit_code(), 2, "{bad:?}");
            assert!(err.to_string().contains(needle), "{bad:?}: {err}");
        }
    }

    #[test]
    fn global_flags_work_after_the_subcommand() {
        let cli = parse_from([
            "kubectl-microservice",
            "operate",
            "--context",
            "prod",
            "-n",
            "a,b",
            "-n",
            "c",
        ])
        .unwrap();
        assert_eq!(cli.global.context.as_deref(), Some("prod"));
        assert_eq!(cli.global.namespaces, ["a", "b", "c"]);
        // Before the subcommand too (kubectl passes everything after `microservice`).
        let cli = parse_from(["kubectl-microservice", "--context", "prod", "-n", "a", "status"]).unwrap();
        assert_eq!(cli.global.context.as_deref(), Some("prod"));
        assert_eq!(cli.global.namespaces, ["a"]);
        // Both sides: the later one wins, as a repeated flag does in kubectl.
        let cli = parse_from(["kubectl-microservice", "--context", "a", "status", "--context", "b"]).unwrap();
        assert_eq!(cli.global.context.as_deref(), Some("b"));
    }

    /// Every `kubectl microservice ...` line of every subcommand's Examples parses (up to a
    /// pipe or a redirection), so the examples stay true to the flags.
    #[test]
    fn every_example_parses() {
        let root = command();
        let mut seen = 0;
        for sub in root.get_subcommands() {
            let help = sub.get_after_help().map(|h| h.to_string()).unwrap_or_default();
            assert!(help.starts_with("Examples:\n"), "{} has no Examples", sub.get_name());
            for line in help
                .lines()
                .filter_map(|l| l.trim().strip_prefix("kubectl microservice "))
            {
                let words: Vec<&str> = line.split(['|', '>']).next().unwrap().split_whitespace().collect();
                let parsed = parse_from(std::iter::once("kubectl-microservice").chain(words.iter().copied()));
                assert!(parsed.is_ok(), "{line}: {}", parsed.unwrap_err());
                seen += 1;
            }
        }
        assert!(seen >= 14, "{seen}");
    }
}
