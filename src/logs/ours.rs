//! Reading our operator's log lines (written by `operate`'s logging, src/operate/logging.rs,
//! whose tests hold the round trip; docs/contracts.md):
//!
//! - text: `<RFC3339 time> <LEVEL> [ns/name] <message> <key=value>... handler=<id> cause=<cause>`,
//!   level right-aligned to 5 columns, values plain tokens or JSON-quoted strings
//!   ([`crate::text::quote_value`]);
//! - json: `{"timestamp", "level", "message", "object": {"namespace", "name", "uid"}, "handler",
//!   "cause", <other fields>}`.
//!
//! The message keeps the `key=value` fields that belong to it (`Accepted ...: image=... port=...`);
//! only the trailing `handler=` and `cause=` are taken off it. Every trailing field is also
//! returned in `fields`.

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use crate::kopf::logs::{object_reference, parse_iso_time, split_object_prefix};
use crate::logs::{Level, ObjectKey};
use crate::vocab::cause::Cause;
pub use crate::vocab::cause::parse_cause;

/// One of our operator's lines, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OursLine {
    /// The operator's time (UTC).
    pub time: Option<DateTime<Utc>>,
    /// The level.
    pub level: Option<Level>,
    /// The object, from `[ns/name]` or `object`.
    pub object: Option<ObjectKey>,
    /// `object.uid` (json only: text lines do not print it).
    pub uid: Option<String>,
    /// The message (text: without the trailing `handler=` / `cause=` fields).
    pub message: String,
    /// The `handler` field.
    pub handler: Option<String>,
    /// The `cause` field (`create`, `update`, `resume`).
    pub cause: Option<Cause>,
    /// Trailing (text) or extra (json) fields, in line order; values unquoted.
    pub fields: Vec<(String, String)>,
}

/// Parses a text-format line; `None` when it is not one.
pub fn parse_text(line: &str) -> Option<OursLine> {
    let (ts, rest) = line.split_once(' ')?;
    if !ts.ends_with('Z') || ts.len() < 20 || ts.as_bytes()[10] != b'T' {
        return None;
    }
    let time = parse_iso_time(ts)?;
    let rest = rest.trim_start_matches(' ');
    let (level_word, rest) = rest.split_once(' ')?;
    let level = Level::parse(level_word)?;
    if level_word.len() > 5 {
        return None;
    }
    let (object, rest) = split_object_prefix(rest);
    let fields = trailing_fields(rest);
    let mut message_end = rest.len();
    let mut handler = None;
    let mut cause = None;
    for (key, value, start) in fields.iter().rev().take(2) {
        match key.as_str() {
            "cause" if cause.is_none() && handler.is_none() => {
                cause = parse_cause(value);
                message_end = *start;
            }
            "handler" if handler.is_none() => {
                handler = Some(value.clone());
                message_end = *start;
            }
            _ => break,
        }
    }
    Some(OursLine {
        time: Some(time),
        level: Some(level),
        object,
        uid: None,
        message: rest[..message_end].to_string(),
        handler,
        cause,
        fields: fields.into_iter().map(|(k, v, _)| (k, v)).collect(),
    })
}

/// The ` key=value` pairs at the end of `s`, read from the right, returned in line order with
/// the byte offset of each pair's leading space.
fn trailing_fields(s: &str) -> Vec<(String, String, usize)> {
    let mut out = Vec::new();
    let mut end = s.len();
    while let Some((key, value, start)) = last_field(&s[..end]) {
        out.push((key, value, start));
        end = start;
    }
    out.reverse();
    out
}

fn last_field(s: &str) -> Option<(String, String, usize)> {
    let bytes = s.as_bytes();
    let (value, eq) = if s.ends_with('"') && s.len() >= 2 {
        // The opening quote is the last `="` before the end: inside a JSON string every quote
        // is escaped, so `="` cannot occur there unescaped.
        let open = s[..s.len() - 1].rfind("=\"")? + 1;
        let value: String = serde_json::from_str(&s[open..]).ok()?;
        (value, open - 1)
    } else {
        let start = s.bytes().rposition(|c| !is_plain(c)).map(|i| i + 1).unwrap_or(0);
        if start == s.len() || start == 0 || bytes[start - 1] != b'=' {
            return None;
        }
        (s[start..].to_string(), start - 1)
    };
    let key_start = s[..eq]
        .bytes()
        .rposition(|c| !(c.is_ascii_alphanumeric() || c == b'_' || c == b'.'))
        .map(|i| i + 1)?;
    if key_start == eq || bytes[key_start - 1] != b' ' || bytes[key_start].is_ascii_digit() {
        return None;
    }
    Some((s[key_start..eq].to_string(), value, key_start - 1))
}

fn is_plain(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"._-/:@+".contains(&c)
}

/// Reads a parsed JSON object as our json line; `None` unless it has a string `message` and a
/// string `level` (Kopf's json has `severity` instead).
pub fn parse_json(obj: &Map<String, Value>) -> Option<OursLine> {
    let message = obj.get("message")?.as_str()?.to_string();
    let level = Level::parse(obj.get("level")?.as_str()?)?;
    let time = obj.get("timestamp").and_then(Value::as_str).and_then(parse_iso_time);
    let (object, uid) = obj
        .get("object")
        .and_then(Value::as_object)
        .map(object_reference)
        .unwrap_or_default();
    let handler = obj.get("handler").and_then(Value::as_str).map(str::to_string);
    let cause = obj.get("cause").and_then(Value::as_str).and_then(parse_cause);
    let fields = obj
        .iter()
        .filter(|(k, _)| {
            !matches!(
                k.as_str(),
                "timestamp" | "level" | "message" | "object" | "handler" | "cause"
            )
        })
        .map(|(k, v)| {
            let v = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (k.clone(), v)
        })
        .collect();
    Some(OursLine {
        time,
        level: Some(level),
        object,
        uid,
        message,
        handler,
        cause,
        fields,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_real_sample_parses() {
        let line = r#"2026-11-29T17:15:53.389Z  WARN [store/catalog-api] Failed to post an event: code=403 reason=Accepted message="events.events.k8s.io is forbidden: User \"system:serviceaccount:store:catalog-operator\" cannot create resource \"events\" in API group \"events.k8s.io\" in the namespace \"store\"" handler=accept cause=create"#;
        let l = parse_text(line).unwrap();
        assert_eq!(l.level, Some(Level::Warning));
        assert_eq!(l.object.unwrap().to_string(), "store/catalog-api");
        assert_eq!(l.handler.as_deref(), Some("accept"));
        assert_eq!(l.cause, Some(Cause::Create));
        assert!(l.message.starts_with("Failed to post an event: code=403"));
        assert!(l.message.ends_with("namespace \\\"store\\\"\""));
        let keys: Vec<&str> = l.fields.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["code", "reason", "message", "handler", "cause"]);
        assert!(
            l.fields[2]
                .1
                .starts_with("events.events.k8s.io is forbidden: User \"system")
        );
    }

    #[test]
    fn messages_keep_their_own_fields() {
        let l = parse_text("2026-11-29T17:15:53.377Z  INFO [store/catalog-api] Accepted store/catalog-api: image=registry.example.com/store/catalog:1.4.0 port=7000 handler=accept cause=create").unwrap();
        assert_eq!(
            l.message,
            "Accepted store/catalog-api: image=registry.example.com/store/catalog:1.4.0 port=7000"
        );
        let l =
            parse_text("2026-11-29T17:15:53.377Z  INFO Operator started version=\"0.1.0 (commit x)\" namespaces=store")
                .unwrap();
        assert_eq!(l.object, None);
        assert_eq!(l.handler, None);
        assert_eq!(l.fields[0], ("version".into(), "0.1.0 (commit x)".into()));
        assert!(parse_text("2026-11-29T17:15:53.377Z  NOPE x").is_none());
        assert!(parse_text("[2026-11-29 16:21:14,101] kopf.objects [INFO    ] x").is_none());
    }
}
