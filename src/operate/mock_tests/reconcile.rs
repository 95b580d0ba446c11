//! Handler passes over one object: the status apply, the event, the lifecycle lines, and how a
//! refused write is retried or not.

use std::time::Duration;

use kube::runtime::controller::Action;
use serde_json::json;

use super::verifier::{Scenario, Writes};
use super::*;
use crate::operate::reconcile::{error_policy, reconcile};

/// The cluster where every write lands.
fn writes_land() -> Scenario {
    Scenario::Passes(Writes::Stored)
}

#[tokio::test]
async fn create_applies_status_and_posts_one_normal_event() {
    let h = Harness::new(writes_land(), EventsPolicy::All);
    let action = reconcile(cached(todo_api(1, 8080, None)), h.ctx.clone()).await.unwrap();
    assert_eq!(action, Action::await_change());

    let patches = h.api.wait_for("PATCH", "/status", 1).await;
    let patch = &patches[0];
    assert_eq!(
        patch.path,
        "/apis/platform.example.io/v1alpha1/namespaces/todo/microservices/todo-api/status"
    );
    assert_eq!(
        patch.query.get("fieldManager").map(String::as_str),
        Some("kubectl-microservice")
    );
    assert_eq!(patch.query.get("force").map(String::as_str), Some("true"));
    assert_eq!(patch.content_type, "application/apply-patch+yaml");
    assert_eq!(patch.body["apiVersion"], "platform.example.io/v1alpha1");
    assert_eq!(patch.body["kind"], "Microservice");
    assert_eq!(patch.body["status"]["phase"], "Accepted");
    assert_eq!(patch.body["status"]["observedGeneration"], 1);
    assert_eq!(patch.body["status"]["conditions"][0]["type"], "Accepted");
    assert_eq!(patch.body["status"]["conditions"][0]["observedGeneration"], 1);

    let events = h.api.wait_for("POST", "/events", 1).await;
    let event = &events[0];
    assert_eq!(event.path, "/apis/events.k8s.io/v1/namespaces/todo/events");
    assert_eq!(event.body["type"], "Normal");
    assert_eq!(event.body["reason"], "Accepted");
    assert_eq!(event.body["action"], "Accept");
    assert_eq!(event.body["reportingController"], "kubectl-microservice");
    assert_eq!(event.body["reportingInstance"], "test-pod");
    assert_eq!(event.body["regarding"]["uid"], "uid-todo-api");
    assert_eq!(event.body["regarding"]["kind"], "Microservice");
    assert!(event.body["eventTime"].is_string());

    let log = h.logs.text();
    assert!(log.contains(" INFO [todo/todo-api] Accepted todo/todo-api: image=ghcr.io/yrw9281/it30-todo-api:0.1.0 port=8080 handler=accept cause=create"), "{log}");
    assert!(
        log.contains("[todo/todo-api] Handler 'accept' succeeded. handler=accept cause=create"),
        "{log}"
    );
    assert!(
        log.contains("[todo/todo-api] Creation is processed: 1 succeeded; 0 failed. handler=accept cause=create"),
        "{log}"
    );
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(h.api.seen().len(), 2, "exactly one status write and one event");
}

#[tokio::test]
async fn spec_update_runs_again_and_label_change_does_not() {
    let h = Harness::new(writes_land(), EventsPolicy::All);
    reconcile(cached(todo_api(1, 8080, None)), h.ctx.clone()).await.unwrap();
    h.api.wait_for("POST", "/events", 1).await;
    let accepted_v1 = json!({"phase": "Accepted", "observedGeneration": 1});

    // Our own status write comes back through the watch: nothing happens.
    reconcile(cached(todo_api(1, 8080, Some(accepted_v1.clone()))), h.ctx.clone())
        .await
        .unwrap();
    // A label-only change keeps the generation: nothing happens.
    let mut labelled = todo_api(1, 8080, Some(accepted_v1.clone()));
    labelled.metadata.labels = Some([("tier".to_string(), "web".to_string())].into());
    reconcile(cached(labelled), h.ctx.clone()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(h.api.seen().len(), 2);
    assert_eq!(lines_with(&h.logs, "Accepted todo/todo-api").len(), 1);

    // Port 9090: generation 2, cause update.
    reconcile(cached(todo_api(2, 9090, Some(accepted_v1))), h.ctx.clone())
        .await
        .unwrap();
    let patches = h.api.wait_for("PATCH", "/status", 2).await;
    assert_eq!(patches[1].body["status"]["observedGeneration"], 2);
    let events = h.api.wait_for("POST", "/events", 2).await;
    assert!(events[1].body["note"].as_str().unwrap().contains("port 9090"));
    let log = h.logs.text();
    assert!(
        log.contains(
            "Accepted todo/todo-api: image=ghcr.io/yrw9281/it30-todo-api:0.1.0 port=9090 handler=accept cause=update"
        ),
        "{log}"
    );
    assert!(
        log.contains("Updating is processed: 1 succeeded; 0 failed. handler=accept cause=update"),
        "{log}"
    );
}

#[tokio::test]
async fn restart_resumes_without_writing() {
    // A fresh process (fresh context) sees an object it handled before.
    let h = Harness::new(writes_land(), EventsPolicy::All);
    let handled = crate::operate::status::desired_status(
        &crate::operate::status::Outcome::Accepted(crate::operate::validate::ValidSpec {
            image: "ghcr.io/yrw9281/it30-todo-api:0.1.0".into(),
            port: 8080,
        }),
        3,
        None,
        chrono::Utc::now(),
    );
    reconcile(cached(todo_api(3, 8080, Some(handled))), h.ctx.clone())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(
        h.api.seen().is_empty(),
        "a resume of an unchanged object writes nothing: {:#?}",
        h.api.seen()
    );
    let log = h.logs.text();
    assert!(
        log.contains(
            "Accepted todo/todo-api: image=ghcr.io/yrw9281/it30-todo-api:0.1.0 port=8080 handler=accept cause=resume"
        ),
        "{log}"
    );
    assert!(
        log.contains("Resuming is processed: 1 succeeded; 0 failed. handler=accept cause=resume"),
        "{log}"
    );
}

#[tokio::test]
async fn kopf_object_is_taken_over_with_one_status_write_and_no_event() {
    let h = Harness::new(writes_land(), EventsPolicy::All);
    let mut obj = todo_api(1, 8080, Some(json!({"phase": "Accepted"})));
    obj.metadata.annotations = Some(
        [(
            "kopf.zalando.org/last-handled-configuration".to_string(),
            "{\"spec\":{\"image\":\"ghcr.io/yrw9281/it30-todo-api:0.1.0\",\"port\":8080}}\n".to_string(),
        )]
        .into(),
    );
    obj.metadata.finalizers = Some(vec!["kopf.zalando.org/KopfFinalizerMarker".into()]);
    reconcile(cached(obj), h.ctx.clone()).await.unwrap();
    let patches = h.api.wait_for("PATCH", "/status", 1).await;
    assert_eq!(patches[0].body["status"]["observedGeneration"], 1);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(
        h.api.matching("POST", "/events").is_empty(),
        "a takeover resume posts no event"
    );
    let log = h.logs.text();
    assert!(log.contains("Resuming is processed: 1 succeeded; 0 failed."), "{log}");
    assert!(log.contains("Taking over from a Kopf operator"), "{log}");
    assert!(log.contains(r#"remove_with="kubectl -n todo patch microservice todo-api --type=json -p '[{\"op\":\"test\",\"path\":\"/metadata/finalizers/0\",\"value\":\"kopf.zalando.org/KopfFinalizerMarker\"},{\"op\":\"remove\",\"path\":\"/metadata/finalizers/0\"}]'""#), "{log}");
}

#[tokio::test]
async fn a_kopf_finalizer_holding_a_deletion_is_still_warned_about() {
    let h = Harness::new(writes_land(), EventsPolicy::All);
    let mut obj = todo_api(1, 8080, Some(json!({"phase": "Accepted", "observedGeneration": 1})));
    obj.metadata.finalizers = Some(vec!["kopf.zalando.org/KopfFinalizerMarker".into()]);
    // Seen alive first: the leftover-finalizer warning.
    reconcile(cached(obj.clone()), h.ctx.clone()).await.unwrap();
    // Then deleted: the deletion bumps the generation; nothing is handled, but the warning repeats once.
    obj.metadata.generation = Some(2);
    obj.metadata.deletion_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
        "2026-12-01T04:00:00Z".parse().unwrap(),
    ));
    reconcile(cached(obj.clone()), h.ctx.clone()).await.unwrap();
    reconcile(cached(obj), h.ctx.clone()).await.unwrap();
    let log = h.logs.text();
    assert!(log.contains("A Kopf finalizer is left on the object"), "{log}");
    assert_eq!(
        log.matches("The object is Terminating, held by a Kopf finalizer")
            .count(),
        1,
        "{log}"
    );
    assert!(log.contains("deletion_timestamp=2026-12-01T04:00:00Z"), "{log}");
    assert!(
        log.contains(r#"{\"op\":\"test\",\"path\":\"/metadata/finalizers/0\""#),
        "{log}"
    );
}

#[tokio::test]
async fn invalid_spec_is_marked_once_without_retry_loop() {
    let h = Harness::new(writes_land(), EventsPolicy::All);
    let bad = object("bad-port", 1, json!({"image": "nginx:1.27", "port": "eighty"}), None);
    let action = reconcile(cached(bad.clone()), h.ctx.clone()).await.unwrap();
    assert_eq!(action, Action::await_change(), "no requeue for a bad spec");
    let patches = h.api.wait_for("PATCH", "/status", 1).await;
    assert_eq!(patches[0].body["status"]["phase"], "Invalid");
    assert_eq!(patches[0].body["status"]["conditions"][0]["status"], "False");
    assert_eq!(
        patches[0].body["status"]["conditions"][0]["message"],
        "spec.port: expected an integer 1..65535, got \"eighty\""
    );
    let events = h.api.wait_for("POST", "/events", 1).await;
    assert_eq!(events[0].body["type"], "Warning");
    assert_eq!(events[0].body["reason"], "InvalidSpec");
    // The write comes back through the watch; a restart sees it again: still one Warning.
    let mut stored = bad.clone();
    stored.status = Some(patches[0].body["status"].clone());
    reconcile(cached(stored.clone()), h.ctx.clone()).await.unwrap();
    let fresh = Harness::new(writes_land(), EventsPolicy::All);
    reconcile(cached(stored), fresh.ctx.clone()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(h.api.seen().len(), 2);
    assert!(fresh.api.seen().is_empty());
    assert!(
        h.logs
            .text()
            .contains("Handler 'accept' failed permanently: spec.port: expected an integer 1..65535, got \"eighty\"")
    );
    assert!(h.logs.text().contains("Creation is processed: 0 succeeded; 1 failed."));
}

#[tokio::test]
async fn forbidden_status_patch_is_retried_with_backoff_and_a_warning() {
    let refused = Writes::StatusRefused(403, real_body("403-patch-status-forbidden.txt"));
    let h = Harness::new(Scenario::Passes(refused), EventsPolicy::All);
    let obj = cached(todo_api(1, 8080, None));
    let first = reconcile(obj.clone(), h.ctx.clone()).await.unwrap_err();
    assert!(first.source.to_string().contains("403"), "{first}");
    assert_eq!(
        error_policy(obj.clone(), &first, h.ctx.clone()),
        Action::requeue(Duration::from_millis(10))
    );
    let second = reconcile(obj.clone(), h.ctx.clone()).await.unwrap_err();
    assert_eq!(second.retry_in, Duration::from_millis(20), "exponential backoff");
    let events = h.api.wait_for("POST", "/events", 1).await;
    assert_eq!(events[0].body["type"], "Warning");
    assert_eq!(events[0].body["reason"], "ReconcileFailed");
    let note = events[0].body["note"].as_str().unwrap();
    assert!(note.starts_with("patch microservices/status for todo/todo-api failed: Forbidden (403): microservices.platform.example.io \"x\" is forbidden"), "{note}");
    // The same failure again extends the event's series instead of posting a second event.
    let series = h.api.wait_for("PATCH", "/events/", 1).await;
    assert_eq!(series[0].body["series"]["count"], 2);
    assert_eq!(series[0].content_type, "application/merge-patch+json");
    let failed = lines_with(
        &h.logs,
        "Handler 'accept' failed temporarily: patch microservices/status failed: Forbidden (403)",
    );
    assert_eq!(failed.len(), 2, "{}", h.logs.text());
    assert!(
        failed[0].contains(" ERROR [todo/todo-api] ") && failed[0].contains("code=403"),
        "{}",
        failed[0]
    );
    assert!(
        h.ctx.handled_generation("uid-todo-api").is_none(),
        "not handled until the write lands"
    );
}

#[tokio::test]
async fn unprocessable_status_patch_is_not_retried() {
    let refused = Writes::StatusRefused(422, real_body("422-create-invalid-port.txt"));
    let h = Harness::new(Scenario::Passes(refused), EventsPolicy::Warnings);
    let action = reconcile(cached(todo_api(1, 8080, None)), h.ctx.clone()).await.unwrap();
    assert_eq!(action, Action::await_change());
    assert_eq!(h.ctx.handled_generation("uid-todo-api"), Some(1));
    assert!(
        h.logs
            .text()
            .contains("Handler 'accept' failed permanently: patch microservices/status failed: Invalid (422)")
    );
    assert!(h.logs.text().contains("Creation is processed: 0 succeeded; 1 failed."));
    let events = h.api.wait_for("POST", "/events", 1).await;
    assert_eq!(events[0].body["reason"], "ReconcileFailed");
}

#[tokio::test]
async fn too_many_requests_honours_retry_after() {
    let too_many = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": "Too many requests, please try again later.", "reason": "TooManyRequests", "details": {"retryAfterSeconds": 7}, "code": 429});
    let h = Harness::new(
        Scenario::Passes(Writes::StatusRefused(429, too_many.to_string())),
        EventsPolicy::None,
    );
    let err = reconcile(cached(todo_api(1, 8080, None)), h.ctx.clone())
        .await
        .unwrap_err();
    assert_eq!(err.retry_in, Duration::from_secs(7));
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(
        h.api.matching("POST", "/events").is_empty(),
        "--events none posts nothing"
    );
}

#[tokio::test]
async fn status_pruned_by_schema_warns_once_and_does_not_loop() {
    // A schema with only status.phase: the rest is dropped, still 200.
    let h = Harness::new(Scenario::Passes(Writes::StatusPruned), EventsPolicy::All);
    reconcile(cached(todo_api(1, 8080, None)), h.ctx.clone()).await.unwrap();
    // The pruned status comes back through the watch: same generation, nothing to do.
    reconcile(
        cached(todo_api(1, 8080, Some(json!({"phase": "Accepted"})))),
        h.ctx.clone(),
    )
    .await
    .unwrap();
    let events = h.api.wait_for("POST", "/events", 2).await;
    let reasons: Vec<&str> = events.iter().map(|e| e.body["reason"].as_str().unwrap()).collect();
    assert!(
        reasons.contains(&"StatusPruned") && reasons.contains(&"Accepted"),
        "{reasons:?}"
    );
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(h.api.matching("PATCH", "/status").len(), 1);
    assert_eq!(lines_with(&h.logs, "Status was pruned").len(), 1);
    assert!(
        lines_with(&h.logs, "Status was pruned")[0]
            .contains("fields=\"status.observedGeneration, status.acceptedSpec, status.conditions\"")
    );
}
