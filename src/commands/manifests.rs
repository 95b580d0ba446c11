//! `kubectl microservice manifests`: the install model ([`crate::install`]) for the flags, as
//! YAML documents, a `v1` `List` (`-o json`), `-o name` lines or a jsonpath template.

use serde_json::{Value, json};

use crate::cli::{GlobalArgs, ManifestsArgs};
use crate::error::AppError;
use crate::install::{InstallPlan, is_shared, objects};
use crate::render::OutputFormat;
use crate::resource::IMAGE_PATTERN;

/// The install plan of the flags: exactly one `--namespace`, and `--watch-namespace` or `-A`
/// (not both), an OCI image reference (namespace names are checked while parsing,
/// [`crate::names`]). Errors name the flag (exit 2).
pub fn install_plan(global: &GlobalArgs, args: &ManifestsArgs) -> Result<InstallPlan, AppError> {
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
    Ok(InstallPlan {
        operator_namespace,
        watch,
        image: args.image.clone(),
        standalone: args.standalone,
        events: args.events.as_arg(),
    })
}

/// Renders the manifests as YAML documents (default) or, with `-o json`, one `v1` `List`;
/// `-o name` prints `KIND.GROUP/NAME` per object (as `kubectl apply --dry-run=client -o name`
/// would), `-o jsonpath=` evaluates over the `List`.
pub fn render(global: &GlobalArgs, args: &ManifestsArgs) -> Result<String, AppError> {
    let plan = install_plan(global, args)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use crate::install::{LEASE_ROLE_NAME, OPERATOR_NAME, operator_rules};
    use crate::resource::CRD_NAME;
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
