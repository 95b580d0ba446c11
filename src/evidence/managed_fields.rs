//! managedFields as evidence of *when* spec and status were last written, and by whom: the
//! staleness verdict and the operator resolver read the same [`Entry`]s.
//!
//! Facts (the API server's): managedFields times have one-second resolution and belong to a whole
//! manager entry — a change by the same manager to any field it owns moves the time. So an entry
//! says "spec changed at T" only when it owns nothing but `spec` fields.

use chrono::{DateTime, Utc};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry;
use serde_json::Value;

use crate::time::from_jiff;

/// One managedFields entry, reduced to what the verdicts use.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Entry {
    /// The field manager, e.g. `kubectl-patch`, `kopf`, `kubectl-microservice`.
    pub manager: String,
    /// `Update` or `Apply`.
    pub operation: String,
    /// `status` for writes through the status subresource.
    pub subresource: Option<String>,
    /// When this manager last changed any field it owns (1 s resolution).
    pub time: Option<DateTime<Utc>>,
    /// Top-level fields owned (`spec`, `status`, `metadata`).
    pub owns: Vec<String>,
    /// Leaf fields owned under `spec`, as dotted paths (`spec.port`).
    pub spec_fields: Vec<String>,
}

impl Entry {
    /// Owns `spec` fields and nothing else.
    pub fn spec_only(&self) -> bool {
        self.owns == ["spec"]
    }

    /// Owns any `spec` field.
    pub fn owns_spec(&self) -> bool {
        self.owns.iter().any(|o| o == "spec")
    }

    /// Writes status (through the subresource, or owning `status` fields).
    pub fn writes_status(&self) -> bool {
        self.subresource.as_deref() == Some("status") || self.owns.iter().any(|o| o == "status")
    }

    /// `kubectl-patch (Update) at 2026-11-29T16:22:16Z`.
    pub fn describe(&self) -> String {
        let time = self
            .time
            .map(crate::time::rfc3339_seconds)
            .unwrap_or_else(|| "an unknown time".into());
        let sub = self
            .subresource
            .as_deref()
            .map(|s| format!(" on /{s}"))
            .unwrap_or_default();
        format!("{} ({}{sub}) at {time}", self.manager, self.operation)
    }
}

/// Reduces the object's managedFields.
pub fn entries(managed: Option<&Vec<ManagedFieldsEntry>>) -> Vec<Entry> {
    managed
        .into_iter()
        .flatten()
        .map(|m| {
            let mut owns: Vec<String> = match m.fields_v1.as_ref().map(|f| &f.0) {
                Some(Value::Object(map)) => map
                    .keys()
                    .filter_map(|k| k.strip_prefix("f:"))
                    .map(str::to_string)
                    .collect(),
                _ => Vec::new(),
            };
            owns.sort();
            let spec_fields = m
                .fields_v1
                .as_ref()
                .and_then(|f| f.0.get("f:spec"))
                .map(|spec| leaves("spec", spec))
                .unwrap_or_default();
            Entry {
                manager: m.manager.clone().unwrap_or_default(),
                operation: m.operation.clone().unwrap_or_default(),
                subresource: m.subresource.clone().filter(|s| !s.is_empty()),
                time: m.time.as_ref().map(|t| from_jiff(t.0)),
                owns,
                spec_fields,
            }
        })
        .collect()
}

/// Dotted paths of the leaves of a FieldsV1 tree (`{"f:port": {}}` under `spec` → `spec.port`);
/// list keys (`k:`/`v:`/`i:`) end the path at the list.
fn leaves(prefix: &str, node: &Value) -> Vec<String> {
    let Value::Object(map) = node else {
        return vec![prefix.to_string()];
    };
    let children: Vec<(&String, &Value)> = map.iter().filter(|(k, _)| k.as_str() != ".").collect();
    if children.is_empty() {
        return vec![prefix.to_string()];
    }
    if children.iter().any(|(k, _)| !k.starts_with("f:")) {
        return vec![prefix.to_string()];
    }
    children
        .into_iter()
        .flat_map(|(k, v)| leaves(&format!("{prefix}.{}", &k[2..]), v))
        .collect()
}

/// Spec fields written after `since` (by any manager), with who wrote them: the fields a
/// generation bump most likely came from.
pub fn spec_fields_written_after(entries: &[Entry], since: Option<DateTime<Utc>>) -> Vec<String> {
    let mut out: Vec<String> = entries
        .iter()
        .filter(|e| e.owns_spec() && since.is_none_or(|s| e.time.is_some_and(|t| t > s)))
        .flat_map(|e| e.spec_fields.iter().map(move |f| format!("{f} (by {})", e.describe())))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The latest entry that writes status, and the latest entry that owns spec fields.
pub fn latest_status_and_spec(entries: &[Entry]) -> (Option<&Entry>, Option<&Entry>) {
    let latest = |pred: fn(&Entry) -> bool| entries.iter().filter(|e| pred(e)).max_by_key(|e| e.time);
    (latest(Entry::writes_status), latest(Entry::owns_spec))
}
