//! A spawned `kubectl-microservice operate` whose stderr lines are collected with the time each
//! was read. Shared by `tests/e2e.rs` and `benches/operate.rs` (included with `#[path]`), so
//! not every item is used by both.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The running process and its stderr lines.
pub struct OperateProcess {
    /// The process; killed (SIGKILL) when this is dropped.
    pub child: Child,
    /// When it was spawned.
    pub started: Instant,
    lines: Arc<Mutex<Vec<(Instant, String)>>>,
}

impl OperateProcess {
    /// Spawns `bin operate --kubeconfig KUBECONFIG ARGS...` with the default log filter. With
    /// `echo`, every line is also printed as `operate| LINE`.
    pub fn spawn(bin: &str, kubeconfig: &Path, args: &[&str], echo: bool) -> OperateProcess {
        Self::spawn_teeing(bin, kubeconfig, args, echo, None)
    }

    /// [`OperateProcess::spawn`], also appending every line to `log_file` (created if absent) as
    /// it is read, as `operate 2>&1 | tee -a FILE` would: a line that [`OperateProcess::count`]
    /// sees is already in the file.
    pub fn spawn_teeing(
        bin: &str,
        kubeconfig: &Path,
        args: &[&str],
        echo: bool,
        log_file: Option<&Path>,
    ) -> OperateProcess {
        let mut file = log_file.map(|path| {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .unwrap_or_else(|e| panic!("open {}: {e}", path.display()))
        });
        let started = Instant::now();
        let mut child = Command::new(bin)
            .arg("operate")
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .args(args)
            .env("RUST_LOG", "warn,kubectl_microservice=info")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("operate starts");
        let stderr = child.stderr.take().unwrap();
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = lines.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if echo {
                    println!("operate| {line}");
                }
                if let Some(file) = file.as_mut() {
                    writeln!(file, "{line}").expect("the operator's log file is writable");
                }
                sink.lock().unwrap().push((Instant::now(), line));
            }
        });
        OperateProcess { child, started, lines }
    }

    /// Every line so far.
    pub fn lines(&self) -> Vec<String> {
        self.lines.lock().unwrap().iter().map(|(_, l)| l.clone()).collect()
    }

    /// How many lines contain `needle`.
    pub fn count(&self, needle: &str) -> usize {
        self.lines
            .lock()
            .unwrap()
            .iter()
            .filter(|(_, l)| l.contains(needle))
            .count()
    }

    /// When the `n`th line containing `needle` was read (n from 1).
    pub fn nth_time(&self, needle: &str, n: usize) -> Option<Instant> {
        self.lines
            .lock()
            .unwrap()
            .iter()
            .filter(|(_, l)| l.contains(needle))
            .nth(n.checked_sub(1)?)
            .map(|(t, _)| *t)
    }
}

impl Drop for OperateProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
