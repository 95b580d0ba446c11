//! `rbac-events`, `rbac-resource`: may the operator's ServiceAccount post events in the object's
//! namespace (in the API group it uses), and list, watch and patch Microservices and their
//! status? Access reviews first, else RBAC rules read by hand ([`crate::diagnose::rbac`]), else
//! the 403 lines of its log.

use super::post_failures::{after_the_grant, post_failure_lines};
use super::{Ctx, Line, finding};
use crate::diagnose::finding::{Finding, FindingId, Severity};
use crate::diagnose::rbac::{self, Account, Answer, Need};
use crate::evidence::operator::OperatorKind;
use crate::kopf::messages::EventPostFailure;
use crate::resource::{GROUP, PLURAL};
use crate::text::{count, is_are};

/// The events API group and verbs this operator posts with: Kopf core/v1 create; ours (and
/// kube-rs's Recorder) events.k8s.io create + patch.
pub(super) fn event_needs(kind: OperatorKind) -> (&'static str, &'static [&'static str]) {
    match kind {
        OperatorKind::Kopf => ("", &["create"]),
        OperatorKind::Ours => ("events.k8s.io", &["create", "patch"]),
    }
}

pub(super) fn method(answer: &Answer) -> String {
    match answer {
        Answer::Reviewed { allowed, reason } => format!(
            "SubjectAccessReview: {}{}",
            if *allowed { "allowed" } else { "denied" },
            reason.as_ref().map(|r| format!(" ({r})")).unwrap_or_default()
        ),
        Answer::RulesAllow(by) => format!("read from RBAC objects: allowed by {by}"),
        Answer::RulesSilent => {
            "read from RBAC objects (no SubjectAccessReview in evidence): no bound Role or ClusterRole grants it; other authorizers may still allow it".into()
        }
        Answer::Unknown => "unknown: neither access reviews nor RBAC objects are in evidence".into(),
    }
}

/// Without an operator in evidence, the 403s of failed event POSTs are the evidence: the API's
/// message names the user and the API group (`... cannot create resource "events" in API group "X"`).
fn rbac_from_logs(ctx: &Ctx<'_>) -> Vec<Finding> {
    let forbidden: Vec<(&Line, EventPostFailure)> = post_failure_lines(ctx)
        .into_iter()
        .filter(|(_, f)| f.code == Some(403))
        .collect();
    let Some((_, first)) = forbidden.first() else {
        return Vec::new();
    };
    let message = first.message.clone().unwrap_or_default();
    let group = message
        .split("in API group \"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or("");
    let verbs: &[&str] = if group.is_empty() {
        &["create"]
    } else {
        &["create", "patch"]
    };
    let group_name = if group.is_empty() {
        "core (\"\")".to_string()
    } else {
        group.to_string()
    };
    let mut evidence = vec![format!(
        "no operator Deployment in evidence: the {} with code 403 {} the evidence",
        count(forbidden.len() as u64, "failed event POST"),
        is_are(forbidden.len() as u64)
    )];
    evidence.extend(
        forbidden
            .iter()
            .take(3)
            .map(|(l, _)| format!("403 in the logs: {}", l.cite())),
    );
    vec![finding(
        FindingId::RbacEvents,
        Severity::Problem,
        format!(
            "the operator may not create events in API group {group_name} in {}",
            ctx.ns
        ),
        evidence,
        Some(format!(
            "add to a Role in {} bound to the operator's ServiceAccount (named in the 403 message):\n{}",
            ctx.ns,
            rbac::rule_yaml(group, "events", verbs)
        )),
    )]
}

pub(super) fn rbac_findings(ctx: &Ctx<'_>) -> Vec<Finding> {
    // A process outside the cluster posts with its own credentials, not the ServiceAccount of
    // the Deployment that stands by: only its 403 lines say anything.
    let Some(op) = ctx.handler() else {
        return rbac_from_logs(ctx);
    };
    let account = Account {
        namespace: &op.namespace,
        name: &op.service_account,
    };
    let rbac = &ctx.snapshot.rbac;
    let role = rbac::bound_role(rbac, account, ctx.ns);
    let role_hint = match &role {
        Some(r) => format!("add to the rules of Role {}/{r}", ctx.ns),
        None => format!(
            "add to a Role in {} bound to ServiceAccount {}/{}",
            ctx.ns, op.namespace, op.service_account
        ),
    };
    let mut out = Vec::new();

    // Events.
    let (group, verbs) = event_needs(op.kind);
    let answers: Vec<(Need<'_>, Answer)> = verbs
        .iter()
        .map(|verb| {
            let need = Need {
                group,
                resource: "events",
                verb,
                namespace: ctx.ns,
                name: None,
            };
            (need, rbac::decide(rbac, account, need))
        })
        .collect();
    let user = account.user();
    let evidence: Vec<String> = answers
        .iter()
        .map(|(need, a)| format!("{user} {}: {}", need.describe(), method(a)))
        .collect();
    let denied_by_review = answers
        .iter()
        .any(|(_, a)| matches!(a, Answer::Reviewed { allowed: false, .. }));
    let silent = answers.iter().any(|(_, a)| *a == Answer::RulesSilent);
    let unknown = answers.iter().all(|(_, a)| *a == Answer::Unknown);
    let forbidden_lines: Vec<&Line> = post_failure_lines(ctx)
        .into_iter()
        .filter(|(_, f)| f.code == Some(403))
        .map(|(l, _)| l)
        .collect();
    let who = match op.kind {
        OperatorKind::Kopf => "Kopf posts core/v1 events",
        OperatorKind::Ours => "kubectl-microservice posts events.k8s.io/v1 events",
    };
    let group_name = if group.is_empty() {
        "core (\"\")".to_string()
    } else {
        group.to_string()
    };
    let fix = Some(match &role {
        // The Role bound in the namespace: one JSON patch appends the rule, and can-i checks it.
        Some(r) => format!(
            "{role_hint}:\n{}\nwith: kubectl -n {} patch role {r} --type=json -p '[{{\"op\":\"add\",\"path\":\"/rules/-\",\"value\":{{\"apiGroups\":[\"{group}\"],\"resources\":[\"events\"],\"verbs\":[{}]}}}}]'\nthen {}",
            rbac::rule_yaml(group, "events", verbs),
            ctx.ns,
            verbs.iter().map(|v| format!("\"{v}\"")).collect::<Vec<_>>().join(","),
            after_the_grant(ctx)
        ),
        None => format!(
            "{role_hint}:\n{}\nthen {}",
            rbac::rule_yaml(group, "events", verbs),
            after_the_grant(ctx)
        ),
    });
    let title = format!(
        "the operator's ServiceAccount {}/{} may not {} events in API group {group_name} in {} ({who})",
        op.namespace,
        op.service_account,
        verbs.join("/"),
        ctx.ns
    );
    if denied_by_review {
        out.push(finding(FindingId::RbacEvents, Severity::Problem, title, evidence, fix));
    } else if silent {
        out.push(finding(
            FindingId::RbacEvents,
            Severity::Warning,
            format!("{title} — by reading Roles and bindings only"),
            evidence,
            fix,
        ));
    } else if unknown && !forbidden_lines.is_empty() {
        let mut evidence = evidence;
        evidence.extend(forbidden_lines.iter().map(|l| format!("403 in the logs: {}", l.cite())));
        out.push(finding(FindingId::RbacEvents, Severity::Problem, title, evidence, fix));
    } else if !unknown {
        out.push(finding(
            FindingId::RbacEvents,
            Severity::Ok,
            format!(
                "the operator's ServiceAccount may {} events in API group {group_name} in {}",
                verbs.join("/"),
                ctx.ns
            ),
            evidence,
            None,
        ));
    }

    // The resource itself. Kopf also patches the object (its annotations: progress and
    // last-handled-configuration; `kopf/_cogs/clients/patching.py`), ours only the status.
    let mut needs = vec![
        (GROUP, PLURAL, "list"),
        (GROUP, PLURAL, "watch"),
        (GROUP, "microservices/status", "patch"),
    ];
    if op.kind == OperatorKind::Kopf {
        needs.push((GROUP, PLURAL, "patch"));
    }
    let mut denied = Vec::new();
    let mut suggested = Vec::new();
    let mut evidence = Vec::new();
    for (group, resource, verb) in needs {
        let need = Need {
            group,
            resource,
            verb,
            namespace: ctx.ns,
            name: None,
        };
        let answer = rbac::decide(rbac, account, need);
        evidence.push(format!("{user} {}: {}", need.describe(), method(&answer)));
        match answer {
            Answer::Reviewed { allowed: false, .. } => denied.push((resource, verb)),
            Answer::RulesSilent => suggested.push((resource, verb)),
            _ => {}
        }
    }
    let missing: Vec<(&str, &str)> = denied.iter().chain(&suggested).copied().collect();
    if !missing.is_empty() {
        out.push(finding(
            FindingId::RbacResource,
            if denied.is_empty() {
                Severity::Warning
            } else {
                Severity::Problem
            },
            format!(
                "the operator's ServiceAccount may not {} in {}{}",
                missing
                    .iter()
                    .map(|(r, v)| format!("{v} {r}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                ctx.ns,
                if denied.is_empty() {
                    " — by reading Roles and bindings only"
                } else {
                    ""
                }
            ),
            evidence,
            Some(resource_fix(&role_hint, role.as_deref(), ctx.ns, &user, &missing)),
        ));
    }
    out
}

/// `kubectl auth can-i VERB` on `resource` of our API group in `ns` as `user`: a subresource
/// (`microservices/status`) is asked with `--subresource`, as `kubectl auth can-i` takes it
/// (`microservices/status.GROUP` would ask about an object named `status.GROUP`).
pub(super) fn can_i_ours(verb: &str, resource: &str, ns: &str, user: &str) -> String {
    let (plural, sub) = match resource.split_once('/') {
        Some((plural, sub)) => (plural, format!(" --subresource={sub}")),
        None => (resource, String::new()),
    };
    format!("kubectl auth can-i {verb} {plural}.{GROUP}{sub} -n {ns} --as={user}")
}

/// The fix of `rbac-resource`: the rules; with the Role bound in the namespace, the JSON patch
/// that appends them; and the `kubectl auth can-i` checks, which print yes once they hold.
fn resource_fix(role_hint: &str, role: Option<&str>, ns: &str, user: &str, missing: &[(&str, &str)]) -> String {
    let rules: Vec<String> = missing
        .iter()
        .map(|(resource, verb)| rbac::rule_yaml(GROUP, resource, &[verb]))
        .collect();
    let with = match role {
        Some(r) => {
            let ops: Vec<String> = missing
                .iter()
                .map(|(resource, verb)| {
                    format!(
                        r#"{{"op":"add","path":"/rules/-","value":{{"apiGroups":["{GROUP}"],"resources":["{resource}"],"verbs":["{verb}"]}}}}"#
                    )
                })
                .collect();
            format!(
                "\nwith: kubectl -n {ns} patch role {r} --type=json -p '[{}]'",
                ops.join(",")
            )
        }
        None => String::new(),
    };
    let checks: Vec<String> = missing
        .iter()
        .map(|(resource, verb)| can_i_ours(verb, resource, ns, user))
        .collect();
    format!(
        "{role_hint}:\n{}{with}\nthen check it with {} (it prints yes)",
        rules.join("\n"),
        checks.join(" and ")
    )
}

#[cfg(test)]
mod tests {
    use super::super::fixture::run;
    use super::*;
    use crate::diagnose::finding::FindingId::*;
    use crate::diagnose::finding::Severity::*;

    /// `rbac-events` is a problem where the operator's Role lacks the events rule (a real
    /// bundle of ours), `ok` where it grants it; `rbac-resource` where it may not write the
    /// status.
    #[test]
    fn the_operators_rbac_for_events_and_for_microservices() {
        assert_eq!(run("bundles/ours-style-rbac", rbac_findings), [(RbacEvents, Problem)]);
        assert_eq!(
            run("bundles-synthetic/rbac-resource", rbac_findings),
            [(RbacEvents, Ok), (RbacResource, Problem)]
        );
        assert_eq!(run("bundles/healthy", rbac_findings), [(RbacEvents, Ok)]);
    }

    /// rbac-resource's fix appends the rules to the bound Role with one JSON patch and checks
    /// them; a subresource is asked with `--subresource` (`microservices/status.GROUP` names an
    /// object `status.GROUP`, not the subresource).
    #[test]
    fn rbac_resource_fix_patches_the_role_and_checks_the_subresource() {
        let fix = resource_fix(
            "add to the rules of Role store/op",
            Some("op"),
            "store",
            "system:serviceaccount:ops:op",
            &[("microservices/status", "patch"), ("microservices", "watch")],
        );
        assert_eq!(
            fix,
            "add to the rules of Role store/op:\n- apiGroups: [\"platform.example.io\"]\n  resources: [\"microservices/status\"]\n  verbs: [\"patch\"]\n- apiGroups: [\"platform.example.io\"]\n  resources: [\"microservices\"]\n  verbs: [\"watch\"]\nwith: kubectl -n store patch role op --type=json -p '[{\"op\":\"add\",\"path\":\"/rules/-\",\"value\":{\"apiGroups\":[\"platform.example.io\"],\"resources\":[\"microservices/status\"],\"verbs\":[\"patch\"]}},{\"op\":\"add\",\"path\":\"/rules/-\",\"value\":{\"apiGroups\":[\"platform.example.io\"],\"resources\":[\"microservices\"],\"verbs\":[\"watch\"]}}]'\nthen check it with kubectl auth can-i patch microservices.platform.example.io --subresource=status -n store --as=system:serviceaccount:ops:op and kubectl auth can-i watch microservices.platform.example.io -n store --as=system:serviceaccount:ops:op (it prints yes)"
        );
        assert!(!resource_fix("add to a Role", None, "store", "u", &[("microservices", "list")]).contains("with:"));
    }
}
