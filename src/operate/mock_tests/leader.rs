//! Leadership: terms follow the Lease (loss stops handling, a new term resumes every object),
//! takeover of an abandoned Lease, stepping down at the renew deadline, and a pass in flight
//! when its term ends.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kube::runtime::controller::Action;
use serde_json::json;
use tokio::sync::{oneshot, watch};

use super::verifier::{ApiServerVerifier, FakeLease, Outage, Scenario, Writes, unavailable};
use super::*;
use crate::operate::leader::{ElectionConfig, Elector};
use crate::operate::reconcile::reconcile;
use crate::resource::FIELD_MANAGER;
use crate::vocab::cause::Cause;
use crate::vocab::handler::RunOutcome;

/// Acceptance 3 of issue 6, lease-loss path: the leader handles; when another replica takes the
/// Lease it stops handling at once (a new object is not touched); when the Lease comes back, a new
/// term starts: every object is resumed once, without writes for unchanged ones, and the object
/// that arrived meanwhile is created. On release, the Lease is freed.
#[tokio::test]
async fn lease_loss_stops_handling_and_a_new_term_resumes_every_object() {
    let lease = FakeLease::shared();
    let scenario = Scenario::Election {
        lease: lease.clone(),
        lists: one_object_list(),
        outage: None,
    };
    let h = Harness::new(scenario, EventsPolicy::All);
    h.ctx.end_term();
    let config = ElectionConfig {
        lease_duration: Duration::from_secs(2),
        renew_deadline: Duration::from_secs(1),
        retry_period: Duration::from_millis(50),
        ..ElectionConfig::new("ops", "microservice-operator", "pod-a_1")
    };
    let (elector, roles) = Elector::new(h.ctx.client.clone(), config);
    let (release, released) = oneshot::channel();
    let elector = tokio::spawn(elector.run(released));
    let (terms, term_starts) = watch::channel(0);
    tokio::spawn(crate::operate::follow_leadership(roles, h.ctx.clone(), terms));
    let controller = h.run_controller(term_starts);

    term_1_creates_the_lease_and_handles(&h, &lease).await;
    another_holder_stops_handling_at_once(&h, &lease).await;
    term_2_resumes_a_and_creates_b(&h, &lease).await;

    // Shutdown: the Lease is released.
    release.send(()).unwrap();
    elector.await.unwrap();
    controller.abort();
    assert_eq!(lease.lock().unwrap().holder(), None);
    let released = lease.lock().unwrap().lease.clone().unwrap();
    assert_eq!(released["spec"]["leaseDurationSeconds"], 1);
    assert_eq!(
        released["spec"]["leaseTransitions"], 1,
        "created with 0; one acquisition since"
    );
    assert!(h.ctx.startable_term().is_none());
}

/// Term 1: the Lease is created with us as holder; a is created.
async fn term_1_creates_the_lease_and_handles(h: &Harness, lease: &Mutex<FakeLease>) {
    until("a handled in term 1", || status_patches(&h.api, "a").len() == 1).await;
    assert_eq!(lease.lock().unwrap().holder().as_deref(), Some("pod-a_1"));
    let created = h.api.matching("POST", "/leases");
    assert_eq!(created[0].body["spec"]["leaseDurationSeconds"], 2);
    assert!(h.ctx.metrics.encode().contains("microservice_operator_leader 1"));
    let applied = status_patches(&h.api, "a")[0].body["status"].clone();
    h.api.push_watch(
        &json!({"type": "MODIFIED", "object": microservice_json("a", 1, json!(8080), "501", Some(applied))}),
    );
    until("renewals", || {
        h.api.matching("PUT", "/leases/microservice-operator").len() >= 2
    })
    .await;
    // Every Lease write names our field manager, so its managedFields say who wrote it.
    for write in created
        .iter()
        .chain(&h.api.matching("PUT", "/leases/microservice-operator"))
    {
        assert_eq!(
            write.query.get("fieldManager").map(String::as_str),
            Some(FIELD_MANAGER),
            "{}",
            write.path
        );
    }
}

/// Another replica takes the Lease: handling stops at once.
async fn another_holder_stops_handling_at_once(h: &Harness, lease: &Mutex<FakeLease>) {
    lease.lock().unwrap().set_holder(Some("pod-b_2"));
    until("term 1 ended", || h.ctx.startable_term().is_none()).await;
    let lost = lines_with(&h.logs, "Lost the lease: handling stops");
    assert_eq!(lost.len(), 1, "{}", h.logs.text());
    assert!(
        lost[0].contains("reason=\"the lease is held by pod-b_2\""),
        "{}",
        lost[0]
    );
    assert!(h.ctx.metrics.encode().contains("microservice_operator_leader 0"));
    h.api
        .push_watch(&json!({"type": "ADDED", "object": microservice_json("b", 1, json!(8080), "502", None)}));
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(status_patches(&h.api, "b").is_empty(), "a standby writes nothing");
    assert!(lines_with(&h.logs, "[todo/b]").is_empty(), "a standby does not handle");
}

/// The other replica releases: term 2 starts; a is resumed without a write, b is created.
async fn term_2_resumes_a_and_creates_b(h: &Harness, lease: &Mutex<FakeLease>) {
    lease.lock().unwrap().set_holder(None);
    until("b handled in term 2", || status_patches(&h.api, "b").len() == 1).await;
    until("a resumed", || {
        !lines_with(&h.logs, "[todo/a] Resuming is processed").is_empty()
    })
    .await;
    assert_eq!(h.ctx.startable_term(), Some(2));
    assert_eq!(lines_with(&h.logs, "Became the leader: acquired the lease").len(), 2);
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(
        status_patches(&h.api, "a").len(),
        1,
        "a resume of an unchanged object writes nothing"
    );
    assert_eq!(lines_with(&h.logs, "[todo/a] Accepted").len(), 2, "once per term");
    assert_eq!(h.ctx.metrics.runs("accept", Cause::Resume, RunOutcome::Succeeded), 1);
    assert_eq!(h.ctx.metrics.runs("accept", Cause::Create, RunOutcome::Succeeded), 2);
    let events = h.api.matching("POST", "/events");
    assert_eq!(events.len(), 2, "Accepted for a and b, none for the resume");
}

/// A standby whose leader vanished (kill -9: the Lease is never renewed again) takes over once
/// the Lease's duration passed on its own clock, not before.
#[tokio::test]
async fn an_abandoned_lease_is_taken_after_its_duration() {
    let lease = FakeLease::shared();
    lease.lock().unwrap().store(json!({
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "microservice-operator", "namespace": "ops"},
        "spec": {"holderIdentity": "pod-a_1", "leaseDurationSeconds": 1, "renewTime": "2030-01-01T00:00:00.000000Z", "leaseTransitions": 4}
    }));
    let scenario = Scenario::Election {
        lease: lease.clone(),
        lists: vec![],
        outage: None,
    };
    let (client, api) = ApiServerVerifier::start(scenario, None);
    let (logs, _guard) = capture(LogFormat::Text);
    let config = ElectionConfig {
        retry_period: Duration::from_millis(50),
        renew_deadline: Duration::from_millis(500),
        ..ElectionConfig::new("ops", "microservice-operator", "pod-b_2")
    };
    let (elector, mut roles) = Elector::new(client, config);
    let (_release, released) = oneshot::channel::<()>();
    let started = tokio::time::Instant::now();
    let task = tokio::spawn(elector.run(released));
    roles.wait_for(|r| r.term() == Some(1)).await.unwrap();
    let waited = started.elapsed();
    task.abort();
    assert!(waited >= Duration::from_secs(1), "took over after {waited:?}");
    assert!(waited < Duration::from_secs(3), "took over after {waited:?}");
    assert_eq!(lease.lock().unwrap().holder().as_deref(), Some("pod-b_2"));
    let put = api.matching("PUT", "/leases/microservice-operator");
    assert_eq!(put[0].body["spec"]["leaseTransitions"], 5);
    assert_eq!(
        put[0].body["metadata"]["resourceVersion"], "1",
        "the write is conditional"
    );
    assert_eq!(
        lines_with(&logs, "Standing by: the lease is held by another replica").len(),
        1
    );
}

/// A leader cut off from the API server steps down at the renew deadline, before any standby may
/// take over (lease duration).
#[tokio::test]
async fn a_leader_that_cannot_renew_steps_down_at_the_renew_deadline() {
    let down = Arc::new(AtomicBool::new(false));
    let scenario = Scenario::Election {
        lease: FakeLease::shared(),
        lists: vec![],
        outage: Outage::new(&down, None, 503, unavailable()),
    };
    let (client, _api) = ApiServerVerifier::start(scenario, None);
    let (logs, _guard) = capture(LogFormat::Text);
    let config = ElectionConfig {
        retry_period: Duration::from_millis(50),
        renew_deadline: Duration::from_millis(400),
        lease_duration: Duration::from_secs(2),
        ..ElectionConfig::new("ops", "microservice-operator", "pod-a_1")
    };
    let (elector, mut roles) = Elector::new(client, config);
    let (_release, released) = oneshot::channel::<()>();
    let task = tokio::spawn(elector.run(released));
    roles.wait_for(|r| r.term() == Some(1)).await.unwrap();
    down.store(true, Ordering::SeqCst);
    let cut = tokio::time::Instant::now();
    roles.wait_for(|r| r.term().is_none()).await.unwrap();
    let after = cut.elapsed();
    assert!(
        after < Duration::from_millis(1500),
        "stepped down after {after:?}: must be before the lease (2 s) could expire for a standby"
    );
    let lost = lines_with(&logs, "Lost the lease: handling stops");
    assert!(
        lost[0].contains("no renewal succeeded within the renew deadline"),
        "{}",
        lost[0]
    );
    assert_eq!(
        lines_with(&logs, "the lease request failed").len(),
        1,
        "a repeated failure is logged once"
    );
    // The API server comes back: the lease still names us, so we take it again in a new term.
    down.store(false, Ordering::SeqCst);
    roles.wait_for(|r| r.term() == Some(2)).await.unwrap();
    task.abort();
}

/// On losing the lease a pass in flight is cancelled before its next write; on SIGTERM (stop
/// taking work) a pass in flight still writes, and no new pass starts.
#[tokio::test]
async fn a_pass_in_flight_is_cancelled_before_its_write_when_the_lease_is_lost() {
    let h = Harness::new(Scenario::Passes(Writes::Stored), EventsPolicy::All);
    let held = h.ctx.writes.acquire_many(4).await.unwrap();
    let pass = tokio::spawn(reconcile(cached(todo_api(1, 8080, None)), h.ctx.clone()));
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!pass.is_finished(), "the pass waits for a write slot");
    h.ctx.end_term();
    drop(held);
    assert_eq!(pass.await.unwrap().unwrap(), Action::await_change());
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(h.api.seen().is_empty(), "nothing written: {:#?}", h.api.seen());
    assert_eq!(h.ctx.handled_generation("uid-todo-api"), None);
    assert_eq!(
        lines_with(
            &h.logs,
            "Handler 'accept' cancelled: the lease was lost before its next write"
        )
        .len(),
        1
    );
    assert!(lines_with(&h.logs, "is processed").is_empty());
    assert_eq!(h.ctx.metrics.runs("accept", Cause::Create, RunOutcome::Cancelled), 1);

    // SIGTERM in a term: the pass in flight finishes its writes; a new pass does nothing.
    h.ctx.begin_term(2);
    let held = h.ctx.writes.acquire_many(4).await.unwrap();
    let pass = tokio::spawn(reconcile(cached(todo_api(1, 8080, None)), h.ctx.clone()));
    tokio::time::sleep(Duration::from_millis(50)).await;
    h.ctx.stop_taking_work();
    drop(held);
    pass.await.unwrap().unwrap();
    h.api.wait_for("PATCH", "/status", 1).await;
    h.api.wait_for("POST", "/events", 1).await;
    reconcile(
        cached(object("other", 1, json!({"image": "nginx:1.27", "port": 80}), None)),
        h.ctx.clone(),
    )
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(h.api.seen().len(), 2, "no pass starts after SIGTERM");
}

/// A term that starts while the watch is failing (the API server restarting) re-queues every
/// cached object at once, and so does a term that starts before the initial list is done: both
/// once failed (kube-runtime's `Store::wait_until_ready` wakes only its last waiter; the
/// controller's trigger backoff held the term trigger behind the failing watch).
#[tokio::test]
async fn a_new_term_requeues_every_object_even_while_the_watch_fails() {
    let broken = Arc::new(AtomicBool::new(false));
    let scenario = Scenario::Controller {
        lists: one_object_list(),
        outage: Outage::new(&broken, Some("GET"), 503, unavailable()),
    };
    let h = Harness::new(scenario, EventsPolicy::All);
    h.ctx.end_term();
    let (terms, term_starts) = watch::channel(0);
    let handle = h.run_controller(term_starts);
    // Term 1 begins before the initial list is done.
    h.ctx.begin_term(1);
    terms.send(1).unwrap();
    until("a handled in term 1", || status_patches(&h.api, "a").len() == 1).await;
    let applied = status_patches(&h.api, "a")[0].body["status"].clone();
    h.api.push_watch(
        &json!({"type": "MODIFIED", "object": microservice_json("a", 1, json!(8080), "501", Some(applied))}),
    );
    tokio::time::sleep(Duration::from_millis(50)).await;
    // The API server goes away: the watch ends and cannot be restarted.
    h.ctx.end_term();
    broken.store(true, Ordering::SeqCst);
    h.api.end_watches();
    until("the watch failing", || {
        !lines_with(&h.logs, "Watching microservices failed; retrying with backoff").is_empty()
    })
    .await;
    let started = tokio::time::Instant::now();
    h.ctx.begin_term(2);
    terms.send(2).unwrap();
    until("a resumed in term 2", || {
        !lines_with(&h.logs, "[todo/a] Resuming is processed: 1 succeeded; 0 failed.").is_empty()
    })
    .await;
    assert!(
        started.elapsed() < Duration::from_millis(500),
        "resumed after {:?}",
        started.elapsed()
    );
    handle.abort();
    assert_eq!(status_patches(&h.api, "a").len(), 1, "the resume wrote nothing");
}
