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
/// The next page is asked for as soon as a page's continue token is read, before `each_page`
/// works on it: the API server reads and sends page k+1 (and another thread parses it) while
/// the caller judges page k, so a list of 10,000 objects costs the pages' round trips or the
/// caller's work, whichever is more, not their sum (issue 22). At most two pages are held.
///
/// Errors: as [`list_all`]; the pages before the error were handed over.
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
        tokio::spawn(async move {
            let request = kube::core::Request::new(url_path)
                .list(&params)
                .map_err(kube::Error::BuildRequest)?;
            send_json::<ObjectList<K>>(&client, request).await
        })
    };
    let params = params.limit(PAGE_SIZE);
    let mut date = None;
    let mut pending = Some(fetch(params.clone()));
    while let Some(page) = pending.take() {
        let (list, page_date) = page.await.map_err(|e| kube::Error::Service(Box::new(e)))??;
        date = date.or(page_date);
        if let Some(token) = list.metadata.continue_.as_deref().filter(|c| !c.is_empty()) {
            pending = Some(fetch(params.clone().continue_token(token)));
        }
        each_page(list.items, date);
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
