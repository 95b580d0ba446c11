//! `operator-not-found`, `operator-not-watching`, `operator-not-running`: is there an operator
//! that serves the object's namespace, and does it run? For a Deployment: its Pods, each
//! container's state and the fix that clears it; for a process outside the cluster (a laptop
//! `operate`): the Lease it holds and its own log. Leadership is [`crate::diagnose::leading`]'s.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;

use super::{Ctx, finding};
use crate::diagnose::finding::{Finding, FindingId, Severity};
use crate::diagnose::leading::{self, ElectionLine, PauseEvidence};
use crate::diagnose::rbac::{self, Account, Answer, Need};
use crate::evidence::operator::{Leadership, OperatorKind, OperatorRef, find_operators};
use crate::evidence::resolve::Verdict as Resolved;
use crate::kopf::peering as kopf_peering;
use crate::text::count;
use crate::vocab::lease::{LEASE_GROUP, LEASE_VERBS};

pub(super) fn operator_findings(ctx: &Ctx<'_>) -> Vec<Finding> {
    let resolution = &ctx.judged.resolution;
    let op = match (&ctx.operator, resolution.verdict) {
        (Some(op), _) => op,
        // The operators could not be read, or several serve alike (a gap says which): nothing
        // is said about any of them.
        (None, Resolved::Unknown | Resolved::Ambiguous) => return Vec::new(),
        (None, Resolved::Process) => return process_findings(ctx),
        (None, _) if resolution.candidates.is_empty() => {
            let deployments = ctx.snapshot.operator.deployments.get().map_or(0, Vec::len);
            let mut evidence = vec![format!(
                "{} in evidence; none runs `kopf run`, `python -m kopf` or `kubectl-microservice operate`",
                count(deployments as u64, "Deployment")
            )];
            evidence.extend(resolution.evidence.iter().cloned());
            return vec![finding(
                FindingId::OperatorNotFound,
                Severity::Problem,
                "no operator Deployment for Microservices was found".into(),
                evidence,
                Some(format!(
                    "install it (`{}`), or name the one you run: --operator NAMESPACE/deployment/NAME",
                    install_command(ctx)
                )),
            )];
        }
        (None, _) => return none_serves(ctx),
    };
    let mut out = Vec::new();
    if !op.watches(ctx.ns) {
        out.push(finding(
            FindingId::OperatorNotWatching,
            Severity::Problem,
            format!("the operator {} does not watch namespace {}", op.display(), ctx.ns),
            vec![format!(
                "its command: {} (watches {})",
                op.argv.join(" "),
                op.watches.as_deref().unwrap_or_default().join(",")
            )],
            Some(serve_fix(ctx, op)),
        ));
    }
    let pods = ctx.snapshot.operator.pods.get().map(Vec::as_slice).unwrap_or(&[]);
    let mine: Vec<&Pod> = pods.iter().filter(|p| selected(ctx.deployment, p)).collect();
    let running_names: Vec<String> = mine
        .iter()
        .filter(|p| container_running(p, &op.container))
        .filter_map(|p| p.metadata.name.clone())
        .collect();
    let pause_lines: Vec<PauseEvidence> = ctx
        .unattributed
        .iter()
        .filter_map(|l| {
            kopf_peering::pause_line(&l.record.message).map(|line| PauseEvidence {
                source: l.pod.clone(),
                cite: l.cite(),
                line,
            })
        })
        .collect();
    let election_lines: Vec<ElectionLine> = ctx
        .unattributed
        .iter()
        .filter(|l| leading::is_election_line(&l.record.message))
        .map(|l| ElectionLine {
            source: l.pod.clone(),
            cite: l.cite(),
            message: std::iter::once(l.record.message.clone())
                .chain(l.record.fields.iter().map(|(k, v)| format!("{k}={v}")))
                .collect::<Vec<_>>()
                .join(" "),
        })
        .collect();
    let lease_access: Vec<(String, Answer)> = match op.leadership_in(ctx.ns) {
        Leadership::Lease { namespace, name } => {
            let account = Account {
                namespace: &op.namespace,
                name: &op.service_account,
            };
            LEASE_VERBS
                .iter()
                .map(|(verb, named)| {
                    let need = Need {
                        group: LEASE_GROUP,
                        resource: "leases",
                        verb,
                        namespace: &namespace,
                        name: named.then_some(name.as_str()),
                    };
                    (verb.to_string(), rbac::decide(&ctx.snapshot.rbac, account, need))
                })
                .collect()
        }
        _ => Vec::new(),
    };
    let status = ctx.deployment.and_then(|d| d.status.as_ref());
    let ready_replicas = status.and_then(|s| s.ready_replicas).unwrap_or(0);
    let leading_input = leading::Input {
        operator: op,
        pods: &mine,
        running: &running_names,
        ready_replicas,
        leases: &ctx.snapshot.operator.leases,
        peerings: &ctx.snapshot.operator.peerings,
        pause_lines: &pause_lines,
        election_lines: &election_lines,
        lease_access: &lease_access,
        namespace: ctx.ns,
        now: ctx.now,
        skew: ctx.options.skew,
        given_holder: given_holder(ctx),
    };
    out.extend(leading::operator_not_leading(&leading_input));
    let elsewhere = leading::leader_elsewhere(&leading_input);
    if ctx.snapshot.operator.pods.get().is_some() {
        let running: Vec<&&Pod> = mine.iter().filter(|p| container_running(p, &op.container)).collect();
        let mut evidence = vec![format!(
            "Deployment {}: spec.replicas={} status.replicas={} readyReplicas={} availableReplicas={}",
            op.display(),
            ctx.deployment
                .and_then(|d| d.spec.as_ref())
                .and_then(|s| s.replicas)
                .map_or_else(|| "unset (1)".to_string(), |r| r.to_string()),
            status.and_then(|s| s.replicas).unwrap_or(0),
            status.and_then(|s| s.ready_replicas).unwrap_or(0),
            status.and_then(|s| s.available_replicas).unwrap_or(0)
        )];
        for p in &mine {
            evidence.push(pod_state(p, &op.container));
        }
        if mine.is_empty() && ready_replicas > 0 {
            // The Deployment's status (from the controller) says its Pods are ready; the Pods in
            // evidence do not match its selector (a hand-made bundle's `-l` that misses them).
            out.push(finding(
                FindingId::OperatorNotRunning,
                Severity::Ok,
                format!(
                    "the operator {} reports {} (its Pods are not in evidence)",
                    op.display(),
                    count(ready_replicas as u64, "ready replica")
                ),
                evidence,
                None,
            ));
        } else if let (true, Some(holder)) = (running.is_empty(), &elsewhere) {
            // Its log given: the user runs that process on purpose (the README's laptop flow).
            let own = leading_input.given_holder == Some(holder.as_str());
            out.push(finding(
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
                    // The objects are served: the Deployment's state is not what keeps them from
                    // being handled. Only before that process stops does the Deployment matter,
                    // and then the fix of its cause (a scale for replicas=0), not a look at it.
                    let (why, fix) = not_running_cause(op, ctx.deployment, &mine);
                    format!(
                        "nothing to fix while {holder} runs: it serves the objects, and the Deployment's state ({why}) is not what keeps them from being handled; if that process is meant to be temporary (a laptop), get the Deployment running before stopping it (its Pods stand by on the Lease until then): {fix}"
                    )
                }),
            ));
        } else if running.is_empty() {
            let (why, fix) = not_running_cause(op, ctx.deployment, &mine);
            evidence.insert(0, why.clone());
            out.push(finding(
                FindingId::OperatorNotRunning,
                Severity::Problem,
                format!(
                    "the operator {} has no running Pod ({why}): no handler runs and nothing is posted",
                    op.display()
                ),
                evidence,
                Some(fix),
            ));
        } else {
            out.push(finding(
                FindingId::OperatorNotRunning,
                Severity::Ok,
                format!(
                    "the operator {} runs ({} running)",
                    op.display(),
                    count(running.len() as u64, "Pod")
                ),
                evidence,
                None,
            ));
        }
    }
    out
}

/// The Lease holder whose own log was given (`--log-file`, or a bundle's `.file.log`): the
/// resolver matched its `Became the leader ... identity=` line to the Lease's `holderIdentity`.
fn given_holder<'a>(ctx: &'a Ctx<'_>) -> Option<&'a str> {
    let process = ctx.judged.resolution.process.as_ref()?;
    process.log.as_ref()?;
    process.holder.as_deref()
}

/// `operator-not-watching` when no operator in evidence serves the namespace: what exists and
/// what each watches. None of them is diagnosed (their RBAC, Pods and logs say nothing about
/// this namespace).
fn none_serves(ctx: &Ctx<'_>) -> Vec<Finding> {
    let resolution = &ctx.judged.resolution;
    let mut evidence: Vec<String> = resolution
        .candidates
        .iter()
        .map(|c| {
            let kind = match c.kind {
                Some(OperatorKind::Ours) => " (ours)",
                Some(OperatorKind::Kopf) => " (Kopf)",
                None => "",
            };
            let how = c.evidence.first().map(|e| format!(": {e}")).unwrap_or_default();
            format!("{}{kind}{how}", c.operator)
        })
        .collect();
    evidence.extend(resolution.evidence.iter().cloned());
    let operators = ctx
        .snapshot
        .operator
        .deployments
        .get()
        .map(|d| find_operators(d))
        .unwrap_or_default();
    // Of an operator seen but not collected (another namespace's), only its kind and what it
    // watches are in evidence: the general edit.
    let mut ways: Vec<String> = Vec::new();
    let mut edits: Vec<String> = Vec::new();
    for c in resolution.candidates.iter().take(3) {
        let Some((ns, name)) = c.operator.split_once("/deployment/") else {
            continue;
        };
        match operators
            .iter()
            .find(|o| o.namespace == ns && o.name == name)
            .and_then(|op| manifests_serving(ctx, op))
        {
            Some(line) => ways.push(format!("for {}: {line}", c.operator)),
            None => edits.push(format!("kubectl -n {ns} edit deployment {name}")),
        }
    }
    if !edits.is_empty() {
        ways.push(format!(
            "add `--namespace={}` to its container's command or args and give its ServiceAccount there the Role and RoleBinding it has where it watches ({})",
            ctx.ns,
            edits.join("; ")
        ));
    }
    let edit = if ways.is_empty() {
        String::new()
    } else {
        format!(", or have the one that should serve it do so: {}", ways.join("; "))
    };
    vec![finding(
        FindingId::OperatorNotWatching,
        Severity::Problem,
        format!(
            "no operator serves namespace {}: {} watch{} other namespaces; nothing handles {} or posts its events",
            ctx.ns,
            count(resolution.candidates.len() as u64, "operator"),
            if resolution.candidates.len() == 1 { "es" } else { "" },
            ctx.key
        ),
        evidence,
        Some(format!(
            "run one for it (`{install}`, or `kubectl microservice operate --namespace {ns}` with its log given as --log-file){edit}; if one of them does serve it, name it with --operator NS/deployment/NAME",
            install = install_command(ctx),
            ns = ctx.ns
        )),
    )]
}

/// [`install_command`] given the Deployments in evidence.
fn install_line(deployments: &[Deployment], ns: &str) -> String {
    let taken = |namespace: &str| {
        deployments.iter().any(|d| {
            d.metadata.namespace.as_deref() == Some(namespace)
                && d.metadata.name.as_deref() == Some(crate::manifests::OPERATOR_NAME)
        })
    };
    let ops = if taken("ops") {
        // A DNS label: at most 63 characters.
        let stem = &ns[..ns.len().min(59)];
        format!("{}-ops", stem.trim_end_matches('-'))
    } else {
        "ops".to_string()
    };
    format!(
        "kubectl create namespace {ops}; kubectl microservice manifests --namespace {ops} --watch-namespace {ns} | kubectl apply -f -"
    )
}

/// The README's install of an operator for the object's namespace, as one shell line that works
/// when pasted: the operator's namespace is created first (`manifests | kubectl apply` fails
/// without it), and it is `ops` unless `ops` already holds a Deployment named as the manifests'
/// one, which the apply would take over (its `--watch-namespace` replaced: the namespaces it
/// serves would lose their operator); then `NS-ops`. `create namespace` of one that exists
/// fails alone: the `;` goes on.
fn install_command(ctx: &Ctx<'_>) -> String {
    let deployments = ctx.snapshot.operator.deployments.get().map_or(&[][..], Vec::as_slice);
    install_line(deployments, ctx.ns)
}

/// The `manifests ... | kubectl apply -f -` line of [`serve_fix`], when `op` is as `manifests`
/// renders it.
fn manifests_serving(ctx: &Ctx<'_>, op: &OperatorRef) -> Option<String> {
    if op.kind != OperatorKind::Ours {
        return None;
    }
    let watch = op.watches.clone().filter(|w| !w.is_empty())?;
    let deployment = ctx.snapshot.operator.deployments.get()?.iter().find(|d| {
        d.metadata.namespace.as_deref() == Some(op.namespace.as_str())
            && d.metadata.name.as_deref() == Some(op.name.as_str())
    })?;
    let image = deployment
        .spec
        .as_ref()?
        .template
        .spec
        .as_ref()?
        .containers
        .iter()
        .find(|c| c.name == op.container)?
        .image
        .clone()?;
    let events = match op.flag("--events")? {
        "all" => "all",
        "warnings" => "warnings",
        "none" => "none",
        _ => return None,
    };
    let standalone = op.argv.iter().any(|a| a == "--standalone");
    let plan = crate::manifests::Plan {
        operator_namespace: op.namespace.clone(),
        watch: watch.clone(),
        image: image.clone(),
        standalone,
        events,
    };
    let rendered = crate::manifests::objects(&plan)
        .into_iter()
        .find(|o| o["kind"] == "Deployment")?;
    let container = &rendered["spec"]["template"]["spec"]["containers"][0];
    if rendered["metadata"]["name"] != op.name.as_str() || container["command"] != serde_json::json!(op.argv) {
        return None;
    }
    let mut line = format!(
        "kubectl microservice manifests --namespace {} --without-shared",
        op.namespace
    );
    for w in watch.iter().map(String::as_str).chain([ctx.ns]) {
        line.push_str(&format!(" --watch-namespace {w}"));
    }
    if image != crate::manifests::DEFAULT_IMAGE {
        line.push_str(&format!(" --image {image}"));
    }
    if standalone {
        line.push_str(" --standalone");
    }
    if events != "all" {
        line.push_str(&format!(" --events {events}"));
    }
    line.push_str(" | kubectl apply -f -");
    Some(format!("`{line}` (its Deployment, and its Roles in {})", ctx.ns))
}

/// [`serve_fix`] of a Deployment `manifests` did not make, or whose spec is not in evidence:
/// the namespace added to its command or args, and the rights copied.
fn edit_fix(ns: &str, op_namespace: &str, op_name: &str, account: &str) -> String {
    format!(
        "add `--namespace={ns}` to its container's command or args (kubectl -n {op_namespace} edit deployment {op_name}) and give {account} in {ns} the Role and RoleBinding it has where it watches"
    )
}

/// How `op`, which does not watch the object's namespace, comes to serve it. Watching is not
/// enough: its ServiceAccount needs its rights there too (a Role and RoleBinding in the
/// namespace). So for a Deployment `manifests` made (its command is the one `manifests` renders
/// for its namespaces, image, `--standalone` and `--events`), the `manifests` line with the
/// namespace added, which re-renders the Deployment and adds the Roles (`--without-shared`: the
/// CRD and the cluster roles stay as they are); for any other, the edit of its command or args
/// and the Role to copy.
fn serve_fix(ctx: &Ctx<'_>, op: &OperatorRef) -> String {
    if let Some(line) = manifests_serving(ctx, op) {
        return line;
    }
    edit_fix(
        ctx.ns,
        &op.namespace,
        &op.name,
        &format!("its ServiceAccount {}/{}", op.namespace, op.service_account),
    )
}

/// The operator is a process outside the cluster (a laptop `operate`) and no Deployment of ours
/// serves the namespace: whether it runs and leads, from its Lease and the log given.
fn process_findings(ctx: &Ctx<'_>) -> Vec<Finding> {
    let Some(process) = &ctx.judged.resolution.process else {
        return Vec::new();
    };
    let name = ctx.judged.resolution.label();
    let mut evidence: Vec<String> = ctx.judged.resolution.evidence.clone();
    if let Some(c) = ctx.judged.resolution.candidates.first() {
        evidence.extend(c.evidence.iter().cloned());
    }
    let log = process.log.as_deref();
    let mut out = Vec::new();
    match (&process.lease, process.current) {
        (Some(lease), true) => {
            let renewed = match (ctx.now, process.renewed) {
                (Some(now), Some(r)) => format!(", renewed {}s ago", (now - r).num_seconds().max(0)),
                _ => String::new(),
            };
            out.push(finding(
                FindingId::OperatorNotRunning,
                Severity::Ok,
                format!("the `operate` process {name} runs: it holds the Lease {lease}{renewed}"),
                evidence.clone(),
                None,
            ));
            out.push(finding(
                leading::ID,
                Severity::Ok,
                match log {
                    Some(log) => format!("{name} leads (Lease {lease}); its log is the one given ({log})"),
                    None => format!("{name} leads (Lease {lease}); its log is not in evidence (give it with --log-file)"),
                },
                evidence,
                None,
            ));
        }
        (Some(lease), false) => out.push(finding(
            FindingId::OperatorNotRunning,
            Severity::Problem,
            format!(
                "the `operate` process {name} stopped: its Lease {lease} is no longer renewed, and no Deployment serves namespace {}",
                ctx.ns
            ),
            evidence,
            Some(format!(
                "start it again (`kubectl microservice operate --namespace {ns}`), or run the operator in the cluster: `{install}`",
                install = install_command(ctx),
                ns = ctx.ns
            )),
        )),
        (None, _) => out.push(finding(
            FindingId::OperatorNotRunning,
            Severity::Ok,
            format!(
                "the operator is the process whose log was given ({}): it names {}; no Lease or Pod says whether it still runs",
                log.unwrap_or("?"),
                ctx.key
            ),
            evidence,
            None,
        )),
    }
    out
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
fn not_running_cause(op: &OperatorRef, deployment: Option<&Deployment>, pods: &[&Pod]) -> (String, String) {
    let (ns, n, c) = (&op.namespace, &op.name, &op.container);
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
    for pod in pods {
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
            return (
                format!("container {c} of Pod {pod_name} waits: {reason} for image {image}"),
                format!(
                    "the nodes cannot get the image {image}{}: import it into the nodes or push it where they pull from, or set one they can: kubectl -n {ns} set image deployment/{n} {c}=IMAGE",
                    if message.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", message.trim())
                    }
                ),
            );
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
            return (
                format!("container {c} of Pod {pod_name} is {state}{exit}, {restarts} restarts"),
                format!(
                    "read why it exits and fix that (its command, config or permissions): kubectl -n {ns} logs {pod_name} -c {c}{previous}"
                ),
            );
        }
        if status.and_then(|s| s.phase.as_deref()) == Some("Pending") && cs.is_none() {
            let unscheduled = status
                .and_then(|s| s.conditions.as_ref())
                .and_then(|cs| cs.iter().find(|c| c.type_ == "PodScheduled" && c.status == "False"));
            if let Some(cond) = unscheduled {
                return (
                    format!(
                        "Pod {pod_name} is not scheduled: {}",
                        cond.message.as_deref().unwrap_or("no node fits")
                    ),
                    format!("see what no node offers: kubectl -n {ns} describe pod {pod_name}"),
                );
            }
        }
    }
    if pods.is_empty() {
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
        return (
            format!("spec.replicas={}, no Pod in evidence", spec_replicas.unwrap_or(1)),
            format!("see why it has no Pod (its conditions and events): kubectl -n {ns} describe deployment {n}"),
        );
    }
    (
        "no container is running".into(),
        format!(
            "see each Pod's state and events: kubectl -n {ns} describe pods -l {}",
            selector_text(deployment)
        ),
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

pub(super) fn selected(deployment: Option<&Deployment>, pod: &Pod) -> bool {
    let Some(labels) = deployment
        .and_then(|d| d.spec.as_ref())
        .and_then(|s| s.selector.match_labels.as_ref())
    else {
        return true;
    };
    let pod_labels = pod.metadata.labels.as_ref();
    pod.metadata.namespace == deployment.and_then(|d| d.metadata.namespace.clone())
        && labels.iter().all(|(k, v)| pod_labels.and_then(|l| l.get(k)) == Some(v))
}

pub(super) fn container_running(pod: &Pod, container: &str) -> bool {
    let Some(status) = &pod.status else { return false };
    status.phase.as_deref() == Some("Running")
        && status
            .container_statuses
            .iter()
            .flatten()
            .any(|c| c.name == container && c.state.as_ref().is_some_and(|s| s.running.is_some()))
}

pub(super) fn pod_state(pod: &Pod, container: &str) -> String {
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
        let (why, fix) = not_running_cause(&op, Some(&d), &[]);
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
        let (why, fix) = not_running_cause(&op, Some(&d), &[&pull]);
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
        let (why, fix) = not_running_cause(&op, Some(&d), &[&crash]);
        assert!(
            why.contains("CrashLoopBackOff, last exit code 1 (Error), 4 restarts"),
            "{why}"
        );
        assert!(
            fix.contains("kubectl -n ops logs kopf-operator-abc -c operator --previous"),
            "{fix}"
        );

        let (why, fix) = not_running_cause(&op, Some(&d), &[]);
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
        let (_, fix) = not_running_cause(&op, Some(&ours), &[]);
        assert!(
            fix.contains("scale deployment/microservice-operator --replicas=2"),
            "{fix}"
        );
    }

    /// A pasted install creates the operator's namespace first (`manifests | kubectl apply`
    /// fails without it), and never takes over a Deployment of ours already in `ops` (its
    /// `--watch-namespace` would be replaced, its namespaces left without an operator).
    #[test]
    fn the_install_line_creates_its_namespace_and_takes_over_no_operator() {
        assert_eq!(
            install_line(&[], "todo"),
            "kubectl create namespace ops; kubectl microservice manifests --namespace ops --watch-namespace todo | kubectl apply -f -"
        );
        let (_, kopf_in_ops) = kopf_deployment(1);
        let mut ours_in_ops = kopf_in_ops.clone();
        ours_in_ops.metadata.name = Some("microservice-operator".into());
        // A Deployment of another name in ops is not touched by the manifests' objects.
        assert!(install_line(std::slice::from_ref(&kopf_in_ops), "todo").contains("--namespace ops "));
        assert_eq!(
            install_line(&[kopf_in_ops, ours_in_ops], "todo"),
            "kubectl create namespace todo-ops; kubectl microservice manifests --namespace todo-ops --watch-namespace todo | kubectl apply -f -"
        );
    }

    mod with_the_resolver {
        //! The findings over what the resolver and the live gathering give.

        use serde_json::json;

        use crate::evidence::resolve::tests::{deployment, lease, others, snapshot, todo_api};
        use crate::evidence::{Evidence, GapReason};
        use crate::logs::LogSource;
        use crate::logs::file::FILE_CONTAINER;

        /// Two that serve alike: explain-events says nothing about either, names the ambiguity as a
        /// gap and cannot decide (exit 3).
        #[test]
        fn an_ambiguous_operator_is_a_gap_and_undecided() {
            let mut s = snapshot(vec![
                deployment("a", "op", json!(["kopf", "run", "-A", "op.py"])),
                deployment("b", "op", json!(["kopf", "run", "-A", "op.py"])),
            ]);
            s.microservices = Evidence::Present(vec![todo_api()]);
            let report = crate::diagnose::events::explain(&s, &todo_api(), Default::default());
            assert_eq!(report.operator, None);
            assert_eq!(
                report.operator_resolution.verdict,
                crate::evidence::resolve::Verdict::Ambiguous
            );
            assert!(
                report
                    .gaps
                    .iter()
                    .any(|g| g.evidence == "operator" && g.to_string().contains("--operator")),
                "{:?}",
                report.gaps
            );
            assert!(
                report
                    .findings
                    .iter()
                    .all(|f| !f.id.as_str().starts_with("operator-") && f.id != "rbac-events"),
                "{:?}",
                report.findings
            );
            assert_eq!(report.exit_code(), 3);
        }

        /// A laptop `operate` whose log is given but whose Lease expired: it stopped, and nothing
        /// else serves the namespace: a problem, not "ok".
        #[test]
        fn a_stopped_laptop_operate_is_a_problem() {
            let mut s = snapshot(others());
            s.microservices = Evidence::Present(vec![todo_api()]);
            s.operator.leases = Evidence::Present(vec![lease(
                "todo",
                "alice-laptop_0123456789abcdef",
                "2026-12-01T08:50:00Z",
            )]);
            s.operator.logs = Evidence::Present(vec![LogSource {
            pod: "op.log".into(),
            container: FILE_CONTAINER.into(),
            previous: false,
            text: "2026-12-01T08:41:00.000Z  INFO Became the leader: acquired the lease lease=todo/microservice-operator identity=alice-laptop_0123456789abcdef term=1\n2026-12-01T08:41:01.000Z  INFO [todo/todo-api] Creation is processed: 1 succeeded; 0 failed. handler=accept cause=create\n".into(),
        }]);
            let report = crate::diagnose::events::explain(&s, &todo_api(), Default::default());
            assert_eq!(
                report.operator.as_deref(),
                Some("process/alice-laptop_0123456789abcdef")
            );
            let running = report
                .findings
                .iter()
                .find(|f| f.id == "operator-not-running")
                .expect("operator-not-running");
            assert_eq!(
                running.severity,
                crate::diagnose::events::Severity::Problem,
                "{running:?}"
            );
            assert!(running.title.contains("stopped"), "{}", running.title);
            // Renewed a moment ago instead: it runs and leads, and nothing is raised.
            s.operator.leases = Evidence::Present(vec![lease(
                "todo",
                "alice-laptop_0123456789abcdef",
                "2026-12-01T08:59:58Z",
            )]);
            let report = crate::diagnose::events::explain(&s, &todo_api(), Default::default());
            assert!(
                report
                    .findings
                    .iter()
                    .all(|f| f.severity == crate::diagnose::events::Severity::Ok),
                "{:?}",
                report.findings
            );
            assert_eq!(report.exit_code(), 0);
        }

        /// A Deployment the caller may not read is a gap, not "no operator" (which says "install it").
        #[tokio::test]
        async fn an_unreadable_operator_deployment_is_a_gap() {
            let forbidden = serde_json::json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "deployments.apps \"microservice-operator\" is forbidden: User \"dev\" cannot get resource \"deployments\" in API group \"apps\" in the namespace \"ops\"",
            "reason": "Forbidden", "details": {"name": "microservice-operator", "group": "apps", "kind": "deployments"}, "code": 403});
            let empty_list =
                serde_json::json!({"kind": "DeploymentList", "apiVersion": "apps/v1", "metadata": {}, "items": []});
            let (client, _) = crate::logs::live::fake_api(move |path, _| match path {
                // Cluster-wide list forbidden; the namespace's own list readable but without an operator.
                "/apis/apps/v1/deployments" => (403, forbidden.to_string()),
                "/apis/apps/v1/namespaces/store/deployments" => (200, empty_list.to_string()),
                _ => (403, forbidden.to_string()),
            });
            let bundle = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bundles/healthy");
            let plan = |operator: Option<&str>| crate::evidence::live::LiveScope {
                namespace: Some("store".into()),
                selector: None,
                name: Some("catalog-api".into()),
                operator: operator.map(str::to_string),
                context: None,
                server: "https://127.0.0.1:1".into(),
            };
            for operator in [Some("ops/deployment/microservice-operator"), None] {
                let mut snapshot = crate::evidence::bundle::read(&bundle).unwrap();
                crate::evidence::live::add_operator(
                    &client,
                    &mut snapshot,
                    &plan(operator),
                    crate::evidence::live::Logs::None,
                )
                .await;
                let gap = snapshot
                    .operator
                    .deployments
                    .gap()
                    .unwrap_or_else(|| panic!("{operator:?}: a gap"));
                assert!(matches!(gap.reason, GapReason::Forbidden(_)), "{operator:?}: {gap}");
                let obj = snapshot.microservices.get().unwrap()[0].clone();
                let report = crate::diagnose::events::explain(&snapshot, &obj, Default::default());
                assert!(
                    report.findings.iter().all(|f| f.id != "operator-not-found"),
                    "{operator:?}: {:?}",
                    report.findings
                );
                assert_eq!(report.exit_code(), 3, "{operator:?}: undecided without the operator");
            }
        }
    }
}
