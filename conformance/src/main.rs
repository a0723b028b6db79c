//! `kfd-conformance`: the conformance parent (`run`) and per-library
//! runner (`child`). Normally started by `cargo xtask conformance`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use conformance::abi::AbiKind;
use conformance::child::{self, ChildArgs};
use conformance::cx::Env;
use conformance::intended::Intended;
use conformance::parent::{self, Config};
use conformance::report;

const USAGE: &str = "usage:
  kfd-conformance run --reference LIB --ours LIB [--abi rocm-5.2|rocm-6.2|newest]
                      (--sim LIBKFD_SIM | --hardware) [--presets a,b,..]
                      [--default-preset NAME] [--family NAME]...
                      [--scenario GLOB]... [--out DIR]
                      [--intended FILE] [--timeout SECS] [--trace-advisory]
                      [--newest-ours LIB]
  kfd-conformance child --abi ABI --lib LIB --list FILE --out FILE
                      [--trace FILE] [--preset NAME] [--hardware]";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let r = match args.first().map(String::as_str) {
        Some("run") => run(&args[1..]),
        Some("child") => child_main(&args[1..]),
        _ => Err(USAGE.to_string()),
    };
    match r {
        Ok(code) => code,
        Err(e) => {
            eprintln!("kfd-conformance: {e}");
            ExitCode::from(2)
        }
    }
}

/// Simple `--flag value` parsing.
struct Args<'a> {
    v: &'a [String],
}

impl<'a> Args<'a> {
    fn all(&self, flag: &str) -> Vec<&'a str> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < self.v.len() {
            if self.v[i] == flag && i + 1 < self.v.len() {
                out.push(self.v[i + 1].as_str());
                i += 2;
            } else {
                i += 1;
            }
        }
        out
    }
    fn one(&self, flag: &str) -> Option<&'a str> {
        self.all(flag).pop()
    }
    fn has(&self, flag: &str) -> bool {
        self.v.iter().any(|a| a == flag)
    }
    fn need(&self, flag: &str) -> Result<&'a str, String> {
        self.one(flag)
            .ok_or_else(|| format!("missing {flag}\n{USAGE}"))
    }
}

fn abi_of(a: &Args<'_>) -> Result<AbiKind, String> {
    let s = a.one("--abi").unwrap_or("rocm-5.2");
    AbiKind::parse(s).ok_or_else(|| format!("unknown ABI `{s}` (rocm-5.2, rocm-6.2 or newest)"))
}

fn child_main(v: &[String]) -> Result<ExitCode, String> {
    let a = Args { v };
    let list = std::fs::read_to_string(a.need("--list")?).map_err(|e| e.to_string())?;
    let args = ChildArgs {
        abi: abi_of(&a)?,
        lib: a.need("--lib")?.into(),
        scenarios: list
            .lines()
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect(),
        out: a.need("--out")?.into(),
        trace: a.one("--trace").map(PathBuf::from),
        env: Env {
            hardware: a.has("--hardware"),
            preset: a.one("--preset").unwrap_or("mi210").to_string(),
        },
    };
    child::run(&args)?;
    Ok(ExitCode::SUCCESS)
}

fn run(v: &[String]) -> Result<ExitCode, String> {
    let a = Args { v };
    let abi = abi_of(&a)?;
    let sim = if a.has("--hardware") {
        None
    } else {
        Some(PathBuf::from(a.need("--sim")?))
    };
    let out_dir = PathBuf::from(a.one("--out").unwrap_or("target/conformance"));
    let intended_path = a.one("--intended").map(PathBuf::from);
    let intended = match &intended_path {
        Some(p) => Intended::parse(
            &std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?,
        )?,
        None => Intended::default(),
    };
    let presets: Vec<String> = a
        .one("--presets")
        .unwrap_or("mi210,mi300x,apu,navi31,large64")
        .split(',')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    let cfg = Config {
        abi,
        reference: a.need("--reference")?.into(),
        ours: a.need("--ours")?.into(),
        sim,
        default_preset: a.one("--default-preset").unwrap_or("mi210").to_string(),
        presets,
        families: a.all("--family").into_iter().map(str::to_string).collect(),
        scenarios: a
            .all("--scenario")
            .into_iter()
            .map(str::to_string)
            .collect(),
        out_dir: out_dir.clone(),
        intended,
        runner: std::env::current_exe().map_err(|e| e.to_string())?,
        child_timeout: Duration::from_secs(
            a.one("--timeout")
                .and_then(|t| t.parse().ok())
                .unwrap_or(120),
        ),
        trace_gate: !a.has("--trace-advisory"),
        newest_ours: a.one("--newest-ours").map(PathBuf::from),
    };
    let newest = cfg.newest_ours.iter().map(|p| ("newest-ours", p));
    for (what, p) in [("reference", &cfg.reference), ("ours", &cfg.ours)]
        .into_iter()
        .chain(newest)
    {
        if !p.exists() {
            return Err(format!("{what} library {} does not exist", p.display()));
        }
    }
    let result = parent::run(&cfg)?;
    let title = format!(
        "Reference: `{}`. Ours: `{}`{}. Intended differences: `{}`.",
        cfg.reference.display(),
        cfg.ours.display(),
        cfg.newest_ours
            .as_ref()
            .map(|p| format!(
                " (families whose API it lacks: `{}`, the current ABI)",
                p.display()
            ))
            .unwrap_or_default(),
        intended_path
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "(none)".into())
    );
    std::fs::write(out_dir.join("report.md"), report::markdown(&result, &title))
        .map_err(|e| e.to_string())?;
    std::fs::write(out_dir.join("report.json"), report::json(&result))
        .map_err(|e| e.to_string())?;
    print!("{}", report::table(&result));
    println!(
        "{} scenarios in {:.1} s; report: {}",
        result.outcomes.len(),
        result.elapsed.as_secs_f64(),
        out_dir.join("report.md").display()
    );
    let uncovered: Vec<&str> = report::coverage(&result)
        .into_iter()
        .filter(|(_, n)| *n == 0)
        .map(|(f, _)| f)
        .collect();
    let bad = result.unexpected();
    let bad_traces = if cfg.trace_gate {
        result.unexpected_traces()
    } else {
        Vec::new()
    };
    let full = cfg.families.is_empty() && cfg.scenarios.is_empty();
    if bad.is_empty() && bad_traces.is_empty() && (uncovered.is_empty() || !full) {
        println!("conformance: no unexpected differences");
        return Ok(ExitCode::SUCCESS);
    }
    for o in &bad {
        println!("UNEXPECTED DIFFERENCE: {}", o.name);
        for d in o.details.iter().take(5) {
            println!("    {d}");
        }
    }
    for o in &bad_traces {
        println!(
            "UNEXPECTED TRACE DIFFERENCE: {}: {}",
            o.name,
            o.trace_diff.as_deref().unwrap_or("")
        );
    }
    if full && !uncovered.is_empty() {
        println!("NO SCENARIO CALLS: {}", uncovered.join(", "));
    }
    Ok(ExitCode::FAILURE)
}
