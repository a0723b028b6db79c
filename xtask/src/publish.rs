//! What `cargo xtask ci` checks about the crates as others get them: the
//! rustdoc build with `-D warnings`, the declared `rust-version` against
//! the dependencies, `cargo package` (with verification) of every
//! published crate, every example run on the simulator, and the packaged
//! crates built and their examples run outside the workspace.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use xshell::{cmd, Shell};

use crate::{project_root, target_dir};

/// One example CI runs: package, example name, arguments (`{out}` is
/// replaced by the directory the run's output goes to). Every file under a member's
/// `examples/` must be listed, and every published crate needs one.
const EXAMPLES: &[(&str, &str, &[&str])] = &[
    ("kfd-sys", "version", &[]),
    ("kfd-sync", "publish", &[]),
    ("kfd-gpu", "fill", &[]),
    ("kfd-gpu", "coverage", &[]),
    ("hsakmt-sys", "generations", &[]),
    ("kfd-topology", "lsgpu", &["--sim", "mi300x"]),
    ("kfd-fmm", "vram", &[]),
    ("kfd-event", "signal", &[]),
    ("kfd-codeobj", "inspect", &[]),
    ("kfd-queue", "aql", &[]),
    ("kfd-queue", "barrier", &[]),
    ("kfd-queue", "sdma_copy", &[]),
    ("kfd-debug", "runtime", &[]),
    ("kfd-perf", "counters", &[]),
    ("kfd-context", "tenants", &[]),
    ("kfd-context", "vector_add", &[]),
    ("hsakmt", "c_abi", &[]),
    (
        "kfd-sim",
        "run",
        &[
            "--preset",
            "mi210",
            "--trace",
            "{out}/rocminfo.trace",
            "--",
            "rocminfo",
        ],
    ),
];

/// Longest an example may run.
const EXAMPLE_TIMEOUT: Duration = Duration::from_secs(120);

/// A workspace member, read from its manifest.
#[derive(Debug)]
struct Member {
    /// Package name.
    name: String,
    /// Its directory.
    dir: PathBuf,
    /// `false` when the manifest says `publish = false`.
    publish: bool,
}

/// The members listed in the root manifest's `[workspace] members`.
fn members() -> Result<Vec<Member>, String> {
    let root = project_root();
    let text = read(&root.join("Cargo.toml"))?;
    let list = text
        .split_once("members = [")
        .and_then(|(_, rest)| rest.split_once(']'))
        .map(|(list, _)| list)
        .ok_or("Cargo.toml: no `members = [...]` list")?;
    list.split(',')
        .map(|m| m.trim().trim_matches('"'))
        .filter(|m| !m.is_empty())
        .map(|m| {
            let dir = root.join(m);
            let manifest = read(&dir.join("Cargo.toml"))?;
            let name = manifest
                .lines()
                .find_map(|l| l.strip_prefix("name = \""))
                .and_then(|l| l.strip_suffix('"'))
                .ok_or(format!("{m}/Cargo.toml: no package name"))?
                .to_string();
            let publish = !manifest.lines().any(|l| l.trim() == "publish = false");
            Ok(Member { name, dir, publish })
        })
        .collect()
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// `RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps`.
pub fn docs(sh: &Shell) -> Result<(), String> {
    let _flags = sh.push_env("RUSTDOCFLAGS", "-D warnings");
    cmd!(sh, "cargo doc --workspace --no-deps")
        .run()
        .map_err(|e| e.to_string())
}

/// A `major.minor[.patch]` version as comparable numbers.
fn version(v: &str) -> Option<(u32, u32, u32)> {
    let mut it = v.split('.').map(|p| p.parse::<u32>().ok());
    Some((it.next()??, it.next()??, it.next().flatten().unwrap_or(0)))
}

/// Checks the workspace's `rust-version` against every normal and build
/// dependency of the published crates: none may declare a newer one.
/// (clippy's `incompatible_msrv`, in the clippy run, checks our own use of
/// std APIs; language features would need that toolchain itself.)
pub fn msrv(sh: &Shell) -> Result<(), String> {
    let root = read(&project_root().join("Cargo.toml"))?;
    let ours = root
        .lines()
        .find_map(|l| l.strip_prefix("rust-version = \""))
        .and_then(|l| l.strip_suffix('"'))
        .ok_or("Cargo.toml: no workspace rust-version")?;
    let ours_v = version(ours).ok_or(format!("rust-version {ours:?} is not a version"))?;
    let mut args = vec![
        "tree".to_string(),
        "-e".into(),
        "normal,build".into(),
        "--prefix".into(),
        "none".into(),
        "-f".into(),
        "{p}".into(),
    ];
    for m in members()?.iter().filter(|m| m.publish) {
        args.extend(["-p".to_string(), m.name.clone()]);
    }
    let tree = cmd!(sh, "cargo {args...}")
        .quiet()
        .read()
        .map_err(|e| e.to_string())?;
    let metadata = cmd!(sh, "cargo metadata --format-version 1")
        .quiet()
        .read()
        .map_err(|e| e.to_string())?;
    let mut deps: Vec<(&str, &str)> = tree
        .lines()
        // Registry packages: `name vX.Y.Z`, maybe `(proc-macro)` or `(*)`.
        .filter(|l| !l.contains(" (/"))
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            Some((w.next()?, w.next()?.strip_prefix('v')?))
        })
        .collect();
    deps.sort_unstable();
    deps.dedup();
    let mut newest: Option<(&str, &str, (u32, u32, u32))> = None;
    let mut too_new = Vec::new();
    for (name, ver) in &deps {
        let key = format!("{{\"name\":\"{name}\",\"version\":\"{ver}\",");
        let at = metadata
            .find(&key)
            .ok_or(format!("cargo metadata has no package {name} {ver}"))?;
        // Each package object has a `rust_version` key; dependency entries
        // inside it have none, so the next one is this package's.
        let rest = &metadata[at..];
        let value = rest
            .find("\"rust_version\":")
            .map(|i| &rest[i + "\"rust_version\":".len()..])
            .ok_or(format!("cargo metadata: no rust_version for {name}"))?;
        let Some(declared) = value.strip_prefix('"').and_then(|v| v.split('"').next()) else {
            continue; // null: none declared
        };
        let v = version(declared).ok_or(format!("{name} {ver}: rust-version {declared:?}"))?;
        if v > ours_v {
            too_new.push(format!("{name} {ver} needs {declared}"));
        }
        match newest {
            Some((_, _, n)) if n >= v => {}
            _ => newest = Some((name, declared, v)),
        }
    }
    if !too_new.is_empty() {
        return Err(format!(
            "rust-version {ours} is too old for dependencies of the published crates: {}",
            too_new.join(", ")
        ));
    }
    println!(
        "msrv: rust-version {ours}; {} registry dependencies of the published crates, the newest requirement {}",
        deps.len(),
        newest
            .map(|(n, d, _)| format!("{d} ({n})"))
            .unwrap_or_else(|| "none".into())
    );
    Ok(())
}

/// The target directory of the packaging steps. Not the workspace's:
/// kfd-sim and hsakmt are cdylib crates, whose rlibs cargo names without
/// a hash (`deps/libhsakmt.rlib`), so the verification build of a packaged
/// copy would overwrite the workspace's file unnoticed, and the next
/// workspace build would link the copy (two `kfd_context`s in one binary:
/// a doctest that set the driver on one opened the real `/dev/kfd` with
/// the other).
fn packaging_dir() -> PathBuf {
    target_dir().join("packaging")
}

/// The `.crate` files [`package`] writes.
fn crates_dir() -> PathBuf {
    packaging_dir().join("package")
}

/// `cargo package --workspace` of the published crates: packages each and
/// builds it from its `.crate` against the others (a temporary registry),
/// in [`packaging_dir`].
pub fn package() -> Result<(), String> {
    let mut args = vec!["package", "--workspace", "--allow-dirty"];
    let members = members()?;
    forget_verified_sources(&members);
    // Cargo takes a registry crate of a given name and version to never
    // change, so the verification builds of earlier runs would be reused
    // for changed sources: forget them.
    let fingerprints = packaging_dir().join("debug").join(".fingerprint");
    for e in std::fs::read_dir(&fingerprints)
        .into_iter()
        .flatten()
        .flatten()
    {
        let name = e.file_name().to_string_lossy().into_owned();
        let ours = members.iter().filter(|m| m.publish).any(|m| {
            name.strip_prefix(&m.name)
                .and_then(|r| r.strip_prefix('-'))
                .is_some_and(|h| h.chars().all(|c| c.is_ascii_hexdigit()))
        });
        if ours {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
    // Earlier packages and their temporary registry: cargo keeps a
    // `.crate` of the same name and version instead of packaging again.
    let out = crates_dir();
    for e in std::fs::read_dir(&out).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.ends_with(".crate") || name == "tmp-registry" || name == "tmp-crate" {
            let p = e.path();
            let _ = std::fs::remove_dir_all(&p).or_else(|_| std::fs::remove_file(&p));
        }
    }
    for m in members.iter().filter(|m| !m.publish) {
        args.extend(["--exclude", &m.name]);
    }
    let start = Instant::now();
    let mut child = Command::new("cargo")
        .args(&args)
        .env("CARGO_TARGET_DIR", packaging_dir())
        .current_dir(project_root())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cargo package: {e}"))?;
    // The test targets are left out of the packages on purpose (see the
    // `include` lists); cargo says so once per test file.
    let mut left_out = 0;
    let stderr = child.stderr.take().ok_or("cargo package: no stderr")?;
    for line in BufReader::new(stderr).lines() {
        let line = line.map_err(|e| e.to_string())?;
        if line.starts_with("warning: ignoring test `") {
            left_out += 1;
        } else {
            eprintln!("{line}");
        }
    }
    let status = child.wait().map_err(|e| e.to_string())?;
    if !status.success() {
        return Err(format!("cargo package failed ({status})"));
    }
    println!(
        "package: {} crates packaged and verified in {:.0} s into {} ({left_out} test targets stay in the repository)",
        members.iter().filter(|m| m.publish).count(),
        start.elapsed().as_secs_f64(),
        crates_dir().display()
    );
    Ok(())
}

/// `cargo publish --workspace` of the published crates: cargo packages
/// and uploads them in dependency order, waiting for each to reach the
/// index before the next. With `--dry-run` nothing is uploaded (and the
/// packages are not built again: [`package`] verified them); either way
/// the order cargo used must be the one docs/publishing.md states, so the
/// document stays true. A real run needs `CARGO_REGISTRY_TOKEN` (the
/// release job takes it from the repository's secrets).
pub fn publish(args: &[String]) -> Result<(), String> {
    let dry_run = match args {
        [] => false,
        [a] if a == "--dry-run" => true,
        _ => return Err("usage: cargo xtask publish [--dry-run]".into()),
    };
    if !dry_run && std::env::var_os("CARGO_REGISTRY_TOKEN").is_none() {
        return Err("CARGO_REGISTRY_TOKEN is not set (or pass --dry-run)".into());
    }
    let members = members()?;
    let mut cmd = Command::new("cargo");
    cmd.args(["publish", "--workspace", "--locked"]);
    if dry_run {
        cmd.args(["--dry-run", "--no-verify", "--allow-dirty"]);
    }
    for m in members.iter().filter(|m| !m.publish) {
        cmd.args(["--exclude", &m.name]);
    }
    let mut child = cmd
        .env("CARGO_TARGET_DIR", packaging_dir())
        .current_dir(project_root())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cargo publish: {e}"))?;
    let mut order = Vec::new();
    let stderr = child.stderr.take().ok_or("cargo publish: no stderr")?;
    for line in BufReader::new(stderr).lines() {
        let line = line.map_err(|e| e.to_string())?;
        if let Some(name) = uploaded(&line) {
            order.push(name.to_string());
        }
        if !line.starts_with("warning: ignoring test `")
            && line != "warning: aborting upload due to dry run"
        {
            eprintln!("{line}");
        }
    }
    let status = child.wait().map_err(|e| e.to_string())?;
    if !status.success() {
        return Err(format!("cargo publish failed ({status})"));
    }
    println!(
        "publish{}: {}",
        if dry_run { " (dry run)" } else { "" },
        order.join(", ")
    );
    let documented = documented_order(&read(&project_root().join("docs/publishing.md"))?)?;
    if documented != order {
        return Err(format!(
            "docs/publishing.md gives the publishing order {}, cargo publishes in {}",
            documented.join(", "),
            order.join(", ")
        ));
    }
    Ok(())
}

/// The crate of a `cargo publish` line `Uploading <name> v<version> (...)`.
fn uploaded(line: &str) -> Option<&str> {
    line.trim_start()
        .strip_prefix("Uploading ")?
        .split_whitespace()
        .next()
}

/// The crate list of docs/publishing.md's "Publishing order (...): a, b,
/// c." sentence.
fn documented_order(doc: &str) -> Result<Vec<String>, String> {
    let text = doc.replace('\n', " ");
    let list = text
        .split_once("Publishing order")
        .and_then(|(_, rest)| rest.split_once("):"))
        .and_then(|(_, rest)| rest.split_once('.'))
        .map(|(list, _)| list)
        .ok_or("docs/publishing.md: no \"Publishing order (...): a, b.\" sentence")?;
    Ok(list
        .split(',')
        .map(|c| c.trim().to_string())
        .filter(|c| !c.is_empty())
        .collect())
}

/// Removes the sources cargo extracted from earlier runs' temporary
/// registries (`$CARGO_HOME/registry/src/-<hash>/<crate>-<version>`):
/// cargo reuses them by name and version, so a crate changed since then
/// (same version) would be verified against the old copy of its
/// dependencies.
fn forget_verified_sources(members: &[Member]) {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")));
    let Some(src) = home.map(|h| h.join("registry").join("src")) else {
        return;
    };
    let Ok(registries) = std::fs::read_dir(&src) else {
        return;
    };
    for r in registries.flatten() {
        // Only the temporary registries of `cargo package` are named by a
        // bare hash; crates.io's are `index.crates.io-<hash>`.
        if !r.file_name().to_string_lossy().starts_with('-') {
            continue;
        }
        for m in members.iter().filter(|m| m.publish) {
            let prefix = format!("{}-", m.name);
            for e in std::fs::read_dir(r.path()).into_iter().flatten().flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                let rest = name.strip_prefix(&prefix).unwrap_or_default();
                if rest.starts_with(|c: char| c.is_ascii_digit()) {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
    }
}

/// Checks that [`EXAMPLES`] lists exactly the example files and gives
/// every published crate one, builds them and runs each on the simulator.
pub fn examples(sh: &Shell) -> Result<(), String> {
    let members = members()?;
    let mut problems = Vec::new();
    for m in &members {
        let files = std::fs::read_dir(m.dir.join("examples"))
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "rs"));
        for f in files {
            let stem = f.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
            if !EXAMPLES.iter().any(|(p, e, _)| *p == m.name && *e == stem) {
                problems.push(format!("{} is not in xtask's EXAMPLES", f.display()));
            }
        }
        if m.publish && !EXAMPLES.iter().any(|(p, _, _)| *p == m.name) {
            problems.push(format!("published crate {} has no example", m.name));
        }
    }
    if !problems.is_empty() {
        return Err(problems.join("; "));
    }
    cmd!(sh, "cargo build --workspace --examples")
        .run()
        .map_err(|e| e.to_string())?;
    let out_dir = target_dir().join("examples");
    std::fs::create_dir_all(&out_dir).map_err(|e| format!("{}: {e}", out_dir.display()))?;
    for (package, name, args) in EXAMPLES {
        let exe = target_dir().join("debug/examples").join(name);
        run_example(&format!("example {package}/{name}"), &exe, args, &out_dir)?;
    }
    println!("examples: all {} ran on the simulator", EXAMPLES.len());
    Ok(())
}

/// Runs one example binary with `args` (`{out}` replaced by `out_dir`), its output
/// in `out_dir/<name>.out`; prints an excerpt, or all of it on failure.
fn run_example(label: &str, exe: &Path, args: &[&str], out_dir: &Path) -> Result<(), String> {
    let out = out_dir.display().to_string();
    let args: Vec<String> = args.iter().map(|a| a.replace("{out}", &out)).collect();
    let name = exe
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("example");
    let log = out_dir.join(format!("{name}.out"));
    let label = [label.to_string()]
        .into_iter()
        .chain(args.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ");
    let start = Instant::now();
    let result = run_logged(exe, &args, &log);
    let output = read(&log).unwrap_or_default();
    match result {
        Ok(()) => {
            println!("{label}: ok in {:.2} s", start.elapsed().as_secs_f64());
            for line in excerpt(&output, 3, 3) {
                println!("    {line}");
            }
            Ok(())
        }
        Err(e) => {
            println!("{label}: FAILED: {e}");
            print!("{output}");
            Err(format!("{label} failed: {e}"))
        }
    }
}

/// The crates taken alone: a fresh project outside this workspace
/// (`<target>/standalone`, its own workspace and target directory) gets
/// the published crates from their unpacked `.crate` files — each named
/// by version as from crates.io, `[patch.crates-io]` pointing at the
/// unpacked sources — and every packaged example as a binary; it builds
/// and runs each. Needs [`package`] first (its `.crate` files in
/// [`crates_dir`]).
pub fn standalone(sh: &Shell) -> Result<(), String> {
    let target = target_dir();
    let dir = target.join("standalone");
    let crates = dir.join("crates");
    let bins = dir.join("src/bin");
    for d in [&crates, &dir.join("src")] {
        let _ = std::fs::remove_dir_all(d);
    }
    for d in [&crates, &bins] {
        std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    let version = read(&project_root().join("Cargo.toml"))?
        .lines()
        .find_map(|l| l.strip_prefix("version = \""))
        .and_then(|l| l.strip_suffix('"'))
        .ok_or("Cargo.toml: no workspace version")?
        .to_string();
    let mut deps = String::new();
    let mut patch = String::new();
    let mut programs = Vec::new();
    for m in members()?.iter().filter(|m| m.publish) {
        let stem = format!("{}-{version}", m.name);
        let file = crates_dir().join(format!("{stem}.crate"));
        let (file_s, crates_s) = (file.display().to_string(), crates.display().to_string());
        // `-m`: cargo package stamps every file with one fixed old mtime,
        // so restored times would leave cargo's mtime fingerprints fresh
        // and link last run's build of a changed crate.
        cmd!(sh, "tar -m -xzf {file_s} -C {crates_s}")
            .quiet()
            .run()
            .map_err(|e| format!("{e} (run cargo xtask package first)"))?;
        deps.push_str(&format!("{} = \"={version}\"\n", m.name));
        patch.push_str(&format!("{} = {{ path = \"crates/{stem}\" }}\n", m.name));
        for (package, name, args) in EXAMPLES.iter().filter(|(p, _, _)| *p == m.name) {
            let src = crates
                .join(&stem)
                .join("examples")
                .join(format!("{name}.rs"));
            if src.exists() {
                std::fs::copy(&src, bins.join(format!("{name}.rs")))
                    .map_err(|e| format!("{}: {e}", src.display()))?;
                programs.push((*package, *name, *args));
            }
        }
    }
    let manifest = format!(
        "# Written by `cargo xtask ci` (xtask/src/publish.rs): the published\n\
         # crates as a user gets them, outside the kfd-rs workspace.\n\
         [package]\nname = \"standalone\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
         [workspace]\n\n[dependencies]\n{deps}\n[patch.crates-io]\n{patch}"
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).map_err(|e| e.to_string())?;
    // The workspace's lock pins the registry dependencies to the versions
    // CI tests; cargo drops what the project does not use.
    std::fs::copy(project_root().join("Cargo.lock"), dir.join("Cargo.lock"))
        .map_err(|e| format!("Cargo.lock: {e}"))?;
    let start = Instant::now();
    {
        let _dir = sh.push_dir(&dir);
        let _target = sh.push_env("CARGO_TARGET_DIR", dir.join("target"));
        cmd!(sh, "cargo build --bins")
            .run()
            .map_err(|e| e.to_string())?;
    }
    println!(
        "standalone: {} packaged examples built outside the workspace in {:.0} s",
        programs.len(),
        start.elapsed().as_secs_f64()
    );
    let out_dir = dir.join("out");
    std::fs::create_dir_all(&out_dir).map_err(|e| format!("{}: {e}", out_dir.display()))?;
    for (package, name, args) in &programs {
        let exe = dir.join("target/debug").join(name);
        run_example(
            &format!("standalone {package}/{name}"),
            &exe,
            args,
            &out_dir,
        )?;
    }
    Ok(())
}

/// Runs `exe args` with stdout and stderr in `log`, for at most
/// [`EXAMPLE_TIMEOUT`].
fn run_logged(exe: &Path, args: &[String], log: &Path) -> Result<(), String> {
    let file = std::fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let err = file.try_clone().map_err(|e| e.to_string())?;
    let mut child = Command::new(exe)
        .args(args)
        .env_remove("LD_PRELOAD")
        .stdin(Stdio::null())
        .stdout(file)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("{}: {e}", exe.display()))?;
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            return if status.success() {
                Ok(())
            } else {
                Err(format!("{status}"))
            };
        }
        if start.elapsed() > EXAMPLE_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("no exit after {} s", EXAMPLE_TIMEOUT.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The first `head` and last `tail` lines of `text`, with a marker for
/// what is left out.
fn excerpt(text: &str, head: usize, tail: usize) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() <= head + tail + 1 {
        return lines.iter().map(|l| l.to_string()).collect();
    }
    let mut v: Vec<String> = lines[..head].iter().map(|l| l.to_string()).collect();
    v.push(format!("... ({} lines)", lines.len() - head - tail));
    v.extend(lines[lines.len() - tail..].iter().map(|l| l.to_string()));
    v
}

#[cfg(test)]
mod tests {
    #[test]
    fn publishing_order_is_read_from_the_docs_and_cargo() {
        let doc = "intro\n\nPublishing order (dependency order, as\ncargo publishes): a-sys, b,\nc.\n\n## next";
        assert_eq!(documented_order(doc).unwrap(), ["a-sys", "b", "c"]);
        assert!(documented_order("no such sentence").is_err());
        assert_eq!(
            uploaded("   Uploading kfd-sys v0.1.0 (/work/kfd-sys)"),
            Some("kfd-sys")
        );
        assert_eq!(uploaded("   Packaging kfd-sys v0.1.0"), None);
    }

    use super::*;

    #[test]
    fn versions_compare_numerically() {
        assert!(version("1.80").unwrap() < version("1.88.0").unwrap());
        assert!(version("1.9").unwrap() < version("1.10").unwrap());
        assert_eq!(version("1.80"), version("1.80.0"));
        assert_eq!(version("one"), None);
    }

    #[test]
    fn excerpt_keeps_head_and_tail() {
        let text: String = (1..=10).map(|i| format!("{i}\n")).collect();
        assert_eq!(excerpt(&text, 2, 2), ["1", "2", "... (6 lines)", "9", "10"]);
        assert_eq!(excerpt("a\nb\n", 2, 2), ["a", "b"]);
    }

    #[test]
    fn every_member_is_read() {
        let members = members().unwrap();
        assert!(members.iter().any(|m| m.name == "kfd-sys" && m.publish));
        assert!(members.iter().any(|m| m.name == "xtask" && !m.publish));
    }
}
