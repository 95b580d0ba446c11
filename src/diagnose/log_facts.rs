//! What the operator's logs (and Kopf's log-record events) say about one object, as facts:
//! [`LogFacts`], with its last cycle end ([`CycleEnd`]), rejected PATCH ([`Rejection`]) and open
//! run ([`Activity`], [`OpenStart`]). [`super::cycles`] reads them from the logs;
//! [`super::staleness`] judges over them. Both import them from here, neither from the other.

use chrono::{DateTime, Utc};

use crate::kopf::messages::ApiFailure;

/// The end of one handling cycle for one object, from the operator's logs
/// (`<Title> is processed: N succeeded; M failed.`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CycleEnd {
    /// The line's time, when it has one.
    pub time: Option<DateTime<Utc>>,
    /// Which clock `time` was read from, in words (e.g. "kubelet clock").
    pub clock: &'static str,
    /// Handlers that succeeded.
    pub succeeded: u32,
    /// Handlers that failed (permanently).
    pub failed: u32,
    /// The line, for evidence.
    pub line: String,
}

/// What the operator's logs say about one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogFacts {
    /// No logs in evidence (with the gap's description).
    Unavailable(String),
    /// Logs were read.
    Read {
        /// The earliest time the logs cover, when known.
        covers_from: Option<DateTime<Utc>>,
        /// The last cycle end for the object, if any.
        last_cycle: Option<CycleEnd>,
        /// The last `failed temporarily` / retry line for the object, if any.
        last_retry: Option<String>,
        /// That line's time, when it has one.
        last_retry_time: Option<DateTime<Utc>>,
        /// The last PATCH Kopf logged as rejected for the object, if any.
        last_rejection: Option<Box<Rejection>>,
        /// How far the logs go, and the object's open run ([`Activity`]).
        activity: Box<Activity>,
    },
}

/// What the logs show of the operator's work, for what happened after the object's latest spec
/// change ([`super::staleness::handling_since`]): whether a run of the object is still open, the object's last
/// line, and the logs' last line. Lines of a container's previous instance (`--previous`) do
/// not count: that process is gone.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Activity {
    /// The object's latest handler start with neither an outcome of a handler nor a cycle end
    /// for the object after it in the same container log: `Handler 'x' is invoked.` (logged at
    /// DEBUG: Kopf `-v`, Kopf 1.38 `kopf/_core/actions/execution.py`), or at Kopf's default
    /// level the handler's own first line about the object (one that is not Kopf's, such as
    /// `Accepted ns/name: ...`).
    pub open_run: Option<OpenStart>,
    /// The object's latest line: its time and text.
    pub object_last: Option<(DateTime<Utc>, String)>,
    /// The logs' latest line, about any object or none: its time and where it was read
    /// (`pod/container`, or `file NAME`).
    pub log_last: Option<(DateTime<Utc>, String)>,
}

/// A handler start with no outcome after it ([`Activity::open_run`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenStart {
    /// The handler id as logged (`accept/spec`); for a run that began with the handler's own
    /// line, the only handler its log names, else empty (not known).
    pub handler: String,
    /// The start line's time.
    pub time: DateTime<Utc>,
    /// Which clock `time` was read from, in words.
    pub clock: &'static str,
    /// The start line, for evidence.
    pub line: String,
    /// Where it was read (`pod/container`, or `file NAME`).
    pub place: String,
    /// The last line's time of that same log: the run is open at least until then.
    pub log_last: Option<DateTime<Utc>>,
    /// Whether the log was read from its Pod (live, or by `collect`) rather than from a file:
    /// then it holds everything up to the evidence's "now", and the run has logged nothing
    /// until then. A `--log-file` may have been saved any time before.
    pub read_from_pod: bool,
}

/// A PATCH of an object that Kopf logged as rejected: `Throttling for N seconds due to an
/// unexpected error: APIClientError(...)` ([`crate::kopf::messages::Lifecycle::Throttled`]),
/// logged right after the cycle's `... is processed` line when the cycle's final PATCH fails.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    /// The line's time, when it has one.
    pub time: Option<DateTime<Utc>>,
    /// Which clock `time` was read from, in words.
    pub clock: &'static str,
    /// The error, as Kopf logged it.
    pub failure: ApiFailure,
    /// The line, for evidence.
    pub line: String,
    /// How many such lines the logs hold for the object: cycles whose PATCH Kopf gave up
    /// (`Throttling for N seconds due to an unexpected error: ...`).
    pub count: u64,
    /// How many refused attempts of the object's PATCH the logs hold (Kopf's `Request attempt
    /// #N/9 failed; ...: PATCH ...` lines, up to 9 per given-up cycle; none for an error Kopf
    /// does not retry, such as a 422).
    pub attempts: u64,
}

impl Rejection {
    /// What the logs hold of the rejections, in words: `2 rejections` or `2 rejections, after
    /// 18 refused PATCH attempts`.
    pub fn tally(&self) -> String {
        let rejections = crate::text::count(self.count, "rejection");
        match self.attempts {
            0 => rejections,
            n => format!(
                "{rejections}, after {}",
                crate::text::count_as(n, "refused PATCH attempt", "refused PATCH attempts")
            ),
        }
    }
}

impl LogFacts {
    /// The last rejected PATCH, when it is the latest news about the object: no cycle ended
    /// after it (a cycle's end is logged before its own PATCH, so the end that precedes a
    /// rejection is the rejected cycle's) and no retry was logged after it. `None` without logs,
    /// or when a later cycle or retry says more.
    pub fn latest_rejection(&self) -> Option<&Rejection> {
        let LogFacts::Read {
            last_cycle,
            last_rejection: Some(rejection),
            last_retry_time,
            ..
        } = self
        else {
            return None;
        };
        let after = |t: Option<DateTime<Utc>>| match (t, rejection.time) {
            (None, _) => true,
            (Some(t), Some(r)) => r >= t,
            (Some(_), None) => false,
        };
        (after(last_cycle.as_ref().and_then(|c| c.time)) && after(*last_retry_time)).then_some(&**rejection)
    }
}

/// The clock of a cycle end or retry read from an event: the API server's.
pub const EVENT_CLOCK: &str = "API server clock, the object's Kopf event";
