//! Kubernetes names given on the command line, checked before any cluster call: namespaces and
//! container names are DNS-1123 labels, object names (Microservices, Deployments, Leases) are
//! DNS-1123 subdomains (Kubernetes `IsDNS1123Label` / `IsDNS1123Subdomain` in
//! `k8s.io/apimachinery/pkg/util/validation`; custom resources' names are validated as
//! subdomains). A name that breaks them could only reach the API server as a 404 or an invalid
//! URI, so every NAME, `NS/NAME`, `-n`, `-c` and `--operator NS/deployment/NAME` goes through
//! this module, as clap `value_parser`s (exit 2, clap naming the flag and the input).
//!
//! Errors are sentences saying what was expected, to follow clap's
//! `invalid value 'UPPER' for '<NAME>': `.

/// What a DNS-1123 label is, for error messages.
const LABEL_RULE: &str =
    "a DNS-1123 label: at most 63 lowercase letters, digits or '-', starting and ending with a letter or digit";

/// What a DNS-1123 subdomain is, for error messages.
const SUBDOMAIN_RULE: &str = "a DNS-1123 subdomain: at most 253 lowercase letters, digits, '-' or '.', each '.'-separated part starting and ending with a letter or digit";

/// One dot-free part: `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, any length.
fn is_label_part(part: &str) -> bool {
    !part.is_empty()
        && part
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !part.starts_with('-')
        && !part.ends_with('-')
}

/// Whether `name` is a DNS-1123 label (at most 63 characters).
pub fn is_dns_label(name: &str) -> bool {
    name.len() <= 63 && is_label_part(name)
}

/// Whether `name` is a DNS-1123 subdomain (at most 253 characters; Kubernetes' pattern does not
/// limit the parts between dots to 63).
pub fn is_dns_subdomain(name: &str) -> bool {
    name.len() <= 253 && name.split('.').all(is_label_part)
}

/// A namespace name (`-n`, `--watch-namespace`, `--lease-namespace`).
pub fn namespace(input: &str) -> Result<String, String> {
    label(input, "namespace")
}

/// A container name (`logs -c`).
pub fn container(input: &str) -> Result<String, String> {
    label(input, "container")
}

/// A Microservice's name (`explain-events NAME`).
pub fn microservice(input: &str) -> Result<String, String> {
    subdomain(input, "Microservice")
}

/// A Lease's name (`operate --lease-name`).
pub fn lease(input: &str) -> Result<String, String> {
    subdomain(input, "Lease")
}

fn label(input: &str, what: &str) -> Result<String, String> {
    if is_dns_label(input) {
        Ok(input.to_string())
    } else {
        Err(format!("expected a {what} name ({LABEL_RULE})"))
    }
}

fn subdomain(input: &str, what: &str) -> Result<String, String> {
    if is_dns_subdomain(input) {
        Ok(input.to_string())
    } else {
        Err(format!("expected a {what} name ({SUBDOMAIN_RULE})"))
    }
}

/// The names kubectl's resource builder takes for the Microservice type in `TYPE/NAME`: the
/// short name, singular, plural, each also qualified by the group, and by version and group
/// (`kubectl get microservices.v1alpha1.platform.example.io/x`); the kind too
/// (`Microservice/x`), since kubectl matches a type case-insensitively.
pub const TYPE_NAMES: [&str; 9] = [
    "ms",
    "microservice",
    "microservices",
    "microservice.platform.example.io",
    "microservices.platform.example.io",
    "ms.platform.example.io",
    "microservice.v1alpha1.platform.example.io",
    "microservices.v1alpha1.platform.example.io",
    "ms.v1alpha1.platform.example.io",
];

/// Whether `word` names the Microservice type, as kubectl matches it (case-insensitively).
pub fn is_type_name(word: &str) -> bool {
    let lower = word.to_ascii_lowercase();
    TYPE_NAMES.contains(&lower.as_str())
}

/// Types of kubectl's that a `TYPE/NAME` could name by mistake (`deployment/op`), refused as
/// not a Microservice rather than read as a namespace of that name.
const OTHER_TYPES: [&str; 24] = [
    "po",
    "pod",
    "pods",
    "deploy",
    "deployment",
    "deployments",
    "svc",
    "service",
    "services",
    "rs",
    "replicaset",
    "replicasets",
    "cm",
    "configmap",
    "configmaps",
    "secret",
    "secrets",
    "sts",
    "statefulset",
    "statefulsets",
    "ns",
    "namespace",
    "namespaces",
    "lease",
];

/// What [`object_ref`] takes, for its errors.
const OBJECT_FORMS: &str = "expected NAME, TYPE/NAME (TYPE: ms, microservice, microservices or microservices.platform.example.io) or NAMESPACE/NAME";

/// Splits an object argument (`status NAME`, `explain-events NAME`, `logs OBJECT`) into its
/// namespace, if given, and a Microservice name, each checked. It takes kubectl's `TYPE/NAME`
/// for the Microservice type ([`TYPE_NAMES`]: `ms/todo-api`, `microservice.platform.example.io/todo-api`,
/// what `status -o name` prints), and this tool's `NAMESPACE/NAME` when the first part is no
/// type name: kubectl's convention wins where both could apply, so `ms/x` is the Microservice
/// `x`, never namespace `ms` (`kubectl microservice status x -n ms` names that one). A first
/// part that names another kubectl type (`deployment/x`) or cannot be a namespace
/// (`apps.example.io/x`) is refused, naming the forms taken. The error names the part at fault.
pub fn object_ref(input: &str) -> Result<(Option<&str>, &str), String> {
    let (namespace, name) = match input.split_once('/') {
        Some((first, name)) if is_type_name(first) => (None, name),
        Some((first, _)) if OTHER_TYPES.contains(&first.to_ascii_lowercase().as_str()) || first.contains('.') => {
            return Err(format!("{OBJECT_FORMS}: {first:?} is not a Microservice type"));
        }
        Some((ns, name)) => (Some(ns), name),
        None => (None, input),
    };
    if let Some(ns) = namespace
        && !is_dns_label(ns)
    {
        return Err(format!("{OBJECT_FORMS}: {ns:?} is not a namespace name ({LABEL_RULE})"));
    }
    if !is_dns_subdomain(name) {
        return Err(format!(
            "{OBJECT_FORMS}: {name:?} is not a Microservice name ({SUBDOMAIN_RULE})"
        ));
    }
    Ok((namespace, name))
}

/// [`object_ref`] as a clap `value_parser`: `NAME` or `NAMESPACE/NAME`, the type part of a
/// `TYPE/NAME` dropped (so every command reads one shape).
pub fn object_ref_arg(input: &str) -> Result<String, String> {
    object_ref(input).map(|(namespace, name)| match namespace {
        Some(ns) => format!("{ns}/{name}"),
        None => name.to_string(),
    })
}

/// What `--resource` takes, for its errors.
pub const RESOURCE_FORMS: &str = "expected a resource type as kubectl names one: PLURAL[.GROUP] (kopfexamples.kopf.dev, kopfexamples), PLURAL.VERSION.GROUP, the singular, a short name (kex) or the kind (KopfExample)";

/// Whether `word` can be a resource type as kubectl takes one (`kopfexamples.kopf.dev`, `kex`,
/// `KopfExample`): a DNS-1123 subdomain once lowercased (kubectl matches types case-insensitively).
pub fn is_resource_type(word: &str) -> bool {
    is_dns_subdomain(&word.to_ascii_lowercase())
}

/// `--resource TYPE` as a clap `value_parser`: the input, unchanged, once it can be a type
/// ([`is_resource_type`]); which resource it names is decided against discovery or the bundle's CRD.
pub fn resource_type_arg(input: &str) -> Result<String, String> {
    if is_resource_type(input) {
        Ok(input.to_string())
    } else {
        Err(format!("{RESOURCE_FORMS}; {input:?} is none"))
    }
}

/// The object argument's parser when `--resource` is given: `NAME`, `NAMESPACE/NAME`, or
/// `TYPE/NAME` with any type word ([`is_resource_type`]) kept as given, for the command to
/// match against the resource once resolved ([`crate::resource::identity`]); each part checked.
pub fn typed_object_ref_arg(input: &str) -> Result<String, String> {
    const FORMS: &str =
        "expected NAME, TYPE/NAME (TYPE: the --resource type's plural, singular, short name or kind) or NAMESPACE/NAME";
    let name = match input.split_once('/') {
        Some((first, name)) => {
            if !is_resource_type(first) {
                return Err(format!(
                    "{FORMS}: {first:?} is neither a type nor a namespace name ({LABEL_RULE})"
                ));
            }
            name
        }
        None => input,
    };
    if !is_dns_subdomain(name) {
        return Err(format!("{FORMS}: {name:?} is not an object name ({SUBDOMAIN_RULE})"));
    }
    Ok(input.to_string())
}

/// The namespace and name an object argument ([`object_ref_arg`]'s output) and the scope flags
/// give: `NAMESPACE/NAME`'s namespace, else `-n`'s (`namespace`). A `NAMESPACE/NAME` that
/// contradicts `-n` or `-A` is a usage error saying so, the same in every command.
pub fn object_in_scope(
    given: &str,
    namespace: Option<&str>,
    all_namespaces: bool,
) -> Result<(Option<String>, String), String> {
    let (ns, name) = object_ref(given)?;
    match ns {
        None => Ok((namespace.map(str::to_string), name.to_string())),
        Some(ns) if all_namespaces || namespace.is_some_and(|n| n != ns) => Err(format!(
            "{ns}/{name} names namespace {ns}; it contradicts {} (a NAMESPACE/NAME's first part is a namespace unless it is a Microservice type name: ms, microservice, ...)",
            if all_namespaces {
                "-A".to_string()
            } else {
                format!("-n {}", namespace.unwrap_or_default())
            }
        )),
        Some(ns) => Ok((Some(ns.to_string()), name.to_string())),
    }
}

/// Splits `--operator NAMESPACE/deployment/NAME` (also `deploy`, `deployments`, as kubectl
/// spells the resource) into the namespace and the Deployment's name, each checked.
pub fn operator_ref(input: &str) -> Result<(String, String), String> {
    let expected = "expected NAMESPACE/deployment/NAME";
    match input.split('/').collect::<Vec<_>>().as_slice() {
        [ns, "deployment" | "deploy" | "deployments", name] => {
            if !is_dns_label(ns) {
                return Err(format!("{expected}: {ns:?} is not a namespace name ({LABEL_RULE})"));
            }
            if !is_dns_subdomain(name) {
                return Err(format!(
                    "{expected}: {name:?} is not a Deployment name ({SUBDOMAIN_RULE})"
                ));
            }
            Ok((ns.to_string(), name.to_string()))
        }
        _ => Err(expected.to_string()),
    }
}

/// [`operator_ref`] as a clap `value_parser`: the input, unchanged, once valid.
pub fn operator_ref_arg(input: &str) -> Result<String, String> {
    operator_ref(input).map(|_| input.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_subdomains_as_kubernetes_validates_them() {
        for ok in ["a", "todo", "a-b", "0", "9lives", &"a".repeat(63)] {
            assert!(is_dns_label(ok), "{ok}");
            assert!(is_dns_subdomain(ok), "{ok}");
        }
        for bad in [
            "",
            "-a",
            "a-",
            "A",
            "a_b",
            "a b",
            "a.b",
            "..",
            "ä",
            &"a".repeat(64),
            "a/b",
        ] {
            assert!(!is_dns_label(bad), "{bad}");
        }
        for ok in ["a.b", "ops.lock", "a-1.b-2.c", &"a".repeat(64), &"a".repeat(253)] {
            assert!(is_dns_subdomain(ok), "{ok}");
        }
        for bad in [
            "",
            ".",
            "a.",
            ".a",
            "a..b",
            "a.-b",
            "A.b",
            "../../etc",
            "a b",
            &"a".repeat(254),
        ] {
            assert!(!is_dns_subdomain(bad), "{bad}");
        }
    }

    #[test]
    fn errors_say_what_was_expected() {
        assert_eq!(
            namespace("Ops"),
            Err(format!("expected a namespace name ({LABEL_RULE})"))
        );
        assert_eq!(
            microservice("../../etc"),
            Err(format!("expected a Microservice name ({SUBDOMAIN_RULE})"))
        );
        assert_eq!(container("app"), Ok("app".into()));
        assert_eq!(lease("ops.lock"), Ok("ops.lock".into()));
    }

    #[test]
    fn object_refs() {
        assert_eq!(object_ref("todo-api"), Ok((None, "todo-api")));
        assert_eq!(object_ref("todo/todo-api"), Ok((Some("todo"), "todo-api")));
        assert_eq!(
            object_ref("a/b/c"),
            Err(format!(
                "{OBJECT_FORMS}: \"b/c\" is not a Microservice name ({SUBDOMAIN_RULE})"
            ))
        );
        assert_eq!(
            object_ref("/x"),
            Err(format!("{OBJECT_FORMS}: \"\" is not a namespace name ({LABEL_RULE})"))
        );
        assert!(object_ref("").is_err() && object_ref("x/").is_err() && object_ref("UPPER").is_err());
    }

    /// kubectl's TYPE/NAME forms win over NAMESPACE/NAME for the type's names (issue 14 item 9:
    /// `status ms/todo-api` was read as namespace `ms`), and `-o name`'s output reads back.
    #[test]
    fn type_slash_name_is_kubectls() {
        for ty in TYPE_NAMES
            .iter()
            .copied()
            .chain(["Microservice", "MS", "Microservices.Platform.Example.IO"])
        {
            let given = format!("{ty}/todo-api");
            assert_eq!(object_ref(&given), Ok((None, "todo-api")), "{given}");
            assert_eq!(object_ref_arg(&given), Ok("todo-api".to_string()), "{given}");
        }
        assert_eq!(object_ref_arg("todo/todo-api"), Ok("todo/todo-api".to_string()));
        for bad in [
            "deployment/op",
            "pods/op",
            "apps.example.io/x",
            "microservice.example.io/x",
        ] {
            let err = object_ref(bad).unwrap_err();
            assert!(
                err.starts_with(OBJECT_FORMS) && err.ends_with("is not a Microservice type"),
                "{bad}: {err}"
            );
        }
        assert!(
            object_ref("ms/UPPER")
                .unwrap_err()
                .contains("\"UPPER\" is not a Microservice name")
        );
        assert!(object_ref("ms/").is_err() && object_ref("ms/a/b").is_err());
    }

    #[test]
    fn namespace_slash_name_and_the_scope_flags() {
        assert_eq!(
            object_in_scope("todo-api", Some("a"), false),
            Ok((Some("a".into()), "todo-api".into()))
        );
        assert_eq!(
            object_in_scope("a/todo-api", None, false),
            Ok((Some("a".into()), "todo-api".into()))
        );
        assert_eq!(
            object_in_scope("a/todo-api", Some("a"), false),
            Ok((Some("a".into()), "todo-api".into()))
        );
        assert!(
            object_in_scope("a/todo-api", Some("b"), false)
                .unwrap_err()
                .starts_with("a/todo-api names namespace a; it contradicts -n b")
        );
        assert!(
            object_in_scope("a/todo-api", None, true)
                .unwrap_err()
                .starts_with("a/todo-api names namespace a; it contradicts -A")
        );
        assert_eq!(
            object_in_scope("ms/todo-api", Some("b"), false),
            Ok((Some("b".into()), "todo-api".into()))
        );
    }

    #[test]
    fn operator_refs() {
        assert_eq!(operator_ref("ops/deployment/op"), Ok(("ops".into(), "op".into())));
        assert_eq!(operator_ref("ops/deploy/op.v2"), Ok(("ops".into(), "op.v2".into())));
        assert_eq!(operator_ref("op"), Err("expected NAMESPACE/deployment/NAME".into()));
        assert_eq!(
            operator_ref("ops/statefulset/op"),
            Err("expected NAMESPACE/deployment/NAME".into())
        );
        assert_eq!(
            operator_ref("Ops/deployment/op"),
            Err(format!(
                "expected NAMESPACE/deployment/NAME: \"Ops\" is not a namespace name ({LABEL_RULE})"
            ))
        );
        assert_eq!(
            operator_ref("ops/deployment/a b"),
            Err(format!(
                "expected NAMESPACE/deployment/NAME: \"a b\" is not a Deployment name ({SUBDOMAIN_RULE})"
            ))
        );
    }
}
