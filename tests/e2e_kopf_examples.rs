//! Issue 19 acceptance 1, live: Kopf's example operators 01, 02, 03, 04, 05 and 11 run against a
//! real API server as nolar/kopf `tests/e2e/test_examples.py` runs them (`kopf run --standalone
//! --verbose example.py`, obj.yaml created then deleted), and `logs --resource
//! kopfexamples.kopf.dev --handler ID kopf-example-1 -o json` counts, for every handler, as many
//! succeeded and failed runs as Kopf's test computes from the same log (tests/support/kopf_oracle.rs):
//! live with `--log-file` while the object exists, then over the bundle `collect --resource`
//! writes once it is deleted and Kopf stopped, where the log is also checked against the
//! example's E2E marks.
//!
//! `#[ignore = "needs KMS_E2E_KUBECONFIG"]`; it also needs `KMS_E2E_KOPF`, a `kopf` executable
//! (Kopf 1.38 or 1.44; 02-children also needs `pykube-ng` beside it). Each example runs in a
//! namespace of its own, `kms-e2e-kex-NN-*`, with `--namespace` rather than Kopf's
//! `--all-namespaces` (the cluster may be shared); it applies Kopf's CRD `kopfexamples.kopf.dev`.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use kube::discovery::ApiResource;
use serde_json::{Value, json};

#[path = "support/e2e_cluster.rs"]
mod e2e_cluster;
#[path = "support/kopf_oracle.rs"]
mod kopf_oracle;

use e2e_cluster::{client_for, kubeconfig_path};

const OBJECT: &str = "kopf-example-1";

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_kubectl-microservice")
}

fn kopf() -> PathBuf {
    match std::env::var_os("KMS_E2E_KOPF") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => panic!("KMS_E2E_KOPF is not set: give a kopf executable (pip install kopf==1.38.0 pykube-ng)"),
    }
}

fn unique(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!(
        "{prefix}-{:x}",
        (nanos as u64 ^ u64::from(std::process::id())) & 0xffff_ffff
    )
}

/// Kopf's examples/crd.yaml (1.38.0) as JSON, from a capture's `crd.json` (what the API server
/// returned for it), its server-set fields dropped.
fn kopf_crd() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/kopf-examples-captured/01-1.38/crd.json");
    let mut crd: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    crd["metadata"] = json!({"name": "kopfexamples.kopf.dev"});
    crd.as_object_mut().unwrap().remove("status");
    crd
}

/// Kopf's examples/obj.yaml (1.38.0).
fn kopf_object() -> Value {
    json!({
        "apiVersion": "kopf.dev/v1",
        "kind": "KopfExample",
        "metadata": {"name": OBJECT, "labels": {"somelabel": "somevalue"}, "annotations": {"someannotation": "somevalue"}},
        "spec": {"duration": "1m", "field": "value", "items": ["item1", "item2"]}
    })
}

fn examples_api(client: &kube::Client, ns: &str) -> Api<DynamicObject> {
    let resource = ApiResource {
        group: "kopf.dev".into(),
        version: "v1".into(),
        api_version: "kopf.dev/v1".into(),
        kind: "KopfExample".into(),
        plural: "kopfexamples".into(),
    };
    Api::namespaced_with(client.clone(), ns, &resource)
}

/// Waits until `log` holds one of `patterns`, at most `limit`.
fn wait_for(log: &Path, limit: Duration, patterns: &[&str]) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        if patterns.iter().any(|p| text.contains(p)) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    false
}

/// `kopf run --standalone --verbose --namespace NS example.py` in the example's folder, its
/// output into `log`.
fn start_kopf(example: &Path, ns: &str, log: &Path, kubeconfig: &Path) -> Child {
    let out = std::fs::File::create(log).unwrap();
    Command::new(kopf())
        .args(["run", "--standalone", "--verbose", "--namespace", ns, "example.py"])
        .current_dir(example)
        .env("KUBECONFIG", kubeconfig)
        .stdout(out.try_clone().unwrap())
        .stderr(out)
        .stdin(Stdio::null())
        .spawn()
        .expect("kopf starts")
}

/// Our counts for every handler of the object in `log`, from `args` (a live `--log-file` read or
/// a bundle), against Kopf's counts over `log`.
fn check_counts(log: &str, ns: &str, args: &[&str], what: &str) {
    let object = format!("{ns}/{OBJECT}");
    let succeeded = kopf_oracle::count(log, kopf_oracle::SUCCEEDED);
    let failed = kopf_oracle::count(log, kopf_oracle::FAILED);
    for handler in kopf_oracle::object_handlers(log, &object) {
        let source: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
        let ours = kopf_oracle::logs_counts(&handler, &object, &source);
        let expected = (
            succeeded.get(&handler).copied().unwrap_or(0),
            failed.get(&handler).copied().unwrap_or(0),
        );
        assert_eq!(ours, expected, "{what}: handler {handler} (succeeded, failed)");
    }
}

async fn run_example(client: &kube::Client, kubeconfig: &Path, nn: &str, work: &Path) {
    let example = kopf_oracle::example_dir(nn);
    let ns = unique(&format!("kms-e2e-kex-{nn}"));
    Api::<Namespace>::all(client.clone())
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": ns}})).unwrap(),
        )
        .await
        .expect("namespace created");
    // 02-children creates a Pod: the namespace needs its default ServiceAccount first.
    let start = Instant::now();
    while Api::<k8s_openapi::api::core::v1::ServiceAccount>::namespaced(client.clone(), &ns)
        .get("default")
        .await
        .is_err()
        && start.elapsed() < Duration::from_secs(30)
    {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let log = work.join(format!("{nn}.log"));
    let mut kopf = start_kopf(&example, &ns, &log, kubeconfig);
    assert!(
        wait_for(&log, Duration::from_secs(30), &["Starting the watch-stream"]),
        "{nn}: Kopf did not start"
    );
    let api = examples_api(client, &ns);
    api.create(&PostParams::default(), &serde_json::from_value(kopf_object()).unwrap())
        .await
        .expect("obj.yaml created");
    let source = kopf_oracle::example_py(Path::new(nn));
    let creation = if source.contains("E2E_CREATION_STOP_WORDS") {
        "Something has changed,"
    } else {
        "Creation is processed"
    };
    assert!(
        wait_for(&log, Duration::from_secs(60), &[creation]),
        "{nn}: no {creation:?}"
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    // Live, the object there: the log read beside the cluster's evidence.
    let so_far = std::fs::read_to_string(&log).unwrap();
    let kubeconfig_arg = kubeconfig.to_str().unwrap();
    check_counts(
        &so_far,
        &ns,
        &[
            "-n",
            &ns,
            "--kubeconfig",
            kubeconfig_arg,
            "--log-file",
            log.to_str().unwrap(),
        ],
        &format!("{nn} live"),
    );
    api.delete(OBJECT, &DeleteParams::default())
        .await
        .expect("obj.yaml deleted");
    wait_for(
        &log,
        Duration::from_secs(30),
        &["Deleted, really deleted", "Deletion is processed"],
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    Command::new("kill")
        .args(["-INT", &kopf.id().to_string()])
        .status()
        .unwrap();
    assert!(kopf.wait().unwrap().success(), "{nn}: Kopf did not exit 0");
    // The bundle of the whole run, as tests/fixtures/kopf-examples-captured was made.
    let bundle = work.join(format!("{nn}-bundle"));
    let out = Command::new(bin())
        .args([
            "collect",
            bundle.to_str().unwrap(),
            "--resource",
            "kopfexamples.kopf.dev",
            "-n",
            &ns,
        ])
        .args(["--kubeconfig", kubeconfig_arg, "--log-file", log.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{nn} collect: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let whole = std::fs::read_to_string(&log).unwrap();
    let (success_mark, failure_mark) = (
        kopf_oracle::mark(&source, "E2E_SUCCESS_COUNTS"),
        kopf_oracle::mark(&source, "E2E_FAILURE_COUNTS"),
    );
    let (succeeded, failed) = (
        kopf_oracle::count(&whole, kopf_oracle::SUCCEEDED),
        kopf_oracle::count(&whole, kopf_oracle::FAILED),
    );
    assert!(
        kopf_oracle::kopf_check(&succeeded, success_mark.as_ref(), true),
        "{nn}: {succeeded:?}"
    );
    assert!(
        kopf_oracle::kopf_check(&failed, failure_mark.as_ref(), false),
        "{nn}: {failed:?}"
    );
    check_counts(
        &whole,
        &ns,
        &["--bundle", bundle.to_str().unwrap()],
        &format!("{nn} bundle"),
    );
    let _ = Api::<Namespace>::all(client.clone())
        .delete(&ns, &DeleteParams::default())
        .await;
}

#[tokio::test]
#[ignore = "needs KMS_E2E_KUBECONFIG"]
async fn e2e_kopf_examples_handler_counts_equal_kopfs_marks() {
    let kubeconfig = kubeconfig_path();
    kopf();
    let client = client_for(&kubeconfig).await;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.patch(
        "kopfexamples.kopf.dev",
        &PatchParams::apply("kms-e2e").force(),
        &Patch::Apply(&kopf_crd()),
    )
    .await
    .expect("Kopf's CRD applies");
    tokio::time::sleep(Duration::from_secs(2)).await;
    let work = std::env::temp_dir().join(unique("kms-e2e-kex"));
    std::fs::create_dir_all(&work).unwrap();
    for nn in ["01", "02", "03", "04", "05", "11"] {
        run_example(&client, &kubeconfig, nn, &work).await;
    }
}
