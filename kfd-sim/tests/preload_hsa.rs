//! Debian's ROCr (libhsa-runtime64 5.2.3, with libhsakmt 5.2.3) finishing
//! GPU work on the LD_PRELOAD simulator: `tests/c/hsa_copy.c`, compiled
//! here against the packaged headers and linked with `-lhsa-runtime64`.
//! These tests fail, never skip, when cc or libhsa-runtime-dev is missing.
//!
//! ROCr 5.2.3 copies host<->device with SDMA, and device<->device on one
//! GPU with SDMA below `HSA_FORCE_SDMA_SIZE` (1 MiB by default) and with
//! its blit kernels above; with `HSA_ENABLE_SDMA=0` every copy is a blit
//! kernel. The size sweep runs three ways: every copy on SDMA
//! (`HSA_FORCE_SDMA_SIZE` 1 GiB), the default split, and every copy on the
//! blit kernels, which run on the simulator's shader machine; every byte
//! is compared each time.

mod support;
use support::{assert_all_ok, compile_c_with, preload_lib};

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn hsa_copy() -> PathBuf {
    compile_c_with("hsa_copy", "-lhsa-runtime64", "libhsa-runtime-dev")
}

/// Runs the program; a run that outlives `limit` is killed and fails the
/// test (a hang is a bug, not a slow test).
fn run(mode: &str, env: &[(&str, &str)], limit: Duration) -> (Output, String, String) {
    let mut cmd = Command::new(hsa_copy());
    cmd.arg(mode)
        .env("LD_PRELOAD", preload_lib())
        .env("KFD_SIM_TOPOLOGY", "mi210")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for var in [
        "KFD_SIM_FAULTS",
        "KFD_SIM_TRACE",
        "KFD_SIM_SUMMARY",
        "HSA_OVERRIDE_GFX_VERSION",
        "HSA_ENABLE_SDMA",
        "HSA_FORCE_SDMA_SIZE",
        "HSA_ENABLE_INTERRUPT",
    ] {
        cmd.env_remove(var);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("run hsa_copy");
    let start = Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            break;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().expect("output");
            panic!(
                "hsa_copy {mode} hung (killed after {limit:?}):\n{}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("output");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out, stdout, stderr)
}

/// hsa_amd_memory_async_copy host->device, device->device and
/// device->host of 4 KiB, 64 KiB, 1 MiB, 16 MiB and 64 MiB with every byte
/// compared, and a copy gated on a dependency signal another thread clears
/// (ROCr turns it into SDMA POLL_REGMEMs); each completion signal is
/// waited for with an infinite, blocking wait.
#[test]
fn rocr_async_copies_4k_to_64m_on_sdma() {
    let summary = std::env::temp_dir().join(format!("hsa-copy-{}.summary", std::process::id()));
    let _ = std::fs::remove_file(&summary);
    let (out, text, err) = run(
        "copy",
        &[
            ("HSA_FORCE_SDMA_SIZE", "1073741824"),
            ("KFD_SIM_SUMMARY", summary.to_str().unwrap()),
        ],
        Duration::from_secs(120),
    );
    assert_all_ok("copy", &out, &text);
    for size in [4096, 65536, 1 << 20, 16 << 20, 64 << 20] {
        for what in ["h2d", "d2d", "d2h", "bytes"] {
            assert!(
                text.contains(&format!("OK {what}_{size}\n")),
                "{what}_{size}:\n{text}\n{err}"
            );
        }
    }
    assert!(
        text.contains("OK dep_copy_waits_for_its_signal\n"),
        "{text}"
    );
    // ROCr destroyed its SDMA queues at shutdown: nothing left in flight.
    let s = std::fs::read_to_string(&summary).unwrap_or_default();
    let _ = std::fs::remove_file(&summary);
    let close = s.lines().find(|l| l.starts_with("close-kfd")).unwrap_or("");
    assert!(
        close.contains("queues=0 ") && close.contains("busy_queues=0 failed_queues=0"),
        "{s}"
    );
}

/// BARRIER_AND / BARRIER_OR with and without dependencies and a
/// barrier-value packet on a user queue of ROCr's; the waits are
/// infinite and blocking, woken by the completion.
#[test]
fn rocr_barrier_packets_and_infinite_waits() {
    let (out, text, _) = run("barrier", &[], Duration::from_secs(60));
    assert_all_ok("barrier", &out, &text);
    for check in [
        "barrier_and_no_deps",
        "barrier_or_no_deps",
        "barrier_and_two_deps",
        "barrier_or_one_of_three",
        "barrier_value",
        "read_index_caught_up",
    ] {
        assert!(text.contains(&format!("OK {check}\n")), "{check}:\n{text}");
    }
}

/// The copy sweep of 4 KiB .. 64 MiB with every byte compared.
fn assert_copies_ok(env: &[(&str, &str)]) {
    let (out, text, err) = run("copy", env, Duration::from_secs(120));
    assert_all_ok("copy", &out, &text);
    for size in [4096, 65536, 1 << 20, 16 << 20, 64 << 20] {
        for what in ["h2d", "d2d", "d2h", "bytes"] {
            assert!(
                text.contains(&format!("OK {what}_{size}\n")),
                "{what}_{size}:\n{text}\n{err}"
            );
        }
    }
    assert!(!err.contains("kfd-sim: a kernel dispatch failed"), "{err}");
}

/// With the default threshold, device->device copies of 1 MiB and more go
/// to ROCr 5.2.3's blit kernel, which the shader machine runs: every byte
/// arrives.
#[test]
fn rocr_blit_kernel_copies_arrive() {
    assert_copies_ok(&[]);
}

/// With SDMA off (`HSA_ENABLE_SDMA=0`) every copy, host<->device too, is a
/// blit kernel: every byte arrives.
#[test]
fn rocr_copies_without_sdma_run_on_blit_kernels() {
    assert_copies_ok(&[("HSA_ENABLE_SDMA", "0")]);
}
