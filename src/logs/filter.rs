//! Which runs `logs --handler` shows: handler, object, time window, cause, outcome, last N.

use chrono::{DateTime, Utc};

use super::ObjectKey;
use super::runs::Run;
use crate::kopf::messages::Outcome;
use crate::vocab::cause::Cause;

/// An object selector: `NS/NAME`, or `NAME` in any namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectSelector {
    /// `None`: any namespace.
    pub namespace: Option<String>,
    /// `metadata.name`.
    pub name: String,
}

/// Why an OBJECT of `logs --handler` is refused ([`ObjectSelector::parse`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ObjectSelectorError {
    /// A part that is not a Kubernetes name: `invalid object "a/b/c": ...`.
    #[error("invalid object {input:?}: {reason}")]
    Invalid {
        /// The OBJECT as given.
        input: String,
        /// What is wrong with it ([`crate::names::object_ref`]'s words).
        reason: String,
    },
    /// An `NS/NAME` that contradicts `-n`, in [`crate::names::object_in_scope`]'s words.
    #[error("{0}")]
    OutOfScope(String),
}

impl ObjectSelector {
    /// Reads `NAME`, `TYPE/NAME` or `NS/NAME`; `default_namespace` (from `-n`) applies to a bare
    /// `NAME`, and an `NS/NAME` that contradicts it is refused as in `status` and `explain-events`.
    ///
    /// Errors: a part that is not a Kubernetes name, naming the input; the contradiction
    /// ([`ObjectSelectorError`]).
    pub fn parse(input: &str, default_namespace: Option<&str>) -> Result<Self, ObjectSelectorError> {
        crate::names::object_ref(input).map_err(|reason| ObjectSelectorError::Invalid {
            input: input.to_string(),
            reason,
        })?;
        let (namespace, name) =
            crate::names::object_in_scope(input, default_namespace, false).map_err(ObjectSelectorError::OutOfScope)?;
        Ok(ObjectSelector { namespace, name })
    }

    /// Whether `key` is selected.
    pub fn matches(&self, key: &ObjectKey) -> bool {
        key.name == self.name
            && self
                .namespace
                .as_ref()
                .is_none_or(|ns| key.namespace.as_ref() == Some(ns))
    }

    /// `NS/NAME`, or `NAME` when any namespace.
    pub fn describe(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{ns}/{}", self.name),
            None => self.name.clone(),
        }
    }
}

/// The filters of `logs --handler`.
#[derive(Debug, Clone, Default)]
pub struct RunFilter {
    /// `--handler`: the id or its prefix before `/`.
    pub handler: String,
    /// The optional OBJECT.
    pub object: Option<ObjectSelector>,
    /// `--since`, as a start time: runs that started before it (or without a time) are left out.
    pub started_after: Option<DateTime<Utc>>,
    /// `--cause` (empty: any). `None` in the list is `unknown`.
    pub causes: Vec<Option<Cause>>,
    /// `--outcome` (empty: any).
    pub outcomes: Vec<Outcome>,
}

impl RunFilter {
    /// Whether `run` passes every filter.
    pub fn matches(&self, run: &Run) -> bool {
        run.matches_handler(&self.handler)
            && self.object.as_ref().is_none_or(|o| o.matches(&run.object))
            && self
                .started_after
                .is_none_or(|after| run.started.is_some_and(|s| s.at >= after))
            && (self.causes.is_empty() || self.causes.contains(&run.cause))
            && (self.outcomes.is_empty() || self.outcomes.contains(&run.outcome))
    }
}

/// Orders runs by start time (runs without a time keep their place at the front, in input
/// order), keeps those that pass `filter`, then the last `tail` of them.
pub fn select(mut runs: Vec<Run>, filter: &RunFilter, tail: Option<usize>) -> Vec<Run> {
    runs.sort_by_key(|r| r.started.map(|s| s.at));
    runs.retain(|r| filter.matches(r));
    if let Some(n) = tail {
        let skip = runs.len().saturating_sub(n);
        runs.drain(..skip);
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logs::{Clock, Stamp};

    fn run(handler: &str, object: &str, at: &str, cause: Option<Cause>, outcome: Outcome) -> Run {
        Run {
            handler: handler.into(),
            object: ObjectKey::parse(object).unwrap(),
            cause,
            cause_source: None,
            outcome,
            detail: None,
            started: Some(Stamp {
                at: at.parse().unwrap(),
                clock: Clock::Kubelet,
            }),
            finished: None,
            records: vec![],
            omitted_records: 0,
            pod: None,
            container: None,
            also_read_from: Vec::new(),
        }
    }

    #[test]
    fn selectors_parse_and_match() {
        let s = ObjectSelector::parse("todo-api", Some("todo")).unwrap();
        assert!(s.matches(&ObjectKey::parse("todo/todo-api").unwrap()));
        assert!(!s.matches(&ObjectKey::parse("other/todo-api").unwrap()));
        let any = ObjectSelector::parse("todo-api", None).unwrap();
        assert!(any.matches(&ObjectKey::parse("other/todo-api").unwrap()));
        assert_eq!(ObjectSelector::parse("a/b", None).unwrap().describe(), "a/b");
        assert_eq!(ObjectSelector::parse("a/b", Some("a")).unwrap().describe(), "a/b");
        assert!(
            ObjectSelector::parse("a/b", Some("x"))
                .unwrap_err()
                .to_string()
                .starts_with("a/b names namespace a; it contradicts -n x")
        );
        assert_eq!(ObjectSelector::parse("ms/b", Some("x")).unwrap().describe(), "x/b");
        let err = ObjectSelector::parse("a/b/c", None).unwrap_err().to_string();
        assert!(err.contains("\"a/b/c\"") && err.contains("expected"), "{err}");
        assert!(ObjectSelector::parse("", None).is_err());
    }

    #[test]
    fn filters_then_tail_in_start_order() {
        let runs = vec![
            run(
                "accept/spec",
                "t/a",
                "2026-11-29T17:00:03Z",
                Some(Cause::Update),
                Outcome::Failed,
            ),
            run(
                "accept",
                "t/a",
                "2026-11-29T17:00:01Z",
                Some(Cause::Create),
                Outcome::Succeeded,
            ),
            run("acceptor", "t/a", "2026-11-29T17:00:02Z", None, Outcome::Succeeded),
            run("accept", "t/b", "2026-11-29T17:00:04Z", None, Outcome::Retrying),
        ];
        let filter = RunFilter {
            handler: "accept".into(),
            ..Default::default()
        };
        let got: Vec<String> = select(runs.clone(), &filter, None)
            .iter()
            .map(|r| r.handler.clone())
            .collect();
        assert_eq!(got, ["accept", "accept/spec", "accept"]);
        assert_eq!(select(runs.clone(), &filter, Some(1))[0].object.name, "b");
        let unknown_cause = RunFilter {
            causes: vec![None],
            ..filter.clone()
        };
        assert_eq!(select(runs.clone(), &unknown_cause, None).len(), 1);
        let failed_since = RunFilter {
            outcomes: vec![Outcome::Failed, Outcome::Retrying],
            started_after: Some("2026-11-29T17:00:04Z".parse().unwrap()),
            ..filter.clone()
        };
        let got = select(runs.clone(), &failed_since, None);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].outcome, Outcome::Retrying);
        let object = RunFilter {
            object: Some(ObjectSelector::parse("a", Some("t")).unwrap()),
            ..filter
        };
        assert_eq!(select(runs, &object, None).len(), 2);
    }
}
