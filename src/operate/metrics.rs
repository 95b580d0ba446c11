//! The operator's metrics, served at `/metrics` in the Prometheus text format 0.0.4
//! (`text/plain; version=0.0.4`), encoded by `prometheus-client`.
//!
//! | metric | type | labels | meaning |
//! |---|---|---|---|
//! | `microservice_operator_handler_runs_total` | counter | `handler`, `cause`, `outcome` | runs of the `accept` handler; outcome `succeeded`, `failed` (permanent: invalid spec, 400/404/422 on the status write), `retrying` (the status write failed and is retried), `cancelled` (the lease was lost before the write) |
//! | `microservice_operator_handler_duration_seconds` | histogram | `handler`, `cause` | wall time of one run, status write included |
//! | `microservice_operator_event_post_failures_total` | counter | `code` | events given up on, by HTTP code (`0`: no HTTP answer), from [`EventStats`] |
//! | `microservice_operator_events_posted_total` | counter | | events stored (created or series-patched) |
//! | `microservice_operator_events_shed_total` | counter | `type`, `reason` | events never sent because their queue was full (or closed at shutdown), by the event's type (`Normal`, `Warning`) and reason (`Accepted`, ...) |
//! | `microservice_operator_leader` | gauge | | Leases this replica holds and handles under (one per watched namespace by default, one with `--lease-name`/`--lease-namespace` or `-A`; always 1 with `--standalone`) |

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use super::events::EventStats;
use crate::vocab::cause::Cause;
use crate::vocab::handler::RunOutcome;

/// The `Content-Type` of [`Metrics::encode`]'s output.
pub const CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct RunLabels {
    handler: &'static str,
    cause: &'static str,
    outcome: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct DurationLabels {
    handler: &'static str,
    cause: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct CodeLabels {
    code: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct ShedLabels {
    r#type: &'static str,
    reason: &'static str,
}

/// The registry and the metrics the controller updates.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    runs: Family<RunLabels, Counter>,
    durations: Family<DurationLabels, Histogram>,
    leader: Gauge,
}

impl Metrics {
    /// Registers every metric; event counters are read from `events` at each scrape.
    pub fn new(events: Arc<EventStats>) -> Self {
        let mut registry = Registry::with_prefix("microservice_operator");
        let runs = Family::<RunLabels, Counter>::default();
        registry.register(
            "handler_runs",
            "Runs of the handler, by cause and outcome",
            runs.clone(),
        );
        // 1 ms .. ~16 s.
        let durations = Family::<DurationLabels, Histogram>::new_with_constructor(|| {
            Histogram::new(exponential_buckets(0.001, 2.0, 15))
        });
        registry.register(
            "handler_duration_seconds",
            "Wall time of one handler run, status write included",
            durations.clone(),
        );
        let leader = Gauge::default();
        registry.register(
            "leader",
            "Leases this replica holds (one per watched namespace by default; 1 with --standalone): it handles the objects they govern",
            leader.clone(),
        );
        registry.register_collector(Box::new(EventCollector(events)));
        Metrics {
            registry,
            runs,
            durations,
            leader,
        }
    }

    /// Counts one run of `handler` and observes its duration.
    pub fn handler_run(&self, handler: &'static str, cause: Cause, outcome: RunOutcome, elapsed: Duration) {
        self.runs
            .get_or_create(&RunLabels {
                handler,
                cause: cause.as_str(),
                outcome: outcome.as_str(),
            })
            .inc();
        self.durations
            .get_or_create(&DurationLabels {
                handler,
                cause: cause.as_str(),
            })
            .observe(elapsed.as_secs_f64());
    }

    /// Runs counted so far for this cause and outcome.
    pub fn runs(&self, handler: &'static str, cause: Cause, outcome: RunOutcome) -> u64 {
        self.runs
            .get_or_create(&RunLabels {
                handler,
                cause: cause.as_str(),
                outcome: outcome.as_str(),
            })
            .get()
    }

    /// Counts one Lease more (`true`) or less held by this replica on the leader gauge. With one
    /// Lease per watched namespace a replica may hold several: the gauge counts them.
    pub fn set_leader(&self, leading: bool) {
        self.leader.inc_by(if leading { 1 } else { -1 });
    }

    /// The exposition text (see [`CONTENT_TYPE`]).
    pub fn encode(&self) -> String {
        let mut out = String::new();
        prometheus_client::encoding::prometheus_text::encode(&mut out, &self.registry)
            .expect("writing to a String does not fail");
        out
    }
}

/// Exposes [`EventStats`] (owned by the event poster) at scrape time.
#[derive(Debug)]
struct EventCollector(Arc<EventStats>);

impl Collector for EventCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let failed: Vec<(u16, u64)> = self
            .0
            .failed_by_code
            .lock()
            .expect("stats lock")
            .iter()
            .map(|(code, n)| (*code, *n))
            .collect();
        let probe = ConstCounter::new(0u64);
        let mut family = encoder.encode_descriptor(
            "event_post_failures",
            "Events given up on, by HTTP code (0: no HTTP answer)",
            None,
            probe.metric_type(),
        )?;
        for (code, n) in failed {
            let labels = CodeLabels { code: code.to_string() };
            ConstCounter::new(n).encode(family.encode_family(&labels)?)?;
        }
        let posted = ConstCounter::new(self.0.posted.load(Ordering::Relaxed));
        posted.encode(encoder.encode_descriptor(
            "events_posted",
            "Events stored (created or series-patched)",
            None,
            posted.metric_type(),
        )?)?;
        let mut family = encoder.encode_descriptor(
            "events_shed",
            "Events never sent because their queue was full (or closed at shutdown), by event type and reason",
            None,
            probe.metric_type(),
        )?;
        for ((type_, reason), n) in self.0.shed_counts() {
            let labels = ShedLabels {
                r#type: type_.as_str(),
                reason,
            };
            ConstCounter::new(n).encode(family.encode_family(&labels)?)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operate::events::EventType;

    #[test]
    fn exposition_has_every_metric_in_prometheus_text() {
        let stats = Arc::new(EventStats::default());
        stats.failed_by_code.lock().unwrap().insert(403, 2);
        stats.posted.store(5, Ordering::Relaxed);
        for _ in 0..3 {
            stats.count_shed(EventType::Normal, "Accepted");
        }
        let metrics = Metrics::new(stats);
        metrics.handler_run("accept", Cause::Create, RunOutcome::Succeeded, Duration::from_millis(3));
        metrics.handler_run("accept", Cause::Update, RunOutcome::Retrying, Duration::from_millis(20));
        metrics.set_leader(true);
        let text = metrics.encode();
        for line in [
            "# TYPE microservice_operator_handler_runs_total counter",
            "microservice_operator_handler_runs_total{handler=\"accept\",cause=\"create\",outcome=\"succeeded\"} 1",
            "microservice_operator_handler_runs_total{handler=\"accept\",cause=\"update\",outcome=\"retrying\"} 1",
            "# TYPE microservice_operator_handler_duration_seconds histogram",
            "microservice_operator_handler_duration_seconds_bucket{handler=\"accept\",cause=\"create\",le=\"0.004\"} 1",
            "microservice_operator_handler_duration_seconds_bucket{handler=\"accept\",cause=\"create\",le=\"0.002\"} 0",
            "microservice_operator_handler_duration_seconds_count{handler=\"accept\",cause=\"create\"} 1",
            "# TYPE microservice_operator_event_post_failures_total counter",
            "microservice_operator_event_post_failures_total{code=\"403\"} 2",
            "microservice_operator_events_posted_total 5",
            "# TYPE microservice_operator_events_shed_total counter",
            "microservice_operator_events_shed_total{type=\"Normal\",reason=\"Accepted\"} 3",
            "# TYPE microservice_operator_leader gauge",
            "microservice_operator_leader 1",
        ] {
            assert!(text.lines().any(|l| l == line), "missing {line:?} in:\n{text}");
        }
        assert!(!text.contains("# EOF"), "Prometheus text, not OpenMetrics");
        assert_eq!(metrics.runs("accept", Cause::Create, RunOutcome::Succeeded), 1);
    }
}
