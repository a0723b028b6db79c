//! The `fuzz` family: every export of a generation called with random
//! and edge-case arguments, one call per forked child, the same calls
//! (fixed seeds) on both libraries.
//!
//! The generator is ours and type-directed: each argument type of an
//! entry point ([`crate::api`]'s table) knows how to pick a value
//! ([`FuzzArg`]) — integers from edge values (0, 1, powers of two, sign
//! and width limits, `1 << 62`, huge counts) or at random; pointers among
//! NULL, a zeroed or 0xff-filled buffer, a misaligned one, the last bytes
//! before an unreadable page, an unreadable (`PROT_NONE`) page, a
//! read-only page, wild addresses, and the live objects the child set up
//! (a memory allocation, an event, a queue, context handles); flag words
//! from real flags and all-ones. A call first puts the library in one of
//! a few states (never opened; opened with a snapshot, a host allocation,
//! an event, a queue and, where the library has them, context handles;
//! opened without a snapshot; closed again), then makes the call.
//!
//! Each call runs in a child forked from the scenario's process, so a
//! crash or hang ends only that call; the outcome is the status, or
//! `crash:SIGNAL`, or `hang` (killed after [`CALL_TIMEOUT`]); `+panic`
//! is appended when the library reports a caught panic on stderr (the
//! child runs with `HSAKMT_DEBUG_LEVEL=3`, under which ours logs one).
//! The parent's judgement ([`crate::parent`]): a crash, hang or panic of
//! ours where the reference returned a status is an unexpected
//! difference; status differences are counted and listed, not judged;
//! reference crashes are recorded.

use std::any::TypeId;
use std::ffi::c_void;
use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::ptr::null_mut;
use std::time::{Duration, Instant};

use hsakmt_sys::common::{HsaEventDescriptor, HsaSystemProperties};
use hsakmt_sys::newest::HsaKFDContext;

use crate::abi::{memflag, Abi};
use crate::api::{Api, St};
use crate::cx::status_text;

/// Calls per export and library (`KFD_FUZZ_CALLS` overrides it for a
/// deeper run; CI uses the default).
pub const CALLS: u32 = 30;

/// [`CALLS`], or `KFD_FUZZ_CALLS` when set to a number.
pub fn calls() -> u32 {
    std::env::var("KFD_FUZZ_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(CALLS)
}

/// A call still running after this long is a hang (its child is killed).
pub const CALL_TIMEOUT: Duration = Duration::from_secs(2);

/// Mixed into every seed (`KFD_FUZZ_SEED` replaces it to explore other
/// inputs; CI uses this one).
pub const SEED: u64 = 0x6b66_642d_7273_1717;

fn seed() -> u64 {
    std::env::var("KFD_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(SEED)
}

/// What ours prints (at `HSAKMT_DEBUG_LEVEL` 3) when an export panicked.
pub const PANIC_MARK: &str = "hsakmt: internal error in an entry point";

/// The library state a call is made in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Never opened.
    Closed,
    /// Opened, snapshot taken, live objects made.
    Opened,
    /// Opened, no snapshot.
    NoSnapshot,
    /// Opened with live objects, then released and closed.
    AfterClose,
}

/// Live objects of the child's setup, as raw values (0 when the setup
/// step failed or the library lacks it).
#[derive(Debug, Clone, Copy, Default)]
pub struct Live {
    /// A host-accessible allocation of 64 KiB.
    pub mem: usize,
    /// An event (`HsaEvent *`).
    pub event: usize,
    /// A queue id.
    pub queue: u64,
    /// The primary context's handle.
    pub ctx: usize,
    /// A secondary context's handle (with a snapshot).
    pub ctx2: usize,
}

/// Scratch memory of a call: buffers of known contents and pages that
/// fault.
#[derive(Debug, Clone, Copy)]
struct Pages {
    zero: usize,
    ones: usize,
    tail: usize,
    none: usize,
    ro: usize,
}

const PAGE: usize = kfd_sys::PAGE_SIZE as usize;

impl Pages {
    /// 16 zeroed pages, 2 pages of 0xff, a `PROT_NONE` page, a read-only
    /// page and another `PROT_NONE` page; `tail` is the last 16 bytes
    /// before the first `PROT_NONE` page. Whatever is read past the 0xff
    /// or the read-only page faults, so a call reads the same bytes, or
    /// faults, in every process.
    fn map() -> Option<Pages> {
        // SAFETY: a fresh anonymous mapping nothing else refers to; the
        // process is a short-lived child that never unmaps it.
        unsafe {
            let p = libc::mmap(
                null_mut(),
                21 * PAGE,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            if p == libc::MAP_FAILED {
                return None;
            }
            let b = p as usize;
            std::ptr::write_bytes((b + 16 * PAGE) as *mut u8, 0xff, 2 * PAGE);
            for (page, prot) in [
                (18, libc::PROT_NONE),
                (19, libc::PROT_READ),
                (20, libc::PROT_NONE),
            ] {
                libc::mprotect((b + page * PAGE) as *mut c_void, PAGE, prot);
            }
            Some(Pages {
                zero: b,
                ones: b + 16 * PAGE,
                tail: b + 18 * PAGE - 16,
                none: b + 18 * PAGE,
                ro: b + 19 * PAGE,
            })
        }
    }
}

/// The argument generator of one call.
#[derive(Debug)]
pub struct Gen {
    rng: u64,
    live: Live,
    pages: Option<Pages>,
    desc: Vec<String>,
    /// Where the description goes just before the call (the pipe to the
    /// parent), so that a crash still tells what was called.
    announce: Option<i32>,
}

impl Gen {
    /// A generator for call `n` of export `name` (fixed seeds).
    pub fn new(name: &str, n: u32) -> Gen {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in name.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        Gen {
            rng: h ^ seed() ^ u64::from(n).wrapping_mul(0x9e37_79b9_7f4a_7c15),
            live: Live::default(),
            pages: None,
            desc: Vec::new(),
            announce: None,
        }
    }

    /// The next pseudo-random word (splitmix64).
    pub fn next_word(&mut self) -> u64 {
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A value below `n`.
    fn below(&mut self, n: usize) -> usize {
        (self.next_word() % n as u64) as usize
    }

    /// One of `items`.
    fn one_of<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }

    /// The state to call in (drawn first, before any argument).
    pub fn state(&mut self) -> State {
        match self.below(20) {
            0 | 1 => State::Closed,
            2 => State::NoSnapshot,
            3 | 4 => State::AfterClose,
            _ => State::Opened,
        }
    }

    fn note(&mut self, s: String) {
        self.desc.push(s);
    }

    /// The arguments picked so far, for the record.
    pub fn description(&self) -> String {
        self.desc.join(" ")
    }

    /// Sends the description to the parent (just before the call).
    fn announce(&self) {
        if let Some(fd) = self.announce {
            let line = format!("{}\n", self.description());
            // SAFETY: writes a local buffer to the pipe the child owns.
            unsafe { libc::write(fd, line.as_ptr().cast(), line.len()) };
        }
    }

    /// An edge value or (one time in four) a random one, cut to `bits`.
    fn word(&mut self, edges: &[u64], what: &str, bits: u32) -> u64 {
        let v = if self.below(4) == 0 {
            self.next_word()
        } else {
            self.one_of(edges)
        };
        let v = if bits < 64 { v & ((1 << bits) - 1) } else { v };
        self.note(format!("{what}={v:#x}"));
        v
    }

    fn pointer(&mut self, ctx: bool) -> usize {
        const KINDS: &[&str] = &[
            "null", "zero", "zero+1", "ones", "tail", "none", "ro", "wild", "low", "mem", "event",
            "events", "ctx",
        ];
        let k = if ctx && self.below(3) > 0 {
            "ctx"
        } else {
            self.one_of(KINDS)
        };
        self.note(format!("ptr={k}"));
        let (l, p) = (self.live, self.pages);
        let page = |f: fn(&Pages) -> usize| p.as_ref().map_or(0, f);
        match k {
            "null" => 0,
            "zero" => page(|p| p.zero),
            "zero+1" => page(|p| p.zero + 1),
            "ones" => page(|p| p.ones),
            "tail" => page(|p| p.tail),
            "none" => page(|p| p.none),
            "ro" => page(|p| p.ro),
            "wild" => 0x7e00_dead_0000,
            "low" => 0x1000,
            "mem" => l.mem,
            "event" => l.event,
            "events" => {
                // An array of the live event, in the 0xff buffer.
                if let Some(p) = p {
                    for i in 0..(2 * PAGE / 8) {
                        // SAFETY: inside the two 0xff pages of `Pages`.
                        unsafe { ((p.ones + 8 * i) as *mut usize).write(l.event) };
                    }
                }
                page(|p| p.ones)
            }
            _ => {
                if self.below(2) == 0 {
                    l.ctx
                } else {
                    l.ctx2
                }
            }
        }
    }
}

/// A type whose values the generator can pick.
pub trait FuzzArg: Sized {
    /// Picks a value (and notes it in the description).
    fn pick(g: &mut Gen) -> Self;
}

const U32_EDGES: &[u64] = &[
    0,
    1,
    2,
    3,
    4,
    7,
    8,
    16,
    31,
    32,
    33,
    64,
    100,
    255,
    256,
    512,
    513,
    1000,
    4096,
    0x10000,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_fffe,
    0xffff_ffff,
];

impl FuzzArg for u32 {
    fn pick(g: &mut Gen) -> u32 {
        g.word(U32_EDGES, "u32", 32) as u32
    }
}

impl FuzzArg for i32 {
    fn pick(g: &mut Gen) -> i32 {
        g.word(&[0, 1, 2, u64::MAX, 0x7fff_ffff, 0x8000_0000], "i32", 32) as u32 as i32
    }
}

impl FuzzArg for i64 {
    fn pick(g: &mut Gen) -> i64 {
        // Queue priorities are -3..=3 (64-bit enums in the C ABI).
        let edges = [
            0,
            1,
            2,
            3,
            4,
            (-1i64) as u64,
            (-3i64) as u64,
            (-4i64) as u64,
            i64::MIN as u64,
            i64::MAX as u64,
        ];
        g.word(&edges, "i64", 64) as i64
    }
}

impl FuzzArg for u64 {
    fn pick(g: &mut Gen) -> u64 {
        if g.below(8) == 0 {
            // A live handle or address where a 64-bit id is expected.
            let l = g.live;
            let (v, what) = g.one_of(&[
                (l.queue, "queue"),
                (l.mem as u64, "mem"),
                (l.event as u64, "event"),
            ]);
            g.note(format!("u64={what}"));
            return v;
        }
        let edges = [
            0,
            1,
            2,
            0x1000,
            0x1001,
            0x10000,
            0x20_0000,
            1 << 30,
            1 << 32,
            (1 << 32) + 1,
            1 << 47,
            1 << 62,
            0x7fff_ffff_ffff,
            u64::MAX - 1,
            u64::MAX,
        ];
        g.word(&edges, "u64", 64)
    }
}

impl FuzzArg for bool {
    fn pick(g: &mut Gen) -> bool {
        let b = g.below(2) == 1;
        g.note(format!("bool={b}"));
        b
    }
}

/// Pointers to context handles get context handles more often.
fn is_ctx<T: 'static>() -> bool {
    TypeId::of::<T>() == TypeId::of::<HsaKFDContext>()
}

impl<T: 'static> FuzzArg for *mut T {
    fn pick(g: &mut Gen) -> *mut T {
        g.pointer(is_ctx::<T>()) as *mut T
    }
}

impl<T: 'static> FuzzArg for *const T {
    fn pick(g: &mut Gen) -> *const T {
        g.pointer(is_ctx::<T>()) as *const T
    }
}

/// Flag words (`HsaMemFlags`, `HsaMemMapFlags` of each generation): a
/// generation's types listed here are fuzzed as 32-bit flag words.
macro_rules! flag_words {
    ($($t:ty),* $(,)?) => {$(
        impl FuzzArg for $t {
            fn pick(g: &mut Gen) -> $t {
                let edges = [
                    0,
                    memflag::HOST_ACCESS as u64,
                    (memflag::HOST_ACCESS | memflag::NON_PAGED) as u64,
                    (memflag::HOST_ACCESS | memflag::FIXED_ADDRESS) as u64,
                    (memflag::HOST_ACCESS | memflag::SCRATCH) as u64,
                    (memflag::HOST_ACCESS | memflag::AQL_QUEUE | memflag::EXECUTE) as u64,
                    (memflag::HOST_ACCESS | memflag::COARSE_GRAIN | memflag::UNCACHED) as u64,
                    (memflag::HOST_ACCESS | (3 << 4)) as u64,
                    0xffff_ffff,
                ];
                Self(g.word(&edges, "flags", 32) as u32)
            }
        }
    )*};
}

flag_words!(
    hsakmt_sys::rocm_5_2::HsaMemFlags,
    hsakmt_sys::rocm_5_2::HsaMemMapFlags,
    hsakmt_sys::rocm_6_2::HsaMemFlags,
    hsakmt_sys::newest::HsaMemFlags,
);

/// A C entry point whose every argument type is a [`FuzzArg`].
pub trait FuzzCall {
    /// Picks the arguments from `g`, announces them, makes the call.
    ///
    /// # Safety
    ///
    /// Calls C with arbitrary arguments: only in a child process that
    /// exists to make this one call.
    unsafe fn fuzz_call(self, g: &mut Gen) -> St;
}

macro_rules! fuzz_call_arity {
    ($($a:ident)*) => {
        impl<$($a: FuzzArg),*> FuzzCall for unsafe extern "C" fn($($a),*) -> St {
            #[allow(non_snake_case)]
            unsafe fn fuzz_call(self, g: &mut Gen) -> St {
                $(let $a = <$a as FuzzArg>::pick(g);)*
                g.announce();
                // SAFETY: the caller's contract: a child made for this call.
                unsafe { self($($a),*) }
            }
        }
    };
}

fuzz_call_arity!();
fuzz_call_arity!(A1);
fuzz_call_arity!(A1 A2);
fuzz_call_arity!(A1 A2 A3);
fuzz_call_arity!(A1 A2 A3 A4);
fuzz_call_arity!(A1 A2 A3 A4 A5);
fuzz_call_arity!(A1 A2 A3 A4 A5 A6);
fuzz_call_arity!(A1 A2 A3 A4 A5 A6 A7);
fuzz_call_arity!(A1 A2 A3 A4 A5 A6 A7 A8);
fuzz_call_arity!(A1 A2 A3 A4 A5 A6 A7 A8 A9);
fuzz_call_arity!(A1 A2 A3 A4 A5 A6 A7 A8 A9 A10);
fuzz_call_arity!(A1 A2 A3 A4 A5 A6 A7 A8 A9 A10 A11);

/// Puts the library in `state` (every step's failure is tolerated; its
/// live value stays 0).
///
/// # Safety
///
/// Every call has valid arguments; only the library's own handles are
/// passed back to it.
unsafe fn setup<A: Abi>(api: &Api<A>, state: State) -> Live {
    let mut l = Live::default();
    if state == State::Closed {
        return l;
    }
    // SAFETY: valid out-pointers and buffers of the right generation;
    // handles from the library itself.
    unsafe {
        let Some(open) = api.hsaKmtOpenKFD else {
            return l;
        };
        open();
        if state == State::NoSnapshot {
            return l;
        }
        let mut sys = HsaSystemProperties::default();
        if let Some(f) = api.hsaKmtAcquireSystemProperties {
            f(&mut sys);
        }
        let host = A::mem_flags(memflag::HOST_ACCESS);
        let mut p: *mut c_void = null_mut();
        if let Some(f) = api.hsaKmtAllocMemory {
            if f(0, 0x10000, host, &mut p).0 == 0 {
                l.mem = p as usize;
            }
        }
        let mut d = HsaEventDescriptor {
            NodeId: 1,
            ..Default::default()
        };
        let mut e: *mut A::Event = null_mut();
        if let Some(f) = api.hsaKmtCreateEvent {
            if f(&mut d, true, false, &mut e).0 == 0 {
                l.event = e as usize;
            }
        }
        let mut ring: *mut c_void = null_mut();
        let mut q = A::QueueResource::default();
        if let (Some(alloc), Some(create)) = (api.hsaKmtAllocMemory, api.hsaKmtCreateQueue) {
            if alloc(0, 0x1000, host, &mut ring).0 == 0
                && create(1, 1, 100, 0, ring, 0x1000, null_mut(), &mut q).0 == 0
            {
                l.queue = A::queue_view(&q).0;
            }
        }
        let mut ctx: *mut HsaKFDContext = null_mut();
        if let Some(f) = api.hsaKmtOpenKFDCtx {
            // A second reference to the primary: its handle.
            f(&mut ctx);
            l.ctx = ctx as usize;
        }
        if let (Some(open2), Some(acq)) = (
            api.hsaKmtOpenSecondaryKFDCtx,
            api.hsaKmtAcquireSystemPropertiesCtx,
        ) {
            let mut c2: *mut HsaKFDContext = null_mut();
            if open2(&mut c2).0 == 0 && acq(c2, &mut sys).0 == 0 {
                l.ctx2 = c2 as usize;
            }
        }
        if state == State::AfterClose {
            if let Some(f) = api.hsaKmtReleaseSystemProperties {
                f();
            }
            if let Some(f) = api.hsaKmtCloseKFD {
                while f().0 == 0 {}
            }
        }
    }
    l
}

/// A pipe's two ends.
fn pipe() -> Option<(OwnedFd, OwnedFd)> {
    let mut fds = [0i32; 2];
    // SAFETY: `fds` has room for the two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return None;
    }
    // SAFETY: both descriptors were just created and are owned here.
    Some(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Runs call `n` of export `name` in a forked child; returns the
/// description of the arguments and the outcome. A call that hangs is
/// run once more with five times the time (a slow machine is not a
/// hang).
pub fn call_in_child<A: Abi>(api: &Api<A>, name: &str, n: u32) -> (String, String) {
    match call_once(api, name, n, CALL_TIMEOUT) {
        (_, o) if o.starts_with("hang") => call_once(api, name, n, 5 * CALL_TIMEOUT),
        r => r,
    }
}

fn call_once<A: Abi>(api: &Api<A>, name: &str, n: u32, timeout: Duration) -> (String, String) {
    // The child's simulator (kfd-sim makes one per forked process)
    // renders its sysfs tree in a directory of this call, removed here
    // once the child is gone: the child leaves with `_exit` (or is
    // killed) and would leave its tree behind.
    let base = std::env::var_os("KFD_SIM_TMPDIR")
        .map_or_else(std::env::temp_dir, std::path::PathBuf::from);
    let tmp = base.join(format!("kfd-fuzz-{}-{n}", std::process::id()));
    if std::fs::create_dir_all(&tmp).is_err() {
        return ("-".into(), "harness-error:tmpdir".into());
    }
    let r = call_in(api, name, n, timeout, &tmp);
    let _ = std::fs::remove_dir_all(&tmp);
    r
}

fn call_in<A: Abi>(
    api: &Api<A>,
    name: &str,
    n: u32,
    timeout: Duration,
    tmp: &std::path::Path,
) -> (String, String) {
    use std::os::fd::AsRawFd;
    let (Some((out_r, out_w)), Some((err_r, err_w))) = (pipe(), pipe()) else {
        return ("-".into(), "harness-error:pipe".into());
    };
    // SAFETY: the child only sets up, calls and leaves with `_exit`; the
    // scenario process is single-threaded.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return ("-".into(), "harness-error:fork".into());
    }
    if pid == 0 {
        // SAFETY: in the child: descriptors it owns, the environment of
        // a single-threaded process, then the call and `_exit`.
        unsafe {
            libc::dup2(err_w.as_raw_fd(), 2);
            std::env::set_var("HSAKMT_DEBUG_LEVEL", "3");
            std::env::set_var("KFD_SIM_TMPDIR", tmp);
            let mut g = Gen::new(name, n);
            let state = g.state();
            g.note(format!("{state:?}:"));
            g.live = setup(api, state);
            g.pages = Pages::map();
            g.announce = Some(out_w.as_raw_fd());
            let s = api.fuzz_call(name, &mut g);
            let line = match s {
                Some(Some(s)) => format!("S {}\n", s.0),
                Some(None) => "M\n".to_string(),
                None => "U\n".to_string(),
            };
            libc::write(out_w.as_raw_fd(), line.as_ptr().cast(), line.len());
            libc::_exit(0);
        }
    }
    drop((out_w, err_w));
    let t0 = Instant::now();
    let mut status = 0;
    let mut hung = false;
    loop {
        // SAFETY: `pid` is our child; `status` a valid out-pointer.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if r == pid {
            break;
        }
        if t0.elapsed() > timeout {
            // SAFETY: our child, killed and reaped.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
            hung = true;
            break;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    let (mut out, mut err) = (String::new(), String::new());
    let _ = std::fs::File::from(out_r).read_to_string(&mut out);
    let _ = std::fs::File::from(err_r).read_to_string(&mut err);
    let mut lines = out.lines();
    let desc = lines.next().unwrap_or("-").to_string();
    let result = lines.next().unwrap_or("");
    let mut outcome = if let Some(s) = result.strip_prefix("S ") {
        status_text(s.parse().unwrap_or(u32::MAX))
    } else if result == "M" {
        "MISSING".to_string()
    } else if result == "U" {
        "harness-error:unknown-export".to_string()
    } else if hung {
        "hang".to_string()
    } else if libc::WIFSIGNALED(status) {
        format!("crash:{}", signal_name(libc::WTERMSIG(status)))
    } else {
        format!("exit:{}", libc::WEXITSTATUS(status))
    };
    if err.contains(PANIC_MARK) || err.contains("panicked at") {
        outcome.push_str("+panic");
    }
    (desc, outcome)
}

/// `SIGSEGV`, `SIGABRT`, ... (the number for others).
pub fn signal_name(sig: i32) -> String {
    match sig {
        libc::SIGSEGV => "SIGSEGV".into(),
        libc::SIGABRT => "SIGABRT".into(),
        libc::SIGBUS => "SIGBUS".into(),
        libc::SIGFPE => "SIGFPE".into(),
        libc::SIGILL => "SIGILL".into(),
        libc::SIGKILL => "SIGKILL".into(),
        s => format!("signal{s}"),
    }
}

/// How a library fared in one call, from its recorded outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// It returned a status (or lacks the function).
    Status,
    /// It crashed.
    Crash,
    /// It did not return in time.
    Hang,
}

/// The fate of a recorded outcome, and whether it reported a panic.
pub fn fate(outcome: &str) -> (Fate, bool) {
    let panic = outcome.ends_with("+panic");
    let f = if outcome.starts_with("crash") || outcome.starts_with("exit") {
        Fate::Crash
    } else if outcome.starts_with("hang") {
        Fate::Hang
    } else {
        Fate::Status
    };
    (f, panic)
}

/// Counts of one fuzz scenario (or a sum of them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FuzzCounts {
    /// Calls made (per library).
    pub calls: usize,
    /// Reference crashes.
    pub ref_crashes: usize,
    /// Reference hangs.
    pub ref_hangs: usize,
    /// Crashes of ours.
    pub ours_crashes: usize,
    /// Hangs of ours.
    pub ours_hangs: usize,
    /// Panics ours reported.
    pub ours_panics: usize,
    /// Calls where ours crashed, hung or panicked and the reference
    /// returned a status (or ours panicked at all): failures.
    pub unexpected: usize,
    /// Calls where both returned a status, a different one.
    pub status_differ: usize,
    /// Failures of ours listed as intended (not counted as unexpected).
    pub intended: usize,
}

impl FuzzCounts {
    /// Adds another scenario's counts.
    pub fn add(&mut self, o: &FuzzCounts) {
        self.calls += o.calls;
        self.ref_crashes += o.ref_crashes;
        self.ref_hangs += o.ref_hangs;
        self.ours_crashes += o.ours_crashes;
        self.ours_hangs += o.ours_hangs;
        self.ours_panics += o.ours_panics;
        self.unexpected += o.unexpected;
        self.status_differ += o.status_differ;
        self.intended += o.intended;
    }

    /// Moves the last unexpected call to the intended ones.
    pub fn excuse(&mut self) {
        self.unexpected -= 1;
        self.intended += 1;
    }

    /// Counts one call; true when it is a failure of ours.
    pub fn call(&mut self, reference: &str, ours: &str) -> bool {
        let (rf, _) = fate(reference);
        let (of, panic) = fate(ours);
        self.calls += 1;
        self.ref_crashes += usize::from(rf == Fate::Crash);
        self.ref_hangs += usize::from(rf == Fate::Hang);
        self.ours_crashes += usize::from(of == Fate::Crash);
        self.ours_hangs += usize::from(of == Fate::Hang);
        self.ours_panics += usize::from(panic);
        let bad = panic || (of != Fate::Status && rf == Fate::Status);
        self.unexpected += usize::from(bad);
        self.status_differ +=
            usize::from(of == Fate::Status && rf == Fate::Status && ours != reference);
        bad
    }

    /// One line for the summary.
    pub fn line(&self) -> String {
        format!(
            "fuzz: {} calls per library; reference: {} crashes, {} hangs; ours: {} crashes, {} hangs, {} panics; {} unexpected, {} intended; {} status differences (not judged)",
            self.calls, self.ref_crashes, self.ref_hangs, self.ours_crashes, self.ours_hangs, self.ours_panics, self.unexpected, self.intended, self.status_differ
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_are_fixed_and_distinct() {
        let a: Vec<u64> = (0..4)
            .map(|_| 0)
            .scan(Gen::new("f", 1), |g, _: u64| Some(g.next_word()))
            .collect();
        let b: Vec<u64> = (0..4)
            .map(|_| 0)
            .scan(Gen::new("f", 1), |g, _: u64| Some(g.next_word()))
            .collect();
        let c: Vec<u64> = (0..4)
            .map(|_| 0)
            .scan(Gen::new("f", 2), |g, _: u64| Some(g.next_word()))
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn judgement() {
        let mut c = FuzzCounts::default();
        assert!(!c.call("SUCCESS(0)", "SUCCESS(0)"));
        assert!(!c.call("INVALID_PARAMETER(3)", "ERROR(1)"));
        assert!(c.call("INVALID_PARAMETER(3)", "crash:SIGSEGV"));
        assert!(c.call("SUCCESS(0)", "hang"));
        assert!(!c.call("crash:SIGSEGV", "crash:SIGSEGV"));
        assert!(!c.call("hang", "hang"));
        assert!(c.call("crash:SIGSEGV", "ERROR(1)+panic"));
        assert_eq!(
            c,
            FuzzCounts {
                calls: 7,
                ref_crashes: 2,
                ref_hangs: 1,
                ours_crashes: 2,
                ours_hangs: 2,
                ours_panics: 1,
                unexpected: 3,
                status_differ: 1,
                intended: 0,
            }
        );
    }
}
