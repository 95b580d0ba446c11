//! How much a Kopf operator logs: `kopf run -q`/`--quiet` sets its level to WARNING, `-v`/
//! `--verbose` and `-d`/`--debug` to DEBUG, else INFO (Kopf's `kopf/cli.py` `logging_options`
//! and `kopf/_core/engines/loggers.py` `configure`: `'DEBUG' if debug or verbose else 'WARNING'
//! if quiet else 'INFO'`, the same in 1.38 and 1.44); and its source may raise the level after
//! that (`logging.getLogger("kopf").setLevel(logging.WARNING)`, the root logger's, or
//! `logging.basicConfig(level=...)`, run when `kopf run` imports it or in a startup handler).
//! At WARNING, Kopf's cycle and handler lines (`... is processed`, `Handler 'x' succeeded.`,
//! both INFO) are not written: their absence then says nothing about the object.

/// A level above INFO and where it was set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quiet {
    /// `WARNING`, `ERROR` or `CRITICAL`.
    pub level: &'static str,
    /// Where it was set, for evidence: `` `-q` in the command line `` or `FILE:LINE: TEXT`.
    pub how: String,
}

/// The level above INFO that the operator's effective command line (`argv`: command then args)
/// or its source (`files`: name and text of each `.py` file) sets, when one does; `None` when
/// it logs at INFO or DEBUG. `-v`/`-d` beat `-q` (Kopf's order); a source line beats the
/// command line (it runs after `configure`).
pub fn quiet(argv: &[String], files: &[(String, String)]) -> Option<Quiet> {
    if let Some(q) = files.iter().find_map(|(file, text)| in_source(file, text)) {
        return Some(q);
    }
    let run = argv.iter().position(|a| a == "run")?;
    let flags = &argv[run + 1..];
    // Click's short flags may be combined (`-qA`).
    let short = |a: &str, c: char| {
        a.len() > 1
            && a.starts_with('-')
            && !a.starts_with("--")
            && a[1..].chars().all(|x| x.is_ascii_alphabetic())
            && a[1..].contains(c)
    };
    let flag = flags.iter().find(|a| *a == "--quiet" || short(a, 'q'))?;
    if flags
        .iter()
        .any(|a| a == "--verbose" || a == "--debug" || short(a, 'v') || short(a, 'd'))
    {
        return None;
    }
    Some(Quiet {
        level: "WARNING",
        how: format!("`{flag}` in the command line (`{}`)", argv.join(" ")),
    })
}

/// A line of `text` that raises the `kopf` or the root logger above INFO.
fn in_source(file: &str, text: &str) -> Option<Quiet> {
    text.lines().enumerate().find_map(|(i, line)| {
        let code = line.split('#').next().unwrap_or("").trim();
        let logger = code.contains("getLogger()")
            || code.contains("getLogger(\"kopf\")")
            || code.contains("getLogger('kopf')")
            || code.contains("logging.root.")
            || code.contains("basicConfig(");
        let setter = code.contains("setLevel(") || code.contains("basicConfig(");
        if !(logger && setter) {
            return None;
        }
        let level = ["WARNING", "ERROR", "CRITICAL"].into_iter().find(|l| {
            code.contains(&format!("logging.{l}"))
                || code.contains(&format!("\"{l}\""))
                || code.contains(&format!("'{l}'"))
        })?;
        Some(Quiet {
            level,
            how: format!("{file}:{}: {code}", i + 1),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    /// Kopf's flags as its CLI reads them: `-q` alone is WARNING; `-v`/`-d` win.
    #[test]
    fn the_command_line_sets_the_level() {
        let q = quiet(&argv("kopf run -q /src/handlers.py"), &[]).unwrap();
        assert_eq!(q.level, "WARNING");
        assert!(q.how.starts_with("`-q` in the command line"), "{}", q.how);
        assert!(quiet(&argv("kopf run --quiet --standalone x.py"), &[]).is_some());
        assert!(quiet(&argv("kopf run -q -v x.py"), &[]).is_none());
        assert!(quiet(&argv("kopf run --verbose x.py"), &[]).is_none());
        assert!(quiet(&argv("kopf run x.py"), &[]).is_none());
        assert!(quiet(&argv("python -q op.py"), &[]).is_none(), "not Kopf's flag");
    }

    /// The source's own level for `kopf` or the root logger; another logger's does not count.
    #[test]
    fn the_source_sets_the_level() {
        let files = vec![(
            "operator.py".to_string(),
            "import logging\nlogging.getLogger('urllib3').setLevel(logging.ERROR)\nlogging.getLogger(\"kopf\").setLevel(logging.WARNING)  # quiet\n".to_string(),
        )];
        let q = quiet(&argv("kopf run operator.py"), &files).unwrap();
        assert_eq!(q.level, "WARNING");
        assert_eq!(
            q.how,
            "operator.py:3: logging.getLogger(\"kopf\").setLevel(logging.WARNING)"
        );
        let other = vec![(
            "o.py".to_string(),
            "logging.getLogger('aiohttp').setLevel(logging.ERROR)\n".to_string(),
        )];
        assert!(quiet(&argv("kopf run o.py"), &other).is_none());
    }
}
