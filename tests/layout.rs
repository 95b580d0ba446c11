//! The repository's documentation agrees with the repository:
//!
//! - CONTRIBUTING.md's "Layout of `src/`" lists every file and directory under `src/`, each once
//!   with what it owns, and nothing that does not exist;
//! - docs/contracts.md lists exactly the finding ids of `diagnose::finding::FindingId::ALL`, and
//!   docs/diagnostics.md's findings table names each;
//! - `src/vocab/` (the shared vocabulary) imports nothing else from the crate, and `diagnose`,
//!   `evidence`, `logs` and `kopf` never name `crate::operate` (not in a doc link either: they
//!   read the vocabulary, and `operate` is above them);
//! - the import graph of src/ (files as nodes, `crate::`/`super::`/`self::` paths in code as
//!   edges; comments, doc links and strings aside) has no circle between files, and no edge
//!   between top modules that its table `MAY_IMPORT` forbids;
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

// ---------------------------------------------------------------------------------------------
// The import graph of src/: files as nodes, `crate::`/`super::`/`self::` paths in code as edges.
// Our own reader, since no crate reads Rust paths into a file graph without compiling the crate
// (rustc's own resolution needs the whole build); comments, doc links and string literals are
// blanked first, so a doc link or a message naming a path is no edge.
// ---------------------------------------------------------------------------------------------

/// `source` with comments and string and char literals replaced by spaces (newlines kept), so
/// that only code is left to read paths from.
fn code_only(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let ident_before = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if (c == 'r' || (c == 'b' && next == Some('r'))) && !ident_before && {
            let at = if c == 'b' { i + 2 } else { i + 1 };
            let hashes = chars[at.min(chars.len())..].iter().take_while(|&&h| h == '#').count();
            chars.get(at + hashes) == Some(&'"')
        } {
            let at = if c == 'b' { i + 2 } else { i + 1 };
            let hashes = chars[at..].iter().take_while(|&&h| h == '#').count();
            let end: String = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
            let body_start = at + hashes + 1;
            let rest: String = chars[body_start..].iter().collect();
            let body_len = rest
                .find(&end)
                .map(|e| rest[..e].chars().count())
                .unwrap_or(chars.len() - body_start);
            let stop = (body_start + body_len + end.chars().count()).min(chars.len());
            for &ch in &chars[i..stop] {
                out.push(blank(ch));
            }
            i = stop;
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < chars.len() {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
            out.push(' ');
            i += 1;
        } else if c == '\'' && (next == Some('\\') || chars.get(i + 2) == Some(&'\'')) {
            // A char literal ('x', '\n', '\u{1F600}'), not a lifetime ('a).
            out.push(' ');
            i += 1;
            if chars.get(i) == Some(&'\\') {
                out.push_str("  ");
                i += 2;
            }
            while i < chars.len() && chars[i] != '\'' {
                out.push(blank(chars[i]));
                i += 1;
            }
            out.push(' ');
            i += 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The module path of a file under src/: `src/a/b.rs` and `src/a/b/mod.rs` → `a::b`;
/// `src/lib.rs` → `` (the crate root); `src/main.rs` → `main` (the binary, its own crate).
fn module_of(file: &str) -> String {
    let inner = file.trim_start_matches("src/").trim_end_matches(".rs");
    let inner = inner.strip_suffix("/mod").unwrap_or(inner);
    match inner {
        "lib" => String::new(),
        other => other.replace('/', "::"),
    }
}

/// `a::b::c` → `a::b`; the root has no parent.
fn parent(module: &str) -> String {
    module.rsplit_once("::").map(|(p, _)| p.to_string()).unwrap_or_default()
}

fn join(base: &str, segment: &str) -> String {
    if base.is_empty() {
        segment.to_string()
    } else {
        format!("{base}::{segment}")
    }
}

/// The paths of a `use` tree or a path expression that starts at `text`: `a::b::C` is one,
/// `a::{b, c::{d, e}}` is `a::b`, `a::c::d`, `a::c::e`; each as its segments.
fn expand_paths(text: &str) -> Vec<Vec<String>> {
    fn ident(s: &str) -> &str {
        let end = s.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(s.len());
        &s[..end]
    }
    fn walk(text: &str, prefix: Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
        let mut segments = prefix;
        let mut at = 0;
        loop {
            let rest = text[at..].trim_start();
            at = text.len() - rest.len();
            if let Some(group) = rest.strip_prefix('{') {
                at += 1;
                let mut consumed = 0;
                loop {
                    let inner = &group[consumed..];
                    let trimmed = inner.trim_start();
                    consumed += inner.len() - trimmed.len();
                    if trimmed.starts_with('}') || trimmed.is_empty() {
                        consumed += 1.min(trimmed.len());
                        break;
                    }
                    consumed += walk(&group[consumed..], segments.clone(), out);
                    let after = group[consumed..].trim_start();
                    consumed = group.len() - after.len();
                    if let Some(more) = after.strip_prefix(',') {
                        consumed = group.len() - more.len();
                    }
                }
                return at + consumed;
            }
            let name = ident(rest);
            if name.is_empty() {
                out.push(segments);
                return at;
            }
            segments.push(name.to_string());
            at += name.len();
            match text[at..].strip_prefix("::") {
                Some(_) => at += 2,
                None => {
                    out.push(segments);
                    return at;
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(text, Vec::new(), &mut out);
    out
}

/// One edge of the file graph: `from` names `to` at `line` (1-based) through `path`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Edge {
    from: String,
    to: String,
    line: usize,
    path: String,
}

/// The edges of `files` (`(path under src/, text)`): every `crate::`, `super::` and `self::` path
/// in code, resolved to the file of the deepest module it names. Inline modules (`mod tests {`)
/// are followed, so `super::` in a file's test module is the file itself (no edge).
fn import_edges(files: &[(String, String)]) -> Vec<Edge> {
    let file_of: BTreeMap<String, String> = files.iter().map(|(f, _)| (module_of(f), f.clone())).collect();
    let mut edges = BTreeSet::new();
    for (file, text) in files {
        let module = module_of(file);
        let code = code_only(text);
        // (brace depth at which an inline module opened, its name)
        let mut inline: Vec<(usize, String)> = Vec::new();
        let mut depth = 0usize;
        let bytes = code.as_bytes();
        let mut line = 1;
        let mut i = 0;
        while i < code.len() {
            let c = bytes[i];
            let boundary = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
            if c == b'\n' {
                line += 1;
            } else if c == b'{' {
                depth += 1;
            } else if c == b'}' {
                depth = depth.saturating_sub(1);
                while inline.last().is_some_and(|(d, _)| *d > depth) {
                    inline.pop();
                }
            } else if boundary && code[i..].starts_with("mod ") {
                let rest = code[i + 4..].trim_start();
                let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if rest[name.len()..].trim_start().starts_with('{') {
                    inline.push((depth + 1, name));
                }
            } else if boundary
                && (code[i..].starts_with("crate::")
                    || code[i..].starts_with("super::")
                    || code[i..].starts_with("self::"))
            {
                let here = inline.iter().fold(module.clone(), |m, (_, name)| join(&m, name));
                let mut base = here.clone();
                let mut at = i;
                if code[at..].starts_with("crate::") {
                    base = String::new();
                    at += "crate::".len();
                } else if code[at..].starts_with("self::") {
                    at += "self::".len();
                } else {
                    while code[at..].starts_with("super::") {
                        base = parent(&base);
                        at += "super::".len();
                    }
                }
                for segments in expand_paths(&code[at..]) {
                    let mut target = base.clone();
                    for segment in &segments {
                        let deeper = join(&target, segment);
                        if file_of.contains_key(&deeper) {
                            target = deeper;
                        } else {
                            break;
                        }
                    }
                    // A path into an inline module of this file (`self::` in `mod tests`) is
                    // this file: no file of that name, no edge.
                    let target_file = file_of.get(&target).cloned();
                    if let Some(to) = target_file
                        && &to != file
                    {
                        edges.insert(Edge {
                            from: file.clone(),
                            to,
                            line,
                            path: format!("{}{}", &code[i..at], segments.join("::")),
                        });
                    }
                }
                i = at;
                continue;
            }
            i += 1;
        }
    }
    edges.into_iter().collect()
}

/// The strongly connected components of more than one file (Tarjan's algorithm): each an
/// import circle, as its sorted files.
fn circles(edges: &[Edge]) -> Vec<Vec<String>> {
    let nodes: BTreeSet<&str> = edges.iter().flat_map(|e| [e.from.as_str(), e.to.as_str()]).collect();
    let index_of: BTreeMap<&str, usize> = nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let names: Vec<&str> = nodes.iter().copied().collect();
    let mut next: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); names.len()];
    for e in edges {
        next[index_of[e.from.as_str()]].insert(index_of[e.to.as_str()]);
    }
    struct Tarjan<'a> {
        next: &'a [BTreeSet<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        counter: usize,
        found: Vec<Vec<usize>>,
    }
    impl Tarjan<'_> {
        fn visit(&mut self, v: usize) {
            self.index[v] = Some(self.counter);
            self.low[v] = self.counter;
            self.counter += 1;
            self.stack.push(v);
            self.on_stack[v] = true;
            for &w in &self.next[v].clone() {
                match self.index[w] {
                    None => {
                        self.visit(w);
                        self.low[v] = self.low[v].min(self.low[w]);
                    }
                    Some(iw) if self.on_stack[w] => self.low[v] = self.low[v].min(iw),
                    Some(_) => {}
                }
            }
            if Some(self.low[v]) == self.index[v] {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack[w] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    self.found.push(component);
                }
            }
        }
    }
    let mut t = Tarjan {
        next: &next,
        index: vec![None; names.len()],
        low: vec![0; names.len()],
        on_stack: vec![false; names.len()],
        stack: Vec::new(),
        counter: 0,
        found: Vec::new(),
    };
    for v in 0..names.len() {
        if t.index[v].is_none() {
            t.visit(v);
        }
    }
    let mut out: Vec<Vec<String>> = t
        .found
        .into_iter()
        .map(|c| {
            let mut files: Vec<String> = c.into_iter().map(|i| names[i].to_string()).collect();
            files.sort();
            files
        })
        .collect();
    out.sort();
    out
}

/// Every `.rs` file under src/, as `(path, text)`.
fn src_files() -> Vec<(String, String)> {
    sources("src")
}

fn describe_circles(edges: &[Edge]) -> String {
    let mut text = String::new();
    for circle in circles(edges) {
        text.push_str(&format!("circle of {} files:\n", circle.len()));
        for e in edges {
            if circle.contains(&e.from) && circle.contains(&e.to) {
                text.push_str(&format!("  {} line {}: {} -> {}\n", e.from, e.line, e.path, e.to));
            }
        }
    }
    text
}

/// The top module of a file: `src/diagnose/findings/x.rs` → `diagnose`, `src/cli/mod.rs` →
/// `cli`, `src/time.rs` → `time`, `src/lib.rs` → `lib` (the crate root).
fn top_module(file: &str) -> &str {
    let inner = file.trim_start_matches("src/");
    let first = inner.split('/').next().unwrap_or(inner);
    first.trim_end_matches(".rs")
}

/// Which top modules each top module of src/ may import (CONTRIBUTING.md, "Layout of `src/`"):
/// flags up (`cli`, then the commands and `operate`, then `app`), the model down (`evidence`
/// over `logs` over `kopf`), `diagnose` the only judge, and the shared vocabulary and small
/// helpers at the bottom. An edge not listed here fails the test, as does a top module the
/// table does not know.
const MAY_IMPORT: &[(&str, &[&str])] = &[
    ("app", &["cli", "commands", "operate", "render", "error"]),
    (
        "commands",
        &[
            "cli", "client", "diagnose", "evidence", "logs", "kopf", "install", "render", "resource", "selector",
            "names", "jsonpath", "text", "time", "vocab", "yaml", "error", "lib",
        ],
    ),
    (
        "operate",
        &[
            "cli", "client", "diagnose", "logs", "resource", "vocab", "text", "time", "error", "lib",
        ],
    ),
    (
        "cli",
        &[
            "client", "render", "install", "names", "jsonpath", "time", "vocab", "error", "lib",
        ],
    ),
    (
        "diagnose",
        &[
            "evidence", "logs", "kopf", "install", "resource", "selector", "names", "vocab", "text", "time", "yaml",
            "error",
        ],
    ),
    (
        "evidence",
        &[
            "logs", "kopf", "client", "resource", "selector", "names", "vocab", "text", "time", "error",
        ],
    ),
    ("logs", &["kopf", "client", "names", "vocab", "text", "time", "error"]),
    ("kopf", &["vocab", "text", "time"]),
    ("install", &["resource", "vocab", "yaml", "text"]),
    ("render", &["jsonpath", "text", "time", "yaml", "error"]),
    ("client", &["time", "text", "error"]),
    ("resource", &["vocab", "text"]),
    ("selector", &["text", "error"]),
    ("jsonpath", &["text", "error"]),
    ("names", &["text", "error"]),
    ("error", &[]),
    ("text", &[]),
    ("time", &[]),
    ("yaml", &[]),
    ("vocab", &[]),
    ("lib", &[]),
    ("main", &[]),
];

/// The edges between top modules that [`MAY_IMPORT`] does not allow, and the top modules it
/// does not know, each as a line.
fn forbidden(edges: &[Edge], files: &[(String, String)]) -> Vec<String> {
    let table: BTreeMap<&str, &[&str]> = MAY_IMPORT.iter().copied().collect();
    let mut wrong = Vec::new();
    let tops: BTreeSet<&str> = files.iter().map(|(f, _)| top_module(f)).collect();
    for top in tops {
        if !table.contains_key(top) {
            wrong.push(format!(
                "src/{top}: a top module tests/layout.rs's MAY_IMPORT does not list"
            ));
        }
    }
    for e in edges {
        let (from, to) = (top_module(&e.from), top_module(&e.to));
        if from != to && table.get(from).is_some_and(|allowed| !allowed.contains(&to)) {
            wrong.push(format!(
                "{} line {}: {} ({from} may not import {to})",
                e.from, e.line, e.path
            ));
        }
    }
    wrong
}

#[test]
fn src_has_no_import_circle_and_no_edge_the_module_table_forbids() {
    let files = src_files();
    let edges = import_edges(&files);
    assert!(edges.len() > 500, "only {} edges read", edges.len());
    let circles = describe_circles(&edges);
    assert!(circles.is_empty(), "import circles between files of src/:\n{circles}");
    let wrong = forbidden(&edges, &files);
    assert!(
        wrong.is_empty(),
        "imports the module table forbids:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_import_check_sees_a_circle_and_a_wrong_import_and_nothing_in_comments_or_strings() {
    let files: Vec<(String, String)> = [
        ("src/lib.rs", "pub mod diagnose;\npub mod kopf;\npub mod operate;\n"),
        ("src/diagnose/mod.rs", "pub mod a;\npub mod b;\n"),
        ("src/diagnose/a.rs", "use crate::diagnose::b::Thing;\npub struct Other;\n"),
        (
            "src/diagnose/b.rs",
            "pub struct Thing;\nfn f() -> super::a::Other { super::a::Other }\n#[cfg(test)]\nmod tests {\n    use super::*;\n    use self::inner::X;\n}\n",
        ),
        (
            "src/kopf/mod.rs",
            "//! See [`crate::operate`].\nuse crate::{text::quote, operate::{cause::Cause, leader}};\nconst S: &str = \"crate::diagnose\";\nconst C: char = '\\'';\nconst R: &str = r#\"crate::diagnose::a\"#;\n",
        ),
        ("src/operate/mod.rs", "pub mod cause;\npub mod leader;\n"),
        ("src/operate/cause.rs", "pub struct Cause;\n"),
        ("src/operate/leader.rs", "fn f<'a>(x: &'a str) -> &'a str { x }\n"),
        ("src/text.rs", "pub fn quote() {}\n"),
    ]
    .iter()
    .map(|(f, t)| (f.to_string(), t.to_string()))
    .collect();
    let edges = import_edges(&files);
    let pairs: Vec<(&str, &str)> = edges.iter().map(|e| (e.from.as_str(), e.to.as_str())).collect();
    assert!(pairs.contains(&("src/diagnose/a.rs", "src/diagnose/b.rs")), "{pairs:?}");
    assert!(pairs.contains(&("src/diagnose/b.rs", "src/diagnose/a.rs")), "{pairs:?}");
    assert!(
        pairs.contains(&("src/kopf/mod.rs", "src/operate/cause.rs")),
        "{pairs:?}"
    );
    assert!(
        pairs.contains(&("src/kopf/mod.rs", "src/operate/leader.rs")),
        "{pairs:?}"
    );
    assert!(pairs.contains(&("src/kopf/mod.rs", "src/text.rs")), "{pairs:?}");
    // A doc link, a string, a raw string and a test module's `super::` are no edge.
    assert!(
        !pairs
            .iter()
            .any(|(_, to)| to.starts_with("src/diagnose") && !to.contains("/a.rs") && !to.contains("/b.rs")),
        "{pairs:?}"
    );
    assert!(!pairs.contains(&("src/kopf/mod.rs", "src/operate/mod.rs")), "{pairs:?}");
    assert!(!pairs.iter().any(|(from, to)| from == to), "{pairs:?}");
    assert_eq!(
        edges
            .iter()
            .filter(|e| e.from == "src/kopf/mod.rs")
            .map(|e| e.line)
            .min(),
        Some(2)
    );

    assert_eq!(
        circles(&edges),
        vec![vec!["src/diagnose/a.rs".to_string(), "src/diagnose/b.rs".to_string()]]
    );
    assert!(
        describe_circles(&edges).contains("src/diagnose/a.rs line 1: crate::diagnose::b::Thing -> src/diagnose/b.rs")
    );
    let wrong = forbidden(&edges, &files);
    assert!(
        wrong.iter().any(
            |w| w.starts_with("src/kopf/mod.rs line 2: crate::operate::cause::Cause (kopf may not import operate)")
        ),
        "{wrong:?}"
    );
    assert!(!wrong.iter().any(|w| w.contains("may not import text")), "{wrong:?}");
    // A top module the table does not know is named.
    let mut more = files.clone();
    more.push(("src/newcomer.rs".into(), String::new()));
    assert!(forbidden(&edges, &more).iter().any(|w| w.starts_with("src/newcomer:")));
}
