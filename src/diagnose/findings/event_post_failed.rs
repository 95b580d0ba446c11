//! `event-post-failed`: the operator logged failed event POSTs and carried on. A 403 older than
//! the grant that fixed the events rule is `ok` (or a warning when nothing dates it); the fix says
//! how to check the grant and what posts again.

use std::collections::BTreeSet;

use chrono::{DateTime, Duration, Utc};

use super::event_posts::{
    after_the_grant, attempt_denied, denied_by_admission, post_attempt_lines, post_failure_lines, rbac_403,
    untied_attempt_lines, untied_post_failures,
};
use super::{Ctx, Line, finding};
use crate::diagnose::finding::{Finding, FindingId, Severity};
use crate::diagnose::rbac::{self, Account, Answer, Need, event_needs};
use crate::evidence::event_time;
use crate::evidence::operator::OperatorKind;
use crate::kopf::messages::EventPostFailure;
use crate::text::count;
use crate::time::rfc3339_millis;

/// `event-post-failed`: the object's failed event POSTs in the operator's log
/// ([`post_failure_lines`]), or Kopf's retries of them still going on ([`post_attempt_lines`]):
/// a problem, unless the events rule is granted now and the grant (or a later POST that went
/// through) dates every 403 before it. POSTs refused by admission (a webhook, a policy, a quota,
/// a terminating namespace, validation) are `event-post-denied`'s, not these: the grant timing
/// of RBAC says nothing about them. Only POSTs of this object's events count (issue 18 D3):
/// failed POSTs of the namespace that no line ties to an object are said as such, a warning,
/// when they are all there is ([`untied`]).
pub(crate) fn check(ctx: &Ctx<'_>) -> Vec<Finding> {
    let found: Vec<_> = post_failure_lines(ctx)
        .into_iter()
        .filter(|(_, f)| !denied_by_admission(f))
        .collect();
    let attempts: Vec<&Line> = post_attempt_lines(ctx)
        .into_iter()
        .filter(|l| attempt_denied(l).is_none())
        .collect();
    match found.iter().max_by_key(|(l, _)| l.record.time()) {
        Some((last, _)) => failed_posts(ctx, &found, last, &attempts),
        None if attempts.is_empty() => untied(ctx).into_iter().collect(),
        None => attempts_only(ctx, &attempts).into_iter().collect(),
    }
}

/// Failed event POSTs (and retries) of the object's namespace that no line ties to one object
/// (Kopf's lines name no object; the event's message is not, or not only, this object's
/// record's): not counted for the object, a warning that says so.
fn untied(ctx: &Ctx<'_>) -> Option<Finding> {
    let failures: Vec<_> = untied_post_failures(ctx)
        .into_iter()
        .filter(|(_, f, _)| !denied_by_admission(f))
        .collect();
    let attempts: Vec<_> = untied_attempt_lines(ctx)
        .into_iter()
        .filter(|(l, _)| attempt_denied(l).is_none())
        .collect();
    // Retries that stopped once the events rule was granted are history, whoever's they were.
    let fixed = Fixed::of(ctx);
    if failures.is_empty()
        && fixed.allowed_now.is_some()
        && attempts
            .iter()
            .all(|(l, _)| fixed.predates(l.record.time(), ctx.options.skew))
    {
        let lines: Vec<&Line> = attempts.iter().map(|(l, _)| *l).collect();
        return attempts_only(ctx, &lines);
    }
    let (last, why) = match (failures.last(), attempts.last()) {
        (Some((l, _, why)), _) => (*l, why),
        (None, Some((l, why))) => (*l, why),
        (None, None) => return None,
    };
    let what = match (failures.len(), attempts.len()) {
        (0, a) => count(a as u64, "failed request attempt"),
        (f, 0) => count(f as u64, "failed event POST"),
        (f, a) => format!(
            "{} ({})",
            count(f as u64, "failed event POST"),
            count(a as u64, "failed request attempt")
        ),
    };
    Some(finding(
        FindingId::EventPostFailed,
        Severity::Warning,
        format!(
            "the operator's log has {what} in namespace {} that no line ties to an object: not counted for {}",
            ctx.ns, ctx.key
        ),
        vec![format!("last: {} ({why})", last.cite())],
        Some(format!(
            "whose events failed is not in the log; if they are {}'s, see the error in the line: {}",
            ctx.key,
            ctx.logs_command()
        )),
    ))
}

/// Retries of a POST and no `Failed to post` line (yet): still retrying, unless they stopped
/// failing once the events rule was granted (a later POST went through, or the grant is newer
/// than every attempt): history, as a 403 given up is.
fn attempts_only(ctx: &Ctx<'_>, attempts: &[&Line]) -> Option<Finding> {
    let last = attempts.last()?;
    let fixed = Fixed::of(ctx);
    if fixed.allowed_now.is_some()
        && attempts
            .iter()
            .all(|l| fixed.predates(l.record.time(), ctx.options.skew))
    {
        let mut evidence = vec![format!("last attempt: {}", last.cite())];
        if let Some(how) = &fixed.allowed_now {
            evidence.push(format!("the events rule allows it now: {how}"));
        }
        if let Some((_, post)) = &fixed.last_post {
            evidence.push(format!("a later POST went through: {post}"));
        }
        return Some(finding(
            FindingId::EventPostFailed,
            Severity::Ok,
            format!(
                "the operator's event POSTs failed ({}) before the events rule was granted; none failed since",
                count(attempts.len() as u64, "attempt")
            ),
            evidence,
            None,
        ));
    }
    Some(finding(
        FindingId::EventPostFailed,
        Severity::Problem,
        format!(
            "the operator's event POSTs are failing ({}, still retrying)",
            count(attempts.len() as u64, "failed attempt")
        ),
        vec![format!("last attempt: {}", last.cite())],
        Some(format!(
            "see the error in the attempt line; for a 403 grant the events rule named by rbac-events, then {}",
            after_the_grant(ctx)
        )),
    ))
}

/// The failed POSTs `found` (`last` the latest): their count and codes, the retries before
/// them, the API's message; then whether the 403s among them predate a grant ([`dated_403s`]).
fn failed_posts(ctx: &Ctx<'_>, found: &[(&Line, EventPostFailure)], last: &Line, attempts: &[&Line]) -> Vec<Finding> {
    let codes: BTreeSet<String> = found
        .iter()
        .map(|(_, f)| f.code.map_or("no code".into(), |c| c.to_string()))
        .collect();
    let mut evidence = vec![
        format!(
            "{} in the operator's logs, codes: {}",
            count(found.len() as u64, "failed event POST"),
            codes.into_iter().collect::<Vec<_>>().join(", ")
        ),
        format!("last: {}", last.cite()),
    ];
    if let Some(a) = attempts.last() {
        evidence.push(format!(
            "{} before giving up (Kopf tries each POST up to 9 times); last: {}",
            count(attempts.len() as u64, "failed request attempt"),
            a.cite()
        ));
    }
    if let Some(message) = found.iter().rev().find_map(|(_, f)| f.message.clone()) {
        evidence.push(format!("API message: {message}"));
    }
    let forbidden: Vec<&Line> = found.iter().filter(|(_, f)| rbac_403(f)).map(|(l, _)| *l).collect();
    let title = format!(
        "the operator failed to post {}; it logged and ignored the failure",
        count(found.len() as u64, "event")
    );
    if forbidden.is_empty() {
        return vec![finding(
            FindingId::EventPostFailed,
            Severity::Problem,
            title,
            evidence,
            Some("the POSTs failed for a reason other than RBAC: check the API server's reachability from the operator Pod and its events quota".into()),
        )];
    }
    let others = found.len() - forbidden.len();
    vec![dated_403s(ctx, evidence, title, &forbidden, others)]
}

/// The 403s among the failed POSTs, against the fix of the events rule ([`Fixed`]): all older
/// than it is history (`ok`); allowed now but not dated before the grant, a warning; else a
/// problem whose fix is the grant. `others`: the failed POSTs that are not 403s.
fn dated_403s(ctx: &Ctx<'_>, mut evidence: Vec<String>, title: String, forbidden: &[&Line], others: usize) -> Finding {
    let fixed = Fixed::of(ctx);
    let skew = ctx.options.skew;
    let current = forbidden
        .iter()
        .filter(|l| !fixed.predates(l.record.time(), skew))
        .count();
    evidence.extend(fixed.dating());
    if fixed.allowed_now.is_some() && current == 0 && others == 0 {
        return finding(
            FindingId::EventPostFailed,
            Severity::Ok,
            format!(
                "the operator's {} failed with 403 before the events rule was granted; none failed since",
                count(forbidden.len() as u64, "event POST")
            ),
            evidence,
            None,
        );
    }
    if fixed.allowed_now.is_some() && others == 0 {
        // Allowed now, yet nothing dates the 403s before the grant (or some come after it).
        return finding(
            FindingId::EventPostFailed,
            Severity::Warning,
            undated_title(&fixed, forbidden.len(), current, skew),
            evidence,
            Some(after_the_grant(ctx)),
        );
    }
    finding(
        FindingId::EventPostFailed,
        Severity::Problem,
        title,
        evidence,
        Some(match fixed.allowed_now {
            // The rule allows the POSTs now (rbac-events ok): the 403s are not what to fix.
            Some(_) => format!(
                "the events rule allows the POSTs now (see rbac-events); {others} of them failed for a reason other than RBAC: check the API server's reachability from the operator Pod and its events quota, then {}",
                after_the_grant(ctx)
            ),
            None => format!(
                "grant the events rule named by rbac-events (the 403 above), then {}",
                after_the_grant(ctx)
            ),
        }),
    )
}

/// The title of 403s while the events rule allows the POSTs now, when nothing dates them all
/// before the grant: some after it (`current` of `forbidden`), within the skew of it, or nothing
/// dating the grant at all.
fn undated_title(fixed: &Fixed, forbidden: usize, current: usize, skew: Duration) -> String {
    if current < forbidden {
        format!(
            "{current} of the operator's 403s on event POSTs came after the events rule was granted: another namespace or ServiceAccount, or clocks apart?"
        )
    } else if fixed.granted.as_ref().is_some_and(|g| g.written.is_some()) || fixed.last_post.is_some() {
        format!(
            "the operator's {} failed with 403, but the events rule allows it now; the grant (or a later POST) is within the clock skew tolerance ({} s) of them, so which came first cannot be told",
            count(forbidden as u64, "event POST"),
            skew.num_seconds()
        )
    } else {
        format!(
            "the operator's {} failed with 403, but the events rule allows it now: probably granted since, though nothing in evidence dates the grant",
            count(forbidden as u64, "event POST")
        )
    }
}

/// What dates the operator's event-POST 403s against a fix of its RBAC: the events rule as it
/// is now, when the granting Role/binding was last written, and events the operator posted on
/// the object after the 403s (a POST that went through).
struct Fixed {
    /// The events rule allows the operator now, and how that was learned.
    allowed_now: Option<String>,
    /// The granting objects' latest write (API server clock), when the rules are in evidence.
    granted: Option<rbac::Grant>,
    /// The latest event the operator posted on the object: its time (API server clock) and a
    /// description.
    last_post: Option<(DateTime<Utc>, String)>,
}

impl Fixed {
    fn of(ctx: &Ctx<'_>) -> Fixed {
        let Some(op) = &ctx.operator else {
            return Fixed {
                allowed_now: None,
                granted: None,
                last_post: last_operator_post(ctx, None),
            };
        };
        let account = Account {
            namespace: &op.namespace,
            name: &op.service_account,
        };
        let (group, verbs) = event_needs(op.kind);
        let mut allowed = Vec::new();
        let mut granted: Option<rbac::Grant> = None;
        for verb in verbs {
            let need = Need {
                group,
                resource: "events",
                verb,
                namespace: ctx.ns,
                name: None,
            };
            match rbac::decide(&ctx.snapshot.rbac, account, need) {
                a @ (Answer::Reviewed { allowed: true, .. } | Answer::RulesAllow(_)) => allowed.push(a.method()),
                _ => {
                    allowed.clear();
                    break;
                }
            }
            let g = rbac::grant(&ctx.snapshot.rbac, account, need);
            granted = match (granted, g) {
                (Some(a), Some(b)) => Some(if b.written > a.written { b } else { a }),
                (a, b) => a.or(b),
            };
        }
        Fixed {
            allowed_now: (!allowed.is_empty()).then(|| allowed.join("; ")),
            granted,
            last_post: last_operator_post(ctx, Some(op.kind)),
        }
    }

    /// What dates the 403s, for evidence: the rule as it is now, the grant's last write, a
    /// later POST that went through.
    fn dating(&self) -> Vec<String> {
        let mut dating = Vec::new();
        if let Some(how) = &self.allowed_now {
            dating.push(format!("the events rule allows it now: {how}"));
        }
        if let Some(g) = &self.granted {
            dating.push(match g.written {
                Some(w) => format!(
                    "granted by {}, last written at {} (API server clock, managedFields/creationTimestamp)",
                    g.by,
                    crate::time::rfc3339_seconds(w)
                ),
                None => format!("granted by {} (no write time in evidence)", g.by),
            });
        }
        if let Some((_, post)) = &self.last_post {
            dating.push(format!("a later POST went through: {post}"));
        }
        dating
    }

    /// Whether a 403 logged at `t` (operator clock) is older than the fix: before the grant's
    /// last write, or followed by a POST that went through (less the skew either way).
    fn predates(&self, t: Option<DateTime<Utc>>, skew: Duration) -> bool {
        let Some(t) = t else { return false };
        self.granted
            .as_ref()
            .and_then(|g| g.written)
            .is_some_and(|w| t + skew < w)
            || self.last_post.as_ref().is_some_and(|(p, _)| t + skew < *p)
    }
}

/// The latest event on the object posted by the operator (Kopf: `reportingComponent`/
/// `source.component` `kopf`; ours: `kubectl-microservice`; either when the kind is unknown).
fn last_operator_post(ctx: &Ctx<'_>, kind: Option<OperatorKind>) -> Option<(DateTime<Utc>, String)> {
    let names: &[&str] = match kind {
        Some(OperatorKind::Kopf) => &["kopf"],
        Some(OperatorKind::Ours) => &[crate::resource::FIELD_MANAGER],
        None => &["kopf", crate::resource::FIELD_MANAGER],
    };
    ctx.own_events
        .iter()
        .filter(|e| {
            let by = e
                .reporting_component
                .as_deref()
                .filter(|c| !c.is_empty())
                .or(e.source.as_ref().and_then(|s| s.component.as_deref()));
            by.is_some_and(|b| names.contains(&b))
        })
        .filter_map(|e| {
            let t = event_time(e)?;
            Some((
                t,
                format!(
                    "event {} type {} reason {} at {} (API server clock): {}",
                    e.metadata.name.as_deref().unwrap_or("?"),
                    e.type_.as_deref().unwrap_or("<none>"),
                    e.reason.as_deref().unwrap_or("<none>"),
                    rfc3339_millis(t),
                    e.message.as_deref().unwrap_or("").chars().take(120).collect::<String>()
                ),
            ))
        })
        .max_by_key(|(t, _)| *t)
}

#[cfg(test)]
mod tests {
    use super::super::ctx::fixture::run;
    use super::*;
    use crate::diagnose::finding::FindingId::*;
    use crate::diagnose::finding::Severity::*;

    /// The 403s of a real log are `event-post-failed`; a log without failed POSTs says nothing.
    #[test]
    fn failed_posts_in_the_log_are_found() {
        assert_eq!(run("bundles/ours-style-rbac", check), [(EventPostFailed, Problem)]);
        assert_eq!(
            run("bundles-synthetic/rbac-events-403-in-logs", check),
            [(EventPostFailed, Problem)]
        );
        assert_eq!(run("bundles/healthy", check), []);
    }

    /// Kopf's lines of one operator serving `team-alpha`, whose event POSTs all fail with 403:
    /// `a`'s and `b`'s records, then the failed POSTs of their events (Kopf's line names no
    /// object; the event's message is the record's), one whose message both objects logged.
    fn two_objects() -> (crate::evidence::Snapshot, Vec<crate::resource::MicroserviceObject>) {
        use crate::evidence::Evidence;
        use crate::evidence::resolve::tests::{deployment, snapshot};
        use serde_json::json;
        let mut s = snapshot(vec![deployment(
            "team-alpha",
            "kopf-op",
            json!(["kopf", "run", "--namespace=team-alpha", "/src/op.py"]),
        )]);
        s.namespace = Some("team-alpha".into());
        s.operator.pods = Evidence::Present(vec![
            serde_json::from_value(json!({"metadata": {"name": "kopf-op-5d7f9c8b4-bbbbb", "namespace": "team-alpha", "labels": {"app": "kopf-op"}}}))
                .unwrap(),
        ]);
        let attempt = |t: &str| {
            format!(
                "[2026-12-01 08:50:{t},000] kopf._core.engines.p [ERROR   ] Request attempt #1/9 failed; will retry: POST https://kubernetes.default.svc/api/v1/namespaces/team-alpha/events -> APIForbiddenError('events is forbidden: User \"system:serviceaccount:team-alpha:default\" cannot create resource \"events\" in API group \"\" in the namespace \"team-alpha\"', {{'code': 403}})\n"
            )
        };
        // Python's repr of the event's message: in double quotes when it holds a single one.
        let failed = |t: &str, message: &str| {
            let message = if message.contains('\'') {
                format!("\"{message}\"")
            } else {
                format!("'{message}'")
            };
            format!(
                "[2026-12-01 08:50:{t},000] kopf._core.engines.p [WARNING ] Failed to post an event. Ignoring and continuing. Code: 403. Message: events is forbidden: User \"system:serviceaccount:team-alpha:default\" cannot create resource \"events\" in API group \"\" in the namespace \"team-alpha\". Details: {{'kind': 'events'}}Event: type='Normal', reason='Logging', message={message}.\n"
            )
        };
        let text = [
            "[2026-12-01 08:50:00,000] kopf.objects         [INFO    ] [team-alpha/a] Accepted team-alpha/a: image=x port=80\n".to_string(),
            "[2026-12-01 08:50:00,001] kopf.objects         [INFO    ] [team-alpha/b] Accepted team-alpha/b: image=y port=80\n".to_string(),
            "[2026-12-01 08:50:00,002] kopf.objects         [INFO    ] [team-alpha/a] Handler 'accept' succeeded.\n".to_string(),
            "[2026-12-01 08:50:00,003] kopf.objects         [INFO    ] [team-alpha/b] Handler 'accept' succeeded.\n".to_string(),
            attempt("01"),
            failed("02", "Accepted team-alpha/a: image=x port=80"),
            attempt("03"),
            failed("04", "Accepted team-alpha/b: image=y port=80"),
            attempt("05"),
            failed("06", "Accepted team-alpha/b: image=y port=80"),
            attempt("07"),
            failed("08", "Handler 'accept' succeeded."),
        ]
        .concat();
        s.operator.logs = Evidence::Present(vec![crate::logs::LogSource {
            pod: "kopf-op-5d7f9c8b4-bbbbb".into(),
            container: "operator".into(),
            previous: false,
            text,
        }]);
        let obj = |name: &str| -> crate::resource::MicroserviceObject {
            serde_json::from_value(json!({
                "apiVersion": "platform.example.io/v1alpha1", "kind": "Microservice",
                "metadata": {"name": name, "namespace": "team-alpha", "uid": format!("u-{name}"), "generation": 1,
                             "creationTimestamp": "2026-12-01T08:40:00Z"},
                "spec": {"image": "x", "port": 80},
                "status": {"phase": "Accepted", "observedGeneration": 1}
            }))
            .unwrap()
        };
        (s, vec![obj("a"), obj("b"), obj("c")])
    }

    /// Issue 18 D3: each object's `event-post-failed` counts the failed POSTs of its own
    /// events only (and the retries before them): `a` 1, `b` 2; the POST whose event's message
    /// both logged is neither's; `c`, whose records are not in the log, gets no failed POST of
    /// theirs, only a warning that the namespace has POSTs no line ties to an object.
    #[test]
    fn each_object_counts_the_failed_posts_of_its_own_events() {
        let (s, objects) = two_objects();
        let titles: Vec<(Severity, String, Vec<String>)> = objects
            .iter()
            .map(|o| {
                let ctx = Ctx::new(&s, o, super::super::ctx::Options::default());
                let found = check(&ctx);
                assert_eq!(found.len(), 1, "{}: {found:?}", o.key());
                (found[0].severity, found[0].title.clone(), found[0].evidence.clone())
            })
            .collect();
        assert!(titles[0].1.contains("failed to post 1 event;"), "{:?}", titles[0]);
        assert!(
            titles[0]
                .2
                .iter()
                .any(|e| e.contains("1 failed request attempt before giving up")),
            "{:?}",
            titles[0]
        );
        assert!(titles[1].1.contains("failed to post 2 events;"), "{:?}", titles[1]);
        assert!(
            titles[1]
                .2
                .iter()
                .any(|e| e.contains("2 failed request attempts before giving up")),
            "{:?}",
            titles[1]
        );
        assert_eq!(titles[2].0, Warning, "{:?}", titles[2]);
        assert!(
            titles[2].1.contains("1 failed event POST (1 failed request attempt) in namespace team-alpha that no line ties to an object: not counted for team-alpha/c"),
            "{:?}",
            titles[2]
        );
        assert!(
            titles[2].2[0].contains("2 records of objects say its event's message"),
            "{:?}",
            titles[2]
        );
    }
}
