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

/// How [`human`] writes a duration. The commands' outputs pin each style, so they differ where
/// their readers expect different things (a kubectl column, a log's elapsed time, an age in a
/// sentence, a TTL as its flag is written).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DurationStyle {
    /// kubectl's age column (`k8s.io/apimachinery/pkg/util/duration.HumanDuration`): `45s`,
    /// `119s`, `5m3s`, `10m`, `3h10m`, `30h`, `2d5h`, `400d`, `3y20d`. Negative is `0s`.
    Kubectl,
    /// Hours, minutes and seconds, zero units left out and seconds dropped beside hours: `5s`,
    /// `10m`, `1m30s`, `2h`, `2h10m` (a handler run's length, `--since`). Negative is `0s`.
    Compact,
    /// The two largest units, the smaller kept when zero (`1m0s`). A unit leads from `lead_at`
    /// of it: 1 gives `59s`, `1m0s`, `59m59s`, `1h0m`; 2 gives `119s`, `2m0s`, `119m59s`,
    /// `2h0m`. Days lead from one day when `days`, else hours go on (`30h5m`). A negative
    /// duration below the first threshold is written in seconds (`-5s`).
    Pair {
        /// How many of a unit make it the leading one (1 or 2).
        lead_at: i64,
        /// Whether days are a unit.
        days: bool,
    },
    /// The largest unit that measures it exactly: `1h`, `90m`, `5s` (a duration as its flag is
    /// written, e.g. `--event-ttl`).
    Exact,
}

/// `d` in words, in `style`, to whole seconds (sub-seconds are dropped). The one duration
/// formatter of the crate: tables' ages (`render::age`), log runs, Lease and deletion ages, the
/// event TTL.
pub fn human(d: TimeDelta, style: DurationStyle) -> String {
    let s = d.num_seconds();
    match style {
        DurationStyle::Kubectl => kubectl_age(s.max(0)),
        DurationStyle::Compact => match (s.max(0) / 3600, (s.max(0) % 3600) / 60, s.max(0) % 60) {
            (0, 0, s) => format!("{s}s"),
            (0, m, 0) => format!("{m}m"),
            (0, m, s) => format!("{m}m{s}s"),
            (h, 0, 0) => format!("{h}h"),
            (h, m, _) => format!("{h}h{m}m"),
        },
        DurationStyle::Pair { lead_at, days } => match s {
            s if s < lead_at * 60 => format!("{s}s"),
            s if s < lead_at * 3600 => format!("{}m{}s", s / 60, s % 60),
            s if !days || s < lead_at * 86400 => format!("{}h{}m", s / 3600, (s % 3600) / 60),
            s => format!("{}d{}h", s / 86400, (s % 86400) / 3600),
        },
        DurationStyle::Exact if s % 3600 == 0 => format!("{}h", s / 3600),
        DurationStyle::Exact if s % 60 == 0 => format!("{}m", s / 60),
        DurationStyle::Exact => format!("{s}s"),
    }
}

/// [`DurationStyle::Kubectl`] of `seconds` (not negative).
fn kubectl_age(seconds: i64) -> String {
    if seconds < 120 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        return match seconds % 60 {
            0 => format!("{minutes}m"),
            s => format!("{minutes}m{s}s"),
        };
    }
    if minutes < 180 {
        return format!("{minutes}m");
    }
    let hours = minutes / 60;
    if hours < 8 {
        return match minutes % 60 {
            0 => format!("{hours}h"),
            m => format!("{hours}h{m}m"),
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        return match hours % 24 {
            0 => format!("{}d", hours / 24),
            h => format!("{}d{h}h", hours / 24),
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        return match (hours / 24) % 365 {
            0 => format!("{}y", hours / 24 / 365),
            d => format!("{}y{d}d", hours / 24 / 365),
        };
    }
    format!("{}y", hours / 24 / 365)
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

    /// Each style as its output pins it.
    #[test]
    fn durations_in_each_style() {
        use DurationStyle::*;
        let h = |secs: i64, style| human(TimeDelta::seconds(secs), style);
        assert_eq!(h(303, Kubectl), "5m3s");
        assert_eq!(h(30 * 3600, Kubectl), "30h");
        assert_eq!(h(90, Compact), "1m30s");
        assert_eq!(h(7200, Compact), "2h");
        assert_eq!(h(7260 + 5, Compact), "2h1m");
        let lease = Pair {
            lead_at: 2,
            days: false,
        };
        assert_eq!(h(-5, lease), "-5s");
        assert_eq!(h(119, lease), "119s");
        assert_eq!(h(120, lease), "2m0s");
        assert_eq!(h(30 * 3600 + 300, lease), "30h5m");
        let deletion = Pair { lead_at: 1, days: true };
        assert_eq!(h(59, deletion), "59s");
        assert_eq!(h(192, deletion), "3m12s");
        assert_eq!(h(3600, deletion), "1h0m");
        assert_eq!(h(86400 + 7200, deletion), "1d2h");
        assert_eq!(h(3600, Exact), "1h");
        assert_eq!(h(5400, Exact), "90m");
        assert_eq!(h(5, Exact), "5s");
    }
}
