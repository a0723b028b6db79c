//! SDMA packets of the user-mode SDMA queues (`KFD_IOC_QUEUE_TYPE_SDMA`,
//! `SDMA_XGMI`, `SDMA_BY_ENG_ID`) on gfx9 and later: the "SDMA v4"
//! encodings of amdgpu's `vega10_sdma_pkt_open.h` (sdma_v4_0), ROCr's
//! `sdma_registers.h` (`amd_blit_sdma`) and kfdtest's `sdma_pkt_struct.h`.
//!
//! Every packet starts with a header dword: the op in bits 7:0, the
//! sub-op in bits 15:8 ([`SdmaHeader`]), op-specific fields above. Each
//! fixed-size packet is a `#[repr(C)]` struct of dwords, named as the C
//! headers name it, with a constructor for producers and a byte view
//! ([`zerocopy::IntoBytes::as_bytes`]) and dword view
//! ([`Dwords::dwords`]) to copy into a ring. `WRITE` carries a payload:
//! its struct is the 4-dword head, and [`write()`] builds the whole
//! packet. [`SdmaPacket::decode`] is the other direction, for the engine
//! that consumes the ring: [`packet_dwords`] says how long the packet
//! at the read pointer is from its first [`HEAD_DWORDS`] dwords.
//!
//! No C header of these formats is shipped by Debian (the kernel's are
//! not in linux-libc-dev, ROCr's and kfdtest's are not installed):
//! `tests/layout_packets.rs` pins the layouts by hand, naming the source.

// The C headers' names (`SDMA_PKT_COPY_LINEAR`).
#![allow(non_camel_case_types)]

use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

use crate::packet::{dword_packet, join, read, split, CompareFunction, Dwords, PacketError};

/// `SDMA_OP_NOP`: no operation; the header's count says how many dwords
/// follow (ignored).
pub const SDMA_OP_NOP: u32 = 0;
/// `SDMA_OP_COPY`: copies (sub-op [`SDMA_SUBOP_COPY_LINEAR`]).
pub const SDMA_OP_COPY: u32 = 1;
/// `SDMA_OP_WRITE`: writes the packet's payload (sub-op
/// [`SDMA_SUBOP_WRITE_LINEAR`]).
pub const SDMA_OP_WRITE: u32 = 2;
/// `SDMA_OP_FENCE`: writes a value to memory once the packets before it
/// completed.
pub const SDMA_OP_FENCE: u32 = 5;
/// `SDMA_OP_TRAP`: raises an interrupt with a context id.
pub const SDMA_OP_TRAP: u32 = 6;
/// `SDMA_OP_POLL_REGMEM`: waits until a register or memory value
/// compares true.
pub const SDMA_OP_POLL_REGMEM: u32 = 8;
/// `SDMA_OP_ATOMIC`: an atomic operation on memory.
pub const SDMA_OP_ATOMIC: u32 = 10;
/// `SDMA_OP_CONST_FILL`: fills memory with a constant.
pub const SDMA_OP_CONST_FILL: u32 = 11;
/// `SDMA_OP_TIMESTAMP`: timestamp operations.
pub const SDMA_OP_TIMESTAMP: u32 = 13;
/// `SDMA_OP_GCR` (gfx10+ `GCR_REQ`): cache control.
pub const SDMA_OP_GCR: u32 = 17;

/// `SDMA_SUBOP_COPY_LINEAR`.
pub const SDMA_SUBOP_COPY_LINEAR: u32 = 0;
/// `SDMA_SUBOP_WRITE_LINEAR` (an untiled write).
pub const SDMA_SUBOP_WRITE_LINEAR: u32 = 0;
/// `SDMA_SUBOP_FENCE_64B`: a fence writing 64 bits (newer SDMA
/// microcode, ROCr's `SDMA_PKT_FENCE_64B`); 5 dwords.
pub const SDMA_SUBOP_FENCE_64B: u32 = 2;
/// `SDMA_SUBOP_TIMESTAMP_GET`: writes the engine's local counter.
pub const SDMA_SUBOP_TIMESTAMP_GET: u32 = 1;
/// `SDMA_SUBOP_TIMESTAMP_GET_GLOBAL`: writes the global GPU counter.
pub const SDMA_SUBOP_TIMESTAMP_GET_GLOBAL: u32 = 2;
/// `SDMA_SUBOP_USER_GCR`: the GCR sub-op ROCr sends.
pub const SDMA_SUBOP_USER_GCR: u32 = 1;

/// `SDMA_ATOMIC_ADD64`: the `ATOMIC` operation that adds a 64-bit value.
pub const SDMA_ATOMIC_ADD64: u32 = 47;

/// `NOP` header: bit offset of the count of dwords that follow (14 bits).
pub const SDMA_NOP_COUNT_SHIFT: u32 = 16;
/// `NOP` header: mask of the count (after the shift).
pub const SDMA_NOP_COUNT_MASK: u32 = 0x3FFF;
/// `CONST_FILL` header: bit offset of `fillsize` (2 bits).
pub const SDMA_CONST_FILL_FILLSIZE_SHIFT: u32 = 30;
/// `CONST_FILL` `fillsize`: one byte of the data is the pattern.
pub const SDMA_CONST_FILL_FILLSIZE_BYTE: u32 = 0;
/// `CONST_FILL` `fillsize`: the whole data dword is the pattern.
pub const SDMA_CONST_FILL_FILLSIZE_DWORD: u32 = 2;
/// `POLL_REGMEM` header: bit offset of `func` ([`CompareFunction`], 3
/// bits).
pub const SDMA_POLL_REGMEM_FUNC_SHIFT: u32 = 28;
/// `POLL_REGMEM` header: `mem_poll`, set for a memory poll (clear: a
/// register poll).
pub const SDMA_POLL_REGMEM_MEM_POLL: u32 = 1 << 31;
/// `POLL_REGMEM` dword 5: bit offset of `retry_count` (12 bits; the
/// interval is bits 15:0).
pub const SDMA_POLL_REGMEM_RETRY_COUNT_SHIFT: u32 = 16;
/// `ATOMIC` header: bit offset of `operation` (7 bits).
pub const SDMA_ATOMIC_OPERATION_SHIFT: u32 = 25;
/// `TRAP` dword 1: the valid bits of the interrupt context (28).
pub const SDMA_TRAP_INT_CTX_MASK: u32 = 0x0FFF_FFFF;
/// `WRITE` dword 3: mask of the count (dwords − 1; 22 bits on SDMA v4).
pub const SDMA_WRITE_COUNT_MASK: u32 = 0x3F_FFFF;

/// `COPY_LINEAR` and `CONST_FILL` count mask on the parts whose count
/// field is 22 bits wide: gfx9 other than gfx90a and gfx94x/gfx950, and
/// gfx10.1. Every SDMA v4+ engine takes counts of this width.
pub const SDMA_COUNT_MASK_22: u32 = (1 << 22) - 1;
/// `COPY_LINEAR` and `CONST_FILL` count mask on the parts with the 30-bit
/// field (`count_ext` in ROCr's header).
pub const SDMA_COUNT_MASK_30: u32 = (1 << 30) - 1;

/// The `COPY_LINEAR` (and `CONST_FILL`) count mask of a device by its
/// `gfx_target_version` (major·10000 + minor·100 + stepping): 30 bits on
/// gfx90a, gfx94x/gfx950, gfx10.3+ and gfx11/12; 22 bits on the other
/// gfx9 and gfx10.1 parts. ROCr's per-ASIC copy-size limit
/// (`GpuAgent::CreateBlitSdma`) says the same: ROCr 6.1.2 sends a single
/// 16 MiB `COPY_LINEAR` on gfx942.
pub fn copy_count_mask(gfx_target_version: u32) -> u32 {
    let (major, minor, stepping) = (
        gfx_target_version / 10000,
        gfx_target_version / 100 % 100,
        gfx_target_version % 100,
    );
    let wide = match major {
        9 => minor >= 4 || (minor == 0 && stepping == 10),
        10 => minor >= 3,
        m => m >= 11,
    };
    if wide {
        SDMA_COUNT_MASK_30
    } else {
        SDMA_COUNT_MASK_22
    }
}

/// The name of an SDMA op as this module knows it (`None`: unknown).
pub fn op_name(op: u32) -> Option<&'static str> {
    Some(match op {
        SDMA_OP_NOP => "NOP",
        SDMA_OP_COPY => "COPY_LINEAR",
        SDMA_OP_WRITE => "WRITE",
        SDMA_OP_FENCE => "FENCE",
        SDMA_OP_TRAP => "TRAP",
        SDMA_OP_POLL_REGMEM => "POLL_REGMEM",
        SDMA_OP_ATOMIC => "ATOMIC",
        SDMA_OP_CONST_FILL => "CONST_FILL",
        SDMA_OP_TIMESTAMP => "TIMESTAMP",
        SDMA_OP_GCR => "GCR",
        _ => return None,
    })
}

/// The header dword of every SDMA packet.
#[repr(transparent)]
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct SdmaHeader(pub u32);

impl SdmaHeader {
    /// A header of `op` and `sub_op` (each 8 bits) and the op-specific
    /// bits `extra` (bits 31:16 and any others the op defines).
    pub const fn new(op: u32, sub_op: u32, extra: u32) -> SdmaHeader {
        SdmaHeader((op & 0xFF) | (sub_op & 0xFF) << 8 | extra)
    }

    /// The op (bits 7:0).
    pub const fn op(self) -> u32 {
        self.0 & 0xFF
    }

    /// The sub-op (bits 15:8).
    pub const fn sub_op(self) -> u32 {
        (self.0 >> 8) & 0xFF
    }
}

/// `SDMA_PKT_NOP`: the header alone (`count` further dwords, if any,
/// are skipped).
#[repr(C)]
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct SDMA_PKT_NOP {
    /// Op [`SDMA_OP_NOP`]; count of following dwords in bits 29:16.
    pub header: SdmaHeader,
}

impl SDMA_PKT_NOP {
    /// A one-dword `NOP`.
    pub const fn new() -> SDMA_PKT_NOP {
        SDMA_PKT_NOP {
            header: SdmaHeader::new(SDMA_OP_NOP, 0, 0),
        }
    }

    /// Dwords after the header that belong to this `NOP`.
    pub const fn count(&self) -> u32 {
        (self.header.0 >> SDMA_NOP_COUNT_SHIFT) & SDMA_NOP_COUNT_MASK
    }
}

/// `SDMA_PKT_COPY_LINEAR`: copies `count + 1` bytes.
#[repr(C)]
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct SDMA_PKT_COPY_LINEAR {
    /// Op [`SDMA_OP_COPY`], sub-op [`SDMA_SUBOP_COPY_LINEAR`].
    pub header: SdmaHeader,
    /// Bytes − 1 (22 or 30 bits: [`copy_count_mask`]).
    pub count: u32,
    /// Endian swaps (`dst_sw` bits 17:16, `src_sw` bits 25:24).
    pub parameter: u32,
    /// Source address, bits 31:0.
    pub src_addr_lo: u32,
    /// Source address, bits 63:32.
    pub src_addr_hi: u32,
    /// Destination address, bits 31:0.
    pub dst_addr_lo: u32,
    /// Destination address, bits 63:32.
    pub dst_addr_hi: u32,
}

impl SDMA_PKT_COPY_LINEAR {
    /// A copy of `bytes` bytes from `src` to `dst`, for an engine whose
    /// count mask is `count_mask` ([`copy_count_mask`], or
    /// [`SDMA_COUNT_MASK_22`] for any engine). `Range` unless
    /// `1 <= bytes <= count_mask + 1`.
    pub fn new(
        src: u64,
        dst: u64,
        bytes: u64,
        count_mask: u32,
    ) -> Result<SDMA_PKT_COPY_LINEAR, PacketError> {
        PacketError::check_range(
            "COPY_LINEAR",
            "byte count",
            bytes,
            1,
            u64::from(count_mask) + 1,
        )?;
        let (src_addr_lo, src_addr_hi) = split(src);
        let (dst_addr_lo, dst_addr_hi) = split(dst);
        Ok(SDMA_PKT_COPY_LINEAR {
            header: SdmaHeader::new(SDMA_OP_COPY, SDMA_SUBOP_COPY_LINEAR, 0),
            count: (bytes - 1) as u32,
            parameter: 0,
            src_addr_lo,
            src_addr_hi,
            dst_addr_lo,
            dst_addr_hi,
        })
    }

    /// Bytes to copy, on an engine with count mask `count_mask`.
    pub fn bytes(&self, count_mask: u32) -> u64 {
        u64::from(self.count & count_mask) + 1
    }

    /// The source address.
    pub fn src(&self) -> u64 {
        join(self.src_addr_lo, self.src_addr_hi)
    }

    /// The destination address.
    pub fn dst(&self) -> u64 {
        join(self.dst_addr_lo, self.dst_addr_hi)
    }
}

/// `SDMA_PKT_CONSTANT_FILL`: fills memory with a byte or dword pattern.
#[repr(C)]
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct SDMA_PKT_CONSTANT_FILL {
    /// Op [`SDMA_OP_CONST_FILL`]; `fillsize` in bits 31:30.
    pub header: SdmaHeader,
    /// Destination address, bits 31:0.
    pub dst_addr_lo: u32,
    /// Destination address, bits 63:32.
    pub dst_addr_hi: u32,
    /// The pattern (`src_data_31_0`).
    pub data: u32,
    /// Bytes − 1 (the same width as `COPY_LINEAR`'s count).
    pub count: u32,
}

impl SDMA_PKT_CONSTANT_FILL {
    /// A fill of `bytes` bytes at `dst` with the dword `data`, for an
    /// engine whose count mask is `count_mask`. `Range` unless
    /// `1 <= bytes <= count_mask + 1`; `Misaligned` unless `bytes` is a
    /// multiple of 4.
    pub fn new(
        dst: u64,
        data: u32,
        bytes: u64,
        count_mask: u32,
    ) -> Result<SDMA_PKT_CONSTANT_FILL, PacketError> {
        PacketError::check_range(
            "CONST_FILL",
            "byte count",
            bytes,
            1,
            u64::from(count_mask) + 1,
        )?;
        PacketError::check_align("CONST_FILL", "byte count", bytes, 4)?;
        let (dst_addr_lo, dst_addr_hi) = split(dst);
        Ok(SDMA_PKT_CONSTANT_FILL {
            header: SdmaHeader::new(
                SDMA_OP_CONST_FILL,
                0,
                SDMA_CONST_FILL_FILLSIZE_DWORD << SDMA_CONST_FILL_FILLSIZE_SHIFT,
            ),
            dst_addr_lo,
            dst_addr_hi,
            data,
            count: (bytes - 1) as u32,
        })
    }

    /// `fillsize`: [`SDMA_CONST_FILL_FILLSIZE_BYTE`] or
    /// [`SDMA_CONST_FILL_FILLSIZE_DWORD`].
    pub const fn fillsize(&self) -> u32 {
        self.header.0 >> SDMA_CONST_FILL_FILLSIZE_SHIFT
    }

    /// The destination address.
    pub fn dst(&self) -> u64 {
        join(self.dst_addr_lo, self.dst_addr_hi)
    }
}

/// `SDMA_PKT_WRITE_UNTILED`: the head of a linear write; `count + 1`
/// data dwords follow it.
#[repr(C)]
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct SDMA_PKT_WRITE_UNTILED {
    /// Op [`SDMA_OP_WRITE`], sub-op [`SDMA_SUBOP_WRITE_LINEAR`].
    pub header: SdmaHeader,
    /// Destination address, bits 31:0.
    pub dst_addr_lo: u32,
    /// Destination address, bits 63:32.
    pub dst_addr_hi: u32,
    /// Data dwords − 1 in bits 21:0 ([`SDMA_WRITE_COUNT_MASK`]); `sw`
    /// (swap) in bits 25:24.
    pub count: u32,
}

impl SDMA_PKT_WRITE_UNTILED {
    /// The head of a write of `data_dwords` dwords to `dst`. `Range`
    /// unless `1 <= data_dwords <= 2^22`.
    pub fn new(dst: u64, data_dwords: usize) -> Result<SDMA_PKT_WRITE_UNTILED, PacketError> {
        PacketError::check_range(
            "WRITE",
            "data dwords",
            data_dwords as u64,
            1,
            u64::from(SDMA_WRITE_COUNT_MASK) + 1,
        )?;
        let (dst_addr_lo, dst_addr_hi) = split(dst);
        Ok(SDMA_PKT_WRITE_UNTILED {
            header: SdmaHeader::new(SDMA_OP_WRITE, SDMA_SUBOP_WRITE_LINEAR, 0),
            dst_addr_lo,
            dst_addr_hi,
            count: (data_dwords - 1) as u32,
        })
    }

    /// Data dwords that follow the head.
    pub const fn data_dwords(&self) -> usize {
        (self.count & SDMA_WRITE_COUNT_MASK) as usize + 1
    }

    /// The destination address.
    pub fn dst(&self) -> u64 {
        join(self.dst_addr_lo, self.dst_addr_hi)
    }
}

/// A whole `WRITE` packet: the head and `data`.
pub fn write(dst: u64, data: &[u32]) -> Result<Vec<u32>, PacketError> {
    let head = SDMA_PKT_WRITE_UNTILED::new(dst, data.len())?;
    Ok([head.dwords(), data].concat())
}

/// `SDMA_PKT_FENCE`: writes a dword once the packets before it are done.
#[repr(C)]
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct SDMA_PKT_FENCE {
    /// Op [`SDMA_OP_FENCE`]; `mtype`, `gcc`, `sys`, `snp`, `gpa`,
    /// `l2_policy` in bits 25:16.
    pub header: SdmaHeader,
    /// Address, bits 31:0.
    pub addr_lo: u32,
    /// Address, bits 63:32.
    pub addr_hi: u32,
    /// The value written.
    pub data: u32,
}

impl SDMA_PKT_FENCE {
    /// A fence writing `data` to `addr`.
    pub fn new(addr: u64, data: u32) -> SDMA_PKT_FENCE {
        let (addr_lo, addr_hi) = split(addr);
        SDMA_PKT_FENCE {
            header: SdmaHeader::new(SDMA_OP_FENCE, 0, 0),
            addr_lo,
            addr_hi,
            data,
        }
    }

    /// The address written.
    pub fn addr(&self) -> u64 {
        join(self.addr_lo, self.addr_hi)
    }
}

/// `SDMA_PKT_FENCE_64B` (sub-op [`SDMA_SUBOP_FENCE_64B`]): writes 64 bits.
#[repr(C)]
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct SDMA_PKT_FENCE_64B {
    /// Op [`SDMA_OP_FENCE`], sub-op [`SDMA_SUBOP_FENCE_64B`].
    pub header: SdmaHeader,
    /// Address, bits 31:0.
    pub addr_lo: u32,
    /// Address, bits 63:32.
    pub addr_hi: u32,
    /// The value written, bits 31:0.
    pub data_lo: u32,
    /// The value written, bits 63:32.
    pub data_hi: u32,
}

impl SDMA_PKT_FENCE_64B {
    /// A fence writing the 64-bit `data` to `addr`.
    pub fn new(addr: u64, data: u64) -> SDMA_PKT_FENCE_64B {
        let (addr_lo, addr_hi) = split(addr);
        let (data_lo, data_hi) = split(data);
        SDMA_PKT_FENCE_64B {
            header: SdmaHeader::new(SDMA_OP_FENCE, SDMA_SUBOP_FENCE_64B, 0),
            addr_lo,
            addr_hi,
            data_lo,
            data_hi,
        }
    }

    /// The address written.
    pub fn addr(&self) -> u64 {
        join(self.addr_lo, self.addr_hi)
    }

    /// The value written.
    pub fn data(&self) -> u64 {
        join(self.data_lo, self.data_hi)
    }
}

/// `SDMA_PKT_TRAP`: raises an interrupt whose context is `int_ctx`.
#[repr(C)]
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct SDMA_PKT_TRAP {
    /// Op [`SDMA_OP_TRAP`].
    pub header: SdmaHeader,
    /// The interrupt context in bits 27:0 (KFD: an event id).
    pub int_ctx: u32,
}

impl SDMA_PKT_TRAP {
    /// A trap with context `int_ctx`. `Range` unless it fits 28 bits.
    pub fn new(int_ctx: u32) -> Result<SDMA_PKT_TRAP, PacketError> {
        PacketError::check_range(
            "TRAP",
            "int_ctx",
            u64::from(int_ctx),
            0,
            u64::from(SDMA_TRAP_INT_CTX_MASK),
        )?;
        Ok(SDMA_PKT_TRAP {
            header: SdmaHeader::new(SDMA_OP_TRAP, 0, 0),
            int_ctx,
        })
    }
}

/// `SDMA_PKT_POLL_REGMEM`: waits until `(value at addr & mask) func
/// value` holds (memory form), or polls a register (register form).
#[repr(C)]
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct SDMA_PKT_POLL_REGMEM {
    /// Op [`SDMA_OP_POLL_REGMEM`]; `hdp_flush` bit 26, `func` bits 30:28,
    /// `mem_poll` bit 31.
    pub header: SdmaHeader,
    /// Address (or register), bits 31:0.
    pub addr_lo: u32,
    /// Address, bits 63:32.
    pub addr_hi: u32,
    /// The reference value.
    pub value: u32,
    /// The mask applied to the polled value.
    pub mask: u32,
    /// Poll interval in bits 15:0, retry count in bits 27:16.
    pub dw5: u32,
}

impl SDMA_PKT_POLL_REGMEM {
    /// ROCr's HDP flush (`hdp_flush_cmd`): the register form with these
    /// fixed dwords (0x8, 0, 0x8000_0000, 0, 0, 0).
    pub const HDP_FLUSH: SDMA_PKT_POLL_REGMEM = SDMA_PKT_POLL_REGMEM {
        header: SdmaHeader::new(SDMA_OP_POLL_REGMEM, 0, 0),
        addr_lo: 0,
        addr_hi: 0x8000_0000,
        value: 0,
        mask: 0,
        dw5: 0,
    };

    /// A memory poll of the dword at `addr` until `(v & mask) func
    /// reference`, with kfdtest's interval (4) and retry count (0xfff).
    pub fn memory(
        addr: u64,
        reference: u32,
        mask: u32,
        func: CompareFunction,
    ) -> SDMA_PKT_POLL_REGMEM {
        let (addr_lo, addr_hi) = split(addr);
        SDMA_PKT_POLL_REGMEM {
            header: SdmaHeader::new(
                SDMA_OP_POLL_REGMEM,
                0,
                (func as u32) << SDMA_POLL_REGMEM_FUNC_SHIFT | SDMA_POLL_REGMEM_MEM_POLL,
            ),
            addr_lo,
            addr_hi,
            value: reference,
            mask,
            dw5: 4 | 0xFFF << SDMA_POLL_REGMEM_RETRY_COUNT_SHIFT,
        }
    }

    /// True for the memory form.
    pub const fn mem_poll(&self) -> bool {
        self.header.0 & SDMA_POLL_REGMEM_MEM_POLL != 0
    }

    /// The raw `func` bits ([`CompareFunction::from_bits`]).
    pub const fn func(&self) -> u32 {
        (self.header.0 >> SDMA_POLL_REGMEM_FUNC_SHIFT) & 7
    }

    /// The polled address.
    pub fn addr(&self) -> u64 {
        join(self.addr_lo, self.addr_hi)
    }
}

/// `SDMA_PKT_ATOMIC`: an atomic operation on a 64-bit memory value.
#[repr(C)]
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct SDMA_PKT_ATOMIC {
    /// Op [`SDMA_OP_ATOMIC`]; `l` (loop) bit 16, `operation` bits 31:25.
    pub header: SdmaHeader,
    /// Address, bits 31:0.
    pub addr_lo: u32,
    /// Address, bits 63:32.
    pub addr_hi: u32,
    /// Source data, bits 31:0.
    pub src_data_lo: u32,
    /// Source data, bits 63:32.
    pub src_data_hi: u32,
    /// Compare data, bits 31:0 (compare-and-swap operations).
    pub cmp_data_lo: u32,
    /// Compare data, bits 63:32.
    pub cmp_data_hi: u32,
    /// Loop interval in bits 12:0.
    pub loop_interval: u32,
}

impl SDMA_PKT_ATOMIC {
    /// [`SDMA_ATOMIC_ADD64`]: adds `value` to the 64 bits at `addr`.
    pub fn add64(addr: u64, value: u64) -> SDMA_PKT_ATOMIC {
        let (addr_lo, addr_hi) = split(addr);
        let (src_data_lo, src_data_hi) = split(value);
        SDMA_PKT_ATOMIC {
            header: SdmaHeader::new(
                SDMA_OP_ATOMIC,
                0,
                SDMA_ATOMIC_ADD64 << SDMA_ATOMIC_OPERATION_SHIFT,
            ),
            addr_lo,
            addr_hi,
            src_data_lo,
            src_data_hi,
            ..SDMA_PKT_ATOMIC::default()
        }
    }

    /// The operation (header bits 31:25).
    pub const fn operation(&self) -> u32 {
        (self.header.0 >> SDMA_ATOMIC_OPERATION_SHIFT) & 0x7F
    }

    /// The address.
    pub fn addr(&self) -> u64 {
        join(self.addr_lo, self.addr_hi)
    }

    /// The source data.
    pub fn src_data(&self) -> u64 {
        join(self.src_data_lo, self.src_data_hi)
    }
}

/// `SDMA_PKT_TIMESTAMP`: writes a 64-bit counter to memory (sub-ops
/// [`SDMA_SUBOP_TIMESTAMP_GET`], [`SDMA_SUBOP_TIMESTAMP_GET_GLOBAL`]).
#[repr(C)]
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct SDMA_PKT_TIMESTAMP {
    /// Op [`SDMA_OP_TIMESTAMP`] and the sub-op.
    pub header: SdmaHeader,
    /// Address, bits 31:0.
    pub addr_lo: u32,
    /// Address, bits 63:32.
    pub addr_hi: u32,
}

impl SDMA_PKT_TIMESTAMP {
    /// Writes the global GPU counter to `addr`.
    pub fn get_global(addr: u64) -> SDMA_PKT_TIMESTAMP {
        let (addr_lo, addr_hi) = split(addr);
        SDMA_PKT_TIMESTAMP {
            header: SdmaHeader::new(SDMA_OP_TIMESTAMP, SDMA_SUBOP_TIMESTAMP_GET_GLOBAL, 0),
            addr_lo,
            addr_hi,
        }
    }

    /// The address written.
    pub fn addr(&self) -> u64 {
        join(self.addr_lo, self.addr_hi)
    }
}

/// `SDMA_PKT_GCR`: cache invalidate/write-back requests over an address
/// range (gfx10+).
#[repr(C)]
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct SDMA_PKT_GCR {
    /// Op [`SDMA_OP_GCR`], sub-op [`SDMA_SUBOP_USER_GCR`].
    pub header: SdmaHeader,
    /// Base address bits 31:7 in bits 31:7.
    pub word1: u32,
    /// Base address bits 47:32 in bits 15:0; the `GCR_CONTROL` bits above.
    pub word2: u32,
    /// `RANGE_IS_PA`, `SEQ`; limit address bits 31:7 in bits 31:7.
    pub word3: u32,
    /// Limit address bits 47:32 in bits 15:0; VMID in bits 27:24.
    pub word4: u32,
}

impl SDMA_PKT_GCR {
    /// A user GCR request with no control bit set (nothing to do).
    pub const fn empty() -> SDMA_PKT_GCR {
        SDMA_PKT_GCR {
            header: SdmaHeader::new(SDMA_OP_GCR, SDMA_SUBOP_USER_GCR, 0),
            word1: 0,
            word2: 0,
            word3: 0,
            word4: 0,
        }
    }
}

dword_packet!(
    SDMA_PKT_NOP = 1,
    SDMA_PKT_COPY_LINEAR = 7,
    SDMA_PKT_CONSTANT_FILL = 5,
    SDMA_PKT_WRITE_UNTILED = 4,
    SDMA_PKT_FENCE = 4,
    SDMA_PKT_FENCE_64B = 5,
    SDMA_PKT_TRAP = 2,
    SDMA_PKT_POLL_REGMEM = 6,
    SDMA_PKT_ATOMIC = 8,
    SDMA_PKT_TIMESTAMP = 3,
    SDMA_PKT_GCR = 5,
);

/// Dwords [`packet_dwords`] may look at: the header and the three after
/// it (a `WRITE`'s length is in its dword 3).
pub const HEAD_DWORDS: usize = 4;

/// The length in dwords of the packet that starts with `head` (its first
/// dwords, up to [`HEAD_DWORDS`]). `UnknownSdma` for an op or sub-op
/// with no format here; `Truncated` when `head` is too short to tell.
pub fn packet_dwords(head: &[u32]) -> Result<usize, PacketError> {
    let Some(&h) = head.first() else {
        return Err(PacketError::Truncated {
            packet: "SDMA header",
            need: 1,
            got: 0,
        });
    };
    let h = SdmaHeader(h);
    Ok(match (h.op(), h.sub_op()) {
        (SDMA_OP_NOP, _) => 1 + SDMA_PKT_NOP { header: h }.count() as usize,
        (SDMA_OP_COPY, SDMA_SUBOP_COPY_LINEAR) => SDMA_PKT_COPY_LINEAR::DWORDS,
        (SDMA_OP_WRITE, SDMA_SUBOP_WRITE_LINEAR) => {
            let w: SDMA_PKT_WRITE_UNTILED = read("WRITE", head)?;
            SDMA_PKT_WRITE_UNTILED::DWORDS + w.data_dwords()
        }
        (SDMA_OP_FENCE, SDMA_SUBOP_FENCE_64B) => SDMA_PKT_FENCE_64B::DWORDS,
        (SDMA_OP_FENCE, _) => SDMA_PKT_FENCE::DWORDS,
        (SDMA_OP_TRAP, _) => SDMA_PKT_TRAP::DWORDS,
        (SDMA_OP_POLL_REGMEM, _) => SDMA_PKT_POLL_REGMEM::DWORDS,
        (SDMA_OP_ATOMIC, _) => SDMA_PKT_ATOMIC::DWORDS,
        (SDMA_OP_CONST_FILL, _) => SDMA_PKT_CONSTANT_FILL::DWORDS,
        (SDMA_OP_TIMESTAMP, _) => SDMA_PKT_TIMESTAMP::DWORDS,
        (SDMA_OP_GCR, _) => SDMA_PKT_GCR::DWORDS,
        (op, sub_op) => return Err(PacketError::UnknownSdma { op, sub_op }),
    })
}

/// An SDMA packet decoded from its dwords.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SdmaPacket<'a> {
    /// `NOP` (its further dwords are skipped).
    Nop(SDMA_PKT_NOP),
    /// `COPY_LINEAR`.
    CopyLinear(SDMA_PKT_COPY_LINEAR),
    /// `CONST_FILL`.
    ConstantFill(SDMA_PKT_CONSTANT_FILL),
    /// `WRITE` (linear): the head and the data.
    Write(SDMA_PKT_WRITE_UNTILED, &'a [u32]),
    /// `FENCE` of 32 bits (any sub-op but [`SDMA_SUBOP_FENCE_64B`]).
    Fence(SDMA_PKT_FENCE),
    /// `FENCE` of 64 bits.
    Fence64(SDMA_PKT_FENCE_64B),
    /// `TRAP`.
    Trap(SDMA_PKT_TRAP),
    /// `POLL_REGMEM`.
    PollRegmem(SDMA_PKT_POLL_REGMEM),
    /// `ATOMIC` (any operation: see [`SDMA_PKT_ATOMIC::operation`]).
    Atomic(SDMA_PKT_ATOMIC),
    /// `TIMESTAMP` (any sub-op).
    Timestamp(SDMA_PKT_TIMESTAMP),
    /// `GCR`.
    Gcr(SDMA_PKT_GCR),
}

impl<'a> SdmaPacket<'a> {
    /// Decodes the packet at the start of `dws`; returns it and its
    /// length in dwords. `Truncated` when `dws` ends before the packet.
    pub fn decode(dws: &'a [u32]) -> Result<(SdmaPacket<'a>, usize), PacketError> {
        let len = packet_dwords(dws)?;
        if dws.len() < len {
            return Err(PacketError::Truncated {
                packet: op_name(SdmaHeader(dws[0]).op()).unwrap_or("SDMA packet"),
                need: len,
                got: dws.len(),
            });
        }
        let h = SdmaHeader(dws[0]);
        let p = match (h.op(), h.sub_op()) {
            (SDMA_OP_NOP, _) => SdmaPacket::Nop(SDMA_PKT_NOP { header: h }),
            (SDMA_OP_COPY, _) => SdmaPacket::CopyLinear(read("COPY_LINEAR", dws)?),
            (SDMA_OP_WRITE, _) => SdmaPacket::Write(
                read("WRITE", dws)?,
                &dws[SDMA_PKT_WRITE_UNTILED::DWORDS..len],
            ),
            (SDMA_OP_FENCE, SDMA_SUBOP_FENCE_64B) => SdmaPacket::Fence64(read("FENCE", dws)?),
            (SDMA_OP_FENCE, _) => SdmaPacket::Fence(read("FENCE", dws)?),
            (SDMA_OP_TRAP, _) => SdmaPacket::Trap(read("TRAP", dws)?),
            (SDMA_OP_POLL_REGMEM, _) => SdmaPacket::PollRegmem(read("POLL_REGMEM", dws)?),
            (SDMA_OP_ATOMIC, _) => SdmaPacket::Atomic(read("ATOMIC", dws)?),
            (SDMA_OP_CONST_FILL, _) => SdmaPacket::ConstantFill(read("CONST_FILL", dws)?),
            (SDMA_OP_TIMESTAMP, _) => SdmaPacket::Timestamp(read("TIMESTAMP", dws)?),
            (SDMA_OP_GCR, _) => SdmaPacket::Gcr(read("GCR", dws)?),
            (op, sub_op) => return Err(PacketError::UnknownSdma { op, sub_op }),
        };
        Ok((p, len))
    }

    /// The packet's header.
    pub fn header(&self) -> SdmaHeader {
        match self {
            SdmaPacket::Nop(p) => p.header,
            SdmaPacket::CopyLinear(p) => p.header,
            SdmaPacket::ConstantFill(p) => p.header,
            SdmaPacket::Write(p, _) => p.header,
            SdmaPacket::Fence(p) => p.header,
            SdmaPacket::Fence64(p) => p.header,
            SdmaPacket::Trap(p) => p.header,
            SdmaPacket::PollRegmem(p) => p.header,
            SdmaPacket::Atomic(p) => p.header,
            SdmaPacket::Timestamp(p) => p.header,
            SdmaPacket::Gcr(p) => p.header,
        }
    }
}
