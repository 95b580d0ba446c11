//! Mocked-API tests of the controller, in kube-rs controller-rs's Scenario shape: a test builds
//! the [`Scenario`] it expects (the cluster's answers, real API server bodies from
//! `tests/fixtures/apiserver-responses/`), runs the reconcile, leader, event or list/watch code
//! against the [`ApiServerVerifier`] that answers it, and awaits the requests it expects.
//!
//! - [`verifier`]: the fake API server, its scenarios and the fake Lease;
//! - one file per area: [`reconcile`] (handler passes), [`events`] (the event queues),
//!   [`listwatch`] (the list, watch and health), [`leader`] (terms and the Lease),
//!   [`shutdown`] (SIGTERM).

mod events;
mod leader;
mod listwatch;
mod reconcile;
mod shutdown;
mod verifier;

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use kube::Api;
use serde_json::{Value, json};
use tokio::sync::watch;

use super::cache::CachedMicroservice;
use super::events::{self as operate_events, EventSink, Reporter};
use super::health::Health;
use super::logging::tests::{Capture, capture};
use super::reconcile::{Context, error_policy, reconcile as reconcile_pass};
use crate::cli::{EventsPolicy, LogFormat};
use crate::resource::MicroserviceObject;
use verifier::{ApiServerVerifier, Scenario, Seen, until};

/// A real API server response body (the `.txt` files end with an `HTTP <code>` line).
fn real_body(file: &str) -> String {
    let path = format!(
        "{}/tests/fixtures/apiserver-responses/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap();
    text.rsplit_once("\nHTTP ")
        .map(|(body, _)| body.to_string())
        .unwrap_or(text)
}

fn object(name: &str, generation: i64, spec: Value, status: Option<Value>) -> MicroserviceObject {
    serde_json::from_value(json!({
        "apiVersion": "platform.example.io/v1alpha1", "kind": "Microservice",
        "metadata": {"name": name, "namespace": "todo", "uid": format!("uid-{name}"), "generation": generation, "resourceVersion": "100"},
        "spec": spec, "status": status
    }))
    .unwrap()
}

/// The cached form of `obj`, as the controller's watch hands it to a pass.
fn cached(obj: MicroserviceObject) -> Arc<CachedMicroservice> {
    Arc::new(CachedMicroservice::from(obj))
}

fn todo_api(generation: i64, port: u16, status: Option<Value>) -> MicroserviceObject {
    object(
        "todo-api",
        generation,
        json!({"image": "ghcr.io/yrw9281/it30-todo-api:0.1.0", "port": port}),
        status,
    )
}

fn microservice_json(name: &str, generation: i64, port: Value, rv: &str, status: Option<Value>) -> Value {
    json!({
        "apiVersion": "platform.example.io/v1alpha1", "kind": "Microservice",
        "metadata": {"name": name, "namespace": "todo", "uid": format!("uid-{name}"), "generation": generation, "resourceVersion": rv},
        "spec": {"image": "ghcr.io/yrw9281/it30-todo-api:0.1.0", "port": port},
        "status": status
    })
}

fn list_json(rv: &str, items: Vec<Value>) -> String {
    json!({"apiVersion": "platform.example.io/v1alpha1", "kind": "MicroserviceList", "metadata": {"resourceVersion": rv}, "items": items})
        .to_string()
}

fn accepted(generation: i64) -> Option<Value> {
    Some(json!({"phase": "Accepted", "observedGeneration": generation}))
}

/// The list of a namespace holding one never-handled object `todo/a`.
fn one_object_list() -> Vec<String> {
    vec![list_json(
        "500",
        vec![microservice_json("a", 1, json!(8080), "10", None)],
    )]
}

/// A healthy cluster with one never-handled object `todo/a`; watches stay open.
fn one_object() -> Scenario {
    Scenario::Controller {
        lists: one_object_list(),
        outage: None,
    }
}

/// Status PATCHes of one object, in order.
fn status_patches(api: &ApiServerVerifier, name: &str) -> Vec<Seen> {
    api.matching("PATCH", &format!("/microservices/{name}/status"))
}

fn lines_with(logs: &Capture, needle: &str) -> Vec<String> {
    logs.text()
        .lines()
        .filter(|l| l.contains(needle))
        .map(str::to_string)
        .collect()
}

/// A controller context over the verifier of one scenario, and the log lines it writes.
struct Harness {
    ctx: Arc<Context>,
    api: ApiServerVerifier,
    logs: Capture,
    _guard: tracing::dispatcher::DefaultGuard,
}

impl Harness {
    /// The verifier answering `scenario`, a context posting events per `policy` (retries and
    /// shed reports sped up), and the captured log lines.
    fn new(scenario: Scenario, policy: EventsPolicy) -> Harness {
        Self::observed(scenario, policy, None)
    }

    /// [`Harness::new`], the client and context reporting to `health`.
    fn observed(scenario: Scenario, policy: EventsPolicy, health: Option<Arc<Health>>) -> Harness {
        let (logs, guard) = capture(LogFormat::Text);
        let (client, api) = ApiServerVerifier::start(scenario, health.clone());
        let reporter = Reporter {
            controller: "kubectl-microservice".into(),
            instance: "test-pod".into(),
        };
        let (sink, poster): (EventSink, _) = operate_events::channel(client.clone(), reporter, policy);
        tokio::spawn(
            poster
                .with_retry_base(Duration::from_millis(5))
                .with_shed_report_interval(Duration::from_millis(200))
                .run(),
        );
        let mut ctx = Context::new(client, sink, 4).with_base_backoff(Duration::from_millis(10));
        if let Some(health) = health {
            ctx = ctx.with_health(health);
        }
        Harness {
            ctx: Arc::new(ctx),
            api,
            logs,
            _guard: guard,
        }
    }

    /// Runs the controller over namespace `todo` on a task; `term_starts` as in `run`.
    fn run_controller(&self, term_starts: watch::Receiver<u64>) -> tokio::task::JoinHandle<()> {
        let api: Api<CachedMicroservice> = Api::namespaced(self.ctx.client.clone(), "todo");
        let run = super::controller_for(api, "todo".into(), self.ctx.clone(), 16, term_starts)
            .run(reconcile_pass, error_policy, self.ctx.clone())
            .for_each(|_| async {});
        tokio::spawn(run)
    }
}
