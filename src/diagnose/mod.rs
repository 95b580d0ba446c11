//! Verdicts over a [`crate::evidence::Snapshot`]: pure functions, no I/O.
//!
//! - [`staleness`]: is `Accepted` still true for the spec each object has now (`status`);
//! - [`events`]: why is there no Warning event (`explain-events`), with [`rbac`] for permissions;
//! - [`finding`]: what a finding is: its stable id ([`finding::FindingId`]), severity, evidence, fix;
//! - [`leading`]: whether a replica of the operator is the one that handles (Lease, Kopf peering);
//! - [`deletion`]: a pending deletion and the finalizers that hold it;
//! - [`cycles`]: what the operator's logs say about each object's handling cycles (for
//!   [`staleness`] and [`events`]), as [`log_facts`].

pub mod cycles;
pub mod deletion;
pub mod events;
pub mod finding;
pub mod handlings;
pub mod leading;
pub mod log_facts;
pub mod rbac;
pub mod staleness;
pub mod verdict;
