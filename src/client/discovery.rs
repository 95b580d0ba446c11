//! API discovery, as kubectl does it to resolve a resource type: the core group's `v1` and each
//! group's preferred version (`/apis`, then `/apis/GROUP/VERSION`), read concurrently.

use futures::stream::{self, StreamExt};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::APIResourceList;
use kube::Client;

/// How many `/apis/GROUP/VERSION` reads are in flight at once.
const CONCURRENT: usize = 8;

/// The `APIResourceList` of every group's preferred version (and of core `v1`), or of `group`'s
/// only when it is given (`kopf.dev`: the `.GROUP` of a `--resource PLURAL.GROUP`; a group the
/// server does not serve gives none). A group whose list fails (an aggregated API that is down)
/// is left out, as kubectl leaves it out with a warning; the group list itself failing is the error.
pub async fn preferred_resources(client: &Client, group: Option<&str>) -> Result<Vec<APIResourceList>, kube::Error> {
    let groups = client.list_api_groups().await?;
    let mut versions: Vec<String> = groups
        .groups
        .iter()
        .filter(|g| group.is_none_or(|wanted| g.name == wanted))
        .filter_map(|g| {
            g.preferred_version
                .as_ref()
                .map(|v| v.group_version.clone())
                .or_else(|| g.versions.first().map(|v| v.group_version.clone()))
        })
        .collect();
    if group.is_none_or(str::is_empty) {
        versions.insert(0, "v1".into());
    }
    let lists: Vec<Option<APIResourceList>> = stream::iter(versions)
        .map(|gv| async move {
            let list = if gv.contains('/') {
                client.list_api_group_resources(&gv).await
            } else {
                client.list_core_api_resources(&gv).await
            };
            match list {
                Ok(list) => Some(list),
                Err(e) => {
                    tracing::warn!("discovery: {gv} could not be read: {e}");
                    None
                }
            }
        })
        .buffered(CONCURRENT)
        .collect()
        .await;
    Ok(lists.into_iter().flatten().collect())
}
