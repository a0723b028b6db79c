//! Sharing: dma-buf export and import, graphics handles, IPC handles.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};

use kfd_sys::{kfd, memory};

use super::bo::{map_file, FileView};
use super::{page_align_up, Fmm, GraphicsResource, ShareVia};
use crate::error::{FmmError, Result};
use crate::flags::{ioc_to_hsa, AllocMemFlags, MemFlags};
use crate::objects::{ApId, Kind, Lookup, ObjectDesc, VmObject};
use crate::share::ShareHandle;
use crate::PAGE_SIZE;

/// Alignment of imported graphics buffers.
const IMAGE_ALIGN: u64 = 256 * 1024;

/// First guess for the size of graphics metadata.
const GRAPHICS_METADATA_DEFAULT_SIZE: u32 = 64;

impl Fmm {
    /// `hsaKmtRegisterGraphicsHandleToNodes`: imports a dma-buf exported by
    /// a graphics driver into this context's GPU address space.
    pub fn register_graphics_handle(
        &self,
        dmabuf: BorrowedFd<'_>,
        nodes: &[u32],
    ) -> Result<GraphicsResource> {
        let ids = if nodes.is_empty() {
            Vec::new()
        } else {
            self.gpu_ids_for_nodes(nodes)?
        };
        let fd = dmabuf.as_raw_fd() as u32;
        let mut metadata = vec![0u8; GRAPHICS_METADATA_DEFAULT_SIZE as usize];
        let (mut r, mut info) = memory::get_dmabuf_info(&self.kfd, fd, &mut metadata);
        if r.is_err() && info.metadata_size > GRAPHICS_METADATA_DEFAULT_SIZE {
            metadata = vec![0u8; info.metadata_size as usize];
            (r, info) = memory::get_dmabuf_info(&self.kfd, fd, &mut metadata);
        }
        r.map_err(FmmError::ioctl(kfd::AMDKFD_IOC_GET_DMABUF_INFO.info()))?;
        metadata.truncate(info.metadata_size as usize);
        let gi = self
            .gpus
            .index(info.gpu_id)
            .ok_or(FmmError::Failed("dma-buf belongs to an unknown GPU"))?;
        let ap = if self.gpus.get(gi).svm_needed {
            ApId::SvmDefault
        } else {
            ApId::Gpuvm(gi)
        };
        let aperture = self
            .apertures
            .get(ap)
            .ok_or(FmmError::Failed("no aperture for the buffer"))?;
        let size = page_align_up(info.size);
        let space = aperture.allocate(None, size, IMAGE_ALIGN)?;
        let addr = space.addr;
        let va = if matches!(ap, ApId::Gpuvm(_)) {
            addr - aperture.base
        } else {
            addr
        };
        // On failure the range goes back with `space`.
        let handle = self.import_dmabuf_at(info.gpu_id, va, dmabuf)?;
        let node = self.gpus.get(gi).node_id;
        let desc = ObjectDesc {
            handle: Some(handle),
            gpu_id: info.gpu_id,
            aperture: ap,
            flags: ioc_to_hsa(AllocMemFlags::from_bits_retain(info.flags)) | MemFlags::COARSE_GRAIN,
            node,
            kind: Kind::Graphics {
                metadata: metadata.clone(),
            },
            registered: ids,
            owned: false,
        };
        self.insert(VmObject::new(space, desc));
        Ok(GraphicsResource {
            address: addr,
            size: info.size,
            metadata,
            node,
        })
    }

    fn import_dmabuf_at(&self, gpu_id: u32, va: u64, fd: BorrowedFd<'_>) -> Result<u64> {
        let mut args = kfd::kfd_ioctl_import_dmabuf_args {
            va_addr: va,
            handle: 0,
            gpu_id,
            dmabuf_fd: fd.as_raw_fd() as u32,
        };
        self.kfd
            .ioctl_plain(kfd::AMDKFD_IOC_IMPORT_DMABUF, &mut args)
            .map_err(FmmError::ioctl(kfd::AMDKFD_IOC_IMPORT_DMABUF.info()))?;
        Ok(args.handle)
    }

    /// `hsaKmtExportDMABufHandle`: exports `[addr, addr+size)` (inside one
    /// object) as a dma-buf. Returns the descriptor and the offset of
    /// `addr` in the exported buffer.
    pub fn export_dmabuf(&self, addr: u64, size: u64) -> Result<(OwnedFd, u64)> {
        self.check_minor(12)?;
        let (handle, offset) = self
            .objects
            .with_object(addr, Lookup::Containing, |o| {
                let offset = addr - o.start;
                if offset.saturating_add(size) > o.size {
                    return Err(FmmError::RangeOutsideObject { addr, size });
                }
                o.handle
                    .map(|h| (h, offset))
                    .ok_or(FmmError::NoSuchObject(addr))
            })
            .unwrap_or(Err(FmmError::NoSuchObject(addr)))?;
        let fd = self.export_handle(handle, libc::O_CLOEXEC as u32)?;
        Ok((fd, offset))
    }

    fn export_handle(&self, handle: u64, flags: u32) -> Result<OwnedFd> {
        memory::export_dmabuf(&self.kfd, handle, flags)
            .map_err(FmmError::ioctl(kfd::AMDKFD_IOC_EXPORT_DMABUF.info()))
    }

    /// `hsaKmtShareMemory`: creates a handle another context or process
    /// can pass to [`Fmm::register_shared_handle`]. See [`ShareHandle`]
    /// for the format (a dma-buf kept open by this context while the
    /// memory lives).
    ///
    /// With [`ShareVia::RocmIpc`] (and first, with
    /// [`ShareVia::RocmIpcThenDmaBuf`]) this is the C library's ROCm-only
    /// IPC export instead: `AMDKFD_IOC_IPC_EXPORT_HANDLE` for the object's
    /// BO on the GPU of its node (the first GPU for system memory), and
    /// ERROR when the kernel refuses it (upstream kernels and kfd-sim do
    /// not have it: EINVAL) unless the dma-buf is the fallback. If it
    /// succeeds, the handle is the C library's `HsaSharedMemoryStruct`:
    /// the kernel's four share-handle words, the aperture type and index,
    /// the size in pages and the exporting gpu_id (importing such a handle
    /// is not implemented).
    ///
    /// [`ShareVia::RocmIpc`]: crate::ShareVia::RocmIpc
    /// [`ShareVia::RocmIpcThenDmaBuf`]: crate::ShareVia::RocmIpcThenDmaBuf
    pub fn share_memory(&self, addr: u64, size: u64) -> Result<ShareHandle> {
        if size >= 1u64 << (32 + 12) {
            return Err(FmmError::InvalidArgument("size too large to share"));
        }
        match self.opts.rules.share {
            ShareVia::RocmIpc => return self.ipc_export(addr, size),
            ShareVia::RocmIpcThenDmaBuf => match self.ipc_export(addr, size) {
                Err(FmmError::Ioctl { .. }) => {}
                other => return other,
            },
            ShareVia::DmaBuf => {}
        }
        self.check_minor(12)?;
        self.objects
            .with_object(addr, Lookup::Exact { size: 0 }, |o| {
                let handle = o.handle.ok_or(FmmError::NoSuchObject(addr))?;
                if o.share_fd.is_none() {
                    o.share_fd =
                        Some(self.export_handle(handle, (libc::O_CLOEXEC | libc::O_RDWR) as u32)?);
                }
                let fd = o.share_fd.as_ref().expect("exported");
                Ok(ShareHandle::new(
                    fd.as_fd(),
                    (size.min(o.size) / PAGE_SIZE) as u32,
                    o.mflags,
                    if o.gpu_id != 0 {
                        o.gpu_id
                    } else {
                        self.gpus.first().map_or(0, |g| g.gpu_id)
                    },
                ))
            })
            .unwrap_or(Err(FmmError::NoSuchObject(addr)))
    }

    fn ipc_export(&self, addr: u64, size: u64) -> Result<ShareHandle> {
        use kfd_sys::kfd::rocm_5_2;
        // 5.2.3's HSA_APERTURE values.
        const DGPU: u32 = 1;
        const DGPU_ALT: u32 = 2;
        const GPUVM: u32 = 3;
        const CPUVM: u32 = 4;
        let (handle, node, mflags, ape) = self
            .objects
            .with_object(addr, Lookup::Exact { size: 0 }, |o| {
                let ape = match o.aperture {
                    ApId::SvmCoherent if self.apertures.is_split() => (DGPU_ALT, 0),
                    ApId::Gpuvm(i) => (GPUVM, i as u32),
                    ApId::CpuVm => (CPUVM, 0),
                    _ => (DGPU, 0),
                };
                (o.handle.unwrap_or(0), o.node_id, o.mflags, ape)
            })
            .ok_or(FmmError::NoSuchObject(addr))?;
        let mut gpu_id = self.validate_node(node)?;
        if gpu_id == 0 && self.gpus.is_dgpu() {
            gpu_id = self
                .gpus
                .first()
                .map(|g| g.gpu_id)
                .ok_or(FmmError::Failed("no GPU to share memory through"))?;
        }
        let mut args = kfd::kfd_ioctl_ipc_export_handle_args {
            handle,
            gpu_id,
            flags: mflags.bits(),
            ..Default::default()
        };
        self.kfd
            .ioctl_plain(rocm_5_2::AMDKFD_IOC_IPC_EXPORT_HANDLE, &mut args)
            .map_err(FmmError::ioctl(kfd::AMDKFD_IOC_IPC_EXPORT_HANDLE.info()))?;
        let h = args.share_handle;
        Ok(ShareHandle([
            h[0],
            h[1],
            h[2],
            h[3],
            ape.0,
            ape.1,
            (size >> 12) as u32,
            gpu_id,
        ]))
    }

    /// `hsaKmtRegisterSharedHandle(ToNodes)`: imports memory shared with
    /// [`Fmm::share_memory`] (by this or another context, in this or
    /// another process). Returns `(address, size)`.
    pub fn register_shared_handle(
        &self,
        handle: &ShareHandle,
        nodes: &[u32],
    ) -> Result<(u64, u64)> {
        let ids = if nodes.is_empty() {
            Vec::new()
        } else {
            self.gpu_ids_for_nodes(nodes)?
        };
        // Upstream refuses a handle whose aperture type is invalid with
        // INVALID_PARAMETER before any ioctl; ours is one without the magic.
        // 5.2.3 crashes on such a handle (without the rule: ERROR).
        if !handle.has_magic() && self.opts.rules.refuse_unmarked_share_handles {
            return Err(FmmError::InvalidArgument(
                "share handle not made by ShareMemory",
            ));
        }
        let fd = handle.open()?;
        let size = handle.size_in_pages() as u64 * PAGE_SIZE;
        if size == 0 {
            return Err(FmmError::BadShareHandle("empty range"));
        }
        let mflags = handle.mem_flags();
        let gpu_id = if self.gpus.index(handle.gpu_id()).is_some() {
            handle.gpu_id()
        } else {
            self.gpus
                .first()
                .map(|g| g.gpu_id)
                .ok_or(FmmError::Failed("no GPU"))?
        };
        let gi = self.gpus.index(gpu_id).expect("known gpu");
        let ap = if mflags.contains(MemFlags::COARSE_GRAIN) || !self.gpus.get(gi).svm_needed {
            if self.gpus.get(gi).svm_needed {
                ApId::SvmDefault
            } else {
                ApId::Gpuvm(gi)
            }
        } else {
            ApId::SvmCoherent
        };
        let aperture = self
            .apertures
            .get(ap)
            .ok_or(FmmError::Failed("no aperture"))?;
        let space = aperture.allocate(None, size, 0)?;
        let addr = space.addr;
        // On failure the range goes back with `space`.
        let bo = self.import_dmabuf_at(gpu_id, addr, fd.as_fd())?;
        let desc = ObjectDesc {
            handle: Some(bo),
            gpu_id,
            aperture: ap,
            flags: mflags,
            node: self.gpus.get(gi).node_id,
            kind: Kind::Shared,
            registered: ids,
            owned: false,
        };
        let mut obj = VmObject::new(space, desc);
        if mflags.contains(MemFlags::HOST_ACCESS) && aperture.cpu_accessible {
            let view = FileView {
                fd: fd.as_fd(),
                offset: 0,
                len: size,
                host_access: true,
                what: "shared memory",
            };
            match map_file(&mut obj.space, addr, view) {
                Ok(view) => obj.views.push(view),
                Err(e) => self.warn(format!("shared memory at {addr:#x} has no CPU view: {e}")),
            }
        }
        self.insert(obj);
        Ok((addr, size))
    }
}
