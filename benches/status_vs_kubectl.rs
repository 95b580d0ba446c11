//! Benchmark of `status` on a real API server, side by side with `kubectl get` in one run
//! (issue 3, acceptance 4; issue 13, acceptance 4): wall time over N Microservices (default
//! 1000) against `kubectl get microservices -n NS -o json`, and the number of API calls `status`
//! makes (goals: at most 0.6× kubectl's time, issue 13; at most 3 + namespaces calls, plus 2 for
//! the operator `-o json` names: the Deployments list and the Lease of the namespace). Also the
//! peak RSS of each command (`/usr/bin/time -f %M`, when there), and the time and peak RSS of
//! `collect DIR -n NS` over the same objects.
//!
//! `KMS_E2E_KUBECONFIG=/path/admin.kubeconfig [KMS_KUBECTL=/path/kubectl] [KMS_BENCH_N=1000]
//!  [KMS_BENCH_NAMESPACE=NS] cargo bench --bench status_vs_kubectl`
//!
//! Creates namespace `kms-bench-*` with N objects whose status says fresh (server-side applied,
//! as the operator would), or, with `KMS_BENCH_NAMESPACE`, uses the objects already there (such
//! as those the `operate` bench leaves, handled by the real operator, with their events); then
//! times each command 7 times, alternating, and reports medians.

use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::discovery::ApiResource;
use kube::{Client, Config};
use serde_json::json;

use kubectl_microservice::cli::StatusArgs;
use kubectl_microservice::commands::status::live_report;
use kubectl_microservice::evidence::live::{LiveScope, caller_access};
use kubectl_microservice::resource::{CRD_NAME, crd};

const BIN: &str = env!("CARGO_BIN_EXE_kubectl-microservice");
const RUNS: usize = 7;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time(cmd: &mut Command) -> Duration {
    let start = Instant::now();
    let out = cmd.output().expect("command runs");
    let elapsed = start.elapsed();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    elapsed
}

const GNU_TIME: &str = "/usr/bin/time";

/// Wall time and peak RSS in MiB (GNU time's `%M`, `None` without /usr/bin/time) of one run of
/// `program args...`.
fn time_and_rss(program: &str, args: &[&str]) -> (Duration, Option<f64>) {
    if !std::path::Path::new(GNU_TIME).exists() {
        return (time(Command::new(program).args(args)), None);
    }
    let start = Instant::now();
    let out = Command::new(GNU_TIME)
        .args(["-f", "kms-bench-rss-kib=%M", program])
        .args(args)
        .output()
        .expect("command runs");
    let elapsed = start.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{program} {args:?}: {stderr}");
    let rss = stderr
        .lines()
        .find_map(|l| l.strip_prefix("kms-bench-rss-kib="))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .map(|kib| kib / 1024.0);
    (elapsed, rss)
}

fn mib(rss: Option<f64>) -> String {
    rss.map(|m| format!("{m:.1} MiB")).unwrap_or_else(|| "unknown".into())
}

#[tokio::main]
async fn main() {
    let Some(path) = std::env::var_os("KMS_E2E_KUBECONFIG").filter(|p| !p.is_empty()) else {
        println!("status_vs_kubectl skipped: KMS_E2E_KUBECONFIG is not set");
        return;
    };
    let kubectl = std::env::var("KMS_KUBECTL").unwrap_or_else(|_| "kubectl".into());
    let n: usize = std::env::var("KMS_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let kubeconfig = Kubeconfig::read_from(&path).expect("kubeconfig");
    let config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .expect("config");
    let admin = Client::try_from(config.clone()).expect("client");

    let crds: Api<CustomResourceDefinition> = Api::all(admin.clone());
    crds.patch(
        CRD_NAME,
        &PatchParams::apply("kms-bench").force(),
        &Patch::Apply(serde_json::to_value(crd()).unwrap()),
    )
    .await
    .expect("CRD");
    tokio::time::sleep(Duration::from_secs(1)).await;
    let existing = std::env::var("KMS_BENCH_NAMESPACE").ok().filter(|v| !v.is_empty());
    let ns = existing
        .clone()
        .unwrap_or_else(|| format!("kms-bench-{}", std::process::id()));
    if existing.is_none() {
        Api::<Namespace>::all(admin.clone())
            .create(
                &PostParams::default(),
                &serde_json::from_value(json!({"metadata": {"name": ns}})).unwrap(),
            )
            .await
            .expect("namespace");
        let resource = ApiResource {
            group: "platform.example.io".into(),
            version: "v1alpha1".into(),
            api_version: "platform.example.io/v1alpha1".into(),
            kind: "Microservice".into(),
            plural: "microservices".into(),
        };
        let api: Api<DynamicObject> = Api::namespaced_with(admin.clone(), &ns, &resource);
        let setup = Instant::now();
        futures::stream::iter(0..n)
            .for_each_concurrent(16, |i| {
                let api = api.clone();
                async move {
                    let name = format!("svc-{i:05}");
                    let obj: DynamicObject = serde_json::from_value(json!({
                        "apiVersion": "platform.example.io/v1alpha1", "kind": "Microservice",
                        "metadata": {"name": name}, "spec": {"image": format!("registry.example.com/svc-{i}:1.0.0"), "port": 8080}
                    }))
                    .unwrap();
                    api.create(&PostParams::default(), &obj).await.expect("create");
                    let status = json!({"apiVersion": "platform.example.io/v1alpha1", "kind": "Microservice",
                        "status": {"phase": "Accepted", "observedGeneration": 1}});
                    api.patch_status(&name, &PatchParams::apply("kubectl-microservice").force(), &Patch::Apply(&status))
                        .await
                        .expect("status");
                }
            })
            .await;
        println!("setup: {n} Microservices with status in {:?}", setup.elapsed());
    }

    let ns_path = path.to_string_lossy().to_string();
    let (_, kubectl_rss) = time_and_rss(
        &kubectl,
        &[
            "--kubeconfig",
            &ns_path,
            "get",
            "microservices",
            "-n",
            &ns,
            "-o",
            "json",
        ],
    );
    let (_, ours_rss) = time_and_rss(BIN, &["status", "--kubeconfig", &ns_path, "-n", &ns, "-o", "json"]);
    let bundle = std::env::temp_dir().join(format!("kms-bench-collect-{}", std::process::id()));
    let (collect_time, collect_rss) = time_and_rss(
        BIN,
        &[
            "collect",
            &bundle.to_string_lossy(),
            "--kubeconfig",
            &ns_path,
            "-n",
            &ns,
        ],
    );
    let bundle_bytes = std::fs::metadata(bundle.join("microservices.json"))
        .map(|m| m.len())
        .unwrap_or(0)
        + std::fs::metadata(bundle.join("events.json"))
            .map(|m| m.len())
            .unwrap_or(0);
    let _ = std::fs::remove_dir_all(&bundle);

    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    for _ in 0..RUNS {
        theirs.push(time(Command::new(&kubectl).args(["--kubeconfig"]).arg(&path).args([
            "get",
            "microservices",
            "-n",
            &ns,
            "-o",
            "json",
        ])));
        ours.push(time(
            Command::new(BIN)
                .args(["status", "--kubeconfig"])
                .arg(&path)
                .args(["-n", &ns, "-o", "json"]),
        ));
    }
    let (ours, theirs) = (median(ours), median(theirs));
    let ratio = ours.as_secs_f64() / theirs.as_secs_f64();

    // API calls, counted in-process through the same code path as the command.
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let counted = kube::client::ClientBuilder::try_from(config.clone())
        .expect("builder")
        .with_layer(&tower::util::MapRequestLayer::new(move |req| {
            counter.fetch_add(1, Ordering::Relaxed);
            req
        }))
        .build();
    let plan = LiveScope {
        namespace: Some(ns.clone()),
        server: config.cluster_url.to_string(),
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
        verbose: false,
        log_files: Default::default(),
        resource: Default::default(),
    };
    let access = caller_access(&counted, Some(&ns))
        .await
        .expect("the API server answers");
    let report = live_report(&counted, &plan, &access, &args, true, "bench")
        .await
        .expect("report");
    let n = if existing.is_some() { report.items.len() } else { n };
    assert_eq!(report.items.len(), n);
    assert!(report.items.iter().all(|i| i.verdict.as_str() == "fresh"));
    let calls = calls.load(Ordering::Relaxed);

    println!("objects: {n} in 1 namespace");
    println!(
        "kubectl get microservices -o json: median {:.0} ms over {RUNS} runs",
        theirs.as_secs_f64() * 1000.0
    );
    println!(
        "kubectl-microservice status -o json: median {:.0} ms over {RUNS} runs",
        ours.as_secs_f64() * 1000.0
    );
    println!(
        "ratio: {ratio:.2} (goal ≤ 0.60, issue 13) {}",
        if ratio <= 0.6 { "ok" } else { "OVER" }
    );
    println!(
        "peak RSS (one run each): kubectl get {}, status {}",
        mib(kubectl_rss),
        mib(ours_rss)
    );
    println!(
        "collect -n NS: {:.0} ms, peak RSS {}, microservices.json + events.json {:.1} MiB",
        collect_time.as_secs_f64() * 1000.0,
        mib(collect_rss),
        bundle_bytes as f64 / 1048576.0
    );
    println!(
        "API calls by status: {calls} (goal ≤ 6 = 3 + 1 namespace + 2 for the operator) {}",
        if calls <= 6 { "ok" } else { "OVER" }
    );
}
