//! The one operator resolver: which operator handles a Microservice's namespace, ranked by the
//! evidence of a [`Snapshot`] and shown with it. Pure. Every command asks it through
//! [`Snapshot::operator_for`] (status's table, `-o wide`, `-o json` and NAME, `explain-events`,
//! `logs --handler`, `collect`), so that they name the same operator, or the same "no operator
//! serves this namespace", or the same ambiguity.
//!
//! Candidates: every operator Deployment in evidence ([`OperatorEvidence::deployments`], and the
//! [`OperatorEvidence::others`] seen but not collected), and a process outside the cluster (a
//! laptop `operate`) when a current Lease or a `--log-file` shows one. A candidate that does not
//! serve the namespace (its `--namespace`/`-A` args) is listed, never chosen, unless
//! `--operator` names it. Among those that serve it, the evidence scores:
//!
//! | evidence | points |
//! |---|---|
//! | `--operator` names it | [`FLAG`] |
//! | it holds the current Lease that governs the namespace (ours; the holder's Pod, or a process that is no Deployment's Pod) | [`LEASE`] |
//! | a `--log-file` names the object (the log of a process outside the cluster, or a Pod's log shipped elsewhere) | [`LOG_NAMES_OBJECT`] |
//! | a `--log-file` carries the identity it acquired the Lease with | [`LOG_IDENTITY`] |
//! | the object's managedFields: the latest status/annotation writer is its kind (`kubectl-microservice` for ours, `kopf` for Kopf) | [`MANAGER`] |
//!
//! The best score wins when it beats the next one; a tie between the best is ambiguous (name one
//! with `--operator`). Pod logs are deliberately not evidence here: `status` reads them only when
//! a verdict needs them, and the answer must not depend on which command asked.

use std::collections::BTreeSet;

use chrono::{DateTime, Duration, Utc};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::coordination::v1::Lease;
use serde::Serialize;

use super::operator::{Leadership, OperatorKind, OperatorRef, find_operators};
use super::{Evidence, Gap, GapReason, OperatorEvidence, Snapshot};
use crate::logs::file::FILE_CONTAINER;
use crate::logs::{Format, LogSource, Record};
use crate::resource::{FIELD_MANAGER, MicroserviceObject};
use crate::time::{from_jiff, plus, rfc3339_seconds};
use crate::vocab::lease::{DEFAULT_LEASE_NAME, LEASE_DURATION, WATCH_NAMESPACES_ANNOTATION};

/// Points for the operator `--operator` names: always chosen.
pub const FLAG: u32 = 1000;
/// Points for holding the current Lease that governs the namespace.
pub const LEASE: u32 = 40;
/// Points for a `--log-file` that names the object.
pub const LOG_NAMES_OBJECT: u32 = 30;
/// Points for a `--log-file` whose election line carries the candidate's identity.
pub const LOG_IDENTITY: u32 = 20;
/// Points for the kind of the object's latest status/annotation writer (managedFields).
pub const MANAGER: u32 = 10;

/// Times closer than this are not ordered (Lease renewals are written on the holder's clock).
const SKEW: Duration = Duration::seconds(2);

/// The logs an answer about one object reads: its operator's ([`Resolution::logs`]), or the gap
/// that says why there are none.
pub type OperatorLogs<'s> = Result<Vec<&'s LogSource>, Gap>;

/// What the resolver decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// An operator Deployment serves the namespace: `operator` is `NS/deployment/NAME`.
    Deployment,
    /// A process outside the cluster (a laptop `operate`) handles it: `operator` is
    /// `process/HOLDER-IDENTITY` (from the Lease) or `log-file/NAME` (from a `--log-file`).
    Process,
    /// No operator in evidence serves the namespace; `candidates` lists what exists.
    NoneServes,
    /// Several serve it and the evidence does not tell them apart: give `--operator`.
    Ambiguous,
    /// The operators could not be read (a gap): nothing can be said.
    #[default]
    Unknown,
}

impl Verdict {
    /// `deployment`, `process`, `none-serves`, `ambiguous`, `unknown`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Deployment => "deployment",
            Verdict::Process => "process",
            Verdict::NoneServes => "none-serves",
            Verdict::Ambiguous => "ambiguous",
            Verdict::Unknown => "unknown",
        }
    }
}

/// One operator considered, with what counted for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Candidate {
    /// `NS/deployment/NAME`, `process/HOLDER-IDENTITY` or `log-file/NAME`.
    pub operator: String,
    /// Ours or Kopf; `None` for a process whose kind no evidence shows.
    pub kind: Option<OperatorKind>,
    /// What it watches: `todo`, `a,b`, `all namespaces`, or for a process what its Lease
    /// annotation or log says (`unknown` when nothing does).
    pub watches: String,
    /// Whether it serves the namespace asked about.
    pub serves: bool,
    /// The sum of the points of [`Candidate::evidence`] (module docs).
    pub score: u32,
    /// Each fact that counted, or was checked, one per entry (`+40: holds Lease todo/...`).
    pub evidence: Vec<String>,
}

/// The process outside the cluster, when the resolver chose one.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Process {
    /// The Lease's `holderIdentity` (`<host>_<16 hex>`), when a Lease shows it.
    pub holder: Option<String>,
    /// The Lease it holds, `NS/NAME`.
    pub lease: Option<String>,
    /// Whether that Lease is current (renewed within its duration, on the snapshot's clock).
    pub current: bool,
    /// The Lease's `renewTime` (else `acquireTime`), API server clock as written by the holder.
    pub renewed: Option<DateTime<Utc>>,
    /// The `--log-file` that is its log (its name as the evidence cites it: `file NAME`).
    pub log: Option<String>,
}

/// The resolver's answer for one namespace (and object). The default is `unknown` with nothing
/// considered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Resolution {
    /// What was decided.
    pub verdict: Verdict,
    /// The operator's name (see [`Verdict`]); `None` unless `deployment` or `process`.
    pub operator: Option<String>,
    /// The namespace asked about; `None` for "any" (`logs` without a namespace).
    pub namespace: Option<String>,
    /// One sentence: the decision and its strongest evidence.
    pub summary: String,
    /// Facts about the object that counted (managedFields writers, Leases, `--log-file`s).
    pub evidence: Vec<String>,
    /// Every operator considered, best first (those serving the namespace before the others).
    pub candidates: Vec<Candidate>,
    /// The chosen process, when `verdict` is `process`.
    #[serde(skip)]
    pub process: Option<Process>,
}

impl Resolution {
    /// What the `OPERATOR` column of `status -o wide` prints, and every command names: the
    /// operator, else `<none>` (none serves the namespace: `operator` is `null`, as kubectl
    /// prints `<none>` for a missing value), `<ambiguous>`, `<unknown>`. One word, so that the
    /// table's columns stay columns.
    pub fn label(&self) -> String {
        match (&self.operator, self.verdict) {
            (Some(op), _) => op.clone(),
            (None, Verdict::NoneServes) => "<none>".into(),
            (None, Verdict::Ambiguous) => "<ambiguous>".into(),
            (None, _) => "<unknown>".into(),
        }
    }

    /// The line every human output prints: the summary, which names the operator when one was
    /// decided, else the label first (`<none serves todo>: no operator serves ...`).
    pub fn line(&self) -> String {
        match self.operator {
            Some(_) => self.summary.clone(),
            None => format!("{}: {}", self.label(), self.summary),
        }
    }

    /// Whether `source` (a log in `snapshot`) is the resolved operator's, the only logs an answer
    /// reads: for a Deployment, its Pods' (every Pod log when the evidence holds one Deployment,
    /// else those named `NAME-...`, replaced Pods too); for a process outside the cluster, the
    /// Pods' of the Deployments that serve the namespace too (they stand by on its Lease); for
    /// anything else none of the Pods'. `--log-file` logs always count (the user gave them);
    /// every log does when the operators are unknown (a bundle without
    /// `operator/deployment.json`).
    pub fn owns_log(&self, snapshot: &Snapshot, source: &LogSource) -> bool {
        if source.container == FILE_CONTAINER || self.verdict == Verdict::Unknown {
            return true;
        }
        let names: Vec<&str> = match self.verdict {
            Verdict::Deployment => self.deployment().into_iter().collect(),
            Verdict::Process => self.serving().map(|c| c.operator.as_str()).collect(),
            _ => Vec::new(),
        };
        let names: Vec<(&str, &str)> = names.into_iter().filter_map(|d| d.split_once("/deployment/")).collect();
        if names.is_empty() {
            return false;
        }
        let several = snapshot.operator.deployments.get().is_some_and(|d| d.len() > 1);
        // Deployments of one name in several namespaces (`-A`: `microservice-operator` in
        // each): the Pod's namespace decides, when the evidence holds the Pod.
        let pod_namespace = snapshot
            .operator
            .pods
            .get()
            .into_iter()
            .flatten()
            .find(|p| p.metadata.name.as_deref() == Some(source.pod.as_str()))
            .and_then(|p| p.metadata.namespace.as_deref());
        !several
            || names
                .iter()
                .any(|(ns, n)| source.pod.starts_with(&format!("{n}-")) && pod_namespace.is_none_or(|pns| pns == *ns))
    }

    /// The logs every log-derived fact about this resolution's object is read from (runs,
    /// cycle ends, "nothing logged since", a handler still running, errors): the snapshot's
    /// logs that [`Resolution::owns_log`] keeps, and only those. When the evidence holds logs
    /// but none of them is this operator's (another operator's Pods were read, as `-A` reads
    /// every operator's), that is a gap, said as the live read of one namespace says it (`...
    /// has no Pods: no logs to read`), never another operator's logs read as this one's. The
    /// snapshot's own gap in its logs is the answer's gap.
    pub fn logs<'s>(&self, snapshot: &'s Snapshot) -> OperatorLogs<'s> {
        let all = match &snapshot.operator.logs {
            Evidence::Present(all) => all,
            Evidence::Gap(gap) => return Err(gap.clone()),
        };
        let kept: Vec<&LogSource> = all.iter().filter(|s| self.owns_log(snapshot, s)).collect();
        // No operator serves the namespace: no operator log is this object's (a fact, as the
        // read of its namespace alone holds none), only the --log-files.
        if !kept.is_empty() || all.is_empty() || self.verdict == Verdict::NoneServes {
            return Ok(kept);
        }
        let why = match self.deployment() {
            Some(op) => {
                let (ns, name) = op.split_once("/deployment/").unwrap_or(("", op));
                let has_pods = snapshot.operator.pods.get().into_iter().flatten().any(|p| {
                    p.metadata.namespace.as_deref() == Some(ns)
                        && p.metadata
                            .name
                            .as_deref()
                            .is_some_and(|n| n.starts_with(&format!("{name}-")))
                });
                if has_pods {
                    format!("no log of {op}'s Pods in evidence")
                } else {
                    format!("{op} has no Pods: no logs to read")
                }
            }
            None if self.verdict == Verdict::Ambiguous => {
                "the operator is ambiguous: no one operator's logs to read".to_string()
            }
            None => format!("no log of {} in evidence", self.label()),
        };
        Err(Gap {
            evidence: "operator logs".into(),
            reason: GapReason::Failed(why),
        })
    }

    /// The chosen Deployment operator, `NS/deployment/NAME`, when the verdict is `deployment`.
    pub fn deployment(&self) -> Option<&str> {
        match self.verdict {
            Verdict::Deployment => self.operator.as_deref(),
            _ => None,
        }
    }

    /// The serving candidates, best first.
    pub fn serving(&self) -> impl Iterator<Item = &Candidate> {
        self.candidates.iter().filter(|c| c.serves)
    }

    /// One line per candidate: `ops/deployment/x (ours) watches todo` — what exists and what
    /// each watches, for "none serves" and "ambiguous" answers.
    pub fn listing(&self) -> Vec<String> {
        self.candidates
            .iter()
            .map(|c| {
                let kind = match c.kind {
                    Some(OperatorKind::Ours) => " (ours)",
                    Some(OperatorKind::Kopf) => " (Kopf)",
                    None => "",
                };
                format!("{}{kind} watches {}", c.operator, c.watches)
            })
            .collect()
    }
}

/// An operator seen but not collected: it does not serve the namespace asked about, so its Pods,
/// logs and RBAC stay out of the evidence (other teams' data); only what it is and watches is
/// kept (a bundle's `meta.json` `otherOperators`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OperatorSummary {
    /// `NS/deployment/NAME`.
    pub operator: String,
    /// Ours or Kopf.
    pub kind: OperatorKind,
    /// The namespaces it watches; `None` for all.
    pub watches: Option<Vec<String>>,
}

impl OperatorSummary {
    /// The summary of a recognised operator.
    pub fn of(op: &OperatorRef) -> Self {
        OperatorSummary {
            operator: op.display(),
            kind: op.kind,
            watches: op.watches.clone(),
        }
    }
}

fn watch_text(watches: Option<&[String]>) -> String {
    match watches {
        None => "all namespaces".into(),
        Some([]) => "no namespace".into(),
        Some(list) => list.join(","),
    }
}

fn serves(watches: Option<&[String]>, namespace: Option<&str>) -> bool {
    match (watches, namespace) {
        (_, None) | (None, _) => true,
        (Some(list), Some(ns)) => list.iter().any(|w| w == ns),
    }
}

/// What a `--log-file` (a log read from a file, container [`FILE_CONTAINER`]) says about who
/// wrote it.
#[derive(Debug, Clone, Default)]
struct FileClues {
    /// How evidence cites it: `file NAME`.
    name: String,
    /// Ours or Kopf, by the format most of its records are in.
    kind: Option<OperatorKind>,
    /// `identity=` of our elector's `Became the leader` lines, with their `lease=`.
    identities: Vec<(String, Option<String>)>,
    /// `ns/name` of every object its records name.
    objects: BTreeSet<String>,
    /// The `namespaces=` of our `Operator started` line, when present.
    started_watching: Option<String>,
}

impl FileClues {
    fn of(source: &LogSource) -> FileClues {
        let mut clues = FileClues {
            name: crate::logs::file::source_name(&source.pod, &source.container),
            ..Default::default()
        };
        let (mut ours, mut kopf) = (0usize, 0usize);
        for record in source.records() {
            match record.format {
                Format::OursText | Format::OursJson => ours += 1,
                Format::KopfFull | Format::KopfPlain | Format::KopfJson => kopf += 1,
                Format::Unmatched => {}
            }
            if let Some(o) = &record.object {
                clues
                    .objects
                    .insert(format!("{}/{}", o.namespace.as_deref().unwrap_or(""), o.name));
            }
            let field = |r: &Record, key: &str| r.fields.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
            if record.message.starts_with("Became the leader")
                && let Some(identity) = field(&record, "identity")
            {
                clues.identities.push((identity, field(&record, "lease")));
            }
            if record.message.starts_with("Operator started") {
                clues.started_watching = field(&record, "namespaces");
            }
        }
        clues.kind = match (ours, kopf) {
            (0, 0) => None,
            (o, k) if o >= k => Some(OperatorKind::Ours),
            _ => Some(OperatorKind::Kopf),
        };
        clues
    }
}

/// A Lease that may govern the namespace, as read.
struct LeaseFacts {
    reference: String,
    holder: Option<String>,
    renewed: Option<DateTime<Utc>>,
    current: bool,
    serves: Option<String>,
    /// The Deployment candidate whose Pod holds it (index), when one does.
    pod_of: Option<usize>,
}

/// Whether the instance part of a `holderIdentity` (`<pod>_<random>`) is a Pod of `op`: one of
/// the Pods in evidence in its namespace whose name starts with the Deployment's, else (no Pods
/// in evidence) a name of its Pods' shape (`NAME-<hash>-<id>`).
fn holder_pod_of(holder: &str, op: &OperatorRef, pods: Option<&[k8s_openapi::api::core::v1::Pod]>) -> bool {
    let instance = holder.rsplit_once('_').map_or(holder, |(i, _)| i);
    let prefix = format!("{}-", op.name);
    match pods {
        Some(pods) if !pods.is_empty() => pods.iter().any(|p| {
            p.metadata.name.as_deref() == Some(instance)
                && p.metadata.namespace.as_deref() == Some(op.namespace.as_str())
                && instance.starts_with(&prefix)
        }),
        _ => instance.starts_with(&prefix),
    }
}

/// The object's latest writer of status or annotations, by managedFields: its manager's name and
/// the kind it stands for (`kubectl-microservice` → ours, `kopf...` → Kopf), with the entry
/// described.
fn handler_writer(obj: &MicroserviceObject) -> Option<(OperatorKind, String)> {
    let entries = super::managed_fields::entries(obj.metadata.managed_fields.as_ref());
    entries
        .iter()
        .filter_map(|e| {
            let kind = if e.manager == FIELD_MANAGER {
                OperatorKind::Ours
            } else if e.manager.starts_with("kopf") {
                OperatorKind::Kopf
            } else {
                return None;
            };
            (e.writes_status() || e.owns.iter().any(|o| o == "metadata")).then_some((kind, e))
        })
        .max_by_key(|(_, e)| e.time)
        .map(|(kind, e)| (kind, e.describe()))
}

/// Resolves the operator of `namespace` (`None`: any namespace) for `obj` (when one object is
/// asked about: its managedFields and the logs naming it count) from `snapshot`. Pure.
pub fn resolve(snapshot: &Snapshot, namespace: Option<&str>, obj: Option<&MicroserviceObject>) -> Resolution {
    let evidence_of = &snapshot.operator;
    let operators: Vec<OperatorRef> = evidence_of
        .deployments
        .get()
        .map(|d| find_operators(d))
        .unwrap_or_default();
    let now = snapshot.now();
    let mut object_evidence = Vec::new();
    let key = obj.map(MicroserviceObject::key);

    let mut candidates: Vec<Candidate> = operators
        .iter()
        .map(|op| Candidate {
            operator: op.display(),
            kind: Some(op.kind),
            watches: watch_text(op.watches.as_deref()),
            serves: serves(op.watches.as_deref(), namespace),
            score: 0,
            evidence: vec![format!(
                "watches {} (its command: {})",
                watch_text(op.watches.as_deref()),
                op.argv.join(" ")
            )],
        })
        .collect();
    for other in &evidence_of.others {
        if candidates.iter().any(|c| c.operator == other.operator) {
            continue;
        }
        candidates.push(Candidate {
            operator: other.operator.clone(),
            kind: Some(other.kind),
            watches: watch_text(other.watches.as_deref()),
            serves: serves(other.watches.as_deref(), namespace),
            score: 0,
            evidence: vec![format!(
                "watches {} (seen; its Pods, logs and RBAC not collected)",
                watch_text(other.watches.as_deref())
            )],
        });
    }
    let deployment_count = candidates.len();

    // --operator.
    if let Some(chosen) = &evidence_of.chosen {
        match candidates.iter_mut().find(|c| &c.operator == chosen) {
            Some(c) => {
                c.score += FLAG;
                c.evidence.push(format!("+{FLAG}: named by --operator {chosen}"));
                if !c.serves {
                    // Named, so diagnosed: operator-not-watching says it does not watch.
                    c.serves = true;
                    c.evidence.push(format!(
                        "it does not watch {}: diagnosed because --operator names it",
                        namespace.unwrap_or("")
                    ));
                }
            }
            None => object_evidence.push(format!("--operator {chosen}: not in evidence")),
        }
    }

    // The object's managedFields.
    let writer = obj.and_then(handler_writer);
    if let Some((kind, entry)) = &writer {
        object_evidence.push(format!(
            "managedFields: the latest status/annotation write is {entry} ({})",
            match kind {
                OperatorKind::Ours => "our field manager: an `operate`",
                OperatorKind::Kopf => "Kopf's",
            }
        ));
    }

    // Leases that may govern the namespace: those the serving candidates of ours elect on, and
    // `NS/microservice-operator`, the one `operate --namespace NS` elects on by default.
    let leases: &[Lease] = evidence_of.leases.get().map_or(&[], Vec::as_slice);
    let pods = evidence_of.pods.get().map(Vec::as_slice);
    let mut wanted: Vec<(String, String)> = Vec::new();
    if let Some(ns) = namespace {
        for (i, op) in operators.iter().enumerate() {
            if candidates[i].serves
                && let Leadership::Lease { namespace, name } = op.leadership_in(ns)
            {
                wanted.push((namespace, name));
            }
        }
        wanted.push((ns.to_string(), DEFAULT_LEASE_NAME.to_string()));
    }
    let mut lease_facts: Vec<LeaseFacts> = Vec::new();
    for lease in leases {
        let (Some(lns), Some(lname)) = (lease.metadata.namespace.as_deref(), lease.metadata.name.as_deref()) else {
            continue;
        };
        let annotated = lease
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(WATCH_NAMESPACES_ANNOTATION))
            .cloned();
        let governs_by_annotation = annotated
            .as_deref()
            .is_some_and(|a| a == "*" || namespace.is_some_and(|ns| a.split(',').any(|n| n == ns)));
        let named = wanted.iter().any(|(n, m)| n == lns && m == lname);
        if !(named || governs_by_annotation) {
            continue;
        }
        let spec = lease.spec.clone().unwrap_or_default();
        let holder = spec.holder_identity.filter(|h| !h.is_empty());
        let renewed = spec
            .renew_time
            .as_ref()
            .or(spec.acquire_time.as_ref())
            .map(|t| from_jiff(t.0));
        let duration = spec
            .lease_duration_seconds
            .map(|s| Duration::seconds(s.into()))
            .unwrap_or(Duration::seconds(LEASE_DURATION.as_secs() as i64));
        let current = match (holder.as_ref(), renewed, now) {
            (Some(_), Some(r), Some(now)) => now <= plus(plus(r, duration), SKEW),
            _ => false,
        };
        let pod_of = holder.as_deref().and_then(|h| {
            operators
                .iter()
                .position(|op| op.kind == OperatorKind::Ours && holder_pod_of(h, op, pods))
        });
        lease_facts.push(LeaseFacts {
            reference: format!("{lns}/{lname}"),
            holder,
            renewed,
            current,
            serves: annotated,
            pod_of,
        });
    }
    for l in &lease_facts {
        object_evidence.push(format!(
            "Lease {}: holderIdentity {}, renewed {}{}{}",
            l.reference,
            l.holder.as_deref().unwrap_or("<none>"),
            l.renewed.map(rfc3339_seconds).unwrap_or_else(|| "never".into()),
            if l.current {
                " (current)"
            } else {
                " (expired or released)"
            },
            l.serves
                .as_deref()
                .map(|s| format!(", its holder watches {s}"))
                .unwrap_or_default(),
        ));
    }

    // --log-file logs.
    let files: Vec<FileClues> = evidence_of
        .logs
        .get()
        .into_iter()
        .flatten()
        .filter(|s| s.container == FILE_CONTAINER)
        .map(FileClues::of)
        .collect();

    let mut process: Option<(Candidate, Process)> = None;
    // A current Lease held by a Deployment's Pod, or by a process that is none.
    for l in lease_facts.iter().filter(|l| l.current) {
        let holder = l.holder.clone().unwrap_or_default();
        let own_log = files.iter().find(|f| f.identities.iter().any(|(id, _)| *id == holder));
        match l.pod_of {
            Some(i) => {
                let c = &mut candidates[i];
                if c.serves {
                    c.score += LEASE;
                    c.evidence.push(format!(
                        "+{LEASE}: its Pod holds the current Lease {} as {holder}",
                        l.reference
                    ));
                    if let Some(f) = own_log {
                        c.score += LOG_IDENTITY;
                        c.evidence.push(format!(
                            "+{LOG_IDENTITY}: the log given ({}) acquired that Lease as {holder}",
                            f.name
                        ));
                    }
                }
            }
            None if process.is_none() => {
                let mut c = Candidate {
                    operator: format!("process/{holder}"),
                    kind: Some(OperatorKind::Ours),
                    watches: l
                        .serves
                        .clone()
                        .map(|s| if s == "*" { "all namespaces".into() } else { s })
                        .unwrap_or_else(|| "unknown".into()),
                    serves: true,
                    score: LEASE,
                    evidence: vec![format!(
                        "+{LEASE}: holds the current Lease {} as {holder}, and is no Pod of a Deployment in evidence: an `operate` outside the cluster",
                        l.reference
                    )],
                };
                if let Some(f) = own_log {
                    c.score += LOG_IDENTITY;
                    c.evidence.push(format!(
                        "+{LOG_IDENTITY}: the log given ({}) acquired that Lease as {holder}",
                        f.name
                    ));
                }
                process = Some((
                    c,
                    Process {
                        holder: Some(holder.clone()),
                        lease: Some(l.reference.clone()),
                        current: true,
                        renewed: l.renewed,
                        log: own_log.map(|f| f.name.clone()),
                    },
                ));
            }
            None => {}
        }
    }
    // Logs given as files: whose are they?
    for f in &files {
        let names_object = key.as_ref().is_some_and(|k| f.objects.contains(k));
        let names_namespace = namespace.is_some_and(|ns| f.objects.iter().any(|o| o.split('/').next() == Some(ns)));
        if let Some((c, p)) = process.as_mut()
            && p.log.as_deref() == Some(f.name.as_str())
        {
            if names_object {
                c.score += LOG_NAMES_OBJECT;
                c.evidence.push(format!(
                    "+{LOG_NAMES_OBJECT}: its log ({}) names {}",
                    f.name,
                    key.as_deref().unwrap_or("")
                ));
            }
            continue;
        }
        // Its identity names a Deployment's Pod: that Deployment's log, shipped.
        let by_identity = f.identities.iter().find_map(|(id, _)| {
            operators
                .iter()
                .position(|op| op.kind == OperatorKind::Ours && holder_pod_of(id, op, pods))
        });
        // Else the one serving Deployment of its kind, when exactly one (a Pod's log from a log
        // store); else a process outside the cluster.
        let same_kind: Vec<usize> = (0..deployment_count)
            .filter(|&i| candidates[i].serves && f.kind.is_some() && candidates[i].kind == f.kind)
            .collect();
        let owner = by_identity.or(match same_kind.as_slice() {
            [one] if f.identities.is_empty() => Some(*one),
            _ => None,
        });
        match owner {
            Some(i) => {
                let c = &mut candidates[i];
                if names_object && c.serves {
                    c.score += LOG_NAMES_OBJECT;
                    c.evidence.push(format!(
                        "+{LOG_NAMES_OBJECT}: the log given ({}) names {} and is its log ({})",
                        f.name,
                        key.as_deref().unwrap_or(""),
                        if by_identity.is_some() {
                            "its election line names one of its Pods"
                        } else {
                            "the one serving operator of its kind"
                        }
                    ));
                }
            }
            None if (names_object || names_namespace) && process.is_none() => {
                let mut c = Candidate {
                    operator: format!("log-file/{}", f.name.trim_start_matches("file ")),
                    kind: f.kind,
                    watches: f.started_watching.clone().unwrap_or_else(|| "unknown".into()),
                    serves: true,
                    score: 0,
                    evidence: vec![format!(
                        "the log given ({}) is no Pod's of a serving Deployment: a process outside the cluster",
                        f.name
                    )],
                };
                if names_object {
                    c.score += LOG_NAMES_OBJECT;
                    c.evidence.push(format!(
                        "+{LOG_NAMES_OBJECT}: it names {}",
                        key.as_deref().unwrap_or("")
                    ));
                }
                // Its own election line names a Lease that is no longer current: it stopped.
                let stopped = lease_facts.iter().find(|l| {
                    l.holder
                        .as_ref()
                        .is_some_and(|h| f.identities.iter().any(|(id, _)| id == h))
                });
                if let Some(l) = stopped {
                    c.operator = format!("process/{}", l.holder.clone().unwrap_or_default());
                    c.evidence.push(format!(
                        "its election line names the Lease {} it held as {}, now expired or released",
                        l.reference,
                        l.holder.as_deref().unwrap_or("")
                    ));
                }
                process = Some((
                    c,
                    Process {
                        holder: stopped.and_then(|l| l.holder.clone()),
                        lease: stopped.map(|l| l.reference.clone()),
                        current: false,
                        renewed: stopped.and_then(|l| l.renewed),
                        log: Some(f.name.clone()),
                    },
                ));
            }
            None => {}
        }
    }
    if let Some((c, _)) = &process {
        candidates.push(c.clone());
    }
    // managedFields: the writer's kind.
    if let Some((kind, _)) = &writer {
        for c in candidates.iter_mut().filter(|c| c.serves && c.kind == Some(*kind)) {
            c.score += MANAGER;
            c.evidence.push(format!(
                "+{MANAGER}: the object's latest status/annotation writer is {}",
                match kind {
                    OperatorKind::Ours => "ours (kubectl-microservice)",
                    OperatorKind::Kopf => "Kopf (kopf)",
                }
            ));
        }
    }

    // Rank: serving first, then by score; the order of evidence otherwise.
    let mut order: Vec<usize> = (0..candidates.len()).collect();
    order.sort_by_key(|&i| (!candidates[i].serves, std::cmp::Reverse(candidates[i].score)));
    let candidates: Vec<Candidate> = order.into_iter().map(|i| candidates[i].clone()).collect();
    let serving: Vec<&Candidate> = candidates.iter().filter(|c| c.serves).collect();
    let where_ = namespace.map_or("any namespace".to_string(), |ns| format!("namespace {ns}"));
    let (verdict, operator, summary) = match serving.as_slice() {
        [] if evidence_of.deployments.get().is_none() && candidates.is_empty() => {
            let gap = evidence_of
                .deployments
                .gap()
                .map(ToString::to_string)
                .unwrap_or_default();
            (
                Verdict::Unknown,
                None,
                format!("the operators could not be read: {gap}"),
            )
        }
        [] => (
            Verdict::NoneServes,
            None,
            if candidates.is_empty() {
                format!("no operator serves {where_}: none is in evidence")
            } else {
                format!(
                    "no operator serves {where_}; found: {}",
                    candidates
                        .iter()
                        .map(|c| format!("{} watches {}", c.operator, c.watches))
                        .collect::<Vec<_>>()
                        .join("; ")
                )
            },
        ),
        [best, next, ..] if best.score == next.score => {
            let tied: Vec<&str> = serving
                .iter()
                .filter(|c| c.score == best.score)
                .map(|c| c.operator.as_str())
                .collect();
            (
                Verdict::Ambiguous,
                None,
                format!(
                    "{} operators serve {where_} and the evidence does not tell them apart ({}); give --operator NS/deployment/NAME",
                    tied.len(),
                    tied.join(", ")
                ),
            )
        }
        [best, ..] => {
            let verdict = if best.operator.contains("/deployment/") {
                Verdict::Deployment
            } else {
                Verdict::Process
            };
            let why = best
                .evidence
                .iter()
                .find(|e| e.starts_with('+'))
                .map(|e| format!(": {}", e.split_once(": ").map_or(e.as_str(), |(_, w)| w)))
                .unwrap_or_else(|| {
                    if serving.len() == 1 {
                        ": the only operator in evidence that watches it".to_string()
                    } else {
                        String::new()
                    }
                });
            (
                verdict,
                Some(best.operator.clone()),
                format!("{} serves {where_}{why}", best.operator),
            )
        }
    };
    let process = match verdict {
        Verdict::Process => process.map(|(_, p)| p),
        _ => None,
    };
    Resolution {
        verdict,
        operator,
        namespace: namespace.map(str::to_string),
        summary,
        evidence: object_evidence,
        candidates,
        process,
    }
}

impl OperatorEvidence {
    /// The summaries of every operator among `deployments` (for [`OperatorEvidence::others`]).
    pub fn summaries(deployments: &[Deployment]) -> Vec<OperatorSummary> {
        find_operators(deployments).iter().map(OperatorSummary::of).collect()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::evidence::{Evidence, GapReason, OperatorEvidence, RbacEvidence, Source};
    use serde_json::json;

    pub(crate) fn deployment(ns: &str, name: &str, command: serde_json::Value) -> Deployment {
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": ns},
            "spec": {"selector": {"matchLabels": {"app": name}}, "template": {"spec": {"containers": [
                {"name": "operator", "image": "x", "command": command}]}}}
        }))
        .unwrap()
    }

    pub(crate) fn snapshot(deployments: Vec<Deployment>) -> Snapshot {
        fn none<T>(what: &str) -> Evidence<T> {
            Evidence::missing(what, GapReason::NotInBundle(what.into()))
        }
        Snapshot {
            source: Source::Bundle("x".into()),
            captured_at: Some("2026-12-01T09:00:00Z".parse().unwrap()),
            namespace: Some("todo".into()),
            microservices: Evidence::Present(vec![]),
            crd: none("CRD"),
            events: Evidence::Present(vec![]),
            operator: OperatorEvidence {
                deployments: Evidence::Present(deployments),
                pods: Evidence::Present(vec![]),
                configmaps: Evidence::Present(vec![]),
                logs: Evidence::Present(vec![]),
                leases: Evidence::Present(vec![]),
                peerings: Evidence::Present(vec![]),
                chosen: None,
                others: vec![],
                unchosen: Vec::new(),
            },
            rbac: RbacEvidence {
                access_reviews: none("access reviews"),
                roles: none("Roles"),
                role_bindings: none("RoleBindings"),
                cluster_roles: none("ClusterRoles"),
                cluster_role_bindings: none("ClusterRoleBindings"),
            },
        }
    }

    pub(crate) fn lease(ns: &str, holder: &str, renewed: &str) -> Lease {
        serde_json::from_value(json!({
            "metadata": {"name": "microservice-operator", "namespace": ns,
                         "annotations": {WATCH_NAMESPACES_ANNOTATION: ns}},
            "spec": {"holderIdentity": holder, "leaseDurationSeconds": 15, "renewTime": renewed}
        }))
        .unwrap()
    }

    pub(crate) fn others() -> Vec<Deployment> {
        vec![
            deployment(
                "team-b",
                "microservice-operator",
                json!(["kubectl-microservice", "operate", "--namespace", "shop"]),
            ),
            deployment(
                "team-c",
                "catalog",
                json!(["kopf", "run", "--namespace=store", "op.py"]),
            ),
        ]
    }

    #[test]
    fn an_operator_of_another_namespace_is_never_chosen() {
        let s = snapshot(others());
        let r = resolve(&s, Some("todo"), None);
        assert_eq!(r.verdict, Verdict::NoneServes);
        assert_eq!(r.operator, None);
        assert_eq!(r.label(), "<none>");
        assert!(
            r.summary
                .contains("team-b/deployment/microservice-operator watches shop")
                && r.summary.contains("team-c/deployment/catalog watches store"),
            "{}",
            r.summary
        );
        assert!(r.candidates.iter().all(|c| !c.serves));
    }

    #[test]
    fn the_one_that_watches_the_namespace_is_chosen() {
        let mut ds = others();
        ds.push(deployment(
            "ops",
            "op",
            json!(["kubectl-microservice", "operate", "-n", "todo"]),
        ));
        let r = resolve(&snapshot(ds), Some("todo"), None);
        assert_eq!(
            (r.verdict, r.operator.as_deref()),
            (Verdict::Deployment, Some("ops/deployment/op"))
        );
        assert_eq!(r.candidates[0].operator, "ops/deployment/op");
    }

    #[test]
    fn two_that_watch_it_alike_are_ambiguous_and_the_flag_decides() {
        let ds = vec![
            deployment("a", "op", json!(["kopf", "run", "-A", "op.py"])),
            deployment("b", "op", json!(["kopf", "run", "--all-namespaces", "op.py"])),
        ];
        let mut s = snapshot(ds);
        let r = resolve(&s, Some("todo"), None);
        assert_eq!(r.verdict, Verdict::Ambiguous);
        assert!(
            r.summary.contains("a/deployment/op, b/deployment/op") && r.summary.contains("--operator"),
            "{}",
            r.summary
        );
        s.operator.chosen = Some("b/deployment/op".into());
        let r = resolve(&s, Some("todo"), None);
        assert_eq!(r.operator.as_deref(), Some("b/deployment/op"));
    }

    #[test]
    fn a_laptop_holding_the_lease_is_the_operator_and_its_log_proves_it() {
        let mut s = snapshot(others());
        s.operator.leases = Evidence::Present(vec![lease(
            "todo",
            "alice-laptop_0123456789abcdef",
            "2026-12-01T08:59:55Z",
        )]);
        let r = resolve(&s, Some("todo"), None);
        assert_eq!(r.verdict, Verdict::Process);
        assert_eq!(r.label(), "process/alice-laptop_0123456789abcdef");
        let p = r.process.clone().unwrap();
        assert!(p.current && p.log.is_none());
        s.operator.logs = Evidence::Present(vec![LogSource {
            pod: "op.log".into(),
            container: FILE_CONTAINER.into(),
            previous: false,
            text: "2026-12-01T08:50:00.000Z INFO Became the leader: acquired the lease lease=\"todo/microservice-operator\" identity=\"alice-laptop_0123456789abcdef\" term=1\n".into(),
        }]);
        let r = resolve(&s, Some("todo"), None);
        assert_eq!(r.label(), "process/alice-laptop_0123456789abcdef");
        assert_eq!(r.process.unwrap().log.as_deref(), Some("file op.log"));
        // Expired: it handled, it no longer does; nothing else serves.
        s.operator.leases = Evidence::Present(vec![lease(
            "todo",
            "alice-laptop_0123456789abcdef",
            "2026-12-01T08:00:00Z",
        )]);
        s.operator.logs = Evidence::Present(vec![]);
        assert_eq!(resolve(&s, Some("todo"), None).verdict, Verdict::NoneServes);
    }

    #[test]
    fn a_lease_held_by_the_deployments_pod_is_its_own() {
        let mut s = snapshot(vec![
            deployment("ops", "op", json!(["kubectl-microservice", "operate", "-n", "todo"])),
            deployment("ops2", "op2", json!(["kubectl-microservice", "operate", "-n", "todo"])),
        ]);
        assert_eq!(resolve(&s, Some("todo"), None).verdict, Verdict::Ambiguous);
        s.operator.leases = Evidence::Present(vec![lease(
            "todo",
            "op2-5d7f9c-x2x_0123456789abcdef",
            "2026-12-01T08:59:58Z",
        )]);
        let r = resolve(&s, Some("todo"), None);
        assert_eq!(r.operator.as_deref(), Some("ops2/deployment/op2"), "{r:?}");
    }

    /// Only the resolved operator's logs are read: another Deployment's Pods' never, a
    /// `--log-file` always.
    #[test]
    fn only_the_resolved_operators_logs_count() {
        let mut ds = others();
        ds.push(deployment(
            "ops",
            "op",
            json!(["kubectl-microservice", "operate", "-n", "todo"]),
        ));
        let s = snapshot(ds);
        let log = |pod: &str, container: &str| LogSource {
            pod: pod.into(),
            container: container.into(),
            previous: false,
            text: String::new(),
        };
        let r = resolve(&s, Some("todo"), None);
        assert!(r.owns_log(&s, &log("op-5d7f9c-x2x", "operator")));
        assert!(!r.owns_log(&s, &log("catalog-5d7f9c-x2x", "operator")));
        assert!(r.owns_log(&s, &log("operate.log", FILE_CONTAINER)));
        let none = resolve(&s, Some("nobody"), None);
        assert!(!none.owns_log(&s, &log("op-5d7f9c-x2x", "operator")));
        assert!(none.owns_log(&s, &log("operate.log", FILE_CONTAINER)));
    }

    /// The logs an object's facts are read from are its operator's only: with `-A`'s every
    /// operator's logs in evidence, an operator without Pods is a gap ("has no Pods"), one
    /// whose Pods' logs are missing another gap, never the other operators' logs.
    #[test]
    fn an_objects_logs_are_its_operators_or_a_gap() {
        let mut ds = others();
        ds.push(deployment(
            "ops",
            "op",
            json!(["kubectl-microservice", "operate", "-n", "todo"]),
        ));
        let mut s = snapshot(ds);
        let log = |pod: &str, container: &str| LogSource {
            pod: pod.into(),
            container: container.into(),
            previous: false,
            text: "2026-12-01T08:50:00.000Z INFO Handler 'accept' succeeded.\n".into(),
        };
        let pod = |ns: &str, name: &str| -> k8s_openapi::api::core::v1::Pod {
            serde_json::from_value(json!({"metadata": {"name": name, "namespace": ns}})).unwrap()
        };
        // Another operator's Pod and log only (ours in `ops` is scaled to 0): a Kopf one, and
        // one of ours of the same name in another namespace (`-A`).
        if let Evidence::Present(ds) = &mut s.operator.deployments {
            ds.push(deployment(
                "other",
                "op",
                json!(["kubectl-microservice", "operate", "-n", "other"]),
            ));
        }
        s.operator.pods = Evidence::Present(vec![pod("team-c", "catalog-5d7f9c-x2x"), pod("other", "op-77f9c-zz1")]);
        s.operator.logs = Evidence::Present(vec![
            log("catalog-5d7f9c-x2x", "operator"),
            log("op-77f9c-zz1", "operator"),
        ]);
        let r = resolve(&s, Some("todo"), None);
        assert_eq!(r.operator.as_deref(), Some("ops/deployment/op"));
        let gap = r.logs(&s).unwrap_err();
        assert_eq!(
            gap.to_string(),
            "operator logs: failed (ops/deployment/op has no Pods: no logs to read)"
        );
        // Its Pod, but not its log.
        s.operator.pods = Evidence::Present(vec![
            pod("team-c", "catalog-5d7f9c-x2x"),
            pod("other", "op-77f9c-zz1"),
            pod("ops", "op-5d7f9c-a1b"),
        ]);
        assert!(
            r.logs(&s)
                .unwrap_err()
                .to_string()
                .contains("no log of ops/deployment/op's Pods")
        );
        // Its log: that one alone, and a --log-file beside it.
        s.operator.logs = Evidence::Present(vec![
            log("catalog-5d7f9c-x2x", "operator"),
            log("op-77f9c-zz1", "operator"),
            log("op-5d7f9c-a1b", "operator"),
            log("operate.log", FILE_CONTAINER),
        ]);
        let pods: Vec<&str> = r.logs(&s).unwrap().iter().map(|l| l.pod.as_str()).collect();
        assert_eq!(pods, ["op-5d7f9c-a1b", "operate.log"]);
        // The snapshot's own gap is the answer's.
        s.operator.logs = Evidence::missing("operator logs", GapReason::Failed("forbidden".into()));
        assert_eq!(r.logs(&s).unwrap_err().to_string(), "operator logs: failed (forbidden)");
        // A namespace no operator serves: no operator log is its objects' (only --log-files).
        let none = resolve(&s, Some("nobody"), None);
        s.operator.logs = Evidence::Present(vec![
            log("op-5d7f9c-a1b", "operator"),
            log("operate.log", FILE_CONTAINER),
        ]);
        let pods: Vec<&str> = none.logs(&s).unwrap().iter().map(|l| l.pod.as_str()).collect();
        assert_eq!(pods, ["operate.log"]);
        // No log at all in evidence stays what the evidence says (nothing), not a gap.
        s.operator.logs = Evidence::Present(Vec::new());
        assert!(r.logs(&s).unwrap().is_empty());
    }

    pub(crate) fn todo_api() -> MicroserviceObject {
        serde_json::from_value(json!({
            "apiVersion": "platform.example.io/v1alpha1", "kind": "Microservice",
            "metadata": {"name": "todo-api", "namespace": "todo", "uid": "u1", "generation": 1,
                         "creationTimestamp": "2026-12-01T08:40:00Z"},
            "spec": {"image": "x", "port": 8080},
            "status": {"phase": "Accepted", "observedGeneration": 1}
        }))
        .unwrap()
    }

    #[test]
    fn the_deployments_gap_is_unknown_not_none() {
        let mut s = snapshot(vec![]);
        s.operator.deployments = Evidence::missing("operator Deployment", GapReason::Forbidden("no".into()));
        assert_eq!(resolve(&s, Some("todo"), None).verdict, Verdict::Unknown);
    }

    #[test]
    fn seen_operators_count_as_what_exists() {
        let mut s = snapshot(vec![]);
        s.operator.others = OperatorEvidence::summaries(&others());
        let r = resolve(&s, Some("todo"), None);
        assert_eq!(r.verdict, Verdict::NoneServes);
        assert_eq!(r.listing().len(), 2);
    }
}
