//! The watch of Microservice objects between the list/watch ([`super::listwatch`]) and the reflector: the
//! backoff after a failed list or watch, and the log lines of failures.
//!
//! **Backoff.** client-go's reflector backoff (kube-runtime 5 `watcher::DefaultBackoff`: 0.8 s,
//! doubling up to 30 s, each delay plus a random jitter of up to the same again), reset only when
//! the watch makes progress: an object, a deletion or the end of a list. kube-runtime 5's own
//! `WatchStreamExt::default_backoff` resets on every `Ok` item, and its watcher yields
//! `Event::Init` before each list attempt: a list that keeps failing (a ServiceAccount without
//! `list` on microservices) was retried every 0.8–1.6 s forever. `Init` is not progress here.
//!
//! **Log lines.** A failure is one line naming the request and the API's answer in one line
//! ([`describe_watch_error`], never a debug dump of the Status); the same error again is not
//! logged again, except at growing intervals (the 4th, 8th, 16th, ... time in a row) with how
//! often and for how long it has failed; a different error, or the recovery, says how many
//! times the previous one happened. A `410 Gone` (the watch's resourceVersion is too old) is
//! the watcher's normal relist, logged at info and not counted as a failure.

use std::pin::Pin;
use std::time::Duration;

use futures::{Stream, StreamExt};
use kube::runtime::utils::Backoff;
use kube::runtime::watcher::{self, Event};
use tokio::time::Instant;

use crate::error::{describe_kube_error, describe_status};

/// The failure in one line, naming the request: `list: Forbidden (403): <message>`,
/// `watch: ...`, `watch stream: ...` (see [`describe_kube_error`]).
pub fn describe_watch_error(err: &watcher::Error) -> String {
    match err {
        watcher::Error::InitialListFailed(e) => format!("list: {}", describe_kube_error(e)),
        watcher::Error::WatchStartFailed(e) => format!("watch: {}", describe_kube_error(e)),
        watcher::Error::WatchError(status) => format!("watch: {}", describe_status(status)),
        watcher::Error::WatchFailed(e) => format!("watch stream: {}", describe_kube_error(e)),
        watcher::Error::NoResourceVersion => err.to_string(),
    }
}

/// What to log about one failure ([`Failures::failed`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FailureReport {
    /// A failure unlike the one before: log it. `previous_times` counts how often the previous
    /// error happened in a row, when there was one.
    New {
        /// How many times the previous, different error happened in a row.
        previous_times: Option<u64>,
    },
    /// The same error for the `times`-th time in a row (4, 8, 16, ...), failing for `failing_for`.
    StillFailing {
        /// How many times in a row.
        times: u64,
        /// Since the first failure of this run of failures.
        failing_for: Duration,
    },
    /// The same error again: log nothing.
    Repeated,
}

/// The end of a run of failures ([`Failures::progressed`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovery {
    /// Failures since the watch last made progress, all errors together.
    pub failures: u64,
    /// How many times the last error happened in a row.
    pub last_error_times: u64,
    /// From the first of those failures to the recovery.
    pub failing_for: Duration,
}

/// The failures since the watch last made progress (pure: the caller passes the time).
#[derive(Debug, Default)]
pub struct Failures {
    /// The error of the current streak and how many times in a row it happened.
    last: Option<(String, u64)>,
    /// All failures since the last progress.
    total: u64,
    /// When the first of them happened.
    since: Option<Instant>,
}

impl Failures {
    /// Records a failure described as `error` at `now`.
    pub fn failed(&mut self, error: &str, now: Instant) -> FailureReport {
        self.total += 1;
        let since = *self.since.get_or_insert(now);
        match &mut self.last {
            Some((last, times)) if last == error => {
                *times += 1;
                if *times >= 4 && times.is_power_of_two() {
                    FailureReport::StillFailing {
                        times: *times,
                        failing_for: now.duration_since(since),
                    }
                } else {
                    FailureReport::Repeated
                }
            }
            _ => {
                let previous = self.last.replace((error.to_string(), 1)).map(|(_, times)| times);
                FailureReport::New {
                    previous_times: previous,
                }
            }
        }
    }

    /// Records progress at `now`: the end of the failures, if there were any.
    pub fn progressed(&mut self, now: Instant) -> Option<Recovery> {
        let (_, last_error_times) = self.last.take()?;
        let recovery = Recovery {
            failures: self.total,
            last_error_times,
            failing_for: self.since.map(|s| now.duration_since(s)).unwrap_or_default(),
        };
        *self = Failures::default();
        Some(recovery)
    }
}

/// `1.2s`, as the log lines write durations.
fn seconds(d: Duration) -> String {
    format!("{:.1}s", d.as_secs_f64())
}

/// The watcher's `events` with the backoff and log lines of the module docs. `scope` names the
/// namespaces watched in the lines (`todo`, `all namespaces`). The stream ends when `events`
/// ends, or when `backoff` gives up (kube-runtime's `DefaultBackoff` never does).
pub fn with_backoff<K, S, B>(
    events: S,
    backoff: B,
    scope: String,
) -> impl Stream<Item = Result<Event<K>, watcher::Error>> + Send
where
    K: Send + 'static,
    S: Stream<Item = Result<Event<K>, watcher::Error>> + Send + 'static,
    B: Backoff + 'static,
{
    let state = BackedOff {
        events: events.boxed(),
        backoff,
        scope,
        failures: Failures::default(),
        wait: None,
    };
    futures::stream::unfold(state, |mut state| async move {
        if let Some(wait) = state.wait.take() {
            tokio::time::sleep(wait).await;
        }
        let item = state.events.next().await?;
        match &item {
            Ok(Event::Init) => {}
            Ok(_) => state.progressed(),
            Err(err) => {
                let wait = state.backoff.next()?;
                state.wait = Some(wait);
                state.failed(err, wait);
            }
        }
        Some((item, state))
    })
}

/// The state of [`with_backoff`]'s stream.
struct BackedOff<K, B> {
    events: Pin<Box<dyn Stream<Item = Result<Event<K>, watcher::Error>> + Send>>,
    backoff: B,
    /// The namespaces watched, as the log lines name them.
    scope: String,
    failures: Failures,
    /// How long to wait before the next item: the backoff after a failure.
    wait: Option<Duration>,
}

impl<K, B: Backoff> BackedOff<K, B> {
    /// The watch made progress: the backoff starts over, and a recovery is logged.
    fn progressed(&mut self) {
        self.backoff.reset();
        if let Some(r) = self.failures.progressed(Instant::now()) {
            tracing::info!(
                namespaces = self.scope.as_str(),
                failures = r.failures,
                last_error_times = r.last_error_times,
                failing_for = seconds(r.failing_for).as_str(),
                "Watching microservices recovered"
            );
        }
    }

    /// Logs the failure `err`, retried in `wait`, per the module docs: a `410 Gone` at info, a
    /// new error at once, the same error at growing intervals.
    fn failed(&mut self, err: &watcher::Error, wait: Duration) {
        let scope = self.scope.as_str();
        let retry_in = seconds(wait);
        if let watcher::Error::WatchError(status) = err
            && status.code == 410
        {
            tracing::info!(
                namespaces = scope,
                error = status.message.as_str(),
                "Watching microservices: resourceVersion too old (410 Gone); relisting"
            );
            return;
        }
        let error = describe_watch_error(err);
        match self.failures.failed(&error, Instant::now()) {
            FailureReport::New { previous_times: None } => tracing::warn!(
                namespaces = scope,
                error = error.as_str(),
                retry_in = retry_in.as_str(),
                "Watching microservices failed; retrying with backoff"
            ),
            FailureReport::New {
                previous_times: Some(times),
            } => tracing::warn!(
                namespaces = scope,
                error = error.as_str(),
                retry_in = retry_in.as_str(),
                previous_error_times = times,
                "Watching microservices failed; retrying with backoff"
            ),
            FailureReport::StillFailing { times, failing_for } => tracing::warn!(
                namespaces = scope,
                times,
                failing_for = seconds(failing_for).as_str(),
                retry_in = retry_in.as_str(),
                "Watching microservices still fails with the same error"
            ),
            FailureReport::Repeated => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn the_same_error_is_reported_once_then_at_growing_intervals() {
        let mut f = Failures::default();
        let t0 = Instant::now();
        assert_eq!(
            f.failed("list: Forbidden (403): x", t0),
            FailureReport::New { previous_times: None }
        );
        let reports: Vec<FailureReport> = (2..=16)
            .map(|i| f.failed("list: Forbidden (403): x", t0 + Duration::from_secs(i)))
            .collect();
        let loud: Vec<(usize, &FailureReport)> = reports
            .iter()
            .enumerate()
            .filter(|(_, r)| **r != FailureReport::Repeated)
            .collect();
        assert_eq!(
            loud,
            vec![
                (
                    2,
                    &FailureReport::StillFailing {
                        times: 4,
                        failing_for: Duration::from_secs(4)
                    }
                ),
                (
                    6,
                    &FailureReport::StillFailing {
                        times: 8,
                        failing_for: Duration::from_secs(8)
                    }
                ),
                (
                    14,
                    &FailureReport::StillFailing {
                        times: 16,
                        failing_for: Duration::from_secs(16)
                    }
                ),
            ]
        );
        // Another error: reported, naming how often the previous one happened.
        assert_eq!(
            f.failed("list: ServiceUnavailable (503): down", t0 + Duration::from_secs(17)),
            FailureReport::New {
                previous_times: Some(16)
            }
        );
        assert_eq!(
            f.failed("list: ServiceUnavailable (503): down", t0 + Duration::from_secs(18)),
            FailureReport::Repeated
        );
        assert_eq!(
            f.progressed(t0 + Duration::from_secs(20)),
            Some(Recovery {
                failures: 18,
                last_error_times: 2,
                failing_for: Duration::from_secs(20)
            })
        );
        // Progress without failures before is no recovery; a new failure is new again.
        assert_eq!(f.progressed(t0 + Duration::from_secs(21)), None);
        assert_eq!(
            f.failed("list: Forbidden (403): x", t0 + Duration::from_secs(22)),
            FailureReport::New { previous_times: None }
        );
    }

    #[test]
    fn watch_errors_are_one_line_naming_the_request() {
        let status = kube::core::Status::failure(
            "microservices.platform.example.io is forbidden: User \"u\" cannot list resource \"microservices\"",
            "Forbidden",
        )
        .with_code(403);
        let err = watcher::Error::InitialListFailed(kube::Error::Api(Box::new(status.clone())));
        assert_eq!(
            describe_watch_error(&err),
            "list: Forbidden (403): microservices.platform.example.io is forbidden: User \"u\" cannot list resource \"microservices\""
        );
        let err = watcher::Error::WatchError(Box::new(status));
        assert!(describe_watch_error(&err).starts_with("watch: Forbidden (403): "));
        assert!(!describe_watch_error(&err).contains("Status {"));
    }
}
