//! One pass of the `accept` handler over one object: decide the cause, validate, write status
//! when it changed, queue the event, log Kopf's lifecycle lines.
//!
//! Status writes are server-side apply on the status subresource with field manager
//! `kubectl-microservice` (force: we own `status.phase`, `observedGeneration` and the
//! `Accepted` condition, also when a Kopf operator wrote them before). A failed write is retried
//! with capped exponential backoff for 403, 409, 429 (honouring the Status' `retryAfterSeconds`),
//! 5xx and transport errors; 400, 404 and 422 end the cycle as failed, with no retry loop.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::Utc;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Client, Resource};
use thiserror::Error;
use tokio::sync::Semaphore;

use super::cause::{Cause, Decision, decide, kopf_finalizer_index};
use super::events::{EventRequest, EventSink, EventType};
use super::status::{Outcome, already_written, apply_body, desired_status, pruned_fields};
use super::validate::{describe, validate_spec};
use crate::resource::{CRD_NAME, FIELD_MANAGER, MicroserviceObject};
use crate::text::quote_value;

/// The handler id, as Kopf names a function `accept` (our operator has no field handler, so never `accept/spec`).
pub const HANDLER: &str = "accept";
/// Longest delay between two retries of a failed status write.
pub const MAX_BACKOFF: Duration = Duration::from_secs(300);

/// Shared state of the controller.
pub struct Context {
    /// The API client.
    pub client: Client,
    /// Where events go.
    pub events: EventSink,
    /// uid → the generation this process last finished handling (success or permanent failure).
    handled: Mutex<HashMap<String, i64>>,
    /// uid → consecutive failed writes, for the backoff.
    failures: Mutex<HashMap<String, u32>>,
    /// uids whose first-sight checks (Kopf finalizer) and pruning warning were done.
    noticed: Mutex<HashSet<String>>,
    pruned_warned: Mutex<HashSet<String>>,
    /// Bounds status writes in flight.
    writes: Semaphore,
    /// First retry delay; doubles per failure up to [`MAX_BACKOFF`].
    base_backoff: Duration,
}

impl Context {
    /// A context allowing `max_writes` status writes in flight.
    pub fn new(client: Client, events: EventSink, max_writes: usize) -> Self {
        Context {
            client,
            events,
            handled: Mutex::default(),
            failures: Mutex::default(),
            noticed: Mutex::default(),
            pruned_warned: Mutex::default(),
            writes: Semaphore::new(max_writes.max(1)),
            base_backoff: Duration::from_secs(1),
        }
    }

    /// Forgets every uid not in `live`: objects deleted since (called periodically).
    pub fn forget_except(&self, live: &HashSet<String>) {
        self.handled.lock().expect("lock").retain(|uid, _| live.contains(uid));
        self.failures.lock().expect("lock").retain(|uid, _| live.contains(uid));
        self.noticed.lock().expect("lock").retain(|uid| live.contains(uid));
        self.pruned_warned
            .lock()
            .expect("lock")
            .retain(|uid| live.contains(uid));
    }

    /// Forgets one deleted object.
    pub fn forget(&self, uid: &str) {
        self.handled.lock().expect("lock").remove(uid);
        self.failures.lock().expect("lock").remove(uid);
        self.noticed.lock().expect("lock").remove(uid);
        self.pruned_warned.lock().expect("lock").remove(uid);
    }

    /// Forgets everything: the next pass over each object is a first sight (resume).
    /// Used when a new leadership term starts.
    pub fn forget_all(&self) {
        self.forget_except(&HashSet::new());
    }

    /// The generation last handled for `uid`, if any.
    pub fn handled_generation(&self, uid: &str) -> Option<i64> {
        self.handled.lock().expect("lock").get(uid).copied()
    }

    fn record_handled(&self, uid: &str, generation: i64) {
        self.handled.lock().expect("lock").insert(uid.to_string(), generation);
        self.failures.lock().expect("lock").remove(uid);
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
pub fn error_policy(_obj: Arc<MicroserviceObject>, err: &RetryableError, _ctx: Arc<Context>) -> Action {
    Action::requeue(err.retry_in)
}

/// Fields every log line about one object carries.
struct Subject<'a> {
    namespace: &'a str,
    name: &'a str,
    uid: &'a str,
    cause: Cause,
}

macro_rules! log_at {
    ($level:ident, $s:expr, $($arg:tt)+) => {
        tracing::$level!(namespace = $s.namespace, name = $s.name, uid = $s.uid,
            handler = HANDLER, cause = $s.cause.as_str(), $($arg)+)
    };
}

/// Handles one object (see the module docs).
pub async fn reconcile(obj: Arc<MicroserviceObject>, ctx: Arc<Context>) -> Result<Action, RetryableError> {
    if obj.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    let namespace = obj.metadata.namespace.as_deref().unwrap_or("");
    let name = obj.metadata.name.as_deref().unwrap_or("");
    let uid = obj.metadata.uid.as_deref().unwrap_or("");
    let generation = obj.metadata.generation.unwrap_or(0);
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
    };
    if let Some(record) = &kopf {
        log_at!(
            info,
            subject,
            annotation = record.annotation.as_str(),
            "Taking over from a Kopf operator: the object was last handled per its annotation"
        );
    }

    let outcome = match validate_spec(&obj.spec) {
        Ok(spec) => {
            log_at!(
                info,
                subject,
                "Accepted {namespace}/{name}: image={} port={}",
                quote_value(&spec.image),
                spec.port
            );
            Outcome::Accepted(spec)
        }
        Err(errors) => Outcome::Invalid(errors),
    };

    let desired = desired_status(&outcome, generation, obj.status.as_ref(), Utc::now());
    let mut wrote = false;
    if !already_written(obj.status.as_ref(), &desired) {
        let api: Api<MicroserviceObject> = Api::namespaced(ctx.client.clone(), namespace);
        let params = PatchParams::apply(FIELD_MANAGER).force();
        let result = {
            let _permit = ctx.writes.acquire().await.expect("the write semaphore is never closed");
            api.patch_status(name, &params, &Patch::Apply(apply_body(&desired)))
                .await
        };
        match result {
            Ok(stored) => {
                wrote = true;
                check_pruned(&obj, &ctx, &subject, &desired, stored.status.as_ref());
            }
            Err(err) => return write_failed(&obj, &ctx, &subject, generation, err),
        }
    }

    let regarding = obj.object_ref(&());
    match &outcome {
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
        }
    }
    ctx.record_handled(uid, generation);
    Ok(Action::await_change())
}

fn first_sight_checks(obj: &MicroserviceObject, ctx: &Context, namespace: &str, name: &str, uid: &str) {
    if !ctx.noticed.lock().expect("lock").insert(uid.to_string()) {
        return;
    }
    if let Some(index) = kopf_finalizer_index(obj) {
        let patch = format!(
            "kubectl patch microservice {name} -n {namespace} --type=json -p '[{{\"op\":\"remove\",\"path\":\"/metadata/finalizers/{index}\"}}]'"
        );
        tracing::warn!(
            namespace,
            name,
            uid,
            finalizer = super::cause::KOPF_FINALIZER,
            remove_with = patch.as_str(),
            "A Kopf finalizer is left on the object; no Kopf operator will remove it, so deletion will hang until it is removed"
        );
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
) -> Result<Action, RetryableError> {
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
        ctx.record_handled(subject.uid, generation);
        return Ok(Action::await_change());
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

/// `Forbidden (403): <message>` for API errors; the client's text otherwise.
pub fn describe_error(err: &kube::Error) -> String {
    match err {
        kube::Error::Api(status) => {
            let reason = if status.reason.is_empty() {
                "Error"
            } else {
                status.reason.as_str()
            };
            format!("{reason} ({}): {}", status.code, status.message)
        }
        other => other.to_string(),
    }
}
