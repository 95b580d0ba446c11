//! Kopf's lifecycle vocabulary, which our operator speaks too (docs/operate.md, "Log format"):
//! what a log message says about a handler run, a handling cycle or an event post.
//!
//! Sources: `kopf/_core/actions/execution.py` (handler outcomes), `kopf/_core/reactor/processing.py`
//! (cycles), `kopf/_core/engines/posting.py` (event posts), with the wording changes of
//! Kopf 1.29 (`Creation event is processed` → `Creation is processed`), 1.40 (`failed with an
//! exception. Will retry.` → `... and will try again in N seconds: <err>`, look-ahead
//! `failed temporarily but will exceed/time out`) and 1.44 (`Patching failed with
//! inconsistencies` → `Merge-patching finished with inconsistencies`). Outcomes map as in
//! docs/contracts.md: "failed temporarily" / "will try again" / "Will retry" → retrying;
//! "permanently" / "will stop" / "exceeded" / "timed out" → failed; "will ignore" → succeeded.
//! Kopf's look-ahead "failed temporarily but will exceed N retries" / "but will time out" ends
//! the handler (`Outcome(final=True)`), so it is failed.

use std::fmt;

use crate::vocab::cause::Cause;

/// What one handler invocation came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Outcome {
    /// `Handler 'x' succeeded.`, or an error Kopf was told to ignore.
    Succeeded,
    /// A temporary failure: Kopf will invoke the handler again.
    Retrying,
    /// A permanent failure, or retries/time exhausted: the handler will not run again for this cause.
    Failed,
    /// No outcome in the logs (cancelled, expired, or the logs end first).
    Unknown,
}

impl Outcome {
    /// `succeeded`, `retrying`, `failed`, `unknown` (docs/contracts.md).
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Succeeded => "succeeded",
            Outcome::Retrying => "retrying",
            Outcome::Failed => "failed",
            Outcome::Unknown => "unknown",
        }
    }

    /// Reads a `--outcome` value.
    pub fn parse(s: &str) -> Option<Outcome> {
        Some(match s {
            "succeeded" => Outcome::Succeeded,
            "retrying" => Outcome::Retrying,
            "failed" => Outcome::Failed,
            "unknown" => Outcome::Unknown,
            _ => return None,
        })
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The reason of a Kopf handling cycle, by its title (`causes.TITLES`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CycleReason {
    /// `Creation`.
    Creation,
    /// `Updating`.
    Updating,
    /// `Deletion`.
    Deletion,
    /// `Resuming`.
    Resuming,
}

impl CycleReason {
    /// The run cause of the Contracts; a deletion cycle has none there (`unknown`).
    pub fn cause(self) -> Option<Cause> {
        match self {
            CycleReason::Creation => Some(Cause::Create),
            CycleReason::Updating => Some(Cause::Update),
            CycleReason::Resuming => Some(Cause::Resume),
            CycleReason::Deletion => None,
        }
    }

    fn from_title(title: &str) -> Option<CycleReason> {
        Some(match title {
            "Creation" | "creation" => CycleReason::Creation,
            "Updating" | "updating" | "Update" => CycleReason::Updating,
            "Deletion" | "deletion" => CycleReason::Deletion,
            "Resuming" | "resuming" => CycleReason::Resuming,
            _ => return None,
        })
    }
}

/// A failed event POST as the operator logged it (Kopf: logger `kopf._core.engines.posting`,
/// WARNING; ours: WARN with structured fields).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EventPostFailure {
    /// The HTTP status (Kopf `Code:` / `Status:`, ours `code=`), when logged.
    pub code: Option<u16>,
    /// The API's message (Kopf `Message:`, ours `error=`/`message=`).
    pub message: Option<String>,
    /// The event's type (Kopf `Event: type='...'`).
    pub event_type: Option<String>,
    /// The event's reason (Kopf `reason='...'`, ours `reason=`).
    pub event_reason: Option<String>,
    /// The event's message (Kopf `message='...'`).
    pub event_message: Option<String>,
}

/// An error Kopf logged while processing an object outside its handlers (see
/// [`Lifecycle::Throttled`]), read from the exception's Python `repr()`:
/// `APIClientError('<message>', {'kind': 'Status', ..., 'reason': 'Invalid', 'code': 422})`
/// (`kopf/_cogs/clients/errors.py`: `APIError(message, payload)`; the subclasses by status are
/// `APIUnauthorizedError` 401, `APIForbiddenError` 403, `APINotFoundError` 404,
/// `APIConflictError` 409, `APIClientError` other 4xx, `APIServerError` 5xx).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ApiFailure {
    /// The throttling delay as logged (`1`, `1.5`), in seconds.
    pub delay_seconds: Option<String>,
    /// The exception's class, e.g. `APIClientError`; empty when the line carries no `repr`.
    pub class: String,
    /// The API's message (the first argument), when the `repr` has one.
    pub message: Option<String>,
    /// The HTTP status: the payload's `'code'`, else implied by the class (403 for
    /// `APIForbiddenError`, ...).
    pub code: Option<u16>,
    /// The payload's `'reason'` (`Invalid`, `Forbidden`, ...).
    pub reason: Option<String>,
}

impl ApiFailure {
    /// Whether the API server refused the request (an `API*Error`, any 4xx/5xx), as opposed to
    /// another exception (a bug, a lost connection).
    pub fn is_api_error(&self) -> bool {
        self.class.starts_with("API") && self.class.ends_with("Error")
    }

    /// Whether it is the API server's annotation size limit (`metadata.annotations: Too long:
    /// must have at most 262144 bytes`, apimachinery `ValidateAnnotationsSize`): Kopf's
    /// last-handled-configuration copies the object's annotations (nolar/kopf#1087).
    pub fn annotations_too_long(&self) -> bool {
        self.message
            .as_deref()
            .is_some_and(|m| m.contains("metadata.annotations: Too long"))
    }

    /// `422 Invalid: <message>` / `APIForbiddenError: <message>` / the class alone: for evidence.
    pub fn describe(&self) -> String {
        let head = match (self.code, &self.reason) {
            (Some(c), Some(r)) => format!("{c} {r}"),
            (Some(c), None) => c.to_string(),
            (None, _) if self.class.is_empty() => "an error".to_string(),
            (None, _) => self.class.clone(),
        };
        match &self.message {
            Some(m) => format!("{head}: {m}"),
            None => head,
        }
    }
}

/// What a message says, in Kopf's vocabulary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lifecycle {
    /// `Handler 'x' is invoked.` (DEBUG, Kopf `-v` only): a run starts.
    Invoked {
        /// The handler id, exact (`accept/spec`).
        handler: String,
    },
    /// A handler's outcome line: the run ends.
    HandlerOutcome {
        /// The handler id.
        handler: String,
        /// Mapped per the Contracts.
        outcome: Outcome,
        /// The error message or reason, when the line carries one.
        detail: Option<String>,
    },
    /// `<Title> is in progress: <body>` (DEBUG): a cycle of this reason starts.
    CycleInProgress(CycleReason),
    /// `<Title> is processed: N succeeded; M failed.` (`<Title> event is processed` before 1.29).
    CycleProcessed {
        /// The cycle's reason.
        reason: CycleReason,
        /// Handlers that succeeded in the cycle.
        succeeded: u32,
        /// Handlers that failed permanently in the cycle.
        failed: u32,
    },
    /// `<Title> is superseded by <title>: ...`: the cycle goes on under another reason.
    Superseded {
        /// The reason given up.
        from: CycleReason,
        /// The reason that goes on.
        to: CycleReason,
    },
    /// `Patching failed with inconsistencies: ...` (< 1.44) / `Merge-patching finished with
    /// inconsistencies: ...` (≥ 1.44), or ours `Status was pruned by the CRD's status schema`:
    /// the API server dropped fields of a patch.
    PatchInconsistencies,
    /// `Failed to post an event...` in any of Kopf's four variants or ours.
    EventPostFailed(EventPostFailure),
    /// `Throttling for N seconds due to an unexpected error: <repr>` (ERROR, with a traceback;
    /// Kopf's per-object logger, not posted: `kopf/_core/actions/throttlers.py`, the same in
    /// 1.38 and 1.44): processing the object raised outside its handlers, in practice the
    /// final PATCH of the cycle (annotations, then status). The PATCH is lost: Kopf skips the
    /// object's events for N seconds and handles it again at its next event or restart.
    Throttled(ApiFailure),
    /// Another of Kopf's own per-object lines (diffs, patches, throttling, cycle finished):
    /// not a handler's line.
    Framework,
    /// Anything else: for an object's line, the handler's own output.
    Other,
}

/// Classifies a message (without its `[ns/name]` prefix). Ours's structured fields, when the
/// record has them, refine event-post failures: see [`event_post_failure_from_fields`].
pub fn classify(message: &str) -> Lifecycle {
    if let Some(rest) = message.strip_prefix("Handler ") {
        if let Some(lc) = python_repr(rest).and_then(|(handler, tail)| handler_line(handler, tail)) {
            return lc;
        }
        return Lifecycle::Other;
    }
    if let Some(rest) = message.strip_prefix("Failed to post an event") {
        return Lifecycle::EventPostFailed(parse_kopf_post_failure(rest));
    }
    if let Some(rest) = message.strip_prefix("Throttling for ") {
        return Lifecycle::Throttled(parse_throttled(rest));
    }
    if message.starts_with("Patching failed with inconsistencies")
        || message.starts_with("Merge-patching finished with inconsistencies")
        || message.starts_with("Status was pruned by the CRD's status schema")
    {
        return Lifecycle::PatchInconsistencies;
    }
    if let Some(lc) = cycle_line(message) {
        return lc;
    }
    const FRAMEWORK: &[&str] = &[
        "Patching with: ",
        "Something has changed, but we are not interested",
        "Handling cycle is finished",
        "Throttling is over",
        // Kopf's API client retrying a request of the object (`kopf/_cogs/clients/api.py`).
        "Request attempt #",
        "Sleeping was interrupted",
        "Sleeping for ",
        "Deleted, really deleted",
        "Deletion, but we are done with it",
        "Adding the finalizer",
        "Removing the finalizer",
        "Timer '",
        "Daemon '",
        "A Kopf finalizer is left on the object",
    ];
    if FRAMEWORK.iter().any(|p| message.starts_with(p)) {
        return Lifecycle::Framework;
    }
    Lifecycle::Other
}

fn handler_line(handler: String, tail: &str) -> Option<Lifecycle> {
    let tail = tail.strip_prefix(' ')?;
    let after = |phrase: &str| -> Option<String> {
        let rest = &tail[tail.find(phrase)? + phrase.len()..];
        rest.find(": ")
            .map(|i| rest[i + 2..].to_string())
            .filter(|s| !s.is_empty())
    };
    if tail == "is invoked." {
        return Some(Lifecycle::Invoked { handler });
    }
    let outcome = |outcome, detail| {
        Some(Lifecycle::HandlerOutcome {
            handler: handler.clone(),
            outcome,
            detail,
        })
    };
    if tail == "succeeded." {
        return outcome(Outcome::Succeeded, None);
    }
    if tail.starts_with("failed temporarily but will exceed")
        || tail.starts_with("failed temporarily but will time out")
    {
        return outcome(Outcome::Failed, after("but will"));
    }
    if let Some(d) = tail.strip_prefix("failed temporarily: ") {
        return outcome(Outcome::Retrying, Some(d.to_string()));
    }
    if let Some(d) = tail.strip_prefix("failed permanently: ") {
        return outcome(Outcome::Failed, Some(d.to_string()));
    }
    if tail.starts_with("failed with an exception and will try again") {
        return outcome(Outcome::Retrying, after("will try again"));
    }
    if tail.starts_with("failed with an exception and will stop now") {
        return outcome(Outcome::Failed, after("will stop now"));
    }
    if tail.starts_with("failed with an exception and will ignore it") {
        return outcome(Outcome::Succeeded, after("will ignore it"));
    }
    match tail {
        "failed with an exception. Will retry." => return outcome(Outcome::Retrying, None),
        "failed with an exception. Will stop." => return outcome(Outcome::Failed, None),
        "failed with an exception. Will ignore." => return outcome(Outcome::Succeeded, None),
        "is cancelled. Will escalate." => {
            return outcome(Outcome::Unknown, Some("cancelled".into()));
        }
        "has unfinished sub-handlers. Will retry soon." => {
            return outcome(Outcome::Retrying, Some("unfinished sub-handlers".into()));
        }
        _ => {}
    }
    if tail.starts_with("has exceeded ") || tail.starts_with("has timed out after ") {
        let d = tail.strip_prefix("has ").unwrap_or(tail).trim_end_matches('.');
        return outcome(Outcome::Failed, Some(d.to_string()));
    }
    // Any other wording: the Contracts' keywords decide.
    let detail = tail.find(": ").map(|i| tail[i + 2..].to_string());
    if tail.contains("will ignore") || tail.contains("Will ignore") {
        return outcome(Outcome::Succeeded, detail);
    }
    if ["permanently", "will stop", "Will stop", "exceeded", "timed out"]
        .iter()
        .any(|k| tail.contains(k))
    {
        return outcome(Outcome::Failed, detail);
    }
    if ["failed temporarily", "will try again", "Will retry", "will retry"]
        .iter()
        .any(|k| tail.contains(k))
    {
        return outcome(Outcome::Retrying, detail);
    }
    None
}

fn cycle_line(message: &str) -> Option<Lifecycle> {
    let (title, rest) = message.split_once(' ')?;
    let reason = CycleReason::from_title(title)?;
    let rest = rest.strip_prefix("event ").unwrap_or(rest);
    if let Some(counts) = rest.strip_prefix("is processed: ") {
        let (succeeded, failed) = parse_counts(counts)?;
        return Some(Lifecycle::CycleProcessed {
            reason,
            succeeded,
            failed,
        });
    }
    if rest.starts_with("is in progress") {
        return Some(Lifecycle::CycleInProgress(reason));
    }
    if rest.starts_with("diff: ") {
        return Some(Lifecycle::Framework);
    }
    if let Some(to) = rest.strip_prefix("is superseded by ") {
        let to = CycleReason::from_title(to.split(':').next()?)?;
        return Some(Lifecycle::Superseded { from: reason, to });
    }
    None
}

/// After `Throttling for `: `1 seconds due to an unexpected error: APIClientError('...', {...})`.
fn parse_throttled(rest: &str) -> ApiFailure {
    let mut f = ApiFailure::default();
    let (delay, error) = match rest.split_once(" seconds due to an unexpected error: ") {
        Some((d, e)) => (Some(d.trim()), e),
        None => (None, ""),
    };
    f.delay_seconds = delay.filter(|d| !d.is_empty()).map(str::to_string);
    let Some(open) = error.find('(') else {
        f.class = error.trim().to_string();
        return f;
    };
    let class = &error[..open];
    if !class.is_empty() && class.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.') {
        f.class = class.rsplit('.').next().unwrap_or(class).to_string();
    }
    let args = &error[open + 1..];
    let payload = match python_repr(args) {
        Some((message, tail)) => {
            f.message = Some(message);
            tail
        }
        None => args,
    };
    // The payload dict's keys, at its top level or in `details`: the last `'code': N` is the
    // top level's (it follows `details` in the API's Status).
    f.code = payload
        .match_indices("'code': ")
        .filter_map(|(i, m)| {
            let digits: String = payload[i + m.len()..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse().ok()
        })
        .last()
        .or(match f.class.as_str() {
            "APIUnauthorizedError" => Some(401),
            "APIForbiddenError" => Some(403),
            "APINotFoundError" => Some(404),
            "APIConflictError" => Some(409),
            _ => None,
        });
    f.reason = payload
        .find("'reason': ")
        .and_then(|i| python_repr(&payload[i + "'reason': ".len()..]))
        .map(|(r, _)| r);
    f
}

/// `1 succeeded; 0 failed.` → (1, 0).
fn parse_counts(s: &str) -> Option<(u32, u32)> {
    let (ok, rest) = s.split_once(" succeeded; ")?;
    let failed = rest.split(" failed").next()?;
    Some((ok.trim().parse().ok()?, failed.trim().parse().ok()?))
}

/// Kopf's variants (posting.py), after `Failed to post an event`:
/// `. Ignoring and continuing. Code: {code}. Message: {message}. Details: {details}Event: ...`,
/// `... Status: {status}. Message: {message}. Event: ...`, `... Message: {message}. Event: ...`,
/// `... Ignoring and continuing. Event: ...`. Ours: `: <note>` (fields carry the rest).
fn parse_kopf_post_failure(rest: &str) -> EventPostFailure {
    let mut f = EventPostFailure::default();
    let number_after = |key: &str| -> Option<u16> {
        let i = rest.find(key)? + key.len();
        let digits: String = rest[i..].chars().take_while(|c| c.is_ascii_digit()).collect();
        digits.parse().ok()
    };
    f.code = number_after("Code: ").or_else(|| number_after("Status: "));
    let event_at = rest.find("Event: type=");
    if let Some(i) = rest.find("Message: ") {
        let start = i + "Message: ".len();
        let end = [". Details: ", ". Event: type="]
            .iter()
            .filter_map(|sep| rest[start..].find(sep).map(|j| start + j))
            .min()
            .or(event_at)
            .unwrap_or(rest.len());
        f.message = Some(rest[start..end].to_string());
    }
    if let Some(i) = event_at {
        let ev = &rest[i + "Event: ".len()..];
        f.event_type = repr_field(ev, "type=");
        f.event_reason = repr_field(ev, "reason=");
        f.event_message = repr_field(ev, "message=");
    }
    f
}

fn repr_field(s: &str, key: &str) -> Option<String> {
    let i = s.find(key)? + key.len();
    python_repr(&s[i..]).map(|(v, _)| v)
}

/// Reads our operator's structured fields of a `Failed to post an event` line (`code`,
/// `reason`, `error` or `message`) into a failure; `None` when no such field is present.
pub fn event_post_failure_from_fields<'a>(
    fields: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Option<EventPostFailure> {
    let mut f = EventPostFailure::default();
    let mut any = false;
    for (k, v) in fields {
        match k {
            "code" => f.code = v.parse().ok(),
            "reason" => f.event_reason = Some(v.to_string()),
            "error" | "message" => f.message = Some(v.to_string()),
            "type" => f.event_type = Some(v.to_string()),
            _ => continue,
        }
        any = true;
    }
    any.then_some(f)
}

/// The `status.<field>`s a `Patching failed with inconsistencies: ...` line says the API server
/// removed, each with the first character of the value Kopf wrote (`{` a dict, `'` a string, a
/// digit, `T`/`F` a bool): Kopf 1.38 prints the diff as Python tuples
/// `(('remove', ('status', 'accept'), {'image': ...}, None), ...)` (`kopf/_cogs/clients/patching.py`).
pub fn removed_status_fields(message: &str) -> Vec<(String, char)> {
    let mut out = Vec::new();
    let mut rest = message;
    let needle = "('remove', ('status', ";
    while let Some(at) = rest.find(needle) {
        rest = &rest[at + needle.len()..];
        let Some((field, tail)) = python_repr(rest) else {
            continue;
        };
        let Some(tail) = tail.strip_prefix(")") else { continue };
        let first = tail.trim_start_matches([',', ' ']).chars().next().unwrap_or('{');
        out.push((field, first));
    }
    out
}

/// Reads a Python `repr()` of a string at the start of `s` (`'x'`, or `"x"` when it contains a
/// single quote; backslash escapes undone). Returns the value and the rest after the quote.
pub fn python_repr(s: &str) -> Option<(String, &str)> {
    let quote = s.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let mut out = String::new();
    let mut chars = s[1..].char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => match chars.next()?.1 {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                other => out.push(other),
            },
            c if c == quote => return Some((out, &s[1 + i + 1..])),
            c => out.push(c),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome_of(m: &str) -> (String, Outcome, Option<String>) {
        match classify(m) {
            Lifecycle::HandlerOutcome {
                handler,
                outcome,
                detail,
            } => (handler, outcome, detail),
            other => panic!("{m}: {other:?}"),
        }
    }

    #[test]
    fn outcomes_across_kopf_versions_map_per_the_contract() {
        let cases: &[(&str, Outcome, Option<&str>)] = &[
            ("Handler 'accept' succeeded.", Outcome::Succeeded, None),
            (
                "Handler 'accept' failed temporarily: image pull check failed",
                Outcome::Retrying,
                Some("image pull check failed"),
            ),
            (
                "Handler 'accept/spec' failed permanently: port 7200 is reserved",
                Outcome::Failed,
                Some("port 7200 is reserved"),
            ),
            (
                "Handler 'accept' failed with an exception. Will retry.",
                Outcome::Retrying,
                None,
            ),
            (
                "Handler 'accept' failed with an exception and will try again in 60 seconds: boom",
                Outcome::Retrying,
                Some("boom"),
            ),
            (
                "Handler 'accept' failed with an exception and will stop now: boom",
                Outcome::Failed,
                Some("boom"),
            ),
            (
                "Handler 'accept' failed with an exception and will stop now (it would exceed 3 retries on the next attempt): boom",
                Outcome::Failed,
                Some("boom"),
            ),
            (
                "Handler 'accept' failed with an exception and will ignore it: boom",
                Outcome::Succeeded,
                Some("boom"),
            ),
            (
                "Handler 'accept' failed with an exception. Will stop.",
                Outcome::Failed,
                None,
            ),
            (
                "Handler 'accept' failed with an exception. Will ignore.",
                Outcome::Succeeded,
                None,
            ),
            (
                "Handler 'accept' failed temporarily but will exceed 3 retries: flaky",
                Outcome::Failed,
                Some("flaky"),
            ),
            (
                "Handler 'accept' failed temporarily but will time out after 30 seconds: flaky",
                Outcome::Failed,
                Some("flaky"),
            ),
            (
                "Handler 'accept' has exceeded 3 retries.",
                Outcome::Failed,
                Some("exceeded 3 retries"),
            ),
            (
                "Handler 'accept' has timed out after 0:01:00.",
                Outcome::Failed,
                Some("timed out after 0:01:00"),
            ),
            (
                "Handler 'accept' is cancelled. Will escalate.",
                Outcome::Unknown,
                Some("cancelled"),
            ),
        ];
        for (m, want, detail) in cases {
            let (h, got, d) = outcome_of(m);
            assert!(h.starts_with("accept"), "{m}");
            assert_eq!(got, *want, "{m}");
            assert_eq!(d.as_deref(), *detail, "{m}");
        }
    }

    #[test]
    fn handler_ids_are_python_reprs() {
        assert_eq!(
            classify("Handler 'accept/spec' is invoked."),
            Lifecycle::Invoked {
                handler: "accept/spec".into()
            }
        );
        let (h, _, _) = outcome_of("Handler \"it's\" succeeded.");
        assert_eq!(h, "it's");
        assert_eq!(classify("Handler 'broken"), Lifecycle::Other);
    }

    #[test]
    fn cycles_old_and_new() {
        assert_eq!(
            classify("Creation is processed: 1 succeeded; 0 failed."),
            Lifecycle::CycleProcessed {
                reason: CycleReason::Creation,
                succeeded: 1,
                failed: 0
            }
        );
        assert_eq!(
            classify("Updating event is processed: 0 succeeded; 1 failed."),
            Lifecycle::CycleProcessed {
                reason: CycleReason::Updating,
                succeeded: 0,
                failed: 1
            }
        );
        assert_eq!(
            classify("Resuming is in progress: {'apiVersion': 'x'}"),
            Lifecycle::CycleInProgress(CycleReason::Resuming)
        );
        assert_eq!(
            classify("Resuming is superseded by updating: 0 succeeded; 0 failed; 1 left to the moment."),
            Lifecycle::Superseded {
                from: CycleReason::Resuming,
                to: CycleReason::Updating
            }
        );
        assert_eq!(
            classify("Updating diff: (('change', ('spec', 'port'), 8080, 9090),)"),
            Lifecycle::Framework
        );
        assert_eq!(CycleReason::Deletion.cause(), None);
    }

    #[test]
    fn inconsistencies_in_both_wordings() {
        for m in [
            "Patching failed with inconsistencies: (('remove', ('status',), {'phase': 'Accepted'}, None),)",
            "Merge-patching finished with inconsistencies: ()",
        ] {
            assert_eq!(classify(m), Lifecycle::PatchInconsistencies);
        }
    }

    #[test]
    fn kopf_event_post_failures_in_four_variants() {
        let real = "Failed to post an event. Ignoring and continuing. Code: 403. Message: events is forbidden: User \"system:serviceaccount:todo:microservice-operator\" cannot create resource \"events\" in API group \"\" in the namespace \"todo\". Details: {'kind': 'events'}Event: type='Normal', reason='Logging', message=\"Handler 'accept' succeeded.\".";
        let Lifecycle::EventPostFailed(f) = classify(real) else {
            panic!()
        };
        assert_eq!(f.code, Some(403));
        assert!(f.message.as_deref().unwrap().starts_with("events is forbidden"));
        assert!(f.message.as_deref().unwrap().ends_with("namespace \"todo\""));
        assert_eq!(f.event_type.as_deref(), Some("Normal"));
        assert_eq!(f.event_reason.as_deref(), Some("Logging"));
        assert_eq!(f.event_message.as_deref(), Some("Handler 'accept' succeeded."));
        let Lifecycle::EventPostFailed(f) = classify(
            "Failed to post an event. Ignoring and continuing. Status: 500. Message: Internal Server Error. Event: type='Warning', reason='ReconcileFailed', message='x'.",
        ) else {
            panic!()
        };
        assert_eq!(
            (f.code, f.message.as_deref()),
            (Some(500), Some("Internal Server Error"))
        );
        assert_eq!(f.event_reason.as_deref(), Some("ReconcileFailed"));
        let Lifecycle::EventPostFailed(f) = classify(
            "Failed to post an event. Ignoring and continuing. Message: Server disconnected. Event: type='Normal', reason='Logging', message='y'.",
        ) else {
            panic!()
        };
        assert_eq!((f.code, f.message.as_deref()), (None, Some("Server disconnected")));
        let Lifecycle::EventPostFailed(f) = classify(
            "Failed to post an event. Ignoring and continuing. Event: type='Error', reason='Logging', message='z'.",
        ) else {
            panic!()
        };
        assert_eq!(
            (f.code, f.message, f.event_type.as_deref()),
            (None, None, Some("Error"))
        );
        let ours =
            event_post_failure_from_fields([("code", "403"), ("reason", "Accepted"), ("error", "forbidden")]).unwrap();
        assert_eq!(ours.code, Some(403));
        assert_eq!(ours.event_reason.as_deref(), Some("Accepted"));
        assert_eq!(ours.message.as_deref(), Some("forbidden"));
    }

    /// The line of nolar/kopf#1087 (Kopf's final PATCH refused: the diff-base annotation copies
    /// the object's large annotations), and Kopf's other error classes.
    #[test]
    fn throttling_lines_carry_the_api_error() {
        let line = "Throttling for 1 seconds due to an unexpected error: APIClientError('Secret \"sh.helm.release.v1.crunchy-postgres-operator.v1\" is invalid: metadata.annotations: Too long: must have at most 262144 bytes', {'kind': 'Status', 'apiVersion': 'v1', 'metadata': {}, 'status': 'Failure', 'message': 'Secret \"sh.helm.release.v1.crunchy-postgres-operator.v1\" is invalid: metadata.annotations: Too long: must have at most 262144 bytes', 'reason': 'Invalid', 'details': {'name': 'sh.helm.release.v1.crunchy-postgres-operator.v1', 'kind': 'Secret', 'causes': [{'reason': 'FieldValueTooLong', 'message': 'Too long: must have at most 262144 bytes', 'field': 'metadata.annotations'}]}, 'code': 422})";
        let Lifecycle::Throttled(f) = classify(line) else {
            panic!("{:?}", classify(line))
        };
        assert_eq!(f.delay_seconds.as_deref(), Some("1"));
        assert_eq!(f.class, "APIClientError");
        assert_eq!(f.code, Some(422));
        assert_eq!(f.reason.as_deref(), Some("Invalid"));
        assert!(f.annotations_too_long() && f.is_api_error());
        assert_eq!(
            f.describe(),
            "422 Invalid: Secret \"sh.helm.release.v1.crunchy-postgres-operator.v1\" is invalid: metadata.annotations: Too long: must have at most 262144 bytes"
        );
        let Lifecycle::Throttled(f) = classify(
            "Throttling for 2 seconds due to an unexpected error: APIForbiddenError('microservices.platform.example.io \"a\" is forbidden', {'code': 403})",
        ) else {
            panic!()
        };
        assert_eq!((f.class.as_str(), f.code), ("APIForbiddenError", Some(403)));
        // Not an API error: no code, the class is named.
        let Lifecycle::Throttled(f) =
            classify("Throttling for 1.5 seconds due to an unexpected error: KeyError('spec')")
        else {
            panic!()
        };
        assert_eq!(
            (f.class.as_str(), f.code, f.message.as_deref()),
            ("KeyError", None, Some("spec"))
        );
        assert!(!f.is_api_error());
        assert_eq!(f.describe(), "KeyError: spec");
        // Cut or odd lines never panic.
        for odd in [
            "Throttling for ",
            "Throttling for x seconds due to an unexpected error: ",
            "Throttling for 1 seconds due to an unexpected error: Oops(('",
        ] {
            assert!(matches!(classify(odd), Lifecycle::Throttled(_)), "{odd}");
        }
        assert_eq!(
            classify("Throttling is over. Switching back to normal operations."),
            Lifecycle::Framework
        );
    }

    #[test]
    fn other_lines_are_other() {
        assert_eq!(classify("Accepted todo/todo-api: image=x port=1"), Lifecycle::Other);
        assert_eq!(classify("Handler 'x' did a thing."), Lifecycle::Other);
        assert_eq!(classify("Patching with: {'status': {}}"), Lifecycle::Framework);
    }
}
