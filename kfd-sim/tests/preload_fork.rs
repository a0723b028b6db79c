//! fork() on the LD_PRELOAD simulator with Debian's C libhsakmt
//! (`tests/c/kmt_fork.c`, compiled here with `cc` and linked with
//! `-lhsakmt`): a forked child gets EBADF on its parent's kfd descriptor,
//! reopens KFD through the library and allocates; children are forked
//! while a parent thread keeps the simulator busy, and must not deadlock.
//! Fails, never skips, when cc or libhsakmt-dev is missing.

mod support;
use support::{assert_all_ok, compile_c, output_text, preload_lib};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The compiled C program (built once per test process).
fn kmt_fork() -> PathBuf {
    compile_c("kmt_fork")
}

fn run(bin: &Path, rounds: u32, trace: Option<&Path>) -> (Output, String) {
    let mut cmd = Command::new(bin);
    cmd.arg(rounds.to_string())
        .env("LD_PRELOAD", preload_lib())
        .env("KFD_SIM_TOPOLOGY", "mi210");
    for var in ["KFD_SIM_FAULTS", "KFD_SIM_TRACE", "KFD_SIM_SUMMARY"] {
        cmd.env_remove(var);
    }
    if let Some(t) = trace {
        cmd.env("KFD_SIM_TRACE", t);
    }
    output_text(&mut cmd, "run kmt_fork")
}

#[test]
fn forked_children_reopen_kfd_with_the_c_library() {
    let bin = kmt_fork();
    let (out, text) = run(&bin, 30, None);
    assert_all_ok("kmt_fork", &out, &text);
    for check in [
        "child_parent_fd_ebadf",
        "child_inherited_closed",
        "child_reopen",
        "child_alloc",
        "child_free",
        "child_raw_version",
        "parent_free",
        "parent_close",
    ] {
        assert!(
            text.contains(&format!("OK {check}\n")),
            "{check} missing:\n{text}"
        );
    }
    assert_eq!(text.matches("OK child_exit\n").count(), 30, "{text}");
}

/// The same with the ioctl trace on (the trace lock is one more lock a
/// fork can catch held): parent and children append to one file.
#[test]
fn forked_children_trace_into_the_parents_file() {
    let bin = kmt_fork();
    let trace = bin.with_file_name("trace.txt");
    let _ = std::fs::remove_file(&trace);
    let (out, text) = run(&bin, 10, Some(&trace));
    assert_all_ok("kmt_fork traced", &out, &text);
    let t = std::fs::read_to_string(&trace).unwrap();
    let parent = out_pid_lines(&t);
    // Lines of the parent and of children (their own kfd processes).
    assert!(parent.len() > 10, "{} pids in the trace", parent.len());
    assert!(t.contains("AMDKFD_IOC_ALLOC_MEMORY_OF_GPU"), "{t}");
}

/// The distinct `[pid]` prefixes of a trace.
fn out_pid_lines(t: &str) -> std::collections::BTreeSet<&str> {
    t.lines()
        .filter_map(|l| l.strip_prefix('[')?.split(']').next())
        .collect()
}
