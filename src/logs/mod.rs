//! Operator logs as evidence: from bytes to records to handler runs.
//!
//! - [`source`]: one container's log as evidence holds it ([`LogSource`]), and how much of it
//!   is read;
//! - [`lines`]: a byte stream → bounded text lines (64 KiB cap, junk and cut lines flagged);
//! - [`record`]: lines → [`Record`]s: the kubelet `--timestamps` prefix, Kopf's `full`, `plain`
//!   and `json` formats ([`crate::kopf::logs`]), our operator's `text` and `json` formats
//!   ([`ours`]), multi-line records (tracebacks), unmatched lines kept and counted;
//! - [`runs`]: records → handler [`runs::Run`]s (one invocation of one handler for one object,
//!   with cause, outcome and detail);
//! - [`stream`]: one container log end to end (bytes → runs), for blocking and async readers;
//! - [`coverage`]: what a log can and cannot show (first and last line per container);
//! - [`copies`]: one run read from a Pod and from a file (or two files) is one run;
//! - [`file`]: logs read from files (`--log-file`, alone with `logs --local`) instead of the Pods;
//! - [`live`]: the operator's Pods through `pods/log`, once or followed;
//! - [`filter`] and [`view`]: which runs `logs --handler` shows, and how.
//!
//! `status` and `explain-events` reuse [`record::RecordParser`] and
//! [`crate::kopf::messages::classify`] to find each object's last `... is processed` line and the
//! `Failed to post an event` lines.

pub mod copies;
pub mod coverage;
pub mod crash;
pub mod file;
pub mod filter;
pub mod lines;
pub mod live;
pub mod ours;
pub mod record;
pub mod runs;
pub mod source;
pub mod stream;
pub mod view;
pub mod warning;
pub mod zone;

use chrono::{DateTime, Utc};

pub use crate::vocab::record::{Level, ObjectKey};
pub use record::{Record, RecordParser};
pub use source::LogSource;

/// Which clock a record's time was read from; the better clock wins when a line has two.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Clock {
    /// The container's local time without a zone (Kopf's `full` format), read as UTC.
    OperatorLocal,
    /// The operator's own time with a zone (Kopf `json`, our formats).
    OperatorUtc,
    /// The kubelet's RFC 3339 prefix (`kubectl logs --timestamps`, `pods/log?timestamps=true`).
    Kubelet,
}

impl Clock {
    /// `kubelet`, `operator`, `operator-local`: the value in JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            Clock::Kubelet => "kubelet",
            Clock::OperatorUtc => "operator",
            Clock::OperatorLocal => "operator-local",
        }
    }

    /// Words for human output, after a time: which clock it is from. What "operator's local
    /// time" means is said once per answer ([`LOCAL_TIME_NOTE`], see [`local_time_note`]), not
    /// after every time.
    pub fn describe(self) -> &'static str {
        match self {
            Clock::Kubelet => "kubelet clock",
            Clock::OperatorUtc => "operator's clock",
            Clock::OperatorLocal => "operator's local time",
        }
    }
}

/// What [`Clock::OperatorLocal`] times are, said once in an answer that shows one, when how
/// they were read is not known (`logs --local`, where no Pod says its `TZ`).
pub const LOCAL_TIME_NOTE: &str = "\"operator's local time\" (operator-local) is the time Kopf's full format writes, without a zone: read as UTC, which a file alone cannot confirm (--log-file without --local, as status and explain-events read it, checks it against the API server's clock); logs read with kubelet timestamps have a better clock";

/// The note an answer gives once when any of `texts` shows a time in the operator's local time
/// (as [`Clock::describe`] words it), else nothing: what such times are, and how each log's
/// were read (`zones`, the evidence's `Snapshot::log_zones`; [`LOCAL_TIME_NOTE`]
/// when none is known).
pub fn local_time_note<'a>(texts: impl IntoIterator<Item = &'a str>, zones: &[zone::LogZone]) -> Option<String> {
    let marker = Clock::OperatorLocal.describe();
    if !texts.into_iter().any(|t| t.contains(marker)) {
        return None;
    }
    if zones.is_empty() {
        return Some(LOCAL_TIME_NOTE.to_string());
    }
    let how: Vec<String> = zones.iter().map(zone::LogZone::describe).collect();
    Some(format!(
        "\"operator's local time\" (operator-local) is the time Kopf's full format writes, without a zone: {}; logs read with kubelet timestamps have a better clock",
        how.join("; ")
    ))
}

/// A time and the clock it was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Stamp {
    /// The time, UTC.
    pub at: DateTime<Utc>,
    /// Where it came from.
    pub clock: Clock,
}

/// Which format a record was read in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// Kopf `--log-format=full` (the default): `[time] logger [LEVEL] message`.
    KopfFull,
    /// Kopf `--log-format=plain`: the message alone (with the `[ns/name] ` prefix unless
    /// `--no-log-prefix`).
    KopfPlain,
    /// Kopf `--log-format=json`: `{"message", "timestamp", "object", "severity"}`.
    KopfJson,
    /// Our operator's `--log-format text`.
    OursText,
    /// Our operator's `--log-format json`.
    OursJson,
    /// A line that matches no format (kept, counted).
    Unmatched,
    /// A crash outside any log record: a Python traceback (`Traceback (most recent call
    /// last):` ... `SyntaxError: ...`), our binary's `error: ...` exit or a Rust panic, with its
    /// lines as continuation ([`crash`]).
    Crash,
    /// A Python warning outside any log record (`PATH:LINE: CATEGORY: MESSAGE` and the
    /// indented source line after it, [`warning`]): Kopf 1.38's `FutureWarning` that it
    /// switched to the cluster-wide mode, a `DeprecationWarning` of the handlers' code.
    PythonWarning,
}

impl Format {
    /// `kopf-full`, `kopf-plain`, `kopf-json`, `text`, `json`, `unmatched`, `crash`,
    /// `python-warning`.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::KopfFull => "kopf-full",
            Format::KopfPlain => "kopf-plain",
            Format::KopfJson => "kopf-json",
            Format::OursText => "text",
            Format::OursJson => "json",
            Format::Unmatched => "unmatched",
            Format::Crash => "crash",
            Format::PythonWarning => "python-warning",
        }
    }

    /// Whether the format has a header on every record, so that other lines after a record
    /// continue it (Python logging writes a multi-line message or a traceback that way).
    pub fn has_header(self) -> bool {
        matches!(
            self,
            Format::KopfFull | Format::KopfJson | Format::OursText | Format::OursJson
        )
    }
}
