//! Kopf settings read from an operator's Python source, and the Kopf version from its
//! Deployment. Pure functions over text; the source comes from a ConfigMap the Deployment mounts.
//!
//! Only what the source proves is claimed: an assignment `<settings>.posting.enabled = False`
//! at the top level of an `@kopf.on.startup` function's body runs on every start, so it proves
//! posting is off; the same assignment under an `if`/`for`/`try`/`with` (or outside a startup
//! function) depends on run-time state and is reported as undecidable with its line.

use k8s_openapi::api::apps::v1::Deployment;
use serde::Serialize;

/// Where a setting was found: the file (ConfigMap key) and its 1-based line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SourceLine {
    /// The file name (the ConfigMap key, e.g. `operator.py`).
    pub file: String,
    /// 1-based line number.
    pub line: usize,
    /// The line's text, trimmed.
    pub text: String,
}

impl std::fmt::Display for SourceLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.text)
    }
}

/// What the source says about `settings.posting.enabled`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PostingSetting {
    /// No assignment: Kopf's default (posting on).
    Default,
    /// An unconditional `= False` at the top level of an `@kopf.on.startup` function: off.
    Disabled(SourceLine),
    /// An assignment to `False` whose effect depends on run-time state: undecidable. `guard` is
    /// the enclosing `if`/`for`/... line when there is one.
    Undecidable {
        /// The assignment.
        at: SourceLine,
        /// The enclosing condition, when the assignment is nested in one.
        guard: Option<SourceLine>,
        /// Why it cannot be decided, in words.
        why: String,
    },
}

/// What the operator's source sets for posting (Kopf `settings.posting.*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostingSource {
    /// `settings.posting.enabled`.
    pub enabled: PostingSetting,
    /// Any assignment to `settings.posting.loggers` (Kopf ≥ 1.44: which loggers' records are posted).
    pub loggers: Option<SourceLine>,
    /// Any assignment to `settings.posting.level`.
    pub level: Option<SourceLine>,
}

/// Reads the posting settings of one Python file. Looks for assignments to
/// `<name>.posting.enabled`, `.posting.loggers`, `.posting.level`; comments are ignored.
pub fn posting_settings(file: &str, source: &str) -> PostingSource {
    let lines: Vec<&str> = source.lines().collect();
    let mut enabled = PostingSetting::Default;
    let mut loggers = None;
    let mut level = None;
    for (index, raw) in lines.iter().enumerate() {
        let code = strip_comment(raw);
        let Some((target, value)) = assignment(code) else {
            continue;
        };
        let at = SourceLine {
            file: file.to_string(),
            line: index + 1,
            text: code.trim().to_string(),
        };
        if target.ends_with(".posting.loggers") {
            loggers = Some(at);
        } else if target.ends_with(".posting.level") {
            level = Some(at);
        } else if target.ends_with(".posting.enabled") {
            if value != "False" {
                // A later `= True` (or an expression) overrides what an earlier line proved.
                if matches!(enabled, PostingSetting::Disabled(_)) || value != "True" {
                    enabled = PostingSetting::Undecidable {
                        guard: None,
                        why: format!("posting.enabled is set to `{value}`"),
                        at,
                    };
                }
                continue;
            }
            enabled = classify_disable(&lines, index, at);
        }
    }
    PostingSource {
        enabled,
        loggers,
        level,
    }
}

fn classify_disable(lines: &[&str], index: usize, at: SourceLine) -> PostingSetting {
    let indent = indentation(lines[index]);
    // Walk up to the enclosing blocks: the nearest less-indented code lines.
    let mut want = indent;
    let mut guard = None;
    let mut function = None;
    for j in (0..index).rev() {
        let code = strip_comment(lines[j]);
        if code.trim().is_empty() {
            continue;
        }
        let i = indentation(lines[j]);
        if i >= want {
            continue;
        }
        want = i;
        let trimmed = code.trim();
        if trimmed.starts_with("def ") || trimmed.starts_with("async def ") {
            function = Some(j);
            break;
        }
        if guard.is_none() {
            guard = Some(SourceLine {
                file: at.file.clone(),
                line: j + 1,
                text: trimmed.to_string(),
            });
        }
    }
    let Some(def) = function else {
        return PostingSetting::Undecidable {
            at,
            guard,
            why: "not inside a function: Kopf settings exist only in an @kopf.on.startup handler".into(),
        };
    };
    if !is_startup(lines, def) {
        return PostingSetting::Undecidable {
            at,
            guard,
            why: "not in an @kopf.on.startup function".into(),
        };
    }
    // Early returns at the function's top level before the line make it conditional too.
    let body_indent = indent_of_body(lines, def);
    let early_return = (def + 1..index).find(|&j| {
        let code = strip_comment(lines[j]).trim();
        code.starts_with("return") && indentation(lines[j]) > body_indent.unwrap_or(usize::MAX)
    });
    match (guard, early_return) {
        (Some(g), _) => PostingSetting::Undecidable {
            why: format!("conditional on line {}", g.line),
            guard: Some(g),
            at,
        },
        (None, Some(r)) => PostingSetting::Undecidable {
            why: format!("a conditional return on line {} comes before it", r + 1),
            guard: None,
            at,
        },
        (None, None) => PostingSetting::Disabled(at),
    }
}

fn indent_of_body(lines: &[&str], def: usize) -> Option<usize> {
    lines[def + 1..]
        .iter()
        .find(|l| !strip_comment(l).trim().is_empty())
        .map(|l| indentation(l))
}

/// Whether the decorators right above line `def` include `@kopf.on.startup`.
fn is_startup(lines: &[&str], def: usize) -> bool {
    lines[..def]
        .iter()
        .rev()
        .map(|l| strip_comment(l).trim())
        .take_while(|l| l.starts_with('@') || l.is_empty())
        .any(|l| l.starts_with("@kopf.on.startup") || l.starts_with("@on.startup"))
}

fn indentation(line: &str) -> usize {
    line.chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .map(|c| if c == '\t' { 8 } else { 1 })
        .sum()
}

/// The code before a `#` that is not inside a string literal.
fn strip_comment(line: &str) -> &str {
    let mut quote: Option<char> = None;
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (None, '#') => return &line[..i],
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            _ => {}
        }
    }
    line
}

/// `target = value` (not `==`, not augmented), both trimmed.
fn assignment(code: &str) -> Option<(&str, &str)> {
    let eq = code.find('=')?;
    let (left, right) = (&code[..eq], &code[eq + 1..]);
    if right.starts_with('=') || left.ends_with(['!', '<', '>', '+', '-', '*', '/', ':']) {
        return None;
    }
    let target = left.trim();
    if target.is_empty() || !target.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.') {
        return None;
    }
    Some((target, right.trim()))
}

/// A Kopf version and where it was read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KopfVersion {
    /// Major.
    pub major: u32,
    /// Minor.
    pub minor: u32,
    /// Where: `pip pin kopf==1.38.0 (initContainer install)` or `image tag ...`.
    pub source: String,
}

impl KopfVersion {
    /// From Kopf 1.44 on, log records are no longer posted as events unless
    /// `settings.posting.loggers` names their logger; before, every record at or above
    /// `posting.level` (INFO) was posted (an `ERROR` record as type `Error`, reason `Logging`).
    pub fn posts_log_records_by_default(&self) -> bool {
        (self.major, self.minor) < (1, 44)
    }

    /// `1.38`.
    pub fn short(&self) -> String {
        format!("{}.{}", self.major, self.minor)
    }
}

/// The Kopf version a Deployment installs or runs: a `kopf==X.Y[.Z]` pin in any container's or
/// initContainer's command/args (pip), else the tag of an image whose name contains `kopf`.
pub fn kopf_version(deployment: &Deployment) -> Option<KopfVersion> {
    let spec = deployment.spec.as_ref()?.template.spec.as_ref()?;
    let containers = spec.init_containers.iter().flatten().chain(spec.containers.iter());
    let mut from_image = None;
    for c in containers {
        for word in c.command.iter().flatten().chain(c.args.iter().flatten()) {
            for token in word.split_whitespace() {
                if let Some(v) = token.trim_matches(['"', '\'']).strip_prefix("kopf==")
                    && let Some((major, minor)) = parse_version(v)
                {
                    return Some(KopfVersion {
                        major,
                        minor,
                        source: format!("pip pin kopf=={v} (container {})", c.name),
                    });
                }
            }
        }
        let image = c.image.as_deref().unwrap_or("");
        if let Some((repo, tag)) = image.split('@').next().unwrap_or("").rsplit_once(':')
            && !tag.contains('/')
            && repo.rsplit('/').next().is_some_and(|n| n.contains("kopf"))
            && let Some((major, minor)) = parse_version(tag.trim_start_matches('v'))
        {
            from_image = from_image.or(Some(KopfVersion {
                major,
                minor,
                source: format!("image tag {image}"),
            }));
        }
    }
    from_image
}

fn parse_version(v: &str) -> Option<(u32, u32)> {
    let mut parts = v.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor: String = parts.next()?.chars().take_while(char::is_ascii_digit).collect();
    Some((major, minor.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONDITIONAL: &str = "import os\n\nimport kopf\n\n\n@kopf.on.startup()\ndef configure(settings: kopf.OperatorSettings, **_):\n    # comment\n    settings.scanning.disabled = True\n    if os.environ.get(\"KOPF_POSTING\", \"default\") == \"disabled\":\n        settings.posting.enabled = False\n";

    #[test]
    fn a_conditional_assignment_is_undecidable_with_its_line() {
        match posting_settings("operator.py", CONDITIONAL).enabled {
            PostingSetting::Undecidable { at, guard, .. } => {
                assert_eq!(at.line, 11);
                assert_eq!(guard.unwrap().line, 10);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_unconditional_assignment_in_startup_proves_disabled() {
        let src = "import kopf\n\n@kopf.on.startup()\nasync def configure(settings, **_):\n    settings.posting.level = 20\n    settings.posting.enabled = False  # quiet\n";
        let s = posting_settings("op.py", src);
        assert_eq!(
            s.enabled,
            PostingSetting::Disabled(SourceLine {
                file: "op.py".into(),
                line: 6,
                text: "settings.posting.enabled = False".into()
            })
        );
        assert_eq!(s.level.unwrap().line, 5);
    }

    #[test]
    fn outside_startup_or_module_level_is_undecidable() {
        let src = "@kopf.on.create('x')\ndef h(settings, **_):\n    settings.posting.enabled = False\n";
        assert!(matches!(
            posting_settings("a.py", src).enabled,
            PostingSetting::Undecidable { .. }
        ));
        let src = "settings.posting.enabled = False\n";
        assert!(matches!(
            posting_settings("a.py", src).enabled,
            PostingSetting::Undecidable { .. }
        ));
        let src = "# settings.posting.enabled = False\nx = 1 == 2\n";
        assert_eq!(posting_settings("a.py", src).enabled, PostingSetting::Default);
    }

    #[test]
    fn version_from_the_pip_pin_of_the_real_deployment() {
        let raw = include_str!("../../tests/fixtures/bundles/conditional-posting/operator/deployment.json");
        let d: Deployment = serde_json::from_str(raw).unwrap();
        let v = kopf_version(&d).unwrap();
        assert_eq!((v.major, v.minor), (1, 38));
        assert!(v.posts_log_records_by_default());
        assert!(v.source.contains("kopf==1.38.0"), "{}", v.source);
    }

    #[test]
    fn version_from_an_image_tag() {
        let d: Deployment = serde_json::from_value(serde_json::json!({
            "spec": {"selector": {}, "template": {"spec": {"containers": [
                {"name": "op", "image": "ghcr.io/example/kopf-operator:1.44.2"}
            ]}}}
        }))
        .unwrap();
        let v = kopf_version(&d).unwrap();
        assert_eq!(v.short(), "1.44");
        assert!(!v.posts_log_records_by_default());
    }
}
