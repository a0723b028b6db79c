//! kfd-perf on kfd-sim presets: counter tables per simulated GPU (gfx90a,
//! gfx942, gfx1100), clock counters, and SPM/PC sampling on a kernel model
//! that, like upstream Linux, has neither.

use std::sync::Arc;

use kfd_perf::pmc::BlockId;
use kfd_perf::{Error, Perf};
use kfd_sim::Sim;
use kfd_sys::{DeviceFile, Driver};
use kfd_topology::Topology;

fn open(preset: &str) -> (Arc<Sim>, Perf) {
    let sim = Arc::new(Sim::preset(preset).unwrap());
    let topology = Topology::snapshot(&*sim).unwrap();
    let driver: Arc<dyn Driver> = sim.clone();
    let file = Arc::new(DeviceFile::open_kfd(driver).unwrap());
    (sim, Perf::from_topology(file, &topology))
}

fn first_gpu(p: &Perf) -> u32 {
    p.nodes().iter().position(|n| n.gpu_id != 0).unwrap() as u32
}

#[test]
fn counter_tables_of_the_presets() {
    // mi210 (gfx90a) and mi300x (gfx942): the Vega table, 20 blocks.
    for preset in ["mi210", "mi300x"] {
        let (_sim, p) = open(preset);
        for (i, n) in p.nodes().iter().enumerate() {
            let r = p.counter_properties(i as u32);
            if n.gpu_id == 0 {
                assert_eq!(r.unwrap_err().status().0, 3, "{preset} CPU node");
                continue;
            }
            let props = r.unwrap();
            assert_eq!(props.blocks.len(), 20, "{preset}");
            assert_eq!(props.num_counters(), 3289);
            assert_eq!(props.block(BlockId::Sq).unwrap().num_concurrent, 16);
        }
    }
    // navi31 (gfx1100): no table -> INVALID_PARAMETER.
    let (_sim, p) = open("navi31");
    let g = first_gpu(&p);
    assert_eq!(p.nodes()[g as usize].gfx_version.major, 11);
    let e = p.counter_properties(g).unwrap_err();
    assert!(matches!(e, Error::NoCounterTable { .. }), "{e:?}");
    assert_eq!(e.status().0, 3);
    let n = p.nodes().len() as u32;
    assert_eq!(p.counter_properties(n).unwrap_err().status().0, 5);
}

#[test]
fn clocks_on_the_sim() {
    let (_sim, p) = open("mi210");
    let g = first_gpu(&p);
    let a = p.clock_counters(g).unwrap();
    let b = p.clock_counters_precise(g).unwrap();
    assert!(a.system_frequency_hz > 0);
    assert!(b.cpu >= a.cpu && b.system >= a.system);
    assert!(b.gpu >= a.gpu);
    let cpu = p.clock_counters(0).unwrap();
    assert!(cpu.cpu >= a.cpu);
    assert_eq!(p.clock_counters(99).unwrap_err().status().0, 5);
    // The snapshot carries no wall clock frequency.
    assert_eq!(p.wallclock_frequency(g).unwrap(), 0);
}

#[test]
fn spm_and_pc_sampling_on_the_sim() {
    let (_sim, p) = open("mi210");
    let g = first_gpu(&p);
    let e = p.spm_acquire(g).unwrap_err();
    assert!(matches!(e, Error::NotImplementedByKernel(_)), "{e:?}");
    assert_eq!(e.status().0, 11);
    // Release and set-dest-buffer have no acquire to fall back on: ERROR.
    assert_eq!(p.spm_release(g).unwrap_err().status().0, 1);
    // PC sampling keeps the C library's errno table: the kernel's EINVAL
    // for an unknown request is INVALID_PARAMETER.
    match p.pc_sampling_capabilities(g) {
        Ok(caps) => assert!(!caps.is_empty()),
        Err(e) => assert_eq!(e.status().0, 3, "{e}"),
    }
}
