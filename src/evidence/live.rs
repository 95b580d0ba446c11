//! Gathering a [`Snapshot`] from the API, concurrently, scaling with namespaces rather than
//! objects: one paginated list of Microservices, one list of core/v1 events with a server-side
//! field selector (`involvedObject.kind=Microservice`), and — only when a verdict needs it or
//! `collect` asks — the operator's Deployment, Pods, ConfigMaps, logs (bounded by
//! `sinceSeconds`, `tailLines`, `limitBytes`: the newest lines of the last 24 h,
//! [`crate::logs::source`]) and RBAC.
//!
//! Before gathering, the caller's own permissions are checked with one
//! SelfSubjectRulesReview per namespace (SelfSubjectAccessReviews with `-A`); what will be a
//! gap is said up front and not asked for. A forbidden or failed call becomes a named gap.

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};
use futures::future::join_all;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec, SelfSubjectRulesReview,
    SelfSubjectRulesReviewSpec, SubjectAccessReview, SubjectAccessReviewSpec,
};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Event, Pod};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, ListParams, LogParams, PostParams};
use kube::{Client, Resource};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::operator::{Hints, Leadership, OperatorRef, find_operators, find_operators_with, recognise, recognise_with};
use super::{Evidence, GapReason, OperatorEvidence, Provenance, RbacEvidence, Snapshot};
/// The mocked API server, for the tests of the judge (`diagnose`) that gather their evidence
/// live: they reach the client through the evidence, the layer under them.
#[cfg(test)]
pub(crate) use crate::client::fake::fake_api;
use crate::client::lists::{get_if_served, list_all, list_pages, send_json};
use crate::kopf::peering::{PEERING_GROUPS, PeeringMode};
use crate::logs::LogSource;
use crate::logs::source::{LOG_LIMIT_BYTES, LOG_SINCE, LOG_TAIL_LINES};
use crate::resource::MicroserviceObject;
use crate::resource::identity::ResourceId;
use crate::vocab::lease::{LEASE_GROUP, LEASE_VERBS};

/// What a live gathering asks the API server for (which namespace, objects and operator),
/// and what its snapshot's [`Provenance`] names (context, server).
#[derive(Debug, Clone, Default)]
pub struct LiveScope {
    /// One namespace, or `None` for all.
    pub namespace: Option<String>,
    /// `-l` selector for Microservices.
    pub selector: Option<String>,
    /// Only this object (a `get`, not a list).
    pub name: Option<String>,
    /// `NS/deployment/NAME` given by the user.
    pub operator: Option<String>,
    /// Kubeconfig context, for the snapshot's source.
    pub context: Option<String>,
    /// API server URL, for the snapshot's source.
    pub server: String,
    /// The resource whose objects are read (`--resource`; the Microservice by default).
    pub resource: ResourceId,
}

/// What the caller may do, as far as the gathering is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallerAccess {
    /// list microservices.
    pub list_microservices: bool,
    /// list events (core).
    pub list_events: bool,
}

/// What the command that prints [`access_notes`] prints, so that each note speaks of it (a
/// WARNINGS column only `status`'s table has).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotesFor {
    /// `status`'s table (or `-o json|yaml|name` of a list): lists Microservices, WARNINGS column.
    StatusTable,
    /// `status NAME`: gets one object, a `Warnings:` line.
    StatusObject,
    /// `explain-events NAME`: gets one object, findings about its events.
    Findings,
}

/// The notes to print before gathering (what will be a gap), one per line, in the words of
/// what `printed` shows.
pub fn access_notes(access: &CallerAccess, scope: &str, printed: NotesFor) -> Vec<String> {
    let mut notes = Vec::new();
    if !access.list_microservices {
        notes.push(format!(
            "you cannot list microservices {scope}: there is nothing to decide on"
        ));
    }
    if !access.list_events {
        let consequence = match printed {
            NotesFor::StatusTable => "WARNINGS will show ? and event evidence is a gap",
            NotesFor::StatusObject => "its Warnings line cannot count them, and event evidence is a gap",
            NotesFor::Findings => {
                "the findings cannot see the object's events (a gap): whether Warning events were posted is not known"
            }
        };
        notes.push(format!("you cannot list events {scope}: {consequence}"));
    }
    notes
}

/// Checks the caller's permissions: one SelfSubjectRulesReview in a namespace, or two
/// SelfSubjectAccessReviews cluster-wide. If the review itself fails, assumes allowed (the
/// calls will tell).
///
/// Errors only when the API server cannot be reached at all (a transport error), so that an
/// unreachable cluster costs one request timeout, not one per call.
pub async fn caller_access(client: &Client, namespace: Option<&str>) -> Result<CallerAccess, kube::Error> {
    caller_access_for(client, namespace, &ResourceId::microservice()).await
}

/// [`caller_access`] for the objects of `resource` (`list_microservices` then says whether the
/// caller may list them).
pub async fn caller_access_for(
    client: &Client,
    namespace: Option<&str>,
    resource: &ResourceId,
) -> Result<CallerAccess, kube::Error> {
    let (group, plural) = (resource.group.as_str(), resource.plural.as_str());
    match namespace {
        Some(ns) => {
            let api: Api<SelfSubjectRulesReview> = Api::all(client.clone());
            let review = SelfSubjectRulesReview {
                spec: SelfSubjectRulesReviewSpec {
                    namespace: Some(ns.to_string()),
                },
                ..Default::default()
            };
            match api.create(&PostParams::default(), &review).await {
                Ok(answer) => {
                    let rules = answer.status.map(|s| s.resource_rules).unwrap_or_default();
                    let allows = |group: &str, resource: &str| {
                        rules.iter().any(|r| {
                            let any = |list: &Option<Vec<String>>, want: &str| {
                                list.iter().flatten().any(|v| v == "*" || v == want)
                            };
                            r.verbs.iter().any(|v| v == "*" || v == "list")
                                && any(&r.api_groups, group)
                                && any(&r.resources, resource)
                        })
                    };
                    Ok(CallerAccess {
                        list_microservices: allows(group, plural),
                        list_events: allows("", "events"),
                    })
                }
                // The review itself refused or failed at the API: assume allowed; the calls will tell.
                Err(kube::Error::Api(_)) => Ok(CallerAccess {
                    list_microservices: true,
                    list_events: true,
                }),
                Err(transport) => Err(transport),
            }
        }
        None => {
            let (ms, ev) = futures::join!(self_review(client, group, plural), self_review(client, "", "events"));
            Ok(CallerAccess {
                list_microservices: ms?,
                list_events: ev?,
            })
        }
    }
}

async fn self_review(client: &Client, group: &str, resource: &str) -> Result<bool, kube::Error> {
    let api: Api<SelfSubjectAccessReview> = Api::all(client.clone());
    let review = SelfSubjectAccessReview {
        spec: SelfSubjectAccessReviewSpec {
            resource_attributes: Some(ResourceAttributes {
                group: Some(group.to_string()),
                resource: Some(resource.to_string()),
                verb: Some("list".into()),
                ..Default::default()
            }),
            ..Default::default()
        },
        ..Default::default()
    };
    match api.create(&PostParams::default(), &review).await {
        Ok(answer) => Ok(answer.status.is_none_or(|s| s.allowed)),
        Err(kube::Error::Api(_)) => Ok(true),
        Err(transport) => Err(transport),
    }
}

/// Turns a call's result into evidence: 403 → Forbidden gap, other errors → Failed gap.
pub fn evidence<T>(what: &str, result: Result<T, kube::Error>) -> Evidence<T> {
    match result {
        Ok(v) => Evidence::Present(v),
        Err(kube::Error::Api(status)) if status.code == 403 => {
            Evidence::missing(what, GapReason::Forbidden(status.message.clone()))
        }
        Err(err) => Evidence::missing(what, GapReason::Failed(crate::error::describe_kube_error(&err))),
    }
}

fn url_for<K: Resource<DynamicType = ()>>(namespace: Option<&str>) -> String {
    K::url_path(&(), namespace)
}

/// The core of a live snapshot: Microservices and their events, concurrently. The operator and
/// RBAC parts are left as "not collected" gaps; [`add_operator`] and [`add_everything`] fill them.
pub async fn gather_objects(client: &Client, plan: &LiveScope, access: &CallerAccess) -> Result<Snapshot, kube::Error> {
    let mut items = Vec::new();
    let objects = microservice_pages(client, plan, access, |page, _| items.extend(page));
    let events = microservice_events(client, plan, access, EventTypes::All);
    let (objects, events) = futures::join!(objects, events);
    let mut snapshot = skeleton(plan);
    snapshot.microservices = match objects {
        Ok(date) => {
            snapshot.captured_at = date;
            Evidence::Present(items)
        }
        Err(kube::Error::Api(status)) if status.code == 404 || status.code == 403 => {
            evidence("microservices", Err(kube::Error::Api(status)))
        }
        Err(err) => return Err(err),
    };
    snapshot.add_events(events);
    Ok(snapshot)
}

/// A live snapshot of `plan` with nothing gathered yet: no Microservices (an empty list), and
/// every other piece of evidence a "not collected" gap. `captured_at` is unset.
pub fn skeleton(plan: &LiveScope) -> Snapshot {
    let not_collected = |what: &str| GapReason::NotCollected(format!("{what} not needed for this answer"));
    Snapshot {
        source: Provenance::Live {
            context: plan.context.clone(),
            server: plan.server.clone(),
        },
        captured_at: None,
        namespace: plan.namespace.clone(),
        resource: plan.resource.clone(),
        microservices: Evidence::Present(Vec::new()),
        crd: Evidence::missing("CRD", not_collected("the CRD")),
        events: Evidence::missing("events", not_collected("events")),
        operator: OperatorEvidence {
            deployments: Evidence::missing("operator Deployment", not_collected("the operator")),
            pods: Evidence::missing("operator Pods", not_collected("the operator")),
            configmaps: Evidence::missing("operator ConfigMaps", not_collected("the operator")),
            logs: Evidence::missing("operator logs", not_collected("operator logs")),
            leases: Evidence::missing(super::LEASES, not_collected("the operator")),
            peerings: Evidence::missing(super::PEERINGS, not_collected("the operator")),
            chosen: None,
            others: Vec::new(),
            unchosen: Vec::new(),
        },
        rbac: RbacEvidence {
            access_reviews: Evidence::missing("access reviews", not_collected("RBAC")),
            roles: Evidence::missing("Roles", not_collected("RBAC")),
            role_bindings: Evidence::missing("RoleBindings", not_collected("RBAC")),
            cluster_roles: Evidence::missing("ClusterRoles", not_collected("RBAC")),
            cluster_role_bindings: Evidence::missing("ClusterRoleBindings", not_collected("RBAC")),
        },
    }
}

impl Snapshot {
    /// Records the answer of [`microservice_events`]: the events, or their gap; the API
    /// server's clock becomes `captured_at` when no earlier answer set it (else now).
    pub fn add_events(&mut self, events: Result<(Vec<Event>, Option<DateTime<Utc>>), kube::Error>) {
        self.events = evidence(
            "events",
            events.map(|(items, date)| {
                self.captured_at = self.captured_at.or(date);
                items
            }),
        );
        self.captured_at = self.captured_at.or_else(|| Some(Utc::now()));
    }
}

/// The Microservices `plan` asks for (one by name, or a list, paginated), handed to
/// `each_page` page by page as they arrive, with the API server's clock (`Date` header of the
/// first answer) when it sent one; returns that clock. A NAME that is not there is an empty page, not an error. A caller without
/// `list` (per the review) gets a 403 without a call.
pub async fn microservice_pages(
    client: &Client,
    plan: &LiveScope,
    access: &CallerAccess,
    mut each_page: impl FnMut(Vec<MicroserviceObject>, Option<DateTime<Utc>>),
) -> Result<Option<DateTime<Utc>>, kube::Error> {
    let ns = plan.namespace.as_deref();
    if !access.list_microservices {
        return Err(forbidden_by_review("list microservices"));
    }
    if let (Some(name), None) = (&plan.name, ns) {
        let params = ListParams::default().fields(&format!("metadata.name={name}"));
        return list_pages(client, &plan.resource.url_path(None), params, each_page).await;
    }
    if let Some(name) = &plan.name {
        let request = kube::core::Request::new(plan.resource.url_path(ns))
            .get(name, &Default::default())
            .map_err(kube::Error::BuildRequest)?;
        // Not found is an answer (the object is not there), not a gap.
        return match send_json::<MicroserviceObject>(client, request).await {
            Ok((o, d)) => {
                each_page(vec![o], d);
                Ok(d)
            }
            Err(kube::Error::Api(status))
                if status.code == 404 && status.details.as_ref().is_some_and(|d| d.name == *name) =>
            {
                Ok(None)
            }
            Err(e) => Err(e),
        };
    }
    let mut params = ListParams::default();
    if let Some(selector) = &plan.selector {
        params = params.labels(selector);
    }
    list_pages(client, &plan.resource.url_path(ns), params, each_page).await
}

/// Which events [`microservice_events`] lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventTypes {
    /// Every event about Microservices (`explain-events`, `collect`).
    All,
    /// Only those whose `type` is not `Normal` (`status` counts Warning and Error events), by
    /// the server-side field selector `type!=Normal`: a namespace of 10,000 objects holds
    /// 10,000 Normal `Accepted` events that `status` would fetch and drop.
    NotNormal,
    /// [`EventTypes::NotNormal`], and the Normal events of reason `Logging`: Kopf's log
    /// records posted as events, whose `... is processed` lines are cycle ends (the
    /// diagnostics' `cycles::log_facts` reads them); two lists (`type!=Normal`, and
    /// `type=Normal,reason=Logging`), as a field selector has no "or". Our operator's Normal
    /// `Accepted` events are in neither.
    NotNormalAndKopfLogging,
}

/// core/v1 events about Microservices (`involvedObject.kind=Microservice`, and the name of
/// `plan`, when it has one), paginated, with the API server's clock. A caller without `list`
/// (per the review) gets a 403 without a call.
pub async fn microservice_events(
    client: &Client,
    plan: &LiveScope,
    access: &CallerAccess,
    types: EventTypes,
) -> Result<(Vec<Event>, Option<DateTime<Utc>>), kube::Error> {
    if !access.list_events {
        return Err(forbidden_by_review("list events"));
    }
    let mut selector = format!("involvedObject.kind={}", plan.resource.kind);
    if let Some(name) = &plan.name {
        selector.push_str(&format!(",involvedObject.name={name}"));
    }
    let url = url_for::<Event>(plan.namespace.as_deref());
    let list = |fields: String| list_all::<Event>(client, &url, ListParams::default().fields(&fields));
    match types {
        EventTypes::All => list(selector).await,
        EventTypes::NotNormal => list(format!("{selector},type!=Normal")).await,
        EventTypes::NotNormalAndKopfLogging => {
            let (not_normal, logging) = futures::join!(
                list(format!("{selector},type!=Normal")),
                list(format!("{selector},type=Normal,reason=Logging")),
            );
            let (mut events, date) = not_normal?;
            let (more, later) = logging?;
            // Disjoint on a real API server; an event listed twice (a proxy that ignores a
            // selector) is still counted once.
            let key = |e: &Event| (e.metadata.namespace.clone(), e.metadata.name.clone());
            let seen: std::collections::HashSet<_> = events.iter().map(key).collect();
            events.extend(more.into_iter().filter(|e| !seen.contains(&key(e))));
            Ok((events, date.or(later)))
        }
    }
}

/// [`microservice_events`] (all types) handed to `each_page` page by page as they arrive;
/// returns the API server's clock.
pub async fn microservice_event_pages(
    client: &Client,
    plan: &LiveScope,
    access: &CallerAccess,
    each_page: impl FnMut(Vec<Event>, Option<DateTime<Utc>>),
) -> Result<Option<DateTime<Utc>>, kube::Error> {
    if !access.list_events {
        return Err(forbidden_by_review("list events"));
    }
    let mut selector = format!("involvedObject.kind={}", plan.resource.kind);
    if let Some(name) = &plan.name {
        selector.push_str(&format!(",involvedObject.name={name}"));
    }
    list_pages(
        client,
        &url_for::<Event>(plan.namespace.as_deref()),
        ListParams::default().fields(&selector),
        each_page,
    )
    .await
}

fn forbidden_by_review(what: &str) -> kube::Error {
    kube::Error::Api(Box::new(
        kube::core::Status::failure(&format!("{what}: denied by SelfSubjectRulesReview"), "Forbidden").with_code(403),
    ))
}

/// Which operator logs [`add_operator`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Logs {
    /// None: the answer needs only who the operator is (read as [`Logs::Current`] all the same
    /// when several operators may serve the namespace: the resolver reads their logs).
    None,
    /// Each Pod's current container log.
    Current,
    /// Current, and the previous instance's when the container restarted.
    WithPrevious,
}

/// Finds the operator (`--operator NS/deployment/NAME`, else Deployments the caller can list
/// that run `kopf run` / `python -m kopf` / `kubectl-microservice operate`), keeps those that
/// serve `plan.namespace` (all with `-A`) as [`OperatorEvidence::deployments`] and the rest only
/// as [`OperatorEvidence::others`] (what each is and watches: their Pods, logs and RBAC are
/// other teams' and never diagnosed), then the kept ones' Pods, their logs as `logs` asks, and
/// the Leases and Kopf peerings that decide who leads, including `NS/microservice-operator`,
/// the Lease a laptop `operate --namespace NS` elects on ([`super::resolve`]).
pub async fn add_operator(client: &Client, snapshot: &mut Snapshot, plan: &LiveScope, logs: Logs) {
    snapshot.operator.chosen = None;
    snapshot.operator.others = Vec::new();
    let deployments = match operator_deployments(client, snapshot, plan).await {
        Evidence::Present(deployments) => deployments,
        Evidence::Gap(gap) => {
            // A Deployment that could not be read (403, failed) is a gap, never "no operator":
            // the findings would otherwise say "install it".
            let unknown = || GapReason::NotCollected(format!("the operator Deployment is unknown ({gap})"));
            snapshot.operator.pods = Evidence::missing("operator Pods", unknown());
            snapshot.operator.logs = Evidence::missing("operator logs", unknown());
            snapshot.operator.deployments = Evidence::Gap(gap);
            let (leases, _) = leadership(client, &[], plan.namespace.as_deref()).await;
            snapshot.operator.leases = leases;
            snapshot.operator.settle_leadership();
            return;
        }
    };
    // `--operator` names a Deployment: it is the operator, whatever it runs.
    let chosen = snapshot.operator.chosen.clone();
    let hints = Hints {
        chosen: chosen.as_deref(),
        ..Hints::default()
    };
    let matched: Vec<Deployment> = deployments
        .into_iter()
        .filter(|d| recognise_with(d, &hints).is_some())
        .collect();
    let operators: Vec<OperatorRef> = find_operators_with(&matched, &hints);
    // The ConfigMaps they mount and read env from, with the Pods: the resolver reads them
    // (a source that handles only other resources, `$(VAR)`s from ConfigMaps), so every
    // command that reads the operator sees the same candidates (issue 18 trial P2).
    let ((pods, by_operator), configmaps) = futures::join!(
        operator_pods(client, &matched, &operators),
        operator_configmaps(client, &matched)
    );
    snapshot.operator.configmaps = configmaps;
    let logs = operator_logs(
        client,
        logs_for(logs, &operators, plan),
        &pods,
        &by_operator,
        &operators,
    )
    .await;
    let (leases, peerings) = leadership(client, &operators, plan.namespace.as_deref()).await;
    if plan.operator.is_some() && logs.get().is_some() {
        snapshot.operator.unchosen = unchosen(client, &matched, plan.namespace.as_deref()).await;
    }
    snapshot.operator.deployments = Evidence::Present(matched);
    snapshot.operator.pods = pods;
    snapshot.operator.logs = logs;
    snapshot.operator.leases = leases;
    snapshot.operator.peerings = peerings;
    snapshot.operator.settle_leadership();
}

/// The logs [`add_operator`] reads: those the command asks for, and the current ones when it
/// asks for none but several operators may serve the namespace (`-A`, a scope the command line
/// does not say): the resolver reads who serves an object from its operators' own logs, so
/// that every command names the same operator ([`super::resolve`]).
fn logs_for(wanted: Logs, operators: &[OperatorRef], plan: &LiveScope) -> Logs {
    let serving = operators
        .iter()
        .filter(|op| plan.namespace.as_deref().is_none_or(|ns| op.watches(ns)))
        .count();
    match wanted {
        Logs::None if serving > 1 && plan.operator.is_none() => Logs::Current,
        other => other,
    }
}

/// The operator Deployments [`add_operator`] keeps: the one `--operator` names (then
/// [`OperatorEvidence::chosen`]), else those discovery finds that serve the namespace, the
/// others becoming [`OperatorEvidence::others`]. The cluster-wide list's clock becomes the
/// snapshot's `captured_at` when nothing set it yet.
async fn operator_deployments(client: &Client, snapshot: &mut Snapshot, plan: &LiveScope) -> Evidence<Vec<Deployment>> {
    let Some(spec) = &plan.operator else {
        let (found, date) = discover_at(client, plan.namespace.as_deref()).await;
        if snapshot.captured_at.is_none() && date.is_some() {
            snapshot.captured_at = date;
        }
        return match found {
            Evidence::Present(found) => {
                let (kept, others) = split_serving(found, snapshot.namespace.as_deref());
                snapshot.operator.others = others;
                Evidence::Present(kept)
            }
            gap => gap,
        };
    };
    match parse_operator_spec(spec) {
        Ok((ns, name)) => {
            snapshot.operator.chosen = Some(format!("{ns}/deployment/{name}"));
            evidence(
                "operator Deployment",
                Api::<Deployment>::namespaced(client.clone(), &ns)
                    .get(&name)
                    .await
                    .map(|d| vec![d]),
            )
        }
        Err(e) => Evidence::missing("operator Deployment", GapReason::Failed(e.to_string())),
    }
}

/// The Pods of `matched` (whose operators are `operators`, in the same order), and each Pod
/// with its operator's container; one list that fails makes the Pods a gap.
async fn operator_pods(
    client: &Client,
    matched: &[Deployment],
    operators: &[OperatorRef],
) -> (Evidence<Vec<Pod>>, Vec<(Pod, String)>) {
    let pods: Vec<Result<Vec<Pod>, kube::Error>> = join_all(matched.iter().map(|d| pods_of(client, d))).await;
    let mut by_operator: Vec<(Pod, String)> = Vec::new();
    let mut pod_error = None;
    for (result, op) in pods.into_iter().zip(operators) {
        match result {
            Ok(list) => by_operator.extend(list.into_iter().map(|p| (p, op.container.clone()))),
            Err(e) => pod_error = Some(e),
        }
    }
    let pods = match pod_error {
        Some(e) => evidence("operator Pods", Err(e)),
        None => Evidence::Present(by_operator.iter().map(|(p, _)| p.clone()).collect()),
    };
    (pods, by_operator)
}

/// The logs `wanted` of each Pod's operator container (`by_operator`), concurrently: a gap when
/// not wanted, when the Pods are unknown, when every read failed, or when the operators have
/// no Pods; none (a fact) when no operator serves the namespace.
async fn operator_logs(
    client: &Client,
    wanted: Logs,
    pods: &Evidence<Vec<Pod>>,
    by_operator: &[(Pod, String)],
    operators: &[OperatorRef],
) -> Evidence<Vec<LogSource>> {
    let pods = match (wanted, pods.get()) {
        (Logs::None, _) => {
            return Evidence::missing(
                "operator logs",
                GapReason::NotCollected("operator logs not needed for this answer".into()),
            );
        }
        (_, None) => {
            return Evidence::missing(
                "operator logs",
                GapReason::Failed("no operator Pods in evidence".into()),
            );
        }
        // No Deployment serves the namespace: there is no operator log to read (a fact, as a
        // bundle of it reads back: no Deployment, no log).
        (_, Some(_)) if operators.is_empty() => return Evidence::Present(Vec::new()),
        (_, Some(pods)) => pods,
    };
    let fetches = by_operator.iter().flat_map(|(pod, container)| {
        let restarted = pod
            .status
            .as_ref()
            .and_then(|s| s.container_statuses.as_ref())
            .is_some_and(|cs| cs.iter().any(|c| c.name == *container && c.restart_count > 0));
        let mut wants = vec![false];
        if wanted == Logs::WithPrevious && restarted {
            wants.push(true);
        }
        wants.into_iter().map(move |prev| pod_log(client, pod, container, prev))
    });
    let results = join_all(fetches).await;
    let mut sources = Vec::new();
    let mut failures = Vec::new();
    for result in results {
        match result {
            Ok(source) => sources.push(source),
            Err(e) => failures.push(e),
        }
    }
    if sources.is_empty() && !failures.is_empty() {
        Evidence::missing("operator logs", GapReason::Failed(failures.join("; ")))
    } else if pods.is_empty() && operators.iter().all(OperatorRef::scaled_to_zero) {
        // Scaled to zero: no Pod, no log, a fact (operator-not-running says it), not a gap.
        Evidence::Present(Vec::new())
    } else if pods.is_empty() {
        let names: Vec<String> = operators.iter().map(OperatorRef::display).collect();
        Evidence::missing(
            "operator logs",
            GapReason::Failed(format!("{} has no Pods: no logs to read", names.join(", "))),
        )
    } else {
        Evidence::Present(sources)
    }
}

/// With `--operator`: the other operator Deployments that serve `namespace` (as discovery finds
/// them; none when it cannot list them), each with its running Pods' current logs, read only to
/// tell whether another operator handled the object too
/// ([`super::OperatorEvidence::unchosen`]). Nothing of them is diagnosed or written to a bundle.
async fn unchosen(client: &Client, chosen: &[Deployment], namespace: Option<&str>) -> Vec<super::Unchosen> {
    let Some(namespace) = namespace else { return Vec::new() };
    let (Evidence::Present(found), _) = discover_at(client, Some(namespace)).await else {
        return Vec::new();
    };
    let same = |a: &Deployment, b: &Deployment| {
        a.metadata.namespace == b.metadata.namespace && a.metadata.name == b.metadata.name
    };
    let (serving, _) = split_serving(found, Some(namespace));
    let mut out = Vec::new();
    for d in serving.iter().filter(|d| !chosen.iter().any(|c| same(c, d))) {
        let Some(op) = recognise(d) else { continue };
        let Ok(pods) = pods_of(client, d).await else { continue };
        let fetched = join_all(pods.iter().map(|p| pod_log(client, p, &op.container, false))).await;
        out.push(super::Unchosen {
            operator: op,
            logs: fetched.into_iter().filter_map(Result::ok).collect(),
            handles: None,
        });
    }
    out
}

/// Gets what decides which replica of each operator handles: our Lease (`GET
/// coordination.k8s.io/v1 leases`), Kopf's peering object (`GET kopfpeerings` in each namespace
/// it serves, or `clusterkopfpeerings`, in `kopf.dev/v1` and the legacy `zalando.org/v1`). A 404
/// (no such object, or no peering CRD) leaves it out of the list; any other error is a gap.
async fn leadership(
    client: &Client,
    operators: &[OperatorRef],
    namespace: Option<&str>,
) -> (Evidence<Vec<Lease>>, Evidence<Vec<Value>>) {
    let mut leases: Vec<Lease> = Vec::new();
    let mut peerings = Vec::new();
    let mut lease_gap = None;
    let mut peering_gap = None;
    let mut styles: Vec<(Option<&OperatorRef>, Leadership)> = operators
        .iter()
        .flat_map(|op| op.leadership_styles().into_iter().map(move |style| (Some(op), style)))
        .collect();
    // The Lease `operate --namespace NS` elects on by default (a laptop's): asked by name in NS,
    // or with `-A` listed by name in every namespace below (one call).
    if let Some(ns) = namespace {
        styles.push((
            None,
            Leadership::Lease {
                namespace: ns.to_string(),
                name: crate::vocab::lease::DEFAULT_LEASE_NAME.to_string(),
            },
        ));
    }
    let mut asked: BTreeSet<(String, String)> = BTreeSet::new();
    for (op, style) in styles {
        match style {
            Leadership::Standalone | Leadership::Kopf(PeeringMode::Standalone) => {}
            Leadership::Lease { namespace, name } => {
                if !asked.insert((namespace.clone(), name.clone())) {
                    continue;
                }
                match Api::<Lease>::namespaced(client.clone(), &namespace)
                    .get_opt(&name)
                    .await
                {
                    Ok(found) => leases.extend(found),
                    Err(e) => lease_gap = Some(evidence::<Vec<Lease>>(super::LEASES, Err(e))),
                }
            }
            Leadership::Kopf(PeeringMode::Peering { name, clusterwide, .. }) => {
                let Some(op) = op else { continue };
                let scopes: Vec<Option<&str>> = match (&op.watches, clusterwide) {
                    (Some(namespaces), false) => namespaces.iter().map(|n| Some(n.as_str())).collect(),
                    _ => vec![None],
                };
                for group in PEERING_GROUPS {
                    for &namespace in &scopes {
                        let (kind, plural) = match namespace {
                            Some(_) => ("KopfPeering", "kopfpeerings"),
                            None => ("ClusterKopfPeering", "clusterkopfpeerings"),
                        };
                        let resource =
                            ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, "v1", kind), plural);
                        let api: Api<DynamicObject> = match namespace {
                            Some(ns) => Api::namespaced_with(client.clone(), ns, &resource),
                            None => Api::all_with(client.clone(), &resource),
                        };
                        match get_if_served(&api, &name).await {
                            Ok(Some(object)) => peerings.push(serde_json::to_value(object).expect("objects serialise")),
                            Ok(None) => {}
                            Err(e) => peering_gap = Some(evidence::<Vec<Value>>(super::PEERINGS, Err(e))),
                        }
                    }
                }
            }
        }
    }
    if namespace.is_none() {
        match default_leases_everywhere(client).await {
            Ok(found) => leases.extend(found.into_iter().filter(|l| {
                let key = (
                    l.metadata.namespace.clone().unwrap_or_default(),
                    l.metadata.name.clone().unwrap_or_default(),
                );
                !asked.contains(&key)
            })),
            Err(e) => lease_gap = Some(evidence::<Vec<Lease>>(super::LEASES, Err(e))),
        }
    }
    // Evidence no operator uses becomes "not collected" in `settle_leadership`.
    (
        lease_gap.unwrap_or(Evidence::Present(leases)),
        peering_gap.unwrap_or(Evidence::Present(peerings)),
    )
}

/// The Leases named as `operate`'s default ([`crate::vocab::lease::DEFAULT_LEASE_NAME`]) in every
/// namespace: one cluster-wide list with a `metadata.name` field selector. With `-A` a process
/// outside the cluster (a laptop `operate --namespace NS`) is known only by its Lease in NS; without
/// this list `status -A` named another operator for its objects than `status -n NS` did (the
/// fresh-user trial of issue 18: a cluster-wide Kopf operator of Backups instead of the laptop).
async fn default_leases_everywhere(client: &Client) -> Result<Vec<Lease>, kube::Error> {
    let selector = format!("metadata.name={}", crate::vocab::lease::DEFAULT_LEASE_NAME);
    let list = Api::<Lease>::all(client.clone())
        .list(&ListParams::default().fields(&selector))
        .await?;
    Ok(list.items)
}

/// Splits discovered Deployments into the operators that serve `namespace` (all with `None`,
/// i.e. `-A`), kept whole, and the summaries of the other operators (what each is and watches):
/// other operators' Pods and logs say nothing about the namespace, and may hold other teams'
/// data. Deployments that run no operator are dropped.
pub fn split_serving(
    deployments: Vec<Deployment>,
    namespace: Option<&str>,
) -> (Vec<Deployment>, Vec<super::operator::OperatorSummary>) {
    let mut kept = Vec::new();
    let mut others = Vec::new();
    for d in deployments {
        let Some(op) = recognise(&d) else { continue };
        if namespace.is_none_or(|ns| op.watches(ns)) {
            kept.push(d);
        } else {
            others.push(super::operator::OperatorSummary::of(&op));
        }
    }
    (kept, others)
}

/// A `--operator` that is not `NS/deployment/NAME`: `invalid --operator "op": expected ...`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid --operator {spec:?}: {reason}")]
pub struct OperatorSpecError {
    /// The value as given.
    pub spec: String,
    /// What is wrong with it ([`crate::names::operator_ref`]'s words).
    pub reason: String,
}

/// `NS/deployment/NAME` (also `NS/deploy/NAME`) → (NS, NAME).
///
/// Errors: any other shape, or a part that is not a Kubernetes name ([`OperatorSpecError`]).
pub fn parse_operator_spec(spec: &str) -> Result<(String, String), OperatorSpecError> {
    crate::names::operator_ref(spec).map_err(|reason| OperatorSpecError {
        spec: spec.to_string(),
        reason,
    })
}

/// Lists the Deployments an operator may be among: cluster-wide, else (when that is forbidden)
/// in `namespace`. Filter them with [`find_operators`].
pub async fn discover(client: &Client, namespace: Option<&str>) -> Evidence<Vec<Deployment>> {
    discover_at(client, namespace).await.0
}

/// [`discover`], with the API server's clock (`Date`) of the cluster-wide list when it answered.
pub async fn discover_at(
    client: &Client,
    namespace: Option<&str>,
) -> (Evidence<Vec<Deployment>>, Option<DateTime<Utc>>) {
    // Operators usually live in another namespace than the objects: try cluster-wide first,
    // then the objects' namespace.
    let found = match list_all::<Deployment>(client, &url_for::<Deployment>(None), ListParams::default()).await {
        Ok((items, date)) => return (Evidence::Present(items), date),
        Err(e) => e,
    };
    let evidence = match found {
        kube::Error::Api(status) if status.code == 403 => match namespace {
            Some(ns) => match Api::<Deployment>::namespaced(client.clone(), ns)
                .list(&ListParams::default())
                .await
            {
                // None here, and the rest of the cluster unreadable: unknown, not absent.
                Ok(list) if find_operators(&list.items).is_empty() => Evidence::missing(
                    "operator Deployment",
                    GapReason::Forbidden(format!(
                        "none in {ns}, and Deployments cannot be listed cluster-wide: {}; name it with --operator NS/deployment/NAME",
                        status.message
                    )),
                ),
                result => evidence("operator Deployment", result.map(|l| l.items)),
            },
            None => Evidence::missing("operator Deployment", GapReason::Forbidden(status.message.clone())),
        },
        err => Evidence::missing(
            "operator Deployment",
            GapReason::Failed(crate::error::describe_kube_error(&err)),
        ),
    };
    (evidence, None)
}

/// The Deployment's `matchLabels` as a label selector (`app=op,tier=ctl`); empty when it has none.
pub fn label_selector(deployment: &Deployment) -> String {
    deployment
        .spec
        .as_ref()
        .and_then(|s| s.selector.match_labels.as_ref())
        .map(|m| m.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(","))
        .unwrap_or_default()
}

async fn pods_of(client: &Client, deployment: &Deployment) -> Result<Vec<Pod>, kube::Error> {
    let ns = deployment.metadata.namespace.clone().unwrap_or_default();
    let labels = label_selector(deployment);
    let params = if labels.is_empty() {
        ListParams::default()
    } else {
        ListParams::default().labels(&labels)
    };
    Api::<Pod>::namespaced(client.clone(), &ns)
        .list(&params)
        .await
        .map(|l| l.items)
}

async fn pod_log(client: &Client, pod: &Pod, container: &str, previous: bool) -> Result<LogSource, String> {
    let name = pod.metadata.name.clone().unwrap_or_default();
    let ns = pod.metadata.namespace.clone().unwrap_or_default();
    let params = LogParams {
        container: Some(container.to_string()),
        timestamps: true,
        previous,
        since_seconds: Some(LOG_SINCE.as_secs() as i64),
        tail_lines: Some(LOG_TAIL_LINES),
        limit_bytes: Some(LOG_LIMIT_BYTES),
        ..Default::default()
    };
    Api::<Pod>::namespaced(client.clone(), &ns)
        .logs(&name, &params)
        .await
        .map(|text| LogSource {
            pod: name.clone(),
            container: container.to_string(),
            previous,
            text,
        })
        .map_err(|e| {
            format!(
                "logs of {ns}/{name} container {container}{}: {e}",
                if previous { " (previous)" } else { "" }
            )
        })
}

/// The ConfigMaps a Deployment's containers read their env from (`env[].valueFrom.configMapKeyRef`,
/// `envFrom[].configMapRef`), as (namespace, name): they decide `os.environ` conditions of a
/// Kopf operator's source ([`crate::kopf::source::Env`]). Secrets are never read.
fn env_configmaps(d: &k8s_openapi::api::apps::v1::Deployment) -> Vec<(String, String)> {
    let ns = d.metadata.namespace.clone().unwrap_or_default();
    let Some(spec) = d.spec.as_ref().and_then(|s| s.template.spec.as_ref()) else {
        return Vec::new();
    };
    spec.containers
        .iter()
        .chain(spec.init_containers.iter().flatten())
        .flat_map(|c| {
            let from_env = c.env.iter().flatten().filter_map(|e| {
                e.value_from
                    .as_ref()?
                    .config_map_key_ref
                    .as_ref()
                    .map(|r| r.name.clone())
            });
            let from_env_from = c
                .env_from
                .iter()
                .flatten()
                .filter_map(|e| e.config_map_ref.as_ref().map(|r| r.name.clone()));
            from_env.chain(from_env_from).collect::<Vec<_>>()
        })
        .map(|name| (ns.clone(), name))
        .collect()
}

/// The rest of a `collect`: the CRD, mounted ConfigMaps (never Secrets), RBAC objects, and
/// SubjectAccessReviews for the operator's ServiceAccount on what it needs in each namespace
/// ([`operator_needs`]) and, for ours with leader election, on its Lease
/// ([`crate::vocab::lease::LEASE_VERBS`], by name where RBAC can limit it).
pub async fn add_everything(client: &Client, snapshot: &mut Snapshot) {
    let namespaces = snapshot
        .microservices
        .get()
        .into_iter()
        .flatten()
        .filter_map(|o| o.metadata.namespace.clone())
        .collect();
    add_everything_for(client, snapshot, namespaces).await
}

/// [`add_everything`] for Microservices in `object_namespaces` (besides the snapshot's
/// namespace): `collect` writes the objects to the bundle as they arrive and keeps only their
/// namespaces.
pub async fn add_everything_for(client: &Client, snapshot: &mut Snapshot, object_namespaces: BTreeSet<String>) {
    snapshot.crd = evidence(
        "CRD",
        Api::<CustomResourceDefinition>::all(client.clone())
            .get(&snapshot.resource.qualified())
            .await,
    );
    let deployments = snapshot
        .operator
        .deployments
        .get()
        .map(Vec::as_slice)
        .unwrap_or_default();
    // Read with the operator already ([`add_operator`]), unless it was not asked for.
    if snapshot
        .operator
        .configmaps
        .gap()
        .is_some_and(|g| matches!(g.reason, GapReason::NotCollected(_)))
    {
        snapshot.operator.configmaps = operator_configmaps(client, deployments).await;
    }
    // With the ConfigMaps read: the `$(VAR)`s of the command lines that come from them.
    let operators: Vec<OperatorRef> = snapshot.operator.operators();

    let ns = snapshot.namespace.clone();
    let (roles, role_bindings, cluster_roles, cluster_role_bindings) = futures::join!(
        list_scoped::<Role>(client, ns.as_deref()),
        list_scoped::<RoleBinding>(client, ns.as_deref()),
        async {
            evidence(
                "ClusterRoles",
                Api::<ClusterRole>::all(client.clone())
                    .list(&ListParams::default())
                    .await
                    .map(|l| l.items),
            )
        },
        async {
            evidence(
                "ClusterRoleBindings",
                Api::<ClusterRoleBinding>::all(client.clone())
                    .list(&ListParams::default())
                    .await
                    .map(|l| l.items),
            )
        },
    );
    snapshot.rbac.roles = roles;
    snapshot.rbac.role_bindings = role_bindings;
    snapshot.rbac.cluster_roles = cluster_roles;
    snapshot.rbac.cluster_role_bindings = cluster_role_bindings;

    let object_namespaces: BTreeSet<String> = object_namespaces.into_iter().chain(ns).collect();
    let resource = snapshot.resource.clone();
    snapshot.rbac.access_reviews = access_reviews(client, &operators, &object_namespaces, &resource).await;
}

/// The ConfigMaps the operator Pods mount (Kopf sources), and those their env reads (never
/// Secrets). A missing ConfigMap that only the env reads is no gap: the reference may be
/// `optional`, and its values stay unknown to the analysis, which says so.
async fn operator_configmaps(client: &Client, deployments: &[Deployment]) -> Evidence<Vec<ConfigMap>> {
    let mounted: BTreeSet<(String, String)> = deployments
        .iter()
        .flat_map(|d| {
            let ns = d.metadata.namespace.clone().unwrap_or_default();
            d.spec
                .as_ref()
                .and_then(|s| s.template.spec.as_ref())
                .and_then(|s| s.volumes.clone())
                .unwrap_or_default()
                .into_iter()
                .filter_map(move |v| v.config_map.map(|c| (ns.clone(), c.name)))
        })
        .collect();
    let configmap_names: BTreeSet<(String, String)> = mounted
        .iter()
        .cloned()
        .chain(deployments.iter().flat_map(env_configmaps))
        .collect();
    let env_only: BTreeSet<(String, String)> = configmap_names.difference(&mounted).cloned().collect();
    let mut configmaps = Vec::new();
    let mut cm_gap = None;
    for (ns, name) in configmap_names {
        match Api::<ConfigMap>::namespaced(client.clone(), &ns).get(&name).await {
            Ok(cm) => configmaps.push(cm),
            Err(kube::Error::Api(status)) if status.code == 404 && env_only.contains(&(ns.clone(), name.clone())) => {}
            Err(e) => cm_gap = Some(evidence::<Vec<ConfigMap>>("operator ConfigMaps", Err(e))),
        }
    }
    cm_gap.unwrap_or(Evidence::Present(configmaps))
}

/// One SubjectAccessReview to ask: (namespace, group, resource, verb, name).
type Ask = (String, String, String, &'static str, Option<String>);

/// SubjectAccessReviews for each operator's ServiceAccount: what it needs in each of
/// `object_namespaces` ([`operator_needs`]), and for ours with leader election its Lease
/// ([`LEASE_VERBS`]). The first review that fails makes them all a gap.
async fn access_reviews(
    client: &Client,
    operators: &[OperatorRef],
    object_namespaces: &BTreeSet<String>,
    resource: &crate::resource::identity::ResourceId,
) -> Evidence<Vec<SubjectAccessReview>> {
    let mut reviews = Vec::new();
    let mut review_gap = None;
    for op in operators {
        for (target, group, plural, verb, name) in asks_of(op, object_namespaces, resource) {
            match review_for(client, op, &target, &group, &plural, verb, name.as_deref()).await {
                Ok(r) => reviews.push(r),
                Err(e) => {
                    review_gap = Some(evidence::<Vec<SubjectAccessReview>>("access reviews", Err(e)));
                    break;
                }
            }
        }
    }
    review_gap.unwrap_or(Evidence::Present(reviews))
}

/// What [`access_reviews`] asks about `op`, in order: [`operator_needs`] in each namespace, then
/// [`LEASE_VERBS`] on each Lease it elects on for them (by name where RBAC can limit it).
fn asks_of(
    op: &OperatorRef,
    object_namespaces: &BTreeSet<String>,
    resource: &crate::resource::identity::ResourceId,
) -> Vec<Ask> {
    let mut asks: Vec<Ask> = Vec::new();
    for target in object_namespaces {
        for (group, plural, verb) in operator_needs(resource) {
            asks.push((target.clone(), group, plural, verb, None));
        }
    }
    let mut leases: Vec<(String, String)> = object_namespaces
        .iter()
        .filter_map(|target| match op.leadership_in(target) {
            Leadership::Lease { namespace, name } => Some((namespace, name)),
            _ => None,
        })
        .collect();
    leases.sort();
    leases.dedup();
    for (namespace, name) in leases {
        for (verb, named) in LEASE_VERBS {
            asks.push((
                namespace.clone(),
                LEASE_GROUP.to_string(),
                "leases".to_string(),
                verb,
                named.then(|| name.clone()),
            ));
        }
    }
    asks
}

/// What an operator of `resource` (the Microservice, or `--resource`'s) may need, as (group,
/// resource, verb): list, watch and patch of its objects (Kopf patches the object itself: its
/// annotations, progress and last-handled-configuration) and of their status; Kopf posts core
/// events; ours and kube-rs's Recorder post events.k8s.io events (create, and patch for series).
pub fn operator_needs(resource: &crate::resource::identity::ResourceId) -> Vec<(String, String, &'static str)> {
    let (group, plural) = (resource.group.clone(), resource.plural.clone());
    vec![
        (group.clone(), plural.clone(), "list"),
        (group.clone(), plural.clone(), "watch"),
        (group.clone(), plural.clone(), "patch"),
        (group, format!("{plural}/status"), "patch"),
        (String::new(), "events".into(), "create"),
        ("events.k8s.io".into(), "events".into(), "create"),
        ("events.k8s.io".into(), "events".into(), "patch"),
    ]
}

async fn review_for(
    client: &Client,
    op: &OperatorRef,
    namespace: &str,
    group: &str,
    resource: &str,
    verb: &str,
    name: Option<&str>,
) -> Result<SubjectAccessReview, kube::Error> {
    let (resource, subresource) = match resource.split_once('/') {
        Some((r, s)) => (r, Some(s.to_string())),
        None => (resource, None),
    };
    let review = SubjectAccessReview {
        spec: SubjectAccessReviewSpec {
            user: Some(format!("system:serviceaccount:{}:{}", op.namespace, op.service_account)),
            groups: Some(vec![
                "system:serviceaccounts".into(),
                format!("system:serviceaccounts:{}", op.namespace),
                "system:authenticated".into(),
            ]),
            resource_attributes: Some(ResourceAttributes {
                namespace: Some(namespace.to_string()),
                group: Some(group.to_string()),
                resource: Some(resource.to_string()),
                subresource,
                verb: Some(verb.to_string()),
                name: name.map(str::to_string),
                ..Default::default()
            }),
            ..Default::default()
        },
        ..Default::default()
    };
    Api::<SubjectAccessReview>::all(client.clone())
        .create(&PostParams::default(), &review)
        .await
}

async fn list_scoped<K>(client: &Client, namespace: Option<&str>) -> Evidence<Vec<K>>
where
    K: Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
        + Clone
        + DeserializeOwned
        + std::fmt::Debug,
{
    let api: Api<K> = match namespace {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    };
    evidence(&K::kind(&()), api.list(&ListParams::default()).await.map(|l| l.items))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fresh-user trial of issue 18 (P1): with `-A`, a laptop `operate --namespace
    /// team-foxtrot` is known by its Lease there alone; one cluster-wide list by name finds it
    /// (never a GET per namespace), and a refused list is a gap, never "no Lease".
    #[tokio::test]
    async fn all_namespaces_finds_a_laptops_lease_with_one_list_by_name() {
        let lease = serde_json::json!({"kind": "LeaseList", "apiVersion": "coordination.k8s.io/v1", "metadata": {},
            "items": [{"metadata": {"name": "microservice-operator", "namespace": "team-foxtrot"},
                "spec": {"holderIdentity": "vm_6d763f5860d059bc", "leaseDurationSeconds": 15}}]});
        let (client, seen) = crate::client::fake::fake_api(move |path, query| match path {
            "/apis/coordination.k8s.io/v1/leases"
                if query.contains("fieldSelector=metadata.name%3Dmicroservice-operator") =>
            {
                (200, lease.to_string())
            }
            _ => (404, String::new()),
        });
        let (leases, _) = leadership(&client, &[], None).await;
        let leases = leases.get().expect("listed");
        assert_eq!(leases.len(), 1);
        assert_eq!(leases[0].metadata.namespace.as_deref(), Some("team-foxtrot"));
        let paths = seen.lock().unwrap().clone();
        assert_eq!(paths.len(), 1, "one call: {paths:?}");

        let (client, _) = crate::client::fake::fake_api(|_, _| {
            (403, r#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"leases.coordination.k8s.io is forbidden","reason":"Forbidden","code":403}"#.to_string())
        });
        let (leases, _) = leadership(&client, &[], None).await;
        assert!(leases.get().is_none(), "a refused list is a gap");
        // With -n the Lease is asked by name in that namespace only: no list.
        let (client, seen) = crate::client::fake::fake_api(|_, _| (404, String::new()));
        let _ = leadership(&client, &[], Some("team-foxtrot")).await;
        let paths = seen.lock().unwrap().join("\n");
        assert!(!paths.contains("/apis/coordination.k8s.io/v1/leases?"), "{paths}");
    }

    #[tokio::test]
    async fn leadership_evidence_tolerates_unserved_groups_and_missing_objects() {
        let responses = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/apiserver-responses/");
        let unserved = std::fs::read_to_string(format!("{responses}404-unserved-api-group.txt")).unwrap();
        let unserved = unserved.lines().next().unwrap().to_string();
        let not_found = std::fs::read_to_string(format!("{responses}404-microservice-not-found.txt")).unwrap();
        let not_found = not_found.split("\nHTTP").next().unwrap().to_string();
        let peering = serde_json::json!({"apiVersion": "kopf.dev/v1", "kind": "KopfPeering",
            "metadata": {"name": "default", "namespace": "todo"},
            "status": {"op-7f67-x9cr2": {"lastseen": "2026-11-29T20:39:58.102521+00:00", "lifetime": 60, "priority": 0}}});
        let (client, seen) = crate::client::fake::fake_api(move |path, _| match path {
            "/apis/kopf.dev/v1/namespaces/todo/kopfpeerings/default" => (200, peering.to_string()),
            "/apis/coordination.k8s.io/v1/namespaces/todo/leases/microservice-operator" => (404, not_found.clone()),
            "/apis/coordination.k8s.io/v1/leases" => (
                200,
                r#"{"kind":"LeaseList","apiVersion":"coordination.k8s.io/v1","metadata":{},"items":[]}"#.to_string(),
            ),
            _ => (404, unserved.clone()),
        });
        let operator = |command: serde_json::Value| {
            recognise(
                &serde_json::from_value(serde_json::json!({
                    "metadata": {"name": "microservice-operator", "namespace": "ops"},
                    "spec": {"selector": {}, "template": {"spec": {"containers": [{"name": "operator", "image": "x", "command": command}]}}}
                }))
                .unwrap(),
            )
            .unwrap()
        };
        let ops = [
            operator(serde_json::json!(["kopf", "run", "--namespace=todo", "op.py"])),
            operator(serde_json::json!(["kubectl-microservice", "operate", "-n", "todo"])),
        ];
        let (leases, peerings) = leadership(&client, &ops, None).await;
        assert_eq!(
            leases.get().map(Vec::len),
            Some(0),
            "a missing Lease is evidence, not a gap"
        );
        let peerings = peerings.get().expect("the unserved zalando.org group is not a gap");
        assert_eq!(peerings.len(), 1);
        assert_eq!(peerings[0]["kind"], "KopfPeering");
        let paths = seen.lock().unwrap().join("\n");
        assert!(
            paths.contains("/apis/zalando.org/v1/namespaces/todo/kopfpeerings/default"),
            "{paths}"
        );
    }

    #[tokio::test]
    async fn operator_logs_are_the_newest_lines_of_the_window() {
        // Answers as the kubelet does: with tailLines the newest lines, else from the window's start.
        let (client, seen) = crate::client::fake::fake_api(|_, query| {
            if query.contains("tailLines=") {
                (200, "2026-11-29T17:00:09.000000000Z newest\n".into())
            } else {
                (200, "2026-11-28T17:00:00.000000000Z oldest\n".into())
            }
        });
        let pod: Pod =
            serde_json::from_value(serde_json::json!({"metadata": {"name": "op-1", "namespace": "ops"}})).unwrap();
        let source = pod_log(&client, &pod, "operator", false).await.unwrap();
        assert!(source.text.ends_with("newest\n"), "{}", source.text);
        let query = seen.lock().unwrap().join("\n");
        assert!(
            query.contains("sinceSeconds=86400") && query.contains("timestamps=true"),
            "{query}"
        );
    }

    /// Only operators that serve the namespace are kept whole; the others are what exists and
    /// what each watches, nothing else (no Pod, log or RBAC of theirs is read or diagnosed).
    #[test]
    fn only_operators_serving_the_namespace_are_kept() {
        let operator = |ns: &str, watches: &str| -> Deployment {
            serde_json::from_value(serde_json::json!({
                "metadata": {"name": "microservice-operator", "namespace": ns},
                "spec": {"selector": {}, "template": {"spec": {"containers": [{"name": "operator", "image": "x",
                    "command": ["kubectl-microservice", "operate", "--namespace", watches]}]}}}
            }))
            .unwrap()
        };
        let nginx: Deployment = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web", "namespace": "todo"},
            "spec": {"selector": {}, "template": {"spec": {"containers": [{"name": "c", "image": "nginx"}]}}}
        }))
        .unwrap();
        let found = vec![
            operator("ops", "todo"),
            operator("team-b", "shop"),
            operator("team-c", "shop"),
            nginx,
        ];
        let names =
            |ds: Vec<Deployment>| -> Vec<String> { ds.into_iter().filter_map(|d| d.metadata.namespace).collect() };
        let (kept, others) = split_serving(found.clone(), Some("todo"));
        assert_eq!(names(kept), ["ops"]);
        assert_eq!(
            others.iter().map(|o| o.operator.as_str()).collect::<Vec<_>>(),
            [
                "team-b/deployment/microservice-operator",
                "team-c/deployment/microservice-operator"
            ]
        );
        let (kept, others) = split_serving(found.clone(), Some("shop"));
        assert_eq!((names(kept), others.len()), (vec!["team-b".into(), "team-c".into()], 1));
        let (kept, others) = split_serving(found.clone(), Some("nobody"));
        assert_eq!((kept.len(), others.len()), (0, 3), "none serves it: none kept");
        assert_eq!(split_serving(found, None).0.len(), 3, "-A: every operator serves");
    }

    #[test]
    fn operator_spec_syntax() {
        assert_eq!(
            parse_operator_spec("ops/deployment/op"),
            Ok(("ops".into(), "op".into()))
        );
        assert_eq!(parse_operator_spec("ops/deploy/op"), Ok(("ops".into(), "op".into())));
        let err = parse_operator_spec("op").unwrap_err().to_string();
        assert!(err.contains("\"op\"") && err.contains("NAMESPACE/deployment/NAME"));
    }

    #[test]
    fn notes_name_the_gap() {
        let notes = access_notes(
            &CallerAccess {
                list_microservices: true,
                list_events: false,
            },
            "in todo",
            NotesFor::StatusTable,
        );
        assert_eq!(
            notes,
            ["you cannot list events in todo: WARNINGS will show ? and event evidence is a gap"]
        );
    }

    /// Each note speaks of what its command prints (issue 14 item 11: `explain-events` noted
    /// that "WARNINGS will show ?", a column of `status`'s table).
    #[test]
    fn notes_speak_of_what_the_command_prints() {
        let none = CallerAccess {
            list_microservices: false,
            list_events: false,
        };
        let findings = access_notes(&none, "in todo", NotesFor::Findings);
        assert_eq!(
            findings[1..],
            [
                "you cannot list events in todo: the findings cannot see the object's events (a gap): whether Warning events were posted is not known"
            ]
        );
        let object = access_notes(&none, "in todo", NotesFor::StatusObject);
        assert_eq!(
            object[1..],
            ["you cannot list events in todo: its Warnings line cannot count them, and event evidence is a gap"]
        );
        for notes in [findings, object] {
            assert!(notes.iter().all(|n| !n.contains("WARNINGS")), "{notes:?}");
        }
        assert_eq!(access_notes(&none, "in todo", NotesFor::StatusTable).len(), 2);
    }
}
