//! A real cluster for the end-to-end tests of `tests/e2e_node.rs` and `tests/e2e_fixes.rs`
//! (included with `#[path]`): `KMS_E2E_KUBECONFIG`, the operator image of `KMS_E2E_NODE`, a
//! kubectl; running kubectl and this build against it, the manifests' and the tutorial Kopf
//! operator's installs, Pods, logs, and a pasted fix run in `sh`. Not every item is used by
//! both files.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Event, Pod};
use kube::api::{Api, DynamicObject, ListParams, LogParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::discovery::ApiResource;
use kube::{Client, Config};
use serde_json::{Value, json};

pub const BIN: &str = env!("CARGO_BIN_EXE_kubectl-microservice");
pub const REPO: &str = env!("CARGO_MANIFEST_DIR");
/// The image of examples/todo-api.yaml (what the handler records; nothing runs it).
pub const TODO_IMAGE: &str = "ghcr.io/yrw9281/it30-todo-api:0.1.0";
/// The label the manifests put on the operator's Pods (the README's `kubectl logs -l`).
pub const POD_LABEL: &str = "app.kubernetes.io/name=kubectl-microservice";
/// The Deployment, ServiceAccount and Lease name.
pub const OPERATOR: &str = "microservice-operator";

/// Serialises the tests of the including file: they apply the same cluster-scoped CRD and ClusterRoles.
pub static CLUSTER: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The value of `name`, or a panic naming it and what it is for: the tests are `#[ignore]`d, so
/// reaching here without it means someone asked for them with `--ignored`.
pub fn required(name: &str, what: &str) -> String {
    match std::env::var(name) {
        Ok(v) if !v.is_empty() => v,
        _ => panic!(
            "{name} is not set: {what}. The node e2e tests need KMS_E2E_KUBECONFIG and KMS_E2E_NODE \
             (see tests/e2e_node.rs or CONTRIBUTING.md's end-to-end section); without such a \
             cluster, run `cargo test` without --ignored"
        ),
    }
}

/// The cluster of `KMS_E2E_KUBECONFIG`, with the image of `KMS_E2E_NODE` and a kubectl.
pub struct Node {
    /// `KMS_E2E_KUBECONFIG`.
    pub kubeconfig: PathBuf,
    /// `--image REF` for `manifests`, or none for its default image (`KMS_E2E_NODE=1`).
    pub image: Option<String>,
    /// The kubectl the tests run (`KMS_E2E_KUBECTL`, else `kubectl` on PATH).
    pub kubectl: String,
    /// A client of `KMS_E2E_KUBECONFIG`.
    pub admin: Client,
    /// `kubectl` (the one above) and `kubectl-microservice` (this build), first on the PATH of
    /// [`Node::sh`]: a pasted `kubectl microservice ...` runs this build as kubectl's plugin.
    shims: tempfile::TempDir,
}

impl Node {
    /// Reads the variables (panicking, naming the one missing) and connects.
    pub async fn from_env() -> Node {
        let node = required(
            "KMS_E2E_NODE",
            "set it to 1 once the cluster's nodes hold the operator image under the name `manifests` \
             runs (scripts/release.sh image, then import the archive into each node), or to an \
             image reference the nodes can pull",
        );
        let mut cluster = Node::api_only().await;
        cluster.image = (node != "1").then_some(node);
        cluster
    }

    /// `KMS_E2E_KUBECONFIG` and a kubectl only, for tests that run no Pod (the cluster need
    /// not have nodes): panics naming what is missing.
    pub async fn api_only() -> Node {
        let kubeconfig = PathBuf::from(required(
            "KMS_E2E_KUBECONFIG",
            "point it at a disposable cluster's admin kubeconfig",
        ));
        let kubectl = std::env::var("KMS_E2E_KUBECTL").unwrap_or_else(|_| "kubectl".into());
        let version = Command::new(&kubectl).args(["version", "--client"]).output();
        assert!(
            version.as_ref().is_ok_and(|o| o.status.success()),
            "the e2e tests run kubectl: {kubectl:?} does not run ({version:?}); put kubectl on PATH \
             or name it in KMS_E2E_KUBECTL"
        );
        let config = Kubeconfig::read_from(&kubeconfig).expect("KMS_E2E_KUBECONFIG is readable");
        let config = Config::from_custom_kubeconfig(config, &KubeConfigOptions::default())
            .await
            .expect("KMS_E2E_KUBECONFIG is usable");
        let admin = Client::try_from(config).expect("client builds");
        let shims = tempfile::tempdir().expect("a temporary directory");
        let real_kubectl = which(&kubectl);
        std::os::unix::fs::symlink(&real_kubectl, shims.path().join("kubectl")).expect("kubectl shim");
        std::os::unix::fs::symlink(BIN, shims.path().join("kubectl-microservice")).expect("plugin shim");
        Node {
            kubeconfig,
            image: None,
            kubectl,
            admin,
            shims,
        }
    }

    /// `kubectl --kubeconfig KMS_E2E_KUBECONFIG ARGS...` with `stdin`; its stdout, or a panic
    /// with its stderr.
    pub fn kubectl(&self, args: &[&str], stdin: Option<&[u8]>) -> String {
        let out = self.kubectl_output(args, stdin);
        assert!(
            out.status.success(),
            "kubectl {args:?} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn kubectl_output(&self, args: &[&str], stdin: Option<&[u8]>) -> std::process::Output {
        let mut child = Command::new(&self.kubectl)
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args(args)
            .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("kubectl starts");
        if let Some(input) = stdin {
            child
                .stdin
                .take()
                .unwrap()
                .write_all(input)
                .expect("kubectl reads stdin");
        }
        child.wait_with_output().expect("kubectl runs")
    }

    /// `kubectl-microservice ARGS...` against the cluster (a `--bundle` run gets no kubeconfig):
    /// (exit code, stdout, stderr).
    pub fn plugin(&self, args: &[&str]) -> (i32, String, String) {
        let mut command = Command::new(BIN);
        command.args(args).env("NO_COLOR", "1");
        if !args.contains(&"--bundle") && args.first() != Some(&"manifests") {
            command.arg("--kubeconfig").arg(&self.kubeconfig);
        }
        let out = command.output().expect("kubectl-microservice runs");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// The `-o json` document of a plugin command that must exit with one of `codes`.
    pub fn plugin_json(&self, args: &[&str], codes: &[i32]) -> (i32, Value) {
        let mut with_json = args.to_vec();
        with_json.extend(["-o", "json"]);
        let (code, out, err) = self.plugin(&with_json);
        assert!(codes.contains(&code), "{args:?} exited {code}: {err}\n{out}");
        let doc = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}: {out}\n{err}"));
        (code, doc)
    }

    /// The README's install: `kubectl create namespace` for both (the operator's with restricted
    /// Pod Security enforced), then `manifests --namespace OPS --watch-namespace NS [--image REF] |
    /// kubectl apply -f -`, or with `edit` the `-o json` List edited first. Returns the guard
    /// that deletes what was created.
    pub fn install(
        &self,
        ops: &str,
        ns: &str,
        image: Option<&str>,
        edit: Option<&dyn Fn(&mut Value)>,
    ) -> Installed<'_> {
        let mut installed = Installed {
            node: self,
            namespaces: Vec::new(),
            ops: ops.to_string(),
        };
        for namespace in [ops, ns] {
            self.kubectl(&["create", "namespace", namespace], None);
            installed.namespaces.push(namespace.to_string());
        }
        self.kubectl(
            &[
                "label",
                "namespace",
                ops,
                "pod-security.kubernetes.io/enforce=restricted",
                "pod-security.kubernetes.io/enforce-version=latest",
            ],
            None,
        );
        let mut args = vec!["manifests", "--namespace", ops, "--watch-namespace", ns];
        if let Some(image) = image.or(self.image.as_deref()) {
            args.extend(["--image", image]);
        }
        let rendered = match edit {
            None => {
                let (code, yaml, err) = self.plugin(&args);
                assert_eq!(code, 0, "manifests: {err}");
                yaml
            }
            Some(edit) => {
                args.extend(["-o", "json"]);
                let (code, out, err) = self.plugin(&args);
                assert_eq!(code, 0, "manifests: {err}");
                let mut list: Value = serde_json::from_str(&out).unwrap();
                edit(&mut list);
                list.to_string()
            }
        };
        let applied = self.kubectl(&["apply", "-f", "-"], Some(rendered.as_bytes()));
        assert!(
            applied.contains(&format!("deployment.apps/{OPERATOR} created")),
            "{applied}"
        );
        installed
    }

    /// The operator's Pods in `ops` that are not being deleted.
    pub async fn pods(&self, ops: &str) -> Vec<Pod> {
        let api: Api<Pod> = Api::namespaced(self.admin.clone(), ops);
        api.list(&ListParams::default().labels(POD_LABEL))
            .await
            .expect("pods list")
            .items
            .into_iter()
            .filter(|p| p.metadata.deletion_timestamp.is_none())
            .collect()
    }

    /// Waits for exactly `replicas` Ready operator Pods (label `selector`) in `ops`, none of
    /// them in `not` (the Pods before a restart) and none other left, not even terminating;
    /// returns their names, sorted. On timeout the panic shows each Pod's state and the
    /// namespace's events (an image the node does not hold shows as ErrImageNeverPull or
    /// ImagePullBackOff there).
    pub async fn ready_pods(
        &self,
        ops: &str,
        selector: &str,
        replicas: usize,
        not: &[String],
        limit: Duration,
    ) -> Vec<String> {
        let api: Api<Pod> = Api::namespaced(self.admin.clone(), ops);
        let start = Instant::now();
        loop {
            let all = api
                .list(&ListParams::default().labels(selector))
                .await
                .map(|l| l.items)
                .unwrap_or_default();
            let names: Vec<String> = all.iter().filter_map(|p| p.metadata.name.clone()).collect();
            let mut ready: Vec<String> = all
                .iter()
                .filter(|p| is_ready(p))
                .filter_map(|p| p.metadata.name.clone())
                .collect();
            if ready.len() == replicas && names.len() == replicas && !names.iter().any(|n| not.contains(n)) {
                ready.sort();
                return ready;
            }
            if start.elapsed() > limit {
                let states: Vec<String> = all.iter().map(pod_state).collect();
                let events = self.kubectl_output(&["get", "events", "-n", ops], None);
                panic!(
                    "timed out after {limit:?} waiting for {replicas} Ready Pods ({selector}) in {ops}, none of \
                     {not:?}; the Pods:\n{}\nthe events:\n{}",
                    states.join("\n"),
                    String::from_utf8_lossy(&events.stdout)
                );
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// The Pod that holds the Lease `ns/microservice-operator` (its holderIdentity is
    /// `POD_<random>`), once it is one of `pods`.
    pub async fn leader(&self, ns: &str, pods: &[String], limit: Duration) -> String {
        let api: Api<Lease> = Api::namespaced(self.admin.clone(), ns);
        eventually(
            limit,
            &format!("the Lease {ns}/{OPERATOR} held by one of {pods:?}"),
            || async {
                let lease = api.get(OPERATOR).await.ok()?;
                let holder = lease.spec?.holder_identity?;
                let (pod, _) = holder.rsplit_once('_')?;
                pods.iter().find(|p| *p == pod).cloned()
            },
        )
        .await
    }

    /// The log of the operator container of `pod` in `ops`, as the kubelet serves it.
    pub async fn log(&self, ops: &str, pod: &str) -> String {
        let api: Api<Pod> = Api::namespaced(self.admin.clone(), ops);
        api.logs(
            pod,
            &LogParams {
                container: Some("operator".into()),
                ..LogParams::default()
            },
        )
        .await
        .unwrap_or_else(|e| panic!("logs of {ops}/{pod}: {e}"))
    }

    /// Waits until `pod`'s log has a line containing `needle`; returns the log.
    pub async fn wait_log(&self, ops: &str, pod: &str, needle: &str, limit: Duration) -> String {
        let start = Instant::now();
        loop {
            let log = self.log(ops, pod).await;
            if log.contains(needle) {
                return log;
            }
            assert!(
                start.elapsed() < limit,
                "timed out after {limit:?} waiting for {needle:?} in the log of {ops}/{pod}:\n{log}"
            );
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// `GET path` through the API server's pods/proxy to port 8080 of `pod` (the operator's
    /// `--health-listen`): the body of a 2xx answer, or the error.
    pub async fn through_pod(&self, ops: &str, pod: &str, path: &str) -> Result<String, kube::Error> {
        let request = http::Request::get(format!("/api/v1/namespaces/{ops}/pods/{pod}:8080/proxy{path}"))
            .body(Vec::new())
            .unwrap();
        self.admin.request_text(request).await
    }

    /// Applies the fix of an `rbac-events` finding as it is printed: "add to the rules of Role
    /// NS/NAME:", the rule (which must be `rule`), "with: kubectl ... patch role ...", "then
    /// check the rule with kubectl auth can-i ... (it prints yes)". The commands run in `sh`
    /// with `kubectl` meaning this cluster's kubectl; each check must print `yes`.
    pub fn apply_events_fix(&self, finding: &Value, ns: &str, rule: Value) {
        let fix = finding["fix"].as_str().unwrap_or_else(|| panic!("no fix: {finding:#}"));
        let lines: Vec<&str> = fix.lines().collect();
        assert_eq!(lines[0], format!("add to the rules of Role {ns}/{OPERATOR}:"), "{fix}");
        let with = lines
            .iter()
            .position(|l| l.starts_with("with: "))
            .unwrap_or_else(|| panic!("no `with:` command: {fix}"));
        let rule_yaml = lines[1..with].join("\n");
        let rules: Vec<Value> = serde_saphyr::from_str(&rule_yaml).unwrap_or_else(|e| panic!("{e}: {fix}"));
        assert_eq!(rules, [rule], "{fix}");
        let patch = lines[with].strip_prefix("with: ").unwrap();
        assert!(
            patch.starts_with(&format!("kubectl -n {ns} patch role {OPERATOR} ")),
            "{fix}"
        );
        let out = self.sh(patch);
        assert_eq!(
            out.trim(),
            format!("role.rbac.authorization.k8s.io/{OPERATOR} patched"),
            "{fix}"
        );
        let checks = lines[with + 1..]
            .join("\n")
            .strip_prefix("then check the rule with ")
            .and_then(|rest| rest.split_once(" (it prints yes)").map(|(c, _)| c.to_string()))
            .unwrap_or_else(|| panic!("no check: {fix}"));
        for check in checks.split(" and ") {
            assert!(check.starts_with("kubectl auth can-i "), "{check}: {fix}");
            let start = Instant::now();
            // The authorizer's cache may answer no for a moment after the write.
            while self.sh_output(check).trim() != "yes" {
                assert!(
                    start.elapsed() < Duration::from_secs(20),
                    "{check} does not print yes: {fix}"
                );
                std::thread::sleep(Duration::from_millis(500));
            }
        }
    }

    /// `sh -c COMMAND` as a user pastes it into a shell: `kubectl` is this cluster's kubectl,
    /// with `KUBECONFIG` set to `KMS_E2E_KUBECONFIG`, and `kubectl microservice` this build
    /// (kubectl's plugin lookup finds it first on PATH). Its stdout, or a panic with its stderr.
    pub fn sh(&self, command: &str) -> String {
        let out = self.sh_command(command).output().expect("sh runs");
        assert!(
            out.status.success(),
            "{command}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// [`Node::sh`]'s stdout whatever the exit code (`kubectl auth can-i` exits 1 with `no`).
    pub fn sh_output(&self, command: &str) -> String {
        let out = self.sh_command(command).output().expect("sh runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The `sh -c COMMAND` of [`Node::sh`].
    pub fn sh_command(&self, command: &str) -> Command {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut dirs = vec![self.shims.path().to_path_buf()];
        dirs.extend(std::env::split_paths(&path));
        let mut sh = Command::new("sh");
        sh.arg("-c")
            .arg(command)
            .env("PATH", std::env::join_paths(dirs).expect("PATH joins"))
            .env("KUBECONFIG", &self.kubeconfig)
            .env("NO_COLOR", "1");
        sh
    }

    pub fn microservices(&self, ns: &str) -> Api<DynamicObject> {
        let resource = ApiResource {
            group: "platform.example.io".into(),
            version: "v1alpha1".into(),
            api_version: "platform.example.io/v1alpha1".into(),
            kind: "Microservice".into(),
            plural: "microservices".into(),
        };
        Api::namespaced_with(self.admin.clone(), ns, &resource)
    }

    /// Waits for `ns/name` Accepted at `generation`.
    pub async fn accepted(&self, ns: &str, name: &str, generation: i64, limit: Duration) -> DynamicObject {
        let api = self.microservices(ns);
        eventually(
            limit,
            &format!("{ns}/{name} Accepted at generation {generation}"),
            || async {
                let obj = api.get(name).await.ok()?;
                let status = obj.data.get("status")?;
                (status["phase"] == "Accepted" && status["observedGeneration"] == generation).then_some(obj)
            },
        )
        .await
    }

    /// The core/v1 events about the Microservice `ns/name` (events.k8s.io/v1 events are served
    /// there too).
    pub async fn events(&self, ns: &str, name: &str) -> Vec<Event> {
        let api: Api<Event> = Api::namespaced(self.admin.clone(), ns);
        let params =
            ListParams::default().fields(&format!("involvedObject.kind=Microservice,involvedObject.name={name}"));
        api.list(&params).await.expect("events list").items
    }

    /// examples/todo-api.yaml in namespace `ns`, applied with kubectl (the README's step).
    pub fn apply_todo_api(&self, ns: &str) {
        let example = std::fs::read_to_string(Path::new(REPO).join("examples/todo-api.yaml")).unwrap();
        assert!(example.contains("  namespace: todo\n"), "{example}");
        let example = example.replace("  namespace: todo\n", &format!("  namespace: {ns}\n"));
        let out = self.kubectl(&["apply", "-f", "-"], Some(example.as_bytes()));
        assert_eq!(out.trim(), "microservice.platform.example.io/todo-api created");
    }

    /// `kubectl rollout restart` of the operator, then `kubectl rollout status` until it is done.
    pub fn rollout_restart(&self, ops: &str) {
        let deployment = format!("deployment/{OPERATOR}");
        let out = self.kubectl(&["rollout", "restart", &deployment, "-n", ops], None);
        assert_eq!(out.trim(), format!("deployment.apps/{OPERATOR} restarted"));
        self.kubectl(&["rollout", "status", &deployment, "-n", ops, "--timeout=240s"], None);
    }
}

/// What [`Node::install`] created: deleted on drop (the namespaces, without waiting, and the
/// ClusterRoleBinding named after the operator's namespace).
pub struct Installed<'a> {
    node: &'a Node,
    namespaces: Vec<String>,
    ops: String,
}

impl<'a> Installed<'a> {
    /// Creates `namespaces` with kubectl; the first is the operator's (its ClusterRoleBinding
    /// is deleted with them).
    pub fn namespaces(node: &'a Node, namespaces: &[&str]) -> Installed<'a> {
        let mut installed = Installed {
            node,
            namespaces: Vec::new(),
            ops: namespaces.first().map(|n| n.to_string()).unwrap_or_default(),
        };
        for namespace in namespaces {
            node.kubectl(&["create", "namespace", namespace], None);
            installed.namespaces.push(namespace.to_string());
        }
        installed
    }

    /// Also deletes `namespace` (and the ClusterRoleBinding the manifests name after it, as
    /// the operator's namespace): one a pasted command created.
    pub fn adopt(&mut self, namespace: &str) {
        self.ops = namespace.to_string();
        self.namespaces.push(namespace.to_string());
    }
}

impl Drop for Installed<'_> {
    fn drop(&mut self) {
        let binding = format!("clusterrolebinding/{OPERATOR}-crd-{}", self.ops);
        let _ = self
            .node
            .kubectl_output(&["delete", &binding, "--ignore-not-found"], None);
        for ns in &self.namespaces {
            let _ = self
                .node
                .kubectl_output(&["delete", "namespace", ns, "--wait=false", "--ignore-not-found"], None);
        }
    }
}

pub fn is_ready(pod: &Pod) -> bool {
    pod.metadata.deletion_timestamp.is_none()
        && pod
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

/// One line about a Pod: name, phase, deletion, and each container's state with its reason.
pub fn pod_state(pod: &Pod) -> String {
    let name = pod.metadata.name.as_deref().unwrap_or("?");
    let status = pod.status.as_ref();
    let phase = status.and_then(|s| s.phase.as_deref()).unwrap_or("?");
    let deleting = if pod.metadata.deletion_timestamp.is_some() {
        " (terminating)"
    } else {
        ""
    };
    let containers: Vec<String> = status
        .and_then(|s| s.container_statuses.as_ref())
        .into_iter()
        .flatten()
        .map(|c| {
            let state = c.state.as_ref();
            let detail = if let Some(w) = state.and_then(|s| s.waiting.as_ref()) {
                format!(
                    "waiting {} {}",
                    w.reason.as_deref().unwrap_or(""),
                    w.message.as_deref().unwrap_or("")
                )
            } else if let Some(t) = state.and_then(|s| s.terminated.as_ref()) {
                format!("terminated {} exit {}", t.reason.as_deref().unwrap_or(""), t.exit_code)
            } else {
                "running".to_string()
            };
            format!("{}: {detail}, ready={}, restarts={}", c.name, c.ready, c.restart_count)
        })
        .collect();
    format!("  {name}: {phase}{deleting}; {}", containers.join("; "))
}

pub fn unique(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!(
        "{prefix}-{:x}",
        (nanos as u64 & 0xffff_ffff) ^ u64::from(std::process::id())
    )
}

/// Polls `check` every 250 ms until it returns `Some`, or panics after `limit` naming `what`.
pub async fn eventually<T, F, Fut>(limit: Duration, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let start = Instant::now();
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(
            start.elapsed() <= limit,
            "timed out after {limit:?} waiting for: {what}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// How many lines of `log` contain `needle`.
pub fn count(log: &str, needle: &str) -> usize {
    log.lines().filter(|l| l.contains(needle)).count()
}

/// What must be the same in two `explain-events -o json` reports of the same evidence: per
/// finding its id, severity, title, evidence and fix, in order; the summary; the gaps; the
/// operator named and how it was resolved. A
/// leader renews its Lease every 2 s, so between a live answer and a bundle collected after it
/// only the Lease's renewTime, its age and the snapshot's "now" may move: those are masked.
pub fn findings_of(doc: &Value) -> Value {
    let moving = regex::Regex::new(
        r"renewTime \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ|renewed \d+s ago|^now: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ",
    )
    .unwrap();
    let mask = |v: &Value| -> Value {
        match v {
            Value::String(s) => Value::String(moving.replace_all(s, "<moves>").into_owned()),
            Value::Array(items) => Value::Array(
                items
                    .iter()
                    .map(|i| match i {
                        Value::String(s) => Value::String(moving.replace_all(s, "<moves>").into_owned()),
                        other => other.clone(),
                    })
                    .collect(),
            ),
            other => other.clone(),
        }
    };
    json!({
        "summary": doc["summary"],
        "gaps": doc["gaps"],
        "operator": doc["operator"],
        "resolution": doc["operatorResolution"]["verdict"],
        "findings": doc["findings"].as_array().unwrap().iter().map(|f| json!({
            "id": f["id"], "severity": f["severity"], "title": mask(&f["title"]),
            "evidence": mask(&f["evidence"]), "fix": f["fix"],
        })).collect::<Vec<_>>(),
    })
}

/// What must be the same in two `status -o json` answers of the same evidence: the items and
/// the gaps (not `capturedAt`, the time of each).
pub fn verdicts_of(doc: &Value) -> Value {
    json!({"items": doc["items"], "gaps": doc["gaps"]})
}

pub fn finding<'a>(doc: &'a Value, id: &str) -> &'a Value {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == id)
        .unwrap_or_else(|| panic!("no finding {id} in {doc:#}"))
}

/// `KMS_E2E_KOPF_IMAGE`, or a panic naming it.
pub fn kopf_image() -> String {
    required(
        "KMS_E2E_KOPF_IMAGE",
        "name an image that the nodes hold with Python and Kopf 1.38 (`kopf` on PATH), e.g. localhost/kopf:1.38",
    )
}

/// The tutorial's `operator.py` (tests/fixtures/kopf-1.38-real/deployment/configmap.json, the
/// ConfigMap as applied on a real API server): posting off, handler `accept` on create, update
/// of spec and resume.
pub fn tutorial_operator_py() -> String {
    let fixture = Path::new(REPO).join("tests/fixtures/kopf-1.38-real/deployment/configmap.json");
    let configmap: Value = serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
    configmap["data"]["operator.py"].as_str().unwrap().to_string()
}

/// The rules of the Kopf operator's Role in the watched namespace (the tutorial's, without an
/// events rule: its operator posts none).
pub fn kopf_rules() -> Value {
    json!([
        {"apiGroups": ["platform.example.io"], "resources": ["microservices"], "verbs": ["get", "list", "watch", "patch"]},
        {"apiGroups": ["platform.example.io"], "resources": ["microservices/status"], "verbs": ["get", "patch"]}
    ])
}

/// The tutorial's Kopf setup, with `kubectl apply`: the CRD as `manifests` prints it (no
/// Deployment of ours), namespaces `ops` and `ns`, and in `ops` a ServiceAccount, the ConfigMap
/// holding `source` as `operator.py`, a Deployment of one replica (Recreate) running
/// `kopf run --standalone --namespace=NS --liveness=... /src/operator.py` from `image`; in `ns`
/// a Role with [`kopf_rules`] bound to that ServiceAccount.
/// The CRD as `manifests` prints it, applied with kubectl, once it is Established.
pub fn apply_crd(node: &Node) {
    let (code, list, err) = node.plugin(&[
        "manifests",
        "--namespace",
        "ops",
        "--watch-namespace",
        "ops",
        "-o",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let list: Value = serde_json::from_str(&list).unwrap();
    let crd = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["kind"] == "CustomResourceDefinition")
        .unwrap()
        .clone();
    node.kubectl(&["apply", "-f", "-"], Some(crd.to_string().as_bytes()));
    node.kubectl(
        &[
            "wait",
            "--for=condition=Established",
            "crd/microservices.platform.example.io",
            "--timeout=30s",
        ],
        None,
    );
}

pub async fn install_kopf<'a>(node: &'a Node, image: &str, ops: &str, ns: &str, source: &str) -> Installed<'a> {
    install_kopf_edited(node, image, ops, ns, source, &|_| {}).await
}

/// [`install_kopf`] with `edit` applied to the List of objects (in `ops` and `ns`) before it is
/// applied: a Role without a rule, an env var, more replicas.
pub async fn install_kopf_edited<'a>(
    node: &'a Node,
    image: &str,
    ops: &str,
    ns: &str,
    source: &str,
    edit: &dyn Fn(&mut Value),
) -> Installed<'a> {
    apply_crd(node);
    let installed = Installed::namespaces(node, &[ops, ns]);
    let labels = json!({"app": OPERATOR});
    let mut objects = json!({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": OPERATOR, "namespace": ops}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "microservice-operator-code", "namespace": ops},
         "data": {"operator.py": source}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": OPERATOR, "namespace": ns},
         "rules": kopf_rules()},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": OPERATOR, "namespace": ns},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": OPERATOR},
         "subjects": [{"kind": "ServiceAccount", "name": OPERATOR, "namespace": ops}]},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": OPERATOR, "namespace": ops, "labels": labels},
         "spec": {"replicas": 1, "strategy": {"type": "Recreate"}, "selector": {"matchLabels": labels},
          "template": {"metadata": {"labels": labels}, "spec": {
            "serviceAccountName": OPERATOR,
            "terminationGracePeriodSeconds": 10,
            "containers": [{
                "name": "operator", "image": image, "imagePullPolicy": "IfNotPresent",
                "command": ["kopf", "run", "--standalone", format!("--namespace={ns}"),
                            "--liveness=http://0.0.0.0:8080/healthz", "/src/operator.py"],
                "ports": [{"name": "healthz", "containerPort": 8080}],
                "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "initialDelaySeconds": 30, "periodSeconds": 10},
                "volumeMounts": [{"name": "code", "mountPath": "/src"}]
            }],
            "volumes": [{"name": "code", "configMap": {"name": "microservice-operator-code"}}]
          }}}}
    ]});
    edit(&mut objects);
    node.kubectl(&["apply", "-f", "-"], Some(objects.to_string().as_bytes()));
    installed
}
/// The path of `program` as the shell finds it (a name without `/` is looked up on PATH).
fn which(program: &str) -> PathBuf {
    if program.contains('/') {
        return PathBuf::from(program);
    }
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{program} is not on PATH"))
}
