//! `cargo xtask conformance`: builds what the run needs, finds the
//! reference library, and runs `kfd-conformance run` (the `conformance`
//! crate), which prints the per-family table, writes
//! `target/conformance/<abi>/report.{md,json}` and exits non-zero on any
//! unexpected difference.
//!
//! Every generation with a packaged C library runs by default: rocm-5.2
//! against Debian 12's libhsakmt 5.2.3 on the host, rocm-6.2 against
//! Debian 13's 6.2.4 inside the trixie rootfs ([`crate::rootfs`]: its
//! binaries need a newer glibc), with the runner, the simulator and our
//! libraries staged into it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::build::{self, check_args, find_reference, value};
use crate::rootfs::{self, Place};
use crate::{abi_named, dist_abi, project_root, shell, target_dir, Abi};

/// The generations `cargo xtask conformance` runs when no `--abi` is
/// given: those with a packaged C reference.
pub const PACKAGED: &[&str] = &["rocm-5.2", "rocm-6.2"];

/// Time limit of one whole run inside a rootfs.
const ROOTFS_RUN_LIMIT: Duration = Duration::from_secs(3600);

/// The simulator presets (kfd-sim's `presets::NAMES`).
pub const PRESETS: &str = "mi210,mi300x,apu,navi31,large64";

const HELP: &str = "cargo xtask conformance [flags]

Runs Debian's C libhsakmt (or --reference) and our libhsakmt of the same ABI
generation side by side, each in its own child process, and diffs statuses,
output structs, side effects and (on the simulator) ioctl traces.

flags:
  --reference PATH   C library to compare against (default: the system's
                     libhsakmt.so.1; installed with apt when root and missing)
  --abi GEN          one generation: rocm-5.2 (against Debian 12's 5.2.3 on
                     the host), rocm-6.2 (against Debian 13's 6.2.4 in a
                     trixie rootfs under target/rootfs, made when missing)
                     or newest (needs --reference: a newest-upstream build).
                     Default: every packaged one, rocm-5.2 then rocm-6.2
  --ours PATH        our library to test (default: built with `dist` code)
                     For rocm-5.2 and rocm-6.2 our newest build is built too:
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
    let abis: Vec<&Abi> = match value(args, "--abi")? {
        Some(name) => vec![abi_named(name)
            .ok_or_else(|| format!("unknown --abi `{name}` (rocm-5.2, rocm-6.2 or newest)"))?],
        None => PACKAGED
            .iter()
            .map(|n| abi_named(n).expect("packaged generation"))
            .collect(),
    };
    if abis.len() > 1 && (value(args, "--reference")?.is_some() || value(args, "--ours")?.is_some())
    {
        return Err("--reference and --ours name one library: give --abi too".into());
    }
    let mut failed = Vec::new();
    for abi in abis {
        if let Err(e) = run_one(args, abi) {
            eprintln!("conformance {}: {e}", abi.name);
            failed.push(abi.name);
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "conformance found unexpected differences or could not run: {}",
            failed.join(", ")
        ))
    }
}

/// One generation's run.
fn run_one(args: &[String], abi: &Abi) -> Result<(), String> {
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
    // Debian 13's binaries run inside its rootfs.
    let root = if abi.name == "rocm-6.2" {
        Some(rootfs::ensure(&rootfs::TRIXIE)?.root)
    } else {
        None
    };
    let reference = match &root {
        Some(root) => match value(args, "--reference")? {
            Some(p) => PathBuf::from(p),
            None => root.join(build::SYSTEM_REFERENCE.trim_start_matches('/')),
        },
        None => find_reference(value(args, "--reference")?, no_system)?,
    };
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
    let newest_ours = if abi.name == "newest" {
        None
    } else {
        let cur = abi_named("newest").ok_or("no newest ABI generation")?;
        Some(dist_abi(cur)?)
    };
    build::runner(&sh, "conformance", "kfd-conformance", false)?;
    let runner = target.join("debug").join("kfd-conformance");

    let out = target.join("conformance").join(abi.name);
    // Inside a rootfs every file the run needs is staged at
    // rootfs::INSIDE; `seen` names a host file as the run sees it.
    let stage = target
        .join("conformance")
        .join(format!("stage-{}", abi.name));
    let place = match &root {
        Some(root) => {
            let _ = std::fs::remove_dir_all(&stage);
            std::fs::create_dir_all(stage.join("out")).map_err(|e| e.to_string())?;
            Place::Chroot {
                root: root.clone(),
                stage: stage.clone(),
            }
        }
        None => Place::Host {
            stage: stage.clone(),
        },
    };
    let mut staged = 0;
    let mut seen = |p: &Path| -> Result<String, String> {
        let Some(root) = &root else {
            return Ok(p.display().to_string());
        };
        if let Ok(inside) = p.strip_prefix(root) {
            return Ok(format!("/{}", inside.display()));
        }
        staged += 1;
        let name = format!(
            "{staged}-{}",
            p.file_name().and_then(|n| n.to_str()).unwrap_or("file")
        );
        std::fs::copy(p, stage.join(&name)).map_err(|e| format!("stage {}: {e}", p.display()))?;
        Ok(place.seen(&name))
    };
    let intended = project_root().join("conformance/intended-differences.txt");
    let out_seen = if root.is_some() {
        place.seen("out")
    } else {
        out.display().to_string()
    };
    let mut run = vec![
        "run".to_string(),
        "--abi".into(),
        abi.name.into(),
        "--reference".into(),
        seen(&reference)?,
        "--ours".into(),
        seen(&ours)?,
        "--out".into(),
        out_seen,
        "--intended".into(),
        seen(&intended)?,
    ];
    match &sim {
        Some(so) => {
            run.extend(["--sim".into(), seen(so)?]);
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
    if let Some(cur) = &newest_ours {
        run.extend(["--newest-ours".into(), seen(cur)?]);
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
        "conformance: {} ({}) vs {} on {}{}",
        reference.display(),
        abi.name,
        ours.display(),
        if hardware { "the real KFD" } else { "kfd-sim" },
        match &root {
            Some(r) => format!(", inside {}", r.display()),
            None => String::new(),
        }
    );
    let status = match &root {
        None => std::process::Command::new(&runner)
            .args(&run)
            .current_dir(project_root())
            .status(),
        Some(_) => {
            let mut argv = vec![seen(&runner)?];
            argv.extend(run);
            let env = [("PATH".to_string(), "/usr/bin:/bin".to_string())];
            place.command(ROOTFS_RUN_LIMIT, &env, &argv).status()
        }
    }
    .map_err(|e| format!("{}: {e}", runner.display()))?;
    if root.is_some() {
        // The report was written into the stage; keep it where the host
        // run's report goes.
        let _ = std::fs::remove_dir_all(&out);
        std::fs::create_dir_all(&out).map_err(|e| e.to_string())?;
        for name in ["report.md", "report.json"] {
            let from = stage.join("out").join(name);
            if from.exists() {
                std::fs::copy(&from, out.join(name)).map_err(|e| e.to_string())?;
            }
        }
    }
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "unexpected differences (see above and {})",
            out.join("report.md").display()
        ))
    }
}
