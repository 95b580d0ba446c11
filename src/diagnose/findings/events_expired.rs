//! `events-expired`: the object's handler failures are older than the event TTL, and no event is
//! left on it: their events are gone.

use super::{Ctx, Line, finding};
use crate::diagnose::finding::{Finding, FindingId, Severity};
use crate::text::{count, is_are};
use crate::time::rfc3339_millis;

/// `events-expired`: handler failures in the logs older than `--event-ttl` (by the evidence's
/// "now"), and no event on the object: a warning, with the logs as where to read them.
pub(crate) fn check(ctx: &Ctx<'_>) -> Vec<Finding> {
    let Some(now) = ctx.now else { return Vec::new() };
    if ctx.snapshot.events.get().is_none() || !ctx.own_events.is_empty() {
        return Vec::new();
    }
    let old: Vec<&Line> = ctx
        .failures()
        .into_iter()
        .filter(|l| l.record.time().is_some_and(|t| now - t > ctx.options.event_ttl))
        .collect();
    let Some(last) = old.last() else { return Vec::new() };
    vec![finding(
        FindingId::EventsExpired,
        Severity::Warning,
        format!(
            "{} {} older than the event TTL ({}); {} gone",
            count(old.len() as u64, "handler failure"),
            is_are(old.len() as u64),
            crate::time::human(ctx.options.event_ttl, crate::time::DurationStyle::Exact),
            if old.len() == 1 {
                "its event is"
            } else {
                "their events are"
            }
        ),
        vec![
            format!("now: {} (evidence clock)", rfc3339_millis(now)),
            format!("last expired failure: {}", last.cite()),
            "no events left on the object".into(),
        ],
        Some(format!(
            "read the failures from the logs instead: {}",
            ctx.logs_command()
        )),
    )]
}

#[cfg(test)]
mod tests {
    use super::super::ctx::fixture::run;
    use super::*;
    use crate::diagnose::finding::FindingId::*;
    use crate::diagnose::finding::Severity::*;

    /// Failures older than the TTL and no event left: a warning; none for a healthy object.
    #[test]
    fn failures_older_than_the_ttl_have_no_events() {
        assert_eq!(
            run("bundles-synthetic/events-expired", check),
            [(EventsExpired, Warning)]
        );
        assert_eq!(run("bundles/healthy", check), []);
    }
}
