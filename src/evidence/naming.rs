//! Which log lines name an object of the resource asked about (issue 18 D9): the one rule
//! every reading of an operator's log by object follows (the resolver's "its logs name the
//! object", double handling). Pure.
//!
//! Kopf's plain-text lines say `[NS/NAME] ...` with no kind; its json lines
//! (`--log-format=json`) carry the object reference's `kind` (`{"object": {"apiVersion":
//! "platform.example.io/v1alpha1", "kind": "Microservice", ...}}`, [`Record::object_kind`]). So
//! a line names an object of resource R only when
//! - its own kind says so (json): the kind is R's; a line of another kind names no object of R,
//!   whoever logged it;
//! - it says no kind (plain, ours): the operator may handle R, that is its source does not say
//!   it handles other resources only ([`Handles::Others`]). A source not in evidence
//!   ([`Handles::Unknown`]) may, but such lines must not outrank those of an operator whose
//!   source says it handles R ([`Handles::It`]): the resolver then counts only its lines of R's
//!   kind ([`certainly_names`]).

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;

use super::operator::{OperatorKind, OperatorRef};
use crate::logs::Record;
use crate::resource::identity::ResourceId;

/// What an operator's source says of the resource asked about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Handles {
    /// It registers a handler of the resource (or it is ours, the Microservice operator, and
    /// the resource is the Microservice).
    It,
    /// It registers handlers of other resources only: these, as written
    /// (`backups.platform.example.io`).
    Others(Vec<String>),
    /// Its source is not in evidence, does not parse, or names a resource with no literal.
    Unknown,
}

/// Whether a resource as [`super::operator::handled_resources`] writes it (`microservices`,
/// `platform.example.io v1alpha1 microservices`, `backups.platform.example.io`, a kind) names
/// `resource`: one of its words does, as kubectl matches a type ([`ResourceId::named_by`]).
pub fn names_resource(written: &str, resource: &ResourceId) -> bool {
    written.split(' ').any(|w| resource.named_by(w))
}

impl Handles {
    /// What `written` (the resources a Kopf operator's source handles, as
    /// [`super::operator::handled_resources`] reads them) says of `resource`: `None` or empty is
    /// unknown. The one rule of [`handles`] and of the operators `--operator` left out, whose
    /// list was read while their Deployments were in evidence.
    pub fn of_written(written: Option<Vec<String>>, resource: &ResourceId) -> Handles {
        match written {
            None => Handles::Unknown,
            Some(written) if written.is_empty() => Handles::Unknown,
            Some(written) if written.iter().any(|w| names_resource(w, resource)) => Handles::It,
            Some(written) => Handles::Others(written),
        }
    }
}

/// What `op`'s source says of `resource` ([`Handles`]): ours handles the Microservice and
/// nothing else (`operate` reconciles [`crate::resource::CRD_NAME`] only: never a candidate for
/// another resource's object); a Kopf operator's by the `.py` files of the ConfigMaps its
/// Deployment (among `deployments`) mounts.
pub fn handles(
    op: &OperatorRef,
    deployments: &[Deployment],
    configmaps: &[ConfigMap],
    resource: &ResourceId,
) -> Handles {
    match op.kind {
        OperatorKind::Ours if resource.is_microservice() => Handles::It,
        OperatorKind::Ours => Handles::Others(vec![crate::resource::CRD_NAME.to_string()]),
        OperatorKind::Kopf => {
            let Some(d) = super::pods::find(deployments, &op.namespace, &op.name) else {
                return Handles::Unknown;
            };
            Handles::of_written(super::operator::handled_resources(d, configmaps), resource)
        }
    }
}

/// Whether `record` (a line of an operator whose source says `handles`) may name an object of
/// `resource` (the module's rule): its own kind when it has one, else what the operator
/// handles. A record naming no object names none.
pub fn may_name(record: &Record, handles: &Handles, resource: &ResourceId) -> bool {
    record.object.is_some()
        && match record.object_kind.as_deref() {
            Some(kind) => kind.eq_ignore_ascii_case(&resource.kind),
            None => !matches!(handles, Handles::Others(_)),
        }
}

/// Whether `record` says it is about an object of another kind than `resource`'s (a json
/// line's object reference): then it names no object of `resource`, whoever logged it.
pub fn of_other_kind(record: &Record, resource: &ResourceId) -> bool {
    record
        .object_kind
        .as_deref()
        .is_some_and(|kind| !kind.eq_ignore_ascii_case(&resource.kind))
}

/// Whether `record` certainly names an object of `resource`: its own kind is the resource's
/// (a json line), whatever the operator's source says.
pub fn certainly_names(record: &Record, resource: &ResourceId) -> bool {
    record.object.is_some()
        && record
            .object_kind
            .as_deref()
            .is_some_and(|kind| kind.eq_ignore_ascii_case(&resource.kind))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logs::LogSource;

    fn record(line: &str) -> Record {
        LogSource {
            pod: "p".into(),
            container: "c".into(),
            previous: false,
            text: format!("{line}\n"),
        }
        .records()
        .remove(0)
    }

    #[test]
    fn a_line_names_an_object_of_the_resource_by_its_kind_else_by_what_its_operator_handles() {
        let ms = ResourceId::microservice();
        let plain = record(
            "[2026-12-01 08:50:00,000] kopf.objects         [ERROR   ] [team-alpha/api] Handler 'backup' failed with an exception. Will retry.",
        );
        assert!(may_name(&plain, &Handles::It, &ms));
        assert!(may_name(&plain, &Handles::Unknown, &ms));
        assert!(!may_name(
            &plain,
            &Handles::Others(vec!["backups.platform.example.io".into()]),
            &ms
        ));
        assert!(!certainly_names(&plain, &ms));
        let json = |kind: &str| {
            record(&format!(
                r#"{{"message": "Handler 'x' succeeded.", "timestamp": "2026-12-01T08:50:00.000000+00:00", "object": {{"apiVersion": "platform.example.io/v1alpha1", "kind": "{kind}", "name": "api", "uid": "u", "namespace": "team-alpha"}}, "severity": "info"}}"#
            ))
        };
        let backup = json("Backup");
        assert_eq!(backup.object_kind.as_deref(), Some("Backup"));
        assert!(!may_name(&backup, &Handles::It, &ms), "its own kind decides");
        assert!(!may_name(&backup, &Handles::Unknown, &ms));
        let microservice = json("Microservice");
        assert!(may_name(&microservice, &Handles::Unknown, &ms) && certainly_names(&microservice, &ms));
        assert!(may_name(&microservice, &Handles::Others(vec!["backups".into()]), &ms));
        let nothing = record("[2026-12-01 08:50:00,000] kopf.reactor         [INFO    ] Starting Kopf 1.38.0.");
        assert!(!may_name(&nothing, &Handles::It, &ms));
    }

    #[test]
    fn a_written_resource_names_the_resource_as_kubectl_matches_a_type() {
        let ms = ResourceId::microservice();
        assert!(names_resource("microservices", &ms));
        assert!(names_resource("platform.example.io v1alpha1 microservices", &ms));
        assert!(names_resource("microservices.platform.example.io", &ms));
        assert!(names_resource("Microservice", &ms));
        assert!(!names_resource("backups.platform.example.io", &ms));
        assert!(!names_resource("platform.example.io v1 backups", &ms));
    }
}
