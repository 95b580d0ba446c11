//! The list and watch that feed the controller: every object served, the relist after a
//! `410 Gone`, the list from the watch cache and bookmarks, readiness, and the backoff of a
//! forbidden list.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::watch;

use super::verifier::{Outage, Scenario, Seen};
use super::*;
use crate::operate::health::WATCH_TIMEOUT;
use crate::operate::logging::DEFAULT_FILTER;
use crate::operate::logging::tests::capture_filtered;
use crate::vocab::cause::Cause;
use crate::vocab::handler::RunOutcome;

/// The whole controller over a list holding one bad object under a loose CRD: the list/watch
/// keeps working and every object is handled.
#[tokio::test]
async fn controller_serves_every_object_when_one_spec_is_bad() {
    let list = json!({
        "apiVersion": "platform.example.io/v1alpha1", "kind": "MicroserviceList", "metadata": {"resourceVersion": "500"},
        "items": [
            {"metadata": {"name": "a", "namespace": "todo", "uid": "uid-a", "generation": 1, "resourceVersion": "10"}, "spec": {"image": "nginx:1.27", "port": 80}},
            {"metadata": {"name": "b", "namespace": "todo", "uid": "uid-b", "generation": 1, "resourceVersion": "11"}, "spec": {"image": "ghcr.io/org/b:1", "port": 8080}},
            {"metadata": {"name": "eighty", "namespace": "todo", "uid": "uid-eighty", "generation": 1, "resourceVersion": "12"}, "spec": {"image": "nginx:1.27", "port": "eighty"}},
            {"metadata": {"name": "c", "namespace": "todo", "uid": "uid-c", "generation": 1, "resourceVersion": "13"}, "spec": {"image": "registry.example.com/c@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "port": 65535}}
        ]
    })
    .to_string();
    let scenario = Scenario::Controller {
        lists: vec![list],
        outage: None,
    };
    let h = Harness::new(scenario, EventsPolicy::All);
    let (_terms, term_starts) = watch::channel(0);
    let handle = h.run_controller(term_starts);
    let patches = h.api.wait_for("PATCH", "/status", 4).await;
    handle.abort();
    let mut phases: Vec<(String, String)> = patches
        .iter()
        .map(|p| {
            (
                p.path.rsplit('/').nth(1).unwrap().to_string(),
                p.body["status"]["phase"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    phases.sort();
    assert_eq!(
        phases,
        [
            ("a".into(), "Accepted".into()),
            ("b".into(), "Accepted".into()),
            ("c".into(), "Accepted".into()),
            ("eighty".into(), "Invalid".into())
        ]
    );
    let list_call = h.api.matching(
        "GET",
        "/apis/platform.example.io/v1alpha1/namespaces/todo/microservices",
    );
    assert!(!list_call.is_empty());
}

/// Acceptance 3 of issue 6, 410 path: the API server answers the watch with `410 Gone` (the real
/// body); the watcher relists. Unchanged objects are not handled again (no write, no log line), a
/// spec changed while the watch was broken is handled as an update, a new object as a create.
/// Then the watch ends as on an API server restart: the watcher resumes from the last
/// resourceVersion without a relist, and a later spec change is handled.
#[tokio::test]
async fn relist_after_410_is_silent_for_unchanged_objects_and_loses_no_update() {
    let health = Arc::new(Health::new(WATCH_TIMEOUT, 1));
    let first = vec![
        microservice_json("a", 1, json!(8080), "10", None),
        microservice_json("b", 1, json!(8080), "11", None),
    ];
    let relisted = vec![
        microservice_json("a", 1, json!(8080), "501", accepted(1)),
        microservice_json("b", 2, json!(9090), "590", accepted(1)),
        microservice_json("c", 1, json!(7000), "595", None),
    ];
    let scenario = Scenario::Controller {
        lists: vec![list_json("500", first), list_json("600", relisted)],
        outage: None,
    };
    let h = Harness::observed(scenario, EventsPolicy::All, Some(health.clone()));
    assert!(health.ready().is_err(), "not ready before the initial list");
    let (_terms, term_starts) = watch::channel(0);
    let handle = h.run_controller(term_starts);

    the_initial_list_is_handled_and_watched_from_its_version(&h, &health).await;
    let watches = a_410_relists_and_handles_only_what_changed(&h).await;
    a_watch_end_resumes_from_the_last_version(&h, watches).await;
    handle.abort();
    assert_eq!(status_patches(&h.api, "a").len(), 1);
    assert_eq!(h.ctx.metrics.runs("accept", Cause::Create, RunOutcome::Succeeded), 3);
    assert_eq!(h.ctx.metrics.runs("accept", Cause::Update, RunOutcome::Succeeded), 2);
    assert_eq!(h.ctx.metrics.runs("accept", Cause::Resume, RunOutcome::Succeeded), 0);
}

async fn the_initial_list_is_handled_and_watched_from_its_version(h: &Harness, health: &Health) {
    h.api.wait_for("PATCH", "/status", 2).await;
    let first_watch = h.api.wait_for("GET", "/microservices", 2).await;
    assert!(first_watch[1].is_watch());
    assert_eq!(
        first_watch[1].query.get("resourceVersion").map(String::as_str),
        Some("500")
    );
    assert!(health.ready().is_ok(), "ready once the initial list is done");
    assert!(health.live().unwrap().contains("since the last successful list/watch"));
    // Our writes come back through the watch.
    h.api
        .push_watch(&json!({"type": "MODIFIED", "object": microservice_json("a", 1, json!(8080), "501", accepted(1))}));
    h.api
        .push_watch(&json!({"type": "MODIFIED", "object": microservice_json("b", 1, json!(8080), "502", accepted(1))}));
    tokio::time::sleep(Duration::from_millis(50)).await;
}

/// The real 410 answer, as a watch event: one relist; returns how many watches were made.
async fn a_410_relists_and_handles_only_what_changed(h: &Harness) -> usize {
    let gone: Value = serde_json::from_str(real_body("410-watch-too-old.txt").trim()).unwrap();
    assert_eq!(gone["object"]["code"], 410);
    h.api.push_watch(&gone);
    until("c handled after the relist", || status_patches(&h.api, "c").len() == 1).await;
    until("b's update handled", || status_patches(&h.api, "b").len() == 2).await;
    tokio::time::sleep(Duration::from_millis(100)).await;

    assert_eq!(h.api.lists().len(), 2, "one relist");
    assert_eq!(status_patches(&h.api, "a").len(), 1, "a is unchanged: no second write");
    assert_eq!(status_patches(&h.api, "b")[1].body["status"]["observedGeneration"], 2);
    the_relist_logs_only_what_changed(h);
    let events = h.api.matching("POST", "/events");
    assert_eq!(events.len(), 4, "a, b, b again, c: one Accepted event per change");
    let watches = h.api.watches();
    assert_eq!(
        watches.last().unwrap().query.get("resourceVersion").map(String::as_str),
        Some("600")
    );
    watches.len()
}

fn the_relist_logs_only_what_changed(h: &Harness) {
    assert_eq!(
        lines_with(&h.logs, "[todo/a] Accepted").len(),
        1,
        "a: no second handler run"
    );
    assert_eq!(
        lines_with(&h.logs, "cause=resume").len(),
        0,
        "a relist within a term is silent"
    );
    assert_eq!(
        lines_with(&h.logs, "[todo/b] Updating is processed: 1 succeeded; 0 failed.").len(),
        1
    );
    assert_eq!(
        lines_with(&h.logs, "[todo/c] Creation is processed: 1 succeeded; 0 failed.").len(),
        1
    );
    assert_eq!(
        lines_with(
            &h.logs,
            "Watching microservices: resourceVersion too old (410 Gone); relisting"
        )
        .len(),
        1,
        "{}",
        h.logs.text()
    );
    assert_eq!(lines_with(&h.logs, "Watching microservices: relist done").len(), 1);
}

/// API server restart: the watch ends; the watcher resumes from the last resourceVersion.
async fn a_watch_end_resumes_from_the_last_version(h: &Harness, watches_before: usize) {
    h.api
        .push_watch(&json!({"type": "MODIFIED", "object": microservice_json("c", 1, json!(7000), "601", accepted(1))}));
    tokio::time::sleep(Duration::from_millis(50)).await;
    h.api.end_watches();
    until("a new watch", || h.api.watches().len() > watches_before).await;
    let rewatch = h.api.watches().pop().unwrap();
    assert_eq!(rewatch.query.get("resourceVersion").map(String::as_str), Some("601"));
    assert_eq!(h.api.lists().len(), 2, "no relist after a plain watch end");
    h.api
        .push_watch(&json!({"type": "MODIFIED", "object": microservice_json("c", 2, json!(7001), "610", accepted(1))}));
    until("c's update after the restart", || {
        status_patches(&h.api, "c").len() == 2
    })
    .await;
}

/// The initial list is one request answered from the watch cache (`resourceVersion=0`, no
/// `limit`), its objects are all handled; the watch asks for bookmarks, and after a bookmark the
/// next watch starts from the bookmark's resourceVersion, with no relist.
#[tokio::test]
async fn the_list_comes_from_the_watch_cache_and_a_bookmark_moves_the_watch_on() {
    let objects: Vec<Value> = (0..40)
        .map(|i| microservice_json(&format!("svc-{i:02}"), 1, json!(8000 + i), &format!("{}", 10 + i), None))
        .collect();
    let list = list_json("500", objects);
    let scenario = Scenario::Controller {
        lists: vec![list],
        outage: None,
    };
    let h = Harness::new(scenario, EventsPolicy::None);
    let (_terms, term_starts) = watch::channel(0);
    let handle = h.run_controller(term_starts);
    h.api.wait_for("PATCH", "/status", 40).await;
    let gets = h.api.matching("GET", "/microservices");
    let lists: Vec<&Seen> = gets.iter().filter(|s| !s.is_watch()).collect();
    assert_eq!(lists.len(), 1, "{gets:#?}");
    assert_eq!(lists[0].query.get("resourceVersion").map(String::as_str), Some("0"));
    assert_eq!(lists[0].query.get("limit"), None);
    let watch = gets.iter().find(|s| s.is_watch()).unwrap();
    assert_eq!(watch.query.get("resourceVersion").map(String::as_str), Some("500"));
    assert_eq!(watch.query.get("allowWatchBookmarks").map(String::as_str), Some("true"));
    assert_eq!(watch.query.get("timeoutSeconds").map(String::as_str), Some("290"));

    h.api.push_watch(&json!({"type": "BOOKMARK", "object": {
        "apiVersion": "platform.example.io/v1alpha1", "kind": "Microservice",
        "metadata": {"resourceVersion": "777", "annotations": {"k8s.io/initial-events-end": "true"}}}}));
    tokio::time::sleep(Duration::from_millis(50)).await;
    h.api.end_watches();
    until("a new watch", || h.api.watches().len() == 2).await;
    let rewatch = h.api.watches().pop().unwrap();
    assert_eq!(rewatch.query.get("resourceVersion").map(String::as_str), Some("777"));
    assert_eq!(h.api.lists().len(), 1, "no relist after a watch end");
    handle.abort();
    assert_eq!(h.ctx.metrics.runs("accept", Cause::Create, RunOutcome::Succeeded), 40);
}

/// The client's watch probe sees the list and the watch: the controller is live once they
/// answer, and ready once the initial list is done; handler runs show in the metrics.
#[tokio::test]
async fn health_follows_the_watch_and_metrics_count_runs() {
    let health = Arc::new(Health::new(WATCH_TIMEOUT, 1));
    let h = Harness::observed(one_object(), EventsPolicy::All, Some(health.clone()));
    assert!(health.ready().is_err(), "not ready before the initial list");
    assert!(
        health
            .live()
            .unwrap()
            .contains("no list/watch of microservices succeeded yet")
    );
    let (_terms, term_starts) = watch::channel(0);
    let handle = h.run_controller(term_starts);
    h.api.wait_for("PATCH", "/status", 1).await;
    until("the watch started", || h.api.seen().iter().any(Seen::is_watch)).await;
    assert!(health.ready().is_ok(), "ready once the initial list is done");
    assert!(health.live().unwrap().contains("since the last successful list/watch"));
    handle.abort();
    let text = h.ctx.metrics.encode();
    assert!(
        text.contains(
            r#"microservice_operator_handler_runs_total{handler="accept",cause="create",outcome="succeeded"} 1"#
        ),
        "{text}"
    );
    assert!(
        text.contains(r#"microservice_operator_handler_duration_seconds_count{handler="accept",cause="create"} 1"#)
    );
}

/// A ServiceAccount without list/watch on microservices (the real 403 body of such a list): the
/// list is retried with client-go's backoff growing to 30 s (it stayed at 0.8–1.6 s while
/// kube-runtime's `Event::Init` reset it before every list), and the error is logged once, in one
/// line, under the operator's default log filter (kube-runtime's own line dumped the Status with
/// `{:?}`); its repeats are counted at growing intervals, and the recovery says how many.
#[tokio::test(start_paused = true)]
async fn a_forbidden_list_backs_off_to_30s_and_is_logged_once() {
    let forbidden = Arc::new(AtomicBool::new(true));
    let refused = real_body("403-list-microservices-forbidden.txt");
    let scenario = Scenario::Controller {
        lists: one_object_list(),
        outage: Outage::new(&forbidden, Some("GET"), 403, refused),
    };
    let h = Harness::new(scenario, EventsPolicy::All);
    let (logs, _filtered) = capture_filtered(LogFormat::Text, DEFAULT_FILTER);
    let (_terms, term_starts) = watch::channel(0);
    let handle = h.run_controller(term_starts);
    tokio::time::sleep(Duration::from_secs(300)).await;
    let lists: Vec<tokio::time::Instant> = h.api.matching("GET", "/microservices").iter().map(|s| s.at).collect();
    let gaps: Vec<f64> = lists.windows(2).map(|w| (w[1] - w[0]).as_secs_f64()).collect();
    // 0.8 s doubling to 30 s, each plus up to 100 % jitter: [0.8, 1.6), [1.6, 3.2), ... [30, 60).
    let mut base = 0.8f64;
    for (i, gap) in gaps.iter().enumerate() {
        assert!(
            *gap >= base - 0.01 && *gap < 2.0 * base + 0.05,
            "gap {i} is {gap:.2}s; base {base}s; gaps {gaps:.2?}"
        );
        base = (base * 2.0).min(30.0);
    }
    assert!(lists.len() <= 15, "{} lists in 300 s: {gaps:.2?}", lists.len());

    let text = logs.text();
    let failed: Vec<&str> = text.lines().filter(|l| l.contains("WARN")).collect();
    assert!(!text.contains("Status {"), "no debug dump of the Status:\n{text}");
    assert!(
        failed[0].contains(r#"Watching microservices failed; retrying with backoff namespaces=todo error="list: Forbidden (403): microservices.platform.example.io is forbidden: User \"system:serviceaccount:todo:no-rights\" cannot list resource \"microservices\" in API group \"platform.example.io\" in the namespace \"todo\"" retry_in="#),
        "{text}"
    );
    // The first line, then one at the 4th and 8th failure in a row.
    assert_eq!(failed.len(), 3, "{text}");
    assert!(
        failed[1].contains("Watching microservices still fails with the same error namespaces=todo times=4 "),
        "{text}"
    );
    assert!(failed[2].contains(" times=8 "), "{text}");

    // Access granted: the next list succeeds, the recovery names the failures.
    forbidden.store(false, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_secs(60)).await;
    until("the object handled", || status_patches(&h.api, "a").len() == 1).await;
    let text = logs.text();
    let recovered: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("Watching microservices recovered"))
        .collect();
    assert_eq!(recovered.len(), 1, "{text}");
    assert!(
        recovered[0].contains(&format!("failures={} last_error_times={} ", lists.len(), lists.len())),
        "{text}"
    );
    handle.abort();
}
