//! Kopf's e2e oracle, as nolar/kopf `tests/e2e/test_examples.py` computes it from an
//! operator's log: `'NAME' succeeded` and `'NAME' failed permanently|with an exception. Will
//! stop.` (1.38) `|with an exception and will stop` (1.44) counted per name, checked against the
//! example's `E2E_SUCCESS_COUNTS` / `E2E_FAILURE_COUNTS`. Shared by tests/kopf_examples.rs
//! (captures) and tests/e2e_kopf_examples.rs (live).

use std::collections::BTreeMap;
use std::path::Path;

/// Kopf's pattern of a handler's (or activity's) success.
pub const SUCCEEDED: &str = r"'(.+?)' succeeded";
/// Kopf's patterns of a final failure, both versions' wording.
pub const FAILED: &str =
    r"'(.+?)' failed (?:permanently|with an exception. Will stop.|with an exception and will stop)";

/// The `example.py` of the example whose number starts `capture`'s file name (`03-1.38`,
/// `03`): tests/fixtures/kopf-examples' 1.38.0 copies, which every capture ran.
pub fn example_py(capture: &Path) -> String {
    let nn = &capture.file_name().unwrap().to_string_lossy()[..2];
    std::fs::read_to_string(example_dir(nn).join("example.py")).unwrap()
}

/// The folder of example `nn` (`03`) in tests/fixtures/kopf-examples.
pub fn example_dir(nn: &str) -> std::path::PathBuf {
    std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/kopf-examples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with(&format!("{nn}-")))
        .unwrap_or_else(|| panic!("no example {nn}"))
}

/// `E2E_NAME = {'a': 1, 'b': 2}` of an example (a dict literal of string keys and int values,
/// over one or more lines, as Kopf's examples write them), or `None` when it sets no such mark.
pub fn mark(source: &str, name: &str) -> Option<BTreeMap<String, usize>> {
    let start = source.find(&format!("{name} = {{"))?;
    let body = &source[start..];
    let body = &body[body.find('{').unwrap() + 1..body.find('}').unwrap()];
    let entry = regex::Regex::new(r"'([^']+)'\s*:\s*(\d+)").unwrap();
    Some(
        entry
            .captures_iter(body)
            .map(|c| (c[1].to_string(), c[2].parse().unwrap()))
            .collect(),
    )
}

/// Kopf's `re.findall(pattern, runner.output)` counted per name.
pub fn count(log: &str, pattern: &str) -> BTreeMap<String, usize> {
    let re = regex::Regex::new(pattern).unwrap();
    let mut counts = BTreeMap::new();
    for c in re.captures_iter(log) {
        *counts.entry(c[1].to_string()).or_insert(0) += 1;
    }
    counts
}

/// test_examples.py's check of one kind of mark: the counts of the names the mark lists equal
/// it; without a mark, `expect_without` (successes: every count is 1; failures: none).
pub fn kopf_check(counts: &BTreeMap<String, usize>, mark: Option<&BTreeMap<String, usize>>, successes: bool) -> bool {
    match mark {
        Some(mark) => {
            let checked: BTreeMap<String, usize> = counts
                .iter()
                .filter(|(name, _)| mark.contains_key(*name))
                .map(|(n, c)| (n.clone(), *c))
                .collect();
            &checked == mark
        }
        None if successes => counts.values().all(|c| *c == 1) && !counts.is_empty(),
        None => counts.is_empty(),
    }
}

/// The handlers that logged an outcome for the object `ns_name` (`default/kopf-example-1`):
/// Kopf's count also holds its activities (`login_via_pykube`), which are no object's.
pub fn object_handlers(log: &str, ns_name: &str) -> std::collections::BTreeSet<String> {
    count(
        log,
        &format!(r"\[{}\] Handler '(.+?)' (?:succeeded|failed)", regex::escape(ns_name)),
    )
    .into_keys()
    .collect()
}

/// The `succeeded` and `failed` runs among `logs -o json`'s lines (one run each), every one of
/// `handler` for `object` (`NS/NAME`).
pub fn our_counts(json_lines: &str, handler: &str, object: &str) -> (usize, usize) {
    let mut counts = (0, 0);
    for line in json_lines.lines() {
        let run: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(run["object"], object, "{line}");
        assert_eq!(run["handler"], handler, "{line}");
        match run["outcome"].as_str().unwrap() {
            "succeeded" => counts.0 += 1,
            "failed" => counts.1 += 1,
            _ => {}
        }
    }
    counts
}

/// The exit code `logs -o json` owes for the runs it printed (docs/contracts.md, `logs`): 1 when
/// the latest run is a retry or a failure, else 0.
pub fn logs_exit_for(stdout: &str) -> i32 {
    let last = stdout
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str::<serde_json::Value>(l).ok());
    let outcome = last.as_ref().and_then(|run| run["outcome"].as_str());
    i32::from(matches!(outcome, Some("failed" | "retrying")))
}

/// Our counts `(succeeded, failed)` of `handler`'s runs for `object` (`NS/NAME`), from `logs
/// --resource kopfexamples.kopf.dev --handler HANDLER NAME -o json` with `source` (`--bundle
/// DIR`, or a live `--log-file` read), its exit code checked against [`logs_exit_for`].
pub fn logs_counts(handler: &str, object: &str, source: &[&std::ffi::OsStr]) -> (usize, usize) {
    let name = object.rsplit('/').next().unwrap_or(object);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kubectl-microservice"))
        .args([
            "logs",
            "--resource",
            "kopfexamples.kopf.dev",
            "--handler",
            handler,
            name,
            "-o",
            "json",
        ])
        .args(source)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        out.status.code(),
        Some(logs_exit_for(&stdout)),
        "{handler} ({source:?}): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    our_counts(&stdout, handler, object)
}
