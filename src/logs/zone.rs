//! The time zone of an operator's log times that carry none (Kopf's `full` format writes
//! `asctime`, the container's local wall time without an offset), read from the operator
//! container's `TZ` environment variable.
//!
//! What the C library does with `TZ` (glibc's `tzset`, which CPython's `time.localtime` and so
//! Python's `logging` use): unset → the image's `/etc/localtime` (UTC in the usual Python
//! images, none at all in a scratch image); empty → UTC; `Area/City` or `:Area/City` → that
//! zone's file under `/usr/share/zoneinfo` of the image; otherwise a POSIX TZ string such as
//! `CST-8` or `EST5EDT,M3.2.0,M11.1.0`. An image without tzdata falls back to UTC even for
//! `TZ=Asia/Taipei`: nothing in the cluster's evidence says whether the image has it, so an
//! answer read in a named zone says it assumes the zone's file is there.
//!
//! Zones come from the IANA database bundled into the binary (jiff's `tzdb-bundle-always`),
//! not the machine's own, so a bundle gets the same answer on every laptop.

use chrono::{DateTime, NaiveDateTime, Utc};
use jiff::tz::{TimeZone, TimeZoneDatabase};

/// How an operator container's local log times are read.
#[derive(Debug, Clone)]
pub enum LogZone {
    /// `TZ` is not set in the container's env: read as UTC, the usual default of a container
    /// image.
    Unset,
    /// Where the log was written is not known (a file given with `--log-file`, a Pod not in
    /// the evidence): read as UTC, and said to be an assumption.
    NotKnown {
        /// What was read, e.g. `--log-file op.log`.
        what: String,
    },
    /// `TZ` names a zone known here: read in it.
    Zone {
        /// The zone as named (`Asia/Taipei`, `CST-8`), without a leading `:`.
        name: String,
        /// Where the value was found, e.g. `container operator of Pod ops/op-5f9-x`.
        source: String,
        /// The zone itself.
        tz: TimeZone,
    },
    /// The log's own cycles line up with the API server's times of their writes at one fixed
    /// offset ([`calibrate`]): read at that offset. Used when `TZ` says nothing usable, and
    /// when it disagrees with what the writes show (`conflict` then names it).
    Calibrated {
        /// Local time minus UTC, in seconds (Taipei: 28800).
        offset_seconds: i32,
        /// Cycles whose write lined up at that offset.
        matched: usize,
        /// Where the log comes from.
        what: String,
        /// What `TZ` said instead, when it said something else (`TZ=Asia/Taipei (UTC+08:00) in
        /// the env of ...`).
        conflict: Option<String>,
    },
    /// The log's cycles line up with their writes at several offsets ([`calibrate`]): the
    /// times cannot be placed; read as the env says (or UTC) and said to be in conflict.
    Disagreeing {
        /// Each offset seen, in seconds, with how many cycles lined up at it.
        offsets: Vec<(i32, usize)>,
        /// Where the log comes from.
        what: String,
    },
    /// `TZ` is set to something that names no zone known here: read as UTC, and said to be
    /// possibly hours off.
    Unknown {
        /// The value as set.
        value: String,
        /// Where the value was found.
        source: String,
    },
}

impl PartialEq for LogZone {
    /// Two zones are the same when they read the same `TZ` value from the same place.
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl LogZone {
    /// From the value of `TZ` (`None` when it is unset) found at `source` (glibc's reading; see
    /// the module docs).
    pub fn from_tz(value: Option<&str>, source: &str) -> LogZone {
        let Some(value) = value else {
            return LogZone::Unset;
        };
        let name = value.strip_prefix(':').unwrap_or(value).trim();
        let zone = |name: &str, tz: TimeZone| LogZone::Zone {
            name: name.to_string(),
            source: source.to_string(),
            tz,
        };
        if name.is_empty() {
            return zone("UTC", TimeZone::UTC);
        }
        if let Ok(tz) = bundled().get(name) {
            return zone(name, tz);
        }
        // A POSIX TZ string needs a digit (the offset) after its abbreviation; `Foo/Bar` is a
        // file name that is not in the database.
        if !name.contains('/')
            && let Ok(tz) = TimeZone::posix(name)
        {
            return zone(name, tz);
        }
        LogZone::Unknown {
            value: value.to_string(),
            source: source.to_string(),
        }
    }

    /// The UTC time of a wall time read in this zone. A wall time that a daylight-saving
    /// change skips or repeats is read as the earlier offset would have it (jiff's
    /// `compatible` disambiguation, as RFC 5545 and Temporal do).
    pub fn to_utc(&self, wall: NaiveDateTime) -> DateTime<Utc> {
        if let LogZone::Calibrated { offset_seconds, .. } = self {
            let utc = wall.and_utc();
            return utc
                .checked_sub_signed(chrono::TimeDelta::seconds(i64::from(*offset_seconds)))
                .unwrap_or(utc);
        }
        let LogZone::Zone { tz, .. } = self else {
            return wall.and_utc();
        };
        let civil = jiff::civil::DateTime::new(
            i16::try_from(chrono::Datelike::year(&wall)).unwrap_or(i16::MAX),
            chrono::Datelike::month(&wall) as i8,
            chrono::Datelike::day(&wall) as i8,
            chrono::Timelike::hour(&wall) as i8,
            chrono::Timelike::minute(&wall) as i8,
            chrono::Timelike::second(&wall) as i8,
            chrono::Timelike::nanosecond(&wall).min(999_999_999) as i32,
        );
        civil
            .ok()
            .and_then(|civil| tz.to_ambiguous_timestamp(civil).compatible().ok())
            .and_then(|ts| DateTime::from_timestamp(ts.as_second(), ts.subsec_nanosecond().max(0) as u32))
            .unwrap_or_else(|| wall.and_utc())
    }

    /// Whether times are shifted from UTC at all (a zone other than UTC).
    pub fn shifts(&self) -> bool {
        match self {
            LogZone::Zone { tz, .. } => *tz != TimeZone::UTC,
            LogZone::Calibrated { offset_seconds, .. } => *offset_seconds != 0,
            _ => false,
        }
    }

    /// The offset from UTC (seconds) this zone has at `wall`, when it is a zone.
    pub fn offset_at(&self, wall: NaiveDateTime) -> Option<i32> {
        match self {
            LogZone::Zone { .. } => {
                let utc = self.to_utc(wall);
                i32::try_from((wall.and_utc() - utc).num_seconds()).ok()
            }
            LogZone::Calibrated { offset_seconds, .. } => Some(*offset_seconds),
            LogZone::Unset | LogZone::NotKnown { .. } => Some(0),
            LogZone::Disagreeing { .. } | LogZone::Unknown { .. } => None,
        }
    }

    /// `TZ=Asia/Taipei in the env of container ...`: what the env said, for a conflict.
    pub fn env_words(&self) -> Option<String> {
        match self {
            LogZone::Zone { name, source, .. } => Some(format!("TZ={name} in the env of {source}")),
            LogZone::Unknown { value, source } => Some(format!("TZ={value:?} in the env of {source}")),
            _ => None,
        }
    }

    /// How the local times were read, for the note an answer prints once: `read as UTC: ...`,
    /// `read in Asia/Taipei (TZ=Asia/Taipei in ...) ...`.
    pub fn describe(&self) -> String {
        match self {
            LogZone::Unset => "read as UTC, as the operator container sets no TZ".to_string(),
            LogZone::NotKnown { what } => format!(
                "read as UTC: the time zone {what} was written in is not known (Kopf's full format writes local time without a zone)"
            ),
            LogZone::Zone { name, source, .. } => format!(
                "read in {name} (TZ={name} in the env of {source}; if the image has no time zone data, Python wrote UTC instead)"
            ),
            LogZone::Calibrated {
                offset_seconds,
                matched,
                what,
                conflict,
            } => {
                let at = format!(
                    "read at UTC{}: {} in {what} {} with the API server's managedFields time of {} write only at that offset",
                    offset_words(*offset_seconds),
                    crate::text::count(*matched as u64, "handling cycle"),
                    if *matched == 1 { "lines up" } else { "line up" },
                    if *matched == 1 { "its" } else { "their" },
                );
                match conflict {
                    Some(env) => format!(
                        "{at}, in conflict with {env} (an image without time zone data writes UTC whatever TZ says)"
                    ),
                    None => at,
                }
            }
            LogZone::Disagreeing { offsets, what } => format!(
                "cannot be placed: the handling cycles in {what} line up with their managedFields writes at different offsets ({}), so these times may be hours off",
                offsets
                    .iter()
                    .map(|(o, n)| format!("UTC{} for {}", offset_words(*o), crate::text::count(*n as u64, "cycle")))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            LogZone::Unknown { value, source } => format!(
                "read as UTC, though TZ={value:?} is set in the env of {source}: it names no time zone known here, so these times may be hours off"
            ),
        }
    }

    fn key(&self) -> (u8, String, String) {
        let own = |a: &str, b: &str| (a.to_string(), b.to_string());
        let (kind, (a, b)) = match self {
            LogZone::Unset => (0, own("", "")),
            LogZone::NotKnown { what } => (3, own(what, "")),
            LogZone::Zone { name, source, .. } => (1, own(name, source)),
            LogZone::Unknown { value, source } => (2, own(value, source)),
            LogZone::Calibrated {
                offset_seconds, what, ..
            } => (4, (offset_seconds.to_string(), what.clone())),
            LogZone::Disagreeing { offsets, what } => (5, (format!("{offsets:?}"), what.clone())),
        };
        (kind, a, b)
    }
}

/// `+08:00`, `-07:00`, `+05:45`: an offset in seconds as RFC 3339 writes it.
pub fn offset_words(seconds: i32) -> String {
    let sign = if seconds < 0 { '-' } else { '+' };
    let minutes = seconds.unsigned_abs() / 60;
    format!("{sign}{:02}:{:02}", minutes / 60, minutes % 60)
}

/// One handling cycle's end as a log wrote it, beside the API server's time of the write that
/// cycle made: Kopf patches `*/last-handled-configuration` when a creation or update cycle
/// ends, and the object's managedFields entry of that annotation carries the API server's time
/// of its latest write (1 s resolution).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Anchor {
    /// The logged time of the object's latest `Creation/Updating is processed` line, its
    /// zoneless wall time as written.
    pub logged: NaiveDateTime,
    /// The managedFields time of the annotation's latest write.
    pub written: DateTime<Utc>,
}

/// What a log's anchors say about the offset its zoneless times were written at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Calibration {
    /// No anchor lined up with a whole offset (none given, or the log does not hold the cycle
    /// that made each write).
    NoAnchor,
    /// Every anchor that lined up did at this offset (seconds, local minus UTC).
    Offset {
        /// Local minus UTC.
        seconds: i32,
        /// How many anchors lined up.
        matched: usize,
    },
    /// Anchors lined up at different offsets: each offset with its count, most first.
    Disagree(Vec<(i32, usize)>),
}

/// Time zones are whole quarter hours from UTC (Nepal's +05:45 included).
const OFFSET_STEP_SECONDS: i64 = 15 * 60;
/// The widest real offsets: UTC-12:00 to UTC+14:00.
const OFFSET_RANGE_SECONDS: (i64, i64) = (-12 * 3600, 14 * 3600);

/// The offset a log's zoneless times were written at, from `anchors`: an anchor lines up when
/// its logged time plus a whole quarter-hour offset in UTC-12..+14 is within `skew` of its
/// write (the log line and the write are the same moment; managedFields has 1 s resolution).
/// An anchor that lines up with no offset says nothing (the log lacks the cycle that wrote
/// last, e.g. it was rotated away) and is not counted. Our own calibration rather than a
/// crate's: it is the evidence model (which API times stand for which log line).
pub fn calibrate(anchors: &[Anchor], skew: std::time::Duration) -> Calibration {
    let skew = i64::try_from(skew.as_millis()).unwrap_or(i64::MAX);
    let mut seen: Vec<(i32, usize)> = Vec::new();
    for a in anchors {
        let diff_ms = (a.logged.and_utc() - a.written).num_milliseconds();
        let step_ms = OFFSET_STEP_SECONDS * 1000;
        let nearest = (diff_ms as f64 / step_ms as f64).round() as i64 * step_ms;
        let in_range = (OFFSET_RANGE_SECONDS.0 * 1000..=OFFSET_RANGE_SECONDS.1 * 1000).contains(&nearest);
        if !in_range || (diff_ms - nearest).abs() > skew {
            continue;
        }
        let Ok(offset) = i32::try_from(nearest / 1000) else {
            continue;
        };
        match seen.iter_mut().find(|(o, _)| *o == offset) {
            Some((_, n)) => *n += 1,
            None => seen.push((offset, 1)),
        }
    }
    seen.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    match seen.as_slice() {
        [] => Calibration::NoAnchor,
        [(seconds, matched)] => Calibration::Offset {
            seconds: *seconds,
            matched: *matched,
        },
        _ => Calibration::Disagree(seen),
    }
}

/// The IANA database compiled into the binary (module docs: the same answer everywhere).
fn bundled() -> &'static TimeZoneDatabase {
    static DB: std::sync::OnceLock<TimeZoneDatabase> = std::sync::OnceLock::new();
    DB.get_or_init(TimeZoneDatabase::bundled)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wall(s: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S%.f").unwrap()
    }

    #[test]
    fn named_zones_and_posix_strings_shift_the_wall_time() {
        let taipei = LogZone::from_tz(Some("Asia/Taipei"), "container operator");
        assert_eq!(
            taipei.to_utc(wall("2026-11-29 17:14:08.047")).to_rfc3339(),
            "2026-11-29T09:14:08.047+00:00"
        );
        assert!(taipei.shifts());
        // glibc's leading colon, and a POSIX string (8 hours east is `-8`).
        for value in [":Asia/Taipei", "CST-8"] {
            let zone = LogZone::from_tz(Some(value), "c");
            assert_eq!(
                zone.to_utc(wall("2026-11-29 17:14:08")).to_rfc3339(),
                "2026-11-29T09:14:08+00:00",
                "{value}"
            );
        }
        // Los Angeles in November is UTC-8, in July UTC-7 (daylight saving).
        let la = LogZone::from_tz(Some("America/Los_Angeles"), "c");
        assert_eq!(
            la.to_utc(wall("2026-11-29 09:00:00")).to_rfc3339(),
            "2026-11-29T17:00:00+00:00"
        );
        assert_eq!(
            la.to_utc(wall("2026-07-01 09:00:00")).to_rfc3339(),
            "2026-07-01T16:00:00+00:00"
        );
        // The hour that the autumn change repeats is read with the earlier offset (PDT).
        assert_eq!(
            la.to_utc(wall("2026-11-01 01:30:00")).to_rfc3339(),
            "2026-11-01T08:30:00+00:00"
        );
    }

    #[test]
    fn unset_empty_and_unknown_values_read_as_utc_and_say_so() {
        let at = wall("2026-11-29 17:14:08");
        let unset = LogZone::from_tz(None, "c");
        assert_eq!(unset, LogZone::Unset);
        assert_eq!(unset.to_utc(at).to_rfc3339(), "2026-11-29T17:14:08+00:00");
        assert!(!unset.shifts());
        let empty = LogZone::from_tz(Some(""), "c");
        assert!(matches!(&empty, LogZone::Zone { name, .. } if name == "UTC"));
        assert!(!empty.shifts());
        for value in ["Mars/Olympus_Mons", "not a zone", "Asia/"] {
            let zone = LogZone::from_tz(Some(value), "container operator of Pod ops/op");
            assert!(matches!(zone, LogZone::Unknown { .. }), "{value}: {zone:?}");
            assert_eq!(zone.to_utc(at).to_rfc3339(), "2026-11-29T17:14:08+00:00");
            assert!(zone.describe().contains("may be hours off"), "{}", zone.describe());
        }
        assert!(
            LogZone::from_tz(Some("Asia/Taipei"), "container operator of Pod ops/op")
                .describe()
                .starts_with("read in Asia/Taipei (TZ=Asia/Taipei in the env of container operator of Pod ops/op")
        );
    }

    #[test]
    fn out_of_range_wall_times_do_not_panic() {
        let zone = LogZone::from_tz(Some("Asia/Taipei"), "c");
        for s in [
            "9999-12-31 23:59:59.999999999",
            "0001-01-01 00:00:00",
            "-0100-01-01 00:00:00",
        ] {
            if let Ok(w) = NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S%.f") {
                let _ = zone.to_utc(w);
            }
        }
    }

    fn anchor(logged: &str, written: &str) -> Anchor {
        Anchor {
            logged: wall(logged),
            written: DateTime::parse_from_rfc3339(written).unwrap().with_timezone(&Utc),
        }
    }

    #[test]
    fn calibration_finds_the_one_offset_the_writes_line_up_at() {
        let skew = std::time::Duration::from_secs(2);
        assert_eq!(calibrate(&[], skew), Calibration::NoAnchor);
        // Taipei: logged 17:14:08 local, written 09:14:09Z (1 s resolution, within the skew).
        let taipei = [
            anchor("2026-11-29 17:14:08.047", "2026-11-29T09:14:09Z"),
            anchor("2026-11-29 17:20:00.500", "2026-11-29T09:20:01Z"),
        ];
        assert_eq!(
            calibrate(&taipei, skew),
            Calibration::Offset {
                seconds: 28800,
                matched: 2
            }
        );
        // Kathmandu is a quarter hour off the hour; Los Angeles is behind UTC.
        let nepal = [anchor("2026-11-29 15:00:00", "2026-11-29T09:15:00Z")];
        assert_eq!(
            calibrate(&nepal, skew),
            Calibration::Offset {
                seconds: 20700,
                matched: 1
            }
        );
        assert_eq!(offset_words(20700), "+05:45");
        let la = [anchor("2026-11-29 01:00:00", "2026-11-29T09:00:01Z")];
        assert_eq!(
            calibrate(&la, skew),
            Calibration::Offset {
                seconds: -28800,
                matched: 1
            }
        );
        assert_eq!(offset_words(-28800), "-08:00");
        // A write the log's cycle did not make (its cycle rotated away) lines up with nothing.
        let unrelated = [anchor("2026-11-29 17:14:08", "2026-11-29T09:21:30Z")];
        assert_eq!(calibrate(&unrelated, skew), Calibration::NoAnchor);
        // Beyond UTC-12..+14 is no time zone.
        let days = [anchor("2026-11-29 17:00:00", "2026-11-28T17:00:00Z")];
        assert_eq!(calibrate(&days, skew), Calibration::NoAnchor);
        // Two offsets: said, most first.
        let both = [
            taipei[0],
            taipei[1],
            anchor("2026-11-29 10:00:00", "2026-11-29T10:00:00Z"),
        ];
        assert_eq!(calibrate(&both, skew), Calibration::Disagree(vec![(28800, 2), (0, 1)]));
    }

    #[test]
    fn a_calibrated_offset_places_the_wall_time_and_says_how() {
        let zone = LogZone::Calibrated {
            offset_seconds: 28800,
            matched: 3,
            what: "the log of op-1/operator".into(),
            conflict: Some("TZ=UTC in the env of container operator".into()),
        };
        assert_eq!(
            zone.to_utc(wall("2026-11-29 17:14:08")).to_rfc3339(),
            "2026-11-29T09:14:08+00:00"
        );
        assert_eq!(zone.offset_at(wall("2026-11-29 17:14:08")), Some(28800));
        assert!(zone.shifts());
        assert_eq!(
            zone.describe(),
            "read at UTC+08:00: 3 handling cycles in the log of op-1/operator line up with the API server's managedFields time of their write only at that offset, in conflict with TZ=UTC in the env of container operator (an image without time zone data writes UTC whatever TZ says)"
        );
    }
}
