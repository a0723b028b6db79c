//! The interposers. Each `kfd_sim_NAME` becomes libc's `NAME` in the
//! cdylib (see build.rs); in the rlib they are ordinary prefixed functions.
//!
//! ABI note (SysV x86-64): `open`, `openat` and `ioctl` are variadic in C.
//! They are defined here with their optional argument as a fixed parameter:
//! variadic arguments are passed in the same registers as fixed ones, and a
//! non-variadic callee may ignore `%al`, so the definitions are call
//! compatible. When the caller passed no `mode`, the register holds garbage
//! that is only forwarded (libc reads it only with `O_CREAT`/`O_TMPFILE`).

use std::ffi::{c_char, c_int, c_uint, c_ulong, c_void, CStr};

use kfd_sys::sync::lock;
use libc::{mode_t, size_t, ssize_t, FILE};

use super::real::real;
use super::{
    busy, classify, classify_at, device_stat, device_statx, existing, fd_device, foreign_kfd,
    in_sim, is_lsmod_amdgpu, open_device, set_errno, Device, Target, LSMOD_AMDGPU,
};
use kfd_sys::Errno;

const _: () = assert!(std::mem::size_of::<libc::stat>() == std::mem::size_of::<libc::stat64>());

/// Every exported libc name (kept equal to interpose.list by a test).
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) const EXPORTED: &[&str] = &[
    "open",
    "open64",
    "__open_2",
    "__open64_2",
    "openat",
    "openat64",
    "__openat_2",
    "__openat64_2",
    "fopen",
    "fopen64",
    "opendir",
    "readdir",
    "readdir64",
    "rewinddir",
    "closedir",
    "stat",
    "stat64",
    "lstat",
    "lstat64",
    "fstat",
    "fstat64",
    "fstatat",
    "fstatat64",
    "__xstat",
    "__xstat64",
    "__lxstat",
    "__lxstat64",
    "__fxstat",
    "__fxstat64",
    "__fxstatat",
    "__fxstatat64",
    "statx",
    "access",
    "faccessat",
    "euidaccess",
    "eaccess",
    "readlink",
    "readlinkat",
    "realpath",
    "__realpath_chk",
    "ioctl",
    "close",
    "popen",
    "pclose",
    "mmap",
    "mmap64",
    "munmap",
];

/// Calls the real function `$f` or fails with ENOSYS (`$err` is the
/// failure value of its return type).
macro_rules! real_call {
    ($f:ident, $err:expr, $($a:expr),* $(,)?) => {
        match real().$f {
            // SAFETY: the pointer is libc's definition of this very function
            // and the arguments are the caller's, forwarded unchanged (or a
            // rewritten NUL-terminated path).
            Some(f) => unsafe { f($($a),*) },
            None => {
                set_errno(Errno::ENOSYS);
                $err
            }
        }
    };
}

// ---- open family ---------------------------------------------------------

/// The classification of an open-family call: `classify_at(dirfd, path)`
/// for the `*at` forms, `classify(path)` otherwise.
macro_rules! classify_open {
    ($dirfd:ident, $path:ident) => {
        classify_at($dirfd, $path)
    };
    (, $path:ident) => {
        classify($path)
    };
}

/// Defines the open-family interposers. Each row is
/// `export => libc_field [dirfd] (mode);`: the optional `dirfd` makes the
/// `*at` form, the optional `mode` the forms that take one (the
/// `_FORTIFY_SOURCE` `__open*_2` entry points take none). Every function
/// opens a simulated device itself, opens the redirected path (KFD sysfs)
/// or passes the call through unchanged.
///
/// `open`, `openat` and their 64-bit twins are variadic in C; on x86-64
/// the SysV ABI passes the optional `mode` in the same register whether or
/// not the callee is variadic, so a fixed third/fourth parameter reads it.
macro_rules! open_interposers {
    ($($name:ident => $real:ident [$($dirfd:ident)?] ($($mode:ident)?);)*) => {$(
        #[doc = concat!("Open-family interposer `", stringify!($name), "`.")]
        ///
        /// # Safety
        ///
        /// C contract of the libc function of the same name.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            $($dirfd: c_int,)?
            path: *const c_char,
            flags: c_int
            $(, $mode: mode_t)?
        ) -> c_int {
            // SAFETY: `path` is a C string per the caller's contract.
            match unsafe { classify_open!($($dirfd)?, path) } {
                Target::Device(st, d) => open_device(st, d, flags),
                Target::Redirect(p) => {
                    real_call!($real, -1, $($dirfd,)? p.as_ptr(), flags $(, $mode)?)
                }
                Target::Pass => real_call!($real, -1, $($dirfd,)? path, flags $(, $mode)?),
            }
        }
    )*};
}

open_interposers! {
    kfd_sim_open => open [] (mode);
    kfd_sim_open64 => open64 [] (mode);
    kfd_sim___open_2 => open_2 [] ();
    kfd_sim___open64_2 => open64_2 [] ();
    kfd_sim_openat => openat [dirfd] (mode);
    kfd_sim_openat64 => openat64 [dirfd] (mode);
    kfd_sim___openat_2 => openat_2 [dirfd] ();
    kfd_sim___openat64_2 => openat64_2 [dirfd] ();
}

/// A stdio stream on a simulated device (nothing reads devices through
/// stdio, but it must not escape to the host's /dev).
fn fopen_device(st: &super::State, d: Device, mode: *const c_char) -> *mut FILE {
    let m = if mode.is_null() {
        &b""[..]
    } else {
        // SAFETY: a non-null `mode` is the caller's C string.
        unsafe { CStr::from_ptr(mode) }.to_bytes()
    };
    let flags = if m.contains(&b'e') {
        libc::O_RDWR | libc::O_CLOEXEC
    } else {
        libc::O_RDWR
    };
    let fd = open_device(st, d, flags);
    if fd < 0 {
        return std::ptr::null_mut();
    }
    // SAFETY: `fd` is a descriptor we own; `mode` is the caller's string.
    let f = unsafe { libc::fdopen(fd, mode) };
    if f.is_null() {
        // SAFETY: closing the descriptor we just opened.
        unsafe { libc::close(fd) };
    }
    f
}

/// `fopen(3)`: glibc opens the file internally (not through `open`), so
/// stdio reads of the KFD sysfs need their own redirect.
///
/// # Safety
///
/// C contract of `fopen`.
#[no_mangle]
pub unsafe extern "C" fn kfd_sim_fopen(path: *const c_char, mode: *const c_char) -> *mut FILE {
    // SAFETY: as for open.
    match unsafe { classify(path) } {
        Target::Device(st, d) => fopen_device(st, d, mode),
        Target::Redirect(p) => real_call!(fopen, std::ptr::null_mut(), p.as_ptr(), mode),
        Target::Pass => real_call!(fopen, std::ptr::null_mut(), path, mode),
    }
}

/// `fopen64`.
///
/// # Safety
///
/// C contract of `fopen64`.
#[no_mangle]
pub unsafe extern "C" fn kfd_sim_fopen64(path: *const c_char, mode: *const c_char) -> *mut FILE {
    // SAFETY: as for open.
    match unsafe { classify(path) } {
        Target::Device(st, d) => fopen_device(st, d, mode),
        Target::Redirect(p) => real_call!(fopen64, std::ptr::null_mut(), p.as_ptr(), mode),
        Target::Pass => real_call!(fopen64, std::ptr::null_mut(), path, mode),
    }
}

/// `opendir(3)` (glibc opens the directory internally). A redirected
/// directory (of the rendered sysfs) is read at once and then listed by
/// [`kfd_sim_readdir`] in kernfs order.
///
/// # Safety
///
/// C contract of `opendir`.
#[no_mangle]
pub unsafe extern "C" fn kfd_sim_opendir(path: *const c_char) -> *mut libc::DIR {
    // SAFETY: as for open.
    match unsafe { classify(path) } {
        Target::Device(..) => {
            set_errno(Errno(libc::ENOTDIR));
            std::ptr::null_mut()
        }
        Target::Redirect(p) => {
            let dir = real_call!(opendir, std::ptr::null_mut(), p.as_ptr());
            if !dir.is_null() {
                // SAFETY: `dir` is the stream libc just opened.
                unsafe { order_dir(dir) };
            }
            dir
        }
        Target::Pass => real_call!(opendir, std::ptr::null_mut(), path),
    }
}

/// A directory stream whose entries the interposers serve, in the order
/// sysfs lists them.
pub(super) struct OrderedDir {
    /// The `DIR *`.
    dir: usize,
    /// `.`, `..`, then the entries in kernfs order.
    entries: Vec<libc::dirent64>,
    /// Index of the next entry `readdir` returns.
    next: usize,
}

/// The streams [`kfd_sim_opendir`] ordered (taken across `fork` by the
/// prepare handler, never together with another lock).
pub(super) static ORDERED_DIRS: std::sync::Mutex<Vec<OrderedDir>> =
    std::sync::Mutex::new(Vec::new());

/// How many streams [`ORDERED_DIRS`] holds: 0 lets `readdir` of every other
/// stream go to libc without taking the lock.
static ORDERED_COUNT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Reads every entry of `dir` and registers them, sorted as kernfs lists
/// them, for [`kfd_sim_readdir`]. On failure the stream is left as libc
/// returns it.
///
/// # Safety
///
/// `dir` must be an open directory stream no other thread uses yet.
unsafe fn order_dir(dir: *mut libc::DIR) {
    let Some(readdir64) = real().readdir64 else {
        return;
    };
    // SAFETY: __errno_location returns the calling thread's errno slot.
    let saved = unsafe { *libc::__errno_location() };
    let mut entries: Vec<libc::dirent64> = Vec::new();
    loop {
        // SAFETY: `dir` is a valid stream (the caller's contract).
        let e = unsafe { readdir64(dir) };
        if e.is_null() {
            break;
        }
        // SAFETY: libc returned a valid entry whose name is NUL-terminated;
        // only the fixed header and the name are read (the record may be
        // shorter than `struct dirent64`).
        let entry = unsafe {
            let mut copy: libc::dirent64 = std::mem::zeroed();
            copy.d_ino = (*e).d_ino;
            copy.d_type = (*e).d_type;
            copy.d_reclen = std::mem::size_of::<libc::dirent64>() as u16;
            let name = CStr::from_ptr((*e).d_name.as_ptr()).to_bytes();
            let n = name.len().min(copy.d_name.len() - 1);
            for (d, s) in copy.d_name.iter_mut().zip(&name[..n]) {
                *d = *s as c_char;
            }
            copy
        };
        entries.push(entry);
    }
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = saved };
    let name = |e: &libc::dirent64| -> Vec<u8> {
        // SAFETY: the copied names are NUL-terminated.
        unsafe { CStr::from_ptr(e.d_name.as_ptr()) }
            .to_bytes()
            .to_vec()
    };
    let dots = |n: &[u8]| match n {
        b"." => 0,
        b".." => 1,
        _ => 2,
    };
    entries.sort_by_cached_key(|e| {
        let n = name(e);
        (dots(&n), crate::sysfs::kernfs_hash(&n), n)
    });
    for (i, e) in entries.iter_mut().enumerate() {
        e.d_off = i as i64 + 1;
    }
    let mut v = lock(&ORDERED_DIRS);
    v.retain(|d| d.dir != dir as usize);
    v.push(OrderedDir {
        dir: dir as usize,
        entries,
        next: 0,
    });
    ORDERED_COUNT.store(v.len(), std::sync::atomic::Ordering::Release);
}

/// Runs `f` on the ordered stream `dir`, if it is one.
fn with_ordered<T>(dir: *mut libc::DIR, f: impl FnOnce(&mut OrderedDir) -> T) -> Option<T> {
    if ORDERED_COUNT.load(std::sync::atomic::Ordering::Acquire) == 0 {
        return None;
    }
    let mut v = lock(&ORDERED_DIRS);
    v.iter_mut().find(|d| d.dir == dir as usize).map(f)
}

/// The next entry of an ordered stream: `Some(NULL)` at its end (errno
/// unchanged), `None` for other streams.
fn ordered_next(dir: *mut libc::DIR) -> Option<*mut libc::dirent64> {
    with_ordered(dir, |d| match d.entries.get_mut(d.next) {
        Some(e) => {
            d.next += 1;
            // The entry stays where it is until the stream is rewound or
            // closed (entries are never added after registration).
            e as *mut libc::dirent64
        }
        None => std::ptr::null_mut(),
    })
}

/// `readdir(3)`: ordered streams list their entries in kernfs order.
///
/// # Safety
///
/// C contract of `readdir`.
#[no_mangle]
pub unsafe extern "C" fn kfd_sim_readdir(dir: *mut libc::DIR) -> *mut libc::dirent {
    const _: () =
        assert!(std::mem::size_of::<libc::dirent>() == std::mem::size_of::<libc::dirent64>());
    match ordered_next(dir) {
        // `struct dirent` and `struct dirent64` are the same on LP64.
        Some(e) => e.cast(),
        None => real_call!(readdir, std::ptr::null_mut(), dir),
    }
}

/// `readdir64(3)`: as [`kfd_sim_readdir`].
///
/// # Safety
///
/// C contract of `readdir64`.
#[no_mangle]
pub unsafe extern "C" fn kfd_sim_readdir64(dir: *mut libc::DIR) -> *mut libc::dirent64 {
    match ordered_next(dir) {
        Some(e) => e,
        None => real_call!(readdir64, std::ptr::null_mut(), dir),
    }
}

/// `rewinddir(3)`: an ordered stream starts again at `.`.
///
/// # Safety
///
/// C contract of `rewinddir`.
#[no_mangle]
pub unsafe extern "C" fn kfd_sim_rewinddir(dir: *mut libc::DIR) {
    let _ = with_ordered(dir, |d| d.next = 0);
    if let Some(f) = real().rewinddir {
        // SAFETY: libc's rewinddir on the caller's stream.
        unsafe { f(dir) };
    }
}

/// `closedir(3)`: forgets an ordered stream, then closes it.
///
/// # Safety
///
/// C contract of `closedir`.
#[no_mangle]
pub unsafe extern "C" fn kfd_sim_closedir(dir: *mut libc::DIR) -> c_int {
    if ORDERED_COUNT.load(std::sync::atomic::Ordering::Acquire) != 0 {
        let mut v = lock(&ORDERED_DIRS);
        v.retain(|d| d.dir != dir as usize);
        ORDERED_COUNT.store(v.len(), std::sync::atomic::Ordering::Release);
    }
    real_call!(closedir, -1, dir)
}

// ---- stat family ---------------------------------------------------------

/// Writes a fake device stat.
///
/// # Safety
///
/// `buf` must be valid for writing a `struct stat64`.
unsafe fn put_stat(buf: *mut libc::stat64, d: Device) -> c_int {
    if buf.is_null() {
        set_errno(Errno::EFAULT);
        return -1;
    }
    // SAFETY: the caller guarantees `buf` is writable.
    unsafe { buf.write(device_stat(d)) };
    0
}

/// `stat` by path, following links.
///
/// # Safety
///
/// C contract of `stat64`.
unsafe fn stat_path(path: *const c_char, buf: *mut libc::stat64, follow: bool) -> c_int {
    // SAFETY: as for open.
    match unsafe { classify(path) } {
        // SAFETY: `buf` per the caller's contract.
        Target::Device(_, d) => unsafe { put_stat(buf, d) },
        Target::Redirect(p) if follow => real_call!(stat64, -1, p.as_ptr(), buf),
        Target::Redirect(p) => real_call!(lstat64, -1, p.as_ptr(), buf),
        Target::Pass if follow => real_call!(stat64, -1, path, buf),
        Target::Pass => real_call!(lstat64, -1, path, buf),
    }
}

/// `fstat` of a descriptor.
///
/// # Safety
///
/// C contract of `fstat64`.
unsafe fn stat_fd(fd: c_int, buf: *mut libc::stat64) -> c_int {
    match fd_device(fd) {
        // SAFETY: `buf` per the caller's contract.
        Some(d) => unsafe { put_stat(buf, d) },
        None => real_call!(fstat64, -1, fd, buf),
    }
}

/// `fstatat` with `AT_EMPTY_PATH` and link-following support.
///
/// # Safety
///
/// C contract of `fstatat64`.
unsafe fn stat_at(
    dirfd: c_int,
    path: *const c_char,
    buf: *mut libc::stat64,
    flags: c_int,
) -> c_int {
    // SAFETY: a non-null `path` is a C string per the caller's contract.
    if flags & libc::AT_EMPTY_PATH != 0 && !path.is_null() && unsafe { *path } == 0 {
        // SAFETY: forwarded contract.
        return unsafe { stat_fd(dirfd, buf) };
    }
    // SAFETY: as for open.
    match unsafe { classify_at(dirfd, path) } {
        // SAFETY: `buf` per the caller's contract.
        Target::Device(_, d) => unsafe { put_stat(buf, d) },
        Target::Redirect(p) => real_call!(fstatat64, -1, dirfd, p.as_ptr(), buf, flags),
        Target::Pass => real_call!(fstatat64, -1, dirfd, path, buf, flags),
    }
}

/// Defines stat-family interposers that only forward to one of the helpers
/// above: each row is `(C parameters) => helper(arguments): names;`, and
/// every name gets that exact C signature, returning `c_int`. The helpers
/// carry the errno behaviour and the re-entrancy guard (`classify*`,
/// `fd_device`); `struct stat` == `struct stat64` on x86-64 (asserted
/// above), so one `*mut libc::stat64` parameter serves both.
macro_rules! stat_interposers {
    ($($params:tt => $helper:ident $args:tt: $($name:ident),+;)*) => {
        $($(
            #[doc = concat!("Stat-family interposer `", stringify!($name), "`.")]
            ///
            /// # Safety
            ///
            /// C contract of the libc function of the same name.
            #[no_mangle]
            pub unsafe extern "C" fn $name $params -> c_int {
                // SAFETY: forwarded contract.
                unsafe { $helper $args }
            }
        )+)*
    };
}

// `stat`, `lstat`, ... are real symbols since glibc 2.33; the versioned
// `__xstat` family serves binaries linked against older glibc (the version
// argument selects the x86-64 `struct stat`, the only one).
stat_interposers! {
    (path: *const c_char, buf: *mut libc::stat64) => stat_path(path, buf, true):
        kfd_sim_stat, kfd_sim_stat64;
    (path: *const c_char, buf: *mut libc::stat64) => stat_path(path, buf, false):
        kfd_sim_lstat, kfd_sim_lstat64;
    (fd: c_int, buf: *mut libc::stat64) => stat_fd(fd, buf):
        kfd_sim_fstat, kfd_sim_fstat64;
    (dirfd: c_int, path: *const c_char, buf: *mut libc::stat64, flags: c_int)
        => stat_at(dirfd, path, buf, flags): kfd_sim_fstatat, kfd_sim_fstatat64;
    (_ver: c_int, path: *const c_char, buf: *mut libc::stat64) => stat_path(path, buf, true):
        kfd_sim___xstat, kfd_sim___xstat64;
    (_ver: c_int, path: *const c_char, buf: *mut libc::stat64) => stat_path(path, buf, false):
        kfd_sim___lxstat, kfd_sim___lxstat64;
    (_ver: c_int, fd: c_int, buf: *mut libc::stat64) => stat_fd(fd, buf):
        kfd_sim___fxstat, kfd_sim___fxstat64;
    (_ver: c_int, dirfd: c_int, path: *const c_char, buf: *mut libc::stat64, flags: c_int)
        => stat_at(dirfd, path, buf, flags): kfd_sim___fxstatat, kfd_sim___fxstatat64;
}

/// `statx(2)`.
///
/// # Safety
///
/// C contract of `statx`.
#[no_mangle]
pub unsafe extern "C" fn kfd_sim_statx(
    dirfd: c_int,
    path: *const c_char,
    flags: c_int,
    mask: c_uint,
    buf: *mut libc::statx,
) -> c_int {
    let put = |d: Device| -> c_int {
        if buf.is_null() {
            set_errno(Errno::EFAULT);
            return -1;
        }
        // SAFETY: `buf` is writable per the caller's contract.
        unsafe { buf.write(device_statx(d)) };
        0
    };
    // SAFETY: a non-null `path` is a C string per the caller's contract.
    if flags & libc::AT_EMPTY_PATH != 0 && !path.is_null() && unsafe { *path } == 0 {
        if let Some(d) = fd_device(dirfd) {
            return put(d);
        }
        return real_call!(statx, -1, dirfd, path, flags, mask, buf);
    }
    // SAFETY: as for open.
    match unsafe { classify_at(dirfd, path) } {
        Target::Device(_, d) => put(d),
        Target::Redirect(p) => real_call!(statx, -1, dirfd, p.as_ptr(), flags, mask, buf),
        Target::Pass => real_call!(statx, -1, dirfd, path, flags, mask, buf),
    }
}

// ---- access, links, realpath ---------------------------------------------

/// `access(2)`.
///
/// # Safety
///
/// C contract of `access`.
#[no_mangle]
pub unsafe extern "C" fn kfd_sim_access(path: *const c_char, mode: c_int) -> c_int {
    // SAFETY: as for open.
    match unsafe { classify(path) } {
        Target::Device(..) => 0,
        Target::Redirect(p) => real_call!(access, -1, p.as_ptr(), mode),
        Target::Pass => real_call!(access, -1, path, mode),
    }
}

/// `faccessat(2)`.
///
/// # Safety
///
/// C contract of `faccessat`.
#[no_mangle]
pub unsafe extern "C" fn kfd_sim_faccessat(
    dirfd: c_int,
    path: *const c_char,
    mode: c_int,
    flags: c_int,
) -> c_int {
    // SAFETY: as for open.
    match unsafe { classify_at(dirfd, path) } {
        Target::Device(..) => 0,
        Target::Redirect(p) => real_call!(faccessat, -1, dirfd, p.as_ptr(), mode, flags),
        Target::Pass => real_call!(faccessat, -1, dirfd, path, mode, flags),
    }
}

/// `euidaccess(3)`.
///
/// # Safety
///
/// C contract of `euidaccess`.
#[no_mangle]
pub unsafe extern "C" fn kfd_sim_euidaccess(path: *const c_char, mode: c_int) -> c_int {
    // SAFETY: as for open.
    match unsafe { classify(path) } {
        Target::Device(..) => 0,
        Target::Redirect(p) => real_call!(euidaccess, -1, p.as_ptr(), mode),
        Target::Pass => real_call!(euidaccess, -1, path, mode),
    }
}

/// `eaccess(3)` (an alias of `euidaccess`).
///
/// # Safety
///
/// C contract of `eaccess`.
#[no_mangle]
pub unsafe extern "C" fn kfd_sim_eaccess(path: *const c_char, mode: c_int) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { kfd_sim_euidaccess(path, mode) }
}

/// `readlink(2)`.
///
/// # Safety
///
/// C contract of `readlink`.
#[no_mangle]
pub unsafe extern "C" fn kfd_sim_readlink(
    path: *const c_char,
    buf: *mut c_char,
    size: size_t,
) -> ssize_t {
    // SAFETY: as for open.
    match unsafe { classify(path) } {
        Target::Device(..) => {
            set_errno(Errno::EINVAL);
            -1
        }
        Target::Redirect(p) => real_call!(readlink, -1, p.as_ptr(), buf, size),
        Target::Pass => real_call!(readlink, -1, path, buf, size),
    }
}

/// `readlinkat(2)`.
///
/// # Safety
///
/// C contract of `readlinkat`.
#[no_mangle]
pub unsafe extern "C" fn kfd_sim_readlinkat(
    dirfd: c_int,
    path: *const c_char,
    buf: *mut c_char,
    size: size_t,
) -> ssize_t {
    // SAFETY: as for open.
    match unsafe { classify_at(dirfd, path) } {
        Target::Device(..) => {
            set_errno(Errno::EINVAL);
            -1
        }
        Target::Redirect(p) => real_call!(readlinkat, -1, dirfd, p.as_ptr(), buf, size),
        Target::Pass => real_call!(readlinkat, -1, dirfd, path, buf, size),
    }
}

/// Removes the render root from the front of a resolved path, so callers
/// see `/sys/...` (which is redirected again when they use it).
///
/// # Safety
///
/// `resolved` must be NULL or a writable NUL-terminated string.
unsafe fn unroot(resolved: *mut c_char) -> *mut c_char {
    if resolved.is_null() {
        return resolved;
    }
    let Some(st) = existing() else {
        return resolved;
    };
    // SAFETY: NUL-terminated per the caller's contract.
    let bytes = unsafe { CStr::from_ptr(resolved) }.to_bytes();
    if let Some(rest) = bytes.strip_prefix(st.root.as_slice()) {
        if rest.first() == Some(&b'/') {
            let n = rest.len();
            // SAFETY: moving the tail (and its NUL) to the front of the same
            // buffer; the regions may overlap, which `copy` allows.
            unsafe { std::ptr::copy(resolved.add(st.root.len()), resolved, n + 1) };
        }
    }
    resolved
}

/// A device path resolves to itself.
///
/// # Safety
///
/// `path` is a C string; `resolved` is NULL or has room for `PATH_MAX`.
unsafe fn realpath_device(path: *const c_char, resolved: *mut c_char) -> *mut c_char {
    if resolved.is_null() {
        // SAFETY: strdup of a C string.
        unsafe { libc::strdup(path) }
    } else {
        // SAFETY: device paths are short; `resolved` holds PATH_MAX bytes.
        unsafe { libc::strcpy(resolved, path) }
    }
}

/// `realpath(3)` (glibc resolves links internally, so the path is
/// rewritten first and the render root removed from the result).
///
/// # Safety
///
/// C contract of `realpath`.
#[no_mangle]
pub unsafe extern "C" fn kfd_sim_realpath(
    path: *const c_char,
    resolved: *mut c_char,
) -> *mut c_char {
    // SAFETY: as for open.
    match unsafe { classify(path) } {
        // SAFETY: `path` is a C string, `resolved` per the contract.
        Target::Device(..) => unsafe { realpath_device(path, resolved) },
        Target::Redirect(p) => {
            let r = real_call!(realpath, std::ptr::null_mut(), p.as_ptr(), resolved);
            // SAFETY: `r` is NULL or the C string realpath produced.
            unsafe { unroot(r) }
        }
        Target::Pass => real_call!(realpath, std::ptr::null_mut(), path, resolved),
    }
}

/// `__realpath_chk` (`_FORTIFY_SOURCE` realpath).
///
/// # Safety
///
/// C contract of `__realpath_chk`.
#[no_mangle]
pub unsafe extern "C" fn kfd_sim___realpath_chk(
    path: *const c_char,
    resolved: *mut c_char,
    resolved_len: size_t,
) -> *mut c_char {
    // SAFETY: as for open.
    match unsafe { classify(path) } {
        // SAFETY: `path` is a C string, `resolved` per the contract.
        Target::Device(..) => unsafe { realpath_device(path, resolved) },
        Target::Redirect(p) => {
            let r = real_call!(
                realpath_chk,
                std::ptr::null_mut(),
                p.as_ptr(),
                resolved,
                resolved_len
            );
            // SAFETY: `r` is NULL or the C string realpath produced.
            unsafe { unroot(r) }
        }
        Target::Pass => real_call!(
            realpath_chk,
            std::ptr::null_mut(),
            path,
            resolved,
            resolved_len
        ),
    }
}

// ---- descriptors ---------------------------------------------------------

/// `ioctl(2)`: simulated descriptors go to the kernel model, the rest to
/// libc.
///
/// # Safety
///
/// C contract of `ioctl`: `arg` valid for what `request` does.
#[no_mangle]
pub unsafe extern "C" fn kfd_sim_ioctl(fd: c_int, request: c_ulong, arg: *mut c_void) -> c_int {
    if !busy() {
        if let Some(st) = existing() {
            // SAFETY: the caller's `arg` is forwarded with its contract.
            match in_sim(|| Ok(unsafe { st.sim.ioctl(fd, request, arg) })) {
                Ok(Some(Ok(v))) => return v,
                Ok(Some(Err(e))) | Err(e) => {
                    set_errno(e);
                    return -1;
                }
                Ok(None) => {}
            }
        }
        if foreign_kfd(fd) {
            set_errno(Errno::EBADF);
            return -1;
        }
    }
    real_call!(ioctl, -1, fd, request, arg)
}

/// `close(2)`: the kernel model sees the close first (it releases the
/// simulated file when its last descriptor goes away).
///
/// # Safety
///
/// C contract of `close`.
#[no_mangle]
pub unsafe extern "C" fn kfd_sim_close(fd: c_int) -> c_int {
    if !busy() {
        if let Some(st) = existing() {
            let _ = in_sim(|| {
                if st.summary.is_some() && st.sim.device_of(fd) == Some(Device::Kfd) {
                    st.write_summary("close-kfd");
                }
                st.sim.on_close(fd);
                Ok(())
            });
        }
    }
    real_call!(close, -1, fd)
}

/// `popen(3)`: rocminfo checks `lsmod | grep amdgpu` before touching
/// /dev/kfd; that one command reads a canned `amdgpu` line.
///
/// # Safety
///
/// C contract of `popen`.
#[no_mangle]
pub unsafe extern "C" fn kfd_sim_popen(cmd: *const c_char, mode: *const c_char) -> *mut FILE {
    if !busy() && !cmd.is_null() {
        // SAFETY: C string per the caller's contract.
        let c = unsafe { CStr::from_ptr(cmd) }.to_bytes();
        // SAFETY: as above.
        let reading = !mode.is_null() && unsafe { *mode } == b'r' as c_char;
        if reading && is_lsmod_amdgpu(c) {
            // SAFETY: a read-only memory stream over a static buffer.
            let f = unsafe {
                libc::fmemopen(
                    LSMOD_AMDGPU.as_ptr() as *mut c_void,
                    LSMOD_AMDGPU.len(),
                    c"r".as_ptr(),
                )
            };
            if !f.is_null() {
                lock(&FAKE_PIPES).push(f as usize);
            }
            return f;
        }
    }
    real_call!(popen, std::ptr::null_mut(), cmd, mode)
}

/// Streams returned by the `popen` shortcut.
pub(super) static FAKE_PIPES: std::sync::Mutex<Vec<usize>> = std::sync::Mutex::new(Vec::new());

/// `pclose(3)`: closes the shortcut's streams (exit status 0).
///
/// # Safety
///
/// C contract of `pclose`.
#[no_mangle]
pub unsafe extern "C" fn kfd_sim_pclose(stream: *mut FILE) -> c_int {
    let ours = {
        let mut v = lock(&FAKE_PIPES);
        match v.iter().position(|p| *p == stream as usize) {
            Some(i) => {
                v.swap_remove(i);
                true
            }
            None => false,
        }
    };
    if ours {
        // SAFETY: `stream` is the fmemopen stream popen returned.
        unsafe { libc::fclose(stream) };
        return 0;
    }
    real_call!(pclose, -1, stream)
}

// ---- memory mappings (the MMU notifier) --------------------------------

/// Tells the simulator that `[addr, addr + len)` is no longer the memory
/// it was (unmapped, or replaced by a `MAP_FIXED` mapping): SVM ranges
/// lose those pages, as the kernel's MMU notifier removes them. The
/// caller's `errno` is kept.
fn notify_unmapped(addr: *mut c_void, len: size_t) {
    if busy() {
        return;
    }
    let Some(st) = existing() else { return };
    // SAFETY: __errno_location returns the calling thread's errno slot.
    let saved = unsafe { *libc::__errno_location() };
    let _ = in_sim(|| {
        st.sim.cpu_unmapped(addr as u64, len as u64);
        Ok(())
    });
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = saved };
}

/// Where an mmap of `fd` at `off` really goes when it is a GEM mmap
/// offset of a simulated render node ([`crate::Sim::gem_mmap_target`]):
/// `None` for every other mmap (one comparison for most).
fn gem_target(
    fd: c_int,
    off: libc::off_t,
    len: size_t,
) -> Option<Result<crate::GemMmapTarget, Errno>> {
    let off = u64::try_from(off).ok()?;
    if fd < 0 || off < crate::drm::GEM_MMAP_BASE || busy() {
        return None;
    }
    let st = existing()?;
    match in_sim(|| Ok(st.sim.gem_mmap_target(fd, off, len as u64))) {
        Ok(t) => t,
        Err(e) => Some(Err(e)),
    }
}

/// Defines `mmap` and `mmap64`: the call goes to libc (for a GEM offset
/// of a simulated render node, to the file holding the object's pages); a
/// successful `MAP_FIXED` mapping (which replaces whatever was mapped
/// there) is reported to the simulator like an unmap of the old memory.
macro_rules! mmap_interposers {
    ($($name:ident => $real:ident;)*) => {$(
        #[doc = concat!("`", stringify!($real), "(2)` interposer.")]
        ///
        /// # Safety
        ///
        /// C contract of the libc function of the same name.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            addr: *mut c_void,
            len: size_t,
            prot: c_int,
            flags: c_int,
            fd: c_int,
            off: libc::off_t,
        ) -> *mut c_void {
            let r = match gem_target(fd, off, len) {
                None => real_call!($real, libc::MAP_FAILED, addr, len, prot, flags, fd, off),
                Some(Ok(t)) => {
                    use std::os::fd::AsRawFd;
                    let (file, at) = (t.fd().as_raw_fd(), t.offset() as libc::off_t);
                    real_call!($real, libc::MAP_FAILED, addr, len, prot, flags, file, at)
                }
                Some(Err(e)) => {
                    set_errno(e);
                    libc::MAP_FAILED
                }
            };
            let replaced = flags & libc::MAP_FIXED != 0 && flags & libc::MAP_FIXED_NOREPLACE == 0;
            if r != libc::MAP_FAILED && replaced {
                notify_unmapped(r, len);
            }
            r
        }
    )*};
}

mmap_interposers! {
    kfd_sim_mmap => mmap;
    kfd_sim_mmap64 => mmap64;
}

/// `munmap(2)`: libc unmaps, then the simulator drops the SVM pages.
///
/// # Safety
///
/// C contract of `munmap`.
#[no_mangle]
pub unsafe extern "C" fn kfd_sim_munmap(addr: *mut c_void, len: size_t) -> c_int {
    let r = real_call!(munmap, -1, addr, len);
    if r == 0 {
        notify_unmapped(addr, len);
    }
    r
}

// ---- the doorbell hook ---------------------------------------------------

/// The C border's doorbell hook (not a libc name): queue `queue_id` of the
/// simulated `/dev/kfd` open as `kfd_fd` has new work, so the engine looks
/// at it now rather than at its next poll. A thunk's
/// `hsaKmtQueueRingDoorbell` calls it after writing the doorbell, found
/// with `dlsym(RTLD_DEFAULT, "kfd_sim_ring_doorbell")` (absent when the
/// simulator is not preloaded). Returns 0, or -1 with `errno` `EBADF`
/// (not a simulated kfd descriptor, or no simulator yet) or `EINVAL` (no
/// such queue).
///
/// # Safety
///
/// None beyond the C calling convention; it takes no pointers.
#[no_mangle]
pub unsafe extern "C" fn kfd_sim_ring_doorbell(kfd_fd: c_int, queue_id: u32) -> c_int {
    let Some(st) = existing() else {
        set_errno(Errno::EBADF);
        return -1;
    };
    match in_sim(|| st.sim.ring_doorbell(kfd_fd, queue_id)) {
        Ok(()) => 0,
        Err(e) => {
            set_errno(e);
            -1
        }
    }
}
