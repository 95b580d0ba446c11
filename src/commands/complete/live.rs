//! Candidates that only the cluster or the kubeconfig knows: Microservice names, namespaces,
//! context names.
//!
//! Every lookup is bounded by a budget and fails quietly: a shell waiting on completion must get
//! an answer (possibly empty) in time, and nothing on stderr. The client is built with
//! [`Usage::Completion`]: short timeouts, no retries, exec credential plugins run without the
//! terminal (never an interactive login).

use std::future::Future;
use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ListParams};
use kube::{Client, Config};

use crate::cli::GlobalArgs;
use crate::client::{self, Usage};
use crate::resource::MicroserviceObject;

/// Names of the Microservice objects in the namespace of the line (`-n`, else the context's
/// default namespace), or in all namespaces with `-A`; sorted, without duplicates, starting
/// with `prefix`. Empty when the cluster cannot be asked within `budget`.
pub fn microservice_names(global: &GlobalArgs, prefix: &str, budget: Duration) -> Vec<String> {
    let all = global.all_namespaces;
    let namespace = global.namespaces.first().cloned();
    let names = with_cluster(global, budget, move |client, config| async move {
        let api: Api<MicroserviceObject> = match (all, namespace) {
            (true, _) => Api::all(client),
            (false, Some(ns)) => Api::namespaced(client, &ns),
            (false, None) => Api::namespaced(client, &config.default_namespace),
        };
        let list = api.list_metadata(&ListParams::default()).await?;
        Ok(list.items.into_iter().filter_map(|o| o.metadata.name).collect())
    });
    matching(names, prefix)
}

/// Names of the namespaces the line's identity may list, starting with `prefix`. Empty when
/// forbidden or when the cluster cannot be asked within `budget`.
pub fn namespaces(global: &GlobalArgs, prefix: &str, budget: Duration) -> Vec<String> {
    let names = with_cluster(global, budget, |client, _| async move {
        let list = Api::<Namespace>::all(client)
            .list_metadata(&ListParams::default())
            .await?;
        Ok(list.items.into_iter().filter_map(|o| o.metadata.name).collect())
    });
    matching(names, prefix)
}

/// Context names of the line's kubeconfig (`--kubeconfig`, else `$KUBECONFIG` merged as kubectl
/// merges it, its missing files skipped, else `~/.kube/config`), starting with `prefix`. Local: no cluster is asked.
pub fn contexts(global: &GlobalArgs, prefix: &str) -> Vec<String> {
    // Read as every command reads it: a missing file in KUBECONFIG is skipped, as kubectl does.
    let names = crate::client::kubeconfig_of(&global.connection())
        .map(|k| k.contexts.into_iter().map(|c| c.name).collect())
        .unwrap_or_default();
    matching(names, prefix)
}

/// Sorted, deduplicated names that start with `prefix`.
fn matching(mut names: Vec<String>, prefix: &str) -> Vec<String> {
    names.retain(|n| n.starts_with(prefix));
    names.sort();
    names.dedup();
    names
}

/// Runs `lookup` with a client for the line's cluster and returns its names, or none when the
/// configuration, the client, the credentials or the call fail, or when `budget` runs out.
///
/// The client is built on the blocking pool, because kube-client runs an exec credential plugin
/// synchronously while building it; at the deadline the runtime is dropped without waiting, so
/// a slow plugin or a silent server cannot hold the shell.
fn with_cluster<F, Fut>(global: &GlobalArgs, budget: Duration, lookup: F) -> Vec<String>
where
    F: FnOnce(Client, Config) -> Fut,
    Fut: Future<Output = Result<Vec<String>, kube::Error>>,
{
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread().enable_all().build() else {
        return Vec::new();
    };
    let connection = global.connection();
    let names = runtime.block_on(async move {
        let lookup = async move {
            let config = client::config(&connection, Usage::Completion { budget }).await.ok()?;
            let built = config.clone();
            let client = tokio::task::spawn_blocking(move || Client::try_from(built))
                .await
                .ok()?
                .ok()?;
            lookup(client, config).await.ok()
        };
        tokio::time::timeout(budget, lookup).await
    });
    runtime.shutdown_background();
    names.ok().flatten().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matching_filters_sorts_and_dedupes() {
        let names = vec![
            "todo-api".to_string(),
            "web".into(),
            "todo-db".into(),
            "todo-api".into(),
        ];
        assert_eq!(matching(names, "todo"), ["todo-api", "todo-db"]);
    }

    #[test]
    fn contexts_come_from_the_lines_kubeconfig() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config");
        std::fs::write(
            &path,
            "apiVersion: v1\nkind: Config\nclusters: []\nusers: []\ncurrent-context: prod\n\
             contexts:\n- name: prod\n  context: {cluster: a, user: b}\n- name: staging\n  context: {cluster: a, user: b}\n\
             - name: dev\n  context: {cluster: a, user: b}\n",
        )
        .unwrap();
        let global = GlobalArgs {
            kubeconfig: Some(path),
            ..crate::commands::complete::tests::no_flags()
        };
        assert_eq!(contexts(&global, ""), ["dev", "prod", "staging"]);
        assert_eq!(contexts(&global, "st"), ["staging"]);
        let missing = GlobalArgs {
            kubeconfig: Some(dir.path().join("nosuch")),
            ..crate::commands::complete::tests::no_flags()
        };
        assert!(contexts(&missing, "").is_empty());
    }
}
