//! What `cargo xtask bench` and `cargo xtask conformance` (and `dist`)
//! share: their flag parsing, finding the C reference library, and the
//! cargo builds of kfd-sim, our libhsakmt and a runner binary.

use std::path::PathBuf;

use xshell::{cmd, Shell};

use crate::{deps, Abi};

/// Debian's C library, the default reference.
pub const SYSTEM_REFERENCE: &str = "/usr/lib/x86_64-linux-gnu/libhsakmt.so.1";

/// The word after `flag` in `args`, if `flag` is there.
pub fn value<'a>(args: &'a [String], flag: &str) -> Result<Option<&'a str>, String> {
    match args.iter().position(|a| a == flag) {
        Some(i) => args
            .get(i + 1)
            .map(|s| Some(s.as_str()))
            .ok_or_else(|| format!("{flag} needs a value")),
        None => Ok(None),
    }
}

/// With `--help` or `-h` in `args`, prints `help` and returns `false`
/// (nothing to run). Otherwise checks that `args` hold only `flags` (each
/// with a value) and `switches` and returns `true`; the error names the
/// first other word and ends with `help`.
pub fn check_args(
    args: &[String],
    flags: &[&str],
    switches: &[&str],
    help: &str,
) -> Result<bool, String> {
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{help}");
        return Ok(false);
    }
    let mut i = 0;
    while i < args.len() {
        if flags.contains(&args[i].as_str()) {
            i += 2;
        } else if switches.contains(&args[i].as_str()) {
            i += 1;
        } else {
            return Err(format!("unknown argument `{}`\n\n{help}", args[i]));
        }
    }
    Ok(true)
}

/// The reference library: `given` (`--reference`), else — unless
/// `no_system` says why the system's will not do — Debian's (installing
/// `libhsakmt1` when root and missing).
pub fn find_reference(given: Option<&str>, no_system: Option<&str>) -> Result<PathBuf, String> {
    if let Some(p) = given {
        let p = PathBuf::from(p);
        return if p.exists() {
            Ok(p)
        } else {
            Err(format!("--reference {}: no such file", p.display()))
        };
    }
    if let Some(why) = no_system {
        return Err(why.into());
    }
    let p = PathBuf::from(SYSTEM_REFERENCE);
    if !p.exists() {
        deps::ensure(&["libhsakmt1"], false)?;
    }
    if p.exists() {
        Ok(p)
    } else {
        Err(format!(
            "{SYSTEM_REFERENCE} is missing; install Debian's libhsakmt1 \
             (apt-get install libhsakmt1) or pass --reference PATH"
        ))
    }
}

fn profile(release: bool) -> Option<&'static str> {
    release.then_some("--release")
}

/// `cargo build [--release] -p kfd-sim` (`libkfd_sim.so`).
pub fn sim(sh: &Shell, release: bool) -> Result<(), String> {
    let release = profile(release);
    cmd!(sh, "cargo build {release...} -p kfd-sim")
        .run()
        .map_err(|e| e.to_string())
}

/// `cargo build --release` of our libhsakmt of ABI generation `abi`
/// (`<target>/release/libhsakmt.so`).
pub fn library(sh: &Shell, abi: &Abi) -> Result<(), String> {
    library_with(sh, abi.name)
}

/// `cargo build --release` of our libhsakmt with the hsakmt features
/// `features` (comma-separated; `<target>/release/libhsakmt.so`).
pub fn library_with(sh: &Shell, features: &str) -> Result<(), String> {
    cmd!(
        sh,
        "cargo build --release -p hsakmt --no-default-features --features {features}"
    )
    .run()
    .map_err(|e| e.to_string())
}

/// `cargo build [--release] -p <package> --bin <bin>`: a runner.
pub fn runner(sh: &Shell, package: &str, bin: &str, release: bool) -> Result<(), String> {
    let release = profile(release);
    cmd!(sh, "cargo build {release...} -p {package} --bin {bin}")
        .run()
        .map_err(|e| e.to_string())
}
