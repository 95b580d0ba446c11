//! How far the handlers of an object's current Kopf cycle have got: `status`'s `HANDLERS`
//! column (`succeeded/total`) for a resource other than the Microservice (`--resource`), and
//! `-o json`'s `handlers`. Pure: read from the object (Kopf's progress records) and its
//! operator's logs (the cycle end), never guessed.
//!
//! Kopf keeps one progress record per handler of the cycle in flight
//! (`kopf.zalando.org/<handler-id>` annotations, or `status.kopf.progress`), each with
//! `success`/`failure` once the handler has finished, and purges them all when the cycle ends,
//! logging `Creation is processed: N succeeded; M failed.` (the cycle end of
//! [`crate::diagnose::log_facts::CycleEnd`]). So the records give the cycle in flight, and
//! without records the last cycle end gives the cycle of the spec Kopf last recorded, which is
//! the current spec only when nothing changed since ([`Assessment::changed_fields`] empty).

use serde::Serialize;

use super::log_facts::LogFacts;
use super::staleness::{Assessment, HandledBy};
use crate::kopf::progress;
use crate::resource::MicroserviceObject;

/// The handlers of the object's current cycle: `{"succeeded": 1, "failed": 3, "total": 4,
/// "from": "cycle-end"}`. `total` counts the handlers Kopf ran in the cycle (its records, or
/// the cycle end's sum), not those its filters left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct HandlerCount {
    /// Handlers that succeeded in the cycle.
    pub succeeded: u32,
    /// Handlers that failed permanently in it (not retried for this cause).
    pub failed: u32,
    /// Handlers of the cycle: finished or still running or retrying.
    pub total: u32,
    /// Where the count comes from.
    pub from: CountFrom,
}

/// The evidence of a [`HandlerCount`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CountFrom {
    /// Kopf's progress records on the object: a cycle in flight.
    Progress,
    /// The operator's log line (or Kopf's event) that ended the last cycle, for the spec the
    /// object has now.
    CycleEnd,
}

impl HandlerCount {
    /// `1/4`: succeeded of total, the `HANDLERS` column.
    pub fn column(&self) -> String {
        format!("{}/{}", self.succeeded, self.total)
    }

    /// `1 of 4 succeeded, 3 failed permanently (the last cycle's end)`: the detail's line.
    pub fn line(&self) -> String {
        let mut text = format!("{} of {} succeeded", self.succeeded, self.total);
        if self.failed > 0 {
            text.push_str(&format!(", {} failed permanently", self.failed));
        }
        let running = self.total.saturating_sub(self.succeeded + self.failed);
        if running > 0 {
            text.push_str(&format!(", {running} running or retrying"));
        }
        text.push_str(match self.from {
            CountFrom::Progress => " (Kopf's progress records: a cycle in flight)",
            CountFrom::CycleEnd => " (the last cycle's end, for this spec)",
        });
        text
    }
}

/// The count of `obj`'s current cycle, or `None` when the evidence does not give it: no
/// progress record, and no cycle end for the spec it has now (a spec changed since, logs not
/// read, or no Kopf record at all).
pub fn of(obj: &MicroserviceObject, facts: &LogFacts, assessment: &Assessment) -> Option<HandlerCount> {
    let records = super::staleness::progress_of(obj);
    if !records.is_empty() {
        let count = |f: fn(&progress::Progress) -> bool| records.iter().filter(|r| f(r)).count() as u32;
        return Some(HandlerCount {
            succeeded: count(|r| r.success == Some(true)),
            failed: count(|r| r.failure == Some(true)),
            total: records.len() as u32,
            from: CountFrom::Progress,
        });
    }
    let LogFacts::Read {
        last_cycle: Some(cycle),
        ..
    } = facts
    else {
        return None;
    };
    (assessment.handled_by == HandledBy::Kopf && assessment.changed_fields.is_empty()).then_some(HandlerCount {
        succeeded: cycle.succeeded,
        failed: cycle.failed,
        total: cycle.succeeded + cycle.failed,
        from: CountFrom::CycleEnd,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::log_facts::{Activity, CycleEnd};
    use crate::diagnose::staleness::{ChangedField, Verdict};
    use serde_json::json;

    fn obj(value: serde_json::Value) -> MicroserviceObject {
        serde_json::from_value(value).unwrap()
    }

    fn read(cycle: Option<(u32, u32)>) -> LogFacts {
        LogFacts::Read {
            covers_from: None,
            last_cycle: cycle.map(|(succeeded, failed)| CycleEnd {
                time: None,
                clock: "kubelet clock",
                succeeded,
                failed,
                line: "Creation is processed: 1 succeeded; 3 failed.".into(),
            }),
            last_retry: None,
            last_retry_time: None,
            last_rejection: None,
            activity: Box::new(Activity::default()),
        }
    }

    fn assessed(handled_by: HandledBy, changed: bool) -> Assessment {
        Assessment {
            verdict: Verdict::Stale,
            reasons: Vec::new(),
            handled_by,
            changed_fields: if changed {
                vec![ChangedField {
                    field: "spec.field".into(),
                    old: json!("a"),
                    new: json!("b"),
                }]
            } else {
                Vec::new()
            },
            last_handled: None,
            spec_changed: None,
            deletion: None,
        }
    }

    #[test]
    fn progress_records_count_the_cycle_in_flight() {
        let o = obj(json!({"metadata": {"name": "x", "annotations": {
            "kopf.zalando.org/a": "{\"started\":\"2026-12-02T06:32:19+00:00\",\"purpose\":\"update\",\"success\":true}",
            "kopf.zalando.org/b": "{\"started\":\"2026-12-02T06:32:19+00:00\",\"purpose\":\"update\",\"retries\":2,\"success\":false,\"failure\":false}",
            "kopf.zalando.org/c": "{\"started\":\"2026-12-02T06:32:19+00:00\",\"purpose\":\"update\",\"failure\":true}",
            "kopf.zalando.org/last-handled-configuration": "{\"spec\":{}}"}}, "spec": {}}));
        let count = of(&o, &read(Some((1, 0))), &assessed(HandledBy::Kopf, true)).unwrap();
        assert_eq!(
            (count.succeeded, count.failed, count.total, count.from),
            (1, 1, 3, CountFrom::Progress)
        );
        assert_eq!(count.column(), "1/3");
        assert_eq!(
            count.line(),
            "1 of 3 succeeded, 1 failed permanently, 1 running or retrying (Kopf's progress records: a cycle in flight)"
        );
    }

    #[test]
    fn the_cycle_end_counts_only_for_the_spec_it_handled() {
        let o = obj(json!({"metadata": {"name": "x"}, "spec": {}}));
        let same = of(&o, &read(Some((1, 3))), &assessed(HandledBy::Kopf, false)).unwrap();
        assert_eq!((same.column(), same.from), ("1/4".to_string(), CountFrom::CycleEnd));
        assert_eq!(
            same.line(),
            "1 of 4 succeeded, 3 failed permanently (the last cycle's end, for this spec)"
        );
        assert_eq!(of(&o, &read(Some((1, 3))), &assessed(HandledBy::Kopf, true)), None);
        assert_eq!(of(&o, &read(None), &assessed(HandledBy::Kopf, false)), None);
        assert_eq!(of(&o, &read(Some((1, 0))), &assessed(HandledBy::Unknown, false)), None);
        assert_eq!(
            of(
                &o,
                &LogFacts::Unavailable("no logs".into()),
                &assessed(HandledBy::Kopf, false)
            ),
            None
        );
    }
}
