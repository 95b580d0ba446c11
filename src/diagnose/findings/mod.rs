//! The checks of `explain-events`, one file per finding id of docs/contracts.md
//! ([`crate::diagnose::finding::FindingId::as_str`], `-` as `_`), each with its tests beside it;
//! what a family of checks shares is a small module of its own (`*_facts.rs`, `event_posts.rs`),
//! which the checks import and which imports no check. A check is a pure function of [`Ctx`]
//! (`fn(&Ctx) -> Vec<Finding>`); the order they run in, and the passes over what they found,
//! are [`crate::diagnose::events`]'s (`ORDER`).

pub(crate) mod ctx;

pub(crate) mod accepted_stale;
pub(crate) mod caller_cannot_list_events;
pub(crate) mod crd_facts;
pub(crate) mod deletion_pending;
pub(crate) mod errors_not_posted;
pub(crate) mod event_post_denied;
pub(crate) mod event_post_failed;
pub(crate) mod event_posts;
pub(crate) mod events_elsewhere;
pub(crate) mod events_expired;
pub(crate) mod handler_failing;
pub(crate) mod handler_filtered;
pub(crate) mod leading_facts;
pub(crate) mod operator_facts;
pub(crate) mod operator_not_found;
pub(crate) mod operator_not_leading;
pub(crate) mod operator_not_running;
pub(crate) mod operator_not_watching;
pub(crate) mod patch_rejected;
pub(crate) mod posting_disabled;
pub(crate) mod posting_facts;
pub(crate) mod rbac_events;
pub(crate) mod rbac_resource;
pub(crate) mod status_pruned;

pub(crate) use ctx::{Ctx, Line};

use super::finding::{Finding, FindingId, Severity};

/// A finding of `id`.
fn finding(id: FindingId, severity: Severity, title: String, evidence: Vec<String>, fix: Option<String>) -> Finding {
    Finding {
        id,
        severity,
        title,
        evidence,
        fix,
    }
}
