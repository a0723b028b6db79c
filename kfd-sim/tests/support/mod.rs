//! Shared helpers of the LD_PRELOAD tests.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, OnceLock};

use kfd_sys::sync::lock;

/// `libkfd_sim.so` of this build. `cargo build` places it in
/// `<target>/<profile>/`; `cargo test` builds the library only as a
/// dependency of the tests, which leaves it in `<target>/<profile>/deps/`.
pub fn preload_lib() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    let deps = exe.parent().expect("<target>/<profile>/deps");
    let profile_dir = deps.parent().expect("<target>/<profile>");
    let candidates = [
        profile_dir.join("libkfd_sim.so"),
        deps.join("libkfd_sim.so"),
    ];
    // Both may exist (a `cargo build` uplifts, a later `cargo test` only
    // refreshes `deps/`): the newer one is this build's.
    candidates
        .iter()
        .filter_map(|p| {
            let modified = std::fs::metadata(p).and_then(|m| m.modified()).ok()?;
            Some((modified, p))
        })
        .max()
        .map(|(_, p)| p.clone())
        .unwrap_or_else(|| {
            panic!(
                "libkfd_sim.so is missing (looked at {:?}); cargo builds it with the library",
                candidates
            )
        })
}

/// `tests/c/<name>.c` compiled with `cc` and linked with `-lhsakmt`, built
/// once per test process and program: the tests run on parallel threads,
/// and compiling over a binary another test is running fails with ETXTBSY.
/// Panics (never skips) when cc or libhsakmt-dev is missing.
#[allow(dead_code)] // not every test binary that includes this module compiles C
pub fn compile_c(name: &str) -> PathBuf {
    compile_c_with(name, "-lhsakmt", "libhsakmt-dev")
}

/// As [`compile_c`], linked with `lib` (from Debian package `package`,
/// named in the panic when the build fails).
#[allow(dead_code)] // not every test binary that includes this module compiles C
pub fn compile_c_with(name: &str, lib: &'static str, package: &'static str) -> PathBuf {
    static BINS: Mutex<BTreeMap<String, &'static OnceLock<PathBuf>>> = Mutex::new(BTreeMap::new());
    let cell: &'static OnceLock<PathBuf> = lock(&BINS)
        .entry(name.to_owned())
        .or_insert_with(|| Box::leak(Box::new(OnceLock::new())));
    cell.get_or_init(|| build_c(name, lib, package)).clone()
}

fn build_c(name: &str, lib: &str, package: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/c/{name}.c"));
    let exe = std::env::current_exe().unwrap();
    let dir = exe
        .parent()
        .unwrap()
        .join(format!("{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bin = dir.join(name);
    let out = Command::new("cc")
        .args(["-std=gnu11", "-O1", "-Wall", "-Werror", "-o"])
        .arg(&bin)
        .arg(&src)
        .args([lib, "-lpthread"])
        .output()
        .unwrap_or_else(|e| panic!("cannot run cc (apt-get install gcc): {e}"));
    assert!(
        out.status.success(),
        "compiling {name}.c failed (apt-get install {package}):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    bin
}

/// Runs `cmd` (`what` names it in the panic) and returns its output with
/// stdout as text.
#[allow(dead_code)] // not every test binary that includes this module runs C
pub fn output_text(cmd: &mut Command, what: &str) -> (Output, String) {
    let out = cmd.output().expect(what);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    (out, text)
}

/// Asserts that a C test program exited successfully and printed `ALL OK`.
#[allow(dead_code)] // not every test binary that includes this module runs C
pub fn assert_all_ok(what: &str, out: &Output, text: &str) {
    assert!(
        out.status.success() && text.contains("ALL OK"),
        "{what}: {:?}\nstdout:\n{text}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}
