//! The HTTP endpoint of `--health-listen ADDR` (hyper 1, HTTP/1.1, plain text):
//!
//! - `GET /healthz`: 200 `ok: ...` while live, else 503 naming how long the watch has been silent
//!   (see [`super::health`]);
//! - `GET /readyz`: 200 once every initial list is done, else 503;
//! - `GET /metrics`: 200, Prometheus text format 0.0.4 (see [`super::metrics`]);
//! - other paths 404, other methods 405.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Response, StatusCode, header};
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;

use super::health::Health;
use super::metrics::{self, Metrics};
use crate::error::AppError;

/// A client must send its request headers within this time.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// Binds `addr`; errors name the flag and the address (exit 3).
pub async fn bind(addr: SocketAddr) -> Result<TcpListener, AppError> {
    TcpListener::bind(addr).await.map_err(|e| AppError::Io {
        context: format!("cannot listen on --health-listen {addr}"),
        source: e,
    })
}

/// Serves until the task is dropped.
pub async fn serve(listener: TcpListener, health: Arc<Health>, metrics: Arc<Metrics>) {
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(err) => {
                tracing::warn!(error = err.to_string().as_str(), "Health endpoint: accept failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let (health, metrics) = (health.clone(), metrics.clone());
        tokio::spawn(async move {
            let service = service_fn(move |request: http::Request<hyper::body::Incoming>| {
                let response = respond(request.method(), request.uri().path(), &health, &metrics);
                async move { Ok::<_, Infallible>(response) }
            });
            let _ = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// The answer to one request (pure, so tests need no socket).
pub fn respond(method: &Method, path: &str, health: &Health, metrics: &Metrics) -> Response<Full<Bytes>> {
    if method != Method::GET && method != Method::HEAD {
        return text(StatusCode::METHOD_NOT_ALLOWED, "only GET is served\n".into());
    }
    match path {
        "/healthz" => probe(health.live()),
        "/readyz" => probe(health.ready()),
        "/metrics" => Response::builder()
            .status(StatusCode::OK)
            .header(header::CONTENT_TYPE, metrics::CONTENT_TYPE)
            .body(Full::new(Bytes::from(metrics.encode())))
            .expect("a static response builds"),
        _ => text(
            StatusCode::NOT_FOUND,
            "not found: serves /healthz, /readyz, /metrics\n".into(),
        ),
    }
}

/// `200 ok: <message>` or `503 failed: <why>`.
fn probe(result: Result<String, impl std::fmt::Display>) -> Response<Full<Bytes>> {
    match result {
        Ok(message) => text(StatusCode::OK, format!("ok: {message}\n")),
        Err(message) => text(StatusCode::SERVICE_UNAVAILABLE, format!("failed: {message}\n")),
    }
}

fn text(status: StatusCode, body: String) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "text/plain; charset=utf-8")
        .body(Full::new(Bytes::from(body)))
        .expect("a static response builds")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operate::events::EventStats;
    use crate::operate::health::WATCH_TIMEOUT;
    use http_body_util::BodyExt;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn body(response: Response<Full<Bytes>>) -> String {
        String::from_utf8(response.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap()
    }

    #[tokio::test]
    async fn routes_answer_per_state() {
        let health = Health::new(WATCH_TIMEOUT, 1);
        let metrics = Metrics::new(Arc::new(EventStats::default()));
        let get = Method::GET;
        let ready = respond(&get, "/readyz", &health, &metrics);
        assert_eq!(ready.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(
            body(ready).await,
            "failed: 1 watch(es) still waiting for the initial list\n"
        );
        health.initial_list_done();
        assert_eq!(respond(&get, "/readyz", &health, &metrics).status(), StatusCode::OK);
        let live = respond(&get, "/healthz", &health, &metrics);
        assert_eq!(live.status(), StatusCode::OK);
        assert!(body(live).await.starts_with("ok: "));
        let scraped = respond(&get, "/metrics", &health, &metrics);
        assert_eq!(
            scraped.headers()[header::CONTENT_TYPE],
            "text/plain; version=0.0.4; charset=utf-8"
        );
        assert!(body(scraped).await.contains("microservice_operator_leader 0"));
        assert_eq!(respond(&get, "/", &health, &metrics).status(), StatusCode::NOT_FOUND);
        assert_eq!(
            respond(&Method::POST, "/healthz", &health, &metrics).status(),
            StatusCode::METHOD_NOT_ALLOWED
        );
    }

    #[tokio::test]
    async fn serves_http_on_a_socket() {
        let listener = bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let health = Arc::new(Health::new(WATCH_TIMEOUT, 0));
        let metrics = Arc::new(Metrics::new(Arc::new(EventStats::default())));
        let server = tokio::spawn(serve(listener, health, metrics));
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        stream
            .write_all(b"GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.unwrap();
        server.abort();
        assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
        assert!(answer.ends_with("ok: initial lists done\n"), "{answer}");
    }

    #[tokio::test]
    async fn a_taken_address_is_an_error_naming_the_flag() {
        let listener = bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let err = bind(addr).await.unwrap_err();
        assert!(err.to_string().contains(&format!("--health-listen {addr}")), "{err}");
        assert_eq!(err.exit_code(), 3);
    }
}
