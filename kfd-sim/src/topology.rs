//! Simulated machine topologies: what the KFD sysfs tree reports.
//!
//! A [`Topology`] is a sysfs-shaped description: every node carries the
//! key/value pairs of its `properties` file, its memory banks, caches and
//! links. The kernel model reads the values it needs by key (`gpu_id`,
//! `drm_render_minor`, `size_in_bytes`, ...), so a custom topology file can
//! describe any device without code changes.

use std::fmt;
use std::path::Path;

use crate::presets;

/// Ordered `key value` pairs of one sysfs `properties` file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Props(pub Vec<(String, u64)>);

impl Props {
    /// The value of `key`, if present.
    pub fn get(&self, key: &str) -> Option<u64> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
    }

    /// The value of `key`, or 0.
    pub fn get_or_zero(&self, key: &str) -> u64 {
        self.get(key).unwrap_or(0)
    }

    /// Sets `key` (replacing an existing value, else appending).
    pub fn set(&mut self, key: &str, value: u64) {
        match self.0.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = value,
            None => self.0.push((key.to_string(), value)),
        }
    }
}

/// One cache of a node: its `properties` keys plus the `sibling_map`
/// (written last in the file, as a comma-separated list).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cache {
    /// The numeric keys.
    pub properties: Props,
    /// The sibling map.
    pub sibling_map: Vec<u32>,
}

/// PCI/DRM identity of a GPU node: what libdrm_amdgpu's device queries and
/// the PCI sysfs entries report.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GpuIdentity {
    /// PCI device id (also in `properties` as `device_id`).
    pub device_id: u32,
    /// PCI revision id (`pci_rev` in DEV_INFO; libdrm's amdgpu.ids key).
    pub pci_rev: u32,
    /// amdgpu family id (AMDGPU_FAMILY_*).
    pub family: u32,
    /// Chip revision.
    pub chip_rev: u32,
    /// External revision.
    pub external_rev: u32,
    /// Marketing name.
    pub marketing_name: String,
    /// PCI subsystem vendor id (`device/subsystem_vendor`).
    pub subsystem_vendor: u32,
    /// PCI subsystem device id (`device/subsystem_device`).
    pub subsystem_device: u32,
    /// VRAM type (`AMDGPU_VRAM_TYPE_*`) reported by DEV_INFO.
    pub vram_type: u32,
    /// VRAM bus width in bits (DEV_INFO `vram_bit_width`).
    pub vram_bit_width: u32,
    /// Number of L2 (TCC) blocks (DEV_INFO `num_tcc_blocks`).
    pub num_tcc_blocks: u32,
    /// Value of the `GB_ADDR_CONFIG` register (READ_MMR_REG 0x263e).
    pub gb_addr_config: u32,
    /// GPU timestamp counter frequency in kHz (DEV_INFO `gpu_counter_freq`).
    pub gpu_counter_freq_khz: u32,
    /// Maximum memory clock in MHz (DEV_INFO `max_memory_clock` is kHz).
    pub max_memory_clock_mhz: u32,
    /// Size of the CPU-visible part of VRAM in bytes (0 = all of it).
    pub visible_vram_size: u64,
    /// GTT size in bytes as amdgpu reports it.
    pub gtt_size: u64,
}

/// CPU identity of a CPU node: what the simulated `/proc/cpuinfo` reports
/// for the processor whose `apicid` equals the node's `cpu_core_id_base`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CpuIdentity {
    /// `vendor_id` (`AuthenticAMD` or `GenuineIntel`).
    pub vendor_id: String,
    /// `model name`.
    pub model_name: String,
    /// `cpu family`.
    pub family: u32,
    /// `model`.
    pub model: u32,
    /// `stepping`.
    pub stepping: u32,
}

/// One KFD topology node (a CPU or a GPU).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Node {
    /// `nodes/N/name` (e.g. `gfx90a` or empty for CPUs).
    pub name: String,
    /// `nodes/N/gpu_id`: 0 for CPU nodes.
    pub gpu_id: u32,
    /// `nodes/N/properties`.
    pub properties: Props,
    /// `nodes/N/mem_banks/M/properties`.
    pub mem_banks: Vec<Props>,
    /// `nodes/N/caches/C/properties`.
    pub caches: Vec<Cache>,
    /// `nodes/N/io_links/L/properties`.
    pub io_links: Vec<Props>,
    /// `nodes/N/p2p_links/L/properties`.
    pub p2p_links: Vec<Props>,
    /// PCI/DRM identity (GPU nodes only).
    pub gpu: Option<GpuIdentity>,
    /// CPU identity (nodes with CPU cores only).
    pub cpu: Option<CpuIdentity>,
}

impl Node {
    /// True for GPU nodes.
    pub fn is_gpu(&self) -> bool {
        self.gpu_id != 0
    }
}

/// What the machine shows outside KFD's topology: where CPU caches are
/// reported and the amdgpu module's sysfs directory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Platform {
    /// List CPU caches in KFD sysfs (`caches_count` > 0 on CPU nodes), as
    /// kernels with an ACPI CRAT do. Off (the default), CPU nodes report no
    /// caches, as with a virtual CRAT, and the caches appear in the
    /// simulated `/sys/devices/system/node` and `cpu` trees instead, which
    /// is where libhsakmt then reads them.
    pub cpu_caches_in_kfd: bool,
    /// `/sys/module/amdgpu/version`. An in-tree amdgpu sets no
    /// `MODULE_VERSION`, so the file does not exist (`None`, the default);
    /// an out-of-tree (DKMS) build reports its version.
    pub amdgpu_version: Option<String>,
    /// Module parameters (`/sys/module/amdgpu/parameters/<name>`) that
    /// differ from the kernel's defaults ([`crate::sysfs::AMDGPU_PARAMETERS`]),
    /// as `(name, value)`; a name that is not a default is added.
    pub amdgpu_params: Vec<(String, String)>,
}

/// A whole simulated machine as the KFD topology describes it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Topology {
    /// Preset or file name.
    pub name: String,
    /// `generation_id`.
    pub generation_id: u64,
    /// `system_properties`.
    pub system: Props,
    /// `nodes/0..n`.
    pub nodes: Vec<Node>,
    /// Host-side facts outside the KFD tree.
    pub platform: Platform,
}

impl Topology {
    /// The GPU nodes with their node indices.
    pub fn gpus(&self) -> impl Iterator<Item = (usize, &Node)> {
        self.nodes.iter().enumerate().filter(|(_, n)| n.is_gpu())
    }

    /// The node with the given gpu_id.
    pub fn node_by_gpu_id(&self, gpu_id: u32) -> Option<(usize, &Node)> {
        self.gpus().find(|(_, n)| n.gpu_id == gpu_id)
    }
}

/// Why a topology could not be loaded or is not consistent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TopologyError {
    /// Neither a preset name nor a readable file.
    NotFound(String),
    /// The file could not be read.
    Io(String),
    /// A line of a topology file could not be parsed.
    Parse {
        /// 1-based line number.
        line: usize,
        /// What was wrong.
        message: String,
    },
    /// The topology breaks a rule the thunk or the kernel relies on.
    Invalid(String),
}

impl fmt::Display for TopologyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TopologyError::NotFound(n) => {
                write!(
                    f,
                    "no preset or topology file named {n:?} (presets: {})",
                    presets::NAMES.join(", ")
                )
            }
            TopologyError::Io(m) => write!(f, "cannot read topology file: {m}"),
            TopologyError::Parse { line, message } => {
                write!(f, "topology file line {line}: {message}")
            }
            TopologyError::Invalid(m) => write!(f, "invalid topology: {m}"),
        }
    }
}

impl std::error::Error for TopologyError {}

/// Cache `type` bits (the CRAT/HSA cache type bitmask).
pub mod cache_type {
    /// Data cache.
    pub const DATA: u64 = 1;
    /// Instruction cache.
    pub const INSTRUCTION: u64 = 2;
    /// Cache of a CPU.
    pub const CPU: u64 = 4;
    /// Cache of an HSA compute unit (GPU).
    pub const HSACU: u64 = 8;
}

impl Topology {
    /// Loads a preset by name (see [`presets::NAMES`]) or else a topology
    /// file (format: the crate README and [`Topology::parse`]).
    pub fn load(name_or_path: &str) -> Result<Topology, TopologyError> {
        if let Some(t) = presets::preset(name_or_path) {
            return Ok(t);
        }
        let path = Path::new(name_or_path);
        if !path.exists() {
            return Err(TopologyError::NotFound(name_or_path.to_string()));
        }
        let text = std::fs::read_to_string(path)
            .map_err(|e| TopologyError::Io(format!("{}: {e}", path.display())))?;
        let mut t = Topology::parse(&text)?;
        if t.name.is_empty() {
            t.name = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
        }
        Ok(t)
    }

    /// Parses the text of a topology file.
    ///
    /// The format mirrors the sysfs tree: `key value` lines grouped in
    /// sections named after the sysfs directory they describe. `#` starts a
    /// comment. Numbers are decimal or `0x` hex. Before the first section:
    /// `base <preset>` (start from a preset and override it), `name <text>`
    /// and `generation_id <n>`. Sections: `[system_properties]`,
    /// `[node N]` (keys `gpu_id`, `name`), `[node N properties]`,
    /// `[node N mem_bank M]`, `[node N cache C]` (with `sibling_map a,b,..`),
    /// `[node N io_link L]`, `[node N p2p_link L]`, `[node N gpu]` (PCI/DRM
    /// identity: `device_id`, `pci_rev`, `family`, `marketing_name`, ...)
    /// and `[node N cpu]` (`vendor_id`, `model_name`, ...), and
    /// `[platform]` ([`Platform`]: `cpu_caches_in_kfd 0|1`,
    /// `amdgpu_version <text>`, `amdgpu_param <name> <value>`). A section whose
    /// index equals the current count appends a new entry; keys replace
    /// existing values or are appended. The `*_count` keys of a node's
    /// properties are recomputed from its entries.
    pub fn parse(text: &str) -> Result<Topology, TopologyError> {
        let mut t = Topology {
            generation_id: 1,
            ..Topology::default()
        };
        let mut section = Section::Top;
        let mut seen_section = false;
        for (i, raw) in text.lines().enumerate() {
            let line_no = i + 1;
            let err = |message: String| TopologyError::Parse {
                line: line_no,
                message,
            };
            let line = match raw.find('#') {
                Some(p) => &raw[..p],
                None => raw,
            }
            .trim();
            if line.is_empty() {
                continue;
            }
            if let Some(inner) = line.strip_prefix('[') {
                let inner = inner
                    .strip_suffix(']')
                    .ok_or_else(|| err("unterminated section header".into()))?;
                section = Section::parse(inner, &mut t).map_err(err)?;
                seen_section = true;
                continue;
            }
            let (key, value) = match line.split_once(char::is_whitespace) {
                Some((k, v)) => (k, v.trim()),
                None => (line, ""),
            };
            match &section {
                Section::Top => match key {
                    "base" => {
                        if seen_section || !t.nodes.is_empty() {
                            return Err(err("`base` must come before any section".into()));
                        }
                        let keep_gen = t.generation_id;
                        t = presets::preset(value).ok_or_else(|| {
                            err(format!(
                                "unknown preset {value:?}; presets: {}",
                                presets::NAMES.join(", ")
                            ))
                        })?;
                        t.generation_id = keep_gen.max(t.generation_id);
                    }
                    "name" => t.name = value.to_string(),
                    "generation_id" => t.generation_id = parse_num(value).map_err(err)?,
                    _ => return Err(err(format!("unknown top-level key {key:?}"))),
                },
                Section::System => t.system.set(key, parse_num(value).map_err(err)?),
                Section::Node(n) => {
                    let node = &mut t.nodes[*n];
                    match key {
                        "gpu_id" => node.gpu_id = parse_num(value).map_err(err)? as u32,
                        "name" => node.name = value.to_string(),
                        _ => return Err(err(format!("unknown node key {key:?}"))),
                    }
                }
                Section::Props(n, kind, idx) => {
                    let node = &mut t.nodes[*n];
                    match kind {
                        PropsKind::Node => node.properties.set(key, parse_num(value).map_err(err)?),
                        PropsKind::MemBank => {
                            node.mem_banks[*idx].set(key, parse_num(value).map_err(err)?)
                        }
                        PropsKind::IoLink => {
                            node.io_links[*idx].set(key, parse_num(value).map_err(err)?)
                        }
                        PropsKind::P2pLink => {
                            node.p2p_links[*idx].set(key, parse_num(value).map_err(err)?)
                        }
                        PropsKind::Cache => {
                            let c = &mut node.caches[*idx];
                            if key == "sibling_map" {
                                c.sibling_map = value
                                    .split(',')
                                    .filter(|s| !s.trim().is_empty())
                                    .map(|s| parse_num(s.trim()).map(|v| v as u32))
                                    .collect::<Result<_, _>>()
                                    .map_err(err)?;
                            } else {
                                c.properties.set(key, parse_num(value).map_err(err)?);
                            }
                        }
                    }
                }
                Section::Gpu(n) => {
                    let g = t.nodes[*n].gpu.get_or_insert_with(GpuIdentity::default);
                    set_gpu_field(g, key, value).map_err(err)?;
                }
                Section::Cpu(n) => {
                    let c = t.nodes[*n].cpu.get_or_insert_with(CpuIdentity::default);
                    set_cpu_field(c, key, value).map_err(err)?;
                }
                Section::Platform => {
                    set_platform_field(&mut t.platform, key, value).map_err(err)?
                }
            }
        }
        t.sync_counts();
        t.validate()?;
        Ok(t)
    }

    /// Writes the topology in the file format [`Topology::parse`] reads;
    /// `parse(to_text())` gives back an equal topology.
    pub fn to_text(&self) -> String {
        use std::fmt::Write as _;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "# kfd-sim topology\nname {}\ngeneration_id {}",
            self.name, self.generation_id
        );
        let props = |s: &mut String, header: String, p: &Props| {
            let _ = writeln!(s, "\n[{header}]");
            for (k, v) in &p.0 {
                let _ = writeln!(s, "{k} {v}");
            }
        };
        props(&mut s, "system_properties".into(), &self.system);
        for (n, node) in self.nodes.iter().enumerate() {
            let _ = writeln!(
                s,
                "\n[node {n}]\ngpu_id {}\nname {}",
                node.gpu_id, node.name
            );
            props(&mut s, format!("node {n} properties"), &node.properties);
            for (i, m) in node.mem_banks.iter().enumerate() {
                props(&mut s, format!("node {n} mem_bank {i}"), m);
            }
            for (i, c) in node.caches.iter().enumerate() {
                props(&mut s, format!("node {n} cache {i}"), &c.properties);
                let map: Vec<String> = c.sibling_map.iter().map(u32::to_string).collect();
                let _ = writeln!(s, "sibling_map {}", map.join(","));
            }
            for (i, l) in node.io_links.iter().enumerate() {
                props(&mut s, format!("node {n} io_link {i}"), l);
            }
            for (i, l) in node.p2p_links.iter().enumerate() {
                props(&mut s, format!("node {n} p2p_link {i}"), l);
            }
            if let Some(g) = &node.gpu {
                let _ = writeln!(s, "\n[node {n} gpu]");
                for (k, v) in gpu_fields(g) {
                    let _ = writeln!(s, "{k} {v}");
                }
            }
            if let Some(c) = &node.cpu {
                let _ = writeln!(
                    s,
                    "\n[node {n} cpu]\nvendor_id {}\nmodel_name {}\nfamily {}\nmodel {}\nstepping {}",
                    c.vendor_id, c.model_name, c.family, c.model, c.stepping
                );
            }
        }
        let pf = &self.platform;
        let _ = writeln!(
            s,
            "\n[platform]\ncpu_caches_in_kfd {}",
            u8::from(pf.cpu_caches_in_kfd)
        );
        if let Some(v) = &pf.amdgpu_version {
            let _ = writeln!(s, "amdgpu_version {v}");
        }
        for (k, v) in &pf.amdgpu_params {
            let _ = writeln!(s, "amdgpu_param {k} {v}");
        }
        s
    }

    /// Sets every node's `mem_banks_count`, `caches_count`,
    /// `io_links_count` and `p2p_links_count` from its entries.
    pub fn sync_counts(&mut self) {
        for node in &mut self.nodes {
            node.properties
                .set("mem_banks_count", node.mem_banks.len() as u64);
            node.properties
                .set("caches_count", node.caches.len() as u64);
            node.properties
                .set("io_links_count", node.io_links.len() as u64);
            node.properties
                .set("p2p_links_count", node.p2p_links.len() as u64);
        }
    }

    /// Checks the rules the thunk and the kernel rely on: unique non-zero
    /// gpu_ids, render minors in 128..=255 and unique, GPU caches with the
    /// HSACU bit, links whose `node_from` is their node and whose `node_to`
    /// exists, counts that match the entries, PCI identity on GPU nodes.
    pub fn validate(&self) -> Result<(), TopologyError> {
        let bad = |m: String| Err(TopologyError::Invalid(m));
        let mut gpu_ids = std::collections::HashSet::new();
        let mut minors = std::collections::HashSet::new();
        let n_nodes = self.nodes.len() as u64;
        for (n, node) in self.nodes.iter().enumerate() {
            let p = &node.properties;
            for (key, len) in [
                ("mem_banks_count", node.mem_banks.len()),
                ("caches_count", node.caches.len()),
                ("io_links_count", node.io_links.len()),
                ("p2p_links_count", node.p2p_links.len()),
            ] {
                if p.get_or_zero(key) != len as u64 {
                    return bad(format!(
                        "node {n}: {key} is {} but there are {len} entries",
                        p.get_or_zero(key)
                    ));
                }
            }
            if node.is_gpu() {
                if !gpu_ids.insert(node.gpu_id) {
                    return bad(format!("node {n}: duplicate gpu_id {}", node.gpu_id));
                }
                let minor = p.get_or_zero("drm_render_minor");
                if !(128..=255).contains(&minor) {
                    return bad(format!(
                        "node {n}: drm_render_minor {minor} is not in 128..=255"
                    ));
                }
                if !minors.insert(minor) {
                    return bad(format!("node {n}: duplicate drm_render_minor {minor}"));
                }
                if node.gpu.is_none() {
                    return bad(format!(
                        "node {n}: GPU node without a [node {n} gpu] identity"
                    ));
                }
                if p.get_or_zero("simd_count") == 0 {
                    return bad(format!("node {n}: GPU node with simd_count 0"));
                }
                for (c, cache) in node.caches.iter().enumerate() {
                    let ty = cache.properties.get_or_zero("type");
                    if ty & cache_type::HSACU == 0 {
                        return bad(format!(
                            "node {n} cache {c}: GPU cache type {ty} lacks the HSACU bit (8)"
                        ));
                    }
                }
                if !node.caches.iter().any(|c| {
                    let ty = c.properties.get_or_zero("type");
                    ty & cache_type::HSACU != 0 && ty & cache_type::INSTRUCTION == 0
                }) {
                    return bad(format!(
                        "node {n}: GPU node needs at least one data cache (type 9)"
                    ));
                }
            }
            for (kind, links) in [("io_link", &node.io_links), ("p2p_link", &node.p2p_links)] {
                for (l, link) in links.iter().enumerate() {
                    if link.get_or_zero("node_from") != n as u64 {
                        return bad(format!("node {n} {kind} {l}: node_from is not {n}"));
                    }
                    let to = link.get_or_zero("node_to");
                    if to >= n_nodes || to == n as u64 {
                        return bad(format!(
                            "node {n} {kind} {l}: node_to {to} is not another node"
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// The CPU nodes with their node indices.
    pub fn cpus(&self) -> impl Iterator<Item = (usize, &Node)> {
        self.nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.properties.get_or_zero("cpu_cores_count") > 0)
    }

    /// The GPU node whose render node has the given minor.
    pub fn node_by_render_minor(&self, minor: u32) -> Option<(usize, &Node)> {
        self.gpus()
            .find(|(_, n)| n.properties.get_or_zero("drm_render_minor") == u64::from(minor))
    }
}

enum PropsKind {
    Node,
    MemBank,
    Cache,
    IoLink,
    P2pLink,
}

enum Section {
    Top,
    System,
    Node(usize),
    Props(usize, PropsKind, usize),
    Gpu(usize),
    Cpu(usize),
    Platform,
}

impl Section {
    fn parse(inner: &str, t: &mut Topology) -> Result<Section, String> {
        let words: Vec<&str> = inner.split_whitespace().collect();
        match words.as_slice() {
            ["system_properties"] => Ok(Section::System),
            ["platform"] => Ok(Section::Platform),
            ["node", n, rest @ ..] => {
                let n: usize = n.parse().map_err(|_| format!("bad node index {n:?}"))?;
                if n > t.nodes.len() {
                    return Err(format!("node {n} comes before node {}", t.nodes.len()));
                }
                if n == t.nodes.len() {
                    t.nodes.push(Node::default());
                }
                let node = &mut t.nodes[n];
                let index = |s: &str, len: usize| -> Result<usize, String> {
                    let i: usize = s.parse().map_err(|_| format!("bad index {s:?}"))?;
                    if i > len {
                        Err(format!("index {i} comes before {len}"))
                    } else {
                        Ok(i)
                    }
                };
                match rest {
                    [] => Ok(Section::Node(n)),
                    ["properties"] => Ok(Section::Props(n, PropsKind::Node, 0)),
                    ["gpu"] => Ok(Section::Gpu(n)),
                    ["cpu"] => Ok(Section::Cpu(n)),
                    ["mem_bank", i] => {
                        let i = index(i, node.mem_banks.len())?;
                        if i == node.mem_banks.len() {
                            node.mem_banks.push(Props::default());
                        }
                        Ok(Section::Props(n, PropsKind::MemBank, i))
                    }
                    ["cache", i] => {
                        let i = index(i, node.caches.len())?;
                        if i == node.caches.len() {
                            node.caches.push(Cache::default());
                        }
                        Ok(Section::Props(n, PropsKind::Cache, i))
                    }
                    ["io_link", i] => {
                        let i = index(i, node.io_links.len())?;
                        if i == node.io_links.len() {
                            node.io_links.push(Props::default());
                        }
                        Ok(Section::Props(n, PropsKind::IoLink, i))
                    }
                    ["p2p_link", i] => {
                        let i = index(i, node.p2p_links.len())?;
                        if i == node.p2p_links.len() {
                            node.p2p_links.push(Props::default());
                        }
                        Ok(Section::Props(n, PropsKind::P2pLink, i))
                    }
                    _ => Err(format!("unknown section [{inner}]")),
                }
            }
            _ => Err(format!("unknown section [{inner}]")),
        }
    }
}

fn parse_num(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let r = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => s.parse::<u64>(),
    };
    r.map_err(|_| format!("{s:?} is not a number"))
}

fn gpu_fields(g: &GpuIdentity) -> Vec<(&'static str, String)> {
    vec![
        ("device_id", format!("{:#x}", g.device_id)),
        ("pci_rev", format!("{:#x}", g.pci_rev)),
        ("family", g.family.to_string()),
        ("chip_rev", g.chip_rev.to_string()),
        ("external_rev", format!("{:#x}", g.external_rev)),
        ("marketing_name", g.marketing_name.clone()),
        ("subsystem_vendor", format!("{:#x}", g.subsystem_vendor)),
        ("subsystem_device", format!("{:#x}", g.subsystem_device)),
        ("vram_type", g.vram_type.to_string()),
        ("vram_bit_width", g.vram_bit_width.to_string()),
        ("num_tcc_blocks", g.num_tcc_blocks.to_string()),
        ("gb_addr_config", format!("{:#x}", g.gb_addr_config)),
        ("gpu_counter_freq_khz", g.gpu_counter_freq_khz.to_string()),
        ("max_memory_clock_mhz", g.max_memory_clock_mhz.to_string()),
        ("visible_vram_size", g.visible_vram_size.to_string()),
        ("gtt_size", g.gtt_size.to_string()),
    ]
}

fn set_gpu_field(g: &mut GpuIdentity, key: &str, value: &str) -> Result<(), String> {
    if key == "marketing_name" {
        g.marketing_name = value.to_string();
        return Ok(());
    }
    let v = parse_num(value)?;
    let v32 = u32::try_from(v).map_err(|_| format!("{key}: {v} does not fit in 32 bits"));
    match key {
        "device_id" => g.device_id = v32?,
        "pci_rev" => g.pci_rev = v32?,
        "family" => g.family = v32?,
        "chip_rev" => g.chip_rev = v32?,
        "external_rev" => g.external_rev = v32?,
        "subsystem_vendor" => g.subsystem_vendor = v32?,
        "subsystem_device" => g.subsystem_device = v32?,
        "vram_type" => g.vram_type = v32?,
        "vram_bit_width" => g.vram_bit_width = v32?,
        "num_tcc_blocks" => g.num_tcc_blocks = v32?,
        "gb_addr_config" => g.gb_addr_config = v32?,
        "gpu_counter_freq_khz" => g.gpu_counter_freq_khz = v32?,
        "max_memory_clock_mhz" => g.max_memory_clock_mhz = v32?,
        "visible_vram_size" => g.visible_vram_size = v,
        "gtt_size" => g.gtt_size = v,
        _ => return Err(format!("unknown gpu key {key:?}")),
    }
    Ok(())
}

fn set_platform_field(p: &mut Platform, key: &str, value: &str) -> Result<(), String> {
    match key {
        "cpu_caches_in_kfd" => p.cpu_caches_in_kfd = parse_num(value)? != 0,
        "amdgpu_version" => {
            p.amdgpu_version = (!value.is_empty()).then(|| value.to_string());
        }
        "amdgpu_param" => {
            let (name, v) = value
                .split_once(char::is_whitespace)
                .map(|(n, v)| (n, v.trim()))
                .unwrap_or((value, ""));
            if name.is_empty() || name.contains('/') {
                return Err(format!("bad amdgpu_param name {name:?}"));
            }
            match p.amdgpu_params.iter_mut().find(|(n, _)| n == name) {
                Some(slot) => slot.1 = v.to_string(),
                None => p.amdgpu_params.push((name.to_string(), v.to_string())),
            }
        }
        _ => return Err(format!("unknown platform key {key:?}")),
    }
    Ok(())
}

fn set_cpu_field(c: &mut CpuIdentity, key: &str, value: &str) -> Result<(), String> {
    match key {
        "vendor_id" => c.vendor_id = value.to_string(),
        "model_name" => c.model_name = value.to_string(),
        "family" => c.family = parse_num(value)? as u32,
        "model" => c.model = parse_num(value)? as u32,
        "stepping" => c.stepping = parse_num(value)? as u32,
        _ => return Err(format!("unknown cpu key {key:?}")),
    }
    Ok(())
}
