//! The disposable cluster end-to-end tests run against: its kubeconfig from `KMS_E2E_KUBECONFIG`
//! and a client for it. Shared by tests/e2e.rs and tests/e2e_install.rs.

use std::path::{Path, PathBuf};

use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};

/// The kubeconfig in `KMS_E2E_KUBECONFIG`. Panics, naming the variable, when it is unset: the
/// tests are `#[ignore]`d, so reaching here means someone asked for them with `--ignored`.
pub fn kubeconfig_path() -> PathBuf {
    match std::env::var_os("KMS_E2E_KUBECONFIG") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => panic!(
            "KMS_E2E_KUBECONFIG is not set: e2e tests run against a real cluster; point it at a \
             disposable cluster's admin kubeconfig (KMS_E2E_KUBECONFIG=/path/admin.kubeconfig \
             cargo test -- --ignored), or run `cargo test` without --ignored"
        ),
    }
}

/// A client for the kubeconfig at `path`; panics when it cannot be read or used.
pub async fn client_for(path: &Path) -> Client {
    let kubeconfig = Kubeconfig::read_from(path).expect("KMS_E2E_KUBECONFIG is readable");
    let config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .expect("kubeconfig is usable");
    Client::try_from(config).expect("client builds")
}
