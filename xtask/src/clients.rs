//! `cargo xtask clients`: unmodified ROCm clients on the simulator, each
//! run twice — with the suite's C libhsakmt and with ours of the matching
//! generation — and required to print byte-identical stdout, stderr and
//! exit status.
//!
//! A suite is a Debian release with its own rocminfo and ROCr: the host
//! (bookworm), or a rootfs made by [`rootfs`]. The clients are the
//! suite's `rocminfo` and our ROCr program `kfd-rocr-client` (crate
//! `kfd-clients`, built on the host; the suites' glibc is newer, so it
//! runs in each). Which thunk a run really loaded is checked twice, so a
//! silent fallback from ours to the C library (or the reverse) fails
//! instead of passing: from the dynamic loader's own record
//! (`LD_DEBUG=scopes` into a file) for every client, and from the line
//! the ROCr client prints on stderr (`/proc/self/maps`), which is then
//! left out of the comparison.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use kfd_clients::thunk::LINE_PREFIX;

use crate::build::{self, check_args, value};
use crate::conformance::PRESETS;
use crate::rootfs::{self, Place, Spec};
use crate::{abi_named, dist_abi, shell, target_dir};

/// The suites `cargo xtask ci` runs: those whose "ours" exists. Add
/// `trixie` once `cargo xtask dist` builds `rocm-6.2`, and `sid` once it
/// builds the newest generation's `libdtif.so`.
pub const CI_SUITES: &[&str] = &["bookworm"];

/// How the suite's own runtime reaches its thunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reference {
    /// A separate C `libhsakmt.so.1` of the suite.
    SystemLibrary,
    /// Linked into ROCr (ROCm 6.3+): no thunk library is loaded.
    Embedded,
}

/// How our library is put in front of the suite's runtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Door {
    /// `libhsakmt.so.1` first on `LD_LIBRARY_PATH`.
    LibraryPath,
    /// `HSA_ENABLE_DTIF=1`: ROCr's ThunkLoader dlopens `libdtif.so`.
    Dtif,
}

/// One Debian release and the generation of ours it pairs with.
#[derive(Debug)]
struct Suite {
    name: &'static str,
    about: &'static str,
    /// Our build of this generation (`target/dist/<generation>/lib`).
    generation: &'static str,
    /// `None`: the host itself.
    rootfs: Option<&'static Spec>,
    reference: Reference,
    door: Door,
}

/// The file ROCr's ThunkLoader opens with `HSA_ENABLE_DTIF=1`, expected
/// next to the newest generation's `libhsakmt.so.1` in `target/dist`.
const DTIF_FILE: &str = "libdtif.so";

const SUITES: &[Suite] = &[
    Suite {
        name: "bookworm",
        about: "Debian 12 (the host): rocminfo 5.2.3, ROCr 5.2.3, libhsakmt 5.2.3",
        generation: "rocm-5.2",
        rootfs: None,
        reference: Reference::SystemLibrary,
        door: Door::LibraryPath,
    },
    Suite {
        name: "trixie",
        about: "Debian 13 rootfs: rocminfo 6.1.2, ROCr 6.1.2, libhsakmt 6.2.4",
        generation: "rocm-6.2",
        rootfs: Some(&rootfs::TRIXIE),
        reference: Reference::SystemLibrary,
        door: Door::LibraryPath,
    },
    Suite {
        name: "sid",
        about: "Debian sid + experimental rootfs: rocminfo 7.2.4, ROCr 7.2.4 (embedded thunk)",
        generation: "newest",
        rootfs: Some(&rootfs::SID),
        reference: Reference::Embedded,
        door: Door::Dtif,
    },
];

/// A client program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Client {
    /// The suite's `/usr/bin/rocminfo`.
    Rocminfo,
    /// Our `kfd-rocr-client`, staged at `bin/`.
    RocrClient,
}

const CLIENTS: &[(&str, Client)] = &[
    ("rocminfo", Client::Rocminfo),
    ("rocr-client", Client::RocrClient),
];

impl Client {
    fn name(self) -> &'static str {
        CLIENTS
            .iter()
            .find(|(_, c)| *c == self)
            .map(|(n, _)| *n)
            .unwrap_or("?")
    }

    fn argv(self, place: &Place) -> Vec<String> {
        match self {
            Client::Rocminfo => vec!["/usr/bin/rocminfo".into()],
            Client::RocrClient => vec![place.seen("bin/kfd-rocr-client")],
        }
    }
}

/// Lines ROCr 7.2.4's ThunkLoader prints when `libdtif.so` loads and
/// unloads well, and the line rocminfo 7.2.4 prints when it sees
/// `HSA_ENABLE_DTIF` (from the strings of both binaries). They are left
/// out of the comparison; the failure lines ("Cannot load ...", "dlsym
/// failed: ...", "DtifCreate failed!") are not.
const DTIF_LOG_LINES: &[&str] = &[
    "Load libdtif.so successully!",
    "Load all DTIF APIs OK!",
    "DtifCreate OK!",
    "DtifDestroy OK!",
    "Unload libdtif.so successully!",
    "HSA-DTIF environment detected.",
];

const HELP: &str = "cargo xtask clients [flags]

Runs each suite's rocminfo and our ROCr client (kfd-rocr-client) on kfd-sim,
once with the suite's C libhsakmt and once with ours of the matching
generation, on every preset, and requires byte-identical stdout, stderr and
exit status. Writes target/clients/report.md; exits non-zero naming what
differs.

suites:
  bookworm  the host (Debian 12): C libhsakmt 5.2.3 vs ours rocm-5.2
  trixie    Debian 13 rootfs: C libhsakmt 6.2.4 vs ours rocm-6.2
  sid       sid + experimental rootfs: ROCr 7.2.4's embedded thunk vs ours
            (newest) as libdtif.so with HSA_ENABLE_DTIF=1
  Rootfs suites need root; they are made with mmdebstrap under
  target/rootfs/<suite> when missing (cached; a changed package list
  makes them again).

flags:
  --suite A,B        suites to run (default: all)
  --abi GEN          only the suite pairing with GEN (rocm-5.2, rocm-6.2, newest)
  --preset A,B       presets (default: mi210,mi300x,apu,navi31,large64)
  --client A,B       rocminfo, rocr-client (default: both)
  --reference-only   run the suite's C library twice (C vs C: checks that the
                     clients' output is deterministic); ours is not needed
  --timeout SECS     per-run time limit (default 300)";

/// One run of one client.
#[derive(Debug)]
struct Run {
    /// Exit status, stdout and stderr as compared.
    transcript: String,
    status: ExitStatus,
    /// Thunk libraries the dynamic loader loaded.
    loaded: Vec<String>,
    /// What the ROCr client said it has mapped.
    client_says: Option<String>,
    /// The last line it printed (stderr first), for a failure message.
    last_words: String,
}

/// Which thunk a run must have loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Expect {
    /// One C libhsakmt of the suite (not from the stage).
    System,
    /// None at all.
    Embedded,
    /// Exactly this path (ours, in the stage, as the run sees it).
    Ours(String),
}

/// The result of one (suite, preset, client).
#[derive(Debug)]
struct Row {
    suite: &'static str,
    preset: String,
    client: Client,
    reference: String,
    ours: String,
    failure: Option<String>,
    diff: Option<String>,
    /// Client runs made for this row (1 when ours is not available).
    runs: usize,
}

/// Entry point: `args` are the words after `clients`.
pub fn run(args: &[String]) -> Result<(), String> {
    let flags = ["--suite", "--abi", "--preset", "--client", "--timeout"];
    if !check_args(args, &flags, &["--reference-only"], HELP)? {
        return Ok(());
    }
    let reference_only = args.iter().any(|a| a == "--reference-only");
    let suites = pick_suites(value(args, "--suite")?, value(args, "--abi")?)?;
    let presets = pick_presets(value(args, "--preset")?)?;
    let clients = pick_clients(value(args, "--client")?)?;
    let timeout = match value(args, "--timeout")? {
        Some(t) => Duration::from_secs(
            t.parse()
                .map_err(|_| format!("--timeout {t}: not a number of seconds"))?,
        ),
        None => Duration::from_secs(300),
    };

    let t0 = Instant::now();
    let sh = shell()?;
    build::sim(&sh, false)?;
    build::runner(&sh, "kfd-clients", "kfd-rocr-client", false)?;
    let debug = target_dir().join("debug");
    let sim = debug.join("libkfd_sim.so");
    let client = debug.join("kfd-rocr-client");
    let out = target_dir().join("clients");

    let mut rows = Vec::new();
    let mut notes = Vec::new();
    for suite in &suites {
        let ours = if reference_only {
            None
        } else {
            Some(ours_for(suite)?)
        };
        let place = match &suite.rootfs {
            None => Place::Host {
                stage: stage_dir(&out, suite.name)?,
            },
            Some(spec) => {
                let ready = rootfs::ensure(spec)?;
                let how = if ready.built { "made" } else { "cached" };
                let note = format!(
                    "rootfs {}: {how} in {:.1} s",
                    suite.name,
                    ready.elapsed.as_secs_f64()
                );
                println!("{note}");
                notes.push(note);
                Place::Chroot {
                    root: ready.root,
                    stage: stage_dir(&out, suite.name)?,
                }
            }
        };
        let ours_seen = stage(&place, &sim, &client, ours.as_ref())?;
        for preset in &presets {
            for c in &clients {
                let row = run_case(
                    suite,
                    &place,
                    preset,
                    *c,
                    &ours_seen,
                    &out.join(suite.name).join(preset),
                    timeout,
                )?;
                print_row(&row);
                rows.push(row);
            }
        }
    }
    let elapsed = t0.elapsed();
    notes.push(format!(
        "{} client runs in {:.1} s{}",
        rows.iter().map(|r| r.runs).sum::<usize>(),
        elapsed.as_secs_f64(),
        if reference_only {
            " (--reference-only: the C library twice)"
        } else {
            ""
        }
    ));
    println!(
        "clients: {}",
        notes.last().map(String::as_str).unwrap_or("")
    );
    let report = out.join("report.md");
    std::fs::create_dir_all(&out).map_err(|e| e.to_string())?;
    std::fs::write(&report, report_md(&suites, &rows, &notes, reference_only))
        .map_err(|e| format!("{}: {e}", report.display()))?;
    let failed: Vec<&Row> = rows.iter().filter(|r| r.failure.is_some()).collect();
    if failed.is_empty() {
        println!(
            "clients: all {} cases identical ({})",
            rows.len(),
            report.display()
        );
        return Ok(());
    }
    for r in &failed {
        eprintln!(
            "FAIL {} {} {}: {}",
            r.suite,
            r.preset,
            r.client.name(),
            r.failure.as_deref().unwrap_or("")
        );
        if let Some(d) = &r.diff {
            eprintln!("{d}");
        }
    }
    Err(format!(
        "{} of {} client cases failed (see above and {})",
        failed.len(),
        rows.len(),
        report.display()
    ))
}

fn list(s: &str) -> Vec<String> {
    s.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

fn pick_suites(names: Option<&str>, abi: Option<&str>) -> Result<Vec<&'static Suite>, String> {
    let mut picked: Vec<&Suite> = match names {
        None => SUITES.iter().collect(),
        Some(n) => list(n)
            .iter()
            .map(|n| {
                SUITES
                    .iter()
                    .find(|s| s.name == n)
                    .ok_or_else(|| format!("unknown suite `{n}` (bookworm, trixie or sid)"))
            })
            .collect::<Result<_, _>>()?,
    };
    if let Some(g) = abi {
        if !SUITES.iter().any(|s| s.generation == g) {
            return Err(format!(
                "unknown --abi `{g}` (rocm-5.2, rocm-6.2 or newest)"
            ));
        }
        picked.retain(|s| s.generation == g);
    }
    if picked.is_empty() {
        return Err("no suite left to run (check --suite and --abi)".into());
    }
    Ok(picked)
}

/// The presets to run: known kfd-sim preset names only (a topology file
/// of the host would not exist inside a rootfs).
fn pick_presets(names: Option<&str>) -> Result<Vec<String>, String> {
    let known = list(PRESETS);
    let picked = list(names.unwrap_or(PRESETS));
    if picked.is_empty() {
        return Err("--preset needs at least one preset".into());
    }
    match picked.iter().find(|p| !known.contains(p)) {
        Some(p) => Err(format!("unknown preset `{p}` ({PRESETS})")),
        None => Ok(picked),
    }
}

fn pick_clients(names: Option<&str>) -> Result<Vec<Client>, String> {
    match names {
        None => Ok(CLIENTS.iter().map(|(_, c)| *c).collect()),
        Some(n) => list(n)
            .iter()
            .map(|n| {
                CLIENTS
                    .iter()
                    .find(|(name, _)| name == n)
                    .map(|(_, c)| *c)
                    .ok_or_else(|| format!("unknown client `{n}` (rocminfo or rocr-client)"))
            })
            .collect(),
    }
}

/// Our library for `suite`, or why it is not available (reported as a
/// failure of every case of the suite).
fn ours_for(suite: &Suite) -> Result<Result<PathBuf, String>, String> {
    let Some(abi) = abi_named(suite.generation) else {
        return Ok(Err(format!(
            "ours: {} build not available (`cargo xtask dist` does not build that generation yet)",
            suite.generation
        )));
    };
    let so = dist_abi(abi)?;
    Ok(match suite.door {
        Door::LibraryPath => Ok(so),
        Door::Dtif => {
            let dtif = so.with_file_name(DTIF_FILE);
            if dtif.exists() {
                Ok(dtif)
            } else {
                Err(format!(
                    "ours: {} not built by `cargo xtask dist` ({} missing)",
                    DTIF_FILE,
                    dtif.display()
                ))
            }
        }
    })
}

/// A fresh, canonical stage directory for `suite`.
fn stage_dir(out: &Path, suite: &str) -> Result<PathBuf, String> {
    let dir = out.join("stage").join(suite);
    let _ = std::fs::remove_dir_all(&dir);
    for sub in ["lib", "bin", "ours", "out"] {
        std::fs::create_dir_all(dir.join(sub)).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    // /proc/self/maps shows canonical paths; compare with those.
    std::fs::canonicalize(&dir).map_err(|e| format!("{}: {e}", dir.display()))
}

/// Copies the simulator, the ROCr client and ours (when there is one)
/// into the stage; returns ours as the runs see it.
fn stage(
    place: &Place,
    sim: &Path,
    client: &Path,
    ours: Option<&Result<PathBuf, String>>,
) -> Result<Option<Result<String, String>>, String> {
    let copy = |from: &Path, rel: &str| -> Result<(), String> {
        let to = place.stage().join(rel);
        std::fs::copy(from, &to)
            .map(|_| ())
            .map_err(|e| format!("copy {} -> {}: {e}", from.display(), to.display()))
    };
    copy(sim, "lib/libkfd_sim.so")?;
    copy(client, "bin/kfd-rocr-client")?;
    match ours {
        None => Ok(None),
        Some(Err(why)) => Ok(Some(Err(why.clone()))),
        Some(Ok(lib)) => {
            let file = lib
                .file_name()
                .and_then(|f| f.to_str())
                .ok_or_else(|| format!("{}: no file name", lib.display()))?;
            let rel = format!("ours/{file}");
            copy(lib, &rel)?;
            Ok(Some(Ok(place.seen(&rel))))
        }
    }
}

fn expect_reference(suite: &Suite) -> Expect {
    match suite.reference {
        Reference::SystemLibrary => Expect::System,
        Reference::Embedded => Expect::Embedded,
    }
}

#[allow(clippy::too_many_arguments)]
fn run_case(
    suite: &'static Suite,
    place: &Place,
    preset: &str,
    client: Client,
    ours: &Option<Result<String, String>>,
    dir: &Path,
    timeout: Duration,
) -> Result<Row, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let tag = client.name();
    let reference = run_one(
        place,
        preset,
        client,
        &format!("{tag}-reference"),
        None,
        suite.door,
        timeout,
    )?;
    let mut row = Row {
        suite: suite.name,
        preset: preset.into(),
        client,
        reference: summary(&reference),
        ours: "-".into(),
        failure: None,
        diff: None,
        runs: 1,
    };
    let ref_file = dir.join(format!("{tag}.reference.txt"));
    write(&ref_file, &reference.transcript)?;
    let mut problems = Vec::new();
    if let Err(e) = check_thunk(&reference, &expect_reference(suite), place) {
        problems.push(format!("reference: {e}"));
    }
    if !reference.status.success() {
        problems.push(format!(
            "reference run failed ({}: {})",
            summary(&reference),
            reference.last_words
        ));
    }
    let (second, expect, label) = match ours {
        None => {
            let again = run_one(
                place,
                preset,
                client,
                &format!("{tag}-reference2"),
                None,
                suite.door,
                timeout,
            )?;
            (again, expect_reference(suite), "reference (second run)")
        }
        Some(Err(why)) => {
            problems.push(why.clone());
            row.failure = Some(problems.join("; "));
            return Ok(row);
        }
        Some(Ok(lib)) => {
            let dir_seen = Path::new(lib)
                .parent()
                .map(|p| p.display().to_string())
                .unwrap_or_default();
            let r = run_one(
                place,
                preset,
                client,
                &format!("{tag}-ours"),
                Some(&dir_seen),
                suite.door,
                timeout,
            )?;
            (r, Expect::Ours(lib.clone()), "ours")
        }
    };
    row.runs = 2;
    row.ours = if ours.is_some() {
        summary(&second)
    } else {
        format!("C: {}", summary(&second))
    };
    let second_file = dir.join(format!(
        "{tag}.{}.txt",
        if ours.is_some() { "ours" } else { "reference2" }
    ));
    write(&second_file, &second.transcript)?;
    if let Err(e) = check_thunk(&second, &expect, place) {
        problems.push(format!("{label}: {e}"));
    }
    if second.transcript != reference.transcript {
        problems.push(format!("{label} differs from the reference"));
        row.diff = Some(diff_excerpt(&ref_file, &second_file));
    }
    if !problems.is_empty() {
        row.failure = Some(problems.join("; "));
    }
    Ok(row)
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

fn summary(r: &Run) -> String {
    describe(r.status)
}

fn describe(s: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (s.code(), s.signal()) {
        (Some(124), _) => "timed out".into(),
        (Some(c), _) => format!("exit {c}"),
        (None, Some(sig)) => format!("signal {sig}"),
        (None, None) => "?".into(),
    }
}

/// Runs `client` once on `preset`; `ours_dir` (as the run sees it) goes
/// first on the library path, with `HSA_ENABLE_DTIF=1` for the DTIF door.
#[allow(clippy::too_many_arguments)]
fn run_one(
    place: &Place,
    preset: &str,
    client: Client,
    tag: &str,
    ours_dir: Option<&str>,
    door: Door,
    timeout: Duration,
) -> Result<Run, String> {
    let out_rel = format!("out/{preset}-{tag}");
    let out_host = place.stage().join(&out_rel);
    let _ = std::fs::remove_dir_all(&out_host);
    std::fs::create_dir_all(&out_host).map_err(|e| format!("{}: {e}", out_host.display()))?;
    let mut env = vec![
        (
            "PATH".to_string(),
            "/usr/sbin:/usr/bin:/sbin:/bin".to_string(),
        ),
        ("LD_PRELOAD".into(), place.seen("lib/libkfd_sim.so")),
        ("KFD_SIM_TOPOLOGY".into(), preset.into()),
        ("LD_DEBUG".into(), "scopes".into()),
        (
            "LD_DEBUG_OUTPUT".into(),
            format!("{}/ld", place.seen(&out_rel)),
        ),
    ];
    if let Some(dir) = ours_dir {
        env.push(("LD_LIBRARY_PATH".into(), dir.into()));
        if door == Door::Dtif {
            env.push(("HSA_ENABLE_DTIF".into(), "1".into()));
        }
    }
    let output = place
        .command(timeout, &env, &client.argv(place))
        .output()
        .map_err(|e| format!("{} on {preset}: {e}", client.name()))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let (stderr, client_says) = split_thunk_line(&stderr);
    let transcript = format!(
        "status: {}\n--- stdout\n{}--- stderr\n{}",
        describe(output.status),
        drop_dtif_log(&stdout),
        drop_dtif_log(&stderr)
    );
    let mut loaded = Vec::new();
    for e in std::fs::read_dir(&out_host)
        .map_err(|e| format!("{}: {e}", out_host.display()))?
        .flatten()
    {
        let text = std::fs::read_to_string(e.path()).unwrap_or_default();
        for p in loaded_thunks(&text) {
            if !loaded.contains(&p) {
                loaded.push(p);
            }
        }
    }
    let last_words = last_line(&stderr)
        .or_else(|| last_line(&stdout))
        .unwrap_or_default();
    Ok(Run {
        transcript,
        status: output.status,
        loaded,
        client_says,
        last_words,
    })
}

/// The last non-blank line of `text`, without terminal colour codes.
fn last_line(text: &str) -> Option<String> {
    let line = text.lines().rev().find(|l| !l.trim().is_empty())?;
    let mut plain = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            // CSI: ESC [ parameters final-byte
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            plain.push(c);
        }
    }
    Some(plain.trim().to_string())
}

/// Takes the ROCr client's thunk line out of its stderr.
fn split_thunk_line(stderr: &str) -> (String, Option<String>) {
    let mut kept = String::new();
    let mut said = None;
    for line in stderr.split_inclusive('\n') {
        match line.trim_end().strip_prefix(LINE_PREFIX) {
            Some(rest) => said = Some(rest.trim().to_string()),
            None => kept.push_str(line),
        }
    }
    (kept, said)
}

fn drop_dtif_log(text: &str) -> String {
    text.split_inclusive('\n')
        .filter(|l| !DTIF_LOG_LINES.contains(&l.trim()))
        .collect()
}

fn is_thunk(path: &str) -> bool {
    let file = path.rsplit('/').next().unwrap_or("");
    file.starts_with("libhsakmt") || file.starts_with("libdtif")
}

/// Thunk libraries in an `LD_DEBUG=scopes` log (`object=PATH [n]` lines).
fn loaded_thunks(log: &str) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for line in log.lines() {
        let Some((_, rest)) = line.split_once("object=") else {
            continue;
        };
        let path = rest
            .rsplit_once(" [")
            .map(|(p, _)| p)
            .unwrap_or(rest)
            .trim();
        if is_thunk(path) && !v.iter().any(|p| p == path) {
            v.push(path.to_string());
        }
    }
    v
}

/// Checks what `run` loaded against `expect`, by the loader's log and,
/// for the ROCr client, by its own line too.
fn check_thunk(run: &Run, expect: &Expect, place: &Place) -> Result<(), String> {
    let stage = place.seen("");
    let ok = |paths: &[String]| -> bool {
        match expect {
            Expect::System => {
                paths.len() == 1 && is_thunk(&paths[0]) && !paths[0].starts_with(&stage)
            }
            Expect::Embedded => paths.is_empty(),
            Expect::Ours(p) => paths == std::slice::from_ref(p),
        }
    };
    let want = match expect {
        Expect::System => "the suite's C libhsakmt".to_string(),
        Expect::Embedded => "no thunk library (ROCr's embedded one)".to_string(),
        Expect::Ours(p) => p.clone(),
    };
    if !ok(&run.loaded) {
        return Err(format!(
            "the dynamic loader loaded [{}], expected {want}",
            run.loaded.join(", ")
        ));
    }
    if let Some(said) = &run.client_says {
        let paths: Vec<String> = if said == "none" {
            Vec::new()
        } else {
            said.split(' ').map(String::from).collect()
        };
        if !ok(&paths) {
            return Err(format!("the client has mapped [{said}], expected {want}"));
        }
    }
    Ok(())
}

/// The first lines of `diff -u reference other`.
fn diff_excerpt(a: &Path, b: &Path) -> String {
    const LINES: usize = 40;
    match std::process::Command::new("diff")
        .arg("-u")
        .arg(a)
        .arg(b)
        .output()
    {
        Ok(o) => {
            let text = String::from_utf8_lossy(&o.stdout);
            let mut lines: Vec<&str> = text.lines().take(LINES + 1).collect();
            if lines.len() > LINES {
                lines.truncate(LINES);
                lines.push("[...]");
            }
            lines.join("\n")
        }
        Err(e) => format!("(diff: {e})"),
    }
}

fn verdict(r: &Row) -> String {
    match &r.failure {
        None => "PASS".into(),
        Some(f) => format!("FAIL: {f}"),
    }
}

fn print_row(r: &Row) {
    println!(
        "{:<9} {:<8} {:<12} ref {:<10} ours {:<10} {}",
        r.suite,
        r.preset,
        r.client.name(),
        r.reference,
        r.ours,
        verdict(r)
    );
}

fn report_md(suites: &[&Suite], rows: &[Row], notes: &[String], reference_only: bool) -> String {
    let mut s = String::from("# Real clients on kfd-sim\n\n");
    if reference_only {
        s.push_str(
            "`--reference-only`: the \"ours\" column is a second run of the \
             suite's C library.\n\n",
        );
    }
    for suite in suites {
        let _ = writeln!(
            s,
            "- `{}`: {} vs ours `{}`",
            suite.name, suite.about, suite.generation
        );
    }
    s.push_str(
        "\n| suite | preset | client | reference | ours | result |\n|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} |",
            r.suite,
            r.preset,
            r.client.name(),
            r.reference,
            r.ours,
            verdict(r).replace('|', "\\|")
        );
    }
    s.push('\n');
    for n in notes {
        let _ = writeln!(s, "- {n}");
    }
    for r in rows.iter().filter(|r| r.diff.is_some()) {
        let _ = write!(
            s,
            "\n## {} {} {}\n\n```diff\n{}\n```\n",
            r.suite,
            r.preset,
            r.client.name(),
            r.diff.as_deref().unwrap_or("")
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    fn run_with(loaded: &[&str], says: Option<&str>) -> Run {
        Run {
            transcript: String::new(),
            status: ExitStatus::from_raw(0),
            loaded: loaded.iter().map(|s| s.to_string()).collect(),
            client_says: says.map(String::from),
            last_words: String::new(),
        }
    }

    fn place() -> Place {
        Place::Chroot {
            root: PathBuf::from("/r"),
            stage: PathBuf::from("/s"),
        }
    }

    #[test]
    fn loader_log_names_the_thunks() {
        let log = "     12:\tobject=/usr/bin/rocminfo [0]\n\
                   \x20    12:\t scope 0: /usr/bin/rocminfo /lib/x86_64-linux-gnu/libhsakmt.so.1\n\
                   \x20    12:\tobject=/lib/x86_64-linux-gnu/libhsakmt.so.1 [0]\n\
                   \x20    12:\tobject=/opt/kfd-rs/ours/libdtif.so [0]\n\
                   \x20    12:\tobject=/lib/x86_64-linux-gnu/libhsakmt.so.1 [0]\n";
        assert_eq!(
            loaded_thunks(log),
            [
                "/lib/x86_64-linux-gnu/libhsakmt.so.1",
                "/opt/kfd-rs/ours/libdtif.so"
            ]
        );
    }

    #[test]
    fn a_fallback_to_the_c_library_fails() {
        let ours = Expect::Ours("/opt/kfd-rs/ours/libhsakmt.so.1".into());
        let fell_back = run_with(&["/lib/x86_64-linux-gnu/libhsakmt.so.1"], None);
        assert!(check_thunk(&fell_back, &ours, &place()).is_err());
        let good = run_with(
            &["/opt/kfd-rs/ours/libhsakmt.so.1"],
            Some("/opt/kfd-rs/ours/libhsakmt.so.1"),
        );
        assert_eq!(check_thunk(&good, &ours, &place()), Ok(()));
        // The loader says ours, the client's maps say the C library.
        let mixed = run_with(
            &["/opt/kfd-rs/ours/libhsakmt.so.1"],
            Some("/usr/lib/x86_64-linux-gnu/libhsakmt.so.1.0.6"),
        );
        assert!(check_thunk(&mixed, &ours, &place()).is_err());
        // Ours where the reference should be.
        assert!(check_thunk(&good, &Expect::System, &place()).is_err());
        assert!(check_thunk(&fell_back, &Expect::System, &place()).is_ok());
        let none = run_with(&[], Some("none"));
        assert!(check_thunk(&none, &Expect::Embedded, &place()).is_ok());
        assert!(check_thunk(&none, &Expect::System, &place()).is_err());
        assert!(check_thunk(&fell_back, &Expect::Embedded, &place()).is_err());
    }

    #[test]
    fn filters() {
        let (kept, said) =
            split_thunk_line("warn 1\nkfd-rocr-client: thunk: /a/libhsakmt.so.1\nwarn 2\n");
        assert_eq!(kept, "warn 1\nwarn 2\n");
        assert_eq!(said.as_deref(), Some("/a/libhsakmt.so.1"));
        assert_eq!(
            last_line("a\n\x1b[31mROCk module is NOT loaded\x1b[0m\n\n").as_deref(),
            Some("ROCk module is NOT loaded")
        );
        assert_eq!(last_line(" \n"), None);
        assert_eq!(
            drop_dtif_log("x\nLoad libdtif.so successully!\nCannot load libdtif.so, failed:y\n"),
            "x\nCannot load libdtif.so, failed:y\n"
        );
    }

    #[test]
    fn suite_selection() {
        let all = pick_suites(None, None).unwrap();
        assert_eq!(all.len(), SUITES.len());
        let s = pick_suites(None, Some("rocm-6.2")).unwrap();
        assert_eq!(s.iter().map(|s| s.name).collect::<Vec<_>>(), ["trixie"]);
        assert!(pick_suites(Some("bookworm"), Some("newest")).is_err());
        assert!(pick_suites(Some("jessie"), None).is_err());
        assert!(pick_suites(None, Some("rocm-9")).is_err());
        for s in CI_SUITES {
            assert!(SUITES.iter().any(|x| x.name == *s), "{s}");
        }
        assert!(pick_clients(Some("rocminfo,rocr-client")).unwrap().len() == 2);
        assert!(pick_clients(Some("hipinfo")).is_err());
        assert_eq!(pick_presets(None).unwrap().len(), 5);
        assert_eq!(pick_presets(Some("navi31,apu")).unwrap(), ["navi31", "apu"]);
        assert!(pick_presets(Some("/tmp/topo.txt")).is_err());
        assert!(pick_presets(Some(",")).is_err());
    }
}
