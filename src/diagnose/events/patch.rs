//! `patch-rejected`: Kopf's final PATCH of each cycle is refused, so the handler runs and nothing
//! of it is saved; the fix follows the API error.

use super::permissions::can_i_ours;
use super::{Ctx, Line, finding};
use crate::diagnose::finding::{Finding, FindingId, Severity};
use crate::diagnose::log_facts::LogFacts;
use crate::diagnose::rbac::{self, Account};
use crate::diagnose::staleness;
use crate::kopf::messages::{Lifecycle, Outcome};
use crate::resource::{GROUP, PLURAL};
use crate::text::count;

/// `patch-rejected`: Kopf logged the object's final PATCH as rejected (`Throttling for N seconds
/// due to an unexpected error: APIClientError(...)` right after `... is processed`), and no cycle
/// completed since ([`LogFacts::latest_rejection`], the same facts as `status`'s
/// `patch-rejected` reason): the handler runs, nothing of it is saved, and Kopf runs it again at
/// every event and restart. The fix follows the API error: for the annotation size limit
/// (nolar/kopf#1087) the object's largest annotation, or Kopf's `StatusDiffBaseStorage`; for a
/// 403 the RBAC rule. An earlier rejection followed by a completed cycle is `ok`.
pub(super) fn patch_rejected(ctx: &Ctx<'_>) -> Vec<Finding> {
    let logs = &ctx.judged.facts;
    let LogFacts::Read {
        last_rejection: Some(last),
        ..
    } = logs
    else {
        return Vec::new();
    };
    let Some(rejection) = logs.latest_rejection() else {
        return vec![finding(
            FindingId::PatchRejected,
            Severity::Ok,
            format!(
                "Kopf's PATCH of this object was rejected earlier ({}), and a later handling cycle completed",
                count(last.count, "time")
            ),
            vec![format!("last rejection: {}", last.line)],
            None,
        )];
    };
    let annotation_fact =
        staleness::handled_record(ctx.obj).map(|r| format!("{} records an earlier spec", r.annotation));
    let reason = staleness::patch_rejected(ctx.obj, rejection, logs, annotation_fact.as_deref());
    let mut evidence = reason.evidence.clone();
    // The handler successes since the last cycle whose PATCH went through (a cycle end not
    // followed by a Throttling line before the next cycle's end).
    let mut saved_upto = 0;
    let mut last_end: Option<usize> = None;
    let mut rejected = false;
    for (i, l) in ctx.lines.iter().enumerate() {
        match l.record.lifecycle() {
            Lifecycle::CycleProcessed { .. } => {
                if let (Some(end), false) = (last_end, rejected) {
                    saved_upto = end + 1;
                }
                last_end = Some(i);
                rejected = false;
            }
            Lifecycle::Throttled(_) => rejected = true,
            _ => {}
        }
    }
    let unsaved: Vec<&Line> = ctx.lines[saved_upto.min(ctx.lines.len())..]
        .iter()
        .filter(|l| {
            matches!(
                l.record.lifecycle(),
                Lifecycle::HandlerOutcome {
                    outcome: Outcome::Succeeded,
                    ..
                }
            )
        })
        .collect();
    if let Some(last) = unsaved.last() {
        evidence.push(format!(
            "{} logged for {} since its last saved cycle, none saved; last: {}",
            crate::text::count_as(unsaved.len() as u64, "handler success", "handler successes"),
            ctx.key,
            last.cite()
        ));
    }
    let normal = ctx
        .own_events
        .iter()
        .filter(|e| e.type_.as_deref() == Some("Normal") && e.reason.as_deref() == Some("Logging"))
        .count();
    if normal > 0 {
        evidence.push(format!(
            "the object's {} `Logging` events (such as \"Handler 'accept' succeeded.\") are posted before Kopf's PATCH: they do not mean that the handling was saved",
            crate::text::count_as(normal as u64, "Normal", "Normal")
        ));
    }
    let failure = &rejection.failure;
    let op = ctx.operator.as_ref();
    let restart = op
        .map(|op| format!("kubectl -n {} rollout restart deployment {}", op.namespace, op.name))
        .unwrap_or_else(|| "restart the operator".into());
    let fix = if failure.annotations_too_long() {
        let value = serde_json::to_value(ctx.obj).unwrap_or_default();
        let budget = crate::kopf::diffbase::annotation_budget(&value);
        let remove = match &budget.largest {
            Some((key, bytes)) => format!(
                "keep the object's annotations under half of the {}-byte limit, since Kopf's record copies them: move the content of the largest, {key} ({bytes} bytes), elsewhere (a ConfigMap) or remove it:\n  kubectl annotate microservice {} -n {} {key}-\nKopf handles the object again at that change (it is an event) and its PATCH then fits.",
                crate::kopf::diffbase::ANNOTATIONS_LIMIT_BYTES,
                ctx.name,
                ctx.ns
            ),
            None => "make the object's annotations smaller: Kopf copies them into its record.".into(),
        };
        let crd_keeps = status_keeps_kopf(ctx);
        let crd_step = match crd_keeps {
            Some(true) => "the CRD's status schema keeps it".to_string(),
            Some(false) => format!(
                "the CRD's status schema does not keep it, so first let it (this also keeps Kopf's status.kopf.progress):\n  kubectl patch crd {} --type=json -p '[{{\"op\":\"add\",\"path\":\"/spec/versions/{}/schema/openAPIV3Schema/properties/status/properties/kopf\",\"value\":{{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true}}}}]'",
                crate::resource::CRD_NAME,
                storage_version_index(ctx).unwrap_or(0)
            ),
            None => "the CRD's status schema must keep it (the CRD is not in evidence)".to_string(),
        };
        format!(
            "{remove}\nOr keep Kopf's record out of the annotations: in the operator's @kopf.on.startup function set\n  settings.persistence.diffbase_storage = kopf.StatusDiffBaseStorage()\n(Kopf then writes status.kopf.last-handled-configuration; {crd_step}), then {restart}. Objects handled before lose their record once and are handled as new; the annotation left behind can go: kubectl annotate microservice {} -n {} {}-",
            ctx.name,
            ctx.ns,
            crate::kopf::diffbase::DIFFBASE_ANNOTATION
        )
    } else if failure.code == Some(403) {
        let user = op
            .map(|op| format!("system:serviceaccount:{}:{}", op.namespace, op.service_account))
            .unwrap_or_else(|| "the operator's ServiceAccount".into());
        // The API's 403 names the verb and resource: `... cannot patch resource "microservices"
        // in API group ...` (the object: Kopf's annotations) or `"microservices/status"`.
        let message = failure.message.as_deref().unwrap_or("");
        let resource = message
            .split("cannot patch resource \"")
            .nth(1)
            .and_then(|r| r.split('"').next())
            .filter(|r| *r == PLURAL || *r == "microservices/status")
            .unwrap_or(PLURAL);
        let role = op.and_then(|op| {
            rbac::bound_role(
                &ctx.snapshot.rbac,
                Account {
                    namespace: &op.namespace,
                    name: &op.service_account,
                },
                ctx.ns,
            )
        });
        let patch = match &role {
            Some(r) => format!(
                "\nwith: kubectl -n {} patch role {r} --type=json -p '[{{\"op\":\"add\",\"path\":\"/rules/-\",\"value\":{{\"apiGroups\":[\"{GROUP}\"],\"resources\":[\"{resource}\"],\"verbs\":[\"patch\"]}}}}]'",
                ctx.ns
            ),
            None => String::new(),
        };
        format!(
            "let {user} patch {resource} in {} (Kopf writes its annotations with a PATCH of the object, the status with one of microservices/status), in its Role:\n{}{patch}\ncheck it: {} (it prints yes); then Kopf handles the object again at its next event, or now: {restart}",
            ctx.ns,
            rbac::rule_yaml(GROUP, resource, &["patch"]),
            can_i_ours("patch", resource, ctx.ns, &user)
        )
    } else if failure.is_api_error() {
        format!(
            "the API server refuses the PATCH ({}): fix what its message names; Kopf tries again at the object's next event or at {restart}",
            failure.describe()
        )
    } else {
        format!(
            "the operator raised {} while processing the object, outside its handlers: see the traceback after the Throttling line in its log; Kopf tries again at the object's next event",
            failure.describe()
        )
    };
    vec![finding(
        FindingId::PatchRejected,
        Severity::Problem,
        format!(
            "Kopf's handling of this object never completes: the API server rejects its final PATCH ({})",
            failure.describe()
        ),
        evidence,
        Some(fix),
    )]
}

/// Whether the CRD's storage version keeps `status.kopf` (Kopf's status-side records):
/// `x-kubernetes-preserve-unknown-fields` on the root or the status, or a `kopf` property that
/// does. `None` without the CRD.
fn status_keeps_kopf(ctx: &Ctx<'_>) -> Option<bool> {
    let crd = ctx.snapshot.crd.get()?;
    let v = crd.spec.versions.iter().find(|v| v.storage)?;
    let Some(root) = v.schema.as_ref().and_then(|s| s.open_api_v3_schema.as_ref()) else {
        // No schema at all: apiextensions/v1 requires one; treat as unknown.
        return None;
    };
    if root.x_kubernetes_preserve_unknown_fields == Some(true) {
        return Some(true);
    }
    let Some(status) = root.properties.as_ref().and_then(|p| p.get("status")) else {
        return Some(false);
    };
    if status.x_kubernetes_preserve_unknown_fields == Some(true) {
        return Some(true);
    }
    Some(
        status
            .properties
            .as_ref()
            .and_then(|p| p.get("kopf"))
            .is_some_and(|k| k.x_kubernetes_preserve_unknown_fields == Some(true)),
    )
}

/// The index of the CRD's storage version in `spec.versions` (for a JSON-patch path).
pub(super) fn storage_version_index(ctx: &Ctx<'_>) -> Option<usize> {
    ctx.snapshot.crd.get()?.spec.versions.iter().position(|v| v.storage)
}

#[cfg(test)]
mod tests {
    use super::super::fixture::run;
    use super::*;
    use crate::diagnose::finding::FindingId::*;
    use crate::diagnose::finding::Severity::*;

    /// Kopf's final PATCH refused for the annotations' size (a real capture) is a problem; a
    /// healthy object's cycles complete.
    #[test]
    fn a_refused_final_patch_is_found() {
        assert_eq!(
            run("bundles-captured/kopf-patch-rejected-annotations", patch_rejected),
            [(PatchRejected, Problem)]
        );
        assert_eq!(run("bundles/healthy", patch_rejected), []);
    }
}
