//! The shared flags ([`GlobalArgs`]: kubectl's global flags, before or after the subcommand),
//! the one namespace rule, and how `-o` and `--color` values parse and are listed.

use std::time::Duration;

use clap::{Args, ValueEnum};

use super::scope;
use super::values::parse_duration;
use crate::render::{ColorChoice, OutputFormat};

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

    /// With -o jsonpath: a key the template names that the -o json document lacks prints
    /// nothing (true, kubectl's default), or is an error naming it (false; exit 2, where kubectl
    /// exits 1). The paths walk that document (`.items[*].name`), not the Kubernetes object
    /// (kubectl's `.items[*].metadata.name` finds no `metadata` there).
    #[arg(
        long,
        global = true,
        value_name = "BOOL",
        default_value_t = true,
        action = clap::ArgAction::Set,
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true",
        help_heading = scope::OUTPUT
    )]
    pub allow_missing_template_keys: bool,

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
    /// (`--bundle`, `logs --local`).
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn global_flags_work_after_the_subcommand() {
        let cli = super::super::parse_from([
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
        let cli = super::super::parse_from(["kubectl-microservice", "--context", "prod", "-n", "a", "status"]).unwrap();
        assert_eq!(cli.global.context.as_deref(), Some("prod"));
        assert_eq!(cli.global.namespaces, ["a"]);
        // Both sides: the later one wins, as a repeated flag does in kubectl.
        let cli =
            super::super::parse_from(["kubectl-microservice", "--context", "a", "status", "--context", "b"]).unwrap();
        assert_eq!(cli.global.context.as_deref(), Some("b"));
    }
}
