//! PM4 and SDMA packet builders (kfdtest's encodings) shared by the
//! kernel-model tests, the engine bench and the conformance crate's
//! execution scenarios (included there by path).
#![allow(dead_code)]

pub mod pm4 {
    pub const WRITE_DATA: u32 = 0x37;
    pub const WAIT_REG_MEM: u32 = 0x3C;
    pub const INDIRECT_BUFFER: u32 = 0x3F;
    pub const COPY_DATA: u32 = 0x40;
    pub const EVENT_WRITE: u32 = 0x46;
    pub const RELEASE_MEM: u32 = 0x49;
    pub const ACQUIRE_MEM: u32 = 0x58;
    pub const DISPATCH_DIRECT: u32 = 0x15;

    /// A type-3 header for a packet of `len` dwords (compute shader type).
    pub fn hdr(op: u32, len: usize) -> u32 {
        3 << 30 | ((len as u32 - 2) << 16) | op << 8 | 1 << 1
    }

    pub fn write_data(dst: u64, data: &[u32]) -> Vec<u32> {
        let mut v = vec![
            hdr(WRITE_DATA, 4 + data.len()),
            5 << 8 | 1 << 20,
            dst as u32,
            (dst >> 32) as u32,
        ];
        v.extend_from_slice(data);
        v
    }

    /// RELEASE_MEM: end-of-pipe, `data_sel`/`int_sel` as named.
    pub fn release_mem(addr: u64, data: u64, ctx: u32, data_sel: u32, int_sel: u32) -> Vec<u32> {
        vec![
            hdr(RELEASE_MEM, 8),
            0x14 | 5 << 8,
            int_sel << 24 | data_sel << 29,
            addr as u32,
            (addr >> 32) as u32,
            data as u32,
            (data >> 32) as u32,
            ctx,
        ]
    }

    pub fn wait_reg_mem(addr: u64, reference: u32, mask: u32, function: u32) -> Vec<u32> {
        vec![
            hdr(WAIT_REG_MEM, 7),
            function | 1 << 4,
            addr as u32,
            (addr >> 32) as u32,
            reference,
            mask,
            4,
        ]
    }

    /// COPY_DATA of 64 bits from `src_sel` (5 = immediate `src`, 9 = GPU
    /// clock) to memory.
    pub fn copy_data64(src_sel: u32, src: u64, dst: u64) -> Vec<u32> {
        vec![
            hdr(COPY_DATA, 6),
            src_sel | 5 << 8 | 1 << 16 | 1 << 20,
            src as u32,
            (src >> 32) as u32,
            dst as u32,
            (dst >> 32) as u32,
        ]
    }

    pub fn acquire_mem_gfx9() -> Vec<u32> {
        vec![hdr(ACQUIRE_MEM, 7), 0x28c0_0000, !0, 0, 0, 0, 4]
    }

    pub fn acquire_mem_gfx10() -> Vec<u32> {
        vec![hdr(ACQUIRE_MEM, 8), 0, !0, 0xff, 0, 0, 4, 0x4381]
    }

    pub fn event_write() -> Vec<u32> {
        vec![hdr(EVENT_WRITE, 2), 7 | 4 << 8]
    }

    pub fn indirect_buffer(ib: u64, dwords: u32) -> Vec<u32> {
        vec![
            hdr(INDIRECT_BUFFER, 4),
            ib as u32 & !3,
            (ib >> 32) as u32 & 0xFFFF,
            dwords | 1 << 23,
        ]
    }

    /// The one-dword filler kfdtest pads rings with.
    pub const FILLER: u32 = 0xFFFF_1002;
}

pub mod sdma {
    pub fn copy(src: u64, dst: u64, bytes: u64) -> Vec<u32> {
        vec![
            1,
            (bytes - 1) as u32,
            0,
            src as u32,
            (src >> 32) as u32,
            dst as u32,
            (dst >> 32) as u32,
        ]
    }

    pub fn fence(addr: u64, data: u32) -> Vec<u32> {
        vec![5, addr as u32, (addr >> 32) as u32, data]
    }

    pub fn trap(ctx: u32) -> Vec<u32> {
        vec![6, ctx]
    }

    pub fn write(dst: u64, data: &[u32]) -> Vec<u32> {
        let mut v = vec![2, dst as u32, (dst >> 32) as u32, data.len() as u32 - 1];
        v.extend_from_slice(data);
        v
    }

    pub fn fill(dst: u64, data: u32, bytes: u64) -> Vec<u32> {
        vec![
            11 | 2 << 30,
            dst as u32,
            (dst >> 32) as u32,
            data,
            (bytes - 1) as u32,
        ]
    }

    pub fn poll_mem_eq(addr: u64, reference: u32) -> Vec<u32> {
        vec![
            8 | 3 << 28 | 1 << 31,
            addr as u32,
            (addr >> 32) as u32,
            reference,
            !0,
            4 | 0xfff << 16,
        ]
    }

    /// ROCr's HDP flush: the register form of POLL_REGMEM.
    pub fn hdp_flush() -> Vec<u32> {
        vec![8, 0, 0x8000_0000, 0, 0, 0]
    }

    pub fn atomic_add64(addr: u64, v: u64) -> Vec<u32> {
        vec![
            10 | 47 << 25,
            addr as u32,
            (addr >> 32) as u32,
            v as u32,
            (v >> 32) as u32,
            0,
            0,
            0,
        ]
    }

    pub fn timestamp(addr: u64) -> Vec<u32> {
        vec![13 | 2 << 8, addr as u32, (addr >> 32) as u32]
    }

    pub fn gcr() -> Vec<u32> {
        vec![17 | 1 << 8, 0, 0, 0, 0]
    }

    pub fn nop() -> Vec<u32> {
        vec![0]
    }
}
