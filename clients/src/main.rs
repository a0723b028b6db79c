//! `kfd-rocr-client [--blit] [LIBRARY]`: the ROCr client of `cargo xtask
//! clients` (see the crate docs). Without `--blit`: the probe and the GPU
//! work of `work`, every copy on SDMA. With `--blit`: the fills and
//! copies of `blit` on ROCr's blit kernels, SDMA off. Exit status: 0 when
//! every call succeeded, 1 when one failed (the report says which), 2
//! when the runtime could not be loaded or initialised; a step of the GPU
//! work that does not finish in a minute aborts the process with a line
//! naming it.

use std::process::ExitCode;

use kfd_clients::session::client_main;
use kfd_clients::work::{self, Watchdog};
use kfd_clients::{blit, probe};

const USAGE: &str = "usage: kfd-rocr-client [--blit] [LIBRARY]";

fn main() -> ExitCode {
    let mut blit_mode = false;
    let mut library = None;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--blit" if !blit_mode => blit_mode = true,
            a if !a.starts_with('-') && library.is_none() => library = Some(arg),
            _ => {
                eprintln!("{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    let library = library.unwrap_or_else(|| "libhsa-runtime64.so.1".into());
    // Read by hsa_init, unless the caller chose; the process has one
    // thread here. Default: every same-GPU copy on SDMA (see `work`).
    // --blit: SDMA off, so every copy is a blit kernel.
    let (var, value) = if blit_mode {
        blit::SDMA_OFF
    } else {
        work::FORCE_SDMA_SIZE
    };
    if std::env::var_os(var).is_none() {
        std::env::set_var(var, value);
    }
    let dog = Watchdog::start(work::STEP_LIMIT);
    client_main("kfd-rocr-client", &library, true, |session| {
        if blit_mode {
            let done = blit::run(session, &dog);
            dog.step("hsa_shut_down");
            return (done.text, done.ok);
        }
        let report = probe::run(session);
        let done = work::run(session, &dog);
        dog.step("hsa_shut_down");
        (report.text + &done.text, report.ok && done.ok)
    })
}
