//! Shared helpers of the LD_PRELOAD tests.

use std::path::PathBuf;

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
