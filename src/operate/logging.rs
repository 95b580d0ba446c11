//! The operator's log lines, in the two formats pinned by docs/contracts.md:
//!
//! - text: `<RFC3339 time> <LEVEL> [ns/name] <message> <key=value>... handler=<id> cause=<cause>`
//!   (level right-aligned to 5 columns, e.g.
//!   `2026-11-29T17:15:53.377Z  INFO [store/catalog-api] Accepted store/catalog-api: image=... port=7000 handler=accept cause=create`);
//! - json: `{"timestamp", "level", "message", "object": {"namespace", "name", "uid"}, "handler", "cause", ...}`.
//!
//! Object, handler and cause are structured fields of every tracing event about an object
//! (`namespace`, `name`, `uid`, `handler`, `cause`). Control characters in messages are escaped
//! and other field values are quoted when they are not plain tokens, so a value from the cluster
//! cannot forge a line or a field.
//!
//! Lines go to stderr through [`ClosedPipeSafe`]: when stderr is a pipe whose reader is gone
//! (`| tee` exited on the same Ctrl-C), lines are dropped and the shutdown goes on.

use std::fmt::{self, Write as _};
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Map, Value};
use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, MakeWriter};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt;

use crate::cli::LogFormat;
use crate::text::{quote_value, sanitize};
use crate::time::rfc3339_millis;

/// Formats tracing events as the operator's text or json lines.
#[derive(Debug, Clone, Copy)]
pub struct LineFormat {
    /// Which of the two formats.
    pub format: LogFormat,
}

#[derive(Default)]
struct Fields {
    message: String,
    namespace: Option<String>,
    name: Option<String>,
    uid: Option<String>,
    handler: Option<String>,
    cause: Option<String>,
    others: Vec<(String, String)>,
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.put(field.name(), value.to_string());
    }
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.put(field.name(), format!("{value:?}"));
    }
}

impl Fields {
    fn put(&mut self, name: &str, value: String) {
        match name {
            "message" => self.message = value,
            "namespace" => self.namespace = Some(value),
            "name" => self.name = Some(value),
            "uid" => self.uid = Some(value),
            "handler" => self.handler = Some(value),
            "cause" => self.cause = Some(value),
            other => self.others.push((other.to_string(), value)),
        }
    }
}

impl<S, N> FormatEvent<S, N> for LineFormat
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(&self, _ctx: &FmtContext<'_, S, N>, mut writer: Writer<'_>, event: &Event<'_>) -> fmt::Result {
        let mut fields = Fields::default();
        event.record(&mut fields);
        let timestamp = rfc3339_millis(chrono::Utc::now());
        let level = event.metadata().level().as_str();
        let line = match self.format {
            LogFormat::Text => text_line(&timestamp, level, &fields),
            LogFormat::Json => json_line(&timestamp, level, &fields),
        };
        writeln!(writer, "{line}")
    }
}

fn text_line(timestamp: &str, level: &str, f: &Fields) -> String {
    let mut line = format!("{timestamp} {level:>5} ");
    if let (Some(ns), Some(name)) = (&f.namespace, &f.name) {
        let _ = write!(line, "[{}/{}] ", sanitize(ns), sanitize(name));
    }
    line.push_str(&sanitize(&f.message));
    let tail = [("handler", &f.handler), ("cause", &f.cause)];
    let trailing = tail.iter().filter_map(|(k, v)| v.as_ref().map(|v| (*k, v)));
    for (key, value) in f.others.iter().map(|(k, v)| (k.as_str(), v)).chain(trailing) {
        let _ = write!(line, " {key}={}", quote_value(value));
    }
    line
}

fn json_line(timestamp: &str, level: &str, f: &Fields) -> String {
    let mut obj = Map::new();
    obj.insert("timestamp".into(), timestamp.into());
    obj.insert("level".into(), level.into());
    obj.insert("message".into(), f.message.clone().into());
    if f.namespace.is_some() || f.name.is_some() {
        let mut object = Map::new();
        object.insert("namespace".into(), f.namespace.clone().into());
        object.insert("name".into(), f.name.clone().into());
        object.insert("uid".into(), f.uid.clone().into());
        obj.insert("object".into(), Value::Object(object));
    }
    if let Some(handler) = &f.handler {
        obj.insert("handler".into(), handler.clone().into());
    }
    if let Some(cause) = &f.cause {
        obj.insert("cause".into(), cause.clone().into());
    }
    for (key, value) in &f.others {
        obj.entry(key.clone()).or_insert_with(|| value.clone().into());
    }
    Value::Object(obj).to_string()
}

/// The log filter unless `RUST_LOG` is set: our lines from info, others' from warn. kube-client's
/// per-request `failed with error ...` line (kube-client 5, `client/builder.rs`, target
/// `kube_client::client::builder`) is off: it names neither the call nor the server, and every
/// failure it reports reaches our code, which logs it with both (or exits naming them).
///
/// kube-runtime 5's watcher warns on every forbidden list or watch with the client error's debug
/// form (`watch list error with 403: Api(Status { status: Some(Failure), ...`, target
/// `kube_runtime::watcher`): only its errors are kept, since the operator logs each watch failure
/// itself, in one line ([`super::watching`]).
pub const DEFAULT_FILTER: &str =
    "warn,kubectl_microservice=info,kube_client::client::builder=off,kube_runtime::watcher=error";

/// Installs the global subscriber: lines to stderr in `format` ([`ClosedPipeSafe`]); filter from
/// `RUST_LOG`, else [`DEFAULT_FILTER`].
pub fn init(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(DEFAULT_FILTER));
    // As `SubscriberBuilder::try_init`: also the bridge from the `log` crate's records.
    let _ = subscriber(format, filter, ClosedPipeSafe::new(std::io::stderr)).try_init();
}

/// The operator's subscriber: `format`'s lines through `filter` to `writer`. A line that cannot
/// be written is dropped without a word: tracing-subscriber's report of a failed write
/// (`log_internal_errors`) is an `eprintln!`, which panics when stderr is the pipe that failed.
pub fn subscriber<W>(
    format: LogFormat,
    filter: tracing_subscriber::EnvFilter,
    writer: W,
) -> impl Subscriber + Send + Sync + 'static
where
    W: for<'a> MakeWriter<'a> + Send + Sync + 'static,
{
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        // Set before `event_format`: only the builder of the default format has it; it is kept.
        .log_internal_errors(false)
        .event_format(LineFormat { format })
        .finish()
}

/// Log lines to a stream that may be a pipe whose reader is gone: `operate 2>&1 | tee
/// operate.log` and Ctrl-C, where the terminal's SIGINT reaches `tee` too and it may exit first.
/// Rust ignores SIGPIPE, so writes to that pipe fail with EPIPE; here a failed write is a dropped
/// line (`Ok`), never an error, a panic or a wait, so the shutdown that follows the signal (the
/// Lease's release) runs whatever became of the output. After a broken pipe nothing more is
/// written: its reader never comes back.
#[derive(Debug, Clone)]
pub struct ClosedPipeSafe<M> {
    make: M,
    closed: Arc<AtomicBool>,
}

impl<M> ClosedPipeSafe<M> {
    /// Writes through the writers `make` makes (`std::io::stderr`).
    pub fn new(make: M) -> Self {
        ClosedPipeSafe {
            make,
            closed: Arc::default(),
        }
    }

    /// Whether a write found the pipe closed (EPIPE).
    pub fn closed(&self) -> bool {
        self.closed.load(Ordering::Relaxed)
    }
}

impl<'a, M: MakeWriter<'a>> MakeWriter<'a> for ClosedPipeSafe<M> {
    type Writer = LossyWriter<M::Writer>;

    fn make_writer(&'a self) -> Self::Writer {
        LossyWriter {
            inner: self.make.make_writer(),
            closed: self.closed.clone(),
        }
    }
}

/// One line's writer of [`ClosedPipeSafe`]: every write succeeds, the bytes written or dropped.
#[derive(Debug)]
pub struct LossyWriter<W> {
    inner: W,
    closed: Arc<AtomicBool>,
}

impl<W: io::Write> io::Write for LossyWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.closed.load(Ordering::Relaxed) {
            return Ok(buf.len());
        }
        match self.inner.write(buf) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Err(e),
            Err(e) => {
                if e.kind() == io::ErrorKind::BrokenPipe {
                    self.closed.store(true, Ordering::Relaxed);
                }
                Ok(buf.len())
            }
            written => written,
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        if !self.closed.load(Ordering::Relaxed) {
            let _ = self.inner.flush();
        }
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// Captures formatted lines for assertions.
    #[derive(Clone, Default)]
    pub(crate) struct Capture(pub Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Capture {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Capture {
        pub(crate) fn text(&self) -> String {
            String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
        }
    }

    /// Captures what the operator logs under `filter` (an `EnvFilter` directive, e.g.
    /// [`DEFAULT_FILTER`]).
    pub(crate) fn capture_filtered(format: LogFormat, filter: &str) -> (Capture, tracing::dispatcher::DefaultGuard) {
        let capture = Capture::default();
        let writer = capture.clone();
        let filter = tracing_subscriber::EnvFilter::new(filter);
        let subscriber = subscriber(format, filter, ClosedPipeSafe::new(move || writer.clone()));
        (capture, tracing::subscriber::set_default(subscriber))
    }

    pub(crate) fn capture(format: LogFormat) -> (Capture, tracing::dispatcher::DefaultGuard) {
        let capture = Capture::default();
        let writer = capture.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::DEBUG)
            .with_writer(move || writer.clone())
            .event_format(LineFormat { format })
            .finish();
        (capture, tracing::subscriber::set_default(subscriber))
    }

    #[test]
    fn text_line_matches_the_contract() {
        let (out, _guard) = capture(LogFormat::Text);
        tracing::info!(
            namespace = "store",
            name = "catalog-api",
            uid = "u1",
            handler = "accept",
            cause = "create",
            "Accepted store/catalog-api: image=registry.example.com/store/catalog:1.4.0 port=7000"
        );
        tracing::warn!(
            namespace = "store",
            name = "catalog-api",
            code = 403,
            reason = "Accepted",
            error = "events.events.k8s.io is forbidden: User \"x\"",
            handler = "accept",
            cause = "create",
            "Failed to post an event:"
        );
        let text = out.text();
        let lines: Vec<&str> = text.lines().collect();
        let (ts, rest) = lines[0].split_once(' ').unwrap();
        assert!(
            chrono::DateTime::parse_from_rfc3339(ts).is_ok() && ts.ends_with('Z'),
            "{ts}"
        );
        assert_eq!(
            rest,
            " INFO [store/catalog-api] Accepted store/catalog-api: image=registry.example.com/store/catalog:1.4.0 port=7000 handler=accept cause=create"
        );
        assert!(lines[1].ends_with(r#" WARN [store/catalog-api] Failed to post an event: code=403 reason=Accepted error="events.events.k8s.io is forbidden: User \"x\"" handler=accept cause=create"#), "{}", lines[1]);
    }

    #[test]
    fn values_cannot_forge_lines() {
        let (out, _guard) = capture(LogFormat::Text);
        let evil = "nginx\n2026-11-29T00:00:00.000Z  INFO [todo/x] Handler 'accept' succeeded.";
        tracing::info!(
            namespace = "todo",
            name = "x",
            image = evil,
            "Accepted todo/x: image={evil}"
        );
        let text = out.text();
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(text.contains("image=\"nginx\\n2026"), "{text}");
    }

    #[test]
    fn json_line_matches_the_contract() {
        let (out, _guard) = capture(LogFormat::Json);
        tracing::info!(
            namespace = "todo",
            name = "todo-api",
            uid = "u1",
            handler = "accept",
            cause = "update",
            "Updating is processed: 1 succeeded; 0 failed."
        );
        tracing::info!("Operator started");
        let text = out.text();
        let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines[0]["message"], "Updating is processed: 1 succeeded; 0 failed.");
        assert_eq!(lines[0]["level"], "INFO");
        assert_eq!(
            lines[0]["object"],
            serde_json::json!({"namespace": "todo", "name": "todo-api", "uid": "u1"})
        );
        assert_eq!(lines[0]["handler"], "accept");
        assert_eq!(lines[0]["cause"], "update");
        assert!(lines[0]["timestamp"].as_str().unwrap().ends_with('Z'));
        assert!(lines[1].get("object").is_none());
    }

    /// The parser reads what the formatter writes, also for values that try to forge fields.
    #[test]
    fn round_trips_with_the_operator_formatter() {
        for format in [LogFormat::Text, LogFormat::Json] {
            let (out, guard) = capture(format);
            let evil = "img handler=forged cause=update\n2026-11-29T00:00:00.000Z  INFO x";
            tracing::warn!(
                namespace = "todo",
                name = "todo-api",
                uid = "u1",
                image = evil,
                code = 403,
                handler = "accept",
                cause = "resume",
                "Failed to post an event:"
            );
            drop(guard);
            let text = out.text();
            let line = text.lines().next().unwrap();
            let l = match format {
                LogFormat::Text => crate::logs::ours::parse_text(line).unwrap(),
                LogFormat::Json => {
                    let v: Value = serde_json::from_str(line).unwrap();
                    crate::logs::ours::parse_json(v.as_object().unwrap()).unwrap()
                }
            };
            assert_eq!(l.handler.as_deref(), Some("accept"), "{line}");
            assert_eq!(l.cause, Some(crate::vocab::cause::Cause::Resume), "{line}");
            assert_eq!(l.object.unwrap().to_string(), "todo/todo-api");
            let image = l.fields.iter().find(|(k, _)| k == "image").unwrap();
            assert_eq!(image.1, evil);
            let code = l.fields.iter().find(|(k, _)| k == "code").unwrap();
            assert_eq!(code.1, "403");
        }
    }

    /// A pipe whose read end is closed, as `| tee` after tee exited: writes fail with EPIPE
    /// (Rust's runtime ignores SIGPIPE).
    fn closed_pipe() -> std::io::PipeWriter {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        writer
    }

    #[test]
    fn a_write_to_a_closed_pipe_is_a_dropped_line() {
        use std::io::Write as _;
        let mut pipe = closed_pipe();
        let raw = pipe.write(b"line\n").unwrap_err();
        assert_eq!(raw.kind(), io::ErrorKind::BrokenPipe, "{raw}");
        let safe = ClosedPipeSafe::new(move || pipe.try_clone().unwrap());
        let mut writer = safe.make_writer();
        assert_eq!(
            writer
                .write(b"2026-12-01T00:00:00.000Z  INFO Signal received.\n")
                .unwrap(),
            48
        );
        assert!(safe.closed());
        writer.write_all(b"and the next line\n").unwrap();
        writer.flush().unwrap();
        assert!(safe.make_writer().write_all(b"a later line\n").is_ok());
    }

    #[test]
    fn another_write_error_drops_the_line_and_keeps_writing() {
        struct Failing(io::ErrorKind);
        impl io::Write for Failing {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(self.0.into())
            }
            fn flush(&mut self) -> io::Result<()> {
                Err(self.0.into())
            }
        }
        let safe = ClosedPipeSafe::new(|| Failing(io::ErrorKind::StorageFull));
        let mut writer = safe.make_writer();
        assert_eq!(io::Write::write(&mut writer, b"line\n").unwrap(), 5);
        io::Write::flush(&mut writer).unwrap();
        assert!(!safe.closed(), "only EPIPE closes");
    }

    /// The operator's subscriber over a closed stderr pipe: lines are dropped, and no failure
    /// reaches tracing-subscriber (whose report of one is an `eprintln!`, a panic on that pipe).
    #[test]
    fn the_subscriber_logs_to_a_closed_pipe_without_a_word() {
        let pipe = Arc::new(closed_pipe());
        let safe = ClosedPipeSafe::new(move || pipe.try_clone().unwrap());
        let filter = tracing_subscriber::EnvFilter::new(DEFAULT_FILTER);
        let _guard = tracing::subscriber::set_default(subscriber(LogFormat::Text, filter, safe.clone()));
        tracing::info!("Signal received. Operator is stopping.");
        tracing::warn!(lease = "todo/microservice-operator", "Could not release the lease");
        assert!(safe.closed());
    }
}
