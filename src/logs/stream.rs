//! One container log, end to end: bytes → lines → records → runs, for blocking and async
//! readers alike (see [`LogStream::push_bytes`]).

use chrono::{DateTime, Utc};

use super::lines::LineSplitter;
use super::record::{ParseStats, Record, RecordParser, split_kubelet_prefix};
use super::runs::{CauseHint, GroupConfig, GroupStats, Grouper, Run};
use super::zone::LogZone;

/// Where a stream's lines come from: a Pod's container (current or previous), a file, stdin.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceLabel {
    /// The Pod, when known (`pods/log`, or a bundle file `POD.CONTAINER[.previous].log`).
    pub pod: Option<String>,
    /// The container.
    pub container: Option<String>,
    /// The container before its last restart (`--previous`).
    pub previous: bool,
    /// A file path or `-` (stdin), for files.
    pub path: Option<String>,
}

impl SourceLabel {
    /// `pod/container`, `pod/container (previous)`, or the path.
    pub fn describe(&self) -> String {
        match (&self.pod, &self.container) {
            (Some(p), Some(c)) if self.previous => format!("{p}/{c} (previous container)"),
            (Some(p), Some(c)) => crate::logs::file::source_name(p, c),
            (Some(p), None) => p.clone(),
            _ => match self.path.as_deref() {
                Some("-") => "stdin".to_string(),
                Some(path) => path.to_string(),
                None => "log".to_string(),
            },
        }
    }
}

/// One log stream being read (see the module docs).
#[derive(Debug)]
pub struct LogStream {
    /// Where the stream comes from; copied onto its runs.
    pub label: SourceLabel,
    splitter: LineSplitter,
    parser: RecordParser,
    grouper: Grouper,
    skip_through: Option<DateTime<Utc>>,
    reread_lines: u64,
    zone: Option<LogZone>,
}

impl LogStream {
    /// A new stream.
    pub fn new(label: SourceLabel, config: GroupConfig, hints: Vec<CauseHint>) -> Self {
        let mut grouper = Grouper::new(config);
        grouper.set_hints(hints);
        LogStream {
            label,
            splitter: LineSplitter::new(),
            parser: RecordParser::new(),
            grouper,
            skip_through: None,
            reread_lines: 0,
            zone: None,
        }
    }

    /// The same stream reading zoneless times (Kopf's `full` format) in `zone`, the `TZ` of
    /// the container it comes from (the evidence's `Snapshot::log_zone`).
    pub fn in_zone(mut self, zone: LogZone) -> Self {
        self.parser = RecordParser::in_zone(zone.clone());
        self.zone = Some(zone);
        self
    }

    /// The zone given with [`LogStream::in_zone`], if any.
    pub fn zone(&self) -> Option<&LogZone> {
        self.zone.as_ref()
    }

    /// Feeds bytes as they arrive.
    pub fn push_bytes(&mut self, chunk: &[u8]) {
        let LogStream {
            splitter,
            parser,
            grouper,
            skip_through,
            reread_lines,
            ..
        } = self;
        splitter.push(chunk, &mut |line| {
            if let Some(through) = *skip_through {
                if split_kubelet_prefix(&line.text).0.is_some_and(|t| t <= through) {
                    *reread_lines += 1;
                    return;
                }
                *skip_through = None;
            }
            parser.push(line, &mut |r| grouper.push(r))
        });
    }

    /// A followed connection ended: its last, cut line is read as it is (flagged unterminated).
    pub fn end_connection(&mut self) {
        let parser = &mut self.parser;
        let grouper = &mut self.grouper;
        self.splitter
            .finish(&mut |line| parser.push(line, &mut |r| grouper.push(r)));
    }

    /// After a reconnect with `sinceTime`, the server sends again lines already read: lines with
    /// a kubelet time at or before `through` are skipped (counted in [`LogStream::reread_lines`])
    /// until the first later one.
    pub fn skip_through(&mut self, through: DateTime<Utc>) {
        self.skip_through = Some(through);
    }

    /// Lines skipped as already read (see [`LogStream::skip_through`]).
    pub fn reread_lines(&self) -> u64 {
        self.reread_lines
    }

    /// Releases the record the parser holds back for continuation lines (a followed stream that
    /// went quiet).
    pub fn flush_record(&mut self) {
        let grouper = &mut self.grouper;
        self.parser.flush(&mut |r: Record| grouper.push(r));
    }

    /// Closes runs left open longer than the run timeout before `now`.
    pub fn expire(&mut self, now: DateTime<Utc>) {
        self.grouper.expire(now);
    }

    /// Ends the stream: the last line, the held record, open runs (closed as `unknown`).
    pub fn finish(&mut self) {
        self.end_connection();
        let grouper = &mut self.grouper;
        self.parser.flush(&mut |r| grouper.push(r));
        self.grouper.finish();
    }

    /// Releases closed runs that finished at or before `before` (all when `None`), labelled
    /// with this stream's Pod and container.
    pub fn drain(&mut self, before: Option<DateTime<Utc>>) -> Vec<Run> {
        let mut runs = self.grouper.drain(before);
        for run in &mut runs {
            run.pod.clone_from(&self.label.pod);
            run.container.clone_from(&self.label.container);
        }
        runs
    }

    /// What the lines became so far.
    pub fn parse_stats(&self) -> &ParseStats {
        self.parser.stats()
    }

    /// What grouping did so far.
    pub fn group_stats(&self) -> &GroupStats {
        self.grouper.stats()
    }

    /// Reads a whole blocking reader, finishes the stream and returns all its runs.
    ///
    /// Errors: the reader's I/O error.
    pub fn read_all(&mut self, mut reader: impl std::io::Read) -> std::io::Result<Vec<Run>> {
        let mut chunk = vec![0u8; 64 * 1024];
        loop {
            match reader.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => self.push_bytes(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
        self.finish();
        Ok(self.drain(None))
    }
}
