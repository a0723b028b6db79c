//! What `libdtif.so` exports besides the hsaKmt* functions (feature
//! `dtif`, built by `cargo xtask dist` next to the newest
//! `libhsakmt.so.1`).
//!
//! ROCm 7.x links its thunk into ROCr. With `HSA_ENABLE_DTIF=1`, ROCr's
//! ThunkLoader `dlopen`s `libdtif.so`, resolves every hsaKmt* function
//! it uses and eleven libdrm entry points from it (ROCr 7.2.4:
//! `LoadThunkApiTable`, stopping at the first missing one), then calls
//! `DtifCreate("HSA")` when the runtime loads and `DtifDestroy()` when it
//! unloads (after hsaKmtCloseKFD).
//!
//! The libdrm entry points are implemented here on our own device
//! handles (those of `hsaKmtGetAMDGPUDeviceHandle`, see [`crate::amdgpu`])
//! rather than forwarded to the system's libdrm_amdgpu: ROCr passes them
//! the handles our thunk hands out, which libdrm_amdgpu does not know.
//! Each issues the ioctls libdrm would, on the render node of the handle,
//! and like libdrm returns 0 or a negative errno; where libdrm would
//! dereference a bad handle or a NULL output, these return `-EINVAL`.
//!
//! | entry point | here |
//! |---|---|
//! | `DtifCreate`, `DtifDestroy` | the process's one platform object, counted: see [`DtifCreate`] |
//! | `amdgpu_device_initialize` | the primary context's handle of the render node `fd` is (`EINVAL`: not a character device; `ENODEV`: no GPU of the primary context has that render node); driver version from `DRM_IOCTL_VERSION` |
//! | `amdgpu_device_deinitialize` | 0 for a live handle, `EINVAL` otherwise (our handles live as long as their context) |
//! | `amdgpu_query_gpu_info` | as libdrm fills it: `AMDGPU_INFO_DEV_INFO` and the register reads (`READ_MMR_REG`) libdrm makes, see [`gpu_info`] |
//! | `drmCommandWriteRead` | the `DRM_IOWR(DRM_COMMAND_BASE + index)` ioctl on `fd`, retried on `EINTR`/`EAGAIN` as libdrm does |
//! | `amdgpu_bo_import`, `_export`, `_free`, `_cpu_map`, `_va_op`, `_query_info`, `_set_metadata` | buffer objects on the handle's render node: PRIME, `GEM_METADATA`, `GEM_OP`, `GEM_VA`, `GEM_MMAP`, `GEM_CLOSE`, see [`bo`] |

use std::ffi::{c_char, c_int, c_ulong, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Mutex, MutexGuard};

use kfd_sys::drm::{drm_version, DRM_COMMAND_BASE, DRM_IOCTL_VERSION};
use kfd_sys::sync::lock;

use crate::amdgpu::{self, Owner};

pub mod bo;
pub mod gpu_info;

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

/// The platform object of the process: ROCr's ThunkLoader creates it
/// when the runtime loads and destroys it when it unloads. `DtifDestroy`
/// takes no argument, so there is one per process, counted: every
/// `DtifCreate` that returned it must be matched by one `DtifDestroy`.
/// The thunk keeps nothing in it (hsaKmtOpenKFD opens the device); the
/// count says whether a client still holds it.
#[derive(Debug)]
pub struct DtifPlatform {
    users: Mutex<u32>,
}

static PLATFORM: DtifPlatform = DtifPlatform {
    users: Mutex::new(0),
};

impl DtifPlatform {
    fn users(&self) -> MutexGuard<'_, u32> {
        lock(&self.users)
    }
}

/// How many `DtifCreate` calls are not matched by a `DtifDestroy` yet.
pub fn platform_users() -> u32 {
    *PLATFORM.users()
}

fn set_errno(e: c_int) {
    // SAFETY: __errno_location returns the calling thread's errno slot.
    unsafe { *libc::__errno_location() = e };
}

/// `DtifPlatform *DtifCreate(const char *client)`: the platform (the same
/// object for every caller; ROCr passes `"HSA"` and only checks for NULL),
/// counted once more. NULL with `errno` `EINVAL` for a NULL or empty
/// client name, `EOVERFLOW` if the count is full.
///
/// # Safety
///
/// `client` must be NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn DtifCreate(client: *const c_char) -> *mut DtifPlatform {
    if client.is_null() {
        set_errno(libc::EINVAL);
        return std::ptr::null_mut();
    }
    // SAFETY: non-NULL and, per the contract, NUL-terminated.
    if unsafe { CStr::from_ptr(client) }.is_empty() {
        set_errno(libc::EINVAL);
        return std::ptr::null_mut();
    }
    let mut users = PLATFORM.users();
    let Some(n) = users.checked_add(1) else {
        set_errno(libc::EOVERFLOW);
        return std::ptr::null_mut();
    };
    *users = n;
    std::ptr::addr_of!(PLATFORM) as *mut DtifPlatform
}

/// `void DtifDestroy(void)`: one `DtifCreate` less. Without one to match
/// (a misuse) it changes nothing and says so at `HSAKMT_DEBUG_LEVEL` 3
/// and above.
///
/// # Safety
///
/// None; it takes no arguments.
#[no_mangle]
pub unsafe extern "C" fn DtifDestroy() {
    let mut users = PLATFORM.users();
    match users.checked_sub(1) {
        Some(n) => *users = n,
        None => crate::log::err(format_args!(
            "DtifDestroy: no DtifCreate to match, ignored\n"
        )),
    }
}

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
        let handle = amdgpu::handle(Owner::Primary, render_minor).ok_or(libc::ENOMEM)?;
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
    info: *mut gpu_info::amdgpu_gpu_info,
) -> c_int {
    drm_guard(|| {
        if info.is_null() {
            return Err(libc::EINVAL);
        }
        let render = crate::render::device_render_node(dev).map_err(|_| libc::EINVAL)?;
        let gi = gpu_info::query(&render).map_err(|e| e.0)?;
        // SAFETY: checked non-NULL; the caller's contract makes it valid
        // for one write (unaligned: libdrm callers pass any address).
        unsafe { info.write_unaligned(gi) };
        Ok(())
    })
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

#[cfg(test)]
mod tests {
    use super::*;

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
            let mut gi = gpu_info::amdgpu_gpu_info::default();
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
            assert_eq!(bo::amdgpu_bo_free(std::ptr::null_mut()), -libc::EINVAL);
            assert_eq!(
                bo::amdgpu_bo_free(0xB0B0_0000_0000_0001usize as *mut c_void),
                -libc::EINVAL
            );
        }
    }
}

#[cfg(test)]
mod platform_tests {
    use super::*;

    #[test]
    fn create_and_destroy_are_counted() {
        // SAFETY: NULL, an empty and a real NUL-terminated name.
        unsafe {
            let before = platform_users();
            assert!(DtifCreate(std::ptr::null()).is_null());
            assert_eq!(last_errno(), libc::EINVAL);
            assert!(DtifCreate(c"".as_ptr()).is_null());
            let a = DtifCreate(c"HSA".as_ptr());
            let b = DtifCreate(c"HSA".as_ptr());
            assert!(!a.is_null());
            assert_eq!(a, b);
            assert_eq!(platform_users(), before + 2);
            DtifDestroy();
            DtifDestroy();
            assert_eq!(platform_users(), before);
            if before == 0 {
                // Unmatched: ignored, the count stays at 0.
                DtifDestroy();
                assert_eq!(platform_users(), 0);
            }
        }
    }
}
