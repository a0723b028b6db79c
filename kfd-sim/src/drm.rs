//! The DRM ioctls of a simulated render node (`/dev/dri/renderD<minor>`).
//!
//! What libdrm/libdrm_amdgpu issue when the thunk initialises a device and
//! looks up its marketing name (`amdgpu_device_initialize`,
//! `amdgpu_get_marketing_name`), answered from the [`Topology`]:
//!
//! | request | answer |
//! |---|---|
//! | `DRM_IOCTL_VERSION` | amdgpu 3.57.0, "amdgpu", "20150101", "AMD GPU"; the two-call protocol (lengths first, then copies of at most the given lengths) |
//! | `DRM_IOCTL_GET_CLIENT` | `auth = 1`, the caller's pid/uid (the real kernel refuses it on render nodes with `EACCES`; libdrm only asks when `fstat` does not say "render node", and then needs it to succeed) |
//! | `AMDGPU_INFO` `ACCEL_WORKING`, `DEV_INFO`, `READ_MMR_REG` (GB_ADDR_CONFIG, GRBM status), `VRAM_GTT`, `MEMORY`, `FW_VERSION`, `HW_IP_COUNT`, `HW_IP_INFO`, `TIMESTAMP`, `*_USAGE`, `VRAM_LOST_COUNTER`, `NUM_EVICTIONS`, `NUM_BYTES_MOVED` | filled from the node properties and its [`GpuIdentity`]; at most `return_size` bytes are written |
//! | `GEM_CLOSE`, `PRIME_FD_TO_HANDLE`, `PRIME_HANDLE_TO_FD` | per-file handle table; objects come from a [`GemObjects`] provider (the kernel model's dma-bufs); closing a handle drops its GPU VA mappings |
//! | `AMDGPU_GEM_METADATA`, `AMDGPU_GEM_OP`, `AMDGPU_GEM_VA`, `AMDGPU_GEM_MMAP` | on those handles, see [`gem`] |
//! | `AMDGPU_PROC_OPTIONS` | `KFD_SIGBUS_DELAY` is recorded ([`DrmFile::sigbus_delay`]); other ops → `EINVAL` |
//! | anything else | `EINVAL` (what the DRM core answers for unknown numbers; never `EAGAIN`/`EINTR`, which libdrm retries forever) |
//!
//! User memory is reached through `process_vm_readv/writev`, so bad
//! pointers give `EFAULT` instead of a crash.

use std::collections::{BTreeMap, HashMap};
use std::ffi::c_void;
use std::mem::{offset_of, size_of};
use std::sync::Mutex;

use kfd_sys::drm::*;
use kfd_sys::ioctl::{ioc_nr, ioc_type};
use kfd_sys::Errno;

use crate::kernel::usermem;
use crate::topology::{GpuIdentity, Node, Topology};

pub mod gem;
pub use gem::{GemMetadata, VaMapping, GEM_METADATA_MAX, GEM_MMAP_BASE, GEM_MMAP_STRIDE};

/// DRM driver version amdgpu reports (`KMS_DRIVER_MAJOR/MINOR/PATCHLEVEL`
/// of a current kernel). libdrm_amdgpu refuses majors other than 3.
pub const DRIVER_VERSION: (i32, i32, i32) = (3, 57, 0);
/// `DRM_IOCTL_VERSION` name.
pub const DRIVER_NAME: &str = "amdgpu";
/// `DRM_IOCTL_VERSION` date.
pub const DRIVER_DATE: &str = "20150101";
/// `DRM_IOCTL_VERSION` description.
pub const DRIVER_DESC: &str = "AMD GPU";

/// `GB_ADDR_CONFIG` register (dword offset) libdrm reads at init.
pub const MM_GB_ADDR_CONFIG: u32 = 0x263e;

/// Registers READ_MMR_REG answers (soc15 allowed list subset): status
/// registers read as 0 (idle), GB_ADDR_CONFIG from the identity.
const READABLE_REGS: &[u32] = &[
    MM_GB_ADDR_CONFIG,
    0x2004, // GRBM_STATUS
    0x2002, // GRBM_STATUS2
    0x2005, // GRBM_STATUS_SE0
    0x2006, // GRBM_STATUS_SE1
    0x2007, // GRBM_STATUS_SE2
    0x2008, // GRBM_STATUS_SE3
    0x0e50, // SRBM_STATUS
    0x0e4c, // SRBM_STATUS2
    0x21a0, // CP_STAT
];

/// GEM objects behind handles: the kernel model provides them (its
/// dma-bufs); [`NoGem`] refuses everything.
pub trait GemObjects {
    /// The object a dma-buf descriptor exports (`PRIME_FD_TO_HANDLE`).
    fn import_dmabuf(&self, fd: i32) -> Result<u64, Errno>;
    /// A new dma-buf descriptor for `object` (`PRIME_HANDLE_TO_FD`,
    /// `flags` = `DRM_CLOEXEC | DRM_RDWR` subset).
    fn export_dmabuf(&self, object: u64, flags: u32) -> Result<i32, Errno>;
    /// The last handle of `object` in a file was closed.
    fn release(&self, _object: u64) {}
    /// The creation parameters of `object` (`AMDGPU_GEM_OP_GET_GEM_CREATE_INFO`:
    /// page-aligned size, alignment, preferred domains, creation flags).
    fn create_info(&self, _object: u64) -> Result<drm_amdgpu_gem_create_in, Errno> {
        Err(Errno::ENOENT)
    }
    /// New preferred domains of `object` (`AMDGPU_GEM_OP_SET_PLACEMENT`).
    fn set_placement(&self, _object: u64, _domains: u64) -> Result<(), Errno> {
        Err(Errno::ENOENT)
    }
    /// The metadata of `object` (`AMDGPU_GEM_METADATA` GET).
    fn metadata(&self, _object: u64) -> Result<GemMetadata, Errno> {
        Err(Errno::ENOENT)
    }
    /// Replaces the metadata of `object` (`AMDGPU_GEM_METADATA` SET).
    fn set_metadata(&self, _object: u64, _metadata: GemMetadata) -> Result<(), Errno> {
        Err(Errno::ENOENT)
    }
    /// VRAM bytes in use on this device.
    fn vram_used(&self) -> u64 {
        0
    }
    /// GTT bytes in use on this device.
    fn gtt_used(&self) -> u64 {
        0
    }
}

/// A [`GemObjects`] without objects: imports fail with `EBADF` (not a
/// dma-buf), exports with `ENOENT`.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoGem;

impl GemObjects for NoGem {
    fn import_dmabuf(&self, _fd: i32) -> Result<u64, Errno> {
        Err(Errno::EBADF)
    }
    fn export_dmabuf(&self, _object: u64, _flags: u32) -> Result<i32, Errno> {
        Err(Errno::ENOENT)
    }
}

#[derive(Debug, Default)]
struct Handles {
    next: u32,
    by_handle: BTreeMap<u32, u64>,
    by_object: HashMap<u64, u32>,
    /// `AMDGPU_PROC_OPTIONS_OP_KFD_SIGBUS_DELAY`, once set.
    sigbus_delay: Option<u32>,
}

/// Per-open-file DRM state of a render node: its device, GEM handles and
/// GPU VA mappings.
#[derive(Debug)]
pub struct DrmFile {
    minor: u32,
    node: usize,
    handles: Mutex<Handles>,
    va: Mutex<gem::VaMap>,
}

use kfd_sys::sync::lock;

impl DrmFile {
    /// State for a new open of render node `minor`; `None` if the topology
    /// has no GPU with that minor.
    pub fn new(topology: &Topology, minor: u32) -> Option<DrmFile> {
        let (node, _) = topology.node_by_render_minor(minor)?;
        Some(DrmFile {
            minor,
            node,
            handles: Mutex::new(Handles {
                next: 1,
                ..Handles::default()
            }),
            va: Mutex::new(gem::VaMap::new()),
        })
    }

    /// The render minor.
    pub fn minor(&self) -> u32 {
        self.minor
    }

    /// Live GEM handles (for leak checks).
    pub fn handle_count(&self) -> usize {
        lock(&self.handles).by_handle.len()
    }

    /// Gives `object` a handle in this file (the same one if it has one),
    /// as the DRM core does for imports and creations.
    pub fn handle_for(&self, object: u64) -> u32 {
        let mut h = lock(&self.handles);
        if let Some(handle) = h.by_object.get(&object) {
            return *handle;
        }
        let handle = h.next;
        h.next = h.next.wrapping_add(1).max(1);
        h.by_handle.insert(handle, object);
        h.by_object.insert(object, handle);
        handle
    }

    /// Forgets every handle and GPU VA mapping (the file is released).
    pub fn release_all(&self) {
        let mut h = lock(&self.handles);
        h.by_handle.clear();
        h.by_object.clear();
        lock(&self.va).clear();
    }

    /// The object behind a handle.
    pub fn object(&self, handle: u32) -> Option<u64> {
        lock(&self.handles).by_handle.get(&handle).copied()
    }

    /// The KFD SIGBUS delay set through this file, if any.
    pub fn sigbus_delay(&self) -> Option<u32> {
        lock(&self.handles).sigbus_delay
    }

    /// Handles `ioctl(fd, request, arg)` on this render file.
    ///
    /// # Safety
    ///
    /// `arg` is the caller's ioctl argument. It is only reached through
    /// `process_vm_readv/writev` (bad addresses give `EFAULT`), but writes to
    /// mapped memory the caller does not own cannot be detected, as with a
    /// real ioctl.
    pub unsafe fn ioctl(
        &self,
        topology: &Topology,
        gem: &dyn GemObjects,
        request: u64,
        arg: *mut c_void,
    ) -> Result<i32, Errno> {
        let req = request as u32;
        if ioc_type(req) != DRM_IOCTL_BASE {
            return Err(Errno::ENOTTY);
        }
        let node = topology.nodes.get(self.node).ok_or(Errno::ENODEV)?;
        let id = node.gpu.as_ref().ok_or(Errno::ENODEV)?;
        let arg = arg as u64;
        let nr = ioc_nr(req);
        let ctx = Ctx {
            topology,
            node,
            id,
            gem,
            arg,
        };
        match nr {
            n if n == ioc_nr(DRM_IOCTL_VERSION.request()) => version(&ctx),
            n if n == ioc_nr(DRM_IOCTL_GET_CLIENT.request()) => get_client(&ctx),
            n if n == ioc_nr(DRM_IOCTL_GEM_CLOSE.request()) => self.gem_close(&ctx),
            n if n == ioc_nr(DRM_IOCTL_PRIME_HANDLE_TO_FD.request()) => self.handle_to_fd(&ctx),
            n if n == ioc_nr(DRM_IOCTL_PRIME_FD_TO_HANDLE.request()) => self.fd_to_handle(&ctx),
            n if n == DRM_COMMAND_BASE + DRM_AMDGPU_INFO => info(&ctx),
            n if n == DRM_COMMAND_BASE + DRM_AMDGPU_GEM_METADATA => self.gem_metadata(&ctx),
            n if n == DRM_COMMAND_BASE + DRM_AMDGPU_GEM_OP => self.gem_op(&ctx),
            n if n == DRM_COMMAND_BASE + DRM_AMDGPU_GEM_VA => self.gem_va(&ctx),
            n if n == DRM_COMMAND_BASE + DRM_AMDGPU_GEM_MMAP => self.gem_mmap(&ctx),
            n if n == DRM_COMMAND_BASE + DRM_AMDGPU_PROC_OPTIONS => self.proc_options(&ctx),
            _ => Err(Errno::EINVAL),
        }
    }

    fn gem_close(&self, c: &Ctx<'_>) -> Result<i32, Errno> {
        let handle = read_u32(c.arg + offset_of!(drm_gem_close, handle) as u64)?;
        let object = {
            let mut h = lock(&self.handles);
            let object = h.by_handle.remove(&handle).ok_or(Errno::EINVAL)?;
            h.by_object.remove(&object);
            object
        };
        lock(&self.va).retain(|_, m| m.handle != handle);
        c.gem.release(object);
        Ok(0)
    }

    fn handle_to_fd(&self, c: &Ctx<'_>) -> Result<i32, Errno> {
        let handle = read_u32(c.arg + offset_of!(drm_prime_handle, handle) as u64)?;
        let flags = read_u32(c.arg + offset_of!(drm_prime_handle, flags) as u64)?;
        if flags & !(DRM_CLOEXEC | DRM_RDWR) != 0 {
            return Err(Errno::EINVAL);
        }
        let object = self.object(handle).ok_or(Errno::ENOENT)?;
        let fd = c.gem.export_dmabuf(object, flags)?;
        usermem::write(
            c.arg + offset_of!(drm_prime_handle, fd) as u64,
            &fd.to_ne_bytes(),
        )?;
        Ok(0)
    }

    fn fd_to_handle(&self, c: &Ctx<'_>) -> Result<i32, Errno> {
        let fd = read_u32(c.arg + offset_of!(drm_prime_handle, fd) as u64)? as i32;
        let object = c.gem.import_dmabuf(fd)?;
        let handle = self.handle_for(object);
        usermem::write(
            c.arg + offset_of!(drm_prime_handle, handle) as u64,
            &handle.to_ne_bytes(),
        )?;
        Ok(0)
    }
}

impl DrmFile {
    fn proc_options(&self, c: &Ctx<'_>) -> Result<i32, Errno> {
        let op = read_u32(c.arg)?;
        let value = read_u32(c.arg + 4)?;
        if op != AMDGPU_PROC_OPTIONS_OP_KFD_SIGBUS_DELAY {
            return Err(Errno::EINVAL);
        }
        lock(&self.handles).sigbus_delay = Some(value);
        Ok(0)
    }
}

struct Ctx<'a> {
    topology: &'a Topology,
    node: &'a Node,
    id: &'a GpuIdentity,
    gem: &'a dyn GemObjects,
    arg: u64,
}

fn read_u32(addr: u64) -> Result<u32, Errno> {
    let mut b = [0u8; 4];
    usermem::read(addr, &mut b)?;
    Ok(u32::from_ne_bytes(b))
}

fn read_u64(addr: u64) -> Result<u64, Errno> {
    let mut b = [0u8; 8];
    usermem::read(addr, &mut b)?;
    Ok(u64::from_ne_bytes(b))
}

fn write_u64(addr: u64, v: u64) -> Result<(), Errno> {
    usermem::write(addr, &v.to_ne_bytes())
}

/// `drm_copy_field`: copy at most the user's length, report the real one.
fn copy_field(c: &Ctx<'_>, len_off: usize, ptr_off: usize, value: &str) -> Result<(), Errno> {
    let cap = read_u64(c.arg + len_off as u64)? as usize;
    let ptr = read_u64(c.arg + ptr_off as u64)?;
    let n = value.len().min(cap);
    write_u64(c.arg + len_off as u64, value.len() as u64)?;
    if n > 0 && ptr != 0 {
        usermem::write(ptr, &value.as_bytes()[..n])?;
    }
    Ok(())
}

fn version(c: &Ctx<'_>) -> Result<i32, Errno> {
    let (major, minor, patch) = DRIVER_VERSION;
    usermem::write(
        c.arg + offset_of!(drm_version, version_major) as u64,
        &major.to_ne_bytes(),
    )?;
    usermem::write(
        c.arg + offset_of!(drm_version, version_minor) as u64,
        &minor.to_ne_bytes(),
    )?;
    usermem::write(
        c.arg + offset_of!(drm_version, version_patchlevel) as u64,
        &patch.to_ne_bytes(),
    )?;
    copy_field(
        c,
        offset_of!(drm_version, name_len),
        offset_of!(drm_version, name),
        DRIVER_NAME,
    )?;
    copy_field(
        c,
        offset_of!(drm_version, date_len),
        offset_of!(drm_version, date),
        DRIVER_DATE,
    )?;
    copy_field(
        c,
        offset_of!(drm_version, desc_len),
        offset_of!(drm_version, desc),
        DRIVER_DESC,
    )?;
    Ok(0)
}

fn get_client(c: &Ctx<'_>) -> Result<i32, Errno> {
    let idx = read_u32(c.arg + offset_of!(drm_client, idx) as u64)?;
    if idx != 0 {
        return Err(Errno::EINVAL);
    }
    // SAFETY: getpid/getuid have no preconditions.
    let (pid, uid) = unsafe { (libc::getpid() as u64, libc::getuid() as u64) };
    usermem::write(
        c.arg + offset_of!(drm_client, auth) as u64,
        &1i32.to_ne_bytes(),
    )?;
    write_u64(c.arg + offset_of!(drm_client, pid) as u64, pid)?;
    write_u64(c.arg + offset_of!(drm_client, uid) as u64, uid)?;
    write_u64(c.arg + offset_of!(drm_client, magic) as u64, 0)?;
    write_u64(c.arg + offset_of!(drm_client, iocs) as u64, 0)?;
    Ok(0)
}

/// A little-endian byte image of a C struct, written field by field (no
/// padding is ever read from a Rust value).
struct Image(Vec<u8>);

impl Image {
    fn new(size: usize) -> Image {
        Image(vec![0; size])
    }
    fn u32(&mut self, off: usize, v: u32) {
        self.0[off..off + 4].copy_from_slice(&v.to_ne_bytes());
    }
    fn u64(&mut self, off: usize, v: u64) {
        self.0[off..off + 8].copy_from_slice(&v.to_ne_bytes());
    }
}

fn info(c: &Ctx<'_>) -> Result<i32, Errno> {
    let ret_ptr = read_u64(c.arg + offset_of!(drm_amdgpu_info, return_pointer) as u64)?;
    let ret_size = read_u32(c.arg + offset_of!(drm_amdgpu_info, return_size) as u64)? as usize;
    let query = read_u32(c.arg + offset_of!(drm_amdgpu_info, query) as u64)?;
    let u = c.arg + offset_of!(drm_amdgpu_info, u) as u64;
    if ret_ptr == 0 || ret_size == 0 {
        return Err(Errno::EINVAL);
    }
    let p = &c.node.properties;
    let answer: Vec<u8> = match query {
        AMDGPU_INFO_ACCEL_WORKING => 1u32.to_ne_bytes().to_vec(),
        AMDGPU_INFO_DEV_INFO => dev_info(c).0,
        AMDGPU_INFO_READ_MMR_REG => {
            let first =
                read_u32(u + offset_of!(drm_amdgpu_info_read_mmr_reg, dword_offset) as u64)?;
            let count = read_u32(u + offset_of!(drm_amdgpu_info_read_mmr_reg, count) as u64)?;
            if count == 0 || count > 128 {
                return Err(Errno::EINVAL);
            }
            let mut out = Vec::with_capacity(count as usize * 4);
            for reg in first..first + count {
                if !READABLE_REGS.contains(&reg) {
                    return Err(Errno::EINVAL);
                }
                let v = if reg == MM_GB_ADDR_CONFIG {
                    c.id.gb_addr_config
                } else {
                    0
                };
                out.extend_from_slice(&v.to_ne_bytes());
            }
            out
        }
        AMDGPU_INFO_VRAM_GTT => {
            let (vram, visible, gtt) = sizes(c);
            let mut img = Image::new(size_of::<drm_amdgpu_info_vram_gtt>());
            img.u64(offset_of!(drm_amdgpu_info_vram_gtt, vram_size), vram);
            img.u64(
                offset_of!(drm_amdgpu_info_vram_gtt, vram_cpu_accessible_size),
                visible,
            );
            img.u64(offset_of!(drm_amdgpu_info_vram_gtt, gtt_size), gtt);
            img.0
        }
        AMDGPU_INFO_MEMORY => {
            let (vram, visible, gtt) = sizes(c);
            let mut img = Image::new(size_of::<drm_amdgpu_memory_info>());
            let heaps = [
                (
                    offset_of!(drm_amdgpu_memory_info, vram),
                    vram,
                    c.gem.vram_used(),
                ),
                (
                    offset_of!(drm_amdgpu_memory_info, cpu_accessible_vram),
                    visible,
                    c.gem.vram_used().min(visible),
                ),
                (
                    offset_of!(drm_amdgpu_memory_info, gtt),
                    gtt,
                    c.gem.gtt_used(),
                ),
            ];
            for (base, total, used) in heaps {
                img.u64(
                    base + offset_of!(drm_amdgpu_heap_info, total_heap_size),
                    total,
                );
                img.u64(
                    base + offset_of!(drm_amdgpu_heap_info, usable_heap_size),
                    total,
                );
                img.u64(base + offset_of!(drm_amdgpu_heap_info, heap_usage), used);
                img.u64(
                    base + offset_of!(drm_amdgpu_heap_info, max_allocation),
                    total / 4 * 3,
                );
            }
            img.0
        }
        AMDGPU_INFO_FW_VERSION => {
            let fw_type = read_u32(u + offset_of!(drm_amdgpu_query_fw, fw_type) as u64)?;
            let ver = match fw_type {
                AMDGPU_INFO_FW_GFX_MEC => p.get_or_zero("fw_version") as u32,
                AMDGPU_INFO_FW_SDMA => p.get_or_zero("sdma_fw_version") as u32,
                AMDGPU_INFO_FW_VCE
                | AMDGPU_INFO_FW_UVD
                | AMDGPU_INFO_FW_GMC
                | AMDGPU_INFO_FW_GFX_ME
                | AMDGPU_INFO_FW_GFX_PFP
                | AMDGPU_INFO_FW_GFX_CE
                | AMDGPU_INFO_FW_GFX_RLC
                | AMDGPU_INFO_FW_SMC
                | AMDGPU_INFO_FW_SOS
                | AMDGPU_INFO_FW_ASD
                | AMDGPU_INFO_FW_VCN
                | AMDGPU_INFO_FW_TA
                | AMDGPU_INFO_FW_TOC => 0,
                _ => return Err(Errno::EINVAL),
            };
            let mut img = Image::new(size_of::<drm_amdgpu_info_firmware>());
            img.u32(offset_of!(drm_amdgpu_info_firmware, ver), ver);
            img.0
        }
        AMDGPU_INFO_HW_IP_COUNT | AMDGPU_INFO_HW_IP_INFO => {
            let ip = read_u32(u + offset_of!(drm_amdgpu_info_query_hw_ip, r#type) as u64)?;
            if ip >= AMDGPU_HW_IP_NUM {
                return Err(Errno::EINVAL);
            }
            let rings = hw_ip_rings(c, ip);
            if query == AMDGPU_INFO_HW_IP_COUNT {
                u32::from(rings > 0).to_ne_bytes().to_vec()
            } else {
                let gfx = p.get_or_zero("gfx_target_version");
                let (major, minor) = match ip {
                    AMDGPU_HW_IP_GFX | AMDGPU_HW_IP_COMPUTE => {
                        ((gfx / 10000) as u32, ((gfx / 100) % 100) as u32)
                    }
                    AMDGPU_HW_IP_DMA => ((gfx / 10000) as u32 - 5, 0),
                    _ => (0, 0),
                };
                let mut img = Image::new(size_of::<drm_amdgpu_info_hw_ip>());
                img.u32(
                    offset_of!(drm_amdgpu_info_hw_ip, hw_ip_version_major),
                    major,
                );
                img.u32(
                    offset_of!(drm_amdgpu_info_hw_ip, hw_ip_version_minor),
                    minor,
                );
                img.u32(offset_of!(drm_amdgpu_info_hw_ip, ib_start_alignment), 32);
                img.u32(offset_of!(drm_amdgpu_info_hw_ip, ib_size_alignment), 32);
                img.u32(
                    offset_of!(drm_amdgpu_info_hw_ip, available_rings),
                    ((1u64 << rings) - 1) as u32,
                );
                img.0
            }
        }
        AMDGPU_INFO_TIMESTAMP => {
            // The GPU counter runs at gpu_counter_freq kHz.
            let mut ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: clock_gettime writes the timespec we own.
            unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
            let ns = ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64;
            let khz = u64::from(c.id.gpu_counter_freq_khz.max(1));
            (ns / 1000 * khz / 1000).to_ne_bytes().to_vec()
        }
        AMDGPU_INFO_VRAM_USAGE | AMDGPU_INFO_VIS_VRAM_USAGE => {
            c.gem.vram_used().to_ne_bytes().to_vec()
        }
        AMDGPU_INFO_GTT_USAGE => c.gem.gtt_used().to_ne_bytes().to_vec(),
        AMDGPU_INFO_NUM_BYTES_MOVED | AMDGPU_INFO_NUM_EVICTIONS => 0u64.to_ne_bytes().to_vec(),
        AMDGPU_INFO_VRAM_LOST_COUNTER => 0u32.to_ne_bytes().to_vec(),
        _ => return Err(Errno::EINVAL),
    };
    let n = answer.len().min(ret_size);
    usermem::write(ret_ptr, &answer[..n])?;
    Ok(0)
}

/// Rings per hardware IP: Instinct parts (no graphics pipe) have no GFX
/// ring; compute rings = 8 (amdgpu's default), SDMA = engines.
fn hw_ip_rings(c: &Ctx<'_>, ip: u32) -> u32 {
    let p = &c.node.properties;
    match ip {
        AMDGPU_HW_IP_GFX => u32::from(!c.id.marketing_name.contains("Instinct")),
        AMDGPU_HW_IP_COMPUTE => 8,
        AMDGPU_HW_IP_DMA => p.get_or_zero("num_sdma_engines").min(32) as u32,
        _ => 0,
    }
}

/// (VRAM, CPU-visible VRAM, GTT) sizes in bytes.
fn sizes(c: &Ctx<'_>) -> (u64, u64, u64) {
    let vram: u64 = c
        .node
        .mem_banks
        .iter()
        .filter(|b| matches!(b.get_or_zero("heap_type"), 1 | 2))
        .map(|b| b.get_or_zero("size_in_bytes"))
        .sum();
    let visible = if c.id.visible_vram_size != 0 {
        c.id.visible_vram_size.min(vram)
    } else {
        vram
    };
    let gtt = if c.id.gtt_size != 0 {
        c.id.gtt_size
    } else {
        // amdgpu's default GTT: half of system memory.
        let sys: u64 = c
            .topology
            .cpus()
            .flat_map(|(_, n)| n.mem_banks.iter())
            .filter(|b| b.get_or_zero("heap_type") == 0)
            .map(|b| b.get_or_zero("size_in_bytes"))
            .sum();
        sys / 2
    };
    (vram, visible, gtt)
}

/// Families of integrated GPUs.
fn is_apu_family(family: u32) -> bool {
    matches!(
        family,
        AMDGPU_FAMILY_KV
            | AMDGPU_FAMILY_CZ
            | AMDGPU_FAMILY_RV
            | AMDGPU_FAMILY_VGH
            | AMDGPU_FAMILY_YC
            | AMDGPU_FAMILY_GC_11_0_1
            | AMDGPU_FAMILY_GC_10_3_6
            | AMDGPU_FAMILY_GC_10_3_7
            | AMDGPU_FAMILY_GC_11_5_0
    )
}

/// `drm_amdgpu_info_device` for the node.
fn dev_info(c: &Ctx<'_>) -> Image {
    type D = drm_amdgpu_info_device;
    let p = &c.node.properties;
    let id = c.id;
    let mut img = Image::new(size_of::<D>());
    let simd_per_cu = p.get_or_zero("simd_per_cu").max(1);
    let cus = (p.get_or_zero("simd_count") / simd_per_cu) as u32;
    let se = p.get_or_zero("array_count").max(1) as u32;
    let sh = p.get_or_zero("simd_arrays_per_engine").max(1) as u32;
    let cu_per_sh = p.get_or_zero("cu_per_simd_array") as u32;
    img.u32(offset_of!(D, device_id), id.device_id);
    img.u32(offset_of!(D, chip_rev), id.chip_rev);
    img.u32(offset_of!(D, external_rev), id.external_rev);
    img.u32(offset_of!(D, pci_rev), id.pci_rev);
    img.u32(offset_of!(D, family), id.family);
    img.u32(offset_of!(D, num_shader_engines), se);
    img.u32(offset_of!(D, num_shader_arrays_per_engine), sh);
    img.u32(offset_of!(D, gpu_counter_freq), id.gpu_counter_freq_khz);
    img.u64(
        offset_of!(D, max_engine_clock),
        p.get_or_zero("max_engine_clk_fcompute") * 1000,
    );
    let mem_clk = c
        .node
        .mem_banks
        .first()
        .map_or(0, |b| b.get_or_zero("mem_clk_max"));
    let mem_clk = if id.max_memory_clock_mhz != 0 {
        u64::from(id.max_memory_clock_mhz)
    } else {
        mem_clk
    };
    img.u64(offset_of!(D, max_memory_clock), mem_clk * 1000);
    img.u32(offset_of!(D, cu_active_number), cus);
    // The CU bitmaps (4 SEs x 4 SHs in this legacy layout): spread the active
    // CUs evenly over the shader arrays, like harvesting leaves them.
    let arrays = (se.min(4) * sh.min(4)).max(1);
    let mut left = cus;
    let mut ao_mask = 0u32;
    for s in 0..se.min(4) {
        for h in 0..sh.min(4) {
            let idx = s * sh.min(4) + h;
            let share = (cus / arrays + u32::from(idx < cus % arrays))
                .min(left)
                .min(32);
            left -= share;
            let bits = if share == 32 {
                u32::MAX
            } else {
                (1u32 << share) - 1
            };
            let off = offset_of!(D, cu_bitmap) + ((s * 4 + h) as usize) * 4;
            img.u32(off, bits);
            let ao_off = offset_of!(D, cu_ao_bitmap) + ((s * 4 + h) as usize) * 4;
            img.u32(ao_off, bits & 0x3);
            if s < 2 && h < 2 {
                ao_mask |= (bits & 0xff) << ((s * 2 + h) * 8);
            }
        }
    }
    img.u32(offset_of!(D, cu_ao_mask), ao_mask);
    let graphics = !id.marketing_name.contains("Instinct");
    let rbs = if graphics { se * sh * 2 } else { 0 };
    img.u32(
        offset_of!(D, enabled_rb_pipes_mask),
        if rbs >= 32 {
            u32::MAX
        } else {
            (1u32 << rbs) - 1
        },
    );
    img.u32(offset_of!(D, num_rb_pipes), rbs);
    img.u32(offset_of!(D, num_hw_gfx_contexts), 8);
    let mut ids_flags = AMDGPU_IDS_FLAGS_PREEMPTION;
    if is_apu_family(id.family) {
        ids_flags |= AMDGPU_IDS_FLAGS_FUSION;
    }
    img.u64(offset_of!(D, ids_flags), ids_flags);
    // VA layout of a 48-bit GPUVM: user range above the 2 MiB reserve up to
    // the hole, high range from the end of the hole.
    img.u64(offset_of!(D, virtual_address_offset), 0x20_0000);
    img.u64(offset_of!(D, virtual_address_max), 0x8000_0000_0000);
    img.u32(offset_of!(D, virtual_address_alignment), 4096);
    img.u32(offset_of!(D, pte_fragment_size), 0x20_0000);
    img.u32(offset_of!(D, gart_page_size), 4096);
    img.u32(offset_of!(D, vram_type), id.vram_type);
    img.u32(offset_of!(D, vram_bit_width), id.vram_bit_width);
    img.u32(
        offset_of!(D, wave_front_size),
        p.get_or_zero("wave_front_size") as u32,
    );
    let vgprs = match p.get_or_zero("gfx_target_version") {
        90010 | 90400..=90499 => 512,
        v if v >= 110000 => 1536,
        _ => 256,
    };
    img.u32(offset_of!(D, num_shader_visible_vgprs), vgprs);
    img.u32(offset_of!(D, num_cu_per_sh), cu_per_sh);
    img.u32(offset_of!(D, num_tcc_blocks), id.num_tcc_blocks);
    img.u32(offset_of!(D, gs_vgt_table_depth), 32);
    img.u32(offset_of!(D, gs_prim_buffer_depth), 1792);
    img.u32(offset_of!(D, max_gs_waves_per_vgt), 32);
    img.u64(offset_of!(D, high_va_offset), 0xffff_8000_0000_0000);
    img.u64(offset_of!(D, high_va_max), 0xffff_ffff_ffe0_0000);
    img
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::presets;

    fn call<T>(f: &DrmFile, t: &Topology, req: u32, arg: &mut T) -> Result<i32, Errno> {
        // SAFETY: `arg` is a live, writable struct of the request's type.
        unsafe { f.ioctl(t, &NoGem, u64::from(req), (arg as *mut T).cast()) }
    }

    #[test]
    fn version_two_call_protocol() {
        let t = presets::preset("mi210").unwrap();
        let f = DrmFile::new(&t, 128).unwrap();
        let mut v = drm_version::default();
        call(&f, &t, DRM_IOCTL_VERSION.request(), &mut v).unwrap();
        assert_eq!(
            (v.version_major, v.name_len, v.date_len, v.desc_len),
            (3, 6, 8, 7)
        );
        let mut name = [0u8; 3];
        let mut desc = [0u8; 64];
        v.name = name.as_mut_ptr().cast();
        v.name_len = 3;
        v.desc = desc.as_mut_ptr().cast();
        call(&f, &t, DRM_IOCTL_VERSION.request(), &mut v).unwrap();
        assert_eq!(&name, b"amd");
        assert_eq!(v.name_len, 6);
        assert_eq!(&desc[..7], b"AMD GPU");
        assert!(DrmFile::new(&t, 129).is_none());
    }

    #[test]
    fn dev_info_and_queries() {
        let t = presets::preset("mi210").unwrap();
        let f = DrmFile::new(&t, 128).unwrap();
        let mut dev = drm_amdgpu_info_device::default();
        let mut q = drm_amdgpu_info {
            return_pointer: &mut dev as *mut _ as u64,
            return_size: size_of::<drm_amdgpu_info_device>() as u32,
            query: AMDGPU_INFO_DEV_INFO,
            ..Default::default()
        };
        call(&f, &t, DRM_IOCTL_AMDGPU_INFO.request(), &mut q).unwrap();
        assert_eq!(
            (dev.device_id, dev.pci_rev, dev.family),
            (0x740f, 2, AMDGPU_FAMILY_AI)
        );
        assert_eq!(dev.cu_active_number, 104);
        let bits: u32 = dev.cu_bitmap.iter().flatten().map(|b| b.count_ones()).sum();
        assert_eq!(bits, 104);
        assert_eq!(dev.wave_front_size, 64);
        assert_eq!(dev.max_engine_clock, 1_700_000);

        let mut reg = 0u32;
        q.return_pointer = &mut reg as *mut u32 as u64;
        q.return_size = 4;
        q.query = AMDGPU_INFO_READ_MMR_REG;
        q.u.read_mmr_reg = drm_amdgpu_info_read_mmr_reg {
            dword_offset: MM_GB_ADDR_CONFIG,
            count: 1,
            instance: 0xffff_ffff,
            flags: 0,
        };
        call(&f, &t, DRM_IOCTL_AMDGPU_INFO.request(), &mut q).unwrap();
        assert_eq!(reg, 0x2a11_4042);
        q.u.read_mmr_reg.dword_offset = 0x1234;
        assert_eq!(
            call(&f, &t, DRM_IOCTL_AMDGPU_INFO.request(), &mut q),
            Err(Errno::EINVAL)
        );

        let mut w = 0u32;
        q.return_pointer = &mut w as *mut u32 as u64;
        q.query = AMDGPU_INFO_ACCEL_WORKING;
        call(&f, &t, DRM_IOCTL_AMDGPU_INFO.request(), &mut q).unwrap();
        assert_eq!(w, 1);

        let mut vg = drm_amdgpu_info_vram_gtt::default();
        q.return_pointer = &mut vg as *mut _ as u64;
        q.return_size = size_of::<drm_amdgpu_info_vram_gtt>() as u32;
        q.query = AMDGPU_INFO_VRAM_GTT;
        call(&f, &t, DRM_IOCTL_AMDGPU_INFO.request(), &mut q).unwrap();
        assert_eq!(vg.vram_size, 68_702_699_520);
        assert!(vg.gtt_size > 0);

        let mut fw = drm_amdgpu_info_firmware::default();
        q.return_pointer = &mut fw as *mut _ as u64;
        q.return_size = 8;
        q.query = AMDGPU_INFO_FW_VERSION;
        q.u.query_fw = drm_amdgpu_query_fw {
            fw_type: AMDGPU_INFO_FW_GFX_MEC,
            ..Default::default()
        };
        call(&f, &t, DRM_IOCTL_AMDGPU_INFO.request(), &mut q).unwrap();
        assert_eq!(fw.ver, 78);

        q.query = 0x7777;
        assert_eq!(
            call(&f, &t, DRM_IOCTL_AMDGPU_INFO.request(), &mut q),
            Err(Errno::EINVAL)
        );
        q.query = AMDGPU_INFO_ACCEL_WORKING;
        q.return_pointer = 8;
        assert_eq!(
            call(&f, &t, DRM_IOCTL_AMDGPU_INFO.request(), &mut q),
            Err(Errno::EFAULT)
        );
    }

    #[test]
    fn client_gem_and_unknown() {
        let t = presets::preset("navi31").unwrap();
        let f = DrmFile::new(&t, 128).unwrap();
        let mut cl = drm_client::default();
        call(&f, &t, DRM_IOCTL_GET_CLIENT.request(), &mut cl).unwrap();
        assert_eq!(cl.auth, 1);
        let mut close = drm_gem_close { handle: 5, pad: 0 };
        assert_eq!(
            call(&f, &t, DRM_IOCTL_GEM_CLOSE.request(), &mut close),
            Err(Errno::EINVAL)
        );
        let h = f.handle_for(77);
        assert_eq!(f.handle_for(77), h);
        let mut ph = drm_prime_handle {
            handle: h,
            flags: DRM_CLOEXEC,
            fd: -1,
        };
        assert_eq!(
            call(&f, &t, DRM_IOCTL_PRIME_HANDLE_TO_FD.request(), &mut ph),
            Err(Errno::ENOENT)
        );
        close.handle = h;
        call(&f, &t, DRM_IOCTL_GEM_CLOSE.request(), &mut close).unwrap();
        assert_eq!(f.handle_count(), 0);
        let mut x = 0u64;
        assert_eq!(call(&f, &t, 0xc008_6499, &mut x), Err(Errno::EINVAL));
        assert_eq!(call(&f, &t, 0xc008_4b01, &mut x), Err(Errno::ENOTTY));
    }
}
