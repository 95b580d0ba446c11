//! Which resource the diagnostics read: its identity as a value ([`ResourceId`]), the
//! Microservice by default, any resource a Kopf operator handles with `--resource`.
//!
//! A `--resource` value is a type as kubectl names one (`kopfexamples.kopf.dev`, `kopfexamples`,
//! the singular `kopfexample`, a short name such as `kex`, the kind `KopfExample`, each also
//! `.VERSION.GROUP`-qualified), matched case-insensitively ([`ResourceId::named_by`]) against
//! the candidates of the source: the API server's discovery ([`ResourceId::from_api_resources`])
//! or a bundle's CRD ([`ResourceId::from_crd`]). Pure: the discovery calls are the client's
//! (`crate::client::discovery`).

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::APIResourceList;

/// A resource's identity: what its URLs, its CRD's name, its events' `involvedObject.kind`, its
/// bundle file and the `TYPE/NAME` forms of kubectl are made of.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceId {
    /// API group (`kopf.dev`; empty for core).
    pub group: String,
    /// The version read (the CRD's storage version, or discovery's preferred one).
    pub version: String,
    /// Kind (`KopfExample`).
    pub kind: String,
    /// Plural (`kopfexamples`): the URL segment and the RBAC resource.
    pub plural: String,
    /// Singular (`kopfexample`); empty when its source does not say.
    pub singular: String,
    /// Short names (`kex`, ...), as the CRD or discovery lists them.
    pub short_names: Vec<String>,
    /// Namespaced (else cluster-scoped).
    pub namespaced: bool,
}

impl Default for ResourceId {
    /// The Microservice ([`ResourceId::microservice`]).
    fn default() -> Self {
        ResourceId::microservice()
    }
}

impl ResourceId {
    /// The default resource: `microservices.platform.example.io/v1alpha1` (the consts of
    /// [`crate::resource`]).
    pub fn microservice() -> ResourceId {
        ResourceId {
            group: super::GROUP.into(),
            version: super::VERSION.into(),
            kind: super::KIND.into(),
            plural: super::PLURAL.into(),
            singular: "microservice".into(),
            short_names: vec!["ms".into()],
            namespaced: true,
        }
    }

    /// A resource known only by the word it was given as (`logs --file` reads no cluster and no
    /// CRD): that word is its plural (and, when it is `PLURAL.GROUP`, the group its rest), so that
    /// [`ResourceId::named_by`] takes exactly the word given, and `TYPE/NAME` with it.
    pub fn named(typed: &str) -> ResourceId {
        let lower = typed.to_ascii_lowercase();
        let (plural, group) = lower.split_once('.').unwrap_or((lower.as_str(), ""));
        ResourceId {
            group: group.into(),
            version: String::new(),
            kind: String::new(),
            plural: plural.into(),
            singular: String::new(),
            short_names: Vec::new(),
            namespaced: true,
        }
    }

    /// The one "no such object" message of every command (exit 3): for the Microservice
    /// [`super::not_found_message`]'s, else kubectl's words, `kopfexamples.kopf.dev "NAME" not
    /// found in namespace "NS"` (without the namespace when looked for in every one).
    pub fn not_found_message(&self, namespace: Option<&str>, name: &str) -> String {
        if self.is_microservice() {
            return super::not_found_message(namespace, name);
        }
        match namespace {
            Some(ns) => format!("{} {name:?} not found in namespace {ns:?}", self.qualified()),
            None => format!("{} {name:?} not found", self.qualified()),
        }
    }

    /// Whether this is the Microservice (group and plural).
    pub fn is_microservice(&self) -> bool {
        self.group == super::GROUP && self.plural == super::PLURAL
    }

    /// `PLURAL.GROUP` (`kopfexamples.kopf.dev`; the plural alone for core): how kubectl and
    /// RBAC name it, and the name of its CRD.
    pub fn qualified(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    /// The type word of a kubectl command about one of its objects (`kubectl -n NS patch TYPE
    /// NAME`, `TYPE/NAME`): `microservice` for the Microservice (the words this project's
    /// fixes have always printed), else `PLURAL.GROUP` ([`ResourceId::qualified`]), which
    /// kubectl resolves to this resource whatever other resource shares its plural.
    pub fn kubectl_type(&self) -> String {
        if self.is_microservice() {
            "microservice".into()
        } else {
            self.qualified()
        }
    }

    /// `GROUP/VERSION` (`v1` for core), as objects write `apiVersion`.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The collection's URL path, in `namespace` or across all (`None`, or a cluster-scoped
    /// resource): `/apis/kopf.dev/v1/namespaces/default/kopfexamples`.
    pub fn url_path(&self, namespace: Option<&str>) -> String {
        let base = if self.group.is_empty() {
            format!("/api/{}", self.version)
        } else {
            format!("/apis/{}/{}", self.group, self.version)
        };
        match namespace.filter(|_| self.namespaced) {
            Some(ns) => format!("{base}/namespaces/{ns}/{}", self.plural),
            None => format!("{base}/{}", self.plural),
        }
    }

    /// The bundle file of its objects: `microservices.json` for the Microservice (the layout
    /// of docs/contracts.md), else `PLURAL.GROUP.json` (`kopfexamples.kopf.dev.json`).
    pub fn bundle_file(&self) -> String {
        if self.is_microservice() {
            "microservices.json".into()
        } else {
            format!("{}.json", self.qualified())
        }
    }

    /// Whether `typed` names this resource as kubectl's resource builder matches a type
    /// (case-insensitively): the plural, singular, a short name or the kind, alone, `.GROUP`- or
    /// `.VERSION.GROUP`-qualified.
    pub fn named_by(&self, typed: &str) -> bool {
        let typed = typed.to_ascii_lowercase();
        let (word, rest) = match typed.split_once('.') {
            Some((word, rest)) => (word, Some(rest)),
            None => (typed.as_str(), None),
        };
        let kind = self.kind.to_ascii_lowercase();
        let word_matches = word == self.plural
            || (!self.singular.is_empty() && word == self.singular)
            || word == kind
            || self.short_names.iter().any(|s| s.eq_ignore_ascii_case(word));
        word_matches
            && match rest {
                None => true,
                Some(rest) => {
                    rest == self.group || rest == format!("{}.{}", self.version, self.group).trim_end_matches('.')
                }
            }
    }

    /// The resource a CRD defines, at its storage version (else its first served one); `None`
    /// for a CRD without names or versions.
    pub fn from_crd(crd: &CustomResourceDefinition) -> Option<ResourceId> {
        let spec = &crd.spec;
        let version = spec
            .versions
            .iter()
            .find(|v| v.storage)
            .or_else(|| spec.versions.iter().find(|v| v.served))?;
        Some(ResourceId {
            group: spec.group.clone(),
            version: version.name.clone(),
            kind: spec.names.kind.clone(),
            plural: spec.names.plural.clone(),
            singular: spec.names.singular.clone().unwrap_or_default(),
            short_names: spec.names.short_names.clone().unwrap_or_default(),
            namespaced: spec.scope == "Namespaced",
        })
    }

    /// The resources of discovery's answers (`APIResourceList` of one `GROUP/VERSION` each, the
    /// preferred version of each group), subresources (`pods/log`) left out.
    pub fn from_api_resources(lists: &[APIResourceList]) -> Vec<ResourceId> {
        let mut out = Vec::new();
        for list in lists {
            let (group, version) = match list.group_version.split_once('/') {
                Some((g, v)) => (g.to_string(), v.to_string()),
                None => (String::new(), list.group_version.clone()),
            };
            for r in &list.resources {
                if r.name.contains('/') {
                    continue;
                }
                out.push(ResourceId {
                    group: r
                        .group
                        .clone()
                        .filter(|g| !g.is_empty())
                        .unwrap_or_else(|| group.clone()),
                    version: r
                        .version
                        .clone()
                        .filter(|v| !v.is_empty())
                        .unwrap_or_else(|| version.clone()),
                    kind: r.kind.clone(),
                    plural: r.name.clone(),
                    singular: r.singular_name.clone(),
                    short_names: r.short_names.clone().unwrap_or_default(),
                    namespaced: r.namespaced,
                });
            }
        }
        out
    }
}

/// Why a `--resource` value names no one resource among the candidates ([`pick`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PickError {
    /// None of them: kubectl's `the server doesn't have a resource type "X"`.
    None,
    /// Several of different groups (a short name two groups use): their `PLURAL.GROUP`s.
    Several(Vec<String>),
}

/// The one candidate `typed` names ([`ResourceId::named_by`]). When it names several, an exact
/// plural match wins over a singular, kind or short-name match (as kubectl prefers a resource's
/// own plural); several left is [`PickError::Several`].
pub fn pick(typed: &str, candidates: &[ResourceId]) -> Result<ResourceId, PickError> {
    let mut named: Vec<&ResourceId> = candidates.iter().filter(|c| c.named_by(typed)).collect();
    named.dedup_by(|a, b| a.group == b.group && a.plural == b.plural);
    if named.len() > 1 {
        let word = typed.split('.').next().unwrap_or(typed).to_ascii_lowercase();
        let by_plural: Vec<&ResourceId> = named.iter().copied().filter(|c| c.plural == word).collect();
        if by_plural.len() == 1 {
            named = by_plural;
        }
    }
    match named.as_slice() {
        [] => Err(PickError::None),
        [one] => Ok((*one).clone()),
        several => Err(PickError::Several(several.iter().map(|c| c.qualified()).collect())),
    }
}

/// Kopf's example resource, for tests of any module.
#[cfg(test)]
impl ResourceId {
    /// `kopfexamples.kopf.dev/v1` as Kopf's `examples/crd.yaml` (1.38.0) names it.
    pub(crate) fn kopf_example() -> ResourceId {
        ResourceId {
            group: "kopf.dev".into(),
            version: "v1".into(),
            kind: "KopfExample".into(),
            plural: "kopfexamples".into(),
            singular: "kopfexample".into(),
            short_names: vec!["kex".into()],
            namespaced: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names and versions of Kopf's examples/crd.yaml (1.38.0).
    fn kopf_crd() -> CustomResourceDefinition {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "kopfexamples.kopf.dev"},
            "spec": {
                "scope": "Namespaced",
                "group": "kopf.dev",
                "names": {"kind": "KopfExample", "plural": "kopfexamples", "singular": "kopfexample",
                          "shortNames": ["kopfexes", "kopfex", "kexes", "kex"]},
                "versions": [{"name": "v1", "served": true, "storage": true}]
            }
        }))
        .unwrap()
    }

    #[test]
    fn a_crd_gives_its_identity_and_kubectls_type_forms_name_it() {
        let id = ResourceId::from_crd(&kopf_crd()).unwrap();
        assert_eq!(id.qualified(), "kopfexamples.kopf.dev");
        assert_eq!(id.api_version(), "kopf.dev/v1");
        assert_eq!(
            id.url_path(Some("default")),
            "/apis/kopf.dev/v1/namespaces/default/kopfexamples"
        );
        assert_eq!(id.url_path(None), "/apis/kopf.dev/v1/kopfexamples");
        assert_eq!(id.bundle_file(), "kopfexamples.kopf.dev.json");
        for typed in [
            "kopfexamples.kopf.dev",
            "kopfexamples",
            "kopfexample",
            "kex",
            "KEX",
            "KopfExample",
            "kex.kopf.dev",
            "kopfexamples.v1.kopf.dev",
        ] {
            assert!(id.named_by(typed), "{typed}");
        }
        for typed in [
            "kopfexamples.kopf.io",
            "microservices",
            "kopfexamplez",
            "kopfexamples.v2.kopf.dev",
            "",
        ] {
            assert!(!id.named_by(typed), "{typed}");
        }
        assert!(!id.is_microservice());
    }

    #[test]
    fn the_microservice_is_the_default_and_keeps_its_bundle_file() {
        let ms = ResourceId::microservice();
        assert!(ms.is_microservice());
        assert_eq!(ms.bundle_file(), "microservices.json");
        assert_eq!(ms.qualified(), crate::resource::CRD_NAME);
        assert_eq!(
            ms.url_path(Some("todo")),
            "/apis/platform.example.io/v1alpha1/namespaces/todo/microservices"
        );
        for typed in [
            "ms",
            "microservice",
            "microservices.platform.example.io",
            "ms.v1alpha1.platform.example.io",
            "Microservice",
        ] {
            assert!(ms.named_by(typed), "{typed}");
        }
    }

    #[test]
    fn pick_names_one_candidate_or_says_why_not() {
        let kopf = ResourceId::from_crd(&kopf_crd()).unwrap();
        let other = ResourceId {
            group: "other.example.io".into(),
            short_names: vec!["kex".into()],
            ..kopf.clone()
        };
        let candidates = [ResourceId::microservice(), kopf.clone(), other];
        assert_eq!(pick("kopfexamples.kopf.dev", &candidates), Ok(kopf.clone()));
        assert_eq!(pick("ms", &candidates), Ok(ResourceId::microservice()));
        assert_eq!(pick("nothing", &candidates), Err(PickError::None));
        assert_eq!(
            pick("kex", &candidates),
            Err(PickError::Several(vec![
                "kopfexamples.kopf.dev".into(),
                "kopfexamples.other.example.io".into()
            ]))
        );
    }

    #[test]
    fn discovery_lists_give_resources_without_subresources() {
        let list: APIResourceList = serde_json::from_value(serde_json::json!({
            "groupVersion": "kopf.dev/v1",
            "resources": [
                {"name": "kopfexamples", "singularName": "kopfexample", "namespaced": true, "kind": "KopfExample",
                 "verbs": ["get", "list"], "shortNames": ["kex"]},
                {"name": "kopfexamples/status", "singularName": "", "namespaced": true, "kind": "KopfExample", "verbs": ["get"]}
            ]
        }))
        .unwrap();
        let core: APIResourceList = serde_json::from_value(serde_json::json!({
            "groupVersion": "v1",
            "resources": [{"name": "pods", "singularName": "pod", "namespaced": true, "kind": "Pod", "verbs": ["list"], "shortNames": ["po"]}]
        }))
        .unwrap();
        let ids = ResourceId::from_api_resources(&[list, core]);
        assert_eq!(ids.len(), 2);
        let kopf = ResourceId::from_crd(&kopf_crd()).unwrap();
        assert_eq!(
            ids[0],
            ResourceId {
                short_names: vec!["kex".into()],
                ..kopf
            }
        );
        assert_eq!(ids[1].url_path(Some("a")), "/api/v1/namespaces/a/pods");
        assert_eq!(pick("po", &ids).unwrap().qualified(), "pods");
    }
}
