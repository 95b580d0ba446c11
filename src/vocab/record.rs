//! The words a log record carries that every layer reads: its level and the object it is about.
//! Kopf's log formats, our operator's and the log pipeline all speak them, so they live at the
//! bottom.

use std::fmt;

/// A log level, in Kopf's (Python logging) and tracing's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// tracing TRACE.
    Trace,
    /// DEBUG.
    Debug,
    /// INFO.
    Info,
    /// WARNING / WARN (Kopf json: `warn`).
    Warning,
    /// ERROR.
    Error,
    /// CRITICAL (Kopf json: `fatal`).
    Critical,
}

impl Level {
    /// Reads a level word in any of the spellings of Kopf (`WARNING`, json `warn`, `fatal`) and
    /// tracing (`WARN`, `TRACE`), case-insensitively.
    pub fn parse(word: &str) -> Option<Level> {
        let w = word.trim();
        Some(match w.len() {
            4 if w.eq_ignore_ascii_case("info") => Level::Info,
            4 if w.eq_ignore_ascii_case("warn") => Level::Warning,
            5 if w.eq_ignore_ascii_case("debug") => Level::Debug,
            5 if w.eq_ignore_ascii_case("error") => Level::Error,
            5 if w.eq_ignore_ascii_case("trace") => Level::Trace,
            5 if w.eq_ignore_ascii_case("fatal") => Level::Critical,
            7 if w.eq_ignore_ascii_case("warning") => Level::Warning,
            8 if w.eq_ignore_ascii_case("critical") => Level::Critical,
            _ => return None,
        })
    }

    /// `DEBUG`, `INFO`, `WARNING`, ... (Python logging's names).
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Trace => "TRACE",
            Level::Debug => "DEBUG",
            Level::Info => "INFO",
            Level::Warning => "WARNING",
            Level::Error => "ERROR",
            Level::Critical => "CRITICAL",
        }
    }
}

/// The object a record is about: `namespace/name`, or `name` for a cluster-scoped object (as
/// Kopf's `[ns/name]` / `[name]` prefix and our `[ns/name]` prefix write it).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectKey {
    /// The namespace; `None` for a cluster-scoped object.
    pub namespace: Option<String>,
    /// `metadata.name`.
    pub name: String,
}

impl ObjectKey {
    /// `ns/name` → namespaced, `name` → cluster-scoped. `None` for an empty name or more than one `/`.
    pub fn parse(s: &str) -> Option<ObjectKey> {
        let (namespace, name) = match s.split_once('/') {
            Some((ns, name)) if !ns.is_empty() && !name.contains('/') => (Some(ns.to_string()), name),
            Some(_) => return None,
            None => (None, s),
        };
        if name.is_empty() {
            return None;
        }
        Some(ObjectKey {
            namespace,
            name: name.to_string(),
        })
    }
}

impl fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{ns}/{}", self.name),
            None => f.write_str(&self.name),
        }
    }
}
