//! Benchmark of `status -A` on a real API server, side by side with `kubectl get -A` (issue 22,
//! acceptance 3): N Microservices (default 10,000) across M namespaces (default 10), served by
//! several operators (one Deployment of ours per group of namespaces, 0 replicas: found by their
//! args, no image needed), every object's status fresh (server-side applied by the operator's
//! field manager, as `operate` writes it). Figures, each command a fresh process, RUNS runs
//! alternating, medians:
//!
//! - `status -A -o json` against `kubectl get microservices -A -o json` (goal ≤ 0.5×);
//! - `status -A` against `kubectl get microservices -A` (goal ≤ 1.0×);
//! - peak RSS of each (`/usr/bin/time -f %M`, when there; goal ≤ 2× kubectl's);
//! - the server's floor: the same list's pages fetched one after another in-process, bodies not
//!   decoded ([`server_floor`]), and each `status` median against it (what the command adds to
//!   the API server's own time), and the table against kubectl's `-o json` (issue 19's form)
//!   beside the floor's ratio to it (what a client at the floor would reach);
//! - the API calls `status -A` and `status -A -o json` make, in-process through the command's
//!   own code path, listed per kind and shape: a cluster-wide list, a list in one namespace, a
//!   get (goal: one list per kind, paged; never one per object or per namespace).
//!
//! `KMS_E2E_KUBECONFIG=/path/admin.kubeconfig [KMS_KUBECTL=kubectl] [KMS_BENCH_N=10000]
//!  [KMS_BENCH_NAMESPACES=10] [KMS_BENCH_PREFIX=kms-bench-all] [KMS_BENCH_RUNS=5]
//!  [KMS_BENCH_KEEP=1] [KMS_BENCH_BIN=dist/kubectl-microservice] cargo bench --bench status_all_namespaces`
//!
//! `KMS_BENCH_BIN` times another build of the binary than the bench's own (e.g. the static
//! release binary `scripts/release.sh` wrote); the API calls are counted in-process either way.
//!
//! `KMS_BENCH_RESOURCE=kopfexamples.kopf.dev` (issue 19, acceptance 5) benches a resource that
//! is not the Microservice: Kopf's example CRD (`kopfexamples.kopf.dev`, as Kopf's
//! `examples/crd.yaml` defines it; applied when the cluster has none), N `KopfExample`s as Kopf's
//! `examples/obj.yaml` spells them and as Kopf 1.38 leaves them after `01-minimal`'s create
//! handler (its `last-handled-configuration` annotation and the handler's result in status, both
//! written by the `kopf` field manager), one Kopf operator Deployment per group of namespaces
//! (`kopf run --standalone --namespace=...  /src/example.py`, the example's source in a mounted
//! ConfigMap, 0 replicas), and times `status --resource kopfexamples.kopf.dev -A [-o json]`
//! against `kubectl get kopfexamples.kopf.dev -A [-o json]`: the ratios to hold against the
//! Microservice path's (the same goals). Its namespaces default to `kms-bench-kex-*`.
//!
//! Namespaces `PREFIX-0` .. `PREFIX-{M-1}` are created (objects in them already, from a kept
//! run, are reused) and deleted at the end unless `KMS_BENCH_KEEP=1`. The CRD is applied only
//! when the cluster has none (a shared cluster's is left as it is).

use std::collections::BTreeMap;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::discovery::ApiResource;
use kube::{Client, Config};
use serde_json::json;

use kubectl_microservice::cli::StatusArgs;
use kubectl_microservice::commands::status::live_report;
use kubectl_microservice::evidence::live::{LiveScope, caller_access_for};
use kubectl_microservice::resource::identity::ResourceId;
use kubectl_microservice::resource::{CRD_NAME, FIELD_MANAGER, crd};

const OWN_BIN: &str = env!("CARGO_BIN_EXE_kubectl-microservice");
const GNU_TIME: &str = "/usr/bin/time";
/// Namespaces each operator watches.
const PER_OPERATOR: usize = 3;

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Wall time of one run (stdout discarded), asserting success.
fn time(program: &str, args: &[&str]) -> Duration {
    let start = Instant::now();
    let out = Command::new(program).args(args).output().expect("command runs");
    let elapsed = start.elapsed();
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    elapsed
}

/// Peak RSS in MiB of one run (GNU time's `%M`); `None` without /usr/bin/time.
fn rss(program: &str, args: &[&str]) -> Option<f64> {
    if !std::path::Path::new(GNU_TIME).exists() {
        return None;
    }
    let out = Command::new(GNU_TIME)
        .args(["-f", "kms-bench-rss-kib=%M", program])
        .args(args)
        .output()
        .expect("command runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{program} {args:?}: {stderr}");
    stderr
        .lines()
        .find_map(|l| l.strip_prefix("kms-bench-rss-kib="))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .map(|kib| kib / 1024.0)
}

/// What the bench fills the cluster with and times: the Microservice (default) or Kopf's
/// example resource (`KMS_BENCH_RESOURCE=kopfexamples.kopf.dev`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Target {
    Microservice,
    KopfExample,
}

/// Kopf's example CRD (`examples/crd.yaml` of nolar/kopf, as the API server returned it in a
/// captured bundle): read, and stripped of what the server sets, when the cluster has none.
const KOPF_EXAMPLE_CRD: &str = include_str!("../tests/fixtures/kopf-examples-captured/01-1.38-created/crd.json");
/// `examples/01-minimal/example.py` of Kopf 1.38: the operators' mounted source.
const KOPF_EXAMPLE_SOURCE: &str = include_str!("../tests/fixtures/kopf-examples/01-minimal/example.py");

impl Target {
    fn from_env() -> Target {
        match std::env::var("KMS_BENCH_RESOURCE").unwrap_or_default().as_str() {
            "" | "microservices" | "microservices.platform.example.io" => Target::Microservice,
            "kopfexamples" | "kopfexamples.kopf.dev" => Target::KopfExample,
            other => panic!(
                "KMS_BENCH_RESOURCE={other:?}: expected microservices.platform.example.io or kopfexamples.kopf.dev"
            ),
        }
    }

    /// The type as `kubectl get` and `--resource` take it.
    fn kubectl_type(self) -> &'static str {
        match self {
            Target::Microservice => "microservices",
            Target::KopfExample => "kopfexamples.kopf.dev",
        }
    }

    fn default_prefix(self) -> &'static str {
        match self {
            Target::Microservice => "kms-bench-all",
            Target::KopfExample => "kms-bench-kex",
        }
    }

    fn crd(self) -> CustomResourceDefinition {
        match self {
            Target::Microservice => crd(),
            Target::KopfExample => {
                let mut value: serde_json::Value = serde_json::from_str(KOPF_EXAMPLE_CRD).expect("the CRD fixture");
                let name = value["metadata"]["name"].clone();
                value["metadata"] = json!({"name": name});
                value.as_object_mut().unwrap().remove("status");
                serde_json::from_value(value).expect("a CRD")
            }
        }
    }

    fn resource_id(self) -> ResourceId {
        match self {
            Target::Microservice => ResourceId::microservice(),
            Target::KopfExample => ResourceId::from_crd(&self.crd()).expect("Kopf's CRD names a resource"),
        }
    }

    fn api(self, client: &Client, ns: &str) -> Api<DynamicObject> {
        let id = self.resource_id();
        let resource = ApiResource {
            group: id.group.clone(),
            version: id.version.clone(),
            api_version: id.api_version(),
            kind: id.kind.clone(),
            plural: id.plural.clone(),
        };
        Api::namespaced_with(client.clone(), ns, &resource)
    }

    /// One object named `name` made as its operator leaves it, fresh: spec applied by the
    /// bench's field manager, then what the operator writes (ours: status by its field manager;
    /// Kopf: its diff-base annotation, then the handler's result in status, as manager `kopf`).
    async fn make(self, api: &Api<DynamicObject>, name: &str, i: usize) {
        let id = self.resource_id();
        let (spec, metadata) = match self {
            Target::Microservice => (
                json!({"image": format!("registry.example.com/svc-{i}:1.0.0"), "port": 8080}),
                json!({"name": name}),
            ),
            Target::KopfExample => (
                json!({"duration": "1m", "field": "value", "items": ["item1", format!("item-{i}")]}),
                json!({"name": name, "labels": {"somelabel": "somevalue"},
                    "annotations": {"someannotation": "somevalue"}}),
            ),
        };
        let object = json!({"apiVersion": id.api_version(), "kind": id.kind, "metadata": metadata, "spec": spec});
        api.patch(name, &PatchParams::apply("kms-bench"), &Patch::Apply(&object))
            .await
            .expect("apply");
        match self {
            Target::Microservice => {
                let status = json!({"apiVersion": id.api_version(), "kind": id.kind,
                    "status": {"phase": "Accepted", "observedGeneration": 1}});
                api.patch_status(name, &PatchParams::apply(FIELD_MANAGER).force(), &Patch::Apply(&status))
                    .await
                    .expect("status");
            }
            Target::KopfExample => {
                // Kopf 1.38's diff-base: the essence of the object it handled, one line, a newline.
                let essence = json!({"spec": spec, "metadata": {"labels": {"somelabel": "somevalue"},
                    "annotations": {"someannotation": "somevalue"}}});
                let last = format!("{}\n", serde_json::to_string(&essence).unwrap());
                let kopf = PatchParams {
                    field_manager: Some("kopf".into()),
                    ..Default::default()
                };
                let status = json!({"status": {"create_fn": {"message": "hello world"}}});
                api.patch_status(name, &kopf, &Patch::Merge(&status))
                    .await
                    .expect("status");
                let annotation =
                    json!({"metadata": {"annotations": {"kopf.zalando.org/last-handled-configuration": last}}});
                api.patch(name, &kopf, &Patch::Merge(&annotation))
                    .await
                    .expect("annotation");
            }
        }
    }
}

/// The kind and shape of one request path: `microservices list (all namespaces)`,
/// `deployments list (one namespace)`, `leases get`, `selfsubjectrulesreviews create`, ...
fn call_kind(method: &str, path: &str) -> String {
    let path = path.split('?').next().unwrap_or(path);
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    // /api/v1/... or /apis/GROUP/VERSION/...
    let rest: &[&str] = match parts.first() {
        Some(&"api") => parts.get(2..).unwrap_or(&[]),
        Some(&"apis") => parts.get(3..).unwrap_or(&[]),
        _ => return format!("{method} {path}"),
    };
    let (namespaced, rest) = match rest {
        ["namespaces", _ns, tail @ ..] if !tail.is_empty() => (true, tail),
        other => (false, other),
    };
    match (method, rest) {
        ("GET", [kind]) if namespaced => format!("{kind} list (one namespace)"),
        ("GET", [kind]) => format!("{kind} list (all namespaces)"),
        ("GET", [kind, _name]) => format!("{kind} get"),
        ("GET", [kind, _name, sub]) => format!("{kind}/{sub} get"),
        ("POST", [kind]) => format!("{kind} create"),
        _ => format!("{method} {path}"),
    }
}

/// Runs the command's own report through a client that records every request; the calls per
/// kind and shape, and the number of rows.
async fn counted_calls(config: &Config, target: Target, names_operator: bool) -> (BTreeMap<String, usize>, usize) {
    let calls: Arc<Mutex<BTreeMap<String, usize>>> = Arc::default();
    let counter = calls.clone();
    let client = kube::client::ClientBuilder::try_from(config.clone())
        .expect("builder")
        .with_layer(&tower::util::MapRequestLayer::new(move |req: http::Request<_>| {
            let kind = call_kind(req.method().as_str(), &req.uri().to_string());
            *counter.lock().unwrap().entry(kind).or_insert(0) += 1;
            req
        }))
        .build();
    let plan = LiveScope {
        namespace: None,
        server: config.cluster_url.to_string(),
        resource: target.resource_id(),
        ..Default::default()
    };
    let args = StatusArgs {
        name: None,
        bundle: None,
        exit_code: false,
        watch: false,
        interval: Duration::from_secs(2),
        operator: None,
        skew: Duration::from_secs(2),
        log_files: Default::default(),
        resource: Default::default(),
        verbose: false,
    };
    let access = caller_access_for(&client, None, &plan.resource)
        .await
        .expect("the API server answers");
    let report = live_report(&client, &plan, &access, &args, names_operator, "bench")
        .await
        .expect("report");
    let rows = report.items.len();
    let calls = calls.lock().unwrap().clone();
    (calls, rows)
}

/// Creates namespace `ns` (when missing) and, when it holds fewer than `count` objects of
/// `target`, `count` fresh ones ([`Target::make`]).
async fn fill(admin: &Client, target: Target, ns: &str, count: usize, first: usize) {
    let namespaces: Api<Namespace> = Api::all(admin.clone());
    if namespaces.get_opt(ns).await.expect("namespaces").is_none() {
        namespaces
            .create(
                &PostParams::default(),
                &serde_json::from_value(json!({"metadata": {"name": ns}})).unwrap(),
            )
            .await
            .expect("namespace");
    }
    let api = target.api(admin, ns);
    let have = api
        .list_metadata(&ListParams::default().limit(1))
        .await
        .expect("list")
        .metadata
        .remaining_item_count
        .map_or(0, |r| r as usize + 1);
    if have >= count {
        return;
    }
    futures::stream::iter(0..count)
        .for_each_concurrent(24, |i| {
            let api = api.clone();
            async move { target.make(&api, &format!("svc-{:05}", first + i), first + i).await }
        })
        .await;
}

/// One operator Deployment in `ns`, watching `watched`, scaled to 0 (no Pod, no image
/// needed): ours (`operate --namespace ...`), or for Kopf's example resource a Kopf operator
/// (`kopf run --standalone --namespace=... /src/example.py`, the example in a ConfigMap
/// mounted at /src).
async fn operator(admin: &Client, target: Target, ns: &str, watched: &[String]) {
    let (name, labels, container, volumes) = match target {
        Target::Microservice => {
            let mut command = vec!["kubectl-microservice".to_string(), "operate".into()];
            for w in watched {
                command.extend(["--namespace".into(), w.clone()]);
            }
            let labels =
                json!({"app.kubernetes.io/name": "kubectl-microservice", "app.kubernetes.io/component": "operator"});
            let container = json!({"name": "operator", "image": kubectl_microservice::install::DEFAULT_IMAGE,
                "command": command});
            ("microservice-operator", labels, container, json!([]))
        }
        Target::KopfExample => {
            let mut command = vec!["kopf".to_string(), "run".into(), "--standalone".into()];
            command.extend(watched.iter().map(|w| format!("--namespace={w}")));
            command.push("/src/example.py".into());
            let config_map = json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "kopf-example-src", "namespace": ns},
                "data": {"example.py": KOPF_EXAMPLE_SOURCE}});
            Api::<k8s_openapi::api::core::v1::ConfigMap>::namespaced(admin.clone(), ns)
                .patch(
                    "kopf-example-src",
                    &PatchParams::apply("kms-bench").force(),
                    &Patch::Apply(&config_map),
                )
                .await
                .expect("the example's ConfigMap");
            let container = json!({"name": "operator", "image": "localhost/kopf:1.38", "command": command,
                "volumeMounts": [{"name": "src", "mountPath": "/src"}]});
            let volumes = json!([{"name": "src", "configMap": {"name": "kopf-example-src"}}]);
            (
                "kopfexample-operator",
                json!({"app": "kopfexample-operator"}),
                container,
                volumes,
            )
        }
    };
    let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns, "labels": labels},
        "spec": {"replicas": 0, "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [container], "volumes": volumes}}}});
    Api::<Deployment>::namespaced(admin.clone(), ns)
        .patch(
            name,
            &PatchParams::apply("kms-bench").force(),
            &Patch::Apply(&deployment),
        )
        .await
        .expect("operator Deployment");
}

/// The API server's own time for the list `status -A` reads: its pages of 500 fetched one
/// after another through `client`, each body read but not decoded (the continue token cut from
/// its text). What no client of one paged list can go below: the yardstick that tells the
/// server's time from the command's (issue 19).
async fn server_floor(client: &Client, target: Target) -> Duration {
    let id = target.resource_id();
    let path = format!("/apis/{}/{}/{}", id.group, id.version, id.plural);
    let start = Instant::now();
    let mut token: Option<String> = None;
    loop {
        let mut uri = format!("{path}?limit=500");
        if let Some(t) = &token {
            uri.push_str(&format!("&continue={t}"));
        }
        let request = http::Request::get(uri).body(Vec::new()).expect("request");
        let body = client.request_text(request).await.expect("a page");
        // A list's metadata follows its items: the token is near the end.
        token = body
            .rfind("\"continue\":\"")
            .map(|at| &body[at + 12..])
            .and_then(|rest| rest.split('"').next())
            .filter(|t| !t.is_empty())
            .map(str::to_string);
        if token.is_none() {
            return start.elapsed();
        }
    }
}

fn ratio_line(what: &str, ours: Duration, theirs: Duration, goal: f64) -> String {
    let ratio = ours.as_secs_f64() / theirs.as_secs_f64();
    format!(
        "{what}: ours {:.0} ms, kubectl {:.0} ms, ratio {ratio:.2} (goal ≤ {goal:.1}) {}",
        ours.as_secs_f64() * 1000.0,
        theirs.as_secs_f64() * 1000.0,
        if ratio <= goal { "ok" } else { "OVER" }
    )
}

#[tokio::main]
async fn main() {
    let Some(path) = std::env::var_os("KMS_E2E_KUBECONFIG").filter(|p| !p.is_empty()) else {
        println!("status_all_namespaces skipped: KMS_E2E_KUBECONFIG is not set");
        return;
    };
    let kubectl = std::env::var("KMS_KUBECTL").unwrap_or_else(|_| "kubectl".into());
    let n = env_number("KMS_BENCH_N", 10_000);
    let spaces = env_number("KMS_BENCH_NAMESPACES", 10).max(1);
    let runs = env_number("KMS_BENCH_RUNS", 5).max(1);
    let target = Target::from_env();
    let prefix = std::env::var("KMS_BENCH_PREFIX").unwrap_or_else(|_| target.default_prefix().into());
    let keep = std::env::var("KMS_BENCH_KEEP").is_ok_and(|v| v == "1");
    let bin = std::env::var("KMS_BENCH_BIN")
        .ok()
        .filter(|b| !b.is_empty())
        .unwrap_or_else(|| OWN_BIN.into());
    let bin = bin.as_str();
    let kubeconfig = Kubeconfig::read_from(&path).expect("kubeconfig");
    let config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .expect("config");
    let admin = Client::try_from(config.clone()).expect("client");

    let crds: Api<CustomResourceDefinition> = Api::all(admin.clone());
    let target_crd = target.crd();
    let crd_name = target_crd.metadata.name.clone().unwrap_or_else(|| CRD_NAME.into());
    if crds.get_opt(&crd_name).await.expect("CRDs").is_none() {
        crds.create(&PostParams::default(), &target_crd).await.expect("CRD");
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    let names: Vec<String> = (0..spaces).map(|i| format!("{prefix}-{i}")).collect();
    let setup = Instant::now();
    let per = n.div_ceil(spaces);
    futures::stream::iter(names.iter().enumerate())
        .for_each_concurrent(4, |(i, ns)| {
            let admin = admin.clone();
            async move { fill(&admin, target, ns, per.min(n - (i * per).min(n)), i * per).await }
        })
        .await;
    let operators: Vec<&[String]> = names.chunks(PER_OPERATOR).collect();
    for group in &operators {
        operator(&admin, target, &group[0], group).await;
    }
    println!(
        "setup: {n} {} in {spaces} namespaces ({prefix}-*), {} operators, in {:.0?}",
        target.kubectl_type(),
        operators.len(),
        setup.elapsed()
    );

    let kc = path.to_string_lossy().to_string();
    let kind = target.kubectl_type();
    let ours = |more: &[&'static str]| -> Vec<&str> {
        let mut args = vec!["status", "--kubeconfig", &kc, "-A"];
        if target != Target::Microservice {
            args.extend(["--resource", kind]);
        }
        args.extend(more);
        args
    };
    let theirs = |more: &[&'static str]| -> Vec<&str> {
        let mut args = vec!["--kubeconfig", &kc, "get", kind, "-A"];
        args.extend(more);
        args
    };
    let commands: [(&str, Vec<&str>, Vec<&str>, f64); 2] = [
        ("-o json", ours(&["-o", "json"]), theirs(&["-o", "json"]), 0.5),
        ("table", ours(&[]), theirs(&[]), 1.0),
    ];
    let mut lines = Vec::new();
    let mut ours_medians = Vec::new();
    let mut theirs_medians = Vec::new();
    for (what, ours_args, theirs_args, goal) in &commands {
        // One warm-up each, then alternating runs.
        time(bin, ours_args);
        time(&kubectl, theirs_args);
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        for _ in 0..runs {
            theirs.push(time(&kubectl, theirs_args));
            ours.push(time(bin, ours_args));
        }
        let (ours, theirs) = (median(ours), median(theirs));
        ours_medians.push((*what, ours));
        theirs_medians.push((*what, theirs));
        lines.push(ratio_line(
            &format!("status -A {what} vs kubectl get {kind} -A {what}, median of {runs}"),
            ours,
            theirs,
            *goal,
        ));
        let (ours_rss, theirs_rss) = (rss(bin, ours_args), rss(&kubectl, theirs_args));
        if let (Some(o), Some(t)) = (ours_rss, theirs_rss) {
            lines.push(format!(
                "  peak RSS: ours {o:.1} MiB, kubectl {t:.1} MiB, ratio {:.2} (goal ≤ 2.0) {}",
                o / t,
                if o <= 2.0 * t { "ok" } else { "OVER" }
            ));
        }
    }
    let mut floors = Vec::new();
    for _ in 0..runs {
        floors.push(server_floor(&admin, target).await);
    }
    let floor = median(floors);
    let against: Vec<String> = ours_medians
        .iter()
        .map(|(what, ours)| format!("status -A {what} {:.2}× it", ours.as_secs_f64() / floor.as_secs_f64()))
        .collect();
    lines.push(format!(
        "server floor (the list's pages one after another, not decoded), median of {runs}: {:.0} ms; {}",
        floor.as_secs_f64() * 1000.0,
        against.join(", ")
    ));
    // Issue 19's form (the table against kubectl's `-o json`), and the ratio a client at the
    // floor would reach: the ratio to kubectl depends on the objects' size (the server's time
    // grows with their bytes, kubectl's less so), so two resources' ratios compare only beside
    // their floors' (docs/performance.md).
    if let (Some((_, table)), Some((_, json))) = (
        ours_medians.iter().find(|(what, _)| *what == "table"),
        theirs_medians.iter().find(|(what, _)| *what == "-o json"),
    ) {
        lines.push(format!(
            "status -A vs kubectl get {kind} -A -o json (issue 19's form): ratio {:.2}; the server's floor {:.2} of kubectl's",
            table.as_secs_f64() / json.as_secs_f64(),
            floor.as_secs_f64() / json.as_secs_f64()
        ));
    }
    for (what, names_operator) in [("status -A", false), ("status -A -o json", true)] {
        let (calls, rows) = counted_calls(&config, target, names_operator).await;
        assert!(rows >= n, "{what}: {rows} rows, expected at least {n}");
        let total: usize = calls.values().sum();
        lines.push(format!("API calls by {what} ({rows} rows): {total}"));
        for (kind, count) in &calls {
            lines.push(format!("  {count:>4}  {kind}"));
        }
        // One call per operator (its Pods by its selector, in its namespace) is what the
        // verdicts need; as many calls as namespaces listed would be one per namespace.
        if let Some((kind, _)) = calls
            .iter()
            .find(|(k, c)| k.ends_with("(one namespace)") && **c >= spaces.max(operators.len() + 1))
        {
            lines.push(format!("  OVER: {kind} once per namespace"));
        }
    }
    if let Ok(v) = Command::new(bin).arg("--version").output() {
        lines.push(format!("timed: {bin}: {}", String::from_utf8_lossy(&v.stdout).trim()));
    }
    let version = Command::new(&kubectl).args(["version", "--kubeconfig", &kc]).output();
    if let Ok(v) = version {
        lines.push(format!(
            "versions: {}",
            String::from_utf8_lossy(&v.stdout)
                .lines()
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    for line in &lines {
        println!("{line}");
    }

    if !keep {
        let namespaces: Api<Namespace> = Api::all(admin.clone());
        for ns in &names {
            let _ = namespaces.delete(ns, &DeleteParams::default()).await;
        }
        println!("deleted namespaces {prefix}-0 .. {prefix}-{}", spaces - 1);
    }
}
