//! Why a handler runs and what Kopf leaves on an object: the cause (create, update, resume, in
//! Kopf's words), Kopf's finalizer and its diff-base annotation, read the same way by `operate`
//! (src/operate/cause.rs decides the cause) and by the diagnostics.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::Value;

/// Kopf's finalizer; a Kopf operator that is gone leaves it behind and blocks deletion.
pub const KOPF_FINALIZER: &str = "kopf.zalando.org/KopfFinalizerMarker";

/// Suffix of Kopf's diff-base annotation; the prefix is configurable in Kopf
/// (`kopf.zalando.org` by default), so any `*/last-handled-configuration` is recognised.
pub const LAST_HANDLED_SUFFIX: &str = "/last-handled-configuration";

/// Why the handler runs, in Kopf's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cause {
    /// An object never handled.
    Create,
    /// The spec changed since it was last handled.
    Update,
    /// First handling in this process's life of an object handled before, spec unchanged.
    Resume,
}

impl Cause {
    /// `create`, `update`, `resume`: the value of the `cause` log field.
    pub fn as_str(self) -> &'static str {
        match self {
            Cause::Create => "create",
            Cause::Update => "update",
            Cause::Resume => "resume",
        }
    }

    /// Kopf's title in `<Title> is processed: N succeeded; M failed.`
    pub fn title(self) -> &'static str {
        match self {
            Cause::Create => "Creation",
            Cause::Update => "Updating",
            Cause::Resume => "Resuming",
        }
    }
}

/// Reads a `create|update|resume` cause value.
pub fn parse_cause(s: &str) -> Option<Cause> {
    Some(match s {
        "create" => Cause::Create,
        "update" => Cause::Update,
        "resume" => Cause::Resume,
        _ => return None,
    })
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the evidence on the object says about its last handling by a Kopf operator.
#[derive(Debug, Clone, PartialEq)]
pub struct KopfRecord {
    /// The annotation key, e.g. `kopf.zalando.org/last-handled-configuration`.
    pub annotation: String,
    /// The `spec` recorded in it; `None` when the annotation is not JSON or has no spec.
    pub spec: Option<Value>,
}

/// Finds a Kopf diff-base annotation (any prefix) and the spec recorded in it.
pub fn kopf_record(annotations: Option<&BTreeMap<String, String>>) -> Option<KopfRecord> {
    let (key, value) = annotations?.iter().find(|(k, _)| k.ends_with(LAST_HANDLED_SUFFIX))?;
    let spec = serde_json::from_str::<Value>(value)
        .ok()
        .and_then(|v| v.get("spec").cloned());
    Some(KopfRecord {
        annotation: key.clone(),
        spec,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kopf_records_are_found_under_any_prefix() {
        let annotations = |key: &str, value: &str| BTreeMap::from([(key.to_string(), value.to_string())]);
        let record = kopf_record(Some(&annotations(
            "ops.example.com/last-handled-configuration",
            r#"{"spec":{"port":8080}}"#,
        )))
        .unwrap();
        assert_eq!(record.annotation, "ops.example.com/last-handled-configuration");
        assert_eq!(record.spec, Some(serde_json::json!({"port": 8080})));
        let garbage = kopf_record(Some(&annotations("kopf.zalando.org/last-handled-configuration", "x"))).unwrap();
        assert_eq!(garbage.spec, None);
        assert_eq!(kopf_record(Some(&annotations("kopf.zalando.org/other", "{}"))), None);
        assert_eq!(kopf_record(None), None);
    }

    #[test]
    fn causes_speak_kopfs_words() {
        let words: Vec<(String, &str)> = [Cause::Create, Cause::Update, Cause::Resume]
            .into_iter()
            .map(|c| (c.to_string(), c.title()))
            .collect();
        assert_eq!(
            words,
            [
                ("create".to_string(), "Creation"),
                ("update".to_string(), "Updating"),
                ("resume".to_string(), "Resuming")
            ]
        );
    }
}
