//! Runs a program on a simulated machine: starts it with the LD_PRELOAD
//! library (`libkfd_sim.so`), a topology preset and an ioctl trace, waits
//! for it, then summarises the trace.
//!
//! ```text
//! cargo run -p kfd-sim --example run -- --preset mi300x -- rocminfo
//! cargo run -p kfd-sim --example run -- --trace /tmp/t.txt -- ./my_hsakmt_program arg
//! ```
//!
//! Flags (before `--`): `--preset NAME` (default `mi210`) or a topology
//! file, `--trace FILE` (default: a file in the temporary directory, kept),
//! `--lib PATH` (the preload library; default: the one cargo built next to
//! this example, or `$KFD_SIM_LIB`). The program's exit status is this
//! command's.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("run: {e}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<ExitCode, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let split = args.iter().position(|a| a == "--").unwrap_or(args.len());
    let (flags, program) = (&args[..split], args.get(split + 1..).unwrap_or_default());
    let mut preset = kfd_sim::presets::DEFAULT.to_string();
    let mut trace = std::env::temp_dir().join(format!("kfd-sim-run-{}.trace", std::process::id()));
    let mut lib = std::env::var_os("KFD_SIM_LIB").map(PathBuf::from);
    let mut it = flags.iter();
    while let Some(flag) = it.next() {
        let mut value = || it.next().cloned().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--preset" => preset = value()?,
            "--trace" => trace = value()?.into(),
            "--lib" => lib = Some(value()?.into()),
            other => return Err(format!("unknown flag {other:?}; usage: run [--preset NAME] [--trace FILE] [--lib PATH] -- PROGRAM [ARGS]")),
        }
    }
    let (exe, exe_args) = program
        .split_first()
        .ok_or("no program given; usage: run [--preset NAME] [--trace FILE] [--lib PATH] -- PROGRAM [ARGS]")?;
    if kfd_sim::presets::preset(&preset).is_none() && !Path::new(&preset).is_file() {
        return Err(format!(
            "{preset:?} is neither a preset ({}) nor a topology file",
            kfd_sim::presets::NAMES.join(", ")
        ));
    }
    let lib = match lib {
        Some(l) => l,
        None => built_library()?,
    };
    let preload = match std::env::var("LD_PRELOAD") {
        Ok(old) if !old.is_empty() => format!("{} {old}", lib.display()),
        _ => lib.display().to_string(),
    };

    eprintln!(
        "run: {exe} on kfd-sim preset {preset} (LD_PRELOAD={}, KFD_SIM_TRACE={})",
        lib.display(),
        trace.display()
    );
    // The preload library appends (forked children share the file): start
    // from an empty one.
    std::fs::write(&trace, "").map_err(|e| format!("{}: {e}", trace.display()))?;
    let status = Command::new(exe)
        .args(exe_args)
        .env("LD_PRELOAD", preload)
        .env("KFD_SIM_TOPOLOGY", &preset)
        .env("KFD_SIM_TRACE", &trace)
        .status()
        .map_err(|e| format!("{exe}: {e}"))?;

    let text = std::fs::read_to_string(&trace).unwrap_or_default();
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    let mut failed = 0;
    for line in text.lines() {
        // `[pid] AMDKFD_IOC_NAME args -> result`
        let name = line.split_whitespace().nth(1).unwrap_or("?");
        *counts
            .entry(name.strip_prefix("AMDKFD_IOC_").unwrap_or(name))
            .or_default() += 1;
        failed += usize::from(
            line.rsplit("-> ")
                .next()
                .is_some_and(|r| r.starts_with('-')),
        );
    }
    let mut by_count: Vec<_> = counts.into_iter().collect();
    by_count.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let top: Vec<String> = by_count
        .iter()
        .take(6)
        .map(|(n, c)| format!("{n} {c}"))
        .collect();
    println!(
        "kfd-sim: {exe} exited with {status}; {} ioctls traced ({failed} failed) in {}",
        text.lines().count(),
        trace.display()
    );
    if !top.is_empty() {
        println!("kfd-sim: most frequent: {}", top.join(", "));
    }
    Ok(match status.code() {
        Some(0) => ExitCode::SUCCESS,
        Some(c) => ExitCode::from(c.clamp(1, 255) as u8),
        None => ExitCode::FAILURE,
    })
}

/// The `libkfd_sim.so` cargo built with this program: next to it or in
/// `deps/` there, for a binary, or one directory up, for an example (the
/// newest; a `cargo test` after a `cargo build` only refreshes `deps/`).
fn built_library() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let dir = exe.parent().ok_or("this program has no directory")?;
    dir.ancestors()
        .take(2)
        .flat_map(|d| [d.join("libkfd_sim.so"), d.join("deps/libkfd_sim.so")])
        .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
        .max()
        .map(|(_, p)| p)
        .ok_or_else(|| {
            format!(
                "no libkfd_sim.so next to {} (build it with `cargo build -p kfd-sim`, or pass --lib)",
                exe.display()
            )
        })
}
