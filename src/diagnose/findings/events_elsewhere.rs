//! `events-elsewhere`: events for the object's name exist where a filter or `kubectl describe`
//! does not show them: on a predecessor's uid, without uid, in another namespace, or of type
//! `Error`.

use k8s_openapi::api::core::v1::Event;

use super::{Ctx, finding};
use crate::diagnose::finding::{Finding, FindingId, Severity};
use crate::evidence::event_time;
use crate::time::rfc3339_millis;

/// `events-elsewhere`: every event about a Microservice of the object's name that is not plainly
/// its own, with why it is not seen; a warning, or `ok` when they are only a deleted
/// predecessor's and this object is handled (`status`'s verdict `fresh`).
pub(crate) fn check(ctx: &Ctx<'_>) -> Vec<Finding> {
    let Some(events) = ctx.snapshot.events.get() else {
        return Vec::new();
    };
    let mut evidence = Vec::new();
    let mut stale = false;
    // Events elsewhere for a reason other than a predecessor's uid (another namespace, no uid,
    // a type a filter hides).
    let mut hiding = false;
    // Where they are, one `kubectl get events` each: (the event's namespace, its uid if any).
    let mut places: Vec<(String, Option<String>)> = Vec::new();
    for e in events {
        let Some(place) = elsewhere(ctx, e) else { continue };
        stale |= place.other_object;
        hiding |= place.hidden;
        evidence.push(place.cited);
        let at = (
            e.metadata.namespace.clone().unwrap_or_else(|| ctx.ns.to_string()),
            e.involved_object.uid.clone(),
        );
        if !places.contains(&at) {
            places.push(at);
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
        // The commands alone: a lead ("list them: ") would wrap the usual one to two rows.
        Some(list_commands(&ctx.snapshot.resource.kind, ctx.name, &places).join("; ")),
    )]
}

/// One `kubectl get events` per place (the event's namespace, its `involvedObject.uid`): in
/// that namespace (`-n`), by the uid, else (no uid) by kind and name; never `-A` or a bare
/// name, which would also list another team's Microservice of the same name.
fn list_commands(kind: &str, name: &str, places: &[(String, Option<String>)]) -> Vec<String> {
    places
        .iter()
        .map(|(ns, uid)| match uid {
            Some(uid) => format!("kubectl get events -n {ns} --field-selector involvedObject.uid={uid}"),
            None => format!(
                "kubectl get events -n {ns} --field-selector involvedObject.kind={kind},involvedObject.name={name}"
            ),
        })
        .collect()
}

/// Why an event about the object's name is not plainly its own.
struct Elsewhere {
    /// The event and the reason, for evidence.
    cited: String,
    /// It is about another object: another namespace, no uid, or a predecessor's uid.
    other_object: bool,
    /// A filter or `describe` hides it: another namespace, no uid, a type neither Normal nor
    /// Warning (a predecessor's uid hides nothing about this object).
    hidden: bool,
}

/// Where event `e` stands, when it is about a Microservice of the object's name and not plainly
/// its own (its namespace, its uid, type Normal or Warning); `None` otherwise.
fn elsewhere(ctx: &Ctx<'_>, e: &Event) -> Option<Elsewhere> {
    let io = &e.involved_object;
    if io.kind.as_deref() != Some(ctx.snapshot.resource.kind.as_str()) || io.name.as_deref() != Some(ctx.name) {
        return None;
    }
    let ns = io.namespace.as_ref().or(e.metadata.namespace.as_ref());
    let cite = |why: String| {
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
    let (why, other_object, hidden) = if ns.map(String::as_str) != Some(ctx.ns) {
        (
            format!(
                "in namespace {}, not {}",
                ns.map(String::as_str).unwrap_or("<none>"),
                ctx.ns
            ),
            true,
            true,
        )
    } else if io.uid.is_none() {
        (
            "involvedObject.uid is missing: kubectl describe does not show it".into(),
            true,
            true,
        )
    } else if io.uid != ctx.obj.metadata.uid {
        (
            format!(
                "involvedObject.uid {} is not this object's uid {} (a predecessor with the same name)",
                io.uid.as_deref().unwrap_or(""),
                ctx.obj.metadata.uid.as_deref().unwrap_or("?")
            ),
            true,
            false,
        )
    } else if !matches!(e.type_.as_deref(), Some("Normal") | Some("Warning")) {
        (
            "type is neither Normal nor Warning: `--field-selector type=Warning` hides it".into(),
            false,
            true,
        )
    } else {
        return None;
    };
    Some(Elsewhere {
        cited: cite(why),
        other_object,
        hidden,
    })
}

#[cfg(test)]
mod tests {
    use super::super::ctx::fixture::run;
    use super::*;
    use crate::diagnose::finding::FindingId::*;
    use crate::diagnose::finding::Severity::*;

    /// A predecessor's events beside a never-handled object: a warning (they are not about
    /// it); none for a healthy object.
    #[test]
    fn events_of_another_uid_or_namespace_are_found() {
        assert_eq!(run("bundles/recreated-uid", check), [(EventsElsewhere, Warning)]);
        assert_eq!(run("bundles/healthy", check), []);
    }

    /// Issue 20: the listing is scoped to the events' namespace and to the uid they carry (kind
    /// and name only when they carry none), so it cannot list another team's object.
    #[test]
    fn the_listing_names_the_namespace_and_the_uid() {
        let places = [("store".to_string(), Some("u0".to_string())), ("ops".to_string(), None)];
        assert_eq!(
            list_commands("Microservice", "api", &places),
            [
                "kubectl get events -n store --field-selector involvedObject.uid=u0",
                "kubectl get events -n ops --field-selector involvedObject.kind=Microservice,involvedObject.name=api",
            ]
        );
    }
}
