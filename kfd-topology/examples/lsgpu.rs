//! Lists the GPUs of this machine, or of a kfd-sim preset, like a tiny
//! rocminfo.
//!
//! ```text
//! cargo run -p kfd-topology --example lsgpu
//! cargo run -p kfd-topology --example lsgpu -- --sim mi300x
//! cargo run -p kfd-topology --example lsgpu -- --sim mi210 --all --newest
//! ```

use std::process::ExitCode;

use kfd_topology::{
    FixtureDevices, HeapType, Node, Rules, SnapshotOptions, Topology, TopologyError,
};

fn print_node(topo: &Topology, n: &Node) {
    let p = &n.properties;
    let d = &n.derived;
    println!("Node {} ({:?}, sysfs node {})", n.id, n.kind(), n.sysfs_id);
    if !d.marketing_name.is_empty() {
        println!("  Marketing name:   {}", d.marketing_name);
    }
    if !d.amd_name.is_empty() {
        println!("  Name:             {}", d.amd_name);
    }
    if n.is_gpu() {
        let isa = n.isa_version();
        println!("  gpu_id:           {}", n.gpu_id);
        println!(
            "  ISA:              {} ({})",
            isa.map(|v| v.name()).unwrap_or_else(|| "unknown".into()),
            isa.map(|v| v.to_string()).unwrap_or_default()
        );
        println!("  Device id:        {:#06x}", p.device_id);
        println!("  PCI:              {}", p.pci_address());
        println!("  Render node:      /dev/dri/renderD{}", p.drm_render_minor);
        println!(
            "  Compute units:    {} ({} SIMDs, {} per CU, wave{})",
            n.compute_units(),
            p.simd_count,
            p.simd_per_cu,
            p.wave_front_size
        );
        println!(
            "  Shader engines:   {} ({} arrays each, {} CUs per array)",
            d.num_shader_banks, p.simd_arrays_per_engine, p.cu_per_simd_array
        );
        println!("  Max clock:        {} MHz", p.max_engine_clk_fcompute);
        println!(
            "  VRAM:             {} MiB ({})",
            n.vram_size() >> 20,
            if n.is_large_bar() {
                "large BAR: all of it host-visible".to_string()
            } else {
                format!("{} MiB host-visible", n.host_visible_vram() >> 20)
            }
        );
        println!("  LDS:              {} KiB", p.lds_size_in_kb);
        println!(
            "  SDMA engines:     {} PCIe, {} xGMI",
            p.num_sdma_engines, p.num_sdma_xgmi_engines
        );
        if p.hive_id != 0 {
            println!("  xGMI hive:        {:#x}", p.hive_id);
        }
        println!("  Capability:       {:#010x}", p.capability.0);
    } else {
        println!(
            "  CPU cores:        {} (APIC id base {})",
            p.cpu_cores_count, p.cpu_core_id_base
        );
        println!(
            "  System memory:    {} MiB",
            n.memory_size(HeapType::SYSTEM) >> 20
        );
    }
    let caches: Vec<String> = n
        .caches
        .iter()
        .map(|c| format!("L{} {}", c.level, c.size))
        .collect();
    println!("  Caches:           {}", caches.join(", "));
    for l in &n.io_links {
        let to = topo
            .node(l.node_to)
            .map_or("?", |t| if t.is_gpu() { "GPU" } else { "CPU" });
        println!(
            "  Link -> node {} ({to}): {:?}, weight {}, {:?}",
            l.node_to, l.link_type, l.weight, l.origin
        );
    }
}

fn run() -> Result<(), String> {
    let mut sim = None;
    let mut all = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--sim" => sim = Some(args.next().ok_or("--sim needs a preset name")?),
            "--all" => all = true,
            "-h" | "--help" => {
                println!("usage: lsgpu [--sim PRESET] [--all]");
                println!("presets: {}", kfd_sim::presets::NAMES.join(", "));
                return Ok(());
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    let options = SnapshotOptions::from_env(Rules::default());
    let snap: Result<Topology, TopologyError> = match &sim {
        Some(name) => {
            let preset = kfd_sim::presets::preset(name).ok_or_else(|| {
                format!(
                    "no preset {name:?}; presets: {}",
                    kfd_sim::presets::NAMES.join(", ")
                )
            })?;
            let root = std::env::temp_dir().join(format!("lsgpu-{}-{name}", std::process::id()));
            let _ = std::fs::remove_dir_all(&root);
            kfd_sim::sysfs::render(&preset, &root).map_err(|e| e.to_string())?;
            let t = Topology::read(&root, &FixtureDevices::new(), &options);
            let _ = std::fs::remove_dir_all(&root);
            t
        }
        None => Topology::snapshot_with(&kfd_sys::NixDriver::new(), &options),
    };
    // On a machine without amdkfd the snapshot fails or finds no GPU:
    // say how to look at a simulated one instead.
    let hint = if sim.is_none() && !std::path::Path::new("/dev/kfd").exists() {
        format!(
            " (no /dev/kfd here: no AMD GPU driver is loaded; try `--sim PRESET`, presets: {})",
            kfd_sim::presets::NAMES.join(", ")
        )
    } else {
        String::new()
    };
    let topo = snap.map_err(|e| format!("topology: {e}{hint}"))?;
    println!(
        "{} node(s), {} GPU(s){}{}",
        topo.num_nodes(),
        topo.gpu_nodes().count(),
        sim.map(|s| format!(" (kfd-sim preset {s})"))
            .unwrap_or_default(),
        if topo.gpu_nodes().count() == 0 {
            hint.as_str()
        } else {
            ""
        }
    );
    for n in &topo.nodes {
        if all || n.is_gpu() {
            println!();
            print_node(&topo, n);
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("lsgpu: {e}");
            ExitCode::FAILURE
        }
    }
}
