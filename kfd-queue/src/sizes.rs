//! Per-generation sizes of the buffers a compute queue needs: the EOP
//! buffer and the context save/restore (CWSR) area with its control stack
//! and debugger area.
//!
//! The numbers follow what the C library computes from the node
//! properties (and what the kernel checks them against since it validates
//! queue buffers):
//!
//! - waves to save: pre-gfx10 `min(CUs × 40, shader engines / arrays per
//!   engine × 512)`; gfx10–gfx12 `CUs × 32`; gfx12.5 `CUs × SIMDs per CU ×
//!   waves per SIMD` (CUs per XCC);
//! - control stack: a 40-byte save-area header plus 8 bytes per wave
//!   (12 from gfx10) plus 8, page aligned, capped at 0x7000 on gfx10;
//! - work-group data per CU: VGPRs + SGPRs + LDS + hardware registers;
//! - debugger area: 32 bytes per wave, 64-byte aligned;
//! - everything once per XCC.
//!
//! libhsakmt 5.2.3 and 6.2.4 computed the work-group data with the
//! node's VGPR size and fixed other sizes (16 KiB SGPRs, 64 KiB LDS, 4 KiB
//! hardware registers: [`QueueRules::fixed_work_group_sizes`]); 5.2.3 also
//! laid it out over all CUs of the node as one area (no XCC split:
//! [`QueueRules::save_area_per_xcc`] off), and gave every queue on gfx8+ a
//! 4 KiB EOP buffer, AQL queues on gfx94x included
//! ([`QueueRules::eop_for_every_queue`]).

use kfd_topology::Node;

use crate::QueueRules;

/// Packed gfx versions (`major << 16 | minor << 8 | stepping`).
pub mod gfx {
    /// gfx801 (Carrizo): first with CWSR.
    pub const CARRIZO: u32 = 0x08_00_01;
    /// gfx802 (Tonga).
    pub const TONGA: u32 = 0x08_00_02;
    /// gfx900 (Vega10): first SOC15 (64-bit doorbells, dynamic doorbell
    /// offsets).
    pub const VEGA10: u32 = 0x09_00_00;
    /// gfx940..gfx942 family (Aqua Vanjaram), compared without stepping.
    pub const AQUA_VANJARAM: u32 = 0x09_04_00;
    /// gfx1010 (Navi10): first gfx10.
    pub const NAVI10: u32 = 0x0A_01_00;
    /// gfx1250.
    pub const GFX1250: u32 = 0x0C_05_00;
}

/// Size of `HsaUserContextSaveAreaHeader`.
pub const SAVE_AREA_HEADER_SIZE: u32 = 40;
/// Page size the sizes are aligned to: [`kfd_sys::PAGE_SIZE`] as the `u32`
/// the sizes are.
pub const PAGE: u32 = kfd_sys::PAGE_SIZE as u32;
/// EOP buffer size on Tonga.
const TONGA_EOP_SIZE: u32 = 0x8000;

fn align_up(v: u32, a: u32) -> u32 {
    v.div_ceil(a) * a
}

/// The CWSR layout of one queue on one node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CwsrSizes {
    /// Waves the area can hold (per XCC).
    pub waves: u32,
    /// Control stack size, including the save-area header (per XCC).
    pub ctl_stack_size: u32,
    /// Control stack plus work-group data (per XCC); what CREATE_QUEUE
    /// gets as `ctx_save_restore_size`.
    pub ctx_save_restore_size: u32,
    /// Debugger area per XCC.
    pub debug_memory_size: u32,
    /// XCCs of the node.
    pub num_xcc: u32,
    /// Bytes to allocate: `(ctx_save_restore_size + debug_memory_size) ×
    /// num_xcc`.
    pub total_size: u32,
}

/// The packed gfx version the C library uses for sizing
/// (`EngineId`), 0 if unknown.
pub fn gfx_of(node: &Node) -> u32 {
    node.derived.gfx_version.map_or(0, |v| v.full())
}

/// The VGPR bytes per CU of the node as its snapshot derived them (the
/// C library sizes the save area with the same value it reports as
/// `VGPRSizePerCU`), 256 KiB when unknown.
fn vgpr_size_per_cu(node: &Node) -> u32 {
    match node.derived.vgpr_size_per_cu {
        0 => 0x40000,
        v => v,
    }
}

fn sgpr_size_per_cu(gfxv: u32) -> u32 {
    if gfxv == gfx::GFX1250 {
        0x8000
    } else {
        0x4000
    }
}

fn hwreg_size_per_cu(node: &Node, gfxv: u32) -> u32 {
    if gfxv < gfx::GFX1250 {
        return 0x1000;
    }
    let per_wave = if gfxv == gfx::GFX1250 { 512 } else { 128 };
    node.properties.max_waves_per_simd * node.properties.simd_per_cu * per_wave
}

/// Number of XCCs of a node (at least 1).
pub fn num_xcc(node: &Node) -> u32 {
    node.properties.num_xcc.max(node.derived.num_xcc).max(1)
}

/// Waves the CWSR area of a node must hold per XCC, for `cu_num` CUs per
/// XCC.
pub fn num_waves(node: &Node, gfxv: u32, cu_num: u32) -> u32 {
    let p = &node.properties;
    if gfxv < gfx::NAVI10 {
        let per_se = p
            .array_count
            .checked_div(p.simd_arrays_per_engine)
            .unwrap_or(0);
        (cu_num * 40).min(per_se * 512)
    } else if gfxv < gfx::GFX1250 {
        cu_num * 32
    } else {
        cu_num * p.simd_per_cu * p.max_waves_per_simd
    }
}

/// The CWSR sizes of a compute queue on `node` as a C library with
/// `rules` computes them, or `None` when the node needs no CWSR area
/// (pre-Carrizo, or no compute units).
pub fn cwsr_sizes(node: &Node, rules: &QueueRules) -> Option<CwsrSizes> {
    let gfxv = gfx_of(node);
    let p = &node.properties;
    if gfxv < gfx::CARRIZO || p.simd_count == 0 || p.simd_per_cu == 0 {
        return None;
    }
    let xcc = if rules.save_area_per_xcc {
        num_xcc(node)
    } else {
        1
    };
    let cu_num = p.simd_count / p.simd_per_cu / xcc;
    let waves = num_waves(node, gfxv, cu_num);
    let per_wave = if gfxv >= gfx::NAVI10 { 12 } else { 8 };
    let ctl_stack = waves * per_wave + 8;
    let mut ctl_stack_size = align_up(SAVE_AREA_HEADER_SIZE + ctl_stack, PAGE);
    if gfxv & 0x3f_0000 == 0x0A_0000 {
        ctl_stack_size = ctl_stack_size.min(0x7000);
    }
    let wg_per_cu = if rules.fixed_work_group_sizes {
        vgpr_size_per_cu(node) + 0x4000 + 0x10000 + 0x1000
    } else {
        vgpr_size_per_cu(node)
            + sgpr_size_per_cu(gfxv)
            + (p.lds_size_in_kb << 10)
            + hwreg_size_per_cu(node, gfxv)
    };
    let wg_data = cu_num * wg_per_cu;
    let ctx_save_restore_size = ctl_stack_size + align_up(wg_data, PAGE);
    let debug_memory_size = align_up(waves * 32, 64);
    Some(CwsrSizes {
        waves,
        ctl_stack_size,
        ctx_save_restore_size,
        debug_memory_size,
        num_xcc: xcc,
        total_size: (ctx_save_restore_size + debug_memory_size) * xcc,
    })
}

/// EOP buffer size for a queue of C type `hsa_type` (`HSA_QUEUE_TYPE`) on
/// a node of gfx version `gfxv` for a C library with `rules`; 0 means no
/// EOP buffer.
pub fn eop_buffer_size(gfxv: u32, hsa_type: u32, rules: &QueueRules) -> u32 {
    if gfxv == gfx::TONGA {
        TONGA_EOP_SIZE
    } else if !rules.eop_for_every_queue && gfxv & !0xff == gfx::AQUA_VANJARAM {
        // Only PM4 compute queues need one on gfx94x.
        if hsa_type == 1 {
            4096
        } else {
            0
        }
    } else if gfxv >= 0x08_00_00 {
        4096
    } else {
        0
    }
}

/// Size of the doorbell page of a node: 1024 doorbells of 8 bytes (SOC15)
/// or 4 bytes, at least one page.
pub fn doorbell_page_size(gfxv: u32) -> u32 {
    (1024 * doorbell_size(gfxv)).max(PAGE)
}

/// Bytes per doorbell.
pub fn doorbell_size(gfxv: u32) -> u32 {
    if gfxv >= gfx::VEGA10 {
        8
    } else {
        4
    }
}
