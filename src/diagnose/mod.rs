//! Verdicts over a [`crate::evidence::Snapshot`]: pure functions, no I/O.
//!
//! - [`verdict`]: the one verdict of an object, which `status` and `explain-events` both read:
//!   [`staleness`] (is `Accepted` still true for the spec the object has now) over what
//!   [`cycles`] reads from the operator's logs ([`log_facts`]), and [`handlings`] (double
//!   handling);
//! - [`events`]: why is there no Warning event (`explain-events`): the checks of `findings/`
//!   (one file per finding id) in one declared order, with [`rbac`] for permissions;
//! - [`finding`]: what a finding is: its stable id ([`finding::FindingId`]), severity, evidence, fix;
//! - [`deletion`]: a pending deletion and the finalizers that hold it;
//! - [`filtered`]: whether the object's Kopf operator's handler filters select it at all.

pub mod cycles;
pub mod deletion;
pub mod events;
pub mod filtered;
pub mod finding;
mod findings;
pub mod handler_count;
pub mod handlings;
pub mod log_facts;
pub mod rbac;
pub mod refusal;
pub mod staleness;
pub mod verdict;
