//! The per-library benchmark child: loads one libhsakmt by path with
//! [`conformance::api::Api::load`], runs one group of operations (see
//! [`crate::ops`]) and writes samples in the [`crate::proto`] format on
//! stdout. One library per process, always: two thunks in one process would
//! share the one KFD process the kernel (and kfd-sim) keeps per process.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use conformance::abi::{Abi, AbiKind, Newest, Rocm52, Rocm62};
use conformance::api::{Api, St};
use conformance::cx::status_text;

use crate::proto::Writer;

/// How long to measure each operation.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Time spent sampling one operation (after calibration).
    pub per_op: Duration,
    /// At most this many samples per operation and child.
    pub max_samples: usize,
    /// At least this many samples (unless an operation takes 5× `per_op`).
    pub min_samples: usize,
    /// The counting pass: instead of timing, count the ioctls of a fixed
    /// number of calls in the simulator's trace (`KFD_SIM_TRACE`).
    pub count_ioctls: bool,
    /// A fixed batch size instead of a calibrated one, and exactly
    /// `max_samples` samples: known call counts, for profiling under
    /// callgrind (`kfd-bench child --batch N`).
    pub fixed_batch: Option<usize>,
}

impl Budget {
    /// The wall time one sample (a batch of calls) aims at.
    fn batch_target(&self) -> Duration {
        self.per_op / self.max_samples.max(1) as u32
    }
}

/// What one child runs.
#[derive(Debug, Clone)]
pub struct ChildConfig {
    /// ABI generation the library is loaded as.
    pub abi: AbiKind,
    /// The library.
    pub lib: PathBuf,
    /// The group (see [`crate::ops::GROUPS`]).
    pub group: String,
    /// The simulator preset the parent selected (for labels).
    pub preset: String,
    /// Live-allocation levels of the `scaling` group, ascending.
    pub levels: Vec<usize>,
    /// What the `scaling` group's live set is made of.
    pub live: Live,
    /// Sampling budget.
    pub budget: Budget,
    /// Measure only these operation ids, comma-separated (for profiling).
    pub only: Option<String>,
}

/// The buffers of the `scaling` group's live set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Live {
    /// 4 KiB VRAM buffers (no CPU mapping), spread round-robin over every
    /// GPU node: the kernel charges VRAM in 2 MiB units, so one 64 GiB GPU
    /// holds at most 32k of them.
    Vram,
    /// 4 KiB system (GTT, host-accessible) buffers: one CPU mapping each.
    Sys,
}

impl Live {
    /// Parses `vram` or `sys`.
    pub fn parse(s: &str) -> Option<Live> {
        match s {
            "vram" => Some(Live::Vram),
            "sys" => Some(Live::Sys),
            _ => None,
        }
    }

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Live::Vram => "vram",
            Live::Sys => "sys",
        }
    }
}

/// Why an operation could not be timed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fail {
    /// NOT_SUPPORTED (11) or a missing symbol: reported as "unsupported".
    Unsupported(String),
    /// Any other failure.
    Error(String),
}

/// `Ok` for SUCCESS, the matching [`Fail`] otherwise.
pub fn status(func: &str, s: St) -> Result<(), Fail> {
    match s.0 {
        0 => Ok(()),
        11 => Err(Fail::Unsupported(format!("{func}: {}", status_text(11)))),
        n => Err(Fail::Error(format!("{func}: {}", status_text(n)))),
    }
}

/// `Ok` for the status `want` (a call expected to answer something other
/// than SUCCESS, e.g. a nested open's `KERNEL_ALREADY_OPENED`), without
/// formatting anything; the matching [`Fail`] otherwise.
pub fn expect(func: &str, s: St, want: u32) -> Result<(), Fail> {
    match s.0 {
        n if n == want => Ok(()),
        0 => Err(Fail::Error(format!(
            "{func}: SUCCESS, expected {}",
            status_text(want)
        ))),
        _ => status(func, s),
    }
}

/// Calls an hsakmt entry point of an [`Api`]: `call!(api, hsaKmtX(a, b))`
/// gives `Result<(), Fail>`; a symbol the library lacks is `Unsupported`.
/// `call!(expect N, api, hsaKmtX(..))` expects the status `N` instead of
/// SUCCESS ([`expect`]). The arguments are evaluated before, outside the
/// unsafe block.
#[macro_export]
macro_rules! call {
    (expect $want:expr, $api:expr, $f:ident($($a:expr),* $(,)?)) => {
        $crate::call!(@bind (|f: &str, s| $crate::child::expect(f, s, $want)), $api, $f,
            [$($a,)*], [a0 a1 a2 a3 a4 a5 a6 a7 a8 a9], [])
    };
    ($api:expr, $f:ident($($a:expr),* $(,)?)) => {
        $crate::call!(@bind $crate::child::status, $api, $f, [$($a,)*],
            [a0 a1 a2 a3 a4 a5 a6 a7 a8 a9], [])
    };
    (@bind $check:expr, $api:expr, $f:ident, [$head:expr, $($rest:expr,)*],
        [$n:ident $($ns:ident)*], [$($b:ident)*]) => {{
        let $n = $head;
        $crate::call!(@bind $check, $api, $f, [$($rest,)*], [$($ns)*], [$($b)* $n])
    }};
    (@bind $check:expr, $api:expr, $f:ident, [], [$($ns:ident)*], [$($b:ident)*]) => {{
        match $api.$f {
            // SAFETY: `Api::load` typed the entry point with the C prototype
            // of the ABI generation the library was built for (the parent
            // pairs each library with its generation), and every benchmark
            // passes, for each pointer argument, either a live local of the
            // prototype's type (out-parameters, descriptors, arrays sized by
            // the count argument next to them) or an address the same
            // library returned and that is still allocated.
            Some(func) => ($check)(stringify!($f), unsafe { func($($b),*) }),
            None => Err($crate::child::Fail::Unsupported(format!(
                "{}: not exported",
                stringify!($f)
            ))),
        }
    }};
}

/// How a sample's time is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Wall time of a whole batch of calls divided by the batch size.
    Batch,
    /// The sum of the durations the closure returns (it times only its
    /// own critical section) divided by the batch size.
    Own,
}

/// The sampler and the output of a child.
#[derive(Debug)]
pub struct Meter<W: Write> {
    /// The protocol writer.
    pub out: Writer<W>,
    /// The sampling budget.
    pub budget: Budget,
    /// The trace file, in the counting pass.
    pub trace: Option<PathBuf>,
    /// Only this operation is measured (the others are skipped silently).
    pub only: Option<String>,
}

/// Calls per operation in the counting pass.
const COUNT_CALLS: usize = 20;

/// Newlines in `path` after byte `from`; returns `(lines, new length)`.
fn new_lines(path: &Path, from: u64) -> (usize, u64) {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut f) = std::fs::File::open(path) else {
        return (0, from);
    };
    let mut buf = Vec::new();
    if f.seek(SeekFrom::Start(from)).is_err() || f.read_to_end(&mut buf).is_err() {
        return (0, from);
    }
    (
        buf.iter().filter(|b| **b == b'\n').count(),
        from + buf.len() as u64,
    )
}

impl<W: Write> Meter<W> {
    /// Reports `f`'s failure as `U` or `X` for `op`/`param`.
    pub fn fail(&mut self, op: &str, param: &str, f: &Fail) {
        match f {
            Fail::Unsupported(d) => self.out.unsupported(op, param, d),
            Fail::Error(d) => self.out.error(op, param, d),
        }
    }

    /// Times `f` (one operation per call) and writes samples of ns per
    /// operation, divided by `per` (e.g. 2 for one way of a round trip).
    /// The first call is a warm-up; a failure there, or later, ends the
    /// measurement with a `U`/`X` record. Returns the calibration call's
    /// time (ns, divided by `per`) when the operation works.
    pub fn measure(
        &mut self,
        op: &str,
        param: &str,
        mode: Mode,
        per: f64,
        mut f: impl FnMut() -> Result<Duration, Fail>,
    ) -> Option<f64> {
        if self
            .only
            .as_deref()
            .is_some_and(|o| !o.split(',').any(|x| x == op))
        {
            return None;
        }
        if let Err(e) = f() {
            self.fail(op, param, &e);
            return None;
        }
        if let Some(trace) = self.trace.clone() {
            let (_, start) = new_lines(&trace, 0);
            let t = Instant::now();
            for _ in 0..COUNT_CALLS {
                if let Err(e) = f() {
                    self.fail(op, param, &e);
                    return None;
                }
            }
            let el = t.elapsed();
            let (n, _) = new_lines(&trace, start);
            if mode == Mode::Batch {
                self.out
                    .ioctls(op, param, n as f64 / COUNT_CALLS as f64 / per);
            }
            return Some(el.as_nanos() as f64 / COUNT_CALLS as f64 / per);
        }
        let t = Instant::now();
        let own = match f() {
            Ok(d) => d,
            Err(e) => {
                self.fail(op, param, &e);
                return None;
            }
        };
        let one = match mode {
            Mode::Batch => t.elapsed(),
            Mode::Own => own,
        };
        let target = self.budget.batch_target().as_nanos();
        let batch = match self.budget.fixed_batch {
            Some(b) => b.max(1),
            None => (target / one.as_nanos().max(1)).clamp(1, 1_000_000) as usize,
        };
        let fixed = self.budget.fixed_batch.is_some();
        let start = Instant::now();
        let mut n = 0usize;
        while n < self.budget.max_samples
            && (fixed
                || ((start.elapsed() < self.budget.per_op || n < self.budget.min_samples)
                    && !(n >= 1 && start.elapsed() > self.budget.per_op * 5)))
        {
            let t = Instant::now();
            let mut own = Duration::ZERO;
            for _ in 0..batch {
                match f() {
                    Ok(d) => own += d,
                    Err(e) => {
                        self.fail(op, param, &e);
                        return None;
                    }
                }
            }
            let total = match mode {
                Mode::Batch => t.elapsed(),
                Mode::Own => own,
            };
            self.out
                .sample(op, param, total.as_nanos() as f64 / batch as f64 / per);
            n += 1;
        }
        Some(one.as_nanos() as f64 / per)
    }
}

/// Runs a child: loads the library as its generation and runs the group.
pub fn run(cfg: &ChildConfig) -> Result<(), String> {
    match cfg.abi {
        AbiKind::Rocm52 => run_abi::<Rocm52>(cfg),
        AbiKind::Rocm62 => run_abi::<Rocm62>(cfg),
        AbiKind::Newest => run_abi::<Newest>(cfg),
    }
}

fn run_abi<A: Abi + Sync>(cfg: &ChildConfig) -> Result<(), String> {
    let stdout = std::io::stdout();
    let trace = match (cfg.budget.count_ioctls, std::env::var_os("KFD_SIM_TRACE")) {
        (true, Some(p)) => Some(PathBuf::from(p)),
        (true, None) => return Err("--count-ioctls needs KFD_SIM_TRACE".into()),
        (false, _) => None,
    };
    let mut m = Meter {
        out: Writer::new(stdout.lock()),
        budget: cfg.budget,
        trace,
        only: cfg.only.clone(),
    };
    // The floor first, before the library exists in the process.
    crate::ops::floor(&mut m);
    // SAFETY: the parent names a libhsakmt of generation `A` (it pairs
    // Debian 5.2.3 and our rocm-5.2 build with `Rocm52`, our newest build
    // with `Current`); this process exists only to host it.
    let api = unsafe { Api::<A>::load(Path::new(&cfg.lib)) }?;
    crate::ops::run_group(&api, cfg, &mut m)
}
