//! Typed ioctl requests.
//!
//! Every request is declared once, as a constant of type [`Ioctl<T>`] whose
//! type parameter is the argument struct the kernel expects. Code above
//! kfd-sys never writes a request number by hand: it passes the constant to
//! [`ioctl`] (or [`ioctl_plain`] for arguments without embedded pointers),
//! which retries on `EINTR`/`EAGAIN` as the C thunk does.

use std::fmt;
use std::marker::PhantomData;
use std::os::fd::BorrowedFd;

use crate::{Driver, Errno};

/// `_IOC_NONE`: no data transfer.
pub const IOC_NONE: u32 = 0;
/// `_IOC_WRITE`: userspace writes, the kernel reads.
pub const IOC_WRITE: u32 = 1;
/// `_IOC_READ`: the kernel writes, userspace reads.
pub const IOC_READ: u32 = 2;

const IOC_NRSHIFT: u32 = 0;
const IOC_TYPESHIFT: u32 = 8;
const IOC_SIZESHIFT: u32 = 16;
const IOC_DIRSHIFT: u32 = 30;
const IOC_SIZEMASK: u32 = (1 << 14) - 1;

/// Builds an ioctl request number the way the kernel's `_IOC()` macro does.
pub const fn ioc(dir: u32, ty: u8, nr: u8, size: usize) -> u32 {
    assert!(size as u32 <= IOC_SIZEMASK, "ioctl argument too large");
    (dir << IOC_DIRSHIFT)
        | ((ty as u32) << IOC_TYPESHIFT)
        | ((nr as u32) << IOC_NRSHIFT)
        | ((size as u32) << IOC_SIZESHIFT)
}

/// The command number (`_IOC_NR`) of a request.
pub const fn ioc_nr(request: u32) -> u8 {
    (request >> IOC_NRSHIFT) as u8
}

/// The type byte (`_IOC_TYPE`) of a request, e.g. `b'K'` for KFD.
pub const fn ioc_type(request: u32) -> u8 {
    (request >> IOC_TYPESHIFT) as u8
}

/// The argument size (`_IOC_SIZE`) encoded in a request.
pub const fn ioc_size(request: u32) -> usize {
    ((request >> IOC_SIZESHIFT) & IOC_SIZEMASK) as usize
}

/// The direction bits (`_IOC_DIR`) of a request.
pub const fn ioc_dir(request: u32) -> u32 {
    request >> IOC_DIRSHIFT
}

/// A typed ioctl request: the request number, its name as the C header
/// spells it, and (as a type) the argument struct it carries.
pub struct Ioctl<T> {
    request: u32,
    name: &'static str,
    marker: PhantomData<fn(&mut T)>,
}

impl<T> Ioctl<T> {
    /// Declares a request. Use the `iow!`/`ior!`/`iowr!`-style helpers in
    /// this crate rather than calling this directly.
    pub const fn new(dir: u32, ty: u8, nr: u8, name: &'static str) -> Self {
        Ioctl {
            request: ioc(dir, ty, nr, std::mem::size_of::<T>()),
            name,
            marker: PhantomData,
        }
    }

    /// The request number passed to `ioctl(2)`.
    pub const fn request(&self) -> u32 {
        self.request
    }

    /// The command number (`_IOC_NR`).
    pub const fn nr(&self) -> u8 {
        ioc_nr(self.request)
    }

    /// The name of the request as the C header spells it
    /// (e.g. `AMDKFD_IOC_GET_VERSION`).
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// The request without its argument type: what an error names as the
    /// request that failed, comparable with `==` to another request's.
    pub const fn info(&self) -> IoctlInfo {
        IoctlInfo {
            name: self.name,
            request: self.request,
        }
    }
}

impl<T> Clone for Ioctl<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Ioctl<T> {}

impl<T> fmt::Debug for Ioctl<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({:#010x})", self.name, self.request)
    }
}

/// One entry of a request table: name, number, and the argument size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoctlInfo {
    /// The C name, e.g. `AMDKFD_IOC_GET_VERSION`.
    pub name: &'static str,
    /// The request number.
    pub request: u32,
}

/// The request's name, as the C header spells it.
impl fmt::Display for IoctlInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

impl IoctlInfo {
    /// The command number (`_IOC_NR`).
    pub const fn nr(&self) -> u8 {
        ioc_nr(self.request)
    }
}

/// Marker for argument structs that carry no user-space pointers which
/// the kernel dereferences: issuing such a request cannot make the kernel
/// read or write memory other than the argument struct itself.
///
/// # Safety
///
/// Implement only for `#[repr(C)]` structs whose every field is a plain
/// value (ids, sizes, flags, addresses the kernel only records but does not
/// access through the calling process), and whose layout matches the C
/// header exactly.
pub unsafe trait PlainArgs {}

/// Issues a typed ioctl through `driver`, retrying on `EINTR` and `EAGAIN`
/// as libhsakmt's `kmtIoctl` does.
///
/// # Safety
///
/// Every pointer embedded in `arg` (as a `u64` address field) must be valid
/// for the reads and writes the kernel performs for this request, with the
/// sizes the other fields of `arg` announce.
pub unsafe fn ioctl<T>(
    driver: &dyn Driver,
    fd: BorrowedFd<'_>,
    request: Ioctl<T>,
    arg: &mut T,
) -> Result<i32, Errno> {
    loop {
        // SAFETY: `arg` is a live, exclusive reference to a `T`, the struct
        // this request was declared with, so the size encoded in the
        // request matches; the caller guarantees embedded pointers.
        let r = unsafe {
            driver.ioctl(
                fd,
                request.request() as libc::c_ulong,
                arg as *mut T as *mut libc::c_void,
            )
        };
        match r {
            Err(Errno::EINTR) | Err(Errno::EAGAIN) => continue,
            other => return other,
        }
    }
}

/// Issues a typed ioctl whose argument carries no embedded pointers.
pub fn ioctl_plain<T: PlainArgs>(
    driver: &dyn Driver,
    fd: BorrowedFd<'_>,
    request: Ioctl<T>,
    arg: &mut T,
) -> Result<i32, Errno> {
    // SAFETY: `T: PlainArgs` promises there are no pointers for the kernel
    // to follow; the argument itself is a valid exclusive reference.
    unsafe { ioctl(driver, fd, request, arg) }
}

/// Declares typed ioctl constants and a table listing all of them.
///
/// ```ignore
/// ioctls! {
///     /// Doc.
///     AMDKFD_IOC_GET_VERSION: ior(b'K', 0x01, kfd_ioctl_get_version_args);
///     table KFD_IOCTLS;
/// }
/// ```
#[macro_export]
macro_rules! ioctls {
    (
        table $table:ident;
        $(
            $(#[$meta:meta])*
            $name:ident : $dir:ident($ty:expr, $nr:expr, $arg:ty);
        )*
    ) => {
        $(
            $(#[$meta])*
            pub const $name: $crate::ioctl::Ioctl<$arg> =
                $crate::ioctl::Ioctl::new($crate::ioctls!(@dir $dir), $ty, $nr, stringify!($name));
        )*

        /// Every request declared in this module, in declaration order.
        pub const $table: &[$crate::ioctl::IoctlInfo] = &[
            $(
                $crate::ioctl::IoctlInfo { name: stringify!($name), request: $name.request() },
            )*
        ];
    };
    (@dir io) => { $crate::ioctl::IOC_NONE };
    (@dir iow) => { $crate::ioctl::IOC_WRITE };
    (@dir ior) => { $crate::ioctl::IOC_READ };
    (@dir iowr) => { $crate::ioctl::IOC_READ | $crate::ioctl::IOC_WRITE };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[repr(C)]
    struct Eight {
        a: u32,
        b: u32,
    }

    #[test]
    fn encoding_matches_kernel_macros() {
        // AMDKFD_IOC_GET_VERSION = _IOR('K', 0x01, 8 bytes) = 0x80084b01.
        let r: Ioctl<Eight> = Ioctl::new(IOC_READ, b'K', 0x01, "GET_VERSION");
        assert_eq!(r.request(), 0x8008_4b01);
        assert_eq!(r.nr(), 1);
        assert_eq!(ioc_type(r.request()), b'K');
        assert_eq!(ioc_size(r.request()), 8);
        assert_eq!(ioc_dir(r.request()), IOC_READ);
        let w: Ioctl<Eight> = Ioctl::new(IOC_READ | IOC_WRITE, b'K', 0x27, "CREATE_PROCESS");
        assert_eq!(w.request(), 0xC008_4B27);
    }
}
