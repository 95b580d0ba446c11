//! Edits of the operator's source that a fix prints (`delete line 10 of operator.py`, `replace
//! line 12 of operator.py with `pass``), chosen on the syntax tree so that the file still parses
//! after them: a statement that is the only one of its block (a function's or an `if`'s body)
//! is replaced by `pass` at its indentation, since deleting it leaves the block empty
//! (IndentationError); a statement sharing a line with another one is not removed by lines at
//! all ([`removal`] gives `None`).

use ruff_python_ast::Stmt;
use ruff_text_size::Ranged;

use super::Module;
use super::flow::{MAX_DEPTH, blocks};

/// One edit of a file, by 1-based lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edit {
    /// Delete lines `from..=to`.
    Delete {
        /// The file (ConfigMap key).
        file: String,
        /// First line.
        from: usize,
        /// Last line.
        to: usize,
    },
    /// Replace lines `from..=to` by one line, `with` at the first line's indentation.
    Replace {
        /// The file (ConfigMap key).
        file: String,
        /// First line.
        from: usize,
        /// Last line.
        to: usize,
        /// The new statement, without indentation (`pass`).
        with: String,
    },
}

impl Edit {
    /// The edit in words, as a fix prints it: `delete line 10 of operator.py`, `delete lines
    /// 10-12 of operator.py`, ``replace line 12 of operator.py with `pass` ``.
    pub fn describe(&self) -> String {
        let lines = |from: usize, to: usize| {
            if from == to {
                format!("line {from}")
            } else {
                format!("lines {from}-{to}")
            }
        };
        match self {
            Edit::Delete { file, from, to } => format!("delete {} of {file}", lines(*from, *to)),
            Edit::Replace { file, from, to, with } => {
                format!("replace {} of {file} with `{with}`", lines(*from, *to))
            }
        }
    }

    /// `source` after the edit (lines past the end are left alone).
    pub fn apply(&self, source: &str) -> String {
        let (from, to, with) = match self {
            Edit::Delete { from, to, .. } => (*from, *to, None),
            Edit::Replace { from, to, with, .. } => (*from, *to, Some(with.as_str())),
        };
        let mut out = String::with_capacity(source.len());
        for (i, line) in source.split_inclusive('\n').enumerate() {
            let n = i + 1;
            if n < from || n > to {
                out.push_str(line);
            } else if n == from
                && let Some(with) = with
            {
                let indent: String = line.chars().take_while(|c| *c == ' ' || *c == '\t').collect();
                out.push_str(&format!("{indent}{with}\n"));
            }
        }
        out
    }
}

/// The edit that removes the simple statement starting on `line` and keeps the file valid:
/// [`Edit::Delete`] of its lines, or [`Edit::Replace`] by `pass` when it is the only statement
/// of its block. `None` when no simple statement starts there, or one shares its lines with
/// other code (`x = 1; y = 2`, `if a: y = 2`).
pub fn removal(module: &Module, line: usize) -> Option<Edit> {
    let (body, at) = find(module, module.suite(), line, 0)?;
    let stmt = &body[at];
    let from = module.line(stmt.range().start());
    let to = module.line(stmt.range().end() - ruff_text_size::TextSize::new(1));
    let text = &module.text;
    let line_start = text.line_starts[from - 1];
    let line_end = text.line_starts.get(to).copied().unwrap_or(text.source.len());
    let before = &text.source[line_start..stmt.range().start().to_usize()];
    let after = &text.source[stmt.range().end().to_usize()..line_end];
    let after_code = strip_comment(after);
    if !before.trim().is_empty() || !after_code.trim().is_empty() {
        return None;
    }
    let file = module.file().to_string();
    Some(if body.len() == 1 {
        Edit::Replace {
            file,
            from,
            to,
            with: "pass".into(),
        }
    } else {
        Edit::Delete { file, from, to }
    })
}

/// `rest` of a line up to a `#` comment (a string with `#` in it is code, and kept).
fn strip_comment(rest: &str) -> &str {
    let trimmed = rest.trim_start();
    if trimmed.starts_with('#') { "" } else { rest }
}

/// The body holding the simple statement that starts on `line`, and its index there.
fn find<'s>(module: &Module, body: &'s [Stmt], line: usize, depth: usize) -> Option<(&'s [Stmt], usize)> {
    if depth > MAX_DEPTH {
        return None;
    }
    for (i, stmt) in body.iter().enumerate() {
        let first = module.line(stmt.range().start());
        let last = module.line(stmt.range().end());
        if line < first || line > last {
            continue;
        }
        let inner: Vec<&[Stmt]> = match stmt {
            Stmt::FunctionDef(f) => vec![&f.body[..]],
            Stmt::ClassDef(c) => vec![&c.body[..]],
            _ => blocks(stmt).into_iter().map(|b| b.body).collect(),
        };
        if inner.is_empty() {
            return (first == line).then_some((body, i));
        }
        return inner.into_iter().find_map(|b| find(module, b, line, depth + 1));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn removed(src: &str, line: usize) -> Option<(String, String)> {
        let m = Module::parse("operator.py", src).unwrap();
        let edit = removal(&m, line)?;
        let after = edit.apply(src);
        Module::parse("operator.py", &after).unwrap_or_else(|e| panic!("{}: {e}\n{after}", edit.describe()));
        Some((edit.describe(), after))
    }

    /// Issue 18 item 9: the only statement of a startup function (or of an `if`) is replaced by
    /// `pass`; deleting it would leave the block empty (IndentationError).
    #[test]
    fn the_only_statement_of_a_block_becomes_pass() {
        let src =
            "import kopf\n\n@kopf.on.startup()\ndef configure(settings, **_):\n    settings.posting.enabled = False\n";
        let (what, after) = removed(src, 5).unwrap();
        assert_eq!(what, "replace line 5 of operator.py with `pass`");
        assert!(after.ends_with("def configure(settings, **_):\n    pass\n"), "{after}");
        // Deleting it instead does not parse: the bug this pins.
        let deleted = Edit::Delete {
            file: "operator.py".into(),
            from: 5,
            to: 5,
        }
        .apply(src);
        assert!(Module::parse("operator.py", &deleted).is_err());
        let src = "def f(mode, settings):\n    if mode == 'off':\n        settings.posting.enabled = False  # off\n    elif mode == 'x':\n        pass\n";
        assert_eq!(removed(src, 3).unwrap().0, "replace line 3 of operator.py with `pass`");
    }

    #[test]
    fn a_statement_among_others_is_deleted_with_all_its_lines() {
        let src = "def f(settings):\n    settings.scanning.disabled = True\n    settings.posting.enabled = (\n        False\n    )\n";
        let (what, after) = removed(src, 3).unwrap();
        assert_eq!(what, "delete lines 3-5 of operator.py");
        assert_eq!(after, "def f(settings):\n    settings.scanning.disabled = True\n");
        // Shared lines, or no statement starting there: no edit by lines.
        assert_eq!(removed("def f(s):\n    a = 1; s.posting.enabled = False\n", 2), None);
        assert_eq!(removed("def f(s):\n    if a: s.posting.enabled = False\n", 2), None);
        assert_eq!(removed("x = (\n    1\n)\n", 2), None);
    }
}
