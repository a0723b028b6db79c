//! Link settings for the drop-in libhsakmt.so.1 (cdylib only).
//!
//! - SONAME `libhsakmt.so.1`, like the C library.
//! - A version script with the single node `HSAKMT_1` (ROCr 5.2.3 requires
//!   every import at that version). rustc's own export list would leave the
//!   exports at `Base`; each exported function therefore also carries a
//!   `.symver NAME, NAME@@HSAKMT_1` directive (see `src/export.rs`).
//! - `-z nodelete`, as the C library is linked.
//! - The absolute symbol `HSAKMT_1` that GNU ld defines for a version
//!   node (Debian's library exports it) is defined by `src/export.rs`
//!   and listed here, since rustc links with lld, which does not add it.

use std::path::PathBuf;

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    let script = out.join("hsakmt.ver");
    std::fs::write(
        &script,
        "HSAKMT_1 {\n  global: hsaKmt*; HSAKMT_1;\n  local: *;\n};\n",
    )
    .expect("write version script");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libhsakmt.so.1");
    println!(
        "cargo:rustc-cdylib-link-arg=-Wl,--version-script={}",
        script.display()
    );
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,nodelete");
    println!("cargo:rerun-if-changed=build.rs");
    // Cargo keeps the dot of a feature name in its variable name.
    let on: Vec<&str> = ["rocm-5.2", "rocm-6.2", "newest"]
        .into_iter()
        .filter(|g| {
            let var = format!("CARGO_FEATURE_{}", g.to_uppercase().replace('-', "_"));
            std::env::var_os(var).is_some()
        })
        .collect();
    match on.as_slice() {
        [g] => println!("cargo:rustc-env=HSAKMT_GENERATION={g}"),
        _ => panic!(
            "hsakmt: enable exactly one of the features `rocm-5.2`, `rocm-6.2` and `newest` \
             (e.g. --no-default-features --features rocm-6.2); enabled: {on:?}"
        ),
    }
}
