//! The crate's error type and the exit codes of the Contracts:
//! 0 ok, 1 a problem was diagnosed, 2 usage error, 3 could not decide.

use thiserror::Error;

/// Everything a subcommand can fail with, each mapped to one exit code.
#[derive(Debug, Error)]
pub enum AppError {
    /// Bad input on the command line (a flag value, a path): exit 2.
    #[error("{0}")]
    Usage(String),

    /// The cluster could not be asked or did not answer (unreachable, forbidden, not found): exit 3.
    #[error("{context}: {}", describe_kube_error(source))]
    Kube {
        /// What we were doing, e.g. `get CRD microservices.platform.example.io`.
        context: String,
        /// The client's error.
        #[source]
        source: kube::Error,
    },

    /// A kubeconfig could not be read or has no such context: exit 2 when the user named it,
    /// else 3.
    #[error("{message}")]
    Config {
        /// What went wrong, naming the file or context.
        message: String,
        /// Whether the user named the file/context on the command line.
        user_input: bool,
    },

    /// A diagnosed problem that stops the subcommand (e.g. the CRD has no status subresource): exit 1.
    #[error("{message}")]
    Problem {
        /// The problem in one sentence.
        message: String,
        /// The next step for the user.
        hint: Option<String>,
    },

    /// The evidence cannot decide (object not found, deciding evidence missing): exit 3.
    #[error("{0}")]
    Undecided(String),

    /// Local I/O failed (writing output): exit 3.
    #[error("{context}: {source}")]
    Io {
        /// What we were doing.
        context: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

/// Whether the client gave up waiting for the server: an `io::Error` of kind `TimedOut` in the
/// error's source chain. kube's connect, read and write timeouts (hyper-timeout, set from
/// `--request-timeout` in [`crate::client::config`]) raise it: for a TCP connect or TLS handshake
/// that does not finish (`client error (Connect): deadline has elapsed`) and for a response that
/// does not come (`connection error: timed out`).
pub fn is_timeout(err: &kube::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(cause) = source {
        if cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::TimedOut)
        {
            return true;
        }
        source = cause.source();
    }
    false
}

/// A client error in one line: `Forbidden (403): <message>` for API errors (the Status'
/// reason, code and message); for a timeout ([`is_timeout`]) `timed out (<the transport's
/// text>)`; the transport's own text otherwise, each cause once, without kube's `ServiceError: `
/// prefix (`client error (Connect): tcp connect error: Connection refused (os error 111)`).
pub fn describe_kube_error(err: &kube::Error) -> String {
    match err {
        kube::Error::Api(status) => describe_status(status),
        other => {
            let mut text = match other {
                kube::Error::Service(inner) => inner.to_string(),
                other => other.to_string(),
            };
            let mut source = std::error::Error::source(other);
            while let Some(cause) = source {
                let cause_text = cause.to_string();
                if !text.contains(&cause_text) {
                    text.push_str(": ");
                    text.push_str(&cause_text);
                }
                source = cause.source();
            }
            if is_timeout(other) {
                format!("timed out ({text})")
            } else {
                text
            }
        }
    }
}

/// An API Status in one line: `<reason> (<code>): <message>` (reason `Error` when the Status
/// has none), e.g. `Forbidden (403): microservices.platform.example.io is forbidden: ...`.
pub fn describe_status(status: &kube::core::Status) -> String {
    let reason = if status.reason.is_empty() {
        "Error"
    } else {
        status.reason.as_str()
    };
    format!("{reason} ({}): {}", status.code, status.message.trim())
}

impl AppError {
    /// The process exit code of this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            AppError::Usage(_) => 2,
            AppError::Config { user_input: true, .. } => 2,
            AppError::Config { user_input: false, .. } => 3,
            AppError::Problem { .. } => 1,
            AppError::Kube { .. } | AppError::Io { .. } | AppError::Undecided(_) => 3,
        }
    }

    /// A next step to print after the error, when there is one.
    pub fn hint(&self) -> Option<String> {
        match self {
            AppError::Problem { hint, .. } => hint.clone(),
            AppError::Kube {
                source: kube::Error::Api(status),
                ..
            } if status.code == 403 => {
                Some("the identity in use lacks an RBAC permission; `kubectl auth can-i` shows which".into())
            }
            AppError::Kube { source, .. } if is_timeout(source) => Some(
                "the API server did not answer in time: check its address and the network path to it, or give a longer --request-timeout"
                    .into(),
            ),
            _ => None,
        }
    }

    /// Wraps a client error with what we were doing.
    pub fn kube(context: impl Into<String>, source: kube::Error) -> Self {
        AppError::Kube {
            context: context.into(),
            source,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_follow_the_contract() {
        assert_eq!(AppError::Usage("x".into()).exit_code(), 2);
        assert_eq!(
            AppError::Problem {
                message: "x".into(),
                hint: None
            }
            .exit_code(),
            1
        );
        assert_eq!(
            AppError::Config {
                message: "x".into(),
                user_input: true
            }
            .exit_code(),
            2
        );
        assert_eq!(
            AppError::Config {
                message: "x".into(),
                user_input: false
            }
            .exit_code(),
            3
        );
        let status = kube::core::Status::failure("forbidden", "Forbidden").with_code(403);
        let err = AppError::kube("list microservices", kube::Error::Api(Box::new(status)));
        assert_eq!(err.exit_code(), 3);
        assert!(err.hint().unwrap().contains("auth can-i"));
    }

    #[test]
    fn timeouts_are_named_as_such() {
        // What hyper-timeout raises, under hyper-util's "client error (Connect)".
        let elapsed = std::io::Error::new(std::io::ErrorKind::TimedOut, "deadline has elapsed");
        let err = kube::Error::Service(Box::new(elapsed));
        assert!(is_timeout(&err));
        assert_eq!(describe_kube_error(&err), "timed out (deadline has elapsed)");
        let app = AppError::kube("cannot reach the API server", err);
        assert_eq!(app.exit_code(), 3);
        assert!(app.hint().unwrap().contains("--request-timeout"));
        let refused = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        let err = kube::Error::Service(Box::new(refused));
        assert!(!is_timeout(&err));
        assert!(!describe_kube_error(&err).contains("timed out"));
    }
}
