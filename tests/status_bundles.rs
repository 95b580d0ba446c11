//! `status` on bundles: the real bundles of ../shared/fixtures/bundles (copied to
//! tests/fixtures/bundles, with the verdicts each should get in its expected.json), and bundles
//! derived from real captured material for the cases no capture covers (stale by generation,
//! invalid, managedFields only, events not listable). Also the rendered outputs, pinned with
//! colour off and the bundle's clock (tests/snapshots; `UPDATE_SNAPSHOTS=1` rewrites them).

use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use kubectl_microservice::commands::status::{Report, detail, render_report, report, table, watch_rows};
use kubectl_microservice::evidence::bundle;
use kubectl_microservice::render::OutputFormat;
use serde_json::{Value, json};

mod support;
use support::{check_snapshot, copy_dir, fixtures, global};

const BIN: &str = env!("CARGO_BIN_EXE_kubectl-microservice");
const SKEW: Duration = Duration::from_secs(2);

fn bundle_report(dir: &Path) -> Report {
    report(&bundle::read(dir).unwrap(), None, None, SKEW)
}

#[test]
fn every_bundle_gets_its_expected_verdict() {
    let mut seen = 0;
    let folders =
        ["bundles", "bundles-captured", "bundles-synthetic"].map(|f| fs::read_dir(fixtures().join(f)).unwrap());
    for entry in folders.into_iter().flatten() {
        let dir = entry.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        let expected: Value = serde_json::from_str(&fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
        let report = bundle_report(&dir);
        let object = expected["object"].as_str().unwrap();
        let item = report
            .items
            .iter()
            .find(|i| format!("{}/{}", i.namespace, i.name) == object)
            .unwrap();
        assert_eq!(item.verdict.as_str(), expected["status_verdict"], "{}", dir.display());
        for code in expected["status_reasons"].as_array().into_iter().flatten() {
            assert!(
                item.reasons.iter().any(|r| r.code == code.as_str().unwrap()),
                "{}: {:?}",
                dir.display(),
                item.reasons
            );
        }
        for change in expected["status_changed_fields"].as_array().into_iter().flatten() {
            assert!(
                item.changed_fields
                    .iter()
                    .any(|c| c.field == change["field"] && c.old == change["old"] && c.new == change["new"]),
                "{}: {:?}",
                dir.display(),
                item.changed_fields
            );
        }
        seen += 1;
    }
    assert!(seen >= 6 + 4 + 12, "{seen} bundles");
}

#[test]
fn kopf_verdicts_say_which_evidence() {
    let healthy = bundle_report(&fixtures().join("bundles/healthy"));
    assert_eq!(healthy.items[0].reasons[0].code, "last-cycle-succeeded");
    assert!(
        healthy.items[0].reasons[0]
            .evidence
            .iter()
            .any(|e| e.contains("Creation is processed: 1 succeeded; 0 failed."))
    );
    let failed = bundle_report(&fixtures().join("bundles/failed-cycle"));
    assert!(
        failed.items[0].reasons[0]
            .evidence
            .iter()
            .any(|e| e.contains("Updating is processed: 0 succeeded; 1 failed."))
    );
    let retrying = bundle_report(&fixtures().join("bundles/conditional-posting"));
    let evidence = &retrying.items[0].reasons[0].evidence;
    assert!(
        evidence
            .iter()
            .any(|e| e.contains("8 tries for purpose create") && e.contains("registry unreachable")),
        "{evidence:?}"
    );
    assert!(
        evidence
            .iter()
            .any(|e| e.contains("failed temporarily: registry unreachable")),
        "{evidence:?}"
    );
}

/// Issue 11 item 3, captured live: a Kopf operator restarted and its resume handler retries. With
/// the log from before the restart (its success line) given too, the verdict stays `retrying`:
/// the success is not the latest cycle.
#[test]
fn a_resume_retrying_after_a_restart_is_not_fresh() {
    let dir = fixtures().join("bundles-captured/kopf-resume-retrying-after-restart");
    let out = Command::new(BIN)
        .args(["status", "todo-api", "-o", "json", "--bundle"])
        .arg(&dir)
        .arg("--log-file")
        .arg(dir.join("before-restart.kopf-operator.log.txt"))
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let item = &json["items"][0];
    assert_eq!(item["verdict"], "stale", "{item}");
    let reason = &item["reasons"][0];
    assert_eq!(reason["code"], "retrying", "{item}");
    let message = reason["message"].as_str().unwrap();
    assert!(
        message.contains("tried 3 time(s) for purpose resume")
            && message.contains("image pull check failed")
            && message.contains("next try at 2026-12-01T04:28:06Z"),
        "{message}"
    );
    let evidence = reason["evidence"].to_string();
    assert!(
        evidence.contains("earlier cycle end, not the latest news")
            && evidence.contains("Creation is processed: 1 succeeded"),
        "{evidence}"
    );
}

/// Issue 11 item 4 (nolar/kopf#1087), captured live: Kopf's final PATCH of each cycle is refused
/// (422, annotations too long). Never fresh; the 422 named first; the next step is the fix.
#[test]
fn a_cycle_whose_final_patch_is_rejected_is_never_fresh() {
    let dir = fixtures().join("bundles-captured/kopf-patch-rejected-annotations");
    let r = bundle_report(&dir);
    let item = |n: &str| r.items.iter().find(|i| i.name == n).unwrap();
    let codes = |n: &str| item(n).reasons.iter().map(|r| r.code).collect::<Vec<_>>();
    assert_eq!(item("big-api").verdict.as_str(), "never-handled");
    assert_eq!(codes("big-api"), ["patch-rejected"]);
    assert_eq!(item("grown-api").verdict.as_str(), "stale");
    assert_eq!(codes("grown-api"), ["patch-rejected", "spec-changed-since-handled"]);
    for n in ["big-api", "grown-api"] {
        let m = &item(n).reasons[0].message;
        assert!(
            m.contains("422 Invalid: ") && m.contains("metadata.annotations: Too long: must have at most 262144 bytes"),
            "{n}: {m}"
        );
    }
    let (code, out, _) = status_cli(&["status", "grown-api", "--exit-code", "--bundle", dir.to_str().unwrap()]);
    assert_eq!(code, Some(1));
    assert!(
        out.contains("Next:           see why and the fix: kubectl microservice explain-events grown-api -n kms-k11k-annot --bundle"),
        "{out}"
    );
}

/// Issue 11 item 5, captured live: Kopf's finalizer left behind holds a deletion; `status` says
/// `terminating` with the guarded patch, and `--exit-code` exits 1.
#[test]
fn a_kopf_finalizer_left_behind_is_terminating() {
    let dir = fixtures().join("bundles-captured/kopf-finalizer-terminating");
    let out = Command::new(BIN)
        .args(["status", "todo-api", "--exit-code", "--bundle"])
        .arg(&dir)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("kms-i11-terminating/todo-api: terminating"), "{text}");
    assert!(
        text.contains("[deletion-pending]") && !text.contains("generation-ahead"),
        "{text}"
    );
    assert!(
        text.contains(r#"Next:           remove kopf.zalando.org/KopfFinalizerMarker (its owner is not running; the test op makes the patch fail if the list changed): kubectl -n kms-i11-terminating patch microservice todo-api --type=json -p '[{"op":"test","path":"/metadata/finalizers/0","value":"kopf.zalando.org/KopfFinalizerMarker"},{"op":"remove","path":"/metadata/finalizers/0"}]'"#),
        "{text}"
    );
}

/// Issue 18 trial P7: the pending deletion is both the verdict's reason and explain-events'
/// first finding: `status NAME`'s Why says it once (the `Cause:` line, its evidence under it),
/// never "Terminating: ..." twice.
#[test]
fn a_pending_deletions_why_says_terminating_once() {
    let dir = fixtures().join("bundles-captured/kopf-finalizer-terminating");
    let out = Command::new(BIN)
        .args(["status", "todo-api", "--bundle"])
        .arg(&dir)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let why: Vec<&str> = text
        .lines()
        .skip_while(|l| l.trim() != "Why:")
        .skip(1)
        .take_while(|l| l.starts_with("    "))
        .collect();
    assert!(
        why[0].starts_with("    Cause: Terminating: deletion requested at 2026-12-01T03:55:38Z")
            && why[0].contains("[deletion-pending]"),
        "{text}"
    );
    assert_eq!(
        why.iter()
            .filter(|l| l.contains("Terminating: deletion requested"))
            .count(),
        1,
        "{text}"
    );
    assert!(
        why[1]
            .trim_start()
            .starts_with("- metadata.deletionTimestamp=2026-12-01T03:55:38Z"),
        "{text}"
    );
}

/// Issue 18 trial P3: docs/contracts.md says `status` exits 1 for a problem only with
/// `--exit-code` (0 otherwise, as `kubectl get`): `status NAME` of a never-handled object exits
/// 0, with `--exit-code` 1, and `--help` says both.
#[test]
fn status_name_exits_0_for_a_never_handled_object_unless_exit_code() {
    let dir = fixtures().join("bundles-synthetic/kopf-1.44-errors-not-posted");
    let code = |extra: &[&str]| {
        Command::new(BIN)
            .args(["status", "basket-api", "-n", "store", "--bundle"])
            .arg(&dir)
            .args(extra)
            .output()
            .unwrap()
            .status
            .code()
    };
    assert_eq!(code(&[]), Some(0));
    assert_eq!(code(&["--exit-code"]), Some(1));
    let help = Command::new(BIN).args(["status", "--help"]).output().unwrap();
    // Words, whatever the terminal width wraps.
    let help = String::from_utf8_lossy(&help.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        help.contains("--exit-code") && help.contains("without it `status` exits 0 whatever the verdicts"),
        "{help}"
    );
}

/// Copies a real bundle to a temporary directory and lets `edit` change its microservices.
fn derived(from: &str, edit: impl FnOnce(&mut Value)) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&fixtures().join("bundles").join(from), tmp.path());
    let path = tmp.path().join("microservices.json");
    let mut doc: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    edit(&mut doc["items"][0]);
    fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    tmp
}

#[test]
fn ours_stale_by_generation() {
    let dir = derived("ours-style-rbac", |obj| {
        obj["metadata"]["generation"] = json!(2);
        obj["spec"]["port"] = json!(7001);
        obj["metadata"]["managedFields"].as_array_mut().unwrap().push(json!({
            "apiVersion": "platform.example.io/v1alpha1", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:port": {}}},
            "manager": "kubectl-patch", "operation": "Update", "time": "2026-11-29T17:16:30Z"
        }));
    });
    let r = bundle_report(dir.path());
    assert_eq!(r.items[0].verdict.as_str(), "stale");
    // The operator's logs end before the (derived) change: said first (issue 11 item 6).
    let codes: Vec<&str> = r.items[0].reasons.iter().map(|r| r.code).collect();
    assert_eq!(codes, ["nothing-logged-since-change", "generation-ahead"]);
    assert!(
        r.items[0].reasons[1]
            .message
            .contains("spec.port (by kubectl-patch (Update) at 2026-11-29T17:16:30Z)"),
        "{}",
        r.items[0].reasons[1].message
    );
    assert_eq!(r.items[0].observed_generation, Some(1));
}

#[test]
fn ours_invalid() {
    let dir = derived("ours-style-rbac", |obj| {
        obj["spec"]["port"] = json!("eighty");
        obj["status"] = json!({"phase": "Invalid", "observedGeneration": 1, "conditions": [{"type": "Accepted", "status": "False",
            "reason": "InvalidSpec", "message": "spec.port: expected an integer 1..65535, got \"eighty\"", "observedGeneration": 1,
            "lastTransitionTime": "2026-11-29T17:15:53Z"}]});
    });
    let r = bundle_report(dir.path());
    assert_eq!(r.items[0].verdict.as_str(), "invalid");
    assert!(
        r.items[0].reasons[0]
            .message
            .contains("spec.port: expected an integer 1..65535")
    );
}

fn smoke_bundle(edit: impl FnOnce(&mut Value)) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let raw = fs::read_to_string(fixtures().join("s-smoke-cr-after-manual-status-patch.yaml")).unwrap();
    let mut obj: Value = serde_saphyr::from_str(&raw).unwrap();
    edit(&mut obj);
    let list = json!({"apiVersion": "v1", "kind": "List", "items": [obj]});
    fs::write(tmp.path().join("microservices.json"), list.to_string()).unwrap();
    fs::write(
        tmp.path().join("meta.json"),
        r#"{"capturedAt": "2026-11-29T16:30:00Z", "namespace": "todo"}"#,
    )
    .unwrap();
    tmp
}

#[test]
fn managed_fields_only() {
    // The real object: status written by hand (kubectl-patch on /status) in the same second as
    // the spec, whose writer also owns an annotation: undecidable, both entries shown.
    let real = smoke_bundle(|_| {});
    let r = bundle_report(real.path());
    assert_eq!(r.items[0].verdict.as_str(), "unknown");
    assert_eq!(r.items[0].reasons[0].code, "managed-fields-undecidable");
    assert_eq!(r.items[0].reasons[0].evidence.len(), 2);
    // A later spec-only write, beyond the skew tolerance: stale.
    let later = smoke_bundle(|obj| {
        obj["metadata"]["generation"] = json!(2);
        obj["spec"]["port"] = json!(9090);
        obj["metadata"]["managedFields"].as_array_mut().unwrap().push(json!({
            "apiVersion": "platform.example.io/v1alpha1", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:port": {}}},
            "manager": "kubectl-patch", "operation": "Update", "time": "2026-11-29T16:25:00Z"
        }));
    });
    let r = bundle_report(later.path());
    assert_eq!(r.items[0].verdict.as_str(), "stale");
    assert_eq!(r.items[0].reasons[0].code, "spec-written-after-status");
}

#[test]
fn events_not_listable_show_a_question_mark() {
    let dir = derived("healthy", |_| {});
    fs::remove_file(dir.path().join("events.json")).unwrap();
    let r = bundle_report(dir.path());
    assert_eq!(r.items[0].warnings, None);
    assert_eq!(r.items[0].verdict.as_str(), "fresh");
    assert!(r.gaps.iter().any(|g| g.evidence == "events"));
    let out = table(&r, false, false, false, false);
    assert!(out.lines().nth(1).unwrap().contains("   ?   "), "{out}");
}

#[test]
fn rendered_outputs_are_pinned() {
    let stale = bundle_report(&fixtures().join("bundles/stale-port"));
    check_snapshot(
        "status-stale-port.table.txt",
        &render_report(&stale, &global(None), None, false).unwrap(),
    );
    check_snapshot(
        "status-stale-port.wide.txt",
        &render_report(&stale, &global(Some(OutputFormat::Wide)), None, false).unwrap(),
    );
    check_snapshot("status-stale-port.detail.txt", &detail(&stale, &stale.items[0], false));
    check_snapshot(
        "status-stale-port.json",
        &render_report(&stale, &global(Some(OutputFormat::Json)), None, false).unwrap(),
    );
    let retrying = bundle_report(&fixtures().join("bundles/conditional-posting"));
    check_snapshot(
        "status-conditional-posting.detail.txt",
        &detail(&retrying, &retrying.items[0], false),
    );
}

#[test]
fn json_output_follows_the_contract() {
    let r = bundle_report(&fixtures().join("bundles/stale-port"));
    let v: Value =
        serde_json::from_str(&render_report(&r, &global(Some(OutputFormat::Json)), None, false).unwrap()).unwrap();
    assert_eq!(v["schemaVersion"], 1);
    let item = &v["items"][0];
    for key in ["namespace", "name", "phase", "verdict", "reasons"] {
        assert!(item.get(key).is_some(), "{key} missing");
    }
    assert_eq!(item["verdict"], "stale");
    for key in ["code", "message", "evidence"] {
        assert!(item["reasons"][0].get(key).is_some(), "reasons[].{key} missing");
    }
    assert!(item["lastHandled"].as_str().unwrap().ends_with('Z'));
}

#[test]
fn command_line_exit_codes() {
    let dir = fixtures().join("bundles/stale-port");
    let run = |args: &[&str]| Command::new(BIN).args(args).env("NO_COLOR", "1").output().unwrap();
    let ok = run(&["status", "--bundle", dir.to_str().unwrap()]);
    assert_eq!(ok.status.code(), Some(0));
    let flagged = run(&["status", "--bundle", dir.to_str().unwrap(), "--exit-code"]);
    assert_eq!(flagged.status.code(), Some(1));
    let missing = run(&["status", "--bundle", dir.to_str().unwrap(), "nope"]);
    assert_eq!(missing.status.code(), Some(3));
    assert_eq!(
        String::from_utf8_lossy(&missing.stderr).trim(),
        "error: microservice \"nope\" not found in namespace \"store\""
    );
    let bad = run(&["status", "--bundle", "/no/such/bundle"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("/no/such/bundle"));
    let empty = tempfile::tempdir().unwrap();
    let undecided = run(&["status", "--bundle", empty.path().to_str().unwrap()]);
    assert_eq!(undecided.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&undecided.stderr).contains("microservices: not in the bundle"));
}

/// Runs the binary with colour off; (exit code, stdout, stderr).
fn status_cli(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(BIN).args(args).env("NO_COLOR", "1").output().unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// `-l` filters a bundle's Microservices as a live list with `labelSelector` does, and is
/// validated as the API server validates it (it was ignored with --bundle, `!!bad` accepted).
#[test]
fn label_selector_applies_to_a_bundle() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("b");
    copy_dir(&fixtures().join("bundles/healthy"), &dir);
    let path = dir.join("microservices.json");
    let mut list: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    let mut web = list["items"][0].clone();
    list["items"][0]["metadata"]["labels"] = json!({"app": "catalog", "tier": "api"});
    web["metadata"]["name"] = json!("catalog-web");
    web["metadata"]["uid"] = json!("uid-catalog-web");
    web["metadata"]["labels"] = json!({"app": "catalog", "tier": "web", "rev": "7"});
    list["items"].as_array_mut().unwrap().push(web);
    fs::write(&path, list.to_string()).unwrap();
    let bundle = dir.to_str().unwrap();
    let names = |selector: &str| -> Vec<String> {
        let (code, out, err) = status_cli(&["status", "--bundle", bundle, "-l", selector, "-o", "json"]);
        assert_eq!(code, Some(0), "-l {selector}: {err}");
        let v: Value = serde_json::from_str(&out).unwrap();
        v["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(names("app=catalog"), ["catalog-api", "catalog-web"]);
    assert_eq!(names("tier=api"), ["catalog-api"]);
    assert_eq!(names("tier in (web),rev>5"), ["catalog-web"]);
    assert_eq!(names("!rev"), ["catalog-api"]);
    assert_eq!(names("app=nothing"), Vec::<String>::new());
    let (code, out, err) = status_cli(&["status", "--bundle", bundle, "-l", "app=nothing"]);
    assert_eq!((code, out.as_str(), err.trim()), (Some(0), "", "No resources found"));
    for (bad, message) in [
        ("!!bad", "unable to parse requirement: found '!', expected: identifier"),
        (
            "a b",
            "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt",
        ),
        ("app=a,,b=c", "found ',', expected: identifier after ','"),
    ] {
        let (code, out, err) = status_cli(&["status", "--bundle", bundle, "-l", bad]);
        assert_eq!(code, Some(2), "-l {bad}");
        assert_eq!(out, "");
        assert_eq!(err.trim(), format!("error: invalid -l/--selector {bad:?}: {message}"));
    }
    // A name and a selector exclude each other, as in kubectl.
    let (code, _, err) = status_cli(&["status", "--bundle", bundle, "catalog-api", "-l", "tier=api"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("a NAME and -l/--selector exclude each other"), "{err}");
}

/// `--operator NS/deployment/NAME` with a bundle of two operators diagnoses the one named; one
/// the bundle does not hold is an error naming it, never another operator in its place.
#[test]
fn operator_flag_selects_the_bundles_deployment() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("b");
    copy_dir(&fixtures().join("bundles/healthy"), &dir);
    let deployment: Value =
        serde_json::from_str(&fs::read_to_string(dir.join("operator/deployment.json")).unwrap()).unwrap();
    let mut second = deployment.clone();
    second["metadata"]["name"] = json!("second-operator");
    second["spec"]["selector"] = json!({"matchLabels": {"app": "second-operator"}});
    second["spec"]["template"]["metadata"]["labels"] = json!({"app": "second-operator"});
    fs::write(
        dir.join("operator/deployment.json"),
        json!({"apiVersion": "v1", "kind": "List", "items": [deployment, second]}).to_string(),
    )
    .unwrap();
    let bundle = dir.to_str().unwrap();
    let operator_of = |flag: &str| {
        let (code, out, err) = status_cli(&["status", "--bundle", bundle, "--operator", flag, "-o", "json"]);
        assert_eq!(code, Some(0), "{err}");
        let v: Value = serde_json::from_str(&out).unwrap();
        (v["items"][0]["operator"].clone(), err)
    };
    for name in ["catalog-operator", "second-operator"] {
        let (operator, err) = operator_of(&format!("store/deployment/{name}"));
        assert_eq!(operator, json!(format!("store/deployment/{name}")), "{err}");
    }
    // One the bundle does not hold is an error naming it and what the bundle holds (exit 3),
    // with nothing on stdout as if it were an answer (issue 14 item 2), in every command.
    for command in [
        vec!["status", "--bundle", bundle, "--operator", "ops/deployment/nope"],
        vec![
            "status",
            "catalog-api",
            "--bundle",
            bundle,
            "--operator",
            "ops/deployment/nope",
        ],
        vec![
            "explain-events",
            "catalog-api",
            "--bundle",
            bundle,
            "--operator",
            "ops/deployment/nope",
        ],
    ] {
        let (code, out, err) = status_cli(&command);
        assert_eq!((code, out.as_str()), (Some(3), ""), "{command:?}: {err}");
        assert_eq!(
            err.trim(),
            format!(
                "error: --operator ops/deployment/nope: not in the bundle {bundle}, whose operator/deployment.json holds store/deployment/catalog-operator, store/deployment/second-operator"
            ),
            "{command:?}"
        );
    }
    let (code, _, err) = status_cli(&["status", "--bundle", bundle, "--operator", "nope"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("invalid value 'nope' for '--operator <NS/deployment/NAME>': expected NAMESPACE/deployment/NAME"),
        "{err}"
    );
}

/// `status -w` prints a changed row in the columns of the table printed first (issue 14: the
/// rows were a new table of their own, aligned to nothing).
#[test]
fn watch_rows_line_up_with_the_first_table() {
    let first = bundle_report(&fixtures().join("bundles/healthy"));
    let mut changed = first.clone();
    let item = &mut changed.items[0];
    item.name = "a".into();
    item.phase = None;
    for wide in [false, true] {
        let printed = table(&first, wide, false, false, false);
        let row = watch_rows(&first, &changed, wide, false, false);
        assert_eq!(row.lines().count(), 1, "{row}");
        let header = printed.lines().next().unwrap();
        // Each header's column starts where the row's cell starts.
        for column in ["PHASE", "IMAGE", "VERDICT", "AGE"] {
            let at = header.find(&format!(" {column}")).unwrap() + 1;
            assert!(
                at > 0 && row.as_bytes()[at - 1] == b' ' && row.as_bytes()[at] != b' ',
                "{column}:\n{printed}{row}"
            );
        }
        assert!(row.starts_with("a "), "{row}");
        assert!(row.contains("<none>"), "{row}");
    }
}

/// Copies a real bundle whose Kopf logs are in UTC and rewrites them as a container in `tz`
/// would have written them (Kopf's `full` format: local wall time, no zone), with `TZ` set in
/// the operator Pod's env when `set_tz`.
fn written_in_zone(from: &str, tz: &str, hours_east: i64, set_tz: bool) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&fixtures().join("bundles").join(from), tmp.path());
    let stamp = regex::Regex::new(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3})\]").unwrap();
    for entry in fs::read_dir(tmp.path().join("operator/logs")).unwrap() {
        let path = entry.unwrap().path();
        let text = fs::read_to_string(&path).unwrap();
        let shifted: String = text
            .lines()
            .map(|line| {
                let replaced = stamp.replace(line, |c: &regex::Captures<'_>| {
                    let utc = chrono::NaiveDateTime::parse_from_str(&c[1], "%Y-%m-%d %H:%M:%S").unwrap();
                    let local = utc + chrono::TimeDelta::hours(hours_east);
                    format!("[{},{}]", local.format("%Y-%m-%d %H:%M:%S"), &c[2])
                });
                format!("{replaced}\n")
            })
            .collect();
        assert!(
            hours_east == 0 || shifted != text,
            "{}: no Kopf full-format line",
            path.display()
        );
        fs::write(&path, shifted).unwrap();
    }
    if set_tz {
        let path = tmp.path().join("operator/pods.json");
        let mut pods: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        for pod in pods["items"].as_array_mut().unwrap() {
            for c in pod["spec"]["containers"].as_array_mut().unwrap() {
                c["env"]
                    .as_array_mut()
                    .unwrap()
                    .push(json!({"name": "TZ", "value": tz}));
            }
        }
        fs::write(&path, serde_json::to_string_pretty(&pods).unwrap()).unwrap();
    }
    tmp
}

/// Issue 11 item 7: Kopf's `full` log times are the container's local time. With `TZ` set in
/// the operator Pod's env, they are read in that zone, so the verdict, its reasons and the
/// handling time are those of the same bundle logged in UTC; the note says which zone was used.
/// Read as UTC instead (the bug), Taipei's cycle looked 8 h later than the spec change (stale
/// called fresh) and Los Angeles' looked older than the object.
#[test]
fn kopf_local_times_are_read_in_the_pods_tz() {
    for from in ["healthy", "stale-port", "failed-cycle"] {
        let utc = bundle_report(&fixtures().join("bundles").join(from));
        for (tz, east) in [("Asia/Taipei", 8), ("America/Los_Angeles", -8)] {
            let zoned = bundle_report(written_in_zone(from, tz, east, true).path());
            let (a, b) = (&utc.items[0], &zoned.items[0]);
            assert_eq!(b.verdict, a.verdict, "{from} {tz}");
            assert_eq!(
                b.reasons.iter().map(|r| r.code).collect::<Vec<_>>(),
                a.reasons.iter().map(|r| r.code).collect::<Vec<_>>(),
                "{from} {tz}"
            );
            assert_eq!(b.last_handled, a.last_handled, "{from} {tz}");
            // Where a log line is cited, it is placed at the UTC time of the UTC log.
            let logged_at = |r: &Report| -> Vec<String> {
                r.items[0]
                    .reasons
                    .iter()
                    .flat_map(|r| &r.evidence)
                    .filter_map(|e| {
                        e.split("(logged at ")
                            .nth(1)
                            .map(|t| t.split(',').next().unwrap().to_string())
                    })
                    .collect()
            };
            assert_eq!(logged_at(&zoned), logged_at(&utc), "{from} {tz}");
            if b.reasons
                .iter()
                .any(|r| r.evidence.iter().any(|e| e.contains("operator's local time")))
            {
                let note = zoned.notes.join("\n");
                assert!(
                    note.contains(&format!(
                        "read in {tz} (TZ={tz} in the env of container operator of Pod"
                    )),
                    "{note}"
                );
            }

            // The same log read as UTC gets another answer: the zone is what makes it right.
            // Without TZ the log's own cycles, lined up with the API server's managedFields
            // times of their writes, give the offset: the same times, and the note says how.
            let calibrated = bundle_report(written_in_zone(from, tz, east, false).path());
            assert_eq!(calibrated.items[0].verdict, a.verdict, "{from} {tz}");
            assert_eq!(logged_at(&calibrated), logged_at(&utc), "{from} {tz}");
            if !logged_at(&utc).is_empty() {
                let note = calibrated.notes.join("\n");
                let offset = if east > 0 { "+08:00" } else { "-08:00" };
                assert!(
                    note.contains(&format!("read at UTC{offset}: 1 handling cycle in the log of ")),
                    "{note}"
                );
                assert!(!note.contains("conflict"), "{note}");
            }
        }
    }
    // stale-port is stale; its Taipei log read as UTC put the cycle after the spec change.
    let stale = bundle_report(written_in_zone("stale-port", "Asia/Taipei", 8, true).path());
    assert_eq!(stale.items[0].verdict.as_str(), "stale");
}

/// `TZ=Asia/Taipei` in the env, but the log was written in UTC (an image without time zone
/// data: glibc then uses UTC whatever TZ says). The cycles' writes line up at UTC+00:00, not
/// at Taipei's +08:00: read by the writes, and the conflict with TZ is named.
#[test]
fn a_tz_that_the_writes_contradict_is_named_as_a_conflict() {
    let utc = bundle_report(&fixtures().join("bundles/healthy"));
    let dir = written_in_zone("healthy", "Asia/Taipei", 0, true);
    let r = bundle_report(dir.path());
    assert_eq!(r.items[0].verdict, utc.items[0].verdict);
    assert_eq!(r.items[0].reasons[0].evidence, utc.items[0].reasons[0].evidence);
    let note = r.notes.join("\n");
    assert!(
        note.contains("read at UTC+00:00: 1 handling cycle in the log of catalog-operator-6d4f9f788f-4759c/operator lines up with the API server's managedFields time of its write only at that offset, in conflict with TZ=Asia/Taipei in the env of container operator of Pod store/catalog-operator-6d4f9f788f-4759c"),
        "{note}"
    );
}

/// Issue 11 item 7, captured live (tests/fixtures/bundles-captured/kopf-laptop-log-los-angeles):
/// a laptop Kopf run with TZ=America/Los_Angeles, its log given as a file. Nothing says the
/// file's zone; its cycle lines up with the object's managedFields write at UTC-08:00 only, so
/// the cycle is placed at 09:05:02Z (not 01:05:02Z, before the object existed) and the note says how.
#[test]
fn a_laptop_kopf_log_in_los_angeles_time_is_placed_by_the_api_server() {
    let r = bundle_report(&fixtures().join("bundles-captured/kopf-laptop-log-los-angeles"));
    let item = &r.items[0];
    assert_eq!(item.verdict.as_str(), "fresh");
    assert_eq!(item.operator.as_deref(), Some("log-file/kopf-la.log"));
    assert!(
        item.reasons[0]
            .evidence
            .iter()
            .any(|e| e.contains("Updating is processed: 1 succeeded; 0 failed. (logged at 2026-12-01T09:05:02Z")),
        "{:?}",
        item.reasons
    );
    assert_eq!(
        r.notes,
        [
            "\"operator's local time\" (operator-local) is the time Kopf's full format writes, without a zone: read at UTC-08:00: 1 handling cycle in --log-file kopf-la.log lines up with the API server's managedFields time of its write only at that offset; logs read with kubelet timestamps have a better clock"
        ]
    );
}

/// `-n NS` that the bundle did not collect was "No resources found in NS namespace." (exit 0),
/// kubectl's words for a server that has none (issue 14 item 3): a bundle holds only what it
/// collected, so it is an evidence gap naming what the bundle holds (exit 3), in every command.
#[test]
fn a_namespace_the_bundle_does_not_hold_is_named_as_such() {
    let bundle = format!("{}/examples/healthy", env!("CARGO_MANIFEST_DIR"));
    let expected = format!(
        "error: the bundle {bundle} holds namespace store (meta.json), not nope: a bundle holds only what it collected"
    );
    for command in [
        vec!["status", "-n", "nope", "--bundle", &bundle],
        vec!["status", "catalog-api", "-n", "nope", "--bundle", &bundle],
        vec!["status", "nope/catalog-api", "--bundle", &bundle],
        vec!["explain-events", "catalog-api", "-n", "nope", "--bundle", &bundle],
        vec!["explain-events", "nope/catalog-api", "--bundle", &bundle],
        vec![
            "logs",
            "--handler",
            "accept",
            "catalog-api",
            "-n",
            "nope",
            "--bundle",
            &bundle,
        ],
        vec!["logs", "--handler", "accept", "nope/catalog-api", "--bundle", &bundle],
        vec!["logs", "--handler", "accept", "-n", "nope", "--bundle", &bundle],
    ] {
        let (code, out, err) = status_cli(&command);
        assert_eq!((code, out.as_str()), (Some(3), ""), "{command:?}: {err}");
        assert_eq!(err.trim(), expected, "{command:?}");
        assert!(!err.contains("No resources found"), "{command:?}");
    }
    // The namespace it holds still answers.
    let (code, _, err) = status_cli(&["status", "-n", "store", "--bundle", &bundle]);
    assert_eq!(code, Some(0), "{err}");
}

/// Issue 11 trial A, captured live: a Kopf create failed permanently, then its Deployment (and
/// log) was deleted. The object's own Kopf events (`Creation is processed: 0 succeeded; 1
/// failed.`, reason Logging) are the cycle's end: `stale`, never `fresh` with "nothing to do".
/// Without those events nothing says how the cycle ended: `unknown`, and the next command reads
/// the evidence rather than "nothing to do".
#[test]
fn a_permanent_failure_whose_pod_is_gone_is_read_from_the_objects_events() {
    let dir = fixtures().join("bundles-captured/kopf-permanent-failure-operator-gone");
    let r = bundle_report(&dir);
    let item = &r.items[0];
    assert_eq!(item.verdict.as_str(), "stale", "{:?}", item.reasons);
    assert_eq!(item.reasons[0].code, "last-handling-failed");
    assert!(
        item.reasons[0]
            .evidence
            .iter()
            .any(|e| e.contains("Creation is processed: 0 succeeded; 1 failed.")
                && e.contains("the object's Kopf event")),
        "{:?}",
        item.reasons[0].evidence
    );
    let text = detail(&r, &r.items[0], false);
    assert!(!text.contains("nothing to do"), "{text}");

    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&dir, tmp.path());
    fs::write(
        tmp.path().join("events.json"),
        r#"{"apiVersion": "v1", "kind": "List", "items": []}"#,
    )
    .unwrap();
    let r = bundle_report(tmp.path());
    let item = &r.items[0];
    assert_eq!(
        (item.verdict.as_str(), item.reasons[0].code),
        ("unknown", "unconfirmed-no-logs"),
        "{:?}",
        item.reasons
    );
    let text = detail(&r, &r.items[0], false);
    assert!(!text.contains("nothing to do"), "{text}");
    assert!(
        text.contains("kubectl microservice explain-events perm-api -n kms-t11-perm"),
        "{text}"
    );
}

/// A `status NAME --log-file F` answer's next command repeats `--log-file F`, so that pasted it
/// reads the same log (issue 11 trial re-check: it was printed without it), and runs.
#[test]
fn the_next_command_repeats_the_log_file() {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(
        &fixtures().join("bundles-captured/kopf-permanent-failure-operator-gone"),
        tmp.path(),
    );
    fs::write(
        tmp.path().join("events.json"),
        r#"{"apiVersion": "v1", "kind": "List", "items": []}"#,
    )
    .unwrap();
    let log = tmp.path().join("op.log");
    fs::write(
        &log,
        "[2026-12-01 09:24:20,000] kopf.activities.star [INFO    ] Activity 'configure' succeeded.\n",
    )
    .unwrap();
    let out = Command::new(BIN)
        .args(["status", "perm-api", "--bundle"])
        .arg(tmp.path())
        .arg("--log-file")
        .arg(&log)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let next = text
        .lines()
        .find(|l| l.trim_start().starts_with("Next:"))
        .unwrap_or_default();
    let command = format!(
        "kubectl microservice explain-events perm-api -n kms-t11-perm --bundle {} --log-file {}",
        tmp.path().display(),
        log.display()
    );
    assert!(next.ends_with(&command), "{next}");
    let args: Vec<&str> = command.split(' ').skip(2).collect();
    let pasted = Command::new(BIN).args(&args).env("NO_COLOR", "1").output().unwrap();
    assert_ne!(
        pasted.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&pasted.stderr)
    );
}

/// Issue 11 item 6, captured live: a Kopf operator alive but not handling. A hung handler's open
/// run (Kopf `-v`'s start line, no outcome for 2m17s up to the collect) and a frozen operator
/// (nothing logged after the change) are `stale` with that as the first reason, before the
/// changed fields; `Next:` points to explain-events' fix.
#[test]
fn an_operator_alive_but_not_handling_says_what_its_logs_show() {
    let cases = [
        (
            "s11-kopf-handler-hung",
            "hung-api",
            "handler-running",
            "handler accept/spec started at 2026-12-01T11:19:14.477Z, after the spec change at 2026-12-01T11:19:14Z, and has logged no outcome in the 2m17s since, up to now (2026-12-01T11:21:32Z, when its Pod's log was read): the run is still open",
        ),
        (
            "s11-kopf-operator-stalled",
            "stall-api",
            "nothing-logged-since-change",
            "the operator logged nothing after the spec change at 2026-12-01T11:19:30Z: its logs end at 2026-12-01T11:18:15.370Z (1m14s before it), and the change was not handled",
        ),
    ];
    for (bundle, name, code, message) in cases {
        let dir = fixtures().join("bundles-captured").join(bundle);
        let r = bundle_report(&dir);
        let item = r.items.iter().find(|i| i.name == name).unwrap();
        assert_eq!(item.verdict.as_str(), "stale", "{bundle}");
        let codes: Vec<&str> = item.reasons.iter().map(|r| r.code).collect();
        assert_eq!(codes, [code, "spec-changed-since-handled"], "{bundle}");
        assert_eq!(item.reasons[0].message, message, "{bundle}");
        let (_, out, _) = status_cli(&["status", name, "--bundle", dir.to_str().unwrap()]);
        assert!(
            out.contains("Next:           see why and the fix: kubectl microservice explain-events"),
            "{out}"
        );
    }
}

/// Issue 11 item 9, captured live: only `spec.image` patched while ours was stopped; its
/// `status.acceptedSpec` names exactly that field, old → new, never `spec.port` (managedFields
/// alone named both: one manager's time covers all its fields).
#[test]
fn an_image_only_change_names_only_the_image() {
    let dir = fixtures().join("bundles-captured/s11-ours-image-only-stopped");
    let r = bundle_report(&dir);
    let item = &r.items[0];
    assert_eq!(item.verdict.as_str(), "stale");
    let fields: Vec<(&str, String, String)> = item
        .changed_fields
        .iter()
        .map(|c| (c.field.as_str(), c.old.to_string(), c.new.to_string()))
        .collect();
    assert_eq!(
        fields,
        [(
            "spec.image",
            "\"ghcr.io/yrw9281/it30-todo-api:0.1.0\"".to_string(),
            "\"ghcr.io/yrw9281/it30-todo-api:0.2.0\"".to_string()
        )]
    );
    assert!(
        !item.reasons[0].message.contains("spec.port"),
        "{}",
        item.reasons[0].message
    );
}

/// Issue 11, one verdict: a fresh Kopf object whose handler's return value (`status.accept`) the
/// CRD's schema dropped stays `fresh`, but `status` says so (a second reason `status-pruned`)
/// and points to explain-events' fix instead of "nothing to do" while explain-events warns.
#[test]
fn a_fresh_object_with_a_dropped_return_value_says_so() {
    let dir = fixtures().join("bundles-captured/kopf-retrying-status-pruned");
    let r = bundle_report(&dir);
    let item = r.items.iter().find(|i| i.name == "result-api").unwrap();
    assert_eq!(item.verdict.as_str(), "fresh");
    let codes: Vec<&str> = item.reasons.iter().map(|r| r.code).collect();
    assert_eq!(codes, ["last-cycle-succeeded", "status-pruned"]);
    assert!(
        item.reasons[1].message.contains("status.accept"),
        "{}",
        item.reasons[1].message
    );
    let (code, out, _) = status_cli(&["status", "result-api", "--exit-code", "--bundle", dir.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{out}");
    assert!(!out.contains("nothing to do"), "{out}");
    assert!(
        out.contains("status fields are dropped: see the fix: kubectl microservice explain-events result-api"),
        "{out}"
    );
    // retry-api in the same bundle lost only status.kopf (kept in annotations too): no such reason.
    let retry = r.items.iter().find(|i| i.name == "retry-api").unwrap();
    assert!(retry.reasons.iter().all(|r| r.code != "status-pruned"));
}

/// Both evidences, as one `-A` read holds them: a list's items together; a gap of one side
/// (ours scaled to 0: no Pods, no logs) is filled by the other's (the Kopf operator's logs), as
/// `-A` reads every operator's Pods at once.
fn merged<T: Clone>(
    a: &kubectl_microservice::evidence::Evidence<Vec<T>>,
    b: &kubectl_microservice::evidence::Evidence<Vec<T>>,
) -> kubectl_microservice::evidence::Evidence<Vec<T>> {
    use kubectl_microservice::evidence::Evidence;
    match (a, b) {
        (Evidence::Present(a), Evidence::Present(b)) => Evidence::Present(a.iter().chain(b).cloned().collect()),
        (Evidence::Present(x), Evidence::Gap(_)) | (Evidence::Gap(_), Evidence::Present(x)) => {
            Evidence::Present(x.clone())
        }
        (gap, _) => gap.clone(),
    }
}

/// Defect 2 of the issue 11 trial: `status -A` cited another operator's logs. Two captured
/// namespaces merged into one `-A` bundle (written with `bundle::write`, as `collect -A` writes):
/// kms-s11-image, whose operator (ours) is scaled to 0, and kms-s11-tz, whose Kopf operator runs
/// and logs. `status -A`, `status -n NS` and the namespace's own bundle give every object the
/// same reasons: kms-s11-image/todo-api `generation-ahead` with the gap "no Pods: no logs to
/// read", never "the operator logged nothing" over the Kopf Pod's log.
#[test]
fn an_all_namespaces_bundle_reads_each_objects_own_operators_logs() {
    let ours_dir = fixtures().join("bundles-captured/s11-ours-image-only-stopped");
    let kopf_dir = fixtures().join("bundles-captured/s11-kopf-tz-taipei-pod");
    let ours = bundle::read(&ours_dir).unwrap();
    let kopf = bundle::read(&kopf_dir).unwrap();
    let mut all = ours.clone();
    all.namespace = None;
    all.captured_at = ours.captured_at.max(kopf.captured_at);
    all.microservices = merged(&ours.microservices, &kopf.microservices);
    all.events = merged(&ours.events, &kopf.events);
    let (o, k) = (&ours.operator, &kopf.operator);
    all.operator.deployments = merged(&o.deployments, &k.deployments);
    all.operator.pods = merged(&o.pods, &k.pods);
    all.operator.configmaps = merged(&o.configmaps, &k.configmaps);
    all.operator.logs = merged(&o.logs, &k.logs);
    all.operator.leases = merged(&o.leases, &k.leases);
    all.operator.peerings = merged(&o.peerings, &k.peerings);
    all.operator.others = Vec::new();
    let (o, k) = (&ours.rbac, &kopf.rbac);
    all.rbac.access_reviews = merged(&o.access_reviews, &k.access_reviews);
    all.rbac.roles = merged(&o.roles, &k.roles);
    all.rbac.role_bindings = merged(&o.role_bindings, &k.role_bindings);
    all.rbac.cluster_roles = merged(&o.cluster_roles, &k.cluster_roles);
    all.rbac.cluster_role_bindings = merged(&o.cluster_role_bindings, &k.cluster_role_bindings);
    assert!(
        all.operator.logs.get().is_some_and(|l| !l.is_empty()),
        "the -A bundle holds the Kopf Pod's log"
    );
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("all");
    let meta = bundle::Meta {
        captured_at: kubectl_microservice::time::rfc3339_seconds(all.captured_at.unwrap()),
        context: Some("kms-e2e".into()),
        namespace: None,
        all_namespaces: true,
        gaps: Vec::new(),
        collected_by: "tests/status_bundles.rs".into(),
        other_operators: Vec::new(),
        operator: None,
    };
    bundle::write(&all, &meta, &dir).unwrap();
    let dir_s = dir.to_str().unwrap();
    let reasons = |args: &[&str]| -> std::collections::BTreeMap<String, Vec<String>> {
        let (code, out, err) = status_cli(&[&["status", "-o", "json"], args].concat());
        assert!(matches!(code, Some(0 | 1)), "{args:?}: {code:?} {err}");
        let doc: Value = serde_json::from_str(&out).unwrap();
        doc["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| {
                let key = format!("{}/{}", i["namespace"].as_str().unwrap(), i["name"].as_str().unwrap());
                let codes = i["reasons"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| r["code"].as_str().unwrap().to_string())
                    .collect();
                (key, codes)
            })
            .collect()
    };
    let everything = reasons(&["--bundle", dir_s, "-A"]);
    assert_eq!(everything.len(), 2, "{everything:?}");
    assert_eq!(
        everything["kms-s11-image/todo-api"],
        vec!["generation-ahead".to_string()],
        "{everything:?}"
    );
    for (ns, own) in [("kms-s11-image", &ours_dir), ("kms-s11-tz", &kopf_dir)] {
        let one = reasons(&["--bundle", dir_s, "-n", ns]);
        let alone = reasons(&["--bundle", own.to_str().unwrap()]);
        assert_eq!(one, alone, "-n {ns} of the -A bundle and its own bundle");
        for (key, codes) in &one {
            assert_eq!(&everything[key], codes, "{key}: -A and -n {ns}");
        }
    }
    let (_, out, err) = status_cli(&["status", "--bundle", dir_s, "-A"]);
    // Ours is scaled to zero: no Pod and no log, a fact (issue 18), never a gap "has no Pods".
    assert!(!err.contains("has no Pods: no logs to read"), "{out}{err}");
    assert!(!format!("{out}{err}").contains("logged nothing"), "{out}{err}");
    let (_, out, _) = status_cli(&["status", "--bundle", dir_s, "-n", "kms-s11-image", "todo-api"]);
    assert!(!out.contains("kopf-operator-"), "{out}");
    let (_, out, _) = status_cli(&["explain-events", "--bundle", dir_s, "kms-s11-image/todo-api"]);
    assert!(
        !out.contains("kopf-operator-") && !out.contains("logged nothing"),
        "{out}"
    );
}
