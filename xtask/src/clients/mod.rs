//! `cargo xtask clients`: unmodified ROCm clients on the simulator, each
//! run twice — with the suite's C libhsakmt and with ours of the matching
//! generation — and required to print byte-identical stdout, stderr and
//! exit status.
//!
//! A suite is a Debian release with its own rocminfo and ROCr: the host
//! (bookworm), or a rootfs made by [`rootfs`]. The clients are the
//! suite's `rocminfo` and our programs of crate `kfd-clients` (built on
//! the host; the suites' glibc is newer, so they run in each): the ROCr
//! client `kfd-rocr-client`, the IPC client `kfd-ipc-client` (sid: ROCr
//! 7.x's IPC goes through the libdrm buffer-object entry points of
//! `libdtif.so`) and the secondary-context client `kfd-ctx-client`, which
//! runs our newest build alone (there is no C library with the context
//! API) and must print its documented transcript. Which thunk a run
//! really loaded is checked twice, so a silent fallback from ours to the
//! C library (or the reverse) fails instead of passing: from the dynamic
//! loader's own record (`LD_DEBUG=scopes` into a file) for every client,
//! and from the line our clients print on stderr (`/proc/self/maps`),
//! which is then left out of the comparison.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::build::{self, check_args, value};
use crate::conformance::PRESETS;
use crate::rootfs::{self, Place, Spec};
use crate::{abi_named, dist_abi, shell, target_dir, Abi};

mod report;
mod run;

use report::{diff_excerpt, print_row, report_md, Row};
pub(crate) use run::describe;
use run::{check_thunk, run_one, summary, Expect};

/// The suites `cargo xtask ci` runs: every suite (each has its "ours";
/// sid's is the newest generation's `libdtif.so`).
pub const CI_SUITES: &[&str] = &["bookworm", "trixie", "sid"];

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
    /// The clients run when `--client` does not say.
    clients: &'static [Client],
    /// Its ROCr makes a GPU agent for gfx1100 (navi31): 6.1.2 and 7.2.4
    /// do, 5.2.3 does not (it skips the work).
    gfx1100_agent: bool,
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
        clients: &[
            Client::Rocminfo,
            Client::Rocr,
            Client::RocrBlit,
            Client::Ctx,
        ],
        gfx1100_agent: false,
    },
    Suite {
        name: "trixie",
        about: "Debian 13 rootfs: rocminfo 6.1.2, ROCr 6.1.2, libhsakmt 6.2.4",
        generation: "rocm-6.2",
        rootfs: Some(&rootfs::TRIXIE),
        reference: Reference::SystemLibrary,
        door: Door::LibraryPath,
        clients: &[Client::Rocminfo, Client::Rocr, Client::RocrBlit],
        gfx1100_agent: true,
    },
    Suite {
        name: "sid",
        about: "Debian sid + experimental rootfs: rocminfo 7.2.4, ROCr 7.2.4 (embedded thunk)",
        generation: "newest",
        rootfs: Some(&rootfs::SID),
        reference: Reference::Embedded,
        door: Door::Dtif,
        clients: &[
            Client::Rocminfo,
            Client::Rocr,
            Client::RocrBlit,
            Client::Ipc,
            Client::Ctx,
        ],
        gfx1100_agent: true,
    },
];

/// A client program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Client {
    /// The suite's `/usr/bin/rocminfo`.
    Rocminfo,
    /// Our `kfd-rocr-client`, staged at `bin/`.
    Rocr,
    /// `kfd-rocr-client --blit`: fills and copies on ROCr's blit kernels
    /// (SDMA off).
    RocrBlit,
    /// Our `kfd-ipc-client` (exporter, and its importer process).
    Ipc,
    /// Our `kfd-ctx-client` on our newest build alone, against its
    /// expected transcript.
    Ctx,
}

const CLIENTS: &[(&str, Client)] = &[
    ("rocminfo", Client::Rocminfo),
    ("rocr-client", Client::Rocr),
    ("rocr-blit", Client::RocrBlit),
    ("ipc-client", Client::Ipc),
    ("ctx-client", Client::Ctx),
];

/// The binaries of crate `kfd-clients` staged at `bin/`.
const CLIENT_BINS: &[&str] = &["kfd-rocr-client", "kfd-ipc-client", "kfd-ctx-client"];

impl Client {
    /// The presets the client runs on in `suite` when `--client` does
    /// not name it (`None`: every preset). The blit kernels run on the
    /// shader machine: mi210 (gfx90a, every suite's ROCr has a GPU agent
    /// for it), apu (gfx902, where ROCr's host copies are blit kernels
    /// with SDMA off too) and, where the suite's ROCr knows gfx1100,
    /// navi31 (its gfx11 blit kernels; small BAR, so host copies are
    /// kernels too).
    fn default_presets(self, suite: &Suite) -> Option<&'static [&'static str]> {
        match self {
            Client::RocrBlit if suite.gfx1100_agent => Some(&["mi210", "apu", "navi31"]),
            Client::RocrBlit => Some(&["mi210", "apu"]),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        CLIENTS
            .iter()
            .find(|(_, c)| *c == self)
            .map(|(n, _)| *n)
            .unwrap_or("?")
    }

    /// The command line; `newest` is our newest library as the run sees
    /// it (the context client's argument).
    fn argv(self, place: &Place, newest: &str) -> Vec<String> {
        match self {
            Client::Rocminfo => vec!["/usr/bin/rocminfo".into()],
            Client::Rocr => vec![place.seen("bin/kfd-rocr-client")],
            Client::RocrBlit => vec![place.seen("bin/kfd-rocr-client"), "--blit".into()],
            Client::Ipc => vec![place.seen("bin/kfd-ipc-client")],
            Client::Ctx => vec![place.seen("bin/kfd-ctx-client"), newest.into()],
        }
    }
}

const HELP: &str = "cargo xtask clients [flags]

Runs each suite's rocminfo and our ROCr clients (kfd-rocr-client, its
--blit mode, and on sid kfd-ipc-client) on kfd-sim, once with the suite's
C libhsakmt and once with ours of the matching generation, on every preset
(rocr-blit: mi210 and apu, and navi31 on trixie and sid), and requires byte-identical stdout, stderr and
exit status. kfd-ctx-client (bookworm and
sid) runs our newest build's context API alone and must print its expected
transcript. Writes target/clients/report.md; exits non-zero naming what
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
  --client A,B       rocminfo, rocr-client, rocr-blit, ipc-client, ctx-client
                     (default: each suite's own list; rocr-blit, ROCr's fill
                     and copy kernels with SDMA off, only on mi210 and apu
                     (and navi31 on trixie and sid)
                     unless named here)
  --reference-only   run the suite's C library twice (C vs C: checks that the
                     clients' output is deterministic); ours is not needed
                     and ctx-client (no C library) is skipped
  --timeout SECS     per-run time limit (default 300)";

/// Entry point: `args` are the words after `clients`.
pub fn run(args: &[String]) -> Result<(), String> {
    let flags = ["--suite", "--abi", "--preset", "--client", "--timeout"];
    if !check_args(args, &flags, &["--reference-only"], HELP)? {
        return Ok(());
    }
    let reference_only = args.iter().any(|a| a == "--reference-only");
    let suites = pick_suites(value(args, "--suite")?, value(args, "--abi")?)?;
    let presets = pick_presets(value(args, "--preset")?)?;
    let chosen = pick_clients(value(args, "--client")?)?;
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
    for bin in CLIENT_BINS {
        build::runner(&sh, "kfd-clients", bin, false)?;
    }
    let debug = target_dir().join("debug");
    let sim = debug.join("libkfd_sim.so");
    let out = target_dir().join("clients");

    let mut rows = Vec::new();
    let mut notes = Vec::new();
    let mut dists = Dists::default();
    for suite in &suites {
        // Transcripts of an earlier run would mix with this one's.
        let _ = std::fs::remove_dir_all(out.join(suite.name));
        let clients: Vec<Client> = chosen
            .clone()
            .unwrap_or_else(|| suite.clients.to_vec())
            .into_iter()
            .filter(|c| !(reference_only && *c == Client::Ctx))
            .collect();
        let ours = if reference_only {
            None
        } else {
            Some(ours_for(suite, &mut dists)?)
        };
        let newest = if clients.contains(&Client::Ctx) {
            Some(newest_for(suite, ours.as_ref(), &mut dists)?)
        } else {
            None
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
        let ours_seen = stage(&place, &sim, &debug, ours.as_ref())?;
        let newest_seen = match &newest {
            Some(lib) => Some(stage_newest(&place, lib)?),
            None => None,
        };
        for preset in &presets {
            for c in &clients {
                let elsewhere = c
                    .default_presets(suite)
                    .is_some_and(|p| !p.contains(&preset.as_str()));
                if chosen.is_none() && elsewhere {
                    continue;
                }
                let dir = out.join(suite.name).join(preset);
                let row = match (c, &newest_seen) {
                    (Client::Ctx, Some(lib)) => {
                        run_ctx_case(suite, &place, preset, lib, &dir, timeout)?
                    }
                    _ => run_case(suite, &place, preset, *c, &ours_seen, &dir, timeout)?,
                };
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

/// The clients `--client` names (`None`: each suite's own list).
fn pick_clients(names: Option<&str>) -> Result<Option<Vec<Client>>, String> {
    let Some(n) = names else {
        return Ok(None);
    };
    let picked: Vec<Client> = list(n)
        .iter()
        .map(|n| {
            CLIENTS
                .iter()
                .find(|(name, _)| name == n)
                .map(|(_, c)| *c)
                .ok_or_else(|| {
                    format!(
                        "unknown client `{n}` (rocminfo, rocr-client, rocr-blit, ipc-client or \
                         ctx-client)"
                    )
                })
        })
        .collect::<Result<_, _>>()?;
    if picked.is_empty() {
        return Err("--client needs at least one client".into());
    }
    Ok(Some(picked))
}

/// The `cargo xtask dist` builds made in this run, each made once: the
/// generations' feature sets alternate in one target directory, so every
/// [`dist_abi`] recompiles hsakmt (8–19 s), and bookworm's context client
/// and the sid suite both want the newest one.
#[derive(Debug, Default)]
struct Dists(Vec<(&'static str, PathBuf)>);

impl Dists {
    /// `abi`'s `libhsakmt.so.1` in `target/dist` (with `libdtif.so` next
    /// to the newest one), built on the first call.
    fn get(&mut self, abi: &'static Abi) -> Result<PathBuf, String> {
        if let Some((_, so)) = self.0.iter().find(|(name, _)| *name == abi.name) {
            return Ok(so.clone());
        }
        let so = dist_abi(abi)?;
        self.0.push((abi.name, so.clone()));
        Ok(so)
    }
}

/// Our library for `suite`, or why it is not available (reported as a
/// failure of every case of the suite).
fn ours_for(suite: &Suite, dists: &mut Dists) -> Result<Result<PathBuf, String>, String> {
    let Some(abi) = abi_named(suite.generation) else {
        return Ok(Err(format!(
            "ours: {} build not available (`cargo xtask dist` does not build that generation yet)",
            suite.generation
        )));
    };
    let so = dists.get(abi)?;
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

/// Our newest build for the context client: the suite's own library
/// when that is the newest generation's (sid: `libdtif.so`), else the
/// newest `libhsakmt.so.1`.
fn newest_for(
    suite: &Suite,
    ours: Option<&Result<PathBuf, String>>,
    dists: &mut Dists,
) -> Result<PathBuf, String> {
    match ours {
        Some(Ok(lib)) if suite.generation == "newest" => Ok(lib.clone()),
        _ => {
            let abi = abi_named("newest").ok_or("no newest generation")?;
            dists.get(abi)
        }
    }
}

/// A fresh, canonical stage directory for `suite`.
fn stage_dir(out: &Path, suite: &str) -> Result<PathBuf, String> {
    let dir = out.join("stage").join(suite);
    let _ = std::fs::remove_dir_all(&dir);
    for sub in ["lib", "bin", "ours", "newest", "out"] {
        std::fs::create_dir_all(dir.join(sub)).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    // /proc/self/maps shows canonical paths; compare with those.
    std::fs::canonicalize(&dir).map_err(|e| format!("{}: {e}", dir.display()))
}

fn copy_to_stage(place: &Place, from: &Path, rel: &str) -> Result<(), String> {
    let to = place.stage().join(rel);
    std::fs::copy(from, &to)
        .map(|_| ())
        .map_err(|e| format!("copy {} -> {}: {e}", from.display(), to.display()))
}

/// Copies the simulator, our client programs (from `bins`) and ours
/// (when there is one) into the stage; returns ours as the runs see it.
fn stage(
    place: &Place,
    sim: &Path,
    bins: &Path,
    ours: Option<&Result<PathBuf, String>>,
) -> Result<Option<Result<String, String>>, String> {
    let copy = |from: &Path, rel: &str| copy_to_stage(place, from, rel);
    copy(sim, "lib/libkfd_sim.so")?;
    for bin in CLIENT_BINS {
        copy(&bins.join(bin), &format!("bin/{bin}"))?;
    }
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

/// Copies our newest library into the stage for the context client;
/// returns it as the runs see it.
fn stage_newest(place: &Place, lib: &Path) -> Result<String, String> {
    let file = lib
        .file_name()
        .and_then(|f| f.to_str())
        .ok_or_else(|| format!("{}: no file name", lib.display()))?;
    let rel = format!("newest/{file}");
    copy_to_stage(place, lib, &rel)?;
    Ok(place.seen(&rel))
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
    let argv = client.argv(place, "");
    let reference = run_one(
        place,
        preset,
        client,
        &argv,
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
                &argv,
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
                &argv,
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

/// The context client on our newest library `lib` (as the run sees it):
/// one run, whose transcript must be exit 0 with
/// [`kfd_clients::ctx::EXPECTED`] on stdout and nothing else on stderr.
fn run_ctx_case(
    suite: &'static Suite,
    place: &Place,
    preset: &str,
    lib: &str,
    dir: &Path,
    timeout: Duration,
) -> Result<Row, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let client = Client::Ctx;
    let tag = client.name();
    let run = run_one(
        place,
        preset,
        client,
        &client.argv(place, lib),
        &format!("{tag}-ours"),
        None,
        Door::LibraryPath,
        timeout,
    )?;
    let expected = format!(
        "status: exit 0\n--- stdout\n{}--- stderr\n",
        kfd_clients::ctx::EXPECTED
    );
    let exp_file = dir.join(format!("{tag}.expected.txt"));
    let ours_file = dir.join(format!("{tag}.ours.txt"));
    write(&exp_file, &expected)?;
    write(&ours_file, &run.transcript)?;
    let mut row = Row {
        suite: suite.name,
        preset: preset.into(),
        client,
        reference: "expected".into(),
        ours: summary(&run),
        failure: None,
        diff: None,
        runs: 1,
    };
    let mut problems = Vec::new();
    if let Err(e) = check_thunk(&run, &Expect::Ours(lib.into()), place) {
        problems.push(format!("ours: {e}"));
    }
    if run.transcript != expected {
        problems.push("ours differs from the expected transcript".into());
        row.diff = Some(diff_excerpt(&exp_file, &ours_file));
    }
    if !problems.is_empty() {
        row.failure = Some(problems.join("; "));
    }
    Ok(row)
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(
            pick_clients(Some("rocminfo,ipc-client,ctx-client")).unwrap(),
            Some(vec![Client::Rocminfo, Client::Ipc, Client::Ctx])
        );
        assert_eq!(pick_clients(None).unwrap(), None);
        assert!(pick_clients(Some("hipinfo")).is_err());
        assert!(pick_clients(Some(",")).is_err());
        // Every client runs in some suite by default; the context client
        // only where the newest build is ours or on the host.
        for (_, c) in CLIENTS {
            assert!(SUITES.iter().any(|s| s.clients.contains(c)), "{c:?}");
        }
        let ctx: Vec<&str> = SUITES
            .iter()
            .filter(|s| s.clients.contains(&Client::Ctx))
            .map(|s| s.name)
            .collect();
        assert_eq!(ctx, ["bookworm", "sid"]);
        assert_eq!(pick_presets(None).unwrap().len(), 5);
        assert_eq!(pick_presets(Some("navi31,apu")).unwrap(), ["navi31", "apu"]);
        assert!(pick_presets(Some("/tmp/topo.txt")).is_err());
        assert!(pick_presets(Some(",")).is_err());
    }
}
