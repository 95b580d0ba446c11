//! What Kopf's log wording says about its version. Without a `kopf==X.Y` pin or an image tag,
//! the operator's own lines still bound the version, because Kopf reworded some of them
//! (from Kopf's git history):
//!
//! | line | version |
//! |---|---|
//! | `Creation event is processed: ...` (also Updating/Deletion/Resuming) | < 1.29 |
//! | `Creation is processed: ...` | ≥ 1.29 |
//! | `Handler 'x' failed with an exception. Will retry.` / `Will stop.` / `Will ignore.` | < 1.40 |
//! | `... failed with an exception and will try again in N seconds` / `will stop now` / `will ignore it`, `... failed temporarily but will exceed` / `but will time out` | ≥ 1.40 |
//! | `Patching failed with inconsistencies: ...` | < 1.44 |
//! | `Merge-patching finished with inconsistencies: ...` | ≥ 1.44 |
//!
//! A range decides Kopf's posting default only when it lies wholly on one side of 1.44 (log
//! records posted before, not from 1.44 unless `settings.posting.loggers`).

/// A `major.minor` version.
pub type Version = (u32, u32);

/// Kopf 1.44: from here log records are not posted as events unless `posting.loggers` says so.
pub const LOGGERS_OFF_BY_DEFAULT: Version = (1, 44);

/// Which lines bound the version, as (message prefix or fragment, at least, below).
const MARKERS: &[(&str, Option<Version>, Option<Version>)] = &[
    (" event is processed: ", None, Some((1, 29))),
    (" is processed: ", Some((1, 29)), None),
    ("failed with an exception. Will ", None, Some((1, 40))),
    ("failed with an exception and will ", Some((1, 40)), None),
    ("failed temporarily but will ", Some((1, 40)), None),
    ("Patching failed with inconsistencies", None, Some((1, 44))),
    ("Merge-patching finished with inconsistencies", Some((1, 44)), None),
];

/// The version range the wording of an operator's lines allows, with the lines that bound it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VersionRange {
    /// The highest lower bound seen (inclusive), and the line that set it.
    pub at_least: Option<(Version, String)>,
    /// The lowest upper bound seen (exclusive), and the line that set it.
    pub below: Option<(Version, String)>,
}

impl VersionRange {
    /// The range the `lines` (message, citation) allow. Lines of other programs match nothing.
    pub fn from_lines<'a>(lines: impl IntoIterator<Item = (&'a str, String)>) -> VersionRange {
        let mut range = VersionRange::default();
        for (message, cite) in lines {
            // `Creation event is processed` also contains ` is processed: `: the older form wins.
            let Some((_, at_least, below)) = MARKERS.iter().find(|(m, _, _)| message.contains(m)) else {
                continue;
            };
            if let Some(v) = at_least
                && range.at_least.as_ref().is_none_or(|(seen, _)| v > seen)
            {
                range.at_least = Some((*v, cite.clone()));
            }
            if let Some(v) = below
                && range.below.as_ref().is_none_or(|(seen, _)| v < seen)
            {
                range.below = Some((*v, cite));
            }
        }
        range
    }

    /// Nothing bounds it.
    pub fn is_empty(&self) -> bool {
        self.at_least.is_none() && self.below.is_none()
    }

    /// The bounds contradict each other (logs of two Kopf versions, e.g. across an upgrade).
    pub fn is_contradictory(&self) -> bool {
        matches!((&self.at_least, &self.below), (Some((low, _)), Some((high, _))) if low >= high)
    }

    /// Whether this Kopf posts log records (handler errors among them) by default: `Some` only
    /// when the whole range is below or at/above 1.44.
    pub fn posts_log_records_by_default(&self) -> Option<bool> {
        if self.is_contradictory() {
            return None;
        }
        match (&self.at_least, &self.below) {
            (_, Some((high, _))) if *high <= LOGGERS_OFF_BY_DEFAULT => Some(true),
            (Some((low, _)), _) if *low >= LOGGERS_OFF_BY_DEFAULT => Some(false),
            _ => None,
        }
    }

    /// `≥ 1.29, < 1.44`.
    pub fn bounds(&self) -> String {
        let show = |(a, b): Version| format!("{a}.{b}");
        let low = self.at_least.as_ref().map(|(v, _)| format!("≥ {}", show(*v)));
        let high = self.below.as_ref().map(|(v, _)| format!("< {}", show(*v)));
        low.into_iter().chain(high).collect::<Vec<_>>().join(", ")
    }

    /// `Kopf ≥ 1.29, < 1.44 (from its log wording: LINE; LINE)`, citing the bounding lines.
    pub fn describe(&self) -> String {
        let lines: Vec<&str> = self
            .at_least
            .iter()
            .chain(&self.below)
            .map(|(_, cite)| cite.as_str())
            .collect();
        let contradiction = if self.is_contradictory() {
            " — contradictory: logs of two Kopf versions"
        } else {
            ""
        };
        format!(
            "Kopf {} (from its log wording{contradiction}: {})",
            self.bounds(),
            lines.join("; ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(messages: &[&str]) -> VersionRange {
        VersionRange::from_lines(
            messages
                .iter()
                .enumerate()
                .map(|(i, m)| (*m, format!("line {}", i + 1))),
        )
    }

    #[test]
    fn real_kopf_1_38_lines_bound_it_below_1_44_only_with_an_old_form() {
        // From ../shared/fixtures/kopf-1.38-real: 1.38 speaks the ≥ 1.29 forms only.
        let r = range(&[
            "Handler 'accept' succeeded.",
            "Creation is processed: 1 succeeded; 0 failed.",
            "Handler 'accept' failed temporarily: registry unreachable",
        ]);
        assert_eq!(r.at_least.as_ref().map(|(v, _)| *v), Some((1, 29)));
        assert_eq!(r.below, None);
        assert_eq!(
            r.posts_log_records_by_default(),
            None,
            "1.29 or later: either side of 1.44"
        );
        // Its "Patching failed with inconsistencies" line puts it below 1.44: it posts.
        let r = range(&[
            "Creation is processed: 1 succeeded; 0 failed.",
            "Patching failed with inconsistencies: (('remove', ('status', 'observedGeneration'), 1, None),)",
        ]);
        assert_eq!(r.posts_log_records_by_default(), Some(true));
        assert_eq!(
            r.describe(),
            "Kopf ≥ 1.29, < 1.44 (from its log wording: line 1; line 2)"
        );
    }

    #[test]
    fn newer_and_older_wordings() {
        let r = range(&["Merge-patching finished with inconsistencies: ..."]);
        assert_eq!(r.posts_log_records_by_default(), Some(false));
        let r = range(&["Handler 'accept' failed with an exception and will try again in 60 seconds: boom"]);
        assert_eq!(r.at_least.as_ref().map(|(v, _)| *v), Some((1, 40)));
        assert_eq!(r.posts_log_records_by_default(), None);
        let r = range(&[
            "Handler 'accept' failed with an exception. Will retry.",
            "Creation event is processed: 0 succeeded; 1 failed.",
        ]);
        assert_eq!(r.below.as_ref().map(|(v, _)| *v), Some((1, 29)));
        assert_eq!(r.posts_log_records_by_default(), Some(true));
        assert!(range(&["Accepted todo/todo-api: image=x port=1"]).is_empty());
    }

    /// The messages of a real Kopf log (`full` format) in tests/fixtures/kopf-wording.
    fn real(file: &str) -> VersionRange {
        let path = format!("{}/tests/fixtures/kopf-wording/{file}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(path).unwrap();
        // The records' messages, read with Kopf's own `full` format (the object prefix cut off,
        // as the log pipeline does).
        let messages: Vec<(String, String)> = text
            .lines()
            .enumerate()
            .filter_map(|(n, line)| {
                let full = crate::kopf::logs::parse_full(line)?;
                let (_, message) = crate::kopf::logs::split_object_prefix(full.message);
                Some((message.to_string(), format!("line {}", n + 1)))
            })
            .collect();
        VersionRange::from_lines(messages.iter().map(|(m, at)| (m.as_str(), at.clone())))
    }

    #[test]
    fn real_logs_of_kopf_1_38_and_1_44() {
        // Captured 2026-11-29 from kopf 1.38.0 and 1.44.6 against a real API server whose CRD
        // status schema pruned `status.phase`.
        let old = real("kopf-1.38.0-status-pruned.log");
        assert_eq!(old.bounds(), "≥ 1.29, < 1.44");
        assert_eq!(old.posts_log_records_by_default(), Some(true));
        let new = real("kopf-1.44.6-status-pruned.log");
        assert_eq!(new.bounds(), "≥ 1.44");
        assert_eq!(new.posts_log_records_by_default(), Some(false));
        // A handler exception in 1.44.6 speaks the 1.40 wording: not enough to decide posting.
        let exception = real("kopf-1.44.6-exception.log");
        assert_eq!(exception.bounds(), "≥ 1.40");
        assert_eq!(exception.posts_log_records_by_default(), None);
    }

    #[test]
    fn an_upgrade_mixes_wordings_and_decides_nothing() {
        let r = range(&[
            "Patching failed with inconsistencies: ...",
            "Merge-patching finished with inconsistencies: ...",
        ]);
        assert!(r.is_contradictory());
        assert_eq!(r.posts_log_records_by_default(), None);
        assert!(r.describe().contains("contradictory"));
    }
}
