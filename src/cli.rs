//! The command line: clap definitions with kubectl's habits.
//!
//! Global flags (`--kubeconfig`, `--context`, `-n`, `-A`, `-o`, `-l`, `--no-headers`, `--as`,
//! `--as-group`, `--request-timeout`, `--color`) are accepted before or after the subcommand,
//! because kubectl does not pass its own global flags to plugins: `kubectl microservice status
//! --context prod` must work.

use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// `kubectl microservice`: the Microservice controller and its diagnostics.
#[derive(Debug, Parser)]
#[command(
    name = "kubectl-microservice",
    bin_name = "kubectl microservice",
    version = crate::VERSION_LINE,
    about = "Run the Microservice controller, and explain from the cluster's own evidence what happened to a Microservice.",
    after_help = "Exit codes: 0 ok, 1 a problem was diagnosed, 2 usage error, 3 could not decide (cluster unreachable, not found, forbidden).",
    propagate_version = true
)]
pub struct Cli {
    /// Flags shared by every subcommand.
    #[command(flatten)]
    pub global: GlobalArgs,

    /// The subcommand to run.
    #[command(subcommand)]
    pub command: Command,
}

/// kubectl's global flags, shared by every subcommand.
#[derive(Debug, Clone, Args)]
pub struct GlobalArgs {
    /// Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config; in a Pod, the in-cluster config).
    #[arg(long, global = true, value_name = "PATH")]
    pub kubeconfig: Option<std::path::PathBuf>,

    /// The kubeconfig context to use.
    #[arg(long, global = true, value_name = "NAME")]
    pub context: Option<String>,

    /// Namespace(s). Repeatable (or comma-separated) for `operate`; default: the context's namespace.
    #[arg(
        short = 'n',
        long = "namespace",
        global = true,
        value_name = "NS",
        value_delimiter = ','
    )]
    pub namespaces: Vec<String>,

    /// All namespaces (`manifests`: the operator watches all namespaces).
    #[arg(short = 'A', long = "all-namespaces", global = true)]
    pub all_namespaces: bool,

    /// Output format, as kubectl's; jsonpath templates (-o jsonpath='{.items[*].name}')
    /// evaluate over the -o json document.
    #[arg(short = 'o', long = "output", global = true, value_parser = OutputFormatParser, value_name = "FORMAT")]
    pub output: Option<OutputFormat>,

    /// Label selector, as kubectl's (`app=todo,tier!=db`).
    #[arg(short = 'l', long = "selector", global = true, value_name = "SELECTOR")]
    pub selector: Option<String>,

    /// Do not print table headers.
    #[arg(long, global = true)]
    pub no_headers: bool,

    /// Username to impersonate for the operation.
    #[arg(long = "as", global = true, value_name = "USER")]
    pub as_user: Option<String>,

    /// Group to impersonate (repeatable).
    #[arg(long = "as-group", global = true, value_name = "GROUP")]
    pub as_groups: Vec<String>,

    /// Time to wait for one API request, e.g. `10s`, `1m`, `500ms` (`0` = no limit).
    /// Default 10s for the diagnostic subcommands; `operate` uses it as the connect timeout only,
    /// because its watches are long-lived.
    #[arg(long, global = true, value_name = "DURATION", value_parser = parse_duration)]
    pub request_timeout: Option<Duration>,

    /// When to colour human output. The flag beats NO_COLOR; `auto` colours only a terminal and
    /// honours a non-empty NO_COLOR.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,
}

/// `-o` values, as kubectl's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputFormat {
    /// JSON documents.
    Json,
    /// YAML documents.
    Yaml,
    /// A wider table.
    Wide,
    /// `RESOURCE.GROUP/NAME` per object, as `kubectl get -o name`.
    Name,
    /// `jsonpath=TEMPLATE`: kubectl's JSONPath template over the `-o json` document.
    JsonPath(crate::jsonpath::Template),
    /// `jsonpath-as-json=TEMPLATE`: the template's values as JSON arrays.
    JsonPathAsJson(crate::jsonpath::Template),
}

impl OutputFormat {
    /// The value as written after `-o`, for messages: `json`, `name`, `jsonpath=...`.
    pub fn flag_value(&self) -> String {
        match self {
            OutputFormat::Json => "json".into(),
            OutputFormat::Yaml => "yaml".into(),
            OutputFormat::Wide => "wide".into(),
            OutputFormat::Name => "name".into(),
            OutputFormat::JsonPath(t) => format!("jsonpath={}", t.source()),
            OutputFormat::JsonPathAsJson(t) => format!("jsonpath-as-json={}", t.source()),
        }
    }

    /// The kind of format (`json`, `jsonpath`, ...), without a template.
    pub fn kind(&self) -> &'static str {
        match self {
            OutputFormat::Json => "json",
            OutputFormat::Yaml => "yaml",
            OutputFormat::Wide => "wide",
            OutputFormat::Name => "name",
            OutputFormat::JsonPath(_) => "jsonpath",
            OutputFormat::JsonPathAsJson(_) => "jsonpath-as-json",
        }
    }

    /// Parses a `-o` value as kubectl spells it: `json`, `yaml`, `wide`, `name`,
    /// `jsonpath=TEMPLATE`, `jsonpath-as-json=TEMPLATE`. Errors name the value and list the
    /// formats; a template error names the template.
    pub fn parse(value: &str) -> Result<OutputFormat, String> {
        let template = |t: &str| crate::jsonpath::Template::parse(t);
        match value {
            "json" => Ok(OutputFormat::Json),
            "yaml" => Ok(OutputFormat::Yaml),
            "wide" => Ok(OutputFormat::Wide),
            "name" => Ok(OutputFormat::Name),
            "jsonpath" | "jsonpath-as-json" => {
                Err(format!("-o {value} needs a template: -o {value}='{{.items[*].name}}'"))
            }
            _ => {
                if let Some(t) = value.strip_prefix("jsonpath=") {
                    Ok(OutputFormat::JsonPath(template(t)?))
                } else if let Some(t) = value.strip_prefix("jsonpath-as-json=") {
                    Ok(OutputFormat::JsonPathAsJson(template(t)?))
                } else {
                    Err(format!(
                        "invalid -o {value:?}: expected json, yaml, wide, name, jsonpath=TEMPLATE or jsonpath-as-json=TEMPLATE"
                    ))
                }
            }
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

/// `--color` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// Colour a terminal unless NO_COLOR is set and non-empty.
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
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
pub struct OperateArgs {
    /// Log line format.
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,

    /// Which events to post.
    #[arg(long, value_enum, default_value_t = EventsPolicy::All)]
    pub events: EventsPolicy,

    /// How many objects are handled at once (one object is never handled twice at once).
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u16).range(1..))]
    pub max_concurrent: u16,

    /// Run without leader election (one replica only; Kopf's flag of the same name). By default
    /// replicas elect a leader on a coordination.k8s.io/v1 Lease and only the leader handles objects.
    #[arg(long)]
    pub standalone: bool,

    /// Name of the Lease used for leader election.
    #[arg(long, value_name = "NAME", default_value = crate::operate::leader::DEFAULT_LEASE_NAME, conflicts_with = "standalone", value_parser = parse_dns_subdomain)]
    pub lease_name: String,

    /// Namespace of the Lease (default: the operator's own namespace: the service account's in a
    /// Pod, else the kubeconfig context's).
    #[arg(long, value_name = "NS", conflicts_with = "standalone", value_parser = parse_dns_label)]
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
#[command(
    after_help = "Examples:\n  kubectl microservice logs --handler accept todo-api -n todo\n  kubectl microservice logs --handler accept --file operator.log -o json\n  kubectl logs deploy/op --timestamps | kubectl microservice logs --handler accept --file -"
)]
pub struct LogsArgs {
    /// The handler id; `accept` also matches Kopf's field handler `accept/spec` (`accept/*`).
    #[arg(long, value_name = "NAME")]
    pub handler: String,

    /// Only runs for this object: `NAME` (in `-n NS` if given, else any namespace) or `NS/NAME`.
    #[arg(value_name = "OBJECT")]
    pub object: Option<String>,

    /// Read an operator log file instead of a cluster (`-` for stdin); repeatable. With or
    /// without kubelet `--timestamps` prefixes. `--log-file` is the same flag, as in the other
    /// subcommands.
    #[arg(long, visible_alias = "log-file", value_name = "PATH|-", conflicts_with = "bundle")]
    pub file: Vec<String>,

    /// Read the operator logs of a bundle directory (`operator/logs/POD.CONTAINER[.previous].log`).
    #[arg(long, value_name = "DIR", value_hint = clap::ValueHint::DirPath)]
    pub bundle: Option<std::path::PathBuf>,

    /// The operator Deployment (default: found among Deployments running `kopf run`,
    /// `python -m kopf` or `kubectl-microservice operate`).
    #[arg(long, value_name = "NS/deployment/NAME", conflicts_with_all = ["file", "bundle"])]
    pub operator: Option<String>,

    /// The operator's container (default: the one running the operator).
    #[arg(short = 'c', long, value_name = "NAME")]
    pub container: Option<String>,

    /// Also read the container before its last restart (live; a bundle's `.previous.log`
    /// files are always read).
    #[arg(long, conflicts_with = "file")]
    pub previous: bool,

    /// Read only the last N lines of each container log, as `kubectl logs --tail` (the
    /// kubelet's `tailLines`; -1: all). For the last N runs, see --last. (`--log-lines` is an old
    /// name of this flag.)
    #[arg(long, alias = "log-lines", value_name = "LINES", allow_negative_numbers = true, value_parser = clap::value_parser!(i64).range(-1..), conflicts_with_all = ["file", "bundle"])]
    pub tail: Option<i64>,

    /// Only runs started within this long before now (`10m`, `1h`); with `--file`, "now" is the
    /// file's last time (a file has no other clock).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub since: Option<Duration>,

    /// Only the last N runs (after the other filters; not with --follow). For the last lines of
    /// each log, see --tail.
    #[arg(long, value_name = "RUNS", conflicts_with = "follow")]
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
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "10m")]
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
pub struct ManifestsArgs {
    /// Namespace the operator watches (repeatable or comma-separated). Give this or `-A`.
    #[arg(long = "watch-namespace", value_name = "NS", value_delimiter = ',')]
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
}

/// Flags of `completion`.
#[derive(Debug, Clone, Args)]
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

/// Accepts a DNS-1123 label (a namespace name): lowercase letters, digits and '-', at most 63.
pub fn parse_dns_label(input: &str) -> Result<String, String> {
    let ok = !input.is_empty()
        && input.len() <= 63
        && input
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !input.starts_with('-')
        && !input.ends_with('-');
    if ok {
        Ok(input.to_string())
    } else {
        Err(format!(
            "invalid name {input:?}: expected a DNS label (lowercase letters, digits and '-', at most 63, starting and ending with a letter or digit)"
        ))
    }
}

/// Accepts a DNS-1123 subdomain (an object name such as a Lease's): dot-separated DNS labels,
/// at most 253 characters.
pub fn parse_dns_subdomain(input: &str) -> Result<String, String> {
    if input.len() <= 253 && input.split('.').all(|part| parse_dns_label(part).is_ok()) {
        Ok(input.to_string())
    } else {
        Err(format!(
            "invalid name {input:?}: expected a DNS subdomain (lowercase letters, digits, '-' and '.', at most 253)"
        ))
    }
}

/// A duration of at least one second (`--interval`, `--event-ttl`): zero would poll without a
/// pause or call every failure expired.
pub fn parse_duration_at_least_1s(input: &str) -> Result<Duration, String> {
    let d = parse_duration(input)?;
    if d < Duration::from_secs(1) {
        return Err(format!("{input:?}: expected at least 1s"));
    }
    Ok(d)
}

/// Parses kubectl-style durations: `10s`, `1m`, `1m30s`, `500ms`, `2h`, or a bare number of seconds.
///
/// Errors name the input and the expected shape.
pub fn parse_duration(input: &str) -> Result<Duration, String> {
    let s = input.trim();
    let expected = || format!("invalid duration {input:?}: expected e.g. 10s, 1m, 1m30s, 500ms, 2h");
    if s.is_empty() {
        return Err(expected());
    }
    if let Ok(secs) = s.parse::<u64>() {
        return Ok(Duration::from_secs(secs));
    }
    let mut total = Duration::ZERO;
    let mut rest = s;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .unwrap_or(rest.len());
        if digits == 0 {
            return Err(expected());
        }
        let number: f64 = rest[..digits].parse().map_err(|_| expected())?;
        rest = &rest[digits..];
        let unit_len = rest.find(|c: char| c.is_ascii_digit()).unwrap_or(rest.len());
        let unit = &rest[..unit_len];
        rest = &rest[unit_len..];
        let scale = match unit {
            "ms" => 0.001,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return Err(expected()),
        };
        total += Duration::from_secs_f64(number * scale);
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

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
        let err = parse_duration("ten").unwrap_err();
        assert!(err.contains("\"ten\"") && err.contains("expected"), "{err}");
        assert!(parse_duration("5x").is_err());
        assert!(parse_duration("").is_err());
    }

    #[test]
    fn leader_election_flags() {
        let cli = Cli::try_parse_from(["kubectl-microservice", "operate"]).unwrap();
        let Command::Operate(args) = cli.command else {
            unreachable!()
        };
        assert!(!args.standalone);
        assert_eq!(args.lease_name, "microservice-operator");
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
        assert_eq!(args.lease_name, "ops.lock");
        assert_eq!(args.lease_namespace.as_deref(), Some("ops"));
        assert_eq!(args.health_listen, Some("0.0.0.0:8080".parse().unwrap()));
        for (bad, needle) in [
            (&["--standalone", "--lease-name", "x"][..], "cannot be used with"),
            (&["--lease-name", "Bad_Name"][..], "\"Bad_Name\""),
            (&["--lease-namespace", "Ops"][..], "\"Ops\""),
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
        let cli = Cli::try_parse_from([
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
    }
}
