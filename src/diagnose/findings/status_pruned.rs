//! `status-pruned`: the CRD's status schema dropped what the operator wrote (Kopf's
//! "inconsistencies" lines, field by field), and the CRD patch that keeps it.

use super::crd_facts::{crd_label, storage_version_index};
use super::posting_facts::sources;
use super::{Ctx, Line, finding};
use crate::diagnose::finding::{Finding, FindingId, Severity};
use crate::diagnose::staleness;
use crate::evidence::operator::OperatorKind;
use crate::kopf::messages::Lifecycle;
use crate::text::{count, json_pointer, json_string_in_single_quotes};

/// Status fields the operator writes that the CRD's status schema (of its storage version)
/// would prune: no `x-kubernetes-preserve-unknown-fields` and no such property. Ours writes
/// `phase`, `observedGeneration`, `conditions`; a Kopf handler here writes `phase` (Kopf's own
/// progress under `status.kopf` is not counted: Kopf falls back to annotations).
fn pruned_by_schema(ctx: &Ctx<'_>) -> Vec<String> {
    let Some(crd) = ctx.snapshot.crd.get() else {
        return Vec::new();
    };
    // The object is read as its storage version (the one objects are persisted in).
    let Some(v) = crd.spec.versions.iter().find(|v| v.storage) else {
        return Vec::new();
    };
    let Some(root) = v.schema.as_ref().and_then(|s| s.open_api_v3_schema.as_ref()) else {
        return Vec::new();
    };
    if root.x_kubernetes_preserve_unknown_fields == Some(true) {
        return Vec::new();
    }
    let status = root.properties.as_ref().and_then(|p| p.get("status"));
    if status.is_some_and(|s| s.x_kubernetes_preserve_unknown_fields == Some(true)) {
        return Vec::new();
    }
    let writes: &[&str] = match ctx.operator.as_ref().map(|o| o.kind) {
        Some(OperatorKind::Ours) => &["phase", "observedGeneration", "conditions"],
        _ => &["phase"],
    };
    writes
        .iter()
        .filter(|f| {
            !status
                .and_then(|s| s.properties.as_ref())
                .is_some_and(|p| p.contains_key(**f))
        })
        .map(|f| format!("status.{f}"))
        .collect()
}

/// `status-pruned`: status fields the API server dropped from the operator's writes, by Kopf's
/// "inconsistencies" lines ([`from_lines`]); without such lines, the fields the CRD's status
/// schema would drop of those the operator writes ([`pruned_by_schema`]), a problem.
pub(crate) fn check(ctx: &Ctx<'_>) -> Vec<Finding> {
    let lines: Vec<&Line> = ctx
        .lines
        .iter()
        .filter(|l| l.record.lifecycle() == Lifecycle::PatchInconsistencies)
        .collect();
    let by_schema = pruned_by_schema(ctx);
    if lines.is_empty() && !by_schema.is_empty() {
        return vec![finding(
            FindingId::StatusPruned,
            Severity::Problem,
            format!(
                "the CRD's status schema drops {} that the operator writes",
                by_schema.join(", ")
            ),
            vec![format!(
                "CRD {}: the status schema has no property {} and no x-kubernetes-preserve-unknown-fields",
                crate::resource::CRD_NAME,
                by_schema.join(", ")
            )],
            Some(schema_fix(ctx, &by_schema)),
        )];
    }
    from_lines(ctx, &lines)
}

/// What the API server dropped, field by field, from every "inconsistencies" line (each field
/// once, with the first character of the value written).
fn removed_fields(lines: &[&Line]) -> Vec<(String, char)> {
    let mut removed: Vec<(String, char)> = Vec::new();
    for l in lines {
        for (field, first) in crate::kopf::messages::removed_status_fields(&l.record.message) {
            if !removed.iter().any(|(f, _)| *f == field) {
                removed.push((field, first));
            }
        }
    }
    removed
}

/// The findings of Kopf's "inconsistencies" `lines`: a field the verdict reads dropped (or the
/// whole status) is a problem; a handler's return value a warning; only `status.kopf` (Kopf's
/// progress copy) `ok`, unless the operator keeps Kopf's state only in the status.
fn from_lines(ctx: &Ctx<'_>, lines: &[&Line]) -> Vec<Finding> {
    let Some(last) = lines.last() else { return Vec::new() };
    let removed = removed_fields(lines);
    let cite = format!("{}; last: {}", count(lines.len() as u64, "such line"), last.cite());
    let (kopf, rest): (Vec<_>, Vec<_>) = removed.iter().partition(|(f, _)| f == "kopf");
    let (verdict_fields, results): (Vec<_>, Vec<_>) = rest
        .into_iter()
        .partition(|(f, _)| staleness::STATUS_FIELDS_READ.contains(&f.as_str()));
    let mut out = Vec::new();
    if !verdict_fields.is_empty() || (removed.is_empty()) {
        let names: Vec<String> = verdict_fields.iter().map(|(f, _)| format!("status.{f}")).collect();
        out.push(finding(
            FindingId::StatusPruned,
            Severity::Problem,
            if names.is_empty() {
                "the API server dropped status fields the operator wrote: the CRD's status schema does not allow them"
                    .into()
            } else {
                format!(
                    "the API server dropped {} that the operator wrote: the CRD's status schema does not allow {}",
                    names.join(", "),
                    if names.len() == 1 { "it" } else { "them" }
                )
            },
            vec![cite.clone()],
            Some(field_fix(ctx, &verdict_fields)),
        ));
    }
    if !results.is_empty() {
        let names: Vec<String> = results.iter().map(|(f, _)| format!("status.{f}")).collect();
        out.push(finding(
            FindingId::StatusPruned,
            Severity::Warning,
            format!(
                "the API server dropped {} (a handler's return value, which Kopf stores as status.<handler id>): the CRD's status schema has no such property; the handling itself is not affected",
                names.join(", ")
            ),
            vec![cite.clone()],
            Some(field_fix(ctx, &results)),
        ));
    }
    if !kopf.is_empty() && out.is_empty() {
        out.push(kopf_progress_dropped(ctx, cite, &kopf));
    }
    out
}

/// Only Kopf's own progress (`status.kopf.progress`) dropped: Kopf up to 1.43 writes it to the
/// status and to annotations `kopf.zalando.org/<handler>` (SmartProgressStorage, the default),
/// and reads either, so nothing is lost (`ok`) unless the operator keeps state only in the
/// status (a `Status*Storage` in its source: a problem).
fn kopf_progress_dropped(ctx: &Ctx<'_>, cite: String, kopf: &[&(String, char)]) -> Finding {
    let status_only_storage = sources(ctx)
        .iter()
        .any(|(_, text)| text.contains("StatusProgressStorage") || text.contains("StatusDiffBaseStorage"));
    finding(
        FindingId::StatusPruned,
        if status_only_storage { Severity::Problem } else { Severity::Ok },
        if status_only_storage {
            "the API server dropped status.kopf, where this operator keeps Kopf's state (a Status*Storage in its source): the CRD's status schema does not allow it".into()
        } else {
            "the API server dropped status.kopf (Kopf's progress copy): nothing is lost, Kopf keeps its progress in annotations kopf.zalando.org/<handler> too".into()
        },
        vec![
            cite,
            "Kopf 1.38's default SmartProgressStorage writes progress to the annotations and to status.kopf.progress, and reads either".into(),
        ],
        status_only_storage.then(|| field_fix(ctx, kopf)),
    )
}

/// The fix for dropped `status.<field>`s: a JSON patch that adds each as a property of the
/// CRD's status schema (its type from the value written; a dict keeps what it holds), on the
/// storage version. The CRD is shared: it is every operator's and user's of Microservices on
/// the cluster, so the patch only adds room, and says so. Without the CRD in evidence, or with
/// no field named, the general edit.
fn field_fix(ctx: &Ctx<'_>, fields: &[&(String, char)]) -> String {
    let Some(index) = storage_version_index(ctx).filter(|_| !fields.is_empty()) else {
        return crd_status_fix();
    };
    let schemas: Vec<(&str, &str)> = fields
        .iter()
        .map(|(field, first)| (field.as_str(), schema_of(*first)))
        .collect();
    let ops = add_ops(ctx, index, &schemas);
    format!(
        "add {} to the CRD's status schema; the CRD {} is shared by every operator and user of Microservices on the cluster (this adds properties and changes nothing else):\n  kubectl patch crd {} --type=json -p '[{}]' {}",
        fields
            .iter()
            .map(|(f, _)| format!("status.{f}"))
            .collect::<Vec<_>>()
            .join(", "),
        crate::resource::CRD_NAME,
        crate::resource::CRD_NAME,
        ops.join(","),
        crd_label()
    )
}

/// The schema of a status field whose written value starts with `first` (a string, a number,
/// a boolean, a list; anything else an object that keeps what it holds).
fn schema_of(first: char) -> &'static str {
    match first {
        '\'' | '"' => r#"{"type":"string"}"#,
        '0'..='9' | '-' => r#"{"type":"integer"}"#,
        'T' | 'F' => r#"{"type":"boolean"}"#,
        '[' => r#"{"type":"array","items":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}"#,
        _ => r#"{"type":"object","x-kubernetes-preserve-unknown-fields":true}"#,
    }
}

/// The JSON-patch ops that add `schemas` (field, schema) as properties of the status schema of
/// the CRD's version `index`. An `add` needs the parent: a status schema without `properties`,
/// or no `status` at all, gets them in one op. Every path and key is escaped: a Kopf handler id
/// such as `accept/spec` is one key (`accept~1spec` in a pointer), and nothing in a field name
/// can end the shell's quotes.
fn add_ops(ctx: &Ctx<'_>, index: usize, schemas: &[(&str, &str)]) -> Vec<String> {
    let index_key = index.to_string();
    let root = [
        "spec",
        "versions",
        index_key.as_str(),
        "schema",
        "openAPIV3Schema",
        "properties",
        "status",
    ];
    let path = |tail: &[&str]| json_string_in_single_quotes(&json_pointer(root.iter().chain(tail).copied()));
    let status = ctx
        .snapshot
        .crd
        .get()
        .and_then(|crd| crd.spec.versions.get(index))
        .and_then(|v| {
            v.schema
                .as_ref()?
                .open_api_v3_schema
                .as_ref()?
                .properties
                .as_ref()?
                .get("status")
        });
    let properties = || {
        let each: Vec<String> = schemas
            .iter()
            .map(|(f, schema)| format!("{}:{schema}", json_string_in_single_quotes(f)))
            .collect();
        format!("{{{}}}", each.join(","))
    };
    match status {
        None => vec![format!(
            r#"{{"op":"add","path":{},"value":{{"type":"object","properties":{}}}}}"#,
            path(&[]),
            properties()
        )],
        Some(s) if s.properties.is_none() => vec![format!(
            r#"{{"op":"add","path":{},"value":{}}}"#,
            path(&["properties"]),
            properties()
        )],
        Some(_) => schemas
            .iter()
            .map(|(field, schema)| {
                format!(
                    r#"{{"op":"add","path":{},"value":{schema}}}"#,
                    path(&["properties", field])
                )
            })
            .collect(),
    }
}

/// The fix for `status.<field>`s the CRD's status schema lacks ([`pruned_by_schema`]): the JSON
/// patch of [`field_fix`], each field typed as the operator writes it (`observedGeneration` an
/// integer, `conditions` a list, `phase` a string). An operator of ours retries a refused status
/// write, so the patch alone gets the status written.
fn schema_fix(ctx: &Ctx<'_>, fields: &[String]) -> String {
    let typed: Vec<(String, char)> = fields
        .iter()
        .map(|f| {
            let name = f.strip_prefix("status.").unwrap_or(f).to_string();
            let first = match name.as_str() {
                "observedGeneration" => '0',
                "conditions" => '[',
                _ => '"',
            };
            (name, first)
        })
        .collect();
    field_fix(ctx, &typed.iter().collect::<Vec<_>>())
}

/// The fix of `status-pruned`, whichever operator writes the status (the CRD is shared).
fn crd_status_fix() -> String {
    format!(
        "add the fields to the CRD's status schema (or `x-kubernetes-preserve-unknown-fields: true` under `status`): kubectl edit crd {} {}",
        crate::resource::CRD_NAME,
        crd_label()
    )
}

#[cfg(test)]
mod tests {
    use super::super::ctx::fixture::run;
    use super::*;
    use crate::diagnose::finding::FindingId::*;
    use crate::diagnose::finding::Severity::*;

    /// Kopf 1.38's inconsistencies line, field by field (issue 11 trial C).
    #[test]
    fn removed_status_fields_are_read_from_kopfs_tuples() {
        let line = "Patching failed with inconsistencies: (('remove', ('status', 'kopf'), {'progress': {'accept': {'started': '2026-12-01T09:24:21.651833+00:00'}}}, None), ('remove', ('status', 'accept'), {'image': 'x', 'port': 7000}, None), ('remove', ('status', 'note'), 'hi', None))";
        assert_eq!(
            crate::kopf::messages::removed_status_fields(line),
            vec![
                ("kopf".to_string(), '{'),
                ("accept".to_string(), '{'),
                ("note".to_string(), '\'')
            ]
        );
        // The whole status removed (`('status',)`) names no field.
        assert!(
            crate::kopf::messages::removed_status_fields(
                "Patching failed with inconsistencies: (('remove', ('status',), {'phase': 'Accepted'}, None),)"
            )
            .is_empty()
        );
    }

    /// A handler's return value dropped by the schema (Kopf's inconsistencies line) is a
    /// warning; nothing dropped, nothing said.
    #[test]
    fn dropped_status_fields_are_found() {
        assert_eq!(
            run("bundles-synthetic/status-pruned-kopf-log", check),
            [(StatusPruned, Warning)]
        );
        assert_eq!(run("bundles/healthy", check), []);
    }

    /// A Kopf handler id with a `/` (`accept/spec`, whose return value Kopf writes to
    /// `status["accept/spec"]`) is one property: its pointer token is `accept~1spec` (RFC 6901),
    /// so the patch adds `status.properties["accept/spec"]`, not `accept.properties.spec`.
    #[test]
    fn a_handler_id_with_a_slash_is_one_escaped_pointer_token() {
        let snapshot = super::super::ctx::fixture::bundle("bundles-synthetic/status-pruned-kopf-log");
        let obj = &snapshot.microservices.get().unwrap()[0];
        let ctx = Ctx::new(&snapshot, obj, super::super::ctx::Options::default());
        let field = ("accept/spec".to_string(), '{');
        let fix = field_fix(&ctx, &[&field]);
        assert!(
            fix.contains(
                r#""path":"/spec/versions/0/schema/openAPIV3Schema/properties/status/properties/accept~1spec""#
            ),
            "{fix}"
        );
        assert!(!fix.contains("properties/accept/spec"), "{fix}");
        assert!(fix.contains("add status.accept/spec to"), "{fix}");
        // `~` is `~0`; a `'` cannot end the shell's quotes around the patch.
        let odd = ("a~b'c".to_string(), '\'');
        let fix = field_fix(&ctx, &[&odd]);
        assert!(fix.contains(r#"/properties/a~0b\u0027c""#), "{fix}");
        let patch = fix.split(" -p '").nth(1).unwrap().split_once("' (changes").unwrap().0;
        let ops: serde_json::Value = serde_json::from_str(patch).unwrap();
        assert_eq!(
            ops[0]["path"],
            "/spec/versions/0/schema/openAPIV3Schema/properties/status/properties/a~0b'c"
        );
    }
}
