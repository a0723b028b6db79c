//! The hand-written declarations of `kfd_clients::hsa` against the
//! installed `hsa/hsa.h` and `hsa/hsa_ext_amd.h` (Debian's
//! `libhsa-runtime-dev`), and of `kfd_clients::kmt` against
//! `hsakmttypes.h` (`libhsakmt-dev`): a C program generated from the
//! constant and layout tables prints each value, and every one must
//! match. Fails, never skips, when cc or a header is missing (`.ci/run`
//! installs them).

use std::path::PathBuf;
use std::process::Command;

use kfd_clients::{hsa, kmt};

fn constants() -> impl Iterator<Item = &'static (&'static str, u32)> {
    hsa::CONSTANTS.iter().chain(kmt::CONSTANTS)
}

fn layouts() -> impl Iterator<Item = &'static (&'static str, usize)> {
    hsa::LAYOUTS.iter().chain(kmt::LAYOUTS)
}

fn c_program() -> String {
    let mut src = String::from(
        "#include <stdio.h>\n#include <stddef.h>\n#include <stdbool.h>\n\
         #include <hsa/hsa.h>\n#include <hsa/hsa_ext_amd.h>\n#include <hsakmttypes.h>\n\
         int main(void) {\n",
    );
    for (name, _) in constants() {
        src.push_str(&format!(
            "  printf(\"%s %lld\\n\", \"{name}\", (long long){name});\n"
        ));
    }
    for (expr, _) in layouts() {
        src.push_str(&format!(
            "  printf(\"%s %zu\\n\", \"{expr}\", (size_t)({expr}));\n"
        ));
    }
    src.push_str("  return 0;\n}\n");
    src
}

#[test]
fn declarations_match_hsa_h() {
    let header = PathBuf::from("/usr/include/hsa/hsa.h");
    assert!(
        header.exists(),
        "{} is missing: apt-get install libhsa-runtime-dev",
        header.display()
    );
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("hsa_layout");
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("probe.c");
    let exe = dir.join(format!("probe-{}", std::process::id()));
    std::fs::write(&src, c_program()).unwrap();
    let cc = Command::new("cc")
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .output()
        .expect("run cc (apt-get install gcc)");
    assert!(
        cc.status.success(),
        "cc failed:\n{}",
        String::from_utf8_lossy(&cc.stderr)
    );
    let out = Command::new(&exe).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let c: Vec<(String, i128)> = text
        .lines()
        .map(|l| {
            let (k, v) = l.rsplit_once(' ').unwrap();
            (k.to_string(), v.parse().unwrap())
        })
        .collect();
    let rust: Vec<(String, i128)> = constants()
        .map(|(k, v)| (k.to_string(), i128::from(*v)))
        .chain(layouts().map(|(k, v)| (k.to_string(), *v as i128)))
        .collect();
    let wrong: Vec<String> = c
        .iter()
        .zip(&rust)
        .filter(|(a, b)| a != b)
        .map(|(a, b)| format!("{}: C {} vs Rust {}", a.0, a.1, b.1))
        .collect();
    assert_eq!(c.len(), rust.len());
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    let _ = std::fs::remove_file(&exe);
}
