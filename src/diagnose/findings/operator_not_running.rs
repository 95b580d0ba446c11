//! `operator-not-running`: does the operator that serves the object run? For a Deployment: its
//! Pods, each container's state and the fix that clears it; for a process outside the cluster
//! (a laptop `operate`): the Lease it holds and its own log.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;

use super::leading_facts::{Observed, input, leader_elsewhere};
use super::operator_facts::{Replicas, Served, install_command, pod_state, served};
use super::{Ctx, finding};
use crate::diagnose::finding::{Finding, FindingId, Severity};
use crate::evidence::operator::{OperatorKind, OperatorRef};
use crate::text::count;

/// `operator-not-running` of a process outside the cluster that serves the namespace (no
/// Deployment of ours does): it runs while it renews its Lease (`ok`), stopped when the Lease
/// lapsed (a problem); with its log given and no Lease, `ok`: it names the object.
pub(crate) fn of_process(ctx: &Ctx<'_>) -> Vec<Finding> {
    let Served::Process = served(ctx) else {
        return Vec::new();
    };
    let resolution = ctx.resolution();
    let Some(process) = &resolution.process else {
        return Vec::new();
    };
    let name = resolution.label();
    let mut evidence: Vec<String> = resolution.evidence.clone();
    if let Some(c) = resolution.candidates.first() {
        evidence.extend(c.evidence.iter().cloned());
    }
    let found = match (&process.lease, process.current) {
        (Some(lease), true) => {
            let renewed = match (ctx.now, process.renewed) {
                (Some(now), Some(r)) => format!(", renewed {}s ago", (now - r).num_seconds().max(0)),
                _ => String::new(),
            };
            finding(
                FindingId::OperatorNotRunning,
                Severity::Ok,
                format!("the `operate` process {name} runs: it holds the Lease {lease}{renewed}"),
                evidence,
                None,
            )
        }
        (Some(lease), false) => finding(
            FindingId::OperatorNotRunning,
            Severity::Problem,
            format!(
                "the `operate` process {name} stopped: its Lease {lease} is no longer renewed, and no Deployment serves namespace {}",
                ctx.ns
            ),
            evidence,
            Some(match install_command(ctx) {
                Some(install) => format!(
                    "start it again (`kubectl microservice operate --namespace {ns}`), or run the operator in the cluster: `{install}`",
                    ns = ctx.ns
                ),
                None => format!("start it again (`kubectl microservice operate --namespace {}`)", ctx.ns),
            }),
        ),
        (None, _) => finding(
            FindingId::OperatorNotRunning,
            Severity::Ok,
            format!(
                "the operator is the process whose log was given ({}): it names {}; no Lease or Pod says whether it still runs",
                process.log.as_deref().unwrap_or("?"),
                ctx.key
            ),
            evidence,
            None,
        ),
    };
    vec![found]
}

/// `operator-not-running` of the Deployment diagnosed, when its Pods are in evidence: `ok` when
/// its container runs (or the Deployment reports ready replicas whose Pods are not in
/// evidence); with no running Pod, a problem with its cause and fix ([`not_running_cause`]),
/// unless a process outside the Deployment holds its Lease and handles (a warning; `ok` when
/// that process's log was given: the README's laptop flow).
pub(crate) fn of_deployment(ctx: &Ctx<'_>) -> Vec<Finding> {
    let Served::Deployment(op) = served(ctx) else {
        return Vec::new();
    };
    if ctx.snapshot.operator.pods.get().is_none() {
        return Vec::new();
    }
    let replicas = Replicas::of(ctx, op);
    let observed = Observed::of(ctx, op);
    let leading = input(ctx, op, &replicas, &observed);
    let elsewhere = leader_elsewhere(&leading);
    let mut evidence = vec![replicas_line(ctx, op)];
    evidence.extend(replicas.mine.iter().map(|p| pod_state(p, &op.container)));
    let running = &replicas.running;
    let found = if replicas.mine.is_empty() && replicas.ready_replicas > 0 {
        // The Deployment's status (from the controller) says its Pods are ready; the Pods in
        // evidence do not match its selector (a hand-made bundle's `-l` that misses them).
        finding(
            FindingId::OperatorNotRunning,
            Severity::Ok,
            format!(
                "the operator {} reports {} (its Pods are not in evidence)",
                op.display(),
                count(replicas.ready_replicas as u64, "ready replica")
            ),
            evidence,
            None,
        )
    } else if let (true, Some(holder)) = (running.is_empty(), &elsewhere) {
        held_elsewhere(
            ctx,
            op,
            &replicas.mine,
            holder,
            leading.given_holder == Some(holder.as_str()),
            evidence,
        )
    } else if running.is_empty() {
        let crashes = crashes(ctx, op, &replicas.mine);
        let (why, fix) = not_running_cause(op, ctx.deployment, &replicas.mine, &crashes);
        evidence.insert(0, why.clone());
        evidence.extend(crashes.iter().map(|c| format!("its crash: {}", c.cite)));
        finding(
            FindingId::OperatorNotRunning,
            Severity::Problem,
            format!(
                "the operator {} has no running Pod ({why}): no handler runs and nothing is posted",
                op.display()
            ),
            evidence,
            Some(fix),
        )
    } else {
        finding(
            FindingId::OperatorNotRunning,
            Severity::Ok,
            format!(
                "the operator {} runs ({} running)",
                op.display(),
                count(running.len() as u64, "Pod")
            ),
            evidence,
            None,
        )
    };
    vec![found]
}

/// `Deployment NS/deployment/NAME: spec.replicas=... status.replicas=... readyReplicas=...
/// availableReplicas=...`.
fn replicas_line(ctx: &Ctx<'_>, op: &OperatorRef) -> String {
    let status = ctx.deployment.and_then(|d| d.status.as_ref());
    format!(
        "Deployment {}: spec.replicas={} status.replicas={} readyReplicas={} availableReplicas={}",
        op.display(),
        ctx.deployment
            .and_then(|d| d.spec.as_ref())
            .and_then(|s| s.replicas)
            .map_or_else(|| "unset (1)".to_string(), |r| r.to_string()),
        status.and_then(|s| s.replicas).unwrap_or(0),
        status.and_then(|s| s.ready_replicas).unwrap_or(0),
        status.and_then(|s| s.available_replicas).unwrap_or(0)
    )
}

/// No Pod of the Deployment runs, and another process holding its Lease as `holder` handles the
/// objects: `own` (its log was given: the user runs that process on purpose) is `ok`; else a
/// warning whose fix is the Deployment's cause, for before that process stops (the objects are
/// served: the Deployment's state is not what keeps them from being handled).
fn held_elsewhere(
    ctx: &Ctx<'_>,
    op: &OperatorRef,
    mine: &[&Pod],
    holder: &str,
    own: bool,
    evidence: Vec<String>,
) -> Finding {
    finding(
        FindingId::OperatorNotRunning,
        if own { Severity::Ok } else { Severity::Warning },
        if own {
            format!(
                "the `operate` process whose log was given holds the Lease of {} as {holder} and handles the objects; the Deployment has no running Pod",
                op.display()
            )
        } else {
            format!(
                "the operator {} has no running Pod; another process, holding its Lease as {holder}, handles the objects (see operator-not-leading)",
                op.display()
            )
        },
        evidence,
        (!own).then(|| {
            let (why, fix) = not_running_cause(op, ctx.deployment, mine, &crashes(ctx, op, mine));
            format!(
                "nothing to fix while {holder} runs: it serves the objects, and the Deployment's state ({why}) is not what keeps them from being handled; if that process is meant to be temporary (a laptop), get the Deployment running before stopping it (its Pods stand by on the Lease until then): {fix}"
            )
        }),
    )
}

/// How many replicas the operator's Deployment should run when it runs at all, for the
/// `kubectl scale` fix of a Deployment scaled to zero: the manifests' default (ours: 2 with
/// leader election, 1 with `--standalone`, `src/manifests.rs`); a Kopf operator 1, since Kopf
/// has no leader election (replicas without peering each handle every object, with peering
/// of one priority they all pause: Kopf 1.38 `docs/peering.rst`).
fn default_replicas(op: &OperatorRef) -> u32 {
    match op.kind {
        OperatorKind::Ours if !op.argv.iter().any(|a| a == "--standalone") => 2,
        _ => 1,
    }
}

/// Why no Pod of `op` runs, as one phrase naming the field or container state it rests on,
/// and the fix for that cause, each command one that achieves it when pasted:
/// `spec.replicas: 0` → `kubectl scale --replicas=N` (a `rollout restart` keeps 0 replicas);
/// an image that cannot be pulled (`waiting` reason `ErrImagePull`, `ImagePullBackOff`,
/// `ErrImageNeverPull`, `InvalidImageName`) → make the image available or set another; a
/// container that keeps exiting (`CrashLoopBackOff`, `terminated`) → its previous log, of that
/// Pod (a Pod that never started has none); a Pod not scheduled → its events; no Pod at all →
/// the Deployment's conditions (quota, admission), in `describe`.
fn not_running_cause(
    op: &OperatorRef,
    deployment: Option<&Deployment>,
    pods: &[&Pod],
    crashes: &[Crash],
) -> (String, String) {
    let (ns, n) = (&op.namespace, &op.name);
    let spec_replicas = deployment.and_then(|d| d.spec.as_ref()).and_then(|s| s.replicas);
    if spec_replicas == Some(0) {
        let want = default_replicas(op);
        return (
            "spec.replicas=0: the Deployment is scaled to zero".into(),
            format!(
                "scale it up (a rollout restart keeps 0 replicas): kubectl -n {ns} scale deployment/{n} --replicas={want}{}",
                if want == 1 && op.kind == OperatorKind::Kopf {
                    " (one replica: Kopf has no leader election)"
                } else {
                    ""
                }
            ),
        );
    }
    if let Some(cause) = pods.iter().find_map(|pod| pod_cause(op, pod, crashes)) {
        return cause;
    }
    if pods.is_empty() {
        return no_pod_cause(op, deployment, spec_replicas);
    }
    (
        "no container is running".into(),
        format!(
            "see each Pod's state and events: kubectl -n {ns} describe pods -l {}",
            selector_text(deployment)
        ),
    )
}

/// A crash in the log of one of the Deployment's Pods ([`crate::logs::crash`]): the Pod, the
/// exception line it ended with, and where it was read.
pub(crate) struct Crash {
    /// The Pod whose container crashed.
    pod: String,
    /// What it died of (`SyntaxError: invalid syntax (File "/src/handlers.py", line 5)`).
    exception: String,
    /// `POD/CONTAINER (previous) line N: ...`, for evidence.
    cite: String,
}

/// The crashes in the logs of `pods`' operator container, the previous instance's first (the
/// one that exited), one per Pod.
fn crashes(ctx: &Ctx<'_>, op: &OperatorRef, pods: &[&Pod]) -> Vec<Crash> {
    let names: Vec<&str> = pods.iter().filter_map(|p| p.metadata.name.as_deref()).collect();
    let mut sources: Vec<&crate::logs::LogSource> = ctx
        .snapshot
        .operator
        .logs
        .get()
        .into_iter()
        .flatten()
        .filter(|s| names.contains(&s.pod.as_str()) && s.container == op.container)
        .collect();
    sources.sort_by_key(|s| !s.previous);
    let mut found: Vec<Crash> = Vec::new();
    for source in sources {
        if found.iter().any(|c| c.pod == source.pod) {
            continue;
        }
        let records = source.records_in(ctx.snapshot.log_zone(source));
        if let Some((record, exception)) = records.iter().rev().find_map(|r| r.crash().map(|e| (r, e))) {
            found.push(Crash {
                pod: source.pod.clone(),
                cite: format!(
                    "{}/{}{} line {}: {}",
                    source.pod,
                    source.container,
                    if source.previous { " (previous)" } else { "" },
                    record.crash_line_number().unwrap_or(record.line_number),
                    exception
                ),
                exception,
            });
        }
    }
    found
}

/// Why `pod`'s operator container does not run, when its state says: an image that cannot be
/// pulled, a container that keeps exiting (with the exception its log ends with, from
/// `crashes`), a Pod not scheduled. `None` when it says none of these.
fn pod_cause(op: &OperatorRef, pod: &Pod, crashes: &[Crash]) -> Option<(String, String)> {
    let (ns, n, c) = (&op.namespace, &op.name, &op.container);
    let pod_name = pod.metadata.name.as_deref().unwrap_or("?");
    let status = pod.status.as_ref();
    let cs = status
        .and_then(|s| s.container_statuses.as_ref())
        .and_then(|cs| cs.iter().find(|s| &s.name == c));
    let waiting = cs.and_then(|s| s.state.as_ref()).and_then(|s| s.waiting.as_ref());
    let reason = waiting.and_then(|w| w.reason.as_deref()).unwrap_or("");
    let image = cs.map(|s| s.image.as_str()).unwrap_or("");
    if matches!(
        reason,
        "ErrImagePull" | "ImagePullBackOff" | "ErrImageNeverPull" | "InvalidImageName"
    ) {
        let message = waiting.and_then(|w| w.message.as_deref()).unwrap_or("");
        return Some((
            format!("container {c} of Pod {pod_name} waits: {reason} for image {image}"),
            format!(
                "the nodes cannot get the image {image}{}: import it into the nodes or push it where they pull from, or set one they can: kubectl -n {ns} set image deployment/{n} {c}=IMAGE",
                if message.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", message.trim())
                }
            ),
        ));
    }
    let terminated = cs.and_then(|s| s.state.as_ref()).and_then(|s| s.terminated.as_ref());
    let last = cs
        .and_then(|s| s.last_state.as_ref())
        .and_then(|s| s.terminated.as_ref())
        .or(terminated);
    if reason == "CrashLoopBackOff" || terminated.is_some() {
        let exit = last
            .map(|t| {
                format!(
                    ", last exit code {} ({})",
                    t.exit_code,
                    t.reason.as_deref().unwrap_or("?")
                )
            })
            .unwrap_or_default();
        let restarts = cs.map_or(0, |s| s.restart_count);
        let state = if reason.is_empty() { "terminated" } else { reason };
        let previous = if restarts > 0 { " --previous" } else { "" };
        if let Some(crash) = crashes.iter().find(|k| k.pod == pod_name) {
            return Some((
                format!(
                    "container {c} of Pod {pod_name} is {state}{exit}, {restarts} restarts: it crashes with {}",
                    crash.exception
                ),
                format!(
                    "fix what the crash names ({}) in the operator's code or config, then let the Deployment start it again (a new image or ConfigMap: kubectl -n {ns} rollout restart deployment {n}); the whole traceback: kubectl -n {ns} logs {pod_name} -c {c}{previous}",
                    crash.exception
                ),
            ));
        }
        return Some((
            format!("container {c} of Pod {pod_name} is {state}{exit}, {restarts} restarts"),
            format!(
                "read why it exits and fix that (its command, config or permissions): kubectl -n {ns} logs {pod_name} -c {c}{previous}"
            ),
        ));
    }
    if status.and_then(|s| s.phase.as_deref()) != Some("Pending") || cs.is_some() {
        return None;
    }
    let cond = status
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == "PodScheduled" && c.status == "False"))?;
    Some((
        format!(
            "Pod {pod_name} is not scheduled: {}",
            cond.message.as_deref().unwrap_or("no node fits")
        ),
        format!("see what no node offers: kubectl -n {ns} describe pod {pod_name}"),
    ))
}

/// No Pod at all: the Deployment's `ReplicaFailure` condition (quota, admission), else its
/// conditions and events in `describe`.
fn no_pod_cause(op: &OperatorRef, deployment: Option<&Deployment>, spec_replicas: Option<i32>) -> (String, String) {
    let (ns, n) = (&op.namespace, &op.name);
    let failure = deployment
        .and_then(|d| d.status.as_ref())
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == "ReplicaFailure" && c.status == "True"));
    if let Some(cond) = failure {
        return (
            format!(
                "spec.replicas={}, no Pod: {}",
                spec_replicas.unwrap_or(1),
                cond.message.as_deref().unwrap_or("ReplicaFailure")
            ),
            format!(
                "the Deployment's ReplicaSet cannot create Pods; fix what its condition names: kubectl -n {ns} describe deployment {n}"
            ),
        );
    }
    (
        format!("spec.replicas={}, no Pod in evidence", spec_replicas.unwrap_or(1)),
        format!("see why it has no Pod (its conditions and events): kubectl -n {ns} describe deployment {n}"),
    )
}

/// The Deployment's `matchLabels` as a `-l` value (`k=v,k2=v2`).
fn selector_text(deployment: Option<&Deployment>) -> String {
    deployment
        .and_then(|d| d.spec.as_ref())
        .and_then(|s| s.selector.match_labels.as_ref())
        .map(|l| l.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(","))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kopf_deployment(replicas: i64) -> (OperatorRef, Deployment) {
        let d: Deployment = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "kopf-operator", "namespace": "ops"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "op"}}, "template": {"spec": {"containers": [
                {"name": "operator", "image": "localhost/kopf:1.38", "command": ["kopf"], "args": ["run", "--standalone", "op.py"]}]}}}
        }))
        .unwrap();
        (crate::evidence::operator::recognise(&d).unwrap(), d)
    }

    fn pod_with(container_status: serde_json::Value) -> Pod {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "kopf-operator-abc", "namespace": "ops"},
            "status": {"phase": "Pending", "containerStatuses": [container_status]}
        }))
        .unwrap()
    }

    /// Issue 11 trial B: each cause of "no running Pod" gets the fix that clears it; a
    /// `rollout restart` (which keeps 0 replicas) is never the fix.
    #[test]
    fn no_running_pod_names_its_cause_and_a_working_fix() {
        let (op, d) = kopf_deployment(0);
        let (why, fix) = not_running_cause(&op, Some(&d), &[], &[]);
        assert!(why.contains("spec.replicas=0"), "{why}");
        assert!(
            fix.contains("kubectl -n ops scale deployment/kopf-operator --replicas=1"),
            "{fix}"
        );
        assert!(!fix.contains("kubectl -n ops rollout restart"), "{fix}");

        let (op, d) = kopf_deployment(1);
        let pull = pod_with(
            serde_json::json!({"name": "operator", "image": "localhost/kopf:1.39", "imageID": "", "ready": false, "restartCount": 0,
            "state": {"waiting": {"reason": "ErrImageNeverPull", "message": "Container image \"localhost/kopf:1.39\" is not present"}}}),
        );
        let (why, fix) = not_running_cause(&op, Some(&d), &[&pull], &[]);
        assert!(why.contains("ErrImageNeverPull for image localhost/kopf:1.39"), "{why}");
        assert!(
            fix.contains("kubectl -n ops set image deployment/kopf-operator operator=IMAGE"),
            "{fix}"
        );

        let crash = pod_with(
            serde_json::json!({"name": "operator", "image": "localhost/kopf:1.38", "imageID": "", "ready": false, "restartCount": 4,
            "state": {"waiting": {"reason": "CrashLoopBackOff"}},
            "lastState": {"terminated": {"exitCode": 1, "reason": "Error"}}}),
        );
        let (why, fix) = not_running_cause(&op, Some(&d), &[&crash], &[]);
        assert!(
            why.contains("CrashLoopBackOff, last exit code 1 (Error), 4 restarts"),
            "{why}"
        );
        assert!(
            fix.contains("kubectl -n ops logs kopf-operator-abc -c operator --previous"),
            "{fix}"
        );
        // Its previous log ends with a traceback: the exception is the cause, quoted.
        let seen = [Crash {
            pod: "kopf-operator-abc".into(),
            exception: "SyntaxError: invalid syntax (File \"/src/handlers.py\", line 5)".into(),
            cite: String::new(),
        }];
        let (why, fix) = not_running_cause(&op, Some(&d), &[&crash], &seen);
        assert!(
            why.ends_with(
                "4 restarts: it crashes with SyntaxError: invalid syntax (File \"/src/handlers.py\", line 5)"
            ),
            "{why}"
        );
        assert!(fix.starts_with("fix what the crash names (SyntaxError"), "{fix}");

        let (why, fix) = not_running_cause(&op, Some(&d), &[], &[]);
        assert!(why.contains("no Pod"), "{why}");
        assert!(
            fix.contains("kubectl -n ops describe deployment kopf-operator"),
            "{fix}"
        );
        // Ours: the manifests' two replicas with leader election.
        let ours: Deployment = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "microservice-operator", "namespace": "ops"},
            "spec": {"replicas": 0, "selector": {}, "template": {"spec": {"containers": [
                {"name": "operator", "image": "x", "command": ["kubectl-microservice", "operate"]}]}}}
        }))
        .unwrap();
        let op = crate::evidence::operator::recognise(&ours).unwrap();
        let (_, fix) = not_running_cause(&op, Some(&ours), &[], &[]);
        assert!(
            fix.contains("scale deployment/microservice-operator --replicas=2"),
            "{fix}"
        );
    }
}
