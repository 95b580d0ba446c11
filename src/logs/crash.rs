//! A process's crash in its log: a Python traceback that no log record holds (Kopf failing to
//! import its handlers, `kopf run` raising before logging is set up: `Traceback (most recent
//! call last):` ... `SyntaxError: invalid syntax`), or our own binary's exit on an error
//! (`error: MESSAGE`, then `hint: ...`, as src/main.rs writes it) or a Rust panic (`thread
//! 'main' panicked at FILE:LINE:COL:` then the message). The record parser reads each as one
//! [`super::Format::Crash`] record rather than as lines of no format, and [`exception_of`]
//! says what it ended with (`Record::crash`), for `operator-not-running` to quote.

/// Whether `body` (a line without its kubelet prefix, not a record header) starts a crash:
/// Python's traceback header, our `error: ` exit line, or a Rust panic's first line.
pub fn starts_crash(body: &str) -> bool {
    body.starts_with("Traceback (most recent call last):")
        || body.starts_with("error: ")
        || (body.starts_with("thread '") && body.contains("' panicked at "))
}

/// What a crash says it died of, as one line, from its first line (`header`, without the
/// kubelet prefix) and the lines after it (`rest`): a traceback's last exception line
/// (`SyntaxError: invalid syntax`), with the last `File "...", line N` it names before it (the
/// place, for a SyntaxError the file that does not parse); our `error: ...` line; a panic's
/// message and place. `None` for a traceback cut before its exception line.
pub fn exception_of(header: &str, rest: &[&str]) -> Option<String> {
    let header = header.trim();
    if header.starts_with("error: ") {
        return Some(header.to_string());
    }
    if header.starts_with("thread '") {
        let place = header
            .split("' panicked at ")
            .nth(1)
            .unwrap_or("")
            .trim_end_matches(':');
        let message = rest.first().map(|m| m.trim()).filter(|m| !m.is_empty());
        return Some(match message {
            Some(m) => format!("panicked at {place}: {m}"),
            None => format!("panicked at {place}"),
        });
    }
    let exception = rest[exception_index(rest)?].trim_end();
    let place = rest
        .iter()
        .rev()
        .map(|l| l.trim())
        .find(|l| l.starts_with("File \"") && !l.starts_with("File \"<frozen"));
    Some(match place {
        Some(p) => format!("{exception} ({p})"),
        None => exception.to_string(),
    })
}

/// Where in `rest` (a crash record's continuation lines) a Python traceback's exception line is:
/// the last line that is not indented, when it reads as an exception (`SyntaxError: ...`,
/// `kopf...Error: ...`), not the `Traceback (most recent call last):` that opens it. `None` for
/// a record without one (our own `error: ...` and panics put what they died of in the header).
pub fn exception_index(rest: &[&str]) -> Option<usize> {
    let (index, line) = rest
        .iter()
        .enumerate()
        .rev()
        .map(|(i, l)| (i, l.trim_end()))
        .find(|(_, l)| !l.is_empty() && !l.starts_with(' ') && !l.starts_with('\t'))?;
    (crate::kopf::logs::looks_like_traceback(line) && !line.starts_with("Traceback ")).then_some(index)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Kopf 1.38's `kopf run` on a handlers file that does not parse (Python 3.12): the
    /// exception line with the file and line.
    #[test]
    fn a_python_traceback_ends_with_its_exception() {
        let rest = [
            "  File \"/usr/local/bin/kopf\", line 8, in <module>",
            "    sys.exit(main())",
            "  File \"<frozen importlib._bootstrap_external>\", line 991, in exec_module",
            "  File \"/src/handlers.py\", line 5",
            "    def broken(:",
            "               ^",
            "SyntaxError: invalid syntax",
        ];
        assert!(starts_crash("Traceback (most recent call last):"));
        assert_eq!(
            exception_of("Traceback (most recent call last):", &rest).as_deref(),
            Some("SyntaxError: invalid syntax (File \"/src/handlers.py\", line 5)")
        );
        assert_eq!(
            exception_of("Traceback (most recent call last):", &rest[..2]),
            None,
            "cut short"
        );
    }

    /// Our binary's exit on an error, and a panic, are crashes too.
    #[test]
    fn our_own_crash_output() {
        assert!(starts_crash("error: the watch failed") && starts_crash("thread 'main' panicked at src/a.rs:1:2:"));
        assert!(!starts_crash("[2026-12-01 10:00:00,000] kopf.objects [INFO] x"));
        assert_eq!(
            exception_of("error: the watch failed: 403", &["hint: grant it"]).as_deref(),
            Some("error: the watch failed: 403")
        );
        assert_eq!(
            exception_of(
                "thread 'main' panicked at src/operate/mod.rs:10:5:",
                &["boom", "note: run with"]
            )
            .as_deref(),
            Some("panicked at src/operate/mod.rs:10:5: boom")
        );
    }
}
