//! libdrm_amdgpu's buffer objects on our device handles: the seven
//! `amdgpu_bo_*` entry points ROCr 7.2.4 resolves from `libdtif.so`.
//!
//! ROCr uses them for IPC and dma-buf sharing: it imports a dma-buf
//! descriptor on a GPU's device handle (`amdgpu_bo_import`), tags or
//! checks the buffer's metadata (`_query_info`, `_set_metadata`), maps
//! system memory for the CPU and the GPU (`_cpu_map`, `_va_op`), exports
//! its GEM handle (`_export`) and lets it go (`_free`). Each is issued, as
//! libdrm does, as the render node's GEM ioctls (PRIME, `GEM_METADATA`,
//! `GEM_OP`, `GEM_VA`, `GEM_MMAP`, `GEM_CLOSE`) on the descriptor of the
//! device handle's render node, through the context's driver.
//!
//! A buffer object handle is a token of a process-global `HandleTable`
//! (`crate::state`), never a pointer: a non-canonical x86-64 address
//! (`0xB0B0` in the top 16 bits, a serial below), so it is never NULL,
//! can never be the address of anything, and a freed one is unknown
//! forever instead of naming a later buffer. The table is process-global
//! as libdrm's buffer objects are: one outlives the close of its
//! device's context (then `-ENODEV`, see below). As in
//! libdrm, importing the GEM handle a device already has a buffer object
//! for gives the same object with one more reference, and the last
//! `amdgpu_bo_free` unmaps its CPU mapping and closes the GEM handle.
//!
//! Where libdrm would dereference a bad handle or a NULL output pointer,
//! these return `-EINVAL`. A buffer object whose render node has closed
//! (its context was closed) fails with `-ENODEV`; freeing it still
//! succeeds. Flink names (`amdgpu_bo_handle_type_gem_flink_name`) give
//! `-EACCES` without a call: render nodes refuse `GEM_FLINK`/`GEM_OPEN`
//! (the DRM core's answer to a render client).

use std::ffi::{c_int, c_void};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use kfd_sys::drm::*;
use kfd_sys::mman::{MapFlags, Prot};
use kfd_sys::sync::lock;
use kfd_sys::{DeviceFile, Errno};

use super::drm_guard;
use crate::state::{HandleTable, Tag, Token};

/// `amdgpu_bo_handle_type_gem_flink_name`.
pub const HANDLE_TYPE_GEM_FLINK_NAME: u32 = 0;
/// `amdgpu_bo_handle_type_kms`: the GEM handle itself.
pub const HANDLE_TYPE_KMS: u32 = 1;
/// `amdgpu_bo_handle_type_dma_buf_fd`.
pub const HANDLE_TYPE_DMA_BUF_FD: u32 = 2;
/// `amdgpu_bo_handle_type_kms_noimport`.
pub const HANDLE_TYPE_KMS_NOIMPORT: u32 = 3;

/// `struct amdgpu_bo_import_result` of libdrm's `amdgpu.h`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct amdgpu_bo_import_result {
    /// The buffer object.
    pub buf_handle: *mut c_void,
    /// Its size in bytes.
    pub alloc_size: u64,
}

/// `struct amdgpu_bo_metadata` of libdrm's `amdgpu.h`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct amdgpu_bo_metadata {
    /// Surface flags.
    pub flags: u64,
    /// `AMDGPU_TILING_*` word.
    pub tiling_info: u64,
    /// Bytes of `umd_metadata` in use.
    pub size_metadata: u32,
    /// Opaque UMD data.
    pub umd_metadata: [u32; 64],
}

/// `struct amdgpu_bo_info` of libdrm's `amdgpu.h`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct amdgpu_bo_info {
    /// Size in bytes.
    pub alloc_size: u64,
    /// Physical alignment.
    pub phys_alignment: u64,
    /// `AMDGPU_GEM_DOMAIN_*` it prefers.
    pub preferred_heap: u32,
    /// `AMDGPU_GEM_CREATE_*` flags.
    pub alloc_flags: u64,
    /// Its metadata.
    pub metadata: amdgpu_bo_metadata,
}

/// One buffer object.
#[derive(Debug)]
struct Bo {
    /// The device handle it was imported on.
    dev: usize,
    /// That device's render node when it was imported.
    file: Weak<DeviceFile>,
    gem: u32,
    alloc_size: u64,
    refs: u32,
    /// CPU mapping: address and count of `amdgpu_bo_cpu_map` calls.
    cpu: Option<(usize, u32)>,
}

static BOS: Mutex<HandleTable<Bo>> = Mutex::new(HandleTable::tagged(Tag::DTIF_BO));

fn registry() -> MutexGuard<'static, HandleTable<Bo>> {
    lock(&BOS)
}

fn errno(e: Errno) -> c_int {
    e.0
}

/// The render node of a device handle, or `EINVAL` (not a handle of
/// ours, or its context is gone).
fn render_of(dev: *mut c_void) -> Result<Arc<DeviceFile>, c_int> {
    crate::render::device_render_node(dev).map_err(|_| libc::EINVAL)
}

/// A buffer object's render node; `EINVAL` for an unknown token, `ENODEV`
/// once that render node has closed.
fn file_of(bo: *mut c_void) -> Result<(Arc<DeviceFile>, u32, u64), c_int> {
    let r = registry();
    let b = r.get(Token::from_ptr(bo)).map_err(|_| libc::EINVAL)?;
    let file = b.file.upgrade().ok_or(libc::ENODEV)?;
    Ok((file, b.gem, b.alloc_size))
}

fn close_gem(file: &DeviceFile, gem: u32) {
    let mut c = drm_gem_close {
        handle: gem,
        pad: 0,
    };
    // Nothing to report: the handle goes either way.
    let _ = file.ioctl_plain(DRM_IOCTL_GEM_CLOSE, &mut c);
}

/// The size of the dma-buf `fd` (`lseek` to its end, then back).
fn dmabuf_size(fd: c_int) -> Result<u64, c_int> {
    // SAFETY: the caller's descriptor, borrowed for this call only; a
    // number that is not open makes lseek fail with EBADF.
    let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
    kfd_sys::process::file_size(fd).map_err(errno)
}

/// `amdgpu_bo_import`'s work for a dma-buf: the buffer object of GEM
/// handle `gem` of `dev` (one more reference), or a new one.
fn import_dmabuf(dev: *mut c_void, fd: c_int) -> Result<(Token, u64), c_int> {
    let file = render_of(dev)?;
    let mut r = registry();
    let mut ph = drm_prime_handle {
        handle: 0,
        flags: 0,
        fd,
    };
    file.ioctl_plain(DRM_IOCTL_PRIME_FD_TO_HANDLE, &mut ph)
        .map_err(errno)?;
    let gem = ph.handle;
    let same = |b: &Bo| {
        b.dev == dev as usize && b.gem == gem && std::ptr::eq(b.file.as_ptr(), Arc::as_ptr(&file))
    };
    if let Some((token, b)) = r.find_mut(same) {
        b.refs = b.refs.checked_add(1).ok_or(libc::EOVERFLOW)?;
        return Ok((token, b.alloc_size));
    }
    let size = match dmabuf_size(fd) {
        Ok(s) => s,
        Err(e) => {
            close_gem(&file, gem);
            return Err(e);
        }
    };
    let bo = Bo {
        dev: dev as usize,
        file: Arc::downgrade(&file),
        gem,
        alloc_size: size,
        refs: 1,
        cpu: None,
    };
    match r.insert(bo) {
        Ok(token) => Ok((token, size)),
        Err(_) => {
            close_gem(&file, gem);
            Err(libc::ENOMEM)
        }
    }
}

/// `amdgpu_bo_import(dev, type, shared_handle, &result)`: a dma-buf
/// descriptor becomes a buffer object of `dev` (see the module docs);
/// KMS handles → `-EPERM` (libdrm refuses to import them), flink names →
/// `-EACCES`, other types → `-EINVAL`.
///
/// # Safety
///
/// `output` must be NULL (→ `-EINVAL`) or valid for writing one
/// `amdgpu_bo_import_result`; `dev` is never dereferenced.
#[no_mangle]
pub unsafe extern "C" fn amdgpu_bo_import(
    dev: *mut c_void,
    kind: u32,
    shared_handle: u32,
    output: *mut amdgpu_bo_import_result,
) -> c_int {
    drm_guard(|| {
        if output.is_null() {
            return Err(libc::EINVAL);
        }
        let (token, size) = match kind {
            HANDLE_TYPE_DMA_BUF_FD => import_dmabuf(dev, shared_handle as c_int)?,
            HANDLE_TYPE_KMS | HANDLE_TYPE_KMS_NOIMPORT => return Err(libc::EPERM),
            HANDLE_TYPE_GEM_FLINK_NAME => return Err(libc::EACCES),
            _ => return Err(libc::EINVAL),
        };
        let res = amdgpu_bo_import_result {
            buf_handle: token.as_ptr(),
            alloc_size: size,
        };
        // SAFETY: checked non-NULL; the caller's contract makes it valid
        // for one write (unaligned: any address is accepted).
        unsafe { output.write_unaligned(res) };
        Ok(())
    })
}

/// `amdgpu_bo_export(bo, type, &shared_handle)`: the GEM handle (KMS
/// types) or a new dma-buf descriptor (`DRM_CLOEXEC | DRM_RDWR`); flink
/// names → `-EACCES`, other types → `-EINVAL`.
///
/// # Safety
///
/// `shared_handle` must be NULL (→ `-EINVAL`) or valid for writing a
/// `u32`; `bo` is never dereferenced.
#[no_mangle]
pub unsafe extern "C" fn amdgpu_bo_export(
    bo: *mut c_void,
    kind: u32,
    shared_handle: *mut u32,
) -> c_int {
    drm_guard(|| {
        if shared_handle.is_null() {
            return Err(libc::EINVAL);
        }
        let (file, gem, _) = file_of(bo)?;
        let shared = match kind {
            HANDLE_TYPE_KMS | HANDLE_TYPE_KMS_NOIMPORT => gem,
            HANDLE_TYPE_DMA_BUF_FD => {
                let fd = kfd_sys::drm::prime_handle_to_fd(&file, gem, DRM_CLOEXEC | DRM_RDWR)
                    .map_err(errno)?;
                // The caller owns the descriptor from here (libdrm's contract).
                std::os::fd::IntoRawFd::into_raw_fd(fd) as u32
            }
            HANDLE_TYPE_GEM_FLINK_NAME => return Err(libc::EACCES),
            _ => return Err(libc::EINVAL),
        };
        // SAFETY: checked non-NULL; the caller's contract.
        unsafe { shared_handle.write_unaligned(shared) };
        Ok(())
    })
}

/// `amdgpu_bo_free(bo)`: one reference less; the last unmaps the CPU
/// mapping and closes the GEM handle (if the render node is still open).
///
/// # Safety
///
/// None: `bo` is only looked up, never dereferenced.
#[no_mangle]
pub unsafe extern "C" fn amdgpu_bo_free(bo: *mut c_void) -> c_int {
    drm_guard(|| {
        let gone = {
            let token = Token::from_ptr(bo);
            let mut r = registry();
            let b = r.get_mut(token).map_err(|_| libc::EINVAL)?;
            b.refs -= 1;
            if b.refs > 0 {
                return Ok(());
            }
            r.remove(token)
        };
        if let Ok(b) = gone {
            if let Some((addr, _)) = b.cpu {
                // SAFETY: the mapping amdgpu_bo_cpu_map made, of
                // `alloc_size` bytes; its users were told it lives until
                // the last free.
                let _ = unsafe { kfd_sys::mman::munmap(addr, b.alloc_size as usize) };
            }
            if let Some(file) = b.file.upgrade() {
                close_gem(&file, b.gem);
            }
        }
        Ok(())
    })
}

/// `amdgpu_bo_cpu_map(bo, &cpu)`: the buffer mapped for the CPU (shared,
/// read-write) at the render node's `GEM_MMAP` offset, once; later calls
/// give the same address and count one more user.
///
/// # Safety
///
/// `cpu` must be NULL (→ `-EINVAL`) or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn amdgpu_bo_cpu_map(bo: *mut c_void, cpu: *mut *mut c_void) -> c_int {
    drm_guard(|| {
        if cpu.is_null() {
            return Err(libc::EINVAL);
        }
        let (file, gem, size) = file_of(bo)?;
        let mut r = registry();
        let b = r.get_mut(Token::from_ptr(bo)).map_err(|_| libc::EINVAL)?;
        let addr = match b.cpu {
            Some((addr, n)) => {
                b.cpu = Some((addr, n.checked_add(1).ok_or(libc::EOVERFLOW)?));
                addr
            }
            None => {
                let offset = kfd_sys::drm::gem_mmap_offset(&file, gem).map_err(errno)?;
                let len = usize::try_from(size).map_err(|_| libc::ENOMEM)?;
                // SAFETY: no MAP_FIXED: the kernel picks a free range.
                let addr = unsafe {
                    kfd_sys::mman::mmap(
                        0,
                        len,
                        Prot::READ | Prot::WRITE,
                        MapFlags::SHARED,
                        Some(std::os::fd::AsFd::as_fd(&*file)),
                        offset,
                    )
                }
                .map_err(errno)?;
                b.cpu = Some((addr, 1));
                addr
            }
        };
        // SAFETY: checked non-NULL; the caller's contract.
        unsafe { cpu.write_unaligned(addr as *mut c_void) };
        Ok(())
    })
}

/// `amdgpu_bo_va_op(bo, offset, size, addr, flags, ops)`: `GEM_VA` of
/// the buffer in its render node's VM, the size rounded up to pages and
/// the flags always readable, writable and executable (libdrm ignores the
/// caller's); an op other than MAP, UNMAP, REPLACE, CLEAR → `-EINVAL`.
///
/// # Safety
///
/// None: `bo` is only looked up; the VM is the kernel's.
#[no_mangle]
pub unsafe extern "C" fn amdgpu_bo_va_op(
    bo: *mut c_void,
    offset: u64,
    size: u64,
    addr: u64,
    flags: u64,
    ops: u32,
) -> c_int {
    let _ = flags;
    drm_guard(|| {
        let (file, gem, _) = file_of(bo)?;
        if !matches!(
            ops,
            AMDGPU_VA_OP_MAP | AMDGPU_VA_OP_UNMAP | AMDGPU_VA_OP_REPLACE | AMDGPU_VA_OP_CLEAR
        ) {
            return Err(libc::EINVAL);
        }
        let page = kfd_sys::mman::page_size() as u64;
        let size = size.checked_add(page - 1).ok_or(libc::EINVAL)? & !(page - 1);
        let mut va = drm_amdgpu_gem_va {
            handle: gem,
            _pad: 0,
            operation: ops,
            flags: AMDGPU_VM_PAGE_READABLE | AMDGPU_VM_PAGE_WRITEABLE | AMDGPU_VM_PAGE_EXECUTABLE,
            va_address: addr,
            offset_in_bo: offset,
            map_size: size,
        };
        file.ioctl_plain(DRM_IOCTL_AMDGPU_GEM_VA, &mut va)
            .map_err(errno)?;
        Ok(())
    })
}

/// `amdgpu_bo_query_info(bo, &info)`: the buffer's metadata
/// (`GEM_METADATA` GET) and creation parameters (`GEM_OP`
/// `GET_GEM_CREATE_INFO`); more metadata than `umd_metadata` holds →
/// `-EINVAL`.
///
/// # Safety
///
/// `info` must be NULL (→ `-EINVAL`) or valid for writing one
/// `amdgpu_bo_info`.
#[no_mangle]
pub unsafe extern "C" fn amdgpu_bo_query_info(bo: *mut c_void, info: *mut amdgpu_bo_info) -> c_int {
    drm_guard(|| {
        if info.is_null() {
            return Err(libc::EINVAL);
        }
        let (file, gem, _) = file_of(bo)?;
        let mut md = drm_amdgpu_gem_metadata {
            handle: gem,
            op: AMDGPU_GEM_METADATA_OP_GET_METADATA,
            ..Default::default()
        };
        file.ioctl_plain(DRM_IOCTL_AMDGPU_GEM_METADATA, &mut md)
            .map_err(errno)?;
        let n = md.data.data_size_bytes as usize;
        if n > std::mem::size_of_val(&md.data.data) {
            return Err(libc::EINVAL);
        }
        let mut created = drm_amdgpu_gem_create_in::default();
        let mut op = drm_amdgpu_gem_op {
            handle: gem,
            op: AMDGPU_GEM_OP_GET_GEM_CREATE_INFO,
            value: std::ptr::addr_of_mut!(created) as u64,
        };
        // SAFETY: `value` is the address of `created`, a live, writable
        // drm_amdgpu_gem_create_in the kernel fills; nothing else of ours
        // is reached.
        unsafe { file.ioctl(DRM_IOCTL_AMDGPU_GEM_OP, &mut op) }.map_err(errno)?;
        let umd = first_bytes(&md.data.data, n);
        let out = amdgpu_bo_info {
            alloc_size: created.bo_size,
            phys_alignment: created.alignment,
            preferred_heap: created.domains as u32,
            alloc_flags: created.domain_flags,
            metadata: amdgpu_bo_metadata {
                flags: md.data.flags,
                tiling_info: md.data.tiling_info,
                size_metadata: n as u32,
                umd_metadata: umd,
            },
        };
        // SAFETY: checked non-NULL; the caller's contract.
        unsafe { info.write_unaligned(out) };
        Ok(())
    })
}

/// The first `n` bytes of `words` (at most all of them), the rest zero:
/// what libdrm copies of the kernel's metadata.
fn first_bytes(words: &[u32; 64], n: usize) -> [u32; 64] {
    let mut out = [0u32; 64];
    for i in 0..n.min(256) {
        let byte = (words[i / 4] >> (8 * (i % 4))) & 0xff;
        out[i / 4] |= byte << (8 * (i % 4));
    }
    out
}

/// `amdgpu_bo_set_metadata(bo, &metadata)`: `GEM_METADATA` SET of the
/// flags, tiling word and `size_metadata` bytes (more than
/// `umd_metadata` holds → `-EINVAL`).
///
/// # Safety
///
/// `info` must be NULL (→ `-EINVAL`) or valid for reading one
/// `amdgpu_bo_metadata`.
#[no_mangle]
pub unsafe extern "C" fn amdgpu_bo_set_metadata(
    bo: *mut c_void,
    info: *mut amdgpu_bo_metadata,
) -> c_int {
    drm_guard(|| {
        if info.is_null() {
            return Err(libc::EINVAL);
        }
        // SAFETY: checked non-NULL; the caller's contract (unaligned).
        let m = unsafe { info.read_unaligned() };
        if m.size_metadata as usize > std::mem::size_of_val(&m.umd_metadata) {
            return Err(libc::EINVAL);
        }
        let (file, gem, _) = file_of(bo)?;
        let mut md = drm_amdgpu_gem_metadata {
            handle: gem,
            op: AMDGPU_GEM_METADATA_OP_SET_METADATA,
            ..Default::default()
        };
        md.data.flags = m.flags;
        md.data.tiling_info = m.tiling_info;
        md.data.data_size_bytes = m.size_metadata;
        md.data.data = m.umd_metadata;
        file.ioctl_plain(DRM_IOCTL_AMDGPU_GEM_METADATA, &mut md)
            .map_err(errno)?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_bytes_past_the_size_are_not_copied() {
        let mut words = [0u32; 64];
        words[0] = 0x4433_2211;
        words[1] = 0x8877_6655;
        let got = first_bytes(&words, 6);
        assert_eq!((got[0], got[1], got[2]), (0x4433_2211, 0x6655, 0));
        assert_eq!(first_bytes(&words, 0), [0; 64]);
        assert_eq!(first_bytes(&words, 400)[1], 0x8877_6655);
    }
}
