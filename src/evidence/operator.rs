//! Finding the operator: which Deployment runs the controller for Microservices, what kind it is
//! (our `kubectl-microservice operate`, or a Kopf operator), and what it watches. Pure functions
//! over Deployments; the live side lists them.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Container, Pod};

use super::command::{CommandLine, Entrypoint, PodFacts};
use crate::logs::{Format, LogSource};

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
    /// The container's effective command line's known words, `$(VAR)` expanded
    /// ([`CommandLine::argv`]: without the image's ENTRYPOINT when it runs that).
    pub argv: Vec<String>,
    /// The container's environment as far as the evidence gives it (`value`, `$(VAR)`
    /// expanded, `fieldRef`, ConfigMaps in evidence), by name.
    pub env: Vec<(String, String)>,
    /// The effective command line, with its gaps (`$(VAR)`s that stayed literal).
    pub command: CommandLine,
    /// How its kind was told.
    pub kind_by: KindBy,
    /// How what it watches was told.
    pub scope_by: ScopeBy,
    /// The Deployment's `spec.replicas` (`None`: unset, which is 1).
    pub replicas: Option<i32>,
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
    /// Whether the Deployment is scaled to 0 (`spec.replicas: 0`): an operator that runs no Pod
    /// by its owner's choice, a fact (maybe the cause), never a gap.
    pub fn scaled_to_zero(&self) -> bool {
        self.replicas == Some(0)
    }

    /// What it watches in words, for evidence: `todo`, `a,b`, `all namespaces`, or `unknown
    /// (WHY)`.
    pub fn watch_text(&self) -> String {
        match (&self.watches, &self.scope_by) {
            (_, ScopeBy::Unknown(why)) => format!("unknown ({why})"),
            (None, _) => "all namespaces".into(),
            (Some(list), _) if list.is_empty() => "no namespace".into(),
            (Some(list), _) => list.join(","),
        }
    }

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

/// What else the evidence holds about a Deployment's Pods, for [`recognise_with`]: its Pods
/// (for `fieldRef`s of `$(VAR)`s), the ConfigMaps in evidence (`configMapKeyRef`, `envFrom`),
/// the logs in evidence (a Pod's log in Kopf's or our format tells its kind), and the
/// `--operator` named (`NS/deployment/NAME`: that Deployment is the operator, whatever it runs).
#[derive(Debug, Clone, Copy, Default)]
pub struct Hints<'a> {
    /// Pods in evidence (those of other Deployments are ignored).
    pub pods: &'a [Pod],
    /// ConfigMaps in evidence.
    pub configmaps: &'a [ConfigMap],
    /// Logs in evidence (those of other Deployments' Pods are ignored).
    pub logs: &'a [LogSource],
    /// `--operator` as given.
    pub chosen: Option<&'a str>,
}

/// Recognises the operator container of `deployment`, if any, from the Deployment alone
/// ([`recognise_with`] without other evidence).
pub fn recognise(deployment: &Deployment) -> Option<OperatorRef> {
    recognise_with(deployment, &Hints::default())
}

/// Recognises the operator container of `deployment` as Kubernetes runs it: each container's
/// effective command line ([`CommandLine`]: `$(VAR)` expanded, over the image's entrypoint),
/// its kind ([`KindBy`]: the command line, `args` beginning `run` after the image's entrypoint,
/// an image or env naming Kopf, its Pods' log format, or `--operator` naming it), then what it
/// watches ([`ScopeBy`]). `None`: no container runs an operator and `--operator` does not name
/// it.
pub fn recognise_with(deployment: &Deployment, hints: &Hints<'_>) -> Option<OperatorRef> {
    let namespace = deployment.metadata.namespace.clone().unwrap_or_default();
    let name = deployment.metadata.name.clone().unwrap_or_default();
    let template = &deployment.spec.as_ref()?.template;
    let spec = template.spec.as_ref()?;
    let pods = pods_of(deployment, hints.pods);
    let pod = pods
        .first()
        .map(|p| PodFacts::of_pod(p))
        .unwrap_or_else(|| PodFacts::of_template(Some(&namespace), template));
    let logs_of = |container: &str| -> Vec<&LogSource> {
        hints
            .logs
            .iter()
            .filter(|l| {
                l.container == container
                    && (pods.iter().any(|p| p.metadata.name.as_deref() == Some(l.pod.as_str()))
                        || (pods.is_empty() && l.pod.starts_with(&format!("{name}-"))))
            })
            .collect()
    };
    let lines: Vec<(&Container, CommandLine)> = spec
        .containers
        .iter()
        .map(|c| (c, CommandLine::of(c, &pod, hints.configmaps)))
        .collect();
    let named = hints.chosen == Some(format!("{namespace}/deployment/{name}").as_str());
    let found = lines
        .iter()
        .find_map(|(c, line)| container_kind(c, line, &logs_of(&c.name)).map(|k| (c, line, k)))
        .or_else(|| {
            // Named by --operator: its one container (else the first), its kind by its image
            // (ours), else Kopf, the one other implementation of the Microservice operator.
            let (c, line) = lines.first()?;
            named.then_some((c, line, (OperatorKind::Kopf, KindBy::Named)))
        });
    let (_, line, (kind, kind_by)) = found?;
    let (watches, scope_by) = watched_namespaces(kind, line);
    Some(OperatorRef {
        namespace,
        name,
        kind,
        container: line.container.clone(),
        service_account: spec
            .service_account_name
            .clone()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "default".into()),
        watches,
        argv: line.argv.clone(),
        env: line
            .env
            .vars
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), v.clone()?)))
            .collect(),
        command: line.clone(),
        kind_by,
        scope_by,
        replicas: deployment.spec.as_ref().and_then(|s| s.replicas),
    })
}

/// The resources a Kopf operator's handlers serve, by its Python source (the `.py` keys of the
/// ConfigMaps in `configmaps` that `deployment` mounts; [`crate::kopf::source::handlers`]): each
/// resource handler's names as written (`platform.example.io v1alpha1 microservices`), and
/// whether any handler's resource may be `target` ([`crate::kopf::filters::resource_selects`]:
/// yes, or not decidable). `None` when no source is in evidence, a file does not parse, or a
/// resource is not a literal: then nothing is known of what it handles.
pub fn handled_resources(
    deployment: &Deployment,
    configmaps: &[ConfigMap],
    target: &crate::kopf::filters::Target,
) -> Option<(Vec<String>, bool)> {
    use crate::kopf::source::handlers::{self, Static};
    let sources = crate::kopf::source::mounted_sources(deployment, configmaps);
    if sources.is_empty() {
        return None;
    }
    let mut resources = Vec::new();
    let mut any_selects = false;
    for (file, text) in &sources {
        let module = crate::kopf::source::Module::parse(file, text).ok()?;
        for handler in handlers::read(&module).handlers {
            let Some(r) = handler.resource else { continue };
            any_selects |= crate::kopf::filters::resource_selects(&r, target) != Some(false);
            let words: Vec<&Static> = r
                .positional
                .iter()
                .chain(r.plural.iter())
                .chain(r.kind.iter())
                .collect();
            let mut names = Vec::new();
            for w in words {
                match w {
                    Static::Str(s) => names.push(s.clone()),
                    _ => return None,
                }
            }
            resources.push(names.join(" "));
        }
    }
    Some((resources, any_selects))
}

/// The Pods in `pods` of `deployment`: in its namespace, selected by its `spec.selector`.
fn pods_of<'p>(deployment: &Deployment, pods: &'p [Pod]) -> Vec<&'p Pod> {
    use kube::core::{Selector, SelectorExt};
    let selector = deployment
        .spec
        .as_ref()
        .and_then(|s| Selector::try_from(s.selector.clone()).ok());
    pods.iter()
        .filter(|p| {
            p.metadata.namespace == deployment.metadata.namespace
                && selector
                    .as_ref()
                    .is_some_and(|s| s.matches(&p.metadata.labels.clone().unwrap_or_default()))
        })
        .collect()
}

/// Finds every operator among `deployments`.
pub fn find_operators(deployments: &[Deployment]) -> Vec<OperatorRef> {
    deployments.iter().filter_map(recognise).collect()
}

/// Finds every operator among `deployments`, with what else the evidence holds ([`Hints`]).
pub fn find_operators_with(deployments: &[Deployment], hints: &Hints<'_>) -> Vec<OperatorRef> {
    deployments.iter().filter_map(|d| recognise_with(d, hints)).collect()
}

/// How the kind of an operator was told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KindBy {
    /// Its command line: `kubectl-microservice operate`, `kopf run`, `python -m kopf`.
    CommandLine,
    /// `args` beginning `run` after the image's entrypoint (Kopf's `kopf run` with `kopf` as the
    /// image's ENTRYPOINT).
    ArgsRun,
    /// Its image: ours (`.../kubectl-microservice`), or one whose name says Kopf.
    Image,
    /// Its env: a `KOPF_*` variable.
    Env,
    /// Its Pods' logs: most records in Kopf's (or our) format.
    Logs,
    /// `--operator` names it and nothing else tells: assumed Kopf.
    Named,
}

impl KindBy {
    /// In words, for evidence: `its Pods' logs are in Kopf's format`.
    pub fn describe(self) -> &'static str {
        match self {
            KindBy::CommandLine => "its command line",
            KindBy::ArgsRun => "its args begin `run` after the image's ENTRYPOINT (`kopf run`)",
            KindBy::Image => "its image's name",
            KindBy::Env => "its env (KOPF_* variables)",
            KindBy::Logs => "its Pods' log format",
            KindBy::Named => "--operator names it; nothing else tells its kind, so it is read as Kopf",
        }
    }
}

/// How what an operator watches was told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScopeBy {
    /// Its `--namespace`/`-n`/`--all-namespaces`/`-A` flags.
    Flags,
    /// No scope flag in a known command line: Kopf then serves the cluster (with a warning),
    /// ours every namespace it can list.
    NoFlag,
    /// The command line does not say: it is the image's (not in evidence), or a namespace flag
    /// holds a `$(VAR)` that stayed literal (the reason, in words).
    Unknown(String),
}

fn container_kind(container: &Container, line: &CommandLine, logs: &[&LogSource]) -> Option<(OperatorKind, KindBy)> {
    let base = |s: &str| s.rsplit('/').next().unwrap_or(s).to_string();
    let words: Vec<String> = line.argv.iter().map(|s| base(s)).collect();
    let has_pair = |a: &str, b: &str| words.windows(2).any(|w| w[0] == a && w[1] == b);
    if words.iter().any(|w| w == "kubectl-microservice") && words.iter().any(|w| w == "operate") {
        return Some((OperatorKind::Ours, KindBy::CommandLine));
    }
    if has_pair("kopf", "run") || has_pair("-m", "kopf") {
        return Some((OperatorKind::Kopf, KindBy::CommandLine));
    }
    let from_image = line.entrypoint != Entrypoint::Command;
    // An image of ours with the default entrypoint (`operate`).
    let (repository, _, _) = split_image(container.image.as_deref().unwrap_or(""));
    let image_name = repository.rsplit('/').next().unwrap_or("");
    if image_name == "kubectl-microservice" && (from_image || words.iter().any(|w| w == "operate")) {
        return Some((OperatorKind::Ours, KindBy::Image));
    }
    if from_image && line.argv.first().map(String::as_str) == Some("run") {
        return Some((OperatorKind::Kopf, KindBy::ArgsRun));
    }
    if !from_image {
        // Its own command runs something else.
        return None;
    }
    if repository.to_ascii_lowercase().contains("kopf") {
        return Some((OperatorKind::Kopf, KindBy::Image));
    }
    if container.env.iter().flatten().any(|e| e.name.starts_with("KOPF_")) {
        return Some((OperatorKind::Kopf, KindBy::Env));
    }
    let (mut ours, mut kopf) = (0usize, 0usize);
    for log in logs {
        for record in log.records() {
            match record.format {
                Format::OursText | Format::OursJson => ours += 1,
                Format::KopfFull | Format::KopfPlain | Format::KopfJson => kopf += 1,
                Format::Unmatched | Format::Crash => {}
            }
        }
    }
    match (ours, kopf) {
        (0, 0) => None,
        (o, k) if o > k => Some((OperatorKind::Ours, KindBy::Logs)),
        _ => Some((OperatorKind::Kopf, KindBy::Logs)),
    }
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

/// What `line` (of an operator of `kind`) watches: the namespaces of `--namespace`/`-n`
/// (repeatable, comma-separated for ours), `None` for all with `--all-namespaces`/`-A` or no
/// namespace flag in a known command line (Kopf then serves the cluster, ours every namespace
/// it can list — ours defaults to its own namespace in a Pod, which we cannot tell here, so
/// "all" is the conservative reading). `None` too when the command line does not say (the
/// image's, or a `$(VAR)` that stayed literal in a namespace flag): [`ScopeBy::Unknown`], a
/// candidate everywhere, ranked by the evidence ([`super::resolve`]).
fn watched_namespaces(kind: OperatorKind, line: &CommandLine) -> (Option<Vec<String>>, ScopeBy) {
    let argv = &line.argv;
    if argv.iter().any(|a| a == "-A" || a == "--all-namespaces") {
        return (None, ScopeBy::Flags);
    }
    let list: Vec<String> = flag_values(argv, "--namespace", Some("-n"))
        .into_iter()
        .flat_map(|v| v.split(','))
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    if let Some(literal) = list.iter().find(|ns| ns.contains("$(")) {
        let why = line
            .gaps
            .iter()
            .find(|g| literal.contains(g.split(' ').next().unwrap_or("")))
            .cloned()
            .unwrap_or_else(|| format!("{literal} stayed literal"));
        return (None, ScopeBy::Unknown(format!("its --namespace is {literal}: {why}")));
    }
    if !list.is_empty() {
        return (Some(list), ScopeBy::Flags);
    }
    match (line.entrypoint, kind) {
        (Entrypoint::Image, _) => (
            None,
            ScopeBy::Unknown(format!(
                "its command line is the image's ({}), not in evidence",
                line.image
            )),
        ),
        // Ours from its image with args: `operate` is the entrypoint, its flags are the args.
        _ => (None, ScopeBy::NoFlag),
    }
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

    /// Issue 18: the operator as Kubernetes runs it. The chart shape (`args` only, the
    /// namespace from a `fieldRef`): Kopf by `args` beginning `run`, watching the expanded
    /// namespace, never `$(NAMESPACE)`.
    #[test]
    fn args_over_the_images_entrypoint_with_the_namespace_from_a_field_ref() {
        let chart = deployment(json!({"name": "operator", "image": "registry.example/team-a/op:1.0",
            "args": ["run", "--standalone", "--namespace=$(NAMESPACE)", "/operator/operator.py"],
            "env": [{"name": "NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}]}));
        let op = recognise(&chart).unwrap();
        assert_eq!((op.kind, op.kind_by), (OperatorKind::Kopf, KindBy::ArgsRun));
        assert_eq!(op.watches, Some(vec!["ops".to_string()]));
        assert_eq!(op.scope_by, ScopeBy::Flags);
        assert_eq!(op.leadership_in("ops"), Leadership::Kopf(PeeringMode::Standalone));
        // From a Secret: the reference stays literal, and the scope is unknown (a candidate
        // everywhere), never "watches $(NAMESPACE)".
        let secret = deployment(json!({"name": "operator", "image": "registry.example/team-a/op:1.0",
            "args": ["run", "--namespace=$(NAMESPACE)", "/operator/operator.py"],
            "env": [{"name": "NAMESPACE", "valueFrom": {"secretKeyRef": {"name": "op", "key": "ns"}}}]}));
        let op = recognise(&secret).unwrap();
        assert_eq!(op.watches, None);
        assert!(op.watches("anything"));
        assert!(
            matches!(&op.scope_by, ScopeBy::Unknown(why) if why.contains("$(NAMESPACE)") && why.contains("Secrets are never read")),
            "{:?}",
            op.scope_by
        );
        assert!(op.watch_text().starts_with("unknown ("), "{}", op.watch_text());
    }

    /// Kopf's docs' Deployment: no `command`, no `args`; Kopf by its image's name, or its env,
    /// or its Pods' log format; what it watches is unknown.
    #[test]
    fn the_images_command_line_is_kopf_by_image_env_or_logs() {
        let docs = deployment(json!({"name": "the-only-one", "image": "nolar/kopf-operator"}));
        let op = recognise(&docs).unwrap();
        assert_eq!(
            (op.kind, op.kind_by, op.container.as_str()),
            (OperatorKind::Kopf, KindBy::Image, "the-only-one")
        );
        assert!(matches!(op.scope_by, ScopeBy::Unknown(_)));
        let env = deployment(
            json!({"name": "c", "image": "registry.example/op:1", "env": [{"name": "KOPF_RUN_PEERING", "value": "x"}]}),
        );
        assert_eq!(recognise(&env).unwrap().kind_by, KindBy::Env);
        let plain = deployment(json!({"name": "c", "image": "registry.example/op:1"}));
        assert!(recognise(&plain).is_none(), "nothing says it is an operator");
        let log = LogSource {
            pod: "op-5d7f9c-x2x".into(),
            container: "c".into(),
            previous: false,
            text: "[2026-11-29 17:11:55,980] kopf.objects         [INFO    ] [store/catalog-api] Handler 'accept' succeeded.\n".into(),
        };
        let hints = Hints {
            logs: std::slice::from_ref(&log),
            ..Hints::default()
        };
        let op = recognise_with(&plain, &hints).unwrap();
        assert_eq!((op.kind, op.kind_by), (OperatorKind::Kopf, KindBy::Logs));
        // A log of another Deployment's Pod tells nothing.
        let other = LogSource {
            pod: "another-5d7f9c-x2x".into(),
            ..log
        };
        assert!(
            recognise_with(
                &plain,
                &Hints {
                    logs: std::slice::from_ref(&other),
                    ..Hints::default()
                }
            )
            .is_none()
        );
        // Its own command that runs something else is no operator, whatever the image says.
        let nginx = deployment(json!({"name": "c", "image": "kopf-lookalike/nginx", "command": ["nginx"]}));
        assert!(recognise(&nginx).is_none());
    }

    /// `--operator` names any Deployment that exists: it is diagnosed with what is known.
    #[test]
    fn a_deployment_named_by_the_flag_is_the_operator_whatever_it_runs() {
        let plain = deployment(json!({"name": "c", "image": "registry.example/op:1"}));
        let named = Hints {
            chosen: Some("ops/deployment/op"),
            ..Hints::default()
        };
        let op = recognise_with(&plain, &named).unwrap();
        assert_eq!(
            (op.kind, op.kind_by, op.container.as_str()),
            (OperatorKind::Kopf, KindBy::Named, "c")
        );
        assert!(KindBy::Named.describe().contains("--operator"));
        let elsewhere = Hints {
            chosen: Some("ops/deployment/other"),
            ..Hints::default()
        };
        assert!(recognise_with(&plain, &elsewhere).is_none());
    }

    #[test]
    fn replicas_zero_is_scaled_to_zero() {
        let mut d = deployment(json!({"name": "c", "image": "x", "command": ["kopf", "run", "-A", "op.py"]}));
        assert!(!recognise(&d).unwrap().scaled_to_zero());
        d.spec.as_mut().unwrap().replicas = Some(0);
        assert!(recognise(&d).unwrap().scaled_to_zero());
    }
}
