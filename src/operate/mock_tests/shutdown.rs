//! SIGTERM: passes in flight are waited for, up to the limit, and none is waited for when none
//! runs; the Lease is released also when the log output is a closed pipe.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use tokio::sync::{oneshot, watch};

use super::verifier::{ApiServerVerifier, FakeLease, Outage, Scenario, Writes};
use super::*;
use crate::operate::leader::{ElectionConfig, Elector};
use crate::operate::logging::{self, ClosedPipeSafe, DEFAULT_FILTER};
use crate::operate::reconcile::reconcile;
use crate::operate::{SHUTDOWN_WRITES, Shutdown, finish_passes};

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

/// Issue 22, item 4: `operate 2>&1 | tee operate.log` and Ctrl-C, where `tee` exited first: every
/// log line now fails with EPIPE (a real pipe whose read end is closed), and the shutdown still
/// releases the Lease, clearing its holder as client-go's ReleaseOnCancel does.
#[tokio::test]
async fn shutdown_releases_the_lease_when_the_log_pipe_is_closed() {
    let lease = FakeLease::shared();
    let scenario = Scenario::Election {
        lease: lease.clone(),
        lists: vec![],
        outage: None,
    };
    let (client, api) = ApiServerVerifier::start(scenario, None);
    let (reader, pipe) = std::io::pipe().unwrap();
    let pipe = Arc::new(pipe);
    let output = ClosedPipeSafe::new(move || pipe.try_clone().unwrap());
    let filter = tracing_subscriber::EnvFilter::new(DEFAULT_FILTER);
    let _logs = tracing::subscriber::set_default(logging::subscriber(LogFormat::Text, filter, output.clone()));
    let config = ElectionConfig {
        retry_period: Duration::from_millis(50),
        ..ElectionConfig::new("ops", "microservice-operator", "pod-a_1")
    };
    let (elector, mut roles) = Elector::new(client.clone(), config);
    let (release, released) = oneshot::channel();
    let electors = vec![(release, tokio::spawn(elector.run(released)))];
    roles.wait_for(|r| r.term() == Some(1)).await.unwrap();
    assert!(!output.closed());

    drop(reader);
    tracing::info!("Signal received. Operator is stopping.");
    assert!(output.closed(), "the line met the closed pipe");
    let reporter = Reporter {
        controller: "kubectl-microservice".into(),
        instance: "pod-a".into(),
    };
    let (sink, poster) = operate_events::channel(client.clone(), reporter, EventsPolicy::All);
    let (drain, drained) = oneshot::channel();
    let shutdown = Shutdown {
        contexts: vec![Arc::new(Context::new(client, sink, 4))],
        drain,
        poster: tokio::spawn(poster.run_until(drained)),
        electors,
        endpoint: None,
    };
    tokio::time::timeout(Duration::from_secs(10), shutdown.run())
        .await
        .unwrap();
    assert_eq!(lease.lock().unwrap().holder(), None, "released, not left to expire");
    let released = api.matching("PUT", "/leases/microservice-operator").pop().unwrap();
    assert_eq!(released.body["spec"]["holderIdentity"], serde_json::Value::Null);
    assert_eq!(released.body["spec"]["leaseDurationSeconds"], 1);
}
