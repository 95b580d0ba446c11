//! Benchmark of `operate` against the cluster in `KMS_E2E_KUBECONFIG` (issues 6 and 13).
//! Not a timed test: it prints figures and checks only that the work was done.
//!
//! 1. Create: N Microservices (`KMS_BENCH_OBJECTS`, default 1000) created by 16 concurrent
//!    clients in a fresh namespace while the release binary runs `operate` (leader election on,
//!    events on, `--health-listen` for its `/metrics`). Reported: the time from the last create
//!    until all are Accepted, create→Accepted latency p50/p99 (from the create's answer to the
//!    first watch event showing `phase: Accepted` at that generation); the operator's peak RSS
//!    (VmHWM from /proc) and its memory per object, (peak − RSS before the first create) / N;
//!    events: how many the operator stored (its `events_posted_total`), how many are stored in
//!    the namespace by type and reason (listed from the API in pages), how many it shed by type
//!    and reason (`events_shed_total`) or gave up on, and its lines about shedding or failing;
//!    API writes per object, counted on the API server side (`apiserver_request_total` from its
//!    `/metrics`, which needs the admin kubeconfig): microservices, microservices/status and
//!    events writes (by verb and HTTP code, so 409 and 429 answers show), minus the benchmark's
//!    own N creates; Lease writes are not counted. Also the handler retries logged.
//! 2. Restart: SIGTERM, then a new `operate` over the N unchanged objects. Reported: time from
//!    the process start until every object logged `Resuming is processed`, the writes meanwhile
//!    (must be 0), and that process's peak RSS and peak RSS per object.
//!
//! The write counts are exact only when nothing else writes to that API server meanwhile: use a
//! private one. The namespace (`kms-bench-*`) is left behind for inspection.
//!
//! Run: `KMS_E2E_KUBECONFIG=/path/admin.kubeconfig cargo bench --bench operate`
//! (`KMS_BENCH_OBJECTS`, `KMS_BENCH_CLIENTS` change N and the client count).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::discovery::ApiResource;
use kube::runtime::watcher;
use kube::{Client, Config};
use serde_json::json;

use kubectl_microservice::resource::{CRD_NAME, crd};

const BIN: &str = env!("CARGO_BIN_EXE_kubectl-microservice");
const IMAGE: &str = "ghcr.io/yrw9281/it30-todo-api:0.1.0";

fn env_number(name: &str, default: usize) -> usize {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?}: expected a whole number")),
        Err(_) => default,
    }
}

#[path = "../tests/support/operate_process.rs"]
mod operate_process;
use operate_process::OperateProcess;

/// A running `operate` whose stderr lines are counted.
struct Operator {
    process: OperateProcess,
}

impl Operator {
    fn start(kubeconfig: &Path, ns: &str) -> Operator {
        Operator {
            process: OperateProcess::spawn(
                BIN,
                kubeconfig,
                &[
                    "--namespace",
                    ns,
                    "--lease-namespace",
                    ns,
                    "--health-listen",
                    "127.0.0.1:0",
                ],
                false,
            ),
        }
    }

    fn count(&self, needle: &str) -> usize {
        self.process.count(needle)
    }

    async fn wait_count(&self, needle: &str, n: usize, limit: Duration) {
        let start = Instant::now();
        while self.count(needle) < n {
            assert!(
                start.elapsed() < limit,
                "timed out: {} of {n} lines with {needle:?}",
                self.count(needle)
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Peak resident set size in MiB (VmHWM of /proc/PID/status).
    fn peak_rss_mib(&self) -> f64 {
        self.proc_status_mib("VmHWM:")
    }

    /// Resident set size now, in MiB (VmRSS).
    fn rss_mib(&self) -> f64 {
        self.proc_status_mib("VmRSS:")
    }

    fn proc_status_mib(&self, field: &str) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.process.child.id())).unwrap();
        let kib: f64 = status
            .lines()
            .find(|l| l.starts_with(field))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{field} in /proc/PID/status"));
        kib / 1024.0
    }

    /// The operator's own `/metrics` (from `--health-listen 127.0.0.1:0`, whose address it logs).
    async fn metrics(&self) -> String {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let needle = "Serving /healthz, /readyz and /metrics address=";
        self.wait_count(needle, 1, Duration::from_secs(10)).await;
        let line = self.process.lines().into_iter().find(|l| l.contains(needle)).unwrap();
        let address = line
            .split(needle)
            .nth(1)
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap()
            .to_string();
        let mut stream = tokio::net::TcpStream::connect(address.trim_matches('"'))
            .await
            .expect("the operator's endpoint connects");
        stream
            .write_all(b"GET /metrics HTTP/1.1\r\nHost: operator\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.unwrap();
        answer
            .split_once("\r\n\r\n")
            .map(|(_, b)| b.to_string())
            .unwrap_or_default()
    }

    /// SIGTERM, then wait for exit 0.
    fn stop(mut self) {
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.process.child.id().to_string())
            .status();
        let status = self.process.child.wait().unwrap();
        assert!(status.success(), "operate exited with {status}");
    }
}

/// `apiserver_request_total` by (verb, group, resource, subresource, code).
type RequestCounts = BTreeMap<(String, String, String, String, String), f64>;

/// Reads the API server's own request counters; `None` when `/metrics` is not allowed.
async fn request_counts(client: &Client) -> Option<RequestCounts> {
    let request = http::Request::get("/metrics").body(Vec::new()).unwrap();
    let text = client.request_text(request).await.ok()?;
    let mut counts = RequestCounts::new();
    for line in text.lines().filter(|l| l.starts_with("apiserver_request_total{")) {
        let (labels, value) = line.rsplit_once(' ')?;
        let labels: HashMap<&str, &str> = labels["apiserver_request_total{".len()..labels.len() - 1]
            .split(',')
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k, v.trim_matches('"')))
            .collect();
        let key =
            ["verb", "group", "resource", "subresource", "code"].map(|k| labels.get(k).unwrap_or(&"").to_string());
        *counts.entry(key.into()).or_default() += value.parse::<f64>().ok()?;
    }
    Some(counts)
}

/// Write requests between two snapshots to microservices (and their status) and events, by
/// `resource[/subresource] VERB code`. Leases, and what the API server writes for itself (its
/// `kubernetes` endpoints), are left out.
fn writes_between(before: &RequestCounts, after: &RequestCounts) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for (key, value) in after {
        let (verb, _group, resource, subresource, code) = key;
        let write = matches!(verb.as_str(), "POST" | "PUT" | "PATCH" | "APPLY" | "DELETE");
        if !write || !matches!(resource.as_str(), "microservices" | "events") {
            continue;
        }
        let delta = value - before.get(key).copied().unwrap_or(0.0);
        if delta > 0.0 {
            let what = if subresource.is_empty() {
                resource.clone()
            } else {
                format!("{resource}/{subresource}")
            };
            *out.entry(format!("{what} {verb} {code}")).or_default() += delta as u64;
        }
    }
    out
}

/// The samples of `name` in a Prometheus text exposition: (labels as written, value).
fn samples<'a>(metrics: &'a str, name: &str) -> Vec<(&'a str, f64)> {
    metrics
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let (series, value) = l.rsplit_once(' ')?;
            let labels = series.strip_prefix(name)?;
            (labels.is_empty() || labels.starts_with('{')).then(|| (labels, value.parse().unwrap_or(f64::NAN)))
        })
        .collect()
}

/// Events stored in `ns`, by "type/reason", listed in pages of 500.
async fn stored_events(client: &Client, ns: &str) -> BTreeMap<String, u64> {
    let api = Api::<Event>::namespaced(client.clone(), ns);
    let mut counts = BTreeMap::new();
    let mut params = ListParams::default().limit(500);
    loop {
        let page = api.list(&params).await.expect("events list");
        for event in &page.items {
            let key = format!(
                "{}/{}",
                event.type_.as_deref().unwrap_or("?"),
                event.reason.as_deref().unwrap_or("?")
            );
            *counts.entry(key).or_default() += 1;
        }
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(token) => params = params.continue_token(&token),
            None => return counts,
        }
    }
}

fn microservices(client: &Client, ns: &str) -> Api<DynamicObject> {
    let resource = ApiResource {
        group: "platform.example.io".into(),
        version: "v1alpha1".into(),
        api_version: "platform.example.io/v1alpha1".into(),
        kind: "Microservice".into(),
        plural: "microservices".into(),
    };
    Api::namespaced_with(client.clone(), ns, &resource)
}

/// Records, per object name, when a watch event first showed it Accepted at its generation.
fn watch_accepted(api: Api<DynamicObject>) -> Arc<Mutex<HashMap<String, Instant>>> {
    let accepted = Arc::new(Mutex::new(HashMap::new()));
    let sink = accepted.clone();
    tokio::spawn(async move {
        let mut events = watcher(api, watcher::Config::default()).boxed();
        while let Ok(Some(event)) = events.try_next().await {
            let objects = match event {
                watcher::Event::Apply(o) | watcher::Event::InitApply(o) => vec![o],
                _ => vec![],
            };
            for obj in objects {
                let status = obj.data.get("status");
                let done = status.is_some_and(|s| {
                    s["phase"] == "Accepted" && s["observedGeneration"].as_i64() == obj.metadata.generation
                });
                if done {
                    let name = obj.metadata.name.clone().unwrap_or_default();
                    sink.lock().unwrap().entry(name).or_insert_with(Instant::now);
                }
            }
        }
    });
    accepted
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn ms(d: Duration) -> String {
    format!("{:.0} ms", d.as_secs_f64() * 1000.0)
}

fn print_writes(title: &str, writes: &BTreeMap<String, u64>) {
    println!("  {title}:");
    if writes.is_empty() {
        println!("    (none)");
    }
    for (what, n) in writes {
        println!("    {what}: {n}");
    }
}

async fn admin_client(path: &Path) -> Client {
    let kubeconfig = Kubeconfig::read_from(path).expect("KMS_E2E_KUBECONFIG is readable");
    let mut config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .expect("kubeconfig is usable");
    config.read_timeout = None;
    Client::try_from(config).expect("client builds")
}

async fn install(admin: &Client) -> String {
    let crds: Api<CustomResourceDefinition> = Api::all(admin.clone());
    crds.patch(
        CRD_NAME,
        &PatchParams::apply("kms-bench").force(),
        &Patch::Apply(serde_json::to_value(crd()).unwrap()),
    )
    .await
    .expect("CRD applies");
    for _ in 0..100 {
        let established = crds
            .get(CRD_NAME)
            .await
            .ok()
            .and_then(|c| c.status?.conditions)
            .is_some_and(|c| c.iter().any(|c| c.type_ == "Established" && c.status == "True"));
        if established {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let ns = format!("kms-bench-{:x}", nanos as u64);
    Api::<Namespace>::all(admin.clone())
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": ns}})).unwrap(),
        )
        .await
        .expect("namespace created");
    ns
}

#[tokio::main]
async fn main() {
    let Some(kubeconfig) = std::env::var_os("KMS_E2E_KUBECONFIG")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
    else {
        eprintln!("operate benchmark skipped: KMS_E2E_KUBECONFIG is not set (a disposable cluster's admin kubeconfig)");
        return;
    };
    let objects = env_number("KMS_BENCH_OBJECTS", 1000);
    let clients = env_number("KMS_BENCH_CLIENTS", 16);
    let admin = admin_client(&kubeconfig).await;
    let ns = install(&admin).await;
    let api = microservices(&admin, &ns);
    println!("operate benchmark: {objects} Microservices, {clients} concurrent clients, namespace {ns}");

    // 1. Create.
    let operator = Operator::start(&kubeconfig, &ns);
    operator
        .wait_count("Watching microservices: initial list done", 1, Duration::from_secs(30))
        .await;
    operator
        .wait_count("Became the leader", 1, Duration::from_secs(30))
        .await;
    let accepted = watch_accepted(api.clone());
    tokio::time::sleep(Duration::from_millis(500)).await;
    let idle_rss = operator.rss_mib();
    let before = request_counts(&admin).await;
    let created: Vec<(String, Instant)> = futures::stream::iter(0..objects)
        .map(|i| {
            let api = api.clone();
            async move {
                let name = format!("ms-{i:05}");
                let obj: DynamicObject = serde_json::from_value(json!({
                    "apiVersion": "platform.example.io/v1alpha1", "kind": "Microservice",
                    "metadata": {"name": name},
                    "spec": {"image": IMAGE, "port": 1024 + i % 60000}
                }))
                .unwrap();
                api.create(&PostParams::default(), &obj)
                    .await
                    .unwrap_or_else(|e| panic!("create {name}: {e}"));
                (name, Instant::now())
            }
        })
        .buffer_unordered(clients)
        .collect()
        .await;
    let first_create = created.iter().map(|(_, t)| *t).min().unwrap();
    let last_create = created.iter().map(|(_, t)| *t).max().unwrap();
    let wait_start = Instant::now();
    while accepted.lock().unwrap().len() < objects {
        assert!(
            wait_start.elapsed() < Duration::from_secs(300),
            "only {} of {objects} Accepted",
            accepted.lock().unwrap().len()
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let seen = accepted.lock().unwrap().clone();
    let last_accepted = seen.values().copied().max().unwrap();
    let mut latencies: Vec<Duration> = created
        .iter()
        .map(|(name, t)| seen[name].saturating_duration_since(*t))
        .collect();
    latencies.sort();
    // Let the queued events go out before counting writes: until every Accepted event is
    // stored, shed or given up on (at most 60 s), then 1 s more.
    let drained = Instant::now();
    let events_settled = loop {
        let metrics = operator.metrics().await;
        let total = |name: &str| samples(&metrics, name).iter().map(|(_, v)| v).sum::<f64>();
        let settled = total("microservice_operator_events_posted_total")
            + total("microservice_operator_events_shed_total")
            + total("microservice_operator_event_post_failures_total");
        if settled >= objects as f64 || drained.elapsed() > Duration::from_secs(60) {
            break drained.elapsed();
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    tokio::time::sleep(Duration::from_secs(1)).await;
    let after = request_counts(&admin).await;
    let create_rss = operator.peak_rss_mib();
    let stored = stored_events(&admin, &ns).await;
    let accepted_events = stored.get("Normal/Accepted").copied().unwrap_or(0);
    let metrics = operator.metrics().await;
    let posted: f64 = samples(&metrics, "microservice_operator_events_posted_total")
        .iter()
        .map(|(_, v)| v)
        .sum();
    let shed = samples(&metrics, "microservice_operator_events_shed_total");
    let given_up = samples(&metrics, "microservice_operator_event_post_failures_total");
    let temporary_failures = operator.count("failed temporarily");

    println!("create:");
    println!(
        "  creates took {} ({:.0}/s)",
        ms(last_create - first_create),
        objects as f64 / (last_create - first_create).as_secs_f64()
    );
    println!(
        "  all Accepted {} after the last create",
        ms(last_accepted.saturating_duration_since(last_create))
    );
    println!(
        "  create→Accepted p50 {}, p99 {}, max {}",
        ms(percentile(&latencies, 50.0)),
        ms(percentile(&latencies, 99.0)),
        ms(*latencies.last().unwrap())
    );
    println!(
        "  operator peak RSS {create_rss:.1} MiB ({idle_rss:.1} MiB before the first create: {:.2} KiB per object)",
        (create_rss - idle_rss) * 1024.0 / objects as f64
    );
    println!(
        "  events stored by the operator (its events_posted_total): {posted:.0}; in the namespace: {}",
        stored
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!(
        "  Accepted events delivered and stored: {accepted_events} of {objects} ({:.2} %)",
        accepted_events as f64 * 100.0 / objects as f64
    );
    let by_labels = |list: &[(&str, f64)]| {
        if list.is_empty() {
            "none".to_string()
        } else {
            list.iter()
                .map(|(l, v)| format!("{l} {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    println!("  events shed (events_shed_total): {}", by_labels(&shed));
    println!(
        "  events given up on (event_post_failures_total): {}",
        by_labels(&given_up)
    );
    println!(
        "  log lines: 'Events shed' summaries {}, 'Failed to post an event' {}",
        operator.count("Events shed"),
        operator.count("Failed to post an event")
    );
    println!(
        "  events settled (stored, shed or given up) {} after all were Accepted",
        ms(events_settled)
    );
    println!("  handler retries logged: {temporary_failures}");
    match (&before, &after) {
        (Some(before), Some(after)) => {
            let mut writes = writes_between(before, after);
            // Our own creates are not the operator's writes.
            let own = writes.get("microservices POST 201").copied().unwrap_or(0);
            assert_eq!(own as usize, objects, "the benchmark's own creates");
            writes.remove("microservices POST 201");
            print_writes("operator writes (API server side, Leases excluded)", &writes);
            let total: u64 = writes.values().sum();
            println!("  writes per object {:.2}", total as f64 / objects as f64);
        }
        _ => println!("  writes: unknown (the API server's /metrics is not readable with this kubeconfig)"),
    }

    // 2. Restart over N unchanged objects.
    operator.stop();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = request_counts(&admin).await;
    let restarted = Operator::start(&kubeconfig, &ns);
    restarted
        .wait_count("Resuming is processed", objects, Duration::from_secs(120))
        .await;
    let started = restarted.process.started;
    let resumed = restarted
        .process
        .nth_time("Resuming is processed", objects)
        .unwrap()
        .saturating_duration_since(started);
    let listed = restarted
        .process
        .nth_time("Watching microservices: initial list done", 1)
        .map(|t| t.saturating_duration_since(started));
    tokio::time::sleep(Duration::from_secs(3)).await;
    let after = request_counts(&admin).await;
    println!("restart over {objects} unchanged objects:");
    println!(
        "  all resumed {} after the process started (initial list done after {})",
        ms(resumed),
        listed.map(ms).unwrap_or_else(|| "?".into())
    );
    let restart_rss = restarted.peak_rss_mib();
    println!(
        "  operator peak RSS {restart_rss:.1} MiB ({:.2} KiB per object over the idle RSS of the create phase)",
        (restart_rss - idle_rss) * 1024.0 / objects as f64
    );
    match (&before, &after) {
        (Some(before), Some(after)) => {
            let writes = writes_between(before, after);
            print_writes("writes (API server side, Leases excluded)", &writes);
            let total: u64 = writes.values().sum();
            println!("  writes per object {:.2}", total as f64 / objects as f64);
        }
        _ => println!("  writes: unknown (the API server's /metrics is not readable with this kubeconfig)"),
    }
    restarted.stop();
}
