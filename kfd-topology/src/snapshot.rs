//! Reading the KFD sysfs tree into a [`Topology`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use kfd_sys::driver::{DRM_RENDER_MINOR_BASE, DRM_RENDER_MINOR_MAX, KFD_TOPOLOGY_PATH};
use kfd_sys::{sysfs, Driver, Errno};

use crate::cpuinfo::{self, CpuInfo};
use crate::devices::{Devices, DriverDevices, DrmDeviceInfo};
use crate::error::TopologyError;
use crate::gfx::{self, GfxVersion};
use crate::ids::{AmdgpuIds, DEFAULT_AMDGPU_IDS_PATH};
use crate::model::*;
use crate::parse::{self, PropFile};
use crate::Topology;

/// Most sysfs nodes accepted.
pub const MAX_NODES: u64 = 4096;
/// Most memory banks per node accepted.
pub const MAX_MEM_BANKS: u64 = 1024;
/// Most caches per node accepted.
pub const MAX_CACHES: u64 = 1 << 16;
/// Most io (or p2p) links per node accepted.
pub const MAX_LINKS: u64 = 1 << 16;

/// How to take a snapshot. [`SnapshotOptions::from_env`] gives what the C
/// library would do in this process; tests build one explicitly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotOptions {
    /// Which C library's rules to follow where they differ.
    pub rules: Rules,
    /// `HSA_OVERRIDE_GFX_VERSION`.
    pub gfx_override: Option<String>,
    /// `HSA_OVERRIDE_GFX_VERSION_<node>` (used with
    /// [`Rules::per_node_gfx_override`]), by node id.
    pub node_gfx_overrides: BTreeMap<u32, String>,
    /// libdrm's `amdgpu.ids` for marketing names; `None` looks nothing up
    /// (GPU marketing names stay empty). A table that cannot be read is
    /// treated as empty, as libdrm does.
    pub amdgpu_ids_path: Option<PathBuf>,
    /// Whether the context uses the SVM API (otherwise
    /// `Capability.SVMAPISupported` is cleared under
    /// [`Rules::clear_svm_capability_without_svm_api`]).
    pub svm_api_supported: bool,
    /// How many times the tree is read while `generation_id` keeps
    /// changing before giving up.
    pub max_attempts: u32,
}

impl Default for SnapshotOptions {
    fn default() -> Self {
        SnapshotOptions {
            rules: Rules::default(),
            gfx_override: None,
            node_gfx_overrides: BTreeMap::new(),
            amdgpu_ids_path: Some(PathBuf::from(DEFAULT_AMDGPU_IDS_PATH)),
            svm_api_supported: true,
            max_attempts: 16,
        }
    }
}

impl SnapshotOptions {
    /// Defaults for `rules`, with the gfx overrides taken from the
    /// environment (`HSA_OVERRIDE_GFX_VERSION`, and with
    /// [`Rules::per_node_gfx_override`]
    /// `HSA_OVERRIDE_GFX_VERSION_<n>`).
    pub fn from_env(rules: Rules) -> Self {
        let mut o = SnapshotOptions {
            rules,
            gfx_override: std::env::var("HSA_OVERRIDE_GFX_VERSION").ok(),
            ..SnapshotOptions::default()
        };
        if rules.per_node_gfx_override {
            for (k, v) in std::env::vars() {
                if let Some(n) = k.strip_prefix("HSA_OVERRIDE_GFX_VERSION_") {
                    if let Ok(n) = n.parse() {
                        o.node_gfx_overrides.insert(n, v);
                    }
                }
            }
        }
        o
    }
}

impl Topology {
    /// Takes a snapshot of the topology `driver` sees, with
    /// [`SnapshotOptions::from_env`] for the newest library's rules.
    pub fn snapshot(driver: &dyn Driver) -> Result<Topology, TopologyError> {
        Self::snapshot_with(driver, &SnapshotOptions::from_env(Rules::default()))
    }

    /// The kernel's topology generation now: the `generation_id` file
    /// below `driver`'s root, which the kernel changes whenever the
    /// topology does (a snapshot is read between two equal reads of it).
    /// A snapshot whose [`Topology::generation_id`] equals this one is
    /// still what the kernel reports.
    pub fn kernel_generation(driver: &dyn Driver) -> Result<u32, TopologyError> {
        read_u32_file(
            &driver
                .root()
                .join(KFD_TOPOLOGY_PATH)
                .join(sysfs::GENERATION_ID),
        )
    }

    /// Takes a snapshot of the topology `driver` sees.
    pub fn snapshot_with(
        driver: &dyn Driver,
        options: &SnapshotOptions,
    ) -> Result<Topology, TopologyError> {
        Self::read(driver.root(), &DriverDevices(driver), options)
    }

    /// Reads the tree below `root` (`<root>/sys/devices/virtual/kfd/...`,
    /// `<root>/proc/cpuinfo`, `<root>/sys/devices/system/...`), probing
    /// render nodes through `devices`.
    pub fn read(
        root: &Path,
        devices: &dyn Devices,
        options: &SnapshotOptions,
    ) -> Result<Topology, TopologyError> {
        // The C library goes on without CPU names when cpuinfo is unreadable.
        let cpuinfo = CpuInfo::read(root).unwrap_or_default();
        let ids = options
            .amdgpu_ids_path
            .as_deref()
            .map(|p| AmdgpuIds::read(p).unwrap_or_default());
        let reader = Reader {
            root,
            topo: root.join(KFD_TOPOLOGY_PATH),
            devices,
            options,
            cpuinfo: &cpuinfo,
            ids: ids.as_ref(),
        };
        let attempts = options.max_attempts.max(1);
        for _ in 0..attempts {
            if let Some(t) = reader.read_once()? {
                return Ok(t);
            }
        }
        Err(TopologyError::Unstable { attempts })
    }
}

/// Whether a sysfs node is usable.
enum Support {
    Cpu,
    Gpu { gpu_id: u32, props: PropFile },
    Unsupported,
}

struct Reader<'a> {
    root: &'a Path,
    topo: PathBuf,
    devices: &'a dyn Devices,
    options: &'a SnapshotOptions,
    cpuinfo: &'a CpuInfo,
    ids: Option<&'a AmdgpuIds>,
}

/// One node while it is being built.
struct Build {
    node: Node,
}

fn read_u32_file(path: &Path) -> Result<u32, TopologyError> {
    let text = parse::read_text(path)?;
    parse::parse_single_u32(path, &text)
}

impl Reader<'_> {
    fn node_dir(&self, sysfs: u32) -> PathBuf {
        self.topo.join(sysfs::NODES).join(sysfs.to_string())
    }

    fn read_once(&self) -> Result<Option<Topology>, TopologyError> {
        let gen_path = self.topo.join(sysfs::GENERATION_ID);
        let gen_start = read_u32_file(&gen_path)?;
        let system = self.system_properties()?;

        let nodes_dir = self.topo.join(sysfs::NODES);
        let num_sysfs = std::fs::read_dir(&nodes_dir)
            .map_err(|e| TopologyError::io(&nodes_dir, e))?
            .take(MAX_NODES as usize + 1)
            .count() as u64;
        if num_sysfs > MAX_NODES {
            return Err(TopologyError::AbsurdCount {
                path: nodes_dir,
                key: "number of nodes".into(),
                value: num_sysfs,
                limit: MAX_NODES,
            });
        }
        let num_sysfs = num_sysfs as u32;

        let mut support = Vec::with_capacity(num_sysfs as usize);
        for s in 0..num_sysfs {
            support.push(self.check_supported(s)?);
        }
        let user_to_sysfs: Vec<u32> = (0..num_sysfs)
            .filter(|&s| !matches!(support[s as usize], Support::Unsupported))
            .collect();
        let sysfs_to_user: BTreeMap<u32, u32> = user_to_sysfs
            .iter()
            .enumerate()
            .map(|(u, &s)| (s, u as u32))
            .collect();
        let num_nodes = user_to_sysfs.len() as u32;

        let mut builds: Vec<Build> = Vec::with_capacity(num_nodes as usize);
        let mut any_p2p = false;
        // Like the C library, the p2p link count carries over to later
        // nodes whose properties lack the key.
        let mut num_p2p: u32 = 0;
        for (u, &s) in user_to_sysfs.iter().enumerate() {
            let u = u as u32;
            let (gpu_id, file) = match &support[s as usize] {
                Support::Gpu { gpu_id, props } => (*gpu_id, props.clone()),
                _ => (
                    0,
                    PropFile::read(&self.node_dir(s).join(sysfs::PROPERTIES), false)?,
                ),
            };
            let (props, io_total) = node_properties(&file)?;
            if let Some(p) = props.p2p_links_count {
                any_p2p = true;
                num_p2p = p;
            }
            let mut node = Node {
                id: u,
                sysfs_id: s,
                gpu_id,
                properties: props,
                derived: Derived::default(),
                memory_banks: Vec::new(),
                caches: Vec::new(),
                io_links: Vec::new(),
            };
            self.derive(&mut node, &file.path)?;
            self.read_banks(&mut node, &file.path)?;
            self.read_caches(&mut node)?;

            let cap = num_nodes.saturating_sub(1) as usize;
            let num_io =
                io_total
                    .checked_sub(num_p2p)
                    .ok_or_else(|| TopologyError::AbsurdCount {
                        path: file.path.clone(),
                        key: "io_links_count - p2p_links_count".into(),
                        value: u64::from(io_total).wrapping_sub(u64::from(num_p2p)),
                        limit: MAX_LINKS,
                    })?;
            for (count, dir, origin) in [
                (num_io, sysfs::IO_LINKS, LinkOrigin::IoLink),
                (num_p2p, sysfs::P2P_LINKS, LinkOrigin::P2pLink),
            ] {
                let mut l = 0;
                while l < count && node.io_links.len() < cap {
                    let path = self
                        .node_dir(s)
                        .join(dir)
                        .join(l.to_string())
                        .join(sysfs::PROPERTIES);
                    l += 1;
                    if let Some(link) =
                        self.read_link(&path, s, u, origin, &support, &sysfs_to_user)?
                    {
                        node.io_links.push(link);
                    }
                }
            }
            builds.push(Build { node });
        }

        if !any_p2p {
            add_indirect_links(&mut builds, self.options.rules);
        }

        let gen_end = read_u32_file(&gen_path)?;
        if gen_start != gen_end {
            return Ok(None);
        }
        Ok(Some(Topology {
            generation_id: gen_start,
            system,
            rules: self.options.rules,
            num_sysfs_nodes: num_sysfs,
            nodes: builds.into_iter().map(|b| b.node).collect(),
        }))
    }

    fn system_properties(&self) -> Result<SystemProperties, TopologyError> {
        let file = PropFile::read(&self.topo.join(sysfs::SYSTEM_PROPERTIES), false)?;
        let mut sys = SystemProperties::default();
        for e in &file.entries {
            match e.key.as_str() {
                sysfs::system::PLATFORM_OEM => sys.platform_oem = file.u32_of(e)?,
                sysfs::system::PLATFORM_ID => sys.platform_id = file.u32_of(e)?,
                sysfs::system::PLATFORM_REV => sys.platform_rev = file.u32_of(e)?,
                _ => {}
            }
        }
        Ok(sys)
    }

    fn check_supported(&self, s: u32) -> Result<Support, TopologyError> {
        let dir = self.node_dir(s);
        let gpu_id_path = dir.join(sysfs::GPU_ID);
        let bytes = match parse::read_bytes(&gpu_id_path) {
            Ok(b) => b,
            Err(e) if e.is_read_eperm() => return Ok(Support::Unsupported),
            Err(e) => return Err(e.into_error(&gpu_id_path)),
        };
        let text = parse::bytes_to_text(&gpu_id_path, bytes)?;
        let gpu_id = parse::parse_single_u32(&gpu_id_path, &text)?;
        if gpu_id == 0 {
            return Ok(Support::Cpu);
        }
        let props = PropFile::read(&dir.join(sysfs::PROPERTIES), false)?;
        let Some(entry) = props
            .entries
            .iter()
            .find(|e| e.key == sysfs::node::DRM_RENDER_MINOR)
        else {
            return Err(TopologyError::MissingKey {
                path: props.path.clone(),
                key: sysfs::node::DRM_RENDER_MINOR.into(),
            });
        };
        let minor = entry.value;
        if !(u64::from(DRM_RENDER_MINOR_BASE)..=u64::from(DRM_RENDER_MINOR_MAX)).contains(&minor) {
            return Err(TopologyError::RenderMinorOutOfRange {
                path: props.path.clone(),
                minor,
            });
        }
        let minor = minor as u32;
        match self.devices.probe_render_node(minor) {
            Ok(()) => Ok(Support::Gpu { gpu_id, props }),
            Err(e) if e == Errno::ENOENT || e == Errno::EPERM => Ok(Support::Unsupported),
            Err(errno) => Err(TopologyError::RenderNode {
                sysfs_node: s,
                minor,
                errno,
            }),
        }
    }

    /// Fills `node.derived` the way the C library's node-properties reader
    /// does.
    fn derive(&self, node: &mut Node, props_path: &Path) -> Result<(), TopologyError> {
        let p = &node.properties;
        let r = self.options.rules;
        let mut d = Derived {
            capability: p.capability,
            num_xcc: if p.simd_count != 0 {
                p.num_xcc.max(1)
            } else {
                p.num_xcc
            },
            ..Derived::default()
        };
        if r.clear_svm_capability_without_svm_api && !self.options.svm_api_supported {
            d.capability.0 &= !(1 << 27);
        }
        if !r.gfx_fields_need_simds || p.simd_count != 0 {
            d.num_shader_banks = if r.shader_banks_per_engine {
                p.array_count
                    .checked_div(p.simd_arrays_per_engine)
                    .unwrap_or(0)
            } else {
                p.array_count
            };
            let target = GfxVersion::from_target_version(p.gfx_target_version);
            let raw_major = (p.gfx_target_version / 10000) % 100;
            let table = if r.device_table_up_to_gfx10 && raw_major > 10 {
                None
            } else {
                gfx::lookup_device_id(p.device_id)
            };
            if r.family_id_from_sysfs {
                d.family_id = p.family_id;
            }
            if table.is_some() || target.is_some() {
                let global = self.options.gfx_override.as_ref();
                let chosen = if r.per_node_gfx_override {
                    self.options.node_gfx_overrides.get(&node.id).or(global)
                } else {
                    global
                };
                let overridden = chosen.map(|o| parse_override(o)).transpose()?;
                let device = table.map(|t| t.version).or(target).unwrap_or_default();
                let version = if r.separate_override_engine_id {
                    d.override_gfx_version = overridden;
                    device
                } else {
                    overridden.unwrap_or(device)
                };
                d.from_device_table =
                    table.is_some() && (r.separate_override_engine_id || overridden.is_none());
                d.gfx_version = Some(version);
                d.amd_name = match table {
                    Some(t) => t.amd_name.to_owned(),
                    None => format!("GFX{:06x}", version.full()),
                };
                if r.gfx_fields_need_simds || p.cpu_cores_count == 0 {
                    if let Some(info) = self.drm_info(node) {
                        d.marketing_name = self.marketing_name(info);
                        if let Some(f) = info.family {
                            d.family_id = f;
                        }
                        d.integrated = info.fusion.unwrap_or(false);
                    }
                }
                d.sgpr_size_per_cu = gfx::SGPR_SIZE_PER_CU;
                d.vgpr_size_per_cu = r.vgpr_table.size_per_cu(version);
            }
        }
        if p.simd_count != 0 && d.gfx_version.map_or(0, |v| v.major) == 0 {
            let _ = props_path;
            return Err(TopologyError::UnknownGfxVersion {
                node: node.id,
                device_id: u32::from(p.device_id),
            });
        }
        if p.cpu_cores_count != 0 {
            if let Some(name) = self.cpuinfo.model_name_for_apicid(p.cpu_core_id_base) {
                let mut name = name.to_owned();
                cpuinfo::truncate_bytes(&mut name, cpuinfo::NAME_MAX);
                if p.device_id == 0 {
                    d.amd_name = name.clone();
                }
                d.marketing_name = name;
            }
        }
        node.derived = d;
        Ok(())
    }

    /// The DRM identity of a GPU node: from the device, else from the PCI
    /// `revision` file in sysfs (with the sysfs device id).
    fn drm_info(&self, node: &Node) -> Option<DrmDeviceInfo> {
        let p = &node.properties;
        if let Some(info) = self.devices.drm_device_info(p.drm_render_minor) {
            return Some(info);
        }
        let candidates = [
            format!("sys/dev/char/226:{}/device/revision", p.drm_render_minor),
            format!(
                "sys/class/drm/renderD{}/device/revision",
                p.drm_render_minor
            ),
            format!("sys/bus/pci/devices/{}/revision", p.pci_address()),
        ];
        candidates.iter().find_map(|c| {
            let text = std::fs::read_to_string(self.root.join(c)).ok()?;
            let t = text.trim();
            let t = t.strip_prefix("0x").unwrap_or(t);
            let rev = u32::from_str_radix(t, 16).ok()?;
            Some(DrmDeviceInfo {
                device_id: u32::from(p.device_id),
                pci_rev: rev,
                family: None,
                fusion: None,
            })
        })
    }

    fn marketing_name(&self, info: DrmDeviceInfo) -> String {
        let mut name = match self.ids {
            Some(ids) => ids.marketing_name(info.device_id, info.pci_rev).to_owned(),
            None => String::new(),
        };
        cpuinfo::truncate_bytes(&mut name, cpuinfo::NAME_MAX);
        name
    }

    fn read_banks(&self, node: &mut Node, props_path: &Path) -> Result<(), TopologyError> {
        let _ = props_path;
        for m in 0..node.properties.mem_banks_count {
            let path = self
                .node_dir(node.sysfs_id)
                .join(sysfs::MEM_BANKS)
                .join(m.to_string())
                .join(sysfs::PROPERTIES);
            let f = PropFile::read(&path, false)?;
            let mut b = MemoryBank::default();
            for e in &f.entries {
                match e.key.as_str() {
                    sysfs::mem_bank::HEAP_TYPE => b.heap_type = HeapType(f.u32_of(e)?),
                    sysfs::mem_bank::SIZE_IN_BYTES => b.size_in_bytes = e.value,
                    sysfs::mem_bank::FLAGS => b.flags = f.u32_of(e)?,
                    sysfs::mem_bank::WIDTH => b.width = f.u32_of(e)?,
                    sysfs::mem_bank::MEM_CLK_MAX => b.mem_clk_max = f.u32_of(e)?,
                    _ => {}
                }
            }
            node.memory_banks.push(b);
        }
        Ok(())
    }

    fn read_caches(&self, node: &mut Node) -> Result<(), TopologyError> {
        if node.properties.caches_count == 0 {
            if node.gpu_id == 0 {
                node.caches = crate::cpu_cache::host_cpu_caches(self.root, node.id, self.cpuinfo);
                if node.caches.is_empty() && !self.options.rules.cpu_caches_optional {
                    return Err(TopologyError::NoCpuCaches { node: node.id });
                }
            }
            return Ok(());
        }
        for c in 0..node.properties.caches_count {
            let path = self
                .node_dir(node.sysfs_id)
                .join(sysfs::CACHES)
                .join(c.to_string())
                .join(sysfs::PROPERTIES);
            let f = PropFile::read(&path, true)?;
            let mut cache = Cache::default();
            for e in &f.entries {
                match e.key.as_str() {
                    sysfs::cache::PROCESSOR_ID_LOW => cache.processor_id_low = f.u32_of(e)?,
                    sysfs::cache::LEVEL => cache.level = f.u32_of(e)?,
                    sysfs::cache::SIZE => cache.size = f.u32_of(e)?,
                    sysfs::cache::CACHE_LINE_SIZE => cache.cache_line_size = f.u32_of(e)?,
                    sysfs::cache::CACHE_LINES_PER_TAG => cache.cache_lines_per_tag = f.u32_of(e)?,
                    sysfs::cache::ASSOCIATION => cache.associativity = f.u32_of(e)?,
                    sysfs::cache::LATENCY => cache.latency = f.u32_of(e)?,
                    sysfs::cache::TYPE => cache.cache_type = CacheType(f.u32_of(e)?),
                    _ => {}
                }
            }
            cache.sibling_map = f.sibling_map.unwrap_or_default();
            node.caches.push(cache);
        }
        Ok(())
    }

    /// Reads one io/p2p link; `None` when its target node is not supported
    /// (or its file is hidden with EPERM).
    fn read_link(
        &self,
        path: &Path,
        sysfs: u32,
        user: u32,
        origin: LinkOrigin,
        support: &[Support],
        sysfs_to_user: &BTreeMap<u32, u32>,
    ) -> Result<Option<IoLink>, TopologyError> {
        let bytes = match parse::read_bytes(path) {
            Ok(b) => b,
            Err(e) if e.is_read_eperm() => return Ok(None),
            Err(e) => return Err(e.into_error(path)),
        };
        let text = parse::bytes_to_text(path, bytes)?;
        let f = PropFile::parse(path, &text, false)?;
        let mut link = IoLink {
            origin,
            link_type: IoLinkType::UNDEFINED,
            version_major: 0,
            version_minor: 0,
            node_from: user,
            node_to: 0,
            weight: 0,
            min_latency: 0,
            max_latency: 0,
            min_bandwidth: 0,
            max_bandwidth: 0,
            recommended_transfer_size: 0,
            recommended_sdma_engine_id_mask: 0,
            flags: 0,
        };
        let (mut seen_from, mut seen_to) = (false, false);
        for e in &f.entries {
            match e.key.as_str() {
                sysfs::io_link::TYPE => link.link_type = IoLinkType(f.u32_of(e)?),
                sysfs::io_link::VERSION_MAJOR => link.version_major = f.u32_of(e)?,
                sysfs::io_link::VERSION_MINOR => link.version_minor = f.u32_of(e)?,
                sysfs::io_link::NODE_FROM => {
                    if e.value != u64::from(sysfs) {
                        return Err(TopologyError::LinkNodeFrom {
                            path: path.to_owned(),
                            expected: u64::from(sysfs),
                            found: e.value,
                        });
                    }
                    seen_from = true;
                }
                sysfs::io_link::NODE_TO => {
                    let to = f.u32_of(e)?;
                    let supported = support
                        .get(to as usize)
                        .is_some_and(|s| !matches!(s, Support::Unsupported));
                    if !supported {
                        return Ok(None);
                    }
                    link.node_to = sysfs_to_user[&to];
                    seen_to = true;
                }
                sysfs::io_link::WEIGHT => link.weight = f.u32_of(e)?,
                sysfs::io_link::MIN_LATENCY => link.min_latency = f.u32_of(e)?,
                sysfs::io_link::MAX_LATENCY => link.max_latency = f.u32_of(e)?,
                sysfs::io_link::MIN_BANDWIDTH => link.min_bandwidth = f.u32_of(e)?,
                sysfs::io_link::MAX_BANDWIDTH => link.max_bandwidth = f.u32_of(e)?,
                sysfs::io_link::RECOMMENDED_TRANSFER_SIZE => {
                    link.recommended_transfer_size = f.u32_of(e)?
                }
                sysfs::io_link::RECOMMENDED_SDMA_ENGINE_ID_MASK => {
                    link.recommended_sdma_engine_id_mask = f.u32_of(e)?
                }
                sysfs::io_link::FLAGS => link.flags = f.u32_of(e)?,
                _ => {}
            }
        }
        for (seen, key) in [
            (seen_from, sysfs::io_link::NODE_FROM),
            (seen_to, sysfs::io_link::NODE_TO),
        ] {
            if !seen {
                return Err(TopologyError::MissingKey {
                    path: path.to_owned(),
                    key: key.into(),
                });
            }
        }
        Ok(Some(link))
    }
}

fn parse_override(value: &str) -> Result<GfxVersion, TopologyError> {
    GfxVersion::parse_override(value).ok_or_else(|| TopologyError::InvalidGfxOverride {
        value: value.to_owned(),
    })
}

/// Applies the node `properties` keys in file order. Returns the values and
/// the C library's running `NumIOLinks` (`io_links_count`, plus
/// `p2p_links_count` when that key follows it).
fn node_properties(f: &PropFile) -> Result<(NodeProperties, u32), TopologyError> {
    let mut p = NodeProperties::default();
    let mut io_total: u32 = 0;
    for e in &f.entries {
        let u32v = || f.u32_of(e);
        match e.key.as_str() {
            sysfs::node::CPU_CORES_COUNT => p.cpu_cores_count = u32v()?,
            sysfs::node::SIMD_COUNT => p.simd_count = u32v()?,
            sysfs::node::MEM_BANKS_COUNT => p.mem_banks_count = f.count_of(e, MAX_MEM_BANKS)?,
            sysfs::node::CACHES_COUNT => p.caches_count = f.count_of(e, MAX_CACHES)?,
            sysfs::node::IO_LINKS_COUNT => {
                p.io_links_count = f.count_of(e, MAX_LINKS)?;
                io_total = p.io_links_count;
            }
            sysfs::node::P2P_LINKS_COUNT => {
                let n = f.count_of(e, MAX_LINKS)?;
                p.p2p_links_count = Some(n);
                io_total = io_total.saturating_add(n);
            }
            sysfs::node::CPU_CORE_ID_BASE => p.cpu_core_id_base = u32v()?,
            sysfs::node::SIMD_ID_BASE => p.simd_id_base = u32v()?,
            sysfs::node::CAPABILITY => p.capability = Capability(u32v()?),
            sysfs::node::CAPABILITY2 => p.capability2 = u32v()?,
            sysfs::node::DEBUG_PROP => p.debug_prop = e.value,
            sysfs::node::MAX_WAVES_PER_SIMD => p.max_waves_per_simd = u32v()?,
            sysfs::node::LDS_SIZE_IN_KB => p.lds_size_in_kb = u32v()?,
            sysfs::node::GDS_SIZE_IN_KB => p.gds_size_in_kb = u32v()?,
            sysfs::node::WAVE_FRONT_SIZE => p.wave_front_size = u32v()?,
            sysfs::node::ARRAY_COUNT => p.array_count = u32v()?,
            sysfs::node::SIMD_ARRAYS_PER_ENGINE => p.simd_arrays_per_engine = u32v()?,
            sysfs::node::CU_PER_SIMD_ARRAY => p.cu_per_simd_array = u32v()?,
            sysfs::node::SIMD_PER_CU => p.simd_per_cu = u32v()?,
            sysfs::node::MAX_SLOTS_SCRATCH_CU => p.max_slots_scratch_cu = u32v()?,
            sysfs::node::FW_VERSION => p.fw_version = u32v()?,
            sysfs::node::VENDOR_ID => p.vendor_id = f.narrow(e, 16)? as u16,
            sysfs::node::DEVICE_ID => p.device_id = f.narrow(e, 16)? as u16,
            sysfs::node::LOCATION_ID => p.location_id = u32v()?,
            sysfs::node::DOMAIN => p.domain = u32v()?,
            sysfs::node::MAX_ENGINE_CLK_FCOMPUTE => p.max_engine_clk_fcompute = u32v()?,
            sysfs::node::MAX_ENGINE_CLK_CCOMPUTE => p.max_engine_clk_ccompute = u32v()?,
            sysfs::node::LOCAL_MEM_SIZE => p.local_mem_size = e.value,
            sysfs::node::DRM_RENDER_MINOR => p.drm_render_minor = u32v()?,
            sysfs::node::SDMA_FW_VERSION => p.sdma_fw_version = u32v()?,
            sysfs::node::HIVE_ID => p.hive_id = e.value,
            sysfs::node::UNIQUE_ID => p.unique_id = e.value,
            sysfs::node::NUM_SDMA_ENGINES => p.num_sdma_engines = u32v()?,
            sysfs::node::NUM_SDMA_XGMI_ENGINES => p.num_sdma_xgmi_engines = u32v()?,
            sysfs::node::NUM_GWS => p.num_gws = f.narrow(e, 8)? as u8,
            sysfs::node::NUM_SDMA_QUEUES_PER_ENGINE => {
                p.num_sdma_queues_per_engine = f.narrow(e, 8)? as u8
            }
            sysfs::node::NUM_CP_QUEUES => p.num_cp_queues = f.narrow(e, 8)? as u8,
            sysfs::node::NUM_XCC => p.num_xcc = u32v()?,
            sysfs::node::FAMILY_ID => p.family_id = u32v()?,
            sysfs::node::GFX_TARGET_VERSION => p.gfx_target_version = u32v()?,
            _ => {}
        }
    }
    Ok((p, io_total))
}

/// The CPU a GPU node reaches directly (weight <= 20).
fn direct_link_cpu(nodes: &[Build], gpu: usize, rules: Rules) -> Option<usize> {
    let n = &nodes[gpu].node;
    if n.gpu_id == 0 {
        return None;
    }
    n.io_links.iter().find_map(|l| {
        let ok = if rules.xgmi_cpu_links {
            (l.link_type == IoLinkType::PCIEXPRESS || l.link_type == IoLinkType::XGMI)
                && l.weight <= 20
                && nodes
                    .get(l.node_to as usize)
                    .is_some_and(|t| t.node.gpu_id == 0)
        } else {
            l.link_type == IoLinkType::PCIEXPRESS && l.weight <= 20
        };
        ok.then_some(l.node_to as usize)
    })
}

/// The first link `from -> to`: (weight, type).
fn direct_link(nodes: &[Build], from: usize, to: usize) -> Option<(u32, IoLinkType)> {
    nodes
        .get(from)?
        .node
        .io_links
        .iter()
        .find_map(|l| (l.node_to as usize == to).then_some((l.weight, l.link_type)))
}

/// The C library's `get_indirect_iolink_info`: (weight, type) of the path
/// `n1 -> ... -> n2` through CPUs, weight 0 if there is none.
fn indirect_link(nodes: &[Build], n1: usize, n2: usize, rules: Rules) -> (u32, IoLinkType) {
    let none = (0, IoLinkType::UNDEFINED);
    let (a, b) = (&nodes[n1].node, &nodes[n2].node);
    if n1 == n2 || (a.gpu_id == 0 && b.gpu_id == 0) {
        return none;
    }
    if a.properties.hive_id != 0 && a.properties.hive_id == b.properties.hive_id {
        return none;
    }
    let d1 = if a.gpu_id != 0 {
        direct_link_cpu(nodes, n1, rules)
    } else {
        None
    };
    let d2 = if b.gpu_id != 0 {
        direct_link_cpu(nodes, n2, rules)
    } else {
        None
    };
    if d1.is_none() && d2.is_none() {
        return none;
    }
    if b.gpu_id != 0
        && !b
            .memory_banks
            .iter()
            .any(|m| m.heap_type == HeapType::FRAME_BUFFER_PUBLIC)
    {
        return none;
    }
    let path = || -> Option<(u32, IoLinkType)> {
        match (d1, d2) {
            (Some(c1), Some(c2)) if c1 == c2 => {
                let (w1, _) = direct_link(nodes, n1, c1)?;
                let (w2, t) = direct_link(nodes, c1, n2)?;
                Some((w1.wrapping_add(w2), t))
            }
            (Some(c1), Some(c2)) => {
                let (w1, _) = direct_link(nodes, n1, c1)?;
                let (w2, t) = direct_link(nodes, c1, c2)?;
                if t == IoLinkType::QPI_1_1 && w2 > 20 {
                    return None;
                }
                let (w3, _) = direct_link(nodes, c2, n2)?;
                Some((w1.wrapping_add(w2).wrapping_add(w3), t))
            }
            (Some(c1), None) => {
                let (w1, _) = direct_link(nodes, n1, c1)?;
                let (w2, t) = direct_link(nodes, c1, n2)?;
                Some((w1.wrapping_add(w2), t))
            }
            (None, Some(c2)) => {
                let (w2, t) = direct_link(nodes, n1, c2)?;
                let (w3, _) = direct_link(nodes, c2, n2)?;
                Some((w2.wrapping_add(w3), t))
            }
            (None, None) => None,
        }
    };
    path().unwrap_or(none)
}

/// Adds the indirect links the C library synthesises when no node reports
/// p2p links, in its order (pairs i < j, i -> j then j -> i), each node
/// holding at most `num_nodes - 1` links.
fn add_indirect_links(nodes: &mut [Build], rules: Rules) {
    let n = nodes.len();
    let cap = n.saturating_sub(1);
    let add = |nodes: &mut [Build], from: usize, to: usize| {
        let (weight, t) = indirect_link(nodes, from, to, rules);
        if weight == 0 || nodes[from].node.io_links.len() >= cap {
            return;
        }
        nodes[from].node.io_links.push(IoLink {
            origin: LinkOrigin::Indirect,
            link_type: t,
            version_major: 0,
            version_minor: 0,
            node_from: from as u32,
            node_to: to as u32,
            weight,
            min_latency: 0,
            max_latency: 0,
            min_bandwidth: 0,
            max_bandwidth: 0,
            recommended_transfer_size: 0,
            recommended_sdma_engine_id_mask: 0,
            flags: 0,
        });
    };
    for i in 0..n.saturating_sub(1) {
        for j in i + 1..n {
            add(nodes, i, j);
            add(nodes, j, i);
        }
    }
}
