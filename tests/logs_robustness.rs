//! Malformed operator logs: cut lines, binary junk, lines over 64 KiB, mixed formats. Every line
//! is kept and counted, never dropped silently, never a panic.

use kubectl_microservice::logs::Format;
use kubectl_microservice::logs::lines::{MAX_LINE_BYTES, TRUNCATION_MARKER};
use kubectl_microservice::logs::runs::{GroupConfig, Run};
use kubectl_microservice::logs::stream::{LogStream, SourceLabel};

fn read(bytes: &[u8]) -> (Vec<Run>, LogStream) {
    let mut stream = LogStream::new(SourceLabel::default(), GroupConfig::default(), vec![]);
    let runs = stream.read_all(bytes).unwrap();
    (runs, stream)
}

const SUCCEEDED: &str =
    "[2026-11-29 16:21:14,100] kopf.objects         [INFO    ] [todo/a] Handler 'accept' succeeded.\n";

#[test]
fn a_huge_handler_line_is_cut_with_a_marker_and_the_run_survives() {
    let mut log =
        String::from("[2026-11-29 16:21:14,099] kopf.objects         [INFO    ] [todo/a] Accepted todo/a: image=");
    log.push_str(&"x".repeat(MAX_LINE_BYTES * 2));
    log.push('\n');
    log.push_str(SUCCEEDED);
    let (runs, stream) = read(log.as_bytes());
    assert_eq!(runs.len(), 1);
    let first = &runs[0].records[0];
    assert!(first.message.contains(TRUNCATION_MARKER), "marker kept");
    assert!(first.lines[0].len() < MAX_LINE_BYTES + 64);
    assert_eq!(stream.parse_stats().truncated_lines, 1);
}

#[test]
fn cut_lines_and_junk_inside_a_full_format_log_are_counted_not_absorbed() {
    let mut log = Vec::new();
    log.extend_from_slice(b"[2026-11-29 16:21:14,098] kopf.objects         [INFO    ] [todo/a] Accepted todo/a\n");
    log.extend_from_slice(b"[2026-11-29 16:21\n"); // a cut header
    log.extend_from_slice(b"\x00\x01\xff binary\n"); // junk
    log.extend_from_slice(b"{\"message\": \"cut json\n"); // a cut json line
    log.extend_from_slice(SUCCEEDED.as_bytes());
    log.extend_from_slice(b"[2026-11-29 16:21:15,000] kopf.objects         [INFO    ] [todo/a] Creation is pro"); // cut, no newline
    let (runs, stream) = read(&log);
    let s = stream.parse_stats();
    assert_eq!(s.lines, 6);
    assert_eq!(s.unmatched_lines, 3);
    assert_eq!(s.invalid_utf8_lines, 1);
    assert_eq!(s.unterminated_lines, 1);
    assert_eq!(s.continuation_lines, 0);
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].handler, "accept");
    // The cut cycle line is a record, but says nothing about the cause.
    assert_eq!(runs[0].cause, None);
}

#[test]
fn mixed_formats_in_one_stream_are_each_read() {
    let log = concat!(
        "{\"message\": \"Checking todo/a\", \"timestamp\": \"2026-11-29T16:28:55.342417+00:00\", \"object\": {\"kind\": \"Microservice\", \"name\": \"a\", \"namespace\": \"todo\"}, \"severity\": \"info\"}\n",
        "[2026-11-29 16:28:55,343] kopf.objects         [ERROR   ] [todo/a] Handler 'accept' failed temporarily: nope\n",
        "2026-11-29T16:28:56.000Z  INFO [todo/b] Accepted todo/b: image=x port=1 handler=accept cause=update\n",
        "[todo/b] Handler 'accept' succeeded.\n",
        "2026-11-29T16:28:56.002Z  INFO [todo/b] Updating is processed: 1 succeeded; 0 failed. handler=accept cause=update\n",
    );
    let (runs, stream) = read(log.as_bytes());
    let s = stream.parse_stats();
    assert_eq!(s.records_in(Format::KopfJson), 1);
    assert_eq!(s.records_in(Format::KopfFull), 1);
    assert_eq!(s.records_in(Format::OursText), 2);
    assert_eq!(s.records_in(Format::KopfPlain), 1);
    assert_eq!(s.unmatched_lines, 0);
    let got: Vec<(String, &str)> = runs
        .iter()
        .map(|r| (r.object.to_string(), r.outcome.as_str()))
        .collect();
    assert_eq!(got, [("todo/a".into(), "retrying"), ("todo/b".into(), "succeeded")]);
    assert_eq!(runs[1].records.len(), 3);
}

/// A deterministic stream of random bytes and fragments of real lines: no panic, and every
/// line is accounted for.
#[test]
fn random_bytes_never_panic_and_every_line_is_counted() {
    let fragments: [&[u8]; 8] = [
        b"[2026-11-29 16:21:14,100] kopf.objects         [INFO    ] [todo/a] ",
        b"Handler 'accept' ",
        b"succeeded.",
        b"failed temporarily: x",
        b"{\"message\": \"",
        b"2026-11-29T17:15:53.389Z  WARN [s/c] Failed to post an event: code=403 handler=accept",
        b"\n",
        b"\xe2\x82",
    ];
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..200 {
        let mut bytes = Vec::new();
        for _ in 0..(next() % 200) {
            match next() % 3 {
                0 => bytes.extend_from_slice(fragments[(next() % 8) as usize]),
                1 => bytes.push((next() % 256) as u8),
                _ => bytes.extend(std::iter::repeat_n(b'a', (next() % 50) as usize)),
            }
        }
        let (_, stream) = read(&bytes);
        let s = stream.parse_stats();
        let newlines = bytes.iter().filter(|&&b| b == b'\n').count() as u64;
        let expected_lines = newlines + u64::from(!bytes.is_empty() && *bytes.last().unwrap() != b'\n');
        assert_eq!(s.lines, expected_lines);
        assert_eq!(s.records + s.continuation_lines, s.lines);
    }
}
