//! What `libdtif.so` exports besides the hsaKmt* functions (feature
//! `dtif`, built by `cargo xtask dist` next to the newest
//! `libhsakmt.so.1`).
//!
//! ROCm 7.x links its thunk into ROCr. With `HSA_ENABLE_DTIF=1`, ROCr's
//! ThunkLoader `dlopen`s `libdtif.so` instead, resolves every hsaKmt*
//! function it uses and eleven libdrm entry points from it (ROCr 7.2.4:
//! `LoadThunkApiTable`, stopping at the first missing one), then calls
//! `DtifCreate("HSA")` and, at shutdown, `DtifDestroy()`.
//!
//! The libdrm entry points are implemented here on our own device
//! handles (those of `hsaKmtGetAMDGPUDeviceHandle`, see [`crate::amdgpu`])
//! rather than forwarded to the system's libdrm_amdgpu: ROCr passes them
//! the handles our thunk hands out, which libdrm_amdgpu does not know,
//! and on kfd-sim nothing real is needed. Like libdrm they return 0 or a
//! negative errno.
//!
//! | entry point | here |
//! |---|---|
//! | `amdgpu_device_initialize` | the primary context's handle of the render node `fd` is (`EINVAL`: not a character device; `ENODEV`: no GPU of the primary context has that render node); driver version from `DRM_IOCTL_VERSION` |
//! | `amdgpu_device_deinitialize` | 0 for a live handle, `EINVAL` otherwise (our handles live as long as their context) |
//! | `amdgpu_query_gpu_info` | from `AMDGPU_INFO_DEV_INFO` on the handle's render node, as libdrm fills it; the register-derived fields (`backend_disable`, `mc_arb_ramcfg`, `gb_addr_cfg`, tile modes, raster configs) are 0 |
//! | `drmCommandWriteRead` | the `DRM_IOWR(DRM_COMMAND_BASE + index)` ioctl on `fd`, retried on `EINTR`/`EAGAIN` as libdrm does |
//! | `amdgpu_bo_cpu_map`, `_free`, `_export`, `_import`, `_va_op`, `_query_info`, `_set_metadata` | `ENOSYS`: our thunk has no libdrm buffer objects (ROCr uses them for dma-buf IPC import and export only) |

use std::ffi::{c_char, c_int, c_ulong, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};

use kfd_sys::drm::{drm_version, DRM_COMMAND_BASE, DRM_IOCTL_VERSION};

use crate::amdgpu::{self, Owner};

/// `struct amdgpu_gpu_info` of libdrm's `amdgpu.h` (416 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct amdgpu_gpu_info {
    /// PCI device id.
    pub asic_id: u32,
    /// Internal chip revision.
    pub chip_rev: u32,
    /// External chip revision.
    pub chip_external_rev: u32,
    /// `AMDGPU_FAMILY_*`.
    pub family_id: u32,
    /// `AMDGPU_IDS_FLAGS_*`.
    pub ids_flags: u64,
    /// Maximum engine clock (kHz).
    pub max_engine_clk: u64,
    /// Maximum memory clock (kHz).
    pub max_memory_clk: u64,
    /// Shader engines.
    pub num_shader_engines: u32,
    /// Shader arrays per engine.
    pub num_shader_arrays_per_engine: u32,
    /// Available quad shader pipes.
    pub avail_quad_shader_pipes: u32,
    /// Maximum quad shader pipes.
    pub max_quad_shader_pipes: u32,
    /// Cache entries per quad pipe.
    pub cache_entries_per_quad_pipe: u32,
    /// Hardware gfx contexts.
    pub num_hw_gfx_contexts: u32,
    /// Render backends.
    pub rb_pipes: u32,
    /// Enabled render backends.
    pub enabled_rb_pipes_mask: u32,
    /// GPU counter frequency (kHz).
    pub gpu_counter_freq: u32,
    /// Disabled backends per shader engine.
    pub backend_disable: [u32; 4],
    /// `MC_ARB_RAMCFG`.
    pub mc_arb_ramcfg: u32,
    /// `GB_ADDR_CONFIG`.
    pub gb_addr_cfg: u32,
    /// Tile modes.
    pub gb_tile_mode: [u32; 32],
    /// Macro tile modes.
    pub gb_macro_tile_mode: [u32; 16],
    /// `PA_SC_RASTER_CONFIG` per shader engine.
    pub pa_sc_raster_cfg: [u32; 4],
    /// `PA_SC_RASTER_CONFIG_1` per shader engine.
    pub pa_sc_raster_cfg1: [u32; 4],
    /// Active compute units.
    pub cu_active_number: u32,
    /// Always-on CU mask.
    pub cu_ao_mask: u32,
    /// CU bitmap per shader engine and array.
    pub cu_bitmap: [[u32; 4]; 4],
    /// `AMDGPU_VRAM_TYPE_*`.
    pub vram_type: u32,
    /// VRAM bus width (bits).
    pub vram_bit_width: u32,
    /// Constant engine RAM size.
    pub ce_ram_size: u32,
    /// VCE harvesting.
    pub vce_harvest_config: u32,
    /// PCI revision.
    pub pci_rev_id: u32,
}

/// What `DtifCreate` returns: an opaque, never-dereferenced token (ROCr
/// only checks it is not NULL).
static PLATFORM: u8 = 0;

/// The errno of the last failed libc call.
fn last_errno() -> c_int {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// Runs a libdrm-style body: `Ok` → 0, `Err(e)` → `-e`, a panic → `-EIO`
/// (none crosses the C border).
fn drm_guard(body: impl FnOnce() -> Result<(), c_int>) -> c_int {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => 0,
        Ok(Err(e)) => -e,
        Err(_) => -libc::EIO,
    }
}

/// `DtifPlatform *DtifCreate(const char *client)`: ROCr calls it once,
/// with `"HSA"`, after resolving the table. The thunk needs no platform
/// object of its own (hsaKmtOpenKFD opens the device), so this returns
/// the same non-NULL token for every caller.
///
/// # Safety
///
/// `client` is not read.
#[no_mangle]
pub unsafe extern "C" fn DtifCreate(client: *const c_char) -> *mut c_void {
    let _ = client;
    std::ptr::addr_of!(PLATFORM) as *mut c_void
}

/// `void DtifDestroy(void)`: ROCr calls it at shutdown, after
/// hsaKmtCloseKFD; nothing is left to release.
///
/// # Safety
///
/// None; it takes no arguments.
#[no_mangle]
pub unsafe extern "C" fn DtifDestroy() {}

/// `amdgpu_device_initialize(fd, &major, &minor, &dev)`: see the module
/// table.
///
/// # Safety
///
/// The three output pointers must be NULL (→ `-EINVAL`) or valid for
/// writes of their types.
#[no_mangle]
pub unsafe extern "C" fn amdgpu_device_initialize(
    fd: c_int,
    major_version: *mut u32,
    minor_version: *mut u32,
    device_handle: *mut *mut c_void,
) -> c_int {
    drm_guard(|| {
        if major_version.is_null() || minor_version.is_null() || device_handle.is_null() {
            return Err(libc::EINVAL);
        }
        // SAFETY: `stat` is a plain C struct, all-zero is a valid value,
        // and fstat writes at most one of them.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: `st` is a live, writable `stat`; fstat reads no memory
        // of ours.
        if unsafe { libc::fstat(fd, &mut st) } != 0 {
            return Err(last_errno());
        }
        if st.st_mode & libc::S_IFMT != libc::S_IFCHR {
            return Err(libc::EINVAL);
        }
        let render_minor = libc::minor(st.st_rdev);
        let handle = amdgpu::handle(Owner::Primary, render_minor);
        crate::render::device_render_node(handle).map_err(|_| libc::ENODEV)?;
        let mut v = drm_version::default();
        // SAFETY: `v` is a live `drm_version` with every buffer length 0,
        // so the driver writes only the three version numbers and the
        // lengths, all inside `v`.
        if unsafe { libc::ioctl(fd, DRM_IOCTL_VERSION.request() as c_ulong, &mut v) } != 0 {
            return Err(last_errno());
        }
        // SAFETY: checked non-NULL above; the caller's contract makes them
        // valid for writes.
        unsafe {
            major_version.write(v.version_major as u32);
            minor_version.write(v.version_minor as u32);
            device_handle.write(handle);
        }
        Ok(())
    })
}

/// `amdgpu_device_deinitialize(dev)`: see the module table.
///
/// # Safety
///
/// `dev` is only compared with our handles, never dereferenced.
#[no_mangle]
pub unsafe extern "C" fn amdgpu_device_deinitialize(dev: *mut c_void) -> c_int {
    drm_guard(|| amdgpu::lookup(dev).map(|_| ()).ok_or(libc::EINVAL))
}

/// `amdgpu_query_gpu_info(dev, &info)`: see the module table.
///
/// # Safety
///
/// `info` must be NULL (→ `-EINVAL`) or valid for writing one
/// `struct amdgpu_gpu_info`; `dev` is never dereferenced.
#[no_mangle]
pub unsafe extern "C" fn amdgpu_query_gpu_info(
    dev: *mut c_void,
    info: *mut amdgpu_gpu_info,
) -> c_int {
    drm_guard(|| {
        if info.is_null() {
            return Err(libc::EINVAL);
        }
        let render = crate::render::device_render_node(dev).map_err(|_| libc::EINVAL)?;
        let d = kfd_sys::drm::query_device_info(&render).map_err(|e| e.0)?;
        let gi = gpu_info(&d);
        // SAFETY: checked non-NULL; the caller's contract makes it valid
        // for one write (unaligned: libdrm callers pass any address).
        unsafe { info.write_unaligned(gi) };
        Ok(())
    })
}

/// `amdgpu_gpu_info` from the kernel's device record, field for field
/// as libdrm's `amdgpu_query_gpu_info_init` copies it.
fn gpu_info(d: &kfd_sys::drm::drm_amdgpu_info_device) -> amdgpu_gpu_info {
    amdgpu_gpu_info {
        asic_id: d.device_id,
        chip_rev: d.chip_rev,
        chip_external_rev: d.external_rev,
        family_id: d.family,
        ids_flags: d.ids_flags,
        max_engine_clk: d.max_engine_clock,
        max_memory_clk: d.max_memory_clock,
        num_shader_engines: d.num_shader_engines,
        num_shader_arrays_per_engine: d.num_shader_arrays_per_engine,
        num_hw_gfx_contexts: d.num_hw_gfx_contexts,
        rb_pipes: d.num_rb_pipes,
        enabled_rb_pipes_mask: d.enabled_rb_pipes_mask,
        gpu_counter_freq: d.gpu_counter_freq,
        cu_active_number: d.cu_active_number,
        cu_ao_mask: d.cu_ao_mask,
        cu_bitmap: d.cu_bitmap,
        vram_type: d.vram_type,
        vram_bit_width: d.vram_bit_width,
        ce_ram_size: d.ce_ram_size,
        vce_harvest_config: d.vce_harvest_config,
        pci_rev_id: d.pci_rev,
        ..Default::default()
    }
}

/// `drmCommandWriteRead(fd, index, data, size)`: see the module table.
///
/// # Safety
///
/// `data` must be valid for reads and writes of `size` bytes, as the
/// driver command `index` requires.
#[no_mangle]
pub unsafe extern "C" fn drmCommandWriteRead(
    fd: c_int,
    index: c_ulong,
    data: *mut c_void,
    size: c_ulong,
) -> c_int {
    drm_guard(|| {
        // _IOC(_IOC_READ | _IOC_WRITE, 'd', DRM_COMMAND_BASE + index, size)
        if size >= 1 << 14 || index >= 0x100 - c_ulong::from(DRM_COMMAND_BASE) {
            return Err(libc::EINVAL);
        }
        let request = (3 << 30)
            | (size << 16)
            | (c_ulong::from(b'd') << 8)
            | (c_ulong::from(DRM_COMMAND_BASE) + index);
        loop {
            // SAFETY: the caller's contract: `data` holds the `size`-byte
            // argument of that command, which the request number encodes.
            if unsafe { libc::ioctl(fd, request, data) } == 0 {
                return Ok(());
            }
            match last_errno() {
                libc::EINTR | libc::EAGAIN => continue,
                e => return Err(e),
            }
        }
    })
}

/// Declares the libdrm buffer-object entry points ROCr resolves but this
/// thunk cannot serve (no libdrm buffer objects): each returns
/// `-ENOSYS` without touching its arguments.
macro_rules! no_buffer_objects {
    ($($(#[$m:meta])* fn $name:ident($($a:ident : $t:ty),*);)*) => {$(
        $(#[$m])*
        ///
        /// # Safety
        ///
        /// None: the arguments are not read.
        #[no_mangle]
        pub unsafe extern "C" fn $name($($a: $t),*) -> c_int {
            let _ = ($($a,)*);
            -libc::ENOSYS
        }
    )*};
}

no_buffer_objects! {
    /// `amdgpu_bo_cpu_map(bo, &cpu)`.
    fn amdgpu_bo_cpu_map(bo: *mut c_void, cpu: *mut *mut c_void);
    /// `amdgpu_bo_free(bo)`.
    fn amdgpu_bo_free(bo: *mut c_void);
    /// `amdgpu_bo_export(bo, type, &shared_handle)`.
    fn amdgpu_bo_export(bo: *mut c_void, kind: u32, shared_handle: *mut u32);
    /// `amdgpu_bo_import(dev, type, shared_handle, &result)`.
    fn amdgpu_bo_import(dev: *mut c_void, kind: u32, shared_handle: u32, output: *mut c_void);
    /// `amdgpu_bo_va_op(bo, offset, size, addr, flags, ops)`.
    fn amdgpu_bo_va_op(bo: *mut c_void, offset: u64, size: u64, addr: u64, flags: u64, ops: u32);
    /// `amdgpu_bo_query_info(bo, &info)`.
    fn amdgpu_bo_query_info(bo: *mut c_void, info: *mut c_void);
    /// `amdgpu_bo_set_metadata(bo, &metadata)`.
    fn amdgpu_bo_set_metadata(bo: *mut c_void, info: *mut c_void);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_info_has_libdrm_layout() {
        assert_eq!(std::mem::size_of::<amdgpu_gpu_info>(), 416);
        assert_eq!(std::mem::offset_of!(amdgpu_gpu_info, gpu_counter_freq), 72);
        assert_eq!(std::mem::offset_of!(amdgpu_gpu_info, cu_bitmap), 332);
        assert_eq!(std::mem::offset_of!(amdgpu_gpu_info, vram_type), 396);
        assert_eq!(std::mem::offset_of!(amdgpu_gpu_info, pci_rev_id), 412);
    }

    #[test]
    fn bad_arguments_are_errors_not_crashes() {
        // SAFETY: every pointer is NULL or not one of ours: each call must
        // refuse it with an errno.
        unsafe {
            assert_eq!(
                amdgpu_device_initialize(
                    -1,
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    std::ptr::null_mut()
                ),
                -libc::EINVAL
            );
            let (mut a, mut b, mut h) = (0u32, 0u32, std::ptr::null_mut());
            assert_eq!(
                amdgpu_device_initialize(-1, &mut a, &mut b, &mut h),
                -libc::EBADF
            );
            assert_eq!(
                amdgpu_device_deinitialize(0x1000 as *mut c_void),
                -libc::EINVAL
            );
            let mut gi = amdgpu_gpu_info::default();
            assert_eq!(
                amdgpu_query_gpu_info(0x1000 as *mut c_void, &mut gi),
                -libc::EINVAL
            );
            assert_eq!(
                amdgpu_query_gpu_info(std::ptr::null_mut(), std::ptr::null_mut()),
                -libc::EINVAL
            );
            assert_eq!(
                drmCommandWriteRead(-1, 0x5, std::ptr::null_mut(), 32),
                -libc::EBADF
            );
            assert_eq!(
                drmCommandWriteRead(-1, 0x5, std::ptr::null_mut(), 1 << 20),
                -libc::EINVAL
            );
            assert_eq!(amdgpu_bo_free(std::ptr::null_mut()), -libc::ENOSYS);
            assert!(!DtifCreate(c"HSA".as_ptr()).is_null());
            DtifDestroy();
        }
    }

    #[test]
    fn gpu_info_copies_the_device_record() {
        let d = kfd_sys::drm::drm_amdgpu_info_device {
            device_id: 0x740f,
            family: 141,
            gpu_counter_freq: 100_000,
            num_rb_pipes: 8,
            pci_rev: 2,
            ..Default::default()
        };
        let gi = gpu_info(&d);
        assert_eq!(
            (
                gi.asic_id,
                gi.family_id,
                gi.gpu_counter_freq,
                gi.rb_pipes,
                gi.pci_rev_id
            ),
            (0x740f, 141, 100_000, 8, 2)
        );
        assert_eq!(gi.gb_addr_cfg, 0);
    }
}
