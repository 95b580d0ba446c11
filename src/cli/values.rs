//! The parsers of flag values: kubectl's durations (with its range), counts of lines and runs,
//! and the operator's concurrency. Errors say what was expected; clap's message around them
//! names the flag and the input.

use std::time::Duration;

/// A duration of at least one second (`--interval`, `--event-ttl`): zero would poll without a
/// pause or call every failure expired.
pub fn parse_duration_at_least_1s(input: &str) -> Result<Duration, String> {
    let d = parse_duration(input)?;
    if d < Duration::from_secs(1) {
        return Err(format!("expected at least 1s, got {input:?}"));
    }
    Ok(d)
}

/// A count of lines (`--log-lines`, the kubelet's `tailLines`): a whole number, 0 or more, that
/// fits the API's int64. The error says so (clap's own range error prints `0..9223372036854775807`).
pub fn parse_count(input: &str) -> Result<i64, String> {
    input
        .parse::<i64>()
        .ok()
        .filter(|n| *n >= 0)
        .ok_or_else(|| "expected a whole number, 0 or more (at most 9223372036854775807)".to_string())
}

/// `logs --tail LINES`, as `kubectl logs --tail`: a number of lines, 0 or more, or -1 for all
/// (the kubelet's `tailLines`, an int64).
pub fn parse_tail_lines(input: &str) -> Result<i64, String> {
    input
        .trim()
        .parse::<i64>()
        .ok()
        .filter(|n| *n >= -1)
        .ok_or_else(|| "expected a number of lines ≥ 0 (at most 9223372036854775807), or -1 for all".to_string())
}

/// `logs --last RUNS`: a number of runs, 1 or more. Zero is refused rather than read as "print
/// nothing": `--last 0` could only print an empty answer beside a report of runs it did not show
/// (kubectl's own count flags, `--tail`, `--max-log-requests`, refuse what cannot mean anything).
pub fn parse_runs(input: &str) -> Result<usize, String> {
    input
        .trim()
        .parse::<usize>()
        .ok()
        .filter(|n| *n >= 1)
        .ok_or_else(|| "expected a number of runs ≥ 1".to_string())
}

/// `operate --max-concurrent N`: how many objects at once, 1 to 65535.
pub fn parse_concurrency(input: &str) -> Result<u16, String> {
    input
        .trim()
        .parse::<u16>()
        .ok()
        .filter(|n| *n >= 1)
        .ok_or_else(|| "expected a whole number from 1 to 65535".to_string())
}

/// The longest duration a flag accepts: Go's `time.Duration` maximum (2^63 − 1 ns, 2562047h47m16s,
/// about 292 years), the limit kubectl's own duration flags have. Anything this long added to or
/// subtracted from a timestamp of years 0–9999 stays inside chrono's range (±262143 years), and
/// it converts to a `chrono::TimeDelta` without loss.
pub const MAX_DURATION: Duration = Duration::new(9_223_372_036, 854_775_807);

/// Parses kubectl-style durations: `10s`, `1m`, `1m30s`, `500ms`, `1.5h`, `2h`, Go's `ns`, `us`
/// (`µs`), or a bare number of seconds; at most [`MAX_DURATION`].
///
/// Our own code rather than a crate's (humantime, go-parse-duration) because the accepted shape
/// must be kubectl's (bare seconds included, Go's units) with kubectl's range, and it is
/// computed exactly in whole nanoseconds (no float rounding, no overflow on any input).
/// Errors say what was expected; clap's message around them names the flag and the input
/// (`invalid value '9999999999999h' for '--since <DURATION>': expected at most ...`).
pub fn parse_duration(input: &str) -> Result<Duration, String> {
    let s = input.trim();
    let expected = || "expected a duration such as 10s, 1m, 1m30s, 500ms or 2h".to_string();
    let too_long = || "expected at most 2562047h (about 292 years, kubectl's limit)".to_string();
    if s.is_empty() {
        return Err(expected());
    }
    if s.starts_with('-') {
        // Taken as the flag's value (`allow_hyphen_values`), as kubectl's pflag takes it, rather
        // than clap's "unexpected argument '-5'".
        return Err("expected a duration ≥ 0 such as 10s, 1m, 1m30s, 500ms or 2h".to_string());
    }
    let max_nanos = MAX_DURATION.as_nanos();
    // A bare number is seconds.
    let s_owned;
    let s = if s.bytes().all(|b| b.is_ascii_digit()) {
        s_owned = format!("{s}s");
        s_owned.as_str()
    } else {
        s
    };
    let mut total: u128 = 0;
    let mut rest = s;
    while !rest.is_empty() {
        let number_len = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .unwrap_or(rest.len());
        let (number, after) = rest.split_at(number_len);
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        if (whole.is_empty() && fraction.is_empty()) || fraction.contains('.') {
            return Err(expected());
        }
        let unit_len = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, after) = after.split_at(unit_len);
        let unit_nanos: u128 = match unit {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return Err(expected()),
        };
        // Whole part: digit by digit, stopping as soon as it exceeds the maximum.
        let mut part: u128 = 0;
        for digit in whole.bytes() {
            part = part * 10 + u128::from(digit - b'0');
            if part * unit_nanos > max_nanos {
                return Err(too_long());
            }
        }
        part *= unit_nanos;
        // Fraction: digits beyond the 18th are below a nanosecond even in hours.
        let mut scale: u128 = 1;
        let mut numerator: u128 = 0;
        for digit in fraction.bytes().take(18) {
            numerator = numerator * 10 + u128::from(digit - b'0');
            scale *= 10;
        }
        part += numerator * unit_nanos / scale;
        total += part;
        if total > max_nanos {
            return Err(too_long());
        }
        rest = after;
    }
    let secs = u64::try_from(total / 1_000_000_000).map_err(|_| too_long())?;
    Ok(Duration::new(secs, (total % 1_000_000_000) as u32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_like_kubectl() {
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2h"), Ok(Duration::from_secs(7200)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        assert_eq!(
            parse_duration("ten"),
            Err("expected a duration such as 10s, 1m, 1m30s, 500ms or 2h".into())
        );
        assert!(parse_duration("5x").is_err());
        assert!(parse_duration("").is_err());
        assert_eq!(parse_duration("1.5h"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("0.1s"), Ok(Duration::from_millis(100)));
        assert_eq!(parse_duration("1h2m3s4ms5us6ns"), Ok(Duration::new(3723, 4_005_006)));
        assert_eq!(parse_duration("2µs"), Ok(Duration::from_micros(2)));
        assert_eq!(
            parse_duration("-5s"),
            Err("expected a duration ≥ 0 such as 10s, 1m, 1m30s, 500ms or 2h".into())
        );
        for bad in ["1h30", ".s", "1..2s", "1.2.3s", "s", "1e5s", "10 s", "NaN", "inf"] {
            let err = parse_duration(bad).unwrap_err();
            assert!(err.starts_with("expected a duration such as"), "{bad}: {err}");
        }
    }

    /// Go's `time.Duration` range, as kubectl's flags: the maximum parses, one nanosecond more
    /// does not, and no input overflows on the way (these panicked in `Duration::from_secs_f64`).
    #[test]
    fn durations_stop_at_kubectls_maximum() {
        assert_eq!(parse_duration("2562047h47m16.854775807s"), Ok(MAX_DURATION));
        assert_eq!(parse_duration("9223372036854775807ns"), Ok(MAX_DURATION));
        assert_eq!(parse_duration("9223372036"), Ok(Duration::from_secs(9_223_372_036)));
        for bad in [
            "2562047h47m16.854775808s",
            "2562048h",
            "9223372037",
            "99999999999999999999",
            "99999999999999999999s",
            "99999999999999999999h",
            "9999999999999h",
            "1h2562047h",
            "340282366920938463463374607431768211456ns",
        ] {
            assert_eq!(
                parse_duration(bad),
                Err("expected at most 2562047h (about 292 years, kubectl's limit)".into()),
                "{bad}"
            );
        }
        // MAX_DURATION fits chrono, and stays in range around any RFC 3339 timestamp.
        let max = chrono::TimeDelta::from_std(MAX_DURATION).unwrap();
        let last = chrono::DateTime::parse_from_rfc3339("9999-12-31T23:59:59Z").unwrap();
        let first = chrono::DateTime::parse_from_rfc3339("0000-01-01T00:00:00Z").unwrap();
        assert!(last.checked_add_signed(max).is_some() && first.checked_sub_signed(max).is_some());
    }
}
