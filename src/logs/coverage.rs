//! What the logs can and cannot show (kubelet rotation and replaced Pods drop the past): per container, the first
//! and last line and what became of every line; and whether "no run since X" may be said.
//!
//! Kubelet rotation and replaced Pods drop the past, so "no run since the spec changed at X" is
//! said only when the logs begin before X (by more than [`SKEW`]); otherwise the answer is
//! "cannot tell: logs begin at Y".

use std::time::Duration;

use chrono::{DateTime, Utc};

use super::record::ParseStats;
use super::runs::GroupStats;
use super::stream::{LogStream, SourceLabel};
use super::{Clock, Stamp};
use crate::text::count;
use crate::time::rfc3339_millis;

/// Clock skew within which two times from different clocks are not ordered.
pub const SKEW: Duration = Duration::from_secs(2);

/// Facts about one container log.
#[derive(Debug, Clone, Default)]
pub struct ContainerCoverage {
    /// Which log.
    pub label: SourceLabel,
    /// What its lines became (all zero when it could not be read).
    pub parse: ParseStats,
    /// What grouping did.
    pub group: GroupStats,
    /// Why the log could not be read (a gap), if so.
    pub error: Option<String>,
    /// Notes about what the log cannot hold (restarts, replaced Pods), from the Pod's status.
    pub notes: Vec<String>,
    /// The zone its zoneless times were read in, when its container's `TZ` was looked up.
    pub zone: Option<super::zone::LogZone>,
}

impl ContainerCoverage {
    /// The coverage of a stream read so far, with why it could not be read (if so) and notes.
    pub fn of(stream: &LogStream, error: Option<String>, notes: Vec<String>) -> Self {
        ContainerCoverage {
            label: stream.label.clone(),
            parse: stream.parse_stats().clone(),
            group: stream.group_stats().clone(),
            error,
            notes,
            zone: stream.zone().cloned(),
        }
    }

    /// The first line's time, when it has one.
    pub fn begins(&self) -> Option<Stamp> {
        self.parse.first
    }

    /// One line per container: span, counts and notes.
    pub fn describe(&self) -> Vec<String> {
        let name = self.label.describe();
        if let Some(e) = &self.error {
            return vec![format!("{name}: could not be read: {e}")];
        }
        let p = &self.parse;
        let span = match (p.first, p.last) {
            (Some(f), Some(l)) => format!(
                "{} .. {} ({})",
                rfc3339_millis(f.at),
                rfc3339_millis(l.at),
                clock_word(f.clock)
            ),
            // Nothing to count: one plain statement, not "no lines, 0 lines".
            _ if p.lines == 0 => return vec![format!("{name}: no lines")],
            _ => "lines without times (plain format, no kubelet timestamps)".to_string(),
        };
        let mut out = vec![format!("{name}: {span}, {}", count(p.lines, "line"))];
        let mut counted = |n: u64, noun: &str, what: &str| {
            if n > 0 {
                out.push(format!("  {} {what}", count(n, noun)));
            }
        };
        counted(
            p.unmatched_lines,
            "line",
            "matched no log format (kept, shown by --raw)",
        );
        counted(
            p.records_in(super::Format::Crash),
            "crash",
            "of the process (a Python traceback or its own error exit: see explain-events' operator-not-running)",
        );
        counted(p.truncated_lines, "line", "longer than 64 KiB, cut with a marker");
        counted(p.invalid_utf8_lines, "line", "not UTF-8 (bad bytes replaced)");
        counted(
            p.unterminated_lines,
            "last line",
            "without newline (the stream was cut)",
        );
        counted(
            self.group.unattributed_lines,
            "object line",
            "that joined no handler run",
        );
        counted(
            self.group.expired_runs,
            "run",
            "closed as unknown after the run timeout",
        );
        for n in &self.notes {
            out.push(format!("  {n}"));
        }
        out
    }

    /// Whether this log's times are the operator's local time ([`Clock::OperatorLocal`]): the
    /// answer then says once what that means ([`super::LOCAL_TIME_NOTE`]).
    pub fn local_times(&self) -> bool {
        self.parse.first.is_some_and(|f| f.clock == Clock::OperatorLocal)
    }
}

fn clock_word(clock: Clock) -> &'static str {
    match clock {
        Clock::Kubelet => "kubelet clock",
        Clock::OperatorUtc => "operator's clock",
        Clock::OperatorLocal => "operator's local time",
    }
}

/// The earliest first line over all readable containers: what the logs can speak for.
pub fn logs_begin(coverage: &[ContainerCoverage]) -> Option<Stamp> {
    coverage
        .iter()
        .filter_map(ContainerCoverage::begins)
        .min_by_key(|s| s.at)
}

/// Whether the logs say a handler has not run since `changed_at`, given the latest matching run
/// start (`last_run`) and where the logs begin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SinceVerdict {
    /// A run started after the change.
    RanSince(DateTime<Utc>),
    /// No run since, and the logs begin before the change: they would show one.
    NoRunSince {
        /// Where the logs begin.
        logs_begin: DateTime<Utc>,
    },
    /// The logs begin after the change (or too close to it): they cannot show it.
    CannotTell {
        /// Where the logs begin, if they have any time.
        logs_begin: Option<DateTime<Utc>>,
    },
}

/// Decides [`SinceVerdict`] (see the module docs). Times closer than [`SKEW`] are not ordered.
pub fn since(
    changed_at: DateTime<Utc>,
    last_run: Option<DateTime<Utc>>,
    logs_begin: Option<DateTime<Utc>>,
) -> SinceVerdict {
    let skew = crate::time::delta(SKEW);
    if let Some(run) = last_run.filter(|r| *r >= crate::time::minus(changed_at, skew)) {
        return SinceVerdict::RanSince(run);
    }
    match logs_begin {
        Some(begin) if crate::time::plus(begin, skew) < changed_at => SinceVerdict::NoRunSince { logs_begin: begin },
        other => SinceVerdict::CannotTell { logs_begin: other },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> DateTime<Utc> {
        s.parse().unwrap()
    }

    #[test]
    fn no_run_since_only_when_the_logs_begin_before_the_change() {
        let changed = t("2026-11-29T17:12:30Z");
        assert_eq!(
            since(
                changed,
                Some(t("2026-11-29T17:11:55Z")),
                Some(t("2026-11-29T17:11:48Z"))
            ),
            SinceVerdict::NoRunSince {
                logs_begin: t("2026-11-29T17:11:48Z")
            }
        );
        assert_eq!(
            since(changed, None, Some(t("2026-11-29T17:20:00Z"))),
            SinceVerdict::CannotTell {
                logs_begin: Some(t("2026-11-29T17:20:00Z"))
            }
        );
        // Within the skew: not ordered.
        assert!(matches!(
            since(changed, None, Some(t("2026-11-29T17:12:29Z"))),
            SinceVerdict::CannotTell { .. }
        ));
        assert_eq!(
            since(
                changed,
                Some(t("2026-11-29T17:12:31Z")),
                Some(t("2026-11-29T17:11:48Z"))
            ),
            SinceVerdict::RanSince(t("2026-11-29T17:12:31Z"))
        );
        assert_eq!(
            since(changed, None, None),
            SinceVerdict::CannotTell { logs_begin: None }
        );
    }

    #[test]
    fn coverage_lines_name_every_count_and_the_clock() {
        let mut c = ContainerCoverage {
            label: SourceLabel {
                pod: Some("op-1".into()),
                container: Some("operator".into()),
                previous: true,
                path: None,
            },
            ..Default::default()
        };
        c.parse.lines = 10;
        c.parse.unmatched_lines = 2;
        c.parse.first = Some(Stamp {
            at: t("2026-11-29T17:11:48.337Z"),
            clock: Clock::OperatorLocal,
        });
        c.parse.last = Some(Stamp {
            at: t("2026-11-29T17:11:55.982Z"),
            clock: Clock::OperatorLocal,
        });
        c.group.unattributed_lines = 1;
        let text = c.describe().join("\n");
        assert!(text.starts_with(
            "op-1/operator (previous container): 2026-11-29T17:11:48.337Z .. 2026-11-29T17:11:55.982Z (operator's local time), 10 lines"
        ));
        assert!(text.contains("2 lines matched no log format"));
        assert!(text.contains("1 object line that joined no handler run"));
        // What local time means is said once per answer, not per container.
        assert!(!text.contains("read as UTC"));
        assert!(c.local_times());
        c.error = Some("forbidden".into());
        assert_eq!(
            c.describe(),
            ["op-1/operator (previous container): could not be read: forbidden"]
        );
    }
}
