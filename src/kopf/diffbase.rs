//! Kopf's diff-base record and the API server's annotation size limit (nolar/kopf#1087).
//!
//! Kopf (1.38 .. 1.44, `kopf/_cogs/configs/diffbase.py`) stores the "essence" of an object it
//! handled in the annotation `kopf.zalando.org/last-handled-configuration` by default
//! (`AnnotationsDiffBaseStorage`): `json.dumps(essence, separators=(',', ':')) + '\n'`, where the
//! essence is every top-level field except `apiVersion`, `kind`, `metadata` and `status`, plus
//! `metadata.labels` and `metadata.annotations` — all annotations except
//! `kubectl.kubernetes.io/last-applied-configuration` and Kopf's own records. The API server
//! limits an object's annotations to 262144 bytes in total, counting each key and value
//! (apimachinery `ValidateAnnotationsSize`, `TotalAnnotationSizeLimitB`). So an object whose
//! own annotations are more than about half of that cannot take Kopf's copy of them: Kopf's
//! final PATCH gets `422 ... metadata.annotations: Too long: must have at most 262144 bytes` and
//! no cycle of that object ever completes. `kopf.StatusDiffBaseStorage()` (default field
//! `status.kopf.last-handled-configuration`) keeps the record in the status instead, where this
//! limit does not apply.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// The API server's limit on the total size of an object's annotations, in bytes (keys plus
/// values; apimachinery `TotalAnnotationSizeLimitB`, Kubernetes 1.x).
pub const ANNOTATIONS_LIMIT_BYTES: usize = 262_144;

/// The annotation Kopf's default diff-base storage writes.
pub const DIFFBASE_ANNOTATION: &str = "kopf.zalando.org/last-handled-configuration";

/// What an object's annotations weigh, and what Kopf's record of them would add. Sizes in bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnnotationBudget {
    /// The annotations as they are (keys plus values).
    pub total: usize,
    /// The largest annotation: key and its size (key plus value).
    pub largest: Option<(String, usize)>,
    /// The size of the diff-base annotation Kopf would write (key plus value), about: the essence
    /// serialized compactly, as Kopf does (Python escapes non-ASCII as `\uXXXX`, counted here as
    /// UTF-8, so it is a lower bound for non-ASCII text).
    pub record: usize,
    /// The annotations' total after Kopf writes its record (replacing any present).
    pub after_patch: usize,
}

impl AnnotationBudget {
    /// Whether Kopf's record would take the annotations over the limit.
    pub fn over_limit(&self) -> bool {
        self.after_patch > ANNOTATIONS_LIMIT_BYTES
    }
}

/// Weighs `object` (a `kubectl get -o json` item) against the annotation limit.
pub fn annotation_budget(object: &Value) -> AnnotationBudget {
    let annotations: BTreeMap<String, String> = object
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                .collect()
        })
        .unwrap_or_default();
    let size = |k: &str, v: &str| k.len() + v.len();
    let total = annotations.iter().map(|(k, v)| size(k, v)).sum();
    let largest = annotations
        .iter()
        .map(|(k, v)| (k.clone(), size(k, v)))
        .max_by_key(|(_, s)| *s);
    let mut essence = Map::new();
    if let Some(top) = object.as_object() {
        for (k, v) in top {
            if !matches!(k.as_str(), "apiVersion" | "kind" | "metadata" | "status") {
                essence.insert(k.clone(), v.clone());
            }
        }
    }
    let mut meta = Map::new();
    if let Some(labels) = object
        .pointer("/metadata/labels")
        .filter(|l| l.as_object().is_some_and(|m| !m.is_empty()))
    {
        meta.insert("labels".into(), labels.clone());
    }
    let copied: Map<String, Value> = annotations
        .iter()
        .filter(|(k, _)| !is_kopf_own(k) && k.as_str() != "kubectl.kubernetes.io/last-applied-configuration")
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    if !copied.is_empty() {
        meta.insert("annotations".into(), Value::Object(copied));
    }
    if !meta.is_empty() {
        essence.insert("metadata".into(), Value::Object(meta));
    }
    let encoded = serde_json::to_string(&Value::Object(essence)).unwrap_or_default();
    let record = size(DIFFBASE_ANNOTATION, &encoded) + 1;
    let others: usize = annotations
        .iter()
        .filter(|(k, _)| k.as_str() != DIFFBASE_ANNOTATION)
        .map(|(k, v)| size(k, v))
        .sum();
    AnnotationBudget {
        total,
        largest,
        record,
        after_patch: others + record,
    }
}

/// Kopf's own annotations (its diff-base and progress records under `kopf.zalando.org/`, and a
/// diff-base of any prefix), which its essence leaves out.
fn is_kopf_own(key: &str) -> bool {
    key.starts_with("kopf.zalando.org/") || key.ends_with("/last-handled-configuration")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_large_annotation_is_copied_once_more() {
        let big = "x".repeat(150_000);
        let obj = json!({"apiVersion": "platform.example.io/v1alpha1", "kind": "Microservice",
            "metadata": {"name": "a", "annotations": {"example.com/blob": big, "kubectl.kubernetes.io/last-applied-configuration": "{}"}},
            "spec": {"image": "x", "port": 1}, "status": {"phase": "Accepted"}});
        let b = annotation_budget(&obj);
        assert_eq!(
            b.total,
            "example.com/blob".len() + 150_000 + "kubectl.kubernetes.io/last-applied-configuration".len() + 2
        );
        assert_eq!(
            b.largest.as_ref().map(|(k, s)| (k.as_str(), *s)),
            Some(("example.com/blob", 150_016))
        );
        // The record holds the spec and the blob (not last-applied, not status).
        let essence = format!(
            "{{\"metadata\":{{\"annotations\":{{\"example.com/blob\":\"{big}\"}}}},\"spec\":{{\"image\":\"x\",\"port\":1}}}}"
        );
        assert_eq!(b.record, DIFFBASE_ANNOTATION.len() + essence.len() + 1);
        assert_eq!(b.after_patch, b.total + b.record);
        assert!(b.over_limit());
        // A present record is replaced, not added to.
        let mut with_record = obj.clone();
        with_record["metadata"]["annotations"][DIFFBASE_ANNOTATION] = json!("{\"spec\":{}}\n");
        let b2 = annotation_budget(&with_record);
        assert_eq!(b2.after_patch, b.after_patch);
        // Small objects are far below.
        let small = annotation_budget(&json!({"metadata": {"name": "a"}, "spec": {"port": 1}}));
        assert_eq!((small.total, small.largest.clone()), (0, None));
        assert!(!small.over_limit());
        // Anything at all: no panic.
        for odd in [json!(null), json!([1]), json!({"metadata": {"annotations": {"k": 1}}})] {
            let _ = annotation_budget(&odd);
        }
    }
}
