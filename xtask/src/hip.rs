//! `cargo xtask hip`: our HIP program (`clients/hip`) built with Debian's
//! hipcc 7.2.4 and run on the simulator with HIP 7.2.4 on ROCr 7.2.4, in
//! the `sid-hip` rootfs ([`rootfs::SID_HIP`]).
//!
//! - Build: `hipcc --genco` makes a code object of `fill.hip` for the
//!   preset's GPU, `hipcc` the host program `kfd-hip-work`; both are
//!   cached under `target/hip/work/out` and made again only when a source,
//!   the command line or the rootfs changes (a key file holds all three).
//! - Data run: hipMalloc, hipHostMalloc, hipMemcpyAsync of 1 and 64 MiB
//!   on a stream + hipStreamSynchronize with the bytes compared, events
//!   with hipEventElapsedTime > 0, hipModuleLoad of the code object:
//!   every check must print `OK` and the run `ALL OK`.
//! - Launch run: the code object's kernel runs on the simulator's shader
//!   machine over 1000 work-items (a partial last workgroup) and every
//!   word it wrote, and every one it must not write, is checked.
//! - Kernels run: `kfd-hip-kernels` (`kernels.hip`, built for gfx90a,
//!   gfx942 and gfx1100 at once) runs its kernels, each checked against a
//!   reference; each prints `OK <name>` or `FAIL <name>: <why>`, and the
//!   program `ALL OK` when all passed.
//!
//! The runtime reaches the simulator through ROCr's embedded thunk; with
//! `--ours`, through our newest generation as `libdtif.so`
//! (`HSA_ENABLE_DTIF=1`) once `cargo xtask dist` builds it.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::build::{self, check_args, value};
use crate::clients::describe;
use crate::rootfs::{self, Place};
use crate::{abi_named, dist_abi, project_root, shell, target_dir};

const HELP: &str = "cargo xtask hip [flags]

Builds clients/hip with Debian's hipcc 7.2.4 (rootfs sid-hip, made with
mmdebstrap under target/rootfs when missing; needs root) and runs it on
kfd-sim with HIP 7.2.4 on ROCr 7.2.4: copies, events, a module load and a
kernel launch must complete with the data verified.

flags:
  --preset P      kfd-sim preset (default mi300x; its GPU is the code
                  object's target)
  --ours          ROCr reaches the simulator through our newest build as
                  libdtif.so (HSA_ENABLE_DTIF=1) instead of its embedded thunk
  --hardware      run on this machine's GPU (/dev/kfd) instead of the
                  simulator: no preload, the code object built for the first
                  GPU node's gfx target (GPU CI holds the simulator and the
                  hardware to the same expected results this way)
  --timeout SECS  per-run time limit (default 120)
  --kernels-only  skip the data and launch runs; only the kernels run
  --allow-fail    report failing kernels without failing the command
                  (for CI only until every kernel passes; default strict)";

/// The checks the data run must pass, in order.
const DATA_CHECKS: &[&str] = &[
    "malloc_and_host_malloc",
    "memcpy_async_1048576",
    "bytes_1048576",
    "memcpy_async_67108864",
    "bytes_67108864",
    "event_elapsed_time_positive",
    "event_query_done",
    "module_load",
    "module_get_function",
];

/// The checks the launch run must pass: the kernel ran on the
/// simulator's shader machine and wrote exactly what it should.
const LAUNCH_CHECKS: &[&str] = &["launch_runs", "launch_results"];

/// The line ROCr 7.2.4 prints once `libdtif.so`'s `DtifCreate` worked.
const DTIF_LOADED: &str = "DtifCreate OK!";

/// The sources, as files under `clients/hip`.
const SOURCES: &[&str] = &["fill.hip", "hip_work.cpp", "kernels.hip"];

/// The `--offload-arch` of each preset's first GPU.
fn offload_arch(preset: &str) -> Result<&'static str, String> {
    match preset {
        "mi300x" => Ok("gfx942"),
        "mi210" => Ok("gfx90a"),
        "navi31" => Ok("gfx1100"),
        "large64" => Ok("gfx90a"),
        "apu" => Ok("gfx902"),
        p => Err(format!(
            "unknown preset `{p}` (mi300x, mi210, navi31, large64, apu)"
        )),
    }
}

/// The `--offload-arch` of this machine's first GPU node, from the KFD
/// topology's `gfx_target_version`.
fn hardware_arch() -> Result<&'static str, String> {
    let nodes = "/sys/class/kfd/kfd/topology/nodes";
    let mut dirs: Vec<_> = std::fs::read_dir(nodes)
        .map_err(|e| format!("--hardware: {nodes}: {e} (no amdgpu KFD on this machine)"))?
        .flatten()
        .map(|e| e.path())
        .collect();
    dirs.sort();
    for d in dirs {
        let props = std::fs::read_to_string(d.join("properties")).unwrap_or_default();
        let version = props
            .lines()
            .find_map(|l| l.strip_prefix("gfx_target_version "))
            .and_then(|v| v.trim().parse::<u32>().ok())
            .unwrap_or(0);
        match version {
            0 => continue,
            90010 => return Ok("gfx90a"),
            90400..=90402 => return Ok("gfx942"),
            110000 => return Ok("gfx1100"),
            90002 => return Ok("gfx902"),
            v => {
                return Err(format!(
                    "--hardware: no HIP build set up for gfx target version {v}"
                ))
            }
        }
    }
    Err(format!("--hardware: no GPU node under {nodes}"))
}

/// The hipcc commands (inside the rootfs, the stage at `rootfs::INSIDE`).
fn build_script(arch: &str) -> String {
    let d = rootfs::INSIDE;
    format!(
        "set -e\n\
         hipcc --genco --offload-arch={arch} -O2 {d}/src/fill.hip -o {d}/out/fill.co\n\
         hipcc --offload-arch={arch} -O1 -Wall -Werror {d}/src/hip_work.cpp -o {d}/out/kfd-hip-work\n\
         hipcc --offload-arch=gfx90a --offload-arch=gfx942 --offload-arch=gfx1100 -O2 {d}/src/kernels.hip -o {d}/out/kfd-hip-kernels\n"
    )
}

/// Entry point: `args` are the words after `hip`.
pub fn run(args: &[String]) -> Result<(), String> {
    if !check_args(
        args,
        &["--preset", "--timeout"],
        &["--ours", "--hardware", "--kernels-only", "--allow-fail"],
        HELP,
    )? {
        return Ok(());
    }
    let hardware = args.iter().any(|a| a == "--hardware");
    let preset = value(args, "--preset")?.unwrap_or("mi300x");
    let arch = if hardware {
        hardware_arch()?
    } else {
        offload_arch(preset)?
    };
    let timeout = match value(args, "--timeout")? {
        Some(t) => Duration::from_secs(
            t.parse()
                .map_err(|_| format!("--timeout {t}: not a number of seconds"))?,
        ),
        None => Duration::from_secs(120),
    };
    let ours = args.iter().any(|a| a == "--ours");
    let kernels_only = args.iter().any(|a| a == "--kernels-only");
    let allow_fail = args.iter().any(|a| a == "--allow-fail");
    let t0 = Instant::now();
    let ready = rootfs::ensure(&rootfs::SID_HIP)?;
    println!(
        "hip: rootfs sid-hip {} in {:.1} s",
        if ready.built { "made" } else { "cached" },
        ready.elapsed.as_secs_f64()
    );
    let sh = shell()?;
    if !hardware {
        build::sim(&sh, false)?;
    }
    let stage = target_dir().join("hip").join("work");
    for sub in ["lib", "src", "out", "ours", "log"] {
        std::fs::create_dir_all(stage.join(sub))
            .map_err(|e| format!("{}: {e}", stage.display()))?;
    }
    let place = Place::Chroot {
        root: ready.root.clone(),
        stage: stage.clone(),
    };
    let mut env = vec![("PATH".to_string(), "/usr/bin:/bin".to_string())];
    if !hardware {
        copy(
            &target_dir().join("debug/libkfd_sim.so"),
            &stage.join("lib/libkfd_sim.so"),
        )?;
        env.push(("LD_PRELOAD".into(), place.seen("lib/libkfd_sim.so")));
        env.push(("KFD_SIM_TOPOLOGY".into(), preset.into()));
    }
    if ours {
        let dtif = ours_dtif()?;
        copy(&dtif, &stage.join("ours/libdtif.so"))?;
        env.push(("LD_LIBRARY_PATH".into(), place.seen("ours")));
        env.push(("HSA_ENABLE_DTIF".into(), "1".into()));
    }

    let tb = Instant::now();
    let built = compile(&place, &ready.root, arch)?;
    println!(
        "hip: {} for {arch} in {:.1} s",
        if built {
            "built with hipcc"
        } else {
            "build cached"
        },
        tb.elapsed().as_secs_f64()
    );
    let co = place.seen("out/fill.co");
    let exe = place.seen("out/kfd-hip-work");

    let mut problems = Vec::new();
    if !kernels_only {
        older_runs(&place, &env, timeout, &co, &exe, ours, &mut problems)?;
    }
    let kexe = place.seen("out/kfd-hip-kernels");
    let k = run_logged(&place, &env, timeout * 10, &[&kexe], "kernels")?;
    let passed: Vec<&str> = k
        .text
        .lines()
        .filter_map(|l| l.strip_prefix("OK "))
        .collect();
    let failed: Vec<&str> = k.text.lines().filter(|l| l.starts_with("FAIL ")).collect();
    println!(
        "hip: {preset}: kernels {} passed, {} failed, run {} in {:.1} s ({} s in all)",
        passed.len(),
        failed.len(),
        k.status,
        k.elapsed.as_secs_f64(),
        t0.elapsed().as_secs_f64() as u64
    );
    for f in &failed {
        println!("hip:   {f}");
    }
    if ours && kernels_only && !k.text.contains(DTIF_LOADED) {
        problems.push(format!(
            "--ours: no `{DTIF_LOADED}` line: libdtif.so was not used"
        ));
    }
    if !k.ok || !k.text.contains("ALL OK\n") {
        let what = format!("kernels run {}: {} failed", k.status, failed.len());
        if allow_fail {
            println!("hip: {what} (allowed by --allow-fail)");
        } else {
            problems.push(what);
        }
    }
    if problems.is_empty() {
        if !kernels_only {
            println!(
                "hip: {preset}: all {} data checks OK; the kernel ran and its results are right",
                DATA_CHECKS.len()
            );
        }
        Ok(())
    } else {
        Err(format!("hip on {preset}: {}", problems.join("; ")))
    }
}

/// The data and launch runs of `kfd-hip-work`.
fn older_runs(
    place: &Place,
    env: &[(String, String)],
    timeout: Duration,
    co: &str,
    exe: &str,
    ours: bool,
    problems: &mut Vec<String>,
) -> Result<(), String> {
    let t0 = Instant::now();
    let data = run_logged(place, env, timeout, &[exe, "data", co], "data")?;
    if !data.ok {
        problems.push(format!("data run {}", data.status));
    }
    for c in DATA_CHECKS {
        if !data.text.contains(&format!("OK {c}\n")) {
            problems.push(format!("data run: no `OK {c}`"));
        }
    }
    if !data.text.contains("ALL OK\n") {
        problems.push("data run: no `ALL OK`".into());
    }
    // ROCr's ThunkLoader says so when it took our library; without the
    // line the run proved nothing about ours.
    if ours && !data.text.contains(DTIF_LOADED) {
        problems.push(format!(
            "--ours: no `{DTIF_LOADED}` line: libdtif.so was not used"
        ));
    }
    let launch = run_logged(place, env, timeout, &[exe, "launch", co], "launch")?;
    if launch.status == "timed out" {
        problems.push("launch run hung (timed out)".into());
    }
    for c in LAUNCH_CHECKS {
        if !launch.text.contains(&format!("OK {c}\n")) {
            problems.push(format!("launch run: no `OK {c}`"));
        }
    }
    if !launch.ok || !launch.text.contains("ALL OK\n") {
        problems.push(format!("launch run {}", launch.status));
    }
    println!(
        "hip: data run {} in {:.1} s, launch run {} in {:.1} s; {:.1} s in all (logs in {})",
        data.status,
        data.elapsed.as_secs_f64(),
        launch.status,
        launch.elapsed.as_secs_f64(),
        t0.elapsed().as_secs_f64(),
        place.stage().join("log").display()
    );
    Ok(())
}

/// Our newest build's `libdtif.so`, or why there is none yet.
fn ours_dtif() -> Result<PathBuf, String> {
    let abi = abi_named("newest").ok_or("no `newest` generation in `cargo xtask dist`")?;
    let dtif = dist_abi(abi)?.with_file_name("libdtif.so");
    if dtif.exists() {
        Ok(dtif)
    } else {
        Err(format!(
            "--ours: libdtif.so not built by `cargo xtask dist` ({} missing)",
            dtif.display()
        ))
    }
}

fn copy(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::copy(from, to)
        .map(|_| ())
        .map_err(|e| format!("copy {} -> {}: {e}", from.display(), to.display()))
}

/// Builds the code object and the program unless the cached ones were
/// made from the same sources, commands and rootfs; whether it built.
fn compile(place: &Place, root: &Path, arch: &str) -> Result<bool, String> {
    let stage = place.stage();
    let script = build_script(arch);
    let mut key = script.clone();
    key.push_str(&std::fs::read_to_string(root.join("../stamp")).unwrap_or_default());
    let src_dir = project_root().join("clients/hip");
    for s in SOURCES {
        let text = std::fs::read_to_string(src_dir.join(s))
            .map_err(|e| format!("{}: {e}", src_dir.join(s).display()))?;
        key.push_str(&format!("--- {s}\n{text}"));
        std::fs::write(stage.join("src").join(s), text).map_err(|e| e.to_string())?;
    }
    let key_file = stage.join("out/key");
    let outputs = ["out/fill.co", "out/kfd-hip-work", "out/kfd-hip-kernels"];
    if std::fs::read_to_string(&key_file).ok().as_deref() == Some(key.as_str())
        && outputs.iter().all(|o| stage.join(o).exists())
    {
        return Ok(false);
    }
    let _ = std::fs::remove_file(&key_file);
    let env = [("PATH".to_string(), "/usr/bin:/bin".to_string())];
    let argv: Vec<String> = ["sh", "-c", &script]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let out = place
        .command(Duration::from_secs(600), &env, &argv)
        .output()
        .map_err(|e| format!("hipcc: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "hipcc failed ({}):\n{}{}",
            describe(out.status),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    std::fs::write(&key_file, key).map_err(|e| e.to_string())?;
    Ok(true)
}

/// One run's outcome.
#[derive(Debug)]
struct Ran {
    /// Exit 0.
    ok: bool,
    /// `exit N`, `signal N` or `timed out`.
    status: String,
    /// stdout, then stderr.
    text: String,
    elapsed: Duration,
}

fn run_logged(
    place: &Place,
    env: &[(String, String)],
    timeout: Duration,
    argv: &[&str],
    tag: &str,
) -> Result<Ran, String> {
    let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
    let t0 = Instant::now();
    let out = place
        .command(timeout, env, &argv)
        .output()
        .map_err(|e| format!("kfd-hip-work {tag}: {e}"))?;
    let elapsed = t0.elapsed();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let status = describe(out.status);
    let log = place.stage().join("log").join(format!("{tag}.txt"));
    std::fs::write(&log, format!("status: {status}\n{text}"))
        .map_err(|e| format!("{}: {e}", log.display()))?;
    Ok(Ran {
        ok: out.status.success(),
        status,
        text,
        elapsed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_and_script() {
        assert_eq!(offload_arch("mi300x"), Ok("gfx942"));
        assert!(offload_arch("/tmp/topo").is_err());
        let s = build_script("gfx942");
        assert!(s.contains("--genco --offload-arch=gfx942"));
        assert!(s.contains("/opt/kfd-rs/out/kfd-hip-work"));
        assert!(s.contains("--offload-arch=gfx90a --offload-arch=gfx942 --offload-arch=gfx1100"));
    }
}
