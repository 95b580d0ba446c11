//! Kopf's posting settings (`settings.posting.enabled`, `.level`, `.loggers`) as the operator's
//! Python source sets them: a fold, in execution order, of what the settings reader
//! ([`crate::kopf::source::settings`]) found. Pure over text; the source comes from a ConfigMap
//! the Deployment mounts.
//!
//! Only what the syntax tree proves is claimed: an assignment `settings.posting.enabled = False`
//! at the top level of an `@kopf.on.startup` function's body runs on every start, so it proves
//! posting is off. The same assignment under an `if`/`for`/`while`/`try`/`with`/`match`, after a
//! conditional `return`, in a nested function, outside a startup function, or through a name that
//! is not known to be Kopf's settings depends on run-time state and is reported as undecidable
//! with its line. A source that does not parse is undecidable at the line of its first syntax
//! error.
//!
//! Kopf facts (nolar/kopf 1.44.6; `enabled` and `level` unchanged since 0.19, `loggers` since
//! 1.41): `kopf/_cogs/configs/configuration.py` `PostingSettings` (`enabled = True`,
//! `level = logging.INFO`, `loggers`); `kopf/_core/engines/posting.py` `K8sPoster.filter` posts a
//! log record only if `enabled`, `loggers` and `record.levelno >= posting.level`; handler failures
//! are logged at ERROR (40), so a level above ERROR keeps them out of events. `docs/configuration.rst`
//! "Logging events" shows these settings set in an `@kopf.on.startup` handler's `settings`.

use crate::kopf::source::conditions::EnvDecision;
use crate::kopf::source::settings::{self, Phase, Target, ValueKind};
use crate::kopf::source::{Condition, Env, Module, ParseError, SourceLine};

/// What the source says about `settings.posting.enabled`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PostingSetting {
    /// No assignment that reaches Kopf's settings, or one that leaves posting on: Kopf's default
    /// (posting on).
    Default,
    /// An unconditional `= False` (or `0`, `None`) at the top level of an `@kopf.on.startup`
    /// function, not overridden later: off.
    Disabled(SourceLine),
    /// An assignment whose effect depends on run-time state: undecidable. `guard` is the
    /// statement that makes it conditional (`if`, `for`, a `return`, ...) when there is one.
    Undecidable {
        /// The assignment (or, for a source that does not parse, the line of the syntax error).
        at: SourceLine,
        /// The enclosing condition, when the assignment is nested in one.
        guard: Option<SourceLine>,
        /// Why it cannot be decided, in words.
        why: String,
    },
}

/// What the source says about `settings.posting.level` as it concerns handler errors: Kopf posts
/// a log record only at or above `posting.level`, and logs handler failures at ERROR (40).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LevelSetting {
    /// No assignment (Kopf's default `logging.INFO`), or a level at or below ERROR: handler
    /// errors pass the level filter.
    Default,
    /// An unconditional level above ERROR at the top level of an `@kopf.on.startup` function:
    /// handler errors are not posted.
    AboveError {
        /// The assignment.
        at: SourceLine,
        /// The level it sets (`logging.CRITICAL` is 50).
        level: i64,
    },
    /// An assignment whose effect on ERROR records depends on run-time state, or whose value
    /// the source does not give.
    Undecidable {
        /// The assignment (or the line of the syntax error).
        at: SourceLine,
        /// The enclosing condition, when there is one.
        guard: Option<SourceLine>,
        /// Why it cannot be decided, in words.
        why: String,
    },
}

/// An assignment that looks like a posting setting but never changes Kopf's: e.g.
/// `s.posting.enabled = False` in `def configure(s, **_)` (Kopf passes the settings only as the
/// keyword argument `settings`), or code after an unconditional `return`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IgnoredAssignment {
    /// The assignment.
    pub at: SourceLine,
    /// Why it does not count, in words.
    pub why: String,
}

/// A source the parser rejects (Python 2 code, a syntax error, a truncated ConfigMap).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseFailure {
    /// The line of the first syntax error.
    pub at: SourceLine,
    /// The parser's message, e.g. `Expected an expression`.
    pub message: String,
}

/// What the operator's source sets for posting (Kopf `settings.posting.*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostingSource {
    /// `settings.posting.enabled`.
    pub enabled: PostingSetting,
    /// The last assignment to `settings.posting.loggers` that may reach Kopf's settings (Kopf ≥
    /// 1.41: whether log records are posted at all).
    pub loggers: Option<SourceLine>,
    /// `settings.posting.level`, as it concerns handler errors (ERROR records).
    pub level: LevelSetting,
    /// Assignments that look like posting settings but do not reach Kopf's.
    pub ignored: Vec<IgnoredAssignment>,
    /// Set when the source does not parse; `enabled` and `level` are then undecidable at its line.
    pub parse_error: Option<ParseFailure>,
    /// The env-decided conditions around the assignment that decided `enabled` (empty when none
    /// did, or when it is Kopf's default).
    pub enabled_decided_by: Vec<EnvDecision>,
}

/// Reads the posting settings of one Python file (`file` names it in the evidence), with the
/// operator's env unknown. Never fails: a source that does not parse gives
/// [`PostingSource::parse_error`] and undecidable settings.
pub fn posting_settings(file: &str, source: &str) -> PostingSource {
    posting_settings_in(file, source, &Env::unknown())
}

/// [`posting_settings`] with the operator container's env: `if` conditions on `os.environ` /
/// `os.getenv` that `env` decides no longer make an assignment conditional (their decision is
/// kept as evidence), and branches it decides false never run.
pub fn posting_settings_in(file: &str, source: &str, env: &Env) -> PostingSource {
    from_parsed(&Module::parse(file, source), env)
}

/// The posting settings of a source parsed once ([`Module::parse`]), for a caller that reads
/// more of it. Never fails: a [`ParseError`] gives [`PostingSource::parse_error`] and undecidable
/// settings.
pub fn from_parsed(parsed: &Result<Module, ParseError>, env: &Env) -> PostingSource {
    match parsed {
        Ok(module) => of_module(module, env),
        Err(error) => unparsed(error),
    }
}

/// A source that does not parse: `enabled` and `level` undecidable at the error's line.
fn unparsed(error: &ParseError) -> PostingSource {
    let at = error.at().clone();
    let why = format!("the source does not parse: {error}");
    PostingSource {
        enabled: PostingSetting::Undecidable {
            at: at.clone(),
            guard: None,
            why: why.clone(),
        },
        loggers: None,
        level: LevelSetting::Undecidable {
            at: at.clone(),
            guard: None,
            why,
        },
        ignored: Vec::new(),
        parse_error: Some(ParseFailure {
            at,
            message: error.to_string(),
        }),
        enabled_decided_by: Vec::new(),
    }
}

fn of_module(module: &Module, env: &Env) -> PostingSource {
    let found = settings::read(module, env);
    let assignments = posting_assignments(module, &found);
    // Module level runs first (at import), then the startup handlers in source order (Kopf runs
    // them in registration order), then anything else, at any time after.
    let mut ordered: Vec<&Assignment> = assignments.iter().collect();
    ordered.sort_by_key(|a| a.phase);
    let of = |s: Setting| ordered.iter().copied().filter(move |a| a.setting == s);
    let mut enabled_decided_by = Vec::new();
    let enabled = match fold(of(Setting::Enabled), true, |v| match v {
        Value::Bool(b) => Some(*b),
        _ => None,
    }) {
        Fold::Known { value: true, .. } => PostingSetting::Default,
        Fold::Known { value: false, by } => match by {
            Some(a) => {
                enabled_decided_by = a.decided.clone();
                PostingSetting::Disabled(a.at.clone())
            }
            None => PostingSetting::Default,
        },
        Fold::Undecidable { at, guard, why } => PostingSetting::Undecidable { at, guard, why },
    };
    let level = match fold(of(Setting::Level), true, |v| match v {
        Value::Int(level) => Some(*level <= ERROR),
        _ => None,
    }) {
        Fold::Known {
            value: false,
            by: Some(a),
        } => match a.value {
            Value::Int(level) => LevelSetting::AboveError {
                at: a.at.clone(),
                level,
            },
            _ => LevelSetting::Default,
        },
        Fold::Known { .. } => LevelSetting::Default,
        Fold::Undecidable { at, guard, why } => LevelSetting::Undecidable { at, guard, why },
    };
    let loggers = of(Setting::Loggers).next_back().map(|a| a.at.clone());
    let mut ignored: Vec<IgnoredAssignment> = found
        .ignored
        .into_iter()
        .filter(|i| !targets(module, &i.target).is_empty())
        .map(|i| IgnoredAssignment { at: i.at, why: i.why })
        .collect();
    ignored.dedup();
    PostingSource {
        enabled,
        loggers,
        level,
        ignored,
        parse_error: None,
        enabled_decided_by,
    }
}

/// Which of `settings.posting.*` an assignment sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Setting {
    Enabled,
    Level,
    Loggers,
}

impl Setting {
    fn name(self) -> &'static str {
        match self {
            Setting::Enabled => "enabled",
            Setting::Level => "level",
            Setting::Loggers => "loggers",
        }
    }
}

/// The assigned value, as it concerns one posting setting.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Value {
    /// `True`/`False`, or a constant whose truth Python decides (`0`, `1`, `None`).
    Bool(bool),
    /// An integer: a literal or a `logging` level constant (`logging.CRITICAL` is 50).
    Int(i64),
    /// Anything else: the expression's text.
    Other(String),
}

/// One assignment to `settings.posting.<setting>` (an assignment to `settings.posting` as a
/// whole gives one per setting).
#[derive(Debug)]
struct Assignment {
    setting: Setting,
    value: Value,
    at: SourceLine,
    phase: Phase,
    /// `None`: unconditional.
    condition: Option<Condition>,
    decided: Vec<EnvDecision>,
}

/// Which posting settings a target names: `posting.enabled` one, `posting` all three; a block
/// not read, `enabled` when its text mentions `posting`.
fn targets(module: &Module, target: &Target) -> &'static [Setting] {
    match target {
        Target::Setting(path) => match path.iter().map(String::as_str).collect::<Vec<_>>()[..] {
            ["posting"] => &[Setting::Enabled, Setting::Level, Setting::Loggers],
            ["posting", "enabled"] => &[Setting::Enabled],
            ["posting", "level"] => &[Setting::Level],
            ["posting", "loggers"] => &[Setting::Loggers],
            _ => &[],
        },
        Target::Unread(range) if module.slice(*range).contains("posting") => &[Setting::Enabled],
        Target::Unread(_) => &[],
    }
}

/// The reader's assignments to posting settings, one per setting, in source order.
fn posting_assignments(module: &Module, found: &settings::Settings) -> Vec<Assignment> {
    let mut out = Vec::new();
    for a in &found.assignments {
        let settings = targets(module, &a.target);
        for &setting in settings {
            out.push(Assignment {
                setting,
                value: value(&a.value, setting, settings.len() > 1),
                at: a.at.clone(),
                phase: a.phase,
                condition: a.condition.clone(),
                decided: a.decided.clone(),
            });
        }
    }
    out
}

/// What an assigned value means for `setting`: its truth for `enabled`/`loggers`, a number or a
/// `logging` constant for `level`; unknown when the whole group is replaced.
fn value(v: &settings::Value, setting: Setting, whole_group: bool) -> Value {
    let truth = setting != Setting::Level;
    match &v.kind {
        ValueKind::Derived => Value::Other(v.text.clone()),
        _ if whole_group => Value::Other(format!("posting replaced by {}", v.text)),
        ValueKind::Bool(b) => Value::Bool(*b),
        ValueKind::None if truth => Value::Bool(false),
        ValueKind::Int(i) if truth => Value::Bool(*i != 0),
        ValueKind::Int(i) => Value::Int(*i),
        ValueKind::Name(name) if !truth => match name.strip_prefix("logging.").and_then(logging_level) {
            Some(level) => Value::Int(level),
            None => Value::Other(v.text.clone()),
        },
        _ => Value::Other(v.text.clone()),
    }
}

/// Python's `logging` level constants.
fn logging_level(name: &str) -> Option<i64> {
    Some(match name {
        "CRITICAL" | "FATAL" => 50,
        "ERROR" => 40,
        "WARNING" | "WARN" => 30,
        "INFO" => 20,
        "DEBUG" => 10,
        "NOTSET" => 0,
        _ => return None,
    })
}

/// Python's `logging.ERROR`: the level Kopf logs handler failures at.
const ERROR: i64 = 40;

/// The outcome of a sequence of assignments to one setting, as a yes/no question ("is posting
/// on", "do ERROR records pass the level").
enum Fold<'a> {
    /// Decided: `by` is the assignment that decided it (`None`: Kopf's default).
    Known { value: bool, by: Option<&'a Assignment> },
    Undecidable {
        at: SourceLine,
        guard: Option<SourceLine>,
        why: String,
    },
}

/// Folds assignments in execution order: an unconditional one decides (or, with a value the
/// source does not give, makes it undecidable); a conditional one makes it undecidable unless it
/// sets what is already known.
fn fold<'a>(
    assignments: impl Iterator<Item = &'a Assignment>,
    default: bool,
    effect: impl Fn(&Value) -> Option<bool>,
) -> Fold<'a> {
    let mut state = Fold::Known {
        value: default,
        by: None,
    };
    for a in assignments {
        let e = effect(&a.value);
        match (&a.condition, e) {
            (None, Some(value)) => state = Fold::Known { value, by: Some(a) },
            (None, None) => {
                state = Fold::Undecidable {
                    at: a.at.clone(),
                    guard: None,
                    why: format!("posting.{} is set to `{}`", a.setting.name(), display(&a.value)),
                }
            }
            (Some(_), Some(value)) if matches!(state, Fold::Known { value: v, .. } if v == value) => {}
            (Some(c), _) => {
                if matches!(state, Fold::Known { .. }) {
                    state = Fold::Undecidable {
                        at: a.at.clone(),
                        guard: c.guard.clone(),
                        why: c.why.clone(),
                    };
                }
            }
        }
    }
    state
}

fn display(value: &Value) -> String {
    match value {
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Int(i) => i.to_string(),
        Value::Other(text) => text.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::core::v1::{ConfigMap, Container};

    /// The posting settings of `src` as `op.py`.
    fn read(src: &str) -> PostingSource {
        posting_settings("op.py", src)
    }

    #[track_caller]
    fn disabled_at(src: &str) -> SourceLine {
        match read(src).enabled {
            PostingSetting::Disabled(at) => at,
            other => panic!("expected Disabled, got {other:?}"),
        }
    }

    /// (line, guard line, why) of an undecidable `enabled`.
    #[track_caller]
    fn undecidable(src: &str) -> (usize, Option<usize>, String) {
        match read(src).enabled {
            PostingSetting::Undecidable { at, guard, why } => (at.line, guard.map(|g| g.line), why),
            other => panic!("expected Undecidable, got {other:?}"),
        }
    }

    /// A startup handler `configure(settings, **_)` with `body` (indented by the caller).
    fn startup(body: &str) -> String {
        format!("import kopf\n\n@kopf.on.startup()\ndef configure(settings, **_):\n{body}")
    }

    fn configmap_source(path: &str) -> String {
        let raw = std::fs::read_to_string(format!("{}/tests/fixtures/{path}", env!("CARGO_MANIFEST_DIR"))).unwrap();
        let v: serde_json::Value = serde_json::from_str(&raw).unwrap();
        let cm = v.get("items").and_then(|i| i.get(0)).unwrap_or(&v);
        cm["data"]["operator.py"].as_str().unwrap().to_string()
    }

    // ---- the real sources -----------------------------------------------------------------

    #[test]
    fn conditional_posting_bundle_is_undecidable_at_line_11() {
        let src = configmap_source("bundles/conditional-posting/operator/configmaps.json");
        match posting_settings("operator.py", &src).enabled {
            PostingSetting::Undecidable { at, guard, why } => {
                assert_eq!(at.to_string(), "operator.py:11: settings.posting.enabled = False");
                let guard = guard.unwrap();
                assert_eq!(guard.line, 10);
                assert_eq!(
                    guard.text,
                    r#"if os.environ.get("KOPF_POSTING", "default") == "disabled":"#
                );
                assert_eq!(why, "conditional on line 10");
            }
            other => panic!("{other:?}"),
        }
    }

    /// The env of the bundle's Deployment (`KOPF_POSTING=disabled`, a literal `value`).
    fn bundle_env(path: &str) -> Env {
        let raw = std::fs::read_to_string(format!("{}/tests/fixtures/{path}", env!("CARGO_MANIFEST_DIR"))).unwrap();
        let v: serde_json::Value = serde_json::from_str(&raw).unwrap();
        let d: Deployment =
            serde_json::from_value(v.get("items").and_then(|i| i.get(0)).unwrap_or(&v).clone()).unwrap();
        Env::of_deployment(&d, "operator", &[])
    }

    fn env_of(vars: serde_json::Value, configmaps: &[serde_json::Value]) -> Env {
        let c: Container = serde_json::from_value(serde_json::json!({"name": "operator", "env": vars})).unwrap();
        let cms: Vec<ConfigMap> = configmaps
            .iter()
            .map(|c| serde_json::from_value(c.clone()).unwrap())
            .collect();
        Env::of_container(&c, &cms)
    }

    /// Issue 11 item 11: the condition the source alone cannot decide is decided by the
    /// Deployment's env, which the bundle holds (`KOPF_POSTING=disabled`).
    #[test]
    fn conditional_posting_bundle_is_decided_by_its_deployment_env() {
        let src = configmap_source("bundles/conditional-posting/operator/configmaps.json");
        let env = bundle_env("bundles/conditional-posting/operator/deployment.json");
        let s = posting_settings_in("operator.py", &src, &env);
        match &s.enabled {
            PostingSetting::Disabled(at) => {
                assert_eq!(at.to_string(), "operator.py:11: settings.posting.enabled = False")
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(s.enabled_decided_by.len(), 1);
        assert_eq!(
            s.enabled_decided_by[0].describe(),
            r#"operator.py:10: if os.environ.get("KOPF_POSTING", "default") == "disabled": (holds by the operator's env: KOPF_POSTING = "disabled" (env of container operator))"#
        );
        assert_eq!(s.enabled_decided_by[0].vars, ["KOPF_POSTING"]);
        // Another value: the branch never runs, posting stays on, the line is shown as ignored.
        let other = env_of(serde_json::json!([{"name": "KOPF_POSTING", "value": "default"}]), &[]);
        let s = posting_settings_in("operator.py", &src, &other);
        assert_eq!(s.enabled, PostingSetting::Default);
        assert_eq!(s.ignored.len(), 1, "{:?}", s.ignored);
        assert!(
            s.ignored[0].why.starts_with("never runs: the condition on line 10")
                && s.ignored[0].why.contains(r#"KOPF_POSTING = "default""#),
            "{}",
            s.ignored[0].why
        );
    }

    #[test]
    fn env_conditions_in_their_usual_shapes() {
        let disabled = env_of(
            serde_json::json!([{"name": "KOPF_POSTING", "value": "Disabled "}, {"name": "QUIET", "value": "1"}]),
            &[],
        );
        let startup =
            |body: &str| format!("import os\nimport kopf\n\n@kopf.on.startup()\ndef configure(settings, **_):\n{body}");
        for body in [
            "    mode = os.environ.get('KOPF_POSTING', 'default').strip().lower()\n    if mode == 'disabled':\n        settings.posting.enabled = False\n",
            "    if os.getenv('KOPF_POSTING', '').lower().strip() in ('disabled', 'off'):\n        settings.posting.enabled = False\n",
            "    if os.environ['QUIET'] == '1' and not os.environ.get('LOUD_NEVER_SET') is None or True:\n        settings.posting.enabled = False\n",
            "    if os.environ.get('QUIET'):\n        settings.posting.enabled = False\n",
            "    if os.environ.get('QUIET') != '1':\n        pass\n    elif os.environ.get('KOPF_POSTING'):\n        settings.posting.enabled = False\n",
            "    if os.environ.get('QUIET') == '0':\n        pass\n    else:\n        settings.posting.enabled = False\n",
        ] {
            let s = posting_settings_in("op.py", &startup(body), &disabled);
            assert!(
                matches!(s.enabled, PostingSetting::Disabled(_)),
                "{body}: {:?}",
                s.enabled
            );
            assert!(!s.enabled_decided_by.is_empty(), "{body}");
        }
        // `from os import environ, getenv`.
        let src = "from os import environ, getenv\nimport kopf\n\n@kopf.on.startup()\ndef configure(settings, **_):\n    if environ.get('QUIET') == '1' and getenv('QUIET') == '1':\n        settings.posting.enabled = False\n";
        assert!(matches!(
            posting_settings_in("op.py", src, &disabled).enabled,
            PostingSetting::Disabled(_)
        ));
        // A taken branch skips the later ones.
        let src = startup(
            "    if os.environ.get('QUIET') == '1':\n        pass\n    elif x:\n        settings.posting.enabled = False\n",
        );
        let s = posting_settings_in("op.py", &src, &disabled);
        assert_eq!(s.enabled, PostingSetting::Default);
        assert!(
            s.ignored[0].why.contains("the branch on line 6 before it is taken"),
            "{:?}",
            s.ignored
        );
    }

    #[test]
    fn what_the_env_cannot_decide_stays_undecidable_and_says_why() {
        let startup =
            |body: &str| format!("import os\nimport kopf\n\n@kopf.on.startup()\ndef configure(settings, **_):\n{body}");
        let src = startup(
            "    if os.environ.get('KOPF_POSTING', 'default') == 'disabled':\n        settings.posting.enabled = False\n",
        );
        let why = |env: &Env| match posting_settings_in("op.py", &src, env).enabled {
            PostingSetting::Undecidable { why, .. } => why,
            other => panic!("{other:?}"),
        };
        // No env at all, a variable the Deployment does not set (the image may), a Secret, a
        // ConfigMap not in evidence, a fieldRef, an envFrom Secret.
        assert_eq!(
            why(&Env::unknown()),
            "conditional on line 6",
            "no env in evidence: as before"
        );
        let w = why(&env_of(serde_json::json!([{"name": "OTHER", "value": "x"}]), &[]));
        assert!(
            w.ends_with(
                "KOPF_POSTING is not set in the env of container operator; the image's own ENV is not in evidence"
            ),
            "{w}"
        );
        let secret = env_of(
            serde_json::json!([{"name": "KOPF_POSTING", "valueFrom": {"secretKeyRef": {"name": "op-secret", "key": "posting"}}}]),
            &[],
        );
        let w = why(&secret);
        assert!(
            w.ends_with("KOPF_POSTING comes from Secret op-secret key posting, whose value is never collected"),
            "{w}"
        );
        let cm_ref = serde_json::json!([{"name": "KOPF_POSTING", "valueFrom": {"configMapKeyRef": {"name": "op-settings", "key": "posting"}}}]);
        assert!(
            why(&env_of(cm_ref.clone(), &[]))
                .ends_with("KOPF_POSTING comes from ConfigMap op-settings key posting, which is not in evidence")
        );
        let field = env_of(
            serde_json::json!([{"name": "KOPF_POSTING", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]),
            &[],
        );
        assert!(why(&field).ends_with("KOPF_POSTING comes from a fieldRef"));
        let c: Container = serde_json::from_value(
            serde_json::json!({"name": "operator", "envFrom": [{"secretRef": {"name": "all"}}]}),
        )
        .unwrap();
        assert!(why(&Env::of_container(&c, &[])).contains("may come from envFrom Secret all"));
        // A ConfigMap in evidence decides it, and says where the value came from.
        let cm = serde_json::json!({"metadata": {"name": "op-settings"}, "data": {"posting": "disabled"}});
        let s = posting_settings_in("op.py", &src, &env_of(cm_ref, std::slice::from_ref(&cm)));
        assert!(matches!(s.enabled, PostingSetting::Disabled(_)));
        assert!(
            s.enabled_decided_by[0].facts[0]
                .ends_with("(env of container operator, from ConfigMap op-settings key posting)"),
            "{:?}",
            s.enabled_decided_by
        );
        let c: Container = serde_json::from_value(serde_json::json!({"name": "operator", "envFrom": [{"configMapRef": {"name": "op-env"}, "prefix": "KOPF_"}]})).unwrap();
        let env_cm = serde_json::json!({"metadata": {"name": "op-env"}, "data": {"POSTING": "disabled"}});
        assert!(matches!(
            posting_settings_in(
                "op.py",
                &src,
                &Env::of_container(&c, &[serde_json::from_value(env_cm).unwrap()])
            )
            .enabled,
            PostingSetting::Disabled(_)
        ));
        // A Secret's value is never printed: it is never read.
        let s = posting_settings_in("op.py", &src, &secret);
        assert!(!format!("{s:?}").contains("disabled\" (env"));
        // A name rebound under a condition is not known.
        let src = startup(
            "    mode = os.getenv('KOPF_POSTING')\n    if extra():\n        mode = 'x'\n    if mode == 'disabled':\n        settings.posting.enabled = False\n",
        );
        let env = env_of(serde_json::json!([{"name": "KOPF_POSTING", "value": "disabled"}]), &[]);
        assert!(matches!(
            posting_settings_in("op.py", &src, &env).enabled,
            PostingSetting::Undecidable { .. }
        ));
        // Literal-only comparisons are not the env's to decide.
        let src = startup("    if 'a' == 'a':\n        settings.posting.enabled = False\n");
        assert!(matches!(
            posting_settings_in("op.py", &src, &env).enabled,
            PostingSetting::Undecidable { .. }
        ));
    }

    #[test]
    fn real_kopf_1_38_operator_is_disabled_at_line_9() {
        let src = configmap_source("kopf-1.38-real/deployment/configmap.json");
        let s = posting_settings("operator.py", &src);
        assert_eq!(
            s.enabled,
            PostingSetting::Disabled(SourceLine {
                file: "operator.py".into(),
                line: 9,
                text: "settings.posting.enabled = False".into()
            })
        );
        assert_eq!(s.level, LevelSetting::Default);
        assert!(s.ignored.is_empty() && s.parse_error.is_none());
    }

    // ---- unconditional, and what only looks like it ----------------------------------------

    #[test]
    fn an_unconditional_assignment_in_startup_proves_disabled() {
        let src = "import kopf\n\n@kopf.on.startup()\nasync def configure(settings, **_):\n    settings.posting.level = 20\n    settings.posting.enabled = False  # quiet\n";
        let s = read(src);
        assert_eq!(
            s.enabled,
            PostingSetting::Disabled(SourceLine {
                file: "op.py".into(),
                line: 6,
                text: "settings.posting.enabled = False".into()
            })
        );
        assert_eq!(s.level, LevelSetting::Default);
    }

    #[test]
    fn falsy_constants_and_annotated_or_setattr_assignments_disable_too() {
        assert_eq!(disabled_at(&startup("    settings.posting.enabled = 0\n")).line, 5);
        assert_eq!(disabled_at(&startup("    settings.posting.enabled = None\n")).line, 5);
        assert_eq!(
            disabled_at(&startup("    settings.posting.enabled: bool = False\n")).line,
            5
        );
        let at = disabled_at(&startup("    setattr(settings.posting, 'enabled', False)\n"));
        assert_eq!(at.text, "setattr(settings.posting, 'enabled', False)");
        assert_eq!(
            disabled_at(&startup("    getattr(settings, 'posting').enabled = False\n")).line,
            5
        );
        assert_eq!(
            disabled_at(&startup("    x = settings.posting.enabled = False\n")).line,
            5
        );
        assert_eq!(
            disabled_at(&startup("    settings.posting.enabled, y = False, 1\n")).line,
            5
        );
    }

    #[test]
    fn code_in_strings_and_comments_is_not_an_assignment() {
        let src = startup(concat!(
            "    \"\"\"Turn posting off:\n",
            "    settings.posting.enabled = False\n",
            "    \"\"\"\n",
            "    # settings.posting.enabled = False\n",
            "    note = 'settings.posting.enabled = False'\n",
            "    settings.scanning.disabled = True\n",
        ));
        assert_eq!(read(&src).enabled, PostingSetting::Default);
        assert_eq!(
            read("# settings.posting.enabled = False\nx = 1 == 2\n").enabled,
            PostingSetting::Default
        );
    }

    #[test]
    fn a_later_assignment_decides() {
        let src = startup("    settings.posting.enabled = False\n    settings.posting.enabled = True\n");
        assert_eq!(read(&src).enabled, PostingSetting::Default);
        // A conditional True after an unconditional False: undecidable at the True.
        let src =
            startup("    settings.posting.enabled = False\n    if cond():\n        settings.posting.enabled = True\n");
        assert_eq!(undecidable(&src).0, 7);
        // A conditional False after which an unconditional True: on.
        let src =
            startup("    if cond():\n        settings.posting.enabled = False\n    settings.posting.enabled = True\n");
        assert_eq!(read(&src).enabled, PostingSetting::Default);
        // A conditional True changes nothing that is on anyway.
        let src = startup("    if cond():\n        settings.posting.enabled = True\n");
        assert_eq!(read(&src).enabled, PostingSetting::Default);
        // Two startup handlers run in registration (source) order.
        let src = format!(
            "{}\n@kopf.on.startup()\ndef again(settings, **_):\n    settings.posting.enabled = True\n",
            startup("    settings.posting.enabled = False\n")
        );
        assert_eq!(read(&src).enabled, PostingSetting::Default);
        // An expression the source does not decide.
        let (line, guard, why) = undecidable(&startup(
            "    settings.posting.enabled = os.environ.get('POST') == '1'\n",
        ));
        assert_eq!((line, guard), (5, None));
        assert_eq!(why, "posting.enabled is set to `os.environ.get('POST') == '1'`");
    }

    // ---- multi-line statements ---------------------------------------------------------------

    #[test]
    fn multi_line_decorators_signatures_and_assignments() {
        let src = concat!(
            "import kopf\n",
            "\n",
            "@kopf.on.startup(\n",
            "    id='configure',  # a comment\n",
            "    retries=3,\n",
            ")\n",
            "def configure(\n",
            "    settings: kopf.OperatorSettings,\n",
            "    **_,\n",
            "):\n",
            "    settings.posting.enabled = (  # off\n",
            "        False\n",
            "    )\n",
        );
        let at = disabled_at(src);
        assert_eq!(at.line, 11);
        assert_eq!(at.text, "settings.posting.enabled = ( False )");
        let at = disabled_at(&startup("    settings.posting.enabled = \\\n        False\n"));
        assert_eq!((at.line, at.text.as_str()), (5, "settings.posting.enabled = False"));
        let at = disabled_at(&startup("    settings.posting \\\n        .enabled = False; x = 1\n"));
        assert_eq!(at.line, 5);
    }

    // ---- aliases of kopf --------------------------------------------------------------------

    #[test]
    fn kopf_imported_under_other_names() {
        let body = "def configure(settings, **_):\n    settings.posting.enabled = False\n";
        for (header, decorator) in [
            ("import kopf as k", "@k.on.startup()"),
            ("from kopf import on", "@on.startup()"),
            ("from kopf import on as handlers", "@handlers.startup()"),
            ("import kopf.on", "@kopf.on.startup()"),
            ("import kopf.on as o", "@o.startup()"),
            ("from kopf.on import startup", "@startup()"),
            ("from kopf.on import startup as at_start", "@at_start()"),
            ("from kopf import *", "@on.startup()"),
            (
                "try:\n    import kopf\nexcept ImportError:\n    raise",
                "@kopf.on.startup()",
            ),
        ] {
            let src = format!("{header}\n\n{decorator}\n{body}");
            assert!(matches!(read(&src).enabled, PostingSetting::Disabled(_)), "{src}");
        }
        // Registered by calling the decorator.
        let src = format!("import kopf\n\n{body}\nkopf.on.startup()(configure)\n");
        assert!(matches!(read(&src).enabled, PostingSetting::Disabled(_)), "{src}");
        // Names that are not kopf's.
        for src in [
            format!("import notkopf as kopf\n\n@kopf.on.startup()\n{body}"),
            format!("from mylib import on\n\n@on.startup()\n{body}"),
            format!("@kopf.on.startup()\n{body}"),
            format!("import kopf\n\n@kopf.on.cleanup()\n{body}"),
        ] {
            let (line, _, why) = undecidable(&src);
            assert_eq!(why, "not in an @kopf.on.startup function", "{src}");
            assert!(line >= 3);
        }
    }

    // ---- which parameter receives the settings -----------------------------------------------

    #[test]
    fn only_the_settings_keyword_reaches_kopf_settings() {
        let with =
            |sig: &str, line: &str| format!("import kopf\n\n@kopf.on.startup()\ndef configure({sig}):\n    {line}\n");
        for (sig, line) in [
            (
                "settings: kopf.OperatorSettings, **_",
                "settings.posting.enabled = False",
            ),
            ("*, settings, logger, **_", "settings.posting.enabled = False"),
            ("**kwargs", "kwargs['settings'].posting.enabled = False"),
            ("logger, **kw", "kw.get('settings').posting.enabled = False"),
        ] {
            assert_eq!(disabled_at(&with(sig, line)).line, 5, "{sig}");
        }
        // A parameter under another name gets no settings: Kopf calls fn(**kwargs).
        for (sig, line) in [
            ("s, **_", "s.posting.enabled = False"),
            ("settings, /, **kwargs", "settings.posting.enabled = False"),
            ("settings, **kwargs", "kwargs['settings'].posting.enabled = False"),
        ] {
            let s = read(&with(sig, line));
            assert_eq!(s.enabled, PostingSetting::Default, "{sig}");
            assert_eq!(s.ignored.len(), 1, "{sig}: {:?}", s.ignored);
            assert_eq!(s.ignored[0].at.line, 5);
        }
        let s = read(&with("s, **_", "s.posting.enabled = False"));
        assert!(
            s.ignored[0].why.contains("keyword argument `settings`"),
            "{}",
            s.ignored[0].why
        );
    }

    #[test]
    fn assignments_through_local_aliases() {
        assert_eq!(
            disabled_at(&startup(
                "    posting = settings.posting\n    posting.enabled = False\n"
            ))
            .line,
            6
        );
        assert_eq!(
            disabled_at(&startup("    s = settings\n    p = s.posting\n    p.enabled = False\n")).line,
            7
        );
        assert_eq!(
            disabled_at(&startup(
                "    posting = settings.posting\n    posting.level = 20\n    setattr(posting, 'enabled', False)\n"
            ))
            .line,
            7
        );
        // Bound only under a condition: the assignment through it is conditional too.
        let (line, guard, _) = undecidable(&startup(
            "    if cond():\n        posting = settings.posting\n    posting.enabled = False\n",
        ));
        assert_eq!((line, guard), (7, Some(5)));
        // Rebound to something else: `<name>.posting.enabled` is not known to be Kopf's ...
        let (line, _, why) = undecidable(&startup(
            "    s = settings\n    s = make()\n    s.posting.enabled = False\n",
        ));
        assert_eq!(line, 7);
        assert!(why.contains("`s` is not known to be Kopf's settings"), "{why}");
        // ... and a bare `<name>.enabled` is not a posting setting at all.
        let src = startup("    posting = settings.posting\n    posting = make()\n    posting.enabled = False\n");
        assert_eq!(read(&src).enabled, PostingSetting::Default);
        // The whole posting object replaced: its values are unknown.
        let (line, _, why) = undecidable(&startup("    settings.posting = PostingSettings(enabled=False)\n"));
        assert_eq!(line, 5);
        assert!(
            why.contains("posting replaced by PostingSettings(enabled=False)"),
            "{why}"
        );
    }

    // ---- conditions ---------------------------------------------------------------------------

    #[test]
    fn nested_in_any_block_is_undecidable_with_its_guard() {
        for (block, guard_line) in [
            ("    if cond():\n        settings.posting.enabled = False\n", 5),
            (
                "    if a:\n        pass\n    elif b:\n        settings.posting.enabled = False\n",
                7,
            ),
            (
                "    if a:\n        pass\n    else:\n        settings.posting.enabled = False\n",
                5,
            ),
            (
                "    try:\n        settings.posting.enabled = False\n    except Exception:\n        pass\n",
                5,
            ),
            (
                "    try:\n        pass\n    except Exception:\n        settings.posting.enabled = False\n",
                7,
            ),
            ("    with lock:\n        settings.posting.enabled = False\n", 5),
            ("    for x in xs:\n        settings.posting.enabled = False\n", 5),
            ("    while waiting():\n        settings.posting.enabled = False\n", 5),
            (
                "    match mode:\n        case 'quiet':\n            settings.posting.enabled = False\n",
                6,
            ),
        ] {
            let (_, guard, why) = undecidable(&startup(block));
            assert_eq!(guard, Some(guard_line), "{block}");
            assert_eq!(why, format!("conditional on line {guard_line}"), "{block}");
        }
        // `finally` runs whenever the `try` does.
        let src = startup("    try:\n        pass\n    finally:\n        settings.posting.enabled = False\n");
        assert_eq!(disabled_at(&src).line, 8);
    }

    #[test]
    fn nested_functions_and_returns() {
        let (line, guard, why) = undecidable(&startup(
            "    def quiet():\n        settings.posting.enabled = False\n    quiet()\n",
        ));
        assert_eq!((line, guard), (6, Some(5)));
        assert!(why.contains("nested function `quiet`"), "{why}");
        // After a conditional return.
        let (line, guard, why) = undecidable(&startup(
            "    if os.environ.get('LOUD'):\n        return\n    settings.posting.enabled = False\n",
        ));
        assert_eq!((line, guard), (7, Some(6)));
        assert_eq!(why, "a conditional return on line 6 comes before it");
        let (_, guard, why) = undecidable(&startup(
            "    for x in xs:\n        if x:\n            raise kopf.PermanentError('no')\n    settings.posting.enabled = False\n",
        ));
        assert_eq!(guard, Some(7));
        assert!(why.starts_with("a conditional raise"), "{why}");
        // After an unconditional return: never runs.
        let s = read(&startup("    return\n    settings.posting.enabled = False\n"));
        assert_eq!(s.enabled, PostingSetting::Default);
        assert_eq!(s.ignored.len(), 1);
        assert!(
            s.ignored[0].why.starts_with("unreachable: after `return` on line 5"),
            "{:?}",
            s.ignored
        );
        // A return inside a nested function does not matter.
        let src = startup("    def helper():\n        return 1\n    settings.posting.enabled = False\n");
        assert_eq!(disabled_at(&src).line, 7);
    }

    #[test]
    fn startup_functions_registered_under_a_condition() {
        let src = "import os\nimport kopf\n\nif os.environ.get('QUIET'):\n    @kopf.on.startup()\n    def configure(settings, **_):\n        settings.posting.enabled = False\n";
        let (line, guard, why) = undecidable(src);
        assert_eq!((line, guard), (7, Some(4)));
        assert!(why.contains("registered only under the condition on line 4"), "{why}");
        let src = "import kopf\n\ndef register():\n    @kopf.on.startup()\n    def configure(settings, **_):\n        settings.posting.enabled = False\n";
        assert!(undecidable(src).2.contains("defined inside another function"));
        let src = "import kopf\n\n@kopf.on.startup(registry=mine)\ndef configure(settings, **_):\n    settings.posting.enabled = False\n";
        assert!(undecidable(src).2.contains("registry="));
        let src =
            "import kopf\n\n@kopf.on.startup\ndef configure(settings, **_):\n    settings.posting.enabled = False\n";
        assert!(undecidable(src).2.contains("without `()`"));
    }

    #[test]
    fn outside_startup_or_module_level_is_undecidable() {
        let src = "@kopf.on.create('x')\ndef h(settings, **_):\n    settings.posting.enabled = False\n";
        assert_eq!(undecidable(src).2, "not in an @kopf.on.startup function");
        let src = "settings.posting.enabled = False\n";
        assert!(undecidable(src).2.starts_with("not inside a function"));
        // A resource handler's change comes after the startup handler's.
        let src = format!(
            "{}\n@kopf.on.create('x')\ndef h(memo, **_):\n    memo.settings.posting.enabled = True\n",
            startup("    settings.posting.enabled = False\n")
        );
        assert_eq!(undecidable(&src).0, 9);
    }

    // ---- posting.level ----------------------------------------------------------------------

    #[test]
    fn a_level_above_error_keeps_handler_errors_out() {
        let level = |header: &str, value: &str| {
            read(&format!("import kopf\n{header}\n\n@kopf.on.startup()\ndef configure(settings, **_):\n    settings.posting.level = {value}\n")).level
        };
        for (header, value, expected) in [
            ("import logging", "logging.CRITICAL", 50),
            ("import logging", "logging.FATAL", 50),
            ("import logging as log", "log.CRITICAL", 50),
            ("from logging import CRITICAL", "CRITICAL", 50),
            ("", "45", 45),
        ] {
            match level(header, value) {
                LevelSetting::AboveError { at, level } => {
                    assert_eq!((at.line, level), (6, expected), "{value}");
                }
                other => panic!("{value}: {other:?}"),
            }
        }
        for (header, value) in [
            ("import logging", "logging.ERROR"),
            ("import logging", "logging.WARNING"),
            ("", "10"),
        ] {
            assert_eq!(level(header, value), LevelSetting::Default, "{value}");
        }
        // Not an import of logging: the name's value is unknown.
        match level("", "CRITICAL") {
            LevelSetting::Undecidable { why, .. } => assert_eq!(why, "posting.level is set to `CRITICAL`"),
            other => panic!("{other:?}"),
        }
        // Conditional: undecidable.
        let src = "import kopf, logging\n\n@kopf.on.startup()\ndef configure(settings, **_):\n    if quiet:\n        settings.posting.level = logging.CRITICAL\n";
        match read(src).level {
            LevelSetting::Undecidable { at, guard, .. } => assert_eq!((at.line, guard.map(|g| g.line)), (6, Some(5))),
            other => panic!("{other:?}"),
        }
        // The enabled switch is independent of the level.
        assert_eq!(read(src).enabled, PostingSetting::Default);
    }

    #[test]
    fn loggers_assignment_is_reported() {
        let s = read(&startup("    settings.posting.loggers = True\n"));
        assert_eq!(s.loggers.unwrap().line, 5);
        assert_eq!(read(&startup("    s = 1\n")).loggers, None);
    }

    // ---- sources that do not parse ------------------------------------------------------------

    #[test]
    fn a_source_that_does_not_parse_is_undecidable_at_its_error_line() {
        for (src, line) in [
            // Python 2.
            ("import kopf\n\nprint 'starting'\n", 3),
            ("import kopf\n\nif True:\n    raise ValueError, 'bad'\n", 4),
            // A syntax error.
            (
                "import kopf\n\ndef configure(settings, **_)\n    settings.posting.enabled = False\n",
                3,
            ),
            // A ConfigMap cut in the middle of a call.
            (
                "import kopf\n\n@kopf.on.startup()\ndef configure(settings, **_):\n    settings.posting.enabled = bool(\n",
                5,
            ),
        ] {
            let s = read(src);
            let failure = s.parse_error.clone().unwrap_or_else(|| panic!("{src}: parsed"));
            assert_eq!(failure.at.line, line, "{src}: {failure:?}");
            assert!(!failure.message.is_empty());
            match s.enabled {
                PostingSetting::Undecidable { at, why, .. } => {
                    assert_eq!(at.line, line);
                    assert!(why.starts_with("the source does not parse: "), "{why}");
                }
                other => panic!("{other:?}"),
            }
            assert!(matches!(s.level, LevelSetting::Undecidable { .. }));
        }
        // Empty sources, a byte-order mark, tabs: fine.
        assert_eq!(read("").enabled, PostingSetting::Default);
        assert_eq!(read("\u{feff}import kopf\n").enabled, PostingSetting::Default);
        assert_eq!(disabled_at(&startup("\tsettings.posting.enabled = False\n")).line, 5);
    }

    #[test]
    fn machine_made_depth_does_not_exhaust_the_stack() {
        // A 200,000-link attribute chain, 100,000 unary minus and 150 nested blocks, on a test
        // thread's stack (2 MiB).
        for src in [
            format!("import kopf\nx = a{}\n", ".b".repeat(200_000)),
            format!("x = {}1\n", "-".repeat(100_000)),
        ] {
            let s = read(&src);
            let failure = s.parse_error.unwrap();
            assert!(
                failure.message.starts_with("nested more than 3000 levels deep"),
                "{}",
                failure.message
            );
            assert!(matches!(s.enabled, PostingSetting::Undecidable { .. }));
        }
        // A machine-made condition on the env, 2,900 `not`s deep: not evaluated, no overflow.
        let env = env_of(serde_json::json!([{"name": "X", "value": "1"}]), &[]);
        let src = startup(&format!(
            "    if {}os.environ.get('X'):\n        settings.posting.enabled = False\n",
            "not ".repeat(2900)
        ));
        let s = posting_settings_in("op.py", &format!("import os\n{src}"), &env);
        assert!(
            matches!(s.enabled, PostingSetting::Undecidable { .. }),
            "{:?}",
            s.enabled
        );
        // 2,000 levels (CPython compiles that) are read.
        let src = startup(&format!(
            "    x = {}1\n    settings.posting.enabled = False\n",
            "-".repeat(2000)
        ));
        assert_eq!(disabled_at(&src).line, 6);
        let mut deep = startup("");
        for i in 0..150 {
            deep.push_str(&format!("{}if c{i}:\n", "    ".repeat(i + 1)));
        }
        deep.push_str(&format!("{}settings.posting.enabled = False\n", "    ".repeat(151)));
        let s = read(&deep);
        assert!(
            matches!(s.enabled, PostingSetting::Undecidable { .. }),
            "{:?}",
            s.enabled
        );
    }
}
