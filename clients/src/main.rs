//! `kfd-rocr-client [LIBRARY]`: the ROCr client of `cargo xtask clients`
//! (see the crate docs). Exit status: 0 when every call succeeded, 1 when
//! one failed (the report says which), 2 when the runtime could not be
//! loaded or initialised.

use std::process::ExitCode;

use kfd_clients::hsa::Runtime;
use kfd_clients::session::Session;
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
    let status = session.shut_down();
    let shut = if status == 0 {
        "SUCCESS".to_string()
    } else {
        format!("{status:#x}")
    };
    println!("hsa_shut_down: {shut}");
    if report.ok && status == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
