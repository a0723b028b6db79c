//! `kfd-rocr-client [LIBRARY]`: the ROCr client of `cargo xtask clients`
//! (see the crate docs). Exit status: 0 when every call succeeded, 1 when
//! one failed (the report says which), 2 when the runtime could not be
//! loaded or initialised; a step of the GPU work that does not finish in
//! a minute aborts the process with a line naming it.

use std::process::ExitCode;

use kfd_clients::hsa::Runtime;
use kfd_clients::session::Session;
use kfd_clients::work::{self, Watchdog};
use kfd_clients::{probe, thunk};

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let library = args
        .next()
        .unwrap_or_else(|| "libhsa-runtime64.so.1".into());
    if args.next().is_some() {
        eprintln!("usage: kfd-rocr-client [LIBRARY]");
        return ExitCode::from(2);
    }
    // Every same-GPU copy on SDMA (see `work`), unless the caller chose a
    // threshold; read by hsa_init. The process has one thread here.
    let (var, value) = work::FORCE_SDMA_SIZE;
    if std::env::var_os(var).is_none() {
        std::env::set_var(var, value);
    }
    let dog = Watchdog::start(work::STEP_LIMIT);
    let rt = match Runtime::load(&library) {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("kfd-rocr-client: {e}");
            return ExitCode::from(2);
        }
    };
    let session = match Session::init(&rt) {
        Ok(s) => s,
        Err(status) => {
            println!("hsa_init: {status:#x}");
            return ExitCode::from(2);
        }
    };
    println!("hsa_init: SUCCESS");
    match std::fs::read_to_string("/proc/self/maps") {
        Ok(maps) => eprintln!("{}", thunk::line(&thunk::mapped(&maps))),
        Err(e) => eprintln!("{} unknown (/proc/self/maps: {e})", thunk::LINE_PREFIX),
    }
    let report = probe::run(&session);
    print!("{}", report.text);
    let done = work::run(&session, &dog);
    print!("{}", done.text);
    dog.step("hsa_shut_down");
    let status = session.shut_down();
    let shut = if status == 0 {
        "SUCCESS".to_string()
    } else {
        format!("{status:#x}")
    };
    println!("hsa_shut_down: {shut}");
    if report.ok && done.ok && status == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
