//! Snapshots of fixture trees: derived values, node dropping, indirect
//! links, generation-id retries.

mod common;

use std::cell::Cell;

use common::*;
use kfd_sys::Errno;
use kfd_topology::*;

fn opts(t: &Tree, rules: Rules) -> SnapshotOptions {
    SnapshotOptions {
        rules,
        amdgpu_ids_path: Some(t.root().join("amdgpu.ids")),
        ..SnapshotOptions::default()
    }
}

fn read(t: &Tree) -> Result<Topology, TopologyError> {
    Topology::read(t.root(), &FixtureDevices::new(), &opts(t, common::rocm52()))
}

#[test]
fn mi210_matches_the_c_library() {
    let t = mi210_tree("mi210");
    let topo = read(&t).unwrap();
    assert_eq!(topo.num_nodes(), 2);
    assert_eq!(topo.generation_id, 1);

    let cpu = topo.node(0).unwrap();
    assert_eq!(cpu.kind(), NodeKind::Cpu);
    assert_eq!(cpu.derived.amd_name, "AMD EPYC 7763 64-Core Processor");
    assert_eq!(
        cpu.derived.marketing_name,
        "AMD EPYC 7763 64-Core Processor"
    );
    // Host caches: one L1d per CPU, the shared L2 once (under CPU 0), in
    // the order sysfs lists the CPUs (kernfs hash order: cpu1, then cpu0).
    assert_eq!(cpu.caches.len(), 3);
    assert_eq!(cpu.caches[0].processor_id_low, 1);
    assert_eq!(cpu.caches[0].size, 32 * 1024);
    assert_eq!(cpu.caches[0].cache_type, CacheType::DATA | CacheType::CPU);
    assert_eq!(cpu.caches[1].processor_id_low, 0);
    assert_eq!(cpu.caches[1].level, 1);
    assert_eq!(cpu.caches[2].level, 2);
    assert_eq!(cpu.caches[2].sibling_map, vec![1, 1]);
    assert_eq!(cpu.caches[2].processor_id_low, 0);

    let gpu = topo.node(1).unwrap();
    assert_eq!(gpu.kind(), NodeKind::Gpu);
    assert_eq!(gpu.gpu_id, 53284);
    assert_eq!(gpu.derived.gfx_version, Some(GfxVersion::new(9, 0, 10)));
    assert!(gpu.derived.from_device_table);
    assert_eq!(gpu.isa_version().unwrap().name(), "gfx90a");
    assert_eq!(gpu.derived.amd_name, "Aldebaran");
    assert_eq!(gpu.derived.marketing_name, "AMD Instinct MI210");
    assert_eq!(gpu.derived.num_shader_banks, 8);
    assert_eq!(gpu.derived.vgpr_size_per_cu, 0x80000);
    assert_eq!(gpu.derived.sgpr_size_per_cu, 0x4000);
    assert_eq!(gpu.compute_units(), 104);
    assert_eq!(gpu.caches.len(), 2);
    assert_eq!(gpu.caches[1].sibling_map, vec![1, 0, 0, 0]);
    assert_eq!(gpu.io_links.len(), 1);
    assert_eq!(gpu.io_links[0].node_to, 0);
    assert_eq!(gpu.properties.capability.sram_edc_support(), 1);
    assert_eq!(gpu.properties.capability.watch_points_total_bits(), 2);
    assert_eq!(gpu.properties.pci_address(), "0000:03:00.1");

    assert_eq!(topo.validate_node(1).unwrap(), 53284);
    assert_eq!(topo.validate_node(0).unwrap(), 0);
    let err = topo.validate_node(2).unwrap_err();
    assert!(matches!(
        err,
        TopologyError::InvalidNode {
            node: 2,
            num_nodes: 2
        }
    ));
    assert_eq!(topo.node_by_gpu_id(53284).unwrap().id, 1);
    assert_eq!(topo.gpu_nodes().count(), 1);
    assert_eq!(topo.direct_link_cpu(1), Some(0));
    assert!(topo.is_dgpu());
}

#[test]
fn unknown_revision_gets_libdrm_fallback_and_no_table_gets_nothing() {
    let t = mi210_tree("fallback");
    t.write("sys/dev/char/226:128/device/revision", "0x07\n");
    let topo = read(&t).unwrap();
    assert_eq!(
        topo.node(1).unwrap().derived.marketing_name,
        "AMD Radeon Graphics"
    );
    std::fs::remove_file(t.root().join("sys/dev/char/226:128/device/revision")).unwrap();
    let topo = read(&t).unwrap();
    assert_eq!(topo.node(1).unwrap().derived.marketing_name, "");
}

#[test]
fn indirect_links_are_synthesised() {
    let t = four_gpu_tree("indirect");
    let topo = read(&t).unwrap();
    assert_eq!(topo.num_nodes(), 6);
    let gpu2 = topo.node(2).unwrap();
    // Direct link to CPU 0, then CPU1 via CPU0 (20+21), GPU3 via CPU0
    // (20+20); the order follows the C loops. GPUs 4 and 5 sit behind a QPI
    // link of weight > 20 (another socket): no path.
    let to: Vec<(u32, u32)> = gpu2
        .io_links
        .iter()
        .map(|l| (l.node_to, l.weight))
        .collect();
    assert_eq!(to, vec![(0, 20), (1, 41), (3, 40)]);
    assert!(gpu2.io_links[1..]
        .iter()
        .all(|l| l.origin == LinkOrigin::Indirect));
    assert_eq!(gpu2.io_links[2].link_type, IoLinkType::PCIEXPRESS);
    assert_eq!(gpu2.io_links[1].link_type, IoLinkType::QPI_1_1);
    // CPU 0 gains links to the far GPUs through CPU 1 (21 + 20).
    let cpu0: Vec<(u32, u32)> = topo
        .node(0)
        .unwrap()
        .io_links
        .iter()
        .map(|l| (l.node_to, l.weight))
        .collect();
    assert_eq!(cpu0, vec![(1, 21), (2, 20), (3, 20), (4, 41), (5, 41)]);
    // The second CPU node has only instruction caches from the host.
    assert_eq!(topo.node(1).unwrap().caches.len(), 2);
}

#[test]
fn p2p_links_disable_indirect_links() {
    let t = four_gpu_tree("p2p");
    // GPU 2 reports one p2p link to GPU 3.
    let p = t.path("nodes/2/properties");
    let text = std::fs::read_to_string(&p).unwrap().replace(
        "io_links_count 1\n",
        "io_links_count 1\np2p_links_count 1\n",
    );
    std::fs::write(&p, text).unwrap();
    link(&t, 2, 0, 3, 11, 15, "p2p_links");
    // Nodes after 2 carry the p2p count over (a C library quirk): give them
    // p2p files too, or the read fails.
    for n in 3..6 {
        link(&t, n, 0, 2, 11, 15, "p2p_links");
    }
    let topo = read(&t).unwrap();
    let gpu2 = topo.node(2).unwrap();
    assert_eq!(gpu2.io_links.len(), 2);
    assert_eq!(gpu2.io_links[1].origin, LinkOrigin::P2pLink);
    assert_eq!(gpu2.io_links[1].link_type, IoLinkType::XGMI);
    // Node 3's properties say io_links_count 1 with a carried p2p count of
    // 1: no io links are read, one p2p link is.
    let gpu3 = topo.node(3).unwrap();
    assert_eq!(gpu3.io_links.len(), 1);
    assert_eq!(gpu3.io_links[0].origin, LinkOrigin::P2pLink);
    assert!(topo
        .nodes
        .iter()
        .all(|n| n.io_links.iter().all(|l| l.origin != LinkOrigin::Indirect)));
}

#[test]
fn gpu_nodes_whose_render_node_is_missing_are_dropped() {
    let t = four_gpu_tree("drop");
    for errno in [Errno::ENOENT, Errno::EPERM] {
        let dev = FixtureDevices::new().fail(129, errno);
        let topo = Topology::read(t.root(), &dev, &opts(&t, common::rocm52())).unwrap();
        assert_eq!(topo.num_nodes(), 5);
        assert_eq!(topo.num_sysfs_nodes, 6);
        let ids: Vec<(u32, u32)> = topo.nodes.iter().map(|n| (n.id, n.sysfs_id)).collect();
        assert_eq!(ids, vec![(0, 0), (1, 1), (2, 2), (3, 4), (4, 5)]);
        assert_eq!(topo.node(3).unwrap().gpu_id, 1003);
        // CPU 0's direct link to the dropped GPU is gone; links to later
        // nodes use the compacted ids.
        let cpu0: Vec<u32> = topo
            .node(0)
            .unwrap()
            .io_links
            .iter()
            .map(|l| l.node_to)
            .collect();
        assert_eq!(cpu0, vec![1, 2, 3, 4]);
    }
    let dev = FixtureDevices::new().fail(129, Errno::EACCES);
    let err = Topology::read(t.root(), &dev, &opts(&t, common::rocm52())).unwrap_err();
    assert!(
        matches!(
            err,
            TopologyError::RenderNode {
                minor: 129,
                sysfs_node: 3,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn gpu_id_hidden_with_eperm_is_not_an_error_but_a_missing_one_is() {
    let t = mi210_tree("gpuid");
    t.remove("nodes/1/gpu_id");
    let err = read(&t).unwrap_err();
    assert!(
        matches!(&err, TopologyError::Io { path, .. } if path.ends_with("nodes/1/gpu_id")),
        "{err}"
    );
}

/// Devices that bump `generation_id` on the first `bumps` probes.
#[derive(Debug)]
struct Bumping<'a> {
    tree: &'a Tree,
    bumps: Cell<u32>,
}

impl Devices for Bumping<'_> {
    fn probe_render_node(&self, _minor: u32) -> Result<(), Errno> {
        if self.bumps.get() > 0 {
            self.bumps.set(self.bumps.get() - 1);
            let p = self.tree.path("generation_id");
            let g: u32 = std::fs::read_to_string(&p).unwrap().trim().parse().unwrap();
            std::fs::write(p, format!("{}\n", g + 1)).unwrap();
        }
        Ok(())
    }
}

#[test]
fn generation_change_retries() {
    let t = mi210_tree("gen");
    let dev = Bumping {
        tree: &t,
        bumps: Cell::new(3),
    };
    let topo = Topology::read(t.root(), &dev, &opts(&t, common::rocm52())).unwrap();
    assert_eq!(topo.generation_id, 4);

    let dev = Bumping {
        tree: &t,
        bumps: Cell::new(100),
    };
    let o = SnapshotOptions {
        max_attempts: 5,
        ..opts(&t, common::rocm52())
    };
    let err = Topology::read(t.root(), &dev, &o).unwrap_err();
    assert!(matches!(err, TopologyError::Unstable { attempts: 5 }));
}

#[test]
fn gfx_override_and_target_version() {
    let t = mi210_tree("override");
    let o = SnapshotOptions {
        gfx_override: Some("9.4.2".into()),
        ..opts(&t, common::rocm52())
    };
    let topo = Topology::read(t.root(), &FixtureDevices::new(), &o).unwrap();
    let gpu = topo.node(1).unwrap();
    assert_eq!(gpu.derived.gfx_version, Some(GfxVersion::new(9, 4, 2)));
    assert_eq!(gpu.derived.amd_name, "Aldebaran");

    let o = SnapshotOptions {
        gfx_override: Some("9.4".into()),
        ..opts(&t, common::rocm52())
    };
    let err = Topology::read(t.root(), &FixtureDevices::new(), &o).unwrap_err();
    assert!(matches!(err, TopologyError::InvalidGfxOverride { .. }));

    // Under the newest rules the override goes to OverrideEngineId.
    let o = SnapshotOptions {
        gfx_override: Some("9.4.2".into()),
        ..opts(&t, Rules::default())
    };
    let topo = Topology::read(t.root(), &FixtureDevices::new(), &o).unwrap();
    let gpu = topo.node(1).unwrap();
    assert_eq!(gpu.derived.gfx_version, Some(GfxVersion::new(9, 0, 10)));
    assert_eq!(gpu.isa_version(), Some(GfxVersion::new(9, 4, 2)));
    assert_eq!(gpu.derived.num_xcc, 1);

    // A device id outside the table: gfx_target_version and GFX%06x.
    let p = t.path("nodes/1/properties");
    let text = std::fs::read_to_string(&p)
        .unwrap()
        .replace("device_id 29711", "device_id 29857")
        .replace("gfx_target_version 90010", "gfx_target_version 110000");
    std::fs::write(&p, text).unwrap();
    let topo = read(&t).unwrap();
    let gpu = topo.node(1).unwrap();
    assert_eq!(gpu.isa_version().unwrap().name(), "gfx1100");
    assert_eq!(gpu.derived.amd_name, "GFX0b0000");
    assert_eq!(gpu.derived.vgpr_size_per_cu, 0x40000);

    // No table entry and no target version, but SIMDs: the C library asserts.
    let text = std::fs::read_to_string(&p)
        .unwrap()
        .replace("gfx_target_version 110000", "gfx_target_version 0");
    std::fs::write(&p, text).unwrap();
    assert!(matches!(
        read(&t).unwrap_err(),
        TopologyError::UnknownGfxVersion { node: 1, .. }
    ));
}

#[test]
fn current_rules_differences() {
    let t = mi210_tree("current");
    let o = SnapshotOptions {
        svm_api_supported: false,
        ..opts(&t, Rules::default())
    };
    let topo = Topology::read(t.root(), &FixtureDevices::new(), &o).unwrap();
    let gpu = topo.node(1).unwrap();
    assert_eq!(gpu.derived.num_shader_banks, 8);
    assert_eq!(gpu.derived.capability.svm_api_supported(), 0);
    assert_eq!(gpu.properties.capability.svm_api_supported(), 1);

    // Missing host CPU caches: an error for 5.2.3, fine for the newest.
    std::fs::remove_dir_all(t.root().join("sys/devices/system")).unwrap();
    assert!(matches!(
        read(&t).unwrap_err(),
        TopologyError::NoCpuCaches { node: 0 }
    ));
    let topo = Topology::read(t.root(), &FixtureDevices::new(), &o).unwrap();
    assert!(topo.node(0).unwrap().caches.is_empty());
}
