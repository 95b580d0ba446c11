//! Which candidates a command line asks for, read off the clap definitions: pure, no I/O.
//!
//! The walk mirrors clap's parsing closely enough for completion: `--long value`,
//! `--long=value`, `-s value`, `-svalue`, `-s=value`, clusters of short flags, `--` ending the
//! flags, subcommand names and aliases, global flags before or after the subcommand. Values
//! that only the cluster or the kubeconfig knows are returned as a [`CandidateSource`] for
//! [`super::live`] to fill in.

use clap::builder::StyledStr;
use clap::{Arg, ArgAction, Command, FromArgMatches, ValueHint};

use crate::cli::GlobalArgs;

use super::protocol::{Candidate, Directive};

/// Handler ids that `--handler` offers: our operator's and Kopf's handler `accept`, and Kopf's
/// field handler `accept/spec` (Kopf names a handler declared with `field="spec"` `<id>/spec`;
/// `generate_id` in Kopf's `kopf/_core/intents/registries.py`).
pub const HANDLER_IDS: [(&str, &str); 2] = [
    (
        crate::vocab::handler::HANDLER,
        "the accept handler (Kopf's and ours), with its field handlers",
    ),
    ("accept/spec", "Kopf's field handler of accept, run on spec changes"),
];

/// What a subcommand's positionals name, where clap's definitions do not say it.
const POSITIONALS: [(&str, Positional); 4] = [
    ("status", Positional::ObjectName),
    ("logs", Positional::ObjectName),
    ("explain-events", Positional::ObjectName),
    ("collect", Positional::Directory),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Positional {
    /// The first positional is a Microservice name.
    ObjectName,
    /// A directory.
    Directory,
}

/// Where the candidates for the word being completed come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CandidateSource {
    /// Known from the definitions alone: already filtered by the prefix.
    Fixed {
        /// The candidates, in definition order.
        candidates: Vec<Candidate>,
        /// What the shell should do besides offering them.
        directive: Directive,
    },
    /// Names of Microservice objects in the line's namespace (`-n`, else the context's), or in
    /// all namespaces with `-A`.
    MicroserviceNames,
    /// Names of namespaces.
    Namespaces,
    /// Context names of the line's kubeconfig (`--kubeconfig`, else `$KUBECONFIG` / `~/.kube/config`).
    Contexts,
    /// `--resource` values: the resources whose objects carry Kopf's annotations, in the line's
    /// `--bundle` (`PLURAL.GROUP`); none without one.
    ResourceTypes {
        /// The line's `--bundle DIR`, as typed.
        bundle: Option<String>,
    },
}

/// The answer of [`request`]: where candidates come from, the typed prefix they must start with,
/// and the global flags given on the line (for the cluster lookups).
#[derive(Debug, Clone)]
pub struct CompletionRequest {
    /// Where the candidates come from.
    pub source: CandidateSource,
    /// The part of the value typed so far (without a `--flag=` in front).
    pub prefix: String,
    /// The global flags given anywhere on the line, parsed as the real command would parse them;
    /// `None` when one of them is invalid (e.g. `--request-timeout ten`): no cluster lookup then.
    pub global: Option<GlobalArgs>,
}

/// What completing `words` asks for. `words` are the arguments after the plugin's name, the last
/// being the word under the cursor (`""` for a new word), as kubectl's plugin completion passes
/// them.
///
/// `root` must be the built command tree (`Command::build`), so that global flags are
/// propagated to the subcommands.
pub fn request(root: &Command, words: &[String]) -> CompletionRequest {
    let (current, done) = match words.split_last() {
        Some((current, done)) => (current.as_str(), done),
        None => ("", &[][..]),
    };
    let mut walk = Walk::new(root);
    for word in done {
        walk.step(word);
    }
    let global = walk.global_args();
    let (source, prefix) = walk.complete(current);
    CompletionRequest { source, prefix, global }
}

/// The state of the walk over the completed words.
struct Walk<'a> {
    root: &'a Command,
    cmd: &'a Command,
    /// Positionals seen since the current (sub)command.
    positionals: usize,
    /// A flag whose value is the next word.
    pending: Option<&'a Arg>,
    /// `--` was seen: everything after is positional.
    dashdash: bool,
    /// Ids of the flags given so far.
    seen: Vec<String>,
    /// The global flags given, as `--long=value` / `--long` tokens.
    global_tokens: Vec<String>,
    /// The value of `--bundle`, when given.
    bundle: Option<String>,
}

impl<'a> Walk<'a> {
    fn new(root: &'a Command) -> Self {
        Walk {
            root,
            cmd: root,
            positionals: 0,
            pending: None,
            dashdash: false,
            seen: Vec::new(),
            global_tokens: Vec::new(),
            bundle: None,
        }
    }

    fn step(&mut self, word: &str) {
        if let Some(arg) = self.pending.take() {
            self.record(arg, Some(word));
            return;
        }
        if self.dashdash {
            self.positionals += 1;
            return;
        }
        if word == "--" {
            self.dashdash = true;
            return;
        }
        if let Some(body) = word.strip_prefix("--") {
            let (name, value) = match body.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (body, None),
            };
            if let Some(arg) = find_long(self.cmd, name) {
                match (takes_value(arg), value) {
                    (true, None) => self.pending = Some(arg),
                    (true, Some(value)) => self.record(arg, Some(value)),
                    (false, _) => self.record(arg, None),
                }
            }
            return;
        }
        if let Some(cluster) = word.strip_prefix('-').filter(|c| !c.is_empty()) {
            for (at, c) in cluster.char_indices() {
                let Some(arg) = find_short(self.cmd, c) else { return };
                if takes_value(arg) {
                    let rest = &cluster[at + c.len_utf8()..];
                    let rest = rest.strip_prefix('=').unwrap_or(rest);
                    if rest.is_empty() {
                        self.pending = Some(arg);
                    } else {
                        self.record(arg, Some(rest));
                    }
                    return;
                }
                self.record(arg, None);
            }
            return;
        }
        if self.positionals == 0
            && let Some(sub) = self.cmd.find_subcommand(word)
        {
            self.cmd = sub;
            return;
        }
        self.positionals += 1;
    }

    fn record(&mut self, arg: &Arg, value: Option<&str>) {
        let id = arg.get_id().as_str();
        self.seen.push(id.to_string());
        if id == "bundle" {
            self.bundle = value.map(str::to_string);
        }
        let global = self
            .root
            .get_arguments()
            .any(|a| a.get_id() == arg.get_id() && a.is_global_set());
        if !global {
            return;
        }
        let flag = match (arg.get_long(), arg.get_short()) {
            (Some(long), _) => format!("--{long}"),
            (None, Some(short)) => format!("-{short}"),
            (None, None) => return,
        };
        match value {
            Some(value) => {
                self.global_tokens.push(flag);
                self.global_tokens.push(value.to_string());
            }
            None => self.global_tokens.push(flag),
        }
    }

    /// The global flags of the line, parsed by the real [`GlobalArgs`] definition.
    fn global_args(&self) -> Option<GlobalArgs> {
        let cmd = <GlobalArgs as clap::Args>::augment_args(Command::new("kubectl-microservice").no_binary_name(true));
        let matches = cmd.try_get_matches_from(&self.global_tokens).ok()?;
        GlobalArgs::from_arg_matches(&matches).ok()
    }

    fn complete(&self, current: &str) -> (CandidateSource, String) {
        if let Some(arg) = self.pending {
            return (self.value_source(arg, None, current), current.to_string());
        }
        if !self.dashdash {
            if let Some((name, value)) = current.strip_prefix("--").and_then(|body| body.split_once('=')) {
                let source = match find_long(self.cmd, name).filter(|a| takes_value(a)) {
                    Some(arg) => self.value_source(arg, None, value),
                    None => no_candidates(),
                };
                return (source, value.to_string());
            }
            if let Some(body) = current.strip_prefix('-').filter(|b| !b.starts_with('-')) {
                let mut chars = body.chars();
                if let (Some(c), Some('=')) = (chars.next(), chars.next()) {
                    let value = &body[c.len_utf8() + 1..];
                    let source = match find_short(self.cmd, c).filter(|a| takes_value(a)) {
                        Some(arg) => self.value_source(arg, None, value),
                        None => no_candidates(),
                    };
                    return (source, value.to_string());
                }
            }
            if current.starts_with('-') {
                return (self.flag_names(current), current.to_string());
            }
        }
        if self.positionals == 0 && self.cmd.has_subcommands() {
            return (self.subcommand_names(current), current.to_string());
        }
        let source = match self.positional_arg() {
            Some(arg) => self.value_source(arg, Some(self.positionals), current),
            None => no_candidates(),
        };
        (source, current.to_string())
    }

    /// The positional argument that the next positional word fills.
    fn positional_arg(&self) -> Option<&'a Arg> {
        let mut positionals: Vec<&Arg> = self.cmd.get_positionals().collect();
        positionals.sort_by_key(|a| a.get_index());
        match positionals.get(self.positionals) {
            Some(arg) => Some(arg),
            None => positionals
                .last()
                .copied()
                .filter(|a| matches!(a.get_action(), ArgAction::Append)),
        }
    }

    fn flag_names(&self, current: &str) -> CandidateSource {
        let mut candidates = Vec::new();
        for arg in self.cmd.get_arguments() {
            if arg.is_positional() || arg.is_hide_set() {
                continue;
            }
            let repeatable = matches!(arg.get_action(), ArgAction::Append | ArgAction::Count);
            if !repeatable && self.seen.iter().any(|id| id == arg.get_id().as_str()) {
                continue;
            }
            let help = arg.get_help().map(first_line);
            if let Some(long) = arg.get_long() {
                let name = format!("--{long}");
                if name.starts_with(current) {
                    candidates.push(Candidate::new(name, help.clone()));
                }
            }
            if let Some(short) = arg.get_short() {
                let name = format!("-{short}");
                if !current.starts_with("--") && name.starts_with(current) {
                    candidates.push(Candidate::new(name, help));
                }
            }
        }
        CandidateSource::Fixed {
            candidates,
            directive: Directive::NO_FILE_COMP,
        }
    }

    fn subcommand_names(&self, current: &str) -> CandidateSource {
        let candidates = self
            .cmd
            .get_subcommands()
            .filter(|sub| !sub.is_hide_set() && sub.get_name().starts_with(current))
            .map(|sub| Candidate::new(sub.get_name().to_string(), sub.get_about().map(first_line)))
            .collect();
        CandidateSource::Fixed {
            candidates,
            directive: Directive::NO_FILE_COMP,
        }
    }

    /// Where the values of `arg` come from; `positional` is the index of the positional word.
    fn value_source(&self, arg: &Arg, positional: Option<usize>, current: &str) -> CandidateSource {
        match arg.get_long() {
            Some("namespace") => return CandidateSource::Namespaces,
            Some("context") => return CandidateSource::Contexts,
            Some("resource") => {
                return CandidateSource::ResourceTypes {
                    bundle: self.bundle.clone(),
                };
            }
            Some("handler") => {
                let candidates = HANDLER_IDS
                    .iter()
                    .filter(|(id, _)| id.starts_with(current))
                    .map(|(id, help)| Candidate::new(id.to_string(), Some(help.to_string())))
                    .collect();
                return CandidateSource::Fixed {
                    candidates,
                    directive: Directive::NO_FILE_COMP,
                };
            }
            _ => {}
        }
        let kind = POSITIONALS
            .iter()
            .find(|(name, _)| *name == self.cmd.get_name())
            .map(|(_, kind)| *kind);
        match (positional, kind) {
            (Some(0), Some(Positional::ObjectName)) => return CandidateSource::MicroserviceNames,
            (Some(_), Some(Positional::Directory)) => {
                return CandidateSource::Fixed {
                    candidates: Vec::new(),
                    directive: Directive::FILTER_DIRS,
                };
            }
            _ => {}
        }
        let values = arg.get_possible_values();
        if !values.is_empty() {
            let candidates: Vec<Candidate> = values
                .iter()
                .filter(|v| !v.is_hide_set() && v.get_name().starts_with(current))
                .map(|v| Candidate::new(v.get_name().to_string(), v.get_help().map(first_line)))
                .collect();
            // `-o jsonpath=` is the start of a value: the template follows without a space.
            let prefixes_only = !candidates.is_empty() && candidates.iter().all(|c| c.value.ends_with('='));
            let directive = if prefixes_only {
                Directive(Directive::NO_FILE_COMP.0 | Directive::NO_SPACE.0)
            } else {
                Directive::NO_FILE_COMP
            };
            return CandidateSource::Fixed { candidates, directive };
        }
        let names = value_names(arg);
        let directive = match arg.get_value_hint() {
            ValueHint::DirPath => Directive::FILTER_DIRS,
            // A value named DIR is a directory also when its type only says "a path" (clap gives
            // a PathBuf the hint AnyPath).
            ValueHint::AnyPath | ValueHint::Unknown if names.contains("DIR") => Directive::FILTER_DIRS,
            ValueHint::AnyPath | ValueHint::FilePath | ValueHint::ExecutablePath => Directive::DEFAULT,
            // A String argument that says what it holds in its value name (`--log-file <FILE|->`).
            ValueHint::Unknown if names.contains("PATH") || names.contains("FILE") => Directive::DEFAULT,
            _ => Directive::NO_FILE_COMP,
        };
        CandidateSource::Fixed {
            candidates: Vec::new(),
            directive,
        }
    }
}

/// No candidates, and no file names either.
fn no_candidates() -> CandidateSource {
    CandidateSource::Fixed {
        candidates: Vec::new(),
        directive: Directive::NO_FILE_COMP,
    }
}

/// The value names of `arg` (`PATH|-`, `DIR`), joined.
fn value_names(arg: &Arg) -> String {
    arg.get_value_names().map(|names| names.join(" ")).unwrap_or_default()
}

fn takes_value(arg: &Arg) -> bool {
    arg.get_action().takes_values()
}

fn find_long<'c>(cmd: &'c Command, name: &str) -> Option<&'c Arg> {
    cmd.get_arguments().find(|a| {
        !a.is_positional()
            && a.get_long_and_visible_aliases()
                .is_some_and(|names| names.contains(&name))
    })
}

fn find_short(cmd: &Command, c: char) -> Option<&Arg> {
    cmd.get_arguments().find(|a| {
        !a.is_positional()
            && a.get_short_and_visible_aliases()
                .is_some_and(|names| names.contains(&c))
    })
}

fn first_line(help: &StyledStr) -> String {
    help.to_string().lines().next().unwrap_or("").trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    fn root() -> Command {
        let mut cmd = crate::cli::command();
        cmd.build();
        cmd
    }

    fn request_of(words: &[&str]) -> CompletionRequest {
        let words: Vec<String> = words.iter().map(|w| w.to_string()).collect();
        request(&root(), &words)
    }

    fn values(source: CandidateSource) -> (Vec<String>, Directive) {
        match source {
            CandidateSource::Fixed { candidates, directive } => {
                (candidates.into_iter().map(|c| c.value).collect(), directive)
            }
            other => panic!("expected fixed candidates, got {other:?}"),
        }
    }

    fn has(names: &[String], name: &str) -> bool {
        names.iter().any(|n| n == name)
    }

    #[test]
    fn a_new_word_after_the_plugin_name_is_a_subcommand() {
        let request = request_of(&[""]);
        let (names, directive) = values(request.source);
        for sub in [
            "operate",
            "status",
            "logs",
            "explain-events",
            "collect",
            "manifests",
            "completion",
            "version",
        ] {
            assert!(has(&names, sub), "{sub} missing from {names:?}");
        }
        assert!(
            !names.iter().any(|n| n.starts_with("__")),
            "hidden names offered: {names:?}"
        );
        assert_eq!(directive, Directive::NO_FILE_COMP);
        let request = request_of(&["st"]);
        assert_eq!(values(request.source).0, ["status"]);
    }

    #[test]
    fn subcommands_carry_their_about_line_as_description() {
        let request = request_of(&["ma"]);
        let CandidateSource::Fixed { candidates, .. } = &request.source else {
            panic!()
        };
        assert_eq!(candidates.len(), 1);
        assert_eq!(
            candidates[0].description.as_deref(),
            Some("Print the manifests that install the CRD, RBAC and the operator Deployment")
        );
    }

    #[test]
    fn object_names_for_status_logs_and_explain_events() {
        for sub in ["status", "logs", "explain-events"] {
            let request = request_of(&[sub, "to"]);
            assert_eq!(request.source, CandidateSource::MicroserviceNames, "{sub}");
            assert_eq!(request.prefix, "to");
        }
        // Only the first positional is a name.
        assert_eq!(
            values(request_of(&["status", "todo-api", ""]).source).0,
            Vec::<String>::new()
        );
        // `collect DIR`: directories.
        assert_eq!(values(request_of(&["collect", ""]).source).1, Directive::FILTER_DIRS);
    }

    #[test]
    fn flags_of_the_subcommand_including_global_ones() {
        let (names, directive) = values(request_of(&["operate", "--"]).source);
        for flag in [
            "--log-format",
            "--events",
            "--namespace",
            "--context",
            "--kubeconfig",
            "--help",
        ] {
            assert!(has(&names, flag), "{flag} missing from {names:?}");
        }
        assert!(!has(&names, "-n"), "a short flag offered for `--`: {names:?}");
        assert_eq!(directive, Directive::NO_FILE_COMP);
        let (names, _) = values(request_of(&["status", "-"]).source);
        assert!(
            has(&names, "-n") && has(&names, "--namespace") && has(&names, "-A"),
            "{names:?}"
        );
        let (names, _) = values(request_of(&["operate", "--ev"]).source);
        assert_eq!(names, ["--events"]);
    }

    #[test]
    fn a_flag_already_given_is_not_offered_again_unless_repeatable() {
        let (names, _) = values(request_of(&["status", "--context", "x", "--"]).source);
        assert!(!has(&names, "--context"), "{names:?}");
        let (names, _) = values(request_of(&["operate", "-n", "a", "--"]).source);
        assert!(has(&names, "--namespace"), "--namespace is repeatable: {names:?}");
    }

    #[test]
    fn flag_values_in_every_spelling() {
        for words in [
            &["status", "-n", "ku"][..],
            &["status", "--namespace", "ku"],
            &["status", "--namespace=ku"],
            &["status", "-n=ku"],
            &["-n", "ku"],
        ] {
            let request = request_of(words);
            assert_eq!(request.source, CandidateSource::Namespaces, "{words:?}");
            assert_eq!(request.prefix, "ku", "{words:?}");
        }
        assert_eq!(request_of(&["logs", "--context", ""]).source, CandidateSource::Contexts);
        assert_eq!(
            values(request_of(&["status", "-o", ""]).source),
            (
                ["json", "yaml", "wide", "name", "jsonpath=", "jsonpath-as-json="]
                    .map(String::from)
                    .to_vec(),
                Directive::NO_FILE_COMP
            )
        );
        assert_eq!(
            values(request_of(&["status", "-o", "jsonp"]).source),
            (
                ["jsonpath=", "jsonpath-as-json="].map(String::from).to_vec(),
                Directive(Directive::NO_FILE_COMP.0 | Directive::NO_SPACE.0)
            )
        );
        assert_eq!(
            values(request_of(&["status", "--color="]).source).0,
            ["auto", "always", "never"]
        );
        assert_eq!(values(request_of(&["operate", "--events", "w"]).source).0, ["warnings"]);
        assert_eq!(values(request_of(&["completion", ""]).source).0.len(), 6);
        // A path: the shell completes file names.
        assert_eq!(
            values(request_of(&["status", "--kubeconfig", ""]).source).1,
            Directive::DEFAULT
        );
        // A String path that says so in its value name.
        assert_eq!(
            values(request_of(&["logs", "--log-file", ""]).source).1,
            Directive::DEFAULT
        );
        assert_eq!(values(request_of(&["logs", "--file", ""]).source).1, Directive::DEFAULT);
        // A free-form value: nothing to offer, and no file names either.
        assert_eq!(
            values(request_of(&["status", "-l", ""]).source),
            (Vec::<String>::new(), Directive::NO_FILE_COMP)
        );
    }

    /// Every flag whose value is a directory (`--bundle DIR` of status, explain-events and logs:
    /// a PathBuf, which clap hints as any path) completes directories only (cobra's FILTER_DIRS).
    #[test]
    fn directory_values_complete_directories() {
        let root = root();
        let mut seen = Vec::new();
        for sc in root.get_subcommands() {
            for arg in sc.get_arguments().filter(|a| value_names(a) == "DIR") {
                let Some(long) = arg.get_long() else { continue };
                let flag = format!("--{long}");
                let request = request_of(&[sc.get_name(), flag.as_str(), ""]);
                assert_eq!(
                    values(request.source).1,
                    Directive::FILTER_DIRS,
                    "{} {flag}",
                    sc.get_name()
                );
                seen.push(format!("{} {flag}", sc.get_name()));
            }
        }
        for expected in ["status --bundle", "explain-events --bundle", "logs --bundle"] {
            assert!(seen.iter().any(|s| s == expected), "{expected} not among {seen:?}");
        }
    }

    #[test]
    fn a_value_that_looks_like_a_subcommand_is_a_value() {
        // `-n status` names a namespace; the subcommand is still to come.
        let (names, _) = values(request_of(&["-n", "status", "op"]).source);
        assert_eq!(names, ["operate"]);
        // Attached short values and clusters.
        assert_eq!(
            request_of(&["-nkube-system", "status", ""]).global.unwrap().namespaces,
            ["kube-system"]
        );
        assert_eq!(request_of(&["status", "-An", ""]).source, CandidateSource::Namespaces);
    }

    #[test]
    fn after_a_double_dash_everything_is_positional() {
        assert_eq!(
            request_of(&["status", "--", "-x"]).source,
            CandidateSource::MicroserviceNames
        );
    }

    #[test]
    fn the_lines_global_flags_are_parsed_as_the_command_parses_them() {
        let request = request_of(&[
            "--context",
            "prod",
            "status",
            "--kubeconfig=/tmp/kc",
            "-n",
            "a,b",
            "-A",
            "",
        ]);
        let global = request.global.unwrap();
        assert_eq!(global.context.as_deref(), Some("prod"));
        assert_eq!(global.kubeconfig.as_deref(), Some(std::path::Path::new("/tmp/kc")));
        assert_eq!(global.namespaces, ["a", "b"]);
        assert!(global.all_namespaces);
        // A local flag is not a global one.
        let request = request_of(&["operate", "--events", "none", "--as", "jane", ""]);
        assert_eq!(request.global.unwrap().as_user.as_deref(), Some("jane"));
        // An invalid global value: no lookup.
        assert!(request_of(&["status", "--request-timeout", "ten", ""]).global.is_none());
    }

    #[test]
    fn resource_values_come_from_the_lines_bundle() {
        for words in [
            &["status", "--bundle", "b", "--resource", ""][..],
            &["logs", "--bundle=b", "--resource="],
            &["explain-events", "x", "--bundle", "b", "--resource", "k"],
        ] {
            assert_eq!(
                request_of(words).source,
                CandidateSource::ResourceTypes {
                    bundle: Some("b".into())
                },
                "{words:?}"
            );
        }
        assert_eq!(
            request_of(&["collect", "dir", "--resource", ""]).source,
            CandidateSource::ResourceTypes { bundle: None }
        );
    }

    #[test]
    fn handler_ids_for_logs_handler() {
        let (names, directive) = values(request_of(&["logs", "--handler", ""]).source);
        assert_eq!(names, ["accept", "accept/spec"]);
        assert_eq!(directive, Directive::NO_FILE_COMP);
        assert_eq!(
            values(request_of(&["logs", "--handler=accept/"]).source).0,
            ["accept/spec"]
        );
        // After the handler, the object name.
        assert_eq!(
            request_of(&["logs", "--handler", "accept", ""]).source,
            CandidateSource::MicroserviceNames
        );
    }

    #[test]
    fn unknown_words_give_no_candidates_and_no_files() {
        assert_eq!(
            values(request_of(&["nosuch", ""]).source),
            (Vec::<String>::new(), Directive::NO_FILE_COMP)
        );
        assert_eq!(
            values(request_of(&["status", "--nosuch=x"]).source),
            (Vec::<String>::new(), Directive::NO_FILE_COMP)
        );
        assert_eq!(values(request_of(&[]).source).1, Directive::NO_FILE_COMP);
    }
}
