//! Splits a byte stream into bounded text lines, never losing or hiding what it could not keep.
//!
//! Log streams (kubelet `pods/log`, a file, stdin) are bytes, not text: a line may be longer than
//! any sane record, may not be UTF-8, and the last one may have no newline (a stream cut short).
//! [`LineSplitter`] is push-based, so the same code serves blocking readers and async streams:
//! feed it chunks with [`LineSplitter::push`], then call [`LineSplitter::finish`].
//!
//! Guarantees, each pinned by a test: every input line yields exactly one [`RawLine`]; a line over
//! [`MAX_LINE_BYTES`] keeps its first bytes and ends with a [`TRUNCATION_MARKER`] naming how many
//! bytes were cut; invalid UTF-8 is replaced (U+FFFD) and flagged; a final line without newline is
//! flagged; `\r\n` endings are accepted. Memory is bounded by one line (64 KiB) plus one chunk.

/// Longest line kept, in bytes (64 KiB); the rest of a longer line is counted, not kept.
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// Appended to a line cut at [`MAX_LINE_BYTES`], followed by the number of bytes dropped and `]`.
pub const TRUNCATION_MARKER: &str = " …[truncated: ";

/// One line of a log stream, as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawLine {
    /// The line without its newline; lossily decoded; ends with the truncation marker when cut.
    pub text: String,
    /// 1-based line number in its stream.
    pub number: u64,
    /// Bytes dropped because the line was longer than [`MAX_LINE_BYTES`] (0: kept whole).
    pub truncated_bytes: u64,
    /// The line was not valid UTF-8 (bad bytes were replaced by U+FFFD).
    pub invalid_utf8: bool,
    /// The stream ended before this line's newline (a cut-short last line).
    pub unterminated: bool,
}

/// Push-based splitter of a byte stream into [`RawLine`]s (see the module docs).
#[derive(Debug, Default)]
pub struct LineSplitter {
    buf: Vec<u8>,
    dropped: u64,
    number: u64,
}

impl LineSplitter {
    /// An empty splitter.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds one chunk; calls `out` for every line completed by it.
    pub fn push(&mut self, mut chunk: &[u8], out: &mut impl FnMut(RawLine)) {
        while !chunk.is_empty() {
            match memchr::memchr(b'\n', chunk) {
                Some(at) => {
                    self.keep(&chunk[..at]);
                    chunk = &chunk[at + 1..];
                    let line = self.take(false);
                    out(line);
                }
                None => {
                    self.keep(chunk);
                    chunk = &[];
                }
            }
        }
    }

    /// Ends the stream: a pending line without newline is emitted, flagged `unterminated`.
    pub fn finish(&mut self, out: &mut impl FnMut(RawLine)) {
        if !self.buf.is_empty() || self.dropped > 0 {
            let line = self.take(true);
            out(line);
        }
    }

    fn keep(&mut self, bytes: &[u8]) {
        let room = MAX_LINE_BYTES.saturating_sub(self.buf.len());
        let kept = bytes.len().min(room);
        self.buf.extend_from_slice(&bytes[..kept]);
        self.dropped += (bytes.len() - kept) as u64;
    }

    fn take(&mut self, unterminated: bool) -> RawLine {
        self.number += 1;
        if self.buf.last() == Some(&b'\r') && self.dropped == 0 {
            self.buf.pop();
        }
        let (mut text, invalid_utf8) = decode(&self.buf, self.dropped > 0);
        let truncated_bytes = self.dropped;
        if truncated_bytes > 0 {
            text.push_str(TRUNCATION_MARKER);
            text.push_str(&crate::text::count(truncated_bytes, "byte"));
            text.push(']');
        }
        self.buf.clear();
        self.dropped = 0;
        RawLine {
            text,
            number: self.number,
            truncated_bytes,
            invalid_utf8,
            unterminated,
        }
    }
}

/// Decodes `bytes`; when the line was cut, an incomplete UTF-8 sequence at the cut is not
/// counted as invalid (it is an artefact of the cut), it is dropped.
fn decode(bytes: &[u8], cut: bool) -> (String, bool) {
    match std::str::from_utf8(bytes) {
        Ok(s) => (s.to_string(), false),
        Err(e) if cut && e.error_len().is_none() => {
            let valid = e.valid_up_to();
            // SAFETY-free: from_utf8 said the prefix is valid.
            (String::from_utf8_lossy(&bytes[..valid]).into_owned(), false)
        }
        Err(_) => (String::from_utf8_lossy(bytes).into_owned(), true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(chunks: &[&[u8]]) -> Vec<RawLine> {
        let mut lines = Vec::new();
        let mut s = LineSplitter::new();
        for c in chunks {
            s.push(c, &mut |l| lines.push(l));
        }
        s.finish(&mut |l| lines.push(l));
        lines
    }

    #[test]
    fn lines_split_across_chunks_and_crlf() {
        let lines = split(&[b"ab", b"c\r\nde", b"f\n\n"]);
        let texts: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts, ["abc", "def", ""]);
        assert_eq!(lines[2].number, 3);
        assert!(lines.iter().all(|l| !l.unterminated && !l.invalid_utf8));
    }

    #[test]
    fn a_cut_short_last_line_is_kept_and_flagged() {
        let lines = split(&[b"one\n[2026-11-29 16:21"]);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[1].text, "[2026-11-29 16:21");
        assert!(lines[1].unterminated);
    }

    #[test]
    fn long_lines_are_cut_with_a_marker_naming_the_dropped_bytes() {
        let long = vec![b'x'; MAX_LINE_BYTES + 10];
        let mut input = long.clone();
        input.extend_from_slice(b"\nnext\n");
        let lines = split(&[&input[..1000], &input[1000..]]);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].truncated_bytes, 10);
        assert!(lines[0].text.starts_with("xxx"));
        assert!(lines[0].text.ends_with(" …[truncated: 10 bytes]"));
        assert_eq!(lines[1].text, "next");
    }

    #[test]
    fn binary_junk_is_replaced_and_flagged() {
        let lines = split(&[b"ok\n\xff\xfe\x00junk\n"]);
        assert_eq!(lines.len(), 2);
        assert!(lines[1].invalid_utf8);
        assert!(lines[1].text.contains('\u{fffd}'));
        assert!(lines[1].text.ends_with("\u{0}junk"));
    }

    #[test]
    fn a_multibyte_char_cut_at_the_limit_is_not_reported_as_junk() {
        let mut input = vec![b'a'; MAX_LINE_BYTES - 1];
        input.extend_from_slice("é".as_bytes()); // 2 bytes: the second is cut
        input.push(b'\n');
        let lines = split(&[&input]);
        assert!(!lines[0].invalid_utf8);
        assert_eq!(lines[0].truncated_bytes, 1);
    }
}
