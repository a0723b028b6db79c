//! Debian's C libhsakmt (5.2.3) on the LD_PRELOAD simulator: a C program
//! (`tests/c/kmt_smoke.c`) compiled here with `cc` against `hsakmt.h` and
//! linked with `-lhsakmt`. These tests fail, never skip, when cc or
//! libhsakmt-dev is missing: `.ci/run` installs them.

mod support;
use support::{assert_all_ok, compile_c, output_text, preload_lib};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The compiled C program (built once per test process).
fn kmt_smoke() -> PathBuf {
    compile_c("kmt_smoke")
}

fn run(
    topology: &str,
    args: &[&str],
    env: &[(&str, &Path)],
    faults: Option<&str>,
) -> (Output, String) {
    let mut cmd = Command::new(kmt_smoke());
    cmd.args(args)
        .env("LD_PRELOAD", preload_lib())
        .env("KFD_SIM_TOPOLOGY", topology);
    for var in [
        "KFD_SIM_FAULTS",
        "KFD_SIM_TRACE",
        "KFD_SIM_SUMMARY",
        "HSA_OVERRIDE_GFX_VERSION",
    ] {
        cmd.env_remove(var);
    }
    if let Some(f) = faults {
        cmd.env("KFD_SIM_FAULTS", f);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    output_text(&mut cmd, "run kmt_smoke")
}

fn scratch(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let p = exe
        .parent()
        .unwrap()
        .join(format!("kmt-{name}-{}", std::process::id()));
    let _ = std::fs::remove_file(&p);
    p
}

/// open/close, topology, VRAM and system memory round trips, events
/// (timeout, set/wait, auto-reset, cross-thread wake-up), a compute (AQL)
/// and an SDMA queue, SVM set/get attributes, clock counters.
#[test]
fn kmt_smoke_mi210() {
    let (out, text) = run("mi210", &["smoke"], &[], None);
    assert_all_ok("smoke", &out, &text);
    for check in [
        "vram_cpu_rw",
        "system_cpu_rw",
        "event_cross_thread",
        "event_wait_timeout",
        "compute_queue_create",
        "sdma_queue_destroy",
        "svm_get_attr_subrange",
        "clock_counters",
        "close",
    ] {
        assert!(
            text.contains(&format!("OK {check}\n")),
            "{check} missing:\n{text}"
        );
    }
}

/// kfdtest PartialUnmapSysMemTest's pattern through the C library: the
/// `munmap` interposer drops the unmapped pages from the SVM range, so
/// memory mapped in the hole registers as userptr memory (EADDRINUSE
/// before the sim saw `munmap`).
#[test]
fn kmt_svm_partial_unmap_then_register_in_the_hole() {
    let (out, text) = run("mi210", &["svm-unmap"], &[], None);
    assert_all_ok("svm-unmap", &out, &text);
    for check in [
        "unmap_register_in_hole",
        "unmap_map_hole",
        "unmap_rest_keeps_attributes",
    ] {
        assert!(text.contains(&format!("OK {check}\n")), "{check}:\n{text}");
    }
}

#[test]
fn kmt_topology_of_every_preset() {
    let expect: &[(&str, &str, &str)] = &[
        ("mi210", "topology: nodes=2 cpus=1 gpus=1", "gfx=9.0.10"),
        ("mi300x", "topology: nodes=10 cpus=2 gpus=8", "gfx=9.4.2"),
        ("apu", "topology: nodes=2 cpus=1 gpus=1", "gfx=9.0.2"),
        ("navi31", "topology: nodes=2 cpus=1 gpus=1", "gfx=11.0.0"),
        ("large64", "topology: nodes=66 cpus=2 gpus=64", "gfx=9.0.10"),
    ];
    for (preset, line, gfx) in expect {
        let (out, text) = run(preset, &["topology"], &[], None);
        assert_all_ok(preset, &out, &text);
        assert!(text.contains(line), "{preset}: expected {line:?}\n{text}");
        let gpus = text
            .lines()
            .filter(|l| l.contains(" simds=") && !l.contains(" simds=0 "))
            .count();
        let with_gfx = text.lines().filter(|l| l.contains(gfx)).count();
        assert_eq!(
            gpus, with_gfx,
            "{preset}: every GPU node reports {gfx}\n{text}"
        );
    }
    // navi31 is wave32.
    let (_, text) = run("navi31", &["topology"], &[], None);
    assert!(text.contains("gfx=11.0.0 wave=32"), "{text}");
}

/// The CPU node's caches as libhsakmt 5.2.3 lists them (`cache N.I: ...`
/// lines of the `topology` mode).
fn cpu_cache_lines(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| l.starts_with("cache 0."))
        .map(|l| l.split_once(": ").unwrap().1)
        .collect()
}

/// With a virtual CRAT (the default), the CPU node has no caches in KFD
/// sysfs and the C library reads the simulated
/// `/sys/devices/system/node/node0/cpuN/cache` tree, walking the CPUs in
/// `readdir` order, which the preload makes the kernel's (kernfs hash
/// order: `cpu1` before `cpu0`). cpu1 (APIC id 2) lists its private L1d,
/// L1i and L2; cpu0 its own and the shared L3. Sizes are bytes on this
/// path (the sysfs `size` file), KiB in KFD's.
#[test]
fn kmt_cpu_caches_from_the_cpu_tree_in_readdir_order() {
    let (out, text) = run("mi210", &["topology"], &[], None);
    assert_all_ok("mi210", &out, &text);
    assert!(text.contains("node 0: cpu_cores=32 "), "{text}");
    assert_eq!(
        cpu_cache_lines(&text),
        [
            "level=1 size=32768 type=0x5 proc=2 siblings=2",
            "level=1 size=32768 type=0x6 proc=2 siblings=2",
            "level=2 size=524288 type=0x7 proc=2 siblings=2",
            "level=1 size=32768 type=0x5 proc=0 siblings=0",
            "level=1 size=32768 type=0x6 proc=0 siblings=0",
            "level=2 size=524288 type=0x7 proc=0 siblings=0",
            "level=3 size=33554432 type=0x7 proc=0 siblings=0,2",
        ],
        "{text}"
    );
    // The platform option lists them in KFD sysfs instead (one per kind,
    // KiB, the CPU model's sibling maps).
    let file = scratch("caches-in-kfd");
    std::fs::write(&file, "base mi210\n[platform]\ncpu_caches_in_kfd 1\n").unwrap();
    let (out, text) = run(file.to_str().unwrap(), &["topology"], &[], None);
    let _ = std::fs::remove_file(&file);
    assert_all_ok("cpu_caches_in_kfd", &out, &text);
    let lines = cpu_cache_lines(&text);
    assert_eq!(lines.len(), 4, "{text}");
    assert_eq!(lines[0], "level=1 size=32 type=0x5 proc=0 siblings=0,1");
    assert!(lines[3].starts_with("level=3 size=32768 type=0x7 proc=0 siblings=0,1,2,"));
}

/// Number of ALLOC_MEMORY_OF_GPU ioctls libhsakmt issues on its own before
/// the program's first allocation (hsaKmtOpenKFD maps the MMIO remap page).
fn allocs_before_first_user_alloc() -> u64 {
    let trace = scratch("probe-trace");
    let (out, text) = run("mi210", &["probe"], &[("KFD_SIM_TRACE", &trace)], None);
    assert_all_ok("probe", &out, &text);
    let t = std::fs::read_to_string(&trace).expect("trace file");
    let _ = std::fs::remove_file(&trace);
    assert!(
        t.contains("GET_VERSION"),
        "trace has one line per ioctl:\n{t}"
    );
    t.lines()
        .filter(|l| l.contains("ALLOC_MEMORY_OF_GPU"))
        .count() as u64
}

fn summary_lines(path: &Path) -> Vec<String> {
    let s = std::fs::read_to_string(path).expect("summary file");
    let _ = std::fs::remove_file(path);
    s.lines().map(str::to_string).collect()
}

/// An ENOMEM injected into the program's VRAM ALLOC_MEMORY_OF_GPU comes out
/// of hsaKmtAllocMemory as HSAKMT_STATUS_NO_MEMORY (6); the next allocation
/// works, and the simulator holds no buffer, queue or event when the
/// library closes /dev/kfd, nor any kernel process at exit.
#[test]
fn kmt_fault_injection_and_leak_check() {
    let n = allocs_before_first_user_alloc() + 1;
    let summary = scratch("fault-summary");
    let plan = format!("ALLOC_MEMORY_OF_GPU:{n}:ENOMEM");
    let (out, text) = run(
        "mi210",
        &["fault"],
        &[("KFD_SIM_SUMMARY", &summary)],
        Some(&plan),
    );
    assert_all_ok("fault", &out, &text);
    assert!(text.contains("fault_alloc_status=6\n"), "{text}");
    let lines = summary_lines(&summary);
    let close = lines
        .iter()
        .find(|l| l.starts_with("close-kfd "))
        .expect("close-kfd line");
    assert!(
        close.contains("bos=0 queues=0 events=0 svm_ranges=0"),
        "{close}"
    );
    assert!(close.contains("vram_used=[0]"), "{close}");
    let exit = lines
        .iter()
        .find(|l| l.starts_with("exit "))
        .expect("exit line");
    assert!(
        exit.contains("processes=0 ") && exit.contains("vram_used=[0]"),
        "{exit}"
    );

    // The same plan on the first ALLOC hits hsaKmtOpenKFD's MMIO page
    // instead: the library logs it and carries on, so the program's own
    // allocation succeeds (and, as the program then drops that buffer,
    // the summary shows one live BO at close).
    let (_, text) = run(
        "mi210",
        &["fault"],
        &[("KFD_SIM_SUMMARY", &summary)],
        Some("ALLOC_MEMORY_OF_GPU:1:ENOMEM"),
    );
    assert!(text.contains("fault_alloc_status=0\n"), "{text}");
    let lines = summary_lines(&summary);
    let close = lines
        .iter()
        .find(|l| l.starts_with("close-kfd "))
        .expect("close-kfd line");
    assert!(close.contains("bos=1 "), "{close}");
}

/// Two OS processes on the preload simulator: each gets zeroed VRAM, fills
/// it with its own byte and never sees the other's data (each process has
/// its own simulated machine).
#[test]
fn kmt_two_processes_are_isolated() {
    let spawn = |byte: &str| {
        Command::new(kmt_smoke())
            .args(["isolate", byte])
            .env("LD_PRELOAD", preload_lib())
            .env("KFD_SIM_TOPOLOGY", "mi210")
            .env_remove("KFD_SIM_FAULTS")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn kmt_smoke")
    };
    let a = spawn("0xa5");
    let b = spawn("0x5a");
    for child in [a, b] {
        let out = child.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert_all_ok("isolate", &out, &text);
        assert!(
            text.contains("OK isolate_starts_zeroed") && text.contains("OK isolate_keeps_own_data"),
            "{text}"
        );
    }
}

/// A dma-buf crosses OS processes under the preload simulator: process A
/// (raw KFD ioctls) fills a GTT buffer through its render-node mapping,
/// exports it and passes the descriptor over a UNIX socket to process B,
/// which imports it with hsaKmtRegisterGraphicsHandleToNodes and reads A's
/// bytes through an mmap of the dma-buf; A then sees B's write. B also
/// maps the buffer to its GPU and writes it with an SDMA queue (issue 27:
/// an imported BO is writable, as the kernel imports it; kfd-sim's GPU
/// took it for read-only and faulted), waiting at most 5 s for the fence
/// or a memory exception; A sees those bytes too and waits for B at most
/// 20 s. Each process still has its own simulated machine (VRAM
/// accounting is not shared); the pages are shared because a dma-buf is
/// a memfd.
#[test]
fn kmt_dmabuf_crosses_processes() {
    let (out, text) = run("mi210", &["dmabuf-send"], &[], None);
    assert_all_ok("dmabuf-send", &out, &text);
    for check in [
        "send_export",
        "send_dmabuf_fd",
        "recv_register",
        "recv_sees_sender_bytes",
        "recv_sdma_queue",
        "recv_sdma_woken",
        "recv_sdma_no_gpu_fault",
        "send_child_ok",
        "send_sees_receiver_write",
        "send_sees_receiver_sdma_write",
    ] {
        assert!(
            text.contains(&format!("OK {check}\n")),
            "{check} missing:\n{text}"
        );
    }
}
