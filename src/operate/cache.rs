//! What the controller keeps of each watched Microservice: only what a pass over it and its
//! leadership term read, in a compact form, so that the cache costs little per object (kube-rs'
//! advice for reflectors: shrink what the store keeps; here the watch decodes straight into
//! [`CachedMicroservice`], so `managedFields` and unneeded annotations are skipped while parsing,
//! never allocated).
//!
//! Kept, and why:
//! - `metadata.name`, `namespace`, `uid`, `resourceVersion`: the object's identity, the events'
//!   `regarding` reference and the status write's path;
//! - `metadata.generation`: the cause (create / update / resume) and `observedGeneration`;
//! - `metadata.deletionTimestamp`: an object being deleted is not handled;
//! - `metadata.finalizers` (all, so the index of Kopf's in the suggested `kubectl patch` is right);
//! - the Kopf `*/last-handled-configuration` annotations: the takeover from a Kopf operator;
//! - `spec` as stored, whole, as compact JSON text (one that does not parse is kept as is, and
//!   judged by the handler; a Kopf takeover compares the whole spec);
//! - of `status`, what a pass compares and carries over ([`crate::operate::status`]): `phase`,
//!   `observedGeneration`, `acceptedSpec` and the first `Accepted` condition, as compact JSON
//!   text. A `status` that is not a JSON object is kept whole.
//!
//! Dropped: `managedFields` (often the biggest part), every other annotation (such as
//! `kubectl.kubernetes.io/last-applied-configuration`, a copy of the whole object), labels,
//! owner references, `creationTimestamp`, the rest of the metadata and of the status.
//!
//! JSON text rather than `serde_json::Value`: a `Value` object is a `BTreeMap` whose first node
//! alone takes about 0.6 KiB, so a spec of two fields and a status of four cost about 3 KiB as
//! values and about 0.4 KiB as text. A pass parses the text again ([`CachedMicroservice::object`],
//! a few microseconds).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kube::Resource;
use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;

use super::status::CONDITION_TYPE;
use crate::resource::{GROUP, KIND, MicroserviceObject, PLURAL, VERSION};
use crate::vocab::cause::LAST_HANDLED_SUFFIX;

/// A Microservice as the controller's watch cache holds it (module docs): the metadata a pass
/// reads, `spec` whole and the needed part of `status`, both as compact JSON text. Decoded
/// straight from the API's JSON (list pages and watch events alike) without building the rest.
/// [`CachedMicroservice::object`] gives the [`MicroserviceObject`] a pass works on.
#[derive(Debug, Clone, PartialEq)]
pub struct CachedMicroservice {
    metadata: ObjectMeta,
    /// `spec` as stored, compact JSON (`null` when absent).
    spec: Box<str>,
    /// The needed part of `status`, compact JSON; `None` when absent or `null`.
    status: Option<Box<str>>,
}

impl Resource for CachedMicroservice {
    type DynamicType = ();
    type Scope = NamespaceResourceScope;

    fn kind(_: &()) -> Cow<'_, str> {
        KIND.into()
    }
    fn group(_: &()) -> Cow<'_, str> {
        GROUP.into()
    }
    fn version(_: &()) -> Cow<'_, str> {
        VERSION.into()
    }
    fn plural(_: &()) -> Cow<'_, str> {
        PLURAL.into()
    }
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

impl CachedMicroservice {
    /// The object a pass works on: the kept metadata, `spec` as stored and the kept part of
    /// `status`, parsed again from their text. Every pure step of a pass
    /// ([`crate::operate::cause::decide`], validation, [`crate::operate::status`]) answers on it
    /// as on the object the API sent (`a_cached_object_gives_every_pass_the_same_answers`).
    pub fn object(&self) -> MicroserviceObject {
        MicroserviceObject {
            metadata: self.metadata.clone(),
            spec: parse(&self.spec),
            status: self.status.as_deref().map(parse),
        }
    }

    /// Bytes of JSON text kept for `spec` and `status` (for tests and measurements).
    pub fn text_bytes(&self) -> usize {
        self.spec.len() + self.status.as_deref().map_or(0, str::len)
    }
}

impl From<MicroserviceObject> for CachedMicroservice {
    /// The cached form of an object already decoded in full: the same as decoding its JSON as
    /// a [`CachedMicroservice`].
    fn from(mut obj: MicroserviceObject) -> Self {
        keep_needed(&mut obj);
        CachedMicroservice {
            metadata: obj.metadata,
            spec: to_text(&obj.spec),
            status: obj.status.map(|s| to_text(&needed_status(s))),
        }
    }
}

impl<'de> Deserialize<'de> for CachedMicroservice {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let wire = Wire::deserialize(deserializer)?;
        let meta = wire.metadata;
        Ok(CachedMicroservice {
            metadata: ObjectMeta {
                name: meta.name,
                namespace: meta.namespace,
                uid: meta.uid,
                resource_version: meta.resource_version,
                generation: meta.generation,
                deletion_timestamp: meta.deletion_timestamp,
                finalizers: meta.finalizers.filter(|f| !f.is_empty()),
                annotations: meta.annotations,
                ..ObjectMeta::default()
            },
            spec: to_text(&wire.spec),
            status: wire.status.map(|s| to_text(&needed_status(s))),
        })
    }
}

/// The JSON of a Microservice as far as the cache reads it; every other field (`managedFields`
/// first) is skipped by the parser without being built.
#[derive(Deserialize)]
struct Wire {
    #[serde(default)]
    metadata: WireMeta,
    #[serde(default)]
    spec: Value,
    #[serde(default)]
    status: Option<Value>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireMeta {
    name: Option<String>,
    namespace: Option<String>,
    uid: Option<String>,
    resource_version: Option<String>,
    generation: Option<i64>,
    deletion_timestamp: Option<Time>,
    finalizers: Option<Vec<String>>,
    #[serde(default, deserialize_with = "kopf_annotations")]
    annotations: Option<BTreeMap<String, String>>,
}

/// Only the `*/last-handled-configuration` annotations; the others' values are skipped unread.
/// `None` when none is there.
fn kopf_annotations<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<BTreeMap<String, String>>, D::Error> {
    struct Keep;
    impl<'de> Visitor<'de> for Keep {
        type Value = Option<BTreeMap<String, String>>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a map of annotations")
        }
        fn visit_none<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
            deserializer.deserialize_map(Keep)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut kept = BTreeMap::new();
            while let Some(key) = map.next_key::<String>()? {
                if key.ends_with(LAST_HANDLED_SUFFIX) {
                    kept.insert(key, map.next_value::<String>()?);
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            Ok((!kept.is_empty()).then_some(kept))
        }
    }
    deserializer.deserialize_option(Keep)
}

/// Of a `status` object, what a pass reads: `phase`, `observedGeneration`, `acceptedSpec`, and
/// the first condition of type `Accepted` (the one [`crate::operate::status`] compares and
/// carries `lastTransitionTime` over from). Anything but an object is kept whole.
fn needed_status(status: Value) -> Value {
    let Value::Object(mut all) = status else {
        return status;
    };
    let mut kept = serde_json::Map::new();
    for key in ["phase", "observedGeneration", "acceptedSpec"] {
        if let Some(value) = all.remove(key) {
            kept.insert(key.to_string(), value);
        }
    }
    if let Some(Value::Array(conditions)) = all.remove("conditions")
        && let Some(accepted) = conditions
            .into_iter()
            .find(|c| c.get("type").and_then(Value::as_str) == Some(CONDITION_TYPE))
    {
        kept.insert("conditions".to_string(), Value::Array(vec![accepted]));
    }
    Value::Object(kept)
}

fn to_text(value: &Value) -> Box<str> {
    // A Value always serialises (its keys are strings); "null" only for the impossible case.
    serde_json::to_string(value)
        .unwrap_or_else(|_| "null".into())
        .into_boxed_str()
}

fn parse(text: &str) -> Value {
    // The text is our own serialisation of a Value, so it parses back to the same Value.
    serde_json::from_str(text).unwrap_or(Value::Null)
}

/// Strips `obj`'s metadata down to what the controller reads (module docs), in place.
pub fn keep_needed(obj: &mut MicroserviceObject) {
    let meta = std::mem::take(&mut obj.metadata);
    let annotations = meta
        .annotations
        .map(|all| {
            all.into_iter()
                .filter(|(key, _)| key.ends_with(LAST_HANDLED_SUFFIX))
                .collect::<BTreeMap<_, _>>()
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
        fixture_json()
            .into_iter()
            .map(|v| serde_json::from_value(v).unwrap())
            .collect()
    }

    /// The same objects as the API's JSON.
    fn fixture_json() -> Vec<Value> {
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
            objects.extend(items);
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
    fn a_cached_object_gives_every_pass_the_same_answers() {
        for json in fixture_json() {
            let obj: MicroserviceObject = serde_json::from_value(json.clone()).unwrap();
            let decoded: CachedMicroservice = serde_json::from_str(&json.to_string()).unwrap();
            assert_eq!(
                decoded,
                CachedMicroservice::from(obj.clone()),
                "decoding the JSON and converting the object agree: {:?}",
                obj.metadata.name
            );
            let again = decoded.object();
            assert_eq!(
                what_a_pass_reads(&again),
                what_a_pass_reads(&obj),
                "{:?}",
                obj.metadata.name
            );
            assert_eq!(again.spec, obj.spec, "the spec is kept whole");
            assert!(again.metadata.managed_fields.is_none());
            assert!(
                decoded.text_bytes() * 2 < json.to_string().len(),
                "{:?}: {} bytes kept of {}",
                obj.metadata.name,
                decoded.text_bytes(),
                json.to_string().len()
            );
        }
    }

    #[test]
    fn of_status_only_what_a_pass_compares_is_kept() {
        let json = json!({
            "metadata": {"name": "a", "namespace": "todo", "uid": "u", "generation": 2,
                "annotations": null, "finalizers": [], "managedFields": [{"manager": "x", "fieldsV1": {"f:spec": {}}}]},
            "spec": {"image": "nginx", "port": 80},
            "status": {
                "phase": "Accepted", "observedGeneration": 1, "acceptedSpec": {"image": "nginx", "port": 81},
                "kopf": {"progress": {"accept": {"retries": 1}}},
                "conditions": [
                    {"type": "Ready", "status": "True"},
                    {"type": "Accepted", "status": "True", "reason": "SpecAccepted", "lastTransitionTime": "2026-11-29T16:21:14Z"},
                    {"type": "Accepted", "status": "False"}
                ]
            }
        });
        let cached: CachedMicroservice = serde_json::from_value(json).unwrap();
        let obj = cached.object();
        assert_eq!(
            obj.status,
            Some(json!({
                "phase": "Accepted", "observedGeneration": 1, "acceptedSpec": {"image": "nginx", "port": 81},
                "conditions": [{"type": "Accepted", "status": "True", "reason": "SpecAccepted", "lastTransitionTime": "2026-11-29T16:21:14Z"}]
            }))
        );
        assert_eq!(obj.metadata.finalizers, None);
        assert_eq!(obj.metadata.annotations, None);
        // A status that is not an object, or none at all, is kept as it is.
        let odd: CachedMicroservice =
            serde_json::from_value(json!({"metadata": {"name": "b"}, "spec": "x", "status": [1]})).unwrap();
        assert_eq!(odd.object().status, Some(json!([1])));
        assert_eq!(odd.object().spec, json!("x"));
        let none: CachedMicroservice =
            serde_json::from_value(json!({"metadata": {"name": "c"}, "status": null})).unwrap();
        assert_eq!((none.object().spec, none.object().status), (Value::Null, None));
    }

    #[test]
    fn managed_fields_and_other_annotations_go_kopf_records_and_bad_specs_stay() {
        let json = json!({
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
        });
        let mut obj: MicroserviceObject = serde_json::from_value(json.clone()).unwrap();
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
        // Decoded straight from the JSON, the cache keeps the same.
        let cached: CachedMicroservice = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(cached.object().metadata, obj.metadata);
        assert_eq!(cached.object().spec, spec);
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
