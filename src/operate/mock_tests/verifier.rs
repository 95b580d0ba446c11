//! The fake API server of the mocked-API tests, in the shape of kube-rs controller-rs's
//! `ApiServerVerifier` (`src/fixtures.rs` there): it takes the [`Scenario`] a test expects and,
//! on a spawned task, answers every request the scenario expects with a real API server body
//! (`tests/fixtures/apiserver-responses/`), checking its method, path and body. Every request is
//! recorded as [`Seen`] for the test's own assertions; one the scenario does not expect, or whose
//! body is not what the API server would accept, is answered `404` and fails the test when the
//! verifier drops. A test awaits the requests it expects with [`ApiServerVerifier::wait_for`],
//! bounded by [`WAIT_LIMIT`].
//!
//! Unlike controller-rs's verifier it answers by route, not in a fixed order: the controller's
//! requests (status writes, events posted off the reconcile path, lease renewals, watches)
//! interleave in no fixed order. Watch requests get a 200 whose body stays open: tests push watch
//! events into it ([`ApiServerVerifier::push_watch`]) or end it as an API server restart does.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures::channel::mpsc;
use http::{Request, Response};
use http_body::Frame;
use http_body_util::{BodyExt, Full, StreamBody};
use kube::Client;
use kube::client::{Body, ClientBuilder, DynBody};
use serde_json::{Value, json};
use tower::BoxError;

use super::real_body;
use crate::operate::health::{Health, WatchProbeLayer};
use crate::resource::FIELD_MANAGER;

/// How long [`ApiServerVerifier::wait_for`] and [`until`] wait (polling every 10 ms; in
/// paused-time tests this is virtual time).
pub(super) const WAIT_LIMIT: Duration = Duration::from_secs(5);

/// The collection path of our Microservices in namespace `todo`, where the controller lists and
/// watches.
const MICROSERVICES: &str = "/apis/platform.example.io/v1alpha1/namespaces/todo/microservices";

/// One request as the fake API server saw it.
#[derive(Debug, Clone)]
pub(super) struct Seen {
    pub method: String,
    pub path: String,
    pub query: BTreeMap<String, String>,
    pub content_type: String,
    pub body: Value,
    /// When the request arrived (tokio's clock: paused-time tests see virtual time).
    pub at: tokio::time::Instant,
}

impl Seen {
    pub fn is_watch(&self) -> bool {
        self.query.get("watch").map(String::as_str) == Some("true")
    }
}

/// The cluster one test expects.
pub(super) enum Scenario {
    /// Handler passes and events, no list or watch: the handler's writes answered per `Writes`.
    Passes(Writes),
    /// The controller over namespace `todo`: each list answered with the next of `lists` (a
    /// `MicroserviceList` body; the last one repeats), every watch held open, writes stored; while
    /// `outage` is on, its requests get its answer.
    Controller { lists: Vec<String>, outage: Option<Outage> },
    /// Leader election on the Lease `ops/microservice-operator` that `lease` holds; with `lists`,
    /// also the controller's requests as in [`Scenario::Controller`]; while `outage` is on, its
    /// requests get its answer.
    Election {
        lease: Arc<Mutex<FakeLease>>,
        lists: Vec<String>,
        outage: Option<Outage>,
    },
}

/// How the API server answers the handler's writes.
pub(super) enum Writes {
    /// Status applies are stored (echoed back as the object), events created, series patched.
    Stored,
    /// Every status apply is refused with `(code, body)`; events stored.
    StatusRefused(u16, String),
    /// A status schema with only `status.phase`: the rest of an apply is dropped, still 200.
    StatusPruned,
    /// Every event creation is refused with `(code, body)`; status applies stored.
    EventsRefused(u16, String),
    /// A POST of a Normal event never gets an answer (a 200 whose body never ends); Warnings
    /// and status applies are stored.
    NormalEventsHang,
}

/// Requests answered with `answer` while `on` is set: an API server down or refusing.
pub(super) struct Outage {
    pub on: Arc<AtomicBool>,
    /// Only requests of this method; `None`: every request of the scenario.
    pub only: Option<&'static str>,
    /// The status code and body.
    pub answer: (u16, String),
}

impl Outage {
    /// An outage of `only` requests (every one when `None`) answered `(code, body)`, on while `on` is.
    pub fn new(on: &Arc<AtomicBool>, only: Option<&'static str>, code: u16, body: String) -> Option<Outage> {
        Some(Outage {
            on: on.clone(),
            only,
            answer: (code, body),
        })
    }

    fn answers(&self, seen: &Seen) -> Option<Answer> {
        let applies = self.only.is_none_or(|method| method == seen.method);
        (applies && self.on.load(Ordering::SeqCst)).then(|| Answer::Body(self.answer.0, self.answer.1.clone()))
    }
}

/// The real `503 ServiceUnavailable` Status of an API server going away.
pub(super) fn unavailable() -> String {
    json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": "unavailable", "reason": "ServiceUnavailable", "code": 503}).to_string()
}

/// What the fake server sends back.
enum Answer {
    /// A complete response: status code and JSON body.
    Body(u16, String),
    /// A 200 whose body stays open (a watch, or a request that hangs).
    Open,
    /// Not a request the scenario expects, or not one the API server would accept: why.
    Unexpected(String),
}

type WatchSender = mpsc::UnboundedSender<Result<Frame<Bytes>, BoxError>>;

/// The fake API server (module docs). Dropping it fails the test if any request was unexpected.
pub(super) struct ApiServerVerifier {
    seen: Arc<Mutex<Vec<Seen>>>,
    watches: Arc<Mutex<Vec<WatchSender>>>,
    problems: Arc<Mutex<Vec<String>>>,
}

impl ApiServerVerifier {
    /// A client whose requests `scenario` answers, on a spawned task. With `health`, the client
    /// carries the operator's watch probe layer, as in `run`.
    pub fn start(scenario: Scenario, health: Option<Arc<Health>>) -> (Client, ApiServerVerifier) {
        let (svc, mut handle) = tower_test::mock::pair::<Request<Body>, Response<Box<DynBody>>>();
        let verifier = ApiServerVerifier {
            seen: Arc::default(),
            watches: Arc::default(),
            problems: Arc::default(),
        };
        let (seen, watches, problems) = (
            verifier.seen.clone(),
            verifier.watches.clone(),
            verifier.problems.clone(),
        );
        let lists_answered = AtomicUsize::new(0);
        tokio::spawn(async move {
            while let Some((request, send)) = handle.next_request().await {
                let request = read_request(request).await;
                let answer = scenario.answer(&request, &lists_answered);
                seen.lock().unwrap().push(request.clone());
                send.send_response(respond(answer, &request, &watches, &problems));
            }
        });
        let builder = ClientBuilder::new(svc, "default");
        let client = match health {
            Some(health) => builder.with_layer(&WatchProbeLayer::new(health)).build(),
            None => builder.build(),
        };
        (client, verifier)
    }

    /// Ends every open watch, as an API server going away does.
    pub fn end_watches(&self) {
        self.watches.lock().unwrap().clear();
    }

    /// Sends one watch event line to every open watch.
    pub fn push_watch(&self, event: &Value) {
        let line = Bytes::from(format!("{event}\n"));
        self.watches
            .lock()
            .unwrap()
            .retain(|tx| tx.unbounded_send(Ok(Frame::data(line.clone()))).is_ok());
    }

    /// Every request so far, in order.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    /// The requests of `method` whose path contains `path_part`.
    pub fn matching(&self, method: &str, path_part: &str) -> Vec<Seen> {
        self.seen()
            .into_iter()
            .filter(|s| s.method == method && s.path.contains(path_part))
            .collect()
    }

    /// The list requests of Microservices (not watches), in order.
    pub fn lists(&self) -> Vec<Seen> {
        self.matching("GET", "/microservices")
            .into_iter()
            .filter(|s| !s.is_watch())
            .collect()
    }

    /// The watch requests of Microservices, in order.
    pub fn watches(&self) -> Vec<Seen> {
        self.matching("GET", "/microservices")
            .into_iter()
            .filter(Seen::is_watch)
            .collect()
    }

    /// Waits until `n` requests match, or fails after [`WAIT_LIMIT`].
    pub async fn wait_for(&self, method: &str, path_part: &str, n: usize) -> Vec<Seen> {
        let wait = async {
            loop {
                let found = self.matching(method, path_part);
                if found.len() >= n {
                    return found;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        };
        match tokio::time::timeout(WAIT_LIMIT, wait).await {
            Ok(found) => found,
            Err(_) => panic!("expected {n} × {method} …{path_part}…; saw {:#?}", self.seen()),
        }
    }
}

impl Drop for ApiServerVerifier {
    fn drop(&mut self) {
        let problems = self.problems.lock().unwrap();
        if !problems.is_empty() && !std::thread::panicking() {
            panic!("the fake API server got requests its scenario does not expect: {problems:#?}");
        }
    }
}

/// Polls `check` every 10 ms for up to [`WAIT_LIMIT`].
pub(super) async fn until(what: &str, check: impl Fn() -> bool) {
    let wait = async {
        while !check() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    if tokio::time::timeout(WAIT_LIMIT, wait).await.is_err() {
        panic!("timed out waiting for: {what}");
    }
}

async fn read_request(request: Request<Body>) -> Seen {
    let (parts, body) = request.into_parts();
    let bytes = body.collect_bytes().await.unwrap();
    let query = parts
        .uri
        .query()
        .map(|q| {
            q.split('&')
                .filter(|kv| !kv.is_empty())
                .map(|kv| {
                    let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
                    (k.to_string(), v.to_string())
                })
                .collect()
        })
        .unwrap_or_default();
    Seen {
        method: parts.method.to_string(),
        path: parts.uri.path().to_string(),
        query,
        content_type: parts
            .headers
            .get(http::header::CONTENT_TYPE)
            .map(|v| v.to_str().unwrap().to_string())
            .unwrap_or_default(),
        body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        at: tokio::time::Instant::now(),
    }
}

/// The response for `answer`; an unexpected request is recorded and answered with the real
/// `404` of a missing object.
fn respond(
    answer: Answer,
    seen: &Seen,
    watches: &Mutex<Vec<WatchSender>>,
    problems: &Mutex<Vec<String>>,
) -> Response<Box<DynBody>> {
    let (code, body): (u16, Box<DynBody>) = match answer {
        Answer::Body(code, body) => (code, full(body)),
        Answer::Open => {
            let (tx, rx) = mpsc::unbounded();
            watches.lock().unwrap().push(tx);
            (200, Box::new(StreamBody::new(rx)))
        }
        Answer::Unexpected(why) => {
            problems
                .lock()
                .unwrap()
                .push(format!("{} {}: {why}", seen.method, seen.path));
            (404, full(real_body("404-microservice-not-found.txt")))
        }
    };
    Response::builder()
        .status(code)
        .header("content-type", "application/json")
        .body(body)
        .unwrap()
}

fn full(body: String) -> Box<DynBody> {
    Box::new(Full::new(Bytes::from(body)).map_err(BoxError::from))
}

impl Scenario {
    fn answer(&self, seen: &Seen, lists_answered: &AtomicUsize) -> Answer {
        match self {
            Scenario::Passes(writes) => writes.answer(seen),
            Scenario::Controller { lists, outage } => outage
                .as_ref()
                .and_then(|o| o.answers(seen))
                .unwrap_or_else(|| controller_answer(lists, seen, lists_answered)),
            Scenario::Election { lease, lists, outage } => {
                if let Some(answer) = outage.as_ref().and_then(|o| o.answers(seen)) {
                    return answer;
                }
                if seen.path.starts_with(FakeLease::PATH) {
                    return lease.lock().unwrap().answer(seen);
                }
                if lists.is_empty() {
                    return Answer::Unexpected("only the Lease is served".into());
                }
                controller_answer(lists, seen, lists_answered)
            }
        }
    }
}

/// The controller's list and watches of namespace `todo`, and stored writes.
fn controller_answer(lists: &[String], seen: &Seen, lists_answered: &AtomicUsize) -> Answer {
    if seen.method != "GET" {
        return Writes::Stored.answer(seen);
    }
    if seen.path != MICROSERVICES {
        return Answer::Unexpected(format!("the controller reads only {MICROSERVICES}"));
    }
    if seen.is_watch() {
        return Answer::Open;
    }
    let n = lists_answered.fetch_add(1, Ordering::SeqCst);
    match lists.get(n).or(lists.last()) {
        Some(list) => Answer::Body(200, list.clone()),
        None => Answer::Unexpected("no list in this scenario".into()),
    }
}

impl Writes {
    fn answer(&self, seen: &Seen) -> Answer {
        match (seen.method.as_str(), seen.path.as_str()) {
            ("PATCH", p) if p.ends_with("/status") => match check_status_apply(seen) {
                Err(why) => Answer::Unexpected(why),
                Ok(()) => match self {
                    Writes::StatusRefused(code, body) => Answer::Body(*code, body.clone()),
                    Writes::StatusPruned => {
                        let mut stored: Value = serde_json::from_str(&echo_status(seen)).unwrap();
                        stored["status"] = json!({"phase": seen.body["status"]["phase"]});
                        Answer::Body(200, stored.to_string())
                    }
                    _ => Answer::Body(200, echo_status(seen)),
                },
            },
            ("POST", p) if p.ends_with("/events") => match check_event(seen) {
                Err(why) => Answer::Unexpected(why),
                Ok(()) => match self {
                    Writes::EventsRefused(code, body) => Answer::Body(*code, body.clone()),
                    Writes::NormalEventsHang if seen.body["type"] == "Normal" => Answer::Open,
                    _ => Answer::Body(201, seen.body.to_string()),
                },
            },
            ("PATCH", p) if p.contains("/events/") => {
                if seen.content_type != "application/merge-patch+json" {
                    return Answer::Unexpected(format!("an event series patch as {}", seen.content_type));
                }
                Answer::Body(200, seen.body.to_string())
            }
            _ => Answer::Unexpected("not a status apply or an event write".into()),
        }
    }
}

/// A server-side apply of a Microservice's status by our field manager, as `reconcile` sends it.
fn check_status_apply(seen: &Seen) -> Result<(), String> {
    let path_ok = seen
        .path
        .strip_prefix("/apis/platform.example.io/v1alpha1/namespaces/")
        .is_some_and(|rest| rest.split('/').collect::<Vec<_>>().len() == 4 && rest.contains("/microservices/"));
    let ok = path_ok
        && seen.content_type == "application/apply-patch+yaml"
        && seen.query.get("fieldManager").map(String::as_str) == Some(FIELD_MANAGER)
        && seen.query.get("force").map(String::as_str) == Some("true")
        && seen.body["apiVersion"] == "platform.example.io/v1alpha1"
        && seen.body["kind"] == "Microservice"
        && seen.body["status"].is_object();
    if ok {
        Ok(())
    } else {
        Err(format!(
            "not our status apply: {:?} {:?} {}",
            seen.content_type, seen.query, seen.body
        ))
    }
}

/// An events.k8s.io/v1 Event about an object, in the namespace of the path.
fn check_event(seen: &Seen) -> Result<(), String> {
    let ok = seen.path.starts_with("/apis/events.k8s.io/v1/namespaces/")
        && seen.body["regarding"].is_object()
        && seen.body["reason"].is_string()
        && seen.body["reportingController"].is_string();
    if ok {
        Ok(())
    } else {
        Err(format!("not an events.k8s.io/v1 Event: {}", seen.body))
    }
}

/// Echoes an applied status back as the stored object, as the API server does.
pub(super) fn echo_status(seen: &Seen) -> String {
    let name = seen.path.rsplit('/').nth(1).unwrap();
    json!({
        "apiVersion": "platform.example.io/v1alpha1", "kind": "Microservice",
        "metadata": {"name": name, "namespace": "todo", "uid": format!("uid-{name}"), "generation": 1, "resourceVersion": "101"},
        "spec": {}, "status": seen.body["status"]
    })
    .to_string()
}

/// A Lease held in the fake API server, with optimistic concurrency on PUT.
#[derive(Default)]
pub(super) struct FakeLease {
    pub lease: Option<Value>,
    version: u64,
}

impl FakeLease {
    pub const PATH: &'static str = "/apis/coordination.k8s.io/v1/namespaces/ops/leases";

    /// A shared Lease, for [`Scenario::Election`].
    pub fn shared() -> Arc<Mutex<FakeLease>> {
        Arc::default()
    }

    fn answer(&mut self, seen: &Seen) -> Answer {
        let not_found = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": "leases.coordination.k8s.io \"microservice-operator\" not found", "reason": "NotFound", "details": {"name": "microservice-operator", "group": "coordination.k8s.io", "kind": "leases"}, "code": 404});
        let conflict = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": "Operation cannot be fulfilled on leases.coordination.k8s.io \"microservice-operator\": the object has been modified; please apply your changes to the latest version and try again", "reason": "Conflict", "details": {"name": "microservice-operator", "group": "coordination.k8s.io", "kind": "leases"}, "code": 409});
        let one = format!("{}/microservice-operator", Self::PATH);
        match (seen.method.as_str(), seen.path.as_str()) {
            ("GET", p) if p == one => match &self.lease {
                Some(lease) => Answer::Body(200, lease.to_string()),
                None => Answer::Body(404, not_found.to_string()),
            },
            ("POST", Self::PATH) if Self::ours(seen) => {
                self.store(seen.body.clone());
                Answer::Body(201, self.lease.as_ref().unwrap().to_string())
            }
            ("PUT", p) if p == one && Self::ours(seen) => {
                if seen.body["metadata"]["resourceVersion"].as_str() != Some(self.version.to_string().as_str()) {
                    return Answer::Body(409, conflict.to_string());
                }
                self.store(seen.body.clone());
                Answer::Body(200, self.lease.as_ref().unwrap().to_string())
            }
            _ => Answer::Unexpected("not a read or a write of ops/microservice-operator by us".into()),
        }
    }

    /// A Lease write by our field manager.
    fn ours(seen: &Seen) -> bool {
        seen.query.get("fieldManager").map(String::as_str) == Some(FIELD_MANAGER)
            && seen.body["kind"] == "Lease"
            && seen.body["spec"].is_object()
    }

    pub fn store(&mut self, mut lease: Value) {
        self.version += 1;
        lease["metadata"]["resourceVersion"] = json!(self.version.to_string());
        self.lease = Some(lease);
    }

    /// Another replica writes the Lease.
    pub fn set_holder(&mut self, holder: Option<&str>) {
        let mut lease = self.lease.clone().expect("the lease exists");
        lease["spec"]["holderIdentity"] = json!(holder);
        lease["spec"]["renewTime"] = json!("2030-01-01T00:00:00.000000Z");
        self.store(lease);
    }

    pub fn holder(&self) -> Option<String> {
        self.lease.as_ref()?["spec"]["holderIdentity"]
            .as_str()
            .map(str::to_string)
    }
}

#[tokio::test]
#[should_panic(expected = "its scenario does not expect")]
async fn a_request_the_scenario_does_not_expect_fails_the_test() {
    let (client, verifier) = ApiServerVerifier::start(Scenario::Passes(Writes::Stored), None);
    let leases: kube::Api<k8s_openapi::api::coordination::v1::Lease> = kube::Api::namespaced(client, "ops");
    let answer = leases.get("microservice-operator").await;
    assert!(matches!(answer, Err(kube::Error::Api(status)) if status.code == 404));
    assert_eq!(verifier.seen().len(), 1);
}
