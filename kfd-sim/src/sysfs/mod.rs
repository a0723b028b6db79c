//! Rendering a [`Topology`] as the files the kernel and the PCI/DRM core
//! expose, below a private root directory.
//!
//! [`render`] writes real files (so fopen/fread/fscanf/opendir/readdir of
//! the C libraries work unchanged once paths are redirected):
//!
//! - `sys/devices/virtual/kfd/kfd/topology/`: `generation_id`,
//!   `system_properties` and `nodes/N/{gpu_id,name,properties}` with
//!   `mem_banks/M/properties`, `caches/C/properties` (`sibling_map` last),
//!   `io_links/L/properties`, `p2p_links/L/properties` and an empty `perf/`,
//!   as `kfd_topology.c` writes them; plus the device's `dev` and `uevent`;
//! - `sys/class/kfd/kfd`: a symlink to the device directory, as on a real
//!   system;
//! - per GPU, a flattened PCI device directory
//!   `sys/devices/pciDDDD:00/DDDD:BB:00.0/` with `vendor`, `device`,
//!   `subsystem_vendor`, `subsystem_device`, `revision`, `class`, `uevent`
//!   (`PCI_SLOT_NAME`, ...), a `subsystem` link to `sys/bus/pci`, and
//!   `drm/card<i>` and `drm/renderD<minor>` (each with `dev`, `uevent` and a
//!   `device` link back);
//! - `sys/dev/char/226:<minor>` links to those DRM directories, which is
//!   what libdrm looks at (`drmNodeIsDRM`, `drmGetDevice2`, bus info);
//! - `sys/devices/system/cpu` and `sys/devices/system/node`: a fixed set
//!   of simulated CPUs with their caches, CPU lists and masks, NUMA nodes
//!   and distances ([`cpu`]), and `proc/cpuinfo` for the same CPUs, named
//!   from each node's [`CpuIdentity`](crate::topology::CpuIdentity).
//!   Unless the topology's [`Platform`](crate::topology::Platform) lists
//!   CPU caches in KFD, CPU nodes report `caches_count 0` in KFD, as with a
//!   virtual CRAT, and libhsakmt reads the caches from these trees;
//! - `sys/module/amdgpu`: `initstate` (`live`), `refcnt`, `version` when
//!   the topology's [`Platform`](crate::topology::Platform) names one (an
//!   in-tree module has none), and `parameters/` with a current kernel's
//!   defaults ([`AMDGPU_PARAMETERS`]).

use std::fmt::Write as _;
use std::fs;
use std::io;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use crate::topology::{Node, Props, Topology};

pub mod cpu;

pub use cpu::{cpuinfo, kernfs_hash, kernfs_order, sim_cpus, SimCpu};

/// The character-device major number the simulated `/dev/kfd` reports (the
/// real one is allocated dynamically; 510 is a common value).
pub const KFD_CHAR_MAJOR: u32 = 510;

/// The DRM character-device major number.
pub const DRM_CHAR_MAJOR: u32 = 226;

/// The KFD topology directory below a render root.
pub fn topology_dir(root: &Path) -> PathBuf {
    root.join("sys/devices/virtual/kfd/kfd/topology")
}

/// Name of the marker file [`render`] leaves in a root it owns.
const MARKER: &str = ".kfd-sim-root";

/// The PCI address `DDDD:BB:DD.F` of a GPU node (from `domain` and
/// `location_id`).
pub fn pci_slot_name(node: &Node) -> String {
    let loc = node.properties.get_or_zero("location_id");
    let domain = node.properties.get_or_zero("domain");
    format!(
        "{:04x}:{:02x}:{:02x}.{:x}",
        domain,
        (loc >> 8) & 0xff,
        (loc >> 3) & 0x1f,
        loc & 7
    )
}

fn props_text(p: &Props) -> String {
    let mut s = String::new();
    for (k, v) in &p.0 {
        let _ = writeln!(s, "{k} {v}");
    }
    s
}

pub(crate) fn write(path: &Path, text: &str) -> io::Result<()> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir)?;
    }
    fs::write(path, text)
}

pub(crate) fn link(target: &str, at: &Path) -> io::Result<()> {
    if let Some(dir) = at.parent() {
        fs::create_dir_all(dir)?;
    }
    match fs::symlink_metadata(at) {
        Ok(_) => fs::remove_file(at)?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    symlink(target, at)
}

/// Writes every file of `topology` below `root` (see the module docs).
///
/// `root` must be empty, missing, or a directory this function rendered
/// before (it then replaces the old tree). The topology is validated first.
pub fn render(topology: &Topology, root: &Path) -> io::Result<()> {
    topology
        .validate()
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
    fs::create_dir_all(root)?;
    if root.join(MARKER).exists() {
        for sub in ["sys", "proc"] {
            match fs::remove_dir_all(root.join(sub)) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
    } else if fs::read_dir(root)?.next().is_some() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!(
                "{} is not empty and was not rendered by kfd-sim",
                root.display()
            ),
        ));
    }
    write(&root.join(MARKER), &format!("{}\n", topology.name))?;

    let kfd_dev = root.join("sys/devices/virtual/kfd/kfd");
    write(&kfd_dev.join("dev"), &format!("{KFD_CHAR_MAJOR}:0\n"))?;
    write(
        &kfd_dev.join("uevent"),
        &format!("MAJOR={KFD_CHAR_MAJOR}\nMINOR=0\nDEVNAME=kfd\n"),
    )?;
    link(
        "../../devices/virtual/kfd/kfd",
        &root.join("sys/class/kfd/kfd"),
    )?;

    let topo = topology_dir(root);
    write(
        &topo.join("generation_id"),
        &format!("{}\n", topology.generation_id),
    )?;
    write(
        &topo.join("system_properties"),
        &props_text(&topology.system),
    )?;
    fs::create_dir_all(topo.join("nodes"))?;
    for (n, node) in topology.nodes.iter().enumerate() {
        let kfd_caches = node.is_gpu() || topology.platform.cpu_caches_in_kfd;
        render_node(&topo.join(format!("nodes/{n}")), node, kfd_caches)?;
    }

    for (i, (_, node)) in topology.gpus().enumerate() {
        render_pci(root, node, i)?;
    }
    fs::create_dir_all(root.join("sys/bus/pci/devices"))?;

    write(&root.join("proc/cpuinfo"), &cpuinfo(topology))?;
    cpu::render(root, topology)?;
    render_module(root, topology)?;
    Ok(())
}

/// The parameters of a current amdgpu module (`amdgpu_drv.c`, its KFD
/// part included) with their defaults as sysfs prints them (`%d` for int,
/// `%u` for uint, `0x%x` for hexint, `Y`/`N` for bool, the text for
/// strings; an unset string array is empty). Module parameters are
/// per module, not per GPU: every preset shows the same values unless
/// its [`Platform::amdgpu_params`](crate::topology::Platform) differ.
pub const AMDGPU_PARAMETERS: &[(&str, &str)] = &[
    ("vramlimit", "0"),
    ("vis_vramlimit", "0"),
    ("gartsize", "4294967295"),
    ("gttsize", "-1"),
    ("moverate", "-1"),
    ("audio", "-1"),
    ("disp_priority", "0"),
    ("hw_i2c", "0"),
    ("pcie_gen2", "-1"),
    ("msi", "-1"),
    ("lockup_timeout", ""),
    ("dpm", "-1"),
    ("fw_load_type", "-1"),
    ("aspm", "-1"),
    ("runpm", "-1"),
    ("ip_block_mask", "4294967295"),
    ("bapm", "-1"),
    ("deep_color", "0"),
    ("vm_size", "-1"),
    ("vm_fragment_size", "-1"),
    ("vm_block_size", "-1"),
    ("vm_fault_stop", "0"),
    ("vm_update_mode", "-1"),
    ("exp_hw_support", "0"),
    ("dc", "-1"),
    ("sched_jobs", "32"),
    ("sched_hw_submission", "2"),
    ("ppfeaturemask", "0xfff7bfff"),
    ("pcie_gen_cap", "0"),
    ("pcie_lane_cap", "0"),
    ("cg_mask", "4294967295"),
    ("pg_mask", "4294967295"),
    ("sdma_phase_quantum", "32"),
    ("job_hang_limit", "0"),
    ("lbpw", "-1"),
    ("compute_multipipe", "-1"),
    ("gpu_recovery", "-1"),
    ("emu_mode", "0"),
    ("ras_enable", "-1"),
    ("ras_mask", "4294967295"),
    ("async_gfx_ring", "1"),
    ("mcbp", "-1"),
    ("discovery", "-1"),
    ("mes", "0"),
    ("noretry", "-1"),
    ("force_asic_type", "-1"),
    ("mtype_local", "0"),
    ("sched_policy", "0"),
    ("hws_max_conc_proc", "8"),
    ("cwsr_enable", "1"),
    ("max_num_of_queues_per_device", "4096"),
    ("send_sigterm", "0"),
    ("debug_largebar", "0"),
    ("ignore_crat", "0"),
    ("halt_if_hws_hang", "0"),
    ("hws_gws_support", "N"),
    ("queue_preemption_timeout_ms", "9000"),
    ("debug_evictions", "N"),
    ("no_system_mem_limit", "N"),
    ("no_queue_eviction_on_vm_fault", "0"),
];

/// `sys/module/amdgpu`: `initstate` (`live`, what a loaded module shows;
/// rocminfo 6.x and 7.x refuse to run without it), `version` when the
/// topology names one, and `parameters/`.
fn render_module(root: &Path, topology: &Topology) -> io::Result<()> {
    let dir = root.join("sys/module/amdgpu");
    write(&dir.join("initstate"), "live\n")?;
    write(&dir.join("refcnt"), "0\n")?;
    if let Some(v) = &topology.platform.amdgpu_version {
        write(&dir.join("version"), &format!("{v}\n"))?;
    }
    let mut params: Vec<(String, String)> = AMDGPU_PARAMETERS
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    for (k, v) in &topology.platform.amdgpu_params {
        match params.iter_mut().find(|(n, _)| n == k) {
            Some(slot) => slot.1 = v.clone(),
            None => params.push((k.clone(), v.clone())),
        }
    }
    for (k, v) in params {
        write(&dir.join("parameters").join(k), &format!("{v}\n"))?;
    }
    Ok(())
}

/// Writes one KFD node; `caches` false leaves its caches out
/// (`caches_count 0`).
fn render_node(dir: &Path, node: &Node, caches: bool) -> io::Result<()> {
    write(&dir.join("gpu_id"), &format!("{}\n", node.gpu_id))?;
    write(&dir.join("name"), &format!("{}\n", node.name))?;
    let mut props = node.properties.clone();
    if !caches {
        props.set("caches_count", 0);
    }
    write(&dir.join("properties"), &props_text(&props))?;
    for sub in ["mem_banks", "caches", "io_links", "p2p_links", "perf"] {
        fs::create_dir_all(dir.join(sub))?;
    }
    for (i, m) in node.mem_banks.iter().enumerate() {
        write(
            &dir.join(format!("mem_banks/{i}/properties")),
            &props_text(m),
        )?;
    }
    for (i, c) in node.caches.iter().enumerate().filter(|_| caches) {
        let mut text = props_text(&c.properties);
        let map: Vec<String> = c.sibling_map.iter().map(u32::to_string).collect();
        let _ = writeln!(text, "sibling_map {}", map.join(","));
        write(&dir.join(format!("caches/{i}/properties")), &text)?;
    }
    for (i, l) in node.io_links.iter().enumerate() {
        write(
            &dir.join(format!("io_links/{i}/properties")),
            &props_text(l),
        )?;
    }
    for (i, l) in node.p2p_links.iter().enumerate() {
        write(
            &dir.join(format!("p2p_links/{i}/properties")),
            &props_text(l),
        )?;
    }
    Ok(())
}

/// The PCI device directory (relative to the root) of a GPU node.
pub fn pci_device_dir(node: &Node) -> String {
    let domain = node.properties.get_or_zero("domain");
    format!("sys/devices/pci{domain:04x}:00/{}", pci_slot_name(node))
}

fn render_pci(root: &Path, node: &Node, card: usize) -> io::Result<()> {
    let Some(id) = &node.gpu else { return Ok(()) };
    let rel = pci_device_dir(node);
    let dev = root.join(&rel);
    let slot = pci_slot_name(node);
    write(&dev.join("vendor"), "0x1002\n")?;
    write(&dev.join("device"), &format!("{:#06x}\n", id.device_id))?;
    write(
        &dev.join("subsystem_vendor"),
        &format!("{:#06x}\n", id.subsystem_vendor),
    )?;
    write(
        &dev.join("subsystem_device"),
        &format!("{:#06x}\n", id.subsystem_device),
    )?;
    write(&dev.join("revision"), &format!("{:#04x}\n", id.pci_rev))?;
    // Display controller (0x0380) for Instinct parts, VGA (0x0300) otherwise;
    // libdrm does not look at it.
    let class = if id.marketing_name.contains("Instinct") {
        0x038000
    } else {
        0x030000
    };
    write(&dev.join("class"), &format!("{class:#08x}\n"))?;
    write(
        &dev.join("uevent"),
        &format!(
            "DRIVER=amdgpu\nPCI_CLASS={class:X}\nPCI_ID=1002:{:04X}\nPCI_SUBSYS_ID={:04X}:{:04X}\nPCI_SLOT_NAME={slot}\nMODALIAS=pci:v00001002d{:08X}sv{:08X}sd{:08X}\n",
            id.device_id, id.subsystem_vendor, id.subsystem_device, id.device_id, id.subsystem_vendor, id.subsystem_device
        ),
    )?;
    link("../../../bus/pci", &dev.join("subsystem"))?;
    link(
        &format!("../../../{}", rel.strip_prefix("sys/").unwrap_or(&rel)),
        &root.join(format!("sys/bus/pci/devices/{slot}")),
    )?;
    let render_minor = node.properties.get_or_zero("drm_render_minor");
    for (name, minor) in [
        (format!("card{card}"), card as u64),
        (format!("renderD{render_minor}"), render_minor),
    ] {
        let d = dev.join("drm").join(&name);
        write(&d.join("dev"), &format!("{DRM_CHAR_MAJOR}:{minor}\n"))?;
        write(
            &d.join("uevent"),
            &format!("MAJOR={DRM_CHAR_MAJOR}\nMINOR={minor}\nDEVNAME=dri/{name}\n"),
        )?;
        link(&format!("../../../{slot}"), &d.join("device"))?;
        link(
            &format!(
                "../../{}/drm/{name}",
                rel.strip_prefix("sys/").unwrap_or(&rel)
            ),
            &root.join(format!("sys/dev/char/{DRM_CHAR_MAJOR}:{minor}")),
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::presets;

    fn tmp(tag: &str) -> PathBuf {
        let p = std::env::temp_dir().join(format!("kfd-sim-sysfs-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&p);
        p
    }

    #[test]
    fn renders_the_kernel_layout() {
        let root = tmp("layout");
        let t = presets::preset("mi210").unwrap();
        render(&t, &root).unwrap();
        let topo = topology_dir(&root);
        assert_eq!(
            fs::read_to_string(topo.join("generation_id")).unwrap(),
            "1\n"
        );
        let nodes: Vec<_> = fs::read_dir(topo.join("nodes")).unwrap().collect();
        assert_eq!(nodes.len(), 2);
        let props = fs::read_to_string(topo.join("nodes/1/properties")).unwrap();
        assert!(
            props.starts_with("cpu_cores_count 0\nsimd_count 416\n"),
            "{props}"
        );
        assert!(props.contains("\ndrm_render_minor 128\n"));
        let cache = fs::read_to_string(topo.join("nodes/1/caches/0/properties")).unwrap();
        let last = cache.lines().last().unwrap();
        assert!(last.starts_with("sibling_map 1,0,"), "{cache}");
        // The class link and the DRM links resolve inside the root.
        let class =
            fs::read_to_string(root.join("sys/class/kfd/kfd/topology/nodes/1/gpu_id")).unwrap();
        assert_eq!(class.trim(), t.nodes[1].gpu_id.to_string());
        assert!(root
            .join("sys/dev/char/226:128/device/drm/renderD128")
            .is_dir());
        assert!(root.join("sys/dev/char/226:0/device/drm/card0").is_dir());
        let dev = fs::read_to_string(root.join("sys/dev/char/226:128/device/device")).unwrap();
        assert_eq!(dev, "0x740f\n");
        let sub = fs::canonicalize(root.join("sys/dev/char/226:128/device/subsystem")).unwrap();
        assert_eq!(sub.file_name().unwrap(), "pci");
        let cpuinfo = fs::read_to_string(root.join("proc/cpuinfo")).unwrap();
        assert!(cpuinfo.contains("model name\t: AMD EPYC 7313 16-Core Processor\n"));
        // A virtual CRAT: no CPU caches in KFD, the CPU tree has them.
        let cpu_props = fs::read_to_string(topo.join("nodes/0/properties")).unwrap();
        assert!(cpu_props.contains("\ncaches_count 0\n"), "{cpu_props}");
        assert_eq!(
            fs::read_dir(topo.join("nodes/0/caches")).unwrap().count(),
            0
        );
        let l3 = root.join("sys/devices/system/node/node0/cpu1/cache/index3");
        assert_eq!(
            fs::read_to_string(l3.join("shared_cpu_list")).unwrap(),
            "0-1\n"
        );
        assert_eq!(fs::read_to_string(l3.join("size")).unwrap(), "32768K\n");
        assert_eq!(
            fs::read_to_string(root.join("sys/devices/system/cpu/online")).unwrap(),
            "0-1\n"
        );
        // The platform option lists them in KFD instead.
        let mut acpi = t.clone();
        acpi.platform.cpu_caches_in_kfd = true;
        render(&acpi, &root).unwrap();
        let cpu_props = fs::read_to_string(topo.join("nodes/0/properties")).unwrap();
        assert!(cpu_props.contains("\ncaches_count 4\n"), "{cpu_props}");
        assert!(topo.join("nodes/0/caches/3/properties").exists());
        assert!(l3.join("shared_cpu_map").exists());
        // Rendering again (another preset) replaces the tree.
        render(&presets::preset("mi300x").unwrap(), &root).unwrap();
        assert_eq!(fs::read_dir(topo.join("nodes")).unwrap().count(), 10);
        assert!(root.join("sys/dev/char/226:135").exists());
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn amdgpu_module_directory() {
        let root = tmp("module");
        let mut t = presets::preset("navi31").unwrap();
        render(&t, &root).unwrap();
        let m = root.join("sys/module/amdgpu");
        assert_eq!(fs::read_to_string(m.join("initstate")).unwrap(), "live\n");
        assert!(
            !m.join("version").exists(),
            "an in-tree module has no version"
        );
        let param = |name: &str| fs::read_to_string(m.join("parameters").join(name)).unwrap();
        assert_eq!(param("cwsr_enable"), "1\n");
        assert_eq!(param("noretry"), "-1\n");
        assert_eq!(param("sched_policy"), "0\n");
        assert_eq!(param("hws_gws_support"), "N\n");
        assert_eq!(param("lockup_timeout"), "\n");
        t.platform.amdgpu_version = Some("6.8.5".into());
        t.platform.amdgpu_params = vec![
            ("noretry".into(), "1".into()),
            ("new_param".into(), "7".into()),
        ];
        render(&t, &root).unwrap();
        assert_eq!(fs::read_to_string(m.join("version")).unwrap(), "6.8.5\n");
        assert_eq!(param("noretry"), "1\n");
        assert_eq!(param("new_param"), "7\n");
        assert_eq!(
            fs::read_dir(m.join("parameters")).unwrap().count(),
            AMDGPU_PARAMETERS.len() + 1
        );
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn refuses_foreign_directories() {
        let root = tmp("foreign");
        fs::create_dir_all(&root).unwrap();
        fs::write(root.join("x"), "y").unwrap();
        let err = render(&presets::preset("mi210").unwrap(), &root).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        fs::remove_dir_all(&root).unwrap();
    }
}
