//! The arguments of a Kopf decorator call, as written: the resource (Kopf's positional forms
//! and keywords, kept raw, not resolved), the filters, the id and the other options. A value
//! the source does not spell out statically is [`Static::Unknown`], never a guess.
//!
//! Kopf 1.38.0 `kopf/on.py`: every resource decorator takes up to three positional names
//! (`'kopfexamples.kopf.dev'`, `'kopf.dev', 'v1', 'kopfexamples'`, `'kex'`, `kopf.EVERYTHING`;
//! read by `kopf/_cogs/structs/references.py` `Selector`) and the keywords `group=`,
//! `version=`, `kind=`, `plural=`, `singular=`, `shortcut=`, `category=`; the filters are
//! `labels=`, `annotations=` (values: a string, `kopf.PRESENT`, `kopf.ABSENT` or a callback),
//! `when=`, `field=` (a dotted string, or a list/tuple of names: `dicts.parse_field`),
//! `value=`, and `old=`/`new=` for update and field handlers.

use std::collections::{HashMap, HashSet};

use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::{Ranged, TextRange};

use super::super::Module;
use super::super::names::{Imports, literal};

/// A piece of source: its text (comments removed, lines joined) and 1-based line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Code {
    /// The expression's text.
    pub text: String,
    /// Its first line.
    pub line: usize,
}

/// An argument's value, as far as the source alone gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Static {
    /// A string literal (implicit concatenation joined).
    Str(String),
    /// An integer literal that fits an i64 (`-3` included).
    Int(i64),
    /// Another number literal (`1.0`, `1e3`): its text.
    Number(String),
    /// `True` / `False`.
    Bool(bool),
    /// `None`.
    None,
    /// `kopf.PRESENT`.
    Present,
    /// `kopf.ABSENT`.
    Absent,
    /// `kopf.EVERYTHING`.
    Everything,
    /// A callable Kopf calls: a lambda, a function the file defines, or `kopf.not_(...)` and
    /// its siblings. Its text and line.
    Callback(Code),
    /// Another name of Kopf's: `kopf.ErrorsMode.PERMANENT`.
    KopfName(String),
    /// A list, tuple or set literal.
    List(Vec<Static>),
    /// Not readable statically (a variable, a call, an f-string, `*args`): its text and line.
    Unknown(Code),
}

/// The resource a handler serves, as written (positional names first, then keywords).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Resource {
    /// Up to three positional names.
    pub positional: Vec<Static>,
    /// `group=`.
    pub group: Option<Static>,
    /// `version=`.
    pub version: Option<Static>,
    /// `kind=`.
    pub kind: Option<Static>,
    /// `plural=`.
    pub plural: Option<Static>,
    /// `singular=`.
    pub singular: Option<Static>,
    /// `shortcut=`.
    pub shortcut: Option<Static>,
    /// `category=`.
    pub category: Option<Static>,
}

/// `labels=` or `annotations=`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MetaFilter {
    /// A dict literal with string keys: each key and its value (a string, `kopf.PRESENT`,
    /// `kopf.ABSENT`, a callback, or unknown).
    Keys(Vec<(String, Static)>),
    /// Anything else (a variable, a dict with computed keys or `**`).
    Unknown(Code),
}

/// `field=`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldPath {
    /// The path's names: `'spec.x'` and `['spec', 'x']` are `["spec", "x"]`.
    Path(Vec<String>),
    /// Not a literal.
    Unknown(Code),
}

/// A handler's filters, each `None` when not given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filters {
    /// `labels=`.
    pub labels: Option<MetaFilter>,
    /// `annotations=`.
    pub annotations: Option<MetaFilter>,
    /// `when=`: a callback, or unknown.
    pub when: Option<Static>,
    /// `field=`.
    pub field: Option<FieldPath>,
    /// `value=`.
    pub value: Option<Static>,
    /// `old=`.
    pub old: Option<Static>,
    /// `new=`.
    pub new: Option<Static>,
}

/// What `id=` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum IdArg {
    /// A string literal.
    Literal(String),
    /// Anything else but `None`.
    Unknown(Code),
}

/// A decorator call's arguments, sorted out.
#[derive(Debug, Default)]
pub(super) struct Args {
    pub resource: Resource,
    pub filters: Filters,
    pub id: Option<IdArg>,
    /// `fn=` or the first positional argument of `kopf.register(fn, ...)`.
    pub function: Option<Static>,
    /// Every other keyword, in source order.
    pub options: Vec<(String, Static)>,
    /// `**mapping` splats: any keyword may come from them.
    pub splats: Vec<Code>,
}

/// What an argument is read against: the file, the names its imports bind, and the functions
/// it defines (which make a name a callback).
pub(super) struct Cx<'a> {
    pub module: &'a Module,
    pub imports: &'a Imports,
    pub defs: &'a HashSet<String>,
    /// Module-level string constants (`PLURAL = 'microservices'`), which an argument naming
    /// one is.
    pub consts: &'a HashMap<String, String>,
}

impl Cx<'_> {
    pub(super) fn code(&self, range: TextRange) -> Code {
        let at = self.module.statement(range);
        Code {
            text: at.text,
            line: at.line,
        }
    }

    pub(super) fn qualified(&self, expr: &Expr) -> Option<String> {
        self.imports.qualified(expr)
    }

    /// The arguments of `call`; `registers` says it is `kopf.register(fn, ...)`, whose first
    /// positional argument is the function.
    pub(super) fn args(&self, call: &ast::ExprCall, registers: bool) -> Args {
        let mut args = Args::default();
        for (i, e) in call.arguments.args.iter().enumerate() {
            let v = self.value(e);
            if registers && i == 0 {
                args.function = Some(v);
            } else {
                args.resource.positional.push(v);
            }
        }
        for k in &call.arguments.keywords {
            match &k.arg {
                Some(name) => self.keyword(&mut args, name.as_str(), &k.value),
                None => args.splats.push(self.code(k.range())),
            }
        }
        args
    }

    fn keyword(&self, args: &mut Args, name: &str, e: &Expr) {
        let r = &mut args.resource;
        let f = &mut args.filters;
        let slot = match name {
            "group" => &mut r.group,
            "version" => &mut r.version,
            "kind" => &mut r.kind,
            "plural" => &mut r.plural,
            "singular" => &mut r.singular,
            "shortcut" => &mut r.shortcut,
            "category" => &mut r.category,
            "when" => &mut f.when,
            "value" => &mut f.value,
            "old" => &mut f.old,
            "new" => &mut f.new,
            "fn" => &mut args.function,
            "labels" => return f.labels = Some(self.meta(e)),
            "annotations" => return f.annotations = Some(self.meta(e)),
            "field" => return f.field = self.field(e),
            "id" => {
                return args.id = match e {
                    Expr::NoneLiteral(_) => None,
                    _ => Some(match literal(e) {
                        Some(id) => IdArg::Literal(id.to_string()),
                        None => IdArg::Unknown(self.code(e.range())),
                    }),
                };
            }
            _ => return args.options.push((name.to_string(), self.value(e))),
        };
        *slot = Some(self.value(e));
    }

    /// `labels=` / `annotations=`: a dict literal with string keys, else unknown.
    fn meta(&self, e: &Expr) -> MetaFilter {
        let Expr::Dict(d) = e else {
            return MetaFilter::Unknown(self.code(e.range()));
        };
        let mut keys = Vec::new();
        for item in &d.items {
            match item.key.as_ref().and_then(literal) {
                Some(key) => keys.push((key.to_string(), self.value(&item.value))),
                None => return MetaFilter::Unknown(self.code(e.range())),
            }
        }
        MetaFilter::Keys(keys)
    }

    /// `field=`: a dotted string or a list/tuple of strings; `None` is no field.
    fn field(&self, e: &Expr) -> Option<FieldPath> {
        let elts = match e {
            Expr::NoneLiteral(_) => return None,
            Expr::StringLiteral(s) => {
                return Some(FieldPath::Path(
                    s.value.to_str().split('.').map(str::to_string).collect(),
                ));
            }
            Expr::List(l) => &l.elts[..],
            Expr::Tuple(t) => &t.elts[..],
            _ => return Some(FieldPath::Unknown(self.code(e.range()))),
        };
        let names: Option<Vec<String>> = elts.iter().map(|n| literal(n).map(str::to_string)).collect();
        Some(match names {
            Some(names) => FieldPath::Path(names),
            None => FieldPath::Unknown(self.code(e.range())),
        })
    }

    /// An argument's value, as far as the source gives it.
    pub(super) fn value(&self, e: &Expr) -> Static {
        match e {
            Expr::StringLiteral(s) => Static::Str(s.value.to_str().to_string()),
            Expr::NumberLiteral(n) => number(n, false).unwrap_or_else(|| Static::Number(self.code(e.range()).text)),
            Expr::UnaryOp(u) if u.op == ast::UnaryOp::USub => match &*u.operand {
                Expr::NumberLiteral(n) => number(n, true).unwrap_or_else(|| Static::Number(self.code(e.range()).text)),
                _ => Static::Unknown(self.code(e.range())),
            },
            Expr::BooleanLiteral(b) => Static::Bool(b.value),
            Expr::NoneLiteral(_) => Static::None,
            Expr::Lambda(_) => Static::Callback(self.code(e.range())),
            Expr::Name(n) if self.defs.contains(n.id.as_str()) => Static::Callback(self.code(e.range())),
            Expr::Name(n) if self.consts.contains_key(n.id.as_str()) => Static::Str(self.consts[n.id.as_str()].clone()),
            Expr::List(l) => Static::List(l.elts.iter().map(|v| self.value(v)).collect()),
            Expr::Tuple(t) => Static::List(t.elts.iter().map(|v| self.value(v)).collect()),
            Expr::Set(s) => Static::List(s.elts.iter().map(|v| self.value(v)).collect()),
            Expr::Call(call) => match self.qualified(&call.func).as_deref() {
                Some("kopf.not_" | "kopf.all_" | "kopf.any_" | "kopf.none_") => Static::Callback(self.code(e.range())),
                _ => Static::Unknown(self.code(e.range())),
            },
            _ => match self.qualified(e) {
                Some(name) => match name.as_str() {
                    "kopf.PRESENT" => Static::Present,
                    "kopf.ABSENT" => Static::Absent,
                    "kopf.EVERYTHING" => Static::Everything,
                    _ if name.starts_with("kopf.") => Static::KopfName(name),
                    _ => Static::Unknown(self.code(e.range())),
                },
                None => Static::Unknown(self.code(e.range())),
            },
        }
    }
}

/// An integer literal (negated when `minus`) that fits an i64.
fn number(n: &ast::ExprNumberLiteral, minus: bool) -> Option<Static> {
    let ast::Number::Int(i) = &n.value else {
        return None;
    };
    let i = i.as_i64()?;
    Some(Static::Int(if minus { i.checked_neg()? } else { i }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ruff_python_ast::Stmt;

    /// The arguments of the call on the last line of `src`.
    fn args(src: &str) -> Args {
        let m = Module::parse("op.py", src).unwrap();
        let mut imports = Imports::default();
        let mut defs = HashSet::new();
        for stmt in m.suite() {
            imports.add(stmt);
            if let Stmt::FunctionDef(f) = stmt {
                defs.insert(f.name.to_string());
            }
        }
        let Some(Stmt::Expr(e)) = m.suite().last() else {
            panic!()
        };
        let Expr::Call(call) = &*e.value else { panic!() };
        Cx {
            module: &m,
            imports: &imports,
            defs: &defs,
            consts: &HashMap::new(),
        }
        .args(call, false)
    }

    fn code(text: &str, line: usize) -> Code {
        Code {
            text: text.into(),
            line,
        }
    }

    #[test]
    fn resources_are_kept_as_written() {
        let a = args("import kopf\nkopf.on.create('kopf.dev', 'v1', 'kopfexamples')\n");
        assert_eq!(
            a.resource.positional,
            [
                Static::Str("kopf.dev".into()),
                Static::Str("v1".into()),
                Static::Str("kopfexamples".into())
            ]
        );
        let a = args("import kopf\nkopf.on.event(kopf.EVERYTHING, group='apps', plural=PLURAL)\n");
        assert_eq!(a.resource.positional, [Static::Everything]);
        assert_eq!(a.resource.group, Some(Static::Str("apps".into())));
        assert_eq!(a.resource.plural, Some(Static::Unknown(code("PLURAL", 2))));
        let a = args("import kopf\nkopf.on.create(*RESOURCE, **OPTIONS)\n");
        assert_eq!(a.resource.positional, [Static::Unknown(code("*RESOURCE", 2))]);
        assert_eq!(a.splats, [code("**OPTIONS", 2)]);
    }

    #[test]
    fn filters_say_what_they_cannot_read() {
        let a = args(concat!(
            "import kopf\n",
            "def check(**_): return True\n",
            "kopf.on.update('x', labels={'a': 'b', 'c': kopf.PRESENT, 'd': kopf.ABSENT, 'e': check, 'f': VALUE},\n",
            "    annotations=ANNOTATIONS, when=kopf.not_(check), field=['spec', 'x'], old=None, new=f'{x}')\n",
        ));
        assert_eq!(
            a.filters.labels,
            Some(MetaFilter::Keys(vec![
                ("a".into(), Static::Str("b".into())),
                ("c".into(), Static::Present),
                ("d".into(), Static::Absent),
                ("e".into(), Static::Callback(code("check", 3))),
                ("f".into(), Static::Unknown(code("VALUE", 3))),
            ]))
        );
        assert_eq!(a.filters.annotations, Some(MetaFilter::Unknown(code("ANNOTATIONS", 4))));
        assert_eq!(a.filters.when, Some(Static::Callback(code("kopf.not_(check)", 4))));
        assert_eq!(a.filters.field, Some(FieldPath::Path(vec!["spec".into(), "x".into()])));
        assert_eq!(a.filters.old, Some(Static::None));
        assert_eq!(a.filters.new, Some(Static::Unknown(code("f'{x}'", 4))));
        let a = args("import kopf\nkopf.on.create('x', labels={**BASE}, field=FIELD, id=f'h-{n}')\n");
        assert!(matches!(a.filters.labels, Some(MetaFilter::Unknown(_))));
        assert_eq!(a.filters.field, Some(FieldPath::Unknown(code("FIELD", 2))));
        assert_eq!(a.id, Some(IdArg::Unknown(code("f'h-{n}'", 2))));
    }

    #[test]
    fn options_are_kept_in_source_order() {
        let a = args(
            "from kopf import ErrorsMode\nkopf.on.delete('x', id='del', retries=3, backoff=1.5, timeout=-1, errors=ErrorsMode.PERMANENT, optional=True, param={'a': 1})\n",
        );
        assert_eq!(a.id, Some(IdArg::Literal("del".into())));
        let names: Vec<&str> = a.options.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["retries", "backoff", "timeout", "errors", "optional", "param"]);
        assert_eq!(a.options[0].1, Static::Int(3));
        assert_eq!(a.options[1].1, Static::Number("1.5".into()));
        assert_eq!(a.options[2].1, Static::Int(-1));
        assert_eq!(a.options[3].1, Static::KopfName("kopf.ErrorsMode.PERMANENT".into()));
        assert_eq!(a.options[4].1, Static::Bool(true));
        assert!(matches!(a.options[5].1, Static::Unknown(_)));
    }
}
