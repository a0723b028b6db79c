//! Shared helpers: a simulated machine and memory managers on it.
#![allow(dead_code)]

use std::sync::Arc;

use kfd_fmm::{Fmm, FmmOptions, GfxVersion, NodeDesc};
use kfd_sim::Sim;
use kfd_sys::{kfd, DeviceFile, Driver};

/// The memory manager's view of the simulated topology.
pub fn nodes_of(sim: &Sim) -> Vec<NodeDesc> {
    sim.topology()
        .nodes
        .iter()
        .map(|n| {
            let p = &n.properties;
            let gfx = p.get_or_zero("gfx_target_version") as u32;
            NodeDesc {
                gpu_id: n.gpu_id,
                cpu_cores: p.get_or_zero("cpu_cores_count") as u32,
                simd_count: p.get_or_zero("simd_count") as u32,
                gfx: GfxVersion::from_target_version(gfx).unwrap_or_default(),
                device_id: p.get_or_zero("device_id") as u32,
                drm_render_minor: p.get_or_zero("drm_render_minor") as u32,
                small_bar: false,
            }
        })
        .collect()
}

pub fn open_kfd(sim: &Sim) -> Arc<DeviceFile> {
    let d: Arc<dyn Driver> = Arc::new(sim.clone());
    Arc::new(DeviceFile::open_kfd(d).expect("open kfd"))
}

/// A primary-style memory manager on `preset`.
pub fn primary(preset: &str) -> (Sim, Arc<Fmm>) {
    primary_with(preset, FmmOptions::primary())
}

/// The primary's options with the C library's treatment of addresses no
/// object covers ([`FmmOptions::accept_unknown_addresses`]), as the C ABI
/// opens its contexts.
pub fn c_rules() -> FmmOptions {
    FmmOptions {
        accept_unknown_addresses: true,
        ..FmmOptions::primary()
    }
}

/// Primary-context options that register user memory as userptr BOs (not
/// through the SVM API), for the tests of the userptr object model.
pub fn userptr_options() -> FmmOptions {
    let mut o = FmmOptions::primary();
    o.rules.register_through_svm = false;
    o
}

/// As [`primary`], with `opts`; the memory manager knows the topology's
/// io links (its GPUs' usable peers), as a context's does.
pub fn primary_with(preset: &str, opts: FmmOptions) -> (Sim, Arc<Fmm>) {
    let sim = Sim::preset(preset).expect("preset");
    let topology = kfd_topology::Topology::snapshot(&sim).expect("topology");
    let fmm = Fmm::from_topology(open_kfd(&sim), &topology, opts).expect("fmm");
    (sim, Arc::new(fmm))
}

/// A secondary context's memory manager on the same machine: its own kfd
/// file, CREATE_PROCESS, its own render nodes.
pub fn secondary(sim: &Sim) -> Arc<Fmm> {
    let kfd = open_kfd(sim);
    kfd.ioctl_plain(kfd::AMDKFD_IOC_CREATE_PROCESS_IO, &mut ())
        .expect("CREATE_PROCESS");
    Arc::new(Fmm::new(kfd, nodes_of(sim), FmmOptions::secondary()).expect("secondary fmm"))
}

/// Drops the memory manager (and with it the kfd file) and checks that the
/// simulated kernel has nothing left.
pub fn teardown(sim: Sim, fmm: Arc<Fmm>) {
    assert_eq!(Arc::strong_count(&fmm), 1, "a Buffer still holds the Fmm");
    drop(fmm);
    let live = sim.live_objects();
    assert!(live.is_empty(), "leaked kernel objects: {live:?}");
}

/// The first GPU node id.
pub fn gpu_node(fmm: &Fmm) -> u32 {
    fmm.nodes().iter().position(|n| n.is_gpu()).expect("a GPU") as u32
}

/// Buffer objects alive in the simulated kernel (all processes).
pub fn live_bos(sim: &Sim) -> usize {
    sim.live_objects().processes.iter().map(|p| p.bos).sum()
}
