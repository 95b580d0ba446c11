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
//! | its own Pods' logs name the object | [`POD_LOG_NAMES_OBJECT`] |
//! | its own Pods' logs name objects of the namespace (not this one) | [`POD_LOG_NAMES_NAMESPACE`] |
//! | its command line names the namespace (`--namespace=NS`), where another's says all or nothing | [`NAMES_NAMESPACE`] |
//!
//! A Kopf candidate whose handlers of Microservices all exclude the object by their filters
//! ([`super::selection`]) does not serve it when another serving candidate does not exclude it
//! (said in its evidence); when it is the only one, it stays (the object is then
//! `handler-filtered`: not handled by design).
//!
//! The object's managedFields name the framework of its latest status/annotation writer
//! (`kubectl-microservice`, `kopf`): every Kopf operator writes as `kopf`, so that is said as a
//! fact about the object and counts for no candidate. A candidate whose command line does not
//! say what it watches (the image's, or a `$(VAR)` that stayed literal) is one candidate
//! everywhere, ranked like the others; a cluster-wide one too.
//!
//! Each row is a `Signal` of `SIGNALS`, read for every candidate in that order (a new kind of
//! evidence is a new row). The best score wins when it beats the next one; a tie between the
//! best is ambiguous (name one with `--operator`), never a pick. The answer must not depend on
//! which command asked: a live gathering reads the operators' current logs whenever several may
//! serve the namespace ([`super::live::add_operator`]), so the Pod-log rows count alike for all.

use std::collections::BTreeSet;

use chrono::{DateTime, Duration, Utc};
use k8s_openapi::api::coordination::v1::Lease;
use serde::Serialize;

use super::naming::{self, Handles};
use super::operator::{KindBy, Leadership, OperatorKind, OperatorRef, OperatorSummary};
use super::selection::{Filtered, OperatorHandlers};
use super::{Evidence, Gap, GapReason, OperatorEvidence, Snapshot};
use crate::logs::file::FILE_CONTAINER;
use crate::logs::{Format, LogSource, Record};
use crate::resource::identity::ResourceId;
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
/// Points for a candidate whose own Pods' logs name the object.
pub const POD_LOG_NAMES_OBJECT: u32 = 30;
/// Points for a candidate whose own Pods' logs name objects of the namespace, not this one.
pub const POD_LOG_NAMES_NAMESPACE: u32 = 15;

/// Points for a candidate whose effective command line names the namespace in its scope flags
/// (`--namespace=NS`): explicitly this namespace, stronger than a cluster-wide scope (`-A`, or
/// Kopf without a flag) or one the command line does not say (the image's, a literal
/// `$(VAR)`), weaker than its logs naming the object or its Lease (issue 18 trial P2). Two
/// that both name it tie on it.
pub const NAMES_NAMESPACE: u32 = 20;

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
    /// else [`super::OperatorEvidence::is_log_of`]'s: its namespace and selector, replaced Pods
    /// by their name); for a process outside the cluster, the
    /// Pods' of the Deployments of ours that serve the namespace too (they stand by on its
    /// Lease), never a Kopf Deployment's; for
    /// anything else none of the Pods'. `--log-file` logs always count (the user gave them);
    /// every log does when the operators are unknown (a bundle without
    /// `operator/deployment.json`).
    pub fn owns_log(&self, snapshot: &Snapshot, source: &LogSource) -> bool {
        if source.container == FILE_CONTAINER || self.verdict == Verdict::Unknown {
            return true;
        }
        let names: Vec<&str> = match self.verdict {
            Verdict::Deployment => self.deployment().into_iter().collect(),
            // Ours only: a Deployment of ours stands by on the process's Lease; a Kopf
            // Deployment left serving (its filters could not all be ruled out) is another
            // operator, whose log is never the process's (issue 18 scenario 2, team-foxtrot).
            Verdict::Process => self
                .serving()
                .filter(|c| c.kind == Some(OperatorKind::Ours))
                .map(|c| c.operator.as_str())
                .collect(),
            _ => Vec::new(),
        };
        let names: Vec<(&str, &str)> = names.into_iter().filter_map(|d| d.split_once("/deployment/")).collect();
        if names.is_empty() {
            return false;
        }
        let deployments = snapshot.operator.deployments.get().map(Vec::as_slice).unwrap_or(&[]);
        if deployments.len() <= 1 {
            return true;
        }
        // Several: a Pod in evidence is one's by its namespace and that Deployment's selector,
        // a Pod no longer in evidence by its name (`NAME-<hash>-<suffix>`): Deployments of one
        // name in several namespaces (`-A`: `microservice-operator` in each), or `api` beside
        // `api-operator`, never share a log (issue 18 trial P5b).
        names.iter().any(|(ns, n)| {
            deployments
                .iter()
                .find(|d| d.metadata.namespace.as_deref() == Some(*ns) && d.metadata.name.as_deref() == Some(*n))
                .is_some_and(|d| snapshot.operator.is_log_of(d, &source.pod))
        })
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
            // Scaled to zero: no Pod, so no log — a fact (operator-not-running says it), not
            // a gap.
            Evidence::Gap(_) if self.scaled_to_zero(snapshot) => return Ok(Vec::new()),
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
                if has_pods(snapshot, ns, name) {
                    format!("no log of {op}'s Pods in evidence")
                } else if self.scaled_to_zero(snapshot) {
                    return Ok(kept);
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

    /// Whether the resolved operator is a Deployment scaled to zero (`spec.replicas: 0`) with no
    /// Pod in evidence: it has no logs, by its owner's choice.
    pub fn scaled_to_zero(&self, snapshot: &Snapshot) -> bool {
        let Some((ns, name)) = self.deployment().and_then(|d| d.split_once("/deployment/")) else {
            return false;
        };
        let zero = snapshot.operator.deployments.get().into_iter().flatten().any(|d| {
            d.metadata.namespace.as_deref() == Some(ns)
                && d.metadata.name.as_deref() == Some(name)
                && d.spec.as_ref().and_then(|s| s.replicas) == Some(0)
        });
        zero && !has_pods(snapshot, ns, name)
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
    /// `ns/name` of every object its records name (shared: the clues are copied for each
    /// object resolved, the names never are).
    objects: std::rc::Rc<BTreeSet<String>>,
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
        let mut objects = BTreeSet::new();
        for record in source.records() {
            match record.format {
                Format::OursText | Format::OursJson => ours += 1,
                Format::KopfFull | Format::KopfPlain | Format::KopfJson => kopf += 1,
                Format::Unmatched | Format::Crash | Format::PythonWarning => {}
            }
            if let Some(o) = &record.object {
                objects.insert(format!("{}/{}", o.namespace.as_deref().unwrap_or(""), o.name));
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
        clues.objects = std::rc::Rc::new(objects);
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

/// Whether a Pod of the Deployment `ns/name` is in `snapshot` ([`super::pods::is_pod_of`]).
fn has_pods(snapshot: &Snapshot, ns: &str, name: &str) -> bool {
    let deployments = snapshot.operator.deployments.get().map_or(&[][..], Vec::as_slice);
    let pods = snapshot.operator.pods.get().map_or(&[][..], Vec::as_slice);
    super::pods::find(deployments, ns, name).is_some_and(|d| !super::pods::pods_of(d, pods).is_empty())
}

/// Whether the instance part of a `holderIdentity` (`<pod>_<random>`) is a Pod of `op`'s
/// Deployment ([`super::pods::is_named_pod_of`]: a Pod in evidence by its owner or selector in
/// the Deployment's namespace, one not in evidence by its name `NAME-<hash>-<suffix>`), never a
/// Pod of another Deployment whose name starts with this one's.
fn holder_pod_of(holder: &str, op: &OperatorRef, evidence_of: &OperatorEvidence) -> bool {
    let instance = holder.rsplit_once('_').map_or(holder, |(i, _)| i);
    let deployments = evidence_of.deployments.get().map_or(&[][..], Vec::as_slice);
    super::pods::find(deployments, &op.namespace, &op.name).is_some_and(|d| evidence_of.is_log_of(d, instance))
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

/// One kind of evidence that counts for a candidate (a row of the module docs' table): the
/// points each fact it finds adds, and how it reads the facts for one candidate. [`resolve`]
/// asks every row of [`SIGNALS`], in order, of every candidate: new evidence is a new row.
struct Signal {
    /// The points each [`Fact::Counts`] it finds adds.
    weight: u32,
    /// What it finds for one candidate, in the order said.
    read: fn(&Facts<'_>, &Contender) -> Vec<Fact>,
}

/// What a [`Signal`] found for one candidate.
enum Fact {
    /// A fact that counts: said `+WEIGHT: fact`, and adds the signal's weight.
    Counts(String),
    /// A fact about it that counts nothing, said as is.
    Note(String),
}

/// The signals, in the order their facts are said in each candidate's evidence.
const SIGNALS: &[Signal] = &[
    Signal {
        weight: FLAG,
        read: named_by_flag,
    },
    Signal {
        weight: LEASE,
        read: holds_the_lease,
    },
    Signal {
        weight: LOG_IDENTITY,
        read: log_acquired_the_lease,
    },
    Signal {
        weight: LOG_NAMES_OBJECT,
        read: log_names_the_object,
    },
    Signal {
        weight: POD_LOG_NAMES_OBJECT,
        read: pod_log_names_the_object,
    },
    Signal {
        weight: POD_LOG_NAMES_NAMESPACE,
        read: pod_log_names_the_namespace,
    },
    Signal {
        weight: NAMES_NAMESPACE,
        read: command_line_names_the_namespace,
    },
];

/// Where a candidate comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    /// An operator Deployment in evidence: its index among [`Facts::operators`].
    Deployment(usize),
    /// An operator seen but not collected ([`OperatorEvidence::others`]).
    Seen,
    /// A process outside the cluster that holds a current Lease ([`Facts::leases`] index) and is
    /// no Deployment's Pod.
    LeaseHolder {
        /// The Lease it holds.
        lease: usize,
        /// The `--log-file` that acquired it ([`Facts::files`] index), when one did.
        log: Option<usize>,
    },
    /// A process outside the cluster that a `--log-file` shows: the log names the object or its
    /// namespace, and is no serving Deployment's.
    LogFile {
        /// The file ([`Facts::files`] index).
        file: usize,
        /// The Lease its election line names, no longer current ([`Facts::leases`] index).
        stopped: Option<usize>,
    },
}

/// A candidate being scored: what the answer shows of it, and what the signals read.
#[derive(Debug, Clone)]
struct Contender {
    candidate: Candidate,
    origin: Origin,
    /// Its place among the candidates, in the order of evidence.
    at: usize,
    /// Whether it watches the namespace (before `--operator` makes it serve).
    watches_namespace: bool,
}

/// Whose log a `--log-file` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Owner {
    /// A Deployment's (or a seen operator's) at [`Contender::at`]: by its election line naming
    /// one of its Pods (`by_identity`), else as the one serving operator of its kind.
    Candidate { at: usize, by_identity: bool },
    /// The process outside the cluster's ([`Origin::LeaseHolder`], [`Origin::LogFile`]).
    Outside,
    /// No one's that counts.
    Nobody,
}

/// What the signals read, gathered once before any candidate is scored.
struct Facts<'a> {
    /// `ns/name` of the object asked about.
    key: Option<String>,
    /// The namespace asked about.
    namespace: Option<&'a str>,
    /// `--operator` as given, and the candidate ([`Contender::at`]) it names.
    chosen: Option<(&'a str, usize)>,
    /// The operator Deployments in evidence (borrowed: [`Resolver`] recognises them once, and
    /// a copy per object was a tenth of `status -A`'s time, issue 19).
    operators: &'a [OperatorRef],
    /// The Leases that may govern the namespace.
    leases: Vec<LeaseFacts>,
    /// The `--log-file` logs, and whose each is.
    files: Vec<(FileClues, Owner)>,
    /// The kind of the object's latest status/annotation writer, and the entry described.
    writer: Option<(OperatorKind, String)>,
    /// What each Deployment's own Pods' logs name, by its index among [`Facts::operators`].
    pod_logs: Vec<PodLogClues>,
    /// Whether several candidates serve the namespace, so that the ranking rows that only
    /// tell them apart ([`NAMES_NAMESPACE`], the Pod-log rows) are read.
    ranked: bool,
}

impl Facts<'_> {
    /// The first `--log-file` that acquired a Lease as `holder`.
    fn log_of_holder(&self, holder: &str) -> Option<&FileClues> {
        self.files
            .iter()
            .map(|(f, _)| f)
            .find(|f| f.identities.iter().any(|(id, _)| id == holder))
    }

    /// Whether `file` names the object asked about.
    fn names_object(&self, file: &FileClues) -> bool {
        self.key.as_ref().is_some_and(|k| file.objects.contains(k))
    }

    /// The current Leases the Pods of the serving Deployment `c` hold.
    fn leases_held_by(&self, c: &Contender) -> Vec<&LeaseFacts> {
        match c.origin {
            Origin::Deployment(i) if c.candidate.serves => self
                .leases
                .iter()
                .filter(|l| l.current && l.pod_of == Some(i))
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// [`FLAG`]: `--operator` names it; one that does not watch the namespace is then diagnosed
/// all the same.
fn named_by_flag(facts: &Facts<'_>, c: &Contender) -> Vec<Fact> {
    let Some((chosen, _)) = facts.chosen.filter(|(_, at)| *at == c.at) else {
        return Vec::new();
    };
    let mut found = vec![Fact::Counts(format!("named by --operator {chosen}"))];
    if !c.watches_namespace {
        // Named, so diagnosed: operator-not-watching says it does not watch.
        found.push(Fact::Note(format!(
            "it does not watch {}: diagnosed because --operator names it",
            facts.namespace.unwrap_or("")
        )));
    }
    found
}

/// [`LEASE`]: its Pod holds a current Lease that governs the namespace, or it is the process
/// outside the cluster that does.
fn holds_the_lease(facts: &Facts<'_>, c: &Contender) -> Vec<Fact> {
    if let Origin::LeaseHolder { lease, .. } = c.origin {
        let l = &facts.leases[lease];
        return vec![Fact::Counts(format!(
            "holds the current Lease {} as {}, and is no Pod of a Deployment in evidence: an `operate` outside the cluster",
            l.reference,
            l.holder.as_deref().unwrap_or("")
        ))];
    }
    facts
        .leases_held_by(c)
        .into_iter()
        .map(|l| {
            Fact::Counts(format!(
                "its Pod holds the current Lease {} as {}",
                l.reference,
                l.holder.as_deref().unwrap_or("")
            ))
        })
        .collect()
}

/// [`LOG_IDENTITY`]: a `--log-file` acquired the Lease it holds, as its holder.
fn log_acquired_the_lease(facts: &Facts<'_>, c: &Contender) -> Vec<Fact> {
    let acquired = |l: &LeaseFacts, f: &FileClues| {
        Fact::Counts(format!(
            "the log given ({}) acquired that Lease as {}",
            f.name,
            l.holder.as_deref().unwrap_or("")
        ))
    };
    if let Origin::LeaseHolder { lease, log } = c.origin {
        return log
            .map(|file| acquired(&facts.leases[lease], &facts.files[file].0))
            .into_iter()
            .collect();
    }
    facts
        .leases_held_by(c)
        .into_iter()
        .filter_map(|l| {
            let f = facts.log_of_holder(l.holder.as_deref().unwrap_or(""))?;
            Some(acquired(l, f))
        })
        .collect()
}

/// [`LOG_NAMES_OBJECT`]: a `--log-file` that is its log names the object; for a process that
/// such a log shows, also the Lease its election line names, no longer held.
fn log_names_the_object(facts: &Facts<'_>, c: &Contender) -> Vec<Fact> {
    let key = facts.key.as_deref().unwrap_or("");
    let mut found = Vec::new();
    for (n, (f, owner)) in facts.files.iter().enumerate() {
        match (*owner, c.origin) {
            (Owner::Candidate { at, by_identity }, Origin::Deployment(_) | Origin::Seen)
                if at == c.at && c.candidate.serves && facts.names_object(f) =>
            {
                found.push(Fact::Counts(format!(
                    "the log given ({}) names {key} and is its log ({})",
                    f.name,
                    if by_identity {
                        "its election line names one of its Pods"
                    } else {
                        "the one serving operator of its kind"
                    }
                )));
            }
            (Owner::Outside, Origin::LogFile { file, stopped }) if file == n => {
                if facts.names_object(f) {
                    found.push(Fact::Counts(format!("it names {key}")));
                }
                // Its own election line names a Lease that is no longer current: it stopped.
                if let Some(l) = stopped.map(|l| &facts.leases[l]) {
                    found.push(Fact::Note(format!(
                        "its election line names the Lease {} it held as {}, now expired or released",
                        l.reference,
                        l.holder.as_deref().unwrap_or("")
                    )));
                }
            }
            (Owner::Outside, Origin::LeaseHolder { .. } | Origin::LogFile { .. }) if facts.names_object(f) => {
                found.push(Fact::Counts(format!("its log ({}) names {key}", f.name)));
            }
            _ => {}
        }
    }
    found
}

/// What one Deployment candidate's own Pods' logs name: the object asked about (how many
/// records, the last one's time and Pod), objects of the namespace.
#[derive(Debug, Clone, Default)]
struct PodLogClues {
    /// Records about the object, and the Pod of the last one.
    object: Option<(usize, String)>,
    /// How many other objects of the namespace its records name.
    neighbours: usize,
    /// `ns/name` of the first [`NEIGHBOURS_SHOWN`] of them, in order: what the evidence
    /// cites (the rest are counted, never copied per object: 10,000 objects of 10 namespaces
    /// would copy 10 million names).
    shown: Vec<String>,
}

/// How many of the namespace's other objects [`POD_LOG_NAMES_NAMESPACE`] names.
const NEIGHBOURS_SHOWN: usize = 3;

/// [`POD_LOG_NAMES_OBJECT`]: its own Pods' logs name the object.
fn pod_log_names_the_object(facts: &Facts<'_>, c: &Contender) -> Vec<Fact> {
    let (Origin::Deployment(i), Some(key)) = (c.origin, facts.key.as_deref()) else {
        return Vec::new();
    };
    match facts.pod_logs.get(i).and_then(|p| p.object.as_ref()) {
        Some((n, pod)) if c.candidate.serves => vec![Fact::Counts(format!(
            "its own Pods' logs name {key} ({n} record{}, the last in Pod {pod})",
            if *n == 1 { "" } else { "s" }
        ))],
        _ => Vec::new(),
    }
}

/// [`POD_LOG_NAMES_NAMESPACE`]: its own Pods' logs name other objects of the namespace (when
/// they do not name the object itself).
fn pod_log_names_the_namespace(facts: &Facts<'_>, c: &Contender) -> Vec<Fact> {
    let (Origin::Deployment(i), Some(ns)) = (c.origin, facts.namespace) else {
        return Vec::new();
    };
    let Some(clues) = facts.pod_logs.get(i) else {
        return Vec::new();
    };
    if clues.object.is_some() || clues.neighbours == 0 || !c.candidate.serves {
        return Vec::new();
    }
    let shown = &clues.shown;
    vec![Fact::Counts(format!(
        "its own Pods' logs name {} other object{} of namespace {ns} ({}{})",
        clues.neighbours,
        if clues.neighbours == 1 { "" } else { "s" },
        shown.join(", "),
        if clues.neighbours > shown.len() { ", ..." } else { "" }
    ))]
}

/// [`NAMES_NAMESPACE`]: its effective command line's scope flags name the namespace (a
/// Deployment's, `$(VAR)`s expanded; a seen operator's summary does not say how), when it serves it
/// and another does too (alone, "the only operator that watches it" says more). Not asked
/// without a namespace (`logs` across namespaces).
fn command_line_names_the_namespace(facts: &Facts<'_>, c: &Contender) -> Vec<Fact> {
    let Some(ns) = facts.namespace else { return Vec::new() };
    if !facts.ranked || !c.candidate.serves || !c.watches_namespace {
        return Vec::new();
    }
    let named = match c.origin {
        Origin::Deployment(i) => facts.operators.get(i).is_some_and(|op| {
            op.scope_by == super::operator::ScopeBy::Flags
                && op.watches.as_ref().is_some_and(|w| w.iter().any(|n| n == ns))
        }),
        _ => false,
    };
    if !named {
        return Vec::new();
    }
    vec![Fact::Counts(format!(
        "its command line names namespace {ns} (--namespace): it watches it by name"
    ))]
}

/// Resolves the operator of `namespace` (`None`: any namespace) for `obj` (when one object is
/// asked about: its managedFields and the logs naming it count) from `snapshot`. Pure.
///
/// The candidates (the operator Deployments, those seen, and at most one process outside the
/// cluster), then the signals of the module docs' table scored for each, then the decision.
/// One answer of a [`Resolver`]: a table of many objects keeps one resolver instead.
pub fn resolve(snapshot: &Snapshot, namespace: Option<&str>, obj: Option<&MicroserviceObject>) -> Resolution {
    Resolver::new(snapshot).resolve(namespace, obj)
}

/// [`resolve`] for many objects of one snapshot: what does not depend on the object (the
/// operators recognised among the Deployments, the `--log-file` logs' clues, what each
/// operator's own Pods' logs name) is read once, so that N objects cost one reading of the
/// evidence plus N lookups, not N readings (issue 22: work per object is the object's own).
/// The same answer as [`resolve`] for every object.
pub struct Resolver<'a> {
    snapshot: &'a Snapshot,
    /// [`OperatorEvidence::operators`], recognised once.
    operators: Vec<OperatorRef>,
    /// The `--log-file` logs' clues, read once.
    files: Vec<FileClues>,
    /// What each operator's own Pods' logs name, by its index among `operators`; read on the
    /// first object whose namespace several operators serve (`None` inside: the Deployments
    /// are a gap).
    mentions: std::cell::OnceCell<Option<Vec<LogMentions>>>,
    /// Each Kopf operator's handlers of Microservices ([`OperatorHandlers`]), by its index
    /// among `operators`; read on the first object whose namespace several operators serve.
    handlers: std::cell::OnceCell<Vec<Option<OperatorHandlers>>>,
    /// What each operator's source says of the resource asked about ([`naming::handles`]), by
    /// its index among `operators`.
    handles: Vec<Handles>,
    /// The candidates of each namespace asked about before any object's own facts
    /// ([`in_evidence`], then [`not_microservice_operators`]): the same for every object of the
    /// namespace, so built once per namespace and copied per object (building them, with each
    /// operator's command line spelled out, was most of the resolver's work per object in
    /// `status -A`, issue 19).
    namespace_contenders: std::cell::RefCell<std::collections::HashMap<Option<String>, Vec<Contender>>>,
}

/// What one Deployment's own Pods' logs name of the resource asked about ([`naming::may_name`]),
/// indexed: every such record, and those that certainly do ([`naming::certainly_names`]: their
/// own kind is the resource's).
#[derive(Debug, Default)]
struct LogMentions {
    may: MentionIndex,
    certain: MentionIndex,
    /// The namespaces whose objects' PATCHes the API server refused for RBAC (Kopf's
    /// `Throttling for N seconds due to an unexpected error: APIForbiddenError('... cannot
    /// patch resource ...', {... 'code': 403})`, the cycle's final PATCH lost), with the
    /// refused line.
    patch_refused_in: std::collections::HashMap<String, String>,
}

/// Per `ns/name`, how many records and the Pod of the last; per namespace, the `ns/name` of
/// each object its records name.
#[derive(Debug, Default)]
struct MentionIndex {
    by_key: std::collections::HashMap<String, (usize, String)>,
    by_namespace: std::collections::HashMap<String, BTreeSet<String>>,
}

impl MentionIndex {
    fn add(&mut self, ns: &str, name: &str, pod: &str) {
        let key = format!("{ns}/{name}");
        let entry = self.by_key.entry(key.clone()).or_insert((0, String::new()));
        *entry = (entry.0 + 1, pod.to_string());
        self.by_namespace.entry(ns.to_string()).or_default().insert(key);
    }

    /// [`PodLogClues`] about `key` (`ns/name`) and `namespace`: the records naming the object,
    /// and the other objects of the namespace they name.
    fn clues(&self, key: Option<&str>, namespace: Option<&str>) -> PodLogClues {
        let keys = namespace.and_then(|ns| self.by_namespace.get(ns));
        // The object's own key is among its namespace's when the logs name it.
        let own = key.is_some_and(|k| keys.is_some_and(|keys| keys.contains(k)));
        PodLogClues {
            object: key.and_then(|k| self.by_key.get(k)).cloned(),
            neighbours: keys.map_or(0, |keys| keys.len() - usize::from(own)),
            shown: keys
                .into_iter()
                .flatten()
                .filter(|k| Some(k.as_str()) != key)
                .take(NEIGHBOURS_SHOWN)
                .cloned()
                .collect(),
        }
    }
}

impl LogMentions {
    /// One pass over `logs` (one Deployment's Pods' logs; its source says `handles` of
    /// `resource`).
    fn of(logs: &[LogSource], handles: &Handles, resource: &ResourceId) -> LogMentions {
        let mut mentions = LogMentions::default();
        for log in logs {
            for record in log.records() {
                let Some(o) = &record.object else { continue };
                let ns = o.namespace.as_deref().unwrap_or("");
                if naming::may_name(&record, handles, resource) {
                    mentions.may.add(ns, &o.name, &log.pod);
                }
                if naming::certainly_names(&record, resource) {
                    mentions.certain.add(ns, &o.name, &log.pod);
                }
                if naming::may_name(&record, handles, resource)
                    && let crate::kopf::messages::Lifecycle::Throttled(failure) =
                        crate::kopf::messages::classify(&record.message)
                    && failure.code == Some(403)
                    && failure
                        .message
                        .as_deref()
                        .is_some_and(|m| m.contains("cannot patch resource"))
                {
                    mentions
                        .patch_refused_in
                        .entry(ns.to_string())
                        .or_insert_with(|| record.message.clone());
                }
            }
        }
        mentions
    }
}

impl<'a> Resolver<'a> {
    /// A resolver over `snapshot`'s operator evidence as it is now (a snapshot whose logs
    /// change later needs a new one).
    pub fn new(snapshot: &'a Snapshot) -> Self {
        let evidence_of = &snapshot.operator;
        let files = evidence_of
            .logs
            .get()
            .into_iter()
            .flatten()
            .filter(|s| s.container == FILE_CONTAINER)
            .map(FileClues::of)
            .collect();
        let operators = evidence_of.operators();
        let deployments = evidence_of.deployments.get().map_or(&[][..], Vec::as_slice);
        let configmaps = evidence_of.configmaps.get().map_or(&[][..], Vec::as_slice);
        let handles = operators
            .iter()
            .map(|op| naming::handles(op, deployments, configmaps, &snapshot.resource))
            .collect();
        Resolver {
            snapshot,
            operators,
            files,
            mentions: std::cell::OnceCell::new(),
            handlers: std::cell::OnceCell::new(),
            handles,
            namespace_contenders: Default::default(),
        }
    }

    /// [`Resolver::namespace_contenders`] of `namespace`, built on first use.
    fn contenders_of(&self, namespace: Option<&str>) -> Vec<Contender> {
        let key = namespace.map(str::to_string);
        if let Some(known) = self.namespace_contenders.borrow().get(&key) {
            return known.clone();
        }
        let mut contenders = in_evidence(&self.operators, &self.snapshot.operator.others, namespace);
        not_microservice_operators(&self.handles, &self.snapshot.resource, &mut contenders);
        self.namespace_contenders.borrow_mut().insert(key, contenders.clone());
        contenders
    }

    /// Each Kopf operator's handlers ([`OperatorHandlers`]), read on first use.
    fn handlers(&self) -> &[Option<OperatorHandlers>] {
        self.handlers.get_or_init(|| {
            self.of_kopf_sources(|op, d, cms| OperatorHandlers::read_deployment(self.snapshot, &op.display(), d, cms))
        })
    }

    /// `read` of each Kopf operator's Deployment and the snapshot's ConfigMaps, by its index
    /// among `operators`; `None` for an operator not Kopf or whose Deployment is not in
    /// evidence, and for all when the Deployments or ConfigMaps are a gap.
    fn of_kopf_sources<T>(
        &self,
        read: impl Fn(
            &OperatorRef,
            &k8s_openapi::api::apps::v1::Deployment,
            &[k8s_openapi::api::core::v1::ConfigMap],
        ) -> Option<T>,
    ) -> Vec<Option<T>> {
        let evidence_of = &self.snapshot.operator;
        let (Some(ds), Some(cms)) = (evidence_of.deployments.get(), evidence_of.configmaps.get()) else {
            return self.operators.iter().map(|_| None).collect();
        };
        self.operators
            .iter()
            .map(|op| {
                if op.kind != OperatorKind::Kopf {
                    return None;
                }
                let d = ds.iter().find(|d| {
                    d.metadata.namespace.as_deref() == Some(op.namespace.as_str())
                        && d.metadata.name.as_deref() == Some(op.name.as_str())
                })?;
                read(op, d, cms)
            })
            .collect()
    }

    /// A Kopf candidate whose handlers of Microservices all exclude `obj` by their filters
    /// ([`Filtered::Excluded`]) does not serve it when another serving candidate is not known
    /// to exclude it: Kopf ignores the object by design there, so it is no one's to rank
    /// (issue 18 D1). When every serving one excludes it, they stay (the answer is then
    /// `handler-filtered` for the one chosen); `--operator` always stays.
    fn drop_filtered_out(&self, contenders: &mut [Contender], obj: &MicroserviceObject, chosen_at: Option<usize>) {
        if contenders.iter().filter(|c| c.candidate.serves).count() < 2 {
            return;
        }
        let handlers = self.handlers();
        let excluded: Vec<(usize, Vec<String>)> = contenders
            .iter()
            .enumerate()
            .filter(|(i, c)| c.candidate.serves && Some(*i) != chosen_at)
            .filter_map(|(i, c)| {
                let Origin::Deployment(op) = c.origin else { return None };
                match handlers.get(op)?.as_ref()?.of(obj) {
                    Filtered::Excluded { handlers, .. } => Some((
                        i,
                        handlers
                            .iter()
                            .flat_map(|e| e.misses.iter().map(move |m| format!("{}: {}", e.at, m.filter)))
                            .collect(),
                    )),
                    _ => None,
                }
            })
            .collect();
        let plural = super::selection::plural_words(&self.snapshot.resource);
        let excluded = excluded.into_iter().map(|(i, filters)| {
            let why = format!(
                "every handler of {plural} in its source excludes {} by its filters ({}): it ignores the object by design",
                obj.key(),
                filters.join("; ")
            );
            (i, why)
        });
        withdraw_unless_all(contenders, excluded.collect());
    }

    /// What each operator's own Pods' logs name ([`LogMentions`]), read on first use.
    fn mentions(&self) -> Option<&[LogMentions]> {
        let evidence_of = &self.snapshot.operator;
        self.mentions
            .get_or_init(|| {
                evidence_of.deployments.get().map(|ds| {
                    self.operators
                        .iter()
                        .zip(&self.handles)
                        .map(|(op, handles)| {
                            let own = ds
                                .iter()
                                .find(|d| {
                                    d.metadata.namespace.as_deref() == Some(op.namespace.as_str())
                                        && d.metadata.name.as_deref() == Some(op.name.as_str())
                                })
                                .map(|d| evidence_of.logs_of(d))
                                .unwrap_or_default();
                            LogMentions::of(&own, handles, &self.snapshot.resource)
                        })
                        .collect()
                })
            })
            .as_deref()
    }

    /// The operator of `namespace` for `obj`, as [`resolve`] says.
    pub fn resolve(&self, namespace: Option<&str>, obj: Option<&MicroserviceObject>) -> Resolution {
        let snapshot = self.snapshot;
        let evidence_of = &snapshot.operator;
        let operators: &[OperatorRef] = &self.operators;
        let mut contenders = self.contenders_of(namespace);
        // --operator: the candidate it names serves, whatever it watches.
        let chosen = evidence_of.chosen.as_deref();
        let chosen_at = chosen.and_then(|chosen| contenders.iter().position(|c| c.candidate.operator == chosen));
        if let Some(at) = chosen_at {
            contenders[at].candidate.serves = true;
        }
        if let Some(ns) = namespace
            && contenders.iter().filter(|c| c.candidate.serves).count() > 1
        {
            let mentions = self.mentions();
            let refused_in_log = |op: usize| -> Option<String> { mentions?.get(op)?.patch_refused_in.get(ns).cloned() };
            drop_refused_writers(snapshot, operators, &mut contenders, (ns, chosen_at), &refused_in_log);
        }
        if let Some(obj) = obj {
            self.drop_filtered_out(&mut contenders, obj, chosen_at);
        }
        let leases = lease_facts(evidence_of, operators, &contenders, namespace, snapshot.now());
        let files: Vec<FileClues> = self.files.clone();
        let key = obj.map(MicroserviceObject::key);
        // Only where the logs can rank (several serve): one that alone serves needs no ranking.
        let ranked = contenders.iter().filter(|c| c.candidate.serves).count() > 1;
        let pod_logs: Vec<PodLogClues> = if ranked {
            // A candidate whose source is not in evidence may have logged about another
            // resource's object of the same name: beside one whose source says it handles the
            // resource, only its lines of the resource's own kind count (naming's rule).
            let serves = |i: usize| {
                contenders
                    .iter()
                    .any(|c| c.candidate.serves && matches!(c.origin, Origin::Deployment(at) if at == i))
            };
            let known = (0..self.handles.len()).any(|i| self.handles[i] == Handles::It && serves(i));
            self.mentions()
                .map(|all| {
                    all.iter()
                        .zip(&self.handles)
                        .map(|(m, handles)| {
                            let index = if known && *handles == Handles::Unknown {
                                &m.certain
                            } else {
                                &m.may
                            };
                            index.clues(key.as_deref(), namespace)
                        })
                        .collect()
                })
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        let mut facts = Facts {
            key,
            namespace,
            chosen: chosen.zip(chosen_at),
            operators,
            leases,
            files: Vec::new(),
            writer: obj.and_then(handler_writer),
            pod_logs,
            ranked,
        };
        let object_evidence = object_evidence(&facts, chosen.filter(|_| chosen_at.is_none()));
        let outside = outside_process(&mut facts, files, &contenders, evidence_of);
        if let Some(origin) = outside {
            contenders.push(outside_candidate(&facts, origin, contenders.len()));
        }
        for signal in SIGNALS {
            for c in &mut contenders {
                for fact in (signal.read)(&facts, c) {
                    match fact {
                        Fact::Counts(fact) => {
                            c.candidate.score += signal.weight;
                            c.candidate.evidence.push(format!("+{}: {fact}", signal.weight));
                        }
                        Fact::Note(note) => c.candidate.evidence.push(note),
                    }
                }
            }
        }
        let process = outside.map(|origin| process_of(&facts, origin));
        decide(evidence_of, namespace, contenders, object_evidence, process)
    }
}

/// The candidates in evidence: every operator Deployment, then the operators seen but not
/// collected (one that is also a Deployment, or seen twice, counts once), each with what it
/// watches.
fn in_evidence(operators: &[OperatorRef], others: &[OperatorSummary], namespace: Option<&str>) -> Vec<Contender> {
    let contender = |candidate: Candidate, origin: Origin, at: usize| Contender {
        watches_namespace: candidate.serves,
        candidate,
        origin,
        at,
    };
    let mut contenders: Vec<Contender> = Vec::new();
    for (i, op) in operators.iter().enumerate() {
        let watches = op.watch_text();
        let mut evidence = vec![format!("watches {watches} (its command: {})", op.command.display())];
        if op.kind_by != KindBy::CommandLine {
            evidence.push(format!(
                "{} operator by {}",
                match op.kind {
                    OperatorKind::Ours => "our",
                    OperatorKind::Kopf => "a Kopf",
                },
                op.kind_by.describe()
            ));
        }
        evidence.extend(op.command.gaps.iter().map(|g| format!("its command line: {g}")));
        if op.scaled_to_zero() {
            evidence.push("spec.replicas=0: scaled to zero, it runs no Pod".into());
        }
        let candidate = Candidate {
            operator: op.display(),
            kind: Some(op.kind),
            serves: serves(op.watches.as_deref(), namespace),
            score: 0,
            evidence,
            watches,
        };
        contenders.push(contender(candidate, Origin::Deployment(i), contenders.len()));
    }
    for other in others {
        if contenders.iter().any(|c| c.candidate.operator == other.operator) {
            continue;
        }
        let watches = watch_text(other.watches.as_deref());
        let candidate = Candidate {
            operator: other.operator.clone(),
            kind: Some(other.kind),
            serves: serves(other.watches.as_deref(), namespace),
            score: 0,
            evidence: vec![format!(
                "watches {watches} (seen; its Pods, logs and RBAC not collected)"
            )],
            watches,
        };
        contenders.push(contender(candidate, Origin::Seen, contenders.len()));
    }
    contenders
}

/// An operator whose source (in evidence) registers handlers only for other resources
/// ([`super::naming::Handles::Others`]: an operator of Backups) serves no object of the
/// resource asked about: not a candidate, said in its evidence.
fn not_microservice_operators(handles: &[Handles], resource: &ResourceId, contenders: &mut [Contender]) {
    for (i, handles) in handles.iter().enumerate() {
        let Handles::Others(resources) = handles else { continue };
        if !contenders[i].candidate.serves {
            continue;
        }
        let c = &mut contenders[i];
        c.candidate.serves = false;
        c.watches_namespace = false;
        let what = if resource.is_microservice() {
            "Microservices".to_string()
        } else {
            resource.qualified()
        };
        c.candidate.evidence.push(format!(
            "its source handles {} only: not an operator of {what}",
            resources.join("; ")
        ));
    }
}

/// A candidate that the API server refuses to let patch the resource's objects in `namespace`
/// cannot have written their Kopf record (annotations) or our status there: it may try (a
/// cluster-wide operator of another team logs its refused PATCHes of every namespace's
/// objects), but it does not serve them. Refused by the API's own answer: a SubjectAccessReview
/// in evidence that denies it `patch`, or its own log's RBAC refusal of its final PATCH of an
/// object there (`refused_in_log`, by its index among `operators`); rules read by hand do not
/// count. Dropped, with that said in its evidence, only when another candidate that is not
/// refused serves the namespace (else the refusal is the one operator's RBAC problem, which
/// `rbac-resource` reports), and never the one `--operator` names.
fn drop_refused_writers(
    snapshot: &Snapshot,
    operators: &[OperatorRef],
    contenders: &mut [Contender],
    (namespace, chosen_at): (&str, Option<usize>),
    refused_in_log: &dyn Fn(usize) -> Option<String>,
) {
    let reviews = snapshot
        .rbac
        .access_reviews
        .get()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let resource = &snapshot.resource;
    let reviewed = |op: &OperatorRef| {
        let user = format!("system:serviceaccount:{}:{}", op.namespace, op.service_account);
        let subresource = written_subresource(op.kind);
        reviews.iter().any(|r| {
            let attributes = r.spec.resource_attributes.as_ref();
            r.spec.user.as_deref() == Some(user.as_str())
                && attributes.is_some_and(|a| {
                    a.verb.as_deref() == Some("patch")
                        && a.namespace.as_deref() == Some(namespace)
                        && a.group.as_deref().unwrap_or("") == resource.group
                        && a.resource.as_deref() == Some(resource.plural.as_str())
                        && a.subresource.as_deref().unwrap_or("") == subresource
                        && a.name.as_deref().unwrap_or("").is_empty()
                })
                && r.status.as_ref().is_some_and(|s| !s.allowed)
        })
    };
    let denied: Vec<(usize, String)> = contenders
        .iter()
        .enumerate()
        .filter(|(i, c)| c.candidate.serves && Some(*i) != chosen_at)
        .filter_map(|(i, c)| {
            let Origin::Deployment(at) = c.origin else { return None };
            let op = operators.get(at)?;
            if reviewed(op) {
                return Some((i, "SubjectAccessReview: denied".to_string()));
            }
            refused_in_log(at).map(|line| (i, format!("its own log: {line}")))
        })
        .collect();
    let denied = denied.into_iter().map(|(i, by)| {
        let status = match &contenders[i].origin {
            Origin::Deployment(at) if operators.get(*at).is_some_and(|op| op.kind == OperatorKind::Ours) => "/status",
            _ => "",
        };
        let why = format!(
            "its ServiceAccount may not patch {}{status} in {namespace} ({by}): its handling of objects there is refused, so it serves none of them (another operator does)",
            resource.qualified()
        );
        (i, why)
    });
    withdraw_unless_all(contenders, denied.collect());
}

/// The subresource an operator of `kind` patches to record its handling, which a denied
/// SubjectAccessReview of `patch` on it refuses: ours writes only `status` (server-side apply of
/// `microservices/status`; the RBAC `manifests` prints grants nothing else), Kopf the object
/// itself (its progress and diff-base annotations, its finalizer).
fn written_subresource(kind: OperatorKind) -> &'static str {
    match kind {
        OperatorKind::Ours => "status",
        OperatorKind::Kopf => "",
    }
}

/// Withdraws each of `dropped` (a serving candidate's index, and why it does not serve) from
/// serving, with the reason in its evidence, unless that would leave none serving: a rule that
/// tells candidates apart never makes the last one go.
fn withdraw_unless_all(contenders: &mut [Contender], dropped: Vec<(usize, String)>) {
    let serving = contenders.iter().filter(|c| c.candidate.serves).count();
    if dropped.is_empty() || dropped.len() >= serving {
        return;
    }
    for (i, why) in dropped {
        let c = &mut contenders[i];
        c.candidate.serves = false;
        c.watches_namespace = false;
        c.candidate.evidence.push(why);
    }
}

/// The Leases in evidence that may govern `namespace`: those the serving operators of ours
/// elect on, `NS/microservice-operator` (the one `operate --namespace NS` elects on by
/// default), and those whose holder says it watches the namespace.
fn lease_facts(
    evidence_of: &OperatorEvidence,
    operators: &[OperatorRef],
    contenders: &[Contender],
    namespace: Option<&str>,
    now: Option<DateTime<Utc>>,
) -> Vec<LeaseFacts> {
    let mut wanted: Vec<(String, String)> = Vec::new();
    if let Some(ns) = namespace {
        for (i, op) in operators.iter().enumerate() {
            if contenders[i].candidate.serves
                && let Leadership::Lease { namespace, name } = op.leadership_in(ns)
            {
                wanted.push((namespace, name));
            }
        }
        wanted.push((ns.to_string(), DEFAULT_LEASE_NAME.to_string()));
    }
    let leases: &[Lease] = evidence_of.leases.get().map_or(&[], Vec::as_slice);
    leases
        .iter()
        .filter_map(|lease| LeaseFacts::read(lease, &wanted, namespace, now, operators, evidence_of))
        .collect()
}

impl LeaseFacts {
    /// `lease` as read, when it is `wanted` (`(namespace, name)`) or its holder says it watches
    /// `namespace`: its holder, when it was renewed, whether that is within its duration on the
    /// snapshot's clock (`now`), and which of `operators` (ours) holds it by its Pod.
    fn read(
        lease: &Lease,
        wanted: &[(String, String)],
        namespace: Option<&str>,
        now: Option<DateTime<Utc>>,
        operators: &[OperatorRef],
        evidence_of: &OperatorEvidence,
    ) -> Option<LeaseFacts> {
        let (Some(lns), Some(lname)) = (lease.metadata.namespace.as_deref(), lease.metadata.name.as_deref()) else {
            return None;
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
            return None;
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
                .position(|op| op.kind == OperatorKind::Ours && holder_pod_of(h, op, evidence_of))
        });
        Some(LeaseFacts {
            reference: format!("{lns}/{lname}"),
            holder,
            renewed,
            current,
            serves: annotated,
            pod_of,
        })
    }
}

/// The facts about the object that counted, for [`Resolution::evidence`]: an `--operator` that
/// names no candidate (`unmatched`), the latest status/annotation writer, each Lease read.
fn object_evidence(facts: &Facts<'_>, unmatched: Option<&str>) -> Vec<String> {
    let mut evidence = Vec::new();
    if let Some(chosen) = unmatched {
        evidence.push(format!("--operator {chosen}: not in evidence"));
    }
    if let Some((kind, entry)) = &facts.writer {
        evidence.push(format!(
            "managedFields: the latest status/annotation write is {entry} ({})",
            match kind {
                OperatorKind::Ours => "our field manager: an `operate`, which one it does not say",
                OperatorKind::Kopf =>
                    "Kopf's, which every Kopf operator writes with: it names the framework, not the operator",
            }
        ));
    }
    for l in &facts.leases {
        evidence.push(format!(
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
    evidence
}

/// The process outside the cluster, if the evidence shows one: the first holder of a current
/// Lease that is no Deployment's Pod, else the first `--log-file` that is no serving
/// Deployment's log and names the object or its namespace. Sets whose log each `--log-file`
/// is ([`Facts::files`]): the process's own; a Deployment's whose Pod its election line
/// names; the one serving operator of its kind when it has no election line; else no one's.
fn outside_process(
    facts: &mut Facts<'_>,
    files: Vec<FileClues>,
    contenders: &[Contender],
    evidence_of: &OperatorEvidence,
) -> Option<Origin> {
    let mut outside = facts
        .leases
        .iter()
        .position(|l| l.current && l.pod_of.is_none())
        .map(|lease| {
            let holder = facts.leases[lease].holder.clone().unwrap_or_default();
            let log = files
                .iter()
                .position(|f| f.identities.iter().any(|(id, _)| *id == holder));
            Origin::LeaseHolder { lease, log }
        });
    let mut owners = Vec::with_capacity(files.len());
    for (n, f) in files.iter().enumerate() {
        let outside_log = match outside {
            Some(Origin::LeaseHolder { log, .. }) => log.map(|i| files[i].name.as_str()),
            Some(Origin::LogFile { file, .. }) => Some(files[file].name.as_str()),
            _ => None,
        };
        if outside_log == Some(f.name.as_str()) {
            owners.push(Owner::Outside);
            continue;
        }
        // Its identity names a Deployment's Pod: that Deployment's log, shipped.
        let by_identity = f.identities.iter().find_map(|(id, _)| {
            facts
                .operators
                .iter()
                .position(|op| op.kind == OperatorKind::Ours && holder_pod_of(id, op, evidence_of))
        });
        // Else the one serving Deployment of its kind, when exactly one (a Pod's log from a log
        // store); else a process outside the cluster.
        let same_kind: Vec<usize> = contenders
            .iter()
            .filter(|c| c.candidate.serves && f.kind.is_some() && c.candidate.kind == f.kind)
            .map(|c| c.at)
            .collect();
        let owner = by_identity.or(match same_kind.as_slice() {
            [one] if f.identities.is_empty() => Some(*one),
            _ => None,
        });
        let names_namespace = facts
            .namespace
            .is_some_and(|ns| f.objects.iter().any(|o| o.split('/').next() == Some(ns)));
        owners.push(match owner {
            Some(at) => Owner::Candidate {
                at,
                by_identity: by_identity.is_some(),
            },
            None if (facts.names_object(f) || names_namespace) && outside.is_none() => {
                let stopped = facts.leases.iter().position(|l| {
                    l.holder
                        .as_ref()
                        .is_some_and(|h| f.identities.iter().any(|(id, _)| id == h))
                });
                outside = Some(Origin::LogFile { file: n, stopped });
                Owner::Outside
            }
            None => Owner::Nobody,
        });
    }
    facts.files = files.into_iter().zip(owners).collect();
    outside
}

/// The candidate of the process outside the cluster ([`outside_process`]), before any signal:
/// `process/HOLDER` (a Lease shows it) or `log-file/NAME`, serving the namespace.
fn outside_candidate(facts: &Facts<'_>, origin: Origin, at: usize) -> Contender {
    let candidate = match origin {
        Origin::LeaseHolder { lease, .. } => {
            let l = &facts.leases[lease];
            Candidate {
                operator: format!("process/{}", l.holder.clone().unwrap_or_default()),
                kind: Some(OperatorKind::Ours),
                watches: l
                    .serves
                    .clone()
                    .map(|s| if s == "*" { "all namespaces".into() } else { s })
                    .unwrap_or_else(|| "unknown".into()),
                serves: true,
                score: 0,
                evidence: Vec::new(),
            }
        }
        Origin::LogFile { file, stopped } => {
            let f = &facts.files[file].0;
            Candidate {
                operator: match stopped {
                    Some(l) => format!("process/{}", facts.leases[l].holder.clone().unwrap_or_default()),
                    None => format!("log-file/{}", f.name.trim_start_matches("file ")),
                },
                kind: f.kind,
                watches: f.started_watching.clone().unwrap_or_else(|| "unknown".into()),
                serves: true,
                score: 0,
                evidence: vec![format!(
                    "the log given ({}) is no Pod's of a serving Deployment: a process outside the cluster",
                    f.name
                )],
            }
        }
        Origin::Deployment(_) | Origin::Seen => unreachable!("an outside process comes from a Lease or a log"),
    };
    Contender {
        candidate,
        origin,
        at,
        watches_namespace: true,
    }
}

/// What the answer keeps of the process outside the cluster, should it be chosen.
fn process_of(facts: &Facts<'_>, origin: Origin) -> Process {
    match origin {
        Origin::LeaseHolder { lease, log } => {
            let l = &facts.leases[lease];
            Process {
                holder: Some(l.holder.clone().unwrap_or_default()),
                lease: Some(l.reference.clone()),
                current: true,
                renewed: l.renewed,
                log: log.map(|i| facts.files[i].0.name.clone()),
            }
        }
        Origin::LogFile { file, stopped } => {
            let stopped = stopped.map(|l| &facts.leases[l]);
            Process {
                holder: stopped.and_then(|l| l.holder.clone()),
                lease: stopped.map(|l| l.reference.clone()),
                current: false,
                renewed: stopped.and_then(|l| l.renewed),
                log: Some(facts.files[file].0.name.clone()),
            }
        }
        Origin::Deployment(_) | Origin::Seen => unreachable!("an outside process comes from a Lease or a log"),
    }
}

/// The decision over the scored candidates: ranked serving first, then by score (the order of
/// evidence otherwise); none serving is `none-serves` (or `unknown` when the Deployments are a
/// gap and nothing was seen); a tie between the best is `ambiguous`; else the best, with its
/// strongest evidence in the summary. `process` is kept when the best is it.
fn decide(
    evidence_of: &OperatorEvidence,
    namespace: Option<&str>,
    contenders: Vec<Contender>,
    object_evidence: Vec<String>,
    process: Option<Process>,
) -> Resolution {
    let mut candidates: Vec<Candidate> = contenders.into_iter().map(|c| c.candidate).collect();
    candidates.sort_by_key(|c| (!c.serves, std::cmp::Reverse(c.score)));
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
        [] => (Verdict::NoneServes, None, none_serves(&candidates, &where_)),
        [best, next, ..] if best.score == next.score => (Verdict::Ambiguous, None, tied(&serving, &where_)),
        [best, ..] => {
            let verdict = if best.operator.contains("/deployment/") {
                Verdict::Deployment
            } else {
                Verdict::Process
            };
            (
                verdict,
                Some(best.operator.clone()),
                chosen(best, serving.len(), &where_),
            )
        }
    };
    Resolution {
        verdict,
        operator,
        namespace: namespace.map(str::to_string),
        summary,
        evidence: object_evidence,
        candidates,
        process: process.filter(|_| verdict == Verdict::Process),
    }
}

/// The summary when no candidate serves `where_` (`namespace NS`): what exists, and what each
/// watches.
fn none_serves(candidates: &[Candidate], where_: &str) -> String {
    if candidates.is_empty() {
        return format!("no operator serves {where_}: none is in evidence");
    }
    format!(
        "no operator serves {where_}; found: {}",
        candidates
            .iter()
            .map(|c| format!("{} watches {}", c.operator, c.watches))
            .collect::<Vec<_>>()
            .join("; ")
    )
}

/// The summary when the best of `serving` tie: how many, and which.
fn tied(serving: &[&Candidate], where_: &str) -> String {
    let best = serving.first().map_or(0, |c| c.score);
    let tied: Vec<&str> = serving
        .iter()
        .filter(|c| c.score == best)
        .map(|c| c.operator.as_str())
        .collect();
    format!(
        "{} operators serve {where_} and the evidence does not tell them apart ({}); give --operator NS/deployment/NAME",
        tied.len(),
        tied.join(", ")
    )
}

/// The summary when `best` (of `serving` candidates) is chosen: its strongest evidence (the
/// first that counted), else that it is the only one that watches the namespace.
fn chosen(best: &Candidate, serving: usize, where_: &str) -> String {
    let why = best
        .evidence
        .iter()
        .find(|e| e.starts_with('+'))
        .map(|e| format!(": {}", e.split_once(": ").map_or(e.as_str(), |(_, w)| w)))
        .unwrap_or_else(|| {
            if serving == 1 {
                ": the only operator in evidence that watches it".to_string()
            } else {
                String::new()
            }
        });
    format!("{} serves {where_}{why}", best.operator)
}

#[cfg(test)]
pub(crate) mod tests {
    use k8s_openapi::api::apps::v1::Deployment;

    use super::*;
    use crate::evidence::{Evidence, GapReason, OperatorEvidence, Provenance, RbacEvidence};
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
            source: Provenance::Bundle("x".into()),
            captured_at: Some("2026-12-01T09:00:00Z".parse().unwrap()),
            namespace: Some("todo".into()),
            resource: crate::resource::identity::ResourceId::microservice(),
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

    /// Issue 18 trial P2 (team-delta/api): the namespace's own Kopf Deployment, scaled to 0,
    /// whose command line says `--namespace=team-delta`, beside a cluster-wide Kopf operator
    /// (`-A`, its source not in evidence) and one whose scope stayed a literal `$(WATCH)`: the
    /// explicit namespace outranks them, so it is chosen (not `ambiguous`); a second Deployment
    /// that names the namespace as explicitly ties with it: `ambiguous`.
    #[test]
    fn an_explicit_namespace_outranks_cluster_wide_and_unknown_scopes() {
        let mut own = deployment(
            "team-delta",
            "api-operator",
            json!(["kopf", "run", "--standalone", "--namespace=team-delta", "/src/op.py"]),
        );
        own.spec.as_mut().unwrap().replicas = Some(0);
        let mut deployments = vec![
            deployment(
                "backups",
                "backup-operator",
                json!(["kopf", "run", "--all-namespaces", "/src/backups.py"]),
            ),
            deployment(
                "team-echo",
                "kopf-op",
                json!(["kopf", "run", "--namespace=$(WATCH)", "/src/op.py"]),
            ),
            own,
        ];
        let r = resolve(&snapshot(deployments.clone()), Some("team-delta"), None);
        assert_eq!(r.verdict, Verdict::Deployment, "{r:?}");
        assert_eq!(r.operator.as_deref(), Some("team-delta/deployment/api-operator"));
        assert_eq!(
            r.summary,
            "team-delta/deployment/api-operator serves namespace team-delta: its command line names namespace team-delta (--namespace): it watches it by name"
        );
        assert_eq!(r.serving().count(), 3, "{:?}", r.candidates);
        assert!(r.candidates[1..].iter().all(|c| c.score == 0), "{:?}", r.candidates);
        // Another that names the namespace as explicitly: equal evidence, no pick.
        deployments.push(deployment(
            "team-delta",
            "api-operator-v2",
            json!(["kopf", "run", "--standalone", "-n", "team-delta", "/src/op.py"]),
        ));
        let r = resolve(&snapshot(deployments), Some("team-delta"), None);
        assert_eq!(r.verdict, Verdict::Ambiguous, "{r:?}");
        assert!(
            r.summary
                .contains("team-delta/deployment/api-operator, team-delta/deployment/api-operator-v2"),
            "{}",
            r.summary
        );
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
            "op2-5d7f9c-x2x4z_0123456789abcdef",
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
        assert!(r.owns_log(&s, &log("op-5d7f9c-x2x4z", "operator")));
        assert!(!r.owns_log(&s, &log("catalog-5d7f9c-x2x4z", "operator")));
        assert!(r.owns_log(&s, &log("operate.log", FILE_CONTAINER)));
        let none = resolve(&s, Some("nobody"), None);
        assert!(!none.owns_log(&s, &log("op-5d7f9c-x2x4z", "operator")));
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
        // With its Deployment's labels, as the API server requires of a Deployment's Pods.
        let pod = |ns: &str, name: &str| -> k8s_openapi::api::core::v1::Pod {
            let app = name.rsplitn(3, '-').nth(2).unwrap_or(name);
            serde_json::from_value(json!({"metadata": {"name": name, "namespace": ns, "labels": {"app": app}}}))
                .unwrap()
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
        s.operator.pods = Evidence::Present(vec![
            pod("team-c", "catalog-5d7f9c-x2x4z"),
            pod("other", "op-77f9c-zz1"),
        ]);
        s.operator.logs = Evidence::Present(vec![
            log("catalog-5d7f9c-x2x4z", "operator"),
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
            pod("team-c", "catalog-5d7f9c-x2x4z"),
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
            log("catalog-5d7f9c-x2x4z", "operator"),
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

    fn kopf_log(pod: &str, object: &str) -> LogSource {
        LogSource {
            pod: pod.into(),
            container: "operator".into(),
            previous: false,
            text: format!(
                "[2026-12-01 08:50:00,000] kopf.objects         [INFO    ] [{object}] Handler 'accept' succeeded.\n"
            ),
        }
    }

    fn pod_of(ns: &str, name: &str, app: &str) -> k8s_openapi::api::core::v1::Pod {
        serde_json::from_value(json!({"metadata": {"name": name, "namespace": ns, "labels": {"app": app}}})).unwrap()
    }

    /// Issue 18 trial P5b: `logs --handler` (and every answer) reads only the resolved
    /// operator's Pods: `todo/deployment/api`'s, never the Pods of another team's
    /// `api-operator` (a replaced Pod named `api-operator-...` starts with `api-` too) nor a Pod
    /// of the same name prefix in another namespace.
    #[test]
    fn only_the_resolved_operators_pods_are_its_logs() {
        let mut s = snapshot(vec![
            deployment("todo", "api", json!(["kopf", "run", "--namespace=todo", "op.py"])),
            deployment(
                "team-b",
                "api-operator",
                json!(["kopf", "run", "--namespace=team-b", "op.py"]),
            ),
        ]);
        s.operator.pods = Evidence::Present(vec![
            pod_of("todo", "api-5d7f9c-bbbbb", "api"),
            pod_of("team-c", "api-5d7f9c-ccccc", "api"),
        ]);
        s.operator.logs = Evidence::Present(vec![
            kopf_log("api-5d7f9c-bbbbb", "todo/todo-api"),
            kopf_log("api-7d9c5f-x2x4z", "todo/todo-api"),
            kopf_log("api-operator-7d9c5f-abcde", "team-b/api"),
            kopf_log("api-5d7f9c-ccccc", "team-c/api"),
        ]);
        let r = resolve(&s, Some("todo"), Some(&todo_api()));
        assert_eq!(r.operator.as_deref(), Some("todo/deployment/api"), "{r:?}");
        let pods: Vec<&str> = r.logs(&s).unwrap().iter().map(|l| l.pod.as_str()).collect();
        // Its Pod in evidence, and a replaced one named as its ReplicaSets name Pods.
        assert_eq!(pods, ["api-5d7f9c-bbbbb", "api-7d9c5f-x2x4z"]);
        assert!(crate::evidence::pods::named_as_pod_of("api-7d9c5f-x2x4z", "api"));
        assert!(!crate::evidence::pods::named_as_pod_of(
            "api-operator-7d9c5f-abcde",
            "api"
        ));
        assert!(!crate::evidence::pods::named_as_pod_of("api", "api"));
    }

    /// Issue 18: managedFields' `kopf` names the framework every Kopf operator shares, never
    /// one operator: two Kopf operators serving the namespace alike stay ambiguous by it.
    #[test]
    fn the_field_manager_names_a_framework_not_an_operator() {
        let s = snapshot(vec![
            deployment("a", "op", json!(["kopf", "run", "-n", "todo", "op.py"])),
            deployment("b", "op", json!(["kopf", "run", "--namespace=todo", "op.py"])),
        ]);
        let mut obj = todo_api();
        obj.metadata.managed_fields = Some(vec![
            serde_json::from_value(json!({
                "manager": "kopf", "operation": "Update", "subresource": "status", "time": "2026-12-01T08:50:00Z",
                "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {"f:phase": {}}}
            }))
            .unwrap(),
        ]);
        let r = resolve(&s, Some("todo"), Some(&obj));
        assert_eq!(r.verdict, Verdict::Ambiguous, "{r:?}");
        assert!(
            r.candidates.iter().all(|c| c.score == NAMES_NAMESPACE),
            "{:?}",
            r.candidates
        );
        assert!(
            r.evidence
                .iter()
                .any(|e| e.contains("names the framework, not the operator")),
            "{:?}",
            r.evidence
        );
    }

    /// A cluster-wide Kopf operator `team-b/wide` and `todo/mine`, each with one Pod, no logs.
    fn wide_and_mine() -> Snapshot {
        let mut s = snapshot(vec![
            deployment("team-b", "wide", json!(["kopf", "run", "--all-namespaces", "op.py"])),
            deployment("todo", "mine", json!(["kopf", "run", "--namespace=todo", "op.py"])),
        ]);
        s.operator.pods = Evidence::Present(vec![
            pod_of("team-b", "wide-5d7f9c-aaaaa", "wide"),
            pod_of("todo", "mine-5d7f9c-bbbbb", "mine"),
        ]);
        s
    }

    /// Our operator reconciles Microservices only: for an object of another resource a
    /// cluster-wide Deployment of ours is no candidate beside the Kopf operator of the
    /// namespace (it was: two serving candidates, ranked by logs that are not ours to read).
    #[test]
    fn our_operator_is_no_candidate_for_another_resources_object() {
        let mut s = snapshot(vec![
            deployment(
                "kms-system",
                "microservice-operator",
                json!(["kubectl-microservice", "operate"]),
            ),
            deployment(
                "todo",
                "kex-op",
                json!(["kopf", "run", "--namespace=todo", "/src/example.py"]),
            ),
        ]);
        s.resource = ResourceId::kopf_example();
        let r = resolve(&s, Some("todo"), None);
        assert_eq!(r.verdict, Verdict::Deployment, "{r:#?}");
        assert_eq!(r.operator.as_deref(), Some("todo/deployment/kex-op"));
        let ours = r
            .candidates
            .iter()
            .find(|c| c.operator == "kms-system/deployment/microservice-operator")
            .unwrap();
        assert!(!ours.serves, "{ours:?}");
        assert!(
            ours.evidence.iter().any(|e| e
                == "its source handles microservices.platform.example.io only: not an operator of kopfexamples.kopf.dev"),
            "{:?}",
            ours.evidence
        );
        // For a Microservice it is the operator it always was.
        s.resource = ResourceId::microservice();
        assert!(
            resolve(&s, Some("todo"), None)
                .candidates
                .iter()
                .any(|c| c.operator.starts_with("kms-system/") && c.serves)
        );
    }

    /// One [`Resolver`] over objects of several namespaces, asked in turn (its candidates are
    /// built once per namespace): each object's answer is [`resolve`]'s for it alone.
    #[test]
    fn one_resolver_over_several_namespaces_answers_each_object_as_resolve_does() {
        let mut s = wide_and_mine();
        s.operator.logs = Evidence::Present(vec![
            kopf_log("wide-5d7f9c-aaaaa", "team-b/retry-api"),
            kopf_log("mine-5d7f9c-bbbbb", "todo/todo-api"),
        ]);
        let in_namespace = |ns: &str, name: &str| {
            let mut obj = todo_api();
            obj.metadata.namespace = Some(ns.into());
            obj.metadata.name = Some(name.into());
            obj
        };
        let objects = [
            in_namespace("todo", "todo-api"),
            in_namespace("team-b", "retry-api"),
            in_namespace("todo", "other-api"),
            in_namespace("team-c", "todo-api"),
            in_namespace("team-b", "todo-api"),
        ];
        let resolver = Resolver::new(&s);
        for obj in objects.iter().chain(&objects) {
            let ns = obj.metadata.namespace.as_deref();
            assert_eq!(
                resolver.resolve(ns, Some(obj)),
                resolve(&s, ns, Some(obj)),
                "{}",
                obj.key()
            );
        }
        // The namespaces differ in who serves them: not one answer copied to all.
        let todo = resolver.resolve(Some("todo"), Some(&objects[0]));
        let team_b = resolver.resolve(Some("team-b"), Some(&objects[1]));
        assert_eq!(todo.operator.as_deref(), Some("todo/deployment/mine"));
        assert_eq!(team_b.operator.as_deref(), Some("team-b/deployment/wide"));
    }

    /// The logs decide: the operator whose own Pods' logs name the object serves it, over a
    /// cluster-wide one (running, its logs about another namespace; or at 0 replicas).
    #[test]
    fn the_namespaces_other_objects_in_its_logs_are_counted_and_the_first_three_named() {
        let mut s = wide_and_mine();
        let log = |pod: &str, objects: &[&str]| LogSource {
            text: objects.iter().map(|o| kopf_log(pod, o).text).collect(),
            ..kopf_log(pod, "")
        };
        let others = ["todo/e-api", "todo/a-api", "todo/d-api", "todo/b-api", "todo/c-api"];
        s.operator.logs = Evidence::Present(vec![
            log("wide-5d7f9c-aaaaa", &["team-b/retry-api"]),
            log("mine-5d7f9c-bbbbb", &others),
        ]);
        let resolver = Resolver::new(&s);
        let r = resolver.resolve(Some("todo"), Some(&todo_api()));
        let mine = r
            .candidates
            .iter()
            .find(|c| c.operator == "todo/deployment/mine")
            .unwrap();
        assert!(
            mine.evidence.iter().any(|e| e.ends_with(
                "its own Pods' logs name 5 other objects of namespace todo (todo/a-api, todo/b-api, todo/c-api, ...)"
            )),
            "{:?}",
            mine.evidence
        );
        // The object itself among them: its own records count, and it is not its own neighbour.
        let mut with_own = others.to_vec();
        with_own.push("todo/todo-api");
        s.operator.logs = Evidence::Present(vec![log("mine-5d7f9c-bbbbb", &with_own)]);
        let r = Resolver::new(&s).resolve(Some("todo"), Some(&todo_api()));
        let mine = r
            .candidates
            .iter()
            .find(|c| c.operator == "todo/deployment/mine")
            .unwrap();
        assert!(
            mine.evidence
                .iter()
                .any(|e| e.contains("its own Pods' logs name todo/todo-api (1 record")),
            "{:?}",
            mine.evidence
        );
        assert!(
            !mine.evidence.iter().any(|e| e.contains("other object")),
            "{:?}",
            mine.evidence
        );
        // Two of them, all shown.
        s.operator.logs = Evidence::Present(vec![log("mine-5d7f9c-bbbbb", &others[..2])]);
        let r = Resolver::new(&s).resolve(Some("todo"), Some(&todo_api()));
        let mine = r
            .candidates
            .iter()
            .find(|c| c.operator == "todo/deployment/mine")
            .unwrap();
        assert!(
            mine.evidence
                .iter()
                .any(|e| e
                    .ends_with("its own Pods' logs name 2 other objects of namespace todo (todo/a-api, todo/e-api)")),
            "{:?}",
            mine.evidence
        );
    }

    #[test]
    fn the_operator_whose_own_logs_name_the_object_serves_it() {
        let mut s = wide_and_mine();
        s.operator.logs = Evidence::Present(vec![
            kopf_log("wide-5d7f9c-aaaaa", "team-b/retry-api"),
            kopf_log("mine-5d7f9c-bbbbb", "todo/todo-api"),
        ]);
        let r = resolve(&s, Some("todo"), Some(&todo_api()));
        assert_eq!(r.operator.as_deref(), Some("todo/deployment/mine"), "{r:?}");
        assert!(
            r.summary.contains("its own Pods' logs name todo/todo-api"),
            "{}",
            r.summary
        );
        // Another object of the namespace in its logs counts less, still more than nothing.
        s.operator.logs = Evidence::Present(vec![
            kopf_log("wide-5d7f9c-aaaaa", "team-b/retry-api"),
            kopf_log("mine-5d7f9c-bbbbb", "todo/other-api"),
        ]);
        let r = resolve(&s, Some("todo"), Some(&todo_api()));
        assert_eq!(r.operator.as_deref(), Some("todo/deployment/mine"), "{r:?}");
        // No log decides: the one whose command line names the namespace, over the
        // cluster-wide one (issue 18 trial P2); both still candidates.
        s.operator.logs = Evidence::Present(vec![]);
        let r = resolve(&s, Some("todo"), Some(&todo_api()));
        assert_eq!(r.operator.as_deref(), Some("todo/deployment/mine"), "{r:?}");
        assert!(r.summary.contains("names namespace todo"), "{}", r.summary);
        assert_eq!(r.serving().count(), 2);
        // The cluster-wide one whose logs name the object wins over the namespaced one.
        s.operator.logs = Evidence::Present(vec![kopf_log("wide-5d7f9c-aaaaa", "todo/todo-api")]);
        let r = resolve(&s, Some("todo"), Some(&todo_api()));
        assert_eq!(r.operator.as_deref(), Some("team-b/deployment/wide"), "{r:?}");
    }

    /// Issue 18 D1: a Kopf operator whose handlers are all registered with
    /// `labels={"team": "payments"}` beside a quiet (`-q`) Kopf operator of the same namespace:
    /// the object without the label is the quiet one's (the filtered one ignores it by design,
    /// said in its evidence), not `ambiguous`; alone, the filtered one stays chosen (the answer
    /// is then `handler-filtered`), and `--operator` naming it keeps it.
    #[test]
    fn a_kopf_operator_whose_filters_exclude_the_object_yields_to_one_that_serves_it() {
        let mut payments = deployment(
            "todo",
            "payments",
            json!(["kopf", "run", "--namespace=todo", "/src/operator.py"]),
        );
        let spec = payments.spec.as_mut().unwrap().template.spec.as_mut().unwrap();
        spec.volumes = Some(vec![
            serde_json::from_value(json!({"name": "src", "configMap": {"name": "payments-code"}})).unwrap(),
        ]);
        let quiet = deployment(
            "todo",
            "quiet",
            json!(["kopf", "run", "-q", "--namespace=todo", "/src/op.py"]),
        );
        let code: k8s_openapi::api::core::v1::ConfigMap = serde_json::from_value(json!({
            "metadata": {"name": "payments-code", "namespace": "todo"},
            "data": {"operator.py": "import kopf\n\n@kopf.on.create('microservices', labels={'team': 'payments'})\n@kopf.on.resume('microservices', labels={'team': 'payments'})\ndef accept(**_):\n    pass\n"}
        }))
        .unwrap();
        let mut s = snapshot(vec![payments.clone(), quiet]);
        s.operator.configmaps = Evidence::Present(vec![code.clone()]);
        let r = resolve(&s, Some("todo"), Some(&todo_api()));
        assert_eq!(r.operator.as_deref(), Some("todo/deployment/quiet"), "{r:?}");
        let filtered = r
            .candidates
            .iter()
            .find(|c| c.operator == "todo/deployment/payments")
            .unwrap();
        assert!(!filtered.serves, "{filtered:?}");
        assert!(
            filtered.evidence.iter().any(|e| e.contains("operator.py:3")
                && e.contains("labels={'team': 'payments'}")
                && e.contains("ignores the object by design")),
            "{filtered:?}"
        );
        // An object with the label: both select it, nothing tells them apart.
        let mut labelled = todo_api();
        labelled.metadata.labels = Some([("team".to_string(), "payments".to_string())].into());
        assert_eq!(resolve(&s, Some("todo"), Some(&labelled)).verdict, Verdict::Ambiguous);
        // --operator naming the filtered one keeps it.
        s.operator.chosen = Some("todo/deployment/payments".into());
        let r = resolve(&s, Some("todo"), Some(&todo_api()));
        assert_eq!(r.operator.as_deref(), Some("todo/deployment/payments"), "{r:?}");
        // Alone, it is the operator (and the object is handler-filtered by it).
        let mut s = snapshot(vec![payments]);
        s.operator.configmaps = Evidence::Present(vec![code]);
        let r = resolve(&s, Some("todo"), Some(&todo_api()));
        assert_eq!(r.operator.as_deref(), Some("todo/deployment/payments"), "{r:?}");
    }

    /// Issue 18, the shared cluster: another team's cluster-wide Kopf operator that the API
    /// server refuses to let patch Microservices in the namespace (a SubjectAccessReview denied
    /// it) does not serve them; the namespace's own operator does, even when its handler filters
    /// exclude the object (then handler-filtered), not the refused one by the filter rule. Its
    /// own log's RBAC refusal of its final PATCH there says the same without the reviews.
    #[test]
    fn a_cluster_wide_operator_refused_patch_in_the_namespace_yields_to_the_namespaces_own() {
        let alpha = deployment(
            "team-alpha",
            "alpha",
            json!(["kopf", "run", "--all-namespaces", "/src/op.py"]),
        );
        let mut payments = deployment(
            "todo",
            "payments",
            json!(["kopf", "run", "--namespace=todo", "/src/operator.py"]),
        );
        let spec = payments.spec.as_mut().unwrap().template.spec.as_mut().unwrap();
        spec.volumes = Some(vec![
            serde_json::from_value(json!({"name": "src", "configMap": {"name": "payments-code"}})).unwrap(),
        ]);
        let code: k8s_openapi::api::core::v1::ConfigMap = serde_json::from_value(json!({
            "metadata": {"name": "payments-code", "namespace": "todo"},
            "data": {"operator.py": "import kopf\n\n@kopf.on.create('microservices', labels={'team': 'payments'})\ndef accept(**_):\n    pass\n"}
        }))
        .unwrap();
        let review = |verb: &str, allowed: bool| -> k8s_openapi::api::authorization::v1::SubjectAccessReview {
            serde_json::from_value(json!({
                "spec": {"user": "system:serviceaccount:team-alpha:default",
                    "resourceAttributes": {"namespace": "todo", "verb": verb, "group": "platform.example.io", "resource": "microservices"}},
                "status": {"allowed": allowed}
            }))
            .unwrap()
        };
        let mut s = snapshot(vec![alpha.clone(), payments.clone()]);
        s.operator.configmaps = Evidence::Present(vec![code.clone()]);
        // Without the reviews, the filter rule leaves the unfiltered cluster-wide one.
        let r = resolve(&s, Some("todo"), Some(&todo_api()));
        assert_eq!(r.operator.as_deref(), Some("team-alpha/deployment/alpha"), "{r:?}");
        s.rbac.access_reviews = Evidence::Present(vec![review("list", true), review("patch", false)]);
        let r = resolve(&s, Some("todo"), Some(&todo_api()));
        assert_eq!(r.operator.as_deref(), Some("todo/deployment/payments"), "{r:?}");
        let refused = r
            .candidates
            .iter()
            .find(|c| c.operator == "team-alpha/deployment/alpha")
            .unwrap();
        assert!(!refused.serves, "{refused:?}");
        assert!(
            refused
                .evidence
                .iter()
                .any(|e| e
                    .contains("may not patch microservices.platform.example.io in todo (SubjectAccessReview: denied)")),
            "{refused:?}"
        );
        // Allowed: nothing drops it.
        s.rbac.access_reviews = Evidence::Present(vec![review("patch", true)]);
        assert_eq!(
            resolve(&s, Some("todo"), Some(&todo_api())).operator.as_deref(),
            Some("team-alpha/deployment/alpha")
        );
        // No reviews, but its own Pod's log: Kopf's final PATCH of the object refused for RBAC.
        s.rbac.access_reviews = Evidence::missing("access reviews", GapReason::NotInBundle("x".into()));
        s.operator.pods = Evidence::Present(vec![
            pod_of("team-alpha", "alpha-5d7f9c-aaaaa", "alpha"),
            pod_of("todo", "payments-5d7f9c-bbbbb", "payments"),
        ]);
        let refused_line = concat!(
            "[2026-12-01 08:50:00,000] kopf.objects         [ERROR   ] [todo/todo-api] Throttling for 1 seconds due to an unexpected error: ",
            "APIForbiddenError('microservices.platform.example.io \"todo-api\" is forbidden: User \"system:serviceaccount:team-alpha:default\" ",
            "cannot patch resource \"microservices\" in API group \"platform.example.io\" in the namespace \"todo\"', ",
            "{'kind': 'Status', 'apiVersion': 'v1', 'metadata': {}, 'status': 'Failure', 'reason': 'Forbidden', 'code': 403})\n"
        );
        s.operator.logs = Evidence::Present(vec![LogSource {
            text: refused_line.into(),
            ..kopf_log("alpha-5d7f9c-aaaaa", "")
        }]);
        let r = resolve(&s, Some("todo"), Some(&todo_api()));
        assert_eq!(r.operator.as_deref(), Some("todo/deployment/payments"), "{r:?}");
        let refused = r
            .candidates
            .iter()
            .find(|c| c.operator == "team-alpha/deployment/alpha")
            .unwrap();
        assert!(
            refused.evidence.iter().any(|e| e.contains(
                "may not patch microservices.platform.example.io in todo (its own log: Throttling for 1 seconds"
            )),
            "{refused:?}"
        );
        // Refused and alone: it is the operator (its RBAC is the problem rbac-resource reports).
        let mut alone = snapshot(vec![alpha]);
        alone.rbac.access_reviews = Evidence::Present(vec![review("patch", false)]);
        assert_eq!(
            resolve(&alone, Some("todo"), Some(&todo_api())).operator.as_deref(),
            Some("team-alpha/deployment/alpha")
        );
    }

    /// A Deployment at 0 replicas is an operator scaled to zero: its logs are none, a fact, not
    /// the gap "operator logs: failed (... has no Pods)".
    #[test]
    fn an_operator_scaled_to_zero_has_no_logs_and_no_gap() {
        let mut zero = deployment("ops", "op", json!(["kopf", "run", "--namespace=todo", "op.py"]));
        zero.spec.as_mut().unwrap().replicas = Some(0);
        let mut s = snapshot(vec![
            zero,
            deployment("other", "x", json!(["kopf", "run", "--namespace=other", "op.py"])),
        ]);
        s.operator.pods = Evidence::Present(vec![pod_of("other", "x-5d7f9c-ccccc", "x")]);
        s.operator.logs = Evidence::Present(vec![kopf_log("x-5d7f9c-ccccc", "other/a")]);
        let r = resolve(&s, Some("todo"), None);
        assert_eq!(r.operator.as_deref(), Some("ops/deployment/op"));
        assert!(r.scaled_to_zero(&s));
        assert!(r.logs(&s).unwrap().is_empty());
        s.operator.logs = Evidence::missing(
            "operator logs",
            GapReason::Failed("ops/deployment/op has no Pods: no logs to read".into()),
        );
        assert!(r.logs(&s).unwrap().is_empty());
        // A bundle of that operator alone, its logs recorded as that gap: none, a fact.
        let mut alone = snapshot(vec![s.operator.deployments.get().unwrap()[0].clone()]);
        alone.operator.logs = Evidence::missing(
            "operator logs",
            GapReason::Failed("ops/deployment/op has no Pods: no logs to read".into()),
        );
        alone.operator.settle_leadership();
        assert!(
            alone.operator.logs.get().is_some_and(Vec::is_empty),
            "every operator at 0: no log is a fact"
        );
    }

    /// An operator whose source handles Backups only is not a candidate for a Microservice.
    #[test]
    fn an_operator_of_other_resources_is_no_candidate() {
        let mut backups = deployment("team-b", "backup-op", json!(["kopf", "run", "-A", "/src/op.py"]));
        backups.spec.as_mut().unwrap().template.spec.as_mut().unwrap().volumes = Some(vec![
            serde_json::from_value(json!({"name": "code", "configMap": {"name": "backup-code"}})).unwrap(),
        ]);
        let mut s = snapshot(vec![
            backups,
            deployment("todo", "mine", json!(["kopf", "run", "--namespace=todo", "op.py"])),
        ]);
        let cm = |source: &str| -> k8s_openapi::api::core::v1::ConfigMap {
            serde_json::from_value(
                json!({"metadata": {"name": "backup-code", "namespace": "team-b"}, "data": {"op.py": source}}),
            )
            .unwrap()
        };
        s.operator.configmaps = Evidence::Present(vec![cm(
            "import kopf\n\n@kopf.on.create('backups.example.io', 'v1', 'backups')\ndef make(**_):\n    pass\n",
        )]);
        let r = resolve(&s, Some("todo"), None);
        assert_eq!(r.operator.as_deref(), Some("todo/deployment/mine"), "{r:?}");
        let other = r
            .candidates
            .iter()
            .find(|c| c.operator == "team-b/deployment/backup-op")
            .unwrap();
        assert!(
            !other.serves
                && other
                    .evidence
                    .iter()
                    .any(|e| e.contains("backups.example.io v1 backups only")),
            "{other:?}"
        );
        // A source that also handles Microservices keeps it a candidate (ranked below the one
        // whose command line names the namespace).
        s.operator.configmaps = Evidence::Present(vec![cm(
            "import kopf\n\n@kopf.on.create('platform.example.io', 'v1alpha1', 'microservices')\ndef accept(**_):\n    pass\n",
        )]);
        let r = resolve(&s, Some("todo"), None);
        assert_eq!(r.serving().count(), 2, "{r:?}");
        assert_eq!(r.operator.as_deref(), Some("todo/deployment/mine"), "{r:?}");
    }

    /// A Pod of a Deployment as its ReplicaSet makes it: `app` label, `pod-template-hash`, the
    /// ReplicaSet `DEPLOYMENT-HASH` as controller.
    fn replica_pod(ns: &str, deployment: &str, hash: &str, suffix: &str) -> k8s_openapi::api::core::v1::Pod {
        serde_json::from_value(json!({"metadata": {
            "name": format!("{deployment}-{hash}-{suffix}"), "namespace": ns,
            "labels": {"app": deployment, "pod-template-hash": hash},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": format!("{deployment}-{hash}"),
                                 "uid": "u", "controller": true}]
        }}))
        .unwrap()
    }

    /// Issue 18 D8: Deployments `api` and `api-gateway` in one namespace, whose Pods'
    /// names (`api-gateway-7d9f8b6c4-x2x4z`) start with `api-`: each gets only its own Pods,
    /// logs and Lease holder, with its Pods in evidence and without (gone, not read).
    #[test]
    fn api_and_api_gateway_each_get_only_their_own_pods_logs_and_lease_holder() {
        let ours = json!(["kubectl-microservice", "operate", "-n", "todo"]);
        let deployments = vec![
            deployment("team-alpha", "api", ours.clone()),
            deployment("team-alpha", "api-gateway", ours),
        ];
        let ours_log = |pod: &str| LogSource {
            pod: pod.into(),
            container: "operator".into(),
            previous: false,
            text: "2026-12-01T08:50:00.000Z  INFO [todo/todo-api] Handler 'accept' succeeded.\n".into(),
        };
        let gateway_pod = "api-gateway-7d9f8b6c4-x2x4z";
        let api_pod = "api-5d7f9c8b4-bbbbb";
        for pods_in_evidence in [true, false] {
            let mut s = snapshot(deployments.clone());
            s.operator.pods = if pods_in_evidence {
                Evidence::Present(vec![
                    replica_pod("team-alpha", "api", "5d7f9c8b4", "bbbbb"),
                    replica_pod("team-alpha", "api-gateway", "7d9f8b6c4", "x2x4z"),
                ])
            } else {
                Evidence::missing("operator Pods", GapReason::Forbidden("pods is forbidden".into()))
            };
            s.operator.logs = Evidence::Present(vec![
                ours_log(api_pod),
                ours_log(gateway_pod),
                // A replaced Pod of api-gateway's, its log kept.
                ours_log("api-gateway-6c8d9f7b5-ccccc"),
            ]);
            // The Lease is held by api-gateway's Pod: api-gateway leads, never api.
            s.operator.leases = Evidence::Present(vec![lease(
                "todo",
                &format!("{gateway_pod}_0123456789abcdef"),
                "2026-12-01T08:59:58Z",
            )]);
            let r = resolve(&s, Some("todo"), None);
            assert_eq!(
                r.operator.as_deref(),
                Some("team-alpha/deployment/api-gateway"),
                "pods in evidence: {pods_in_evidence}: {r:?}"
            );
            let logs: Vec<&str> = r.logs(&s).unwrap().iter().map(|l| l.pod.as_str()).collect();
            assert_eq!(logs, [gateway_pod, "api-gateway-6c8d9f7b5-ccccc"], "{pods_in_evidence}");
            // Held by api's Pod: api.
            s.operator.leases = Evidence::Present(vec![lease(
                "todo",
                &format!("{api_pod}_0123456789abcdef"),
                "2026-12-01T08:59:58Z",
            )]);
            let r = resolve(&s, Some("todo"), None);
            assert_eq!(r.operator.as_deref(), Some("team-alpha/deployment/api"), "{r:?}");
            let logs: Vec<&str> = r.logs(&s).unwrap().iter().map(|l| l.pod.as_str()).collect();
            assert_eq!(logs, [api_pod], "{pods_in_evidence}");
            // --operator api: its Pods and logs only, never api-gateway's replaced Pod's log.
            let mut chosen = s.operator.clone();
            chosen.select_deployment("team-alpha", "api", "operator/deployment.json");
            let logs: Vec<&str> = chosen.logs.get().unwrap().iter().map(|l| l.pod.as_str()).collect();
            assert_eq!(logs, [api_pod], "{pods_in_evidence}");
            if let Some(pods) = chosen.pods.get() {
                let names: Vec<&str> = pods.iter().filter_map(|p| p.metadata.name.as_deref()).collect();
                assert_eq!(names, [api_pod]);
            }
            let unchosen = &chosen.unchosen[0];
            assert_eq!(unchosen.operator.name, "api-gateway");
            assert_eq!(unchosen.logs.len(), 2, "{:?}", unchosen.logs);
        }
    }

    /// Issue 18 D8: a Deployment's kind is never told by another Deployment's Pods' logs: an
    /// image-only `api` (no command, nothing naming Kopf) beside the Kopf operator
    /// `api-gateway`, whose Pod's Kopf-format log starts with `api-`, is no operator.
    #[test]
    fn a_deployment_is_not_kopf_by_another_deployments_pod_logs() {
        let api = deployment("team-alpha", "api", json!(null));
        let gateway = deployment("team-alpha", "api-gateway", json!(["kopf", "run", "-A", "op.py"]));
        let mut s = snapshot(vec![api, gateway]);
        s.operator.logs = Evidence::Present(vec![LogSource {
            container: "operator".into(),
            ..kopf_log("api-gateway-7d9f8b6c4-x2x4z", "team-alpha/api")
        }]);
        for pods in [
            vec![],
            vec![replica_pod("team-alpha", "api-gateway", "7d9f8b6c4", "x2x4z")],
        ] {
            s.operator.pods = Evidence::Present(pods);
            let names: Vec<String> = s.operator.operators().into_iter().map(|o| o.name).collect();
            assert_eq!(names, ["api-gateway"]);
        }
    }

    /// Issue 18 D8: `api` scaled to 0 beside an application Deployment `api-gateway` whose
    /// Pod runs: `api` has no Pod, so no log (a fact), never api-gateway's Pod taken as its.
    #[test]
    fn another_deployments_pod_does_not_keep_one_at_zero_from_having_no_logs() {
        let mut api = deployment("team-alpha", "api", json!(["kopf", "run", "--namespace=todo", "op.py"]));
        api.spec.as_mut().unwrap().replicas = Some(0);
        let mut app = deployment("team-alpha", "api-gateway", json!(["/gateway"]));
        app.spec.as_mut().unwrap().template.spec.as_mut().unwrap().containers[0].image = Some("nginx".into());
        let mut s = snapshot(vec![api, app]);
        s.operator.pods = Evidence::Present(vec![replica_pod("team-alpha", "api-gateway", "7d9f8b6c4", "x2x4z")]);
        s.operator.logs = Evidence::missing(
            "operator logs",
            GapReason::Failed("team-alpha/deployment/api has no Pods: no logs to read".into()),
        );
        s.operator.settle_leadership();
        assert!(
            s.operator.logs.get().is_some_and(Vec::is_empty),
            "{:?}",
            s.operator.logs
        );
        let r = resolve(&s, Some("todo"), None);
        assert!(r.scaled_to_zero(&s), "{r:?}");
    }

    /// Issue 18 D9's scene: `team-alpha/api`, a Microservice; the Kopf operator of
    /// Microservices `team-alpha/ms-op` and a cluster-wide Kopf operator of
    /// `backups.platform.example.io`, `platform/backup-op`, both `kopf run -A` and both logging
    /// `[team-alpha/api] ...` (a Backup named `api`). The sources are in ConfigMaps when
    /// `sources`; `backup_json`: the Backup operator logs json (`object.kind: Backup`).
    pub(crate) fn microservice_and_backup_operators(
        sources: bool,
        backup_json: bool,
    ) -> (Snapshot, MicroserviceObject) {
        let with_source = |ns: &str, name: &str| {
            let mut d = deployment(ns, name, json!(["kopf", "run", "-A", "/src/op.py"]));
            d.spec.as_mut().unwrap().template.spec.as_mut().unwrap().volumes = Some(vec![
                serde_json::from_value(json!({"name": "code", "configMap": {"name": format!("{name}-code")}})).unwrap(),
            ]);
            d
        };
        let mut s = snapshot(vec![
            with_source("team-alpha", "ms-op"),
            with_source("platform", "backup-op"),
        ]);
        s.namespace = Some("team-alpha".into());
        let cm = |ns: &str, name: &str, source: &str| -> k8s_openapi::api::core::v1::ConfigMap {
            serde_json::from_value(
                json!({"metadata": {"name": format!("{name}-code"), "namespace": ns}, "data": {"op.py": source}}),
            )
            .unwrap()
        };
        if sources {
            s.operator.configmaps = Evidence::Present(vec![
                cm(
                    "team-alpha",
                    "ms-op",
                    "import kopf\n\n@kopf.on.create('platform.example.io', 'v1alpha1', 'microservices')\ndef accept(**_):\n    pass\n",
                ),
                cm(
                    "platform",
                    "backup-op",
                    "import kopf\n\n@kopf.on.create('backups.platform.example.io')\ndef backup(**_):\n    raise kopf.TemporaryError('no bucket')\n",
                ),
            ]);
        }
        s.operator.pods = Evidence::Present(vec![
            pod_of("team-alpha", "ms-op-5d7f9c8b4-bbbbb", "ms-op"),
            pod_of("platform", "backup-op-7d9f8b6c4-x2x4z", "backup-op"),
        ]);
        let backup_text = if backup_json {
            concat!(
                r#"{"message": "Handler 'backup' failed temporarily: no bucket", "timestamp": "2026-12-01T08:55:00.000000+00:00", "object": {"apiVersion": "platform.example.io/v1", "kind": "Backup", "name": "api", "uid": "b1", "namespace": "team-alpha"}, "severity": "error"}"#,
                "\n",
                r#"{"message": "Creation is processed: 1 succeeded; 0 failed.", "timestamp": "2026-12-01T08:56:00.000000+00:00", "object": {"apiVersion": "platform.example.io/v1", "kind": "Backup", "name": "api", "uid": "b1", "namespace": "team-alpha"}, "severity": "info"}"#,
                "\n"
            )
            .to_string()
        } else {
            concat!(
                "[2026-12-01 08:55:00,000] kopf.objects         [ERROR   ] [team-alpha/api] Handler 'backup' failed temporarily: no bucket\n",
                "[2026-12-01 08:56:00,000] kopf.objects         [INFO    ] [team-alpha/api] Handler 'backup' succeeded.\n",
                "[2026-12-01 08:56:00,001] kopf.objects         [INFO    ] [team-alpha/api] Creation is processed: 1 succeeded; 0 failed.\n",
            )
            .to_string()
        };
        s.operator.logs = Evidence::Present(vec![
            LogSource {
                pod: "ms-op-5d7f9c8b4-bbbbb".into(),
                container: "operator".into(),
                previous: false,
                text: concat!(
                    "[2026-12-01 08:50:00,000] kopf.objects         [INFO    ] [team-alpha/api] Handler 'accept' succeeded.\n",
                    "[2026-12-01 08:50:00,001] kopf.objects         [INFO    ] [team-alpha/api] Creation is processed: 1 succeeded; 0 failed.\n",
                )
                .into(),
            },
            LogSource {
                pod: "backup-op-7d9f8b6c4-x2x4z".into(),
                container: "operator".into(),
                previous: false,
                text: backup_text,
            },
        ]);
        let obj: MicroserviceObject = serde_json::from_value(json!({
            "apiVersion": "platform.example.io/v1alpha1", "kind": "Microservice",
            "metadata": {"name": "api", "namespace": "team-alpha", "uid": "m1", "generation": 1,
                         "creationTimestamp": "2026-12-01T08:40:00Z"},
            "spec": {"image": "x", "port": 8080},
            "status": {"phase": "Accepted", "observedGeneration": 1}
        }))
        .unwrap();
        (s, obj)
    }

    /// Issue 18 D9: an operator's `[ns/name]` line names an object of the Microservice only
    /// when its own kind (json) is Microservice's, or (plain) its operator may handle
    /// Microservices; an operator whose source is unknown never outranks one whose source
    /// handles them by such lines. The Microservice's operator is chosen, never `ambiguous`.
    #[test]
    fn a_backup_operators_line_about_a_backup_named_api_never_names_the_microservice() {
        for (sources, backup_json) in [(true, false), (false, true), (true, true)] {
            let (s, obj) = microservice_and_backup_operators(sources, backup_json);
            let r = resolve(&s, Some("team-alpha"), Some(&obj));
            assert_eq!(
                (r.verdict, r.operator.as_deref()),
                (Verdict::Deployment, Some("team-alpha/deployment/ms-op")),
                "sources {sources}, json {backup_json}: {r:?}"
            );
            let backup = r
                .candidates
                .iter()
                .find(|c| c.operator == "platform/deployment/backup-op")
                .unwrap();
            assert!(!backup.evidence.iter().any(|e| e.contains("logs name")), "{backup:?}");
        }
        // The Backup operator's source unknown, the Microservice operator's known: the unknown
        // one's plain lines do not outrank it.
        let (mut s, obj) = microservice_and_backup_operators(true, false);
        if let Evidence::Present(cms) = &mut s.operator.configmaps {
            cms.retain(|c| c.metadata.name.as_deref() == Some("ms-op-code"));
        }
        let r = resolve(&s, Some("team-alpha"), Some(&obj));
        assert_eq!(r.operator.as_deref(), Some("team-alpha/deployment/ms-op"), "{r:?}");
        // A json line of the Microservice kind is certain, whoever's source is unknown.
        let (mut s, obj) = microservice_and_backup_operators(true, false);
        if let Evidence::Present(cms) = &mut s.operator.configmaps {
            cms.retain(|c| c.metadata.name.as_deref() == Some("ms-op-code"));
        }
        if let Evidence::Present(logs) = &mut s.operator.logs {
            logs[1].text = concat!(
                r#"{"message": "Handler 'accept' succeeded.", "timestamp": "2026-12-01T08:58:00.000000+00:00", "object": {"apiVersion": "platform.example.io/v1alpha1", "kind": "Microservice", "name": "api", "uid": "m1", "namespace": "team-alpha"}, "severity": "info"}"#,
                "\n"
            )
            .into();
        }
        let r = resolve(&s, Some("team-alpha"), Some(&obj));
        assert_eq!(r.verdict, Verdict::Ambiguous, "both name it, neither outranks: {r:?}");
    }
}
