//! The shared vocabulary at the bottom of the crate: words that `operate` writes and the
//! diagnostics read, defined once so that both sides agree. It imports nothing else from the
//! crate (tests/layout.rs holds that), and `diagnose`, `evidence`, `logs` and `kopf` take these
//! words from here, never from `operate`.
//!
//! - [`cause`]: why a handler runs (create, update, resume) and Kopf's keys on an object (its
//!   finalizer, its diff-base annotation);
//! - [`handler`]: our handler's name and how one run of it ends;
//! - [`lease`]: Lease identity and timing (group, verbs, default name, client-go durations, the
//!   watch-namespaces annotation, which Lease governs which namespace);
//! - [`record`]: a log record's level and the object it is about.

pub mod cause;
pub mod handler;
pub mod lease;
pub mod record;
