//! Places the functions `mcp-cassette` runs at start-up side by side in the binary.
//!
//! `replay` is spawned once per test by suites that use a cassette as their server, so what a
//! process pays before it answers is on their clock. Most of that is the kernel faulting in
//! code: it maps 64 KiB around each fault, and the few hundred functions a cold start runs were
//! spread over the whole binary, ~30 windows of it. `startup.order` lists them
//! (`scripts/startup-order.sh` records them with valgrind), and LLD's symbol ordering file puts
//! them together: ~6 windows, a tenth off the replay's cold start (docs/benchmarks.md).
//!
//! The file is only a layout hint: a name that no longer exists (symbol names carry hashes that
//! change with compiler and dependency versions) is skipped in silence, and the binary is the
//! same program either way. It is handed over only where the linker is certainly LLD, which does
//! not reject the option: x86-64 Linux with a rustc that links with its own LLD (1.90 on) and no
//! linker chosen by the user. Elsewhere nothing changes.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=startup.order");
    println!("cargo::rerun-if-env-changed=RUSTFLAGS");
    println!("cargo::rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
    let Some(order) = ordering_file() else {
        return;
    };
    if links_with_rust_lld() {
        println!(
            "cargo::rustc-link-arg-bin=mcp-cassette=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        println!("cargo::rustc-link-arg-bin=mcp-cassette=-Wl,--no-warn-symbol-ordering");
    }
}

/// `startup.order` by absolute path, when `-Wl,` can carry that path (it splits on commas).
fn ordering_file() -> Option<PathBuf> {
    let order = Path::new(&env::var_os("CARGO_MANIFEST_DIR")?).join("startup.order");
    let text = order.to_str()?;
    (order.is_file() && !text.contains(',')).then_some(order)
}

/// Whether this build links with the LLD that rustc ships, and so accepts the ordering file.
fn links_with_rust_lld() -> bool {
    let flags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let user_chose_a_linker = env::var_os("RUSTC_LINKER").is_some()
        || flags.split('\x1f').any(|flag| {
            ["linker", "link-self-contained", "fuse-ld"]
                .iter()
                .any(|word| flag.contains(word))
        });
    if env::var("TARGET").as_deref() != Ok("x86_64-unknown-linux-gnu") || user_chose_a_linker {
        return false;
    }
    let rustc = env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let ask = |args: &[&str]| {
        Command::new(&rustc)
            .args(args)
            .output()
            .ok()
            .filter(|out| out.status.success())
            .and_then(|out| String::from_utf8(out.stdout).ok())
    };
    // rustc 1.90 made its own LLD the default linker for this target; a toolchain that ships
    // it has `gcc-ld/ld.lld` in its sysroot (distribution builds may not).
    let recent = ask(&["-vV"]).is_some_and(|version| {
        version
            .lines()
            .find_map(|line| line.strip_prefix("release: "))
            .and_then(|release| {
                let mut parts = release.split(['.', '-']);
                Some((
                    parts.next()?.parse::<u32>().ok()?,
                    parts.next()?.parse::<u32>().ok()?,
                ))
            })
            .is_some_and(|version| version >= (1, 90))
    });
    let ships_lld = ask(&["--print", "sysroot"]).is_some_and(|sysroot| {
        Path::new(sysroot.trim())
            .join("lib/rustlib/x86_64-unknown-linux-gnu/bin/gcc-ld/ld.lld")
            .is_file()
    });
    recent && ships_lld
}
