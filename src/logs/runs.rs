//! Records → handler runs: one run is one invocation of one handler for one object.
//!
//! Kopf handles one object at a time, so a run is found per object, in log order:
//! - `Handler 'x' is invoked.` (DEBUG, `-v`) starts a run of `x`;
//! - the object's other lines that are not Kopf's own (the handler's output, such as `Accepted
//!   ns/name: ...`) belong to the open run, or open one whose handler is not known yet;
//! - the outcome line (`Handler 'x' succeeded.` / `failed temporarily: ...` / ...) names the
//!   handler and ends the run; `started` is the invocation line if any, else the first line;
//! - the cause comes from the line's own `cause` field (ours), else from the cycle:
//!   `<Title> is in progress` (DEBUG) at its start, or `<Title> is processed: N succeeded; M
//!   failed.` at its end, which gives every run of the cycle its cause (Kopf names the cause only
//!   there); a cycle that has not ended leaves `unknown`, unless a [`CauseHint`] from the object's
//!   progress annotation (`purpose`) applies;
//! - a run with no outcome after `run_timeout` (of log time) is closed as `unknown`;
//! - Kopf logs `<Title> is processed` before the cycle's final PATCH (its handlers' results:
//!   status, last-handled-configuration). When that PATCH is rejected, the next line for the
//!   object is `Throttling for N seconds due to an unexpected error: APIClientError(...)`
//!   (`kopf/_core/actions/throttlers.py`, Kopf 1.38 .. 1.44): the runs of that cycle that
//!   succeeded become `failed`, with the API error as their detail — nothing of them was saved,
//!   and Kopf runs them again at the object's next event or restart (nolar/kopf#1087).
//!
//! Lines of an object that belong to no run (e.g. a handler's output when the logs end before
//! its outcome names the handler) are counted in [`GroupStats::unattributed_lines`].
//!
//! Closed runs are held until [`Grouper::drain`] releases them, so that a cycle's end can still
//! give them their cause and late lines (ours logs a failed event POST after the run) can still
//! join them.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use chrono::{DateTime, Utc};

use super::record::Record;
use super::{ObjectKey, Stamp};
use crate::kopf::messages::{ApiFailure, CycleReason, Lifecycle, Outcome};
pub use crate::kopf::progress::CauseHint;
use crate::vocab::cause::Cause;

/// How a run's cause was learned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CauseSource {
    /// A `cause` field on the run's lines (our operator).
    Field,
    /// Kopf's `<Title> is in progress` line at the cycle's start.
    CycleStart,
    /// Kopf's `<Title> is processed` (or `is superseded`) line at the cycle's end.
    CycleEnd,
    /// The object's progress annotation (`purpose`), for a cycle that has not ended in the logs.
    ProgressAnnotation,
}

/// One invocation of one handler for one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    /// The handler id, exact (Kopf's field handler is `accept/spec`).
    pub handler: String,
    /// The object.
    pub object: ObjectKey,
    /// `None` is `unknown`.
    pub cause: Option<Cause>,
    /// How the cause was learned.
    pub cause_source: Option<CauseSource>,
    /// The outcome (Contracts mapping).
    pub outcome: Outcome,
    /// The failure message, or why the outcome is unknown.
    pub detail: Option<String>,
    /// The invocation line's time if logged, else the first attributed line's.
    pub started: Option<Stamp>,
    /// The outcome line's time (the last line's for an unknown outcome).
    pub finished: Option<Stamp>,
    /// The run's records, in log order.
    pub records: Vec<Record>,
    /// Records not kept (over the per-run cap).
    pub omitted_records: usize,
    /// The Pod whose logs the run came from (set by the caller).
    pub pod: Option<String>,
    /// The container (set by the caller).
    pub container: Option<String>,
    /// Other logs the same run was read from (`file=NAME`, `pod=POD/CONTAINER`): copies of it
    /// that [`super::copies::merge_copies`] folded into it.
    pub also_read_from: Vec<String>,
}

impl Run {
    /// Whether `--handler name` selects this run: `name` itself or a sub-id `name/...`.
    pub fn matches_handler(&self, name: &str) -> bool {
        handler_matches(&self.handler, name)
    }
}

/// The detail of a run still open when its log ends: `running: no outcome logged N s after
/// its start, as of the log's last line at T` when its start and the log's last line have
/// times, else that the logs end before its outcome. A run is "running" only as far as the
/// log goes: a log read earlier, or a container that stopped, ends the same way.
pub fn open_run_detail(started: Option<DateTime<Utc>>, log_last: Option<DateTime<Utc>>) -> String {
    match (started, log_last) {
        (Some(started), Some(last)) if last - started < chrono::Duration::seconds(1) && last >= started => format!(
            "running: no outcome logged after its start, the log's last line (at {})",
            crate::time::rfc3339_millis(last)
        ),
        (Some(started), Some(last)) if last >= started => format!(
            "running: no outcome logged {} after its start, as of the log's last line at {}",
            humantime((last - started).to_std().unwrap_or_default()),
            crate::time::rfc3339_millis(last)
        ),
        _ => "the logs end before the handler's outcome".to_string(),
    }
}

/// `accept` matches `accept` and `accept/spec`, not `acceptor`.
pub fn handler_matches(id: &str, name: &str) -> bool {
    id == name || id.strip_prefix(name).is_some_and(|rest| rest.starts_with('/'))
}

/// How long after a cycle's `is processed` line a `Throttling` line is still about that cycle's
/// final PATCH: Kopf's 9 request attempts with backoffs 1, 1, 2, 3, 5, 8, 13, 21 s take 54 s
/// (`kopf/_cogs/clients/api.py`, `settings.networking.error_backoffs`), plus the requests.
pub const PATCH_WINDOW_SECONDS: i64 = 90;

/// Clock skew tolerated between a progress annotation's `started` and the log's times.
pub const HINT_SKEW: Duration = Duration::from_secs(5);

/// Grouping settings.
#[derive(Debug, Clone)]
pub struct GroupConfig {
    /// A run without outcome for this long (log time) is closed as `unknown`.
    pub run_timeout: Duration,
    /// Records kept per run; further ones are counted in `omitted_records`.
    pub max_records_per_run: usize,
}

impl Default for GroupConfig {
    fn default() -> Self {
        GroupConfig {
            run_timeout: Duration::from_secs(600),
            max_records_per_run: 1000,
        }
    }
}

/// Counts of what grouping did with object lines.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GroupStats {
    /// Runs closed.
    pub runs: u64,
    /// Records about an object that joined no run (no handler could be named for them).
    pub unattributed_lines: u64,
    /// Runs closed as `unknown` because no outcome came within the run timeout.
    pub expired_runs: u64,
}

#[derive(Debug)]
struct OpenRun {
    handler: Option<String>,
    started: Option<Stamp>,
    last: Option<DateTime<Utc>>,
    records: Vec<Record>,
    omitted: usize,
    cause: Option<Cause>,
}

#[derive(Debug, Default)]
struct ObjectState {
    cycle: Option<CycleReason>,
    open: Option<OpenRun>,
    cycle_runs: Vec<u64>,
    /// The runs of the cycle whose `is processed` line came last: a `Throttling` line right
    /// after it says its final PATCH failed.
    ended_runs: Vec<u64>,
    /// When that line was logged.
    ended_at: Option<DateTime<Utc>>,
    last_run: Option<u64>,
    /// The object's latest line time: a cycle that never logged its end (Kopf logs no
    /// `is processed` for a cycle without handlers) is forgotten after the run timeout.
    seen: Option<DateTime<Utc>>,
}

/// Groups one stream's records into runs (see the module docs). One grouper per container
/// log: runs never span processes.
#[derive(Debug)]
pub struct Grouper {
    config: GroupConfig,
    objects: HashMap<ObjectKey, ObjectState>,
    held: VecDeque<Run>,
    released: u64,
    stats: GroupStats,
    hints: Vec<CauseHint>,
    latest: Option<DateTime<Utc>>,
    last_sweep: Option<DateTime<Utc>>,
    /// The handlers the stream named so far (`Handler 'x' ...` lines of any object), distinct.
    named: Vec<String>,
}

impl Grouper {
    /// A grouper with these settings.
    pub fn new(config: GroupConfig) -> Self {
        Grouper {
            config,
            objects: HashMap::new(),
            held: VecDeque::new(),
            released: 0,
            stats: GroupStats::default(),
            hints: Vec::new(),
            latest: None,
            last_sweep: None,
            named: Vec::new(),
        }
    }

    /// Adds causes known from progress annotations (applied when runs are released).
    pub fn set_hints(&mut self, hints: Vec<CauseHint>) {
        self.hints = hints;
    }

    /// What grouping did so far.
    pub fn stats(&self) -> &GroupStats {
        &self.stats
    }

    /// The latest record time seen.
    pub fn latest(&self) -> Option<DateTime<Utc>> {
        self.latest
    }

    /// Feeds one record.
    pub fn push(&mut self, record: Record) {
        self.see_time(&record);
        let Some(object) = record.object.clone() else {
            return;
        };
        let lifecycle = record.lifecycle();
        if let Lifecycle::Invoked { handler } | Lifecycle::HandlerOutcome { handler, .. } = &lifecycle
            && !self.named.contains(handler)
        {
            self.named.push(handler.clone());
        }
        let mut state = self.objects.remove(&object).unwrap_or_default();
        state.seen = record.time().or(state.seen);
        match lifecycle {
            Lifecycle::Invoked { handler } => self.on_invoked(&object, &mut state, handler, record),
            Lifecycle::HandlerOutcome {
                handler,
                outcome,
                detail,
            } => self.on_outcome(&object, &mut state, (handler, outcome, detail), record),
            Lifecycle::CycleInProgress(reason) => {
                state.ended_runs.clear();
                self.drop_pending(&mut state);
                state.cycle = Some(reason);
            }
            Lifecycle::CycleProcessed { reason, .. } => self.on_cycle_end(&object, &mut state, reason, record),
            Lifecycle::Throttled(failure) => self.on_rejected_patch(&mut state, &failure, record),
            Lifecycle::Superseded { from, .. } => {
                self.backfill(&mut state, from.cause());
                state.cycle = None;
            }
            Lifecycle::EventPostFailed(_) => self.on_kopf_line(&mut state, true, record),
            Lifecycle::PatchInconsistencies | Lifecycle::Framework => self.on_kopf_line(&mut state, false, record),
            Lifecycle::Other => self.on_handler_line(&object, &mut state, record),
        }
        self.objects.insert(object, state);
    }

    /// The latest time seen, and a sweep of runs past their timeout once a second of log time.
    fn see_time(&mut self, record: &Record) {
        if let Some(t) = record.time() {
            if self.latest.is_none_or(|l| t > l) {
                self.latest = Some(t);
            }
            if self.last_sweep.is_none_or(|s| t - s >= chrono::Duration::seconds(1)) {
                self.last_sweep = Some(t);
                self.expire(t);
            }
        }
    }

    /// `Handler 'x' is invoked.`: a run of `handler` starts; one still open ends unknown.
    fn on_invoked(&mut self, object: &ObjectKey, state: &mut ObjectState, handler: String, record: Record) {
        state.ended_runs.clear();
        self.close_open(
            object,
            state,
            "the next handler started before this one's outcome was logged",
        );
        state.open = Some(self.open(Some(handler), state, record));
    }

    /// `Handler 'x' succeeded.` (failed, will retry): the open run of `handler` ends so (an
    /// open run of another handler ends unknown; without one, the run is this line alone).
    fn on_outcome(
        &mut self,
        object: &ObjectKey,
        state: &mut ObjectState,
        (handler, outcome, detail): (String, Outcome, Option<String>),
        record: Record,
    ) {
        let mut run = match state.open.take() {
            Some(o) if o.handler.is_none() || o.handler.as_deref() == Some(&handler) => o,
            other => {
                state.open = other;
                self.close_open(object, state, "another handler's outcome was logged before this one's");
                open_empty(None, state)
            }
        };
        push_capped(&mut run, record, self.config.max_records_per_run);
        run.handler = Some(handler);
        let detail = detail.or_else(|| last_traceback_line(&run));
        self.close(object, state, run, outcome, detail);
    }

    /// `<Title> is processed: ...`: the cycle ends; an open run ends unknown, the cycle's runs
    /// get its cause, and its last run the line.
    fn on_cycle_end(&mut self, object: &ObjectKey, state: &mut ObjectState, reason: CycleReason, record: Record) {
        self.close_open(
            object,
            state,
            "the handling cycle ended before this handler's outcome was logged",
        );
        state.ended_runs = state.cycle_runs.clone();
        state.ended_at = record.time();
        self.backfill(state, reason.cause());
        if let Some(run) = state.last_run.and_then(|i| self.held_mut(i)) {
            run.records.push(record);
        }
        state.cycle = None;
    }

    /// `Throttling for N seconds due to an unexpected error: ...` right after a cycle's end:
    /// its final PATCH was rejected, so its succeeded runs saved nothing and are failed.
    fn on_rejected_patch(&mut self, state: &mut ObjectState, failure: &ApiFailure, record: Record) {
        let mut ended = std::mem::take(&mut state.ended_runs);
        // The PATCH follows the `is processed` line at once; Kopf retries a 403 or a 5xx
        // up to 9 times (backoffs 1+1+2+3+5+8+13+21 s, `settings.networking`): a later
        // Throttling line is about a later event.
        let window = chrono::Duration::seconds(PATCH_WINDOW_SECONDS);
        if let (Some(at), Some(t)) = (state.ended_at, record.time())
            && t - at > window
        {
            ended.clear();
        }
        if ended.is_empty() {
            if let Some(open) = state.open.as_mut().filter(|o| o.handler.is_some()) {
                push_capped(open, record, self.config.max_records_per_run);
            }
            return;
        }
        let detail = format!(
            "the handler succeeded, but Kopf's PATCH at the end of the cycle was rejected ({}): nothing of this run was saved; Kopf runs it again at the object's next event or restart",
            failure.describe()
        );
        for i in &ended {
            if let Some(run) = self.held_mut(*i)
                && run.outcome == Outcome::Succeeded
            {
                run.outcome = Outcome::Failed;
                run.detail = Some(detail.clone());
            }
        }
        if let Some(run) = ended.last().and_then(|i| self.held_mut(*i)) {
            run.records.push(record);
        }
    }

    /// Kopf's own line about the object (`event_post`: a failed event post): it belongs to the
    /// open run, else to the last run of the handler it names.
    fn on_kopf_line(&mut self, state: &mut ObjectState, event_post: bool, record: Record) {
        // Kopf's own lines after a cycle's end say its PATCH went through (`Handling cycle
        // is finished`, inconsistencies, a later event's `Something has changed`), except
        // the PATCH itself (`Patching with`, `Request attempt #N`) and event posts (another
        // task).
        let m = record.message.as_str();
        let about_the_patch = m.starts_with("Patching with") || m.starts_with("Request attempt #");
        if !about_the_patch && !event_post {
            state.ended_runs.clear();
        }
        if let Some(open) = state.open.as_mut().filter(|o| o.handler.is_some()) {
            push_capped(open, record, self.config.max_records_per_run);
        } else if let Some(h) = record.handler.clone() {
            let late = state.last_run.and_then(|i| self.held_mut(i)).filter(|r| r.handler == h);
            match late {
                Some(run) => run.records.push(record),
                None => self.stats.unattributed_lines += 1,
            }
        }
    }

    /// Any other line about the object (the handler's own): it continues the open run of its
    /// handler, or opens one (an open run of another handler ends unknown).
    fn on_handler_line(&mut self, object: &ObjectKey, state: &mut ObjectState, record: Record) {
        match state.open.as_mut() {
            Some(o) if record.handler.is_none() || o.handler.is_none() || o.handler == record.handler => {
                if o.handler.is_none() {
                    o.handler = record.handler.clone();
                }
                push_capped(o, record, self.config.max_records_per_run);
            }
            Some(_) => {
                self.close_open(
                    object,
                    state,
                    "another handler logged before this one's outcome was logged",
                );
                let h = record.handler.clone();
                state.open = Some(self.open(h, state, record));
            }
            // A cut last line may be Kopf's own (`Creation is pro`): it opens no run.
            None if record.cut => self.stats.unattributed_lines += 1,
            None => {
                let h = record.handler.clone();
                state.open = Some(self.open(h, state, record));
            }
        }
    }

    /// Closes runs left open longer than the run timeout before `now` (log time), as `unknown`.
    pub fn expire(&mut self, now: DateTime<Utc>) {
        let timeout = crate::time::delta(self.config.run_timeout);
        let stale: Vec<ObjectKey> = self
            .objects
            .iter()
            .filter(|(_, s)| {
                s.open
                    .as_ref()
                    .and_then(|o| o.last)
                    .is_some_and(|last| now - last > timeout)
            })
            .map(|(k, _)| k.clone())
            .collect();
        for key in stale {
            let mut state = self.objects.remove(&key).unwrap_or_default();
            let detail = format!(
                "no outcome logged within the run timeout ({})",
                humantime(self.config.run_timeout)
            );
            self.name_the_only_handler(&mut state);
            if state.open.as_ref().is_some_and(|o| o.handler.is_some()) {
                self.stats.expired_runs += 1;
            }
            self.close_open(&key, &mut state, &detail);
            self.objects.insert(key, state);
        }
        let released = self.released;
        self.objects.retain(|_, s| {
            s.open.is_some()
                || (s.cycle.is_some() && s.seen.is_none_or(|seen| now - seen <= timeout))
                || s.last_run.is_some_and(|i| i >= released)
                || s.cycle_runs.iter().any(|&i| i >= released)
        });
    }

    /// Ends the stream: open runs are closed as `unknown` (the logs end before their outcome).
    /// A run whose start was logged (`Handler 'x' is invoked.`, Kopf `-v`) is still running as
    /// far as the log knows: its detail says for how long, as of the log's last line
    /// ([`open_run_detail`]). So is a run that began with the handler's own line (Kopf's default
    /// level logs no start), when the stream names one handler only: it is that handler's.
    pub fn finish(&mut self) {
        let keys: Vec<ObjectKey> = self.objects.keys().cloned().collect();
        let last = self.latest;
        for key in keys {
            let mut state = self.objects.remove(&key).unwrap_or_default();
            self.name_the_only_handler(&mut state);
            let why = match state.open.as_ref() {
                Some(o) if o.handler.is_some() => open_run_detail(o.started.map(|s| s.at), last),
                _ => "the logs end before the handler's outcome".to_string(),
            };
            self.close_open(&key, &mut state, &why);
            self.objects.insert(key, state);
        }
    }

    /// Releases held runs that finished at or before `before` (all when `None`), applying
    /// progress-annotation hints to those still without a cause.
    pub fn drain(&mut self, before: Option<DateTime<Utc>>) -> Vec<Run> {
        let mut out = Vec::new();
        while let Some(front) = self.held.front() {
            let ready = match (before, front.finished) {
                (None, _) => true,
                (Some(_), None) => true,
                (Some(b), Some(f)) => f.at <= b,
            };
            if !ready {
                break;
            }
            let mut run = self.held.pop_front().expect("front exists");
            self.released += 1;
            if run.cause.is_none() {
                self.apply_hint(&mut run);
            }
            out.push(run);
        }
        out
    }

    fn apply_hint(&self, run: &mut Run) {
        let skew = crate::time::delta(HINT_SKEW);
        let hint = self.hints.iter().find(|h| {
            h.object == run.object
                && h.handler.replace('/', ".") == run.handler.replace('/', ".")
                && match (h.started, run.started) {
                    (Some(hs), Some(rs)) => rs.at >= crate::time::minus(hs, skew),
                    _ => true,
                }
        });
        if let Some(h) = hint {
            run.cause = Some(h.cause);
            run.cause_source = Some(CauseSource::ProgressAnnotation);
        }
    }

    /// An open run that began with the handler's own line, which names no handler, is the
    /// run of the one handler the stream names (`Handler 'accept' succeeded.` of any object),
    /// when it names exactly one; else it stays unnamed (its lines are counted unattributed).
    fn name_the_only_handler(&self, state: &mut ObjectState) {
        if let (Some(open), [only]) = (state.open.as_mut(), self.named.as_slice())
            && open.handler.is_none()
        {
            open.handler = Some(only.clone());
        }
    }

    fn open(&self, handler: Option<String>, state: &ObjectState, record: Record) -> OpenRun {
        let mut run = open_empty(handler, state);
        push_capped(&mut run, record, self.config.max_records_per_run);
        run
    }

    /// Closes the open run as `unknown` (or counts a handler-less one as unattributed).
    fn close_open(&mut self, object: &ObjectKey, state: &mut ObjectState, why: &str) {
        match state.open.take() {
            Some(o) if o.handler.is_some() => self.close(object, state, o, Outcome::Unknown, Some(why.to_string())),
            Some(o) => self.stats.unattributed_lines += (o.records.len() + o.omitted) as u64,
            None => {}
        }
    }

    fn drop_pending(&mut self, state: &mut ObjectState) {
        if state.open.as_ref().is_some_and(|o| o.handler.is_none()) {
            let o = state.open.take().expect("checked");
            self.stats.unattributed_lines += (o.records.len() + o.omitted) as u64;
        }
    }

    fn close(
        &mut self,
        object: &ObjectKey,
        state: &mut ObjectState,
        run: OpenRun,
        outcome: Outcome,
        detail: Option<String>,
    ) {
        let field_cause = run.records.iter().find_map(|r| r.cause);
        let (cause, cause_source) = match (field_cause, run.cause) {
            (Some(c), _) => (Some(c), Some(CauseSource::Field)),
            (None, Some(c)) => (Some(c), Some(CauseSource::CycleStart)),
            (None, None) => (None, None),
        };
        let finished = run.records.iter().rev().find_map(|r| r.stamp);
        let index = self.released + self.held.len() as u64;
        self.held.push_back(Run {
            handler: run.handler.unwrap_or_default(),
            object: object.clone(),
            cause,
            cause_source,
            outcome,
            detail,
            started: run.started.or_else(|| run.records.iter().find_map(|r| r.stamp)),
            finished,
            records: run.records,
            omitted_records: run.omitted,
            pod: None,
            container: None,
            also_read_from: Vec::new(),
        });
        self.stats.runs += 1;
        state.ended_runs.clear();
        state.last_run = Some(index);
        state.cycle_runs.push(index);
    }

    fn backfill(&mut self, state: &mut ObjectState, cause: Option<Cause>) {
        for i in std::mem::take(&mut state.cycle_runs) {
            if let (Some(run), Some(c)) = (self.held_mut(i), cause)
                && run.cause.is_none()
            {
                run.cause = Some(c);
                run.cause_source = Some(CauseSource::CycleEnd);
            }
        }
    }

    fn held_mut(&mut self, index: u64) -> Option<&mut Run> {
        let at = index.checked_sub(self.released)?;
        self.held.get_mut(usize::try_from(at).ok()?)
    }
}

fn open_empty(handler: Option<String>, state: &ObjectState) -> OpenRun {
    OpenRun {
        handler,
        started: None,
        last: None,
        records: Vec::new(),
        omitted: 0,
        cause: state.cycle.and_then(CycleReason::cause),
    }
}

fn push_capped(run: &mut OpenRun, record: Record, cap: usize) {
    if let Some(t) = record.time() {
        run.last = Some(t);
    }
    if run.started.is_none() {
        run.started = record.stamp;
    }
    if run.records.len() < cap {
        run.records.push(record);
    } else {
        run.omitted += 1;
    }
}

/// For an outcome line without a message (`Will retry.`), the traceback's last line
/// (`ValueError: boom`) says what failed.
fn last_traceback_line(run: &OpenRun) -> Option<String> {
    run.records
        .last()?
        .continuation()
        .filter(|l| !l.trim().is_empty())
        .last()
        .map(|l| l.trim().to_string())
}

/// `10m`, `90s`, `1h30m`.
pub fn humantime(d: Duration) -> String {
    crate::time::human(crate::time::delta(d), crate::time::DurationStyle::Compact)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::logs::lines::LineSplitter;
    use crate::logs::record::RecordParser;

    fn records_of(input: &str) -> Vec<Record> {
        let mut parser = RecordParser::new();
        let mut splitter = LineSplitter::new();
        let mut records = Vec::new();
        let mut push = |l| parser.push(l, &mut |r| records.push(r));
        splitter.push(input.as_bytes(), &mut push);
        splitter.finish(&mut push);
        parser.flush(&mut |r| records.push(r));
        records
    }

    /// Parses and groups a whole log; runs in close order.
    pub(crate) fn group(input: &str, config: GroupConfig) -> (Vec<Run>, GroupStats) {
        let mut grouper = Grouper::new(config);
        records_of(input).into_iter().for_each(|r| grouper.push(r));
        grouper.finish();
        let runs = grouper.drain(None);
        (runs, grouper.stats().clone())
    }

    fn summary(runs: &[Run]) -> Vec<(String, String, &'static str, &'static str)> {
        runs.iter()
            .map(|r| {
                (
                    r.handler.clone(),
                    r.object.to_string(),
                    r.cause.map_or("unknown", Cause::as_str),
                    r.outcome.as_str(),
                )
            })
            .collect()
    }

    #[test]
    fn handler_names_match_sub_ids_only() {
        assert!(handler_matches("accept", "accept"));
        assert!(handler_matches("accept/spec", "accept"));
        assert!(!handler_matches("acceptor", "accept"));
        assert!(!handler_matches("accept", "accept/spec"));
    }

    #[test]
    fn a_retry_loop_gets_its_cause_when_the_cycle_ends() {
        let log = "\
[2026-11-29 16:22:42,532] kopf.objects         [INFO    ] [todo/a] Checking todo/a
[2026-11-29 16:22:42,534] kopf.objects         [ERROR   ] [todo/a] Handler 'accept' failed temporarily: nope
[2026-11-29 16:22:47,650] kopf.objects         [INFO    ] [todo/b] Checking todo/b
[2026-11-29 16:22:47,650] kopf.objects         [INFO    ] [todo/a] Checking todo/a
[2026-11-29 16:22:47,651] kopf.objects         [INFO    ] [todo/a] Handler 'accept' succeeded.
[2026-11-29 16:22:47,652] kopf.objects         [INFO    ] [todo/a] Creation is processed: 1 succeeded; 0 failed.
";
        let (runs, stats) = group(log, GroupConfig::default());
        assert_eq!(
            summary(&runs),
            [
                ("accept".into(), "todo/a".into(), "create", "retrying"),
                ("accept".into(), "todo/a".into(), "create", "succeeded"),
                // todo/b's handler logged its line and no outcome followed: a run still open,
                // of the one handler the log names (Kopf's default level logs no start).
                ("accept".into(), "todo/b".into(), "unknown", "unknown"),
            ]
        );
        assert_eq!(runs[0].detail.as_deref(), Some("nope"));
        assert_eq!(runs[1].records.len(), 3, "Checking, succeeded, is processed");
        assert_eq!(
            runs[1].started.unwrap().at.to_rfc3339(),
            "2026-11-29T16:22:47.650+00:00"
        );
        assert_eq!(
            runs[2].detail.as_deref(),
            Some("running: no outcome logged after its start, the log's last line (at 2026-11-29T16:22:47.652Z)")
        );
        assert_eq!(stats.unattributed_lines, 0);
    }

    /// A handler's own line with no outcome after it is a run of the one handler the log names;
    /// when the log names several, which one logged it is not known: its line is counted, not
    /// given to a handler.
    #[test]
    fn an_open_run_without_a_start_line_takes_the_only_handler_named() {
        let log = "\
[2026-12-01 12:25:21,514] kopf.objects         [INFO    ] [t/hang-api] Accepted t/hang-api: image=reg/ok:1
[2026-12-01 12:25:21,517] kopf.objects         [INFO    ] [t/hang-api] Handler 'accept' succeeded.
[2026-12-01 12:25:21,517] kopf.objects         [INFO    ] [t/hang-api] Creation is processed: 1 succeeded; 0 failed.
[2026-12-01 12:25:25,672] kopf.objects         [INFO    ] [t/hang-api] Accepted t/hang-api: image=reg/sleep:2
[2026-12-01 12:26:40,000] kopf.objects         [INFO    ] [t/ok-api] Handler 'accept' succeeded.
";
        let (runs, stats) = group(log, GroupConfig::default());
        let open = runs
            .iter()
            .find(|r| r.outcome == Outcome::Unknown)
            .expect("the open run");
        assert_eq!(
            (open.handler.as_str(), open.object.to_string()),
            ("accept", "t/hang-api".to_string())
        );
        assert_eq!(
            open.detail.as_deref(),
            Some(
                "running: no outcome logged 1m14s after its start, as of the log's last line at 2026-12-01T12:26:40.000Z"
            )
        );
        assert_eq!(stats.unattributed_lines, 0);
        let two = log.replace("[t/ok-api] Handler 'accept'", "[t/ok-api] Handler 'check'");
        let (runs, stats) = group(&two, GroupConfig::default());
        assert!(runs.iter().all(|r| r.outcome != Outcome::Unknown), "{runs:?}");
        assert_eq!(stats.unattributed_lines, 1);
    }

    #[test]
    fn open_runs_expire_after_the_run_timeout_and_at_the_end() {
        let log = "\
[2026-11-29 16:00:00,000] kopf.objects         [DEBUG   ] [ns/x] Handler 'accept' is invoked.
[2026-11-29 16:00:01,000] kopf.objects         [INFO    ] [ns/x] working
[2026-11-29 16:20:00,000] kopf.objects         [DEBUG   ] [ns/y] Handler 'accept' is invoked.
";
        let config = GroupConfig {
            run_timeout: Duration::from_secs(600),
            ..GroupConfig::default()
        };
        let (runs, stats) = group(log, config);
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[0].object.name, "x");
        assert_eq!(runs[0].outcome, Outcome::Unknown);
        assert!(runs[0].detail.as_deref().unwrap().contains("run timeout (10m)"));
        assert_eq!(runs[0].records.len(), 2);
        assert_eq!(runs[1].object.name, "y");
        // Its start is the log's last line: running, as far as the log goes.
        assert_eq!(
            runs[1].detail.as_deref(),
            Some("running: no outcome logged after its start, the log's last line (at 2026-11-29T16:20:00.000Z)")
        );
        assert_eq!(stats.expired_runs, 1);
    }

    #[test]
    fn tracebacks_give_the_detail_of_old_wordings() {
        let log = "\
[2026-11-29 16:00:00,000] kopf.objects         [ERROR   ] [ns/x] Handler 'accept' failed with an exception. Will retry.
Traceback (most recent call last):
  File \"/op.py\", line 3, in accept
ValueError: port is odd
";
        let (runs, _) = group(log, GroupConfig::default());
        assert_eq!(runs[0].outcome, Outcome::Retrying);
        assert_eq!(runs[0].detail.as_deref(), Some("ValueError: port is odd"));
    }

    #[test]
    fn progress_hints_name_the_cause_of_an_unfinished_cycle_only() {
        let log = "\
[2026-11-29 17:00:00,000] kopf.objects         [INFO    ] [s/x] Handler 'accept' succeeded.
[2026-11-29 17:00:00,001] kopf.objects         [INFO    ] [s/x] Resuming is processed: 1 succeeded; 0 failed.
[2026-11-29 17:13:32,228] kopf.objects         [ERROR   ] [s/x] Handler 'accept/spec' failed temporarily: registry unreachable
";
        let mut grouper = Grouper::new(GroupConfig::default());
        grouper.set_hints(vec![CauseHint {
            object: ObjectKey::parse("s/x").unwrap(),
            handler: "accept/spec".into(),
            cause: Cause::Update,
            started: Some("2026-11-29T17:13:32.227308Z".parse().unwrap()),
        }]);
        records_of(log).into_iter().for_each(|r| grouper.push(r));
        grouper.finish();
        let runs = grouper.drain(None);
        assert_eq!(runs[0].cause, Some(Cause::Resume));
        assert_eq!(runs[0].cause_source, Some(CauseSource::CycleEnd));
        assert_eq!(runs[1].cause, Some(Cause::Update));
        assert_eq!(runs[1].cause_source, Some(CauseSource::ProgressAnnotation));
    }

    #[test]
    fn drain_holds_runs_that_finished_after_the_cutoff() {
        let log = "\
[2026-11-29 17:00:00,000] kopf.objects         [INFO    ] [s/x] Handler 'accept' succeeded.
[2026-11-29 17:00:05,000] kopf.objects         [INFO    ] [s/y] Handler 'accept' succeeded.
";
        let mut grouper = Grouper::new(GroupConfig::default());
        records_of(log).into_iter().for_each(|r| grouper.push(r));
        let cutoff = "2026-11-29T17:00:02Z".parse().unwrap();
        assert_eq!(grouper.drain(Some(cutoff)).len(), 1);
        assert_eq!(grouper.drain(Some(cutoff)).len(), 0);
        assert_eq!(grouper.drain(None).len(), 1);
    }

    #[test]
    fn idle_objects_are_forgotten_even_with_a_cycle_that_never_ended() {
        let mut grouper = Grouper::new(GroupConfig {
            run_timeout: Duration::from_secs(60),
            ..GroupConfig::default()
        });
        for r in records_of(
            "[2026-11-29 17:00:00,000] kopf.objects         [DEBUG   ] [s/x] Updating is in progress: {}\n\
             [2026-11-29 17:00:00,001] kopf.objects         [INFO    ] [s/y] Handler 'accept' succeeded.\n",
        ) {
            grouper.push(r);
        }
        assert_eq!(grouper.drain(None).len(), 1);
        grouper.expire("2026-11-29T17:00:30Z".parse().unwrap());
        assert_eq!(
            grouper.objects.len(),
            1,
            "x's cycle is kept within the timeout; y's run is released"
        );
        grouper.expire("2026-11-29T17:02:00Z".parse().unwrap());
        assert!(grouper.objects.is_empty());
    }

    /// nolar/kopf#1087 as Kopf 1.38 logs it: the handler succeeds, the cycle is processed, and
    /// the final PATCH is refused. The runs are not "succeeded".
    #[test]
    fn a_rejected_final_patch_fails_the_cycle_runs() {
        let log = "\
[2026-12-01 09:00:00,100] kopf.objects         [INFO    ] [kms/big] Accepted kms/big: image=x port=1
[2026-12-01 09:00:00,101] kopf.objects         [INFO    ] [kms/big] Handler 'accept' succeeded.
[2026-12-01 09:00:00,102] kopf.objects         [INFO    ] [kms/big] Creation is processed: 1 succeeded; 0 failed.
[2026-12-01 09:00:00,140] kopf.objects         [ERROR   ] [kms/big] Throttling for 1 seconds due to an unexpected error: APIClientError('Microservice.platform.example.io \"big\" is invalid: metadata.annotations: Too long: must have at most 262144 bytes', {'kind': 'Status', 'reason': 'Invalid', 'code': 422})
Traceback (most recent call last):
  File \"/kopf/_core/actions/throttlers.py\", line 44, in throttled
kopf._cogs.clients.errors.APIClientError: ('Microservice.platform.example.io \"big\" is invalid', {})
[2026-12-01 09:00:01,141] kopf.objects         [INFO    ] [kms/big] Throttling is over. Switching back to normal operations.
[2026-12-01 09:00:05,000] kopf.objects         [INFO    ] [kms/ok] Handler 'accept' succeeded.
[2026-12-01 09:00:05,001] kopf.objects         [INFO    ] [kms/ok] Creation is processed: 1 succeeded; 0 failed.
";
        let (runs, _) = group(log, GroupConfig::default());
        assert_eq!(
            summary(&runs),
            [
                ("accept".into(), "kms/big".into(), "create", "failed"),
                ("accept".into(), "kms/ok".into(), "create", "succeeded"),
            ]
        );
        let detail = runs[0].detail.as_deref().unwrap();
        assert!(
            detail.starts_with(
                "the handler succeeded, but Kopf's PATCH at the end of the cycle was rejected (422 Invalid: "
            ) && detail.contains("metadata.annotations: Too long"),
            "{detail}"
        );
        assert!(
            runs[0]
                .records
                .iter()
                .any(|r| r.message.starts_with("Throttling for 1 seconds")),
            "the Throttling line is shown with the run"
        );
        // A Throttling line with no cycle just ended (a later event, or another object's) fails
        // no earlier run.
        let log = "\
[2026-12-01 09:00:00,101] kopf.objects         [INFO    ] [kms/a] Handler 'accept' succeeded.
[2026-12-01 09:00:00,102] kopf.objects         [INFO    ] [kms/a] Creation is processed: 1 succeeded; 0 failed.
[2026-12-01 09:00:00,140] kopf.objects         [ERROR   ] [kms/b] Throttling for 1 seconds due to an unexpected error: APIClientError('x', {'code': 422})
[2026-12-01 09:00:09,000] kopf.objects         [DEBUG   ] [kms/a] Something has changed, but we are not interested (the essence is the same).
[2026-12-01 09:00:09,040] kopf.objects         [ERROR   ] [kms/a] Throttling for 1 seconds due to an unexpected error: APIClientError('x', {'code': 422})
[2026-12-01 09:01:00,101] kopf.objects         [INFO    ] [kms/c] Handler 'accept' succeeded.
[2026-12-01 09:01:00,102] kopf.objects         [INFO    ] [kms/c] Creation is processed: 1 succeeded; 0 failed.
[2026-12-01 09:03:00,140] kopf.objects         [ERROR   ] [kms/c] Throttling for 1 seconds due to an unexpected error: APIClientError('x', {'code': 422})
";
        let (runs, _) = group(log, GroupConfig::default());
        assert_eq!(
            summary(&runs),
            [
                ("accept".into(), "kms/a".into(), "create", "succeeded"),
                ("accept".into(), "kms/c".into(), "create", "succeeded"),
            ],
            "a later event's line, or two minutes, separate the Throttling line from the cycle"
        );
    }

    /// Real Kopf 1.38 lines (kms-k11k-p403, bundles-captured/kopf-patch-forbidden): a 403 on
    /// the object's PATCH is retried 9 times over 55 s before the Throttling line; the retries
    /// are Kopf's own lines, not the handler's, and the run is failed with the 403.
    #[test]
    fn a_forbidden_patch_retried_then_throttled_fails_the_run() {
        let log = "\
[2026-12-01 09:08:03,895] kopf.objects         [INFO    ] [kms-k11k-p403/pay-api] Accepted kms-k11k-p403/pay-api: image=registry.example.com/shop/cart:2.1.0 port=7200
[2026-12-01 09:08:03,899] kopf.objects         [INFO    ] [kms-k11k-p403/pay-api] Handler 'accept' succeeded.
[2026-12-01 09:08:03,900] kopf.objects         [INFO    ] [kms-k11k-p403/pay-api] Creation is processed: 1 succeeded; 0 failed.
[2026-12-01 09:08:03,903] kopf.objects         [ERROR   ] [kms-k11k-p403/pay-api] Request attempt #1/9 failed; will retry: PATCH https://kubernetes.default.svc/apis/platform.example.io/v1alpha1/namespaces/kms-k11k-p403/microservices/pay-api -> APIForbiddenError('forbidden', {'code': 403})
[2026-12-01 09:08:58,023] kopf.objects         [ERROR   ] [kms-k11k-p403/pay-api] Request attempt #9/9 failed; escalating: PATCH https://kubernetes.default.svc/apis/platform.example.io/v1alpha1/namespaces/kms-k11k-p403/microservices/pay-api -> APIForbiddenError('forbidden', {'code': 403})
[2026-12-01 09:08:58,049] kopf.objects         [ERROR   ] [kms-k11k-p403/pay-api] Throttling for 1 seconds due to an unexpected error: APIForbiddenError('microservices.platform.example.io \"pay-api\" is forbidden: User \"system:serviceaccount:kms-k11k-p403:kopf-operator\" cannot patch resource \"microservices\" in API group \"platform.example.io\" in the namespace \"kms-k11k-p403\"', {'kind': 'Status', 'reason': 'Forbidden', 'code': 403})
[2026-12-01 09:08:59,053] kopf.objects         [INFO    ] [kms-k11k-p403/pay-api] Throttling is over. Switching back to normal operations.
";
        let (runs, stats) = group(log, GroupConfig::default());
        assert_eq!(
            summary(&runs),
            [("accept".into(), "kms-k11k-p403/pay-api".into(), "create", "failed")]
        );
        assert!(
            runs[0]
                .detail
                .as_deref()
                .unwrap()
                .contains("(403 Forbidden: microservices.platform.example.io"),
            "{:?}",
            runs[0].detail
        );
        assert_eq!(stats.unattributed_lines, 0, "the retries are Kopf's own lines");
    }

    #[test]
    fn a_run_open_at_the_logs_end_is_running_as_of_its_last_line() {
        let t = |s: &str| s.parse::<DateTime<Utc>>().unwrap();
        assert_eq!(
            open_run_detail(Some(t("2026-12-01T11:19:14.477Z")), Some(t("2026-12-01T11:21:32.000Z"))),
            "running: no outcome logged 2m17s after its start, as of the log's last line at 2026-12-01T11:21:32.000Z"
        );
        assert_eq!(
            open_run_detail(Some(t("2026-12-01T11:19:14.477Z")), Some(t("2026-12-01T11:19:14.477Z"))),
            "running: no outcome logged after its start, the log's last line (at 2026-12-01T11:19:14.477Z)"
        );
        assert_eq!(open_run_detail(None, None), "the logs end before the handler's outcome");
    }

    #[test]
    fn humantime_reads_like_kubectl() {
        assert_eq!(humantime(Duration::from_secs(600)), "10m");
        assert_eq!(humantime(Duration::from_secs(90)), "1m30s");
        assert_eq!(humantime(Duration::from_secs(5)), "5s");
        assert_eq!(humantime(Duration::from_secs(7200)), "2h");
    }
}
