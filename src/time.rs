//! The one place where Kubernetes times (k8s-openapi wraps `jiff::Timestamp`) become
//! `chrono::DateTime<Utc>`, and where times are formatted as RFC 3339 UTC with `Z`.

use chrono::{DateTime, SecondsFormat, Utc};
use k8s_openapi::jiff::Timestamp;

/// Converts a k8s-openapi timestamp to chrono, keeping nanoseconds.
pub fn from_jiff(ts: Timestamp) -> DateTime<Utc> {
    DateTime::from_timestamp(ts.as_second(), ts.subsec_nanosecond() as u32)
        .expect("a Kubernetes timestamp is within chrono's range")
}

/// Converts a chrono time to the timestamp k8s-openapi expects.
pub fn to_jiff(t: DateTime<Utc>) -> Timestamp {
    Timestamp::new(t.timestamp(), t.timestamp_subsec_nanos() as i32).expect("a chrono UTC time is within jiff's range")
}

/// `2026-11-29T16:21:14Z`: RFC 3339, UTC, whole seconds (metav1.Time's resolution).
pub fn rfc3339_seconds(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// `2026-11-29T16:21:14.101Z`: RFC 3339, UTC, milliseconds (log lines).
pub fn rfc3339_millis(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_jiff() {
        let t = DateTime::parse_from_rfc3339("2026-11-29T16:21:14.101234567Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(from_jiff(to_jiff(t)), t);
        assert_eq!(rfc3339_seconds(t), "2026-11-29T16:21:14Z");
        assert_eq!(rfc3339_millis(t), "2026-11-29T16:21:14.101Z");
    }
}
