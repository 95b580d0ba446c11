//! One container's log as evidence holds it ([`LogSource`]: read from `pods/log`, a bundle's
//! log file or a `--log-file`), how much of a log is read ([`LOG_SINCE`], [`LOG_TAIL_LINES`],
//! [`LOG_LIMIT_BYTES`]), and the log read as [`Record`]s.

use std::time::Duration;

use super::lines::LineSplitter;
use super::zone::LogZone;
use super::{Record, RecordParser};

/// How far back operator logs are read from `pods/log` (`sinceSeconds`).
pub const LOG_SINCE: Duration = Duration::from_secs(24 * 3600);
/// At most this many lines of log per container: the NEWEST ones (`tailLines`). `limitBytes`
/// alone would keep the oldest part of the window: the kubelet stops after that many bytes from
/// the window's start, so a chatty operator's recent failures would be cut off.
pub const LOG_TAIL_LINES: i64 = 20_000;
/// And at most this many bytes per container (`limitBytes`, applied by the kubelet after
/// `tailLines`; the end of a `--log-file`, [`super::file::TAIL_LIMIT_BYTES`]): a bound on
/// memory for very long lines.
pub const LOG_LIMIT_BYTES: i64 = 16 * 1024 * 1024;

/// One container's log, as fetched (`kubectl logs --timestamps`) or as a bundle file; a
/// `--log-file` is one whose `container` is [`super::file::FILE_CONTAINER`] and whose `pod` is
/// the file's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogSource {
    /// Pod name.
    pub pod: String,
    /// Container name.
    pub container: String,
    /// The container instance before its last restart (`--previous`).
    pub previous: bool,
    /// The log text, lines separated by `\n`.
    pub text: String,
}

impl LogSource {
    /// Every record of the log, parsed as [`RecordParser`] reads any format, zoneless times
    /// read as UTC ([`LogZone::Unset`]).
    pub fn records(&self) -> Vec<Record> {
        self.records_in(LogZone::Unset)
    }

    /// Every record of the log, its zoneless times read in `zone` (the container's `TZ`,
    /// the evidence's `Snapshot::log_zone`).
    pub fn records_in(&self, zone: LogZone) -> Vec<Record> {
        let mut splitter = LineSplitter::new();
        let mut parser = RecordParser::in_zone(zone);
        let mut out = Vec::new();
        let mut collect = |r: Record| out.push(r);
        let mut lines = Vec::new();
        splitter.push(self.text.as_bytes(), &mut |l| lines.push(l));
        splitter.finish(&mut |l| lines.push(l));
        for line in lines {
            parser.push(line, &mut collect);
        }
        parser.flush(&mut collect);
        out
    }
}
