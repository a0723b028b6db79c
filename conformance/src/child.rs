//! The per-library runner: one child process loads one libhsakmt and runs
//! a slice of the scenario table, writing the protocol of [`crate::cx`].
//!
//! One library per process, always: two thunks in one process would share
//! (and fight over) the one KFD process the kernel keeps per process.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::abi::{Abi, AbiKind, Newest, Rocm52, Rocm62};
use crate::api::Api;
use crate::cx::{Cx, Env};
use crate::scenarios;

/// What one child runs.
#[derive(Debug, Clone)]
pub struct ChildArgs {
    /// ABI generation to load the library as.
    pub abi: AbiKind,
    /// The library under test.
    pub lib: PathBuf,
    /// Scenario names to run, in order.
    pub scenarios: Vec<String>,
    /// Output file (protocol lines).
    pub out: PathBuf,
    /// The simulator's trace file, whose length marks scenario boundaries.
    pub trace: Option<PathBuf>,
    /// Where the run happens.
    pub env: Env,
}

fn trace_len(p: &Option<PathBuf>) -> u64 {
    p.as_deref()
        .and_then(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .unwrap_or(0)
}

/// Runs the child; returns an error only for harness failures (a library
/// that cannot be loaded, an unwritable output).
pub fn run(args: &ChildArgs) -> Result<(), String> {
    match args.abi {
        AbiKind::Rocm52 => run_abi::<Rocm52>(args),
        AbiKind::Rocm62 => run_abi::<Rocm62>(args),
        AbiKind::Newest => run_abi::<Newest>(args),
    }
}

fn run_abi<A: Abi>(args: &ChildArgs) -> Result<(), String> {
    // On the simulator /dev/kfd exists only through its preload: without
    // it both libraries would fail every open alike and compare "equal".
    if !args.env.hardware && std::fs::metadata("/dev/kfd").is_err() {
        return Err(
            "the simulator is not active in this child: /dev/kfd does not exist \
                    (LD_PRELOAD not in effect, or kfd-sim could not start; see its message above)"
                .into(),
        );
    }
    let mut out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&args.out)
        .map_err(|e| format!("{}: {e}", args.out.display()))?;
    // SAFETY: the parent names a libhsakmt of generation `A` (the pairing
    // rules of `cargo xtask conformance`); this process exists only to
    // host it.
    let api = unsafe { Api::<A>::load(Path::new(&args.lib)) }?;
    let table = scenarios::all::<A>();
    let mut cx = Cx::new(&api, &args.env, &mut out);
    for name in &args.scenarios {
        let Some(s) = table.iter().find(|s| &s.name == name) else {
            cx.raw(&format!("B\t{name}\t{}\n", trace_len(&args.trace)));
            cx.rec("harness-error", "unknown scenario");
            cx.raw(&format!("E\t{name}\t{}\n", trace_len(&args.trace)));
            continue;
        };
        cx.reset();
        cx.raw(&format!("B\t{name}\t{}\n", trace_len(&args.trace)));
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (s.run)(&mut cx)));
        if r.is_err() {
            cx.rec("harness-panic", "scenario code panicked");
        }
        cx.raw(&format!("E\t{name}\t{}\n", trace_len(&args.trace)));
    }
    drop(cx);
    out.flush().map_err(|e| e.to_string())
}
