//! The walk of `kfd-ipc-client`: ROCr's IPC memory sharing between two
//! processes. The exporter (the process started by `cargo xtask
//! clients`) allocates GPU memory, makes IPC handles of it
//! (`hsa_amd_ipc_memory_create`) and starts itself again as the importer
//! ([`IMPORTER_FLAG`]), which attaches every handle
//! (`hsa_amd_ipc_memory_attach`, to one GPU and with no agent list),
//! looks at what it got and detaches. The importer's report is part of
//! the exporter's. No address, pid or time is printed, so two runs
//! compare byte for byte.
//!
//! With ROCr 7.x the handles go over a Unix socket as dma-buf descriptors,
//! and the runtime tags and checks them with libdrm_amdgpu buffer objects:
//! the exporter imports its own dma-buf (`amdgpu_bo_import`), reads its
//! metadata (`amdgpu_bo_query_info`) and writes a random tag into it
//! (`amdgpu_bo_set_metadata`); the importer imports the descriptor it
//! received and refuses the handle unless the tag is there. Under
//! `HSA_ENABLE_DTIF=1` those are the entry points of the thunk's
//! `libdtif.so`, and the tag crosses processes through the render nodes'
//! `AMDGPU_GEM_METADATA`.
//!
//! System memory is not shared: ROCr 7.2.4's system pools are userptr
//! memory, whose dma-buf export the kernel refuses (`EPERM`), and
//! `hsa_amd_ipc_memory_create` then fails an assertion on the offset it
//! did not get (`DMA Buf inconsistent with pointer offset`) and aborts,
//! on real hardware as on the simulator.

use std::fmt::Write as _;
use std::io::{BufRead, Write as _};
use std::process::{Command, Stdio};

use crate::hsa::*;
use crate::session::{Allocation, Session, HSA_STATUS_ERROR_NULL};

/// The argument that makes the client the importer (reading handles on
/// stdin).
pub const IMPORTER_FLAG: &str = "--import";

/// Text and outcome of one side's walk.
#[derive(Debug, Default)]
pub struct Report {
    /// Deterministic text, one line per step.
    pub text: String,
    /// No step failed.
    pub ok: bool,
}

impl Report {
    fn line(&mut self, indent: usize, s: impl std::fmt::Display) {
        let _ = writeln!(self.text, "{:indent$}{s}", "", indent = indent * 2);
    }

    /// `SUCCESS` or the status with its text (a failure).
    fn status(&mut self, session: &Session<'_>, r: Result<(), Status>) -> String {
        match r {
            Ok(()) => "SUCCESS".into(),
            Err(s) => {
                self.ok = false;
                status_text(session, s)
            }
        }
    }
}

fn status_text(session: &Session<'_>, s: Status) -> String {
    if s == HSA_STATUS_ERROR_NULL {
        return "NULL result".into();
    }
    match session.status_text(s) {
        Some(t) => format!("{s:#x} \"{t}\""),
        None => format!("{s:#x}"),
    }
}

/// One shared buffer and how the importer maps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Case {
    name: &'static str,
    /// The importer maps it to its first GPU (else no agent list: every
    /// GPU).
    to_gpu: bool,
}

const CASES: &[Case] = &[
    Case {
        name: "gpu-memory/one-gpu",
        to_gpu: true,
    },
    Case {
        name: "gpu-memory/no-agent-list",
        to_gpu: false,
    },
];

/// The first GPU agent.
fn first_gpu(session: &Session<'_>) -> Option<Agent> {
    session
        .agents()
        .ok()?
        .into_iter()
        .find(|a| session.agent(*a, AGENT_DEVICE) == Ok(HSA_DEVICE_TYPE_GPU))
}

/// The first GPU's first coarse-grained global pool the runtime
/// allocates from, and its allocation granule (at least a page).
fn gpu_pool(session: &Session<'_>) -> Option<(MemoryPool, usize)> {
    let pools = session.pools(first_gpu(session)?).ok()?;
    let pool = *pools.iter().find(|p| {
        session.pool(**p, POOL_SEGMENT) == Ok(HSA_AMD_SEGMENT_GLOBAL)
            && session.pool(**p, POOL_RUNTIME_ALLOC_ALLOWED) == Ok(1)
            && session
                .pool(**p, POOL_GLOBAL_FLAGS)
                .is_ok_and(|f| f & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED != 0)
    })?;
    let granule = session.pool(pool, POOL_RUNTIME_ALLOC_GRANULE).ok()?;
    Some((pool, usize::try_from(granule.max(4096)).ok()?))
}

/// A handle on the importer's stdin: `<case> <len> <8 hex words>`.
fn encode(case: &Case, len: usize, h: &IpcMemory) -> String {
    let words: Vec<String> = h.handle.iter().map(|w| format!("{w:08x}")).collect();
    format!("{} {len} {}", case.name, words.join(" "))
}

fn decode(line: &str) -> Option<(Case, usize, IpcMemory)> {
    let mut it = line.split_whitespace();
    let name = it.next()?;
    let case = *CASES.iter().find(|c| c.name == name)?;
    let len = it.next()?.parse().ok()?;
    let mut h = IpcMemory::default();
    for w in &mut h.handle {
        *w = u32::from_str_radix(it.next()?, 16).ok()?;
    }
    it.next().is_none().then_some((case, len, h))
}

/// The exporter: one allocation and handle per case, the importer run,
/// frees. `importer` is the program to start (this one) with
/// [`IMPORTER_FLAG`].
pub fn export(session: &Session<'_>, importer: &std::path::Path) -> Report {
    let mut r = Report {
        ok: true,
        ..Report::default()
    };
    let Some((pool, len)) = gpu_pool(session) else {
        r.ok = false;
        r.line(0, "no GPU memory pool");
        return r;
    };
    let mut live: Vec<(Case, Allocation<'_, '_>)> = Vec::new();
    let mut handles = String::new();
    for case in CASES {
        let mem = match session.allocate(pool, len) {
            Ok(m) => m,
            Err(e) => {
                let t = r.status(session, Err(e));
                r.line(0, format_args!("{} allocate {len}: {t}", case.name));
                continue;
            }
        };
        let made = mem.ipc_create();
        let t = r.status(session, made.map(|_| ()));
        r.line(
            0,
            format_args!("{} allocate {len}, ipc create: {t}", case.name),
        );
        if let Ok(h) = made {
            let _ = writeln!(handles, "{}", encode(case, len, &h));
        }
        live.push((*case, mem));
    }
    run_importer(&mut r, importer, &handles);
    for (case, mem) in live {
        let t = r.status(session, mem.free());
        r.line(0, format_args!("{} free: {t}", case.name));
    }
    r
}

/// Starts the importer, gives it the handles and takes its report into
/// `r` (each line prefixed with `importer: `).
fn run_importer(r: &mut Report, importer: &std::path::Path, handles: &str) {
    let child = Command::new(importer)
        .arg(IMPORTER_FLAG)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            r.ok = false;
            r.line(0, format_args!("importer: cannot start: {e}"));
            return;
        }
    };
    if let Some(mut stdin) = child.stdin.take() {
        // A closed pipe shows as the importer's own failure below.
        let _ = stdin.write_all(handles.as_bytes());
    }
    match child.wait_with_output() {
        Ok(out) => {
            for l in String::from_utf8_lossy(&out.stdout).lines() {
                r.line(0, format_args!("importer: {l}"));
            }
            let code = out
                .status
                .code()
                .map_or_else(|| "signal".to_string(), |c| c.to_string());
            r.ok &= out.status.success();
            r.line(0, format_args!("importer exit: {code}"));
        }
        Err(e) => {
            r.ok = false;
            r.line(0, format_args!("importer: {e}"));
        }
    }
}

fn pointer_type(t: u32) -> String {
    match t {
        HSA_EXT_POINTER_TYPE_UNKNOWN => "UNKNOWN".into(),
        HSA_EXT_POINTER_TYPE_HSA => "HSA".into(),
        HSA_EXT_POINTER_TYPE_LOCKED => "LOCKED".into(),
        HSA_EXT_POINTER_TYPE_GRAPHICS => "GRAPHICS".into(),
        HSA_EXT_POINTER_TYPE_IPC => "IPC".into(),
        other => format!("type-{other}"),
    }
}

/// The importer: every handle of `input` attached, looked at (pointer
/// info) and detached.
pub fn import(session: &Session<'_>, input: impl BufRead) -> Report {
    let mut r = Report {
        ok: true,
        ..Report::default()
    };
    let gpu = first_gpu(session);
    for line in input.lines() {
        let Some((case, len, h)) = line.ok().as_deref().and_then(decode) else {
            r.ok = false;
            r.line(0, "bad handle line");
            continue;
        };
        let agents: Vec<Agent> = if case.to_gpu {
            gpu.into_iter().collect()
        } else {
            Vec::new()
        };
        let m = match session.ipc_attach(&h, len, &agents) {
            Ok(m) => m,
            Err(e) => {
                let t = r.status(session, Err(e));
                r.line(0, format_args!("{} attach: {t}", case.name));
                continue;
            }
        };
        r.line(
            0,
            format_args!("{} attach to {} agents: SUCCESS", case.name, agents.len()),
        );
        let info = match m.pointer_info() {
            Ok((t, size)) => format!("type {} size {size}", pointer_type(t)),
            Err(e) => {
                let t = r.status(session, Err(e));
                format!("?({t})")
            }
        };
        r.line(1, format_args!("pointer info: {info}"));
        let t = r.status(session, m.detach());
        r.line(1, format_args!("detach: {t}"));
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_round_trip_through_text() {
        let h = IpcMemory {
            handle: [1, 0xffff_ffff, 3, 0, 5, 6, 0x8000_0001, 0x1234_5678],
        };
        let line = encode(&CASES[1], 8192, &h);
        assert_eq!(decode(&line), Some((CASES[1], 8192, h)));
        assert_eq!(decode("gpu-memory/one-gpu 4096 1 2 3"), None);
        assert_eq!(decode(&format!("{line} extra")), None);
        assert_eq!(decode("nonsense 1 0 0 0 0 0 0 0 0"), None);
        assert_eq!(pointer_type(4), "IPC");
        assert_eq!(pointer_type(9), "type-9");
    }
}
