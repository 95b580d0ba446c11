//! Which cause, if any, a watched object gives the `accept` handler: create, update or resume,
//! with Kopf's meaning (docs/operate.md, `operate`).
//!
//! Evidence, in order:
//! 1. this process's own record of the generation it last handled for the object's uid: the same
//!    generation means nothing to do (our status writes, label-only changes and relists all land
//!    here: the API server bumps `metadata.generation` only on spec changes when the status
//!    subresource is on);
//! 2. first sight in this process: `status.observedGeneration` (ours) — equal means resume,
//!    older means the spec changed while we were away: update;
//! 3. no observedGeneration but a Kopf `*/last-handled-configuration` annotation: the object is
//!    taken over from Kopf — resume if the recorded spec equals the current one, else update;
//! 4. none of these: create.

use crate::resource::MicroserviceObject;
use crate::vocab::cause::{Cause, KOPF_FINALIZER, KopfRecord, kopf_record};

/// The decision for one watched object.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Nothing to do: this process already handled this generation.
    Skip,
    /// Run the handler.
    Handle {
        /// Why.
        cause: Cause,
        /// Set when the object was last handled by a Kopf operator (taken over).
        kopf: Option<KopfRecord>,
    },
}

/// Decides the cause for `obj`, given the generation this process last handled for its uid
/// (`None` on first sight in this process, or in this leadership term).
pub fn decide(obj: &MicroserviceObject, handled_generation: Option<i64>) -> Decision {
    let generation = obj.metadata.generation.unwrap_or(0);
    if let Some(handled) = handled_generation {
        return if handled >= generation {
            Decision::Skip
        } else {
            Decision::Handle {
                cause: Cause::Update,
                kopf: None,
            }
        };
    }
    if let Some(observed) = obj.observed_generation() {
        let cause = if observed >= generation {
            Cause::Resume
        } else {
            Cause::Update
        };
        return Decision::Handle { cause, kopf: None };
    }
    if let Some(record) = kopf_record(obj.metadata.annotations.as_ref()) {
        let unchanged = record.spec.as_ref() == Some(&obj.spec);
        let cause = if unchanged { Cause::Resume } else { Cause::Update };
        return Decision::Handle {
            cause,
            kopf: Some(record),
        };
    }
    Decision::Handle {
        cause: Cause::Create,
        kopf: None,
    }
}

/// The index of Kopf's finalizer in `metadata.finalizers`, if it is there.
pub fn kopf_finalizer_index(obj: &MicroserviceObject) -> Option<usize> {
    obj.metadata
        .finalizers
        .as_ref()?
        .iter()
        .position(|f| f == KOPF_FINALIZER)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn object(generation: i64, status: Option<Value>, annotations: Value) -> MicroserviceObject {
        serde_json::from_value(json!({
            "metadata": {"name": "todo-api", "namespace": "todo", "uid": "u1", "generation": generation, "annotations": annotations},
            "spec": {"image": "ghcr.io/yrw9281/it30-todo-api:0.1.0", "port": 8080},
            "status": status
        }))
        .unwrap()
    }

    fn handle(cause: Cause) -> Decision {
        Decision::Handle { cause, kopf: None }
    }

    #[test]
    fn never_handled_is_create() {
        assert_eq!(decide(&object(1, None, json!({})), None), handle(Cause::Create));
        // A phase written by someone else, without observedGeneration, is not a handling record.
        assert_eq!(
            decide(&object(1, Some(json!({"phase": "Pending"})), json!({})), None),
            handle(Cause::Create)
        );
    }

    #[test]
    fn first_sight_of_a_handled_object_is_resume_or_update() {
        let current = object(
            3,
            Some(json!({"phase": "Accepted", "observedGeneration": 3})),
            json!({}),
        );
        assert_eq!(decide(&current, None), handle(Cause::Resume));
        let changed_while_down = object(
            4,
            Some(json!({"phase": "Accepted", "observedGeneration": 3})),
            json!({}),
        );
        assert_eq!(decide(&changed_while_down, None), handle(Cause::Update));
    }

    #[test]
    fn within_a_process_only_a_new_generation_runs_the_handler() {
        let obj = object(3, Some(json!({"observedGeneration": 3})), json!({}));
        // Our own status write, a label-only change, a relist: same generation.
        assert_eq!(decide(&obj, Some(3)), Decision::Skip);
        // A status pruned by the CRD schema must not make us loop either.
        assert_eq!(decide(&object(3, None, json!({})), Some(3)), Decision::Skip);
        assert_eq!(
            decide(&object(4, Some(json!({"observedGeneration": 3})), json!({})), Some(3)),
            handle(Cause::Update)
        );
    }

    #[test]
    fn kopf_objects_are_taken_over() {
        let same = object(
            2,
            Some(json!({"phase": "Accepted"})),
            json!({
                "kopf.zalando.org/last-handled-configuration": "{\"spec\":{\"image\":\"ghcr.io/yrw9281/it30-todo-api:0.1.0\",\"port\":8080}}\n"
            }),
        );
        match decide(&same, None) {
            Decision::Handle {
                cause: Cause::Resume,
                kopf: Some(record),
            } => {
                assert_eq!(record.annotation, "kopf.zalando.org/last-handled-configuration")
            }
            other => panic!("{other:?}"),
        }
        let changed = object(
            4,
            Some(json!({"phase": "Accepted"})),
            json!({
                "ops.example.com/last-handled-configuration": "{\"spec\":{\"image\":\"ghcr.io/yrw9281/it30-todo-api:0.0.9\",\"port\":8080}}"
            }),
        );
        assert!(matches!(
            decide(&changed, None),
            Decision::Handle {
                cause: Cause::Update,
                kopf: Some(_)
            }
        ));
        let garbage = object(
            1,
            None,
            json!({"kopf.zalando.org/last-handled-configuration": "not json"}),
        );
        assert!(matches!(
            decide(&garbage, None),
            Decision::Handle {
                cause: Cause::Update,
                kopf: Some(KopfRecord { spec: None, .. })
            }
        ));
    }

    #[test]
    fn real_kopf_stale_object_is_an_update() {
        let raw = include_str!("../../tests/fixtures/f-todo-api-stale-accepted.json");
        let obj: MicroserviceObject = serde_json::from_str(raw).unwrap();
        assert!(matches!(
            decide(&obj, None),
            Decision::Handle {
                cause: Cause::Update,
                kopf: Some(_)
            }
        ));
    }

    #[test]
    fn finds_kopf_finalizer() {
        let mut obj = object(1, None, json!({}));
        assert_eq!(kopf_finalizer_index(&obj), None);
        obj.metadata.finalizers = Some(vec!["other".into(), KOPF_FINALIZER.into()]);
        assert_eq!(kopf_finalizer_index(&obj), Some(1));
    }
}
