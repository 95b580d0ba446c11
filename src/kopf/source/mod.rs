//! A Kopf operator's Python source, parsed once (Ruff's parser, `ruff_python_parser`) and read
//! by several small readers, each claiming only what the syntax tree proves:
//!
//! - [`settings`]: assignments to Kopf's `settings.*` (where they run, under which condition);
//! - [`conditions`]: the `os.environ` / `os.getenv` conditions, and how the container's env
//!   ([`mod@env`]) decides them;
//! - [`handlers`]: every handler the source registers (`@kopf.on.create(...)`, ...), with its
//!   resource, id, filters and options as written;
//! - [`edit`]: the edits a fix prints (`delete line N`, `replace line N with `pass``), chosen so
//!   that the file still parses.
//!
//! [`Module::parse`] is the one parse; a source it rejects (Python 2 code, a syntax error, a
//! truncated ConfigMap, machine-made depth) is a [`ParseError`] citing its line.

pub mod conditions;
pub mod edit;
pub mod env;
mod flow;
pub mod handlers;
mod names;
mod scope;
pub mod settings;

use ruff_python_ast::visitor::source_order::{SourceOrderVisitor, TraversalSignal};
use ruff_python_ast::{self as ast, AnyNodeRef, Stmt};
use ruff_python_parser::{Parsed, parse_module};
use ruff_text_size::{Ranged, TextRange, TextSize};
use serde::Serialize;

pub use env::{Env, EnvValue};
pub use flow::Condition;

/// The operator's source files: the keys ending in `.py` of the ConfigMaps in `configmaps`
/// (of the Deployment's namespace) that `deployment` mounts as volumes, with their text (`(key, text)`, in the ConfigMaps'
/// order).
pub fn mounted_sources(
    deployment: &k8s_openapi::api::apps::v1::Deployment,
    configmaps: &[k8s_openapi::api::core::v1::ConfigMap],
) -> Vec<(String, String)> {
    let mounted: std::collections::BTreeSet<&str> = deployment
        .spec
        .as_ref()
        .and_then(|s| s.template.spec.as_ref())
        .and_then(|s| s.volumes.as_ref())
        .into_iter()
        .flatten()
        .filter_map(|v| v.config_map.as_ref().map(|c| c.name.as_str()))
        .collect();
    configmaps
        .iter()
        .filter(|cm| {
            cm.metadata
                .namespace
                .as_deref()
                .is_none_or(|n| Some(n) == deployment.metadata.namespace.as_deref())
                && cm.metadata.name.as_deref().is_some_and(|n| mounted.contains(n))
        })
        .flat_map(|cm| cm.data.iter().flatten())
        .filter(|(k, _)| k.ends_with(".py"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// A place in the operator's source: the file (ConfigMap key) and its 1-based line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SourceLine {
    /// The file name (the ConfigMap key, e.g. `operator.py`).
    pub file: String,
    /// 1-based line number (of the statement's first line).
    pub line: usize,
    /// The statement's text, trimmed, without comments; a statement spanning several lines is
    /// joined on one line (`settings.posting.enabled = ( False )`).
    pub text: String,
}

impl std::fmt::Display for SourceLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.text)
    }
}

/// Syntax trees deeper than this (expressions in expressions, e.g. `a.b.b.b...`) are not read.
/// CPython 3.11 already fails to compile a 3,000-link attribute chain; the tree is dropped only
/// when shallower (dropping recurses once per level; 8,000 levels fit in a 2 MiB thread stack in
/// a debug build).
pub const MAX_NODE_DEPTH: usize = 3000;

/// Why a source cannot be read; `at` is where (a syntax error's line, or the last line with code
/// before it when the error is at the end of a cut file). Its text keeps comments.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// More than Ruff's u32 offsets reach: no operator's code.
    #[error("larger than 4 GiB")]
    TooLarge {
        /// Line 1, empty text.
        at: SourceLine,
    },
    /// The parser's first error, e.g. `Expected an expression`.
    #[error("{message}")]
    Syntax {
        /// The error's line.
        at: SourceLine,
        /// The parser's message.
        message: String,
    },
    /// Nested deeper than [`MAX_NODE_DEPTH`].
    #[error(
        "nested more than {} levels deep (CPython refuses such code too: \"RecursionError: maximum recursion depth exceeded during compilation\")",
        MAX_NODE_DEPTH
    )]
    TooDeep {
        /// The line of the first node that deep.
        at: SourceLine,
    },
}

impl ParseError {
    /// Where the source fails.
    pub fn at(&self) -> &SourceLine {
        match self {
            ParseError::TooLarge { at } | ParseError::Syntax { at, .. } | ParseError::TooDeep { at } => at,
        }
    }
}

/// One parsed Python file: its name, text, line index, comment ranges and syntax tree.
pub struct Module {
    text: Text,
    parsed: Parsed<ast::ModModule>,
}

impl std::fmt::Debug for Module {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Module")
            .field("file", &self.text.file)
            .field("lines", &self.text.line_starts.len())
            .finish_non_exhaustive()
    }
}

impl Module {
    /// Parses `source`, the file named `file` (a ConfigMap key, for evidence).
    /// Errors: [`ParseError`], with the line that fails.
    pub fn parse(file: &str, source: &str) -> Result<Module, ParseError> {
        // Ruff's offsets are u32: a larger "source" is no operator's code.
        if u32::try_from(source.len()).is_err() {
            return Err(ParseError::TooLarge {
                at: SourceLine {
                    file: file.to_string(),
                    line: 1,
                    text: String::new(),
                },
            });
        }
        let mut text = Text::new(file, source);
        let parsed = match parse_module(source) {
            Ok(parsed) => parsed,
            Err(error) => {
                return Err(ParseError::Syntax {
                    at: text.error_line(error.location),
                    message: error.error.to_string(),
                });
            }
        };
        if let Some(deep) = deeper_than(parsed.syntax(), MAX_NODE_DEPTH) {
            let at = text.first_line(deep);
            // Dropping a tree this deep recurses once per level and could exhaust the stack: it
            // is leaked instead (once per such file; CPython cannot compile such a file either).
            std::mem::forget(parsed);
            return Err(ParseError::TooDeep { at });
        }
        text.comments = parsed
            .tokens()
            .iter()
            .filter(|t| t.kind() == ast::token::TokenKind::Comment)
            .map(Ranged::range)
            .collect();
        Ok(Module { text, parsed })
    }

    /// The file name given to [`Module::parse`].
    pub fn file(&self) -> &str {
        &self.text.file
    }

    /// The module's statements.
    pub fn suite(&self) -> &[Stmt] {
        self.parsed.suite()
    }

    /// 1-based line of a byte offset.
    pub fn line(&self, offset: TextSize) -> usize {
        self.text.line(offset.to_usize())
    }

    /// The line on which `range` starts, its whole text trimmed, comments removed (an `if ...:`
    /// header, a `def` line).
    pub fn first_line(&self, range: TextRange) -> SourceLine {
        self.text.first_line(range)
    }

    /// A statement (or expression): its first line, and its text with comments and line
    /// continuations removed, its lines joined by single spaces.
    pub fn statement(&self, range: TextRange) -> SourceLine {
        self.text.statement(range)
    }

    /// The source text of `range`, as written.
    pub fn slice(&self, range: TextRange) -> &str {
        self.text.slice(range)
    }
}

/// The range of the first node nested deeper than `limit`, found without recursion.
fn deeper_than(module: &ast::ModModule, limit: usize) -> Option<TextRange> {
    /// Collects a node's direct children without descending into them.
    struct Children<'a>(Vec<AnyNodeRef<'a>>);
    impl<'a> SourceOrderVisitor<'a> for Children<'a> {
        fn enter_node(&mut self, node: AnyNodeRef<'a>) -> TraversalSignal {
            self.0.push(node);
            TraversalSignal::Skip
        }
    }
    let mut stack = vec![(AnyNodeRef::from(module), 0usize)];
    let mut children = Children(Vec::new());
    while let Some((node, depth)) = stack.pop() {
        if depth > limit {
            return Some(node.range());
        }
        node.visit_source_order(&mut children);
        stack.extend(children.0.drain(..).map(|c| (c, depth + 1)));
    }
    None
}

/// The source with its line starts and comment ranges, to cite statements as [`SourceLine`]s.
struct Text {
    file: String,
    source: String,
    line_starts: Vec<usize>,
    /// Empty until the source parses: a parse error's line keeps its comments.
    comments: Vec<TextRange>,
}

impl Text {
    fn new(file: &str, source: &str) -> Self {
        let line_starts = std::iter::once(0)
            .chain(memchr::memchr_iter(b'\n', source.as_bytes()).map(|i| i + 1))
            .collect();
        Text {
            file: file.to_string(),
            source: source.to_string(),
            line_starts,
            comments: Vec::new(),
        }
    }

    fn line(&self, offset: usize) -> usize {
        self.line_starts.partition_point(|&s| s <= offset)
    }

    fn first_line(&self, range: TextRange) -> SourceLine {
        let start = (range.start().to_usize()).min(self.source.len());
        let line = self.line(start);
        let from = self.line_starts[line - 1];
        let to = self.line_starts.get(line).copied().unwrap_or(self.source.len());
        SourceLine {
            file: self.file.clone(),
            line,
            text: strip_comment_text(&self.source[from..to], from, &self.comments)
                .trim()
                .to_string(),
        }
    }

    /// The line of a syntax error; an error at a blank line (the end of a cut file) is cited at
    /// the last line with code before it.
    fn error_line(&self, range: TextRange) -> SourceLine {
        let mut at = self.first_line(range);
        while at.text.is_empty() && at.line > 1 {
            let previous = self.line_starts[at.line - 2];
            at = self.first_line(TextRange::empty(TextSize::new(
                u32::try_from(previous).unwrap_or(u32::MAX),
            )));
        }
        at
    }

    fn statement(&self, range: TextRange) -> SourceLine {
        let (from, to) = (range.start().to_usize(), range.end().to_usize());
        let code = strip_comment_text(&self.source[from..to], from, &self.comments);
        let text = code
            .lines()
            .map(|l| l.trim().trim_end_matches('\\').trim())
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        SourceLine {
            file: self.file.clone(),
            line: self.line(from),
            text,
        }
    }

    fn slice(&self, range: TextRange) -> &str {
        &self.source[range.start().to_usize()..range.end().to_usize()]
    }
}

/// `code` (starting at byte `offset` of the source) without the comments that lie in it.
fn strip_comment_text(code: &str, offset: usize, comments: &[TextRange]) -> String {
    let end = offset + code.len();
    let mut out = String::with_capacity(code.len());
    let mut at = offset;
    for c in comments {
        let (cs, ce) = (c.start().to_usize(), c.end().to_usize());
        if ce <= at || cs >= end {
            continue;
        }
        out.push_str(&code[at - offset..cs.max(at) - offset]);
        at = ce.min(end);
    }
    out.push_str(&code[at - offset..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_are_cited_without_comments_on_one_line() {
        let m = Module::parse("op.py", "import kopf\nx = (  # one\n    1\n)\n").unwrap();
        let stmt = &m.suite()[1];
        let at = m.statement(stmt.range());
        assert_eq!(at.to_string(), "op.py:2: x = ( 1 )");
        assert_eq!(m.first_line(stmt.range()).text, "x = (");
        assert_eq!(m.slice(stmt.range()), "x = (  # one\n    1\n)");
        assert_eq!(m.line(stmt.range().end()), 4);
        assert_eq!(m.file(), "op.py");
    }

    #[test]
    fn what_does_not_parse_is_a_typed_error_at_its_line() {
        let e = Module::parse("op.py", "import kopf\n\nprint 'x'  # py2\n").unwrap_err();
        assert!(matches!(e, ParseError::Syntax { .. }), "{e:?}");
        // A parse error's line keeps its comment (no comment ranges before the parse).
        assert_eq!(e.at().to_string(), "op.py:3: print 'x'  # py2");
        assert!(!e.to_string().is_empty());
        // A cut file: cited at the last line with code.
        let e = Module::parse("op.py", "def f(\n\n\n").unwrap_err();
        assert_eq!(e.at().line, 1);
        let e = Module::parse("op.py", &format!("x = a{}\n", ".b".repeat(5000))).unwrap_err();
        assert!(matches!(e, ParseError::TooDeep { .. }));
        assert!(e.to_string().starts_with("nested more than 3000 levels deep"), "{e}");
    }
}
