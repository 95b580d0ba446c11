//! Operator logs read from files rather than from the operator's Pods: `logs --log-file
//! FILE|- --local` streams them ([`open`]); `--log-file FILE` of `explain-events`, `status` and `collect` reads
//! each whole into a [`LogSource`] ([`read_sources`]) that stands beside the Pods' logs (the
//! evidence adds them there). This is how an operator without a Pod is diagnosed: `operate` run on a laptop
//! (nothing behind `pods/log`), or logs exported from a log store.
//!
//! A file's [`LogSource`] is named after the file: `pod` is the file's name (`operate.log`),
//! `container` is [`FILE_CONTAINER`], so findings cite `file operate.log line 12` ([`source_name`])
//! and a bundle
//! stores it as `operator/logs/operate.log.file.log`, which the bundle reader reads back to the
//! same names. The text is
//! whatever [`crate::logs::RecordParser`] reads: our `text`/`json` formats, Kopf's `full`,
//! `plain` and `json` formats, with or without the kubelet's `--timestamps` prefix. Bytes that
//! are not UTF-8 are replaced (U+FFFD), as in a bundle's log files.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use super::source::{LOG_LIMIT_BYTES, LogSource};
use crate::error::AppError;

/// The `container` of a [`LogSource`] read from a file.
pub const FILE_CONTAINER: &str = "file";

/// How answers name a log: `POD/CONTAINER`, or `file NAME` for one read from a file
/// (`--log-file`, or a bundle's `NAME.file.log`), which has no Pod.
pub fn source_name(pod: &str, container: &str) -> String {
    if container == FILE_CONTAINER {
        format!("file {pod}")
    } else {
        format!("{pod}/{container}")
    }
}

/// A run's source as a `key=value` field of `logs`' human header: `pod=POD/CONTAINER`, or
/// `file=NAME` for a log read from a file.
pub fn source_field(pod: &str, container: Option<&str>) -> String {
    match container {
        Some(FILE_CONTAINER) => format!("file={pod}"),
        Some(c) => format!("pod={pod}/{c}"),
        None => format!("pod={pod}"),
    }
}

/// Opens `path` for reading, `-` meaning stdin. `flag` (`--log-file`) names the option in the
/// error: an unreadable path is a usage error (exit 2) naming the flag, the path and the cause.
pub fn open(path: &str, flag: &str) -> Result<Box<dyn Read + Send>, AppError> {
    if path == "-" {
        return Ok(Box::new(std::io::stdin()));
    }
    open_file(Path::new(path), flag).map(|f| Box::new(f) as Box<dyn Read + Send>)
}

fn open_file(path: &Path, flag: &str) -> Result<std::fs::File, AppError> {
    std::fs::File::open(path).map_err(|e| AppError::Usage(format!("cannot read {flag} {}: {e}", path.display())))
}

/// At most this much of a `--log-file` is read: its end, as `pods/log` is asked for (`limitBytes`,
/// [`LOG_LIMIT_BYTES`]), so a huge exported log costs bounded memory.
pub const TAIL_LIMIT_BYTES: u64 = LOG_LIMIT_BYTES as u64;

/// The last `limit` bytes of the file at `path`, starting after a line break so that no cut line
/// is read (all of it when it is smaller). Logs have coverage: a cut log simply begins later.
fn read_tail(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    use std::io::{Seek, SeekFrom};
    let mut file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    if len <= limit {
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        return Ok(bytes);
    }
    // One byte more, to see whether the tail starts right after a line break.
    file.seek(SeekFrom::Start(len - limit - 1))?;
    let mut bytes = Vec::with_capacity(limit as usize + 1);
    file.take(limit + 1).read_to_end(&mut bytes)?;
    let start = bytes.iter().position(|&b| b == b'\n').map_or(bytes.len(), |i| i + 1);
    tracing::warn!(
        "{}: {len} bytes; reading its last {} (the evidence begins there)",
        path.display(),
        bytes.len() - start
    );
    Ok(bytes.split_off(start))
}

/// Reads the operator log at `path` (its last [`TAIL_LIMIT_BYTES`]) as a [`LogSource`] named
/// after the file (module docs).
///
/// Errors (exit 2, naming `--log-file` and the path): `-` (stdin is not read here: the file may
/// be read again, e.g. on every poll of `status --watch`; `logs`, which reads it once, reads it
/// with [`read_stream_source`]), a path that cannot be opened or read (a directory, missing, no
/// permission).
pub fn read_source(path: &Path) -> Result<LogSource, AppError> {
    let shown = path.display();
    if path.as_os_str() == "-" {
        return Err(AppError::Usage(
            "--log-file -: expected a file; stdin is not read here (save the log to a file; `logs --handler NAME --log-file -` reads stdin)"
                .into(),
        ));
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| AppError::Usage(format!("--log-file {shown}: expected a file")))?;
    let bytes = read_tail(path, TAIL_LIMIT_BYTES)
        .map_err(|e| AppError::Usage(format!("cannot read --log-file {shown}: {e}")))?;
    Ok(LogSource {
        pod: name,
        container: FILE_CONTAINER.to_string(),
        previous: false,
        text: String::from_utf8_lossy(&bytes).into_owned(),
    })
}

/// How a log read from stdin is named (`logs --log-file -`): cited as `file stdin`.
pub const STDIN_NAME: &str = "stdin";

/// Reads `reader` to its end (stdin for `logs --log-file -` beside the evidence, read once) as a
/// [`LogSource`] named [`STDIN_NAME`]: its last `limit` bytes from a whole line, as a file's
/// tail is read, in memory bounded by about twice `limit`. Errors (exit 2) name `--log-file -`.
pub fn read_stream_source(mut reader: impl Read, limit: u64) -> Result<LogSource, AppError> {
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let mut bytes: Vec<u8> = Vec::new();
    let mut cut = false;
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let n = match reader.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(AppError::Usage(format!("cannot read --log-file - (stdin): {e}"))),
        };
        bytes.extend_from_slice(&chunk[..n]);
        // Keep one byte more than the limit, to see whether the tail starts after a line break.
        if bytes.len() > limit.saturating_mul(2).max(limit.saturating_add(1)) {
            bytes.drain(..bytes.len() - (limit + 1));
            cut = true;
        }
    }
    if bytes.len() > limit {
        bytes.drain(..bytes.len() - (limit + 1));
        cut = true;
    }
    if cut {
        let start = bytes.iter().position(|&b| b == b'\n').map_or(bytes.len(), |i| i + 1);
        bytes.drain(..start);
        tracing::warn!(
            "stdin: longer than {limit} bytes; reading its last {} (the evidence begins there)",
            bytes.len()
        );
    }
    Ok(LogSource {
        pod: STDIN_NAME.to_string(),
        container: FILE_CONTAINER.to_string(),
        previous: false,
        text: String::from_utf8_lossy(&bytes).into_owned(),
    })
}

/// Reads every `--log-file`, in order. Errors (exit 2) as [`read_source`], and when two paths
/// have the same file name: their bundle files and citations would be the same.
pub fn read_sources<P: AsRef<Path>>(paths: &[P]) -> Result<Vec<LogSource>, AppError> {
    let mut seen: BTreeMap<String, &Path> = BTreeMap::new();
    let mut sources = Vec::with_capacity(paths.len());
    for path in paths {
        let path = path.as_ref();
        let source = read_source(path)?;
        if let Some(first) = seen.insert(source.pod.clone(), path) {
            return Err(AppError::Usage(format!(
                "--log-file {} and --log-file {}: the same file name {:?}; files are named by it in evidence and bundles: copy one under another name",
                first.display(),
                path.display(),
                source.pod
            )));
        }
        sources.push(source);
    }
    Ok(sources)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_big_file_is_read_from_its_last_whole_line() {
        let dir = tempfile::tempdir().unwrap();
        let text = b"2026-11-29T17:00:00.000Z  INFO first\n2026-11-29T17:00:01.000Z  INFO second\n2026-11-29T17:00:02.000Z  INFO third\n";
        let path = write(dir.path(), "operate.log", text);
        assert_eq!(read_tail(&path, 1000).unwrap(), text.to_vec(), "small: whole");
        // 40 bytes: the end of "second" and all of "third": the cut line is dropped.
        assert_eq!(
            read_tail(&path, 40).unwrap(),
            b"2026-11-29T17:00:02.000Z  INFO third\n".to_vec()
        );
        // A limit that ends exactly at a line break keeps that whole line.
        let third = b"2026-11-29T17:00:02.000Z  INFO third\n".len() as u64;
        assert_eq!(
            read_tail(&path, third).unwrap(),
            b"2026-11-29T17:00:02.000Z  INFO third\n".to_vec()
        );
        // No line break in the tail at all: nothing whole to read.
        assert!(read_tail(&path, 10).unwrap().is_empty());
    }

    fn write(dir: &Path, name: &str, text: &[u8]) -> std::path::PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    /// stdin (`logs --log-file -`) is read as a file's tail is: whole, or its last `limit` bytes
    /// from a whole line; named `stdin`.
    #[test]
    fn stdin_is_read_to_its_end_and_cut_as_a_file() {
        let text = b"2026-11-29T17:00:00.000Z  INFO first\n2026-11-29T17:00:01.000Z  INFO second\n2026-11-29T17:00:02.000Z  INFO third\n";
        let whole = read_stream_source(&text[..], 1000).unwrap();
        assert_eq!((whole.pod.as_str(), whole.container.as_str()), ("stdin", "file"));
        assert_eq!(whole.text.as_bytes(), text);
        let tail = read_stream_source(&text[..], 40).unwrap();
        assert_eq!(tail.text, "2026-11-29T17:00:02.000Z  INFO third\n");
        // Bounded while reading: a long stream in small reads keeps only its end.
        let long: Vec<u8> = (0..2000).flat_map(|i| format!("line {i}\n").into_bytes()).collect();
        let tail = read_stream_source(std::io::Cursor::new(&long), 100).unwrap();
        assert!(
            tail.text.ends_with("line 1999\n") && tail.text.starts_with("line 19"),
            "{}",
            tail.text
        );
        assert!(tail.text.len() <= 100);
    }

    #[test]
    fn a_file_is_named_after_itself() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), "operate.log", b"line one\nbad \xff byte\n");
        let source = read_source(&path).unwrap();
        assert_eq!(source.pod, "operate.log");
        assert_eq!(source.container, "file");
        assert!(!source.previous);
        assert_eq!(source.text, "line one\nbad \u{fffd} byte\n");
    }

    #[test]
    fn bad_paths_are_usage_errors_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope.log");
        let err = read_source(&missing).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(
            err.to_string().starts_with("cannot read --log-file ") && err.to_string().contains("nope.log"),
            "{err}"
        );
        let err = read_source(dir.path()).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(err.to_string().contains(&dir.path().display().to_string()), "{err}");
        let err = read_source(Path::new("-")).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(err.to_string().contains("stdin"), "{err}");
    }

    #[test]
    fn two_files_of_the_same_name_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("a")).unwrap();
        std::fs::create_dir_all(dir.path().join("b")).unwrap();
        let a = write(&dir.path().join("a"), "op.log", b"a\n");
        let b = write(&dir.path().join("b"), "op.log", b"b\n");
        let c = write(dir.path(), "other.log", b"c\n");
        let err = read_sources(&[a.clone(), b]).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(err.to_string().contains("\"op.log\""), "{err}");
        let sources = read_sources(&[a, c]).unwrap();
        let names: Vec<&str> = sources.iter().map(|s| s.pod.as_str()).collect();
        assert_eq!(names, ["op.log", "other.log"]);
    }
}
