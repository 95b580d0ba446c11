//! The effective command line of a container, as the kubelet and the container runtime make
//! it: the container's `env` resolved in order (`value` with `$(VAR)` expanded over the earlier
//! entries, `valueFrom.fieldRef` from the Pod, `configMapKeyRef` from a ConfigMap in evidence),
//! then `command`/`args` expanded over that environment, over the image's ENTRYPOINT/CMD. Pure.
//!
//! The rules are the kubelet's (v1.28): `third_party/forked/golang/expansion` (`Expand`,
//! `MappingFuncFor`: `$(VAR)` is replaced when VAR is defined, else kept literally; `$$` is one
//! `$`; any other `$` is kept), `pkg/kubelet/kubelet_pods.go` (`makeEnvironmentVariables`:
//! `envFrom` first, then each `env` entry, whose `value` is expanded over the entries before it;
//! `valueFrom` values are never expanded), `pkg/kubelet/container/helpers.go`
//! (`ExpandContainerCommandAndArgs`), and the runtime's image rule: `command` replaces the
//! image's ENTRYPOINT and drops its CMD; `args` alone replace the CMD; neither runs the image's
//! ENTRYPOINT and CMD.
//!
//! The image's config (ENTRYPOINT, CMD, ENV) is not in a snapshot: the Pod's
//! `containerStatuses[].imageID` names the image, not its command. When the command line comes
//! from the image, [`CommandLine::entrypoint`] says so and the argv holds what is known (the
//! `args`, or nothing). Secrets' values are never read: a `secretKeyRef` is a named gap.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ConfigMap, Container, Pod};

/// Expands `$(VAR)` references in `input` as the kubelet does (`expansion.Expand`): a defined
/// VAR (`mapping` gives `Some`) is replaced by its value; an undefined one stays `$(VAR)`
/// literally and its name is returned; `$$` is an escaped `$`; a `$` that begins neither (`$x`,
/// an unclosed `$(`, a final `$`) is kept as written.
///
/// Returns the expanded string and the names of the references that stayed literal, in order.
pub fn expand(input: &str, mapping: impl Fn(&str) -> Option<String>) -> (String, Vec<String>) {
    let bytes = input.as_bytes();
    let mut out = String::with_capacity(input.len());
    let mut unresolved = Vec::new();
    let mut checkpoint = 0;
    let mut cursor = 0;
    while cursor < bytes.len() {
        if bytes[cursor] == b'$' && cursor + 1 < bytes.len() {
            out.push_str(&input[checkpoint..cursor]);
            let rest = &input[cursor + 1..];
            let advance = match rest.as_bytes()[0] {
                b'$' => {
                    out.push('$');
                    1
                }
                b'(' => match rest[1..].find(')') {
                    Some(close) => {
                        let name = &rest[1..1 + close];
                        match mapping(name) {
                            Some(value) => out.push_str(&value),
                            None => {
                                out.push_str(&format!("$({name})"));
                                unresolved.push(name.to_string());
                            }
                        }
                        close + 2
                    }
                    // Incomplete reference: `$(` kept, the rest read on.
                    None => {
                        out.push_str("$(");
                        1
                    }
                },
                _ => {
                    // `$` and the character after it, kept (that character may be multi-byte).
                    let ch = rest.chars().next().expect("rest is not empty");
                    out.push('$');
                    out.push(ch);
                    ch.len_utf8()
                }
            };
            cursor += advance;
            checkpoint = cursor + 1;
        }
        cursor += 1;
    }
    if checkpoint < input.len() {
        out.push_str(&input[checkpoint..]);
    }
    (out, unresolved)
}

/// What of the Pod a `fieldRef` may read: from a Pod in evidence when there is one, else from
/// the Deployment's Pod template (its namespace, labels, annotations and ServiceAccount are the
/// Pods'; their name, uid, node and IPs are not known until a Pod exists).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PodFacts {
    /// `metadata.namespace`: the Deployment's namespace.
    pub namespace: Option<String>,
    /// `metadata.name`.
    pub name: Option<String>,
    /// `metadata.uid`.
    pub uid: Option<String>,
    /// `metadata.labels`.
    pub labels: BTreeMap<String, String>,
    /// `metadata.annotations`.
    pub annotations: BTreeMap<String, String>,
    /// `spec.nodeName`.
    pub node_name: Option<String>,
    /// `spec.serviceAccountName` (`default` when unset).
    pub service_account: Option<String>,
    /// `status.podIP`.
    pub pod_ip: Option<String>,
    /// `status.hostIP`.
    pub host_ip: Option<String>,
}

impl PodFacts {
    /// What a Pod made from a Deployment's template in `namespace` is known to have before it
    /// exists: `template` is the Deployment's `spec.template`.
    pub fn of_template(namespace: Option<&str>, template: &k8s_openapi::api::core::v1::PodTemplateSpec) -> Self {
        let meta = template.metadata.as_ref();
        PodFacts {
            namespace: namespace.map(str::to_string),
            labels: meta.and_then(|m| m.labels.clone()).unwrap_or_default(),
            annotations: meta.and_then(|m| m.annotations.clone()).unwrap_or_default(),
            service_account: Some(
                template
                    .spec
                    .as_ref()
                    .and_then(|s| s.service_account_name.clone())
                    .filter(|s| !s.is_empty())
                    .unwrap_or_else(|| "default".into()),
            ),
            ..PodFacts::default()
        }
    }

    /// The facts of a Pod as the API returned it (its own labels, name, node and IPs).
    pub fn of_pod(pod: &Pod) -> Self {
        let spec = pod.spec.as_ref();
        let status = pod.status.as_ref();
        PodFacts {
            namespace: pod.metadata.namespace.clone(),
            name: pod.metadata.name.clone(),
            uid: pod.metadata.uid.clone(),
            labels: pod.metadata.labels.clone().unwrap_or_default(),
            annotations: pod.metadata.annotations.clone().unwrap_or_default(),
            node_name: spec.and_then(|s| s.node_name.clone()),
            service_account: Some(
                spec.and_then(|s| s.service_account_name.clone())
                    .filter(|s| !s.is_empty())
                    .unwrap_or_else(|| "default".into()),
            ),
            pod_ip: status.and_then(|s| s.pod_ip.clone()),
            host_ip: status.and_then(|s| s.host_ip.clone()),
        }
    }

    /// The value of a `fieldRef.fieldPath` (the kubelet's `podFieldSelectorRuntimeValue`), or
    /// why it is not known.
    pub fn field(&self, path: &str) -> Result<String, String> {
        let known = |v: &Option<String>| {
            v.clone()
                .ok_or_else(|| format!("{path} is not known before its Pod exists"))
        };
        if let Some(key) = subscript(path, "metadata.labels") {
            return self
                .labels
                .get(key)
                .cloned()
                .ok_or_else(|| format!("the Pod has no label {key}"));
        }
        if let Some(key) = subscript(path, "metadata.annotations") {
            return self
                .annotations
                .get(key)
                .cloned()
                .ok_or_else(|| format!("the Pod has no annotation {key}"));
        }
        match path {
            "metadata.namespace" => known(&self.namespace),
            "metadata.name" => known(&self.name),
            "metadata.uid" => known(&self.uid),
            "spec.nodeName" => known(&self.node_name),
            "spec.serviceAccountName" => known(&self.service_account),
            "status.podIP" | "status.podIPs" => known(&self.pod_ip),
            "status.hostIP" | "status.hostIPs" => known(&self.host_ip),
            other => Err(format!("fieldPath {other} is not read")),
        }
    }
}

/// `metadata.labels['k']` → `k` (kubectl and the API write it with single quotes).
fn subscript<'a>(path: &'a str, prefix: &str) -> Option<&'a str> {
    let rest = path.strip_prefix(prefix)?.strip_prefix("['")?;
    rest.strip_suffix("']")
}

/// A container's environment as far as the evidence gives it, in the kubelet's order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResolvedEnv {
    /// Each variable and its value; `None` when the evidence does not give it (a Secret, a
    /// ConfigMap not in evidence, a field of a Pod that does not exist yet).
    pub vars: BTreeMap<String, Option<String>>,
    /// Why each unknown variable is unknown, one line each: `NAMESPACE: secretKeyRef ops/token`.
    pub gaps: Vec<String>,
}

impl ResolvedEnv {
    /// The value of `name`, when known.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars.get(name).and_then(|v| v.as_deref())
    }
}

/// The environment of `container` in a Pod described by `pod`, as the kubelet makes it
/// (`makeEnvironmentVariables`): `envFrom` first (a ConfigMap in `configmaps`, each key with
/// its `prefix`; a Secret's keys are never read), then each `env` entry in order, a later one
/// replacing an earlier one of the same name. A `value` is expanded over the variables defined
/// before it (an unknown one stays `$(VAR)` literally); a `valueFrom` is read as is.
pub fn resolve_env(container: &Container, pod: &PodFacts, configmaps: &[ConfigMap]) -> ResolvedEnv {
    let cm = |name: &str| {
        configmaps
            .iter()
            .find(|c| c.metadata.name.as_deref() == Some(name) && c.metadata.namespace == pod.namespace)
            .or_else(|| {
                configmaps
                    .iter()
                    .find(|c| c.metadata.name.as_deref() == Some(name) && c.metadata.namespace.is_none())
            })
    };
    let mut env = ResolvedEnv::default();
    for from in container.env_from.iter().flatten() {
        if let Some(r) = &from.config_map_ref {
            match cm(&r.name).and_then(|c| c.data.as_ref()) {
                Some(data) => {
                    let prefix = from.prefix.clone().unwrap_or_default();
                    for (k, v) in data {
                        env.vars.insert(format!("{prefix}{k}"), Some(v.clone()));
                    }
                }
                None => env.gaps.push(format!("envFrom ConfigMap {}: not in evidence", r.name)),
            }
        }
        if let Some(r) = &from.secret_ref {
            env.gaps
                .push(format!("envFrom Secret {}: Secrets are never read", r.name));
        }
    }
    for e in container.env.iter().flatten() {
        let value = match (&e.value, &e.value_from) {
            (Some(v), _) if !v.is_empty() => {
                let (expanded, missing) = expand(v, |name| env.get(name).map(str::to_string));
                for name in missing {
                    env.gaps.push(format!(
                        "{}: $({name}) is not defined before it, kept literally",
                        e.name
                    ));
                }
                Ok(expanded)
            }
            (_, Some(from)) => value_from(from, pod, &cm),
            // `value: ""` (or none): the empty string.
            _ => Ok(String::new()),
        };
        match value {
            Ok(v) => {
                env.vars.insert(e.name.clone(), Some(v));
            }
            Err(why) => {
                env.gaps.push(format!("{}: {why}", e.name));
                env.vars.insert(e.name.clone(), None);
            }
        }
    }
    env
}

fn value_from<'c>(
    from: &k8s_openapi::api::core::v1::EnvVarSource,
    pod: &PodFacts,
    cm: &impl Fn(&str) -> Option<&'c ConfigMap>,
) -> Result<String, String> {
    if let Some(f) = &from.field_ref {
        return pod.field(&f.field_path);
    }
    if let Some(r) = &from.config_map_key_ref {
        return match cm(&r.name) {
            Some(c) => c
                .data
                .as_ref()
                .and_then(|d| d.get(&r.key))
                .cloned()
                .ok_or_else(|| format!("ConfigMap {} has no key {}", r.name, r.key)),
            None => Err(format!("configMapKeyRef {}/{}: not in evidence", r.name, r.key)),
        };
    }
    if let Some(r) = &from.secret_key_ref {
        return Err(format!("secretKeyRef {}/{}: Secrets are never read", r.name, r.key));
    }
    if let Some(r) = &from.resource_field_ref {
        return Err(format!("resourceFieldRef {}: not read", r.resource));
    }
    Err("an empty valueFrom".into())
}

/// Where the first words of a command line come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entrypoint {
    /// The container's `command`: the argv is all of it (the image's CMD is dropped).
    Command,
    /// The image's ENTRYPOINT, not in evidence, followed by the container's `args` (the argv).
    ImageWithArgs,
    /// The image's ENTRYPOINT and CMD, neither in evidence: the argv is empty.
    Image,
}

/// A container's command line as the runtime starts it, as far as the evidence gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandLine {
    /// The container's name.
    pub container: String,
    /// Its image reference, as the Pod template gives it.
    pub image: String,
    /// Where the argv starts ([`Entrypoint`]).
    pub entrypoint: Entrypoint,
    /// The known words, `$(VAR)` expanded: `command` then `args`, or only `args` after the
    /// image's ENTRYPOINT, or nothing.
    pub argv: Vec<String>,
    /// The environment it was expanded over.
    pub env: ResolvedEnv,
    /// Each `$(VAR)` of the command line that stayed literal, and why: `$(NAMESPACE): ...`.
    pub gaps: Vec<String>,
}

impl CommandLine {
    /// The command line of `container` in a Pod described by `pod` (`ExpandContainerCommandAndArgs`
    /// over [`resolve_env`]).
    pub fn of(container: &Container, pod: &PodFacts, configmaps: &[ConfigMap]) -> Self {
        let env = resolve_env(container, pod, configmaps);
        let mut gaps = Vec::new();
        let mut expand_all = |words: &[String]| -> Vec<String> {
            words
                .iter()
                .map(|w| {
                    let (expanded, missing) = expand(w, |name| env.get(name).map(str::to_string));
                    for name in missing {
                        let why = match env.vars.get(&name) {
                            Some(None) => env
                                .gaps
                                .iter()
                                .find(|g| g.starts_with(&format!("{name}: ")))
                                .map(|g| g[name.len() + 2..].to_string())
                                .unwrap_or_else(|| "its value is not in evidence".into()),
                            _ => "no env entry defines it (the image's ENV and Service variables are not in evidence)"
                                .into(),
                        };
                        gaps.push(format!("$({name}) kept literally: {why}"));
                    }
                    expanded
                })
                .collect()
        };
        let command = container.command.clone().unwrap_or_default();
        let args = container.args.clone().unwrap_or_default();
        let (entrypoint, argv) = if !command.is_empty() {
            let mut argv = expand_all(&command);
            argv.extend(expand_all(&args));
            (Entrypoint::Command, argv)
        } else if !args.is_empty() {
            (Entrypoint::ImageWithArgs, expand_all(&args))
        } else {
            (Entrypoint::Image, Vec::new())
        };
        CommandLine {
            container: container.name.clone(),
            image: container.image.clone().unwrap_or_default(),
            entrypoint,
            argv,
            env,
            gaps,
        }
    }

    /// The command line as a user reads it: `<image ENTRYPOINT> run --namespace=todo op.py`.
    pub fn display(&self) -> String {
        let head = match self.entrypoint {
            Entrypoint::Command => None,
            Entrypoint::ImageWithArgs => Some(format!("<ENTRYPOINT of {}>", self.image)),
            Entrypoint::Image => Some(format!("<ENTRYPOINT and CMD of {}>", self.image)),
        };
        head.into_iter()
            .chain(self.argv.iter().cloned())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: BTreeMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |name| m.get(name).cloned()
    }

    /// The cases of the kubelet's `expansion` tests (`third_party/forked/golang/expansion`).
    #[test]
    fn expands_as_the_kubelet_does() {
        let m = map(&[
            ("VAR_A", "A"),
            ("VAR_B", "B"),
            ("VAR_C", "C"),
            ("VAR_REF", "$(VAR_A)"),
            ("VAR_EMPTY", ""),
        ]);
        let cases = [
            ("$(VAR_A)", "A"),
            ("___$(VAR_B)___", "___B___"),
            ("$(VAR_A)-$(VAR_B)-$(VAR_C)", "A-B-C"),
            ("$(VAR_A)$(VAR_B)", "AB"),
            // A value is not expanded again.
            ("$(VAR_REF)", "$(VAR_A)"),
            ("$(VAR_EMPTY)", ""),
            ("foo$(VAR_EMPTY)bar", "foobar"),
            // Escapes.
            ("$$(VAR_B)", "$(VAR_B)"),
            ("$$$(VAR_A)", "$A"),
            ("$$$$(VAR_A)", "$$(VAR_A)"),
            ("f00__(VAR_A)__", "f00__(VAR_A)__"),
            ("$$", "$"),
            ("$$$$", "$$"),
            ("VAR_A$$", "VAR_A$"),
            // A `$` that begins nothing is kept.
            ("$", "$"),
            ("foo$", "foo$"),
            ("$VAR_A", "$VAR_A"),
            ("$ VAR_A", "$ VAR_A"),
            ("$(", "$("),
            ("$(VAR_A", "$(VAR_A"),
            ("$(VAR_A$(VAR_B)", "$(VAR_A$(VAR_B)"),
            ("$()", "$()"),
            ("$(VAR_DNE)", "$(VAR_DNE)"),
            ("$(VAR_A)$(VAR_DNE)", "A$(VAR_DNE)"),
        ];
        for (input, want) in cases {
            assert_eq!(expand(input, &m).0, want, "{input}");
        }
        assert_eq!(expand("$(VAR_A)$(X)$(Y)", &m).1, ["X", "Y"]);
        assert_eq!(expand("$(VAR_A$(VAR_B)", &m).1, ["VAR_A$(VAR_B"]);
    }

    fn container(v: serde_json::Value) -> Container {
        serde_json::from_value(v).unwrap()
    }

    fn template_pod() -> PodFacts {
        PodFacts::of_template(
            Some("team-a"),
            &serde_json::from_value(json!({
                "metadata": {"labels": {"app": "op"}, "annotations": {"team": "a"}},
                "spec": {"serviceAccountName": "op-sa", "containers": []}
            }))
            .unwrap(),
        )
    }

    /// The chart shape of issue 18: `args` only, `NAMESPACE` from a fieldRef.
    #[test]
    fn args_over_the_images_entrypoint_with_a_field_ref() {
        let c = container(json!({
            "name": "operator", "image": "registry.example/team-a/op:1.0",
            "args": ["run", "--standalone", "--namespace=$(NAMESPACE)", "/operator/operator.py"],
            "env": [{"name": "NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}]
        }));
        let line = CommandLine::of(&c, &template_pod(), &[]);
        assert_eq!(line.entrypoint, Entrypoint::ImageWithArgs);
        assert_eq!(
            line.argv,
            ["run", "--standalone", "--namespace=team-a", "/operator/operator.py"]
        );
        assert!(line.gaps.is_empty());
        assert_eq!(
            line.display(),
            "<ENTRYPOINT of registry.example/team-a/op:1.0> run --standalone --namespace=team-a /operator/operator.py"
        );
    }

    /// Kopf's own docs' Deployment: no `command`, no `args`.
    #[test]
    fn neither_command_nor_args_is_the_images() {
        let c = container(json!({"name": "the-only-one", "image": "nolar/kopf-operator"}));
        let line = CommandLine::of(&c, &template_pod(), &[]);
        assert_eq!((line.entrypoint, line.argv.len()), (Entrypoint::Image, 0));
        assert_eq!(line.display(), "<ENTRYPOINT and CMD of nolar/kopf-operator>");
    }

    #[test]
    fn command_replaces_the_entrypoint_and_args_follow() {
        let c = container(json!({
            "name": "c", "image": "python:3.12", "command": ["kopf", "run"], "args": ["-n", "$(NS)", "op.py"],
            "env": [{"name": "NS", "value": "todo"}]
        }));
        let line = CommandLine::of(&c, &template_pod(), &[]);
        assert_eq!(line.entrypoint, Entrypoint::Command);
        assert_eq!(line.argv, ["kopf", "run", "-n", "todo", "op.py"]);
    }

    #[test]
    fn env_refers_to_earlier_entries_only() {
        let c = container(json!({
            "name": "c", "image": "x",
            "env": [
                {"name": "B", "value": "$(A)-early"},
                {"name": "A", "value": "a"},
                {"name": "C", "value": "$(A)-$(B)-$$(A)"},
                {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                {"name": "SA", "valueFrom": {"fieldRef": {"fieldPath": "spec.serviceAccountName"}}},
                {"name": "APP", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}},
                {"name": "TEAM", "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['team']"}}},
                {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "op", "key": "token"}}},
                {"name": "LEVEL", "valueFrom": {"configMapKeyRef": {"name": "op-config", "key": "level"}}},
                {"name": "EMPTY", "value": ""}
            ]
        }));
        let cm: ConfigMap = serde_json::from_value(json!({
            "metadata": {"name": "op-config", "namespace": "team-a"}, "data": {"level": "debug"}
        }))
        .unwrap();
        let env = resolve_env(&c, &template_pod(), std::slice::from_ref(&cm));
        assert_eq!(env.get("B"), Some("$(A)-early"));
        assert_eq!(env.get("C"), Some("a-$(A)-early-$(A)"));
        assert_eq!(env.get("SA"), Some("op-sa"));
        assert_eq!(env.get("APP"), Some("op"));
        assert_eq!(env.get("TEAM"), Some("a"));
        assert_eq!(env.get("LEVEL"), Some("debug"));
        assert_eq!(env.get("EMPTY"), Some(""));
        assert_eq!(env.get("POD"), None);
        assert_eq!(env.get("TOKEN"), None);
        assert!(
            env.gaps
                .iter()
                .any(|g| g == "TOKEN: secretKeyRef op/token: Secrets are never read"),
            "{:?}",
            env.gaps
        );
        assert!(
            env.gaps
                .iter()
                .any(|g| g.starts_with("POD: metadata.name is not known"))
        );
        // Without the ConfigMap in evidence, its key is a gap.
        let env = resolve_env(&c, &template_pod(), &[]);
        assert_eq!(env.get("LEVEL"), None);
        // A Pod in evidence gives its name.
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": "op-5d7f9c-x2x", "namespace": "team-a", "uid": "u1"},
            "spec": {"containers": [], "nodeName": "node-1"}, "status": {"podIP": "10.0.0.7"}
        }))
        .unwrap();
        let env = resolve_env(&c, &PodFacts::of_pod(&pod), &[cm]);
        assert_eq!(env.get("POD"), Some("op-5d7f9c-x2x"));
    }

    #[test]
    fn an_unresolvable_reference_stays_literal_and_is_a_named_gap() {
        let c = container(json!({
            "name": "c", "image": "x", "command": ["kopf", "run", "--namespace=$(WATCH)", "--peering=$(PEER)", "op.py"],
            "env": [{"name": "WATCH", "valueFrom": {"secretKeyRef": {"name": "s", "key": "ns"}}}]
        }));
        let line = CommandLine::of(&c, &template_pod(), &[]);
        assert_eq!(line.argv[2], "--namespace=$(WATCH)");
        assert_eq!(line.argv[3], "--peering=$(PEER)");
        assert_eq!(
            line.gaps,
            [
                "$(WATCH) kept literally: secretKeyRef s/ns: Secrets are never read",
                "$(PEER) kept literally: no env entry defines it (the image's ENV and Service variables are not in evidence)"
            ]
        );
    }

    #[test]
    fn env_from_a_config_map_with_a_prefix_and_env_after_it_wins() {
        let c = container(json!({
            "name": "c", "image": "x", "args": ["run", "-n", "$(OP_NS)"],
            "envFrom": [{"configMapRef": {"name": "op-env"}, "prefix": "OP_"}, {"secretRef": {"name": "op-secret"}}],
            "env": [{"name": "OP_LEVEL", "value": "info"}]
        }));
        let cm: ConfigMap = serde_json::from_value(json!({
            "metadata": {"name": "op-env", "namespace": "team-a"}, "data": {"NS": "shop", "LEVEL": "debug"}
        }))
        .unwrap();
        let line = CommandLine::of(&c, &template_pod(), &[cm]);
        assert_eq!(line.argv, ["run", "-n", "shop"]);
        assert_eq!(line.env.get("OP_LEVEL"), Some("info"));
        assert!(line.env.gaps.iter().any(|g| g.contains("envFrom Secret op-secret")));
    }
}
