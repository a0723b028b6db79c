//! [`Pod`] for the kfd uapi structs the model copies in and out, each
//! checked at compile time.
//!
//! [`Pod::as_bytes`] hands out every byte of a value, so a `Pod` type must
//! have no implicit padding: for a struct, the sizes of its fields add up
//! to its size; for a union, a member covers all of it. The field lists
//! below are the structs' own: the destructuring pattern in each check
//! names every field (no `..`) with its type, so a list that misses a
//! field, or gives a wrong type, does not compile. Every field type must be
//! `Pod` itself.
//!
//! `kfd_ioctl_criu_args` is not `Pod`: 52 bytes of fields in 56 (four
//! bytes of tail padding, in the kernel's layout too); the ioctl table
//! traces it field by field instead.

use std::mem::size_of;

use kfd_sys::kfd::*;

use super::usermem::Pod;

/// Compiles only for `Pod` types.
#[allow(dead_code)]
const fn is_pod<T: Pod>() {}

/// The larger of two sizes (`Ord::max` is not const).
const fn max(a: usize, b: usize) -> usize {
    if a > b {
        a
    } else {
        b
    }
}

macro_rules! pod_structs {
    ($($t:ident { $($f:ident: $ft:ty),* $(,)? })*) => {
        $(
            // SAFETY: `$t` is a repr(C) struct of the kfd uapi whose fields
            // are all `Pod` (every bit pattern valid, no padding inside)
            // and, as the assertion below proves, fill it with no padding
            // between or after them: every bit pattern is a valid value
            // and every byte of a value is initialised.
            unsafe impl Pod for $t {}

            const _: () = {
                assert!(
                    size_of::<$t>() == 0 $(+ size_of::<$ft>())*,
                    concat!(stringify!($t), " has implicit padding"),
                );
                /// Names every field of the struct with its type.
                #[allow(dead_code, non_snake_case)]
                fn fields(v: $t) {
                    let $t { $($f),* } = v;
                    $(
                        let _: $ft = $f;
                        is_pod::<$ft>();
                    )*
                }
            };
        )*

        /// (name, size, sum of its field sizes) of every `Pod` struct.
        #[cfg(test)]
        pub(crate) const STRUCT_LAYOUTS: &[(&str, usize, usize)] = &[
            $((stringify!($t), size_of::<$t>(), 0 $(+ size_of::<$ft>())*),)*
        ];
    };
}

macro_rules! pod_unions {
    ($($t:ident { $($f:ident: $ft:ty),* $(,)? })*) => {
        $(
            // SAFETY: `$t` is a repr(C) union of the kfd uapi whose members
            // are all `Pod` and, as asserted below, one of which spans the
            // whole union, so no byte is padding in every member: every
            // bit pattern is a valid value. The model only makes values of
            // it whole (`Pod::zeroed`, `from_buf`, `read_array`), never from
            // a smaller member, so all their bytes are initialised.
            unsafe impl Pod for $t {}

            const _: () = {
                assert!(
                    size_of::<$t>() == { let mut m = 0; $(m = max(m, size_of::<$ft>());)* m },
                    concat!(stringify!($t), " is larger than its largest member"),
                );
                /// Each listed member has the listed type.
                #[allow(dead_code)]
                fn members() {
                    $(
                        let _ = $t { $f: <$ft as Pod>::zeroed() };
                        is_pod::<$ft>();
                    )*
                }
            };
        )*

        /// (name, size, size of the largest member) of every `Pod` union.
        #[cfg(test)]
        pub(crate) const UNION_LAYOUTS: &[(&str, usize, usize)] = &[
            $((stringify!($t), size_of::<$t>(), { let mut m = 0; $(m = max(m, size_of::<$ft>());)* m }),)*
        ];
    };
}

pod_structs! {
    kfd_ioctl_get_version_args {
        major_version: u32,
        minor_version: u32,
    }
    kfd_ioctl_create_queue_args {
        ring_base_address: u64,
        write_pointer_address: u64,
        read_pointer_address: u64,
        doorbell_offset: u64,
        ring_size: u32,
        gpu_id: u32,
        queue_type: u32,
        queue_percentage: u32,
        queue_priority: u32,
        queue_id: u32,
        eop_buffer_address: u64,
        eop_buffer_size: u64,
        ctx_save_restore_address: u64,
        ctx_save_restore_size: u32,
        ctl_stack_size: u32,
        sdma_engine_id: u32,
        metadata_ring_size: u32,
    }
    kfd_ioctl_destroy_queue_args {
        queue_id: u32,
        pad: u32,
    }
    kfd_ioctl_update_queue_args {
        ring_base_address: u64,
        queue_id: u32,
        ring_size: u32,
        queue_percentage: u32,
        queue_priority: u32,
    }
    kfd_ioctl_set_cu_mask_args {
        queue_id: u32,
        num_cu_mask: u32,
        cu_mask_ptr: u64,
    }
    kfd_ioctl_get_queue_wave_state_args {
        ctl_stack_address: u64,
        ctl_stack_used_size: u32,
        save_area_used_size: u32,
        queue_id: u32,
        pad: u32,
    }
    kfd_ioctl_get_available_memory_args {
        available: u64,
        gpu_id: u32,
        pad: u32,
    }
    kfd_queue_snapshot_entry {
        exception_status: u64,
        ring_base_address: u64,
        write_pointer_address: u64,
        read_pointer_address: u64,
        ctx_save_restore_address: u64,
        queue_id: u32,
        gpu_id: u32,
        ring_size: u32,
        queue_type: u32,
        ctx_save_restore_area_size: u32,
        reserved: u32,
    }
    kfd_dbg_device_info_entry {
        exception_status: u64,
        lds_base: u64,
        lds_limit: u64,
        scratch_base: u64,
        scratch_limit: u64,
        gpuvm_base: u64,
        gpuvm_limit: u64,
        gpu_id: u32,
        location_id: u32,
        vendor_id: u32,
        device_id: u32,
        revision_id: u32,
        subsystem_vendor_id: u32,
        subsystem_device_id: u32,
        fw_version: u32,
        gfx_target_version: u32,
        simd_count: u32,
        max_waves_per_simd: u32,
        array_count: u32,
        simd_arrays_per_engine: u32,
        num_xcc: u32,
        capability: u32,
        debug_prop: u32,
    }
    kfd_ioctl_set_memory_policy_args {
        alternate_aperture_base: u64,
        alternate_aperture_size: u64,
        gpu_id: u32,
        default_policy: u32,
        alternate_policy: u32,
        misc_process_flag: u32,
    }
    kfd_ioctl_get_clock_counters_args {
        gpu_clock_counter: u64,
        cpu_clock_counter: u64,
        system_clock_counter: u64,
        system_clock_freq: u64,
        gpu_id: u32,
        pad: u32,
    }
    kfd_process_device_apertures {
        lds_base: u64,
        lds_limit: u64,
        scratch_base: u64,
        scratch_limit: u64,
        gpuvm_base: u64,
        gpuvm_limit: u64,
        gpu_id: u32,
        pad: u32,
    }
    kfd_ioctl_get_process_apertures_args {
        process_apertures: [kfd_process_device_apertures; NUM_OF_SUPPORTED_GPUS as usize],
        num_of_nodes: u32,
        pad: u32,
    }
    kfd_ioctl_get_process_apertures_new_args {
        kfd_process_device_apertures_ptr: u64,
        num_of_nodes: u32,
        pad: u32,
    }
    kfd_ioctl_dbg_register_args {
        gpu_id: u32,
        pad: u32,
    }
    kfd_ioctl_dbg_unregister_args {
        gpu_id: u32,
        pad: u32,
    }
    kfd_ioctl_dbg_address_watch_args {
        content_ptr: u64,
        gpu_id: u32,
        buf_size_in_bytes: u32,
    }
    kfd_ioctl_dbg_wave_control_args {
        content_ptr: u64,
        gpu_id: u32,
        buf_size_in_bytes: u32,
    }
    kfd_runtime_info {
        r_debug: u64,
        runtime_state: u32,
        ttmp_setup: u32,
    }
    kfd_ioctl_runtime_enable_args {
        r_debug: u64,
        mode_mask: u32,
        capabilities_mask: u32,
    }
    kfd_ioctl_dbg_trap_enable_args {
        exception_mask: u64,
        rinfo_ptr: u64,
        rinfo_size: u32,
        dbg_fd: u32,
    }
    kfd_ioctl_dbg_trap_send_runtime_event_args {
        exception_mask: u64,
        gpu_id: u32,
        queue_id: u32,
    }
    kfd_ioctl_dbg_trap_set_exceptions_enabled_args {
        exception_mask: u64,
    }
    kfd_ioctl_dbg_trap_set_wave_launch_override_args {
        override_mode: u32,
        enable_mask: u32,
        support_request_mask: u32,
        pad: u32,
    }
    kfd_ioctl_dbg_trap_set_wave_launch_mode_args {
        launch_mode: u32,
        pad: u32,
    }
    kfd_ioctl_dbg_trap_suspend_queues_args {
        exception_mask: u64,
        queue_array_ptr: u64,
        num_queues: u32,
        grace_period: u32,
    }
    kfd_ioctl_dbg_trap_resume_queues_args {
        queue_array_ptr: u64,
        num_queues: u32,
        pad: u32,
    }
    kfd_ioctl_dbg_trap_set_node_address_watch_args {
        address: u64,
        mode: u32,
        mask: u32,
        gpu_id: u32,
        id: u32,
    }
    kfd_ioctl_dbg_trap_clear_node_address_watch_args {
        gpu_id: u32,
        id: u32,
    }
    kfd_ioctl_dbg_trap_set_flags_args {
        flags: u32,
        pad: u32,
    }
    kfd_ioctl_dbg_trap_query_debug_event_args {
        exception_mask: u64,
        gpu_id: u32,
        queue_id: u32,
    }
    kfd_ioctl_dbg_trap_query_exception_info_args {
        info_ptr: u64,
        info_size: u32,
        source_id: u32,
        exception_code: u32,
        clear_exception: u32,
    }
    kfd_ioctl_dbg_trap_queue_snapshot_args {
        exception_mask: u64,
        snapshot_buf_ptr: u64,
        num_queues: u32,
        entry_size: u32,
    }
    kfd_ioctl_dbg_trap_device_snapshot_args {
        exception_mask: u64,
        snapshot_buf_ptr: u64,
        num_devices: u32,
        entry_size: u32,
    }
    kfd_ioctl_dbg_trap_args {
        pid: u32,
        op: u32,
        u: kfd_ioctl_dbg_trap_args_union,
    }
    kfd_ioctl_create_event_args {
        event_page_offset: u64,
        event_trigger_data: u32,
        event_type: u32,
        auto_reset: u32,
        node_id: u32,
        event_id: u32,
        event_slot_index: u32,
    }
    kfd_ioctl_destroy_event_args {
        event_id: u32,
        pad: u32,
    }
    kfd_ioctl_set_event_args {
        event_id: u32,
        pad: u32,
    }
    kfd_ioctl_reset_event_args {
        event_id: u32,
        pad: u32,
    }
    kfd_memory_exception_failure {
        NotPresent: u32,
        ReadOnly: u32,
        NoExecute: u32,
        imprecise: u32,
    }
    kfd_hsa_memory_exception_data {
        failure: kfd_memory_exception_failure,
        va: u64,
        gpu_id: u32,
        ErrorType: u32,
    }
    kfd_hsa_hw_exception_data {
        reset_type: u32,
        reset_cause: u32,
        memory_lost: u32,
        gpu_id: u32,
    }
    kfd_hsa_signal_event_data {
        last_event_age: u64,
    }
    kfd_event_data {
        u: kfd_event_data_union,
        kfd_event_data_ext: u64,
        event_id: u32,
        pad: u32,
    }
    kfd_ioctl_wait_events_args {
        events_ptr: u64,
        num_events: u32,
        wait_for_all: u32,
        timeout: u32,
        wait_result: u32,
    }
    kfd_ioctl_set_scratch_backing_va_args {
        va_addr: u64,
        gpu_id: u32,
        pad: u32,
    }
    kfd_ioctl_get_tile_config_args {
        tile_config_ptr: u64,
        macro_tile_config_ptr: u64,
        num_tile_configs: u32,
        num_macro_tile_configs: u32,
        gpu_id: u32,
        gb_addr_config: u32,
        num_banks: u32,
        num_ranks: u32,
    }
    kfd_ioctl_set_trap_handler_args {
        tba_addr: u64,
        tma_addr: u64,
        gpu_id: u32,
        pad: u32,
    }
    kfd_ioctl_acquire_vm_args {
        drm_fd: u32,
        gpu_id: u32,
    }
    kfd_ioctl_alloc_memory_of_gpu_args {
        va_addr: u64,
        size: u64,
        handle: u64,
        mmap_offset: u64,
        gpu_id: u32,
        flags: u32,
    }
    kfd_ioctl_free_memory_of_gpu_args {
        handle: u64,
    }
    kfd_ioctl_map_memory_to_gpu_args {
        handle: u64,
        device_ids_array_ptr: u64,
        n_devices: u32,
        n_success: u32,
    }
    kfd_ioctl_unmap_memory_from_gpu_args {
        handle: u64,
        device_ids_array_ptr: u64,
        n_devices: u32,
        n_success: u32,
    }
    kfd_ioctl_alloc_queue_gws_args {
        queue_id: u32,
        num_gws: u32,
        first_gws: u32,
        pad: u32,
    }
    kfd_ioctl_get_dmabuf_info_args {
        size: u64,
        metadata_ptr: u64,
        metadata_size: u32,
        gpu_id: u32,
        flags: u32,
        dmabuf_fd: u32,
    }
    kfd_ioctl_import_dmabuf_args {
        va_addr: u64,
        handle: u64,
        gpu_id: u32,
        dmabuf_fd: u32,
    }
    kfd_ioctl_export_dmabuf_args {
        handle: u64,
        flags: u32,
        dmabuf_fd: u32,
    }
    kfd_ioctl_smi_events_args {
        gpuid: u32,
        anon_fd: u32,
    }
    kfd_ioctl_svm_attribute {
        r#type: u32,
        value: u32,
    }
    kfd_ioctl_svm_args {
        start_addr: u64,
        size: u64,
        op: u32,
        nattr: u32,
        attrs: [kfd_ioctl_svm_attribute; 0],
    }
    kfd_ioctl_set_xnack_mode_args {
        xnack_enabled: i32,
    }
    kfd_ioctl_create_process_args {
        flags: u32,
        pad: u32,
    }
}

pod_unions! {
    kfd_ioctl_dbg_trap_args_union {
        enable: kfd_ioctl_dbg_trap_enable_args,
        send_runtime_event: kfd_ioctl_dbg_trap_send_runtime_event_args,
        set_exceptions_enabled: kfd_ioctl_dbg_trap_set_exceptions_enabled_args,
        launch_override: kfd_ioctl_dbg_trap_set_wave_launch_override_args,
        launch_mode: kfd_ioctl_dbg_trap_set_wave_launch_mode_args,
        suspend_queues: kfd_ioctl_dbg_trap_suspend_queues_args,
        resume_queues: kfd_ioctl_dbg_trap_resume_queues_args,
        set_node_address_watch: kfd_ioctl_dbg_trap_set_node_address_watch_args,
        clear_node_address_watch: kfd_ioctl_dbg_trap_clear_node_address_watch_args,
        set_flags: kfd_ioctl_dbg_trap_set_flags_args,
        query_debug_event: kfd_ioctl_dbg_trap_query_debug_event_args,
        query_exception_info: kfd_ioctl_dbg_trap_query_exception_info_args,
        queue_snapshot: kfd_ioctl_dbg_trap_queue_snapshot_args,
        device_snapshot: kfd_ioctl_dbg_trap_device_snapshot_args,
    }
    kfd_event_data_union {
        memory_exception_data: kfd_hsa_memory_exception_data,
        hw_exception_data: kfd_hsa_hw_exception_data,
        signal_event_data: kfd_hsa_signal_event_data,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pod_types_have_no_implicit_padding() {
        assert!(STRUCT_LAYOUTS.len() > 40);
        for &(name, size, fields) in STRUCT_LAYOUTS {
            assert_eq!(size, fields, "{name}: {size} bytes, fields {fields}");
        }
        for &(name, size, largest) in UNION_LAYOUTS {
            assert_eq!(size, largest, "{name}: {size} bytes, largest {largest}");
        }
    }

    /// The one kfd struct the model handles that has implicit padding,
    /// the reason it is not `Pod`.
    #[test]
    fn criu_args_have_tail_padding() {
        let fields = 4 * size_of::<u64>() + 5 * size_of::<u32>();
        assert_eq!(fields, 52);
        assert_eq!(size_of::<kfd_ioctl_criu_args>(), 56);
    }
}
