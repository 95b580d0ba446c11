#!/usr/bin/env bash
# Release archives and the krew manifest of kubectl-microservice.
#
#   scripts/release.sh [--dist DIR]                   build + pack for this machine, then render
#   scripts/release.sh build [--target TRIPLE] [--dist DIR]
#                                                     cargo build --release (for TRIPLE, default
#                                                     this machine's), then pack
#                                                     DIR/kubectl-microservice_<version>_<os>_<arch>.tar.gz
#                                                     (the binary, LICENSE, README.md) and its .sha256
#   scripts/release.sh manifest [--dist DIR] [--version X.Y.Z]
#                                                     render plugin.yaml into DIR/microservice.yaml
#                                                     with the sha256 of every archive of that version
#                                                     found in DIR; platforms without an archive are
#                                                     left out (and named on stderr)
#
# DIR defaults to dist/ in the repository; the version to the one in Cargo.toml. Each platform is
# built where its toolchain is (e.g. one CI runner per OS); copy the archives into one DIR and
# run `manifest` there to get one manifest with every platform's real sha256.
# Needs: cargo (for build), tar, gzip, and sha256sum or shasum.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
dist="$repo/dist"
target=""
version=""
stage=""
command="all"

usage() {
    sed -n '2,19s/^# \{0,1\}//p' "$0"
    exit 0
}

die() {
    echo "release.sh: $*" >&2
    exit 1
}

usage_error() {
    echo "release.sh: $*" >&2
    echo "run scripts/release.sh --help for usage" >&2
    exit 2
}

if [[ $# -gt 0 && $1 != -* ]]; then
    command=$1
    shift
fi
case $command in
    all | build | manifest) ;;
    *) usage_error "unknown command '$command': expected build, manifest, or nothing (both)" ;;
esac
while [[ $# -gt 0 ]]; do
    case $1 in
        --dist) [[ $# -ge 2 ]] || usage_error "--dist needs a directory"; dist=$2; shift 2 ;;
        --target) [[ $# -ge 2 ]] || usage_error "--target needs a Rust target triple"; target=$2; shift 2 ;;
        --version) [[ $# -ge 2 ]] || usage_error "--version needs a version such as 0.1.0"; version=$2; shift 2 ;;
        -h | --help) usage ;;
        *) usage_error "unknown option '$1'" ;;
    esac
done

cargo_version() {
    sed -n 's/^version = "\(.*\)"$/\1/p' "$repo/Cargo.toml" | head -n 1
}

[[ -n $version ]] || version=$(cargo_version)
# krew wants spec.version to be semver with a leading v: plugin.yaml writes v@VERSION@.
[[ $version =~ ^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)([-+][0-9A-Za-z.+-]+)?$ ]] \
    || usage_error "version '$version' is not semantic (expected e.g. 0.1.0, without a leading v)"

sha256_of() {
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum "$1" | cut -d ' ' -f 1
    elif command -v shasum >/dev/null 2>&1; then
        shasum -a 256 "$1" | cut -d ' ' -f 1
    else
        die "neither sha256sum nor shasum is installed"
    fi | tr 'A-F' 'a-f'
}

# krew's os/arch names (the GOOS/GOARCH values of its selectors) for a Rust target triple.
os_arch_of() {
    local triple=$1 os arch
    case $triple in
        x86_64-*) arch=amd64 ;;
        aarch64-*) arch=arm64 ;;
        i586-* | i686-*) arch=386 ;;
        arm-* | armv7-*) arch=arm ;;
        powerpc64le-*) arch=ppc64le ;;
        *) usage_error "no krew arch for target '$triple'" ;;
    esac
    case $triple in
        *-linux-*) os=linux ;;
        *-apple-darwin) os=darwin ;;
        *-windows-*) os=windows ;;
        *) usage_error "no krew os for target '$triple'" ;;
    esac
    echo "${os}_${arch}"
}

archive_name() {
    echo "kubectl-microservice_${version}_$1.tar.gz"
}

build() {
    local host triple os_arch bin_name target_dir binary archive listed epoch
    host=$(rustc -vV | sed -n 's/^host: //p')
    triple=${target:-$host}
    os_arch=$(os_arch_of "$triple")
    bin_name=kubectl-microservice
    [[ $os_arch == windows_* ]] && bin_name=kubectl-microservice.exe
    [[ $version == "$(cargo_version)" ]] || usage_error "--version $version differs from Cargo.toml's $(cargo_version): build packs what Cargo.toml says"

    echo "release.sh: cargo build --release for $triple ($os_arch)" >&2
    (cd "$repo" && cargo build --release --locked --bin kubectl-microservice ${target:+--target "$target"})
    target_dir=$(cd "$repo" && cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
    [[ -n $target_dir ]] || die "cannot find cargo's target directory"
    binary="$target_dir/${target:+$target/}release/$bin_name"
    [[ -f $binary ]] || die "cargo built no $binary"

    if [[ $triple == "$host" ]]; then
        local printed
        printed=$("$binary" --version)
        [[ $printed == "kubectl-microservice $version "* ]] || die "$binary --version printed '$printed', expected version $version"
        echo "release.sh: $printed" >&2
    fi

    mkdir -p "$dist"
    dist=$(cd "$dist" && pwd)
    stage=$(mktemp -d) # global: the EXIT trap removes it
    trap 'rm -rf "$stage"' EXIT
    cp "$binary" "$stage/$bin_name"
    cp "$repo/LICENSE" "$repo/README.md" "$stage/"
    archive="$dist/$(archive_name "$os_arch")"
    # Reproducible where GNU tar is: fixed order, owner and time (the last commit's).
    epoch=${SOURCE_DATE_EPOCH:-$(git -C "$repo" log -1 --format=%ct 2>/dev/null || echo 0)}
    if tar --version 2>/dev/null | grep -q 'GNU tar'; then
        tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" \
            -C "$stage" -cf - "$bin_name" LICENSE README.md | gzip -9 -n >"$archive"
    else
        tar -C "$stage" -cf - "$bin_name" LICENSE README.md | gzip -9 -n >"$archive"
    fi
    # What krew will install: the binary named by `bin`, and a LICENSE (validate-krew-manifest).
    listed=$(tar -tzf "$archive" | sort | tr '\n' ' ')
    [[ $listed == "$(printf '%s\n' "$bin_name" LICENSE README.md | sort | tr '\n' ' ')" ]] \
        || die "$archive holds '$listed', expected $bin_name, LICENSE, README.md"
    (cd "$dist" && printf '%s  %s\n' "$(sha256_of "$archive")" "$(basename "$archive")" >"$archive.sha256")
    echo "release.sh: wrote $archive ($(wc -c <"$archive") bytes), sha256 $(sha256_of "$archive")" >&2
}

manifest() {
    local template="$repo/plugin.yaml" out="$dist/microservice.yaml" shas="" built="" missing="" key archive
    [[ -d $dist ]] || usage_error "no directory $dist: build archives first"
    for key in $(grep -o '@SHA256_[a-z0-9_]*@' "$template" | sed 's/^@SHA256_//; s/@$//'); do
        archive="$dist/$(archive_name "$key")"
        if [[ -f $archive ]]; then
            shas+=" $key=$(sha256_of "$archive")"
            built+=" $key"
        else
            missing+=" $key"
        fi
    done
    [[ -n $shas ]] || die "no archive of version $version in $dist (expected $(archive_name '<os>_<arch>'))"
    awk -v version="$version" -v shas="$shas" '
        BEGIN {
            n = split(shas, pairs, " ")
            for (i = 1; i <= n; i++) { split(pairs[i], kv, "="); sha[kv[1]] = kv[2] }
            print "# Generated by scripts/release.sh from plugin.yaml."
        }
        function flush() { if (keep) printf "%s", block; block = ""; keep = 0 }
        !started && /^#/ { next }
        { started = 1; gsub(/@VERSION@/, version) }
        /^  platforms:/ { print; in_platforms = 1; next }
        in_platforms && /^  - / { flush() }
        in_platforms {
            if (match($0, /@SHA256_[a-z0-9_]+@/)) {
                key = substr($0, RSTART + 8, RLENGTH - 9)
                if (key in sha) { keep = 1; sub(/@SHA256_[a-z0-9_]+@/, sha[key]) }
            }
            block = block $0 "\n"
            next
        }
        { print }
        END { flush() }
    ' "$template" >"$out"
    if grep -n '@[A-Za-z0-9_]*@' "$out" >&2; then
        die "$out still holds template placeholders (above)"
    fi
    echo "release.sh: wrote $out for v$version with platforms:$built" >&2
    [[ -z $missing ]] || echo "release.sh: left out (no archive in $dist):$missing" >&2
}

case $command in
    build) build ;;
    manifest) manifest ;;
    all) build && manifest ;;
esac
