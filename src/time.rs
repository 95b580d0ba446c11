//! The one place where Kubernetes times (k8s-openapi wraps `jiff::Timestamp`) become
//! `chrono::DateTime<Utc>`, and where times are formatted as RFC 3339 UTC with `Z`.

use chrono::{DateTime, SecondsFormat, TimeDelta, Utc};
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

/// A std duration as a chrono one, saturating at [`TimeDelta::MAX`] (about 292 million years)
/// rather than failing: every duration flag is at most [`crate::cli::MAX_DURATION`], which fits.
pub fn delta(d: std::time::Duration) -> TimeDelta {
    TimeDelta::from_std(d).unwrap_or(TimeDelta::MAX)
}

/// `t + d`, saturating at chrono's latest (or, for a negative `d`, earliest) time instead of
/// panicking ("DateTime + TimeDelta overflowed"): `d` may come from a flag or from cluster data
/// (a Lease's or a KopfPeering's lifetime), and "never" is the right reading of an overflow.
pub fn plus(t: DateTime<Utc>, d: TimeDelta) -> DateTime<Utc> {
    t.checked_add_signed(d).unwrap_or(if d < TimeDelta::zero() {
        DateTime::<Utc>::MIN_UTC
    } else {
        DateTime::<Utc>::MAX_UTC
    })
}

/// `t - d`, saturating like [`plus`]: `now - --since 292y` is "since the earliest time".
pub fn minus(t: DateTime<Utc>, d: TimeDelta) -> DateTime<Utc> {
    t.checked_sub_signed(d).unwrap_or(if d < TimeDelta::zero() {
        DateTime::<Utc>::MAX_UTC
    } else {
        DateTime::<Utc>::MIN_UTC
    })
}

/// `a + b` for durations, saturating at [`TimeDelta::MAX`] / [`TimeDelta::MIN`].
pub fn sum(a: TimeDelta, b: TimeDelta) -> TimeDelta {
    a.checked_add(&b).unwrap_or(if b < TimeDelta::zero() {
        TimeDelta::MIN
    } else {
        TimeDelta::MAX
    })
}

/// `TimeDelta::seconds(secs)` for seconds read from data, saturating instead of panicking
/// ("TimeDelta::seconds out of bounds") on values beyond ±i64::MAX milliseconds.
pub fn seconds(secs: i64) -> TimeDelta {
    TimeDelta::try_seconds(secs).unwrap_or(if secs < 0 { TimeDelta::MIN } else { TimeDelta::MAX })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates_instead_of_panicking() {
        let now = DateTime::parse_from_rfc3339("2026-11-29T16:21:14Z")
            .unwrap()
            .with_timezone(&Utc);
        let hour = TimeDelta::hours(1);
        assert_eq!(plus(now, hour), now + hour);
        assert_eq!(minus(now, hour), now - hour);
        assert_eq!(minus(now, TimeDelta::MAX), DateTime::<Utc>::MIN_UTC);
        assert_eq!(plus(now, TimeDelta::MAX), DateTime::<Utc>::MAX_UTC);
        assert_eq!(plus(now, TimeDelta::MIN), DateTime::<Utc>::MIN_UTC);
        assert_eq!(minus(now, TimeDelta::MIN), DateTime::<Utc>::MAX_UTC);
        assert_eq!(delta(std::time::Duration::MAX), TimeDelta::MAX);
        assert_eq!(delta(std::time::Duration::from_secs(90)), TimeDelta::seconds(90));
        assert_eq!(sum(TimeDelta::MAX, hour), TimeDelta::MAX);
        assert_eq!(sum(TimeDelta::MIN, -hour), TimeDelta::MIN);
        assert_eq!(sum(hour, hour), TimeDelta::hours(2));
        assert_eq!(seconds(i64::MAX), TimeDelta::MAX);
        assert_eq!(seconds(i64::MIN), TimeDelta::MIN);
        assert_eq!(seconds(60), TimeDelta::minutes(1));
    }

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
