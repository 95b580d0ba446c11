//! Lines → records: one [`Record`] per log record, whatever the format.
//!
//! Per line: the kubelet's RFC 3339 `--timestamps` prefix is taken off (it is the better clock),
//! then the rest is read as, in order, a JSON record (Kopf `json` or ours `json`), a Kopf `full`
//! header, our `text` header. A line that is none of these is a Kopf `plain` record when it has
//! the `[ns/name] ` prefix or speaks Kopf's vocabulary; else it continues the record before it
//! when that record's format has headers (Python logging writes multi-line messages and
//! tracebacks that way) or when it is shaped like a traceback; else it is kept as an
//! `Unmatched` record.
//! Nothing is dropped: [`ParseStats`] counts every line by what it became.
//!
//! The parser holds one record back (continuation lines may follow); [`RecordParser::flush`]
//! releases it (at the end of a stream, or when a followed stream has been quiet).

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::crash::starts_crash;
use super::lines::RawLine;
use super::ours;
use super::zone::LogZone;
use super::{Clock, Format, Level, ObjectKey, Stamp};
use crate::kopf::logs::{looks_like_traceback, parse_full, split_object_prefix};
use crate::kopf::messages::{Lifecycle, classify};
use crate::vocab::cause::Cause;

/// Continuation lines kept per record; further ones are counted in `omitted_lines`.
pub const MAX_CONTINUATION_LINES: usize = 500;

/// One log record: a header line and its continuation lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// Line number of the header in its stream (1-based).
    pub line_number: u64,
    /// The best time of the record and its clock (kubelet prefix, else the operator's own).
    pub stamp: Option<Stamp>,
    /// The level, when the format has one.
    pub level: Option<Level>,
    /// Kopf's logger name (`full` only), e.g. `kopf.objects`, `kopf._core.engines.p`.
    pub logger: Option<String>,
    /// The object the record is about.
    pub object: Option<ObjectKey>,
    /// The object's uid (json formats only).
    pub uid: Option<String>,
    /// The `kind` of the object (Kopf json: its object reference's, `Microservice`, `Backup`);
    /// `None` when the line does not say (Kopf's plain `[ns/name]` prefix, ours). Which
    /// resource a line names is [`crate::evidence::naming`]'s rule.
    pub object_kind: Option<String>,
    /// The handler id, when the line carries it as a field (ours).
    pub handler: Option<String>,
    /// The cause, when the line carries it as a field (ours).
    pub cause: Option<Cause>,
    /// The message, without prefixes (and for ours text without trailing `handler=`/`cause=`).
    pub message: String,
    /// Structured fields other than the above (ours), values unquoted.
    pub fields: Vec<(String, String)>,
    /// The format the header was read in.
    pub format: Format,
    /// The lines as read (with any kubelet prefix), header first; for Kopf `json`, the lines of
    /// its `exc_info` traceback follow the header.
    pub lines: Vec<String>,
    /// Continuation lines not kept (over [`MAX_CONTINUATION_LINES`]).
    pub omitted_lines: usize,
    /// The header line ended without a newline (the stream ended mid-line: a log read while
    /// it was written): its message may be cut, so it cannot be told from Kopf's own lines.
    pub cut: bool,
}

impl Record {
    /// What the message says in Kopf's vocabulary.
    pub fn lifecycle(&self) -> Lifecycle {
        let lc = classify(&self.message);
        if let Lifecycle::EventPostFailed(kopf) = &lc {
            let fields = self.fields.iter().map(|(k, v)| (k.as_str(), v.as_str()));
            if let Some(ours) = crate::kopf::messages::event_post_failure_from_fields(fields) {
                let mut merged = ours;
                merged.event_type = merged.event_type.or_else(|| kopf.event_type.clone());
                merged.event_message = kopf.event_message.clone();
                return Lifecycle::EventPostFailed(merged);
            }
        }
        lc
    }

    /// The continuation lines without their kubelet prefix (a traceback, the rest of a message).
    pub fn continuation(&self) -> impl Iterator<Item = &str> {
        self.lines.iter().skip(1).map(|l| split_kubelet_prefix(l).1)
    }

    /// What a crash record ([`Format::Crash`]) says the process died of
    /// ([`super::crash::exception_of`]); `None` for any other record.
    pub fn crash(&self) -> Option<String> {
        if self.format != Format::Crash {
            return None;
        }
        let rest: Vec<&str> = self.continuation().collect();
        super::crash::exception_of(&self.message, &rest)
    }

    /// The line number (1-based, in its stream) of what a crash record says the process died
    /// of: a Python traceback's exception line, else the header (our own `error: ...`, a
    /// panic's `thread '...' panicked at`); also the header when continuation lines were
    /// dropped ([`MAX_CONTINUATION_LINES`]) and the kept lines do not end the traceback.
    /// `None` for any record that is not a crash.
    pub fn crash_line_number(&self) -> Option<u64> {
        self.crash()?;
        let rest: Vec<&str> = self.continuation().collect();
        let header = self.message.trim();
        if header.starts_with("error: ") || header.starts_with("thread '") || self.omitted_lines > 0 {
            return Some(self.line_number);
        }
        Some(super::crash::exception_index(&rest).map_or(self.line_number, |i| self.line_number + 1 + i as u64))
    }

    /// Whether this is Kopf's warning that it switched to the cluster-wide mode, run with
    /// neither `--namespace` nor `--all-namespaces` (a [`Format::PythonWarning`] record of
    /// [`super::warning::KOPF_CLUSTER_WIDE_FALLBACK`]): the process watches every namespace.
    pub fn is_kopf_cluster_wide_fallback(&self) -> bool {
        self.format == Format::PythonWarning
            && super::warning::parse(&self.message)
                .is_some_and(|w| super::warning::is_kopf_cluster_wide_fallback(w.message))
    }

    /// The record's time, if any.
    pub fn time(&self) -> Option<DateTime<Utc>> {
        self.stamp.map(|s| s.at)
    }
}

/// Counts of what a stream's lines became; nothing is dropped silently.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParseStats {
    /// Lines read.
    pub lines: u64,
    /// Records (headers, plain and unmatched lines).
    pub records: u64,
    /// Lines that continued a record.
    pub continuation_lines: u64,
    /// Lines that matched no format (kept as `Unmatched` records).
    pub unmatched_lines: u64,
    /// Lines cut at 64 KiB (kept with a marker).
    pub truncated_lines: u64,
    /// Lines that were not UTF-8 (kept, bad bytes replaced).
    pub invalid_utf8_lines: u64,
    /// A last line without newline (a stream cut short).
    pub unterminated_lines: u64,
    /// Lines with a kubelet `--timestamps` prefix.
    pub kubelet_stamped_lines: u64,
    /// Records per format, in [`Format`] order: full, plain, kopf-json, text, json, unmatched,
    /// crash, python-warning.
    pub by_format: [u64; 8],
    /// The first and last record time seen (by the best clock of each record).
    pub first: Option<Stamp>,
    /// See `first`.
    pub last: Option<Stamp>,
}

fn format_index(f: Format) -> usize {
    match f {
        Format::KopfFull => 0,
        Format::KopfPlain => 1,
        Format::KopfJson => 2,
        Format::OursText => 3,
        Format::OursJson => 4,
        Format::Unmatched => 5,
        Format::Crash => 6,
        Format::PythonWarning => 7,
    }
}

impl ParseStats {
    /// Records read in `format`.
    pub fn records_in(&self, format: Format) -> u64 {
        self.by_format[format_index(format)]
    }
}

/// Assembles records from lines (see the module docs).
#[derive(Debug)]
pub struct RecordParser {
    pending: Option<Record>,
    stats: ParseStats,
    zone: LogZone,
}

impl Default for RecordParser {
    fn default() -> Self {
        RecordParser {
            pending: None,
            stats: ParseStats::default(),
            zone: LogZone::Unset,
        }
    }
}

impl RecordParser {
    /// A parser for one stream, reading zoneless times (Kopf's `full` format) as UTC.
    pub fn new() -> Self {
        Self::default()
    }

    /// A parser for one stream of a container whose `TZ` is `zone`: zoneless times
    /// ([`Clock::OperatorLocal`]) are read in it ([`LogZone::to_utc`]); times with a zone or a
    /// kubelet prefix are not changed.
    pub fn in_zone(zone: LogZone) -> Self {
        RecordParser {
            zone,
            ..Self::default()
        }
    }

    /// What the lines so far became.
    pub fn stats(&self) -> &ParseStats {
        &self.stats
    }

    /// Feeds one line; calls `out` with the record it completed, if any.
    pub fn push(&mut self, line: RawLine, out: &mut impl FnMut(Record)) {
        let s = &mut self.stats;
        s.lines += 1;
        s.truncated_lines += u64::from(line.truncated_bytes > 0);
        s.invalid_utf8_lines += u64::from(line.invalid_utf8);
        s.unterminated_lines += u64::from(line.unterminated);
        let (kubelet, body) = split_kubelet_prefix(&line.text);
        s.kubelet_stamped_lines += u64::from(kubelet.is_some());
        let kubelet = kubelet.map(|at| Stamp {
            at,
            clock: Clock::Kubelet,
        });

        if let Some(mut record) = parse_header(body, kubelet, line.number) {
            record.cut = line.unterminated;
            if let Some(stamp) = record.stamp.as_mut().filter(|s| s.clock == Clock::OperatorLocal) {
                stamp.at = self.zone.to_utc(stamp.at.naive_utc());
            }
            self.start(record, line.text, out);
            return;
        }
        let clean = !line.invalid_utf8 && !body.chars().any(|c| c.is_control() && c != '\t');
        let (object, message) = split_object_prefix(body);
        // A Python warning (`PATH:LINE: CATEGORY: MESSAGE`) starts a record of its own: Python
        // writes it to stderr whenever it warns, between other records.
        let warning = clean && super::warning::parse(body).is_some();
        let plain = clean && !warning && (object.is_some() || classify(message) != Lifecycle::Other);
        // A crash (a traceback outside any record, our `error:` exit, a panic) starts a record of
        // its own, unless a Kopf record's traceback goes on (Kopf logs exceptions that way).
        let crash = clean && !plain && !warning && starts_crash(body);
        // Our own log lines never continue into an `error:` exit or a panic.
        let crash_after_ours = crash
            && self
                .pending
                .as_ref()
                .is_some_and(|p| matches!(p.format, Format::OursText | Format::OursJson));
        if let Some(cur) = self
            .pending
            .as_mut()
            .filter(|_| !plain && !crash_after_ours && !warning)
        {
            // A warning's source line follows it, indented.
            let warning_source = cur.format == Format::PythonWarning && clean && body.starts_with([' ', '\t']);
            let continues = warning_source
                || (cur.format.has_header() && clean && !looks_like_broken_header(body))
                || (cur.format == Format::Crash && clean && !looks_like_broken_header(body))
                || (clean && looks_like_traceback(body) && !matches!(cur.format, Format::Unmatched));
            if continues {
                self.stats.continuation_lines += 1;
                if cur.lines.len() <= MAX_CONTINUATION_LINES {
                    cur.lines.push(line.text);
                } else {
                    cur.omitted_lines += 1;
                }
                return;
            }
        }
        let record = Record {
            line_number: line.number,
            stamp: kubelet,
            level: warning.then_some(Level::Warning),
            logger: None,
            object,
            uid: None,
            object_kind: None,
            handler: None,
            cause: None,
            message: if plain { message } else { body }.to_string(),
            fields: Vec::new(),
            format: if plain {
                Format::KopfPlain
            } else if warning {
                Format::PythonWarning
            } else if crash {
                Format::Crash
            } else {
                Format::Unmatched
            },
            lines: Vec::new(),
            omitted_lines: 0,
            cut: false,
        };
        if !plain && !crash && !warning {
            self.stats.unmatched_lines += 1;
        }
        self.start(record, line.text, out);
    }

    /// Releases the record held back, if any.
    pub fn flush(&mut self, out: &mut impl FnMut(Record)) {
        if let Some(done) = self.pending.take() {
            out(done);
        }
    }

    fn start(&mut self, mut record: Record, raw: String, out: &mut impl FnMut(Record)) {
        record.lines.insert(0, raw);
        let s = &mut self.stats;
        s.records += 1;
        s.by_format[format_index(record.format)] += 1;
        if let Some(stamp) = record.stamp {
            s.first.get_or_insert(stamp);
            s.last = Some(match s.last {
                Some(last) if last.at > stamp.at => last,
                _ => stamp,
            });
        }
        if let Some(done) = self.pending.replace(record) {
            out(done);
        }
    }
}

/// A line that starts like a record header but is not one (a cut or garbled header): never a
/// continuation.
fn looks_like_broken_header(body: &str) -> bool {
    let b = body.as_bytes();
    if body.starts_with('{')
        || (b.len() >= 2 && b[0] == b'[' && b[1].is_ascii_digit())
        || (b.len() >= 5 && b[..4].iter().all(u8::is_ascii_digit) && b[4] == b'-')
    {
        return true;
    }
    // A header behind a short prefix (`grep -n` output: `276:[2026-11-29 ...] kopf.objects ...`).
    body.get(..16)
        .and_then(|head| head.find("[20"))
        .is_some_and(|at| at > 0 && parse_full(&body[at..]).is_some())
}

/// Reads a header line (json, Kopf full, ours text); `None` when `body` is none of them.
fn parse_header(body: &str, kubelet: Option<Stamp>, line_number: u64) -> Option<Record> {
    let base = |format: Format| Record {
        line_number,
        stamp: kubelet,
        level: None,
        logger: None,
        object: None,
        uid: None,
        object_kind: None,
        handler: None,
        cause: None,
        message: String::new(),
        fields: Vec::new(),
        format,
        lines: Vec::new(),
        omitted_lines: 0,
        cut: false,
    };
    let own = |at: Option<DateTime<Utc>>, clock: Clock| kubelet.or(at.map(|at| Stamp { at, clock }));
    if body.starts_with('{') {
        let value: Value = serde_json::from_str(body).ok()?;
        let obj = value.as_object()?;
        if let Some(l) = ours::parse_json(obj) {
            return Some(Record {
                stamp: own(l.time, Clock::OperatorUtc),
                level: l.level,
                object: l.object,
                uid: l.uid,
                handler: l.handler,
                cause: l.cause,
                message: l.message,
                fields: l.fields,
                ..base(Format::OursJson)
            });
        }
        let l = crate::kopf::logs::parse_json(obj)?;
        let mut record = Record {
            stamp: own(l.time, Clock::OperatorUtc),
            level: l.level,
            object: l.object,
            uid: l.uid,
            object_kind: l.kind,
            message: l.message,
            ..base(Format::KopfJson)
        };
        // exc_info: the traceback, kept as continuation text of the record.
        record
            .lines
            .extend(l.traceback.into_iter().take(MAX_CONTINUATION_LINES));
        return Some(record);
    }
    if body.starts_with('[') {
        if let Some(l) = parse_full(body) {
            let (object, message) = split_object_prefix(l.message);
            return Some(Record {
                stamp: own(Some(l.time), Clock::OperatorLocal),
                level: Some(l.level),
                logger: Some(l.logger.to_string()),
                object,
                message: message.to_string(),
                ..base(Format::KopfFull)
            });
        }
        return None;
    }
    let first = body.as_bytes().first()?;
    if first.is_ascii_digit() {
        let l = ours::parse_text(body)?;
        return Some(Record {
            stamp: own(l.time, Clock::OperatorUtc),
            level: l.level,
            object: l.object,
            handler: l.handler,
            cause: l.cause,
            message: l.message,
            fields: l.fields,
            ..base(Format::OursText)
        });
    }
    None
}

/// Splits the kubelet's `--timestamps` prefix (`2026-11-29T16:21:14.101234567Z `) off a line.
///
/// Our own text format also starts with an RFC 3339 time; it is told apart by what follows the
/// time: a level word (` INFO`, `ERROR`, ...) means the time is the operator's, not the kubelet's.
pub fn split_kubelet_prefix(line: &str) -> (Option<DateTime<Utc>>, &str) {
    let b = line.as_bytes();
    if b.len() < 21 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || !b[0].is_ascii_digit() {
        return (None, line);
    }
    let Some(space) = line.find(' ') else {
        return (None, line);
    };
    let Some(at) = crate::kopf::logs::parse_iso_time(&line[..space]) else {
        return (None, line);
    };
    let rest = &line[space + 1..];
    let word = rest.trim_start_matches(' ').split(' ').next().unwrap_or("");
    let ours_level = word.len() <= 5 && Level::parse(word).is_some() && word == word.to_uppercase();
    if ours_level && rest.len() > word.len() {
        return (None, line);
    }
    (Some(at), rest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logs::lines::LineSplitter;

    pub(crate) fn parse_all(input: &str) -> (Vec<Record>, ParseStats) {
        let mut records = Vec::new();
        let mut parser = RecordParser::new();
        let mut splitter = LineSplitter::new();
        let mut push = |l| parser.push(l, &mut |r| records.push(r));
        splitter.push(input.as_bytes(), &mut push);
        splitter.finish(&mut push);
        parser.flush(&mut |r| records.push(r));
        (records, parser.stats().clone())
    }

    /// Issue 18 item 8: a crash loop's previous log (a traceback no record holds, with kubelet
    /// timestamps) is one crash record, and no line is counted as matching no log format; our
    /// `error:` exit after our text lines is a crash of its own; a traceback Kopf logs under
    /// its record stays that record's.
    #[test]
    fn crashes_are_records_not_unmatched_lines() {
        let text = "2026-12-02T02:10:00.000000001Z Traceback (most recent call last):\n2026-12-02T02:10:00.000000002Z   File \"/src/handlers.py\", line 5\n2026-12-02T02:10:00.000000003Z     def broken(:\n2026-12-02T02:10:00.000000004Z                ^\n2026-12-02T02:10:00.000000005Z SyntaxError: invalid syntax\n";
        let (records, stats) = parse_all(text);
        assert_eq!(records.len(), 1, "{records:?}");
        assert_eq!(stats.unmatched_lines, 0);
        assert_eq!(stats.records_in(Format::Crash), 1);
        assert_eq!(
            records[0].crash().as_deref(),
            Some("SyntaxError: invalid syntax (File \"/src/handlers.py\", line 5)")
        );
        // Cited at the exception's line (5 of the stream), not the `Traceback` that opens it.
        assert_eq!(records[0].crash_line_number(), Some(5));
        let ours = "2026-12-02T02:10:00.000Z  INFO Operator started namespaces=a\nerror: the watch failed: 403\nhint: grant list\n";
        let (records, stats) = parse_all(ours);
        assert_eq!(records.len(), 2, "{records:?}");
        assert_eq!(records[1].crash().as_deref(), Some("error: the watch failed: 403"));
        assert_eq!(
            records[1].crash_line_number(),
            Some(2),
            "ours says it in the header line"
        );
        assert_eq!(stats.unmatched_lines, 0);
        let kopf = "[2026-12-02 02:10:00,000] kopf.objects         [ERROR   ] [a/b] Handler 'x' failed with an exception. Will retry.\nTraceback (most recent call last):\n  File \"/src/h.py\", line 3, in x\nValueError: no\n";
        let (records, _) = parse_all(kopf);
        assert_eq!(records.len(), 1);
        assert_eq!(records[0].crash(), None);
        assert_eq!(records[0].crash_line_number(), None);
    }

    /// Issue 18 D6: Kopf 1.38 run without a scope flag prints Python's `FutureWarning` (and
    /// its source line) at start; the first lines of the i18live captures' Pod log. One
    /// warning record, no line without a format, Kopf's records after it.
    #[test]
    fn a_python_warning_is_a_record_not_unmatched_lines() {
        let text = concat!(
            "2026-12-02T07:03:27.720388439Z /usr/local/lib/python3.11/dist-packages/kopf/_core/reactor/running.py:180: FutureWarning: Absence of either namespaces or cluster-wide flag will become an error soon. For now, switching to the cluster-wide mode for backward compatibility.\n",
            "2026-12-02T07:03:27.720425425Z   warnings.warn(\"Absence of either namespaces or cluster-wide flag will become an error soon.\"\n",
            "2026-12-02T07:03:27.725954116Z [2026-12-02 07:03:27,725] kopf._core.reactor.r [DEBUG   ] Starting Kopf 1.38.0.\n",
            "2026-12-02T07:03:27.741792378Z [2026-12-02 07:03:27,732] kopf.activities.star [INFO    ] Activity 'configure' succeeded.\n",
        );
        let (records, stats) = parse_all(text);
        assert_eq!(stats.unmatched_lines, 0, "{records:?}");
        assert_eq!(records.len(), 3, "{records:?}");
        assert_eq!(records[0].format, Format::PythonWarning);
        assert_eq!(records[0].format.as_str(), "python-warning");
        assert_eq!(records[0].level, Some(Level::Warning));
        assert_eq!(records[0].lines.len(), 2, "the source line continues it");
        assert!(records[0].is_kopf_cluster_wide_fallback());
        assert_eq!(stats.records_in(Format::PythonWarning), 1);
        assert_eq!(records[1].format, Format::KopfFull);
        // Between Kopf's records (stderr interleaved), a warning is a record of its own.
        let between = "[2026-12-02 07:03:27,725] kopf._core.reactor.r [INFO    ] x\n/src/op.py:3: DeprecationWarning: namespace= is deprecated\n  kopf.run(namespace='a')\n[2026-12-02 07:03:28,725] kopf._core.reactor.r [INFO    ] y\n";
        let (records, stats) = parse_all(between);
        let formats: Vec<Format> = records.iter().map(|r| r.format).collect();
        assert_eq!(formats, [Format::KopfFull, Format::PythonWarning, Format::KopfFull]);
        assert!(!records[1].is_kopf_cluster_wide_fallback());
        assert_eq!(stats.unmatched_lines, 0);
    }

    #[test]
    fn kubelet_prefix_is_taken_and_ours_is_not_mistaken_for_it() {
        let (t, rest) = split_kubelet_prefix(
            "2026-11-29T16:21:14.101234567Z [2026-11-29 16:21:14,101] kopf.objects         [INFO    ] x",
        );
        assert_eq!(t.unwrap().to_rfc3339(), "2026-11-29T16:21:14.101234567+00:00");
        assert!(rest.starts_with("[2026"));
        let ours = "2026-11-29T17:15:53.377Z  INFO [store/catalog-api] Accepted x";
        assert_eq!(split_kubelet_prefix(ours), (None, ours));
        let ours_error = "2026-11-29T17:15:53.377Z ERROR [a/b] Handler 'accept' failed";
        assert_eq!(split_kubelet_prefix(ours_error).0, None);
        let both = format!("2026-11-29T17:15:53.380000001Z {ours}");
        let (t, rest) = split_kubelet_prefix(&both);
        assert!(t.is_some());
        assert_eq!(rest, ours);
    }

    #[test]
    fn every_format_with_and_without_the_kubelet_prefix() {
        let lines = [
            (
                "[2026-11-29 16:21:14,100] kopf.objects         [INFO    ] [todo/todo-api] Handler 'accept' succeeded.",
                Format::KopfFull,
                Clock::OperatorLocal,
            ),
            (
                "[todo/todo-api] Handler 'accept' succeeded.",
                Format::KopfPlain,
                Clock::Kubelet,
            ),
            (
                r#"{"message": "Handler 'accept' succeeded.", "timestamp": "2026-11-29T16:28:55.343672+00:00", "object": {"kind": "Microservice", "name": "todo-api", "namespace": "todo"}, "severity": "info"}"#,
                Format::KopfJson,
                Clock::OperatorUtc,
            ),
            (
                "2026-11-29T17:15:53.389Z  INFO [todo/todo-api] Handler 'accept' succeeded. handler=accept cause=create",
                Format::OursText,
                Clock::OperatorUtc,
            ),
            (
                r#"{"timestamp":"2026-11-29T17:15:53.389Z","level":"INFO","message":"Handler 'accept' succeeded.","object":{"namespace":"todo","name":"todo-api","uid":"u"},"handler":"accept","cause":"create"}"#,
                Format::OursJson,
                Clock::OperatorUtc,
            ),
        ];
        for (line, format, clock) in lines {
            for prefixed in [false, true] {
                let input = if prefixed {
                    format!("2026-11-29T16:21:14.123456789Z {line}\n")
                } else {
                    format!("{line}\n")
                };
                let (records, stats) = parse_all(&input);
                if format == Format::KopfPlain && !prefixed {
                    assert_eq!(records[0].stamp, None);
                }
                assert_eq!(records.len(), 1, "{input}");
                let r = &records[0];
                assert_eq!(r.format, format, "{input}");
                assert_eq!(r.object.as_ref().unwrap().to_string(), "todo/todo-api");
                assert_eq!(r.message, "Handler 'accept' succeeded.", "{input}");
                let want = if prefixed { Clock::Kubelet } else { clock };
                if let Some(stamp) = r.stamp {
                    assert_eq!(stamp.clock, want, "{input}");
                }
                assert_eq!(stats.unmatched_lines, 0);
                assert_eq!(stats.kubelet_stamped_lines, u64::from(prefixed));
            }
        }
    }

    #[test]
    fn tracebacks_continue_their_record() {
        let input = "[2026-11-29 16:41:28,784] kopf.objects         [ERROR   ] [bench/ms-0468] Handler 'a' failed with an exception. Will retry.\nTraceback (most recent call last):\n  File \"/deps/x.py\", line 1, in f\n    raise ValueError('boom')\nValueError: boom\n[2026-11-29 16:41:29,000] kopf.objects         [INFO    ] [bench/ms-0468] Handler 'a' succeeded.\n";
        let (records, stats) = parse_all(input);
        assert_eq!(records.len(), 2);
        assert_eq!(records[0].lines.len(), 5);
        assert_eq!(records[0].continuation().last(), Some("ValueError: boom"));
        assert_eq!(stats.continuation_lines, 4);
        assert_eq!(stats.lines, 6);
    }

    #[test]
    fn junk_and_cut_lines_are_kept_and_counted() {
        let input = b"garbage before anything\n[2026-11-29 16:21:14,100] kopf.objects         [INFO    ] [a/b] Handler 'x' succeeded.\n\xff\xfe\x01\x02\n{\"message\": \"cut sh\n[2026-11-29 16:21";
        let mut records = Vec::new();
        let mut parser = RecordParser::new();
        let mut splitter = LineSplitter::new();
        let mut push = |l| parser.push(l, &mut |r| records.push(r));
        splitter.push(input, &mut push);
        splitter.finish(&mut push);
        parser.flush(&mut |r| records.push(r));
        let stats = parser.stats();
        assert_eq!(stats.lines, 5);
        assert_eq!(records.len(), 5);
        assert_eq!(stats.unmatched_lines, 4);
        assert_eq!(stats.invalid_utf8_lines, 1);
        assert_eq!(stats.unterminated_lines, 1);
        let formats: Vec<Format> = records.iter().map(|r| r.format).collect();
        assert_eq!(
            formats,
            [
                Format::Unmatched,
                Format::KopfFull,
                Format::Unmatched,
                Format::Unmatched,
                Format::Unmatched
            ]
        );
    }

    #[test]
    fn plain_lines_without_prefix_or_vocabulary_are_unmatched() {
        let (records, stats) =
            parse_all("Handler 'accept' succeeded.\nsome print() output\n[todo/x] Accepted todo/x: image=y\n");
        let formats: Vec<Format> = records.iter().map(|r| r.format).collect();
        assert_eq!(formats, [Format::KopfPlain, Format::Unmatched, Format::KopfPlain]);
        assert_eq!(stats.unmatched_lines, 1);
    }

    #[test]
    fn lifecycle_merges_ours_fields_into_event_post_failures() {
        let (records, _) = parse_all(
            "2026-11-29T17:15:53.389Z  WARN [store/catalog-api] Failed to post an event: code=403 reason=Accepted message=\"forbidden\" handler=accept cause=create\n",
        );
        match records[0].lifecycle() {
            Lifecycle::EventPostFailed(f) => {
                assert_eq!(f.code, Some(403));
                assert_eq!(f.message.as_deref(), Some("forbidden"));
                assert_eq!(f.event_reason.as_deref(), Some("Accepted"));
            }
            other => panic!("{other:?}"),
        }
    }
}
