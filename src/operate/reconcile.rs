//! One pass of the `accept` handler over one object: decide the cause, validate, write status
//! when it changed, queue the event, log Kopf's lifecycle lines.
//!
//! Status writes are server-side apply on the status subresource with field manager
//! `kubectl-microservice` (force: we own `status.phase`, `observedGeneration` and the
//! `Accepted` condition, also when a Kopf operator wrote them before). A failed write is retried
//! with capped exponential backoff for 403, 409, 429 (honouring the Status' `retryAfterSeconds`),
//! 5xx and transport errors; 400, 404 and 422 end the cycle as failed, with no retry loop.
//!
//! A pass runs only in a leadership term and checks, before each write (the status write, then
//! the event), that its term is still current: a pass whose Lease was lost writes nothing more.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::Utc;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Client, Resource};
use thiserror::Error;
use tokio::sync::Semaphore;

use super::cache::CachedMicroservice;
use super::cause::{Decision, decide, kopf_finalizer_index};
use super::events::{EventRequest, EventSink, EventType};
use super::health::{Health, WATCH_TIMEOUT};
use super::metrics::Metrics;
use super::status::{Outcome, already_written, apply_body, desired_status, pruned_fields};
use super::validate::{describe, validate_spec};
use crate::resource::{CRD_NAME, FIELD_MANAGER, MicroserviceObject};
use crate::text::quote_value;
use crate::vocab::cause::{Cause, KopfRecord};
use crate::vocab::handler::{HANDLER, RunOutcome};

/// Longest delay between two retries of a failed status write.
pub const MAX_BACKOFF: Duration = Duration::from_secs(300);

/// Shared state of the controller.
///
/// Leadership: objects are handled only in a leadership term (`term` ≠ 0). With `--standalone`
/// the process's whole life is term 1 ([`Context::new`] starts there); with leader election the
/// term changes with the Lease ([`Context::begin_term`], [`Context::end_term`]). A handling pass
/// belongs to the term it started in, and writes nothing once that term is over.
pub struct Context {
    /// The API client.
    pub client: Client,
    /// Where events go.
    pub events: EventSink,
    /// Handler and event metrics, for `/metrics`.
    pub metrics: Arc<Metrics>,
    /// Liveness and readiness, for `/healthz` and `/readyz`.
    pub health: Arc<Health>,
    /// uid → the generation handled in this term (success or permanent failure). Its lock also
    /// orders term changes against records, so a pass of an old term cannot record into a new one.
    handled: Mutex<HashMap<String, i64>>,
    /// uid → consecutive failed writes, for the backoff.
    failures: Mutex<HashMap<String, u32>>,
    /// Keys whose first-sight checks (Kopf finalizer) were done: the uid, and `"<uid> deleting"`
    /// once the warning was repeated for the object's deletion.
    noticed: Mutex<HashSet<String>>,
    pruned_warned: Mutex<HashSet<String>>,
    /// The current leadership term; 0 while not leading.
    term: AtomicU64,
    /// Set on SIGTERM: no new pass starts; passes in flight may still write.
    stopping: AtomicBool,
    /// Passes in flight: started ([`reconcile`] entered) and not finished. SIGTERM waits for
    /// none ([`Context::passes_finished`]).
    passes: tokio::sync::watch::Sender<usize>,
    /// Bounds status writes in flight.
    pub(crate) writes: Arc<Semaphore>,
    /// First retry delay; doubles per failure up to [`MAX_BACKOFF`].
    base_backoff: Duration,
}

impl Context {
    /// A context allowing `max_writes` status writes in flight, leading in term 1 (standalone).
    pub fn new(client: Client, events: EventSink, max_writes: usize) -> Self {
        let metrics = Arc::new(Metrics::new(events.stats().clone()));
        Context {
            client,
            events,
            metrics,
            health: Arc::new(Health::new(WATCH_TIMEOUT, 0)),
            handled: Mutex::default(),
            failures: Mutex::default(),
            noticed: Mutex::default(),
            pruned_warned: Mutex::default(),
            term: AtomicU64::new(1),
            stopping: AtomicBool::new(false),
            passes: tokio::sync::watch::Sender::new(0),
            writes: Arc::new(Semaphore::new(max_writes.max(1))),
            base_backoff: Duration::from_secs(1),
        }
    }

    /// A context for another Lease's lane: the same client, event sink, metrics, health and
    /// bound on writes in flight; its own term (not leading yet) and memory of what was handled.
    pub fn sibling(&self) -> Self {
        Context {
            client: self.client.clone(),
            events: self.events.clone(),
            metrics: self.metrics.clone(),
            health: self.health.clone(),
            handled: Mutex::default(),
            failures: Mutex::default(),
            noticed: Mutex::default(),
            pruned_warned: Mutex::default(),
            term: AtomicU64::new(0),
            stopping: AtomicBool::new(false),
            passes: tokio::sync::watch::Sender::new(0),
            writes: self.writes.clone(),
            base_backoff: self.base_backoff,
        }
    }

    /// Uses `health` (shared with the endpoint and the client's watch probe).
    pub fn with_health(mut self, health: Arc<Health>) -> Self {
        self.health = health;
        self
    }

    /// Forgets every uid not in `live`: objects deleted since (called periodically).
    pub fn forget_except(&self, live: &HashSet<String>) {
        self.handled.lock().expect("lock").retain(|uid, _| live.contains(uid));
        self.failures.lock().expect("lock").retain(|uid, _| live.contains(uid));
        self.noticed
            .lock()
            .expect("lock")
            .retain(|key| live.contains(noticed_uid(key)));
        self.pruned_warned
            .lock()
            .expect("lock")
            .retain(|uid| live.contains(uid));
    }

    /// Forgets one deleted object.
    pub fn forget(&self, uid: &str) {
        self.handled.lock().expect("lock").remove(uid);
        self.failures.lock().expect("lock").remove(uid);
        {
            // Its two keys, by lookup: a scan of every key per deletion was quadratic in a mass delete.
            let mut noticed = self.noticed.lock().expect("lock");
            noticed.remove(uid);
            noticed.remove(&format!("{uid} deleting"));
        }
        self.pruned_warned.lock().expect("lock").remove(uid);
    }

    /// Forgets everything: the next pass over each object is a first sight (resume).
    /// Used when a new leadership term starts.
    pub fn forget_all(&self) {
        self.forget_except(&HashSet::new());
    }

    /// Starts leadership term `term` (> 0): forgets everything handled before, so the first pass
    /// over each object in this term is a resume (or update), as on a process start.
    pub fn begin_term(&self, term: u64) {
        self.forget_all();
        // A pass of the previous term may have recorded since: clear again under the lock that
        // records take, together with the switch.
        let mut handled = self.handled.lock().expect("lock");
        handled.clear();
        self.term.store(term, Ordering::SeqCst);
    }

    /// Ends the current term (the Lease was lost or released): no pass starts, and passes in
    /// flight write nothing more.
    pub fn end_term(&self) {
        let _handled = self.handled.lock().expect("lock");
        self.term.store(0, Ordering::SeqCst);
    }

    /// Stops taking work (SIGTERM): no pass starts; passes in flight keep their term and finish.
    pub fn stop_taking_work(&self) {
        self.stopping.store(true, Ordering::SeqCst);
    }

    /// Counts a pass in flight until the returned guard drops.
    fn pass_started(&self) -> PassInFlight<'_> {
        self.passes.send_modify(|n| *n += 1);
        PassInFlight(&self.passes)
    }

    /// Resolves once no pass is in flight. After [`Context::stop_taking_work`] no pass starts
    /// (one that began before sees `stopping` and ends without writing), so then it resolves
    /// when the last pass in flight finished, at once when none was running.
    pub async fn passes_finished(&self) {
        let mut passes = self.passes.subscribe();
        let _ = passes.wait_for(|n| *n == 0).await;
    }

    /// The term a new pass may start in: `None` while not leading or stopping.
    pub fn startable_term(&self) -> Option<u64> {
        if self.stopping.load(Ordering::SeqCst) {
            return None;
        }
        Some(self.term.load(Ordering::SeqCst)).filter(|t| *t != 0)
    }

    /// Whether `term` is still the current term.
    pub fn holds_term(&self, term: u64) -> bool {
        self.term.load(Ordering::SeqCst) == term
    }

    /// The generation last handled for `uid` in this term, if any.
    pub fn handled_generation(&self, uid: &str) -> Option<i64> {
        self.handled.lock().expect("lock").get(uid).copied()
    }

    /// Records `generation` as handled, unless `term` is over.
    fn record_handled(&self, uid: &str, generation: i64, term: u64) {
        let mut handled = self.handled.lock().expect("lock");
        if self.holds_term(term) {
            handled.insert(uid.to_string(), generation);
            drop(handled);
            self.failures.lock().expect("lock").remove(uid);
        }
    }

    fn next_backoff(&self, uid: &str) -> Duration {
        let mut failures = self.failures.lock().expect("lock");
        let n = failures.entry(uid.to_string()).or_default();
        *n += 1;
        let factor = 2u32.saturating_pow((*n - 1).min(16));
        self.base_backoff.saturating_mul(factor).min(MAX_BACKOFF)
    }

    #[cfg(test)]
    pub(crate) fn with_base_backoff(mut self, base: Duration) -> Self {
        self.base_backoff = base;
        self
    }
}

/// A pass in flight, counted in [`Context::passes_finished`] until dropped.
struct PassInFlight<'a>(&'a tokio::sync::watch::Sender<usize>);

impl Drop for PassInFlight<'_> {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n -= 1);
    }
}

/// A pass that must be retried: the status write failed with a retryable error.
#[derive(Debug, Error)]
#[error("{operation} failed: {source}")]
pub struct RetryableError {
    /// What failed, e.g. `patch microservices/status`.
    pub operation: &'static str,
    /// The client's error.
    #[source]
    pub source: kube::Error,
    /// When to try again.
    pub retry_in: Duration,
}

/// The requeue after a retryable failure.
pub fn error_policy(_obj: Arc<CachedMicroservice>, err: &RetryableError, _ctx: Arc<Context>) -> Action {
    Action::requeue(err.retry_in)
}

/// Fields every log line about one object carries.
#[derive(Clone, Copy)]
struct Subject<'a> {
    namespace: &'a str,
    name: &'a str,
    uid: &'a str,
    cause: Cause,
    /// The leadership term the pass started in.
    term: u64,
}

macro_rules! log_at {
    ($level:ident, $s:expr, $($arg:tt)+) => {
        tracing::$level!(namespace = $s.namespace, name = $s.name, uid = $s.uid,
            handler = HANDLER, cause = $s.cause.as_str(), $($arg)+)
    };
}

/// Handles one object (see the module docs), as the watch cached it: its compact form is parsed
/// once into the object the pass works on. Does nothing outside a leadership term, or after
/// SIGTERM.
pub async fn reconcile(cached: Arc<CachedMicroservice>, ctx: Arc<Context>) -> Result<Action, RetryableError> {
    // Counted before `startable_term` is checked, so SIGTERM's wait sees every pass that may write.
    let _in_flight = ctx.pass_started();
    let obj = cached.object();
    let namespace = obj.metadata.namespace.as_deref().unwrap_or("");
    let name = obj.metadata.name.as_deref().unwrap_or("");
    let uid = obj.metadata.uid.as_deref().unwrap_or("");
    if obj.metadata.deletion_timestamp.is_some() {
        // Nothing to handle, but a leftover Kopf finalizer is what keeps it Terminating.
        if ctx.startable_term().is_some() {
            first_sight_checks(&obj, &ctx, namespace, name, uid);
        }
        return Ok(Action::await_change());
    }
    let Some(term) = ctx.startable_term() else {
        return Ok(Action::await_change());
    };
    first_sight_checks(&obj, &ctx, namespace, name, uid);

    let (cause, kopf) = match decide(&obj, ctx.handled_generation(uid)) {
        Decision::Skip => return Ok(Action::await_change()),
        Decision::Handle { cause, kopf } => (cause, kopf),
    };
    let subject = Subject {
        namespace,
        name,
        uid,
        cause,
        term,
    };
    let started = Instant::now();
    let result = handle(&obj, &ctx, &subject, kopf.as_ref()).await;
    let outcome = match &result {
        Ok(outcome) => *outcome,
        Err(_) => RunOutcome::Retrying,
    };
    ctx.metrics.handler_run(HANDLER, cause, outcome, started.elapsed());
    result.map(|_| Action::await_change())
}

/// One run of the handler; the outcome is counted by the caller.
async fn handle(
    obj: &MicroserviceObject,
    ctx: &Context,
    subject: &Subject<'_>,
    kopf: Option<&KopfRecord>,
) -> Result<RunOutcome, RetryableError> {
    let generation = obj.metadata.generation.unwrap_or(0);
    if let Some(record) = kopf {
        log_at!(
            info,
            subject,
            annotation = record.annotation.as_str(),
            "Taking over from a Kopf operator: the object was last handled per its annotation"
        );
    }
    let outcome = validated(&obj.spec, subject);
    let desired = desired_status(&outcome, generation, obj.status.as_ref(), Utc::now());
    let stored = match write_status(obj, ctx, subject, &desired).await {
        StatusWrite::Unchanged => None,
        StatusWrite::Stored(status) => Some(status),
        StatusWrite::Cancelled => return Ok(cancelled(subject)),
        StatusWrite::Failed(err) => return write_failed(obj, ctx, subject, generation, err),
    };
    if !ctx.holds_term(subject.term) {
        return Ok(cancelled(subject));
    }
    if let Some(stored) = &stored {
        check_pruned(obj, ctx, subject, &desired, stored.as_ref());
    }
    let run = report(obj, ctx, subject, &outcome, generation, stored.is_some());
    ctx.record_handled(subject.uid, generation, subject.term);
    Ok(run)
}

/// The spec validated; an accepted one is logged (`Accepted ns/name: image=... port=...`).
fn validated(spec: &serde_json::Value, subject: &Subject<'_>) -> Outcome {
    match validate_spec(spec) {
        Ok(spec) => {
            log_at!(
                info,
                subject,
                "Accepted {}/{}: image={} port={}",
                subject.namespace,
                subject.name,
                quote_value(&spec.image),
                spec.port
            );
            Outcome::Accepted(spec)
        }
        Err(errors) => Outcome::Invalid(errors),
    }
}

/// What became of one pass's status write.
enum StatusWrite {
    /// The status already is what it should be: nothing sent.
    Unchanged,
    /// Stored; the status as the API server kept it (a schema may have pruned fields).
    Stored(Option<serde_json::Value>),
    /// The pass's term ended while it waited for a write slot: nothing sent.
    Cancelled,
    /// The API server refused it, or could not be reached.
    Failed(kube::Error),
}

/// Applies `desired` to the status subresource (server-side apply, forced, as [`FIELD_MANAGER`])
/// unless it is already written, within the bound on writes in flight.
async fn write_status(
    obj: &MicroserviceObject,
    ctx: &Context,
    subject: &Subject<'_>,
    desired: &serde_json::Value,
) -> StatusWrite {
    if already_written(obj.status.as_ref(), desired) {
        return StatusWrite::Unchanged;
    }
    let api: Api<MicroserviceObject> = Api::namespaced(ctx.client.clone(), subject.namespace);
    let params = PatchParams::apply(FIELD_MANAGER).force();
    let _permit = ctx.writes.acquire().await.expect("the write semaphore is never closed");
    if !ctx.holds_term(subject.term) {
        return StatusWrite::Cancelled;
    }
    match api
        .patch_status(subject.name, &params, &Patch::Apply(apply_body(desired)))
        .await
    {
        Ok(stored) => StatusWrite::Stored(stored.status),
        Err(err) => StatusWrite::Failed(err),
    }
}

/// The lifecycle lines of a pass whose status is written, and its event when it wrote: Kopf's
/// `Handler 'accept' succeeded.` / `failed permanently`, then `... is processed`.
fn report(
    obj: &MicroserviceObject,
    ctx: &Context,
    subject: &Subject<'_>,
    outcome: &Outcome,
    generation: i64,
    wrote: bool,
) -> RunOutcome {
    let cause = subject.cause;
    let regarding = obj.object_ref(&());
    match outcome {
        Outcome::Accepted(spec) => {
            log_at!(info, subject, "Handler '{HANDLER}' succeeded.");
            log_at!(info, subject, "{} is processed: 1 succeeded; 0 failed.", cause.title());
            // A resume (also a Kopf takeover that only added observedGeneration) posts nothing.
            if wrote && cause != Cause::Resume {
                ctx.events.post(EventRequest {
                    regarding,
                    type_: EventType::Normal,
                    reason: "Accepted",
                    note: format!(
                        "Accepted image {} port {} (generation {generation}, cause {cause})",
                        spec.image, spec.port
                    ),
                    action: "Accept",
                    handler: HANDLER,
                    cause,
                });
            }
            RunOutcome::Succeeded
        }
        Outcome::Invalid(errors) => {
            log_at!(
                error,
                subject,
                "Handler '{HANDLER}' failed permanently: {}",
                describe(errors)
            );
            log_at!(info, subject, "{} is processed: 0 succeeded; 1 failed.", cause.title());
            if wrote {
                ctx.events.post(EventRequest {
                    regarding,
                    type_: EventType::Warning,
                    reason: "InvalidSpec",
                    note: describe(errors),
                    action: "Accept",
                    handler: HANDLER,
                    cause,
                });
            }
            RunOutcome::Failed
        }
    }
}

/// The pass's term ended before its next write: log it and write nothing more.
fn cancelled(subject: &Subject<'_>) -> RunOutcome {
    log_at!(
        warn,
        subject,
        "Handler '{HANDLER}' cancelled: the lease was lost before its next write; the next leader handles the object"
    );
    RunOutcome::Cancelled
}

/// The uid part of a key of [`Context::noticed`].
fn noticed_uid(key: &str) -> &str {
    key.split(' ').next().unwrap_or(key)
}

/// Warns once per object about a leftover Kopf finalizer, and once more when the object is being
/// deleted (then the finalizer is what holds it). The removal command guards the index with a
/// JSON-patch `test` op ([`crate::diagnose::deletion::remove_command`]).
fn first_sight_checks(obj: &MicroserviceObject, ctx: &Context, namespace: &str, name: &str, uid: &str) {
    let deleting = obj.metadata.deletion_timestamp.is_some();
    let key = if deleting {
        format!("{uid} deleting")
    } else {
        uid.to_string()
    };
    if !ctx.noticed.lock().expect("lock").insert(key) {
        return;
    }
    if let Some(index) = kopf_finalizer_index(obj) {
        let patch = crate::diagnose::deletion::remove_command(
            "microservice",
            namespace,
            name,
            index,
            crate::vocab::cause::KOPF_FINALIZER,
        );
        if deleting {
            let since = obj
                .metadata
                .deletion_timestamp
                .as_ref()
                .map(|t| crate::time::rfc3339_seconds(crate::time::from_jiff(t.0)))
                .unwrap_or_default();
            tracing::warn!(
                namespace,
                name,
                uid,
                finalizer = crate::vocab::cause::KOPF_FINALIZER,
                deletion_timestamp = since.as_str(),
                remove_with = patch.as_str(),
                "The object is Terminating, held by a Kopf finalizer that no Kopf operator will remove; it stays until the finalizer is removed"
            );
        } else {
            tracing::warn!(
                namespace,
                name,
                uid,
                finalizer = crate::vocab::cause::KOPF_FINALIZER,
                remove_with = patch.as_str(),
                "A Kopf finalizer is left on the object; no Kopf operator will remove it, so deletion will hang until it is removed"
            );
        }
    }
}

fn check_pruned(
    obj: &MicroserviceObject,
    ctx: &Context,
    subject: &Subject<'_>,
    sent: &serde_json::Value,
    stored: Option<&serde_json::Value>,
) {
    let pruned = pruned_fields(sent, stored);
    if pruned.is_empty() || !ctx.pruned_warned.lock().expect("lock").insert(subject.uid.to_string()) {
        return;
    }
    let fields = pruned
        .iter()
        .map(|f| format!("status.{f}"))
        .collect::<Vec<_>>()
        .join(", ");
    log_at!(
        warn,
        subject,
        fields = fields.as_str(),
        crd = CRD_NAME,
        "Status was pruned by the CRD's status schema: declare these fields (or x-kubernetes-preserve-unknown-fields) in the CRD"
    );
    ctx.events.post(EventRequest {
        regarding: obj.object_ref(&()),
        type_: EventType::Warning,
        reason: "StatusPruned",
        note: format!("The API server dropped {fields} from the status written by the operator: the status schema of CRD {CRD_NAME} does not declare them"),
        action: "PatchStatus",
        handler: HANDLER,
        cause: subject.cause,
    });
}

fn write_failed(
    obj: &MicroserviceObject,
    ctx: &Context,
    subject: &Subject<'_>,
    generation: i64,
    err: kube::Error,
) -> Result<RunOutcome, RetryableError> {
    const OPERATION: &str = "patch microservices/status";
    let (code, retry_after) = match &err {
        kube::Error::Api(status) => (
            status.code,
            status
                .details
                .as_ref()
                .map(|d| d.retry_after_seconds)
                .filter(|s| *s > 0)
                .map(|s| Duration::from_secs(s.into())),
        ),
        _ => (0, None),
    };
    let cause_text = describe_error(&err);
    if !ctx.holds_term(subject.term) {
        return Ok(cancelled(subject));
    }
    ctx.events.post(EventRequest {
        regarding: obj.object_ref(&()),
        type_: EventType::Warning,
        reason: "ReconcileFailed",
        note: format!(
            "{OPERATION} for {}/{} failed: {cause_text}",
            subject.namespace, subject.name
        ),
        action: "PatchStatus",
        handler: HANDLER,
        cause: subject.cause,
    });
    if matches!(code, 400 | 404 | 422) {
        log_at!(
            error,
            subject,
            code,
            "Handler '{HANDLER}' failed permanently: {OPERATION} failed: {cause_text}"
        );
        log_at!(
            info,
            subject,
            "{} is processed: 0 succeeded; 1 failed.",
            subject.cause.title()
        );
        ctx.record_handled(subject.uid, generation, subject.term);
        return Ok(RunOutcome::Failed);
    }
    let retry_in = match retry_after {
        Some(after) => {
            ctx.next_backoff(subject.uid);
            after.min(MAX_BACKOFF)
        }
        None => ctx.next_backoff(subject.uid),
    };
    log_at!(
        error,
        subject,
        code,
        retry_in = format!("{}s", retry_in.as_secs_f64()).as_str(),
        "Handler '{HANDLER}' failed temporarily: {OPERATION} failed: {cause_text}"
    );
    Err(RetryableError {
        operation: OPERATION,
        source: err,
        retry_in,
    })
}

pub use crate::error::describe_kube_error as describe_error;
