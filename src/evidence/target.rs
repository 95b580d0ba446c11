//! Which resource a command reads: `--resource TYPE` resolved against the API server's discovery
//! (live) or a bundle's `crd.json` (and its `meta.json` `resource`), the Microservice when absent;
//! and an object argument's `TYPE/NAME` matched against it.

use std::path::Path;

use kube::Client;

use crate::error::AppError;
use crate::resource::identity::{self, PickError, ResourceId};

/// The resource `typed` (`--resource`'s value) names among the API server's resources, by
/// discovery (only the group's when `typed` is `PLURAL.GROUP`-qualified and the group is served;
/// else every group's preferred version, as kubectl searches them). Absent: the Microservice.
///
/// Errors: kubectl's `the server doesn't have a resource type "X"` (exit 3: the cluster has no
/// such resource); a type that names several resources (exit 2, naming them); discovery that
/// fails (exit 3).
pub async fn live(client: &Client, typed: Option<&str>) -> Result<ResourceId, AppError> {
    let Some(typed) = typed else {
        return Ok(ResourceId::microservice());
    };
    let lower = typed.to_ascii_lowercase();
    let group = lower.split_once('.').map(|(_, rest)| rest.to_string());
    let discover = |group: Option<String>| async move {
        crate::client::discovery::preferred_resources(client, group.as_deref())
            .await
            .map_err(|e| AppError::kube(format!("discover the API server's resources for --resource {typed}"), e))
    };
    // `PLURAL.GROUP` asks only that group; `PLURAL.VERSION.GROUP` and a dotted kind are found
    // in the full discovery when the first guess has no match.
    let mut candidates = discover(group.clone()).await?;
    let mut ids = ResourceId::from_api_resources(&candidates);
    if group.is_some() && identity::pick(typed, &ids).is_err() {
        candidates = discover(None).await?;
        ids = ResourceId::from_api_resources(&candidates);
    }
    pick(typed, &ids, || {
        format!("the server doesn't have a resource type {typed:?}")
    })
}

/// The resource `typed` names in the bundle `dir`: its `crd.json`'s CRDs and the Microservice.
/// Absent: the Microservice, unless the bundle holds no `microservices.json` and the objects'
/// file of exactly one of its CRDs (what `collect --resource` writes).
///
/// Errors: `the bundle DIR doesn't have a resource type "X"` naming what it has (exit 3, as
/// kubectl's answer for a server); a type that names several (exit 2).
pub fn in_bundle(dir: &Path, typed: Option<&str>) -> Result<ResourceId, AppError> {
    let candidates = super::bundle::resource_candidates(dir);
    let mut ids: Vec<ResourceId> = candidates.iter().map(|(id, _)| id.clone()).collect();
    if !ids.iter().any(ResourceId::is_microservice) {
        ids.push(ResourceId::microservice());
    }
    let Some(typed) = typed else {
        let held: Vec<&ResourceId> = candidates
            .iter()
            .filter(|(id, held)| *held && !id.is_microservice())
            .map(|(id, _)| id)
            .collect();
        return Ok(match held.as_slice() {
            [one] if !dir.join(ResourceId::microservice().bundle_file()).exists() => (*one).clone(),
            _ => ResourceId::microservice(),
        });
    };
    pick(typed, &ids, || {
        let has: Vec<String> = ids.iter().map(ResourceId::qualified).collect();
        format!(
            "the bundle {} doesn't have a resource type {typed:?}: it has {} (its crd.json and the Microservice)",
            dir.display(),
            has.join(", ")
        )
    })
}

/// The resources of the bundle `dir` (its CRDs' and the Microservice) whose objects carry one of
/// Kopf's annotations (`kopf.zalando.org/...`: progress records, the finalizer's peers; or a
/// `*/last-handled-configuration` diff-base of any prefix), as
/// `PLURAL.GROUP`: what `--resource` completes to. Unreadable files give none.
pub fn kopf_handled_in_bundle(dir: &Path) -> Vec<String> {
    let mut ids: Vec<ResourceId> = super::bundle::resource_candidates(dir)
        .into_iter()
        .filter(|(_, held)| *held)
        .map(|(id, _)| id)
        .collect();
    if !ids.iter().any(ResourceId::is_microservice) {
        ids.push(ResourceId::microservice());
    }
    ids.into_iter()
        .filter(|id| {
            let snapshot = super::bundle::read_resource(dir, id);
            snapshot.ok().is_some_and(|s| {
                s.microservices.get().is_some_and(|objects| {
                    objects.iter().any(|o| {
                        o.metadata.annotations.iter().flatten().any(|(k, _)| {
                            k.starts_with("kopf.zalando.org/") || k.ends_with(crate::vocab::cause::LAST_HANDLED_SUFFIX)
                        })
                    })
                })
            })
        })
        .map(|id| id.qualified())
        .collect()
}

fn pick(typed: &str, ids: &[ResourceId], none: impl FnOnce() -> String) -> Result<ResourceId, AppError> {
    identity::pick(typed, ids).map_err(|e| match e {
        PickError::None => AppError::Undecided(none()),
        PickError::Several(names) => AppError::Usage(format!(
            "--resource {typed:?} names several resource types: {}; name one as PLURAL.GROUP",
            names.join(", ")
        )),
    })
}

/// An object argument (`NAME`, `NAMESPACE/NAME`, or with `--resource` a `TYPE/NAME`) with its
/// type part dropped when it names `resource` (kubectl's convention: a type name wins over a
/// namespace of the same name). A dotted first part that names another type is refused (exit 2),
/// naming the resource's type names; any other first part is a namespace, checked by the command.
pub fn object_arg(given: &str, resource: &ResourceId) -> Result<String, AppError> {
    match given.split_once('/') {
        Some((first, name)) if resource.named_by(first) => Ok(name.to_string()),
        Some((first, _)) if first.contains('.') || first.chars().any(|c| c.is_ascii_uppercase()) => {
            let mut names = vec![resource.plural.clone()];
            names.extend([resource.singular.clone()].into_iter().filter(|s| !s.is_empty()));
            names.extend(resource.short_names.iter().cloned());
            names.push(resource.qualified());
            Err(AppError::Usage(format!(
                "expected NAME, TYPE/NAME (TYPE: {}) or NAMESPACE/NAME: {first:?} is not a type of {}",
                names.join(", "),
                resource.qualified()
            )))
        }
        _ => Ok(given.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kopf() -> ResourceId {
        ResourceId::kopf_example()
    }

    #[test]
    fn type_slash_name_of_the_resource_drops_its_type() {
        let kopf = kopf();
        for given in [
            "kex/kopf-example-1",
            "kopfexamples.kopf.dev/kopf-example-1",
            "KopfExample/kopf-example-1",
        ] {
            assert_eq!(object_arg(given, &kopf).unwrap(), "kopf-example-1", "{given}");
        }
        assert_eq!(
            object_arg("default/kopf-example-1", &kopf).unwrap(),
            "default/kopf-example-1"
        );
        assert_eq!(object_arg("kopf-example-1", &kopf).unwrap(), "kopf-example-1");
        let err = object_arg("microservices.platform.example.io/x", &kopf).unwrap_err();
        assert!(matches!(err, AppError::Usage(_)));
        assert_eq!(
            err.to_string(),
            "expected NAME, TYPE/NAME (TYPE: kopfexamples, kopfexample, kex, kopfexamples.kopf.dev) or NAMESPACE/NAME: \"microservices.platform.example.io\" is not a type of kopfexamples.kopf.dev"
        );
    }

    #[test]
    fn completion_offers_the_resources_whose_objects_kopf_annotated() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let kopf = root.join("tests/fixtures/kopf-examples-captured/03-1.38-created");
        assert_eq!(kopf_handled_in_bundle(&kopf), ["kopfexamples.kopf.dev"]);
        // The object is gone: nothing to complete to.
        assert!(kopf_handled_in_bundle(&root.join("tests/fixtures/kopf-examples-captured/03-1.38")).is_empty());
        // A Kopf-handled Microservice bundle offers the Microservice.
        let ms = root.join("tests/fixtures/bundles-captured/kopf-finalizer-terminating");
        assert_eq!(kopf_handled_in_bundle(&ms), ["microservices.platform.example.io"]);
    }

    #[test]
    fn a_bundle_without_the_type_says_what_it_has() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/warnings-hidden");
        assert!(in_bundle(&dir, None).unwrap().is_microservice());
        assert!(in_bundle(&dir, Some("ms")).unwrap().is_microservice());
        let err = in_bundle(&dir, Some("kopfexamples.kopf.dev")).unwrap_err();
        assert!(matches!(err, AppError::Undecided(_)), "{err:?}");
        assert!(
            err.to_string().ends_with(
                "doesn't have a resource type \"kopfexamples.kopf.dev\": it has microservices.platform.example.io (its crd.json and the Microservice)"
            ),
            "{err}"
        );
    }
}
