//! `kubectl microservice version`: the client's version and commit and, when a cluster answers,
//! the operators running there (Deployments running `kubectl-microservice operate`, found as
//! [`crate::evidence::operator`] finds them) with the version their image tag names, and a
//! warning when it differs from the client's. `-o json|yaml` (and the jsonpath templates) print
//! `{"schemaVersion": 1, "clientVersion": {...}, "operators": [...]}`, as `kubectl version -o
//! json` prints `clientVersion` and `serverVersion`. The image tag names a version, not a
//! commit: the commit each operator Pod was built from is read from the start of its log (its
//! first line, `Operator started version="0.1.0 (commit X)"`; one Pod list and at most two
//! `limitBytes` reads per operator), and one that differs from the client's is a note
//! (`gitCommits` in JSON), never a failure.
//!
//! The client part is the answer: when the cluster cannot be asked (no kubeconfig, unreachable,
//! forbidden), it is still printed, with a one-line note on stderr, and the exit code is 0 —
//! unlike `kubectl version`, which exits 1, so that `version -o json` works on a laptop without
//! a cluster. `--client` skips the cluster. The cluster is given [`CLUSTER_TIMEOUT`] unless
//! `--request-timeout` says otherwise.

use std::time::Duration;

use serde::Serialize;

use crate::cli::{GlobalArgs, VersionArgs};
use crate::error::AppError;
use crate::evidence::Evidence;
use crate::evidence::operator::{OperatorKind, find_operators, split_image};
use crate::render::OutputFormat;
use crate::text::sanitize;

/// How long the cluster may take to answer, unless `--request-timeout` is given: `version` is
/// asked in passing, and should not hang on a dead cluster.
pub const CLUSTER_TIMEOUT: Duration = Duration::from_secs(5);

/// The client's build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientVersion {
    /// The crate version, e.g. `0.1.0`.
    pub version: String,
    /// The git commit it was built from (12 hex digits), or `unknown`.
    pub git_commit: String,
}

impl ClientVersion {
    /// This binary's.
    pub fn current() -> Self {
        ClientVersion {
            version: env!("CARGO_PKG_VERSION").into(),
            git_commit: env!("KMS_GIT_COMMIT").into(),
        }
    }
}

/// One operator Deployment of ours and the version its image names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OperatorVersion {
    /// `NS/deployment/NAME`.
    pub operator: String,
    /// The operator container's image, as the Deployment's Pod template has it.
    pub image: String,
    /// The version the image tag names (`0.1.0` from `:0.1.0` or `:v0.1.0`); `null` when the
    /// tag names none (no tag, `latest`, a digest only).
    pub version: Option<String>,
    /// Whether `version` differs from the client's (`false` when it is unknown).
    pub skew: bool,
    /// The git commits its Pods' logs say they were built from (`Operator started
    /// version="0.1.0 (commit X)"`, the first line `operate` logs), distinct; absent when no log
    /// said (no Pod running, logs not readable, the line rotated away). The image tag names no
    /// commit, so this is how a build of the same version from another commit shows.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub git_commits: Vec<String>,
}

/// `version -o json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VersionReport {
    /// Always 1.
    pub schema_version: u32,
    /// This binary.
    pub client_version: ClientVersion,
    /// The API server's `gitVersion` (`/version`); absent with `--client` or when the cluster
    /// could not be asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_version: Option<String>,
    /// Our operators on the cluster; absent with `--client` or when the cluster could not be asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operators: Option<Vec<OperatorVersion>>,
    /// Why the cluster could not be asked, when it could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster_error: Option<String>,
}

/// The version an image's tag names: `0.1.0` for `repo:0.1.0` and `repo:v0.1.0`; `None` for no
/// tag, a digest only, or a tag that does not start with a digit (`latest`, `main`).
pub fn image_version(image: &str) -> Option<String> {
    let (_, tag, _) = split_image(image);
    let tag = tag?;
    let version = tag.strip_prefix('v').unwrap_or(tag);
    version
        .starts_with(|c: char| c.is_ascii_digit())
        .then(|| version.to_string())
}

/// Our operators among `deployments`, each with its image's version compared with `client`.
pub fn operator_versions(deployments: &[k8s_openapi::api::apps::v1::Deployment], client: &str) -> Vec<OperatorVersion> {
    let mut found: Vec<OperatorVersion> = find_operators(deployments)
        .into_iter()
        .filter(|o| o.kind == OperatorKind::Ours)
        .map(|o| {
            let image = deployments
                .iter()
                .find(|d| {
                    d.metadata.namespace.as_deref() == Some(o.namespace.as_str())
                        && d.metadata.name.as_deref() == Some(o.name.as_str())
                })
                .and_then(|d| d.spec.as_ref()?.template.spec.as_ref())
                .and_then(|s| s.containers.iter().find(|c| c.name == o.container))
                .and_then(|c| c.image.clone())
                .unwrap_or_default();
            let version = image_version(&image);
            OperatorVersion {
                operator: o.display(),
                skew: version.as_deref().is_some_and(|v| v != client),
                image,
                version,
                git_commits: Vec::new(),
            }
        })
        .collect();
    found.sort_by(|a, b| a.operator.cmp(&b.operator));
    found
}

/// The commit a log of `operate` says it was built from: the `(commit X)` of its `Operator
/// started` line (text or JSON format: `version="0.1.0 (commit X)"`, `"version":"0.1.0 (commit
/// X)"`); `None` when the log has no such line or the commit is `unknown`.
pub fn logged_commit(log: &str) -> Option<String> {
    let line = log.lines().find(|l| l.contains("Operator started"))?;
    let at = line.find("(commit ")? + "(commit ".len();
    let rest = &line[at..];
    let commit = &rest[..rest.find(')')?];
    (!commit.is_empty() && commit.chars().all(|c| c.is_ascii_hexdigit())).then(|| commit.to_string())
}

/// Whether two abbreviated commits name different commits (one is not a prefix of the other).
fn commits_differ(a: &str, b: &str) -> bool {
    !(a.starts_with(b) || b.starts_with(a))
}

/// How many bytes of the start of each operator Pod's log `version` reads for the `Operator
/// started` line (`limitBytes`: the kubelet reads from the start; the line is the first).
pub const STARTUP_LOG_BYTES: i64 = 8192;

/// At most this many Pods per operator are read (replicas run the same image).
const PODS_READ: usize = 2;

/// Fills each operator's [`OperatorVersion::git_commits`] from the start of its Pods' logs:
/// one Pod list and at most [`PODS_READ`] log reads of [`STARTUP_LOG_BYTES`] per operator.
/// Anything that fails leaves the list empty: this is a note, never a failure.
async fn read_commits(
    client: &kube::Client,
    deployments: &[k8s_openapi::api::apps::v1::Deployment],
    operators: &mut [OperatorVersion],
) {
    use k8s_openapi::api::core::v1::Pod;
    use kube::api::{ListParams, LogParams};
    for op in operators.iter_mut() {
        let Some(deployment) = deployments.iter().find(|d| {
            format!(
                "{}/deployment/{}",
                d.metadata.namespace.as_deref().unwrap_or(""),
                d.metadata.name.as_deref().unwrap_or("")
            ) == op.operator
        }) else {
            continue;
        };
        let labels = crate::evidence::live::label_selector(deployment);
        if labels.is_empty() {
            continue;
        }
        let container = find_operators(std::slice::from_ref(deployment))
            .into_iter()
            .next()
            .map(|o| o.container);
        let api: kube::Api<Pod> =
            kube::Api::namespaced(client.clone(), deployment.metadata.namespace.as_deref().unwrap_or(""));
        let Ok(pods) = api.list(&ListParams::default().labels(&labels)).await else {
            continue;
        };
        let params = LogParams {
            container: container.clone(),
            limit_bytes: Some(STARTUP_LOG_BYTES),
            ..LogParams::default()
        };
        for pod in pods.items.iter().take(PODS_READ) {
            let Some(name) = pod.metadata.name.as_deref() else {
                continue;
            };
            if let Ok(log) = api.logs(name, &params).await
                && let Some(commit) = logged_commit(&log)
                && !op.git_commits.contains(&commit)
            {
                op.git_commits.push(commit);
            }
        }
        op.git_commits.sort();
    }
}

/// The human answer, as `kubectl version` prints it: `Client Version: ...`, then one line per
/// operator (or that none was found).
pub fn human(report: &VersionReport) -> String {
    let client = &report.client_version;
    let mut out = format!("Client Version: {} (commit {})\n", client.version, client.git_commit);
    if let Some(server) = &report.server_version {
        out.push_str(&format!("Server Version: {}\n", sanitize(server)));
    }
    match &report.operators {
        None => {}
        Some(list) if list.is_empty() => {
            out.push_str("Operator Version: no operator found (no Deployment runs kubectl-microservice operate)\n");
        }
        Some(list) => {
            for op in list {
                let line = format!(
                    "Operator Version: {} ({}, image {})",
                    op.version.as_deref().unwrap_or("unknown"),
                    op.operator,
                    op.image
                );
                out.push_str(&sanitize(&line));
                out.push('\n');
            }
        }
    }
    out
}

/// The stderr lines of a report: a warning per operator whose version differs from the
/// client's, a note per operator whose version is unknown, and the cluster error as a note.
pub fn notes(report: &VersionReport) -> Vec<String> {
    let client = &report.client_version.version;
    let mut out = Vec::new();
    if let Some(error) = &report.cluster_error {
        out.push(format!("note: operators not shown: {error}"));
    }
    for op in report.operators.iter().flatten() {
        match &op.version {
            Some(v) if op.skew => out.push(format!(
                "warning: version skew: operator {} runs {v}, this client is {client}; use the same version for both (kubectl krew upgrade microservice, or kubectl microservice manifests to update the Deployment's image)",
                op.operator
            )),
            Some(_) => {}
            None => out.push(format!(
                "note: the version of operator {} is unknown: its image {} has no version tag",
                op.operator, op.image
            )),
        }
        let ours = &report.client_version.git_commit;
        let other: Vec<&str> = op
            .git_commits
            .iter()
            .filter(|c| ours != "unknown" && commits_differ(c, ours))
            .map(String::as_str)
            .collect();
        if !other.is_empty() {
            out.push(format!(
                "note: operator {} was built from commit {} (its Pods' logs), this client from commit {ours}",
                op.operator,
                other.join(", ")
            ));
        }
    }
    out.into_iter().map(|l| sanitize(&l)).collect()
}

/// Runs `version`: prints the report; always exit 0 once the flags are valid.
pub fn run(global: &GlobalArgs, args: &VersionArgs) -> Result<u8, AppError> {
    if let Some(output @ (OutputFormat::Wide | OutputFormat::Name)) = &global.output {
        return Err(AppError::Usage(format!(
            "version prints versions, not objects: -o {} has no meaning here; -o takes {}",
            output.kind(),
            crate::cli::scope::output_formats("version").unwrap_or_default()
        )));
    }
    let mut report = VersionReport {
        schema_version: 1,
        client_version: ClientVersion::current(),
        server_version: None,
        operators: None,
        cluster_error: None,
    };
    if !args.client {
        let runtime = tokio::runtime::Runtime::new().map_err(|source| AppError::Io {
            context: "start the async runtime".into(),
            source,
        })?;
        match runtime.block_on(ask_cluster(global, &report.client_version.version)) {
            Ok((server, operators)) => {
                report.server_version = Some(server);
                report.operators = Some(operators);
            }
            // A kubeconfig or context the user named and that is wrong is a usage error, as
            // everywhere; a cluster that cannot be asked is only a note.
            Err(error) if error.exit_code() == 2 => return Err(error),
            Err(error) => report.cluster_error = Some(error.to_string()),
        }
    }
    let text = match crate::render::document(&report, global.output.as_ref())? {
        Some(document) => document,
        None => human(&report),
    };
    super::write_stdout(&text)?;
    for line in notes(&report) {
        crate::commands::say(format_args!("{line}"));
    }
    Ok(0)
}

/// The API server's version and our operators on the cluster of the flags; the error, in one
/// line (as every subcommand names an unreachable server), when it cannot be asked.
async fn ask_cluster(global: &GlobalArgs, client_version: &str) -> Result<(String, Vec<OperatorVersion>), AppError> {
    let mut connection = global.connection();
    connection.request_timeout = Some(connection.request_timeout.unwrap_or(CLUSTER_TIMEOUT));
    let (client, config) = crate::client::client(&connection, crate::client::Usage::Diagnostics).await?;
    let namespace =
        crate::cli::namespace_in_context(false, global.namespaces.first().cloned(), &config.default_namespace)
            .unwrap_or_default();
    ask(&client, &namespace, client_version).await.map_err(|e| match e {
        Asked::Unreachable(e) => crate::client::unreachable(&connection, &config, e),
        Asked::NoOperators(gap) => AppError::Undecided(gap),
    })
}

/// Why [`ask`] has no answer.
#[derive(Debug)]
enum Asked {
    /// `/version` failed: the server does not answer.
    Unreachable(kube::Error),
    /// Deployments could not be listed (the gap, in words).
    NoOperators(String),
}

/// `/version`'s `gitVersion`, and our operators among the Deployments (cluster-wide, else in
/// `namespace` when listing cluster-wide is forbidden).
async fn ask(
    client: &kube::Client,
    namespace: &str,
    client_version: &str,
) -> Result<(String, Vec<OperatorVersion>), Asked> {
    let server = client.apiserver_version().await.map_err(Asked::Unreachable)?;
    match crate::evidence::live::discover(client, Some(namespace)).await {
        Evidence::Present(deployments) => {
            let mut operators = operator_versions(&deployments, client_version);
            read_commits(client, &deployments, &mut operators).await;
            Ok((server.git_version, operators))
        }
        Evidence::Gap(gap) => Err(Asked::NoOperators(format!("cannot look for operators: {gap}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deployment(ns: &str, name: &str, image: &str, command: &[&str]) -> k8s_openapi::api::apps::v1::Deployment {
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": ns},
            "spec": {"selector": {}, "template": {"spec": {"containers": [
                {"name": "sidecar", "image": "envoy:1.30"},
                {"name": "operator", "image": image, "command": command}]}}}
        }))
        .unwrap()
    }

    #[test]
    fn image_tags_name_versions() {
        assert_eq!(
            image_version("ghcr.io/x/kubectl-microservice:0.1.0").as_deref(),
            Some("0.1.0")
        );
        assert_eq!(image_version("kubectl-microservice:v0.2.0").as_deref(), Some("0.2.0"));
        assert_eq!(
            image_version("localhost:5000/kubectl-microservice:0.1.0-rc.1").as_deref(),
            Some("0.1.0-rc.1")
        );
        assert_eq!(image_version("localhost:5000/kubectl-microservice"), None);
        assert_eq!(image_version("kubectl-microservice:latest"), None);
        assert_eq!(image_version("kubectl-microservice@sha256:abcd"), None);
        assert_eq!(
            image_version("kubectl-microservice:0.1.0@sha256:abcd").as_deref(),
            Some("0.1.0")
        );
    }

    #[test]
    fn only_our_operators_with_their_skew() {
        let deployments = [
            deployment(
                "ops",
                "b-op",
                "ghcr.io/x/kubectl-microservice:0.0.9",
                &["kubectl-microservice", "operate"],
            ),
            deployment(
                "ops",
                "a-op",
                "ghcr.io/x/kubectl-microservice:v0.1.0",
                &["kubectl-microservice", "operate"],
            ),
            deployment(
                "ops",
                "c-op",
                "ghcr.io/x/kubectl-microservice:latest",
                &["kubectl-microservice", "operate"],
            ),
            deployment("store", "kopf-op", "python:3.12", &["kopf", "run", "op.py"]),
            deployment("web", "nginx", "nginx:1.27", &["nginx"]),
        ];
        let found = operator_versions(&deployments, "0.1.0");
        let summary: Vec<(&str, Option<&str>, bool)> = found
            .iter()
            .map(|o| (o.operator.as_str(), o.version.as_deref(), o.skew))
            .collect();
        assert_eq!(
            summary,
            [
                ("ops/deployment/a-op", Some("0.1.0"), false),
                ("ops/deployment/b-op", Some("0.0.9"), true),
                ("ops/deployment/c-op", None, false),
            ]
        );
        assert_eq!(found[1].image, "ghcr.io/x/kubectl-microservice:0.0.9");
        let report = VersionReport {
            schema_version: 1,
            client_version: ClientVersion {
                version: "0.1.0".into(),
                git_commit: "0123456789ab".into(),
            },
            server_version: Some("v1.33.1".into()),
            operators: Some(found),
            cluster_error: None,
        };
        assert_eq!(
            human(&report),
            "Client Version: 0.1.0 (commit 0123456789ab)\n\
             Server Version: v1.33.1\n\
             Operator Version: 0.1.0 (ops/deployment/a-op, image ghcr.io/x/kubectl-microservice:v0.1.0)\n\
             Operator Version: 0.0.9 (ops/deployment/b-op, image ghcr.io/x/kubectl-microservice:0.0.9)\n\
             Operator Version: unknown (ops/deployment/c-op, image ghcr.io/x/kubectl-microservice:latest)\n"
        );
        assert_eq!(
            notes(&report),
            [
                "warning: version skew: operator ops/deployment/b-op runs 0.0.9, this client is 0.1.0; use the same version for both (kubectl krew upgrade microservice, or kubectl microservice manifests to update the Deployment's image)",
                "note: the version of operator ops/deployment/c-op is unknown: its image ghcr.io/x/kubectl-microservice:latest has no version tag",
            ]
        );
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(
            json["clientVersion"],
            json!({"version": "0.1.0", "gitCommit": "0123456789ab"})
        );
        assert_eq!(json["operators"][1]["skew"], true);
        assert!(json.get("clusterError").is_none());
    }

    #[tokio::test]
    async fn the_server_version_and_the_operators_come_from_the_cluster() {
        let deployments = json!({"apiVersion": "apps/v1", "kind": "DeploymentList", "metadata": {}, "items": [
            serde_json::to_value(deployment("ops", "op", "ghcr.io/x/kubectl-microservice:0.0.9", &["kubectl-microservice", "operate"])).unwrap()
        ]})
        .to_string();
        let (client, seen) = crate::client::fake::fake_api(move |path, _| {
            match path {
            "/version" => (200, json!({"major": "1", "minor": "33", "gitVersion": "v1.33.1", "gitCommit": "", "gitTreeState": "", "buildDate": "", "goVersion": "", "compiler": "", "platform": ""}).to_string()),
            "/apis/apps/v1/deployments" => (200, deployments.clone()),
            _ => (404, "{}".into()),
        }
        });
        let (server, operators) = ask(&client, "todo", "0.1.0").await.unwrap();
        assert_eq!(server, "v1.33.1");
        assert_eq!(operators.len(), 1);
        assert_eq!(
            (operators[0].version.as_deref(), operators[0].skew),
            (Some("0.0.9"), true)
        );
        assert_eq!(seen.lock().unwrap()[0], "/version");

        // Deployments forbidden everywhere: the server answered, the operators are a gap.
        let (client, _) = crate::client::fake::fake_api(|path, _| {
            match path {
            "/version" => (200, json!({"major": "1", "minor": "33", "gitVersion": "v1.33.1", "gitCommit": "", "gitTreeState": "", "buildDate": "", "goVersion": "", "compiler": "", "platform": ""}).to_string()),
            _ => (403, r#"{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,"message":"deployments.apps is forbidden"}"#.into()),
        }
        });
        match ask(&client, "todo", "0.1.0").await {
            Err(Asked::NoOperators(gap)) => assert!(gap.contains("forbidden"), "{gap}"),
            other => panic!("{other:?}"),
        }
    }

    /// The image tag names no commit; the first line `operate` logs does (issue 14 item 10):
    /// read from the start of its Pods' logs (`limitBytes`), a differing commit is a note.
    #[tokio::test]
    async fn a_pod_built_from_another_commit_is_a_note() {
        // The line as the operator logged it (tests/fixtures/bundles-captured/lease-held-elsewhere).
        let line = r#"2026-11-29T20:34:09.669Z  INFO Operator started version="0.1.0 (commit 5a2d2b920261)" namespaces=todo events=all max_concurrent=16 leader_election="lease ops/microservice-operator""#;
        assert_eq!(logged_commit(line).as_deref(), Some("5a2d2b920261"));
        let json_line = r#"{"timestamp":"2026-11-29T20:34:09.669Z","level":"INFO","message":"Operator started","version":"0.1.0 (commit 5a2d2b920261)"}"#;
        assert_eq!(logged_commit(json_line).as_deref(), Some("5a2d2b920261"));
        assert_eq!(
            logged_commit(r#"INFO Operator started version="0.1.0 (commit unknown)""#),
            None
        );
        assert_eq!(logged_commit("INFO Accepted todo/x"), None);

        let mut op = deployment(
            "ops",
            "op",
            "ghcr.io/x/kubectl-microservice:0.1.0",
            &["kubectl-microservice", "operate"],
        );
        op.spec.as_mut().unwrap().selector.match_labels = Some([("app".to_string(), "op".to_string())].into());
        let deployments = json!({"apiVersion": "apps/v1", "kind": "DeploymentList", "metadata": {}, "items": [serde_json::to_value(&op).unwrap()]}).to_string();
        let pods = json!({"apiVersion": "v1", "kind": "PodList", "metadata": {}, "items": [
            {"metadata": {"name": "op-1", "namespace": "ops"}}]})
        .to_string();
        let log = format!("{line}\n2026-11-29T20:34:10.000Z  INFO Accepted todo/x\n");
        let (client, seen) = crate::client::fake::fake_api(move |path, _| {
            match path {
            "/version" => (200, json!({"major": "1", "minor": "33", "gitVersion": "v1.33.1", "gitCommit": "", "gitTreeState": "", "buildDate": "", "goVersion": "", "compiler": "", "platform": ""}).to_string()),
            "/apis/apps/v1/deployments" => (200, deployments.clone()),
            "/api/v1/namespaces/ops/pods" => (200, pods.clone()),
            "/api/v1/namespaces/ops/pods/op-1/log" => (200, log.clone()),
            _ => (404, "{}".into()),
        }
        });
        let (_, operators) = ask(&client, "todo", "0.1.0").await.unwrap();
        assert_eq!(operators[0].git_commits, ["5a2d2b920261"]);
        assert!(!operators[0].skew);
        let seen = seen.lock().unwrap().clone();
        let log_call = seen.iter().find(|u| u.contains("/log")).unwrap();
        assert!(
            log_call.contains("limitBytes=8192") && log_call.contains("container=operator"),
            "{log_call}"
        );
        let report = |ours: &str| VersionReport {
            schema_version: 1,
            client_version: ClientVersion {
                version: "0.1.0".into(),
                git_commit: ours.into(),
            },
            server_version: None,
            operators: Some(operators.clone()),
            cluster_error: None,
        };
        assert_eq!(
            notes(&report("e397df9d5c2b")),
            [
                "note: operator ops/deployment/op was built from commit 5a2d2b920261 (its Pods' logs), this client from commit e397df9d5c2b"
            ]
        );
        // The same commit, or a client that does not know its own: no note.
        assert!(notes(&report("5a2d2b920261")).is_empty());
        assert!(notes(&report("unknown")).is_empty());
        let json = serde_json::to_value(report("e397df9d5c2b")).unwrap();
        assert_eq!(json["operators"][0]["gitCommits"], json!(["5a2d2b920261"]));
    }

    #[test]
    fn cluster_text_is_one_line_per_operator_whatever_the_image() {
        let deployments = [deployment(
            "ops",
            "op",
            "kubectl-microservice:0.1.0\n\u{1b}[2J",
            &["kubectl-microservice", "operate"],
        )];
        let report = VersionReport {
            schema_version: 1,
            client_version: ClientVersion::current(),
            server_version: Some("v1\nforged".into()),
            operators: Some(operator_versions(&deployments, "0.1.0")),
            cluster_error: None,
        };
        let text = human(&report);
        assert_eq!(text.lines().count(), 3, "{text}");
        assert!(!text.contains('\u{1b}'), "{text}");
        assert!(
            notes(&report)
                .iter()
                .all(|l| !l.contains('\n') && !l.contains('\u{1b}'))
        );
    }

    #[test]
    fn no_operator_and_no_cluster_are_said() {
        let mut report = VersionReport {
            schema_version: 1,
            client_version: ClientVersion::current(),
            server_version: None,
            operators: Some(Vec::new()),
            cluster_error: None,
        };
        assert!(
            human(&report)
                .ends_with("Operator Version: no operator found (no Deployment runs kubectl-microservice operate)\n")
        );
        report.operators = None;
        report.cluster_error = Some("cannot reach the API server".into());
        assert_eq!(human(&report).lines().count(), 1);
        assert_eq!(
            notes(&report),
            ["note: operators not shown: cannot reach the API server"]
        );
        let json = serde_json::to_value(&report).unwrap();
        assert!(json.get("operators").is_none());
        assert_eq!(json["clusterError"], "cannot reach the API server");
    }
}
