//! The export lists of every build: exactly the expected `hsaKmt*`
//! functions, every one at `HSAKMT_1` (plus the `HSAKMT_1` node symbol),
//! and the SONAME `libhsakmt.so.1`. The rocm-5.2 and rocm-6.2 builds
//! export exactly what Debian 12's and Debian 13's libhsakmt export; the
//! `dtif` build (libdtif.so) exports the newest set plus what ROCr
//! 7.2.4's ThunkLoader resolves, and nothing ROCr resolves is missing.

mod support;

use std::path::Path;
use std::process::Command;

use support::Abi;

const DEBIAN_LIB: &str = "/usr/lib/x86_64-linux-gnu/libhsakmt.so.1";

/// Debian 13's libhsakmt 6.2.4, in the root file system `cargo xtask`
/// keeps under target/rootfs/trixie.
fn debian_13_lib() -> std::path::PathBuf {
    let lib =
        support::target_dir().join("rootfs/trixie/root/usr/lib/x86_64-linux-gnu/libhsakmt.so.1");
    assert!(
        lib.exists(),
        "{} is missing: make the Debian 13 root file system with `cargo xtask rootfs trixie`",
        lib.display()
    );
    lib
}

fn soname(so: &Path) -> String {
    let out = Command::new("objdump")
        .arg("-p")
        .arg(so)
        .output()
        .expect("objdump -p");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("SONAME")
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_default()
}

fn check_all_versioned(list: &[(String, String)]) {
    for (name, ver) in list {
        assert_eq!(ver, "HSAKMT_1", "{name} is exported at {ver}");
        assert!(
            name.starts_with("hsaKmt") || name == "HSAKMT_1",
            "unexpected export {name}"
        );
    }
}

#[test]
fn rocm_5_2_build_exports_exactly_what_debian_exports() {
    assert!(
        Path::new(DEBIAN_LIB).exists(),
        "Debian's libhsakmt1 is required (apt-get install libhsakmt1)"
    );
    let ours = support::exports(&support::hsakmt_so(Abi::Rocm52));
    let debian = support::exports(Path::new(DEBIAN_LIB));
    check_all_versioned(&ours);
    assert_eq!(ours, debian);
    assert_eq!(
        ours.iter().filter(|(n, _)| n.starts_with("hsaKmt")).count(),
        67
    );
    assert!(ours.iter().any(|(n, _)| n == "HSAKMT_1"));
    assert_eq!(soname(&support::hsakmt_so(Abi::Rocm52)), "libhsakmt.so.1");
}

#[test]
fn rocm_6_2_build_exports_exactly_what_debian_13_exports() {
    let ours = support::exports(&support::hsakmt_so(Abi::Rocm62));
    let debian = support::exports(&debian_13_lib());
    check_all_versioned(&ours);
    assert_eq!(ours, debian);
    assert_eq!(
        ours.iter().filter(|(n, _)| n.starts_with("hsaKmt")).count(),
        88
    );
    assert_eq!(soname(&support::hsakmt_so(Abi::Rocm62)), "libhsakmt.so.1");
}

#[test]
fn newest_build_exports_every_legacy_and_ctx_function() {
    let ours = support::exports(&support::hsakmt_so(Abi::Newest));
    check_all_versioned(&ours);
    let mut expected: Vec<String> = include_str!("data/newest_exports.txt")
        .lines()
        .map(str::to_string)
        .collect();
    expected.push("HSAKMT_1".to_string());
    expected.sort();
    let names: Vec<String> = ours.into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, expected);
    assert_eq!(names.iter().filter(|n| n.ends_with("Ctx")).count(), 74);
    assert_eq!(
        names
            .iter()
            .filter(|n| n.starts_with("hsaKmt") && !n.ends_with("Ctx"))
            .count(),
        114
    );
    assert_eq!(soname(&support::hsakmt_so(Abi::Newest)), "libhsakmt.so.1");
}

/// What ROCr 7.2.4's ThunkLoader resolves from `libdtif.so`, read from
/// Debian experimental's libhsa-runtime64 7.2.4+dfsg-1~exp1: the names
/// its `LoadThunkApiTable` passes to dlsym (one run of its .rodata, in
/// source order) and `DtifCreate`/`DtifDestroy`.
const ROCR_7_2_4_RESOLVES: &str = include_str!("data/rocr_7_2_4_dtif.txt");

#[test]
fn dtif_build_exports_what_rocr_7_2_4_resolves() {
    let so = support::hsakmt_so(Abi::Dtif);
    let ours = support::exports(&so);
    // hsaKmt* at HSAKMT_1 as in libhsakmt.so.1; the DTIF names are plain
    // `#[no_mangle]` exports (version `Base`), which ROCr's unversioned
    // dlsym finds.
    for (name, ver) in &ours {
        let want = if name.starts_with("hsaKmt") || name == "HSAKMT_1" {
            "HSAKMT_1"
        } else {
            "Base"
        };
        assert_eq!(ver, want, "{name} is exported at {ver}");
    }
    let names: Vec<String> = ours.into_iter().map(|(n, _)| n).collect();
    let wanted: Vec<&str> = ROCR_7_2_4_RESOLVES.lines().collect();
    assert_eq!(wanted.len(), 106);
    assert_eq!(
        wanted.iter().filter(|w| w.starts_with("hsaKmt")).count(),
        93
    );
    let missing: Vec<&&str> = wanted
        .iter()
        .filter(|w| !names.iter().any(|n| n == *w))
        .collect();
    assert!(missing.is_empty(), "ROCr 7.2.4 resolves {missing:?}");
    // Exactly the newest build's exports plus ROCr's non-hsaKmt names.
    let mut expected: Vec<String> = include_str!("data/newest_exports.txt")
        .lines()
        .chain(wanted.iter().copied().filter(|w| !w.starts_with("hsaKmt")))
        .chain(["HSAKMT_1"])
        .map(str::to_string)
        .collect();
    expected.sort();
    assert_eq!(names, expected, "newest + DTIF extras, nothing else");
    assert_eq!(soname(&so), "libdtif.so");
}
