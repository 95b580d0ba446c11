//! May the operator's ServiceAccount do X in namespace N? Two methods, in order of authority:
//!
//! 1. a SubjectAccessReview the API server answered (`rbac/access-reviews.json`, or created live
//!    for the ServiceAccount): its `status.allowed` is the authorizers' own answer;
//! 2. reading Roles, ClusterRoles and their bindings (ServiceAccount subjects, the groups
//!    `system:serviceaccounts`, `system:serviceaccounts:NS`, `system:authenticated`, wildcards,
//!    RoleBinding → ClusterRole). A rule found proves "allowed"; none found only suggests
//!    "denied", since other authorizers (webhooks, ABAC) may allow it.

use chrono::{DateTime, Utc};
use k8s_openapi::api::authorization::v1::SubjectAccessReview;
use k8s_openapi::api::rbac::v1::{PolicyRule, Subject};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::evidence::RbacEvidence;
use crate::evidence::operator::OperatorKind;
use crate::time::from_jiff;

/// One permission: `verb` on `group`/`resource` (resource may carry `/subresource`) in `namespace`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Need<'a> {
    /// API group (`""` for core).
    pub group: &'a str,
    /// Resource, optionally `resource/subresource`.
    pub resource: &'a str,
    /// Verb.
    pub verb: &'a str,
    /// Namespace of the request.
    pub namespace: &'a str,
    /// The object's name, for requests on one object (`get`, `update`); `None` for `list`,
    /// `watch`, `create`. Rules with `resourceNames` match only named requests.
    pub name: Option<&'a str>,
}

impl Need<'_> {
    /// `create events.events.k8s.io in store` (core group: `create events in store`).
    pub fn describe(&self) -> String {
        let group = if self.group.is_empty() {
            String::new()
        } else {
            format!(".{}", self.group)
        };
        let name = self.name.map(|n| format!(" {n:?}")).unwrap_or_default();
        format!("{} {}{group}{name} in {}", self.verb, self.resource, self.namespace)
    }
}

/// A ServiceAccount.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Account<'a> {
    /// Its namespace.
    pub namespace: &'a str,
    /// Its name.
    pub name: &'a str,
}

impl Account<'_> {
    /// `system:serviceaccount:NS:NAME`, the user name the API server sees.
    pub fn user(&self) -> String {
        format!("system:serviceaccount:{}:{}", self.namespace, self.name)
    }
}

/// The answer and how it was obtained.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// A SubjectAccessReview answered (allowed, the authorizer's reason when given).
    Reviewed {
        /// `status.allowed`.
        allowed: bool,
        /// `status.reason` / `status.evaluationError`, when given.
        reason: Option<String>,
    },
    /// Roles/bindings grant it: the binding and role named.
    RulesAllow(String),
    /// No Role/ClusterRole bound to the account grants it (only suggests denied).
    RulesSilent,
    /// Neither reviews nor the RBAC objects are in evidence.
    Unknown,
}

/// Decides `need` for `account` by review, else by rules.
pub fn decide(rbac: &RbacEvidence, account: Account<'_>, need: Need<'_>) -> Answer {
    if let Some(answer) = rbac.access_reviews.get().and_then(|r| reviewed(r, account, need)) {
        return answer;
    }
    by_rules(rbac, account, need)
}

fn reviewed(reviews: &[SubjectAccessReview], account: Account<'_>, need: Need<'_>) -> Option<Answer> {
    let (resource, subresource) = split(need.resource);
    let user = account.user();
    reviews.iter().find_map(|r| {
        let attrs = r.spec.resource_attributes.as_ref()?;
        let same = r.spec.user.as_deref() == Some(user.as_str())
            && attrs.group.as_deref().unwrap_or("") == need.group
            && attrs.resource.as_deref() == Some(resource)
            && attrs.subresource.as_deref().unwrap_or("") == subresource
            && attrs.verb.as_deref() == Some(need.verb)
            && attrs.namespace.as_deref().unwrap_or("") == need.namespace
            && attrs.name.as_deref().filter(|n| !n.is_empty()) == need.name;
        let status = r.status.as_ref()?;
        same.then(|| Answer::Reviewed {
            allowed: status.allowed,
            reason: status
                .reason
                .clone()
                .or_else(|| status.evaluation_error.clone())
                .filter(|s| !s.is_empty()),
        })
    })
}

fn split(resource: &str) -> (&str, &str) {
    resource.split_once('/').unwrap_or((resource, ""))
}

fn subject_matches(subject: &Subject, account: Account<'_>, binding_namespace: Option<&str>) -> bool {
    match subject.kind.as_str() {
        "ServiceAccount" => {
            subject.name == account.name
                && subject.namespace.as_deref().or(binding_namespace) == Some(account.namespace)
        }
        "User" => subject.name == account.user(),
        "Group" => {
            subject.name == "system:serviceaccounts"
                || subject.name == "system:authenticated"
                || subject.name == format!("system:serviceaccounts:{}", account.namespace)
        }
        _ => false,
    }
}

fn rule_allows(rule: &PolicyRule, need: Need<'_>) -> bool {
    let has = |list: &Option<Vec<String>>, want: &str| list.iter().flatten().any(|v| v == "*" || v == want);
    let (resource, subresource) = split(need.resource);
    let resource_ok = rule.resources.iter().flatten().any(|r| {
        r == "*"
            || r == need.resource
            || (subresource.is_empty() && r == resource)
            || (!subresource.is_empty() && r == &format!("{resource}/*"))
    });
    rule.verbs.iter().any(|v| v == "*" || v == need.verb)
        && has(&rule.api_groups, need.group)
        && resource_ok
        && match rule.resource_names.as_ref().filter(|names| !names.is_empty()) {
            None => true,
            Some(names) => need.name.is_some_and(|n| names.iter().any(|r| r == n)),
        }
}

fn by_rules(rbac: &RbacEvidence, account: Account<'_>, need: Need<'_>) -> Answer {
    let (Some(roles), Some(bindings), Some(cluster_roles), Some(cluster_bindings)) = (
        rbac.roles.get(),
        rbac.role_bindings.get(),
        rbac.cluster_roles.get(),
        rbac.cluster_role_bindings.get(),
    ) else {
        return Answer::Unknown;
    };
    let cluster_role_allows = |name: &str| {
        cluster_roles
            .iter()
            .find(|r| r.metadata.name.as_deref() == Some(name))
            .is_some_and(|r| r.rules.iter().flatten().any(|rule| rule_allows(rule, need)))
    };
    for b in bindings {
        let ns = b.metadata.namespace.as_deref();
        if ns != Some(need.namespace) || !b.subjects.iter().flatten().any(|s| subject_matches(s, account, ns)) {
            continue;
        }
        let allows = match b.role_ref.kind.as_str() {
            "Role" => roles
                .iter()
                .find(|r| r.metadata.name == Some(b.role_ref.name.clone()) && r.metadata.namespace.as_deref() == ns)
                .is_some_and(|r| r.rules.iter().flatten().any(|rule| rule_allows(rule, need))),
            "ClusterRole" => cluster_role_allows(&b.role_ref.name),
            _ => false,
        };
        if allows {
            return Answer::RulesAllow(format!(
                "RoleBinding {}/{} of {} {}",
                need.namespace,
                b.metadata.name.as_deref().unwrap_or("?"),
                b.role_ref.kind,
                b.role_ref.name
            ));
        }
    }
    for b in cluster_bindings {
        if b.subjects.iter().flatten().any(|s| subject_matches(s, account, None))
            && cluster_role_allows(&b.role_ref.name)
        {
            return Answer::RulesAllow(format!(
                "ClusterRoleBinding {} of ClusterRole {}",
                b.metadata.name.as_deref().unwrap_or("?"),
                b.role_ref.name
            ));
        }
    }
    Answer::RulesSilent
}

/// A grant found by reading the RBAC objects, and when it was last written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// `RoleBinding NS/NAME of Role NAME` (as [`Answer::RulesAllow`] words it).
    pub by: String,
    /// The latest write of the binding or the role (the later of their `creationTimestamp` and
    /// `metadata.managedFields[].time`, API server clock, 1 s resolution): the grant was in
    /// place from this time at the latest. `None` when neither carries a time.
    pub written: Option<DateTime<Utc>>,
}

/// The binding and role that grant `need` to `account` by their rules, with when they were last
/// written (see [`Grant::written`]); `None` when the rules do not grant it or are not in
/// evidence. This dates a fix: a 403 logged before that time may predate the grant.
pub fn grant(rbac: &RbacEvidence, account: Account<'_>, need: Need<'_>) -> Option<Grant> {
    let (roles, bindings, cluster_roles, cluster_bindings) = (
        rbac.roles.get()?,
        rbac.role_bindings.get()?,
        rbac.cluster_roles.get()?,
        rbac.cluster_role_bindings.get()?,
    );
    let latest = |meta: &ObjectMeta| -> Option<DateTime<Utc>> {
        meta.managed_fields
            .iter()
            .flatten()
            .filter_map(|m| m.time.as_ref().map(|t| from_jiff(t.0)))
            .chain(meta.creation_timestamp.as_ref().map(|t| from_jiff(t.0)))
            .max()
    };
    let later = |a: Option<DateTime<Utc>>, b: Option<DateTime<Utc>>| a.max(b).or(a).or(b);
    let cluster_role = |name: &str| {
        cluster_roles
            .iter()
            .find(|r| r.metadata.name.as_deref() == Some(name))
            .filter(|r| r.rules.iter().flatten().any(|rule| rule_allows(rule, need)))
    };
    for b in bindings {
        let ns = b.metadata.namespace.as_deref();
        if ns != Some(need.namespace) || !b.subjects.iter().flatten().any(|s| subject_matches(s, account, ns)) {
            continue;
        }
        let role_written = match b.role_ref.kind.as_str() {
            "Role" => roles
                .iter()
                .find(|r| r.metadata.name == Some(b.role_ref.name.clone()) && r.metadata.namespace.as_deref() == ns)
                .filter(|r| r.rules.iter().flatten().any(|rule| rule_allows(rule, need)))
                .map(|r| latest(&r.metadata)),
            "ClusterRole" => cluster_role(&b.role_ref.name).map(|r| latest(&r.metadata)),
            _ => None,
        };
        if let Some(role_written) = role_written {
            return Some(Grant {
                by: format!(
                    "RoleBinding {}/{} of {} {}",
                    need.namespace,
                    b.metadata.name.as_deref().unwrap_or("?"),
                    b.role_ref.kind,
                    b.role_ref.name
                ),
                written: later(latest(&b.metadata), role_written),
            });
        }
    }
    for b in cluster_bindings {
        if b.subjects.iter().flatten().any(|s| subject_matches(s, account, None))
            && let Some(role) = cluster_role(&b.role_ref.name)
        {
            return Some(Grant {
                by: format!(
                    "ClusterRoleBinding {} of ClusterRole {}",
                    b.metadata.name.as_deref().unwrap_or("?"),
                    b.role_ref.name
                ),
                written: later(latest(&b.metadata), latest(&role.metadata)),
            });
        }
    }
    None
}

/// The Role the account is bound to in `namespace` (by a RoleBinding to a Role), for the fix.
pub fn bound_role(rbac: &RbacEvidence, account: Account<'_>, namespace: &str) -> Option<String> {
    rbac.role_bindings.get()?.iter().find_map(|b| {
        let ns = b.metadata.namespace.as_deref();
        (ns == Some(namespace)
            && b.role_ref.kind == "Role"
            && b.subjects.iter().flatten().any(|s| subject_matches(s, account, ns)))
        .then(|| b.role_ref.name.clone())
    })
}

/// Where a missing rule goes, for a fix: the Role `account` is bound to in `namespace`
/// ([`bound_role`], its name returned too) as `add to the rules of Role NS/ROLE`, else `add to a
/// Role in NS bound to ServiceAccount SA_NS/SA`.
pub fn where_to_add(rbac: &RbacEvidence, account: Account<'_>, namespace: &str) -> (Option<String>, String) {
    let role = bound_role(rbac, account, namespace);
    let hint = match &role {
        Some(r) => format!("add to the rules of Role {namespace}/{r}"),
        None => format!(
            "add to a Role in {namespace} bound to ServiceAccount {}/{}",
            account.namespace, account.name
        ),
    };
    (role, hint)
}

/// The commands that grant `verbs` on `group`/`resource` in `namespace` to `account` when no
/// Role there is bound to it (a cluster-wide operator's ClusterRole lacks the rule): a Role
/// `ACCOUNT-RESOURCE` and its RoleBinding, both in the object's namespace, pasteable as they are
/// (`kubectl create role` takes a resource as `RESOURCE.GROUP`): `with: kubectl ... create role
/// ...` and, on the next line, `and: kubectl ... create rolebinding ...`.
pub fn create_role_commands(
    namespace: &str,
    account: Account<'_>,
    group: &str,
    resource: &str,
    verbs: &[&str],
) -> String {
    let name = format!("{}-{resource}", account.name);
    let typed = if group.is_empty() {
        resource.to_string()
    } else {
        format!("{resource}.{group}")
    };
    format!(
        "with: kubectl -n {namespace} create role {name} --verb={} --resource={typed}\nand: kubectl -n {namespace} create rolebinding {name} --role={name} --serviceaccount={}:{}",
        verbs.join(","),
        account.namespace,
        account.name
    )
}

/// The Role rule granting `verbs` on `group`/`resource`, as YAML (list item).
pub fn rule_yaml(group: &str, resource: &str, verbs: &[&str]) -> String {
    format!(
        "- apiGroups: [\"{group}\"]\n  resources: [\"{resource}\"]\n  verbs: [{}]",
        verbs.iter().map(|v| format!("\"{v}\"")).collect::<Vec<_>>().join(", ")
    )
}

/// The events API group and verbs an operator of `kind` posts with: Kopf core/v1 `create`;
/// ours (and kube-rs's Recorder) events.k8s.io `create` + `patch`.
pub fn event_needs(kind: OperatorKind) -> (&'static str, &'static [&'static str]) {
    match kind {
        OperatorKind::Kopf => ("", &["create"]),
        OperatorKind::Ours => ("events.k8s.io", &["create", "patch"]),
    }
}

impl Answer {
    /// How the answer was obtained, in words, for evidence: `SubjectAccessReview: denied
    /// (reason)`, `read from RBAC objects: allowed by ...`.
    pub fn method(&self) -> String {
        match self {
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
}

/// `kubectl auth can-i VERB` on `resource` of our API group in `ns` as `user`: a subresource
/// (`microservices/status`) is asked with `--subresource`, as `kubectl auth can-i` takes it
/// (`microservices/status.GROUP` would ask about an object named `status.GROUP`).
pub fn can_i_ours(verb: &str, resource: &str, ns: &str, user: &str) -> String {
    can_i_in(crate::resource::GROUP, verb, resource, ns, user)
}

/// [`can_i_ours`] for a resource of API group `group` (`kopf.dev`): `kubectl auth can-i VERB
/// PLURAL.GROUP[--subresource=SUB] -n NS --as=USER`.
pub fn can_i_in(group: &str, verb: &str, resource: &str, ns: &str, user: &str) -> String {
    let (plural, sub) = match resource.split_once('/') {
        Some((plural, sub)) => (plural, format!(" --subresource={sub}")),
        None => (resource, String::new()),
    };
    format!("kubectl auth can-i {verb} {plural}.{group}{sub} -n {ns} --as={user}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::{Evidence, GapReason};
    use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
    use std::path::Path;

    fn rbac_of(bundle: &str) -> RbacEvidence {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/bundles")
            .join(bundle);
        crate::evidence::bundle::read(&dir).unwrap().rbac
    }

    const SA: Account<'static> = Account {
        namespace: "store",
        name: "catalog-operator",
    };

    fn need<'a>(group: &'a str, resource: &'a str, verb: &'a str) -> Need<'a> {
        Need {
            group,
            resource,
            verb,
            namespace: "store",
            name: None,
        }
    }

    #[test]
    fn rules_with_resource_names_allow_only_requests_on_those_names() {
        // The Role `manifests` writes for the Lease: create unnamed, get/update by name.
        let role: Role = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "microservice-operator-lease", "namespace": "ops"},
            "rules": crate::install::lease_rules("microservice-operator")
        }))
        .unwrap();
        let binding: RoleBinding = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "microservice-operator-lease", "namespace": "ops"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "microservice-operator-lease"},
            "subjects": [{"kind": "ServiceAccount", "name": "microservice-operator", "namespace": "ops"}]
        }))
        .unwrap();
        let rbac = RbacEvidence {
            access_reviews: Evidence::missing("access reviews", GapReason::NotInBundle("x".into())),
            roles: Evidence::Present(vec![role]),
            role_bindings: Evidence::Present(vec![binding]),
            cluster_roles: Evidence::Present(vec![]),
            cluster_role_bindings: Evidence::Present(vec![]),
        };
        let account = Account {
            namespace: "ops",
            name: "microservice-operator",
        };
        let ask = |verb, name| {
            decide(
                &rbac,
                account,
                Need {
                    group: "coordination.k8s.io",
                    resource: "leases",
                    verb,
                    namespace: "ops",
                    name,
                },
            )
        };
        assert!(matches!(
            ask("update", Some("microservice-operator")),
            Answer::RulesAllow(_)
        ));
        assert!(matches!(ask("create", None), Answer::RulesAllow(_)));
        assert_eq!(ask("update", Some("another-lease")), Answer::RulesSilent);
        assert_eq!(
            ask("update", None),
            Answer::RulesSilent,
            "a named rule never allows an unnamed request"
        );
    }

    #[test]
    fn reviews_answer_first() {
        let rbac = rbac_of("ours-style-rbac");
        assert!(matches!(
            decide(&rbac, SA, need("events.k8s.io", "events", "create")),
            Answer::Reviewed { allowed: false, .. }
        ));
        assert!(matches!(
            decide(&rbac, SA, need("", "events", "create")),
            Answer::Reviewed { allowed: true, .. }
        ));
    }

    #[test]
    fn rules_prove_allowed_and_only_suggest_denied() {
        let mut rbac = rbac_of("ours-style-rbac");
        rbac.access_reviews = Evidence::missing("access reviews", GapReason::Forbidden("no".into()));
        match decide(&rbac, SA, need("", "events", "create")) {
            Answer::RulesAllow(by) => assert!(by.contains("Role catalog-operator"), "{by}"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            decide(&rbac, SA, need("platform.example.io", "microservices/status", "patch")),
            Answer::RulesAllow(_)
        ));
        assert_eq!(
            decide(&rbac, SA, need("events.k8s.io", "events", "create")),
            Answer::RulesSilent
        );
        assert_eq!(bound_role(&rbac, SA, "store").as_deref(), Some("catalog-operator"));
        rbac.roles = Evidence::missing("Roles", GapReason::Forbidden("no".into()));
        assert_eq!(decide(&rbac, SA, need("", "events", "create")), Answer::Unknown);
    }

    #[test]
    fn wildcards_and_groups() {
        let rule: PolicyRule = serde_json::from_value(serde_json::json!(
            {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}
        ))
        .unwrap();
        assert!(rule_allows(&rule, need("events.k8s.io", "events", "patch")));
        let named: PolicyRule = serde_json::from_value(serde_json::json!(
            {"apiGroups": [""], "resources": ["events"], "verbs": ["create"], "resourceNames": ["x"]}
        ))
        .unwrap();
        assert!(!rule_allows(&named, need("", "events", "create")));
        let group: Subject =
            serde_json::from_value(serde_json::json!({"kind": "Group", "name": "system:serviceaccounts:store"}))
                .unwrap();
        assert!(subject_matches(&group, SA, None));
        let other: Subject =
            serde_json::from_value(serde_json::json!({"kind": "ServiceAccount", "name": "catalog-operator"})).unwrap();
        assert!(subject_matches(&other, SA, Some("store")));
        assert!(!subject_matches(&other, SA, Some("todo")));
    }
}
