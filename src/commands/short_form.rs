//! The short human form of an answer (issue 20: one screen mid-incident), pure: what
//! `explain-events NAME` and `status NAME` print unless `--verbose` asks for the long form.
//! The evidence itself is unchanged (`-o json|yaml` keep every line in full); only its human
//! text is cut:
//!
//! - a raw log line quoted in an evidence line ([`shorten`]) keeps its message: the record's
//!   own prefix (kubelet timestamp, Kopf's `[asctime] logger [LEVEL] [ns/name]`, our
//!   `TIME  LEVEL [ns/name]`) goes, since the citation before it (`POD/CONTAINER line N, TIME`)
//!   already says where and when; without a citation the record's time stays;
//! - an API error ([`api_error`]) is reduced to `CODE Reason: message`, whether the Kopf log
//!   quotes it as a Python repr (`APIForbiddenError('...', {'kind': 'Status', ...})`), as the
//!   Status JSON body, or a gap quotes kube-rs's `Debug` (`Status { code: 400, ... }`);
//! - N events of one type, reason and meaning ([`aggregate`]) become one line with the count
//!   and the first and last time, as kubectl's `x32 over 3m`;
//! - a headline ([`fit`]) longer than its budget loses asides and trailing clauses, never a
//!   word: the first clause (the cause) and each `also:` clause (the finding behind it) stay.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;

/// The most characters of the headline line (`NS/NAME: ...`).
pub const HEADLINE_LIMIT: usize = 200;

/// Terminal width the short form is laid out for (rows are counted at it).
pub const WIDTH: usize = 120;

/// The most evidence lines the first finding shows in the short form; the rest are counted.
pub const EVIDENCE_LINES: usize = 4;

/// The most rows a later finding's fix takes in the short form; a longer one is named by its
/// first line, and `--verbose` prints it.
pub const LATER_FIX_ROWS: usize = 5;

/// The most evidence lines each later finding shows in the short form.
pub const LATER_EVIDENCE_LINES: usize = 2;

/// The most characters of one evidence line in the short form: two rows.
pub const LINE_LIMIT: usize = 2 * WIDTH - 8;

/// The line the short form ends with when it left something out: how to see everything.
pub const MORE_HINT: &str = "Short form: the same command with --verbose prints every line in full (-o json as data).";

/// A raw Kopf record inside a line: an optional kubelet timestamp, `[asctime] logger [LEVEL]`,
/// an optional `[ns/name]`, then the message.
static KOPF_RECORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?:(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z) )?\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),\d+\] [\w.]+ *\[ *[A-Z]+ *\] (?:\[[^\]\s]+/[^\]\s]+\] )?",
    )
    .expect("valid regex")
});

/// A raw record of ours inside a line: an optional kubelet timestamp, `TIME  LEVEL`, an
/// optional `[ns/name]`, then the message.
static OUR_RECORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?:(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z) )?(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z) {1,2}(?:TRACE|DEBUG|INFO|WARN|ERROR) (?:\[[^\]\s]+/[^\]\s]+\] )?",
    )
    .expect("valid regex")
});

/// Any RFC 3339 time, to tell whether a line still says when.
static A_TIME: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\d{4}-\d\d-\d\dT\d\d:\d\d").expect("valid regex"));

/// Kopf's repr of an API error: `APIForbiddenError('message', {...})` (or `"message"`).
static PY_API_ERROR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"\bAPI\w*Error\((?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"), \{"#).expect("valid regex")
});

/// kube-rs's `Debug` of an API error: `ApiError: MESSAGE: Reason (Status { ... })`.
static RUST_API_ERROR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"ApiError: (.*?): \w+ \(Status \{").expect("valid regex"));

/// The Status JSON body of an API error.
static JSON_STATUS: LazyLock<Regex> = LazyLock::new(|| Regex::new(r#"\{"kind": ?"Status","#).expect("valid regex"));

/// One field of a Status in any of its three spellings (`'code': 403`, `"code":403`,
/// `code: 403`).
fn status_field(text: &str, field: &str) -> Option<String> {
    let pattern = format!(r#"['"]?\b{field}['"]?: ?(?:Some\()?(?:'([^']*)'|"((?:[^"\\]|\\.)*)"|(\d+))"#);
    let re = Regex::new(&pattern).ok()?;
    let c = re.captures(text)?;
    c.get(1).or(c.get(2)).or(c.get(3)).map(|m| m.as_str().to_string())
}

/// Where the brace opened at `open` closes (`{`/`(` nesting, quotes skipped), as the index
/// after it.
fn closing(text: &str, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in text[open..].char_indices() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '\'' | '"' => quote = Some(c),
            '{' | '(' => depth += 1,
            '}' | ')' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(open + i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// An API error quoted in `text`, reduced: the byte range it takes and `CODE Reason: message`.
/// `None` when `text` quotes none this knows (then nothing is cut).
pub fn api_error(text: &str) -> Option<(std::ops::Range<usize>, String)> {
    let reduced = |code: Option<String>, reason: Option<String>, message: String| {
        let head = [code, reason].into_iter().flatten().collect::<Vec<_>>().join(" ");
        if head.is_empty() {
            message
        } else {
            format!("{head}: {message}")
        }
    };
    if let Some(c) = PY_API_ERROR.captures(text) {
        let whole = c.get(0)?;
        let paren = whole.start() + whole.as_str().find('(')?;
        let end = closing(text, paren)?;
        let message = c.get(1).or(c.get(2))?.as_str().replace("\\'", "'");
        let body = &text[whole.end() - 1..end];
        return Some((
            whole.start()..end,
            reduced(status_field(body, "code"), status_field(body, "reason"), message),
        ));
    }
    if let Some(c) = RUST_API_ERROR.captures(text) {
        let whole = c.get(0)?;
        let paren = whole.end() - "(Status {".len();
        let end = closing(text, paren)?;
        let body = &text[paren..end];
        let message = status_field(body, "message")
            .map(|m| m.replace("\\\"", "\""))
            .unwrap_or_else(|| c[1].to_string());
        return Some((
            whole.start()..end,
            reduced(status_field(body, "code"), status_field(body, "reason"), message),
        ));
    }
    if let Some(m) = JSON_STATUS.find(text) {
        let end = closing(text, m.start())?;
        let body = &text[m.start()..end];
        let message = status_field(body, "message")?.replace("\\\"", "\"");
        return Some((
            m.start()..end,
            reduced(status_field(body, "code"), status_field(body, "reason"), message),
        ));
    }
    None
}

/// Every API error in `text` reduced ([`api_error`]).
pub fn reduce_api_errors(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some((range, short)) = api_error(rest) {
        out.push_str(&rest[..range.start]);
        out.push_str(&short);
        rest = &rest[range.end..];
    }
    out.push_str(rest);
    out
}

/// One evidence line in its short form: a quoted raw log record keeps its message (and its
/// time when nothing else on the line says when), API errors are reduced. A line quoting
/// neither is returned as it is.
pub fn shorten(line: &str) -> String {
    let line = reduce_api_errors(line);
    for re in [&*KOPF_RECORD, &*OUR_RECORD] {
        if let Some(c) = re.captures(&line) {
            let whole = c.get(0).expect("group 0");
            let (before, after) = (&line[..whole.start()], &line[whole.end()..]);
            let mut out = before.to_string();
            if !A_TIME.is_match(before) && !A_TIME.is_match(after) {
                let time = c.get(1).or(c.get(2)).map_or("", |m| m.as_str());
                out.push_str(&format!("at {time}: "));
            }
            out.push_str(after);
            return out;
        }
    }
    line
}

/// `event NS/NAME type T reason R at TIME: MEANING`, the way the findings cite an event.
static EVENT_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(.*?)event ([^/\s]+)/\S+ type (\S+) reason (\S+) at (\S+): (.*)$").expect("valid regex")
});

/// Evidence lines with events of one namespace, type, reason and meaning aggregated, kubectl's
/// way: the first stands for all, as `N events type T reason R in NS, FIRST .. LAST: MEANING`
/// (a single event is left as it is); other lines keep their order.
pub fn aggregate(lines: &[String]) -> Vec<String> {
    type Key = (String, String, String, String, String);
    let mut groups: BTreeMap<Key, Vec<String>> = BTreeMap::new();
    let key = |line: &str| -> Option<(Key, String)> {
        let c = EVENT_LINE.captures(line)?;
        let k = (c[1].into(), c[2].into(), c[3].into(), c[4].into(), c[6].into());
        Some((k, c[5].to_string()))
    };
    for line in lines {
        if let Some((k, time)) = key(line) {
            groups.entry(k).or_default().push(time);
        }
    }
    let mut out = Vec::new();
    for line in lines {
        let Some((k, _)) = key(line) else {
            out.push(line.clone());
            continue;
        };
        let Some(mut times) = groups.remove(&k) else {
            continue;
        };
        if times.len() == 1 {
            out.push(line.clone());
            continue;
        }
        times.sort();
        let (prefix, ns, type_, reason, meaning) = k;
        out.push(format!(
            "{prefix}{} events type {type_} reason {reason} in {ns}, {} .. {}: {meaning}",
            times.len(),
            times[0],
            times[times.len() - 1]
        ));
    }
    out
}

/// The parts of `text` split at `sep` outside parentheses, brackets and quotes.
fn split_top(text: &str, sep: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let (mut depth, mut quote, mut from) = (0i32, false, 0usize);
    for (i, c) in text.char_indices() {
        if i < from {
            continue;
        }
        match c {
            '"' => quote = !quote,
            '(' | '[' if !quote => depth += 1,
            ')' | ']' if !quote => depth -= 1,
            _ => {}
        }
        if depth == 0 && !quote && text[i..].starts_with(sep) {
            parts.push(text[from..i].to_string());
            from = i + sep.len();
        }
    }
    parts.push(text[from..].to_string());
    parts
}

/// Gaps of one kind on one line: `X: not in the bundle (FILE)` lines, three or more, as
/// `not in the bundle: X, Y, Z`; other lines as they are.
pub fn aggregate_gaps(gaps: &[String]) -> Vec<String> {
    const MISSING: &str = ": not in the bundle";
    let missing: Vec<&String> = gaps.iter().filter(|g| g.contains(MISSING)).collect();
    if missing.len() < 3 {
        return gaps.to_vec();
    }
    let names: Vec<&str> = missing.iter().filter_map(|g| g.split(MISSING).next()).collect();
    let mut out: Vec<String> = gaps.iter().filter(|g| !g.contains(MISSING)).cloned().collect();
    out.insert(0, format!("not in the bundle: {}", names.join(", ")));
    out
}

/// `text` without its parenthesised asides ` (...)` and bracketed codes ` [...]`.
pub fn without_asides(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(" (").into_iter().chain(rest.find(" [")).min() {
        let Some(end) = closing_any(rest, at + 1) else {
            break;
        };
        out.push_str(&rest[..at]);
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// Where the `(` or `[` at `open` closes, as the index after it.
fn closing_any(text: &str, open: usize) -> Option<usize> {
    let (o, c) = match text.as_bytes().get(open)? {
        b'(' => (b'(', b')'),
        b'[' => (b'[', b']'),
        _ => return None,
    };
    let mut depth = 0usize;
    for (i, b) in text.bytes().enumerate().skip(open) {
        if b == o {
            depth += 1;
        } else if b == c {
            depth -= 1;
            if depth == 0 {
                return Some(i + 1);
            }
        }
    }
    None
}

/// `sentence` cut to at most `limit` characters at a clause boundary (`; `, then `: `, then `, `
/// outside parentheses), never inside a word: as many whole clauses as fit, then as much of the
/// next one as its own finer clauses allow. When not even the first clause fits, it is cut at its
/// last word that fits, marked `…`.
fn clauses_within(sentence: &str, limit: usize) -> String {
    clauses_at(sentence, limit, 0).unwrap_or_else(|| words_within(sentence, limit))
}

const SEPARATORS: [&str; 3] = ["; ", ": ", ", "];

/// [`clauses_within`] with the separators from `level` on; `None` when no clause fits.
fn clauses_at(sentence: &str, limit: usize, level: usize) -> Option<String> {
    if sentence.chars().count() <= limit {
        return Some(sentence.to_string());
    }
    let sep = *SEPARATORS.get(level)?;
    let parts = split_top(sentence, sep);
    if parts.len() == 1 {
        return clauses_at(sentence, limit, level + 1);
    }
    let mut kept = clauses_at(&parts[0], limit, level + 1)?;
    if kept.len() < parts[0].len() {
        return Some(kept);
    }
    for p in &parts[1..] {
        let room = limit.saturating_sub(kept.chars().count() + sep.len());
        match clauses_at(p, room, level + 1) {
            Some(piece) if piece.len() == p.len() => kept = format!("{kept}{sep}{piece}"),
            Some(piece) if piece.chars().count() >= 12 => return Some(format!("{kept}{sep}{piece}")),
            _ => return Some(kept),
        }
    }
    Some(kept)
}

/// `text` cut after its last word within `limit` characters, marked `…`.
fn words_within(text: &str, limit: usize) -> String {
    let mut kept = String::new();
    for word in text.split(' ') {
        if kept.chars().count() + word.chars().count() + 2 > limit {
            break;
        }
        if !kept.is_empty() {
            kept.push(' ');
        }
        kept.push_str(word);
    }
    kept.push_str(" …");
    kept
}

/// The headline `prefix` + `summary` within `limit` characters, composed as "cause; why": when
/// it is longer, asides go first, then the clauses that are neither the first (what is wrong)
/// nor an `also:` (the finding behind it); then each part is cut at its own clauses. The long
/// summary stays whole in `-o json` and `--verbose`.
pub fn fit(prefix: &str, summary: &str, limit: usize) -> String {
    let whole = format!("{prefix}{summary}");
    if whole.chars().count() <= limit {
        return whole;
    }
    let budget = limit.saturating_sub(prefix.chars().count());
    let bare = without_asides(summary);
    let parts = split_top(&bare, "; ");
    let essential = |i: usize, p: &str| i == 0 || p.starts_with("also: ") || p.starts_with("the operator is ambiguous");
    let mut chosen: Vec<bool> = parts.iter().enumerate().map(|(i, p)| essential(i, p)).collect();
    // Others, in order, while they fit.
    for i in 1..parts.len() {
        if chosen[i] {
            continue;
        }
        let length: usize = parts
            .iter()
            .zip(&chosen)
            .filter(|(_, c)| **c)
            .map(|(p, _)| p.chars().count() + 2)
            .sum();
        if length + parts[i].chars().count() <= budget {
            chosen[i] = true;
        }
    }
    let kept: Vec<String> = parts
        .iter()
        .zip(&chosen)
        .filter(|(_, c)| **c)
        .map(|(p, _)| p.clone())
        .collect();
    let joined = kept.join("; ");
    if joined.chars().count() <= budget {
        return format!("{prefix}{joined}");
    }
    // Each kept part at its first clause (the first part keeps its family, `The handler has not
    // accepted the current spec: `, and an `also:` its label), then each grown by its next
    // clauses, in order, while the whole fits.
    let (labels, bodies): (Vec<String>, Vec<String>) = kept
        .iter()
        .enumerate()
        .map(|(i, p)| match p.split_once(": ") {
            Some((label, body)) if i == 0 || label == "also" => (format!("{label}: "), body.to_string()),
            _ => (String::new(), p.clone()),
        })
        .unzip();
    let mut out: Vec<String> = bodies.iter().map(|b| first_clause(b)).collect();
    let length = |out: &[String]| -> usize {
        out.iter()
            .zip(&labels)
            .map(|(b, l)| b.chars().count() + l.chars().count())
            .sum::<usize>()
            + 2 * (out.len() - 1)
    };
    for i in 0..out.len() {
        let left = budget.saturating_sub(length(&out) - out[i].chars().count());
        let grown = clauses_within(&bodies[i], left);
        if !grown.ends_with('…') && grown.chars().count() >= out[i].chars().count() {
            out[i] = grown;
        }
    }
    // Still too long (first clauses longer than the budget): the last part is cut at its words
    // while enough of it is left to name its finding, else it goes.
    while out.len() > 1 && length(&out) > budget {
        let last = out.len() - 1;
        let room = budget.saturating_sub(length(&out) - out[last].chars().count());
        if room >= 40 && !out[last].ends_with('…') {
            out[last] = words_within(&out[last], room);
        } else {
            out.pop();
        }
    }
    let mut line: String = out
        .iter()
        .zip(&labels)
        .map(|(b, l)| format!("{l}{b}"))
        .collect::<Vec<_>>()
        .join("; ");
    if line.chars().count() > budget {
        line = clauses_within(&line, budget);
    }
    format!("{prefix}{line}")
}

/// The first clause of `text`: before its first `: `, else `; `, else `, ` outside parentheses.
fn first_clause(text: &str) -> String {
    for sep in [": ", "; ", ", "] {
        let parts = split_top(text, sep);
        if parts.len() > 1 {
            return parts[0].clone();
        }
    }
    text.to_string()
}

/// One line within `limit` characters: as it is when it fits, else without its asides, else cut
/// at its clauses (never inside a word).
pub fn fit_line(text: &str, limit: usize) -> String {
    if text.chars().count() <= limit {
        return text.to_string();
    }
    let bare = without_asides(text);
    if bare.chars().count() <= limit {
        return bare;
    }
    clauses_within(&bare, limit)
}

/// What one finding shows of its evidence in the short form.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Shown {
    /// The lines to print.
    pub lines: Vec<String>,
    /// Whether anything was cut or left out.
    pub cut: bool,
}

/// `POD/CONTAINER line N`: where a log line is cited from.
static CITATION: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"[\w.-]+/[\w.-]+ line \d+").expect("valid regex"));

/// The evidence lines and log lines one answer has printed, so that none is printed twice.
#[derive(Debug)]
pub struct Seen {
    lines: std::collections::HashSet<String>,
    citations: BTreeMap<String, String>,
    later: usize,
}

/// For `explain-events`: [`EVIDENCE_LINES`] for the first finding, [`LATER_EVIDENCE_LINES`]
/// for each later one.
impl Default for Seen {
    fn default() -> Self {
        Seen::with_later(LATER_EVIDENCE_LINES)
    }
}

impl Seen {
    /// At most `later` lines for each block after the first (`status NAME`'s reasons are few and
    /// short: [`EVIDENCE_LINES`] each).
    pub fn with_later(later: usize) -> Self {
        Seen {
            lines: Default::default(),
            citations: Default::default(),
            later,
        }
    }

    /// The short form of one finding's evidence (`id`, `title`): aggregated ([`aggregate`]),
    /// each line shortened ([`shorten`]); a line that restates the title, or that this answer
    /// printed already, left out; a log line cited before replaced by a pointer to the finding
    /// that showed it; each within [`LINE_LIMIT`] ([`fit_line`]); at most [`EVIDENCE_LINES`] for
    /// the first finding, [`LATER_EVIDENCE_LINES`] for the others, the rest counted.
    pub fn evidence(&mut self, id: &str, title: &str, evidence: &[String]) -> Shown {
        let most = if self.lines.is_empty() {
            EVIDENCE_LINES
        } else {
            self.later
        };
        let mut shown = Shown::default();
        let restated = without_asides(title);
        let mut left = 0usize;
        for line in aggregate(evidence) {
            let short = shorten(&line);
            shown.cut |= short != line || evidence.len() != aggregate(evidence).len();
            if without_asides(&short) == restated || !self.lines.insert(short.clone()) {
                shown.cut = true;
                continue;
            }
            let short = match CITATION.find(&short) {
                Some(c) => match self.citations.get(c.as_str()) {
                    Some(other) => {
                        shown.cut = true;
                        format!("{}the log line shown under {other}", &short[..c.start()])
                    }
                    None => {
                        self.citations.insert(c.as_str().to_string(), id.to_string());
                        short
                    }
                },
                None => short,
            };
            if shown.lines.len() < most {
                let fitted = fit_line(&short, LINE_LIMIT);
                shown.cut |= fitted != short;
                shown.lines.push(fitted);
            } else {
                left += 1;
            }
        }
        if left > 0 {
            shown.cut = true;
            shown.lines.push(format!("… {left} more (--verbose)"));
        }
        shown
    }
}

/// The `Operator:` line in the short form: a list of operators found elsewhere (`found: A
/// watches X; B watches Y; ...`) longer than two rows is counted instead.
pub fn operator_line(line: &str) -> String {
    match line.split_once("; found: ") {
        Some((head, found)) if line.chars().count() > 2 * WIDTH => {
            let n = split_top(found, "; ").len();
            format!("{head}; found: {n} operators, each watching other namespaces")
        }
        _ => line.to_string(),
    }
}

/// A fix's YAML with its block lists of scalars written as flow lists (`verbs:` then `- get`,
/// `- update` on lines of their own becomes `verbs: ["get", "update"]`), the same YAML in fewer
/// rows; lines that are not such a list are left as they are.
pub fn compact_yaml_lists(text: &str) -> String {
    static KEY: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^(\s*(?:- )?)([A-Za-z][\w.-]*):$").expect("valid regex"));
    static ITEM: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r#"^(\s*)- ([\w./*-]+|"[^"]*")$"#).expect("valid regex"));
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if let Some(k) = KEY.captures(lines[i]) {
            let column = k[1].chars().count();
            let mut items = Vec::new();
            let mut j = i + 1;
            while let Some(c) = lines.get(j).and_then(|l| ITEM.captures(l)) {
                if c[1].chars().count() != column {
                    break;
                }
                let item = c[2].trim_matches('"').to_string();
                items.push(serde_json::Value::String(item).to_string());
                j += 1;
            }
            if !items.is_empty() {
                out.push(format!("{}{}: [{}]", &k[1], &k[2], items.join(", ")));
                i = j;
                continue;
            }
        }
        out.push(lines[i].to_string());
        i += 1;
    }
    let mut joined = out.join("\n");
    if text.ends_with('\n') {
        joined.push('\n');
    }
    joined
}

/// How many terminal rows `text` takes at `width` columns (a line of 0..=width characters is
/// one row).
pub fn rows(text: &str, width: usize) -> usize {
    text.lines().map(|l| l.chars().count().div_ceil(width).max(1)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kopf_record_keeps_its_message_and_the_citation() {
        let line = "last failure: catalog-operator-5f988dc66c-mmcvn/operator line 20, 2026-11-29T17:14:08.047Z (operator's local time): [2026-11-29 17:14:08,047] kopf.objects         [ERROR   ] [store/basket-api] Handler 'accept' failed temporarily: registry unreachable";
        assert_eq!(
            shorten(line),
            "last failure: catalog-operator-5f988dc66c-mmcvn/operator line 20, 2026-11-29T17:14:08.047Z (operator's local time): Handler 'accept' failed temporarily: registry unreachable"
        );
        // No citation: the record's own time stays.
        let line = "last retry (logs or the object's Kopf events): 2026-12-01T09:30:16.766366831Z [2026-12-01 09:30:16,766] kopf.objects         [ERROR   ] [kms-t11-retry/retry-api] Handler 'accept' failed temporarily: registry unreachable";
        assert_eq!(
            shorten(line),
            "last retry (logs or the object's Kopf events): at 2026-12-01T09:30:16.766366831Z: Handler 'accept' failed temporarily: registry unreachable"
        );
        // Not a record: as it is.
        assert_eq!(shorten("metadata.generation=2"), "metadata.generation=2");
    }

    #[test]
    fn our_record_keeps_its_message() {
        let line = "log (its last election line): microservice-operator-5cdb4767fd-tpjhp/operator line 10, 2026-11-29T20:28:42.548Z (operator's clock): 2026-11-29T20:28:42.548Z  WARN Lost the lease: handling stops lease=ops/microservice-operator term=1";
        assert_eq!(
            shorten(line),
            "log (its last election line): microservice-operator-5cdb4767fd-tpjhp/operator line 10, 2026-11-29T20:28:42.548Z (operator's clock): Lost the lease: handling stops lease=ops/microservice-operator term=1"
        );
    }

    #[test]
    fn api_errors_are_reduced_to_code_reason_and_message() {
        let kopf = r#"Throttling for 1 seconds due to an unexpected error: APIForbiddenError('microservices.platform.example.io "pay-api" is forbidden: User "system:serviceaccount:p:kopf-operator" cannot patch resource "microservices"', {'kind': 'Status', 'apiVersion': 'v1', 'metadata': {}, 'status': 'Failure', 'message': 'microservices.platform.example.io "pay-api" is forbidden', 'reason': 'Forbidden', 'details': {'name': 'pay-api', 'group': 'platform.example.io', 'kind': 'microservices'}, 'code': 403})"#;
        assert_eq!(
            reduce_api_errors(kopf),
            r#"Throttling for 1 seconds due to an unexpected error: 403 Forbidden: microservices.platform.example.io "pay-api" is forbidden: User "system:serviceaccount:p:kopf-operator" cannot patch resource "microservices""#
        );
        let rust = r#"logs of ns/p container operator: ApiError: container "operator" in pod "p" is waiting to start: trying and failing to pull image: BadRequest (Status { status: Some(Failure), code: 400, message: "container \"operator\" in pod \"p\" is waiting to start: trying and failing to pull image", metadata: Some(ListMeta { continue_: None, remaining_item_count: None, resource_version: None, self_link: None }), reason: "BadRequest", details: None }))"#;
        assert_eq!(
            reduce_api_errors(rust),
            r#"logs of ns/p container operator: 400 BadRequest: container "operator" in pod "p" is waiting to start: trying and failing to pull image)"#
        );
        let json = r#"POST failed: {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"events is forbidden: User \"x\" cannot create","reason":"Forbidden","details":{"kind":"events"},"code":403} then"#;
        assert_eq!(
            reduce_api_errors(json),
            r#"POST failed: 403 Forbidden: events is forbidden: User "x" cannot create then"#
        );
        assert_eq!(reduce_api_errors("no error here (403)"), "no error here (403)");
    }

    #[test]
    fn events_of_one_kind_become_one_line_with_count_and_times() {
        let e = |name: &str, t: &str| {
            format!("event ns/{name} type Error reason Logging at {t}: type is neither Normal nor Warning")
        };
        let lines = vec![
            e("a", "2026-12-01T09:26:13Z"),
            "other".to_string(),
            e("b", "2026-12-01T09:24:21Z"),
            e("c", "2026-12-01T09:30:16Z"),
            "event ns/d type Normal reason Logging at 2026-12-01T09:00:00Z: x".to_string(),
        ];
        assert_eq!(
            aggregate(&lines),
            [
                "3 events type Error reason Logging in ns, 2026-12-01T09:24:21Z .. 2026-12-01T09:30:16Z: type is neither Normal nor Warning",
                "other",
                "event ns/d type Normal reason Logging at 2026-12-01T09:00:00Z: x",
            ]
        );
    }

    #[test]
    fn a_long_headline_keeps_its_cause_and_the_finding_behind_it_whole_words() {
        let summary = "The handler has not accepted the current spec: the operator logged nothing after the spec change at 2026-11-29T17:12:27Z: its logs end at 2026-11-29T17:12:16.685Z (10s before it), and the change was not handled (status: stale [nothing-logged-since-change]); also: the operator store/deployment/catalog-operator has no running Pod (container operator of Pod catalog-operator-6d4f9f788f-4759c is terminated, last exit code 0 (Completed), 0 restarts): no handler runs and nothing is posted";
        let h = fit("store/catalog-api: ", summary, HEADLINE_LIMIT);
        assert!(h.chars().count() <= HEADLINE_LIMIT, "{} {h}", h.len());
        assert!(h.starts_with("store/catalog-api: The handler has not accepted the current spec: the operator logged nothing after the spec change"), "{h}");
        // The cause behind it stays, cut after a whole word when its first clause is too long.
        assert!(
            h.ends_with("; also: the operator store/deployment/catalog-operator has …"),
            "{h}"
        );
        // A short one is left whole.
        assert_eq!(
            fit("a/b: ", "Nothing is hidden", HEADLINE_LIMIT),
            "a/b: Nothing is hidden"
        );
    }

    #[test]
    fn block_lists_of_a_fix_become_flow_lists() {
        let fix = "grant it:\n- apiGroups:\n  - coordination.k8s.io\n  resourceNames:\n  - microservice-operator\n  resources:\n  - leases\n  verbs:\n  - get\n  - update\nthen: kubectl apply -f -";
        assert_eq!(
            compact_yaml_lists(fix),
            "grant it:\n- apiGroups: [\"coordination.k8s.io\"]\n  resourceNames: [\"microservice-operator\"]\n  resources: [\"leases\"]\n  verbs: [\"get\", \"update\"]\nthen: kubectl apply -f -"
        );
        // A key whose value is a map is not a list of scalars.
        assert_eq!(
            compact_yaml_lists("rules:\n- apiGroups: [x]"),
            "rules:\n- apiGroups: [x]"
        );
    }

    #[test]
    fn clauses_split_at_char_boundaries() {
        assert_eq!(
            fit_line(
                "the operator may not patch microservices — by reading Roles, and bindings only",
                60
            ),
            "the operator may not patch microservices — by reading Roles"
        );
        assert_eq!(
            aggregate_gaps(&[
                "Leases: not in the bundle (operator/leases.json)".into(),
                "operator logs: failed".into(),
                "Roles: not in the bundle (rbac/roles.json)".into(),
                "RoleBindings: not in the bundle (rbac/rolebindings.json)".into(),
            ]),
            [
                "not in the bundle: Leases, Roles, RoleBindings",
                "operator logs: failed"
            ]
        );
    }

    #[test]
    fn rows_count_wrapped_lines() {
        assert_eq!(rows("a\n\nb", 120), 3);
        assert_eq!(rows(&"x".repeat(121), 120), 2);
        assert_eq!(rows(&"x".repeat(120), 120), 1);
    }
}
