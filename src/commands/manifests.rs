//! `kubectl microservice manifests`: the install model ([`crate::install`]) for the flags, as
//! YAML documents, a `v1` `List` (`-o json`), `-o name` lines or a jsonpath template.
//!
//! The CRD is shared by every operator of the resource. When the CRD is printed (neither
//! `--without-crd` nor `--without-shared`) and a cluster is configured (the kubeconfig of the flags, or a Pod's
//! service account), `manifests` reads the cluster's CRD first ([`CLUSTER_TIMEOUT`] unless
//! `--request-timeout` says otherwise). When the cluster has it with another schema, the CRD
//! printed is the cluster's with ours added ([`crate::install::crd_merge`]): applying it removes
//! nothing the cluster's declares, and stderr says what it adds and what applying this tool's own
//! CRD would have removed. Without a cluster, or when the CRD cannot be read, this tool's CRD is
//! printed (the latter with a note saying why). The exit code is 0 either way.

use std::time::Duration;

use serde_json::{Value, json};

use crate::cli::{GlobalArgs, ManifestsArgs};
use crate::error::AppError;
use crate::install::crd_merge::{Merged, OverExisting, over_existing};
use crate::install::{InstallPlan, is_shared, objects};
use crate::render::OutputFormat;
use crate::resource::{CRD_NAME, IMAGE_PATTERN};

/// How long the cluster may take to answer for its CRD, unless `--request-timeout` is given:
/// `manifests` asks in passing, and should not hang on a dead cluster.
pub const CLUSTER_TIMEOUT: Duration = Duration::from_secs(5);

/// How many lines of each list a note shows before `... and N more`.
const NOTE_ITEMS: usize = 12;

/// The Microservice CRD as the cluster has it, as far as `manifests` could tell.
#[derive(Debug, Clone, PartialEq)]
pub enum ClusterCrd {
    /// Not asked: no cluster configured, or the CRD is not printed (`--without-crd`,
    /// `--without-shared`).
    NotAsked,
    /// The cluster has no such CRD.
    Absent,
    /// The cluster's CRD object, as the API server returned it.
    Present(Value),
    /// The cluster could not be asked (unreachable, forbidden, a kubeconfig that cannot be
    /// used): why, in one line.
    Unknown(String),
}

/// What `manifests` writes: the documents for stdout, the notes for stderr (one line each).
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    /// The manifests in the format of `-o`.
    pub stdout: String,
    /// `note: ...` lines.
    pub notes: Vec<String>,
}

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

/// Runs `manifests`: checks the flags, reads the cluster's CRD when it is printed and a cluster
/// is configured, writes the manifests to stdout and the notes to stderr.
pub fn run(global: &GlobalArgs, args: &ManifestsArgs) -> Result<(), AppError> {
    // Flags first: a usage error never waits for a cluster.
    install_plan(global, args)?;
    check_output(global)?;
    let cluster = if args.without_shared || args.without_crd || !crate::client::configured(&global.connection()) {
        ClusterCrd::NotAsked
    } else {
        let runtime = tokio::runtime::Runtime::new().map_err(|source| AppError::Io {
            context: "start the async runtime".into(),
            source,
        })?;
        runtime.block_on(cluster_crd(global))
    };
    let rendered = render(global, args, &cluster)?;
    super::write_stdout(&rendered.stdout)?;
    for line in &rendered.notes {
        super::say(line);
    }
    Ok(())
}

/// The cluster's CRD, read with the connection flags; never an error (what fails is said).
async fn cluster_crd(global: &GlobalArgs) -> ClusterCrd {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    let mut connection = global.connection();
    connection.request_timeout = Some(connection.request_timeout.unwrap_or(CLUSTER_TIMEOUT));
    let (client, config) = match crate::client::client(&connection, crate::client::Usage::Diagnostics).await {
        Ok(pair) => pair,
        Err(e) => return ClusterCrd::Unknown(e.to_string()),
    };
    let api: kube::Api<CustomResourceDefinition> = kube::Api::all(client);
    match api.get_opt(CRD_NAME).await {
        Ok(Some(crd)) => match serde_json::to_value(crd) {
            Ok(value) => ClusterCrd::Present(value),
            Err(e) => ClusterCrd::Unknown(format!("cannot read the CRD the API server returned: {e}")),
        },
        Ok(None) => ClusterCrd::Absent,
        Err(kube::Error::Api(status)) => ClusterCrd::Unknown(format!(
            "the API server refused: {} ({})",
            crate::text::sanitize(&status.message),
            status.reason
        )),
        Err(e) => ClusterCrd::Unknown(crate::client::unreachable(&connection, &config, e).to_string()),
    }
}

/// `-o wide` is refused: manifests are documents, not a table.
fn check_output(global: &GlobalArgs) -> Result<(), AppError> {
    match &global.output {
        Some(OutputFormat::Wide) => Err(AppError::Usage(format!(
            "manifests prints documents, not a table: -o wide has no meaning here; -o takes {}",
            crate::cli::scope::output_formats("manifests").unwrap_or_default()
        ))),
        _ => Ok(()),
    }
}

/// Renders the manifests as YAML documents (default) or, with `-o json`, one `v1` `List`;
/// `-o name` prints `KIND.GROUP/NAME` per object (as `kubectl apply --dry-run=client -o name`
/// would), `-o jsonpath=` evaluates over the `List`. The CRD is this tool's, or over the
/// cluster's (`cluster`) the merge of the two, or left out; the notes say which and why.
pub fn render(global: &GlobalArgs, args: &ManifestsArgs, cluster: &ClusterCrd) -> Result<Rendered, AppError> {
    let plan = install_plan(global, args)?;
    check_output(global)?;
    let mut objects = objects(&plan);
    let mut notes = Vec::new();
    if args.without_shared {
        objects.retain(|o| !is_shared(o));
    } else if args.without_crd {
        objects.retain(|o| o["kind"] != "CustomResourceDefinition");
    } else if let Some(at) = objects.iter().position(|o| o["kind"] == "CustomResourceDefinition") {
        match cluster {
            ClusterCrd::NotAsked | ClusterCrd::Absent => {}
            ClusterCrd::Unknown(why) => notes.push(format!(
                "note: printed this tool's CRD without comparing it with the cluster's ({why}); if the cluster has {CRD_NAME} already, check it first: kubectl get crd {CRD_NAME} -o yaml"
            )),
            ClusterCrd::Present(existing) => match over_existing(existing, &objects[at]) {
                OverExisting::Merged(merged) => {
                    notes.extend(merge_notes(&merged));
                    objects[at] = merged.crd;
                }
                OverExisting::LeftOut(why) => {
                    objects.remove(at);
                    notes.push(format!(
                        "note: left out the CRD {CRD_NAME}: {why}; the other objects are printed, and this tool's operator needs a namespaced kind Microservice served as {}",
                        crate::resource::API_VERSION
                    ));
                }
            },
        }
    }
    let list = json!({"apiVersion": "v1", "kind": "List", "items": objects});
    let stdout = match &global.output {
        None | Some(OutputFormat::Yaml) => objects
            .iter()
            .map(|o| format!("---\n{}", crate::yaml::to_string(o)))
            .collect(),
        Some(OutputFormat::Name) => objects
            .iter()
            .map(|o| {
                let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
                let api_version = text(&o["apiVersion"]);
                let group = api_version.rsplit_once('/').map_or("", |(group, _)| group);
                crate::render::name_line(&text(&o["kind"]), group, &text(&o["metadata"]["name"]))
            })
            .collect(),
        output => crate::render::document(&list, output.as_ref())?.unwrap_or_default(),
    };
    Ok(Rendered { stdout, notes })
}

/// The notes of a merge: nothing when the cluster's CRD is this tool's already; else what the
/// printed CRD adds and what this tool's own CRD would have removed, one item a line (at most
/// [`NOTE_ITEMS`] each); then what is left as the cluster has it.
fn merge_notes(merged: &Merged) -> Vec<String> {
    let mut notes = Vec::new();
    if !merged.adds.is_empty() || !merged.ours_would_remove.is_empty() {
        notes.push(format!(
            "note: the cluster has the CRD {CRD_NAME} with another schema: the CRD printed is the cluster's with this tool's added, so applying it removes nothing"
        ));
        for (items, what) in [
            (
                &merged.ours_would_remove,
                "applying this tool's own CRD instead would remove",
            ),
            (&merged.adds, "applying the printed CRD adds"),
        ] {
            if items.is_empty() {
                continue;
            }
            notes.push(format!("  {what} ({}):", items.len()));
            notes.extend(
                items
                    .iter()
                    .take(NOTE_ITEMS)
                    .map(|i| format!("    - {}", crate::text::sanitize(i))),
            );
            if items.len() > NOTE_ITEMS {
                notes.push(format!("    ... and {} more", items.len() - NOTE_ITEMS));
            }
        }
        notes.push(
            "  when other operators use this CRD, leave it to its owners: install with --without-crd instead (README, Run the operator)"
                .into(),
        );
    }
    notes.extend(
        merged
            .left_as_is
            .iter()
            .map(|l| format!("note: left as the cluster has it: {l}")),
    );
    notes
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
            Command::Manifests(m) => render(&cli.global, m, &ClusterCrd::NotAsked).map(|r| r.stdout),
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

    fn rendered(args: &[&str], cluster: &ClusterCrd) -> Rendered {
        let cli = Cli::try_parse_from(std::iter::once("kubectl-microservice").chain(args.iter().copied())).unwrap();
        match &cli.command {
            Command::Manifests(m) => render(&cli.global, m, cluster).unwrap(),
            _ => unreachable!(),
        }
    }

    /// A Kopf operator's CRD of the resource as the cluster returns it: spec and status open,
    /// its own printer column.
    fn kopf_crd() -> Value {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": CRD_NAME, "resourceVersion": "5"},
            "spec": {"group": "platform.example.io", "scope": "Namespaced",
                "names": {"plural": "microservices", "singular": "microservice", "kind": "Microservice", "listKind": "MicroserviceList"},
                "versions": [{"name": "v1alpha1", "served": true, "storage": true, "subresources": {"status": {}},
                    "additionalPrinterColumns": [{"name": "Handled", "type": "string", "jsonPath": ".status.accept.message"}],
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                        "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}]}
        })
    }

    fn crd_of(out: &Rendered) -> Option<Value> {
        docs(&out.stdout)
            .into_iter()
            .find(|o| o["kind"] == "CustomResourceDefinition")
    }

    #[test]
    fn over_the_clusters_crd_the_printed_one_removes_nothing_and_says_what_it_adds() {
        let args = ["manifests", "-n", "ops", "-A"];
        let out = rendered(&args, &ClusterCrd::Present(kopf_crd()));
        let crd = crd_of(&out).unwrap();
        let version = &crd["spec"]["versions"][0];
        assert_eq!(
            version["schema"]["openAPIV3Schema"]["properties"]["status"]["x-kubernetes-preserve-unknown-fields"],
            true
        );
        assert_eq!(version["additionalPrinterColumns"][0]["name"], "Handled");
        assert!(crd["metadata"].get("resourceVersion").is_none());
        let notes = out.notes.join("\n");
        assert!(
            notes.starts_with("note: the cluster has the CRD microservices.platform.example.io with another schema"),
            "{notes}"
        );
        assert!(notes.contains("applying this tool's own CRD instead would remove (2):\n    - version v1alpha1: .spec x-kubernetes-preserve-unknown-fields=true"), "{notes}");
        assert!(
            notes.contains("    - version v1alpha1: printer column Handled (.status.accept.message)"),
            "{notes}"
        );
        assert!(notes.contains("applying the printed CRD adds ("), "{notes}");
        assert!(notes.contains("install with --without-crd instead"), "{notes}");
        // The rest is what it would be without a cluster.
        let offline = rendered(&args, &ClusterCrd::NotAsked);
        assert!(offline.notes.is_empty());
        let others = |r: &Rendered| {
            docs(&r.stdout)
                .into_iter()
                .filter(|o| o["kind"] != "CustomResourceDefinition")
                .collect::<Vec<_>>()
        };
        assert_eq!(others(&out), others(&offline));
        assert_eq!(
            crd_of(&offline).unwrap(),
            serde_json::to_value(crate::resource::crd()).unwrap()
        );
    }

    #[test]
    fn our_own_crd_on_the_cluster_is_printed_without_a_note() {
        let ours = serde_json::to_value(crate::resource::crd()).unwrap();
        for cluster in [
            ClusterCrd::Present(ours.clone()),
            ClusterCrd::Absent,
            ClusterCrd::NotAsked,
        ] {
            let out = rendered(&["manifests", "-n", "ops", "-A"], &cluster);
            assert!(out.notes.is_empty(), "{cluster:?}: {:?}", out.notes);
            assert_eq!(crd_of(&out).unwrap(), ours);
        }
    }

    #[test]
    fn an_unreadable_cluster_crd_prints_ours_with_a_note() {
        let out = rendered(
            &["manifests", "-n", "ops", "-A"],
            &ClusterCrd::Unknown("the API server refused: forbidden (Forbidden)".into()),
        );
        assert_eq!(
            crd_of(&out).unwrap(),
            serde_json::to_value(crate::resource::crd()).unwrap()
        );
        assert_eq!(
            out.notes,
            [
                "note: printed this tool's CRD without comparing it with the cluster's (the API server refused: forbidden (Forbidden)); if the cluster has microservices.platform.example.io already, check it first: kubectl get crd microservices.platform.example.io -o yaml"
            ]
        );
    }

    #[test]
    fn a_crd_that_cannot_be_merged_is_left_out_saying_why() {
        let mut cluster_scoped = kopf_crd();
        cluster_scoped["spec"]["scope"] = json!("Cluster");
        let out = rendered(
            &["manifests", "-n", "ops", "-A", "-o", "name"],
            &ClusterCrd::Present(cluster_scoped),
        );
        assert!(!out.stdout.contains("customresourcedefinition"), "{}", out.stdout);
        assert!(out.stdout.contains("deployment.apps/microservice-operator"));
        assert_eq!(out.notes.len(), 1);
        assert!(out.notes[0].starts_with("note: left out the CRD microservices.platform.example.io: the cluster's CRD microservices.platform.example.io is Cluster, this tool's Namespaced"), "{}", out.notes[0]);
        // --without-shared prints no CRD, whatever the cluster has, and says nothing of it.
        let own = rendered(
            &["manifests", "-n", "ops", "-A", "--without-shared"],
            &ClusterCrd::Present(kopf_crd()),
        );
        assert!(crd_of(&own).is_none() && own.notes.is_empty());
    }

    /// `--without-crd` leaves out the CRD and nothing else: the install path where the cluster
    /// has the CRD already (the ClusterRoles this installation binds are printed, unlike with
    /// `--without-shared`).
    #[test]
    fn without_crd_leaves_out_only_the_crd() {
        for watch in [&["-A"][..], &["--watch-namespace", "todo"]] {
            let base = [&["manifests", "-n", "ops"][..], watch].concat();
            let all = docs(&rendered(&base, &ClusterCrd::NotAsked).stdout);
            let out = rendered(
                &[&base[..], &["--without-crd"]].concat(),
                &ClusterCrd::Present(kopf_crd()),
            );
            assert!(out.notes.is_empty());
            let without: Vec<Value> = all
                .into_iter()
                .filter(|o| o["kind"] != "CustomResourceDefinition")
                .collect();
            assert_eq!(docs(&out.stdout), without);
            assert!(without.iter().any(|o| o["kind"] == "ClusterRole"));
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
