//! End-to-end test of shell completion against a real, disposable kube-apiserver: Microservice
//! names and namespaces come from the cluster, and, when `KMS_E2E_KUBECTL` names a kubectl
//! (>= 1.26), through kubectl's own plugin completion (`kubectl __complete microservice ...`)
//! with `kubectl-microservice` and `completions/kubectl_complete-microservice` on PATH.
//!
//! Both tests are `#[ignore]`d (a plain `cargo test` lists them as ignored, never as passed); run
//! them with `--ignored` and `KMS_E2E_KUBECONFIG` naming a cluster-admin kubeconfig. The one
//! through kubectl also needs `KMS_E2E_KUBECTL`; without a kubectl, leave it out with
//! `--skip through_kubectl`. Run with `--ignored` but without a variable they need, they fail
//! saying so. Each creates the CRD if it is missing (never replaces it) and a namespace
//! `kms-e2e-complete-*`, deleted at the end.
//!
//! Run: `KMS_E2E_KUBECONFIG=/path/admin.kubeconfig KMS_E2E_KUBECTL=/path/kubectl cargo test --test e2e_complete -- --ignored`

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};
use serde_json::json;

use kubectl_microservice::resource::{CRD_NAME, MicroserviceObject, crd};

const BIN: &str = env!("CARGO_BIN_EXE_kubectl-microservice");

/// The path in the environment variable `name`. Panics naming it when it is unset: the tests
/// are `#[ignore]`d, so reaching here means someone asked for them with `--ignored`.
fn env_path(name: &str, what: &str) -> PathBuf {
    std::env::var_os(name)
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            panic!("{name} is not set: this e2e test needs {what}, or run `cargo test` without --ignored")
        })
}

/// `KMS_E2E_KUBECONFIG`, which every test here needs.
fn kubeconfig() -> PathBuf {
    env_path(
        "KMS_E2E_KUBECONFIG",
        "a disposable cluster's admin kubeconfig (KMS_E2E_KUBECONFIG=/path/admin.kubeconfig cargo test -- --ignored)",
    )
}

async fn admin_client(path: &Path) -> Client {
    let kubeconfig = Kubeconfig::read_from(path).expect("KMS_E2E_KUBECONFIG is readable");
    let config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .unwrap();
    Client::try_from(config).unwrap()
}

/// Creates the CRD unless it exists (other e2e tests own its exact schema), and waits until the
/// API server serves it.
async fn ensure_crd(client: &Client) {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    if api.get_opt(CRD_NAME).await.unwrap().is_none() {
        match api.create(&PostParams::default(), &crd()).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 409 => {}
            Err(e) => panic!("create CRD: {e}"),
        }
    }
    let microservices: Api<MicroserviceObject> = Api::all(client.clone());
    let start = Instant::now();
    while microservices.list_metadata(&Default::default()).await.is_err() {
        assert!(start.elapsed() < Duration::from_secs(20), "the CRD is not served");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// `kubectl-microservice __complete WORDS...` against the cluster of `kubeconfig`.
fn complete(kubeconfig: &Path, words: &[&str]) -> Output {
    Command::new(BIN)
        .arg("__complete")
        .args(words)
        .env("KUBECONFIG", kubeconfig)
        .output()
        .unwrap()
}

fn stdout(output: &Output) -> String {
    assert!(output.status.success(), "{output:?}");
    assert!(
        output.stderr.is_empty(),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

/// A namespace `kms-e2e-complete-*` holding Microservices `alpha-api`, `beta-api`, `beta-db`
/// (the CRD created if missing). Returns the admin client and the namespace's name.
async fn namespace_with_three_microservices(kubeconfig: &Path) -> (Client, String) {
    let admin = admin_client(kubeconfig).await;
    ensure_crd(&admin).await;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let ns = format!("kms-e2e-complete-{:x}", nanos as u64);
    let namespaces: Api<Namespace> = Api::all(admin.clone());
    namespaces
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": ns}})).unwrap(),
        )
        .await
        .unwrap();
    let api: Api<DynamicObject> =
        Api::namespaced_with(admin.clone(), &ns, &ApiResource::erase::<MicroserviceObject>(&()));
    for name in ["alpha-api", "beta-api", "beta-db"] {
        let obj: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "platform.example.io/v1alpha1", "kind": "Microservice",
            "metadata": {"name": name}, "spec": {"image": "ghcr.io/yrw9281/it30-todo-api:0.1.0", "port": 8080}
        }))
        .unwrap();
        api.create(&PostParams::default(), &obj).await.unwrap();
    }
    (admin, ns)
}

async fn delete_namespace(admin: &Client, ns: &str) {
    let namespaces: Api<Namespace> = Api::all(admin.clone());
    namespaces.delete(ns, &DeleteParams::default()).await.unwrap();
}

#[tokio::test]
#[ignore = "needs KMS_E2E_KUBECONFIG"]
async fn names_and_namespaces_come_from_the_cluster() {
    let kubeconfig = kubeconfig();
    let (admin, ns) = namespace_with_three_microservices(&kubeconfig).await;

    assert_eq!(
        stdout(&complete(&kubeconfig, &["status", "-n", &ns, ""])),
        "alpha-api\nbeta-api\nbeta-db\n:4\n"
    );
    assert_eq!(
        stdout(&complete(&kubeconfig, &["-n", &ns, "logs", "beta"])),
        "beta-api\nbeta-db\n:4\n"
    );
    assert_eq!(
        stdout(&complete(
            &kubeconfig,
            &["explain-events", &format!("--namespace={ns}"), "a"]
        )),
        "alpha-api\n:4\n"
    );
    assert_eq!(
        stdout(&complete(&kubeconfig, &["logs", "--handler", "accept", "-n", &ns, ""])),
        "alpha-api\nbeta-api\nbeta-db\n:4\n"
    );
    let listed = stdout(&complete(&kubeconfig, &["status", "-n", "kms-e2e-complete-"]));
    assert!(listed.lines().any(|l| l == ns), "{ns} not in {listed}");

    delete_namespace(&admin, &ns).await;
}

/// The same names through kubectl's own plugin completion (`kubectl __complete microservice
/// ...`), with the plugin and its completion helper on PATH.
#[tokio::test]
#[ignore = "needs KMS_E2E_KUBECONFIG and KMS_E2E_KUBECTL"]
async fn names_come_through_kubectl() {
    let kubectl = env_path(
        "KMS_E2E_KUBECTL",
        "a kubectl (1.26 or newer) to complete through; without one, leave it out with `--skip through_kubectl`",
    );
    let kubeconfig = kubeconfig();
    let (admin, ns) = namespace_with_three_microservices(&kubeconfig).await;
    through_kubectl(&kubectl, &kubeconfig, &ns);
    delete_namespace(&admin, &ns).await;
}

/// The plugin and its completion helper on PATH, as a krew install plus the caveats' step
/// leaves them; kubectl finds both.
fn through_kubectl(kubectl: &Path, kubeconfig: &Path, ns: &str) {
    let bin_dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(BIN, bin_dir.path().join("kubectl-microservice")).unwrap();
    let helper = Path::new(env!("CARGO_MANIFEST_DIR")).join("completions/kubectl_complete-microservice");
    std::fs::copy(&helper, bin_dir.path().join("kubectl_complete-microservice")).unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let kubectl = |args: &[&str]| {
        Command::new(kubectl)
            .args(args)
            .env("PATH", &path)
            .env("KUBECONFIG", kubeconfig)
            .output()
            .unwrap()
    };

    let help = kubectl(&["microservice", "--help"]);
    assert!(help.status.success(), "{help:?}");
    assert!(String::from_utf8_lossy(&help.stdout).contains("Usage: kubectl microservice"));

    let output = kubectl(&["__complete", "microservice", "status", "-n", ns, ""]);
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines, ["alpha-api", "beta-api", "beta-db", ":4"], "{text}");

    let output = kubectl(&["__complete", "microservice", "st"]);
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.starts_with("status\t"), "{text}");
}
