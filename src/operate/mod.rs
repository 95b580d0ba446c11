//! `kubectl microservice operate`: the controller for Microservice objects, a Rust port of a
//! Kopf operator whose one handler `accept` records the spec it received in status.
//!
//! - [`cause`]: create / update / resume, and the Kopf takeover (pure);
//! - [`cache`]: what the controller keeps of each watched object (pure);
//! - [`validate`]: spec validation of leniently read objects (pure);
//! - [`status`]: the status to write, and whether a write is needed (pure);
//! - [`reconcile`]: one pass over one object (API writes, events, log lines);
//! - [`events`]: the bounded event queues (one per type, so Warnings are never shed for
//!   Normals) and their concurrent posters;
//! - [`logging`]: the text and json log line formats;
//! - [`leader`]: leader election on a Lease (only the leader handles objects);
//! - [`listwatch`]: the list (from the watch cache, decoded as it arrives) and watch feeding the
//!   cache; [`watching`]: their backoff and log lines;
//! - [`health`], [`metrics`], [`endpoint`]: `/healthz`, `/readyz`, `/metrics` (`--health-listen`).
//!
//! Lifecycle: every replica lists and watches (so a standby is ready and its cache warm); objects
//! are handled only in a leadership term ([`Context::begin_term`]). A new term forgets what was
//! handled before and re-queues every cached object, so each is resumed once per term; a relist
//! within a term finds every unchanged object already handled and is silent. On SIGTERM: no new
//! pass starts, passes in flight and queued events get up to [`SHUTDOWN_WRITES`] in total,
//! pending retries are dropped, the Lease is released, and the process exits 0.

pub mod cache;
pub mod cause;
pub mod endpoint;
pub mod events;
pub mod health;
pub mod leader;
pub mod listwatch;
pub mod logging;
pub mod metrics;
pub mod reconcile;
pub mod status;
pub mod validate;
pub mod watching;

#[cfg(test)]
mod mock_tests;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use futures::future::{BoxFuture, Shared};
use futures::{FutureExt, Stream, StreamExt};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::Api;
use kube::client::ClientBuilder;
use kube::runtime::controller::{self, Controller};
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, ResourceExt};
use tokio::net::TcpListener;
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;

use crate::cli::{GlobalArgs, OperateArgs};
use crate::client::{self, Usage};
use crate::error::AppError;
use crate::resource::{CRD_NAME, VERSION};
use crate::vocab::lease::LeasePlan;
use cache::CachedMicroservice;
use health::{Health, WATCH_TIMEOUT, WatchProbeLayer};
use leader::{ElectionConfig, Elector, Role};
use reconcile::{Context, error_policy, reconcile};

/// One watched scope: the API for Microservices there and its label for logs (a namespace, or
/// "all namespaces").
type WatchedApi = (Api<CachedMicroservice>, String);

/// How often entries of deleted objects are dropped from the controller's memory.
const FORGET_INTERVAL: Duration = Duration::from_secs(300);
/// On SIGTERM, how long passes in flight and queued events may still write, in total.
pub const SHUTDOWN_WRITES: Duration = Duration::from_secs(4);
/// On SIGTERM, how long releasing the Lease may take.
const RELEASE_TIMEOUT: Duration = Duration::from_secs(3);

/// Which namespaces to watch: all, or a list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// `-A`: one cluster-wide watch.
    AllNamespaces,
    /// `-n NS` (repeatable): one watch per namespace.
    Namespaces(Vec<String>),
}

impl Scope {
    /// From the global flags; no `-n`/`-A` means the kubeconfig context's namespace (in a Pod:
    /// the service account's namespace), as kubectl does.
    ///
    /// `-A` beats `-n`, as in kubectl ("Namespace in current context is ignored even if
    /// specified with --namespace").
    pub fn from_flags(global: &GlobalArgs, default_namespace: &str) -> Self {
        match (global.all_namespaces, global.namespaces.is_empty()) {
            (true, _) => Scope::AllNamespaces,
            (false, true) => Scope::Namespaces(vec![default_namespace.to_string()]),
            (false, false) => {
                let mut seen = HashSet::new();
                Scope::Namespaces(
                    global
                        .namespaces
                        .iter()
                        .filter(|ns| seen.insert(ns.as_str()))
                        .cloned()
                        .collect(),
                )
            }
        }
    }

    /// How many watches run: one for all namespaces, else one per namespace.
    fn watch_count(&self) -> usize {
        match self {
            Scope::AllNamespaces => 1,
            Scope::Namespaces(list) => list.len(),
        }
    }

    /// The Leases that govern this scope (`--lease-namespace`, `--lease-name`;
    /// [`crate::vocab::lease::plan_leases`]).
    fn plan_leases(&self, args: &OperateArgs, default_namespace: &str) -> Vec<LeasePlan> {
        let watches = match self {
            Scope::AllNamespaces => None,
            Scope::Namespaces(list) => Some(list.as_slice()),
        };
        crate::vocab::lease::plan_leases(
            watches,
            args.lease_namespace.as_deref(),
            args.lease_name.as_deref(),
            default_namespace,
        )
    }

    /// The lanes to run: one per Lease of `leases` over the watches it governs (one Lease:
    /// every watch), or one lane without a Lease (`--standalone`).
    fn lanes(&self, client: &Client, leases: Option<Vec<LeasePlan>>) -> Vec<Lane> {
        let watched: Vec<WatchedApi> = match self {
            Scope::AllNamespaces => vec![(Api::all(client.clone()), "all namespaces".to_string())],
            Scope::Namespaces(list) => list
                .iter()
                .map(|ns| (Api::namespaced(client.clone(), ns), ns.clone()))
                .collect(),
        };
        match leases {
            None => vec![(None, watched)],
            Some(plans) if plans.len() == 1 => plans.into_iter().map(|plan| (Some(plan), watched.clone())).collect(),
            Some(plans) => plans
                .into_iter()
                .map(|plan| {
                    let apis = watched
                        .iter()
                        .filter(|(_, label)| plan.governs(label))
                        .cloned()
                        .collect();
                    (Some(plan), apis)
                })
                .collect(),
        }
    }

    fn describe(&self) -> String {
        match self {
            Scope::AllNamespaces => "all namespaces".into(),
            Scope::Namespaces(list) => list.join(","),
        }
    }
}

/// Runs the controller until SIGTERM or SIGINT. Exit 0 on a signal; exit 1 when the CRD has no
/// status subresource; exit 3 when the cluster cannot be reached, the CRD is missing, or
/// `--health-listen` cannot be bound.
pub async fn run(global: &GlobalArgs, args: &OperateArgs) -> Result<(), AppError> {
    logging::init(args.log_format);
    let connection = global.connection();
    let config = client::config(&connection, Usage::Controller).await?;
    let scope = Scope::from_flags(global, &config.default_namespace);
    let health = Arc::new(Health::new(WATCH_TIMEOUT, scope.watch_count()));
    let client = observed_client(&config, &health)?;
    if !args.skip_crd_check {
        check_crd(&client, |err| client::unreachable(&connection, &config, err)).await?;
    }
    let listener = match args.health_listen {
        Some(addr) => Some(endpoint::bind(addr).await?),
        None => None,
    };
    let reporter = events::Reporter::from_env();
    let leases = (!args.standalone).then(|| scope.plan_leases(args, &config.default_namespace));
    let identity = leader::identity(&reporter.instance);
    log_started(&scope, args, leases.as_deref());

    let (sink, poster) = events::channel(client.clone(), reporter, args.events);
    let (drain, drained) = oneshot::channel::<()>();
    let poster = tokio::spawn(poster.run_until(drained));
    let base = Context::new(client.clone(), sink, args.max_concurrent.into()).with_health(health.clone());
    let endpoint = listener.map(|listener| serve_endpoint(listener, health.clone(), base.metrics.clone()));
    let shutdown = shutdown_signal().shared();
    let lanes = Lanes::start(
        scope.lanes(&client, leases),
        &base,
        &identity,
        args.max_concurrent,
        shutdown.clone(),
    );
    let (contexts, electors) = lanes.run_until(shutdown).await;
    tracing::info!("Signal received. Operator is stopping.");
    Shutdown {
        contexts,
        drain,
        poster,
        electors,
        endpoint,
    }
    .run()
    .await;
    Ok(())
}

/// The client of `config`, its requests observed by `health`'s watch probe.
fn observed_client(config: &kube::Config, health: &Arc<Health>) -> Result<Client, AppError> {
    let builder = ClientBuilder::try_from(config.clone()).map_err(|e| AppError::Config {
        message: format!("cannot build a client for {}: {e}", config.cluster_url),
        user_input: false,
    })?;
    Ok(builder.with_layer(&WatchProbeLayer::new(health.clone())).build())
}

/// The `Operator started` line: version, what is watched, events, concurrency, leader election.
fn log_started(scope: &Scope, args: &OperateArgs, leases: Option<&[LeasePlan]>) {
    let leader_election = match leases {
        Some(plans) => format!(
            "lease {}",
            plans.iter().map(LeasePlan::lease_ref).collect::<Vec<_>>().join(",")
        ),
        None => "off (--standalone)".into(),
    };
    tracing::info!(
        version = crate::VERSION_LINE,
        namespaces = scope.describe().as_str(),
        events = args.events.as_arg(),
        max_concurrent = args.max_concurrent,
        leader_election = leader_election.as_str(),
        "Operator started"
    );
}

/// Serves `/healthz`, `/readyz` and `/metrics` on `listener`, on a task.
fn serve_endpoint(listener: TcpListener, health: Arc<Health>, metrics: Arc<metrics::Metrics>) -> JoinHandle<()> {
    if let Ok(addr) = listener.local_addr() {
        tracing::info!(
            address = addr.to_string().as_str(),
            "Serving /healthz, /readyz and /metrics"
        );
    }
    tokio::spawn(endpoint::serve(listener, health, metrics))
}

/// One lane per Lease (or one for `--standalone`): the Lease, if any, and the watches of the
/// namespaces it governs.
type Lane = (Option<LeasePlan>, Vec<WatchedApi>);

/// One Lease's candidacy: the sender that makes its elector release the Lease, and its task.
pub(crate) type Candidacy = (oneshot::Sender<()>, JoinHandle<()>);

/// The running lanes: each its own leadership term and memory of what was handled
/// ([`Context::sibling`]), its elector, its controllers and the task that forgets deleted objects.
struct Lanes {
    contexts: Vec<Arc<Context>>,
    electors: Vec<Candidacy>,
    stores: Vec<BoxFuture<'static, ()>>,
    runs: Vec<BoxFuture<'static, ()>>,
}

impl Lanes {
    /// Starts every lane: an elector per Lease (a lane without one leads at once, in term 1) and
    /// a controller per watch, each stopping on `shutdown`.
    fn start(
        lanes: Vec<Lane>,
        base: &Context,
        identity: &str,
        concurrency: u16,
        shutdown: Shared<impl Future<Output = ()> + Send + 'static>,
    ) -> Lanes {
        let mut started = Lanes {
            contexts: Vec::new(),
            electors: Vec::new(),
            stores: Vec::new(),
            runs: Vec::new(),
        };
        for (plan, apis) in lanes {
            let ctx = Arc::new(base.sibling());
            let (terms, term_starts) = watch::channel(0u64);
            match plan {
                None => {
                    ctx.begin_term(1);
                    ctx.metrics.set_leader(true);
                }
                Some(plan) => started.electors.push(candidacy(&plan, identity, &ctx, terms)),
            }
            let mut lane_stores = Vec::new();
            for (api, label) in apis {
                let controller = controller_for(api, label, ctx.clone(), concurrency, term_starts.clone())
                    .graceful_shutdown_on(shutdown.clone());
                lane_stores.push(controller.store());
                started.runs.push(
                    controller
                        .run(reconcile, error_policy, ctx.clone())
                        .for_each(log_controller_result)
                        .boxed(),
                );
            }
            started.stores.push(forget_deleted(ctx.clone(), lane_stores).boxed());
            started.contexts.push(ctx);
        }
        started
    }

    /// Runs until `shutdown` (or every controller ended); returns what [`Shutdown`] stops.
    async fn run_until(self, shutdown: impl Future<Output = ()>) -> (Vec<Arc<Context>>, Vec<Candidacy>) {
        let mut runs = std::pin::pin!(futures::future::join_all(self.runs));
        tokio::select! {
            _ = &mut runs => {}
            _ = futures::future::select_all(self.stores) => {}
            _ = shutdown => {}
        }
        (self.contexts, self.electors)
    }
}

/// Runs for `plan`'s Lease on a task, `ctx` following its terms (not leading until then).
fn candidacy(plan: &LeasePlan, identity: &str, ctx: &Arc<Context>, terms: watch::Sender<u64>) -> Candidacy {
    ctx.end_term();
    let client = ctx.client.clone();
    let (candidate, roles) = Elector::new(client, ElectionConfig::for_plan(plan, identity.to_string()));
    let (release, released) = oneshot::channel::<()>();
    let task = tokio::spawn(candidate.run(released));
    tokio::spawn(follow_leadership(roles, ctx.clone(), terms));
    (release, task)
}

/// What a signal stops, in order: no new pass; passes in flight and queued events get
/// [`SHUTDOWN_WRITES`] in total; then every Lease held is released (at most [`RELEASE_TIMEOUT`]);
/// the endpoint last.
pub(crate) struct Shutdown {
    /// Every lane's context.
    pub contexts: Vec<Arc<Context>>,
    /// Tells the event poster to post what is queued, then end.
    pub drain: oneshot::Sender<()>,
    /// The event poster's task.
    pub poster: JoinHandle<()>,
    /// Every Lease's candidacy.
    pub electors: Vec<Candidacy>,
    /// The `--health-listen` endpoint's task.
    pub endpoint: Option<JoinHandle<()>>,
}

impl Shutdown {
    /// Stops everything (the type's docs).
    pub async fn run(self) {
        let deadline = tokio::time::Instant::now() + SHUTDOWN_WRITES;
        futures::future::join_all(self.contexts.iter().map(|ctx| finish_passes(ctx, SHUTDOWN_WRITES))).await;
        let _ = self.drain.send(());
        if tokio::time::timeout_at(deadline, self.poster).await.is_err() {
            tracing::warn!(
                limit = format!("{}s", SHUTDOWN_WRITES.as_secs()).as_str(),
                "Queued events not posted by the shutdown limit were dropped"
            );
        }
        let releases = self.electors.into_iter().map(|(release, task)| {
            let _ = release.send(());
            tokio::time::timeout(RELEASE_TIMEOUT, task)
        });
        futures::future::join_all(releases).await;
        if let Some(task) = self.endpoint {
            task.abort();
        }
    }
}

/// On SIGTERM: stops taking work and waits until no pass is in flight, at most `limit`; false
/// (and a warning) when passes were still running then. With no pass running
/// it returns at once: not waiting for the controllers' streams to end, since kube-runtime 5's
/// runner never ends while its store has no initial list (a forbidden or failing list), and
/// holds retries scheduled for later.
pub async fn finish_passes(ctx: &Context, limit: Duration) -> bool {
    ctx.stop_taking_work();
    if tokio::time::timeout(limit, ctx.passes_finished()).await.is_ok() {
        return true;
    }
    tracing::warn!(
        limit = format!("{}s", limit.as_secs_f64()).as_str(),
        "Handlers still running at the shutdown limit were abandoned"
    );
    false
}

/// Applies leadership changes to the controller: a new term forgets what was handled and
/// re-queues every object (through `terms`); the end of a term stops handling.
pub async fn follow_leadership(mut roles: watch::Receiver<Role>, ctx: Arc<Context>, terms: watch::Sender<u64>) {
    let mut leading = false;
    let mut lead = |now: bool| {
        if now != leading {
            ctx.metrics.set_leader(now);
            leading = now;
        }
    };
    loop {
        let role = roles.borrow_and_update().clone();
        match role.term() {
            Some(term) if !ctx.holds_term(term) => {
                ctx.begin_term(term);
                lead(true);
                let _ = terms.send(term);
            }
            Some(_) => {}
            None => {
                ctx.end_term();
                lead(false);
            }
        }
        if roles.changed().await.is_err() {
            ctx.end_term();
            lead(false);
            return;
        }
    }
}

/// The controller over one watch (one namespace, or all): our own list and watch
/// ([`listwatch::list_watch`]: the list from the API server's watch cache, decoded as it
/// arrives) and reflector feed it, so that the watch's milestones are logged, readiness is
/// reported and deleted objects are forgotten. Each change of `terms` (a new leadership term) re-queues every cached object, once
/// the cache holds the initial list.
pub fn controller_for(
    api: Api<CachedMicroservice>,
    scope: String,
    ctx: Arc<Context>,
    concurrency: u16,
    terms: watch::Receiver<u64>,
) -> Controller<CachedMicroservice> {
    let (reader, writer) = reflector::store();
    let (listed, listed_rx) = watch::channel(false);
    let events = listwatch::list_watch(ctx.client.clone(), api);
    let objects = watching::with_backoff(events, watcher::DefaultBackoff::default(), scope.clone())
        .reflect(writer)
        .inspect(move |event| observe_watch(event, &scope, &ctx, &listed))
        .applied_objects();
    Controller::for_stream(objects, reader.clone())
        .with_config(controller::Config::default().concurrency(concurrency))
        .trigger_backoff(NoTriggerBackoff)
        .reconcile_all_on(term_starts(terms, listed_rx))
}

/// The controller's own backoff over its input streams: none. The watcher stream already backs
/// off on errors ([`watching::with_backoff`]); kube-runtime's trigger backoff would, on top of that, hold
/// back every input while the watch fails, the term trigger included, so a new leader would not
/// resume its objects until the watch recovered (seen against a restarting API server; a
/// mocked-API test holds it).
struct NoTriggerBackoff;

impl Iterator for NoTriggerBackoff {
    type Item = Duration;
    fn next(&mut self) -> Option<Duration> {
        Some(Duration::ZERO)
    }
}

impl kube::runtime::utils::Backoff for NoTriggerBackoff {
    fn reset(&mut self) {}
}

/// Yields once per change of `terms`, once `listed` (the store holds its initial list).
///
/// Not `Store::wait_until_ready`: in kube-runtime 5 its `DelayedInit` wakes only the last of
/// several concurrent waiters (one oneshot receiver shared by every clone), and the controller's
/// runner waits on it too, so a term that began before the initial list never re-queued anything.
fn term_starts(terms: watch::Receiver<u64>, listed: watch::Receiver<bool>) -> impl Stream<Item = ()> + Send {
    futures::stream::unfold((terms, listed), |(mut terms, listed)| async move {
        terms.changed().await.ok()?;
        listed.clone().wait_for(|done| *done).await.ok()?;
        Some(((), (terms, listed)))
    })
}

/// Logs the watch's milestones, reports the first initial list to readiness, and
/// forgets deleted objects. `listed` turns true when this watch finished its first initial list
/// (the reflector has stored it: it runs before this).
fn observe_watch(
    event: &Result<watcher::Event<CachedMicroservice>, watcher::Error>,
    scope: &str,
    ctx: &Context,
    listed: &watch::Sender<bool>,
) {
    match event {
        Ok(watcher::Event::Init) if *listed.borrow() => {
            tracing::info!(namespaces = scope, "Watching microservices: relisting")
        }
        Ok(watcher::Event::InitDone) if !*listed.borrow() => {
            listed.send_replace(true);
            ctx.health.initial_list_done();
            tracing::info!(namespaces = scope, "Watching microservices: initial list done")
        }
        Ok(watcher::Event::InitDone) => {
            tracing::info!(namespaces = scope, "Watching microservices: relist done")
        }
        Ok(watcher::Event::Delete(obj)) => {
            if let Some(uid) = obj.uid() {
                ctx.forget(&uid);
            }
        }
        // Failures are logged, and backed off, by watching::with_backoff.
        Ok(_) | Err(_) => {}
    }
}

async fn log_controller_result(
    result: Result<
        (
            kube::runtime::reflector::ObjectRef<CachedMicroservice>,
            controller::Action,
        ),
        controller::Error<reconcile::RetryableError, watcher::Error>,
    >,
) {
    match result {
        Ok(_) | Err(controller::Error::ReconcilerFailed(..)) | Err(controller::Error::ObjectNotFound(_)) => {}
        // Watch failures are logged where they happen (observe_watch).
        Err(controller::Error::QueueError(_)) => {}
        Err(err) => tracing::warn!(error = err.to_string().as_str(), "Controller error"),
    }
}

async fn forget_deleted(ctx: Arc<Context>, stores: Vec<Store<CachedMicroservice>>) {
    let mut tick = tokio::time::interval(FORGET_INTERVAL);
    tick.tick().await;
    loop {
        tick.tick().await;
        let live: HashSet<String> = stores.iter().flat_map(|s| s.state()).filter_map(|o| o.uid()).collect();
        ctx.forget_except(&live);
    }
}

/// Checks that the CRD exists and serves `v1alpha1` with the status subresource.
/// Checks the CRD serves our version with the status subresource. It is the first call: a
/// transport error becomes `unreachable(err)`, which names the server and context.
async fn check_crd(client: &Client, unreachable: impl FnOnce(kube::Error) -> AppError) -> Result<(), AppError> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let crd = match api.get(CRD_NAME).await {
        Ok(crd) => crd,
        Err(kube::Error::Api(status)) if status.code == 403 => {
            tracing::warn!(
                crd = CRD_NAME,
                "Cannot read the CRD (forbidden); assuming it has the status subresource"
            );
            return Ok(());
        }
        Err(kube::Error::Api(status)) if status.code == 404 => {
            return Err(AppError::Problem {
                message: format!("the CRD {CRD_NAME} is not installed"),
                hint: Some("install it: kubectl microservice manifests --namespace OPNS --watch-namespace NS | kubectl apply -f -".into()),
            });
        }
        Err(err @ kube::Error::Api(_)) => return Err(AppError::kube(format!("get CRD {CRD_NAME}"), err)),
        Err(err) => return Err(unreachable(err)),
    };
    let version = crd.spec.versions.iter().find(|v| v.name == VERSION && v.served);
    match version {
        None => Err(AppError::Problem {
            message: format!("the CRD {CRD_NAME} does not serve version {VERSION}"),
            hint: Some(format!("add a served version {VERSION} to the CRD")),
        }),
        Some(v) if v.subresources.as_ref().and_then(|s| s.status.as_ref()).is_none() => Err(AppError::Problem {
            message: format!(
                "the CRD {CRD_NAME} has no status subresource for {VERSION}; the operator writes status only through it"
            ),
            hint: Some(format!(
                "add `subresources: {{status: {{}}}}` to version {VERSION} of CRD {CRD_NAME}"
            )),
        }),
        Some(_) => Ok(()),
    }
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("a SIGTERM handler can be installed");
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
