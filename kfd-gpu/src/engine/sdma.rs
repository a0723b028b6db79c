//! An SDMA engine serving one user-mode SDMA queue (`SDMA`, `SDMA_XGMI`,
//! `SDMA_BY_ENG_ID`).
//!
//! Packets (the SDMA v4+ encodings of `kfd_sys::sdma`, decoded there into
//! `SdmaPacket`): `NOP`, `COPY_LINEAR` (count = bytes − 1; the count field
//! is 30 bits wide on gfx90a, gfx94x and gfx10.3+, 22 bits on the other
//! gfx9/gfx10 parts: `kfd_sys::sdma::copy_count_mask`),
//! `CONSTANT_FILL`, `WRITE` (untiled), `FENCE` (32-bit, and the 64-bit
//! sub-op), `TRAP` (the interrupt context is an event id, 28 bits valid),
//! `POLL_REGMEM` (memory form: wait for the value; register form: the HDP
//! flush ROCr issues, a no-op), `ATOMIC` (ADD64), `TIMESTAMP` (global and
//! local counters) and `GCR` (cache control, a no-op). Anything else stops
//! the queue with an error.
//!
//! Ring pointers: 64-bit monotonic byte offsets, wrapped by the ring size
//! (ROCr's `HwIndexMonotonic` gfx9+ layout); the read pointer is written
//! back the same way.

use kfd_sys::sdma::{
    self, SdmaPacket, SDMA_ATOMIC_ADD64, SDMA_CONST_FILL_FILLSIZE_DWORD, SDMA_SUBOP_TIMESTAMP_GET,
    SDMA_SUBOP_TIMESTAMP_GET_GLOBAL, SDMA_TRAP_INT_CTX_MASK,
};
use zerocopy::IntoBytes;

use super::pm4::compare;
use super::report::{self, interrupt, Outcome, QueueError};
use super::{Progress, QueueCtx};

/// An error for a packet the engine cannot run.
fn unsupported(e: kfd_sys::packet::PacketError) -> Outcome {
    Outcome::Error(QueueError::unsupported(e.to_string()))
}

fn execute(q: &mut QueueCtx, p: &SdmaPacket, len: usize) -> Outcome {
    let h = p.header();
    q.trace_packet(|| format!("{} ({len} dw)", sdma::op_name(h.op()).unwrap_or("SDMA")));
    match p {
        SdmaPacket::Nop(_) | SdmaPacket::Gcr(_) => Outcome::Done,
        SdmaPacket::CopyLinear(c) => {
            let len = c.bytes(sdma::copy_count_mask(q.hw.gfx_version));
            let (src, dst) = (c.src(), c.dst());
            q.trace_packet(|| format!("copy {len} bytes {src:#x} -> {dst:#x}"));
            let hw = q.hw;
            match q.vm.copy(dst, src, len, &|| hw.stopped()) {
                Ok(true) => Outcome::Done,
                Ok(false) => Outcome::Interrupted,
                Err(f) => f.into(),
            }
        }
        SdmaPacket::Write(w, data) => match q.vm.write(w.dst(), data.as_bytes()) {
            Ok(()) => Outcome::Done,
            Err(f) => f.into(),
        },
        SdmaPacket::Fence(f) => match q.vm.store::<u32>(f.addr(), f.data) {
            Ok(()) => Outcome::Done,
            Err(f) => f.into(),
        },
        SdmaPacket::Fence64(f) => match q.vm.store::<u64>(f.addr(), f.data()) {
            Ok(()) => Outcome::Done,
            Err(f) => f.into(),
        },
        SdmaPacket::Trap(t) => {
            interrupt(q, t.int_ctx & SDMA_TRAP_INT_CTX_MASK, 28);
            Outcome::Done
        }
        SdmaPacket::PollRegmem(p) => {
            if !p.mem_poll() {
                // The register form: ROCr's HDP flush. No register model.
                return Outcome::Done;
            }
            let function = p.func();
            let value = match q.vm.load::<u32>(p.addr() & !3) {
                Ok(v) => v & p.mask,
                Err(f) => return f.into(),
            };
            match compare(function, value, p.value) {
                Some(true) => Outcome::Done,
                Some(false) => Outcome::Blocked,
                None => Outcome::Error(QueueError::unsupported(format!(
                    "POLL_REGMEM function {function}"
                ))),
            }
        }
        SdmaPacket::Atomic(a) => {
            let operation = a.operation();
            if operation != SDMA_ATOMIC_ADD64 {
                return Outcome::Error(QueueError::unsupported(format!(
                    "SDMA ATOMIC operation {operation}"
                )));
            }
            let add = a.src_data();
            match q
                .vm
                .update::<u64>(a.addr() & !7, &mut |v| v.wrapping_add(add))
            {
                Ok(_) => Outcome::Done,
                Err(f) => f.into(),
            }
        }
        SdmaPacket::ConstantFill(f) => {
            let count = u64::from(f.count & sdma::copy_count_mask(q.hw.gfx_version));
            let data = f.data.to_ne_bytes();
            let (pattern, len): (&[u8], u64) = if f.fillsize() == SDMA_CONST_FILL_FILLSIZE_DWORD {
                (&data, ((count >> 2) + 1) * 4)
            } else {
                (&data[..1], count + 1)
            };
            let hw = q.hw;
            match q.vm.fill(f.dst(), pattern, len, &|| hw.stopped()) {
                Ok(true) => Outcome::Done,
                Ok(false) => Outcome::Interrupted,
                Err(f) => f.into(),
            }
        }
        SdmaPacket::Timestamp(t) => {
            let sub_op = t.header.sub_op();
            if sub_op != SDMA_SUBOP_TIMESTAMP_GET && sub_op != SDMA_SUBOP_TIMESTAMP_GET_GLOBAL {
                return unsupported(kfd_sys::packet::PacketError::UnknownSdma {
                    op: t.header.op(),
                    sub_op,
                });
            }
            match q.vm.store::<u64>(t.addr() & !7, (q.clocks.gpu)()) {
                Ok(()) => Outcome::Done,
                Err(f) => f.into(),
            }
        }
    }
}

/// One step of an SDMA queue: the packets between the read index and the
/// write pointer, up to `budget`.
pub(crate) fn step(q: &mut QueueCtx, budget: u32) -> Progress {
    let (base, size) = (q.run.ring_base, q.run.ring_size);
    if base == 0 || size < 8 {
        return Progress::Stopped;
    }
    let size_dw = size / 4;
    let Some((wptr, mut read)) = q.ring_pointers() else {
        return Progress::Stopped;
    };
    let mut ran = 0;
    while read < wptr && ran < budget {
        let at_dw = read / 4;
        let head = sdma::HEAD_DWORDS as u64;
        let head = match super::pm4::ring_dwords(q, base, size_dw, at_dw, head) {
            Ok(h) => h,
            Err(f) => {
                report::vm_fault(q, f);
                return Progress::Stopped;
            }
        };
        let len = match sdma::packet_dwords(&head) {
            Ok(len) => len as u64,
            Err(e) => {
                report::queue_error(q, &QueueError::unsupported(e.to_string()));
                return Progress::Stopped;
            }
        };
        if read + len * 4 > wptr {
            break;
        }
        let p = match super::pm4::ring_dwords(q, base, size_dw, at_dw, len) {
            Ok(p) => p,
            Err(f) => {
                report::vm_fault(q, f);
                return Progress::Stopped;
            }
        };
        let o = match SdmaPacket::decode(&p) {
            Ok((packet, _)) => execute(q, &packet, p.len()),
            Err(e) => unsupported(e),
        };
        if let Err(progress) = q.settle(o, ran) {
            return progress;
        }
        read += len * 4;
        q.packet_done(read);
        ran += 1;
        if let Err(f) = q.vm.store::<u64>(q.hw.rptr, read) {
            report::vm_fault(q, f);
            return Progress::Stopped;
        }
    }
    Progress::after(ran)
}
