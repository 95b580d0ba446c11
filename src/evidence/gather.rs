//! One way to gather a [`Snapshot`], for every command that reads evidence (`status`,
//! `explain-events`, `logs`, `collect`): [`gather`] over an [`EvidenceSource`] (the API server,
//! or a bundle directory) and the [`Needs`] of the command (what it needs from it). The
//! commands differ only by their needs; the order of the calls, and what becomes a gap rather
//! than an error, are the same for all of them.

use std::collections::BTreeSet;
use std::path::Path;

use kube::Client;

use super::live::{self, CallerAccess, EventTypes, Logs};
use super::{Evidence, GapReason, OperatorEvidence, Snapshot};
use crate::error::AppError;
use crate::logs::LogSource;
use crate::resource::MicroserviceObject;
use crate::selector::LabelSelector;

/// Where [`gather`] reads the evidence from: the API server, or a bundle directory (what the
/// snapshot then records as its [`super::Provenance`]).
#[derive(Clone, Copy)]
pub enum EvidenceSource<'a> {
    /// The API server, through `client`, as far as `access` (the caller's review) allows, for
    /// `scope` (namespace, name, selector, `--operator`, and the context and server the
    /// snapshot names).
    Live {
        /// The client of the kubeconfig context.
        client: &'a Client,
        /// What the caller may list ([`live::caller_access`]).
        access: &'a CallerAccess,
        /// What to ask the API server for.
        scope: &'a live::LiveScope,
    },
    /// A bundle directory, with what the command was given.
    Bundle(Bundle<'a>),
}

/// A bundle directory (docs/contracts.md's layout), with what the command was given: `-n` (a
/// namespace the bundle did not collect is refused), `--operator NS/deployment/NAME` (the
/// bundle must hold it; it becomes the chosen operator) and `-l` (applied to the bundle's
/// Microservices as the API server applies it to a list).
#[derive(Clone, Copy)]
pub struct Bundle<'a> {
    /// The bundle.
    pub dir: &'a Path,
    /// `-n NS`, or `None`.
    pub namespace: Option<&'a str>,
    /// `--operator NS/deployment/NAME`, or `None`.
    pub operator: Option<&'a str>,
    /// `-l`, parsed, or `None`.
    pub selector: Option<&'a LabelSelector>,
    /// The resource whose objects are read ([`super::target::in_bundle`]; the Microservice by
    /// default).
    pub resource: &'a crate::resource::identity::ResourceId,
}

/// Which Microservices and events a live [`gather`] reads (a bundle holds what it holds).
pub enum Objects {
    /// The scope's Microservices (one by name, or a list) and their events of every type,
    /// concurrently ([`live::gather_objects`]): `status NAME`, `explain-events`.
    WithEvents,
    /// None: the command reads the Microservices page by page itself (`status`'s table judges
    /// each page as it arrives and drops it). The events of `events` are read after the
    /// operator, so that each page is judged with them.
    Paged {
        /// Which events.
        events: EventTypes,
    },
    /// Read by the command already (`logs`: the named object, or those of `-n`); events are
    /// not read, and their gap says why.
    Given {
        /// The objects.
        objects: Vec<MicroserviceObject>,
        /// Why no events were read, e.g. `logs reads no events`.
        no_events: &'static str,
    },
    /// Streamed into a bundle by the command (`collect`): the snapshot so far (its
    /// Microservices and events empty, or their gaps) and the namespaces of the objects
    /// written.
    Streamed {
        /// The snapshot so far (boxed: the other variants are small).
        snapshot: Box<Snapshot>,
        /// The namespaces of the Microservices written.
        namespaces: BTreeSet<String>,
    },
}

/// What a command needs from its [`EvidenceSource`].
pub struct Needs<'a> {
    /// Which Microservices and events (live only).
    pub objects: Objects,
    /// The operator (Deployments, Pods, Leases, peerings) with these logs, or `None` for none of
    /// it (live only).
    pub operator: Option<Logs>,
    /// The rest of the evidence for findings: RBAC, access reviews, the CRD, ConfigMaps
    /// ([`live::add_everything_for`]), for the Microservices' namespaces (live only).
    pub everything: bool,
    /// `--log-file` logs, read already ([`crate::logs::file::read_sources`]), added to the
    /// operator's logs last, from either source.
    pub log_files: &'a [LogSource],
    /// Told what is read next, for a progress line (`collect` on a terminal): `the operator:
    /// Deployment, Pods and logs`, then `RBAC, Leases, the CRD and ConfigMaps` (live only).
    pub progress: Option<&'a dyn Fn(&str)>,
}

/// Why [`gather`] gave no snapshot.
#[derive(Debug)]
pub enum GatherError {
    /// The Microservices could not be read for a reason that is not a gap (not 403 or 404):
    /// each command words it (a bad `-l`, the object it names, the server).
    Microservices(kube::Error),
    /// A bundle that cannot be read, or does not hold what the command was given.
    Other(AppError),
}

impl GatherError {
    /// The command's error: `microservices` words a failed Microservices read.
    pub fn into_app(self, microservices: impl FnOnce(kube::Error) -> AppError) -> AppError {
        match self {
            GatherError::Microservices(e) => microservices(e),
            GatherError::Other(e) => e,
        }
    }
}

impl From<AppError> for GatherError {
    fn from(e: AppError) -> Self {
        GatherError::Other(e)
    }
}

/// Gathers the snapshot `plan` asks of `source`.
///
/// Live, in this order: the Microservices and events (as [`Needs::objects`] says); the operator
/// ([`live::add_operator`], when [`Needs::operator`] asks); for [`Objects::Paged`], the events
/// then; the rest ([`Needs::everything`]); the `--log-file` logs. A bundle: read
/// ([`super::bundle::read`]), checked against `-n` and `--operator` (exit 3 when it does not
/// hold them), the `--operator` Deployment chosen, `-l` applied, the `--log-file` logs added.
pub async fn gather(source: EvidenceSource<'_>, plan: Needs<'_>) -> Result<Snapshot, GatherError> {
    let log_files = plan.log_files;
    let mut snapshot = match source {
        EvidenceSource::Bundle(bundle) => from_bundle(bundle)?,
        EvidenceSource::Live { client, access, scope } => from_cluster(client, access, scope, plan).await?,
    };
    super::add_log_files(&mut snapshot.operator.logs, log_files);
    Ok(snapshot)
}

/// [`gather`] from a bundle, on this thread: reading a bundle waits on nothing, so no async
/// runtime is started. Its errors are the bundle's (unreadable: exit 2; not holding what the
/// command was given: exit 3).
pub fn gather_bundle(bundle: Bundle<'_>, plan: Needs<'_>) -> Result<Snapshot, AppError> {
    futures::executor::block_on(gather(EvidenceSource::Bundle(bundle), plan))
        .map_err(|e| e.into_app(|e| AppError::kube(format!("read the bundle {}", bundle.dir.display()), e)))
}

fn from_bundle(bundle: Bundle<'_>) -> Result<Snapshot, AppError> {
    let Bundle {
        dir,
        namespace,
        operator,
        selector,
        resource,
    } = bundle;
    let mut snapshot = super::bundle::read_resource(dir, resource)?;
    check_bundle_namespace(&snapshot, namespace, dir)?;
    check_operator_in_bundle(&snapshot.operator, operator, dir)?;
    if let Some(spec) = operator {
        let (ns, name) = live::parse_operator_spec(spec).map_err(|e| AppError::Usage(e.to_string()))?;
        snapshot
            .operator
            .select_deployment(&ns, &name, "operator/deployment.json");
    }
    if let (Some(selector), Evidence::Present(objects)) = (selector, &mut snapshot.microservices) {
        selector.retain(objects);
    }
    Ok(snapshot)
}

async fn from_cluster(
    client: &Client,
    access: &CallerAccess,
    scope: &live::LiveScope,
    plan: Needs<'_>,
) -> Result<Snapshot, GatherError> {
    let step = |what: &str| {
        if let Some(progress) = plan.progress {
            progress(what);
        }
    };
    let (mut snapshot, paged_events, namespaces) = match plan.objects {
        Objects::WithEvents => {
            let snapshot = live::gather_objects(client, scope, access)
                .await
                .map_err(GatherError::Microservices)?;
            (snapshot, None, None)
        }
        Objects::Paged { events } => (live::skeleton(scope), Some(events), None),
        Objects::Given { objects, no_events } => {
            let mut snapshot = live::skeleton(scope);
            snapshot.microservices = Evidence::Present(objects);
            snapshot.events = Evidence::missing("events", GapReason::NotCollected(no_events.into()));
            (snapshot, None, None)
        }
        Objects::Streamed { snapshot, namespaces } => (*snapshot, None, Some(namespaces)),
    };
    if let Some(logs) = plan.operator {
        step("the operator: Deployment, Pods and logs");
        live::add_operator(client, &mut snapshot, scope, logs).await;
    }
    if let Some(types) = paged_events {
        let events = live::microservice_events(client, scope, access, types).await;
        snapshot.add_events(events);
    }
    if plan.everything {
        step("RBAC, Leases, the CRD and ConfigMaps");
        let namespaces = namespaces.unwrap_or_else(|| {
            snapshot
                .microservices
                .get()
                .into_iter()
                .flatten()
                .filter_map(|o| o.metadata.namespace.clone())
                .collect()
        });
        live::add_everything_for(client, &mut snapshot, namespaces).await;
    }
    Ok(snapshot)
}

/// `--operator NS/deployment/NAME` given with `--bundle DIR`: the bundle must hold that
/// Deployment in `operator/deployment.json`, else an error naming the flag and what the bundle
/// holds (exit 3). A bundle without that file cannot say: its gap stays in the answer.
fn check_operator_in_bundle(operator: &OperatorEvidence, spec: Option<&str>, dir: &Path) -> Result<(), AppError> {
    let (Some(spec), Some(deployments)) = (spec, operator.deployments.get()) else {
        return Ok(());
    };
    let (namespace, name) = crate::names::operator_ref(spec).map_err(AppError::Usage)?;
    let label = |d: &k8s_openapi::api::apps::v1::Deployment| {
        format!(
            "{}/deployment/{}",
            d.metadata.namespace.as_deref().unwrap_or(""),
            d.metadata.name.as_deref().unwrap_or("")
        )
    };
    if deployments
        .iter()
        .any(|d| label(d) == format!("{namespace}/deployment/{name}"))
    {
        return Ok(());
    }
    let held: Vec<String> = deployments.iter().map(label).collect();
    Err(AppError::Undecided(format!(
        "--operator {spec}: not in the bundle {}, whose operator/deployment.json holds {}",
        dir.display(),
        if held.is_empty() {
            "no Deployment".to_string()
        } else {
            held.join(", ")
        }
    )))
}

/// `-n NS` given with `--bundle DIR`: a bundle holds only what it collected, so a namespace it
/// did not collect is "not in the bundle" (exit 3, naming what it holds), never kubectl's "No
/// resources found in NS namespace.", which means the server has none (issue 14 item 3). The
/// namespace it collected is `meta.json`'s; a bundle without one (made with kubectl, or with
/// `-A`) holds the namespaces of its Microservices, and one with none of them is not refused.
fn check_bundle_namespace(snapshot: &Snapshot, namespace: Option<&str>, dir: &Path) -> Result<(), AppError> {
    let Some(wanted) = namespace else {
        return Ok(());
    };
    let held: Vec<String> = match &snapshot.namespace {
        Some(ns) => vec![ns.clone()],
        None => {
            let mut namespaces: Vec<String> = snapshot
                .microservices
                .get()
                .map(|objects| objects.iter().filter_map(|o| o.metadata.namespace.clone()).collect())
                .unwrap_or_default();
            namespaces.sort();
            namespaces.dedup();
            namespaces
        }
    };
    if held.is_empty() || held.iter().any(|ns| ns == wanted) {
        return Ok(());
    }
    let source = if snapshot.namespace.is_some() {
        "meta.json"
    } else {
        "its microservices.json"
    };
    Err(AppError::Undecided(format!(
        "the bundle {} holds namespace {} ({source}), not {wanted}: a bundle holds only what it collected",
        dir.display(),
        held.join(", ")
    )))
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use serde_json::json;

    use super::*;

    static MICROSERVICE: std::sync::LazyLock<crate::resource::identity::ResourceId> =
        std::sync::LazyLock::new(crate::resource::identity::ResourceId::microservice);

    fn healthy() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bundles/healthy")
    }

    fn plan(log_files: &[LogSource]) -> Needs<'_> {
        Needs {
            objects: Objects::WithEvents,
            operator: Some(Logs::Current),
            everything: true,
            log_files,
            progress: None,
        }
    }

    fn bundle<'a>(
        dir: &'a Path,
        namespace: Option<&'a str>,
        operator: Option<&'a str>,
        selector: Option<&'a LabelSelector>,
    ) -> Bundle<'a> {
        Bundle {
            dir,
            namespace,
            operator,
            selector,
            resource: &MICROSERVICE,
        }
    }

    fn names(snapshot: &Snapshot) -> Vec<String> {
        let objects = snapshot.microservices.get().unwrap();
        objects.iter().filter_map(|o| o.metadata.name.clone()).collect()
    }

    /// A bundle is checked against `-n` and `--operator`, the `--operator` Deployment chosen,
    /// `-l` applied, and the `--log-file` logs added.
    #[test]
    fn a_bundle_is_checked_chosen_filtered_and_given_the_log_files() {
        let dir = healthy();
        let file = LogSource {
            pod: "op.log".into(),
            container: crate::logs::file::FILE_CONTAINER.into(),
            previous: false,
            text: "x".into(),
        };
        let files = [file.clone()];
        let run = |source| gather_bundle(source, plan(&files));
        let snapshot = run(bundle(
            &dir,
            Some("store"),
            Some("store/deployment/catalog-operator"),
            None,
        ))
        .unwrap();
        assert_eq!(names(&snapshot), ["catalog-api"]);
        assert_eq!(
            snapshot.operator.chosen.as_deref(),
            Some("store/deployment/catalog-operator")
        );
        assert!(snapshot.operator.logs.get().unwrap().contains(&file));

        let nothing = LabelSelector::from_flag("app=none").unwrap();
        let filtered = run(bundle(&dir, None, None, Some(&nothing))).unwrap();
        assert!(names(&filtered).is_empty());

        let wrong_namespace = run(bundle(&dir, Some("todo"), None, None)).unwrap_err();
        let message = wrong_namespace.to_string();
        assert!(message.contains("holds namespace store"), "{message}");
        let wrong_operator = run(bundle(&dir, None, Some("ops/deployment/other"), None)).unwrap_err();
        let message = wrong_operator.to_string();
        assert!(message.contains("store/deployment/catalog-operator"), "{message}");
    }

    /// A fake API server answering empty lists; the paths asked, in order.
    fn fake() -> (Client, Arc<Mutex<Vec<String>>>) {
        crate::client::fake::fake_api(|_, _| {
            (
                200,
                json!({"kind": "List", "apiVersion": "v1", "metadata": {}, "items": []}).to_string(),
            )
        })
    }

    fn first_index(seen: &[String], part: &str) -> Option<usize> {
        seen.iter().position(|p| p.contains(part))
    }

    /// Live, the plans read in the order the commands rely on: objects and events before the
    /// operator, except for [`Objects::Paged`] (the events after the operator); objects given
    /// by the command are not read again, and their events are a named gap.
    #[tokio::test]
    async fn live_plans_read_in_the_order_the_commands_rely_on() {
        let scope = live::LiveScope {
            namespace: Some("store".into()),
            ..Default::default()
        };
        let access = CallerAccess {
            list_microservices: true,
            list_events: true,
        };
        let live_source = |client| EvidenceSource::Live {
            client,
            access: &access,
            scope: &scope,
        };

        let (client, seen) = fake();
        let with_events = Needs {
            everything: false,
            ..plan(&[])
        };
        gather(live_source(&client), with_events).await.unwrap();
        let seen_now = seen.lock().unwrap().clone();
        let (objects, events, deployments) = (
            first_index(&seen_now, "/microservices"),
            first_index(&seen_now, "/events"),
            first_index(&seen_now, "/deployments"),
        );
        assert!(objects.unwrap() < deployments.unwrap(), "{seen_now:?}");
        assert!(events.unwrap() < deployments.unwrap(), "{seen_now:?}");

        let (client, seen) = fake();
        let steps = Mutex::new(Vec::new());
        let record = |step: &str| steps.lock().unwrap().push(step.to_string());
        let paged = Needs {
            objects: Objects::Paged {
                events: EventTypes::NotNormalAndKopfLogging,
            },
            operator: Some(Logs::None),
            everything: false,
            log_files: &[],
            progress: Some(&record),
        };
        let snapshot = gather(live_source(&client), paged).await.unwrap();
        let seen_now = seen.lock().unwrap().clone();
        assert_eq!(first_index(&seen_now, "/microservices"), None, "{seen_now:?}");
        assert!(
            first_index(&seen_now, "/deployments").unwrap() < first_index(&seen_now, "/events").unwrap(),
            "{seen_now:?}"
        );
        assert!(snapshot.events.get().is_some());
        assert_eq!(*steps.lock().unwrap(), ["the operator: Deployment, Pods and logs"]);

        let (client, seen) = fake();
        let given = Needs {
            objects: Objects::Given {
                objects: Vec::new(),
                no_events: "logs reads no events",
            },
            operator: None,
            everything: false,
            log_files: &[],
            progress: None,
        };
        let snapshot = gather(live_source(&client), given).await.unwrap();
        assert!(seen.lock().unwrap().is_empty());
        let gap = snapshot.events.gap().unwrap();
        assert_eq!(gap.reason, GapReason::NotCollected("logs reads no events".into()));
    }
}
