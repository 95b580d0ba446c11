//! The commands that README.md and docs/*.md show are commands the binary takes, and the outputs
//! they quote are what it prints now.
//!
//! - **README.md**: every `kubectl microservice ...` or `cargo run -- ...` command, in a fenced
//!   block or in inline code, is either run here (it needs no cluster: `--bundle`, `manifests`,
//!   `completion`, `--help`, `--version`), ending with exit 0 or 1 and printing what the README
//!   quotes under it, or is listed in [`README_CLUSTER_COMMANDS`]: then it must parse, and run
//!   against an API server that refuses connections it must end with exit 3 ("could not decide",
//!   after its arguments were checked), never 2 (usage), and leave nothing behind.
//! - **docs/*.md**: every fenced block whose first line is `$ kubectl microservice ... --bundle
//!   DIR` is run (from the repository's root, colour off) and its stdout must equal the rest of
//!   the block; every other command shown must parse (quotes of live runs cannot be re-run).
//! - **Both**: a usage line (`[--flag]`, `...`, `a|b`) names only flags its subcommand has.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use clap::{CommandFactory, Parser};
use kubectl_microservice::cli::Cli;

#[path = "support/kubeconfig.rs"]
mod kubeconfig;

const BIN: &str = env!("CARGO_BIN_EXE_kubectl-microservice");

/// The README's commands that need a cluster, as the words after `kubectl microservice`. Each is
/// checked to parse and to get as far as the cluster; each must still be in the README.
const README_CLUSTER_COMMANDS: &[&str] = &[
    "operate",
    "operate --namespace todo",
    "status -n todo",
    "status todo-api -n todo",
    "logs --handler accept todo-api -n todo",
    "explain-events todo-api -n todo",
    "explain-events todo-api -n todo --log-file operate.log",
    "collect bundle -n todo",
];

/// Outputs the README must keep quoting (its demo and the three questions' answers).
const README_QUOTES: &[&str] = &[
    "explain-events basket-api --bundle examples/warnings-hidden",
    "status -n store --bundle tests/fixtures/bundles/stale-port",
    r#"status -n store --bundle tests/fixtures/bundles/stale-port -o jsonpath={range .items[*]}{.name} {.verdict} {.reasons[0].code}{"\n"}{end}"#,
    "logs --handler accept catalog-api --bundle examples/healthy",
];

/// Outputs docs/*.md must keep quoting, with the page that quotes each.
const DOCS_QUOTES: &[(&str, &str)] = &[
    (
        "docs/diagnostics.md",
        "explain-events catalog-api --bundle tests/fixtures/bundles/ours-style-rbac",
    ),
    (
        "docs/diagnostics.md",
        "explain-events todo-api --bundle tests/fixtures/bundles-captured/lease-expired",
    ),
    (
        "docs/diagnostics.md",
        "status -n store --bundle tests/fixtures/bundles/stale-port",
    ),
];

/// One command a Markdown page shows.
#[derive(Debug, Clone)]
struct Shown {
    /// `README.md line 17`.
    place: String,
    /// The words after `kubectl microservice` (or after `cargo run ... --`).
    args: Vec<String>,
    /// A usage line (`[--flag]`, `...`, alternatives `a|b`, `<TAB>`): its flags are checked, it
    /// is not run.
    usage: bool,
    /// For a `$ ` line in a fenced block: the lines after it up to the next `$ ` line or the fence.
    quoted: Option<String>,
}

impl Shown {
    fn command(&self) -> String {
        self.args.join(" ")
    }
}

/// How our commands begin: the plugin through kubectl, the bare binary, or cargo from a clone.
const STARTS: &[&str] = &["kubectl microservice ", "kubectl-microservice ", "cargo run "];

/// The command in `text` (a line of a block, or an inline code span), if it shows one of ours.
fn command_in(text: &str) -> Option<(Vec<String>, bool)> {
    // At the start of a word: `app.kubernetes.io/name=kubectl-microservice --prefix` is kubectl's.
    let at_word = |i: usize| {
        text[..i]
            .chars()
            .next_back()
            .is_none_or(|c| c.is_whitespace() || "(`\"'".contains(c))
    };
    let start = STARTS
        .iter()
        .flat_map(|s| text.match_indices(s).map(|(i, _)| i))
        .filter(|&i| at_word(i))
        .min()?;
    let rest = &text[start..];
    let rest = rest.split(" #").next().unwrap();
    // A usage line keeps its alternatives ` | ` and brackets; a command ends at a pipe or a
    // redirection, and `<(...)` / `$(...)` around it. Brackets and braces inside quotes are a
    // value's (`-o jsonpath='{.items[*].name}'`), not a usage line's.
    let usage = outside_quotes(rest).contains('[') || rest.contains("...");
    let mut command = rest;
    if !usage {
        for end in [" | ", " 2>", " >", ">\"", "; ", " && "] {
            if let Some(i) = command.find(end) {
                command = &command[..i];
            }
        }
        if text[..start].ends_with("<(") || text[..start].ends_with("$(") {
            command = command.trim_end_matches(')');
        }
    }
    let usage = usage || outside_quotes(command).contains(['<', '(', '|', '{']);
    let mut words = split_words(command);
    if words.first().map(String::as_str) == Some("cargo") {
        let dashes = words.iter().position(|w| w == "--")?;
        words.drain(..=dashes);
    } else {
        words.drain(..if words[0] == "kubectl" { 2 } else { 1 });
    }
    Some((words, usage))
}

/// `text` without what its single or double quotes hold (the quotes kept).
fn outside_quotes(text: &str) -> String {
    let mut out = String::new();
    let mut quote: Option<char> = None;
    for c in text.chars() {
        match quote {
            Some(q) if c == q => {
                quote = None;
                out.push(c);
            }
            Some(_) => {}
            None => {
                if c == '\'' || c == '"' {
                    quote = Some(c);
                }
                out.push(c);
            }
        }
    }
    out
}

/// Splits a command line into words as a shell would for the plain quoting used in the pages
/// (`'...'`, `"..."`, backslash escapes); no expansions.
fn split_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                word.extend(chars.by_ref().take_while(|&c| c != '\''));
            }
            '"' => {
                in_word = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => word.extend(chars.next()),
                        c => word.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.extend(chars.next());
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// Every command `text` (the Markdown page `file`) shows: in fenced blocks (in a block with `$ `
/// lines only those, the rest being their output; a usage line takes its indented continuation
/// lines along) and in inline code spans outside them.
fn shown(file: &str, text: &str) -> Vec<Shown> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    // The page with fenced blocks blanked out (line numbers kept), for the inline spans.
    let mut prose = String::new();
    let mut i = 0;
    while i < lines.len() {
        if !lines[i].starts_with("```") {
            prose.push_str(lines[i]);
            prose.push('\n');
            i += 1;
            continue;
        }
        let start = i + 1;
        let mut end = start;
        while end < lines.len() && !lines[end].starts_with("```") {
            end += 1;
        }
        for _ in i..=end.min(lines.len() - 1) {
            prose.push('\n');
        }
        let block = &lines[start..end];
        let prompted = block.iter().any(|l| l.starts_with("$ "));
        let mut j = 0;
        while j < block.len() {
            let line = block[j];
            let place = format!("{file} line {}", start + j + 1);
            j += 1;
            if prompted {
                let Some(body) = line.strip_prefix("$ ") else { continue };
                let mut output = Vec::new();
                while j < block.len() && !block[j].starts_with("$ ") {
                    output.push(block[j]);
                    j += 1;
                }
                if let Some((args, usage)) = command_in(body) {
                    found.push(Shown {
                        place,
                        args,
                        usage,
                        quoted: (!output.is_empty()).then(|| output.join("\n")),
                    });
                }
                continue;
            }
            let mut line = line.to_string();
            if command_in(&line).is_some_and(|(_, usage)| usage) {
                while j < block.len() && block[j].starts_with(char::is_whitespace) {
                    line.push(' ');
                    line.push_str(block[j].trim());
                    j += 1;
                }
            }
            if let Some((args, usage)) = command_in(&line) {
                found.push(Shown {
                    place,
                    args,
                    usage,
                    quoted: None,
                });
            }
        }
        i = end + 1;
    }
    let mut rest = prose.as_str();
    let mut offset = 0;
    while let Some(open) = rest.find('`') {
        let Some(len) = rest[open + 1..].find('`') else { break };
        let span = &rest[open + 1..open + 1 + len];
        let line = prose[..offset + open].matches('\n').count() + 1;
        if let Some((args, usage)) = command_in(&span.replace('\n', " ")) {
            found.push(Shown {
                place: format!("{file} line {line}"),
                args,
                usage,
                quoted: None,
            });
        }
        offset += open + len + 2;
        rest = &rest[open + len + 2..];
    }
    found
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn page(file: &str) -> Vec<Shown> {
    let text = std::fs::read_to_string(root().join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
    shown(file, &text)
}

/// docs/*.md, sorted.
fn doc_pages() -> Vec<String> {
    let mut pages: Vec<String> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    pages.sort();
    pages
}

/// A command that needs no cluster: it reads a bundle, prints manifests or a completion script,
/// or only help or the version.
fn offline(args: &[String]) -> bool {
    let has = |flag: &str| args.iter().any(|a| a == flag);
    has("--bundle")
        || has("--help")
        || has("-h")
        || has("--version")
        || has("-V")
        || matches!(
            args.iter().find(|a| !a.starts_with('-')).map(String::as_str),
            Some("manifests" | "completion" | "help" | "__complete")
        )
}

/// `Err` naming what clap refused; help and version requests count as accepted.
fn parses(args: &[String]) -> Result<(), String> {
    if args.first().map(String::as_str) == Some("__complete") {
        // The hidden completion protocol takes any words; main answers it before parsing.
        return Ok(());
    }
    match Cli::try_parse_from(std::iter::once("kubectl-microservice".to_string()).chain(args.iter().cloned())) {
        Ok(_) => Ok(()),
        Err(e)
            if matches!(
                e.kind(),
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion
            ) =>
        {
            Ok(())
        }
        Err(e) => Err(e.render().to_string()),
    }
}

/// The flags a usage line names that its subcommand (or the top level) does not have.
fn unknown_flags(args: &[String]) -> Vec<String> {
    let mut cli = Cli::command();
    cli.build();
    let subcommand = args
        .iter()
        .find_map(|a| cli.find_subcommand(a.trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '-')));
    let known: BTreeSet<String> = cli
        .get_arguments()
        .chain(subcommand.into_iter().flat_map(|s| s.get_arguments()))
        .flat_map(|a| {
            a.get_long_and_visible_aliases()
                .into_iter()
                .flatten()
                .map(|l| format!("--{l}"))
                .chain(
                    a.get_short_and_visible_aliases()
                        .into_iter()
                        .flatten()
                        .map(|s| format!("-{s}")),
                )
                .chain([
                    "--help".to_string(),
                    "-h".to_string(),
                    "--version".to_string(),
                    "-V".to_string(),
                ])
        })
        .collect();
    args.iter()
        .map(|w| w.trim_matches(|c| matches!(c, '[' | ']' | '(' | ')' | '|' | '.' | ',')))
        .filter(|w| w.starts_with('-') && w.len() > 1 && !w.starts_with("-/"))
        .filter(|w| match w.split_once("<TAB>") {
            // A word being completed: some flag must begin with it.
            Some((partial, _)) => !known.iter().any(|k| k.starts_with(partial)),
            None => !known.contains(w.split('=').next().unwrap()),
        })
        .map(str::to_string)
        .collect()
}

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs the binary with `args` in `dir`, colour off, with `KUBECONFIG` as given (`None`: unset);
/// killed after 30 s (then `code` is `None`).
fn run(args: &[String], dir: &Path, kubeconfig: Option<&Path>) -> Run {
    let mut command = Command::new(BIN);
    command
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("KUBECONFIG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(path) = kubeconfig {
        command.env("KUBECONFIG", path);
    }
    let mut child = command.spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let timed_out = child.try_wait().unwrap().is_none();
    if timed_out {
        child.kill().unwrap();
    }
    let out = child.wait_with_output().unwrap();
    Run {
        code: if timed_out { None } else { out.status.code() },
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The quoted run's problem, if its output is not what the binary prints now.
fn check_quote(shown: &Shown, quoted: &str) -> Option<String> {
    let out = run(&shown.args, root(), None);
    (out.stdout.trim_end() != quoted.trim_end()).then(|| {
        format!(
            "{}: `kubectl microservice {}` now prints:\n{}",
            shown.place,
            shown.command(),
            out.stdout
        )
    })
}

/// Files a command reads that a page cannot ship (the user's `--log-file operate.log`): their
/// paths, relative to the directory it runs in.
fn files_read_by(args: &[String]) -> Vec<PathBuf> {
    args.windows(2)
        .filter(|w| matches!(w[0].as_str(), "--log-file" | "--file") && w[1] != "-")
        .map(|w| PathBuf::from(&w[1]))
        .collect()
}

fn entries(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect()
}

#[test]
fn every_readme_command_runs_or_is_a_listed_cluster_command() {
    let commands = page("README.md");
    let mut problems = Vec::new();
    let mut cluster_seen = BTreeSet::new();
    let refused_dir = tempfile::tempdir().unwrap();
    let refused = kubeconfig::write(refused_dir.path(), "https://127.0.0.1:1");
    for shown in commands.iter().filter(|s| !s.usage) {
        let command = shown.command();
        if let Err(e) = parses(&shown.args) {
            problems.push(format!("{}: `{command}` does not parse: {e}", shown.place));
            continue;
        }
        if offline(&shown.args) {
            if let Some(quoted) = &shown.quoted {
                problems.extend(check_quote(shown, quoted));
                continue;
            }
            let out = run(&shown.args, root(), None);
            if !matches!(out.code, Some(0 | 1)) {
                problems.push(format!(
                    "{}: `{command}` ended with {:?}: {}",
                    shown.place, out.code, out.stderr
                ));
            }
            continue;
        }
        if !README_CLUSTER_COMMANDS.contains(&command.as_str()) {
            problems.push(format!(
                "{}: `{command}` needs a cluster: run it offline (e.g. on a bundle) or list it in README_CLUSTER_COMMANDS",
                shown.place
            ));
            continue;
        }
        cluster_seen.insert(command.clone());
        // In an empty directory, with the user's files present but empty: it must get as far as
        // the cluster, and leave nothing behind (collect writes nothing half).
        let dir = tempfile::tempdir().unwrap();
        for file in files_read_by(&shown.args) {
            std::fs::write(dir.path().join(file), "").unwrap();
        }
        let before = entries(dir.path());
        let out = run(&shown.args, dir.path(), Some(&refused));
        if out.code != Some(3) {
            problems.push(format!(
                "{}: `{command}` against a refused API server ended with {:?}, expected 3 (could not decide): {}",
                shown.place, out.code, out.stderr
            ));
        }
        if entries(dir.path()) != before {
            problems.push(format!(
                "{}: `{command}` left {:?} behind after failing",
                shown.place,
                entries(dir.path()).difference(&before).collect::<Vec<_>>()
            ));
        }
    }
    for listed in README_CLUSTER_COMMANDS {
        if !cluster_seen.contains(*listed) {
            problems.push(format!(
                "README_CLUSTER_COMMANDS lists `{listed}`, which the README no longer shows"
            ));
        }
    }
    let quoted: BTreeSet<String> = commands
        .iter()
        .filter(|s| s.quoted.is_some())
        .map(Shown::command)
        .collect();
    for expected in README_QUOTES {
        if !quoted.contains(*expected) {
            problems.push(format!("README no longer quotes `{expected}`: {quoted:?}"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
    // The extraction itself: the README shows these, so finding fewer means it broke.
    assert!(
        cluster_seen.len() == README_CLUSTER_COMMANDS.len() && commands.len() >= 15,
        "{commands:#?}"
    );
}

#[test]
fn docs_quoted_bundle_outputs_are_what_the_binary_prints_and_every_command_parses() {
    let mut problems = Vec::new();
    let mut quoted = BTreeSet::new();
    let mut checked = 0;
    for file in doc_pages() {
        for shown in page(&file) {
            if shown.usage {
                continue;
            }
            let command = shown.command();
            if let Err(e) = parses(&shown.args) {
                problems.push(format!("{}: `{command}` does not parse: {e}", shown.place));
                continue;
            }
            checked += 1;
            if let Some(output) = &shown.quoted
                && shown.args.iter().any(|a| a == "--bundle")
            {
                problems.extend(check_quote(&shown, output));
                quoted.insert((file.clone(), command));
            }
        }
    }
    for (file, command) in DOCS_QUOTES {
        if !quoted.contains(&(file.to_string(), command.to_string())) {
            problems.push(format!("{file} no longer quotes `{command}`"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
    assert!(checked >= 20, "only {checked} commands found in docs/");
}

#[test]
fn usage_lines_name_only_flags_that_exist() {
    let mut problems = Vec::new();
    let mut usages = 0;
    for file in std::iter::once("README.md".to_string()).chain(doc_pages()) {
        for shown in page(&file).into_iter().filter(|s| s.usage) {
            usages += 1;
            let unknown = unknown_flags(&shown.args);
            if !unknown.is_empty() {
                problems.push(format!("{}: `{}` names {unknown:?}", shown.place, shown.command()));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(usages >= 5, "only {usages} usage lines found");
}

/// The README applies examples/todo-api.yaml: a Microservice whose spec the operator accepts.
#[test]
fn the_readme_microservice_is_valid() {
    let text = std::fs::read_to_string(root().join("examples/todo-api.yaml")).unwrap();
    let object: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
    assert_eq!(object["apiVersion"], "platform.example.io/v1alpha1");
    assert_eq!(object["kind"], "Microservice");
    assert_eq!(object["metadata"]["namespace"], "todo");
    let spec = kubectl_microservice::operate::validate::validate_spec(&object["spec"]).unwrap();
    assert_eq!(spec.port, 8080);
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    assert!(readme.contains("kubectl apply -f examples/todo-api.yaml"));
    assert!(readme.contains(&format!(
        "`Accepted todo/todo-api: image={} port={} handler=accept cause=create`",
        spec.image, spec.port
    )));
}

#[test]
fn commands_are_found_in_blocks_spans_and_usage_lines() {
    let page = "Run `kubectl microservice status -n todo`, or\n`kubectl microservice logs\n--handler accept`.\n\n\
                ```sh\nkubectl microservice manifests --namespace ops | kubectl apply -f -  # apply\n\
                source <(kubectl-microservice completion bash)\ncargo run -q -- --version\n```\n\n\
                ```\n$ kubectl microservice status --bundle b\nNAME\nx\n$ kubectl microservice logs --handler a --log-file 'a b.log' 2> e\n```\n\n\
                ```\nkubectl microservice operate [-n NS]...\n                      [--standalone]\n```\n";
    let found: Vec<(String, Vec<String>, bool, Option<String>)> = shown("p.md", page)
        .into_iter()
        .map(|s| (s.place, s.args, s.usage, s.quoted))
        .collect();
    let words = |s: &str| s.split(' ').map(str::to_string).collect::<Vec<_>>();
    assert_eq!(
        found,
        vec![
            ("p.md line 6".into(), words("manifests --namespace ops"), false, None),
            ("p.md line 7".into(), words("completion bash"), false, None),
            ("p.md line 8".into(), words("--version"), false, None),
            (
                "p.md line 12".into(),
                words("status --bundle b"),
                false,
                Some("NAME\nx".into())
            ),
            (
                "p.md line 15".into(),
                vec![
                    "logs".into(),
                    "--handler".into(),
                    "a".into(),
                    "--log-file".into(),
                    "a b.log".into()
                ],
                false,
                None
            ),
            (
                "p.md line 19".into(),
                words("operate [-n NS]... [--standalone]"),
                true,
                None
            ),
            ("p.md line 1".into(), words("status -n todo"), false, None),
            ("p.md line 2".into(), words("logs --handler accept"), false, None),
        ]
    );
    assert_eq!(
        unknown_flags(&words("operate [-n NS]... [--standalone | --tail N]")),
        ["--tail"]
    );
    assert_eq!(
        unknown_flags(&words("logs [--local] [-o json|yaml] [--log-file=F] --zz<TAB>")),
        ["--zz<TAB>"]
    );
    assert!(unknown_flags(&words("logs [--local] [-o json|yaml] [--log-file=F] --lo<TAB>")).is_empty());
    // A template in quotes is a value, not a usage line's brackets: the command is run.
    assert_eq!(
        command_in("$ kubectl microservice status -o jsonpath='{.items[*].name}{\"\\n\"}'"),
        Some((words("status -o jsonpath={.items[*].name}{\"\\n\"}"), false))
    );
    assert_eq!(
        command_in("kubectl microservice status [NAME] -o 'x'"),
        Some((words("status [NAME] -o x"), true))
    );
    assert_eq!(
        command_in("kubectl logs -l app.kubernetes.io/name=kubectl-microservice --prefix"),
        None
    );
    assert!(parses(&words("status --no-such-flag")).is_err());
    assert!(offline(&words("status --bundle x")) && !offline(&words("status -n todo")));
}
