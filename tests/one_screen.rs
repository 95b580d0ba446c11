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
