//! A KFD context on the simulator: kfd file, topology, memory manager.
#![allow(dead_code)]

use std::sync::Arc;

use kfd_fmm::{Fmm, FmmOptions, NodeDesc};
use kfd_sim::Sim;
use kfd_sys::{kfd, DeviceFile, Driver};
use kfd_topology::Topology;

/// The simulator presets.
pub const PRESETS: &[&str] = &["mi210", "mi300x", "apu", "navi31", "large64"];

/// What a KFD context holds that events and queues use.
pub struct Ctx {
    pub file: Arc<DeviceFile>,
    pub topology: Arc<Topology>,
    pub fmm: Arc<Fmm>,
}

impl Ctx {
    /// The primary-style context of `sim`.
    pub fn primary(sim: &Sim) -> Ctx {
        Ctx::open(sim, false)
    }

    /// A secondary context (its own kfd file with CREATE_PROCESS).
    pub fn secondary(sim: &Sim) -> Ctx {
        Ctx::open(sim, true)
    }

    fn open(sim: &Sim, secondary: bool) -> Ctx {
        let d: Arc<dyn Driver> = Arc::new(sim.clone());
        let file = Arc::new(DeviceFile::open_kfd(d).expect("open kfd"));
        if secondary {
            file.ioctl_plain(kfd::AMDKFD_IOC_CREATE_PROCESS_IO, &mut ())
                .expect("CREATE_PROCESS");
        }
        let topology = Arc::new(Topology::snapshot(sim).expect("topology"));
        let opts = if secondary {
            FmmOptions::secondary()
        } else {
            FmmOptions::primary()
        };
        let fmm = Fmm::new(file.clone(), nodes_of(&topology), opts).expect("fmm");
        Ctx {
            file,
            topology,
            fmm: Arc::new(fmm),
        }
    }

    /// The first GPU node.
    pub fn gpu_node(&self) -> u32 {
        self.topology.gpu_nodes().next().expect("a GPU").id
    }
}

/// The memory manager's node descriptions of a topology snapshot.
pub fn nodes_of(t: &Topology) -> Vec<NodeDesc> {
    t.nodes.iter().map(NodeDesc::from_topology_node).collect()
}

/// Asserts the simulated kernel has no process, file or VRAM left.
pub fn assert_no_leaks(sim: &Sim) {
    let live = sim.live_objects();
    assert!(live.is_empty(), "leaked kernel objects: {live:?}");
}
