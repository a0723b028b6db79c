//! The CP's PM4 parser: compute queues (`KFD_IOC_QUEUE_TYPE_COMPUTE`) and
//! the indirect buffers AQL vendor-specific packets point at.
//!
//! Packets (the MEC encodings of gfx9+ in `kfd_sys::pm4`, decoded there
//! into `Pm4Packet`): type-3 `NOP`, `INDIRECT_BUFFER`,
//! `ACQUIRE_MEM` (7 dwords on gfx9, 8 with `GCR_CNTL` on gfx10+; the
//! header's count gives the length either way), `RELEASE_MEM` (data write
//! and end-of-pipe interrupt), `WRITE_DATA`, `WAIT_REG_MEM` (memory form),
//! `EVENT_WRITE`, `COPY_DATA`; `SET_SH_REG`-style register state is
//! accepted and ignored, `DISPATCH_DIRECT`/`DISPATCH_INDIRECT` are refused
//! (no register state is kept for PM4 dispatches). Type-2 packets and the
//! one-dword type-3 `NOP` (count 0x3FFF) are fillers. Anything else stops the queue with an
//! error.
//!
//! Ring pointers (gfx9+): the write pointer is a 64-bit monotonic dword
//! count; the read pointer the CP writes back is the 32-bit dword offset
//! into the ring.

use kfd_sys::packet::{CompareFunction, PacketError};
use kfd_sys::pm4::{
    self, Pm4Header, Pm4Packet, ReleaseData, ReleaseInterrupt, PM4_COPY_DATA,
    PM4_COPY_DATA_SRC_GPU_CLOCK, PM4_COPY_DATA_SRC_IMMEDIATE, PM4_COPY_DATA_SRC_MEMORY,
    PM4_COPY_DATA_SRC_SYSTEM_CLOCK, PM4_COPY_DATA_SRC_TC_L2, PM4_DST_SEL_MEMORY,
    PM4_DST_SEL_MEMORY_SYNC, PM4_DST_SEL_TC_L2, PM4_MEC_RELEASE_MEM, PM4_MEC_WAIT_REG_MEM,
    PM4_MEC_WRITE_DATA, PM4_TYPE_2, PM4_WAIT_REG_MEM_SPACE_MEMORY,
};
use zerocopy::IntoBytes;

use super::report::{self, interrupt, Outcome, QueueError};
use super::{Progress, QueueCtx};

/// The packet length `header` gives, in dwords (`Err`: a type 0 or 1
/// header).
pub(crate) fn packet_len(header: u32) -> Result<u64, PacketError> {
    Pm4Header(header).packet_dwords().map(|l| l as u64)
}

fn opcode_name(op: u32) -> String {
    pm4::opcode_name(op).map_or_else(|| format!("opcode {op:#04x}"), str::to_string)
}

/// True when the destination select writes memory (the register and GDS
/// destinations are not modelled).
fn memory_dst(dst_sel: u32) -> bool {
    matches!(
        dst_sel,
        PM4_DST_SEL_MEMORY_SYNC | PM4_DST_SEL_TC_L2 | PM4_DST_SEL_MEMORY
    )
}

/// `WAIT_REG_MEM`/`POLL_REGMEM` compare functions (`None`: the reserved
/// value 7).
pub(crate) fn compare(function: u32, value: u32, reference: u32) -> Option<bool> {
    use CompareFunction::*;
    Some(match CompareFunction::from_bits(function)? {
        Always => true,
        Less => value < reference,
        LessEqual => value <= reference,
        Equal => value == reference,
        NotEqual => value != reference,
        GreaterEqual => value >= reference,
        Greater => value > reference,
    })
}

/// Executes one PM4 packet (`packet` is all of it, header first). `in_ib`
/// is true inside an indirect buffer, where a further `INDIRECT_BUFFER`
/// is not allowed.
pub(crate) fn execute(q: &mut QueueCtx, packet: &[u32], in_ib: bool) -> Outcome {
    let h = Pm4Header(packet.first().copied().unwrap_or_default());
    if h.packet_type() == PM4_TYPE_2 {
        return Outcome::Done;
    }
    let op = h.opcode();
    q.trace_packet(|| format!("{} ({} dw)", opcode_name(op), packet.len()));
    let p = match Pm4Packet::decode(packet) {
        Ok(p) => p,
        Err(e) => return Outcome::Error(QueueError::unsupported(e.to_string())),
    };
    match p {
        Pm4Packet::Type2
        | Pm4Packet::Nop
        | Pm4Packet::AcquireMem
        | Pm4Packet::EventWrite
        | Pm4Packet::SetRegister(_) => Outcome::Done,
        Pm4Packet::WriteData(w, data) => write_data(q, &w, data),
        Pm4Packet::ReleaseMem(r) => release_mem(q, &r),
        Pm4Packet::WaitRegMem(w) => wait_reg_mem(q, &w),
        Pm4Packet::CopyData(c) => copy_data(q, &c),
        Pm4Packet::IndirectBuffer(ib) if !in_ib => run_ib(q, ib.ib_base(), ib.ib_size()),
        Pm4Packet::Dispatch(op) => Outcome::Error(QueueError::no_isa(format!(
            "{} refused (PM4 dispatches are not modelled: they need the COMPUTE_* \
                 register state, which SET_SH_REG does not keep)",
            opcode_name(op)
        ))),
        Pm4Packet::IndirectBuffer(_) | Pm4Packet::Other(_) => {
            Outcome::Error(QueueError::unsupported(format!(
                "{}{} not supported",
                opcode_name(op),
                if in_ib { " in an indirect buffer" } else { "" }
            )))
        }
    }
}

fn write_data(q: &mut QueueCtx, w: &PM4_MEC_WRITE_DATA, data: &[u32]) -> Outcome {
    let dst_sel = w.dst_sel();
    if !memory_dst(dst_sel) {
        return Outcome::Error(QueueError::unsupported(format!(
            "WRITE_DATA to dst_sel {dst_sel} (registers/GDS are not modelled)"
        )));
    }
    let dst = w.dst();
    for (i, v) in data.iter().enumerate() {
        let at = if w.no_increment() {
            dst
        } else {
            dst + 4 * i as u64
        };
        if let Err(f) = q.vm.store::<u32>(at, *v) {
            return f.into();
        }
    }
    Outcome::Done
}

fn release_mem(q: &mut QueueCtx, r: &PM4_MEC_RELEASE_MEM) -> Outcome {
    let (dst, data) = (r.addr(), r.data());
    let written = match ReleaseData::from_bits(r.data_sel()) {
        Some(ReleaseData::NoData) => Ok(()),
        Some(ReleaseData::Low32) => q.vm.store::<u32>(dst, r.data_lo),
        Some(ReleaseData::Data64) => q.vm.store::<u64>(dst, data),
        Some(ReleaseData::GpuClock) => q.vm.store::<u64>(dst, (q.clocks.gpu)()),
        None => {
            return Outcome::Error(QueueError::unsupported(format!(
                "RELEASE_MEM data_sel {} not supported",
                r.data_sel()
            )))
        }
    };
    if let Err(f) = written {
        return f.into();
    }
    use ReleaseInterrupt::*;
    let send = match ReleaseInterrupt::from_bits(r.int_sel()) {
        Some(Send | AfterWriteConfirm | CtxIdAlways) => true,
        Some(CtxIdIfEqual32) => match q.vm.load::<u32>(dst) {
            // Conditionally on the written data matching cmp_data.
            Ok(v) => v == r.data_lo,
            Err(f) => return f.into(),
        },
        Some(CtxIdIfEqual64) => match q.vm.load::<u64>(dst) {
            Ok(v) => v == data,
            Err(f) => return f.into(),
        },
        _ => false,
    };
    if send {
        interrupt(q, r.int_ctxid, 32);
    }
    Outcome::Done
}

fn wait_reg_mem(q: &mut QueueCtx, w: &PM4_MEC_WAIT_REG_MEM) -> Outcome {
    let function = w.function();
    if w.mem_space() != PM4_WAIT_REG_MEM_SPACE_MEMORY {
        // A register poll: no register is modelled, the condition holds.
        return Outcome::Done;
    }
    let value = match q.vm.load::<u32>(w.addr()) {
        Ok(v) => v & w.mask,
        Err(f) => return f.into(),
    };
    match compare(function, value, w.reference) {
        Some(true) => Outcome::Done,
        Some(false) => Outcome::Blocked,
        None => Outcome::Error(QueueError::unsupported(format!(
            "WAIT_REG_MEM function {function}"
        ))),
    }
}

fn copy_data(q: &mut QueueCtx, c: &PM4_COPY_DATA) -> Outcome {
    let (src_sel, dst_sel, wide) = (c.src_sel(), c.dst_sel(), c.wide_count());
    let align_mask = if wide { !7 } else { !3 };
    let value = match src_sel {
        PM4_COPY_DATA_SRC_MEMORY | PM4_COPY_DATA_SRC_TC_L2 => {
            let src = c.src() & align_mask;
            let r = if wide {
                q.vm.load::<u64>(src)
            } else {
                q.vm.load::<u32>(src).map(u64::from)
            };
            match r {
                Ok(v) => v,
                Err(f) => return f.into(),
            }
        }
        PM4_COPY_DATA_SRC_IMMEDIATE => c.src(),
        PM4_COPY_DATA_SRC_GPU_CLOCK => (q.clocks.gpu)(),
        PM4_COPY_DATA_SRC_SYSTEM_CLOCK => (q.clocks.system)(),
        _ => {
            return Outcome::Error(QueueError::unsupported(format!(
                "COPY_DATA from src_sel {src_sel} (registers/GDS/perfcounters are not modelled)"
            )))
        }
    };
    if !memory_dst(dst_sel) {
        return Outcome::Error(QueueError::unsupported(format!(
            "COPY_DATA to dst_sel {dst_sel} (registers/GDS/perfcounters are not modelled)"
        )));
    }
    let dst = c.dst() & align_mask;
    let r = if wide {
        q.vm.store::<u64>(dst, value)
    } else {
        q.vm.store::<u32>(dst, value as u32)
    };
    match r {
        Ok(()) => Outcome::Done,
        Err(f) => f.into(),
    }
}

/// Runs the indirect buffer of `size` dwords at `base`, resuming at the
/// packet that blocked last time.
fn run_ib(q: &mut QueueCtx, base: u64, size: u32) -> Outcome {
    let mut ib = vec![0u32; size as usize];
    if let Err(f) = q.vm.read(base, ib.as_mut_bytes()) {
        return f.into();
    }
    let size = u64::from(size);
    let mut pos = q.run.ib_pos.take().unwrap_or(0);
    q.trace_packet(|| format!("IB {base:#x} {size} dw from dw {pos}"));
    while pos < size {
        let h = ib[pos as usize];
        let Some(len) = packet_len(h).ok().filter(|l| pos + l <= size) else {
            return Outcome::Error(QueueError::unsupported(format!(
                "bad PM4 header {h:#010x} at IB dw {pos}"
            )));
        };
        match execute(q, &ib[pos as usize..(pos + len) as usize], true) {
            Outcome::Done => {
                q.run.blocked = false;
                pos += len;
            }
            Outcome::Blocked => {
                q.run.ib_pos = Some(pos);
                return Outcome::Blocked;
            }
            other => return other,
        }
    }
    Outcome::Done
}

/// Reads `n` dwords of the ring starting at dword index `at` (wrapping).
pub(crate) fn ring_dwords(
    q: &mut QueueCtx,
    base: u64,
    size_dw: u64,
    at: u64,
    n: u64,
) -> Result<Vec<u32>, crate::mem::Fault> {
    let mut out = Vec::with_capacity(n as usize);
    let mut i = 0;
    while i < n {
        let pos = (at + i) % size_dw;
        let run = (n - i).min(size_dw - pos);
        let mut b = vec![0u8; run as usize * 4];
        q.vm.read(base + pos * 4, &mut b)?;
        out.extend(
            b.chunks_exact(4)
                .map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]])),
        );
        i += run;
    }
    Ok(out)
}

/// One step of a PM4 compute queue: the packets between the read index
/// and the write pointer, up to `budget`.
pub(crate) fn step(q: &mut QueueCtx, budget: u32) -> Progress {
    let (base, size_dw) = (q.run.ring_base, q.run.ring_size / 4);
    if base == 0 || size_dw == 0 {
        return Progress::Stopped;
    }
    let Some((wptr, mut read)) = q.ring_pointers() else {
        return Progress::Stopped;
    };
    let mut ran = 0;
    while read < wptr && ran < budget {
        let h = match ring_dwords(q, base, size_dw, read, 1) {
            Ok(v) => v[0],
            Err(f) => {
                report::vm_fault(q, f);
                return Progress::Stopped;
            }
        };
        let len = match packet_len(h) {
            Ok(len) => len,
            Err(e) => {
                report::queue_error(q, &QueueError::unsupported(e.to_string()));
                return Progress::Stopped;
            }
        };
        if read + len > wptr {
            // Not all of it is submitted yet.
            break;
        }
        let packet = match ring_dwords(q, base, size_dw, read, len) {
            Ok(p) => p,
            Err(f) => {
                report::vm_fault(q, f);
                return Progress::Stopped;
            }
        };
        let o = execute(q, &packet, false);
        if let Err(progress) = q.settle(o, ran) {
            return progress;
        }
        read += len;
        q.packet_done(read);
        ran += 1;
        if let Err(f) = q.vm.store::<u32>(q.hw.rptr, (read % size_dw) as u32) {
            report::vm_fault(q, f);
            return Progress::Stopped;
        }
    }
    Progress::after(ran)
}
