//! Debian's rocminfo (ROCr 5.2.3) on the preload simulator prints exactly
//! the same with our rocm-5.2 build of libhsakmt.so.1 as with Debian's C
//! libhsakmt 5.2.3, for every simulator preset.

mod support;

use std::path::Path;
use std::process::{Command, Output};

use support::Abi;

fn rocminfo(preload: &Path, preset: &str, lib_dir: Option<&Path>) -> Output {
    let mut cmd = Command::new("rocminfo");
    cmd.env("LD_PRELOAD", preload)
        .env("KFD_SIM_TOPOLOGY", preset);
    for var in [
        "HSA_OVERRIDE_GFX_VERSION",
        "KFD_SIM_FAULTS",
        "KFD_SIM_TRACE",
        "KFD_SIM_SUMMARY",
        "ROCR_VISIBLE_DEVICES",
        "HSAKMT_DEBUG_LEVEL",
        "LD_LIBRARY_PATH",
    ] {
        cmd.env_remove(var);
    }
    if let Some(d) = lib_dir {
        cmd.env("LD_LIBRARY_PATH", d);
    }
    cmd.output()
        .unwrap_or_else(|e| panic!("cannot run rocminfo (apt-get install rocminfo): {e}"))
}

#[test]
fn rocminfo_matches_the_c_library_on_every_preset() {
    assert!(
        Path::new("/usr/lib/x86_64-linux-gnu/libhsakmt.so.1").exists(),
        "Debian's libhsakmt1 is required (apt-get install libhsakmt1)"
    );
    let preload = support::preload_lib();
    let ours = support::hsakmt_lib_dir(Abi::Rocm52);
    for preset in ["mi210", "mi300x", "apu", "navi31", "large64"] {
        let c = rocminfo(&preload, preset, None);
        let rs = rocminfo(&preload, preset, Some(&ours));
        let (ct, rt) = (
            String::from_utf8_lossy(&c.stdout),
            String::from_utf8_lossy(&rs.stdout),
        );
        assert!(c.status.success(), "{preset}: C rocminfo failed:\n{ct}");
        assert!(
            ct.contains("Agent 1"),
            "{preset}: no agents with the C library:\n{ct}"
        );
        assert_eq!(c.status.code(), rs.status.code(), "{preset}: exit status");
        if ct != rt {
            let diff: Vec<String> = ct
                .lines()
                .zip(rt.lines())
                .enumerate()
                .filter(|(_, (a, b))| a != b)
                .take(20)
                .map(|(i, (a, b))| format!("line {}:\n  C : {a}\n  rs: {b}", i + 1))
                .collect();
            panic!(
                "{preset}: rocminfo output differs ({} vs {} lines)\n{}\nstderr:\n{}",
                ct.lines().count(),
                rt.lines().count(),
                diff.join("\n"),
                String::from_utf8_lossy(&rs.stderr)
            );
        }
    }
}
