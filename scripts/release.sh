#!/usr/bin/env bash
# Release archives, the krew manifest and the operator image of kubectl-microservice.
#
#   scripts/release.sh [--dist DIR] [--image REF] [--binary FILE]
#                                            one release build for this machine (on Linux its
#                                            static musl target), and from that one binary: its
#                                            archive, the manifest, DIR/kubectl-microservice (to
#                                            copy onto PATH) and, for linux/amd64, the operator
#                                            image; --binary packs FILE instead of building
#   scripts/release.sh --all-platforms [--dist DIR] [--image REF]
#                                            build + pack the five krew platforms (linux/amd64,
#                                            linux/arm64, darwin/amd64, darwin/arm64, windows/amd64),
#                                            render the manifest, verify, then this machine's
#                                            binary and the image as above, from those builds
#   scripts/release.sh build [--target TRIPLE | --all-platforms] [--dist DIR] [--binary FILE]
#                                            cargo build --release for TRIPLE (default: this
#                                            machine; on Linux its static musl target), then pack
#                                            DIR/kubectl-microservice_<version>_<os>_<arch>.tar.gz
#                                            (.zip for windows: the binary, LICENSE, README.md)
#                                            and its .sha256; --binary packs FILE, built elsewhere
#   scripts/release.sh manifest [--dist DIR] [--version X.Y.Z]
#                                            render plugin.yaml into DIR/microservice.yaml with the
#                                            sha256 of every archive of that version in DIR;
#                                            platforms without an archive are left out (and named)
#   scripts/release.sh verify [--dist DIR]   check every archive against the manifest, each binary's
#                                            format and architecture, and run `--version` where it
#                                            can run here (natively, qemu-aarch64, wine64); a table
#   scripts/release.sh image [--dist DIR] [--image REF] [--binary FILE]
#                                            write DIR/kubectl-microservice_<version>_image_linux_amd64.tar,
#                                            an OCI image archive (also docker-archive) tagged REF
#                                            (default: the image `manifests` names): FROM scratch,
#                                            the linux/amd64 release binary (FILE if given, else from
#                                            its archive in DIR, built if missing), user 65532
#   scripts/release.sh image-ref             print the default image reference
#
# DIR defaults to dist/ in the repository; the version to the one in Cargo.toml. Cross targets
# link with cargo-zigbuild (zig from PyPI's ziglang); Linux x86-64 links with Debian's musl-gcc.
# What is missing is installed when it can be (rustup targets and components; pip; apt-get as
# root), else named with the command that installs it. Archives and image are reproducible:
# fixed order, owner and time (SOURCE_DATE_EPOCH, else the last commit's).
set -euo pipefail
shopt -s inherit_errexit 2>/dev/null || true

repo=$(cd "$(dirname "$0")/.." && pwd)
dist="$repo/dist"
target=""
version=""
image_ref=""
binary_file=""
all_platforms=false
command="all"
stage=""
trap '[[ -z $stage ]] || { declare -F wine_teardown >/dev/null && wine_teardown; rm -rf "$stage"; }' EXIT

# The five krew platforms, and the Rust target each is built for.
platforms=(linux_amd64 linux_arm64 darwin_amd64 darwin_arm64 windows_amd64)
platform_target() {
    case $1 in
        linux_amd64) echo x86_64-unknown-linux-musl ;;
        linux_arm64) echo aarch64-unknown-linux-musl ;;
        darwin_amd64) echo x86_64-apple-darwin ;;
        darwin_arm64) echo aarch64-apple-darwin ;;
        windows_amd64) echo x86_64-pc-windows-gnu ;;
    esac
}
# The repository of the image `manifests` runs by default (src/manifests.rs DEFAULT_IMAGE, which
# appends :<version>; tests/release_image.rs holds the two equal).
image_repository=ghcr.io/platform-example/kubectl-microservice
image_uid=65532

usage() {
    sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"
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

say() {
    echo "release.sh: $*" >&2
}

if [[ $# -gt 0 && $1 != -* ]]; then
    command=$1
    shift
fi
case $command in
    all | build | manifest | verify | image | image-ref) ;;
    *) usage_error "unknown command '$command': expected build, manifest, verify, image, image-ref, or nothing (build + manifest)" ;;
esac
while [[ $# -gt 0 ]]; do
    case $1 in
        --dist) [[ $# -ge 2 ]] || usage_error "--dist needs a directory"; dist=$2; shift 2 ;;
        --target) [[ $# -ge 2 ]] || usage_error "--target needs a Rust target triple"; target=$2; shift 2 ;;
        --version) [[ $# -ge 2 ]] || usage_error "--version needs a version such as 0.1.0"; version=$2; shift 2 ;;
        --image) [[ $# -ge 2 ]] || usage_error "--image needs an image reference such as registry.example.com/team/kubectl-microservice:0.1.0"; image_ref=$2; shift 2 ;;
        --binary) [[ $# -ge 2 ]] || usage_error "--binary needs the path of a static linux/amd64 kubectl-microservice"; binary_file=$2; shift 2 ;;
        --all-platforms) all_platforms=true; shift ;;
        -h | --help) usage ;;
        *) usage_error "unknown option '$1'" ;;
    esac
done
[[ -z $target || $command == all || $command == build ]] || usage_error "--target belongs to build (or no command), not $command"
[[ $all_platforms == false || $command == all || $command == build || $command == verify ]] \
    || usage_error "--all-platforms belongs to build, verify or no command, not $command"
[[ -z $image_ref || $command == image || $command == all ]] || usage_error "--image belongs to the image command (or no command), not $command"
[[ -z $binary_file || $command == image || $command == build || $command == all ]] || usage_error "--binary belongs to build, image or no command, not $command"
[[ $all_platforms == false || -z $target ]] || usage_error "give --target or --all-platforms, not both"
[[ $all_platforms == false || -z $binary_file ]] || usage_error "--binary packs one platform's binary: give --target, not --all-platforms"

cargo_version() {
    sed -n 's/^version = "\(.*\)"$/\1/p' "$repo/Cargo.toml" | head -n 1
}

[[ -n $version ]] || version=$(cargo_version)
# krew wants spec.version to be semver with a leading v: plugin.yaml writes v@VERSION@.
[[ $version =~ ^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)([-+][0-9A-Za-z.+-]+)?$ ]] \
    || usage_error "version '$version' is not semantic (expected e.g. 0.1.0, without a leading v)"

if [[ $command == image-ref ]]; then
    echo "$image_repository:$version"
    exit 0
fi

sha256_of() {
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum "$1" | cut -d ' ' -f 1
    elif command -v shasum >/dev/null 2>&1; then
        shasum -a 256 "$1" | cut -d ' ' -f 1
    else
        die "neither sha256sum nor shasum is installed"
    fi | tr 'A-F' 'a-f'
}

size_of() {
    wc -c <"$1" | tr -d ' '
}

# The time stamped on every archive entry: SOURCE_DATE_EPOCH, else the last commit's.
epoch() {
    echo "${SOURCE_DATE_EPOCH:-$(git -C "$repo" log -1 --format=%ct 2>/dev/null || echo 0)}"
}

gnu_tar() {
    local t
    for t in tar gtar; do
        if command -v "$t" >/dev/null 2>&1 && "$t" --version 2>/dev/null | grep -q 'GNU tar'; then
            echo "$t"
            return
        fi
    done
}

# --- what the builds need, installed when possible -------------------------------------------

# Installs a Debian package as root with apt-get; anywhere else names the package and dies.
apt_install() {
    local package=$1 why=$2
    if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null 2>&1; then
        say "installing $package ($why): apt-get install $package"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$package" >&2 \
            || { DEBIAN_FRONTEND=noninteractive apt-get update -q >&2 \
                && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$package" >&2; } \
            || die "apt-get install $package failed; $why needs it"
    else
        die "$why needs the package $package: install it (Debian/Ubuntu: sudo apt-get install $package)"
    fi
}

need_command() {
    local cmd=$1 package=$2 why=$3
    command -v "$cmd" >/dev/null 2>&1 || apt_install "$package" "$why"
    command -v "$cmd" >/dev/null 2>&1 || die "$why needs '$cmd', which $package did not install"
}

ensure_rust_target() {
    local triple=$1
    if rustc --print sysroot >/dev/null 2>&1 \
        && [[ -d "$(rustc --print sysroot)/lib/rustlib/$triple/lib" ]]; then
        return
    fi
    command -v rustup >/dev/null 2>&1 \
        || die "the Rust standard library for $triple is not installed: install it (rustup target add $triple)"
    say "installing the Rust target $triple: rustup target add $triple"
    rustup target add "$triple" >&2 || die "rustup target add $triple failed"
}

# cargo-zigbuild with a zig it can find (the `zig` on PATH or PyPI's ziglang).
ensure_zigbuild() {
    local wanted=()
    command -v cargo-zigbuild >/dev/null 2>&1 || wanted+=(cargo-zigbuild)
    command -v zig >/dev/null 2>&1 || python3 -c 'import ziglang' >/dev/null 2>&1 || wanted+=(ziglang)
    [[ ${#wanted[@]} -eq 0 ]] && return
    if ! python3 -m pip --version >/dev/null 2>&1; then
        die "cross builds need ${wanted[*]} from PyPI: install them (python3 -m pip install ${wanted[*]})"
    fi
    say "installing ${wanted[*]} for the cross builds: python3 -m pip install ${wanted[*]}"
    python3 -m pip install -q "${wanted[@]}" >&2 || die "python3 -m pip install ${wanted[*]} failed"
    command -v cargo-zigbuild >/dev/null 2>&1 \
        || die "pip installed cargo-zigbuild, but it is not on PATH (add python3 -m site --user-base's bin)"
}

llvm_tool() {
    local name=$1 sysroot host bin
    sysroot=$(rustc --print sysroot)
    host=$(rustc -vV | sed -n 's/^host: //p')
    bin="$sysroot/lib/rustlib/$host/bin/$name"
    if [[ ! -x $bin ]]; then
        command -v rustup >/dev/null 2>&1 || die "verify needs $name: install it (rustup component add llvm-tools)"
        say "installing llvm-tools for $name: rustup component add llvm-tools"
        rustup component add llvm-tools >&2 || die "rustup component add llvm-tools failed"
    fi
    [[ -x $bin ]] || die "rustup's llvm-tools has no $bin"
    echo "$bin"
}

# --- build and pack ----------------------------------------------------------------------------

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

host_triple() {
    rustc -vV | sed -n 's/^host: //p'
}

host_os_arch() {
    local os arch
    case $(uname -s) in
        Linux) os=linux ;;
        Darwin) os=darwin ;;
        MINGW* | MSYS* | CYGWIN*) os=windows ;;
        *) os=unknown ;;
    esac
    case $(uname -m) in
        x86_64 | amd64) arch=amd64 ;;
        aarch64 | arm64) arch=arm64 ;;
        *) arch=unknown ;;
    esac
    echo "${os}_${arch}"
}

# The target built when none is named: this machine's, but on Linux its static musl twin, so
# that the archive runs on any distribution and in the FROM-scratch image.
default_target() {
    local host
    host=$(host_triple)
    case $host in
        x86_64-unknown-linux-gnu) echo x86_64-unknown-linux-musl ;;
        aarch64-unknown-linux-gnu) echo aarch64-unknown-linux-musl ;;
        *) echo "$host" ;;
    esac
}

archive_name() {
    case $1 in
        windows_*) echo "kubectl-microservice_${version}_$1.zip" ;;
        *) echo "kubectl-microservice_${version}_$1.tar.gz" ;;
    esac
}

bin_name_of() {
    case $1 in
        windows_*) echo kubectl-microservice.exe ;;
        *) echo kubectl-microservice ;;
    esac
}

cargo_target_dir() {
    (cd "$repo" && cargo metadata --format-version 1 --no-deps) \
        | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p'
}

# Stand-ins for the two macOS frameworks the dependencies link (core-foundation-sys: CoreFoundation;
# security-framework-sys: Security, through rustls-native-certs and rustls-platform-verifier).
# zig ships libSystem but no frameworks, and Apple's SDK may not be copied onto other systems,
# so each framework gets a text stub (.tbd, as in Apple's SDKs) exporting every function and
# static that the crate declares, under the framework's real install name. The binary then loads
# the real framework on macOS and binds each symbol in it by name, as a binary linked against
# the SDK does. Prints the SDKROOT to link with.
macos_sdk_stub() {
    local sdk=$1 framework crate dir symbols
    mkdir -p "$sdk"
    for pair in CoreFoundation:core-foundation-sys Security:security-framework-sys; do
        framework=${pair%%:*}
        crate=${pair#*:}
        dir=$(cd "$repo" && cargo metadata --format-version 1 --locked --filter-platform aarch64-apple-darwin) \
            || die "cargo metadata failed"
        dir=$(printf '%s' "$dir" | grep -o "\"manifest_path\":\"[^\"]*/$crate-[0-9][^\"/]*/Cargo.toml\"" \
            | head -n 1 | sed 's/^"manifest_path":"//; s/\/Cargo.toml"$//')
        [[ -n $dir && -d $dir/src ]] || die "cannot find the sources of $crate (cargo fetch --locked first)"
        # Every `pub fn NAME(` / `pub static NAME:` of the crate; the CoreFoundation crate's own
        # helpers are left out by the CF prefix.
        symbols=$(grep -rhoE '^[[:space:]]*pub (fn|static( mut)?) [A-Za-z_][A-Za-z0-9_]*' "$dir/src" \
            | awk '{print $NF}' | sort -u)
        [[ $framework == CoreFoundation ]] && symbols=$(printf '%s\n' "$symbols" | grep -E '^(k?CF|__CF)')
        [[ -n $symbols ]] || die "no symbol declared in $dir/src"
        mkdir -p "$sdk/System/Library/Frameworks/$framework.framework"
        {
            echo '--- !tapi-tbd'
            echo 'tbd-version:     4'
            echo 'targets:         [ x86_64-macos, arm64-macos, arm64e-macos ]'
            echo "install-name:    '/System/Library/Frameworks/$framework.framework/Versions/A/$framework'"
            echo 'exports:'
            echo '  - targets:         [ x86_64-macos, arm64-macos, arm64e-macos ]'
            printf '    symbols:         [ '
            printf '%s\n' "$symbols" | sed 's/^/_/' | paste -sd, - | sed 's/,/, /g'
            echo '                     ]'
            echo '...'
        } >"$sdk/System/Library/Frameworks/$framework.framework/$framework.tbd"
    done
    echo "$sdk"
}

# cargo build --release of the binary for TRIPLE; prints the binary's path.
compile() {
    local triple=$1 os_arch host target_dir bin_name binary
    os_arch=$(os_arch_of "$triple")
    host=$(host_triple)
    bin_name=$(bin_name_of "$os_arch")
    need_command cargo cargo "the build"
    ensure_rust_target "$triple"
    local cargo_cmd=(cargo build) envs=()
    if [[ $triple == "$host" ]]; then
        :
    elif [[ $triple == x86_64-unknown-linux-musl && $host == x86_64-unknown-linux-gnu ]]; then
        # ring compiles C: with musl's gcc wrapper for the native musl target.
        need_command musl-gcc musl-tools "the static linux/amd64 build (ring's C code)"
        envs+=(CC_x86_64_unknown_linux_musl=musl-gcc)
    else
        ensure_zigbuild
        cargo_cmd=(cargo zigbuild)
        if [[ $triple == *-apple-darwin ]]; then
            local sdk
            sdk=$(macos_sdk_stub "$(cargo_target_dir)/macos-sdk-stub") || exit 1
            envs+=("SDKROOT=$sdk")
        fi
    fi
    say "${cargo_cmd[*]} --release for $triple ($os_arch)"
    (cd "$repo" && env ${envs[@]+"${envs[@]}"} "${cargo_cmd[@]}" --release --locked --bin kubectl-microservice --target "$triple" >&2) \
        || die "the build for $triple failed (above)"
    target_dir=$(cargo_target_dir)
    [[ -n $target_dir ]] || die "cannot find cargo's target directory"
    binary="$target_dir/$triple/release/$bin_name"
    [[ -f $binary ]] || die "cargo built no $binary"
    echo "$binary"
}

# Packs BINARY for OS_ARCH into its archive in DIST, with LICENSE and README.md.
pack() {
    local binary=$1 os_arch=$2 bin_name archive listed expected when tar_cmd
    bin_name=$(bin_name_of "$os_arch")
    mkdir -p "$dist"
    dist=$(cd "$dist" && pwd)
    stage=$(mktemp -d)
    cp "$binary" "$stage/$bin_name"
    cp "$repo/LICENSE" "$repo/README.md" "$stage/"
    chmod 0755 "$stage/$bin_name"
    chmod 0644 "$stage/LICENSE" "$stage/README.md"
    archive="$dist/$(archive_name "$os_arch")"
    when=$(epoch)
    rm -f "$archive"
    expected=$(printf '%s\n' "$bin_name" LICENSE README.md | sort | tr '\n' ' ')
    if [[ $archive == *.zip ]]; then
        need_command zip zip "the windows archive (.zip)"
        need_command unzip unzip "checking the windows archive"
        # zip stores local times: stamp the files, -X leaves out uid/gid and extra time fields.
        TZ=UTC touch -d "@$when" "$stage/$bin_name" "$stage/LICENSE" "$stage/README.md"
        (cd "$stage" && TZ=UTC zip -X -q -9 "$archive" "$bin_name" LICENSE README.md)
        listed=$(unzip -Z1 "$archive" | sort | tr '\n' ' ')
    else
        tar_cmd=$(gnu_tar)
        if [[ -n $tar_cmd ]]; then
            "$tar_cmd" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$when" --format=ustar \
                -C "$stage" -cf - "$bin_name" LICENSE README.md | gzip -9 -n >"$archive"
        else
            tar -C "$stage" -cf - "$bin_name" LICENSE README.md | gzip -9 -n >"$archive"
        fi
        listed=$(tar -tzf "$archive" | sort | tr '\n' ' ')
    fi
    rm -rf "$stage"
    stage=""
    # What krew will install: the binary named by `bin`, and a LICENSE (validate-krew-manifest).
    [[ $listed == "$expected" ]] || die "$archive holds '$listed', expected $bin_name, LICENSE, README.md"
    (cd "$dist" && printf '%s  %s\n' "$(sha256_of "$archive")" "$(basename "$archive")" >"$archive.sha256")
    say "wrote $archive ($(size_of "$archive") bytes), sha256 $(sha256_of "$archive")"
}

build_one() {
    local triple=$1 os_arch binary printed
    os_arch=$(os_arch_of "$triple")
    [[ $version == "$(cargo_version)" ]] || usage_error "--version $version differs from Cargo.toml's $(cargo_version): build packs what Cargo.toml says"
    if [[ -n $binary_file ]]; then
        [[ -f $binary_file ]] || usage_error "--binary $binary_file: no such file"
        binary=$binary_file
    else
        binary=$(compile "$triple")
    fi
    if [[ $os_arch == "$(host_os_arch)" ]]; then
        printed=$("$binary" --version)
        [[ $printed == "kubectl-microservice $version "* ]] || die "$binary --version printed '$printed', expected version $version"
        say "$printed"
    fi
    pack "$binary" "$os_arch"
    built_platforms+=("$os_arch")
}

# The platforms packed by this run (build_one adds each).
built_platforms=()

build() {
    local p
    if [[ $all_platforms == true ]]; then
        for p in "${platforms[@]}"; do
            build_one "$(platform_target "$p")"
        done
    else
        build_one "${target:-$(default_target)}"
    fi
}

# --- the krew manifest -------------------------------------------------------------------------

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
    ' "$template" >"$out.tmp"
    if grep -n '@[A-Za-z0-9_]*@' "$out.tmp" >&2; then
        rm -f "$out.tmp"
        die "$out would still hold template placeholders (above)"
    fi
    mv "$out.tmp" "$out"
    say "wrote $out for v$version with platforms:$built"
    [[ -z $missing ]] || say "left out (no archive in $dist):$missing"
}

# --- verify ------------------------------------------------------------------------------------

# The sha256 that DIST/microservice.yaml gives the archive named $1 (empty when it names none).
manifest_sha_of() {
    awk -v name="$1" '
        /^ *uri: / { n = split($2, parts, "/"); current = parts[n] }
        /^ *sha256: / && current == name { gsub(/"/, "", $2); print $2; exit }
    ' "$dist/microservice.yaml"
}

# Checks one binary's format; prints a short description, or "FAIL: why".
check_format() {
    local os_arch=$1 bin=$2 described objdump nm libs bad
    described=$(file -b "$bin")
    case $os_arch in
        linux_amd64 | linux_arm64)
            local machine=x86-64
            [[ $os_arch == linux_arm64 ]] && machine="ARM aarch64"
            [[ $described == "ELF 64-bit LSB "* && $described == *"$machine"* ]] \
                || { echo "FAIL: not a 64-bit $machine ELF: $described"; return; }
            [[ $described == *"statically linked"* || $described == *"static-pie linked"* ]] \
                || { echo "FAIL: not static: $described"; return; }
            if [[ $described == *"static-pie linked"* ]]; then
                echo "ELF 64-bit $machine, static-pie"
            else
                echo "ELF 64-bit $machine, static"
            fi
            ;;
        darwin_amd64 | darwin_arm64)
            local arch=x86_64
            [[ $os_arch == darwin_arm64 ]] && arch=arm64
            [[ $described == "Mach-O 64-bit $arch executable"* ]] \
                || { echo "FAIL: not a Mach-O 64-bit $arch executable: $described"; return; }
            objdump=$(llvm_tool llvm-objdump)
            nm=$(llvm_tool llvm-nm)
            # Each library it loads is one every macOS has; each undefined symbol is bound to one
            # of them by name (two-level), none left to a lookup at run time.
            libs=$("$objdump" --macho --dylibs-used "$bin" | tail -n +2 | awk '{print $1}')
            bad=$(printf '%s\n' "$libs" | grep -vE '^(/usr/lib/|/System/Library/Frameworks/)' || true)
            [[ -z $bad ]] || { echo "FAIL: loads libraries outside the system: $bad"; return; }
            bad=$("$nm" -m --undefined-only "$bin" | grep -v '(from ' | head -n 3 || true)
            [[ -z $bad ]] || { echo "FAIL: undefined symbols bound to no library: $bad"; return; }
            echo "Mach-O 64-bit $arch, loads $(printf '%s\n' "$libs" | sed 's#.*/##; s/\.dylib$//; s/\.B$//' | paste -sd, - | sed 's/,/, /g')"
            ;;
        windows_amd64)
            [[ $described == "PE32+ executable"* && $described == *"x86-64"* ]] \
                || { echo "FAIL: not a PE32+ x86-64 executable: $described"; return; }
            [[ $described == *"(console)"* ]] || { echo "FAIL: not a console program: $described"; return; }
            objdump=$(llvm_tool llvm-objdump)
            libs=$("$objdump" -p "$bin" | sed -n 's/^ *DLL Name: //p' | sort -uf)
            # MinGW's runtime DLLs (libgcc_s_seh-1, libwinpthread-1, ...) are not on Windows.
            bad=$(printf '%s\n' "$libs" | grep -iE '^lib|^msvcr[0-9]|^vcruntime' || true)
            [[ -z $bad ]] || { echo "FAIL: needs DLLs Windows does not have: $bad"; return; }
            echo "PE32+ x86-64 console, $(printf '%s\n' "$libs" | wc -l | tr -d ' ') system DLLs"
            ;;
        *) echo "FAIL: no format check for $os_arch" ;;
    esac
}

# --- Windows binaries under Wine ---------------------------------------------------------------

wine_cmd=""      # the Wine that runs .exe files, once wine_setup has made its prefix
wine_env=()      # its environment: our own prefix, 64-bit only, quiet, no installer prompts
wine_problem=""  # why a Windows binary cannot run here ("" when it can), a FAIL line's text
wine_note=""     # what the run used beyond Wine itself, for the table

# zig, on PATH or PyPI's ziglang (installed with pip when it can be), as a command line in the
# array zig_cmd; returns 1 when there is none.
find_zig() {
    if command -v zig >/dev/null 2>&1; then
        zig_cmd=(zig)
        return 0
    fi
    if ! python3 -c 'import ziglang' >/dev/null 2>&1 && python3 -m pip --version >/dev/null 2>&1; then
        say "installing ziglang (a bcryptprimitives.dll for Wine): python3 -m pip install ziglang"
        python3 -m pip install -q ziglang >&2 || true
    fi
    python3 -c 'import ziglang' >/dev/null 2>&1 || return 1
    zig_cmd=(python3 -m ziglang)
}

# Rust's standard library (1.78 and later) imports ProcessPrng from bcryptprimitives.dll, which
# Windows 10 and later have, and Wine from 8.13 on. An older Wine (Debian 12's is 8.0) stops the
# program in its loader before main: nothing printed, exit 53, "Library bcryptprimitives.dll ...
# not found" under WINEDEBUG=err+module. For such a Wine the prefix gets a stand-in, a 3 KB DLL
# built here with zig, whose one export ProcessPrng fills the buffer from bcrypt.dll's
# BCryptGenRandom with the system-preferred RNG (the generator ProcessPrng serves on Windows).
# Writes the DLL to $1; returns 1 (with the reason on stdout) when it cannot.
bcryptprimitives_stand_in() {
    local out=$1 src zig_cmd=()
    find_zig || { echo "no zig to build it (python3 -m pip install ziglang)"; return 1; }
    src="$stage/bcryptprimitives"
    mkdir -p "$src"
    cat >"$src/bcryptprimitives.c" <<'EOF'
typedef int BOOL;
typedef unsigned char BYTE;
typedef unsigned long ULONG;
typedef long NTSTATUS;
typedef unsigned long long SIZE_T;
typedef void *HANDLE;
__declspec(dllimport) NTSTATUS __stdcall BCryptGenRandom(HANDLE, BYTE *, ULONG, ULONG);
/* BOOL ProcessPrng(PBYTE, SIZE_T): always TRUE on Windows; FALSE here if bcrypt fails. */
BOOL __stdcall ProcessPrng(BYTE *data, SIZE_T len) {
    while (len > 0) {
        ULONG chunk = len > 0x40000000u ? 0x40000000u : (ULONG)len;
        if (BCryptGenRandom(0, data, chunk, 2 /* BCRYPT_USE_SYSTEM_PREFERRED_RNG */) != 0) return 0;
        data += chunk;
        len -= chunk;
    }
    return 1;
}
BOOL __stdcall DllMainCRTStartup(HANDLE module, ULONG reason, void *reserved) {
    (void)module; (void)reason; (void)reserved;
    return 1;
}
EOF
    printf 'LIBRARY bcryptprimitives\nEXPORTS\n    ProcessPrng\n' >"$src/bcryptprimitives.def"
    "${zig_cmd[@]}" cc -target x86_64-windows-gnu -shared -nostdlib -O2 -o "$out" \
        "$src/bcryptprimitives.c" "$src/bcryptprimitives.def" -lbcrypt -Wl,--entry=DllMainCRTStartup \
        >"$src/zig.log" 2>&1 \
        || { echo "zig cc failed: $(head -c 300 "$src/zig.log" | tr '\n' ' ')"; return 1; }
}

# Makes the Wine prefix that windows binaries run in: $stage/wine, 64-bit only (nothing 32-bit
# runs, so wine32 is not needed; Debian's /usr/bin/wine would only ask for it), initialised by
# wineboot before the first program, no Mono or Gecko installer prompts, no debug output. Sets
# wine_cmd and wine_env, or wine_problem.
wine_setup() {
    local system32 why
    if command -v wine64 >/dev/null 2>&1; then
        wine_cmd=$(command -v wine64)
    elif [[ -x /usr/lib/wine/wine64 ]]; then
        wine_cmd=/usr/lib/wine/wine64 # Debian's wine64 package, not on PATH
    elif command -v wine >/dev/null 2>&1; then
        wine_cmd=$(command -v wine)
    else
        wine_problem="not run: no Wine (Debian: apt-get install wine wine64; others: a 64-bit Wine, 8.13 or later needs no zig)"
        return
    fi
    wine_env=(WINEPREFIX="$stage/wine" WINEARCH=win64 WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml=")
    if ! env "${wine_env[@]}" timeout 300 "$wine_cmd" wineboot --init >"$stage/wineboot.log" 2>&1; then
        wine_problem="not run: wineboot could not make a Wine prefix ($("$wine_cmd" --version 2>/dev/null || true)): $(head -c 300 "$stage/wineboot.log" | tr '\n' ' ')"
        return
    fi
    system32="$stage/wine/drive_c/windows/system32"
    [[ -d $system32 ]] || { wine_problem="not run: wineboot made no $system32"; return; }
    # wineboot puts a placeholder of each DLL that Wine has into system32.
    if [[ ! -f $system32/bcryptprimitives.dll ]]; then
        why=$(bcryptprimitives_stand_in "$system32/bcryptprimitives.dll") || {
            wine_problem="not run: $("$wine_cmd" --version 2>/dev/null || echo this Wine) has no bcryptprimitives.dll (ProcessPrng), and a stand-in could not be built: $why; or install Wine 8.13 or later"
            return
        }
        wine_note="$("$wine_cmd" --version 2>/dev/null || echo Wine) with a bcryptprimitives.dll stand-in"
    fi
}

# Stops the prefix's wineserver (it lingers a few seconds after the last program), so that the
# stage can be removed.
wine_teardown() {
    [[ -n $wine_cmd ]] || return 0
    local server
    server=$(command -v wineserver 2>/dev/null || echo "$(dirname "$wine_cmd")/wineserver")
    [[ -x $server ]] && env "${wine_env[@]}" "$server" -k >/dev/null 2>&1
    return 0
}

# Runs `BIN --version` where it can run here; prints "ran: OUTPUT (via X)", "skip: why" or "FAIL: why".
check_run() {
    local os_arch=$1 bin=$2 host printed via runner=()
    host=$(host_os_arch)
    if [[ $os_arch == "$host" ]]; then
        runner=()
    elif [[ $os_arch == linux_arm64 && $host == linux_* ]]; then
        if command -v qemu-aarch64 >/dev/null 2>&1; then
            runner=(qemu-aarch64)
        elif command -v qemu-aarch64-static >/dev/null 2>&1; then
            runner=(qemu-aarch64-static)
        else
            echo "FAIL: not run: no qemu-aarch64 (Debian: apt-get install qemu-user)"
            return
        fi
        via=${runner[0]}
    elif [[ $os_arch == windows_amd64 && $host == linux_amd64 ]]; then
        [[ -z $wine_problem ]] || { echo "FAIL: $wine_problem"; return; }
        [[ -n $wine_cmd ]] || { echo "FAIL: not run: the Wine prefix was not made"; return; }
        runner=(env "${wine_env[@]}" "$wine_cmd")
        via="$(basename "$wine_cmd")${wine_note:+, $wine_note}"
    else
        echo "skip: a $os_arch binary cannot run on $host"
        return
    fi
    command -v timeout >/dev/null 2>&1 && runner=(timeout 300 ${runner[@]+"${runner[@]}"})
    printed=$(${runner[@]+"${runner[@]}"} "$bin" --version 2>"$stage/run.err" | tr -d '\r') \
        || { echo "FAIL: $(basename "$bin") --version failed: $(head -c 300 "$stage/run.err" | tr '\n' ' ')"; return; }
    [[ $printed == "kubectl-microservice $version (commit "* ]] \
        || { echo "FAIL: --version printed '$printed', expected kubectl-microservice $version (commit ...)"; return; }
    echo "ran: $printed${via:+ (via $via)}"
}

verify() {
    local manifest_file="$dist/microservice.yaml" p archive name sha listed bin fmt run failures=0 rows=() found=0
    [[ -f $manifest_file ]] || die "no $manifest_file: run scripts/release.sh manifest first"
    need_command file file "verify (binary formats)"
    need_command unzip unzip "verify (the windows .zip)"
    # Installed up front (not inside the checks' subshells) when a darwin or windows archive is there.
    if compgen -G "$dist/kubectl-microservice_${version}_darwin_*" >/dev/null \
        || compgen -G "$dist/kubectl-microservice_${version}_windows_*" >/dev/null; then
        llvm_tool llvm-objdump >/dev/null
        llvm_tool llvm-nm >/dev/null
    fi
    stage=$(mktemp -d)
    # The Wine prefix, once for every windows archive (not in the checks' subshells).
    if [[ $(host_os_arch) == linux_amd64 ]] && compgen -G "$dist/kubectl-microservice_${version}_windows_amd64*" >/dev/null; then
        wine_setup
    fi
    for p in "${platforms[@]}"; do
        name=$(archive_name "$p")
        archive="$dist/$name"
        listed=$(manifest_sha_of "$name")
        if [[ ! -f $archive ]]; then
            if [[ -n $listed ]]; then
                rows+=("$p|$name|FAIL: in the manifest, not in $dist|-|-")
                failures=$((failures + 1))
            elif [[ $all_platforms == true ]]; then
                rows+=("$p|$name|FAIL: not built|-|-")
                failures=$((failures + 1))
            fi
            continue
        fi
        found=$((found + 1))
        sha=$(sha256_of "$archive")
        if [[ -z $listed ]]; then
            sha="FAIL: not in the manifest"
        elif [[ $listed != "$sha" ]]; then
            sha="FAIL: manifest says ${listed:0:12}, archive is ${sha:0:12}"
        elif [[ ! -f $archive.sha256 ]] || [[ $(cut -d ' ' -f 1 "$archive.sha256") != "$sha" ]]; then
            sha="FAIL: $name.sha256 differs"
        else
            sha="ok ${sha:0:12}"
        fi
        rm -rf "$stage/x"
        mkdir -p "$stage/x"
        if [[ $archive == *.zip ]]; then
            unzip -q "$archive" -d "$stage/x"
        else
            tar -xzf "$archive" -C "$stage/x"
        fi
        bin="$stage/x/$(bin_name_of "$p")"
        if [[ ! -f $bin ]]; then
            fmt="FAIL: no $(bin_name_of "$p") in the archive"
            run="-"
        else
            fmt=$(check_format "$p" "$bin") || fmt="FAIL: the format check failed (above)"
            run=$(check_run "$p" "$bin") || run="FAIL: the run check failed (above)"
        fi
        for field in "$sha" "$fmt" "$run"; do
            [[ $field != FAIL:* ]] || failures=$((failures + 1))
        done
        rows+=("$p|$name|$sha|$fmt|$run")
    done
    [[ $found -gt 0 ]] || die "no archive of version $version in $dist"
    {
        printf '%s|%s|%s|%s|%s\n' PLATFORM ARCHIVE SHA256 FORMAT "--version"
        printf '%s\n' "${rows[@]}"
    } | awk -F'|' '
        { for (i = 1; i <= NF; i++) { cell[NR, i] = $i; if (length($i) > w[i]) w[i] = length($i) } }
        END { for (r = 1; r <= NR; r++) { line = ""; for (i = 1; i <= 5; i++) line = line sprintf(i < 5 ? "%-" w[i] "s  " : "%s", cell[r, i]); print line } }'
    wine_teardown
    rm -rf "$stage"
    stage=""
    [[ $failures -eq 0 ]] || die "verify: $failures check(s) failed (above)"
    say "verify: $found archive(s) match $manifest_file; formats as expected"
}

# --- the image ---------------------------------------------------------------------------------

# JSON string escaping for the few values we write (references, labels).
json_string() {
    local s=${1//\\/\\\\}
    s=${s//\"/\\\"}
    printf '"%s"' "$s"
}

# Writes BLOB_DIR/<sha256 of FILE> from FILE; prints "sha256:<hex> <size>".
add_blob() {
    local file=$1 blobs=$2 hex
    hex=$(sha256_of "$file")
    mv "$file" "$blobs/$hex"
    echo "sha256:$hex $(size_of "$blobs/$hex")"
}

image() {
    local ref=${image_ref:-$image_repository:$version} os_arch=linux_amd64 binary archive out when created
    local tar_cmd layer_tar diff_id config manifest_digest manifest_size config_digest config_size
    local layer_digest layer_size described revision
    [[ $ref =~ ^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(/[a-z0-9]+([._]|__|-+)?[a-z0-9]*([._-]+[a-z0-9]+)*)*:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ ]] \
        || usage_error "--image '$ref' is not an image reference with a tag (expected e.g. registry.example.com/team/kubectl-microservice:$version, lowercase)"
    tar_cmd=$(gnu_tar)
    [[ -n $tar_cmd ]] || die "image needs GNU tar (Debian: tar; macOS: brew install gnu-tar) for a reproducible layer"
    need_command file file "the image (checking its binary)"
    mkdir -p "$dist"
    dist=$(cd "$dist" && pwd)
    archive="$dist/$(archive_name "$os_arch")"
    if [[ -n $binary_file ]]; then
        [[ -f $binary_file ]] || usage_error "--binary $binary_file: no such file"
    elif [[ ! -f $archive ]]; then
        say "no $archive: building it"
        build_one "$(platform_target "$os_arch")"
    fi
    stage=$(mktemp -d)
    if [[ -n $binary_file ]]; then
        binary=$binary_file
    else
        tar -xzf "$archive" -C "$stage" kubectl-microservice
        binary="$stage/kubectl-microservice"
    fi
    # FROM scratch: only a static binary runs there.
    described=$(file -b "$binary")
    [[ $described == "ELF 64-bit LSB "*"x86-64"* ]] || die "$binary is not a linux/amd64 program: $described"
    [[ $described == *"statically linked"* || $described == *"static-pie linked"* ]] \
        || die "$binary is dynamically linked: a FROM-scratch image needs the static musl build ($described)"

    when=$(epoch)
    created=$(date -u -d "@$when" +%Y-%m-%dT%H:%M:%SZ 2>/dev/null || date -u -r "$when" +%Y-%m-%dT%H:%M:%SZ)
    revision=$(git -C "$repo" rev-parse HEAD 2>/dev/null || echo unknown)
    mkdir -p "$stage/rootfs/usr/local/bin" "$stage/image/blobs/sha256"
    cp "$binary" "$stage/rootfs/usr/local/bin/kubectl-microservice"
    chmod 0755 "$stage/rootfs/usr" "$stage/rootfs/usr/local" "$stage/rootfs/usr/local/bin" \
        "$stage/rootfs/usr/local/bin/kubectl-microservice"

    # The one layer: /usr/local/bin/kubectl-microservice, owned by root, not writable by the user.
    layer_tar="$stage/layer.tar"
    "$tar_cmd" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$when" --format=ustar \
        -C "$stage/rootfs" -cf "$layer_tar" usr
    diff_id="sha256:$(sha256_of "$layer_tar")"
    gzip -9 -n <"$layer_tar" >"$stage/layer.tar.gz"
    rm -f "$layer_tar"
    read -r layer_digest layer_size < <(add_blob "$stage/layer.tar.gz" "$stage/image/blobs/sha256")

    # The config (OCI image-spec config.md; docker reads the same fields).
    config="$stage/config.json"
    printf '{"created":"%s","architecture":"amd64","os":"linux","config":{"User":"%s:%s","Env":["PATH=/usr/local/bin"],"Entrypoint":["kubectl-microservice"],"Cmd":["operate"],"WorkingDir":"/","Labels":{"org.opencontainers.image.licenses":"Apache-2.0","org.opencontainers.image.revision":%s,"org.opencontainers.image.source":"https://github.com/platform-example/kubectl-microservice","org.opencontainers.image.title":"kubectl-microservice","org.opencontainers.image.version":%s}},"rootfs":{"type":"layers","diff_ids":["%s"]},"history":[{"created":"%s","created_by":"scripts/release.sh image"}]}' \
        "$created" "$image_uid" "$image_uid" "$(json_string "$revision")" "$(json_string "$version")" "$diff_id" "$created" >"$config"
    read -r config_digest config_size < <(add_blob "$config" "$stage/image/blobs/sha256")

    local manifest_file="$stage/manifest-oci.json"
    printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"%s","size":%s}]}' \
        "$config_digest" "$config_size" "$layer_digest" "$layer_size" >"$manifest_file"
    read -r manifest_digest manifest_size < <(add_blob "$manifest_file" "$stage/image/blobs/sha256")

    # OCI layout (image-layout.md): containerd's `ctr images import` names the image by
    # io.containerd.image.name, podman and skopeo by org.opencontainers.image.ref.name.
    printf '{"imageLayoutVersion":"1.0.0"}' >"$stage/image/oci-layout"
    printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"%s","size":%s,"platform":{"architecture":"amd64","os":"linux"},"annotations":{"io.containerd.image.name":%s,"org.opencontainers.image.ref.name":%s}}]}' \
        "$manifest_digest" "$manifest_size" "$(json_string "$ref")" "$(json_string "$ref")" >"$stage/image/index.json"
    # docker-archive (what `docker save` writes, and `docker load` of every version reads),
    # over the same blobs.
    printf '[{"Config":"blobs/sha256/%s","RepoTags":[%s],"Layers":["blobs/sha256/%s"]}]' \
        "${config_digest#sha256:}" "$(json_string "$ref")" "${layer_digest#sha256:}" >"$stage/image/manifest.json"

    out="$dist/kubectl-microservice_${version}_image_${os_arch}.tar"
    find "$stage/image" -exec touch -h -d "@$when" {} + 2>/dev/null || true
    chmod 0755 "$stage/image" "$stage/image/blobs" "$stage/image/blobs/sha256"
    chmod 0644 "$stage/image/oci-layout" "$stage/image/index.json" "$stage/image/manifest.json" "$stage/image/blobs/sha256/"*
    "$tar_cmd" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$when" --format=ustar \
        -C "$stage/image" -cf "$out.tmp" oci-layout index.json manifest.json blobs
    mv "$out.tmp" "$out"
    rm -rf "$stage"
    stage=""
    say "wrote $out ($(size_of "$out") bytes): $ref, manifest $manifest_digest, linux/amd64, user $image_uid"
    say "load it with one of: docker load -i $out; podman load -i $out; ctr -a /run/containerd/containerd.sock -n k8s.io images import $out (k3s: -a /run/k3s/containerd/containerd.sock);" \
        "kind load image-archive $out; k3d image import $out; minikube image load $out"
}

# After the build of `all`: this machine's binary as DIST/kubectl-microservice, and the operator
# image, each from an archive this run packed (the bytes krew installs), so nothing is compiled
# twice. A platform not built in this run is named, with the command that makes it.
from_the_build() {
    local host archive bin_name
    host=$(host_os_arch)
    if [[ " ${built_platforms[*]} " == *" $host "* ]]; then
        archive="$dist/$(archive_name "$host")"
        bin_name=$(bin_name_of "$host")
        rm -f "$dist/$bin_name"
        if [[ $archive == *.zip ]]; then
            unzip -q -o "$archive" "$bin_name" -d "$dist"
        else
            tar -xzf "$archive" -C "$dist" "$bin_name"
        fi
        chmod 0755 "$dist/$bin_name"
        say "wrote $dist/$bin_name (from $(basename "$archive")): copy it into a directory on PATH, e.g. install -m 0755 $dist/$bin_name ~/.local/bin/"
    else
        say "no $host build in this run, so no $dist/$(bin_name_of "$host") to run here"
    fi
    if [[ " ${built_platforms[*]} " == *" linux_amd64 "* ]]; then
        image
    else
        say "no operator image: it holds the linux/amd64 build (scripts/release.sh image builds it)"
    fi
}

case $command in
    build) build ;;
    manifest) manifest ;;
    verify) verify ;;
    image) image ;;
    all)
        build
        manifest
        [[ $all_platforms == false ]] || verify
        from_the_build
        ;;
esac
