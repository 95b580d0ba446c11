//! Escaping of cluster-sourced text: an image string or an event message must not be able to
//! forge a log line or drive the terminal.

use std::fmt::Write;

/// Replaces terminal control characters (C0 except tab, DEL, C1, and the Unicode line/paragraph
/// separators and bidi overrides) with visible escapes (`\n`, `\u{1b}`), so human output is one
/// line per record and cannot move the cursor or recolour the screen.
pub fn sanitize(s: &str) -> String {
    if !s.chars().any(is_unsafe) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if is_unsafe(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

fn is_unsafe(c: char) -> bool {
    (c.is_control() && c != '\t')
        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Renders a cluster-sourced value inside a log message: as is when it is a plain token
/// (letters, digits and `._-/:@+`, as image references and names are), else JSON-quoted, so
/// spaces, quotes, `=` or newlines in the value can never look like another field or line.
pub fn quote_value(s: &str) -> String {
    let plain = !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "._-/:@+".contains(c));
    if plain {
        s.to_string()
    } else {
        serde_json::to_string(s).expect("a string always serialises")
    }
}

/// A count with its noun in the right number: `1 line`, `0 lines`, `2 lines` (the plural is
/// `noun` + `s`; [`count_as`] for others). Every count in our text goes through here, so that
/// no answer says `1 lines` or `line(s)`.
pub fn count(n: u64, noun: &str) -> String {
    count_as(n, noun, &format!("{noun}s"))
}

/// [`count`] with the plural given: `count_as(1, "try", "tries")` is `1 try`.
pub fn count_as(n: u64, singular: &str, plural: &str) -> String {
    format!("{n} {}", if n == 1 { singular } else { plural })
}

/// `is` or `are`, agreeing with a count.
pub fn is_are(n: u64) -> &'static str {
    if n == 1 { "is" } else { "are" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_agree_with_their_nouns() {
        assert_eq!(count(1, "line"), "1 line");
        assert_eq!(count(0, "line"), "0 lines");
        assert_eq!(count(2, "Pod"), "2 Pods");
        assert_eq!(count_as(1, "try", "tries"), "1 try");
        assert_eq!(count_as(3, "try", "tries"), "3 tries");
        assert_eq!((is_are(1), is_are(0), is_are(2)), ("is", "are", "are"));
    }

    #[test]
    fn sanitize_escapes_controls_and_keeps_text() {
        assert_eq!(sanitize("plain text\tok"), "plain text\tok");
        assert_eq!(sanitize("a\nb\r\x1b[31mred"), "a\\nb\\r\\u{1b}[31mred");
        assert_eq!(sanitize("bidi\u{202e}x"), "bidi\\u{202e}x");
        assert_eq!(sanitize("ünïcödé"), "ünïcödé");
    }

    #[test]
    fn quote_value_leaves_references_bare_and_quotes_the_rest() {
        assert_eq!(
            quote_value("ghcr.io/yrw9281/it30-todo-api:0.1.0"),
            "ghcr.io/yrw9281/it30-todo-api:0.1.0"
        );
        assert_eq!(
            quote_value("x port=1\n2026 INFO forged"),
            "\"x port=1\\n2026 INFO forged\""
        );
        assert_eq!(quote_value(""), "\"\"");
        assert_eq!(quote_value("a\"b"), "\"a\\\"b\"");
    }
}
