//! What the operator checks share about the operator that serves the object: which case it is
//! ([`served`]: a Deployment, a process outside the cluster, none found, none serving), the
//! Deployment's Pods and whether its container runs ([`Replicas`]), the Lease holder whose log
//! was given, and the install line for a namespace without an operator.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;

use super::Ctx;
use crate::evidence::operator::OperatorRef;
use crate::evidence::resolve::Verdict as Resolved;

/// Which operator the operator checks are about.
pub(crate) enum Served<'c> {
    /// The Deployment diagnosed ([`Ctx::operator`]).
    Deployment(&'c OperatorRef),
    /// A process outside the cluster (a laptop `operate`) serves, and no Deployment of ours does.
    Process,
    /// No operator Deployment for Microservices is in evidence.
    NotFound,
    /// Operators are in evidence, and none serves the object's namespace.
    NoneServes,
    /// The operators could not be read, or several serve alike (a gap says which): nothing is
    /// said about any of them.
    Undecided,
}

/// The case the object's operator is.
pub(crate) fn served<'c>(ctx: &'c Ctx<'_>) -> Served<'c> {
    let resolution = ctx.resolution();
    match (&ctx.operator, resolution.verdict) {
        (Some(op), _) => Served::Deployment(op),
        (None, Resolved::Unknown | Resolved::Ambiguous) => Served::Undecided,
        (None, Resolved::Process) => Served::Process,
        (None, _) if resolution.candidates.is_empty() => Served::NotFound,
        (None, _) => Served::NoneServes,
    }
}

/// The diagnosed Deployment's Pods, and which of them run its operator container.
pub(crate) struct Replicas<'c> {
    /// The Deployment's Pods ([`selected`]).
    pub(crate) mine: Vec<&'c Pod>,
    /// The names of those whose operator container is running.
    pub(crate) running: Vec<String>,
    /// The Deployment's `status.readyReplicas`.
    pub(crate) ready_replicas: i32,
}

impl<'c> Replicas<'c> {
    /// The Pods in evidence of `op`'s Deployment.
    pub(crate) fn of(ctx: &'c Ctx<'_>, op: &OperatorRef) -> Replicas<'c> {
        let pods = ctx.snapshot.operator.pods.get().map(Vec::as_slice).unwrap_or(&[]);
        let mine: Vec<&Pod> = pods.iter().filter(|p| selected(ctx.deployment, p)).collect();
        let running = mine
            .iter()
            .filter(|p| container_running(p, &op.container))
            .filter_map(|p| p.metadata.name.clone())
            .collect();
        let ready_replicas = ctx
            .deployment
            .and_then(|d| d.status.as_ref())
            .and_then(|s| s.ready_replicas)
            .unwrap_or(0);
        Replicas {
            mine,
            running,
            ready_replicas,
        }
    }
}

/// The Lease holder whose own log was given (`--log-file`, or a bundle's `.file.log`): the
/// resolver matched its `Became the leader ... identity=` line to the Lease's `holderIdentity`.
pub(crate) fn given_holder<'a>(ctx: &'a Ctx<'_>) -> Option<&'a str> {
    let process = ctx.resolution().process.as_ref()?;
    process.log.as_ref()?;
    process.holder.as_deref()
}

/// [`install_command`] given the Deployments in evidence.
pub(crate) fn install_line(deployments: &[Deployment], ns: &str) -> Option<String> {
    let taken = deployments.iter().any(|d| {
        d.metadata.namespace.as_deref() == Some(ns) && d.metadata.name.as_deref() == Some(crate::install::OPERATOR_NAME)
    });
    (!taken).then(|| {
        format!(
            "kubectl microservice manifests --namespace {ns} --watch-namespace {ns} --without-shared | kubectl apply -f -"
        )
    })
}

/// An operator of ours for the object's namespace, installed in that namespace, as one shell
/// line that works when pasted and touches nothing of other teams: `--without-shared` leaves the
/// CRD (which exists, since the object does: applying ours would replace it, every team's
/// schema) and the shared ClusterRoles out; what it applies is the namespace's own ServiceAccount,
/// Roles, RoleBindings and Deployment, and its ClusterRoleBinding named after the namespace.
/// `None` when the namespace already holds a Deployment named as the manifests' one, which the
/// apply would take over.
pub(crate) fn install_command(ctx: &Ctx<'_>) -> Option<String> {
    let deployments = ctx.snapshot.operator.deployments.get().map_or(&[][..], Vec::as_slice);
    install_line(deployments, ctx.ns)
}

/// Whether `pod` is the diagnosed Deployment's ([`crate::evidence::pods::is_pod_of`]: its
/// namespace, its ReplicaSet owner or selector); every Pod in evidence is when no Deployment is
/// (a bundle without `operator/deployment.json`).
pub(crate) fn selected(deployment: Option<&Deployment>, pod: &Pod) -> bool {
    deployment.is_none_or(|d| crate::evidence::pods::is_pod_of(d, pod))
}

pub(crate) fn container_running(pod: &Pod, container: &str) -> bool {
    let Some(status) = &pod.status else { return false };
    status.phase.as_deref() == Some("Running")
        && status
            .container_statuses
            .iter()
            .flatten()
            .any(|c| c.name == container && c.state.as_ref().is_some_and(|s| s.running.is_some()))
}

pub(crate) fn pod_state(pod: &Pod, container: &str) -> String {
    let name = pod.metadata.name.as_deref().unwrap_or("?");
    let status = pod.status.as_ref();
    let phase = status.and_then(|s| s.phase.as_deref()).unwrap_or("<none>");
    let cs = status
        .and_then(|s| s.container_statuses.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.name == container));
    let state = match cs.and_then(|c| c.state.as_ref()) {
        Some(s) if s.running.is_some() => format!("running, ready={}", cs.is_some_and(|c| c.ready)),
        Some(s) if s.terminated.is_some() => {
            let t = s.terminated.as_ref().unwrap_or_else(|| unreachable!());
            format!(
                "terminated (reason {}, exitCode {}{})",
                t.reason.as_deref().unwrap_or("?"),
                t.exit_code,
                t.finished_at
                    .as_ref()
                    .map(|f| format!(
                        ", finishedAt {}",
                        crate::time::rfc3339_seconds(crate::time::from_jiff(f.0))
                    ))
                    .unwrap_or_default()
            )
        }
        Some(s) if s.waiting.is_some() => format!(
            "waiting ({})",
            s.waiting.as_ref().and_then(|w| w.reason.as_deref()).unwrap_or("?")
        ),
        _ => "no container status".into(),
    };
    format!("Pod {name}: phase {phase}, container {container} {state}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kopf_deployment() -> Deployment {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "kopf-operator", "namespace": "ops"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "op"}}, "template": {"spec": {"containers": [
                {"name": "operator", "image": "localhost/kopf:1.38", "command": ["kopf"], "args": ["run", "--standalone", "op.py"]}]}}}
        }))
        .unwrap()
    }

    /// A pasted install creates the operator's namespace first (`manifests | kubectl apply`
    /// fails without it), and never takes over a Deployment of ours already in `ops` (its
    /// `--watch-namespace` would be replaced, its namespaces left without an operator).
    #[test]
    fn the_install_line_stays_in_the_namespace_and_takes_over_no_operator() {
        assert_eq!(
            install_line(&[], "todo").as_deref(),
            Some(
                "kubectl microservice manifests --namespace todo --watch-namespace todo --without-shared | kubectl apply -f -"
            )
        );
        let mut kopf_in_todo = kopf_deployment();
        kopf_in_todo.metadata.namespace = Some("todo".into());
        let mut ours_in_todo = kopf_in_todo.clone();
        ours_in_todo.metadata.name = Some("microservice-operator".into());
        // A Deployment of another name is not touched by the manifests' objects.
        assert!(install_line(std::slice::from_ref(&kopf_in_todo), "todo").is_some());
        assert_eq!(install_line(&[kopf_in_todo, ours_in_todo], "todo"), None);
    }
}
