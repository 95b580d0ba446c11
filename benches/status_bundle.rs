//! Offline benchmark of `status -A` over a generated bundle (issue 22, acceptance 3; no cluster
//! needed): N Microservices (default 10,000) across M namespaces (default 10), handled by one
//! **cluster-wide** Kopf 1.38 operator (its Deployment runs `kopf run` without a namespace
//! flag) whose Pod log names every object in Kopf 1.38's own wording (`[ns/name] Handler
//! 'accept' succeeded.`, `[ns/name] Creation is processed: 1 succeeded; 0 failed.`: 2 lines per
//! object), beside one Deployment of ours per three namespaces (0 replicas). The evidence other
//! than the objects, the operators and the log is `examples/healthy`'s (CRD, RBAC, the Kopf
//! operator's source ConfigMap).
//!
//! Figures, each command a fresh process of the bench's own build (or `KMS_BENCH_BIN`), RUNS
//! runs, medians: wall time of `status -A --bundle DIR` and `status -A --bundle DIR -o json`,
//! peak RSS of each (`/usr/bin/time -f %M`, when there), the size of what each prints, and with
//! `KMS_BENCH_CALLGRIND=1` the instructions each executes (`valgrind --tool=callgrind`: the same
//! count on a loaded machine, unlike wall time).
//!
//! `[KMS_BENCH_N=10000] [KMS_BENCH_NAMESPACES=10] [KMS_BENCH_RUNS=3] [KMS_BENCH_DIR=/tmp/b]
//!  [KMS_BENCH_BIN=target/release/kubectl-microservice] [KMS_BENCH_CALLGRIND=1]
//!  cargo bench --bench status_bundle`
//!
//! `KMS_BENCH_DIR` keeps the bundle there (written again on every run); without it the bundle
//! lives in a temporary directory removed at the end.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const OWN_BIN: &str = env!("CARGO_BIN_EXE_kubectl-microservice");
const TEMPLATE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/healthy");
const GNU_TIME: &str = "/usr/bin/time";
/// The cluster-wide Kopf operator's namespace and Deployment.
const KOPF_NAMESPACE: &str = "kopf-system";
/// Namespaces each operator of ours watches.
const PER_OPERATOR: usize = 3;
/// The bundle's "now"; every object and log line is older.
const CAPTURED_AT: &str = "2026-12-02T08:00:00Z";

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("template file")).expect("template JSON")
}

fn write(path: &Path, value: &Value) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("bundle directory");
    std::fs::write(path, serde_json::to_vec(value).expect("JSON")).expect("bundle file");
}

/// The items of a template file: a `List`'s, or the one object it holds.
fn items(doc: Value) -> Vec<Value> {
    match doc.get("items").and_then(Value::as_array) {
        Some(items) => items.clone(),
        None => vec![doc],
    }
}

fn list(items: Vec<Value>) -> Value {
    json!({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items})
}

/// Kopf's `full` time of the `k`-th log record: 2026-12-02 07:00:00,000 plus 250 ms each.
fn kopf_time(k: usize) -> String {
    let ms = k * 250;
    let (s, ms) = (ms / 1000, ms % 1000);
    format!(
        "2026-12-02 {:02}:{:02}:{:02},{ms:03}",
        7 + s / 3600,
        (s / 60) % 60,
        s % 60
    )
}

/// The RFC 3339 time of the `k`-th object's creation: 2026-12-02 06:59:59 plus 250 ms each
/// (to the second), a second before its first log record.
fn created(k: usize) -> String {
    let s = 6 * 3600 + 3599 + k / 4;
    format!("2026-12-02T{:02}:{:02}:{:02}Z", s / 3600, (s / 60) % 60, s % 60)
}

/// One Microservice as a cluster holds it after both operators handled it: spec applied by the
/// bench, status applied by ours (`observedGeneration`), Kopf's diff-base annotation and phase.
fn microservice(ns: &str, name: &str, k: usize) -> Value {
    let image = format!("registry.example.com/{name}:1.0.0");
    let spec = json!({"image": image, "port": 8080});
    let time = created(k);
    json!({
        "apiVersion": "platform.example.io/v1alpha1",
        "kind": "Microservice",
        "metadata": {
            "annotations": {
                "kopf.zalando.org/last-handled-configuration": format!("{}\n", json!({"spec": spec})),
            },
            "creationTimestamp": time,
            "generation": 1,
            "managedFields": [
                {"apiVersion": "platform.example.io/v1alpha1", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:spec": {"f:image": {}, "f:port": {}}},
                 "manager": "kms-bench", "operation": "Apply", "time": time},
                {"apiVersion": "platform.example.io/v1alpha1", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:status": {"f:observedGeneration": {}, "f:phase": {}}},
                 "manager": "kubectl-microservice", "operation": "Apply", "subresource": "status", "time": time},
                {"apiVersion": "platform.example.io/v1alpha1", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:metadata": {"f:annotations": {".": {}, "f:kopf.zalando.org/last-handled-configuration": {}}}},
                 "manager": "kopf", "operation": "Update", "time": time},
            ],
            "name": name,
            "namespace": ns,
            "resourceVersion": format!("{}", 100_000 + k),
            "uid": format!("00000000-0000-4000-8000-{k:012}"),
        },
        "spec": spec,
        "status": {"phase": "Accepted", "observedGeneration": 1},
    })
}

/// Drops `--namespace`/`-n` flags (and their values) from a container's command: Kopf then
/// serves every namespace.
fn cluster_wide(command: &mut Value) {
    let Some(args) = command.as_array() else { return };
    let mut kept = Vec::new();
    let mut skip = false;
    for arg in args {
        let s = arg.as_str().unwrap_or("");
        if skip {
            skip = false;
        } else if s == "--namespace" || s == "-n" {
            skip = true;
        } else if !s.starts_with("--namespace=") {
            kept.push(arg.clone());
        }
    }
    *command = Value::Array(kept);
}

/// Moves a template object of `examples/healthy` into the Kopf operator's namespace, cluster-wide.
fn kopf_object(mut object: Value) -> Value {
    object["metadata"]["namespace"] = json!(KOPF_NAMESPACE);
    if let Some(annotations) = object["metadata"]["annotations"].as_object_mut() {
        annotations.remove("kubectl.kubernetes.io/last-applied-configuration");
    }
    // A Deployment's containers are in its template, a Pod's in its spec.
    let spec = if object["spec"].get("template").is_some() {
        &mut object["spec"]["template"]["spec"]
    } else {
        &mut object["spec"]
    };
    if let Some(containers) = spec.get_mut("containers").and_then(Value::as_array_mut) {
        for c in containers {
            cluster_wide(&mut c["command"]);
        }
    }
    object
}

/// One Deployment of ours in `ns`, watching `watched`, scaled to 0 (as the live bench's).
fn our_operator(ns: &str, watched: &[String]) -> Value {
    let mut command = vec!["kubectl-microservice".to_string(), "operate".into()];
    for w in watched {
        command.extend(["--namespace".into(), w.clone()]);
    }
    let labels = json!({"app.kubernetes.io/name": "kubectl-microservice", "app.kubernetes.io/component": "operator"});
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "microservice-operator", "namespace": ns, "labels": labels,
            "uid": format!("00000000-0000-4000-9000-{:012}", watched.len()), "generation": 1,
            "creationTimestamp": "2026-12-02T06:00:00Z"},
        "spec": {"replicas": 0, "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [{
                "name": "operator", "image": kubectl_microservice::install::DEFAULT_IMAGE, "command": command}]}}},
        "status": {"observedGeneration": 1}})
}

/// Writes the bundle into `dir` (emptied first); the Kopf operator's log size in lines.
fn generate(dir: &Path, n: usize, spaces: usize) -> usize {
    let _ = std::fs::remove_dir_all(dir);
    let template = Path::new(TEMPLATE);
    for file in [
        "crd.json",
        "rbac/roles.json",
        "rbac/rolebindings.json",
        "rbac/clusterroles.json",
        "rbac/clusterrolebindings.json",
        "rbac/access-reviews.json",
    ] {
        write(&dir.join(file), &read(&template.join(file)));
    }
    write(
        &dir.join("meta.json"),
        &json!({"capturedAt": CAPTURED_AT, "context": "bench", "allNamespaces": true}),
    );
    write(&dir.join("events.json"), &list(Vec::new()));

    let names: Vec<String> = (0..spaces).map(|i| format!("bench-all-{i}")).collect();
    let per = n.div_ceil(spaces);
    let mut objects = Vec::with_capacity(n);
    let mut log = String::new();
    let mut line = 0;
    for k in 0..n {
        let ns = &names[k / per];
        let name = format!("svc-{k:05}");
        objects.push(microservice(ns, &name, k));
        for message in [
            "Handler 'accept' succeeded.",
            "Creation is processed: 1 succeeded; 0 failed.",
        ] {
            log.push_str(&format!(
                "[{}] kopf.objects         [INFO    ] [{ns}/{name}] {message}\n",
                kopf_time(line)
            ));
            line += 1;
        }
    }
    write(&dir.join("microservices.json"), &list(objects));

    let mut deployments: Vec<Value> = items(read(&template.join("operator/deployment.json")))
        .into_iter()
        .map(kopf_object)
        .collect();
    deployments.extend(names.chunks(PER_OPERATOR).map(|group| our_operator(&group[0], group)));
    write(&dir.join("operator/deployment.json"), &list(deployments));
    let pods: Vec<Value> = items(read(&template.join("operator/pods.json")))
        .into_iter()
        .map(kopf_object)
        .collect();
    for pod in &pods {
        let pod_name = pod["metadata"]["name"].as_str().expect("Pod name");
        let path = dir.join(format!("operator/logs/{pod_name}.operator.log"));
        std::fs::create_dir_all(path.parent().expect("parent")).expect("logs directory");
        std::fs::write(path, &log).expect("log");
    }
    write(&dir.join("operator/pods.json"), &list(pods));
    let configmaps: Vec<Value> = items(read(&template.join("operator/configmaps.json")))
        .into_iter()
        .map(kopf_object)
        .collect();
    write(&dir.join("operator/configmaps.json"), &list(configmaps));
    line
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Wall time and stdout size of one run; exit 0 and 1 are answers (1: something may be hidden).
fn time(program: &str, args: &[&str]) -> (Duration, usize) {
    let start = Instant::now();
    let out = Command::new(program).args(args).output().expect("command runs");
    let elapsed = start.elapsed();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (elapsed, out.stdout.len())
}

/// Peak RSS in MiB of one run (GNU time's `%M`); `None` without /usr/bin/time.
fn rss(program: &str, args: &[&str]) -> Option<f64> {
    if !Path::new(GNU_TIME).exists() {
        return None;
    }
    let out = Command::new(GNU_TIME)
        .args(["-f", "kms-bench-rss-kib=%M", program])
        .args(args)
        .output()
        .expect("command runs");
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .find_map(|l| l.strip_prefix("kms-bench-rss-kib="))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .map(|kib| kib / 1024.0)
}

/// Instructions executed by one run under callgrind (its `Collected : N` line), the profile
/// kept at `out` for `callgrind_annotate`.
fn instructions(program: &str, args: &[&str], out: &Path) -> Option<u64> {
    let run = Command::new("valgrind")
        .arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}", out.display()))
        .arg(program)
        .args(args)
        .output()
        .ok()?;
    String::from_utf8_lossy(&run.stderr)
        .lines()
        .find_map(|l| l.split_once("Collected :").map(|(_, n)| n.trim().to_string()))
        .and_then(|n| n.parse().ok())
}

fn main() {
    let n = env_number("KMS_BENCH_N", 10_000);
    let spaces = env_number("KMS_BENCH_NAMESPACES", 10).max(1);
    let runs = env_number("KMS_BENCH_RUNS", 3).max(1);
    let bin = std::env::var("KMS_BENCH_BIN")
        .ok()
        .filter(|b| !b.is_empty())
        .unwrap_or_else(|| OWN_BIN.into());
    let temp;
    let dir: PathBuf = match std::env::var_os("KMS_BENCH_DIR").filter(|d| !d.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => {
            temp = tempfile::tempdir().expect("temporary directory");
            temp.path().join("bundle")
        }
    };
    let started = Instant::now();
    let lines = generate(&dir, n, spaces);
    println!(
        "bundle {}: {n} Microservices in {spaces} namespaces, a cluster-wide Kopf operator with a \
         {lines}-line log, {} operators of ours at 0 replicas (written in {:.1?})",
        dir.display(),
        spaces.div_ceil(PER_OPERATOR),
        started.elapsed()
    );
    let d = dir.to_string_lossy().to_string();
    let forms: [(&str, Vec<&str>); 2] = [
        ("status -A", vec!["status", "-A", "--bundle", &d]),
        ("status -A -o json", vec!["status", "-A", "--bundle", &d, "-o", "json"]),
    ];
    let callgrind = std::env::var("KMS_BENCH_CALLGRIND").is_ok_and(|v| v == "1");
    for (what, args) in &forms {
        let (_, size) = time(&bin, args); // warm-up (page cache)
        let times: Vec<Duration> = (0..runs).map(|_| time(&bin, args).0).collect();
        let mut line = format!(
            "{what}: median of {runs} {:.0} ms (min {:.0} ms), {size} bytes out",
            median(times.clone()).as_secs_f64() * 1000.0,
            times.iter().min().expect("a run").as_secs_f64() * 1000.0
        );
        if let Some(mib) = rss(&bin, args) {
            line.push_str(&format!(", peak RSS {mib:.1} MiB"));
        }
        if callgrind {
            let out = dir.with_extension(format!("callgrind.{}", what.replace([' ', '-'], "")));
            match instructions(&bin, args, &out) {
                Some(ir) => line.push_str(&format!(", {ir} instructions (profile {})", out.display())),
                None => line.push_str(", callgrind did not run"),
            }
        }
        println!("{line}");
    }
    if let Ok(v) = Command::new(&bin).arg("--version").output() {
        println!("timed: {bin}: {}", String::from_utf8_lossy(&v.stdout).trim());
    }
}
