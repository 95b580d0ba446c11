//! `operator-not-watching`: the operator diagnosed does not watch the object's namespace, or no
//! operator in evidence serves it; the fix that makes one serve it (watching is not enough: its
//! ServiceAccount needs its rights there too).

use super::operator_facts::{Served, install_command, served};
use super::{Ctx, finding};
use crate::diagnose::finding::{Finding, FindingId, Severity};
use crate::evidence::operator::{OperatorKind, OperatorRef};
use crate::text::count;

/// `operator-not-watching`: the Deployment diagnosed (named by `--operator`) does not watch the
/// namespace, with its command; or none serves it ([`none_serves`]). A problem either way.
pub(crate) fn check(ctx: &Ctx<'_>) -> Vec<Finding> {
    match served(ctx) {
        Served::Deployment(op) if !op.watches(ctx.ns) => vec![finding(
            FindingId::OperatorNotWatching,
            Severity::Problem,
            format!("the operator {} does not watch namespace {}", op.display(), ctx.ns),
            vec![format!(
                "its command: {} (watches {})",
                op.command.display(),
                op.watches.as_deref().unwrap_or_default().join(",")
            )],
            Some(serve_fix(ctx, op)),
        )],
        Served::NoneServes => none_serves(ctx),
        _ => Vec::new(),
    }
}

/// `operator-not-watching` when no operator in evidence serves the namespace: what exists and
/// what each watches. None of them is diagnosed (their RBAC, Pods and logs say nothing about
/// this namespace).
fn none_serves(ctx: &Ctx<'_>) -> Vec<Finding> {
    let resolution = &ctx.resolution();
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
    let operators = ctx.snapshot.operator.operators();
    // Of an operator seen but not collected (another namespace's), only its kind and what it
    // watches are in evidence: the general edit.
    let mut ways: Vec<String> = Vec::new();
    let mut edits: Vec<String> = Vec::new();
    // One operator's change, the first candidate's: the evidence lists the others, and a fix
    // that spells every team's edit runs past a screen (issue 20).
    for c in resolution.candidates.iter().take(1) {
        let Some((ns, name)) = c.operator.split_once("/deployment/") else {
            continue;
        };
        match operators
            .iter()
            .find(|o| o.namespace == ns && o.name == name)
            .and_then(|op| manifests_serving(ctx, op))
        {
            Some(line) => ways.push(format!("for {}: {line}{}", c.operator, other_team(ctx, ns))),
            None => edits.push(format!("kubectl -n {ns} edit deployment {name}{}", other_team(ctx, ns))),
        }
    }
    if !edits.is_empty() {
        ways.push(format!(
            "add `--namespace={}` to its container's command or args and give its ServiceAccount there the Role and RoleBinding it has where it watches ({})",
            ctx.ns,
            edits.join("; ")
        ));
    }
    let others = match resolution.candidates.len() {
        0 | 1 => String::new(),
        n => format!(" (or another of the {n} operators listed above)"),
    };
    let edit = if ways.is_empty() {
        String::new()
    } else {
        format!(
            ", or have the one that should serve it do so: {}{others}",
            ways.join("; ")
        )
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
            "run one for it ({install}`kubectl microservice operate --namespace {ns}` with its log given as --log-file){edit}; if one of them does serve it, name it with --operator NS/deployment/NAME",
            install = install_command(ctx)
                .map(|line| format!("`{line}`, or "))
                .unwrap_or_default(),
            ns = ctx.ns
        )),
    )]
}

/// The label of a change of the operator in `ns`, when that is another namespace than the
/// object's (another team's operator, serving other namespaces); empty in the object's own.
fn other_team(ctx: &Ctx<'_>, ns: &str) -> String {
    if ns == ctx.ns {
        return String::new();
    }
    format!(
        " {}",
        crate::diagnose::finding::shared_resource(&format!(
            "the operator in {ns}, another team's, which serves other namespaces"
        ))
    )
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
    let plan = crate::install::InstallPlan {
        operator_namespace: op.namespace.clone(),
        watch: watch.clone(),
        image: image.clone(),
        standalone,
        events,
    };
    let rendered = crate::install::objects(&plan)
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
    if image != crate::install::DEFAULT_IMAGE {
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
