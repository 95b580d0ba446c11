//! The krew manifest: `plugin.yaml`, rendered by `scripts/release.sh manifest`, passes krew's own
//! validation, re-stated here from kubernetes-sigs/krew (read at db921d5):
//! - `internal/index/validation/validate.go` `ValidatePlugin`: apiVersion and kind, a safe name
//!   equal to the file's, a one-line shortDescription, at least one platform, a `v`-prefixed
//!   semantic version (`internal/installation/semver`, over apimachinery's `ParseSemantic`),
//!   and per platform uri, lowercase 64-hex sha256, bin, `files` nil or complete, and a non-empty
//!   selector on the keys `os` and `arch` only;
//! - `cmd/validate-krew-manifest`: the `.yaml` extension, every platform selecting a supported
//!   `<os, arch>`, no `<os, arch>` selected by two platforms. (Its install step, which needs krew
//!   itself, is not run here; `scripts/release.sh build` checks that the archive holds the `bin`
//!   and a LICENSE, which is what that step verifies.)

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde::Deserialize;
use serde_json::Value;

#[path = "support/release.rs"]
mod release;

mod krew {
    //! krew's rules, in krew's order and with krew's messages.

    use super::*;

    /// `index.Plugin`, decoded as krew decodes it (unknown fields ignored).
    #[derive(Debug, Default, Deserialize)]
    #[serde(default)]
    pub struct Plugin {
        #[serde(rename = "apiVersion")]
        pub api_version: String,
        pub kind: String,
        pub metadata: Metadata,
        pub spec: Spec,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(default)]
    pub struct Metadata {
        pub name: String,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(default)]
    pub struct Spec {
        pub version: String,
        #[serde(rename = "shortDescription")]
        pub short_description: String,
        pub description: String,
        pub caveats: String,
        pub homepage: String,
        pub platforms: Vec<Platform>,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(default)]
    pub struct Platform {
        pub uri: String,
        pub sha256: String,
        pub selector: Option<LabelSelector>,
        pub files: Option<Vec<FileOperation>>,
        pub bin: String,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(default)]
    pub struct FileOperation {
        pub from: String,
        pub to: String,
    }

    /// metav1.LabelSelector.
    #[derive(Debug, Default, Deserialize)]
    #[serde(default)]
    pub struct LabelSelector {
        #[serde(rename = "matchLabels")]
        pub match_labels: Option<BTreeMap<String, String>>,
        #[serde(rename = "matchExpressions")]
        pub match_expressions: Option<Vec<Requirement>>,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(default)]
    pub struct Requirement {
        pub key: String,
        pub operator: String,
        pub values: Vec<String>,
    }

    /// `allPlatforms()` of validate-krew-manifest.
    pub const ALL_PLATFORMS: [(&str, &str); 11] = [
        ("windows", "386"),
        ("windows", "amd64"),
        ("windows", "arm64"),
        ("linux", "386"),
        ("linux", "amd64"),
        ("linux", "arm"),
        ("linux", "arm64"),
        ("linux", "ppc64le"),
        ("darwin", "386"),
        ("darwin", "amd64"),
        ("darwin", "arm64"),
    ];

    const WINDOWS_FORBIDDEN: [&str; 22] = [
        "CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8", "COM9", "LPT1",
        "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9",
    ];

    fn is_safe_plugin_name(name: &str) -> bool {
        // Go's `^[\w-]+$`: ASCII word characters and dashes.
        !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            && !WINDOWS_FORBIDDEN.iter().any(|f| f.eq_ignore_ascii_case(name))
    }

    /// `semver.Parse`: a leading `v`, then apimachinery's `ParseSemantic`.
    pub fn parse_version(s: &str) -> Result<(), String> {
        if !s.starts_with('v') {
            return Err(format!("version string {s:?} not starting with 'v'"));
        }
        let version = regex::Regex::new(r"^\s*v?([0-9]+(?:\.[0-9]+)*)(.*)$").unwrap();
        let extra = regex::Regex::new(
            r"^(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?\s*$",
        )
        .unwrap();
        let parts = version
            .captures(s)
            .ok_or_else(|| format!("could not parse {s:?} as version"))?;
        let components: Vec<&str> = parts[1].split('.').collect();
        if components.len() != 3 {
            return Err(format!("illegal version string {s:?}"));
        }
        for c in &components {
            if c.starts_with('0') && *c != "0" {
                return Err(format!("illegal zero-prefixed version component {c:?} in {s:?}"));
            }
            c.parse::<u64>()
                .map_err(|e| format!("illegal non-numeric version component {c:?} in {s:?}: {e}"))?;
        }
        if !parts[2].is_empty() {
            let extras = extra
                .captures(&parts[2])
                .ok_or_else(|| format!("could not parse pre-release/metadata ({}) in version {s:?}", &parts[2]))?;
            for c in extras.get(1).map_or("", |m| m.as_str()).split('.') {
                if c.parse::<u64>().is_ok() && c.starts_with('0') && c != "0" {
                    return Err(format!("illegal zero-prefixed version component {c:?} in {s:?}"));
                }
            }
        }
        Ok(())
    }

    /// `validation.ValidatePlugin(name, p)`.
    pub fn validate_plugin(name: &str, p: &Plugin) -> Result<(), String> {
        if p.api_version != "krew.googlecontainertools.github.com/v1alpha2" {
            return Err(format!(
                "plugin manifest has apiVersion={:?}, not supported in this version of krew",
                p.api_version
            ));
        }
        if p.kind != "Plugin" {
            return Err(format!(
                "plugin manifest has kind={:?}, but only \"Plugin\" is supported",
                p.kind
            ));
        }
        if !is_safe_plugin_name(name) {
            return Err(format!(
                "the plugin name {name:?} is not allowed, must match \"^[\\w-]+$\""
            ));
        }
        if p.metadata.name != name {
            return Err(format!("plugin should be named {name:?}, not {:?}", p.metadata.name));
        }
        if p.spec.short_description.is_empty() {
            return Err("should have a short description".into());
        }
        if p.spec.short_description.contains(['\r', '\n']) {
            return Err("should not have line breaks in short description".into());
        }
        if p.spec.platforms.is_empty() {
            return Err("should have a platform specified".into());
        }
        if p.spec.version.is_empty() {
            return Err("should have a version specified".into());
        }
        parse_version(&p.spec.version).map_err(|e| format!("failed to parse plugin version: {e}"))?;
        for pl in &p.spec.platforms {
            validate_platform(pl).map_err(|e| format!("platform ({pl:?}) is badly constructed: {e}"))?;
        }
        Ok(())
    }

    fn validate_platform(p: &Platform) -> Result<(), String> {
        if p.uri.is_empty() {
            return Err("`uri` has to be set".into());
        }
        if p.sha256.is_empty() {
            return Err("`sha256` sum has to be set".into());
        }
        let hex = p.sha256.len() == 64 && p.sha256.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f'));
        if !hex {
            return Err(format!(
                "`sha256` value {} is not valid, must match pattern ^[a-f0-9]{{64}}$",
                p.sha256
            ));
        }
        if p.bin.is_empty() {
            return Err("`bin` has to be set".into());
        }
        if let Some(files) = &p.files {
            if files.is_empty() {
                return Err("`files` is invalid: `files` has to be unspecified or non-empty".into());
            }
            for op in files {
                if op.from.is_empty() {
                    return Err("`files` is invalid: `from` field has to be set".into());
                } else if op.to.is_empty() {
                    return Err("`files` is invalid: `to` field has to be set".into());
                }
            }
        }
        validate_selector(p.selector.as_ref()).map_err(|e| format!("invalid platform selector: {e}"))
    }

    fn validate_selector(sel: Option<&LabelSelector>) -> Result<(), String> {
        let Some(sel) = sel else {
            return Err("nil selector is not supported".into());
        };
        let expressions = sel.match_expressions.as_deref().unwrap_or_default();
        if sel.match_labels.is_none() && expressions.is_empty() {
            return Err("empty selector is not supported".into());
        }
        let keys = sel
            .match_labels
            .iter()
            .flat_map(|m| m.keys())
            .chain(expressions.iter().map(|e| &e.key));
        for key in keys {
            if key != "os" && key != "arch" {
                return Err(format!("key {key:?} not supported"));
            }
        }
        if sel.match_labels.as_ref().is_some_and(|m| m.is_empty()) {
            return Err("`matchLabels` specified but empty".into());
        }
        if sel.match_expressions.as_ref().is_some_and(|e| e.is_empty()) {
            return Err("`matchExpressions` specified but empty".into());
        }
        Ok(())
    }

    /// `selectorMatchesOSArch`: metav1.LabelSelectorAsSelector, then a match against
    /// `{os, arch}`; a selector that does not convert matches nothing.
    pub fn selector_matches(sel: Option<&LabelSelector>, (os, arch): (&str, &str)) -> bool {
        let Some(sel) = sel else { return false };
        let label = |key: &str| match key {
            "os" => Some(os),
            "arch" => Some(arch),
            _ => None,
        };
        let labels_match = sel
            .match_labels
            .iter()
            .flatten()
            .all(|(k, v)| label(k) == Some(v.as_str()));
        let expressions_match = sel.match_expressions.iter().flatten().all(|r| {
            let value = label(&r.key);
            match (r.operator.as_str(), r.values.is_empty()) {
                ("In", false) => value.is_some_and(|v| r.values.iter().any(|x| x == v)),
                ("NotIn", false) => value.is_none_or(|v| !r.values.iter().any(|x| x == v)),
                ("Exists", true) => value.is_some(),
                ("DoesNotExist", true) => value.is_none(),
                _ => false,
            }
        });
        labels_match && expressions_match
    }

    /// validate-krew-manifest without its install step: decode (`ReadPluginFromFile` also runs
    /// `ValidatePlugin` under the manifest's own name), the extension, `ValidatePlugin` under the
    /// file's name, each platform used, no overlap.
    pub fn validate_manifest_file(path: &Path) -> Result<Plugin, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("failed to read plugin file: {e}"))?;
        let p: Plugin = serde_saphyr::from_str(&text).map_err(|e| format!("failed to parse yaml file: {e}"))?;
        validate_plugin(&p.metadata.name, &p).map_err(|e| format!("plugin manifest validation error: {e}"))?;
        let file_name = path.file_name().unwrap().to_string_lossy();
        let (stem, extension) = match file_name.rfind('.') {
            Some(at) => (&file_name[..at], &file_name[at..]),
            None => (&file_name[..], ""),
        };
        if extension != ".yaml" {
            return Err(format!("expected manifest extension \".yaml\" but found {extension:?}"));
        }
        validate_plugin(stem, &p).map_err(|e| format!("plugin validation error: {e}"))?;
        for (i, pl) in p.spec.platforms.iter().enumerate() {
            if !ALL_PLATFORMS
                .iter()
                .any(|env| selector_matches(pl.selector.as_ref(), *env))
            {
                return Err(format!(
                    "spec.platform[{i}]'s selector doesn't match any supported platforms"
                ));
            }
        }
        for env in ALL_PLATFORMS {
            let matching: Vec<usize> = (0..p.spec.platforms.len())
                .filter(|i| selector_matches(p.spec.platforms[*i].selector.as_ref(), env))
                .collect();
            if matching.len() > 1 {
                return Err(format!(
                    "overlapping platform selectors found: multiple spec.platforms (at indexes {matching:?}) have overlapping selectors that select {env:?}"
                ));
            }
        }
        Ok(p)
    }
}

use release::{REPO, VERSION};
/// The platforms plugin.yaml offers, as `<os>_<arch>`.
const PLATFORMS: [&str; 5] = [
    "linux_amd64",
    "linux_arm64",
    "darwin_amd64",
    "darwin_arm64",
    "windows_amd64",
];

/// The Rust target `scripts/release.sh --all-platforms` builds for each platform.
const TARGETS: [(&str, &str); 5] = [
    ("linux_amd64", "x86_64-unknown-linux-musl"),
    ("linux_arm64", "aarch64-unknown-linux-musl"),
    ("darwin_amd64", "x86_64-apple-darwin"),
    ("darwin_arm64", "aarch64-apple-darwin"),
    ("windows_amd64", "x86_64-pc-windows-gnu"),
];

/// krew takes `.zip` and `.tar.gz` alike; Windows users get the `.zip` they expect.
fn archive_name(os_arch: &str) -> String {
    if os_arch.starts_with("windows") {
        format!("kubectl-microservice_{VERSION}_{os_arch}.zip")
    } else {
        format!("kubectl-microservice_{VERSION}_{os_arch}.tar.gz")
    }
}

fn bin_name(os_arch: &str) -> &'static str {
    if os_arch.starts_with("windows") {
        "kubectl-microservice.exe"
    } else {
        "kubectl-microservice"
    }
}

/// Writes a stand-in archive per platform (distinct bytes: the renderer only hashes them).
fn fake_archives(dist: &Path, platforms: &[&str]) -> BTreeMap<String, String> {
    let mut shas = BTreeMap::new();
    for os_arch in platforms {
        let bytes = format!("stand-in archive for {os_arch}\n");
        std::fs::write(dist.join(archive_name(os_arch)), &bytes).unwrap();
        let digest = ring::digest::digest(&ring::digest::SHA256, bytes.as_bytes());
        let hex: String = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
        shas.insert(os_arch.to_string(), hex);
    }
    shas
}

/// Extracts a `.tar.gz` or `.zip` as krew does: everything, into `into`.
fn extract(archive: &Path, into: &Path) {
    let status = if archive.extension().is_some_and(|e| e == "zip") {
        Command::new("unzip")
            .arg("-q")
            .arg(archive)
            .arg("-d")
            .arg(into)
            .status()
    } else {
        Command::new("tar")
            .arg("-xzf")
            .arg(archive)
            .arg("-C")
            .arg(into)
            .status()
    }
    .unwrap();
    assert!(status.success(), "extracting {}", archive.display());
}

fn render(dist: &Path) -> Output {
    Command::new("bash")
        .arg(Path::new(REPO).join("scripts/release.sh"))
        .args(["manifest", "--dist"])
        .arg(dist)
        .output()
        .expect("bash runs scripts/release.sh")
}

fn os_arch(p: &krew::Platform) -> String {
    let labels = p
        .selector
        .as_ref()
        .and_then(|s| s.match_labels.as_ref())
        .expect("matchLabels");
    format!("{}_{}", labels["os"], labels["arch"])
}

#[test]
fn the_rendered_manifest_passes_krews_validation_with_the_archives_sha256() {
    let dist = tempfile::tempdir().unwrap();
    let shas = fake_archives(dist.path(), &PLATFORMS);
    let output = render(dist.path());
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let manifest = dist.path().join("microservice.yaml");
    let plugin = krew::validate_manifest_file(&manifest).unwrap_or_else(|e| panic!("{}: {e}", manifest.display()));

    assert_eq!(plugin.metadata.name, "microservice");
    assert_eq!(plugin.spec.version, format!("v{VERSION}"));
    assert!(plugin.spec.homepage.starts_with("https://"));
    assert!(!plugin.spec.description.is_empty());
    for needed in [
        "kubectl_complete-microservice",
        "completion kubectl",
        "chmod +x",
        "1.26",
    ] {
        assert!(
            plugin.spec.caveats.contains(needed),
            "caveats lack {needed:?}:\n{}",
            plugin.spec.caveats
        );
    }
    let rendered: Vec<String> = plugin.spec.platforms.iter().map(os_arch).collect();
    assert_eq!(rendered, PLATFORMS);
    for p in &plugin.spec.platforms {
        let os_arch = os_arch(p);
        assert_eq!(p.sha256, shas[&os_arch], "{os_arch}");
        assert!(
            p.uri.ends_with(&format!("/v{VERSION}/{}", archive_name(&os_arch))),
            "{}",
            p.uri
        );
        assert_eq!(p.bin, bin_name(&os_arch));
        assert!(
            p.files.is_none(),
            "krew's default (everything, so LICENSE too) is meant"
        );
    }
    let text = std::fs::read_to_string(&manifest).unwrap();
    assert!(!text.contains('@'), "placeholders left:\n{text}");
}

/// Platforms whose archive was not built are left out, and said so; the rest stays valid.
#[test]
fn only_the_platforms_built_are_rendered() {
    let dist = tempfile::tempdir().unwrap();
    let shas = fake_archives(dist.path(), &["linux_amd64"]);
    let output = render(dist.path());
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("left out") && stderr.contains("darwin_arm64"),
        "{stderr}"
    );
    let plugin = krew::validate_manifest_file(&dist.path().join("microservice.yaml")).unwrap();
    assert_eq!(plugin.spec.platforms.len(), 1);
    assert_eq!(os_arch(&plugin.spec.platforms[0]), "linux_amd64");
    assert_eq!(plugin.spec.platforms[0].sha256, shas["linux_amd64"]);
}

#[test]
fn no_archive_means_no_manifest() {
    let dist = tempfile::tempdir().unwrap();
    // An archive of another version does not count.
    std::fs::write(dist.path().join("kubectl-microservice_9.9.9_linux_amd64.tar.gz"), "x").unwrap();
    let output = render(dist.path());
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("no archive of version") && stderr.contains(&dist.path().display().to_string()),
        "{stderr}"
    );
    assert!(!dist.path().join("microservice.yaml").exists());
}

/// The template offers linux and darwin on amd64 and arm64, and windows on amd64, each once.
#[test]
fn the_template_offers_each_platform_once() {
    let text = std::fs::read_to_string(Path::new(REPO).join("plugin.yaml")).unwrap();
    let plugin: krew::Plugin = serde_saphyr::from_str(&text).unwrap();
    let offered: Vec<String> = plugin.spec.platforms.iter().map(os_arch).collect();
    assert_eq!(offered, PLATFORMS);
    for (p, os_arch) in plugin.spec.platforms.iter().zip(PLATFORMS) {
        assert_eq!(
            p.sha256,
            format!("@SHA256_{os_arch}@"),
            "the renderer keys on this placeholder"
        );
    }
    let last_key = text
        .lines()
        .rfind(|l| l.starts_with("  ") && !l.starts_with("   ") && !l.starts_with("  -"));
    assert_eq!(
        last_key,
        Some("  platforms:"),
        "platforms must stay the last key of spec"
    );
}

/// The validator above is not lenient: each of krew's rules rejects what krew rejects.
#[test]
fn the_validator_rejects_what_krew_rejects() {
    let dist = tempfile::tempdir().unwrap();
    fake_archives(dist.path(), &PLATFORMS);
    assert!(render(dist.path()).status.success());
    let good: Value =
        serde_saphyr::from_str(&std::fs::read_to_string(dist.path().join("microservice.yaml")).unwrap()).unwrap();

    let check = |file: &str, mutate: &dyn Fn(&mut Value), expected: &str| {
        let mut doc = good.clone();
        mutate(&mut doc);
        let path: PathBuf = dist.path().join(file);
        std::fs::write(&path, serde_saphyr::to_string(&doc).unwrap()).unwrap();
        match krew::validate_manifest_file(&path) {
            Ok(_) => panic!("accepted, but krew rejects ({expected})"),
            Err(e) => assert!(e.contains(expected), "{e:?} does not say {expected:?}"),
        }
    };
    let m = "microservice.yaml";
    fn platform0(doc: &mut Value) -> &mut Value {
        &mut doc["spec"]["platforms"][0]
    }
    check(
        m,
        &|d| d["apiVersion"] = "krew.googlecontainertools.github.com/v1alpha1".into(),
        "apiVersion",
    );
    check(m, &|d| d["kind"] = "Plugins".into(), "kind=");
    check(
        "micro service.yaml",
        &|d| d["metadata"]["name"] = "micro service".into(),
        "is not allowed",
    );
    check("CON.yaml", &|d| d["metadata"]["name"] = "CON".into(), "is not allowed");
    check("other.yaml", &|_| {}, "plugin should be named \"other\"");
    check("microservice.yml", &|_| {}, "expected manifest extension");
    check(m, &|d| d["spec"]["shortDescription"] = "".into(), "short description");
    check(
        m,
        &|d| d["spec"]["shortDescription"] = "two\nlines".into(),
        "line breaks",
    );
    check(
        m,
        &|d| d["spec"]["platforms"] = Value::Array(vec![]),
        "platform specified",
    );
    check(m, &|d| d["spec"]["version"] = VERSION.into(), "not starting with 'v'");
    check(m, &|d| d["spec"]["version"] = "v0.1".into(), "illegal version string");
    check(m, &|d| d["spec"]["version"] = "v0.01.0".into(), "zero-prefixed");
    check(m, &|d| d["spec"]["version"] = "v1.0.0-rc.01".into(), "zero-prefixed");
    check(
        m,
        &|d| d["spec"]["version"] = "v1.0.0_beta".into(),
        "pre-release/metadata",
    );
    check(m, &|d| platform0(d)["uri"] = "".into(), "`uri` has to be set");
    check(m, &|d| platform0(d)["sha256"] = "".into(), "`sha256` sum has to be set");
    check(m, &|d| platform0(d)["sha256"] = "AB".repeat(32).into(), "is not valid");
    check(m, &|d| platform0(d)["sha256"] = "ab".repeat(31).into(), "is not valid");
    check(m, &|d| platform0(d)["bin"] = "".into(), "`bin` has to be set");
    check(
        m,
        &|d| platform0(d)["files"] = Value::Array(vec![]),
        "unspecified or non-empty",
    );
    check(
        m,
        &|d| platform0(d)["files"] = serde_saphyr::from_str("[{from: '*'}]").unwrap(),
        "`to` field",
    );
    check(
        m,
        &|d| platform0(d)["files"] = serde_saphyr::from_str("[{to: '.'}]").unwrap(),
        "`from` field",
    );
    check(m, &|d| platform0(d)["selector"] = Value::Null, "nil selector");
    check(
        m,
        &|d| platform0(d)["selector"] = serde_saphyr::from_str("{}").unwrap(),
        "empty selector",
    );
    check(
        m,
        &|d| platform0(d)["selector"]["matchLabels"]["distro"] = "debian".into(),
        "key \"distro\" not supported",
    );
    check(
        m,
        &|d| {
            platform0(d)["selector"] = serde_saphyr::from_str(
                "{matchLabels: {}, matchExpressions: [{key: os, operator: In, values: [linux]}]}",
            )
            .unwrap()
        },
        "`matchLabels` specified but empty",
    );
    check(
        m,
        &|d| platform0(d)["selector"]["matchLabels"]["os"] = "plan9".into(),
        "doesn't match any supported platforms",
    );
    check(
        m,
        &|d| platform0(d)["selector"]["matchLabels"]["arch"] = "arm64".into(),
        "overlapping",
    );
    check(
        m,
        &|d| {
            platform0(d)["selector"] =
                serde_saphyr::from_str("{matchExpressions: [{key: os, operator: In, values: [linux, darwin]}]}")
                    .unwrap()
        },
        "overlapping",
    );
}

#[test]
fn versions_parse_as_krew_parses_them() {
    for ok in ["v0.1.0", "v1.2.3-rc.1", "v1.2.3+build.7", "v10.0.0-alpha-1"] {
        assert_eq!(krew::parse_version(ok), Ok(()), "{ok}");
    }
    for bad in ["0.1.0", "v1", "v1.2.3.4", "v01.2.3", "vx.y.z", "v1.2.3-01"] {
        assert!(krew::parse_version(bad).is_err(), "{bad}");
    }
}

#[test]
fn selectors_match_as_label_selectors_do() {
    let sel = |yaml: &str| -> krew::LabelSelector { serde_saphyr::from_str(yaml).unwrap() };
    let linux_amd64 = ("linux", "amd64");
    assert!(krew::selector_matches(
        Some(&sel("{matchLabels: {os: linux}}")),
        linux_amd64
    ));
    assert!(!krew::selector_matches(
        Some(&sel("{matchLabels: {os: darwin}}")),
        linux_amd64
    ));
    assert!(krew::selector_matches(
        Some(&sel(
            "{matchExpressions: [{key: arch, operator: NotIn, values: [arm64]}]}"
        )),
        linux_amd64
    ));
    assert!(krew::selector_matches(
        Some(&sel("{matchExpressions: [{key: os, operator: Exists}]}")),
        linux_amd64
    ));
    // In without values does not convert: it matches nothing.
    assert!(!krew::selector_matches(
        Some(&sel("{matchExpressions: [{key: os, operator: In}]}")),
        linux_amd64
    ));
    assert!(!krew::selector_matches(None, linux_amd64));
}

/// With `KMS_RELEASE_DIST=dist` (after `scripts/release.sh`): the real manifest validates, each
/// of its platforms has its archive in that directory with the manifest's sha256, and the
/// archive installs as krew installs it: everything extracted (no `files`: krew's default
/// `{from: "*", to: "."}`), the `bin` present and executable, and a license file among the
/// installed files (validate-krew-manifest's `validateLicenseFileExists`). The archive of this
/// machine's platform also runs: `--version` prints this version.
///
/// `#[ignore]`d (a plain `cargo test` lists it as ignored): run it with `--ignored`; without
/// `KMS_RELEASE_DIST` it then fails saying so.
#[test]
#[ignore = "needs KMS_RELEASE_DIST (after scripts/release.sh)"]
fn the_release_in_kms_release_dist_installs_as_krew_would() {
    let dist = std::env::var_os("KMS_RELEASE_DIST")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            panic!(
                "KMS_RELEASE_DIST is not set: run scripts/release.sh, then \
                 KMS_RELEASE_DIST=dist cargo test --test krew_manifest -- --ignored \
                 (or leave this test out with `--skip kms_release_dist`)"
            )
        });
    let dist = if dist.is_absolute() {
        dist
    } else {
        Path::new(REPO).join(dist)
    };
    let plugin = krew::validate_manifest_file(&dist.join("microservice.yaml")).unwrap();
    assert!(!plugin.spec.platforms.is_empty());
    let host = match (std::env::consts::OS, std::env::consts::ARCH) {
        (os, "x86_64") => format!("{os}_amd64"),
        (os, "aarch64") => format!("{os}_arm64"),
        (os, arch) => format!("{os}_{arch}"),
    };
    for p in &plugin.spec.platforms {
        let os_arch = os_arch(p);
        let archive = dist.join(archive_name(&os_arch));
        let bytes = std::fs::read(&archive).unwrap_or_else(|e| panic!("{}: {e}", archive.display()));
        let digest = ring::digest::digest(&ring::digest::SHA256, &bytes);
        let hex: String = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(p.sha256, hex, "{}", archive.display());

        let install = tempfile::tempdir().unwrap();
        extract(&archive, install.path());
        let bin = install.path().join(&p.bin);
        assert!(bin.is_file(), "{os_arch}: no {} in the archive", p.bin);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_ne!(
                std::fs::metadata(&bin).unwrap().permissions().mode() & 0o111,
                0,
                "{os_arch}: bin not executable"
            );
        }
        let license_names = [
            "license",
            "license.txt",
            "license.md",
            "licenses",
            "licenses.txt",
            "licenses.md",
            "copying",
            "copying.txt",
        ];
        let has_license = std::fs::read_dir(install.path())
            .unwrap()
            .any(|e| license_names.contains(&e.unwrap().file_name().to_string_lossy().to_lowercase().as_str()));
        assert!(has_license, "{os_arch}: no LICENSE among the installed files");
        if os_arch == host {
            let output = Command::new(&bin).arg("--version").output().unwrap();
            let printed = String::from_utf8_lossy(&output.stdout);
            assert!(
                printed.starts_with(&format!("kubectl-microservice {VERSION} (commit ")),
                "{printed}"
            );
        }
    }
}

fn sorted(mut lines: Vec<String>) -> Vec<String> {
    lines.sort();
    lines
}

fn version_line() -> String {
    format!("kubectl-microservice {VERSION} (commit 0123456789ab)\n")
}

/// Packs `binary` for each platform with `scripts/release.sh build --target T --binary FILE`.
fn pack_all(dist: &Path, binary: &Path) {
    for (os_arch, triple) in TARGETS {
        let output = release::release(&[
            "build",
            "--target",
            triple,
            "--binary",
            binary.to_str().unwrap(),
            "--dist",
            dist.to_str().unwrap(),
        ]);
        assert!(output.status.success(), "{os_arch}: {}", release::stderr(&output));
    }
}

/// The script's own archives for the five platforms (a stand-in binary packed with `build
/// --binary`, no toolchain needed): each holds exactly its `bin`, LICENSE and README.md, owned by
/// root with the binary executable; windows's is a `.zip` holding `kubectl-microservice.exe`; the
/// rendered manifest passes krew's rules with each archive's real sha256 (also in its `.sha256`);
/// packing again gives the same bytes.
#[test]
fn the_five_platforms_are_packed_rendered_and_reproducible() {
    let work = tempfile::tempdir().unwrap();
    let binary = work.path().join("stand-in");
    release::write_executable(&binary, &release::static_elf(release::EM_X86_64, &version_line()));
    let dist = work.path().join("dist");
    pack_all(&dist, &binary);
    let output = render(&dist);
    assert!(output.status.success(), "{}", release::stderr(&output));
    assert!(
        !release::stderr(&output).contains("left out"),
        "{}",
        release::stderr(&output)
    );
    let plugin = krew::validate_manifest_file(&dist.join("microservice.yaml")).unwrap();
    let rendered: Vec<String> = plugin.spec.platforms.iter().map(os_arch).collect();
    assert_eq!(rendered, PLATFORMS);

    let license = std::fs::read(Path::new(REPO).join("LICENSE")).unwrap();
    for p in &plugin.spec.platforms {
        let os_arch = os_arch(p);
        let archive = dist.join(archive_name(&os_arch));
        let bytes = std::fs::read(&archive).unwrap_or_else(|e| panic!("{}: {e}", archive.display()));
        let sha = release::sha256_hex(&bytes);
        assert_eq!(p.sha256, sha, "{os_arch}");
        let sidecar = std::fs::read_to_string(format!("{}.sha256", archive.display())).unwrap();
        assert_eq!(sidecar, format!("{sha}  {}\n", archive_name(&os_arch)));
        assert_eq!(p.bin, bin_name(&os_arch));

        let mut expected = vec![bin_name(&os_arch).to_string(), "LICENSE".into(), "README.md".into()];
        expected.sort();
        if os_arch.starts_with("windows") {
            assert_eq!(&bytes[..4], b"PK\x03\x04", "{os_arch}: a zip");
            assert_eq!(sorted(release::listing("unzip", &["-Z1"], &archive)), expected);
        } else {
            assert_eq!(&bytes[..2], b"\x1f\x8b", "{os_arch}: gzip");
            assert_eq!(sorted(release::listing("tar", &["-tzf"], &archive)), expected);
            for line in release::listing("tar", &["--numeric-owner", "-tvzf"], &archive) {
                assert!(line.contains(" 0/0 "), "{os_arch}: not owned by root: {line}");
                assert!(
                    line.contains(" 2026-01-01 00:00"),
                    "{os_arch}: not SOURCE_DATE_EPOCH: {line}"
                );
                if line.ends_with(" kubectl-microservice") {
                    assert!(line.starts_with("-rwxr-xr-x"), "{os_arch}: {line}");
                } else {
                    assert!(line.starts_with("-rw-r--r--"), "{os_arch}: {line}");
                }
            }
        }
        let install = tempfile::tempdir().unwrap();
        extract(&archive, install.path());
        assert_eq!(
            std::fs::read(install.path().join(bin_name(&os_arch))).unwrap(),
            std::fs::read(&binary).unwrap(),
            "{os_arch}"
        );
        assert_eq!(std::fs::read(install.path().join("LICENSE")).unwrap(), license);
    }

    let again = work.path().join("again");
    pack_all(&again, &binary);
    for os_arch in PLATFORMS {
        assert_eq!(
            std::fs::read(dist.join(archive_name(os_arch))).unwrap(),
            std::fs::read(again.join(archive_name(os_arch))).unwrap(),
            "{os_arch}: packing twice gave different bytes"
        );
    }
}

/// `build --binary` runs a binary of this machine's platform before packing it: one that prints
/// another version is refused, and nothing is written.
#[test]
fn build_refuses_a_binary_of_another_version() {
    let work = tempfile::tempdir().unwrap();
    let binary = work.path().join("stand-in");
    release::write_executable(
        &binary,
        &release::static_elf(release::EM_X86_64, "kubectl-microservice 9.9.9 (commit 0123456789ab)\n"),
    );
    let dist = work.path().join("dist");
    let output = release::release(&[
        "build",
        "--target",
        "x86_64-unknown-linux-musl",
        "--binary",
        binary.to_str().unwrap(),
        "--dist",
        dist.to_str().unwrap(),
    ]);
    if !(cfg!(target_os = "linux") && cfg!(target_arch = "x86_64")) {
        return; // the stand-in runs only on linux/amd64
    }
    assert_eq!(output.status.code(), Some(1), "{}", release::stderr(&output));
    assert!(
        release::stderr(&output).contains(&format!("expected version {VERSION}")),
        "{}",
        release::stderr(&output)
    );
    assert!(!dist.join(archive_name("linux_amd64")).exists());
}

/// An archive as the script writes it, from any file: to give `verify` what `build` refuses.
fn hand_packed(dist: &Path, os_arch: &str, binary: &[u8]) {
    let stage = tempfile::tempdir().unwrap();
    release::write_executable(&stage.path().join(bin_name(os_arch)), binary);
    for file in ["LICENSE", "README.md"] {
        std::fs::copy(Path::new(REPO).join(file), stage.path().join(file)).unwrap();
    }
    std::fs::create_dir_all(dist).unwrap();
    let archive = dist.join(archive_name(os_arch));
    let status = Command::new("tar")
        .arg("-czf")
        .arg(&archive)
        .arg("-C")
        .arg(stage.path())
        .args([bin_name(os_arch), "LICENSE", "README.md"])
        .status()
        .unwrap();
    assert!(status.success());
    let sha = release::sha256_hex(&std::fs::read(&archive).unwrap());
    std::fs::write(
        format!("{}.sha256", archive.display()),
        format!("{sha}  {}\n", archive_name(os_arch)),
    )
    .unwrap();
}

fn verify(dist: &Path, extra: &[&str]) -> (Option<i32>, String, String) {
    let mut args = vec!["verify", "--dist", dist.to_str().unwrap()];
    args.extend(extra);
    let output = release::release(&args);
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        release::stderr(&output),
    )
}

/// The row of `platform` in verify's table.
fn row<'a>(table: &'a str, platform: &str) -> &'a str {
    table
        .lines()
        .find(|l| l.starts_with(platform))
        .unwrap_or_else(|| panic!("no {platform} row in:\n{table}"))
}

/// `verify` on linux/amd64 (the platform it can run here without emulators; the others need
/// cross toolchains, qemu or wine: `scripts/release.sh --all-platforms` runs them): a static
/// x86-64 binary printing this version passes; a tampered archive, a dynamically linked binary
/// and one printing another version each fail with the reason in the table; with
/// --all-platforms, the four platforms not built fail too.
#[test]
fn verify_checks_sha256_format_and_version() {
    if !(cfg!(target_os = "linux") && cfg!(target_arch = "x86_64")) {
        return; // the stand-in runs only on linux/amd64
    }
    let work = tempfile::tempdir().unwrap();
    let dist = work.path().join("dist");
    let good = release::static_elf(release::EM_X86_64, &version_line());
    hand_packed(&dist, "linux_amd64", &good);
    assert!(render(&dist).status.success());
    let (code, table, stderr) = verify(&dist, &[]);
    assert_eq!(code, Some(0), "{table}{stderr}");
    assert!(table.starts_with("PLATFORM "), "{table}");
    let line = row(&table, "linux_amd64");
    let sha = release::sha256_hex(&std::fs::read(dist.join(archive_name("linux_amd64"))).unwrap());
    assert!(line.contains(&format!("ok {}", &sha[..12])), "{line}");
    assert!(line.contains("ELF 64-bit x86-64, static"), "{line}");
    assert!(line.contains(&format!("ran: {}", version_line().trim_end())), "{line}");

    let (code, table, _) = verify(&dist, &["--all-platforms"]);
    assert_eq!(code, Some(1), "{table}");
    for missing in ["linux_arm64", "darwin_amd64", "darwin_arm64", "windows_amd64"] {
        assert!(row(&table, missing).contains("FAIL: not built"), "{table}");
    }

    // The archive replaced after the manifest was rendered.
    hand_packed(
        &dist,
        "linux_amd64",
        &release::static_elf(release::EM_X86_64, &format!("{}\n", version_line())),
    );
    let (code, table, _) = verify(&dist, &[]);
    assert_eq!(code, Some(1), "{table}");
    assert!(row(&table, "linux_amd64").contains("FAIL: manifest says"), "{table}");

    // Another version.
    hand_packed(
        &dist,
        "linux_amd64",
        &release::static_elf(release::EM_X86_64, "kubectl-microservice 9.9.9 (commit 0123456789ab)\n"),
    );
    assert!(render(&dist).status.success());
    let (code, table, _) = verify(&dist, &[]);
    assert_eq!(code, Some(1), "{table}");
    assert!(
        row(&table, "linux_amd64").contains("FAIL: --version printed"),
        "{table}"
    );

    // Dynamically linked: this test's own executable.
    let dynamic = std::fs::read(std::env::current_exe().unwrap()).unwrap();
    hand_packed(&dist, "linux_amd64", &dynamic);
    assert!(render(&dist).status.success());
    let (code, table, _) = verify(&dist, &[]);
    assert_eq!(code, Some(1), "{table}");
    assert!(row(&table, "linux_amd64").contains("FAIL: not static"), "{table}");

    // An arm64 binary in the amd64 archive.
    hand_packed(
        &dist,
        "linux_amd64",
        &release::static_elf(release::EM_AARCH64, &version_line()),
    );
    assert!(render(&dist).status.success());
    let (code, table, _) = verify(&dist, &[]);
    assert_eq!(code, Some(1), "{table}");
    assert!(
        row(&table, "linux_amd64").contains("FAIL: not a 64-bit x86-64 ELF"),
        "{table}"
    );
}
