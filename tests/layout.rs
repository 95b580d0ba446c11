//! The repository's documentation agrees with the repository:
//!
//! - CONTRIBUTING.md's "Layout of `src/`" lists every file and directory under `src/`, each once
//!   with what it owns, and nothing that does not exist;
//! - docs/contracts.md lists exactly the finding ids of `diagnose::finding::FindingId::ALL`, and
//!   docs/diagnostics.md's findings table names each;
//! - `src/vocab/` (the shared vocabulary) imports nothing else from the crate, and `diagnose`,
//!   `evidence`, `logs` and `kopf` never name `crate::operate` (not in a doc link either: they
//!   read the vocabulary, and `operate` is above them);
//! - every relative link in README.md, CONTRIBUTING.md, docs/*.md and examples/README.md points at
//!   a file that exists, and at a heading of it when it names one.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use kubectl_microservice::diagnose::finding::FindingId;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &str) -> String {
    fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Every file and directory under `dir` (directories with a trailing `/`), relative to the root.
fn tree(dir: &Path, into: &mut BTreeSet<String>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let relative = path.strip_prefix(root()).unwrap().to_str().unwrap().to_string();
        if path.is_dir() {
            into.insert(format!("{relative}/"));
            tree(&path, into);
        } else {
            into.insert(relative);
        }
    }
}

/// The first fenced block after the heading `heading` in `text`, as lines.
fn block_after<'a>(text: &'a str, heading: &str) -> Vec<&'a str> {
    let after = &text[text.find(heading).unwrap_or_else(|| panic!("no heading {heading:?}"))..];
    after
        .lines()
        .skip_while(|l| !l.starts_with("```"))
        .skip(1)
        .take_while(|l| !l.starts_with("```"))
        .collect()
}

/// `path → what it owns`, from the layout block; panics on a line that is not one entry.
fn listed(lines: &[&str]) -> BTreeMap<String, String> {
    let mut entries = BTreeMap::new();
    for line in lines {
        let (path, what) = line
            .split_once(char::is_whitespace)
            .unwrap_or_else(|| panic!("CONTRIBUTING.md layout line {line:?}: expected `src/PATH  what it owns`"));
        assert!(
            path.starts_with("src/"),
            "CONTRIBUTING.md layout line {line:?}: not under src/"
        );
        assert!(
            !what.trim().is_empty(),
            "CONTRIBUTING.md layout: {path} says nothing about what it owns"
        );
        assert!(
            entries.insert(path.to_string(), what.trim().to_string()).is_none(),
            "CONTRIBUTING.md layout lists {path} twice"
        );
    }
    entries
}

#[test]
fn contributing_lists_every_file_and_directory_under_src() {
    let listed = listed(&block_after(&read("CONTRIBUTING.md"), "## Layout of `src/`"));
    let mut present = BTreeSet::new();
    tree(&root().join("src"), &mut present);
    let listed_paths: BTreeSet<String> = listed.keys().cloned().collect();
    let missing: Vec<&String> = present.difference(&listed_paths).collect();
    let gone: Vec<&String> = listed_paths.difference(&present).collect();
    assert!(
        missing.is_empty() && gone.is_empty(),
        "CONTRIBUTING.md's layout differs from src/:\n  not listed: {missing:?}\n  listed but absent: {gone:?}"
    );
    assert!(listed.len() > 50, "{listed:?}");
}

#[test]
fn the_layout_check_sees_a_missing_and_an_extra_entry() {
    let lines = ["src/lib.rs  the library", "src/gone.rs  a file that is not there"];
    let listed: BTreeSet<String> = listed(&lines).into_keys().collect();
    let mut present = BTreeSet::new();
    tree(&root().join("src"), &mut present);
    assert!(present.contains("src/main.rs") && !listed.contains("src/main.rs"));
    assert!(present.contains("src/operate/") && present.contains("src/operate/mod.rs"));
    assert!(!present.contains("src/gone.rs") && listed.contains("src/gone.rs"));
}

/// The ids docs/contracts.md lists (the backquoted kebab-case words of its `explain-events`
/// section, before "more may be added") are `FindingId::ALL`; docs/diagnostics.md explains each.
#[test]
fn contracts_list_exactly_the_finding_ids() {
    let contracts = read("docs/contracts.md");
    let section = contracts
        .split("\n## ")
        .find(|s| s.starts_with("`explain-events`"))
        .expect("docs/contracts.md has a section `explain-events`");
    let ids_part = section.split("(more may be added").next().unwrap();
    let listed: BTreeSet<&str> = ids_part
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|w| w.contains('-') && w.chars().all(|c| c.is_ascii_lowercase() || c == '-'))
        .filter(|w| *w != "explain-events")
        .collect();
    let known: BTreeSet<&str> = FindingId::ALL.iter().map(|id| id.as_str()).collect();
    assert_eq!(
        listed, known,
        "docs/contracts.md's finding ids differ from FindingId::ALL"
    );

    let diagnostics = read("docs/diagnostics.md");
    let table: String = diagnostics
        .lines()
        .filter(|l| l.starts_with("| `"))
        .collect::<Vec<_>>()
        .join("\n");
    for id in FindingId::ALL {
        assert!(
            table.contains(&format!("`{id}`")),
            "docs/diagnostics.md's findings table has no row for `{id}`"
        );
    }
}

/// GitHub's anchor for a heading: lowercase, punctuation dropped, spaces as hyphens.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn anchors(markdown: &str) -> BTreeSet<String> {
    let mut fenced = false;
    markdown
        .lines()
        .filter(|l| {
            if l.starts_with("```") {
                fenced = !fenced;
            }
            !fenced && l.starts_with('#')
        })
        .map(|l| slug(l.trim_start_matches('#')))
        .collect()
}

/// `(target, line)` of every `](target)` link in `markdown` that is not a URL.
fn relative_links(markdown: &str) -> Vec<(String, usize)> {
    let mut links = Vec::new();
    for (n, line) in markdown.lines().enumerate() {
        let mut rest = line;
        while let Some(i) = rest.find("](") {
            let after = &rest[i + 2..];
            let Some(end) = after.find(')') else { break };
            let target = &after[..end];
            if !target.contains("://") && !target.starts_with("mailto:") {
                links.push((target.to_string(), n + 1));
            }
            rest = &after[end..];
        }
    }
    links
}

#[test]
fn relative_links_point_at_files_and_headings_that_exist() {
    let mut pages: Vec<PathBuf> = ["README.md", "CONTRIBUTING.md", "examples/README.md"]
        .iter()
        .map(PathBuf::from)
        .collect();
    for entry in fs::read_dir(root().join("docs")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".md") {
            pages.push(Path::new("docs").join(name));
        }
    }
    let mut broken = Vec::new();
    let mut seen = 0;
    for page in &pages {
        let text = read(page.to_str().unwrap());
        for (target, line) in relative_links(&text) {
            seen += 1;
            let (file, anchor) = target.split_once('#').unwrap_or((&target, ""));
            let path = if file.is_empty() {
                root().join(page)
            } else {
                root().join(page.parent().unwrap()).join(file)
            };
            if !path.exists() {
                broken.push(format!("{} line {line}: {target}: no such file", page.display()));
            } else if !anchor.is_empty() && !anchors(&fs::read_to_string(&path).unwrap()).contains(anchor) {
                broken.push(format!("{} line {line}: {target}: no such heading", page.display()));
            }
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
    assert!(seen >= 20, "only {seen} links found");
    assert_eq!(
        slug("An operator without a Pod (`operate` on a laptop, logs from a log store)"),
        "an-operator-without-a-pod-operate-on-a-laptop-logs-from-a-log-store"
    );
    assert_eq!(slug("`logs --handler`"), "logs---handler");
}

/// Every `.rs` file under `src/<dir>`, relative to the root, with its text.
fn sources(dir: &str) -> Vec<(String, String)> {
    let mut files = BTreeSet::new();
    tree(&root().join(dir), &mut files);
    files
        .into_iter()
        .filter(|f| f.ends_with(".rs"))
        .map(|f| {
            let text = read(&f);
            (f, text)
        })
        .collect()
}

/// The top-level modules a source names through `crate::` paths, with the line of each
/// (`crate::a::b` and `crate::{a, b::c}` alike; comments and doc links included).
fn crate_modules(source: &str) -> Vec<(String, usize)> {
    let ident = |s: &str| -> String { s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect() };
    let mut found = Vec::new();
    for (n, line) in source.lines().enumerate() {
        for (at, m) in line.match_indices("crate::") {
            let rest = &line[at + m.len()..];
            match rest.strip_prefix('{') {
                Some(group) => {
                    let mut depth = 0;
                    let mut start = true;
                    for (i, c) in group.char_indices() {
                        match c {
                            '{' => depth += 1,
                            '}' if depth == 0 => break,
                            '}' => depth -= 1,
                            ',' if depth == 0 => start = true,
                            c if start && !c.is_whitespace() => {
                                start = false;
                                found.push((ident(&group[i..]), n + 1));
                            }
                            _ => {}
                        }
                    }
                }
                None => found.push((ident(rest), n + 1)),
            }
        }
    }
    found
}

#[test]
fn the_vocabulary_imports_nothing_else_from_the_crate() {
    let files = sources("src/vocab");
    assert!(files.len() >= 3, "{files:?}");
    let mut outside = Vec::new();
    for (file, text) in &files {
        for (module, line) in crate_modules(text) {
            if module != "vocab" {
                outside.push(format!("{file} line {line}: crate::{module}"));
            }
        }
        // `super::` from src/vocab/mod.rs is the crate root.
        if file.ends_with("vocab/mod.rs") && text.contains("super::") {
            outside.push(format!("{file}: super::"));
        }
    }
    assert!(
        outside.is_empty(),
        "src/vocab imports from the crate:\n{}",
        outside.join("\n")
    );
}

#[test]
fn the_diagnostics_do_not_name_operate() {
    let mut named = Vec::new();
    let mut seen = 0;
    for dir in ["src/diagnose", "src/evidence", "src/logs", "src/kopf"] {
        for (file, text) in sources(dir) {
            seen += 1;
            for (module, line) in crate_modules(&text) {
                if module == "operate" {
                    named.push(format!("{file} line {line}"));
                }
            }
        }
    }
    assert!(seen >= 20, "only {seen} files read");
    assert!(
        named.is_empty(),
        "these name crate::operate (take the word from crate::vocab):\n{}",
        named.join("\n")
    );
}

#[test]
fn crate_paths_are_read_in_every_spelling() {
    let source = "use crate::operate::cause::Cause;\n//! see [`crate::operate::leader`]\nuse crate::{text::quote, evidence::{Gap, live}, operate};\nlet x = crate::vocab::lease::LEASE_GROUP;";
    let modules: Vec<(String, usize)> = crate_modules(source);
    let names: Vec<&str> = modules.iter().map(|(m, _)| m.as_str()).collect();
    assert_eq!(names, ["operate", "operate", "text", "evidence", "operate", "vocab"]);
    assert_eq!(modules[4].1, 3);
}
