//! `kubectl microservice explain-events NAME`: why is there no Warning event on a Microservice?
//! A one-line verdict, then the findings of [`crate::diagnose::events`] by severity, each with
//! its evidence and fix; `-o json|yaml`. Works on a cluster (gathering the operator, its logs,
//! the CRD, ConfigMaps, RBAC objects and SubjectAccessReviews for its ServiceAccount) and on a
//! bundle (`--bundle DIR`); `--log-file FILE` adds the operator's log from a file to either
//! (an operator without a Pod: `operate` on a laptop, or logs from a log store).

use super::short_form;
use crate::cli::{ExplainEventsArgs, GlobalArgs};
use crate::diagnose::events::{self, Finding, FindingId, Options, Report, Severity};
use crate::error::AppError;
use crate::evidence::gather::{Bundle, EvidenceSource, Needs, Objects, gather, gather_bundle};
use crate::evidence::{Evidence, Snapshot};
use crate::logs::LogSource;
use crate::render::{self, OutputFormat, Tone};
use crate::text::sanitize;

fn options(args: &ExplainEventsArgs) -> Options {
    Options {
        event_ttl: crate::time::delta(args.event_ttl),
        skew: crate::time::delta(args.skew),
    }
}

/// The report for `name` in `namespace` (pure). Errors (exit 3) when the object is not in the
/// evidence or Microservices could not be read.
pub fn report(snapshot: &Snapshot, namespace: &str, name: &str, options: Options) -> Result<Report, AppError> {
    let objects = match &snapshot.microservices {
        Evidence::Present(o) => o,
        Evidence::Gap(gap) => return Err(AppError::Undecided(format!("cannot decide: {gap}"))),
    };
    let obj = objects
        .iter()
        .find(|o| o.metadata.namespace.as_deref() == Some(namespace) && o.metadata.name.as_deref() == Some(name))
        .ok_or_else(|| AppError::Undecided(snapshot.resource.not_found_message(Some(namespace), name)))?;
    Ok(events::explain(snapshot, obj, options))
}

fn tone(s: Severity) -> Tone {
    match s {
        Severity::Ok => Tone::Good,
        Severity::Warning => Tone::Warn,
        Severity::Problem => Tone::Bad,
    }
}

/// The human view, long form (`--verbose`): the verdict line, then one block per
/// finding (problems first): severity and id, title, every evidence line in full, fix. `ok`
/// findings are listed briefly at the end. Control characters in cluster-sourced text are
/// escaped.
pub fn human(report: &Report, color: bool) -> String {
    let mut out = String::new();
    let line = |out: &mut String, text: &str| {
        out.push_str(&sanitize(text));
        out.push('\n');
    };
    line(&mut out, &format!("{}: {}", report.object, report.summary));
    line(&mut out, &format!("Operator: {}", report.operator_resolution.line()));
    // An `ok` finding with a fix explains (`handler-filtered`: not handled by design): in full.
    let (checked, found): (Vec<_>, Vec<_>) = report
        .findings
        .iter()
        .partition(|f| f.severity == Severity::Ok && f.fix.is_none());
    for f in found {
        out.push('\n');
        finding_header(&mut out, f, color);
        if !f.evidence.is_empty() {
            line(&mut out, "  Evidence:");
            for e in &f.evidence {
                line(&mut out, &format!("    - {e}"));
            }
        }
        if let Some(fix) = &f.fix {
            fix_block(&mut out, "  Fix:", fix);
        }
    }
    let _ = checked_block(&mut out, &checked, color, None);
    let _ = closing_blocks(&mut out, report, false);
    out
}

/// `PROBLEM  id: title`.
fn finding_header(out: &mut String, f: &Finding, color: bool) {
    let label = render::paint(&f.severity.as_str().to_uppercase(), tone(f.severity), color);
    out.push_str(&format!(
        "{label}  {}: {}\n",
        sanitize(f.id.as_str()),
        sanitize(&f.title)
    ));
}

/// A fix under `label`, each of its lines indented.
fn fix_block(out: &mut String, label: &str, fix: &str) {
    out.push_str(label);
    out.push('\n');
    for l in fix.lines() {
        out.push_str(&sanitize(&format!("    {l}")));
        out.push('\n');
    }
}

/// `Checked, fine:` with one line per `ok` finding; in the short form (`width`) each title is
/// cut at its clauses to fit one row.
/// The `Checked, fine` block: one row each, each title fitted to `width` when given. Whether a
/// title was cut.
fn checked_block(out: &mut String, checked: &[&Finding], color: bool, width: Option<usize>) -> bool {
    let mut cut = false;
    if checked.is_empty() {
        return cut;
    }
    out.push_str("\nChecked, fine:\n");
    for f in checked {
        let label = render::paint("ok", Tone::Good, color);
        let title = match width {
            Some(w) => short_form::fit_line(&f.title, w.saturating_sub(f.id.as_str().len() + 8)),
            None => f.title.clone(),
        };
        cut |= title != f.title;
        out.push_str(&format!(
            "  {label}  {}: {}\n",
            sanitize(f.id.as_str()),
            sanitize(&title)
        ));
    }
    cut
}

/// The gaps and notes; `short` reduces the API errors the gaps quote, aggregates the gaps of
/// one kind and fits each line. Whether anything was cut.
fn closing_blocks(out: &mut String, report: &Report, short: bool) -> bool {
    let mut cut = false;
    if !report.gaps.is_empty() {
        out.push_str("\nEvidence gaps:\n");
        let gaps: Vec<String> = report.gaps.iter().map(|g| g.to_string()).collect();
        let shown: Vec<String> = if short {
            short_form::aggregate_gaps(&gaps)
                .iter()
                .map(|g| short_form::fit_line(&short_form::reduce_api_errors(g), short_form::LINE_LIMIT))
                .collect()
        } else {
            gaps.clone()
        };
        cut |= shown != gaps;
        for gap in shown {
            out.push_str(&sanitize(&format!("  - {gap}")));
            out.push('\n');
        }
    }
    for note_in in &report.notes {
        let note = if short {
            short_form::fit_line(note_in, short_form::LINE_LIMIT)
        } else {
            note_in.clone()
        };
        cut |= note != *note_in;
        out.push('\n');
        out.push_str(&sanitize(&format!("Note: {note}")));
        out.push('\n');
    }
    cut
}

/// The commands a fix suggests ([`pasted_commands`]), as text.
fn commands_of(fix: &str) -> Vec<String> {
    pasted_commands(fix).into_iter().map(|r| fix[r].to_string()).collect()
}

/// The finding whose fix is printed under the headline: the first finding above ok, or the one
/// its fix sends the reader to (`operator-not-leading says why, and its fix`), when that one
/// has a fix of its own. A failing handler (`handler-failing`, whose fix is to read its runs)
/// gives way to the next finding with a fix that is not the verdict's: why its errors have no
/// event, the question explain-events answers (the headline names both).
fn top_fix<'a>(found: &[&'a Finding]) -> Option<&'a Finding> {
    let first = *found.first()?;
    if first.id == FindingId::HandlerFailing
        && let Some(next) = found
            .iter()
            .skip(1)
            // Another problem's fix (events not posted, ...), never a warning's: a side issue's
            // command is no fix for the failing handler (issue 18 trial, team-india).
            .find(|f| f.fix.is_some() && f.id != FindingId::AcceptedStale && f.severity == Severity::Problem)
    {
        return Some(next);
    }
    let fix = first.fix.as_deref()?;
    let pointed = found
        .iter()
        .skip(1)
        .find(|f| f.fix.is_some() && names_finding(fix, f.id.as_str()));
    Some(pointed.copied().unwrap_or(first))
}

/// Whether `text` names the finding `id` as a word: not inside a longer name or a path (a
/// bundle directory `kopf-1.44-errors-not-posted` in a pasted command names no finding).
fn names_finding(text: &str, id: &str) -> bool {
    let part = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '/' | '.');
    text.match_indices(id).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + id.len()..].chars().next();
        !before.is_some_and(part) && !after.is_some_and(|c| c != '.' && part(c))
    })
}

/// The line that stands for a fix whose commands were all printed above: which fix printed
/// them, by its finding (the one under the headline is "the fix under the headline"), so that
/// it never points at a fix above that has no commands (issue 18 trial P5).
fn repeated_fix(holders: &[FindingId], top: Option<FindingId>) -> String {
    let mut names: Vec<String> = Vec::new();
    for id in holders {
        let name = if Some(*id) == top {
            "the fix under the headline".to_string()
        } else {
            format!("{id}'s fix")
        };
        if !names.contains(&name) {
            names.push(name);
        }
    }
    format!("  Fix: the same commands as {} (above)\n", names.join(" and "))
}

/// The human view, short form (the default; issue 20: one screen): the headline within
/// [`short_form::HEADLINE_LIMIT`] characters, the first finding's fix right below it, then each
/// finding with its evidence aggregated and cut ([`short_form`]): events of one kind as one
/// line, log records as their message, API errors as code, reason and message, no evidence line
/// twice in the answer, at most [`short_form::EVIDENCE_LINES`] per finding; a finding that only
/// says "see X" folded into X; `Checked, fine` one row each. When anything was left out, the
/// last line says how to see it.
pub fn human_short(report: &Report, color: bool) -> String {
    let mut out = String::new();
    let mut cut = false;
    let headline = short_form::fit(
        &format!("{}: ", report.object),
        &report.summary,
        short_form::HEADLINE_LIMIT,
    );
    cut |= headline.chars().count() < report.object.len() + 2 + report.summary.chars().count();
    out.push_str(&sanitize(&headline));
    out.push('\n');
    let (checked, found): (Vec<&Finding>, Vec<&Finding>) =
        report.findings.iter().partition(|f| f.severity == Severity::Ok);
    let top = top_fix(&found);
    // Nothing wrong, the object excluded by its handlers' filters by design: the change that
    // would include it, where a user looks for it (issue 18 scenario 2, team-delta: it was only
    // in --verbose and -o json).
    let by_design = checked
        .iter()
        .find(|f| f.id == FindingId::HandlerFiltered && f.fix.is_some())
        .filter(|_| top.is_none());
    if let Some(f) = by_design {
        fix_block(
            &mut out,
            "Fix:",
            &short_form::compact_yaml_lists(f.fix.as_deref().unwrap_or_default()),
        );
    }
    if let Some(f) = top {
        let label = if Some(f.id) == found.first().map(|first| first.id) {
            "Fix:".to_string()
        } else {
            format!("Fix ({}):", f.id)
        };
        fix_block(
            &mut out,
            &label,
            &short_form::compact_yaml_lists(f.fix.as_deref().unwrap_or_default()),
        );
    }
    let operator = short_form::fit_line(
        &short_form::operator_line(&report.operator_resolution.line()),
        short_form::WIDTH - "Operator: ".len(),
    );
    cut |= operator != report.operator_resolution.line();
    out.push_str(&sanitize(&format!("Operator: {operator}")));
    out.push('\n');
    // "see X" findings fold into X: left out here, X's block stands for them.
    let folded = |f: &&Finding| {
        report
            .findings
            .iter()
            .any(|x| x.id != f.id && x.severity > Severity::Ok && f.title.contains(&format!("(see {})", x.id)))
    };
    let mut seen = short_form::Seen::default();
    // The commands the fixes printed so far, with the finding whose fix printed them: a fix
    // that repeats them all is not printed again, and says whose fix holds them.
    let mut printed: Vec<(String, FindingId)> = top
        .and_then(|t| {
            Some(
                t.fix
                    .as_deref()
                    .map(commands_of)?
                    .into_iter()
                    .map(|c| (c, t.id))
                    .collect(),
            )
        })
        .unwrap_or_default();
    for f in found.iter().filter(|f| !folded(f)) {
        out.push('\n');
        let title = short_form::fit_line(&f.title, short_form::WIDTH - f.id.as_str().len() - 11);
        cut |= title != f.title;
        finding_header(&mut out, &Finding { title, ..(*f).clone() }, color);
        let lines = seen.evidence(f.id.as_str(), &f.title, &f.evidence);
        cut |= lines.cut;
        if !lines.lines.is_empty() {
            for e in &lines.lines {
                out.push_str(&sanitize(&format!("    - {e}")));
                out.push('\n');
            }
        }
        match &f.fix {
            Some(_) if top.is_some_and(|t| t.id == f.id) => out.push_str("  Fix: above\n"),
            Some(fix) => {
                let commands = commands_of(fix);
                let holders: Vec<FindingId> = commands
                    .iter()
                    .filter_map(|c| printed.iter().find(|(p, _)| p == c).map(|(_, id)| *id))
                    .collect();
                if !commands.is_empty() && holders.len() == commands.len() {
                    cut = true;
                    out.push_str(&repeated_fix(&holders, top.map(|t| t.id)));
                } else {
                    let compact = short_form::compact_yaml_lists(fix);
                    if short_form::rows(&compact, short_form::WIDTH - 4) > short_form::LATER_FIX_ROWS {
                        cut = true;
                        let first = compact.lines().next().unwrap_or_default();
                        let first = short_form::fit_line(first, short_form::LINE_LIMIT);
                        fix_block(
                            &mut out,
                            "  Fix:",
                            &format!("{first} … (--verbose prints this fix whole)"),
                        );
                    } else {
                        fix_block(&mut out, "  Fix:", &compact);
                        printed.extend(commands.into_iter().map(|c| (c, f.id)));
                    }
                }
            }
            None => {}
        }
    }
    let checked: Vec<&Finding> = checked.into_iter().filter(|f| !folded(f)).collect();
    cut |= checked_block(&mut out, &checked, color, Some(short_form::WIDTH));
    cut |= closing_blocks(&mut out, report, true);
    if cut || report.findings.iter().any(|f| folded(&f)) {
        out.push_str(short_form::MORE_HINT);
        out.push('\n');
    }
    out
}

/// Renders the report in the requested format: the human view, or the `-o json` document
/// (also through `-o yaml` and the jsonpath templates), or the short form ([`human_short`]).
/// `-o wide` and `-o name` are usage errors: the answer is findings, not a table of objects
/// (`--verbose` gives the long form, [`render_report_as`]).
pub fn render_report(report: &Report, global: &GlobalArgs, color: bool) -> Result<String, AppError> {
    render_report_as(report, global, color, false)
}

/// [`render_report`], the human view in its long form ([`human`]) when `verbose`
/// (`--verbose`) asks for it, else the short form ([`human_short`]).
pub fn render_report_as(report: &Report, global: &GlobalArgs, color: bool, verbose: bool) -> Result<String, AppError> {
    if let Some(document) = render::document(report, global.output.as_ref())? {
        return Ok(document);
    }
    match &global.output {
        None if verbose => Ok(human(report, color)),
        None => Ok(human_short(report, color)),
        Some(other) => Err(refused_output(other)),
    }
}

/// The usage error for `-o wide` and `-o name`, naming the command and what it prints instead.
pub fn refused_output(output: &OutputFormat) -> AppError {
    AppError::Usage(format!(
        "explain-events prints findings about one Microservice, not a list of objects: -o {} has no meaning here; -o takes {}, e.g. -o jsonpath='{{.findings[*].id}}'",
        output.kind(),
        crate::cli::scope::output_formats("explain-events").unwrap_or_default()
    ))
}

/// Runs `explain-events`: prints the report, returns 0 (nothing hidden), 1 (something hidden or
/// stale) or 3 (could not decide); 2 for usage errors (a bad `--bundle` or `--log-file` path).
pub fn run(global: &GlobalArgs, args: &ExplainEventsArgs) -> Result<u8, AppError> {
    let color = render::use_color(global.color);
    // -A is refused while parsing (crate::cli::scope): one object is explained.
    let namespace = global.one_namespace("explain-events")?;
    // `--resource`: resolved first, its `TYPE/NAME` matched.
    let typed = args.resource.resource.as_deref();
    let resource = super::resource_arg::resolve(global, typed, args.bundle.as_deref())?;
    let given = super::resource_arg::object(Some(&args.name), typed, &resource)?.unwrap_or_default();
    // `NAMESPACE/NAME`, as `status` and `logs` take it.
    let (namespace, name) =
        crate::names::object_in_scope(&given, namespace.as_deref(), false).map_err(AppError::Usage)?;
    let args = &ExplainEventsArgs { name, ..args.clone() };
    if let Some(output @ (OutputFormat::Wide | OutputFormat::Name)) = &global.output {
        return Err(refused_output(output));
    }
    // A bad `--operator` is a usage error before anything is read.
    if let Some(spec) = &args.operator {
        crate::evidence::live::parse_operator_spec(spec).map_err(|e| AppError::Usage(e.to_string()))?;
    }
    let files = super::log_files::read(&args.log_files)?;
    let (snapshot, ns) = match &args.bundle {
        Some(dir) => {
            global.refuse_connection_flags("explain-events --bundle")?;
            let source = Bundle {
                dir,
                namespace: namespace.as_deref(),
                operator: args.operator.as_deref(),
                selector: None,
                resource: &resource,
            };
            let snapshot = gather_bundle(source, plan(&files))?;
            let ns = namespace.or_else(|| snapshot.namespace.clone()).ok_or_else(|| {
                AppError::Usage(format!(
                    "{}: the bundle names no namespace (meta.json): give -n NAMESPACE",
                    dir.display()
                ))
            })?;
            (snapshot, ns)
        }
        None => {
            let runtime = tokio::runtime::Runtime::new().map_err(|source| AppError::Io {
                context: "start the async runtime".into(),
                source,
            })?;
            runtime.block_on(gather_live(global, (args, resource), namespace, &files))?
        }
    };
    let mut report = report(&snapshot, &ns, &args.name, options(args)).map_err(|e| match (&args.bundle, e) {
        (Some(dir), AppError::Undecided(message)) => {
            AppError::Undecided(format!("{message} in the bundle {}", dir.display()))
        }
        (_, e) => e,
    })?;
    if let Some(dir) = &args.bundle {
        point_at_bundle(&mut report, dir);
    }
    super::write_stdout(&render_report_as(&report, global, color, args.verbose)?)?;
    Ok(report.exit_code())
}

/// Our commands in the fixes that read evidence (`logs`, `status`, `explain-events`) get
/// `--bundle DIR`, so that, answering from a bundle, the next command reads the same evidence
/// rather than whatever cluster the kubeconfig points at.
pub fn point_at_bundle(report: &mut Report, dir: &std::path::Path) {
    let bundle = format!(" --bundle {}", dir.display());
    for fix in report.findings.iter_mut().filter_map(|f| f.fix.as_mut()) {
        // From the last command back, so that the earlier spans stay where they are.
        for span in suggested_commands(fix).into_iter().rev() {
            let args = &fix[span.start + OUR_COMMAND.len()..span.end];
            let reads_evidence = ["logs ", "status ", "explain-events "]
                .iter()
                .any(|sub| args.starts_with(sub));
            if reads_evidence && !args.contains("--bundle") {
                fix.insert_str(span.end, &bundle);
            }
        }
    }
}

/// How a fix writes our commands.
pub const OUR_COMMAND: &str = "kubectl microservice ";

/// Where each `kubectl microservice ...` command in a fix's text stands, as byte ranges: the
/// parts of the [`pasted_commands`] (split at `;` and `|` outside quotes) that start with it,
/// without trailing space (in `kubectl create namespace ops; kubectl microservice manifests ...
/// | kubectl apply -f -`, the part our binary runs).
pub fn suggested_commands(text: &str) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    for span in pasted_commands(text) {
        let command = &text[span.clone()];
        let mut cuts: Vec<usize> = unquoted(command)
            .filter(|(_, c)| matches!(c, ';' | '|'))
            .map(|(i, _)| i)
            .collect();
        cuts.push(command.len());
        let mut from = 0;
        for cut in cuts {
            let part = &command[from..cut];
            let start = from + (part.len() - part.trim_start().len());
            if command[start..cut].starts_with(OUR_COMMAND) {
                out.push(span.start + start..span.start + from + part.trim_end().len());
            }
            from = cut + 1;
        }
    }
    out
}

/// Where each command a fix suggests stands, as byte ranges of what a user pastes into a shell:
/// from a `kubectl` that starts a word (at the start, or after a space, a backtick or `(`) to
/// the command's end. A command opened by a backtick ends at the closing one (a pipeline such as
/// `` `kubectl microservice manifests ... | kubectl apply -f -` `` is one); any other ends at a
/// line break, a backtick, `|`, `;`, `)`, an aside ` (`, or ` and ` (two commands joined in
/// prose), outside single quotes (a JSON patch is one word), without a trailing `.`, `,` or
/// space. This is the one rule of where a suggested command ends: `point_at_bundle` reads it,
/// and the end-to-end tests paste what it cuts.
pub fn pasted_commands(text: &str) -> Vec<std::ops::Range<usize>> {
    let mut out: Vec<std::ops::Range<usize>> = Vec::new();
    for (at, _) in text.match_indices("kubectl ") {
        if out.last().is_some_and(|last| at < last.end) {
            continue;
        }
        let before = text[..at].chars().next_back();
        if !before.is_none_or(|c| c.is_whitespace() || c == '`' || c == '(') {
            continue;
        }
        let rest = &text[at..];
        let end = if before == Some('`') {
            rest.find('`').unwrap_or(rest.len())
        } else {
            unquoted(rest)
                .find(|(i, c)| {
                    matches!(c, '\n' | '`' | '|' | ';' | ')')
                        || rest[*i..].starts_with(" (")
                        || rest[*i..].starts_with(" and ")
                })
                .map_or(rest.len(), |(i, _)| i)
        };
        out.push(at..at + rest[..end].trim_end_matches(['.', ',', ' ']).len());
    }
    out
}

/// The characters of a shell command outside single quotes, with their byte offsets.
fn unquoted(command: &str) -> impl Iterator<Item = (usize, char)> + '_ {
    let mut quoted = false;
    command.char_indices().filter(move |(_, c)| {
        if *c == '\'' {
            quoted = !quoted;
            return false;
        }
        !quoted
    })
}

/// What `explain-events` gathers ([`gather`]; a bundle holds what it holds, and only
/// `--log-file` applies): the object with its events of every type, the operator with its Pods'
/// logs (and the previous container's), and the rest: RBAC, access reviews, the CRD, ConfigMaps.
fn plan(log_files: &[LogSource]) -> Needs<'_> {
    Needs {
        objects: Objects::WithEvents,
        operator: Some(crate::evidence::live::Logs::WithPrevious),
        everything: true,
        log_files,
        progress: None,
    }
}

/// The snapshot of the cluster for `args.name` in `namespace` (else the context's namespace),
/// and that namespace.
async fn gather_live(
    global: &GlobalArgs,
    (args, resource): (&ExplainEventsArgs, crate::resource::identity::ResourceId),
    namespace: Option<String>,
    log_files: &[LogSource],
) -> Result<(Snapshot, String), AppError> {
    use crate::evidence::live;
    let connection = global.connection();
    let (client, config) = crate::client::client(&connection, crate::client::Usage::Diagnostics).await?;
    super::check_operator_exists(&client, &connection, &config, args.operator.as_deref()).await?;
    // explain-events takes no -A: always one namespace.
    let ns = crate::cli::namespace_in_context(false, namespace, &config.default_namespace).unwrap_or_default();
    let plan = live::LiveScope {
        namespace: Some(ns.clone()),
        name: Some(args.name.clone()),
        operator: args.operator.clone(),
        context: global.context.clone(),
        server: config.cluster_url.to_string(),
        resource,
        ..Default::default()
    };
    let access = live::caller_access_for(&client, Some(&ns), &plan.resource)
        .await
        .map_err(|e| crate::client::unreachable(&connection, &config, e))?;
    for note in live::access_notes(&access, &format!("in namespace {ns}"), live::NotesFor::Findings) {
        crate::commands::say(format_args!("note: {note}"));
    }
    let source = EvidenceSource::Live {
        client: &client,
        access: &access,
        scope: &plan,
    };
    let snapshot = gather(source, self::plan(log_files)).await.map_err(|e| {
        e.into_app(|e| {
            AppError::kube(
                format!("cannot get microservice {ns}/{} from {}", args.name, config.cluster_url),
                e,
            )
        })
    })?;
    Ok((snapshot, ns))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::events::Finding;

    /// Issue 18 trial P5: a finding id inside a path (a bundle directory in a pasted command)
    /// names no finding, so the headline's fix is never taken from it; a word does.
    #[test]
    fn a_finding_is_named_as_a_word_never_inside_a_path() {
        let fix = "its runs: kubectl microservice logs --handler accept basket-api -n store --bundle tests/fixtures/bundles-synthetic/kopf-1.44-errors-not-posted";
        assert!(!names_finding(fix, "errors-not-posted"));
        assert!(names_finding(
            "the operator is kept from handling: operator-not-leading says why",
            "operator-not-leading"
        ));
        assert!(names_finding("posted now (see rbac-events).", "rbac-events"));
        assert!(!names_finding("see rbac-events-extra", "rbac-events"));
    }

    /// Issue 18 trial P5: a fix whose commands were printed above says whose fix printed them,
    /// never "the fix above" where the fix right above has no commands.
    #[test]
    fn a_repeated_fix_names_the_fix_that_printed_its_commands() {
        assert_eq!(
            repeated_fix(&[FindingId::HandlerFailing], Some(FindingId::PostingDisabled)),
            "  Fix: the same commands as handler-failing's fix (above)\n"
        );
        assert_eq!(
            repeated_fix(
                &[FindingId::RbacEvents, FindingId::RbacEvents],
                Some(FindingId::RbacEvents)
            ),
            "  Fix: the same commands as the fix under the headline (above)\n"
        );
    }

    /// What a user pastes from a fix: whole commands, a backticked pipeline as one, a JSON patch
    /// as one word, never the prose after a command (` (it prints yes)`, ` (one replica: ...)`).
    #[test]
    fn pasted_commands_end_where_the_prose_starts() {
        let pasted =
            |text: &str| -> Vec<String> { pasted_commands(text).into_iter().map(|r| text[r].to_string()).collect() };
        assert_eq!(
            pasted(
                "with: kubectl -n ns patch role op --type=json -p '[{\"op\":\"add\",\"path\":\"/rules/-\",\"value\":{\"verbs\":[\"create\",\"patch\"]}}]'\nthen check the rule with kubectl auth can-i create events -n ns --as=system:serviceaccount:ops:op and kubectl auth can-i patch events -n ns --as=system:serviceaccount:ops:op (it prints yes); events that failed"
            ),
            [
                "kubectl -n ns patch role op --type=json -p '[{\"op\":\"add\",\"path\":\"/rules/-\",\"value\":{\"verbs\":[\"create\",\"patch\"]}}]'",
                "kubectl auth can-i create events -n ns --as=system:serviceaccount:ops:op",
                "kubectl auth can-i patch events -n ns --as=system:serviceaccount:ops:op",
            ]
        );
        assert_eq!(
            pasted(
                "scale it up: kubectl -n ops scale deployment/kopf-operator --replicas=1 (one replica: Kopf has no leader election)"
            ),
            ["kubectl -n ops scale deployment/kopf-operator --replicas=1"]
        );
        assert_eq!(
            pasted(
                "run one for it (`kubectl microservice manifests --namespace ops --watch-namespace todo | kubectl apply -f -`, or `kubectl microservice operate --namespace todo` with its log), or edit it (kubectl -n a edit deployment x; kubectl -n b edit deployment y); then"
            ),
            [
                "kubectl microservice manifests --namespace ops --watch-namespace todo | kubectl apply -f -",
                "kubectl microservice operate --namespace todo",
                "kubectl -n a edit deployment x",
                "kubectl -n b edit deployment y",
            ]
        );
        assert_eq!(
            pasted(
                "this rolls its Pods: kubectl -n ns set env deployment/op -c operator KOPF_POSTING-\nor delete line 12, then restart: kubectl -n ns rollout restart deployment op"
            ),
            [
                "kubectl -n ns set env deployment/op -c operator KOPF_POSTING-",
                "kubectl -n ns rollout restart deployment op",
            ]
        );
        // Not a command: `kubectl` inside a word, or a name ending in it.
        assert!(pasted("see mykubectl x and `notkubectl y`").is_empty());
        // Our command within a pipeline: the part our binary runs.
        let text =
            "(`kubectl create namespace ops; kubectl microservice manifests --namespace ops | kubectl apply -f -`)";
        let ours: Vec<&str> = suggested_commands(text).into_iter().map(|r| &text[r]).collect();
        assert_eq!(ours, ["kubectl microservice manifests --namespace ops"]);
        assert_eq!(
            pasted(text),
            ["kubectl create namespace ops; kubectl microservice manifests --namespace ops | kubectl apply -f -"]
        );
    }

    #[test]
    fn fixes_of_a_bundle_answer_read_the_same_bundle() {
        let fix = |text: &str| Finding {
            id: crate::diagnose::finding::FindingId::AcceptedStale,
            severity: Severity::Problem,
            title: String::new(),
            evidence: Vec::new(),
            fix: Some(text.into()),
        };
        let mut report = Report {
            schema_version: 1,
            object: "todo/todo-api".into(),
            summary: String::new(),
            findings: vec![
                fix(
                    "see the handler's runs since the change: kubectl microservice logs --handler accept todo-api -n todo",
                ),
                fix(
                    "(`kubectl microservice manifests --namespace ops --watch-namespace todo` prints it); then `kubectl microservice status todo-api -n todo`.",
                ),
                fix("kubectl microservice logs --handler accept x --bundle already"),
            ],
            gaps: Vec::new(),
            notes: Vec::new(),
            operator: None,
            operator_resolution: Default::default(),
            decided: true,
        };
        point_at_bundle(&mut report, std::path::Path::new("b/dir"));
        let fixes: Vec<&str> = report.findings.iter().map(|f| f.fix.as_deref().unwrap()).collect();
        assert_eq!(
            fixes[0],
            "see the handler's runs since the change: kubectl microservice logs --handler accept todo-api -n todo --bundle b/dir"
        );
        assert_eq!(
            fixes[1],
            "(`kubectl microservice manifests --namespace ops --watch-namespace todo` prints it); then `kubectl microservice status todo-api -n todo --bundle b/dir`."
        );
        assert_eq!(
            fixes[2],
            "kubectl microservice logs --handler accept x --bundle already"
        );
    }
}
