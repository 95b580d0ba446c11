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

/// [`count`], but `no` for none: `no lines`, `1 line`, `10 lines`, `70 lines`. The number is
/// never rewritten as text (a `0 ` inside `10 ` or `70 ` is a digit, not a count of none).
pub fn count_or_no(n: u64, noun: &str) -> String {
    if n == 0 { format!("no {noun}s") } else { count(n, noun) }
}

/// One reference token of a JSON pointer (RFC 6901): `~` as `~0`, then `/` as `~1`, so that a
/// Kopf handler id `accept/spec` is the one key `accept~1spec`, not the two keys `accept`, `spec`.
/// Every JSON patch path a fix prints is built with it (or [`json_pointer`]).
pub fn json_pointer_token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// A JSON pointer (RFC 6901) of the keys `keys`, each escaped by [`json_pointer_token`]:
/// `json_pointer(["status", "accept/spec"])` is `/status/accept~1spec`.
pub fn json_pointer<'a>(keys: impl IntoIterator<Item = &'a str>) -> String {
    keys.into_iter()
        .map(|k| format!("/{}", json_pointer_token(k)))
        .collect()
}

/// `s` as a JSON string that can be pasted inside a shell's single quotes: JSON's escapes, and a
/// `'` as `\u0027` (the same string to a JSON reader; a bare `'` would end the shell's quoting).
pub fn json_string_in_single_quotes(s: &str) -> String {
    serde_json::Value::String(s.to_string())
        .to_string()
        .replace('\'', "\\u0027")
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
    fn json_pointer_tokens_escape_tilde_then_slash() {
        assert_eq!(json_pointer_token("accept/spec"), "accept~1spec");
        assert_eq!(json_pointer_token("a~b"), "a~0b");
        // `~1` written in a key is the key's own text: its `~` is escaped, not read as `/`.
        assert_eq!(json_pointer_token("a~1b/c"), "a~01b~1c");
        assert_eq!(json_pointer_token("phase"), "phase");
        assert_eq!(
            json_pointer(["metadata", "annotations", "kopf.zalando.org/last-handled-configuration"]),
            "/metadata/annotations/kopf.zalando.org~1last-handled-configuration"
        );
        assert_eq!(json_pointer(["status", "accept/spec"]), "/status/accept~1spec");
        assert_eq!(json_pointer([]), "");
    }

    #[test]
    fn json_strings_for_single_quotes_hold_no_single_quote() {
        assert_eq!(json_string_in_single_quotes("/a~1b"), r#""/a~1b""#);
        assert_eq!(json_string_in_single_quotes(r#"it's "x""#), r#""it\u0027s \"x\"""#);
        let back: String = serde_json::from_str(&json_string_in_single_quotes(r#"it's "x""#)).unwrap();
        assert_eq!(back, r#"it's "x""#);
    }

    #[test]
    fn none_is_no_and_every_other_count_keeps_its_digits() {
        assert_eq!(count_or_no(0, "microservice"), "no microservices");
        assert_eq!(count_or_no(1, "microservice"), "1 microservice");
        assert_eq!(count_or_no(10, "microservice"), "10 microservices");
        assert_eq!(count_or_no(70, "microservice"), "70 microservices");
        assert_eq!(count_or_no(100, "log file"), "100 log files");
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
