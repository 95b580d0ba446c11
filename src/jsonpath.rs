//! kubectl's JSONPath templates, for `-o jsonpath=TEMPLATE` and `-o jsonpath-as-json=TEMPLATE`,
//! evaluated over the JSON document that `-o json` prints (README, Contracts).
//!
//! kubectl's dialect (`k8s.io/client-go/util/jsonpath`) is a template, not an RFC 9535 query:
//! text outside braces is printed as is; each `{...}` action is a path evaluated against the
//! document (`{.items[*].name}`); `{"\n"}` prints a string (Go escapes); `{range PATH}...{end}`
//! repeats its body for each value PATH selects, the paths inside being relative to that value.
//! The paths themselves are evaluated by `jsonpath-rust` (RFC 9535, already compiled for kube's
//! exec credentials): each kubectl path is translated to RFC 9535, every name in bracket form
//! (`.metadata.labels.app/name` → `$['metadata']['labels']['app/name']`). No Rust crate parses
//! kubectl's template layer or its path spelling, hence this module.
//!
//! Paths: `.name` (with `\.` for a dot inside a name), `[N]`, `[-1]`, `[a:b:c]`, `[*]`, `.*`,
//! `['name']` (a path, as kubectl reads it), unions of indexes or single names
//! (`[0,2]`, `['a','b']`), recursive descent `..name`, filters with one comparison or an
//! existence test (`[?(@.verdict=="stale")]`, `[?(@.operator)]`), `@` and `$` for the current
//! value. Refused at parse time, with an error naming the template: regular-expression filters
//! (`=~`), unions of nested paths, identifiers other than `range`/`end`, and anything
//! `jsonpath-rust` cannot compile.
//!
//! Printing, as kubectl's: the values of one action are joined by one space; strings print bare,
//! numbers and booleans as JSON, `null` as `<nil>`, objects and arrays as compact JSON; a key
//! that is missing prints nothing (kubectl's `--allow-missing-template-keys`, true by default),
//! or, with `--allow-missing-template-keys=false` ([`Template::allowing_missing_keys`]), is an
//! error naming it as kubectl's does (`error executing jsonpath "{.metadata.name}": Error
//! executing template: metadata is not found`): a field that none of the values it is read from
//! has, or an index that none has. As kubectl, a path with no value to read from (`.items[*]` of
//! an empty list) or a filter that selects none is no error. kubectl then exits 1; here that
//! error is a usage error (exit 2): the Contracts' exit 1 says a problem was diagnosed, and a
//! script must not read a template's missing key as that.
//!
//! The paths walk the `-o json` document of the command (docs/contracts.md), not the
//! Kubernetes objects: `status -o jsonpath='{.items[*].name}'`, where kubectl's
//! `{.items[*].metadata.name}` finds no `metadata` (and prints nothing, or fails with the flag).
//! Unlike kubectl, terminal control characters inside values are escaped
//! ([`crate::text::sanitize`], as in all our text output); `-o json` gives exact values.
//! `jsonpath-as-json` prints each action's values as a JSON array, indented by four spaces.

use jsonpath_rust::parser::parse_json_path;
use jsonpath_rust::query::js_path_process;
use serde_json::Value;

/// Why a template cannot be parsed or evaluated; each names the template as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JsonPathError {
    /// The template is not kubectl's syntax, or uses what this module does not support.
    #[error("jsonpath template {template:?}: {what}")]
    Parse {
        /// The template as given.
        template: String,
        /// What is wrong or unsupported in it.
        what: String,
    },
    /// With `--allow-missing-template-keys=false`: a field the template names is not in the
    /// document (kubectl's words).
    #[error("error executing jsonpath {template:?}: Error executing template: {key} is not found")]
    MissingKey {
        /// The template as given.
        template: String,
        /// The field (`metadata`) that no value it was read from has.
        key: String,
    },
    /// With `--allow-missing-template-keys=false`: an index past the end of the lists it was
    /// read from (kubectl's words).
    #[error(
        "error executing jsonpath {template:?}: Error executing template: array index out of bounds: index {index}, length {length}"
    )]
    IndexOutOfBounds {
        /// The template as given.
        template: String,
        /// The index as written (`5`, `-3`).
        index: i64,
        /// The length of the (first) list it was read from.
        length: usize,
    },
    /// The path engine failed on the document.
    #[error("jsonpath template {template:?}: {what}")]
    Evaluate {
        /// The template as given.
        template: String,
        /// The engine's error.
        what: String,
    },
}

/// A parsed template. Equal templates have equal source text (and the same missing-key rule).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    source: String,
    nodes: Vec<Node>,
    /// kubectl's `--allow-missing-template-keys` (default true): a missing key prints nothing.
    allow_missing_keys: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Node {
    /// Printed as is.
    Text(String),
    /// A path's values.
    Path(Query),
    /// `{range PATH}` body `{end}`.
    Range(Query, Vec<Node>),
}

/// One kubectl path and its RFC 9535 translation (checked to compile with `jsonpath-rust`), with
/// its steps (the query up to each, and what the step reads) to name a missing key.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Query {
    rfc: String,
    steps: Vec<(String, Step)>,
}

/// What one step of a path reads, for naming a missing key as kubectl does.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    /// A field (`.name`, `['name']`, `..name`): missing when none of the values has it.
    Field(String),
    /// One index (`[3]`, `[-1]`): missing when none of the lists has it.
    Index(i64),
    /// A wildcard, slice, union or filter: selecting nothing is no error (kubectl's too).
    Other,
}

impl Template {
    /// Parses kubectl's template syntax (see the module docs). The error names the template and
    /// what is wrong or unsupported in it.
    pub fn parse(source: &str) -> Result<Template, JsonPathError> {
        let fail = |what: String| JsonPathError::Parse {
            template: source.to_string(),
            what,
        };
        if source.is_empty() {
            return Err(fail("empty: give a template, e.g. jsonpath='{.items[*].name}'".into()));
        }
        // Each open `{range}` with the nodes before it.
        let mut stack: Vec<(Query, Vec<Node>)> = Vec::new();
        let mut nodes: Vec<Node> = Vec::new();
        let mut rest = source;
        while !rest.is_empty() {
            let Some(open) = rest.find('{') else {
                nodes.push(Node::Text(rest.to_string()));
                break;
            };
            if open > 0 {
                nodes.push(Node::Text(rest[..open].to_string()));
            }
            let inner = &rest[open + 1..];
            let close = action_end(inner).ok_or_else(|| fail(format!("unclosed action {:?}", &rest[open..])))?;
            let action = inner[..close].trim();
            rest = &inner[close + 1..];
            if action == "end" {
                let (query, outer) = stack
                    .pop()
                    .ok_or_else(|| fail("{end} without a {range ...} to end".into()))?;
                let body = std::mem::replace(&mut nodes, outer);
                nodes.push(Node::Range(query, body));
            } else if let Some(path) = action.strip_prefix("range").filter(|p| p.starts_with([' ', '\t'])) {
                let query = translate(path.trim()).map_err(&fail)?;
                stack.push((query, std::mem::take(&mut nodes)));
            } else if action.starts_with(['"', '\'']) {
                nodes.push(Node::Text(unquote(action).map_err(&fail)?));
            } else {
                nodes.push(Node::Path(translate(action).map_err(&fail)?));
            }
        }
        if !stack.is_empty() {
            return Err(fail("{range ...} without {end}".into()));
        }
        Ok(Template {
            source: source.to_string(),
            nodes,
            allow_missing_keys: true,
        })
    }

    /// The template with kubectl's `--allow-missing-template-keys=ALLOW`: `false` makes a
    /// missing key an error ([`JsonPathError::MissingKey`]) instead of nothing printed.
    pub fn allowing_missing_keys(self, allow: bool) -> Template {
        Template {
            allow_missing_keys: allow,
            ..self
        }
    }

    /// The template as given.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Evaluates the template over `document`: text as kubectl prints it, or with `as_json`
    /// each action's values as an indented JSON array (kubectl's `jsonpath-as-json`). Errors
    /// name the template: the engine's, and a missing key when missing keys are not allowed.
    pub fn render(&self, document: &Value, as_json: bool) -> Result<String, JsonPathError> {
        let mut groups = Vec::new();
        evaluate(&self.nodes, document, &mut groups, self.allow_missing_keys).map_err(|e| match e {
            Failed::Missing(key) => JsonPathError::MissingKey {
                template: self.source.clone(),
                key,
            },
            Failed::OutOfBounds(index, length) => JsonPathError::IndexOutOfBounds {
                template: self.source.clone(),
                index,
                length,
            },
            Failed::Engine(what) => JsonPathError::Evaluate {
                template: self.source.clone(),
                what,
            },
        })?;
        let mut out = String::new();
        for group in groups {
            match group {
                Group::Text(text) if as_json => out.push_str(&pretty4(&Value::Array(vec![Value::String(text.into())]))),
                Group::Text(text) => out.push_str(text),
                Group::Values(values) if as_json => {
                    out.push_str(&pretty4(&Value::Array(values.into_iter().cloned().collect())));
                }
                Group::Values(values) => {
                    let texts: Vec<String> = values.into_iter().map(text).collect();
                    out.push_str(&texts.join(" "));
                }
            }
            if as_json {
                out.push('\n');
            }
        }
        Ok(out)
    }
}

/// What one action printed: the template's own text, or a path's values.
enum Group<'a> {
    Text(&'a str),
    Values(Vec<&'a Value>),
}

/// Why evaluating a template stopped.
enum Failed {
    /// A missing field, named (missing keys not allowed).
    Missing(String),
    /// An index past the end: the index and the list's length (missing keys not allowed).
    OutOfBounds(i64, usize),
    /// The path engine's error.
    Engine(String),
}

fn evaluate<'a>(
    nodes: &'a [Node],
    current: &'a Value,
    groups: &mut Vec<Group<'a>>,
    allow_missing: bool,
) -> Result<(), Failed> {
    for node in nodes {
        match node {
            Node::Text(t) => groups.push(Group::Text(t)),
            Node::Path(q) => groups.push(Group::Values(q.values_checked(current, allow_missing)?)),
            Node::Range(q, body) => {
                for item in q.values_checked(current, allow_missing)? {
                    evaluate(body, item, groups, allow_missing)?;
                }
            }
        }
    }
    Ok(())
}

impl Query {
    fn compile(steps: Vec<(String, Step)>) -> Result<Query, String> {
        let mut rfc = "$".to_string();
        let mut prefixes = Vec::with_capacity(steps.len());
        for (segment, step) in steps {
            rfc.push_str(&segment);
            prefixes.push((rfc.clone(), step));
        }
        parse_json_path(&rfc).map_err(|e| format!("cannot evaluate {rfc:?}: {e}"))?;
        Ok(Query { rfc, steps: prefixes })
    }

    fn values<'a>(&self, current: &'a Value) -> Result<Vec<&'a Value>, String> {
        run_query(&self.rfc, current)
    }

    /// The values, and with `allow_missing` false the first missing key as an error: the
    /// first field or index step that selects nothing from values that exist.
    fn values_checked<'a>(&self, current: &'a Value, allow_missing: bool) -> Result<Vec<&'a Value>, Failed> {
        let values = self.values(current).map_err(Failed::Engine)?;
        if allow_missing || !values.is_empty() {
            return Ok(values);
        }
        let mut before: Vec<&'a Value> = vec![current];
        for (prefix, step) in &self.steps {
            let got = run_query(prefix, current).map_err(Failed::Engine)?;
            if !got.is_empty() {
                before = got;
                continue;
            }
            return match step {
                Step::Field(name) => Err(Failed::Missing(name.clone())),
                Step::Index(index) => {
                    let length = before.iter().find_map(|v| v.as_array()).map_or(0, Vec::len);
                    Err(Failed::OutOfBounds(*index, length))
                }
                Step::Other => Ok(values),
            };
        }
        Ok(values)
    }
}

/// The values the RFC 9535 query `rfc` selects from `current`.
fn run_query<'a>(rfc: &str, current: &'a Value) -> Result<Vec<&'a Value>, String> {
    let query = parse_json_path(rfc).map_err(|e| e.to_string())?;
    Ok(js_path_process(&query, current)
        .map_err(|e| e.to_string())?
        .into_iter()
        .map(|r| r.val())
        .collect())
}

/// A value as kubectl prints it in a template (see the module docs).
fn text(value: &Value) -> String {
    match value {
        Value::String(s) => crate::text::sanitize(s),
        Value::Null => "<nil>".into(),
        other => other.to_string(),
    }
}

/// JSON indented by four spaces, as Go's `json.MarshalIndent(v, "", "    ")`.
fn pretty4(value: &Value) -> String {
    use serde::Serialize;
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
    value.serialize(&mut serializer).expect("a JSON value serialises");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// Where the action that starts at `inner` ends (the index of its `}`): quotes and brackets
/// are skipped, so `{"}"}` and `[?(@.a=="}")]` are one action.
fn action_end(inner: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut depth = 0usize;
    for (i, c) in inner.char_indices() {
        if let Some(q) = quote {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                c if c == q => quote = None,
                _ => {}
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '[' | '(' => depth += 1,
            ']' | ')' => depth = depth.saturating_sub(1),
            '}' if depth == 0 => return Some(i),
            _ => {}
        }
    }
    None
}

/// A quoted string of an action (`"\n"`, `'x'`), with Go's escapes (`\n`, `\t`, `\"`, `\\`,
/// `\uXXXX`, ...).
fn unquote(quoted: &str) -> Result<String, String> {
    let quote = quoted.chars().next().unwrap_or('"');
    let body = quoted
        .strip_prefix(quote)
        .and_then(|s| s.strip_suffix(quote))
        .filter(|_| quoted.len() >= 2)
        .ok_or_else(|| format!("unterminated string {quoted}"))?;
    let mut out = String::new();
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c == quote {
            return Err(format!(
                "{quoted}: one action holds one string; write {{{quote}a{quote}}}{{{quote}b{quote}}}"
            ));
        }
        if c != '\\' {
            out.push(c);
            continue;
        }
        let escaped = chars.next().ok_or_else(|| format!("{quoted}: a lone \\ at the end"))?;
        match escaped {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'v' => out.push('\u{b}'),
            '\\' | '"' | '\'' => out.push(escaped),
            'u' | 'U' => {
                let len = if escaped == 'u' { 4 } else { 8 };
                let hex: String = chars.by_ref().take(len).collect();
                let c = u32::from_str_radix(&hex, 16)
                    .ok()
                    .filter(|_| hex.len() == len)
                    .and_then(char::from_u32)
                    .ok_or_else(|| format!("{quoted}: bad \\{escaped}{hex}"))?;
                out.push(c);
            }
            other => return Err(format!("{quoted}: unknown escape \\{other}")),
        }
    }
    Ok(out)
}

/// An RFC 9535 string literal.
fn rfc_string(s: &str) -> String {
    serde_json::to_string(s).expect("a string serialises")
}

/// Whether kubectl ends a field name at `c` (its `isTerminator`).
fn ends_name(c: char) -> bool {
    c.is_whitespace() || matches!(c, '.' | ',' | '[' | ']' | '$' | '@' | '{' | '}')
}

/// Translates a kubectl path to an RFC 9535 query from the root `$` (the current value).
fn translate(path: &str) -> Result<Query, String> {
    Query::compile(steps(path)?)
}

/// The RFC 9535 segments of a kubectl path (without the leading `$` or `@`).
fn segments(path: &str) -> Result<String, String> {
    Ok(steps(path)?.into_iter().map(|(segment, _)| segment).collect())
}

/// The steps of a kubectl path: each one's RFC 9535 segment and what it reads.
fn steps(path: &str) -> Result<Vec<(String, Step)>, String> {
    if path.is_empty() {
        return Err("empty path".into());
    }
    let mut out: Vec<(String, Step)> = Vec::new();
    let mut rest = path;
    // `@` and `$` name the current value, as in kubectl (which skips them anywhere).
    rest = rest.strip_prefix(['@', '$']).unwrap_or(rest);
    if !rest.is_empty() && !rest.starts_with(['.', '[']) {
        return Err(format!(
            "{path:?}: a path starts with '.', '[', '@' or '$' (e.g. .items[*].name); only range and end are keywords"
        ));
    }
    while let Some(c) = rest.chars().next() {
        match c {
            '.' if rest.starts_with("..") => {
                rest = &rest[2..];
                if rest.starts_with(['.', '[']) {
                    if rest.starts_with('.') {
                        return Err(format!("{path:?}: '...' is not a path"));
                    }
                    // `..[...]`: the descent and the bracket are one step.
                    let close = bracket_end(rest).ok_or_else(|| format!("{path:?}: '[' without ']'"))?;
                    let (segment, _) = bracket_step(&rest[1..close], path)?;
                    out.push((format!("..{segment}"), Step::Other));
                    rest = &rest[close + 1..];
                    continue;
                }
                let (name, after) = field_name(rest);
                rest = after;
                match name.as_str() {
                    "" => return Err(format!("{path:?}: '..' needs a name, '*' or '[...]' after it")),
                    "*" => out.push(("..*".into(), Step::Other)),
                    _ => out.push((format!("..[{}]", rfc_string(&name)), Step::Field(name))),
                }
            }
            '.' => {
                rest = &rest[1..];
                if (rest.is_empty() && out.is_empty()) || rest.starts_with('[') {
                    // `{.}` is the current value; `.[0]` an index.
                    continue;
                }
                let (name, after) = field_name(rest);
                rest = after;
                match name.as_str() {
                    "" => return Err(format!("{path:?}: a '.' needs a name after it")),
                    "*" => out.push(("[*]".into(), Step::Other)),
                    _ => out.push((format!("[{}]", rfc_string(&name)), Step::Field(name))),
                }
            }
            '[' => {
                let close = bracket_end(rest).ok_or_else(|| format!("{path:?}: '[' without ']'"))?;
                out.push(bracket_step(&rest[1..close], path)?);
                rest = &rest[close + 1..];
            }
            c if c.is_whitespace() => {
                return Err(format!(
                    "{path:?}: a space inside a path (one action holds one path; write {{.a}} {{.b}})"
                ));
            }
            other => return Err(format!("{path:?}: unexpected {other:?}")),
        }
    }
    Ok(out)
}

/// A field name up to kubectl's terminators, with `\x` read as `x`; and the rest.
fn field_name(s: &str) -> (String, &str) {
    let mut name = String::new();
    let mut chars = s.char_indices();
    while let Some((i, c)) = chars.next() {
        if c == '\\' {
            if let Some((_, next)) = chars.next() {
                name.push(next);
            }
            continue;
        }
        if ends_name(c) {
            return (name, &s[i..]);
        }
        name.push(c);
    }
    (name, "")
}

/// The index of the `]` that closes the `[` at the start of `s` (quotes and nested brackets
/// skipped).
fn bracket_end(s: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        if let Some(q) = quote {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                c if c == q => quote = None,
                _ => {}
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// One kubectl `[...]` (its content without the brackets) as one step: its RFC 9535
/// segments ([`bracket`]) and what it reads: `['name']` a field, `[N]` an index, the rest
/// (`*`, slices, unions, filters) neither.
fn bracket_step(content: &str, path: &str) -> Result<(String, Step), String> {
    let segment = bracket(content, path)?;
    let trimmed = content.trim();
    let step = if let Some(key) = quoted_key(trimmed) {
        Step::Field(key.to_string())
    } else if let Some(index) = trimmed.parse::<i64>().ok().filter(|_| is_slice(trimmed)) {
        Step::Index(index)
    } else {
        Step::Other
    };
    Ok((segment, step))
}

/// One kubectl `[...]` (its content without the brackets) as RFC 9535 segments.
fn bracket(content: &str, path: &str) -> Result<String, String> {
    let content = content.trim();
    if content == "*" {
        return Ok("[*]".into());
    }
    if let Some(filter) = content.strip_prefix('?') {
        return Ok(format!("[?{}]", self::filter(filter.trim(), path)?));
    }
    if let Some(key) = quoted_key(content) {
        // kubectl reads ['a.b'] as the path .a.b.
        return segments(&format!(".{key}"));
    }
    let parts = split_top_level(content, ',');
    if parts.len() > 1 {
        let mut selectors = Vec::new();
        for part in &parts {
            let part = part.trim();
            if let Some(key) = quoted_key(part) {
                let (name, rest) = field_name(key);
                if !rest.is_empty() {
                    return Err(format!(
                        "{path:?}: a union of nested paths ({part}) is not supported; give one action per path"
                    ));
                }
                selectors.push(rfc_string(&name));
            } else if !part.is_empty() && is_slice(part) {
                selectors.push(part.to_string());
            } else {
                return Err(format!("{path:?}: invalid union member {part:?}"));
            }
        }
        return Ok(format!("[{}]", selectors.join(",")));
    }
    if is_slice(content) && !content.is_empty() {
        return Ok(format!("[{content}]"));
    }
    Err(format!(
        "{path:?}: invalid array index [{content}] (expected N, -N, a:b, a:b:c, *, 'name' or ?(...))"
    ))
}

/// `'name'` (kubectl's dict key; `"name"` read the same way) → `name`.
fn quoted_key(s: &str) -> Option<&str> {
    ['\'', '"']
        .into_iter()
        .find_map(|q| s.strip_prefix(q)?.strip_suffix(q))
        .filter(|k| !k.contains(['\'', '"']) && s.len() >= 2)
}

/// kubectl's index or slice: `N`, `-N`, `a:b`, `a:b:c` (each part optional but the first).
fn is_slice(s: &str) -> bool {
    let parts: Vec<&str> = s.split(':').collect();
    parts.len() <= 3
        && parts.iter().all(|p| {
            let digits = p.strip_prefix('-').unwrap_or(p);
            digits.chars().all(|c| c.is_ascii_digit()) && (p.is_empty() || !digits.is_empty())
        })
}

/// Splits at `sep` outside quotes and brackets.
fn split_top_level(s: &str, sep: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut quote: Option<char> = None;
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '[' | '(' => depth += 1,
            ']' | ')' => depth -= 1,
            c if c == sep && depth == 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

/// A kubectl filter (`(@.a=="x")`, `(@.a)`) as an RFC 9535 logical expression.
fn filter(expr: &str, path: &str) -> Result<String, String> {
    let body = expr
        .strip_prefix('(')
        .and_then(|b| b.strip_suffix(')'))
        .ok_or_else(|| format!("{path:?}: a filter is written [?(...)]"))?
        .trim();
    // kubectl's own split: left side, operator, right side (one comparison).
    let split = regex::Regex::new(r"^([^!<>=]+)([!<>=~]+)(.+?)$").expect("a valid regex");
    let Some(parts) = split.captures(body) else {
        return match operand(body, path)? {
            Operand::Path(p) => Ok(p),
            Operand::Literal(_) => Err(format!(
                "{path:?}: the filter [?({body})] tests no path; write [?(@.name)] or [?(@.name==\"x\")]"
            )),
        };
    };
    let (left, op, right) = (parts[1].trim(), &parts[2], parts[3].trim());
    match op {
        "==" | "!=" | "<" | ">" | "<=" | ">=" => {}
        "=~" => {
            return Err(format!(
                "{path:?}: regular-expression filters (=~) are not supported; filter with -o json and jq, or compare with =="
            ));
        }
        other => return Err(format!("{path:?}: unknown filter operator {other:?}")),
    }
    let side = |s: &str| {
        operand(s, path).map(|o| match o {
            Operand::Path(p) | Operand::Literal(p) => p,
        })
    };
    Ok(format!("{}{op}{}", side(left)?, side(right)?))
}

enum Operand {
    /// A relative RFC 9535 query (`@['a']`).
    Path(String),
    /// A string, number or boolean literal in RFC 9535 spelling.
    Literal(String),
}

/// One side of a filter: a path relative to the element, or a literal.
fn operand(s: &str, path: &str) -> Result<Operand, String> {
    if s.starts_with(['@', '$', '.', '[']) {
        return Ok(Operand::Path(format!("@{}", segments(s)?)));
    }
    if s.starts_with(['"', '\'']) {
        return Ok(Operand::Literal(rfc_string(&unquote(s)?)));
    }
    if s == "true" || s == "false" || s.parse::<f64>().is_ok_and(f64::is_finite) {
        return Ok(Operand::Literal(s.to_string()));
    }
    Err(format!(
        "{path:?}: {s:?} in a filter is neither a path (@.name) nor a string, number or boolean"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc() -> Value {
        json!({
            "schemaVersion": 1,
            "items": [
                {"namespace": "todo", "name": "todo-api", "verdict": "fresh", "port": 8080,
                 "observedGeneration": null, "labels": {"app.kubernetes.io/name": "todo", "tier": "web"},
                 "reasons": [{"code": "a"}, {"code": "b"}]},
                {"namespace": "todo", "name": "todo-db", "verdict": "stale", "port": 5432,
                 "observedGeneration": 2, "labels": {},
                 "reasons": []}
            ],
            "gaps": []
        })
    }

    fn render(template: &str) -> String {
        Template::parse(template).unwrap().render(&doc(), false).unwrap()
    }

    #[test]
    fn paths_print_like_kubectl() {
        assert_eq!(render("{.items[*].name}"), "todo-api todo-db");
        assert_eq!(render("{.items[0].name}"), "todo-api");
        assert_eq!(render("{.items[-1].name}"), "todo-db");
        assert_eq!(render("{.items[0:1].name}"), "todo-api");
        assert_eq!(render("{$.schemaVersion}"), "1");
        assert_eq!(render("{@.schemaVersion}"), "1");
        assert_eq!(render("{.items[*].observedGeneration}"), "<nil> 2");
        assert_eq!(render("{.items[1].labels}"), "{}");
        assert_eq!(render("{.items[0].reasons[*]}"), r#"{"code":"a"} {"code":"b"}"#);
        assert_eq!(render("{.gaps}"), "[]");
        assert_eq!(render("{.items[0].labels.app\\.kubernetes\\.io/name}"), "todo");
        assert_eq!(render("{.items[0]['labels']['tier']}"), "web");
        assert_eq!(render("{.items[0]['labels.tier']}"), "web");
        assert_eq!(render("{..code}"), "a b");
        assert_eq!(render("{.items[0].labels.*}"), "todo web");
        assert_eq!(render("{.items[0]['name','port']}"), "todo-api 8080");
        assert_eq!(render("{.items[0,1].port}"), "8080 5432");
    }

    #[test]
    fn text_strings_and_missing_keys() {
        assert_eq!(render("names: {.items[*].name}\n"), "names: todo-api todo-db\n");
        assert_eq!(
            render(r#"{.items[0].name}{"\t"}{.items[0].port}{"\n"}"#),
            "todo-api\t8080\n"
        );
        assert_eq!(render("{'x'}"), "x");
        assert_eq!(render("[{.nothing.here}]"), "[]");
        assert_eq!(render("{.items[*].nothing}"), "");
        assert_eq!(render("a}b"), "a}b");
    }

    /// kubectl's `--allow-missing-template-keys=false`: a field none of the values has, or an
    /// index past the end, is an error in kubectl's words; a path with nothing to read from
    /// (`[*]` of an empty list), a filter or wildcard selecting none, and a null value are not.
    #[test]
    fn missing_keys_are_errors_when_not_allowed() {
        let strict = |template: &str| {
            Template::parse(template)
                .unwrap()
                .allowing_missing_keys(false)
                .render(&doc(), false)
        };
        let missing = |template: &str| strict(template).unwrap_err().to_string();
        assert_eq!(
            missing("{.items[*].metadata.name}"),
            r#"error executing jsonpath "{.items[*].metadata.name}": Error executing template: metadata is not found"#
        );
        assert_eq!(
            strict("{.items[*].metadata.name}").unwrap_err(),
            JsonPathError::MissingKey {
                template: "{.items[*].metadata.name}".into(),
                key: "metadata".into()
            }
        );
        assert!(missing("{.items[0]['nope']}").ends_with("nope is not found"));
        assert!(missing("{..nope}").ends_with("nope is not found"));
        assert!(missing("{range .items[*]}{.nope}{end}").ends_with("nope is not found"));
        assert!(missing("x{.name}").ends_with("name is not found"));
        assert_eq!(
            strict("{.items[5].name}").unwrap_err(),
            JsonPathError::IndexOutOfBounds {
                template: "{.items[5].name}".into(),
                index: 5,
                length: 2
            }
        );
        assert!(missing("{.items[5].name}").ends_with("array index out of bounds: index 5, length 2"));
        // Not errors: `reasons` of the second item is empty, no verdict is "x", `labels` of the
        // second item has no keys, a null prints as <nil>; and present keys print as before.
        assert_eq!(strict("{.items[1].reasons[*].code}").unwrap(), "");
        assert_eq!(strict(r#"{.items[?(@.verdict=="x")].name}"#).unwrap(), "");
        assert_eq!(strict("{.items[1].labels.*}").unwrap(), "");
        assert_eq!(strict("{.items[0].observedGeneration}").unwrap(), "<nil>");
        assert_eq!(strict("{.items[*].name}").unwrap(), "todo-api todo-db");
        // Some items have it: no error, as kubectl (the others print nothing).
        assert_eq!(strict("{.items[*].labels.tier}").unwrap(), "web");
        // Allowed (the default): nothing printed.
        assert_eq!(render("{.items[*].metadata.name}"), "");
    }

    #[test]
    fn range_repeats_its_body_per_value() {
        assert_eq!(
            render(r#"{range .items[*]}{.namespace}/{.name} {.verdict}{"\n"}{end}"#),
            "todo/todo-api fresh\ntodo/todo-db stale\n"
        );
        assert_eq!(
            render(r#"{range .items[*]}{.name}:{range .reasons[*]} {.code}{end};{end}"#),
            "todo-api: a b;todo-db:;"
        );
        assert_eq!(render("{range .gaps[*]}never{end}done"), "done");
    }

    #[test]
    fn filters_with_one_comparison_or_an_existence_test() {
        assert_eq!(render(r#"{.items[?(@.verdict=="stale")].name}"#), "todo-db");
        assert_eq!(render("{.items[?(@.verdict=='stale')].name}"), "todo-db");
        assert_eq!(render("{.items[?(@.port>6000)].name}"), "todo-api");
        assert_eq!(render("{.items[?(@.port != 8080)].name}"), "todo-db");
        assert_eq!(render("{.items[?(@.labels.tier)].name}"), "todo-api");
        assert_eq!(
            render(r#"{.items[?(@.labels.app\.kubernetes\.io/name=="todo")].name}"#),
            "todo-api"
        );
    }

    #[test]
    fn jsonpath_as_json_prints_one_array_per_action() {
        let t = Template::parse("{.items[*].name}{.schemaVersion}").unwrap();
        assert_eq!(
            t.render(&doc(), true).unwrap(),
            "[\n    \"todo-api\",\n    \"todo-db\"\n]\n[\n    1\n]\n"
        );
    }

    #[test]
    fn errors_name_the_template_and_what_is_unsupported() {
        for (template, needle) in [
            ("", "empty"),
            ("{.items[*].name", "unclosed action"),
            ("{range .items[*]}{.name}", "without {end}"),
            ("{end}", "without a {range"),
            ("{.items[?(@.name=~\"^todo\")]}", "(=~) are not supported"),
            ("{.items[*]['name.x', 'port']}", "union of nested paths"),
            ("{.items[x]}", "invalid array index"),
            ("{.items[0}", "unclosed action"),
            ("{items}", "a path starts with"),
            ("{.a .b}", "a space inside a path"),
            ("{\"a\"\"b\"}", "one action holds one string"),
            ("{\"\\q\"}", "unknown escape"),
            ("{.items[?(@.name==bare)]}", "neither a path"),
            ("{.items[?@.name]}", "written [?(...)]"),
            ("{.a.}", "needs a name"),
        ] {
            let err = Template::parse(template).unwrap_err().to_string();
            assert!(err.contains(&format!("{template:?}")), "{template}: {err}");
            assert!(err.contains(needle), "{template}: {err}");
        }
    }

    #[test]
    fn values_cannot_drive_the_terminal_but_template_text_is_kept() {
        let doc = json!({"image": "evil\u{1b}[2J", "multi": "a\nb"});
        let t = Template::parse("{.image}{\"\\n\"}{.multi}").unwrap();
        assert_eq!(t.render(&doc, false).unwrap(), "evil\\u{1b}[2J\na\\nb");
    }

    #[test]
    fn templates_never_panic_on_odd_input() {
        for template in [
            "{",
            "}",
            "{}",
            "{{}}",
            "{[}",
            "{]}",
            "{..}",
            "{...a}",
            "{.[}",
            "{\"}",
            "{'}",
            "{range}",
            "{range }",
            "{.a[?(}",
            "{.a[?()]}",
            "{.a[:::]}",
            "{.a[--1]}",
            "{.a['']}",
            "{ü}",
            "{.ü}",
            "{\\}",
            "{.a\\}",
            "{.a[99999999999999999999]}",
            "{.items[?(@.a==1e999)]}",
        ] {
            if let Ok(t) = Template::parse(template) {
                let _ = t.render(&doc(), false);
                let _ = t.render(&doc(), true);
            }
        }
    }
}
