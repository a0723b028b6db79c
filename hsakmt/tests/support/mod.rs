//! Shared helpers of the integration tests: builds of the library per
//! ABI and of the simulator's preload library, in target directories of
//! their own next to the test's (so the test's own build is never
//! clobbered), incremental from one run to the next.
//!
//! The tests fail (never skip) when rocminfo, gcc, objdump or Debian's
//! libhsakmt are missing.

#![allow(dead_code)]

pub mod kmt;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use kfd_sys::sync::lock;

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// `<target>` of the running test binary (`<target>/<profile>/deps/x`).
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    exe.parent()
        .and_then(|d| d.parent())
        .and_then(|d| d.parent())
        .expect("target dir")
        .to_path_buf()
}

static BUILD: Mutex<()> = Mutex::new(());

fn cargo_build(dir: &Path, args: &[&str]) {
    let _g = lock(&BUILD);
    let out = Command::new(env!("CARGO"))
        .current_dir(workspace())
        .arg("build")
        .args(args)
        .arg("--target-dir")
        .arg(dir)
        .env_remove("RUSTFLAGS")
        .output()
        .expect("run cargo");
    assert!(
        out.status.success(),
        "cargo build {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Which build of the library.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Abi {
    /// `newest` (default features).
    Newest,
    /// `rocm-5.2`.
    Rocm52,
    /// `rocm-6.2`.
    Rocm62,
    /// `newest` built as `libdtif.so` (features `newest,dtif`).
    Dtif,
}

impl Abi {
    /// The generation's name (its Cargo feature).
    pub fn name(self) -> &'static str {
        match self {
            Abi::Newest => "newest",
            Abi::Rocm52 => "rocm-5.2",
            Abi::Rocm62 => "rocm-6.2",
            Abi::Dtif => "dtif",
        }
    }

    /// The hsakmt features that build it.
    pub fn features(self) -> &'static str {
        match self {
            Abi::Dtif => "newest,dtif",
            other => other.name(),
        }
    }
}

/// Builds the library for `abi` and returns a directory holding
/// `libhsakmt.so.1` (for `LD_LIBRARY_PATH`).
pub fn hsakmt_lib_dir(abi: Abi) -> PathBuf {
    let name = abi.name();
    let args = [
        "-p",
        "hsakmt",
        "--no-default-features",
        "--features",
        abi.features(),
    ];
    // Built and installed once per test process and ABI: tests of one
    // binary run on parallel threads, and a second copy over the file
    // while another test links or loads it would hand them a short file.
    static DIRS: Mutex<Vec<(Abi, PathBuf)>> = Mutex::new(Vec::new());
    let mut dirs = lock(&DIRS);
    if let Some((_, lib)) = dirs.iter().find(|(a, _)| *a == abi) {
        return lib.clone();
    }
    // One target directory for every generation: the builds differ only
    // in hsakmt's feature, so each rebuilds hsakmt alone; the library is
    // copied out before the next build (the lock above serialises them).
    let dir = target_dir().join("hsakmt-it").join("libs");
    cargo_build(&dir, &args);
    let so = dir.join("debug").join("libhsakmt.so");
    let lib = target_dir().join("hsakmt-it").join(name).join("lib");
    std::fs::create_dir_all(&lib).unwrap();
    // Copy next to the destination, then rename: a process that already
    // has the old file open or mapped keeps a complete file.
    let tmp = lib.join(format!(".libhsakmt.so.1.{}", std::process::id()));
    std::fs::copy(&so, &tmp).expect("copy libhsakmt.so");
    std::fs::rename(&tmp, lib.join("libhsakmt.so.1")).expect("install libhsakmt.so.1");
    dirs.push((abi, lib.clone()));
    lib
}

/// The path of the built `libhsakmt.so` for `abi`.
pub fn hsakmt_so(abi: Abi) -> PathBuf {
    hsakmt_lib_dir(abi).join("libhsakmt.so.1")
}

/// Builds kfd-sim and returns its LD_PRELOAD library.
pub fn preload_lib() -> PathBuf {
    let dir = target_dir().join("hsakmt-it").join("sim");
    cargo_build(&dir, &["-p", "kfd-sim"]);
    let so = dir.join("debug").join("libkfd_sim.so");
    assert!(so.exists(), "{} missing", so.display());
    so
}

/// A fresh scratch directory under the target dir.
pub fn scratch(name: &str) -> PathBuf {
    let d = target_dir()
        .join("hsakmt-it")
        .join("scratch")
        .join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The exported dynamic symbols with their version, as `objdump -T`
/// prints them (`name version` for defined symbols).
pub fn exports(so: &Path) -> Vec<(String, String)> {
    let out = Command::new("objdump")
        .arg("-T")
        .arg(so)
        .output()
        .unwrap_or_else(|e| panic!("cannot run objdump (apt-get install binutils): {e}"));
    assert!(out.status.success(), "objdump -T {} failed", so.display());
    let text = String::from_utf8_lossy(&out.stdout);
    let mut v = Vec::new();
    for l in text.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() < 6 || !l.contains(" g ") || l.contains("*UND*") {
            continue;
        }
        let name = f[f.len() - 1].to_string();
        let ver = f[f.len() - 2].to_string();
        v.push((name, ver));
    }
    v.sort();
    v
}

/// Runs `child` in a forked child process and returns whether it
/// succeeded; a failure's message goes to stderr. The child leaves with
/// `_exit`, so none of the parent's test harness runs there. Call it from
/// a test binary with one test only: the child of a multi-threaded
/// process must not contend for locks other threads may hold.
pub fn in_forked_child(
    child: impl FnOnce() -> Result<(), String> + std::panic::UnwindSafe,
) -> bool {
    // SAFETY: fork has no preconditions; the child only runs `child` and
    // leaves with `_exit`.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let code = match std::panic::catch_unwind(child) {
            Ok(Ok(())) => 0,
            Ok(Err(msg)) => {
                eprintln!("child: {msg}");
                1
            }
            Err(_) => 2,
        };
        // The sysfs trees of the child's simulators (they are not dropped:
        // `_exit` follows).
        let base =
            std::env::var_os("KFD_SIM_TMPDIR").map_or_else(std::env::temp_dir, PathBuf::from);
        let mine = format!("kfd-sim-{}-", std::process::id());
        for e in std::fs::read_dir(base).into_iter().flatten().flatten() {
            if e.file_name().to_string_lossy().starts_with(&mine) {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
        // SAFETY: ends the child without running the parent's test
        // harness teardown.
        unsafe { libc::_exit(code) };
    }
    let mut status = 0;
    // SAFETY: `pid` is our child; `status` is a valid out-pointer.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
}
