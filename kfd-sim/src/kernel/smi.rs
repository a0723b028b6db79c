//! SMI event files (`AMDKFD_IOC_SMI_EVENTS`, `kfd_smi_events.c`).
//!
//! The kernel hands out an anonymous file per request. Its client writes
//! a 64-bit event mask (`KFD_SMI_EVENT_MASK_FROM_INDEX(i)` bits) and reads
//! text lines, one per event: the event number in hex, a space, then the
//! event's `KFD_EVENT_FMT_*` payload. Reads do not block (`EAGAIN` when
//! nothing is queued) and `poll` reports `POLLIN` while something is.
//!
//! Here the file is one end of a non-blocking `AF_UNIX` stream socket
//! pair, so `write`, `read`, `poll` and `close` need no interposition: the
//! model keeps the other end, drains the mask words the client wrote
//! before each delivery (the last whole word wins, as the kernel's
//! `WRITE_ONCE` of the last write does) and writes the lines there. A full
//! socket drops the line, as a full kernel fifo does.
//!
//! What the model raises:
//!
//! | event | when | payload (`KFD_EVENT_FMT_*`) |
//! |---|---|---|
//! | `MIGRATE_START`, `MIGRATE_END` | an SVM `SET_ATTR` moves a range's prefetch location (trigger 0, prefetch) | `ns -pid @start(pages) from->to prefetch:preferred trigger` and `ns -pid @start(pages) from->to trigger error` |
//! | `VMFAULT` | a GPU memory fault of a queue (the engine, as the kernel's interrupt handler) | `pid:task`, to the faulting process's clients of the GPU |
//! | `VMFAULT` | [`crate::Sim::signal_vm_fault`] | `pid:task`, to every client of the GPU |
//! | `GPU_PRE_RESET`, `GPU_POST_RESET` | [`super::Machine::gpu_reset`] (and [`crate::Sim::gpu_reset`]) | `seq cause`, to every client of the GPU |
//!
//! Differences from the kernel: the `KFD_SMI_EVENT_ALL_PROCESS` bit is not
//! refused with `EPERM` (the mask is read lazily, after the write
//! returned); it only widens delivery to other processes' events, as it
//! would for a privileged client.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Mutex;

use kfd_sys::kfd::{KFD_SMI_EVENT_ALL_PROCESS, KFD_SMI_EVENT_MSG_SIZE};
use kfd_sys::Errno;

use super::lock;
use super::memfd::{file_id, FileId};

/// One SMI client file.
#[derive(Debug)]
pub(crate) struct SmiFile {
    /// Identity of the client's end.
    pub id: FileId,
    /// `/proc/self/fd` link text of the client's end.
    link: String,
    /// The model's end.
    pub own: OwnedFd,
    /// The GPU it was opened for.
    pub gpu_id: u32,
    /// The (simulated) process that opened it.
    pub os_pid: u32,
    /// The mask in force and bytes of a mask word not yet complete.
    mask: Mutex<(u64, Vec<u8>)>,
}

fn socketpair() -> Result<(OwnedFd, OwnedFd), Errno> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: raw socketpair writes two descriptors into `fds`, which is
    // valid for two ints; on failure nothing is written.
    let r = unsafe {
        libc::syscall(
            libc::SYS_socketpair,
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    };
    if r < 0 {
        return Err(Errno::last());
    }
    // SAFETY: two fresh descriptors this function owns.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

impl SmiFile {
    /// A new client file for `gpu_id` of process `os_pid`; returns the model's
    /// record and the client's descriptor.
    pub fn open(gpu_id: u32, os_pid: u32) -> Result<(SmiFile, OwnedFd), Errno> {
        let (user, own) = socketpair()?;
        let id = file_id(user.as_raw_fd())?;
        let f = SmiFile {
            id,
            link: format!("socket:[{}]", id.ino),
            own,
            gpu_id,
            os_pid,
            mask: Mutex::new((0, Vec::new())),
        };
        Ok((f, user))
    }

    /// The `/proc/self/fd` link of the client's end.
    pub fn link_text(&self) -> String {
        self.link.clone()
    }

    /// Takes in the mask words written since the last look.
    fn mask(&self) -> u64 {
        let mut m = lock(&self.mask);
        let mut buf = [0u8; 256];
        loop {
            // SAFETY: raw read of at most buf.len() bytes into buf from our
            // own non-blocking descriptor.
            let n = unsafe {
                libc::syscall(
                    libc::SYS_read,
                    self.own.as_raw_fd(),
                    buf.as_mut_ptr(),
                    buf.len(),
                )
            };
            if n <= 0 {
                break;
            }
            m.1.extend_from_slice(&buf[..n as usize]);
        }
        let words = m.1.len() / 8;
        if words > 0 {
            let last = &m.1[(words - 1) * 8..words * 8];
            m.0 = u64::from_ne_bytes(last.try_into().unwrap_or([0; 8]));
            m.1.drain(..words * 8);
        }
        m.0
    }

    /// Whether event `event` of process `pid` (0: of no process, every
    /// client sees it) reaches this client.
    fn wants(&self, event: u32, pid: u32) -> bool {
        let mask = self.mask();
        let bit = |i: u32| 1u64 << (i - 1);
        if mask & bit(event) == 0 {
            return false;
        }
        pid == 0 || pid == self.os_pid || mask & bit(KFD_SMI_EVENT_ALL_PROCESS) != 0
    }

    /// Queues the line of `event` with `payload` (which ends in a newline)
    /// if the client asked for it.
    pub fn deliver(&self, event: u32, pid: u32, payload: &str) {
        if !self.wants(event, pid) {
            return;
        }
        let mut line = format!("{event:x} {payload}");
        line.truncate(KFD_SMI_EVENT_MSG_SIZE as usize);
        // SAFETY: raw write of `line` from our own non-blocking descriptor;
        // a full socket (EAGAIN) drops it, as a full kfifo does.
        unsafe {
            libc::syscall(
                libc::SYS_write,
                self.own.as_raw_fd(),
                line.as_ptr(),
                line.len(),
            )
        };
    }
}

/// The calling task's name (`/proc/self/comm`, what the kernel's
/// `task_name` holds), empty if unreadable.
pub(crate) fn task_name() -> String {
    std::fs::read_to_string("/proc/self/comm")
        .map(|s| s.trim_end().to_string())
        .unwrap_or_default()
}

/// `ktime_get_boottime_ns()`.
pub(crate) fn boottime_ns() -> i64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into `ts`.
    unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut ts) };
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

#[cfg(test)]
mod tests {
    use super::*;
    use kfd_sys::kfd::{KFD_SMI_EVENT_GPU_PRE_RESET, KFD_SMI_EVENT_VMFAULT};

    fn write(fd: &OwnedFd, b: &[u8]) {
        // SAFETY: writes `b` to a descriptor of ours.
        let n = unsafe { libc::write(fd.as_raw_fd(), b.as_ptr().cast(), b.len()) };
        assert_eq!(n, b.len() as isize);
    }

    fn read(fd: &OwnedFd) -> Result<String, i32> {
        let mut b = [0u8; 512];
        // SAFETY: reads into `b` from a descriptor of ours.
        let n = unsafe { libc::read(fd.as_raw_fd(), b.as_mut_ptr().cast(), b.len()) };
        if n < 0 {
            return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0));
        }
        Ok(String::from_utf8_lossy(&b[..n as usize]).into_owned())
    }

    #[test]
    fn delivers_what_the_mask_asks_for_and_reads_do_not_block() {
        let (f, user) = SmiFile::open(0x1234, 77).unwrap();
        assert_eq!(read(&user), Err(libc::EAGAIN));
        // No mask yet: nothing.
        f.deliver(KFD_SMI_EVENT_VMFAULT, 77, "x\n");
        assert_eq!(read(&user), Err(libc::EAGAIN));
        write(&user, &(1u64 << (KFD_SMI_EVENT_VMFAULT - 1)).to_ne_bytes());
        f.deliver(KFD_SMI_EVENT_VMFAULT, 77, "4d:app\n");
        // Another process's event, and an event not in the mask.
        f.deliver(KFD_SMI_EVENT_VMFAULT, 78, "4e:other\n");
        f.deliver(KFD_SMI_EVENT_GPU_PRE_RESET, 0, "1 MODE1\n");
        assert_eq!(read(&user).unwrap(), "1 4d:app\n");
        // The last whole word wins; a partial word is kept for later.
        write(
            &user,
            &(1u64 << (KFD_SMI_EVENT_GPU_PRE_RESET - 1)).to_ne_bytes(),
        );
        write(&user, &[0xff; 3]);
        f.deliver(KFD_SMI_EVENT_GPU_PRE_RESET, 0, "1 MODE1\n");
        f.deliver(KFD_SMI_EVENT_VMFAULT, 77, "4d:app\n");
        assert_eq!(read(&user).unwrap(), "3 1 MODE1\n");
        assert_eq!(read(&user), Err(libc::EAGAIN));
        assert!(f.link_text().starts_with("socket:["));
    }
}
