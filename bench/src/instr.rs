//! `kfd-bench instructions`: instructions per call of each library, apart
//! from the simulated kernel's, counted with callgrind.
//!
//! The timed table cannot show a library's own cost of a call that makes
//! an ioctl: the simulated kernel's ioctls cost microseconds, the library
//! its hundreds of nanoseconds. Here every operation runs in a benchmark
//! child ([`crate::child`]) under `valgrind --tool=callgrind`, for the C
//! library and for ours, once with a batch of N1 calls and once with N2;
//! each callgrind file is read ([`crate::callgrind`]) into the
//! instructions executed per object file, and the count per call is
//! `(count at N2 − count at N1) / (N2 − N1)`, so that start-up, the
//! warm-up call and exit cancel.
//!
//! Each object file is in one [`Group`]: the library under test, the
//! simulator (`libkfd_sim.so`), the runner (`kfd-bench`), or system (libc,
//! ld.so, libgcc, libnuma, libdrm, code callgrind has no file for: the
//! rest). The system code's instructions are then split by who asked for
//! them ([`attribute`]): a call from the library (or the simulator, or the
//! runner) into a system function whose whole subtree is system code
//! brings its inclusive count to that caller's share. Without this split
//! the simulator's own calls into libc (`malloc`, locks, the real `mmap`
//! behind its interposer: 1.2k instructions per event create+destroy,
//! 2k per alloc+free) would count as the library's system cost. What
//! reaches system code only through functions that call back out of it
//! (the program's start and exit, lazy binding, `libdrm` calls that end
//! in an ioctl) is "unattributed".

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use conformance::report::json_string;
use conformance::spawn;

use crate::callgrind::{self, Func, Profile};
use crate::child::Fail;
use crate::ops::{info, OpInfo, Unit};
use crate::parent::Side;
use crate::proto::{self, Record};

/// The operations counted when `--ops` is not given.
pub const DEFAULT_OPS: &[&str] = &[
    "open-nested",
    "event-create",
    "event-set-wait",
    "event-wait-all-64",
    "event-wait-any-64",
    "pointer-info",
    "pointer-info-mapped",
    "alloc-free-sys4k",
    "alloc-map-free-sys4k",
    "alloc-free-vram2m",
    "alloc-map-free-vram2m",
    "queue",
];

/// The two batch sizes (N1, N2) of an operation. Two start-ups of the
/// same child differ by some 10k instructions (the sysfs reads, the heap,
/// the simulator's directory), which the difference does not cancel:
/// N2 − N1 is as large as the operation's cost allows, so that this
/// stays within an instruction or two per call. The calls without an
/// ioctl cost a few hundred instructions and take 20000 more calls; a
/// wait on 64 events (64 sets and a wait in the simulator, 200k) and a
/// queue create+destroy (80k) take fewer.
pub fn batches(op: &str) -> (usize, usize) {
    match op {
        "open-nested" | "pointer-info" | "pointer-info-mapped" => (1000, 21000),
        "event-wait-all-64" => (100, 1100),
        "queue" => (20, 520),
        _ => (100, 2100),
    }
}

/// Where an object file's instructions count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Group {
    /// The library under test.
    Library,
    /// Every object that is none of the others: libc, ld.so, libgcc,
    /// libnuma, libdrm, valgrind's preload, code without a file (`???`).
    System,
    /// `libkfd_sim.so`, the simulated kernel.
    Simulator,
    /// `kfd-bench`, the runner.
    Bench,
}

impl Group {
    /// Every group, in index order ([`Group::index`]).
    pub const ALL: [Group; 4] = [
        Group::Library,
        Group::System,
        Group::Simulator,
        Group::Bench,
    ];

    /// The group's position in [`Group::ALL`] (for arrays of counts).
    pub fn index(self) -> usize {
        self as usize
    }

    /// Its name in `instructions.json`.
    pub fn key(self) -> &'static str {
        match self {
            Group::Library => "library",
            Group::System => "system",
            Group::Simulator => "simulator",
            Group::Bench => "bench",
        }
    }
}

/// Whether the object file callgrind names `object` is the file `path`:
/// the same path, the same file once both are resolved, or, when
/// `path`'s file is no longer where it was, the same resolved file name
/// (e.g. `libhsakmt.so.1.0.6` for Debian's `libhsakmt.so.1`).
pub fn same_file(object: &str, path: &Path) -> bool {
    let obj = Path::new(object);
    if obj == path {
        return true;
    }
    let resolved = std::fs::canonicalize(path).ok();
    if let (Some(a), Some(b)) = (std::fs::canonicalize(obj).ok(), resolved.as_ref()) {
        if &a == b {
            return true;
        }
    }
    let name = resolved.as_deref().unwrap_or(path).file_name();
    name.is_some() && name == obj.file_name()
}

/// The three object files of a run that are not system code.
#[derive(Debug, Clone)]
pub struct Objects {
    /// The library under test.
    pub library: PathBuf,
    /// `libkfd_sim.so`.
    pub simulator: PathBuf,
    /// The runner (`kfd-bench`).
    pub bench: PathBuf,
}

impl Objects {
    /// The group of the object file callgrind names `object`.
    pub fn group(&self, object: &str) -> Group {
        if same_file(object, &self.library) {
            Group::Library
        } else if same_file(object, &self.simulator) {
            Group::Simulator
        } else if same_file(object, &self.bench) {
            Group::Bench
        } else {
            Group::System
        }
    }
}

/// One callgrind file's instruction counts, by where they were spent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    /// Self count per object file.
    pub objects: BTreeMap<String, u64>,
    /// Self count per group, indexed by [`Group::index`].
    pub groups: [u64; 4],
    /// The system code's count split by who called it ([`attribute`]),
    /// indexed by [`Group::index`]; the `System` entry is what no caller
    /// could be named for (the unattributed rest, which can be negative
    /// only if callgrind's inclusive counts disagree with its self counts).
    pub system_for: [i64; 4],
}

/// Splits the self count of system code by the group that called it.
///
/// A system function is *closed* when nothing it calls, directly or
/// through other system functions, is outside system code. The inclusive
/// count of a call from a function of group G into a closed system
/// function is system code run for G, and two such calls never count the
/// same instruction (their subtrees hold no non-system frame to nest
/// another in). Calls into functions that are not closed (the program's
/// start, which calls `main`; exit handlers; lazy binding; a libdrm call
/// that ends in the simulator's ioctl) are left out: what they ran is in
/// the result's `System` entry, the self count of system code minus the
/// three shares.
pub fn attribute<'a>(p: &'a Profile, group: &impl Fn(&str) -> Group) -> [i64; 4] {
    let mut cache: HashMap<&'a str, Group> = HashMap::new();
    let mut of = |object: &'a str| *cache.entry(object).or_insert_with(|| group(object));
    let edges: Vec<(&Func, &Func, u64, Group, Group)> = p
        .calls
        .iter()
        .map(|((a, b), &n)| (a, b, n, of(&a.object), of(&b.object)))
        .collect();
    // Open: a system function that calls out of system code, and, until
    // nothing changes, one that calls an open system function.
    let mut open: BTreeSet<&Func> = edges
        .iter()
        .filter(|e| e.3 == Group::System && e.4 != Group::System)
        .map(|e| e.0)
        .collect();
    loop {
        let before = open.len();
        for e in &edges {
            if e.3 == Group::System && e.4 == Group::System && open.contains(e.1) {
                open.insert(e.0);
            }
        }
        if open.len() == before {
            break;
        }
    }
    let mut share = [0i64; 4];
    for e in &edges {
        if e.3 != Group::System && e.4 == Group::System && !open.contains(e.1) {
            share[e.3.index()] += e.2 as i64;
        }
    }
    let system_self: u64 = p
        .objects
        .iter()
        .filter(|(o, _)| of(o) == Group::System)
        .map(|(_, n)| n)
        .sum();
    share[Group::System.index()] = system_self as i64 - share.iter().sum::<i64>();
    share
}

/// Counts a callgrind file's instructions by object, group and caller.
pub fn tally(p: &Profile, objects: &Objects) -> Tally {
    let group = |o: &str| objects.group(o);
    let mut t = Tally {
        objects: p.objects.clone(),
        system_for: attribute(p, &group),
        ..Tally::default()
    };
    for (o, n) in &p.objects {
        t.groups[group(o).index()] += n;
    }
    t
}

/// Instructions per call of one library in one operation: the
/// difference of two [`Tally`]s divided by the difference of their
/// batch sizes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Split {
    /// The library's own code.
    pub library: f64,
    /// System code the library called ([`attribute`]).
    pub system: f64,
    /// The simulator's own code and the system code it called.
    pub simulator: f64,
    /// The runner's own code and the system code it called.
    pub bench: f64,
    /// System code no caller could be named for.
    pub unattributed: f64,
    /// Every system object's own code (`system` + the simulator's and the
    /// runner's system shares + `unattributed`).
    pub system_self: f64,
    /// Per object file, its own code.
    pub objects: BTreeMap<String, f64>,
}

impl Split {
    /// `(b − a) / (n2 − n1)` of every count: `a` counted with a batch of
    /// `n1` calls, `b` with `n2`.
    pub fn between(a: &Tally, b: &Tally, n1: usize, n2: usize) -> Split {
        let d = n2.saturating_sub(n1).max(1) as f64;
        let per = |x: f64, y: f64| (y - x) / d;
        let g = |t: &Tally, gr: Group| t.groups[gr.index()] as f64;
        let s = |t: &Tally, gr: Group| t.system_for[gr.index()] as f64;
        let mut objects = BTreeMap::new();
        for o in a.objects.keys().chain(b.objects.keys()) {
            let x = a.objects.get(o).copied().unwrap_or(0) as f64;
            let y = b.objects.get(o).copied().unwrap_or(0) as f64;
            objects.insert(o.clone(), per(x, y));
        }
        let both = |gr: Group| per(g(a, gr) + s(a, gr), g(b, gr) + s(b, gr));
        Split {
            library: per(g(a, Group::Library), g(b, Group::Library)),
            system: per(s(a, Group::Library), s(b, Group::Library)),
            simulator: both(Group::Simulator),
            bench: both(Group::Bench),
            unattributed: per(s(a, Group::System), s(b, Group::System)),
            system_self: per(g(a, Group::System), g(b, Group::System)),
            objects,
        }
    }

    /// The library's code and the system code it called.
    pub fn lib_plus_system(&self) -> f64 {
        self.library + self.system
    }
}

/// One library's result for one operation.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Counted.
    Counted(Split),
    /// The library answers NOT_SUPPORTED or lacks the symbol.
    Unsupported(String),
    /// The run failed (valgrind missing, a crash, an error status, a
    /// callgrind file that does not read): why.
    Error(String),
}

/// One operation's row.
#[derive(Debug, Clone)]
pub struct Row {
    /// The operation.
    pub op: &'static OpInfo,
    /// Its parameter (`live=0` for the scaling group, the preset for the
    /// topology group).
    pub param: String,
    /// Its batch sizes (N1, N2).
    pub batches: (usize, usize),
    /// What else each call's count holds, if anything.
    pub note: Option<&'static str>,
    /// The C library.
    pub c: Outcome,
    /// Ours.
    pub ours: Outcome,
}

impl Row {
    /// C's library+system count over ours, when both were counted.
    pub fn ratio(&self) -> Option<f64> {
        match (&self.c, &self.ours) {
            (Outcome::Counted(c), Outcome::Counted(o)) if o.lib_plus_system() > 0.0 => {
                Some(c.lib_plus_system() / o.lib_plus_system())
            }
            _ => None,
        }
    }

    /// The side's outcome.
    pub fn side(&self, side: Side) -> &Outcome {
        match side {
            Side::C => &self.c,
            Side::Ours => &self.ours,
        }
    }
}

/// What `kfd-bench instructions` runs.
#[derive(Debug, Clone)]
pub struct Config {
    /// The C library (rocm-5.2 generation).
    pub reference: PathBuf,
    /// Our rocm-5.2 build.
    pub ours: PathBuf,
    /// `libkfd_sim.so`.
    pub sim: PathBuf,
    /// The runner (this executable), started as the child under valgrind.
    pub runner: PathBuf,
    /// The valgrind executable.
    pub valgrind: PathBuf,
    /// Operation ids ([`DEFAULT_OPS`] unless given).
    pub ops: Vec<String>,
    /// The simulator's topology preset.
    pub preset: String,
    /// Where `instructions.{json,txt,md}` go; the callgrind files go to
    /// `instructions/` below it.
    pub out_dir: PathBuf,
    /// Per-run time limit.
    pub child_timeout: Duration,
}

/// Everything a run produced.
#[derive(Debug, Clone)]
pub struct Report {
    /// The configuration.
    pub config: Config,
    /// `valgrind --version`, or why valgrind could not run.
    pub valgrind: Result<String, String>,
    /// One row per operation, in the order asked.
    pub rows: Vec<Row>,
    /// When the run ended ([`crate::machine::now_utc`]).
    pub date: String,
    /// Wall time of the runs.
    pub elapsed: Duration,
}

impl Report {
    /// The runs that failed, one line each (`op param: side error: why`).
    pub fn failures(&self) -> Vec<String> {
        let mut v = Vec::new();
        for r in &self.rows {
            for side in [Side::C, Side::Ours] {
                if let Outcome::Error(e) = r.side(side) {
                    v.push(format!("{}: {} error: {e}", label(r), side_name(side)));
                }
            }
        }
        v
    }
}

/// Why `o` cannot be counted per call this way, if it cannot.
pub fn unfit(o: &OpInfo) -> Option<&'static str> {
    if o.unit != Unit::Ns {
        Some("it is not a cost per call")
    } else if o.ours_only {
        Some("only our newest build has it (no C counterpart)")
    } else {
        match o.id {
            "fill" => Some("it is not measured in batches of calls"),
            "threads-1" | "threads-2" => Some(
                "the threads group also runs its two-thread part, with a batch of its own \
                 (alloc-free-sys4k is the same call on one thread)",
            ),
            _ => None,
        }
    }
}

/// What else an operation's count per call holds.
pub fn note(op: &str) -> Option<&'static str> {
    match op {
        "event-wait-all-64" => Some(
            "each call also counts the 64 hsaKmtSetEvent calls before the wait, \
             which the timed table leaves out",
        ),
        "event-wait-any-64" => Some(
            "each call also counts the hsaKmtSetEvent before the wait, \
             which the timed table leaves out",
        ),
        "event-wake" => Some(
            "both threads count: a round trip (two sets, two waits), which the timed \
             table halves; waits that spin make it depend on scheduling",
        ),
        "topology" => Some("OpenKFD, the whole topology read, CloseKFD"),
        _ => None,
    }
}

/// The parameter the child reports `op` with.
fn param(o: &OpInfo, preset: &str) -> String {
    match o.group {
        "scaling" => "live=0".into(),
        "topology" => preset.into(),
        _ => String::new(),
    }
}

fn side_name(side: Side) -> &'static str {
    match side {
        Side::C => "C",
        Side::Ours => "ours",
    }
}

/// `op` or `op (param)`.
fn label(r: &Row) -> String {
    if r.param.is_empty() {
        r.op.id.to_string()
    } else {
        format!("{} ({})", r.op.id, r.param)
    }
}

/// The operations of `ids`, or what is wrong with the first that is not
/// one this mode can count.
pub fn plan(ids: &[String]) -> Result<Vec<&'static OpInfo>, String> {
    if ids.is_empty() {
        return Err("--ops: no operation".into());
    }
    ids.iter()
        .map(|id| {
            let o = info(id).ok_or_else(|| {
                format!(
                    "--ops: unknown operation `{id}` (operations: {})",
                    crate::ops::OPS
                        .iter()
                        .filter(|o| unfit(o).is_none())
                        .map(|o| o.id)
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })?;
            match unfit(o) {
                Some(why) => Err(format!("--ops: `{id}` cannot be counted per call: {why}")),
                None => Ok(o),
            }
        })
        .collect()
}

/// `valgrind --version`, or a sentence saying why it could not run.
pub fn valgrind_version(valgrind: &Path) -> Result<String, String> {
    let why = |e: String| {
        format!(
            "valgrind ({}) could not run: {e}; install Debian's valgrind \
             (apt-get install valgrind) or use `cargo xtask bench --instructions`, \
             which installs it",
            valgrind.display()
        )
    };
    let out = Command::new(valgrind)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| why(e.to_string()))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(why(format!("`--version` exited with {}", out.status)))
    }
}

/// One child under callgrind: `n` calls of `o` in one batch with library
/// `lib`; its callgrind file read and tallied.
fn count_once(cfg: &Config, o: &OpInfo, side: Side, lib: &Path, n: usize) -> Result<Tally, Fail> {
    let work = cfg.out_dir.join("instructions");
    let err = |e: String| Fail::Error(e);
    std::fs::create_dir_all(&work).map_err(|e| err(format!("{}: {e}", work.display())))?;
    let tag = format!("{}-{}-{n}", o.id, side.key());
    let cg = work.join(format!("{tag}.callgrind"));
    let out = work.join(format!("{tag}.out"));
    let stderr = work.join(format!("{tag}.err"));
    for f in [&cg, &out, &stderr] {
        let _ = std::fs::remove_file(f);
    }
    let file =
        |p: &Path| std::fs::File::create(p).map_err(|e| err(format!("{}: {e}", p.display())));
    let mut cmd = Command::new(&cfg.valgrind);
    cmd.arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}", cg.display()))
        .arg("-q")
        .arg(&cfg.runner)
        .args(["child", "--abi", "rocm-5.2", "--lib"])
        .arg(lib)
        .args(["--group", o.group, "--preset", &cfg.preset, "--levels", "0"])
        .args(["--only", o.id, "--batch", &n.to_string()])
        .args(["--max-samples", "1", "--min-samples", "1"])
        .stdin(Stdio::null())
        .stdout(file(&out)?)
        .stderr(file(&stderr)?)
        .env_remove("KFD_SIM_FAULTS")
        .env_remove("KFD_SIM_TRACE")
        .env_remove("KFD_SIM_SUMMARY");
    spawn::on_sim(&mut cmd, &cfg.sim, &cfg.preset, "kfd-bench");
    let mut child = cmd
        .spawn()
        .map_err(|e| err(format!("spawn {}: {e}", cfg.valgrind.display())))?;
    let (status, timed_out) =
        spawn::wait_timeout(&mut child, cfg.child_timeout, Duration::from_millis(10))
            .map_err(err)?;
    let recs = proto::parse(&std::fs::read_to_string(&out).unwrap_or_default());
    let mine = |r: &&Record| match r {
        Record::Sample { op, .. }
        | Record::Unsupported { op, .. }
        | Record::Error { op, .. }
        | Record::Note { op, .. }
        | Record::Ioctls { op, .. } => op == o.id,
    };
    for r in recs.iter().filter(mine) {
        match r {
            Record::Unsupported { detail, .. } => return Err(Fail::Unsupported(detail.clone())),
            Record::Error { detail, .. } => return Err(err(detail.clone())),
            _ => {}
        }
    }
    if timed_out || !status.success() {
        let text = std::fs::read_to_string(&stderr).unwrap_or_default();
        let last = spawn::last_line(&text);
        return Err(err(format!(
            "{}{}{last} ({})",
            if timed_out {
                format!("timed out after {:?}", cfg.child_timeout)
            } else {
                format!("the child under valgrind {status}")
            },
            if last.is_empty() { "" } else { "; stderr: " },
            stderr.display()
        )));
    }
    if !recs
        .iter()
        .filter(mine)
        .any(|r| matches!(r, Record::Sample { .. }))
    {
        return Err(err(format!(
            "the child measured nothing ({})",
            out.display()
        )));
    }
    let text = std::fs::read_to_string(&cg).map_err(|e| err(format!("{}: {e}", cg.display())))?;
    let p = callgrind::parse(&text)
        .and_then(|p| p.check().map(|_| p))
        .map_err(|e| err(format!("{}: {e}", cg.display())))?;
    let objects = Objects {
        library: lib.to_path_buf(),
        simulator: cfg.sim.clone(),
        bench: cfg.runner.clone(),
    };
    let t = tally(&p, &objects);
    if t.groups[Group::Library.index()] == 0 && o.id != "floor" {
        return Err(err(format!(
            "no object in {} is the library {} (objects: {})",
            cg.display(),
            lib.display(),
            t.objects.keys().cloned().collect::<Vec<_>>().join(", ")
        )));
    }
    Ok(t)
}

/// Counts `o` with `lib` at both batch sizes.
fn count(cfg: &Config, o: &OpInfo, side: Side, lib: &Path, (n1, n2): (usize, usize)) -> Outcome {
    let both = count_once(cfg, o, side, lib, n1)
        .and_then(|a| count_once(cfg, o, side, lib, n2).map(|b| (a, b)));
    match both {
        Ok((a, b)) => Outcome::Counted(Split::between(&a, &b, n1, n2)),
        Err(Fail::Unsupported(d)) => Outcome::Unsupported(d),
        Err(Fail::Error(d)) => Outcome::Error(d),
    }
}

/// Runs every operation of `cfg.ops` for both libraries; `progress` gets
/// one line per operation and library. Fails only on a bad `--ops`; a
/// run that fails is an [`Outcome::Error`] in its row.
pub fn run(cfg: &Config, mut progress: impl FnMut(&str)) -> Result<Report, String> {
    let ops = plan(&cfg.ops)?;
    let start = Instant::now();
    let valgrind = valgrind_version(&cfg.valgrind);
    if let Err(e) = &valgrind {
        progress(&format!("error: {e}"));
    }
    let mut rows = Vec::new();
    for o in ops {
        let batches = batches(o.id);
        let mut row = Row {
            op: o,
            param: param(o, &cfg.preset),
            batches,
            note: note(o.id),
            c: Outcome::Error(String::new()),
            ours: Outcome::Error(String::new()),
        };
        for (side, lib) in [(Side::C, &cfg.reference), (Side::Ours, &cfg.ours)] {
            let t = Instant::now();
            let outcome = match &valgrind {
                Err(e) => Outcome::Error(e.clone()),
                Ok(_) => count(cfg, o, side, lib, batches),
            };
            let what = match &outcome {
                Outcome::Counted(s) => format!(
                    "{:.0} library + {:.0} system instructions per call ({:.0} simulator)",
                    s.library, s.system, s.simulator
                ),
                Outcome::Unsupported(d) => format!("unsupported: {d}"),
                Outcome::Error(d) => format!("error: {d}"),
            };
            progress(&format!(
                "{} {}: {what} [{:.1} s]",
                label(&row),
                side_name(side),
                t.elapsed().as_secs_f64()
            ));
            match side {
                Side::C => row.c = outcome,
                Side::Ours => row.ours = outcome,
            }
        }
        rows.push(row);
    }
    Ok(Report {
        config: cfg.clone(),
        valgrind,
        rows,
        date: crate::machine::now_utc(),
        elapsed: start.elapsed(),
    })
}

/// A count per call, whole instructions (never `-0`).
fn n(x: f64) -> String {
    let r = x.round();
    format!("{:.0}", if r == 0.0 { 0.0 } else { r })
}

/// A cell: the count `f` picks from a counted split, else the outcome.
fn cell(o: &Outcome, f: impl Fn(&Split) -> f64) -> String {
    match o {
        Outcome::Counted(s) => n(f(s)),
        Outcome::Unsupported(_) => "unsupported".into(),
        Outcome::Error(_) => "error".into(),
    }
}

/// The row's cells after the operation: C and ours library, system,
/// library+system, and the ratio.
fn cells(r: &Row) -> [String; 7] {
    [
        cell(&r.c, |s| s.library),
        cell(&r.ours, |s| s.library),
        cell(&r.c, |s| s.system),
        cell(&r.ours, |s| s.system),
        cell(&r.c, Split::lib_plus_system),
        cell(&r.ours, Split::lib_plus_system),
        r.ratio().map(|x| format!("{x:.2}")).unwrap_or_default(),
    ]
}

/// The batch sizes, as said under the tables: those of most rows first,
/// then the others with their operations.
fn batches_text(rows: &[Row]) -> String {
    let mut seen: Vec<((usize, usize), Vec<&str>)> = Vec::new();
    for r in rows {
        match seen.iter_mut().find(|s| s.0 == r.batches) {
            Some(s) => s.1.push(r.op.id),
            None => seen.push((r.batches, vec![r.op.id])),
        }
    }
    // Stable: of equally common sizes, the first seen leads.
    seen.sort_by_key(|s| std::cmp::Reverse(s.1.len()));
    seen.iter()
        .enumerate()
        .map(|(i, ((a, b), ops))| {
            if i == 0 {
                format!("{a} and {b} calls")
            } else {
                format!("{a} and {b} ({})", ops.join(", "))
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The notes under a table: what a row's count holds, unsupported and
/// failed runs.
fn notes(rep: &Report) -> Vec<String> {
    let mut v = Vec::new();
    for r in &rep.rows {
        if let Some(n) = r.note {
            v.push(format!("{}: {n}", label(r)));
        }
        for side in [Side::C, Side::Ours] {
            if let Outcome::Unsupported(d) = r.side(side) {
                v.push(format!(
                    "{}: {} unsupported: {d}",
                    label(r),
                    side_name(side)
                ));
            }
        }
    }
    v.extend(rep.failures());
    v
}

const HEADERS: [&str; 8] = [
    "C library",
    "ours library",
    "C system",
    "ours system",
    "C lib+system",
    "ours lib+system",
    "C/ours",
    "",
];

/// The table printed on stdout (`instructions.txt`).
pub fn table(rep: &Report) -> String {
    let w = rep
        .rows
        .iter()
        .map(|r| label(r).len())
        .max()
        .unwrap_or(0)
        .max("operation".len());
    let mut s = String::new();
    let _ = write!(s, "{:<w$}", "operation");
    for h in &HEADERS[..7] {
        let _ = write!(s, " {h:>15}");
    }
    s.push('\n');
    let _ = writeln!(s, "{}", "-".repeat(w + 7 * 16));
    for r in &rep.rows {
        let _ = write!(s, "{:<w$}", label(r));
        for c in cells(r) {
            let _ = write!(s, " {c:>15}");
        }
        s.push('\n');
    }
    let _ = writeln!(
        s,
        "\ninstructions per call (callgrind Ir), (count at N2 - count at N1) / (N2 - N1), \
         N1 and N2: {}; system: libc, ld.so and the other system libraries run for the \
         library (calls from it); the simulator's and the runner's counts are in \
         instructions.json and instructions.md",
        batches_text(&rep.rows)
    );
    let notes = notes(rep);
    if !notes.is_empty() {
        let _ = writeln!(s, "\nnotes:");
        for n in &notes {
            let _ = writeln!(s, "  {n}");
        }
    }
    s
}

/// `instructions.md`: the method in brief, the run, the table, where the
/// rest of each call went, and the notes.
pub fn markdown(rep: &Report) -> String {
    let cfg = &rep.config;
    let mut s = String::from("## Instructions per call\n\n");
    s.push_str(
        "Counted with callgrind (`kfd-bench instructions`, which `cargo xtask bench \
         --instructions` runs): each operation runs in a benchmark child under \
         `valgrind --tool=callgrind` with a batch of N1 calls and again with N2, per \
         library, and the count per call is (count at N2 − count at N1) / (N2 − N1), so \
         start-up and exit cancel. *library* is the library's own code; *system* is the \
         system libraries' code (libc, ld.so, libnuma, libdrm, ...) that the library \
         called, counted as the inclusive cost of its calls into system functions that \
         call nothing outside system code; the simulated kernel's code, and the system \
         code it called, is the *simulator* column of the second table. *C/ours* is C's \
         library+system over ours: above 1, ours runs fewer instructions.\n\n",
    );
    let _ = writeln!(s, "| | |\n|---|---|");
    let _ = writeln!(
        s,
        "| libraries | C `{}`, ours `{}` |",
        cfg.reference.display(),
        cfg.ours.display()
    );
    let _ = writeln!(
        s,
        "| simulator | `{}`, preset {} |",
        cfg.sim.display(),
        cfg.preset
    );
    let _ = writeln!(
        s,
        "| valgrind | {} |",
        match &rep.valgrind {
            Ok(v) => v.clone(),
            Err(_) => "could not run (see the notes)".into(),
        }
    );
    let _ = writeln!(s, "| N1, N2 | {} |", batches_text(&rep.rows));
    let _ = writeln!(
        s,
        "| date | {}, {:.0} s of runs |",
        rep.date,
        rep.elapsed.as_secs_f64()
    );
    s.push_str("\n| operation | param |");
    for h in &HEADERS[..7] {
        let _ = write!(s, " {h} |");
    }
    s.push_str("\n|---|---|--:|--:|--:|--:|--:|--:|--:|\n");
    for r in &rep.rows {
        let _ = write!(s, "| {} | {} |", r.op.title.trim(), r.param);
        for c in cells(r) {
            let _ = write!(s, " {c} |");
        }
        s.push('\n');
    }
    s.push_str(
        "\nThe rest of each call, per call: the simulated kernel (its code and the \
         system code it called), the runner (the loop, and `Instant::now` in the wait \
         rows), system code no caller could be named for, and every system object's own \
         code (the three system shares and the unattributed rest):\n\n",
    );
    s.push_str(
        "| operation | param | C simulator | ours simulator | C runner | ours runner \
         | C unattributed | ours unattributed | C system, all | ours system, all |\n\
         |---|---|--:|--:|--:|--:|--:|--:|--:|--:|\n",
    );
    for r in &rep.rows {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.op.title.trim(),
            r.param,
            cell(&r.c, |x| x.simulator),
            cell(&r.ours, |x| x.simulator),
            cell(&r.c, |x| x.bench),
            cell(&r.ours, |x| x.bench),
            cell(&r.c, |x| x.unattributed),
            cell(&r.ours, |x| x.unattributed),
            cell(&r.c, |x| x.system_self),
            cell(&r.ours, |x| x.system_self),
        );
    }
    let notes = notes(rep);
    if !notes.is_empty() {
        s.push_str("\nNotes:\n\n");
        for n in &notes {
            let _ = writeln!(s, "- {n}");
        }
    }
    s
}

fn json_num(x: f64) -> String {
    if x.is_finite() {
        // One decimal, and no `-0.0` for a difference that is nothing.
        let x = (x * 10.0).round() / 10.0;
        format!("{:.1}", if x == 0.0 { 0.0 } else { x })
    } else {
        "null".into()
    }
}

fn json_outcome(o: &Outcome) -> String {
    match o {
        Outcome::Counted(s) => {
            let objects: Vec<String> = s
                .objects
                .iter()
                .map(|(k, v)| format!("{}: {}", json_string(k), json_num(*v)))
                .collect();
            format!(
                "{{\"status\": \"ok\", \"library\": {}, \"system\": {}, \"lib_plus_system\": {}, \
                 \"simulator\": {}, \"bench\": {}, \"system_unattributed\": {}, \
                 \"system_all\": {}, \"objects\": {{{}}}}}",
                json_num(s.library),
                json_num(s.system),
                json_num(s.lib_plus_system()),
                json_num(s.simulator),
                json_num(s.bench),
                json_num(s.unattributed),
                json_num(s.system_self),
                objects.join(", ")
            )
        }
        Outcome::Unsupported(d) => {
            format!(
                "{{\"status\": \"unsupported\", \"detail\": {}}}",
                json_string(d)
            )
        }
        Outcome::Error(d) => format!("{{\"status\": \"error\", \"detail\": {}}}", json_string(d)),
    }
}

/// `instructions.json`: every count of every row, per library.
pub fn json(rep: &Report) -> String {
    let cfg = &rep.config;
    let path = |p: &Path| json_string(&p.display().to_string());
    let mut s = String::from("{\n");
    let _ = writeln!(s, "  \"tool\": \"kfd-bench instructions\",");
    let _ = writeln!(
        s,
        "  \"libraries\": {{\"c\": {}, \"ours\": {}}},",
        path(&cfg.reference),
        path(&cfg.ours)
    );
    let _ = writeln!(s, "  \"simulator\": {},", path(&cfg.sim));
    let _ = writeln!(s, "  \"preset\": {},", json_string(&cfg.preset));
    let _ = writeln!(
        s,
        "  \"valgrind\": {},",
        match &rep.valgrind {
            Ok(v) => json_string(v),
            Err(_) => "null".into(),
        }
    );
    let _ = writeln!(s, "  \"date\": {},", json_string(&rep.date));
    let _ = writeln!(s, "  \"seconds\": {},", json_num(rep.elapsed.as_secs_f64()));
    let _ = writeln!(
        s,
        "  \"units\": \"instructions (callgrind Ir) per call: (count at N2 - count at N1) / (N2 - N1); \
         library: its own code; system: system code it called; simulator and bench: their own \
         code and the system code they called; system_unattributed: system code no caller could \
         be named for; system_all: every system object's own code; objects: each object file's \
         own code\","
    );
    s.push_str("  \"results\": [\n");
    for (i, r) in rep.rows.iter().enumerate() {
        let _ = write!(
            s,
            "    {{\"op\": {}, \"title\": {}, \"param\": {}, \"batches\": [{}, {}], \"note\": {}, \
             \"c\": {}, \"ours\": {}, \"ratio_c_over_ours\": {}}}",
            json_string(r.op.id),
            json_string(r.op.title.trim()),
            json_string(&r.param),
            r.batches.0,
            r.batches.1,
            r.note.map(json_string).unwrap_or_else(|| "null".into()),
            json_outcome(&r.c),
            json_outcome(&r.ours),
            r.ratio()
                .filter(|x| x.is_finite())
                .map(|x| format!("{x:.3}"))
                .unwrap_or_else(|| "null".into())
        );
        s.push_str(if i + 1 < rep.rows.len() { ",\n" } else { "\n" });
    }
    s.push_str("  ],\n");
    let fails: Vec<String> = rep.failures().iter().map(|f| json_string(f)).collect();
    let _ = writeln!(s, "  \"failures\": [{}]", fails.join(", "));
    s.push_str("}\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The runner's `_start` calls libc's `__libc_start_main`, which calls
    /// back into `main` (so it is not closed); `main` calls
    /// `clock_gettime` (closed) and the library; the library calls
    /// `malloc` (closed), the simulator's ioctl, and libdrm's
    /// `drmCommandWrite`, which reaches the simulator only through
    /// `drmIoctl` (not closed, one level down); the simulator calls
    /// `malloc` too.
    const FILE: &str = "\
events: Ir
ob=(1) /bench/kfd-bench
fn=(1) _start
1 2
cob=(2) /lib/libc.so.6
cfn=(2) __libc_start_main
calls=1 1
1 1870
fn=(3) main
1 50
cob=(2)
cfn=(4) clock_gettime
calls=2 1
1 30
cob=(3) /lib/libhsakmt.so.1
cfn=(5) hsaKmtCreateEvent
calls=1 1
1 1780

ob=(2)
fn=(2)
1 10
cob=(1)
cfn=(3)
calls=1 1
1 1860
fn=(4)
1 30
fn=(6) malloc
1 160

ob=(3)
fn=(5)
1 200
cob=(2)
cfn=(6)
calls=1 1
1 100
cob=(4) /sim/libkfd_sim.so
cfn=(7) ioctl
calls=1 1
1 1060
cob=(5) /lib/libdrm.so.2
cfn=(8) drmCommandWrite
calls=1 1
1 420

ob=(4)
fn=(7)
1 1000
cob=(2)
cfn=(6)
calls=1 1
1 60
fn=(9) ioctl2
1 400

ob=(5)
fn=(8)
1 15
cfn=(10) drmIoctl
calls=1 1
1 405
fn=(10)
1 5
cob=(4)
cfn=(9)
calls=1 1
1 400
totals: 1872
";

    fn objects() -> Objects {
        Objects {
            library: "/lib/libhsakmt.so.1".into(),
            simulator: "/sim/libkfd_sim.so".into(),
            bench: "/bench/kfd-bench".into(),
        }
    }

    #[test]
    fn system_code_is_split_by_caller() {
        let p = callgrind::parse(FILE).unwrap();
        p.check().unwrap();
        let t = tally(&p, &objects());
        let at = |g: Group| t.groups[g.index()];
        assert_eq!(at(Group::Library), 200);
        assert_eq!(at(Group::Simulator), 1400);
        assert_eq!(at(Group::Bench), 52);
        // libc 10 + 30 + 160, libdrm 15 + 5.
        assert_eq!(at(Group::System), 220);
        let by = |g: Group| t.system_for[g.index()];
        assert_eq!(
            by(Group::Library),
            100,
            "its malloc; not libdrm, which calls the simulator"
        );
        assert_eq!(by(Group::Simulator), 60, "its malloc");
        assert_eq!(by(Group::Bench), 30, "clock_gettime; not __libc_start_main");
        // __libc_start_main's own 10 and libdrm's 20.
        assert_eq!(by(Group::System), 30);
    }

    #[test]
    fn per_call_is_the_difference_over_the_batch_difference() {
        let a = Tally {
            objects: [("/lib/libc.so.6".to_string(), 1000u64)]
                .into_iter()
                .collect(),
            groups: [500, 1000, 9000, 300],
            system_for: [200, 100, 600, 100],
        };
        // 100 more calls: 2 library, 3 + 1 system for it, 50 + 6 sim, ...
        let b = Tally {
            objects: [
                ("/lib/libc.so.6".to_string(), 2000u64),
                ("/lib/new.so".to_string(), 100),
            ]
            .into_iter()
            .collect(),
            groups: [700, 2000, 14000, 400],
            system_for: [500, 100, 1200, 200],
        };
        let s = Split::between(&a, &b, 100, 200);
        assert_eq!(s.library, 2.0);
        assert_eq!(s.system, 3.0);
        assert_eq!(s.lib_plus_system(), 5.0);
        assert_eq!(s.simulator, 56.0);
        assert_eq!(s.bench, 2.0);
        assert_eq!(s.unattributed, 0.0);
        assert_eq!(s.system_self, 10.0);
        assert_eq!(s.objects["/lib/libc.so.6"], 10.0);
        assert_eq!(s.objects["/lib/new.so"], 1.0);
    }

    #[test]
    fn objects_are_matched_by_resolved_path_or_name() {
        let dir = std::env::temp_dir().join(format!("kfd-bench-instr-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let real = dir.join("libhsakmt.so.1.0.6");
        let link = dir.join("libhsakmt.so.1");
        std::fs::write(&real, b"x").unwrap();
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink("libhsakmt.so.1.0.6", &link).unwrap();
        // callgrind names the file the link resolves to.
        assert!(same_file(&real.display().to_string(), &link));
        assert!(same_file(&link.display().to_string(), &link));
        // A copy elsewhere with the resolved name.
        assert!(same_file("/elsewhere/libhsakmt.so.1.0.6", &link));
        assert!(!same_file("/usr/lib/x86_64-linux-gnu/libc.so.6", &link));
        assert!(!same_file("???", &link));
        std::fs::remove_dir_all(&dir).unwrap();
        let o = objects();
        assert_eq!(o.group("/lib/libhsakmt.so.1"), Group::Library);
        assert_eq!(o.group("/sim/libkfd_sim.so"), Group::Simulator);
        assert_eq!(o.group("/bench/kfd-bench"), Group::Bench);
        assert_eq!(o.group("/lib/libc.so.6"), Group::System);
    }

    /// docs/benchmarks.md (from method.md) names what the run does.
    #[test]
    fn the_method_text_names_the_operations_and_batches() {
        let m = include_str!("method.md")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        for op in DEFAULT_OPS {
            assert!(m.contains(&format!("`{op}`")), "{op}");
        }
        for op in DEFAULT_OPS {
            let (a, b) = batches(op);
            assert!(m.contains(&format!("{a} and {b}")), "{op}: {a} and {b}");
        }
    }

    #[test]
    fn plan_checks_the_operations() {
        let ids = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let ops = plan(&ids(DEFAULT_OPS)).unwrap();
        assert_eq!(ops.len(), DEFAULT_OPS.len());
        assert!(ops
            .iter()
            .all(|o| matches!(o.group, "events" | "scaling" | "queues")));
        assert!(plan(&ids(&["no-such-op"]))
            .unwrap_err()
            .contains("unknown operation"));
        assert!(plan(&ids(&["fill"])).unwrap_err().contains("batches"));
        assert!(plan(&ids(&["ctx-open-close"])).is_err());
        assert!(plan(&[]).is_err());
    }

    fn report() -> Report {
        let split = |lib: f64, sys: f64| Split {
            library: lib,
            system: sys,
            simulator: 10000.0,
            bench: 85.0,
            unattributed: -0.01,
            system_self: sys + 1200.0,
            objects: BTreeMap::new(),
        };
        let row = |id: &str, c: Outcome, ours: Outcome| Row {
            op: info(id).unwrap(),
            param: if id.starts_with("pointer") {
                "live=0".into()
            } else {
                String::new()
            },
            batches: batches(id),
            note: note(id),
            c,
            ours,
        };
        Report {
            config: Config {
                reference: "/c.so".into(),
                ours: "/ours.so".into(),
                sim: "/sim.so".into(),
                runner: "/bin/kfd-bench".into(),
                valgrind: "valgrind".into(),
                ops: vec![],
                preset: "mi210".into(),
                out_dir: "/tmp".into(),
                child_timeout: Duration::from_secs(1),
            },
            valgrind: Ok("valgrind-3.19.0".into()),
            rows: vec![
                row(
                    "event-create",
                    Outcome::Counted(split(187.0, 301.0)),
                    Outcome::Counted(split(1069.0, 22.0)),
                ),
                row(
                    "event-wait-all-64",
                    Outcome::Unsupported("hsaKmtWaitOnMultipleEvents: not exported".into()),
                    Outcome::Counted(split(900.0, 0.0)),
                ),
                row(
                    "pointer-info",
                    Outcome::Counted(split(312.0, 55.0)),
                    Outcome::Error("valgrind (valgrind) could not run".into()),
                ),
            ],
            date: "2026-12-06 02:00 UTC".into(),
            elapsed: Duration::from_secs(20),
        }
    }

    #[test]
    fn table_has_every_row_and_says_why_one_is_missing() {
        let r = report();
        assert_eq!(r.rows[0].ratio().map(|x| (x * 100.0).round()), Some(45.0));
        assert!(r.rows[1].ratio().is_none() && r.rows[2].ratio().is_none());
        let t = table(&r);
        let line = |p: &str| t.lines().find(|l| l.starts_with(p)).unwrap().to_string();
        let words = |l: String| l.split_whitespace().map(String::from).collect::<Vec<_>>();
        assert_eq!(
            words(line("event-create")),
            [
                "event-create",
                "187",
                "1069",
                "301",
                "22",
                "488",
                "1091",
                "0.45"
            ]
        );
        assert_eq!(
            words(line("event-wait-all-64")),
            [
                "event-wait-all-64",
                "unsupported",
                "900",
                "unsupported",
                "0",
                "unsupported",
                "900"
            ]
        );
        assert_eq!(
            words(line("pointer-info (live=0)")),
            [
                "pointer-info",
                "(live=0)",
                "312",
                "error",
                "55",
                "error",
                "367",
                "error"
            ]
        );
        assert!(t.contains("event-wait-all-64: C unsupported: hsaKmtWaitOnMultipleEvents"));
        assert!(t.contains("pointer-info (live=0): ours error: valgrind (valgrind) could not run"));
        assert!(t.contains("64 hsaKmtSetEvent calls"), "the row's note");
        assert_eq!(r.failures().len(), 1);
        let md = markdown(&r);
        assert!(md.starts_with("## Instructions per call\n"));
        assert!(
            md.contains("| event create+destroy |  | 187 | 1069 | 301 | 22 | 488 | 1091 | 0.45 |")
        );
        assert!(md.contains(
            "| event create+destroy |  | 10000 | 10000 | 85 | 85 | 0 | 0 | 1501 | 1222 |"
        ));
        assert!(md.contains(
            "| N1, N2 | 100 and 2100 calls; 100 and 1100 (event-wait-all-64); \
             1000 and 21000 (pointer-info) |"
        ));
    }

    #[test]
    fn json_has_every_count() {
        let j = json(&report());
        assert!(j.starts_with("{\n") && j.ends_with("}\n"));
        assert_eq!(j.matches('{').count(), j.matches('}').count());
        assert_eq!(j.matches('[').count(), j.matches(']').count());
        assert!(j.contains("\"library\": 187.0, \"system\": 301.0, \"lib_plus_system\": 488.0"));
        assert!(j.contains("\"system_unattributed\": 0.0,"), "no -0.0");
        assert!(j.contains("\"status\": \"unsupported\""));
        assert!(j.contains("\"ratio_c_over_ours\": 0.447}"));
        assert!(j.contains("\"failures\": [\"pointer-info (live=0): ours error:"));
    }
}
