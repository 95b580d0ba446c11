//! Liveness and readiness of the controller, and the client layer that observes the watches.
//!
//! - Live (`/healthz`): a list or watch of microservices was (re)started successfully (a 2xx
//!   answer), or a watch delivered data (an event or a bookmark), within twice the watch timeout
//!   (the API server ends each watch after `timeoutSeconds`, 290 s by kube-runtime's default, and
//!   the watcher starts a new one, so a healthy idle watch proves itself at least that often).
//!   The time since start counts as success until the first answer.
//! - Ready (`/readyz`): every watch has received its initial list and handed its objects to the
//!   controller. A standby replica is ready too: it keeps its cache warm to take over.
//!
//! [`WatchProbeLayer`] is a tower layer on the API client: it sees the HTTP answers of every
//! list/watch request of microservices, and the frames of watch bodies.

use std::fmt;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context as TaskContext, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::future::BoxFuture;
use http::{Method, Request, Response};
use http_body::{Body as HttpBody, Frame};
use kube::client::{Body, DynBody};
use thiserror::Error;
use tower::{BoxError, Layer, Service};

use crate::resource::{GROUP, PLURAL, VERSION};

/// kube-runtime's default server-side watch timeout (`timeoutSeconds`), in seconds.
pub const WATCH_TIMEOUT: Duration = Duration::from_secs(290);

/// Shared liveness and readiness state.
#[derive(Debug)]
pub struct Health {
    start: Instant,
    /// Milliseconds after `start` of the last list/watch success; 0 = none yet.
    last_watch_ok_ms: AtomicU64,
    /// Liveness fails after this long without a list/watch success.
    stale_after: Duration,
    /// Watches whose initial list is not done yet.
    pending_lists: AtomicUsize,
}

impl Health {
    /// Live while a list/watch succeeded within `2 × watch_timeout`; ready once
    /// `initial_lists` watches have each reported their first list done.
    pub fn new(watch_timeout: Duration, initial_lists: usize) -> Self {
        Health {
            start: Instant::now(),
            last_watch_ok_ms: AtomicU64::new(0),
            stale_after: watch_timeout * 2,
            pending_lists: AtomicUsize::new(initial_lists),
        }
    }

    /// Records a successful list/watch (re)start or watch data.
    pub fn watch_succeeded(&self) {
        let ms = self.start.elapsed().as_millis() as u64;
        self.last_watch_ok_ms.fetch_max(ms.max(1), Ordering::Relaxed);
    }

    /// Records that one watch finished its first initial list.
    pub fn initial_list_done(&self) {
        let _ = self
            .pending_lists
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
    }

    /// `Ok(message)` while live (how long since the last list/watch success, and the limit);
    /// [`NotLive`] once that is longer than the limit.
    pub fn live(&self) -> Result<String, NotLive> {
        self.live_at(self.start.elapsed())
    }

    fn live_at(&self, now_since_start: Duration) -> Result<String, NotLive> {
        let last_ms = self.last_watch_ok_ms.load(Ordering::Relaxed);
        let age = WatchAge {
            since: now_since_start.saturating_sub(Duration::from_millis(last_ms)),
            ever_succeeded: last_ms != 0,
            limit: self.stale_after,
        };
        if age.since <= age.limit {
            Ok(age.to_string())
        } else {
            Err(NotLive(age))
        }
    }

    /// `Ok` once every initial list is done; [`NotReady`] naming how many are pending.
    pub fn ready(&self) -> Result<String, NotReady> {
        match self.pending_lists.load(Ordering::Acquire) {
            0 => Ok("initial lists done".into()),
            pending => Err(NotReady { pending }),
        }
    }
}

/// How long since the last list/watch success (since start, when none yet), against the
/// liveness limit: `12.3s since the last successful list/watch of microservices (limit 580s)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchAge {
    /// Since the last success, or since start.
    pub since: Duration,
    /// Whether any list/watch succeeded yet.
    pub ever_succeeded: bool,
    /// Liveness fails past this.
    pub limit: Duration,
}

impl fmt::Display for WatchAge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = if self.ever_succeeded {
            "since the last successful list/watch of microservices"
        } else {
            "since start, no list/watch of microservices succeeded yet"
        };
        write!(
            f,
            "{:.1}s {what} (limit {}s)",
            self.since.as_secs_f64(),
            self.limit.as_secs()
        )
    }
}

/// Liveness failed (`/healthz` answers 503 with it): no list/watch success within the limit.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{0}")]
pub struct NotLive(pub WatchAge);

/// Readiness failed (`/readyz` answers 503 with it): watches still waiting for their initial list.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{pending} watch(es) still waiting for the initial list")]
pub struct NotReady {
    /// How many watches.
    pub pending: usize,
}

/// Whether a request is a list or watch of microservices (`GET .../microservices`, namespaced or
/// cluster-wide; not a GET of one object).
pub fn is_list_or_watch(method: &Method, path: &str) -> bool {
    if method != Method::GET {
        return false;
    }
    let Some(rest) = path.strip_prefix(&format!("/apis/{GROUP}/{VERSION}/")) else {
        return false;
    };
    let parts: Vec<&str> = rest.split('/').collect();
    matches!(parts.as_slice(), [p] if *p == PLURAL) || matches!(parts.as_slice(), ["namespaces", _, p] if *p == PLURAL)
}

/// The tower layer for `kube::client::ClientBuilder::with_layer`.
#[derive(Debug, Clone)]
pub struct WatchProbeLayer {
    health: Arc<Health>,
}

impl WatchProbeLayer {
    /// Reports to `health`.
    pub fn new(health: Arc<Health>) -> Self {
        WatchProbeLayer { health }
    }
}

impl<S> Layer<S> for WatchProbeLayer {
    type Service = WatchProbe<S>;
    fn layer(&self, inner: S) -> Self::Service {
        WatchProbe {
            inner,
            health: self.health.clone(),
        }
    }
}

/// The service made by [`WatchProbeLayer`].
#[derive(Debug, Clone)]
pub struct WatchProbe<S> {
    inner: S,
    health: Arc<Health>,
}

impl<S> Service<Request<Body>> for WatchProbe<S>
where
    S: Service<Request<Body>, Response = Response<Box<DynBody>>, Error = BoxError>,
    S::Future: Send + 'static,
{
    type Response = Response<Box<DynBody>>;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<Self::Response, BoxError>>;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let observed = is_list_or_watch(request.method(), request.uri().path());
        let health = self.health.clone();
        let answer = self.inner.call(request);
        Box::pin(async move {
            let response = answer.await?;
            if !observed || !response.status().is_success() {
                return Ok(response);
            }
            health.watch_succeeded();
            Ok(response.map(|inner| Box::new(ObservedBody { inner, health }) as Box<DynBody>))
        })
    }
}

/// A response body that reports every data frame (watch events and bookmarks) as liveness.
struct ObservedBody {
    inner: Box<DynBody>,
    health: Arc<Health>,
}

impl HttpBody for ObservedBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(Some(Ok(frame))) = &polled
            && frame.is_data()
        {
            self.health.watch_succeeded();
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_collection_gets_of_microservices_are_list_or_watch() {
        let get = Method::GET;
        assert!(is_list_or_watch(
            &get,
            "/apis/platform.example.io/v1alpha1/microservices"
        ));
        assert!(is_list_or_watch(
            &get,
            "/apis/platform.example.io/v1alpha1/namespaces/todo/microservices"
        ));
        assert!(!is_list_or_watch(
            &get,
            "/apis/platform.example.io/v1alpha1/namespaces/todo/microservices/todo-api"
        ));
        assert!(!is_list_or_watch(
            &Method::PATCH,
            "/apis/platform.example.io/v1alpha1/namespaces/todo/microservices"
        ));
        assert!(!is_list_or_watch(
            &get,
            "/apis/coordination.k8s.io/v1/namespaces/ops/leases"
        ));
    }

    #[test]
    fn liveness_fails_after_twice_the_watch_timeout() {
        let health = Health::new(Duration::from_secs(10), 1);
        assert!(health.live_at(Duration::from_secs(20)).is_ok(), "grace from start");
        let err = health.live_at(Duration::from_secs(21)).unwrap_err().to_string();
        assert!(
            err.contains("no list/watch of microservices succeeded yet") && err.contains("limit 20s"),
            "{err}"
        );
        health.watch_succeeded();
        let since_ok = health.start.elapsed();
        assert!(health.live_at(since_ok + Duration::from_secs(20)).is_ok());
        let err = health
            .live_at(since_ok + Duration::from_secs(21))
            .unwrap_err()
            .to_string();
        assert!(err.contains("since the last successful list/watch"), "{err}");
    }

    #[test]
    fn ready_once_every_initial_list_is_done() {
        let health = Health::new(WATCH_TIMEOUT, 2);
        assert_eq!(
            health.ready().unwrap_err().to_string(),
            "2 watch(es) still waiting for the initial list"
        );
        health.initial_list_done();
        assert!(health.ready().is_err());
        health.initial_list_done();
        health.initial_list_done();
        assert!(health.ready().is_ok());
    }
}
