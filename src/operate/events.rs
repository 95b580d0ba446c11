//! Events the operator posts, off the reconcile path.
//!
//! Conventions (those experienced Kopf and kube-rs authors use): explicit events only, one per
//! outcome, posted through `events.k8s.io/v1` (RBAC: `create` and `patch` on
//! `events.events.k8s.io`). Each event gets at most [`MAX_TRIES`] tries, and only 429, 5xx and
//! transport errors are retried; a 403 (or any other 4xx) is logged once as WARN
//! `Failed to post an event:` with `code=`, counted, and never fatal. The same (object, type,
//! reason, note) within [`SERIES_TTL`] becomes a series (a PATCH of `series.count`), so a
//! repeating Warning is one event, not a flood.
//!
//! **Queues.** Handlers never wait for the API: [`EventSink::post`] puts the event on one of two
//! bounded queues, one per type, and returns. Each queue has its own posters:
//! [`NORMAL_IN_FLIGHT`] Normal and [`WARNING_IN_FLIGHT`] Warning requests run concurrently, so
//! posting keeps up with the API server's pace (one POST at a time did not: 8,062 of 10,000
//! `Accepted` events were dropped at 350 creates/s), and a Warning never waits behind Normals,
//! not even when every Normal request hangs. Memory stays bounded: at most
//! [`NORMAL_QUEUE_CAPACITY`] + [`WARNING_QUEUE_CAPACITY`] events wait, and the series book holds
//! one small entry per (object, type, reason, note) posted in the last [`SERIES_TTL`], swept
//! every [`SERIES_SWEEP_INTERVAL`] (not at every post: that was quadratic in the objects).
//!
//! **Shedding.** An event whose queue is full (or closed, at shutdown) is shed: counted by type
//! and reason ([`EventStats::shed`], `/metrics` `events_shed_total`), and reported in ONE
//! summary line per [`SHED_REPORT_INTERVAL`] (`Events shed: the event queue was full`), never
//! in a line per object. Warnings have their own queue, so Normals never push one out.

use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::{Event, EventSeries};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::Client;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;
use tokio::sync::{mpsc, watch};

use crate::cli::EventsPolicy;
use crate::resource::FIELD_MANAGER;
use crate::vocab::cause::Cause;

/// Tries per event (the first POST included).
pub const MAX_TRIES: u32 = 3;
/// Window in which a repeated event becomes a series (client-go and kube-rs use 6 minutes).
pub const SERIES_TTL: Duration = Duration::from_secs(6 * 60);
/// How often series entries older than [`SERIES_TTL`] are forgotten.
pub const SERIES_SWEEP_INTERVAL: Duration = Duration::from_secs(30);
/// Normal events waiting to be posted, at most (about 0.5 KiB each).
pub const NORMAL_QUEUE_CAPACITY: usize = 1024;
/// Warning events waiting to be posted, at most: their own queue, so Normals never fill it.
pub const WARNING_QUEUE_CAPACITY: usize = 1024;
/// Normal events being posted at once, at most (each holds one HTTP/1.1 connection).
pub const NORMAL_IN_FLIGHT: usize = 16;
/// Warning events being posted at once, at most, besides the Normal ones.
pub const WARNING_IN_FLIGHT: usize = 4;
/// How often shed events are reported in one log line (when any were shed).
pub const SHED_REPORT_INTERVAL: Duration = Duration::from_secs(10);
/// Largest `note` the API accepts, in bytes (events.k8s.io/v1 validation: 1 kB).
pub const NOTE_MAX_BYTES: usize = 1024;

/// `Normal` or `Warning`, the only types events.k8s.io/v1 accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EventType {
    /// Something went as intended.
    Normal,
    /// Something needs attention.
    Warning,
}

impl EventType {
    /// `Normal` or `Warning`, as the API and the metrics' `type` label write it.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Normal => "Normal",
            EventType::Warning => "Warning",
        }
    }
}

/// One event to post about one object.
#[derive(Debug, Clone, PartialEq)]
pub struct EventRequest {
    /// The object (with uid, so `kubectl describe` finds it).
    pub regarding: ObjectReference,
    /// Normal or Warning.
    pub type_: EventType,
    /// `Accepted`, `InvalidSpec`, `ReconcileFailed`, `StatusPruned`.
    pub reason: &'static str,
    /// Human text, cut to [`NOTE_MAX_BYTES`].
    pub note: String,
    /// The operation the event is about, e.g. `Accept`, `PatchStatus`.
    pub action: &'static str,
    /// Handler and cause, for the log line if posting fails.
    pub handler: &'static str,
    /// See `handler`.
    pub cause: Cause,
}

/// Counters of event posting, for logs and metrics.
#[derive(Debug, Default)]
pub struct EventStats {
    /// Events stored (created or series-patched).
    pub posted: AtomicU64,
    /// Events given up on, by HTTP code (0 = no HTTP answer).
    pub failed_by_code: Mutex<BTreeMap<u16, u64>>,
    /// Events shed (never sent: their queue was full, or closed at shutdown), by type and reason.
    shed: Mutex<BTreeMap<(EventType, &'static str), u64>>,
}

impl EventStats {
    /// Events given up on with this HTTP code.
    pub fn failed(&self, code: u16) -> u64 {
        self.failed_by_code
            .lock()
            .expect("stats lock")
            .get(&code)
            .copied()
            .unwrap_or(0)
    }

    /// Events of this type and reason shed so far.
    pub fn shed(&self, type_: EventType, reason: &str) -> u64 {
        self.shed
            .lock()
            .expect("stats lock")
            .iter()
            .filter(|((t, r), _)| *t == type_ && *r == reason)
            .map(|(_, n)| *n)
            .sum()
    }

    /// Every (type, reason) shed so far with its count, ordered by type then reason.
    pub fn shed_counts(&self) -> BTreeMap<(EventType, &'static str), u64> {
        self.shed.lock().expect("stats lock").clone()
    }

    /// Counts one shed event.
    pub(crate) fn count_shed(&self, type_: EventType, reason: &'static str) {
        *self
            .shed
            .lock()
            .expect("stats lock")
            .entry((type_, reason))
            .or_default() += 1;
    }
}

/// The handlers' side of the queues: cheap to clone, never blocks.
#[derive(Debug, Clone)]
pub struct EventSink {
    normal: mpsc::Sender<EventRequest>,
    warning: mpsc::Sender<EventRequest>,
    policy: EventsPolicy,
    stats: Arc<EventStats>,
}

impl EventSink {
    /// Queues `request` on its type's queue if `--events` allows its type; when that queue is
    /// full (or closed) the event is shed: counted, and reported in the next summary line.
    pub fn post(&self, request: EventRequest) {
        let allowed = match self.policy {
            EventsPolicy::All => true,
            EventsPolicy::Warnings => request.type_ == EventType::Warning,
            EventsPolicy::None => false,
        };
        if !allowed {
            return;
        }
        let queue = match request.type_ {
            EventType::Normal => &self.normal,
            EventType::Warning => &self.warning,
        };
        if let Err(mpsc::error::TrySendError::Full(request) | mpsc::error::TrySendError::Closed(request)) =
            queue.try_send(request)
        {
            self.stats.count_shed(request.type_, request.reason);
        }
    }

    /// The shared counters.
    pub fn stats(&self) -> &Arc<EventStats> {
        &self.stats
    }
}

/// Who reports the events (`reportingController`, `reportingInstance`).
#[derive(Debug, Clone)]
pub struct Reporter {
    /// `kubectl-microservice`.
    pub controller: String,
    /// The Pod name (`POD_NAME`), else the machine's host name: also the first part of the
    /// Lease's `holderIdentity`, so a laptop `operate` that leads can be found by it.
    pub instance: String,
}

impl Reporter {
    /// The reporter of this process.
    pub fn from_env() -> Self {
        let host = hostname::get().ok().and_then(|h| h.into_string().ok());
        Self::new(std::env::var("POD_NAME").ok(), host)
    }

    /// `POD_NAME`, else the host name (the system call, since shells rarely export
    /// `HOSTNAME`), else `kubectl-microservice`; at most 128 characters (`reportingInstance`).
    pub fn new(pod_name: Option<String>, host_name: Option<String>) -> Self {
        let instance = [pod_name, host_name]
            .into_iter()
            .flatten()
            .find(|s| !s.is_empty())
            .unwrap_or_else(|| FIELD_MANAGER.to_string());
        Reporter {
            controller: FIELD_MANAGER.to_string(),
            instance: instance.chars().take(128).collect(),
        }
    }
}

/// Creates the two queues; run the returned [`Poster`] on a task.
pub fn channel(client: Client, reporter: Reporter, policy: EventsPolicy) -> (EventSink, Poster) {
    let (normal_tx, normal_rx) = mpsc::channel(NORMAL_QUEUE_CAPACITY);
    let (warning_tx, warning_rx) = mpsc::channel(WARNING_QUEUE_CAPACITY);
    let stats = Arc::new(EventStats::default());
    let sink = EventSink {
        normal: normal_tx,
        warning: warning_tx,
        policy,
        stats: stats.clone(),
    };
    (
        sink,
        Poster {
            shared: Shared {
                client,
                reporter,
                stats,
                series: Mutex::new(SeriesBook {
                    entries: HashMap::new(),
                    swept: Instant::now(),
                }),
                retry_base: Duration::from_secs(1),
            },
            normal: normal_rx,
            warning: warning_rx,
            report_every: SHED_REPORT_INTERVAL,
        },
    )
}

/// What makes two events the same for a series: the object (its uid; namespace/name when it has
/// none), type, reason, and a 64-bit hash of the note (not the note itself: it would be kept for
/// [`SERIES_TTL`] per object; two notes of one object and reason colliding is a 2⁻⁶⁴ chance).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct SeriesKey {
    object: Box<str>,
    type_: EventType,
    reason: &'static str,
    note_hash: u64,
}

impl SeriesKey {
    fn new(request: &EventRequest, note: &str) -> Self {
        let object = match request.regarding.uid.as_deref().filter(|u| !u.is_empty()) {
            Some(uid) => uid.into(),
            None => {
                let (namespace, name) = names(&request.regarding);
                format!("{namespace}/{name}").into()
            }
        };
        let mut hasher = DefaultHasher::new();
        note.hash(&mut hasher);
        SeriesKey {
            object,
            type_: request.type_,
            reason: request.reason,
            note_hash: hasher.finish(),
        }
    }
}

/// The event that a repeat of the same key extends.
#[derive(Debug)]
struct SeriesEntry {
    name: String,
    count: i32,
    last: Instant,
}

/// One key's series; its lock is held for the whole post, so two posts of the same key run one
/// after the other (the second extends what the first created) while other keys run
/// concurrently.
type SeriesSlot = Arc<tokio::sync::Mutex<Option<SeriesEntry>>>;

#[derive(Debug)]
struct SeriesBook {
    entries: HashMap<SeriesKey, SeriesSlot>,
    /// When entries older than [`SERIES_TTL`] were last forgotten.
    swept: Instant,
}

impl SeriesBook {
    /// The slot of `key`; first forgets, at most every [`SERIES_SWEEP_INTERVAL`], the slots
    /// nobody holds whose series is older than [`SERIES_TTL`] or never started.
    fn slot(&mut self, key: SeriesKey) -> SeriesSlot {
        if self.swept.elapsed() >= SERIES_SWEEP_INTERVAL {
            self.swept = Instant::now();
            self.entries.retain(|_, slot| {
                Arc::strong_count(slot) > 1
                    || slot
                        .try_lock()
                        .map(|entry| entry.as_ref().is_some_and(|e| e.last.elapsed() < SERIES_TTL))
                        .unwrap_or(true)
            });
        }
        self.entries.entry(key).or_default().clone()
    }
}

/// What every concurrent post shares.
struct Shared {
    client: Client,
    reporter: Reporter,
    stats: Arc<EventStats>,
    series: Mutex<SeriesBook>,
    retry_base: Duration,
}

/// The posting side of the queues.
pub struct Poster {
    shared: Shared,
    normal: mpsc::Receiver<EventRequest>,
    warning: mpsc::Receiver<EventRequest>,
    report_every: Duration,
}

enum Failure {
    Retry {
        code: u16,
        after: Option<Duration>,
        error: String,
    },
    Give {
        code: u16,
        error: String,
    },
    NameTaken,
    SeriesGone,
}

impl Poster {
    /// Sets the first retry delay (tests shorten it).
    pub fn with_retry_base(mut self, base: Duration) -> Self {
        self.shared.retry_base = base;
        self
    }

    /// Sets how often shed events are reported (tests shorten it).
    pub fn with_shed_report_interval(mut self, every: Duration) -> Self {
        self.report_every = every;
        self
    }

    /// Posts queued events until every sink is dropped.
    pub async fn run(self) {
        self.run_until(std::future::pending::<()>()).await
    }

    /// Posts queued events until every sink is dropped or `drain` completes; then closes the
    /// queues (later posts are shed) and posts what was queued before returning. Shed events
    /// are reported every [`SHED_REPORT_INTERVAL`], and once more at the end.
    pub async fn run_until(self, drain: impl std::future::Future) {
        let Poster {
            shared,
            normal,
            warning,
            report_every,
        } = self;
        let (draining, drain_rx) = watch::channel(false);
        let mut report = ShedReport::default();
        {
            let lanes = async {
                futures::join!(
                    lane(&shared, warning, WARNING_IN_FLIGHT, drain_rx.clone()),
                    lane(&shared, normal, NORMAL_IN_FLIGHT, drain_rx.clone()),
                )
            };
            let reports = async {
                let mut tick = tokio::time::interval(report_every);
                tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                tick.tick().await;
                loop {
                    tick.tick().await;
                    report.log(&shared.stats, report_every);
                }
            };
            let drain = async {
                drain.await;
                draining.send_replace(true);
                std::future::pending::<()>().await
            };
            tokio::select! {
                _ = lanes => {}
                _ = reports => {}
                _ = drain => {}
            }
        }
        report.log(&shared.stats, report_every);
    }
}

/// Posts one queue's events, at most `limit` at once, until the queue is closed and empty.
/// When `drain` turns true the queue is closed: what it holds is still posted.
async fn lane(
    shared: &Shared,
    mut queue: mpsc::Receiver<EventRequest>,
    limit: usize,
    mut drain: watch::Receiver<bool>,
) {
    let mut in_flight = FuturesUnordered::new();
    let mut open = true;
    let mut closing = false;
    loop {
        if !open && in_flight.is_empty() {
            return;
        }
        tokio::select! {
            biased;
            Some(()) = in_flight.next(), if !in_flight.is_empty() => {}
            request = queue.recv(), if open && in_flight.len() < limit => match request {
                Some(request) => in_flight.push(post(shared, request)),
                None => open = false,
            },
            _ = drain.wait_for(|d| *d), if !closing => {
                closing = true;
                queue.close();
            }
        }
    }
}

/// The shed counts already reported, to log only what is new.
#[derive(Debug, Default)]
struct ShedReport {
    reported: BTreeMap<(EventType, &'static str), u64>,
}

impl ShedReport {
    /// Logs one line if events were shed since the last line: how many of each type, and each
    /// type and reason with its count, e.g. `normal=37 warning=0 by_reason="Normal/Accepted=37,Warning/InvalidSpec=2"`.
    fn log(&mut self, stats: &EventStats, interval: Duration) {
        let now = stats.shed_counts();
        let new: Vec<((EventType, &str), u64)> = now
            .iter()
            .map(|(k, n)| (*k, n - self.reported.get(k).copied().unwrap_or(0)))
            .filter(|(_, n)| *n > 0)
            .collect();
        if new.is_empty() {
            return;
        }
        let of = |t: EventType| new.iter().filter(|((ty, _), _)| *ty == t).map(|(_, n)| n).sum::<u64>();
        let by_reason = new
            .iter()
            .map(|((t, r), n)| format!("{}/{r}={n}", t.as_str()))
            .collect::<Vec<_>>()
            .join(",");
        tracing::warn!(
            normal = of(EventType::Normal),
            warning = of(EventType::Warning),
            by_reason = by_reason.as_str(),
            interval = format!("{}s", interval.as_secs_f64()).as_str(),
            "Events shed: the event queue was full"
        );
        self.reported = now;
    }
}

/// Posts one event (creating it, or extending its series), with retries.
async fn post(shared: &Shared, request: EventRequest) {
    let (namespace, name) = names(&request.regarding);
    let note = truncate(&request.note, NOTE_MAX_BYTES);
    let slot = shared
        .series
        .lock()
        .expect("series lock")
        .slot(SeriesKey::new(&request, &note));
    let mut series = slot.lock().await;
    if series.as_ref().is_some_and(|e| e.last.elapsed() >= SERIES_TTL) {
        *series = None;
    }
    let api: Api<Event> = Api::namespaced(shared.client.clone(), namespace);
    let mut last_failure = (0u16, String::new());
    for attempt in 1..=MAX_TRIES {
        let result = match series.as_ref() {
            Some(entry) => patch_series(&api, &entry.name, entry.count + 1)
                .await
                .map(|_| entry.name.clone()),
            None => {
                let event = event(&shared.reporter, &request, &note);
                let name = event.metadata.name.clone().unwrap_or_default();
                create(&api, &event).await.map(|_| name)
            }
        };
        match result {
            Ok(event_name) => {
                shared.stats.posted.fetch_add(1, Ordering::Relaxed);
                let entry = series.get_or_insert(SeriesEntry {
                    name: event_name,
                    count: 0,
                    last: Instant::now(),
                });
                entry.count += 1;
                entry.last = Instant::now();
                return;
            }
            Err(Failure::NameTaken) => last_failure = (409, "the generated event name is taken".into()),
            Err(Failure::SeriesGone) => {
                // The event expired or was deleted: start a new one.
                *series = None;
                last_failure = (404, "the series event no longer exists".into());
            }
            Err(Failure::Give { code, error }) => {
                last_failure = (code, error);
                break;
            }
            Err(Failure::Retry { code, after, error }) => {
                last_failure = (code, error);
                if attempt < MAX_TRIES {
                    let delay = after.unwrap_or(shared.retry_base * 2u32.pow(attempt - 1));
                    tokio::time::sleep(delay).await;
                }
            }
        }
    }
    let (code, error) = last_failure;
    *shared
        .stats
        .failed_by_code
        .lock()
        .expect("stats lock")
        .entry(code)
        .or_default() += 1;
    tracing::warn!(
        namespace,
        name,
        uid = request.regarding.uid.as_deref().unwrap_or(""),
        code,
        reason = request.reason,
        error = error.as_str(),
        handler = request.handler,
        cause = request.cause.as_str(),
        "Failed to post an event:"
    );
}

fn event(reporter: &Reporter, request: &EventRequest, note: &str) -> Event {
    let now = k8s_openapi::jiff::Timestamp::now();
    let base = request.regarding.name.clone().unwrap_or_else(|| "microservice".into());
    Event {
        metadata: ObjectMeta {
            name: Some(format!("{base}.{:x}", now.as_nanosecond())),
            namespace: request.regarding.namespace.clone(),
            ..Default::default()
        },
        event_time: Some(MicroTime(now)),
        action: Some(request.action.to_string()),
        reason: Some(request.reason.to_string()),
        note: Some(note.to_string()),
        type_: Some(request.type_.as_str().to_string()),
        regarding: Some(request.regarding.clone()),
        reporting_controller: Some(reporter.controller.clone()),
        reporting_instance: Some(reporter.instance.clone()),
        series: None::<EventSeries>,
        ..Default::default()
    }
}

async fn create(api: &Api<Event>, event: &Event) -> Result<Event, Failure> {
    api.create(&PostParams::default(), event)
        .await
        .map_err(|e| classify(e, false))
}

async fn patch_series(api: &Api<Event>, name: &str, count: i32) -> Result<Event, Failure> {
    let now = k8s_openapi::jiff::Timestamp::now();
    let patch = json!({"series": {"count": count, "lastObservedTime": MicroTime(now)}});
    api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(|e| classify(e, true))
}

fn classify(err: kube::Error, patching: bool) -> Failure {
    match err {
        kube::Error::Api(status) => {
            let code = status.code;
            let error = status.message.clone();
            match code {
                409 if !patching => Failure::NameTaken,
                404 if patching => Failure::SeriesGone,
                429 => Failure::Retry {
                    code,
                    after: status
                        .details
                        .as_ref()
                        .map(|d| d.retry_after_seconds)
                        .filter(|s| *s > 0)
                        .map(|s| Duration::from_secs(s.into())),
                    error,
                },
                500..=599 => Failure::Retry {
                    code,
                    after: None,
                    error,
                },
                _ => Failure::Give { code, error },
            }
        }
        other => Failure::Retry {
            code: 0,
            after: None,
            error: other.to_string(),
        },
    }
}

fn names(reference: &ObjectReference) -> (&str, &str) {
    (
        reference.namespace.as_deref().unwrap_or(""),
        reference.name.as_deref().unwrap_or(""),
    )
}

/// Cuts `s` to at most `max` bytes on a character boundary, marking the cut with `...`.
pub fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max.saturating_sub(3);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &s[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncate_respects_bytes_and_chars() {
        assert_eq!(truncate("short", 10), "short");
        let cut = truncate(&"é".repeat(1000), NOTE_MAX_BYTES);
        assert!(cut.len() <= NOTE_MAX_BYTES && cut.ends_with("..."));
    }

    #[test]
    fn the_instance_is_the_pod_else_the_host() {
        let some = |s: &str| Some(s.to_string());
        assert_eq!(Reporter::new(some("op-5d7f-a"), some("node-1")).instance, "op-5d7f-a");
        assert_eq!(Reporter::new(None, some("alice-laptop")).instance, "alice-laptop");
        assert_eq!(Reporter::new(some(""), some("alice-laptop")).instance, "alice-laptop");
        assert_eq!(Reporter::new(None, None).instance, FIELD_MANAGER);
        assert_eq!(Reporter::new(some(&"p".repeat(300)), None).instance.len(), 128);
        // This machine has a host name: a laptop `operate` is named after it.
        let here = hostname::get().unwrap().into_string().unwrap();
        assert_eq!(Reporter::from_env().instance, std::env::var("POD_NAME").unwrap_or(here));
    }
}
