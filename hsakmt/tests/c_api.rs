//! C programs against the library: the Ctx API (primary refcount, three
//! secondary contexts, isolation, teardown with no live object left in
//! the simulator), fork behaviour diffed against Debian's libhsakmt, the
//! libdrm entry points of the `libdtif.so` build, and VRAM shared with a
//! forked child that writes it through SDMA.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use support::Abi;

fn compile(src: &str, out: &Path, include_ours: bool, link_dir: Option<&Path>) {
    let mut cmd = Command::new("gcc");
    cmd.args(["-std=gnu11", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(out)
        .arg(support::workspace().join("hsakmt/tests/c").join(src));
    if include_ours {
        cmd.arg("-I")
            .arg(support::workspace().join("hsakmt/include"));
    }
    match link_dir {
        Some(d) => {
            cmd.arg("-L").arg(d).arg("-l:libhsakmt.so.1");
        }
        None => {
            cmd.arg("-lhsakmt");
        }
    }
    let o = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run gcc (apt-get install gcc): {e}"));
    assert!(
        o.status.success(),
        "gcc {src} failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn run(exe: &Path, args: &[&str], lib_dir: Option<&Path>, env: &[(&str, &Path)]) -> Output {
    let mut cmd = Command::new(exe);
    cmd.args(args)
        .env("LD_PRELOAD", support::preload_lib())
        .env("KFD_SIM_TOPOLOGY", "mi210")
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("KFD_SIM_SUMMARY")
        .env_remove("KFD_SIM_FAULTS");
    if let Some(d) = lib_dir {
        cmd.env("LD_LIBRARY_PATH", d);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run test program")
}

#[test]
fn ctx_api_tenants_are_isolated_and_leave_nothing_behind() {
    let lib = support::hsakmt_lib_dir(Abi::Newest);
    let dir = support::scratch("ctx-api");
    let exe = dir.join("ctx_api");
    compile("ctx_api.c", &exe, true, Some(&lib));
    let summary: PathBuf = dir.join("summary.txt");
    let out = run(
        &exe,
        &["tenants"],
        Some(&lib),
        &[("KFD_SIM_SUMMARY", &summary)],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("tenants ok"),
        "ctx_api tenants failed ({:?}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&summary).expect("KFD_SIM_SUMMARY written");
    let exit = text
        .lines()
        .find(|l| l.starts_with("exit "))
        .expect("exit summary line");
    // Every secondary released its objects; the primary, as with the C
    // library, keeps its descriptor after the last close (the kernel
    // reclaims it at exit) and nothing of the tenants' VRAM.
    assert!(
        exit.contains("processes=1 files=2 vram_used=[0]")
            && !exit.contains("secondary=true")
            && exit.contains("secondary=false"),
        "objects left at exit: {exit}\n{text}"
    );
    let closes: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("close-kfd "))
        .collect();
    assert_eq!(closes.len(), 3, "{text}");
}

#[test]
fn dtif_buffer_objects_follow_libdrm() {
    let lib = support::hsakmt_lib_dir(Abi::Dtif);
    // The build's SONAME is libdtif.so: the program asks for that name.
    match std::os::unix::fs::symlink("libhsakmt.so.1", lib.join("libdtif.so")) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => panic!("symlink: {e}"),
        _ => {}
    }
    let dir = support::scratch("dtif-bo");
    let exe = dir.join("dtif_bo");
    compile("dtif_bo.c", &exe, true, Some(&lib));
    let summary: PathBuf = dir.join("summary.txt");
    let out = run(&exe, &[], Some(&lib), &[("KFD_SIM_SUMMARY", &summary)]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("dtif bo ok"),
        "dtif_bo failed ({:?}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    // Every GEM handle was closed and the buffer freed: no VRAM is left
    // (the closed primary keeps its descriptors, as the C library does).
    let text = std::fs::read_to_string(&summary).expect("KFD_SIM_SUMMARY written");
    let exit = text
        .lines()
        .find(|l| l.starts_with("exit "))
        .expect("exit summary line");
    assert!(exit.contains("kernel_objects_free=true"), "{exit}");
}

#[test]
fn fork_child_sees_the_primary_closed_like_the_c_library() {
    let lib = support::hsakmt_lib_dir(Abi::Newest);
    let dir = support::scratch("fork");
    let exe = dir.join("fork_legacy");
    compile("fork_legacy.c", &exe, false, None);
    let c = run(&exe, &[], None, &[]);
    let ours = run(&exe, &[], Some(&lib), &[]);
    let (ct, rt) = (
        String::from_utf8_lossy(&c.stdout),
        String::from_utf8_lossy(&ours.stdout),
    );
    assert!(
        c.status.success() && ours.status.success(),
        "C:\n{ct}\nours:\n{rt}"
    );
    assert_eq!(ct, rt, "fork behaviour differs from the C library");
    for want in [
        "child version 20",
        "child acquire 20",
        "child alloc 20",
        "child close 0",
        "child node properties 0",
        "child clock counters 0",
        "child create event 0",
        "child create queue 0",
        "child destroy queue 0",
        "child close again 0",
        "child exited 0",
        "parent version 0",
        "parent free 0",
        "parent close 0",
    ] {
        assert!(rt.lines().any(|l| l == want), "missing {want:?} in:\n{rt}");
    }
}

/// Issue 27: VRAM shared through hsaKmtShareMemory (a dma-buf on the
/// simulator, which lacks ROCm's IPC ioctl), imported by a forked child
/// with hsaKmtRegisterSharedHandle and written by the child's SDMA queue:
/// the write lands (kfd-sim made every import read-only: a GPU fault, the
/// child's queues evicted), the parent sees it, and every wait of the
/// program is bounded (a fault sets the child's memory-exception event,
/// a hung child is killed after 20 s). On a one-GPU and an eight-GPU
/// machine.
#[test]
fn dmabuf_ipc_sdma_write_into_shared_vram_crosses_processes() {
    let lib = support::hsakmt_lib_dir(Abi::Newest);
    let dir = support::scratch("dmabuf-ipc");
    let exe = dir.join("dmabuf_ipc");
    compile("dmabuf_ipc.c", &exe, false, Some(&lib));
    for preset in ["mi210", "mi300x"] {
        let out = run(
            &exe,
            &[],
            Some(&lib),
            &[("KFD_SIM_TOPOLOGY", Path::new(preset))],
        );
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && !text.contains("FAIL"),
            "{preset}: {:?}\n{text}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        for check in [
            "child_register_shared_handle",
            "child_no_memory_exception",
            "child_sees_sdma_write",
            "parent_child_ok",
            "parent_sees_child_sdma_write",
        ] {
            assert!(
                text.lines().any(|l| l == format!("OK {check}")),
                "{preset}: {check} missing:\n{text}"
            );
        }
    }
}
