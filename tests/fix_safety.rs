//! Issue 18, acceptance 2: every fix is safe to paste, on every object of every bundle in the
//! repository (tests/fixtures/bundles*/), as `explain-events` prints it (human and `-o json`)
//! and as `status NAME`'s `Next:` line says it:
//!
//! - a command that changes something (any kubectl verb but `get`, `describe`, `logs`, `auth`,
//!   `exec`, `top`) names only the object's namespace or its operator's (the resolver's), or
//!   carries the shared-resource label (`diagnose::finding::SHARED_RESOURCE_LABEL`) before the
//!   next command; a cluster-scoped change (the CRD, a ClusterRole, a namespace) always carries
//!   it; and a labelled change is never the first change of a fix that offers an unlabelled one;
//! - no fix installs manifests that would replace the CRD in evidence (`manifests | kubectl
//!   apply` without `--without-shared`);
//! - every edit of the operator's Python source a fix prints (`delete line N of FILE`, `replace
//!   line N of FILE with `...``) keeps the file parseable: applied to the bundle's source (the
//!   ConfigMap key FILE), then parsed with the parser the diagnostics read it with.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use kubectl_microservice::commands::explain_events::{human, pasted_commands, report};
use kubectl_microservice::diagnose::events::{Options, Report};
use kubectl_microservice::diagnose::finding::SHARED_RESOURCE_LABEL;
use kubectl_microservice::evidence::bundle;
use kubectl_microservice::kopf::source::Module;
use kubectl_microservice::kopf::source::edit::Edit;
use serde_json::Value;

/// tests/fixtures.
fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

const BIN: &str = env!("CARGO_BIN_EXE_kubectl-microservice");

/// Every bundle folder under tests/fixtures/bundles*/.
fn all_bundles() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for folder in fs::read_dir(fixtures()).unwrap() {
        let folder = folder.unwrap().path();
        let named = folder.file_name().unwrap().to_string_lossy().starts_with("bundles");
        if !(named && folder.is_dir()) {
            continue;
        }
        for dir in fs::read_dir(&folder).unwrap() {
            let dir = dir.unwrap().path();
            if dir.join("microservices.json").exists() {
                out.push(dir);
            }
        }
    }
    out.sort();
    out
}

/// `(namespace, name)` of each Microservice in a bundle.
fn objects(dir: &Path) -> Vec<(String, String)> {
    let doc: Value = serde_json::from_str(&fs::read_to_string(dir.join("microservices.json")).unwrap()).unwrap();
    let items = match doc["items"].as_array() {
        Some(items) => items.clone(),
        None => vec![doc],
    };
    items
        .iter()
        .map(|o| {
            let m = &o["metadata"];
            (
                m["namespace"].as_str().unwrap().to_string(),
                m["name"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The Python files of a bundle's ConfigMaps: `(key, text)`.
fn sources(dir: &Path) -> Vec<(String, String)> {
    let Ok(text) = fs::read_to_string(dir.join("operator/configmaps.json")) else {
        return Vec::new();
    };
    let doc: Value = serde_json::from_str(&text).unwrap();
    let items = doc["items"].as_array().cloned().unwrap_or_else(|| vec![doc.clone()]);
    items
        .iter()
        .flat_map(|cm| cm["data"].as_object().cloned().unwrap_or_default())
        .filter(|(k, _)| k.ends_with(".py"))
        .map(|(k, v)| (k, v.as_str().unwrap_or_default().to_string()))
        .collect()
}

/// What the user reads as fixes for one object: each finding's fix (the report behind `-o
/// json`, and the human view's `Fix:` blocks) and `status NAME`'s `Next:` line.
fn printed_fixes(dir: &Path, ns: &str, name: &str, report: &Report) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = report
        .findings
        .iter()
        .filter_map(|f| Some((format!("{} (json)", f.id), f.fix.clone()?)))
        .collect();
    let text = human(report, false);
    let mut fix = None::<String>;
    for line in text.lines() {
        if line == "  Fix:" {
            fix = Some(String::new());
        } else if let Some(body) = fix.as_mut().and_then(|f| line.strip_prefix("    ").map(|l| (f, l))) {
            let (f, l) = body;
            if !f.is_empty() {
                f.push('\n');
            }
            f.push_str(l);
        } else if let Some(done) = fix.take() {
            out.push(("human Fix:".into(), done));
        }
    }
    if let Some(done) = fix.take() {
        out.push(("human Fix:".into(), done));
    }
    let status = Command::new(BIN)
        .args(["status", name, "-n", ns, "--bundle", dir.to_str().unwrap()])
        .output()
        .unwrap();
    let status = String::from_utf8_lossy(&status.stdout).to_string();
    out.extend(
        status
            .lines()
            .filter_map(|l| l.trim_start().strip_prefix("Next:"))
            .map(|next| ("status Next:".to_string(), next.trim().to_string())),
    );
    out
}

/// One command a fix suggests, classified.
#[derive(Debug)]
struct Suggested {
    text: String,
    /// Changes something (not a read).
    changes: bool,
    /// Cluster-scoped (the CRD, a ClusterRole, a namespace): every team's.
    cluster: bool,
    /// The namespaces it names.
    namespaces: Vec<String>,
    /// `manifests | kubectl apply` with the CRD.
    installs_crd: bool,
    /// The shared-resource label follows it (before the next command).
    labelled: bool,
}

const READS: &[&str] = &["get", "describe", "logs", "auth", "exec", "top", "explain"];

fn classify(fix: &str) -> Vec<Suggested> {
    let spans = pasted_commands(fix);
    let mut out = Vec::new();
    for (i, span) in spans.iter().enumerate() {
        let text = fix[span.clone()].to_string();
        let until = spans.get(i + 1).map_or(fix.len(), |next| next.start);
        let labelled = fix[span.end..until].contains(SHARED_RESOURCE_LABEL);
        // `... | kubectl apply -f -` cut on its own: the producer before the pipe says what.
        if fix[..span.start].trim_end().ends_with('|') {
            continue;
        }
        let words: Vec<&str> = text.split_whitespace().collect();
        let mut namespaces = Vec::new();
        let mut i = 1;
        let mut verb = None;
        let mut args = Vec::new();
        while i < words.len() {
            let w = words[i];
            if w == "|" {
                break;
            }
            if (w == "-n" || w == "--namespace" || w == "--watch-namespace") && i + 1 < words.len() {
                namespaces.push(words[i + 1].trim_matches('`').to_string());
                i += 2;
                continue;
            }
            if let Some(ns) = w.strip_prefix("--namespace=").or_else(|| w.strip_prefix("-n=")) {
                namespaces.push(ns.to_string());
            } else if !w.starts_with('-') {
                if verb.is_none() {
                    verb = Some(w);
                } else {
                    args.push(w);
                }
            }
            i += 1;
        }
        let verb = verb.unwrap_or_default();
        if verb == "microservice" {
            let sub = args.first().copied().unwrap_or_default();
            if sub != "manifests" || !text.contains("kubectl apply") {
                continue;
            }
            out.push(Suggested {
                installs_crd: !text.contains("--without-shared"),
                changes: true,
                cluster: !text.contains("--without-shared"),
                namespaces,
                labelled,
                text,
            });
            continue;
        }
        let target = args.first().copied().unwrap_or_default().to_lowercase();
        let cluster = [
            "crd",
            "customresourcedefinition",
            "namespace",
            "ns",
            "clusterrole",
            "clusterrolebinding",
        ]
        .iter()
        .any(|t| target == *t || target.starts_with(&format!("{t}/")) || target.starts_with(&format!("{t}.")));
        out.push(Suggested {
            changes: !READS.contains(&verb),
            cluster,
            namespaces,
            installs_crd: false,
            labelled,
            text,
        });
    }
    out
}

/// The source edits a fix prints.
fn edits(fix: &str) -> Vec<Edit> {
    let mut out = Vec::new();
    let words: Vec<&str> = fix.split(' ').collect();
    for (i, w) in words.iter().enumerate() {
        let kind = match *w {
            "delete" | "replace" => *w,
            _ => continue,
        };
        let Some(&unit) = words.get(i + 1) else { continue };
        if unit != "line" && unit != "lines" {
            continue;
        }
        let Some(range) = words.get(i + 2) else { continue };
        let (from, to) = match range.split_once('-') {
            Some((a, b)) => (a.parse().unwrap(), b.parse().unwrap()),
            None => {
                let n: usize = range.parse().unwrap();
                (n, n)
            }
        };
        assert_eq!(words.get(i + 3), Some(&"of"), "{fix}");
        let file = words[i + 4].trim_end_matches([',', ')', ';', '.']).to_string();
        out.push(if kind == "delete" {
            Edit::Delete { file, from, to }
        } else {
            assert_eq!(words.get(i + 5), Some(&"with"), "{fix}");
            let with = fix
                .split(&format!("{range} of {file} with `"))
                .nth(1)
                .and_then(|rest| rest.split('`').next())
                .unwrap()
                .to_string();
            Edit::Replace { file, from, to, with }
        });
    }
    out
}

#[test]
fn every_printed_fix_is_safe_to_paste() {
    let mut problems = Vec::new();
    let (mut changes, mut labelled, mut python) = (0, 0, BTreeSet::new());
    let mut objects_seen = 0;
    for dir in all_bundles() {
        let d = dir.strip_prefix(fixtures()).unwrap().display().to_string();
        let snapshot = bundle::read(&dir).unwrap();
        let crd_in_evidence = snapshot.crd.get().is_some();
        let files = sources(&dir);
        for (ns, name) in objects(&dir) {
            objects_seen += 1;
            let Ok(report) = report(&snapshot, &ns, &name, Options::default()) else {
                continue;
            };
            let mut allowed = vec![ns.clone()];
            if let Some(op) = report.operator_resolution.deployment() {
                allowed.push(op.split('/').next().unwrap_or_default().to_string());
            }
            for (from, fix) in printed_fixes(&dir, &ns, &name, &report) {
                let at = format!("{d}: {ns}/{name}: {from}");
                let suggested = classify(&fix);
                let changing: Vec<&Suggested> = suggested.iter().filter(|s| s.changes).collect();
                for s in &changing {
                    changes += 1;
                    labelled += usize::from(s.labelled);
                    if s.installs_crd && crd_in_evidence {
                        problems.push(format!(
                            "{at}: installs manifests that replace the CRD in evidence: {}",
                            s.text
                        ));
                    }
                    let foreign = s.namespaces.iter().any(|n| !allowed.contains(n));
                    if (s.cluster || foreign) && !s.labelled {
                        problems.push(format!(
                            "{at}: changes {} without the shared-resource label: {}",
                            if s.cluster {
                                "a cluster-scoped resource".to_string()
                            } else {
                                format!("namespaces {:?} (allowed {allowed:?})", s.namespaces)
                            },
                            s.text
                        ));
                    }
                    if !s.cluster && s.namespaces.is_empty() && !s.labelled {
                        problems.push(format!(
                            "{at}: names no namespace (the current context's would be changed): {}",
                            s.text
                        ));
                    }
                }
                if changing.first().is_some_and(|s| s.labelled) && changing.iter().any(|s| !s.labelled) {
                    problems.push(format!("{at}: a labelled change comes before the fix's own: {fix}"));
                }
                for edit in edits(&fix) {
                    let file = match &edit {
                        Edit::Delete { file, .. } | Edit::Replace { file, .. } => file.clone(),
                    };
                    let Some((_, source)) = files.iter().find(|(k, _)| *k == file) else {
                        problems.push(format!("{at}: edits {file}, which is not in the bundle"));
                        continue;
                    };
                    Module::parse(&file, source).expect("the bundle's source parses");
                    let after = edit.apply(source);
                    if let Err(e) = Module::parse(&file, &after) {
                        problems.push(format!("{at}: `{}` leaves {file} unparseable: {e}", edit.describe()));
                    }
                    python.insert(edit.describe());
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(objects_seen >= 60, "only {objects_seen} objects");
    assert!(changes >= 40, "only {changes} changing commands");
    assert!(labelled >= 3, "only {labelled} labelled commands");
    // The source edits seen, the only statement of a block among them (issue 18 item 9).
    assert!(
        python.iter().any(|e| e.ends_with("with `pass`")) && python.iter().any(|e| e.starts_with("delete line")),
        "{python:?}"
    );
}

/// The checker itself: what it must flag, it flags.
#[test]
fn the_checker_flags_what_it_must() {
    let s = classify(
        "kubectl -n other edit deployment op; `kubectl microservice manifests --namespace a --watch-namespace b | kubectl apply -f -` and kubectl patch crd x --type=json -p '[]' (changes a shared resource: the CRD) or kubectl get pods -A",
    );
    assert_eq!(s.len(), 4, "{s:?}");
    assert!(s[0].changes && !s[0].labelled && s[0].namespaces == ["other"]);
    assert!(s[1].installs_crd && s[1].namespaces == ["a", "b"]);
    assert!(s[2].cluster && s[2].labelled);
    assert!(!s[3].changes);
    let e =
        edits("or replace line 11 of operator.py with `pass` (Kopf posts by default), then delete lines 3-5 of op.py.");
    assert_eq!(
        e,
        [
            Edit::Replace {
                file: "operator.py".into(),
                from: 11,
                to: 11,
                with: "pass".into()
            },
            Edit::Delete {
                file: "op.py".into(),
                from: 3,
                to: 5
            }
        ]
    );
}

/// What is wrong with one `kubectl get events` command the program printed, if anything: it
/// must name its namespace (`-n`, never `-A`) and select by `involvedObject.uid`, or by
/// `involvedObject.kind` and `involvedObject.name` together, so that it cannot list another
/// team's object of the same name.
fn unscoped_get_events(command: &str) -> Option<&'static str> {
    let words: Vec<&str> = command.split_whitespace().collect();
    if words.iter().any(|w| *w == "-A" || *w == "--all-namespaces") {
        return Some("lists every namespace");
    }
    if !words
        .iter()
        .any(|w| *w == "-n" || *w == "--namespace" || w.starts_with("-n=") || w.starts_with("--namespace="))
    {
        return Some("names no namespace");
    }
    let selector = words
        .windows(2)
        .find(|w| w[0] == "--field-selector")
        .map(|w| w[1].to_string())
        .or_else(|| {
            words
                .iter()
                .find_map(|w| w.strip_prefix("--field-selector=").map(str::to_string))
        })
        .unwrap_or_default();
    let by_uid = selector.split(',').any(|s| s.starts_with("involvedObject.uid="));
    let by_name = selector.split(',').any(|s| s.starts_with("involvedObject.name="))
        && selector.split(',').any(|s| s.starts_with("involvedObject.kind="));
    (!by_uid && !by_name).then_some("selects neither involvedObject.uid nor involvedObject.kind and name")
}

/// Issue 20: every `kubectl get events` the program prints for an object of a bundle (in a
/// fix, human or `-o json`, in the short and the long human form of `explain-events`, in
/// `status NAME`'s `Next:` and its `--verbose` form) carries `-n NS` and an involvedObject
/// selector.
#[test]
fn every_printed_get_events_is_scoped_to_the_object() {
    let mut problems = Vec::new();
    let mut seen = 0;
    for dir in all_bundles() {
        let d = dir.strip_prefix(fixtures()).unwrap().display().to_string();
        let snapshot = bundle::read(&dir).unwrap();
        for (ns, name) in objects(&dir) {
            let Ok(report) = report(&snapshot, &ns, &name, Options::default()) else {
                continue;
            };
            let mut texts: Vec<(String, String)> = printed_fixes(&dir, &ns, &name, &report);
            texts.push(("explain-events, long".into(), human(&report, false)));
            for (label, args) in [
                ("explain-events", vec!["explain-events", &name]),
                ("status NAME --verbose", vec!["status", &name, "--verbose"]),
            ] {
                let out = Command::new(BIN)
                    .args(args)
                    .args(["-n", &ns, "--bundle", dir.to_str().unwrap()])
                    .env("NO_COLOR", "1")
                    .output()
                    .unwrap();
                texts.push((label.into(), String::from_utf8_lossy(&out.stdout).into_owned()));
            }
            for (from, text) in texts {
                for span in pasted_commands(&text) {
                    let command = &text[span];
                    if !command
                        .split_whitespace()
                        .any(|w| w == "events" || w == "ev" || w == "event")
                    {
                        continue;
                    }
                    if !command.starts_with("kubectl get ") {
                        continue;
                    }
                    seen += 1;
                    if let Some(why) = unscoped_get_events(command) {
                        problems.push(format!("{d}: {ns}/{name}: {from}: {why}: {command}"));
                    }
                }
            }
        }
    }
    assert!(
        seen > 0,
        "no bundle printed a kubectl get events: the walk finds nothing"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_get_events_checker_flags_what_it_must() {
    assert_eq!(
        unscoped_get_events(
            "kubectl get events -A --field-selector involvedObject.kind=Microservice,involvedObject.name=a"
        ),
        Some("lists every namespace")
    );
    assert_eq!(
        unscoped_get_events("kubectl get events --field-selector involvedObject.uid=u"),
        Some("names no namespace")
    );
    assert!(unscoped_get_events("kubectl get events -n a --field-selector involvedObject.name=a").is_some());
    assert_eq!(
        unscoped_get_events("kubectl get events -n a --field-selector involvedObject.uid=u"),
        None
    );
    assert_eq!(
        unscoped_get_events(
            "kubectl get events -n a --field-selector=involvedObject.kind=Microservice,involvedObject.name=x"
        ),
        None
    );
}
