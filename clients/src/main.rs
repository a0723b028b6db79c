//! `kfd-rocr-client [LIBRARY]`: the ROCr client of `cargo xtask clients`
//! (see the crate docs). Exit status: 0 when every call succeeded, 1 when
//! one failed (the report says which), 2 when the runtime could not be
//! loaded or initialised; a step of the GPU work that does not finish in
//! a minute aborts the process with a line naming it.

use std::process::ExitCode;

use kfd_clients::probe;
use kfd_clients::session::client_main;
use kfd_clients::work::{self, Watchdog};

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
    client_main("kfd-rocr-client", &library, true, |session| {
        let report = probe::run(session);
        let done = work::run(session, &dog);
        dog.step("hsa_shut_down");
        (report.text + &done.text, report.ok && done.ok)
    })
}
