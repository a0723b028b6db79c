//! Real descriptors for simulated device files.
//!
//! Every simulated `/dev/kfd` or render-node open is a uniquely named
//! memfd (`kfd-sim:kfd:<n>`, `kfd-sim:renderD128:<n>`), so `mmap` of it
//! works natively and the model sees CPU writes. Files are identified by
//! (st_dev, st_ino) from a raw `fstat` syscall (in LD_PRELOAD mode libc's
//! fstat is interposed), and descriptors referring to a file are counted by
//! scanning `/proc/self/fd` with raw syscalls.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU64, Ordering};

use kfd_sys::sync::lock;
use kfd_sys::Errno;

/// Identity of an open file: device and inode numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId {
    /// `st_dev`.
    pub dev: u64,
    /// `st_ino`.
    pub ino: u64,
}

static NEXT_NAME: AtomicU64 = AtomicU64::new(1);

fn last_errno() -> Errno {
    Errno::last()
}

/// A memfd the model created, with its unique name.
#[derive(Debug)]
pub(crate) struct Memfd {
    /// The model's own descriptor (kept for pread/pwrite/fallocate).
    pub fd: OwnedFd,
    /// The memfd name (without the `memfd:` prefix).
    pub name: String,
    /// Identity.
    pub id: FileId,
}

/// Descriptors the model itself holds (every machine of this OS process):
/// they never count as a user's descriptor of a file.
static MODEL_FDS: std::sync::Mutex<std::collections::BTreeSet<RawFd>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());

/// Locks the registry of the model's own descriptors.
pub(crate) fn model_fds() -> std::sync::MutexGuard<'static, std::collections::BTreeSet<RawFd>> {
    lock(&MODEL_FDS)
}

impl Drop for Memfd {
    fn drop(&mut self) {
        // Forget the number before the descriptor is closed (the field is
        // dropped after this), so a reused number is never mistaken.
        model_fds().remove(&self.fd.as_raw_fd());
    }
}

impl Memfd {
    /// Creates a sparse memfd of `size` bytes named `kfd-sim:<tag>:<n>`.
    pub fn create(tag: &str, size: u64) -> Result<Memfd, Errno> {
        let n = NEXT_NAME.fetch_add(1, Ordering::Relaxed);
        let name = format!("kfd-sim:{tag}:{n}");
        let cname = CString::new(name.clone()).map_err(|_| Errno::EINVAL)?;
        // SAFETY: raw memfd_create with a valid NUL-terminated name; no
        // memory is shared with the kernel beyond the name.
        let r = unsafe {
            libc::syscall(
                libc::SYS_memfd_create,
                cname.as_ptr(),
                libc::MFD_CLOEXEC as libc::c_uint,
            )
        };
        if r < 0 {
            return Err(last_errno());
        }
        // SAFETY: `r` is a fresh descriptor we own.
        let fd = unsafe { OwnedFd::from_raw_fd(r as RawFd) };
        // SAFETY: ftruncate on our own descriptor has no memory effects.
        if unsafe { libc::ftruncate(fd.as_raw_fd(), size as libc::off_t) } != 0 {
            return Err(last_errno());
        }
        let id = file_id(fd.as_raw_fd())?;
        model_fds().insert(fd.as_raw_fd());
        Ok(Memfd { fd, name, id })
    }

    /// A new descriptor of the same open file (close-on-exec).
    pub fn dup(&self) -> Result<OwnedFd, Errno> {
        // SAFETY: F_DUPFD_CLOEXEC on our live descriptor.
        let r = unsafe { libc::fcntl(self.fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 3) };
        if r < 0 {
            return Err(last_errno());
        }
        // SAFETY: fresh descriptor.
        Ok(unsafe { OwnedFd::from_raw_fd(r) })
    }

    /// Takes a new descriptor of `fd` (a memfd the model did not create,
    /// named `name`) as a model file.
    pub fn adopt(fd: RawFd, name: &str) -> Option<Memfd> {
        // SAFETY: F_DUPFD_CLOEXEC on a caller's descriptor; a bad one gives
        // EBADF.
        let r = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
        if r < 0 {
            return None;
        }
        // SAFETY: fresh descriptor we own.
        let own = unsafe { OwnedFd::from_raw_fd(r) };
        let id = file_id(own.as_raw_fd()).ok()?;
        model_fds().insert(own.as_raw_fd());
        Some(Memfd {
            fd: own,
            name: name.to_string(),
            id,
        })
    }

    /// The file size (raw fstat).
    pub fn size(&self) -> Result<u64, Errno> {
        // SAFETY: an all-zero `stat` is a valid value to be overwritten.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: raw fstat writes one `struct stat` into `st`.
        let r = unsafe {
            libc::syscall(
                libc::SYS_fstat,
                self.fd.as_raw_fd(),
                &mut st as *mut libc::stat,
            )
        };
        if r < 0 {
            return Err(last_errno());
        }
        Ok(st.st_size as u64)
    }

    /// A new descriptor of the same open file, close-on-exec or not.
    pub fn dup_flags(&self, cloexec: bool) -> Result<OwnedFd, Errno> {
        let cmd = if cloexec {
            libc::F_DUPFD_CLOEXEC
        } else {
            libc::F_DUPFD
        };
        // SAFETY: F_DUPFD(_CLOEXEC) on our live descriptor.
        let r = unsafe { libc::fcntl(self.fd.as_raw_fd(), cmd, 3) };
        if r < 0 {
            return Err(last_errno());
        }
        // SAFETY: fresh descriptor.
        Ok(unsafe { OwnedFd::from_raw_fd(r) })
    }

    /// Writes `data` at `offset`.
    pub fn pwrite(&self, offset: u64, data: &[u8]) -> Result<(), Errno> {
        let mut done = 0usize;
        while done < data.len() {
            // SAFETY: the source slice is valid for the given length.
            let r = unsafe {
                libc::pwrite(
                    self.fd.as_raw_fd(),
                    data[done..].as_ptr().cast(),
                    data.len() - done,
                    (offset + done as u64) as libc::off_t,
                )
            };
            if r <= 0 {
                return Err(last_errno());
            }
            done += r as usize;
        }
        Ok(())
    }

    /// Reads into `buf` from `offset` (holes read as zeros).
    #[allow(dead_code)]
    pub fn pread(&self, offset: u64, buf: &mut [u8]) -> Result<(), Errno> {
        let mut done = 0usize;
        while done < buf.len() {
            // SAFETY: the destination slice is valid and exclusively ours.
            let r = unsafe {
                libc::pread(
                    self.fd.as_raw_fd(),
                    buf[done..].as_mut_ptr().cast(),
                    buf.len() - done,
                    (offset + done as u64) as libc::off_t,
                )
            };
            if r < 0 {
                return Err(last_errno());
            }
            if r == 0 {
                buf[done..].fill(0);
                break;
            }
            done += r as usize;
        }
        Ok(())
    }

    /// Gives the pages of `[offset, offset+len)` back (reads as zeros after).
    pub fn punch_hole(&self, offset: u64, len: u64) {
        if len == 0 {
            return;
        }
        // SAFETY: fallocate on our own descriptor; no memory effects.
        unsafe {
            libc::fallocate(
                self.fd.as_raw_fd(),
                libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                offset as libc::off_t,
                len as libc::off_t,
            );
        }
    }

    /// The `readlink` text of `/proc/self/fd/N` for descriptors of this file.
    pub fn link_text(&self) -> String {
        format!("/memfd:{} (deleted)", self.name)
    }

    /// Sets the user extended attribute `user.<name>` of the file: state
    /// that travels with the file into every OS process it is passed to.
    /// `EOPNOTSUPP` on kernels whose shmem has no user xattrs (before 6.6).
    pub fn set_xattr(&self, name: &str, value: &[u8]) -> Result<(), Errno> {
        let key = CString::new(format!("user.{name}")).map_err(|_| Errno::EINVAL)?;
        // SAFETY: our live descriptor, a NUL-terminated key and a value
        // slice the kernel only reads.
        let r = unsafe {
            libc::fsetxattr(
                self.fd.as_raw_fd(),
                key.as_ptr(),
                value.as_ptr().cast(),
                value.len(),
                0,
            )
        };
        if r < 0 {
            return Err(last_errno());
        }
        Ok(())
    }

    /// The value of `user.<name>` (at most `max` bytes), `None` if the file
    /// has no such attribute.
    pub fn xattr(&self, name: &str, max: usize) -> Result<Option<Vec<u8>>, Errno> {
        let key = CString::new(format!("user.{name}")).map_err(|_| Errno::EINVAL)?;
        let mut buf = vec![0u8; max];
        // SAFETY: our live descriptor, a NUL-terminated key and a buffer of
        // `max` writable bytes.
        let r = unsafe {
            libc::fgetxattr(
                self.fd.as_raw_fd(),
                key.as_ptr(),
                buf.as_mut_ptr().cast(),
                buf.len(),
            )
        };
        if r < 0 {
            return match last_errno() {
                Errno::ENODATA => Ok(None),
                e => Err(e),
            };
        }
        buf.truncate(r as usize);
        Ok(Some(buf))
    }
}

/// (st_dev, st_ino) of `fd` via the raw fstat syscall.
pub(crate) fn file_id(fd: RawFd) -> Result<FileId, Errno> {
    // SAFETY: an all-zero `stat` is a valid value to be overwritten.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: raw fstat writes one `struct stat` into `st`, which is valid
    // and exclusively borrowed; bad descriptors give EBADF.
    let r = unsafe { libc::syscall(libc::SYS_fstat, fd, &mut st as *mut libc::stat) };
    if r < 0 {
        return Err(last_errno());
    }
    Ok(FileId {
        dev: st.st_dev,
        ino: st.st_ino,
    })
}

/// Descriptor numbers of this process whose `/proc/self/fd` link is
/// `link`, except those in `exclude` and the model's own descriptors.
pub(crate) fn descriptors_with_link(link: &str, exclude: &[RawFd]) -> Vec<RawFd> {
    let mut out = Vec::new();
    let own = model_fds().clone();
    let path = b"/proc/self/fd\0";
    // SAFETY: raw openat with a NUL-terminated path; returns a descriptor
    // we own or a negative error.
    let dir = unsafe {
        libc::syscall(
            libc::SYS_openat,
            libc::AT_FDCWD,
            path.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if dir < 0 {
        return out;
    }
    // SAFETY: fresh descriptor we own; closed on drop.
    let dir = unsafe { OwnedFd::from_raw_fd(dir as RawFd) };
    let mut buf = vec![0u8; 16384];
    loop {
        // SAFETY: getdents64 writes at most buf.len() bytes into buf.
        let n = unsafe {
            libc::syscall(
                libc::SYS_getdents64,
                dir.as_raw_fd(),
                buf.as_mut_ptr(),
                buf.len(),
            )
        };
        if n <= 0 {
            break;
        }
        let n = n as usize;
        let mut off = 0usize;
        while off + 19 <= n {
            let reclen = u16::from_ne_bytes([buf[off + 16], buf[off + 17]]) as usize;
            if reclen == 0 || off + reclen > n {
                break;
            }
            let name_bytes = &buf[off + 19..off + reclen];
            let end = name_bytes
                .iter()
                .position(|&b| b == 0)
                .unwrap_or(name_bytes.len());
            let name = &name_bytes[..end];
            off += reclen;
            let Some(num) = std::str::from_utf8(name)
                .ok()
                .and_then(|s| s.parse::<RawFd>().ok())
            else {
                continue;
            };
            if num == dir.as_raw_fd() || exclude.contains(&num) || own.contains(&num) {
                continue;
            }
            let mut cname = name.to_vec();
            cname.push(0);
            let mut target = [0u8; 256];
            // SAFETY: readlinkat writes at most target.len() bytes into
            // `target`; the name is NUL-terminated.
            let len = unsafe {
                libc::syscall(
                    libc::SYS_readlinkat,
                    dir.as_raw_fd(),
                    cname.as_ptr(),
                    target.as_mut_ptr(),
                    target.len(),
                )
            };
            if len > 0 && &target[..len as usize] == link.as_bytes() {
                out.push(num);
            }
        }
    }
    out
}

/// Opens `path` with a raw syscall (in LD_PRELOAD mode libc's open is
/// interposed).
fn raw_open(path: &str, flags: libc::c_int) -> Result<OwnedFd, Errno> {
    let c = CString::new(path).map_err(|_| Errno::EINVAL)?;
    // SAFETY: raw openat with a NUL-terminated path; returns a descriptor
    // we own or a negative error.
    let r = unsafe { libc::syscall(libc::SYS_openat, libc::AT_FDCWD, c.as_ptr(), flags) };
    if r < 0 {
        return Err(last_errno());
    }
    // SAFETY: fresh descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(r as RawFd) })
}

/// The whole contents of a /proc file (raw syscalls).
fn read_proc(path: &str) -> Result<Vec<u8>, Errno> {
    let f = raw_open(path, libc::O_RDONLY | libc::O_CLOEXEC)?;
    let mut out = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        // SAFETY: read writes at most buf.len() bytes into buf.
        let n =
            unsafe { libc::syscall(libc::SYS_read, f.as_raw_fd(), buf.as_mut_ptr(), buf.len()) };
        if n < 0 {
            return Err(last_errno());
        }
        if n == 0 {
            return Ok(out);
        }
        out.extend_from_slice(&buf[..n as usize]);
    }
}

/// True if `fd` is a simulated `/dev/kfd` of any machine (its memfd is
/// named `kfd-sim:kfd:<n>`), whether or not this process's model knows it.
pub(crate) fn is_kfd_memfd(fd: RawFd) -> bool {
    fd_link(fd).is_some_and(|l| l.starts_with("/memfd:kfd-sim:kfd:"))
}

/// The `/proc/self/fd/<fd>` link text of a descriptor.
pub(crate) fn fd_link(fd: RawFd) -> Option<String> {
    let path = CString::new(format!("/proc/self/fd/{fd}")).ok()?;
    let mut target = [0u8; 512];
    // SAFETY: readlinkat writes at most target.len() bytes into `target`;
    // the path is NUL-terminated.
    let len = unsafe {
        libc::syscall(
            libc::SYS_readlinkat,
            libc::AT_FDCWD,
            path.as_ptr(),
            target.as_mut_ptr(),
            target.len(),
        )
    };
    if len <= 0 {
        return None;
    }
    String::from_utf8(target[..len as usize].to_vec()).ok()
}

/// Copies the data extents of `src[off, off+len)` to `dst[0, len)`; holes
/// are skipped, so sparse buffers stay sparse.
pub(crate) fn copy_data(src: &Memfd, off: u64, dst: &Memfd, len: u64) -> Result<(), Errno> {
    // A separate open file description: seeking must not move the file
    // position of the user's descriptors.
    let f = raw_open(
        &format!("/proc/self/fd/{}", src.fd.as_raw_fd()),
        libc::O_RDONLY | libc::O_CLOEXEC,
    )?;
    let end = off + len;
    let mut pos = off;
    let mut buf = vec![0u8; 1 << 20];
    while pos < end {
        // SAFETY: lseek on our own descriptor; no memory effects.
        let data = unsafe { libc::lseek(f.as_raw_fd(), pos as libc::off_t, libc::SEEK_DATA) };
        if data < 0 {
            let e = last_errno();
            if e.0 == libc::ENXIO {
                break;
            }
            return Err(e);
        }
        let data = data as u64;
        if data >= end {
            break;
        }
        // SAFETY: as above.
        let hole = unsafe { libc::lseek(f.as_raw_fd(), data as libc::off_t, libc::SEEK_HOLE) };
        let hole = if hole < 0 {
            end
        } else {
            (hole as u64).min(end)
        };
        let mut at = data;
        while at < hole {
            let n = ((hole - at) as usize).min(buf.len());
            src.pread(at, &mut buf[..n])?;
            dst.pwrite(at - off, &buf[..n])?;
            at += n as u64;
        }
        pos = hole;
    }
    Ok(())
}

/// One shared mapping (VMA) of a memfd in this OS process.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SharedMapping {
    /// First address of the VMA.
    pub start: u64,
    /// Its length in bytes.
    pub len: u64,
    /// The file offset mapped at `start`.
    pub file_off: u64,
    /// `PROT_*` bits.
    pub prot: libc::c_int,
}

/// Every shared mapping of `src` in this OS process, from
/// `/proc/self/maps` (matched by memfd name and inode). Private mappings
/// are left out.
pub(crate) fn shared_mappings(src: &Memfd) -> Result<Vec<SharedMapping>, Errno> {
    let maps = read_proc("/proc/self/maps")?;
    let maps = String::from_utf8_lossy(&maps);
    let want = src.link_text();
    let mut out = Vec::new();
    for line in maps.lines() {
        let mut it = line.splitn(6, ' ');
        let (Some(range), Some(perms), Some(foff), Some(_dev), Some(ino)) =
            (it.next(), it.next(), it.next(), it.next(), it.next())
        else {
            continue;
        };
        let path = it.next().unwrap_or("").trim_start();
        if path != want || ino.parse::<u64>().ok() != Some(src.id.ino) {
            continue;
        }
        let p = perms.as_bytes();
        if p.len() < 4 || p[3] != b's' {
            continue;
        }
        let Some((a, b)) = range.split_once('-') else {
            continue;
        };
        let (Ok(a), Ok(b), Ok(fo)) = (
            u64::from_str_radix(a, 16),
            u64::from_str_radix(b, 16),
            u64::from_str_radix(foff, 16),
        ) else {
            continue;
        };
        let mut prot = 0;
        if p[0] == b'r' {
            prot |= libc::PROT_READ;
        }
        if p[1] == b'w' {
            prot |= libc::PROT_WRITE;
        }
        if p[2] == b'x' {
            prot |= libc::PROT_EXEC;
        }
        out.push(SharedMapping {
            start: a,
            len: b.saturating_sub(a),
            file_off: fo,
            prot,
        });
    }
    Ok(out)
}

/// One shared mapping of a memfd range found in `/proc/self/maps`.
#[derive(Debug)]
struct Hit {
    vma_start: u64,
    addr: u64,
    len: u64,
    dst_off: u64,
    prot: libc::c_int,
}

/// Re-points every shared CPU mapping of `src[off, off+len)` in this OS
/// process at the same bytes of `dst` (offset 0 = `off`), keeping the
/// protection and `MADV_DONTFORK`. Private mappings are left alone.
///
/// A write through an old mapping that races with the move may be lost.
pub(crate) fn remap_shared(src: &Memfd, off: u64, len: u64, dst: &Memfd) -> Result<(), Errno> {
    let mut hits = Vec::new();
    for m in shared_mappings(src)? {
        let lo = m.file_off.max(off);
        let hi = (m.file_off + m.len).min(off + len);
        if lo >= hi {
            continue;
        }
        hits.push(Hit {
            vma_start: m.start,
            addr: m.start + (lo - m.file_off),
            len: hi - lo,
            dst_off: lo - off,
            prot: m.prot,
        });
    }
    if hits.is_empty() {
        return Ok(());
    }
    // VMAs marked "dc" (MADV_DONTFORK) in smaps.
    let mut dontfork = std::collections::BTreeSet::new();
    if let Ok(smaps) = read_proc("/proc/self/smaps") {
        let smaps = String::from_utf8_lossy(&smaps);
        let mut cur = None;
        for line in smaps.lines() {
            if let Some(flags) = line.strip_prefix("VmFlags:") {
                if flags.split_whitespace().any(|f| f == "dc") {
                    if let Some(c) = cur {
                        dontfork.insert(c);
                    }
                }
            } else if let Some((a, _)) = line.split(' ').next().and_then(|r| r.split_once('-')) {
                if let Ok(a) = u64::from_str_radix(a, 16) {
                    cur = Some(a);
                }
            }
        }
    }
    for h in hits {
        // SAFETY: MAP_FIXED over a range that is, right now, a shared
        // mapping of the same buffer bytes; the new mapping shows the same
        // contents (just copied), so memory the caller owns keeps its
        // meaning. No Rust reference into it is held by the model.
        let r = unsafe {
            libc::mmap(
                h.addr as usize as *mut libc::c_void,
                h.len as usize,
                h.prot,
                libc::MAP_SHARED | libc::MAP_FIXED,
                dst.fd.as_raw_fd(),
                h.dst_off as libc::off_t,
            )
        };
        if r == libc::MAP_FAILED {
            return Err(last_errno());
        }
        if dontfork.contains(&h.vma_start) {
            // SAFETY: madvise on the mapping just made; no memory effects.
            unsafe {
                libc::madvise(
                    h.addr as usize as *mut libc::c_void,
                    h.len as usize,
                    libc::MADV_DONTFORK,
                )
            };
        }
    }
    Ok(())
}

/// A shared mapping of `len` bytes of a memfd from a page-aligned offset,
/// owned by the model: the shader machine's view of a buffer's pages
/// (loads, stores and atomics straight on memory, no system call per
/// access). Unmapped on drop; the memfd stays open while it lives.
#[derive(Debug)]
pub(crate) struct RegionMap {
    ptr: std::ptr::NonNull<u8>,
    len: usize,
    _file: std::sync::Arc<Memfd>,
}

// SAFETY: the mapping is plain shared memory owned by this value; the
// shader machine accesses it only atomically (kfd_gpu::mem::Span).
unsafe impl Send for RegionMap {}
// SAFETY: as for `Send`.
unsafe impl Sync for RegionMap {}

impl RegionMap {
    /// Maps `len` bytes of `file` from `offset` (a multiple of the page
    /// size). The caller keeps the range within the file's size.
    pub fn new(file: std::sync::Arc<Memfd>, offset: u64, len: u64) -> Result<RegionMap, Errno> {
        let len = usize::try_from(len).map_err(|_| Errno::ENOMEM)?;
        if len == 0 || offset % 4096 != 0 {
            return Err(Errno::EINVAL);
        }
        // SAFETY: a fresh shared mapping of our own memfd at a kernel-chosen
        // address; nothing else refers to that address range.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.fd.as_raw_fd(),
                offset as libc::off_t,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(last_errno());
        }
        let ptr = std::ptr::NonNull::new(p.cast::<u8>()).ok_or(Errno::ENOMEM)?;
        Ok(RegionMap {
            ptr,
            len,
            _file: file,
        })
    }

    /// The first mapped byte.
    pub fn ptr(&self) -> std::ptr::NonNull<u8> {
        self.ptr
    }

    /// Bytes mapped.
    pub fn len(&self) -> u64 {
        self.len as u64
    }
}

impl Drop for RegionMap {
    fn drop(&mut self) {
        // SAFETY: unmaps the range this value mapped; spans into it are
        // only used while the value lives (kfd-sim's shader memory keeps
        // it for the whole dispatch).
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}
