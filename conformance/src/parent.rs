//! The parent: spawns one child per (library, family, preset) group —
//! reference and ours alternating which goes first — restarts a group
//! after a crash at the next scenario, collects records and trace slices,
//! and classifies each scenario.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::abi::{AbiKind, Newest, Rocm52, Rocm62};
use crate::cx::NOT_SUPPORTED;
use crate::fuzz::FuzzCounts;
use crate::intended::Intended;
use crate::scenarios::{self, Family, FAMILIES};
use crate::spawn;
use crate::trace;

/// What to run.
#[derive(Debug, Clone)]
pub struct Config {
    /// ABI generation of both libraries.
    pub abi: AbiKind,
    /// The reference library.
    pub reference: PathBuf,
    /// Our library.
    pub ours: PathBuf,
    /// `libkfd_sim.so` for LD_PRELOAD; `None` runs on the real KFD.
    pub sim: Option<PathBuf>,
    /// Presets for families that run on every preset.
    pub presets: Vec<String>,
    /// Preset for every other family.
    pub default_preset: String,
    /// Only these families (all when empty).
    pub families: Vec<String>,
    /// Only the scenarios matching one of these globs (`*` wildcards; all
    /// when empty).
    pub scenarios: Vec<String>,
    /// Work and report directory.
    pub out_dir: PathBuf,
    /// The intended-differences file.
    pub intended: Intended,
    /// The runner executable (this binary).
    pub runner: PathBuf,
    /// Per-child time limit.
    pub child_timeout: Duration,
    /// Whether trace differences fail the run.
    pub trace_gate: bool,
    /// Our build of the `newest` generation. When `ours` lacks a family's
    /// API (every scenario of the family records `lacks-api`, as the Ctx
    /// family does on our rocm-5.2 build), that family's "ours" side runs
    /// again with this library and the `newest` layouts, so that its
    /// documented-semantics checks still judge our implementation.
    pub newest_ours: Option<PathBuf>,
}

/// One library's result for one scenario.
#[derive(Debug, Clone, Default)]
pub struct Side {
    /// `(key, value, function)` in order.
    pub records: Vec<(String, String, Option<String>)>,
    /// Functions called.
    pub calls: BTreeSet<String>,
    /// `Some(description)` if the child died or hung in this scenario.
    pub crashed: Option<String>,
    /// Normalised trace slice.
    pub trace: Vec<String>,
    /// Whether a trace was recorded.
    pub traced: bool,
    /// `Some(description)` when this side ran on [`Config::newest_ours`]
    /// because the configured library lacks the API.
    pub ran_as: Option<String>,
}

impl Side {
    fn value(&self, key: &str) -> Option<&str> {
        self.records
            .iter()
            .find(|r| r.0 == key)
            .map(|r| r.1.as_str())
    }
}

/// How a scenario compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Same observable behaviour.
    Equal,
    /// An unexpected difference.
    Differ,
    /// Every difference is listed as intended.
    Intended,
    /// Ours answers NOT_SUPPORTED (or lacks the symbol) where the reference
    /// does something else.
    Unsupported,
    /// The reference lacks the API; ours was checked against the documented
    /// semantics and passed (or lacks it too).
    RefLacksApi,
    /// A robustness family (`fuzz`): no crash, hang or panic of ours
    /// where the reference returned a status, but statuses differ (they
    /// are listed, not judged).
    Robust,
}

impl Class {
    /// Report label.
    pub fn label(self) -> &'static str {
        match self {
            Class::Equal => "equal",
            Class::Differ => "differ",
            Class::Intended => "intended",
            Class::Unsupported => "unsupported",
            Class::RefLacksApi => "reference-lacks-API",
            Class::Robust => "robust",
        }
    }
}

/// One scenario's outcome.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Display name (`family/name` or `family/name@preset`).
    pub name: String,
    /// Family.
    pub family: String,
    /// Classification of the API-level comparison.
    pub class: Class,
    /// Differences (or reasons), human readable.
    pub details: Vec<String>,
    /// The function ours does not support, for `Unsupported`.
    pub unsupported_fn: Option<String>,
    /// `Some(description)` when the traces differ (not intended).
    pub trace_diff: Option<String>,
    /// A trace difference covered by an intended entry.
    pub trace_intended: Option<String>,
    /// Functions either library called in this scenario.
    pub calls: BTreeSet<String>,
    /// Reference crashed here (description).
    pub ref_crash: Option<String>,
    /// Ours crashed here (description).
    pub ours_crash: Option<String>,
    /// The call counts of a robustness (`fuzz`) scenario.
    pub fuzz: Option<FuzzCounts>,
}

/// All outcomes of a run.
#[derive(Debug, Clone)]
pub struct RunResult {
    /// The configuration.
    pub abi: AbiKind,
    /// Per scenario.
    pub outcomes: Vec<Outcome>,
    /// Wall time.
    pub elapsed: Duration,
    /// Whether the run was on the simulator.
    pub sim: bool,
}

/// Scenario names of a family for the configured ABI.
fn names_of(abi: AbiKind, family: &str) -> Vec<String> {
    let all: Vec<String> = match abi {
        AbiKind::Rocm52 => scenarios::all::<Rocm52>()
            .into_iter()
            .map(|s| s.name)
            .collect(),
        AbiKind::Rocm62 => scenarios::all::<Rocm62>()
            .into_iter()
            .map(|s| s.name)
            .collect(),
        AbiKind::Newest => scenarios::all::<Newest>()
            .into_iter()
            .map(|s| s.name)
            .collect(),
    };
    all.into_iter()
        .filter(|n| scenarios::family_of(n) == family)
        .collect()
}

/// Runs everything and classifies.
pub fn run(cfg: &Config) -> Result<RunResult, String> {
    let start = Instant::now();
    std::fs::create_dir_all(cfg.out_dir.join("work")).map_err(|e| e.to_string())?;
    let mut outcomes = Vec::new();
    let mut group = 0usize;
    let fams: Vec<Family> = FAMILIES
        .iter()
        .copied()
        .filter(|f| cfg.families.is_empty() || cfg.families.iter().any(|x| x == f.name))
        .collect();
    for fam in fams {
        let mut names = names_of(cfg.abi, fam.name);
        if !cfg.scenarios.is_empty() {
            names.retain(|n| cfg.scenarios.iter().any(|g| crate::intended::glob(g, n)));
        }
        if names.is_empty() {
            continue;
        }
        let presets: Vec<String> = if cfg.sim.is_none() {
            vec!["hw".into()]
        } else if fam.all_presets {
            cfg.presets.clone()
        } else {
            vec![cfg.default_preset.clone()]
        };
        let multi = presets.len() > 1 || (fam.all_presets && cfg.sim.is_some());
        for preset in &presets {
            let ref_first = group % 2 == 0;
            group += 1;
            let mut sides: [Vec<Side>; 2] = [Vec::new(), Vec::new()];
            let order: [usize; 2] = if ref_first { [0, 1] } else { [1, 0] };
            for which in order {
                let lib = if which == 0 {
                    &cfg.reference
                } else {
                    &cfg.ours
                };
                let tag = format!(
                    "{}-{}-{}",
                    fam.name,
                    preset,
                    if which == 0 { "ref" } else { "ours" }
                );
                sides[which] = run_side(cfg, cfg.abi, fam, preset, lib, &names, &tag)?;
            }
            if let Some(cur) = newest_fallback(cfg, fam, &names, &sides[1]) {
                let tag = format!("{}-{}-ours-newest", fam.name, preset);
                let mut again = run_side(cfg, AbiKind::Newest, fam, preset, cur, &names, &tag)?;
                let why = format!(
                    "ours ran as our newest-ABI build `{}` ({} lacks the API)",
                    cur.display(),
                    cfg.ours.display()
                );
                for s in &mut again {
                    s.ran_as = Some(why.clone());
                }
                sides[1] = again;
            }
            for (i, n) in names.iter().enumerate() {
                let disp = if multi {
                    format!("{n}@{preset}")
                } else {
                    n.clone()
                };
                outcomes.push(classify(cfg, &disp, fam.name, &sides[0][i], &sides[1][i]));
            }
        }
    }
    Ok(RunResult {
        abi: cfg.abi,
        outcomes,
        elapsed: start.elapsed(),
        sim: cfg.sim.is_some(),
    })
}

/// The library to run a family's "ours" side on again: `newest_ours`
/// when `ours` is of another generation, lacks the family's API in every
/// scenario (recorded `lacks-api`, no crash) and the current generation
/// has the same scenarios.
fn newest_fallback<'c>(
    cfg: &'c Config,
    fam: Family,
    names: &[String],
    ours: &[Side],
) -> Option<&'c Path> {
    let cur = cfg.newest_ours.as_deref()?;
    let lacks_all = !ours.is_empty()
        && ours
            .iter()
            .all(|s| s.crashed.is_none() && s.value("lacks-api").is_some());
    (cfg.abi != AbiKind::Newest && lacks_all && names_of(AbiKind::Newest, fam.name) == names)
        .then_some(cur)
}

/// Runs one library (of generation `abi`) over a group's scenarios,
/// restarting after crashes.
fn run_side(
    cfg: &Config,
    abi: AbiKind,
    fam: Family,
    preset: &str,
    lib: &Path,
    names: &[String],
    tag: &str,
) -> Result<Vec<Side>, String> {
    let mut result: Vec<Side> = vec![Side::default(); names.len()];
    let mut idx = 0usize;
    let mut attempt = 0usize;
    while idx < names.len() {
        attempt += 1;
        let batch: Vec<String> = if fam.isolated {
            vec![names[idx].clone()]
        } else {
            names[idx..].to_vec()
        };
        let work = cfg.out_dir.join("work");
        let out = work.join(format!("{tag}-{attempt}.out"));
        let tr = work.join(format!("{tag}-{attempt}.trace"));
        let summary = work.join(format!("{tag}-{attempt}.summary"));
        for f in [&out, &tr, &summary] {
            let _ = std::fs::remove_file(f);
        }
        let list = work.join(format!("{tag}-{attempt}.list"));
        std::fs::write(&list, batch.join("\n")).map_err(|e| e.to_string())?;
        let mut cmd = Command::new(&cfg.runner);
        cmd.arg("child")
            .arg("--abi")
            .arg(abi.name())
            .arg("--lib")
            .arg(lib)
            .arg("--list")
            .arg(&list)
            .arg("--out")
            .arg(&out)
            .arg("--preset")
            .arg(preset)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .env_remove("LD_PRELOAD");
        match &cfg.sim {
            Some(sim) => {
                spawn::on_sim(&mut cmd, sim, preset, "kfd-conformance")
                    .arg("--trace")
                    .arg(&tr)
                    .env("KFD_SIM_TRACE", &tr)
                    .env("KFD_SIM_SUMMARY", &summary);
            }
            None => {
                cmd.arg("--hardware");
            }
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("spawn {}: {e}", cfg.runner.display()))?;
        let (status, timed_out) =
            spawn::wait_timeout(&mut child, cfg.child_timeout, Duration::from_millis(5))?;
        let mut stderr = String::new();
        if let Some(mut e) = child.stderr.take() {
            use std::io::Read;
            let _ = e.read_to_string(&mut stderr);
        }
        // Exit code 2 is the runner's own error (a library that does not
        // load, no simulator): a broken run, not a result to compare.
        if status.code() == Some(2) && stderr.contains("kfd-conformance:") {
            return Err(format!(
                "{tag}: the child could not run: {}",
                stderr.trim_end()
            ));
        }
        let text = std::fs::read_to_string(&out).unwrap_or_default();
        let trace_text = std::fs::read(&tr).unwrap_or_default();
        let parsed = parse_output(&text);
        let mut progressed = false;
        for p in &parsed {
            let Some(pos) = names.iter().position(|n| *n == p.name) else {
                continue;
            };
            let mut side = Side {
                records: p.records.clone(),
                calls: p.calls.clone(),
                ..Side::default()
            };
            if cfg.sim.is_some() {
                let end = p.end.unwrap_or(trace_text.len() as u64) as usize;
                let begin = (p.begin as usize).min(end).min(trace_text.len());
                let slice = String::from_utf8_lossy(&trace_text[begin..end.min(trace_text.len())]);
                let lines: Vec<String> = slice.lines().map(str::to_string).collect();
                side.trace = trace::normalise(&lines);
                side.traced = true;
            }
            if p.end.is_none() {
                let what = if timed_out {
                    format!("timed out after {:?}", cfg.child_timeout)
                } else {
                    describe_exit(&status, &stderr)
                };
                side.crashed = Some(match &p.pending {
                    Some(f) => format!("{what} in {f}"),
                    None => what,
                });
            }
            if fam.isolated && fam.exit_check && cfg.sim.is_some() {
                if let Some(line) = std::fs::read_to_string(&summary)
                    .unwrap_or_default()
                    .lines()
                    .rev()
                    .find(|l| l.starts_with("exit "))
                {
                    // The primary's kernel process may outlive its last
                    // close (the C library never closes /dev/kfd; the
                    // kernel reclaims it at exit); secondaries must not.
                    let secondaries = line.matches("secondary=true").count();
                    let v = if secondaries == 0 {
                        "ok".to_string()
                    } else {
                        format!("FAIL: live secondary kernel processes at exit: {secondaries}")
                    };
                    side.records
                        .push(("check.sim-exit-no-live-secondaries".into(), v, None));
                }
            }
            result[pos] = side;
            idx = idx.max(pos + 1);
            progressed = true;
        }
        if !progressed {
            // The child died before its first scenario: charge it to the
            // scenario it was about to run.
            result[idx].crashed = Some(format!(
                "runner failed before the scenario: {}",
                describe_exit(&status, &stderr)
            ));
            idx += 1;
        }
    }
    Ok(result)
}

fn describe_exit(status: &std::process::ExitStatus, stderr: &str) -> String {
    use std::os::unix::process::ExitStatusExt;
    let what = match (status.code(), status.signal()) {
        (_, Some(sig)) => format!("killed by signal {sig} ({})", signal_name(sig)),
        (Some(c), None) => format!("exited with status {c}"),
        _ => "ended".to_string(),
    };
    let last = spawn::last_line(stderr);
    if last.is_empty() {
        what
    } else {
        format!("{what}; stderr: {last}")
    }
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGKILL => "SIGKILL",
        libc::SIGFPE => "SIGFPE",
        libc::SIGILL => "SIGILL",
        _ => "signal",
    }
}

/// One scenario as the child wrote it.
#[derive(Debug, Clone, Default)]
struct Parsed {
    name: String,
    begin: u64,
    end: Option<u64>,
    records: Vec<(String, String, Option<String>)>,
    calls: BTreeSet<String>,
    /// A function called but whose status was never recorded (the call
    /// that crashed or hung).
    pending: Option<String>,
}

fn parse_output(text: &str) -> Vec<Parsed> {
    let mut out: Vec<Parsed> = Vec::new();
    let mut last_fn: Option<String> = None;
    for line in text.lines() {
        let mut parts = line.splitn(3, '\t');
        let kind = parts.next().unwrap_or("");
        let a = parts.next().unwrap_or("");
        let b = parts.next().unwrap_or("");
        match kind {
            "B" => out.push(Parsed {
                name: a.to_string(),
                begin: b.parse().unwrap_or(0),
                ..Parsed::default()
            }),
            "E" => {
                if let Some(p) = out.last_mut() {
                    p.end = Some(b.parse().unwrap_or(0));
                }
            }
            "F" => {
                if let Some(p) = out.last_mut() {
                    p.calls.insert(a.to_string());
                    p.pending = Some(a.to_string());
                }
                last_fn = Some(a.to_string());
            }
            "C" => {
                if let Some(p) = out.last_mut() {
                    p.calls.insert(a.to_string());
                }
            }
            "R" => {
                if let Some(p) = out.last_mut() {
                    p.records
                        .push((a.to_string(), b.to_string(), last_fn.take()));
                }
            }
            _ => {}
        }
    }
    out
}

fn is_unsupported(v: &str) -> bool {
    v == "MISSING" || v == crate::cx::status_text(NOT_SUPPORTED)
}

/// Compares the two sides of one scenario.
fn classify(cfg: &Config, name: &str, family: &str, r: &Side, o: &Side) -> Outcome {
    let mut calls = r.calls.clone();
    calls.extend(o.calls.iter().cloned());
    let mut oc = Outcome {
        name: name.to_string(),
        family: family.to_string(),
        class: Class::Equal,
        details: Vec::new(),
        unsupported_fn: None,
        trace_diff: None,
        trace_intended: None,
        calls,
        ref_crash: r.crashed.clone(),
        ours_crash: o.crashed.clone(),
        fuzz: None,
    };
    if crate::scenarios::family(family).is_some_and(|f| f.robustness) {
        judge_robustness(cfg, &mut oc, r, o);
        return oc;
    }
    // Reference lacks the API: judge ours by its documented checks.
    if let Some(missing) = r.value("lacks-api") {
        oc.class = Class::RefLacksApi;
        oc.details.push(format!("reference lacks {missing}"));
        if let Some(m) = o.value("lacks-api") {
            oc.details.push(format!("ours lacks {m} too"));
        } else {
            if let Some(w) = &o.ran_as {
                oc.details.push(w.clone());
            }
            let checks: Vec<&str> = o
                .records
                .iter()
                .filter(|(k, _, _)| k.starts_with("check."))
                .map(|(k, _, _)| &k["check.".len()..])
                .collect();
            let steps = o.records.len() - checks.len();
            oc.details.push(format!(
                "ours ran {steps} recorded step(s) and {} semantic check(s): {}",
                checks.len(),
                checks.join(", ")
            ));
            let fails: Vec<String> = o
                .records
                .iter()
                .filter(|(k, v, _)| k.starts_with("check.") && v.starts_with("FAIL"))
                .map(|(k, v, _)| format!("ours {k}: {v}"))
                .collect();
            if let Some(c) = &o.crashed {
                oc.class = Class::Differ;
                oc.details.push(format!("ours crashed: {c}"));
            }
            if !fails.is_empty() {
                oc.class = Class::Differ;
                oc.details.extend(fails);
            }
        }
        return oc;
    }
    if let Some(m) = o.value("lacks-api") {
        oc.class = Class::Unsupported;
        oc.unsupported_fn = Some(m.split(',').next().unwrap_or(m).to_string());
        oc.details.push(format!("ours lacks {m}"));
        return oc;
    }
    // Step-by-step differences, in the reference's order.
    let mut diffs: Vec<(String, String, String, Option<String>)> = Vec::new();
    let ours: HashMap<&str, &(String, String, Option<String>)> =
        o.records.iter().map(|r| (r.0.as_str(), r)).collect();
    let refs: HashMap<&str, &(String, String, Option<String>)> =
        r.records.iter().map(|r| (r.0.as_str(), r)).collect();
    for (k, v, f) in &r.records {
        match ours.get(k.as_str()) {
            Some((_, ov, _)) if ov == v => {}
            Some((_, ov, of)) => {
                diffs.push((k.clone(), v.clone(), ov.clone(), f.clone().or(of.clone())))
            }
            None => diffs.push((k.clone(), v.clone(), "<not reached>".into(), f.clone())),
        }
    }
    for (k, v, f) in &o.records {
        if !refs.contains_key(k.as_str()) {
            diffs.push((k.clone(), "<not reached>".into(), v.clone(), f.clone()));
        }
    }
    let crash_diff = match (&r.crashed, &o.crashed) {
        (Some(a), None) => Some(format!("reference crashed ({a}); ours completed")),
        (None, Some(b)) => Some(format!("ours crashed ({b}); reference completed")),
        _ => None,
    };
    if diffs.is_empty() && crash_diff.is_none() {
        oc.class = Class::Equal;
    } else {
        // Unsupported: the first API difference is ours answering
        // NOT_SUPPORTED or lacking the symbol.
        let first_unsup = diffs.first().filter(|d| is_unsupported(&d.2) && d.1 != d.2);
        if let Some(d) = first_unsup {
            oc.class = Class::Unsupported;
            oc.unsupported_fn = d.3.clone().or(Some(d.0.clone()));
            oc.details
                .push(format!("{}: reference {} / ours {}", d.0, d.1, d.2));
            return oc;
        }
        let mut all_intended = true;
        if let Some(c) = &crash_diff {
            match cfg.intended.find(cfg.abi, name, "crash") {
                Some(e) => oc.details.push(format!(
                    "crash: {c} — intended (line {}): {}",
                    e.line, e.reason
                )),
                None => {
                    all_intended = false;
                    oc.details.push(format!("crash: {c}"));
                }
            }
        }
        for (k, a, b, _) in &diffs {
            // After a crash on one side the rest of the other side's
            // records are "not reached"; the crash entry covers them.
            let covered_by_crash =
                crash_diff.is_some() && (a == "<not reached>" || b == "<not reached>");
            if covered_by_crash {
                continue;
            }
            match cfg.intended.find(cfg.abi, name, k) {
                Some(e) => oc.details.push(format!(
                    "{k}: reference {a} / ours {b} — intended (line {}): {}",
                    e.line, e.reason
                )),
                None => {
                    all_intended = false;
                    oc.details.push(format!("{k}: reference {a} / ours {b}"));
                }
            }
        }
        oc.class = if all_intended {
            Class::Intended
        } else {
            Class::Differ
        };
    }
    if matches!(oc.class, Class::Equal | Class::Intended) && r.traced && o.traced {
        // A side that crashed (the crash itself is covered above) issued
        // no ioctls after the crash: its trace is compared with the same
        // number of the other side's ioctls, as the records it never
        // reached are.
        let (rt, ot) = match (&r.crashed, &o.crashed) {
            (Some(_), None) => (&r.trace[..], &o.trace[..r.trace.len().min(o.trace.len())]),
            (None, Some(_)) => (&r.trace[..o.trace.len().min(r.trace.len())], &o.trace[..]),
            _ => (&r.trace[..], &o.trace[..]),
        };
        if let Some(d) = trace::first_difference(rt, ot) {
            match cfg.intended.find(cfg.abi, name, "trace") {
                Some(e) => {
                    oc.trace_intended =
                        Some(format!("{d} — intended (line {}): {}", e.line, e.reason))
                }
                None => oc.trace_diff = Some(d),
            }
        }
    }
    oc
}

/// Status differences listed per robustness scenario (the rest counted).
const LISTED_STATUS_DIFFERENCES: usize = 5;

/// The judgement of a robustness family's scenario (see
/// [`crate::fuzz`]): per call (`cNN` records), a crash, hang or panic of
/// ours where the reference returned a status is unexpected unless
/// listed as intended; status differences are counted and the first few
/// listed with their arguments (`aNN`). A scenario process that died is
/// judged as in other families (`crash`). Traces are not compared.
fn judge_robustness(cfg: &Config, oc: &mut Outcome, r: &Side, o: &Side) {
    let mut counts = FuzzCounts::default();
    let mut unexpected = false;
    let mut listed = 0;
    let is_call =
        |k: &str| k.len() > 1 && k.starts_with('c') && k[1..].bytes().all(|b| b.is_ascii_digit());
    for (k, rv, _) in r.records.iter().filter(|(k, _, _)| is_call(k)) {
        let Some(ov) = o.value(k) else {
            continue;
        };
        let args = r.value(&format!("a{}", &k[1..])).unwrap_or("-");
        if counts.call(rv, ov) {
            let d = format!("{k} ({args}): reference {rv} / ours {ov}");
            if note_failure(cfg, oc, k, d) {
                unexpected = true;
            } else {
                counts.excuse();
            }
        } else if rv != ov && listed < LISTED_STATUS_DIFFERENCES {
            listed += 1;
            oc.details.push(format!(
                "{k} ({args}): reference {rv} / ours {ov} (not judged)"
            ));
        }
    }
    if counts.status_differ > listed {
        oc.details.push(format!(
            "{} more status differences (not judged)",
            counts.status_differ - listed
        ));
    }
    if let (None, Some(c)) = (&r.crashed, &o.crashed) {
        let d = format!("crash: ours crashed ({c}); reference completed");
        unexpected |= note_failure(cfg, oc, "crash", d);
    }
    oc.class = if unexpected {
        Class::Differ
    } else if counts.status_differ > 0 {
        Class::Robust
    } else {
        Class::Equal
    };
    oc.fuzz = Some(counts);
}

/// Adds a failure of ours at `step` to the details, as intended when an
/// entry covers it; true when none does (an unexpected difference).
fn note_failure(cfg: &Config, oc: &mut Outcome, step: &str, detail: String) -> bool {
    match cfg.intended.find(cfg.abi, &oc.name, step) {
        Some(e) => {
            oc.details.push(format!(
                "{detail} — intended (line {}): {}",
                e.line, e.reason
            ));
            false
        }
        None => {
            oc.details.push(detail);
            true
        }
    }
}

impl RunResult {
    /// The fuzz counts of every robustness scenario, summed (`None` when
    /// no such scenario ran).
    pub fn fuzz_totals(&self) -> Option<FuzzCounts> {
        let mut any = false;
        let mut t = FuzzCounts::default();
        for c in self.outcomes.iter().filter_map(|o| o.fuzz.as_ref()) {
            any = true;
            t.add(c);
        }
        any.then_some(t)
    }

    /// Scenarios with unexpected API differences.
    pub fn unexpected(&self) -> Vec<&Outcome> {
        self.outcomes
            .iter()
            .filter(|o| o.class == Class::Differ)
            .collect()
    }

    /// Scenarios with unexpected trace differences.
    pub fn unexpected_traces(&self) -> Vec<&Outcome> {
        self.outcomes
            .iter()
            .filter(|o| o.trace_diff.is_some())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(intended: &str) -> Config {
        Config {
            abi: AbiKind::Rocm52,
            reference: "r".into(),
            ours: "o".into(),
            sim: None,
            presets: vec![],
            default_preset: "mi210".into(),
            families: vec![],
            scenarios: vec![],
            out_dir: "/nonexistent".into(),
            intended: Intended::parse(intended).unwrap(),
            runner: "x".into(),
            child_timeout: Duration::from_secs(1),
            trace_gate: true,
            newest_ours: None,
        }
    }

    fn side(recs: &[(&str, &str)]) -> Side {
        Side {
            records: recs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string(), Some(format!("fn_{k}"))))
                .collect(),
            ..Side::default()
        }
    }

    #[test]
    fn classes() {
        let c = cfg("[rocm-5.2] s/crashy | crash | reason\n[rocm-5.2] s/x | step2 | known");
        let a = side(&[("open", "SUCCESS(0)"), ("step2", "INVALID_PARAMETER(3)")]);
        assert_eq!(classify(&c, "s/x", "s", &a, &a).class, Class::Equal);
        let b = side(&[("open", "SUCCESS(0)"), ("step2", "ERROR(1)")]);
        assert_eq!(classify(&c, "s/x", "s", &a, &b).class, Class::Intended);
        assert_eq!(classify(&c, "s/y", "s", &a, &b).class, Class::Differ);
        let u = side(&[("open", "NOT_SUPPORTED(11)")]);
        let o = classify(&c, "s/y", "s", &a, &u);
        assert_eq!(o.class, Class::Unsupported);
        assert_eq!(o.unsupported_fn.as_deref(), Some("fn_open"));
        let m = side(&[("open", "MISSING")]);
        assert_eq!(classify(&c, "s/y", "s", &a, &m).class, Class::Unsupported);
        let mut crashed = side(&[("open", "SUCCESS(0)")]);
        crashed.crashed = Some("SIGSEGV".into());
        assert_eq!(
            classify(&c, "s/crashy", "s", &crashed, &a).class,
            Class::Intended
        );
        assert_eq!(
            classify(&c, "s/other", "s", &crashed, &a).class,
            Class::Differ
        );
        // Reference without the API: ours is judged by its checks.
        let lacks = side(&[("lacks-api", "hsaKmtOpenKFDCtx")]);
        let good = side(&[("check.a", "ok")]);
        let bad = side(&[("check.a", "FAIL: status 0, want 20")]);
        assert_eq!(
            classify(&c, "ctx/a", "ctx", &lacks, &good).class,
            Class::RefLacksApi
        );
        assert_eq!(
            classify(&c, "ctx/a", "ctx", &lacks, &bad).class,
            Class::Differ
        );
        assert_eq!(
            classify(&c, "ctx/a", "ctx", &a, &lacks).class,
            Class::Unsupported
        );
    }

    #[test]
    fn ours_lacking_the_api_runs_on_the_newest_build() {
        let mut c = cfg("");
        let fam = crate::scenarios::family("ctx").unwrap();
        let names = names_of(AbiKind::Rocm52, "ctx");
        let lacks = vec![side(&[("lacks-api", "hsaKmtOpenKFDCtx")]); names.len()];
        assert_eq!(newest_fallback(&c, fam, &names, &lacks), None);
        c.newest_ours = Some("cur".into());
        assert_eq!(
            newest_fallback(&c, fam, &names, &lacks),
            Some(Path::new("cur"))
        );
        let mut some = lacks.clone();
        some[0] = side(&[("check.a", "ok")]);
        assert_eq!(newest_fallback(&c, fam, &names, &some), None);
        c.abi = AbiKind::Newest;
        assert_eq!(newest_fallback(&c, fam, &names, &lacks), None);
        // A failed check of the current build still counts as a difference.
        let mut bad = side(&[("check.a", "FAIL: status 0, want 20")]);
        bad.ran_as = Some("ours ran as cur".into());
        let o = classify(&c, "ctx/a", "ctx", &lacks[0], &bad);
        assert_eq!(o.class, Class::Differ);
        assert!(o.details.iter().any(|d| d == "ours ran as cur"));
    }

    #[test]
    fn the_fuzz_family_judges_crashes_of_ours_only() {
        let c = cfg("[rocm-5.2] fuzz/f | c02 | reviewed");
        let r = side(&[
            ("c00", "SUCCESS(0)"),
            ("c01", "crash:SIGSEGV"),
            ("c02", "ERROR(1)"),
        ]);
        let o = side(&[
            ("c00", "ERROR(1)"),
            ("c01", "ERROR(1)"),
            ("c02", "crash:SIGSEGV"),
        ]);
        let oc = classify(&c, "fuzz/f", "fuzz", &r, &o);
        assert_eq!(oc.class, Class::Robust, "{:?}", oc.details);
        let counts = oc.fuzz.unwrap();
        let got = (
            counts.calls,
            counts.unexpected,
            counts.intended,
            counts.status_differ,
        );
        assert_eq!(got, (3, 0, 1, 1));
        let crash = side(&[("c00", "hang"), ("c01", "ERROR(1)"), ("c02", "ERROR(1)")]);
        let oc = classify(&c, "fuzz/f", "fuzz", &r, &crash);
        assert_eq!(oc.class, Class::Differ);
        assert!(
            oc.details.iter().any(|d| d.starts_with("c00")),
            "{:?}",
            oc.details
        );
        assert_eq!(classify(&c, "fuzz/f", "fuzz", &r, &r).class, Class::Equal);
    }

    #[test]
    fn parses_protocol_and_pending_call() {
        let p = parse_output("B\ts/a\t0\nF\tf1\nR\tk\tv\nE\ts/a\t10\nB\ts/b\t10\nF\tf2\n");
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].end, Some(10));
        assert_eq!(p[0].records[0].2.as_deref(), Some("f1"));
        assert_eq!(p[1].end, None);
        assert_eq!(p[1].pending.as_deref(), Some("f2"));
    }
}
