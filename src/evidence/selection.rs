//! Whether a Kopf operator's handlers select an object at all: its resource-changing handlers
//! (create, update, resume, delete, field) of the snapshot's resource (the Microservice, or
//! `--resource`'s), read from the source its
//! Deployment mounts (the `.py` keys of its ConfigMaps), each matched against the object by
//! [`crate::kopf::filters::prematch`] (`labels=`, `annotations=`, `when=`, `field=`/`value=`).
//! Pure. Read here, in the evidence layer, so that the resolver ([`super::resolve`]) can drop
//! a candidate that excludes the object by design when another serves it, and
//! [`crate::diagnose::filtered`] can say why the resolved one ignores it.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;

use super::Snapshot;
use crate::kopf::filters::{self, Miss, Object, Selects, Target};
use crate::kopf::source::handlers::{self, Handler, HandlerId};
use crate::kopf::source::{Module, SourceLine};
use crate::resource::{KIND, MicroserviceObject};
use crate::vocab::cause::LAST_HANDLED_SUFFIX;

/// The part of `obj`'s body (its JSON: `metadata`, `spec`, `status`) that the `field=` filters
/// of `handlers` read: the top-level members their paths begin with, each as the whole
/// object's JSON holds it, so that a path resolves in it as in the whole body. Only what a
/// path names is turned into JSON: each object of a list judged is filtered, and its
/// `metadata` (`managedFields` included) would otherwise be serialised for every handler read.
fn body_for_fields(handlers: &[Handler], obj: &MicroserviceObject) -> serde_json::Value {
    let heads: Vec<&str> = handlers
        .iter()
        .filter_map(|h| match &h.filters.field {
            Some(handlers::FieldPath::Path(path)) => path.first().map(String::as_str),
            _ => None,
        })
        .collect();
    let mut body = serde_json::Map::new();
    if heads.contains(&"metadata") {
        body.insert(
            "metadata".into(),
            serde_json::to_value(&obj.metadata).unwrap_or_default(),
        );
    }
    if heads.contains(&"spec") {
        body.insert("spec".into(), obj.spec.clone());
    }
    if heads.contains(&"status")
        && let Some(status) = &obj.status
    {
        body.insert("status".into(), status.clone());
    }
    serde_json::Value::Object(body)
}

/// A handler that excludes the object, and each filter that does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Excluding {
    /// The decorator (file:line and text).
    pub at: SourceLine,
    /// `create`, `update`, ...
    pub cause: &'static str,
    /// Kopf's id of the handler, when known.
    pub id: Option<String>,
    /// The filters it fails.
    pub misses: Vec<Miss>,
}

/// What an operator's handlers say of the object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Filtered {
    /// Not a Kopf operator's Deployment, no source in evidence, or no handler of Microservices
    /// in it: nothing said.
    Unread,
    /// A handler selects the object (or the operator's source does not parse): nothing said.
    Selected,
    /// Every resource-changing handler of Microservices excludes the object: Kopf ignores it.
    Excluded {
        /// The operator (`NS/deployment/NAME`).
        operator: String,
        /// The handlers, in registration order.
        handlers: Vec<Excluding>,
    },
    /// None is known to select it, and some cannot be decided from the source.
    Undecided {
        /// The operator (`NS/deployment/NAME`).
        operator: String,
        /// Those that cannot be decided: the decorator and why.
        unknown: Vec<(SourceLine, Vec<String>)>,
        /// Those that exclude it.
        handlers: Vec<Excluding>,
    },
}

/// A Kopf operator's resource-changing handlers of Microservices, read once from its source;
/// [`OperatorHandlers::of`] judges each object.
#[derive(Debug)]
pub struct OperatorHandlers {
    /// `NS/deployment/NAME`.
    operator: String,
    /// `None`: a file does not parse (nothing is said).
    handlers: Option<Vec<Handler>>,
    /// The snapshot's resource, as a resource selector sees it.
    target: Target,
    /// Its plural (`microservices`), for what is said of a selector that may not be it.
    plural: String,
}

impl OperatorHandlers {
    /// The handlers of the Kopf operator `operator` (`NS/deployment/NAME`) whose Deployment is
    /// `deployment`, from the `.py` keys of the ConfigMaps it mounts; `None` when none is in
    /// `configmaps`. The caller says it is a Kopf operator.
    pub fn read_deployment(
        snapshot: &Snapshot,
        operator: &str,
        deployment: &Deployment,
        configmaps: &[ConfigMap],
    ) -> Option<OperatorHandlers> {
        let files = crate::kopf::source::mounted_sources(deployment, configmaps);
        if files.is_empty() {
            return None;
        }
        let mut all = Some(Vec::new());
        for (file, text) in &files {
            match (Module::parse(file, text), all.as_mut()) {
                (Ok(module), Some(all)) => all.extend(
                    handlers::read(&module)
                        .handlers
                        .into_iter()
                        .filter(|h| filters::is_changing(h.cause)),
                ),
                _ => all = None,
            }
        }
        Some(OperatorHandlers {
            operator: operator.to_string(),
            handlers: all,
            target: target(snapshot),
            plural: plural_words(&snapshot.resource),
        })
    }

    /// What the handlers say of `obj`.
    pub fn of(&self, obj: &MicroserviceObject) -> Filtered {
        let Some(all) = &self.handlers else {
            return Filtered::Selected;
        };
        let empty = BTreeMap::new();
        let body = body_for_fields(all, obj);
        let annotations = obj.metadata.annotations.as_ref().unwrap_or(&empty);
        let object = Object {
            labels: obj.metadata.labels.as_ref().unwrap_or(&empty),
            annotations,
            body: &body,
            has_old: annotations.keys().any(|k| k.ends_with(LAST_HANDLED_SUFFIX)),
        };
        let mut excluding = Vec::new();
        let mut unknown = Vec::new();
        for h in all {
            let selects = match h.resource.as_ref().map(|r| filters::resource_selects(r, &self.target)) {
                Some(Some(false)) => continue,
                Some(Some(true)) => filters::prematch(h, &object),
                _ => Selects::Unknown(vec![format!(
                    "its resource `{}` may or may not be {}",
                    h.decorator.text, self.plural
                )]),
            };
            match selects {
                Selects::Yes => return Filtered::Selected,
                Selects::No(misses) => excluding.push(excluded(h, misses)),
                Selects::Unknown(why) => unknown.push((h.decorator.clone(), why)),
            }
        }
        let operator = self.operator.clone();
        match (excluding.is_empty(), unknown.is_empty()) {
            (true, true) => Filtered::Unread,
            (false, true) => Filtered::Excluded {
                operator,
                handlers: excluding,
            },
            _ => Filtered::Undecided {
                operator,
                unknown,
                handlers: excluding,
            },
        }
    }
}

impl OperatorHandlers {
    /// A label of `obj` that alone makes these handlers select it: without it, every handler
    /// excludes the object ([`OperatorHandlers::of`] says `Excluded`). The first such key, in
    /// key order; `None` when the handlers select the object without labels, or no one label
    /// decides. What a team changes on its own object to leave an operator that selects objects
    /// by label (issue 18 trial, team-charlie: platform-audit's `labels={'audit': 'on'}`).
    pub fn opt_out_label(&self, obj: &MicroserviceObject) -> Option<String> {
        if !matches!(self.of(obj), Filtered::Selected) {
            return None;
        }
        let labels = obj.metadata.labels.as_ref()?;
        labels.keys().find_map(|key| {
            let mut without = obj.clone();
            if let Some(l) = without.metadata.labels.as_mut() {
                l.remove(key);
            }
            matches!(self.of(&without), Filtered::Excluded { .. }).then(|| key.clone())
        })
    }
}

fn excluded(h: &Handler, misses: Vec<Miss>) -> Excluding {
    Excluding {
        at: h.decorator.clone(),
        cause: h.cause.as_str(),
        id: match &h.id {
            HandlerId::Known(id) => Some(id.clone()),
            HandlerId::Unknown(_) => None,
        },
        misses,
    }
}

/// How the resource's objects are called in a sentence: `Microservices` (as said before
/// `--resource`), else its plural (`kopfexamples`).
pub(crate) fn plural_words(resource: &crate::resource::identity::ResourceId) -> String {
    if resource.is_microservice() {
        format!("{KIND}s")
    } else {
        resource.plural.clone()
    }
}

/// The snapshot's resource as a handler's resource selector sees it (plural, kind, singular,
/// short names, group, versions): with the CRD's names and versions when it is in evidence.
pub(crate) fn target(snapshot: &Snapshot) -> Target {
    let resource = &snapshot.resource;
    let mut names = vec![
        resource.plural.clone(),
        resource.kind.to_lowercase(),
        resource.kind.clone(),
    ];
    names.extend((!resource.singular.is_empty()).then(|| resource.singular.clone()));
    names.extend(resource.short_names.iter().cloned());
    let mut versions = vec![resource.version.clone()];
    let crd = snapshot.crd.get();
    if let Some(crd) = crd {
        let n = &crd.spec.names;
        names.extend(n.singular.iter().cloned());
        names.extend(n.short_names.iter().flatten().cloned());
        versions.extend(crd.spec.versions.iter().map(|v| v.name.clone()));
    }
    Target {
        group: resource.group.clone(),
        versions,
        names,
        // The Microservice's names are this project's own; another resource's, its CRD's.
        names_known: crd.is_some() || resource.is_microservice(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    /// A `field=` path resolves in the part of the body [`body_for_fields`] builds as in the
    /// whole object's JSON, for paths into `metadata`, `spec`, `status`, a missing status,
    /// and a member the object does not have.
    #[test]
    fn the_body_a_field_filter_reads_is_the_objects_own() {
        let source = r#"
import kopf

@kopf.on.update("microservices", field="spec.port")
def port(**_): pass

@kopf.on.update("microservices", field="status.phase")
def phase(**_): pass

@kopf.on.update("microservices", field="metadata.labels.tier")
def tier(**_): pass

@kopf.on.update("microservices", field="spec")
def spec(**_): pass

@kopf.on.update("microservices", field="kind")
def kind(**_): pass
"#;
        let module = Module::parse("operator.py", source).unwrap();
        let all: Vec<Handler> = handlers::read(&module).handlers;
        let paths: Vec<Vec<String>> = all
            .iter()
            .filter_map(|h| match &h.filters.field {
                Some(handlers::FieldPath::Path(p)) => Some(p.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(paths.len(), 5, "{paths:?}");
        let resolve = |body: &Value, path: &[String]| -> Option<Value> {
            path.iter().try_fold(body, |v, step| v.as_object()?.get(step)).cloned()
        };
        let with_status: MicroserviceObject = serde_json::from_value(json!({
            "metadata": {"name": "a", "namespace": "ns", "labels": {"tier": "web"},
                "managedFields": [{"manager": "kopf", "operation": "Update"}]},
            "spec": {"image": "x", "port": 8080},
            "status": {"phase": "Accepted"},
        }))
        .unwrap();
        let mut without_status = with_status.clone();
        without_status.status = None;
        without_status.spec = Value::Null;
        for obj in [&with_status, &without_status] {
            let whole = serde_json::to_value(obj).unwrap();
            let part = body_for_fields(&all, obj);
            for path in &paths {
                assert_eq!(resolve(&part, path), resolve(&whole, path), "{path:?}");
            }
        }
        assert_eq!(
            body_for_fields(&all[..1], &with_status),
            json!({"spec": {"image": "x", "port": 8080}}),
            "only what the paths name"
        );
    }
}
