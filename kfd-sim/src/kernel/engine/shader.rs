//! Kernel dispatch: the CP hands an AQL `KERNEL_DISPATCH` packet to the
//! shader machine (`kfd_gpu::shader`), with the process's GPU VM as its
//! memory.
//!
//! Memory: an address resolves like every engine access
//! ([`gpumem::resolve`]); a buffer's memfd pages are mapped once per
//! dispatch ([`RegionMap`]) and the shader machine works on that mapping
//! directly; user memory (userptr, SVM) is the process's own memory at
//! the same address. Errors become the queue errors the hardware raises:
//! an instruction the model lacks is an illegal instruction
//! (`EC_QUEUE_WAVE_ILLEGAL_INSTRUCTION`, CP code `0x40000000`), a trap
//! `EC_QUEUE_WAVE_TRAP` (`0x80000000`), a bad address a GPU memory fault.

use std::ptr::NonNull;
use std::sync::{Arc, Mutex};

use kfd_gpu::mem::{Access, GpuMemory, Span};
use kfd_gpu::shader::{self, CodeCache, Dispatch, DispatchError, KernelCode, Limits, Target};
use kfd_sys::kfd::*;

use super::gpumem::{self, Backing};
use super::report::{Outcome, QueueError};
use super::{gpu_clock, QueueCtx};
use crate::kernel::memfd::{FileId, RegionMap};
use crate::kernel::process::Process;
use crate::kernel::{lock, PAGE};

/// The process's GPU VM of one device, as the shader machine's memory.
struct ShaderMem<'a> {
    proc: &'a Process,
    dev: usize,
    maps: Mutex<Vec<(FileId, u64, Arc<RegionMap>)>>,
}

impl std::fmt::Debug for ShaderMem<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShaderMem")
            .field("dev", &self.dev)
            .finish_non_exhaustive()
    }
}

fn to_gpu(f: gpumem::Fault) -> kfd_gpu::mem::Fault {
    kfd_gpu::mem::Fault {
        va: f.va,
        write: f.write,
        read_only: f.read_only,
    }
}

impl GpuMemory for ShaderMem<'_> {
    fn translate(&self, va: u64, access: Access) -> Result<Span, kfd_gpu::mem::Fault> {
        let write = access == Access::Write;
        // Spans start at the page of `va` (buffers and SVM ranges are
        // page-aligned) and run to the end of the buffer or range.
        let page = va & !(PAGE - 1);
        let span = gpumem::resolve(self.proc, self.dev, page, false).map_err(to_gpu)?;
        let writable = gpumem::resolve(self.proc, self.dev, page, true).is_ok();
        if write && !writable {
            return Err(kfd_gpu::mem::Fault {
                va,
                write,
                read_only: true,
            });
        }
        match span.at {
            Backing::File(memfd, off) => {
                let mut maps = lock(&self.maps);
                let found = maps
                    .iter()
                    .find(|(id, o, m)| *id == memfd.id && *o == off && m.len() >= span.len)
                    .map(|(_, _, m)| m.clone());
                let map = match found {
                    Some(m) => m,
                    None => {
                        let m = Arc::new(
                            RegionMap::new(memfd.clone(), off, span.len)
                                .map_err(|_| kfd_gpu::mem::Fault::not_present(va, write))?,
                        );
                        maps.push((memfd.id, off, m.clone()));
                        m
                    }
                };
                // SAFETY: the mapping lives in `self.maps` for as long as
                // this memory (one dispatch), spans are used only during
                // the dispatch, and the shader machine accesses them
                // atomically.
                Ok(unsafe { Span::new(page, span.len, map.ptr(), writable) })
            }
            Backing::User(addr) => {
                let ptr = NonNull::new(addr as usize as *mut u8)
                    .ok_or(kfd_gpu::mem::Fault::not_present(va, write))?;
                // SAFETY: user memory of this OS process, registered with
                // the GPU VM (userptr buffer or SVM range) and mapped while
                // it stays registered; the shader machine's accesses are
                // atomic. An unmap racing with a running kernel is not
                // modelled (the kernel would evict the queues first).
                Ok(unsafe { Span::new(page, span.len, ptr, writable) })
            }
        }
    }
}

/// Decoded code of every dispatch of this OS process.
fn code_cache() -> &'static CodeCache {
    static CACHE: std::sync::OnceLock<CodeCache> = std::sync::OnceLock::new();
    CACHE.get_or_init(CodeCache::new)
}

fn u16_at(p: &[u8; 64], off: usize) -> u16 {
    u16::from_le_bytes([p[off], p[off + 1]])
}

fn u32_at(p: &[u8; 64], off: usize) -> u32 {
    u32::from_le_bytes([p[off], p[off + 1], p[off + 2], p[off + 3]])
}

fn u64_at(p: &[u8; 64], off: usize) -> u64 {
    u64::from(u32_at(p, off)) | u64::from(u32_at(p, off + 4)) << 32
}

/// The LDS and scratch apertures of gfx9 (`MAKE_LDS_APP_BASE_V9`,
/// `MAKE_SCRATCH_APP_BASE_V9` in the kernel's `kfd_flat_memory.c`).
const LDS_BASE: u64 = 1 << 48;
const SCRATCH_BASE: u64 = 2 << 48;

/// Runs the kernel dispatch packet `p` (the `index`-th packet of the
/// queue) to its end.
pub(crate) fn dispatch(q: &mut QueueCtx, p: &[u8; 64], index: u64) -> Outcome {
    let Some(target) = Target::from_gfx_version(q.hw.gfx_version) else {
        return Outcome::Error(QueueError::no_isa(format!(
            "KERNEL_DISPATCH on gfx target version {} refused (the shader machine models gfx9)",
            q.hw.gfx_version
        )));
    };
    let setup = u16_at(p, 2);
    let mut workgroup = [u16_at(p, 4), u16_at(p, 6), u16_at(p, 8)];
    let mut grid = [u32_at(p, 12), u32_at(p, 16), u32_at(p, 20)];
    let (private, group) = (u32_at(p, 24), u32_at(p, 28));
    let (kernel_object, kernarg) = (u64_at(p, 32), u64_at(p, 40));
    let dims = usize::from(setup & 3);
    // Unused dimensions are 1 (0 is taken as 1); anything else is an
    // invalid packet.
    let bad_dims = dims == 0 || (dims..3).any(|k| workgroup[k] > 1 || grid[k] > 1);
    for k in dims..3 {
        workgroup[k] = 1;
        grid[k] = 1;
    }
    if bad_dims {
        return Outcome::Error(QueueError {
            ec: EC_QUEUE_PACKET_DISPATCH_DIM_INVALID,
            legacy: super::report::LEGACY_INVALID_PACKET,
            what: format!("KERNEL_DISPATCH dims {dims} grid {grid:?} workgroup {workgroup:?}"),
        });
    }
    let queue = super::report::amd_queue(q).unwrap_or(0);
    let mem = ShaderMem {
        proc: q.proc,
        dev: q.hw.dev,
        maps: Mutex::new(Vec::new()),
    };
    let code = {
        let mut tlb = kfd_gpu::mem::Tlb::new(&mem);
        match KernelCode::read(&mut tlb, kernel_object) {
            Ok(c) => c,
            Err(f) => {
                return Outcome::Fault(gpumem::Fault {
                    va: f.va,
                    write: f.write,
                    read_only: f.read_only,
                })
            }
        }
    };
    q.trace_packet(|| {
        format!(
            "KERNEL_DISPATCH {} entry={:#x} grid={grid:?} workgroup={workgroup:?} lds={group} private={private}",
            target.llvm_cpu(),
            code.entry
        )
    });
    let hw = q.hw;
    let stop = || hw.stopped();
    let d = Dispatch {
        target,
        code,
        grid,
        workgroup,
        group_segment_size: group,
        private_segment_size: private,
        kernarg,
        packet: q.run.ring_base + (index % (q.run.ring_size / 64)) * 64,
        queue,
        dispatch_id: index,
        shared_base: LDS_BASE,
        private_base: SCRATCH_BASE,
        mem: &mem,
        limits: Limits::default(),
        stop: &stop,
        clock: &gpu_clock,
        realtime: &gpu_clock,
    };
    let r = shader::run(&d, code_cache());
    drop(d);
    match r {
        Ok(s) => {
            q.trace(|| {
                format!(
                    "dispatch done: {} workgroups, {} waves, {} instructions",
                    s.workgroups, s.waves, s.instructions
                )
            });
            Outcome::Done
        }
        Err(DispatchError::Stopped) => Outcome::Interrupted,
        Err(DispatchError::Fault { fault, .. }) => Outcome::Fault(gpumem::Fault {
            va: fault.va,
            write: fault.write,
            read_only: fault.read_only,
        }),
        Err(e) => {
            let (ec, legacy) = match e {
                DispatchError::Trap { .. } | DispatchError::Halted { .. } => {
                    (EC_QUEUE_WAVE_TRAP, LEGACY_EXCEPTION)
                }
                DispatchError::BadDispatch(_) => (
                    EC_QUEUE_PACKET_DISPATCH_WORK_GROUP_SIZE_INVALID,
                    super::report::LEGACY_INVALID_PACKET,
                ),
                DispatchError::Runaway { .. } => (EC_QUEUE_WAVE_ABORT, LEGACY_EXCEPTION),
                _ => (
                    EC_QUEUE_WAVE_ILLEGAL_INSTRUCTION,
                    LEGACY_ILLEGAL_INSTRUCTION,
                ),
            };
            let what = e.to_string();
            explain(&what);
            Outcome::Error(QueueError { ec, legacy, what })
        }
    }
}

/// CP error code: illegal instruction.
const LEGACY_ILLEGAL_INSTRUCTION: u64 = 0x4000_0000;
/// CP error code: a wave exception (trap, abort).
const LEGACY_EXCEPTION: u64 = 0x8000_0000;

/// Says on stderr why a dispatch failed (the runtime's report names only
/// the exception).
fn explain(what: &str) {
    let _ = std::io::Write::write_all(
        &mut std::io::stderr(),
        format!("kfd-sim: a kernel dispatch failed: {what}\n").as_bytes(),
    );
}
