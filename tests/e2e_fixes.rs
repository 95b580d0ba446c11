//! Every fix the diagnostics print, pasted as a user would (issue 11): on a real API server each
//! situation that can be made live is made live, our binary diagnoses it (`explain-events NAME
//! -n NS -o json`, `status NAME -n NS -o json`), the fix's commands are cut out of its text by
//! the one rule of where a suggested command ends
//! (`kubectl_microservice::commands::explain_events::pasted_commands`) and run in `sh` with the
//! test cluster's kubectl (and this build as its plugin), and the finding is then shown gone, the
//! verdict what the fix promises. A pasted fix that fails, or that leaves the finding, fails the
//! test: the fix text is then wrong. docs/fixes.md lists every fix kind and how it is tested.
//!
//! Each test is `#[ignore]`d: a plain `cargo test` lists it as ignored, never as passed. Run them
//! with `--ignored` and
//!
//! - `KMS_E2E_KUBECONFIG`: a cluster-admin kubeconfig of a disposable cluster (namespaces
//!   `kms-fx-*`, deleted at the end; the CRD as `manifests` prints it is applied);
//! - a kubectl on PATH, or `KMS_E2E_KUBECTL` naming one (1.26 or newer);
//! - for the `e2e_fixes_node_*` tests, a cluster whose nodes run Pods and `KMS_E2E_NODE` (as in
//!   tests/e2e_node.rs: `1` when the nodes hold the operator image `manifests` runs by default,
//!   or an image reference), and for the `e2e_fixes_node_kopf_*` ones `KMS_E2E_KOPF_IMAGE` (an
//!   image the nodes hold with Python and Kopf 1.38, `kopf` on PATH).
//!
//! Run with `--ignored` but without a variable a test needs, that test fails, naming it; leave
//! the node tests out with `--skip e2e_fixes_node_`. The tests take a lock and run one at a time.
//!
//! `KMS_E2E_KUBECONFIG=/path/admin.kubeconfig KMS_E2E_NODE=1 KMS_E2E_KOPF_IMAGE=localhost/kopf:1.38 cargo test --test e2e_fixes -- --ignored`

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use kubectl_microservice::commands::explain_events::pasted_commands;

#[path = "support/node.rs"]
mod node;
use node::*;

#[path = "support/operate_process.rs"]
mod operate_process;
use operate_process::OperateProcess;

/// The commands of a finding's fix, as a user pastes them, in order.
fn fix_commands(finding: &Value) -> Vec<String> {
    let fix = finding["fix"].as_str().unwrap_or_else(|| panic!("no fix: {finding:#}"));
    pasted_commands(fix).into_iter().map(|r| fix[r].to_string()).collect()
}

/// The finding `id` of an `explain-events -o json` document, if any.
fn maybe_finding<'a>(doc: &'a Value, id: &str) -> Option<&'a Value> {
    doc["findings"].as_array().unwrap().iter().find(|f| f["id"] == id)
}

/// The ids of the findings that are not `ok`.
fn not_ok(doc: &Value) -> Vec<String> {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] != "ok")
        .map(|f| f["id"].as_str().unwrap().to_string())
        .collect()
}

/// `explain-events NAME -n NS -o json`: (exit code, document).
fn explain(node: &Node, name: &str, ns: &str) -> (i32, Value) {
    node.plugin_json(&["explain-events", name, "-n", ns], &[0, 1])
}

/// The one item of `status NAME -n NS -o json`.
fn status_item(node: &Node, name: &str, ns: &str) -> Value {
    let (_, doc) = node.plugin_json(&["status", name, "-n", ns], &[0]);
    doc["items"][0].clone()
}

/// Polls `explain-events` (every 2 s, up to `limit`) until `done` holds for its document.
async fn explain_until(
    node: &Node,
    name: &str,
    ns: &str,
    limit: Duration,
    what: &str,
    done: impl Fn(i32, &Value) -> bool,
) -> (i32, Value) {
    let start = Instant::now();
    loop {
        let (code, doc) = explain(node, name, ns);
        if done(code, &doc) {
            return (code, doc);
        }
        assert!(
            start.elapsed() < limit,
            "timed out after {limit:?} waiting for {what}; explain-events {name} -n {ns} exited {code}:\n{doc:#}"
        );
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
}

/// Polls `status NAME` (every 2 s, up to `limit`) until its verdict is `verdict`.
async fn status_until(node: &Node, name: &str, ns: &str, verdict: &str, limit: Duration) -> Value {
    let start = Instant::now();
    loop {
        let item = status_item(node, name, ns);
        if item["verdict"] == verdict {
            return item;
        }
        assert!(
            start.elapsed() < limit,
            "timed out after {limit:?} waiting for status {name} -n {ns} to be {verdict}:\n{item:#}"
        );
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
}

/// Waits until no Pod (not even a terminating one) of `selector` is left in `ops`.
async fn no_pods(node: &Node, ops: &str, selector: &str, limit: Duration) {
    eventually(limit, &format!("no Pod {selector} in {ops}"), || async {
        let out = node.kubectl(&["get", "pods", "-n", ops, "-l", selector, "-o", "name"], None);
        out.trim().is_empty().then_some(())
    })
    .await;
}

/// A Pod of `selector` in `ops` whose container `operator` waits with one of `reasons`.
async fn pod_waiting(node: &Node, ops: &str, selector: &str, reasons: &[&str], limit: Duration) {
    eventually(
        limit,
        &format!("a Pod {selector} in {ops} waiting {reasons:?}"),
        || async {
            let out = node.kubectl(&["get", "pods", "-n", ops, "-l", selector, "-o", "json"], None);
            let pods: Value = serde_json::from_str(&out).ok()?;
            pods["items"]
                .as_array()?
                .iter()
                .flat_map(|p| p["status"]["containerStatuses"].as_array().cloned().unwrap_or_default())
                .any(|c| {
                    c["state"]["waiting"]["reason"]
                        .as_str()
                        .is_some_and(|r| reasons.contains(&r))
                })
                .then_some(())
        },
    )
    .await;
}

fn done(test: &str, start: Instant) {
    println!("{test}: passed in {:.1} s", start.elapsed().as_secs_f64());
}

// ---- deletion-pending (no Pod) ------------------------------------------------------------------

/// A deletion held by two finalizers: `example.com/keep` (no owner in evidence) and Kopf's
/// `kopf.zalando.org/KopfFinalizerMarker` (no Kopf operator runs). `status` says `terminating`
/// [`deletion-pending`] and its `Next:` is the fix of `explain-events`' first finding,
/// `deletion-pending`: a JSON patch whose `test` op pins the finalizer's index. The list then
/// changes (the first finalizer removed by its owner): the stale command, pasted, is refused
/// and changes nothing, as the fix says. Diagnosed again, the fix names the Kopf finalizer at
/// its new index; pasted, the object is gone and `status NAME` says it is not found (exit 3).
#[tokio::test]
#[ignore = "needs KMS_E2E_KUBECONFIG"]
async fn e2e_fixes_deletion_pending_the_patch_removes_the_leftover_finalizer() {
    let start = Instant::now();
    let node = Node::api_only().await;
    let _cluster = CLUSTER.lock().await;
    apply_crd(&node);
    let ns = unique("kms-fx-deletion");
    let _installed = Installed::namespaces(&node, &[&ns]);
    node.apply_todo_api(&ns);
    let patch_finalizers = |finalizers: Value| {
        let patch = json!({"metadata": {"finalizers": finalizers}}).to_string();
        node.kubectl(
            &["patch", "ms", "todo-api", "-n", &ns, "--type=merge", "-p", &patch],
            None,
        );
    };
    patch_finalizers(json!(["example.com/keep", "kopf.zalando.org/KopfFinalizerMarker"]));
    node.kubectl(&["delete", "ms", "todo-api", "-n", &ns, "--wait=false"], None);
    let removal = |index: usize, finalizer: &str| {
        format!(
            r#"kubectl -n {ns} patch microservice todo-api --type=json -p '[{{"op":"test","path":"/metadata/finalizers/{index}","value":"{finalizer}"}},{{"op":"remove","path":"/metadata/finalizers/{index}"}}]'"#
        )
    };

    let item = status_item(&node, "todo-api", &ns);
    assert_eq!(item["verdict"], "terminating", "{item:#}");
    assert_eq!(item["reasons"][0]["code"], "deletion-pending", "{item:#}");
    let (code, doc) = explain(&node, "todo-api", &ns);
    assert_eq!(code, 1, "{doc:#}");
    let pending = &doc["findings"][0];
    assert_eq!(pending["id"], "deletion-pending", "{doc:#}");
    assert_eq!(pending["severity"], "problem", "{doc:#}");
    let first = removal(0, "example.com/keep");
    assert_eq!(fix_commands(pending), std::slice::from_ref(&first), "{pending:#}");
    // status NAME's Next: is the same command.
    let (code, human, err) = node.plugin(&["status", "todo-api", "-n", &ns]);
    assert_eq!(code, 0, "{err}");
    let next = human
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("Next:"))
        .unwrap_or_else(|| panic!("no Next: in {human}"));
    let next_commands: Vec<String> = pasted_commands(next).into_iter().map(|r| next[r].to_string()).collect();
    assert_eq!(next_commands, std::slice::from_ref(&first), "{human}");

    // The list changes before the command is pasted: the test op refuses it, nothing changes.
    patch_finalizers(json!(["kopf.zalando.org/KopfFinalizerMarker"]));
    let refused = node.sh_command(&first).output().unwrap();
    assert!(!refused.status.success(), "the stale patch was applied");
    let still = node.kubectl(
        &[
            "get",
            "ms",
            "todo-api",
            "-n",
            &ns,
            "-o",
            "jsonpath={.metadata.finalizers}",
        ],
        None,
    );
    assert_eq!(still, r#"["kopf.zalando.org/KopfFinalizerMarker"]"#);

    let (_, doc) = explain(&node, "todo-api", &ns);
    let pending = &doc["findings"][0];
    assert_eq!(pending["id"], "deletion-pending", "{doc:#}");
    assert!(
        pending["fix"].to_string().contains("its owner is not running"),
        "{pending:#}"
    );
    let kopf = removal(0, "kopf.zalando.org/KopfFinalizerMarker");
    assert_eq!(fix_commands(pending), std::slice::from_ref(&kopf), "{pending:#}");
    let out = node.sh(&kopf);
    assert_eq!(out.trim(), "microservice.platform.example.io/todo-api patched", "{out}");
    eventually(Duration::from_secs(20), "todo-api deleted", || async {
        let out = node.kubectl_output(&["get", "ms", "todo-api", "-n", &ns], None);
        String::from_utf8_lossy(&out.stderr).contains("NotFound").then_some(())
    })
    .await;
    let (code, _, err) = node.plugin(&["status", "todo-api", "-n", &ns]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("not found"), "{err}");
    done(
        "e2e_fixes_deletion_pending_the_patch_removes_the_leftover_finalizer",
        start,
    );
}

// ---- status-pruned (no Pod: `operate` as a process) ----------------------------------------------

/// Puts the manifests' CRD back when dropped (a test that changes its schema).
struct CrdRestored<'a>(&'a Node);

impl Drop for CrdRestored<'_> {
    fn drop(&mut self) {
        apply_crd(self.0);
    }
}

/// The CRD's status schema without `phase` (an older or hand-made CRD), our `operate` as a
/// process (the README's laptop flow, its log teed to a file): the API server refuses its status
/// write (`.status.phase: field not declared in schema`) and it retries. `status NAME
/// --log-file` is not fresh; `explain-events`' `status-pruned` fix is one `kubectl patch crd`
/// JSON patch that adds `status.phase` (never an interactive `kubectl edit`). Pasted: the next
/// retry writes the status, `status` is fresh and `status-pruned` is gone. The CRD is the
/// cluster's: it lacks `status.phase` for the seconds this takes, and the manifests' CRD is
/// applied again at the end.
#[tokio::test]
#[ignore = "needs KMS_E2E_KUBECONFIG"]
async fn e2e_fixes_status_pruned_the_crd_patch_lets_the_status_be_written() {
    let start = Instant::now();
    let node = Node::api_only().await;
    let _cluster = CLUSTER.lock().await;
    let ns = unique("kms-fx-pruned");
    let _installed = Installed::namespaces(&node, &[&ns]);
    let (code, list, err) = node.plugin(&[
        "manifests",
        "--namespace",
        "ops",
        "--watch-namespace",
        &ns,
        "-o",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let list: Value = serde_json::from_str(&list).unwrap();
    let mut crd = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["kind"] == "CustomResourceDefinition")
        .unwrap()
        .clone();
    let status = &mut crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"];
    assert!(status["properties"].as_object_mut().unwrap().remove("phase").is_some());
    let _restored = CrdRestored(&node);
    node.kubectl(&["apply", "-f", "-"], Some(crd.to_string().as_bytes()));
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("operate.log");
    let log_arg = log.display().to_string();
    let operate = OperateProcess::spawn_teeing(BIN, &node.kubeconfig, &["--namespace", &ns], false, Some(&log));
    node.apply_todo_api(&ns);
    eventually(Duration::from_secs(30), "the refused status write", || async {
        (operate.count("field not declared in schema") > 0).then_some(())
    })
    .await;

    let args = ["todo-api", "-n", &ns, "--log-file", &log_arg];
    let (_, doc) = node.plugin_json(&[&["status"][..], &args].concat(), &[0]);
    assert_ne!(doc["items"][0]["verdict"], "fresh", "{doc:#}");
    let (code, doc) = node.plugin_json(&[&["explain-events"][..], &args].concat(), &[1]);
    assert_eq!(code, 1);
    let pruned = finding(&doc, "status-pruned");
    assert_eq!(pruned["severity"], "problem", "{doc:#}");
    let commands = fix_commands(pruned);
    assert_eq!(
        commands,
        [
            r#"kubectl patch crd microservices.platform.example.io --type=json -p '[{"op":"add","path":"/spec/versions/0/schema/openAPIV3Schema/properties/status/properties/phase","value":{"type":"string"}}]'"#
        ],
        "{pruned:#}"
    );
    let out = node.sh(&commands[0]);
    assert_eq!(
        out.trim(),
        "customresourcedefinition.apiextensions.k8s.io/microservices.platform.example.io patched"
    );
    // The operator's next retry (capped backoff) writes the status.
    node.accepted(&ns, "todo-api", 1, Duration::from_secs(90)).await;
    let limit = Duration::from_secs(30);
    let waited = Instant::now();
    let doc = loop {
        let (code, doc) = node.plugin_json(&[&["explain-events"][..], &args].concat(), &[0, 1]);
        if code == 0 && maybe_finding(&doc, "status-pruned").is_none() {
            break doc;
        }
        assert!(
            waited.elapsed() < limit,
            "status-pruned stays after the patch:\n{doc:#}"
        );
        tokio::time::sleep(Duration::from_secs(2)).await;
    };
    assert_eq!(not_ok(&doc), Vec::<String>::new(), "{doc:#}");
    let (_, doc) = node.plugin_json(&[&["status"][..], &args].concat(), &[0]);
    assert_eq!(doc["items"][0]["verdict"], "fresh", "{doc:#}");
    drop(operate);
    done(
        "e2e_fixes_status_pruned_the_crd_patch_lets_the_status_be_written",
        start,
    );
}

// ---- our operator's Deployment ------------------------------------------------------------------

/// Our operator (the manifests' Deployment, 2 replicas with leader election) scaled to zero:
/// `operator-not-running` names `spec.replicas=0` and its fix scales it back to the manifests'
/// 2 (never a `rollout restart`, which keeps 0). Pasted: two Ready Pods, one leads, the finding
/// is ok and a spec change is handled (`status` fresh).
#[tokio::test]
#[ignore = "needs KMS_E2E_KUBECONFIG and KMS_E2E_NODE"]
async fn e2e_fixes_node_ours_scaled_to_zero_the_scale_command_brings_it_back() {
    let start = Instant::now();
    let node = Node::from_env().await;
    let _cluster = CLUSTER.lock().await;
    let id = unique("kms-fx-scaled");
    let (ops, ns) = (format!("{id}-ops"), format!("{id}-todo"));
    let _installed = node.install(&ops, &ns, None, None);
    let pods = node.ready_pods(&ops, POD_LABEL, 2, &[], Duration::from_secs(120)).await;
    node.leader(&ns, &pods, Duration::from_secs(30)).await;
    node.apply_todo_api(&ns);
    node.accepted(&ns, "todo-api", 1, Duration::from_secs(20)).await;
    node.kubectl(
        &["scale", &format!("deployment/{OPERATOR}"), "-n", &ops, "--replicas=0"],
        None,
    );
    no_pods(&node, &ops, POD_LABEL, Duration::from_secs(60)).await;

    let (code, doc) = explain(&node, "todo-api", &ns);
    assert_eq!(code, 1, "{doc:#}");
    let down = finding(&doc, "operator-not-running");
    assert_eq!(down["severity"], "problem", "{doc:#}");
    assert!(down["title"].to_string().contains("spec.replicas=0"), "{down:#}");
    let commands = fix_commands(down);
    assert_eq!(
        commands,
        [format!("kubectl -n {ops} scale deployment/{OPERATOR} --replicas=2")],
        "{down:#}"
    );
    let out = node.sh(&commands[0]);
    assert_eq!(out.trim(), format!("deployment.apps/{OPERATOR} scaled"));
    let pods = node.ready_pods(&ops, POD_LABEL, 2, &[], Duration::from_secs(120)).await;
    node.leader(&ns, &pods, Duration::from_secs(30)).await;
    explain_until(
        &node,
        "todo-api",
        &ns,
        Duration::from_secs(60),
        "operator-not-running ok",
        |_, d| finding(d, "operator-not-running")["severity"] == "ok",
    )
    .await;
    node.kubectl(
        &[
            "patch",
            "ms",
            "todo-api",
            "-n",
            &ns,
            "--type=merge",
            "-p",
            r#"{"spec":{"port":9090}}"#,
        ],
        None,
    );
    node.accepted(&ns, "todo-api", 2, Duration::from_secs(20)).await;
    status_until(&node, "todo-api", &ns, "fresh", Duration::from_secs(30)).await;
    let (code, doc) = explain(&node, "todo-api", &ns);
    assert_eq!((code, not_ok(&doc)), (0, vec![]), "{doc:#}");
    done(
        "e2e_fixes_node_ours_scaled_to_zero_the_scale_command_brings_it_back",
        start,
    );
}

// ---- a Kopf operator's Deployment ---------------------------------------------------------------

/// The tutorial's Kopf operator as a Deployment, three fixes of its Deployment in turn, each
/// pasted from `explain-events` and each shown to clear its finding:
/// scaled to zero (`operator-not-running`, `spec.replicas=0`) → `kubectl scale --replicas=1`;
/// an image no node holds (`ImagePullBackOff`) → `kubectl set image ... operator=IMAGE` with
/// IMAGE the one the nodes hold, as its text asks; a crash loop (`CrashLoopBackOff`) →
/// `kubectl logs POD -c operator --previous`, which shows the cause (then fixed by hand); two
/// replicas without peering
/// (`operator-not-leading`, double handling) → `kubectl scale --replicas=1`.
#[tokio::test]
#[ignore = "needs KMS_E2E_KUBECONFIG, KMS_E2E_NODE and KMS_E2E_KOPF_IMAGE"]
async fn e2e_fixes_node_kopf_deployment_scale_image_and_replicas() {
    let start = Instant::now();
    let node = Node::from_env().await;
    let kopf_image = kopf_image();
    let _cluster = CLUSTER.lock().await;
    let id = unique("kms-fx-kopf-dep");
    let (ops, ns) = (format!("{id}-ops"), format!("{id}-todo"));
    let _installed = install_kopf(&node, &kopf_image, &ops, &ns, &tutorial_operator_py()).await;
    let selector = format!("app={OPERATOR}");
    let deployment = format!("deployment/{OPERATOR}");
    let pods = node.ready_pods(&ops, &selector, 1, &[], Duration::from_secs(120)).await;
    node.apply_todo_api(&ns);
    node.wait_log(
        &ops,
        &pods[0],
        &format!("[{ns}/todo-api] Creation is processed: 1 succeeded; 0 failed."),
        Duration::from_secs(60),
    )
    .await;

    // Scaled to zero.
    node.kubectl(&["scale", &deployment, "-n", &ops, "--replicas=0"], None);
    no_pods(&node, &ops, &selector, Duration::from_secs(60)).await;
    let (_, doc) = explain(&node, "todo-api", &ns);
    let down = finding(&doc, "operator-not-running");
    assert_eq!(down["severity"], "problem", "{doc:#}");
    assert!(down["title"].to_string().contains("spec.replicas=0"), "{down:#}");
    let commands = fix_commands(down);
    assert_eq!(
        commands,
        [format!("kubectl -n {ops} scale {deployment} --replicas=1")],
        "{down:#}"
    );
    node.sh(&commands[0]);
    let pods = node.ready_pods(&ops, &selector, 1, &[], Duration::from_secs(120)).await;
    explain_until(
        &node,
        "todo-api",
        &ns,
        Duration::from_secs(60),
        "operator-not-running ok after the scale",
        |_, d| finding(d, "operator-not-running")["severity"] == "ok",
    )
    .await;

    // An image the nodes cannot get.
    node.kubectl(
        &["set", "image", &deployment, "-n", &ops, "operator=localhost/kopf:9.99"],
        None,
    );
    pod_waiting(
        &node,
        &ops,
        &selector,
        &["ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull"],
        Duration::from_secs(120),
    )
    .await;
    let (_, doc) = explain_until(
        &node,
        "todo-api",
        &ns,
        Duration::from_secs(60),
        "operator-not-running naming the image",
        |_, d| {
            maybe_finding(d, "operator-not-running")
                .is_some_and(|f| f["severity"] == "problem" && f["title"].to_string().contains("localhost/kopf:9.99"))
        },
    )
    .await;
    let pull = finding(&doc, "operator-not-running");
    let commands = fix_commands(pull);
    let set_image = format!("kubectl -n {ops} set image {deployment} operator=IMAGE");
    assert_eq!(commands, std::slice::from_ref(&set_image), "{pull:#}");
    // IMAGE is the reader's to fill in ("or set one they can"): the image the nodes hold.
    node.sh(&set_image.replace("=IMAGE", &format!("={kopf_image}")));
    node.ready_pods(&ops, &selector, 1, &pods, Duration::from_secs(120))
        .await;
    explain_until(
        &node,
        "todo-api",
        &ns,
        Duration::from_secs(60),
        "operator-not-running ok after set image",
        |_, d| finding(d, "operator-not-running")["severity"] == "ok",
    )
    .await;

    // A container that keeps exiting: the fix reads its previous log, which names the cause.
    let broken = json!([{"op": "replace", "path": "/spec/template/spec/containers/0/command",
        "value": ["kopf", "run", "--standalone", format!("--namespace={ns}"), "/src/missing.py"]}]);
    node.kubectl(
        &[
            "patch",
            &deployment,
            "-n",
            &ops,
            "--type=json",
            "-p",
            &broken.to_string(),
        ],
        None,
    );
    pod_waiting(&node, &ops, &selector, &["CrashLoopBackOff"], Duration::from_secs(120)).await;
    let (_, doc) = explain_until(
        &node,
        "todo-api",
        &ns,
        Duration::from_secs(60),
        "operator-not-running on the crash loop",
        |_, d| {
            maybe_finding(d, "operator-not-running")
                .is_some_and(|f| f["severity"] == "problem" && f["title"].to_string().contains("CrashLoopBackOff"))
        },
    )
    .await;
    let crash = finding(&doc, "operator-not-running");
    let commands = fix_commands(crash);
    assert_eq!(commands.len(), 1, "{crash:#}");
    assert!(
        commands[0].starts_with(&format!("kubectl -n {ops} logs {OPERATOR}-"))
            && commands[0].ends_with(" -c operator --previous"),
        "{crash:#}"
    );
    let previous = node.sh(&commands[0]);
    assert!(previous.contains("missing.py"), "{previous}");
    // The cause it shows fixed (the command put back): running again.
    node.kubectl(&["rollout", "undo", &deployment, "-n", &ops], None);
    node.kubectl(&["rollout", "status", &deployment, "-n", &ops, "--timeout=240s"], None);
    explain_until(
        &node,
        "todo-api",
        &ns,
        Duration::from_secs(90),
        "operator-not-running ok after the crash is fixed",
        |_, d| finding(d, "operator-not-running")["severity"] == "ok",
    )
    .await;

    // Two replicas, no peering: both handle every object.
    node.kubectl(&["scale", &deployment, "-n", &ops, "--replicas=2"], None);
    let pods = node.ready_pods(&ops, &selector, 2, &[], Duration::from_secs(120)).await;
    let (_, doc) = explain_until(
        &node,
        "todo-api",
        &ns,
        Duration::from_secs(60),
        "operator-not-leading on double handling",
        |_, d| maybe_finding(d, "operator-not-leading").is_some_and(|f| f["severity"] != "ok"),
    )
    .await;
    let double = finding(&doc, "operator-not-leading");
    assert!(double["title"].to_string().contains("double handling"), "{double:#}");
    let commands = fix_commands(double);
    assert_eq!(
        commands,
        [format!("kubectl -n {ops} scale {deployment} --replicas=1")],
        "{double:#}"
    );
    node.sh(&commands[0]);
    eventually(Duration::from_secs(90), "one Pod left", || async {
        let out = node.kubectl(&["get", "pods", "-n", &ops, "-l", &selector, "-o", "name"], None);
        (out.lines().count() == 1 && pods.iter().any(|p| out.contains(p.as_str()))).then_some(())
    })
    .await;
    explain_until(
        &node,
        "todo-api",
        &ns,
        Duration::from_secs(60),
        "operator-not-leading ok with one replica",
        |_, d| finding(d, "operator-not-leading")["severity"] == "ok",
    )
    .await;
    done("e2e_fixes_node_kopf_deployment_scale_image_and_replicas", start);
}

// ---- Kopf's posting, decided by the Deployment's env --------------------------------------------

/// Kopf's posting turned off by `KOPF_POSTING=disabled` in the operator's env, read by its
/// startup function (`if mode == "disabled": settings.posting.enabled = False`), its handler
/// failing: `posting-disabled` is a problem decided by the env, and its first fix
/// (`kubectl set env ... KOPF_POSTING-`, which rolls the Pod) pasted: the new Pod posts the
/// handler's failures as events and `posting-disabled` is gone.
#[tokio::test]
#[ignore = "needs KMS_E2E_KUBECONFIG, KMS_E2E_NODE and KMS_E2E_KOPF_IMAGE"]
async fn e2e_fixes_node_kopf_posting_disabled_by_env_set_env_turns_it_on() {
    let start = Instant::now();
    let node = Node::from_env().await;
    let kopf_image = kopf_image();
    let _cluster = CLUSTER.lock().await;
    let id = unique("kms-fx-kopf-env");
    let (ops, ns) = (format!("{id}-ops"), format!("{id}-todo"));
    let source = std::fs::read_to_string(
        std::path::Path::new(REPO)
            .join("tests/fixtures/bundles-captured/kopf-posting-env-decided/kopf-operator.py.txt"),
    )
    .unwrap();
    let with_env_and_events = |list: &mut Value| {
        for item in list["items"].as_array_mut().unwrap() {
            if item["kind"] == "Deployment" {
                item["spec"]["template"]["spec"]["containers"][0]["env"] =
                    json!([{"name": "KOPF_POSTING", "value": "disabled"}]);
            }
            if item["kind"] == "Role" {
                item["rules"]
                    .as_array_mut()
                    .unwrap()
                    .push(json!({"apiGroups": [""], "resources": ["events"], "verbs": ["create"]}));
            }
        }
    };
    let _installed = install_kopf_edited(&node, &kopf_image, &ops, &ns, &source, &with_env_and_events).await;
    let selector = format!("app={OPERATOR}");
    let pods = node.ready_pods(&ops, &selector, 1, &[], Duration::from_secs(120)).await;
    node.wait_log(
        &ops,
        &pods[0],
        "Activity 'configure' succeeded.",
        Duration::from_secs(60),
    )
    .await;
    node.apply_todo_api(&ns);
    node.wait_log(
        &ops,
        &pods[0],
        "Handler 'accept' failed temporarily: image pull check failed",
        Duration::from_secs(60),
    )
    .await;
    assert!(node.events(&ns, "todo-api").await.is_empty());

    let (code, doc) = explain(&node, "todo-api", &ns);
    assert_eq!(code, 1, "{doc:#}");
    let posting = finding(&doc, "posting-disabled");
    assert_eq!(posting["severity"], "problem", "{doc:#}");
    assert!(posting["title"].to_string().contains("KOPF_POSTING"), "{posting:#}");
    let commands = fix_commands(posting);
    let set_env = format!("kubectl -n {ops} set env deployment/{OPERATOR} -c operator KOPF_POSTING-");
    // The first fix; the second (a restart) follows an edit of operator.py.
    assert_eq!(commands.first(), Some(&set_env), "{posting:#}");
    let out = node.sh(&set_env);
    assert_eq!(out.trim(), format!("deployment.apps/{OPERATOR} env updated"));
    let new_pods = node
        .ready_pods(&ops, &selector, 1, &pods, Duration::from_secs(120))
        .await;
    node.wait_log(&ops, &new_pods[0], "failed temporarily", Duration::from_secs(60))
        .await;
    let events = eventually(Duration::from_secs(60), "Kopf's events of the failures", || async {
        let events = node.events(&ns, "todo-api").await;
        events
            .iter()
            .any(|e| {
                e.message
                    .as_deref()
                    .is_some_and(|m| m.contains("image pull check failed"))
            })
            .then_some(events)
    })
    .await;
    assert!(
        events.iter().all(|e| e.reason.as_deref() == Some("Logging")),
        "{events:#?}"
    );
    let (_, doc) = explain_until(
        &node,
        "todo-api",
        &ns,
        Duration::from_secs(60),
        "no posting-disabled",
        |_, d| maybe_finding(d, "posting-disabled").is_none_or(|f| f["severity"] == "ok"),
    )
    .await;
    // The handler still fails: accepted-stale's next command shows its runs and their errors,
    // and events-elsewhere's lists the events that a `type=Warning` filter hides (Kopf posts
    // handler failures as type Error).
    let stale = finding(&doc, "accepted-stale");
    let commands = fix_commands(stale);
    assert_eq!(
        commands,
        [format!("kubectl microservice logs --handler accept todo-api -n {ns}")],
        "{stale:#}"
    );
    let runs = node.sh(&commands[0]);
    assert!(runs.contains("image pull check failed"), "{runs}");
    let elsewhere = finding(&doc, "events-elsewhere");
    let commands = fix_commands(elsewhere);
    assert_eq!(commands.len(), 1, "{elsewhere:#}");
    // Scoped to the namespace and the object's uid (issue 20): no other team's object of the
    // same name is listed (kubectl prints no namespace column with -n).
    assert!(
        commands[0].starts_with(&format!(
            "kubectl get events -n {ns} --field-selector involvedObject.uid="
        )),
        "{elsewhere:#}"
    );
    let listed = node.sh(&commands[0]);
    assert!(listed.contains("image pull check failed"), "{listed}");
    done("e2e_fixes_node_kopf_posting_disabled_by_env_set_env_turns_it_on", start);
}

// ---- patch-rejected -----------------------------------------------------------------------------

/// Kopf may not patch the object (its Role lacks `patch microservices`): the handler succeeds,
/// Kopf's PATCH of its record is refused with 403 (9 tries, then `Throttling ...
/// APIForbiddenError`). `status` is not fresh, its first reason `patch-rejected`;
/// `explain-events`' first finding `patch-rejected` names the 403, and its fix pasted in order
/// (the `kubectl patch role`, the `kubectl auth can-i` check, which prints yes, and the
/// `rollout restart` that has Kopf handle the object now) makes `status` fresh and clears it.
#[tokio::test]
#[ignore = "needs KMS_E2E_KUBECONFIG, KMS_E2E_NODE and KMS_E2E_KOPF_IMAGE"]
async fn e2e_fixes_node_kopf_patch_forbidden_the_role_patch_and_restart() {
    let start = Instant::now();
    let node = Node::from_env().await;
    let kopf_image = kopf_image();
    let _cluster = CLUSTER.lock().await;
    let id = unique("kms-fx-kopf-403");
    let (ops, ns) = (format!("{id}-ops"), format!("{id}-todo"));
    let without_patch = |list: &mut Value| {
        for item in list["items"].as_array_mut().unwrap() {
            if item["kind"] == "Role" {
                item["rules"][0]["verbs"] = json!(["get", "list", "watch"]);
            }
        }
    };
    let _installed = install_kopf_edited(&node, &kopf_image, &ops, &ns, &tutorial_operator_py(), &without_patch).await;
    let selector = format!("app={OPERATOR}");
    let pods = node.ready_pods(&ops, &selector, 1, &[], Duration::from_secs(120)).await;
    node.wait_log(
        &ops,
        &pods[0],
        "Activity 'configure' succeeded.",
        Duration::from_secs(60),
    )
    .await;
    node.apply_todo_api(&ns);
    // Kopf retries a 403 9 times (about 55 s) before it gives up on the cycle.
    node.wait_log(&ops, &pods[0], "APIForbiddenError", Duration::from_secs(150))
        .await;
    node.wait_log(&ops, &pods[0], "Throttling for", Duration::from_secs(150))
        .await;

    let item = status_item(&node, "todo-api", &ns);
    assert_ne!(item["verdict"], "fresh", "{item:#}");
    assert_eq!(item["reasons"][0]["code"], "patch-rejected", "{item:#}");
    let (code, doc) = explain(&node, "todo-api", &ns);
    assert_eq!(code, 1, "{doc:#}");
    let rejected = &doc["findings"][0];
    assert_eq!(rejected["id"], "patch-rejected", "{doc:#}");
    assert_eq!(rejected["severity"], "problem", "{doc:#}");
    assert!(rejected.to_string().contains("403"), "{rejected:#}");
    let commands = fix_commands(rejected);
    let sa = format!("system:serviceaccount:{ops}:{OPERATOR}");
    assert_eq!(
        commands,
        [
            format!(
                r#"kubectl -n {ns} patch role {OPERATOR} --type=json -p '[{{"op":"add","path":"/rules/-","value":{{"apiGroups":["platform.example.io"],"resources":["microservices"],"verbs":["patch"]}}}}]'"#
            ),
            format!("kubectl auth can-i patch microservices.platform.example.io -n {ns} --as={sa}"),
            format!("kubectl -n {ops} rollout restart deployment {OPERATOR}"),
        ],
        "{rejected:#}"
    );
    // rbac-resource (the Role read by hand: a warning) gives the same rule and check.
    let resource = finding(&doc, "rbac-resource");
    assert_eq!(fix_commands(resource), commands[..2], "{resource:#}");
    assert_eq!(node.sh_output(&commands[1]).trim(), "no");
    let out = node.sh(&commands[0]);
    assert_eq!(out.trim(), format!("role.rbac.authorization.k8s.io/{OPERATOR} patched"));
    eventually(Duration::from_secs(20), "can-i prints yes", || async {
        (node.sh_output(&commands[1]).trim() == "yes").then_some(())
    })
    .await;
    let out = node.sh(&commands[2]);
    assert_eq!(out.trim(), format!("deployment.apps/{OPERATOR} restarted"));
    let new_pods = node
        .ready_pods(&ops, &selector, 1, &pods, Duration::from_secs(120))
        .await;
    node.wait_log(
        &ops,
        &new_pods[0],
        " is processed: 1 succeeded; 0 failed.",
        Duration::from_secs(60),
    )
    .await;
    status_until(&node, "todo-api", &ns, "fresh", Duration::from_secs(60)).await;
    let (_, doc) = explain_until(
        &node,
        "todo-api",
        &ns,
        Duration::from_secs(60),
        "patch-rejected gone",
        |_, d| maybe_finding(d, "patch-rejected").is_none_or(|f| f["severity"] == "ok"),
    )
    .await;
    assert!(
        maybe_finding(&doc, "rbac-resource").is_none_or(|f| f["severity"] == "ok"),
        "{doc:#}"
    );
    done("e2e_fixes_node_kopf_patch_forbidden_the_role_patch_and_restart", start);
}

/// Kopf's final PATCH refused with 422 (nolar/kopf#1087): a 140000-byte annotation, which
/// Kopf's last-handled-configuration copies, takes the object's annotations over 262144 bytes.
/// `explain-events`' first finding `patch-rejected` names the annotation; its first fix (`kubectl
/// annotate ... KEY-`) pasted: Kopf handles the object again at that change, its PATCH fits, and
/// `status` is fresh; `patch-rejected` is gone.
#[tokio::test]
#[ignore = "needs KMS_E2E_KUBECONFIG, KMS_E2E_NODE and KMS_E2E_KOPF_IMAGE"]
async fn e2e_fixes_node_kopf_annotations_too_long_removing_the_annotation() {
    let start = Instant::now();
    let node = Node::from_env().await;
    let kopf_image = kopf_image();
    let _cluster = CLUSTER.lock().await;
    let id = unique("kms-fx-kopf-422");
    let (ops, ns) = (format!("{id}-ops"), format!("{id}-todo"));
    let _installed = install_kopf(&node, &kopf_image, &ops, &ns, &tutorial_operator_py()).await;
    let selector = format!("app={OPERATOR}");
    let pods = node.ready_pods(&ops, &selector, 1, &[], Duration::from_secs(120)).await;
    node.wait_log(
        &ops,
        &pods[0],
        "Activity 'configure' succeeded.",
        Duration::from_secs(60),
    )
    .await;
    let big = json!({
        "apiVersion": "platform.example.io/v1alpha1", "kind": "Microservice",
        "metadata": {"name": "big-api", "namespace": ns,
                     "annotations": {"example.com/openapi-schema": "x".repeat(140_000)}},
        "spec": {"image": TODO_IMAGE, "port": 8080}
    });
    // `create`, not `apply`: apply's own last-applied annotation would double it at once.
    node.kubectl(&["create", "-f", "-"], Some(big.to_string().as_bytes()));
    node.wait_log(
        &ops,
        &pods[0],
        "must have at most 262144 bytes",
        Duration::from_secs(60),
    )
    .await;

    let item = status_item(&node, "big-api", &ns);
    assert_ne!(item["verdict"], "fresh", "{item:#}");
    let (code, doc) = explain(&node, "big-api", &ns);
    assert_eq!(code, 1, "{doc:#}");
    let rejected = &doc["findings"][0];
    assert_eq!(rejected["id"], "patch-rejected", "{doc:#}");
    assert!(
        rejected.to_string().contains("example.com/openapi-schema"),
        "{rejected:#}"
    );
    let commands = fix_commands(rejected);
    let remove = format!("kubectl annotate microservice big-api -n {ns} example.com/openapi-schema-");
    // The first fix; the others (Kopf's record in the status) need an edit of operator.py.
    assert_eq!(commands.first(), Some(&remove), "{rejected:#}");
    let out = node.sh(&remove);
    assert_eq!(out.trim(), "microservice.platform.example.io/big-api annotated");
    // The handler ran once before the 422; it runs again at the change.
    let processed = format!("[{ns}/big-api] Creation is processed: 1 succeeded; 0 failed.");
    eventually(Duration::from_secs(60), "big-api handled again", || async {
        (count(&node.log(&ops, &pods[0]).await, &processed) >= 2).then_some(())
    })
    .await;
    status_until(&node, "big-api", &ns, "fresh", Duration::from_secs(60)).await;
    explain_until(
        &node,
        "big-api",
        &ns,
        Duration::from_secs(60),
        "patch-rejected gone",
        |_, d| maybe_finding(d, "patch-rejected").is_none_or(|f| f["severity"] == "ok"),
    )
    .await;
    done(
        "e2e_fixes_node_kopf_annotations_too_long_removing_the_annotation",
        start,
    );
}

// ---- operator-not-watching ----------------------------------------------------------------------

/// An object in a namespace no operator serves (the cluster's other operators watch theirs):
/// `operator-not-watching` lists them and its first fix installs an operator of ours in the
/// object's own namespace, leaving the shared CRD and ClusterRoles as they are (issue 18: a fix
/// never replaces the CRD): `kubectl microservice manifests --namespace NS --watch-namespace NS
/// --without-shared | kubectl apply -f -`. Pasted: the operator runs, the object is Accepted, and
/// `explain-events` names that operator with nothing wrong (exit 0).
#[tokio::test]
#[ignore = "needs KMS_E2E_KUBECONFIG and KMS_E2E_NODE"]
async fn e2e_fixes_node_operator_not_watching_the_install_line_serves_it() {
    let start = Instant::now();
    let node = Node::from_env().await;
    assert!(
        node.image.is_none(),
        "the pasted install runs the manifests' default image: KMS_E2E_NODE must be 1 (the nodes hold it)"
    );
    let _cluster = CLUSTER.lock().await;
    apply_crd(&node);
    let ns = unique("kms-fx-unwatched");
    let _installed = Installed::namespaces(&node, &[&ns]);
    node.apply_todo_api(&ns);

    let (code, doc) = explain(&node, "todo-api", &ns);
    assert_eq!(code, 1, "{doc:#}");
    let unwatched = finding(&doc, "operator-not-watching");
    assert_eq!(unwatched["severity"], "problem", "{doc:#}");
    let commands = fix_commands(unwatched);
    let install = &commands[0];
    let ops = ns.clone();
    assert_eq!(
        *install,
        format!(
            "kubectl microservice manifests --namespace {ns} --watch-namespace {ns} --without-shared | kubectl apply -f -"
        ),
        "the first fix is not the install line: {unwatched:#}"
    );
    let out = node.sh(install);
    assert!(out.contains(&format!("deployment.apps/{OPERATOR} created")), "{out}");
    let pods = node.ready_pods(&ops, POD_LABEL, 2, &[], Duration::from_secs(120)).await;
    node.leader(&ns, &pods, Duration::from_secs(30)).await;
    node.accepted(&ns, "todo-api", 1, Duration::from_secs(30)).await;
    let (code, doc) = explain_until(
        &node,
        "todo-api",
        &ns,
        Duration::from_secs(60),
        "operator-not-watching gone",
        |code, d| code == 0 && maybe_finding(d, "operator-not-watching").is_none(),
    )
    .await;
    assert_eq!(doc["operator"], format!("{ops}/deployment/{OPERATOR}"), "{doc:#}");
    assert_eq!((code, not_ok(&doc)), (0, vec![]), "{doc:#}");
    let item = status_until(&node, "todo-api", &ns, "fresh", Duration::from_secs(30)).await;
    assert_eq!(item["operator"], format!("{ops}/deployment/{OPERATOR}"), "{item:#}");
    done("e2e_fixes_node_operator_not_watching_the_install_line_serves_it", start);
}

/// Our operator (the manifests' Deployment) watching another namespace, named with
/// `--operator`: `operator-not-watching`'s fix is the `manifests` line with the namespace added
/// (its Deployment re-rendered, its Roles in the namespace: watching alone, without the rights
/// there, would not serve it). Pasted: the operator rolls, the object is Accepted, and
/// `explain-events` (without `--operator`) names that operator with nothing wrong.
#[tokio::test]
#[ignore = "needs KMS_E2E_KUBECONFIG and KMS_E2E_NODE"]
async fn e2e_fixes_node_operator_not_watching_the_manifests_line_adds_the_namespace() {
    let start = Instant::now();
    let node = Node::from_env().await;
    let _cluster = CLUSTER.lock().await;
    let id = unique("kms-fx-watch");
    let (ops, watched, other) = (format!("{id}-ops"), format!("{id}-a"), format!("{id}-b"));
    let _installed = node.install(&ops, &watched, None, None);
    let _other = Installed::namespaces(&node, &[&other]);
    let pods = node.ready_pods(&ops, POD_LABEL, 2, &[], Duration::from_secs(120)).await;
    node.leader(&watched, &pods, Duration::from_secs(30)).await;
    node.apply_todo_api(&other);
    let operator = format!("{ops}/deployment/{OPERATOR}");

    let (code, doc) = node.plugin_json(
        &["explain-events", "todo-api", "-n", &other, "--operator", &operator],
        &[1],
    );
    assert_eq!(code, 1);
    let unwatched = finding(&doc, "operator-not-watching");
    assert_eq!(unwatched["severity"], "problem", "{doc:#}");
    let image = node.image.as_ref().map(|i| format!(" --image {i}")).unwrap_or_default();
    let line = format!(
        "kubectl microservice manifests --namespace {ops} --without-shared --watch-namespace {watched} --watch-namespace {other}{image} | kubectl apply -f -"
    );
    assert_eq!(fix_commands(unwatched), std::slice::from_ref(&line), "{unwatched:#}");
    let out = node.sh(&line);
    assert!(out.contains(&format!("deployment.apps/{OPERATOR} configured")), "{out}");
    assert!(
        out.contains(&format!("role.rbac.authorization.k8s.io/{OPERATOR} created")),
        "{out}"
    );
    node.kubectl(
        &[
            "rollout",
            "status",
            &format!("deployment/{OPERATOR}"),
            "-n",
            &ops,
            "--timeout=240s",
        ],
        None,
    );
    node.accepted(&other, "todo-api", 1, Duration::from_secs(60)).await;
    let (code, doc) = explain_until(
        &node,
        "todo-api",
        &other,
        Duration::from_secs(60),
        "the operator serves the namespace",
        |code, d| code == 0 && maybe_finding(d, "operator-not-watching").is_none(),
    )
    .await;
    assert_eq!(doc["operator"], operator, "{doc:#}");
    assert_eq!((code, not_ok(&doc)), (0, vec![]), "{doc:#}");
    done(
        "e2e_fixes_node_operator_not_watching_the_manifests_line_adds_the_namespace",
        start,
    );
}
