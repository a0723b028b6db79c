//! `cargo xtask`: the project's automation.
//!
//! - `cargo xtask ci`: fmt --check, clippy -D warnings on all targets, and
//!   the workspace tests (the README's test command).

use std::process::ExitCode;

use xshell::{cmd, Shell};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("help") | Some("--help") | Some("-h") | None => {
            print_help();
            Ok(())
        }
        Some(other) => Err(format!("unknown xtask command `{other}`; try `cargo xtask help`")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn print_help() {
    println!(
        "cargo xtask <command>\n\n\
         commands:\n  \
         ci           fmt --check, clippy -D warnings (all targets), workspace tests\n"
    );
}

fn ci() -> Result<(), String> {
    let sh = Shell::new().map_err(|e| e.to_string())?;
    let root = project_root();
    sh.change_dir(&root);
    let run = |c: xshell::Cmd<'_>| c.run().map_err(|e| e.to_string());
    run(cmd!(sh, "cargo fmt --all -- --check"))?;
    run(cmd!(sh, "cargo clippy --workspace --all-targets -- -D warnings"))?;
    run(cmd!(sh, "cargo test --workspace"))?;
    Ok(())
}

fn project_root() -> std::path::PathBuf {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    dir.parent().map(|p| p.to_path_buf()).unwrap_or(dir)
}
