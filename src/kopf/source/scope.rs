//! A function's names as the settings reader sees them: which reach Kopf's settings (Kopf
//! passes them only as the keyword argument `settings`: `kopf/_core/actions/invocation.py`
//! `invoke()` calls `fn(**kwargs)`), its parameters, its own imports and its names bound to env
//! values.

use std::collections::HashMap;

use ruff_python_ast::{self as ast, Expr};

use super::conditions::EnvNames;
use super::flow::Condition;
use super::names::{Imports, chain, literal, parameter_names};

/// What a local name is bound to: a path under Kopf's settings (`[]` is the settings object,
/// `["posting"]` its posting settings), bound under a condition or not.
#[derive(Debug, Clone)]
pub(super) struct Binding {
    pub path: Vec<String>,
    pub condition: Option<Condition>,
}

/// A function's names that reach Kopf's settings, its parameters, and its own imports.
#[derive(Debug, Clone, Default)]
pub(super) struct Scope {
    pub names: HashMap<String, Binding>,
    /// The `**kwargs` parameter, when there is no `settings` parameter to take the keyword.
    kwargs: Option<String>,
    /// Parameter names (to tell "not Kopf's settings" from "unknown").
    params: Vec<String>,
    pub imports: Imports,
    /// Local names bound to a value read from the environment (`mode = os.environ.get(...)`).
    pub env_names: EnvNames,
}

/// Where an expression's base is in Kopf's settings.
pub(super) enum Base {
    /// Reaches Kopf's settings at this path, possibly only under a condition.
    Settings(Vec<String>, Option<Condition>),
    /// A parameter that Kopf does not fill with the settings.
    OtherParameter,
    /// Anything else.
    Unknown,
}

impl Scope {
    /// A class body's scope: nothing bound but the enclosing imports.
    pub(super) fn class(imports: &Imports) -> Self {
        Scope {
            imports: imports.clone(),
            ..Scope::default()
        }
    }

    /// The scope of a handler Kopf calls: `settings` is bound when a parameter (positional or
    /// keyword, not positional-only) is named so; else `**kwargs` holds it.
    pub(super) fn handler(parameters: &ast::Parameters) -> Self {
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
    pub(super) fn nested(&self, parameters: &ast::Parameters) -> Self {
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
    pub(super) fn unbind(&mut self, name: &str, condition: Option<&Condition>) {
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

    /// Where `base` (the base of an attribute chain) is: a name bound to the settings,
    /// `kwargs['settings']`, `kwargs.get('settings')`, another parameter, or unknown.
    pub(super) fn base(&self, base: &Expr) -> Base {
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
    pub(super) fn settings_path(&self, expr: &Expr) -> Option<(Vec<String>, Option<Condition>)> {
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
