//! The source's conditions on the environment (`os.environ.get("X")`, `os.getenv("X", "d")`,
//! `os.environ["X"]`, names bound to them, `.lower()` and friends, comparisons, `not`, `and`,
//! `or`) and how the operator container's env ([`Env`]) decides them; and which branch of an
//! `if`/`elif`/`else` the env decides runs. A value the evidence does not give is never guessed:
//! the image's own `ENV` is not in evidence, and a Secret's value is never read.

use std::collections::HashMap;

use ruff_python_ast::{self as ast, Expr};
use serde::Serialize;

use super::names::{Imports, literal};
use super::{Env, SourceLine};

/// Expressions nested deeper than this are not evaluated against the env (conditions people
/// write are a few levels deep; a machine-made `not not not ...` must not exhaust the stack).
const MAX_EVAL_DEPTH: usize = 64;

/// An `if` condition of the operator's source that its env decides: e.g. line 10 `if mode ==
/// "disabled":` holds because `mode = os.environ.get("KOPF_POSTING", "default")` (line 9) and
/// the Deployment sets `KOPF_POSTING=disabled`. Facts never carry a Secret's value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnvDecision {
    /// The `if`/`elif`/`else` line.
    pub guard: SourceLine,
    /// Whether its branch runs (always true for the decisions kept on an assignment).
    pub holds: bool,
    /// What decided it: the env values (`KOPF_POSTING = "disabled" (env of container
    /// operator)`) and the assignments that carried them.
    pub facts: Vec<String>,
    /// The env variables read.
    pub vars: Vec<String>,
}

impl EnvDecision {
    /// `operator.py:10: if mode == "disabled": holds: KOPF_POSTING = "disabled" (env of ...); ...`.
    pub fn describe(&self) -> String {
        format!(
            "{} ({} by the operator's env: {})",
            self.guard,
            if self.holds { "holds" } else { "does not hold" },
            self.facts.join("; ")
        )
    }
}

/// A Python value an expression evaluates to, as far as the env decides it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum PyVal {
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
pub(super) struct Known {
    value: PyVal,
    /// The env values and assignments the value rests on, in words.
    pub facts: Vec<String>,
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

    fn with(self, value: PyVal) -> Self {
        Known { value, ..self }
    }
}

/// Why an expression's value is not known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum EvalError {
    /// It does not read the environment (or is beyond this evaluator): the usual undecidable.
    NotEnv,
    /// It reads the environment, but the evidence does not give the value: why, in words.
    Env(String),
}

/// Local names bound to a value read from the environment (`mode = os.environ.get(...)`).
pub(super) type EnvNames = HashMap<String, Result<Known, EvalError>>;

/// What an expression is evaluated against: the env, the names bound to env values, and the
/// imports (the function's own first, then the module's) that say what `os.environ` is.
pub(super) struct EvalContext<'a> {
    pub env: &'a Env,
    pub names: &'a EnvNames,
    pub local_imports: &'a Imports,
    pub module_imports: &'a Imports,
}

impl EvalContext<'_> {
    fn qualified(&self, expr: &Expr) -> Option<String> {
        self.local_imports
            .qualified(expr)
            .or_else(|| self.module_imports.qualified(expr))
    }

    /// The value of `expr` as far as the operator's env decides it: `os.environ.get("X"[, d])`,
    /// `os.getenv("X"[, d])`, `os.environ["X"]`, names bound to those, `.lower()`/`.upper()`/
    /// `.strip()`/`.casefold()`, literals, `==`/`!=`/`in`/`not in`/`is`/`is not`, `not`, `and`,
    /// `or`.
    pub(super) fn eval(&self, expr: &Expr) -> Result<Known, EvalError> {
        self.eval_at(expr, 0)
    }

    /// [`EvalContext::eval`] at nesting `depth`: deeper than [`MAX_EVAL_DEPTH`] is not evaluated.
    fn eval_at(&self, expr: &Expr, depth: usize) -> Result<Known, EvalError> {
        if depth > MAX_EVAL_DEPTH {
            return Err(EvalError::NotEnv);
        }
        let depth = depth + 1;
        match expr {
            Expr::StringLiteral(_)
            | Expr::NoneLiteral(_)
            | Expr::BooleanLiteral(_)
            | Expr::NumberLiteral(_)
            | Expr::Tuple(_)
            | Expr::List(_)
            | Expr::Set(_) => self.constant(expr, depth),
            Expr::Name(n) => self.names.get(n.id.as_str()).cloned().unwrap_or(Err(EvalError::NotEnv)),
            Expr::Subscript(sub) => self.subscript(sub),
            Expr::Call(call) => self.call(call, depth),
            Expr::UnaryOp(u) if u.op == ast::UnaryOp::Not => {
                let k = self.eval_at(&u.operand, depth)?;
                let v = !k.value.truthy();
                Ok(k.with(PyVal::Bool(v)))
            }
            Expr::BoolOp(b) => self.bool_op(b, depth),
            Expr::Compare(c) if c.ops.len() == 1 && c.comparators.len() == 1 => self.compare(c, depth),
            _ => Err(EvalError::NotEnv),
        }
    }

    /// Literals, and tuples, lists and sets of known values.
    fn constant(&self, expr: &Expr, depth: usize) -> Result<Known, EvalError> {
        let elts = match expr {
            Expr::StringLiteral(l) => return Ok(Known::literal(PyVal::Str(l.value.to_str().to_string()))),
            Expr::NoneLiteral(_) => return Ok(Known::literal(PyVal::None)),
            Expr::BooleanLiteral(b) => return Ok(Known::literal(PyVal::Bool(b.value))),
            Expr::NumberLiteral(n) => {
                return match &n.value {
                    ast::Number::Int(i) => i
                        .as_i64()
                        .map(|i| Known::literal(PyVal::Int(i)))
                        .ok_or(EvalError::NotEnv),
                    _ => Err(EvalError::NotEnv),
                };
            }
            Expr::Tuple(t) => &t.elts[..],
            Expr::List(l) => &l.elts[..],
            Expr::Set(s) => &s.elts[..],
            _ => return Err(EvalError::NotEnv),
        };
        let mut out = Known::literal(PyVal::Seq(Vec::new()));
        let mut values = Vec::new();
        for e in elts {
            let k = self.eval_at(e, depth)?;
            values.push(k.value.clone());
            out = out.join(k, PyVal::None);
        }
        out.value = PyVal::Seq(values);
        Ok(out)
    }

    /// `os.environ["X"]`.
    fn subscript(&self, sub: &ast::ExprSubscript) -> Result<Known, EvalError> {
        match (self.qualified(&sub.value).as_deref(), literal(&sub.slice)) {
            (Some("os.environ"), Some(var)) => match self.read_env(var)? {
                Some(k) => Ok(k),
                None => Err(EvalError::Env(format!(
                    "os.environ[{var:?}] raises KeyError when it is unset"
                ))),
            },
            _ => Err(EvalError::NotEnv),
        }
    }

    /// `os.environ.get("X"[, default])`, `os.getenv(...)`, and `<str>.lower()` and friends.
    fn call(&self, call: &ast::ExprCall, depth: usize) -> Result<Known, EvalError> {
        if matches!(
            self.qualified(&call.func).as_deref(),
            Some("os.environ.get" | "os.getenv")
        ) {
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
                    Some(d) => self.eval_at(d, depth),
                    None => Ok(Known::literal(PyVal::None)),
                },
            };
        }
        let Expr::Attribute(a) = &*call.func else {
            return Err(EvalError::NotEnv);
        };
        if !call.arguments.args.is_empty() || !call.arguments.keywords.is_empty() {
            return Err(EvalError::NotEnv);
        }
        let k = self.eval_at(&a.value, depth)?;
        let PyVal::Str(v) = &k.value else {
            return Err(EvalError::NotEnv);
        };
        let out = match a.attr.as_str() {
            "lower" | "casefold" => v.to_lowercase(),
            "upper" => v.to_uppercase(),
            "strip" => v.trim().to_string(),
            _ => return Err(EvalError::NotEnv),
        };
        Ok(k.with(PyVal::Str(out)))
    }

    /// `and`/`or`, three-valued on truth: `and` is false once one operand is known false, `or`
    /// true once one is known true, whatever the others.
    fn bool_op(&self, b: &ast::ExprBoolOp, depth: usize) -> Result<Known, EvalError> {
        let want = b.op == ast::BoolOp::Or;
        let mut known = Known::literal(PyVal::Bool(!want));
        let mut unknown: Option<EvalError> = None;
        for v in &b.values {
            match self.eval_at(v, depth) {
                Ok(k) if k.value.truthy() == want => return Ok(k.with(PyVal::Bool(want))),
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

    /// One comparison (`==`, `!=`, `is None`, `is not None`, `in`, `not in`) with the env on at
    /// least one side (two literals are not the env's to decide).
    fn compare(&self, c: &ast::ExprCompare, depth: usize) -> Result<Known, EvalError> {
        let (left, right) = match (self.eval_at(&c.left, depth), self.eval_at(&c.comparators[0], depth)) {
            (Ok(l), Ok(r)) => (l, r),
            (Err(EvalError::Env(e)), _) | (_, Err(EvalError::Env(e))) => return Err(EvalError::Env(e)),
            _ => return Err(EvalError::NotEnv),
        };
        if left.vars.is_empty() && right.vars.is_empty() {
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

/// How a branch of an `if` relates to the env.
pub(super) enum Branch {
    /// The env decides that it runs.
    Runs(EnvDecision),
    /// The env decides that it never runs: why.
    Never(String),
    /// Not decided; with the env's reason when the test reads the env.
    Unknown(Option<String>),
}

/// The branches of one `if`/`elif`/`else`, decided in order: a branch runs when the env decides
/// its test true and every earlier one false; after a branch that runs, the later ones never do;
/// after one that is not decided, none is.
pub(super) struct IfChain {
    /// Facts of the earlier tests, all decided false; `None` once one is true or unknown.
    earlier_false: Option<Known>,
    /// The line of the branch taken.
    earlier_true: Option<usize>,
}

impl IfChain {
    pub(super) fn new() -> Self {
        IfChain {
            earlier_false: Some(Known::literal(PyVal::Bool(false))),
            earlier_true: None,
        }
    }

    /// The next branch, at `guard`, with its `test` (`None` for `else`).
    pub(super) fn next(&mut self, guard: &SourceLine, test: Option<&Expr>, cx: &EvalContext<'_>) -> Branch {
        if let Some(line) = self.earlier_true {
            return Branch::Never(format!(
                "never runs: the branch on line {line} before it is taken (line {}: {})",
                guard.line, guard.text
            ));
        }
        let Some(before) = self.earlier_false.take() else {
            return Branch::Unknown(None);
        };
        let outcome = match test {
            None => Ok(before),
            Some(t) => match cx.eval(t) {
                Ok(k) if k.value.truthy() => Ok(before.join(k, PyVal::Bool(true))),
                Ok(k) => Err(before.join(k, PyVal::Bool(false))),
                Err(EvalError::Env(why)) => return Branch::Unknown(Some(why)),
                Err(EvalError::NotEnv) => return Branch::Unknown(None),
            },
        };
        match outcome {
            Ok(k) => {
                self.earlier_true = Some(guard.line);
                Branch::Runs(EnvDecision {
                    guard: guard.clone(),
                    holds: true,
                    facts: k.facts,
                    vars: k.vars,
                })
            }
            Err(k) => {
                let why = format!(
                    "never runs: the condition on line {} (`{}`) is false: {}",
                    guard.line,
                    guard.text,
                    k.facts.join("; ")
                );
                self.earlier_false = Some(k);
                Branch::Never(why)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kopf::source::Module;
    use k8s_openapi::api::core::v1::Container;
    use ruff_python_ast::Stmt;

    fn env(vars: serde_json::Value) -> Env {
        let c: Container = serde_json::from_value(serde_json::json!({"name": "op", "env": vars})).unwrap();
        Env::of_container(&c, &[])
    }

    /// `expr` evaluated against `env`, with `import os`.
    fn eval(expr: &str, env: &Env) -> Result<(String, Vec<String>), EvalError> {
        let m = Module::parse("op.py", &format!("import os\n{expr}\n")).unwrap();
        let mut imports = Imports::default();
        imports.add(&m.suite()[0]);
        let Stmt::Expr(e) = &m.suite()[1] else { panic!() };
        let names = EnvNames::new();
        let none = Imports::default();
        let cx = EvalContext {
            env,
            names: &names,
            local_imports: &none,
            module_imports: &imports,
        };
        cx.eval(&e.value).map(|k| (format!("{:?}", k.value), k.vars))
    }

    #[test]
    fn the_env_decides_reads_of_os_environ() {
        let e = env(serde_json::json!([{"name": "MODE", "value": " Quiet "}]));
        for (expr, value) in [
            ("os.environ.get('MODE')", r#"Str(" Quiet ")"#),
            ("os.getenv('MODE', 'x').strip().lower()", r#"Str("quiet")"#),
            ("os.environ['MODE'].strip().upper() == 'QUIET'", "Bool(true)"),
            ("os.getenv('MODE') in ('a', 'b')", "Bool(false)"),
            ("not os.getenv('MODE')", "Bool(false)"),
            ("os.getenv('MODE') is None and x", "Bool(false)"),
            ("os.getenv('MODE') is not None or x", "Bool(true)"),
            ("'ui' in os.getenv('MODE')", "Bool(true)"),
        ] {
            match eval(expr, &e) {
                Ok((v, vars)) => {
                    assert_eq!(v, value, "{expr}");
                    assert_eq!(vars, ["MODE"], "{expr}");
                }
                Err(err) => panic!("{expr}: {err:?}"),
            }
        }
        // Beyond the evaluator, or not about the env.
        for expr in ["os.getenv('MODE').split()", "x == 1", "'a' == 'a'", "os.getenv(name)"] {
            assert_eq!(eval(expr, &e), Err(EvalError::NotEnv), "{expr}");
        }
        // About the env, but the evidence does not give the value.
        assert!(matches!(eval("os.getenv('OTHER') == '1'", &e), Err(EvalError::Env(_))));
        assert_eq!(eval("os.getenv('MODE')", &Env::unknown()), Err(EvalError::NotEnv));
    }

    #[test]
    fn an_if_chain_runs_the_first_branch_the_env_decides_true() {
        let e = env(serde_json::json!([{"name": "MODE", "value": "b"}]));
        let src = "import os\nif os.getenv('MODE') == 'a':\n    pass\nelif os.getenv('MODE') == 'b':\n    pass\nelif x:\n    pass\nelse:\n    pass\n";
        let m = Module::parse("op.py", src).unwrap();
        let mut imports = Imports::default();
        imports.add(&m.suite()[0]);
        let Stmt::If(s) = &m.suite()[1] else { panic!() };
        let (names, none) = (EnvNames::new(), Imports::default());
        let cx = EvalContext {
            env: &e,
            names: &names,
            local_imports: &none,
            module_imports: &imports,
        };
        let mut chain = IfChain::new();
        let tests = std::iter::once(Some(&*s.test)).chain(s.elif_else_clauses.iter().map(|c| c.test.as_ref()));
        let lines = [2, 4, 6, 8];
        let got: Vec<String> = tests
            .zip(lines)
            .map(|(t, line)| {
                let guard = SourceLine {
                    file: "op.py".into(),
                    line,
                    text: String::new(),
                };
                match chain.next(&guard, t, &cx) {
                    Branch::Runs(d) => format!("runs {}", d.facts.join("; ")),
                    Branch::Never(why) => why,
                    Branch::Unknown(why) => format!("unknown {why:?}"),
                }
            })
            .collect();
        assert!(got[0].starts_with("never runs: the condition on line 2"), "{got:?}");
        assert_eq!(got[1], r#"runs MODE = "b" (env of container op)"#);
        assert!(
            got[2].starts_with("never runs: the branch on line 4 before it is taken"),
            "{got:?}"
        );
        assert!(got[3].starts_with("never runs: the branch on line 4"), "{got:?}");
    }
}
