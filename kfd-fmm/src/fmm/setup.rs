//! Setting up a context's address space: render nodes, process apertures,
//! VM acquisition, the SVM range, memory policy and the MMIO remap pages.

use std::os::fd::{AsFd, AsRawFd};
use std::sync::Arc;

use kfd_sys::DeviceFile;
use kfd_sys::{kfd, memory};

use super::apertures::{Apertures, GpuApertures};
use super::gpus::GpuSet;
use super::index::ObjectIndex;
use super::scratch::KfdPage;
use super::{Fmm, FmmOptions, NodeDesc, Notes, Range};
use crate::aperture::Aperture;
use crate::error::{AddressSpace, FmmError, Result};
use crate::flags::AllocMemFlags;
use crate::lock;
use crate::objects::GpuIds;
use crate::PAGE_SIZE;

/// The page-granular VM alignment of old GPUs (Tonga, Carrizo need 32 KiB).
fn vm_alignment(device_id: u32) -> u64 {
    const TONGA_PAGE_SIZE: u64 = 0x8000;
    if (0x6920..=0x6939).contains(&device_id) || (0x9870..=0x9877).contains(&device_id) {
        TONGA_PAGE_SIZE
    } else {
        PAGE_SIZE
    }
}

impl Fmm {
    /// Sets up the memory manager of a context: opens (or adopts) each
    /// GPU's render node, reads the process apertures, acquires each GPU's
    /// VM, reserves the SVM range, sets the memory policy and maps the MMIO
    /// remap page of each gfx9+ GPU (a failure there only records a
    /// warning), as libhsakmt's `fmm_init_process_apertures` does.
    pub fn new(kfd: Arc<DeviceFile>, nodes: Vec<NodeDesc>, opts: FmmOptions) -> Result<Fmm> {
        Fmm::with_io_links(kfd, nodes, Vec::new(), opts)
    }

    /// [`Fmm::new`] knowing, per node, the nodes its io links go to (what
    /// finding each GPU's usable peers needs, see
    /// [`FmmRules::default_map_all_gpus`]).
    fn with_io_links(
        kfd: Arc<DeviceFile>,
        nodes: Vec<NodeDesc>,
        io_links: Vec<Vec<u32>>,
        opts: FmmOptions,
    ) -> Result<Fmm> {
        let version = match opts.kfd_version {
            Some(v) => v,
            None => {
                let mut v = kfd::kfd_ioctl_get_version_args::default();
                kfd.ioctl_plain(kfd::AMDKFD_IOC_GET_VERSION, &mut v)
                    .map_err(FmmError::ioctl(kfd::AMDKFD_IOC_GET_VERSION.info()))?;
                (v.major_version, v.minor_version)
            }
        };
        let gpus = GpuSet::open(&kfd, nodes, io_links, &opts.render_nodes)?;
        let n = gpus.all().len();
        let mut fmm = Fmm {
            kfd,
            version,
            apertures: Apertures::new(n, opts.guard_pages),
            objects: ObjectIndex::new(n),
            gpus,
            opts,
            numa: Default::default(),
            notes: Notes::default(),
        };
        // On failure `fmm` is dropped, which undoes whatever was set up.
        fmm.init_apertures()?;
        fmm.map_mmio_pages();
        Ok(fmm)
    }

    /// [`Fmm::new`] for the nodes of a topology snapshot (node ids are the
    /// snapshot's).
    pub fn from_topology(
        kfd: Arc<DeviceFile>,
        topology: &kfd_topology::Topology,
        opts: FmmOptions,
    ) -> Result<Fmm> {
        let nodes = topology
            .nodes
            .iter()
            .map(NodeDesc::from_topology_node)
            .collect();
        let io_links = topology
            .nodes
            .iter()
            .map(|n| n.io_links.iter().map(|l| l.node_to).collect())
            .collect();
        Fmm::with_io_links(kfd, nodes, io_links, opts)
    }

    /// GET_PROCESS_APERTURES_NEW (or, on a really old kernel, the inline
    /// form): the apertures of each GPU, in kernel order.
    fn process_apertures(&self) -> Result<Vec<kfd::kfd_process_device_apertures>> {
        let n = self.gpus.nodes().len().max(1);
        let mut aps = vec![kfd::kfd_process_device_apertures::default(); n];
        let count = match memory::get_process_apertures(&self.kfd, &mut aps) {
            Ok(count) => (count as usize).min(n),
            Err(_) => {
                // A really old kernel: the inline form, at most 7 GPUs.
                let mut old = kfd::kfd_ioctl_get_process_apertures_args::default();
                self.kfd
                    .ioctl_plain(kfd::AMDKFD_IOC_GET_PROCESS_APERTURES, &mut old)
                    .map_err(FmmError::ioctl(
                        kfd::AMDKFD_IOC_GET_PROCESS_APERTURES.info(),
                    ))?;
                let c = (old.num_of_nodes as usize)
                    .min(n)
                    .min(old.process_apertures.len());
                aps[..c].copy_from_slice(&old.process_apertures[..c]);
                c
            }
        };
        aps.truncate(count);
        Ok(aps)
    }

    fn init_apertures(&mut self) -> Result<()> {
        let aps = self.process_apertures()?;
        let (mut svm_base, mut svm_limit, mut svm_align) = (0u64, 0u64, 0u64);
        let mut canonical = Vec::new();
        for ap in &aps {
            let Some(gi) = self.gpus.index(ap.gpu_id) else {
                continue;
            };
            self.gpus.push_order(ap.gpu_id)?;
            let align = vm_alignment(self.gpus.get(gi).device_id);
            let gpuvm = if ap.gpuvm_limit < (1 << 47) {
                // The GPU VM covers (part of) the canonical range: it joins
                // the SVM apertures shared by all such GPUs.
                svm_base = svm_base.max(ap.gpuvm_base);
                svm_limit = if svm_limit == 0 {
                    ap.gpuvm_limit
                } else {
                    svm_limit.min(ap.gpuvm_limit)
                };
                svm_align = svm_align.max(align);
                canonical.push(ap.gpu_id);
                None
            } else {
                let a = Aperture::reserved(
                    AddressSpace::Gpuvm,
                    ap.gpuvm_base,
                    ap.gpuvm_limit,
                    align,
                    self.opts.guard_pages,
                    None,
                );
                // Keep the first page of the aperture unused, so an offset
                // from the base is never 0.
                a.hold(align);
                Some(a)
            };
            let lds = Range {
                base: ap.lds_base,
                limit: ap.lds_limit,
            };
            let scratch = Range {
                base: ap.scratch_base,
                limit: ap.scratch_limit,
            };
            let apertures = GpuApertures {
                lds,
                scratch,
                gpuvm,
            };
            self.apertures.set_gpu(gi, apertures);
            self.acquire_vm(gi)?;
        }

        if svm_limit != 0 {
            self.apertures
                .init_svm(svm_base, svm_limit, svm_align, &self.opts)?;
            self.set_memory_policies(&canonical)?;
        }
        Ok(())
    }

    /// ACQUIRE_VM of GPU `gi` on its render node.
    fn acquire_vm(&self, gi: usize) -> Result<()> {
        let gpu = self.gpus.get(gi);
        let mut acq = kfd::kfd_ioctl_acquire_vm_args {
            drm_fd: gpu.render.as_fd().as_raw_fd() as u32,
            gpu_id: gpu.gpu_id,
        };
        self.kfd
            .ioctl_plain(kfd::AMDKFD_IOC_ACQUIRE_VM, &mut acq)
            .map_err(FmmError::ioctl(kfd::AMDKFD_IOC_ACQUIRE_VM.info()))?;
        Ok(())
    }

    /// SET_MEMORY_POLICY of each GPU in `canonical` (those whose VM covers
    /// the canonical range), matching the SVM apertures.
    fn set_memory_policies(&self, canonical: &[u32]) -> Result<()> {
        let Some(alt) = self.apertures.coherent() else {
            return Ok(());
        };
        let (alt_base, alt_size) = (alt.base, alt.limit - alt.base + 1);
        for &gpu_id in canonical {
            let mut p = kfd::kfd_ioctl_set_memory_policy_args {
                alternate_aperture_base: alt_base,
                alternate_aperture_size: alt_size,
                gpu_id,
                default_policy: if self.opts.disable_cache {
                    kfd::KFD_IOC_CACHE_POLICY_COHERENT
                } else {
                    kfd::KFD_IOC_CACHE_POLICY_NONCOHERENT
                },
                alternate_policy: kfd::KFD_IOC_CACHE_POLICY_COHERENT,
                misc_process_flag: 0,
            };
            self.kfd
                .ioctl_plain(kfd::AMDKFD_IOC_SET_MEMORY_POLICY, &mut p)
                .map_err(FmmError::ioctl(kfd::AMDKFD_IOC_SET_MEMORY_POLICY.info()))?;
        }
        Ok(())
    }

    /// Undoes what acquiring the system properties set up, as upstream
    /// `hsaKmtReleaseSystemProperties` does with
    /// `hsakmt_fmm_destroy_process_apertures`: unmaps and frees each GPU's
    /// MMIO remap page. Allocations, scratch and the SVM apertures stay.
    pub fn release_apertures(&self) {
        for (gi, gpu) in self.gpus.all().iter().enumerate() {
            let Some(addr) = lock(&gpu.mmio).take() else {
                continue;
            };
            let obj = self.objects.shard(gi + 1).remove_start(addr);
            if let Some(obj) = obj {
                self.destroy(obj);
            }
        }
    }

    /// Sets the apertures up again after [`Fmm::release_apertures`], as
    /// upstream's next `hsaKmtAcquireSystemProperties` does: reads the
    /// process apertures, acquires each GPU's VM, sets the memory policy
    /// of the GPUs sharing the (kept) SVM apertures and maps the MMIO
    /// remap pages again.
    pub fn reacquire_apertures(&self) -> Result<()> {
        let aps = self.process_apertures()?;
        let mut canonical = Vec::new();
        for ap in &aps {
            let Some(gi) = self.gpus.index(ap.gpu_id) else {
                continue;
            };
            if ap.gpuvm_limit < (1 << 47) {
                canonical.push(ap.gpu_id);
            }
            self.acquire_vm(gi)?;
        }
        if !canonical.is_empty() {
            self.set_memory_policies(&canonical)?;
        }
        self.map_mmio_pages();
        Ok(())
    }

    fn map_mmio_pages(&self) {
        for (gi, gpu) in self.gpus.all().iter().enumerate() {
            if !gpu.svm_needed || !self.gpus.order().contains(&gpu.gpu_id) {
                continue;
            }
            match self.map_mmio(gi) {
                Ok(addr) => *lock(&gpu.mmio) = Some(addr),
                Err(e) => self.warn(format!(
                    "failed to map the MMIO remap page of gpu {:#x}: {e}",
                    gpu.gpu_id
                )),
            }
        }
    }

    fn map_mmio(&self, gi: usize) -> Result<u64> {
        let page = KfdPage {
            size: PAGE_SIZE,
            kind: AllocMemFlags::MMIO_REMAP,
            offset: None,
            what: "MMIO remap page",
            owned: false,
        };
        let mut obj = self.alloc_kfd_page(gi, page)?;
        let addr = obj.start;
        // Every C library maps it with no node list: onto every GPU
        // (5.2.3's default mapping set), or, as the object belongs to a
        // GPU node, onto that GPU's usable peers.
        let targets = if self.opts.rules.default_map_all_gpus {
            GpuIds::from_slice(self.gpus.order())
        } else {
            self.gpus.usable_peers(gi)
        };
        if let Err(e) = self.map_ioctl(&mut obj, &targets) {
            self.destroy(obj);
            return Err(e);
        }
        obj.mapping_count = 1;
        self.insert_in(gi + 1, obj);
        Ok(addr)
    }
}
