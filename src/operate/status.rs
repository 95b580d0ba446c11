//! The status the `accept` handler writes, computed purely from the handler's outcome and the
//! object's current status, plus the checks around the write (is it needed, was it pruned).
//!
//! Shape written (server-side apply on the status subresource, field manager
//! `kubectl-microservice`):
//! `{"phase": "Accepted"|"Invalid", "observedGeneration": N, "acceptedSpec": {"image", "port"},
//! "conditions": [{"type": "Accepted", "status": "True"|"False", "reason", "message",
//! "observedGeneration": N, "lastTransitionTime"}]}`.
//!
//! `acceptedSpec` is the spec the handler accepted (as the tutorial's Kopf handler records the spec
//! it received), so `status` can name exactly which spec fields changed since, old → new; an
//! Invalid outcome keeps the last accepted one.

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::validate::{FieldError, ValidSpec, describe};
use crate::resource::{API_VERSION, KIND};
use crate::time::rfc3339_seconds;

/// Condition type, so `kubectl wait --for=condition=Accepted` works.
pub const CONDITION_TYPE: &str = "Accepted";

/// What the handler concluded about the spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The spec is valid and was received.
    Accepted(ValidSpec),
    /// The spec failed validation; every failing field.
    Invalid(Vec<FieldError>),
}

impl Outcome {
    /// `Accepted` or `Invalid`: the `status.phase` value.
    pub fn phase(&self) -> &'static str {
        match self {
            Outcome::Accepted(_) => "Accepted",
            Outcome::Invalid(_) => "Invalid",
        }
    }

    /// The condition's reason.
    pub fn reason(&self) -> &'static str {
        match self {
            Outcome::Accepted(_) => "SpecAccepted",
            Outcome::Invalid(_) => "InvalidSpec",
        }
    }

    /// The condition's message: what was received, or which fields are wrong and what was expected.
    pub fn message(&self) -> String {
        match self {
            Outcome::Accepted(spec) => format!("handler accept received image {} and port {}", spec.image, spec.port),
            Outcome::Invalid(errors) => describe(errors),
        }
    }
}

/// The status for `outcome` at `generation`. `lastTransitionTime` is kept from the current
/// condition when its `status` does not change (metav1.Condition's rule), else `now`.
pub fn desired_status(outcome: &Outcome, generation: i64, current: Option<&Value>, now: DateTime<Utc>) -> Value {
    let condition_status = match outcome {
        Outcome::Accepted(_) => "True",
        Outcome::Invalid(_) => "False",
    };
    let transition = current_condition(current)
        .filter(|c| c.get("status").and_then(Value::as_str) == Some(condition_status))
        .and_then(|c| c.get("lastTransitionTime").cloned())
        .unwrap_or_else(|| Value::String(rfc3339_seconds(now)));
    let accepted_spec = match outcome {
        Outcome::Accepted(spec) => Some(json!({"image": spec.image, "port": spec.port})),
        Outcome::Invalid(_) => current.and_then(|c| c.get("acceptedSpec")).cloned(),
    };
    let mut status = json!({
        "phase": outcome.phase(),
        "observedGeneration": generation,
        "conditions": [{
            "type": CONDITION_TYPE,
            "status": condition_status,
            "reason": outcome.reason(),
            "message": outcome.message(),
            "observedGeneration": generation,
            "lastTransitionTime": transition,
        }]
    });
    if let Some(spec) = accepted_spec {
        status["acceptedSpec"] = spec;
    }
    status
}

fn current_condition(status: Option<&Value>) -> Option<&Value> {
    status?
        .get("conditions")?
        .as_array()?
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(CONDITION_TYPE))
}

/// Whether `current` already says everything `desired` says (phase, observedGeneration,
/// acceptedSpec and the Accepted condition), so the write can be skipped: a resume of an unchanged
/// object writes nothing (one written by an older version, without acceptedSpec, gets it once).
pub fn already_written(current: Option<&Value>, desired: &Value) -> bool {
    let Some(current) = current else { return false };
    current.get("phase") == desired.get("phase")
        && current.get("observedGeneration") == desired.get("observedGeneration")
        && current.get("acceptedSpec") == desired.get("acceptedSpec")
        && current_condition(Some(current)) == current_condition(Some(desired))
}

/// The server-side apply body for the status subresource.
pub fn apply_body(status: &Value) -> Value {
    json!({"apiVersion": API_VERSION, "kind": KIND, "status": status})
}

/// The fields we wrote that the stored object does not have: the CRD's status schema pruned
/// them (a structural schema drops undeclared fields and still answers 200).
pub fn pruned_fields(sent: &Value, stored: Option<&Value>) -> Vec<&'static str> {
    ["phase", "observedGeneration", "acceptedSpec", "conditions"]
        .into_iter()
        .filter(|field| sent.get(*field).is_some() && stored.and_then(|s| s.get(*field)).is_none())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> DateTime<Utc> {
        "2026-11-29T16:21:14Z".parse().unwrap()
    }

    fn accepted() -> Outcome {
        Outcome::Accepted(ValidSpec {
            image: "ghcr.io/yrw9281/it30-todo-api:0.1.0".into(),
            port: 8080,
        })
    }

    #[test]
    fn accepted_status_carries_generation_everywhere() {
        let s = desired_status(&accepted(), 3, None, now());
        assert_eq!(s["phase"], "Accepted");
        assert_eq!(s["observedGeneration"], 3);
        assert_eq!(s["conditions"][0]["observedGeneration"], 3);
        assert_eq!(s["conditions"][0]["status"], "True");
        assert_eq!(s["conditions"][0]["lastTransitionTime"], "2026-11-29T16:21:14Z");
        assert_eq!(
            s["conditions"][0]["message"],
            "handler accept received image ghcr.io/yrw9281/it30-todo-api:0.1.0 and port 8080"
        );
        assert_eq!(
            s["acceptedSpec"],
            json!({"image": "ghcr.io/yrw9281/it30-todo-api:0.1.0", "port": 8080})
        );
    }

    #[test]
    fn invalid_keeps_the_last_accepted_spec() {
        let first = desired_status(&accepted(), 1, None, now());
        let invalid = desired_status(&Outcome::Invalid(vec![]), 2, Some(&first), now());
        assert_eq!(invalid["acceptedSpec"], first["acceptedSpec"]);
        assert!(
            desired_status(&Outcome::Invalid(vec![]), 1, None, now())
                .get("acceptedSpec")
                .is_none()
        );
        // An older version's status, without acceptedSpec, is written once more.
        let mut old = first.clone();
        old.as_object_mut().unwrap().remove("acceptedSpec");
        assert!(!already_written(Some(&old), &first));
    }

    #[test]
    fn invalid_status_names_the_field() {
        let errors = super::super::validate::validate_spec(&json!({"image": "nginx", "port": "eighty"})).unwrap_err();
        let s = desired_status(&Outcome::Invalid(errors), 1, None, now());
        assert_eq!(s["phase"], "Invalid");
        assert_eq!(s["conditions"][0]["status"], "False");
        assert_eq!(s["conditions"][0]["reason"], "InvalidSpec");
        assert_eq!(
            s["conditions"][0]["message"],
            "spec.port: expected an integer 1..65535, got \"eighty\""
        );
    }

    #[test]
    fn transition_time_kept_while_status_holds() {
        let first = desired_status(&accepted(), 1, None, now());
        let later: DateTime<Utc> = "2026-11-29T18:00:00Z".parse().unwrap();
        let second = desired_status(&accepted(), 2, Some(&first), later);
        assert_eq!(second["conditions"][0]["lastTransitionTime"], "2026-11-29T16:21:14Z");
        let flipped = desired_status(&Outcome::Invalid(vec![]), 3, Some(&second), later);
        assert_eq!(flipped["conditions"][0]["lastTransitionTime"], "2026-11-29T18:00:00Z");
    }

    #[test]
    fn unchanged_status_is_not_rewritten() {
        let written = desired_status(&accepted(), 3, None, now());
        let again = desired_status(&accepted(), 3, Some(&written), "2026-11-30T00:00:00Z".parse().unwrap());
        assert!(already_written(Some(&written), &again));
        // Kopf's status (phase only, no observedGeneration) needs one write to add it.
        assert!(!already_written(Some(&json!({"phase": "Accepted"})), &again));
        assert!(!already_written(None, &again));
        let newer = desired_status(&accepted(), 4, Some(&written), now());
        assert!(!already_written(Some(&written), &newer));
    }

    #[test]
    fn detects_pruned_fields() {
        let sent = desired_status(&accepted(), 1, None, now());
        assert!(pruned_fields(&sent, Some(&sent)).is_empty());
        assert_eq!(
            pruned_fields(&sent, Some(&json!({"phase": "Accepted"}))),
            ["observedGeneration", "acceptedSpec", "conditions"]
        );
        assert_eq!(
            pruned_fields(&sent, None),
            ["phase", "observedGeneration", "acceptedSpec", "conditions"]
        );
    }

    #[test]
    fn apply_body_names_the_kind() {
        let body = apply_body(&json!({"phase": "Accepted"}));
        assert_eq!(
            body,
            json!({"apiVersion": "platform.example.io/v1alpha1", "kind": "Microservice", "status": {"phase": "Accepted"}})
        );
    }
}
