//! What the controller keeps of each watched Microservice: only what a pass over it and its
//! leadership term read, so that the cache costs little per object (kube-rs' advice for
//! reflectors: modify watch events before the store, `WatchStreamExt::modify`).
//!
//! Kept, and why:
//! - `metadata.name`, `namespace`, `uid`, `resourceVersion`: the object's identity, the events'
//!   `regarding` reference and the status write's path;
//! - `metadata.generation`: the cause (create / update / resume) and `observedGeneration`;
//! - `metadata.deletionTimestamp`: an object being deleted is not handled;
//! - `metadata.finalizers` (all, so the index of Kopf's in the suggested `kubectl patch` is right);
//! - the Kopf `*/last-handled-configuration` annotations: the takeover from a Kopf operator;
//! - `spec` as stored (one that does not parse is kept as is, and judged by the handler);
//! - `status` as stored: whether the status to write is already there.
//!
//! Dropped: `managedFields` (often the biggest part), every other annotation (such as
//! `kubectl.kubernetes.io/last-applied-configuration`, a copy of the whole object), labels,
//! owner references, `creationTimestamp` and the rest of the metadata.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::cause::LAST_HANDLED_SUFFIX;
use crate::resource::MicroserviceObject;

/// Strips `obj` down to what the controller reads (module docs), in place.
pub fn keep_needed(obj: &mut MicroserviceObject) {
    let meta = std::mem::take(&mut obj.metadata);
    let annotations = meta
        .annotations
        .map(|all| {
            all.into_iter()
                .filter(|(key, _)| key.ends_with(LAST_HANDLED_SUFFIX))
                .collect::<std::collections::BTreeMap<_, _>>()
        })
        .filter(|kept| !kept.is_empty());
    obj.metadata = ObjectMeta {
        name: meta.name,
        namespace: meta.namespace,
        uid: meta.uid,
        resource_version: meta.resource_version,
        generation: meta.generation,
        deletion_timestamp: meta.deletion_timestamp,
        finalizers: meta.finalizers.filter(|f| !f.is_empty()),
        annotations,
        ..ObjectMeta::default()
    };
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use chrono::Utc;
    use kube::Resource;
    use serde_json::{Value, json};

    use super::*;
    use crate::operate::cause::{decide, kopf_finalizer_index};
    use crate::operate::status::{Outcome, already_written, desired_status};
    use crate::operate::validate::validate_spec;

    /// Every Microservice in the repository's fixtures (bundles and single objects), read as the
    /// operator's watch reads them.
    fn fixture_objects() -> Vec<MicroserviceObject> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut files = vec![root.join("f-todo-api-stale-accepted.json")];
        for dir in ["bundles", "bundles-synthetic"] {
            for entry in std::fs::read_dir(root.join(dir)).unwrap() {
                let file = entry.unwrap().path().join("microservices.json");
                if file.exists() {
                    files.push(file);
                }
            }
        }
        let mut objects = Vec::new();
        for file in files {
            let value: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
            let items = match value.get("items") {
                Some(Value::Array(items)) => items.clone(),
                _ => vec![value],
            };
            objects.extend(items.into_iter().map(|v| serde_json::from_value(v).unwrap()));
        }
        assert!(objects.len() >= 10, "fixtures found: {}", objects.len());
        objects
    }

    /// What a pass reads of an object, computed from it.
    fn what_a_pass_reads(obj: &MicroserviceObject) -> String {
        let outcome = match validate_spec(&obj.spec) {
            Ok(spec) => Outcome::Accepted(spec),
            Err(errors) => Outcome::Invalid(errors),
        };
        let now = "2026-12-01T00:00:00Z".parse::<chrono::DateTime<Utc>>().unwrap();
        let generation = obj.metadata.generation.unwrap_or(0);
        let desired = desired_status(&outcome, generation, obj.status.as_ref(), now);
        format!(
            "{:?} | {:?} | {:?} | {:?} | {:?} | {}",
            [None, Some(0), Some(generation), Some(generation - 1)].map(|handled| decide(obj, handled)),
            kopf_finalizer_index(obj),
            obj.object_ref(&()),
            obj.metadata.deletion_timestamp,
            outcome,
            already_written(obj.status.as_ref(), &desired),
        )
    }

    #[test]
    fn a_stripped_object_gives_every_pass_the_same_answers() {
        for obj in fixture_objects() {
            let mut stripped = obj.clone();
            keep_needed(&mut stripped);
            assert_eq!(
                what_a_pass_reads(&stripped),
                what_a_pass_reads(&obj),
                "{:?}",
                obj.metadata.name
            );
            assert!(stripped.metadata.managed_fields.is_none());
            assert!(stripped.metadata.labels.is_none());
        }
    }

    #[test]
    fn managed_fields_and_other_annotations_go_kopf_records_and_bad_specs_stay() {
        let mut obj: MicroserviceObject = serde_json::from_value(json!({
            "apiVersion": "platform.example.io/v1alpha1", "kind": "Microservice",
            "metadata": {
                "name": "todo-api", "namespace": "todo", "uid": "u1", "generation": 3,
                "resourceVersion": "77", "creationTimestamp": "2026-11-29T16:21:13Z",
                "labels": {"app": "todo"},
                "annotations": {
                    "kopf.zalando.org/last-handled-configuration": "{\"spec\":{\"port\":80}}",
                    "example.com/last-handled-configuration": "{\"spec\":{}}",
                    "kubectl.kubernetes.io/last-applied-configuration": "{\"a\":1}"
                },
                "finalizers": ["other", "kopf.zalando.org/KopfFinalizerMarker"],
                "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "x", "uid": "c1"}],
                "managedFields": [{"manager": "kubectl", "operation": "Update", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}}}]
            },
            "spec": {"image": "", "port": "eighty", "extra": [1, 2]},
            "status": {"phase": "Invalid", "observedGeneration": 2}
        }))
        .unwrap();
        let spec = obj.spec.clone();
        let status = obj.status.clone();
        keep_needed(&mut obj);
        assert_eq!(
            serde_json::to_value(&obj.metadata).unwrap(),
            json!({
                "name": "todo-api", "namespace": "todo", "uid": "u1", "generation": 3,
                "resourceVersion": "77",
                "annotations": {
                    "example.com/last-handled-configuration": "{\"spec\":{}}",
                    "kopf.zalando.org/last-handled-configuration": "{\"spec\":{\"port\":80}}"
                },
                "finalizers": ["other", "kopf.zalando.org/KopfFinalizerMarker"]
            })
        );
        assert_eq!(obj.spec, spec, "a spec that does not validate is kept as stored");
        assert_eq!(obj.status, status);
    }

    #[test]
    fn no_kopf_annotation_leaves_no_annotations() {
        let mut obj: MicroserviceObject = serde_json::from_value(json!({
            "metadata": {"name": "a", "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"}},
            "spec": {}
        }))
        .unwrap();
        keep_needed(&mut obj);
        assert_eq!(obj.metadata.annotations, None);
    }
}
