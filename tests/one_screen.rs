//! Issue 20, acceptance 1 and 2: mid-incident, the answer fits one screen. Over every bundle of
//! tests/fixtures (bundles, bundles-captured, bundles-synthetic), `explain-events NAME` and
//! `status NAME` as a person runs them (human, no colour, through the binary, stdout and stderr
//! together) take at most 40 rows at 120 columns (wrapped lines counted as the rows they take),
//! their headline at most 200 characters, and no evidence line or cited log line is printed
//! twice; `--verbose` prints every evidence line that `-o json` holds, in full.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

#[allow(dead_code)] // this file uses fixtures() only
mod support;
use support::fixtures;

const BIN: &str = env!("CARGO_BIN_EXE_kubectl-microservice");
const ROWS: usize = 40;
const WIDTH: usize = 120;
const HEADLINE: usize = 200;

/// Every bundle folder with an expected.json, and the object it is about (`NS`, `NAME`).
fn bundles() -> Vec<(PathBuf, String, String)> {
    let mut out = Vec::new();
    for folder in ["bundles", "bundles-captured", "bundles-synthetic"] {
        let mut dirs: Vec<PathBuf> = fs::read_dir(fixtures().join(folder))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.join("expected.json").is_file())
            .collect();
        dirs.sort();
        for dir in dirs {
            let expected: Value =
                serde_json::from_str(&fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
            let (ns, name) = expected["object"].as_str().unwrap().split_once('/').unwrap();
            out.push((dir, ns.to_string(), name.to_string()));
        }
    }
    assert!(out.len() >= 50, "only {} bundles", out.len());
    out
}

/// stdout and stderr of `COMMAND NAME -n NS --bundle DIR --color never EXTRA...`.
fn run(command: &str, dir: &Path, ns: &str, name: &str, extra: &[&str]) -> (String, String) {
    let out = Command::new(BIN)
        .args([command, name, "-n", ns, "--bundle"])
        .arg(dir)
        .args(["--color", "never"])
        .args(extra)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        !stdout.is_empty(),
        "{command} {}: nothing printed; stderr: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    (stdout, String::from_utf8(out.stderr).unwrap())
}

/// Terminal rows of `text` at [`WIDTH`] columns.
fn rows(text: &str) -> usize {
    text.lines().map(|l| l.chars().count().div_ceil(WIDTH).max(1)).sum()
}

/// What is printed more than once: evidence lines (`- ...` under a finding or a reason, a fix's
/// YAML aside), and log lines cited by where they are from (`POD/CONTAINER line N`).
fn repeated(text: &str) -> Vec<String> {
    let citation = regex::Regex::new(r"[\w.-]+/[\w.-]+ line \d+").unwrap();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut in_fix = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        if trimmed.starts_with("Fix") {
            in_fix = true;
            continue;
        }
        if trimmed.is_empty() || indent < 4 {
            in_fix = false;
        }
        if in_fix {
            continue;
        }
        // `… N more (--verbose)` says what was left out of one finding: no evidence of its own,
        // two findings may each leave out as many.
        if let Some(evidence) = trimmed.strip_prefix("- ")
            && line.len() - trimmed.len() >= 4
            && !(evidence.starts_with("… ") && evidence.ends_with(" more (--verbose)"))
        {
            *counts.entry(evidence.to_string()).or_default() += 1;
        }
        for c in citation.find_iter(line) {
            *counts.entry(c.as_str().to_string()).or_default() += 1;
        }
    }
    counts
        .into_iter()
        .filter(|(_, n)| *n > 1)
        .map(|(l, n)| format!("{n}x {l}"))
        .collect()
}

#[test]
fn every_bundle_answers_in_one_screen() {
    let mut failures = Vec::new();
    let mut worst = (0usize, 0usize);
    for (dir, ns, name) in bundles() {
        for command in ["explain-events", "status"] {
            let (stdout, stderr) = run(command, &dir, &ns, &name, &[]);
            let shown = format!("{stderr}{stdout}");
            let at = format!("{command} {} ({ns}/{name})", dir.display());
            let n = rows(&shown);
            let headline = stdout.lines().next().unwrap_or_default().chars().count();
            worst = (worst.0.max(n), worst.1.max(headline));
            if n > ROWS {
                failures.push(format!("{at}: {n} rows at {WIDTH} columns (at most {ROWS})\n{shown}"));
            }
            if headline > HEADLINE {
                failures.push(format!("{at}: headline of {headline} characters (at most {HEADLINE})"));
            }
            let twice = repeated(&shown);
            if !twice.is_empty() {
                failures.push(format!("{at}: printed twice: {twice:#?}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    eprintln!("worst: {} rows, headline {} characters", worst.0, worst.1);
}

/// The long form (`--verbose`) holds every evidence line of `-o json` in full, and the short form
/// says how to reach it whenever it left something out.
#[test]
fn verbose_prints_every_evidence_line_of_the_json_in_full() {
    for (dir, ns, name) in bundles() {
        let at = format!("{} ({ns}/{name})", dir.display());
        let (json, _) = run("explain-events", &dir, &ns, &name, &["-o", "json"]);
        let report: Value = serde_json::from_str(&json).unwrap();
        let (long, _) = run("explain-events", &dir, &ns, &name, &["--verbose"]);
        let (short, _) = run("explain-events", &dir, &ns, &name, &[]);
        let mut all_shown = true;
        for f in report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["severity"] != "ok")
        {
            for e in f["evidence"].as_array().unwrap() {
                let e = e.as_str().unwrap();
                // What the human form escapes (control characters) aside.
                if e.chars().any(char::is_control) {
                    continue;
                }
                assert!(long.contains(e), "{at}: --verbose lacks the evidence line {e:?}");
                all_shown &= short.contains(e);
            }
        }
        assert!(
            long.lines()
                .next()
                .unwrap()
                .ends_with(report["summary"].as_str().unwrap()),
            "{at}: --verbose's headline is the whole summary"
        );
        if !all_shown {
            assert!(
                short.contains("--verbose"),
                "{at}: the short form cut lines without saying how to see them"
            );
        }
    }
}

/// Issue 20: the short form's last line (`short_form::MORE_HINT`: "... --verbose prints every
/// line in full") is printed exactly when the short form left something out: when some line of
/// the long form (`--verbose`; its YAML lists written as the short form writes them) is not in
/// the short form. Both cases occur among the bundles, for `explain-events NAME` and `status
/// NAME` alike.
#[test]
fn the_short_form_says_how_to_see_more_only_when_it_cut_something() {
    use kubectl_microservice::commands::short_form::{MORE_HINT, compact_yaml_lists};
    let mut failures = Vec::new();
    let mut cases: BTreeMap<(&str, bool), usize> = BTreeMap::new();
    for (dir, ns, name) in bundles() {
        for command in ["explain-events", "status"] {
            let (short, _) = run(command, &dir, &ns, &name, &[]);
            let (long, _) = run(command, &dir, &ns, &name, &["--verbose"]);
            let at = format!("{command} {} ({ns}/{name})", dir.display());
            assert!(!long.contains(MORE_HINT), "{at}: the long form cut nothing");
            let long = compact_yaml_lists(&long);
            let missing: Vec<&str> = long
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !matches!(*l, "Evidence:" | "Fix:"))
                .filter(|l| !short.contains(l))
                .collect();
            let hint = short.lines().last() == Some(MORE_HINT);
            assert_eq!(
                short.matches(MORE_HINT).count(),
                usize::from(hint),
                "{at}: the hint is the last line, once"
            );
            *cases.entry((command, hint)).or_default() += 1;
            if hint && missing.is_empty() {
                failures.push(format!("{at}: says how to see more, but nothing was cut:\n{short}"));
            }
            if !hint && !missing.is_empty() {
                failures.push(format!("{at}: cut {missing:#?} without saying how to see it:\n{short}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    for command in ["explain-events", "status"] {
        for hint in [true, false] {
            assert!(
                cases.contains_key(&(command, hint)),
                "{command}: no bundle with hint={hint}: {cases:?}"
            );
        }
    }
}

/// The phrases of three or more words that `line` says twice: its words outside brackets,
/// parentheses' codes, quotes and backticks (a finding's `[id]`, quoted source, commands), names
/// (words with `/`, `-`, `.`, `_` or digits) left out.
fn said_twice(line: &str) -> Vec<String> {
    let quoted = regex::Regex::new(r#"\[[^\]]*\]|"[^"]*"|'[^']*'|`[^`]*`"#).unwrap();
    let prose = quoted.replace_all(line, " | ");
    let mut words = Vec::new();
    for token in prose.split_whitespace() {
        let bare = token.trim_matches(|c: char| !c.is_alphanumeric());
        if bare.is_empty() || bare.contains(['/', '-', '.', '_']) || bare.chars().any(|c| c.is_ascii_digit()) {
            words.push("|".to_string());
            continue;
        }
        if bare.len() > 2 {
            words.push(bare.to_lowercase());
        }
    }
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for w in words.windows(3).filter(|w| w.iter().all(|x| x != "|")) {
        *counts.entry(w.join(" ")).or_default() += 1;
    }
    counts.into_iter().filter(|(_, n)| *n > 1).map(|(g, _)| g).collect()
}

/// Issue 20: no sentence says the same thing twice (`a process outside the cluster, whose log
/// is not in the cluster`; `The handler has not accepted the current spec: the handler's last
/// cycle for the current spec failed`): no line of `explain-events NAME` or `status NAME` (the
/// short form, and the long form's headline; the long form's other lines quote log records and
/// API errors whole) says a phrase of three words twice, over every bundle.
#[test]
fn no_line_says_the_same_thing_twice() {
    assert_eq!(
        said_twice("Operator: x: an `operate` outside the cluster: a process outside the cluster, whose log"),
        ["outside the cluster"]
    );
    assert!(
        said_twice("the spec equals the one last handled [last-cycle-succeeded] and the last cycle succeeded")
            .is_empty()
    );
    let mut failures = Vec::new();
    for (dir, ns, name) in bundles() {
        for command in ["explain-events", "status"] {
            for extra in [&[][..], &["--verbose"][..]] {
                let (stdout, stderr) = run(command, &dir, &ns, &name, extra);
                let lines: Vec<&str> = match extra {
                    [] => stdout.lines().chain(stderr.lines()).collect(),
                    _ => stdout.lines().take(1).collect(),
                };
                for line in lines {
                    let twice = said_twice(line);
                    if !twice.is_empty() {
                        failures.push(format!("{command} {extra:?} {}: {twice:?} in {line}", dir.display()));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
