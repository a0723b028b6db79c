//! Access to "user" memory: the memory of the calling process that ioctl
//! arguments point into.
//!
//! The kernel reaches user memory through `copy_from_user`/`copy_to_user`,
//! which fail with `EFAULT` instead of faulting. The model does the same
//! with `process_vm_readv`/`process_vm_writev` on its own pid: a garbage
//! pointer makes the syscall fail and the ioctl returns `EFAULT`, the host
//! process never takes a segfault.

use std::mem::size_of;

use kfd_sys::{Errno, PAGE_SIZE};
use zerocopy::{FromBytes, Immutable, IntoBytes};

fn own_pid() -> libc::pid_t {
    // SAFETY: getpid has no preconditions and no memory effects.
    unsafe { libc::getpid() }
}

/// Copies `buf.len()` bytes from user address `addr` into `buf`.
pub(crate) fn read(addr: u64, buf: &mut [u8]) -> Result<(), Errno> {
    if buf.is_empty() {
        return Ok(());
    }
    if addr == 0 || addr.checked_add(buf.len() as u64).is_none() {
        return Err(Errno::EFAULT);
    }
    let local = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let remote = libc::iovec {
        iov_base: addr as usize as *mut libc::c_void,
        iov_len: buf.len(),
    };
    // SAFETY: `local` describes `buf`, which we own exclusively for its
    // whole length; the remote range is only read by the kernel, which
    // validates it and reports EFAULT instead of faulting.
    let n = unsafe { libc::process_vm_readv(own_pid(), &local, 1, &remote, 1, 0) };
    if n < 0 || n as usize != buf.len() {
        return Err(Errno::EFAULT);
    }
    Ok(())
}

/// Copies `buf` to user address `addr`.
pub(crate) fn write(addr: u64, buf: &[u8]) -> Result<(), Errno> {
    if buf.is_empty() {
        return Ok(());
    }
    if addr == 0 || addr.checked_add(buf.len() as u64).is_none() {
        return Err(Errno::EFAULT);
    }
    let local = libc::iovec {
        iov_base: buf.as_ptr() as *mut libc::c_void,
        iov_len: buf.len(),
    };
    let remote = libc::iovec {
        iov_base: addr as usize as *mut libc::c_void,
        iov_len: buf.len(),
    };
    // SAFETY: `local` describes `buf`, which the kernel only reads; the
    // remote range is validated by the kernel (EFAULT if not writable).
    let n = unsafe { libc::process_vm_writev(own_pid(), &local, 1, &remote, 1, 0) };
    if n < 0 || n as usize != buf.len() {
        return Err(Errno::EFAULT);
    }
    Ok(())
}

/// The size of `n` values of `size` bytes each, as the kernel bounds an
/// array it copies in: `EFAULT` if it overflows, `ENOMEM` past 1 GiB.
fn array_bytes(n: usize, size: usize) -> Result<usize, Errno> {
    let bytes = n.checked_mul(size).ok_or(Errno::EFAULT)?;
    if bytes > (1 << 30) {
        return Err(Errno::ENOMEM);
    }
    Ok(bytes)
}

/// Reads `n` consecutive values of `size` bytes each from user memory,
/// as bytes (see [`array_bytes`]).
pub(crate) fn read_records(addr: u64, n: usize, size: usize) -> Result<Vec<u8>, Errno> {
    let mut raw = vec![0u8; array_bytes(n, size)?];
    read(addr, &mut raw)?;
    Ok(raw)
}

/// Reads `n` consecutive `T`s from user memory.
pub(crate) fn read_array<T: FromBytes + IntoBytes + Clone>(
    addr: u64,
    n: usize,
) -> Result<Vec<T>, Errno> {
    array_bytes(n, size_of::<T>())?;
    let mut v = vec![T::new_zeroed(); n];
    read(addr, v.as_mut_bytes())?;
    Ok(v)
}

/// Writes a slice of `T`s to user memory.
pub(crate) fn write_array<T: IntoBytes + Immutable>(addr: u64, items: &[T]) -> Result<(), Errno> {
    write(addr, items.as_bytes())
}

/// True if every page of `[addr, addr+len)` is mapped in this process
/// (whatever its protection), like the kernel's VMA lookups.
pub(crate) fn is_mapped(addr: u64, len: u64) -> bool {
    if len == 0 {
        return true;
    }
    let Some(end) = addr.checked_add(len) else {
        return false;
    };
    let mut start = addr & !(PAGE_SIZE - 1);
    let mut vec = vec![0u8; 4096];
    while start < end {
        let chunk = (end - start).min(PAGE_SIZE * vec.len() as u64);
        // SAFETY: mincore only writes one byte per page of the range into
        // `vec`, which has room for `chunk / PAGE_SIZE` (rounded up) entries; it
        // fails with ENOMEM for unmapped ranges instead of faulting.
        let r = unsafe {
            libc::mincore(
                start as usize as *mut libc::c_void,
                chunk as usize,
                vec.as_mut_ptr(),
            )
        };
        if r != 0 {
            return false;
        }
        start += chunk;
    }
    true
}

/// Reading an ioctl's argument struct from its argument bytes, for
/// every plain-data type ([`FromBytes`]).
pub(crate) trait FromBuf: FromBytes + Sized {
    /// Reads a value from the start of `buf`; the bytes of a shorter
    /// `buf` come first, the rest is zero.
    fn from_buf(buf: &[u8]) -> Self {
        match Self::read_from_prefix(buf) {
            Ok((v, _)) => v,
            Err(_) => {
                let mut whole = buf.to_vec();
                whole.resize(size_of::<Self>(), 0);
                Self::read_from_bytes(&whole).unwrap_or_else(|_| Self::new_zeroed())
            }
        }
    }
}

impl<T: FromBytes> FromBuf for T {}

/// Writing an ioctl's argument struct back to its argument bytes, for
/// every type without padding ([`IntoBytes`]).
pub(crate) trait ToBuf: IntoBytes + Immutable {
    /// Writes the value to the start of `buf` (as much as fits).
    fn to_buf(&self, buf: &mut [u8]) {
        let bytes = self.as_bytes();
        let n = bytes.len().min(buf.len());
        buf[..n].copy_from_slice(&bytes[..n]);
    }
}

impl<T: IntoBytes + Immutable + ?Sized> ToBuf for T {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_pointers_are_efault() {
        let mut b = [0u8; 8];
        assert_eq!(read(0, &mut b), Err(Errno::EFAULT));
        assert_eq!(read(8, &mut b), Err(Errno::EFAULT));
        assert_eq!(write(0xdead_0000_0000, &b), Err(Errno::EFAULT));
        let x = 0x1122_3344_5566_7788u64;
        let got: Vec<u64> = read_array(&x as *const u64 as u64, 1).unwrap();
        assert_eq!(got, [x]);
        assert!(is_mapped(&x as *const u64 as u64, 8));
        assert!(!is_mapped(0x10, 8));
    }

    /// Argument bytes shorter than the struct read as zero past their
    /// end; a write-back writes what fits.
    #[test]
    fn short_argument_bytes() {
        let a = kfd_sys::kfd::kfd_ioctl_get_version_args {
            major_version: 1,
            minor_version: 17,
        };
        let mut b = [0xffu8; 4];
        a.to_buf(&mut b);
        assert_eq!(b, 1u32.to_ne_bytes());
        let back = kfd_sys::kfd::kfd_ioctl_get_version_args::from_buf(&b);
        assert_eq!((back.major_version, back.minor_version), (1, 0));
        let whole = kfd_sys::kfd::kfd_ioctl_get_version_args::from_buf(a.as_bytes());
        assert_eq!(whole, a);
    }
}
