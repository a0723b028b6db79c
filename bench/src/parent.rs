//! The parent: spawns one child per (repetition, group, preset, library),
//! alternating which library goes first, and pools the samples.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use conformance::abi::AbiKind;
use conformance::spawn;

use crate::child::{Budget, Live};
use crate::ops::GROUPS;
use crate::proto::{self, Record};

/// Which library a value belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Side {
    /// The C reference (Debian's libhsakmt 5.2.3).
    C,
    /// Ours.
    Ours,
}

impl Side {
    /// `c` or `ours`.
    pub fn key(self) -> &'static str {
        match self {
            Side::C => "c",
            Side::Ours => "ours",
        }
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct Config {
    /// The C library (rocm-5.2 generation).
    pub reference: PathBuf,
    /// Our rocm-5.2 build.
    pub ours: PathBuf,
    /// Our `newest` build, for the context API (`None`: skipped).
    pub ours_newest: Option<PathBuf>,
    /// `libkfd_sim.so`.
    pub sim: PathBuf,
    /// Topology presets.
    pub presets: Vec<String>,
    /// Preset of every group but `topology`.
    pub default_preset: String,
    /// Preset of the `scaling` group.
    pub scaling_preset: String,
    /// Live-allocation levels.
    pub levels: Vec<usize>,
    /// What the live set is made of.
    pub live: Live,
    /// Repetitions.
    pub reps: usize,
    /// Sampling budget per operation and child.
    pub budget: Budget,
    /// Only these groups (all when empty).
    pub groups: Vec<String>,
    /// Report directory (`work/` below it holds child outputs).
    pub out_dir: PathBuf,
    /// This executable.
    pub runner: PathBuf,
    /// Per-child time limit.
    pub child_timeout: Duration,
}

/// The pooled result of one operation, parameter and library.
#[derive(Debug, Clone, Default)]
pub struct Cell {
    /// Every sample of every repetition.
    pub samples: Vec<f64>,
    /// The median of each repetition's samples, in repetition order.
    pub rep_medians: Vec<f64>,
    /// Why the library could not do it (NOT_SUPPORTED, missing symbol).
    pub unsupported: Option<String>,
    /// Why it failed otherwise.
    pub error: Option<String>,
    /// Notes (distinct).
    pub notes: Vec<String>,
    /// Ioctls per operation (the counting pass).
    pub ioctls: Option<f64>,
}

/// Everything a run produced.
#[derive(Debug, Clone)]
pub struct Results {
    /// The configuration.
    pub config: Config,
    /// `(op, param, side)` → cell.
    pub cells: BTreeMap<(String, String, Side), Cell>,
    /// Parameters of each op in first-seen order.
    pub params: BTreeMap<String, Vec<String>>,
    /// Children that failed (crash, timeout, harness error).
    pub failures: Vec<String>,
    /// Wall time of the measurement phase.
    pub elapsed: Duration,
}

impl Results {
    /// The cell of `op`/`param`/`side`, if anything was recorded.
    pub fn cell(&self, op: &str, param: &str, side: Side) -> Option<&Cell> {
        self.cells.get(&(op.to_string(), param.to_string(), side))
    }

    fn cell_mut(&mut self, op: &str, param: &str, side: Side) -> &mut Cell {
        let ps = self.params.entry(op.to_string()).or_default();
        if !ps.iter().any(|p| p == param) {
            ps.push(param.to_string());
        }
        self.cells
            .entry((op.to_string(), param.to_string(), side))
            .or_default()
    }

    /// Adds a child's records (one repetition of its operations).
    pub fn add(&mut self, side: Side, recs: Vec<Record>) {
        let mut this_rep: BTreeMap<(String, String), Vec<f64>> = BTreeMap::new();
        for r in recs {
            match r {
                Record::Sample { op, param, value } => {
                    self.cell_mut(&op, &param, side).samples.push(value);
                    this_rep.entry((op, param)).or_default().push(value);
                }
                Record::Unsupported { op, param, detail } => {
                    self.cell_mut(&op, &param, side).unsupported = Some(detail)
                }
                Record::Error { op, param, detail } => {
                    let c = self.cell_mut(&op, &param, side);
                    if c.error.is_none() {
                        c.error = Some(detail);
                    }
                }
                Record::Ioctls {
                    op,
                    param,
                    per_call,
                } => self.cell_mut(&op, &param, side).ioctls = Some(per_call),
                Record::Note { op, param, text } => {
                    let c = self.cell_mut(&op, &param, side);
                    if !c.notes.contains(&text) {
                        c.notes.push(text);
                    }
                }
            }
        }
        for ((op, param), samples) in this_rep {
            if let Some(s) = crate::stats::summarize(&samples) {
                self.cell_mut(&op, &param, side).rep_medians.push(s.median);
            }
        }
    }
}

/// One child to run.
#[derive(Debug, Clone)]
struct Job {
    group: &'static str,
    preset: String,
}

fn jobs(cfg: &Config) -> Vec<Job> {
    let mut v = Vec::new();
    for &g in GROUPS {
        if !cfg.groups.is_empty() && !cfg.groups.iter().any(|x| x == g) {
            continue;
        }
        if g == "topology" {
            for p in &cfg.presets {
                v.push(Job {
                    group: g,
                    preset: p.clone(),
                });
            }
        } else {
            v.push(Job {
                group: g,
                preset: if g == "scaling" {
                    cfg.scaling_preset.clone()
                } else {
                    cfg.default_preset.clone()
                },
            });
        }
    }
    v
}

/// Which libraries a job runs, in the order of repetition `rep`.
fn sides(cfg: &Config, job: &Job, flip: bool) -> Vec<(Side, AbiKind, PathBuf)> {
    if job.group == "ctx" {
        return match &cfg.ours_newest {
            Some(p) => vec![(Side::Ours, AbiKind::Newest, p.clone())],
            None => vec![],
        };
    }
    let c = (Side::C, AbiKind::Rocm52, cfg.reference.clone());
    let o = (Side::Ours, AbiKind::Rocm52, cfg.ours.clone());
    if flip {
        vec![o, c]
    } else {
        vec![c, o]
    }
}

/// Runs one child; returns its records and, if it failed, why.
fn spawn(
    cfg: &Config,
    job: &Job,
    abi: AbiKind,
    lib: &PathBuf,
    tag: &str,
    count: bool,
) -> Result<(Vec<Record>, Option<String>), String> {
    let work = cfg.out_dir.join("work");
    let out = work.join(format!("{tag}.out"));
    let err = work.join(format!("{tag}.err"));
    let summary = work.join(format!("{tag}.summary"));
    let trace = work.join(format!("{tag}.trace"));
    for f in [&out, &err, &summary, &trace] {
        let _ = std::fs::remove_file(f);
    }
    let levels: Vec<String> = if count {
        vec!["0".into()]
    } else {
        cfg.levels.iter().map(|l| l.to_string()).collect()
    };
    let mut cmd = Command::new(&cfg.runner);
    cmd.arg("child")
        .args(["--abi", abi.name()])
        .arg("--lib")
        .arg(lib)
        .args(["--group", job.group, "--preset", &job.preset])
        .args(["--levels", &levels.join(",")])
        .args(["--live", cfg.live.name()])
        .args(["--per-op-ms", &cfg.budget.per_op.as_millis().to_string()])
        .args(["--max-samples", &cfg.budget.max_samples.to_string()])
        .args(["--min-samples", &cfg.budget.min_samples.to_string()])
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).map_err(|e| e.to_string())?)
        .stderr(std::fs::File::create(&err).map_err(|e| e.to_string())?)
        .env_remove("KFD_SIM_FAULTS");
    spawn::on_sim(&mut cmd, &cfg.sim, &job.preset, "kfd-bench");
    if count {
        cmd.arg("--count-ioctls").env("KFD_SIM_TRACE", &trace);
    } else {
        cmd.env_remove("KFD_SIM_TRACE");
    }
    if job.group == "ctx" {
        cmd.env("KFD_SIM_SUMMARY", &summary);
    } else {
        cmd.env_remove("KFD_SIM_SUMMARY");
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("spawn {}: {e}", cfg.runner.display()))?;
    let (status, timed_out) =
        spawn::wait_timeout(&mut child, cfg.child_timeout, Duration::from_millis(2))?;
    let text = std::fs::read_to_string(&out).unwrap_or_default();
    let recs = proto::parse(&text);
    // The trace of a counting pass can be large (the live set).
    let _ = std::fs::remove_file(&trace);
    if !timed_out && status.success() {
        return Ok((recs, None));
    }
    let stderr = std::fs::read_to_string(&err).unwrap_or_default();
    let last = spawn::last_line(&stderr);
    let what = if timed_out {
        format!("timed out after {:?}", cfg.child_timeout)
    } else {
        format!("{status}")
    };
    Ok((
        recs,
        Some(format!(
            "{what}{}{last}",
            if last.is_empty() { "" } else { "; stderr: " }
        )),
    ))
}

/// Runs everything: first a counting pass (ioctls per operation, from
/// the simulator's trace; not timed), then the timed repetitions.
/// `progress` gets one line per pass.
pub fn run(cfg: &Config, mut progress: impl FnMut(&str)) -> Result<Results, String> {
    let start = Instant::now();
    let work = cfg.out_dir.join("work");
    std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    let mut res = Results {
        config: cfg.clone(),
        cells: BTreeMap::new(),
        params: BTreeMap::new(),
        failures: Vec::new(),
        elapsed: Duration::ZERO,
    };
    let jobs = jobs(cfg);
    let t = Instant::now();
    for job in &jobs {
        for (side, abi, lib) in sides(cfg, job, false) {
            let tag = format!("count-{}-{}-{}", job.group, job.preset, side.key());
            let (recs, failed) = spawn(cfg, job, abi, &lib, &tag, true)?;
            res.add(
                side,
                recs.into_iter()
                    .filter(|r| matches!(r, Record::Ioctls { .. }))
                    .collect(),
            );
            if let Some(f) = failed {
                res.failures.push(format!(
                    "counting pass {}@{} ({}): {f}",
                    job.group,
                    job.preset,
                    side.key()
                ));
            }
        }
    }
    progress(&format!(
        "ioctl counting pass done in {:.1} s",
        t.elapsed().as_secs_f64()
    ));
    for rep in 0..cfg.reps {
        let t_rep = Instant::now();
        for (i, job) in jobs.iter().enumerate() {
            for (side, abi, lib) in sides(cfg, job, (rep + i) % 2 == 1) {
                let tag = format!("r{rep}-{}-{}-{}", job.group, job.preset, side.key());
                let (recs, failed) = spawn(cfg, job, abi, &lib, &tag, false)?;
                res.add(side, recs);
                if let Some(f) = failed {
                    res.failures.push(format!(
                        "rep {rep} {}@{} ({}): {f}",
                        job.group,
                        job.preset,
                        side.key()
                    ));
                }
            }
        }
        progress(&format!(
            "rep {}/{} done in {:.1} s",
            rep + 1,
            cfg.reps,
            t_rep.elapsed().as_secs_f64()
        ));
    }
    res.elapsed = start.elapsed();
    Ok(res)
}
