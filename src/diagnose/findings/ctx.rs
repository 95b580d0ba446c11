//! What every check of `explain-events` reads about the object explained ([`Ctx`]): its verdict
//! ([`crate::diagnose::verdict`]), the operator diagnosed, that operator's log records about the
//! object and about no object ([`Line`]), and the object's own events; and the tunables
//! ([`Options`]).

use chrono::{DateTime, Duration, Utc};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Event;

use crate::diagnose::verdict::{Judge, Judged};
use crate::evidence::Snapshot;
use crate::evidence::operator::{OperatorKind, OperatorRef};
use crate::evidence::resolve::{OperatorLogs, Resolution, Verdict as Resolved};
use crate::kopf::messages::{Lifecycle, Outcome};
use crate::logs::Record;
use crate::resource::MicroserviceObject;
use crate::time::rfc3339_millis;

/// Tunables of `explain-events`.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// The API server's event TTL (`--event-ttl`, kube-apiserver default 1h).
    pub event_ttl: Duration,
    /// Times closer than this cannot be ordered.
    pub skew: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            event_ttl: Duration::hours(1),
            skew: Duration::seconds(2),
        }
    }
}

/// A log record with where it came from, for evidence.
pub(crate) struct Line {
    /// The log it was read from (`POD/CONTAINER`, or a file's name).
    pub(crate) pod: String,
    /// The record.
    pub(crate) record: Record,
}

/// A record of the operator's logs that names an object (this one or another), by where it is
/// and what it says: what a Kopf `Failed to post an event` line (which names no object) is tied
/// to, by the message of the event it posted ([`super::event_posts::tie`]).
#[derive(Debug, Clone)]
pub(crate) struct Named {
    /// The log it was read from, as [`Line::pod`].
    pub(crate) pod: String,
    /// Its line number in that log.
    pub(crate) line: u64,
    /// Whether it is about this object (its lines, [`Ctx::lines`]); else another object, or a
    /// predecessor of this one's name.
    pub(crate) this: bool,
    /// `ns/name` of the object it names.
    pub(crate) key: String,
    /// Its message (without the `[ns/name]` prefix): the message of the event Kopf posts for it.
    pub(crate) message: String,
}

impl Line {
    /// `POD line N, TIME (CLOCK): TEXT`.
    pub(crate) fn cite(&self) -> String {
        let time = match self.record.stamp {
            Some(s) => format!("{} ({})", rfc3339_millis(s.at), s.clock.describe()),
            None => "no time in the line".into(),
        };
        let text = self.record.lines.first().map(String::as_str).unwrap_or("");
        format!("{} line {}, {time}: {}", self.pod, self.record.line_number, text.trim())
    }
}

/// Everything the checks share about one object.
pub(crate) struct Ctx<'a> {
    pub(crate) snapshot: &'a Snapshot,
    pub(crate) obj: &'a MicroserviceObject,
    pub(crate) ns: &'a str,
    pub(crate) name: &'a str,
    /// `NS/NAME`.
    pub(crate) key: String,
    /// The evidence's "now".
    pub(crate) now: Option<DateTime<Utc>>,
    pub(crate) options: Options,
    /// `status`'s verdict of the object ([`crate::diagnose::verdict`]), with the resolver's
    /// answer for it ([`Snapshot::operator_for`]), what that operator's logs and the object's
    /// Kopf events say of it, and the operators that each handled it.
    pub(crate) judged: Judged,
    /// The resolved operator's logs, the only ones its facts are read from
    /// ([`Resolution::logs`]).
    pub(crate) logs: OperatorLogs<'a>,
    /// The Deployment diagnosed: the resolved one; for a process outside the cluster, the
    /// serving Deployment of ours that stands by on the Lease it holds; never one that does not
    /// serve the namespace (unless `--operator` names it).
    pub(crate) operator: Option<OperatorRef>,
    pub(crate) deployment: Option<&'a Deployment>,
    /// Records about this object (after its creation, so a predecessor's are left out).
    pub(crate) lines: Vec<Line>,
    /// Records without an object (posting failures may have none).
    pub(crate) unattributed: Vec<Line>,
    /// Every record of the logs that names an object of the resource, this one's and others'
    /// ([`Named`]).
    pub(crate) named: Vec<Named>,
    /// Events about this uid in its namespace.
    pub(crate) own_events: Vec<&'a Event>,
}

impl<'a> Ctx<'a> {
    /// What the checks share about `obj` in `snapshot`: its verdict, the operator the resolver
    /// names (or the one of ours that stands by for a process that leads), its log records about
    /// the object (after its creation, of its uid) and those about no object, and the object's
    /// own events.
    pub(crate) fn new(snapshot: &'a Snapshot, obj: &'a MicroserviceObject, options: Options) -> Ctx<'a> {
        let ns = obj.metadata.namespace.as_deref().unwrap_or("");
        let name = obj.metadata.name.as_deref().unwrap_or("");
        let judged = Judge::new(snapshot, options.skew).judge(obj);
        let (operator, deployment) = diagnosed(snapshot, &judged.resolution);
        // Only the resolved operator's logs (and any --log-file): another operator's lines say
        // nothing about this object.
        let logs = judged.resolution.logs(snapshot);
        let (lines, unattributed, named) = records(snapshot, obj, &logs, options.skew);
        let own_events = snapshot
            .events
            .get()
            .into_iter()
            .flatten()
            .filter(|e| {
                about(e, obj, &snapshot.resource.kind)
                    && e.involved_object.uid.is_some()
                    && e.involved_object.uid == obj.metadata.uid
            })
            .collect();
        Ctx {
            snapshot,
            obj,
            ns,
            name,
            key: obj.key(),
            now: snapshot.now(),
            options,
            judged,
            logs,
            operator,
            deployment,
            lines,
            unattributed,
            named,
            own_events,
        }
    }

    /// The resolver's answer for the object.
    pub(crate) fn resolution(&self) -> &Resolution {
        &self.judged.resolution
    }

    /// The Deployment whose settings (RBAC, `--events`, Kopf's source) decide what is posted:
    /// the resolved one, never the Deployment that stands by while a process outside the
    /// cluster handles.
    pub(crate) fn handler(&self) -> Option<&OperatorRef> {
        (self.resolution().verdict == Resolved::Deployment)
            .then_some(self.operator.as_ref())
            .flatten()
    }

    /// The `logs` command a fix suggests for the object's handler runs: `kubectl microservice logs
    /// [--resource PLURAL.GROUP] --handler ID NAME -n NS` for the handler the object's log lines
    /// name last as failing; else, for a Microservice, `accept` (the tutorial's handler), for
    /// another resource (`--resource`) the handler its lines name last at all, or `ID` when they
    /// name none (the ids are in the operator's source). A Microservice operator may run other
    /// handlers beside `accept` (issue 18, scenario team-india: `audit` failing while `accept`
    /// succeeded): the fix names the one that fails.
    pub(crate) fn logs_command(&self) -> String {
        let handler_in = |m: &str| {
            m.strip_prefix("Handler '")
                .and_then(|r| r.split_once('\''))
                .map(|(id, rest)| (id.to_string(), rest.starts_with(" failed")))
        };
        let named: Vec<(String, bool)> = self
            .lines
            .iter()
            .filter_map(|l| handler_in(&l.record.message))
            .collect();
        let failing = named
            .iter()
            .rev()
            .find(|(_, failed)| *failed)
            .map(|(id, _)| id.as_str());
        let handler = match failing {
            Some(id) => id,
            None if self.snapshot.resource.is_microservice() => "accept",
            None => named.last().map_or("ID", |(id, _)| id.as_str()),
        };
        self.logs_command_for(handler)
    }

    /// The `logs` command for the runs of `handler` of the object: `kubectl microservice logs
    /// [--resource PLURAL.GROUP] --handler HANDLER NAME -n NS`, the flag for any resource but
    /// Microservice (the default).
    pub(crate) fn logs_command_for(&self, handler: &str) -> String {
        let resource = &self.snapshot.resource;
        let resource_flag = if resource.is_microservice() {
            String::new()
        } else {
            format!("--resource {} ", resource.qualified())
        };
        format!(
            "kubectl microservice logs {resource_flag}--handler {handler} {} -n {}",
            self.name, self.ns
        )
    }

    /// The object's handler failures in the logs (`failed temporarily` or permanently), in log
    /// order.
    pub(crate) fn failures(&self) -> Vec<&Line> {
        self.lines
            .iter()
            .filter(|l| {
                matches!(
                    l.record.lifecycle(),
                    Lifecycle::HandlerOutcome {
                        outcome: Outcome::Retrying | Outcome::Failed,
                        ..
                    }
                )
            })
            .collect()
    }

    /// Whether the event of `line` can still exist: it is not older than the event TTL (true
    /// when "now" or the line's time is unknown).
    pub(crate) fn within_ttl(&self, line: &Line) -> bool {
        match (self.now, line.record.time()) {
            (Some(now), Some(t)) => now - t <= self.options.event_ttl,
            _ => true,
        }
    }
}

/// The operator diagnosed for `resolution`, and its Deployment: the resolved Deployment; for a
/// process that leads, the Deployment of ours that serves the namespace (standing by, or not
/// running), for its leadership; else none.
fn diagnosed<'a>(snapshot: &'a Snapshot, resolution: &Resolution) -> (Option<OperatorRef>, Option<&'a Deployment>) {
    let deployments = snapshot.operator.deployments.get().map(Vec::as_slice).unwrap_or(&[]);
    let operators = snapshot.operator.operators();
    let by_name = |name: &str| operators.iter().find(|op| op.display() == name).cloned();
    let operator = match resolution.verdict {
        Resolved::Deployment => resolution.operator.as_deref().and_then(by_name),
        Resolved::Process => resolution
            .serving()
            .filter(|c| c.kind == Some(OperatorKind::Ours))
            .find_map(|c| by_name(&c.operator)),
        _ => None,
    };
    let deployment = operator.as_ref().and_then(|op| {
        deployments.iter().find(|d| {
            d.metadata.name.as_deref() == Some(op.name.as_str())
                && d.metadata.namespace.as_deref() == Some(op.namespace.as_str())
        })
    });
    (operator, deployment)
}

/// The records of `logs` about `obj` (its name and namespace, of its uid when the record names
/// one, not older than its creation less `skew`), those about no object, and every record that
/// names an object ([`Named`]). A file that copies a Pod's log counts once
/// ([`crate::logs::copies`]).
fn records(
    snapshot: &Snapshot,
    obj: &MicroserviceObject,
    logs: &OperatorLogs<'_>,
    skew: Duration,
) -> (Vec<Line>, Vec<Line>, Vec<Named>) {
    let ns = obj.metadata.namespace.as_deref().unwrap_or("");
    let name = obj.metadata.name.as_deref().unwrap_or("");
    let created = obj
        .metadata
        .creation_timestamp
        .as_ref()
        .map(|t| crate::time::from_jiff(t.0));
    let mut lines = Vec::new();
    let mut unattributed = Vec::new();
    let mut named = Vec::new();
    let sources: Vec<&crate::logs::LogSource> = logs.clone().unwrap_or_default();
    let parsed = crate::logs::copies::records_once(&sources, |s| s.records_in(snapshot.log_zone(s)));
    for (source, source_records) in sources.iter().zip(parsed) {
        for record in source_records {
            let pod = crate::logs::file::source_name(&source.pod, &source.container);
            if let Some(o) = record
                .object
                .as_ref()
                .filter(|_| !crate::evidence::naming::of_other_kind(&record, &snapshot.resource))
            {
                named.push(Named {
                    pod: pod.clone(),
                    line: record.line_number,
                    this: false,
                    key: format!("{}/{}", o.namespace.as_deref().unwrap_or(""), o.name),
                    message: record.message.clone(),
                });
            }
            match &record.object {
                // A json line about another kind's object of the same name is not about it.
                Some(_) if crate::evidence::naming::of_other_kind(&record, &snapshot.resource) => {}
                Some(o) if o.name == name && o.namespace.as_deref().is_none_or(|n| n == ns) => {
                    let before = match (record.time(), created) {
                        (Some(t), Some(c)) => crate::time::plus(t, skew) < c,
                        _ => false,
                    };
                    let other_uid = record
                        .uid
                        .as_ref()
                        .is_some_and(|u| Some(u) != obj.metadata.uid.as_ref());
                    if !before && !other_uid {
                        if let Some(n) = named.last_mut() {
                            n.this = true;
                        }
                        lines.push(Line { pod, record });
                    }
                }
                None => unattributed.push(Line { pod, record }),
                _ => {}
            }
        }
    }
    (lines, unattributed, named)
}

/// Whether `e` names this object by kind (`kind`: the snapshot's resource's, `Microservice` by
/// default), name and namespace (any uid).
fn about(e: &Event, obj: &MicroserviceObject, kind: &str) -> bool {
    e.involved_object.kind.as_deref() == Some(kind)
        && e.involved_object.name == obj.metadata.name
        && e.involved_object.namespace.as_ref().or(e.metadata.namespace.as_ref()) == obj.metadata.namespace.as_ref()
}

/// For the checks' unit tests: a check over one bundle of tests/fixtures.
#[cfg(test)]
pub(crate) mod fixture {
    use super::{Ctx, Options};
    use crate::diagnose::finding::{Finding, FindingId, Severity};
    use crate::evidence::Snapshot;

    /// The bundle tests/fixtures/`dir`, read as `--bundle` reads it.
    pub(crate) fn bundle(dir: &str) -> Snapshot {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(dir);
        crate::evidence::bundle::read(&path).unwrap_or_else(|e| panic!("{dir}: {e}"))
    }

    /// What `check` finds for the object the bundle's `expected.json` names (`NS/NAME`): each
    /// finding's id and severity, in its order.
    pub(crate) fn run(dir: &str, check: impl Fn(&Ctx<'_>) -> Vec<Finding>) -> Vec<(FindingId, Severity)> {
        let snapshot = bundle(dir);
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(dir)
            .join("expected.json");
        let expected: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let key = expected["object"].as_str().unwrap();
        let objects = snapshot.microservices.get().unwrap();
        let obj = objects
            .iter()
            .find(|o| o.key() == key)
            .unwrap_or_else(|| panic!("{dir}: no {key}"));
        let ctx = Ctx::new(&snapshot, obj, Options::default());
        check(&ctx).into_iter().map(|f| (f.id, f.severity)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::{Ctx, Options};
    use crate::evidence::Evidence;

    /// Issue 18 (scenario team-india): a Microservice operator with a second handler, `audit`,
    /// failing while `accept` succeeds: the `logs` command a fix prints names the failing one;
    /// with no handler failing, a Microservice's is `accept`'s.
    #[test]
    fn the_logs_command_names_the_handler_that_fails() {
        let mut snapshot = super::fixture::bundle("bundles-synthetic/kopf-1.44-errors-not-posted");
        let obj = snapshot.microservices.get().unwrap()[0].clone();
        let ctx = Ctx::new(&snapshot, &obj, Options::default());
        assert!(
            ctx.logs_command()
                .ends_with("logs --handler accept basket-api -n store")
        );

        let Evidence::Present(logs) = &mut snapshot.operator.logs else {
            panic!("the bundle has logs")
        };
        for log in logs.iter_mut() {
            log.text = log
                .text
                .replace(
                    "Handler 'accept' failed temporarily",
                    "Handler 'audit' failed temporarily",
                )
                .replace("Checking store/basket-api", "Handler 'accept' succeeded. Checking");
        }
        let ctx = Ctx::new(&snapshot, &obj, Options::default());
        assert_eq!(
            ctx.logs_command(),
            "kubectl microservice logs --handler audit basket-api -n store"
        );
        // Nothing failing, other handlers named: a Microservice's runs are `accept`'s.
        let Evidence::Present(logs) = &mut snapshot.operator.logs else {
            unreachable!()
        };
        for log in logs.iter_mut() {
            log.text = log
                .text
                .replace("Handler 'audit' failed temporarily", "Handler 'audit' succeeded");
        }
        let ctx = Ctx::new(&snapshot, &obj, Options::default());
        assert!(
            ctx.logs_command()
                .ends_with("logs --handler accept basket-api -n store")
        );
    }
}
