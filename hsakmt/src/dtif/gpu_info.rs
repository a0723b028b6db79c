//! `amdgpu_query_gpu_info`: libdrm's `struct amdgpu_gpu_info` of a render
//! node, filled as libdrm's `amdgpu_query_gpu_info_init` fills it.
//!
//! - From `AMDGPU_INFO_DEV_INFO`: ids, revisions, family, clocks, shader
//!   engine and array counts, render backends, counter frequency, CU
//!   counts and bitmaps, VRAM type and width, CE RAM, VCE harvesting.
//! - From register reads (`AMDGPU_INFO_READ_MMR_REG`), the ones libdrm
//!   makes: `GB_ADDR_CONFIG` for every family; before `AMDGPU_FAMILY_AI`
//!   (gfx8 and older) also `CC_RB_BACKEND_DISABLE`, `PA_SC_RASTER_CONFIG`
//!   (and `_1` from CI on) per shader engine, the 32 `GB_TILE_MODE` and
//!   (from CI on) 16 `GB_MACROTILE_MODE` registers and `MC_ARB_RAMCFG`. A
//!   failing read fails the query with its errno, as it fails libdrm's
//!   device initialisation. kfd-sim's GPUs are all gfx9 or newer, so it is
//!   asked for `GB_ADDR_CONFIG` only, which it answers from the preset's
//!   identity; it refuses the older registers (`EINVAL`).
//! - Never set, by libdrm either: `avail_quad_shader_pipes`,
//!   `max_quad_shader_pipes`, `cache_entries_per_quad_pipe` (0); and
//!   for gfx9+ `backend_disable`, `mc_arb_ramcfg`, the tile modes and the
//!   raster configs (0, libdrm does not read them there).
//! - This is libdrm 2.4.114's 416-byte struct. Newer libdrm appends
//!   `min_engine_clk` and `min_memory_clk` (from `DEV_INFO` fields newer
//!   than our `drm_amdgpu_info_device`): a caller built against such a
//!   header gets those two untouched (ROCr 7.2.4 reads only
//!   `gpu_counter_freq`).

use kfd_sys::drm::{
    drm_amdgpu_info, drm_amdgpu_info_device, drm_amdgpu_info_read_mmr_reg, drm_amdgpu_info_union,
    AMDGPU_FAMILY_AI, AMDGPU_FAMILY_CI, AMDGPU_INFO_MMR_SH_INDEX_MASK,
    AMDGPU_INFO_MMR_SH_INDEX_SHIFT, AMDGPU_INFO_READ_MMR_REG, DRM_IOCTL_AMDGPU_INFO,
};
use kfd_sys::{DeviceFile, Errno};

/// `CC_RB_BACKEND_DISABLE` (dword offset).
const CC_RB_BACKEND_DISABLE: u32 = 0x263d;
/// `GB_ADDR_CONFIG`.
const GB_ADDR_CONFIG: u32 = 0x263e;
/// `GB_TILE_MODE0` (32 registers).
const GB_TILE_MODE0: u32 = 0x2644;
/// `GB_MACROTILE_MODE0` (16 registers).
const GB_MACROTILE_MODE0: u32 = 0x2664;
/// `MC_ARB_RAMCFG`.
const MC_ARB_RAMCFG: u32 = 0x9d8;
/// `PA_SC_RASTER_CONFIG`.
const PA_SC_RASTER_CONFIG: u32 = 0xa0d4;
/// `PA_SC_RASTER_CONFIG_1`.
const PA_SC_RASTER_CONFIG_1: u32 = 0xa0d5;
/// The instance word for "all instances".
const ALL_INSTANCES: u32 = 0xffff_ffff;

/// `struct amdgpu_gpu_info` of libdrm's `amdgpu.h` (416 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct amdgpu_gpu_info {
    /// PCI device id.
    pub asic_id: u32,
    /// Internal chip revision.
    pub chip_rev: u32,
    /// External chip revision.
    pub chip_external_rev: u32,
    /// `AMDGPU_FAMILY_*`.
    pub family_id: u32,
    /// `AMDGPU_IDS_FLAGS_*`.
    pub ids_flags: u64,
    /// Maximum engine clock (kHz).
    pub max_engine_clk: u64,
    /// Maximum memory clock (kHz).
    pub max_memory_clk: u64,
    /// Shader engines.
    pub num_shader_engines: u32,
    /// Shader arrays per engine.
    pub num_shader_arrays_per_engine: u32,
    /// Available quad shader pipes.
    pub avail_quad_shader_pipes: u32,
    /// Maximum quad shader pipes.
    pub max_quad_shader_pipes: u32,
    /// Cache entries per quad pipe.
    pub cache_entries_per_quad_pipe: u32,
    /// Hardware gfx contexts.
    pub num_hw_gfx_contexts: u32,
    /// Render backends.
    pub rb_pipes: u32,
    /// Enabled render backends.
    pub enabled_rb_pipes_mask: u32,
    /// GPU counter frequency (kHz).
    pub gpu_counter_freq: u32,
    /// Disabled backends per shader engine.
    pub backend_disable: [u32; 4],
    /// `MC_ARB_RAMCFG`.
    pub mc_arb_ramcfg: u32,
    /// `GB_ADDR_CONFIG`.
    pub gb_addr_cfg: u32,
    /// Tile modes.
    pub gb_tile_mode: [u32; 32],
    /// Macro tile modes.
    pub gb_macro_tile_mode: [u32; 16],
    /// `PA_SC_RASTER_CONFIG` per shader engine.
    pub pa_sc_raster_cfg: [u32; 4],
    /// `PA_SC_RASTER_CONFIG_1` per shader engine.
    pub pa_sc_raster_cfg1: [u32; 4],
    /// Active compute units.
    pub cu_active_number: u32,
    /// Always-on CU mask.
    pub cu_ao_mask: u32,
    /// CU bitmap per shader engine and array.
    pub cu_bitmap: [[u32; 4]; 4],
    /// `AMDGPU_VRAM_TYPE_*`.
    pub vram_type: u32,
    /// VRAM bus width (bits).
    pub vram_bit_width: u32,
    /// Constant engine RAM size.
    pub ce_ram_size: u32,
    /// VCE harvesting.
    pub vce_harvest_config: u32,
    /// PCI revision.
    pub pci_rev_id: u32,
}

/// `amdgpu_gpu_info` from the kernel's device record, field for field
/// as libdrm's `amdgpu_query_gpu_info_init` copies it.
fn from_device(d: &drm_amdgpu_info_device) -> amdgpu_gpu_info {
    amdgpu_gpu_info {
        asic_id: d.device_id,
        chip_rev: d.chip_rev,
        chip_external_rev: d.external_rev,
        family_id: d.family,
        ids_flags: d.ids_flags,
        max_engine_clk: d.max_engine_clock,
        max_memory_clk: d.max_memory_clock,
        num_shader_engines: d.num_shader_engines,
        num_shader_arrays_per_engine: d.num_shader_arrays_per_engine,
        num_hw_gfx_contexts: d.num_hw_gfx_contexts,
        rb_pipes: d.num_rb_pipes,
        enabled_rb_pipes_mask: d.enabled_rb_pipes_mask,
        gpu_counter_freq: d.gpu_counter_freq,
        cu_active_number: d.cu_active_number,
        cu_ao_mask: d.cu_ao_mask,
        cu_bitmap: d.cu_bitmap,
        vram_type: d.vram_type,
        vram_bit_width: d.vram_bit_width,
        ce_ram_size: d.ce_ram_size,
        vce_harvest_config: d.vce_harvest_config,
        pci_rev_id: d.pci_rev,
        ..Default::default()
    }
}

/// `count` registers from dword `first` of shader-engine/array
/// `instance` (`AMDGPU_INFO_READ_MMR_REG`).
fn read_registers(
    render: &DeviceFile,
    first: u32,
    count: u32,
    instance: u32,
) -> Result<Vec<u32>, Errno> {
    let mut out = vec![0u32; count as usize];
    let mut req = drm_amdgpu_info {
        return_pointer: out.as_mut_ptr() as u64,
        return_size: count * 4,
        query: AMDGPU_INFO_READ_MMR_REG,
        u: drm_amdgpu_info_union {
            read_mmr_reg: drm_amdgpu_info_read_mmr_reg {
                dword_offset: first,
                count,
                instance,
                flags: 0,
            },
        },
    };
    // SAFETY: `return_pointer` is `out`, `count` live u32s (the
    // `return_size` bytes the kernel may write); any value is a valid u32.
    unsafe { render.ioctl(DRM_IOCTL_AMDGPU_INFO, &mut req)? };
    Ok(out)
}

fn read_one(render: &DeviceFile, reg: u32, instance: u32) -> Result<u32, Errno> {
    Ok(read_registers(render, reg, 1, instance)?[0])
}

/// The register-derived fields, read as libdrm reads them.
fn read_register_fields(render: &DeviceFile, gi: &mut amdgpu_gpu_info) -> Result<(), Errno> {
    let old = gi.family_id < AMDGPU_FAMILY_AI;
    if old {
        let engines = (gi.num_shader_engines as usize).min(gi.backend_disable.len());
        for se in 0..engines {
            let instance =
                se as u32 | (AMDGPU_INFO_MMR_SH_INDEX_MASK << AMDGPU_INFO_MMR_SH_INDEX_SHIFT);
            gi.backend_disable[se] =
                (read_one(render, CC_RB_BACKEND_DISABLE, instance)? >> 16) & 0xff;
            gi.pa_sc_raster_cfg[se] = read_one(render, PA_SC_RASTER_CONFIG, instance)?;
            if gi.family_id >= AMDGPU_FAMILY_CI {
                gi.pa_sc_raster_cfg1[se] = read_one(render, PA_SC_RASTER_CONFIG_1, instance)?;
            }
        }
    }
    gi.gb_addr_cfg = read_one(render, GB_ADDR_CONFIG, ALL_INSTANCES)?;
    if old {
        let tiles = read_registers(render, GB_TILE_MODE0, 32, ALL_INSTANCES)?;
        gi.gb_tile_mode.copy_from_slice(&tiles);
        if gi.family_id >= AMDGPU_FAMILY_CI {
            let macros = read_registers(render, GB_MACROTILE_MODE0, 16, ALL_INSTANCES)?;
            gi.gb_macro_tile_mode.copy_from_slice(&macros);
        }
        gi.mc_arb_ramcfg = read_one(render, MC_ARB_RAMCFG, ALL_INSTANCES)?;
    }
    Ok(())
}

/// The `amdgpu_gpu_info` of render node `render` (see the module docs).
pub fn query(render: &DeviceFile) -> Result<amdgpu_gpu_info, Errno> {
    let d = kfd_sys::drm::query_device_info(render)?;
    let mut gi = from_device(&d);
    read_register_fields(render, &mut gi)?;
    Ok(gi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_info_has_libdrm_layout() {
        assert_eq!(std::mem::size_of::<amdgpu_gpu_info>(), 416);
        assert_eq!(std::mem::offset_of!(amdgpu_gpu_info, gpu_counter_freq), 72);
        assert_eq!(std::mem::offset_of!(amdgpu_gpu_info, cu_bitmap), 332);
        assert_eq!(std::mem::offset_of!(amdgpu_gpu_info, vram_type), 396);
        assert_eq!(std::mem::offset_of!(amdgpu_gpu_info, pci_rev_id), 412);
    }

    #[test]
    fn gpu_info_copies_the_device_record() {
        let d = drm_amdgpu_info_device {
            device_id: 0x740f,
            family: 141,
            gpu_counter_freq: 100_000,
            num_rb_pipes: 8,
            pci_rev: 2,
            ..Default::default()
        };
        let gi = from_device(&d);
        assert_eq!(
            (
                gi.asic_id,
                gi.family_id,
                gi.gpu_counter_freq,
                gi.rb_pipes,
                gi.pci_rev_id
            ),
            (0x740f, 141, 100_000, 8, 2)
        );
        assert_eq!(gi.gb_addr_cfg, 0);
    }
}
