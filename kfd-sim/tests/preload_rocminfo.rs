//! Unmodified rocminfo (Debian's, with ROCr and libhsakmt 5.2.3) on the
//! LD_PRELOAD simulator. These tests fail, never skip, when rocminfo is
//! missing: `.ci/run` installs it.

mod support;
use support::preload_lib;

use std::process::{Command, Output};

fn rocminfo(topology: &str, extra_env: &[(&str, &str)]) -> (Output, String) {
    let mut cmd = Command::new("rocminfo");
    cmd.env("LD_PRELOAD", preload_lib())
        .env("KFD_SIM_TOPOLOGY", topology);
    for var in [
        "HSA_OVERRIDE_GFX_VERSION",
        "KFD_SIM_FAULTS",
        "KFD_SIM_TRACE",
        "ROCR_VISIBLE_DEVICES",
    ] {
        cmd.env_remove(var);
    }
    for (k, v) in extra_env {
        cmd.env(k, v);
    }
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run rocminfo (apt-get install rocminfo): {e}"));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    (out, text)
}

fn agent_names(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.starts_with("  Name:"))
        .map(|l| l.trim_start_matches("  Name:").trim().to_string())
        .collect()
}

fn assert_ok(out: &Output, text: &str) {
    assert!(
        out.status.success(),
        "rocminfo failed: {:?}\nstdout:\n{text}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn rocminfo_mi210() {
    let (out, text) = rocminfo("mi210", &[]);
    assert_ok(&out, &text);
    assert_eq!(
        agent_names(&text),
        ["AMD EPYC 7313 16-Core Processor", "gfx90a"]
    );
    assert!(text.contains("Marketing Name:          AMD Instinct MI210"));
    assert!(text.contains("Compute Unit:            104"));
    assert!(text.contains("Wavefront Size:          64(0x40)"));
    assert!(text.contains("amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-"));
    // Everything rocminfo prints comes from the preset (CPU names from the
    // simulated /proc/cpuinfo, CPU caches from KFD sysfs), so the whole
    // output is stable across hosts.
    insta::assert_snapshot!("rocminfo_mi210", text);
}

#[test]
fn rocminfo_apu() {
    let (out, text) = rocminfo("apu", &[]);
    assert_ok(&out, &text);
    assert_eq!(
        agent_names(&text),
        ["AMD Ryzen 5 2400G with Radeon Vega Graphics", "gfx902"]
    );
    assert!(text.contains("Marketing Name:          AMD Radeon Vega 11 Graphics"));
    assert!(text.contains("Compute Unit:            11"));
}

/// Debian's ROCr 5.2.3 has no gfx942 (nor gfx11) in its ISA table, so it
/// creates no agent for those nodes ("unrecognized id") although the thunk
/// reports all eight. With the version overridden to one it knows, all eight
/// GPUs of the hive appear, which shows the rest of the topology (xGMI
/// links, NUMA placement, render nodes, DRM) is accepted.
#[test]
fn rocminfo_mi300x() {
    let (out, text) = rocminfo("mi300x", &[]);
    assert_ok(&out, &text);
    let names = agent_names(&text);
    assert_eq!(
        names,
        [
            "AMD EPYC 9654 96-Core Processor",
            "AMD EPYC 9654 96-Core Processor"
        ]
    );

    let (out, text) = rocminfo("mi300x", &[("HSA_OVERRIDE_GFX_VERSION", "9.0.10")]);
    assert_ok(&out, &text);
    let names = agent_names(&text);
    assert_eq!(
        names.iter().filter(|n| *n == "gfx90a").count(),
        8,
        "{names:?}"
    );
    assert_eq!(text.matches("Compute Unit:            304").count(), 8);
    let mut summary = String::new();
    for l in text.lines().filter(|l| {
        [
            "  Name:",
            "  Node:",
            "  Compute Unit:",
            "  BDFID:",
            "  Uuid:",
            "  Cache Info",
            "    L",
        ]
        .iter()
        .any(|p| l.starts_with(p))
    }) {
        summary.push_str(l.trim_end());
        summary.push('\n');
    }
    insta::assert_snapshot!("rocminfo_mi300x_override", summary);
}

#[test]
fn rocminfo_navi31_and_large64_run() {
    let (out, text) = rocminfo("navi31", &[]);
    assert_ok(&out, &text);
    let (out, text) = rocminfo("navi31", &[("HSA_OVERRIDE_GFX_VERSION", "10.3.0")]);
    assert_ok(&out, &text);
    assert!(text.contains("Wavefront Size:          32(0x20)"), "{text}");

    let (out, text) = rocminfo("large64", &[]);
    assert_ok(&out, &text);
    assert_eq!(
        agent_names(&text).iter().filter(|n| *n == "gfx90a").count(),
        64
    );
}

#[test]
fn rocminfo_fails_cleanly_on_a_bad_topology() {
    let (out, text) = rocminfo("/nonexistent/topology.txt", &[]);
    assert!(!out.status.success(), "{text}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("kfd-sim: KFD_SIM_TOPOLOGY"), "{err}");
}

/// The cdylib exports every interposed libc name (unversioned), and the
/// rlib-only `kfd_sim_*` names stay out of libc's namespace.
#[test]
fn preload_library_exports_the_libc_names() {
    let out = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(preload_lib())
        .output()
        .expect("run nm (binutils comes with gcc)");
    assert!(out.status.success());
    let syms = String::from_utf8_lossy(&out.stdout);
    let list = include_str!("../src/preload/interpose.list");
    for name in list
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        assert!(
            syms.lines().any(|l| l.ends_with(&format!(" {name}"))),
            "{name} is not exported by libkfd_sim.so"
        );
    }
}

/// rocminfo 6.x and 7.x read `/sys/module/amdgpu/initstate` before
/// anything else ("ROCk module is NOT loaded" without it) and print
/// `version` when it exists. Under the preload both come from the
/// simulated module, created on that first look.
#[test]
fn amdgpu_module_is_live_under_the_preload() {
    let script = "cat /sys/module/amdgpu/initstate /sys/module/amdgpu/parameters/cwsr_enable; \
                  test -d /sys/module/amdgpu/parameters && echo dir; \
                  test -e /sys/module/amdgpu/version || echo no-version";
    let out = Command::new("sh")
        .args(["-c", script])
        .env("LD_PRELOAD", preload_lib())
        .env("KFD_SIM_TOPOLOGY", "mi210")
        .output()
        .expect("sh");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text, "live\n1\ndir\nno-version\n", "{:?}", out);
}

/// Under the preload, `readdir` of the simulated sysfs lists entries the
/// way kernfs does (`.`, `..`, then by name hash), whatever file system
/// the render root is on: `ls -f` (no sorting) of the simulated CPU tree
/// matches what a real kernel prints. (`ls` touches `/sys/class/kfd`
/// first, which creates the simulator; the CPU trees are served only once
/// it exists.)
#[test]
fn readdir_lists_simulated_sysfs_in_kernfs_order() {
    let out = Command::new("ls")
        .args([
            "-f",
            "/sys/class/kfd/kfd",
            "/sys/devices/system/node/node0",
            "/sys/devices/system/cpu/cpu0/cache/index0",
        ])
        .env("LD_PRELOAD", preload_lib())
        .env("KFD_SIM_TOPOLOGY", "mi210")
        .output()
        .expect("ls");
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let section = |name: &str| -> Vec<String> {
        let start = text
            .find(&format!("{name}:\n"))
            .unwrap_or_else(|| panic!("{text}"));
        text[start..]
            .lines()
            .skip(1)
            .take_while(|l| !l.is_empty())
            .map(str::to_string)
            .collect()
    };
    assert_eq!(
        section("/sys/devices/system/node/node0"),
        [".", "..", "uevent", "distance", "cpu1", "meminfo", "cpulist", "cpu0", "cpumap"],
        "{text}"
    );
    // The cache attributes: neither creation order nor its reverse, nor
    // name order, but the rendered names in kernfs hash order.
    let root = std::env::temp_dir().join(format!("kfd-sim-order-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    kfd_sim::sysfs::render(&kfd_sim::presets::preset("mi210").unwrap(), &root).unwrap();
    let mut names: Vec<String> =
        std::fs::read_dir(root.join("sys/devices/system/cpu/cpu0/cache/index0"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
    std::fs::remove_dir_all(&root).unwrap();
    kfd_sim::sysfs::kernfs_order(&mut names);
    let mut sorted = names.clone();
    sorted.sort();
    assert_ne!(names, sorted);
    names.splice(0..0, [".".to_string(), "..".to_string()]);
    assert_eq!(
        section("/sys/devices/system/cpu/cpu0/cache/index0"),
        names,
        "{text}"
    );
}
