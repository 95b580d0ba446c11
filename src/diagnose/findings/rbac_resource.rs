//! `rbac-resource`: may the operator's ServiceAccount list, watch and patch the objects of the
//! snapshot's resource (Microservices, or `--resource`'s) and their status in the object's
//! namespace? Access reviews first, else RBAC rules read by hand
//! ([`crate::diagnose::rbac`]).

use super::{Ctx, finding};
use crate::diagnose::finding::{Finding, FindingId, Severity};
use crate::diagnose::rbac::{self, Account, Answer, Need};
use crate::evidence::operator::OperatorKind;

/// `rbac-resource` for the Deployment that handles ([`Ctx::handler`]): the verbs on
/// Microservices it needs that a review denies (a problem) or no bound rule grants (a warning).
/// Kopf also patches the object (its annotations: progress and last-handled-configuration;
/// `kopf/_cogs/clients/patching.py`), ours only the status. Nothing when every verb is allowed
/// or unknown.
pub(crate) fn check(ctx: &Ctx<'_>) -> Vec<Finding> {
    let Some(op) = ctx.handler() else {
        return Vec::new();
    };
    let account = Account {
        namespace: &op.namespace,
        name: &op.service_account,
    };
    let user = account.user();
    let group = ctx.snapshot.resource.group.as_str();
    let plural = ctx.snapshot.resource.plural.as_str();
    let status = format!("{plural}/status");
    let mut needs = vec![
        (group, plural, "list"),
        (group, plural, "watch"),
        (group, status.as_str(), "patch"),
    ];
    if op.kind == OperatorKind::Kopf {
        needs.push((group, plural, "patch"));
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
        let answer = rbac::decide(&ctx.snapshot.rbac, account, need);
        evidence.push(format!("{user} {}: {}", need.describe(), answer.method()));
        match answer {
            Answer::Reviewed { allowed: false, .. } => denied.push((resource, verb)),
            Answer::RulesSilent => suggested.push((resource, verb)),
            _ => {}
        }
    }
    let missing: Vec<(&str, &str)> = denied.iter().chain(&suggested).copied().collect();
    if missing.is_empty() {
        return Vec::new();
    }
    let (role, role_hint) = rbac::where_to_add(&ctx.snapshot.rbac, account, ctx.ns);
    vec![finding(
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
        Some(resource_fix(
            &role_hint,
            role.as_deref(),
            (ctx.ns, group),
            &user,
            &missing,
        )),
    )]
}

/// The fix of `rbac-resource`: the rules; with the Role bound in the namespace, the JSON patch
/// that appends them; and the `kubectl auth can-i` checks, which print yes once they hold.
fn resource_fix(
    role_hint: &str,
    role: Option<&str>,
    (ns, group): (&str, &str),
    user: &str,
    missing: &[(&str, &str)],
) -> String {
    let rules: Vec<String> = missing
        .iter()
        .map(|(resource, verb)| rbac::rule_yaml(group, resource, &[verb]))
        .collect();
    let with = match role {
        Some(r) => {
            let ops: Vec<String> = missing
                .iter()
                .map(|(resource, verb)| {
                    format!(
                        r#"{{"op":"add","path":"/rules/-","value":{{"apiGroups":["{group}"],"resources":["{resource}"],"verbs":["{verb}"]}}}}"#
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
        .map(|(resource, verb)| rbac::can_i_in(group, verb, resource, ns, user))
        .collect();
    format!(
        "{role_hint}:\n{}{with}\nthen check it with {} (it prints yes)",
        rules.join("\n"),
        checks.join(" and ")
    )
}

#[cfg(test)]
mod tests {
    use super::super::ctx::fixture::run;
    use super::*;
    use crate::diagnose::finding::FindingId::*;
    use crate::diagnose::finding::Severity::*;

    /// `rbac-resource` where the operator may not write the status; nothing where it may.
    #[test]
    fn the_operators_rbac_for_microservices() {
        assert_eq!(run("bundles-synthetic/rbac-resource", check), [(RbacResource, Problem)]);
        assert_eq!(run("bundles/healthy", check), []);
    }

    /// rbac-resource's fix appends the rules to the bound Role with one JSON patch and checks
    /// them; a subresource is asked with `--subresource` (`microservices/status.GROUP` names an
    /// object `status.GROUP`, not the subresource).
    #[test]
    fn rbac_resource_fix_patches_the_role_and_checks_the_subresource() {
        let fix = resource_fix(
            "add to the rules of Role store/op",
            Some("op"),
            ("store", "platform.example.io"),
            "system:serviceaccount:ops:op",
            &[("microservices/status", "patch"), ("microservices", "watch")],
        );
        assert_eq!(
            fix,
            "add to the rules of Role store/op:\n- apiGroups: [\"platform.example.io\"]\n  resources: [\"microservices/status\"]\n  verbs: [\"patch\"]\n- apiGroups: [\"platform.example.io\"]\n  resources: [\"microservices\"]\n  verbs: [\"watch\"]\nwith: kubectl -n store patch role op --type=json -p '[{\"op\":\"add\",\"path\":\"/rules/-\",\"value\":{\"apiGroups\":[\"platform.example.io\"],\"resources\":[\"microservices/status\"],\"verbs\":[\"patch\"]}},{\"op\":\"add\",\"path\":\"/rules/-\",\"value\":{\"apiGroups\":[\"platform.example.io\"],\"resources\":[\"microservices\"],\"verbs\":[\"watch\"]}}]'\nthen check it with kubectl auth can-i patch microservices.platform.example.io --subresource=status -n store --as=system:serviceaccount:ops:op and kubectl auth can-i watch microservices.platform.example.io -n store --as=system:serviceaccount:ops:op (it prints yes)"
        );
        assert!(
            !resource_fix(
                "add to a Role",
                None,
                ("store", "platform.example.io"),
                "u",
                &[("microservices", "list")]
            )
            .contains("with:")
        );
    }
}
