//! Every kfd-sim preset, rendered as sysfs and snapshotted; the typed
//! topologies are held in insta snapshots.

mod common;

use kfd_topology::{FixtureDevices, Rules, SnapshotOptions, Topology};

static COUNTER: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

fn snapshot_preset(name: &str, rules: Rules) -> Topology {
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let preset = kfd_sim::presets::preset(name).expect("preset exists");
    let root = std::env::temp_dir().join(format!(
        "kfd-topology-preset-{}-{name}-{n}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&root);
    kfd_sim::sysfs::render(&preset, &root).unwrap();
    let options = SnapshotOptions {
        rules,
        ..SnapshotOptions::default()
    };
    let topo = Topology::read(&root, &FixtureDevices::new(), &options);
    let _ = std::fs::remove_dir_all(&root);
    topo.unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn summary(t: &Topology) -> String {
    use std::fmt::Write as _;
    let mut s = format!(
        "generation {} system {:?} nodes {}/{}\n",
        t.generation_id,
        t.system,
        t.num_nodes(),
        t.num_sysfs_nodes
    );
    for n in &t.nodes {
        let p = &n.properties;
        let d = &n.derived;
        let _ = writeln!(
            s,
            "node {} sysfs {} gpu_id {} {:?} isa {} amd {:?} marketing {:?} simds {} cus {} banks {} [{}] caches {} links [{}] hive {:#x} sdma {}+{} xcc {} cap {:?} shader_banks {} vgpr {:#x}",
            n.id,
            n.sysfs_id,
            n.gpu_id,
            n.kind(),
            n.isa_version().map(|v| v.name()).unwrap_or_default(),
            d.amd_name,
            d.marketing_name,
            p.simd_count,
            n.compute_units(),
            n.memory_banks.len(),
            n.memory_banks
                .iter()
                .map(|b| format!("{:?}:{}", b.heap_type, b.size_in_bytes))
                .collect::<Vec<_>>()
                .join(","),
            n.caches.len(),
            n.io_links
                .iter()
                .map(|l| format!("{}:{:?}:{}", l.node_to, l.link_type, l.weight))
                .collect::<Vec<_>>()
                .join(","),
            p.hive_id,
            p.num_sdma_engines,
            p.num_sdma_xgmi_engines,
            p.num_xcc,
            p.capability,
            d.num_shader_banks,
            d.vgpr_size_per_cu,
        );
    }
    s
}

#[test]
fn every_preset_snapshots() {
    for &name in kfd_sim::presets::NAMES {
        let topo = snapshot_preset(name, common::rocm52());
        assert!(topo.gpu_nodes().count() > 0, "{name}");
        for gpu in topo.gpu_nodes() {
            assert!(gpu.isa_version().is_some(), "{name}: node {}", gpu.id);
        }
        // Large presets keep a one-line-per-node summary; the others the
        // whole typed topology.
        if topo.num_nodes() > 4 {
            insta::assert_snapshot!(name, summary(&topo));
        } else {
            insta::assert_debug_snapshot!(name, topo);
        }
    }
}

#[test]
fn newest_rules_on_every_preset() {
    for &name in kfd_sim::presets::NAMES {
        let old = snapshot_preset(name, common::rocm52());
        let new = snapshot_preset(name, Rules::default());
        assert_eq!(old.num_nodes(), new.num_nodes(), "{name}");
        for (a, b) in old.nodes.iter().zip(&new.nodes) {
            assert_eq!(a.properties, b.properties, "{name}");
            assert_eq!(a.isa_version(), b.isa_version(), "{name}");
        }
    }
}

#[test]
fn snapshot_through_the_in_process_sim_driver() {
    for &name in kfd_sim::presets::NAMES {
        let sim = kfd_sim::Sim::preset(name).unwrap();
        let options = SnapshotOptions {
            rules: common::rocm52(),
            ..SnapshotOptions::default()
        };
        let mut via_driver =
            Topology::snapshot_with(&sim, &options).unwrap_or_else(|e| panic!("{name}: {e}"));
        let via_root = snapshot_preset(name, common::rocm52());
        // FamilyID and Integrated come from the device (DRM), which the
        // rendered tree lacks.
        for n in &mut via_driver.nodes {
            n.derived.family_id = 0;
            n.derived.integrated = false;
        }
        assert_eq!(via_driver.nodes, via_root.nodes, "{name}");
    }
}

#[test]
fn vram_size_and_large_bar_per_preset() {
    let gpu = |name: &str| {
        let t = snapshot_preset(name, Rules::default());
        let node = t.gpu_nodes().next().expect("a GPU node").clone();
        node
    };
    let mi210 = gpu("mi210");
    assert_eq!(mi210.vram_size(), 64 * (1 << 30) - 16 * (1 << 20));
    assert!(mi210.is_large_bar());
    assert_eq!(mi210.host_visible_vram(), mi210.vram_size());
    // The RX 7900 XTX preset has a 256 MiB BAR: its VRAM is one private
    // bank, none of it host-visible through the topology.
    let navi31 = gpu("navi31");
    assert!(navi31.vram_size() > 0);
    assert!(!navi31.is_large_bar());
    assert_eq!(navi31.host_visible_vram(), 0);
    let t = snapshot_preset("mi210", Rules::default());
    let cpu = t.cpu_nodes().next().expect("a CPU node");
    assert_eq!(cpu.vram_size(), 0);
    assert!(!cpu.is_large_bar());
}
