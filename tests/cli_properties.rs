//! Property tests of the command line: whatever the input, nothing panics and the exit code is
//! one of ours (0 ok, 1 diagnosed, 2 usage, 3 could not decide).
//!
//! - In process: generated command lines through `cli::parse_from` (the parsing and every
//!   `value_parser`: durations, numbers, names, flag scoping) must give a `Cli` or a clap error
//!   whose exit code is 0 (`--help`) or 2.
//! - The real binary: fewer generated lines, run offline (KUBECONFIG points at a server that
//!   refuses connections, HOME at an empty directory, stdin empty), so every run ends at once
//!   with 0–3; a run that hangs for 20 s fails too. Left out of the generator, as they run
//!   until stopped by design: `operate --skip-crd-check` (it would retry its watches) and
//!   `logs -f` over a growing file (`-f` only reads stdin here).
//! - `parse_duration` against exact arithmetic, and the name checks against Kubernetes'
//!   own regular expressions.
//!
//! Paths are placeholders in the generated lines (`{BUNDLE}`, `{LOG}`, `{DIR}`, ...), filled in
//! per run.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::sample::select;

use kubectl_microservice::cli::{self, MAX_DURATION, parse_duration};
use kubectl_microservice::names;

#[path = "support/kubeconfig.rs"]
mod kubeconfig;

const BIN: &str = env!("CARGO_BIN_EXE_kubectl-microservice");

// ---- values -----------------------------------------------------------------------------------

/// How wild the generated values are: `Noisy` mixes well-formed values with malformed and
/// arbitrary text (most lines end as usage errors); `Clean` keeps values well-formed, so that
/// most lines get past the checks to what runs after them (bundles, files, the cluster).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Noisy,
    Clean,
}

/// Any text (no NUL, which no process argument can hold), at most `max` characters.
fn text(max: usize) -> impl Strategy<Value = String> {
    any::<String>().prop_map(move |s| s.chars().filter(|c| *c != '\0').take(max).collect())
}

fn strings(values: &[&'static str]) -> BoxedStrategy<String> {
    select(values.to_vec()).prop_map(String::from).boxed()
}

fn duration(mode: Mode) -> BoxedStrategy<String> {
    let valid = prop_oneof![
        strings(&[
            "10s",
            "1m30s",
            "500ms",
            "2h",
            "1.5h",
            "3µs",
            "2562047h47m16.854775807s",
            "100000h",
            "0"
        ]),
        ("[1-9][0-9]{0,3}", select(vec!["ms", "s", "m", "h"])).prop_map(|(n, u)| format!("{n}{u}")),
    ];
    if mode == Mode::Clean {
        return valid.boxed();
    }
    prop_oneof![
        2 => valid,
        // Negative values are the flag's value (allow_hyphen_values), refused by its parser.
        1 => ("-[0-9]{1,6}", select(vec!["ns", "ms", "s", "m", "h", ""])).prop_map(|(n, u)| format!("{n}{u}")),
        3 => strings(&[
            "2562047h47m16.854775808s", "9999999999999h", "99999999999999999999s",
            "99999999999999999999h", "99999999999999999999", "-5s", "1h30", "", ".", "1..2s",
            "1e3s", "10 s", "µs", "NaN", "inf",
        ]),
        3 => ("[0-9]{1,22}(\\.[0-9]{0,12})?", select(vec!["ns", "us", "µs", "ms", "s", "m", "h", "x", ""]))
            .prop_map(|(n, u)| format!("{n}{u}")),
        1 => prop::collection::vec(("[0-9]{1,7}", select(vec!["h", "m", "s", "ms"])), 1..4)
            .prop_map(|parts| parts.into_iter().map(|(n, u)| n + u).collect()),
        1 => text(16),
    ]
    .boxed()
}

fn number(mode: Mode) -> BoxedStrategy<String> {
    if mode == Mode::Clean {
        return "[0-9]{1,3}".boxed();
    }
    prop_oneof![
        3 => "[0-9]{1,3}",
        2 => "-?[0-9]{1,25}",
        1 => strings(&["0", "-1", "9223372036854775807", "9223372036854775808", "18446744073709551616", "65536", ""]),
        1 => text(8),
    ]
    .boxed()
}

/// Object names: valid ones (some that the fixture bundle holds), then the classic bad ones,
/// then anything.
fn name(mode: Mode) -> BoxedStrategy<String> {
    let valid = prop_oneof![
        2 => strings(&["catalog-api", "todo-api", "store", "todo"]),
        4 => "[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?",
        1 => "[a-z0-9]{1,10}(\\.[a-z0-9]{1,10}){1,3}",
    ];
    if mode == Mode::Clean {
        return valid.boxed();
    }
    prop_oneof![
        4 => valid,
        2 => select(vec![
            "../../etc".to_string(), "a b".into(), "".into(), "UPPER".into(), "-a".into(), "a-".into(),
            "a_b".into(), "x/y".into(), "store/catalog-api".into(), "a/b/c".into(), "é".into(),
            "a".repeat(64), "a".repeat(254), "%2e%2e".into(), "a?b=c".into(),
        ]),
        2 => "[a-zA-Z0-9._/ -]{0,70}",
        1 => text(20),
    ]
    .boxed()
}

/// `-n` values: namespace names, and comma-separated lists of them.
fn namespaces(mode: Mode) -> BoxedStrategy<String> {
    let one = match mode {
        Mode::Clean => prop_oneof![strings(&["store", "todo", "ops"]), "[a-z][-a-z0-9]{0,10}[a-z]"].boxed(),
        Mode::Noisy => name(mode),
    };
    prop_oneof![
        4 => one.clone(),
        1 => prop::collection::vec(one, 2..4).prop_map(|v| v.join(",")),
    ]
    .boxed()
}

fn operator_ref(mode: Mode) -> BoxedStrategy<String> {
    let kinds = match mode {
        Mode::Clean => vec!["deployment", "deploy", "deployments"],
        Mode::Noisy => vec!["deployment", "deploy", "deployments", "statefulset", ""],
    };
    let shaped = (namespaces(Mode::Clean), select(kinds), name(mode)).prop_map(|(ns, kind, n)| {
        let ns = ns.split(',').next().unwrap_or_default().to_string();
        format!("{ns}/{kind}/{n}")
    });
    match mode {
        Mode::Clean => shaped.boxed(),
        Mode::Noisy => prop_oneof![3 => shaped, 1 => name(mode)].boxed(),
    }
}

/// What a flag takes.
#[derive(Debug, Clone, Copy)]
enum Value {
    None,
    Duration,
    Number,
    Name,
    Namespaces,
    Operator,
    /// Path placeholders or literal paths: (well-formed, not).
    Path(&'static [&'static str], &'static [&'static str]),
    /// Choices: (valid, invalid); `Noisy` adds arbitrary text.
    Choice(&'static [&'static str], &'static [&'static str]),
    Free,
}

fn value(kind: Value, mode: Mode) -> BoxedStrategy<Option<String>> {
    let either = |valid: &'static [&'static str], invalid: &'static [&'static str]| match mode {
        Mode::Clean => strings(valid),
        Mode::Noisy if invalid.is_empty() => strings(valid),
        Mode::Noisy => prop_oneof![3 => strings(valid), 1 => strings(invalid)].boxed(),
    };
    match kind {
        Value::None => Just(None).boxed(),
        Value::Duration => duration(mode).prop_map(Some).boxed(),
        Value::Number => number(mode).prop_map(Some).boxed(),
        Value::Name => name(mode).prop_map(Some).boxed(),
        Value::Namespaces => namespaces(mode).prop_map(Some).boxed(),
        Value::Operator => operator_ref(mode).prop_map(Some).boxed(),
        Value::Path(valid, invalid) => either(valid, invalid).prop_map(Some).boxed(),
        Value::Choice(valid, invalid) => match mode {
            Mode::Clean => strings(valid).prop_map(Some).boxed(),
            Mode::Noisy => prop_oneof![5 => either(valid, invalid), 1 => text(10)]
                .prop_map(Some)
                .boxed(),
        },
        Value::Free => match mode {
            Mode::Clean => name(mode).prop_map(Some).boxed(),
            Mode::Noisy => prop_oneof![3 => name(mode), 1 => text(20)].prop_map(Some).boxed(),
        },
    }
}

// ---- flags ------------------------------------------------------------------------------------

const SHARED: &[(&str, Value)] = &[
    ("--kubeconfig", Value::Path(&["{KUBECONFIG}"], &["{MISSING}"])),
    ("--context", Value::Choice(&["down"], &["nope"])),
    ("-n", Value::Namespaces),
    ("--namespace", Value::Namespaces),
    ("-A", Value::None),
    ("-o", Value::Choice(&["json", "yaml", "wide"], &["name", "xml"])),
    ("-l", Value::Choice(&["app=todo", "tier in (a,b)", "a!=b"], &["!!bad"])),
    ("--no-headers", Value::None),
    ("--as", Value::Free),
    ("--as-group", Value::Free),
    ("--request-timeout", Value::Duration),
    ("--color", Value::Choice(&["auto", "always", "never"], &["sometimes"])),
];

const EVENTS: Value = Value::Choice(&["all", "warnings", "none"], &["some"]);

/// Each subcommand's own flags. `operate --skip-crd-check` is left out (see the module docs).
const OWN: &[(&str, &[(&str, Value)])] = &[
    (
        "operate",
        &[
            ("--log-format", Value::Choice(&["text", "json"], &["xml"])),
            ("--events", EVENTS),
            ("--max-concurrent", Value::Number),
            ("--standalone", Value::None),
            ("--lease-name", Value::Name),
            ("--lease-namespace", Value::Name),
            (
                "--health-listen",
                Value::Choice(&["127.0.0.1:0", "[::1]:0"], &["localhost", "0.0.0.0:99999"]),
            ),
        ],
    ),
    (
        "status",
        &[
            ("--bundle", Value::Path(&["{BUNDLE}"], &["{MISSING}", "{LOG}"])),
            ("--exit-code", Value::None),
            ("-w", Value::None),
            ("--interval", Value::Duration),
            ("--operator", Value::Operator),
            ("--skew", Value::Duration),
            ("--log-file", Value::Path(&["{LOG}"], &["{MISSING}"])),
        ],
    ),
    (
        "logs",
        &[
            ("--handler", Value::Choice(&["accept", "accept/spec"], &["", " "])),
            ("--file", Value::Path(&["{LOG}", "-"], &["{MISSING}"])),
            ("--local", Value::None),
            ("--log-file", Value::Path(&["{LOG}", "-"], &[])),
            ("--bundle", Value::Path(&["{BUNDLE}"], &["{MISSING}"])),
            ("--operator", Value::Operator),
            ("-c", Value::Name),
            ("--previous", Value::None),
            ("--log-lines", Value::Number),
            ("--since", Value::Duration),
            ("--tail", Value::Number),
            ("--last", Value::Number),
            (
                "--cause",
                Value::Choice(&["create", "update", "resume", "unknown", "create,update"], &["delete"]),
            ),
            (
                "--outcome",
                Value::Choice(&["succeeded", "retrying", "failed", "unknown"], &["ok"]),
            ),
            ("--raw", Value::None),
            ("-f", Value::None),
            ("--run-timeout", Value::Duration),
        ],
    ),
    (
        "explain-events",
        &[
            ("--bundle", Value::Path(&["{BUNDLE}"], &["{MISSING}"])),
            ("--operator", Value::Operator),
            ("--event-ttl", Value::Duration),
            ("--skew", Value::Duration),
            ("--log-file", Value::Path(&["{LOG}"], &["{MISSING}"])),
        ],
    ),
    (
        "collect",
        &[
            ("--operator", Value::Operator),
            ("--log-file", Value::Path(&["{LOG}"], &["{MISSING}"])),
        ],
    ),
    (
        "manifests",
        &[
            ("--watch-namespace", Value::Namespaces),
            (
                "--image",
                Value::Choice(&["ghcr.io/org/app:1.0.0", "app@sha256:00"], &["Not An Image"]),
            ),
            ("--standalone", Value::None),
            ("--events", EVENTS),
        ],
    ),
    ("completion", &[]),
];

/// Every subcommand's own flags, for giving one to another subcommand.
fn all_own() -> &'static [(&'static str, Value)] {
    static ALL: std::sync::OnceLock<Vec<(&'static str, Value)>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| OWN.iter().flat_map(|(_, flags)| flags.iter().copied()).collect())
}

/// What a subcommand's line starts with: its positionals and, in `Clean` mode, the flags it
/// requires (each may be left out in `Noisy` mode, to test the missing case).
fn required(subcommand: &str, mode: Mode) -> BoxedStrategy<Vec<String>> {
    let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let clean: BoxedStrategy<Vec<String>> = match subcommand {
        "status" => prop::option::of(name(mode))
            .prop_map(|o| o.into_iter().collect())
            .boxed(),
        "logs" => prop::option::of(name(mode))
            .prop_map(move |o| [words(&["--handler", "accept"]), o.into_iter().collect()].concat())
            .boxed(),
        "explain-events" => name(mode).prop_map(|n| vec![n]).boxed(),
        "collect" => match mode {
            Mode::Clean => Just(words(&["{DIR}"])).boxed(),
            Mode::Noisy => strings(&["{DIR}", "{LOG}", "{BUNDLE}"]).prop_map(|d| vec![d]).boxed(),
        },
        "manifests" => prop_oneof![
            Just(words(&["-n", "ops", "-A"])),
            Just(words(&["-n", "ops", "--watch-namespace", "todo,store"])),
        ]
        .boxed(),
        "completion" => match mode {
            Mode::Clean => strings(&["bash", "zsh", "fish", "powershell", "elvish", "kubectl"]),
            Mode::Noisy => prop_oneof![5 => strings(&["bash", "kubectl"]), 1 => text(8)].boxed(),
        }
        .prop_map(|s| vec![s])
        .boxed(),
        _ => Just(Vec::new()).boxed(),
    };
    match mode {
        Mode::Clean => clean,
        Mode::Noisy => prop::option::weighted(0.85, clean)
            .prop_map(Option::unwrap_or_default)
            .boxed(),
    }
}

/// One flag from `table`, as `--flag value` or `--flag=value`.
fn flag_from(table: &'static [(&'static str, Value)], mode: Mode) -> BoxedStrategy<Vec<String>> {
    (select(table.to_vec()), any::<bool>())
        .prop_flat_map(move |((flag, kind), joined)| {
            value(kind, mode).prop_map(move |v| match v {
                None => vec![flag.to_string()],
                Some(v) if joined && flag.starts_with("--") => vec![format!("{flag}={v}")],
                Some(v) => vec![flag.to_string(), v],
            })
        })
        .boxed()
}

/// A command line (without the program name): shared flags before the subcommand, the
/// subcommand, what it requires, then a mix of its own and shared flags — in `Noisy` mode also
/// other subcommands' flags, unknown ones and `--help`.
fn command_line(mode: Mode) -> impl Strategy<Value = Vec<String>> {
    select(OWN.to_vec())
        .prop_flat_map(move |(subcommand, own)| {
            let own_or_shared = if own.is_empty() { SHARED } else { own };
            let after = match mode {
                Mode::Clean => prop_oneof![
                    3 => flag_from(own_or_shared, mode),
                    1 => flag_from(SHARED, mode),
                ]
                .boxed(),
                Mode::Noisy => prop_oneof![
                    6 => flag_from(own_or_shared, mode),
                    4 => flag_from(SHARED, mode),
                    1 => flag_from(all_own(), mode),
                    1 => strings(&["--help", "-h", "--version", "--nope", "--"]).prop_map(|f| vec![f]),
                ]
                .boxed(),
            };
            let before = prop::collection::vec(flag_from(SHARED, mode), 0..if mode == Mode::Clean { 2 } else { 3 });
            (
                before,
                Just(subcommand),
                required(subcommand, mode),
                prop::collection::vec(after, 0..6),
            )
        })
        .prop_map(move |(before, subcommand, required, after)| {
            let mut line: Vec<String> = before.into_iter().flatten().collect();
            line.push(subcommand.to_string());
            line.extend(required);
            let mut seen: Vec<String> = line.iter().filter(|w| w.starts_with('-')).cloned().collect();
            for flag in after {
                // Clean lines give each flag once (clap refuses most flags given twice).
                let name = flag[0].split('=').next().unwrap_or_default().to_string();
                if mode == Mode::Clean && seen.contains(&name) {
                    continue;
                }
                seen.push(name);
                line.extend(flag);
            }
            line
        })
}

// ---- in process -------------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// Parsing and every value check: a `Cli`, or a clap error with exit 0 (help) or 2.
    #[test]
    fn parsing_never_panics_and_only_exits_0_or_2(
        line in prop_oneof![command_line(Mode::Noisy), command_line(Mode::Clean)]
    ) {
        let words = std::iter::once("kubectl-microservice".to_string()).chain(line.iter().cloned());
        if let Err(err) = cli::parse_from(words) {
            prop_assert!(matches!(err.exit_code(), 0 | 2), "{line:?}: exit {}: {err}", err.exit_code());
        }
    }
}

/// Every duration and number flag, with the words its subcommand needs before it.
const NEGATIVE_TAKERS: &[(&[&str], &str, &str)] = &[
    (&["status"], "--request-timeout", "expected a duration ≥ 0"),
    (&["status"], "--skew", "expected a duration ≥ 0"),
    (&["status", "-w"], "--interval", "expected a duration ≥ 0"),
    (&["explain-events", "x"], "--skew", "expected a duration ≥ 0"),
    (&["explain-events", "x"], "--event-ttl", "expected a duration ≥ 0"),
    (&["logs", "--handler", "accept"], "--since", "expected a duration ≥ 0"),
    (
        &["logs", "--handler", "accept"],
        "--run-timeout",
        "expected a duration ≥ 0",
    ),
    (
        &["logs", "--handler", "accept"],
        "--last",
        "expected a number of runs ≥ 1",
    ),
    (
        &["operate"],
        "--max-concurrent",
        "expected a whole number from 1 to 65535",
    ),
    (&["operate"], "--request-timeout", "expected a duration ≥ 0"),
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// A negative value (`-5s`, `-1`) is the flag's value, refused by its parser with what was
    /// expected (exit 2), never clap's "unexpected argument '-5' found" (issue 14 item 5).
    #[test]
    fn negative_values_are_refused_by_the_flags_parser(
        (before, flag, expected) in select(NEGATIVE_TAKERS.to_vec()),
        value in ("-[0-9]{1,8}(\\.[0-9]{1,3})?", select(vec!["", "ns", "us", "ms", "s", "m", "h"]))
            .prop_map(|(n, u)| format!("{n}{u}")),
    ) {
        let words = std::iter::once("kubectl-microservice")
            .chain(before.iter().copied())
            .chain([flag, value.as_str()]);
        let err = cli::parse_from(words).unwrap_err();
        let text = err.to_string();
        prop_assert_eq!(err.exit_code(), 2);
        prop_assert!(!text.contains("unexpected argument"), "{flag} {value}: {text}");
        prop_assert!(
            text.starts_with(&format!("error: invalid value '{value}' for '{flag} <")),
            "{flag} {value}: {text}"
        );
        prop_assert!(text.contains(expected), "{flag} {value}: {text}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// `W[.F]UNIT` is exactly W·unit + ⌊0.F·unit⌋ nanoseconds, accepted up to kubectl's maximum.
    #[test]
    fn durations_are_exact_and_bounded(
        whole in "[0-9]{1,24}",
        fraction in prop::option::of("[0-9]{0,12}"),
        (unit, nanos) in select(vec![("ns", 1u128), ("us", 1_000), ("µs", 1_000), ("ms", 1_000_000),
            ("s", 1_000_000_000), ("m", 60_000_000_000), ("h", 3_600_000_000_000)]),
    ) {
        let input = match &fraction {
            Some(f) => format!("{whole}.{f}{unit}"),
            None => format!("{whole}{unit}"),
        };
        let w: u128 = whole.parse().unwrap();
        let (numerator, scale) = match &fraction {
            Some(f) if !f.is_empty() => (f.parse::<u128>().unwrap(), 10u128.pow(f.len() as u32)),
            _ => (0, 1),
        };
        let expected = w * nanos + numerator * nanos / scale;
        match parse_duration(&input) {
            Ok(d) => prop_assert_eq!(d.as_nanos(), expected, "{}", input),
            Err(e) => {
                prop_assert!(expected > MAX_DURATION.as_nanos(), "{input}: {e}");
                prop_assert_eq!(e, "expected at most 2562047h (about 292 years, kubectl's limit)");
            }
        }
    }

    /// Any text: a duration no longer than the maximum, or an error; never a panic.
    #[test]
    fn any_text_is_a_duration_or_an_error(input in duration(Mode::Noisy)) {
        if let Ok(d) = parse_duration(&input) {
            prop_assert!(d <= MAX_DURATION, "{input}");
        }
    }

    /// The name checks agree with Kubernetes' patterns (`IsDNS1123Label`, `IsDNS1123Subdomain`).
    #[test]
    fn names_agree_with_kubernetes_patterns(
        input in prop_oneof![name(Mode::Noisy), "[a-z0-9.-]{0,80}", "[a-z0-9.-]{240,260}"]
    ) {
        let (label, subdomain) = kubernetes_patterns();
        prop_assert_eq!(names::is_dns_label(&input), input.len() <= 63 && label.is_match(&input), "{}", input);
        prop_assert_eq!(names::is_dns_subdomain(&input), input.len() <= 253 && subdomain.is_match(&input), "{}", input);
    }
}

/// Kubernetes' `dns1123LabelFmt` and `dns1123SubdomainFmt`, anchored; compiled once.
fn kubernetes_patterns() -> &'static (regex::Regex, regex::Regex) {
    static PATTERNS: std::sync::OnceLock<(regex::Regex, regex::Regex)> = std::sync::OnceLock::new();
    PATTERNS.get_or_init(|| {
        let label = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
        (
            regex::Regex::new(&format!("^{label}$")).unwrap(),
            regex::Regex::new(&format!("^{label}(\\.{label})*$")).unwrap(),
        )
    })
}

// ---- the binary -------------------------------------------------------------------------------

/// The longest a generated run may take: every run here ends at once (offline), so this only
/// catches a hang.
const RUN_LIMIT: Duration = Duration::from_secs(20);

/// Runs `line` offline with placeholders filled in; returns the exit code (None: killed after
/// [`RUN_LIMIT`] or by a signal) and stderr.
fn run_offline(line: &[String]) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = kubeconfig::write(dir.path(), "https://127.0.0.1:1");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let bundle = fixtures.join("bundles/healthy");
    let log = fixtures.join("kopf-1.38-real/ab-run1-create-update-shutdown.log");
    let fill = |word: &str| {
        word.replace("{KUBECONFIG}", &kubeconfig.display().to_string())
            .replace("{MISSING}", &dir.path().join("missing").display().to_string())
            .replace("{BUNDLE}", &bundle.display().to_string())
            .replace("{LOG}", &log.display().to_string())
            .replace("{DIR}", &dir.path().join("bundle").display().to_string())
    };
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let mut child = Command::new(BIN)
        .args(line.iter().map(|w| fill(w)))
        .env("KUBECONFIG", &kubeconfig)
        .env("HOME", &home)
        .env("NO_COLOR", "1")
        .env_remove("KUBERNETES_SERVICE_HOST")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut std::io::BufReader::new(stderr), &mut text);
        text
    });
    let start = Instant::now();
    let code = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code();
        }
        if start.elapsed() > RUN_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    (code, reader.join().unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(160))]

    /// The real binary, offline: no panic, exit 0–3, no hang.
    #[test]
    fn the_binary_never_panics_and_exits_0_to_3(
        line in prop_oneof![3 => command_line(Mode::Clean), 1 => command_line(Mode::Noisy)]
            .prop_filter("runs until stopped: -f over a file", |line| {
            !(line.iter().any(|w| w == "-f") && line.iter().any(|w| w.contains("{LOG}")))
        })
    ) {
        let (code, stderr) = run_offline(&line);
        prop_assert!(!stderr.contains("panicked"), "{line:?}: {stderr}");
        prop_assert!(matches!(code, Some(0..=3)), "{line:?}: exit {code:?}: {stderr}");
    }
}
