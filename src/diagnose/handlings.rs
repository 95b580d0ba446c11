//! Which operators handled an object: the Deployments that serve its namespace and whose own
//! Pods' logs show a handler's outcome or a cycle end for it ([`handlings`]). Two or more are
//! double handling: a reason of the verdict ([`super::verdict::with_double_handling`]) and a
//! warning of `operator-not-leading`.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use chrono::{DateTime, Duration, Utc};

use crate::evidence::Snapshot;
use crate::evidence::naming;
use crate::evidence::operator::OperatorRef;
use crate::evidence::pods;
use crate::kopf::messages::Lifecycle;
use crate::logs::LogSource;
use crate::resource::MicroserviceObject;
use crate::time::from_jiff;

/// One operator's handling of an object, read from its own Pods' logs ([`handlings`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handling {
    /// The operator, `NS/deployment/NAME`.
    pub operator: String,
    /// Its namespace and name.
    pub namespace: String,
    /// Its Deployment's name.
    pub name: String,
    /// Its command line.
    pub command: String,
    /// Its last line that ends a handler's run or a cycle of the object (`Handler 'accept'
    /// succeeded.`, `Creation is processed: ...`), cited with its log, line number and time.
    pub line: String,
}

/// The operator Deployments that serve the object's namespace (by their `--namespace`/`-A`)
/// and whose own Pods' logs show that they handled `obj`: a handler's outcome or a cycle end
/// for it (of its uid, when the line names one), after its creation. The Deployments of the
/// evidence, and the ones `--operator` left out ([`crate::evidence::OperatorEvidence::unchosen`]).
/// Empty unless two or more Deployments serve the namespace (one Deployment's replicas are
/// `operator-not-leading`'s own). A `--log-file` belongs to no Deployment and is not read here.
pub fn handlings(snapshot: &Snapshot, obj: &MicroserviceObject) -> Vec<Handling> {
    Handlings::new(snapshot).of(obj)
}

/// [`handlings`] for many objects of one snapshot: who serves each namespace, and each log's
/// lines that end a run or a cycle (by the object's name they are about), are read once, so
/// that N objects cost one reading of the logs plus N lookups (issue 22). The same answer as
/// [`handlings`] for every object.
pub struct Handlings<'s> {
    snapshot: &'s Snapshot,
    /// Namespace → the Deployments that serve it, each with its own logs' ends.
    serving: RefCell<HashMap<String, Rc<Serving>>>,
    /// A log's ends, by the log's address in the snapshot (each log read once).
    ends: RefCell<HashMap<usize, Rc<Ends>>>,
}

/// The Deployments that serve one namespace, each with its own logs' [`Ends`].
type Serving = Vec<(OperatorRef, Vec<Rc<Ends>>)>;

/// One log's lines that end a handler's run or a cycle, by the name of the object they are
/// about: the namespace the line names (`None`: none), the uid it names, its time and the
/// citation [`Handling::line`] shows.
#[derive(Debug, Default)]
pub struct Ends {
    by_name: HashMap<String, Vec<End>>,
}

#[derive(Debug)]
struct End {
    namespace: Option<String>,
    uid: Option<String>,
    time: Option<DateTime<Utc>>,
    cite: String,
}

impl Ends {
    /// One pass over `source`'s records, its zoneless times read as the snapshot reads them.
    fn of(snapshot: &Snapshot, source: &LogSource) -> Ends {
        let mut ends = Ends::default();
        for record in source.records_in(snapshot.log_zone(source)) {
            let Some(object) = record.object.as_ref() else { continue };
            // A json line about another kind's object of the same name is not about this one.
            if naming::of_other_kind(&record, &snapshot.resource) {
                continue;
            }
            if !matches!(
                record.lifecycle(),
                Lifecycle::HandlerOutcome { .. } | Lifecycle::CycleProcessed { .. }
            ) {
                continue;
            }
            let time = match record.stamp {
                Some(s) => format!("{} ({})", crate::time::rfc3339_millis(s.at), s.clock.describe()),
                None => "no time in the line".into(),
            };
            let text = record.lines.first().map(String::as_str).unwrap_or("").trim();
            let cite = format!(
                "{}/{} line {}, {time}: {text}",
                source.pod, source.container, record.line_number
            );
            ends.by_name.entry(object.name.clone()).or_default().push(End {
                namespace: object.namespace.clone(),
                uid: record.uid.clone(),
                time: record.time(),
                cite,
            });
        }
        ends
    }
}

impl<'s> Handlings<'s> {
    /// Over `snapshot` as it is now.
    pub fn new(snapshot: &'s Snapshot) -> Self {
        Handlings {
            snapshot,
            serving: RefCell::new(HashMap::new()),
            ends: RefCell::new(HashMap::new()),
        }
    }

    /// [`handlings`] of `obj`.
    pub fn of(&self, obj: &MicroserviceObject) -> Vec<Handling> {
        let ns = obj.metadata.namespace.as_deref().unwrap_or("");
        let serving = self.serving_of(ns);
        if serving.len() < 2 {
            return Vec::new();
        }
        serving
            .iter()
            .filter_map(|(op, ends)| {
                let line = last_handled(obj, ends)?;
                Some(Handling {
                    operator: op.display(),
                    namespace: op.namespace.clone(),
                    name: op.name.clone(),
                    command: op.command.display(),
                    line,
                })
            })
            .collect()
    }

    fn serving_of(&self, ns: &str) -> Rc<Serving> {
        if let Some(known) = self.serving.borrow().get(ns) {
            return known.clone();
        }
        let read: Serving = serving(self.snapshot, ns)
            .into_iter()
            .map(|(op, sources)| {
                let ends = sources.iter().map(|source| self.ends_of(source)).collect();
                (op, ends)
            })
            .collect();
        let read = Rc::new(read);
        self.serving.borrow_mut().insert(ns.to_string(), read.clone());
        read
    }

    fn ends_of(&self, source: &LogSource) -> Rc<Ends> {
        let address = std::ptr::from_ref(source) as usize;
        self.ends
            .borrow_mut()
            .entry(address)
            .or_insert_with(|| Rc::new(Ends::of(self.snapshot, source)))
            .clone()
    }
}

/// The operator Deployments that serve namespace `ns`, each with its own Pods' logs
/// ([`pods::is_named_pod_of`]: a Pod it owns or selects, or one gone whose name is its
/// `NAME-<hash>-<suffix>`): those of the evidence, then
/// those `--operator` left out.
fn serving<'s>(snapshot: &'s Snapshot, ns: &str) -> Vec<(OperatorRef, Vec<&'s LogSource>)> {
    let deployments = snapshot.operator.deployments.get().map(Vec::as_slice).unwrap_or(&[]);
    let pods = snapshot.operator.pods.get().map(Vec::as_slice).unwrap_or(&[]);
    let logs = snapshot.operator.logs.get().map(Vec::as_slice).unwrap_or(&[]);
    let configmaps = snapshot.operator.configmaps.get().map(Vec::as_slice).unwrap_or(&[]);
    let mut serving: Vec<(OperatorRef, Vec<&LogSource>)> = snapshot
        .operator
        .operators()
        .into_iter()
        .filter(|op| op.watches(ns))
        // An operator whose source handles other resources only never handled this object:
        // its `[ns/name]` lines are about another kind's objects (issue 18 D9).
        .filter(|op| {
            !matches!(
                naming::handles(op, deployments, configmaps, &snapshot.resource),
                naming::Handles::Others(_)
            )
        })
        .map(|op| {
            let deployment = deployments.iter().find(|d| {
                d.metadata.name.as_deref() == Some(op.name.as_str())
                    && d.metadata.namespace.as_deref() == Some(op.namespace.as_str())
            });
            // A Pod in evidence by its owner or selector; one gone (its log kept) by its name.
            let own = |pod_name: &str| deployment.is_some_and(|d| pods::is_named_pod_of(d, pod_name, pods));
            let mine = logs
                .iter()
                .filter(|s| s.container != crate::logs::file::FILE_CONTAINER && own(&s.pod))
                .collect();
            (op, mine)
        })
        .collect();
    // The ones `--operator` left out, by the same rule: by their source's handlers, read while
    // their Deployments were in evidence (issue 18, scenario team-echo: a Backup operator's line
    // about the Backup `team-echo/api` made double handling of the Microservice).
    serving.extend(
        snapshot
            .operator
            .unchosen
            .iter()
            .filter(|u| u.operator.watches(ns))
            .filter(|u| {
                !matches!(
                    naming::Handles::of_written(u.handles.clone(), &snapshot.resource),
                    naming::Handles::Others(_)
                )
            })
            .map(|u| (u.operator.clone(), u.logs.iter().collect())),
    );
    serving
}

/// The latest line of `ends` (an operator's logs) that ends a handler's run or a cycle of `obj`
/// (of its uid when the line names one, not before its creation), cited with its log, line
/// number and time.
fn last_handled(obj: &MicroserviceObject, ends: &[Rc<Ends>]) -> Option<String> {
    let (ns, name) = (
        obj.metadata.namespace.as_deref().unwrap_or(""),
        obj.metadata.name.as_deref().unwrap_or(""),
    );
    let created = obj.metadata.creation_timestamp.as_ref().map(|t| from_jiff(t.0));
    let mut last: Option<(Option<DateTime<Utc>>, &str)> = None;
    for end in ends.iter().filter_map(|e| e.by_name.get(name)).flatten() {
        let about = end.namespace.as_deref().is_none_or(|n| n == ns);
        let other_uid = end.uid.as_ref().is_some_and(|u| Some(u) != obj.metadata.uid.as_ref());
        let before = matches!((end.time, created), (Some(t), Some(c)) if t + Duration::seconds(2) < c);
        if !about || other_uid || before {
            continue;
        }
        if last.as_ref().is_none_or(|(t, _)| *t <= end.time) {
            last = Some((end.time, &end.cite));
        }
    }
    last.map(|(_, line)| line.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::resolve::tests::microservice_and_backup_operators;

    /// Issue 18 D9: the cluster-wide operator of Backups logging `[team-alpha/api] ...` about a
    /// Backup named `api` never handled the Microservice `team-alpha/api`: no double handling,
    /// its line cited nowhere; by its source (plain lines) or by its lines' own kind (json).
    #[test]
    fn an_operator_of_other_resources_never_handled_the_object() {
        for (sources, backup_json) in [(true, false), (false, true), (true, true)] {
            let (s, obj) = microservice_and_backup_operators(sources, backup_json);
            let found = handlings(&s, &obj);
            assert!(
                found.len() < 2 && found.iter().all(|h| h.operator == "team-alpha/deployment/ms-op"),
                "sources {sources}, json {backup_json}: {found:?}"
            );
        }
        // Both Microservice operators (the second's source handling Microservices too): that
        // is double handling, both cited.
        let (mut s, obj) = microservice_and_backup_operators(true, false);
        if let crate::evidence::Evidence::Present(cms) = &mut s.operator.configmaps {
            for cm in cms.iter_mut() {
                cm.data = Some(
                    [(
                        "op.py".to_string(),
                        "import kopf\n\n@kopf.on.create('microservices')\ndef backup(**_):\n    pass\n".to_string(),
                    )]
                    .into(),
                );
            }
        }
        assert_eq!(handlings(&s, &obj).len(), 2);
        let commands: Vec<String> = handlings(&s, &obj).into_iter().map(|h| h.command).collect();
        assert_eq!(commands, ["kopf run -A /src/op.py", "kopf run -A /src/op.py"]);

        // Issue 18 (scenario team-alpha): one of them runs Kopf from its image (Kopf's docs'
        // Deployment: no `command:`, no `args:`); its command is said as the kubelet runs it,
        // never an empty string.
        if let crate::evidence::Evidence::Present(deployments) = &mut s.operator.deployments {
            let d = deployments
                .iter_mut()
                .find(|d| d.metadata.name.as_deref() == Some("backup-op"))
                .unwrap();
            let container = &mut d.spec.as_mut().unwrap().template.spec.as_mut().unwrap().containers[0];
            container.command = None;
            container.args = None;
            container.image = Some("localhost/kopf-cmd:1.38".into());
        }
        let found = handlings(&s, &obj);
        let from_image = found
            .iter()
            .find(|h| h.name == "backup-op")
            .unwrap_or_else(|| panic!("the image's Kopf operator handled it too: {found:?}"));
        assert_eq!(from_image.command, "<ENTRYPOINT and CMD of localhost/kopf-cmd:1.38>");
    }
}
