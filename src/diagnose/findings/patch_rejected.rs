//! `patch-rejected`: Kopf's final PATCH of each cycle is refused, so the handler runs and nothing
//! of it is saved; the fix follows the API error.

use super::crd_facts::{crd_label, status_keeps_kopf, storage_version_index};
use super::{Ctx, Line, finding};
use crate::diagnose::finding::{Finding, FindingId, Severity};
use crate::diagnose::log_facts::LogFacts;
use crate::diagnose::rbac::{self, Account};
use crate::diagnose::refusal::Refusal;
use crate::diagnose::staleness;
use crate::kopf::messages::{ApiFailure, Lifecycle, Outcome};

/// `patch-rejected`: Kopf logged the object's final PATCH as rejected (`Throttling for N seconds
/// due to an unexpected error: APIClientError(...)` right after `... is processed`), and no cycle
/// completed since ([`LogFacts::latest_rejection`], the same facts as `status`'s
/// `patch-rejected` reason): the handler runs, nothing of it is saved, and Kopf runs it again at
/// every event and restart. The fix follows the API error: for the annotation size limit
/// (nolar/kopf#1087) the object's largest annotation, or Kopf's `StatusDiffBaseStorage`; for a
/// 403 the RBAC rule. An earlier rejection followed by a completed cycle is `ok`.
pub(crate) fn check(ctx: &Ctx<'_>) -> Vec<Finding> {
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
                last.tally()
            ),
            vec![format!("last rejection: {}", last.line)],
            None,
        )];
    };
    let annotation_fact =
        staleness::handled_record(ctx.obj).map(|r| format!("{} records an earlier spec", r.annotation));
    let reason = staleness::patch_rejected(ctx.obj, rejection, logs, annotation_fact.as_deref());
    let mut evidence = reason.evidence.clone();
    evidence.extend(unsaved_successes(ctx));
    evidence.extend(logging_events_posted_first(ctx));
    let failure = &rejection.failure;
    vec![finding(
        FindingId::PatchRejected,
        Severity::Problem,
        format!(
            "Kopf's handling of this object never completes: the API server rejects its final PATCH ({})",
            failure.describe()
        ),
        evidence,
        Some(fix(ctx, failure)),
    )]
}

/// The handler successes logged since the last cycle whose PATCH went through (a cycle end not
/// followed by a Throttling line before the next cycle's end), none of them saved.
fn unsaved_successes(ctx: &Ctx<'_>) -> Option<String> {
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
    let last = unsaved.last()?;
    Some(format!(
        "{} logged for {} since its last saved cycle, none saved; last: {}",
        crate::text::count_as(unsaved.len() as u64, "handler success", "handler successes"),
        ctx.key,
        last.cite()
    ))
}

/// The object's Normal `Logging` events, which Kopf posts before its PATCH: they do not mean
/// that the handling was saved.
fn logging_events_posted_first(ctx: &Ctx<'_>) -> Option<String> {
    let normal = ctx
        .own_events
        .iter()
        .filter(|e| e.type_.as_deref() == Some("Normal") && e.reason.as_deref() == Some("Logging"))
        .count();
    (normal > 0).then(|| {
        format!(
            "the object's {} `Logging` events (such as \"Handler 'accept' succeeded.\") are posted before Kopf's PATCH: they do not mean that the handling was saved",
            crate::text::count_as(normal as u64, "Normal", "Normal")
        )
    })
}

/// The fix of the API error `failure`: the annotations' size ([`annotations_fix`]), a refusal
/// by admission, a quota or a terminating namespace (its refuser, [`Refusal::fix`]), an RBAC 403
/// ([`forbidden_fix`]), another API error, or an exception outside the handlers.
fn fix(ctx: &Ctx<'_>, failure: &ApiFailure) -> String {
    let restart = ctx
        .operator
        .as_ref()
        .map(|op| format!("kubectl -n {} rollout restart deployment {}", op.namespace, op.name))
        .unwrap_or_else(|| "restart the operator".into());
    let refusal = Refusal::classify(
        failure.code,
        failure.reason.as_deref(),
        failure.message.as_deref().unwrap_or(""),
    );
    if failure.annotations_too_long() {
        annotations_fix(ctx, &restart)
    } else if let (true, Some(fix)) = (failure.is_api_error(), refusal.fix(ctx.ns))
        && !matches!(refusal, Refusal::Invalid)
    {
        // Admission, a quota or a terminating namespace refused it, as the API's message says.
        format!("{fix}; Kopf tries the PATCH again at the object's next event or at {restart}")
    } else if failure.code == Some(403) {
        forbidden_fix(ctx, failure, &restart)
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
    }
}

/// Over the annotations' size limit (nolar/kopf#1087): the largest annotation moved or removed,
/// or Kopf's record kept in the status (`StatusDiffBaseStorage`, with the CRD patch that keeps
/// `status.kopf` when its schema does not).
fn annotations_fix(ctx: &Ctx<'_>, restart: &str) -> String {
    let kubectl_type = ctx.snapshot.resource.kubectl_type();
    let value = serde_json::to_value(ctx.obj).unwrap_or_default();
    let budget = crate::kopf::diffbase::annotation_budget(&value);
    let remove = match &budget.largest {
        Some((key, bytes)) => format!(
            "keep the object's annotations under half of the {}-byte limit, since Kopf's record copies them: move the content of the largest, {key} ({bytes} bytes), elsewhere (a ConfigMap) or remove it:\n  kubectl annotate {kubectl_type} {} -n {} {key}-\nKopf handles the object again at that change (it is an event) and its PATCH then fits.",
            crate::kopf::diffbase::ANNOTATIONS_LIMIT_BYTES,
            ctx.name,
            ctx.ns
        ),
        None => "make the object's annotations smaller: Kopf copies them into its record.".into(),
    };
    let crd_step = match status_keeps_kopf(ctx) {
        Some(true) => "the CRD's status schema keeps it".to_string(),
        Some(false) => format!(
            "the CRD's status schema does not keep it, so first let it (this also keeps Kopf's status.kopf.progress):\n  kubectl patch crd {} --type=json -p '[{{\"op\":\"add\",\"path\":\"/spec/versions/{}/schema/openAPIV3Schema/properties/status/properties/kopf\",\"value\":{{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true}}}}]' {}",
            ctx.snapshot.resource.qualified(),
            storage_version_index(ctx).unwrap_or(0),
            crd_label()
        ),
        None => "the CRD's status schema must keep it (the CRD is not in evidence)".to_string(),
    };
    format!(
        "{remove}\nOr keep Kopf's record out of the annotations: in the operator's @kopf.on.startup function set\n  settings.persistence.diffbase_storage = kopf.StatusDiffBaseStorage()\n(Kopf then writes status.kopf.last-handled-configuration; {crd_step}), then {restart}. Objects handled before lose their record once and are handled as new; the annotation left behind can go: kubectl annotate {kubectl_type} {} -n {} {}-",
        ctx.name,
        ctx.ns,
        crate::kopf::diffbase::DIFFBASE_ANNOTATION
    )
}

/// A 403: the `patch` rule on the resource the API's message names (`... cannot patch resource
/// "microservices" in API group ...`, the object: Kopf's annotations; or
/// `"microservices/status"`), in the operator's bound Role, and the `can-i` that checks it.
fn forbidden_fix(ctx: &Ctx<'_>, failure: &ApiFailure, restart: &str) -> String {
    let op = ctx.operator.as_ref();
    let user = op
        .map(|op| format!("system:serviceaccount:{}:{}", op.namespace, op.service_account))
        .unwrap_or_else(|| "the operator's ServiceAccount".into());
    let message = failure.message.as_deref().unwrap_or("");
    let (group, plural) = (&ctx.snapshot.resource.group, &ctx.snapshot.resource.plural);
    let status = format!("{plural}/status");
    let resource = message
        .split("cannot patch resource \"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .filter(|r| r == plural || *r == status)
        .unwrap_or(plural);
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
            "\nwith: kubectl -n {} patch role {r} --type=json -p '[{{\"op\":\"add\",\"path\":\"/rules/-\",\"value\":{{\"apiGroups\":[\"{group}\"],\"resources\":[\"{resource}\"],\"verbs\":[\"patch\"]}}}}]'",
            ctx.ns
        ),
        None => String::new(),
    };
    format!(
        "let {user} patch {resource} in {} (Kopf writes its annotations with a PATCH of the object, the status with one of {status}), in its Role:\n{}{patch}\ncheck it: {} (it prints yes); then Kopf handles the object again at its next event, or now: {restart}",
        ctx.ns,
        rbac::rule_yaml(group, resource, &["patch"]),
        rbac::can_i_in(group, "patch", resource, ctx.ns, &user)
    )
}

#[cfg(test)]
mod tests {
    use super::super::ctx::fixture::run;
    use super::*;
    use crate::diagnose::finding::FindingId::*;
    use crate::diagnose::finding::Severity::*;

    /// Kopf's final PATCH refused for the annotations' size (a real capture) is a problem; a
    /// healthy object's cycles complete.
    #[test]
    fn a_refused_final_patch_is_found() {
        assert_eq!(
            run("bundles-captured/kopf-patch-rejected-annotations", check),
            [(PatchRejected, Problem)]
        );
        assert_eq!(run("bundles/healthy", check), []);
    }

    /// Issue 18 (trial): the count said is what the logs hold: the cycles Kopf gave up and the
    /// refused attempts of the PATCH before each (a 403 is retried 9 times; a 422 not at all),
    /// never "1 rejection" beside nine refused lines.
    #[test]
    fn the_rejections_are_counted_with_their_refused_attempts() {
        let tally = |dir: &str| {
            let snapshot = super::super::ctx::fixture::bundle(dir);
            let obj = snapshot.microservices.get().unwrap()[0].clone();
            let ctx = Ctx::new(&snapshot, &obj, Default::default());
            let LogFacts::Read {
                last_rejection: Some(r),
                ..
            } = &ctx.judged.facts
            else {
                panic!("{dir}: a rejection")
            };
            (r.count, r.attempts, r.tally())
        };
        assert_eq!(
            tally("bundles-captured/kopf-patch-forbidden"),
            (1, 9, "1 rejection, after 9 refused PATCH attempts".to_string())
        );
        let (count, attempts, words) = tally("bundles-captured/kopf-patch-rejected-annotations");
        assert_eq!(attempts, 0, "a 422 is not retried");
        assert_eq!(words, crate::text::count(count, "rejection"));
    }

    /// Issue 18: the PATCH's fix follows who refused it, by the API's message: a webhook named
    /// (never RBAC's rule), a quota, RBAC's own 403.
    #[test]
    fn the_fix_follows_the_refuser_of_the_patch() {
        let snapshot = super::super::ctx::fixture::bundle("bundles-captured/kopf-patch-rejected-annotations");
        let obj = &snapshot.microservices.get().unwrap()[0];
        let ctx = Ctx::new(&snapshot, obj, Default::default());
        let failure = |code, message: &str| ApiFailure {
            delay_seconds: Some("1".into()),
            class: "APIForbiddenError".into(),
            message: Some(message.into()),
            code: Some(code),
            reason: Some("Forbidden".into()),
        };
        let hook = fix(
            &ctx,
            &failure(
                403,
                "admission webhook \"no-patch.example.com\" denied the request: frozen",
            ),
        );
        assert!(
            hook.starts_with("the admission webhook no-patch.example.com refuses the request, not RBAC"),
            "{hook}"
        );
        assert!(!hook.contains("auth can-i") && !hook.contains("apiGroups"), "{hook}");
        let quota = fix(
            &ctx,
            &failure(
                403,
                "microservices \"x\" is forbidden: exceeded quota: q1, requested: x",
            ),
        );
        assert!(quota.contains("describe resourcequota q1"), "{quota}");
        let rbac = fix(
            &ctx,
            &failure(
                403,
                "microservices.platform.example.io \"x\" is forbidden: User \"system:serviceaccount:a:b\" cannot patch resource \"microservices\" in API group \"platform.example.io\" in the namespace \"a\"",
            ),
        );
        assert!(!rbac.contains("admission webhook"), "{rbac}");
    }
}
