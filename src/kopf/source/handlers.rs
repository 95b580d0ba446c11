//! Every Kopf handler an operator's source registers, in the order Kopf registers them, with its
//! cause, id, resource, filters and options as written (`args.rs`). Nothing is resolved against
//! the cluster, and nothing the source does not spell out is guessed.
//!
//! Kopf 1.38.0 facts (nolar/kopf `kopf/on.py`, `kopf/_core/intents/registries.py`):
//! - each `@kopf.on.<cause>(...)` call returns a decorator that appends one handler to the
//!   registry and returns the function unchanged: stacked decorators register one handler each,
//!   the bottom one first (Python applies decorators bottom-up);
//! - the id is `id=`, else the function's `__qualname__` (`create_fn`, `Class.method`,
//!   `outer.<locals>.inner`; a lambda's is `lambda:<path>:<line>`, `get_callable_id`); the
//!   resource handlers (`create`, `update`, `resume`, `delete`, `field`, `event`, `daemon`,
//!   `timer`, `validate`, `mutate`, not `index`) append `/` and the `field=` path joined by
//!   dots (`generate_id(..., suffix=".".join(real_field))`): `@kopf.on.update(..., field='spec')`
//!   on `accept` is `accept/spec`;
//! - `@kopf.subhandler(...)` and `kopf.register(fn, ...)` register into the running handler,
//!   which must be a resource-changing one, their id prefixed by its id and `/`
//!   (`generate_id(..., prefix=parent_handler.id)`, no field suffix);
//! - `kopf.daemon`, `kopf.timer`, `kopf.index` and `kopf.register` are also exported at the top
//!   level (`kopf/__init__.py`).

mod args;
#[cfg(test)]
mod examples_tests;

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::Ranged;

pub use args::{Code, FieldPath, Filters, MetaFilter, Resource, Static};

use super::flow::{Condition, MAX_DEPTH, blocks};
use super::names::{Imports, literal};
use super::{Module, SourceLine};
use args::{Args, Cx, IdArg};

/// What a handler reacts to: the decorator's name in `kopf.on`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// `@kopf.on.startup`.
    Startup,
    /// `@kopf.on.cleanup`.
    Cleanup,
    /// `@kopf.on.login`.
    Login,
    /// `@kopf.on.probe`.
    Probe,
    /// `@kopf.on.resume`.
    Resume,
    /// `@kopf.on.create`.
    Create,
    /// `@kopf.on.update`.
    Update,
    /// `@kopf.on.delete`.
    Delete,
    /// `@kopf.on.field`.
    Field,
    /// `@kopf.on.event`.
    Event,
    /// `@kopf.on.daemon` / `@kopf.daemon`.
    Daemon,
    /// `@kopf.on.timer` / `@kopf.timer`.
    Timer,
    /// `@kopf.on.index` / `@kopf.index`.
    Index,
    /// `@kopf.on.validate`.
    Validate,
    /// `@kopf.on.mutate`.
    Mutate,
    /// `@kopf.subhandler` or `kopf.register(fn)`: a sub-handler of the running handler.
    Subhandler,
}

impl Cause {
    /// The cause a qualified decorator name registers (`kopf.on.create`, `kopf.daemon`, ...);
    /// `kopf.register(fn, ...)` is a call, not a decorator (see [`read`]).
    fn of(qualified: &str) -> Option<Cause> {
        let (in_on, name) = match qualified.strip_prefix("kopf.on.") {
            Some(name) => (true, name),
            None => (false, qualified.strip_prefix("kopf.")?),
        };
        let cause = match name {
            "startup" => Cause::Startup,
            "cleanup" => Cause::Cleanup,
            "login" => Cause::Login,
            "probe" => Cause::Probe,
            "resume" => Cause::Resume,
            "create" => Cause::Create,
            "update" => Cause::Update,
            "delete" => Cause::Delete,
            "field" => Cause::Field,
            "event" => Cause::Event,
            "daemon" => Cause::Daemon,
            "timer" => Cause::Timer,
            "index" => Cause::Index,
            "validate" => Cause::Validate,
            "mutate" => Cause::Mutate,
            "subhandler" => Cause::Subhandler,
            _ => return None,
        };
        // At the top level `kopf` exports only these decorators (`kopf.event` posts an event).
        (in_on || matches!(cause, Cause::Daemon | Cause::Timer | Cause::Index | Cause::Subhandler)).then_some(cause)
    }

    /// The decorator's name: `create`, `subhandler`, ...
    pub fn as_str(self) -> &'static str {
        match self {
            Cause::Startup => "startup",
            Cause::Cleanup => "cleanup",
            Cause::Login => "login",
            Cause::Probe => "probe",
            Cause::Resume => "resume",
            Cause::Create => "create",
            Cause::Update => "update",
            Cause::Delete => "delete",
            Cause::Field => "field",
            Cause::Event => "event",
            Cause::Daemon => "daemon",
            Cause::Timer => "timer",
            Cause::Index => "index",
            Cause::Validate => "validate",
            Cause::Mutate => "mutate",
            Cause::Subhandler => "subhandler",
        }
    }

    /// An operator activity (no resource).
    pub fn is_activity(self) -> bool {
        matches!(self, Cause::Startup | Cause::Cleanup | Cause::Login | Cause::Probe)
    }

    /// Whether Kopf appends the `field=` path to the id.
    fn field_in_id(self) -> bool {
        !self.is_activity() && !matches!(self, Cause::Index | Cause::Subhandler)
    }

    /// A resource-changing handler, which may have sub-handlers (`kopf/on.py` `subhandler()`).
    fn changing(self) -> bool {
        matches!(
            self,
            Cause::Resume | Cause::Create | Cause::Update | Cause::Delete | Cause::Field | Cause::Subhandler
        )
    }
}

/// A handler's id, as Kopf computes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HandlerId {
    /// Known from the source: `create_fn`, `field_fn/spec.field`, `create/task_a`.
    Known(String),
    /// Known only at run time: why, in words.
    Unknown(String),
}

/// The function a handler runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    /// Its name.
    pub name: String,
    /// Its `__qualname__` (`Class.method`, `outer.<locals>.inner`).
    pub qualname: String,
    /// The line of its `def` (or of a lambda).
    pub line: usize,
}

/// One handler the source registers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handler {
    /// The decorator's cause.
    pub cause: Cause,
    /// Kopf's id for it.
    pub id: HandlerId,
    /// The function it runs (`None`: `kopf.register` of something that is not a function the
    /// file defines).
    pub function: Option<Function>,
    /// The decorator (or registering call), its first line and its text.
    pub decorator: SourceLine,
    /// The resource, for a resource handler.
    pub resource: Option<Resource>,
    /// Its filters.
    pub filters: Filters,
    /// Every other keyword as found (`retries=`, `backoff=`, `timeout=`, `errors=`, `param=`,
    /// `optional=`, `registry=`, ...), in source order.
    pub options: Vec<(String, Static)>,
    /// `**mapping` splats in the call: any keyword above may come from them.
    pub splats: Vec<Code>,
    /// A sub-handler's parent handler's id.
    pub parent: Option<HandlerId>,
    /// What makes the registration conditional (an `if` around it, a function it is defined in,
    /// `registry=`); `None`: registered whenever the file is imported (or, for a sub-handler,
    /// whenever its parent runs).
    pub condition: Option<Condition>,
}

/// A decorator or call that looks like a registration but registers nothing Kopf runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The decorator or call.
    pub at: SourceLine,
    /// Why, in words.
    pub why: String,
}

/// What the reader found in one file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Handlers {
    /// The handlers, in registration order.
    pub handlers: Vec<Handler>,
    /// What registers nothing.
    pub skipped: Vec<Skipped>,
}

/// The handlers `module` registers.
pub fn read(module: &Module) -> Handlers {
    let mut walker = Walker {
        module,
        found: Handlers::default(),
    };
    let mut imports = Imports::default();
    module_imports(module.suite(), &mut imports, 0);
    let place = Place {
        imports,
        defs: defs(module.suite(), 0),
        consts: Rc::new(consts(module.suite())),
        prefix: String::new(),
        parents: Parents::Module,
        condition: None,
    };
    walker.body(module.suite(), &place, 0);
    walker.found
}

/// Imports anywhere at module level (inside `try`/`if` blocks too, not in functions).
fn module_imports(body: &[Stmt], imports: &mut Imports, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    for stmt in body {
        imports.add(stmt);
        for block in blocks(stmt) {
            module_imports(block.body, imports, depth + 1);
        }
    }
}

/// The module's string constants: a name bound exactly once, at module level, to a string
/// literal (`PLURAL = 'microservices'`, `GROUP, VERSION, PLURAL = 'a', 'v1', 'b'`), and never
/// bound again there (in a block, by another assignment): what a decorator's argument naming it
/// is, as Python evaluates it at import.
fn consts(body: &[Stmt]) -> HashMap<String, String> {
    fn names(target: &Expr, out: &mut Vec<String>) {
        match target {
            Expr::Name(n) => out.push(n.id.to_string()),
            Expr::Tuple(t) => t.elts.iter().for_each(|e| names(e, out)),
            Expr::List(l) => l.elts.iter().for_each(|e| names(e, out)),
            Expr::Starred(s) => names(&s.value, out),
            _ => {}
        }
    }
    fn rebound(body: &[Stmt], out: &mut Vec<String>, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        for stmt in body {
            match stmt {
                Stmt::Assign(a) => a.targets.iter().for_each(|t| names(t, out)),
                Stmt::AugAssign(a) => names(&a.target, out),
                Stmt::AnnAssign(a) => names(&a.target, out),
                Stmt::For(f) => names(&f.target, out),
                _ => {}
            }
            for block in blocks(stmt) {
                rebound(block.body, out, depth + 1);
            }
        }
    }
    let mut bound: HashMap<String, Option<String>> = HashMap::new();
    let mut bind = |name: String, value: Option<String>| {
        let seen = bound.contains_key(&name);
        bound.insert(name, if seen { None } else { value });
    };
    for stmt in body {
        if let Stmt::Assign(a) = stmt
            && let [target] = &a.targets[..]
        {
            match (target, &*a.value) {
                (Expr::Name(n), value) => bind(n.id.to_string(), literal(value).map(str::to_string)),
                (Expr::Tuple(t), Expr::Tuple(v)) if t.elts.len() == v.elts.len() => {
                    for (name, value) in t.elts.iter().zip(&v.elts) {
                        let mut n = Vec::new();
                        names(name, &mut n);
                        match (name, &n[..]) {
                            (Expr::Name(_), [one]) => bind(one.clone(), literal(value).map(str::to_string)),
                            _ => n.into_iter().for_each(|n| bind(n, None)),
                        }
                    }
                }
                (other, _) => {
                    let mut n = Vec::new();
                    names(other, &mut n);
                    n.into_iter().for_each(|n| bind(n, None));
                }
            }
            continue;
        }
        let mut n = Vec::new();
        rebound(std::slice::from_ref(stmt), &mut n, 0);
        n.into_iter().for_each(|n| bind(n, None));
    }
    bound.into_iter().filter_map(|(k, v)| Some((k, v?))).collect()
}

/// The names of the functions a body defines (in its blocks too, not in nested functions).
fn defs(body: &[Stmt], depth: usize) -> HashSet<String> {
    let mut out = HashSet::new();
    if depth > MAX_DEPTH {
        return out;
    }
    for stmt in body {
        if let Stmt::FunctionDef(f) = stmt {
            out.insert(f.name.to_string());
        }
        for block in blocks(stmt) {
            out.extend(defs(block.body, depth + 1));
        }
    }
    out
}

/// Whose sub-handlers a registration in this body would be.
#[derive(Debug, Clone)]
enum Parents {
    /// Module level (or a class body there): no handler runs.
    Module,
    /// The body of a handler: its registrations, each a possible parent.
    Handlers(Vec<(HandlerId, Cause)>),
    /// The body of a function that is not a handler (its `__qualname__`).
    Function(String),
}

/// Where the walk is: the names in scope, the `__qualname__` prefix, whose sub-handlers would
/// register here, and what makes the body run only sometimes.
#[derive(Debug, Clone)]
struct Place {
    imports: Imports,
    defs: HashSet<String>,
    /// Module-level string constants ([`consts`]); empty in a function's body, whose locals may
    /// shadow them.
    consts: Rc<HashMap<String, String>>,
    prefix: String,
    parents: Parents,
    condition: Option<Condition>,
}

impl Place {
    fn cx<'a>(&'a self, module: &'a Module) -> Cx<'a> {
        Cx {
            module,
            imports: &self.imports,
            defs: &self.defs,
            consts: &self.consts,
        }
    }
}

/// One registering call: its cause, the call, where it is, and the function it registers.
struct Registration<'s> {
    cause: Cause,
    call: &'s ast::ExprCall,
    at: SourceLine,
    function: Option<Function>,
    /// A decorator below this one that wraps the function first (its text).
    wrapped_by: Option<String>,
    /// `kopf.register(fn, ...)`: the call takes the function as its first argument.
    registers: bool,
}

struct Walker<'m> {
    module: &'m Module,
    found: Handlers,
}

impl Walker<'_> {
    fn body(&mut self, body: &[Stmt], place: &Place, depth: usize) {
        if depth > MAX_DEPTH {
            if let Some(first) = body.first() {
                self.found.skipped.push(Skipped {
                    at: self.module.first_line(first.range()),
                    why: format!("nested deeper than {MAX_DEPTH} blocks: not read"),
                });
            }
            return;
        }
        let mut place = place.clone();
        for stmt in body {
            match stmt {
                Stmt::Import(_) | Stmt::ImportFrom(_) => place.imports.add(stmt),
                Stmt::FunctionDef(f) => self.function(f, &place, depth),
                Stmt::ClassDef(c) => {
                    let mut inner = place.clone();
                    inner.prefix = format!("{}{}.", place.prefix, c.name);
                    inner.defs = defs(&c.body, 0);
                    self.body(&c.body, &inner, depth + 1);
                }
                Stmt::Expr(ast::StmtExpr { value, .. }) => self.call(stmt, value, &place),
                Stmt::Assign(a) => self.call(stmt, &a.value, &place),
                _ => {
                    for block in blocks(stmt) {
                        let mut inner = place.clone();
                        inner.condition = block.condition(self.module).or_else(|| place.condition.clone());
                        self.body(block.body, &inner, depth + 1);
                    }
                }
            }
        }
    }

    /// A function definition: its decorators' registrations, bottom first, then its body.
    fn function(&mut self, f: &ast::StmtFunctionDef, place: &Place, depth: usize) {
        let cx = place.cx(self.module);
        let function = Function {
            name: f.name.to_string(),
            qualname: format!("{}{}", place.prefix, f.name),
            line: self.module.line(f.name.range().start()),
        };
        let mut wrapped_by: Option<String> = None;
        let mut registered = Vec::new();
        for decorator in f.decorator_list.iter().rev() {
            let at = self.module.statement(decorator.range());
            let cause = match &decorator.expression {
                Expr::Call(call) => cx
                    .qualified(&call.func)
                    .as_deref()
                    .and_then(Cause::of)
                    .map(|c| (c, call)),
                bare => {
                    if let Some(cause) = cx.qualified(bare).as_deref().and_then(Cause::of) {
                        self.found.skipped.push(Skipped {
                            at,
                            why: bare_decorator(cause),
                        });
                        continue;
                    }
                    None
                }
            };
            match cause {
                Some((cause, call)) => {
                    let r = Registration {
                        cause,
                        call,
                        at,
                        function: Some(function.clone()),
                        wrapped_by: wrapped_by.clone(),
                        registers: false,
                    };
                    registered.extend(self.register(r, place));
                }
                None => wrapped_by = wrapped_by.or(Some(at.text)),
            }
        }
        let mut inner = place.clone();
        inner.prefix = format!("{}.<locals>.", function.qualname);
        inner.defs.extend(defs(&f.body, 0));
        inner.consts = Rc::new(HashMap::new());
        if registered.is_empty() {
            inner.parents = Parents::Function(function.qualname.clone());
            inner.condition = Some(Condition {
                why: format!(
                    "defined in the function `{}` (line {}): registered only when it runs",
                    function.qualname, function.line
                ),
                guard: Some(self.module.first_line(f.name.range())),
            });
        } else {
            inner.parents = Parents::Handlers(registered);
        }
        self.body(&f.body, &inner, depth + 1);
    }

    /// `kopf.on.create(...)(fn)` (or `x = ...`) and `kopf.register(fn, ...)` as statements.
    fn call(&mut self, stmt: &Stmt, value: &Expr, place: &Place) {
        let Expr::Call(outer) = value else { return };
        let cx = place.cx(self.module);
        let at = self.module.statement(stmt.range());
        let function_named = |e: &Expr| match e {
            Expr::Name(n) if place.defs.contains(n.id.as_str()) => Some(Function {
                name: n.id.to_string(),
                qualname: format!("{}{}", place.prefix, n.id),
                line: self.module.line(n.range().start()),
            }),
            _ => None,
        };
        if cx
            .qualified(&outer.func)
            .as_deref()
            .is_some_and(|q| q == "kopf.register" || q == "kopf.on.register")
        {
            let fn_keyword = outer
                .arguments
                .keywords
                .iter()
                .find(|k| k.arg.as_ref().is_some_and(|a| a.as_str() == "fn"));
            let function = outer
                .arguments
                .args
                .first()
                .or(fn_keyword.map(|k| &k.value))
                .and_then(function_named);
            let r = Registration {
                cause: Cause::Subhandler,
                call: outer,
                at,
                function,
                wrapped_by: None,
                registers: true,
            };
            self.register(r, place);
            return;
        }
        if let Expr::Call(inner) = &*outer.func
            && let Some(cause) = cx.qualified(&inner.func).as_deref().and_then(Cause::of)
            && let [target] = &*outer.arguments.args
        {
            let r = Registration {
                cause,
                call: inner,
                at,
                function: function_named(target),
                wrapped_by: None,
                registers: false,
            };
            self.register(r, place);
        }
    }

    /// Records one registration (one per possible parent for a sub-handler); returns the
    /// handlers registered, with their ids, as parents for what the function's body registers.
    fn register(&mut self, r: Registration<'_>, place: &Place) -> Vec<(HandlerId, Cause)> {
        let args = place.cx(self.module).args(r.call, r.registers);
        let own = own_id(&r, &args);
        let condition = registry_condition(&args).or_else(|| place.condition.clone());
        let make = |id: HandlerId, parent: Option<HandlerId>| Handler {
            cause: r.cause,
            id,
            function: r.function.clone(),
            decorator: r.at.clone(),
            resource: (!r.cause.is_activity() && r.cause != Cause::Subhandler).then(|| args.resource.clone()),
            filters: args.filters.clone(),
            options: args.options.clone(),
            splats: args.splats.clone(),
            parent,
            condition: condition.clone(),
        };
        if r.cause != Cause::Subhandler {
            let handler = make(own, None);
            let parent = (handler.id.clone(), handler.cause);
            self.found.handlers.push(handler);
            return vec![parent];
        }
        let mut out = Vec::new();
        match &place.parents {
            Parents::Module => self.found.skipped.push(Skipped {
                at: r.at.clone(),
                why: "a sub-handler outside any handler: Kopf finds no running handler (LookupError at import)".into(),
            }),
            Parents::Function(name) => {
                let why = format!(
                    "a sub-handler in `{name}`, which is not a handler: its parent is whichever handler calls it, known only at run time"
                );
                let handler = make(HandlerId::Unknown(why), None);
                out.push((handler.id.clone(), handler.cause));
                self.found.handlers.push(handler);
            }
            Parents::Handlers(parents) => {
                for (parent, cause) in parents {
                    if !cause.changing() {
                        self.found.skipped.push(Skipped {
                            at: r.at.clone(),
                            why: format!(
                                "a sub-handler of the {} handler {}: Kopf raises TypeError (sub-handlers are only supported for resource-changing handlers)",
                                cause.as_str(),
                                describe(parent)
                            ),
                        });
                        continue;
                    }
                    let handler = make(child_id(parent, &own), Some(parent.clone()));
                    out.push((handler.id.clone(), handler.cause));
                    self.found.handlers.push(handler);
                }
            }
        }
        out
    }
}

/// The id Kopf gives a registration before any parent prefix: `id=` or the function's
/// `__qualname__`, with the `field=` path for a resource handler.
fn own_id(r: &Registration<'_>, args: &Args) -> HandlerId {
    let base = match (&args.id, &r.function, &r.wrapped_by) {
        (Some(IdArg::Literal(id)), _, _) => id.clone(),
        (Some(IdArg::Unknown(code)), _, _) => {
            return HandlerId::Unknown(format!("`id={}` is not a literal", code.text));
        }
        (None, Some(f), None) => f.qualname.clone(),
        (None, Some(_), Some(wrapper)) => {
            return HandlerId::Unknown(format!(
                "the function is wrapped by `{wrapper}` first: its id is the wrapper's `__qualname__` unless that uses functools.wraps"
            ));
        }
        (None, None, _) => {
            return HandlerId::Unknown(
                "no `id=` and no function the file defines: the id is the callable's `__qualname__` (a lambda's holds its file path)".into(),
            );
        }
    };
    if !r.cause.field_in_id() {
        return HandlerId::Known(base);
    }
    match &args.filters.field {
        None => HandlerId::Known(base),
        Some(FieldPath::Path(path)) if path.join(".").is_empty() => HandlerId::Known(base),
        Some(FieldPath::Path(path)) => HandlerId::Known(format!("{base}/{}", path.join("."))),
        Some(FieldPath::Unknown(code)) => HandlerId::Unknown(format!(
            "`{base}/` and the `field={}` path, which is not a literal",
            code.text
        )),
    }
}

/// A sub-handler's id under `parent`.
fn child_id(parent: &HandlerId, own: &HandlerId) -> HandlerId {
    match (parent, own) {
        (HandlerId::Known(p), HandlerId::Known(o)) => HandlerId::Known(format!("{p}/{o}")),
        (HandlerId::Unknown(why), _) => HandlerId::Unknown(format!("its parent's id is unknown: {why}")),
        (_, HandlerId::Unknown(why)) => HandlerId::Unknown(why.clone()),
    }
}

/// A handler id in words: `` `create_fn` `` or `an id known only at run time`.
fn describe(id: &HandlerId) -> String {
    match id {
        HandlerId::Known(id) => format!("`{id}`"),
        HandlerId::Unknown(_) => "whose id is known only at run time".into(),
    }
}

/// `registry=`: the handler goes into that registry, which runs only if the operator runs it.
fn registry_condition(args: &Args) -> Option<Condition> {
    args.options
        .iter()
        .any(|(name, _)| name == "registry")
        .then(|| Condition {
            guard: None,
            why: "registered with `registry=`: it runs only if the operator runs that registry".into(),
        })
}

/// Why a decorator used without `()` registers nothing (Kopf 1.38 `kopf/on.py`).
fn bare_decorator(cause: Cause) -> String {
    let name = cause.as_str();
    if cause.is_activity() || cause == Cause::Subhandler {
        format!("`@{name}` without `()`: it takes keyword arguments only, so importing the file fails (TypeError)")
    } else {
        format!(
            "`@{name}` without `()`: Kopf takes the function for the resource name and returns a decorator; nothing is registered"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn read_src(src: &str) -> Handlers {
        read(&Module::parse("op.py", src).unwrap())
    }

    fn ids(h: &Handlers) -> Vec<String> {
        h.handlers
            .iter()
            .map(|h| match &h.id {
                HandlerId::Known(id) => format!("{} {id}", h.cause.as_str()),
                HandlerId::Unknown(why) => format!("{} ?({why})", h.cause.as_str()),
            })
            .collect()
    }

    #[test]
    fn stacked_decorators_register_bottom_first_with_field_suffixes() {
        let h = read_src(concat!(
            "import kopf\n",
            "\n",
            "@kopf.on.create('platform.example.io', 'v1alpha1', 'microservices')\n",
            "@kopf.on.update('platform.example.io', 'v1alpha1', 'microservices', field='spec')\n",
            "@kopf.on.resume('platform.example.io', 'v1alpha1', 'microservices')\n",
            "def accept(**_):\n",
            "    pass\n",
        ));
        assert_eq!(ids(&h), ["resume accept", "update accept/spec", "create accept"]);
        let first = &h.handlers[0];
        assert_eq!(first.decorator.line, 5);
        assert_eq!(
            first.decorator.text,
            "@kopf.on.resume('platform.example.io', 'v1alpha1', 'microservices')"
        );
        let f = first.function.as_ref().unwrap();
        assert_eq!((f.name.as_str(), f.qualname.as_str(), f.line), ("accept", "accept", 6));
        assert!(first.condition.is_none() && h.skipped.is_empty());
    }

    #[test]
    fn ids_follow_kopfs_rule() {
        let h = read_src(concat!(
            "import kopf\n",
            "from kopf import on as o\n",
            "@kopf.on.startup(id='configure')\n",
            "def c(**_): pass\n",
            "@o.field('kex', field=['spec', 'x'], id='f')\n",
            "def fld(**_): pass\n",
            "@kopf.on.index('kex', field='spec')\n",
            "def idx(**_): pass\n",
            "class Ops:\n",
            "    @kopf.timer('kex', interval=5)\n",
            "    def tick(**_): pass\n",
            "@kopf.on.create('kex', id=NAME)\n",
            "@kopf.on.update('kex', field=FIELD)\n",
            "@functools.lru_cache\n",
            "@kopf.on.delete('kex')\n",
            "def many(**_): pass\n",
            "def h(**_): pass\n",
            "kopf.on.event('pods')(h)\n",
        ));
        assert_eq!(
            ids(&h)[..5],
            [
                "startup configure",
                "field f/spec.x",
                "index idx",
                "timer Ops.tick",
                "delete many",
            ]
        );
        let unknown = &ids(&h)[5..7];
        assert!(
            unknown[0].starts_with("update ?(the function is wrapped by `@functools.lru_cache` first"),
            "{unknown:?}"
        );
        assert_eq!(unknown[1], "create ?(`id=NAME` is not a literal)");
        assert_eq!(ids(&h)[7], "event h");
        assert_eq!(h.handlers[7].decorator.text, "kopf.on.event('pods')(h)");
        assert!(h.handlers[0].resource.is_none());
        assert_eq!(h.handlers[3].options, [("interval".to_string(), Static::Int(5))]);
    }

    #[test]
    fn subhandlers_take_their_parents_ids() {
        let h = read_src(concat!(
            "import kopf\n",
            "@kopf.on.create('kex')\n",
            "@kopf.on.update('kex', field='spec')\n",
            "def create(spec, **_):\n",
            "    for task in spec.get('tasks', []):\n",
            "        @kopf.subhandler(id=f'task_{task}')\n",
            "        def dynamic(**_): pass\n",
            "    @kopf.subhandler(id='fixed')\n",
            "    def fixed(**_): pass\n",
            "    def single(**_): pass\n",
            "    kopf.register(single)\n",
            "@kopf.daemon('kex')\n",
            "def d(**_):\n",
            "    kopf.register(fn=helper, id='x')\n",
            "def helper(**_):\n",
            "    @kopf.subhandler()\n",
            "    def inner(**_): pass\n",
            "@kopf.subhandler()\n",
            "def top(**_): pass\n",
        ));
        let got = ids(&h);
        assert_eq!(got[0], "update create/spec");
        assert_eq!(got[1], "create create");
        assert!(
            got[2].starts_with("subhandler ?(`id=f'task_{task}'` is not a literal"),
            "{got:?}"
        );
        assert_eq!(h.handlers[2].condition.as_ref().unwrap().why, "conditional on line 5");
        assert_eq!(h.handlers[2].parent, Some(HandlerId::Known("create/spec".into())));
        assert_eq!(
            got[4..8],
            [
                "subhandler create/spec/fixed",
                "subhandler create/fixed",
                "subhandler create/spec/create.<locals>.single",
                "subhandler create/create.<locals>.single",
            ]
        );
        assert!(h.handlers[4].condition.is_none());
        assert_eq!(got[8], "daemon d");
        assert!(got[9].starts_with("subhandler ?(a sub-handler in `helper`"), "{got:?}");
        assert_eq!(got.len(), 10);
        let whys: Vec<&str> = h.skipped.iter().map(|s| s.why.as_str()).collect();
        assert_eq!(whys.len(), 2, "{whys:?}");
        assert!(whys[0].starts_with("a sub-handler of the daemon handler `d`: Kopf raises TypeError"));
        assert!(whys[1].starts_with("a sub-handler outside any handler"));
    }

    #[test]
    fn resources_are_kept_raw_in_kopfs_forms() {
        let h = read_src(concat!(
            "import kopf\n",
            "@kopf.on.create('kopfexamples.kopf.dev')\n",
            "@kopf.on.create('kopf.dev', 'v1', 'kopfexamples')\n",
            "@kopf.on.create('kex')\n",
            "@kopf.on.create(group='kopf.dev', version='v1', plural='kopfexamples')\n",
            "@kopf.on.create('kopf.dev', kind='KopfExample')\n",
            "@kopf.on.event(kopf.EVERYTHING)\n",
            "def f(**_): pass\n",
        ));
        let r: Vec<Resource> = h.handlers.iter().map(|h| h.resource.clone().unwrap()).collect();
        let s = |v: &str| Some(Static::Str(v.into()));
        assert_eq!(r[0].positional, [Static::Everything]);
        assert_eq!(r[1].positional, [Static::Str("kopf.dev".into())]);
        assert_eq!(r[1].kind, s("KopfExample"));
        assert_eq!(
            (r[2].group.clone(), r[2].version.clone(), r[2].plural.clone()),
            (s("kopf.dev"), s("v1"), s("kopfexamples"))
        );
        assert!(r[2].positional.is_empty());
        assert_eq!(r[3].positional, [Static::Str("kex".into())]);
        assert_eq!(r[4].positional.len(), 3);
        assert_eq!(r[5].positional, [Static::Str("kopfexamples.kopf.dev".into())]);
    }

    /// Module constants as Kopf's own examples and many operators write the resource
    /// (`GROUP, VERSION, PLURAL = ...`, as the lab cluster's operators do): read as their
    /// literal; a name bound twice, conditionally, or to anything else stays unknown.
    #[test]
    fn module_string_constants_are_their_literal() {
        let h = read_src(concat!(
            "import os, kopf
",
            "GROUP, VERSION, PLURAL = 'platform.example.io', 'v1alpha1', 'microservices'
",
            "KIND = 'Microservice'
",
            "TWICE = 'a'
",
            "TWICE = 'b'
",
            "if os.environ.get('X'):
",
            "    KIND = 'Other'
",
            "COMPUTED = os.environ['P']
",
            "@kopf.on.create(GROUP, VERSION, PLURAL)
",
            "@kopf.on.create(KIND)
",
            "@kopf.on.create(TWICE)
",
            "@kopf.on.create(COMPUTED)
",
            "def f(**_): pass
",
        ));
        let r: Vec<Resource> = h.handlers.iter().map(|h| h.resource.clone().unwrap()).collect();
        assert!(matches!(r[0].positional[..], [Static::Unknown(_)]), "{:?}", r[0]);
        assert!(matches!(r[1].positional[..], [Static::Unknown(_)]), "{:?}", r[1]);
        assert!(matches!(r[2].positional[..], [Static::Unknown(_)]), "{:?}", r[2]);
        assert_eq!(
            r[3].positional,
            [
                Static::Str("platform.example.io".into()),
                Static::Str("v1alpha1".into()),
                Static::Str("microservices".into())
            ]
        );
    }

    #[test]
    fn conditions_and_mistakes_are_said() {
        let h = read_src(concat!(
            "import os, kopf\n",
            "if os.environ.get('WEBHOOKS'):\n",
            "    @kopf.on.validate('kex')\n",
            "    def check(**_): pass\n",
            "@kopf.on.create\n",
            "def bare(**_): pass\n",
            "@kopf.on.startup\n",
            "def bare_startup(**_): pass\n",
            "@kopf.on.probe(registry=mine)\n",
            "def p(**_): pass\n",
            "def setup():\n",
            "    @kopf.on.cleanup()\n",
            "    def bye(**_): pass\n",
            "kopf.event(body, type='Normal', reason='x', message='y')\n",
        ));
        assert_eq!(ids(&h), ["validate check", "probe p", "cleanup setup.<locals>.bye"]);
        let c = |i: usize| h.handlers[i].condition.as_ref().unwrap().why.clone();
        assert_eq!(c(0), "conditional on line 2");
        assert!(c(1).starts_with("registered with `registry=`"));
        assert!(c(2).starts_with("defined in the function `setup` (line 11)"));
        assert_eq!(h.skipped.len(), 2);
        assert!(h.skipped[0].why.contains("nothing is registered"), "{:?}", h.skipped);
        assert!(h.skipped[1].why.contains("TypeError"), "{:?}", h.skipped);
        // Not Kopf's.
        assert!(
            read_src("import notkopf as kopf\n@kopf.on.create('x')\ndef f(): pass\n")
                .handlers
                .is_empty()
        );
        assert!(read_src("@kopf.on.create('x')\ndef f(): pass\n").handlers.is_empty());
    }
}
