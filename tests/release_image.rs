//! The operator image: `scripts/release.sh image` writes an OCI image layout (image-spec v1.1:
//! `oci-layout`, `index.json`, content-addressed `blobs/sha256/`) in a tar, plus the
//! docker-archive `manifest.json` over the same blobs, so that `ctr images import`,
//! `podman load`, `skopeo` and `docker load` (every version) take it. Checked here from a
//! stand-in static binary, offline and without a container runtime: every digest and size, the
//! config the Deployment of `manifests` relies on (the bare `kubectl-microservice` command found
//! on PATH, user 65532), the one layer, the name, and byte-for-byte reproducibility.
//! (Loading into docker, podman and containerd was checked by hand; see README "Release".)

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

#[path = "support/release.rs"]
mod release;

use release::{VERSION, untar};

const IMAGE_NAME: &str = "kubectl-microservice_{VERSION}_image_linux_amd64.tar";

fn image_file(dist: &Path) -> PathBuf {
    dist.join(IMAGE_NAME.replace("{VERSION}", VERSION))
}

fn version_line() -> String {
    format!("kubectl-microservice {VERSION} (commit 0123456789ab)\n")
}

/// Runs `image --binary FILE --dist DIST [extra...]`.
fn image(dist: &Path, binary: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "image",
        "--binary",
        binary.to_str().unwrap(),
        "--dist",
        dist.to_str().unwrap(),
    ];
    args.extend(extra);
    release::release(&args)
}

fn stand_in(dir: &Path) -> PathBuf {
    let binary = dir.join("stand-in");
    release::write_executable(&binary, &release::static_elf(release::EM_X86_64, &version_line()));
    binary
}

fn json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}\n{text}", path.display()))
}

/// The blob a descriptor points at, after checking that its digest and size are the blob's.
fn blob(layout: &Path, descriptor: &Value) -> PathBuf {
    let digest = descriptor["digest"].as_str().unwrap();
    let hex = digest.strip_prefix("sha256:").unwrap();
    let path = layout.join("blobs/sha256").join(hex);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{digest}: {e}"));
    assert_eq!(release::sha256_hex(&bytes), hex, "{digest}: content differs");
    assert_eq!(descriptor["size"].as_u64(), Some(bytes.len() as u64), "{digest}: size");
    path
}

/// `manifests` names this image by default: the script tags exactly that.
#[test]
fn the_image_is_tagged_with_the_default_image_of_manifests() {
    let output = release::release(&["image-ref"]);
    assert!(output.status.success(), "{}", release::stderr(&output));
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim_end(),
        kubectl_microservice::install::DEFAULT_IMAGE
    );
}

#[test]
fn the_image_archive_is_an_oci_layout_and_a_docker_archive_of_one_static_layer() {
    let work = tempfile::tempdir().unwrap();
    let binary = stand_in(work.path());
    let dist = work.path().join("dist");
    let output = image(&dist, &binary, &[]);
    assert!(output.status.success(), "{}", release::stderr(&output));
    let reference = kubectl_microservice::install::DEFAULT_IMAGE;

    let layout = work.path().join("layout");
    untar(&image_file(&dist), &layout, false);
    let mut entries = release::listing("tar", &["-tf"], &image_file(&dist));
    entries.retain(|e| !e.starts_with("blobs/sha256/") || e == "blobs/sha256/");
    assert_eq!(
        entries,
        ["oci-layout", "index.json", "manifest.json", "blobs/", "blobs/sha256/"]
    );
    assert_eq!(
        json(&layout.join("oci-layout")),
        serde_json::json!({"imageLayoutVersion": "1.0.0"})
    );

    // index.json: one linux/amd64 manifest, named for containerd and for podman/skopeo.
    let index = json(&layout.join("index.json"));
    assert_eq!(index["schemaVersion"], 2);
    assert_eq!(index["mediaType"], "application/vnd.oci.image.index.v1+json");
    let manifests = index["manifests"].as_array().unwrap();
    assert_eq!(manifests.len(), 1);
    let descriptor = &manifests[0];
    assert_eq!(descriptor["mediaType"], "application/vnd.oci.image.manifest.v1+json");
    assert_eq!(
        descriptor["platform"],
        serde_json::json!({"architecture": "amd64", "os": "linux"})
    );
    assert_eq!(descriptor["annotations"]["io.containerd.image.name"], reference);
    assert_eq!(
        descriptor["annotations"]["org.opencontainers.image.ref.name"],
        reference
    );

    let manifest = json(&blob(&layout, descriptor));
    assert_eq!(manifest["schemaVersion"], 2);
    assert_eq!(manifest["mediaType"], "application/vnd.oci.image.manifest.v1+json");
    assert_eq!(
        manifest["config"]["mediaType"],
        "application/vnd.oci.image.config.v1+json"
    );
    let config_path = blob(&layout, &manifest["config"]);
    let layers = manifest["layers"].as_array().unwrap();
    assert_eq!(layers.len(), 1, "FROM scratch: one layer");
    assert_eq!(layers[0]["mediaType"], "application/vnd.oci.image.layer.v1.tar+gzip");
    let layer_path = blob(&layout, &layers[0]);

    // The config: what the Deployment's container relies on.
    let config = json(&config_path);
    assert_eq!(config["os"], "linux");
    assert_eq!(config["architecture"], "amd64");
    assert_eq!(config["config"]["User"], "65532:65532");
    assert_eq!(
        config["config"]["Entrypoint"],
        serde_json::json!(["kubectl-microservice"])
    );
    assert_eq!(config["config"]["Cmd"], serde_json::json!(["operate"]));
    assert_eq!(config["config"]["Env"], serde_json::json!(["PATH=/usr/local/bin"]));
    assert_eq!(config["config"]["Labels"]["org.opencontainers.image.version"], VERSION);
    assert_eq!(config["created"], "2026-01-01T00:00:00Z", "SOURCE_DATE_EPOCH");
    // diff_ids are the digests of the uncompressed layers.
    let gunzipped = Command::new("gzip").arg("-dc").arg(&layer_path).output().unwrap();
    assert!(gunzipped.status.success());
    assert_eq!(
        config["rootfs"],
        serde_json::json!({"type": "layers", "diff_ids": [format!("sha256:{}", release::sha256_hex(&gunzipped.stdout))]})
    );

    // The layer: the binary at /usr/local/bin, owned by root, nothing else.
    let listed = release::listing("tar", &["--numeric-owner", "-tvzf"], &layer_path);
    let names: Vec<&str> = listed.iter().map(|l| l.rsplit(' ').next().unwrap()).collect();
    assert_eq!(
        names,
        [
            "usr/",
            "usr/local/",
            "usr/local/bin/",
            "usr/local/bin/kubectl-microservice"
        ]
    );
    for line in &listed {
        assert!(line.contains(" 0/0 "), "not owned by root: {line}");
        assert!(
            line.starts_with("drwxr-xr-x") || line.starts_with("-rwxr-xr-x"),
            "{line}"
        );
        assert!(line.contains(" 2026-01-01 00:00"), "not SOURCE_DATE_EPOCH: {line}");
    }
    let rootfs = work.path().join("rootfs");
    untar(&layer_path, &rootfs, true);
    assert_eq!(
        std::fs::read(rootfs.join("usr/local/bin/kubectl-microservice")).unwrap(),
        std::fs::read(&binary).unwrap()
    );

    // docker-archive manifest.json over the same blobs.
    let docker = json(&layout.join("manifest.json"));
    let hex = |p: &Path| p.file_name().unwrap().to_string_lossy().into_owned();
    assert_eq!(
        docker,
        serde_json::json!([{
            "Config": format!("blobs/sha256/{}", hex(&config_path)),
            "RepoTags": [reference],
            "Layers": [format!("blobs/sha256/{}", hex(&layer_path))],
        }])
    );
}

/// The Deployment that `manifests` prints runs this image as the image expects: its command is
/// the entrypoint's name (resolved through the image's PATH, as the image has no shell) and its
/// user is the image's.
#[test]
fn the_deployment_of_manifests_runs_what_the_image_holds() {
    let work = tempfile::tempdir().unwrap();
    let binary = stand_in(work.path());
    let dist = work.path().join("dist");
    assert!(image(&dist, &binary, &[]).status.success());
    let layout = work.path().join("layout");
    untar(&image_file(&dist), &layout, false);
    let index = json(&layout.join("index.json"));
    let manifest = json(&blob(&layout, &index["manifests"][0]));
    let config = json(&blob(&layout, &manifest["config"]));

    let output = Command::new(env!("CARGO_BIN_EXE_kubectl-microservice"))
        .args([
            "manifests",
            "--namespace",
            "ops",
            "--watch-namespace",
            "todo",
            "-o",
            "json",
        ])
        .output()
        .unwrap();
    assert!(output.status.success());
    let list: Value = serde_json::from_slice(&output.stdout).unwrap();
    let deployment = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["kind"] == "Deployment")
        .unwrap();
    let pod = &deployment["spec"]["template"]["spec"];
    let container = &pod["containers"][0];
    assert_eq!(
        container["image"],
        index["manifests"][0]["annotations"]["io.containerd.image.name"]
    );
    assert_eq!(container["command"][0], config["config"]["Entrypoint"][0]);
    assert_eq!(container["command"][1], config["config"]["Cmd"][0]);
    let path = config["config"]["Env"][0]
        .as_str()
        .unwrap()
        .strip_prefix("PATH=")
        .unwrap();
    assert!(path.split(':').any(|d| d == "/usr/local/bin"), "{path}");
    assert_eq!(
        format!(
            "{}:{}",
            pod["securityContext"]["runAsUser"], pod["securityContext"]["runAsGroup"]
        ),
        config["config"]["User"].as_str().unwrap()
    );
}

/// The same inputs give the same bytes; another name changes only the names.
#[test]
fn the_image_archive_is_reproducible() {
    let work = tempfile::tempdir().unwrap();
    let binary = stand_in(work.path());
    let (a, b, c) = (work.path().join("a"), work.path().join("b"), work.path().join("c"));
    assert!(image(&a, &binary, &[]).status.success());
    assert!(image(&b, &binary, &[]).status.success());
    assert_eq!(
        std::fs::read(image_file(&a)).unwrap(),
        std::fs::read(image_file(&b)).unwrap(),
        "two runs gave different bytes"
    );
    let output = image(&c, &binary, &["--image", "registry.example.com:5000/team/kms:dev"]);
    assert!(output.status.success(), "{}", release::stderr(&output));
    let (layout_a, layout_c) = (work.path().join("la"), work.path().join("lc"));
    untar(&image_file(&a), &layout_a, false);
    untar(&image_file(&c), &layout_c, false);
    let (index_a, index_c) = (json(&layout_a.join("index.json")), json(&layout_c.join("index.json")));
    assert_eq!(
        index_c["manifests"][0]["annotations"]["io.containerd.image.name"],
        "registry.example.com:5000/team/kms:dev"
    );
    assert_eq!(
        json(&layout_c.join("manifest.json"))[0]["RepoTags"][0],
        "registry.example.com:5000/team/kms:dev"
    );
    assert_eq!(
        index_a["manifests"][0]["digest"], index_c["manifests"][0]["digest"],
        "the name is not part of the image"
    );
}

/// FROM scratch has no libc and no loader: a dynamically linked or non-amd64 binary is refused
/// (exit 1, nothing written), and so is a reference without a tag (exit 2).
#[test]
fn the_image_refuses_what_cannot_run_in_it() {
    let work = tempfile::tempdir().unwrap();
    let dist = work.path().join("dist");

    let dynamic = work.path().join("dynamic");
    release::write_executable(&dynamic, &std::fs::read(std::env::current_exe().unwrap()).unwrap());
    let output = image(&dist, &dynamic, &[]);
    assert_eq!(output.status.code(), Some(1), "{}", release::stderr(&output));
    assert!(
        release::stderr(&output).contains("dynamically linked"),
        "{}",
        release::stderr(&output)
    );

    let arm = work.path().join("arm64");
    release::write_executable(&arm, &release::static_elf(release::EM_AARCH64, &version_line()));
    let output = image(&dist, &arm, &[]);
    assert_eq!(output.status.code(), Some(1), "{}", release::stderr(&output));
    assert!(
        release::stderr(&output).contains("not a linux/amd64 program"),
        "{}",
        release::stderr(&output)
    );
    assert!(!image_file(&dist).exists());

    let binary = stand_in(work.path());
    for bad in ["ghcr.io/platform-example/kubectl-microservice", "GHCR.io/x/y:1", "x/y:"] {
        let output = image(&dist, &binary, &["--image", bad]);
        assert_eq!(output.status.code(), Some(2), "{bad}: {}", release::stderr(&output));
        assert!(
            release::stderr(&output).contains("is not an image reference with a tag"),
            "{bad}"
        );
    }
    assert!(!image_file(&dist).exists());
}
