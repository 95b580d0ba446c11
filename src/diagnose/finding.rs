//! What a finding is: its stable id ([`FindingId`], the ids of docs/contracts.md), its
//! [`Severity`], and the [`Finding`] itself (title, evidence, fix). The checks that produce
//! findings (src/diagnose/findings/, one file per id) and the report ([`super::events`]) share
//! these.

use std::fmt;

use serde::{Serialize, Serializer};

/// Every finding id `explain-events` reports (`findings[].id` of `-o json`): the ids of
/// docs/contracts.md, which users and scripts match on, so an id is never renamed (new ones may be
/// added, to [`FindingId::ALL`] too). tests/layout.rs holds [`FindingId::ALL`] and the Contracts'
/// list equal; tests/explain_bundles.rs requires a bundle that must find each id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FindingId {
    /// `rbac-events`: The operator's ServiceAccount may not post events in the object's namespace, in the API group it uses.
    RbacEvents,
    /// `event-post-failed`: The operator logged failed event POSTs and carried on.
    EventPostFailed,
    /// `posting-disabled`: Posting is off: our `--events none`, or Kopf's `settings.posting.enabled = False`.
    PostingDisabled,
    /// `errors-not-posted`: Handler failures were only logged (posting level, a condition, Kopf ≥ 1.44's loggers).
    ErrorsNotPosted,
    /// `events-expired`: The failures are older than the event TTL: their events are gone.
    EventsExpired,
    /// `events-elsewhere`: Events for the name exist where a filter or `describe` does not show them.
    EventsElsewhere,
    /// `caller-cannot-list-events`: The caller may not list events: whether Warnings were posted is not known.
    CallerCannotListEvents,
    /// `status-pruned`: The CRD's status schema dropped what the operator wrote.
    StatusPruned,
    /// `accepted-stale`: `status`'s verdict: the handler has not accepted the current spec.
    AcceptedStale,
    /// `operator-not-running`: Nothing runs the handler: no running operator Pod, or no run in its log.
    OperatorNotRunning,
    /// `operator-not-watching`: No operator watches the object's namespace.
    OperatorNotWatching,
    /// `rbac-resource`: The operator may not list/watch Microservices or patch them or their status.
    RbacResource,
    /// `operator-not-found`: No operator was found.
    OperatorNotFound,
    /// `operator-not-leading`: The operator runs, but no replica is the one that handles (`findings/operator_not_leading.rs`).
    OperatorNotLeading,
    /// `deletion-pending`: The object is Terminating: finalizers hold its deletion.
    DeletionPending,
    /// `patch-rejected`: Kopf's final PATCH of each cycle is refused: no handling cycle completes.
    PatchRejected,
    /// `handler-filtered`: The operator's handlers exclude the object by their filters (`labels=`, `annotations=`, `field=`/`value=`, `when=`): not handled by design.
    HandlerFiltered,
    /// `event-post-denied`: The operator's event POSTs are refused by an admission webhook or policy, a quota, a terminating namespace or validation (not RBAC).
    EventPostDenied,
    /// `handler-failing`: The object's handler fails: its latest outcome in the operator's log a retry or a permanent failure, its error quoted.
    HandlerFailing,
}

impl FindingId {
    /// Every id, in the order the Contracts list grew.
    pub const ALL: [FindingId; 19] = [
        FindingId::RbacEvents,
        FindingId::EventPostFailed,
        FindingId::PostingDisabled,
        FindingId::ErrorsNotPosted,
        FindingId::EventsExpired,
        FindingId::EventsElsewhere,
        FindingId::CallerCannotListEvents,
        FindingId::StatusPruned,
        FindingId::AcceptedStale,
        FindingId::OperatorNotRunning,
        FindingId::OperatorNotWatching,
        FindingId::RbacResource,
        FindingId::OperatorNotFound,
        FindingId::OperatorNotLeading,
        FindingId::DeletionPending,
        FindingId::PatchRejected,
        FindingId::HandlerFiltered,
        FindingId::EventPostDenied,
        FindingId::HandlerFailing,
    ];

    /// The stable kebab-case id, e.g. `rbac-events`.
    pub fn as_str(self) -> &'static str {
        match self {
            FindingId::RbacEvents => "rbac-events",
            FindingId::EventPostFailed => "event-post-failed",
            FindingId::PostingDisabled => "posting-disabled",
            FindingId::ErrorsNotPosted => "errors-not-posted",
            FindingId::EventsExpired => "events-expired",
            FindingId::EventsElsewhere => "events-elsewhere",
            FindingId::CallerCannotListEvents => "caller-cannot-list-events",
            FindingId::StatusPruned => "status-pruned",
            FindingId::AcceptedStale => "accepted-stale",
            FindingId::OperatorNotRunning => "operator-not-running",
            FindingId::OperatorNotWatching => "operator-not-watching",
            FindingId::RbacResource => "rbac-resource",
            FindingId::OperatorNotFound => "operator-not-found",
            FindingId::OperatorNotLeading => "operator-not-leading",
            FindingId::DeletionPending => "deletion-pending",
            FindingId::PatchRejected => "patch-rejected",
            FindingId::HandlerFiltered => "handler-filtered",
            FindingId::EventPostDenied => "event-post-denied",
            FindingId::HandlerFailing => "handler-failing",
        }
    }
}

impl fmt::Display for FindingId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// As its id string, so that `-o json` reads `"id": "rbac-events"` as before the enum.
impl Serialize for FindingId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// Compares with an id as users write it (a bundle's `expected.json`, a `--jsonpath` answer).
impl PartialEq<&str> for FindingId {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// How bad a finding is (Contracts: `ok` | `warning` | `problem`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Checked, nothing wrong.
    Ok,
    /// Probably hides events, or the evidence only suggests it.
    Warning,
    /// Proven to hide events or make the status stale.
    Problem,
}

impl Severity {
    /// `ok`, `warning`, `problem`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Ok => "ok",
            Severity::Warning => "warning",
            Severity::Problem => "problem",
        }
    }
}

/// How a fix labels a command that changes what other teams share or own (the CRD, a
/// ClusterRole, another namespace's operator): [`shared_resource`] puts it right after the
/// command, so that it is never taken for the object's own fix. Such a command is never the
/// first one of a fix that offers another way (tests/fix_safety.rs holds every bundle to it).
pub const SHARED_RESOURCE_LABEL: &str = "(changes a shared resource: ";

/// [`SHARED_RESOURCE_LABEL`] naming `what`: `(changes a shared resource: the CRD ...)`.
pub fn shared_resource(what: &str) -> String {
    format!("{SHARED_RESOURCE_LABEL}{what})")
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Stable id (Contracts), e.g. `rbac-events`; serialised as [`FindingId::as_str`].
    pub id: FindingId,
    /// Severity.
    pub severity: Severity,
    /// One sentence.
    pub title: String,
    /// The facts it rests on, one per entry.
    pub evidence: Vec<String>,
    /// What to do (a Role rule as YAML, a settings line, a command); `None` for `ok`.
    pub fix: Option<String>,
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    /// Where each variant stands in [`FindingId::ALL`]: a match without a wildcard, so that a
    /// new variant does not compile until it is given a place, and the test below fails until
    /// `ALL` holds it there.
    fn position(id: FindingId) -> usize {
        match id {
            FindingId::RbacEvents => 0,
            FindingId::EventPostFailed => 1,
            FindingId::PostingDisabled => 2,
            FindingId::ErrorsNotPosted => 3,
            FindingId::EventsExpired => 4,
            FindingId::EventsElsewhere => 5,
            FindingId::CallerCannotListEvents => 6,
            FindingId::StatusPruned => 7,
            FindingId::AcceptedStale => 8,
            FindingId::OperatorNotRunning => 9,
            FindingId::OperatorNotWatching => 10,
            FindingId::RbacResource => 11,
            FindingId::OperatorNotFound => 12,
            FindingId::OperatorNotLeading => 13,
            FindingId::DeletionPending => 14,
            FindingId::PatchRejected => 15,
            FindingId::HandlerFiltered => 16,
            FindingId::EventPostDenied => 17,
            FindingId::HandlerFailing => 18,
        }
    }

    #[test]
    fn all_holds_every_id_once() {
        for (at, id) in FindingId::ALL.iter().enumerate() {
            assert_eq!(position(*id), at, "{id} is not at its place in ALL");
        }
        let strings: BTreeSet<&str> = FindingId::ALL.iter().map(|id| id.as_str()).collect();
        assert_eq!(strings.len(), FindingId::ALL.len(), "two ids share a string");
        for id in strings {
            assert!(
                id.split('-')
                    .all(|w| !w.is_empty() && w.chars().all(|c| c.is_ascii_lowercase())),
                "{id} is not kebab-case"
            );
        }
    }

    #[test]
    fn ids_serialise_as_their_strings() {
        let f = Finding {
            id: FindingId::CallerCannotListEvents,
            severity: Severity::Warning,
            title: "t".into(),
            evidence: Vec::new(),
            fix: None,
        };
        assert_eq!(
            serde_json::to_value(&f).unwrap(),
            serde_json::json!({"id": "caller-cannot-list-events", "severity": "warning", "title": "t", "evidence": [], "fix": null})
        );
        assert_eq!(FindingId::RbacEvents.to_string(), "rbac-events");
        assert!(FindingId::RbacEvents == "rbac-events" && FindingId::RbacEvents != "rbac-resource");
    }
}
