//! Control flow on the syntax tree: the blocks of compound statements, what makes each
//! conditional, and the `return`/`raise` that make what follows conditional.

use ruff_python_ast::{self as ast, Stmt};
use ruff_text_size::{Ranged, TextRange};

use super::{Module, SourceLine};

/// Blocks nested deeper than this are not walked (CPython's tokenizer rejects more than 100
/// levels of indentation: "too many levels of indentation"); what lies deeper is undecidable.
pub(super) const MAX_DEPTH: usize = 100;

/// Why a statement may not run (or may not reach Kopf), and the line that decides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Condition {
    /// The statement that makes it conditional (`if`, `for`, `try`, `return`, ...), if any.
    pub guard: Option<SourceLine>,
    /// In words, e.g. `conditional on line 10`.
    pub why: String,
}

/// A nested block of a compound statement, and what makes it conditional.
pub(super) struct Block<'s> {
    pub body: &'s [Stmt],
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
    /// `conditional on line N`, citing the statement or clause; `None` for `finally`.
    pub(super) fn condition(&self, module: &Module) -> Option<Condition> {
        let range = match &self.kind {
            BlockKind::Always => return None,
            BlockKind::Guarded(r) => *r,
            BlockKind::Else(s) => s.range(),
        };
        let guard = module.first_line(range);
        Some(Condition {
            why: format!("conditional on line {}", guard.line),
            guard: Some(guard),
        })
    }
}

/// The blocks nested in a compound statement (none for a simple statement, nor for function
/// and class bodies, which are walked as their own scopes).
pub(super) fn blocks(stmt: &Stmt) -> Vec<Block<'_>> {
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
pub(super) fn find_exit(stmt: &Stmt, depth: usize) -> Option<&Stmt> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_of_compound_statements_and_their_conditions() {
        let src = "if a:\n    x = 1\nelif b:\n    pass\nelse:\n    return\ntry:\n    pass\nfinally:\n    y = 2\n";
        let m = Module::parse("op.py", src).unwrap();
        let if_blocks = blocks(&m.suite()[0]);
        let lines: Vec<_> = if_blocks
            .iter()
            .map(|b| b.condition(&m).and_then(|c| c.guard).map(|g| g.line))
            .collect();
        assert_eq!(lines, [Some(1), Some(3), Some(1)]);
        assert!(find_exit(&m.suite()[0], 0).is_some());
        let try_blocks = blocks(&m.suite()[1]);
        assert_eq!(try_blocks.len(), 3);
        assert!(try_blocks[2].condition(&m).is_none(), "finally always runs");
        assert!(find_exit(&m.suite()[1], 0).is_none());
        assert!(blocks(&Module::parse("o.py", "x = 1\n").unwrap().suite()[0]).is_empty());
    }
}
