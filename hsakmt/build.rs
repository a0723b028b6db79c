//! Link settings for the drop-in libhsakmt.so.1 (cdylib only).
//!
//! - SONAME `libhsakmt.so.1`, like the C library (`libdtif.so` with the
//!   feature `dtif`, whose version script also exports the DTIF names).
//! - A version script with the single node `HSAKMT_1` (ROCr 5.2.3 requires
//!   every import at that version). rustc's own export list would leave the
//!   exports at `Base`; each exported function therefore also carries a
//!   `.symver NAME, NAME@@HSAKMT_1` directive (see `src/export.rs`).
//! - `-z nodelete`, as the C library is linked.
//! - The absolute symbol `HSAKMT_1` that GNU ld defines for a version
//!   node (Debian's library exports it) is defined by `src/export.rs`
//!   and listed here, since rustc links with lld, which does not add it.

use std::path::PathBuf;

/// What the `dtif` build exports besides hsaKmt*: ROCr 7.2.4's
/// ThunkLoader resolves these from `libdtif.so` (defined in src/dtif.rs;
/// tests/symbols.rs checks the library against ROCr's list).
const DTIF_EXTRA: &str = "DtifCreate; DtifDestroy; amdgpu_bo_cpu_map; amdgpu_bo_export; \
     amdgpu_bo_free; amdgpu_bo_import; amdgpu_bo_query_info; amdgpu_bo_set_metadata; \
     amdgpu_bo_va_op; amdgpu_device_deinitialize; amdgpu_device_initialize; \
     amdgpu_query_gpu_info; drmCommandWriteRead;";

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    let script = out.join("hsakmt.ver");
    let dtif = std::env::var_os("CARGO_FEATURE_DTIF").is_some();
    let extra = if dtif { DTIF_EXTRA } else { "" };
    std::fs::write(
        &script,
        format!("HSAKMT_1 {{\n  global: hsaKmt*; HSAKMT_1; {extra}\n  local: *;\n}};\n"),
    )
    .expect("write version script");
    let soname = if dtif { "libdtif.so" } else { "libhsakmt.so.1" };
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,{soname}");
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
