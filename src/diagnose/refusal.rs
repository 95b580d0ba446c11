//! Who refused an API request, in the API server's own words: a refused event POST or status /
//! annotation PATCH read from the Status the operator logged (its `message`, `reason` and
//! `code`), classified once here so that every check names the same refuser and gives the fix
//! that follows from it ([`Refusal::classify`]).
//!
//! The wordings are the API server's (kubernetes v1.28, `staging/src/k8s.io/apiserver`):
//! - RBAC: `... is forbidden: User "U" cannot create resource "events" in API group "" in the
//!   namespace "NS"` (`endpoints/handlers/responsewriters/errors.go`, 403 `Forbidden`);
//! - an admission webhook: `admission webhook "NAME" denied the request: MSG` (or `... denied
//!   the request without explanation`; `admission/plugin/webhook/errors/statuserror.go`, the
//!   webhook's code, 403 by default);
//! - a ValidatingAdmissionPolicy: `ValidatingAdmissionPolicy 'NAME' with binding 'BINDING'
//!   denied request: MSG` (`admission/plugin/validatingadmissionpolicy/dispatcher.go`, 403, or
//!   422 for a validation whose reason is `Invalid`);
//! - a ResourceQuota: `... is forbidden: exceeded quota: NAME, requested: ..., used: ...,
//!   limited: ...` (`admission/plugin/resourcequota/controller.go`, 403);
//! - a namespace being deleted: `... is forbidden: unable to create new content in namespace NS
//!   because it is being terminated` (`admission/plugin/namespace/lifecycle/admission.go`, 403);
//! - validation: `KIND "NAME" is invalid: FIELD: ...` (apimachinery `errors.NewInvalid`, 422
//!   `Invalid`).

use std::fmt;

/// What refused a request, from its Status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// RBAC: the user may not do the verb on the resource (`cannot VERB resource`).
    Rbac {
        /// The user named by the message (`system:serviceaccount:NS:NAME`), when it names one.
        user: Option<String>,
        /// The namespace the message names (`in the namespace "NS"`), when it names one.
        namespace: Option<String>,
    },
    /// A validating or mutating admission webhook denied it.
    Webhook {
        /// The webhook's name as the message quotes it (`admission webhook "NAME"`): the
        /// `webhooks[].name` of a ValidatingWebhookConfiguration or
        /// MutatingWebhookConfiguration.
        name: String,
        /// What the webhook said, when it said something.
        said: Option<String>,
    },
    /// A ValidatingAdmissionPolicy denied it, through one of its bindings.
    Policy {
        /// The ValidatingAdmissionPolicy.
        name: String,
        /// The ValidatingAdmissionPolicyBinding.
        binding: String,
        /// The policy's message or failed expression.
        said: Option<String>,
    },
    /// A ResourceQuota of the namespace is used up.
    Quota {
        /// The ResourceQuota's name (`exceeded quota: NAME`).
        name: String,
    },
    /// The namespace is being deleted: nothing new may be created in it.
    Terminating {
        /// The namespace, when the message names it.
        namespace: Option<String>,
    },
    /// The object sent is not valid (422 `Invalid`, `is invalid`).
    Invalid,
    /// Another refusal (a code and message that say none of the above).
    Other,
}

impl Refusal {
    /// Classifies a refused request by its Status: `code` (HTTP status), `reason` (the Status'
    /// `reason`, e.g. `Forbidden`, `Invalid`) and `message`, each as logged (a Python `repr`'s
    /// escaped quotes are read too). The message decides first, since a webhook, a policy, a
    /// quota and RBAC all answer 403 `Forbidden`; then the code or reason (422/`Invalid`).
    pub fn classify(code: Option<u16>, reason: Option<&str>, message: &str) -> Refusal {
        let m = message.replace("\\\"", "\"").replace("\\'", "'");
        if let Some(name) = quoted_after(&m, "admission webhook ") {
            let said = m.split_once("denied the request: ").map(|(_, s)| s.trim().to_string());
            return Refusal::Webhook { name, said };
        }
        if let Some(name) = quoted_after(&m, "ValidatingAdmissionPolicy ") {
            let binding = quoted_after(&m, "with binding ").unwrap_or_default();
            let said = m.split_once("denied request: ").map(|(_, s)| s.trim().to_string());
            return Refusal::Policy { name, binding, said };
        }
        if let Some(at) = m.find("exceeded quota: ") {
            let rest = &m[at + "exceeded quota: ".len()..];
            let name = rest.split([',', ' ']).next().unwrap_or("").to_string();
            return Refusal::Quota { name };
        }
        if m.contains("because it is being terminated") {
            let namespace = m
                .split_once("in namespace ")
                .and_then(|(_, rest)| rest.split_whitespace().next())
                .map(|ns| ns.trim_matches(['"', '\'']).to_string());
            return Refusal::Terminating { namespace };
        }
        if m.contains(" cannot ") && m.contains(" resource ") {
            return Refusal::Rbac {
                user: quoted_after(&m, "User "),
                namespace: quoted_after(&m, "in the namespace "),
            };
        }
        if code == Some(422) || reason == Some("Invalid") || m.contains(" is invalid") {
            return Refusal::Invalid;
        }
        Refusal::Other
    }

    /// Whether RBAC refused it: only then do the operator's Roles, bindings and `kubectl auth
    /// can-i` bear on it.
    pub fn is_rbac(&self) -> bool {
        matches!(self, Refusal::Rbac { .. })
    }

    /// The short name of the refuser, for the Contracts' `refusedBy` words: `rbac`,
    /// `admission-webhook`, `validating-admission-policy`, `quota`, `namespace-terminating`,
    /// `validation`, `other`.
    pub fn kind(&self) -> &'static str {
        match self {
            Refusal::Rbac { .. } => "rbac",
            Refusal::Webhook { .. } => "admission-webhook",
            Refusal::Policy { .. } => "validating-admission-policy",
            Refusal::Quota { .. } => "quota",
            Refusal::Terminating { .. } => "namespace-terminating",
            Refusal::Invalid => "validation",
            Refusal::Other => "other",
        }
    }

    /// What to do about it, for a request the operator makes in namespace `ns`: the object
    /// that refused it and the command that shows it, never `kubectl auth can-i` for a refusal
    /// that is not RBAC's (it would print yes and change nothing). `None` for RBAC (the caller
    /// knows the rule to grant) and for an unclassified refusal.
    pub fn fix(&self, ns: &str) -> Option<String> {
        match self {
            Refusal::Rbac { .. } | Refusal::Other => None,
            Refusal::Webhook { name, .. } => Some(format!(
                "the admission webhook {name} refuses the request, not RBAC (granting a rule changes nothing): find its configuration with `kubectl get validatingwebhookconfigurations,mutatingwebhookconfigurations -o custom-columns=KIND:.kind,NAME:.metadata.name,WEBHOOKS:.webhooks[*].name | grep -F {name}`, then ask its owner to let the request through (its rules, namespaceSelector or objectSelector) or fix what its message names; this changes a cluster-wide (shared) resource"
            )),
            Refusal::Policy { name, binding, .. } => Some(format!(
                "the ValidatingAdmissionPolicy {name} (binding {binding}) refuses the request, not RBAC: see `kubectl get validatingadmissionpolicy {name} -o yaml` and `kubectl get validatingadmissionpolicybinding {binding} -o yaml`, and ask their owner to exclude the request (the binding's matchResources) or fix what the policy checks; this changes a cluster-wide (shared) resource"
            )),
            Refusal::Quota { name } => Some(format!(
                "the ResourceQuota {name} in {ns} is used up: see `kubectl -n {ns} describe resourcequota {name}`, then raise its limit or delete what uses it (for events: old events expire after the API server's --event-ttl)"
            )),
            Refusal::Terminating { namespace } => Some(format!(
                "the namespace {} is being deleted, and nothing new may be created in it: see `kubectl get namespace {} -o yaml` (its finalizers and conditions); once it is gone, create the object again",
                namespace.as_deref().unwrap_or(ns),
                namespace.as_deref().unwrap_or(ns)
            )),
            Refusal::Invalid => {
                Some("the API server finds the request invalid (422): fix the field its message names".into())
            }
        }
    }
}

/// `admission webhook "X"`, `ValidatingAdmissionPolicy 'X'`, ... in words.
impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Rbac { .. } => f.write_str("RBAC"),
            Refusal::Webhook { name, .. } => write!(f, "admission webhook \"{name}\""),
            Refusal::Policy { name, binding, .. } => {
                write!(f, "ValidatingAdmissionPolicy '{name}' (binding '{binding}')")
            }
            Refusal::Quota { name } => write!(f, "ResourceQuota {name}"),
            Refusal::Terminating { namespace } => match namespace {
                Some(ns) => write!(f, "namespace {ns} being terminated"),
                None => f.write_str("a namespace being terminated"),
            },
            Refusal::Invalid => f.write_str("validation (422 Invalid)"),
            Refusal::Other => f.write_str("the API server"),
        }
    }
}

/// The text quoted (`"X"` or `'X'`) right after `key` in `m`.
fn quoted_after(m: &str, key: &str) -> Option<String> {
    let rest = &m[m.find(key)? + key.len()..];
    let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let body = &rest[1..];
    let end = body.find(quote)?;
    Some(body[..end].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each refuser in the API server's wording (v1.28), as Kopf and ours log it.
    #[test]
    fn each_refusal_is_told_by_its_message() {
        let rbac = r#"events is forbidden: User "system:serviceaccount:ops:op" cannot create resource "events" in API group "" in the namespace "team-b""#;
        assert_eq!(
            Refusal::classify(Some(403), Some("Forbidden"), rbac),
            Refusal::Rbac {
                user: Some("system:serviceaccount:ops:op".into()),
                namespace: Some("team-b".into())
            }
        );
        let escaped = r#"events.events.k8s.io is forbidden: User \"system:serviceaccount:store:op\" cannot create resource \"events\" in API group \"events.k8s.io\" in the namespace \"store\""#;
        assert!(Refusal::classify(Some(403), None, escaped).is_rbac());
        let webhook =
            r#"admission webhook "deny-events.i18ca.example.com" denied the request: events from kopf are not allowed"#;
        assert_eq!(
            Refusal::classify(Some(403), None, webhook),
            Refusal::Webhook {
                name: "deny-events.i18ca.example.com".into(),
                said: Some("events from kopf are not allowed".into())
            }
        );
        let silent = r#"admission webhook "w.example.com" denied the request without explanation"#;
        assert_eq!(
            Refusal::classify(Some(400), None, silent),
            Refusal::Webhook {
                name: "w.example.com".into(),
                said: None
            }
        );
        let vap = r#"events "x.1" is forbidden: ValidatingAdmissionPolicy 'no-events' with binding 'no-events-b' denied request: failed expression: false"#;
        assert_eq!(
            Refusal::classify(Some(403), Some("Forbidden"), vap),
            Refusal::Policy {
                name: "no-events".into(),
                binding: "no-events-b".into(),
                said: Some("failed expression: false".into())
            }
        );
        let quota = r#"events "x.1" is forbidden: exceeded quota: events-q, requested: count/events=1, used: count/events=5, limited: count/events=5"#;
        assert_eq!(
            Refusal::classify(Some(403), None, quota),
            Refusal::Quota {
                name: "events-q".into()
            }
        );
        let ending = "events \"x.1\" is forbidden: unable to create new content in namespace team-a because it is being terminated";
        assert_eq!(
            Refusal::classify(Some(403), None, ending),
            Refusal::Terminating {
                namespace: Some("team-a".into())
            }
        );
        let invalid = r#"Microservice.example.com "x" is invalid: metadata.annotations: Too long: must have at most 262144 bytes"#;
        assert_eq!(Refusal::classify(Some(422), Some("Invalid"), invalid), Refusal::Invalid);
        assert_eq!(Refusal::classify(Some(500), None, "etcd timeout"), Refusal::Other);
    }

    /// The fix follows the refuser: a webhook's names it and its configuration objects, never
    /// `auth can-i`; RBAC's is the caller's (the rule to grant).
    #[test]
    fn the_fix_follows_the_refuser() {
        let w = Refusal::Webhook {
            name: "deny.example.com".into(),
            said: None,
        };
        let fix = w.fix("store").unwrap();
        assert!(fix.contains("deny.example.com") && fix.contains("validatingwebhookconfigurations"));
        assert!(!fix.contains("auth can-i"), "{fix}");
        assert!(fix.contains("shared"), "{fix}");
        assert_eq!(
            Refusal::Rbac {
                user: None,
                namespace: None
            }
            .fix("store"),
            None
        );
        let q = Refusal::Quota { name: "q".into() }.fix("store").unwrap();
        assert!(q.contains("kubectl -n store describe resourcequota q"), "{q}");
        assert_eq!(w.kind(), "admission-webhook");
        assert_eq!(w.to_string(), "admission webhook \"deny.example.com\"");
    }
}
