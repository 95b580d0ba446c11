//! Evidence: a [`Snapshot`] of what the cluster says about Microservices and their operator,
//! gathered live ([`live`]) or read from a bundle directory ([`bundle`]), by one
//! [`gather::gather`] for every command. Diagnostics are pure functions of a Snapshot, so a
//! bundle test and a live run exercise the same code.
//!
//! Every piece of evidence is an [`Evidence`]: present, or a [`Gap`] that names what is missing
//! and why (file not in the bundle, forbidden, failed). A gap is reported, never a panic.

pub mod bundle;
pub mod command;
pub mod gather;
pub mod live;
pub mod managed_fields;
pub mod naming;
pub mod operator;
pub mod pods;
pub mod resolve;
pub mod selection;
pub mod target;

use std::path::PathBuf;

use chrono::{DateTime, Utc};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::authorization::v1::SubjectAccessReview;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Event, Pod};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::logs::LogSource;
use crate::logs::zone::LogZone;
use crate::resource::MicroserviceObject;
use crate::time::from_jiff;
use operator::Leadership;

/// Why a piece of evidence is missing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "kind", content = "detail")]
pub enum GapReason {
    /// Not in the bundle: the file named.
    NotInBundle(String),
    /// The API answered 403: its message.
    Forbidden(String),
    /// Not collected because it was not needed or not asked for.
    NotCollected(String),
    /// The call or the read failed: the error.
    Failed(String),
}

/// A named hole in the evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Gap {
    /// Which evidence, e.g. `events`, `operator logs`.
    pub evidence: String,
    /// Why it is missing.
    pub reason: GapReason,
}

/// The evidence names of who leads (a Lease, Kopf peering objects): only `explain-events` reads
/// them, so other answers leave their gaps out.
pub const LEADERSHIP_EVIDENCE: &[&str] = &[LEASES, PEERINGS];
/// The evidence name of [`OperatorEvidence::leases`].
pub const LEASES: &str = "Leases";
/// The evidence name of [`OperatorEvidence::peerings`].
pub const PEERINGS: &str = "Kopf peerings";

impl Gap {
    /// Whether this is a gap in the evidence of who leads ([`LEADERSHIP_EVIDENCE`]).
    pub fn is_leadership(&self) -> bool {
        LEADERSHIP_EVIDENCE.contains(&self.evidence.as_str())
    }
}

impl std::fmt::Display for Gap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.reason {
            GapReason::NotInBundle(file) => write!(f, "{}: not in the bundle ({file})", self.evidence),
            GapReason::Forbidden(msg) => write!(f, "{}: forbidden ({msg})", self.evidence),
            GapReason::NotCollected(why) => write!(f, "{}: not collected ({why})", self.evidence),
            GapReason::Failed(err) => write!(f, "{}: failed ({err})", self.evidence),
        }
    }
}

impl Gap {
    /// Reads back the [`std::fmt::Display`] form (`<evidence>: forbidden (<message>)`, `...: failed
    /// (<error>)`, `...: not collected (<why>)`, `...: not in the bundle (<file>)`), as `collect`
    /// records gaps in a bundle's `meta.json`. `None` for any other text.
    pub fn parse(text: &str) -> Option<Gap> {
        let (evidence, rest) = text.split_once(": ")?;
        let (kind, detail) = rest.strip_suffix(')')?.split_once(" (")?;
        let detail = detail.to_string();
        let reason = match kind {
            "forbidden" => GapReason::Forbidden(detail),
            "failed" => GapReason::Failed(detail),
            "not collected" => GapReason::NotCollected(detail),
            "not in the bundle" => GapReason::NotInBundle(detail),
            _ => return None,
        };
        Some(Gap {
            evidence: evidence.to_string(),
            reason,
        })
    }
}

/// A piece of evidence, or the gap where it should be.
#[derive(Debug, Clone)]
pub enum Evidence<T> {
    /// What the cluster said.
    Present(T),
    /// Why we do not know.
    Gap(Gap),
}

impl<T> Evidence<T> {
    /// The evidence, if present.
    pub fn get(&self) -> Option<&T> {
        match self {
            Evidence::Present(v) => Some(v),
            Evidence::Gap(_) => None,
        }
    }

    /// The gap, if missing.
    pub fn gap(&self) -> Option<&Gap> {
        match self {
            Evidence::Present(_) => None,
            Evidence::Gap(g) => Some(g),
        }
    }

    /// A gap for `evidence` with `reason`.
    pub fn missing(evidence: &str, reason: GapReason) -> Self {
        Evidence::Gap(Gap {
            evidence: evidence.to_string(),
            reason,
        })
    }
}

/// Adds `files` (`--log-file` logs, [`crate::logs::file::read_sources`]) to the operator's log
/// evidence: beside the Pods' logs when they are present (a log with the same pod, container and
/// previous flag — the same file collected into a bundle earlier — is replaced, never counted
/// twice); instead of them when they are a gap (no Pod, no Deployment found, `pods/log`
/// forbidden), since the files are then the logs in evidence. Nothing changes when `files` is
/// empty.
pub fn add_log_files(logs: &mut Evidence<Vec<LogSource>>, files: &[LogSource]) {
    if files.is_empty() {
        return;
    }
    let mut sources = match std::mem::replace(logs, Evidence::Present(Vec::new())) {
        Evidence::Present(sources) => sources,
        Evidence::Gap(_) => Vec::new(),
    };
    sources.retain(|s| {
        !files
            .iter()
            .any(|f| (&f.pod, &f.container, f.previous) == (&s.pod, &s.container, s.previous))
    });
    sources.extend(files.iter().cloned());
    *logs = Evidence::Present(sources);
}

/// What is known about the operator: its Deployment(s), Pods, mounted ConfigMaps and logs.
#[derive(Debug, Clone)]
pub struct OperatorEvidence {
    /// The operator Deployment(s).
    pub deployments: Evidence<Vec<Deployment>>,
    /// Their Pods.
    pub pods: Evidence<Vec<Pod>>,
    /// ConfigMaps the Pods mount (Kopf operators are often mounted from one).
    pub configmaps: Evidence<Vec<ConfigMap>>,
    /// Container logs, current and previous.
    pub logs: Evidence<Vec<LogSource>>,
    /// The `coordination.k8s.io/v1` Leases our operators elect a leader with (those that exist;
    /// absent from the list when the API said 404).
    pub leases: Evidence<Vec<Lease>>,
    /// Kopf's `KopfPeering` / `ClusterKopfPeering` objects its operators peer through, as the
    /// API returned them (read with [`crate::kopf::peering::Peering::parse`]); absent from the
    /// list when the API said 404 (no such object, or the peering CRDs are not installed).
    pub peerings: Evidence<Vec<Value>>,
    /// `--operator NS/deployment/NAME` as given (the resolver chooses it,
    /// [`resolve::FLAG`]); `None` when not given.
    pub chosen: Option<String>,
    /// Operators seen that do not serve the namespace asked about: what each is and watches,
    /// nothing else (their Pods, logs and RBAC are not collected). A bundle keeps them in
    /// `meta.json` `otherOperators`.
    pub others: Vec<operator::OperatorSummary>,
    /// The other recognised operator Deployments of the evidence when `--operator` chose one,
    /// each with its Pods' logs: never diagnosed, read only to tell whether another operator
    /// that serves the namespace handled the object too (double handling, which the
    /// diagnostics' `leading::handlings` reads).
    pub unchosen: Vec<Unchosen>,
}

/// An operator Deployment `--operator` left out ([`OperatorEvidence::unchosen`]): read only to
/// tell whether it handled the object too.
#[derive(Debug, Clone)]
pub struct Unchosen {
    /// The operator.
    pub operator: operator::OperatorRef,
    /// Its Pods' logs.
    pub logs: Vec<LogSource>,
    /// The resources its source's handlers serve, as written ([`operator::handled_resources`],
    /// read while its Deployment and ConfigMaps were in evidence); `None`: not known (no source
    /// in evidence, or a live read that fetches none).
    pub handles: Option<Vec<String>>,
}

impl OperatorEvidence {
    /// Every operator among the Deployments in evidence, recognised as Kubernetes runs them
    /// ([`operator::recognise_with`]: with the Pods, ConfigMaps and logs in evidence, and the
    /// `--operator` named). Empty when the Deployments are a gap.
    pub fn operators(&self) -> Vec<operator::OperatorRef> {
        self.deployments
            .get()
            .map(|d| operator::find_operators_with(d, &self.hints()))
            .unwrap_or_default()
    }

    /// What [`OperatorEvidence::operators`] reads besides the Deployments.
    pub fn hints(&self) -> operator::Hints<'_> {
        operator::Hints {
            pods: self.pods.get().map_or(&[], Vec::as_slice),
            configmaps: self.configmaps.get().map_or(&[], Vec::as_slice),
            logs: self.logs.get().map_or(&[], Vec::as_slice),
            chosen: self.chosen.as_deref(),
        }
    }

    /// The summaries of every operator among `deployments` (for [`OperatorEvidence::others`]).
    pub fn summaries(deployments: &[Deployment]) -> Vec<operator::OperatorSummary> {
        operator::find_operators(deployments)
            .iter()
            .map(operator::OperatorSummary::of)
            .collect()
    }
}

impl OperatorEvidence {
    /// Marks the leadership evidence that no operator in evidence uses as not collected (found,
    /// missing or empty alike): a Lease matters only for ours without `--standalone`, peering
    /// objects only for Kopf without `--standalone`. So a bundle made before these files
    /// existed, or for a standalone operator, does not report them missing, and `collect` does
    /// not write them. Leaves them as they are when the Deployments are unknown. Then the logs of
    /// operators scaled to zero (`settle_scaled_to_zero`).
    pub fn settle_leadership(&mut self) {
        let Some(deployments) = self.deployments.get() else {
            return;
        };
        let styles: Vec<Leadership> = operator::find_operators_with(deployments, &self.hints())
            .iter()
            .flat_map(operator::OperatorRef::leadership_styles)
            .collect();
        let uses_lease = styles.iter().any(|s| matches!(s, Leadership::Lease { .. }));
        let uses_peering = styles
            .iter()
            .any(|s| matches!(s, Leadership::Kopf(crate::kopf::peering::PeeringMode::Peering { .. })));
        let not_needed = |what: &str| {
            GapReason::NotCollected(format!(
                "no operator in evidence uses {what} (--standalone, or none found)"
            ))
        };
        // A Lease in evidence that no Deployment elects on is still evidence: a laptop
        // `operate` holds `NS/microservice-operator` (the resolver reads it).
        let leases_found = self.leases.get().is_some_and(|l| !l.is_empty());
        if !uses_lease && !leases_found {
            self.leases = Evidence::missing(LEASES, not_needed("a Lease"));
        }
        if !uses_peering {
            self.peerings = Evidence::missing(PEERINGS, not_needed("Kopf peering"));
        }
        self.settle_scaled_to_zero();
    }

    /// An operator scaled to zero has no Pod and so no log: when every operator Deployment in
    /// evidence has `spec.replicas: 0` and no Pod of theirs is in evidence, the logs are none (a
    /// fact, which operator-not-running reports with its fix), never a gap "operator logs:
    /// failed (... has no Pods)" — also in a bundle collected before this rule.
    fn settle_scaled_to_zero(&mut self) {
        let (Some(deployments), Some(pods), Evidence::Gap(_)) = (self.deployments.get(), self.pods.get(), &self.logs)
        else {
            return;
        };
        let operators = operator::find_operators_with(deployments, &self.hints());
        let none_runs = !operators.is_empty()
            && operators.iter().all(|op| {
                op.scaled_to_zero()
                    && pods::find(deployments, &op.namespace, &op.name)
                        .is_none_or(|d| pods::pods_of(d, pods).is_empty())
            });
        if none_runs {
            self.logs = Evidence::Present(Vec::new());
        }
    }

    /// The logs of `d`'s Pods ([`OperatorEvidence::is_log_of`]).
    pub(crate) fn logs_of(&self, d: &Deployment) -> Vec<LogSource> {
        self.logs
            .get()
            .into_iter()
            .flatten()
            .filter(|log| log.container != crate::logs::file::FILE_CONTAINER && self.is_log_of(d, &log.pod))
            .cloned()
            .collect()
    }

    /// Whether the log of Pod `pod` is one of `d`'s Pods' ([`pods::is_named_pod_of`]: a Pod in
    /// evidence by its owner or `d`'s selector, in `d`'s namespace; a Pod no longer in evidence
    /// (replaced, its log kept) when named as `d`'s ReplicaSets name their Pods,
    /// `NAME-<hash>-<suffix>`, so `api-gateway-7d9c5f8b4-x2x4z` is never a Pod of a Deployment
    /// `api`). The one rule of which logs are an operator's: every answer reads only its
    /// operator's (issue 18).
    pub(crate) fn is_log_of(&self, d: &Deployment, pod: &str) -> bool {
        pods::is_named_pod_of(d, pod, self.pods.get().map(Vec::as_slice).unwrap_or(&[]))
    }

    /// Keeps only the operator Deployment `namespace/name` (`--operator` with a bundle, which
    /// may hold several), its Pods ([`pods::is_pod_of`]: in its namespace, owned by its
    /// ReplicaSet or selected by its `spec.selector`) and their logs; a log of a Pod the
    /// evidence does not list is kept when named as its Pods are (`NAME-<hash>-<suffix>`, a
    /// replaced Pod; [`pods::named_as_pod_of`]), a `--log-file` log always. When
    /// the Deployments do not hold it, or it runs no operator, the Deployment is a gap naming it
    /// (and what the evidence holds), and its Pods and logs are unknown: another operator is
    /// never diagnosed in its place. `source` names where the Deployments were read, e.g.
    /// `operator/deployment.json`. A gap in the Deployments stays as it is.
    pub fn select_deployment(&mut self, namespace: &str, name: &str, source: &str) {
        self.chosen = Some(format!("{namespace}/deployment/{name}"));
        let Some(deployments) = self.deployments.get() else {
            return;
        };
        let wanted = format!("{namespace}/deployment/{name}");
        let is_wanted = |d: &Deployment| {
            d.metadata.namespace.as_deref() == Some(namespace) && d.metadata.name.as_deref() == Some(name)
        };
        let gap = match deployments.iter().find(|d| is_wanted(d)) {
            None => {
                let held: Vec<String> = deployments
                    .iter()
                    .map(|d| {
                        format!(
                            "{}/deployment/{}",
                            d.metadata.namespace.as_deref().unwrap_or(""),
                            d.metadata.name.as_deref().unwrap_or("")
                        )
                    })
                    .collect();
                let held = if held.is_empty() {
                    "no Deployment".to_string()
                } else {
                    held.join(", ")
                };
                Some(GapReason::NotInBundle(format!(
                    "{wanted} is not in {source}, which holds {held}"
                )))
            }
            // Any Deployment that exists is diagnosed when named ([`operator::KindBy::Named`]).
            Some(_) => None,
        };
        if let Some(reason) = gap {
            let gap = Gap {
                evidence: "operator Deployment".into(),
                reason,
            };
            let unknown = || GapReason::NotCollected(format!("the operator Deployment is unknown ({gap})"));
            self.pods = Evidence::missing("operator Pods", unknown());
            self.logs = Evidence::missing("operator logs", unknown());
            self.deployments = Evidence::Gap(gap);
            return;
        }
        let deployment = deployments.iter().find(|d| is_wanted(d)).cloned().expect("found above");
        // The others, with their Pods' logs, for double handling only.
        self.unchosen = deployments
            .iter()
            .filter(|d| !is_wanted(d))
            .filter_map(|d| {
                let operator = operator::recognise(d)?;
                let logs = self.logs_of(d);
                let configmaps = self.configmaps.get().map_or(&[][..], Vec::as_slice);
                let handles = operator::handled_resources(d, configmaps);
                Some(Unchosen {
                    operator,
                    logs,
                    handles,
                })
            })
            .collect();
        // Its logs first, judged against every Pod in evidence (a log of another Deployment's
        // Pod stays another's), then its Pods.
        if let Evidence::Present(logs) = &mut self.logs {
            let all_pods = self.pods.get().map(Vec::as_slice).unwrap_or(&[]);
            logs.retain(|log| {
                log.container == crate::logs::file::FILE_CONTAINER
                    || pods::is_named_pod_of(&deployment, &log.pod, all_pods)
            });
        }
        if let Evidence::Present(all_pods) = &mut self.pods {
            all_pods.retain(|p| pods::is_pod_of(&deployment, p));
        }
        self.deployments = Evidence::Present(vec![deployment]);
        self.settle_leadership();
    }
}

/// RBAC evidence: the operator ServiceAccount's access reviews, and the rules themselves.
#[derive(Debug, Clone)]
pub struct RbacEvidence {
    /// SubjectAccessReviews as the API returned them (with status).
    pub access_reviews: Evidence<Vec<SubjectAccessReview>>,
    /// Roles.
    pub roles: Evidence<Vec<Role>>,
    /// RoleBindings.
    pub role_bindings: Evidence<Vec<RoleBinding>>,
    /// ClusterRoles.
    pub cluster_roles: Evidence<Vec<ClusterRole>>,
    /// ClusterRoleBindings.
    pub cluster_role_bindings: Evidence<Vec<ClusterRoleBinding>>,
}

/// Where a snapshot came from (its provenance): the bundle read, or the cluster asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Provenance {
    /// A bundle directory.
    Bundle(PathBuf),
    /// A live cluster: kubeconfig context name (if any) and API server URL.
    Live {
        /// The kubeconfig context.
        context: Option<String>,
        /// The API server.
        server: String,
    },
}

/// Everything the diagnostics look at, as of one moment.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// Bundle or live.
    pub source: Provenance,
    /// When it was captured: `meta.json` capturedAt, or the API server's `Date` header.
    pub captured_at: Option<DateTime<Utc>>,
    /// The namespace filter used (`None` with `-A`).
    pub namespace: Option<String>,
    /// The resource whose objects [`Snapshot::microservices`] holds: the Microservice, or the
    /// `--resource` one.
    pub resource: crate::resource::identity::ResourceId,
    /// The objects of [`Snapshot::resource`] (Microservices by default) with managedFields,
    /// read leniently (metadata typed, spec and status raw JSON).
    pub microservices: Evidence<Vec<MicroserviceObject>>,
    /// The CRD.
    pub crd: Evidence<CustomResourceDefinition>,
    /// core/v1 events about Microservices (the events.k8s.io/v1 view is the same store).
    pub events: Evidence<Vec<Event>>,
    /// The operator.
    pub operator: OperatorEvidence,
    /// RBAC.
    pub rbac: RbacEvidence,
}

/// How close a logged cycle end and the API server's time of its write must be to line up
/// (managedFields has 1 s resolution; the line is logged around the PATCH).
const CALIBRATION_SKEW: std::time::Duration = std::time::Duration::from_secs(2);

/// Whether a managedFields `fieldsV1` tree owns a `*/last-handled-configuration` annotation
/// (Kopf's, under any prefix).
fn writes_last_handled(fields: Option<&Value>) -> bool {
    fields
        .and_then(|f| f.get("f:metadata"))
        .and_then(|m| m.get("f:annotations"))
        .and_then(Value::as_object)
        .is_some_and(|a| a.keys().any(|k| k.ends_with("/last-handled-configuration")))
}

/// What gets the operator's logs when [`Snapshot::handler_logs_missing`]: the handler's runs
/// are read from them.
pub const NO_LOGS_GET_THEM: &str = "get the operator running (its Pods' logs then hold the runs), or, for an `operate` outside the cluster, give its output with `--log-file FILE`";

impl Snapshot {
    /// The operator of `obj`'s namespace, for `obj` ([`resolve::resolve`]): the one answer every
    /// command reads, so that they all name the same operator (or the same "none serves it").
    pub fn operator_for(&self, obj: &MicroserviceObject) -> resolve::Resolution {
        resolve::resolve(self, obj.metadata.namespace.as_deref(), Some(obj))
    }

    /// Why `logs --handler` has no log of `resolution`'s operator to read here: the operator
    /// logs' gap (no Pods, a container that never started), or none of the logs in evidence is
    /// that operator's; `None` when one is. `logs --handler` exits 3 without one, so a fix does
    /// not suggest it then, but what gets the logs ([`NO_LOGS_GET_THEM`]).
    pub fn handler_logs_missing(&self, resolution: &resolve::Resolution) -> Option<String> {
        // One selection of an object's logs ([`resolve::Resolution::logs`]): its gap is why.
        match resolution.logs(self) {
            Err(gap) => Some(gap.to_string()),
            Ok(kept) if kept.is_empty() => Some(match &resolution.operator {
                Some(op) => format!("no log of {op} in evidence"),
                None => "no operator that serves the namespace, so no log of one".into(),
            }),
            Ok(_) => None,
        }
    }

    /// Where the chosen Kopf Deployment's source (the `.py` files of the ConfigMaps its Pods
    /// mount) puts its diff-base record ([`crate::kopf::diffbase::storage_in`]); `None` without
    /// such a Deployment, its source, or an assignment decided there.
    pub fn kopf_diffbase_for(
        &self,
        resolution: &resolve::Resolution,
    ) -> Option<crate::kopf::diffbase::DiffbaseStorage> {
        let chosen = resolution.deployment()?;
        let mut parts = chosen.splitn(3, '/');
        let (ns, _, name) = (parts.next()?, parts.next()?, parts.next()?);
        let deployment = self
            .operator
            .deployments
            .get()?
            .iter()
            .find(|d| d.metadata.namespace.as_deref() == Some(ns) && d.metadata.name.as_deref() == Some(name))?;
        crate::kopf::source::mounted_sources(deployment, self.operator.configmaps.get()?)
            .iter()
            .find_map(|(k, v)| crate::kopf::diffbase::storage_in(k, v))
    }

    /// The operator of `namespace` (`None`: any), when no one object is asked about.
    pub fn operator_for_namespace(&self, namespace: Option<&str>) -> resolve::Resolution {
        resolve::resolve(self, namespace, None)
    }

    /// The time zone `source`'s zoneless times are read in ([`LogZone`]): the `TZ` of that
    /// container in its Pod's spec (a literal `value`, or a `valueFrom` ConfigMap key the
    /// evidence holds; a Secret's value is never read). A `--log-file` source, or a Pod not
    /// in the evidence, is [`LogZone::NotKnown`]; a `TZ` from a ConfigMap or Secret the
    /// evidence does not hold is [`LogZone::Unknown`].
    ///
    /// Then the log is checked against the API server's clock ([`crate::logs::zone::calibrate`]
    /// over [`Snapshot::cycle_anchors`]): where its cycles line up with their writes only at
    /// another offset than the env's, it is read at that offset and the conflict is named
    /// ([`LogZone::Calibrated`]); at several offsets, [`LogZone::Disagreeing`].
    pub fn log_zone(&self, source: &LogSource) -> LogZone {
        let env = self.env_zone(source);
        let anchors = self.cycle_anchors(source);
        let what = if source.container == crate::logs::file::FILE_CONTAINER {
            format!("--log-file {}", source.pod)
        } else {
            format!("the log of {}/{}", source.pod, source.container)
        };
        match crate::logs::zone::calibrate(&anchors, CALIBRATION_SKEW) {
            crate::logs::zone::Calibration::NoAnchor => env,
            crate::logs::zone::Calibration::Offset { seconds, matched } => {
                let agrees = anchors.iter().all(|a| env.offset_at(a.logged) == Some(seconds));
                if agrees {
                    env
                } else {
                    LogZone::Calibrated {
                        offset_seconds: seconds,
                        matched,
                        what,
                        conflict: env.env_words(),
                    }
                }
            }
            crate::logs::zone::Calibration::Disagree(offsets) => LogZone::Disagreeing { offsets, what },
        }
    }

    /// For each Microservice the log names, its latest `Creation/Updating is processed` line
    /// (zoneless wall time as written) beside the managedFields time of the object's
    /// `*/last-handled-configuration` annotation, which Kopf writes when such a cycle ends.
    /// Empty for a log without zoneless times (ours, kubelet-stamped, Kopf `json`).
    pub fn cycle_anchors(&self, source: &LogSource) -> Vec<crate::logs::zone::Anchor> {
        use crate::kopf::messages::{CycleReason, Lifecycle};
        let mut latest: std::collections::HashMap<String, chrono::NaiveDateTime> = std::collections::HashMap::new();
        for record in source.records() {
            let (Some(stamp), Some(object)) = (record.stamp, &record.object) else {
                continue;
            };
            if stamp.clock != crate::logs::Clock::OperatorLocal {
                continue;
            }
            let ends_a_write = matches!(
                record.lifecycle(),
                Lifecycle::CycleProcessed {
                    reason: CycleReason::Creation | CycleReason::Updating,
                    ..
                }
            );
            if ends_a_write {
                let key = format!("{}/{}", object.namespace.as_deref().unwrap_or(""), object.name);
                let wall = stamp.at.naive_utc();
                let newer = latest.get(&key).is_none_or(|t| *t < wall);
                if newer {
                    latest.insert(key, wall);
                }
            }
        }
        let mut anchors: Vec<crate::logs::zone::Anchor> = self
            .microservices
            .get()
            .into_iter()
            .flatten()
            .filter_map(|obj| {
                let logged = *latest.get(&obj.key())?;
                let written = obj
                    .metadata
                    .managed_fields
                    .iter()
                    .flatten()
                    .filter(|m| writes_last_handled(m.fields_v1.as_ref().map(|f| &f.0)))
                    .filter_map(|m| m.time.as_ref().map(|t| from_jiff(t.0)))
                    .max()?;
                Some(crate::logs::zone::Anchor { logged, written })
            })
            .collect();
        anchors.sort_by_key(|a| a.logged);
        anchors
    }

    /// The `TZ` a `--log-file` was written in, when the evidence says: the literal `TZ` of the
    /// one Kopf operator Deployment in evidence (the file is read as its log, as `kubectl logs
    /// deploy/NAME > FILE` makes it, without the kubelet's timestamps). Without a Deployment,
    /// with several, or with `TZ` unset or from a reference, where the file was written is not
    /// known ([`LogZone::NotKnown`]: read as UTC, then calibrated).
    fn file_zone(&self, source: &LogSource) -> LogZone {
        let not_known = || LogZone::NotKnown {
            what: format!("--log-file {}", source.pod),
        };
        let kopf: Vec<operator::OperatorRef> = self
            .operator
            .operators()
            .into_iter()
            .filter(|o| o.kind == operator::OperatorKind::Kopf)
            .collect();
        let [op] = kopf.as_slice() else { return not_known() };
        match op.env.iter().rev().find(|(name, _)| name == "TZ") {
            Some((_, value)) => LogZone::from_tz(
                Some(value),
                &format!(
                    "container {} of Deployment {}/{} (the one Kopf operator in evidence, whose log --log-file {} is read as)",
                    op.container, op.namespace, op.name, source.pod
                ),
            ),
            None => not_known(),
        }
    }

    /// The `TZ` of `source`'s container (see [`Snapshot::log_zone`]), before calibration.
    fn env_zone(&self, source: &LogSource) -> LogZone {
        if source.container == crate::logs::file::FILE_CONTAINER {
            return self.file_zone(source);
        }
        let pod = self
            .operator
            .pods
            .get()
            .into_iter()
            .flatten()
            .find(|p| p.metadata.name.as_deref() == Some(source.pod.as_str()));
        let container = pod
            .and_then(|p| p.spec.as_ref())
            .and_then(|spec| spec.containers.iter().find(|c| c.name == source.container));
        let (Some(pod), Some(container)) = (pod, container) else {
            return LogZone::NotKnown {
                what: format!(
                    "the log of {}/{} (its Pod is not in the evidence)",
                    source.pod, source.container
                ),
            };
        };
        let place = format!(
            "container {} of Pod {}/{}",
            container.name,
            pod.metadata.namespace.as_deref().unwrap_or(""),
            source.pod
        );
        let Some(var) = container.env.iter().flatten().rev().find(|v| v.name == "TZ") else {
            return LogZone::Unset;
        };
        if let Some(value) = &var.value {
            return LogZone::from_tz(Some(value), &place);
        }
        let from = var.value_from.as_ref();
        if let Some(key) = from.and_then(|f| f.config_map_key_ref.as_ref()) {
            let value = self.operator.configmaps.get().into_iter().flatten().find_map(|cm| {
                (cm.metadata.name.as_deref() == Some(key.name.as_str())
                    && cm.metadata.namespace == pod.metadata.namespace)
                    .then(|| cm.data.as_ref().and_then(|d| d.get(&key.key)))
                    .flatten()
            });
            if let Some(value) = value {
                return LogZone::from_tz(
                    Some(value),
                    &format!("{place}, from ConfigMap {} key {}", key.name, key.key),
                );
            }
            return LogZone::Unknown {
                value: format!("(ConfigMap {} key {}, not in the evidence)", key.name, key.key),
                source: place,
            };
        }
        LogZone::Unknown {
            value: "(from a Secret or field reference, not read)".to_string(),
            source: place,
        }
    }

    /// The distinct zones of the logs in evidence ([`Snapshot::log_zone`]), in log order:
    /// what an answer's note about local times says.
    pub fn log_zones(&self) -> Vec<LogZone> {
        let mut zones: Vec<LogZone> = Vec::new();
        for source in self.operator.logs.get().into_iter().flatten() {
            let zone = self.log_zone(source);
            if !zones.contains(&zone) {
                zones.push(zone);
            }
        }
        zones
    }

    /// Every gap, in a stable order.
    pub fn gaps(&self) -> Vec<&Gap> {
        [
            self.microservices.gap(),
            self.crd.gap(),
            self.events.gap(),
            self.operator.deployments.gap(),
            self.operator.pods.gap(),
            self.operator.configmaps.gap(),
            self.operator.logs.gap(),
            self.operator.leases.gap(),
            self.operator.peerings.gap(),
            self.rbac.access_reviews.gap(),
            self.rbac.roles.gap(),
            self.rbac.role_bindings.gap(),
            self.rbac.cluster_roles.gap(),
            self.rbac.cluster_role_bindings.gap(),
        ]
        .into_iter()
        .flatten()
        .collect()
    }

    /// "Now" for age and TTL reasoning: `captured_at`, else the latest observation in the
    /// evidence (object creation and managedFields times, event times, Deployment and Pod
    /// times, Lease renewals, Kopf peering keep-alives). Never a future retry time such as Kopf's
    /// `delayed`.
    pub fn now(&self) -> Option<DateTime<Utc>> {
        if self.captured_at.is_some() {
            return self.captured_at;
        }
        let mut latest: Option<DateTime<Utc>> = None;
        let mut see = |t: Option<DateTime<Utc>>| {
            if let Some(t) = t {
                latest = Some(latest.map_or(t, |l| l.max(t)));
            }
        };
        for obj in self.microservices.get().into_iter().flatten() {
            see(obj.metadata.creation_timestamp.as_ref().map(|t| from_jiff(t.0)));
            for entry in obj.metadata.managed_fields.iter().flatten() {
                see(entry.time.as_ref().map(|t| from_jiff(t.0)));
            }
        }
        for event in self.events.get().into_iter().flatten() {
            see(event_time(event));
        }
        for pod in self.operator.pods.get().into_iter().flatten() {
            see(pod.metadata.creation_timestamp.as_ref().map(|t| from_jiff(t.0)));
        }
        for lease in self.operator.leases.get().into_iter().flatten() {
            let spec = lease.spec.as_ref();
            see(spec.and_then(|s| s.renew_time.as_ref()).map(|t| from_jiff(t.0)));
            see(spec.and_then(|s| s.acquire_time.as_ref()).map(|t| from_jiff(t.0)));
        }
        for peering in self.operator.peerings.get().into_iter().flatten() {
            for peer in crate::kopf::peering::Peering::parse(peering)
                .into_iter()
                .flat_map(|p| p.peers)
            {
                see(peer.lastseen);
            }
        }
        latest
    }
}

/// The most recent time an event was observed: series last observation, `lastTimestamp`,
/// `eventTime`, `firstTimestamp`, creation, in that order of preference.
pub fn event_time(event: &Event) -> Option<DateTime<Utc>> {
    event
        .series
        .as_ref()
        .and_then(|s| s.last_observed_time.as_ref())
        .map(|t| from_jiff(t.0))
        .or_else(|| event.last_timestamp.as_ref().map(|t| from_jiff(t.0)))
        .or_else(|| event.event_time.as_ref().map(|t| from_jiff(t.0)))
        .or_else(|| event.first_timestamp.as_ref().map(|t| from_jiff(t.0)))
        .or_else(|| event.metadata.creation_timestamp.as_ref().map(|t| from_jiff(t.0)))
}

/// Items of a `kubectl get -o json` document: a `List` (or `XList`) gives its items, a single
/// object gives itself. Each item is parsed on its own; unparseable items are returned as errors
/// naming their index and name, so one odd item never hides the rest.
pub fn items<T: DeserializeOwned>(doc: Value) -> (Vec<T>, Vec<String>) {
    parse_items(raw_items(doc))
}

/// The objects of a `kubectl get -o json` document, unparsed: a `List`'s items, an array's
/// elements, or the single object.
pub fn raw_items(doc: Value) -> Vec<Value> {
    match doc {
        Value::Object(mut map) if map.get("items").is_some_and(Value::is_array) => match map.remove("items") {
            Some(Value::Array(items)) => items,
            _ => Vec::new(),
        },
        Value::Array(items) => items,
        Value::Null => Vec::new(),
        other => vec![other],
    }
}

/// Parses `raw` objects leniently: those that parse, and a message per one that does not.
pub fn parse_items<T: DeserializeOwned>(raw: Vec<Value>) -> (Vec<T>, Vec<String>) {
    let mut parsed = Vec::with_capacity(raw.len());
    let mut errors = Vec::new();
    for (index, item) in raw.into_iter().enumerate() {
        let name = item
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string();
        match serde_json::from_value(item) {
            Ok(v) => parsed.push(v),
            Err(e) => errors.push(format!("item {index} ({name}): {e}")),
        }
    }
    (parsed, errors)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn items_accepts_lists_and_single_objects() {
        let (list, errors): (Vec<Pod>, _) =
            items(json!({"kind": "List", "items": [{"metadata": {"name": "a"}}, {"metadata": {"name": "b"}}]}));
        assert_eq!(list.len(), 2);
        assert!(errors.is_empty());
        let (single, _): (Vec<Pod>, _) = items(json!({"kind": "Pod", "metadata": {"name": "a"}}));
        assert_eq!(single.len(), 1);
        let (some, errors): (Vec<Pod>, _) =
            items(json!({"items": [{"metadata": {"name": "ok"}}, {"metadata": {"name": 7}}]}));
        assert_eq!(some.len(), 1);
        assert_eq!(errors.len(), 1);
        assert!(errors[0].starts_with("item 1"), "{errors:?}");
    }

    #[test]
    fn gaps_read_back_from_their_display_form() {
        let message = "events is forbidden: User \"dev@example.com\" cannot list resource \"events\" in API group \"\" in the namespace \"store\" (x)";
        for reason in [
            GapReason::Forbidden(message.into()),
            GapReason::Failed("timed out".into()),
            GapReason::NotCollected("RBAC".into()),
            GapReason::NotInBundle("operator/logs/".into()),
        ] {
            let gap = Gap {
                evidence: "operator logs".into(),
                reason,
            };
            assert_eq!(Gap::parse(&gap.to_string()), Some(gap));
        }
        assert_eq!(Gap::parse("events: gone (x)"), None);
        assert_eq!(Gap::parse("no colon"), None);
    }

    fn operator_evidence() -> OperatorEvidence {
        let deployment = |name: &str, image_cmd: &str| -> Deployment {
            serde_json::from_value(json!({
                "metadata": {"namespace": "ops", "name": name},
                "spec": {"selector": {"matchLabels": {"app": name}},
                         "template": {"spec": {"containers": [{"name": "operator", "image": "x", "command": [image_cmd, "run", "op.py"]}]}}}
            }))
            .unwrap()
        };
        let pod = |name: &str, app: &str| -> Pod {
            serde_json::from_value(json!({"metadata": {"namespace": "ops", "name": name, "labels": {"app": app}}}))
                .unwrap()
        };
        let log = |pod: &str| LogSource {
            pod: pod.into(),
            container: "operator".into(),
            previous: false,
            text: String::new(),
        };
        OperatorEvidence {
            deployments: Evidence::Present(vec![deployment("a", "kopf"), deployment("b", "kopf")]),
            pods: Evidence::Present(vec![pod("a-1-x", "a"), pod("b-1-y", "b")]),
            configmaps: Evidence::Present(vec![]),
            // Replaced Pods, their logs kept: named as each Deployment's ReplicaSets name Pods.
            logs: Evidence::Present(vec![
                log("a-1-x"),
                log("b-1-y"),
                log("a-5d7f9c8b4-x2x4z"),
                log("b-5d7f9c8b4-x2x4z"),
            ]),
            leases: Evidence::Present(vec![]),
            peerings: Evidence::Present(vec![]),
            chosen: None,
            others: vec![],
            unchosen: Vec::new(),
        }
    }

    #[test]
    fn selecting_a_deployment_keeps_its_pods_and_logs_only() {
        let mut op = operator_evidence();
        op.select_deployment("ops", "a", "operator/deployment.json");
        let names = |d: &[Deployment]| d.iter().map(|d| d.metadata.name.clone().unwrap()).collect::<Vec<_>>();
        assert_eq!(names(op.deployments.get().unwrap()), ["a"]);
        let pods: Vec<_> = op
            .pods
            .get()
            .unwrap()
            .iter()
            .map(|p| p.metadata.name.clone().unwrap())
            .collect();
        assert_eq!(pods, ["a-1-x"]);
        let logs: Vec<_> = op.logs.get().unwrap().iter().map(|l| l.pod.as_str()).collect();
        assert_eq!(
            logs,
            ["a-1-x", "a-5d7f9c8b4-x2x4z"],
            "a replaced Pod's log is kept by its name"
        );

        let mut op = operator_evidence();
        op.select_deployment("ops", "c", "operator/deployment.json");
        assert_eq!(
            op.deployments.gap().unwrap().to_string(),
            "operator Deployment: not in the bundle (ops/deployment/c is not in operator/deployment.json, which holds ops/deployment/a, ops/deployment/b)"
        );
        assert!(op.pods.gap().is_some() && op.logs.gap().is_some());
    }

    #[test]
    fn files_join_pod_logs_replace_their_own_copy_and_fill_a_gap() {
        let pod = LogSource {
            pod: "op-1".into(),
            container: "operator".into(),
            previous: false,
            text: "pod\n".into(),
        };
        let file = LogSource {
            pod: "operate.log".into(),
            container: crate::logs::file::FILE_CONTAINER.into(),
            previous: false,
            text: "new\n".into(),
        };
        let stale_copy = LogSource {
            text: "old\n".into(),
            ..file.clone()
        };
        let mut logs = Evidence::Present(vec![pod.clone(), stale_copy]);
        add_log_files(&mut logs, std::slice::from_ref(&file));
        assert_eq!(logs.get().unwrap(), &vec![pod.clone(), file.clone()]);

        let mut logs = Evidence::missing("operator logs", GapReason::Failed("no operator Pods".into()));
        add_log_files(&mut logs, std::slice::from_ref(&file));
        assert_eq!(logs.get().unwrap(), &vec![file]);

        let mut logs = Evidence::missing("operator logs", GapReason::Failed("no operator Pods".into()));
        add_log_files(&mut logs, &[]);
        assert!(logs.gap().is_some());
    }
}
