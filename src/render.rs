//! Human output: kubectl-style tables, ages, colour decisions, and JSON/YAML documents.
//!
//! Renderers return `String`s so they can be snapshot-tested; only the commands write.

use std::io::IsTerminal;

use chrono::{DateTime, Utc};
use comfy_table::{Cell, ContentArrangement, Table, presets};
use serde::Serialize;

use crate::error::AppError;
use crate::text::sanitize;

/// When to colour human output (`--color`; [`use_color`] decides).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorChoice {
    /// Colour a terminal unless NO_COLOR is set and non-empty.
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

/// `-o` values, as kubectl's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputFormat {
    /// JSON documents.
    Json,
    /// YAML documents.
    Yaml,
    /// A wider table.
    Wide,
    /// `RESOURCE.GROUP/NAME` per object, as `kubectl get -o name`.
    Name,
    /// `jsonpath=TEMPLATE`: kubectl's JSONPath template over the `-o json` document.
    JsonPath(crate::jsonpath::Template),
    /// `jsonpath-as-json=TEMPLATE`: the template's values as JSON arrays.
    JsonPathAsJson(crate::jsonpath::Template),
}

impl OutputFormat {
    /// The value as written after `-o`, for messages: `json`, `name`, `jsonpath=...`.
    pub fn flag_value(&self) -> String {
        match self {
            OutputFormat::Json => "json".into(),
            OutputFormat::Yaml => "yaml".into(),
            OutputFormat::Wide => "wide".into(),
            OutputFormat::Name => "name".into(),
            OutputFormat::JsonPath(t) => format!("jsonpath={}", t.source()),
            OutputFormat::JsonPathAsJson(t) => format!("jsonpath-as-json={}", t.source()),
        }
    }

    /// The kind of format (`json`, `jsonpath`, ...), without a template.
    pub fn kind(&self) -> &'static str {
        match self {
            OutputFormat::Json => "json",
            OutputFormat::Yaml => "yaml",
            OutputFormat::Wide => "wide",
            OutputFormat::Name => "name",
            OutputFormat::JsonPath(_) => "jsonpath",
            OutputFormat::JsonPathAsJson(_) => "jsonpath-as-json",
        }
    }

    /// The format with kubectl's `--allow-missing-template-keys=ALLOW` applied to its template
    /// ([`crate::jsonpath::Template::allowing_missing_keys`]); the other formats as they are.
    pub fn allowing_missing_keys(self, allow: bool) -> OutputFormat {
        match self {
            OutputFormat::JsonPath(t) => OutputFormat::JsonPath(t.allowing_missing_keys(allow)),
            OutputFormat::JsonPathAsJson(t) => OutputFormat::JsonPathAsJson(t.allowing_missing_keys(allow)),
            other => other,
        }
    }

    /// Parses a `-o` value as kubectl spells it: `json`, `yaml`, `wide`, `name`,
    /// `jsonpath=TEMPLATE`, `jsonpath-as-json=TEMPLATE`. Errors name the value and list the
    /// formats; a template error names the template.
    pub fn parse(value: &str) -> Result<OutputFormat, String> {
        let template = |t: &str| crate::jsonpath::Template::parse(t).map_err(|e| e.to_string());
        match value {
            "json" => Ok(OutputFormat::Json),
            "yaml" => Ok(OutputFormat::Yaml),
            "wide" => Ok(OutputFormat::Wide),
            "name" => Ok(OutputFormat::Name),
            "jsonpath" | "jsonpath-as-json" => {
                Err(format!("-o {value} needs a template: -o {value}='{{.items[*].name}}'"))
            }
            _ => {
                if let Some(t) = value.strip_prefix("jsonpath=") {
                    Ok(OutputFormat::JsonPath(template(t)?))
                } else if let Some(t) = value.strip_prefix("jsonpath-as-json=") {
                    Ok(OutputFormat::JsonPathAsJson(template(t)?))
                } else {
                    Err(format!(
                        "invalid -o {value:?}: expected json, yaml, wide, name, jsonpath=TEMPLATE or jsonpath-as-json=TEMPLATE"
                    ))
                }
            }
        }
    }
}

/// Whether to colour stdout: `--color always|never` wins; `auto` colours a terminal unless
/// `NO_COLOR` is set to a non-empty value (no-color.org; an empty value counts as unset).
pub fn use_color(choice: ColorChoice) -> bool {
    decide_color(
        choice,
        std::env::var_os("NO_COLOR").as_deref(),
        std::io::stdout().is_terminal(),
    )
}

/// The pure rule behind [`use_color`].
pub fn decide_color(choice: ColorChoice, no_color: Option<&std::ffi::OsStr>, terminal: bool) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => terminal && no_color.is_none_or(|v| v.is_empty()),
    }
}

/// A cell's meaning, coloured only when colour is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// Nothing to say.
    Plain,
    /// Good.
    Good,
    /// Look at it.
    Warn,
    /// Wrong.
    Bad,
    /// Unknown / not decidable.
    Muted,
}

/// A kubectl-style table: upper-case headers, columns separated by three spaces, no borders.
/// Every cell is sanitised (terminal control characters escaped).
pub fn table(headers: &[&str], rows: &[Vec<(String, Tone)>], no_headers: bool, color: bool) -> String {
    let mut table = Table::new();
    // Colour is decided here (`--color`, NO_COLOR, tty) and painted with owo-colors; comfy-table's
    // own styling would consult NO_COLOR again and print bare resets under `--color always`.
    table
        .load_style(presets::NOTHING)
        .set_content_arrangement(ContentArrangement::Disabled)
        .force_no_tty();
    if !no_headers {
        table.set_header(headers.iter().map(Cell::new));
    }
    for row in rows {
        table.add_row(row.iter().map(|(text, tone)| Cell::new(paint(text, *tone, color))));
    }
    let columns = headers.len();
    for (index, column) in table.column_iter_mut().enumerate() {
        column.set_padding((0, if index + 1 == columns { 0 } else { 3 }));
    }
    let mut out: String = table.lines().map(|l| l.trim_end().to_string() + "\n").collect();
    if rows.is_empty() && no_headers {
        out.clear();
    }
    out
}

/// Colours `text` when colour is on.
pub fn paint(text: &str, tone: Tone, color: bool) -> String {
    use owo_colors::OwoColorize;
    let text = sanitize(text);
    if !color {
        return text;
    }
    match tone {
        Tone::Plain => text,
        Tone::Good => text.green().to_string(),
        Tone::Warn => text.yellow().to_string(),
        Tone::Bad => text.red().to_string(),
        Tone::Muted => text.dimmed().to_string(),
    }
}

/// kubectl's age format (`k8s.io/apimachinery/pkg/util/duration.HumanDuration`): `45s`, `5m3s`,
/// `3h10m`, `2d5h`, `400d`, `3y20d`; `<unknown>` when either time is missing.
pub fn age(now: Option<DateTime<Utc>>, then: Option<DateTime<Utc>>) -> String {
    let (Some(now), Some(then)) = (now, then) else {
        return "<unknown>".into();
    };
    let seconds = (now - then).num_seconds();
    if seconds < -1 {
        return "<invalid>".into();
    }
    if seconds < 0 {
        return "0s".into();
    }
    crate::time::human(chrono::TimeDelta::seconds(seconds), crate::time::DurationStyle::Kubectl)
}

/// A JSON document, pretty-printed, with a trailing newline. Control characters inside strings
/// are escaped by JSON itself.
pub fn json<T: Serialize>(value: &T) -> String {
    serde_json::to_string_pretty(value).expect("output serialises") + "\n"
}

/// The `-o` formats that print the command's JSON document: `json`, `yaml`, `jsonpath=`,
/// `jsonpath-as-json=` (evaluated over the same document `-o json` prints). `None` for the
/// other formats (tables, `name`), which each command renders itself. A template that cannot
/// be evaluated is a usage error naming it.
pub fn document<T: Serialize>(value: &T, output: Option<&OutputFormat>) -> Result<Option<String>, AppError> {
    let template = |t: &crate::jsonpath::Template, as_json: bool| {
        let doc = serde_json::to_value(value).expect("output serialises");
        t.render(&doc, as_json)
            .map(Some)
            .map_err(|e| AppError::Usage(e.to_string()))
    };
    match output {
        Some(OutputFormat::Json) => Ok(Some(json(value))),
        Some(OutputFormat::Yaml) => Ok(Some(crate::yaml::to_string(value))),
        Some(OutputFormat::JsonPath(t)) => template(t, false),
        Some(OutputFormat::JsonPathAsJson(t)) => template(t, true),
        Some(OutputFormat::Wide | OutputFormat::Name) | None => Ok(None),
    }
}

/// kubectl's `-o name` line for an object: `KIND.GROUP/NAME` with the kind in lower case
/// (`microservice.platform.example.io/todo-api`, `deployment.apps/op`), `KIND/NAME` for the core
/// group (`serviceaccount/op`), as `kubectl get -o name` prints it.
pub fn name_line(kind: &str, group: &str, name: &str) -> String {
    let kind = kind.to_lowercase();
    let line = if group.is_empty() {
        format!("{kind}/{name}")
    } else {
        format!("{kind}.{group}/{name}")
    };
    sanitize(&line) + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    #[test]
    fn colour_rules() {
        assert!(decide_color(ColorChoice::Always, Some(OsStr::new("1")), false));
        assert!(!decide_color(ColorChoice::Never, None, true));
        assert!(decide_color(ColorChoice::Auto, None, true));
        assert!(!decide_color(ColorChoice::Auto, None, false), "a pipe is not coloured");
        assert!(!decide_color(ColorChoice::Auto, Some(OsStr::new("1")), true));
        assert!(
            decide_color(ColorChoice::Auto, Some(OsStr::new("")), true),
            "empty NO_COLOR means unset"
        );
    }

    #[test]
    fn ages_like_kubectl() {
        let now: DateTime<Utc> = "2026-11-29T12:00:00Z".parse().unwrap();
        let ago = |s: i64| age(Some(now), Some(now - chrono::Duration::seconds(s)));
        assert_eq!(ago(45), "45s");
        assert_eq!(ago(119), "119s");
        assert_eq!(ago(303), "5m3s");
        assert_eq!(ago(600), "10m");
        assert_eq!(ago(3 * 3600 + 600), "3h10m");
        assert_eq!(ago(30 * 3600), "30h");
        assert_eq!(ago(2 * 86400 + 5 * 3600), "2d5h");
        assert_eq!(ago(400 * 86400), "400d");
        assert_eq!(ago(3 * 365 * 86400 + 20 * 86400), "3y20d");
        assert_eq!(age(None, Some(now)), "<unknown>");
    }

    #[test]
    fn tables_align_and_sanitise() {
        let rows = vec![
            vec![("todo-api".to_string(), Tone::Plain), ("fresh".to_string(), Tone::Good)],
            vec![
                ("evil\x1b[2J".to_string(), Tone::Plain),
                ("stale".to_string(), Tone::Bad),
            ],
        ];
        let out = table(&["NAME", "VERDICT"], &rows, false, false);
        assert_eq!(
            out,
            "NAME            VERDICT\ntodo-api        fresh\nevil\\u{1b}[2J   stale\n"
        );
        let coloured = table(&["NAME", "VERDICT"], &rows, true, true);
        assert!(coloured.contains("\x1b["), "{coloured:?}");
        assert!(!coloured.contains("NAME"));
    }
}
