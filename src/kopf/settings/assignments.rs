//! Assignments to Kopf's posting settings, found on the syntax tree of an operator's Python
//! source (Ruff's parser, `ruff_python_parser`), each with whether it runs unconditionally at
//! the top level of an `@kopf.on.startup` handler.
//!
//! Kopf facts used here (nolar/kopf 1.44.6, the same since 1.0):
//! - a startup handler is registered by calling `kopf.on.startup(...)` and applying the result
//!   to the function (`kopf/on.py` `startup()`: keyword-only arguments, returns the decorator;
//!   `registry=` puts the handler into that registry instead of the default one);
//! - Kopf calls handlers with keyword arguments only (`kopf/_core/actions/invocation.py`
//!   `invoke()`: `fn(**kwargs)`), and an activity handler's keywords include `settings`, the
//!   operator's `OperatorSettings` (`kopf/_core/intents/causes.py` `ActivityCause`). Only a
//!   parameter named `settings` (or `kwargs['settings']` through `**kwargs`) receives them;
//! - `settings.posting` is a `PostingSettings` with `enabled`, `level`, `loggers`
//!   (`kopf/_cogs/configs/configuration.py`).

use std::collections::HashMap;

use ruff_python_ast::visitor::source_order::{SourceOrderVisitor, TraversalSignal};
use ruff_python_ast::{self as ast, AnyNodeRef, Expr, Stmt};
use ruff_python_parser::parse_module;
use ruff_text_size::{Ranged, TextRange};

use super::{Env, EnvDecision, SourceLine};

/// Which of `settings.posting.*` an assignment sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Setting {
    Enabled,
    Level,
    Loggers,
}

impl Setting {
    pub(super) fn name(self) -> &'static str {
        match self {
            Setting::Enabled => "enabled",
            Setting::Level => "level",
            Setting::Loggers => "loggers",
        }
    }
}

/// The assigned value, as far as the source alone tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Value {
    /// `True`/`False`, or a constant whose truth Python decides (`0`, `1`, `None`).
    Bool(bool),
    /// An integer: a literal or a `logging` level constant (`logging.CRITICAL` is 50).
    Int(i64),
    /// Anything else: the expression's text.
    Other(String),
}

/// When an assignment runs relative to the operator's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Phase {
    /// Module level: when the file is imported, before any startup handler.
    Import,
    /// In an `@kopf.on.startup` handler (or a function nested in one).
    Startup,
    /// In any other function: whenever it is called, after startup.
    Runtime,
}

/// Why an assignment may not run (or may not reach Kopf's settings), and the line that decides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Condition {
    /// The statement that makes it conditional (`if`, `for`, `try`, `return`, ...), if any.
    pub guard: Option<SourceLine>,
    /// In words, e.g. `conditional on line 10`.
    pub why: String,
}

/// One assignment to `settings.posting.<setting>` (or to `settings.posting` as a whole, which
/// yields one per setting).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Assignment {
    pub setting: Setting,
    pub value: Value,
    pub at: SourceLine,
    pub phase: Phase,
    /// `None`: unconditional, at the top level of an unconditionally registered startup handler.
    pub condition: Option<Condition>,
    /// The `if` conditions around it that the operator's env decided true (so they do not make
    /// it conditional), outermost first.
    pub decided: Vec<EnvDecision>,
}

/// An assignment that looks like a posting setting but provably never changes Kopf's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Ignored {
    pub at: SourceLine,
    pub why: String,
}

/// A source the parser rejects: the first error, its line and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Unparsed {
    pub at: SourceLine,
    pub message: String,
}

/// Everything found in one file, in source order.
#[derive(Debug, Default)]
pub(super) struct Found {
    pub assignments: Vec<Assignment>,
    pub ignored: Vec<Ignored>,
}

/// Expressions nested deeper than this are not evaluated against the env (conditions people
/// write are a few levels deep).
const MAX_EVAL_DEPTH: usize = 64;

/// Blocks nested deeper than this are not walked (CPython's tokenizer rejects more than 100
/// levels of indentation: "too many levels of indentation"); what lies deeper is undecidable.
const MAX_DEPTH: usize = 100;

/// Syntax trees deeper than this (expressions in expressions, e.g. `a.b.b.b...`) are not read.
/// CPython 3.11 already fails to compile a 3,000-link attribute chain; the tree is dropped only
/// when shallower (dropping recurses once per level; 8,000 levels fit in a 2 MiB thread stack in
/// a debug build).
const MAX_NODE_DEPTH: usize = 3000;

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

/// Parses `source` (the file `file`) and finds its assignments to Kopf's posting settings.
/// Errors: the first syntax error (Python 2 code, a truncated ConfigMap, ...) with its line.
pub(super) fn find(file: &str, source: &str, env: &Env) -> Result<Found, Unparsed> {
    let text = Text::new(file, source);
    // Ruff's offsets are u32: a larger "source" is no operator's code.
    if u32::try_from(source.len()).is_err() {
        return Err(Unparsed {
            at: SourceLine {
                file: file.to_string(),
                line: 1,
                text: String::new(),
            },
            message: "larger than 4 GiB".into(),
        });
    }
    let parsed = match parse_module(source) {
        Ok(parsed) => parsed,
        Err(error) => {
            return Err(Unparsed {
                at: text.error_line(error.location),
                message: error.error.to_string(),
            });
        }
    };
    if let Some(deep) = deeper_than(parsed.syntax(), MAX_NODE_DEPTH) {
        let at = text.first_line(deep);
        // Dropping a tree this deep recurses once per level and could exhaust the stack: it is
        // leaked instead (once per such file; CPython cannot compile such a file either).
        std::mem::forget(parsed);
        return Err(Unparsed {
            at,
            message: format!(
                "nested more than {MAX_NODE_DEPTH} levels deep (CPython refuses such code too: \"RecursionError: maximum recursion depth exceeded during compilation\")"
            ),
        });
    }
    let mut text = text;
    text.comments = parsed
        .tokens()
        .iter()
        .filter(|t| t.kind() == ast::token::TokenKind::Comment)
        .map(Ranged::range)
        .collect();
    let body = parsed.suite();
    let mut walker = Walker {
        text: &text,
        env,
        imports: Imports::default(),
        registered: HashMap::new(),
        found: Found::default(),
        decided: Vec::new(),
    };
    walker.module_imports(body, 0);
    walker.call_registrations(body, None, 0);
    let mut scope = Scope::default();
    walker.body(body, Place::Module, None, &mut scope, 0);
    Ok(walker.found)
}

// ---- source text ---------------------------------------------------------------------------

/// The source with its line starts and comment ranges, to cite statements as [`SourceLine`]s.
struct Text<'a> {
    file: &'a str,
    source: &'a str,
    line_starts: Vec<usize>,
    comments: Vec<TextRange>,
}

impl<'a> Text<'a> {
    fn new(file: &'a str, source: &'a str) -> Self {
        let line_starts = std::iter::once(0)
            .chain(memchr::memchr_iter(b'\n', source.as_bytes()).map(|i| i + 1))
            .collect();
        Text {
            file,
            source,
            line_starts,
            comments: Vec::new(),
        }
    }

    /// 1-based line of a byte offset.
    fn line(&self, offset: usize) -> usize {
        self.line_starts.partition_point(|&s| s <= offset)
    }

    /// The line on which `range` starts, its whole text trimmed (an `if ...:` header).
    fn first_line(&self, range: TextRange) -> SourceLine {
        let start = (range.start().to_usize()).min(self.source.len());
        let line = self.line(start);
        let from = self.line_starts[line - 1];
        let to = self.line_starts.get(line).copied().unwrap_or(self.source.len());
        SourceLine {
            file: self.file.to_string(),
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
            at = self.first_line(TextRange::empty(ruff_text_size::TextSize::new(
                u32::try_from(previous).unwrap_or(u32::MAX),
            )));
        }
        at
    }

    /// A statement: its first line, and its text with comments and line continuations removed,
    /// its lines joined by single spaces.
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
            file: self.file.to_string(),
            line: self.line(from),
            text,
        }
    }

    fn slice(&self, range: TextRange) -> &'a str {
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

// ---- names -------------------------------------------------------------------------------------

/// Module names bound by imports: local name → qualified name (`k` → `kopf`,
/// `on` → `kopf.on`, `CRITICAL` → `logging.CRITICAL`).
#[derive(Debug, Default, Clone)]
struct Imports(HashMap<String, String>);

impl Imports {
    fn add(&mut self, stmt: &Stmt) {
        match stmt {
            Stmt::Import(import) => {
                for alias in &import.names {
                    let module = alias.name.as_str();
                    match &alias.asname {
                        Some(name) => self.0.insert(name.to_string(), module.to_string()),
                        // `import kopf.on` binds `kopf`.
                        None => {
                            let top = module.split('.').next().unwrap_or(module);
                            self.0.insert(top.to_string(), top.to_string())
                        }
                    };
                }
            }
            Stmt::ImportFrom(from) if from.level == 0 => {
                let Some(module) = &from.module else { return };
                for alias in &from.names {
                    if alias.name.as_str() == "*" {
                        // `kopf.__all__` exports `on`; `kopf/on.py` has no `__all__`.
                        match module.as_str() {
                            "kopf" => self.0.insert("on".into(), "kopf.on".into()),
                            "kopf.on" => self.0.insert("startup".into(), "kopf.on.startup".into()),
                            _ => None,
                        };
                        continue;
                    }
                    let local = alias.asname.as_ref().unwrap_or(&alias.name);
                    self.0.insert(local.to_string(), format!("{module}.{}", alias.name));
                }
            }
            _ => {}
        }
    }

    /// The qualified name of a dotted expression (`k.on.startup` → `kopf.on.startup`).
    fn qualified(&self, expr: &Expr) -> Option<String> {
        let (base, attrs) = chain(expr);
        let Expr::Name(n) = base else { return None };
        let module = self.0.get(n.id.as_str())?;
        Some(
            std::iter::once(module.as_str())
                .chain(attrs)
                .collect::<Vec<_>>()
                .join("."),
        )
    }
}

/// What a local name is bound to: a path under Kopf's settings (`[]` is the settings object,
/// `["posting"]` its posting settings), bound under a condition or not.
#[derive(Debug, Clone)]
struct Binding {
    path: Vec<String>,
    condition: Option<Condition>,
}

/// A function's names that reach Kopf's settings, its parameters, and its own imports.
#[derive(Debug, Clone, Default)]
struct Scope {
    names: HashMap<String, Binding>,
    /// The `**kwargs` parameter, when there is no `settings` parameter to take the keyword.
    kwargs: Option<String>,
    /// Parameter names (to tell "not Kopf's settings" from "unknown").
    params: Vec<String>,
    imports: Imports,
    /// Local names bound to a value read from the environment (`mode = os.environ.get(...)`).
    env_names: HashMap<String, Result<Known, EvalError>>,
}

impl Scope {
    /// The scope of a handler Kopf calls: `settings` is bound when a parameter (positional or
    /// keyword, not positional-only) is named so; else `**kwargs` holds it.
    fn handler(parameters: &ast::Parameters) -> Self {
        let mut scope = Scope::default();
        let keyword = parameters.args.iter().chain(parameters.kwonlyargs.iter());
        if keyword.into_iter().any(|p| p.name().as_str() == "settings") {
            scope.names.insert(
                "settings".into(),
                Binding {
                    path: Vec::new(),
                    condition: None,
                },
            );
        } else {
            scope.kwargs = parameters.kwarg.as_ref().map(|k| k.name.to_string());
        }
        scope.params = parameter_names(parameters);
        scope
    }

    /// A function nested in a handler: the enclosing names, minus those its parameters shadow.
    fn nested(&self, parameters: &ast::Parameters) -> Self {
        let mut scope = self.clone();
        for name in parameter_names(parameters) {
            scope.names.remove(&name);
            if scope.kwargs.as_deref() == Some(name.as_str()) {
                scope.kwargs = None;
            }
        }
        scope.params = parameter_names(parameters);
        scope
    }

    /// `name = <something that is not Kopf's settings>`.
    fn unbind(&mut self, name: &str, condition: Option<&Condition>) {
        match condition {
            // Rebound only under a condition: afterwards it may still be the settings.
            Some(c) => {
                if let Some(b) = self.names.get_mut(name) {
                    b.condition.get_or_insert_with(|| c.clone());
                }
            }
            None => {
                self.names.remove(name);
            }
        }
        if self.kwargs.as_deref() == Some(name) && condition.is_none() {
            self.kwargs = None;
        }
    }
}

fn parameter_names(p: &ast::Parameters) -> Vec<String> {
    let plain = p
        .posonlyargs
        .iter()
        .chain(p.args.iter())
        .chain(p.kwonlyargs.iter())
        .map(|a| a.name().to_string());
    let star = p.vararg.iter().chain(p.kwarg.iter()).map(|a| a.name.to_string());
    plain.chain(star).collect()
}

/// A string literal's value.
fn literal(expr: &Expr) -> Option<&str> {
    match expr {
        Expr::StringLiteral(s) => Some(s.value.to_str()),
        _ => None,
    }
}

/// An attribute chain taken apart: its base expression and the attribute names after it, outer
/// last (`settings.posting.enabled` → `settings`, `[posting, enabled]`). `getattr(x, "a")`
/// counts as `x.a`.
fn chain(expr: &Expr) -> (&Expr, Vec<&str>) {
    let mut attrs = Vec::new();
    let mut e = expr;
    loop {
        match e {
            Expr::Attribute(a) => {
                attrs.push(a.attr.as_str());
                e = &a.value;
            }
            Expr::Call(call)
                if matches!(&*call.func, Expr::Name(n) if n.id.as_str() == "getattr")
                    && call.arguments.args.len() == 2
                    && call.arguments.keywords.is_empty()
                    && literal(&call.arguments.args[1]).is_some() =>
            {
                attrs.push(literal(&call.arguments.args[1]).unwrap_or_default());
                e = &call.arguments.args[0];
            }
            _ => break,
        }
    }
    attrs.reverse();
    (e, attrs)
}

/// Where an expression's base is in Kopf's settings.
enum Base {
    /// Reaches Kopf's settings at this path, possibly only under a condition.
    Settings(Vec<String>, Option<Condition>),
    /// A parameter that Kopf does not fill with the settings (the base expression's range).
    OtherParameter,
    /// Anything else.
    Unknown,
}

impl Scope {
    fn base(&self, base: &Expr) -> Base {
        match base {
            Expr::Name(n) => match self.names.get(n.id.as_str()) {
                Some(b) => Base::Settings(b.path.clone(), b.condition.clone()),
                None if self.params.iter().any(|p| p == n.id.as_str()) => Base::OtherParameter,
                None => Base::Unknown,
            },
            // kwargs['settings']
            Expr::Subscript(s) if literal(&s.slice) == Some("settings") => self.settings_in(&s.value),
            // kwargs.get('settings')
            Expr::Call(call)
                if call.arguments.args.first().and_then(literal) == Some("settings")
                    && matches!(&*call.func, Expr::Attribute(a) if a.attr.as_str() == "get") =>
            {
                match &*call.func {
                    Expr::Attribute(a) => self.settings_in(&a.value),
                    _ => Base::Unknown,
                }
            }
            _ => Base::Unknown,
        }
    }

    /// `settings` looked up in `mapping`: Kopf's settings if `mapping` is the `**kwargs` that
    /// receives them; never if it is another parameter (e.g. `**kwargs` beside a `settings`
    /// parameter, which takes the keyword).
    fn settings_in(&self, mapping: &Expr) -> Base {
        match mapping {
            Expr::Name(n) if self.kwargs.as_deref() == Some(n.id.as_str()) => Base::Settings(Vec::new(), None),
            Expr::Name(n) if self.params.iter().any(|p| p == n.id.as_str()) => Base::OtherParameter,
            _ => Base::Unknown,
        }
    }

    /// The settings path an expression denotes, if it reaches Kopf's settings.
    fn settings_path(&self, expr: &Expr) -> Option<(Vec<String>, Option<Condition>)> {
        let (base, attrs) = chain(expr);
        match self.base(base) {
            Base::Settings(mut path, c) => {
                path.extend(attrs.iter().map(|a| a.to_string()));
                Some((path, c))
            }
            _ => None,
        }
    }
}

/// Which posting settings an attribute path names: `posting.enabled` one, `posting` all three.
fn posting_targets(path: &[&str]) -> &'static [Setting] {
    match path {
        ["posting"] => &[Setting::Enabled, Setting::Level, Setting::Loggers],
        ["posting", "enabled"] => &[Setting::Enabled],
        ["posting", "level"] => &[Setting::Level],
        ["posting", "loggers"] => &[Setting::Loggers],
        _ => &[],
    }
}

// ---- the walk ---------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// Module level.
    Module,
    /// An `@kopf.on.startup` handler's body (or a function nested in it).
    Startup,
    /// Any other function or a class body.
    Other,
}

struct Walker<'t, 'a> {
    text: &'t Text<'a>,
    /// The operator container's environment, to decide `os.environ` conditions.
    env: &'t Env,
    imports: Imports,
    /// Functions registered by a module-level `kopf.on.startup(...)(name)` call, with the
    /// condition the registration runs under.
    registered: HashMap<String, Option<Condition>>,
    found: Found,
    /// The env-decided `if` branches the walk is inside, outermost first.
    decided: Vec<EnvDecision>,
}

/// How a function is registered as a startup handler.
enum Registration {
    No,
    /// Registered when its definition (or the registering call) runs.
    Yes,
    /// Registered, but whether Kopf runs it depends on more than the source line.
    Doubtful(Condition),
}

impl Walker<'_, '_> {
    fn module_imports(&mut self, body: &[Stmt], depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        for stmt in body {
            self.imports.add(stmt);
            for block in blocks(stmt) {
                self.module_imports(block.body, depth + 1);
            }
        }
    }

    /// Module-level `kopf.on.startup(...)(fn)` calls (or `fn = kopf.on.startup(...)(fn)`).
    fn call_registrations(&mut self, body: &[Stmt], condition: Option<&Condition>, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        for stmt in body {
            let value = match stmt {
                Stmt::Expr(e) => Some(&*e.value),
                Stmt::Assign(a) => Some(&*a.value),
                _ => None,
            };
            if let Some(Expr::Call(outer)) = value
                && let Expr::Call(inner) = &*outer.func
                && self.imports.qualified(&inner.func).as_deref() == Some("kopf.on.startup")
                && let [Expr::Name(name)] = &*outer.arguments.args
            {
                let mut c = condition.cloned();
                if let Some(why) = registry_doubt(inner) {
                    c = Some(Condition { guard: None, why });
                }
                self.registered.insert(name.id.to_string(), c);
            }
            for block in blocks(stmt) {
                let c = condition.cloned().or_else(|| block.condition(self.text));
                self.call_registrations(block.body, c.as_ref(), depth + 1);
            }
        }
    }

    fn registration(&self, f: &ast::StmtFunctionDef, place: Place) -> Registration {
        for decorator in &f.decorator_list {
            match &decorator.expression {
                Expr::Call(call) if self.qualified(&call.func) == Some("kopf.on.startup".into()) => {
                    return match registry_doubt(call) {
                        Some(why) => Registration::Doubtful(Condition { guard: None, why }),
                        None => Registration::Yes,
                    };
                }
                e if self.qualified(e) == Some("kopf.on.startup".into()) => {
                    return Registration::Doubtful(Condition {
                        guard: None,
                        why: "`@kopf.on.startup` without `()`: kopf.on.startup() takes keyword arguments only, so importing the file fails".into(),
                    });
                }
                _ => {}
            }
        }
        if place == Place::Module {
            match self.registered.get(f.name.as_str()) {
                Some(None) => return Registration::Yes,
                Some(Some(c)) => return Registration::Doubtful(c.clone()),
                None => {}
            }
        }
        Registration::No
    }

    fn qualified(&self, expr: &Expr) -> Option<String> {
        self.imports.qualified(expr)
    }

    fn body(&mut self, body: &[Stmt], place: Place, condition: Option<&Condition>, scope: &mut Scope, depth: usize) {
        if depth > MAX_DEPTH {
            self.too_deep(body);
            return;
        }
        // After a return/raise that runs only sometimes, the rest of the block is conditional;
        // after one that always runs, it is unreachable.
        let mut after_exit: Option<Condition> = None;
        let mut unreachable: Option<SourceLine> = None;
        for stmt in body {
            if let Some(exit) = &unreachable {
                self.unreachable(stmt, exit, depth);
                continue;
            }
            let c = condition.or(after_exit.as_ref());
            self.statement(stmt, place, c, scope, depth);
            match stmt {
                Stmt::Return(_) | Stmt::Raise(_) if place != Place::Module => {
                    unreachable = Some(self.text.statement(stmt.range()));
                }
                _ if after_exit.is_none() && place != Place::Module => {
                    if let Some(exit) = find_exit(stmt, depth) {
                        let keyword = if matches!(exit, Stmt::Raise(_)) {
                            "raise"
                        } else {
                            "return"
                        };
                        let at = self.text.statement(exit.range());
                        after_exit = Some(Condition {
                            why: format!("a conditional {keyword} on line {} comes before it", at.line),
                            guard: Some(at),
                        });
                    }
                }
                _ => {}
            }
        }
    }

    /// Blocks nested deeper than [`MAX_DEPTH`] are not walked (CPython itself rejects more than
    /// 100 levels of indentation: "too many levels of indentation"); when their text mentions
    /// `posting`, what they do to it is undecidable.
    fn too_deep(&mut self, body: &[Stmt]) {
        let (Some(first), Some(last)) = (body.first(), body.last()) else {
            return;
        };
        let range = TextRange::new(first.range().start(), last.range().end());
        if self.text.slice(range).contains("posting") {
            let at = self.text.first_line(range);
            self.found.assignments.push(Assignment {
                setting: Setting::Enabled,
                value: Value::Other("not read".into()),
                decided: Vec::new(),
                phase: Phase::Startup,
                condition: Some(Condition {
                    guard: None,
                    why: format!("nested deeper than {MAX_DEPTH} blocks: not read"),
                }),
                at,
            });
        }
    }

    /// Statements after an unconditional return: their posting assignments never run.
    fn unreachable(&mut self, stmt: &Stmt, exit: &SourceLine, depth: usize) {
        self.never_runs(
            std::slice::from_ref(stmt),
            &format!("unreachable: after `{}` on line {}", exit.text, exit.line),
            depth,
        );
    }

    /// Statements that never run (after an unconditional return, or in a branch whose condition
    /// the env decides false): their posting assignments are ignored, with `why`.
    fn never_runs(&mut self, stmts: &[Stmt], why: &str, depth: usize) {
        let mut scratch = Found::default();
        std::mem::swap(&mut scratch, &mut self.found);
        let mut scope = Scope::default();
        for stmt in stmts {
            self.statement(stmt, Place::Other, None, &mut scope, depth);
        }
        std::mem::swap(&mut scratch, &mut self.found);
        let mut lines: Vec<SourceLine> = scratch
            .assignments
            .into_iter()
            .map(|a| a.at)
            .chain(scratch.ignored.into_iter().map(|i| i.at))
            .collect();
        lines.dedup();
        for at in lines {
            self.found.ignored.push(Ignored {
                at,
                why: why.to_string(),
            });
        }
    }

    fn statement(&mut self, stmt: &Stmt, place: Place, condition: Option<&Condition>, scope: &mut Scope, depth: usize) {
        match stmt {
            Stmt::FunctionDef(f) => self.function(f, place, condition, scope, depth),
            Stmt::ClassDef(c) => {
                let mut inner = Scope {
                    imports: scope.imports.clone(),
                    ..Scope::default()
                };
                self.body(&c.body, Place::Other, condition, &mut inner, depth + 1);
            }
            Stmt::Import(_) | Stmt::ImportFrom(_) => scope.imports.add(stmt),
            Stmt::Assign(a) => {
                for target in &a.targets {
                    self.assign(stmt, target, Some(&a.value), place, condition, scope);
                }
            }
            Stmt::AnnAssign(a) => {
                if let Some(value) = &a.value {
                    self.assign(stmt, &a.target, Some(value), place, condition, scope);
                }
            }
            Stmt::AugAssign(a) => self.assign(stmt, &a.target, None, place, condition, scope),
            // setattr(settings.posting, "enabled", False)
            Stmt::Expr(e) => {
                if let Expr::Call(call) = &*e.value
                    && matches!(&*call.func, Expr::Name(n) if n.id.as_str() == "setattr")
                    && let [object, Expr::StringLiteral(name), value] = &*call.arguments.args
                {
                    let (base, mut attrs) = chain(object);
                    attrs.push(name.value.to_str());
                    self.record(stmt, base, &attrs, Some(value), place, condition, scope);
                }
            }
            Stmt::If(s) => self.if_statement(stmt, s, place, condition, scope, depth),
            _ => {
                // The innermost condition is the one cited; `finally` keeps the outer one.
                for block in blocks(stmt) {
                    let c = block.condition(self.text).or_else(|| condition.cloned());
                    self.body(block.body, place, c.as_ref(), scope, depth + 1);
                }
            }
        }
    }

    fn function(
        &mut self,
        f: &ast::StmtFunctionDef,
        place: Place,
        condition: Option<&Condition>,
        scope: &mut Scope,
        depth: usize,
    ) {
        let def = self.text.first_line(f.range());
        match (self.registration(f, place), place) {
            (Registration::No, Place::Startup) => {
                // A helper defined inside a startup handler runs only if it is called.
                let mut inner = scope.nested(&f.parameters);
                let c = condition.cloned().unwrap_or_else(|| Condition {
                    why: format!(
                        "in the nested function `{}` (line {}): it runs only if called",
                        f.name, def.line
                    ),
                    guard: Some(def),
                });
                self.body(&f.body, Place::Startup, Some(&c), &mut inner, depth + 1);
            }
            (Registration::No, _) => {
                let mut inner = Scope::handler(&f.parameters);
                inner.imports = scope.imports.clone();
                self.body(&f.body, Place::Other, None, &mut inner, depth + 1);
            }
            (registration, _) => {
                let mut inner = Scope::handler(&f.parameters);
                inner.imports = scope.imports.clone();
                let doubt = match (registration, place, condition) {
                    (Registration::Doubtful(c), _, _) => Some(c),
                    (_, Place::Module, Some(c)) => Some(Condition {
                        why: format!(
                            "the @kopf.on.startup function `{}` is registered only under the condition on line {}",
                            f.name,
                            c.guard.as_ref().map_or(def.line, |g| g.line)
                        ),
                        guard: c.guard.clone(),
                    }),
                    (_, Place::Module, None) => None,
                    _ => Some(Condition {
                        why: format!(
                            "the @kopf.on.startup function `{}` (line {}) is defined inside another function or class: registered only when that runs",
                            f.name, def.line
                        ),
                        guard: Some(def),
                    }),
                };
                self.body(&f.body, Place::Startup, doubt.as_ref(), &mut inner, depth + 1);
            }
        }
    }

    /// `target = value` (`value` is `None` for an augmented assignment).
    fn assign(
        &mut self,
        stmt: &Stmt,
        target: &Expr,
        value: Option<&Expr>,
        place: Place,
        condition: Option<&Condition>,
        scope: &mut Scope,
    ) {
        match target {
            Expr::Name(n) => {
                scope.env_names.remove(n.id.as_str());
                match value.and_then(|v| scope.settings_path(v)) {
                    Some((path, bound_under)) => {
                        let condition = condition.cloned().or(bound_under);
                        scope.names.insert(n.id.to_string(), Binding { path, condition });
                    }
                    None => {
                        scope.unbind(n.id.as_str(), condition);
                        if let Some(v) = value {
                            let at = self.text.statement(stmt.range());
                            let bound = match (self.eval(v, scope), condition) {
                                (Err(EvalError::NotEnv), _) => None,
                                (Err(e), _) => Some(Err(e)),
                                (Ok(_), Some(c)) => Some(Err(EvalError::Env(format!(
                                    "`{}` is assigned on line {} only {}",
                                    n.id, at.line, c.why
                                )))),
                                (Ok(mut k), None) => {
                                    k.facts.push(format!("{} (line {})", at.text, at.line));
                                    Some(Ok(k))
                                }
                            };
                            if let Some(b) = bound {
                                scope.env_names.insert(n.id.to_string(), b);
                            }
                        }
                    }
                }
            }
            Expr::Tuple(_) | Expr::List(_) => {
                let targets = match target {
                    Expr::Tuple(t) => &t.elts[..],
                    Expr::List(l) => &l.elts[..],
                    _ => &[],
                };
                let values = match value {
                    Some(Expr::Tuple(t)) if t.elts.len() == targets.len() => Some(&t.elts[..]),
                    Some(Expr::List(l)) if l.elts.len() == targets.len() => Some(&l.elts[..]),
                    _ => None,
                };
                for (i, t) in targets.iter().enumerate() {
                    match values {
                        Some(vs) => self.assign(stmt, t, Some(&vs[i]), place, condition, scope),
                        None => self.assign(stmt, t, None, place, condition, scope),
                    }
                }
            }
            Expr::Attribute(_) => {
                let (base, attrs) = chain(target);
                self.record(stmt, base, &attrs, value, place, condition, scope);
            }
            _ => {}
        }
    }

    /// An assignment to `<base>.<attrs>`: recorded when it names a posting setting.
    #[allow(clippy::too_many_arguments)]
    fn record(
        &mut self,
        stmt: &Stmt,
        base: &Expr,
        attrs: &[&str],
        value: Option<&Expr>,
        place: Place,
        condition: Option<&Condition>,
        scope: &Scope,
    ) {
        let resolved = scope.base(base);
        let full: Vec<&str> = match &resolved {
            Base::Settings(path, _) => path.iter().map(String::as_str).chain(attrs.iter().copied()).collect(),
            // Not resolved to Kopf's settings: the shape `<anything>.posting.<setting>` alone.
            _ if attrs.len() >= 2 && attrs[attrs.len() - 2] == "posting" => attrs[attrs.len() - 2..].to_vec(),
            _ => return,
        };
        let settings = posting_targets(&full);
        if settings.is_empty() {
            return;
        }
        let at = self.text.statement(stmt.range());
        let base_text = self.text.slice(base.range()).to_string();
        let (phase, condition) = match (place, resolved) {
            (Place::Startup, Base::Settings(_, bound_under)) => (Phase::Startup, condition.cloned().or(bound_under)),
            (Place::Startup, Base::OtherParameter) => {
                self.found.ignored.push(Ignored {
                    at,
                    why: format!(
                        "`{base_text}` does not receive Kopf's settings: Kopf passes them only as the keyword argument `settings` (kopf/_core/actions/invocation.py invoke(): fn(**kwargs)), which a parameter named `settings` takes, else `**kwargs`"
                    ),
                });
                return;
            }
            (Place::Startup, Base::Unknown) => (
                Phase::Startup,
                Some(Condition {
                    guard: None,
                    why: format!("`{base_text}` is not known to be Kopf's settings (only the `settings` keyword argument is)"),
                }),
            ),
            (Place::Module, _) => (
                Phase::Import,
                Some(Condition {
                    guard: None,
                    why: "not inside a function: Kopf settings exist only in an @kopf.on.startup handler (or an embedded operator's own OperatorSettings)".into(),
                }),
            ),
            (Place::Other, _) => (
                Phase::Runtime,
                Some(Condition {
                    guard: None,
                    why: "not in an @kopf.on.startup function".into(),
                }),
            ),
        };
        for &setting in settings {
            let value = match (value, settings.len()) {
                // `settings.posting = ...` replaces all three: their values are unknown.
                (Some(v), 1) => self.value(v, setting, scope),
                (Some(v), _) => Value::Other(format!("posting replaced by {}", self.text.slice(v.range()))),
                (None, _) => Value::Other(self.text.statement(stmt.range()).text),
            };
            self.found.assignments.push(Assignment {
                setting,
                value,
                at: at.clone(),
                phase,
                condition: condition.clone(),
                decided: self.decided.clone(),
            });
        }
    }

    fn value(&self, expr: &Expr, setting: Setting, scope: &Scope) -> Value {
        let truth = setting != Setting::Level;
        match expr {
            Expr::BooleanLiteral(b) => return Value::Bool(b.value),
            Expr::NoneLiteral(_) if truth => return Value::Bool(false),
            Expr::NumberLiteral(n) => {
                if let ast::Number::Int(i) = &n.value
                    && let Some(i) = i.as_i64()
                {
                    return if truth { Value::Bool(i != 0) } else { Value::Int(i) };
                }
            }
            _ => {}
        }
        if !truth {
            let name = scope.imports.qualified(expr).or_else(|| self.qualified(expr));
            if let Some(level) = name
                .as_deref()
                .and_then(|n| n.strip_prefix("logging."))
                .and_then(logging_level)
            {
                return Value::Int(level);
            }
        }
        Value::Other(self.text.slice(expr.range()).to_string())
    }
}

// ---- conditions on the environment ----------------------------------------------------------

/// A Python value an expression evaluates to, as far as the env decides it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum PyVal {
    Str(String),
    Int(i64),
    Bool(bool),
    None,
    /// A tuple, list or set of known values (the right side of `in`).
    Seq(Vec<PyVal>),
}

impl PyVal {
    /// Python's truth value.
    fn truthy(&self) -> bool {
        match self {
            PyVal::Str(s) => !s.is_empty(),
            PyVal::Int(i) => *i != 0,
            PyVal::Bool(b) => *b,
            PyVal::None => false,
            PyVal::Seq(v) => !v.is_empty(),
        }
    }
}

/// A value known from the env, with the facts it rests on and the variables read.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Known {
    value: PyVal,
    facts: Vec<String>,
    vars: Vec<String>,
}

impl Known {
    fn literal(value: PyVal) -> Self {
        Known {
            value,
            facts: Vec::new(),
            vars: Vec::new(),
        }
    }

    fn join(mut self, other: Known, value: PyVal) -> Self {
        for f in other.facts {
            if !self.facts.contains(&f) {
                self.facts.push(f);
            }
        }
        for v in other.vars {
            if !self.vars.contains(&v) {
                self.vars.push(v);
            }
        }
        self.value = value;
        self
    }
}

/// Why an expression's value is not known.
#[derive(Debug, Clone, PartialEq, Eq)]
enum EvalError {
    /// It does not read the environment (or is beyond this evaluator): the usual undecidable.
    NotEnv,
    /// It reads the environment, but the evidence does not give the value: why, in words.
    Env(String),
}

/// How a branch of an `if` relates to the env.
enum Branch {
    /// The env decides that it runs.
    Runs(EnvDecision),
    /// The env decides that it never runs: why.
    Never(String),
    /// Not decided; with the env's reason when the test reads the env.
    Unknown(Option<String>),
}

impl Walker<'_, '_> {
    /// An `if`/`elif`/`else`: each branch whose test the env decides is walked as running (no
    /// condition from this `if`) or as never running; the others as before.
    fn if_statement(
        &mut self,
        stmt: &Stmt,
        s: &ast::StmtIf,
        place: Place,
        condition: Option<&Condition>,
        scope: &mut Scope,
        depth: usize,
    ) {
        let tests: Vec<(Option<&Expr>, TextRange)> = std::iter::once((Some(&*s.test), s.range()))
            .chain(s.elif_else_clauses.iter().map(|c| (c.test.as_ref(), c.range())))
            .collect();
        // Facts of the earlier tests, all decided false; `None` once one is true or unknown.
        let mut earlier_false: Option<Known> = Some(Known::literal(PyVal::Bool(false)));
        let mut earlier_true: Option<usize> = None;
        for (block, (test, range)) in blocks(stmt).into_iter().zip(tests) {
            let guard = self.text.first_line(range);
            let branch = match (earlier_true, &earlier_false) {
                (Some(line), _) => Branch::Never(format!(
                    "never runs: the branch on line {line} before it is taken ({})",
                    self.decided_text(&guard)
                )),
                (None, None) => Branch::Unknown(None),
                (None, Some(before)) => match test {
                    None => Branch::Runs(decision(guard.clone(), true, before.clone())),
                    Some(t) => match self.eval(t, scope) {
                        Ok(k) if k.value.truthy() => {
                            Branch::Runs(decision(guard.clone(), true, before.clone().join(k, PyVal::Bool(true))))
                        }
                        Ok(k) => Branch::Never(self.never_text(&guard, &before.clone().join(k, PyVal::Bool(false)))),
                        Err(EvalError::Env(why)) => Branch::Unknown(Some(why)),
                        Err(EvalError::NotEnv) => Branch::Unknown(None),
                    },
                },
            };
            match branch {
                Branch::Runs(d) => {
                    earlier_true = Some(d.guard.line);
                    earlier_false = None;
                    self.decided.push(d);
                    self.body(block.body, place, condition, scope, depth + 1);
                    self.decided.pop();
                }
                Branch::Never(why) => {
                    if let (Some(before), Some(t)) = (earlier_false.take(), test)
                        && let Ok(k) = self.eval(t, scope)
                    {
                        earlier_false = Some(before.join(k, PyVal::Bool(false)));
                    }
                    self.never_runs(block.body, &why, depth + 1);
                }
                Branch::Unknown(why) => {
                    earlier_false = None;
                    let c = block.condition(self.text).map(|mut c| {
                        if let Some(why) = &why {
                            c.why = format!("{}; {why}", c.why);
                        }
                        c
                    });
                    let c = c.or_else(|| condition.cloned());
                    self.body(block.body, place, c.as_ref(), scope, depth + 1);
                }
            }
        }
    }

    fn decided_text(&self, guard: &SourceLine) -> String {
        format!("line {}: {}", guard.line, guard.text)
    }

    fn never_text(&self, guard: &SourceLine, k: &Known) -> String {
        format!(
            "never runs: the condition on line {} (`{}`) is false: {}",
            guard.line,
            guard.text,
            k.facts.join("; ")
        )
    }

    /// The value of `expr` as far as the operator's env decides it: `os.environ.get("X"[, d])`,
    /// `os.getenv("X"[, d])`, `os.environ["X"]`, names bound to those, `.lower()`/`.upper()`/
    /// `.strip()`/`.casefold()`, literals, `==`/`!=`/`in`/`not in`/`is`/`is not`, `not`, `and`,
    /// `or`.
    fn eval(&self, expr: &Expr, scope: &Scope) -> Result<Known, EvalError> {
        self.eval_at(expr, scope, 0)
    }

    /// [`Walker::eval`] at nesting `depth`: deeper than [`MAX_EVAL_DEPTH`] is not evaluated (a
    /// machine-made `not not not ...` must not exhaust the stack).
    fn eval_at(&self, expr: &Expr, scope: &Scope, depth: usize) -> Result<Known, EvalError> {
        if depth > MAX_EVAL_DEPTH {
            return Err(EvalError::NotEnv);
        }
        let eval = |e: &Expr| self.eval_at(e, scope, depth + 1);
        match expr {
            Expr::StringLiteral(l) => Ok(Known::literal(PyVal::Str(l.value.to_str().to_string()))),
            Expr::NoneLiteral(_) => Ok(Known::literal(PyVal::None)),
            Expr::BooleanLiteral(b) => Ok(Known::literal(PyVal::Bool(b.value))),
            Expr::NumberLiteral(n) => match &n.value {
                ast::Number::Int(i) => i
                    .as_i64()
                    .map(|i| Known::literal(PyVal::Int(i)))
                    .ok_or(EvalError::NotEnv),
                _ => Err(EvalError::NotEnv),
            },
            Expr::Tuple(_) | Expr::List(_) | Expr::Set(_) => {
                let elts = match expr {
                    Expr::Tuple(t) => &t.elts[..],
                    Expr::List(l) => &l.elts[..],
                    Expr::Set(s) => &s.elts[..],
                    _ => &[],
                };
                let mut out = Known::literal(PyVal::Seq(Vec::new()));
                let mut values = Vec::new();
                for e in elts {
                    let k = eval(e)?;
                    values.push(k.value.clone());
                    out = out.join(k, PyVal::None);
                }
                out.value = PyVal::Seq(values);
                Ok(out)
            }
            Expr::Name(n) => scope
                .env_names
                .get(n.id.as_str())
                .cloned()
                .unwrap_or(Err(EvalError::NotEnv)),
            Expr::Subscript(sub) => {
                let base = scope
                    .imports
                    .qualified(&sub.value)
                    .or_else(|| self.qualified(&sub.value));
                match (base.as_deref(), literal(&sub.slice)) {
                    (Some("os.environ"), Some(var)) => match self.read_env(var)? {
                        Some(k) => Ok(k),
                        None => Err(EvalError::Env(format!(
                            "os.environ[{var:?}] raises KeyError when it is unset"
                        ))),
                    },
                    _ => Err(EvalError::NotEnv),
                }
            }
            Expr::Call(call) => {
                let name = scope
                    .imports
                    .qualified(&call.func)
                    .or_else(|| self.qualified(&call.func));
                if matches!(name.as_deref(), Some("os.environ.get" | "os.getenv")) {
                    let args = &call.arguments.args;
                    let Some(var) = args.first().and_then(literal) else {
                        return Err(EvalError::NotEnv);
                    };
                    let default = args.get(1).or_else(|| {
                        call.arguments
                            .keywords
                            .iter()
                            .find(|k| k.arg.as_ref().is_some_and(|a| a.as_str() == "default"))
                            .map(|k| &k.value)
                    });
                    return match self.read_env(var)? {
                        Some(k) => Ok(k),
                        None => match default {
                            Some(d) => eval(d),
                            None => Ok(Known::literal(PyVal::None)),
                        },
                    };
                }
                // `<str>.lower()` and friends.
                if let Expr::Attribute(a) = &*call.func
                    && call.arguments.args.is_empty()
                    && call.arguments.keywords.is_empty()
                {
                    let k = eval(&a.value)?;
                    let PyVal::Str(v) = &k.value else {
                        return Err(EvalError::NotEnv);
                    };
                    let out = match a.attr.as_str() {
                        "lower" | "casefold" => v.to_lowercase(),
                        "upper" => v.to_uppercase(),
                        "strip" => v.trim().to_string(),
                        _ => return Err(EvalError::NotEnv),
                    };
                    return Ok(Known {
                        value: PyVal::Str(out),
                        ..k
                    });
                }
                Err(EvalError::NotEnv)
            }
            Expr::UnaryOp(u) if u.op == ast::UnaryOp::Not => {
                let k = eval(&u.operand)?;
                let v = !k.value.truthy();
                Ok(Known {
                    value: PyVal::Bool(v),
                    ..k
                })
            }
            Expr::BoolOp(b) => {
                // Three-valued on truth: `and` is false once one operand is known false, `or`
                // true once one is known true, whatever the others.
                let want = b.op == ast::BoolOp::Or;
                let mut known = Known::literal(PyVal::Bool(!want));
                let mut unknown: Option<EvalError> = None;
                for v in &b.values {
                    match eval(v) {
                        Ok(k) if k.value.truthy() == want => {
                            return Ok(Known {
                                value: PyVal::Bool(want),
                                ..k
                            });
                        }
                        Ok(k) => known = known.join(k, PyVal::Bool(!want)),
                        Err(e) => {
                            if unknown.is_none() || matches!(e, EvalError::Env(_)) {
                                unknown = Some(e);
                            }
                        }
                    }
                }
                match unknown {
                    Some(e) => Err(e),
                    None => Ok(known),
                }
            }
            Expr::Compare(c) if c.ops.len() == 1 && c.comparators.len() == 1 => {
                let left = eval(&c.left);
                let right = eval(&c.comparators[0]);
                let (left, right) = match (left, right) {
                    (Ok(l), Ok(r)) => (l, r),
                    (Err(EvalError::Env(e)), _) | (_, Err(EvalError::Env(e))) => return Err(EvalError::Env(e)),
                    _ => return Err(EvalError::NotEnv),
                };
                if left.vars.is_empty() && right.vars.is_empty() {
                    // Two literals: not about the env; the usual undecidable.
                    return Err(EvalError::NotEnv);
                }
                let result = match (c.ops[0], &left.value, &right.value) {
                    (ast::CmpOp::Eq, l, r) => l == r,
                    (ast::CmpOp::NotEq, l, r) => l != r,
                    (ast::CmpOp::Is, l, PyVal::None) => *l == PyVal::None,
                    (ast::CmpOp::IsNot, l, PyVal::None) => *l != PyVal::None,
                    (ast::CmpOp::In, l, PyVal::Seq(v)) => v.contains(l),
                    (ast::CmpOp::NotIn, l, PyVal::Seq(v)) => !v.contains(l),
                    (ast::CmpOp::In, PyVal::Str(l), PyVal::Str(r)) => r.contains(l.as_str()),
                    (ast::CmpOp::NotIn, PyVal::Str(l), PyVal::Str(r)) => !r.contains(l.as_str()),
                    _ => return Err(EvalError::NotEnv),
                };
                Ok(left.join(right, PyVal::Bool(result)))
            }
            _ => Err(EvalError::NotEnv),
        }
    }

    /// `Ok(Some)` with the value of env var `var`, `Ok(None)` never (an unset variable is not
    /// known: the image's ENV is not in evidence), `Err` with why it is not known.
    fn read_env(&self, var: &str) -> Result<Option<Known>, EvalError> {
        if self.env.is_unknown() {
            // No env in evidence: the condition is undecidable as any other.
            return Err(EvalError::NotEnv);
        }
        match self.env.lookup(var) {
            Ok((value, source)) => Ok(Some(Known {
                facts: vec![format!("{var} = {value:?} ({source})")],
                vars: vec![var.to_string()],
                value: PyVal::Str(value),
            })),
            Err(why) => Err(EvalError::Env(why)),
        }
    }
}

/// The decision that a branch runs, from the facts of its test (and of the earlier tests, false).
fn decision(guard: SourceLine, holds: bool, k: Known) -> EnvDecision {
    EnvDecision {
        guard,
        holds,
        facts: k.facts,
        vars: k.vars,
    }
}

/// Python's `logging` level constants.
fn logging_level(name: &str) -> Option<i64> {
    Some(match name {
        "CRITICAL" | "FATAL" => 50,
        "ERROR" => 40,
        "WARNING" | "WARN" => 30,
        "INFO" => 20,
        "DEBUG" => 10,
        "NOTSET" => 0,
        _ => return None,
    })
}

/// Why a `kopf.on.startup(...)` call may register the handler elsewhere than where `kopf run`
/// looks: a `registry=` argument.
fn registry_doubt(call: &ast::ExprCall) -> Option<String> {
    call.arguments
        .keywords
        .iter()
        .any(|k| k.arg.as_ref().is_some_and(|a| a.as_str() == "registry"))
        .then(|| "registered with `registry=`: it runs only if the operator runs that registry".into())
}

/// A nested block of a compound statement, and what makes it conditional.
struct Block<'s> {
    body: &'s [Stmt],
    kind: BlockKind<'s>,
}

enum BlockKind<'s> {
    /// Runs only under the condition of the statement (or clause) at this range.
    Guarded(TextRange),
    /// Runs whenever the statement runs (`finally`).
    Always,
    /// `else` of an `if`: guarded by the `if`.
    Else(&'s Stmt),
}

impl Block<'_> {
    fn condition(&self, text: &Text<'_>) -> Option<Condition> {
        let range = match &self.kind {
            BlockKind::Always => return None,
            BlockKind::Guarded(r) => *r,
            BlockKind::Else(s) => s.range(),
        };
        let guard = text.first_line(range);
        Some(Condition {
            why: format!("conditional on line {}", guard.line),
            guard: Some(guard),
        })
    }
}

/// The blocks nested in a compound statement (none for a simple statement, nor for function
/// and class bodies, which are walked as their own scopes).
fn blocks(stmt: &Stmt) -> Vec<Block<'_>> {
    fn guarded(body: &[Stmt], r: TextRange) -> Block<'_> {
        Block {
            body,
            kind: BlockKind::Guarded(r),
        }
    }
    let mut out: Vec<Block<'_>> = Vec::new();
    match stmt {
        Stmt::If(s) => {
            out.push(guarded(&s.body, s.range()));
            for clause in &s.elif_else_clauses {
                out.push(match clause.test {
                    Some(_) => guarded(&clause.body, clause.range()),
                    None => Block {
                        body: &clause.body,
                        kind: BlockKind::Else(stmt),
                    },
                });
            }
        }
        Stmt::For(s) => {
            out.push(guarded(&s.body, s.range()));
            out.push(guarded(&s.orelse, s.range()));
        }
        Stmt::While(s) => {
            out.push(guarded(&s.body, s.range()));
            out.push(guarded(&s.orelse, s.range()));
        }
        Stmt::With(s) => out.push(guarded(&s.body, s.range())),
        Stmt::Try(s) => {
            out.push(guarded(&s.body, s.range()));
            for ast::ExceptHandler::ExceptHandler(h) in &s.handlers {
                out.push(guarded(&h.body, h.range()));
            }
            out.push(guarded(&s.orelse, s.range()));
            out.push(Block {
                body: &s.finalbody,
                kind: BlockKind::Always,
            });
        }
        Stmt::Match(s) => {
            for case in &s.cases {
                out.push(guarded(&case.body, case.range()));
            }
        }
        _ => {}
    }
    out
}

/// A `return` or `raise` inside a compound statement (not inside a nested function or class):
/// the statements after it run only when it does not.
fn find_exit(stmt: &Stmt, depth: usize) -> Option<&Stmt> {
    if depth > MAX_DEPTH {
        return None;
    }
    blocks(stmt).into_iter().find_map(|b| {
        b.body.iter().find_map(|s| match s {
            Stmt::Return(_) | Stmt::Raise(_) => Some(s),
            _ => find_exit(s, depth + 1),
        })
    })
}
