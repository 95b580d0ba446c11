//! How `logs --handler` prints runs: `-o json` (one JSON object per line per run,
//! docs/contracts.md), grouped human blocks, or `--raw` lines. Renderers return strings; human text is
//! sanitised (terminal control characters escaped) and coloured only when asked.

use chrono::SecondsFormat;
use owo_colors::OwoColorize;
use serde::Serialize;

use super::runs::Run;
use super::{Level, Stamp};
use crate::kopf::messages::Outcome;
use crate::text::sanitize;

/// The JSON document of one run (`schemaVersion` 1). Field order is the Contracts' order;
/// `container`, `clock` and `alsoReadFrom` are additions.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunJson<'a> {
    /// Always 1.
    pub schema_version: u32,
    /// The exact handler id.
    pub handler: &'a str,
    /// `NS/NAME`.
    pub object: String,
    /// `create|update|resume|unknown`.
    pub cause: &'static str,
    /// `succeeded|retrying|failed|unknown`.
    pub outcome: &'static str,
    /// The failure message, or why the outcome is unknown; `null` otherwise.
    pub detail: Option<&'a str>,
    /// The operator Pod, when known.
    pub pod: Option<&'a str>,
    /// The container, when known.
    pub container: Option<&'a str>,
    /// RFC 3339 UTC with `Z`.
    pub started: Option<String>,
    /// RFC 3339 UTC with `Z`.
    pub finished: Option<String>,
    /// Which clock `started`/`finished` come from: `kubelet`, `operator`, `operator-local`.
    pub clock: Option<&'static str>,
    /// The run's log lines as read (with any kubelet prefix).
    pub lines: Vec<&'a str>,
    /// Other logs the same run was read from (`file=NAME`, `pod=POD/CONTAINER`), shown once
    /// ([`crate::logs::copies`]); absent when none.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub also_read_from: &'a [String],
}

fn time(s: Option<Stamp>) -> Option<String> {
    s.map(|s| s.at.to_rfc3339_opts(SecondsFormat::AutoSi, true))
}

/// The `-o json` document of `run`.
pub fn run_json(run: &Run) -> RunJson<'_> {
    RunJson {
        schema_version: 1,
        handler: &run.handler,
        object: run.object.to_string(),
        cause: run.cause.map_or("unknown", |c| c.as_str()),
        outcome: run.outcome.as_str(),
        detail: run.detail.as_deref(),
        pod: run.pod.as_deref(),
        container: run.container.as_deref(),
        started: time(run.started),
        finished: time(run.finished),
        clock: run.started.map(|s| s.clock.as_str()),
        lines: run
            .records
            .iter()
            .flat_map(|r| r.lines.iter().map(String::as_str))
            .collect(),
        also_read_from: &run.also_read_from,
    }
}

/// One line of JSON for `run`.
pub fn json_line(run: &Run) -> String {
    let mut line = serde_json::to_string(&run_json(run)).expect("a run always serialises");
    line.push('\n');
    line
}

/// The run's lines as they were read, sanitised, for `--raw`.
pub fn raw_lines(run: &Run) -> String {
    let mut out = String::new();
    for line in run.records.iter().flat_map(|r| &r.lines) {
        out.push_str(&sanitize(line));
        out.push('\n');
    }
    out
}

fn paint_outcome(outcome: Outcome, color: bool) -> String {
    let text = outcome.as_str();
    if !color {
        return text.to_string();
    }
    match outcome {
        Outcome::Succeeded => text.green().to_string(),
        Outcome::Retrying => text.yellow().to_string(),
        Outcome::Failed => text.red().bold().to_string(),
        Outcome::Unknown => text.dimmed().to_string(),
    }
}

fn paint_level(level: Option<Level>, color: bool) -> String {
    let text = format!("{:<8}", level.map_or("", Level::as_str));
    if !color {
        return text;
    }
    match level {
        Some(Level::Error | Level::Critical) => text.red().to_string(),
        Some(Level::Warning) => text.yellow().to_string(),
        Some(Level::Debug | Level::Trace) => text.dimmed().to_string(),
        _ => text,
    }
}

/// `TIME (CLOCK)  HANDLER  NS/NAME  cause=CAUSE  outcome=OUTCOME` of `run`, `outcome` as given
/// (painted, and for repeated runs with their count).
fn header(run: &Run, outcome: &str, color: bool) -> String {
    let when = match run.started {
        Some(s) => format!(
            "{} ({})",
            s.at.to_rfc3339_opts(SecondsFormat::Millis, true),
            s.clock.as_str()
        ),
        None => "time unknown".to_string(),
    };
    let handler = sanitize(&run.handler);
    let handler = if color { handler.bold().to_string() } else { handler };
    let cause = run.cause.map_or("unknown", |c| c.as_str());
    format!(
        "{when}  {handler}  {}  cause={cause}  outcome={outcome}",
        sanitize(&run.object.to_string())
    )
}

/// `  pod=POD/CONTAINER` (or `  file=NAME`) of `run`, when known.
fn pod_field(run: &Run) -> String {
    run.pod.as_ref().map_or_else(String::new, |pod| {
        format!(
            "  {}",
            sanitize(&crate::logs::file::source_field(pod, run.container.as_deref()))
        )
    })
}

/// A grouped, human block for one run: a header (start time and its clock, handler, object,
/// cause, outcome, Pod), the detail, then the run's lines with their times and levels.
pub fn human_block(run: &Run, color: bool) -> String {
    let mut out = header(run, &paint_outcome(run.outcome, color), color);
    out.push_str(&pod_field(run));
    if !run.also_read_from.is_empty() {
        out.push_str(&format!(
            "  (also read from {})",
            sanitize(&run.also_read_from.join(", "))
        ));
    }
    out.push('\n');
    if let Some(d) = &run.detail {
        out.push_str(&format!("  detail: {}\n", sanitize(d)));
    }
    for record in &run.records {
        let at = record
            .stamp
            .map(|s| s.at.to_rfc3339_opts(SecondsFormat::Millis, true))
            .unwrap_or_default();
        let at = if color { at.dimmed().to_string() } else { at };
        out.push_str(&format!(
            "  {at} {} {}\n",
            paint_level(record.level, color),
            sanitize(&record.message)
        ));
        for more in record.continuation() {
            out.push_str(&format!("      {}\n", sanitize(more)));
        }
        if record.omitted_lines > 0 {
            out.push_str(&format!(
                "      ({} not kept)\n",
                crate::text::count(record.omitted_lines as u64, "more line")
            ));
        }
    }
    if run.omitted_records > 0 {
        out.push_str(&format!(
            "  ({} not kept)\n",
            crate::text::count(run.omitted_records as u64, "more record")
        ));
    }
    out
}

/// One entry of the default human answer ([`aggregate`]): a run in full, or runs that repeat.
#[derive(Debug)]
pub enum Entry<'r> {
    /// A run of a kind that ran once: its block ([`human_block`]).
    One(&'r Run),
    /// Two or more runs of one kind (object, handler, cause, outcome, message), in time order:
    /// one line ([`repeated_line`]).
    Repeated(Vec<&'r Run>),
}

/// `runs` (in time order) as the default human answer shows them, as kubectl aggregates
/// repeated events: runs of one object, handler, cause, outcome and message (`detail`) that
/// repeat are one entry, listed where the last of them ran; a kind that ran once is its run.
/// `--verbose` and `-o json` show every run instead (issue 18 trial P6: a handler retrying for
/// hours printed 2,268 lines).
pub fn aggregate<'r>(runs: &'r [Run]) -> Vec<Entry<'r>> {
    type Kind<'a> = (String, &'a str, &'static str, Outcome, Option<&'a str>);
    let kind = |r: &'r Run| -> Kind<'r> {
        (
            r.object.to_string(),
            r.handler.as_str(),
            r.cause.map_or("unknown", |c| c.as_str()),
            r.outcome,
            r.detail.as_deref(),
        )
    };
    let mut groups: Vec<(Kind<'r>, Vec<&'r Run>)> = Vec::new();
    for run in runs {
        let k = kind(run);
        match groups.iter_mut().find(|(g, _)| *g == k) {
            Some((_, members)) => members.push(run),
            None => groups.push((k, vec![run])),
        }
    }
    // Where the last run of each kind ran: the runs' order (time order) of those last runs.
    let position = |r: &Run| runs.iter().position(|x| std::ptr::eq(x, r)).unwrap_or(0);
    groups.sort_by_key(|(_, members)| members.last().map_or(0, |r| position(r)));
    groups
        .into_iter()
        .map(|(_, members)| match members.as_slice() {
            [one] => Entry::One(one),
            _ => Entry::Repeated(members),
        })
        .collect()
}

/// One line for runs that repeat ([`Entry::Repeated`]), kubectl's way: the last run's start
/// and clock, handler, object, cause, `outcome=O xN over SPAN (first T)`, the message quoted,
/// the last run's Pod.
pub fn repeated_line(group: &[&Run], color: bool) -> String {
    let (Some(first), Some(last)) = (group.first(), group.last()) else {
        return String::new();
    };
    let span = match (first.started, last.finished.or(last.started)) {
        (Some(a), Some(b)) => format!(
            " over {} (first {})",
            crate::time::human(b.at - a.at, crate::time::DurationStyle::Kubectl),
            a.at.to_rfc3339_opts(SecondsFormat::Millis, true)
        ),
        _ => String::new(),
    };
    let outcome = format!("{} x{}{span}", paint_outcome(last.outcome, color), group.len());
    let mut out = header(last, &outcome, color);
    if let Some(d) = &last.detail {
        out.push_str(&format!(": \"{}\"", sanitize(d)));
    }
    out.push_str(&pod_field(last));
    out.push('\n');
    out
}

/// Counts of runs by outcome, for the closing line (`3 runs: 2 succeeded, 1 failed`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    counts: [usize; 4],
}

impl Tally {
    /// Counts `runs`.
    pub fn of<'a>(runs: impl IntoIterator<Item = &'a Run>) -> Tally {
        let mut t = Tally::default();
        for r in runs {
            t.add(r.outcome);
        }
        t
    }

    /// Counts one more run.
    pub fn add(&mut self, outcome: Outcome) {
        self.counts[outcome as usize] += 1;
    }

    /// Runs counted.
    pub fn total(&self) -> usize {
        self.counts.iter().sum()
    }
}

impl std::fmt::Display for Tally {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = [Outcome::Succeeded, Outcome::Retrying, Outcome::Failed, Outcome::Unknown]
            .iter()
            .filter(|o| self.counts[**o as usize] > 0)
            .map(|o| format!("{} {}", self.counts[*o as usize], o.as_str()))
            .collect();
        match self.total() {
            0 => f.write_str("no runs"),
            1 => write!(f, "1 run: {}", parts.join(", ")),
            n => write!(f, "{n} runs: {}", parts.join(", ")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logs::runs::GroupConfig;
    use crate::logs::stream::{LogStream, SourceLabel};

    fn runs(log: &str) -> Vec<Run> {
        let label = SourceLabel {
            pod: Some("op-1".into()),
            container: Some("operator".into()),
            ..Default::default()
        };
        LogStream::new(label, GroupConfig::default(), vec![])
            .read_all(log.as_bytes())
            .unwrap()
    }

    const LOG: &str = "2026-11-29T17:12:58.225123456Z [2026-11-29 17:12:58,225] kopf.objects         [ERROR   ] [store/pricing-api] Handler 'accept/spec' failed permanently: port 7200 is \u{1b}[31mreserved\n2026-11-29T17:12:58.226Z [2026-11-29 17:12:58,225] kopf.objects         [INFO    ] [store/pricing-api] Updating is processed: 0 succeeded; 1 failed.\n";

    #[test]
    fn json_lines_follow_the_contract() {
        let runs = runs(LOG);
        let line = json_line(&runs[0]);
        assert!(line.ends_with('\n') && line.matches('\n').count() == 1);
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["schemaVersion"], 1);
        assert_eq!(v["handler"], "accept/spec");
        assert_eq!(v["object"], "store/pricing-api");
        assert_eq!(v["cause"], "update");
        assert_eq!(v["outcome"], "failed");
        assert_eq!(v["detail"], "port 7200 is \u{1b}[31mreserved");
        assert_eq!(v["pod"], "op-1");
        assert_eq!(v["started"], "2026-11-29T17:12:58.225123456Z");
        assert_eq!(v["finished"], "2026-11-29T17:12:58.225123456Z");
        assert_eq!(v["clock"], "kubelet");
        assert_eq!(v["lines"].as_array().unwrap().len(), 2);
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys.len(), 12);
    }

    #[test]
    fn human_blocks_are_sanitised_and_coloured_only_when_asked() {
        let runs = runs(LOG);
        let plain = human_block(&runs[0], false);
        assert!(plain.starts_with(
            "2026-11-29T17:12:58.225Z (kubelet)  accept/spec  store/pricing-api  cause=update  outcome=failed  pod=op-1/operator\n"
        ));
        assert!(plain.contains("  detail: port 7200 is \\u{1b}[31mreserved\n"));
        assert!(!plain.contains('\u{1b}'));
        assert!(plain.contains("ERROR    Handler 'accept/spec' failed permanently"));
        let coloured = human_block(&runs[0], true);
        assert!(coloured.contains("\u{1b}[31m\u{1b}[1mfailed") || coloured.contains("\u{1b}[1m\u{1b}[31mfailed"));
        let raw = raw_lines(&runs[0]);
        assert_eq!(raw.lines().count(), 2);
        assert!(!raw.contains('\u{1b}'));
    }

    /// Issue 18 trial P6: runs of one kind that repeat are one entry and one line (the count,
    /// the span, the message quoted, the last run's Pod), listed where the last ran; a kind
    /// that ran once stays its run.
    #[test]
    fn repeated_runs_of_one_kind_are_one_line() {
        let retry = |t: &str| {
            format!(
                "2026-11-29T17:{t}.000000000Z [2026-11-29 17:{t},000] kopf.objects         [ERROR   ] [store/basket-api] Handler 'accept' failed temporarily: registry unreachable\n"
            )
        };
        let ok = "2026-11-29T17:20:00.000000000Z [2026-11-29 17:20:00,000] kopf.objects         [INFO    ] [store/other-api] Handler 'accept' succeeded.\n";
        let log = format!("{}{}{ok}{}", retry("13:32"), retry("13:37"), retry("14:08"));
        let runs = runs(&log);
        let entries = aggregate(&runs);
        assert_eq!(entries.len(), 2, "{entries:?}");
        assert!(matches!(entries[0], Entry::One(r) if r.object.to_string() == "store/other-api"));
        let Entry::Repeated(group) = &entries[1] else {
            panic!("{entries:?}")
        };
        assert_eq!(group.len(), 3);
        assert_eq!(
            repeated_line(group, false),
            "2026-11-29T17:14:08.000Z (kubelet)  accept  store/basket-api  cause=unknown  outcome=retrying x3 over 36s (first 2026-11-29T17:13:32.000Z): \"registry unreachable\"  pod=op-1/operator\n"
        );
    }

    #[test]
    fn tallies_count_outcomes() {
        let runs = runs(LOG);
        assert_eq!(Tally::of(&runs).to_string(), "1 run: 1 failed");
        assert_eq!(Tally::default().to_string(), "no runs");
        let mut t = Tally::of(&runs);
        t.add(Outcome::Succeeded);
        t.add(Outcome::Succeeded);
        assert_eq!(t.to_string(), "3 runs: 2 succeeded, 1 failed");
    }
}
