//! Whether a Kopf handler selects an object: its resource and its filters (`labels=`,
//! `annotations=`, `field=`/`value=`, `when=`), as the source writes them
//! ([`crate::kopf::source::handlers`]), matched against the object's body. Pure; what the source
//! does not decide (a callback, a value that is not a literal, a conditional registration) is
//! [`Selects::Unknown`], never a guess.
//!
//! Kopf facts (nolar/kopf 1.38 `kopf/_core/intents/registries.py`, `prematch()`, and
//! `kopf/_core/reactor/processing.py` `process_resource_causes`): an object that no
//! resource-changing handler (create, update, resume, delete, field) of the resource prematches
//! is ignored: "be blind to it, store no state, and log nothing about the handling cycle". A
//! handler prematches when its resource selector checks the resource and, in this order, its
//! `labels=` and `annotations=` match (`_matches_metadata`: `kopf.ABSENT` wants the key absent,
//! `kopf.PRESENT` present, a callable is called with the value, anything else must equal the
//! value), its `field=` resolves (`value=None`: present in the new or the old essence;
//! `kopf.PRESENT`/`kopf.ABSENT`; a callable; else equal) and its `when=` callback returns true.
//! `old=`/`new=` are matched only later, per cause (`match()`), so they do not make Kopf blind.

use std::collections::BTreeMap;

use serde_json::Value;

use super::source::Module;
use super::source::handlers::{Cause, FieldPath, Handler, MetaFilter, Resource, Static};

/// The resource an object is, for a handler's resource selector: its API group, served
/// version and names (plural, singular, kind, short names).
#[derive(Debug, Clone)]
pub struct Target {
    /// The API group, e.g. `platform.example.io`.
    pub group: String,
    /// The versions the CRD serves (`v1alpha1`).
    pub versions: Vec<String>,
    /// Plural, singular, kind and short names (`microservices`, `microservice`, `Microservice`).
    pub names: Vec<String>,
    /// Whether the CRD's names are in evidence: without them, a name that is not one of
    /// `names` may be a short name, so it is unknown rather than another resource.
    pub names_known: bool,
}

/// The parts of an object Kopf's filters read.
#[derive(Debug, Clone, Copy)]
pub struct Object<'a> {
    /// `metadata.labels`.
    pub labels: &'a BTreeMap<String, String>,
    /// `metadata.annotations`.
    pub annotations: &'a BTreeMap<String, String>,
    /// The whole object, for `field=` (Kopf resolves it in the object's essence, its body
    /// without status and bookkeeping metadata, plus the handlers' fields).
    pub body: &'a Value,
    /// Whether the object carries Kopf's last-handled record (its "old" essence, which a
    /// `field=` filter also tries).
    pub has_old: bool,
}

/// What would make a filter select the object: a pasteable change of the object itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Set the label (`value`), or remove it (`None`). `overwrite`: it exists with another value.
    Label {
        /// The label's key.
        key: String,
        /// Its value; `None` removes it.
        value: Option<String>,
        /// The label exists with another value (`kubectl label --overwrite`).
        overwrite: bool,
    },
    /// Set the annotation (`value`), or remove it (`None`).
    Annotation {
        /// The annotation's key.
        key: String,
        /// Its value; `None` removes it.
        value: Option<String>,
        /// The annotation exists with another value (`kubectl annotate --overwrite`).
        overwrite: bool,
    },
    /// Set a field of `spec` to a JSON value (`null` removes it), by a merge patch.
    Field {
        /// The path, `spec` first.
        path: Vec<String>,
        /// The value.
        value: Value,
    },
}

/// One filter of a handler that excludes the object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Miss {
    /// The filter as Kopf reads it, e.g. `labels={'team': 'payments'}`.
    pub filter: String,
    /// Why the object fails it, in words (`the object has no label team`).
    pub why: String,
    /// The change of the object that passes this filter; `None` when there is no single one
    /// (`kopf.PRESENT` of a field: any value).
    pub change: Option<Change>,
}

/// Whether a handler selects an object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selects {
    /// Every filter passes (or there are none).
    Yes,
    /// At least one filter excludes the object: each that does.
    No(Vec<Miss>),
    /// No filter excludes it, but at least one cannot be decided from the source: why.
    Unknown(Vec<String>),
}

/// Whether `resource` selects `target` (Kopf's `Selector`: up to three positional names —
/// `'plural.group'` or a name; `'group', 'name'` or `'group/version', 'name'`; `'group',
/// 'version', 'name'`; `kopf.EVERYTHING` — and the `group=`, `version=`, `kind=`, `plural=`,
/// `singular=`, `shortcut=`, `category=` keywords). `None`: not decidable from the source.
pub fn resource_selects(resource: &Resource, target: &Target) -> Option<bool> {
    let text = |s: &Static| match s {
        Static::Str(s) => Some(s.clone()),
        _ => None,
    };
    let mut group = resource.group.as_ref().map(text);
    let mut version = resource.version.as_ref().map(text);
    let mut names: Vec<Option<String>> = [&resource.kind, &resource.plural, &resource.singular, &resource.shortcut]
        .into_iter()
        .flatten()
        .map(text)
        .collect();
    if resource.category.is_some() {
        return None;
    }
    match resource.positional.as_slice() {
        [] => {}
        [Static::Everything] => return Some(true),
        [one] => match text(one)? {
            s if s.contains('.') => {
                let (name, g) = s.split_once('.').unwrap_or_default();
                names.push(Some(name.to_string()));
                group = Some(Some(g.to_string()));
            }
            s => names.push(Some(s)),
        },
        [g, name] => {
            let g = text(g)?;
            match g.split_once('/') {
                Some((g, v)) => {
                    group = Some(Some(g.to_string()));
                    version = Some(Some(v.to_string()));
                }
                None => group = Some(Some(g)),
            }
            names.push(text(name));
        }
        [g, v, name] => {
            group = Some(text(g));
            version = Some(text(v));
            names.push(text(name));
        }
        _ => return None,
    }
    if let Some(g) = group
        && g? != target.group
    {
        return Some(false);
    }
    // Another name is another resource, whatever its version (`('platform.example.io', 'v1',
    // 'backups')` is no Microservice); checked before the version, which alone cannot decide.
    for name in &names {
        let name = name.as_ref()?;
        if !target.names.contains(name) {
            return if target.names_known { Some(false) } else { None };
        }
    }
    // Another version of the group: Kopf would serve that one, if the CRD had it.
    if let Some(v) = version
        && !target.versions.contains(&v?)
    {
        return None;
    }
    Some(true)
}

/// Whether Kopf prematches `handler` for `object` (its filters; the resource is
/// [`resource_selects`]'s). A conditional registration or `**` splat in the call is unknown.
pub fn prematch(handler: &Handler, object: &Object<'_>) -> Selects {
    let mut unknown = Vec::new();
    if let Some(c) = &handler.condition {
        unknown.push(format!("its registration is conditional ({})", c.why));
    }
    if let Some(splat) = handler.splats.first() {
        unknown.push(format!("its filters may come from `{}`", splat.text));
    }
    let f = &handler.filters;
    let mut misses = Vec::new();
    let metas = [
        ("labels", "label", &f.labels, object.labels),
        ("annotations", "annotation", &f.annotations, object.annotations),
    ];
    for (keyword, noun, filter, content) in metas {
        match filter {
            None => {}
            Some(MetaFilter::Unknown(code)) => {
                unknown.push(format!("`{keyword}={}` is not a literal", code.text));
            }
            Some(MetaFilter::Keys(keys)) => {
                for (key, value) in keys {
                    match meta(keyword, noun, key, value, content) {
                        Check::Pass => {}
                        Check::Miss(m) => misses.push(m),
                        Check::Unknown(why) => unknown.push(why),
                    }
                }
            }
        }
    }
    match field(handler, object) {
        Check::Pass => {}
        Check::Miss(m) => misses.push(m),
        Check::Unknown(why) => unknown.push(why),
    }
    match &f.when {
        None => {}
        Some(when) => match trivial(when) {
            Some(true) => {}
            Some(false) => misses.push(Miss {
                filter: format!("when={}", show(when)),
                why: "its `when=` returns False for every object".into(),
                change: None,
            }),
            None => unknown.push(format!(
                "`when={}` is a callback Kopf calls with the object: what it returns is not decidable from the source",
                show(when)
            )),
        },
    }
    if !misses.is_empty() {
        Selects::No(misses)
    } else if !unknown.is_empty() {
        Selects::Unknown(unknown)
    } else {
        Selects::Yes
    }
}

/// Whether `cause` is one of the resource-changing handlers whose prematch decides whether
/// Kopf sees an object at all.
pub fn is_changing(cause: Cause) -> bool {
    matches!(
        cause,
        Cause::Resume | Cause::Create | Cause::Update | Cause::Delete | Cause::Field
    )
}

enum Check {
    Pass,
    Miss(Miss),
    Unknown(String),
}

/// One key of `labels=` / `annotations=` (`_matches_metadata`).
fn meta(keyword: &str, noun: &str, key: &str, value: &Static, content: &BTreeMap<String, String>) -> Check {
    let have = content.get(key);
    let filter = format!("{keyword}={{{}: {}}}", py_str(key), show(value));
    let miss = |why: String, value: Option<String>| {
        Check::Miss(Miss {
            filter: filter.clone(),
            why,
            change: Some(change(noun, key, value, have.is_some())),
        })
    };
    match (value, have) {
        (Static::Absent, None) | (Static::Present, Some(_)) => Check::Pass,
        (Static::Absent, Some(v)) => miss(format!("it wants no {noun} {key}; the object has {key}={v}"), None),
        (Static::Present, None) => miss(
            format!("it wants the {noun} {key} (any value); the object has none"),
            Some(String::new()),
        ),
        (Static::Str(want), Some(v)) if v == want => Check::Pass,
        (Static::Str(want), Some(v)) => miss(
            format!("it wants {noun} {key}={want}; the object has {key}={v}"),
            Some(want.clone()),
        ),
        (Static::Str(want), None) => miss(
            format!("it wants {noun} {key}={want}; the object has no {noun} {key}"),
            Some(want.clone()),
        ),
        (Static::Callback(code), _) => Check::Unknown(format!(
            "`{keyword}` {key}: `{}` is a callback Kopf calls with the value: not decidable from the source",
            code.text
        )),
        (other, _) => Check::Unknown(format!(
            "`{keyword}` {key}: `{}` is not a string, kopf.PRESENT or kopf.ABSENT",
            show(other)
        )),
    }
}

fn change(noun: &str, key: &str, value: Option<String>, exists: bool) -> Change {
    let (key, overwrite) = (key.to_string(), exists && value.is_some());
    if noun == "label" {
        Change::Label { key, value, overwrite }
    } else {
        Change::Annotation { key, value, overwrite }
    }
}

/// `field=` with `value=` (`_matches_field_values`), against the body (the "new" essence); the
/// "old" one is the last-handled record, not read here: a value that fails on the body but
/// may pass on it is unknown.
fn field(handler: &Handler, object: &Object<'_>) -> Check {
    let f = &handler.filters;
    let path = match &f.field {
        None => return Check::Pass,
        Some(FieldPath::Unknown(code)) => return Check::Unknown(format!("`field={}` is not a literal", code.text)),
        Some(FieldPath::Path(p)) if p.iter().all(String::is_empty) => return Check::Pass,
        Some(FieldPath::Path(p)) => p,
    };
    let dotted = path.join(".");
    let got = resolve(object.body, path);
    let filter = match &f.value {
        None => format!("field='{dotted}'"),
        Some(v) => format!("field='{dotted}', value={}", show(v)),
    };
    let pass = match &f.value {
        None | Some(Static::Present) => got.is_some(),
        Some(Static::Absent) => got.is_none(),
        Some(Static::Callback(code)) => {
            return Check::Unknown(format!(
                "`value={}` is a callback Kopf calls with {dotted}: not decidable from the source",
                code.text
            ));
        }
        Some(v) => match json(v) {
            Some(want) => got == Some(&want),
            None => return Check::Unknown(format!("`value={}` is not a literal", show(v))),
        },
    };
    if pass {
        return Check::Pass;
    }
    if object.has_old {
        return Check::Unknown(format!(
            "`{filter}` fails on the object, but Kopf also tries its last-handled record, not read here"
        ));
    }
    let in_spec = path.first().is_some_and(|p| p == "spec") && path.len() > 1;
    let (why, change) = match &f.value {
        None | Some(Static::Present) => (format!("it wants {dotted} set; the object has none"), None),
        Some(Static::Absent) => (
            format!("it wants no {dotted}; the object has one"),
            in_spec.then(|| Change::Field {
                path: path.clone(),
                value: Value::Null,
            }),
        ),
        Some(v) => {
            let want = json(v).unwrap_or(Value::Null);
            let have = got.map_or_else(|| "none".to_string(), Value::to_string);
            (
                format!("it wants {dotted}={want}; the object has {have}"),
                in_spec.then(|| Change::Field {
                    path: path.clone(),
                    value: want,
                }),
            )
        }
    };
    Check::Miss(Miss { filter, why, change })
}

/// `dicts.resolve`: the value at `path`, `None` when a step is missing or not a mapping.
fn resolve<'v>(body: &'v Value, path: &[String]) -> Option<&'v Value> {
    path.iter().try_fold(body, |v, step| v.as_object()?.get(step))
}

/// A literal as JSON (what a `value=` compares against the field).
fn json(v: &Static) -> Option<Value> {
    Some(match v {
        Static::Str(s) => Value::String(s.clone()),
        Static::Int(i) => Value::from(*i),
        Static::Bool(b) => Value::Bool(*b),
        Static::Number(n) => serde_json::from_str::<serde_json::Number>(n).ok().map(Value::Number)?,
        Static::List(items) => Value::Array(items.iter().map(json).collect::<Option<_>>()?),
        _ => return None,
    })
}

/// A `when=` that is a lambda returning a literal `True`/`False`: decided; anything else is not.
fn trivial(when: &Static) -> Option<bool> {
    let Static::Callback(code) = when else {
        return None;
    };
    let module = Module::parse("when", &format!("({})\n", code.text)).ok()?;
    let [ruff_python_ast::Stmt::Expr(e)] = module.suite() else {
        return None;
    };
    let ruff_python_ast::Expr::Lambda(lambda) = &*e.value else {
        return None;
    };
    match &*lambda.body {
        ruff_python_ast::Expr::BooleanLiteral(b) => Some(b.value),
        _ => None,
    }
}

/// A filter value as the source reads: `'payments'`, `kopf.PRESENT`, the callback's text.
fn show(v: &Static) -> String {
    match v {
        Static::Str(s) => py_str(s),
        Static::Int(i) => i.to_string(),
        Static::Number(n) => n.clone(),
        Static::Bool(b) => if *b { "True" } else { "False" }.into(),
        Static::None => "None".into(),
        Static::Present => "kopf.PRESENT".into(),
        Static::Absent => "kopf.ABSENT".into(),
        Static::Everything => "kopf.EVERYTHING".into(),
        Static::Callback(c) | Static::Unknown(c) => c.text.clone(),
        Static::KopfName(n) => n.clone(),
        Static::List(items) => format!("[{}]", items.iter().map(show).collect::<Vec<_>>().join(", ")),
    }
}

fn py_str(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kopf::source::handlers;
    use serde_json::json;

    fn target() -> Target {
        Target {
            group: "platform.example.io".into(),
            versions: vec!["v1alpha1".into()],
            names: vec![
                "microservices".into(),
                "microservice".into(),
                "Microservice".into(),
                "ms".into(),
            ],
            names_known: true,
        }
    }

    fn handlers(src: &str) -> Vec<Handler> {
        handlers::read(&Module::parse("operator.py", src).unwrap()).handlers
    }

    fn selects(h: &Handler, labels: &[(&str, &str)], annotations: &[(&str, &str)], body: Value) -> Selects {
        let labels: BTreeMap<String, String> = labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let annotations: BTreeMap<String, String> = annotations
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        prematch(
            h,
            &Object {
                labels: &labels,
                annotations: &annotations,
                body: &body,
                has_old: false,
            },
        )
    }

    #[test]
    fn resources_select_as_kopfs_selector_does() {
        let hs = handlers(concat!(
            "import kopf\n",
            "@kopf.on.create('platform.example.io', 'v1alpha1', 'microservices')\n",
            "@kopf.on.create('microservices.platform.example.io')\n",
            "@kopf.on.create('platform.example.io/v1alpha1', 'Microservice')\n",
            "@kopf.on.create('ms')\n",
            "@kopf.on.create(kopf.EVERYTHING)\n",
            "@kopf.on.create('kopfexamples')\n",
            "@kopf.on.create('kopf.dev', 'v1', 'microservices')\n",
            "@kopf.on.create('platform.example.io', 'v2', 'microservices')\n",
            "@kopf.on.create(PLURAL)\n",
            "def f(**_): pass\n",
        ));
        let got: Vec<Option<bool>> = hs
            .iter()
            .map(|h| resource_selects(h.resource.as_ref().unwrap(), &target()))
            .collect();
        // Registered bottom first.
        assert_eq!(
            got,
            [
                None,
                None,
                Some(false),
                Some(false),
                Some(true),
                Some(true),
                Some(true),
                Some(true),
                Some(true)
            ]
        );
        let mut unknown_names = target();
        unknown_names.names_known = false;
        assert_eq!(resource_selects(hs[3].resource.as_ref().unwrap(), &unknown_names), None);
    }

    /// Kopf's own example 11 (tests/fixtures/kopf-examples), against an object with
    /// `somelabel=somevalue`, `spec.field=value` and no annotation.
    #[test]
    fn kopfs_filtering_example_selects_as_kopf_does() {
        let src = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/kopf-examples/11-filtering-handlers/example.py"),
        )
        .unwrap();
        let hs = handlers(&src);
        let body = json!({"metadata": {"labels": {"somelabel": "somevalue"}}, "spec": {"field": "value"}});
        let got: Vec<(String, &'static str)> = hs
            .iter()
            .filter(|h| h.cause == Cause::Create)
            .map(|h| {
                let name = h.function.as_ref().unwrap().name.clone();
                let s = match selects(h, &[("somelabel", "somevalue")], &[], body.clone()) {
                    Selects::Yes => "yes",
                    Selects::No(_) => "no",
                    Selects::Unknown(_) => "unknown",
                };
                (name, s)
            })
            .collect();
        let want = [
            ("create_with_labels_matching", "yes"),
            ("create_with_labels_present", "yes"),
            ("create_with_labels_absent", "yes"),
            ("create_with_labels_callback_matching", "unknown"),
            ("create_with_annotations_matching", "no"),
            ("create_with_annotations_present", "no"),
            ("create_with_annotations_absent", "yes"),
            ("create_with_annotations_callback_matching", "unknown"),
            ("create_with_filter_satisfied", "yes"),
            ("create_with_filter_not_satisfied", "no"),
            ("create_with_field_value_satisfied", "yes"),
            ("create_with_field_value_not_satisfied", "no"),
            ("create_with_field_presence_satisfied", "yes"),
            ("create_with_field_presence_not_satisfied", "no"),
        ];
        let want: Vec<(String, &str)> = want.iter().map(|(n, s)| (n.to_string(), *s)).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn a_miss_says_why_and_the_change_that_passes_it() {
        let hs = handlers(concat!(
            "import kopf\n",
            "@kopf.on.create('microservices', labels={'team': 'payments', 'legacy': kopf.ABSENT})\n",
            "@kopf.on.update('microservices', field='spec.tier', value='gold', annotations={'x': kopf.PRESENT})\n",
            "def f(**_): pass\n",
        ));
        let Selects::No(m) = selects(&hs[1], &[("team", "billing"), ("legacy", "yes")], &[], json!({})) else {
            panic!()
        };
        assert_eq!(m[0].filter, "labels={'team': 'payments'}");
        assert_eq!(m[0].why, "it wants label team=payments; the object has team=billing");
        assert_eq!(
            m[0].change,
            Some(Change::Label {
                key: "team".into(),
                value: Some("payments".into()),
                overwrite: true
            })
        );
        assert_eq!(
            m[1].change,
            Some(Change::Label {
                key: "legacy".into(),
                value: None,
                overwrite: false
            })
        );
        let Selects::No(m) = selects(&hs[0], &[], &[], json!({"spec": {"tier": "silver"}})) else {
            panic!()
        };
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].why, "it wants the annotation x (any value); the object has none");
        assert_eq!(m[1].why, "it wants spec.tier=\"gold\"; the object has \"silver\"");
        assert_eq!(
            m[1].change,
            Some(Change::Field {
                path: vec!["spec".into(), "tier".into()],
                value: json!("gold")
            })
        );
        // Passing every filter: selected.
        assert_eq!(
            selects(&hs[0], &[], &[("x", "")], json!({"spec": {"tier": "gold"}})),
            Selects::Yes
        );
    }

    #[test]
    fn what_the_source_does_not_decide_is_unknown() {
        let hs = handlers(concat!(
            "import os, kopf\n",
            "def mine(value, **_): return True\n",
            "@kopf.on.create('microservices', when=lambda spec, **_: spec.get('x'))\n",
            "@kopf.on.create('microservices', labels=LABELS)\n",
            "@kopf.on.create('microservices', labels={'team': mine})\n",
            "@kopf.on.create('microservices', **OPTIONS)\n",
            "def f(**_): pass\n",
            "if os.environ.get('X'):\n",
            "    @kopf.on.create('microservices')\n",
            "    def g(**_): pass\n",
        ));
        for h in &hs {
            assert!(
                matches!(selects(h, &[], &[], json!({})), Selects::Unknown(_)),
                "{}",
                h.decorator
            );
        }
        // A known miss beside an unknown filter still excludes (Kopf ANDs them).
        let hs = handlers(
            "import kopf\n@kopf.on.create('microservices', labels={'a': 'b'}, when=lambda **_: x)\ndef f(**_): pass\n",
        );
        assert!(matches!(selects(&hs[0], &[], &[], json!({})), Selects::No(_)));
    }
}
