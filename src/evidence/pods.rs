//! Which Pods, Pod logs and Lease holders are a Deployment's: the one rule every answer reads
//! (issue 18 D8), so that a Deployment `api` never takes the Pods of `api-gateway` (whose
//! `api-gateway-7d9f8b6c4-x2x4z` starts with `api-`) as its own. Pure.
//!
//! A Pod in evidence is the Deployment's when it is in the Deployment's namespace and
//! - it has a controller `ownerReference`: that is a ReplicaSet named as the Deployment
//!   controller names its ReplicaSets, `NAME-<pod-template-hash>` (the hash the Pod's
//!   `pod-template-hash` label holds, when it has one); an owner of another kind or name is
//!   another controller's. (ReplicaSet objects are not in evidence: their name is the link.)
//! - it has none (an orphan, or a Pod written by hand into a bundle): the Deployment's
//!   `spec.selector` (`matchLabels` and `matchExpressions`, [`crate::selector::LabelSelector`])
//!   selects its labels; an empty or invalid selector selects nothing (the API refuses both
//!   for a Deployment).
//!
//! A Pod not in evidence (gone, replaced, the Pods forbidden; its log or its Lease kept) is the
//! Deployment's only by the name its ReplicaSets give their Pods ([`named_as_pod_of`]).

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;

use crate::selector::LabelSelector;

/// The characters of a `pod-template-hash` and of a Pod name's random suffix: apimachinery's
/// `rand.String` / `SafeEncodeString` alphabet (no vowels, no `0`, `1`, `3`).
pub const NAME_ALPHABET: &str = "bcdfghjklmnpqrstvwxz2456789";

/// The label the Deployment controller puts on each ReplicaSet's Pods, the hash of their
/// template.
pub const POD_TEMPLATE_HASH: &str = "pod-template-hash";

/// The lengths a `pod-template-hash` has (the decimal digits of a 32-bit FNV hash, encoded one
/// character each).
const HASH_LEN: std::ops::RangeInclusive<usize> = 5..=10;

/// The length of the random suffix of a Pod's `generateName`.
const SUFFIX_LEN: usize = 5;

fn of_alphabet(part: &str) -> bool {
    part.chars().all(|c| NAME_ALPHABET.contains(c))
}

fn is_hash(part: &str) -> bool {
    HASH_LEN.contains(&part.len()) && of_alphabet(part)
}

/// What follows `NAME-` in `name` (a Pod's or ReplicaSet's) for the Deployment `deployment`;
/// `None` when it does not start so, or the Deployment has no name.
fn after_name<'n>(name: &'n str, deployment: &str) -> Option<&'n str> {
    name.strip_prefix(deployment)?
        .strip_prefix('-')
        .filter(|_| !deployment.is_empty())
}

/// Whether `pod` is named as a Pod of a Deployment named `deployment`:
/// `NAME-<pod-template-hash>-<suffix>`, the rest after `NAME-` exactly two `-`-separated parts
/// of [`NAME_ALPHABET`], a hash of 5 to 10 characters and a suffix of 5. So
/// `api-gateway-7d9f8b6c4-x2x4z` is not named as a Pod of `api` (three parts).
pub fn named_as_pod_of(pod: &str, deployment: &str) -> bool {
    let Some(rest) = after_name(pod, deployment) else {
        return false;
    };
    match rest.split_once('-') {
        Some((hash, suffix)) => is_hash(hash) && suffix.len() == SUFFIX_LEN && of_alphabet(suffix),
        None => false,
    }
}

/// Whether `replica_set` is named as a ReplicaSet of the Deployment `deployment`
/// (`NAME-<pod-template-hash>`), with the hash `hash` when it is known.
fn named_as_replica_set_of(replica_set: &str, deployment: &str, hash: Option<&str>) -> bool {
    let Some(rest) = after_name(replica_set, deployment) else {
        return false;
    };
    match hash {
        Some(hash) => rest == hash,
        None => is_hash(rest),
    }
}

/// The Deployment's `spec.selector` as a matcher; `None` when it has none, it is empty or it
/// is invalid (then it selects nothing).
pub fn selector_of(d: &Deployment) -> Option<LabelSelector> {
    let selector = LabelSelector::from_api(&d.spec.as_ref()?.selector).ok()?;
    (!selector.is_empty()).then_some(selector)
}

/// Whether `pod` (an object in evidence) is one of Deployment `d`'s Pods (the module's rule).
pub fn is_pod_of(d: &Deployment, pod: &Pod) -> bool {
    if pod.metadata.namespace != d.metadata.namespace {
        return false;
    }
    let name = d.metadata.name.as_deref().unwrap_or("");
    let controller = pod
        .metadata
        .owner_references
        .iter()
        .flatten()
        .find(|o| o.controller == Some(true));
    match controller {
        Some(owner) => {
            let hash = pod
                .metadata
                .labels
                .as_ref()
                .and_then(|l| l.get(POD_TEMPLATE_HASH))
                .map(String::as_str);
            owner.kind == "ReplicaSet" && named_as_replica_set_of(&owner.name, name, hash)
        }
        None => selector_of(d).is_some_and(|s| s.matches(pod.metadata.labels.as_ref())),
    }
}

/// The Pods among `pods` that are Deployment `d`'s ([`is_pod_of`]).
pub fn pods_of<'p>(d: &Deployment, pods: &'p [Pod]) -> Vec<&'p Pod> {
    pods.iter().filter(|p| is_pod_of(d, p)).collect()
}

/// Whether the Pod named `pod` (a log's, a Lease holder's) is one of Deployment `d`'s, with
/// `pods` the Pods in evidence: a Pod of that name in evidence decides by [`is_pod_of`]; none
/// (gone, or the Pods not read) by its name ([`named_as_pod_of`]).
pub fn is_named_pod_of(d: &Deployment, pod: &str, pods: &[Pod]) -> bool {
    let mut same_name = pods
        .iter()
        .filter(|p| p.metadata.name.as_deref() == Some(pod))
        .peekable();
    if same_name.peek().is_some() {
        return same_name.any(|p| is_pod_of(d, p));
    }
    named_as_pod_of(pod, d.metadata.name.as_deref().unwrap_or(""))
}

/// The Deployment `namespace/name` among `deployments`.
pub fn find<'d>(deployments: &'d [Deployment], namespace: &str, name: &str) -> Option<&'d Deployment> {
    deployments
        .iter()
        .find(|d| d.metadata.namespace.as_deref() == Some(namespace) && d.metadata.name.as_deref() == Some(name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deployment(name: &str) -> Deployment {
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "team-alpha"},
            "spec": {"selector": {"matchLabels": {"app": name}}, "template": {}}
        }))
        .unwrap()
    }

    fn pod(name: &str, labels: serde_json::Value, owner: Option<&str>) -> Pod {
        let owners = owner.map(
            |o| json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": o, "uid": "u", "controller": true}]),
        );
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "team-alpha", "labels": labels, "ownerReferences": owners}
        }))
        .unwrap()
    }

    /// The shape rule: `NAME-<hash>-<suffix>`, two parts of the alphabet after `NAME-`.
    #[test]
    fn a_pod_is_named_as_its_deployments_replica_sets_name_it() {
        assert!(named_as_pod_of("api-7d9f8b6c4-x2x4z", "api"));
        assert!(named_as_pod_of("api-gateway-7d9f8b6c4-x2x4z", "api-gateway"));
        assert!(named_as_pod_of("api-5d7f9c-bbbbb", "api"));
        // Another Deployment's Pod whose name starts with `api-`: three parts.
        assert!(!named_as_pod_of("api-gateway-7d9f8b6c4-x2x4z", "api"));
        assert!(!named_as_pod_of("api-gateway-7d9f8b6c4-abcde", "api"));
        // Not of the alphabet (vowels, `0`, `1`, `3`), wrong lengths, not a Pod name at all.
        assert!(
            !named_as_pod_of("api-gateway-x2x4z", "api"),
            "a hash of letters with vowels"
        );
        assert!(!named_as_pod_of("api-7d9f8b6c4-abcde", "api"));
        assert!(!named_as_pod_of("api-7d9f-x2x4z", "api"), "a hash of 4");
        assert!(!named_as_pod_of("api-7d9f8b6c4c4-x2x4z", "api"), "a hash of 11");
        assert!(!named_as_pod_of("api-7d9f8b6c4-x2x4", "api"), "a suffix of 4");
        assert!(!named_as_pod_of("api", "api"));
        assert!(!named_as_pod_of("api-", "api"));
        assert!(!named_as_pod_of("-7d9f8b6c4-x2x4z", ""));
        assert!(!named_as_pod_of("apix-7d9f8b6c4-x2x4z", "api"));
    }

    /// Two Deployments `api` and `api-gateway` of one namespace: each Pod is one's only, by its
    /// ReplicaSet owner, else by the selector, else (not in evidence) by its name.
    #[test]
    fn each_deployment_has_only_its_own_pods() {
        let (api, gateway) = (deployment("api"), deployment("api-gateway"));
        let owned = pod(
            "api-gateway-7d9f8b6c4-x2x4z",
            json!({"app": "api-gateway", "pod-template-hash": "7d9f8b6c4"}),
            Some("api-gateway-7d9f8b6c4"),
        );
        assert!(is_pod_of(&gateway, &owned) && !is_pod_of(&api, &owned));
        let mine = pod(
            "api-5d7f9c8b4-bbbbb",
            json!({"app": "api", "pod-template-hash": "5d7f9c8b4"}),
            Some("api-5d7f9c8b4"),
        );
        assert!(is_pod_of(&api, &mine) && !is_pod_of(&gateway, &mine));
        // The owner decides over labels a selector would also select.
        let relabelled = pod(
            "api-gateway-7d9f8b6c4-x2x4z",
            json!({"app": "api", "pod-template-hash": "7d9f8b6c4"}),
            Some("api-gateway-7d9f8b6c4"),
        );
        assert!(!is_pod_of(&api, &relabelled));
        // An owner whose name does not carry the Pod's hash is another ReplicaSet's.
        let other_hash = pod(
            "api-x",
            json!({"app": "api", "pod-template-hash": "5d7f9c8b4"}),
            Some("api-6c8d9f7b5"),
        );
        assert!(!is_pod_of(&api, &other_hash));
        // No owner: the selector, in the namespace only.
        let orphan = pod("api-gateway-7d9f8b6c4-x2x4z", json!({"app": "api-gateway"}), None);
        assert!(is_pod_of(&gateway, &orphan) && !is_pod_of(&api, &orphan));
        let mut elsewhere = orphan.clone();
        elsewhere.metadata.namespace = Some("team-beta".into());
        assert!(!is_pod_of(&gateway, &elsewhere));
        // matchExpressions count too.
        let mut expr = deployment("api");
        expr.spec.as_mut().unwrap().selector =
            serde_json::from_value(json!({"matchExpressions": [{"key": "app", "operator": "In", "values": ["api"]}]}))
                .unwrap();
        assert!(is_pod_of(&expr, &pod("p", json!({"app": "api"}), None)));
        assert!(!is_pod_of(&expr, &pod("p", json!({"app": "api-gateway"}), None)));
        // An empty selector selects nothing.
        expr.spec.as_mut().unwrap().selector = Default::default();
        assert!(!is_pod_of(&expr, &pod("p", json!({"app": "api"}), None)));
        // By name: a Pod in evidence by the rule, a gone one by its shape.
        let pods = vec![owned, mine];
        assert!(is_named_pod_of(&gateway, "api-gateway-7d9f8b6c4-x2x4z", &pods));
        assert!(!is_named_pod_of(&api, "api-gateway-7d9f8b6c4-x2x4z", &pods));
        assert!(
            is_named_pod_of(&api, "api-5d7f9c8b4-ccccc", &pods),
            "gone, named as api's"
        );
        assert!(!is_named_pod_of(&api, "api-gateway-5d7f9c8b4-ccccc", &pods));
        assert!(!is_named_pod_of(&api, "api-gateway-7d9f8b6c4-x2x4z", &[]));
        assert!(is_named_pod_of(&gateway, "api-gateway-7d9f8b6c4-x2x4z", &[]));
    }
}
