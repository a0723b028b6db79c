//! The simulated `/sys/devices/system/cpu` and `/sys/devices/system/node`
//! trees, `/proc/cpuinfo`, and the order in which sysfs lists directories.
//!
//! # The simulated CPUs
//!
//! The trees describe a fixed set of logical CPUs, independent of the host
//! ([`sim_cpus`]): with one CPU node, two CPUs (`cpu0`, `cpu1`, two cores
//! of that node); with more CPU nodes, one CPU per node. Two CPUs in all
//! for the presets, because libhsakmt sizes its `/proc/cpuinfo` table by
//! the host's `get_nprocs()` and indexes it by the CPU numbers it finds in
//! these trees: the host needs at least as many CPUs as the trees list.
//! The KFD `cpu_cores_count` of a node still says how many threads the
//! modelled processor has.
//!
//! Each simulated CPU has the caches of its node's CPU model (the node's
//! [`Cache`] list, in `index0..` order: L1d, L1i, L2, L3 for the presets).
//! A cache whose sibling map covers `w` APIC ids is shared by the CPUs
//! whose APIC ids fall in the same block of `w`: the two CPUs of a one-node
//! preset are separate cores (APIC ids `base` and `base + threads per
//! core`), so each has private L1 and L2 caches and they share the L3,
//! which `shared_cpu_list` (`0-1`) assigns to `cpu0`.
//!
//! # Directory order
//!
//! sysfs (kernfs) lists a directory's entries after `.` and `..` ordered by
//! a hash of their names ([`kernfs_hash`]), not by name or creation: on a
//! real machine `readdir` of `/sys/devices/system/node/node0` may return
//! `cpu1` before `cpu0`. libhsakmt lists each CPU's caches in `readdir`
//! order, so the preload's `readdir` returns the rendered directories in
//! that order ([`kernfs_order`]) whatever file system the render root is
//! on.

use std::fmt::Write as _;
use std::io;
use std::path::Path;

use super::{link, write};
use crate::topology::{cache_type, Cache, Node, Topology};

/// One logical CPU of the simulated trees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimCpu {
    /// The CPU number (`cpuN`, `processor : N`).
    pub number: u32,
    /// The KFD node index of its CPU node, which is also its NUMA node.
    pub node: usize,
    /// The APIC id (`apicid` in `/proc/cpuinfo`).
    pub apicid: u64,
    /// `core id` within the package.
    pub core_id: u64,
}

/// The simulated logical CPUs of `topology` (see the module docs).
pub fn sim_cpus(topology: &Topology) -> Vec<SimCpu> {
    let nodes: Vec<(usize, &Node)> = topology.cpus().collect();
    let per_node = if nodes.len() == 1 { 2 } else { 1 };
    let mut cpus = Vec::new();
    for (idx, node) in nodes {
        let base = node.properties.get_or_zero("cpu_core_id_base");
        let stride = node
            .caches
            .iter()
            .find(|c| c.properties.get_or_zero("level") == 1)
            .map_or(1, cache_width);
        let threads = node.properties.get_or_zero("cpu_cores_count");
        for k in 0..per_node.min(threads.div_ceil(stride).max(1)) {
            cpus.push(SimCpu {
                number: cpus.len() as u32,
                node: idx,
                apicid: base + k * stride,
                core_id: k,
            });
        }
    }
    cpus
}

/// How many APIC ids one instance of `cache` covers (its sibling map's
/// set entries, at least 1).
fn cache_width(cache: &Cache) -> u64 {
    (cache.sibling_map.iter().filter(|&&b| b != 0).count() as u64).max(1)
}

/// The kernfs name hash (`kernfs_name_hash` in `fs/kernfs/dir.c`, 64-bit
/// kernels since 4.8): the dcache `partial_name_hash` of every byte,
/// `hash_long(hash, 32)`, folded to 31 bits with 0, 1 and `INT_MAX`
/// reserved.
pub fn kernfs_hash(name: &[u8]) -> u32 {
    let mut h: u64 = 0;
    for &c in name {
        let c = u64::from(c);
        h = h.wrapping_add(c << 4).wrapping_add(c >> 4).wrapping_mul(11);
    }
    let mut h = (h.wrapping_mul(0x61C8_8646_80B5_83EB) >> 32) as u32;
    h &= 0x7fff_ffff;
    if h < 2 {
        h += 2;
    }
    if h >= 0x7fff_ffff {
        h = 0x7fff_fffe;
    }
    h
}

/// Sorts directory entry names as kernfs lists them: by [`kernfs_hash`],
/// then by name (`.` and `..` are not entries; `readdir` returns them
/// first).
pub fn kernfs_order<T: AsRef<[u8]>>(names: &mut [T]) {
    names.sort_by_cached_key(|n| (kernfs_hash(n.as_ref()), n.as_ref().to_vec()));
}

/// A CPU list as sysfs prints one (`%*pbl`): ascending, runs as `a-b`.
fn cpu_list(cpus: &[u32]) -> String {
    let mut v = cpus.to_vec();
    v.sort_unstable();
    v.dedup();
    let mut out = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        out.push(if j > i {
            format!("{}-{}", v[i], v[j])
        } else {
            v[i].to_string()
        });
        i = j + 1;
    }
    out.join(",")
}

/// A CPU mask as sysfs prints one (`%*pb` over `nbits` = `nr_cpu_ids`):
/// 32-bit hex groups, most significant first, comma separated, the first
/// group only as wide as its bits need.
fn cpu_map(cpus: &[u32], nbits: u32) -> String {
    let nbits = nbits.max(1);
    let groups = nbits.div_ceil(32);
    let mut out = Vec::new();
    for g in (0..groups).rev() {
        let mut word = 0u32;
        for &c in cpus {
            if c / 32 == g && c < nbits {
                word |= 1 << (c % 32);
            }
        }
        let width = if g == groups - 1 {
            let bits = nbits - g * 32;
            bits.div_ceil(4) as usize
        } else {
            8
        };
        out.push(format!("{word:0width$x}"));
    }
    out.join(",")
}

/// One cache of one simulated CPU.
struct CpuCache<'a> {
    cache: &'a Cache,
    /// The CPUs sharing this instance.
    shared: Vec<u32>,
    /// The instance id (`id`).
    id: u64,
}

fn caches_of<'a>(topology: &'a Topology, cpus: &[SimCpu], cpu: &SimCpu) -> Vec<CpuCache<'a>> {
    let node = &topology.nodes[cpu.node];
    let base = node.properties.get_or_zero("cpu_core_id_base");
    node.caches
        .iter()
        .map(|cache| {
            let w = cache_width(cache);
            let block = (cpu.apicid - base) / w;
            let shared = cpus
                .iter()
                .filter(|o| o.node == cpu.node && (o.apicid - base) / w == block)
                .map(|o| o.number)
                .collect();
            CpuCache {
                cache,
                shared,
                id: cpu.apicid / w,
            }
        })
        .collect()
}

/// The simulated `/proc/cpuinfo`: every [`sim_cpus`] entry, named from its
/// node's [`CpuIdentity`](crate::topology::CpuIdentity).
pub fn cpuinfo(topology: &Topology) -> String {
    let mut s = String::new();
    for cpu in sim_cpus(topology) {
        let node = &topology.nodes[cpu.node];
        let id = node.cpu.clone().unwrap_or_default();
        let threads = node.properties.get_or_zero("cpu_cores_count");
        let mhz = node.properties.get_or_zero("max_engine_clk_ccompute");
        let package = topology
            .cpus()
            .position(|(i, _)| i == cpu.node)
            .unwrap_or(0);
        let apic = cpu.apicid;
        let _ = write!(
            s,
            "processor\t: {}\nvendor_id\t: {}\ncpu family\t: {}\nmodel\t\t: {}\nmodel name\t: {}\nstepping\t: {}\ncpu MHz\t\t: {mhz}.000\nphysical id\t: {package}\nsiblings\t: {threads}\ncore id\t\t: {}\ncpu cores\t: {}\napicid\t\t: {apic}\ninitial apicid\t: {apic}\nfpu\t\t: yes\nclflush size\t: 64\ncache_alignment\t: 64\naddress sizes\t: 48 bits physical, 48 bits virtual\n\n",
            cpu.number,
            id.vendor_id,
            id.family,
            id.model,
            id.model_name,
            id.stepping,
            cpu.core_id,
            threads.div_ceil(2),
        );
    }
    s
}

/// The NUMA distance between two CPU nodes: the weight of the io_link
/// between them (the kernel's virtual CRAT takes it from the SLIT), 10 for
/// a node itself, 20 without a link.
fn distance(topology: &Topology, from: usize, to: usize) -> u64 {
    if from == to {
        return 10;
    }
    topology.nodes[from]
        .io_links
        .iter()
        .find(|l| l.get_or_zero("node_to") == to as u64)
        .map_or(20, |l| l.get_or_zero("weight"))
}

/// Writes `sys/devices/system/cpu` and `sys/devices/system/node` below
/// `root`.
pub(super) fn render(root: &Path, topology: &Topology) -> io::Result<()> {
    let cpus = sim_cpus(topology);
    let all: Vec<u32> = cpus.iter().map(|c| c.number).collect();
    let nr = all.len() as u32;
    let list = format!("{}\n", cpu_list(&all));
    let sys = root.join("sys/devices/system");

    let cpu_dir = sys.join("cpu");
    for f in ["possible", "present", "online"] {
        write(&cpu_dir.join(f), &list)?;
    }
    write(&cpu_dir.join("offline"), "\n")?;
    write(&cpu_dir.join("isolated"), "\n")?;
    write(&cpu_dir.join("kernel_max"), "8191\n")?;
    write(&cpu_dir.join("uevent"), "")?;
    for cpu in &cpus {
        let dir = cpu_dir.join(format!("cpu{}", cpu.number));
        write(&dir.join("uevent"), "")?;
        if cpu.number != 0 {
            // x86 cannot offline CPU 0, so it has no `online` file.
            write(&dir.join("online"), "1\n")?;
        }
        link(
            &format!("../../node/node{}", cpu.node),
            &dir.join(format!("node{}", cpu.node)),
        )?;
        let package: Vec<u32> = cpus
            .iter()
            .filter(|o| o.node == cpu.node)
            .map(|o| o.number)
            .collect();
        let package_no = topology
            .cpus()
            .position(|(i, _)| i == cpu.node)
            .unwrap_or(0);
        let top = dir.join("topology");
        write(&top.join("physical_package_id"), &format!("{package_no}\n"))?;
        write(&top.join("die_id"), &format!("{package_no}\n"))?;
        write(&top.join("core_id"), &format!("{}\n", cpu.core_id))?;
        for (name, set) in [
            ("core_cpus", vec![cpu.number]),
            ("thread_siblings", vec![cpu.number]),
            ("core_siblings", package.clone()),
            ("package_cpus", package.clone()),
            ("die_cpus", package.clone()),
        ] {
            write(&top.join(name), &format!("{}\n", cpu_map(&set, nr)))?;
            write(
                &top.join(format!("{name}_list")),
                &format!("{}\n", cpu_list(&set)),
            )?;
        }
        let cache_dir = dir.join("cache");
        std::fs::create_dir_all(&cache_dir)?;
        write(&cache_dir.join("uevent"), "")?;
        for (i, c) in caches_of(topology, &cpus, cpu).iter().enumerate() {
            let p = &c.cache.properties;
            let d = cache_dir.join(format!("index{i}"));
            let ty = p.get_or_zero("type");
            let kind = match ty & (cache_type::DATA | cache_type::INSTRUCTION) {
                cache_type::DATA => "Data",
                cache_type::INSTRUCTION => "Instruction",
                _ => "Unified",
            };
            let size_kb = p.get_or_zero("size");
            let line = p.get_or_zero("cache_line_size");
            let ways = p.get_or_zero("association");
            let part = p.get_or_zero("cache_lines_per_tag").max(1);
            let sets = (size_kb * 1024)
                .checked_div(line * ways * part)
                .unwrap_or(0);
            for (name, value) in [
                ("id", c.id.to_string()),
                ("level", p.get_or_zero("level").to_string()),
                ("type", kind.to_string()),
                ("size", format!("{size_kb}K")),
                ("coherency_line_size", line.to_string()),
                ("ways_of_associativity", ways.to_string()),
                ("physical_line_partition", part.to_string()),
                ("number_of_sets", sets.to_string()),
                ("shared_cpu_list", cpu_list(&c.shared)),
                ("shared_cpu_map", cpu_map(&c.shared, nr)),
            ] {
                write(&d.join(name), &format!("{value}\n"))?;
            }
            write(&d.join("uevent"), "")?;
        }
    }

    let node_dir = sys.join("node");
    let nodes: Vec<u32> = topology.cpus().map(|(i, _)| i as u32).collect();
    let nodes_list = format!("{}\n", cpu_list(&nodes));
    for f in [
        "possible",
        "online",
        "has_cpu",
        "has_memory",
        "has_normal_memory",
    ] {
        write(&node_dir.join(f), &nodes_list)?;
    }
    write(&node_dir.join("uevent"), "")?;
    for (idx, node) in topology.cpus() {
        let dir = node_dir.join(format!("node{idx}"));
        let mine: Vec<u32> = cpus
            .iter()
            .filter(|c| c.node == idx)
            .map(|c| c.number)
            .collect();
        for n in &mine {
            link(&format!("../../cpu/cpu{n}"), &dir.join(format!("cpu{n}")))?;
        }
        write(&dir.join("cpulist"), &format!("{}\n", cpu_list(&mine)))?;
        write(&dir.join("cpumap"), &format!("{}\n", cpu_map(&mine, nr)))?;
        let dist: Vec<String> = topology
            .cpus()
            .map(|(to, _)| distance(topology, idx, to).to_string())
            .collect();
        write(&dir.join("distance"), &format!("{}\n", dist.join(" ")))?;
        let kb: u64 = node
            .mem_banks
            .iter()
            .map(|b| b.get_or_zero("size_in_bytes") / 1024)
            .sum();
        write(
            &dir.join("meminfo"),
            &format!(
                "Node {idx} MemTotal:       {kb:8} kB\nNode {idx} MemFree:        {kb:8} kB\nNode {idx} MemUsed:        {:8} kB\n",
                0
            ),
        )?;
        write(&dir.join("uevent"), "")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::presets;

    #[test]
    fn kernfs_order_is_the_kernels() {
        // Orders a 6.x kernel's sysfs returned (`ls -f`).
        let mut node0 = [
            "cpu0", "cpu1", "cpulist", "cpumap", "distance", "meminfo", "uevent", "power",
        ];
        kernfs_order(&mut node0);
        assert_eq!(
            node0,
            ["uevent", "distance", "power", "cpu1", "meminfo", "cpulist", "cpu0", "cpumap"]
        );
        let mut cpu = [
            "cpu0",
            "cpu1",
            "online",
            "possible",
            "present",
            "offline",
            "kernel_max",
            "uevent",
        ];
        kernfs_order(&mut cpu);
        assert_eq!(
            cpu,
            [
                "uevent",
                "possible",
                "offline",
                "present",
                "online",
                "cpu1",
                "kernel_max",
                "cpu0"
            ]
        );
        let mut index = [
            "id",
            "level",
            "type",
            "size",
            "coherency_line_size",
            "ways_of_associativity",
            "physical_line_partition",
            "number_of_sets",
            "shared_cpu_list",
            "shared_cpu_map",
            "uevent",
        ];
        kernfs_order(&mut index);
        assert_eq!(
            index,
            [
                "uevent",
                "physical_line_partition",
                "number_of_sets",
                "ways_of_associativity",
                "id",
                "shared_cpu_list",
                "type",
                "size",
                "level",
                "coherency_line_size",
                "shared_cpu_map",
            ]
        );
    }

    #[test]
    fn lists_and_maps() {
        assert_eq!(cpu_list(&[0, 1]), "0-1");
        assert_eq!(cpu_list(&[3, 0, 2, 5, 6, 7]), "0,2-3,5-7");
        assert_eq!(cpu_list(&[]), "");
        assert_eq!(cpu_map(&[0, 1], 2), "3");
        assert_eq!(cpu_map(&[1], 2), "2");
        assert_eq!(cpu_map(&[0, 33], 64), "00000002,00000001");
        assert_eq!(cpu_map(&[0, 33], 40), "02,00000001");
    }

    #[test]
    fn simulated_cpus_of_the_presets() {
        let one = presets::preset("mi210").unwrap();
        let cpus = sim_cpus(&one);
        assert_eq!(
            cpus.iter().map(|c| (c.node, c.apicid)).collect::<Vec<_>>(),
            [(0, 0), (0, 2)]
        );
        let caches: Vec<(Vec<u32>, u64)> = caches_of(&one, &cpus, &cpus[1])
            .into_iter()
            .map(|c| (c.shared, c.id))
            .collect();
        assert_eq!(
            caches,
            [(vec![1], 1), (vec![1], 1), (vec![1], 1), (vec![0, 1], 0)]
        );
        let two = presets::preset("mi300x").unwrap();
        let cpus = sim_cpus(&two);
        assert_eq!(
            cpus.iter().map(|c| (c.node, c.apicid)).collect::<Vec<_>>(),
            [(0, 0), (1, 256)]
        );
        assert_eq!(distance(&two, 0, 1), 32);
        let info = cpuinfo(&two);
        assert!(info.contains("processor\t: 1\n"), "{info}");
        assert!(info.contains("apicid\t\t: 256\n"), "{info}");
    }
}
