//! `events-expired`, `events-elsewhere`, `caller-cannot-list-events`: the events that exist, and
//! why one is not seen: older than the event TTL, on a predecessor's uid, without uid, in another
//! namespace or of type `Error`, or not listable by the caller.

use super::{Ctx, Line, failures, finding, human_duration};
use crate::diagnose::finding::{Finding, FindingId, Severity};
use crate::diagnose::rbac;
use crate::evidence::{GapReason, event_time};
use crate::text::{count, is_are};
use crate::time::rfc3339_millis;

pub(super) fn expired(ctx: &Ctx<'_>) -> Vec<Finding> {
    let Some(now) = ctx.now else { return Vec::new() };
    if ctx.snapshot.events.get().is_none() || !ctx.own_events.is_empty() {
        return Vec::new();
    }
    let old: Vec<&Line> = failures(ctx)
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
            human_duration(ctx.options.event_ttl),
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
            "read the failures from the logs instead: kubectl microservice logs --handler accept {} -n {}",
            ctx.name, ctx.ns
        )),
    )]
}

pub(super) fn elsewhere(ctx: &Ctx<'_>) -> Vec<Finding> {
    let Some(events) = ctx.snapshot.events.get() else {
        return Vec::new();
    };
    let mut evidence = Vec::new();
    let mut stale = false;
    // Events elsewhere for a reason other than a predecessor's uid (another namespace, no uid,
    // a type a filter hides).
    let mut hiding = false;
    for e in events {
        let io = &e.involved_object;
        if io.kind.as_deref() != Some("Microservice") || io.name.as_deref() != Some(ctx.name) {
            continue;
        }
        let ns = io.namespace.as_ref().or(e.metadata.namespace.as_ref());
        let describe = |why: String| {
            format!(
                "event {}/{} type {} reason {} at {}: {why}",
                e.metadata.namespace.as_deref().unwrap_or(""),
                e.metadata.name.as_deref().unwrap_or("?"),
                e.type_.as_deref().unwrap_or("<none>"),
                e.reason.as_deref().unwrap_or("<none>"),
                event_time(e)
                    .map(rfc3339_millis)
                    .unwrap_or_else(|| "unknown time".into()),
            )
        };
        if ns.map(String::as_str) != Some(ctx.ns) {
            stale = true;
            hiding = true;
            evidence.push(describe(format!(
                "in namespace {}, not {}",
                ns.map(String::as_str).unwrap_or("<none>"),
                ctx.ns
            )));
        } else if io.uid.is_none() {
            stale = true;
            hiding = true;
            evidence.push(describe(
                "involvedObject.uid is missing: kubectl describe does not show it".into(),
            ));
        } else if io.uid != ctx.obj.metadata.uid {
            stale = true;
            evidence.push(describe(format!(
                "involvedObject.uid {} is not this object's uid {} (a predecessor with the same name)",
                io.uid.as_deref().unwrap_or(""),
                ctx.obj.metadata.uid.as_deref().unwrap_or("?")
            )));
        } else if !matches!(e.type_.as_deref(), Some("Normal") | Some("Warning")) {
            hiding = true;
            evidence.push(describe(
                "type is neither Normal nor Warning: `--field-selector type=Warning` hides it".into(),
            ));
        }
    }
    if evidence.is_empty() {
        return Vec::new();
    }
    // Only a deleted predecessor's events, and this object is handled (`fresh`): they hide
    // nothing about it; said, with both uids, as `ok`.
    if !hiding && ctx.judged.assessment.verdict == crate::diagnose::staleness::Verdict::Fresh {
        return vec![finding(
            FindingId::EventsElsewhere,
            Severity::Ok,
            format!(
                "the events matching the name are a deleted predecessor's; this object (uid {}) is handled (fresh) and hides nothing",
                ctx.obj.metadata.uid.as_deref().unwrap_or("?")
            ),
            evidence,
            None,
        )];
    }
    let title = if stale {
        "events matching the name are about another object (another namespace or uid)"
    } else {
        "events of a type other than Normal/Warning exist: a type=Warning filter hides them"
    };
    vec![finding(
        FindingId::EventsElsewhere,
        Severity::Warning,
        title.into(),
        evidence,
        Some(format!(
            "list them all: kubectl get events -A --field-selector involvedObject.kind=Microservice,involvedObject.name={}",
            ctx.name
        )),
    )]
}

pub(super) fn caller_events(ctx: &Ctx<'_>) -> Vec<Finding> {
    match ctx.snapshot.events.gap() {
        Some(gap) if matches!(gap.reason, GapReason::Forbidden(_)) => vec![finding(
            FindingId::CallerCannotListEvents,
            Severity::Warning,
            format!("you cannot list events in {}: whether events exist is unknown", ctx.ns),
            vec![gap.to_string()],
            Some(format!(
                "ask for this rule in a Role bound to you in {}:\n{}",
                ctx.ns,
                rbac::rule_yaml("", "events", &["get", "list"])
            )),
        )],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixture::run;
    use super::*;
    use crate::diagnose::finding::FindingId::*;
    use crate::diagnose::finding::Severity::*;

    /// Each reason an event is not seen, from the bundle that shows it; none for a healthy object.
    #[test]
    fn events_expired_elsewhere_or_not_listable() {
        assert_eq!(
            run("bundles-synthetic/events-expired", expired),
            [(EventsExpired, Warning)]
        );
        // A predecessor's events beside a never-handled object: a warning (they are not about it).
        assert_eq!(run("bundles/recreated-uid", elsewhere), [(EventsElsewhere, Warning)]);
        assert_eq!(
            run("bundles-synthetic/caller-cannot-list-events", caller_events),
            [(CallerCannotListEvents, Warning)]
        );
        for check in [expired, elsewhere, caller_events] {
            assert_eq!(run("bundles/healthy", check), []);
        }
    }
}
