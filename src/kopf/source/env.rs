//! The operator container's environment, as far as its Deployment and the ConfigMaps in
//! evidence give it: what decides the source's `os.environ` conditions
//! ([`super::conditions`]). Secrets are never read.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Container};

/// One variable of the operator container's environment, as far as the evidence gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvValue {
    /// A literal `env[].value`.
    Literal(String),
    /// `valueFrom.configMapKeyRef` (or `envFrom.configMapRef`): the value when that ConfigMap is
    /// in evidence and has the key; `None` when it is not (an optional ref to a missing key
    /// leaves the variable unset, which is not known either).
    ConfigMap {
        /// The ConfigMap's name.
        name: String,
        /// Its key.
        key: String,
        /// The value, when known.
        value: Option<String>,
    },
    /// `valueFrom.secretKeyRef` (or `envFrom.secretRef`). Its value is never collected nor printed.
    Secret {
        /// The Secret's name.
        name: String,
        /// Its key.
        key: String,
    },
    /// Anything else the value depends on (`fieldRef`, `resourceFieldRef`, `$(VAR)` expansion).
    Other(String),
}

/// The operator container's environment from its Deployment (`env`, `envFrom`; Kubernetes gives
/// `env` precedence over `envFrom`, the last `envFrom` source winning among them). The image's
/// own `ENV` is not in evidence: a variable the Deployment does not set is unknown, never
/// "unset".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Env {
    vars: BTreeMap<String, EnvValue>,
    /// Where the variables come from, for evidence: `env of container operator`.
    source: String,
    /// `envFrom` sources whose keys are not in evidence (a Secret, a ConfigMap not collected):
    /// any variable may come from them.
    opaque: Vec<String>,
}

impl Env {
    /// No environment in evidence: every lookup is unknown.
    pub fn unknown() -> Self {
        Env::default()
    }

    /// The environment of `container`, resolving `configMapKeyRef`/`configMapRef` against
    /// `configmaps` (those of its namespace in evidence). Secrets are never read.
    pub fn of_container(container: &Container, configmaps: &[ConfigMap]) -> Self {
        let cm = |name: &str| configmaps.iter().find(|c| c.metadata.name.as_deref() == Some(name));
        let mut vars = BTreeMap::new();
        let mut opaque = Vec::new();
        for from in container.env_from.iter().flatten() {
            let prefix = from.prefix.clone().unwrap_or_default();
            if let Some(r) = &from.secret_ref {
                opaque.push(format!("envFrom Secret {}", r.name));
            }
            if let Some(r) = &from.config_map_ref {
                if cm(&r.name).is_none() {
                    opaque.push(format!("envFrom ConfigMap {} (not in evidence)", r.name));
                }
                if let Some(data) = cm(&r.name).and_then(|c| c.data.as_ref()) {
                    for (k, v) in data {
                        vars.insert(
                            format!("{prefix}{k}"),
                            EnvValue::ConfigMap {
                                name: r.name.clone(),
                                key: k.clone(),
                                value: Some(v.clone()),
                            },
                        );
                    }
                }
            }
        }
        for e in container.env.iter().flatten() {
            let value = match (&e.value, &e.value_from) {
                (Some(v), _) if v.contains("$(") => EnvValue::Other(format!("`{v}` uses $(VAR) expansion")),
                (Some(v), _) => EnvValue::Literal(v.clone()),
                (None, Some(from)) => {
                    if let Some(r) = &from.config_map_key_ref {
                        EnvValue::ConfigMap {
                            name: r.name.clone(),
                            key: r.key.clone(),
                            value: cm(&r.name)
                                .and_then(|c| c.data.as_ref())
                                .and_then(|d| d.get(&r.key))
                                .cloned(),
                        }
                    } else if let Some(r) = &from.secret_key_ref {
                        EnvValue::Secret {
                            name: r.name.clone(),
                            key: r.key.clone(),
                        }
                    } else if from.field_ref.is_some() {
                        EnvValue::Other("a fieldRef".into())
                    } else {
                        EnvValue::Other("a resourceFieldRef".into())
                    }
                }
                // `value: ""` is serialized as no value: the empty string.
                (None, None) => EnvValue::Literal(String::new()),
            };
            vars.insert(e.name.clone(), value);
        }
        Env {
            vars,
            source: format!("env of container {}", container.name),
            opaque,
        }
    }

    /// The environment of the Deployment's container `name`, with the ConfigMaps in evidence.
    pub fn of_deployment(deployment: &Deployment, container: &str, configmaps: &[ConfigMap]) -> Self {
        let namespace = deployment.metadata.namespace.as_deref();
        let same_ns: Vec<ConfigMap> = configmaps
            .iter()
            .filter(|c| c.metadata.namespace.as_deref().is_none_or(|n| Some(n) == namespace))
            .cloned()
            .collect();
        deployment
            .spec
            .as_ref()
            .and_then(|s| s.template.spec.as_ref())
            .and_then(|s| s.containers.iter().find(|c| c.name == container))
            .map(|c| Env::of_container(c, &same_ns))
            .unwrap_or_default()
    }

    /// Whether nothing of the env is in evidence ([`Env::unknown`]).
    pub fn is_unknown(&self) -> bool {
        self.source.is_empty()
    }

    /// A variable's value: `Ok(value)` when known (with where it came from, in words, never a
    /// Secret's value), `Err(why not)` otherwise.
    pub fn lookup(&self, name: &str) -> Result<(String, String), String> {
        match self.vars.get(name) {
            Some(EnvValue::Literal(v)) => Ok((v.clone(), self.source.clone())),
            Some(EnvValue::ConfigMap {
                name: cm,
                key,
                value: Some(v),
            }) => Ok((v.clone(), format!("{}, from ConfigMap {cm} key {key}", self.source))),
            Some(EnvValue::ConfigMap {
                name: cm,
                key,
                value: None,
            }) => Err(format!(
                "{name} comes from ConfigMap {cm} key {key}, which is not in evidence"
            )),
            Some(EnvValue::Secret { name: secret, key }) => Err(format!(
                "{name} comes from Secret {secret} key {key}, whose value is never collected"
            )),
            Some(EnvValue::Other(what)) => Err(format!("{name} comes from {what}")),
            None if self.source.is_empty() => Err(format!("the operator's env is not in evidence to tell {name}")),
            None if !self.opaque.is_empty() => Err(format!(
                "{name} is not in the {}, but may come from {}",
                self.source,
                self.opaque.join(", ")
            )),
            None => Err(format!(
                "{name} is not set in the {}; the image's own ENV is not in evidence",
                self.source
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn container(v: serde_json::Value) -> Container {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn env_beats_env_from_and_configmaps_give_their_values() {
        let c = container(serde_json::json!({"name": "op",
            "envFrom": [{"configMapRef": {"name": "all"}}],
            "env": [{"name": "A", "value": "from-env"}, {"name": "E", "value": ""}]}));
        let cm: ConfigMap =
            serde_json::from_value(serde_json::json!({"metadata": {"name": "all"}, "data": {"A": "cm", "B": "cm-b"}}))
                .unwrap();
        let env = Env::of_container(&c, &[cm]);
        assert_eq!(
            env.lookup("A").unwrap(),
            ("from-env".into(), "env of container op".into())
        );
        assert_eq!(
            env.lookup("B").unwrap(),
            ("cm-b".into(), "env of container op, from ConfigMap all key B".into())
        );
        assert_eq!(env.lookup("E").unwrap().0, "");
        assert_eq!(
            env.lookup("C").unwrap_err(),
            "C is not set in the env of container op; the image's own ENV is not in evidence"
        );
        assert!(!env.is_unknown());
    }

    #[test]
    fn what_the_evidence_does_not_give_is_unknown_never_unset() {
        let env = Env::unknown();
        assert!(env.is_unknown());
        assert_eq!(
            env.lookup("X").unwrap_err(),
            "the operator's env is not in evidence to tell X"
        );
        let c = container(serde_json::json!({"name": "op", "env": [{"name": "X", "value": "$(Y)-z"}]}));
        assert_eq!(
            Env::of_container(&c, &[]).lookup("X").unwrap_err(),
            "X comes from `$(Y)-z` uses $(VAR) expansion"
        );
        let c = container(serde_json::json!({"name": "op", "envFrom": [{"configMapRef": {"name": "gone"}}]}));
        assert!(
            Env::of_container(&c, &[])
                .lookup("X")
                .unwrap_err()
                .contains("may come from envFrom ConfigMap gone (not in evidence)")
        );
    }
}
