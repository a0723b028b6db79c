//! Layouts, constants and request numbers of `kfd_sys::kfd` checked
//! against the system's `/usr/include/linux/kfd_ioctl.h` (linux-libc-dev
//! 6.1, KFD ioctl interface 1.11) with the C probe, plus pinned sizes and
//! offsets for everything newer than that header.

use std::collections::BTreeSet;
use std::mem::{align_of, offset_of, size_of};

use kfd_sys::ioctl::{ioc_dir, ioc_nr, ioc_size, ioc_type};
use kfd_sys::kfd::*;
use layout_probe::{layout, Probe};

const HEADER: &str = "/usr/include/linux/kfd_ioctl.h";

/// Registers `p.constant("NAME", NAME)` for each name and returns the names.
macro_rules! consts {
    ($p:expr, $seen:expr; $($name:ident),* $(,)?) => {{
        $(
            $p.constant(stringify!($name), $name);
            $seen.insert(stringify!($name).to_string());
        )*
    }};
}

/// Names of the object-like `#define`s and enum members of a header
/// (comments stripped; include guards and function-like macros skipped).
fn header_names(path: &str) -> BTreeSet<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(i) = rest.find("/*") {
        out.push_str(&rest[..i]);
        let j = rest[i..].find("*/").unwrap();
        rest = &rest[i + j + 2..];
    }
    out.push_str(rest);
    let mut names = BTreeSet::new();
    let mut in_enum = false;
    for line in out.lines() {
        let t = line.trim();
        if let Some(d) = t.strip_prefix("#define") {
            let d = d.trim_start();
            let name: String = d
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            let function_like = d[name.len()..].starts_with('(');
            let value = d[name.len()..].trim();
            if !function_like && !value.is_empty() {
                names.insert(name);
            }
        } else if t.starts_with("enum ") && t.ends_with('{') {
            in_enum = true;
        } else if in_enum && t.starts_with('}') {
            in_enum = false;
        } else if in_enum {
            let name: String = t
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                names.insert(name);
            }
        }
    }
    names
}

#[test]
fn kfd_ioctl_layouts_match_system_header() {
    let mut p = Probe::new(&["linux/kfd_ioctl.h"]);
    layout!(
        p,
        kfd_ioctl_get_version_args,
        "struct kfd_ioctl_get_version_args",
        [major_version, minor_version]
    );
    layout!(
        p,
        kfd_ioctl_destroy_queue_args,
        "struct kfd_ioctl_destroy_queue_args",
        [queue_id, pad]
    );
    layout!(
        p,
        kfd_ioctl_update_queue_args,
        "struct kfd_ioctl_update_queue_args",
        [
            ring_base_address,
            queue_id,
            ring_size,
            queue_percentage,
            queue_priority
        ]
    );
    layout!(
        p,
        kfd_ioctl_set_cu_mask_args,
        "struct kfd_ioctl_set_cu_mask_args",
        [queue_id, num_cu_mask, cu_mask_ptr]
    );
    layout!(
        p,
        kfd_ioctl_get_queue_wave_state_args,
        "struct kfd_ioctl_get_queue_wave_state_args",
        [
            ctl_stack_address,
            ctl_stack_used_size,
            save_area_used_size,
            queue_id,
            pad
        ]
    );
    layout!(
        p,
        kfd_ioctl_get_available_memory_args,
        "struct kfd_ioctl_get_available_memory_args",
        [available, gpu_id, pad]
    );
    layout!(p, kfd_ioctl_set_memory_policy_args, "struct kfd_ioctl_set_memory_policy_args",
        [alternate_aperture_base, alternate_aperture_size, gpu_id, default_policy,
         alternate_policy, "pad" => misc_process_flag]);
    layout!(
        p,
        kfd_ioctl_get_clock_counters_args,
        "struct kfd_ioctl_get_clock_counters_args",
        [
            gpu_clock_counter,
            cpu_clock_counter,
            system_clock_counter,
            system_clock_freq,
            gpu_id,
            pad
        ]
    );
    layout!(
        p,
        kfd_process_device_apertures,
        "struct kfd_process_device_apertures",
        [
            lds_base,
            lds_limit,
            scratch_base,
            scratch_limit,
            gpuvm_base,
            gpuvm_limit,
            gpu_id,
            pad
        ]
    );
    layout!(
        p,
        kfd_ioctl_get_process_apertures_args,
        "struct kfd_ioctl_get_process_apertures_args",
        [process_apertures, num_of_nodes, pad]
    );
    layout!(
        p,
        kfd_ioctl_get_process_apertures_new_args,
        "struct kfd_ioctl_get_process_apertures_new_args",
        [kfd_process_device_apertures_ptr, num_of_nodes, pad]
    );
    layout!(
        p,
        kfd_ioctl_dbg_register_args,
        "struct kfd_ioctl_dbg_register_args",
        [gpu_id, pad]
    );
    layout!(
        p,
        kfd_ioctl_dbg_unregister_args,
        "struct kfd_ioctl_dbg_unregister_args",
        [gpu_id, pad]
    );
    layout!(
        p,
        kfd_ioctl_dbg_address_watch_args,
        "struct kfd_ioctl_dbg_address_watch_args",
        [content_ptr, gpu_id, buf_size_in_bytes]
    );
    layout!(
        p,
        kfd_ioctl_dbg_wave_control_args,
        "struct kfd_ioctl_dbg_wave_control_args",
        [content_ptr, gpu_id, buf_size_in_bytes]
    );
    layout!(
        p,
        kfd_ioctl_create_event_args,
        "struct kfd_ioctl_create_event_args",
        [
            event_page_offset,
            event_trigger_data,
            event_type,
            auto_reset,
            node_id,
            event_id,
            event_slot_index
        ]
    );
    layout!(
        p,
        kfd_ioctl_destroy_event_args,
        "struct kfd_ioctl_destroy_event_args",
        [event_id, pad]
    );
    layout!(
        p,
        kfd_ioctl_set_event_args,
        "struct kfd_ioctl_set_event_args",
        [event_id, pad]
    );
    layout!(
        p,
        kfd_ioctl_reset_event_args,
        "struct kfd_ioctl_reset_event_args",
        [event_id, pad]
    );
    layout!(
        p,
        kfd_memory_exception_failure,
        "struct kfd_memory_exception_failure",
        [NotPresent, ReadOnly, NoExecute, imprecise]
    );
    layout!(
        p,
        kfd_hsa_memory_exception_data,
        "struct kfd_hsa_memory_exception_data",
        [failure, va, gpu_id, ErrorType]
    );
    layout!(
        p,
        kfd_hsa_hw_exception_data,
        "struct kfd_hsa_hw_exception_data",
        [reset_type, reset_cause, memory_lost, gpu_id]
    );
    layout!(p, kfd_event_data, "struct kfd_event_data",
        ["memory_exception_data" => u, "hw_exception_data" => u, kfd_event_data_ext,
         event_id, pad]);
    layout!(
        p,
        kfd_ioctl_wait_events_args,
        "struct kfd_ioctl_wait_events_args",
        [events_ptr, num_events, wait_for_all, timeout, wait_result]
    );
    layout!(
        p,
        kfd_ioctl_set_scratch_backing_va_args,
        "struct kfd_ioctl_set_scratch_backing_va_args",
        [va_addr, gpu_id, pad]
    );
    layout!(
        p,
        kfd_ioctl_get_tile_config_args,
        "struct kfd_ioctl_get_tile_config_args",
        [
            tile_config_ptr,
            macro_tile_config_ptr,
            num_tile_configs,
            num_macro_tile_configs,
            gpu_id,
            gb_addr_config,
            num_banks,
            num_ranks
        ]
    );
    layout!(
        p,
        kfd_ioctl_set_trap_handler_args,
        "struct kfd_ioctl_set_trap_handler_args",
        [tba_addr, tma_addr, gpu_id, pad]
    );
    layout!(
        p,
        kfd_ioctl_acquire_vm_args,
        "struct kfd_ioctl_acquire_vm_args",
        [drm_fd, gpu_id]
    );
    layout!(
        p,
        kfd_ioctl_alloc_memory_of_gpu_args,
        "struct kfd_ioctl_alloc_memory_of_gpu_args",
        [va_addr, size, handle, mmap_offset, gpu_id, flags]
    );
    layout!(
        p,
        kfd_ioctl_free_memory_of_gpu_args,
        "struct kfd_ioctl_free_memory_of_gpu_args",
        [handle]
    );
    layout!(
        p,
        kfd_ioctl_map_memory_to_gpu_args,
        "struct kfd_ioctl_map_memory_to_gpu_args",
        [handle, device_ids_array_ptr, n_devices, n_success]
    );
    layout!(
        p,
        kfd_ioctl_unmap_memory_from_gpu_args,
        "struct kfd_ioctl_unmap_memory_from_gpu_args",
        [handle, device_ids_array_ptr, n_devices, n_success]
    );
    layout!(
        p,
        kfd_ioctl_alloc_queue_gws_args,
        "struct kfd_ioctl_alloc_queue_gws_args",
        [queue_id, num_gws, first_gws, pad]
    );
    layout!(
        p,
        kfd_ioctl_get_dmabuf_info_args,
        "struct kfd_ioctl_get_dmabuf_info_args",
        [size, metadata_ptr, metadata_size, gpu_id, flags, dmabuf_fd]
    );
    layout!(
        p,
        kfd_ioctl_import_dmabuf_args,
        "struct kfd_ioctl_import_dmabuf_args",
        [va_addr, handle, gpu_id, dmabuf_fd]
    );
    layout!(
        p,
        kfd_ioctl_smi_events_args,
        "struct kfd_ioctl_smi_events_args",
        [gpuid, anon_fd]
    );
    layout!(
        p,
        kfd_ioctl_criu_args,
        "struct kfd_ioctl_criu_args",
        [
            devices,
            bos,
            priv_data,
            priv_data_size,
            num_devices,
            num_bos,
            num_objects,
            pid,
            op
        ]
    );
    layout!(
        p,
        kfd_criu_device_bucket,
        "struct kfd_criu_device_bucket",
        [user_gpu_id, actual_gpu_id, drm_fd, pad]
    );
    layout!(
        p,
        kfd_criu_bo_bucket,
        "struct kfd_criu_bo_bucket",
        [
            addr,
            size,
            offset,
            restored_offset,
            gpu_id,
            alloc_flags,
            dmabuf_fd,
            pad
        ]
    );
    layout!(p, kfd_ioctl_svm_attribute, "struct kfd_ioctl_svm_attribute",
        ["type" => r#type, value]);
    layout!(
        p,
        kfd_ioctl_svm_args,
        "struct kfd_ioctl_svm_args",
        [start_addr, size, op, nattr, attrs]
    );
    layout!(
        p,
        kfd_ioctl_set_xnack_mode_args,
        "struct kfd_ioctl_set_xnack_mode_args",
        [xnack_enabled]
    );

    // kfd_ioctl_create_queue_args grew in 1.17 (88 -> 96 bytes): the 1.11
    // layout must be exactly our first 88 bytes, field by field.
    for (c, off) in [
        (
            "ring_base_address",
            offset_of!(kfd_ioctl_create_queue_args, ring_base_address),
        ),
        (
            "write_pointer_address",
            offset_of!(kfd_ioctl_create_queue_args, write_pointer_address),
        ),
        (
            "read_pointer_address",
            offset_of!(kfd_ioctl_create_queue_args, read_pointer_address),
        ),
        (
            "doorbell_offset",
            offset_of!(kfd_ioctl_create_queue_args, doorbell_offset),
        ),
        (
            "ring_size",
            offset_of!(kfd_ioctl_create_queue_args, ring_size),
        ),
        ("gpu_id", offset_of!(kfd_ioctl_create_queue_args, gpu_id)),
        (
            "queue_type",
            offset_of!(kfd_ioctl_create_queue_args, queue_type),
        ),
        (
            "queue_percentage",
            offset_of!(kfd_ioctl_create_queue_args, queue_percentage),
        ),
        (
            "queue_priority",
            offset_of!(kfd_ioctl_create_queue_args, queue_priority),
        ),
        (
            "queue_id",
            offset_of!(kfd_ioctl_create_queue_args, queue_id),
        ),
        (
            "eop_buffer_address",
            offset_of!(kfd_ioctl_create_queue_args, eop_buffer_address),
        ),
        (
            "eop_buffer_size",
            offset_of!(kfd_ioctl_create_queue_args, eop_buffer_size),
        ),
        (
            "ctx_save_restore_address",
            offset_of!(kfd_ioctl_create_queue_args, ctx_save_restore_address),
        ),
        (
            "ctx_save_restore_size",
            offset_of!(kfd_ioctl_create_queue_args, ctx_save_restore_size),
        ),
        (
            "ctl_stack_size",
            offset_of!(kfd_ioctl_create_queue_args, ctl_stack_size),
        ),
    ] {
        p.constant(
            &format!("offsetof(struct kfd_ioctl_create_queue_args, {c})"),
            off as u64,
        );
    }
    p.constant(
        "sizeof(struct kfd_ioctl_create_queue_args)",
        offset_of!(kfd_ioctl_create_queue_args, sdma_engine_id) as u64,
    );
    p.constant(
        "_Alignof(struct kfd_ioctl_create_queue_args)",
        align_of::<kfd_ioctl_create_queue_args>() as u64,
    );

    // Request numbers. Every request of the header except CREATE_QUEUE
    // (grown, see above) must match exactly.
    for info in KFD_IOCTLS {
        if info.nr() > 0x23 || info.name == "AMDKFD_IOC_CREATE_QUEUE" {
            continue;
        }
        p.constant(info.name, info.request);
    }
    let cq = AMDKFD_IOC_CREATE_QUEUE.request();
    p.constant("_IOC_NR(AMDKFD_IOC_CREATE_QUEUE)", ioc_nr(cq));
    p.constant("_IOC_TYPE(AMDKFD_IOC_CREATE_QUEUE)", ioc_type(cq));
    p.constant("_IOC_DIR(AMDKFD_IOC_CREATE_QUEUE)", ioc_dir(cq));
    p.constant("_IOC_SIZE(AMDKFD_IOC_CREATE_QUEUE)", 88u32);
    p.constant("AMDKFD_IOCTL_BASE", AMDKFD_IOCTL_BASE);
    p.constant(
        "KFD_SMI_EVENT_MASK_FROM_INDEX(5)",
        kfd_smi_event_mask_from_index(5),
    );
    p.constant(
        "KFD_SMI_EVENT_MASK_FROM_INDEX(64)",
        kfd_smi_event_mask_from_index(64),
    );

    // Every object-like constant and enum member of the header.
    let mut seen = BTreeSet::new();
    consts!(p, seen;
        KFD_IOCTL_MAJOR_VERSION,
        KFD_IOC_QUEUE_TYPE_COMPUTE, KFD_IOC_QUEUE_TYPE_SDMA, KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
        KFD_IOC_QUEUE_TYPE_SDMA_XGMI, KFD_MAX_QUEUE_PERCENTAGE, KFD_MAX_QUEUE_PRIORITY,
        KFD_MIN_QUEUE_RING_SIZE, KFD_IOC_CACHE_POLICY_COHERENT, KFD_IOC_CACHE_POLICY_NONCOHERENT,
        NUM_OF_SUPPORTED_GPUS, MAX_ALLOWED_NUM_POINTS, MAX_ALLOWED_AW_BUFF_SIZE,
        MAX_ALLOWED_WAC_BUFF_SIZE, KFD_INVALID_FD,
        KFD_IOC_EVENT_SIGNAL, KFD_IOC_EVENT_NODECHANGE, KFD_IOC_EVENT_DEVICESTATECHANGE,
        KFD_IOC_EVENT_HW_EXCEPTION, KFD_IOC_EVENT_SYSTEM_EVENT, KFD_IOC_EVENT_DEBUG_EVENT,
        KFD_IOC_EVENT_PROFILE_EVENT, KFD_IOC_EVENT_QUEUE_EVENT, KFD_IOC_EVENT_MEMORY,
        KFD_IOC_WAIT_RESULT_COMPLETE, KFD_IOC_WAIT_RESULT_TIMEOUT, KFD_IOC_WAIT_RESULT_FAIL,
        KFD_SIGNAL_EVENT_LIMIT, KFD_HW_EXCEPTION_WHOLE_GPU_RESET,
        KFD_HW_EXCEPTION_PER_ENGINE_RESET, KFD_HW_EXCEPTION_GPU_HANG, KFD_HW_EXCEPTION_ECC,
        KFD_MEM_ERR_NO_RAS, KFD_MEM_ERR_SRAM_ECC, KFD_MEM_ERR_POISON_CONSUMED,
        KFD_MEM_ERR_GPU_HANG,
        KFD_IOC_ALLOC_MEM_FLAGS_VRAM, KFD_IOC_ALLOC_MEM_FLAGS_GTT,
        KFD_IOC_ALLOC_MEM_FLAGS_USERPTR, KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL,
        KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP,
        KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE, KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC,
        KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE, KFD_IOC_ALLOC_MEM_FLAGS_AQL_QUEUE_MEM,
        KFD_IOC_ALLOC_MEM_FLAGS_COHERENT, KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED,
        KFD_SMI_EVENT_NONE, KFD_SMI_EVENT_VMFAULT, KFD_SMI_EVENT_THERMAL_THROTTLE,
        KFD_SMI_EVENT_GPU_PRE_RESET, KFD_SMI_EVENT_GPU_POST_RESET, KFD_SMI_EVENT_MIGRATE_START,
        KFD_SMI_EVENT_MIGRATE_END, KFD_SMI_EVENT_PAGE_FAULT_START, KFD_SMI_EVENT_PAGE_FAULT_END,
        KFD_SMI_EVENT_QUEUE_EVICTION, KFD_SMI_EVENT_QUEUE_RESTORE, KFD_SMI_EVENT_UNMAP_FROM_GPU,
        KFD_SMI_EVENT_ALL_PROCESS, KFD_SMI_EVENT_MSG_SIZE,
        KFD_MIGRATE_TRIGGER_PREFETCH, KFD_MIGRATE_TRIGGER_PAGEFAULT_GPU,
        KFD_MIGRATE_TRIGGER_PAGEFAULT_CPU, KFD_MIGRATE_TRIGGER_TTM_EVICTION,
        KFD_QUEUE_EVICTION_TRIGGER_SVM, KFD_QUEUE_EVICTION_TRIGGER_USERPTR,
        KFD_QUEUE_EVICTION_TRIGGER_TTM, KFD_QUEUE_EVICTION_TRIGGER_SUSPEND,
        KFD_QUEUE_EVICTION_CRIU_CHECKPOINT, KFD_QUEUE_EVICTION_CRIU_RESTORE,
        KFD_SVM_UNMAP_TRIGGER_MMU_NOTIFY, KFD_SVM_UNMAP_TRIGGER_MMU_NOTIFY_MIGRATE,
        KFD_SVM_UNMAP_TRIGGER_UNMAP_FROM_CPU,
        KFD_CRIU_OP_PROCESS_INFO, KFD_CRIU_OP_CHECKPOINT, KFD_CRIU_OP_UNPAUSE,
        KFD_CRIU_OP_RESTORE, KFD_CRIU_OP_RESUME,
        KFD_MMIO_REMAP_HDP_MEM_FLUSH_CNTL, KFD_MMIO_REMAP_HDP_REG_FLUSH_CNTL,
        KFD_IOCTL_SVM_FLAG_HOST_ACCESS, KFD_IOCTL_SVM_FLAG_COHERENT,
        KFD_IOCTL_SVM_FLAG_HIVE_LOCAL, KFD_IOCTL_SVM_FLAG_GPU_RO, KFD_IOCTL_SVM_FLAG_GPU_EXEC,
        KFD_IOCTL_SVM_FLAG_GPU_READ_MOSTLY, KFD_IOCTL_SVM_FLAG_GPU_ALWAYS_MAPPED,
        KFD_IOCTL_SVM_OP_SET_ATTR, KFD_IOCTL_SVM_OP_GET_ATTR,
        KFD_IOCTL_SVM_LOCATION_SYSMEM, KFD_IOCTL_SVM_LOCATION_UNDEFINED,
        KFD_IOCTL_SVM_ATTR_PREFERRED_LOC, KFD_IOCTL_SVM_ATTR_PREFETCH_LOC,
        KFD_IOCTL_SVM_ATTR_ACCESS, KFD_IOCTL_SVM_ATTR_ACCESS_IN_PLACE,
        KFD_IOCTL_SVM_ATTR_NO_ACCESS, KFD_IOCTL_SVM_ATTR_SET_FLAGS,
        KFD_IOCTL_SVM_ATTR_CLR_FLAGS, KFD_IOCTL_SVM_ATTR_GRANULARITY,
        AMDKFD_COMMAND_START,
    );
    // `(1 << 31)` is a negative int in C; the flag word is a __u32.
    p.constant(
        "(__u32)KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE",
        KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE,
    );
    seen.insert("KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE".into());
    // Constants whose value moved on since 1.11: the header's value is
    // pinned here, ours is newer by design.
    p.constant("KFD_IOCTL_MINOR_VERSION", 11u32);
    p.constant("AMDKFD_COMMAND_END", 0x24u32);
    seen.extend([
        "KFD_IOCTL_MINOR_VERSION".into(),
        "AMDKFD_COMMAND_END".into(),
    ]);
    seen.insert("AMDKFD_IOCTL_BASE".into());
    for info in KFD_IOCTLS {
        seen.insert(info.name.to_string());
    }

    // Nothing the header defines may be left unchecked.
    let names = header_names(HEADER);
    assert!(
        names.len() > 100,
        "parsed only {} names from {HEADER}",
        names.len()
    );
    let missing: Vec<_> = names
        .into_iter()
        .filter(|n| n != "KFD_IOCTL_H_INCLUDED" && !seen.contains(n))
        .collect();
    assert!(
        missing.is_empty(),
        "constants of {HEADER} not checked: {missing:?}"
    );
    p.run(env!("CARGO_TARGET_TMPDIR"));
}

/// Types and values newer than the 1.11 system header, pinned from the
/// newest upstream header (KFD 1.22, amd-staging-drm-next 2026) and from
/// ROCm's own kfd_ioctl.h (rocm-systems libhsakmt, interface "1.22" in
/// ROCm numbering) and ROCT-Thunk-Interface rocm-5.2.3 (interface 1.8).
#[test]
fn newer_types_are_pinned() {
    macro_rules! pin {
        ($t:ty, $size:expr, $align:expr, [$($f:ident = $o:expr),* $(,)?]) => {{
            assert_eq!(size_of::<$t>(), $size, "size of {}", stringify!($t));
            assert_eq!(align_of::<$t>(), $align, "align of {}", stringify!($t));
            $(assert_eq!(offset_of!($t, $f), $o, "{}.{}", stringify!($t), stringify!($f));)*
        }};
    }
    // Upstream 1.17 (sdma_engine_id) and 1.22 (metadata_ring_size).
    pin!(
        kfd_ioctl_create_queue_args,
        96,
        8,
        [
            ctl_stack_size = 84,
            sdma_engine_id = 88,
            metadata_ring_size = 92
        ]
    );
    // Upstream 1.13 debugger API (Linux 6.5).
    pin!(
        kfd_queue_snapshot_entry,
        64,
        8,
        [
            exception_status = 0,
            ring_base_address = 8,
            write_pointer_address = 16,
            read_pointer_address = 24,
            ctx_save_restore_address = 32,
            queue_id = 40,
            gpu_id = 44,
            ring_size = 48,
            queue_type = 52,
            ctx_save_restore_area_size = 56,
            reserved = 60
        ]
    );
    pin!(
        kfd_dbg_device_info_entry,
        120,
        8,
        [
            exception_status = 0,
            lds_base = 8,
            lds_limit = 16,
            scratch_base = 24,
            scratch_limit = 32,
            gpuvm_base = 40,
            gpuvm_limit = 48,
            gpu_id = 56,
            location_id = 60,
            vendor_id = 64,
            device_id = 68,
            revision_id = 72,
            subsystem_vendor_id = 76,
            subsystem_device_id = 80,
            fw_version = 84,
            gfx_target_version = 88,
            simd_count = 92,
            max_waves_per_simd = 96,
            array_count = 100,
            simd_arrays_per_engine = 104,
            num_xcc = 108,
            capability = 112,
            debug_prop = 116
        ]
    );
    pin!(
        kfd_runtime_info,
        16,
        8,
        [r_debug = 0, runtime_state = 8, ttmp_setup = 12]
    );
    pin!(
        kfd_ioctl_runtime_enable_args,
        16,
        8,
        [r_debug = 0, mode_mask = 8, capabilities_mask = 12]
    );
    pin!(
        kfd_context_save_area_header_wave_state,
        16,
        4,
        [
            control_stack_offset = 0,
            control_stack_size = 4,
            wave_state_offset = 8,
            wave_state_size = 12
        ]
    );
    pin!(
        kfd_context_save_area_header,
        40,
        8,
        [
            wave_state = 0,
            debug_offset = 16,
            debug_size = 20,
            err_payload_addr = 24,
            err_event_id = 32,
            reserved1 = 36
        ]
    );
    pin!(
        kfd_ioctl_dbg_trap_enable_args,
        24,
        8,
        [
            exception_mask = 0,
            rinfo_ptr = 8,
            rinfo_size = 16,
            dbg_fd = 20
        ]
    );
    pin!(
        kfd_ioctl_dbg_trap_send_runtime_event_args,
        16,
        8,
        [exception_mask = 0, gpu_id = 8, queue_id = 12]
    );
    pin!(
        kfd_ioctl_dbg_trap_set_exceptions_enabled_args,
        8,
        8,
        [exception_mask = 0]
    );
    pin!(
        kfd_ioctl_dbg_trap_set_wave_launch_override_args,
        16,
        4,
        [
            override_mode = 0,
            enable_mask = 4,
            support_request_mask = 8,
            pad = 12
        ]
    );
    pin!(
        kfd_ioctl_dbg_trap_set_wave_launch_mode_args,
        8,
        4,
        [launch_mode = 0, pad = 4]
    );
    pin!(
        kfd_ioctl_dbg_trap_suspend_queues_args,
        24,
        8,
        [
            exception_mask = 0,
            queue_array_ptr = 8,
            num_queues = 16,
            grace_period = 20
        ]
    );
    pin!(
        kfd_ioctl_dbg_trap_resume_queues_args,
        16,
        8,
        [queue_array_ptr = 0, num_queues = 8, pad = 12]
    );
    pin!(
        kfd_ioctl_dbg_trap_set_node_address_watch_args,
        24,
        8,
        [address = 0, mode = 8, mask = 12, gpu_id = 16, id = 20]
    );
    pin!(
        kfd_ioctl_dbg_trap_clear_node_address_watch_args,
        8,
        4,
        [gpu_id = 0, id = 4]
    );
    pin!(
        kfd_ioctl_dbg_trap_set_flags_args,
        8,
        4,
        [flags = 0, pad = 4]
    );
    pin!(
        kfd_ioctl_dbg_trap_query_debug_event_args,
        16,
        8,
        [exception_mask = 0, gpu_id = 8, queue_id = 12]
    );
    pin!(
        kfd_ioctl_dbg_trap_query_exception_info_args,
        24,
        8,
        [
            info_ptr = 0,
            info_size = 8,
            source_id = 12,
            exception_code = 16,
            clear_exception = 20
        ]
    );
    pin!(
        kfd_ioctl_dbg_trap_queue_snapshot_args,
        24,
        8,
        [
            exception_mask = 0,
            snapshot_buf_ptr = 8,
            num_queues = 16,
            entry_size = 20
        ]
    );
    pin!(
        kfd_ioctl_dbg_trap_device_snapshot_args,
        24,
        8,
        [
            exception_mask = 0,
            snapshot_buf_ptr = 8,
            num_devices = 16,
            entry_size = 20
        ]
    );
    pin!(kfd_ioctl_dbg_trap_args_union, 24, 8, []);
    pin!(kfd_ioctl_dbg_trap_args, 32, 8, [pid = 0, op = 4, u = 8]);
    // Upstream 1.12 (Linux 6.4) dma-buf export; 1.14 signal event age.
    pin!(
        kfd_ioctl_export_dmabuf_args,
        16,
        8,
        [handle = 0, flags = 8, dmabuf_fd = 12]
    );
    pin!(kfd_hsa_signal_event_data, 8, 8, [last_event_age = 0]);
    pin!(kfd_event_data_union, 32, 8, []);
    pin!(
        kfd_event_data,
        48,
        8,
        [u = 0, kfd_event_data_ext = 32, event_id = 40, pad = 44]
    );
    // CREATE_PROCESS (upstream 1.19 / ROCm).
    pin!(kfd_ioctl_create_process_args, 8, 4, [flags = 0, pad = 4]);
    pin!(
        kfd_ioctl_svm_args_n<3>,
        48,
        8,
        [start_addr = 0, size = 8, op = 16, nattr = 20, attrs = 24]
    );
    // ROCm non-upstream (rocm-systems libhsakmt kfd_ioctl.h).
    pin!(
        kfd_ioctl_ipc_export_handle_args,
        32,
        8,
        [handle = 0, share_handle = 8, gpu_id = 24, flags = 28]
    );
    pin!(
        kfd_ioctl_ipc_import_handle_args,
        48,
        8,
        [
            handle = 0,
            va_addr = 8,
            mmap_offset = 16,
            share_handle = 24,
            gpu_id = 40,
            flags = 44
        ]
    );
    pin!(kfd_memory_range, 16, 8, [va_addr = 0, size = 8]);
    pin!(
        kfd_ioctl_cross_memory_copy_args,
        48,
        8,
        [
            pid = 0,
            flags = 4,
            src_mem_range_array = 8,
            src_mem_array_size = 16,
            dst_mem_range_array = 24,
            dst_mem_array_size = 32,
            bytes_copied = 40
        ]
    );
    pin!(
        kfd_ioctl_spm_args,
        32,
        8,
        [
            dest_buf = 0,
            buf_size = 8,
            op = 12,
            timeout = 16,
            gpu_id = 20,
            bytes_copied = 24,
            has_data_loss = 28
        ]
    );
    pin!(
        kfd_ioctl_spm_buffer_header,
        32,
        4,
        [
            version = 0,
            bytes_copied = 4,
            has_data_loss = 8,
            reserved = 12
        ]
    );
    pin!(
        kfd_pc_sample_info,
        40,
        8,
        [
            interval = 0,
            interval_min = 8,
            interval_max = 16,
            flags = 24,
            method = 32,
            r#type = 36
        ]
    );
    pin!(
        kfd_ioctl_pc_sample_args,
        32,
        8,
        [
            sample_info_ptr = 0,
            num_sample_info = 8,
            op = 12,
            gpu_id = 16,
            trace_id = 20,
            flags = 24,
            reserved = 28
        ]
    );
    pin!(
        kfd_ioctl_pmc_settings,
        12,
        4,
        [gpu_id = 0, lock = 4, perfcount_enable = 8]
    );
    pin!(kfd_ioctl_profiler_args_union, 32, 8, []);
    pin!(kfd_ioctl_profiler_args, 40, 8, [op = 0, u = 8]);
    pin!(
        kfd_ais_in_args,
        40,
        8,
        [
            handle = 0,
            handle_offset = 8,
            file_offset = 16,
            size = 24,
            op = 32,
            fd = 36
        ]
    );
    pin!(
        kfd_ais_out_args,
        16,
        8,
        [size_copied = 0, status = 8, pad = 12]
    );
    pin!(kfd_ioctl_ais_args, 40, 8, [u = 0]);
    pin!(
        rocm::kfd_ioctl_update_queue_args_ext,
        40,
        8,
        [
            ring_base_address = 0,
            queue_id = 8,
            ring_size = 12,
            queue_percentage = 16,
            queue_priority = 20,
            dispatch_record_buffer_addr = 24,
            dispatch_record_buffer_size = 32,
            pad = 36
        ]
    );
    // libhsakmt 5.2.3 (ROCT rocm-5.2.3, interface 1.8).
    pin!(
        rocm_5_2::kfd_ioctl_dbg_trap_args,
        40,
        8,
        [
            exception_mask = 0,
            ptr = 8,
            pid = 16,
            op = 20,
            data1 = 24,
            data2 = 28,
            data3 = 32,
            data4 = 36
        ]
    );
    pin!(
        rocm_5_2::kfd_queue_snapshot_entry,
        128,
        8,
        [
            queue_id = 40,
            ctx_save_restore_area_size = 56,
            reserved = 60
        ]
    );
    pin!(
        rocm_5_2::kfd_dbg_device_info_entry,
        64,
        8,
        [gpu_id = 56, pad = 60]
    );
}

/// Request numbers newer than the system header, pinned.
#[test]
fn newer_requests_are_pinned() {
    let pinned: &[(&str, u32)] = &[
        ("AMDKFD_IOC_CREATE_QUEUE", 0xc060_4b02),
        ("AMDKFD_IOC_EXPORT_DMABUF", 0xc010_4b24),
        ("AMDKFD_IOC_RUNTIME_ENABLE", 0xc010_4b25),
        ("AMDKFD_IOC_DBG_TRAP", 0xc020_4b26),
        ("AMDKFD_IOC_CREATE_PROCESS", 0xc008_4b27),
        ("AMDKFD_IOC_IPC_IMPORT_HANDLE", 0xc030_4b80),
        ("AMDKFD_IOC_IPC_EXPORT_HANDLE", 0xc020_4b81),
        ("AMDKFD_IOC_CROSS_MEMORY_COPY", 0xc030_4b83),
        ("AMDKFD_IOC_RLC_SPM", 0xc020_4b84),
        ("AMDKFD_IOC_PC_SAMPLE", 0xc020_4b85),
        ("AMDKFD_IOC_PROFILER", 0xc028_4b86),
        ("AMDKFD_IOC_AIS_OP", 0xc028_4b87),
    ];
    for (name, req) in pinned {
        let info = KFD_IOCTLS.iter().find(|i| i.name == *name).unwrap();
        assert_eq!(info.request, *req, "{name}: {:#x}", info.request);
    }
    assert_eq!(AMDKFD_IOC_CREATE_PROCESS_IO.request(), 0x0000_4b27);
    assert_eq!(rocm::AMDKFD_IOC_UPDATE_QUEUE_EXT.request(), 0x4028_4b07);
    // The thunk-private interface-1.8 requests (0xc0284b82 is the one the
    // reference notes record from a live trace of libhsakmt 5.2.3).
    let old: Vec<(&str, u32)> = rocm_5_2::KFD_IOCTLS_ROCM_5_2
        .iter()
        .map(|i| (i.name, i.request))
        .collect();
    assert_eq!(
        old,
        [
            ("AMDKFD_IOC_IPC_IMPORT_HANDLE", 0xc030_4b80),
            ("AMDKFD_IOC_IPC_EXPORT_HANDLE", 0xc020_4b81),
            ("AMDKFD_IOC_DBG_TRAP", 0xc028_4b82),
            ("AMDKFD_IOC_CROSS_MEMORY_COPY", 0xc030_4b83),
            ("AMDKFD_IOC_RLC_SPM", 0xc020_4b84),
        ]
    );
    // SVM: the header request has no attributes; n attributes add 8 each.
    assert_eq!(AMDKFD_IOC_SVM.request(), 0xc018_4b20);
    assert_eq!(svm_request(0), AMDKFD_IOC_SVM.request());
    assert_eq!(svm_request(2), 0xc028_4b20);
    assert_eq!(svm_ioctl::<2>().request(), svm_request(2));
    assert_eq!(ioc_size(svm_request(5)), 24 + 5 * 8);
    // Every request is a 'K' request and numbers are unique.
    let mut nrs = BTreeSet::new();
    for i in KFD_IOCTLS {
        assert_eq!(ioc_type(i.request), b'K', "{}", i.name);
        assert!(nrs.insert(i.nr()), "duplicate nr {:#x}", i.nr());
    }
}

#[test]
fn newer_constants_are_pinned() {
    assert_eq!(KFD_IOCTL_MINOR_VERSION, 22);
    assert_eq!(AMDKFD_COMMAND_END, 0x28);
    assert_eq!(KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID, 4);
    assert_eq!(KFD_IOC_ALLOC_MEM_FLAGS_EXT_COHERENT, 1 << 24);
    assert_eq!(KFD_IOC_ALLOC_MEM_FLAGS_CONTIGUOUS, 1 << 23);
    assert_eq!(KFD_IOCTL_SVM_FLAG_EXT_COHERENT, 0x80);
    assert_eq!(KFD_PROC_FLAG_MFMA_HIGH_PRECISION, 1);
    assert_eq!(EC_MAX, 50);
    assert_eq!(KFD_EC_MASK_DEVICE, 0x1f << 31);
    assert_eq!(KFD_EC_MASK_PROCESS, 0x3 << 47);
    assert_eq!(KFD_DBG_QUEUE_INVALID_MASK, 0x8000_0000);
    assert!(kfd_dbg_ec_type_is_queue(EC_QUEUE_NEW));
    assert!(kfd_dbg_ec_type_is_packet(EC_QUEUE_PACKET_RESERVED));
    assert!(!kfd_dbg_ec_type_is_device(EC_NONE));
    // mmap offsets (kfd_priv.h).
    assert_eq!(KFD_MMAP_TYPE_DOORBELL, 0xc000_0000_0000_0000);
    assert_eq!(KFD_MMAP_TYPE_EVENTS, 0x8000_0000_0000_0000);
    assert_eq!(KFD_MMAP_GPU_ID_MASK, 0x3fff_c000_0000_0000);
    assert_eq!(
        kfd_mmap_get_gpu_id(KFD_MMAP_TYPE_DOORBELL | kfd_mmap_gpu_id(0xbeef)),
        0xbeef
    );
}

#[test]
fn kfd_sysfs_constants_match_system_header() {
    use kfd_sys::sysfs::*;
    let mut p = Probe::new(&["linux/kfd_sysfs.h"]);
    let mut seen = BTreeSet::new();
    consts!(p, seen;
        HSA_CAP_HOT_PLUGGABLE, HSA_CAP_ATS_PRESENT, HSA_CAP_SHARED_WITH_GRAPHICS,
        HSA_CAP_QUEUE_SIZE_POW2, HSA_CAP_QUEUE_SIZE_32BIT, HSA_CAP_QUEUE_IDLE_EVENT,
        HSA_CAP_VA_LIMIT, HSA_CAP_WATCH_POINTS_SUPPORTED, HSA_CAP_WATCH_POINTS_TOTALBITS_MASK,
        HSA_CAP_WATCH_POINTS_TOTALBITS_SHIFT, HSA_CAP_DOORBELL_TYPE_TOTALBITS_MASK,
        HSA_CAP_DOORBELL_TYPE_TOTALBITS_SHIFT, HSA_CAP_DOORBELL_TYPE_PRE_1_0,
        HSA_CAP_DOORBELL_TYPE_1_0, HSA_CAP_DOORBELL_TYPE_2_0, HSA_CAP_AQL_QUEUE_DOUBLE_MAP,
        HSA_CAP_RESERVED_WAS_SRAM_EDCSUPPORTED, HSA_CAP_MEM_EDCSUPPORTED, HSA_CAP_RASEVENTNOTIFY,
        HSA_CAP_ASIC_REVISION_MASK, HSA_CAP_ASIC_REVISION_SHIFT, HSA_CAP_SRAM_EDCSUPPORTED,
        HSA_CAP_SVMAPI_SUPPORTED, HSA_CAP_FLAGS_COHERENTHOSTACCESS,
        HSA_MEM_HEAP_TYPE_SYSTEM, HSA_MEM_HEAP_TYPE_FB_PUBLIC, HSA_MEM_HEAP_TYPE_FB_PRIVATE,
        HSA_MEM_HEAP_TYPE_GPU_GDS, HSA_MEM_HEAP_TYPE_GPU_LDS, HSA_MEM_HEAP_TYPE_GPU_SCRATCH,
        HSA_MEM_FLAGS_HOT_PLUGGABLE, HSA_MEM_FLAGS_NON_VOLATILE, HSA_MEM_FLAGS_RESERVED,
        HSA_CACHE_TYPE_DATA, HSA_CACHE_TYPE_INSTRUCTION, HSA_CACHE_TYPE_CPU,
        HSA_CACHE_TYPE_HSACU, HSA_CACHE_TYPE_RESERVED,
        HSA_IOLINK_TYPE_UNDEFINED, HSA_IOLINK_TYPE_HYPERTRANSPORT, HSA_IOLINK_TYPE_PCIEXPRESS,
        HSA_IOLINK_TYPE_AMBA, HSA_IOLINK_TYPE_MIPI, HSA_IOLINK_TYPE_QPI_1_1,
        HSA_IOLINK_TYPE_RESERVED1, HSA_IOLINK_TYPE_RESERVED2, HSA_IOLINK_TYPE_RAPID_IO,
        HSA_IOLINK_TYPE_INFINIBAND, HSA_IOLINK_TYPE_RESERVED3, HSA_IOLINK_TYPE_XGMI,
        HSA_IOLINK_TYPE_XGOP, HSA_IOLINK_TYPE_GZ, HSA_IOLINK_TYPE_ETHERNET_RDMA,
        HSA_IOLINK_TYPE_RDMA_OTHER, HSA_IOLINK_TYPE_OTHER,
        HSA_IOLINK_FLAGS_ENABLED, HSA_IOLINK_FLAGS_NON_COHERENT,
        HSA_IOLINK_FLAGS_NO_ATOMICS_32_BIT, HSA_IOLINK_FLAGS_NO_ATOMICS_64_BIT,
        HSA_IOLINK_FLAGS_NO_PEER_TO_PEER_DMA, HSA_IOLINK_FLAGS_RESERVED,
    );
    // Changed since the 6.1 header: its value is pinned here.
    p.constant("HSA_CAP_RESERVED", 0xe00f_8000u32);
    seen.insert("HSA_CAP_RESERVED".into());
    let header = "/usr/include/linux/kfd_sysfs.h";
    let names = header_names(header);
    assert!(
        names.len() > 50,
        "parsed only {} names from {header}",
        names.len()
    );
    let missing: Vec<_> = names
        .into_iter()
        .filter(|n| n != "KFD_SYSFS_H_INCLUDED" && !seen.contains(n))
        .collect();
    assert!(
        missing.is_empty(),
        "constants of {header} not checked: {missing:?}"
    );
    p.run(env!("CARGO_TARGET_TMPDIR"));
}

/// kfd_sysfs.h bits newer than the 6.1 header (upstream 6.5 debugger API
/// through KFD 1.21), pinned.
#[test]
fn newer_sysfs_constants_are_pinned() {
    use kfd_sys::sysfs::*;
    assert_eq!(HSA_CAP_TRAP_DEBUG_SUPPORT, 0x8000);
    assert_eq!(
        HSA_CAP_TRAP_DEBUG_WAVE_LAUNCH_TRAP_OVERRIDE_SUPPORTED,
        0x1_0000
    );
    assert_eq!(HSA_CAP_TRAP_DEBUG_WAVE_LAUNCH_MODE_SUPPORTED, 0x2_0000);
    assert_eq!(
        HSA_CAP_TRAP_DEBUG_PRECISE_MEMORY_OPERATIONS_SUPPORTED,
        0x4_0000
    );
    assert_eq!(HSA_CAP_TRAP_DEBUG_FIRMWARE_SUPPORTED, 0x2000_0000);
    assert_eq!(
        HSA_CAP_TRAP_DEBUG_PRECISE_ALU_OPERATIONS_SUPPORTED,
        0x4000_0000
    );
    assert_eq!(HSA_CAP_PER_QUEUE_RESET_SUPPORTED, 0x8000_0000);
    assert_eq!(HSA_CAP_RESERVED, 0x000f_8000);
    assert_eq!(HSA_CAP2_PER_SDMA_QUEUE_RESET_SUPPORTED, 1);
    assert_eq!(HSA_CAP2_TRAP_DEBUG_LDS_OUT_OF_ADDR_RANGE_SUPPORTED, 2);
    assert_eq!(HSA_CAP2_RESERVED, 0xffff_fffc);
    assert_eq!(HSA_DBG_WATCH_ADDR_MASK_HI_BIT_MASK, 0x3f0);
    assert_eq!(HSA_DBG_WATCHPOINTS_EXCLUSIVE, 0x800);
    assert_eq!(HSA_DBG_RESERVED, 0xffff_ffff_ffff_f000);
    assert_eq!(node::ALL.len(), 40);
}
