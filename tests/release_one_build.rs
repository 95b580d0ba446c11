//! One build for the plugin and its image (issue 22, acceptance 2): `scripts/release.sh` with no
//! command compiles once and makes, from that one binary, the krew archive and manifest,
//! `dist/kubectl-microservice` (what README's first install path copies onto PATH) and the
//! operator image. Checked here with a stand-in static binary (`--binary`, no compile, always
//! run), and for real, by running README's first install block as written, with
//! `KMS_RELEASE_BUILD=1` (a release build: minutes; ignored otherwise).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

#[path = "support/release.rs"]
mod release;

use release::{REPO, VERSION, untar};

fn sha(path: &Path) -> String {
    release::sha256_hex(&std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
}

/// The sha256 of the binary in each place the release put one: `dist/kubectl-microservice`,
/// the linux/amd64 archive, the image's one layer; each must be there.
fn binaries(dist: &Path) -> [(String, String); 3] {
    let work = tempfile::tempdir().unwrap();
    let archive = dist.join(format!("kubectl-microservice_{VERSION}_linux_amd64.tar.gz"));
    untar(&archive, &work.path().join("archive"), true);
    let image = dist.join(format!("kubectl-microservice_{VERSION}_image_linux_amd64.tar"));
    let layout = work.path().join("image");
    untar(&image, &layout, false);
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(layout.join("manifest.json")).unwrap()).unwrap();
    let layer = layout.join(manifest[0]["Layers"][0].as_str().unwrap());
    untar(&layer, &work.path().join("layer"), true);
    [
        (
            "dist/kubectl-microservice".into(),
            sha(&dist.join("kubectl-microservice")),
        ),
        (
            archive.file_name().unwrap().to_string_lossy().into(),
            sha(&work.path().join("archive/kubectl-microservice")),
        ),
        (
            "the image's /usr/local/bin/kubectl-microservice".into(),
            sha(&work.path().join("layer/usr/local/bin/kubectl-microservice")),
        ),
    ]
}

/// The release with no command, given a binary: one archive, the manifest, the binary to copy and
/// the image, each holding that binary's bytes; nothing compiled.
#[test]
fn one_release_run_packs_one_binary_as_plugin_archive_and_image() {
    let dir = tempfile::tempdir().unwrap();
    let binary = dir.path().join("stand-in");
    release::write_executable(
        &binary,
        &release::static_elf(
            release::EM_X86_64,
            &format!("kubectl-microservice {VERSION} (commit 0123456789ab)\n"),
        ),
    );
    let dist = dir.path().join("dist");
    let out = release::release(&["--dist", dist.to_str().unwrap(), "--binary", binary.to_str().unwrap()]);
    let stderr = release::stderr(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("cargo build"), "{stderr}");
    assert!(dist.join("microservice.yaml").is_file(), "{stderr}");
    let want = sha(&binary);
    for (place, got) in binaries(&dist) {
        assert_eq!(got, want, "{place}");
    }
    let dist_binary = dist.join("kubectl-microservice");
    let printed = Command::new(&dist_binary).arg("--version").output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&printed.stdout),
        format!("kubectl-microservice {VERSION} (commit 0123456789ab)\n")
    );
    assert!(
        stderr.contains(&format!("wrote {}/kubectl-microservice", dist.display())),
        "{stderr}"
    );
    // Another target than this machine's: no binary to copy, no image, and both said.
    let other = dir.path().join("other");
    let aarch64 = dir.path().join("aarch64");
    release::write_executable(&aarch64, &release::static_elf(release::EM_AARCH64, "x\n"));
    let out = release::release(&[
        "--dist",
        other.to_str().unwrap(),
        "--target",
        "aarch64-unknown-linux-musl",
        "--binary",
        aarch64.to_str().unwrap(),
    ]);
    let stderr = release::stderr(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(!other.join("kubectl-microservice").exists());
    assert!(
        stderr.contains("no operator image: it holds the linux/amd64 build"),
        "{stderr}"
    );
}

/// The first ```sh block of README.md's `## Install`.
fn readme_install_block() -> String {
    let readme = std::fs::read_to_string(Path::new(REPO).join("README.md")).unwrap();
    let install = &readme[readme.find("\n## Install\n").expect("README has ## Install")..];
    let start = install.find("```sh\n").expect("a sh block under ## Install") + "```sh\n".len();
    let end = start + install[start..].find("```").unwrap();
    install[start..end].to_string()
}

/// README's first install path, run as written (from the repository, `HOME` a temporary
/// directory whose `~/.local/bin` is on PATH): `scripts/release.sh` compiles once (one `cargo
/// build --release`, one `Compiling kubectl-microservice`, or none when cargo finds it fresh),
/// the binary copied onto PATH answers `kubectl microservice --version` (through the kubectl of
/// `KMS_KUBECTL` or PATH; without one, the binary itself is asked, and that is said), and the
/// plugin, its archive and the image hold the same bytes.
#[test]
#[ignore = "needs KMS_RELEASE_BUILD=1 (a release build, minutes)"]
fn the_readme_install_builds_once_for_plugin_and_image() {
    if std::env::var_os("KMS_RELEASE_BUILD").is_none_or(|v| v != "1") {
        panic!(
            "KMS_RELEASE_BUILD is not 1: this test runs README's release build (minutes): \
             KMS_RELEASE_BUILD=1 cargo test --test release_one_build -- --ignored"
        );
    }
    let home = tempfile::tempdir().unwrap();
    let bin = home.path().join(".local/bin");
    let kubectl: Option<PathBuf> = std::env::var_os("KMS_KUBECTL")
        .map(PathBuf::from)
        .or_else(|| which("kubectl"));
    let mut block = readme_install_block();
    assert!(block.starts_with("scripts/release.sh"), "{block}");
    let mut path = vec![bin.clone()];
    match &kubectl {
        Some(k) => path.push(k.parent().unwrap().to_path_buf()),
        None => {
            eprintln!("no kubectl (KMS_KUBECTL or PATH): asking kubectl-microservice --version itself");
            block = block.replace("kubectl microservice --version", "kubectl-microservice --version");
        }
    }
    path.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
    // cargo and rustup keep their homes under the real HOME unless told.
    let real_home = PathBuf::from(std::env::var_os("HOME").expect("HOME is set"));
    let cargo_home = std::env::var_os("CARGO_HOME").map_or_else(|| real_home.join(".cargo"), PathBuf::from);
    let rustup_home = std::env::var_os("RUSTUP_HOME").map_or_else(|| real_home.join(".rustup"), PathBuf::from);
    let out = Command::new("bash")
        .env("CARGO_HOME", cargo_home)
        .env("RUSTUP_HOME", rustup_home)
        .args(["-euo", "pipefail", "-c", &block])
        .current_dir(REPO)
        .env("HOME", home.path())
        .env("PATH", std::env::join_paths(&path).unwrap())
        .output()
        .expect("bash runs");
    let stderr = release::stderr(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{block}\n{stdout}\n{stderr}");
    let builds = stderr.matches("release.sh: cargo build --release for").count();
    let compiles = stderr.matches("Compiling kubectl-microservice v").count();
    assert_eq!(builds, 1, "{stderr}");
    assert!(compiles <= 1, "{stderr}");
    assert!(
        stdout.starts_with(&format!("kubectl-microservice {VERSION} (commit ")),
        "{stdout}"
    );
    assert!(bin.join("kubectl-microservice").is_file());
    let dist = Path::new(REPO).join("dist");
    let copied = sha(&bin.join("kubectl-microservice"));
    for (place, got) in binaries(&dist) {
        assert_eq!(got, copied, "{place}");
    }
}

fn which(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}
