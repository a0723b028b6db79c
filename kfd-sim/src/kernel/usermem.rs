//! Access to "user" memory: the memory of the calling process that ioctl
//! arguments point into.
//!
//! The kernel reaches user memory through `copy_from_user`/`copy_to_user`,
//! which fail with `EFAULT` instead of faulting. The model does the same
//! with `process_vm_readv`/`process_vm_writev` on its own pid: a garbage
//! pointer makes the syscall fail and the ioctl returns `EFAULT`, the host
//! process never takes a segfault.

use kfd_sys::{Errno, PAGE_SIZE};

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

/// Reads a `T` from user memory.
#[allow(dead_code)]
pub(crate) fn read_pod<T: Pod>(addr: u64) -> Result<T, Errno> {
    let mut v = T::zeroed();
    read(addr, v.as_bytes_mut())?;
    Ok(v)
}

/// Reads `n` consecutive `T`s from user memory.
pub(crate) fn read_array<T: Pod>(addr: u64, n: usize) -> Result<Vec<T>, Errno> {
    let bytes = n
        .checked_mul(std::mem::size_of::<T>())
        .ok_or(Errno::EFAULT)?;
    if bytes > (1 << 30) {
        return Err(Errno::ENOMEM);
    }
    let mut v = vec![T::zeroed(); n];
    // SAFETY: a Vec<T> of POD values is `bytes` contiguous initialised
    // bytes; every bit pattern is a valid T (see `Pod`).
    let raw = unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), bytes) };
    read(addr, raw)?;
    Ok(v)
}

/// Writes a slice of `T`s to user memory.
pub(crate) fn write_array<T: Pod>(addr: u64, items: &[T]) -> Result<(), Errno> {
    let bytes = std::mem::size_of_val(items);
    // SAFETY: POD values are plain initialised bytes.
    let raw = unsafe { std::slice::from_raw_parts(items.as_ptr().cast::<u8>(), bytes) };
    write(addr, raw)
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

/// Plain-old-data: `#[repr(C)]` structs made only of integers (and arrays
/// or unions of such), for which every bit pattern is a valid value and
/// every byte of a value is initialised.
///
/// # Safety
///
/// Implement only for types with no references, no pointers the model
/// follows, no niches, and no implicit padding: [`Pod::as_bytes`] reads
/// every byte, and a padding byte is uninitialised. For a struct, its
/// fields must be `Pod` and their sizes must add up to its size; for a
/// union, its members must be `Pod` and one must span the whole union (and
/// values must not be made from a smaller member). The kfd uapi impls in
/// `uapi_pod` check this at compile time.
pub(crate) unsafe trait Pod: Copy + 'static {
    /// The all-zero value.
    fn zeroed() -> Self {
        // SAFETY: every bit pattern, including all zeros, is valid (trait
        // contract).
        unsafe { std::mem::zeroed() }
    }

    /// The value as mutable bytes.
    fn as_bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: `self` is valid for size_of::<Self>() bytes and any byte
        // pattern written through the slice is a valid Self.
        unsafe {
            std::slice::from_raw_parts_mut(
                (self as *mut Self).cast::<u8>(),
                std::mem::size_of::<Self>(),
            )
        }
    }

    /// The value as bytes.
    fn as_bytes(&self) -> &[u8] {
        // SAFETY: `self` is valid for size_of::<Self>() bytes, all of them
        // initialised: a Pod type has no implicit padding (trait contract,
        // checked for the kfd structs in `uapi_pod`).
        unsafe {
            std::slice::from_raw_parts(
                (self as *const Self).cast::<u8>(),
                std::mem::size_of::<Self>(),
            )
        }
    }

    /// Reads a value from the start of `buf` (which must be long enough).
    fn from_buf(buf: &[u8]) -> Self {
        let mut v = Self::zeroed();
        let n = std::mem::size_of::<Self>().min(buf.len());
        v.as_bytes_mut()[..n].copy_from_slice(&buf[..n]);
        v
    }

    /// Writes the value to the start of `buf`.
    fn to_buf(&self, buf: &mut [u8]) {
        let n = std::mem::size_of::<Self>().min(buf.len());
        buf[..n].copy_from_slice(&self.as_bytes()[..n]);
    }
}

// SAFETY: integers.
unsafe impl Pod for u32 {}
// SAFETY: integers.
unsafe impl Pod for u64 {}
// SAFETY: integers.
unsafe impl Pod for i32 {}
// SAFETY: an array has no padding (its element's size is a multiple of
// the element's alignment) and its elements are Pod.
unsafe impl<T: Pod, const N: usize> Pod for [T; N] {}

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
        let got: u64 = read_pod(&x as *const u64 as u64).unwrap();
        assert_eq!(got, x);
        assert!(is_mapped(&x as *const u64 as u64, 8));
        assert!(!is_mapped(0x10, 8));
    }
}
