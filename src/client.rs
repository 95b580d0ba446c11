//! kubeconfig / in-cluster config → `kube::Client`, honouring `--kubeconfig`, `--context`,
//! `--as`, `--as-group` and `--request-timeout` as kubectl does. The flags come in as
//! [`ConnectionSettings`], which the command line converts its shared flags into: this module
//! knows nothing of clap.

use std::time::Duration;

use kube::config::{ExecInteractiveMode, KubeConfigOptions, Kubeconfig, KubeconfigError};
use kube::{Client, Config};

use crate::error::AppError;

/// How to reach the cluster, as the command line says it (kubectl's flags of the same names);
/// `None` or empty where a flag is not given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConnectionSettings {
    /// `--kubeconfig PATH`: the kubeconfig file, instead of `$KUBECONFIG` / `~/.kube/config`.
    pub kubeconfig: Option<std::path::PathBuf>,
    /// `--context NAME`: the kubeconfig context, instead of its `current-context`.
    pub context: Option<String>,
    /// `--as USER`: the user to impersonate.
    pub as_user: Option<String>,
    /// `--as-group GROUP` (repeatable): the groups to impersonate.
    pub as_groups: Vec<String>,
    /// `--request-timeout`: how long one request may take (zero: no limit); `None` for the
    /// default of the [`Usage`].
    pub request_timeout: Option<Duration>,
}

/// How the client will be used: diagnostics get a 10 s request timeout by default; the
/// controller keeps long-lived watches, so `--request-timeout` only bounds its connects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Usage {
    /// Short request/response calls (status, logs, explain-events, collect).
    Diagnostics,
    /// The controller (`operate`): watches that last minutes.
    Controller,
    /// Shell completion (`__complete`): every call bounded by `budget` (also when
    /// `--request-timeout` is longer), no retries, and never an interactive login (see
    /// [`forbid_interactive_login`]).
    Completion {
        /// The longest any one connect, read or write may take.
        budget: Duration,
    },
}

/// Default request timeout of the diagnostic subcommands.
pub const DEFAULT_DIAGNOSTIC_TIMEOUT: Duration = Duration::from_secs(10);

/// Builds the client configuration from the connection flags.
///
/// Order, as kubectl: `--kubeconfig PATH`, else `$KUBECONFIG` / `~/.kube/config` when
/// `--context` is given (errors name the file, and a context it lacks with the contexts it has;
/// exit 2), else inference (kubeconfig, then the in-cluster service account). Impersonation and
/// timeouts are applied on top.
pub async fn config(connection: &ConnectionSettings, usage: Usage) -> Result<Config, AppError> {
    let options = KubeConfigOptions {
        context: connection.context.clone(),
        cluster: None,
        user: None,
    };
    let mut config = if connection.kubeconfig.is_some() || connection.context.is_some() || kubeconfig_given() {
        let (kubeconfig, source) = read_kubeconfig(connection)?;
        check_context(&kubeconfig, connection.context.as_deref(), &source).map_err(|message| AppError::Config {
            message,
            user_input: true,
        })?;
        Config::from_custom_kubeconfig(kubeconfig, &options)
            .await
            .map_err(|e| AppError::Config {
                message: format!("cannot use {source}: {}", describe_kubeconfig_error(&e, None)),
                user_input: true,
            })?
    } else {
        // No flag, no KUBECONFIG, no ~/.kube/config: the in-cluster service account, as
        // kube-client's `Config::infer` would fall back to, with one plain sentence instead of
        // its error chain ("failed to infer config: in-cluster: (...), kubeconfig: (...)").
        Config::incluster().map_err(|e| AppError::Config {
            message: no_cluster_configured(&e),
            user_input: false,
        })?
    };
    if let Some(user) = &connection.as_user {
        config.auth_info.impersonate = Some(user.clone());
    }
    if !connection.as_groups.is_empty() {
        config.auth_info.impersonate_groups = Some(connection.as_groups.clone());
    }
    let timeout = match (connection.request_timeout, usage) {
        (t, Usage::Completion { budget }) => Some(t.filter(|t| !t.is_zero()).map_or(budget, |t| t.min(budget))),
        (Some(t), _) if t.is_zero() => None,
        (Some(t), _) => Some(t),
        (None, Usage::Diagnostics) => Some(DEFAULT_DIAGNOSTIC_TIMEOUT),
        (None, Usage::Controller) => None,
    };
    if let Some(t) = timeout {
        config.connect_timeout = Some(t);
        if usage != Usage::Controller {
            config.read_timeout = Some(t);
            config.write_timeout = Some(t);
        }
    }
    if usage == Usage::Controller {
        // The controller applies its own retry policy (bounded tries, Retry-After honoured);
        // a transparent retry layer underneath would multiply the attempts.
        config.default_retry = false;
    }
    if let Usage::Completion { .. } = usage {
        // A completion that retries would outlive the shell's patience.
        config.default_retry = false;
        forbid_interactive_login(&mut config)?;
    }
    Ok(config)
}

/// The kubeconfig of the flags as [`config`] reads it (`--kubeconfig`, else `KUBECONFIG` with its
/// missing files skipped, else `~/.kube/config`), for what reads it without a cluster (context
/// completion).
pub fn kubeconfig_of(connection: &ConnectionSettings) -> Result<Kubeconfig, AppError> {
    read_kubeconfig(connection).map(|(kubeconfig, _)| kubeconfig)
}

/// The default kubeconfig, `~/.kube/config`.
fn default_kubeconfig_path() -> Option<std::path::PathBuf> {
    std::env::home_dir().map(|h| h.join(".kube").join("config"))
}

/// Whether a cluster is configured at all: `--kubeconfig` or `--context` given, a kubeconfig
/// found without a flag ([`kubeconfig_given`]), or a Pod's service account
/// (`KUBERNETES_SERVICE_HOST` set). For what asks a cluster only in passing (`manifests`):
/// without one it does not try.
pub fn configured(connection: &ConnectionSettings) -> bool {
    connection.kubeconfig.is_some()
        || connection.context.is_some()
        || kubeconfig_given()
        || std::env::var_os("KUBERNETES_SERVICE_HOST").is_some()
}

/// Whether a kubeconfig is given without a flag: `KUBECONFIG` names at least one file, or
/// `~/.kube/config` exists. Then it is read as `--kubeconfig` is (errors name it, exit 2);
/// otherwise the in-cluster service account is the only configuration left.
fn kubeconfig_given() -> bool {
    !kubeconfig_env_paths().is_empty() || default_kubeconfig_path().is_some_and(|p| p.exists())
}

/// The files `KUBECONFIG` lists (empty entries left out, as client-go does).
fn kubeconfig_env_paths() -> Vec<std::path::PathBuf> {
    std::env::var_os("KUBECONFIG")
        .map(|v| {
            std::env::split_paths(&v)
                .filter(|p| !p.as_os_str().is_empty())
                .collect()
        })
        .unwrap_or_default()
}

/// `KUBECONFIG`'s files merged as client-go's loader merges them (the first to set a value
/// wins), skipping those that do not exist, as kubectl does (client-go's `Load` adds them to a
/// `missingList`, and only warns "Config not found" when every one is missing; kubectl then goes
/// on to `localhost:8080`). Here a `KUBECONFIG` none of whose files exists is an error naming it
/// and each path, since no cluster could be meant; a file that exists but cannot be read or
/// parsed is an error naming it, as client-go's "error loading config file".
fn read_env_kubeconfig(paths: &[std::path::PathBuf]) -> Result<Kubeconfig, String> {
    let mut merged: Option<Kubeconfig> = None;
    let mut missing = Vec::new();
    for path in paths {
        match Kubeconfig::read_from(path) {
            Ok(next) => {
                merged = Some(match merged {
                    None => next,
                    Some(m) => m.merge(next).map_err(|e| format!("{}: {e}", path.display()))?,
                });
            }
            Err(KubeconfigError::ReadConfig(io, _)) if io.kind() == std::io::ErrorKind::NotFound => {
                missing.push(path.display().to_string());
            }
            Err(e) => {
                return Err(format!(
                    "{}: {}",
                    path.display(),
                    describe_kubeconfig_error(&e, Some(path))
                ));
            }
        }
    }
    merged.ok_or_else(|| match missing.as_slice() {
        [one] => format!("{one}: no such file"),
        many => format!("none of its files exists ({})", many.join(", ")),
    })
}

/// "No cluster configured", in one sentence: nothing named a kubeconfig, `~/.kube/config` does
/// not exist, and this is not a Pod with a service account (`err` says what was missing).
fn no_cluster_configured(err: &kube::config::InClusterError) -> String {
    let default = default_kubeconfig_path().map_or_else(|| "~/.kube/config".into(), |p| p.display().to_string());
    let pod = match err {
        kube::config::InClusterError::ReadEnvironmentVariable(_) => {
            "not in a Pod (KUBERNETES_SERVICE_HOST is not set)".to_string()
        }
        other => format!("the in-cluster service account cannot be used ({other})"),
    };
    format!("no cluster configured: no --kubeconfig, KUBECONFIG is not set, {default} does not exist, and {pod}")
}

/// The kubeconfig of the flags: `--kubeconfig PATH`, else `$KUBECONFIG` (its files merged), else
/// `~/.kube/config`; with how messages name it (`--kubeconfig PATH`, `KUBECONFIG=a:b`, or the
/// default path). A file that cannot be read or parsed is a usage error naming it once.
fn read_kubeconfig(connection: &ConnectionSettings) -> Result<(Kubeconfig, String), AppError> {
    let default_path = default_kubeconfig_path();
    let env_paths = kubeconfig_env_paths();
    let (read, source, named) = match &connection.kubeconfig {
        Some(path) => (
            Kubeconfig::read_from(path),
            format!("--kubeconfig {}", path.display()),
            Some(path.as_path()),
        ),
        None => match std::env::var_os("KUBECONFIG").filter(|v| !v.is_empty()) {
            Some(value) if !env_paths.is_empty() => {
                let source = format!("KUBECONFIG={}", value.to_string_lossy());
                let kubeconfig = read_env_kubeconfig(&env_paths).map_err(|why| AppError::Config {
                    message: format!("cannot read {source}: {why}"),
                    user_input: true,
                })?;
                return Ok((kubeconfig, source));
            }
            _ => (
                default_path
                    .as_ref()
                    .map_or(Err(KubeconfigError::FindPath), Kubeconfig::read_from),
                default_path
                    .as_ref()
                    .map_or_else(|| "~/.kube/config".into(), |p| p.display().to_string()),
                default_path.as_deref(),
            ),
        },
    };
    let kubeconfig = read.map_err(|e| AppError::Config {
        message: format!("cannot read {source}: {}", describe_kubeconfig_error(&e, named)),
        user_input: true,
    })?;
    Ok((kubeconfig, source))
}

/// A kubeconfig error in one line. kube-client quotes the file's path with `{:?}` inside quotes
/// (`failed to read kubeconfig from '"/tmp/x"': ...`); here the path is named once, plainly, and
/// not at all when it is `named` already (the message names `--kubeconfig PATH`).
fn describe_kubeconfig_error(err: &KubeconfigError, named: Option<&std::path::Path>) -> String {
    match err {
        KubeconfigError::ReadConfig(io, path) if Some(path.as_path()) == named => io.to_string(),
        KubeconfigError::ReadConfig(io, path) => format!("{}: {io}", path.display()),
        // The YAML parser's error quotes the file over several lines: its first says what failed.
        other => other.to_string().lines().next().unwrap_or_default().to_string(),
    }
}

/// Checks that the context to use (`wanted`, else the kubeconfig's `current-context`) is among
/// the kubeconfig's contexts: `context "nope" not in --kubeconfig PATH (contexts: a, b)`.
/// No context at all is left to kube-client's own error.
pub fn check_context(kubeconfig: &Kubeconfig, wanted: Option<&str>, source: &str) -> Result<(), String> {
    let (name, what) = match (wanted, kubeconfig.current_context.as_deref()) {
        (Some(name), _) => (name, "context"),
        (None, Some(name)) if !name.is_empty() => (name, "current-context"),
        _ => return Ok(()),
    };
    if kubeconfig.contexts.iter().any(|c| c.name == name) {
        return Ok(());
    }
    let names: Vec<&str> = kubeconfig.contexts.iter().map(|c| c.name.as_str()).collect();
    let contexts = if names.is_empty() {
        "it has no contexts".to_string()
    } else {
        format!("contexts: {}", names.join(", "))
    };
    Err(format!("{what} {name:?} not in {source} ({contexts})"))
}

/// Makes an exec credential plugin (kubeconfig `users[].user.exec`) run the way kubectl runs it
/// without a terminal: stdin closed, stderr captured, and `KUBERNETES_EXEC_INFO` carrying
/// `spec.interactive: false`, which tells the plugin not to prompt.
///
/// kube-client 5 hands the plugin the terminal's stdin and stderr unless `interactiveMode` is
/// `Never`, so this sets `Never`. A plugin that declares `interactiveMode: Always` cannot work
/// that way; like client-go without a terminal, it is not run at all: the error names it.
pub fn forbid_interactive_login(config: &mut Config) -> Result<(), AppError> {
    if let Some(exec) = config.auth_info.exec.as_mut() {
        if exec.interactive_mode == Some(ExecInteractiveMode::Always) {
            return Err(AppError::Config {
                message: format!(
                    "the kubeconfig user's exec credential plugin {:?} requires an interactive login \
                     (interactiveMode: Always)",
                    exec.command.as_deref().unwrap_or("")
                ),
                user_input: false,
            });
        }
        exec.interactive_mode = Some(ExecInteractiveMode::Never);
    }
    Ok(())
}

/// Builds a client from the connection flags (see [`config`]).
pub async fn client(connection: &ConnectionSettings, usage: Usage) -> Result<(Client, Config), AppError> {
    let config = config(connection, usage).await?;
    let client = Client::try_from(config.clone()).map_err(|e| AppError::Config {
        message: format!("cannot build a client for {}: {e}", config.cluster_url),
        user_input: false,
    })?;
    Ok((client, config))
}

/// The error of a first call that could not reach the API server: `cannot reach the API server
/// URL (context NAME)`, with, when the client gave up waiting ([`crate::error::is_timeout`]),
/// the request timeout it waited (`--request-timeout`, else the default of the diagnostics):
/// `... within the request timeout of 10s: timed out (...)`.
pub fn unreachable(connection: &ConnectionSettings, config: &Config, source: kube::Error) -> AppError {
    let context = context_name(connection).unwrap_or_else(|| "unknown".into());
    let mut what = format!("cannot reach the API server {} (context {context})", config.cluster_url);
    let waited = config.read_timeout.or(config.connect_timeout);
    if let Some(t) = waited.filter(|_| crate::error::is_timeout(&source)) {
        let shown = if t.subsec_millis() == 0 {
            crate::time::human(crate::time::delta(t), crate::time::DurationStyle::Compact)
        } else {
            format!("{}ms", t.as_millis())
        };
        what.push_str(&format!(" within the request timeout of {shown}"));
    }
    AppError::kube(what, source)
}

/// The kubeconfig context in use: `--context`, else the kubeconfig's `current-context`; `None`
/// in a Pod without a kubeconfig. For messages that name the cluster.
pub fn context_name(connection: &ConnectionSettings) -> Option<String> {
    if connection.context.is_some() {
        return connection.context.clone();
    }
    read_kubeconfig(connection).ok().and_then(|(k, _)| k.current_context)
}

// Lists and reads through kube that the evidence and the logs share (paged, with the API
// server's clock).
pub mod discovery;
#[cfg(test)]
pub(crate) mod fake;
pub mod lists;

#[cfg(test)]
mod tests {
    use super::*;

    /// A plain-HTTP API server on loopback that answers every request with `body` (gzip'd when
    /// the request accepts gzip) and sends each request's head to the returned channel.
    async fn one_list_server(body: &'static str) -> (String, tokio::sync::mpsc::UnboundedReceiver<String>) {
        use std::io::Write;
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let (heads, received) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let heads = heads.clone();
                tokio::spawn(async move {
                    let mut head = Vec::new();
                    let mut byte = [0u8; 1];
                    while !head.ends_with(b"\r\n\r\n") && socket.read(&mut byte).await.unwrap_or(0) == 1 {
                        head.push(byte[0]);
                    }
                    let head = String::from_utf8_lossy(&head).to_lowercase();
                    let gzip = head.contains("accept-encoding: gzip");
                    let _ = heads.send(head);
                    let (encoding, payload) = if gzip {
                        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
                        encoder.write_all(body.as_bytes()).unwrap();
                        ("content-encoding: gzip\r\n", encoder.finish().unwrap())
                    } else {
                        ("", body.as_bytes().to_vec())
                    };
                    let answer = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n{encoding}content-length: {}\r\n\r\n",
                        payload.len()
                    );
                    let _ = socket.write_all(answer.as_bytes()).await;
                    let _ = socket.write_all(&payload).await;
                });
            }
        });
        (url, received)
    }

    /// kubectl asks for lists compressed (a 10,000-object list is 8 to 14 MB of JSON, a tenth
    /// of it gzip'd, across a real network to a remote API server) unless the kubeconfig's
    /// cluster says `disable-compression: true`; so do we, and the gzip'd pages read as plain.
    #[tokio::test]
    async fn lists_are_asked_compressed_unless_the_kubeconfig_disables_it() {
        const LIST: &str = r#"{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"9"},
            "items":[{"metadata":{"name":"a","namespace":"ops"}},{"metadata":{"name":"b","namespace":"ops"}}]}"#;
        for (disable, compressed) in [("", true), ("    disable-compression: true\n", false)] {
            let (url, mut heads) = one_list_server(LIST).await;
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("kubeconfig");
            std::fs::write(
                &path,
                format!(
                    "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: c\n  cluster:\n    server: {url}\n{disable}contexts:\n- name: c\n  context: {{cluster: c, user: u}}\nusers:\n- name: u\n  user: {{token: t}}\n"
                ),
            )
            .unwrap();
            let connection = ConnectionSettings {
                kubeconfig: Some(path),
                ..ConnectionSettings::default()
            };
            let (client, _) = client(&connection, Usage::Diagnostics).await.unwrap();
            let (pods, _) = lists::list_all::<k8s_openapi::api::core::v1::Pod>(
                &client,
                "/api/v1/namespaces/ops/pods",
                Default::default(),
            )
            .await
            .unwrap();
            let names: Vec<_> = pods.iter().filter_map(|p| p.metadata.name.as_deref()).collect();
            assert_eq!(names, ["a", "b"], "disable-compression: {disable:?}");
            let head = heads.recv().await.unwrap();
            assert_eq!(head.contains("accept-encoding: gzip"), compressed, "{head}");
        }
    }

    fn kubeconfig(yaml: &str) -> Kubeconfig {
        Kubeconfig::from_yaml(yaml).unwrap()
    }

    #[test]
    fn a_missing_context_names_the_file_and_the_contexts() {
        let k = kubeconfig(
            "apiVersion: v1\nkind: Config\ncurrent-context: a\ncontexts: [{name: a, context: {cluster: c}}, {name: b, context: {cluster: c}}]\n",
        );
        assert_eq!(check_context(&k, Some("a"), "--kubeconfig k"), Ok(()));
        assert_eq!(check_context(&k, None, "--kubeconfig k"), Ok(()));
        assert_eq!(
            check_context(&k, Some("nope"), "--kubeconfig /tmp/k"),
            Err(r#"context "nope" not in --kubeconfig /tmp/k (contexts: a, b)"#.into())
        );
        let broken = kubeconfig("apiVersion: v1\nkind: Config\ncurrent-context: gone\ncontexts: []\n");
        assert_eq!(
            check_context(&broken, None, "KUBECONFIG=/x"),
            Err(r#"current-context "gone" not in KUBECONFIG=/x (it has no contexts)"#.into())
        );
    }

    #[test]
    fn a_kubeconfig_path_is_named_once_and_plainly() {
        let err = Kubeconfig::read_from("/tmp/nope.kubeconfig").unwrap_err();
        let path = std::path::Path::new("/tmp/nope.kubeconfig");
        assert_eq!(
            describe_kubeconfig_error(&err, Some(path)),
            "No such file or directory (os error 2)"
        );
        assert_eq!(
            describe_kubeconfig_error(&err, None),
            "/tmp/nope.kubeconfig: No such file or directory (os error 2)"
        );
    }
}
