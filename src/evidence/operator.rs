//! Finding the operator: which Deployment runs the controller for Microservices, what kind it is
//! (our `kubectl-microservice operate`, or a Kopf operator), and what it watches. Pure functions
//! over Deployments; the live side lists them.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Container;

use crate::kopf::peering::{self, PeeringMode};
use crate::vocab::lease::{LeasePlan, plan_leases};

/// Which implementation runs the handler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OperatorKind {
    /// `kubectl-microservice operate`.
    Ours,
    /// `kopf run` / `python -m kopf`.
    Kopf,
}

/// A Deployment recognised as a Microservice operator.
#[derive(Debug, Clone, PartialEq)]
pub struct OperatorRef {
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
    /// Our operator or Kopf.
    pub kind: OperatorKind,
    /// The container that runs it.
    pub container: String,
    /// Its ServiceAccount (`default` when unset).
    pub service_account: String,
    /// Namespaces it watches; `None` for all namespaces (or unknown: Kopf without `--namespace`
    /// serves the cluster).
    pub watches: Option<Vec<String>>,
    /// The container's command followed by its args.
    pub argv: Vec<String>,
    /// The container's literal environment (`value`, not `valueFrom`), in order.
    pub env: Vec<(String, String)>,
}

/// How an operator decides which of its replicas handles objects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Leadership {
    /// Ours with `--standalone`: every replica handles; no Lease.
    Standalone,
    /// Ours: the replica holding this `coordination.k8s.io/v1` Lease handles (see
    /// [`plan_leases`]: by default one Lease per watched namespace, in it).
    Lease {
        /// The Lease's namespace.
        namespace: String,
        /// The Lease's name.
        name: String,
    },
    /// Kopf: peering, or standalone ([`crate::kopf::peering`]).
    Kopf(PeeringMode),
}

impl OperatorRef {
    /// `NS/deployment/NAME`, the `--operator` syntax.
    pub fn display(&self) -> String {
        format!("{}/deployment/{}", self.namespace, self.name)
    }

    /// Whether it watches `namespace`.
    pub fn watches(&self, namespace: &str) -> bool {
        self.watches
            .as_ref()
            .is_none_or(|list| list.iter().any(|ns| ns == namespace))
    }

    /// The value of a `--flag value` / `--flag=value` in its argv (last one wins).
    pub fn flag(&self, long: &str) -> Option<&str> {
        flag_values(&self.argv, long, None).last().copied()
    }

    /// How it decides which of its replicas handles objects in `namespace`: from its argv (and,
    /// for Kopf, its environment). Ours elects on the Lease that governs `namespace`
    /// ([`plan_leases`]: by default one Lease in each watched namespace); when that namespace
    /// is not one it watches, the first of its Leases.
    pub fn leadership_in(&self, namespace: &str) -> Leadership {
        match self.kind {
            OperatorKind::Ours if self.argv.iter().any(|a| a == "--standalone") => Leadership::Standalone,
            OperatorKind::Ours => {
                let plans = self.lease_plans();
                let plan = plans.iter().find(|p| p.governs(namespace)).or(plans.first());
                match plan {
                    Some(plan) => Leadership::Lease {
                        namespace: plan.namespace.clone(),
                        name: plan.name.clone(),
                    },
                    // An operator watching no namespace at all elects on nothing.
                    None => Leadership::Standalone,
                }
            }
            OperatorKind::Kopf => Leadership::Kopf(peering::mode(&self.argv, &self.env, self.watches.is_none())),
        }
    }

    /// Every Lease ours elects on, from its argv ([`plan_leases`]; its own namespace is the
    /// Deployment's); empty for Kopf and for `--standalone`.
    pub fn lease_plans(&self) -> Vec<LeasePlan> {
        if self.kind != OperatorKind::Ours || self.argv.iter().any(|a| a == "--standalone") {
            return Vec::new();
        }
        plan_leases(
            self.watches.as_deref(),
            self.flag("--lease-namespace"),
            self.flag("--lease-name"),
            &self.namespace,
        )
    }

    /// How it decides who handles, for every namespace it serves: one entry per Lease of ours,
    /// else its one mode (Kopf, or `--standalone`).
    pub fn leadership_styles(&self) -> Vec<Leadership> {
        let plans = self.lease_plans();
        if plans.is_empty() {
            return vec![self.leadership_in(&self.namespace)];
        }
        plans
            .into_iter()
            .map(|p| Leadership::Lease {
                namespace: p.namespace,
                name: p.name,
            })
            .collect()
    }
}

/// Recognises the operator container of `deployment`, if any.
pub fn recognise(deployment: &Deployment) -> Option<OperatorRef> {
    let spec = deployment.spec.as_ref()?.template.spec.as_ref()?;
    spec.containers.iter().find_map(|container| {
        let kind = container_kind(container)?;
        let argv: Vec<String> = container
            .command
            .iter()
            .flatten()
            .chain(container.args.iter().flatten())
            .cloned()
            .collect();
        let watches = watched_namespaces(&argv);
        Some(OperatorRef {
            namespace: deployment.metadata.namespace.clone().unwrap_or_default(),
            name: deployment.metadata.name.clone().unwrap_or_default(),
            kind,
            container: container.name.clone(),
            service_account: spec
                .service_account_name
                .clone()
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "default".into()),
            watches,
            argv,
            env: container
                .env
                .iter()
                .flatten()
                .filter_map(|e| Some((e.name.clone(), e.value.clone()?)))
                .collect(),
        })
    })
}

/// Finds every operator among `deployments`.
pub fn find_operators(deployments: &[Deployment]) -> Vec<OperatorRef> {
    deployments.iter().filter_map(recognise).collect()
}

fn container_kind(container: &Container) -> Option<OperatorKind> {
    let argv: Vec<&str> = container
        .command
        .iter()
        .flatten()
        .chain(container.args.iter().flatten())
        .map(String::as_str)
        .collect();
    let base = |s: &str| s.rsplit('/').next().unwrap_or(s).to_string();
    let words: Vec<String> = argv.iter().map(|s| base(s)).collect();
    let has_pair = |a: &str, b: &str| words.windows(2).any(|w| w[0] == a && w[1] == b);
    if words.iter().any(|w| w == "kubectl-microservice") && words.iter().any(|w| w == "operate") {
        return Some(OperatorKind::Ours);
    }
    if has_pair("kopf", "run") || has_pair("-m", "kopf") {
        return Some(OperatorKind::Kopf);
    }
    // An image of ours with the default entrypoint (`operate`).
    let (repository, _, _) = split_image(container.image.as_deref().unwrap_or(""));
    if repository.rsplit('/').next() == Some("kubectl-microservice")
        && (argv.is_empty() || words.iter().any(|w| w == "operate"))
    {
        return Some(OperatorKind::Ours);
    }
    None
}

/// An image reference's parts: repository (with any registry and port), tag, digest —
/// `localhost:5000/x/op:0.1.0@sha256:ab` → (`localhost:5000/x/op`, `0.1.0`, `sha256:ab`).
pub fn split_image(image: &str) -> (&str, Option<&str>, Option<&str>) {
    let (name, digest) = match image.split_once('@') {
        Some((name, digest)) => (name, Some(digest)),
        None => (image, None),
    };
    // A ':' after the last '/' starts the tag; before it, it is a registry's port.
    match name.rsplit_once(':').filter(|(_, tag)| !tag.contains('/')) {
        Some((repository, tag)) => (repository, Some(tag), digest),
        None => (name, None, digest),
    }
}

/// Values of a long flag in argv: `--flag value`, `--flag=value`, and `-x value` when `short` is set.
fn flag_values<'a>(argv: &'a [String], long: &str, short: Option<&str>) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut iter = argv.iter();
    while let Some(arg) = iter.next() {
        if let Some(value) = arg.strip_prefix(long).and_then(|rest| rest.strip_prefix('=')) {
            out.push(value);
        } else if (arg == long || short == Some(arg.as_str()))
            && let Some(value) = iter.next()
        {
            out.push(value.as_str());
        }
    }
    out
}

/// Namespaces from `--namespace`/`-n` (repeatable, comma-separated for ours); `None` when
/// `--all-namespaces`/`-A` or no namespace flag is given (both Kopf and ours then serve every
/// namespace they can see — ours defaults to its own namespace in a Pod, which we cannot tell
/// here, so "all" is the conservative reading).
fn watched_namespaces(argv: &[String]) -> Option<Vec<String>> {
    if argv.iter().any(|a| a == "-A" || a == "--all-namespaces") {
        return None;
    }
    let list: Vec<String> = flag_values(argv, "--namespace", Some("-n"))
        .into_iter()
        .flat_map(|v| v.split(','))
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    (!list.is_empty()).then_some(list)
}

/// An operator seen but not collected: it does not serve the namespace asked about, so its Pods,
/// logs and RBAC stay out of the evidence (other teams' data); only what it is and watches is
/// kept (a bundle's `meta.json` `otherOperators`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OperatorSummary {
    /// `NS/deployment/NAME`.
    pub operator: String,
    /// Ours or Kopf.
    pub kind: OperatorKind,
    /// The namespaces it watches; `None` for all.
    pub watches: Option<Vec<String>>,
}

impl OperatorSummary {
    /// The summary of a recognised operator.
    pub fn of(op: &OperatorRef) -> Self {
        OperatorSummary {
            operator: op.display(),
            kind: op.kind,
            watches: op.watches.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::lease::DEFAULT_LEASE_NAME;
    use serde_json::json;

    fn deployment(container: serde_json::Value) -> Deployment {
        serde_json::from_value(json!({
            "metadata": {"name": "op", "namespace": "ops"},
            "spec": {"selector": {}, "template": {"spec": {"serviceAccountName": "op-sa", "containers": [container]}}}
        }))
        .unwrap()
    }

    #[test]
    fn recognises_the_real_kopf_deployment() {
        let raw = include_str!("../../tests/fixtures/bundles/healthy/operator/deployment.json");
        let d: Deployment = serde_json::from_str(raw).unwrap();
        let op = recognise(&d).unwrap();
        assert_eq!(op.kind, OperatorKind::Kopf);
        assert_eq!(op.display(), "store/deployment/catalog-operator");
        assert_eq!(op.service_account, "catalog-operator");
        assert_eq!(op.watches, Some(vec!["store".to_string()]));
        assert!(op.watches("store") && !op.watches("todo"));
    }

    #[test]
    fn recognises_ours_and_reads_its_flags() {
        let raw = include_str!("../../tests/fixtures/bundles/ours-style-rbac/operator/deployment.json");
        let d: Deployment = serde_json::from_str(raw).unwrap();
        let op = recognise(&d).unwrap();
        assert_eq!(op.kind, OperatorKind::Ours);
        assert_eq!(op.flag("--events"), Some("all"));
        assert_eq!(op.watches, Some(vec!["store".to_string()]));
        assert_eq!(
            op.leadership_in("store"),
            Leadership::Lease {
                namespace: "store".into(),
                name: DEFAULT_LEASE_NAME.into()
            }
        );
    }

    #[test]
    fn ours_elects_on_a_lease_in_each_watched_namespace_unless_one_is_named() {
        let per_namespace = deployment(
            json!({"name": "c", "image": "x", "command": ["kubectl-microservice", "operate", "--namespace", "a", "--namespace=b"]}),
        );
        let op = recognise(&per_namespace).unwrap();
        let lease = |ns: &str| Leadership::Lease {
            namespace: ns.into(),
            name: DEFAULT_LEASE_NAME.into(),
        };
        assert_eq!(op.leadership_in("a"), lease("a"));
        assert_eq!(op.leadership_in("b"), lease("b"));
        assert_eq!(op.leadership_styles(), [lease("a"), lease("b")]);
        let named = deployment(
            json!({"name": "c", "image": "x", "command": ["kubectl-microservice", "operate", "-n", "a,b", "--lease-namespace", "ops"]}),
        );
        let op = recognise(&named).unwrap();
        assert_eq!(op.leadership_in("b"), lease("ops"));
        assert_eq!(op.leadership_styles(), [lease("ops")]);
    }

    #[test]
    fn leadership_from_the_command_line() {
        let real_kopf: Deployment = serde_json::from_str(include_str!(
            "../../tests/fixtures/bundles/healthy/operator/deployment.json"
        ))
        .unwrap();
        assert_eq!(
            recognise(&real_kopf).unwrap().leadership_in("todo"),
            Leadership::Kopf(PeeringMode::Standalone)
        );
        let ours = deployment(
            json!({"name": "c", "image": "x", "command": ["kubectl-microservice", "operate", "--lease-name=ops-lock", "--lease-namespace", "ops"]}),
        );
        assert_eq!(
            recognise(&ours).unwrap().leadership_in("todo"),
            Leadership::Lease {
                namespace: "ops".into(),
                name: "ops-lock".into()
            }
        );
        let standalone =
            deployment(json!({"name": "c", "image": "x", "args": ["kubectl-microservice", "operate", "--standalone"]}));
        assert_eq!(
            recognise(&standalone).unwrap().leadership_in("todo"),
            Leadership::Standalone
        );
        let peered = deployment(
            json!({"name": "c", "image": "python", "command": ["kopf", "run", "op.py"],
            "env": [{"name": "KOPF_RUN_PEERING", "value": "team"}, {"name": "POD_ID", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]}),
        );
        assert_eq!(
            recognise(&peered).unwrap().leadership_in("todo"),
            Leadership::Kopf(PeeringMode::Peering {
                name: "team".into(),
                mandatory: true,
                clusterwide: true,
                priority: 0
            })
        );
    }

    #[test]
    fn command_shapes() {
        let python = deployment(
            json!({"name": "c", "image": "python:3.11", "command": ["python", "-m", "kopf", "run", "-A", "op.py"]}),
        );
        let op = recognise(&python).unwrap();
        assert_eq!((op.kind, op.watches.clone()), (OperatorKind::Kopf, None));
        let ours = deployment(
            json!({"name": "c", "image": "x", "command": ["/usr/local/bin/kubectl-microservice"], "args": ["operate", "-n", "a,b", "--namespace=c"]}),
        );
        assert_eq!(
            recognise(&ours).unwrap().watches,
            Some(vec!["a".into(), "b".into(), "c".into()])
        );
        let image_only =
            deployment(json!({"name": "c", "image": "ghcr.io/platform-example/kubectl-microservice:0.1.0"}));
        assert_eq!(recognise(&image_only).unwrap().kind, OperatorKind::Ours);
        let unrelated = deployment(json!({"name": "c", "image": "nginx", "command": ["nginx"]}));
        assert!(recognise(&unrelated).is_none());
    }
}
