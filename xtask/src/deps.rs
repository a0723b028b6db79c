//! System packages the tests and the conformance run need, installed on
//! demand: with `apt-get` when running as root on Debian/Ubuntu, otherwise
//! the exact command is printed and the task fails.

use std::process::Command;

/// Debian packages the workspace tests need:
/// gcc/libc6-dev (C layout probes and C test programs), linux-libc-dev
/// (kfd_ioctl.h), libhsakmt-dev/libhsakmt1 (hsakmttypes.h, and the C
/// reference library), libdrm-dev/libdrm-amdgpu1 (amdgpu_drm.h; libdrm at
/// run time), rocminfo (the unmodified ROCm binary the simulator runs),
/// libhsa-runtime-dev (hsa.h, which the ROCr client's declarations are
/// checked against) and libhsa-runtime64-1 (ROCr's library for kfd-sim's
/// ROCr end-to-end test), pkg-config, llvm-19 (`llvm-mc` assembles the
/// shader machine's test kernels; the oldest Debian LLVM that knows
/// gfx942), clang-19 and lld-19 (kfd-codeobj's fixture check rebuilds its
/// committed code objects from their OpenCL sources).
pub const TEST_PACKAGES: &[&str] = &[
    "gcc",
    "libc6-dev",
    "pkg-config",
    "linux-libc-dev",
    "libhsakmt-dev",
    "libhsakmt1",
    "libdrm-dev",
    "libdrm-amdgpu1",
    "rocminfo",
    "libhsa-runtime-dev",
    "libhsa-runtime64-1",
    "llvm-19",
    "clang-19",
    "lld-19",
    "bindgen",
];

/// What making a Debian rootfs of another suite needs (`cargo xtask
/// clients` with a rootfs suite): mmdebstrap (unshare, mount, chroot,
/// timeout and diff come with the base system).
pub const ROOTFS_PACKAGES: &[&str] = &["mmdebstrap"];

/// Header files that must exist once the packages are installed.
pub const TEST_FILES: &[&str] = &[
    "/usr/include/linux/kfd_ioctl.h",
    "/usr/include/hsakmttypes.h",
    "/usr/include/hsakmt.h",
    "/usr/include/libdrm/amdgpu_drm.h",
    "/usr/include/hsa/hsa.h",
    "/usr/lib/x86_64-linux-gnu/libhsakmt.so.1",
    "/usr/lib/llvm-19/bin/llvm-mc",
    "/usr/lib/llvm-19/bin/clang",
    "/usr/lib/llvm-19/bin/ld.lld",
    "/usr/bin/bindgen",
];

fn installed(pkg: &str) -> bool {
    Command::new("dpkg-query")
        .args(["-W", "-f=${Status}", pkg])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).contains("install ok installed"))
        .unwrap_or(false)
}

/// Whether `tool` is a command on `PATH`.
pub fn on_path(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// Whether this process runs as root.
pub fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// Makes sure `packages` (and node/npm for the workflow lint when
/// `need_node`) are installed; installs them when root, else fails with the
/// exact command to run.
pub fn ensure(packages: &[&str], need_node: bool) -> Result<(), String> {
    if !on_path("dpkg-query") {
        return Err(format!(
            "not a Debian/Ubuntu system: install the equivalents of {} yourself",
            packages.join(" ")
        ));
    }
    let mut missing: Vec<&str> = packages.iter().copied().filter(|p| !installed(p)).collect();
    if need_node && !(on_path("node") && on_path("npm")) {
        missing.extend(["nodejs", "npm"]);
    }
    if missing.is_empty() {
        return Ok(());
    }
    let list = missing.join(" ");
    if !is_root() {
        return Err(format!(
            "missing system packages: {list}\n  run: sudo apt-get update && sudo apt-get install -y {list}"
        ));
    }
    eprintln!("xtask: installing {list}");
    let ok = Command::new("apt-get")
        .arg("update")
        .env("DEBIAN_FRONTEND", "noninteractive")
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
        && Command::new("apt-get")
            .args(["install", "-y", "--no-install-recommends"])
            .args(&missing)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
    if !ok {
        return Err(format!("apt-get install {list} failed"));
    }
    let still: Vec<&str> = missing
        .iter()
        .copied()
        .filter(|p| *p != "nodejs" && *p != "npm" && !installed(p))
        .collect();
    if !still.is_empty() {
        return Err(format!("still missing after apt-get: {}", still.join(" ")));
    }
    Ok(())
}

/// Fails unless every file in `files` exists.
pub fn check_files(files: &[&str]) -> Result<(), String> {
    let missing: Vec<&str> = files
        .iter()
        .copied()
        .filter(|f| !std::path::Path::new(f).exists())
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!("missing files: {}", missing.join(", ")))
    }
}
