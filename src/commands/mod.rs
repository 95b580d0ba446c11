//! Subcommands other than `operate` and `manifests`.

pub mod collect;
pub mod complete;
pub mod completion;
pub mod explain_events;
pub mod log_files;
pub mod logs;
pub mod status;
pub mod version;

use std::io::Write;

use crate::error::AppError;

/// Writes `text` to stdout; a closed pipe (`| head`) is not an error.
pub fn write_stdout(text: &str) -> Result<(), AppError> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(AppError::Io {
            context: "write to stdout".into(),
            source: e,
        }),
        Ok(()) => Ok(()),
    }
}

/// `--operator NS/deployment/NAME` given live: the Deployment must exist, else the answer would
/// be about no operator while looking like one (issue 14 item 2: `explain-events` printed
/// "Nothing is hidden ..." beside a gap). One GET, only when the flag is given: 404 is an
/// error naming the flag (exit 3), nothing printed as an answer; a refusal (403, ...) is left to
/// the evidence gathering, which records it as a gap; a server that does not answer is the
/// same one-line error every command gives ([`crate::client::unreachable`]).
pub async fn check_operator_exists(
    client: &kube::Client,
    global: &crate::cli::GlobalArgs,
    config: &kube::Config,
    spec: Option<&str>,
) -> Result<(), AppError> {
    let Some(spec) = spec else {
        return Ok(());
    };
    let (namespace, name) = crate::names::operator_ref(spec).map_err(AppError::Usage)?;
    let api: kube::Api<k8s_openapi::api::apps::v1::Deployment> = kube::Api::namespaced(client.clone(), &namespace);
    match api.get_opt(&name).await {
        Ok(Some(_)) => Ok(()),
        Ok(None) => Err(AppError::Undecided(format!(
            "--operator {spec}: deployment {name:?} not found in namespace {namespace:?}"
        ))),
        Err(kube::Error::Api(_)) => Ok(()),
        Err(e) => Err(crate::client::unreachable(global, config, e)),
    }
}

/// `--operator NS/deployment/NAME` given with `--bundle DIR`: the bundle must hold that
/// Deployment in `operator/deployment.json`, else an error naming the flag and what the bundle
/// holds (exit 3). A bundle without that file cannot say: its gap stays in the answer.
pub fn check_operator_in_bundle(
    operator: &crate::evidence::OperatorEvidence,
    spec: Option<&str>,
    dir: &std::path::Path,
) -> Result<(), AppError> {
    let (Some(spec), Some(deployments)) = (spec, operator.deployments.get()) else {
        return Ok(());
    };
    let (namespace, name) = crate::names::operator_ref(spec).map_err(AppError::Usage)?;
    let label = |d: &k8s_openapi::api::apps::v1::Deployment| {
        format!(
            "{}/deployment/{}",
            d.metadata.namespace.as_deref().unwrap_or(""),
            d.metadata.name.as_deref().unwrap_or("")
        )
    };
    if deployments
        .iter()
        .any(|d| label(d) == format!("{namespace}/deployment/{name}"))
    {
        return Ok(());
    }
    let held: Vec<String> = deployments.iter().map(label).collect();
    Err(AppError::Undecided(format!(
        "--operator {spec}: not in the bundle {}, whose operator/deployment.json holds {}",
        dir.display(),
        if held.is_empty() {
            "no Deployment".to_string()
        } else {
            held.join(", ")
        }
    )))
}

/// `-n NS` given with `--bundle DIR`: a bundle holds only what it collected, so a namespace it
/// did not collect is "not in the bundle" (exit 3, naming what it holds), never kubectl's "No
/// resources found in NS namespace.", which means the server has none (issue 14 item 3). The
/// namespace it collected is `meta.json`'s; a bundle without one (made with kubectl, or with
/// `-A`) holds the namespaces of its Microservices, and one with none of them is not refused.
pub fn check_bundle_namespace(
    snapshot: &crate::evidence::Snapshot,
    namespace: Option<&str>,
    dir: &std::path::Path,
) -> Result<(), AppError> {
    let Some(wanted) = namespace else {
        return Ok(());
    };
    let held: Vec<String> = match &snapshot.namespace {
        Some(ns) => vec![ns.clone()],
        None => {
            let mut namespaces: Vec<String> = snapshot
                .microservices
                .get()
                .map(|objects| objects.iter().filter_map(|o| o.metadata.namespace.clone()).collect())
                .unwrap_or_default();
            namespaces.sort();
            namespaces.dedup();
            namespaces
        }
    };
    if held.is_empty() || held.iter().any(|ns| ns == wanted) {
        return Ok(());
    }
    let source = if snapshot.namespace.is_some() {
        "meta.json"
    } else {
        "its microservices.json"
    };
    Err(AppError::Undecided(format!(
        "the bundle {} holds namespace {} ({source}), not {wanted}: a bundle holds only what it collected",
        dir.display(),
        held.join(", ")
    )))
}
