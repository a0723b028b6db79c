//! The newest library's exports that work on a GPU's render node rather
//! than on `/dev/kfd`: the DRM-handle layer (`hsaKmtHandleImport/Export`,
//! `hsaKmtMemoryVaMap/VaUnmap`, `hsaKmtMemoryCpuMap`,
//! `hsaKmtMemHandleFree(PreserveMetadata)`, `hsaKmtMemoryGetCpuAddr`),
//! `hsaKmtGetAmdGPUDeviceFd`, `hsaKmtSetSigbusDelay` and
//! `hsaKmtSetPersistingCacheSize(Ctx)`.
//!
//! Facts: rocm-systems `projects/rocr-runtime/libhsakmt/src/memory.c` of
//! 2026 (stored revision 04d0777a1d68); none of these is in the header of
//! the thunk ROCr 7.2.4 embeds, whose runtime calls libdrm_amdgpu itself.
//! The C library passes libdrm_amdgpu handles (`amdgpu_device_handle`,
//! `amdgpu_bo_handle`); here they are tokens of ours ([`crate::amdgpu`],
//! [`crate::bo`]), and a token that is not one is refused with a status
//! where the C library would hand garbage to libdrm_amdgpu.
//!
//! Where ours differs on purpose:
//! - `hsaKmtMemoryVaMap/VaUnmap` issue `DRM_IOCTL_AMDGPU_GEM_VA` without
//!   the VM timeline syncobj and its wait (the C library's
//!   `fmm_advance_vm_timeline`): the request is complete when it returns
//!   on kernels without timelines, and on the simulator.
//! - Fabric (UALink) handles need `DRM_AMDGPU_UALINK_HANDLE`, which no
//!   released kernel has: `NOT_SUPPORTED` (the C library: ERROR after the
//!   kernel refuses).
//! - `hsaKmtSetPersistingCacheSize` needs `AMDGPU_VM_OP_GL2_PERSISTING_L2_CACHE`,
//!   which no released kernel defines (not even its number):
//!   `NOT_SUPPORTED` after the C library's argument checks.
//! - An import whose IPC metadata does not match is refused with 3, as in
//!   C, but the buffer is released (C leaks its `amdgpu_bo`).

use std::ffi::c_void;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, IntoRawFd};
use std::sync::Arc;

use hsakmt_sys::newest::{
    HsaExternalHandleType, HsaHandleExportDesc, HsaHandleExportFlags, HsaHandleImportDesc,
    HsaHandleImportFlags, HsaHandleImportResult, HsaMemoryExportResult, HsaMemoryMapFlags,
    HsaMemoryObjectHandle,
};
use kfd_context::Context;
use kfd_fmm::{GemBuffer, VaAccess};
use kfd_sys::DeviceFile;

use crate::amdgpu::Owner;
use crate::bo;
use crate::border::{check_mut, read_in, st, write_out, KmtResult};
use crate::ctx::{self, HsaKFDContext};

/// A device token's context, render minor and render-node file.
struct Device {
    owner: Owner,
    minor: u32,
    file: Arc<DeviceFile>,
}

/// The context a device or buffer token belongs to (`INVALID_HANDLE` if
/// it closed).
fn owner_context(owner: Owner) -> KmtResult<ctx::CtxRef> {
    match owner {
        Owner::Primary => ctx::primary(),
        Owner::Secondary(id) => ctx::secondary_by_id(id)
            .map(ctx::CtxRef::Secondary)
            .ok_or(st::INVALID_HANDLE),
    }
}

/// The render-node file of GPU node `node` of `c` (`None` for a CPU node,
/// an unknown node, or before the snapshot).
fn node_render(c: &Context, node: u32) -> Option<(u32, Arc<DeviceFile>)> {
    let topo = c.topology().ok()?;
    let n = topo.node(node).filter(|n| n.is_gpu())?;
    let file = c.fmm().ok()?.render_node(n.gpu_id)?.clone();
    Some((n.properties.drm_render_minor, file))
}

/// Resolves a device token of `hsaKmtGetAMDGPUDeviceHandle`: unknown (or
/// its context closed) → `unknown`; its GPU no longer in the snapshot →
/// `INVALID_NODE_UNIT`.
fn device(handle: *const c_void, unknown: crate::border::Status) -> KmtResult<Device> {
    let (owner, minor) = crate::amdgpu::lookup(handle).ok_or(unknown)?;
    let c = owner_context(owner).map_err(|_| unknown)?;
    let topo = c.topology().map_err(|_| st::INVALID_NODE_UNIT)?;
    let gpu_id = topo
        .nodes
        .iter()
        .find(|n| n.is_gpu() && n.properties.drm_render_minor == minor)
        .map(|n| n.gpu_id)
        .ok_or(st::INVALID_NODE_UNIT)?;
    let file = c
        .fmm()
        .map_err(|_| unknown)?
        .render_node(gpu_id)
        .ok_or(unknown)?
        .clone();
    Ok(Device { owner, minor, file })
}

/// The render node behind a device token of
/// `hsaKmtGetAMDGPUDeviceHandle` (libdtif's libdrm entry points take
/// these tokens as their `amdgpu_device_handle`): unknown →
/// `INVALID_HANDLE`, its GPU no longer in the snapshot →
/// `INVALID_NODE_UNIT`.
#[cfg(feature = "dtif")]
pub(crate) fn device_render_node(handle: *const c_void) -> KmtResult<Arc<DeviceFile>> {
    device(handle, st::INVALID_HANDLE).map(|d| d.file)
}

/// A buffer token (`INVALID_HANDLE` if it is not a live one).
fn buffer(handle: HsaMemoryObjectHandle) -> KmtResult<bo::Bo> {
    bo::lookup(handle as *const c_void).ok_or(st::INVALID_HANDLE)
}

fn kind(t: HsaExternalHandleType) -> KmtResult<()> {
    match t {
        HsaExternalHandleType::HSA_EXTERNAL_HANDLE_DMA_BUF => Ok(()),
        // DRM_AMDGPU_UALINK_HANDLE: in no released kernel.
        _ => Err(st::NOT_SUPPORTED),
    }
}

/// The prologue of `hsaKmtHandleImport/Export`: 20; a NULL descriptor
/// or result (`out_null`) → 4; the descriptor (packed: read unaligned),
/// whose device (`parts`: device handle and handle type) must be a known
/// one (NULL or unknown → 4) and whose type must be DMA_BUF (else 11).
///
/// # Safety
///
/// `desc`, when non-NULL, points at a readable `T`.
unsafe fn descriptor<T: Copy>(
    desc: *const T,
    out_null: bool,
    parts: impl Fn(&T) -> (*mut c_void, HsaExternalHandleType),
) -> KmtResult<(T, Device)> {
    ctx::check_open()?;
    if desc.is_null() || out_null {
        return Err(st::INVALID_HANDLE);
    }
    // SAFETY: non-NULL (checked) and readable (the caller's contract).
    let d = unsafe { desc.read_unaligned() };
    let (dev, ty) = parts(&d);
    if dev.is_null() {
        return Err(st::INVALID_HANDLE);
    }
    let dev = device(dev, st::INVALID_HANDLE)?;
    kind(ty)?;
    Ok((d, dev))
}

/// The IPC metadata check of an import (`flags.IPCHandle`): with
/// `UpdateMetadata` (and not `SysMem`) the buffer's metadata word is
/// reported if it has one, else set to the caller's; otherwise it must
/// equal the caller's (a mismatch is reported, and refused with 3).
fn check_ipc_metadata(
    buf: &GemBuffer,
    flags: HsaHandleImportFlags,
    want: u32,
    res: &mut HsaHandleImportResult,
) -> KmtResult<()> {
    let words = buf.metadata().map_err(|_| st::INVALID_HANDLE)?;
    let have = words.first().copied().unwrap_or(0);
    if flags.UpdateMetadata() != 0 && flags.SysMem() == 0 {
        if words.is_empty() {
            // As C, a failed update is not an error of the import.
            let _ = buf.set_metadata(&[want]);
        } else {
            res.metadata = have;
        }
        return Ok(());
    }
    if want != have {
        res.metadata = have;
        return Err(st::INVALID_PARAMETER);
    }
    Ok(())
}

export! {
    /// `hsaKmtGetAmdGPUDeviceFd`: the render-node descriptor behind a
    /// handle of `hsaKmtGetAMDGPUDeviceHandle` (the context's own; the
    /// caller must not close it). 20; a handle that is not one (or whose
    /// context closed) → 4; its GPU no longer in the snapshot → 5; NULL
    /// `fd` → 3.
    newest fn hsaKmtGetAmdGPUDeviceFd(DeviceHandle: *mut c_void, fd: *mut i32) {
        ctx::check_open()?;
        let d = device(DeviceHandle, st::INVALID_HANDLE)?;
        // SAFETY: an OUT argument; checked by `write_out`.
        unsafe { write_out(fd, d.file.as_fd().as_raw_fd(), st::INVALID_PARAMETER) }
    }

    /// `hsaKmtHandleImport`: imports a dma-buf descriptor on a device's
    /// render node and returns a buffer token, its size and (for IPC) its
    /// metadata. 20; NULL `ImportDesc`/`ImportResult`, a NULL or unknown
    /// device → 4; a type other than DMA_BUF → 11 (fabric handles need a
    /// kernel request no released kernel has); the import failing → 1;
    /// with `Flags.IPCHandle` the metadata check (see
    /// `check_ipc_metadata`; the metadata query failing → 4). A NULL
    /// `Flags` means no flags (C reads through it).
    newest fn hsaKmtHandleImport(ImportDesc: *const HsaHandleImportDesc, ImportResult: *mut HsaHandleImportResult, Flags: *mut HsaHandleImportFlags) {
        // SAFETY: the C contract for the descriptor.
        let (desc, d) = unsafe { descriptor(ImportDesc, ImportResult.is_null(), |d| (d.device_handle, d.r#type)) }?;
        let flags = if Flags.is_null() {
            HsaHandleImportFlags(0)
        } else {
            // SAFETY: non-NULL IN argument.
            unsafe { read_in(Flags, st::INVALID_PARAMETER)? }
        };
        // SAFETY: the union holds the descriptor for DMA_BUF.
        let fd = unsafe { desc.handle.dmabuf_fd } as i32;
        if fd < 0 {
            return Err(st::ERROR);
        }
        // SAFETY: the caller's descriptor, only lent to the import.
        let dmabuf = unsafe { BorrowedFd::borrow_raw(fd) };
        let buf = GemBuffer::import_dmabuf(d.file.clone(), dmabuf).map_err(|_| st::ERROR)?;
        let size = buf.size();
        // A second import of the same buffer shares the first's token.
        let token = bo::insert(d.owner, d.minor, buf).ok_or(st::NO_MEMORY)?;
        // SAFETY: non-NULL OUT argument (packed: unaligned accesses).
        let mut res = unsafe { ImportResult.read_unaligned() };
        res.dmabuf_fd = fd;
        if flags.IPCHandle() != 0 {
            let b = bo::lookup(token).ok_or(st::INVALID_HANDLE)?;
            if let Err(e) = check_ipc_metadata(&b.buf, flags, desc.metadata, &mut res) {
                bo::release(token);
                // SAFETY: as above.
                unsafe { ImportResult.write_unaligned(res) };
                return Err(e);
            }
        }
        res.alloc_size = size;
        res.buf_handle = token.cast();
        // SAFETY: as above.
        unsafe { ImportResult.write_unaligned(res) };
        Ok(())
    }

    /// `hsaKmtHandleExport`: a dma-buf descriptor of a buffer token. 20;
    /// NULL `ExportDesc`/`ExportResult`, a NULL or unknown device, an
    /// unknown buffer → 4; a type other than DMA_BUF → 11; the export
    /// failing → 4 (as C's failed `amdgpu_bo_export`).
    newest fn hsaKmtHandleExport(ExportDesc: *const HsaHandleExportDesc, ExportResult: *mut HsaMemoryExportResult, Flags: *mut HsaHandleExportFlags) {
        let _ = Flags;
        // SAFETY: the C contract for the descriptor.
        let (desc, _) = unsafe { descriptor(ExportDesc, ExportResult.is_null(), |d| (d.device_handle, d.r#type)) }?;
        let b = buffer(desc.buf_handle)?;
        let fd = b.buf.export_dmabuf().map_err(|_| st::INVALID_HANDLE)?;
        let out = HsaMemoryExportResult {
            dmabuf_fd: fd.into_raw_fd(),
        };
        // SAFETY: non-NULL OUT argument (packed: write unaligned).
        unsafe { ExportResult.write_unaligned(out) };
        Ok(())
    }

    /// `hsaKmtMemoryVaMap`: maps `[offset, offset+size)` of a buffer at GPU
    /// address `addr` in the VM of the primary context's GPU node `NodeId`
    /// (`DRM_IOCTL_AMDGPU_GEM_VA`, access from `flags`). 20; NULL handle →
    /// 1; an unknown buffer → 4; a CPU or unknown node → 5; a buffer of
    /// another render node, or the request failing → 1.
    newest fn hsaKmtMemoryVaMap(Handle: HsaMemoryObjectHandle, offset: u64, size: u64, addr: u64, flags: HsaMemoryMapFlags, NodeId: u32) {
        let b = va_target(Handle, NodeId)?;
        let access = match flags {
            HsaMemoryMapFlags::HSA_MEMORY_ACCESS_RO => VaAccess::Read,
            HsaMemoryMapFlags::HSA_MEMORY_ACCESS_WO => VaAccess::Write,
            HsaMemoryMapFlags::HSA_MEMORY_ACCESS_RW => VaAccess::ReadWrite,
            _ => VaAccess::None,
        };
        b.va_map(offset, size, addr, access).map_err(|_| st::ERROR)
    }

    /// `hsaKmtMemoryVaUnmap`: undoes [`hsaKmtMemoryVaMap`]; the same
    /// checks.
    newest fn hsaKmtMemoryVaUnmap(Handle: HsaMemoryObjectHandle, offset: u64, size: u64, addr: u64, NodeId: u32) {
        let b = va_target(Handle, NodeId)?;
        b.va_unmap(offset, size, addr).map_err(|_| st::ERROR)
    }

    /// `hsaKmtMemoryCpuMap`: the CPU address of a whole buffer (mapped on
    /// first use, the same address afterwards, unmapped when its last
    /// reference is freed). 20; unknown buffer → 4; NULL `out_cpu_ptr` →
    /// 3; the mapping failing → 1.
    newest fn hsaKmtMemoryCpuMap(Handle: HsaMemoryObjectHandle, out_cpu_ptr: *mut *mut c_void) {
        ctx::check_open()?;
        let b = buffer(Handle)?;
        check_mut(out_cpu_ptr, st::INVALID_PARAMETER)?;
        let addr = b.buf.cpu_map().map_err(|_| st::ERROR)?;
        // SAFETY: checked above; an OUT argument.
        unsafe { write_out(out_cpu_ptr, addr as *mut c_void, st::INVALID_PARAMETER) }
    }

    /// `hsaKmtMemHandleFree`: clears the buffer's metadata, then drops one
    /// reference of the token (the last closes the GEM handle). 20;
    /// unknown buffer → 4; clearing the metadata failing → 1 (the
    /// reference is kept, as in C).
    newest fn hsaKmtMemHandleFree(Handle: HsaMemoryObjectHandle) {
        ctx::check_open()?;
        let b = buffer(Handle)?;
        b.buf.set_metadata(&[]).map_err(|_| st::ERROR)?;
        release(Handle)
    }

    /// `hsaKmtMemHandleFreePreserveMetadata`: drops one reference of the
    /// token, keeping the buffer's metadata (for IPC exporters). 20;
    /// unknown buffer → 4.
    newest fn hsaKmtMemHandleFreePreserveMetadata(Handle: HsaMemoryObjectHandle) {
        ctx::check_open()?;
        release(Handle)
    }

    /// `hsaKmtMemoryGetCpuAddr`: the render node's mmap offset of a buffer
    /// (`DRM_AMDGPU_GEM_MMAP`; C calls it the CPU address). 20; an unknown
    /// device → 1; an unknown buffer → 4; NULL `cpu_addr` → 3; a buffer of
    /// another render node, or the request failing → 1.
    newest fn hsaKmtMemoryGetCpuAddr(DeviceHandle: *mut c_void, MemoryHandle: HsaMemoryObjectHandle, cpu_addr: *mut u64) {
        ctx::check_open()?;
        let d = device(DeviceHandle, st::ERROR)?;
        let b = buffer(MemoryHandle)?;
        check_mut(cpu_addr, st::INVALID_PARAMETER)?;
        if b.owner != d.owner || b.minor != d.minor {
            return Err(st::ERROR);
        }
        let off = b.buf.mmap_offset().map_err(|_| st::ERROR)?;
        // SAFETY: checked above; an OUT argument.
        unsafe { write_out(cpu_addr, off, st::INVALID_PARAMETER) }
    }

    /// `hsaKmtSetSigbusDelay`: KFD's SIGBUS delay for poison events of
    /// this process, through the render node of the primary context's
    /// GPU node `NodeId` (`DRM_IOCTL_AMDGPU_PROC_OPTIONS`,
    /// `KFD_SIGBUS_DELAY`; 0 = at once, 0xFFFFFFFF = never). 20; a CPU or
    /// unknown node, or a kernel without the request (before 2025) → 11,
    /// as C.
    newest fn hsaKmtSetSigbusDelay(NodeId: u32, DelayMs: u32) {
        let c = ctx::primary()?;
        let (_, file) = node_render(&c, NodeId).ok_or(st::NOT_SUPPORTED)?;
        kfd_sys::drm::set_kfd_sigbus_delay(&file, DelayMs).map_err(|_| st::NOT_SUPPORTED)
    }

    /// `hsaKmtSetPersistingCacheSizeCtx`: the persisting L2 size of a GPU
    /// node. 20; a CPU or unknown node → 3; more than `u32::MAX` bytes →
    /// 3; then `NOT_SUPPORTED`: the render-node request it needs
    /// (`AMDGPU_VM_OP_GL2_PERSISTING_L2_CACHE`) is in no released kernel.
    ctx fn hsaKmtSetPersistingCacheSizeCtx(ctx: *mut HsaKFDContext, Node: u32, CacheSize: u64) {
        let c = ctx::resolve(ctx)?;
        node_render(&c, Node).ok_or(st::INVALID_PARAMETER)?;
        if CacheSize > u64::from(u32::MAX) {
            return Err(st::INVALID_PARAMETER);
        }
        Err(st::NOT_SUPPORTED)
    }
}

/// The checks of `hsaKmtMemoryVaMap/VaUnmap` (see there): the buffer,
/// which must live on the render node of the primary context's `node`.
fn va_target(handle: HsaMemoryObjectHandle, node: u32) -> KmtResult<Arc<GemBuffer>> {
    ctx::check_open()?;
    if handle.is_null() {
        return Err(st::ERROR);
    }
    let b = buffer(handle)?;
    let c = ctx::primary()?;
    let (minor, _) = node_render(&c, node).ok_or(st::INVALID_NODE_UNIT)?;
    if b.owner != Owner::Primary || b.minor != minor {
        return Err(st::ERROR);
    }
    Ok(b.buf)
}

/// Drops one reference of a buffer token (`INVALID_HANDLE` if unknown).
fn release(handle: HsaMemoryObjectHandle) -> KmtResult<()> {
    if bo::release(handle as *const c_void) {
        Ok(())
    } else {
        Err(st::INVALID_HANDLE)
    }
}

forward! {
    /// `hsaKmtSetPersistingCacheSize`.
    newest fn hsaKmtSetPersistingCacheSize(Node: u32, CacheSize: u64) => hsaKmtSetPersistingCacheSizeCtx;
}
