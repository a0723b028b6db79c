//! `kfd-rocr-client [LIBRARY]`: the ROCr client of `cargo xtask clients`
//! (see the crate docs). Exit status: 0 when every call succeeded, 1 when
//! one failed (the report says which), 2 when the runtime could not be
//! loaded or initialised.

use std::process::ExitCode;

use kfd_clients::probe;
use kfd_clients::session::client_main;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let library = args
        .next()
        .unwrap_or_else(|| "libhsa-runtime64.so.1".into());
    if args.next().is_some() {
        eprintln!("usage: kfd-rocr-client [LIBRARY]");
        return ExitCode::from(2);
    }
    client_main("kfd-rocr-client", &library, true, |session| {
        let report = probe::run(session);
        (report.text, report.ok)
    })
}
