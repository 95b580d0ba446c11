//! The handler of our operator: its name and how one run of it ends (the `handler` and
//! `outcome` fields of its log lines and metrics, docs/contracts.md).

/// The handler id, as Kopf names a function `accept` (our operator has no field handler, so never `accept/spec`).
pub const HANDLER: &str = "accept";

/// How one run of the handler ended (the `outcome` label of the metrics).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RunOutcome {
    /// The handler succeeded (status written or already right).
    Succeeded,
    /// A permanent failure: no retry until the spec changes.
    Failed,
    /// A temporary failure: retried with backoff.
    Retrying,
    /// The lease was lost before the next write: nothing more was written.
    Cancelled,
}

impl RunOutcome {
    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            RunOutcome::Succeeded => "succeeded",
            RunOutcome::Failed => "failed",
            RunOutcome::Retrying => "retrying",
            RunOutcome::Cancelled => "cancelled",
        }
    }
}
