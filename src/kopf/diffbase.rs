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

/// Where a Kopf operator's source puts its diff-base record
/// (`settings.persistence.diffbase_storage = ...` in a `@kopf.on.startup` function).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiffbaseStorage {
    /// `kopf.StatusDiffBaseStorage(field=...)`: the dotted status path (default
    /// `status.kopf.last-handled-configuration`).
    Status {
        /// The dotted path, `status.` included.
        field: String,
        /// `FILE:LINE` of the assignment.
        at: String,
    },
    /// `kopf.AnnotationsDiffBaseStorage(prefix=..., key=...)`: the annotation key.
    Annotation {
        /// `prefix/key`.
        key: String,
        /// `FILE:LINE` of the assignment.
        at: String,
    },
}

impl DiffbaseStorage {
    /// Where the assignment is, `FILE:LINE`.
    pub fn at(&self) -> &str {
        match self {
            DiffbaseStorage::Status { at, .. } | DiffbaseStorage::Annotation { at, .. } => at,
        }
    }

    /// The record's place in the object's words (`status.kopf.last-handled-configuration`, or
    /// the annotation key).
    pub fn place(&self) -> &str {
        match self {
            DiffbaseStorage::Status { field, .. } => field,
            DiffbaseStorage::Annotation { key, .. } => key,
        }
    }
}

/// A string keyword argument `name="..."` (or `'...'`) in `args`.
fn keyword(args: &str, name: &str) -> Option<String> {
    let mut rest = args;
    while let Some(i) = rest.find(name) {
        let before_ok = rest[..i]
            .chars()
            .last()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        let after = rest[i + name.len()..].trim_start();
        if before_ok && let Some(value) = after.strip_prefix('=') {
            let value = value.trim_start();
            let quote = value.chars().next().filter(|q| *q == '"' || *q == '\'')?;
            let inner = &value[1..];
            return inner.find(quote).map(|end| inner[..end].to_string());
        }
        rest = &rest[i + name.len()..];
    }
    None
}

/// Where `source` (a Kopf operator's Python file named `file`) puts the diff-base record: the
/// last `settings.persistence.diffbase_storage = kopf.StatusDiffBaseStorage(...)` or
/// `kopf.AnnotationsDiffBaseStorage(...)` outside a comment, read with Kopf's defaults (1.38 ..
/// 1.44: field `status.kopf.last-handled-configuration`; prefix `kopf.zalando.org`, key
/// `last-handled-configuration`). `None` when the source sets none, or sets it to anything
/// else (a `MultiDiffBaseStorage`, a variable): the default annotation, or undecided.
pub fn storage_in(file: &str, source: &str) -> Option<DiffbaseStorage> {
    let mut found = None;
    for (n, line) in source.lines().enumerate() {
        let code = line.split('#').next().unwrap_or_default();
        let Some(i) = code.find("diffbase_storage") else {
            continue;
        };
        let Some(value) = code[i + "diffbase_storage".len()..].trim_start().strip_prefix('=') else {
            continue;
        };
        let value = value.trim();
        let at = format!("{file}:{}", n + 1);
        let args = |name: &str| {
            value
                .find(name)
                .map(|j| &value[j + name.len()..])
                .and_then(|r| r.trim_start().strip_prefix('('))
        };
        found = if let Some(a) = args("StatusDiffBaseStorage").filter(|_| !value.contains("Multi")) {
            let field = keyword(a, "field").unwrap_or_else(|| "status.kopf.last-handled-configuration".into());
            let field = if field.starts_with("status.") {
                field
            } else {
                format!("status.{field}")
            };
            Some(DiffbaseStorage::Status { field, at })
        } else if let Some(a) = args("AnnotationsDiffBaseStorage").filter(|_| !value.contains("Multi")) {
            let prefix = keyword(a, "prefix").unwrap_or_else(|| "kopf.zalando.org".into());
            let key = keyword(a, "key").unwrap_or_else(|| "last-handled-configuration".into());
            Some(DiffbaseStorage::Annotation {
                key: format!("{prefix}/{key}"),
                at,
            })
        } else {
            None
        };
    }
    found
}

#[cfg(test)]
mod storage_tests {
    use super::*;

    #[test]
    fn the_sources_diffbase_storage_is_read_with_kopfs_defaults() {
        let status = "import kopf\n@kopf.on.startup()\ndef c(settings, **_):\n    settings.persistence.diffbase_storage = kopf.StatusDiffBaseStorage()\n";
        assert_eq!(
            storage_in("operator.py", status),
            Some(DiffbaseStorage::Status {
                field: "status.kopf.last-handled-configuration".into(),
                at: "operator.py:4".into()
            })
        );
        let field = "settings.persistence.diffbase_storage = kopf.StatusDiffBaseStorage(field='status.ops.base')";
        assert_eq!(storage_in("o.py", field).unwrap().place(), "status.ops.base");
        let annotation =
            "settings.persistence.diffbase_storage = kopf.AnnotationsDiffBaseStorage(prefix=\"ops.example.com\")";
        assert_eq!(
            storage_in("o.py", annotation).unwrap().place(),
            "ops.example.com/last-handled-configuration"
        );
        // A comment, a multi-storage, a variable, nothing: not decided here.
        for odd in [
            "# settings.persistence.diffbase_storage = kopf.StatusDiffBaseStorage()",
            "settings.persistence.diffbase_storage = kopf.MultiDiffBaseStorage([kopf.StatusDiffBaseStorage()])",
            "settings.persistence.diffbase_storage = storage",
            "import kopf",
        ] {
            assert_eq!(storage_in("o.py", odd), None, "{odd}");
        }
    }
}
