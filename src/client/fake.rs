//! A mocked API server for the tests of every layer that reads through the client
//! (`tower_test`): lists, evidence, logs and the commands answer from the same fake.

use kube::Client;

/// A mocked API server for tests (`tower_test`): `answer(path, query)` gives each response's
/// status and body; every request's path and query are recorded.
pub(crate) fn fake_api(
    mut answer: impl FnMut(&str, &str) -> (u16, String) + Send + 'static,
) -> (Client, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use http::{Request, Response};
    use kube::client::Body;
    let (svc, mut handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = seen.clone();
    tokio::spawn(async move {
        while let Some((request, send)) = handle.next_request().await {
            let uri = request.uri().clone();
            record.lock().unwrap().push(uri.to_string());
            let (code, body) = answer(uri.path(), uri.query().unwrap_or(""));
            send.send_response(
                Response::builder()
                    .status(code)
                    .header("date", "Sun, 29 Nov 2026 17:20:00 GMT")
                    .body(Body::from(body.into_bytes()))
                    .unwrap(),
            );
        }
    });
    (Client::new(svc, "default"), seen)
}
