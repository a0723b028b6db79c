//! `kfd-ipc-client [LIBRARY]`: the IPC client of `cargo xtask clients`
//! (see [`kfd_clients::ipc`]). Without arguments it is the exporter and
//! starts itself again with `--import` as the importer. Exit status: 0
//! when every step succeeded, 1 when one failed, 2 when the runtime could
//! not be loaded or initialised.

use std::process::ExitCode;

use kfd_clients::ipc::{self, IMPORTER_FLAG};
use kfd_clients::session::client_main;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let importer = args.first().map(String::as_str) == Some(IMPORTER_FLAG);
    let rest = &args[usize::from(importer)..];
    if rest.len() > 1 {
        eprintln!("usage: kfd-ipc-client [{IMPORTER_FLAG}] [LIBRARY]");
        return ExitCode::from(2);
    }
    let library = rest
        .first()
        .cloned()
        .unwrap_or_else(|| "libhsa-runtime64.so.1".into());
    // The exporter's thunk line is the one checked; the importer's stderr
    // is its parent's business.
    client_main("kfd-ipc-client", &library, !importer, |session| {
        let report = if importer {
            ipc::import(session, std::io::stdin().lock())
        } else {
            match std::env::current_exe() {
                Ok(me) => ipc::export(session, &me),
                Err(e) => {
                    return (
                        format!("cannot find this program to start the importer: {e}\n"),
                        false,
                    )
                }
            }
        };
        (report.text, report.ok)
    })
}
