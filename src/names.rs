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

/// Splits `NAME` or `NAMESPACE/NAME` (`status NAME`, `logs OBJECT`) into its namespace, if given,
/// and a Microservice name, each checked. The error names the part at fault.
pub fn object_ref(input: &str) -> Result<(Option<&str>, &str), String> {
    let expected = "expected NAME or NAMESPACE/NAME";
    let (namespace, name) = match input.split_once('/') {
        Some((ns, name)) => (Some(ns), name),
        None => (None, input),
    };
    if let Some(ns) = namespace
        && !is_dns_label(ns)
    {
        return Err(format!("{expected}: {ns:?} is not a namespace name ({LABEL_RULE})"));
    }
    if !is_dns_subdomain(name) {
        return Err(format!(
            "{expected}: {name:?} is not a Microservice name ({SUBDOMAIN_RULE})"
        ));
    }
    Ok((namespace, name))
}

/// [`object_ref`] as a clap `value_parser`: the input, unchanged, once valid.
pub fn object_ref_arg(input: &str) -> Result<String, String> {
    object_ref(input).map(|_| input.to_string())
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
                "expected NAME or NAMESPACE/NAME: \"b/c\" is not a Microservice name ({SUBDOMAIN_RULE})"
            ))
        );
        assert_eq!(
            object_ref("/x"),
            Err(format!(
                "expected NAME or NAMESPACE/NAME: \"\" is not a namespace name ({LABEL_RULE})"
            ))
        );
        assert!(object_ref("").is_err() && object_ref("x/").is_err() && object_ref("UPPER").is_err());
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
