//! The LD_PRELOAD layer: libc interposers that route the KFD device files,
//! the render nodes and the KFD/DRM sysfs paths to the simulator.
//!
//! # What is intercepted
//!
//! | path | becomes |
//! |---|---|
//! | `/dev/kfd` | a simulated kfd file ([`Sim`](crate::Sim), memfd-backed) |
//! | `/dev/dri/renderD<minor>` (minors of the topology) | a simulated render file |
//! | `/sys/devices/virtual/kfd/...`, `/sys/class/kfd/...` | the rendered tree below the sim root |
//! | `/sys/dev/char/226:<minor>/...` (minors of the topology) | idem |
//! | `/sys/devices/pci*/<slot>/...`, `/sys/bus/pci/devices/<slot>` of simulated GPUs | idem (once the sim exists) |
//! | `/proc/cpuinfo` | the preset's CPUs (once the sim exists) |
//! | `popen("lsmod \| grep amdgpu")` | a stream that reads `amdgpu ...` |
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
//!   path, exactly once per process (`OnceLock`).
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
use std::sync::OnceLock;

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

static STATE: OnceLock<Option<State>> = OnceLock::new();

/// The state if the simulator already exists.
fn existing() -> Option<&'static State> {
    STATE.get().and_then(Option::as_ref)
}

/// The state, creating the simulator on first use. `None` if the topology
/// could not be loaded (reported once on stderr).
fn state() -> Option<&'static State> {
    STATE
        .get_or_init(|| {
            let _g = Guard::enter();
            std::panic::catch_unwind(init).unwrap_or_else(|_| {
                let _ = writeln!(
                    std::io::stderr(),
                    "kfd-sim: simulator initialisation panicked"
                );
                None
            })
        })
        .as_ref()
}

fn init() -> Option<State> {
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
        match std::fs::File::create(&path) {
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
    // SAFETY: registering a plain extern "C" function with no arguments.
    unsafe { libc::atexit(at_exit) };
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
    if path == b"/proc/cpuinfo" {
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
        assert!(STATE.get().is_none());
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
