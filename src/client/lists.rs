//! Reads through kube that every part of the evidence makes alike: a collection listed page by
//! page ([`list_pages`], [`list_all`]), one JSON request with the API server's clock (its `Date`
//! header, [`send_json`]), and a `GET` of an object that may not exist ([`get_if_served`]).
//! Errors are kube's: the caller makes them gaps.

use chrono::{DateTime, Utc};
use http::Request;
use kube::Client;
use kube::api::{Api, ListParams};
use kube::client::Body;
use kube::core::ObjectList;
use serde::de::DeserializeOwned;

/// Page size of list calls (kubectl's default chunk size).
pub const PAGE_SIZE: u32 = 500;

/// The API server's clock (`Date` header) and the items of a paginated list of the collection at
/// `url_path` (e.g. `/api/v1/namespaces/ops/pods`).
///
/// Errors: the API's (forbidden, not found, unreachable), or a body that is not such a list.
pub async fn list_all<K>(
    client: &Client,
    url_path: &str,
    params: ListParams,
) -> Result<(Vec<K>, Option<DateTime<Utc>>), kube::Error>
where
    K: DeserializeOwned + Clone,
{
    let mut items = Vec::new();
    let date = list_pages(client, url_path, params, |page: Vec<K>, _| items.extend(page)).await?;
    Ok((items, date))
}

/// A paginated list of the collection at `url_path`, in pages of [`PAGE_SIZE`] items handed to
/// `each_page` as they arrive, with the API server's clock (`Date` header of the first page),
/// so that a caller that keeps only what it needs of each item holds one page at a time.
/// Returns that clock.
///
/// Errors: as [`list_all`]; the pages before the error were handed over.
pub async fn list_pages<K>(
    client: &Client,
    url_path: &str,
    params: ListParams,
    mut each_page: impl FnMut(Vec<K>, Option<DateTime<Utc>>),
) -> Result<Option<DateTime<Utc>>, kube::Error>
where
    K: DeserializeOwned + Clone,
{
    let mut date = None;
    let mut params = params.limit(PAGE_SIZE);
    loop {
        let request = kube::core::Request::new(url_path)
            .list(&params)
            .map_err(kube::Error::BuildRequest)?;
        let (list, page_date) = send_json::<ObjectList<K>>(client, request).await?;
        date = date.or(page_date);
        each_page(list.items, date);
        match list.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(token) => params = params.continue_token(&token),
            None => return Ok(date),
        }
    }
}

/// The collection at `url_path` as of now, read from the API server's watch cache: the items
/// handed to `each_page` (usually in one page), with the API server's clock; returns that clock.
///
/// Why not [`list_pages`]: a paged list reads etcd page by page (kubectl's way), one round trip
/// per 500 items, while kube-apiserver serves a list that gives `resourceVersion=RV` with
/// `resourceVersionMatch=NotOlderThan` and no `limit` from its watch cache, in memory, once the
/// cache has caught up to RV (k8s.io/apiserver `Cacher.GetList`, `shouldDelegateList`; the cache
/// waits up to 3 s for RV). RV comes from a first list with `limit=1`, which the API server
/// answers from etcd (a quorum read): so the answer is at least as new as the moment the command
/// asked, as consistent as kubectl's paged list (KEP-2340's consistent reads from cache, done by
/// the client for API servers before 1.31). A collection of at most one item is that first answer.
///
/// When the cache cannot serve it (a `504` while it catches up, an API server that refuses the
/// parameters, any answer but a list), the collection is read by [`list_pages`] instead, nothing
/// having been handed over yet. A `continue` token in the cached answer (a server that pages
/// anyway) is followed, as [`list_pages`] follows it.
///
/// Errors: the first list's (forbidden, not found, unreachable), or those of the pages after the
/// first cached one; as [`list_pages`], the pages before an error were handed over.
pub async fn list_from_cache<K>(
    client: &Client,
    url_path: &str,
    params: ListParams,
    mut each_page: impl FnMut(Vec<K>, Option<DateTime<Utc>>),
) -> Result<Option<DateTime<Utc>>, kube::Error>
where
    K: DeserializeOwned + Clone,
{
    let probe = kube::core::Request::new(url_path)
        .list(&params.clone().limit(1))
        .map_err(kube::Error::BuildRequest)?;
    let (first, date) = send_json::<ObjectList<K>>(client, probe).await?;
    let more = first.metadata.continue_.as_deref().is_some_and(|c| !c.is_empty());
    let revision = first.metadata.resource_version.clone().filter(|rv| !rv.is_empty());
    let Some(revision) = revision.filter(|_| more) else {
        if more {
            // A list without its revision cannot be asked of the cache consistently.
            return list_pages(client, url_path, params, each_page)
                .await
                .map(|d| date.or(d));
        }
        each_page(first.items, date);
        return Ok(date);
    };
    let cached = params
        .clone()
        .at(&revision)
        .matching(kube::api::VersionMatch::NotOlderThan);
    let request = kube::core::Request::new(url_path)
        .list(&cached)
        .map_err(kube::Error::BuildRequest)?;
    let list = match send_json::<ObjectList<K>>(client, request).await {
        Ok((list, _)) => list,
        Err(kube::Error::Api(status)) if status.code == 401 || status.code == 403 => {
            return Err(kube::Error::Api(status));
        }
        Err(_) => {
            return list_pages(client, url_path, params, each_page)
                .await
                .map(|d| date.or(d));
        }
    };
    let mut next = list.metadata.continue_.clone().filter(|c| !c.is_empty());
    each_page(list.items, date);
    while let Some(token) = next {
        let request = kube::core::Request::new(url_path)
            .list(&params.clone().limit(PAGE_SIZE).continue_token(&token))
            .map_err(kube::Error::BuildRequest)?;
        let (page, _) = send_json::<ObjectList<K>>(client, request).await?;
        next = page.metadata.continue_.clone().filter(|c| !c.is_empty());
        each_page(page.items, date);
    }
    Ok(date)
}

/// Sends `request` and reads its JSON answer as `T`, with the API server's clock (`Date`
/// header, when it sent one).
///
/// Errors: a status that is not a success as [`kube::Error::Api`] (the server's `Status`, else
/// one made of the body and the code), a body that is not `T` as [`kube::Error::SerdeError`],
/// and the transport's.
pub async fn send_json<T: DeserializeOwned>(
    client: &Client,
    request: Request<Vec<u8>>,
) -> Result<(T, Option<DateTime<Utc>>), kube::Error> {
    let response = client.send(request.map(Body::from)).await?;
    let status = response.status();
    let date = response
        .headers()
        .get(http::header::DATE)
        .and_then(|v| v.to_str().ok())
        .and_then(|s| DateTime::parse_from_rfc2822(s).ok())
        .map(|t| t.with_timezone(&Utc));
    let bytes = response.into_body().collect_bytes().await?;
    if !status.is_success() {
        let parsed = serde_json::from_slice::<kube::core::Status>(&bytes).unwrap_or_else(|_| {
            kube::core::Status::failure(&String::from_utf8_lossy(&bytes), "Failed").with_code(status.as_u16())
        });
        return Err(kube::Error::Api(Box::new(parsed)));
    }
    serde_json::from_slice(&bytes)
        .map(|v| (v, date))
        .map_err(kube::Error::SerdeError)
}

/// `GET` an object that may not exist: `None` on any 404, also when the API server does not serve
/// the path at all (an API group that is not installed answers `404 page not found` in plain
/// text, without the Status object `Api::get_opt` looks for).
///
/// Errors: any other error of the API or the transport.
pub async fn get_if_served<K>(api: &Api<K>, name: &str) -> Result<Option<K>, kube::Error>
where
    K: Clone + DeserializeOwned + std::fmt::Debug,
{
    match api.get(name).await {
        Ok(object) => Ok(Some(object)),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(None),
        Err(e) => Err(e),
    }
}

/// A mocked API server for tests (`tower_test`): `answer(path, query)` gives each response's
/// status and body; every request's path and query are recorded.
#[cfg(test)]
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

#[cfg(test)]
mod tests {
    //! [`list_from_cache`] against a mocked API server: which calls, and what falls back.

    use serde_json::{Value, json};

    use super::*;

    fn list(items: &[&str], revision: Option<&str>, next: Option<&str>) -> String {
        let items: Vec<Value> = items.iter().map(|n| json!({"metadata": {"name": n}})).collect();
        json!({"kind": "List", "apiVersion": "v1",
            "metadata": {"resourceVersion": revision, "continue": next}, "items": items})
        .to_string()
    }

    async fn names(
        answer: impl FnMut(&str, &str) -> (u16, String) + Send + 'static,
    ) -> (Result<Vec<String>, u16>, Vec<String>) {
        let (client, seen) = fake_api(answer);
        let mut got = Vec::new();
        let listed = list_from_cache::<Value>(&client, "/api/v1/pods", ListParams::default(), |page, _| {
            got.extend(
                page.iter()
                    .map(|v| v["metadata"]["name"].as_str().unwrap_or("").to_string()),
            )
        })
        .await;
        let calls = seen.lock().unwrap().clone();
        match listed {
            Ok(_) => (Ok(got), calls),
            Err(kube::Error::Api(status)) => (Err(status.code), calls),
            Err(e) => panic!("{e}"),
        }
    }

    #[tokio::test]
    async fn a_collection_of_one_item_is_the_first_answer() {
        let (got, calls) = names(|_, _| (200, list(&["a"], Some("7"), None))).await;
        assert_eq!(got, Ok(vec!["a".to_string()]));
        assert_eq!(calls, ["/api/v1/pods?&limit=1"]);
    }

    #[tokio::test]
    async fn a_larger_one_comes_from_the_cache_at_etcds_revision() {
        let (got, calls) = names(|_, query| match query.contains("limit=1") {
            true => (200, list(&["a"], Some("7"), Some("t"))),
            false => (200, list(&["a", "b", "c"], Some("7"), None)),
        })
        .await;
        assert_eq!(got, Ok(vec!["a".into(), "b".into(), "c".into()]));
        assert_eq!(calls.len(), 2, "{calls:?}");
        assert!(
            calls[1].contains("resourceVersion=7&resourceVersionMatch=NotOlderThan") && !calls[1].contains("limit"),
            "{calls:?}"
        );
    }

    #[tokio::test]
    async fn a_cache_that_cannot_answer_gives_way_to_the_paged_list() {
        for (code, revision) in [(504, Some("7")), (400, Some("7")), (200, None)] {
            let (got, calls) = names(move |_, query| {
                if query.contains("limit=1&") || query.ends_with("limit=1") {
                    return (200, list(&["a"], revision, Some("t")));
                }
                if query.contains("resourceVersionMatch") {
                    return (
                        code,
                        json!({"kind": "Status", "code": code, "message": "no"}).to_string(),
                    );
                }
                match query.contains("continue=p2") {
                    false => (200, list(&["a", "b"], Some("7"), Some("p2"))),
                    true => (200, list(&["c"], Some("7"), None)),
                }
            })
            .await;
            assert_eq!(
                got,
                Ok(vec!["a".into(), "b".into(), "c".into()]),
                "{code} {revision:?}: {calls:?}"
            );
            assert!(calls.iter().any(|c| c.contains("limit=500")), "{calls:?}");
        }
    }

    #[tokio::test]
    async fn a_refusal_is_the_answer_not_a_fallback() {
        let (got, calls) = names(|_, query| match query.contains("limit=1") {
            true => (200, list(&["a"], Some("7"), Some("t"))),
            false => (
                403,
                json!({"kind": "Status", "code": 403, "message": "forbidden"}).to_string(),
            ),
        })
        .await;
        assert_eq!(got, Err(403));
        assert_eq!(calls.len(), 2, "{calls:?}");
        let (got, _) = names(|_, _| {
            (
                403,
                json!({"kind": "Status", "code": 403, "message": "forbidden"}).to_string(),
            )
        })
        .await;
        assert_eq!(got, Err(403));
    }
}
