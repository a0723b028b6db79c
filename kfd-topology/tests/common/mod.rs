//! Fixture trees written to a temporary directory.

#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

pub const TOPO: &str = kfd_sys::sysfs::TOPOLOGY_DIR;

/// The derivation rules of libhsakmt 5.2.3 (hsakmt's `rocm-5.2` profile).
pub fn rocm52() -> kfd_topology::Rules {
    kfd_topology::Rules {
        shader_banks_per_engine: false,
        gfx_fields_need_simds: false,
        device_table_up_to_gfx10: false,
        separate_override_engine_id: false,
        per_node_gfx_override: false,
        family_id_from_sysfs: false,
        clear_svm_capability_without_svm_api: false,
        cpu_caches_optional: false,
        xgmi_cpu_links: false,
        vgpr_table: kfd_topology::VgprTable::Gfx908And90aLarge,
    }
}

/// A temporary machine root, removed on drop.
#[derive(Debug)]
pub struct Tree {
    pub root: PathBuf,
}

static COUNTER: AtomicU32 = AtomicU32::new(0);

impl Tree {
    pub fn new(name: &str) -> Tree {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let root =
            std::env::temp_dir().join(format!("kfd-topology-{}-{name}-{n}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        fs::create_dir_all(&root).unwrap();
        Tree { root }
    }

    pub fn write(&self, rel: &str, text: &str) -> &Self {
        let p = self.root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
        self
    }

    pub fn topo(&self, rel: &str, text: &str) -> &Self {
        self.write(&format!("{TOPO}/{rel}"), text)
    }

    pub fn remove(&self, rel: &str) {
        let p = self.root.join(TOPO).join(rel);
        if p.is_dir() {
            fs::remove_dir_all(p).unwrap();
        } else {
            fs::remove_file(p).unwrap();
        }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(TOPO).join(rel)
    }

    pub fn root(&self) -> &Path {
        &self.root
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.root);
    }
}

pub fn props(pairs: &[(&str, u64)]) -> String {
    pairs.iter().map(|(k, v)| format!("{k} {v}\n")).collect()
}

pub const CPUINFO: &str = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7763 64-Core Processor\napicid\t\t: 0\n\nprocessor\t: 1\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7763 64-Core Processor\napicid\t\t: 1\n";

pub fn cpu_node(t: &Tree, n: u32, links: &[(u32, u32, u32)], apicid: u32) {
    t.topo(&format!("nodes/{n}/gpu_id"), "0\n");
    t.topo(
        &format!("nodes/{n}/properties"),
        &props(&[
            ("cpu_cores_count", 2),
            ("simd_count", 0),
            ("mem_banks_count", 1),
            ("caches_count", 0),
            ("io_links_count", links.len() as u64),
            ("cpu_core_id_base", u64::from(apicid)),
            ("simd_id_base", 0),
            ("max_engine_clk_ccompute", 2450),
        ]),
    );
    t.topo(
        &format!("nodes/{n}/mem_banks/0/properties"),
        &props(&[
            ("heap_type", 0),
            ("size_in_bytes", 64 << 30),
            ("flags", 0),
            ("width", 64),
            ("mem_clk_max", 3200),
        ]),
    );
    for (i, &(to, ty, weight)) in links.iter().enumerate() {
        link(t, n, i as u32, to, ty, weight, "io_links");
    }
}

pub fn link(t: &Tree, from: u32, idx: u32, to: u32, ty: u32, weight: u32, dir: &str) {
    t.topo(
        &format!("nodes/{from}/{dir}/{idx}/properties"),
        &props(&[
            ("type", u64::from(ty)),
            ("version_major", 0),
            ("version_minor", 0),
            ("node_from", u64::from(from)),
            ("node_to", u64::from(to)),
            ("weight", u64::from(weight)),
            ("min_latency", 0),
            ("max_latency", 0),
            ("min_bandwidth", 312),
            ("max_bandwidth", 64000),
            ("recommended_transfer_size", 0),
            ("flags", 1),
        ]),
    );
}

/// A gfx90a (MI210) node with the given links and render minor.
pub fn mi210_node(t: &Tree, n: u32, gpu_id: u32, minor: u32, links: &[(u32, u32, u32)]) {
    t.topo(&format!("nodes/{n}/gpu_id"), &format!("{gpu_id}\n"));
    t.topo(
        &format!("nodes/{n}/properties"),
        &props(&[
            ("cpu_cores_count", 0),
            ("simd_count", 416),
            ("mem_banks_count", 1),
            ("caches_count", 2),
            ("io_links_count", links.len() as u64),
            ("cpu_core_id_base", 0),
            ("simd_id_base", 2147487744),
            ("max_waves_per_simd", 8),
            ("lds_size_in_kb", 64),
            ("gds_size_in_kb", 0),
            ("num_gws", 64),
            ("wave_front_size", 64),
            ("array_count", 8),
            ("simd_arrays_per_engine", 1),
            ("cu_per_simd_array", 13),
            ("simd_per_cu", 4),
            ("max_slots_scratch_cu", 32),
            ("gfx_target_version", 90010),
            ("vendor_id", 4098),
            ("device_id", 29711),
            ("location_id", 768 + n as u64),
            ("domain", 0),
            ("drm_render_minor", u64::from(minor)),
            ("hive_id", 0),
            ("num_sdma_engines", 2),
            ("num_sdma_xgmi_engines", 3),
            ("num_sdma_queues_per_engine", 8),
            ("num_cp_queues", 24),
            ("max_engine_clk_fcompute", 1700),
            ("local_mem_size", 0),
            ("fw_version", 78),
            ("capability", 201351808),
            ("debug_prop", 1495),
            ("sdma_fw_version", 8),
            ("unique_id", 12345678901234567),
        ]),
    );
    t.topo(
        &format!("nodes/{n}/mem_banks/0/properties"),
        &props(&[
            ("heap_type", 1),
            ("size_in_bytes", 68702699520),
            ("flags", 0),
            ("width", 4096),
            ("mem_clk_max", 1600),
        ]),
    );
    for (c, (level, size, line)) in [(1u64, 16u64, 64u64), (2, 8192, 128)].iter().enumerate() {
        t.topo(
            &format!("nodes/{n}/caches/{c}/properties"),
            &format!(
                "{}sibling_map 1,0,0,0\n",
                props(&[
                    ("processor_id_low", 2147487744),
                    ("level", *level),
                    ("size", *size),
                    ("cache_line_size", *line),
                    ("cache_lines_per_tag", 1),
                    ("association", 16),
                    ("latency", 1),
                    ("type", 9),
                ])
            ),
        );
    }
    for (i, &(to, ty, weight)) in links.iter().enumerate() {
        link(t, n, i as u32, to, ty, weight, "io_links");
    }
    t.write(
        &format!("sys/dev/char/226:{minor}/device/revision"),
        "0x02\n",
    );
}

/// Host CPU caches for node 0: an L1d per CPU and a shared L2.
pub fn host_caches(t: &Tree) {
    for cpu in 0..2 {
        let base = format!("sys/devices/system/node/node0/cpu{cpu}/cache");
        t.write(
            &format!("{base}/index0/shared_cpu_list"),
            &format!("{cpu}\n"),
        );
        t.write(&format!("{base}/index0/level"), "1\n");
        t.write(&format!("{base}/index0/type"), "Data\n");
        t.write(&format!("{base}/index0/size"), "32K\n");
        t.write(&format!("{base}/index0/coherency_line_size"), "64\n");
        t.write(&format!("{base}/index0/ways_of_associativity"), "8\n");
        t.write(&format!("{base}/index0/physical_line_partition"), "1\n");
        t.write(
            &format!("{base}/index0/shared_cpu_map"),
            &format!("{:08x}\n", 1 << cpu),
        );
        t.write(&format!("{base}/index1/shared_cpu_list"), "0-1\n");
        t.write(&format!("{base}/index1/level"), "2\n");
        t.write(&format!("{base}/index1/type"), "Unified\n");
        t.write(&format!("{base}/index1/size"), "512K\n");
        t.write(&format!("{base}/index1/coherency_line_size"), "64\n");
        t.write(&format!("{base}/index1/ways_of_associativity"), "8\n");
        t.write(&format!("{base}/index1/physical_line_partition"), "1\n");
        t.write(&format!("{base}/index1/shared_cpu_map"), "00000003\n");
    }
    t.write("sys/devices/system/node/node0/cpulist", "0-1\n");
}

pub const IDS: &str = "# test table\n1.0.0\n740F,\t02,\tAMD Instinct MI210\n";

/// One CPU + one MI210, as the feasibility emulator served it.
pub fn mi210_tree(name: &str) -> Tree {
    let t = Tree::new(name);
    t.topo("generation_id", "1\n");
    t.topo(
        "system_properties",
        "platform_oem 0\nplatform_id 0\nplatform_rev 0\n",
    );
    cpu_node(&t, 0, &[(1, 2, 20)], 0);
    mi210_node(&t, 1, 53284, 128, &[(0, 2, 20)]);
    t.write("proc/cpuinfo", CPUINFO);
    host_caches(&t);
    t.write("amdgpu.ids", IDS);
    t
}

/// Two CPU sockets and four MI210s (two per socket) with no GPU-GPU links.
pub fn four_gpu_tree(name: &str) -> Tree {
    let t = Tree::new(name);
    t.topo("generation_id", "7\n");
    t.topo(
        "system_properties",
        "platform_oem 1\nplatform_id 2\nplatform_rev 3\n",
    );
    cpu_node(&t, 0, &[(1, 5, 21), (2, 2, 20), (3, 2, 20)], 0);
    cpu_node(&t, 1, &[(0, 5, 21), (4, 2, 20), (5, 2, 20)], 1);
    mi210_node(&t, 2, 1001, 128, &[(0, 2, 20)]);
    mi210_node(&t, 3, 1002, 129, &[(0, 2, 20)]);
    mi210_node(&t, 4, 1003, 130, &[(1, 2, 20)]);
    mi210_node(&t, 5, 1004, 131, &[(1, 2, 20)]);
    t.write("proc/cpuinfo", CPUINFO);
    host_caches(&t);
    for cpu in 0..2 {
        let base = format!("sys/devices/system/node/node1/cpu{}/cache", cpu + 2);
        t.write(
            &format!("{base}/index0/shared_cpu_list"),
            &format!("{}\n", cpu + 2),
        );
        t.write(&format!("{base}/index0/level"), "1\n");
        t.write(&format!("{base}/index0/type"), "Instruction\n");
        t.write(&format!("{base}/index0/size"), "32K\n");
    }
    t.write("amdgpu.ids", IDS);
    t
}
