//! Validation of a Microservice `spec` read leniently (raw JSON), one object at a time.
//!
//! The strict CRD ([`crate::resource::crd`]) already rejects most bad input at the API server;
//! this check is what protects the operator under a looser CRD (the Kopf tutorial's, or
//! `x-kubernetes-preserve-unknown-fields`), where `port: "eighty"` can be stored.

use std::fmt;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use crate::resource::{IMAGE_MAX_LENGTH, IMAGE_PATTERN};

static IMAGE_RE: LazyLock<Regex> = LazyLock::new(|| Regex::new(IMAGE_PATTERN).expect("IMAGE_PATTERN compiles"));

/// A spec that passed validation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidSpec {
    /// `spec.image`, an OCI reference.
    pub image: String,
    /// `spec.port`, 1..=65535.
    pub port: u16,
}

/// One field that failed validation: which field, what was expected, what was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// JSON path of the field, e.g. `spec.port`.
    pub field: &'static str,
    /// What a valid value looks like.
    pub expected: &'static str,
    /// The value found, rendered as JSON (`"eighty"`, `70000`), or `missing`.
    pub found: String,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: expected {}, got {}", self.field, self.expected, self.found)
    }
}

/// Joins field errors into one sentence, as written in the condition message and the event.
pub fn describe(errors: &[FieldError]) -> String {
    errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
}

const IMAGE_EXPECTED: &str = "an OCI image reference such as ghcr.io/org/app:1.0.0";
const PORT_EXPECTED: &str = "an integer 1..65535";

/// Validates `spec`: `image` a non-empty OCI reference of at most [`IMAGE_MAX_LENGTH`] bytes,
/// `port` an integer 1..65535. Returns every failing field, not only the first.
pub fn validate_spec(spec: &Value) -> Result<ValidSpec, Vec<FieldError>> {
    let mut errors = Vec::new();
    let image = match spec.get("image") {
        None | Some(Value::Null) => {
            errors.push(field_error("spec.image", IMAGE_EXPECTED, "missing".into()));
            None
        }
        Some(Value::String(s)) if s.is_empty() => {
            errors.push(field_error("spec.image", IMAGE_EXPECTED, "an empty string".into()));
            None
        }
        Some(Value::String(s)) if s.len() > IMAGE_MAX_LENGTH => {
            errors.push(field_error(
                "spec.image",
                IMAGE_EXPECTED,
                format!("a string of {} bytes (at most {IMAGE_MAX_LENGTH})", s.len()),
            ));
            None
        }
        Some(Value::String(s)) if IMAGE_RE.is_match(s) => Some(s.clone()),
        Some(other) => {
            errors.push(field_error("spec.image", IMAGE_EXPECTED, render(other)));
            None
        }
    };
    let port = match spec.get("port") {
        None | Some(Value::Null) => {
            errors.push(field_error("spec.port", PORT_EXPECTED, "missing".into()));
            None
        }
        Some(value) => match value.as_u64().filter(|p| (1..=65535).contains(p)) {
            Some(p) => Some(p as u16),
            None => {
                errors.push(field_error("spec.port", PORT_EXPECTED, render(value)));
                None
            }
        },
    };
    match (image, port) {
        (Some(image), Some(port)) if errors.is_empty() => Ok(ValidSpec { image, port }),
        _ => Err(errors),
    }
}

fn field_error(field: &'static str, expected: &'static str, found: String) -> FieldError {
    FieldError { field, expected, found }
}

/// Renders a found value as compact JSON, cut to 64 characters so a huge value cannot flood
/// a condition message.
fn render(value: &Value) -> String {
    let s = value.to_string();
    if s.chars().count() > 64 {
        let cut: String = s.chars().take(61).collect();
        format!("{cut}...")
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn errors(spec: Value) -> Vec<String> {
        validate_spec(&spec)
            .unwrap_err()
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn accepts_real_references() {
        for image in [
            "ghcr.io/yrw9281/it30-todo-api:0.1.0",
            "nginx",
            "nginx:1.27-alpine",
            "registry.example.com/store/catalog:1.4.0",
            "localhost:5000/a/b_c__d-e.f:tag",
            "docker.io/library/busybox@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
            "quay.io/org/app:v1.2.3@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
            "[::1]:5000/app:1",
        ] {
            assert_eq!(
                validate_spec(&json!({"image": image, "port": 8080})),
                Ok(ValidSpec {
                    image: image.into(),
                    port: 8080
                }),
                "{image}"
            );
        }
    }

    #[test]
    fn rejects_malformed_references() {
        for image in [
            "Not An Image",
            "app/UPPER",
            "app:",
            "app@sha256:short",
            ":tag",
            "a//b",
            "-lead",
            "x\ny",
        ] {
            let errs = errors(json!({"image": image, "port": 80}));
            assert_eq!(errs.len(), 1, "{image}");
            assert!(
                errs[0].starts_with("spec.image: expected an OCI image reference"),
                "{image}: {errs:?}"
            );
        }
    }

    #[test]
    fn missing_and_empty_image() {
        assert_eq!(
            errors(json!({"port": 80})),
            ["spec.image: expected an OCI image reference such as ghcr.io/org/app:1.0.0, got missing"]
        );
        assert_eq!(
            errors(json!({"image": "", "port": 80}))[0],
            "spec.image: expected an OCI image reference such as ghcr.io/org/app:1.0.0, got an empty string"
        );
        assert!(errors(json!({"image": "a".repeat(600), "port": 80}))[0].contains("600 bytes"));
        assert!(errors(json!({"image": 7, "port": 80}))[0].ends_with("got 7"));
    }

    #[test]
    fn port_bounds_and_types() {
        for (port, found) in [
            (json!(0), "0"),
            (json!(70000), "70000"),
            (json!("eighty"), "\"eighty\""),
            (json!(-1), "-1"),
            (json!(80.5), "80.5"),
            (json!(null), "missing"),
        ] {
            let errs = errors(json!({"image": "nginx", "port": port}));
            assert_eq!(errs, [format!("spec.port: expected an integer 1..65535, got {found}")]);
        }
        assert_eq!(validate_spec(&json!({"image": "nginx", "port": 1})).unwrap().port, 1);
        assert_eq!(
            validate_spec(&json!({"image": "nginx", "port": 65535})).unwrap().port,
            65535
        );
    }

    #[test]
    fn every_failing_field_is_reported() {
        let errs = validate_spec(&Value::Null).unwrap_err();
        assert_eq!(
            errs.iter().map(|e| e.field).collect::<Vec<_>>(),
            ["spec.image", "spec.port"]
        );
        assert_eq!(
            describe(&errs),
            "spec.image: expected an OCI image reference such as ghcr.io/org/app:1.0.0, got missing; spec.port: expected an integer 1..65535, got missing"
        );
    }

    #[test]
    fn long_values_are_cut() {
        let errs = errors(json!({"image": "nginx", "port": "x".repeat(200)}));
        assert!(errs[0].ends_with("...") && errs[0].len() < 140, "{}", errs[0]);
    }
}
