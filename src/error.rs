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

/// A client error in one line: `Forbidden (403): <message>` for API errors (the Status'
/// reason, code and message), the transport's own text otherwise (`timed out` named as such).
pub fn describe_kube_error(err: &kube::Error) -> String {
    match err {
        kube::Error::Api(status) => {
            let reason = if status.reason.is_empty() {
                "Error"
            } else {
                status.reason.as_str()
            };
            format!("{reason} ({}): {}", status.code, status.message.trim())
        }
        other => {
            let mut text = other.to_string();
            let mut source = std::error::Error::source(other);
            while let Some(cause) = source {
                let cause_text = cause.to_string();
                if !text.contains(&cause_text) {
                    text.push_str(": ");
                    text.push_str(&cause_text);
                }
                source = cause.source();
            }
            text
        }
    }
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
}
