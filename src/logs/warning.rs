//! Python's `warnings` output in a log: `PATH:LINE: CATEGORY: MESSAGE` (the module's
//! `formatwarning`, written to stderr), then the source line it points at, indented
//! (`  warnings.warn(...)`). Kopf 1.38 prints one at start when run with neither
//! `--namespace` nor `--all-namespaces` (`kopf/_core/reactor/running.py:180`, a
//! `FutureWarning`: [`KOPF_CLUSTER_WIDE_FALLBACK`]). The record parser reads each as one
//! [`super::Format::PythonWarning`] record, never as lines of no format.

/// The words of Kopf's warning that it switched to the cluster-wide mode because neither
/// namespaces nor the cluster-wide flag were given (Kopf 1.38 `kopf/_core/reactor/running.py`).
pub const KOPF_CLUSTER_WIDE_FALLBACK: &str = "Absence of either namespaces or cluster-wide flag will become an error soon. For now, switching to the cluster-wide mode for backward compatibility.";

/// One warning's header line, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PythonWarning<'a> {
    /// The file that warned (`/usr/local/lib/python3.11/site-packages/kopf/_core/reactor/running.py`).
    pub path: &'a str,
    /// Its line.
    pub line: u64,
    /// The category's name (`FutureWarning`, `DeprecationWarning`, `UserWarning`, ...).
    pub category: &'a str,
    /// The message.
    pub message: &'a str,
}

/// Reads `body` (a line without its kubelet prefix) as a warning's header: `PATH:LINE:
/// CATEGORY: MESSAGE`, PATH without spaces, LINE digits, CATEGORY a Python name ending in
/// `Warning`. `None` for anything else.
pub fn parse(body: &str) -> Option<PythonWarning<'_>> {
    let (place, rest) = body.split_once(": ")?;
    let (path, line) = place.rsplit_once(':')?;
    if path.is_empty()
        || path.contains(char::is_whitespace)
        || line.is_empty()
        || !line.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let (category, message) = rest.split_once(": ")?;
    let name_chars = category.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_');
    if !name_chars || !category.ends_with("Warning") || !category.as_bytes()[0].is_ascii_alphabetic() {
        return None;
    }
    Some(PythonWarning {
        path,
        line: line.parse().ok()?,
        category,
        message,
    })
}

/// Whether `message` is Kopf's warning that it switched to the cluster-wide mode.
pub fn is_kopf_cluster_wide_fallback(message: &str) -> bool {
    message.trim_end() == KOPF_CLUSTER_WIDE_FALLBACK
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Kopf 1.38's line, as a Pod of `kopf run` without a scope flag printed it (the i18live
    /// captures).
    #[test]
    fn kopfs_fallback_warning_is_read() {
        let w = parse("/usr/local/lib/python3.11/dist-packages/kopf/_core/reactor/running.py:180: FutureWarning: Absence of either namespaces or cluster-wide flag will become an error soon. For now, switching to the cluster-wide mode for backward compatibility.").unwrap();
        assert_eq!(
            (w.path, w.line, w.category),
            (
                "/usr/local/lib/python3.11/dist-packages/kopf/_core/reactor/running.py",
                180,
                "FutureWarning"
            )
        );
        assert!(is_kopf_cluster_wide_fallback(w.message));
        let d = parse("/src/op.py:3: DeprecationWarning: namespace= is deprecated; use namespaces=[...]").unwrap();
        assert_eq!((d.line, d.category), (3, "DeprecationWarning"));
        assert!(!is_kopf_cluster_wide_fallback(d.message));
        for not in [
            "  warnings.warn(\"Absence of either namespaces\"",
            "ValueError: bad",
            "kopf.Warning: x",
            "/a b/c.py:1: UserWarning: x",
            "/a.py:x: UserWarning: x",
            "/a.py:1: NotAWarn: x",
            "[2026-12-02 07:03:27,725] kopf._core.reactor.r [DEBUG   ] Starting Kopf 1.38.0.",
        ] {
            assert!(parse(not).is_none(), "{not}");
        }
    }
}
