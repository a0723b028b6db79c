//! `cargo xtask conformance`: builds what the run needs, finds the
//! reference library, and runs `kfd-conformance run` (the `conformance`
//! crate), which prints the per-family table, writes
//! `target/conformance/report.{md,json}` and exits non-zero on any
//! unexpected difference.

use std::path::{Path, PathBuf};

use crate::build::{self, check_args, find_reference, value};
use crate::{abi_named, dist_abi, project_root, shell, target_dir};

/// The simulator presets (kfd-sim's `presets::NAMES`).
pub const PRESETS: &str = "mi210,mi300x,apu,navi31,large64";

const HELP: &str = "cargo xtask conformance [flags]

Runs Debian's C libhsakmt (or --reference) and our libhsakmt of the same ABI
generation side by side, each in its own child process, and diffs statuses,
output structs, side effects and (on the simulator) ioctl traces.

flags:
  --reference PATH   C library to compare against (default: the system's
                     libhsakmt.so.1; installed with apt when root and missing)
  --abi GEN          rocm-5.2 (default; pairs with Debian 5.2.3) or current
                     (needs --reference: a newest-upstream build)
  --ours PATH        our library to test (default: built with `dist` code)
                     With --abi rocm-5.2 our current-ABI build is built too:
                     the families whose API ours lacks (the Ctx API) run
                     their \"ours\" side on it, checked against the documented
                     semantics (the reference still lacks the API)
  --sim | --hardware simulator (default when /dev/kfd is absent) or real KFD
                     (default when /dev/kfd exists)
  --preset NAME      simulator preset for every family (default: every preset
                     for topology, mi210 for the rest)
  --family NAME      only this family (repeatable)
  --trace-advisory   report ioctl-trace differences without failing
  --timeout SECS     per-child time limit (default 120)";

/// Entry point: `args` are the words after `conformance`.
pub fn run(args: &[String]) -> Result<(), String> {
    let known_flags = [
        "--reference",
        "--abi",
        "--ours",
        "--preset",
        "--family",
        "--timeout",
    ];
    let known_switches = ["--sim", "--hardware", "--trace-advisory"];
    if !check_args(args, &known_flags, &known_switches, HELP)? {
        return Ok(());
    }
    let abi_name = value(args, "--abi")?.unwrap_or("rocm-5.2");
    let abi = abi_named(abi_name)
        .ok_or_else(|| format!("unknown --abi `{abi_name}` (rocm-5.2 or newest)"))?;
    let force_sim = args.iter().any(|a| a == "--sim");
    let force_hw = args.iter().any(|a| a == "--hardware");
    if force_sim && force_hw {
        return Err("--sim and --hardware exclude each other".into());
    }
    let hardware = force_hw || (!force_sim && Path::new("/dev/kfd").exists());
    if hardware && !Path::new("/dev/kfd").exists() {
        return Err("--hardware: /dev/kfd does not exist on this machine".into());
    }

    // Upstream ships no shared libhsakmt of the newest generation.
    let no_system = (abi.name == "newest").then_some(
        "--abi newest needs --reference PATH: upstream ships no shared \
         libhsakmt any more; build one from ROCm's rocm-systems \
         (projects/rocr-runtime/libhsakmt) and pass it",
    );
    let reference = find_reference(value(args, "--reference")?, no_system)?;
    let sh = shell()?;
    let target = target_dir();

    // Build what the run needs: the simulator (unless on hardware), our
    // library of this ABI generation (the `dist` code path), the runner.
    let sim = if hardware {
        None
    } else {
        build::sim(&sh, false)?;
        let so = target.join("debug").join("libkfd_sim.so");
        if !so.exists() {
            return Err(format!("{} was not built", so.display()));
        }
        Some(so)
    };
    let ours = match value(args, "--ours")? {
        Some(p) => PathBuf::from(p),
        None => dist_abi(abi)?,
    };
    // Our rocm-5.2 build lacks the Ctx API; the parent runs that family's
    // "ours" side on our newest build (the Ctx functions are always ours).
    let current_ours = if abi.name == "newest" {
        None
    } else {
        let cur = abi_named("newest").ok_or("no newest ABI generation")?;
        Some(dist_abi(cur)?)
    };
    build::runner(&sh, "conformance", "kfd-conformance", false)?;
    let runner = target.join("debug").join("kfd-conformance");

    let out = target.join("conformance");
    let mut run = vec![
        "run".to_string(),
        "--abi".into(),
        abi.name.into(),
        "--reference".into(),
        reference.display().to_string(),
        "--ours".into(),
        ours.display().to_string(),
        "--out".into(),
        out.display().to_string(),
        "--intended".into(),
        project_root()
            .join("conformance/intended-differences.txt")
            .display()
            .to_string(),
    ];
    match &sim {
        Some(so) => {
            run.extend(["--sim".into(), so.display().to_string()]);
            match value(args, "--preset")? {
                Some(p) => run.extend([
                    "--presets".into(),
                    p.into(),
                    "--default-preset".into(),
                    p.into(),
                ]),
                None => run.extend(["--presets".into(), PRESETS.into()]),
            }
        }
        None => run.push("--hardware".into()),
    }
    if let Some(cur) = &current_ours {
        run.extend(["--current-ours".into(), cur.display().to_string()]);
    }
    for (i, a) in args.iter().enumerate() {
        if a == "--family" || a == "--timeout" {
            if let Some(v) = args.get(i + 1) {
                run.extend([a.clone(), v.clone()]);
            }
        }
        if a == "--trace-advisory" {
            run.push(a.clone());
        }
    }
    println!(
        "conformance: {} ({}) vs {} on {}",
        reference.display(),
        abi.name,
        ours.display(),
        if hardware { "the real KFD" } else { "kfd-sim" }
    );
    let status = std::process::Command::new(&runner)
        .args(&run)
        .current_dir(project_root())
        .status()
        .map_err(|e| format!("{}: {e}", runner.display()))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "conformance found unexpected differences (see above and {})",
            out.join("report.md").display()
        ))
    }
}
