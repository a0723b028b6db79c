//! `cargo xtask bench`: builds (release) kfd-sim, our libhsakmt for both
//! ABI generations and the `kfd-bench` runner into their own target
//! directory (`<target>/bench/build`, so concurrent debug or `dist` builds
//! are neither clobbered nor clobber it), finds Debian's C libhsakmt, and
//! runs `kfd-bench run`, which prints the table and writes
//! `<target>/bench/report.{json,txt,md}` and `scaling.svg`; with
//! `--markdown` also `docs/benchmarks.md` (method, machine, commit, date
//! and table, generated whole). With `--instructions` it runs `kfd-bench
//! instructions` instead (after the same builds): instruction counts per
//! call under callgrind, installing Debian's `valgrind` when it is
//! missing, into `<target>/bench/instructions.{json,txt,md}`.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use xshell::{cmd, Shell};

use crate::build::{self, check_args, find_reference, value};
use crate::{abi_named, deps, project_root, shell, target_dir};

const HELP: &str = "cargo xtask bench [flags]

Runs the same microbenchmarks against Debian's C libhsakmt 5.2.3 and our
libhsakmt (rocm-5.2 build; the `newest` build for the context API), each
library in its own process on kfd-sim, alternating C/ours, several
repetitions. Prints median and p10-p90 per operation for both and the ratio
C/ours; writes target/bench/report.json, report.txt, report.md and
scaling.svg.

flags:
  --quick            short run: 2 reps, live sets up to 10k, small budgets
  --reps N           repetitions (default 5; --quick: 2)
  --levels a,b,..    live-allocation levels (default 0,1000,10000,50000)
  --presets a,b,..   topology presets (default mi210,apu,navi31,mi300x,large64)
  --group NAME       only this group (repeatable): topology, scaling, events,
                     queues, threads, ctx; `shader` is the simulated GPU's
                     interpreter (kfd-gpu's bench: VALU and memory-bound
                     lane-instructions/s, 1M-element vector add), not a
                     C/ours comparison
  --per-op-ms N      sampling time per operation and child (default 150)
  --reference PATH   the C library (default: the system's libhsakmt.so.1,
                     installed with apt when root and missing)
  --markdown         also rewrite docs/benchmarks.md from this run (the
                     method, the machine, the commit, the date, the table)
  --instructions     instead of timing, count instructions per call under
                     callgrind (kfd-bench instructions): each operation at
                     two batch sizes, per library; the library's own
                     instructions and the system code it called, apart from
                     the simulator's; writes target/bench/instructions.json,
                     instructions.txt and instructions.md (installs Debian's
                     valgrind when root and missing). Takes --reference
                     and --ops only
  --ops a,b,..       with --instructions: only these operations (default:
                     nested open, event create, set+wait, the waits on 64
                     events, the pointer look-ups and allocations at
                     live=0, queue create+destroy; the ids are in
                     docs/benchmarks.md)";

/// What `--instructions` takes besides itself.
const INSTRUCTION_FLAGS: &[&str] = &["--reference", "--ops"];

/// What [`build_all`] made.
struct Built {
    /// Our libhsakmt, rocm-5.2 build.
    rocm52: PathBuf,
    /// Our libhsakmt, newest build (the context API).
    newest: PathBuf,
    /// `libkfd_sim.so`.
    sim: PathBuf,
    /// The `kfd-bench` runner.
    runner: PathBuf,
}

/// The release builds of every bench run, in `<target>/bench/build`:
/// kfd-sim, our libhsakmt of both generations (each copied to
/// `<target>/bench/lib/<abi>/libhsakmt.so.1`) and the runner.
fn build_all(sh: &Shell, out: &Path) -> Result<Built, String> {
    let build = out.join("build");
    let _env = sh.push_env("CARGO_TARGET_DIR", &build);
    build::sim(sh, true)?;
    let mut libs = Vec::new();
    for dir in ["rocm-5.2", "newest"] {
        let abi = abi_named(dir).ok_or_else(|| format!("no ABI generation `{dir}`"))?;
        build::library(sh, abi)?;
        libs.push(install(
            &build.join("release/libhsakmt.so"),
            &out.join("lib").join(dir),
        )?);
    }
    build::runner(sh, "kfd-bench", "kfd-bench", true)?;
    let newest = libs.pop().ok_or("no newest build")?;
    let rocm52 = libs.pop().ok_or("no rocm-5.2 build")?;
    Ok(Built {
        sim: build.join("release/libkfd_sim.so"),
        runner: build.join("release/kfd-bench"),
        rocm52,
        newest,
    })
}

/// Runs the runner with `args`, outside any preload.
fn run_runner(runner: &Path, args: &[String]) -> Result<(), String> {
    let status = std::process::Command::new(runner)
        .args(args)
        .env_remove("LD_PRELOAD")
        .status()
        .map_err(|e| format!("{}: {e}", runner.display()))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("kfd-bench failed ({status})"))
    }
}

/// `--instructions`: the builds, valgrind, then `kfd-bench instructions`.
fn instructions(args: &[String]) -> Result<(), String> {
    for a in args {
        if a.starts_with("--") && a != "--instructions" && !INSTRUCTION_FLAGS.contains(&a.as_str())
        {
            return Err(format!(
                "`{a}` is a flag of the timed run; --instructions takes {} only",
                INSTRUCTION_FLAGS.join(" and ")
            ));
        }
    }
    let reference = find_reference(value(args, "--reference")?, None)?;
    if !deps::on_path("valgrind") {
        deps::ensure(&["valgrind"], false)?;
    }
    let out = target_dir().join("bench");
    let sh = shell()?;
    let built = build_all(&sh, &out)?;
    let mut run: Vec<String> = vec![
        "instructions".into(),
        "--reference".into(),
        reference.display().to_string(),
        "--ours".into(),
        built.rocm52.display().to_string(),
        "--sim".into(),
        built.sim.display().to_string(),
        "--out".into(),
        out.display().to_string(),
    ];
    if let Some(ops) = value(args, "--ops")? {
        run.extend(["--ops".to_string(), ops.to_string()]);
    }
    run_runner(&built.runner, &run)
}

/// Entry point: `args` are the words after `bench`.
pub fn run(args: &[String]) -> Result<(), String> {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    let flags = [
        "--reps",
        "--levels",
        "--presets",
        "--group",
        "--per-op-ms",
        "--reference",
        "--ops",
    ];
    if !check_args(
        args,
        &flags,
        &["--quick", "--markdown", "--instructions"],
        HELP,
    )? {
        return Ok(());
    }
    if args.iter().any(|a| a == "--instructions") {
        return instructions(args);
    }
    if args.iter().any(|a| a == "--ops") {
        return Err("--ops goes with --instructions".into());
    }
    let quick = args.iter().any(|a| a == "--quick");
    let groups: Vec<&str> = args
        .windows(2)
        .filter(|w| w[0] == "--group")
        .map(|w| w[1].as_str())
        .collect();
    if groups.contains(&"shader") {
        shader(quick)?;
        if groups.len() == 1 {
            return Ok(());
        }
    }
    let reference = find_reference(value(args, "--reference")?, None)?;

    let out = target_dir().join("bench");
    let sh = shell()?;
    let built = build_all(&sh, &out)?;

    let mut run: Vec<String> = vec![
        "run".into(),
        "--reference".into(),
        reference.display().to_string(),
        "--ours".into(),
        built.rocm52.display().to_string(),
        "--ours-newest".into(),
        built.newest.display().to_string(),
        "--sim".into(),
        built.sim.display().to_string(),
        "--out".into(),
        out.display().to_string(),
        "--since".into(),
        since.to_string(),
    ];
    if quick {
        run.extend(
            [
                "--reps",
                "2",
                "--levels",
                "0,1000,10000",
                "--per-op-ms",
                "40",
                "--max-samples",
                "10",
            ]
            .map(String::from),
        );
    }
    for (i, a) in args.iter().enumerate() {
        if flags.contains(&a.as_str()) && a != "--reference" {
            if let Some(v) = args.get(i + 1) {
                if !(a == "--group" && v == "shader") {
                    run.extend([a.clone(), v.clone()]);
                }
            }
        }
    }
    if args.iter().any(|a| a == "--markdown") {
        let docs = project_root().join("docs");
        std::fs::create_dir_all(&docs).map_err(|e| format!("{}: {e}", docs.display()))?;
        run.extend([
            "--markdown".to_string(),
            docs.join("benchmarks.md").display().to_string(),
            "--commit".into(),
            commit(&sh),
            "--toolchain".into(),
            cmd!(sh, "rustc -V")
                .quiet()
                .read()
                .unwrap_or_else(|_| "unknown".into()),
            "--command".into(),
            ["cargo xtask bench".to_string()]
                .into_iter()
                .chain(args.iter().cloned())
                .collect::<Vec<_>>()
                .join(" "),
        ]);
    }
    run_runner(&built.runner, &run)
}

/// Copies a built `libhsakmt.so` to `dir/libhsakmt.so.1` (a copy, so a
/// later build of the other generation cannot change it under the run).
fn install(built: &Path, dir: &Path) -> Result<PathBuf, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let so1 = dir.join("libhsakmt.so.1");
    let tmp = dir.join("libhsakmt.so.1.tmp");
    std::fs::copy(built, &tmp)
        .and_then(|_| std::fs::rename(&tmp, &so1))
        .map_err(|e| format!("copy {} -> {}: {e}", built.display(), so1.display()))?;
    Ok(so1)
}

/// The commit being measured, `git describe`-style: the short hash, and
/// whether tracked files differ from it.
fn commit(sh: &Shell) -> String {
    let Ok(hash) = cmd!(sh, "git rev-parse --short=12 HEAD").quiet().read() else {
        return "unknown (not a git checkout)".into();
    };
    let dirty = cmd!(sh, "git status --porcelain --untracked-files=no")
        .quiet()
        .read()
        .map(|s| !s.trim().is_empty())
        .unwrap_or(true);
    if dirty {
        format!("`{hash}` with uncommitted changes")
    } else {
        format!("`{hash}`")
    }
}

/// The shader machine's own benchmark (`kfd-gpu/benches/shader.rs`),
/// release build, in the bench target directory.
fn shader(quick: bool) -> Result<(), String> {
    let sh = shell()?;
    let build = target_dir().join("bench").join("build");
    let _env = sh.push_env("CARGO_TARGET_DIR", &build);
    let quick = quick.then_some("--quick");
    cmd!(sh, "cargo bench -p kfd-gpu --bench shader -- {quick...}")
        .run()
        .map_err(|e| e.to_string())
}
