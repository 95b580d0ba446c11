//! Which shared flags ([`super::GlobalArgs`]) each subcommand takes, with the help text it
//! shows for them, and the refusal of those it does not take.
//!
//! The shared flags are clap `global` args, so they parse before or after the subcommand (as
//! kubectl's plugin mechanism needs). Where a subcommand does not take one, [`scoped`]
//! gives the subcommand a hidden copy of it (clap does not propagate a global arg to a
//! subcommand that has an arg of the same id): its `--help` and the completions leave it out,
//! the line still parses, and [`check`] then refuses it, before or after the subcommand, with
//! the reason (exit 2). Where a subcommand takes one with a meaning of its own (`manifests -A`,
//! `operate -n`), the copy carries that help text. The static completion scripts, whose
//! generators complete hidden flags too, are generated from [`flattened`] instead, where each
//! subcommand has only the shared flags it takes.
//!
//! Our own table rather than clap's `ArgGroup`s or per-subcommand flattening, because the
//! flags must stay global (before or after the subcommand) and an unknown flag's clap error
//! ("unexpected argument") would not say why it does not apply.

use clap::parser::ValueSource;
use clap::{ArgMatches, Args, Command};

/// Help heading of the connection flags.
pub const CONNECTION: &str = "Cluster connection";
/// Help heading of `-n`, `-A` and `-l`.
pub const SCOPE: &str = "Scope";
/// Help heading of `-o`, `--no-headers` and `--color`.
pub const OUTPUT: &str = "Output";

/// The subcommands this table covers; a test holds it equal to the real list, so a new
/// subcommand must say which shared flags it takes.
pub const SUBCOMMANDS: [&str; 8] = [
    "operate",
    "status",
    "logs",
    "explain-events",
    "collect",
    "manifests",
    "completion",
    "version",
];

/// The `-o` values `subcommand` accepts, as its `--help` and its refusal of another value both
/// list them (a test holds the three in step); `None` where `-o` is refused while parsing.
pub fn output_formats(subcommand: &str) -> Option<&'static str> {
    match subcommand {
        "status" => Some("json, yaml, wide, name, jsonpath=TEMPLATE or jsonpath-as-json=TEMPLATE"),
        "explain-events" | "version" => Some("json, yaml, jsonpath=TEMPLATE or jsonpath-as-json=TEMPLATE"),
        // No yaml, and kubectl has no `logs -o` to follow: runs are a stream, printed as they
        // end (with -f, forever), one JSON object per line for `jq`; a YAML stream of documents
        // would say the same in a form no log tool reads line by line.
        "logs" => Some("json, jsonpath=TEMPLATE or jsonpath-as-json=TEMPLATE"),
        "manifests" => Some("yaml, json, name, jsonpath=TEMPLATE or jsonpath-as-json=TEMPLATE"),
        _ => None,
    }
}

/// Ids (field names of [`super::GlobalArgs`]) of the flags that reach the API server.
const CONNECTION_IDS: [&str; 5] = ["kubeconfig", "context", "as_user", "as_groups", "request_timeout"];

/// How a subcommand treats one shared flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Use {
    /// It takes the flag; `Some` is the help text it shows instead of the shared one.
    Takes(Option<&'static str>),
    /// It refuses the flag (exit 2); the text says why it does not apply.
    Refuses(&'static str),
}

/// How `subcommand` treats the shared flag `id` (a [`super::GlobalArgs`] field name).
/// Subcommands outside [`SUBCOMMANDS`] take every shared flag.
pub fn shared_flag_use(subcommand: &str, id: &str) -> Use {
    let connection = CONNECTION_IDS.contains(&id);
    match subcommand {
        "completion" => Use::Refuses("it prints a shell script; it reads no cluster and prints no objects"),
        "operate" => operate_use(id, connection),
        "status" => status_use(id),
        "logs" => logs_use(id),
        "explain-events" => explain_events_use(id),
        "collect" => collect_use(id),
        "manifests" => manifests_use(id, connection),
        "version" => version_use(id),
        _ => Use::Takes(None),
    }
}

/// How `operate` treats the shared flag `id`.
fn operate_use(id: &str, connection: bool) -> Use {
    use Use::{Refuses, Takes};
    match id {
        "namespaces" => Takes(Some(
            "Namespaces to watch: repeatable or comma-separated (default: the context's namespace; in a Pod, the service account's)",
        )),
        "all_namespaces" => Takes(Some(
            "Watch all namespaces (one cluster-wide watch); beats -n, as in kubectl",
        )),
        "request_timeout" => Takes(Some(
            "Connect timeout, e.g. `10s` (`0` = no limit); the watches are long-lived, so no request time limit",
        )),
        "selector" => {
            Refuses("it does not select Microservices by label: it handles every Microservice in its --namespace(s)")
        }
        _ if connection => Takes(None),
        _ => Refuses("it prints no objects; its log format is --log-format text|json"),
    }
}

/// How `status` treats the shared flag `id`.
fn status_use(id: &str) -> Use {
    use Use::Takes;
    match id {
        "namespaces" => Takes(Some(
            "The namespace (default: the context's namespace; with --bundle, the whole bundle)",
        )),
        "no_headers" => Takes(Some("Do not print the table's headers")),
        "output" => Takes(Some(
            "Output format: json, yaml, wide, name, jsonpath=TEMPLATE or jsonpath-as-json=TEMPLATE (default: a table; with NAME, sentences, and no wide); templates walk the -o json document: {.items[*].name}, not kubectl's {.items[*].metadata.name}",
        )),
        _ => Takes(None),
    }
}

/// How `logs` treats the shared flag `id`.
fn logs_use(id: &str) -> Use {
    use Use::{Refuses, Takes};
    match id {
        "namespaces" => Takes(Some(
            "Namespace of OBJECT, and of the operator read (default: the context's namespace, as every command; with --local or --bundle, a bare NAME matches in any namespace)",
        )),
        "all_namespaces" => {
            Refuses("logs reads the operator of one namespace: -n NS (default: the context's namespace)")
        }
        "output" => Takes(Some(
            "Output format: json, jsonpath=TEMPLATE or jsonpath-as-json=TEMPLATE (json: one object per run, one per line; templates over each run's object); default: runs as text",
        )),
        "selector" => {
            Refuses("it does not select Microservices by label: give OBJECT (NAME or NS/NAME) to filter runs")
        }
        "no_headers" => Refuses("it prints no table"),
        _ => Takes(None),
    }
}

/// How `explain-events` treats the shared flag `id`.
fn explain_events_use(id: &str) -> Use {
    use Use::{Refuses, Takes};
    match id {
        "namespaces" => Takes(Some(
            "The Microservice's namespace (default: the context's namespace; with --bundle, the bundle's)",
        )),
        "all_namespaces" => Refuses("it explains one object: give -n NAMESPACE"),
        "output" => Takes(Some(
            "Output format: json, yaml, jsonpath=TEMPLATE or jsonpath-as-json=TEMPLATE (default: sentences); templates walk the -o json document: {.findings[*].id}",
        )),
        "selector" => Refuses("it does not select Microservices by label: give the NAME of one Microservice"),
        "no_headers" => Refuses("it prints no table"),
        _ => Takes(None),
    }
}

/// How `collect` treats the shared flag `id`.
fn collect_use(id: &str) -> Use {
    use Use::{Refuses, Takes};
    match id {
        "namespaces" => Takes(Some("The namespace to collect (default: the context's namespace)")),
        "all_namespaces" => Takes(Some("Collect all namespaces; beats -n, as in kubectl")),
        "output" | "allow_missing_template_keys" | "no_headers" | "color" => {
            Refuses("it writes a bundle directory (JSON files and logs), not a listing")
        }
        _ => Takes(None),
    }
}

/// How `manifests` treats the shared flag `id`.
fn manifests_use(id: &str, connection: bool) -> Use {
    use Use::{Refuses, Takes};
    match id {
        "namespaces" => Takes(Some("The namespace the operator runs in (required)")),
        "all_namespaces" => Takes(Some(
            "The operator watches all namespaces (cluster-wide RBAC), instead of --watch-namespace; -n still names the operator's own namespace",
        )),
        "output" => Takes(Some(
            "Output format: yaml, json, name, jsonpath=TEMPLATE or jsonpath-as-json=TEMPLATE (default: yaml; json: one v1 List)",
        )),
        "selector" => Refuses("it does not select Microservices by label"),
        "allow_missing_template_keys" => Takes(None),
        // The cluster's CRD is read, to print one that removes nothing from it.
        _ if connection => Takes(None),
        _ => Refuses("it prints YAML or JSON documents, not a table"),
    }
}

/// How `version` treats the shared flag `id`.
fn version_use(id: &str) -> Use {
    use Use::{Refuses, Takes};
    match id {
        "namespaces" => Takes(Some(
            "Where to look for operators when Deployments cannot be listed cluster-wide (default: the context's namespace)",
        )),
        "all_namespaces" => Refuses("it already looks for operators in all namespaces"),
        "output" => Takes(Some(
            "Output format: json, yaml, jsonpath=TEMPLATE or jsonpath-as-json=TEMPLATE (default: text)",
        )),
        "selector" => Refuses("it does not select Microservices by label"),
        "no_headers" => Refuses("it prints no table"),
        "color" => Refuses("it prints plain text"),
        _ => Takes(None),
    }
}

/// The shared flags as defined in [`super::GlobalArgs`].
fn shared_args() -> Vec<clap::Arg> {
    super::GlobalArgs::augment_args(Command::new("shared"))
        .get_arguments()
        .cloned()
        .collect()
}

/// The parsing definition: `root` (clap's `Cli::command()`) with each subcommand given its own
/// (non-global) copy of each shared flag it refuses (hidden) or describes in its own words.
pub fn scoped(root: Command) -> Command {
    root.mut_subcommands(scope_shared_flags)
}

/// The definition for static completion scripts: the shared flags are no longer global, and
/// each subcommand has its own copy of those it takes (with its help text), none of the others.
/// It does not parse a line as [`scoped`] does (a flag before the subcommand stays there).
/// A subcommand's own hidden flags (`logs`'s old `--file`) are left out: the generators would
/// complete them (clap_complete completes hidden flags); no visible flag may name one in its
/// `conflicts_with` (the hidden one names them).
pub fn flattened(root: Command) -> Command {
    let shared: Vec<String> = shared_args().iter().map(|a| a.get_id().to_string()).collect();
    root.mut_args(|arg| {
        if shared.iter().any(|id| id == arg.get_id().as_str()) {
            arg.global(false)
        } else {
            arg
        }
    })
    .mut_subcommands(|sub| {
        let sub = without_hidden_args(sub);
        let name = sub.get_name().to_string();
        shared_args()
            .into_iter()
            .fold(sub, |sub, arg| match shared_flag_use(&name, arg.get_id().as_str()) {
                Use::Takes(None) => sub.arg(arg.global(false)),
                Use::Takes(Some(help)) => sub.arg(arg.global(false).help(help)),
                Use::Refuses(_) => sub,
            })
    })
}

/// `sub` without its hidden arguments: its name, about texts and visible arguments (what a
/// completion script reads of it).
fn without_hidden_args(sub: Command) -> Command {
    let name = SUBCOMMANDS.iter().find(|n| **n == sub.get_name());
    let (Some(name), true) = (name, sub.get_arguments().any(|a| a.is_hide_set())) else {
        return sub;
    };
    let mut out = Command::new(*name);
    if let Some(about) = sub.get_about() {
        out = out.about(about.clone());
    }
    if let Some(about) = sub.get_long_about() {
        out = out.long_about(about.clone());
    }
    for arg in sub.get_arguments().filter(|a| !a.is_hide_set()) {
        out = out.arg(arg.clone());
    }
    out
}

fn scope_shared_flags(subcommand: Command) -> Command {
    let name = subcommand.get_name().to_string();
    shared_args().into_iter().fold(subcommand, |sub, arg| {
        match shared_flag_use(&name, arg.get_id().as_str()) {
            Use::Takes(None) => sub,
            Use::Takes(Some(help)) => {
                // The text names the values that apply here.
                let takes_values = arg.get_action().takes_values();
                sub.arg(arg.global(false).help(help).hide_possible_values(takes_values))
            }
            Use::Refuses(_) => sub.arg(arg.global(false).hide(true)),
        }
    })
}

/// `-o/--output`, `--kubeconfig`: how a shared flag is named in messages.
fn flag_name(arg: &clap::Arg) -> String {
    match (arg.get_short(), arg.get_long()) {
        (Some(short), Some(long)) => format!("-{short}/--{long}"),
        (None, Some(long)) => format!("--{long}"),
        (Some(short), None) => format!("-{short}"),
        (None, None) => arg.get_id().to_string(),
    }
}

/// Refuses a shared flag given (before or after the subcommand) to a subcommand that does not
/// take it: a usage error (exit 2) naming the flag, the subcommand and why, with the
/// subcommand's usage line.
pub fn check(root: &mut Command, matches: &ArgMatches) -> Result<(), clap::Error> {
    let Some((name, _)) = matches.subcommand() else {
        return Ok(());
    };
    let name = name.to_string();
    for arg in shared_args() {
        let id = arg.get_id().as_str();
        if matches.value_source(id) != Some(ValueSource::CommandLine) {
            continue;
        }
        if let Use::Refuses(why) = shared_flag_use(&name, id) {
            let message = format!("{} does not apply to {name}: {why}", flag_name(&arg));
            let sub = root
                .find_subcommand_mut(&name)
                .expect("the matched subcommand is defined");
            return Err(sub.error(clap::error::ErrorKind::ArgumentConflict, message));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;
    use crate::cli::Cli;

    #[test]
    fn definitions_are_consistent() {
        crate::cli::command().debug_assert();
        flattened(Cli::command()).debug_assert();
    }

    #[test]
    fn every_subcommand_says_which_shared_flags_it_takes() {
        let root = Cli::command();
        let names: Vec<&str> = root.get_subcommands().map(|s| s.get_name()).collect();
        assert_eq!(names, SUBCOMMANDS, "a new subcommand needs its row in shared_flag_use");
    }

    /// Each subcommand's help lists exactly the shared flags it takes.
    #[test]
    fn help_lists_only_the_shared_flags_a_subcommand_takes() {
        let mut root = crate::cli::command();
        root.build();
        let mut flat = flattened(Cli::command());
        flat.build();
        let ids: Vec<String> = shared_args().iter().map(|a| a.get_id().to_string()).collect();
        for sub in root.get_subcommands().filter(|s| s.get_name() != "help") {
            for id in &ids {
                let arg = sub.get_arguments().find(|a| a.get_id() == id.as_str()).unwrap();
                let takes = matches!(shared_flag_use(sub.get_name(), id), Use::Takes(_));
                assert_eq!(!arg.is_hide_set(), takes, "{} {id}", sub.get_name());
                // The completion scripts' definition has it exactly where it is taken.
                let flat_sub = flat.find_subcommand(sub.get_name()).unwrap();
                let in_flat = flat_sub.get_arguments().any(|a| a.get_id() == id.as_str());
                assert_eq!(in_flat, takes, "flattened {} {id}", sub.get_name());
            }
        }
    }

    #[test]
    fn refused_flags_name_the_subcommand_before_or_after_it() {
        for line in [
            &["completion", "bash", "-o", "json"][..],
            &["-o", "json", "completion", "bash"],
            &["--output=json", "completion", "bash"],
        ] {
            let err = crate::cli::parse_from(std::iter::once("kubectl-microservice").chain(line.iter().copied()))
                .unwrap_err();
            assert_eq!(err.exit_code(), 2, "{line:?}");
            assert!(
                err.to_string()
                    .starts_with("error: -o/--output does not apply to completion: it prints a shell script"),
                "{line:?}: {err}"
            );
        }
        // Taken: parsed, either side.
        for line in [&["status", "--context", "prod"][..], &["--context", "prod", "status"]] {
            let cli =
                crate::cli::parse_from(std::iter::once("kubectl-microservice").chain(line.iter().copied())).unwrap();
            assert_eq!(cli.global.context.as_deref(), Some("prod"));
        }
    }
}
