//! Kernel dispatch: the CP hands an AQL `KERNEL_DISPATCH` packet to the
//! shader machine ([`crate::shader`]), with the queue's GPU VM as its
//! memory, and turns what stops a dispatch into the queue errors the
//! hardware raises: an instruction the model lacks is an illegal
//! instruction (`EC_QUEUE_WAVE_ILLEGAL_INSTRUCTION`, CP code
//! `0x40000000`), `s_trap` and a runaway wave are wave exceptions
//! (`EC_QUEUE_WAVE_TRAP` / `EC_QUEUE_WAVE_ABORT`, CP code `0x80000000`), a
//! bad address a GPU memory fault.

use kfd_sys::hsa::hsa_kernel_dispatch_packet_t;
use kfd_sys::kfd::*;

use super::report::{self, Outcome, QueueError};
use super::QueueCtx;
use crate::shader::{self, Dispatch, DispatchError, KernelCode, Limits, Target};

/// CP error code: illegal instruction.
const LEGACY_ILLEGAL_INSTRUCTION: u64 = 0x4000_0000;
/// CP error code: a wave exception (trap, abort).
const LEGACY_EXCEPTION: u64 = 0x8000_0000;

/// Runs the kernel dispatch packet `p` (the `index`-th packet of the
/// queue) to its end.
pub(crate) fn dispatch(q: &mut QueueCtx, p: &hsa_kernel_dispatch_packet_t, index: u64) -> Outcome {
    let Some(target) = Target::from_gfx_version(q.hw.gfx_version) else {
        return Outcome::Error(QueueError::no_isa(format!(
            "the shader machine does not model gfx target version {} (it runs gfx900/902, gfx90a, \
             gfx940/942 and gfx1100)",
            q.hw.gfx_version
        )));
    };
    let mut workgroup = [p.workgroup_size_x, p.workgroup_size_y, p.workgroup_size_z];
    let mut grid = [p.grid_size_x, p.grid_size_y, p.grid_size_z];
    let dims = usize::from(p.setup & 3);
    // Unused dimensions are 1 (0 is taken as 1); anything else is an
    // invalid packet.
    let bad_dims = dims == 0 || (dims..3).any(|k| workgroup[k] > 1 || grid[k] > 1);
    if bad_dims {
        return Outcome::Error(QueueError {
            ec: EC_QUEUE_PACKET_DISPATCH_DIM_INVALID,
            legacy: report::LEGACY_INVALID_PACKET,
            what: format!("KERNEL_DISPATCH dims {dims} grid {grid:?} workgroup {workgroup:?}"),
        });
    }
    for k in dims..3 {
        workgroup[k] = 1;
        grid[k] = 1;
    }
    let queue = report::amd_queue(q).unwrap_or(0);
    let code = match KernelCode::read(&mut q.vm, p.kernel_object) {
        Ok(c) => c,
        Err(f) => return Outcome::Fault(f),
    };
    q.trace_packet(|| {
        format!(
            "KERNEL_DISPATCH {} entry={:#x} grid={grid:?} workgroup={workgroup:?} lds={} private={}",
            target.llvm_cpu(),
            code.entry,
            p.group_segment_size,
            p.private_segment_size
        )
    });
    let hw = q.hw;
    let stop = || hw.stopped();
    let clock = q.clocks.gpu;
    let clock = move || clock();
    let d = Dispatch {
        target,
        code,
        grid,
        workgroup,
        group_segment_size: p.group_segment_size,
        private_segment_size: p.private_segment_size,
        kernarg: p.kernarg_address,
        packet: q.run.ring_base + (index % (q.run.ring_size / 64).max(1)) * 64,
        queue,
        dispatch_id: index,
        shared_base: hw.apertures.0,
        private_base: hw.apertures.1,
        mem: q.mem,
        limits: Limits::default(),
        stop: &stop,
        clock: &clock,
        realtime: &clock,
    };
    match shader::run(&d, q.code) {
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
        Err(DispatchError::Fault { fault, .. }) => Outcome::Fault(fault),
        Err(e) => {
            let (ec, legacy) = match e {
                DispatchError::Trap { .. } | DispatchError::Halted { .. } => {
                    (EC_QUEUE_WAVE_TRAP, LEGACY_EXCEPTION)
                }
                DispatchError::BadDispatch(_) => (
                    EC_QUEUE_PACKET_DISPATCH_WORK_GROUP_SIZE_INVALID,
                    report::LEGACY_INVALID_PACKET,
                ),
                DispatchError::Runaway { .. } => (EC_QUEUE_WAVE_ABORT, LEGACY_EXCEPTION),
                _ => (
                    EC_QUEUE_WAVE_ILLEGAL_INSTRUCTION,
                    LEGACY_ILLEGAL_INSTRUCTION,
                ),
            };
            let what = e.to_string();
            // The runtime's report names only the exception: say which
            // instruction or address.
            let _ = std::io::Write::write_all(
                &mut std::io::stderr(),
                format!("kfd-sim: a kernel dispatch failed: {what}\n").as_bytes(),
            );
            Outcome::Error(QueueError { ec, legacy, what })
        }
    }
}
