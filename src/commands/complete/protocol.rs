//! The answer format of cobra's `__complete` protocol, which kubectl's plugin completion reads
//! (kubernetes `staging/src/k8s.io/kubectl/pkg/cmd/plugin/plugin_completion.go`,
//! `getPluginCompletions`): one candidate per line, optionally `candidate<TAB>description`,
//! then a last line `:<directive>`.

use std::fmt::Write;

/// A cobra `ShellCompDirective`: bit flags telling the shell what to do besides offering the
/// candidates (spf13/cobra `completions.go`; kubectl passes it on to its own completion script).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Directive(pub u8);

impl Directive {
    /// Let the shell do its default (file names when there is no candidate).
    pub const DEFAULT: Directive = Directive(0);
    /// An error occurred; the shell ignores the candidates.
    pub const ERROR: Directive = Directive(1);
    /// Do not add a space after the completion.
    pub const NO_SPACE: Directive = Directive(2);
    /// Do not fall back to file names.
    pub const NO_FILE_COMP: Directive = Directive(4);
    /// The candidates are file extensions to filter file names by.
    pub const FILTER_FILE_EXT: Directive = Directive(8);
    /// Complete directory names only.
    pub const FILTER_DIRS: Directive = Directive(16);
    /// Keep the candidates' order.
    pub const KEEP_ORDER: Directive = Directive(32);
}

/// One completion candidate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The word offered.
    pub value: String,
    /// A one-line description, shown by zsh, fish and PowerShell.
    pub description: Option<String>,
}

impl Candidate {
    /// A candidate with an optional description.
    pub fn new(value: String, description: Option<String>) -> Self {
        Candidate { value, description }
    }
}

/// Renders the answer: each candidate on its own line (`value<TAB>description` when described),
/// then `:<directive>`.
///
/// A candidate whose value holds whitespace or a control character is dropped (it could not be
/// one shell word, and a newline would forge another candidate); descriptions are cut to one
/// line and stripped of control characters.
pub fn render(candidates: &[Candidate], directive: Directive) -> String {
    let mut out = String::new();
    for candidate in candidates {
        if candidate.value.is_empty() || candidate.value.chars().any(|c| c.is_whitespace() || c.is_control()) {
            continue;
        }
        out.push_str(&candidate.value);
        if let Some(description) = &candidate.description {
            let line: String = description
                .lines()
                .next()
                .unwrap_or("")
                .chars()
                .map(|c| if c.is_control() { ' ' } else { c })
                .collect();
            let line = line.trim();
            if !line.is_empty() {
                out.push('\t');
                out.push_str(line);
            }
        }
        out.push('\n');
    }
    let _ = writeln!(out, ":{}", directive.0);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_then_the_directive() {
        let out = render(
            &[
                Candidate::new("todo-api".into(), None),
                Candidate::new("--namespace".into(), Some("Namespace(s).\nMore text".into())),
            ],
            Directive::NO_FILE_COMP,
        );
        assert_eq!(out, "todo-api\n--namespace\tNamespace(s).\n:4\n");
    }

    #[test]
    fn no_candidates_is_just_the_directive() {
        assert_eq!(render(&[], Directive::NO_FILE_COMP), ":4\n");
        assert_eq!(render(&[], Directive::FILTER_DIRS), ":16\n");
    }

    #[test]
    fn values_that_cannot_be_one_word_are_dropped_and_descriptions_cleaned() {
        let out = render(
            &[
                Candidate::new("a b".into(), None),
                Candidate::new("x\ny".into(), None),
                Candidate::new("".into(), None),
                Candidate::new("ok".into(), Some("tab\there \u{1b}[31m".into())),
            ],
            Directive::DEFAULT,
        );
        assert_eq!(out, "ok\ttab here  [31m\n:0\n");
    }

    /// The values cobra defines (`ShellCompDirectiveError = 1 << iota`, ...).
    #[test]
    fn directive_bits_are_cobras() {
        let bits = [
            Directive::ERROR,
            Directive::NO_SPACE,
            Directive::NO_FILE_COMP,
            Directive::FILTER_FILE_EXT,
            Directive::FILTER_DIRS,
            Directive::KEEP_ORDER,
        ];
        for (i, d) in bits.iter().enumerate() {
            assert_eq!(d.0, 1 << i);
        }
        assert_eq!(Directive::DEFAULT.0, 0);
    }
}
