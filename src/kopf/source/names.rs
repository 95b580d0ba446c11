//! Names on the syntax tree: what imports bind (`k` → `kopf`, `startup` → `kopf.on.startup`),
//! dotted attribute chains, string literals and parameter names, shared by the readers.

use std::collections::HashMap;

use ruff_python_ast::{self as ast, Expr, Stmt};

/// The names of `kopf` that `from kopf import *` binds and a reader looks at (`kopf.__all__`,
/// `kopf/__init__.py`; `subhandler` is not in it).
const KOPF_STAR: &[&str] = &[
    "on",
    "register",
    "daemon",
    "timer",
    "index",
    "PRESENT",
    "ABSENT",
    "EVERYTHING",
    "ErrorsMode",
    "not_",
    "all_",
    "any_",
    "none_",
];

/// The decorators of `kopf/on.py`, which has no `__all__`: `from kopf.on import *` binds every
/// public name (only these are read).
const KOPF_ON_STAR: &[&str] = &[
    "startup",
    "cleanup",
    "login",
    "probe",
    "validate",
    "mutate",
    "resume",
    "create",
    "update",
    "delete",
    "field",
    "index",
    "event",
    "daemon",
    "timer",
    "subhandler",
    "register",
];

/// Module names bound by imports: local name → qualified name (`k` → `kopf`,
/// `on` → `kopf.on`, `CRITICAL` → `logging.CRITICAL`).
#[derive(Debug, Default, Clone)]
pub(super) struct Imports(HashMap<String, String>);

impl Imports {
    /// Adds what `stmt` binds, if it is an import (relative imports bind nothing known).
    pub(super) fn add(&mut self, stmt: &Stmt) {
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
                        let names = match module.as_str() {
                            "kopf" => KOPF_STAR,
                            "kopf.on" => KOPF_ON_STAR,
                            _ => &[],
                        };
                        for name in names {
                            self.0.insert((*name).to_string(), format!("{module}.{name}"));
                        }
                        continue;
                    }
                    let local = alias.asname.as_ref().unwrap_or(&alias.name);
                    self.0.insert(local.to_string(), format!("{module}.{}", alias.name));
                }
            }
            _ => {}
        }
    }

    /// The qualified name of a dotted expression (`k.on.startup` → `kopf.on.startup`), when its
    /// base name is an import.
    pub(super) fn qualified(&self, expr: &Expr) -> Option<String> {
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

/// A string literal's value (implicit concatenation joined; not an f-string).
pub(super) fn literal(expr: &Expr) -> Option<&str> {
    match expr {
        Expr::StringLiteral(s) => Some(s.value.to_str()),
        _ => None,
    }
}

/// An attribute chain taken apart: its base expression and the attribute names after it, outer
/// last (`settings.posting.enabled` → `settings`, `[posting, enabled]`). `getattr(x, "a")`
/// counts as `x.a`.
pub(super) fn chain(expr: &Expr) -> (&Expr, Vec<&str>) {
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

/// Every parameter's name, positional-only to `**kwargs`.
pub(super) fn parameter_names(p: &ast::Parameters) -> Vec<String> {
    let plain = p
        .posonlyargs
        .iter()
        .chain(p.args.iter())
        .chain(p.kwonlyargs.iter())
        .map(|a| a.name().to_string());
    let star = p.vararg.iter().chain(p.kwarg.iter()).map(|a| a.name.to_string());
    plain.chain(star).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ruff_python_parser::parse_module;

    fn imports(src: &str) -> Imports {
        let parsed = parse_module(src).unwrap();
        let mut imports = Imports::default();
        for stmt in parsed.suite() {
            imports.add(stmt);
        }
        imports
    }

    fn qualified(imports: &Imports, expr: &str) -> Option<String> {
        let parsed = parse_module(expr).unwrap();
        let Stmt::Expr(e) = &parsed.suite()[0] else { panic!() };
        imports.qualified(&e.value)
    }

    #[test]
    fn imports_qualify_dotted_names() {
        let i = imports("import kopf as k\nfrom logging import CRITICAL as C\nimport os.path\nfrom . import x\n");
        assert_eq!(qualified(&i, "k.on.create").as_deref(), Some("kopf.on.create"));
        assert_eq!(qualified(&i, "C").as_deref(), Some("logging.CRITICAL"));
        assert_eq!(qualified(&i, "os.environ").as_deref(), Some("os.environ"));
        assert_eq!(qualified(&i, "getattr(k, 'PRESENT')").as_deref(), Some("kopf.PRESENT"));
        assert_eq!(qualified(&i, "x"), None);
        assert_eq!(qualified(&i, "kopf.on"), None);
    }

    #[test]
    fn star_imports_bind_kopfs_public_names() {
        let i = imports("from kopf import *\n");
        assert_eq!(qualified(&i, "on.create").as_deref(), Some("kopf.on.create"));
        assert_eq!(qualified(&i, "daemon").as_deref(), Some("kopf.daemon"));
        assert_eq!(qualified(&i, "PRESENT").as_deref(), Some("kopf.PRESENT"));
        assert_eq!(qualified(&i, "subhandler"), None, "not in kopf.__all__");
        let i = imports("from kopf.on import *\n");
        assert_eq!(qualified(&i, "startup").as_deref(), Some("kopf.on.startup"));
        assert_eq!(qualified(&i, "field").as_deref(), Some("kopf.on.field"));
        assert_eq!(qualified(&i, "PRESENT"), None);
    }
}
