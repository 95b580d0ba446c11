//! SIGTERM: passes in flight are waited for, up to the limit, and none is waited for when none
//! runs.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use tokio::sync::watch;

use super::verifier::{Outage, Scenario, Writes};
use super::*;
use crate::operate::reconcile::reconcile;
use crate::operate::{SHUTDOWN_WRITES, finish_passes};

/// SIGTERM with no pass in flight returns at once, also while the watch fails (kube-runtime's
/// runner never ends then: it waited the whole limit and logged that handlers were abandoned).
#[tokio::test(start_paused = true)]
async fn sigterm_with_no_pass_in_flight_returns_at_once_while_the_watch_fails() {
    let scenario = Scenario::Controller {
        lists: vec![],
        outage: Outage::new(
            &Arc::new(AtomicBool::new(true)),
            Some("GET"),
            403,
            real_body("403-list-microservices-forbidden.txt"),
        ),
    };
    let h = Harness::new(scenario, EventsPolicy::All);
    let (_terms, term_starts) = watch::channel(0);
    let handle = h.run_controller(term_starts);
    tokio::time::sleep(Duration::from_secs(40)).await;
    let started = tokio::time::Instant::now();
    assert!(finish_passes(&h.ctx, SHUTDOWN_WRITES).await);
    assert_eq!(started.elapsed(), Duration::ZERO);
    assert!(lines_with(&h.logs, "abandoned").is_empty());
    handle.abort();
}

/// A pass waiting for a write slot on SIGTERM is waited for until it wrote.
#[tokio::test(start_paused = true)]
async fn sigterm_waits_for_a_pass_in_flight() {
    let h = Harness::new(Scenario::Passes(Writes::Stored), EventsPolicy::All);
    let held = h.ctx.writes.acquire_many(4).await.unwrap();
    let pass = tokio::spawn(reconcile(cached(todo_api(1, 8080, None)), h.ctx.clone()));
    tokio::time::sleep(Duration::from_millis(50)).await;
    let release = async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        drop(held);
    };
    let started = tokio::time::Instant::now();
    let (finished, ()) = tokio::join!(finish_passes(&h.ctx, SHUTDOWN_WRITES), release);
    assert!(finished);
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_secs(1) && waited < Duration::from_secs(2),
        "{waited:?}"
    );
    assert_eq!(status_patches(&h.api, "todo-api").len(), 1);
    pass.await.unwrap().unwrap();
}

/// A pass still waiting at the shutdown limit is abandoned, with the warning.
#[tokio::test(start_paused = true)]
async fn sigterm_abandons_a_pass_that_outlasts_the_limit() {
    let h = Harness::new(Scenario::Passes(Writes::Stored), EventsPolicy::All);
    let _held = h.ctx.writes.acquire_many(4).await.unwrap();
    let _pass = tokio::spawn(reconcile(cached(todo_api(1, 8080, None)), h.ctx.clone()));
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!finish_passes(&h.ctx, Duration::from_secs(4)).await);
    assert_eq!(
        lines_with(
            &h.logs,
            "Handlers still running at the shutdown limit were abandoned limit=4s"
        )
        .len(),
        1
    );
}
