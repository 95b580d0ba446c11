//! Operator logs from the cluster: `pods/log` of the operator's Pods, read as streams (never
//! whole into memory), each container log through its own [`LogStream`].
//!
//! - [`log_params`]: the `pods/log` query (`container`, `previous`, `follow`, `sinceSeconds`,
//!   `tailLines`, always `timestamps=true`: the kubelet's clock is the better one);
//! - [`read_once`]: every selected container log to its end (current, and the previous
//!   container with `--previous`);
//! - [`follow`]: like stern, follows the set of Pods as it changes (polled every
//!   [`POLL`], since the diagnose role may list Pods but not watch them), reconnects a stream
//!   that ended while its container still runs, and starts a new stream for a restarted
//!   container;
//! - [`pod_notes`]: what a Pod's status says about the logs that are gone (restarts, replaced
//!   Pods), for the coverage.
//!
//! A log that cannot be read (forbidden, not found, no previous container) is a gap in the
//! coverage, never a crash.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use chrono::{DateTime, Utc};
use futures::AsyncReadExt;
use k8s_openapi::api::core::v1::Pod;
use kube::Client;
use kube::api::{Api, ListParams, LogParams};
use tokio::sync::mpsc;

use super::coverage::ContainerCoverage;
use super::runs::{CauseHint, GroupConfig, Run};
use super::stream::{LogStream, SourceLabel};
use crate::time::{from_jiff, rfc3339_seconds, to_jiff};

/// How often the Pod set is listed in follow mode.
pub const POLL: Duration = Duration::from_secs(5);
/// How often open streams are flushed, expired and drained in follow mode.
pub const TICK: Duration = Duration::from_secs(1);
/// How long (log time) a closed run is held in follow mode for its cycle's end and late lines.
pub const LINGER: Duration = Duration::from_secs(2);

/// Which Pods and container to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The operator's namespace.
    pub namespace: String,
    /// The Deployment's label selector (`app=catalog-operator`).
    pub selector: String,
    /// The container (`-c`, else the operator container found by discovery).
    pub container: String,
    /// `NS/deployment/NAME`, for messages.
    pub describe: String,
    /// The Deployment's `creationTimestamp` (to tell replaced Pods).
    pub created: Option<DateTime<Utc>>,
    /// The Pod holding our operator's Lease, when known: the one that handles objects.
    pub leader: Option<String>,
}

/// How much of each log to read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fetch {
    /// Also read the container before its last restart.
    pub previous: bool,
    /// `sinceSeconds`.
    pub since_seconds: Option<i64>,
    /// `tailLines`.
    pub tail_lines: Option<i64>,
}

/// The `pods/log` parameters for one read.
pub fn log_params(container: &str, previous: bool, follow: bool, fetch: &Fetch) -> LogParams {
    LogParams {
        container: Some(container.to_string()),
        follow,
        previous,
        since_seconds: fetch.since_seconds,
        tail_lines: fetch.tail_lines,
        timestamps: true,
        ..LogParams::default()
    }
}

/// The container's restart count and the time the current instance started.
fn container_state(pod: &Pod, container: &str) -> (i32, Option<DateTime<Utc>>) {
    let status = pod
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .and_then(|list| list.iter().find(|c| c.name == container));
    let started = status
        .and_then(|c| c.state.as_ref())
        .and_then(|s| s.running.as_ref())
        .and_then(|r| r.started_at.as_ref())
        .map(|t| from_jiff(t.0));
    (status.map_or(0, |c| c.restart_count), started)
}

/// What a Pod's status says about logs that cannot be read (see the module docs).
/// `deployment_created` tells whether the Pod replaced earlier ones (created more than a minute
/// after its Deployment).
pub fn pod_notes(
    pod: &Pod,
    container: &str,
    previous_read: bool,
    deployment_created: Option<DateTime<Utc>>,
) -> Vec<String> {
    let mut notes = Vec::new();
    let (restarts, started) = container_state(pod, container);
    if let Some(started) = started {
        notes.push(format!("container started at {}", rfc3339_seconds(started)));
    }
    match (restarts, previous_read) {
        (0, _) => {}
        (n, false) => notes.push(format!(
            "the container restarted {}: logs before its last restart are not read (add --previous)",
            crate::text::count(u64::from(n.unsigned_abs()), "time")
        )),
        (1, true) => {}
        (n, true) => notes.push(format!(
            "the container restarted {n} times: only the last previous container's log is kept by the kubelet"
        )),
    }
    let created = pod.metadata.creation_timestamp.as_ref().map(|t| from_jiff(t.0));
    if let (Some(created), Some(deployment)) = (created, deployment_created)
        && created - deployment > chrono::Duration::minutes(1)
    {
        notes.push(format!(
            "this Pod was created at {}, after its Deployment: the Pods it replaced are gone with their logs",
            rfc3339_seconds(created)
        ));
    }
    notes
}

fn label(pod: &str, container: &str, previous: bool) -> SourceLabel {
    SourceLabel {
        pod: Some(pod.to_string()),
        container: Some(container.to_string()),
        previous,
        path: None,
    }
}

/// Lists the target's Pods, oldest first, with the API server's clock (its `Date` header): the
/// "now" of a live answer.
///
/// Errors: the API's (forbidden, unreachable).
pub async fn pods(client: &Client, target: &Target) -> Result<(Vec<Pod>, Option<DateTime<Utc>>), kube::Error> {
    let path = format!("/api/v1/namespaces/{}/pods", target.namespace);
    let params = ListParams::default().labels(&target.selector);
    let (mut list, date) = crate::client::lists::list_all::<Pod>(client, &path, params).await?;
    list.sort_by_key(|p| p.metadata.creation_timestamp.as_ref().map(|t| from_jiff(t.0)));
    Ok((list, date))
}

/// Streams one container log into `stream` to its end (or, following, until the server ends it).
///
/// Errors: the API's; bytes read before the error were already fed.
pub async fn read_into(
    api: &Api<Pod>,
    pod: &str,
    params: &LogParams,
    stream: &mut LogStream,
) -> Result<(), kube::Error> {
    let mut reader = api.log_stream(pod, params).await?;
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        match reader.read(&mut chunk).await {
            Ok(0) => return Ok(()),
            Ok(n) => stream.push_bytes(&chunk[..n]),
            Err(e) => return Err(kube::Error::ReadEvents(e)),
        }
    }
}

/// Reads one container log (current, or the previous instance) to its end.
#[allow(clippy::too_many_arguments)]
pub async fn read_container(
    api: &Api<Pod>,
    pod: &str,
    container: &str,
    previous: bool,
    fetch: &Fetch,
    config: &GroupConfig,
    hints: &[CauseHint],
    notes: Vec<String>,
) -> (Vec<Run>, ContainerCoverage) {
    let mut stream = LogStream::new(label(pod, container, previous), config.clone(), hints.to_vec());
    let params = log_params(container, previous, false, fetch);
    let result = read_into(api, pod, &params, &mut stream).await;
    stream.finish();
    let runs = stream.drain(None);
    let coverage = ContainerCoverage::of(&stream, result.err().map(|e| describe_error(&e)), notes);
    (runs, coverage)
}

/// Reads every selected container log of `pods` to its end, concurrently: the current
/// container, and with `--previous` the one before its last restart.
pub async fn read_once(
    client: &Client,
    target: &Target,
    pods: &[Pod],
    fetch: &Fetch,
    config: &GroupConfig,
    hints: &[CauseHint],
) -> (Vec<Run>, Vec<ContainerCoverage>) {
    let api: Api<Pod> = Api::namespaced(client.clone(), &target.namespace);
    let mut reads = Vec::new();
    for pod in pods {
        let name = pod.metadata.name.clone().unwrap_or_default();
        let restarted = container_state(pod, &target.container).0 > 0;
        let with_previous = fetch.previous && restarted;
        if with_previous {
            reads.push((name.clone(), true, Vec::new()));
        }
        let mut notes = pod_notes(pod, &target.container, with_previous, target.created);
        if target.leader.as_deref() == Some(name.as_str()) {
            notes.push("this Pod holds the operator's Lease: it is the replica that handles objects".into());
        }
        reads.push((name, false, notes));
    }
    let results = futures::future::join_all(reads.into_iter().map(|(name, previous, notes)| {
        let api = api.clone();
        async move { read_container(&api, &name, &target.container, previous, fetch, config, hints, notes).await }
    }))
    .await;
    let mut runs = Vec::new();
    let mut coverage = Vec::new();
    for (r, c) in results {
        runs.extend(r);
        coverage.push(c);
    }
    (runs, coverage)
}

pub use crate::error::describe_kube_error as describe_error;

/// One followed container instance.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Instance {
    pod: String,
    restarts: i32,
}

enum Event {
    Bytes(Instance, Vec<u8>),
    /// The server ended the stream; `Err` with the reason when it failed.
    Ended(Instance, Result<(), String>),
}

/// What [`follow`] hands its caller.
pub enum Followed {
    /// Runs that ended.
    Runs(Vec<Run>),
    /// A stream ended or failed, or a Pod came or went: the log's coverage and a note.
    Note(String),
}

/// Follows the target's Pods (see the module docs) until `stop` resolves; `out` receives runs as
/// they end and notes as Pods come and go. Returns the coverage of every stream followed.
pub async fn follow(
    client: &Client,
    target: &Target,
    fetch: &Fetch,
    config: &GroupConfig,
    hints: &[CauseHint],
    stop: impl std::future::Future<Output = ()>,
    out: &mut (impl FnMut(Followed) + Send),
) -> Vec<ContainerCoverage> {
    let (tx, mut rx) = mpsc::channel::<Event>(64);
    let mut follower = Follower {
        client,
        api: Api::namespaced(client.clone(), &target.namespace),
        target,
        fetch,
        config,
        hints,
        tx,
        streams: BTreeMap::new(),
        running: HashMap::new(),
        last_seen: HashMap::new(),
        done: Vec::new(),
        first_poll: true,
    };
    let mut poll = tokio::time::interval(POLL);
    let mut tick = tokio::time::interval(TICK);
    tokio::pin!(stop);
    loop {
        tokio::select! {
            _ = &mut stop => break,
            _ = poll.tick() => follower.poll(out).await,
            _ = tick.tick() => follower.tick(Utc::now(), out),
            Some(event) = rx.recv() => match event {
                Event::Bytes(instance, bytes) => follower.bytes(instance, &bytes),
                Event::Ended(instance, result) => follower.ended(instance, result, out).await,
            },
        }
    }
    follower.finish(out)
}

/// The state of [`follow`]: one stream per container instance followed, the readers that feed
/// them, and the coverage of the streams that ended.
struct Follower<'a> {
    client: &'a Client,
    api: Api<Pod>,
    target: &'a Target,
    fetch: &'a Fetch,
    config: &'a GroupConfig,
    hints: &'a [CauseHint],
    /// Where the readers send what they read.
    tx: mpsc::Sender<Event>,
    streams: BTreeMap<Instance, LogStream>,
    running: HashMap<Instance, tokio::task::JoinHandle<()>>,
    /// The latest line time read of each instance: a reconnect starts after it.
    last_seen: HashMap<Instance, DateTime<Utc>>,
    /// The coverage of the streams that ended.
    done: Vec<ContainerCoverage>,
    /// Whether no poll listed the Pods yet (`--since`, `--tail` and `--previous` apply then).
    first_poll: bool,
}

impl Follower<'_> {
    /// Lists the Pods and starts a reader for each running container instance not followed
    /// yet (after its previous instance's log, on the first poll with `--previous`).
    async fn poll(&mut self, out: &mut (impl FnMut(Followed) + Send)) {
        let (target, fetch) = (self.target, self.fetch);
        let listed = match pods(self.client, target).await {
            Ok((list, _)) => list,
            Err(e) => {
                out(Followed::Note(format!(
                    "cannot list the Pods of {}: {}",
                    target.describe,
                    describe_error(&e)
                )));
                return;
            }
        };
        for pod in &listed {
            let name = pod.metadata.name.clone().unwrap_or_default();
            let (restarts, _) = container_state(pod, &target.container);
            let instance = Instance {
                pod: name.clone(),
                restarts,
            };
            if self.running.contains_key(&instance) || !is_running(pod, &target.container) {
                continue;
            }
            if self.first_poll && fetch.previous && restarts > 0 {
                let (runs, coverage) = read_container(
                    &self.api,
                    &name,
                    &target.container,
                    true,
                    fetch,
                    self.config,
                    self.hints,
                    Vec::new(),
                )
                .await;
                out(Followed::Runs(runs));
                self.done.push(coverage);
            }
            if !self.first_poll {
                out(Followed::Note(format!(
                    "following {name}/{} (restarts: {restarts})",
                    target.container
                )));
            }
            self.start(instance, &name);
        }
        self.first_poll = false;
    }

    /// Starts reading `instance` (of Pod `name`): its stream, kept across reconnects, skips
    /// what it read before.
    fn start(&mut self, instance: Instance, name: &str) {
        let (target, fetch) = (self.target, self.fetch);
        let since = self.last_seen.get(&instance).copied();
        let (config, hints) = (self.config, self.hints);
        let stream = self
            .streams
            .entry(instance.clone())
            .or_insert_with(|| LogStream::new(label(name, &target.container, false), config.clone(), hints.to_vec()));
        if let Some(since) = since {
            stream.skip_through(since);
        }
        let params = LogParams {
            since_time: since.map(to_jiff),
            since_seconds: if since.is_some() || !self.first_poll {
                None
            } else {
                fetch.since_seconds
            },
            tail_lines: if self.first_poll { fetch.tail_lines } else { None },
            ..log_params(&target.container, false, true, fetch)
        };
        let reader = spawn_reader(self.api.clone(), instance.clone(), params, self.tx.clone());
        self.running.insert(instance, reader);
    }

    /// Flushes, expires and drains every stream, keeping the runs that closed within
    /// [`LINGER`] of `now` for their cycle's end and late lines.
    fn tick(&mut self, now: DateTime<Utc>, out: &mut (impl FnMut(Followed) + Send)) {
        let linger = crate::time::delta(LINGER);
        for stream in self.streams.values_mut() {
            stream.flush_record();
            stream.expire(now);
            let runs = stream.drain(Some(crate::time::minus(now, linger)));
            if !runs.is_empty() {
                out(Followed::Runs(runs));
            }
        }
    }

    /// Bytes read from `instance`'s log.
    fn bytes(&mut self, instance: Instance, bytes: &[u8]) {
        if let Some(stream) = self.streams.get_mut(&instance) {
            stream.push_bytes(bytes);
            if let Some(last) = stream.parse_stats().last {
                self.last_seen.insert(instance, last.at);
            }
        }
    }

    /// `instance`'s log stream ended (`result`: why, when it failed). The next poll reconnects
    /// it if the container still runs (same instance), or starts the new instance after a
    /// restart; a gone Pod's stream is final: its runs and coverage are handed over.
    async fn ended(&mut self, instance: Instance, result: Result<(), String>, out: &mut (impl FnMut(Followed) + Send)) {
        let target = self.target;
        self.running.remove(&instance);
        if let Some(stream) = self.streams.get_mut(&instance) {
            stream.end_connection();
        }
        if let Err(e) = &result {
            out(Followed::Note(format!(
                "log stream of {}/{} ended: {e}",
                instance.pod, target.container
            )));
        }
        let still_there = match pods(self.client, target).await {
            Ok((list, _)) => list.iter().any(|p| {
                p.metadata.name.as_deref() == Some(instance.pod.as_str())
                    && container_state(p, &target.container).0 == instance.restarts
                    && is_running(p, &target.container)
            }),
            Err(_) => false,
        };
        if !still_there && let Some(mut stream) = self.streams.remove(&instance) {
            stream.finish();
            out(Followed::Runs(stream.drain(None)));
            out(Followed::Note(format!(
                "{}/{} is gone or restarted: its log ended",
                instance.pod, target.container
            )));
            self.done.push(ContainerCoverage::of(&stream, None, Vec::new()));
            self.last_seen.remove(&instance);
        }
    }

    /// Stops the readers and ends every stream: their last runs, and the coverage of all.
    fn finish(self, out: &mut (impl FnMut(Followed) + Send)) -> Vec<ContainerCoverage> {
        for handle in self.running.values() {
            handle.abort();
        }
        let mut done = self.done;
        for (_, mut stream) in self.streams {
            stream.finish();
            out(Followed::Runs(stream.drain(None)));
            done.push(ContainerCoverage::of(&stream, None, Vec::new()));
        }
        done
    }
}

fn is_running(pod: &Pod, container: &str) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .and_then(|list| list.iter().find(|c| c.name == container))
        .and_then(|c| c.state.as_ref())
        .is_some_and(|s| s.running.is_some())
}

/// Reads one followed stream into the channel, in chunks of at most 64 KiB.
fn spawn_reader(
    api: Api<Pod>,
    instance: Instance,
    params: LogParams,
    tx: mpsc::Sender<Event>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let result = async {
            let mut reader = api
                .log_stream(&instance.pod, &params)
                .await
                .map_err(|e| describe_error(&e))?;
            let mut chunk = vec![0u8; 64 * 1024];
            loop {
                let n = reader.read(&mut chunk).await.map_err(|e| e.to_string())?;
                if n == 0 {
                    return Ok(());
                }
                if tx
                    .send(Event::Bytes(instance.clone(), chunk[..n].to_vec()))
                    .await
                    .is_err()
                {
                    return Ok(());
                }
            }
        }
        .await;
        let _ = tx.send(Event::Ended(instance, result)).await;
    })
}

#[cfg(test)]
mod tests {
    //! Against a mocked API server (`tower_test`): the `pods/log` queries, gaps, follow.

    use std::sync::{Arc, Mutex};

    use serde_json::json;

    use super::*;
    use crate::client::fake::fake_api;

    /// Answers `GET .../pods` with `pods(n)` (n: how many pod lists so far) and `GET
    /// .../pods/NAME/log` with `log(query)`; records every path and query.
    fn fake(
        pods: impl Fn(usize) -> serde_json::Value + Send + 'static,
        log: impl Fn(&str) -> (u16, String) + Send + 'static,
    ) -> (Client, Arc<Mutex<Vec<String>>>) {
        let mut lists = 0;
        fake_api(move |path, query| {
            if path.ends_with("/log") {
                log(query)
            } else {
                lists += 1;
                (200, pods(lists).to_string())
            }
        })
    }

    fn pod_list(restarts: i32) -> serde_json::Value {
        json!({"apiVersion": "v1", "kind": "PodList", "metadata": {}, "items": [{
            "metadata": {"name": "op-1", "namespace": "ops", "labels": {"app": "op"}, "creationTimestamp": "2026-11-29T17:00:00Z"},
            "status": {"containerStatuses": [{"name": "operator", "image": "x", "imageID": "", "ready": true,
                "restartCount": restarts, "state": {"running": {"startedAt": "2026-11-29T17:10:00Z"}}}]}
        }]})
    }

    fn target() -> Target {
        Target {
            namespace: "ops".into(),
            selector: "app=op".into(),
            container: "operator".into(),
            describe: "ops/deployment/op".into(),
            created: Some("2026-11-29T16:00:00Z".parse().unwrap()),
            leader: Some("op-1".into()),
        }
    }

    const CURRENT: &str = "2026-11-29T17:10:01.000000001Z 2026-11-29T17:10:01.000Z  INFO [todo/a] Accepted todo/a: image=x port=1 handler=accept cause=resume\n\
2026-11-29T17:10:01.000000002Z 2026-11-29T17:10:01.001Z  INFO [todo/a] Handler 'accept' succeeded. handler=accept cause=resume\n";
    const PREVIOUS: &str = "2026-11-29T17:05:00.000000001Z [2026-11-29 17:05:00,000] kopf.objects         [ERROR   ] [todo/a] Handler 'accept' failed temporarily: nope\n";

    #[tokio::test]
    async fn pods_log_queries_carry_container_previous_since_tail_and_timestamps() {
        let (client, seen) = fake(
            |_| pod_list(1),
            |q| {
                (
                    200,
                    if q.contains("previous=true") { PREVIOUS } else { CURRENT }.to_string(),
                )
            },
        );
        let fetch = Fetch {
            previous: true,
            since_seconds: Some(600),
            tail_lines: Some(100),
        };
        let (pods, server_now) = pods(&client, &target()).await.unwrap();
        assert_eq!(
            server_now.map(crate::time::rfc3339_seconds).as_deref(),
            Some("2026-11-29T17:20:00Z")
        );
        let (mut runs, coverage) = read_once(&client, &target(), &pods, &fetch, &GroupConfig::default(), &[]).await;
        let seen = seen.lock().unwrap().clone();
        assert_eq!(seen[0], "/api/v1/namespaces/ops/pods?&labelSelector=app%3Dop&limit=500");
        let logs: Vec<&String> = seen.iter().filter(|u| u.contains("/log?")).collect();
        assert_eq!(logs.len(), 2, "{seen:?}");
        for q in &logs {
            assert!(q.starts_with("/api/v1/namespaces/ops/pods/op-1/log?"), "{q}");
            for part in [
                "container=operator",
                "sinceSeconds=600",
                "tailLines=100",
                "timestamps=true",
            ] {
                assert!(q.contains(part), "{q} lacks {part}");
            }
        }
        assert_eq!(logs.iter().filter(|q| q.contains("previous=true")).count(), 1);
        runs.sort_by_key(|r| r.started.map(|s| s.at));
        let got: Vec<(&str, &str, bool)> = runs
            .iter()
            .map(|r| (r.outcome.as_str(), r.pod.as_deref().unwrap(), r.cause.is_some()))
            .collect();
        assert_eq!(got, [("retrying", "op-1", false), ("succeeded", "op-1", true)]);
        assert_eq!(coverage.len(), 2);
        let current = coverage.iter().find(|c| !c.label.previous).unwrap();
        assert_eq!(current.parse.kubelet_stamped_lines, 2);
        assert!(
            current
                .notes
                .iter()
                .any(|n| n.contains("started at 2026-11-29T17:10:00Z")),
            "{:?}",
            current.notes
        );
        assert!(current.notes.iter().all(|n| !n.contains("--previous")));
        assert!(
            current
                .notes
                .iter()
                .any(|n| n.contains("the Pods it replaced are gone")),
            "{:?}",
            current.notes
        );
        assert!(
            current.notes.iter().any(|n| n.contains("holds the operator's Lease")),
            "{:?}",
            current.notes
        );
    }

    #[tokio::test]
    async fn a_forbidden_log_is_a_gap_and_the_others_are_still_read() {
        let forbidden =
            json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Forbidden", "code": 403,
            "message": "pods \"op-1\" is forbidden: User \"u\" cannot get resource \"pods/log\""})
            .to_string();
        let (client, _) = fake(
            |_| pod_list(2),
            move |q| {
                if q.contains("previous=true") {
                    (403, forbidden.clone())
                } else {
                    (200, CURRENT.to_string())
                }
            },
        );
        let fetch = Fetch {
            previous: true,
            ..Fetch::default()
        };
        let (pods, _) = pods(&client, &target()).await.unwrap();
        let (runs, coverage) = read_once(&client, &target(), &pods, &fetch, &GroupConfig::default(), &[]).await;
        assert_eq!(runs.len(), 1);
        let previous = coverage.iter().find(|c| c.label.previous).unwrap();
        assert!(
            previous.error.as_deref().unwrap().contains("Forbidden (403)"),
            "{previous:?}"
        );
        let current = coverage.iter().find(|c| !c.label.previous).unwrap();
        assert!(
            current.notes.iter().any(|n| n.contains("restarted 2 times")),
            "{:?}",
            current.notes
        );
    }

    #[tokio::test]
    async fn follow_reads_a_pod_until_it_is_gone_and_reports_its_coverage() {
        // First list: the Pod runs; after its log stream ends, it is gone.
        let (client, seen) = fake(
            |n| {
                if n == 1 {
                    pod_list(0)
                } else {
                    json!({"apiVersion": "v1", "kind": "PodList", "metadata": {}, "items": []})
                }
            },
            |_| (200, CURRENT.to_string()),
        );
        let mut runs = Vec::new();
        let mut notes = Vec::new();
        let coverage = follow(
            &client,
            &target(),
            &Fetch::default(),
            &GroupConfig::default(),
            &[],
            tokio::time::sleep(Duration::from_millis(1500)),
            &mut |f| match f {
                Followed::Runs(r) => runs.extend(r),
                Followed::Note(n) => notes.push(n),
            },
        )
        .await;
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].pod.as_deref(), Some("op-1"));
        assert_eq!(coverage.len(), 1);
        assert_eq!(coverage[0].parse.lines, 2);
        assert!(notes.iter().any(|n| n.contains("op-1/operator is gone")), "{notes:?}");
        let seen = seen.lock().unwrap().clone();
        let log = seen.iter().find(|u| u.contains("/log?")).unwrap();
        assert!(log.contains("follow=true") && log.contains("timestamps=true"), "{log}");
    }
}
