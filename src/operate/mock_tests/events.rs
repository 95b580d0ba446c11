//! The event queues off the reconcile path: failed posts, tries, a saturated Normal queue, and
//! series.

use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::json;

use super::verifier::{Scenario, Seen, Writes, unavailable};
use super::*;
use crate::operate::events;
use crate::operate::reconcile::reconcile;
use crate::vocab::cause::Cause;

#[tokio::test]
async fn forbidden_event_post_is_logged_counted_and_not_retried() {
    let refused = Writes::EventsRefused(403, real_body("403-post-events.k8s.io-forbidden.txt"));
    let h = Harness::new(Scenario::Passes(refused), EventsPolicy::All);
    reconcile(cached(todo_api(1, 8080, None)), h.ctx.clone()).await.unwrap();
    h.api.wait_for("POST", "/events", 1).await;
    for _ in 0..100 {
        if h.ctx.events.stats().failed(403) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(h.ctx.events.stats().failed(403), 1);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(h.api.matching("POST", "/events").len(), 1, "a 403 is not retried");
    let warn = lines_with(&h.logs, "Failed to post an event:");
    assert_eq!(warn.len(), 1, "{}", h.logs.text());
    assert!(warn[0].contains(" WARN [todo/todo-api] Failed to post an event: code=403 reason=Accepted error=\"events.events.k8s.io is forbidden: User \\\"system:serviceaccount:todo:microservice-operator\\\" cannot create resource \\\"events\\\" in API group \\\"events.k8s.io\\\" in the namespace \\\"todo\\\"\" handler=accept cause=create"), "{}", warn[0]);
    // The handler itself succeeded.
    assert!(h.logs.text().contains("Creation is processed: 1 succeeded; 0 failed."));
}

#[tokio::test]
async fn server_errors_on_event_post_get_three_tries() {
    let h = Harness::new(
        Scenario::Passes(Writes::EventsRefused(503, unavailable())),
        EventsPolicy::All,
    );
    reconcile(cached(todo_api(1, 8080, None)), h.ctx.clone()).await.unwrap();
    h.api.wait_for("POST", "/events", 3).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(h.api.matching("POST", "/events").len(), 3);
    assert_eq!(h.ctx.events.stats().failed(503), 1);
}

/// A Normal event about object `name` (as the handler queues for a create).
fn accepted_event(name: &str) -> events::EventRequest {
    events::EventRequest {
        regarding: k8s_openapi::api::core::v1::ObjectReference {
            api_version: Some("platform.example.io/v1alpha1".into()),
            kind: Some("Microservice".into()),
            namespace: Some("todo".into()),
            name: Some(name.into()),
            uid: Some(format!("uid-{name}")),
            ..Default::default()
        },
        type_: events::EventType::Normal,
        reason: "Accepted",
        note: format!("Accepted image nginx:1.27 port 80 (generation 1, cause create) for {name}"),
        action: "Accept",
        handler: "accept",
        cause: Cause::Create,
    }
}

/// Issue 13, acceptance 5: with every Normal POST hanging at the API and the Normal queue full,
/// a Warning still goes out at once; Normals in flight stay bounded; the Normals that did not
/// fit are counted by type and reason and reported in one summary line, not one line each.
#[tokio::test]
async fn a_warning_is_delivered_while_the_normal_queue_is_saturated() {
    // No answer ever (a 200 whose body never ends): the request hangs.
    let h = Harness::new(Scenario::Passes(Writes::NormalEventsHang), EventsPolicy::All);
    let sink = &h.ctx.events;
    let mut next = 0..;
    let mut post_normals = |n: usize| {
        for i in next.by_ref().take(n) {
            sink.post(accepted_event(&format!("svc-{i:05}")));
        }
    };
    post_normals(events::NORMAL_IN_FLIGHT);
    h.api.wait_for("POST", "/events", events::NORMAL_IN_FLIGHT).await;
    post_normals(events::NORMAL_QUEUE_CAPACITY + 25);
    let stats = sink.stats().clone();
    assert_eq!(
        stats.shed(events::EventType::Normal, "Accepted"),
        25,
        "the queue holds its capacity, no more"
    );

    let bad = object("bad-port", 1, json!({"image": "nginx:1.27", "port": "eighty"}), None);
    reconcile(cached(bad), h.ctx.clone()).await.unwrap();
    until("the Warning is stored", || stats.posted.load(Ordering::Relaxed) == 1).await;
    let posts = h.api.matching("POST", "/events");
    let warnings: Vec<&Seen> = posts.iter().filter(|s| s.body["type"] == "Warning").collect();
    assert_eq!(warnings.len(), 1, "{posts:#?}");
    assert_eq!(warnings[0].body["reason"], "InvalidSpec");
    assert_eq!(warnings[0].body["regarding"]["name"], "bad-port");
    assert_eq!(
        posts.len() - 1,
        events::NORMAL_IN_FLIGHT,
        "Normals in flight are bounded while the API hangs"
    );
    assert_eq!(stats.shed(events::EventType::Warning, "InvalidSpec"), 0);
    the_shed_normals_are_summed_up_in_one_line(&h).await;
}

/// The shed summary: one line per interval with news, and the metric by type and reason.
async fn the_shed_normals_are_summed_up_in_one_line(h: &Harness) {
    until("the shed summary line", || {
        !lines_with(&h.logs, "Events shed").is_empty()
    })
    .await;
    tokio::time::sleep(Duration::from_millis(450)).await;
    let summary = lines_with(&h.logs, "Events shed");
    assert_eq!(
        summary.len(),
        1,
        "one line per interval with news, not one per event: {summary:#?}"
    );
    assert!(
        summary[0].contains(
            " WARN Events shed: the event queue was full normal=25 warning=0 by_reason=\"Normal/Accepted=25\" interval=0.2s"
        ),
        "{}",
        summary[0]
    );
    assert!(
        lines_with(&h.logs, "Failed to post an event").is_empty(),
        "{}",
        h.logs.text()
    );
    let metrics = h.ctx.metrics.encode();
    assert!(
        metrics
            .lines()
            .any(|l| l == "microservice_operator_events_shed_total{type=\"Normal\",reason=\"Accepted\"} 25"),
        "{metrics}"
    );
}

/// Two posts of the same event at once are one event and its series (count 2), not two
/// events: posts of one key run one after the other, other keys alongside.
#[tokio::test]
async fn the_same_event_posted_twice_at_once_becomes_a_series() {
    let h = Harness::new(Scenario::Passes(Writes::Stored), EventsPolicy::All);
    h.ctx.events.post(accepted_event("todo-api"));
    h.ctx.events.post(accepted_event("todo-api"));
    h.ctx.events.post(accepted_event("other-api"));
    let stats = h.ctx.events.stats().clone();
    until("three events stored", || stats.posted.load(Ordering::Relaxed) == 3).await;
    let created = h.api.matching("POST", "/events");
    assert_eq!(created.len(), 2, "{created:#?}");
    let series = h.api.matching("PATCH", "/events/");
    assert_eq!(series.len(), 1);
    assert_eq!(series[0].body["series"]["count"], 2);
    let todo = created
        .iter()
        .find(|s| s.body["regarding"]["name"] == "todo-api")
        .unwrap();
    assert!(
        series[0]
            .path
            .ends_with(todo.body["metadata"]["name"].as_str().unwrap())
    );
}
