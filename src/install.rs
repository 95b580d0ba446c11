//! The install model: everything that installs the operator, least privilege, as pure data
//! (no flags, no output format, no I/O). The `manifests` subcommand prints it for its flags, and
//! the diagnostics quote its objects, names and rules in their fixes.
//!
//! Objects, in apply order: the CRD; the operator's ServiceAccount; a ClusterRole + binding that
//! lets it `get` only its own CRD (the start-up check); in each watched namespace a Role +
//! RoleBinding (or one ClusterRole + ClusterRoleBinding with `--all-namespaces`) with exactly the
//! verbs the operator uses — microservices get/list/watch, microservices/status patch,
//! events.k8s.io events create/patch (create posts, patch extends a series); with leader election
//! (the default), a Role + RoleBinding in the operator's namespace for its Lease — `create` on
//! leases (create cannot be limited to a name) and `get`/`update` on the Lease by name, the verbs
//! `operate::leader` uses; the Deployment, restricted Pod Security Standard, with liveness and
//! readiness probes on `--health-listen 0.0.0.0:8080`: 2 replicas with leader election, or with
//! `--standalone` 1 replica, `Recreate`, `operate --standalone`; and two ClusterRoles for people:
//! `microservice-view` (aggregated to `view`) and `microservice-diagnose` (what
//! status/logs/explain-events read). No rule uses a wildcard (a test holds this).

use serde_json::{Value, json};

pub mod crd_merge;

use crate::resource::{CRD_NAME, GROUP, PLURAL, crd};
use crate::vocab::lease::{DEFAULT_LEASE_NAME, LEASE_VERBS};

/// The image the Deployment runs unless `--image` is given.
pub const DEFAULT_IMAGE: &str = concat!(
    "ghcr.io/platform-example/kubectl-microservice:",
    env!("CARGO_PKG_VERSION")
);
/// Name of the ServiceAccount, Roles, bindings and Deployment of the operator.
pub const OPERATOR_NAME: &str = "microservice-operator";
/// Name of the Role and RoleBinding for the Lease, in the operator's namespace.
pub const LEASE_ROLE_NAME: &str = "microservice-operator-lease";
/// Port of the health and metrics endpoint in the Pod.
pub const HEALTH_PORT: u16 = 8080;
/// Replicas with leader election: one leader, one standby.
pub const REPLICAS: u32 = 2;

/// What to install: where the operator runs, what it watches, its image and mode. Built from
/// the flags of `manifests` (validated there) or read back from a Deployment in evidence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallPlan {
    /// The operator's namespace.
    pub operator_namespace: String,
    /// Watched namespaces; empty means all namespaces.
    pub watch: Vec<String>,
    /// Operator image.
    pub image: String,
    /// One replica, Recreate, `--standalone`; else [`REPLICAS`] with leader election.
    pub standalone: bool,
    /// `--events` value for the operator.
    pub events: &'static str,
}

/// Whether `object` is shared by every installation of the operator, whatever its namespace:
/// the CRD and the ClusterRoles (their names carry no namespace; the ClusterRoleBindings that
/// grant them to one operator's ServiceAccount are named after its namespace, and are its own).
pub fn is_shared(object: &Value) -> bool {
    matches!(
        object["kind"].as_str(),
        Some("CustomResourceDefinition" | "ClusterRole")
    )
}

/// The operator's rules in a watched namespace (or cluster-wide with `-A`).
pub fn operator_rules() -> Value {
    json!([
        {"apiGroups": [GROUP], "resources": [PLURAL], "verbs": ["get", "list", "watch"]},
        {"apiGroups": [GROUP], "resources": [format!("{PLURAL}/status")], "verbs": ["patch"]},
        {"apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch"]}
    ])
}

/// The operator's rules for the Lease `name`, in its namespace: exactly
/// [`crate::vocab::lease::LEASE_VERBS`] — `create` on leases, the others on `name` only.
pub fn lease_rules(name: &str) -> Value {
    let verbs = |named: bool| -> Vec<&str> {
        LEASE_VERBS
            .iter()
            .filter(|(_, n)| *n == named)
            .map(|(v, _)| *v)
            .collect()
    };
    json!([
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": verbs(false)},
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "resourceNames": [name], "verbs": verbs(true)}
    ])
}

/// Every object, in apply order.
pub fn objects(plan: &InstallPlan) -> Vec<Value> {
    let ns = plan.operator_namespace.as_str();
    let labels = json!({"app.kubernetes.io/name": "kubectl-microservice", "app.kubernetes.io/component": "operator"});
    let subject = json!([{"kind": "ServiceAccount", "name": OPERATOR_NAME, "namespace": ns}]);
    let mut out = vec![
        serde_json::to_value(crd()).expect("CRD serialises"),
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": OPERATOR_NAME, "namespace": ns, "labels": labels}}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
               "metadata": {"name": "microservice-operator-crd", "labels": labels},
               "rules": [{"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"], "resourceNames": [CRD_NAME], "verbs": ["get"]}]}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
               "metadata": {"name": format!("microservice-operator-crd-{ns}"), "labels": labels},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "microservice-operator-crd"},
               "subjects": subject}),
    ];
    if plan.watch.is_empty() {
        out.push(
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": OPERATOR_NAME, "labels": labels}, "rules": operator_rules()}),
        );
        out.push(
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": format!("{OPERATOR_NAME}-{ns}"), "labels": labels},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": OPERATOR_NAME},
            "subjects": subject}),
        );
    } else {
        for watched in &plan.watch {
            out.extend(role_and_binding(
                OPERATOR_NAME,
                watched,
                operator_rules(),
                &labels,
                &subject,
            ));
        }
    }
    if !plan.standalone {
        for lease in lease_plans(plan) {
            out.extend(role_and_binding(
                LEASE_ROLE_NAME,
                &lease.namespace,
                lease_rules(&lease.name),
                &labels,
                &subject,
            ));
        }
    }
    out.push(deployment(plan, &labels));
    out.extend(user_roles());
    out
}

/// The Leases the Deployment's replicas elect on ([`crate::vocab::lease::plan_leases`] over
/// the args [`deployment`] writes): one in each watched namespace, or one in the operator's
/// namespace with `-A`.
fn lease_plans(plan: &InstallPlan) -> Vec<crate::vocab::lease::LeasePlan> {
    let watches = (!plan.watch.is_empty()).then_some(plan.watch.as_slice());
    let explicit = watches.is_none().then_some(DEFAULT_LEASE_NAME);
    crate::vocab::lease::plan_leases(
        watches,
        explicit.map(|_| plan.operator_namespace.as_str()),
        explicit,
        &plan.operator_namespace,
    )
}

/// A Role `name` in `namespace` with `rules`, and its RoleBinding to `subject`.
fn role_and_binding(name: &str, namespace: &str, rules: Value, labels: &Value, subject: &Value) -> [Value; 2] {
    [
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": name, "namespace": namespace, "labels": labels}, "rules": rules}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": name, "namespace": namespace, "labels": labels},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
            "subjects": subject}),
    ]
}

/// The operator's command line in the Deployment: what it watches, `--events`, text logs, the
/// health endpoint; then `--standalone`, or with `-A` the one Lease it elects on.
fn operator_command(plan: &InstallPlan) -> Vec<String> {
    let mut command: Vec<String> = vec!["kubectl-microservice".into(), "operate".into()];
    if plan.watch.is_empty() {
        command.push("--all-namespaces".into());
    } else {
        for ns in &plan.watch {
            command.extend(["--namespace".into(), ns.clone()]);
        }
    }
    command.extend([
        "--events".into(),
        plan.events.into(),
        "--log-format".into(),
        "text".into(),
        "--health-listen".into(),
        format!("0.0.0.0:{HEALTH_PORT}"),
    ]);
    if plan.standalone {
        command.push("--standalone".into());
    } else if plan.watch.is_empty() {
        // With watch namespaces the operator's default applies (a Lease in each watched
        // namespace), the one a laptop `operate -n NS` also elects on; with -A, one Lease in
        // the operator's namespace, named as `operate` would name it.
        command.extend([
            "--lease-name".into(),
            DEFAULT_LEASE_NAME.into(),
            "--lease-namespace".into(),
            plan.operator_namespace.clone(),
        ]);
    }
    command
}

/// The Deployment's replicas and update strategy. Standalone: one replica that is replaced,
/// never doubled (Recreate). With leader election: two replicas, one handling, one standby; a
/// rolling update keeps one running throughout.
fn rollout(plan: &InstallPlan) -> (u32, Value) {
    if plan.standalone {
        (1, json!({"type": "Recreate"}))
    } else {
        (
            REPLICAS,
            json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}}),
        )
    }
}

/// The operator's Deployment: restricted Pod Security, probes on the health endpoint.
fn deployment(plan: &InstallPlan, labels: &Value) -> Value {
    let command = operator_command(plan);
    let (replicas, strategy) = rollout(plan);
    let probe = |path: &str, period: u32, failures: u32| json!({"httpGet": {"path": path, "port": "http"}, "periodSeconds": period, "timeoutSeconds": 2, "failureThreshold": failures});
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": OPERATOR_NAME, "namespace": plan.operator_namespace, "labels": labels},
        "spec": {
            "replicas": replicas,
            "strategy": strategy,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "serviceAccountName": OPERATOR_NAME,
                    // Shutdown: up to 4 s for writes in flight, then the Lease is released.
                    "terminationGracePeriodSeconds": 15,
                    "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 100, "podAffinityTerm": {"labelSelector": {"matchLabels": labels}, "topologyKey": "kubernetes.io/hostname"}}
                    ]}},
                    "securityContext": {
                        "runAsNonRoot": true, "runAsUser": 65532, "runAsGroup": 65532,
                        "seccompProfile": {"type": "RuntimeDefault"}
                    },
                    "containers": [{
                        "name": "operator",
                        "image": plan.image,
                        "imagePullPolicy": "IfNotPresent",
                        "command": command,
                        "ports": [{"name": "http", "containerPort": HEALTH_PORT, "protocol": "TCP"}],
                        // /healthz fails after twice the watch timeout without a working watch.
                        "livenessProbe": probe("/healthz", 20, 3),
                        "readinessProbe": probe("/readyz", 5, 1),
                        "env": [
                            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                            {"name": "RUST_LOG", "value": "warn,kubectl_microservice=info"}
                        ],
                        "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"memory": "256Mi"}},
                        "securityContext": {
                            "allowPrivilegeEscalation": false,
                            "readOnlyRootFilesystem": true,
                            "runAsNonRoot": true,
                            "capabilities": {"drop": ["ALL"]},
                            "seccompProfile": {"type": "RuntimeDefault"}
                        }
                    }]
                }
            }
        }
    })
}

/// ClusterRoles for the people who use the plugin: bind them per namespace with a RoleBinding.
fn user_roles() -> Vec<Value> {
    let labels = json!({"app.kubernetes.io/name": "kubectl-microservice"});
    let mut view_labels = labels.clone();
    view_labels["rbac.authorization.k8s.io/aggregate-to-view"] = json!("true");
    view_labels["rbac.authorization.k8s.io/aggregate-to-edit"] = json!("true");
    view_labels["rbac.authorization.k8s.io/aggregate-to-admin"] = json!("true");
    vec![
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "microservice-view", "labels": view_labels},
            "rules": [{"apiGroups": [GROUP], "resources": [PLURAL], "verbs": ["get", "list", "watch"]}]}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "microservice-diagnose", "labels": labels},
        "rules": [
            {"apiGroups": [GROUP], "resources": [PLURAL], "verbs": ["get", "list", "watch"]},
            {"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"], "resourceNames": [CRD_NAME], "verbs": ["get"]},
            {"apiGroups": [""], "resources": ["events"], "verbs": ["get", "list", "watch"]},
            {"apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": ["get", "list", "watch"]},
            {"apiGroups": [""], "resources": ["pods", "configmaps", "namespaces"], "verbs": ["get", "list"]},
            {"apiGroups": [""], "resources": ["pods/log"], "verbs": ["get"]},
            {"apiGroups": ["apps"], "resources": ["deployments", "replicasets"], "verbs": ["get", "list"]},
            {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get", "list"]},
            {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles", "rolebindings", "clusterroles", "clusterrolebindings"], "verbs": ["get", "list"]},
            {"apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews", "selfsubjectaccessreviews"], "verbs": ["create"]}
        ]}),
    ]
}
