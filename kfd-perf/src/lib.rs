//! kfd-perf: the profiling side of the KFD thunk, as a per-context
//! sub-context.
//!
//! # Example
//!
//! The counter blocks of a simulated MI210 (`kfd-sim`; with
//! [`kfd_sys::NixDriver`] instead, of this machine's GPU) and two reads of
//! its clock counters:
//!
//! ```
//! use std::sync::Arc;
//! use kfd_perf::{pmc::BlockId, Perf};
//! use kfd_sys::{DeviceFile, Driver};
//!
//! let sim = kfd_sim::Sim::preset("mi210")?;
//! let topology = kfd_topology::Topology::snapshot(&sim)?;
//! let driver: Arc<dyn Driver> = Arc::new(sim.clone());
//! let perf = Perf::from_topology(Arc::new(DeviceFile::open_kfd(driver)?), &topology);
//!
//! let props = perf.counter_properties(1)?; // node 1: the gfx90a
//! let sq = props.block(BlockId::Sq).expect("gfx90a has SQ counters");
//! println!("{} blocks; SQ: {} counters, {} at once", props.blocks.len(), sq.counters.len(), sq.num_concurrent);
//!
//! let a = perf.clock_counters(1)?;
//! let b = perf.clock_counters(1)?;
//! assert!(b.gpu >= a.gpu && b.system >= a.system);
//! assert_eq!(a.system_frequency_hz, 1_000_000_000); // CLOCK_BOOTTIME in ns
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! `examples/counters.rs` lists every block and measures the GPU clock.
//!
//! # Overview
//!
//! A [`Perf`] belongs to one KFD context (one `/dev/kfd` descriptor) and
//! offers:
//!
//! - **Performance counters** ([`Perf::counter_properties`] and the trace
//!   calls): the C library's per-ASIC counter tables ([`pmc`]) and its
//!   trace bookkeeping, with its checks (each a cause of its own, which
//!   the `hsakmt` border turns into the C library's status: trace id 0 →
//!   `INVALID_PARAMETER`, unknown trace → `INVALID_HANDLE`, more than 512
//!   counters → `NO_MEMORY`, over a block's concurrency →
//!   `INVALID_PARAMETER`, ...). The thunk only ever programmed
//!   *privileged* counters itself (IOMMUv2, through `perf_event_open` as
//!   root); the ordinary GPU blocks are programmed by profilers with PM4
//!   packets on their own queues. See [`Perf::acquire_trace_access`].
//! - **SPM** (streaming performance monitor): ROCm's non-upstream
//!   `AMDKFD_IOC_RLC_SPM`; on kernels without it,
//!   [`Error::NotImplementedByKernel`] (`NOT_SUPPORTED`).
//! - **PC sampling** (ROCm's `AMDKFD_IOC_PC_SAMPLE`, KFD 1.16+): query
//!   capabilities, create/destroy/start/stop; a kernel refusal names its
//!   operation ([`KernelOp`]), whose errno table the `hsakmt` border
//!   applies.
//! - **Clocks**: [`Perf::clock_counters`] (`AMDKFD_IOC_GET_CLOCK_COUNTERS`),
//!   [`Perf::clock_counters_precise`] (best of several samples, as the
//!   newest C library does) and [`Perf::wallclock_frequency`]
//!   (`hsaKmtGetNodeWallclockFrequency`).
//!
//! This crate has no `unsafe` code: SPM and PC sampling go through the
//! safe wrappers of [`kfd_sys::spm`] and [`kfd_sys::pc_sample`].
//!
//! Performance counters, SPM and PC sampling are also available on
//! secondary contexts: only debugging is reserved to the primary context.

#![forbid(unsafe_code)]

mod clock;
mod error;
pub mod pmc;
mod sampling;
mod trace;

pub use clock::ClockCounters;
pub use error::{Error, KernelOp, Result};
pub use sampling::{
    PcSamplingInfo, PcSamplingTraceId, SampleInfos, SpmBuffer, SpmBufferStatus,
    KFD_MINOR_MIN_PC_SAMPLING,
};
pub use trace::{TraceId, TraceRoot, MAX_COUNTERS_PER_TRACE};

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use kfd_sys::spm::SpmStream;
use kfd_sys::sync::lock;
use kfd_sys::{DeviceFile, KfdVersionCell};

use pmc::{Asic, CounterProperties, GfxVersion};

/// What the perf sub-context needs to know about one topology node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PerfNode {
    /// KFD gpu_id; 0 for a node without a GPU.
    pub gpu_id: u32,
    /// The node's GFX version (`EngineId`), all zero for CPU nodes.
    pub gfx_version: GfxVersion,
    /// PCI device id (the counter tables tell Fiji from Polaris by it).
    pub device_id: u16,
    /// Frequency of the GPU's wall clock (`s_memrealtime`) in kHz, as the
    /// topology reports it (`WallClockKHz`); 0 if unknown.
    pub wall_clock_khz: u64,
}

impl PerfNode {
    /// A CPU-only node.
    pub const fn cpu() -> PerfNode {
        PerfNode {
            gpu_id: 0,
            gfx_version: GfxVersion::new(0, 0, 0),
            device_id: 0,
            wall_clock_khz: 0,
        }
    }

    /// A GPU node.
    pub const fn gpu(
        gpu_id: u32,
        gfx_version: GfxVersion,
        device_id: u16,
        wall_clock_khz: u64,
    ) -> PerfNode {
        PerfNode {
            gpu_id,
            gfx_version,
            device_id,
            wall_clock_khz,
        }
    }
}

#[derive(Debug, Default)]
struct State {
    counter_props: HashMap<u32, Arc<CounterProperties>>,
    traces: HashMap<u64, trace::Trace>,
    next_trace: u64,
}

/// The perf sub-context of one KFD context.
pub struct Perf {
    file: Arc<DeviceFile>,
    nodes: Vec<PerfNode>,
    kfd_version: KfdVersionCell,
    state: Mutex<State>,
    spm: Mutex<HashMap<u32, SpmStream>>,
}

impl fmt::Debug for Perf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.lock();
        f.debug_struct("Perf")
            .field("file", &self.file)
            .field("nodes", &self.nodes)
            .field("kfd_version", &self.kfd_version)
            .field("traces", &s.traces.len())
            .finish()
    }
}

impl Perf {
    /// Creates the perf sub-context of a context whose descriptor is
    /// `file`; `nodes` lists the topology snapshot's nodes by user node id.
    pub fn new(file: Arc<DeviceFile>, nodes: Vec<PerfNode>) -> Perf {
        Perf {
            file,
            nodes,
            kfd_version: KfdVersionCell::default(),
            state: Mutex::new(State::default()),
            spm: Mutex::new(HashMap::new()),
        }
    }

    /// Like [`Perf::new`], with the KFD ioctl interface version already
    /// known.
    pub fn with_kfd_version(
        file: Arc<DeviceFile>,
        nodes: Vec<PerfNode>,
        major: u32,
        minor: u32,
    ) -> Perf {
        Perf {
            kfd_version: KfdVersionCell::known(major, minor),
            ..Perf::new(file, nodes)
        }
    }

    /// The nodes this sub-context was created with.
    pub fn nodes(&self) -> &[PerfNode] {
        &self.nodes
    }

    /// The context's KFD descriptor.
    pub fn file(&self) -> &Arc<DeviceFile> {
        &self.file
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Plain bookkeeping data; recover from a poisoned lock.
        lock(&self.state)
    }

    fn node(&self, node: u32) -> Result<&PerfNode> {
        self.nodes
            .get(node as usize)
            .ok_or(Error::InvalidNode(node))
    }

    /// The KFD ioctl interface version `(major, minor)`, queried once and
    /// cached.
    pub fn kfd_version(&self) -> Result<(u32, u32)> {
        let op = KernelOp::GetVersion;
        self.kfd_version
            .get(&self.file)
            .map_err(|errno| Error::Kernel { op, errno })
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

    /// The SPM destination streams, by gpu_id (a lock of their own: a
    /// SET_DEST_BUF may wait in the kernel for its timeout).
    fn spm_streams(&self) -> MutexGuard<'_, HashMap<u32, SpmStream>> {
        lock(&self.spm)
    }

    /// The counter properties of `node` (`hsaKmtPmcGetCounterProperties`),
    /// built once per node and shared afterwards.
    ///
    /// Unknown node → [`Error::InvalidNode`]; a node the C library has no
    /// table for (CPU, Tonga, gfx11+) → [`Error::NoCounterTable`]
    /// (`INVALID_PARAMETER`, as the C library returns).
    pub fn counter_properties(&self, node: u32) -> Result<Arc<CounterProperties>> {
        let n = *self.node(node)?;
        if let Some(p) = self.lock().counter_props.get(&node) {
            return Ok(p.clone());
        }
        let asic = Asic::for_node(n.gfx_version, n.device_id).ok_or(Error::NoCounterTable {
            node,
            gfx: n.gfx_version,
        })?;
        let props = Arc::new(asic.counter_properties());
        self.lock().counter_props.insert(node, props.clone());
        Ok(props)
    }
}

impl From<&kfd_topology::Node> for PerfNode {
    /// The node's gpu_id, `EngineId` GFX version and device id. The
    /// snapshot does not carry the GPU wall clock frequency (DRM's
    /// `gpu_counter_freq`); set [`PerfNode::wall_clock_khz`] separately.
    fn from(n: &kfd_topology::Node) -> PerfNode {
        PerfNode {
            gpu_id: n.gpu_id,
            gfx_version: n.derived.gfx_version.unwrap_or_default(),
            device_id: n.properties.device_id,
            wall_clock_khz: 0,
        }
    }
}

impl Perf {
    /// Creates the perf sub-context from a topology snapshot (the node ids
    /// are the snapshot's; wall clock frequencies are 0, see
    /// [`PerfNode`]'s `From` impl).
    pub fn from_topology(file: Arc<DeviceFile>, topology: &kfd_topology::Topology) -> Perf {
        Perf::new(file, topology.nodes.iter().map(PerfNode::from).collect())
    }
}

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
