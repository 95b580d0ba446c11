//! `kubectl microservice status [NAME]`: is `Accepted` still true for the spec each Microservice
//! has now? A table (or `-o wide|json|yaml`) over the objects, or, with NAME, the verdict
//! explained in sentences with its evidence and the next command to run.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use chrono::{DateTime, Utc};
use clap::Args;
use serde::Serialize;
use serde_json::Value;

use super::log_files::LogFileArgs;
use crate::cli::{GlobalArgs, OutputFormat, parse_duration};
use crate::diagnose::cycles::log_facts;
use crate::diagnose::staleness::{self, Assessment, LogFacts, Verdict};
use crate::error::AppError;
use crate::evidence::operator::find_operators;
use crate::evidence::{Evidence, Gap, Snapshot};
use crate::render::{self, Tone};
use crate::resource::MicroserviceObject;
use crate::text::sanitize;
use crate::time::rfc3339_seconds;

/// Flags of `status`.
#[derive(Debug, Clone, Args)]
#[command(after_help = concat!(
    "Examples:\n",
    "  # Is Accepted still true for each Microservice's spec in the current namespace?\n",
    "  kubectl microservice status\n",
    "\n",
    "  # Every namespace, more columns; exit 1 if any is stale, never handled or invalid\n",
    "  kubectl microservice status -A -o wide --exit-code\n",
    "\n",
    "  # One Microservice's verdict explained in sentences\n",
    "  kubectl microservice status todo-api -n todo\n",
    "\n",
    "  # Print a row whenever a verdict changes\n",
    "  kubectl microservice status -w\n",
    "\n",
    "  # From a bundle written by collect, as JSON\n",
    "  kubectl microservice status --bundle ./bundle -o json",
))]
pub struct StatusArgs {
    /// A Microservice: explain its verdict in sentences. NAME, TYPE/NAME as kubectl's (ms/NAME, or
    /// what -o name prints), or NAMESPACE/NAME when the first part is no Microservice type name.
    #[arg(value_name = "NAME", value_parser = crate::names::object_ref_arg)]
    pub name: Option<String>,

    /// Read evidence from a bundle directory instead of a cluster.
    #[arg(long, value_name = "DIR", value_hint = clap::ValueHint::DirPath)]
    pub bundle: Option<PathBuf>,

    /// Exit 1 when any shown object is stale, never-handled, invalid or terminating.
    #[arg(long)]
    pub exit_code: bool,

    /// After the table, print a row whenever an object's phase, generation or verdict changes.
    #[arg(short = 'w', long)]
    pub watch: bool,

    /// Poll interval of `--watch` (only with it).
    #[arg(long, requires = "watch", default_value = "2s", value_parser = crate::cli::parse_duration_at_least_1s, allow_hyphen_values = true, value_name = "DURATION")]
    pub interval: Duration,

    /// The operator, as NAMESPACE/deployment/NAME (default: discovered).
    #[arg(long, value_name = "NS/deployment/NAME", value_parser = crate::names::operator_ref_arg)]
    pub operator: Option<String>,

    /// Times closer than this cannot be ordered (clock skew, 1 s managedFields resolution).
    #[arg(long, default_value = "2s", value_parser = parse_duration, allow_hyphen_values = true, value_name = "DURATION")]
    pub skew: Duration,

    /// `--log-file FILE`: the operator's log from a file (read again on every `--watch` poll).
    #[command(flatten)]
    pub log_files: LogFileArgs,
}

/// One row of `status -o json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Item {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// metadata.uid.
    pub uid: Option<String>,
    /// status.phase, if any.
    pub phase: Option<String>,
    /// The verdict.
    pub verdict: Verdict,
    /// Why, with evidence.
    pub reasons: Vec<staleness::Reason>,
    /// metadata.generation.
    pub generation: i64,
    /// status.observedGeneration.
    pub observed_generation: Option<i64>,
    /// spec.image as stored (any JSON).
    pub image: Value,
    /// spec.port as stored (any JSON).
    pub port: Value,
    /// Whose records decided.
    pub handled_by: staleness::HandledBy,
    /// Fields changed since last handled.
    pub changed_fields: Vec<staleness::ChangedField>,
    /// Latest status write (managedFields, 1 s resolution).
    pub last_handled: Option<DateTime<Utc>>,
    /// Latest spec write (managedFields, 1 s resolution).
    pub spec_changed: Option<DateTime<Utc>>,
    /// Warning-or-Error events for this object (this uid); `null` when events are a gap.
    pub warnings: Option<usize>,
    /// metadata.creationTimestamp.
    pub created: Option<DateTime<Utc>>,
    /// The operator that handles this object, as the resolver decided
    /// ([`crate::evidence::resolve`]): `NS/deployment/NAME`, or `process/HOLDER-IDENTITY` /
    /// `log-file/NAME` for an `operate` outside the cluster; `null` when none serves the
    /// namespace, several do alike, or the operators are unknown (`operatorResolution` says
    /// which). The `OPERATOR` column of `-o wide` prints the same.
    pub operator: Option<String>,
    /// How the operator was decided: `{"verdict": "deployment|process|none-serves|ambiguous|
    /// unknown", "operator", "namespace", "summary", "evidence": [...], "candidates":
    /// [{"operator", "kind", "watches", "serves", "score", "evidence"}]}`.
    pub operator_resolution: crate::evidence::resolve::Resolution,
    /// The pending deletion (deletionTimestamp, age, each finalizer with its owner and removal
    /// command), only when `verdict` is `terminating`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deletion: Option<crate::diagnose::deletion::Pending>,
    /// The bundle the answer came from, for the next commands (not in JSON).
    #[serde(skip)]
    pub bundle: Option<String>,
}

/// `status -o json`: `{"schemaVersion": 1, "items": [...], "gaps": [...]}`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// Always 1.
    pub schema_version: u32,
    /// "Now" of the evidence.
    pub captured_at: Option<DateTime<Utc>>,
    /// One per object, sorted by namespace and name.
    pub items: Vec<Item>,
    /// What the evidence lacks.
    pub gaps: Vec<Gap>,
    /// Notes on how to read the evidence, each said once (e.g. what "operator's local time"
    /// means); absent when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// Builds the report from a snapshot (pure). `namespace` filters objects when set; `name`
/// keeps one object.
pub fn report(snapshot: &Snapshot, namespace: Option<&str>, name: Option<&str>, skew: Duration) -> Report {
    // The finalizer owners of a pending deletion (diagnose::deletion) are any operator in evidence.
    let operator_list = snapshot.operator.deployments.get().map(|d| find_operators(d));
    let options = staleness::Options {
        skew: crate::time::delta(skew),
        now: snapshot.now(),
        operators: operator_list.as_deref(),
    };
    let facts = log_facts(snapshot);
    let unavailable = LogFacts::Unavailable(
        snapshot
            .operator
            .logs
            .gap()
            .map(ToString::to_string)
            .unwrap_or_else(|| "operator logs: none".into()),
    );
    let mut items: Vec<Item> = snapshot
        .microservices
        .get()
        .into_iter()
        .flatten()
        .filter(|o| namespace.is_none_or(|ns| o.metadata.namespace.as_deref() == Some(ns)))
        .filter(|o| name.is_none_or(|n| o.metadata.name.as_deref() == Some(n)))
        .map(|obj| {
            let logs = facts.get(&obj.key()).unwrap_or(&unavailable);
            let operator = snapshot.operator_for(obj);
            item(
                obj,
                staleness::assess(obj, logs, options),
                warnings(snapshot, obj),
                operator,
            )
        })
        .collect();
    items.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    let notes = crate::logs::local_time_note(
        items
            .iter()
            .flat_map(|i| &i.reasons)
            .flat_map(|r| std::iter::once(&r.message).chain(&r.evidence))
            .map(String::as_str),
        &snapshot.log_zones(),
    )
    .into_iter()
    .collect();
    Report {
        notes,
        schema_version: 1,
        captured_at: snapshot.now(),
        items,
        gaps: snapshot
            .gaps()
            .into_iter()
            .filter(|g| !matches!(g.reason, crate::evidence::GapReason::NotCollected(_)) && !g.is_leadership())
            .cloned()
            .collect(),
    }
}

fn item(
    obj: &MicroserviceObject,
    a: Assessment,
    warnings: Option<usize>,
    operator: crate::evidence::resolve::Resolution,
) -> Item {
    Item {
        namespace: obj.metadata.namespace.clone().unwrap_or_default(),
        name: obj.metadata.name.clone().unwrap_or_default(),
        uid: obj.metadata.uid.clone(),
        phase: obj.phase().map(str::to_string),
        verdict: a.verdict,
        reasons: a.reasons,
        generation: obj.metadata.generation.unwrap_or(0),
        observed_generation: obj.observed_generation(),
        image: obj.spec.get("image").cloned().unwrap_or(Value::Null),
        port: obj.spec.get("port").cloned().unwrap_or(Value::Null),
        handled_by: a.handled_by,
        changed_fields: a.changed_fields,
        last_handled: a.last_handled,
        spec_changed: a.spec_changed,
        warnings,
        created: obj
            .metadata
            .creation_timestamp
            .as_ref()
            .map(|t| crate::time::from_jiff(t.0)),
        operator: operator.operator.clone(),
        operator_resolution: operator,
        deletion: a.deletion,
        bundle: None,
    }
}

/// Warning-or-Error events about this object — the same uid, or no uid recorded (what
/// `kubectl describe` would count, plus events posted without a uid). `None` when events are a gap.
fn warnings(snapshot: &Snapshot, obj: &MicroserviceObject) -> Option<usize> {
    let events = snapshot.events.get()?;
    Some(
        events
            .iter()
            .filter(|e| {
                let involved = &e.involved_object;
                involved.kind.as_deref() == Some("Microservice")
                    && involved.name == obj.metadata.name
                    && e.metadata.namespace == obj.metadata.namespace
                    && (involved.uid.is_none() || involved.uid == obj.metadata.uid)
                    && matches!(e.type_.as_deref(), Some("Warning") | Some("Error"))
            })
            .map(|e| e.count.unwrap_or(1).max(1) as usize)
            .sum(),
    )
}

fn verdict_tone(v: Verdict) -> Tone {
    match v {
        Verdict::Fresh => Tone::Good,
        Verdict::Stale | Verdict::Invalid => Tone::Bad,
        Verdict::NeverHandled | Verdict::Terminating => Tone::Warn,
        Verdict::Unknown => Tone::Muted,
    }
}

fn value_text(v: &Value) -> String {
    match v {
        Value::Null => "<none>".into(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The table (`wide` adds LAST-HANDLED, SPEC-CHANGED, OPERATOR; `all_namespaces` adds NAMESPACE).
pub fn table(report: &Report, wide: bool, all_namespaces: bool, no_headers: bool, color: bool) -> String {
    let mut headers = Vec::new();
    if all_namespaces {
        headers.push("NAMESPACE");
    }
    headers.extend([
        "NAME", "PHASE", "IMAGE", "PORT", "HANDLED", "VERDICT", "WARNINGS", "AGE",
    ]);
    if wide {
        headers.extend(["LAST-HANDLED", "SPEC-CHANGED", "OPERATOR"]);
    }
    let rows: Vec<Vec<(String, Tone)>> = report
        .items
        .iter()
        .map(|i| {
            let mut row = Vec::new();
            if all_namespaces {
                row.push((i.namespace.clone(), Tone::Plain));
            }
            let handled = format!(
                "{}/{}",
                i.observed_generation
                    .map(|g| g.to_string())
                    .unwrap_or_else(|| "-".into()),
                i.generation
            );
            let warnings = match i.warnings {
                None => ("?".to_string(), Tone::Muted),
                Some(0) => ("0".to_string(), Tone::Plain),
                Some(n) => (n.to_string(), Tone::Warn),
            };
            row.extend([
                (i.name.clone(), Tone::Plain),
                (i.phase.clone().unwrap_or_else(|| "<none>".into()), Tone::Plain),
                (value_text(&i.image), Tone::Plain),
                (value_text(&i.port), Tone::Plain),
                (handled, Tone::Plain),
                (i.verdict.as_str().to_string(), verdict_tone(i.verdict)),
                warnings,
                (render::age(report.captured_at, i.created), Tone::Plain),
            ]);
            if wide {
                let time = |t: Option<DateTime<Utc>>| t.map(rfc3339_seconds).unwrap_or_else(|| "<unknown>".into());
                row.push((time(i.last_handled), Tone::Plain));
                row.push((time(i.spec_changed), Tone::Plain));
                // The same value as the item's `operator` (its label when none is named).
                row.push((i.operator_resolution.label(), Tone::Plain));
            }
            row
        })
        .collect();
    render::table(&headers, &rows, no_headers, color)
}

/// The detail view of one object: the verdict in sentences, its evidence, gaps, and the next command.
pub fn detail(report: &Report, item: &Item, color: bool) -> String {
    let mut out = String::new();
    let push = |out: &mut String, line: String| {
        out.push_str(&sanitize(&line));
        out.push('\n');
    };
    let verdict = render::paint(item.verdict.as_str(), verdict_tone(item.verdict), color);
    out.push_str(&format!(
        "{}/{}: {verdict}\n",
        sanitize(&item.namespace),
        sanitize(&item.name)
    ));
    push(
        &mut out,
        format!("  {:<16}{}", "Phase:", item.phase.as_deref().unwrap_or("<none>")),
    );
    push(
        &mut out,
        format!(
            "  {:<16}image={} port={}",
            "Spec:",
            value_text(&item.image),
            value_text(&item.port)
        ),
    );
    let observed = item
        .observed_generation
        .map(|g| g.to_string())
        .unwrap_or_else(|| "none".into());
    push(
        &mut out,
        format!(
            "  {:<16}{} (observedGeneration {observed})",
            "Generation:", item.generation
        ),
    );
    let handled_by = match item.handled_by {
        staleness::HandledBy::KubectlMicroservice => "kubectl-microservice (status.observedGeneration)",
        staleness::HandledBy::Kopf => "a Kopf operator (last-handled-configuration annotation)",
        staleness::HandledBy::Unknown => "no handling record on the object",
    };
    push(&mut out, format!("  {:<16}{handled_by}", "Handled by:"));
    push(
        &mut out,
        format!("  {:<16}{}", "Operator:", item.operator_resolution.line()),
    );
    let time = |t: Option<DateTime<Utc>>| {
        t.map(|t| {
            format!(
                "{} (API server clock, managedFields, 1 s resolution)",
                rfc3339_seconds(t)
            )
        })
        .unwrap_or_else(|| "unknown".into())
    };
    push(
        &mut out,
        format!("  {:<16}{}", "Status written:", time(item.last_handled)),
    );
    push(
        &mut out,
        format!("  {:<16}{}", "Spec written:", time(item.spec_changed)),
    );
    if !item.changed_fields.is_empty() {
        push(&mut out, "  Changed since last handled:".into());
        for c in &item.changed_fields {
            push(&mut out, format!("    {}: {} → {}", c.field, c.old, c.new));
        }
    }
    if let Some(d) = &item.deletion {
        push(&mut out, "  Finalizers:".into());
        if d.finalizers.is_empty() {
            push(&mut out, "    none left".into());
        }
        for f in &d.finalizers {
            push(
                &mut out,
                format!("    [{}] {}: to be removed by {}", f.index, f.finalizer, f.owner),
            );
        }
    }
    push(&mut out, "  Why:".into());
    for reason in &item.reasons {
        push(&mut out, format!("    {} [{}]", reason.message, reason.code));
        for e in &reason.evidence {
            push(&mut out, format!("      - {e}"));
        }
    }
    let warnings = match item.warnings {
        Some(n) => format!("{} for this uid", crate::text::count(n as u64, "Warning/Error event")),
        None => "unknown (events could not be listed)".into(),
    };
    push(&mut out, format!("  {:<16}{warnings}", "Warnings:"));
    if !report.gaps.is_empty() {
        push(&mut out, "  Evidence gaps:".into());
        for gap in &report.gaps {
            push(&mut out, format!("    - {gap}"));
        }
    }
    for note in &report.notes {
        push(&mut out, format!("  {:<16}{note}", "Note:"));
    }
    push(&mut out, format!("  {:<16}{}", "Next:", next_command(item)));
    out
}

fn next_command(item: &Item) -> String {
    let target = match &item.bundle {
        Some(dir) => format!("{} -n {} --bundle {dir}", item.name, item.namespace),
        None => format!("{} -n {}", item.name, item.namespace),
    };
    // A cycle that never completes has a fix that explain-events gives (its first finding).
    if item.reasons.first().is_some_and(|r| r.code == "patch-rejected") {
        return format!("see why and the fix: kubectl microservice explain-events {target}");
    }
    match item.verdict {
        Verdict::Fresh => {
            format!("nothing to do; the handler's runs: kubectl microservice logs --handler accept {target}")
        }
        Verdict::Stale => {
            format!("see whether the handler ran since the change: kubectl microservice logs --handler accept {target}")
        }
        Verdict::NeverHandled => {
            format!("see the handler's attempts: kubectl microservice logs --handler accept {target}")
        }
        Verdict::Invalid => match &item.bundle {
            Some(_) => "fix the spec named above (kubectl edit microservice NAME -n NS on the cluster)".into(),
            None => format!("fix the spec named above: kubectl edit microservice {target}"),
        },
        Verdict::Unknown => format!(
            "collect evidence for a closer look: kubectl microservice collect DIR -n {}",
            item.namespace
        ),
        Verdict::Terminating => item
            .deletion
            .as_ref()
            .and_then(|d| d.fix())
            .unwrap_or_else(|| "wait: no finalizer is left, the API server removes the object".into()),
    }
}

/// Renders the report in the requested format: the table (`-o wide` wider), the detail view
/// for a NAME, `-o name` lines (`microservice.platform.example.io/NAME`, as `kubectl get
/// microservices -o name`), or the `-o json` document (also through `-o yaml` and the
/// jsonpath templates). A template that cannot be evaluated is a usage error.
pub fn render_report(
    report: &Report,
    global: &GlobalArgs,
    name: Option<&str>,
    color: bool,
) -> Result<String, AppError> {
    if let Some(document) = render::document(report, global.output.as_ref())? {
        return Ok(document);
    }
    Ok(match &global.output {
        Some(OutputFormat::Name) => report
            .items
            .iter()
            .map(|i| render::name_line(crate::resource::KIND, crate::resource::GROUP, &i.name))
            .collect(),
        // kubectl prints nothing on stdout for an empty answer (the note goes to stderr).
        _ if report.items.is_empty() => String::new(),
        // With -A, one name may exist in several namespaces: explain each.
        _ if name.is_some() => report
            .items
            .iter()
            .map(|item| detail(report, item, color))
            .collect::<Vec<_>>()
            .join("\n"),
        other => table(
            report,
            other == &Some(OutputFormat::Wide),
            global.all_namespaces,
            global.no_headers,
            color,
        ),
    })
}

/// The exit code for a rendered report: 1 with `--exit-code` when any item is a problem.
pub fn exit_code(report: &Report, exit_code_flag: bool) -> u8 {
    u8::from(exit_code_flag && report.items.iter().any(|i| i.verdict.is_problem()))
}

/// The "not found" / "nothing to decide on" errors (exit 3).
pub fn check_decidable(
    report: &Report,
    snapshot: &Snapshot,
    namespace: Option<&str>,
    name: Option<&str>,
) -> Result<(), AppError> {
    if let Evidence::Gap(gap) = &snapshot.microservices {
        return Err(AppError::Undecided(format!("cannot decide: {gap}")));
    }
    if let (Some(name), true) = (name, report.items.is_empty()) {
        return Err(AppError::Undecided(crate::resource::not_found_message(namespace, name)));
    }
    Ok(())
}

/// What `--watch` compares per object: phase, verdict, generation, observedGeneration.
type RowState<'a> = (&'a Option<String>, Verdict, i64, Option<i64>);

/// Rows that changed between two reports (for `--watch`), keyed by namespace/name.
pub fn changed_rows(before: &Report, after: &Report) -> Report {
    let key = |i: &Item| format!("{}/{}", i.namespace, i.name);
    let old: HashMap<String, RowState<'_>> = before
        .items
        .iter()
        .map(|i| (key(i), (&i.phase, i.verdict, i.generation, i.observed_generation)))
        .collect();
    Report {
        items: after
            .items
            .iter()
            .filter(|i| old.get(&key(i)) != Some(&(&i.phase, i.verdict, i.generation, i.observed_generation)))
            .cloned()
            .collect(),
        ..after.clone()
    }
}

/// The table rows of `--watch` for the `changed` items, in the columns of the `first` table
/// printed: the rows are rendered below the first table's (headers and rows) and only their own
/// lines are kept, so each column starts where it started in the first table (a wider cell
/// widens only its own line, as no row is printed twice).
pub fn watch_rows(first: &Report, changed: &Report, wide: bool, all_namespaces: bool, color: bool) -> String {
    let shown = changed.items.len();
    let together = Report {
        items: first.items.iter().chain(&changed.items).cloned().collect(),
        ..changed.clone()
    };
    let rendered = table(&together, wide, all_namespaces, false, color);
    let lines: Vec<&str> = rendered.lines().collect();
    lines[lines.len().saturating_sub(shown)..]
        .iter()
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Runs `status`: prints the report and returns the exit code (0, or 1 with `--exit-code`).
pub fn run(global: &GlobalArgs, args: &StatusArgs) -> Result<u8, AppError> {
    let color = render::use_color(global.color);
    let mut namespace = global.one_namespace("status")?;
    let mut args = args.clone();
    // `NS/NAME`, as `explain-events` and `logs` take it (TYPE/NAME's type is dropped while parsing).
    if let Some(given) = args.name.clone() {
        let (ns, name) = crate::names::object_in_scope(&given, namespace.as_deref(), global.all_namespaces)
            .map_err(AppError::Usage)?;
        if ns.is_some() {
            namespace = ns;
        }
        args.name = Some(name);
    }
    let table = matches!(global.output, None | Some(OutputFormat::Wide));
    if let Some(name) = &args.name {
        if global.output == Some(OutputFormat::Wide) {
            return Err(AppError::Usage(format!(
                "-o wide widens the table; status {name} explains one Microservice in sentences (-o json|yaml give its item)"
            )));
        }
        if global.no_headers {
            return Err(AppError::Usage(format!(
                "--no-headers applies to the table; status {name} explains one Microservice in sentences"
            )));
        }
    }
    if global.no_headers && !table {
        return Err(AppError::Usage(
            "--no-headers applies to the table (default or -o wide), which this -o does not print".into(),
        ));
    }
    // -l is parsed here, as the API server parses it, so that a bundle is filtered as a live
    // list is, and a bad selector is a usage error before any cluster call.
    let selector = match &global.selector {
        Some(_) if args.name.is_some() => {
            return Err(AppError::Usage(
                "a NAME and -l/--selector exclude each other (name cannot be provided when a selector is specified)"
                    .into(),
            ));
        }
        Some(text) => Some(crate::selector::LabelSelector::from_flag(text)?),
        None => None,
    };
    let operator = match &args.operator {
        Some(spec) => Some(crate::evidence::live::parse_operator_spec(spec).map_err(AppError::Usage)?),
        None => None,
    };
    let args = &args;
    let mut global = global.clone();
    if let Some(ns) = &namespace {
        global.namespaces = vec![ns.clone()];
    }
    let global = &global;
    // Read now so that a bad path is a usage error before any cluster call.
    let files = args.log_files.read()?;
    if let Some(dir) = &args.bundle {
        global.refuse_connection_flags("status --bundle")?;
        if args.watch {
            return Err(AppError::Usage(
                "--watch needs a cluster; it cannot be used with --bundle".into(),
            ));
        }
        let mut snapshot = crate::evidence::bundle::read(dir)?;
        super::check_bundle_namespace(&snapshot, namespace.as_deref(), dir)?;
        super::check_operator_in_bundle(&snapshot.operator, args.operator.as_deref(), dir)?;
        if let Some((ns, name)) = &operator {
            snapshot
                .operator
                .select_deployment(ns, name, "operator/deployment.json");
        }
        if let (Some(selector), Evidence::Present(objects)) = (&selector, &mut snapshot.microservices) {
            selector.retain(objects);
        }
        crate::logs::file::add_to(&mut snapshot.operator.logs, &files);
        // Without -n, a bundle is judged whole; a name is looked up in the bundle's namespace.
        let lookup_ns = namespace
            .clone()
            .or_else(|| args.name.as_ref().and(snapshot.namespace.clone()));
        let report = report(&snapshot, lookup_ns.as_deref(), args.name.as_deref(), args.skew);
        check_decidable(&report, &snapshot, lookup_ns.as_deref(), args.name.as_deref())?;
        print_gaps(&report);
        note_if_empty(&report, lookup_ns.as_deref());
        let report = with_bundle_hint(report, dir);
        super::write_stdout(&render_report(&report, global, args.name.as_deref(), color)?)?;
        return Ok(exit_code(&report, args.exit_code));
    }
    let runtime = tokio::runtime::Runtime::new().map_err(|source| AppError::Io {
        context: "start the async runtime".into(),
        source,
    })?;
    runtime.block_on(run_live(global, args, namespace, color))
}

/// Gathers live evidence and builds the report: Microservices and events first, with the
/// `--log-file` logs (read again on every call); then the operator (Deployments, their Pods, the
/// Leases) when the output names it (`names_operator`: `-o wide|json|yaml|jsonpath`, a NAME) or
/// a verdict needs logs, and its Pods' logs only when a verdict needs them or one object is
/// explained. `where_` names
/// the server and context in errors; an unreadable `--log-file` is a usage error.
pub async fn live_report(
    client: &kube::Client,
    plan: &crate::evidence::live::Plan,
    access: &crate::evidence::live::CallerAccess,
    args: &StatusArgs,
    names_operator: bool,
    where_: &str,
) -> Result<Report, AppError> {
    let namespace = plan.namespace.as_deref();
    let mut snapshot = crate::evidence::live::gather_objects(client, plan, access)
        .await
        .map_err(|e| match (&e, &plan.selector) {
            (kube::Error::Api(status), Some(selector)) if status.code == 400 => {
                AppError::Usage(format!("invalid -l/--selector {selector:?}: {}", status.message.trim()))
            }
            _ => AppError::kube(format!("cannot get microservices from {where_}"), e),
        })?;
    args.log_files.add_to(&mut snapshot)?;
    let first = report(&snapshot, namespace, args.name.as_deref(), args.skew);
    let needs_logs = first
        .items
        .iter()
        .any(|i| i.reasons.iter().any(|r| r.code == "unconfirmed-no-logs"));
    // Every output that names the operator resolves it the same way (`-o json` as `-o wide`);
    // its Pods' logs are read only when a verdict needs them or one object is explained.
    let logs = if args.name.is_some() || needs_logs {
        crate::evidence::live::Logs::Current
    } else {
        crate::evidence::live::Logs::None
    };
    if names_operator || args.name.is_some() || needs_logs {
        crate::evidence::live::add_operator(client, &mut snapshot, plan, logs).await;
        // add_operator replaced the logs with the Pods' (or a gap).
        args.log_files.add_to(&mut snapshot)?;
    }
    let report = report(&snapshot, namespace, args.name.as_deref(), args.skew);
    check_decidable(&report, &snapshot, namespace, args.name.as_deref())?;
    Ok(report)
}

/// kubectl's note for an empty answer, on stderr.
fn note_if_empty(report: &Report, namespace: Option<&str>) {
    if report.items.is_empty() {
        match namespace {
            Some(ns) => eprintln!("No resources found in {} namespace.", sanitize(ns)),
            None => eprintln!("No resources found"),
        }
    }
}

/// Points the next commands of a bundle answer at the same bundle.
fn with_bundle_hint(mut report: Report, dir: &std::path::Path) -> Report {
    for item in &mut report.items {
        item.bundle = Some(dir.display().to_string());
    }
    report
}

fn print_gaps(report: &Report) {
    for gap in &report.gaps {
        eprintln!("note: evidence gap: {}", sanitize(&gap.to_string()));
    }
}

async fn run_live(
    global: &GlobalArgs,
    args: &StatusArgs,
    namespace: Option<String>,
    color: bool,
) -> Result<u8, AppError> {
    let (client, config) = crate::client::client(global, crate::client::Usage::Diagnostics).await?;
    super::check_operator_exists(&client, global, &config, args.operator.as_deref()).await?;
    let namespace = if global.all_namespaces {
        None
    } else {
        Some(namespace.unwrap_or(config.default_namespace.clone()))
    };
    let plan = crate::evidence::live::Plan {
        namespace: namespace.clone(),
        selector: global.selector.clone(),
        name: args.name.clone(),
        operator: args.operator.clone(),
        context: global.context.clone(),
        server: config.cluster_url.to_string(),
    };
    let scope = match &namespace {
        Some(ns) => format!("in namespace {ns}"),
        None => "in all namespaces".into(),
    };
    let where_ = format!(
        "{} (context {})",
        config.cluster_url,
        crate::client::context_name(global).as_deref().unwrap_or("unknown")
    );
    let access = crate::evidence::live::caller_access(&client, namespace.as_deref())
        .await
        .map_err(|e| crate::client::unreachable(global, &config, e))?;
    let printed = if args.name.is_some() {
        crate::evidence::live::NotesFor::StatusObject
    } else {
        crate::evidence::live::NotesFor::StatusTable
    };
    for note in crate::evidence::live::access_notes(&access, &scope, printed) {
        eprintln!("note: {note}");
    }
    // The plain table and `-o name` print no operator; every other output does.
    let names_operator = !matches!(global.output, None | Some(OutputFormat::Name));
    let wide = global.output == Some(OutputFormat::Wide);
    let gather = || live_report(&client, &plan, &access, args, names_operator, &where_);
    let mut current = gather().await?;
    print_gaps(&current);
    note_if_empty(&current, namespace.as_deref());
    super::write_stdout(&render_report(&current, global, args.name.as_deref(), color)?)?;
    let mut code = exit_code(&current, args.exit_code);
    let first = current.clone();
    if args.watch {
        loop {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => break,
                _ = tokio::time::sleep(args.interval) => {}
            }
            let next = match gather().await {
                Ok(next) => next,
                Err(e) => {
                    eprintln!("warning: {}", sanitize(&e.to_string()));
                    continue;
                }
            };
            let changed = changed_rows(&current, &next);
            if !changed.items.is_empty() {
                let rows = match &global.output {
                    None | Some(OutputFormat::Wide) => watch_rows(&first, &changed, wide, global.all_namespaces, color),
                    _ => {
                        let mut quiet = global.clone();
                        quiet.no_headers = true;
                        render_report(&changed, &quiet, None, color)?
                    }
                };
                super::write_stdout(&rows)?;
            }
            code = code.max(exit_code(&next, args.exit_code));
            current = next;
        }
    }
    Ok(code)
}
