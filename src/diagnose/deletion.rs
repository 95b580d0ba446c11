//! Deletion pending: an object with `metadata.deletionTimestamp` that finalizers still hold.
//!
//! The API server sets `deletionTimestamp` (and, for a custom resource, bumps
//! `metadata.generation`) when a delete request meets a non-empty `metadata.finalizers`; the object
//! is removed once every finalizer is taken off by its owner. Kopf adds
//! `kopf.zalando.org/KopfFinalizerMarker` to objects it has delete handlers for (or with
//! `settings.persistence.finalizer` left at its default); once the Kopf operator is gone, nothing
//! removes it and the object stays Terminating. The generation bump of a deletion is not a spec
//! change: `status` reports Terminating instead of staleness ([`super::staleness`]), and
//! `explain-events` reports the finding `deletion-pending` ([`super::events`]).

use chrono::{DateTime, Duration, Utc};
use serde::Serialize;

use crate::evidence::operator::{OperatorKind, OperatorRef};
use crate::resource::MicroserviceObject;
use crate::time::{DurationStyle, rfc3339_seconds};
use crate::vocab::cause::KOPF_FINALIZER;

/// Who is expected to remove a finalizer, and whether the evidence shows it running.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HeldBy {
    /// The finalizer, e.g. `kopf.zalando.org/KopfFinalizerMarker`.
    pub finalizer: String,
    /// Its index in `metadata.finalizers` (for the JSON patch's `test` op).
    pub index: usize,
    /// Who should remove it, in words (e.g. "a Kopf operator serving namespace todo").
    pub owner: String,
    /// Whether that owner is in evidence: `Some(true)` a matching operator Deployment serves the
    /// namespace, `Some(false)` none does, `None` the operators could not be listed or the
    /// finalizer's owner is unknown to this tool.
    pub owner_running: Option<bool>,
    /// The operator Deployment that owns it, as `NS/deployment/NAME`, when found.
    pub operator: Option<String>,
    /// The command that removes this one finalizer, guarded by a JSON-patch `test` op on its index
    /// (the patch fails, changing nothing, if the list moved meanwhile).
    pub remove_with: String,
}

/// A pending deletion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Pending {
    /// `metadata.deletionTimestamp` (API server clock).
    pub deletion_timestamp: Option<DateTime<Utc>>,
    /// How long ago, from the evidence's "now" (seconds; `None` when either time is unknown).
    pub age_seconds: Option<i64>,
    /// The finalizers holding the object, in `metadata.finalizers` order; empty when the
    /// deletion is only being processed (no finalizer left).
    pub finalizers: Vec<HeldBy>,
}

impl Pending {
    /// The age in words (`3m12s`), or "unknown age".
    pub fn age_text(&self) -> String {
        match self.age_seconds {
            Some(s) => format!(
                "{} ago",
                crate::time::human(Duration::seconds(s), DurationStyle::Pair { lead_at: 1, days: true })
            ),
            None => "unknown age".into(),
        }
    }

    /// One sentence: since when, held by what.
    pub fn message(&self) -> String {
        let since = self
            .deletion_timestamp
            .map(rfc3339_seconds)
            .unwrap_or_else(|| "an unknown time".into());
        let held = if self.finalizers.is_empty() {
            "no finalizer is left, so the API server should remove it shortly".to_string()
        } else {
            let names: Vec<String> = self.finalizers.iter().map(|f| f.finalizer.clone()).collect();
            let stuck = self
                .finalizers
                .iter()
                .filter(|f| f.owner_running == Some(false))
                .count();
            let tail = if stuck > 0 {
                format!("; {stuck} of them has no owner running, so nothing will remove it")
            } else {
                String::new()
            };
            format!("held by finalizer(s) {}{tail}", names.join(", "))
        };
        format!(
            "Terminating: deletion requested at {since} ({}), {held}",
            self.age_text()
        )
    }

    /// The facts, one per entry: the timestamp, each finalizer with its owner and the fix, and the
    /// generation note.
    pub fn evidence(&self, obj: &MicroserviceObject) -> Vec<String> {
        let mut out = vec![format!(
            "metadata.deletionTimestamp={} ({})",
            self.deletion_timestamp
                .map(rfc3339_seconds)
                .unwrap_or_else(|| "?".into()),
            self.age_text()
        )];
        for f in &self.finalizers {
            out.push(format!(
                "metadata.finalizers[{}]={}: to be removed by {}",
                f.index, f.finalizer, f.owner
            ));
        }
        if let Some(g) = obj.metadata.generation {
            out.push(format!(
                "metadata.generation={g} counts the deletion (the API server bumps a custom resource's generation when it sets deletionTimestamp): not a spec change"
            ));
        }
        out
    }

    /// The next step: the removal command of the first finalizer whose owner is not running,
    /// or, when every owner runs, where to look.
    pub fn fix(&self) -> Option<String> {
        if let Some(f) = self.finalizers.iter().find(|f| f.owner_running != Some(true)) {
            let why = match f.owner_running {
                Some(false) => "its owner is not running",
                _ => "only if its owner is gone for good",
            };
            return Some(format!(
                "remove {} ({why}; the test op makes the patch fail if the list changed): {}",
                f.finalizer, f.remove_with
            ));
        }
        self.finalizers.first().map(|f| {
            format!(
                "{} should remove {}: see why it has not (its delete handlers' runs in its logs); only if it never will: {}",
                f.operator.as_deref().unwrap_or(&f.owner),
                f.finalizer,
                f.remove_with
            )
        })
    }
}

/// The command that removes finalizer `finalizer` at `index` from the object `name` in
/// `namespace`, of the resource kubectl names `kubectl_type`
/// ([`crate::resource::identity::ResourceId::kubectl_type`]: `microservice`,
/// `kopfexamples.kopf.dev`): a JSON patch whose `test` op fails (changing nothing) if the index
/// holds another value by then.
pub fn remove_command(kubectl_type: &str, namespace: &str, name: &str, index: usize, finalizer: &str) -> String {
    use crate::text::{json_pointer, json_string_in_single_quotes};
    let value = json_string_in_single_quotes(finalizer);
    let path = json_string_in_single_quotes(&json_pointer(["metadata", "finalizers", index.to_string().as_str()]));
    format!(
        "kubectl -n {namespace} patch {kubectl_type} {name} --type=json -p '[{{\"op\":\"test\",\"path\":{path},\"value\":{value}}},{{\"op\":\"remove\",\"path\":{path}}}]'"
    )
}

/// The pending deletion of `obj`, if it has a `deletionTimestamp`. `now` is the evidence's time;
/// `operators` the recognised operator Deployments (`None` when they could not be listed);
/// `kubectl_type` the object's resource as its removal commands name it.
pub fn pending(
    kubectl_type: &str,
    obj: &MicroserviceObject,
    now: Option<DateTime<Utc>>,
    operators: Option<&[OperatorRef]>,
) -> Option<Pending> {
    let stamp = obj.metadata.deletion_timestamp.as_ref()?;
    let since = crate::time::from_jiff(stamp.0);
    let ns = obj.metadata.namespace.as_deref().unwrap_or("");
    let name = obj.metadata.name.as_deref().unwrap_or("");
    let finalizers = obj
        .metadata
        .finalizers
        .iter()
        .flatten()
        .enumerate()
        .map(|(index, finalizer)| {
            let (owner, owner_running, operator) = owner(finalizer, ns, operators);
            HeldBy {
                finalizer: finalizer.clone(),
                index,
                owner,
                owner_running,
                operator,
                remove_with: remove_command(kubectl_type, ns, name, index, finalizer),
            }
        })
        .collect();
    Some(Pending {
        deletion_timestamp: Some(since),
        age_seconds: now.map(|n| (n - since).num_seconds().max(0)),
        finalizers,
    })
}

fn owner(finalizer: &str, ns: &str, operators: Option<&[OperatorRef]>) -> (String, Option<bool>, Option<String>) {
    if finalizer != KOPF_FINALIZER {
        return (
            format!("the controller that added {finalizer} (not one this tool knows)"),
            None,
            None,
        );
    }
    let wanted = format!("a Kopf operator serving namespace {ns}");
    let Some(operators) = operators else {
        return (
            format!("{wanted} (the operator Deployments could not be listed: cannot tell whether one runs)"),
            None,
            None,
        );
    };
    match operators
        .iter()
        .find(|op| op.kind == OperatorKind::Kopf && op.watches(ns))
    {
        Some(op) => (format!("{wanted}: {}", op.display()), Some(true), Some(op.display())),
        None => (
            format!(
                "{wanted}; none is in evidence (no Kopf operator Deployment watches {ns}): the finalizer's owner is not running"
            ),
            Some(false),
            None,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(value: serde_json::Value) -> MicroserviceObject {
        serde_json::from_value(value).unwrap()
    }

    fn terminating() -> MicroserviceObject {
        obj(
            json!({"metadata": {"name": "todo-api", "namespace": "todo", "generation": 2,
            "deletionTimestamp": "2026-12-01T04:00:00Z",
            "finalizers": ["kopf.zalando.org/KopfFinalizerMarker"]}, "spec": {}}),
        )
    }

    fn now() -> Option<DateTime<Utc>> {
        Some("2026-12-01T04:03:12Z".parse().unwrap())
    }

    #[test]
    fn not_deleting_is_none() {
        let o = obj(json!({"metadata": {"name": "a", "namespace": "n", "finalizers": [KOPF_FINALIZER]}, "spec": {}}));
        assert_eq!(pending("microservice", &o, now(), Some(&[])), None);
    }

    #[test]
    fn kopf_marker_without_a_kopf_operator() {
        let p = pending("microservice", &terminating(), now(), Some(&[])).unwrap();
        assert_eq!(p.age_seconds, Some(192));
        assert_eq!(p.finalizers.len(), 1);
        assert_eq!(p.finalizers[0].owner_running, Some(false));
        assert!(
            p.finalizers[0].owner.contains("a Kopf operator serving namespace todo"),
            "{}",
            p.finalizers[0].owner
        );
        assert!(p.finalizers[0].owner.contains("not running"));
        assert_eq!(
            p.finalizers[0].remove_with,
            r#"kubectl -n todo patch microservice todo-api --type=json -p '[{"op":"test","path":"/metadata/finalizers/0","value":"kopf.zalando.org/KopfFinalizerMarker"},{"op":"remove","path":"/metadata/finalizers/0"}]'"#
        );
        let m = p.message();
        assert!(
            m.contains("2026-12-01T04:00:00Z") && m.contains("3m12s ago") && m.contains(KOPF_FINALIZER),
            "{m}"
        );
        assert!(p.fix().unwrap().contains(&p.finalizers[0].remove_with));
        let e = p.evidence(&terminating());
        assert!(
            e.iter()
                .any(|l| l.contains("generation=2") && l.contains("not a spec change")),
            "{e:?}"
        );
    }

    #[test]
    fn kopf_marker_with_a_kopf_operator_serving_the_namespace() {
        let d: k8s_openapi::api::apps::v1::Deployment = serde_json::from_value(json!({
            "metadata": {"name": "kopf-op", "namespace": "ops"},
            "spec": {"selector": {}, "template": {"spec": {"containers": [
                {"name": "operator", "image": "x", "command": ["kopf", "run", "-A", "op.py"]}]}}}
        }))
        .unwrap();
        let op = crate::evidence::operator::recognise(&d).unwrap();
        let p = pending("microservice", &terminating(), now(), Some(std::slice::from_ref(&op))).unwrap();
        assert_eq!(p.finalizers[0].owner_running, Some(true));
        assert_eq!(p.finalizers[0].operator.as_deref(), Some("ops/deployment/kopf-op"));
        assert!(p.fix().unwrap().starts_with("ops/deployment/kopf-op should remove"));
        // Ours is not Kopf: it does not count as the owner.
        let ours = OperatorRef {
            kind: OperatorKind::Ours,
            ..op
        };
        let p = pending("microservice", &terminating(), now(), Some(&[ours])).unwrap();
        assert_eq!(p.finalizers[0].owner_running, Some(false));
    }

    #[test]
    fn unknown_finalizer_and_index() {
        let o = obj(
            json!({"metadata": {"name": "a", "namespace": "n", "deletionTimestamp": "2026-12-01T04:00:00Z",
            "finalizers": ["example.com/x", KOPF_FINALIZER]}, "spec": {}}),
        );
        let p = pending("microservice", &o, None, None).unwrap();
        assert_eq!(p.age_seconds, None);
        assert_eq!(p.finalizers[0].owner_running, None);
        assert_eq!(p.finalizers[1].index, 1);
        assert!(p.finalizers[1].remove_with.contains("/metadata/finalizers/1"));
        assert!(p.finalizers[1].owner.contains("cannot tell"));
        let other = pending("kopfexamples.kopf.dev", &o, None, None).unwrap();
        assert!(
            other.finalizers[1]
                .remove_with
                .starts_with("kubectl -n n patch kopfexamples.kopf.dev a --type=json"),
            "{}",
            other.finalizers[1].remove_with
        );
    }
}
