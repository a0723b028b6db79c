//! The harness catches a real break.
//!
//! The test compiles (with `cc`) a shim library that exports every 5.2.3
//! `hsaKmt*` symbol as a tail-jump into Debian's libhsakmt, and uses it as
//! "ours":
//!
//! - the faithful shim must come out with zero unexpected differences
//!   (no false positives: same statuses, structs, side effects and
//!   normalised ioctl traces as the reference);
//! - the broken shim changes one status code — `hsaKmtGetNodeProperties`
//!   answers INVALID_PARAMETER (3) where the library says
//!   INVALID_NODE_UNIT (5) — and the run must fail and name exactly the
//!   scenarios where the library answers 5 (`topology/bad-input`: unknown
//!   node ids; `topology/release`: a node query after the release);
//! - the crashing shim dereferences the NULL event that SetEvent answers
//!   INVALID_HANDLE (4) for, and the fuzz family must fail the run and
//!   name `fuzz/hsaKmtSetEvent` with the call's arguments.
//!
//! Skipped (with a message) when Debian's library or `cc` is missing.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use conformance::api::ROCM_5_2_EXPORTS;

mod support;
use support::{sim_library, REFERENCE};

/// How a shim departs from the library it forwards to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shim {
    /// Forwards everything.
    Faithful,
    /// GetNodeProperties answers 3 where the library says 5.
    Flipped,
    /// SetEvent(NULL) dereferences the NULL pointer (the library
    /// returns INVALID_HANDLE, 4).
    Crashing,
}

/// C source of the shim.
fn shim_source(shim: Shim) -> String {
    let n = ROCM_5_2_EXPORTS.len();
    let mut c = String::new();
    c.push_str("#define _GNU_SOURCE\n#include <dlfcn.h>\n#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n");
    let _ = writeln!(
        c,
        "__attribute__((visibility(\"hidden\"))) void *shim_real[{n}];"
    );
    c.push_str("static const char *shim_names[] = {\n");
    for f in ROCM_5_2_EXPORTS {
        let _ = writeln!(c, "  \"{f}\",");
    }
    c.push_str("};\n");
    let _ = writeln!(
        c,
        "__attribute__((constructor)) static void shim_init(void) {{\n  \
         void *h = dlopen(\"{REFERENCE}\", RTLD_NOW | RTLD_LOCAL);\n  \
         if (!h) {{ fprintf(stderr, \"shim: %s\\n\", dlerror()); abort(); }}\n  \
         for (int i = 0; i < {n}; i++) shim_real[i] = dlsym(h, shim_names[i]);\n}}"
    );
    for (i, f) in ROCM_5_2_EXPORTS.iter().enumerate() {
        if shim == Shim::Crashing && *f == "hsaKmtSetEvent" {
            let _ = writeln!(
                c,
                "typedef int (*set_fn)(void *);\n\
                 int {f}(void *event) {{\n  \
                 if (!event) return *(volatile int *)event;\n  \
                 return ((set_fn)shim_real[{i}])(event);\n}}"
            );
            continue;
        }
        if shim == Shim::Flipped && *f == "hsaKmtGetNodeProperties" {
            let _ = writeln!(
                c,
                "typedef int (*gnp_fn)(uint32_t, void *);\n\
                 int {f}(uint32_t node, void *props) {{\n  \
                 int s = ((gnp_fn)shim_real[{i}])(node, props);\n  \
                 return s == 5 ? 3 : s;\n}}"
            );
            continue;
        }
        // A tail jump keeps every argument register and the stack intact.
        let _ = writeln!(
            c,
            "__asm__(\".globl {f}\\n.type {f},@function\\n{f}:\\n  jmp *shim_real+{off}(%rip)\\n\");",
            off = i * 8
        );
    }
    c
}

fn build_shim(dir: &Path, shim: Shim) -> PathBuf {
    let name = format!("{shim:?}").to_lowercase();
    let src = dir.join(format!("{name}.c"));
    let so = dir.join(format!("lib{name}.so"));
    std::fs::write(&src, shim_source(shim)).unwrap();
    let st = Command::new("cc")
        .args(["-shared", "-fPIC", "-O1", "-o"])
        .arg(&so)
        .arg(&src)
        .arg("-ldl")
        .status()
        .expect("run cc");
    assert!(st.success(), "cc failed for {}", src.display());
    so
}

/// The families [`run`] runs for the flipped-status test.
const FAMILIES: &[&str] = &["openclose", "topology", "events", "memory", "queues"];

fn run(bin: &Path, sim: &Path, ours: &Path, out: &Path, select: &[(&str, &str)]) -> (bool, String) {
    let intended = Path::new(env!("CARGO_MANIFEST_DIR")).join("intended-differences.txt");
    let o = Command::new(bin)
        .args([
            "run",
            "--abi",
            "rocm-5.2",
            "--reference",
            REFERENCE,
            "--ours",
        ])
        .arg(ours)
        .arg("--sim")
        .arg(sim)
        .args(["--presets", "mi210", "--default-preset", "mi210"])
        .args(select.iter().flat_map(|(flag, v)| [*flag, *v]))
        .arg("--out")
        .arg(out)
        .arg("--intended")
        .arg(intended)
        .output()
        .expect("run kfd-conformance");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.success(), text)
}

#[test]
fn a_flipped_status_fails_the_run_and_names_the_scenario() {
    // Missing tools fail the test: a skipped conformance check would
    // read as a pass.
    assert!(
        Path::new(REFERENCE).exists(),
        "{REFERENCE} missing: apt-get install libhsakmt1"
    );
    assert!(
        Command::new("cc").arg("--version").output().is_ok(),
        "no C compiler: apt-get install gcc"
    );
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_kfd-conformance"));
    let sim = sim_library(&bin);
    let dir = std::env::temp_dir().join(format!("kfd-conformance-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();

    let families: Vec<(&str, &str)> = FAMILIES.iter().map(|f| ("--family", *f)).collect();
    let faithful = build_shim(&dir, Shim::Faithful);
    let (ok, text) = run(&bin, &sim, &faithful, &dir.join("faithful"), &families);
    assert!(ok, "a faithful forwarder must conform:\n{text}");
    assert!(text.contains("no unexpected differences"), "{text}");

    let broken = build_shim(&dir, Shim::Flipped);
    let (ok, text) = run(&bin, &sim, &broken, &dir.join("broken"), &families);
    assert!(!ok, "the broken build must fail the run:\n{text}");
    assert!(
        text.contains("UNEXPECTED DIFFERENCE: topology/bad-input"),
        "the failing scenario must be named:\n{text}"
    );
    assert!(
        text.contains("node-unknown: reference INVALID_NODE_UNIT(5) / ours INVALID_PARAMETER(3)"),
        "the differing step must be shown:\n{text}"
    );
    let named: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("UNEXPECTED DIFFERENCE: "))
        .collect();
    assert_eq!(
        named,
        [
            "openclose/reopen-keeps-snapshot",
            "topology/bad-input@mi210",
            "topology/release@mi210"
        ],
        "only the scenarios reaching the flipped status may differ:\n{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The fuzz family fails the run when ours crashes where the reference
/// returns a status, and names the scenario, the call and its
/// arguments; the same calls on a faithful forwarder conform.
#[test]
fn a_crash_where_c_returns_a_status_fails_the_fuzz_family() {
    assert!(
        Path::new(REFERENCE).exists(),
        "{REFERENCE} missing: apt-get install libhsakmt1"
    );
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_kfd-conformance"));
    let sim = sim_library(&bin);
    let dir =
        std::env::temp_dir().join(format!("kfd-conformance-fuzz-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let select = [("--family", "fuzz"), ("--scenario", "fuzz/hsaKmtSetEvent")];
    let faithful = build_shim(&dir, Shim::Faithful);
    let (ok, text) = run(&bin, &sim, &faithful, &dir.join("faithful"), &select);
    assert!(
        ok && text.contains("no unexpected differences"),
        "a faithful forwarder must conform:\n{text}"
    );
    assert!(text.contains("fuzz: 30 calls per library"), "{text}");
    let crashing = build_shim(&dir, Shim::Crashing);
    let (ok, text) = run(&bin, &sim, &crashing, &dir.join("crashing"), &select);
    assert!(
        !ok,
        "a crash where C returns a status must fail the run:\n{text}"
    );
    assert!(
        text.contains("UNEXPECTED DIFFERENCE: fuzz/hsaKmtSetEvent"),
        "{text}"
    );
    assert!(
        text.contains("ptr=null): reference INVALID_HANDLE(4) / ours crash:SIGSEGV"),
        "the call, its arguments and both outcomes must be shown:\n{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
