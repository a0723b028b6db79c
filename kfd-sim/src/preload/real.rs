//! The real libc functions behind the interposers, resolved once with
//! `dlsym(RTLD_NEXT, ...)`.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::OnceLock;

use libc::{mode_t, size_t, ssize_t, FILE};

type OpenFn = unsafe extern "C" fn(*const c_char, c_int, mode_t) -> c_int;
type Open2Fn = unsafe extern "C" fn(*const c_char, c_int) -> c_int;
type OpenatFn = unsafe extern "C" fn(c_int, *const c_char, c_int, mode_t) -> c_int;
type Openat2Fn = unsafe extern "C" fn(c_int, *const c_char, c_int) -> c_int;
type FopenFn = unsafe extern "C" fn(*const c_char, *const c_char) -> *mut FILE;
type OpendirFn = unsafe extern "C" fn(*const c_char) -> *mut libc::DIR;
type ReaddirFn = unsafe extern "C" fn(*mut libc::DIR) -> *mut libc::dirent;
type Readdir64Fn = unsafe extern "C" fn(*mut libc::DIR) -> *mut libc::dirent64;
type RewinddirFn = unsafe extern "C" fn(*mut libc::DIR);
type ClosedirFn = unsafe extern "C" fn(*mut libc::DIR) -> c_int;
type StatFn = unsafe extern "C" fn(*const c_char, *mut libc::stat64) -> c_int;
type FstatFn = unsafe extern "C" fn(c_int, *mut libc::stat64) -> c_int;
type FstatatFn = unsafe extern "C" fn(c_int, *const c_char, *mut libc::stat64, c_int) -> c_int;
type StatxFn =
    unsafe extern "C" fn(c_int, *const c_char, c_int, libc::c_uint, *mut libc::statx) -> c_int;
type AccessFn = unsafe extern "C" fn(*const c_char, c_int) -> c_int;
type FaccessatFn = unsafe extern "C" fn(c_int, *const c_char, c_int, c_int) -> c_int;
type ReadlinkFn = unsafe extern "C" fn(*const c_char, *mut c_char, size_t) -> ssize_t;
type ReadlinkatFn = unsafe extern "C" fn(c_int, *const c_char, *mut c_char, size_t) -> ssize_t;
type RealpathFn = unsafe extern "C" fn(*const c_char, *mut c_char) -> *mut c_char;
type RealpathChkFn = unsafe extern "C" fn(*const c_char, *mut c_char, size_t) -> *mut c_char;
type IoctlFn = unsafe extern "C" fn(c_int, libc::c_ulong, *mut c_void) -> c_int;
type CloseFn = unsafe extern "C" fn(c_int) -> c_int;
type PopenFn = unsafe extern "C" fn(*const c_char, *const c_char) -> *mut FILE;
type PcloseFn = unsafe extern "C" fn(*mut FILE) -> c_int;
type MmapFn =
    unsafe extern "C" fn(*mut c_void, size_t, c_int, c_int, c_int, libc::off_t) -> *mut c_void;
type MunmapFn = unsafe extern "C" fn(*mut c_void, size_t) -> c_int;

/// Pointers to the next definition (libc's) of every interposed function.
/// `None` where the C library has no such symbol.
#[derive(Debug)]
pub(crate) struct Real {
    pub open: Option<OpenFn>,
    pub open64: Option<OpenFn>,
    pub open_2: Option<Open2Fn>,
    pub open64_2: Option<Open2Fn>,
    pub openat: Option<OpenatFn>,
    pub openat64: Option<OpenatFn>,
    pub openat_2: Option<Openat2Fn>,
    pub openat64_2: Option<Openat2Fn>,
    pub fopen: Option<FopenFn>,
    pub fopen64: Option<FopenFn>,
    pub opendir: Option<OpendirFn>,
    pub readdir: Option<ReaddirFn>,
    pub readdir64: Option<Readdir64Fn>,
    pub rewinddir: Option<RewinddirFn>,
    pub closedir: Option<ClosedirFn>,
    pub stat64: Option<StatFn>,
    pub lstat64: Option<StatFn>,
    pub fstat64: Option<FstatFn>,
    pub fstatat64: Option<FstatatFn>,
    pub statx: Option<StatxFn>,
    pub access: Option<AccessFn>,
    pub faccessat: Option<FaccessatFn>,
    pub euidaccess: Option<AccessFn>,
    pub readlink: Option<ReadlinkFn>,
    pub readlinkat: Option<ReadlinkatFn>,
    pub realpath: Option<RealpathFn>,
    pub realpath_chk: Option<RealpathChkFn>,
    pub ioctl: Option<IoctlFn>,
    pub close: Option<CloseFn>,
    pub popen: Option<PopenFn>,
    pub pclose: Option<PcloseFn>,
    pub mmap: Option<MmapFn>,
    pub mmap64: Option<MmapFn>,
    pub munmap: Option<MunmapFn>,
}

fn sym<T: Copy>(name: &CStr) -> Option<T> {
    assert_eq!(std::mem::size_of::<T>(), std::mem::size_of::<*mut c_void>());
    // SAFETY: dlsym with a valid NUL-terminated name; RTLD_NEXT searches the
    // objects loaded after this one (libc).
    let p = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr()) };
    if p.is_null() {
        None
    } else {
        // SAFETY: T is a function pointer type of the same size as the
        // symbol address, and the caller names the matching C prototype.
        Some(unsafe { std::mem::transmute_copy::<*mut c_void, T>(&p) })
    }
}

/// The real functions (resolved on first use).
pub(crate) fn real() -> &'static Real {
    static REAL: OnceLock<Real> = OnceLock::new();
    REAL.get_or_init(|| Real {
        open: sym(c"open"),
        open64: sym(c"open64"),
        open_2: sym(c"__open_2"),
        open64_2: sym(c"__open64_2"),
        openat: sym(c"openat"),
        openat64: sym(c"openat64"),
        openat_2: sym(c"__openat_2"),
        openat64_2: sym(c"__openat64_2"),
        fopen: sym(c"fopen"),
        fopen64: sym(c"fopen64"),
        opendir: sym(c"opendir"),
        readdir: sym(c"readdir"),
        readdir64: sym(c"readdir64"),
        rewinddir: sym(c"rewinddir"),
        closedir: sym(c"closedir"),
        stat64: sym(c"stat64"),
        lstat64: sym(c"lstat64"),
        fstat64: sym(c"fstat64"),
        fstatat64: sym(c"fstatat64"),
        statx: sym(c"statx"),
        access: sym(c"access"),
        faccessat: sym(c"faccessat"),
        euidaccess: sym(c"euidaccess"),
        readlink: sym(c"readlink"),
        readlinkat: sym(c"readlinkat"),
        realpath: sym(c"realpath"),
        realpath_chk: sym(c"__realpath_chk"),
        ioctl: sym(c"ioctl"),
        close: sym(c"close"),
        popen: sym(c"popen"),
        pclose: sym(c"pclose"),
        mmap: sym(c"mmap"),
        mmap64: sym(c"mmap64"),
        munmap: sym(c"munmap"),
    })
}
