//! Subcommands other than `operate`.

pub mod collect;
pub mod complete;
pub mod completion;
pub mod explain_events;
pub mod log_files;
pub mod logs;
pub mod manifests;
pub mod resource_arg;
pub mod short_form;
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

/// Writes `text` to stderr as it is (no newline added); a closed or failed stderr is ignored.
///
/// Why not `eprint!`: it panics (exit 101, a Rust backtrace note) when stderr is a closed pipe
/// (`2>&1 | head`, a `tee` killed by the same Ctrl-C), which would replace the command's own
/// exit code — the one thing a script can still read then. Notes and progress on stderr are for
/// a person; losing them when nobody reads them is right.
pub fn write_stderr(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes()).and_then(|_| err.flush());
}

/// Writes one line (`line` then a newline) to stderr, ignoring a closed stderr as
/// [`write_stderr`] does.
pub fn say(line: impl std::fmt::Display) {
    write_stderr(&format!("{line}\n"));
}

/// `--operator NS/deployment/NAME` given live: the Deployment must exist, else the answer would
/// be about no operator while looking like one (issue 14 item 2: `explain-events` printed
/// "Nothing is hidden ..." beside a gap). One GET, only when the flag is given: 404 is an
/// error naming the flag (exit 3), nothing printed as an answer; a refusal (403, ...) is left to
/// the evidence gathering, which records it as a gap; a server that does not answer is the
/// same one-line error every command gives ([`crate::client::unreachable`]).
pub async fn check_operator_exists(
    client: &kube::Client,
    connection: &crate::client::ConnectionSettings,
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
        Err(e) => Err(crate::client::unreachable(connection, config, e)),
    }
}
