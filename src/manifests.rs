//! `kubectl microservice manifests`: everything that installs the operator, least privilege.
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

use crate::cli::{GlobalArgs, ManifestsArgs};
use crate::error::AppError;
use crate::render::OutputFormat;
use crate::resource::{CRD_NAME, GROUP, IMAGE_PATTERN, PLURAL, crd};
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

/// Where the operator runs and what it watches, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
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

impl Plan {
    /// Validates the flags: exactly one `--namespace`, and `--watch-namespace` or `-A` (not both),
    /// an OCI image reference (namespace names are checked while parsing, [`crate::names`]). Errors name the flag (exit 2).
    pub fn from_flags(global: &GlobalArgs, args: &ManifestsArgs) -> Result<Self, AppError> {
        let operator_namespace = match global.namespaces.as_slice() {
            [ns] => ns.clone(),
            [] => {
                return Err(AppError::Usage(
                    "manifests needs --namespace OPNS: the namespace the operator runs in".into(),
                ));
            }
            many => {
                return Err(AppError::Usage(format!(
                    "manifests takes one --namespace (the operator's), got {}; use --watch-namespace for the namespaces to watch",
                    many.join(",")
                )));
            }
        };
        match (args.watch_namespaces.is_empty(), global.all_namespaces) {
            (true, false) => {
                return Err(AppError::Usage(
                    "manifests needs --watch-namespace NS (repeatable) or --all-namespaces".into(),
                ));
            }
            (false, true) => {
                return Err(AppError::Usage(
                    "--watch-namespace and --all-namespaces exclude each other".into(),
                ));
            }
            _ => {}
        }
        if !regex::Regex::new(IMAGE_PATTERN)
            .expect("pattern compiles")
            .is_match(&args.image)
        {
            return Err(AppError::Usage(format!(
                "invalid --image {:?}: expected an OCI image reference such as ghcr.io/org/app:1.0.0",
                args.image
            )));
        }
        let mut watch = args.watch_namespaces.clone();
        watch.dedup();
        Ok(Plan {
            operator_namespace,
            watch,
            image: args.image.clone(),
            standalone: args.standalone,
            events: args.events.as_arg(),
        })
    }
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

/// Renders the manifests as YAML documents (default) or, with `-o json`, one `v1` `List`;
/// `-o name` prints `KIND.GROUP/NAME` per object (as `kubectl apply --dry-run=client -o name`
/// would), `-o jsonpath=` evaluates over the `List`.
pub fn render(global: &GlobalArgs, args: &ManifestsArgs) -> Result<String, AppError> {
    let plan = Plan::from_flags(global, args)?;
    let mut objects = objects(&plan);
    if args.without_shared {
        objects.retain(|o| !is_shared(o));
    }
    let list = json!({"apiVersion": "v1", "kind": "List", "items": objects});
    match &global.output {
        None | Some(OutputFormat::Yaml) => Ok(objects
            .iter()
            .map(|o| format!("---\n{}", crate::yaml::to_string(o)))
            .collect()),
        Some(OutputFormat::Name) => Ok(objects
            .iter()
            .map(|o| {
                let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
                let api_version = text(&o["apiVersion"]);
                let group = api_version.rsplit_once('/').map_or("", |(group, _)| group);
                crate::render::name_line(&text(&o["kind"]), group, &text(&o["metadata"]["name"]))
            })
            .collect()),
        Some(OutputFormat::Wide) => Err(AppError::Usage(format!(
            "manifests prints documents, not a table: -o wide has no meaning here; -o takes {}",
            crate::cli::scope::output_formats("manifests").unwrap_or_default()
        ))),
        output => Ok(crate::render::document(&list, output.as_ref())?.unwrap_or_default()),
    }
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
pub fn objects(plan: &Plan) -> Vec<Value> {
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
fn lease_plans(plan: &Plan) -> Vec<crate::vocab::lease::LeasePlan> {
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

fn deployment(plan: &Plan, labels: &Value) -> Value {
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
    // Standalone: one replica that is replaced, never doubled (Recreate). With leader election:
    // two replicas, one handling, one standby; a rolling update keeps one running throughout.
    let (replicas, strategy) = if plan.standalone {
        command.push("--standalone".into());
        (1, json!({"type": "Recreate"}))
    } else {
        // With watch namespaces the operator's default applies (a Lease in each watched
        // namespace), the one a laptop `operate -n NS` also elects on; with -A, one Lease in
        // the operator's namespace, named as `operate` would name it.
        if plan.watch.is_empty() {
            command.extend([
                "--lease-name".into(),
                DEFAULT_LEASE_NAME.into(),
                "--lease-namespace".into(),
                plan.operator_namespace.clone(),
            ]);
        }
        (
            REPLICAS,
            json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}}),
        )
    };
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn render_args(args: &[&str]) -> Result<String, AppError> {
        let cli = Cli::try_parse_from(std::iter::once("kubectl-microservice").chain(args.iter().copied())).unwrap();
        match &cli.command {
            Command::Manifests(m) => render(&cli.global, m),
            _ => unreachable!(),
        }
    }

    fn docs(yaml: &str) -> Vec<Value> {
        serde_saphyr::from_multiple(yaml).unwrap()
    }

    fn all_rules(objects: &[Value]) -> Vec<&Value> {
        objects
            .iter()
            .filter_map(|o| o.get("rules"))
            .flat_map(|r| r.as_array().unwrap())
            .collect()
    }

    #[test]
    fn no_rule_uses_a_wildcard() {
        for args in [
            &[
                "manifests",
                "--namespace",
                "ops",
                "--watch-namespace",
                "todo",
                "--watch-namespace",
                "store",
            ][..],
            &["manifests", "--namespace", "ops", "-A"][..],
        ] {
            let objects = docs(&render_args(args).unwrap());
            let rules = all_rules(&objects);
            assert!(rules.len() >= 5);
            for rule in rules {
                for key in ["apiGroups", "resources", "verbs", "resourceNames"] {
                    for item in rule.get(key).and_then(Value::as_array).into_iter().flatten() {
                        assert!(!item.as_str().unwrap().contains('*'), "wildcard in {rule}");
                    }
                }
            }
        }
    }

    #[test]
    fn one_role_per_watched_namespace_with_the_verbs_used() {
        let objects = docs(&render_args(&["manifests", "-n", "ops", "--watch-namespace", "todo,store"]).unwrap());
        let roles: Vec<&Value> = objects
            .iter()
            .filter(|o| o["kind"] == "Role" && o["metadata"]["name"] == OPERATOR_NAME)
            .collect();
        assert_eq!(
            roles
                .iter()
                .map(|r| r["metadata"]["namespace"].as_str().unwrap())
                .collect::<Vec<_>>(),
            ["todo", "store"]
        );
        assert_eq!(roles[0]["rules"], operator_rules());
        assert!(
            !objects
                .iter()
                .any(|o| o["kind"] == "ClusterRole" && o["metadata"]["name"] == OPERATOR_NAME)
        );
    }

    fn deployment_of(objects: &[Value]) -> &Value {
        objects.iter().find(|o| o["kind"] == "Deployment").unwrap()
    }

    #[test]
    fn default_is_two_replicas_with_leader_election_and_lease_rights() {
        let objects = docs(&render_args(&["manifests", "-n", "ops", "--watch-namespace", "todo,store"]).unwrap());
        let deployment = deployment_of(&objects);
        let command = &deployment["spec"]["template"]["spec"]["containers"][0]["command"];
        assert_eq!(
            command,
            &json!([
                "kubectl-microservice",
                "operate",
                "--namespace",
                "todo",
                "--namespace",
                "store",
                "--events",
                "all",
                "--log-format",
                "text",
                "--health-listen",
                "0.0.0.0:8080"
            ])
        );
        assert_eq!(deployment["metadata"]["namespace"], "ops");
        assert_eq!(deployment["spec"]["replicas"], 2);
        assert_eq!(deployment["spec"]["strategy"]["type"], "RollingUpdate");
        assert_eq!(deployment["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"], 0);
        // The Leases: one in each watched namespace (operate's default, which a laptop
        // `operate -n todo` shares), each a Role with the verbs the elector uses, bound to the
        // operator's ServiceAccount.
        let in_namespace = |kind: &str| {
            let mut found: Vec<&Value> = objects
                .iter()
                .filter(|o| o["kind"] == kind && o["metadata"]["name"] == LEASE_ROLE_NAME)
                .collect();
            found.sort_by_key(|o| o["metadata"]["namespace"].to_string());
            found
        };
        let roles = in_namespace("Role");
        let namespaces: Vec<&Value> = roles.iter().map(|r| &r["metadata"]["namespace"]).collect();
        assert_eq!(namespaces, [&json!("store"), &json!("todo")]);
        for role in roles {
            assert_eq!(
                role["rules"],
                json!([
                    {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create"]},
                    {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "resourceNames": ["microservice-operator"], "verbs": ["get", "update"]}
                ])
            );
        }
        let bindings = in_namespace("RoleBinding");
        assert_eq!(bindings.len(), 2);
        for binding in bindings {
            assert_eq!(binding["roleRef"]["name"], LEASE_ROLE_NAME);
            assert_eq!(binding["subjects"][0]["name"], OPERATOR_NAME);
            assert_eq!(binding["subjects"][0]["namespace"], "ops");
        }
    }

    #[test]
    fn all_namespaces_elect_on_one_lease_in_the_operator_namespace() {
        let objects = docs(&render_args(&["manifests", "-n", "ops", "-A"]).unwrap());
        let command = &deployment_of(&objects)["spec"]["template"]["spec"]["containers"][0]["command"];
        let args: Vec<&str> = command.as_array().unwrap().iter().filter_map(Value::as_str).collect();
        assert!(
            args.windows(4)
                .any(|w| w == ["--lease-name", "microservice-operator", "--lease-namespace", "ops"]),
            "{args:?}"
        );
        let roles: Vec<&Value> = objects
            .iter()
            .filter(|o| o["kind"] == "Role" && o["metadata"]["name"] == LEASE_ROLE_NAME)
            .collect();
        assert_eq!(roles.len(), 1);
        assert_eq!(roles[0]["metadata"]["namespace"], "ops");
    }

    #[test]
    fn standalone_is_one_replica_recreated_without_lease_rights() {
        let objects = docs(&render_args(&["manifests", "-n", "ops", "-A", "--standalone"]).unwrap());
        let deployment = deployment_of(&objects);
        assert_eq!(deployment["spec"]["replicas"], 1);
        assert_eq!(deployment["spec"]["strategy"], json!({"type": "Recreate"}));
        let command = deployment["spec"]["template"]["spec"]["containers"][0]["command"]
            .as_array()
            .unwrap();
        assert!(command.contains(&json!("--standalone")));
        assert!(!command.contains(&json!("--lease-name")));
        assert!(!objects.iter().any(|o| o["metadata"]["name"] == LEASE_ROLE_NAME));
        let rules = all_rules(&objects);
        assert!(
            !rules
                .iter()
                .any(|r| r["apiGroups"] == json!(["coordination.k8s.io"]) && r["verbs"] != json!(["get", "list"])),
            "standalone needs no Lease writes (the diagnose role only reads leases)"
        );
    }

    #[test]
    fn probes_are_wired_to_the_health_endpoint() {
        for args in [
            &["manifests", "-n", "ops", "-A"][..],
            &["manifests", "-n", "ops", "-A", "--standalone"][..],
        ] {
            let objects = docs(&render_args(args).unwrap());
            let container = &deployment_of(&objects)["spec"]["template"]["spec"]["containers"][0];
            assert_eq!(container["ports"][0]["containerPort"], 8080);
            assert_eq!(container["ports"][0]["name"], "http");
            assert_eq!(
                container["livenessProbe"]["httpGet"],
                json!({"path": "/healthz", "port": "http"})
            );
            assert_eq!(
                container["readinessProbe"]["httpGet"],
                json!({"path": "/readyz", "port": "http"})
            );
            let command = container["command"].as_array().unwrap();
            let at = command.iter().position(|a| a == "--health-listen").unwrap();
            assert_eq!(command[at + 1], "0.0.0.0:8080");
        }
    }

    #[test]
    fn all_namespaces_uses_a_cluster_role() {
        let objects = docs(&render_args(&["manifests", "-n", "ops", "-A", "--events", "warnings"]).unwrap());
        assert!(
            objects
                .iter()
                .any(|o| o["kind"] == "ClusterRole" && o["metadata"]["name"] == OPERATOR_NAME)
        );
        let roles: Vec<&Value> = objects.iter().filter(|o| o["kind"] == "Role").collect();
        assert_eq!(roles.len(), 1, "only the Lease's Role");
        assert_eq!(roles[0]["metadata"]["name"], LEASE_ROLE_NAME);
        let deployment = objects.iter().find(|o| o["kind"] == "Deployment").unwrap();
        let command = deployment["spec"]["template"]["spec"]["containers"][0]["command"]
            .as_array()
            .unwrap();
        assert!(command.contains(&json!("--all-namespaces")) && command.contains(&json!("warnings")));
    }

    #[test]
    fn deployment_meets_restricted_pod_security() {
        let objects = docs(&render_args(&["manifests", "-n", "ops", "-A"]).unwrap());
        let pod = &objects.iter().find(|o| o["kind"] == "Deployment").unwrap()["spec"]["template"]["spec"];
        assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
        assert_eq!(pod["securityContext"]["seccompProfile"]["type"], "RuntimeDefault");
        let c = &pod["containers"][0]["securityContext"];
        assert_eq!(c["allowPrivilegeEscalation"], false);
        assert_eq!(c["readOnlyRootFilesystem"], true);
        assert_eq!(c["capabilities"]["drop"], json!(["ALL"]));
    }

    #[test]
    fn user_roles_exist_and_view_aggregates() {
        let objects = docs(&render_args(&["manifests", "-n", "ops", "-A"]).unwrap());
        let view = objects
            .iter()
            .find(|o| o["metadata"]["name"] == "microservice-view")
            .unwrap();
        assert_eq!(
            view["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-view"],
            "true"
        );
        assert!(objects.iter().any(|o| o["metadata"]["name"] == "microservice-diagnose"));
        assert_eq!(objects[0]["kind"], "CustomResourceDefinition");
    }

    /// `--without-shared` leaves out exactly the objects whose names do not depend on the
    /// operator's namespace (the CRD and the ClusterRoles), which two installations share, and
    /// keeps all of this one's (its ClusterRoleBindings too): uninstalling one team's operator
    /// with `kubectl delete -f -` then touches nothing of another's (issue 14 item 13).
    #[test]
    fn without_shared_leaves_out_what_installations_share() {
        let names = |args: &[&str]| -> Vec<(String, String)> {
            let list: Value = serde_json::from_str(&render_args(args).unwrap()).unwrap();
            list["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|o| {
                    (
                        o["kind"].as_str().unwrap().to_string(),
                        o["metadata"]["name"].as_str().unwrap().to_string(),
                    )
                })
                .collect()
        };
        for watch in [&["-A"][..], &["--watch-namespace", "todo,shop"]] {
            let base = [&["manifests", "-o", "json"][..], watch].concat();
            let all_a = names(&[&base[..], &["-n", "team-a"]].concat());
            let all_b = names(&[&base[..], &["-n", "team-b"]].concat());
            let own_a = names(&[&base[..], &["-n", "team-a", "--without-shared"]].concat());
            let shared: Vec<_> = all_a.iter().filter(|o| !own_a.contains(o)).cloned().collect();
            // Shared: the same objects in both installations, and only the CRD and ClusterRoles.
            assert!(shared.iter().all(|o| all_b.contains(o)), "{shared:?}");
            assert!(shared.contains(&("CustomResourceDefinition".into(), CRD_NAME.into())));
            assert!(
                shared
                    .iter()
                    .all(|(kind, _)| kind == "CustomResourceDefinition" || kind == "ClusterRole")
            );
            assert!(
                own_a
                    .iter()
                    .all(|(kind, _)| kind != "CustomResourceDefinition" && kind != "ClusterRole")
            );
            // Everything kept is this installation's own. Namespaced objects are told apart by
            // their namespace, so only cluster-scoped ones could collide: none does.
            assert!(
                own_a
                    .iter()
                    .filter(|(kind, _)| kind == "ClusterRoleBinding")
                    .all(|o| !all_b.contains(o))
            );
            assert!(own_a.iter().any(|(kind, _)| kind == "Deployment"));
        }
    }

    #[test]
    fn json_output_is_a_list() {
        let out = render_args(&["manifests", "-n", "ops", "-A", "-o", "json"]).unwrap();
        let list: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(list["kind"], "List");
        assert!(list["items"].as_array().unwrap().len() > 5);
    }

    #[test]
    fn bad_flags_are_usage_errors_naming_the_input() {
        for (args, needle) in [
            (&["manifests", "--watch-namespace", "todo"][..], "--namespace OPNS"),
            (&["manifests", "-n", "ops"][..], "--watch-namespace NS"),
            (
                &["manifests", "-n", "ops", "-n", "x", "--watch-namespace", "a"][..],
                "one --namespace",
            ),
            (
                &["manifests", "-n", "ops", "-A", "--image", "Not An Image"][..],
                "--image \"Not An Image\"",
            ),
            (
                &["manifests", "-n", "ops", "-A", "-o", "wide"][..],
                "-o wide has no meaning here; -o takes yaml, json, name",
            ),
        ] {
            let err = render_args(args).unwrap_err();
            assert_eq!(err.exit_code(), 2, "{args:?}");
            assert!(err.to_string().contains(needle), "{args:?}: {err}");
        }
        // Namespace names are refused while parsing (crate::names), naming flag and input.
        for (args, needle) in [
            (
                &["--watch-namespace", "Bad_NS"][..],
                "'Bad_NS' for '--watch-namespace <NS>'",
            ),
            (&["-n", "Ops", "-A"][..], "'Ops' for '--namespace <NS>'"),
        ] {
            let err =
                Cli::try_parse_from(["kubectl-microservice", "manifests", "-n", "ops"].iter().chain(args)).unwrap_err();
            assert_eq!(err.exit_code(), 2, "{args:?}");
            assert!(err.to_string().contains(needle), "{args:?}: {err}");
        }
    }
}
