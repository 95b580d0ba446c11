//! Assignments to Kopf's settings (`settings.posting.enabled = False`,
//! `settings.persistence.diffbase_storage = kopf.StatusDiffBaseStorage()`, ...), each with when
//! it runs and whether it runs unconditionally at the top level of an `@kopf.on.startup`
//! handler, the one place where it proves what Kopf runs with.
//!
//! Kopf facts used here (nolar/kopf 1.44.6, the same since 1.0):
//! - a startup handler is registered by calling `kopf.on.startup(...)` and applying the result
//!   to the function (`kopf/on.py` `startup()`: keyword-only arguments, returns the decorator;
//!   `registry=` puts the handler into that registry instead of the default one);
//! - Kopf calls handlers with keyword arguments only (`kopf/_core/actions/invocation.py`
//!   `invoke()`: `fn(**kwargs)`), and an activity handler's keywords include `settings`, the
//!   operator's `OperatorSettings` (`kopf/_core/intents/causes.py` `ActivityCause`). Only a
//!   parameter named `settings` (or `kwargs['settings']` through `**kwargs`) receives them;
//! - `OperatorSettings` holds the groups [`GROUPS`] (`kopf/_cogs/configs/configuration.py`,
//!   1.38.0), e.g. `posting` (`enabled`, `level`, `loggers`) and `persistence`
//!   (`diffbase_storage`, `progress_storage`, `finalizer`).

use std::collections::HashMap;

use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::{Ranged, TextRange};

use super::conditions::{Branch, EnvDecision, EvalContext, EvalError, IfChain, Known};
use super::flow::{Condition, MAX_DEPTH, blocks, find_exit};
use super::names::{Imports, chain};
use super::scope::{Base, Binding, Scope};
use super::{Env, Module, SourceLine};

/// The groups of Kopf's `OperatorSettings` (1.38.0). Through a name not known to be the
/// settings, `<anything>.<group>.<field>` is still read as an assignment to `<group>.<field>`.
pub const GROUPS: &[&str] = &[
    "process",
    "posting",
    "peering",
    "watching",
    "batching",
    "scanning",
    "admission",
    "execution",
    "background",
    "networking",
    "persistence",
];

/// When an assignment runs relative to the operator's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Phase {
    /// Module level: when the file is imported, before any startup handler.
    Import,
    /// In an `@kopf.on.startup` handler (or a function nested in one).
    Startup,
    /// In any other function: whenever it is called, after startup.
    Runtime,
}

/// What an assignment sets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A path under Kopf's settings: `["posting", "enabled"]`, or `["posting"]` when the whole
    /// group is replaced.
    Setting(Vec<String>),
    /// A block nested deeper than CPython allows (100 levels), not read: whatever it sets is
    /// unknown. Its range, to tell what its text mentions.
    Unread(TextRange),
}

/// The assigned value as the source gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Value {
    /// The expression's text as written (for [`ValueKind::Derived`], the statement's text;
    /// `not read` for [`Target::Unread`]).
    pub text: String,
    /// What kind of expression it is.
    pub kind: ValueKind,
}

/// The kind of an assigned expression, as far as the source alone tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValueKind {
    /// `True` / `False`.
    Bool(bool),
    /// `None`.
    None,
    /// An integer literal that fits an i64.
    Int(i64),
    /// A dotted name through the imports: `logging.CRITICAL`, `kopf.StatusDiffBaseStorage`.
    Name(String),
    /// No expression of its own: an augmented assignment (`x += 1`, the value depends on the one
    /// before) or an unpacking of what the source does not spell out (`a.x, b = f()`); the
    /// text is the statement's.
    Derived,
    /// Anything else (a call, a local variable, an expression).
    Other,
}

/// One assignment to Kopf's settings, in source order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignment {
    /// What it sets.
    pub target: Target,
    /// The value.
    pub value: Value,
    /// The statement.
    pub at: SourceLine,
    /// When it runs.
    pub phase: Phase,
    /// `None`: unconditional, at the top level of an unconditionally registered startup handler.
    pub condition: Option<Condition>,
    /// The `if` conditions around it that the operator's env decided true (so they do not make
    /// it conditional), outermost first.
    pub decided: Vec<EnvDecision>,
}

/// An assignment that looks like one to Kopf's settings but provably never changes them (a
/// parameter Kopf does not fill, code that never runs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ignored {
    /// What it would set.
    pub target: Target,
    /// The statement.
    pub at: SourceLine,
    /// Why it does not count, in words.
    pub why: String,
}

/// Everything the reader found in one file, in source order.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Settings {
    /// Assignments that may reach Kopf's settings.
    pub assignments: Vec<Assignment>,
    /// Assignments that never do.
    pub ignored: Vec<Ignored>,
}

/// The assignments to Kopf's settings in `module`, with `if` conditions on `os.environ` decided
/// by `env` where it can (a branch it decides true does not make an assignment conditional; one
/// it decides false never runs).
pub fn read(module: &Module, env: &Env) -> Settings {
    let body = module.suite();
    let mut walker = Walker {
        module,
        env,
        imports: Imports::default(),
        registered: HashMap::new(),
        found: Settings::default(),
        decided: Vec::new(),
    };
    walker.module_imports(body, 0);
    walker.call_registrations(body, None, 0);
    let mut scope = Scope::default();
    walker.body(body, Place::Module, None, &mut scope, 0);
    walker.found
}

/// The settings path `attrs` names when its base is not known to be the settings: from the last
/// group name followed by a field (`memo.settings.posting.enabled` → `posting.enabled`).
fn group_path(attrs: &[&str]) -> Option<Vec<String>> {
    let last = attrs.len().checked_sub(1)?;
    let i = attrs[..last].iter().rposition(|a| GROUPS.contains(a))?;
    Some(attrs[i..].iter().map(|a| a.to_string()).collect())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// Module level.
    Module,
    /// An `@kopf.on.startup` handler's body (or a function nested in it).
    Startup,
    /// Any other function or a class body.
    Other,
}

struct Walker<'t> {
    module: &'t Module,
    /// The operator container's environment, to decide `os.environ` conditions.
    env: &'t Env,
    imports: Imports,
    /// Functions registered by a module-level `kopf.on.startup(...)(name)` call, with the
    /// condition the registration runs under.
    registered: HashMap<String, Option<Condition>>,
    found: Settings,
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

/// Why a `kopf.on.startup(...)` call may register the handler elsewhere than where `kopf run`
/// looks: a `registry=` argument.
fn registry_doubt(call: &ast::ExprCall) -> Option<String> {
    call.arguments
        .keywords
        .iter()
        .any(|k| k.arg.as_ref().is_some_and(|a| a.as_str() == "registry"))
        .then(|| "registered with `registry=`: it runs only if the operator runs that registry".into())
}

impl Walker<'_> {
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
                let c = condition.cloned().or_else(|| block.condition(self.module));
                self.call_registrations(block.body, c.as_ref(), depth + 1);
            }
        }
    }

    fn registration(&self, f: &ast::StmtFunctionDef, place: Place) -> Registration {
        for decorator in &f.decorator_list {
            match &decorator.expression {
                Expr::Call(call) if self.imports.qualified(&call.func).as_deref() == Some("kopf.on.startup") => {
                    return match registry_doubt(call) {
                        Some(why) => Registration::Doubtful(Condition { guard: None, why }),
                        None => Registration::Yes,
                    };
                }
                e if self.imports.qualified(e).as_deref() == Some("kopf.on.startup") => {
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

    /// What `expr` evaluates to under the operator's env, with `scope`'s names and imports.
    fn eval(&self, expr: &Expr, scope: &Scope) -> Result<Known, EvalError> {
        EvalContext {
            env: self.env,
            names: &scope.env_names,
            local_imports: &scope.imports,
            module_imports: &self.imports,
        }
        .eval(expr)
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
                    unreachable = Some(self.module.statement(stmt.range()));
                }
                _ if after_exit.is_none() && place != Place::Module => {
                    after_exit = find_exit(stmt, depth).map(|exit| self.exit_condition(exit));
                }
                _ => {}
            }
        }
    }

    /// What a `return`/`raise` inside a compound statement makes of the statements after it.
    fn exit_condition(&self, exit: &Stmt) -> Condition {
        let keyword = if matches!(exit, Stmt::Raise(_)) {
            "raise"
        } else {
            "return"
        };
        let at = self.module.statement(exit.range());
        Condition {
            why: format!("a conditional {keyword} on line {} comes before it", at.line),
            guard: Some(at),
        }
    }

    /// Blocks nested deeper than [`MAX_DEPTH`] are not walked (CPython itself rejects more than
    /// 100 levels of indentation: "too many levels of indentation"): what they set is unknown.
    fn too_deep(&mut self, body: &[Stmt]) {
        let (Some(first), Some(last)) = (body.first(), body.last()) else {
            return;
        };
        let range = TextRange::new(first.range().start(), last.range().end());
        self.found.assignments.push(Assignment {
            target: Target::Unread(range),
            value: Value {
                text: "not read".into(),
                kind: ValueKind::Other,
            },
            decided: Vec::new(),
            phase: Phase::Startup,
            condition: Some(Condition {
                guard: None,
                why: format!("nested deeper than {MAX_DEPTH} blocks: not read"),
            }),
            at: self.module.first_line(range),
        });
    }

    /// Statements after an unconditional return: their assignments never run.
    fn unreachable(&mut self, stmt: &Stmt, exit: &SourceLine, depth: usize) {
        self.never_runs(
            std::slice::from_ref(stmt),
            &format!("unreachable: after `{}` on line {}", exit.text, exit.line),
            depth,
        );
    }

    /// Statements that never run (after an unconditional return, or in a branch whose condition
    /// the env decides false): their assignments are ignored, with `why`.
    fn never_runs(&mut self, stmts: &[Stmt], why: &str, depth: usize) {
        let mut scratch = Settings::default();
        std::mem::swap(&mut scratch, &mut self.found);
        let mut scope = Scope::default();
        for stmt in stmts {
            self.statement(stmt, Place::Other, None, &mut scope, depth);
        }
        std::mem::swap(&mut scratch, &mut self.found);
        let mut lines: Vec<(Target, SourceLine)> = scratch
            .assignments
            .into_iter()
            .map(|a| (a.target, a.at))
            .chain(scratch.ignored.into_iter().map(|i| (i.target, i.at)))
            .collect();
        lines.dedup();
        for (target, at) in lines {
            self.found.ignored.push(Ignored {
                target,
                at,
                why: why.to_string(),
            });
        }
    }

    fn statement(&mut self, stmt: &Stmt, place: Place, condition: Option<&Condition>, scope: &mut Scope, depth: usize) {
        match stmt {
            Stmt::FunctionDef(f) => self.function(f, place, condition, scope, depth),
            Stmt::ClassDef(c) => {
                let mut inner = Scope::class(&scope.imports);
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
                    let at = Place::at(place, condition);
                    self.record(stmt, base, &attrs, Some(value), at, scope);
                }
            }
            Stmt::If(s) => self.if_statement(stmt, s, place, condition, scope, depth),
            _ => {
                // The innermost condition is the one cited; `finally` keeps the outer one.
                for block in blocks(stmt) {
                    let c = block.condition(self.module).or_else(|| condition.cloned());
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
        let def = self.module.first_line(f.range());
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
                let doubt = startup_doubt(f, &def, registration, place, condition);
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
            Expr::Name(n) => self.bind(stmt, n, value, condition, scope),
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
                    let v = values.map(|vs| &vs[i]);
                    self.assign(stmt, t, v, place, condition, scope);
                }
            }
            Expr::Attribute(_) => {
                let (base, attrs) = chain(target);
                self.record(stmt, base, &attrs, value, Place::at(place, condition), scope);
            }
            _ => {}
        }
    }

    /// `name = value`: a name bound to (a part of) Kopf's settings, to a value the env gives, or
    /// to neither.
    fn bind(
        &mut self,
        stmt: &Stmt,
        n: &ast::ExprName,
        value: Option<&Expr>,
        condition: Option<&Condition>,
        scope: &mut Scope,
    ) {
        scope.env_names.remove(n.id.as_str());
        if let Some((path, bound_under)) = value.and_then(|v| scope.settings_path(v)) {
            let condition = condition.cloned().or(bound_under);
            scope.names.insert(n.id.to_string(), Binding { path, condition });
            return;
        }
        scope.unbind(n.id.as_str(), condition);
        let Some(v) = value else { return };
        let at = self.module.statement(stmt.range());
        let bound = match (self.eval(v, scope), condition) {
            (Err(EvalError::NotEnv), _) => return,
            (Err(e), _) => Err(e),
            (Ok(_), Some(c)) => Err(EvalError::Env(format!(
                "`{}` is assigned on line {} only {}",
                n.id, at.line, c.why
            ))),
            (Ok(mut k), None) => {
                k.facts.push(format!("{} (line {})", at.text, at.line));
                Ok(k)
            }
        };
        scope.env_names.insert(n.id.to_string(), bound);
    }

    /// An assignment to `<base>.<attrs>`: recorded when it names a setting.
    fn record(&mut self, stmt: &Stmt, base: &Expr, attrs: &[&str], value: Option<&Expr>, at: At<'_>, scope: &Scope) {
        let resolved = scope.base(base);
        let path: Vec<String> = match &resolved {
            Base::Settings(path, _) => path
                .iter()
                .cloned()
                .chain(attrs.iter().map(|a| a.to_string()))
                .collect(),
            // Not resolved to Kopf's settings: the shape `<anything>.<group>.<field>` alone.
            _ => match group_path(attrs) {
                Some(path) => path,
                None => return,
            },
        };
        if path.is_empty() {
            return;
        }
        let statement = self.module.statement(stmt.range());
        let base_text = self.module.slice(base.range()).to_string();
        let (phase, condition) = match (at.place, resolved) {
            (Place::Startup, Base::Settings(_, bound_under)) => (Phase::Startup, at.condition.cloned().or(bound_under)),
            (Place::Startup, Base::OtherParameter) => {
                self.found.ignored.push(Ignored {
                    target: Target::Setting(path),
                    at: statement,
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
        let value = match value {
            Some(v) => self.value(v, scope),
            None => Value {
                text: statement.text.clone(),
                kind: ValueKind::Derived,
            },
        };
        self.found.assignments.push(Assignment {
            target: Target::Setting(path),
            value,
            at: statement,
            phase,
            condition,
            decided: self.decided.clone(),
        });
    }

    fn value(&self, expr: &Expr, scope: &Scope) -> Value {
        let kind = match expr {
            Expr::BooleanLiteral(b) => ValueKind::Bool(b.value),
            Expr::NoneLiteral(_) => ValueKind::None,
            Expr::NumberLiteral(ast::ExprNumberLiteral {
                value: ast::Number::Int(i),
                ..
            }) if i.as_i64().is_some() => ValueKind::Int(i.as_i64().unwrap_or_default()),
            _ => match scope.imports.qualified(expr).or_else(|| self.imports.qualified(expr)) {
                Some(name) => ValueKind::Name(name),
                None => ValueKind::Other,
            },
        };
        Value {
            text: self.module.slice(expr.range()).to_string(),
            kind,
        }
    }

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
        let mut chain = IfChain::new();
        for (block, (test, range)) in blocks(stmt).into_iter().zip(tests) {
            let guard = self.module.first_line(range);
            let cx = EvalContext {
                env: self.env,
                names: &scope.env_names,
                local_imports: &scope.imports,
                module_imports: &self.imports,
            };
            match chain.next(&guard, test, &cx) {
                Branch::Runs(d) => {
                    self.decided.push(d);
                    self.body(block.body, place, condition, scope, depth + 1);
                    self.decided.pop();
                }
                Branch::Never(why) => self.never_runs(block.body, &why, depth + 1),
                Branch::Unknown(why) => {
                    let c = block.condition(self.module).map(|mut c| {
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
}

/// Where an assignment is: the kind of place, and the condition it runs under there.
#[derive(Clone, Copy)]
struct At<'c> {
    place: Place,
    condition: Option<&'c Condition>,
}

impl Place {
    fn at(self, condition: Option<&Condition>) -> At<'_> {
        At { place: self, condition }
    }
}

/// What makes a registered startup function's body conditional: a doubtful registration, a
/// module-level condition around it, or its definition inside another function or class.
fn startup_doubt(
    f: &ast::StmtFunctionDef,
    def: &SourceLine,
    registration: Registration,
    place: Place,
    condition: Option<&Condition>,
) -> Option<Condition> {
    match (registration, place, condition) {
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
            guard: Some(def.clone()),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_src(src: &str) -> Settings {
        read(&Module::parse("op.py", src).unwrap(), &Env::unknown())
    }

    fn paths(s: &Settings) -> Vec<(String, usize, bool)> {
        s.assignments
            .iter()
            .map(|a| match &a.target {
                Target::Setting(p) => (p.join("."), a.at.line, a.condition.is_none()),
                Target::Unread(_) => ("<unread>".into(), a.at.line, a.condition.is_none()),
            })
            .collect()
    }

    #[test]
    fn every_group_of_settings_is_read_not_only_posting() {
        let s = read_src(concat!(
            "import kopf\n",
            "\n",
            "@kopf.on.startup()\n",
            "def configure(settings: kopf.OperatorSettings, **_):\n",
            "    settings.scanning.disabled = True\n",
            "    settings.persistence.diffbase_storage = kopf.StatusDiffBaseStorage(field='status.b')\n",
            "    settings.persistence.progress_storage = kopf.StatusProgressStorage()\n",
            "    p = settings.peering\n",
            "    p.priority = 100\n",
            "    settings.watching.server_timeout += 10\n",
            "    if cond():\n",
            "        settings.posting.level = logging.CRITICAL\n",
        ));
        assert_eq!(
            paths(&s),
            [
                ("scanning.disabled".into(), 5, true),
                ("persistence.diffbase_storage".into(), 6, true),
                ("persistence.progress_storage".into(), 7, true),
                ("peering.priority".into(), 9, true),
                ("watching.server_timeout".into(), 10, true),
                ("posting.level".into(), 12, false),
            ]
        );
        let values: Vec<&ValueKind> = s.assignments.iter().map(|a| &a.value.kind).collect();
        assert_eq!(
            values,
            [
                &ValueKind::Bool(true),
                &ValueKind::Other,
                &ValueKind::Other,
                &ValueKind::Int(100),
                &ValueKind::Derived,
                &ValueKind::Other,
            ]
        );
        assert_eq!(
            s.assignments[1].value.text,
            "kopf.StatusDiffBaseStorage(field='status.b')"
        );
        assert!(s.assignments.iter().all(|a| a.phase == Phase::Startup));
    }

    #[test]
    fn names_through_imports_and_unknown_bases() {
        let s = read_src(concat!(
            "import kopf\n",
            "import logging as log\n",
            "settings.posting.enabled = False\n",
            "\n",
            "@kopf.on.create('x')\n",
            "def h(memo, **_):\n",
            "    memo.settings.persistence.finalizer = 'x/y'\n",
            "    memo.other.thing = 1\n",
            "\n",
            "@kopf.on.startup()\n",
            "def configure(s, settings, **_):\n",
            "    settings.posting.level = log.CRITICAL\n",
            "    s.posting.enabled = False\n",
        ));
        assert_eq!(
            paths(&s),
            [
                ("posting.enabled".into(), 3, false),
                ("persistence.finalizer".into(), 7, false),
                ("posting.level".into(), 12, true),
            ]
        );
        assert_eq!(
            s.assignments.iter().map(|a| a.phase).collect::<Vec<_>>(),
            [Phase::Import, Phase::Runtime, Phase::Startup]
        );
        assert_eq!(s.assignments[2].value.kind, ValueKind::Name("logging.CRITICAL".into()));
        assert_eq!(s.ignored.len(), 1);
        assert_eq!(
            s.ignored[0].target,
            Target::Setting(vec!["posting".into(), "enabled".into()])
        );
    }

    #[test]
    fn group_paths_start_at_the_last_group_with_a_field() {
        assert_eq!(
            group_path(&["memo", "posting", "enabled"]),
            Some(vec!["posting".into(), "enabled".into()])
        );
        assert_eq!(group_path(&["posting"]), None);
        assert_eq!(group_path(&["a", "b"]), None);
        assert_eq!(
            group_path(&["posting", "x", "peering"]),
            Some(vec!["posting".into(), "x".into(), "peering".into()])
        );
    }
}
