//! The CP's PM4 parser: compute queues (`KFD_IOC_QUEUE_TYPE_COMPUTE`) and
//! the indirect buffers AQL vendor-specific packets point at.
//!
//! Packets (MEC encodings of gfx9+, `pm4_pkt_struct_*.h` of kfdtest and
//! the kernel's `soc15d.h`): type-3 `NOP`, `INDIRECT_BUFFER`,
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

use super::report::{self, interrupt, Outcome, QueueError};
use super::{Progress, QueueCtx};

/// `IT_*` opcodes.
mod it {
    pub const NOP: u32 = 0x10;
    pub const DISPATCH_DIRECT: u32 = 0x15;
    pub const DISPATCH_INDIRECT: u32 = 0x16;
    pub const WRITE_DATA: u32 = 0x37;
    pub const WAIT_REG_MEM: u32 = 0x3C;
    pub const INDIRECT_BUFFER: u32 = 0x3F;
    pub const COPY_DATA: u32 = 0x40;
    pub const EVENT_WRITE: u32 = 0x46;
    pub const RELEASE_MEM: u32 = 0x49;
    pub const ACQUIRE_MEM: u32 = 0x58;
    pub const SET_CONFIG_REG: u32 = 0x68;
    pub const SET_SH_REG: u32 = 0x76;
    pub const SET_SH_REG_OFFSET: u32 = 0x77;
    pub const SET_UCONFIG_REG: u32 = 0x79;
}

/// Largest indirect buffer (the 20-bit `IB_SIZE` field, in dwords).
const IB_MAX_DW: u64 = 0xF_FFFF;

/// The packet starting with header `h`: its length in dwords, or `None`
/// for a header the CP does not parse (type 0 and 1).
pub(crate) fn packet_len(h: u32) -> Option<u64> {
    match h >> 30 {
        2 => Some(1),
        3 => {
            let count = u64::from((h >> 16) & 0x3FFF);
            // A NOP with the largest count is a one-dword filler.
            if (h >> 8) & 0xFF == it::NOP && count == 0x3FFF {
                Some(1)
            } else {
                Some(count + 2)
            }
        }
        _ => None,
    }
}

fn opcode_name(op: u32) -> String {
    let n = match op {
        it::NOP => "NOP",
        it::DISPATCH_DIRECT => "DISPATCH_DIRECT",
        it::DISPATCH_INDIRECT => "DISPATCH_INDIRECT",
        it::WRITE_DATA => "WRITE_DATA",
        it::WAIT_REG_MEM => "WAIT_REG_MEM",
        it::INDIRECT_BUFFER => "INDIRECT_BUFFER",
        it::COPY_DATA => "COPY_DATA",
        it::EVENT_WRITE => "EVENT_WRITE",
        it::RELEASE_MEM => "RELEASE_MEM",
        it::ACQUIRE_MEM => "ACQUIRE_MEM",
        it::SET_CONFIG_REG => "SET_CONFIG_REG",
        it::SET_SH_REG => "SET_SH_REG",
        it::SET_SH_REG_OFFSET => "SET_SH_REG_OFFSET",
        it::SET_UCONFIG_REG => "SET_UCONFIG_REG",
        _ => return format!("opcode {op:#04x}"),
    };
    n.to_string()
}

fn addr(lo: u32, hi: u32, align: u64) -> u64 {
    (u64::from(lo) | u64::from(hi) << 32) & !(align - 1)
}

/// `WAIT_REG_MEM`/`POLL_REGMEM` compare functions.
pub(crate) fn compare(function: u32, value: u32, reference: u32) -> Option<bool> {
    Some(match function {
        0 => true,
        1 => value < reference,
        2 => value <= reference,
        3 => value == reference,
        4 => value != reference,
        5 => value >= reference,
        6 => value > reference,
        _ => return None,
    })
}

/// Executes one PM4 packet (`body` is everything after the header).
/// `in_ib` is true inside an indirect buffer, where a further
/// `INDIRECT_BUFFER` is not allowed.
pub(crate) fn execute(q: &mut QueueCtx, h: u32, body: &[u32], in_ib: bool) -> Outcome {
    if h >> 30 == 2 {
        return Outcome::Done;
    }
    let op = (h >> 8) & 0xFF;
    let dw = |i: usize| body.get(i).copied().unwrap_or(0);
    q.trace_packet(|| format!("{} ({} dw)", opcode_name(op), body.len() + 1));
    match op {
        it::NOP
        | it::ACQUIRE_MEM
        | it::EVENT_WRITE
        | it::SET_CONFIG_REG
        | it::SET_SH_REG
        | it::SET_SH_REG_OFFSET
        | it::SET_UCONFIG_REG => Outcome::Done,
        it::WRITE_DATA => write_data(q, body),
        it::RELEASE_MEM => release_mem(q, body),
        it::WAIT_REG_MEM => wait_reg_mem(q, body),
        it::COPY_DATA => copy_data(q, body),
        it::INDIRECT_BUFFER if !in_ib => {
            let base = addr(dw(0), dw(1) & 0xFFFF, 4);
            let size = u64::from(dw(2) & 0xF_FFFF);
            run_ib(q, base, size)
        }
        it::DISPATCH_DIRECT | it::DISPATCH_INDIRECT => Outcome::Error(QueueError::no_isa(format!(
            "{} refused (PM4 dispatches are not modelled: they need the COMPUTE_* \
                 register state, which SET_SH_REG does not keep)",
            opcode_name(op)
        ))),
        _ => Outcome::Error(QueueError::unsupported(format!(
            "{}{} not supported",
            opcode_name(op),
            if in_ib { " in an indirect buffer" } else { "" }
        ))),
    }
}

fn write_data(q: &mut QueueCtx, body: &[u32]) -> Outcome {
    if body.len() < 3 {
        return Outcome::Error(QueueError::unsupported("short WRITE_DATA".into()));
    }
    let dst_sel = (body[0] >> 8) & 0xF;
    let no_incr = body[0] & (1 << 16) != 0;
    if !matches!(dst_sel, 1 | 2 | 5) {
        return Outcome::Error(QueueError::unsupported(format!(
            "WRITE_DATA to dst_sel {dst_sel} (registers/GDS are not modelled)"
        )));
    }
    let dst = addr(body[1], body[2], 4);
    for (i, v) in body[3..].iter().enumerate() {
        let at = if no_incr { dst } else { dst + 4 * i as u64 };
        if let Err(f) = q.vm.store::<u32>(at, *v) {
            return f.into();
        }
    }
    Outcome::Done
}

fn release_mem(q: &mut QueueCtx, body: &[u32]) -> Outcome {
    if body.len() < 7 {
        return Outcome::Error(QueueError::unsupported("short RELEASE_MEM".into()));
    }
    let int_sel = (body[1] >> 24) & 7;
    let data_sel = (body[1] >> 29) & 7;
    let dst = addr(body[2], body[3], 4);
    let data = u64::from(body[4]) | u64::from(body[5]) << 32;
    let r = match data_sel {
        0 => Ok(()),
        1 => q.vm.store::<u32>(dst, body[4]),
        2 => q.vm.store::<u64>(dst, data),
        3 => q.vm.store::<u64>(dst, (q.clocks.gpu)()),
        _ => {
            return Outcome::Error(QueueError::unsupported(format!(
                "RELEASE_MEM data_sel {data_sel} not supported"
            )))
        }
    };
    if let Err(f) = r {
        return f.into();
    }
    let send = match int_sel {
        1 | 2 | 4 => true,
        5 | 6 => {
            // Conditionally on the written data matching cmp_data.
            let cur = if int_sel == 5 {
                q.vm.load::<u32>(dst).map(u64::from)
            } else {
                q.vm.load::<u64>(dst)
            };
            match cur {
                Ok(v) => {
                    v == if int_sel == 5 {
                        data & 0xFFFF_FFFF
                    } else {
                        data
                    }
                }
                Err(f) => return f.into(),
            }
        }
        _ => false,
    };
    if send {
        interrupt(q, body[6], 32);
    }
    Outcome::Done
}

fn wait_reg_mem(q: &mut QueueCtx, body: &[u32]) -> Outcome {
    if body.len() < 6 {
        return Outcome::Error(QueueError::unsupported("short WAIT_REG_MEM".into()));
    }
    let function = body[0] & 7;
    let mem_space = (body[0] >> 4) & 3;
    if mem_space != 1 {
        // A register poll: no register is modelled, the condition holds.
        return Outcome::Done;
    }
    let at = addr(body[1], body[2], 4);
    let value = match q.vm.load::<u32>(at) {
        Ok(v) => v & body[4],
        Err(f) => return f.into(),
    };
    match compare(function, value, body[3]) {
        Some(true) => Outcome::Done,
        Some(false) => Outcome::Blocked,
        None => Outcome::Error(QueueError::unsupported(format!(
            "WAIT_REG_MEM function {function}"
        ))),
    }
}

fn copy_data(q: &mut QueueCtx, body: &[u32]) -> Outcome {
    if body.len() < 5 {
        return Outcome::Error(QueueError::unsupported("short COPY_DATA".into()));
    }
    let src_sel = body[0] & 0xF;
    let dst_sel = (body[0] >> 8) & 0xF;
    let wide = body[0] & (1 << 16) != 0;
    let value = match src_sel {
        1 | 2 => {
            let src = addr(body[1], body[2], if wide { 8 } else { 4 });
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
        5 => u64::from(body[1]) | u64::from(body[2]) << 32,
        9 => (q.clocks.gpu)(),
        10 => (q.clocks.system)(),
        _ => {
            return Outcome::Error(QueueError::unsupported(format!(
                "COPY_DATA from src_sel {src_sel} (registers/GDS/perfcounters are not modelled)"
            )))
        }
    };
    if !matches!(dst_sel, 1 | 2 | 5) {
        return Outcome::Error(QueueError::unsupported(format!(
            "COPY_DATA to dst_sel {dst_sel} (registers/GDS/perfcounters are not modelled)"
        )));
    }
    let dst = addr(body[3], body[4], if wide { 8 } else { 4 });
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
pub(crate) fn run_ib(q: &mut QueueCtx, base: u64, size: u64) -> Outcome {
    if size > IB_MAX_DW {
        return Outcome::Error(QueueError::unsupported(format!("IB of {size} dwords")));
    }
    let mut ib = vec![0u8; size as usize * 4];
    if let Err(f) = q.vm.read(base, &mut ib) {
        return f.into();
    }
    let dws: Vec<u32> = ib
        .chunks_exact(4)
        .map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let mut pos = q.run.ib_pos.take().unwrap_or(0);
    q.trace_packet(|| format!("IB {base:#x} {size} dw from dw {pos}"));
    while pos < size {
        let h = dws[pos as usize];
        let Some(len) = packet_len(h).filter(|l| pos + l <= size) else {
            return Outcome::Error(QueueError::unsupported(format!(
                "bad PM4 header {h:#010x} at IB dw {pos}"
            )));
        };
        let body = &dws[pos as usize + 1..(pos + len) as usize];
        match execute(q, h, body, true) {
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
        let Some(len) = packet_len(h) else {
            let e = QueueError::unsupported(format!("bad PM4 header {h:#010x}"));
            report::queue_error(q, &e);
            return Progress::Stopped;
        };
        if read + len > wptr {
            // Not all of it is submitted yet.
            break;
        }
        let body = match ring_dwords(q, base, size_dw, read + 1, len - 1) {
            Ok(b) => b,
            Err(f) => {
                report::vm_fault(q, f);
                return Progress::Stopped;
            }
        };
        let o = execute(q, h, &body, false);
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
