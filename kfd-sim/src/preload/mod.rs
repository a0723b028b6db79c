//! The LD_PRELOAD layer: libc interposers that route the KFD device files,
//! the render nodes and the KFD/DRM sysfs paths to the simulator.
//!
//! # What is intercepted
//!
//! | path | becomes |
//! |---|---|
//! | `/dev/kfd` | a simulated kfd file ([`Sim`](crate::Sim), memfd-backed) |
//! | `/dev/dri/renderD<minor>` (minors of the topology) | a simulated render file |
//! | `/sys/devices/virtual/kfd/...`, `/sys/class/kfd/...`, `/sys/module/amdgpu/...` | the rendered tree below the sim root |
//! | `/sys/dev/char/226:<minor>/...` (minors of the topology) | idem |
//! | `/sys/devices/pci*/<slot>/...`, `/sys/bus/pci/devices/<slot>` of simulated GPUs | idem (once the sim exists) |
//! | `/proc/cpuinfo`, `/sys/devices/system/{cpu,node}/...` | the simulated CPUs (once the sim exists) |
//! | `popen("lsmod \| grep amdgpu")` | a stream that reads `amdgpu ...` |
//!
//! `readdir` of a redirected directory returns its entries in the order
//! sysfs lists them (`.`, `..`, then by the kernfs name hash; see
//! [`crate::sysfs::cpu`]), not in the render root's file-system order:
//! libhsakmt lists CPU caches in `readdir` order. Streams from `fdopendir`,
//! and `telldir`/`seekdir`, are not ordered.
//!
//! Everything else goes to the real libc function untouched. Descriptor
//! calls (`ioctl`, `close`, `fstat`) are routed by the identity of the open
//! file (the kernel model recognises its memfds by inode), so `dup`,
//! `fcntl(F_DUPFD_CLOEXEC)` and inheritance need no interposing, and `mmap`
//! of the memfds works natively.
//!
//! # Environment
//!
//! - `KFD_SIM_TOPOLOGY`: preset name or topology file (default `mi210`);
//! - `KFD_SIM_TRACE=<file>`: one decoded line per ioctl;
//! - `KFD_SIM_FAULTS=<plan>`: injected ioctl failures (kernel model syntax,
//!   e.g. `ALLOC_MEMORY_OF_GPU:1:ENOMEM`);
//! - `KFD_SIM_SUMMARY=<file>`: live-object summaries, appended as one line
//!   before each simulated kfd file is closed (`close-kfd ...`) and one at
//!   process exit (`exit ...`).
//!
//! # Safety rules
//!
//! - The simulator is created on the first intercepted device or KFD sysfs
//!   path, exactly once per process (under a creation lock).
//! - fork: the child does not use the parent's simulator (a copy whose
//!   locks other threads of the parent may have held at the fork, and
//!   whose kernel processes belong to the parent). A `pthread_atfork`
//!   child handler records the new pid; the child's first intercepted call
//!   then creates a simulator of its own, as the kernel creates a new kfd
//!   process on the child's own open of `/dev/kfd`. The parent's kfd
//!   descriptors fail with `EBADF` in the child, as the kernel's "Using
//!   KFD FD in wrong process". The prepare handler takes the locks that the
//!   child needs (creation, the memfd registry) so none is copied held.
//! - While a thread runs simulator code (creation, an ioctl, a close), a
//!   thread-local flag sends every interposed call of that thread straight
//!   to libc, so the simulator's own file I/O is never redirected and never
//!   re-enters it.
//! - Failures return -1 with `errno` set; a panic in the simulator becomes
//!   `EIO`. Nothing here aborts the host process.

mod backend;
mod exports;
mod real;

use std::cell::Cell;
use std::ffi::{c_char, c_int, CStr, CString};
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, Ordering};
use std::sync::Mutex;

use kfd_sys::Errno;

use crate::topology::Topology;

/// The interposed libc names (the cdylib exports these).
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) const INTERPOSED: &str = include_str!("interpose.list");

thread_local! {
    static BUSY: Cell<bool> = const { Cell::new(false) };
}

/// True while this thread runs simulator code (or TLS is gone).
fn busy() -> bool {
    BUSY.try_with(Cell::get).unwrap_or(true)
}

/// Marks this thread as running simulator code until dropped.
struct Guard(());

impl Guard {
    fn enter() -> Guard {
        let _ = BUSY.try_with(|b| b.set(true));
        Guard(())
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = BUSY.try_with(|b| b.set(false));
    }
}

/// Marks the calling thread as a simulator thread for good (the engine
/// thread): every interposed call it makes goes straight to libc.
pub(crate) fn enter_sim_thread() {
    let _ = BUSY.try_with(|b| b.set(true));
}

/// Sets the calling thread's errno.
fn set_errno(e: Errno) {
    // SAFETY: __errno_location returns the calling thread's errno slot.
    unsafe { *libc::__errno_location() = e.raw() };
}

/// Runs simulator code with the re-entrancy flag set, turning a panic into
/// `EIO`.
fn in_sim<T>(f: impl FnOnce() -> Result<T, Errno>) -> Result<T, Errno> {
    let _g = Guard::enter();
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(_) => Err(Errno::EIO),
    }
}

/// The per-process preload state.
struct State {
    sim: backend::Backend,
    /// Render root (no trailing slash), as bytes.
    root: Vec<u8>,
    /// Render minors of the topology.
    render_minors: Vec<u32>,
    /// Primary (card) minors of the topology.
    card_minors: Vec<u32>,
    /// `/sys/devices/pci.../<slot>` and `/sys/bus/pci/devices/<slot>` of
    /// the simulated GPUs.
    pci_prefixes: Vec<String>,
    /// `KFD_SIM_SUMMARY`.
    summary: Option<PathBuf>,
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("State")
            .field("root", &String::from_utf8_lossy(&self.root))
            .finish_non_exhaustive()
    }
}

/// The preload state of one OS process (`None`: the simulator could not
/// be created there).
struct Slot {
    pid: u32,
    state: Option<State>,
}

/// The slot of the newest process of this address space: leaked, never
/// freed (a forked child leaves its parent's slot alone and adds its own).
static CURRENT: AtomicPtr<Slot> = AtomicPtr::new(std::ptr::null_mut());

/// This process's pid: set when the first slot is made and, in a forked
/// child, by the `pthread_atfork` child handler registered then.
static PID: AtomicU32 = AtomicU32::new(0);

/// Held while a slot is made, and across `fork` (see [`fork_prepare`]).
static CREATE: Mutex<()> = Mutex::new(());

/// `atexit` and `pthread_atfork` handlers are registered (once per address
/// space: a forked child inherits them).
static HANDLERS: AtomicBool = AtomicBool::new(false);

use kfd_sys::sync::lock;

/// The slot of this process, if it has one yet.
fn current_slot() -> Option<&'static Slot> {
    let p = CURRENT.load(Ordering::Acquire);
    if p.is_null() {
        return None;
    }
    // SAFETY: slots are leaked boxes (`state`), never freed or mutated
    // after they are published.
    let slot = unsafe { &*p };
    (slot.pid == PID.load(Ordering::Acquire)).then_some(slot)
}

/// True once a simulator was made in this address space (here or, for a
/// forked child, in a parent).
fn ever_created() -> bool {
    !CURRENT.load(Ordering::Acquire).is_null()
}

/// The state if this process's simulator already exists.
fn existing() -> Option<&'static State> {
    current_slot().and_then(|s| s.state.as_ref())
}

/// The state, creating this process's simulator on first use. `None` if
/// the topology could not be loaded (reported once on stderr).
fn state() -> Option<&'static State> {
    if let Some(slot) = current_slot() {
        return slot.state.as_ref();
    }
    let _create = lock(&CREATE);
    if let Some(slot) = current_slot() {
        return slot.state.as_ref();
    }
    // A forked child still has the parent's slot: its simulator is not
    // touched (its locks may be held by threads that do not exist here).
    let forked = ever_created();
    if !forked {
        PID.store(std::process::id(), Ordering::Release);
    }
    let state = {
        let _g = Guard::enter();
        std::panic::catch_unwind(|| init(forked)).unwrap_or_else(|_| {
            let _ = writeln!(
                std::io::stderr(),
                "kfd-sim: simulator initialisation panicked"
            );
            None
        })
    };
    let slot: &'static Slot = Box::leak(Box::new(Slot {
        pid: PID.load(Ordering::Acquire),
        state,
    }));
    CURRENT.store(slot as *const Slot as *mut Slot, Ordering::Release);
    slot.state.as_ref()
}

thread_local! {
    /// The locks [`fork_prepare`] took, released after the fork in the
    /// parent and in the child (the same thread runs all three handlers).
    static FORK_LOCKS: std::cell::RefCell<Vec<Box<dyn std::any::Any>>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// `pthread_atfork` prepare: takes the locks a child needs, in the order
/// slot creation takes them (creation, then the memfd registry; the
/// `popen` shortcut's list is never held with another), so the child
/// never starts with one held by a thread it does not have. With the
/// creation lock held, no thread is half-way through making a simulator
/// (or the ioctl table it builds) at the fork.
extern "C" fn fork_prepare() {
    let create = lock(&CREATE);
    let model_fds = crate::kernel::memfd::model_fds();
    let pipes = lock(&exports::FAKE_PIPES);
    let dirs = lock(&exports::ORDERED_DIRS);
    let _ = FORK_LOCKS.try_with(|l| {
        let mut l = l.borrow_mut();
        l.push(Box::new(create));
        l.push(Box::new(model_fds));
        l.push(Box::new(pipes));
        l.push(Box::new(dirs));
    });
}

/// `pthread_atfork` parent: releases the prepare handler's locks.
extern "C" fn fork_parent() {
    let _ = FORK_LOCKS.try_with(|l| l.borrow_mut().clear());
}

/// `pthread_atfork` child: releases the prepare handler's locks and
/// records the child's pid, which makes the parent's slot stale here.
extern "C" fn fork_child() {
    PID.store(std::process::id(), Ordering::Release);
    let _ = FORK_LOCKS.try_with(|l| l.borrow_mut().clear());
}

/// `forked`: this is a forked child making its own simulator (the trace
/// file is appended to, not truncated).
fn init(forked: bool) -> Option<State> {
    let name =
        std::env::var("KFD_SIM_TOPOLOGY").unwrap_or_else(|_| crate::presets::DEFAULT.to_string());
    let topology = match Topology::load(&name) {
        Ok(t) => t,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "kfd-sim: KFD_SIM_TOPOLOGY: {e}");
            return None;
        }
    };
    let render_minors = topology
        .gpus()
        .map(|(_, n)| n.properties.get_or_zero("drm_render_minor") as u32)
        .collect();
    let card_minors = (0..topology.gpus().count() as u32).collect();
    let mut pci_prefixes = Vec::new();
    for (_, n) in topology.gpus() {
        pci_prefixes.push(format!("/{}", crate::sysfs::pci_device_dir(n)));
        pci_prefixes.push(format!(
            "/sys/bus/pci/devices/{}",
            crate::sysfs::pci_slot_name(n)
        ));
    }
    let sim = match backend::Backend::new(topology) {
        Ok(s) => s,
        Err(e) => {
            let _ = writeln!(
                std::io::stderr(),
                "kfd-sim: cannot create the simulator: {e}"
            );
            return None;
        }
    };
    if let Ok(path) = std::env::var("KFD_SIM_TRACE") {
        // Appending (O_APPEND in both), so the lines of a parent and its
        // forked children interleave instead of overwriting each other.
        let file = if forked {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
        } else {
            use std::os::unix::fs::OpenOptionsExt;
            std::fs::OpenOptions::new()
                .create(true)
                .write(true)
                .truncate(true)
                .custom_flags(libc::O_APPEND)
                .open(&path)
        };
        match file {
            Ok(f) => sim.set_trace(Box::new(f)),
            Err(e) => {
                let _ = writeln!(std::io::stderr(), "kfd-sim: KFD_SIM_TRACE={path}: {e}");
            }
        }
    }
    if let Ok(plan) = std::env::var("KFD_SIM_FAULTS") {
        if let Err(e) = sim.set_faults(&plan) {
            let _ = writeln!(std::io::stderr(), "kfd-sim: KFD_SIM_FAULTS={plan}: {e}");
        }
    }
    let root = sim.root().as_os_str().as_encoded_bytes().to_vec();
    let root = match root.last() {
        Some(b'/') => root[..root.len() - 1].to_vec(),
        _ => root,
    };
    if !HANDLERS.swap(true, Ordering::AcqRel) {
        // SAFETY: registering a plain extern "C" function with no arguments.
        unsafe { libc::atexit(at_exit) };
        // SAFETY: registering plain extern "C" functions with no
        // arguments; they only take and release locks and store the pid.
        unsafe { libc::pthread_atfork(Some(fork_prepare), Some(fork_parent), Some(fork_child)) };
    }
    Some(State {
        sim,
        root,
        render_minors,
        card_minors,
        pci_prefixes,
        summary: std::env::var_os("KFD_SIM_SUMMARY").map(PathBuf::from),
    })
}

extern "C" fn at_exit() {
    if busy() {
        return;
    }
    if let Some(st) = existing() {
        let _ = in_sim(|| {
            st.write_summary("exit");
            st.sim.at_exit();
            Ok(())
        });
    }
}

impl State {
    /// Appends one summary line (`KFD_SIM_SUMMARY`). Call inside `in_sim`.
    fn write_summary(&self, tag: &str) {
        let Some(path) = &self.summary else { return };
        let line = format!(
            "{tag} pid={} {}\n",
            std::process::id(),
            self.sim.summary_line()
        );
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            let _ = f.write_all(line.as_bytes());
        }
    }
}

/// A simulated device a path names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Device {
    Kfd,
    Render(u32),
}

/// What an intercepted path refers to.
#[derive(Debug)]
enum Target {
    /// Not ours: call libc with the original path.
    Pass,
    /// A simulated device file.
    Device(&'static State, Device),
    /// A file below the render root.
    Redirect(CString),
}

fn strip<'a>(path: &'a [u8], prefix: &[u8]) -> Option<&'a [u8]> {
    let rest = path.strip_prefix(prefix)?;
    (rest.is_empty() || rest[0] == b'/').then_some(rest)
}

fn parse_minor(digits: &[u8]) -> Option<u32> {
    if digits.is_empty() || digits.len() > 3 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(digits).ok()?.parse().ok()
}

impl State {
    fn redirect(&self, path: &[u8]) -> Target {
        let mut v = Vec::with_capacity(self.root.len() + path.len() + 1);
        v.extend_from_slice(&self.root);
        v.extend_from_slice(path);
        match CString::new(v) {
            Ok(c) => Target::Redirect(c),
            Err(_) => Target::Pass,
        }
    }
}

/// Classifies an absolute path. Creates the simulator only for the device
/// and KFD/DRM sysfs paths.
fn classify_bytes(path: &[u8]) -> Target {
    if path.first() != Some(&b'/') {
        return Target::Pass;
    }
    if path == b"/dev/kfd" {
        return match state() {
            Some(st) => Target::Device(st, Device::Kfd),
            None => Target::Pass,
        };
    }
    if let Some(digits) = path.strip_prefix(b"/dev/dri/renderD") {
        let Some(minor) = parse_minor(digits) else {
            return Target::Pass;
        };
        return match state() {
            Some(st) if st.render_minors.contains(&minor) => {
                Target::Device(st, Device::Render(minor))
            }
            _ => Target::Pass,
        };
    }
    if !path.starts_with(b"/sys/") && !path.starts_with(b"/proc/") {
        return Target::Pass;
    }
    if strip(path, b"/sys/devices/virtual/kfd").is_some()
        || strip(path, b"/sys/class/kfd").is_some()
        || strip(path, b"/sys/module/amdgpu").is_some()
    {
        return match state() {
            Some(st) => st.redirect(path),
            None => Target::Pass,
        };
    }
    if let Some(rest) = path.strip_prefix(b"/sys/dev/char/226:") {
        let end = rest.iter().position(|b| *b == b'/').unwrap_or(rest.len());
        let Some(minor) = parse_minor(&rest[..end]) else {
            return Target::Pass;
        };
        return match state() {
            Some(st) if st.render_minors.contains(&minor) || st.card_minors.contains(&minor) => {
                st.redirect(path)
            }
            _ => Target::Pass,
        };
    }
    // The rest only once the simulator exists.
    let Some(st) = existing() else {
        return Target::Pass;
    };
    if path == b"/proc/cpuinfo"
        || strip(path, b"/sys/devices/system/cpu").is_some()
        || strip(path, b"/sys/devices/system/node").is_some()
    {
        return st.redirect(path);
    }
    if st
        .pci_prefixes
        .iter()
        .any(|p| strip(path, p.as_bytes()).is_some())
    {
        return st.redirect(path);
    }
    Target::Pass
}

/// Classifies a C path (NULL and relative paths pass).
///
/// # Safety
///
/// `path` must be NULL or a valid NUL-terminated string.
unsafe fn classify(path: *const c_char) -> Target {
    if path.is_null() || busy() {
        return Target::Pass;
    }
    // SAFETY: non-null and NUL-terminated per the caller's contract.
    let bytes = unsafe { CStr::from_ptr(path) }.to_bytes();
    classify_bytes(bytes)
}

/// Classifies a path relative to `dirfd` (only absolute paths and
/// `AT_FDCWD`-relative absolute paths are intercepted).
///
/// # Safety
///
/// As for [`classify`].
unsafe fn classify_at(_dirfd: c_int, path: *const c_char) -> Target {
    // SAFETY: forwarded contract.
    unsafe { classify(path) }
}

/// Opens a simulated device, honouring `O_CLOEXEC`.
fn open_device(st: &State, dev: Device, flags: c_int) -> c_int {
    let r = in_sim(|| match dev {
        Device::Kfd => st.sim.open_kfd(),
        Device::Render(minor) => st.sim.open_render(minor),
    });
    match r {
        Ok(fd) => {
            if flags & libc::O_CLOEXEC == 0 {
                // SAFETY: clearing FD_CLOEXEC on a descriptor we just made.
                unsafe { libc::fcntl(fd, libc::F_SETFD, 0) };
            }
            fd
        }
        Err(e) => {
            set_errno(e);
            -1
        }
    }
}

/// The `stat` a simulated device reports: a character device, mode 0666,
/// `rdev` = makedev(226, minor) for render nodes and (510, 0) for kfd.
fn device_stat(dev: Device) -> libc::stat64 {
    // SAFETY: stat64 is plain old data; all-zero is a valid value.
    let mut s: libc::stat64 = unsafe { std::mem::zeroed() };
    let (major, minor) = match dev {
        Device::Kfd => (crate::sysfs::KFD_CHAR_MAJOR, 0),
        Device::Render(m) => (crate::sysfs::DRM_CHAR_MAJOR, m),
    };
    s.st_mode = libc::S_IFCHR | 0o666;
    s.st_rdev = libc::makedev(major, minor);
    s.st_dev = libc::makedev(0, 5);
    s.st_ino = u64::from(major) << 20 | u64::from(minor);
    s.st_nlink = 1;
    s.st_blksize = 4096;
    s
}

fn device_statx(dev: Device) -> libc::statx {
    let s = device_stat(dev);
    // SAFETY: statx is plain old data; all-zero is a valid value.
    let mut x: libc::statx = unsafe { std::mem::zeroed() };
    x.stx_mask = libc::STATX_BASIC_STATS;
    x.stx_blksize = 4096;
    x.stx_nlink = 1;
    x.stx_mode = s.st_mode as u16;
    x.stx_ino = s.st_ino;
    x.stx_rdev_major = libc::major(s.st_rdev);
    x.stx_rdev_minor = libc::minor(s.st_rdev);
    x.stx_dev_major = 0;
    x.stx_dev_minor = 5;
    x
}

/// The simulated device behind a descriptor, if any (only once the
/// simulator exists).
fn fd_device(fd: c_int) -> Option<Device> {
    if busy() {
        return None;
    }
    let st = existing()?;
    in_sim(|| Ok(st.sim.device_of(fd))).ok().flatten()
}

/// True if `fd` is a simulated kfd file this process's simulator does not
/// know: a forked child's copy of its parent's descriptor, which the
/// kernel refuses with `EBADF` ("Using KFD FD in wrong process"; the kfd
/// process of a file is its opener's). Call when the simulator did not
/// take the descriptor.
fn foreign_kfd(fd: c_int) -> bool {
    if busy() || !ever_created() {
        return false;
    }
    in_sim(|| Ok(crate::kernel::memfd::is_kfd_memfd(fd))).unwrap_or(false)
}

/// `true` if `cmd` is rocminfo's driver check.
fn is_lsmod_amdgpu(cmd: &[u8]) -> bool {
    let has = |needle: &[u8]| cmd.windows(needle.len()).any(|w| w == needle);
    has(b"lsmod") && has(b"amdgpu")
}

/// What the `popen` shortcut's stream reads.
const LSMOD_AMDGPU: &[u8] = b"amdgpu              12386304  0\n";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_match_whole_components() {
        assert_eq!(strip(b"/sys/class/kfd", b"/sys/class/kfd"), Some(&b""[..]));
        assert_eq!(
            strip(b"/sys/class/kfd/kfd", b"/sys/class/kfd"),
            Some(&b"/kfd"[..])
        );
        assert_eq!(strip(b"/sys/class/kfdx", b"/sys/class/kfd"), None);
        assert_eq!(parse_minor(b"128"), Some(128));
        assert_eq!(parse_minor(b"12a"), None);
        assert_eq!(parse_minor(b""), None);
        assert!(is_lsmod_amdgpu(b"lsmod | grep amdgpu"));
        assert!(!is_lsmod_amdgpu(b"ls -l"));
    }

    #[test]
    fn unrelated_paths_pass_without_creating_the_sim() {
        for p in [
            &b"/etc/passwd"[..],
            b"relative/path",
            b"/sys/devices/system/cpu/online",
            b"/proc/self/maps",
        ] {
            assert!(
                matches!(classify_bytes(p), Target::Pass),
                "{}",
                String::from_utf8_lossy(p)
            );
        }
        assert!(!ever_created());
    }

    #[test]
    fn interpose_list_matches_the_exports() {
        let names: Vec<&str> = INTERPOSED
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .collect();
        assert_eq!(names.len(), exports::EXPORTED.len());
        for n in names {
            assert!(
                exports::EXPORTED.contains(&n),
                "{n} is listed but not defined"
            );
        }
    }

    /// Runs `name`, an ignored test of this module, alone in a new
    /// process of this test binary: it creates the preload simulator
    /// (process-global) and forks, which the other tests must not see.
    fn run_isolated(name: &str) {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([name, "--exact", "--ignored", "--test-threads=1"])
            .env("KFD_SIM_TOPOLOGY", "mi210")
            .env_remove("KFD_SIM_TRACE")
            .env_remove("KFD_SIM_FAULTS")
            .env_remove("KFD_SIM_SUMMARY")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains("1 passed"),
            "{name}: {:?}\n{text}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }

    #[test]
    fn fork_while_another_thread_holds_the_file_table() {
        run_isolated("preload::tests::isolated_fork_while_the_file_table_is_locked");
    }

    /// The child's side of the fork test: 0 if all is well, else the
    /// number of the failed check.
    fn forked_child(parent_fd: c_int) -> c_int {
        use kfd_sys::kfd::{kfd_ioctl_get_version_args, AMDKFD_IOC_GET_VERSION};
        let version = |fd: c_int| {
            let mut v = kfd_ioctl_get_version_args::default();
            // SAFETY: GET_VERSION writes one kfd_ioctl_get_version_args
            // into `v`, which is valid and exclusively borrowed.
            let r = unsafe {
                exports::kfd_sim_ioctl(
                    fd,
                    libc::c_ulong::from(AMDKFD_IOC_GET_VERSION.request()),
                    (&mut v as *mut kfd_ioctl_get_version_args).cast(),
                )
            };
            (r, Errno::last(), v.major_version)
        };
        // A deadlock ends the child with SIGALRM.
        // SAFETY: alarm has no memory effects.
        unsafe { libc::alarm(10) };
        // The parent's descriptor: the kernel's "wrong process".
        if version(parent_fd).0 != -1 || Errno::last() != Errno::EBADF {
            return 1;
        }
        // SAFETY: closes the child's copy of the parent's descriptor.
        if unsafe { exports::kfd_sim_close(parent_fd) } != 0 {
            return 2;
        }
        // A kfd file of the child's own, with a kernel process of its own.
        // SAFETY: a NUL-terminated path and plain flags.
        let fd = unsafe { exports::kfd_sim_open(c"/dev/kfd".as_ptr(), libc::O_RDWR, 0) };
        if fd < 0 {
            return 3;
        }
        let (r, _, major) = version(fd);
        if r != 0 || major != 1 {
            return 4;
        }
        let Some(st) = existing() else { return 5 };
        if st.sim.machine().live_objects().processes.len() != 1 {
            return 6;
        }
        // SAFETY: closes the descriptor opened above.
        if unsafe { exports::kfd_sim_close(fd) } != 0 {
            return 7;
        }
        0
    }

    /// A child forked while another thread of the parent holds the
    /// simulator's file table: the child's close and ioctls must not wait
    /// for that lock (the thread holding it does not exist in the child).
    #[test]
    #[ignore = "run in a process of its own by fork_while_another_thread_holds_the_file_table"]
    fn isolated_fork_while_the_file_table_is_locked() {
        // SAFETY: a NUL-terminated path and plain flags.
        let fd = unsafe { exports::kfd_sim_open(c"/dev/kfd".as_ptr(), libc::O_RDWR, 0) };
        assert!(fd >= 0);
        let st = existing().expect("the simulator exists after the open");
        let (locked_tx, locked_rx) = std::sync::mpsc::channel();
        let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
        let holder = std::thread::spawn(move || {
            let files = crate::kernel::lock(&st.sim.machine().files);
            locked_tx.send(()).unwrap();
            let _ = release_rx.recv();
            drop(files);
        });
        locked_rx.recv().unwrap();
        // SAFETY: the child runs only `forked_child` (the preload layer
        // and the simulator) and leaves with `_exit`.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            let code = std::panic::catch_unwind(|| forked_child(fd)).unwrap_or(100);
            // SAFETY: ends the child without the test harness.
            unsafe { libc::_exit(code) };
        }
        release_tx.send(()).unwrap();
        holder.join().unwrap();
        let mut status = 0;
        // SAFETY: `pid` is our child; `status` is a valid out-pointer.
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        assert!(
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
            "child: status {status:#x} (exit code = failed check; SIGALRM {} = deadlock)",
            libc::SIGALRM
        );
        // The parent's file and kernel process are untouched.
        assert_eq!(st.sim.machine().live_objects().processes.len(), 1);
        // SAFETY: closes the descriptor opened above.
        assert_eq!(unsafe { exports::kfd_sim_close(fd) }, 0);
    }

    #[test]
    fn device_stat_is_a_char_device() {
        let s = device_stat(Device::Render(129));
        assert_eq!(s.st_mode & libc::S_IFMT, libc::S_IFCHR);
        assert_eq!((libc::major(s.st_rdev), libc::minor(s.st_rdev)), (226, 129));
        let x = device_statx(Device::Kfd);
        assert_eq!(u32::from(x.stx_mode) & libc::S_IFMT, libc::S_IFCHR);
        assert_eq!(x.stx_rdev_major, 510);
    }
}
