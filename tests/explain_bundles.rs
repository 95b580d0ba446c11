//! `explain-events` on bundles. Each folder of tests/fixtures/bundles (real captures, copied from
//! ../shared/fixtures/bundles), tests/fixtures/bundles-captured (real captures of our own, README
//! there) and tests/fixtures/bundles-synthetic (real material with a few
//! listed edits, marked by SYNTHETIC.md) carries an expected.json naming the findings it must and
//! must not give, their severities, the exit code and the evidence words (README in each folder).
//! Also: every Contracts finding id is proven by some bundle, synthetic bundles are checked to be
//! their real source plus the listed edits, the exit codes through the binary, the rendered
//! outputs pinned with colour off (tests/snapshots; `UPDATE_SNAPSHOTS=1` rewrites them), and the
//! scenarios of ../shared/fixtures/kopf-1.38-real.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use kubectl_microservice::commands::explain_events::{render_report, report};
use kubectl_microservice::diagnose::events::{Finding, FindingId, Options, Report, Severity};
use kubectl_microservice::evidence::{Evidence, GapReason, bundle};
use kubectl_microservice::render::OutputFormat;
use serde_json::Value;

#[path = "support/kubeconfig.rs"]
mod kubeconfig;
mod support;
use support::{check_snapshot, copy_dir, fixtures, global};

const BIN: &str = env!("CARGO_BIN_EXE_kubectl-microservice");

/// The report on `store/NAME` (the shared bundles' namespace).
fn explain(dir: &Path, name: &str) -> Report {
    explain_in(dir, "store", name)
}

fn explain_in(dir: &Path, namespace: &str, name: &str) -> Report {
    let snapshot = bundle::read(dir).unwrap();
    report(&snapshot, namespace, name, Options::default()).unwrap()
}

fn find<'a>(report: &'a Report, id: &str) -> Option<&'a Finding> {
    report
        .findings
        .iter()
        .find(|f| f.id.as_str() == id && f.severity > Severity::Ok)
}

fn expected(dir: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap()
}

/// The bundle folders under tests/fixtures/`folder`, sorted.
fn bundles_in(folder: &str) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = fs::read_dir(fixtures().join(folder))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

/// Every bundle: shared real captures, our own real captures, synthetic.
fn all_bundles() -> Vec<PathBuf> {
    [
        bundles_in("bundles"),
        bundles_in("bundles-captured"),
        bundles_in("bundles-synthetic"),
    ]
    .concat()
}

fn strings(v: &Value) -> impl Iterator<Item = &str> {
    v.as_array().into_iter().flatten().map(|s| s.as_str().unwrap())
}

fn severity(name: &str) -> Severity {
    match name {
        "ok" => Severity::Ok,
        "warning" => Severity::Warning,
        "problem" => Severity::Problem,
        other => panic!("severity {other:?}: expected ok, warning or problem"),
    }
}

/// Checks `dir` against its expected.json (schema: tests/fixtures/bundles/README.md).
fn check_bundle(dir: &Path) {
    let d = dir.display();
    let expected = expected(dir);
    let (namespace, name) = expected["object"].as_str().unwrap().split_once('/').unwrap();
    let report = explain_in(dir, namespace, name);
    let ids: Vec<(&str, Severity)> = report.findings.iter().map(|f| (f.id.as_str(), f.severity)).collect();
    for id in strings(&expected["explain_must"]) {
        assert!(find(&report, id).is_some(), "{d}: must find {id}, got {ids:?}");
    }
    for id in strings(&expected["explain_must_not"]) {
        assert!(
            !report
                .findings
                .iter()
                .any(|f| f.id.as_str() == id && f.severity == Severity::Problem),
            "{d}: must not find {id} as a problem, got {ids:?}"
        );
    }
    if let Some(map) = expected["explain_severity"].as_object() {
        for (id, want) in map {
            let want = severity(want.as_str().unwrap());
            let got: Vec<Severity> = report
                .findings
                .iter()
                .filter(|f| f.id.as_str() == id)
                .map(|f| f.severity)
                .collect();
            assert_eq!(got, vec![want], "{d}: {id}, got {ids:?}");
        }
        // The map names every finding above ok: nothing else is raised (no false alarm).
        for f in report.findings.iter().filter(|f| f.severity > Severity::Ok) {
            assert!(
                map.contains_key(f.id.as_str()),
                "{d}: unexpected {} {:?}: {}",
                f.id.as_str(),
                f.severity,
                f.title
            );
        }
    }
    assert_eq!(
        i64::from(report.exit_code()),
        expected["explain_exit"].as_i64().unwrap(),
        "{d}: {ids:?}"
    );
    if expected["explain_exit"] == 0 {
        assert!(
            report.findings.iter().all(|f| f.severity == Severity::Ok),
            "{d}: a healthy bundle raised {ids:?}"
        );
    }
    for want in expected["explain_evidence"].as_array().into_iter().flatten() {
        let id = want["id"].as_str().unwrap();
        let f = find(&report, id)
            .or_else(|| report.findings.iter().find(|f| f.id.as_str() == id))
            .unwrap_or_else(|| panic!("{d}: no {id} finding for its evidence, got {ids:?}"));
        let text = f.evidence.join("\n");
        for word in strings(&want["mentions"]) {
            assert!(text.contains(word), "{d}: {id}: {word:?} not in evidence:\n{text}");
        }
        if let (Some(file), Some(line)) = (want["file"].as_str(), want["line"].as_i64()) {
            assert!(
                text.contains(&format!("{file}:{line}")),
                "{d}: {id}: {file}:{line} not in {text}"
            );
        }
        for word in strings(&want["title_mentions"]) {
            assert!(f.title.contains(word), "{d}: {id}: {word:?} not in title {:?}", f.title);
        }
        let fix = f.fix.as_deref().unwrap_or("");
        for word in strings(&want["fix_mentions"]) {
            assert!(fix.contains(word), "{d}: {id}: {word:?} not in fix:\n{fix}");
        }
        // A fix that cannot achieve its goal when pasted is never suggested (issue 11).
        for word in strings(&want["fix_lacks"]) {
            assert!(!fix.contains(word), "{d}: {id}: {word:?} in fix:\n{fix}");
        }
    }
    // The operator the findings are about, as the resolver named it (tests/operator_agreement.rs
    // holds every command to the same name).
    if let Some(want) = expected["operator"].as_str() {
        assert_eq!(report.operator_resolution.label(), want, "{d}: the named operator");
    }
    // The first finding, which the headline states (and `status`'s first reason when it bears
    // on the verdict).
    if let Some(first) = expected["explain_first"].as_str() {
        assert_eq!(
            report.findings.first().map(|f| f.id.as_str()),
            Some(first),
            "{d}: first finding, got {ids:?}"
        );
    }
    for word in strings(&expected["explain_summary"]) {
        assert!(
            report.summary.contains(word),
            "{d}: {word:?} not in summary {:?}",
            report.summary
        );
    }
}

#[test]
fn every_bundle_gives_its_expected_findings() {
    assert_eq!(bundles_in("bundles").len(), 6);
    assert_eq!(bundles_in("bundles-captured").len(), 53);
    assert!(bundles_in("bundles-synthetic").len() >= 12);
    for dir in all_bundles() {
        check_bundle(&dir);
    }
}

/// Issue 11 item 4, captured live: Kopf's final PATCH is refused (nolar/kopf#1087). The headline
/// and the first finding name the 422 and its cause, as `status`'s first reason does.
#[test]
fn a_rejected_patch_is_the_headline() {
    let dir = fixtures().join("bundles-captured/kopf-patch-rejected-annotations");
    for name in ["big-api", "grown-api"] {
        let report = explain_in(&dir, "kms-k11k-annot", name);
        let first = &report.findings[0];
        assert_eq!(
            (first.id.as_str(), first.severity),
            ("patch-rejected", Severity::Problem),
            "{name}"
        );
        assert!(
            report.summary.contains("never completes") && report.summary.contains("422 Invalid"),
            "{name}: {}",
            report.summary
        );
        assert_eq!(report.exit_code(), 1);
    }
}

/// Issue 11 item 10, captured live: the 403s of event POSTs are older than the fix of the events
/// rule. They do not keep `event-post-failed` a problem; what dates them is shown; without
/// anything that dates them the answer says so (a warning); denied now, a problem.
#[test]
fn event_post_403s_older_than_the_rbac_fix_are_history() {
    let dir = fixtures().join("bundles-captured/kopf-events-403-then-granted");
    let severity_of = |edit: &dyn Fn(&mut kubectl_microservice::evidence::Snapshot)| {
        let mut snapshot = bundle::read(&dir).unwrap();
        edit(&mut snapshot);
        let r = report(&snapshot, "kms-k11k-rbac", "orders-api", Options::default()).unwrap();
        let f = r
            .findings
            .iter()
            .find(|f| f.id.as_str() == "event-post-failed")
            .unwrap()
            .clone();
        (f.severity, f.title, f.fix.unwrap_or_default())
    };
    assert_eq!(severity_of(&|_| {}).0, Severity::Ok);
    // Without the events posted later, the Role's write (managedFields) still dates them.
    let no_events = |s: &mut kubectl_microservice::evidence::Snapshot| s.events = Evidence::Present(Vec::new());
    assert_eq!(severity_of(&no_events).0, Severity::Ok);
    // Nothing dates them: allowed now, but the answer cannot say when it was granted.
    let undated = |s: &mut kubectl_microservice::evidence::Snapshot| {
        no_events(s);
        if let Evidence::Present(roles) = &mut s.rbac.roles {
            for r in roles {
                r.metadata.managed_fields = None;
                r.metadata.creation_timestamp = None;
            }
        }
        if let Evidence::Present(bindings) = &mut s.rbac.role_bindings {
            for b in bindings {
                b.metadata.managed_fields = None;
                b.metadata.creation_timestamp = None;
            }
        }
    };
    let (sev, title, fix) = severity_of(&undated);
    assert_eq!(sev, Severity::Warning, "{title}");
    assert!(title.contains("nothing in evidence dates the grant"), "{title}");
    assert!(!fix.contains("restart the operator"), "{fix}");
    // Denied now (the review as before the fix): a problem, and the fix says what a grant brings.
    let denied = |s: &mut kubectl_microservice::evidence::Snapshot| {
        if let Evidence::Present(reviews) = &mut s.rbac.access_reviews {
            for r in reviews {
                if let Some(st) = r.status.as_mut() {
                    st.allowed = false;
                }
            }
        }
        s.rbac.roles = Evidence::missing("Roles", GapReason::NotInBundle("rbac/roles.json".into()));
    };
    let (sev, _, fix) = severity_of(&denied);
    assert_eq!(sev, Severity::Problem);
    assert!(
        fix.contains(
            "kubectl auth can-i create events -n kms-k11k-rbac --as=system:serviceaccount:kms-k11k-rbac:kopf-operator"
        ) && fix.contains("events that failed before are not posted again")
            && !fix.contains("restart the operator"),
        "{fix}"
    );
}

/// Issue 11 trial C: handler errors with no event while the operator may not create events. The
/// captured bundle as it was before the grant (the Role without the events rule, the review
/// denied, none of the events posted after the grant): `errors-not-posted` names the refused
/// POSTs (`rbac-events`) and gives its fix, not posting.level or the event TTL.
#[test]
fn errors_not_posted_names_the_refused_event_posts() {
    let dir = fixtures().join("bundles-captured/trial-kopf-events-rbac-removed");
    let mut snapshot = bundle::read(&dir).unwrap();
    if let Evidence::Present(reviews) = &mut snapshot.rbac.access_reviews {
        for r in reviews {
            let core_events = r.spec.resource_attributes.as_ref().is_some_and(|a| {
                a.resource.as_deref() == Some("events") && a.group.as_deref().unwrap_or("").is_empty()
            });
            if let Some(st) = r.status.as_mut().filter(|_| core_events) {
                st.allowed = false;
            }
        }
    }
    if let Evidence::Present(roles) = &mut snapshot.rbac.roles {
        for role in roles {
            if let Some(rules) = role.rules.as_mut() {
                rules.retain(|r| !r.resources.iter().flatten().any(|x| x == "events"));
            }
        }
    }
    if let Evidence::Present(events) = &mut snapshot.events {
        events.retain(|e| e.type_.as_deref() != Some("Error"));
    }
    let r = report(&snapshot, "kms-tr-norbac", "retry-api", Options::default()).unwrap();
    let find = |id: &str| r.findings.iter().find(|f| f.id.as_str() == id).unwrap();
    assert_eq!(find("rbac-events").severity, Severity::Problem, "{:?}", r.findings);
    let f = find("errors-not-posted");
    assert_eq!(f.severity, Severity::Problem, "{f:?}");
    assert!(
        f.title.contains("may not create events (see rbac-events)"),
        "{}",
        f.title
    );
    let fix = f.fix.as_deref().unwrap();
    assert!(
        !fix.contains("check posting.level") && !fix.contains("--event-ttl"),
        "{fix}"
    );
    assert!(fix.starts_with("rbac-events's fix"), "{fix}");
    assert!(fix.contains(find("rbac-events").fix.as_deref().unwrap()), "{fix}");
    // Unedited (granted before the capture, the failures posted since): nothing unposted.
    let r = report(
        &bundle::read(&dir).unwrap(),
        "kms-tr-norbac",
        "retry-api",
        Options::default(),
    )
    .unwrap();
    let f = r
        .findings
        .iter()
        .find(|f| f.id.as_str() == "errors-not-posted")
        .unwrap();
    assert_eq!(f.severity, Severity::Ok, "{f:?}");
}

/// A real Kopf 1.38 operator added its finalizer, was removed, and the object was deleted: the
/// first finding is `deletion-pending` (what `status` says: `terminating`), with the guarded patch,
/// and the deletion's generation bump is not `accepted-stale`.
#[test]
fn a_kopf_finalizer_left_behind_is_the_first_finding() {
    let dir = fixtures().join("bundles-captured/kopf-finalizer-terminating");
    let report = explain_in(&dir, "kms-i11-terminating", "todo-api");
    let first = &report.findings[0];
    assert_eq!(
        (first.id.as_str(), first.severity),
        ("deletion-pending", Severity::Problem)
    );
    assert!(
        first.title.contains("kopf.zalando.org/KopfFinalizerMarker"),
        "{}",
        first.title
    );
    assert!(
        first.fix.as_deref().unwrap_or("").contains(
            r#"kubectl -n kms-i11-terminating patch microservice todo-api --type=json -p '[{"op":"test","path":"/metadata/finalizers/0","value":"kopf.zalando.org/KopfFinalizerMarker"},{"op":"remove","path":"/metadata/finalizers/0"}]'"#
        ),
        "{:?}",
        first.fix
    );
    assert!(report.summary.contains("Terminating"), "{}", report.summary);
    assert!(find(&report, "accepted-stale").is_none());
}

/// Every id is a must (a problem or warning) of some bundle, or pinned by `explain_severity`
/// (an `ok` that explains, as `handler-filtered`'s "not handled by design", is pinned there).
#[test]
fn every_finding_id_is_a_must_of_some_bundle() {
    let mut proven = BTreeSet::new();
    for dir in all_bundles() {
        let expected = expected(&dir);
        let pinned = expected["explain_severity"]
            .as_object()
            .into_iter()
            .flat_map(|m| m.keys().map(String::as_str));
        for id in strings(&expected["explain_must"]).chain(pinned) {
            assert!(
                FindingId::ALL.iter().any(|known| *known == id),
                "{}: unknown finding id {id}",
                dir.display()
            );
            proven.insert(id.to_string());
        }
    }
    let missing: Vec<&str> = FindingId::ALL
        .iter()
        .map(|id| id.as_str())
        .filter(|id| !proven.contains(*id))
        .collect();
    assert!(missing.is_empty(), "no bundle must find {missing:?}");
}

/// Relative paths of the files under `dir`.
fn files(dir: &Path) -> BTreeSet<String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeSet<String>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                out.insert(path.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/"));
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(dir, dir, &mut out);
    out
}

#[test]
fn synthetic_bundles_are_real_material_plus_the_listed_edits() {
    for dir in bundles_in("bundles-synthetic") {
        let d = dir.display();
        let marker = fs::read_to_string(dir.join("SYNTHETIC.md")).unwrap_or_else(|_| panic!("{d}: no SYNTHETIC.md"));
        let expected = expected(&dir);
        let synthetic = &expected["synthetic"];
        let from = synthetic["derived_from"]
            .as_str()
            .unwrap_or_else(|| panic!("{d}: no synthetic.derived_from"));
        assert!(
            !from.starts_with("bundles-synthetic"),
            "{d}: derive from real material, not from {from}"
        );
        assert!(
            marker.contains("SYNTHETIC") && marker.contains(from),
            "{d}: SYNTHETIC.md must name {from}"
        );
        let source = fixtures().join(from);
        let edited: BTreeSet<&str> = strings(&synthetic["edited"]).collect();
        let removed: BTreeSet<&str> = strings(&synthetic["removed"]).collect();
        let ours = files(&dir);
        let theirs = files(&source);
        for file in &ours {
            if file == "SYNTHETIC.md" || file == "expected.json" {
                continue;
            }
            let mine = fs::read(dir.join(file)).unwrap();
            let real = fs::read(source.join(file)).ok();
            if edited.contains(file.as_str()) {
                assert_ne!(
                    Some(&mine),
                    real.as_ref(),
                    "{d}: {file} is listed as edited but is unchanged"
                );
            } else {
                assert!(
                    real.as_ref() == Some(&mine),
                    "{d}: {file} differs from {from}/{file} and is not listed as edited"
                );
            }
        }
        for file in &theirs {
            if file == "expected.json" {
                continue;
            }
            assert_eq!(
                ours.contains(file),
                !removed.contains(file.as_str()),
                "{d}: {from}/{file}: present here unless listed as removed"
            );
        }
        for file in edited.iter().chain(&removed) {
            assert!(
                ours.contains(*file) || theirs.contains(*file),
                "{d}: {file} is listed but exists in neither bundle"
            );
        }
    }
}

#[test]
fn the_healthy_bundle_has_no_warning_and_checks_what_it_can() {
    let report = explain(&fixtures().join("bundles/healthy"), "catalog-api");
    assert!(
        report.findings.iter().all(|f| f.severity == Severity::Ok),
        "{:?}",
        report.findings
    );
    let checked: Vec<&str> = report.findings.iter().map(|f| f.id.as_str()).collect();
    assert!(checked.contains(&"rbac-events") && checked.contains(&"operator-not-running"));
    assert!(
        report.summary.starts_with("Nothing is hidden: 3 events"),
        "{}",
        report.summary
    );
}

#[test]
fn ours_style_rbac_names_the_missing_rule_and_the_403_line() {
    let report = explain(&fixtures().join("bundles/ours-style-rbac"), "catalog-api");
    let rbac = find(&report, "rbac-events").unwrap();
    assert_eq!(rbac.severity, Severity::Problem);
    assert!(
        rbac.evidence[0].contains("SubjectAccessReview: denied"),
        "{:?}",
        rbac.evidence
    );
    let fix = rbac.fix.as_deref().unwrap();
    assert!(fix.contains("Role store/catalog-operator"), "{fix}");
    assert!(
        fix.contains("apiGroups: [\"events.k8s.io\"]") && fix.contains("verbs: [\"create\", \"patch\"]"),
        "{fix}"
    );
    let post = find(&report, "event-post-failed").unwrap();
    assert!(
        post.evidence[0].starts_with("1 failed event POST in the operator's logs"),
        "{:?}",
        post.evidence
    );
    assert!(
        post.evidence[1].contains("2026-11-29T17:15:53.389Z (operator's clock)"),
        "{:?}",
        post.evidence
    );
}

// ---- what a bundle folder cannot say: other options, missing evidence ---------------------------

fn explain_with(dir: &Path, name: &str, event_ttl: chrono::Duration) -> Report {
    let options = Options {
        event_ttl,
        ..Options::default()
    };
    report(&bundle::read(dir).unwrap(), "store", name, options).unwrap()
}

#[test]
fn the_event_ttl_decides_what_expired() {
    let dir = fixtures().join("bundles-synthetic/events-expired");
    // With a 3h TTL the Error event Kopf 1.38 posts would still exist: its absence is the problem.
    let r = explain_with(&dir, "pricing-api", chrono::Duration::hours(3));
    assert!(find(&r, "events-expired").is_none(), "{:?}", r.findings);
    let f = find(&r, "errors-not-posted").unwrap();
    assert_eq!(f.severity, Severity::Problem);
    assert!(
        f.title.contains("although Kopf 1.38 posts them by default"),
        "{}",
        f.title
    );
}

#[test]
fn kopf_1_44_failures_are_unposted_even_once_their_events_would_have_expired() {
    // The version proves them unposted; the expired TTL does not excuse them. Never posted, they
    // did not expire either: no `events-expired` beside it (issue 18 trial P5), the problem
    // says so of the old failures.
    let dir = fixtures().join("bundles-synthetic/kopf-1.44-errors-not-posted");
    let r = explain_with(&dir, "basket-api", chrono::Duration::seconds(1));
    assert!(find(&r, "events-expired").is_none(), "{:?}", r.findings);
    let f = find(&r, "errors-not-posted").unwrap();
    assert_eq!(f.severity, Severity::Problem);
    assert!(
        f.evidence
            .iter()
            .any(|e| e.contains("events-expired left out: they were never posted")),
        "{:?}",
        f.evidence
    );
    assert!(
        f.title.contains("Kopf 1.44 does not post log records by default"),
        "{}",
        f.title
    );
}

#[test]
fn without_operator_logs_nothing_found_is_undecided() {
    let mut snapshot = bundle::read(&fixtures().join("bundles/healthy")).unwrap();
    snapshot.operator.logs = Evidence::missing("operator logs", GapReason::NotInBundle("operator/logs".into()));
    let r = report(&snapshot, "store", "catalog-api", Options::default()).unwrap();
    assert_eq!(r.exit_code(), 3, "{:?}", r.findings);
}

/// Events that cannot be read are not "no events": failures are then not called unposted, except
/// where the setting or the Kopf version proves it without looking at events.
#[test]
fn unreadable_events_are_not_taken_for_no_events() {
    let forbidden = || {
        Evidence::missing(
            "events",
            GapReason::Forbidden(
                "events is forbidden: User \"dev@example.com\" cannot list resource \"events\"".into(),
            ),
        )
    };
    // A conditional setting (its env not in evidence: the Deployment's env removed) and 8
    // failures: only a warning that it cannot be checked.
    let mut snapshot = bundle::read(&fixtures().join("bundles/conditional-posting")).unwrap();
    snapshot.events = forbidden();
    without_env(&mut snapshot);
    let r = report(&snapshot, "store", "basket-api", Options::default()).unwrap();
    let f = r
        .findings
        .iter()
        .find(|f| f.id.as_str() == "errors-not-posted")
        .unwrap();
    assert_eq!(f.severity, Severity::Warning, "{f:?}");
    assert!(
        f.evidence[0].ends_with("its events could not be read"),
        "{:?}",
        f.evidence
    );
    assert!(
        f.evidence.iter().any(|e| e.contains("undecidable, line 11")),
        "{:?}",
        f.evidence
    );
    assert!(
        !r.findings
            .iter()
            .any(|f| f.evidence.iter().any(|e| e.contains("0 Warning/Error event")))
    );
    // Kopf 1.44 does not post log records by default: unposted whatever the events say.
    let mut snapshot = bundle::read(&fixtures().join("bundles-synthetic/kopf-1.44-errors-not-posted")).unwrap();
    snapshot.events = forbidden();
    let r = report(&snapshot, "store", "basket-api", Options::default()).unwrap();
    let f = r
        .findings
        .iter()
        .find(|f| f.id.as_str() == "errors-not-posted")
        .unwrap();
    assert_eq!(f.severity, Severity::Problem, "{f:?}");
    // A healthy operator without failures: nothing to say about posting.
    let mut snapshot = bundle::read(&fixtures().join("bundles/healthy")).unwrap();
    snapshot.events = forbidden();
    let r = report(&snapshot, "store", "catalog-api", Options::default()).unwrap();
    assert!(
        r.findings
            .iter()
            .all(|f| f.id.as_str() != "errors-not-posted" || f.severity == Severity::Ok),
        "{:?}",
        r.findings
    );
    // Without its events and without any finding, the summary does not count "0 events".
    let mut snapshot = bundle::read(&fixtures().join("bundles/healthy")).unwrap();
    snapshot.events = Evidence::missing("events", GapReason::NotInBundle("events.json".into()));
    let r = report(&snapshot, "store", "catalog-api", Options::default()).unwrap();
    assert_eq!(
        r.summary, "Nothing found hidden, but the events could not be read",
        "{:?}",
        r.findings
    );
    assert_eq!(r.exit_code(), 3);
}

/// Drops the operator containers' env from a snapshot's Deployments (what a condition on
/// `os.environ` then depends on is not in evidence).
fn without_env(snapshot: &mut kubectl_microservice::evidence::Snapshot) {
    if let Evidence::Present(deployments) = &mut snapshot.operator.deployments {
        for d in deployments {
            for c in d
                .spec
                .as_mut()
                .unwrap()
                .template
                .spec
                .as_mut()
                .unwrap()
                .containers
                .iter_mut()
            {
                c.env = None;
            }
        }
    }
}

/// Issue 11 item 11: the same condition, its variable from a Secret (never collected): still
/// undecidable, and the answer names that input instead of "check its inputs".
#[test]
fn an_env_condition_on_a_secret_stays_undecidable_and_names_it() {
    let mut snapshot = bundle::read(&fixtures().join("bundles/conditional-posting")).unwrap();
    if let Evidence::Present(deployments) = &mut snapshot.operator.deployments {
        for d in deployments {
            for c in d
                .spec
                .as_mut()
                .unwrap()
                .template
                .spec
                .as_mut()
                .unwrap()
                .containers
                .iter_mut()
            {
                c.env = Some(vec![
                    serde_json::from_value(serde_json::json!({"name": "KOPF_POSTING",
                    "valueFrom": {"secretKeyRef": {"name": "op-secret", "key": "posting"}}}))
                    .unwrap(),
                ]);
            }
        }
    }
    let r = report(&snapshot, "store", "basket-api", Options::default()).unwrap();
    let f = find(&r, "errors-not-posted").unwrap();
    let fix = f.fix.as_deref().unwrap();
    assert!(
        fix.contains(
            "check its input (KOPF_POSTING comes from Secret op-secret key posting, whose value is never collected)"
        ),
        "{fix}"
    );
    assert!(find(&r, "posting-disabled").is_none());
}

// ---- the operator's Kopf source, read on its syntax tree ---------------------------------------

/// bundles/conditional-posting (real: Kopf 1.38 pinned, 8 hidden handler failures) with its
/// mounted operator.py replaced by `source`.
fn conditional_posting_with_source(source: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&fixtures().join("bundles/conditional-posting"), tmp.path());
    let path = tmp.path().join("operator/configmaps.json");
    let mut list: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    list["items"][0]["data"]["operator.py"] = Value::String(source.into());
    fs::write(&path, list.to_string()).unwrap();
    tmp
}

const HANDLER: &str = "\n\n@kopf.on.create('platform.example.io', 'v1alpha1', 'microservices')\ndef accept(logger, **_):\n    raise kopf.TemporaryError('registry unreachable', delay=5)\n";

/// `settings.posting.loggers` is a bool (Kopf ≥ 1.41): False hides handler errors whatever the
/// version's default; True is named as what should have posted them.
#[test]
fn kopf_source_posting_loggers_by_its_value() {
    let with = |value: &str| {
        let src = format!(
            "import kopf\n\n@kopf.on.startup()\ndef configure(settings, **_):\n    settings.posting.loggers = {value}\n{HANDLER}"
        );
        let tmp = conditional_posting_with_source(&src);
        explain(tmp.path(), "basket-api")
    };
    let off = with("False");
    let f = find(&off, "errors-not-posted").unwrap();
    assert_eq!(f.severity, Severity::Problem);
    assert_eq!(
        f.title,
        "handler errors are only logged — operator.py:5 sets posting.loggers = False: log records are not posted"
    );
    assert!(
        f.fix
            .as_deref()
            .unwrap()
            .contains("set it True at line 5 of operator.py")
    );
    let on = with("True");
    let f = find(&on, "errors-not-posted").unwrap();
    assert!(
        f.title.ends_with("although operator.py:5 sets posting.loggers = True"),
        "{}",
        f.title
    );
}

#[test]
fn kopf_source_a_level_above_error_keeps_handler_errors_unposted() {
    let src = format!(
        "import logging\nimport kopf\n\n@kopf.on.startup()\ndef configure(settings, **_):\n    settings.posting.level = logging.CRITICAL\n{HANDLER}"
    );
    let tmp = conditional_posting_with_source(&src);
    let r = explain(tmp.path(), "basket-api");
    assert!(find(&r, "posting-disabled").is_none(), "{:?}", r.findings);
    let f = find(&r, "errors-not-posted").unwrap();
    assert_eq!(f.severity, Severity::Problem);
    assert_eq!(
        f.title,
        "handler errors are not posted: posting.level is 50 at operator.py:6, above ERROR (40)"
    );
    assert!(
        f.evidence.iter().any(|e| e
            .starts_with("operator.py:6: settings.posting.level = logging.CRITICAL (unconditional")
            && e.contains("K8sPoster.filter")),
        "{:?}",
        f.evidence
    );
    assert!(
        f.fix.as_deref().unwrap().contains("line 6 of operator.py"),
        "{:?}",
        f.fix
    );
}

#[test]
fn kopf_source_multi_line_and_aliased_startup_proves_posting_disabled() {
    let src = format!(
        "from kopf import on\nimport kopf as k\n\n@on.startup(\n    id='configure',\n)\nasync def configure(\n    settings: k.OperatorSettings,\n    **_,\n):\n    posting = settings.posting\n    posting.enabled = (\n        False\n    )\n{HANDLER}"
    );
    let tmp = conditional_posting_with_source(&src.replace("@kopf.on.create", "@k.on.create"));
    let r = explain(tmp.path(), "basket-api");
    let f = find(&r, "posting-disabled").unwrap();
    assert_eq!(f.title, "Kopf posting is turned off at operator.py:12");
    assert!(
        f.evidence[0].starts_with("operator.py:12: posting.enabled = ( False ) (unconditional"),
        "{:?}",
        f.evidence
    );
    assert!(find(&r, "errors-not-posted").is_none(), "{:?}", r.findings);
}

#[test]
fn kopf_source_a_settings_parameter_under_another_name_is_ignored_with_its_reason() {
    let src =
        format!("import kopf\n\n@kopf.on.startup()\ndef configure(s, **_):\n    s.posting.enabled = False\n{HANDLER}");
    let tmp = conditional_posting_with_source(&src);
    let r = explain(tmp.path(), "basket-api");
    assert!(find(&r, "posting-disabled").is_none(), "{:?}", r.findings);
    let f = find(&r, "errors-not-posted").unwrap();
    // Kopf 1.38 posts handler errors by default, and nothing in the source turns that off.
    assert!(
        f.title.contains("although Kopf 1.38 posts them by default"),
        "{}",
        f.title
    );
    assert!(
        f.evidence.iter().any(|e| e
            .starts_with("operator.py:5: s.posting.enabled = False: ignored (`s` does not receive Kopf's settings")),
        "{:?}",
        f.evidence
    );
}

#[test]
fn kopf_source_that_does_not_parse_is_undecidable_at_its_error_line() {
    // Python 2, and a ConfigMap cut in the middle of a call.
    for (src, line) in [
        (format!("import kopf\n\nprint 'starting'\n{HANDLER}"), 3),
        (
            "import kopf\n\n@kopf.on.startup()\ndef configure(settings, **_):\n    settings.posting.enabled = bool(\n"
                .to_string(),
            5,
        ),
    ] {
        let tmp = conditional_posting_with_source(&src);
        let r = explain(tmp.path(), "basket-api");
        let f = find(&r, "errors-not-posted").unwrap();
        assert_eq!(
            f.title,
            format!(
                "handler errors are only logged: operator.py does not parse (line {line}), so whether it turns posting off is undecidable"
            )
        );
        assert!(
            f.evidence
                .iter()
                .any(|e| e.contains(&format!("undecidable, line {line} (the source does not parse: "))),
            "{:?}",
            f.evidence
        );
        assert!(
            f.fix
                .as_deref()
                .unwrap()
                .contains(&format!("check line {line} of operator.py"))
        );
        assert_eq!(r.exit_code(), 1);
    }
}

fn explain_captured(bundle: &str, edit: impl FnOnce(&mut kubectl_microservice::evidence::Snapshot)) -> Report {
    let mut snapshot = bundle::read(&fixtures().join("bundles-captured").join(bundle)).unwrap();
    edit(&mut snapshot);
    report(&snapshot, "todo", "todo-api", Options::default()).unwrap()
}

fn severity_of(report: &Report, id: &str) -> Option<Severity> {
    report.findings.iter().find(|f| f.id.as_str() == id).map(|f| f.severity)
}

/// A laptop `operate` holding the Lease while the Deployment has no running Pod handles the
/// objects: not "no handler runs"; once its Lease has expired, nothing leads, and the finding
/// names the last holder.
#[test]
fn a_lease_held_outside_a_deployment_that_does_not_run() {
    let stopped = |s: &mut kubectl_microservice::evidence::Snapshot| {
        if let Evidence::Present(pods) = &mut s.operator.pods {
            for pod in pods {
                pod.status = None;
            }
        }
    };
    let r = explain_captured("lease-held-elsewhere", stopped);
    assert_eq!(
        severity_of(&r, "operator-not-running"),
        Some(Severity::Warning),
        "{:?}",
        r.findings
    );
    let running = r
        .findings
        .iter()
        .find(|f| f.id.as_str() == "operator-not-running")
        .unwrap();
    assert!(
        running
            .title
            .contains("another process, holding its Lease as kubectl-microservice_0238c19b5809f0e5"),
        "{}",
        running.title
    );
    let leading = r
        .findings
        .iter()
        .find(|f| f.id.as_str() == "operator-not-leading")
        .unwrap();
    assert_eq!(leading.severity, Severity::Warning);
    assert!(
        leading.title.ends_with("and the Deployment has no running replica"),
        "{}",
        leading.title
    );
    // The fix of the stopped Pods is one that achieves something (not a `describe`), and says
    // that the process serves the objects meanwhile.
    let fix = running.fix.as_deref().unwrap();
    assert!(
        fix.starts_with("nothing to fix while kubectl-microservice_0238c19b5809f0e5 runs: it serves the objects"),
        "{fix}"
    );
    assert!(!fix.contains("describe deployment"), "{fix}");
    // Scaled to zero while that process leads (issue 11 trial C): the scale command, which works
    // with or without the process, not a `describe` that changes nothing.
    let scaled = explain_captured("lease-held-elsewhere", |s| {
        if let Evidence::Present(deployments) = &mut s.operator.deployments {
            for d in deployments {
                d.spec.as_mut().unwrap().replicas = Some(0);
                d.status = None;
            }
        }
        s.operator.pods = Evidence::Present(Vec::new());
    });
    let running = scaled
        .findings
        .iter()
        .find(|f| f.id.as_str() == "operator-not-running")
        .unwrap();
    assert_eq!(running.severity, Severity::Warning, "{running:?}");
    let fix = running.fix.as_deref().unwrap();
    assert!(
        fix.contains("(spec.replicas=0: the Deployment is scaled to zero)")
            && fix.contains("kubectl -n ops scale deployment/microservice-operator --replicas=2"),
        "{fix}"
    );
    assert!(!fix.contains("describe deployment"), "{fix}");
    // Later: its Lease expired, and still no Pod runs.
    let r = explain_captured("lease-held-elsewhere", |s| {
        stopped(s);
        s.captured_at = s.captured_at.map(|t| t + chrono::Duration::minutes(5));
    });
    assert_eq!(
        severity_of(&r, "operator-not-running"),
        Some(Severity::Problem),
        "{:?}",
        r.findings
    );
    let leading = r
        .findings
        .iter()
        .find(|f| f.id.as_str() == "operator-not-leading")
        .unwrap();
    assert_eq!(leading.severity, Severity::Problem);
    assert!(
        leading.title.starts_with(
            "nothing leads: the Lease ops/microservice-operator of kubectl-microservice_0238c19b5809f0e5, not a Pod of"
        ),
        "{}",
        leading.title
    );
}

/// Pods missing from the evidence (a hand-made bundle's `-l` that matched none) while the
/// Deployment reports ready replicas: they run, and the Lease is still judged against them.
#[test]
fn pods_missing_from_evidence_are_not_taken_for_none_running() {
    let r = explain_captured("lease-expired", |s| s.operator.pods = Evidence::Present(Vec::new()));
    assert_eq!(
        severity_of(&r, "operator-not-running"),
        Some(Severity::Ok),
        "{:?}",
        r.findings
    );
    let leading = r
        .findings
        .iter()
        .find(|f| f.id.as_str() == "operator-not-leading")
        .unwrap();
    assert_eq!(leading.severity, Severity::Problem);
    assert!(leading.title.contains("expired"), "{}", leading.title);
}

/// The `kubectl microservice ...` commands the fixes print, cut where the command ends.
fn our_commands(text: &str) -> Vec<Vec<String>> {
    use kubectl_microservice::commands::explain_events::{OUR_COMMAND, suggested_commands};
    suggested_commands(text)
        .into_iter()
        .map(|span| {
            text[span.start + OUR_COMMAND.len()..span.end]
                .split_whitespace()
                .map(str::to_string)
                .collect()
        })
        .collect()
}

/// Every `kubectl microservice ...` a finding's fix suggests is a command our binary accepts (no
/// usage error, exit 2), so a user can paste it: a fix once said `manifests | kubectl apply`,
/// which needs --namespace. Run against a server that refuses connections: a command that needs
/// the cluster then ends with exit 3, after its arguments were checked.
#[test]
fn every_suggested_command_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let refused = kubeconfig::write(dir.path(), "https://127.0.0.1:1");
    let mut seen = BTreeSet::new();
    for bundle in all_bundles() {
        let expected = expected(&bundle);
        let (namespace, name) = expected["object"].as_str().unwrap().split_once('/').unwrap();
        let report = explain_in(&bundle, namespace, name);
        for f in &report.findings {
            for command in our_commands(f.fix.as_deref().unwrap_or_default()) {
                if !seen.insert(command.clone()) {
                    continue;
                }
                // The kubeconfig through the environment: a subcommand that reads no cluster
                // (`manifests`) refuses --kubeconfig. The connection is refused at once.
                let out = Command::new(BIN)
                    .args(&command)
                    .env("KUBECONFIG", &refused)
                    .output()
                    .unwrap();
                assert_ne!(
                    out.status.code(),
                    Some(2),
                    "{}: {}: `kubectl microservice {}`: {}",
                    bundle.display(),
                    f.id.as_str(),
                    command.join(" "),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
    }
    assert!(seen.len() >= 5, "only {} commands seen: {seen:?}", seen.len());
}

/// Issue 11 trial C: every `kubectl microservice ...` that reads evidence and that a fix or
/// `status`'s `Next:` suggests, answering from a bundle, runs on that bundle with exit 0 or 1:
/// never 3 ("no Pods: no logs to read"), a command needing evidence the bundle lacks, nor 2.
/// The commands are cut from the printed answers (which add `--bundle DIR` to them).
#[test]
fn every_suggested_command_runs_on_its_bundle() {
    let mut ran = 0;
    for bundle in all_bundles() {
        let expected = expected(&bundle);
        let (namespace, name) = expected["object"].as_str().unwrap().split_once('/').unwrap();
        let dir = bundle.display().to_string();
        let (_, json, _) = run(&["explain-events", name, "-n", namespace, "--bundle", &dir, "-o", "json"]);
        let doc: Value = serde_json::from_str(&json).unwrap();
        let mut texts: Vec<(String, String)> = doc["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|f| Some((f["id"].as_str()?.to_string(), f["fix"].as_str()?.to_string())))
            .collect();
        let (_, human, _) = run(&["status", name, "-n", namespace, "--bundle", &dir]);
        texts.extend(
            human
                .lines()
                .filter_map(|l| l.trim_start().strip_prefix("Next:"))
                .map(|next| ("status Next:".to_string(), next.trim().to_string())),
        );
        for (from, text) in texts {
            for command in our_commands(&text) {
                let reads = ["logs", "status", "explain-events"].contains(&command[0].as_str());
                if !reads {
                    continue;
                }
                assert!(command.iter().any(|a| a == "--bundle"), "{dir}: {from}: {command:?}");
                let args: Vec<&str> = command.iter().map(String::as_str).collect();
                let (code, _, stderr) = run(&args);
                assert!(
                    code == 0 || code == 1,
                    "{dir}: {from}: `kubectl microservice {}` exits {code}: {stderr}",
                    command.join(" ")
                );
                ran += 1;
            }
        }
    }
    assert!(ran >= 20, "only {ran} commands ran");
}

// ---- the binary -------------------------------------------------------------------------------

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(BIN).args(args).env("NO_COLOR", "1").output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn exit_codes_through_the_binary() {
    let b = |name: &str| fixtures().join("bundles").join(name).display().to_string();
    let (code, out, _) = run(&["explain-events", "catalog-api", "--bundle", &b("healthy")]);
    assert_eq!(code, 0, "{out}");
    let (code, out, _) = run(&[
        "explain-events",
        "catalog-api",
        "--bundle",
        &b("ours-style-rbac"),
        "-o",
        "json",
    ]);
    assert_eq!(code, 1);
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["schemaVersion"], 1);
    assert_eq!(doc["object"], "store/catalog-api");
    let f = &doc["findings"][0];
    for key in ["id", "severity", "title", "evidence", "fix"] {
        assert!(f.get(key).is_some(), "{key} missing in {f}");
    }
    let (code, _, err) = run(&["explain-events", "nope", "--bundle", &b("healthy")]);
    assert_eq!(code, 3);
    assert!(err.contains("\"nope\" not found in namespace \"store\""), "{err}");
    let (code, _, err) = run(&["explain-events", "x", "--bundle", "/nonexistent/dir"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("/nonexistent/dir"), "{err}");
    let (code, _, err) = run(&["explain-events", "x", "--bundle", &b("healthy"), "--event-ttl", "soon"]);
    assert_eq!(code, 2, "{err}");
    let (code, _, _) = run(&["explain-events", "x", "-A", "--bundle", &b("healthy")]);
    assert_eq!(code, 2);
}

// ---- rendered outputs ---------------------------------------------------------------------------

#[test]
fn rendered_outputs_are_pinned() {
    for (bundle, name) in [
        ("bundles/ours-style-rbac", "store/catalog-api"),
        ("bundles/conditional-posting", "store/basket-api"),
        ("bundles/recreated-uid", "store/wishlist-api"),
        // docs/diagnostics.md's Lease walk-through shows this one.
        ("bundles-captured/lease-expired", "todo/todo-api"),
        ("bundles-captured/kopf-peering-paused", "todo/todo-api"),
    ] {
        let (namespace, name) = name.split_once('/').unwrap();
        let mut report = explain_in(&fixtures().join(bundle), namespace, name);
        // As the binary prints it from the repository's root: next commands read the same bundle.
        kubectl_microservice::commands::explain_events::point_at_bundle(
            &mut report,
            &Path::new("tests/fixtures").join(bundle),
        );
        let bundle = bundle.rsplit('/').next().unwrap();
        check_snapshot(
            &format!("explain-{bundle}.txt"),
            &render_report(&report, &global(None), false).unwrap(),
        );
        check_snapshot(
            &format!("explain-{bundle}.json"),
            &render_report(&report, &global(Some(OutputFormat::Json)), false).unwrap(),
        );
    }
    // docs/diagnostics.md quotes the Lease walk-through verbatim.
    let page = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/diagnostics.md")).unwrap();
    let pinned =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/explain-lease-expired.txt"))
            .unwrap();
    assert!(
        page.contains(pinned.trim_end()),
        "docs/diagnostics.md's Lease walk-through differs from tests/snapshots/explain-lease-expired.txt"
    );
}

#[test]
fn the_shipped_examples_diagnose_as_the_readme_says() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let healthy = explain(&examples.join("healthy"), "catalog-api");
    assert_eq!(healthy.exit_code(), 0, "{:?}", healthy.findings);
    let hidden = explain(&examples.join("warnings-hidden"), "basket-api");
    assert_eq!(hidden.exit_code(), 1);
    // The condition of line 10 is decided by the Deployment's env (KOPF_POSTING=disabled).
    let f = find(&hidden, "posting-disabled").unwrap();
    assert!(
        f.evidence
            .iter()
            .any(|e| e.contains(r#"holds by the operator's env: KOPF_POSTING = "disabled""#)),
        "{:?}",
        f.evidence
    );
    // The issue's headline case, and the same evidence as its test fixture.
    let unposted = explain_in(&examples.join("kopf-1.44-unposted"), "shop3", "checkout-api");
    assert_eq!(unposted.exit_code(), 1);
    assert!(
        unposted
            .summary
            .contains("Kopf ≥ 1.44 does not post log records by default; 2 handler failures"),
        "{}",
        unposted.summary
    );
    let fixture = explain_in(
        &fixtures().join("bundles-captured/kopf-1.44-errors-not-posted"),
        "shop3",
        "checkout-api",
    );
    assert_eq!(unposted.findings, fixture.findings);
}

// ---- ../shared/fixtures/kopf-1.38-real: the conclusions its INDEX.md table names -------------------

/// A bundle assembled from the real Kopf 1.38 captures (tests/fixtures/kopf-1.38-real): the
/// object (YAML as captured), its events, one log, and optionally the in-cluster Deployment with
/// its ConfigMap (deployment/). Synthetic only in the assembling: every file is real.
fn kopf_real(object: &str, events: &str, log: &str, with_deployment: bool) -> tempfile::TempDir {
    let real = fixtures().join("kopf-1.38-real");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let obj: Value = serde_saphyr::from_str(&fs::read_to_string(real.join(object)).unwrap()).unwrap();
    fs::write(
        dir.join("microservices.json"),
        serde_json::json!({"apiVersion": "v1", "kind": "List", "items": [obj]}).to_string(),
    )
    .unwrap();
    fs::copy(real.join(events), dir.join("events.json")).unwrap();
    fs::create_dir_all(dir.join("operator/logs")).unwrap();
    fs::copy(real.join(log), dir.join("operator/logs/operator.operator.log")).unwrap();
    if with_deployment {
        fs::copy(
            real.join("deployment/deployment.json"),
            dir.join("operator/deployment.json"),
        )
        .unwrap();
        fs::copy(
            real.join("deployment/configmap.json"),
            dir.join("operator/configmaps.json"),
        )
        .unwrap();
    }
    fs::write(dir.join("meta.json"), r#"{"namespace": "todo"}"#).unwrap();
    tmp
}

fn explain_todo(dir: &Path) -> Report {
    report(&bundle::read(dir).unwrap(), "todo", "todo-api", Options::default()).unwrap()
}

#[test]
fn kopf_real_a_nothing_hidden() {
    let tmp = kopf_real(
        "a-todo-api-after-create.yaml",
        "a-events-after-create.json",
        "ab-run1-create-update-shutdown.log",
        false,
    );
    let r = explain_todo(tmp.path());
    assert!(
        !r.findings.iter().any(|f| f.severity > Severity::Ok),
        "{:?}",
        r.findings
    );
    assert!(r.summary.starts_with("Nothing is hidden: 3 events"), "{}", r.summary);
}

#[test]
fn kopf_real_d_default_posting_posts_errors_as_type_error() {
    let tmp = kopf_real(
        "d-temperr-posting-default.todo-api.yaml",
        "d-temperr-posting-default.events.json",
        "d-temperr-posting-default.log",
        false,
    );
    let r = explain_todo(tmp.path());
    let f = find(&r, "events-elsewhere").unwrap();
    assert_eq!(f.severity, Severity::Warning);
    assert!(
        f.evidence.iter().all(|e| e.contains("type Error reason Logging")),
        "{:?}",
        f.evidence
    );
    assert!(find(&r, "errors-not-posted").is_none() && find(&r, "posting-disabled").is_none());
}

#[test]
fn kopf_real_d_posting_disabled_with_the_source_in_evidence() {
    let tmp = kopf_real(
        "d-temperr-posting-disabled.todo-api.yaml",
        "d-temperr-posting-disabled.events.json",
        "d-temperr-posting-disabled.log",
        true,
    );
    let r = explain_todo(tmp.path());
    let f = find(&r, "posting-disabled").unwrap();
    assert_eq!(f.severity, Severity::Problem);
    assert!(f.title.contains("operator.py:9"), "{}", f.title);
    assert!(
        f.evidence.iter().any(|e| e.contains("4 handler failures")),
        "{:?}",
        f.evidence
    );
    assert!(find(&r, "errors-not-posted").is_none());
    // Without the source: errors-not-posted (the version unknown gives both defaults).
    let tmp = kopf_real(
        "d-temperr-posting-disabled.todo-api.yaml",
        "d-temperr-posting-disabled.events.json",
        "d-temperr-posting-disabled.log",
        false,
    );
    let r = explain_todo(tmp.path());
    assert!(find(&r, "posting-disabled").is_none());
    let f = find(&r, "errors-not-posted").unwrap();
    assert!(f.evidence[0].starts_with("4 handler failures"), "{:?}", f.evidence);
    assert_eq!(r.exit_code(), 1);
}

#[test]
fn kopf_real_e_forbidden_events_from_the_logs() {
    let tmp = kopf_real(
        "e-todo-api-after-create.yaml",
        "e-events-after-403.json",
        "e-event-403.log",
        false,
    );
    let r = explain_todo(tmp.path());
    let rbac = find(&r, "rbac-events").unwrap();
    assert_eq!(rbac.severity, Severity::Problem);
    assert!(
        rbac.fix.as_deref().unwrap().contains("apiGroups: [\"\"]"),
        "{:?}",
        rbac.fix
    );
    let post = find(&r, "event-post-failed").unwrap();
    assert!(
        post.evidence[0].starts_with("4 failed event POSTs in the operator's logs, codes: 403"),
        "{:?}",
        post.evidence
    );
    // 9 attempts per POST: 8 retries and the escalation, for each of the 4 events.
    assert!(
        post.evidence[2].starts_with("36 failed request attempts before giving up"),
        "{:?}",
        post.evidence
    );
    assert_eq!(r.exit_code(), 1);
}

#[test]
fn human_output_colours_only_when_asked_and_escapes_control_characters() {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&fixtures().join("bundles/ours-style-rbac"), tmp.path());
    let log = fs::read_dir(tmp.path().join("operator/logs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    // A cluster-sourced value carrying a terminal escape (as a forged event reason would).
    let text = fs::read_to_string(&log)
        .unwrap()
        .replace("reason=Accepted", "reason=Acc\u{1b}[2Jepted");
    fs::write(&log, text).unwrap();
    let report = explain(tmp.path(), "catalog-api");
    let plain = render_report(&report, &global(None), false).unwrap();
    assert!(!plain.contains('\u{1b}'), "{plain}");
    assert!(plain.contains("PROBLEM  rbac-events"), "{plain}");
    let coloured = render_report(&report, &global(None), true).unwrap();
    assert!(coloured.contains("\u{1b}[31mPROBLEM\u{1b}[39m"), "{coloured}");
    assert!(!coloured.contains("\u{1b}[2J"), "{coloured}");
}

/// Kopf's `full` times are the operator's local time without a zone: every cited line says
/// "operator's local time", and what that means is said once, in a note, not after every time.
#[test]
fn what_operator_local_time_means_is_said_once() {
    let report = explain(&fixtures().join("bundles/conditional-posting"), "basket-api");
    let cited: Vec<&String> = report
        .findings
        .iter()
        .flat_map(|f| &f.evidence)
        .filter(|e| e.contains("(operator's local time)"))
        .collect();
    assert!(!cited.is_empty(), "{:?}", report.findings);
    // The Pod in the bundle sets no TZ: read as UTC, and said so.
    assert_eq!(
        report.notes,
        [
            "\"operator's local time\" (operator-local) is the time Kopf's full format writes, without a zone: read as UTC, as the operator container sets no TZ; logs read with kubelet timestamps have a better clock"
        ]
    );
    let text = render_report(&report, &global(None), false).unwrap();
    assert_eq!(text.matches("read as UTC").count(), 1, "{text}");
    assert!(!text.contains("(unless"), "{text}");
    // Our operator's lines carry their own zone: no note.
    let ours = explain(&fixtures().join("bundles/ours-style-rbac"), "catalog-api");
    assert!(ours.notes.is_empty(), "{:?}", ours.notes);
    let json: Value =
        serde_json::from_str(&render_report(&ours, &global(Some(OutputFormat::Json)), false).unwrap()).unwrap();
    assert!(json.get("notes").is_none(), "{json}");
}

/// Issue 11 trial C, captured live (kopf-retrying-status-pruned, result-api): a handler's
/// return value (Kopf's `status.accept`) dropped by the shared CRD's status schema is a warning
/// (the verdict is not affected), fixed precisely: a JSON patch adding that one property, saying
/// the CRD is shared, never `kubectl edit crd`.
#[test]
fn a_handlers_pruned_result_gets_a_json_patch_for_that_property() {
    let dir = fixtures().join("bundles-captured/kopf-retrying-status-pruned");
    let report = explain_in(&dir, "kms-t11-retry", "result-api");
    let f = find(&report, "status-pruned").unwrap();
    assert_eq!(f.severity, Severity::Warning, "{}", f.title);
    assert!(f.title.contains("status.accept"), "{}", f.title);
    let fix = f.fix.as_deref().unwrap();
    assert!(
        fix.contains(r#"kubectl patch crd microservices.platform.example.io --type=json -p '[{"op":"add","path":"/spec/versions/0/schema/openAPIV3Schema/properties/status/properties/accept","value":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}]'"#),
        "{fix}"
    );
    assert!(fix.contains("shared"), "{fix}");
    assert!(!fix.contains("kubectl edit crd"), "{fix}");
    assert_eq!(report.findings[0].id, "status-pruned");
    assert!(
        report
            .summary
            .starts_with("Status fields are dropped (the verdict is not affected)"),
        "{}",
        report.summary
    );
}

/// status-pruned's JSON patch adds to a parent that exists: a status schema without
/// `properties` gets them in one op, a CRD without `status` the whole status schema (an `add`
/// under a missing parent is refused when pasted).
#[test]
fn the_crd_patch_of_status_pruned_adds_under_a_parent_that_exists() {
    let dir = fixtures().join("bundles-synthetic/status-pruned-crd-schema");
    let fix_with = |edit: &dyn Fn(&mut serde_json::Map<String, Value>)| -> String {
        let mut snapshot = bundle::read(&dir).unwrap();
        let Evidence::Present(crd) = &mut snapshot.crd else {
            panic!("the bundle has the CRD")
        };
        let mut value = serde_json::to_value(&*crd).unwrap();
        let root = value["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]
            .as_object_mut()
            .unwrap();
        edit(root);
        *crd = serde_json::from_value(value).unwrap();
        let r = report(&snapshot, "store", "catalog-api", Options::default()).unwrap();
        find(&r, "status-pruned").unwrap().fix.clone().unwrap()
    };
    let root = "/spec/versions/0/schema/openAPIV3Schema/properties/status";
    let fix = fix_with(&|props| {
        props.insert("status".into(), serde_json::json!({"type": "object"}));
    });
    assert!(
        fix.contains(&format!(
            r#"-p '[{{"op":"add","path":"{root}/properties","value":{{"phase":{{"type":"string"}},"observedGeneration":{{"type":"integer"}},"conditions":{{"type":"array","items":{{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}}}}}}]'"#
        )),
        "{fix}"
    );
    let fix = fix_with(&|props| {
        props.remove("status");
    });
    assert!(
        fix.contains(&format!(
            r#"-p '[{{"op":"add","path":"{root}","value":{{"type":"object","properties":{{"phase":{{"type":"string"}},"#
        )),
        "{fix}"
    );
}

/// Issue 11 acceptance 1, the scenario suite as one checkable thing: every situation of the
/// issue (1–11) and each healthy case has a bundle captured from a real API server, and every
/// captured `expected.json` pins the status verdict, the finding ids, the first finding, the
/// exit code and the operator (checked against the output by
/// `every_bundle_gives_its_expected_findings`, tests/status_bundles.rs and
/// tests/operator_agreement.rs).
#[test]
fn the_captured_scenarios_cover_every_situation_of_issue_11() {
    let healthy = ["healthy-laptop", "healthy-in-cluster", "healthy-kopf"];
    let mut covered: BTreeSet<String> = BTreeSet::new();
    for dir in bundles_in("bundles-captured") {
        let d = dir.display();
        let e = expected(&dir);
        let situations = e["situations"]
            .as_array()
            .unwrap_or_else(|| panic!("{d}: expected.json has no `situations` list"));
        for s in situations {
            let s = s.as_str().unwrap();
            let numbered = s.parse::<u32>().is_ok_and(|n| (1..=11).contains(&n));
            assert!(numbered || healthy.contains(&s), "{d}: unknown situation {s:?}");
            if healthy.contains(&s) {
                assert_eq!(e["explain_exit"], 0, "{d}: a healthy case exits 0");
                assert_eq!(e["status_verdict"], "fresh", "{d}: a healthy case is fresh");
            }
            covered.insert(s.to_string());
        }
        for key in ["object", "status_verdict", "explain_first", "explain_exit", "operator"] {
            assert!(!e[key].is_null(), "{d}: expected.json pins no `{key}`");
        }
        assert!(
            e["explain_severity"].is_object() || e["explain_must"].is_array(),
            "{d}: expected.json pins no finding ids"
        );
        assert!(e["explain_must_not"].is_array(), "{d}: no explain_must_not");
    }
    let wanted: BTreeSet<String> = (1..=11)
        .map(|n| n.to_string())
        .chain(healthy.iter().map(|s| s.to_string()))
        .collect();
    let missing: Vec<&String> = wanted.difference(&covered).collect();
    assert!(missing.is_empty(), "situations without a captured bundle: {missing:?}");
}

/// Issue 11 item 7, captured in a Pod: Kopf with `TZ=Asia/Taipei` in its Deployment writes
/// `19:18:15` for 11:18:15 UTC. Given as `--log-file` (`kubectl logs deploy/... > f`, no kubelet
/// timestamps), the file is read in the Deployment's TZ, and the note says so.
#[test]
fn a_log_file_of_a_kopf_pod_with_tz_is_read_in_that_zone() {
    let dir = fixtures().join("bundles-captured/s11-kopf-tz-taipei-log-file");
    let human = Command::new(BIN)
        .args([
            "logs",
            "--handler",
            "accept",
            "tz-api",
            "--bundle",
            dir.to_str().unwrap(),
        ])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let notes = String::from_utf8(human.stdout).unwrap();
    assert!(
        notes.contains("read in Asia/Taipei (TZ=Asia/Taipei in the env of container operator of Deployment kms-s11-tz/kopf-operator"),
        "{notes}"
    );
    let out = Command::new(BIN)
        .args([
            "logs",
            "--handler",
            "accept",
            "tz-api",
            "--bundle",
            dir.to_str().unwrap(),
            "-o",
            "json",
        ])
        .output()
        .unwrap();
    // The file read in Taipei time covers what the Pod's log covers, in UTC.
    assert!(
        notes
            .contains("file kopf-tz.log: 2026-12-01T11:17:42.381Z .. 2026-12-01T11:19:36.005Z (operator's local time)"),
        "{notes}"
    );
    let text = String::from_utf8(out.stdout).unwrap();
    // The file holds the Pod's runs: each is shown once, from the Pod, naming the file too.
    let starts: Vec<(String, String, Value)> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|r| {
            (
                r["cause"].as_str().unwrap().to_string(),
                r["started"].as_str().unwrap().to_string(),
                r["alsoReadFrom"].clone(),
            )
        })
        .collect();
    let file = serde_json::json!(["file=kopf-tz.log"]);
    assert_eq!(
        starts,
        [
            (
                "create".to_string(),
                "2026-12-01T11:18:15.650533284Z".to_string(),
                file.clone()
            ),
            ("update".to_string(), "2026-12-01T11:19:36.004552047Z".to_string(), file)
        ]
    );
}

/// Issue 11 item 6, captured live: `logs --handler` shows the hung handler's open run as a run,
/// running since its start, and does not say that the handler "ran" since the change.
#[test]
fn a_hung_handlers_open_run_is_shown_running() {
    let dir = fixtures().join("bundles-captured/s11-kopf-handler-hung");
    let out = Command::new(BIN)
        .args([
            "logs",
            "--handler",
            "accept",
            "hung-api",
            "--bundle",
            dir.to_str().unwrap(),
        ])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("accept/spec  kms-s11-hung/hung-api  cause=update  outcome=unknown")
            && text.contains("detail: running: no outcome logged after its start"),
        "{text}"
    );
    assert!(
        text.contains(
            "Handler accept started for kms-s11-hung/hung-api since the spec changed at 2026-12-01T11:19:14Z"
        ),
        "{text}"
    );
    assert!(!text.contains("Handler accept ran for"), "{text}");
}

/// Defect 7 of the issue 11 trial: `status --log-file F` read a Kopf file in the operator's
/// `TZ`, and the `logs` command its `Next:` line gives read it as UTC, without the `Operator:`
/// and since-the-change lines. One rule now (`Snapshot::log_zone`, for a file the one Kopf
/// Deployment's `TZ`, checked against managedFields): the bundle of the Taipei Pod without its
/// Pod's log, and the file `kubectl logs` saved of it (Taipei wall times, `19:19:36`):
/// `status` cites the last cycle at 11:19:36Z; its `Next:` line, pasted, prints the same run
/// at 11:19:36.003Z with the operator and the since-change line; `explain-events` reads the
/// same file, names the same operator and gives the same verdict.
#[test]
fn status_logs_and_explain_events_read_a_log_file_on_one_clock() {
    let tmp = tempfile::tempdir().unwrap();
    let bundle = tmp.path().join("b");
    copy_dir(&fixtures().join("bundles-captured/s11-kopf-tz-taipei-pod"), &bundle);
    fs::remove_dir_all(bundle.join("operator/logs")).unwrap();
    let file = tmp.path().join("kopf-tz.log");
    fs::copy(
        fixtures().join("bundles-captured/s11-kopf-tz-taipei-log-file/operator/logs/kopf-tz.log.file.log"),
        &file,
    )
    .unwrap();
    assert!(fs::read_to_string(&file).unwrap().contains("[2026-12-01 19:19:36,005]"));
    let (b, f) = (bundle.to_str().unwrap(), file.to_str().unwrap());
    let run = |args: &[&str]| {
        let out = Command::new(BIN).args(args).env("NO_COLOR", "1").output().unwrap();
        (out.status.code(), String::from_utf8(out.stdout).unwrap())
    };
    let (code, status) = run(&["status", "tz-api", "--bundle", b, "--log-file", f]);
    assert_eq!(code, Some(0), "{status}");
    assert!(
        status.contains(
            "Updating is processed: 1 succeeded; 0 failed. (logged at 2026-12-01T11:19:36Z, operator's local time)"
        ),
        "{status}"
    );
    let next = status
        .lines()
        .find_map(|l| l.trim().strip_prefix("Next:"))
        .and_then(|l| l.split_once("kubectl microservice "))
        .map(|(_, command)| command.to_string())
        .unwrap();
    assert!(next.contains(&format!("--log-file {f}")), "{next}");
    let words: Vec<&str> = next.split_whitespace().collect();
    assert_eq!(words[0], "logs", "{next}");
    let (code, logs) = run(&words);
    assert_eq!(code, Some(0), "{logs}");
    assert!(logs.contains("2026-12-01T11:19:36.003Z (operator-local)"), "{logs}");
    assert!(!logs.contains("2026-12-01T19:19:36"), "{logs}");
    assert!(
        logs.contains("\nOperator: kms-s11-tz/deployment/kopf-operator\n"),
        "{logs}"
    );
    assert!(
        logs.contains("since the spec changed at 2026-12-01T11:19:35Z")
            && logs.contains("last run started at 2026-12-01T11:19:36.003Z"),
        "{logs}"
    );
    assert!(logs.contains("read in Asia/Taipei"), "{logs}");
    // Given on this command line, not by collect.
    assert!(
        logs.contains("read from a file (`--log-file`), not from a Pod") && !logs.contains("of collect"),
        "{logs}"
    );
    // The same file on stdin (`kubectl logs ... | kubectl microservice logs ... --log-file -`):
    // the same clock, operator and since-change line; the log is named stdin.
    let mut piped = words.clone();
    let at = piped.iter().position(|w| *w == f).unwrap();
    piped[at] = "-";
    let piped = Command::new(BIN)
        .args(&piped)
        .env("NO_COLOR", "1")
        .stdin(fs::File::open(&file).unwrap())
        .output()
        .unwrap();
    let piped_out = String::from_utf8(piped.stdout).unwrap();
    assert_eq!(piped.status.code(), Some(0), "{piped_out}");
    assert_eq!(
        piped_out.replace("stdin", "kopf-tz.log"),
        logs.replace(f, "kopf-tz.log"),
        "stdin is read as the file is"
    );
    let (code, explain) = run(&["explain-events", "tz-api", "--bundle", b, "--log-file", f, "-o", "json"]);
    assert_eq!(code, Some(0), "{explain}");
    let explain: Value = serde_json::from_str(&explain).unwrap();
    assert_eq!(explain["operator"], "kms-s11-tz/deployment/kopf-operator");
    let (_, status_json) = run(&["status", "tz-api", "--bundle", b, "--log-file", f, "-o", "json"]);
    let status_json: Value = serde_json::from_str(&status_json).unwrap();
    assert_eq!(status_json["items"][0]["verdict"], "fresh", "{status_json}");
}

/// Every namespace and Pod a bundle shows: (namespaces, Pods as `(namespace, name)`), from its
/// Microservices, events, operator Deployments, Pods, logs (the `[ns/name]` of their records),
/// the operators seen but not collected (`meta.json` `otherOperators`) and RBAC bindings.
fn named_in(snapshot: &kubectl_microservice::evidence::Snapshot) -> (BTreeSet<String>, BTreeSet<(String, String)>) {
    let mut namespaces = BTreeSet::new();
    let mut pods = BTreeSet::new();
    let op = &snapshot.operator;
    for o in snapshot.microservices.get().into_iter().flatten() {
        namespaces.extend(o.metadata.namespace.clone());
    }
    for e in snapshot.events.get().into_iter().flatten() {
        namespaces.extend(e.metadata.namespace.clone());
    }
    for d in op.deployments.get().into_iter().flatten() {
        namespaces.extend(d.metadata.namespace.clone());
    }
    for p in op.pods.get().into_iter().flatten() {
        let ns = p.metadata.namespace.clone().unwrap_or_default();
        namespaces.insert(ns.clone());
        pods.extend(p.metadata.name.clone().map(|n| (ns, n)));
    }
    for other in &op.others {
        namespaces.extend(other.operator.split('/').next().map(str::to_string));
    }
    for log in op.logs.get().into_iter().flatten() {
        for record in log.records() {
            if let Some(o) = record.object {
                namespaces.extend(o.namespace);
            }
        }
    }
    namespaces.remove("");
    (namespaces, pods)
}

/// Issue 18, "every fact is scoped": on every bundle, no finding of the object's report cites
/// a Pod that is not its resolved operator's, a namespace other than the object's and its
/// operator's, or a log record about another object (`[ns/other]`). What may name other
/// namespaces: the resolver's listing of the candidates that exist (`X watches Y`, which
/// `operator-not-watching` and `operator-not-found` show to say that none serves), and a fix
/// that carries the shared-resource label.
#[test]
fn every_finding_cites_only_its_object_and_its_operator() {
    let mut checked = 0;
    for dir in all_bundles() {
        let d = dir.display().to_string();
        let expected = expected(&dir);
        let object = expected["object"].as_str().unwrap();
        let (namespace, name) = object.split_once('/').unwrap();
        let snapshot = bundle::read(&dir).unwrap();
        let report = report(&snapshot, namespace, name, Options::default()).unwrap();
        let (namespaces, pods) = named_in(&snapshot);
        // The resolved Deployment; for a process outside the cluster, the Deployments that
        // serve the namespace beside it (they stand by on its Lease: the leadership checks
        // read them); when ambiguous, the candidates that serve it (double handling cites each
        // one's line about the object).
        use kubectl_microservice::evidence::resolve::Verdict;
        let resolution = &report.operator_resolution;
        let operators: Vec<(String, String)> = match resolution.deployment() {
            Some(op) => vec![op],
            None if matches!(resolution.verdict, Verdict::Process | Verdict::Ambiguous) => {
                resolution.serving().map(|c| c.operator.as_str()).collect()
            }
            None => Vec::new(),
        }
        .into_iter()
        .filter_map(|op| op.split_once("/deployment/"))
        .map(|(ns, n)| (ns.to_string(), n.to_string()))
        .collect();
        let operator = resolution.operator.clone();
        let mut allowed: BTreeSet<&str> = [namespace].into();
        allowed.extend(operators.iter().map(|(ns, _)| ns.as_str()));
        let foreign_pods: Vec<&(String, String)> = pods
            .iter()
            .filter(|(ns, pod)| {
                !operators
                    .iter()
                    .any(|(ons, oname)| ns == ons && pod.starts_with(&format!("{oname}-")))
            })
            .collect();
        let other_object = regex_lite_objects(name, namespace);
        for f in &report.findings {
            // Double handling (operator-not-leading) cites each operator that serves the
            // namespace and handled the object, the resolved one's co-handlers too.
            let co_handlers: Vec<(&str, &str)> = if f.id.as_str() == "operator-not-leading" {
                resolution
                    .serving()
                    .filter_map(|c| c.operator.split_once("/deployment/"))
                    .collect()
            } else {
                Vec::new()
            };
            let co_handled = |ns: &str, pod: &str| {
                co_handlers
                    .iter()
                    .any(|(cns, cname)| ns == *cns && pod.starts_with(&format!("{cname}-")))
            };
            let lines = f
                .evidence
                .iter()
                .map(|e| ("evidence", e.as_str()))
                .chain([("title", f.title.as_str())]);
            for (what, line) in lines {
                // The listing of what exists (`X watches Y`) may name every operator.
                if line.contains(" watches ") {
                    continue;
                }
                for (ns, pod) in foreign_pods.iter().filter(|(ns, pod)| !co_handled(ns, pod)) {
                    assert!(
                        !line.contains(pod.as_str()),
                        "{d}: {} {what} cites Pod {ns}/{pod}, not of the resolved operator {operator:?}: {line}",
                        f.id.as_str()
                    );
                }
                for ns in namespaces
                    .iter()
                    .filter(|ns| !allowed.contains(ns.as_str()) && !co_handlers.iter().any(|(c, _)| c == ns))
                {
                    for cite in [
                        format!("[{ns}/"),
                        format!(" {ns}/"),
                        format!("namespace {ns}"),
                        format!("-n {ns} "),
                    ] {
                        assert!(
                            !line.contains(&cite),
                            "{d}: {} {what} cites namespace {ns} (object {object}, operator {operator:?}): {line}",
                            f.id.as_str()
                        );
                    }
                }
                if let Some(other) = other_object(line) {
                    panic!(
                        "{d}: {} {what} cites a log record about {other}, not {object}: {line}",
                        f.id.as_str()
                    );
                }
            }
        }
        checked += 1;
    }
    assert!(checked > 30, "{checked} bundles");
}

/// A finder of `[NS/NAME]` (Kopf's and our log records' object) in a line where NS is
/// `namespace` and NAME is not `name`: a log record about another object of the namespace.
fn regex_lite_objects<'a>(name: &'a str, namespace: &'a str) -> impl Fn(&str) -> Option<String> + 'a {
    move |line: &str| {
        let prefix = format!("[{namespace}/");
        let mut rest = line;
        while let Some(at) = rest.find(&prefix) {
            let after = &rest[at + prefix.len()..];
            let end = after.find(']')?;
            let other = &after[..end];
            let is_name = other
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.');
            if is_name && other != name {
                return Some(format!("{namespace}/{other}"));
            }
            rest = &after[end..];
        }
        None
    }
}

/// Issue 18, causes before symptoms: for each class (a crash loop on a SyntaxError, an image
/// that cannot be pulled, scaled to 0, events denied by an admission webhook, the events rule
/// removed, posting off, a lapsed Lease, a `-q` operator), per object: `status NAME`'s verdict,
/// the cause it leads its Why with (`-o json` `cause`, and the human `Cause:` line), and
/// `explain-events`' first finding and headline, which names that cause first. Through the
/// binary.
#[test]
fn each_class_leads_status_and_explain_events_with_its_cause() {
    // (bundle, object, status verdict, first finding = status NAME's cause, headline start)
    let classes: &[(&str, &str, &str, Option<&str>, &str)] = &[
        (
            "bundles-synthetic/kopf-crashloop-syntax-error",
            "kms-s11-kopf/todo-api",
            "fresh",
            Some("operator-not-running"),
            "Nothing handles the object: the operator kms-s11-kopf/deployment/kopf-operator has no running Pod (container operator of Pod kopf-operator-588c6c64f-vsvkh is CrashLoopBackOff, last exit code 1 (Error), 5 restarts: it crashes with SyntaxError: expected ':'",
        ),
        (
            "bundles-captured/kopf-image-pull-failing",
            "kms-t11-pull/pull-api",
            "fresh",
            Some("operator-not-running"),
            "Nothing handles the object: ",
        ),
        (
            "bundles-captured/kopf-scaled-to-zero",
            "kms-t11-scaled/scaled-api",
            "fresh",
            Some("operator-not-running"),
            "Nothing handles the object: ",
        ),
        (
            "bundles-synthetic/kopf-events-webhook-denied",
            "kms-tr-norbac/retry-api",
            "never-handled",
            // The handler's own error first, then who refused its events (issue 18 trial P4).
            Some("handler-failing"),
            "The handler fails: \"registry unreachable\" from handler 'accept': 27 failures since 2026-12-01T12:30:32Z, retrying; also: events are not posted: the operator's event POSTs are refused by admission webhook \"deny-kopf-events.i18ca.example.com\"",
        ),
        (
            "bundles-synthetic/kopf-events-rule-removed-no-failure",
            "kms-tr-norbac/ok-api",
            "fresh",
            Some("rbac-events"),
            "Events are not posted: the operator's ServiceAccount kms-tr-norbac/kopf-op may not create events",
        ),
        (
            "bundles-captured/kopf-posting-env-decided",
            "kms-k11k-env/cart-api",
            "never-handled",
            Some("handler-failing"),
            "The handler fails: \"image pull check failed\" from handler 'accept': 32 failures since 2026-12-01T08:52:51Z, retrying; also: events are not posted: Kopf posting is turned off",
        ),
        (
            "bundles-captured/lease-expired",
            "todo/todo-api",
            "stale",
            Some("operator-not-leading"),
            "No replica handles: ",
        ),
        (
            "bundles-synthetic/kopf-quiet-no-info-lines",
            "kms-s11-kopf/todo-api",
            "unknown",
            None,
            "Nothing found hidden, but the operator logs at WARNING (`-q` in the command line",
        ),
    ];
    for (bundle, object, verdict, cause, headline) in classes {
        let dir = fixtures().join(bundle).display().to_string();
        let (ns, name) = object.split_once('/').unwrap();
        let (_, json, err) = run(&["status", name, "-n", ns, "--bundle", &dir, "-o", "json"]);
        let status: Value = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{bundle}: {e}: {err}"));
        let item = &status["items"][0];
        assert_eq!(item["verdict"], *verdict, "{bundle}: verdict");
        assert_eq!(
            item["cause"]["finding"].as_str(),
            *cause,
            "{bundle}: status NAME's cause"
        );
        let (_, human, _) = run(&["status", name, "-n", ns, "--bundle", &dir]);
        let why = human.lines().skip_while(|l| l.trim() != "Why:").nth(1).unwrap_or("");
        match cause {
            Some(id) => assert!(
                why.trim_start().starts_with("Cause: ") && why.contains(&format!("[{id}]")),
                "{bundle}: Why does not lead with the cause: {why}"
            ),
            None => assert!(!why.contains("Cause: "), "{bundle}: {why}"),
        }
        let (_, json, _) = run(&["explain-events", name, "-n", ns, "--bundle", &dir, "-o", "json"]);
        let report: Value = serde_json::from_str(&json).unwrap();
        if let Some(id) = cause {
            assert_eq!(
                report["findings"][0]["id"], *id,
                "{bundle}: explain-events' first finding"
            );
            assert_eq!(report["findings"][0]["title"], item["cause"]["title"], "{bundle}");
        }
        let summary = report["summary"].as_str().unwrap();
        assert!(summary.starts_with(headline), "{bundle}: headline {summary:?}");
    }
    // The `-q` operator's verdict says why its logs are silent.
    let dir = fixtures().join("bundles-synthetic/kopf-quiet-no-info-lines");
    let (_, json, _) = run(&[
        "status",
        "todo-api",
        "-n",
        "kms-s11-kopf",
        "--bundle",
        dir.to_str().unwrap(),
        "-o",
        "json",
    ]);
    let status: Value = serde_json::from_str(&json).unwrap();
    let first = &status["items"][0]["reasons"][0];
    assert_eq!(first["code"], "operator-logs-quiet");
    assert!(
        first["message"]
            .as_str()
            .unwrap()
            .starts_with("the operator logs at WARNING (`-q` in the command line"),
        "{first}"
    );
    // The crash loop's log is read as one crash, not as lines of no format.
    let dir = fixtures().join("bundles-synthetic/kopf-crashloop-syntax-error");
    let (_, out, _) = run(&[
        "logs",
        "--handler",
        "accept",
        "todo-api",
        "-n",
        "kms-s11-kopf",
        "--bundle",
        dir.to_str().unwrap(),
    ]);
    assert!(out.contains("1 crash of the process"), "{out}");
    assert!(!out.contains("matched no log format"), "{out}");
}

/// Issue 18 items 7 and 9, captured live (bundles-captured/i18fx-*): per object, `status`'s
/// verdict and first reason, `explain-events`' first finding, exit code and the fix text (each
/// fix was pasted live afterwards and worked: CAPTURED.md). basket-api's first finding is the
/// handler's own error (`handler-failing`), then why it has no event, posting turned off (the
/// causal order), before the verdict it explains.
#[test]
fn the_handler_filter_and_only_statement_captures_pin_each_object() {
    let cases = [
        (
            "i18fx-handler-filtered-labels",
            "i18fx-labels",
            "ledger-api",
            "never-handled",
            "handler-filtered",
            ("handler-filtered", 1),
            Some("kubectl label -n i18fx-labels microservice/ledger-api team=payments"),
        ),
        (
            "i18fx-handler-filtered-labels",
            "i18fx-labels",
            "pay-api",
            "fresh",
            "last-cycle-succeeded",
            ("operator-not-running", 0),
            None,
        ),
        (
            "i18fx-posting-off-only-statement",
            "i18fx-posting",
            "basket-api",
            "never-handled",
            "never-handled",
            ("handler-failing", 1),
            Some(
                "replace line 9 of operator.py with `pass` (Kopf posts by default), then restart: kubectl -n i18fx-posting rollout restart deployment ms-operator",
            ),
        ),
    ];
    for (bundle, ns, name, verdict, reason, (first, exit), fix) in cases {
        let dir = fixtures().join("bundles-captured").join(bundle);
        let d = dir.to_str().unwrap();
        let (_, json, err) = run(&["status", name, "-n", ns, "--bundle", d, "-o", "json"]);
        let doc: Value = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{bundle}: {e}: {err}"));
        let item = &doc["items"][0];
        assert_eq!(
            (item["verdict"].as_str(), item["reasons"][0]["code"].as_str()),
            (Some(verdict), Some(reason)),
            "{name}"
        );
        let report = explain_in(&dir, ns, name);
        assert_eq!(report.findings[0].id.as_str(), first, "{name}: {:?}", report.findings);
        if first == "handler-failing" {
            assert_eq!(report.findings[1].id.as_str(), "posting-disabled", "{name}");
        }
        assert_eq!(i64::from(report.exit_code()), exit, "{name}");
        if let Some(fix) = fix {
            let all: Vec<&str> = report.findings.iter().filter_map(|f| f.fix.as_deref()).collect();
            assert!(all.iter().any(|f| f.contains(fix)), "{name}: {fix:?} not in {all:#?}");
        }
        // Never the all-clear for an object nothing handles.
        assert_eq!(
            report.summary.starts_with("Nothing is hidden"),
            verdict == "fresh",
            "{name}: {}",
            report.summary
        );
    }
}

/// Issue 18, acceptance 1, captured live (bundles-captured/i18live-*, README there): per object,
/// through the binary as a user runs it, `status NAME`'s verdict, reasons, the cause it leads
/// its Why with and the operator it names; `explain-events`' first finding, headline, exit code
/// and operator; `logs --handler accept`'s runs (expected.json `logs_runs`); and that neither
/// `status NAME --verbose` nor `explain-events --verbose` names another team's namespace or
/// another operator's Pod, though each bundle holds other teams' operators (their Deployments,
/// Pods and logs, some failing into the object's namespace).
#[test]
fn the_issue_18_live_captures_pin_each_object_through_the_binary() {
    // (bundle, status NAME's cause: the finding its Why leads with)
    let cases: &[(&str, Option<&str>)] = &[
        ("i18live-args-namespace-fieldref", None),
        ("i18live-cluster-wide-at-zero", None),
        ("i18live-image-cmd-events-403", Some("rbac-events")),
        ("i18live-laptop-beside-others", None),
        ("i18live-events-webhook-denied", Some("event-post-denied")),
        ("i18live-crashloop-syntax-error", Some("operator-not-running")),
        ("i18live-quiet-operator", None),
        // Scenario 2 of issue 18 (captured 2026-12-03, tests/fixtures/bundles-captured/README.md).
        ("i18live-s2-alpha-chart-args", None),
        ("i18live-s2-bravo-image-cmd-events-403", Some("rbac-events")),
        ("i18live-s2-charlie-double-handling", Some("operator-not-leading")),
        ("i18live-s2-delta-handler-filtered", None),
        ("i18live-s2-echo-ours", None),
        ("i18live-s2-foxtrot-laptop", None),
        ("i18live-s2-golf-quiet", None),
        ("i18live-s2-hotel-crashloop", Some("operator-not-running")),
        ("i18live-s2-india-handler-failing", Some("handler-failing")),
        ("i18live-s2-juliet-webhook-denied", Some("event-post-denied")),
    ];
    let live: Vec<PathBuf> = bundles_in("bundles-captured")
        .into_iter()
        .filter(|d| d.file_name().unwrap().to_str().unwrap().starts_with("i18live-"))
        .collect();
    assert_eq!(live.len(), cases.len(), "every i18live capture has its case: {live:?}");
    for (bundle, cause) in cases {
        let dir = fixtures().join("bundles-captured").join(bundle);
        let d = dir.to_str().unwrap();
        let expected = expected(&dir);
        let object = expected["object"].as_str().unwrap();
        let (ns, name) = object.split_once('/').unwrap();
        let operator = expected["operator"].as_str().unwrap();

        let (_, json, err) = run(&["status", name, "-n", ns, "--bundle", d, "-o", "json"]);
        let doc: Value = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{bundle}: {e}: {err}"));
        let item = &doc["items"][0];
        assert_eq!(item["verdict"], expected["status_verdict"], "{bundle}: verdict");
        let reasons: Vec<&str> = item["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["code"].as_str().unwrap())
            .collect();
        assert_eq!(
            reasons,
            strings(&expected["status_reasons"]).collect::<Vec<_>>(),
            "{bundle}"
        );
        assert_eq!(
            item["cause"]["finding"].as_str(),
            *cause,
            "{bundle}: status NAME's cause"
        );
        let (_, human, _) = run(&["status", name, "-n", ns, "--bundle", d]);
        let line = human
            .lines()
            .find_map(|l| l.trim_start().strip_prefix("Operator:"))
            .unwrap_or_else(|| panic!("{bundle}: no Operator line:\n{human}"));
        assert!(
            line.trim_start()
                .starts_with(&format!("{operator} serves namespace {ns}")),
            "{bundle}: {line}"
        );

        let (code, json, _) = run(&["explain-events", name, "-n", ns, "--bundle", d, "-o", "json"]);
        let report: Value = serde_json::from_str(&json).unwrap();
        assert_eq!(
            i64::from(code),
            expected["explain_exit"].as_i64().unwrap(),
            "{bundle}: exit"
        );
        assert_eq!(
            report["findings"][0]["id"], expected["explain_first"],
            "{bundle}: first finding"
        );
        if let Some(id) = cause {
            assert_eq!(report["findings"][0]["id"], *id, "{bundle}");
            assert_eq!(report["findings"][0]["title"], item["cause"]["title"], "{bundle}");
        }
        let summary = report["summary"].as_str().unwrap();
        let headline = strings(&expected["explain_summary"]).next().unwrap();
        assert!(summary.starts_with(headline), "{bundle}: headline {summary:?}");
        assert_eq!(report["operator"], operator, "{bundle}: explain-events' operator");
        // Class 1: the command line as the kubelet runs it, `$(NAMESPACE)` expanded from its fieldRef.
        if bundle.starts_with("i18live-args-") || bundle.starts_with("i18live-cluster-") {
            let resolution = report["operatorResolution"].to_string();
            assert!(
                resolution.contains(
                    "watches team-alpha (its command: <ENTRYPOINT of localhost/kopf-entry:1.38> run --standalone --namespace=team-alpha /src/handlers.py)"
                ),
                "{bundle}: {resolution}"
            );
            assert!(!resolution.contains("$(NAMESPACE)"), "{bundle}: {resolution}");
        }

        // The handler's runs, as `logs` lists them (`TIME (CLOCK)  accept  NS/NAME  cause=C  outcome=O ...`).
        let (_, logs, _) = run(&["logs", "--handler", "accept", object, "--bundle", d]);
        let runs: Vec<String> = logs
            .lines()
            .filter(|l| !l.starts_with(' '))
            .filter_map(|l| {
                let words: Vec<&str> = l.split_whitespace().collect();
                (words.get(2) == Some(&"accept")).then(|| words[2..6].join(" "))
            })
            .collect();
        let want: Vec<String> = expected["logs_runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                format!(
                    "{} {} cause={} outcome={}",
                    r["handler"].as_str().unwrap(),
                    r["object"].as_str().unwrap(),
                    r["cause"].as_str().unwrap(),
                    r["outcome"].as_str().unwrap()
                )
            })
            .collect();
        assert_eq!(runs, want, "{bundle}: logs --handler accept:\n{logs}");

        // Only the object's namespace and its operator's: never another team's namespace or Pod.
        let snapshot = bundle::read(&dir).unwrap();
        let (namespaces, pods) = named_in(&snapshot);
        // Double handling names the other operator that handled the object, and only it.
        let co_handler = bundle.contains("double-handling").then_some("platform-audit");
        let own: Vec<&str> = [ns]
            .into_iter()
            .chain(operator.split_once("/deployment/").map(|(n, _)| n))
            .chain(co_handler)
            .collect();
        let own_pod = operator.split_once("/deployment/").map(|(_, n)| format!("{n}-"));
        let (_, explain_text, _) = run(&["explain-events", name, "-n", ns, "--bundle", d, "--verbose"]);
        let (_, status_text, _) = run(&["status", name, "-n", ns, "--bundle", d, "--verbose"]);
        for text in [&explain_text, &status_text] {
            for other in namespaces.iter().filter(|n| !own.contains(&n.as_str())) {
                assert!(
                    !text.contains(other.as_str()),
                    "{bundle}: names namespace {other}:\n{text}"
                );
            }
            for (pod_ns, pod) in &pods {
                if own_pod.as_deref().is_some_and(|p| pod.starts_with(p)) && own.contains(&pod_ns.as_str()) {
                    continue;
                }
                if co_handler == Some(pod_ns.as_str()) && pod.starts_with("audit-operator-") {
                    continue;
                }
                assert!(
                    !text.contains(pod.as_str()),
                    "{bundle}: names Pod {pod_ns}/{pod}:\n{text}"
                );
            }
        }
        assert!(
            namespaces.len() > own.len() || bundle.contains("crashloop") || bundle.contains("quiet"),
            "{bundle}: other teams' operators are in evidence: {namespaces:?}"
        );
    }
}

/// Issue 18, acceptance 1: every class of the issue that a cluster can show (items 1-3 and 5-10;
/// 4, fixes, and 11, contradictions, are checked over every bundle by tests/fix_safety.rs and by
/// `every_bundle_gives_its_expected_findings`) has a live capture in bundles-captured
/// (`issue_18_items` of its expected.json).
#[test]
fn the_captured_scenarios_cover_the_issue_18_classes() {
    let mut covered = BTreeSet::new();
    for dir in bundles_in("bundles-captured") {
        covered.extend(strings(&expected(&dir)["issue_18_items"]).map(str::to_string));
    }
    for item in ["1", "2", "3", "5", "6", "7", "8", "9", "10"] {
        assert!(
            covered.contains(item),
            "issue 18 item {item} has no capture: {covered:?}"
        );
    }
}

/// Issue 18 scenario 2, team-echo (bundles-captured/i18live-s2-echo-ours): ours patches only
/// `microservices/status` (a SubjectAccessReview denying `patch microservices` is no refusal of
/// its writes), so it is found beside two cluster-wide Kopf operators whose filters exclude the
/// object; and with `--operator` ours, platform-backup's line about the Backup `team-echo/api`
/// (its source handles Backups only) is no double handling, and no fix touches its Deployment.
#[test]
fn ours_serves_team_echo_and_a_backup_operators_line_is_no_double_handling() {
    let dir = fixtures().join("bundles-captured/i18live-s2-echo-ours");
    let d = dir.to_str().unwrap();
    let ours = "kms-system/deployment/microservice-operator";
    for extra in [&[][..], &["--operator", ours][..]] {
        let mut args = vec!["explain-events", "api", "-n", "team-echo", "--bundle", d, "-o", "json"];
        args.extend(extra);
        let (code, json, err) = run(&args);
        let report: Value = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{extra:?}: {e}: {err}"));
        assert_eq!(report["operator"], ours, "{extra:?}");
        assert_eq!(code, 0, "{extra:?}: {}", report["summary"]);
        // Findings and summary: the resolution lists every candidate, the findings only its own.
        let text = format!("{} {}", report["findings"], report["summary"]);
        assert!(!text.contains("platform-backup"), "{extra:?}: {text}");
        let leading = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["id"] == "operator-not-leading")
            .unwrap();
        assert_eq!(leading["severity"], "ok", "{extra:?}: {leading}");
    }
    let (_, json, _) = run(&["explain-events", "api", "-n", "team-echo", "--bundle", d, "-o", "json"]);
    let report: Value = serde_json::from_str(&json).unwrap();
    let candidates = report["operatorResolution"]["candidates"].as_array().unwrap();
    let mine = candidates.iter().find(|c| c["operator"] == ours).unwrap();
    assert!(
        !mine.to_string().contains("may not patch"),
        "ours is never refused for a permission it does not use: {mine}"
    );
}

/// Issue 18 scenario 2, team-foxtrot (bundles-captured/i18live-s2-foxtrot-laptop): the laptop
/// `operate`'s runs come from its own log alone; the two cluster-wide Kopf operators whose
/// filters exclude the object (platform-audit's, team-bravo's) are not its logs, and `logs`
/// neither reads nor lists them.
#[test]
fn a_laptop_operators_logs_are_its_own_file_only() {
    let dir = fixtures().join("bundles-captured/i18live-s2-foxtrot-laptop");
    let (code, out, err) = run(&[
        "logs",
        "--handler",
        "accept",
        "team-foxtrot/api",
        "--bundle",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("file foxtrot.log"), "{out}");
    for other in ["audit-operator-", "kopfexample-operator-"] {
        assert!(!out.contains(other), "names {other}:\n{out}");
    }
}
