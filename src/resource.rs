//! The `Microservice` custom resource: its CRD, the strict spec it declares, and the lenient
//! object type the operator watches.
//!
//! Two views of one resource:
//! - [`crd()`] declares the strict schema (`spec.image` an OCI reference, `spec.port` 1..65535)
//!   that `manifests` installs;
//! - [`MicroserviceObject`] reads `spec` and `status` as raw JSON, because the operator must also
//!   serve objects under a looser CRD (the Kopf tutorial's, or one with
//!   `x-kubernetes-preserve-unknown-fields` on spec): one object with `port: "eighty"` must
//!   never break the list/watch for the others. Validation happens per object, in
//!   [`crate::operate::validate`].
//!
//! Which resource the diagnostics read is a value, [`identity::ResourceId`]: this one by
//! default, any resource a Kopf operator handles with `--resource`.

pub mod identity;

use std::borrow::Cow;

use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// API group of the resource.
pub const GROUP: &str = "platform.example.io";
/// API version served and stored.
pub const VERSION: &str = "v1alpha1";
/// `apiVersion` as written in objects.
pub const API_VERSION: &str = "platform.example.io/v1alpha1";
/// Kind.
pub const KIND: &str = "Microservice";
/// Plural resource name (URL path segment, RBAC resource).
pub const PLURAL: &str = "microservices";
/// Name of the CRD object.
pub const CRD_NAME: &str = "microservices.platform.example.io";
/// Field manager of every write the operator makes (visible in `managedFields`).
pub const FIELD_MANAGER: &str = "kubectl-microservice";
/// The one "no such object" message of every command (exit 3): `microservice "NAME" not found in
/// namespace "NS"`, or without `in namespace ...` when the name was looked for in every
/// namespace (`namespace` `None`). The quoting is Rust's `{:?}`, so an odd name stays visible.
pub fn not_found_message(namespace: Option<&str>, name: &str) -> String {
    match namespace {
        Some(ns) => format!("microservice {name:?} not found in namespace {ns:?}"),
        None => format!("microservice {name:?} not found"),
    }
}

/// Largest accepted `spec.image` length, in bytes (name 255 + tag 128 + digest, rounded up).
pub const IMAGE_MAX_LENGTH: usize = 512;

/// An OCI image reference: `[registry[:port]/]path[:tag][@algorithm:hex]`, after the grammar of
/// distribution/reference (the one Docker and containerd use). Written for RE2 (the API
/// server's validator) and Rust's `regex` alike: no look-around, no backreferences.
pub const IMAGE_PATTERN: &str = concat!(
    r"^(?:(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\[[0-9a-fA-F:]+\])(?::[0-9]+)?/)?",
    r"[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*)*",
    r"(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?",
    r"(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?$"
);

/// A Microservice as the operator watches it: metadata typed, `spec` and `status` raw JSON.
///
/// Deserialising never fails on a bad spec; [`crate::operate::validate::validate_spec`] judges
/// each object on its own.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MicroserviceObject {
    /// Standard object metadata.
    pub metadata: ObjectMeta,
    /// `spec` exactly as stored (absent → `null`).
    #[serde(default)]
    pub spec: Value,
    /// `status` exactly as stored, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<Value>,
}

impl Resource for MicroserviceObject {
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

impl MicroserviceObject {
    /// `status.observedGeneration`, when present and an integer.
    pub fn observed_generation(&self) -> Option<i64> {
        self.status.as_ref()?.get("observedGeneration")?.as_i64()
    }

    /// `status.phase`, when present and a string.
    pub fn phase(&self) -> Option<&str> {
        self.status.as_ref()?.get("phase")?.as_str()
    }

    /// `namespace/name`, as in log lines and events.
    pub fn key(&self) -> String {
        format!(
            "{}/{}",
            self.metadata.namespace.as_deref().unwrap_or(""),
            self.metadata.name.as_deref().unwrap_or("")
        )
    }
}

/// The `Microservice` CRD that `manifests` installs: `v1alpha1`, namespaced, short name `ms`,
/// status subresource, printer columns Phase, Image, Port, Age.
///
/// Status schema: `phase` (`Accepted` | `Invalid`), `observedGeneration` (int64),
/// `acceptedSpec` (`image`, `port`: the spec the handler accepted at observedGeneration), and
/// `conditions` in the shape of metav1.Condition (including `conditions[].observedGeneration`,
/// so `kubectl wait --for=condition=Accepted` is meaningful), a map list keyed by `type` so
/// server-side apply merges them. The status is open (`x-kubernetes-preserve-unknown-fields`):
/// its declared fields are validated, and fields it does not declare are kept, not pruned, so
/// that the CRD can be shared with other operators of the resource (Kopf's `status.kopf`).
pub fn crd() -> CustomResourceDefinition {
    serde_json::from_value(crd_json()).expect("the built-in CRD is a valid CustomResourceDefinition")
}

fn crd_json() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": CRD_NAME,
            "labels": {"app.kubernetes.io/name": "kubectl-microservice"}
        },
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {
                "plural": PLURAL,
                "singular": "microservice",
                "kind": KIND,
                "listKind": "MicroserviceList",
                "shortNames": ["ms"]
            },
            "versions": [{
                "name": VERSION,
                "served": true,
                "storage": true,
                "subresources": {"status": {}},
                "additionalPrinterColumns": [
                    {"name": "Phase", "type": "string", "jsonPath": ".status.phase"},
                    {"name": "Image", "type": "string", "jsonPath": ".spec.image"},
                    {"name": "Port", "type": "integer", "jsonPath": ".spec.port"},
                    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}
                ],
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "description": "A Microservice: an OCI image served on one port. The operator's accept handler records the spec it received in status.",
                    "properties": {
                        "spec": {
                            "type": "object",
                            "required": ["image", "port"],
                            "properties": {
                                "image": {
                                    "type": "string",
                                    "description": "OCI image reference, e.g. ghcr.io/org/app:1.0.0.",
                                    "minLength": 1,
                                    "maxLength": IMAGE_MAX_LENGTH,
                                    "pattern": IMAGE_PATTERN
                                },
                                "port": {
                                    "type": "integer",
                                    "format": "int32",
                                    "description": "Container port, 1..65535.",
                                    "minimum": 1,
                                    "maximum": 65535
                                }
                            }
                        },
                        "status": {
                            "type": "object",
                            "description": "What the handler recorded. Open to fields it does not declare: other operators of the resource (Kopf's status.kopf, handler results) keep theirs here.",
                            "x-kubernetes-preserve-unknown-fields": true,
                            "properties": {
                                "phase": {
                                    "type": "string",
                                    "enum": ["Accepted", "Invalid"],
                                    "description": "Accepted: the handler received this spec (says nothing about Pods). Invalid: the spec failed validation."
                                },
                                "observedGeneration": {
                                    "type": "integer",
                                    "format": "int64",
                                    "description": "metadata.generation that the handler last saw."
                                },
                                "acceptedSpec": {
                                    "type": "object",
                                    "description": "The spec the handler accepted at observedGeneration (kept when a later spec is Invalid).",
                                    "properties": {
                                        "image": {"type": "string"},
                                        "port": {"type": "integer", "format": "int32"}
                                    }
                                },
                                "conditions": {
                                    "type": "array",
                                    "x-kubernetes-list-type": "map",
                                    "x-kubernetes-list-map-keys": ["type"],
                                    "items": condition_schema()
                                }
                            }
                        }
                    }
                }}
            }]
        }
    })
}

/// The OpenAPI schema of metav1.Condition, as Kubernetes' own CRDs declare it.
fn condition_schema() -> Value {
    json!({
        "type": "object",
        "required": ["type", "status", "lastTransitionTime", "reason", "message"],
        "properties": {
            "type": {"type": "string", "maxLength": 316,
                     "pattern": r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"},
            "status": {"type": "string", "enum": ["True", "False", "Unknown"]},
            "observedGeneration": {"type": "integer", "format": "int64", "minimum": 0},
            "lastTransitionTime": {"type": "string", "format": "date-time"},
            "reason": {"type": "string", "minLength": 1, "maxLength": 1024,
                       "pattern": r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"},
            "message": {"type": "string", "maxLength": 32768}
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crd_declares_the_contract() {
        let crd = serde_json::to_value(crd()).unwrap();
        assert_eq!(crd["metadata"]["name"], CRD_NAME);
        assert_eq!(crd["spec"]["names"]["shortNames"], json!(["ms"]));
        let version = &crd["spec"]["versions"][0];
        assert_eq!(version["subresources"]["status"], json!({}));
        let columns: Vec<&str> = version["additionalPrinterColumns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(columns, ["Phase", "Image", "Port", "Age"]);
        let spec = &version["schema"]["openAPIV3Schema"]["properties"]["spec"];
        assert_eq!(spec["required"], json!(["image", "port"]));
        assert_eq!(spec["properties"]["port"]["minimum"], 1.0);
        assert_eq!(spec["properties"]["port"]["maximum"], 65535.0);
        let status = &version["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"];
        assert_eq!(
            status["conditions"]["items"]["properties"]["observedGeneration"]["type"],
            "integer"
        );
        assert_eq!(status["observedGeneration"]["format"], "int64");
        assert_eq!(status["acceptedSpec"]["properties"]["port"]["type"], "integer");
        assert_eq!(status["acceptedSpec"]["properties"]["image"]["type"], "string");
    }

    #[test]
    fn lenient_object_reads_any_spec() {
        let obj: MicroserviceObject = serde_json::from_value(json!({
            "apiVersion": API_VERSION, "kind": KIND,
            "metadata": {"name": "bad", "namespace": "todo", "generation": 2},
            "spec": {"image": 7, "port": "eighty"},
            "status": {"phase": "Accepted", "observedGeneration": 1, "kopf": {"progress": {}}}
        }))
        .unwrap();
        assert_eq!(obj.spec["port"], "eighty");
        assert_eq!(obj.observed_generation(), Some(1));
        assert_eq!(obj.phase(), Some("Accepted"));
        assert_eq!(obj.key(), "todo/bad");
    }

    #[test]
    fn lenient_list_keeps_every_item() {
        let list: kube::core::ObjectList<MicroserviceObject> = serde_json::from_value(json!({
            "apiVersion": API_VERSION, "kind": "MicroserviceList", "metadata": {"resourceVersion": "9"},
            "items": [
                {"metadata": {"name": "a"}, "spec": {"image": "nginx", "port": 80}},
                {"metadata": {"name": "b"}, "spec": {"image": "nginx", "port": "eighty"}},
                {"metadata": {"name": "c"}}
            ]
        }))
        .unwrap();
        assert_eq!(list.items.len(), 3);
        assert_eq!(list.items[2].spec, Value::Null);
    }
}
