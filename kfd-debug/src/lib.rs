//! kfd-debug: the debugger side of the KFD thunk, as a per-context
//! sub-context.
//!
//! # Example
//!
//! What ROCr does at start-up and what a debugger does next, on a
//! simulated MI210 (`kfd-sim`; with [`kfd_sys::NixDriver`] instead, on
//! this machine): runtime enable, attach (DBG_TRAP enable), a device
//! snapshot, detach.
//!
//! ```
//! use std::sync::Arc;
//! use kfd_debug::Debug;
//! use kfd_sys::{kfd, DeviceFile, Driver};
//!
//! let sim = kfd_sim::Sim::preset("mi210")?;
//! let topology = kfd_topology::Topology::snapshot(&sim)?;
//! let driver: Arc<dyn Driver> = Arc::new(sim.clone());
//! let file = Arc::new(DeviceFile::open_kfd(driver)?);
//! let debug = Debug::from_topology(file, true, &topology); // primary context
//!
//! assert!(debug.kfd_version()? >= (1, 13)); // DBG_TRAP exists
//! debug.runtime_enable(0, true)?;
//! let info = debug.enable(kfd::KFD_EC_MASK_QUEUE)?;
//! assert_eq!(info.runtime_state, kfd::DEBUG_RUNTIME_STATE_ENABLED);
//! let devices = debug.device_snapshot(0)?;
//! assert_eq!(devices.len(), 1);
//! assert_eq!(devices[0].gfx_target_version, 90010); // gfx90a
//! debug.disable()?;
//! debug.runtime_disable()?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! `examples/runtime.rs` does the same and prints each answer.
//!
//! # Overview
//!
//! A [`struct@Debug`] belongs to one KFD context (one `/dev/kfd` descriptor). It
//! knows whether that context is the process's primary context: only the
//! primary context may debug, so on a secondary context every operation
//! returns [`Error::SecondaryContext`] (C status `NOT_SUPPORTED`).
//!
//! What it covers:
//!
//! - **Runtime enable** ([`Debug::runtime_enable`], [`Debug::runtime_disable`],
//!   [`Debug::runtime_capabilities`], [`Debug::check_runtime_debug_support`]):
//!   what ROCr calls at start-up through `AMDKFD_IOC_RUNTIME_ENABLE`, with
//!   the C library's checks: primary context only, every GPU node's
//!   firmware must support the debugger, KFD ioctl interface 1.13 or newer,
//!   and `EBUSY` from the kernel means [`Error::RuntimeBusy`]
//!   (C status `UNAVAILABLE`).
//! - **The debugger operations of `AMDKFD_IOC_DBG_TRAP`** (KFD 1.13+):
//!   enable/disable, send runtime event, set exceptions enabled, wave
//!   launch override and mode, suspend/resume queues, set/clear node
//!   address watch, set flags, query debug event, query exception info,
//!   queue and device snapshots, plus the raw [`Debug::debug_trap_ioctl`].
//! - **The v1 debugger** ([`Debug::dbg_register`] and friends): the
//!   kernel's deprecated requests, which current kernels refuse with
//!   `EPERM`, so they end in [`Error::Kernel`] (C status `ERROR`), as
//!   in the C library.
//!
//! This crate has no `unsafe` code: requests whose arguments carry user
//! pointers go through the safe wrappers of [`kfd_sys::dbg_trap`].
//!
//! Node ids are the thunk's user node ids (indices into the topology
//! snapshot); [`DebugNode`] carries what this crate needs of each node.

#![forbid(unsafe_code)]

mod error;
mod v1;

pub use error::{Error, Result};
pub use v1::{AddressWatchPoint, MAX_ALLOWED_NUM_POINTS};

/// One `AMDKFD_IOC_DBG_TRAP` operation with its buffers, for
/// [`Debug::debug_trap_ioctl`].
pub use kfd_sys::dbg_trap::Request as DebugTrapRequest;

use std::fmt;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::sync::{Arc, Mutex, MutexGuard};

use kfd_sys::dbg_trap::{self, Request};
use kfd_sys::kfd::{self, kfd_dbg_device_info_entry, kfd_queue_snapshot_entry, kfd_runtime_info};
use kfd_sys::sync::lock;
use kfd_sys::{DeviceFile, Errno, KfdVersionCell};

/// The KFD ioctl minor version (of major 1) that introduced the debugger
/// interface (`AMDKFD_IOC_RUNTIME_ENABLE`, `AMDKFD_IOC_DBG_TRAP`).
pub const KFD_MINOR_MIN_DEBUG: u32 = 13;

/// What the debug sub-context needs to know about one topology node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DebugNode {
    /// KFD gpu_id; 0 for a node without a GPU.
    pub gpu_id: u32,
    /// `NumCPUCores` of the node.
    pub cpu_cores: u32,
    /// `NumFComputeCores` (SIMD count) of the node.
    pub simd_count: u32,
    /// The node's `DebugSupportedFirmware` capability bit.
    pub debug_supported_firmware: bool,
}

impl DebugNode {
    /// A CPU-only node with `cores` CPU cores.
    pub const fn cpu(cores: u32) -> DebugNode {
        DebugNode {
            gpu_id: 0,
            cpu_cores: cores,
            simd_count: 0,
            debug_supported_firmware: false,
        }
    }

    /// A discrete GPU node.
    pub const fn gpu(gpu_id: u32, simd_count: u32, debug_supported_firmware: bool) -> DebugNode {
        DebugNode {
            gpu_id,
            cpu_cores: 0,
            simd_count,
            debug_supported_firmware,
        }
    }

    /// True for a node with CPU cores and no SIMDs: the runtime-enable
    /// firmware check skips these (an APU node, which has both, is checked).
    pub fn is_cpu_only(&self) -> bool {
        self.cpu_cores != 0 && self.simd_count == 0
    }
}

/// The choices the C library generations make differently in this
/// sub-context (default: the newest library's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DebugRules {
    /// The debugger-firmware check of runtime enable skips every node
    /// that has CPU cores, APU nodes included, so only discrete GPUs are
    /// checked (libhsakmt 6.2.4's `if (node.NumCPUCores) continue;`).
    /// Otherwise only CPU-only nodes are skipped (the newest library).
    pub firmware_check_skips_apus: bool,
}

/// Runtime capabilities the kernel reports on runtime enable
/// (`capabilities_mask` of `kfd_ioctl_runtime_enable_args`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct RuntimeCapabilities(pub u32);

impl RuntimeCapabilities {
    /// `KFD_RUNTIME_ENABLE_CAPS_SUPPORTS_CORE_DUMP_MASK`: the kernel can
    /// write GPU core dumps.
    pub const SUPPORTS_CORE_DUMP: u32 = kfd::rocm::KFD_RUNTIME_ENABLE_CAPS_SUPPORTS_CORE_DUMP_MASK;

    /// Whether the kernel supports GPU core dumps.
    pub fn supports_core_dump(self) -> bool {
        self.0 & Self::SUPPORTS_CORE_DUMP != 0
    }
}

/// Result of [`Debug::set_wave_launch_override`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WaveLaunchOverride {
    /// The trap mask that was enabled before the call.
    pub previous_enable_mask: u32,
    /// Which of the requested trap mask bits the hardware supports.
    pub supported_mask: u32,
}

/// Result of [`Debug::suspend_queues`] and [`Debug::resume_queues`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct QueueOperation {
    /// How many queues the kernel suspended (resumed).
    pub processed: u32,
    /// The queue ids as the kernel left them: ids it could not handle
    /// carry `KFD_DBG_QUEUE_ERROR_MASK` or `KFD_DBG_QUEUE_INVALID_MASK`.
    pub queue_ids: Vec<u32>,
}

impl QueueOperation {
    /// The ids the kernel flagged as failed or invalid.
    pub fn failed(&self) -> impl Iterator<Item = u32> + '_ {
        let mask = kfd::KFD_DBG_QUEUE_ERROR_MASK | kfd::KFD_DBG_QUEUE_INVALID_MASK;
        self.queue_ids
            .iter()
            .copied()
            .filter(move |id| id & mask != 0)
    }
}

/// Result of [`Debug::query_debug_event`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DebugEvent {
    /// The raised exceptions (`KFD_EC_MASK` bits).
    pub exception_mask: u64,
    /// The device that raised them (`KFD_INVALID_GPUID` if none).
    pub gpu_id: u32,
    /// The queue that raised them (`KFD_INVALID_QUEUEID` if none).
    pub queue_id: u32,
}

#[derive(Debug, Default)]
struct State {
    runtime_capabilities: u32,
    runtime_info: kfd_runtime_info,
}

/// The debug sub-context of one KFD context.
///
/// Holds the context's descriptor, whether the context is primary, the
/// nodes of its topology snapshot, and the runtime-enable state (the
/// capabilities and `kfd_runtime_info` of the last runtime enable).
pub struct Debug {
    file: Arc<DeviceFile>,
    primary: bool,
    nodes: Vec<DebugNode>,
    rules: DebugRules,
    kfd_version: KfdVersionCell,
    state: Mutex<State>,
}

impl fmt::Debug for Debug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Debug")
            .field("file", &self.file)
            .field("primary", &self.primary)
            .field("nodes", &self.nodes)
            .field("rules", &self.rules)
            .field("kfd_version", &self.kfd_version)
            .field("state", &*self.lock())
            .finish()
    }
}

impl Debug {
    /// Creates the debug sub-context of a context whose descriptor is
    /// `file`. `primary` says whether the context is the process's primary
    /// context; `nodes` lists the topology snapshot's nodes by user node id.
    pub fn new(file: Arc<DeviceFile>, primary: bool, nodes: Vec<DebugNode>) -> Debug {
        Debug {
            file,
            primary,
            nodes,
            rules: DebugRules::default(),
            kfd_version: KfdVersionCell::default(),
            state: Mutex::new(State::default()),
        }
    }

    /// The same sub-context following `rules` instead of the newest
    /// library's choices.
    pub fn with_rules(self, rules: DebugRules) -> Debug {
        Debug { rules, ..self }
    }

    /// Like [`Debug::new`], with the KFD ioctl interface version already
    /// known (so it is not queried again).
    pub fn with_kfd_version(
        file: Arc<DeviceFile>,
        primary: bool,
        nodes: Vec<DebugNode>,
        major: u32,
        minor: u32,
    ) -> Debug {
        Debug {
            kfd_version: KfdVersionCell::known(major, minor),
            ..Debug::new(file, primary, nodes)
        }
    }

    /// Whether this is the debug sub-context of the primary context.
    pub fn is_primary(&self) -> bool {
        self.primary
    }

    /// The nodes this sub-context was created with.
    pub fn nodes(&self) -> &[DebugNode] {
        &self.nodes
    }

    /// The context's KFD descriptor.
    pub fn file(&self) -> &Arc<DeviceFile> {
        &self.file
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // The state is plain data: a panic while it was held cannot leave
        // it half-updated in a way that matters, so recover from poison.
        lock(&self.state)
    }

    fn require_primary(&self) -> Result<()> {
        if self.primary {
            Ok(())
        } else {
            Err(Error::SecondaryContext)
        }
    }

    /// The KFD ioctl interface version `(major, minor)`, queried once with
    /// `AMDKFD_IOC_GET_VERSION` and cached.
    pub fn kfd_version(&self) -> Result<(u32, u32)> {
        self.kfd_version
            .get(&self.file)
            .map_err(Error::VersionQuery)
    }

    fn require_kfd_minor(&self, required_minor: u32) -> Result<()> {
        let (major, minor) = self.kfd_version()?;
        let too_old = Error::KfdTooOld {
            major,
            minor,
            required_minor,
        };
        ((major, minor) >= (1, required_minor))
            .then_some(())
            .ok_or(too_old)
    }

    /// Checks that `node` exists and returns its gpu_id (0 for a CPU node).
    fn node_gpu_id(&self, node: u32) -> Result<u32> {
        self.nodes
            .get(node as usize)
            .map(|n| n.gpu_id)
            .ok_or(Error::InvalidNode(node))
    }

    /// Checks that `node` exists and has a GPU, and returns its gpu_id.
    fn gpu_node(&self, node: u32) -> Result<u32> {
        match self.node_gpu_id(node)? {
            0 => Err(Error::NotAGpu(node)),
            id => Ok(id),
        }
    }

    // -----------------------------------------------------------------
    // Runtime enable
    // -----------------------------------------------------------------

    /// Whether this context may use the debugger runtime interfaces
    /// (`hsaKmtCheckRuntimeDebugSupportCtx`): it must be the primary
    /// context, every GPU node must have debugger firmware (APU nodes
    /// too, unless [`DebugRules::firmware_check_skips_apus`]), and the
    /// KFD ioctl interface must be 1.13 or newer.
    ///
    /// A sub-context made without nodes (no topology snapshot) fails with
    /// [`Error::NoTopology`]: every system has at least one node.
    pub fn check_runtime_debug_support(&self) -> Result<()> {
        self.require_primary()?;
        if self.nodes.is_empty() {
            return Err(Error::NoTopology);
        }
        let skipped = |n: &DebugNode| {
            n.is_cpu_only() || (self.rules.firmware_check_skips_apus && n.cpu_cores != 0)
        };
        if let Some(i) = self
            .nodes
            .iter()
            .position(|n| !skipped(n) && !n.debug_supported_firmware)
        {
            return Err(Error::FirmwareUnsupported { node: i as u32 });
        }
        self.require_kfd_minor(KFD_MINOR_MIN_DEBUG)
    }

    /// Enables the runtime for debugging (`hsaKmtRuntimeEnableCtx`):
    /// records `r_debug` (the address of the runtime's `struct r_debug`,
    /// handed to a debugger; the kernel never dereferences it) and whether
    /// the trap handler saves its temporaries (`setup_ttmp`).
    ///
    /// Returns the runtime capabilities the kernel reports. `EBUSY` from
    /// the kernel gives [`Error::RuntimeBusy`] and leaves the runtime state
    /// "enabled, busy".
    pub fn runtime_enable(&self, r_debug: u64, setup_ttmp: bool) -> Result<RuntimeCapabilities> {
        self.check_runtime_debug_support()?;
        let mut args = kfd::kfd_ioctl_runtime_enable_args {
            r_debug,
            mode_mask: kfd::KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK
                | if setup_ttmp {
                    kfd::KFD_RUNTIME_ENABLE_MODE_TTMP_SAVE_MASK
                } else {
                    0
                },
            capabilities_mask: 0,
        };
        let r = self
            .file
            .ioctl_plain(kfd::AMDKFD_IOC_RUNTIME_ENABLE, &mut args);
        let mut state = self.lock();
        state.runtime_info.r_debug = args.r_debug;
        state.runtime_info.ttmp_setup =
            u32::from(args.mode_mask & kfd::KFD_RUNTIME_ENABLE_MODE_TTMP_SAVE_MASK != 0);
        match r {
            Ok(_) => {
                state.runtime_capabilities = args.capabilities_mask;
                state.runtime_info.runtime_state = kfd::DEBUG_RUNTIME_STATE_ENABLED;
                Ok(RuntimeCapabilities(args.capabilities_mask))
            }
            Err(Errno::EBUSY) => {
                state.runtime_info.runtime_state = kfd::DEBUG_RUNTIME_STATE_ENABLED_BUSY;
                Err(Error::RuntimeBusy)
            }
            Err(Errno::EEXIST) => Err(Error::QueuesExist),
            Err(errno) => Err(Error::Kernel {
                op: "RUNTIME_ENABLE",
                errno,
            }),
        }
    }

    /// Disables the runtime for debugging (`hsaKmtRuntimeDisableCtx`).
    ///
    /// Unlike the C library, which leaves its cached runtime info as it
    /// was, a successful disable sets the cached runtime state to
    /// `DEBUG_RUNTIME_STATE_DISABLED`; the cached capabilities stay, as in C.
    pub fn runtime_disable(&self) -> Result<()> {
        self.check_runtime_debug_support()?;
        let mut args = kfd::kfd_ioctl_runtime_enable_args::default();
        self.file
            .ioctl_plain(kfd::AMDKFD_IOC_RUNTIME_ENABLE, &mut args)
            .map_err(|errno| Error::Kernel {
                op: "RUNTIME_ENABLE",
                errno,
            })?;
        self.lock().runtime_info.runtime_state = kfd::DEBUG_RUNTIME_STATE_DISABLED;
        Ok(())
    }

    /// The capabilities of the last successful runtime enable, 0 before
    /// one (`hsaKmtGetRuntimeCapabilitiesCtx`).
    pub fn runtime_capabilities(&self) -> Result<RuntimeCapabilities> {
        self.require_primary()?;
        Ok(RuntimeCapabilities(self.lock().runtime_capabilities))
    }

    /// The runtime info this context recorded at runtime enable
    /// (`hsaKmtGetCoreRuntimeInfo`): `r_debug`, state and TTMP setup.
    pub fn core_runtime_info(&self) -> Result<kfd_runtime_info> {
        self.require_primary()?;
        Ok(self.lock().runtime_info)
    }

    // -----------------------------------------------------------------
    // AMDKFD_IOC_DBG_TRAP
    // -----------------------------------------------------------------

    /// Issues `request` (`AMDKFD_IOC_DBG_TRAP`) for this process; the
    /// kernel's answer is written into `request`.
    fn trap(&self, request: &mut dbg_trap::Request<'_>) -> Result<i32> {
        dbg_trap::issue(&self.file, std::process::id(), request).map_err(|errno| Error::Kernel {
            op: request.name(),
            errno,
        })
    }

    fn debugger_checks(&self) -> Result<()> {
        self.require_primary()?;
        self.require_kfd_minor(KFD_MINOR_MIN_DEBUG)
    }

    /// Attaches the debugger to this process (`KFD_IOC_DBG_TRAP_ENABLE`,
    /// `hsaKmtDbgEnableCtx`): the kernel starts reporting the exceptions in
    /// `exception_mask` and returns the runtime info.
    ///
    /// The kernel notifies the debugger by writing to an event file; like
    /// the C library this passes the context's own KFD descriptor. Use
    /// [`Debug::enable_with_event_fd`] to pass an eventfd instead.
    pub fn enable(&self, exception_mask: u64) -> Result<kfd_runtime_info> {
        let fd = self.file.as_fd();
        self.enable_with_event_fd(exception_mask, fd)
    }

    /// Like [`Debug::enable`], with `event_fd` as the notification file.
    pub fn enable_with_event_fd(
        &self,
        exception_mask: u64,
        event_fd: BorrowedFd<'_>,
    ) -> Result<kfd_runtime_info> {
        self.debugger_checks()?;
        let mut info = kfd_runtime_info::default();
        dbg_trap::enable(
            &self.file,
            std::process::id(),
            exception_mask,
            event_fd.as_raw_fd() as u32,
            &mut info,
        )
        .map_err(|errno| Error::Kernel {
            op: "DBG_TRAP_ENABLE",
            errno,
        })?;
        Ok(info)
    }

    /// Detaches the debugger (`KFD_IOC_DBG_TRAP_DISABLE`,
    /// `hsaKmtDbgDisableCtx`).
    pub fn disable(&self) -> Result<()> {
        self.debugger_checks()?;
        let dbg_fd = self.file.as_fd().as_raw_fd() as u32;
        self.trap(&mut Request::Disable { dbg_fd })?;
        Ok(())
    }

    /// Raises `exception_mask` to the runtime for a queue of `node`
    /// (`KFD_IOC_DBG_TRAP_SEND_RUNTIME_EVENT`).
    pub fn send_runtime_event(&self, exception_mask: u64, node: u32, queue_id: u32) -> Result<()> {
        self.debugger_checks()?;
        let gpu_id = self.gpu_node(node)?;
        self.trap(&mut Request::SendRuntimeEvent(
            kfd::kfd_ioctl_dbg_trap_send_runtime_event_args {
                exception_mask,
                gpu_id,
                queue_id,
            },
        ))?;
        Ok(())
    }

    /// Sets the exceptions reported to the debugger
    /// (`KFD_IOC_DBG_TRAP_SET_EXCEPTIONS_ENABLED`).
    pub fn set_exceptions_enabled(&self, exception_mask: u64) -> Result<()> {
        self.debugger_checks()?;
        self.trap(&mut Request::SetExceptionsEnabled(
            kfd::kfd_ioctl_dbg_trap_set_exceptions_enabled_args { exception_mask },
        ))?;
        Ok(())
    }

    /// Overrides the wave launch trap mask
    /// (`KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_OVERRIDE`). `override_mode` is a
    /// `KFD_DBG_TRAP_OVERRIDE_*` value, the masks `KFD_DBG_TRAP_MASK_*`
    /// bits.
    pub fn set_wave_launch_override(
        &self,
        override_mode: u32,
        enable_mask: u32,
        support_request_mask: u32,
    ) -> Result<WaveLaunchOverride> {
        self.debugger_checks()?;
        let mut r =
            Request::SetWaveLaunchOverride(kfd::kfd_ioctl_dbg_trap_set_wave_launch_override_args {
                override_mode,
                enable_mask,
                support_request_mask,
                pad: 0,
            });
        self.trap(&mut r)?;
        let Request::SetWaveLaunchOverride(o) = r else {
            unreachable!("the variant does not change")
        };
        Ok(WaveLaunchOverride {
            previous_enable_mask: o.enable_mask,
            supported_mask: o.support_request_mask,
        })
    }

    /// Sets how new waves are launched
    /// (`KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_MODE`, a
    /// `KFD_DBG_TRAP_WAVE_LAUNCH_MODE_*` value).
    pub fn set_wave_launch_mode(&self, launch_mode: u32) -> Result<()> {
        self.debugger_checks()?;
        self.trap(&mut Request::SetWaveLaunchMode(
            kfd::kfd_ioctl_dbg_trap_set_wave_launch_mode_args {
                launch_mode,
                pad: 0,
            },
        ))?;
        Ok(())
    }

    fn queue_op(
        &self,
        suspend: bool,
        queue_ids: &[u32],
        exception_mask: u64,
        grace_period: u32,
    ) -> Result<QueueOperation> {
        self.debugger_checks()?;
        let num_queues = u32::try_from(queue_ids.len())
            .map_err(|_| Error::InvalidArgument("too many queue ids"))?;
        let mut ids = queue_ids.to_vec();
        let mut request = if suspend {
            Request::SuspendQueues {
                exception_mask,
                grace_period,
                queue_ids: &mut ids,
            }
        } else {
            Request::ResumeQueues {
                queue_ids: &mut ids,
            }
        };
        let r = self.trap(&mut request)?;
        if r < 0 || r as u32 > num_queues {
            return Err(Error::UnexpectedReturn {
                op: request.name(),
                value: r,
            });
        }
        Ok(QueueOperation {
            processed: r as u32,
            queue_ids: ids,
        })
    }

    /// Suspends the queues in `queue_ids` (kernel queue ids)
    /// (`KFD_IOC_DBG_TRAP_SUSPEND_QUEUES`), clearing `exception_mask` on
    /// them; `grace_period` is in units of 1K GPU clocks.
    pub fn suspend_queues(
        &self,
        queue_ids: &[u32],
        exception_mask: u64,
        grace_period: u32,
    ) -> Result<QueueOperation> {
        self.queue_op(true, queue_ids, exception_mask, grace_period)
    }

    /// Resumes the queues in `queue_ids` (`KFD_IOC_DBG_TRAP_RESUME_QUEUES`).
    pub fn resume_queues(&self, queue_ids: &[u32]) -> Result<QueueOperation> {
        self.queue_op(false, queue_ids, 0, 0)
    }

    /// Sets an address watch point on `node`
    /// (`KFD_IOC_DBG_TRAP_SET_NODE_ADDRESS_WATCH`); `mode` is a
    /// `KFD_DBG_TRAP_ADDRESS_WATCH_MODE_*` value. Returns the watch id.
    pub fn set_node_address_watch(
        &self,
        node: u32,
        address: u64,
        mode: u32,
        mask: u32,
    ) -> Result<u32> {
        self.debugger_checks()?;
        let gpu_id = self.gpu_node(node)?;
        let mut r =
            Request::SetNodeAddressWatch(kfd::kfd_ioctl_dbg_trap_set_node_address_watch_args {
                address,
                mode,
                mask,
                gpu_id,
                id: 0,
            });
        self.trap(&mut r)?;
        let Request::SetNodeAddressWatch(w) = r else {
            unreachable!("the variant does not change")
        };
        Ok(w.id)
    }

    /// Clears watch point `id` of `node`
    /// (`KFD_IOC_DBG_TRAP_CLEAR_NODE_ADDRESS_WATCH`).
    pub fn clear_node_address_watch(&self, node: u32, id: u32) -> Result<()> {
        self.debugger_checks()?;
        let gpu_id = self.gpu_node(node)?;
        self.trap(&mut Request::ClearNodeAddressWatch(
            kfd::kfd_ioctl_dbg_trap_clear_node_address_watch_args { gpu_id, id },
        ))?;
        Ok(())
    }

    /// Sets the debug flags (`KFD_IOC_DBG_TRAP_SET_FLAGS`,
    /// `KFD_DBG_TRAP_FLAG_*` bits). Returns the previous flags.
    pub fn set_flags(&self, flags: u32) -> Result<u32> {
        self.debugger_checks()?;
        let mut r = Request::SetFlags(kfd::kfd_ioctl_dbg_trap_set_flags_args { flags, pad: 0 });
        self.trap(&mut r)?;
        let Request::SetFlags(f) = r else {
            unreachable!("the variant does not change")
        };
        Ok(f.flags)
    }

    /// Returns the next pending debug event and clears `exception_mask`
    /// from it (`KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT`).
    pub fn query_debug_event(&self, exception_mask: u64) -> Result<DebugEvent> {
        self.debugger_checks()?;
        let mut r = Request::QueryDebugEvent(kfd::kfd_ioctl_dbg_trap_query_debug_event_args {
            exception_mask,
            gpu_id: 0,
            queue_id: 0,
        });
        self.trap(&mut r)?;
        let Request::QueryDebugEvent(q) = r else {
            unreachable!("the variant does not change")
        };
        Ok(DebugEvent {
            exception_mask: q.exception_mask,
            gpu_id: q.gpu_id,
            queue_id: q.queue_id,
        })
    }

    /// Copies the information of exception `exception_code` raised by
    /// `source_id` (a gpu_id or queue id, depending on the code) into
    /// `info` (`KFD_IOC_DBG_TRAP_QUERY_EXCEPTION_INFO`), optionally
    /// clearing the exception. Returns the size the kernel has for it,
    /// which may exceed `info.len()` (then `info` holds a prefix).
    pub fn query_exception_info(
        &self,
        source_id: u32,
        exception_code: u32,
        clear_exception: bool,
        info: &mut [u8],
    ) -> Result<u32> {
        self.debugger_checks()?;
        u32::try_from(info.len()).map_err(|_| Error::InvalidArgument("info buffer too large"))?;
        dbg_trap::query_exception_info(
            &self.file,
            std::process::id(),
            source_id,
            exception_code,
            clear_exception,
            info,
        )
        .map_err(|errno| Error::Kernel {
            op: "DBG_TRAP_QUERY_EXCEPTION_INFO",
            errno,
        })
    }

    /// Snapshot of this process's queues
    /// (`KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT`), clearing `exception_mask`
    /// on each. Asks for the count first, then fetches that many.
    pub fn queue_snapshot(&self, exception_mask: u64) -> Result<Vec<kfd_queue_snapshot_entry>> {
        self.debugger_checks()?;
        snapshot(Vec::new(), |entries| {
            self.fetch_queue_snapshot(exception_mask, entries)
        })
    }

    fn fetch_queue_snapshot(
        &self,
        exception_mask: u64,
        entries: &mut [kfd_queue_snapshot_entry],
    ) -> Result<(u32, u32)> {
        dbg_trap::get_queue_snapshot(&self.file, std::process::id(), exception_mask, entries)
            .map_err(|errno| Error::Kernel {
                op: "DBG_TRAP_GET_QUEUE_SNAPSHOT",
                errno,
            })
    }

    /// Snapshot of the devices of this process
    /// (`KFD_IOC_DBG_TRAP_GET_DEVICE_SNAPSHOT`), clearing `exception_mask`
    /// on each.
    pub fn device_snapshot(&self, exception_mask: u64) -> Result<Vec<kfd_dbg_device_info_entry>> {
        self.debugger_checks()?;
        // The kernel refuses a null buffer even with a count of 0, so start
        // with room for every GPU node and grow if the kernel has more.
        let gpus = self.nodes.iter().filter(|n| n.gpu_id != 0).count().max(1);
        let entries = vec![kfd_dbg_device_info_entry::default(); gpus];
        snapshot(entries, |entries| {
            dbg_trap::get_device_snapshot(&self.file, std::process::id(), exception_mask, entries)
                .map_err(|errno| Error::Kernel {
                    op: "DBG_TRAP_GET_DEVICE_SNAPSHOT",
                    errno,
                })
        })
    }

    /// `hsaKmtDbgGetDeviceDataCtx`: the device snapshot without clearing
    /// any exception.
    pub fn get_device_data(&self) -> Result<Vec<kfd_dbg_device_info_entry>> {
        self.device_snapshot(0)
    }

    /// `hsaKmtDbgGetQueueDataCtx`: the queue snapshot, clearing the
    /// "new queue" exception; with `suspend`, suspends every queue first
    /// and returns the snapshot taken after suspending.
    ///
    /// The requests are the C library's: a count-only snapshot, then one
    /// into a buffer of that many entries and, with `suspend`, the
    /// suspension of those queues and a last snapshot into the same
    /// buffer, every one clearing "new queue". The C library returns
    /// `ERROR` whenever `suspend` is false or there are no
    /// queues (its queue-id buffer is then NULL and it treats that as an
    /// allocation failure), after the count-only request; this returns
    /// the snapshot in those cases.
    pub fn get_queue_data(&self, suspend: bool) -> Result<Vec<kfd_queue_snapshot_entry>> {
        let new_queue = kfd::kfd_ec_mask(kfd::EC_QUEUE_NEW);
        let entries = self.queue_snapshot(new_queue)?;
        if !suspend || entries.is_empty() {
            return Ok(entries);
        }
        let ids: Vec<u32> = entries.iter().map(|e| e.queue_id).collect();
        self.suspend_queues(&ids, new_queue, 0)?;
        snapshot(entries, |e| self.fetch_queue_snapshot(new_queue, e))
    }

    /// Issues a caller-built `AMDKFD_IOC_DBG_TRAP` request for process
    /// `pid` as `hsaKmtDebugTrapIoctlCtx` does, with its success rule:
    /// suspend and resume succeed when the kernel returns a count between
    /// 0 and the number of queues, every other operation only on 0.
    /// Returns what the kernel returned; its answer is written into
    /// `request`. A refused request is [`Error::Kernel`], a success value
    /// outside the rule [`Error::UnexpectedReturn`] (with the value).
    ///
    /// Only the primary context is checked, not the KFD version, as in C.
    pub fn debug_trap_ioctl(&self, pid: u32, request: &mut DebugTrapRequest<'_>) -> Result<i32> {
        self.require_primary()?;
        let answer = dbg_trap::issue(&self.file, pid, request);
        debug_trap_outcome(request.queue_count(), answer)
    }
}

/// The success rule of `hsaKmtDebugTrapIoctl` applied to the kernel's
/// `answer` to one `AMDKFD_IOC_DBG_TRAP` request: suspend and resume
/// (`queue_count` is the number of queue ids they carried) succeed with
/// a count between 0 and that number, every other operation only with 0.
/// Returns the kernel's value; a refusal is [`Error::Kernel`], another
/// value [`Error::UnexpectedReturn`] carrying it.
pub fn debug_trap_outcome(
    queue_count: Option<usize>,
    answer: std::result::Result<i32, Errno>,
) -> Result<i32> {
    let r = answer.map_err(|errno| Error::Kernel {
        op: "DBG_TRAP",
        errno,
    })?;
    match queue_count {
        Some(n) if r >= 0 && r as usize <= n => Ok(r),
        None if r == 0 => Ok(r),
        _ => Err(Error::UnexpectedReturn {
            op: "DBG_TRAP",
            value: r,
        }),
    }
}

/// Fetches a snapshot into `entries` with `fetch` (which returns how many
/// entries the kernel has), growing the buffer until everything fits.
fn snapshot<T: Default + Clone>(
    mut entries: Vec<T>,
    mut fetch: impl FnMut(&mut [T]) -> Result<(u32, u32)>,
) -> Result<Vec<T>> {
    loop {
        let (n, _) = fetch(&mut entries)?;
        let n = n as usize;
        if n <= entries.len() {
            entries.truncate(n);
            return Ok(entries);
        }
        entries.resize(n, T::default());
    }
}

impl From<&kfd_topology::Node> for DebugNode {
    fn from(n: &kfd_topology::Node) -> DebugNode {
        DebugNode {
            gpu_id: n.gpu_id,
            cpu_cores: n.properties.cpu_cores_count,
            simd_count: n.properties.simd_count,
            debug_supported_firmware: n.derived.capability.debug_supported_firmware() != 0,
        }
    }
}

impl Debug {
    /// Creates the debug sub-context from a topology snapshot (the node
    /// ids are the snapshot's).
    pub fn from_topology(
        file: Arc<DeviceFile>,
        primary: bool,
        topology: &kfd_topology::Topology,
    ) -> Debug {
        Debug::new(
            file,
            primary,
            topology.nodes.iter().map(DebugNode::from).collect(),
        )
    }
}

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
