//! The CRD `manifests` prints when the cluster has one already: the cluster's CRD with ours
//! added, so that applying it removes nothing the cluster's declares — its versions, schema
//! properties and keywords, `x-kubernetes-preserve-unknown-fields`, printer columns, short names
//! and subresources stay as they are — and what ours would add or, applied as it is, remove, for
//! the note `manifests` writes on stderr. Pure: CRDs as JSON (`apiextensions.k8s.io/v1`) in and
//! out, no I/O.
//!
//! Why: `kubectl apply` of a CRD replaces its `spec.versions` list whole. Applying this tool's
//! CRD over a Kopf operator's drops `x-kubernetes-preserve-unknown-fields` from `status`, and the
//! API server then prunes every status field the schema does not declare (`status.kopf`,
//! handler results): the `status-pruned` failure the diagnostics name.
//!
//! The merge, per schema node the two share: the cluster's node is kept whole (its type,
//! `required`, enums, patterns, descriptions); ours adds the properties the cluster's lacks
//! (objects of the same type, without `additionalProperties`), its `items` merged alike, and
//! `x-kubernetes-preserve-unknown-fields: true` where ours has it (which only ever keeps more).
//! A node whose type differs is the cluster's. Printer columns: the cluster's, then ours that it
//! lacks (by name). A version ours serves and the cluster's lacks is added, served, not the
//! storage version. The status subresource is never added to a version without one (it would
//! change how every other writer's status writes work): that is said, with the patch that adds it.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use crate::resource::CRD_NAME;

/// What `manifests` prints for the CRD when the cluster has one.
#[derive(Debug, Clone, PartialEq)]
pub enum OverExisting {
    /// The cluster's CRD with ours added.
    Merged(Merged),
    /// No CRD can be printed that keeps the cluster's and serves this tool's operator: the
    /// reason, in a sentence (a scope or kind that differs: the API server refuses to change
    /// the scope, and another kind is another resource).
    LeftOut(String),
}

/// The merged CRD and what it changes.
#[derive(Debug, Clone, PartialEq)]
pub struct Merged {
    /// The CRD to print: the cluster's (metadata: name, labels, annotations but kubectl's
    /// last-applied; no status), with ours added.
    pub crd: Value,
    /// What the printed CRD adds to the cluster's, one [`declarations`] line each (a property
    /// added stands for what is under it).
    pub adds: Vec<String>,
    /// What applying this tool's own CRD, unmerged, with `kubectl apply` would remove from the
    /// cluster's, one [`declarations`] line each (likewise).
    pub ours_would_remove: Vec<String>,
    /// What the cluster's CRD keeps although this tool's operator needs it otherwise, each with
    /// the command that changes it (left to the user: it changes the CRD for every operator).
    pub left_as_is: Vec<String>,
}

/// The CRD to print over `existing` (the cluster's CRD object, as read) for `ours`
/// ([`crate::resource::crd`] as JSON).
pub fn over_existing(existing: &Value, ours: &Value) -> OverExisting {
    let (e_spec, o_spec) = (&existing["spec"], &ours["spec"]);
    if e_spec["scope"] != o_spec["scope"] {
        return OverExisting::LeftOut(format!(
            "the cluster's CRD {CRD_NAME} is {}, this tool's {}, and the API server does not change a CRD's scope",
            text(&e_spec["scope"]),
            text(&o_spec["scope"])
        ));
    }
    if e_spec["names"]["kind"] != o_spec["names"]["kind"] {
        return OverExisting::LeftOut(format!(
            "the cluster's CRD {CRD_NAME} serves kind {}, this tool's operator kind {}: changing it would break every client of {}",
            text(&e_spec["names"]["kind"]),
            text(&o_spec["names"]["kind"]),
            text(&e_spec["names"]["kind"])
        ));
    }
    let mut left_as_is = Vec::new();
    let mut spec = e_spec.clone();
    spec["names"] = merge_names(&e_spec["names"], &o_spec["names"]);
    spec["versions"] = Value::Array(merge_versions(
        e_spec["versions"].as_array().map_or(&[][..], Vec::as_slice),
        o_spec["versions"].as_array().map_or(&[][..], Vec::as_slice),
        &mut left_as_is,
    ));
    let crd = json!({
        "apiVersion": ours["apiVersion"],
        "kind": ours["kind"],
        "metadata": merge_metadata(&existing["metadata"], &ours["metadata"]),
        "spec": spec,
    });
    let (before, after, plain) = (declarations(existing), declarations(&crd), declarations(ours));
    let lost: Vec<&String> = before.difference(&after).collect();
    if !lost.is_empty() {
        // The merge keeps every node it does not add to; this guards that promise.
        return OverExisting::LeftOut(format!(
            "merging this tool's CRD into the cluster's would drop {}",
            lost.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("; ")
        ));
    }
    OverExisting::Merged(Merged {
        adds: topmost(after.difference(&before)),
        ours_would_remove: topmost(before.difference(&plain)),
        crd,
        left_as_is,
    })
}

/// Everything a CRD declares that applying another one could take away, one line each, sorted:
/// `short name ms`, `category all`, `version v1alpha1`, `version v1alpha1: subresource status`,
/// `version v1alpha1: printer column Phase (.status.phase)`, `version v1alpha1: .status.kopf`
/// (a schema property), `version v1alpha1: .status x-kubernetes-preserve-unknown-fields=true`
/// (a schema keyword and its JSON value; descriptions left out). Schema paths: `.` the root,
/// `[*]` an array's items, `{*}` `additionalProperties`.
pub fn declarations(crd: &Value) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let spec = &crd["spec"];
    for name in strings(&spec["names"]["shortNames"]) {
        out.insert(format!("short name {name}"));
    }
    for name in strings(&spec["names"]["categories"]) {
        out.insert(format!("category {name}"));
    }
    for version in spec["versions"].as_array().into_iter().flatten() {
        let v = text(&version["name"]);
        out.insert(format!("version {v}"));
        for sub in version["subresources"].as_object().into_iter().flat_map(Map::keys) {
            out.insert(format!("version {v}: subresource {sub}"));
        }
        for column in version["additionalPrinterColumns"].as_array().into_iter().flatten() {
            out.insert(format!(
                "version {v}: printer column {} ({})",
                text(&column["name"]),
                text(&column["jsonPath"])
            ));
        }
        schema_declarations(&version["schema"]["openAPIV3Schema"], ".", &v, &mut out);
    }
    out
}

/// The properties and keywords of one schema node and of the nodes under it.
fn schema_declarations(node: &Value, path: &str, version: &str, out: &mut BTreeSet<String>) {
    let Some(map) = node.as_object() else { return };
    let child = |name: &str| {
        if path == "." {
            format!(".{name}")
        } else {
            format!("{path}.{name}")
        }
    };
    for (key, value) in map {
        match key.as_str() {
            "description" => {}
            "properties" => {
                for (name, schema) in value.as_object().into_iter().flatten() {
                    let at = child(name);
                    out.insert(format!("version {version}: {at}"));
                    schema_declarations(schema, &at, version, out);
                }
            }
            "items" if value.is_object() => schema_declarations(value, &format!("{path}[*]"), version, out),
            "additionalProperties" if value.is_object() => {
                schema_declarations(value, &format!("{path}{{*}}"), version, out)
            }
            _ => {
                out.insert(format!("version {version}: {path} {key}={value}"));
            }
        }
    }
}

/// The [`declarations`] that are not under another of `items`: a property added or removed
/// stands for its keywords and the properties under it.
fn topmost<'a>(items: impl Iterator<Item = &'a String>) -> Vec<String> {
    let items: Vec<&String> = items.collect();
    let under = |item: &str, property: &str| {
        item.strip_prefix(property)
            .is_some_and(|rest| rest.starts_with(['.', '[', '{', ' ']))
    };
    items
        .iter()
        .filter(|item| !items.iter().any(|p| p != *item && under(item, p)))
        .map(|item| item.to_string())
        .collect()
}

/// The cluster's name, labels (ours added where it has none of that key) and annotations but
/// kubectl's `last-applied-configuration` (which kubectl writes anew).
fn merge_metadata(existing: &Value, ours: &Value) -> Value {
    let mut labels = existing["labels"].as_object().cloned().unwrap_or_default();
    for (key, value) in ours["labels"].as_object().into_iter().flatten() {
        labels.entry(key.clone()).or_insert_with(|| value.clone());
    }
    let mut metadata = json!({"name": CRD_NAME, "labels": labels});
    let mut annotations = existing["annotations"].as_object().cloned().unwrap_or_default();
    annotations.remove("kubectl.kubernetes.io/last-applied-configuration");
    if !annotations.is_empty() {
        metadata["annotations"] = Value::Object(annotations);
    }
    metadata
}

/// The cluster's names, with our short names it lacks.
fn merge_names(existing: &Value, ours: &Value) -> Value {
    let mut names = existing.clone();
    let mut short: Vec<Value> = existing["shortNames"].as_array().cloned().unwrap_or_default();
    for name in ours["shortNames"].as_array().into_iter().flatten() {
        if !short.contains(name) {
            short.push(name.clone());
        }
    }
    if !short.is_empty() {
        names["shortNames"] = Value::Array(short);
    }
    names
}

/// The cluster's versions, each merged with ours of the same name; then ours it lacks, served
/// but not stored (the cluster's storage version stays).
fn merge_versions(existing: &[Value], ours: &[Value], left_as_is: &mut Vec<String>) -> Vec<Value> {
    let mut out = Vec::new();
    for (index, version) in existing.iter().enumerate() {
        match ours.iter().find(|o| o["name"] == version["name"]) {
            Some(our) => out.push(merge_version(index, version, our, left_as_is)),
            None => out.push(version.clone()),
        }
    }
    for our in ours {
        if !existing.iter().any(|e| e["name"] == our["name"]) {
            let mut added = our.clone();
            added["storage"] = json!(existing.iter().all(|e| e["storage"] != true));
            out.push(added);
        }
    }
    out
}

/// One version the two CRDs share: the cluster's, with our schema, printer columns merged in.
fn merge_version(index: usize, existing: &Value, ours: &Value, left_as_is: &mut Vec<String>) -> Value {
    let name = text(&existing["name"]);
    let mut out = existing.clone();
    let (e_schema, o_schema) = (
        &existing["schema"]["openAPIV3Schema"],
        &ours["schema"]["openAPIV3Schema"],
    );
    out["schema"]["openAPIV3Schema"] = if e_schema.is_object() {
        merge_schema(e_schema, o_schema)
    } else {
        o_schema.clone()
    };
    let mut columns: Vec<Value> = existing["additionalPrinterColumns"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for column in ours["additionalPrinterColumns"].as_array().into_iter().flatten() {
        if !columns.iter().any(|c| c["name"] == column["name"]) {
            columns.push(column.clone());
        }
    }
    if !columns.is_empty() {
        out["additionalPrinterColumns"] = Value::Array(columns);
    }
    if ours["subresources"]["status"].is_object() && !existing["subresources"]["status"].is_object() {
        let patch = if existing["subresources"].is_object() {
            format!(r#"[{{"op":"add","path":"/spec/versions/{index}/subresources/status","value":{{}}}}]"#)
        } else {
            format!(r#"[{{"op":"add","path":"/spec/versions/{index}/subresources","value":{{"status":{{}}}}}}]"#)
        };
        left_as_is.push(format!(
            "version {name} has no status subresource, so this tool's operator cannot write status (it patches .../status); adding one makes every writer's status changes through the object itself ignored, so decide with the other teams: kubectl patch crd {CRD_NAME} --type=json -p '{patch}'"
        ));
    }
    if existing["served"] == false {
        left_as_is.push(format!(
            "version {name} is not served, so this tool's operator cannot list Microservices: kubectl patch crd {CRD_NAME} --type=json -p '[{{\"op\":\"replace\",\"path\":\"/spec/versions/{index}/served\",\"value\":true}}]'"
        ));
    }
    out
}

/// One schema node the two CRDs share: the cluster's, with ours added where it lacks it (see the
/// module docs).
fn merge_schema(existing: &Value, ours: &Value) -> Value {
    let mut out = existing.clone();
    let (Some(target), Some(our)) = (out.as_object_mut(), ours.as_object()) else {
        return out;
    };
    let kind = existing["type"].as_str();
    if kind.is_none() || existing["type"] != ours["type"] || existing["x-kubernetes-int-or-string"] == true {
        return out;
    }
    match kind {
        Some("object") => {
            if our.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true)) {
                target.insert("x-kubernetes-preserve-unknown-fields".into(), Value::Bool(true));
            }
            if let Some(properties) = our.get("properties").and_then(Value::as_object)
                && !target.contains_key("additionalProperties")
            {
                let mine = target
                    .entry("properties")
                    .or_insert_with(|| Value::Object(Map::new()))
                    .as_object_mut()
                    .expect("properties is an object");
                for (name, schema) in properties {
                    let merged = match mine.get(name) {
                        Some(theirs) => merge_schema(theirs, schema),
                        None => schema.clone(),
                    };
                    mine.insert(name.clone(), merged);
                }
            }
        }
        Some("array") => {
            if let (Some(theirs), Some(items)) = (existing.get("items"), our.get("items")) {
                target.insert("items".into(), merge_schema(theirs, items));
            }
        }
        _ => {}
    }
    out
}

fn strings(value: &Value) -> impl Iterator<Item = &str> {
    value.as_array().into_iter().flatten().filter_map(Value::as_str)
}

fn text(value: &Value) -> String {
    value.as_str().map_or_else(|| value.to_string(), str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ours() -> Value {
        serde_json::to_value(crate::resource::crd()).unwrap()
    }

    /// A Kopf operator's CRD of the same resource, as the Kopf tutorial writes one: spec and
    /// status open, its own printer columns, another short name; as the API server returns it.
    fn kopf_crd() -> Value {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {
                "name": CRD_NAME,
                "uid": "6a1d1c1e-5e1c-4a53-9d0f-1f3c2a1b0c9d",
                "resourceVersion": "812",
                "generation": 1,
                "creationTimestamp": "2026-11-29T17:00:00Z",
                "labels": {"team": "catalog"},
                "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}", "owner": "catalog-team"},
                "managedFields": [{"manager": "kubectl-client-side-apply", "operation": "Update"}]
            },
            "spec": {
                "group": "platform.example.io",
                "scope": "Namespaced",
                "names": {"plural": "microservices", "singular": "microservice", "kind": "Microservice",
                          "listKind": "MicroserviceList", "shortNames": ["msvc"]},
                "versions": [{
                    "name": "v1alpha1", "served": true, "storage": true,
                    "subresources": {"status": {}},
                    "additionalPrinterColumns": [
                        {"name": "Handled", "type": "string", "jsonPath": ".status.accept.message"},
                        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}
                    ],
                    "schema": {"openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
                        }
                    }}
                }],
                "conversion": {"strategy": "None"}
            },
            "status": {"conditions": [{"type": "Established", "status": "True"}]}
        })
    }

    fn merged(existing: &Value) -> Merged {
        match over_existing(existing, &ours()) {
            OverExisting::Merged(m) => m,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn our_crd_keeps_status_open_while_declaring_its_fields() {
        let crd = ours();
        let status = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"];
        assert_eq!(status["x-kubernetes-preserve-unknown-fields"], true);
        for field in ["phase", "observedGeneration", "acceptedSpec", "conditions"] {
            assert!(status["properties"][field].is_object(), "{field}");
        }
    }

    /// Acceptance 1 of issue 22: over a CRD that keeps unknown status fields, the printed CRD
    /// keeps them open and keeps every printer column the cluster's has, removing nothing.
    #[test]
    fn a_crd_that_preserves_unknown_status_fields_keeps_them_and_every_printer_column() {
        let existing = kopf_crd();
        let m = merged(&existing);
        let version = &m.crd["spec"]["versions"][0];
        let root = &version["schema"]["openAPIV3Schema"];
        assert_eq!(
            root["properties"]["status"]["x-kubernetes-preserve-unknown-fields"],
            true
        );
        assert_eq!(root["properties"]["spec"]["x-kubernetes-preserve-unknown-fields"], true);
        // Ours is declared inside the open status; the open spec keeps its keywords (no
        // `required` added over objects that may lack it).
        assert_eq!(root["properties"]["status"]["properties"]["phase"]["type"], "string");
        assert_eq!(root["properties"]["spec"]["properties"]["port"]["maximum"], 65535.0);
        assert!(root["properties"]["spec"].get("required").is_none());
        let columns: Vec<&str> = version["additionalPrinterColumns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(columns, ["Handled", "Age", "Phase", "Image", "Port"]);
        assert_eq!(m.crd["spec"]["names"]["shortNames"], json!(["msvc", "ms"]));
        assert_eq!(m.crd["spec"]["conversion"], json!({"strategy": "None"}));
        // Nothing the cluster's declares is lost: every declaration of it is one of the merge's.
        let (before, after) = (declarations(&existing), declarations(&m.crd));
        assert!(
            before.is_subset(&after),
            "{:?}",
            before.difference(&after).collect::<Vec<_>>()
        );
        assert!(m.left_as_is.is_empty(), "{:?}", m.left_as_is);
        // Applied as it is, ours would have closed spec and dropped the cluster's columns; its
        // status is open as theirs is.
        assert!(
            !m.ours_would_remove
                .contains(&"version v1alpha1: .status x-kubernetes-preserve-unknown-fields=true".to_string())
        );
        for gone in [
            "version v1alpha1: .spec x-kubernetes-preserve-unknown-fields=true",
            "version v1alpha1: printer column Handled (.status.accept.message)",
            "short name msvc",
        ] {
            assert!(
                m.ours_would_remove.contains(&gone.to_string()),
                "{gone}: {:?}",
                m.ours_would_remove
            );
        }
        assert!(
            m.adds.contains(&"version v1alpha1: .status.phase".to_string()),
            "{:?}",
            m.adds
        );
        assert!(
            !m.adds.iter().any(|a| a.starts_with("version v1alpha1: .status.phase ")),
            "{:?}",
            m.adds
        );
        assert!(
            m.adds
                .contains(&"version v1alpha1: printer column Phase (.status.phase)".to_string())
        );
        // The metadata is the cluster's, without what the server and kubectl own.
        assert_eq!(
            m.crd["metadata"],
            json!({"name": CRD_NAME,
                   "labels": {"team": "catalog", "app.kubernetes.io/name": "kubectl-microservice"},
                   "annotations": {"owner": "catalog-team"}})
        );
        assert!(m.crd.get("status").is_none());
    }

    #[test]
    fn our_crd_over_itself_adds_and_removes_nothing() {
        let m = merged(&ours());
        assert!(m.adds.is_empty(), "{:?}", m.adds);
        assert!(m.ours_would_remove.is_empty(), "{:?}", m.ours_would_remove);
        assert_eq!(m.crd["spec"], ours()["spec"]);
    }

    /// The CRD of an earlier release, whose status was closed: the merge opens it (which only
    /// keeps more) and removes nothing.
    #[test]
    fn a_closed_status_of_an_earlier_release_is_opened() {
        let mut earlier = ours();
        let status = &mut earlier["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"];
        status
            .as_object_mut()
            .unwrap()
            .remove("x-kubernetes-preserve-unknown-fields");
        let m = merged(&earlier);
        assert_eq!(
            m.adds,
            ["version v1alpha1: .status x-kubernetes-preserve-unknown-fields=true"]
        );
        assert!(m.ours_would_remove.is_empty());
    }

    #[test]
    fn a_field_of_another_type_stays_the_clusters() {
        let mut existing = kopf_crd();
        existing["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"] = json!({"phase": {"type": "integer"}, "kopf": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}});
        let m = merged(&existing);
        let status = &m.crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"];
        assert_eq!(status["properties"]["phase"], json!({"type": "integer"}));
        assert_eq!(
            status["properties"]["kopf"]["x-kubernetes-preserve-unknown-fields"],
            true
        );
        assert!(status["properties"]["acceptedSpec"].is_object());
        assert!(
            m.ours_would_remove
                .contains(&"version v1alpha1: .status.kopf".to_string())
        );
    }

    #[test]
    fn another_version_is_kept_and_ours_is_added_unstored() {
        let mut existing = kopf_crd();
        existing["spec"]["versions"][0]["name"] = json!("v1");
        let m = merged(&existing);
        let versions = m.crd["spec"]["versions"].as_array().unwrap();
        assert_eq!(versions.len(), 2);
        assert_eq!(versions[0]["name"], "v1");
        assert_eq!(versions[0]["storage"], true);
        assert_eq!(versions[1]["name"], "v1alpha1");
        assert_eq!(versions[1]["storage"], false);
        assert_eq!(versions[1]["served"], true);
        assert!(m.ours_would_remove.contains(&"version v1".to_string()));
        assert!(m.adds.contains(&"version v1alpha1".to_string()));
    }

    #[test]
    fn a_missing_status_subresource_is_left_as_is_with_the_patch() {
        let mut existing = kopf_crd();
        existing["spec"]["versions"][0]
            .as_object_mut()
            .unwrap()
            .remove("subresources");
        let m = merged(&existing);
        assert!(m.crd["spec"]["versions"][0].get("subresources").is_none());
        assert_eq!(m.left_as_is.len(), 1);
        assert!(
            m.left_as_is[0].ends_with(&format!(
                r#"kubectl patch crd {CRD_NAME} --type=json -p '[{{"op":"add","path":"/spec/versions/0/subresources","value":{{"status":{{}}}}}}]'"#
            )),
            "{}",
            m.left_as_is[0]
        );
    }

    #[test]
    fn another_scope_or_kind_leaves_the_crd_out() {
        let mut cluster_scoped = kopf_crd();
        cluster_scoped["spec"]["scope"] = json!("Cluster");
        let OverExisting::LeftOut(why) = over_existing(&cluster_scoped, &ours()) else {
            panic!()
        };
        assert!(why.contains("is Cluster, this tool's Namespaced"), "{why}");
        let mut other_kind = kopf_crd();
        other_kind["spec"]["names"]["kind"] = json!("MicroService");
        assert!(matches!(over_existing(&other_kind, &ours()), OverExisting::LeftOut(_)));
    }

    #[test]
    fn declarations_name_paths_and_keywords() {
        let d = declarations(&kopf_crd());
        assert!(d.contains("version v1alpha1: . type=\"object\""));
        assert!(d.contains("version v1alpha1: .status"));
        assert!(d.contains("version v1alpha1: subresource status"));
        assert!(d.contains("short name msvc"));
        let ours = declarations(&ours());
        assert!(ours.contains("version v1alpha1: .status.conditions[*].reason"));
    }
}
