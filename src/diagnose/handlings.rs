//! Which operators handled an object: the Deployments that serve its namespace and whose own
//! Pods' logs show a handler's outcome or a cycle end for it ([`handlings`]). Two or more are
//! double handling: a reason of the verdict ([`super::verdict::with_double_handling`]) and a
//! warning of `operator-not-leading`.

use chrono::{DateTime, Duration, Utc};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;

use crate::evidence::Snapshot;
use crate::evidence::operator::OperatorRef;
use crate::kopf::messages::Lifecycle;
use crate::logs::LogSource;
use crate::resource::MicroserviceObject;
use crate::time::from_jiff;

/// One operator's handling of an object, read from its own Pods' logs ([`handlings`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handling {
    /// The operator, `NS/deployment/NAME`.
    pub operator: String,
    /// Its namespace and name.
    pub namespace: String,
    /// Its Deployment's name.
    pub name: String,
    /// Its command line.
    pub command: String,
    /// Its last line that ends a handler's run or a cycle of the object (`Handler 'accept'
    /// succeeded.`, `Creation is processed: ...`), cited with its log, line number and time.
    pub line: String,
}

/// The operator Deployments that serve the object's namespace (by their `--namespace`/`-A`)
/// and whose own Pods' logs show that they handled `obj`: a handler's outcome or a cycle end
/// for it (of its uid, when the line names one), after its creation. The Deployments of the
/// evidence, and the ones `--operator` left out ([`crate::evidence::OperatorEvidence::unchosen`]).
/// Empty unless two or more Deployments serve the namespace (one Deployment's replicas are
/// `operator-not-leading`'s own). A `--log-file` belongs to no Deployment and is not read here.
pub fn handlings(snapshot: &Snapshot, obj: &MicroserviceObject) -> Vec<Handling> {
    let serving = serving(snapshot, obj.metadata.namespace.as_deref().unwrap_or(""));
    if serving.len() < 2 {
        return Vec::new();
    }
    serving
        .into_iter()
        .filter_map(|(op, sources)| {
            let line = last_handled(snapshot, obj, &sources)?;
            Some(Handling {
                operator: op.display(),
                namespace: op.namespace.clone(),
                name: op.name.clone(),
                command: op.argv.join(" "),
                line,
            })
        })
        .collect()
}

/// The operator Deployments that serve namespace `ns`, each with its own Pods' logs (a Pod it
/// selects, or one gone whose name is its `NAME-<hash>-<id>`): those of the evidence, then
/// those `--operator` left out.
fn serving<'s>(snapshot: &'s Snapshot, ns: &str) -> Vec<(OperatorRef, Vec<&'s LogSource>)> {
    let deployments = snapshot.operator.deployments.get().map(Vec::as_slice).unwrap_or(&[]);
    let pods = snapshot.operator.pods.get().map(Vec::as_slice).unwrap_or(&[]);
    let logs = snapshot.operator.logs.get().map(Vec::as_slice).unwrap_or(&[]);
    let mut serving: Vec<(OperatorRef, Vec<&LogSource>)> = snapshot
        .operator
        .operators()
        .into_iter()
        .filter(|op| op.watches(ns))
        .map(|op| {
            let deployment = deployments.iter().find(|d| {
                d.metadata.name.as_deref() == Some(op.name.as_str())
                    && d.metadata.namespace.as_deref() == Some(op.namespace.as_str())
            });
            let own = |pod_name: &str| match pods.iter().find(|p| p.metadata.name.as_deref() == Some(pod_name)) {
                Some(pod) => deployment.is_some_and(|d| selects(d, pod)),
                // The Pod is gone (its log kept): a Deployment names its Pods `NAME-<hash>-<id>`.
                None => pod_name
                    .strip_prefix(&format!("{}-", op.name))
                    .is_some_and(|rest| rest.split('-').count() == 2),
            };
            let mine = logs
                .iter()
                .filter(|s| s.container != crate::logs::file::FILE_CONTAINER && own(&s.pod))
                .collect();
            (op, mine)
        })
        .collect();
    serving.extend(
        snapshot
            .operator
            .unchosen
            .iter()
            .filter(|(op, _)| op.watches(ns))
            .map(|(op, logs)| (op.clone(), logs.iter().collect())),
    );
    serving
}

/// The latest line of `sources` that ends a handler's run or a cycle of `obj` (of its uid when
/// the line names one, not before its creation), cited with its log, line number and time.
fn last_handled(snapshot: &Snapshot, obj: &MicroserviceObject, sources: &[&LogSource]) -> Option<String> {
    let (ns, name) = (
        obj.metadata.namespace.as_deref().unwrap_or(""),
        obj.metadata.name.as_deref().unwrap_or(""),
    );
    let created = obj.metadata.creation_timestamp.as_ref().map(|t| from_jiff(t.0));
    let mut last: Option<(Option<DateTime<Utc>>, String)> = None;
    for source in sources {
        for record in source.records_in(snapshot.log_zone(source)) {
            let about = record
                .object
                .as_ref()
                .is_some_and(|o| o.name == name && o.namespace.as_deref().is_none_or(|n| n == ns));
            let other_uid = record
                .uid
                .as_ref()
                .is_some_and(|u| Some(u) != obj.metadata.uid.as_ref());
            let before = matches!((record.time(), created), (Some(t), Some(c)) if t + Duration::seconds(2) < c);
            let ends = matches!(
                record.lifecycle(),
                Lifecycle::HandlerOutcome { .. } | Lifecycle::CycleProcessed { .. }
            );
            if !about || other_uid || before || !ends {
                continue;
            }
            let time = match record.stamp {
                Some(s) => format!("{} ({})", crate::time::rfc3339_millis(s.at), s.clock.describe()),
                None => "no time in the line".into(),
            };
            let text = record.lines.first().map(String::as_str).unwrap_or("").trim();
            let cite = format!(
                "{}/{} line {}, {time}: {text}",
                source.pod, source.container, record.line_number
            );
            if last.as_ref().is_none_or(|(t, _)| *t <= record.time()) {
                last = Some((record.time(), cite));
            }
        }
    }
    last.map(|(_, line)| line)
}

/// Whether Deployment `d` selects `pod` (its namespace and `matchLabels`).
fn selects(d: &Deployment, pod: &Pod) -> bool {
    let Some(labels) = d.spec.as_ref().and_then(|s| s.selector.match_labels.as_ref()) else {
        return false;
    };
    let pod_labels = pod.metadata.labels.as_ref();
    pod.metadata.namespace == d.metadata.namespace
        && labels.iter().all(|(k, v)| pod_labels.and_then(|l| l.get(k)) == Some(v))
}
