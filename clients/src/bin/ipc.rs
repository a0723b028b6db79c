//! `kfd-ipc-client [LIBRARY]`: the IPC client of `cargo xtask clients`
//! (see [`kfd_clients::ipc`]). Without arguments it is the exporter and
//! starts itself again with `--import` as the importer. Exit status: 0
//! when every step succeeded, 1 when one failed, 2 when the runtime could
//! not be loaded or initialised.

use std::process::ExitCode;

use kfd_clients::hsa::Runtime;
use kfd_clients::ipc::{self, IMPORTER_FLAG};
use kfd_clients::session::Session;
use kfd_clients::thunk;

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
    let rt = match Runtime::load(&library) {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("kfd-ipc-client: {e}");
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
    let report = if importer {
        ipc::import(&session, std::io::stdin().lock())
    } else {
        match std::fs::read_to_string("/proc/self/maps") {
            Ok(maps) => eprintln!("{}", thunk::line(&thunk::mapped(&maps))),
            Err(e) => eprintln!("{} unknown (/proc/self/maps: {e})", thunk::LINE_PREFIX),
        }
        match std::env::current_exe() {
            Ok(me) => ipc::export(&session, &me),
            Err(e) => {
                println!("cannot find this program to start the importer: {e}");
                return ExitCode::from(1);
            }
        }
    };
    print!("{}", report.text);
    let status = session.shut_down();
    if status == 0 {
        println!("hsa_shut_down: SUCCESS");
    } else {
        println!("hsa_shut_down: {status:#x}");
    }
    if report.ok && status == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
