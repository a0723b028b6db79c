//! A small gfx9 kernel in machine code, for the examples and tests that
//! need a kernel without a compiler (kfd-codeobj's samples are compiled
//! code objects; this is the bare code and its launch facts).

use kfd_sys::hsa::{kernel_code_properties, kernel_descriptor_t};

/// gfx9 machine code (gfx900 through gfx942) that stores each work-item's
/// global id X at `out[id]`, `out` being the first kernel argument (a
/// pointer): the kernarg pointer comes in `s[0:1]`, the workgroup id X in
/// `s2`, and the workgroup is 64 work-items wide. Assembled with Debian's
/// `llvm-mc -triple=amdgcn-amd-amdhsa -mcpu=gfx90a -show-encoding` from:
///
/// ```text
/// s_load_dwordx2 s[4:5], s[0:1], 0x0
/// s_lshl_b32 s3, s2, 6
/// v_and_b32 v1, 0x3ff, v0
/// v_add_u32 v1, s3, v1
/// v_lshlrev_b32 v2, 2, v1
/// s_waitcnt lgkmcnt(0)
/// v_mov_b32 v3, s5
/// v_add_co_u32 v2, vcc, s4, v2
/// v_addc_co_u32 v3, vcc, 0, v3, vcc
/// global_store_dword v[2:3], v1, off
/// s_endpgm
/// ```
pub const FILL: &[u32] = &[
    0xc006_0100,
    0x0000_0000,
    0x8e03_8602,
    0x2602_00ff,
    0x0000_03ff,
    0x6802_0203,
    0x2404_0282,
    0xbf8c_c07f,
    0x7e06_0205,
    0x3204_0404,
    0x3806_0680,
    0xdc70_8000,
    0x007f_0102,
    0xbf81_0000,
];

/// [`FILL`]'s `compute_pgm_rsrc2`: two user SGPRs (the kernarg pointer)
/// and the workgroup id X.
pub const FILL_RSRC2: u32 = 2 << 1 | 1 << 7;

/// [`FILL`]'s kernel code properties: the kernarg segment pointer.
pub const FILL_PROPERTIES: u32 = kernel_code_properties::ENABLE_SGPR_KERNARG_SEGMENT_PTR;

/// A code-object v3 kernel descriptor for [`FILL`] whose first
/// instruction is `entry_offset` bytes from the descriptor.
pub fn fill_descriptor(entry_offset: i64) -> kernel_descriptor_t {
    kernel_descriptor_t {
        kernel_code_entry_byte_offset: entry_offset,
        compute_pgm_rsrc2: FILL_RSRC2,
        kernel_code_properties: FILL_PROPERTIES as u16,
        ..Default::default()
    }
}
