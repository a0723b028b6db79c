//! `kfd-ctx-client LIBRARY`: the secondary-context client of `cargo xtask
//! clients` (see [`kfd_clients::ctx`]). `LIBRARY` is our newest build
//! (`libhsakmt.so.1` or `libdtif.so`). Prints the transcript; exit status
//! 0 when it is the expected one, 1 when it is not, 2 when the library
//! could not be loaded.

use std::process::ExitCode;

use kfd_clients::ctx;
use kfd_clients::kmt::Thunk;
use kfd_clients::thunk;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [library] = args.as_slice() else {
        eprintln!("usage: kfd-ctx-client LIBRARY");
        return ExitCode::from(2);
    };
    let t = match Thunk::load(library) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("kfd-ctx-client: {e}");
            return ExitCode::from(2);
        }
    };
    thunk::print_mapped();
    let report = ctx::run(&t);
    print!("{}", report.text);
    if report.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
