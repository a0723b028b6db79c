//! Layouts, constants and request numbers of `kfd_sys::drm` checked
//! against the system's libdrm headers (`/usr/include/libdrm/drm.h` and
//! `amdgpu_drm.h`, libdrm 2.4.114) with the C probe. `kfd_sys::drm` is a
//! subset: every item it declares is checked, except the few family ids
//! newer than that header, which are pinned at the end.

use std::mem::offset_of;

use kfd_sys::drm::*;
use layout_probe::{layout, Probe};

macro_rules! consts {
    ($p:expr; $($name:ident),* $(,)?) => {{
        $( $p.constant(stringify!($name), $name); )*
    }};
}

#[test]
fn drm_layouts_match_system_headers() {
    let mut p = Probe::new(&["fcntl.h", "drm.h", "amdgpu_drm.h"]);
    layout!(
        p,
        drm_version,
        "struct drm_version",
        [
            version_major,
            version_minor,
            version_patchlevel,
            name_len,
            name,
            date_len,
            date,
            desc_len,
            desc
        ]
    );
    layout!(
        p,
        drm_client,
        "struct drm_client",
        [idx, auth, pid, uid, magic, iocs]
    );
    layout!(p, drm_gem_close, "struct drm_gem_close", [handle, pad]);
    layout!(
        p,
        drm_prime_handle,
        "struct drm_prime_handle",
        [handle, flags, fd]
    );
    layout!(
        p,
        drm_amdgpu_gem_create_in,
        "struct drm_amdgpu_gem_create_in",
        [bo_size, alignment, domains, domain_flags]
    );
    layout!(
        p,
        drm_amdgpu_gem_create_out,
        "struct drm_amdgpu_gem_create_out",
        [handle, _pad]
    );
    layout!(p, drm_amdgpu_gem_create, "union drm_amdgpu_gem_create", ["in" => r#in, out]);
    layout!(
        p,
        drm_amdgpu_gem_mmap_in,
        "struct drm_amdgpu_gem_mmap_in",
        [handle, _pad]
    );
    layout!(
        p,
        drm_amdgpu_gem_mmap_out,
        "struct drm_amdgpu_gem_mmap_out",
        [addr_ptr]
    );
    layout!(p, drm_amdgpu_gem_mmap, "union drm_amdgpu_gem_mmap", ["in" => r#in, out]);
    layout!(
        p,
        drm_amdgpu_gem_metadata,
        "struct drm_amdgpu_gem_metadata",
        [handle, op, data]
    );
    p.layout::<drm_amdgpu_gem_metadata_data>("((struct drm_amdgpu_gem_metadata *)0)->data", &[]);
    for (c, off) in [
        (
            "data.flags",
            offset_of!(drm_amdgpu_gem_metadata_data, flags),
        ),
        (
            "data.tiling_info",
            offset_of!(drm_amdgpu_gem_metadata_data, tiling_info),
        ),
        (
            "data.data_size_bytes",
            offset_of!(drm_amdgpu_gem_metadata_data, data_size_bytes),
        ),
        ("data.data", offset_of!(drm_amdgpu_gem_metadata_data, data)),
    ] {
        let base = offset_of!(drm_amdgpu_gem_metadata, data);
        p.constant(
            &format!("offsetof(struct drm_amdgpu_gem_metadata, {c})"),
            (base + off) as u64,
        );
    }
    layout!(
        p,
        drm_amdgpu_gem_op,
        "struct drm_amdgpu_gem_op",
        [handle, op, value]
    );
    layout!(
        p,
        drm_amdgpu_gem_va,
        "struct drm_amdgpu_gem_va",
        [
            handle,
            _pad,
            operation,
            flags,
            va_address,
            offset_in_bo,
            map_size
        ]
    );
    layout!(
        p,
        drm_amdgpu_query_fw,
        "struct drm_amdgpu_query_fw",
        [fw_type, ip_instance, index, _pad]
    );
    layout!(p, drm_amdgpu_info, "struct drm_amdgpu_info",
        [return_pointer, return_size, query, "mode_crtc" => u, "query_hw_ip" => u,
         "read_mmr_reg" => u, "query_fw" => u, "vbios_info" => u, "sensor_info" => u,
         "video_cap" => u]);
    // The anonymous structs of the union, member by member.
    let u = offset_of!(drm_amdgpu_info, u);
    for (c, off) in [
        ("mode_crtc.id", offset_of!(drm_amdgpu_info_mode_crtc, id)),
        (
            "mode_crtc._pad",
            offset_of!(drm_amdgpu_info_mode_crtc, _pad),
        ),
        (
            "query_hw_ip.type",
            offset_of!(drm_amdgpu_info_query_hw_ip, r#type),
        ),
        (
            "query_hw_ip.ip_instance",
            offset_of!(drm_amdgpu_info_query_hw_ip, ip_instance),
        ),
        (
            "read_mmr_reg.dword_offset",
            offset_of!(drm_amdgpu_info_read_mmr_reg, dword_offset),
        ),
        (
            "read_mmr_reg.count",
            offset_of!(drm_amdgpu_info_read_mmr_reg, count),
        ),
        (
            "read_mmr_reg.instance",
            offset_of!(drm_amdgpu_info_read_mmr_reg, instance),
        ),
        (
            "read_mmr_reg.flags",
            offset_of!(drm_amdgpu_info_read_mmr_reg, flags),
        ),
        (
            "vbios_info.type",
            offset_of!(drm_amdgpu_info_vbios_info, r#type),
        ),
        (
            "vbios_info.offset",
            offset_of!(drm_amdgpu_info_vbios_info, offset),
        ),
        ("sensor_info.type", offset_of!(drm_amdgpu_info_type, r#type)),
        ("video_cap.type", offset_of!(drm_amdgpu_info_type, r#type)),
    ] {
        p.constant(
            &format!("offsetof(struct drm_amdgpu_info, {c})"),
            (u + off) as u64,
        );
    }
    for (c, size) in [
        (
            "mode_crtc",
            std::mem::size_of::<drm_amdgpu_info_mode_crtc>(),
        ),
        (
            "query_hw_ip",
            std::mem::size_of::<drm_amdgpu_info_query_hw_ip>(),
        ),
        (
            "read_mmr_reg",
            std::mem::size_of::<drm_amdgpu_info_read_mmr_reg>(),
        ),
        (
            "vbios_info",
            std::mem::size_of::<drm_amdgpu_info_vbios_info>(),
        ),
        ("sensor_info", std::mem::size_of::<drm_amdgpu_info_type>()),
        ("video_cap", std::mem::size_of::<drm_amdgpu_info_type>()),
    ] {
        p.constant(
            &format!("sizeof(((struct drm_amdgpu_info *)0)->{c})"),
            size as u64,
        );
    }
    layout!(
        p,
        drm_amdgpu_info_vram_gtt,
        "struct drm_amdgpu_info_vram_gtt",
        [vram_size, vram_cpu_accessible_size, gtt_size]
    );
    layout!(
        p,
        drm_amdgpu_heap_info,
        "struct drm_amdgpu_heap_info",
        [
            total_heap_size,
            usable_heap_size,
            heap_usage,
            max_allocation
        ]
    );
    layout!(
        p,
        drm_amdgpu_memory_info,
        "struct drm_amdgpu_memory_info",
        [vram, cpu_accessible_vram, gtt]
    );
    layout!(
        p,
        drm_amdgpu_info_firmware,
        "struct drm_amdgpu_info_firmware",
        [ver, feature]
    );
    layout!(
        p,
        drm_amdgpu_info_hw_ip,
        "struct drm_amdgpu_info_hw_ip",
        [
            hw_ip_version_major,
            hw_ip_version_minor,
            capabilities_flags,
            ib_start_alignment,
            ib_size_alignment,
            available_rings,
            _pad
        ]
    );
    layout!(
        p,
        drm_amdgpu_info_device,
        "struct drm_amdgpu_info_device",
        [
            device_id,
            chip_rev,
            external_rev,
            pci_rev,
            family,
            num_shader_engines,
            num_shader_arrays_per_engine,
            gpu_counter_freq,
            max_engine_clock,
            max_memory_clock,
            cu_active_number,
            cu_ao_mask,
            cu_bitmap,
            enabled_rb_pipes_mask,
            num_rb_pipes,
            num_hw_gfx_contexts,
            _pad,
            ids_flags,
            virtual_address_offset,
            virtual_address_max,
            virtual_address_alignment,
            pte_fragment_size,
            gart_page_size,
            ce_ram_size,
            vram_type,
            vram_bit_width,
            vce_harvest_config,
            gc_double_offchip_lds_buf,
            prim_buf_gpu_addr,
            pos_buf_gpu_addr,
            cntl_sb_buf_gpu_addr,
            param_buf_gpu_addr,
            prim_buf_size,
            pos_buf_size,
            cntl_sb_buf_size,
            param_buf_size,
            wave_front_size,
            num_shader_visible_vgprs,
            num_cu_per_sh,
            num_tcc_blocks,
            gs_vgt_table_depth,
            gs_prim_buffer_depth,
            max_gs_waves_per_vgt,
            _pad1,
            cu_ao_bitmap,
            high_va_offset,
            high_va_max,
            pa_sc_tile_steering_override,
            tcc_disabled_mask
        ]
    );

    // Every request, by its C name.
    for info in DRM_IOCTLS {
        p.constant(info.name, info.request);
    }
    consts!(p;
        DRM_IOCTL_BASE, DRM_COMMAND_BASE, DRM_CLOEXEC, DRM_RDWR,
        DRM_AMDGPU_GEM_CREATE, DRM_AMDGPU_GEM_MMAP, DRM_AMDGPU_INFO, DRM_AMDGPU_GEM_METADATA,
        DRM_AMDGPU_GEM_VA, DRM_AMDGPU_GEM_OP,
        AMDGPU_GEM_DOMAIN_CPU, AMDGPU_GEM_DOMAIN_GTT, AMDGPU_GEM_DOMAIN_VRAM,
        AMDGPU_GEM_DOMAIN_GDS, AMDGPU_GEM_DOMAIN_GWS, AMDGPU_GEM_DOMAIN_OA,
        AMDGPU_GEM_DOMAIN_MASK,
        AMDGPU_GEM_CREATE_CPU_ACCESS_REQUIRED, AMDGPU_GEM_CREATE_NO_CPU_ACCESS,
        AMDGPU_GEM_CREATE_CPU_GTT_USWC, AMDGPU_GEM_CREATE_VRAM_CLEARED,
        AMDGPU_GEM_CREATE_VRAM_CONTIGUOUS, AMDGPU_GEM_CREATE_VM_ALWAYS_VALID,
        AMDGPU_GEM_CREATE_EXPLICIT_SYNC, AMDGPU_GEM_CREATE_CP_MQD_GFX9,
        AMDGPU_GEM_CREATE_VRAM_WIPE_ON_RELEASE, AMDGPU_GEM_CREATE_ENCRYPTED,
        AMDGPU_GEM_CREATE_PREEMPTIBLE,
        AMDGPU_GEM_METADATA_OP_SET_METADATA, AMDGPU_GEM_METADATA_OP_GET_METADATA,
        AMDGPU_GEM_OP_GET_GEM_CREATE_INFO, AMDGPU_GEM_OP_SET_PLACEMENT,
        AMDGPU_VA_OP_MAP, AMDGPU_VA_OP_UNMAP, AMDGPU_VA_OP_CLEAR, AMDGPU_VA_OP_REPLACE,
        AMDGPU_VM_DELAY_UPDATE, AMDGPU_VM_PAGE_READABLE, AMDGPU_VM_PAGE_WRITEABLE,
        AMDGPU_VM_PAGE_EXECUTABLE, AMDGPU_VM_PAGE_PRT, AMDGPU_VM_MTYPE_MASK,
        AMDGPU_VM_MTYPE_DEFAULT, AMDGPU_VM_MTYPE_NC, AMDGPU_VM_MTYPE_WC, AMDGPU_VM_MTYPE_CC,
        AMDGPU_VM_MTYPE_UC, AMDGPU_VM_MTYPE_RW,
        AMDGPU_HW_IP_GFX, AMDGPU_HW_IP_COMPUTE, AMDGPU_HW_IP_DMA, AMDGPU_HW_IP_UVD,
        AMDGPU_HW_IP_VCE, AMDGPU_HW_IP_UVD_ENC, AMDGPU_HW_IP_VCN_DEC, AMDGPU_HW_IP_VCN_ENC,
        AMDGPU_HW_IP_VCN_JPEG, AMDGPU_HW_IP_NUM, AMDGPU_HW_IP_INSTANCE_MAX_COUNT,
        AMDGPU_IDS_FLAGS_FUSION, AMDGPU_IDS_FLAGS_PREEMPTION, AMDGPU_IDS_FLAGS_TMZ,
        AMDGPU_INFO_ACCEL_WORKING, AMDGPU_INFO_CRTC_FROM_ID, AMDGPU_INFO_HW_IP_INFO,
        AMDGPU_INFO_HW_IP_COUNT, AMDGPU_INFO_TIMESTAMP, AMDGPU_INFO_FW_VERSION,
        AMDGPU_INFO_NUM_BYTES_MOVED, AMDGPU_INFO_VRAM_USAGE, AMDGPU_INFO_GTT_USAGE,
        AMDGPU_INFO_GDS_CONFIG, AMDGPU_INFO_VRAM_GTT, AMDGPU_INFO_READ_MMR_REG,
        AMDGPU_INFO_DEV_INFO, AMDGPU_INFO_VIS_VRAM_USAGE, AMDGPU_INFO_NUM_EVICTIONS,
        AMDGPU_INFO_MEMORY, AMDGPU_INFO_VCE_CLOCK_TABLE, AMDGPU_INFO_VBIOS,
        AMDGPU_INFO_NUM_HANDLES, AMDGPU_INFO_SENSOR, AMDGPU_INFO_VRAM_LOST_COUNTER,
        AMDGPU_INFO_RAS_ENABLED_FEATURES, AMDGPU_INFO_VIDEO_CAPS,
        AMDGPU_INFO_FW_VCE, AMDGPU_INFO_FW_UVD, AMDGPU_INFO_FW_GMC, AMDGPU_INFO_FW_GFX_ME,
        AMDGPU_INFO_FW_GFX_PFP, AMDGPU_INFO_FW_GFX_CE, AMDGPU_INFO_FW_GFX_RLC,
        AMDGPU_INFO_FW_GFX_MEC, AMDGPU_INFO_FW_SMC, AMDGPU_INFO_FW_SDMA, AMDGPU_INFO_FW_SOS,
        AMDGPU_INFO_FW_ASD, AMDGPU_INFO_FW_VCN, AMDGPU_INFO_FW_GFX_RLC_RESTORE_LIST_CNTL,
        AMDGPU_INFO_FW_GFX_RLC_RESTORE_LIST_GPM_MEM, AMDGPU_INFO_FW_GFX_RLC_RESTORE_LIST_SRM_MEM,
        AMDGPU_INFO_FW_DMCU, AMDGPU_INFO_FW_TA, AMDGPU_INFO_FW_DMCUB, AMDGPU_INFO_FW_TOC,
        AMDGPU_INFO_MMR_SE_INDEX_SHIFT, AMDGPU_INFO_MMR_SE_INDEX_MASK,
        AMDGPU_INFO_MMR_SH_INDEX_SHIFT, AMDGPU_INFO_MMR_SH_INDEX_MASK,
        AMDGPU_VRAM_TYPE_UNKNOWN, AMDGPU_VRAM_TYPE_GDDR1, AMDGPU_VRAM_TYPE_DDR2,
        AMDGPU_VRAM_TYPE_GDDR3, AMDGPU_VRAM_TYPE_GDDR4, AMDGPU_VRAM_TYPE_GDDR5,
        AMDGPU_VRAM_TYPE_HBM, AMDGPU_VRAM_TYPE_DDR3, AMDGPU_VRAM_TYPE_DDR4,
        AMDGPU_VRAM_TYPE_GDDR6, AMDGPU_VRAM_TYPE_DDR5,
        AMDGPU_FAMILY_UNKNOWN, AMDGPU_FAMILY_SI, AMDGPU_FAMILY_CI, AMDGPU_FAMILY_KV,
        AMDGPU_FAMILY_VI, AMDGPU_FAMILY_CZ, AMDGPU_FAMILY_AI, AMDGPU_FAMILY_RV,
        AMDGPU_FAMILY_NV, AMDGPU_FAMILY_VGH, AMDGPU_FAMILY_YC,
    );
    p.run(env!("CARGO_TARGET_TMPDIR"));
}

/// Family ids newer than libdrm 2.4.114, from the kernel's amdgpu_drm.h
/// (Linux 6.12+ and amd-staging 2025).
#[test]
fn newer_families_are_pinned() {
    assert_eq!(AMDGPU_FAMILY_GC_11_0_0, 145);
    assert_eq!(AMDGPU_FAMILY_GC_11_0_1, 148);
    assert_eq!(AMDGPU_FAMILY_GC_10_3_6, 149);
    assert_eq!(AMDGPU_FAMILY_GC_11_5_0, 150);
    assert_eq!(AMDGPU_FAMILY_GC_10_3_7, 151);
    assert_eq!(AMDGPU_FAMILY_GC_12_0_0, 152);
    assert_eq!(AMDGPU_FAMILY_GC_11_5_4, 154);
}

/// The request numbers the reference notes record from a live trace.
#[test]
fn traced_requests() {
    assert_eq!(DRM_IOCTL_VERSION.request(), 0xc040_6400);
    assert_eq!(DRM_IOCTL_GET_CLIENT.request(), 0xc028_6405);
    assert_eq!(DRM_IOCTL_AMDGPU_INFO.request(), 0x4020_6445);
}
