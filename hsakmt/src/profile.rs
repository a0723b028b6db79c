//! The generation profile: every place where the C libraries this crate
//! replaces behave differently, as named switches, with one value per
//! library generation ([`ROCM_5_2`], [`ROCM_6_2`], [`NEWEST`]).
//!
//! The subsystem crates know only their own switches
//! ([`kfd_topology::Rules`], [`kfd_fmm::FmmRules`],
//! [`kfd_queue::QueueRules`], [`kfd_debug::DebugRules`]); this module decides their values per
//! generation, together with the switches of the C border itself
//! ([`Border`]). A build exports one generation
//! ([`crate::generation::PROFILE`]); all three values are compiled and
//! tested in every build.
//!
//! Facts behind the values: Debian 12's libhsakmt 5.2.3 and Debian 13's
//! libhsakmt 6.2.4 (ROCT-Thunk-Interface tags `rocm-5.2.3` and
//! `rocm-6.2.4`), and the newest upstream libhsakmt (rocm-systems
//! `projects/rocr-runtime/libhsakmt`). Each switch's documentation says
//! what it does; each value below says where a generation stands.

use kfd_debug::DebugRules;
use kfd_fmm::{FmmRules, MemFlags, ShareVia};
use kfd_queue::QueueRules;
use kfd_topology::{Rules, VgprTable};

/// One library generation's behaviour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Profile {
    /// The generation's name: `rocm-5.2`, `rocm-6.2` or `newest` (the
    /// hsakmt Cargo feature, the `--abi` value of the xtask commands and
    /// the directory under `target/dist`).
    pub name: &'static str,
    /// Topology derivations.
    pub topology: Rules,
    /// Memory manager.
    pub fmm: FmmRules,
    /// Queue buffers.
    pub queues: QueueRules,
    /// The debugger runtime.
    pub debug: DebugRules,
    /// The C border's own switches.
    pub border: Border,
}

/// The switches of the C border (this crate) and of the context set-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Border {
    /// The SVM API is used (`HSA_USE_SVM`, on unless "0"): unknown
    /// addresses in Free/Deregister/Unmap/Map are SVM ranges, save areas
    /// may be SVM memory. Without it the variable is not read and the API
    /// is off.
    pub svm_api: bool,
    /// A wait that reports a memory fault at an address no buffer of the
    /// memory manager holds asks the kernel about the fault's page as an
    /// SVM range (one `AMDKFD_IOC_SVM` GET_ATTR of a page, KFD ≥ 1.5), for
    /// the diagnostic log; whatever the answer, the wait's status stands.
    /// Independent of [`Border::svm_api`]: `HSA_USE_SVM=0` does not stop it.
    pub fault_asks_svm: bool,
    /// The memory manager (apertures, ACQUIRE_VM, memory policy, MMIO
    /// remap pages) is set up inside `hsaKmtOpenKFD`; otherwise when the
    /// topology snapshot is taken.
    pub memory_at_open: bool,
    /// `hsaKmtCloseKFD` never closes `/dev/kfd`: the last close keeps the
    /// primary context with every kernel object for the next open
    /// (`kfd_context::ContextOptions::keep_after_close`).
    pub keep_after_close: bool,
    /// `hsaKmtReleaseSystemProperties` also destroys the process apertures
    /// and doorbells, and the next acquire sets them up again.
    pub apertures_follow_topology: bool,
    /// The functions that run without the open check (20) on the primary
    /// context.
    pub unchecked: Unchecked,
    /// `hsaKmtRegisterGraphicsHandleToNodes` validates its node list even
    /// when it is empty (0 nodes or NULL → 3); otherwise only a list that
    /// is given.
    pub graphics_node_list_required: bool,
    /// `hsaKmtMapMemoryToGPUNodes` refuses a NULL address (1) before the
    /// open check.
    pub map_nodes_null_before_open: bool,
    /// Every failure of `hsaKmtMapMemoryToGPU` is reported as ERROR.
    pub map_failures_are_errors: bool,
    /// Every failed `AMDKFD_IOC_CREATE_QUEUE` is reported as ERROR
    /// (otherwise ENOMEM → NO_MEMORY, EINVAL → INVALID_PARAMETER).
    pub queue_failures_are_errors: bool,
    /// `hsaKmtGetClockCounters` takes the best of several samples rather
    /// than one.
    pub precise_clock_counters: bool,
    /// `hsaKmtProcessVMRead/Write`: how they answer.
    pub process_vm: ProcessVm,
    /// `hsaKmtPcSamplingQueryCapabilities` reports a kernel that does not
    /// know the request (`ENOTTY`) as NOT_SUPPORTED; otherwise ERROR, as
    /// every errno outside its table.
    pub pc_sampling_enotty_not_supported: bool,
    /// `hsaKmtRuntimeEnable/Disable` check the 5.2-era debug-trap
    /// interface (`AMDKFD_IOC_DBG_TRAP` 0x82) first and stop there: the
    /// 5.2-era runtime-enable request is not implemented (NOT_SUPPORTED).
    pub legacy_runtime_enable: bool,
}

/// The functions of the primary context that skip the open check (the C
/// library has no `CHECK_KFD_OPEN` in them); with KFD closed they fail
/// where their first real step fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unchecked {
    /// `hsaKmtGetTileConfig`.
    pub tile_config: bool,
    /// `hsaKmtQueryPointerInfo` and `hsaKmtSetMemoryUserData`.
    pub pointer_info: bool,
    /// The `hsaKmtSPM*` calls.
    pub spm: bool,
}

/// How `hsaKmtProcessVMRead/Write` answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProcessVm {
    /// Check the arguments, then issue `AMDKFD_IOC_CROSS_MEMORY_COPY`
    /// (a 5.2-era thunk-private request; ERROR where the kernel lacks it).
    CrossMemoryCopy,
    /// `NOT_IMPLEMENTED`, touching nothing.
    NotImplemented,
}

/// Debian 12's libhsakmt 5.2.3.
pub const ROCM_5_2: Profile = Profile {
    name: "rocm-5.2",
    topology: Rules {
        shader_banks_per_engine: false,
        gfx_fields_need_simds: false,
        device_table_up_to_gfx10: false,
        separate_override_engine_id: false,
        per_node_gfx_override: false,
        family_id_from_sysfs: false,
        clear_svm_capability_without_svm_api: false,
        cpu_caches_optional: false,
        xgmi_cpu_links: false,
        vgpr_table: VgprTable::Gfx908And90aLarge,
    },
    fmm: FmmRules {
        // Reserved bits of 5.2.3's HsaMemFlags.
        unknown_flags: MemFlags::EXTENDED_COHERENT.union(MemFlags::CONTIGUOUS),
        refuse_extended_coherent_mixes: false,
        refuse_coarse_uncached: false,
        always_executable: true,
        default_map_all_gpus: true,
        doorbells_on_all_gpus: true,
        unmap_unknown_as_svm: false,
        refuse_empty_registration: false,
        register_through_svm: false,
        register_needs_userptr: false,
        share: ShareVia::RocmIpc,
        refuse_unmarked_share_handles: false,
        // 5.2.3: OnlyAddress is one of its reserved bits; as 6.2.4 here.
        only_address_on_host_path: false,
        // fmm.c bind_mem_to_numa: no node to bind to → skip.
        numa_bind_strict: false,
        // fmm.c fmm_map_to_gpu_nodes: the aperture check comes first.
        map_nodes_refuses_unbacked_first: false,
    },
    queues: QueueRules {
        pinned_queue_page: false,
        svm_save_area: false,
        save_area_per_xcc: false,
        fixed_work_group_sizes: true,
        eop_for_every_queue: true,
    },
    // 5.2.3 has no firmware check (legacy_runtime_enable); unused.
    debug: DebugRules {
        firmware_check_skips_apus: false,
    },
    border: Border {
        svm_api: false,
        fault_asks_svm: false,
        keep_after_close: false,
        memory_at_open: true,
        apertures_follow_topology: false,
        unchecked: Unchecked {
            tile_config: true,
            pointer_info: true,
            spm: true,
        },
        graphics_node_list_required: true,
        map_nodes_null_before_open: true,
        map_failures_are_errors: true,
        queue_failures_are_errors: true,
        precise_clock_counters: false,
        process_vm: ProcessVm::CrossMemoryCopy,
        // 5.2.3 has no PC sampling; unused.
        pc_sampling_enotty_not_supported: false,
        legacy_runtime_enable: true,
    },
};

/// Debian 13's libhsakmt 6.2.4, the last shared libhsakmt ROCm released:
/// the newest library's memory set-up at acquire, SVM API, usable-peer
/// mappings and save-area placement, with 5.2.3's status mapping, IPC
/// sharing, always-executable allocations and gfx override, and a few
/// rules of its own (all three CoarseGrain/Uncached/ExtendedCoherent
/// pairs refused, its own VGPR table, fixed work-group sizes split per
/// XCC, FamilyID from DRM only).
pub const ROCM_6_2: Profile = Profile {
    name: "rocm-6.2",
    topology: Rules {
        shader_banks_per_engine: true,
        gfx_fields_need_simds: true,
        device_table_up_to_gfx10: true,
        separate_override_engine_id: false,
        per_node_gfx_override: false,
        family_id_from_sysfs: false,
        clear_svm_capability_without_svm_api: true,
        cpu_caches_optional: true,
        xgmi_cpu_links: false,
        vgpr_table: VgprTable::CdnaAndSomeRdnaLarge,
    },
    fmm: FmmRules {
        unknown_flags: MemFlags::empty(),
        refuse_extended_coherent_mixes: true,
        refuse_coarse_uncached: true,
        always_executable: true,
        default_map_all_gpus: false,
        doorbells_on_all_gpus: false,
        unmap_unknown_as_svm: true,
        refuse_empty_registration: false,
        register_through_svm: true,
        register_needs_userptr: true,
        share: ShareVia::RocmIpc,
        refuse_unmarked_share_handles: true,
        // memory.c: only the VRAM path looks at OnlyAddress.
        only_address_on_host_path: false,
        numa_bind_strict: false,
        // fmm.c fmm_map_to_gpu_nodes: handle 0 or mem_handle_aperture → 3.
        map_nodes_refuses_unbacked_first: true,
    },
    queues: QueueRules {
        pinned_queue_page: true,
        svm_save_area: true,
        save_area_per_xcc: true,
        fixed_work_group_sizes: true,
        eop_for_every_queue: false,
    },
    // debug.c: `if (node.NumCPUCores) continue;` skips APU nodes too.
    debug: DebugRules {
        firmware_check_skips_apus: true,
    },
    border: Border {
        svm_api: true,
        fault_asks_svm: true,
        keep_after_close: true,
        memory_at_open: false,
        apertures_follow_topology: true,
        unchecked: Unchecked {
            tile_config: false,
            pointer_info: false,
            spm: true,
        },
        graphics_node_list_required: false,
        map_nodes_null_before_open: false,
        map_failures_are_errors: false,
        queue_failures_are_errors: true,
        precise_clock_counters: false,
        process_vm: ProcessVm::NotImplemented,
        // pc_sampling.c: ENOTTY is not in the errno table → ERROR.
        pc_sampling_enotty_not_supported: false,
        legacy_runtime_enable: false,
    },
};

/// The newest upstream libhsakmt (with the context API).
pub const NEWEST: Profile = Profile {
    name: "newest",
    topology: Rules {
        shader_banks_per_engine: true,
        gfx_fields_need_simds: true,
        device_table_up_to_gfx10: true,
        separate_override_engine_id: true,
        per_node_gfx_override: true,
        family_id_from_sysfs: true,
        clear_svm_capability_without_svm_api: true,
        cpu_caches_optional: true,
        xgmi_cpu_links: true,
        vgpr_table: VgprTable::ByGfxRange,
    },
    fmm: FmmRules {
        unknown_flags: MemFlags::empty(),
        refuse_extended_coherent_mixes: true,
        refuse_coarse_uncached: false,
        always_executable: false,
        default_map_all_gpus: false,
        doorbells_on_all_gpus: false,
        unmap_unknown_as_svm: true,
        // fmm.c fmm_register_user_memory: the kernel refuses (EFAULT/EINVAL).
        refuse_empty_registration: false,
        register_through_svm: true,
        register_needs_userptr: true,
        // fmm.c hsakmt_fmm_share_memory: AMDKFD_IOC_IPC_EXPORT_HANDLE (ERROR
        // where the kernel lacks it); ours falls back to a dma-buf, so
        // sharing works on upstream kernels.
        share: ShareVia::RocmIpcThenDmaBuf,
        refuse_unmarked_share_handles: true,
        only_address_on_host_path: true,
        // fmm.c bind_mem_to_numa: NoSubstitute without a node → -EFAULT.
        numa_bind_strict: true,
        map_nodes_refuses_unbacked_first: true,
    },
    queues: QueueRules {
        pinned_queue_page: true,
        svm_save_area: true,
        save_area_per_xcc: true,
        fixed_work_group_sizes: false,
        eop_for_every_queue: false,
    },
    debug: DebugRules {
        firmware_check_skips_apus: false,
    },
    border: Border {
        svm_api: true,
        fault_asks_svm: true,
        keep_after_close: true,
        memory_at_open: false,
        apertures_follow_topology: true,
        unchecked: Unchecked {
            tile_config: false,
            pointer_info: false,
            // spm.c: no CHECK_KFD_OPEN; the node check fails first.
            spm: true,
        },
        graphics_node_list_required: false,
        map_nodes_null_before_open: false,
        map_failures_are_errors: false,
        queue_failures_are_errors: false,
        precise_clock_counters: true,
        process_vm: ProcessVm::NotImplemented,
        pc_sampling_enotty_not_supported: true,
        legacy_runtime_enable: false,
    },
};

/// Every generation, oldest first.
pub const ALL: [&Profile; 3] = [&ROCM_5_2, &ROCM_6_2, &NEWEST];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_subsystem_defaults_are_the_newest_library() {
        assert_eq!(NEWEST.topology, Rules::default());
        assert_eq!(NEWEST.fmm, FmmRules::default());
        assert_eq!(NEWEST.queues, QueueRules::default());
        assert_eq!(NEWEST.debug, DebugRules::default());
    }

    #[test]
    fn names_are_the_one_spelling() {
        let names: Vec<&str> = ALL.iter().map(|p| p.name).collect();
        assert_eq!(names, ["rocm-5.2", "rocm-6.2", "newest"]);
        assert_eq!(crate::generation::PROFILE.name, env!("HSAKMT_GENERATION"));
    }
}
