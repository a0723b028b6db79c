//! Process-level hooks and descriptor calls the thunk needs from libc.

use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

use crate::Errno;

/// A new descriptor from a raw `libc` result: the errno on failure.
fn owned(r: libc::c_long) -> Result<OwnedFd, Errno> {
    if r < 0 {
        return Err(Errno::last());
    }
    let fd = RawFd::try_from(r).map_err(|_| Errno::EBADF)?;
    // SAFETY: the call just created `fd` for us; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// A close-on-exec duplicate of this process's descriptor *number* `fd`,
/// which the caller does not own (a share handle names the exporter's
/// dma-buf by number): `EBADF` if nothing is open there. Duplicating
/// touches no memory; whether the descriptor is the one meant is for the
/// caller to check (e.g. with [`inode`]).
pub fn dup_number(fd: RawFd) -> Result<OwnedFd, Errno> {
    // SAFETY: F_DUPFD_CLOEXEC on a number that may or may not be open: at
    // worst it fails with EBADF; no memory is touched.
    owned(unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) }.into())
}

/// `pidfd_open(2)`: a descriptor for process `pid`.
pub fn pidfd_open(pid: u32) -> Result<OwnedFd, Errno> {
    let pid = libc::pid_t::try_from(pid).map_err(|_| Errno::ESRCH)?;
    // SAFETY: a raw syscall with integer arguments only.
    owned(unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) })
}

/// `pidfd_getfd(2)`: a duplicate of descriptor number `fd` of the
/// process `pidfd` names (needs ptrace permission over it).
pub fn pidfd_getfd(pidfd: BorrowedFd<'_>, fd: RawFd) -> Result<OwnedFd, Errno> {
    // SAFETY: a raw syscall with integer arguments only (a live pidfd).
    owned(unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), fd, 0) })
}

/// The inode number of the file `fd` refers to (`fstat(2)`).
pub fn inode(fd: BorrowedFd<'_>) -> Result<u64, Errno> {
    Ok(nix::sys::stat::fstat(fd)?.st_ino)
}

/// The size of the file behind `fd` (`lseek(fd, 0, SEEK_END)`, as
/// libdrm sizes a dma-buf); the file position is put back at 0.
pub fn file_size(fd: BorrowedFd<'_>) -> Result<u64, Errno> {
    // SAFETY: lseek on a live descriptor; no memory is involved.
    let end = unsafe { libc::lseek(fd.as_raw_fd(), 0, libc::SEEK_END) };
    if end < 0 {
        return Err(Errno::last());
    }
    // SAFETY: as above.
    unsafe { libc::lseek(fd.as_raw_fd(), 0, libc::SEEK_SET) };
    u64::try_from(end).map_err(|_| Errno::EOVERFLOW)
}

extern "C" {
    // POSIX, from libc (glibc links it from libc_nonshared.a with the
    // calling object's `__dso_handle`).
    fn pthread_atfork(
        prepare: Option<extern "C" fn()>,
        parent: Option<extern "C" fn()>,
        child: Option<extern "C" fn()>,
    ) -> libc::c_int;
}

/// Registers `handler` to run in the child after every `fork()` (POSIX
/// `pthread_atfork` with only a child handler). The handler runs in a
/// process that may have been forked from a multithreaded parent: it must
/// only do async-signal-safe work (an atomic store is fine; locks and
/// allocation are not).
pub fn on_fork_child(handler: extern "C" fn()) -> Result<(), Errno> {
    // SAFETY: `handler` is a plain function pointer, valid for the life of
    // the process; no prepare/parent handlers are registered.
    let r = unsafe { pthread_atfork(None, None, Some(handler)) };
    if r == 0 {
        Ok(())
    } else {
        Err(Errno(r))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn descriptors_by_number_and_by_process() {
        let f = std::fs::File::open("/dev/null").unwrap();
        let dup = dup_number(f.as_raw_fd()).unwrap();
        assert_ne!(dup.as_raw_fd(), f.as_raw_fd());
        assert_eq!(inode(dup.as_fd()), inode(f.as_fd()));
        let pidfd = pidfd_open(std::process::id()).unwrap();
        let again = pidfd_getfd(pidfd.as_fd(), f.as_raw_fd()).unwrap();
        assert_eq!(inode(again.as_fd()), inode(f.as_fd()));
        let closed = dup.as_raw_fd();
        drop(dup);
        drop(again);
        assert_eq!(dup_number(closed).unwrap_err(), Errno::EBADF);
        assert_eq!(pidfd_open(u32::MAX).unwrap_err(), Errno::ESRCH);
    }
    use std::sync::atomic::{AtomicU32, Ordering};

    static SEEN: AtomicU32 = AtomicU32::new(0);

    extern "C" fn child() {
        SEEN.store(1, Ordering::Relaxed);
    }

    #[test]
    fn child_handler_runs_in_the_child_only() {
        on_fork_child(child).unwrap();
        // SAFETY: the child only reads an atomic and exits.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            let code = if SEEN.load(Ordering::Relaxed) == 1 {
                0
            } else {
                1
            };
            // SAFETY: exit the child without running the parent's atexit
            // handlers or test harness.
            unsafe { libc::_exit(code) };
        }
        let mut status = 0;
        // SAFETY: waiting for our own child.
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
        assert_eq!(SEEN.load(Ordering::Relaxed), 0, "not in the parent");
    }
}
