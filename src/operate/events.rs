//! Events the operator posts, off the reconcile path.
//!
//! Conventions (those experienced Kopf and kube-rs authors use): explicit events only, one per
//! outcome, posted through `events.k8s.io/v1` (RBAC: `create` and `patch` on
//! `events.events.k8s.io`). A bounded queue decouples handling from posting: a full queue drops
//! the event with a WARN line, never blocks a handler. Each event gets at most
//! [`MAX_TRIES`] tries, and only 429, 5xx and transport errors are retried; a 403 (or any other
//! 4xx) is logged once as WARN `Failed to post an event:` with `code=`, counted, and never fatal.
//! The same (object, type, reason, note) within [`SERIES_TTL`] becomes a series (a PATCH of
//! `series.count`), so a repeating Warning is one event, not a flood.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::{Event, EventSeries};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::Client;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;
use tokio::sync::mpsc;

use super::cause::Cause;
use crate::cli::EventsPolicy;
use crate::resource::FIELD_MANAGER;

/// Tries per event (the first POST included).
pub const MAX_TRIES: u32 = 3;
/// Window in which a repeated event becomes a series (client-go and kube-rs use 6 minutes).
pub const SERIES_TTL: Duration = Duration::from_secs(6 * 60);
/// Capacity of the queue between handlers and the poster.
pub const QUEUE_CAPACITY: usize = 1024;
/// Largest `note` the API accepts, in bytes (events.k8s.io/v1 validation: 1 kB).
pub const NOTE_MAX_BYTES: usize = 1024;

/// `Normal` or `Warning`, the only types events.k8s.io/v1 accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventType {
    /// Something went as intended.
    Normal,
    /// Something needs attention.
    Warning,
}

impl EventType {
    fn as_str(self) -> &'static str {
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
    /// Events dropped because the queue was full.
    pub dropped: AtomicU64,
    /// Events given up on, by HTTP code (0 = no HTTP answer).
    pub failed_by_code: std::sync::Mutex<BTreeMap<u16, u64>>,
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
}

/// The handlers' side of the queue: cheap to clone, never blocks.
#[derive(Debug, Clone)]
pub struct EventSink {
    tx: mpsc::Sender<EventRequest>,
    policy: EventsPolicy,
    stats: Arc<EventStats>,
}

impl EventSink {
    /// Queues `request` if `--events` allows its type; a full queue drops it with a WARN line.
    pub fn post(&self, request: EventRequest) {
        let allowed = match self.policy {
            EventsPolicy::All => true,
            EventsPolicy::Warnings => request.type_ == EventType::Warning,
            EventsPolicy::None => false,
        };
        if !allowed {
            return;
        }
        if let Err(mpsc::error::TrySendError::Full(request)) = self.tx.try_send(request) {
            self.stats.dropped.fetch_add(1, Ordering::Relaxed);
            let (namespace, name) = names(&request.regarding);
            tracing::warn!(
                namespace,
                name,
                reason = request.reason,
                handler = request.handler,
                cause = request.cause.as_str(),
                "Failed to post an event: the event queue is full"
            );
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

/// Creates the queue; run the returned [`Poster`] on a task.
pub fn channel(client: Client, reporter: Reporter, policy: EventsPolicy) -> (EventSink, Poster) {
    let (tx, rx) = mpsc::channel(QUEUE_CAPACITY);
    let stats = Arc::new(EventStats::default());
    let sink = EventSink {
        tx,
        policy,
        stats: stats.clone(),
    };
    (
        sink,
        Poster {
            client,
            reporter,
            rx,
            stats,
            series: HashMap::new(),
            retry_base: Duration::from_secs(1),
        },
    )
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct SeriesKey {
    uid: String,
    namespace: String,
    type_: EventType,
    reason: &'static str,
    note: String,
}

#[derive(Debug)]
struct SeriesEntry {
    name: String,
    count: i32,
    last: Instant,
}

/// The posting side of the queue.
pub struct Poster {
    client: Client,
    reporter: Reporter,
    rx: mpsc::Receiver<EventRequest>,
    stats: Arc<EventStats>,
    series: HashMap<SeriesKey, SeriesEntry>,
    retry_base: Duration,
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
        self.retry_base = base;
        self
    }

    /// Posts queued events until every sink is dropped.
    pub async fn run(self) {
        self.run_until(std::future::pending::<()>()).await
    }

    /// Posts queued events until every sink is dropped or `drain` completes; then closes the
    /// queue (later posts are dropped) and posts what was queued before returning.
    pub async fn run_until(mut self, drain: impl std::future::Future) {
        let mut drain = std::pin::pin!(drain);
        loop {
            tokio::select! {
                biased;
                request = self.rx.recv() => match request {
                    Some(request) => self.post(request).await,
                    None => return,
                },
                _ = &mut drain => break,
            }
        }
        self.rx.close();
        while let Some(request) = self.rx.recv().await {
            self.post(request).await;
        }
    }

    async fn post(&mut self, request: EventRequest) {
        let (namespace, name) = names(&request.regarding);
        let (namespace, name) = (namespace.to_string(), name.to_string());
        let note = truncate(&request.note, NOTE_MAX_BYTES);
        let key = SeriesKey {
            uid: request.regarding.uid.clone().unwrap_or_default(),
            namespace: namespace.clone(),
            type_: request.type_,
            reason: request.reason,
            note: note.clone(),
        };
        self.series.retain(|_, e| e.last.elapsed() < SERIES_TTL);
        let api: Api<Event> = Api::namespaced(self.client.clone(), &namespace);
        let mut last_failure = (0u16, String::new());
        for attempt in 1..=MAX_TRIES {
            let result = match self.series.get(&key) {
                Some(entry) => patch_series(&api, &entry.name, entry.count + 1)
                    .await
                    .map(|_| entry.name.clone()),
                None => {
                    let event = self.event(&request, &note);
                    let name = event.metadata.name.clone().unwrap_or_default();
                    create(&api, &event).await.map(|_| name)
                }
            };
            match result {
                Ok(event_name) => {
                    self.stats.posted.fetch_add(1, Ordering::Relaxed);
                    let entry = self.series.entry(key).or_insert(SeriesEntry {
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
                    self.series.remove(&key);
                    last_failure = (404, "the series event no longer exists".into());
                }
                Err(Failure::Give { code, error }) => {
                    last_failure = (code, error);
                    break;
                }
                Err(Failure::Retry { code, after, error }) => {
                    last_failure = (code, error);
                    if attempt < MAX_TRIES {
                        let delay = after.unwrap_or(self.retry_base * 2u32.pow(attempt - 1));
                        tokio::time::sleep(delay).await;
                    }
                }
            }
        }
        let (code, error) = last_failure;
        *self
            .stats
            .failed_by_code
            .lock()
            .expect("stats lock")
            .entry(code)
            .or_default() += 1;
        tracing::warn!(
            namespace = namespace.as_str(),
            name = name.as_str(),
            uid = request.regarding.uid.as_deref().unwrap_or(""),
            code,
            reason = request.reason,
            error = error.as_str(),
            handler = request.handler,
            cause = request.cause.as_str(),
            "Failed to post an event:"
        );
    }

    fn event(&self, request: &EventRequest, note: &str) -> Event {
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
            reporting_controller: Some(self.reporter.controller.clone()),
            reporting_instance: Some(self.reporter.instance.clone()),
            series: None::<EventSeries>,
            ..Default::default()
        }
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
