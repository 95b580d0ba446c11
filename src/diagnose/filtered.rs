//! Whether the object's own Kopf operator selects it at all: its resource-changing handlers
//! (create, update, resume, delete, field) for Microservices, read from the source its
//! Deployment mounts, each matched against the object by [`crate::kopf::filters::prematch`].
//! When every one excludes the object, Kopf is blind to it by design (no state, no log line):
//! `status`'s `handler-filtered` reason and `explain-events`' `handler-filtered` finding, each
//! quoting the filters (file:line) and the change of the object that would include it.

use crate::evidence::Snapshot;
use crate::evidence::operator::{OperatorKind, find_operators};
use crate::evidence::resolve::Resolution;
use crate::kopf::filters::Change;
#[cfg(test)]
use crate::kopf::filters::Miss;
use crate::kopf::source::SourceLine;
use crate::resource::MicroserviceObject;

pub use crate::evidence::selection::{Excluding, Filtered, OperatorHandlers};

/// The handlers of the resolved operator against `obj` (pure over the snapshot); to judge many
/// objects, [`read`] once and [`OperatorHandlers::of`] each.
pub fn of(snapshot: &Snapshot, resolution: &Resolution, obj: &MicroserviceObject) -> Filtered {
    read(snapshot, resolution).map_or(Filtered::Unread, |h| h.of(obj))
}

/// The resolved operator's handlers, when it is a Kopf operator's Deployment whose source
/// (the `.py` keys of the ConfigMaps it mounts) is in evidence.
pub fn read(snapshot: &Snapshot, resolution: &Resolution) -> Option<OperatorHandlers> {
    let chosen = resolution.deployment()?;
    let deployments = snapshot.operator.deployments.get()?;
    let op = find_operators(deployments)
        .into_iter()
        .find(|op| op.display() == chosen)?;
    if op.kind != OperatorKind::Kopf {
        return None;
    }
    let deployment = deployments.iter().find(|d| {
        d.metadata.namespace.as_deref() == Some(op.namespace.as_str())
            && d.metadata.name.as_deref() == Some(op.name.as_str())
    })?;
    OperatorHandlers::read_deployment(snapshot, chosen, deployment, snapshot.operator.configmaps.get()?)
}

/// `operator.py:9: @kopf.on.create(...)` (create `accept`): labels={'team': 'payments'}: it
/// wants label team=payments; the object has no label team.
pub fn describe(e: &Excluding) -> Vec<String> {
    let who = match &e.id {
        Some(id) => format!("{} handler `{id}`", e.cause),
        None => format!("{} handler", e.cause),
    };
    e.misses
        .iter()
        .map(|m| format!("{} ({who}): {}: {}", e.at, m.filter, m.why))
        .collect()
}

/// [`describe`] of each handler, in source order (file, line).
pub fn describe_all(handlers: &[Excluding]) -> Vec<String> {
    let mut sorted: Vec<&Excluding> = handlers.iter().collect();
    sorted.sort_by(|a, b| (&a.at.file, a.at.line).cmp(&(&b.at.file, b.at.line)));
    sorted.into_iter().flat_map(describe).collect()
}

/// Each distinct command that includes the object ([`include_command`]), with the decorator
/// lines whose filters it passes: `(command, "operator.py:10, 11, 12")`. `kubectl_type` names
/// the object's resource ([`crate::resource::identity::ResourceId::kubectl_type`]).
pub fn include_commands(
    kubectl_type: &str,
    namespace: &str,
    name: &str,
    handlers: &[Excluding],
) -> Vec<(String, String)> {
    let mut out: Vec<(String, Vec<&SourceLine>)> = Vec::new();
    for e in handlers {
        let Some(command) = include_command(kubectl_type, namespace, name, e) else {
            continue;
        };
        match out.iter_mut().find(|(c, _)| *c == command) {
            Some((_, at)) => at.push(&e.at),
            None => out.push((command, vec![&e.at])),
        }
    }
    out.into_iter()
        .map(|(command, mut at)| {
            at.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
            let file = at.first().map(|a| a.file.clone()).unwrap_or_default();
            let lines: Vec<String> = at.iter().map(|a| a.line.to_string()).collect();
            (command, format!("{file}:{}", lines.join(", ")))
        })
        .collect()
}

/// The commands that give the object what `e`'s filters want (one `kubectl label`, one
/// `kubectl annotate`, one merge patch of spec, joined by `&&`); `None` when a filter it fails
/// has no such change (a `when=` that is always false, any value of a field).
pub fn include_command(kubectl_type: &str, namespace: &str, name: &str, e: &Excluding) -> Option<String> {
    let mut labels = Vec::new();
    let mut annotations = Vec::new();
    let mut spec = serde_json::Map::new();
    let (mut label_overwrite, mut annotate_overwrite) = (false, false);
    for m in &e.misses {
        match m.change.as_ref()? {
            Change::Label { key, value, overwrite } => {
                labels.push(assignment(key, value.as_deref()));
                label_overwrite |= overwrite;
            }
            Change::Annotation { key, value, overwrite } => {
                annotations.push(assignment(key, value.as_deref()));
                annotate_overwrite |= overwrite;
            }
            Change::Field { path, value } => set(&mut spec, &path[1..], value.clone()),
        }
    }
    let target = format!("-n {namespace} {kubectl_type}/{name}");
    let mut commands = Vec::new();
    let flag = |on: bool| if on { " --overwrite" } else { "" };
    if !labels.is_empty() {
        commands.push(format!(
            "kubectl label {target} {}{}",
            labels.join(" "),
            flag(label_overwrite)
        ));
    }
    if !annotations.is_empty() {
        commands.push(format!(
            "kubectl annotate {target} {}{}",
            annotations.join(" "),
            flag(annotate_overwrite)
        ));
    }
    if !spec.is_empty() {
        let patch = serde_json::json!({ "spec": spec }).to_string();
        commands.push(format!(
            "kubectl patch {target} --type=merge -p {}",
            shell_quote(&patch)
        ));
    }
    (!commands.is_empty()).then(|| commands.join(" && "))
}

/// `key=value` (shell-quoted when needed), or `key-` to remove it.
fn assignment(key: &str, value: Option<&str>) -> String {
    match value {
        Some(v) => shell_quote(&format!("{key}={v}")),
        None => shell_quote(&format!("{key}-")),
    }
}

fn set(map: &mut serde_json::Map<String, serde_json::Value>, path: &[String], value: serde_json::Value) {
    match path {
        [] => {}
        [last] => {
            map.insert(last.clone(), value);
        }
        [first, rest @ ..] => {
            let inner = map
                .entry(first.clone())
                .or_insert_with(|| serde_json::Value::Object(Default::default()));
            if let serde_json::Value::Object(inner) = inner {
                set(inner, rest, value);
            }
        }
    }
}

/// `s` as one shell word: bare when plain, else in single quotes.
fn shell_quote(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "._-/:=@+,".contains(c)) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// How the reason's evidence gives the change that includes the object (`status`'s `Next:`
/// quotes what follows).
pub const TO_HAVE_IT_HANDLED: &str = "to have it handled: ";

/// `status`'s reason for a never-handled object that every handler excludes.
pub fn reason(
    kubectl_type: &str,
    namespace: &str,
    name: &str,
    filtered: &Filtered,
) -> Option<crate::diagnose::staleness::Reason> {
    let Filtered::Excluded { operator, handlers } = filtered else {
        return None;
    };
    let mut evidence = describe_all(handlers);
    if let Some((command, _)) = include_commands(kubectl_type, namespace, name, handlers)
        .into_iter()
        .next()
    {
        evidence.push(format!("{TO_HAVE_IT_HANDLED}{command}"));
    }
    Some(crate::diagnose::staleness::Reason {
        code: "handler-filtered",
        message: format!(
            "not handled by design: no handler of {operator} selects this object (its handler filters exclude it), so Kopf ignores it and writes nothing"
        ),
        evidence,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn excluding(misses: Vec<Miss>) -> Excluding {
        Excluding {
            at: SourceLine {
                file: "operator.py".into(),
                line: 9,
                text: "@kopf.on.create('microservices', labels={'team': 'payments'})".into(),
            },
            cause: "create",
            id: Some("accept".into()),
            misses,
        }
    }

    #[test]
    fn the_include_command_sets_what_each_filter_wants() {
        let miss = |change: Change| Miss {
            filter: "f".into(),
            why: "w".into(),
            change: Some(change),
        };
        let e = excluding(vec![
            miss(Change::Label {
                key: "team".into(),
                value: Some("payments".into()),
                overwrite: true,
            }),
            miss(Change::Label {
                key: "legacy".into(),
                value: None,
                overwrite: false,
            }),
            miss(Change::Annotation {
                key: "example.com/owner".into(),
                value: Some("a b".into()),
                overwrite: false,
            }),
            miss(Change::Field {
                path: vec!["spec".into(), "tier".into()],
                value: serde_json::json!("it's"),
            }),
        ]);
        assert_eq!(
            include_command("microservice", "shop", "pay-api", &e).unwrap(),
            concat!(
                "kubectl label -n shop microservice/pay-api team=payments legacy- --overwrite && ",
                "kubectl annotate -n shop microservice/pay-api 'example.com/owner=a b' && ",
                r#"kubectl patch -n shop microservice/pay-api --type=merge -p '{"spec":{"tier":"it'\''s"}}'"#
            )
        );
        assert_eq!(
            describe(&e)[0],
            "operator.py:9: @kopf.on.create('microservices', labels={'team': 'payments'}) (create handler `accept`): f: w"
        );
        // A filter without a change of the object: no command.
        let e = excluding(vec![Miss {
            filter: "when=lambda **_: False".into(),
            why: "w".into(),
            change: None,
        }]);
        assert_eq!(include_command("microservice", "shop", "pay-api", &e), None);
    }

    /// Another resource's object (`--resource`) is named by its own type, never `microservice/`:
    /// the command pasted changes that object.
    #[test]
    fn the_include_command_names_the_objects_own_resource() {
        let e = excluding(vec![Miss {
            filter: "f".into(),
            why: "w".into(),
            change: Some(Change::Label {
                key: "somelabel".into(),
                value: Some("somevalue".into()),
                overwrite: false,
            }),
        }]);
        assert_eq!(
            include_command("kopfexamples.kopf.dev", "default", "kopf-example-1", &e).unwrap(),
            "kubectl label -n default kopfexamples.kopf.dev/kopf-example-1 somelabel=somevalue"
        );
    }
}
