//! Helpers shared by the conformance crate's integration tests.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Debian's C libhsakmt 5.2.3.
pub const REFERENCE: &str = "/usr/lib/x86_64-linux-gnu/libhsakmt.so.1";

/// A `libkfd_sim.so` built for this test in its own target directory
/// below the test's, so the nested cargo never rewrites artifacts (such as
/// the unhashed `libkfd_sim.rlib`) that the outer `cargo test` links.
pub fn sim_library(bin: &Path) -> PathBuf {
    let target = bin
        .parent()
        .and_then(|d| d.parent())
        .expect("<target>/<profile>/<bin>")
        .join("nested-kfd-sim");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let st = Command::new(cargo)
        .args(["build", "-p", "kfd-sim", "--target-dir"])
        .arg(&target)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .expect("cargo build -p kfd-sim");
    assert!(st.success());
    let so = target.join("debug").join("libkfd_sim.so");
    assert!(so.exists(), "{} missing", so.display());
    so
}
