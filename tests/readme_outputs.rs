//! Every output the README quotes for a command on a bundle of this repository is what the
//! binary prints now: each fenced block whose first line is `$ kubectl microservice ...
//! --bundle DIR` is run (from the repository's root, colour off) and its stdout must equal the
//! rest of the block. Quotes of live runs (no `--bundle`) cannot be re-run and are not checked.

use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_kubectl-microservice");

/// A quoted run: the command's arguments after `kubectl microservice`, and the output shown.
#[derive(Debug)]
struct Quote {
    line: usize,
    args: Vec<String>,
    output: String,
}

/// The quoted runs on bundles in `text` (Markdown): fenced blocks that begin with one
/// `$ kubectl microservice` line naming `--bundle`.
fn quotes(text: &str) -> Vec<Quote> {
    let mut found = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        if !lines[i].starts_with("```") {
            i += 1;
            continue;
        }
        let start = i + 1;
        let mut end = start;
        while end < lines.len() && !lines[end].starts_with("```") {
            end += 1;
        }
        if let Some(command) = lines.get(start).and_then(|l| l.strip_prefix("$ kubectl microservice "))
            && command.contains("--bundle ")
        {
            assert!(
                !command.contains(['\'', '"', '|', '>', '<', '$', '`']),
                "README line {}: quote a command without shell syntax: {command}",
                start + 1
            );
            found.push(Quote {
                line: start + 1,
                args: command.split_whitespace().map(str::to_string).collect(),
                output: lines[start + 1..end].join("\n"),
            });
        }
        i = end + 1;
    }
    found
}

#[test]
fn quoted_bundle_outputs_are_what_the_binary_prints() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let quotes = quotes(&readme);
    let commands: Vec<String> = quotes.iter().map(|q| q.args.join(" ")).collect();
    for expected in [
        "explain-events basket-api --bundle examples/warnings-hidden",
        "explain-events catalog-api --bundle tests/fixtures/bundles/ours-style-rbac",
        "explain-events todo-api --bundle tests/fixtures/bundles-captured/lease-expired",
        "status -n store --bundle tests/fixtures/bundles/stale-port",
    ] {
        assert!(
            commands.iter().any(|c| c == expected),
            "README no longer quotes `{expected}`: {commands:?}"
        );
    }
    let mut stale = Vec::new();
    for quote in &quotes {
        let out = Command::new(BIN)
            .args(&quote.args)
            .current_dir(root)
            .env("NO_COLOR", "1")
            .env_remove("KUBECONFIG")
            .output()
            .unwrap();
        let printed = String::from_utf8(out.stdout).unwrap();
        if printed.trim_end() != quote.output.trim_end() {
            stale.push(format!(
                "README line {}: `kubectl microservice {}` now prints:\n{printed}",
                quote.line,
                quote.args.join(" ")
            ));
        }
    }
    assert!(stale.is_empty(), "{}", stale.join("\n"));
}
