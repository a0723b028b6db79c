//! An SDMA engine serving one user-mode SDMA queue (`SDMA`, `SDMA_XGMI`,
//! `SDMA_BY_ENG_ID`).
//!
//! Packets (SDMA v4/v5 encodings, ROCr's `sdma_registers.h`, kfdtest's
//! `sdma_pkt_struct.h`): `NOP`, `COPY_LINEAR` (count = bytes − 1; the
//! count field is 30 bits wide on gfx90a, gfx94x and gfx10.3+, 22 bits on the
//! other gfx9/gfx10 parts, as ROCr's per-ASIC maximum says),
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

use super::pm4::compare;
use super::report::{self, interrupt, Outcome, QueueError};
use super::{Progress, QueueCtx};

/// `SDMA_OP_*`.
mod op {
    pub const NOP: u32 = 0;
    pub const COPY: u32 = 1;
    pub const WRITE: u32 = 2;
    pub const FENCE: u32 = 5;
    pub const TRAP: u32 = 6;
    pub const POLL_REGMEM: u32 = 8;
    pub const ATOMIC: u32 = 10;
    pub const CONST_FILL: u32 = 11;
    pub const TIMESTAMP: u32 = 13;
    pub const GCR: u32 = 17;
}

/// `SDMA_ATOMIC_ADD64`.
const ATOMIC_ADD64: u32 = 47;

/// Width of `COPY_LINEAR`'s count field for a device: 30 bits
/// (`count_ext`) on gfx90a, gfx94x/gfx950, gfx10.3+ and gfx11/12; 22 bits
/// on the other gfx9 and gfx10.1 parts. ROCr's per-ASIC copy-size limit
/// (`GpuAgent::CreateBlitSdma`) says the same: ROCr 6.1.2 sends a
/// single 16 MiB `COPY_LINEAR` on gfx942.
pub(crate) fn copy_count_mask(gfx_version: u32) -> u32 {
    let (major, minor, stepping) = (
        gfx_version / 10000,
        gfx_version / 100 % 100,
        gfx_version % 100,
    );
    let wide = match major {
        9 => minor >= 4 || (minor == 0 && stepping == 10),
        10 => minor >= 3,
        m => m >= 11,
    };
    if wide {
        (1 << 30) - 1
    } else {
        (1 << 22) - 1
    }
}

fn op_name(op: u32) -> String {
    let n = match op {
        op::NOP => "NOP",
        op::COPY => "COPY_LINEAR",
        op::WRITE => "WRITE",
        op::FENCE => "FENCE",
        op::TRAP => "TRAP",
        op::POLL_REGMEM => "POLL_REGMEM",
        op::ATOMIC => "ATOMIC",
        op::CONST_FILL => "CONST_FILL",
        op::TIMESTAMP => "TIMESTAMP",
        op::GCR => "GCR",
        _ => return format!("op {op}"),
    };
    n.to_string()
}

/// Dwords [`packet_len`] looks at.
const HEAD_DW: u64 = 4;

/// Length in dwords of the packet whose first [`HEAD_DW`] dwords are
/// `head` (`None`: not a packet this engine knows).
fn packet_len(head: &[u32]) -> Option<u64> {
    let dw0 = head[0];
    let sub = (dw0 >> 8) & 0xFF;
    Some(match dw0 & 0xFF {
        op::NOP => 1 + u64::from((dw0 >> 16) & 0x3FFF),
        op::COPY if sub == 0 => 7,
        // Header, address, count (dwords - 1), then the data.
        op::WRITE if sub == 0 => 4 + u64::from(head[3] & 0x3F_FFFF) + 1,
        op::FENCE if sub == 2 => 5,
        op::FENCE => 4,
        op::TRAP => 2,
        op::POLL_REGMEM => 6,
        op::ATOMIC => 8,
        op::CONST_FILL => 5,
        op::TIMESTAMP => 3,
        op::GCR => 5,
        _ => return None,
    })
}

fn addr(lo: u32, hi: u32) -> u64 {
    u64::from(lo) | u64::from(hi) << 32
}

fn execute(q: &mut QueueCtx, p: &[u32]) -> Outcome {
    let dw0 = p[0];
    let (op, sub) = (dw0 & 0xFF, (dw0 >> 8) & 0xFF);
    q.trace_packet(|| format!("{} ({} dw)", op_name(op), p.len()));
    match op {
        op::NOP | op::GCR => Outcome::Done,
        op::COPY => {
            let mask = copy_count_mask(q.hw.gfx_version);
            let len = u64::from(p[1] & mask) + 1;
            let (src, dst) = (addr(p[3], p[4]), addr(p[5], p[6]));
            q.trace_packet(|| format!("copy {len} bytes {src:#x} -> {dst:#x}"));
            let hw = q.hw;
            match q.vm.copy(dst, src, len, &|| hw.stopped()) {
                Ok(true) => Outcome::Done,
                Ok(false) => Outcome::Interrupted,
                Err(f) => f.into(),
            }
        }
        op::WRITE => {
            let dst = addr(p[1], p[2]);
            let data: Vec<u8> = p[4..].iter().flat_map(|d| d.to_ne_bytes()).collect();
            match q.vm.write(dst, &data) {
                Ok(()) => Outcome::Done,
                Err(f) => f.into(),
            }
        }
        op::FENCE => {
            let dst = addr(p[1], p[2]);
            let r = if sub == 2 {
                q.vm.store::<u64>(dst, addr(p[3], p[4]))
            } else {
                q.vm.store::<u32>(dst, p[3])
            };
            match r {
                Ok(()) => Outcome::Done,
                Err(f) => f.into(),
            }
        }
        op::TRAP => {
            interrupt(q, p[1] & 0x0FFF_FFFF, 28);
            Outcome::Done
        }
        op::POLL_REGMEM => {
            let mem_poll = dw0 & (1 << 31) != 0;
            if !mem_poll {
                // The register form: ROCr's HDP flush. No register model.
                return Outcome::Done;
            }
            let function = (dw0 >> 28) & 7;
            let at = addr(p[1], p[2]) & !3;
            let value = match q.vm.load::<u32>(at) {
                Ok(v) => v & p[4],
                Err(f) => return f.into(),
            };
            match compare(function, value, p[3]) {
                Some(true) => Outcome::Done,
                Some(false) => Outcome::Blocked,
                None => Outcome::Error(QueueError::unsupported(format!(
                    "POLL_REGMEM function {function}"
                ))),
            }
        }
        op::ATOMIC => {
            let operation = (dw0 >> 25) & 0x7F;
            if operation != ATOMIC_ADD64 {
                return Outcome::Error(QueueError::unsupported(format!(
                    "SDMA ATOMIC operation {operation}"
                )));
            }
            let add = addr(p[3], p[4]);
            match q
                .vm
                .update::<u64>(addr(p[1], p[2]) & !7, &mut |v| v.wrapping_add(add))
            {
                Ok(_) => Outcome::Done,
                Err(f) => f.into(),
            }
        }
        op::CONST_FILL => {
            let fillsize = dw0 >> 30;
            let dst = addr(p[1], p[2]);
            let count = u64::from(p[4] & copy_count_mask(q.hw.gfx_version));
            let data = p[3].to_ne_bytes();
            let (pattern, len): (&[u8], u64) = if fillsize == 2 {
                (&data, ((count >> 2) + 1) * 4)
            } else {
                (&data[..1], count + 1)
            };
            let hw = q.hw;
            match q.vm.fill(dst, pattern, len, &|| hw.stopped()) {
                Ok(true) => Outcome::Done,
                Ok(false) => Outcome::Interrupted,
                Err(f) => f.into(),
            }
        }
        op::TIMESTAMP if sub == 1 || sub == 2 => {
            match q.vm.store::<u64>(addr(p[1], p[2]) & !7, (q.clocks.gpu)()) {
                Ok(()) => Outcome::Done,
                Err(f) => f.into(),
            }
        }
        _ => Outcome::Error(QueueError::unsupported(format!(
            "SDMA {} sub-op {sub} not supported",
            op_name(op)
        ))),
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
        let head = match super::pm4::ring_dwords(q, base, size_dw, at_dw, HEAD_DW) {
            Ok(h) => h,
            Err(f) => {
                report::vm_fault(q, f);
                return Progress::Stopped;
            }
        };
        let Some(len) = packet_len(&head) else {
            let e = QueueError::unsupported(format!(
                "SDMA {} sub-op {} not supported",
                op_name(head[0] & 0xFF),
                (head[0] >> 8) & 0xFF
            ));
            report::queue_error(q, &e);
            return Progress::Stopped;
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
        let o = execute(q, &p);
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

#[cfg(test)]
mod tests {
    use super::copy_count_mask;

    #[test]
    fn copy_count_width_per_asic() {
        let wide = (1 << 30) - 1;
        let narrow = (1 << 22) - 1;
        for v in [
            90010, 90400, 90402, 90500, 100300, 100302, 110000, 110501, 120001,
        ] {
            assert_eq!(copy_count_mask(v), wide, "gfx{v}");
        }
        for v in [90000, 90006, 90008, 90009, 100100, 100102] {
            assert_eq!(copy_count_mask(v), narrow, "gfx{v}");
        }
    }
}
