//! PM4 packets of the compute queues (`KFD_IOC_QUEUE_TYPE_COMPUTE`) and
//! of the indirect buffers AQL PM4-IB vendor packets point at, as the
//! MEC of gfx9 and later parses them: type-3 packets (the kernel's
//! `soc15d.h`, kfdtest's `kfd_pm4_opcodes.h` and `pm4_pkt_struct_*.h`,
//! ROCr's `amd_gpu_pm4.h`) and the type-2 filler.
//!
//! A type-3 packet is a header dword ([`Pm4Header`]: type 3 in bits
//! 31:30, `count` in bits 29:16, the `IT_*` opcode in bits 15:8) and a
//! body of `count + 1` dwords, so a packet is `count + 2` dwords long.
//! Each fixed-size packet is a `#[repr(C)]` struct of dwords with a
//! constructor for producers and a byte view
//! ([`zerocopy::IntoBytes::as_bytes`]) and dword view
//! ([`Dwords::dwords`]); `WRITE_DATA` is a head struct followed by its
//! data ([`write_data`]). [`Pm4Packet::decode`] is the other direction,
//! for the CP model.
//!
//! No C header of these formats is shipped by Debian:
//! `tests/layout_packets.rs` pins the layouts by hand, naming the source.

// The C headers' names (`PM4_MEC_RELEASE_MEM`).
#![allow(non_camel_case_types)]

use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

use crate::packet::{dword_packet, join, read, split, CompareFunction, Dwords, PacketError};

/// `IT_NOP`.
pub const IT_NOP: u32 = 0x10;
/// `IT_DISPATCH_DIRECT`.
pub const IT_DISPATCH_DIRECT: u32 = 0x15;
/// `IT_DISPATCH_INDIRECT`.
pub const IT_DISPATCH_INDIRECT: u32 = 0x16;
/// `IT_WRITE_DATA`.
pub const IT_WRITE_DATA: u32 = 0x37;
/// `IT_WAIT_REG_MEM`.
pub const IT_WAIT_REG_MEM: u32 = 0x3C;
/// `IT_INDIRECT_BUFFER`.
pub const IT_INDIRECT_BUFFER: u32 = 0x3F;
/// `IT_COPY_DATA`.
pub const IT_COPY_DATA: u32 = 0x40;
/// `IT_EVENT_WRITE`.
pub const IT_EVENT_WRITE: u32 = 0x46;
/// `IT_RELEASE_MEM`.
pub const IT_RELEASE_MEM: u32 = 0x49;
/// `IT_ACQUIRE_MEM`.
pub const IT_ACQUIRE_MEM: u32 = 0x58;
/// `IT_SET_CONFIG_REG`.
pub const IT_SET_CONFIG_REG: u32 = 0x68;
/// `IT_SET_SH_REG`.
pub const IT_SET_SH_REG: u32 = 0x76;
/// `IT_SET_SH_REG_OFFSET`.
pub const IT_SET_SH_REG_OFFSET: u32 = 0x77;
/// `IT_SET_UCONFIG_REG`.
pub const IT_SET_UCONFIG_REG: u32 = 0x79;

/// The name of an `IT_*` opcode this module knows (`None`: another).
pub fn opcode_name(opcode: u32) -> Option<&'static str> {
    Some(match opcode {
        IT_NOP => "NOP",
        IT_DISPATCH_DIRECT => "DISPATCH_DIRECT",
        IT_DISPATCH_INDIRECT => "DISPATCH_INDIRECT",
        IT_WRITE_DATA => "WRITE_DATA",
        IT_WAIT_REG_MEM => "WAIT_REG_MEM",
        IT_INDIRECT_BUFFER => "INDIRECT_BUFFER",
        IT_COPY_DATA => "COPY_DATA",
        IT_EVENT_WRITE => "EVENT_WRITE",
        IT_RELEASE_MEM => "RELEASE_MEM",
        IT_ACQUIRE_MEM => "ACQUIRE_MEM",
        IT_SET_CONFIG_REG => "SET_CONFIG_REG",
        IT_SET_SH_REG => "SET_SH_REG",
        IT_SET_SH_REG_OFFSET => "SET_SH_REG_OFFSET",
        IT_SET_UCONFIG_REG => "SET_UCONFIG_REG",
        _ => return None,
    })
}

/// Header type of a one-dword filler packet.
pub const PM4_TYPE_2: u32 = 2;
/// Header type of an opcode packet.
pub const PM4_TYPE_3: u32 = 3;
/// Header: bit offset of the packet type (2 bits).
pub const PM4_HEADER_TYPE_SHIFT: u32 = 30;
/// Header: bit offset of `count` (14 bits: body dwords − 1).
pub const PM4_HEADER_COUNT_SHIFT: u32 = 16;
/// Header: mask of `count` (after the shift).
pub const PM4_HEADER_COUNT_MASK: u32 = 0x3FFF;
/// Header: bit offset of the `IT_*` opcode (8 bits).
pub const PM4_HEADER_OPCODE_SHIFT: u32 = 8;
/// Header: `shaderType` set: a compute packet.
pub const PM4_HEADER_SHADER_TYPE_COMPUTE: u32 = 1 << 1;
/// The type-2 filler dword (`CP_PACKET2`).
pub const PM4_TYPE2_NOP: u32 = 0x8000_0000;
/// The one-dword type-3 filler kfdtest pads rings with: a compute `NOP`
/// whose count is the largest, 0x3FFF, which the CP takes as one dword.
pub const PM4_NOP_FILLER: u32 = PM4_TYPE_3 << PM4_HEADER_TYPE_SHIFT
    | PM4_HEADER_COUNT_MASK << PM4_HEADER_COUNT_SHIFT
    | IT_NOP << PM4_HEADER_OPCODE_SHIFT
    | PM4_HEADER_SHADER_TYPE_COMPUTE;

/// A PM4 packet header.
#[repr(transparent)]
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct Pm4Header(pub u32);

impl Pm4Header {
    /// The header of a compute type-3 packet of `opcode` that is
    /// `packet_dwords` long, header included (`count` = `packet_dwords`
    /// − 2). `Range` unless the opcode fits 8 bits and `2 <=
    /// packet_dwords <= 0x4000` (count 0x3FFF is the one-dword filler's).
    pub fn type3(opcode: u32, packet_dwords: usize) -> Result<Pm4Header, PacketError> {
        PacketError::check_range("PM4", "opcode", u64::from(opcode), 0, 0xFF)?;
        PacketError::check_range(
            "PM4",
            "packet dwords",
            packet_dwords as u64,
            2,
            u64::from(PM4_HEADER_COUNT_MASK) + 1,
        )?;
        Ok(header(opcode, packet_dwords))
    }

    /// The packet type (bits 31:30).
    pub const fn packet_type(self) -> u32 {
        self.0 >> PM4_HEADER_TYPE_SHIFT
    }

    /// `count` (bits 29:16): body dwords − 1.
    pub const fn count(self) -> u32 {
        (self.0 >> PM4_HEADER_COUNT_SHIFT) & PM4_HEADER_COUNT_MASK
    }

    /// The `IT_*` opcode (bits 15:8).
    pub const fn opcode(self) -> u32 {
        (self.0 >> PM4_HEADER_OPCODE_SHIFT) & 0xFF
    }

    /// Length in dwords of the packet this header starts: 1 for type 2
    /// and for the `NOP` filler, `count + 2` for other type-3 packets.
    /// `Pm4Type` for types 0 and 1, which a compute queue does not take.
    pub fn packet_dwords(self) -> Result<usize, PacketError> {
        match self.packet_type() {
            PM4_TYPE_2 => Ok(1),
            PM4_TYPE_3 if self.opcode() == IT_NOP && self.count() == PM4_HEADER_COUNT_MASK => Ok(1),
            PM4_TYPE_3 => Ok(self.count() as usize + 2),
            _ => Err(PacketError::Pm4Type { header: self.0 }),
        }
    }
}

/// The compute type-3 header of an `opcode` packet of `dwords` dwords
/// (both in range: [`Pm4Header::type3`] checks them).
fn header(opcode: u32, dwords: usize) -> Pm4Header {
    Pm4Header(
        PM4_TYPE_3 << PM4_HEADER_TYPE_SHIFT
            | (dwords as u32 - 2) << PM4_HEADER_COUNT_SHIFT
            | opcode << PM4_HEADER_OPCODE_SHIFT
            | PM4_HEADER_SHADER_TYPE_COMPUTE,
    )
}

/// `WRITE_DATA` dword 1: bit offset of `dst_sel` (4 bits).
pub const PM4_WRITE_DATA_DST_SEL_SHIFT: u32 = 8;
/// `WRITE_DATA`/`COPY_DATA` `dst_sel`: a memory-mapped register.
pub const PM4_DST_SEL_REGISTER: u32 = 0;
/// `WRITE_DATA`/`COPY_DATA` `dst_sel`: memory, synchronous.
pub const PM4_DST_SEL_MEMORY_SYNC: u32 = 1;
/// `WRITE_DATA`/`COPY_DATA` `dst_sel`: memory through the L2 (`TC_L2`).
pub const PM4_DST_SEL_TC_L2: u32 = 2;
/// `WRITE_DATA`/`COPY_DATA` `dst_sel`: GDS.
pub const PM4_DST_SEL_GDS: u32 = 3;
/// `WRITE_DATA`/`COPY_DATA` `dst_sel`: memory, asynchronous.
pub const PM4_DST_SEL_MEMORY: u32 = 5;
/// `WRITE_DATA` dword 1: `addr_incr` set: every data dword goes to the
/// same address.
pub const PM4_WRITE_DATA_NO_INCREMENT: u32 = 1 << 16;
/// `WRITE_DATA`/`COPY_DATA` dword 1: `wr_confirm`, wait for the write.
pub const PM4_WR_CONFIRM: u32 = 1 << 20;

/// `PM4_MEC_WRITE_DATA`: the head of a `WRITE_DATA`; the data dwords
/// follow it.
#[repr(C)]
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct PM4_MEC_WRITE_DATA {
    /// [`IT_WRITE_DATA`].
    pub header: Pm4Header,
    /// `dst_sel` bits 11:8, `addr_incr` bit 16, `wr_confirm` bit 20,
    /// cache policy and engine above.
    pub control: u32,
    /// Destination bits 31:2 (bits 1:0 zero).
    pub dst_addr_lo: u32,
    /// Destination bits 63:32.
    pub dst_addr_hi: u32,
}

impl PM4_MEC_WRITE_DATA {
    /// The head of a confirmed write of `data_dwords` dwords to memory at
    /// `dst`. `Misaligned` unless `dst` is 4-byte aligned; `Range` unless
    /// `1 <= data_dwords <= 0x3FFC` (the header's count).
    pub fn memory(dst: u64, data_dwords: usize) -> Result<PM4_MEC_WRITE_DATA, PacketError> {
        PacketError::check_align("WRITE_DATA", "dst", dst, 4)?;
        PacketError::check_range(
            "WRITE_DATA",
            "data dwords",
            data_dwords as u64,
            1,
            u64::from(PM4_HEADER_COUNT_MASK) + 1 - Self::DWORDS as u64,
        )?;
        let (dst_addr_lo, dst_addr_hi) = split(dst);
        Ok(PM4_MEC_WRITE_DATA {
            header: header(IT_WRITE_DATA, Self::DWORDS + data_dwords),
            control: PM4_DST_SEL_MEMORY << PM4_WRITE_DATA_DST_SEL_SHIFT | PM4_WR_CONFIRM,
            dst_addr_lo,
            dst_addr_hi,
        })
    }

    /// `dst_sel`.
    pub const fn dst_sel(&self) -> u32 {
        (self.control >> PM4_WRITE_DATA_DST_SEL_SHIFT) & 0xF
    }

    /// True when every data dword goes to the same address.
    pub const fn no_increment(&self) -> bool {
        self.control & PM4_WRITE_DATA_NO_INCREMENT != 0
    }

    /// The destination address.
    pub fn dst(&self) -> u64 {
        join(self.dst_addr_lo, self.dst_addr_hi) & !3
    }
}

/// A whole `WRITE_DATA` of `data` to memory at `dst`
/// ([`PM4_MEC_WRITE_DATA::memory`]).
pub fn write_data(dst: u64, data: &[u32]) -> Result<Vec<u32>, PacketError> {
    let head = PM4_MEC_WRITE_DATA::memory(dst, data.len())?;
    Ok([head.dwords(), data].concat())
}

/// `RELEASE_MEM` event: `CACHE_FLUSH_AND_INV_TS_EVENT`.
pub const PM4_EVENT_CACHE_FLUSH_AND_INV_TS: u32 = 0x14;
/// `RELEASE_MEM`/`EVENT_WRITE` event: `CS_PARTIAL_FLUSH`.
pub const PM4_EVENT_CS_PARTIAL_FLUSH: u32 = 0x07;
/// `RELEASE_MEM`/`EVENT_WRITE` dword 1: bit offset of `event_index` (4
/// bits; `event_type` is bits 5:0).
pub const PM4_EVENT_INDEX_SHIFT: u32 = 8;
/// `event_index`: a `CS_PARTIAL_FLUSH`-class event.
pub const PM4_EVENT_INDEX_CS_PARTIAL_FLUSH: u32 = 4;
/// `event_index`: end of pipe.
pub const PM4_EVENT_INDEX_END_OF_PIPE: u32 = 5;
/// `RELEASE_MEM` dword 2: bit offset of `int_sel` (3 bits).
pub const PM4_RELEASE_MEM_INT_SEL_SHIFT: u32 = 24;
/// `RELEASE_MEM` dword 2: bit offset of `data_sel` (3 bits).
pub const PM4_RELEASE_MEM_DATA_SEL_SHIFT: u32 = 29;

/// `RELEASE_MEM` `data_sel`: what is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum ReleaseData {
    /// Nothing.
    None = 0,
    /// The low 32 bits of the data.
    Low32 = 1,
    /// The 64-bit data.
    Data64 = 2,
    /// The 64-bit GPU clock counter.
    GpuClock = 3,
}

/// `RELEASE_MEM` `int_sel`: whether an interrupt follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum ReleaseInterrupt {
    /// None.
    None = 0,
    /// An interrupt, without waiting for the write.
    Send = 1,
    /// An interrupt after the write is confirmed.
    AfterWriteConfirm = 2,
    /// The data is sent after the write is confirmed (no interrupt).
    DataAfterWriteConfirm = 3,
    /// An interrupt with the context id, always.
    CtxIdAlways = 4,
    /// An interrupt with the context id if the 32 bits written equal the
    /// compare data.
    CtxIdIfEqual32 = 5,
    /// As `CtxIdIfEqual32`, comparing 64 bits.
    CtxIdIfEqual64 = 6,
}

/// `PM4_MEC_RELEASE_MEM` (gfx9 layout, 8 dwords): at the end of the
/// pipe, writes data and raises an interrupt with `int_ctxid`.
#[repr(C)]
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct PM4_MEC_RELEASE_MEM {
    /// [`IT_RELEASE_MEM`].
    pub header: Pm4Header,
    /// `event_type` bits 5:0, `event_index` bits 11:8, cache actions
    /// above.
    pub event_cntl: u32,
    /// `dst_sel` bits 17:16, `int_sel` bits 26:24, `data_sel` bits 31:29.
    pub data_cntl: u32,
    /// Address bits 31:2 (or 31:3 for 64-bit data).
    pub addr_lo: u32,
    /// Address bits 63:32.
    pub addr_hi: u32,
    /// Data (or compare data), bits 31:0.
    pub data_lo: u32,
    /// Data, bits 63:32.
    pub data_hi: u32,
    /// The interrupt context id (KFD: an event id).
    pub int_ctxid: u32,
}

impl PM4_MEC_RELEASE_MEM {
    /// An end-of-pipe release (`CACHE_FLUSH_AND_INV_TS_EVENT`) writing
    /// `data` as `data_sel` says to `addr` and raising `int_sel` with
    /// `int_ctxid`. `Misaligned` unless `addr` is 4-byte aligned.
    pub fn end_of_pipe(
        addr: u64,
        data_sel: ReleaseData,
        data: u64,
        int_sel: ReleaseInterrupt,
        int_ctxid: u32,
    ) -> Result<PM4_MEC_RELEASE_MEM, PacketError> {
        PacketError::check_align("RELEASE_MEM", "addr", addr, 4)?;
        let (addr_lo, addr_hi) = split(addr);
        let (data_lo, data_hi) = split(data);
        Ok(PM4_MEC_RELEASE_MEM {
            header: header(IT_RELEASE_MEM, Self::DWORDS),
            event_cntl: PM4_EVENT_CACHE_FLUSH_AND_INV_TS
                | PM4_EVENT_INDEX_END_OF_PIPE << PM4_EVENT_INDEX_SHIFT,
            data_cntl: (int_sel as u32) << PM4_RELEASE_MEM_INT_SEL_SHIFT
                | (data_sel as u32) << PM4_RELEASE_MEM_DATA_SEL_SHIFT,
            addr_lo,
            addr_hi,
            data_lo,
            data_hi,
            int_ctxid,
        })
    }

    /// The raw `int_sel` ([`ReleaseInterrupt`] values).
    pub const fn int_sel(&self) -> u32 {
        (self.data_cntl >> PM4_RELEASE_MEM_INT_SEL_SHIFT) & 7
    }

    /// The raw `data_sel` ([`ReleaseData`] values).
    pub const fn data_sel(&self) -> u32 {
        (self.data_cntl >> PM4_RELEASE_MEM_DATA_SEL_SHIFT) & 7
    }

    /// The address written.
    pub fn addr(&self) -> u64 {
        join(self.addr_lo, self.addr_hi) & !3
    }

    /// The 64-bit data (or compare data).
    pub fn data(&self) -> u64 {
        join(self.data_lo, self.data_hi)
    }
}

/// `ACQUIRE_MEM` `coher_cntl`: `TC_WB_ACTION_ENA`.
pub const PM4_COHER_CNTL_TC_WB_ACTION_ENA: u32 = 1 << 18;
/// `ACQUIRE_MEM` `coher_cntl`: `TCL1_ACTION_ENA`.
pub const PM4_COHER_CNTL_TCL1_ACTION_ENA: u32 = 1 << 22;
/// `ACQUIRE_MEM` `coher_cntl`: `TC_ACTION_ENA`.
pub const PM4_COHER_CNTL_TC_ACTION_ENA: u32 = 1 << 23;
/// `ACQUIRE_MEM` `coher_cntl`: `SH_KCACHE_ACTION_ENA`.
pub const PM4_COHER_CNTL_SH_KCACHE_ACTION_ENA: u32 = 1 << 27;
/// `ACQUIRE_MEM` `coher_cntl`: `SH_ICACHE_ACTION_ENA`.
pub const PM4_COHER_CNTL_SH_ICACHE_ACTION_ENA: u32 = 1 << 29;
/// `ACQUIRE_MEM` (gfx10+) `gcr_cntl`: `GLI_INV` = 1 (bits 1:0).
pub const PM4_GCR_CNTL_GLI_INV_ALL: u32 = 1;
/// `ACQUIRE_MEM` `gcr_cntl`: `GLK_INV`.
pub const PM4_GCR_CNTL_GLK_INV: u32 = 1 << 7;
/// `ACQUIRE_MEM` `gcr_cntl`: `GLV_INV`.
pub const PM4_GCR_CNTL_GLV_INV: u32 = 1 << 8;
/// `ACQUIRE_MEM` `gcr_cntl`: `GL1_INV`.
pub const PM4_GCR_CNTL_GL1_INV: u32 = 1 << 9;
/// `ACQUIRE_MEM` `gcr_cntl`: `GL2_INV`.
pub const PM4_GCR_CNTL_GL2_INV: u32 = 1 << 14;
/// `ACQUIRE_MEM` `gcr_cntl`: `GL2_WB`.
pub const PM4_GCR_CNTL_GL2_WB: u32 = 1 << 15;
/// The poll interval kfdtest gives `ACQUIRE_MEM` and `WAIT_REG_MEM`.
pub const PM4_POLL_INTERVAL: u32 = 4;

/// `PM4_ACQUIRE_MEM` (gfx9 layout, 7 dwords): cache actions over an
/// address range.
#[repr(C)]
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct PM4_ACQUIRE_MEM {
    /// [`IT_ACQUIRE_MEM`].
    pub header: Pm4Header,
    /// `coher_cntl` bits 30:0 (`PM4_COHER_CNTL_*`), engine bit 31.
    pub coher_cntl: u32,
    /// Range size in 256-byte units, bits 31:0.
    pub coher_size: u32,
    /// Range size, bits 39:32 (in bits 7:0).
    pub coher_size_hi: u32,
    /// Range base in 256-byte units, bits 31:0.
    pub coher_base_lo: u32,
    /// Range base, bits 56:32 (in bits 24:0).
    pub coher_base_hi: u32,
    /// Poll interval (bits 15:0).
    pub poll_interval: u32,
}

impl PM4_ACQUIRE_MEM {
    /// `coher_cntl` actions over the whole address space.
    pub fn all(coher_cntl: u32) -> PM4_ACQUIRE_MEM {
        PM4_ACQUIRE_MEM {
            header: header(IT_ACQUIRE_MEM, Self::DWORDS),
            coher_cntl: coher_cntl & 0x7FFF_FFFF,
            coher_size: !0,
            coher_size_hi: 0xFF,
            coher_base_lo: 0,
            coher_base_hi: 0,
            poll_interval: PM4_POLL_INTERVAL,
        }
    }
}

/// `PM4_ACQUIRE_MEM` (gfx10+ layout, 8 dwords): the gfx9 fields and
/// `gcr_cntl`.
#[repr(C)]
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct PM4_ACQUIRE_MEM_GFX10 {
    /// The gfx9 part (its header counts 8 dwords).
    pub base: PM4_ACQUIRE_MEM,
    /// `gcr_cntl` bits 18:0 (`PM4_GCR_CNTL_*`).
    pub gcr_cntl: u32,
}

impl PM4_ACQUIRE_MEM_GFX10 {
    /// `gcr_cntl` actions over the whole address space.
    pub fn all(gcr_cntl: u32) -> PM4_ACQUIRE_MEM_GFX10 {
        PM4_ACQUIRE_MEM_GFX10 {
            base: PM4_ACQUIRE_MEM {
                header: header(IT_ACQUIRE_MEM, Self::DWORDS),
                ..PM4_ACQUIRE_MEM::all(0)
            },
            gcr_cntl: gcr_cntl & 0x7_FFFF,
        }
    }
}

/// `INDIRECT_BUFFER` dword 3: mask of `ib_size` in dwords (20 bits).
pub const PM4_IB_SIZE_MASK: u32 = 0xF_FFFF;
/// `INDIRECT_BUFFER` dword 3: `chain`.
pub const PM4_IB_CHAIN: u32 = 1 << 20;
/// `INDIRECT_BUFFER` dword 3: `valid`.
pub const PM4_IB_VALID: u32 = 1 << 23;

/// `PM4_MEC_INDIRECT_BUFFER`: runs `ib_size` dwords of packets at
/// `ib_base`.
#[repr(C)]
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct PM4_MEC_INDIRECT_BUFFER {
    /// [`IT_INDIRECT_BUFFER`].
    pub header: Pm4Header,
    /// Base bits 31:2 (bits 1:0: `swap_function`).
    pub ib_base_lo: u32,
    /// Base bits 47:32 (in bits 15:0).
    pub ib_base_hi: u32,
    /// `ib_size` bits 19:0, `chain` bit 20, `valid` bit 23, VMID bits
    /// 27:24, cache policy bits 29:28.
    pub control: u32,
}

impl PM4_MEC_INDIRECT_BUFFER {
    /// A valid IB of `dwords` dwords at `ib`. `Misaligned` unless `ib` is
    /// 4-byte aligned; `Range` unless `ib` < 2^48 and `1 <= dwords <=
    /// 0xFFFFF`.
    pub fn new(ib: u64, dwords: u32) -> Result<PM4_MEC_INDIRECT_BUFFER, PacketError> {
        const P: &str = "INDIRECT_BUFFER";
        PacketError::check_align(P, "ib_base", ib, 4)?;
        PacketError::check_range(P, "ib_base", ib, 0, (1 << 48) - 1)?;
        PacketError::check_range(
            P,
            "ib_size",
            u64::from(dwords),
            1,
            u64::from(PM4_IB_SIZE_MASK),
        )?;
        let (ib_base_lo, ib_base_hi) = split(ib);
        Ok(PM4_MEC_INDIRECT_BUFFER {
            header: header(IT_INDIRECT_BUFFER, Self::DWORDS),
            ib_base_lo,
            ib_base_hi,
            control: dwords | PM4_IB_VALID,
        })
    }

    /// The IB's address.
    pub fn ib_base(&self) -> u64 {
        join(self.ib_base_lo & !3, self.ib_base_hi & 0xFFFF)
    }

    /// The IB's size in dwords.
    pub const fn ib_size(&self) -> u32 {
        self.control & PM4_IB_SIZE_MASK
    }
}

/// `WAIT_REG_MEM` dword 1: bit offset of `mem_space` (2 bits;
/// `function`, a [`CompareFunction`], is bits 2:0).
pub const PM4_WAIT_REG_MEM_MEM_SPACE_SHIFT: u32 = 4;
/// `WAIT_REG_MEM` `mem_space`: a register.
pub const PM4_WAIT_REG_MEM_SPACE_REGISTER: u32 = 0;
/// `WAIT_REG_MEM` `mem_space`: memory.
pub const PM4_WAIT_REG_MEM_SPACE_MEMORY: u32 = 1;

/// `PM4_MEC_WAIT_REG_MEM`: waits until `(value & mask) function
/// reference`.
#[repr(C)]
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct PM4_MEC_WAIT_REG_MEM {
    /// [`IT_WAIT_REG_MEM`].
    pub header: Pm4Header,
    /// `function` bits 2:0, `mem_space` bits 5:4, `operation` bits 7:6.
    pub control: u32,
    /// Poll address bits 31:2 (or the register).
    pub poll_addr_lo: u32,
    /// Poll address bits 63:32.
    pub poll_addr_hi: u32,
    /// The reference value.
    pub reference: u32,
    /// The mask applied to the polled value.
    pub mask: u32,
    /// Poll interval (bits 15:0).
    pub poll_interval: u32,
}

impl PM4_MEC_WAIT_REG_MEM {
    /// A wait on the dword at `addr`. `Misaligned` unless `addr` is
    /// 4-byte aligned.
    pub fn memory(
        addr: u64,
        reference: u32,
        mask: u32,
        function: CompareFunction,
    ) -> Result<PM4_MEC_WAIT_REG_MEM, PacketError> {
        PacketError::check_align("WAIT_REG_MEM", "poll_addr", addr, 4)?;
        let (poll_addr_lo, poll_addr_hi) = split(addr);
        Ok(PM4_MEC_WAIT_REG_MEM {
            header: header(IT_WAIT_REG_MEM, Self::DWORDS),
            control: function as u32
                | PM4_WAIT_REG_MEM_SPACE_MEMORY << PM4_WAIT_REG_MEM_MEM_SPACE_SHIFT,
            poll_addr_lo,
            poll_addr_hi,
            reference,
            mask,
            poll_interval: PM4_POLL_INTERVAL,
        })
    }

    /// The raw `function` bits ([`CompareFunction::from_bits`]).
    pub const fn function(&self) -> u32 {
        self.control & 7
    }

    /// `mem_space`.
    pub const fn mem_space(&self) -> u32 {
        (self.control >> PM4_WAIT_REG_MEM_MEM_SPACE_SHIFT) & 3
    }

    /// The polled address.
    pub fn addr(&self) -> u64 {
        join(self.poll_addr_lo, self.poll_addr_hi) & !3
    }
}

/// `COPY_DATA` `src_sel` (bits 3:0): memory.
pub const PM4_COPY_DATA_SRC_MEMORY: u32 = 1;
/// `COPY_DATA` `src_sel`: memory through the L2.
pub const PM4_COPY_DATA_SRC_TC_L2: u32 = 2;
/// `COPY_DATA` `src_sel`: the immediate data in dwords 2 and 3.
pub const PM4_COPY_DATA_SRC_IMMEDIATE: u32 = 5;
/// `COPY_DATA` `src_sel`: the GPU clock counter.
pub const PM4_COPY_DATA_SRC_GPU_CLOCK: u32 = 9;
/// `COPY_DATA` `src_sel`: the system clock counter.
pub const PM4_COPY_DATA_SRC_SYSTEM_CLOCK: u32 = 10;
/// `COPY_DATA` dword 1: bit offset of `dst_sel` (4 bits, the
/// `PM4_DST_SEL_*` values).
pub const PM4_COPY_DATA_DST_SEL_SHIFT: u32 = 8;
/// `COPY_DATA` dword 1: `count_sel`, 64 bits rather than 32.
pub const PM4_COPY_DATA_COUNT_SEL: u32 = 1 << 16;

/// Where a 64-bit `COPY_DATA` takes its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CopySource {
    /// The 64 bits at this address (8-byte aligned).
    Memory(u64),
    /// This value.
    Immediate(u64),
    /// The GPU clock counter.
    GpuClock,
    /// The system clock counter.
    SystemClock,
}

/// `PM4_COPY_DATA`: copies a value (memory, immediate, a counter) to
/// memory.
#[repr(C)]
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct PM4_COPY_DATA {
    /// [`IT_COPY_DATA`].
    pub header: Pm4Header,
    /// `src_sel` bits 3:0, `dst_sel` bits 11:8, `count_sel` bit 16,
    /// `wr_confirm` bit 20.
    pub control: u32,
    /// Source address (or immediate data) bits 31:0.
    pub src_addr_lo: u32,
    /// Source address (or immediate data) bits 63:32.
    pub src_addr_hi: u32,
    /// Destination bits 31:0.
    pub dst_addr_lo: u32,
    /// Destination bits 63:32.
    pub dst_addr_hi: u32,
}

impl PM4_COPY_DATA {
    /// A confirmed 64-bit copy from `src` to memory at `dst`.
    /// `Misaligned` unless `dst` (and a memory source) is 8-byte aligned.
    pub fn wide(src: CopySource, dst: u64) -> Result<PM4_COPY_DATA, PacketError> {
        PacketError::check_align("COPY_DATA", "dst", dst, 8)?;
        let (src_sel, value) = match src {
            CopySource::Memory(a) => {
                PacketError::check_align("COPY_DATA", "src", a, 8)?;
                (PM4_COPY_DATA_SRC_MEMORY, a)
            }
            CopySource::Immediate(v) => (PM4_COPY_DATA_SRC_IMMEDIATE, v),
            CopySource::GpuClock => (PM4_COPY_DATA_SRC_GPU_CLOCK, 0),
            CopySource::SystemClock => (PM4_COPY_DATA_SRC_SYSTEM_CLOCK, 0),
        };
        let (src_addr_lo, src_addr_hi) = split(value);
        let (dst_addr_lo, dst_addr_hi) = split(dst);
        Ok(PM4_COPY_DATA {
            header: header(IT_COPY_DATA, Self::DWORDS),
            control: src_sel
                | PM4_DST_SEL_MEMORY << PM4_COPY_DATA_DST_SEL_SHIFT
                | PM4_COPY_DATA_COUNT_SEL
                | PM4_WR_CONFIRM,
            src_addr_lo,
            src_addr_hi,
            dst_addr_lo,
            dst_addr_hi,
        })
    }

    /// `src_sel`.
    pub const fn src_sel(&self) -> u32 {
        self.control & 0xF
    }

    /// `dst_sel`.
    pub const fn dst_sel(&self) -> u32 {
        (self.control >> PM4_COPY_DATA_DST_SEL_SHIFT) & 0xF
    }

    /// True for a 64-bit copy (`count_sel`).
    pub const fn wide_count(&self) -> bool {
        self.control & PM4_COPY_DATA_COUNT_SEL != 0
    }

    /// The source address or immediate value.
    pub fn src(&self) -> u64 {
        join(self.src_addr_lo, self.src_addr_hi)
    }

    /// The destination address.
    pub fn dst(&self) -> u64 {
        join(self.dst_addr_lo, self.dst_addr_hi)
    }
}

/// `PM4_EVENT_WRITE` (the 2-dword form without an address).
#[repr(C)]
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct PM4_EVENT_WRITE {
    /// [`IT_EVENT_WRITE`].
    pub header: Pm4Header,
    /// `event_type` bits 5:0, `event_index` bits 11:8.
    pub event_cntl: u32,
}

impl PM4_EVENT_WRITE {
    /// `CS_PARTIAL_FLUSH`: waits for the compute shaders before it.
    pub fn cs_partial_flush() -> PM4_EVENT_WRITE {
        PM4_EVENT_WRITE {
            header: header(IT_EVENT_WRITE, Self::DWORDS),
            event_cntl: PM4_EVENT_CS_PARTIAL_FLUSH
                | PM4_EVENT_INDEX_CS_PARTIAL_FLUSH << PM4_EVENT_INDEX_SHIFT,
        }
    }
}

/// `PM4_DISPATCH_DIRECT`: dispatches a grid of workgroups with the
/// `COMPUTE_*` register state.
#[repr(C)]
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct PM4_DISPATCH_DIRECT {
    /// [`IT_DISPATCH_DIRECT`].
    pub header: Pm4Header,
    /// Workgroups in X.
    pub dim_x: u32,
    /// Workgroups in Y.
    pub dim_y: u32,
    /// Workgroups in Z.
    pub dim_z: u32,
    /// `COMPUTE_DISPATCH_INITIATOR`.
    pub dispatch_initiator: u32,
}

impl PM4_DISPATCH_DIRECT {
    /// A dispatch of `dims` workgroups with `dispatch_initiator`.
    pub fn new(dims: [u32; 3], dispatch_initiator: u32) -> PM4_DISPATCH_DIRECT {
        PM4_DISPATCH_DIRECT {
            header: header(IT_DISPATCH_DIRECT, Self::DWORDS),
            dim_x: dims[0],
            dim_y: dims[1],
            dim_z: dims[2],
            dispatch_initiator,
        }
    }
}

dword_packet!(
    PM4_MEC_WRITE_DATA = 4,
    PM4_MEC_RELEASE_MEM = 8,
    PM4_ACQUIRE_MEM = 7,
    PM4_ACQUIRE_MEM_GFX10 = 8,
    PM4_MEC_INDIRECT_BUFFER = 4,
    PM4_MEC_WAIT_REG_MEM = 7,
    PM4_COPY_DATA = 6,
    PM4_EVENT_WRITE = 2,
    PM4_DISPATCH_DIRECT = 5,
);

/// A PM4 packet decoded from its dwords.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pm4Packet<'a> {
    /// A type-2 filler.
    Type2,
    /// `NOP` (and the one-dword filler).
    Nop,
    /// `WRITE_DATA`: the head and the data.
    WriteData(PM4_MEC_WRITE_DATA, &'a [u32]),
    /// `RELEASE_MEM`.
    ReleaseMem(PM4_MEC_RELEASE_MEM),
    /// `ACQUIRE_MEM` (either layout).
    AcquireMem,
    /// `INDIRECT_BUFFER`.
    IndirectBuffer(PM4_MEC_INDIRECT_BUFFER),
    /// `WAIT_REG_MEM`.
    WaitRegMem(PM4_MEC_WAIT_REG_MEM),
    /// `COPY_DATA`.
    CopyData(PM4_COPY_DATA),
    /// `EVENT_WRITE`.
    EventWrite,
    /// Register state: `SET_CONFIG_REG`, `SET_SH_REG`,
    /// `SET_SH_REG_OFFSET`, `SET_UCONFIG_REG` (the opcode).
    SetRegister(u32),
    /// `DISPATCH_DIRECT` or `DISPATCH_INDIRECT` (the opcode).
    Dispatch(u32),
    /// Any other type-3 opcode.
    Other(u32),
}

impl<'a> Pm4Packet<'a> {
    /// Decodes one whole packet (`packet` holds exactly the header's
    /// [`Pm4Header::packet_dwords`] dwords). `Pm4Type` for a type 0 or 1
    /// header, `Truncated` when the packet is shorter than its format.
    pub fn decode(packet: &'a [u32]) -> Result<Pm4Packet<'a>, PacketError> {
        let Some(&h) = packet.first() else {
            return Err(PacketError::Truncated {
                packet: "PM4 header",
                need: 1,
                got: 0,
            });
        };
        let h = Pm4Header(h);
        h.packet_dwords()?;
        if h.packet_type() == PM4_TYPE_2 {
            return Ok(Pm4Packet::Type2);
        }
        Ok(match h.opcode() {
            IT_NOP => Pm4Packet::Nop,
            IT_WRITE_DATA => Pm4Packet::WriteData(
                read("WRITE_DATA", packet)?,
                &packet[PM4_MEC_WRITE_DATA::DWORDS..],
            ),
            IT_RELEASE_MEM => Pm4Packet::ReleaseMem(read("RELEASE_MEM", packet)?),
            IT_ACQUIRE_MEM => Pm4Packet::AcquireMem,
            IT_INDIRECT_BUFFER => Pm4Packet::IndirectBuffer(read("INDIRECT_BUFFER", packet)?),
            IT_WAIT_REG_MEM => Pm4Packet::WaitRegMem(read("WAIT_REG_MEM", packet)?),
            IT_COPY_DATA => Pm4Packet::CopyData(read("COPY_DATA", packet)?),
            IT_EVENT_WRITE => Pm4Packet::EventWrite,
            op
            @ (IT_SET_CONFIG_REG | IT_SET_SH_REG | IT_SET_SH_REG_OFFSET | IT_SET_UCONFIG_REG) => {
                Pm4Packet::SetRegister(op)
            }
            op @ (IT_DISPATCH_DIRECT | IT_DISPATCH_INDIRECT) => Pm4Packet::Dispatch(op),
            op => Pm4Packet::Other(op),
        })
    }
}
