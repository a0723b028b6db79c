//! Layouts and constants of `kfd_sys::hsa` checked against Debian's
//! libhsa-runtime-dev headers (`/usr/include/hsa`) with the C probe; the
//! code-object v3 kernel descriptor (LLVM's C++ header) and ROCr's
//! internal PM4-IB packet are pinned by hand.

use std::mem::{align_of, offset_of, size_of};

use kfd_sys::hsa::*;
use layout_probe::{layout, Probe};

#[test]
fn hsa_layouts_match_the_headers() {
    let mut p = Probe::new(&[
        "hsa/hsa.h",
        "hsa/hsa_ext_amd.h",
        "hsa/amd_hsa_queue.h",
        "hsa/amd_hsa_signal.h",
        "hsa/amd_hsa_kernel_code.h",
    ]);
    p.prelude("#include <stdint.h>\n");
    layout!(
        p,
        hsa_kernel_dispatch_packet_t,
        "hsa_kernel_dispatch_packet_t",
        [
            header,
            setup,
            workgroup_size_x,
            workgroup_size_y,
            workgroup_size_z,
            reserved0,
            grid_size_x,
            grid_size_y,
            grid_size_z,
            private_segment_size,
            group_segment_size,
            kernel_object,
            kernarg_address,
            reserved2,
            completion_signal
        ]
    );
    layout!(p, hsa_signal_t, "hsa_signal_t", [handle]);
    layout!(
        p,
        hsa_barrier_and_packet_t,
        "hsa_barrier_and_packet_t",
        [
            header,
            reserved0,
            reserved1,
            dep_signal,
            reserved2,
            completion_signal
        ]
    );
    layout!(
        p,
        hsa_barrier_or_packet_t,
        "hsa_barrier_or_packet_t",
        [
            header,
            reserved0,
            reserved1,
            dep_signal,
            reserved2,
            completion_signal
        ]
    );
    layout!(
        p,
        hsa_amd_vendor_packet_header_t,
        "hsa_amd_vendor_packet_header_t",
        [header, AmdFormat, reserved]
    );
    layout!(
        p,
        hsa_amd_barrier_value_packet_t,
        "hsa_amd_barrier_value_packet_t",
        [
            header,
            reserved0,
            signal,
            value,
            mask,
            cond,
            reserved1,
            reserved2,
            reserved3,
            completion_signal
        ]
    );
    layout!(p, hsa_queue_t, "hsa_queue_t", ["type" => r#type, features, base_address, doorbell_signal, size, reserved1, id]);
    layout!(
        p,
        amd_queue_t,
        "amd_queue_t",
        [
            hsa_queue,
            reserved1,
            write_dispatch_id,
            group_segment_aperture_base_hi,
            private_segment_aperture_base_hi,
            max_cu_id,
            max_wave_id,
            max_legacy_doorbell_dispatch_id_plus_1,
            legacy_doorbell_lock,
            reserved2,
            read_dispatch_id,
            read_dispatch_id_field_base_byte_offset,
            compute_tmpring_size,
            scratch_resource_descriptor,
            scratch_backing_memory_location,
            scratch_backing_memory_byte_size,
            scratch_wave64_lane_byte_size,
            queue_properties,
            reserved3,
            queue_inactive_signal,
            reserved4
        ]
    );
    layout!(
        p,
        amd_signal_t,
        "amd_signal_t",
        [
            kind,
            value,
            event_mailbox_ptr,
            event_id,
            reserved1,
            start_ts,
            end_ts,
            queue_ptr,
            reserved3
        ]
    );
    layout!(
        p,
        amd_control_directives_t,
        "amd_control_directives_t",
        [
            enabled_control_directives,
            enable_break_exceptions,
            enable_detect_exceptions,
            max_dynamic_group_size,
            max_flat_grid_size,
            max_flat_workgroup_size,
            required_dim,
            reserved1,
            required_grid_size,
            required_workgroup_size,
            reserved2
        ]
    );
    layout!(
        p,
        amd_kernel_code_t,
        "amd_kernel_code_t",
        [
            amd_kernel_code_version_major,
            amd_kernel_code_version_minor,
            amd_machine_kind,
            amd_machine_version_major,
            amd_machine_version_minor,
            amd_machine_version_stepping,
            kernel_code_entry_byte_offset,
            kernel_code_prefetch_byte_offset,
            kernel_code_prefetch_byte_size,
            max_scratch_backing_memory_byte_size,
            compute_pgm_rsrc1,
            compute_pgm_rsrc2,
            kernel_code_properties,
            workitem_private_segment_byte_size,
            workgroup_group_segment_byte_size,
            gds_segment_byte_size,
            kernarg_segment_byte_size,
            workgroup_fbarrier_count,
            wavefront_sgpr_count,
            workitem_vgpr_count,
            reserved_vgpr_first,
            reserved_vgpr_count,
            reserved_sgpr_first,
            reserved_sgpr_count,
            debug_wavefront_private_segment_offset_sgpr,
            debug_private_segment_buffer_sgpr,
            kernarg_segment_alignment,
            group_segment_alignment,
            private_segment_alignment,
            wavefront_size,
            call_convention,
            reserved1,
            runtime_loader_kernel_symbol,
            control_directives
        ]
    );
    for (name, v) in [
        (
            "HSA_PACKET_TYPE_VENDOR_SPECIFIC",
            HSA_PACKET_TYPE_VENDOR_SPECIFIC,
        ),
        ("HSA_PACKET_TYPE_INVALID", HSA_PACKET_TYPE_INVALID),
        (
            "HSA_PACKET_TYPE_KERNEL_DISPATCH",
            HSA_PACKET_TYPE_KERNEL_DISPATCH,
        ),
        ("HSA_PACKET_TYPE_BARRIER_AND", HSA_PACKET_TYPE_BARRIER_AND),
        (
            "HSA_PACKET_TYPE_AGENT_DISPATCH",
            HSA_PACKET_TYPE_AGENT_DISPATCH,
        ),
        ("HSA_PACKET_TYPE_BARRIER_OR", HSA_PACKET_TYPE_BARRIER_OR),
        ("HSA_PACKET_HEADER_TYPE", HSA_PACKET_HEADER_TYPE),
        ("HSA_PACKET_HEADER_BARRIER", HSA_PACKET_HEADER_BARRIER),
        (
            "HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE",
            HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE,
        ),
        (
            "HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE",
            HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE,
        ),
        ("HSA_FENCE_SCOPE_NONE", HSA_FENCE_SCOPE_NONE),
        ("HSA_FENCE_SCOPE_AGENT", HSA_FENCE_SCOPE_AGENT),
        ("HSA_FENCE_SCOPE_SYSTEM", HSA_FENCE_SCOPE_SYSTEM),
        (
            "HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS",
            HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS,
        ),
    ] {
        p.constant(name, v);
    }
    p.constant(
        "HSA_AMD_PACKET_TYPE_BARRIER_VALUE",
        HSA_AMD_PACKET_TYPE_BARRIER_VALUE,
    );
    for (name, v) in [
        ("HSA_SIGNAL_CONDITION_EQ", HSA_SIGNAL_CONDITION_EQ),
        ("HSA_SIGNAL_CONDITION_NE", HSA_SIGNAL_CONDITION_NE),
        ("HSA_SIGNAL_CONDITION_LT", HSA_SIGNAL_CONDITION_LT),
        ("HSA_SIGNAL_CONDITION_GTE", HSA_SIGNAL_CONDITION_GTE),
        (
            "AMD_QUEUE_PROPERTIES_ENABLE_TRAP_HANDLER",
            AMD_QUEUE_PROPERTIES_ENABLE_TRAP_HANDLER,
        ),
        (
            "AMD_QUEUE_PROPERTIES_IS_PTR64",
            AMD_QUEUE_PROPERTIES_IS_PTR64,
        ),
        (
            "AMD_QUEUE_PROPERTIES_ENABLE_TRAP_HANDLER_DEBUG_SGPRS",
            AMD_QUEUE_PROPERTIES_ENABLE_TRAP_HANDLER_DEBUG_SGPRS,
        ),
        (
            "AMD_QUEUE_PROPERTIES_ENABLE_PROFILING",
            AMD_QUEUE_PROPERTIES_ENABLE_PROFILING,
        ),
        (
            "AMD_QUEUE_PROPERTIES_USE_SCRATCH_ONCE",
            AMD_QUEUE_PROPERTIES_USE_SCRATCH_ONCE,
        ),
    ] {
        p.constant(name, v);
    }
    for (name, v) in [
        ("AMD_SIGNAL_KIND_INVALID", AMD_SIGNAL_KIND_INVALID),
        ("AMD_SIGNAL_KIND_USER", AMD_SIGNAL_KIND_USER),
        ("AMD_SIGNAL_KIND_DOORBELL", AMD_SIGNAL_KIND_DOORBELL),
        (
            "AMD_SIGNAL_KIND_LEGACY_DOORBELL",
            AMD_SIGNAL_KIND_LEGACY_DOORBELL,
        ),
    ] {
        p.constant(name, v);
    }
    {
        use kernel_code_properties::*;
        for (name, v) in [
            (
                "AMD_KERNEL_CODE_PROPERTIES_ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER",
                ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER,
            ),
            (
                "AMD_KERNEL_CODE_PROPERTIES_ENABLE_SGPR_DISPATCH_PTR",
                ENABLE_SGPR_DISPATCH_PTR,
            ),
            (
                "AMD_KERNEL_CODE_PROPERTIES_ENABLE_SGPR_QUEUE_PTR",
                ENABLE_SGPR_QUEUE_PTR,
            ),
            (
                "AMD_KERNEL_CODE_PROPERTIES_ENABLE_SGPR_KERNARG_SEGMENT_PTR",
                ENABLE_SGPR_KERNARG_SEGMENT_PTR,
            ),
            (
                "AMD_KERNEL_CODE_PROPERTIES_ENABLE_SGPR_DISPATCH_ID",
                ENABLE_SGPR_DISPATCH_ID,
            ),
            (
                "AMD_KERNEL_CODE_PROPERTIES_ENABLE_SGPR_FLAT_SCRATCH_INIT",
                ENABLE_SGPR_FLAT_SCRATCH_INIT,
            ),
            (
                "AMD_KERNEL_CODE_PROPERTIES_ENABLE_SGPR_PRIVATE_SEGMENT_SIZE",
                ENABLE_SGPR_PRIVATE_SEGMENT_SIZE,
            ),
            (
                "AMD_KERNEL_CODE_PROPERTIES_ENABLE_SGPR_GRID_WORKGROUP_COUNT_X",
                ENABLE_SGPR_GRID_WORKGROUP_COUNT_X,
            ),
            (
                "AMD_KERNEL_CODE_PROPERTIES_ENABLE_SGPR_GRID_WORKGROUP_COUNT_Y",
                ENABLE_SGPR_GRID_WORKGROUP_COUNT_Y,
            ),
            (
                "AMD_KERNEL_CODE_PROPERTIES_ENABLE_SGPR_GRID_WORKGROUP_COUNT_Z",
                ENABLE_SGPR_GRID_WORKGROUP_COUNT_Z,
            ),
        ] {
            p.constant(name, v);
        }
    }
    p.run(env!("CARGO_TARGET_TMPDIR"));
}

/// The descriptor formats without an includable C header, pinned to the
/// offsets of LLVM's `AMDHSAKernelDescriptor.h` (code object v3+) and
/// ROCr's `amd_aql_pm4_ib_packet_t`; and the offsets the CP reads from
/// either kernel descriptor format, which must agree.
#[test]
fn descriptor_and_pm4_ib_layouts_are_pinned() {
    assert_eq!(
        (
            size_of::<kernel_descriptor_t>(),
            align_of::<kernel_descriptor_t>()
        ),
        (64, 8)
    );
    assert_eq!(offset_of!(kernel_descriptor_t, group_segment_fixed_size), 0);
    assert_eq!(
        offset_of!(kernel_descriptor_t, private_segment_fixed_size),
        4
    );
    assert_eq!(offset_of!(kernel_descriptor_t, kernarg_size), 8);
    assert_eq!(
        offset_of!(kernel_descriptor_t, kernel_code_entry_byte_offset),
        16
    );
    assert_eq!(offset_of!(kernel_descriptor_t, compute_pgm_rsrc3), 44);
    assert_eq!(offset_of!(kernel_descriptor_t, compute_pgm_rsrc1), 48);
    assert_eq!(offset_of!(kernel_descriptor_t, compute_pgm_rsrc2), 52);
    assert_eq!(offset_of!(kernel_descriptor_t, kernel_code_properties), 56);
    assert_eq!(offset_of!(kernel_descriptor_t, kernarg_preload), 58);
    assert_eq!(
        offset_of!(kernel_descriptor_t, kernel_code_entry_byte_offset),
        offset_of!(amd_kernel_code_t, kernel_code_entry_byte_offset)
    );
    assert_eq!(
        offset_of!(kernel_descriptor_t, compute_pgm_rsrc1),
        offset_of!(amd_kernel_code_t, compute_pgm_rsrc1)
    );
    assert_eq!(
        offset_of!(kernel_descriptor_t, compute_pgm_rsrc2),
        offset_of!(amd_kernel_code_t, compute_pgm_rsrc2)
    );
    assert_eq!(
        offset_of!(kernel_descriptor_t, kernel_code_properties),
        offset_of!(amd_kernel_code_t, kernel_code_properties)
    );
    assert_eq!(size_of::<amd_aql_pm4_ib_packet_t>(), 64);
    assert_eq!(offset_of!(amd_aql_pm4_ib_packet_t, ven_hdr), 2);
    assert_eq!(offset_of!(amd_aql_pm4_ib_packet_t, ib_jump_cmd), 4);
    assert_eq!(offset_of!(amd_aql_pm4_ib_packet_t, dw_cnt_remain), 20);
    assert_eq!(offset_of!(amd_aql_pm4_ib_packet_t, completion_signal), 56);
}

/// Byte views round-trip.
#[test]
fn packets_round_trip_through_bytes() {
    use zerocopy::{FromBytes, IntoBytes};
    let p = hsa_kernel_dispatch_packet_t {
        header: HSA_PACKET_TYPE_KERNEL_DISPATCH,
        setup: 1,
        workgroup_size_x: 256,
        grid_size_x: 1 << 20,
        kernel_object: 0x1234_5678_9abc,
        completion_signal: 0xdead_0000,
        ..Default::default()
    };
    let bytes: [u8; 64] = p.as_bytes().try_into().unwrap();
    assert_eq!(bytes[4..6], 256u16.to_le_bytes());
    assert_eq!(
        hsa_kernel_dispatch_packet_t::read_from_bytes(&bytes).unwrap(),
        p
    );
}
