//! A kubeconfig for a given API server URL (token auth, TLS verification off), for CLI tests
//! against servers that refuse, hang or are fake. Included with `#[path]` by the tests that
//! need it.

use std::path::{Path, PathBuf};

/// Writes `DIR/config`: context `down` (namespace `todo`) on cluster `server`, user token `t`.
pub fn write(dir: &Path, server: &str) -> PathBuf {
    let path = dir.join("config");
    std::fs::write(
        &path,
        format!(
            r#"apiVersion: v1
kind: Config
current-context: down
clusters: [{{name: down, cluster: {{server: "{server}", insecure-skip-tls-verify: true}}}}]
users: [{{name: u, user: {{token: t}}}}]
contexts: [{{name: down, context: {{cluster: down, user: u, namespace: todo}}}}]
"#
        ),
    )
    .unwrap();
    path
}
