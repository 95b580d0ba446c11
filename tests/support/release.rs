//! Helpers for the tests of `scripts/release.sh`: running it, sha256 in lowercase hex, and a
//! stand-in binary that the packing, the verify step and the image can take without a release
//! build or a cross toolchain. Included with `#[path]`; each test file uses part of it.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

pub const REPO: &str = env!("CARGO_MANIFEST_DIR");
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The time every archive entry gets in these tests (SOURCE_DATE_EPOCH): 2026-01-01T00:00:00Z.
pub const EPOCH: &str = "1767225600";

/// Runs `bash scripts/release.sh ARGS...` with a fixed SOURCE_DATE_EPOCH.
pub fn release(args: &[&str]) -> Output {
    Command::new("bash")
        .arg(Path::new(REPO).join("scripts/release.sh"))
        .args(args)
        .env("SOURCE_DATE_EPOCH", EPOCH)
        .output()
        .expect("bash runs scripts/release.sh")
}

/// Lowercase hex sha256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, bytes);
    digest.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// ELF `e_machine` of x86-64 and of AArch64.
pub const EM_X86_64: u16 = 0x3e;
pub const EM_AARCH64: u16 = 0xb7;

/// A complete static ELF executable for `machine` (no interpreter, no libraries): one loadable
/// segment whose x86-64 code writes `message` to stdout and exits 0, whatever its arguments.
/// So for x86-64 it is a real, runnable static program (`file`: "statically linked") that answers
/// `--version` with `message`; for another machine the same bytes only carry that header.
/// Layout: ELF64 header (64 bytes), one PT_LOAD program header (56), code (33), message.
pub fn static_elf(machine: u16, message: &str) -> Vec<u8> {
    const BASE: u64 = 0x40_0000;
    const CODE_AT: u64 = 64 + 56;
    let msg = message.as_bytes();
    let mut code = Vec::new();
    code.extend([0xb8, 1, 0, 0, 0]); // mov eax, 1 (write)
    code.extend([0xbf, 1, 0, 0, 0]); // mov edi, 1 (stdout)
    code.extend([0x48, 0x8d, 0x35]); // lea rsi, [rip + 16]: the message after the code
    code.extend(16i32.to_le_bytes());
    code.push(0xba); // mov edx, len
    code.extend((msg.len() as u32).to_le_bytes());
    code.extend([0x0f, 0x05]); // syscall
    code.extend([0xb8, 60, 0, 0, 0]); // mov eax, 60 (exit)
    code.extend([0x31, 0xff]); // xor edi, edi
    code.extend([0x0f, 0x05]); // syscall
    assert_eq!(code.len(), 33);
    let total = CODE_AT + code.len() as u64 + msg.len() as u64;

    let mut elf = vec![0x7f, b'E', b'L', b'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    elf.extend(2u16.to_le_bytes()); // e_type: ET_EXEC
    elf.extend(machine.to_le_bytes());
    elf.extend(1u32.to_le_bytes()); // e_version
    elf.extend((BASE + CODE_AT).to_le_bytes()); // e_entry
    elf.extend(64u64.to_le_bytes()); // e_phoff
    elf.extend(0u64.to_le_bytes()); // e_shoff
    elf.extend(0u32.to_le_bytes()); // e_flags
    for half in [64u16, 56, 1, 64, 0, 0] {
        // e_ehsize, e_phentsize, e_phnum, e_shentsize, e_shnum, e_shstrndx
        elf.extend(half.to_le_bytes());
    }
    elf.extend(1u32.to_le_bytes()); // p_type: PT_LOAD
    elf.extend(5u32.to_le_bytes()); // p_flags: R + X
    elf.extend(0u64.to_le_bytes()); // p_offset
    elf.extend(BASE.to_le_bytes()); // p_vaddr
    elf.extend(BASE.to_le_bytes()); // p_paddr
    elf.extend(total.to_le_bytes()); // p_filesz
    elf.extend(total.to_le_bytes()); // p_memsz
    elf.extend(0x1000u64.to_le_bytes()); // p_align
    elf.extend(code);
    elf.extend(msg);
    assert_eq!(elf.len() as u64, total);
    elf
}

/// Unpacks `archive` (a `.tar`, or with `gzip` a `.tar.gz`) into `into`, which is created.
pub fn untar(archive: &Path, into: &Path, gzip: bool) {
    std::fs::create_dir_all(into).unwrap();
    let status = Command::new("tar")
        .arg(if gzip { "-xzf" } else { "-xf" })
        .arg(archive)
        .arg("-C")
        .arg(into)
        .status()
        .unwrap();
    assert!(status.success(), "tar -x {}", archive.display());
}

/// Writes `bytes` to `path` as an executable file.
pub fn write_executable(path: &Path, bytes: &[u8]) {
    std::fs::write(path, bytes).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// The lines a listing command (`tar -tvf`, `unzip -Z1`) prints, in the archive's order.
pub fn listing(program: &str, args: &[&str], archive: &Path) -> Vec<String> {
    let output = Command::new(program).args(args).arg(archive).output().unwrap();
    assert!(
        output.status.success(),
        "{program} {args:?} {}: {}",
        archive.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// The stderr of an Output, for assertion messages.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}
