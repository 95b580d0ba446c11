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
        matches!(self, LogZone::Zone { tz, .. } if *tz != TimeZone::UTC)
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
            LogZone::Unknown { value, source } => format!(
                "read as UTC, though TZ={value:?} is set in the env of {source}: it names no time zone known here, so these times may be hours off"
            ),
        }
    }

    fn key(&self) -> (u8, &str, &str) {
        match self {
            LogZone::Unset => (0, "", ""),
            LogZone::NotKnown { what } => (3, what, ""),
            LogZone::Zone { name, source, .. } => (1, name, source),
            LogZone::Unknown { value, source } => (2, value, source),
        }
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
}
