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
    K: DeserializeOwned + Clone + Send + 'static,
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
/// The next page is asked for as soon as a page's continue token is read, before its items are
/// decoded and before `each_page` works on them: a first pass over the body reads the list's
/// metadata and skips the items ([`ListSkeleton`]; a custom resource's list has its metadata
/// after the items), and the API server reads and sends page k+1 while another thread decodes
/// page k's items and the caller judges them. A list of 10,000 objects costs the pages' round
/// trips or our work, whichever is more, not their sum (issue 22; issue 19: decoding before
/// asking left 15-40 ms between pages in the API server's audit log). At most two pages are
/// held.
///
/// Errors: as [`list_all`]; the pages before the error were handed over, and a page asked for
/// ahead of a failed one is cancelled.
pub async fn list_pages<K>(
    client: &Client,
    url_path: &str,
    params: ListParams,
    mut each_page: impl FnMut(Vec<K>, Option<DateTime<Utc>>),
) -> Result<Option<DateTime<Utc>>, kube::Error>
where
    K: DeserializeOwned + Clone + Send + 'static,
{
    let fetch = |params: ListParams| {
        let client = client.clone();
        let url_path = url_path.to_string();
        let (token_sender, token) = tokio::sync::oneshot::channel();
        let page = tokio::spawn(async move {
            let request = kube::core::Request::new(url_path)
                .list(&params)
                .map_err(kube::Error::BuildRequest)?;
            let (body, date) = send_for_bytes(&client, request).await?;
            // A body the skeleton cannot read is no list: the decode below says why.
            let next = serde_json::from_slice::<ListSkeleton>(&body)
                .ok()
                .and_then(|list| list.metadata.continue_)
                .filter(|token| !token.is_empty());
            let _ = token_sender.send(next);
            let list: ObjectList<K> = serde_json::from_slice(&body).map_err(kube::Error::SerdeError)?;
            Ok::<_, kube::Error>((list.items, date))
        });
        (token, page)
    };
    let params = params.limit(PAGE_SIZE);
    let mut date = None;
    let mut pending = Some(fetch(params.clone()));
    while let Some((token, page)) = pending.take() {
        // A dropped sender (the request failed) leaves no next page; `page` holds the error.
        if let Ok(Some(token)) = token.await {
            pending = Some(fetch(params.clone().continue_token(&token)));
        }
        let page = page.await.map_err(|join| kube::Error::Service(Box::new(join)));
        let (items, page_date) = match page.and_then(|decoded| decoded) {
            Ok(page) => page,
            Err(e) => {
                if let Some((_, ahead)) = pending {
                    ahead.abort();
                }
                return Err(e);
            }
        };
        date = date.or(page_date);
        each_page(items, date);
    }
    Ok(date)
}

/// What [`list_pages`] reads of a page before its items: the list's metadata, the items
/// skipped unparsed (serde ignores the fields a struct does not name).
#[derive(serde::Deserialize)]
struct ListSkeleton {
    #[serde(default)]
    metadata: kube::core::ListMeta,
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
    let (body, date) = send_for_bytes(client, request).await?;
    serde_json::from_slice(&body)
        .map(|v| (v, date))
        .map_err(kube::Error::SerdeError)
}

/// Sends `request` and reads its successful answer's body whole, with the API server's clock
/// (`Date` header, when it sent one).
///
/// Errors: as [`send_json`], without the decoding.
async fn send_for_bytes(
    client: &Client,
    request: Request<Vec<u8>>,
) -> Result<(bytes::Bytes, Option<DateTime<Utc>>), kube::Error> {
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
    Ok((bytes, date))
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

#[cfg(test)]
mod tests {
    //! Against a mocked API server (`tower_test`, [`crate::client::fake::fake_api`]).

    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::{Duration, Instant};

    use serde::de::{Deserialize, Deserializer, IgnoredAny};
    use serde_json::json;

    use super::*;

    /// Pages the fake API server below has been asked for.
    static PAGES_ASKED: AtomicUsize = AtomicUsize::new(0);

    /// An item whose decoding waits (up to 10 s) until the next page has been asked for, and
    /// holds whether it was.
    #[derive(Clone)]
    struct DecodedOnceNextAsked(bool);

    impl<'de> Deserialize<'de> for DecodedOnceNextAsked {
        fn deserialize<D: Deserializer<'de>>(item: D) -> Result<Self, D::Error> {
            IgnoredAny::deserialize(item)?;
            let deadline = Instant::now() + Duration::from_secs(10);
            while PAGES_ASKED.load(Ordering::SeqCst) < 2 {
                if Instant::now() > deadline {
                    return Ok(Self(false));
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            Ok(Self(true))
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_next_page_is_asked_for_before_a_pages_items_are_decoded() {
        let (client, seen) = crate::client::fake::fake_api(|_, query| {
            PAGES_ASKED.fetch_add(1, Ordering::SeqCst);
            let next = if query.contains("continue=") {
                None
            } else {
                Some("page-2")
            };
            let body = json!({"kind": "List", "apiVersion": "v1",
                "metadata": {"resourceVersion": "9", "continue": next}, "items": [{"n": 1}, {"n": 2}]});
            (200, body.to_string())
        });
        let mut pages = Vec::new();
        list_pages(
            &client,
            "/api/v1/pods",
            ListParams::default(),
            |page: Vec<DecodedOnceNextAsked>, _| pages.push(page.iter().map(|item| item.0).collect::<Vec<_>>()),
        )
        .await
        .unwrap();
        assert_eq!(pages, [vec![true, true], vec![true, true]]);
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 2);
        assert!(seen[1].contains("continue=page-2"), "{seen:?}");
    }

    #[tokio::test]
    async fn a_page_that_is_no_list_is_an_error_and_no_next_page_is_asked() {
        let (client, seen) = crate::client::fake::fake_api(|_, _| (200, r#"{"items": 7}"#.to_string()));
        let mut pages = 0;
        let result = list_pages(
            &client,
            "/api/v1/pods",
            ListParams::default(),
            |_: Vec<serde_json::Value>, _| pages += 1,
        )
        .await;
        assert!(matches!(result, Err(kube::Error::SerdeError(_))), "{result:?}");
        assert_eq!(pages, 0);
        assert_eq!(seen.lock().unwrap().len(), 1);
    }
}
