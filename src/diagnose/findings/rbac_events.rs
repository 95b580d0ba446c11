//! `rbac-events`: may the operator's ServiceAccount post events in the object's namespace, in the
//! API group it uses? Access reviews first, else RBAC rules read by hand
//! ([`crate::diagnose::rbac`]), else the 403 lines of its log.

use super::event_posts::{after_the_grant, rbac_403, refused_post_lines};
use super::{Ctx, Line, finding};
use crate::diagnose::finding::{Finding, FindingId, Severity};
use crate::diagnose::rbac::{self, Account, Answer, Need, event_needs};
use crate::evidence::operator::{OperatorKind, OperatorRef};
use crate::kopf::messages::EventPostFailure;
use crate::text::{count, is_are};

/// `rbac-events` for the Deployment that posts ([`Ctx::handler`]): a problem when an access
/// review denies a verb (or, without reviews or rules, when its log holds 403s), a warning when
/// no bound rule grants it (other authorizers may), `ok` when allowed. A process outside the
/// cluster posts with its own credentials, not the ServiceAccount of the Deployment that stands
/// by: only its 403 lines say anything ([`from_logs`]).
pub(crate) fn check(ctx: &Ctx<'_>) -> Vec<Finding> {
    let Some(op) = ctx.handler() else {
        return from_logs(ctx);
    };
    let account = Account {
        namespace: &op.namespace,
        name: &op.service_account,
    };
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
            (need, rbac::decide(&ctx.snapshot.rbac, account, need))
        })
        .collect();
    let user = account.user();
    let evidence: Vec<String> = answers
        .iter()
        .map(|(need, a)| format!("{user} {}: {}", need.describe(), a.method()))
        .collect();
    let denied_by_review = answers
        .iter()
        .any(|(_, a)| matches!(a, Answer::Reviewed { allowed: false, .. }));
    let silent = answers.iter().any(|(_, a)| *a == Answer::RulesSilent);
    let unknown = answers.iter().all(|(_, a)| *a == Answer::Unknown);
    let forbidden_lines: Vec<&Line> = refused_post_lines(ctx)
        .into_iter()
        .filter(|(_, f)| rbac_403(f))
        .map(|(l, _)| l)
        .collect();
    let group_name = group_name(group);
    let fix = Some(fix(ctx, account, group, verbs));
    let title = title(ctx, op, &group_name, verbs);
    let found = if denied_by_review {
        finding(FindingId::RbacEvents, Severity::Problem, title, evidence, fix)
    } else if silent {
        finding(
            FindingId::RbacEvents,
            Severity::Warning,
            format!("{title} — by reading Roles and bindings only"),
            evidence,
            fix,
        )
    } else if unknown && !forbidden_lines.is_empty() {
        let mut evidence = evidence;
        evidence.extend(forbidden_lines.iter().map(|l| format!("403 in the logs: {}", l.cite())));
        finding(FindingId::RbacEvents, Severity::Problem, title, evidence, fix)
    } else if !unknown {
        finding(
            FindingId::RbacEvents,
            Severity::Ok,
            format!(
                "the operator's ServiceAccount may {} events in API group {group_name} in {}",
                verbs.join("/"),
                ctx.ns
            ),
            evidence,
            None,
        )
    } else {
        return Vec::new();
    };
    vec![found]
}

/// `core ("")` for the core group, else the group.
fn group_name(group: &str) -> String {
    if group.is_empty() {
        "core (\"\")".to_string()
    } else {
        group.to_string()
    }
}

/// What the ServiceAccount of `op` may not do, and with which API the operator posts.
fn title(ctx: &Ctx<'_>, op: &OperatorRef, group_name: &str, verbs: &[&str]) -> String {
    let who = match op.kind {
        OperatorKind::Kopf => "Kopf posts core/v1 events",
        OperatorKind::Ours => "kubectl-microservice posts events.k8s.io/v1 events",
    };
    format!(
        "the operator's ServiceAccount {}/{} may not {} events in API group {group_name} in {} ({who})",
        op.namespace,
        op.service_account,
        verbs.join("/"),
        ctx.ns
    )
}

/// The events rule, in the Role bound in the namespace (one JSON patch appends it) or a Role to
/// bind, and how to check it ([`after_the_grant`]).
fn fix(ctx: &Ctx<'_>, account: Account<'_>, group: &str, verbs: &[&str]) -> String {
    let (role, role_hint) = rbac::where_to_add(&ctx.snapshot.rbac, account, ctx.ns);
    match &role {
        Some(r) => format!(
            "{role_hint}:\n{}\nwith: kubectl -n {} patch role {r} --type=json -p '[{{\"op\":\"add\",\"path\":\"/rules/-\",\"value\":{{\"apiGroups\":[\"{group}\"],\"resources\":[\"events\"],\"verbs\":[{}]}}}}]'\nthen {}",
            rbac::rule_yaml(group, "events", verbs),
            ctx.ns,
            verbs.iter().map(|v| format!("\"{v}\"")).collect::<Vec<_>>().join(","),
            after_the_grant(ctx)
        ),
        // No Role bound there (a cluster-wide operator's ClusterRole lacks the rule): a Role
        // and RoleBinding in the object's namespace, pasteable (issue 18 trial, team-bravo).
        None => format!(
            "{role_hint}:\n{}\n{}\nthen {}",
            rbac::rule_yaml(group, "events", verbs),
            rbac::create_role_commands(ctx.ns, account, group, "events", verbs),
            after_the_grant(ctx)
        ),
    }
}

/// Without an operator in evidence, the 403s of failed event POSTs are the evidence: the API's
/// message names the user and the API group (`... cannot create resource "events" in API group "X"`).
fn from_logs(ctx: &Ctx<'_>) -> Vec<Finding> {
    let forbidden: Vec<(&Line, EventPostFailure)> = refused_post_lines(ctx)
        .into_iter()
        .filter(|(_, f)| rbac_403(f))
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
            "the operator may not create events in API group {} in {}",
            group_name(group),
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

#[cfg(test)]
mod tests {
    use super::super::ctx::fixture::run;
    use super::*;
    use crate::diagnose::finding::FindingId::*;
    use crate::diagnose::finding::Severity::*;

    /// `rbac-events` is a problem where the operator's Role lacks the events rule (a real
    /// bundle of ours), `ok` where it grants it.
    #[test]
    fn the_operators_rbac_for_events() {
        assert_eq!(run("bundles/ours-style-rbac", check), [(RbacEvents, Problem)]);
        assert_eq!(run("bundles-synthetic/rbac-resource", check), [(RbacEvents, Ok)]);
        assert_eq!(run("bundles/healthy", check), [(RbacEvents, Ok)]);
    }

    /// Issue 18 trial, team-bravo (a real capture): a cluster-wide Kopf operator whose
    /// ClusterRole lacks the events rule, no Role bound in the namespace: the fix is a Role and
    /// RoleBinding created in the object's namespace, commands pasteable as they are.
    #[test]
    fn without_a_bound_role_the_fix_creates_one_in_the_namespace() {
        let snapshot = super::super::ctx::fixture::bundle("bundles-captured/i18live-s2-bravo-image-cmd-events-403");
        let obj = snapshot.microservices.get().unwrap()[0].clone();
        let ctx = super::super::Ctx::new(&snapshot, &obj, Default::default());
        let found = check(&ctx);
        let fix = found[0].fix.as_deref().unwrap();
        assert!(
            fix.contains(
                "with: kubectl -n team-bravo create role kopfexample-account-events --verb=create --resource=events\nand: kubectl -n team-bravo create rolebinding kopfexample-account-events --role=kopfexample-account-events --serviceaccount=team-bravo:kopfexample-account"
            ),
            "{fix}"
        );
    }
}
