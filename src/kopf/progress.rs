//! Kopf's per-handler progress records on an object (`kopf/_cogs/configs/progress.py`):
//! annotations `<prefix>/<handler-id>` (`/` in the id written `.`; default prefix
//! `kopf.zalando.org`) and, up to Kopf 1.43, `status.kopf.progress.<handler-id>`. Value:
//! `{"started", "stopped", "delayed", "purpose", "retries", "success", "failure", "message"}`,
//! times ISO 8601. Kopf purges them when a cycle ends, so a record present means a cycle in
//! progress: its `purpose` is the cause of that cycle's runs.

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::kopf::logs::parse_iso_time;
use crate::vocab::cause::{Cause, parse_cause};
use crate::vocab::record::ObjectKey;

/// One handler's progress record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    /// The handler id as stored: exact from `status.kopf.progress`, with `.` for `/` from an
    /// annotation key.
    pub handler: String,
    /// `purpose`: `create`, `update`, `resume` (`delete` is not a run cause of the Contracts).
    pub purpose: Option<String>,
    /// `started`.
    pub started: Option<DateTime<Utc>>,
    /// `retries`.
    pub retries: Option<u64>,
    /// `message`: the last failure's message.
    pub message: Option<String>,
    /// `delayed`: when the next try is due (set after a temporary failure).
    pub delayed: Option<DateTime<Utc>>,
    /// `success`: the handler succeeded in this cycle.
    pub success: Option<bool>,
    /// `failure`: the handler failed permanently in this cycle.
    pub failure: Option<bool>,
}

impl Progress {
    /// Whether the record shows a handler still trying after a failure: not succeeded, not failed
    /// permanently, and at least one retry (or a `delayed` next try). Kopf purges a cycle's records
    /// when the cycle ends, so such a record is the latest state of the object's handling.
    pub fn retrying(&self) -> bool {
        self.success != Some(true)
            && self.failure != Some(true)
            && (self.retries.unwrap_or(0) > 0 || self.delayed.is_some())
    }
}

/// Reads the progress records of an object (a `kubectl get -o json` item). Annotations whose
/// value is not a JSON object with `purpose` or `started` are not progress records
/// (`last-handled-configuration` is skipped by name).
pub fn read(object: &Value) -> Vec<Progress> {
    let annotations = object.pointer("/metadata/annotations").and_then(Value::as_object);
    let annotations = annotations
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k.as_str(), v.as_str()?)));
    read_parts(object.get("status"), annotations)
}

/// [`read`] of an object given as its `status` and its annotations (key, value), without
/// building its JSON: a typed object's metadata are read as they are.
pub fn read_parts<'v>(
    status: Option<&Value>,
    annotations: impl IntoIterator<Item = (&'v str, &'v str)>,
) -> Vec<Progress> {
    let mut out = Vec::new();
    let from = |handler: String, v: &Value| Progress {
        handler,
        purpose: v.get("purpose").and_then(Value::as_str).map(str::to_string),
        started: v.get("started").and_then(Value::as_str).and_then(parse_iso_time),
        retries: v.get("retries").and_then(Value::as_u64),
        message: v.get("message").and_then(Value::as_str).map(str::to_string),
        delayed: v.get("delayed").and_then(Value::as_str).and_then(parse_iso_time),
        success: v.get("success").and_then(Value::as_bool),
        failure: v.get("failure").and_then(Value::as_bool),
    };
    if let Some(progress) = status
        .and_then(|s| s.pointer("/kopf/progress"))
        .and_then(Value::as_object)
    {
        for (id, v) in progress {
            if v.is_object() {
                out.push(from(id.clone(), v));
            }
        }
    }
    for (key, v) in annotations {
        let Some((_, id)) = key.rsplit_once('/') else {
            continue;
        };
        if id == "last-handled-configuration" || id == "kopf-managed" {
            continue;
        }
        let Some(parsed) = serde_json::from_str::<Value>(v)
            .ok()
            .filter(|p| p.get("purpose").is_some() || p.get("started").is_some())
        else {
            continue;
        };
        let known = out.iter().any(|p| p.handler.replace('/', ".") == id);
        if !known {
            out.push(from(id.to_string(), &parsed));
        }
    }
    out
}

/// The cause a Kopf progress annotation gives the current cycle of one handler of an object:
/// `kopf.zalando.org/<handler>` = `{"started": ..., "purpose": "create", ...}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CauseHint {
    /// The object.
    pub object: ObjectKey,
    /// The handler id (`accept`, `accept/spec`; an annotation key's `accept.spec` matches too).
    pub handler: String,
    /// `purpose`.
    pub cause: Cause,
    /// `started`: runs that started before it (less [`crate::logs::runs::HINT_SKEW`]) are of an earlier cycle.
    pub started: Option<DateTime<Utc>>,
}

/// The cause hints an object's progress records give its unfinished cycle (see
/// [`crate::logs::runs`]).
pub fn cause_hints(object: &Value) -> Vec<CauseHint> {
    let Some(name) = object.pointer("/metadata/name").and_then(Value::as_str) else {
        return Vec::new();
    };
    let key = ObjectKey {
        namespace: object
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .map(str::to_string),
        name: name.to_string(),
    };
    read(object)
        .into_iter()
        .filter_map(|p| {
            Some(CauseHint {
                object: key.clone(),
                cause: parse_cause(p.purpose.as_deref()?)?,
                handler: p.handler,
                started: p.started,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotations_and_status_progress_give_hints() {
        let obj = serde_json::json!({
            "metadata": {"name": "basket-api", "namespace": "store", "annotations": {
                "kopf.zalando.org/accept": "{\"started\":\"2026-11-29T17:13:32.227308+00:00\",\"purpose\":\"create\",\"retries\":8,\"message\":\"registry unreachable\"}",
                "kopf.zalando.org/accept.spec": "{\"started\":\"2026-11-29T17:13:32.227308+00:00\",\"purpose\":\"update\"}",
                "kopf.zalando.org/last-handled-configuration": "{\"spec\":{}}",
                "kubectl.kubernetes.io/last-applied-configuration": "{\"apiVersion\":\"x\"}"
            }},
            "status": {"kopf": {"progress": {"accept": {"purpose": "create", "retries": 8}}}}
        });
        let progress = read(&obj);
        let ids: Vec<&str> = progress.iter().map(|p| p.handler.as_str()).collect();
        assert_eq!(ids, ["accept", "accept.spec"]);
        let hints = cause_hints(&obj);
        assert_eq!(hints.len(), 2);
        assert_eq!(hints[0].object.to_string(), "store/basket-api");
        assert_eq!(hints[1].cause, crate::vocab::cause::Cause::Update);
    }
}
