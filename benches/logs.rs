//! Benchmark of `logs --handler` (acceptance 3 of the logs issue). Not a timed test: it prints
//! figures, it asserts nothing about speed.
//!
//! 1. Throughput: a generated Kopf `full`-format log with kubelet prefixes, at least 1 million
//!    lines (1000 objects; creates, updates, resumes, temporary failures, exceptions with
//!    tracebacks, framework lines), parsed and grouped in memory by `LogStream`: lines/s, runs/s.
//! 2. Memory: the release binary in follow mode (`logs --handler accept --file - -f -o json`)
//!    reading a generated 1 GiB stream from stdin; peak RSS (VmHWM from /proc) while it runs.
//!
//! Run: `cargo bench --bench logs` (`KMS_BENCH_LINES`, `KMS_BENCH_STREAM_MIB` change the sizes).

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Instant;

use kubectl_microservice::logs::runs::GroupConfig;
use kubectl_microservice::logs::stream::{LogStream, SourceLabel};

const BIN: &str = env!("CARGO_BIN_EXE_kubectl-microservice");

/// A deterministic generator of operator log lines.
struct Generator {
    seed: u64,
    millis: u64,
    line: u64,
}

impl Generator {
    fn new() -> Self {
        Generator {
            seed: 0x2545_f491_4f6c_dd1d,
            millis: 0,
            line: 0,
        }
    }

    fn next(&mut self) -> u64 {
        self.seed ^= self.seed << 13;
        self.seed ^= self.seed >> 7;
        self.seed ^= self.seed << 17;
        self.seed
    }

    fn push(&mut self, out: &mut String, level: &str, logger: &str, message: &str) {
        self.millis += 1 + self.next() % 3;
        self.line += 1;
        let (s, ms) = (self.millis / 1000, self.millis % 1000);
        let (h, m, sec) = (10 + (s / 3600) % 14, (s / 60) % 60, s % 60);
        let day = 1 + (s / 50_400) % 28;
        out.push_str(&format!(
            "2026-11-{day:02}T{h:02}:{m:02}:{sec:02}.{ms:03}123456Z [2026-11-{day:02} {h:02}:{m:02}:{sec:02},{ms:03}] {logger:<20.20} [{level:<8.8}] {message}\n"
        ));
    }

    /// Appends one handling cycle (or a framework line) to `out`.
    fn cycle(&mut self, out: &mut String) {
        let obj = format!("bench/ms-{:04}", self.next() % 1000);
        let kind = self.next() % 100;
        let o = "kopf.objects";
        match kind {
            0..=59 => {
                let (title, handler) = match kind % 3 {
                    0 => ("Creation", "accept"),
                    1 => ("Updating", "accept/spec"),
                    _ => ("Resuming", "accept"),
                };
                self.push(
                    out,
                    "INFO",
                    o,
                    &format!("[{obj}] Accepted {obj}: image=registry.example.com/store/catalog:1.4.0 port=7000"),
                );
                self.push(out, "INFO", o, &format!("[{obj}] Handler '{handler}' succeeded."));
                self.push(
                    out,
                    "INFO",
                    o,
                    &format!("[{obj}] {title} is processed: 1 succeeded; 0 failed."),
                );
            }
            60..=84 => {
                self.push(
                    out,
                    "INFO",
                    o,
                    &format!("[{obj}] Checking {obj}: image=registry.example.com/store/basket:0.8.1 port=7300"),
                );
                self.push(
                    out,
                    "ERROR",
                    o,
                    &format!("[{obj}] Handler 'accept' failed temporarily: registry unreachable"),
                );
            }
            85..=92 => {
                self.push(out, "ERROR", o, &format!("[{obj}] Handler 'accept' failed with an exception and will try again in 60 seconds: port is odd"));
                for l in [
                    "Traceback (most recent call last):",
                    "  File \"/deps/kopf/_core/actions/execution.py\", line 276, in execute_handler_once",
                    "    result = await invoke_handler(",
                    "  File \"/op/operator.py\", line 14, in accept",
                    "ValueError: port is odd",
                ] {
                    self.line += 1;
                    out.push_str("2026-11-01T10:00:00.000000001Z ");
                    out.push_str(l);
                    out.push('\n');
                }
            }
            _ => {
                self.push(out, "INFO", "kopf._core.engines.p", "Failed to post an event. Ignoring and continuing. Code: 403. Message: events is forbidden. Details: {'kind': 'events'}Event: type='Normal', reason='Logging', message='x'.");
            }
        }
    }
}

fn throughput() {
    let lines: u64 = std::env::var("KMS_BENCH_LINES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let mut generator = Generator::new();
    let mut log = String::new();
    while generator.line < lines {
        generator.cycle(&mut log);
    }
    let mib = log.len() as f64 / (1024.0 * 1024.0);
    let mut best = f64::MAX;
    let mut runs = 0;
    for _ in 0..3 {
        let started = Instant::now();
        let mut stream = LogStream::new(SourceLabel::default(), GroupConfig::default(), Vec::new());
        let found = stream.read_all(log.as_bytes()).expect("in-memory reads do not fail");
        best = best.min(started.elapsed().as_secs_f64());
        runs = found.len();
        assert_eq!(stream.parse_stats().lines, generator.line);
    }
    println!(
        "throughput: {} lines ({mib:.0} MiB), {runs} runs in {best:.2} s: {:.0} lines/s, {:.0} runs/s, {:.0} MiB/s",
        generator.line,
        generator.line as f64 / best,
        runs as f64 / best,
        mib / best
    );
}

fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn follow_memory() {
    let mib: u64 = std::env::var("KMS_BENCH_STREAM_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1024);
    let mut child = Command::new(BIN)
        .args(["logs", "--handler", "accept", "--file", "-", "-f", "-o", "json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the release binary runs");
    let pid = child.id();
    let mut stdin = child.stdin.take().unwrap();
    let mut generator = Generator::new();
    let mut written: u64 = 0;
    let mut peak = 0;
    let started = Instant::now();
    let mut chunk = String::new();
    while written < mib * 1024 * 1024 {
        chunk.clear();
        while chunk.len() < 1024 * 1024 {
            generator.cycle(&mut chunk);
        }
        stdin.write_all(chunk.as_bytes()).expect("the follower reads its stdin");
        written += chunk.len() as u64;
        peak = peak.max(peak_rss_kib(pid).unwrap_or(0));
    }
    peak = peak.max(peak_rss_kib(pid).unwrap_or(0));
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let elapsed = started.elapsed().as_secs_f64();
    let tally = String::from_utf8_lossy(&output.stderr);
    let tally = tally.lines().next().unwrap_or("");
    println!(
        "follow: {} MiB, {} lines in {elapsed:.1} s ({:.0} MiB/s); peak RSS {:.1} MiB (goal <= 64 MiB); {tally}",
        written / (1024 * 1024),
        generator.line,
        written as f64 / (1024.0 * 1024.0) / elapsed,
        peak as f64 / 1024.0,
    );
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` would pass other flags: only run
    // when benchmarking.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    throughput();
    follow_memory();
}
