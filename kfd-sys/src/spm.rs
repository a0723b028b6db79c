//! Safe ROCm `AMDKFD_IOC_RLC_SPM` (streaming performance monitor).
//!
//! `KFD_IOCTL_SPM_OP_SET_DEST_BUF` hands the kernel a user buffer that it
//! keeps writing into *after the call returns*: ROCm's `kfd_spm.c` copies
//! the SPM ring into it from a work item (under the process's mm) until the
//! buffer is full, replaced by another SET_DEST_BUF, or SPM is stopped
//! (SET_DEST_BUF with address 0) or released. So a plain `&mut [u8]` cannot
//! be passed: the borrow would end while the kernel still writes.
//!
//! Instead the buffer is an [`SpmBuffer`] (owned memory, or foreign memory
//! vouched for by an `unsafe` constructor), and an [`SpmStream`] holds the
//! buffer the kernel may be writing for as long as it may be writing it.
//! Nothing outside the stream can reach that buffer; it is handed back
//! only after a successful call that ended the kernel's use of it.
//!
//! Acquire and release carry no pointer ([`acquire`], [`release`]).
//! Nothing here maps errors or checks versions.

use std::fmt;
use std::ptr::NonNull;
use std::sync::Arc;

use crate::kfd::{self, kfd_ioctl_spm_args};
use crate::{DeviceFile, Errno};

/// Memory SPM data can stream into: `len` bytes, either owned by this
/// value ([`SpmBuffer::zeroed`]) or foreign ([`SpmBuffer::from_raw`], for
/// the C border).
pub struct SpmBuffer {
    ptr: NonNull<u8>,
    len: u32,
    /// Allocated by `zeroed` as a `Box<[u8]>` of `len` bytes, freed on drop.
    owned: bool,
}

// SAFETY: an SpmBuffer is the only handle to its bytes (owned like a
// `Box<[u8]>`, or foreign memory whose `from_raw` contract gives it the
// same exclusivity from any thread), so moving or sharing it between
// threads is as sound as for `Box<[u8]>`.
unsafe impl Send for SpmBuffer {}
// SAFETY: `&SpmBuffer` only gives shared reads (`as_slice`).
unsafe impl Sync for SpmBuffer {}

impl SpmBuffer {
    /// A new owned buffer of `len` zero bytes.
    pub fn zeroed(len: u32) -> SpmBuffer {
        let boxed: Box<[u8]> = vec![0u8; len as usize].into_boxed_slice();
        let ptr = NonNull::new(Box::into_raw(boxed).cast::<u8>()).expect("Box is non-null");
        SpmBuffer {
            ptr,
            len,
            owned: true,
        }
    }

    /// Foreign memory as a buffer (the C API's destination); `None` for a
    /// null `ptr`. Dropping the buffer leaves the memory alone.
    ///
    /// # Safety
    ///
    /// `ptr` must be null, or valid for reads and writes of `len` bytes
    /// from now until the returned value is dropped, and in that time be
    /// written by nothing but the kernel (SPM) and read by nothing but
    /// this value. Passing it to [`SpmStream::set_dest_buffer`] keeps it
    /// alive until the kernel has stopped writing.
    pub unsafe fn from_raw(ptr: *mut u8, len: u32) -> Option<SpmBuffer> {
        NonNull::new(ptr).map(|ptr| SpmBuffer {
            ptr,
            len,
            owned: false,
        })
    }

    /// The size in bytes.
    pub fn len(&self) -> u32 {
        self.len
    }

    /// Whether the buffer has no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes. Only a buffer the kernel no longer writes can be reached
    /// (a registered one is held inside its [`SpmStream`]).
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: `ptr` is valid for `len` bytes (own allocation, or the
        // `from_raw` contract) and nothing writes them while `self` is
        // borrowed: the kernel has let go of any buffer a caller can hold.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len as usize) }
    }
}

impl Drop for SpmBuffer {
    fn drop(&mut self) {
        if self.owned {
            let slice = std::ptr::slice_from_raw_parts_mut(self.ptr.as_ptr(), self.len as usize);
            // SAFETY: `owned` buffers come from `Box::into_raw` of a
            // `Box<[u8]>` of exactly `len` bytes in `zeroed`, freed once.
            drop(unsafe { Box::from_raw(slice) });
        }
    }
}

impl fmt::Debug for SpmBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SpmBuffer")
            .field("ptr", &self.ptr)
            .field("len", &self.len)
            .field("owned", &self.owned)
            .finish()
    }
}

/// Issues `AMDKFD_IOC_RLC_SPM` with an argument that carries no buffer.
fn spm_plain(file: &DeviceFile, args: &mut kfd_ioctl_spm_args) -> Result<(), Errno> {
    debug_assert_eq!(args.dest_buf, 0);
    // SAFETY: `dest_buf` is 0: the kernel follows no pointer and writes
    // only the argument struct (for SET_DEST_BUF, 0 stops streaming).
    unsafe { file.ioctl(kfd::AMDKFD_IOC_RLC_SPM, args) }.map(drop)
}

/// `KFD_IOCTL_SPM_OP_ACQUIRE`: takes exclusive use of SPM on `gpu_id`.
pub fn acquire(file: &DeviceFile, gpu_id: u32) -> Result<(), Errno> {
    spm_plain(
        file,
        &mut kfd_ioctl_spm_args {
            op: kfd::rocm::KFD_IOCTL_SPM_OP_ACQUIRE,
            gpu_id,
            ..Default::default()
        },
    )
}

/// `KFD_IOCTL_SPM_OP_RELEASE`: gives SPM on `gpu_id` back. A buffer held
/// by an [`SpmStream`] stays held; prefer [`SpmStream::release`], which
/// hands it back.
pub fn release(file: &DeviceFile, gpu_id: u32) -> Result<(), Errno> {
    spm_plain(
        file,
        &mut kfd_ioctl_spm_args {
            op: kfd::rocm::KFD_IOCTL_SPM_OP_RELEASE,
            gpu_id,
            ..Default::default()
        },
    )
}

/// The destination-buffer side of SPM on one GPU of one KFD file: holds
/// the buffer the kernel may be writing.
///
/// Dropping a stream that holds a buffer stops streaming (SET_DEST_BUF
/// with address 0) and frees the buffer; if the kernel refuses that, the
/// buffer is leaked rather than freed under the kernel's writes.
pub struct SpmStream {
    file: Arc<DeviceFile>,
    gpu_id: u32,
    current: Option<SpmBuffer>,
}

impl fmt::Debug for SpmStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SpmStream")
            .field("gpu_id", &self.gpu_id)
            .field("current", &self.current)
            .finish()
    }
}

impl SpmStream {
    /// A stream for `gpu_id` on `file`, holding no buffer yet.
    pub fn new(file: Arc<DeviceFile>, gpu_id: u32) -> SpmStream {
        SpmStream {
            file,
            gpu_id,
            current: None,
        }
    }

    /// The device.
    pub fn gpu_id(&self) -> u32 {
        self.gpu_id
    }

    /// Whether the stream holds a buffer the kernel may be writing.
    pub fn has_buffer(&self) -> bool {
        self.current.is_some()
    }

    /// `KFD_IOCTL_SPM_OP_SET_DEST_BUF`: waits up to `timeout_ms` for the
    /// current buffer to fill, then streams into `dest` (or stops, for
    /// `None`). Returns the answered argument struct (`bytes_copied`,
    /// `has_data_loss`, `timeout` = time left) and the previous buffer,
    /// which the kernel no longer writes.
    ///
    /// On failure the kernel has not taken `dest` (`kfd_spm.c` registers
    /// a buffer only as the last step of a successful call); it comes
    /// back with the errno, and the current buffer stays held.
    #[allow(clippy::type_complexity)]
    pub fn set_dest_buffer(
        &mut self,
        dest: Option<SpmBuffer>,
        timeout_ms: u32,
    ) -> Result<(kfd_ioctl_spm_args, Option<SpmBuffer>), (Errno, Option<SpmBuffer>)> {
        let mut args = kfd_ioctl_spm_args {
            dest_buf: dest.as_ref().map_or(0, |b| b.ptr.as_ptr() as u64),
            buf_size: dest.as_ref().map_or(0, |b| b.len),
            op: kfd::rocm::KFD_IOCTL_SPM_OP_SET_DEST_BUF,
            timeout: timeout_ms,
            gpu_id: self.gpu_id,
            ..Default::default()
        };
        // SAFETY: `dest_buf`/`buf_size` are 0/0 or the address and exact
        // length of `dest`'s bytes (valid for writes: own allocation or
        // the `from_raw` contract). The kernel writes at most `buf_size`
        // bytes there, during this call and afterwards; on success `dest`
        // is moved into `self.current`, where nothing else can reach it,
        // and stays there until a later successful SET_DEST_BUF or
        // RELEASE ends the kernel's use of it (or `Drop` stops streaming,
        // or leaks it). The buffer it replaces is returned only now, after
        // the kernel answered this SET_DEST_BUF, which ends the use of any
        // previous buffer of this process and device.
        match unsafe { self.file.ioctl(kfd::AMDKFD_IOC_RLC_SPM, &mut args) } {
            Ok(_) => {
                let previous = std::mem::replace(&mut self.current, dest);
                Ok((args, previous))
            }
            Err(errno) => Err((errno, dest)),
        }
    }

    /// `KFD_IOCTL_SPM_OP_RELEASE`: gives SPM back and hands back the
    /// buffer it was streaming into (the kernel stops writing on release).
    pub fn release(&mut self) -> Result<Option<SpmBuffer>, Errno> {
        release(&self.file, self.gpu_id)?;
        Ok(self.current.take())
    }
}

impl Drop for SpmStream {
    fn drop(&mut self) {
        if self.current.is_some() {
            if let Err((_, _)) = self.set_dest_buffer(None, 0) {
                // The kernel may still write into it: never free it.
                std::mem::forget(self.current.take());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{FakeKfd, Model};

    /// Records the `(dest_buf, buf_size)` of each SET_DEST_BUF; refuses
    /// everything once `refuse` is set.
    #[derive(Debug, Default)]
    struct Spm {
        dests: Vec<(u64, u32)>,
        refuse: bool,
    }

    impl Model for Spm {
        unsafe fn ioctl(
            &mut self,
            _: (u32, u32),
            nr: u8,
            arg: *mut libc::c_void,
        ) -> Result<i32, Errno> {
            assert_eq!(nr, kfd::AMDKFD_IOC_RLC_SPM.nr());
            if self.refuse {
                return Err(Errno::EINVAL);
            }
            // SAFETY: RLC_SPM's argument.
            let a = unsafe { &mut *(arg as *mut kfd_ioctl_spm_args) };
            if a.op == kfd::rocm::KFD_IOCTL_SPM_OP_SET_DEST_BUF {
                self.dests.push((a.dest_buf, a.buf_size));
                a.bytes_copied = 8;
            }
            Ok(0)
        }
    }

    #[test]
    fn stream_holds_the_buffer_until_the_kernel_lets_go() {
        let fake = FakeKfd::new(1, 17, Spm::default());
        let mut s = SpmStream::new(fake.open(), 7);
        let a = SpmBuffer::zeroed(64);
        let a_addr = a.ptr.as_ptr() as u64;
        let (args, prev) = s.set_dest_buffer(Some(a), 10).unwrap();
        assert!(prev.is_none() && s.has_buffer());
        assert_eq!(args.bytes_copied, 8);
        let (_, prev) = s.set_dest_buffer(Some(SpmBuffer::zeroed(32)), 10).unwrap();
        let prev = prev.expect("the first buffer comes back");
        assert_eq!((prev.ptr.as_ptr() as u64, prev.len()), (a_addr, 64));
        assert_eq!(prev.as_slice(), &[0u8; 64][..]);
        assert_eq!(fake.lock().dests[0], (a_addr, 64));
        assert_eq!(fake.lock().dests[1].1, 32);
        // Failure: the new buffer comes back, the current one stays.
        fake.lock().refuse = true;
        let (errno, back) = s
            .set_dest_buffer(Some(SpmBuffer::zeroed(16)), 0)
            .unwrap_err();
        assert_eq!((errno, back.map(|b| b.len())), (Errno::EINVAL, Some(16)));
        assert!(s.has_buffer());
        // Drop cannot stop streaming: the buffer is leaked, not freed.
        drop(s);
        fake.lock().refuse = false;
        let mut s = SpmStream::new(fake.open(), 7);
        s.set_dest_buffer(Some(SpmBuffer::zeroed(16)), 0).unwrap();
        assert_eq!(s.release().unwrap().map(|b| b.len()), Some(16));
        assert!(!s.has_buffer());
        drop(s);
        assert_eq!(
            fake.lock().dests.len(),
            3,
            "no stop on drop without a buffer"
        );
        // SAFETY: null is always accepted.
        assert!(unsafe { SpmBuffer::from_raw(std::ptr::null_mut(), 4) }.is_none());
    }
}
