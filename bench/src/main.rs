//! `kfd-bench`: the benchmark parent (`run`), the per-library child
//! (`child`) and the instruction counts under callgrind
//! (`instructions`). Normally started by `cargo xtask bench`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use conformance::abi::AbiKind;
use kfd_bench::child::{self, Budget, ChildConfig, Live};
use kfd_bench::parent::{self, Config};
use kfd_bench::{instr, machine, report, svg};

const USAGE: &str = "usage:
  kfd-bench run --reference LIB --ours LIB [--ours-newest LIB] --sim LIBKFD_SIM
                [--presets a,b,..] [--default-preset NAME] [--scaling-preset NAME]
                [--levels 0,1000,..] [--live vram|sys]
                [--reps N] [--per-op-ms N] [--max-samples N] [--min-samples N]
                [--group NAME]... [--out DIR] [--timeout SECS] [--since UNIX_MS]
                [--markdown FILE] [--commit TEXT] [--toolchain TEXT] [--command TEXT]
  kfd-bench child --abi ABI --lib LIB --group NAME [--preset NAME] [--levels ..]
                [--live vram|sys]
                [--per-op-ms N] [--max-samples N] [--min-samples N] [--batch N]
                [--count-ioctls] [--only OP,..]
  kfd-bench instructions --reference LIB --ours LIB --sim LIBKFD_SIM
                [--ops a,b,..] [--out DIR] [--preset NAME] [--valgrind PATH]
                [--timeout SECS]
  (--count-ioctls: count each operation's ioctls in KFD_SIM_TRACE instead
   of timing it)
  (--markdown FILE: also write the report page (method, machine, table) to
   FILE; --commit, --toolchain and --command fill in what it says was run)
  (--batch N: exactly N calls per sample and --max-samples samples, for
   instruction counts under valgrind --tool=callgrind; --only OP measures
   just those operation ids of the group)
  (instructions: each operation's child under valgrind --tool=callgrind
   at two batch sizes, per library; prints instructions per call of the
   library and of the system code it called, writes instructions.json,
   instructions.txt and instructions.md to --out (default target/bench))";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let r = match args.first().map(String::as_str) {
        Some("run") => run(&args[1..]),
        Some("child") => child_main(&args[1..]),
        Some("instructions") => instructions(&args[1..]),
        _ => Err(USAGE.to_string()),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kfd-bench: {e}");
            ExitCode::from(2)
        }
    }
}

/// `--flag value` lookups.
struct Args<'a>(&'a [String]);

impl<'a> Args<'a> {
    fn all(&self, flag: &str) -> Vec<&'a str> {
        self.0
            .windows(2)
            .filter(|w| w[0] == flag)
            .map(|w| w[1].as_str())
            .collect()
    }
    fn one(&self, flag: &str) -> Option<&'a str> {
        self.all(flag).pop()
    }
    fn need(&self, flag: &str) -> Result<&'a str, String> {
        self.one(flag)
            .ok_or_else(|| format!("missing {flag}\n{USAGE}"))
    }
    fn num<T: std::str::FromStr>(&self, flag: &str, default: T) -> Result<T, String> {
        match self.one(flag) {
            None => Ok(default),
            Some(v) => v
                .parse()
                .map_err(|_| format!("{flag}: `{v}` is not a number")),
        }
    }
    fn list(&self, flag: &str, default: &str) -> Vec<String> {
        self.one(flag)
            .unwrap_or(default)
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    }
}

fn budget(a: &Args<'_>) -> Result<Budget, String> {
    Ok(Budget {
        per_op: Duration::from_millis(a.num("--per-op-ms", 150u64)?),
        max_samples: a.num("--max-samples", 100usize)?.max(1),
        min_samples: a.num("--min-samples", 3usize)?.max(1),
        count_ioctls: a.0.iter().any(|x| x == "--count-ioctls"),
        fixed_batch: a
            .one("--batch")
            .map(|_| a.num("--batch", 1usize))
            .transpose()?,
    })
}

fn levels(a: &Args<'_>) -> Result<Vec<usize>, String> {
    let mut v = a
        .list("--levels", "0,1000,10000,50000")
        .iter()
        .map(|s| {
            s.parse::<usize>()
                .map_err(|_| format!("--levels: `{s}` is not a number"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    v.sort_unstable();
    v.dedup();
    Ok(v)
}

fn live(a: &Args<'_>) -> Result<Live, String> {
    let s = a.one("--live").unwrap_or("sys");
    Live::parse(s).ok_or_else(|| format!("--live: `{s}` (vram or sys)"))
}

fn child_main(v: &[String]) -> Result<(), String> {
    let a = Args(v);
    let abi_s = a.one("--abi").unwrap_or("rocm-5.2");
    let abi = AbiKind::parse(abi_s).ok_or_else(|| format!("unknown ABI `{abi_s}`"))?;
    child::run(&ChildConfig {
        abi,
        lib: a.need("--lib")?.into(),
        group: a.need("--group")?.into(),
        preset: a.one("--preset").unwrap_or("mi210").into(),
        levels: levels(&a)?,
        live: live(&a)?,
        budget: budget(&a)?,
        only: a.one("--only").map(str::to_string),
    })
}

fn run(v: &[String]) -> Result<(), String> {
    let a = Args(v);
    let runner = std::env::current_exe().map_err(|e| e.to_string())?;
    let out_dir = PathBuf::from(a.one("--out").unwrap_or("target/bench"));
    let cfg = Config {
        reference: a.need("--reference")?.into(),
        ours: a.need("--ours")?.into(),
        ours_newest: a.one("--ours-newest").map(PathBuf::from),
        sim: a.need("--sim")?.into(),
        presets: a.list("--presets", "mi210,apu,navi31,mi300x,large64"),
        default_preset: a.one("--default-preset").unwrap_or("mi210").into(),
        scaling_preset: a.one("--scaling-preset").unwrap_or("mi210").into(),
        levels: levels(&a)?,
        live: live(&a)?,
        reps: a.num("--reps", 5usize)?.max(1),
        budget: budget(&a)?,
        groups: a.all("--group").iter().map(|s| s.to_string()).collect(),
        out_dir: out_dir.clone(),
        runner,
        child_timeout: Duration::from_secs(a.num("--timeout", 300u64)?),
    };
    files_exist(
        [&cfg.reference, &cfg.ours, &cfg.sim]
            .into_iter()
            .chain(cfg.ours_newest.as_ref()),
    )?;
    println!(
        "kfd-bench: C {} vs ours {} (rocm-5.2){}, on kfd-sim ({}), {} reps, alternating",
        cfg.reference.display(),
        cfg.ours.display(),
        cfg.ours_newest
            .as_ref()
            .map(|p| format!(" + {} (newest, contexts)", p.display()))
            .unwrap_or_default(),
        cfg.sim.display(),
        cfg.reps
    );
    let res = parent::run(&cfg, |line| eprintln!("kfd-bench: {line}"))?;
    let wall = match a.one("--since") {
        Some(ms) => {
            let ms: u128 = ms.parse().map_err(|_| "--since: not a number")?;
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_millis())
                .unwrap_or(ms);
            Some(now.saturating_sub(ms) as f64 / 1000.0)
        }
        None => None,
    };
    let table = report::table(&res);
    println!("\n{table}");
    let rows = report::rows(&res);
    std::fs::create_dir_all(&out_dir).map_err(|e| e.to_string())?;
    let write = |name: &str, text: &str| {
        let p = out_dir.join(name);
        std::fs::write(&p, text).map_err(|e| format!("{}: {e}", p.display()))
    };
    write("report.json", &report::json(&res, wall))?;
    write("report.txt", &table)?;
    write("scaling.svg", &svg::render(&rows))?;
    let unknown = |flag: &str| a.one(flag).unwrap_or("unknown").to_string();
    let page = report::markdown(
        &res,
        &report::RunInfo {
            command: a.one("--command").unwrap_or("kfd-bench run").to_string(),
            commit: unknown("--commit"),
            toolchain: unknown("--toolchain"),
            date: machine::now_utc(),
            machine: machine::Machine::probe(),
            wall_seconds: wall,
        },
    );
    write("report.md", &page)?;
    if let Some(path) = a.one("--markdown") {
        std::fs::write(path, &page).map_err(|e| format!("{path}: {e}"))?;
        println!("wrote {path}");
    }
    println!(
        "measured in {:.0} s{}; wrote {}/report.json, report.txt, report.md, scaling.svg",
        res.elapsed.as_secs_f64(),
        wall.map(|w| format!(" ({w:.0} s with the builds)"))
            .unwrap_or_default(),
        out_dir.display()
    );
    Ok(())
}

fn instructions(v: &[String]) -> Result<(), String> {
    let a = Args(v);
    let out_dir = PathBuf::from(a.one("--out").unwrap_or("target/bench"));
    let cfg = instr::Config {
        reference: a.need("--reference")?.into(),
        ours: a.need("--ours")?.into(),
        sim: a.need("--sim")?.into(),
        runner: std::env::current_exe().map_err(|e| e.to_string())?,
        valgrind: a.one("--valgrind").unwrap_or("valgrind").into(),
        ops: a.list("--ops", &instr::DEFAULT_OPS.join(",")),
        preset: a.one("--preset").unwrap_or("mi210").into(),
        out_dir: out_dir.clone(),
        child_timeout: Duration::from_secs(a.num("--timeout", 600u64)?),
    };
    files_exist([&cfg.reference, &cfg.ours, &cfg.sim])?;
    println!(
        "kfd-bench instructions: C {} vs ours {} (rocm-5.2), on kfd-sim ({}), under callgrind",
        cfg.reference.display(),
        cfg.ours.display(),
        cfg.sim.display()
    );
    let rep = instr::run(&cfg, |line| eprintln!("kfd-bench: {line}"))?;
    let table = instr::table(&rep);
    println!("\n{table}");
    std::fs::create_dir_all(&out_dir).map_err(|e| format!("{}: {e}", out_dir.display()))?;
    let write = |name: &str, text: &str| {
        let p = out_dir.join(name);
        std::fs::write(&p, text).map_err(|e| format!("{}: {e}", p.display()))
    };
    write("instructions.json", &instr::json(&rep))?;
    write("instructions.txt", &table)?;
    write("instructions.md", &instr::markdown(&rep))?;
    println!(
        "counted in {:.0} s; wrote {}/instructions.json, instructions.txt, instructions.md \
         (callgrind files in {}/instructions/)",
        rep.elapsed.as_secs_f64(),
        out_dir.display(),
        out_dir.display()
    );
    let failed = rep.failures();
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} of {} runs failed:\n  {}",
            failed.len(),
            rep.rows.len() * 2,
            failed.join("\n  ")
        ))
    }
}

/// An error naming the first of `paths` that does not exist.
fn files_exist<'a>(paths: impl IntoIterator<Item = &'a PathBuf>) -> Result<(), String> {
    match paths.into_iter().find(|p| !p.exists()) {
        Some(p) => Err(format!("{}: no such file", p.display())),
        None => Ok(()),
    }
}
