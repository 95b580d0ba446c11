//! `manifests` over a CRD the cluster already has, on a real API server (issue 22, acceptance 1):
//! the CRD it prints, applied with a server-side dry run over a Kopf operator's CRD of the
//! resource, keeps that CRD's open status (`x-kubernetes-preserve-unknown-fields`) and every
//! printer column; this tool's own CRD, put in its place, would not.
//!
//! `#[ignore = "needs KMS_E2E_KUBECONFIG"]`, as every end-to-end test (CONTRIBUTING.md). It puts
//! the Kopf CRD in place of the cluster's CRD for a few seconds (an open one: it refuses nothing
//! the cluster's accepted) and puts the cluster's back after.

use std::process::Command;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use kubectl_microservice::install::crd_merge::declarations;
use kubectl_microservice::resource::{CRD_NAME, crd};

const BIN: &str = env!("CARGO_BIN_EXE_kubectl-microservice");

#[path = "support/e2e_cluster.rs"]
mod e2e_cluster;
use e2e_cluster::{client_for, kubeconfig_path};

/// A Kopf operator's CRD of the resource (the Kopf tutorial's shape): spec and status open, its
/// own printer columns, the short name `ms` kept (other users of the cluster type it).
fn kopf_crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": CRD_NAME, "labels": {"team": "kopf-catalog"}},
        "spec": {
            "group": "platform.example.io",
            "scope": "Namespaced",
            "names": {"plural": "microservices", "singular": "microservice", "kind": "Microservice",
                      "listKind": "MicroserviceList", "shortNames": ["ms", "msvc"]},
            "versions": [{
                "name": "v1alpha1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "additionalPrinterColumns": [
                    {"name": "Handled", "type": "string", "jsonPath": ".status.accept.message"},
                    {"name": "Kopf", "type": "string", "priority": 1, "jsonPath": ".status.kopf.progress"},
                    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}
                ],
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {
                        "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
                    }
                }}
            }]
        }
    })
}

/// Puts `spec` (and labels) of `wanted` in place of the cluster's CRD, whole (PUT), or creates it.
async fn put_crd(api: &Api<CustomResourceDefinition>, wanted: &Value) {
    let mut object: CustomResourceDefinition = serde_json::from_value(wanted.clone()).unwrap();
    match api.get_opt(CRD_NAME).await.expect("CRD readable") {
        Some(current) => {
            object.metadata.resource_version = current.metadata.resource_version;
            api.replace(CRD_NAME, &PostParams::default(), &object)
                .await
                .expect("CRD replaced");
        }
        None => {
            api.create(&PostParams::default(), &object).await.expect("CRD created");
        }
    }
}

fn columns(crd: &Value) -> Vec<(String, String)> {
    crd["spec"]["versions"][0]["additionalPrinterColumns"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_string(),
                c["jsonPath"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn status_is_open(crd: &Value) -> bool {
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"]["x-kubernetes-preserve-unknown-fields"]
        == true
}

/// Acceptance 1 of issue 22: `manifests` reads the Kopf CRD, says on stderr what applying its own
/// would remove, and prints a CRD that, applied over it (server-side apply, dry run, forced:
/// `spec.versions` is an atomic list, so applying any change to another manager's CRD takes it
/// over, as `kubectl apply --server-side --force-conflicts` does; and a whole replace, dry run,
/// as a client-side `kubectl apply` of it amounts to), keeps its open status, every printer
/// column and every declaration. Its own CRD
/// replacing it (dry run) keeps the open status, and drops the columns: the test can tell.
#[tokio::test]
#[ignore = "needs KMS_E2E_KUBECONFIG"]
async fn e2e_manifests_over_a_kopf_crd_keep_its_status_and_columns() {
    let kubeconfig = kubeconfig_path();
    let admin = client_for(&kubeconfig).await;
    let api: Api<CustomResourceDefinition> = Api::all(admin.clone());
    let original = api.get_opt(CRD_NAME).await.expect("CRD readable");
    put_crd(&api, &kopf_crd()).await;
    let existing = serde_json::to_value(api.get(CRD_NAME).await.unwrap()).unwrap();

    let out = Command::new(BIN)
        .args(["manifests", "-n", "i22-ops", "-A", "-o", "json"])
        .env("KUBECONFIG", &kubeconfig)
        .env("NO_COLOR", "1")
        .output()
        .expect("manifests runs");
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let list: Result<Value, _> = serde_json::from_slice(&out.stdout);

    // Checked after the cluster's CRD is back.
    let checks = async {
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        assert!(
            stderr.starts_with(&format!("note: the cluster has the CRD {CRD_NAME} with another schema")),
            "{stderr}"
        );
        assert!(
            stderr.contains("    - version v1alpha1: printer column Handled (.status.accept.message)"),
            "{stderr}"
        );
        let list = list.expect("manifests prints a List");
        let printed = list["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["kind"] == "CustomResourceDefinition")
            .expect("the CRD is printed")
            .clone();

        let ssa = api
            .patch(
                CRD_NAME,
                &PatchParams::apply("kubectl-microservice-e2e").dry_run().force(),
                &Patch::Apply(&printed),
            )
            .await
            .expect("the printed CRD applies server-side");
        let mut replacing: CustomResourceDefinition = serde_json::from_value(printed.clone()).unwrap();
        replacing.metadata.resource_version = api.get(CRD_NAME).await.unwrap().metadata.resource_version;
        let put = api
            .replace(
                CRD_NAME,
                &PostParams {
                    dry_run: true,
                    field_manager: None,
                },
                &replacing,
            )
            .await
            .expect("the printed CRD replaces the cluster's");
        let before = declarations(&existing);
        for (how, result) in [("server-side apply", ssa), ("replace", put)] {
            let result = serde_json::to_value(result).unwrap();
            assert!(status_is_open(&result), "{how}: {result}");
            let kept = columns(&result);
            for column in columns(&existing) {
                assert!(kept.contains(&column), "{how}: {column:?} dropped: {kept:?}");
            }
            let after = declarations(&result);
            let lost: Vec<_> = before.difference(&after).collect();
            assert!(lost.is_empty(), "{how} drops {lost:?}");
            // Ours is in it too: the fields `operate` writes are declared.
            let status = &result["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"];
            assert_eq!(status["properties"]["observedGeneration"]["type"], "integer", "{how}");
        }

        // This tool's own CRD in its place keeps status open now, and drops the Kopf columns.
        let mut own: CustomResourceDefinition = crd();
        own.metadata.resource_version = api.get(CRD_NAME).await.unwrap().metadata.resource_version;
        let own = serde_json::to_value(
            api.replace(
                CRD_NAME,
                &PostParams {
                    dry_run: true,
                    field_manager: None,
                },
                &own,
            )
            .await
            .expect("our CRD replaces the cluster's"),
        )
        .unwrap();
        assert!(status_is_open(&own));
        assert!(!columns(&own).iter().any(|(name, _)| name == "Handled"));
    };
    let outcome = futures::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(checks)).await;

    // The cluster's CRD back as it was (its spec and labels), or ours where there was none.
    let restore = match &original {
        Some(crd) => serde_json::to_value(crd).unwrap(),
        None => serde_json::to_value(crd()).unwrap(),
    };
    let restore = json!({"apiVersion": restore["apiVersion"], "kind": restore["kind"],
                         "metadata": {"name": CRD_NAME, "labels": restore["metadata"]["labels"],
                                      "annotations": restore["metadata"]["annotations"]},
                         "spec": restore["spec"]});
    put_crd(&api, &restore).await;
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}
