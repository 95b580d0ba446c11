//! Kopf's log line formats (`kopf run --log-format=full|plain|json`), as written by
//! `kopf/_core/actions/loggers.py` (all versions from 0.2x to 1.44):
//!
//! - `full` (default): `[%(asctime)s] %(name)-20.20s [%(levelname)-8.8s] %(message)s`, e.g.
//!   `[2026-11-29 16:21:14,101] kopf.objects         [INFO    ] [todo/todo-api] Creation is processed: 1 succeeded; 0 failed.`
//!   — asctime is the container's local time without a zone, millisecond resolution;
//! - `plain`: `%(message)s`;
//! - `json`: `{"message", "timestamp" (ISO 8601 with offset), "object": {apiVersion, kind, name,
//!   uid, namespace}, "severity": "debug|info|warn|error|fatal"}`; the object key is
//!   `--log-refkey` (default `object`), so any object-valued key with a `name` is accepted.
//!
//! Per-object messages carry a `[ns/name] ` (`[name] ` when cluster-scoped) prefix unless
//! `--no-log-prefix` (the default for json). Tracebacks of `logger.exception` follow the record
//! on lines of their own (`full`, `plain`) or in the json's `exc_info`.

use chrono::{DateTime, NaiveDate, Utc};
use serde_json::{Map, Value};

use crate::vocab::record::{Level, ObjectKey};

/// The header of a `full`-format line, borrowed from the line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FullLine<'a> {
    /// asctime, read as UTC (it is the container's local time; see [`crate::logs::Clock`]).
    pub time: DateTime<Utc>,
    /// The logger name as printed: padded or cut to 20 characters (`kopf._core.engines.p`).
    pub logger: &'a str,
    /// The level.
    pub level: Level,
    /// The message, with its `[ns/name] ` prefix if any.
    pub message: &'a str,
}

/// Parses a `full`-format line; `None` when the line is not one (no error: the caller decides
/// whether it is a continuation, a plain line or unmatched).
pub fn parse_full(line: &str) -> Option<FullLine<'_>> {
    let rest = line.strip_prefix('[')?;
    let time = parse_asctime(rest.get(..23)?)?;
    let rest = rest.get(23..)?.strip_prefix("] ")?;
    let logger_end = rest.find(' ')?;
    let logger = &rest[..logger_end];
    let rest = rest[logger_end..].trim_start_matches(' ').strip_prefix('[')?;
    let level_end = rest.find(']')?;
    let level = Level::parse(&rest[..level_end])?;
    let rest = &rest[level_end + 1..];
    let message = rest.strip_prefix(' ').unwrap_or(rest);
    Some(FullLine {
        time,
        logger,
        level,
        message,
    })
}

/// Parses Python logging's default asctime, `2026-11-29 16:21:14,101`, as UTC.
pub fn parse_asctime(s: &str) -> Option<DateTime<Utc>> {
    let b = s.as_bytes();
    if b.len() != 23
        || b[4] != b'-'
        || b[7] != b'-'
        || b[10] != b' '
        || b[13] != b':'
        || b[16] != b':'
        || (b[19] != b',' && b[19] != b'.')
    {
        return None;
    }
    let num = |from: usize, to: usize| -> Option<u32> {
        let mut n = 0u32;
        for &c in &b[from..to] {
            if !c.is_ascii_digit() {
                return None;
            }
            n = n * 10 + u32::from(c - b'0');
        }
        Some(n)
    };
    let date = NaiveDate::from_ymd_opt(num(0, 4)? as i32, num(5, 7)?, num(8, 10)?)?;
    let time = date.and_hms_milli_opt(num(11, 13)?, num(14, 16)?, num(17, 19)?, num(20, 23)?)?;
    Some(time.and_utc())
}

/// Splits Kopf's (and our) `[ns/name] ` / `[name] ` prefix off a message.
///
/// Only Kubernetes-name characters (lowercase letters, digits, `-`, `.`) with at most one `/`
/// count, so a message that merely starts with `[` (a Python list) is left alone.
pub fn split_object_prefix(message: &str) -> (Option<ObjectKey>, &str) {
    let Some(rest) = message.strip_prefix('[') else {
        return (None, message);
    };
    let Some(end) = rest.find("] ") else {
        return (None, message);
    };
    let inner = &rest[..end];
    let name_chars = inner
        .bytes()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, b'-' | b'.' | b'/'));
    if inner.is_empty() || inner.len() > 317 || !name_chars {
        return (None, message);
    }
    match ObjectKey::parse(inner) {
        Some(key) => (Some(key), &rest[end + 2..]),
        None => (None, message),
    }
}

/// The fields of a Kopf `json`-format line.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonLine {
    /// `message`, with any `[ns/name] ` prefix removed (it fills `object` when the key is absent).
    pub message: String,
    /// `timestamp`, when present and RFC 3339 / ISO 8601 with an offset.
    pub time: Option<DateTime<Utc>>,
    /// `severity`.
    pub level: Option<Level>,
    /// From the object reference (`namespace`, `name`).
    pub object: Option<ObjectKey>,
    /// The object's `uid`.
    pub uid: Option<String>,
    /// The object reference's `kind` (`Microservice`, `Backup`): which resource `object` is of.
    pub kind: Option<String>,
    /// `exc_info`: a traceback, one entry per line.
    pub traceback: Vec<String>,
}

/// Reads a parsed JSON object as a Kopf json line; `None` when it has no string `message`.
pub fn parse_json(obj: &Map<String, Value>) -> Option<JsonLine> {
    let raw_message = obj.get("message")?.as_str()?;
    let (prefix_object, message) = split_object_prefix(raw_message);
    let time = obj.get("timestamp").and_then(Value::as_str).and_then(parse_iso_time);
    let level = obj
        .get("severity")
        .or_else(|| obj.get("levelname"))
        .and_then(Value::as_str)
        .and_then(Level::parse);
    let reference = obj.values().find_map(|v| {
        let r = v.as_object()?;
        r.get("name")?.as_str()?;
        (r.contains_key("kind") || r.contains_key("uid") || r.contains_key("namespace")).then_some(r)
    });
    let (object, uid) = reference.map(object_reference).unwrap_or_default();
    let kind = reference
        .and_then(|r| r.get("kind"))
        .and_then(Value::as_str)
        .filter(|k| !k.is_empty())
        .map(str::to_string);
    let object = object.or(prefix_object);
    let traceback = obj
        .get("exc_info")
        .and_then(Value::as_str)
        .map(|s| s.lines().map(str::to_string).collect())
        .unwrap_or_default();
    Some(JsonLine {
        message: message.to_string(),
        time,
        level,
        object,
        uid,
        kind,
        traceback,
    })
}

/// Reads a JSON object reference (`{"namespace", "name", "uid", ...}`) as the object and its uid.
pub fn object_reference(r: &Map<String, Value>) -> (Option<ObjectKey>, Option<String>) {
    let text = |k: &str| {
        r.get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let object = text("name").map(|name| ObjectKey {
        namespace: text("namespace"),
        name,
    });
    (object, text("uid"))
}

/// Parses an RFC 3339 time, also with Python's `isoformat()` spelling (`+00:00`, microseconds).
pub fn parse_iso_time(s: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(s).ok().map(|t| t.with_timezone(&Utc))
}

/// Whether a line that is no record header looks like part of a Python traceback or of a
/// multi-line message: indented, empty, a traceback header, or an `ExceptionType: message` line.
pub fn looks_like_traceback(line: &str) -> bool {
    if line.is_empty() || line.starts_with(' ') || line.starts_with('\t') {
        return true;
    }
    if line.starts_with("Traceback (most recent call last)")
        || line.starts_with("During handling of the above exception")
        || line.starts_with("The above exception was the direct cause")
    {
        return true;
    }
    // `module.sub.ExceptionName: text` or a bare `ExceptionName`.
    let head = line.split(": ").next().unwrap_or(line);
    let ident = !head.is_empty()
        && head
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'.');
    ident
        && ["Error", "Exception", "Exit", "Interrupt", "Warning", "Group"]
            .iter()
            .any(|s| head.ends_with(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_lines_parse_with_padded_and_cut_fields() {
        let l = parse_full("[2026-11-29 16:21:14,101] kopf.objects         [INFO    ] [todo/todo-api] Creation is processed: 1 succeeded; 0 failed.").unwrap();
        assert_eq!(l.time.to_rfc3339(), "2026-11-29T16:21:14.101+00:00");
        assert_eq!(l.logger, "kopf.objects");
        assert_eq!(l.level, Level::Info);
        assert_eq!(
            l.message,
            "[todo/todo-api] Creation is processed: 1 succeeded; 0 failed."
        );
        let l =
            parse_full("[2026-11-29 16:27:11,168] kopf._core.engines.p [WARNING ] Failed to post an event.").unwrap();
        assert_eq!(l.logger, "kopf._core.engines.p");
        assert_eq!(l.level, Level::Warning);
        let l = parse_full("[2026-11-29 16:27:11,168] x [CRITICAL] boom").unwrap();
        assert_eq!(l.level, Level::Critical);
        assert!(parse_full("[2026-11-29 16:21").is_none());
        assert!(parse_full("[2026-11-29 16:21:14,101] kopf.objects [NOTALEVEL] x").is_none());
        assert!(parse_full("[todo/x] Handler 'a' succeeded.").is_none());
    }

    #[test]
    fn object_prefixes_are_recognised_and_lists_are_not() {
        let (o, m) = split_object_prefix("[todo/todo-api] Handler 'accept' succeeded.");
        assert_eq!(o.unwrap().to_string(), "todo/todo-api");
        assert_eq!(m, "Handler 'accept' succeeded.");
        let (o, _) = split_object_prefix("[cluster-thing] Handler 'a' succeeded.");
        assert_eq!(o.unwrap().namespace, None);
        let (o, m) = split_object_prefix("[(microservices, 'uid')] left");
        assert!(o.is_none());
        assert_eq!(m, "[(microservices, 'uid')] left");
        assert!(split_object_prefix("[a/b/c] x").0.is_none());
    }

    #[test]
    fn json_lines_read_the_object_reference_and_severity() {
        let v: Value = serde_json::from_str(r#"{"message": "Handler 'accept' failed temporarily: image pull check failed", "timestamp": "2026-11-29T16:28:55.343672+00:00", "object": {"apiVersion": "platform.example.io/v1alpha1", "kind": "Microservice", "name": "todo-api", "uid": "c413f2cd", "namespace": "todo"}, "severity": "error"}"#).unwrap();
        let l = parse_json(v.as_object().unwrap()).unwrap();
        assert_eq!(l.object.unwrap().to_string(), "todo/todo-api");
        assert_eq!(l.level, Some(Level::Error));
        assert_eq!(l.uid.as_deref(), Some("c413f2cd"));
        assert_eq!(l.time.unwrap().to_rfc3339(), "2026-11-29T16:28:55.343672+00:00");
        let v: Value =
            serde_json::from_str(r#"{"message": "[ns/x] hi", "severity": "warn", "exc_info": "Traceback\n  File"}"#)
                .unwrap();
        let l = parse_json(v.as_object().unwrap()).unwrap();
        assert_eq!(l.object.unwrap().to_string(), "ns/x");
        assert_eq!(l.message, "hi");
        assert_eq!(l.level, Some(Level::Warning));
        assert_eq!(l.traceback, ["Traceback", "  File"]);
    }

    #[test]
    fn traceback_shapes() {
        for l in [
            "Traceback (most recent call last):",
            "  File \"/deps/kopf/x.py\", line 161, in check_response",
            "",
            "kopf._cogs.clients.errors.APIClientError: (None, None)",
            "ValueError",
            "The above exception was the direct cause of the following exception:",
        ] {
            assert!(looks_like_traceback(l), "{l}");
        }
        assert!(!looks_like_traceback("Handler 'accept' succeeded."));
        assert!(!looks_like_traceback("Accepted todo/x: image=y"));
    }
}
