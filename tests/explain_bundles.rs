//! `explain-events` on bundles: the six real bundles of ../shared/fixtures/bundles (copied to
//! tests/fixtures/bundles; each expected.json names the findings it must and must not give, the
//! exit code and the evidence words), bundles derived from that real material for findings no
//! capture covers (posting turned off unconditionally, RBAC read from rules only, expired
//! events, an operator that is missing or watches elsewhere, events not listable), the exit codes
//! through the binary, and the rendered outputs pinned with colour off (tests/snapshots;
//! `UPDATE_SNAPSHOTS=1` rewrites them).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use kubectl_microservice::cli::OutputFormat;
use kubectl_microservice::commands::explain_events::{render_report, report};
use kubectl_microservice::diagnose::events::{Finding, Options, Report, Severity};
use kubectl_microservice::evidence::{Evidence, GapReason, bundle};
use serde_json::Value;

mod support;
use support::{check_snapshot, copy_dir, fixtures, global};

const BIN: &str = env!("CARGO_BIN_EXE_kubectl-microservice");

fn explain(dir: &Path, name: &str) -> Report {
    let snapshot = bundle::read(dir).unwrap();
    report(&snapshot, "store", name, Options::default()).unwrap()
}

fn find<'a>(report: &'a Report, id: &str) -> Option<&'a Finding> {
    report.findings.iter().find(|f| f.id == id && f.severity > Severity::Ok)
}

fn expected(dir: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap()
}

fn bundles() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = fs::read_dir(fixtures().join("bundles"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

#[test]
fn every_real_bundle_gives_its_expected_findings() {
    let dirs = bundles();
    assert_eq!(dirs.len(), 6);
    for dir in dirs {
        let expected = expected(&dir);
        let name = expected["object"].as_str().unwrap().split('/').nth(1).unwrap();
        let report = explain(&dir, name);
        let ids: Vec<(&str, Severity)> = report.findings.iter().map(|f| (f.id, f.severity)).collect();
        for id in expected["explain_must"].as_array().unwrap() {
            assert!(
                find(&report, id.as_str().unwrap()).is_some(),
                "{}: must find {id}, got {ids:?}",
                dir.display()
            );
        }
        for id in expected["explain_must_not"].as_array().unwrap() {
            assert!(
                !report
                    .findings
                    .iter()
                    .any(|f| f.id == id.as_str().unwrap() && f.severity == Severity::Problem),
                "{}: must not find {id} as a problem, got {ids:?}",
                dir.display()
            );
        }
        assert_eq!(
            i64::from(report.exit_code()),
            expected["explain_exit"].as_i64().unwrap(),
            "{}: {ids:?}",
            dir.display()
        );
        for want in expected["explain_evidence"].as_array().into_iter().flatten() {
            let f = find(&report, want["id"].as_str().unwrap()).unwrap();
            let text = f.evidence.join("\n");
            for word in want["mentions"].as_array().unwrap() {
                assert!(
                    text.contains(word.as_str().unwrap()),
                    "{}: {word} not in {text}",
                    dir.display()
                );
            }
            if let (Some(file), Some(line)) = (want["file"].as_str(), want["line"].as_i64()) {
                assert!(
                    text.contains(&format!("{file}:{line}")),
                    "{}: {file}:{line} not in {text}",
                    dir.display()
                );
            }
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
    let checked: Vec<&str> = report.findings.iter().map(|f| f.id).collect();
    assert!(checked.contains(&"rbac-events") && checked.contains(&"operator-not-running"));
    assert!(
        report.summary.starts_with("Nothing is hidden: 3 event(s)"),
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
        post.evidence[0].starts_with("1 failed event POST(s)"),
        "{:?}",
        post.evidence
    );
    assert!(
        post.evidence[1].contains("2026-11-29T17:15:53.389Z (operator's clock)"),
        "{:?}",
        post.evidence
    );
}

// ---- derived bundles ----------------------------------------------------------------------------

/// A copy of a real bundle with one JSON file edited (`None` edit: the file removed).
fn derived(from: &str, file: &str, edit: Option<&dyn Fn(&mut Value)>) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&fixtures().join("bundles").join(from), tmp.path());
    let path = tmp.path().join(file);
    match edit {
        Some(edit) => {
            let mut doc: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
            edit(&mut doc);
            fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
        }
        None => fs::remove_file(&path).unwrap(),
    }
    tmp
}

fn first(doc: &mut Value) -> &mut Value {
    if doc.get("items").is_some() {
        &mut doc["items"][0]
    } else {
        doc
    }
}

#[test]
fn an_unconditional_startup_assignment_proves_posting_disabled() {
    let tmp = derived(
        "conditional-posting",
        "operator/configmaps.json",
        Some(&|doc| {
            let code = &mut first(doc)["data"]["operator.py"];
            let text = code.as_str().unwrap().replace(
                "    if os.environ.get(\"KOPF_POSTING\", \"default\") == \"disabled\":\n        settings.posting.enabled = False",
                "    settings.posting.enabled = False",
            );
            *code = Value::String(text);
        }),
    );
    let report = explain(tmp.path(), "basket-api");
    let f = find(&report, "posting-disabled").unwrap();
    assert_eq!(f.severity, Severity::Problem);
    assert!(f.title.contains("operator.py:10"), "{}", f.title);
    assert!(f.fix.as_deref().unwrap().contains("delete line 10 of operator.py"));
    assert!(find(&report, "errors-not-posted").is_none(), "{:?}", report.findings);
}

#[test]
fn kopf_1_44_does_not_post_log_records() {
    let tmp = derived(
        "conditional-posting",
        "operator/configmaps.json",
        Some(&|doc| {
            let code = &mut first(doc)["data"]["operator.py"];
            let text = code.as_str().unwrap().replace(
                "    if os.environ.get(\"KOPF_POSTING\", \"default\") == \"disabled\":\n        settings.posting.enabled = False\n",
                "",
            );
            *code = Value::String(text);
        }),
    );
    // The same material with the pip pin raised to 1.44.
    let deployment = tmp.path().join("operator/deployment.json");
    let text = fs::read_to_string(&deployment)
        .unwrap()
        .replace("kopf==1.38.0", "kopf==1.44.1");
    fs::write(&deployment, text).unwrap();
    let report = explain(tmp.path(), "basket-api");
    let f = find(&report, "errors-not-posted").unwrap();
    assert!(
        f.title.contains("Kopf 1.44 does not post log records by default"),
        "{}",
        f.title
    );
    assert!(f.fix.as_deref().unwrap().contains("settings.posting.loggers"));
    assert!(
        report.summary.contains("8 handler failure(s) in the last 1h"),
        "{}",
        report.summary
    );
}

#[test]
fn without_access_reviews_the_rules_only_suggest_denied() {
    let tmp = derived("ours-style-rbac", "rbac/access-reviews.json", None);
    let report = explain(tmp.path(), "catalog-api");
    let f = find(&report, "rbac-events").unwrap();
    assert_eq!(f.severity, Severity::Warning);
    assert!(f.title.contains("by reading Roles and bindings only"), "{}", f.title);
    assert!(
        f.evidence[0].contains("other authorizers may still allow it"),
        "{:?}",
        f.evidence
    );
    assert!(find(&report, "rbac-resource").is_none(), "{:?}", report.findings);
    // Allowed by rules is proven: the healthy Kopf bundle without reviews.
    let tmp = derived("healthy", "rbac/access-reviews.json", None);
    let report = explain(tmp.path(), "catalog-api");
    let ok = report.findings.iter().find(|f| f.id == "rbac-events").unwrap();
    assert_eq!(ok.severity, Severity::Ok);
    assert!(
        ok.evidence[0].contains("allowed by RoleBinding store/"),
        "{:?}",
        ok.evidence
    );
}

#[test]
fn without_reviews_or_rules_the_403_lines_are_the_evidence() {
    let tmp = derived("ours-style-rbac", "rbac/access-reviews.json", None);
    fs::remove_file(tmp.path().join("rbac/roles.json")).unwrap();
    let report = explain(tmp.path(), "catalog-api");
    let f = find(&report, "rbac-events").unwrap();
    assert_eq!(f.severity, Severity::Problem);
    assert!(
        f.evidence.iter().any(|e| e.starts_with("403 in the logs:")),
        "{:?}",
        f.evidence
    );
}

#[test]
fn old_failures_without_events_are_expired() {
    let tmp = derived(
        "conditional-posting",
        "meta.json",
        Some(&|doc| doc["capturedAt"] = Value::String("2026-11-29T19:00:00Z".into())),
    );
    let found = explain(tmp.path(), "basket-api");
    let f = find(&found, "events-expired").unwrap();
    assert!(
        f.title
            .starts_with("8 handler failure(s) are older than the event TTL (1h)"),
        "{}",
        f.title
    );
    assert!(f.evidence[1].contains("17:14:08.047Z"), "{:?}", f.evidence);
    // A longer TTL: not expired.
    let snapshot = bundle::read(tmp.path()).unwrap();
    let options = Options {
        event_ttl: chrono::Duration::hours(3),
        ..Options::default()
    };
    let r = report(&snapshot, "store", "basket-api", options).unwrap();
    assert!(find(&r, "events-expired").is_none());
}

#[test]
fn an_operator_watching_another_namespace_or_none_at_all() {
    let tmp = derived(
        "healthy",
        "operator/deployment.json",
        Some(&|doc| {
            let command = &mut first(doc)["spec"]["template"]["spec"]["containers"][0]["command"];
            let text = serde_json::to_string(command)
                .unwrap()
                .replace("--namespace=store", "--namespace=todo");
            *command = serde_json::from_str(&text).unwrap();
        }),
    );
    let report = explain(tmp.path(), "catalog-api");
    let f = find(&report, "operator-not-watching").unwrap();
    assert!(f.evidence[0].contains("--namespace=todo"), "{:?}", f.evidence);
    assert!(f.fix.as_deref().unwrap().contains("--namespace=store"));

    let tmp = derived(
        "healthy",
        "operator/deployment.json",
        Some(&|doc| {
            first(doc)["spec"]["template"]["spec"]["containers"][0]["command"] = serde_json::json!(["nginx"]);
        }),
    );
    let report = explain(tmp.path(), "catalog-api");
    assert!(find(&report, "operator-not-found").is_some(), "{:?}", report.findings);
}

#[test]
fn forbidden_events_are_a_finding_and_undecided_without_one() {
    let mut snapshot = bundle::read(&fixtures().join("bundles/healthy")).unwrap();
    snapshot.events = Evidence::missing("events", GapReason::Forbidden("events is forbidden".into()));
    let r = report(&snapshot, "store", "catalog-api", Options::default()).unwrap();
    let f = find(&r, "caller-cannot-list-events").unwrap();
    assert!(f.fix.as_deref().unwrap().contains("verbs: [\"get\", \"list\"]"));
    assert_eq!(r.exit_code(), 1);
    let mut snapshot = bundle::read(&fixtures().join("bundles/healthy")).unwrap();
    snapshot.operator.logs = Evidence::missing("operator logs", GapReason::NotInBundle("operator/logs".into()));
    let r = report(&snapshot, "store", "catalog-api", Options::default()).unwrap();
    assert_eq!(r.exit_code(), 3, "{:?}", r.findings);
}

#[test]
fn pruned_status_lines_are_a_problem() {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&fixtures().join("bundles/healthy"), tmp.path());
    let log = fs::read_dir(tmp.path().join("operator/logs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let mut text = fs::read_to_string(&log).unwrap();
    // Kopf 1.38's wording, as in ../shared/fixtures/kopf-1.38-real.
    text.push_str("[2026-11-29 17:11:56,001] kopf.objects         [WARNING ] [store/catalog-api] Patching failed with inconsistencies: (('remove', ('status', 'accept'), {'message': 'ok'}, None),)\n");
    fs::write(&log, text).unwrap();
    let report = explain(tmp.path(), "catalog-api");
    let f = find(&report, "status-pruned").unwrap();
    assert!(
        f.evidence[0].contains("Patching failed with inconsistencies"),
        "{:?}",
        f.evidence
    );
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
        ("ours-style-rbac", "catalog-api"),
        ("conditional-posting", "basket-api"),
        ("recreated-uid", "wishlist-api"),
    ] {
        let report = explain(&fixtures().join("bundles").join(bundle), name);
        check_snapshot(
            &format!("explain-{bundle}.txt"),
            &render_report(&report, &global(None), false),
        );
        check_snapshot(
            &format!("explain-{bundle}.json"),
            &render_report(&report, &global(Some(OutputFormat::Json)), false),
        );
    }
}

#[test]
fn the_shipped_examples_diagnose_as_the_readme_says() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let healthy = explain(&examples.join("healthy"), "catalog-api");
    assert_eq!(healthy.exit_code(), 0, "{:?}", healthy.findings);
    let hidden = explain(&examples.join("warnings-hidden"), "basket-api");
    assert_eq!(hidden.exit_code(), 1);
    let f = find(&hidden, "errors-not-posted").unwrap();
    assert!(
        f.evidence.iter().any(|e| e.contains("undecidable, line 11")),
        "{:?}",
        f.evidence
    );
}

// ---- ../shared/fixtures/kopf-1.38-real: the conclusions its INDEX.md table names -------------------

/// A bundle assembled from the real Kopf 1.38 captures (tests/fixtures/kopf-1.38-real): the
/// object (YAML as captured), its events, one log, and optionally the in-cluster Deployment with
/// its ConfigMap (deployment/). Synthetic only in the assembling: every file is real.
fn kopf_real(object: &str, events: &str, log: &str, with_deployment: bool) -> tempfile::TempDir {
    let real = fixtures().join("kopf-1.38-real");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let obj: Value = serde_yaml::from_str(&fs::read_to_string(real.join(object)).unwrap()).unwrap();
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
    assert!(r.summary.starts_with("Nothing is hidden: 3 event(s)"), "{}", r.summary);
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
        f.evidence.iter().any(|e| e.contains("4 handler failure(s)")),
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
    assert!(f.evidence[0].starts_with("4 handler failure(s)"), "{:?}", f.evidence);
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
        post.evidence[0].starts_with("4 failed event POST(s) in the operator's logs, codes: 403"),
        "{:?}",
        post.evidence
    );
    // 9 attempts per POST: 8 retries and the escalation, for each of the 4 events.
    assert!(
        post.evidence[2].starts_with("36 failed request attempt(s) before giving up"),
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
    let plain = render_report(&report, &global(None), false);
    assert!(!plain.contains('\u{1b}'), "{plain}");
    assert!(plain.contains("PROBLEM  rbac-events"), "{plain}");
    let coloured = render_report(&report, &global(None), true);
    assert!(coloured.contains("\u{1b}[31mPROBLEM\u{1b}[39m"), "{coloured}");
    assert!(!coloured.contains("\u{1b}[2J"), "{coloured}");
}

#[test]
fn a_status_schema_without_the_written_fields_prunes_them() {
    let tmp = derived(
        "ours-style-rbac",
        "crd.json",
        Some(&|doc| {
            doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"] =
                serde_json::json!({"type": "object", "properties": {"phase": {"type": "string"}}});
        }),
    );
    let r = explain(tmp.path(), "catalog-api");
    let f = find(&r, "status-pruned").unwrap();
    assert_eq!(f.severity, Severity::Problem);
    assert!(
        f.title.contains("status.observedGeneration, status.conditions"),
        "{}",
        f.title
    );
}
