//! Verdicts over a [`crate::evidence::Snapshot`]: pure functions, no I/O.
//!
//! - [`staleness`]: is `Accepted` still true for the spec each object has now (`status`);
//! - [`managed_fields`]: what managedFields say about who wrote spec and status, and when.

pub mod cycles;
pub mod managed_fields;
pub mod staleness;
