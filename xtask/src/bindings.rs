//! `cargo xtask gen-bindings`: the prototypes of every released `hsakmt.h`,
//! generated with bindgen, so that each build of the drop-in proves at
//! compile time that its exports take exactly what the header declares.
//!
//! For each generation with an installable header (Debian 12's
//! libhsakmt-dev 5.2.3 on the build machine, Debian 13's 6.2.4 in the
//! trixie rootfs), Debian's `bindgen` CLI turns every `hsaKmt*`
//! declaration into an `extern "C"` item (types are left as the header's
//! names: `hsakmt/src/prototypes/mod.rs` maps them onto `hsakmt-sys`),
//! and a `same_signature!` list names every function the build exports.
//! The output goes to `hsakmt/src/prototypes/<generation>.rs`, which is
//! committed: `cargo xtask gen-bindings --check` (run by `cargo xtask
//! ci`) fails when regenerating changes it. Struct layouts stay checked
//! by hsakmt-sys's layout tests; the newest generation has no released
//! header and stays hand-written.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{project_root, target_dir};

/// The bindgen release whose output is committed (Debian 12's `bindgen`
/// package): another release formats differently, so `--check` insists.
const BINDGEN_VERSION: &str = "bindgen 0.60.1";

/// One generation with a released header.
struct Header {
    /// File stem under `hsakmt/src/prototypes`, and the cfg feature.
    name: &'static str,
    /// Where the header comes from, for the generated file's first line.
    source: &'static str,
    /// The header's path.
    path: fn() -> PathBuf,
}

const HEADERS: &[Header] = &[
    Header {
        name: "rocm_5_2",
        source: "Debian 12's libhsakmt-dev 5.2.3, /usr/include/hsakmt.h",
        path: || PathBuf::from("/usr/include/hsakmt.h"),
    },
    Header {
        name: "rocm_6_2",
        source: "Debian 13's libhsakmt-dev 6.2.4, /usr/include/hsakmt/hsakmt.h",
        path: || target_dir().join("rootfs/trixie/root/usr/include/hsakmt/hsakmt.h"),
    },
];

/// Left out: declared by both headers but exported by neither C library
/// nor ours:
/// `hsaKmtReportQueue` has a prototype and no definition in 5.2.3 and
/// 6.2.4.
const NOT_EXPORTED: &[&str] = &["hsaKmtReportQueue"];

/// `cargo xtask gen-bindings [--check]`.
pub fn run(args: &[String]) -> Result<(), String> {
    let check = args.iter().any(|a| a == "--check");
    let version = Command::new("bindgen")
        .arg("--version")
        .output()
        .map_err(|e| format!("bindgen: {e} (Debian package `bindgen`)"))?;
    let version = String::from_utf8_lossy(&version.stdout).trim().to_string();
    if version != BINDGEN_VERSION {
        return Err(format!(
            "gen-bindings: the committed prototypes come from {BINDGEN_VERSION}, this is `{version}`"
        ));
    }
    for h in HEADERS {
        let header = (h.path)();
        if !header.exists() {
            return Err(format!(
                "{} is missing (the rocm-6.2 header: `cargo xtask rootfs trixie`)",
                header.display()
            ));
        }
        let text = render(h, &header)?;
        let out = project_root().join(format!("hsakmt/src/prototypes/{}.rs", h.name));
        crate::write_generated(&out, &text, check, "gen-bindings")?;
    }
    Ok(())
}

/// The generated file for one header.
fn render(h: &Header, header: &Path) -> Result<String, String> {
    // 6.2.4's `hsaKmtDebugTrapIoctl` takes a `struct
    // kfd_ioctl_dbg_trap_args *` that the header first names inside the
    // prototype (a type scoped to it in C, which bindgen makes `[u8; 0]`);
    // declared first at file scope, as the uapi header the C library is
    // built with declares it, bindgen keeps its name.
    let predeclared = target_dir().join("gen-bindings/predeclared.h");
    std::fs::create_dir_all(predeclared.parent().unwrap_or(Path::new(".")))
        .map_err(|e| e.to_string())?;
    std::fs::write(&predeclared, "struct kfd_ioctl_dbg_trap_args;\n")
        .map_err(|e| format!("{}: {e}", predeclared.display()))?;
    let out = Command::new("bindgen")
        .arg(header)
        .args(["--allowlist-function", "hsaKmt.*"])
        .args(["--blocklist-type", ".*"])
        .args(
            NOT_EXPORTED
                .iter()
                .flat_map(|f| ["--blocklist-function", f]),
        )
        .args(["--no-layout-tests", "--no-doc-comments"])
        .arg("--")
        .arg("-include")
        .arg(&predeclared)
        .output()
        .map_err(|e| format!("bindgen: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "bindgen {}: {}",
            header.display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let decls = String::from_utf8(out.stdout).map_err(|e| e.to_string())?;
    let decls: String = decls
        .lines()
        .filter(|l| !l.starts_with("/* automatically generated"))
        .map(|l| format!("{l}\n"))
        .collect();
    let mut names: Vec<&str> = decls
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub fn "))
        .filter_map(|l| l.split('(').next())
        .collect();
    names.sort_unstable();
    let mut s = format!(
        "// Generated by `cargo xtask gen-bindings` with {BINDGEN_VERSION} from\n\
         // {}. Do not edit.\n\n\
         use super::names::*;\n{decls}\n\
         same_signature! {{\n",
        h.source
    );
    for n in names {
        s.push_str(&format!("    {n},\n"));
    }
    s.push_str("}\n");
    Ok(s)
}
