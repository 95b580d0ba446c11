//! The handler reader on real sources: Kopf 1.38.0's own examples
//! (tests/fixtures/kopf-examples, README there) and every operator source under tests/fixtures,
//! each asserted as the list Kopf registers (cause, id, resource, filters, options).

use super::*;

fn fixture(path: &str) -> String {
    std::fs::read_to_string(format!("{}/tests/fixtures/{path}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn example(name: &str) -> Vec<String> {
    let src = fixture(&format!("kopf-examples/{name}/example.py"));
    let found = read(&Module::parse("example.py", &src).unwrap());
    assert!(found.skipped.is_empty(), "{name}: {:?}", found.skipped);
    found.handlers.iter().map(show).collect()
}

/// A value in Python's words; a callback or unknown value with its line.
fn py(v: &Static) -> String {
    match v {
        Static::Str(s) => format!("'{s}'"),
        Static::Int(i) => i.to_string(),
        Static::Number(n) => n.clone(),
        Static::Bool(b) => if *b { "True" } else { "False" }.into(),
        Static::None => "None".into(),
        Static::Present => "kopf.PRESENT".into(),
        Static::Absent => "kopf.ABSENT".into(),
        Static::Everything => "kopf.EVERYTHING".into(),
        Static::Callback(c) => format!("callback[{}@{}]", c.text, c.line),
        Static::KopfName(n) => n.clone(),
        Static::List(items) => format!("[{}]", items.iter().map(py).collect::<Vec<_>>().join(", ")),
        Static::Unknown(c) => format!("unknown[{}@{}]", c.text, c.line),
    }
}

fn meta(name: &str, m: &MetaFilter) -> String {
    match m {
        MetaFilter::Keys(keys) => format!(
            "{name}={{{}}}",
            keys.iter()
                .map(|(k, v)| format!("'{k}': {}", py(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        MetaFilter::Unknown(c) => format!("{name}=unknown[{}@{}]", c.text, c.line),
    }
}

/// `create create_fn@7 ('kopfexamples') labels={...} retries=3`: the cause, the id, the
/// function's `def` line, the resource and every filter and option.
fn show(h: &Handler) -> String {
    let id = match &h.id {
        HandlerId::Known(id) => id.clone(),
        HandlerId::Unknown(why) => format!("?({why})"),
    };
    let line = h.function.as_ref().map_or(0, |f| f.line);
    let mut out = format!("{} {id}@{line}", h.cause.as_str());
    if let Some(r) = &h.resource {
        let mut parts: Vec<String> = r.positional.iter().map(py).collect();
        for (k, v) in [
            ("group", &r.group),
            ("version", &r.version),
            ("kind", &r.kind),
            ("plural", &r.plural),
            ("singular", &r.singular),
            ("shortcut", &r.shortcut),
            ("category", &r.category),
        ] {
            if let Some(v) = v {
                parts.push(format!("{k}={}", py(v)));
            }
        }
        out.push_str(&format!(" ({})", parts.join(", ")));
    }
    let f = &h.filters;
    let mut extra = Vec::new();
    extra.extend(f.labels.as_ref().map(|m| meta("labels", m)));
    extra.extend(f.annotations.as_ref().map(|m| meta("annotations", m)));
    extra.extend(f.when.as_ref().map(|v| format!("when={}", py(v))));
    extra.extend(f.field.as_ref().map(|p| match p {
        FieldPath::Path(p) => format!("field={}", p.join(".")),
        FieldPath::Unknown(c) => format!("field=unknown[{}]", c.text),
    }));
    for (k, v) in [("value", &f.value), ("old", &f.old), ("new", &f.new)] {
        extra.extend(v.as_ref().map(|v| format!("{k}={}", py(v))));
    }
    extra.extend(h.options.iter().map(|(k, v)| format!("{k}={}", py(v))));
    for e in extra {
        out.push(' ');
        out.push_str(&e);
    }
    out
}

#[test]
fn kopf_example_01_minimal() {
    assert_eq!(example("01-minimal"), ["create create_fn@5 ('kopfexamples')"]);
}

#[test]
fn kopf_example_02_children() {
    assert_eq!(example("02-children"), ["create create_fn@7 ('kopfexamples')"]);
}

#[test]
fn kopf_example_03_exceptions() {
    assert_eq!(
        example("03-exceptions"),
        [
            "create instant_failure_with_only_a_message@9 ('kopfexamples')",
            "create eventual_success_with_a_few_messages@14 ('kopfexamples')",
            "create eventual_failure_with_tracebacks@20 ('kopfexamples') retries=3 backoff=1.0",
            "create instant_failure_with_traceback@25 ('kopfexamples') errors=kopf.ErrorsMode.PERMANENT backoff=1.0",
        ]
    );
}

#[test]
fn kopf_example_04_events() {
    // `kopf.event(...)`, `kopf.info(...)` in the body post events; they register nothing.
    assert_eq!(example("04-events"), ["create create_fn@8 ('kopfexamples')"]);
}

#[test]
fn kopf_example_05_handlers() {
    assert_eq!(
        example("05-handlers"),
        [
            "resume resume_fn_1@5 ('kopfexamples')",
            "create create_fn_1@10 ('kopfexamples')",
            "resume resume_fn_2@15 ('kopfexamples')",
            "create create_fn_2@20 ('kopfexamples')",
            "update update_fn@25 ('kopfexamples')",
            "delete delete_fn_1@30 ('kopfexamples')",
            "delete delete_fn_2@35 ('kopfexamples')",
            "field field_fn/spec.field@40 ('kopfexamples') field=spec.field",
        ]
    );
}

#[test]
fn kopf_example_11_filtering_handlers() {
    assert_eq!(
        example("11-filtering-handlers"),
        [
            "create create_with_labels_matching@13 ('kopfexamples') labels={'somelabel': 'somevalue'}",
            "create create_with_labels_present@18 ('kopfexamples') labels={'somelabel': kopf.PRESENT}",
            "create create_with_labels_absent@23 ('kopfexamples') labels={'nonexistent': kopf.ABSENT}",
            "create create_with_labels_callback_matching@28 ('kopfexamples') labels={'somelabel': callback[say_yes@27]}",
            "create create_with_annotations_matching@33 ('kopfexamples') annotations={'someannotation': 'somevalue'}",
            "create create_with_annotations_present@38 ('kopfexamples') annotations={'someannotation': kopf.PRESENT}",
            "create create_with_annotations_absent@43 ('kopfexamples') annotations={'nonexistent': kopf.ABSENT}",
            "create create_with_annotations_callback_matching@48 ('kopfexamples') annotations={'someannotation': callback[say_no@47]}",
            "create create_with_filter_satisfied@53 ('kopfexamples') when=callback[lambda body, **_: True@52]",
            "create create_with_filter_not_satisfied@58 ('kopfexamples') when=callback[lambda body, **_: False@57]",
            "create create_with_field_value_satisfied/spec.field@63 ('kopfexamples') field=spec.field value='value'",
            "create create_with_field_value_not_satisfied/spec.field@68 ('kopfexamples') field=spec.field value='something-else'",
            "create create_with_field_presence_satisfied/spec.field@73 ('kopfexamples') field=spec.field value=kopf.PRESENT",
            "create create_with_field_presence_not_satisfied/spec.inexistent@78 ('kopfexamples') field=spec.inexistent value=kopf.PRESENT",
            "update update_with_field_change_satisfied/spec.field@84 ('kopfexamples') field=spec.field old='value' new='changed'",
            "daemon daemon_with_field/spec.field@89 ('kopfexamples') field=spec.field value='value'",
        ]
    );
}

#[test]
fn the_decorators_line_and_text_are_cited() {
    let src = fixture("kopf-examples/11-filtering-handlers/example.py");
    let found = read(&Module::parse("example.py", &src).unwrap());
    let update = &found.handlers[14];
    assert_eq!(update.decorator.line, 82);
    assert_eq!(
        update.decorator.text,
        "@kopf.on.update('kopfexamples', field='spec.field', old='value', new='changed')"
    );
    assert!(
        found
            .handlers
            .iter()
            .all(|h| h.condition.is_none() && h.parent.is_none())
    );
}

/// Every operator source (ConfigMap key or copy) among the fixtures that registers a handler.
fn operator_sources() -> Vec<(String, String)> {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else {
                out.push(path);
            }
        }
    }
    let root = std::path::PathBuf::from(format!("{}/tests/fixtures", env!("CARGO_MANIFEST_DIR")));
    let mut files = Vec::new();
    walk(&root, &mut files);
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let name = path.strip_prefix(&root).unwrap().display().to_string();
        if name.ends_with(".py.txt") {
            out.push((name, std::fs::read_to_string(&path).unwrap()));
        } else if name.ends_with("configmaps.json") || name.ends_with("configmap.json") {
            let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            let items = v
                .get("items")
                .and_then(|i| i.as_array())
                .cloned()
                .unwrap_or_else(|| vec![v.clone()]);
            for item in items {
                for (key, text) in item["data"].as_object().into_iter().flatten() {
                    if let Some(text) = text.as_str().filter(|t| t.contains("@kopf")) {
                        out.push((format!("{name}:{key}"), text.to_string()));
                    }
                }
            }
        }
    }
    out
}

#[test]
fn every_operator_source_among_the_fixtures() {
    const RESOURCE: &str = "('platform.example.io', 'v1alpha1', 'microservices')";
    let startup = "startup configure@X".to_string();
    let resume = format!("resume accept@X {RESOURCE}");
    let update = format!("update accept/spec@X {RESOURCE} field=spec");
    let create = format!("create accept@X {RESOURCE}");
    let delete = format!("delete cleanup@X {RESOURCE}");
    let team = "labels={'team': 'payments'}";
    let (resume_team, update_team, create_team) = (
        format!("resume accept@X {RESOURCE} {team}"),
        format!("update accept/spec@X {RESOURCE} {team} field=spec"),
        format!("create accept@X {RESOURCE} {team}"),
    );
    // The lab cluster's operators (bundles-captured/i18fx-*): resume, create, update stacked in
    // that order (registered bottom first), no `field=`, the resource from module constants.
    let update_all = format!("update accept@X {RESOURCE}");
    let update_all_team = format!("update accept@X {RESOURCE} {team}");
    // The messy shared cluster's other teams (bundles-captured/i18live-*): a label filter
    // `team=bravo`, a cluster-wide operator of Backups, one of Kopf's examples resource.
    let bravo = "labels={'team': 'bravo'}";
    let (resume_bravo, update_bravo, create_bravo) = (
        format!("resume accept@X {RESOURCE} {bravo}"),
        format!("update accept/spec@X {RESOURCE} {bravo} field=spec"),
        format!("create accept@X {RESOURCE} {bravo}"),
    );
    const BACKUPS: &str = "('platform.example.io', 'v1', 'backups')";
    let (resume_backup, update_backup, create_backup) = (
        format!("resume snapshot@X {BACKUPS}"),
        format!("update snapshot/spec@X {BACKUPS} field=spec"),
        format!("create snapshot@X {BACKUPS}"),
    );
    const EXAMPLES: &str = "('kopf.dev', 'v1', 'kopfexamples')";
    let (resume_example, create_example) = (
        format!("resume create_fn@X {EXAMPLES}"),
        format!("create create_fn@X {EXAMPLES}"),
    );
    // tests/fixtures/kopf-examples-derived: 11-filtering-handlers' filtered create handlers and
    // an update handler of 03-exceptions' kind, each filtered.
    let derived: Vec<String> = [
        "create create_with_labels_matching@X ('kopfexamples') labels={'somelabel': 'somevalue'}",
        "create create_with_annotations_matching@X ('kopfexamples') annotations={'someannotation': 'somevalue'}",
        "create create_with_field_value_satisfied/spec.field@X ('kopfexamples') field=spec.field value='value'",
        "update eventual_success_on_update@X ('kopfexamples') labels={'somelabel': 'somevalue'}",
    ]
    .map(String::from)
    .to_vec();
    let derived: Vec<&String> = derived.iter().collect();
    // The same bundles' shared-cluster background of 2026-12-02 20:00 (issue 18's scenario, rebuilt):
    // platform-backup's operator with a backoff, team-charlie's with an owner label filter.
    let background = |lines: &[&str]| -> Vec<String> { lines.iter().map(|l| l.to_string()).collect() };
    let backup_backoff = background(&[
        "startup configure@X",
        "resume backup@X ('platform.example.io', 'v1', 'backups') backoff=20",
        "create backup@X ('platform.example.io', 'v1', 'backups') backoff=20",
    ]);
    let charlie = background(&[
        "startup configure@X",
        "resume accept@X ('platform.example.io', 'v1alpha1', 'microservices') labels={'owner': 'team-charlie'}",
        "update accept/spec@X ('platform.example.io', 'v1alpha1', 'microservices') labels={'owner': 'team-charlie'} field=spec",
        "create accept@X ('platform.example.io', 'v1alpha1', 'microservices') labels={'owner': 'team-charlie'}",
    ]);
    let (backup_backoff, charlie): (Vec<&String>, Vec<&String>) =
        (backup_backoff.iter().collect(), charlie.iter().collect());
    // Issue 18's scenario 2 (bundles-captured/i18live-s2-*):
    // platform-audit's operator filtered `audit=on`, team-india's `accept` beside a failing
    // `audit`, and Kopf's examples/01-minimal as it is (a plural only, no startup function).
    let audit_on = "labels={'audit': 'on'}";
    let audit_wide = background(&[
        &startup,
        &format!("resume accept@X {RESOURCE} {audit_on}"),
        &format!("update accept/spec@X {RESOURCE} {audit_on} field=spec"),
        &format!("create accept@X {RESOURCE} {audit_on}"),
    ]);
    let india = background(&[
        &startup,
        &resume,
        &update,
        &create,
        &format!("resume audit@X {RESOURCE}"),
        &format!("update audit/spec@X {RESOURCE} field=spec"),
        &format!("create audit@X {RESOURCE}"),
    ]);
    let minimal = background(&["create create_fn@X ('kopfexamples')"]);
    let (audit_wide, india, minimal): (Vec<&String>, Vec<&String>, Vec<&String>) = (
        audit_wide.iter().collect(),
        india.iter().collect(),
        minimal.iter().collect(),
    );
    let sources = operator_sources();
    assert!(sources.len() >= 50, "{}", sources.len());
    let mut shapes = std::collections::BTreeMap::<Vec<String>, usize>::new();
    let mut unexpected = Vec::new();
    let mut broken = 0;
    for (name, src) in &sources {
        // Issue 18's crash loops: their source is the one that does not parse, on purpose.
        if name.contains("bundles-synthetic/kopf-crashloop-syntax-error/operator/configmaps.json")
            || name.contains("bundles-captured/i18live-crashloop-syntax-error/operator/configmaps.json")
        {
            assert!(Module::parse("operator.py", src).is_err(), "{name} parses");
            continue;
        }
        // Scenario 2's crash loop: team-hotel's handlers.py, beside the other teams' sources
        // of the same configmaps.json, which parse.
        if name.contains("bundles-captured/i18live-s2-hotel-crashloop/operator/configmaps.json")
            && Module::parse("operator.py", src).is_err()
        {
            assert!(
                src.contains("def accept(name, namespace, spec, logger, patch, **_)\n"),
                "{name}"
            );
            broken += 1;
            continue;
        }
        let found = read(&Module::parse("operator.py", src).unwrap());
        assert!(found.skipped.is_empty(), "{name}: {:?}", found.skipped);
        // Lines differ with each file's imports and startup function: each `def` line is
        // checked against the text, then left out of the comparison.
        let lines: Vec<&str> = src.lines().collect();
        let shown: Vec<String> = found
            .handlers
            .iter()
            .map(|h| {
                let f = h.function.as_ref().unwrap();
                let def = lines[f.line - 1].trim_start();
                assert!(
                    def.starts_with(&format!("def {}(", f.name)) || def.starts_with(&format!("async def {}(", f.name)),
                    "{name}: line {}: {def}",
                    f.line
                );
                show(h).replacen(&format!("@{}", f.line), "@X", 1)
            })
            .collect();
        // The fixtures' ten operators: with or without a startup function (scanning off) and
        // `@kopf.on.resume`, kopf-finalizer-terminating's with a delete handler too,
        // handler-filtered-labels' with a label filter on each handler, the lab cluster's two, and
        // the messy shared cluster's three others, and the derived Kopf example; scenario 2's
        // three (above).
        let expected: [&[&String]; 16] = [
            &[&startup, &resume, &update, &create],
            &[&startup, &update, &create],
            &[&resume, &update, &create],
            &[&startup, &resume, &update, &create, &delete],
            &[&startup, &resume_team, &update_team, &create_team],
            &[&update_all_team, &create_team, &resume_team],
            &[&startup, &update_all, &create, &resume],
            &[&startup, &resume_bravo, &update_bravo, &create_bravo],
            &[&startup, &resume_backup, &update_backup, &create_backup],
            &[&startup, &resume_example, &create_example],
            &derived,
            &backup_backoff,
            &charlie,
            &audit_wide,
            &india,
            &minimal,
        ];
        if !expected
            .iter()
            .any(|e| e.iter().map(|s| s.as_str()).eq(shown.iter().map(String::as_str)))
        {
            unexpected.push(format!("{name}: {shown:#?}"));
        }
        *shapes.entry(shown).or_default() += 1;
    }
    assert!(unexpected.is_empty(), "{}", unexpected.join("\n"));
    assert_eq!(broken, 1, "team-hotel's handlers.py");
    // All sixteen shapes occur.
    assert_eq!(shapes.len(), 16, "{shapes:#?}");
}

/// The ids the reader gives the real Kopf 1.38 operator are the ids Kopf itself logged for it
/// (`Handler 'accept' succeeded`, `Handler 'accept/spec' succeeded`).
#[test]
fn ids_agree_with_what_kopf_1_38_logged() {
    let v: serde_json::Value = serde_json::from_str(&fixture("kopf-1.38-real/deployment/configmap.json")).unwrap();
    let src = v["data"]["operator.py"].as_str().unwrap();
    let found = read(&Module::parse("operator.py", src).unwrap());
    let mut ours: Vec<String> = found
        .handlers
        .iter()
        .filter(|h| !h.cause.is_activity())
        .map(|h| match &h.id {
            HandlerId::Known(id) => id.clone(),
            HandlerId::Unknown(why) => panic!("{why}"),
        })
        .collect();
    ours.sort();
    ours.dedup();
    let mut logged = Vec::new();
    for log in ["ab-run1-create-update-shutdown.log", "c-run2-restart-resume.log"] {
        for line in fixture(&format!("kopf-1.38-real/{log}")).lines() {
            if let Some(rest) = line.split("Handler '").nth(1)
                && let Some(id) = rest.split('\'').next()
            {
                logged.push(id.to_string());
            }
        }
    }
    logged.sort();
    logged.dedup();
    assert_eq!(ours, logged);
    assert_eq!(ours, ["accept", "accept/spec"]);
}
