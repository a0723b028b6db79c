//! One run of one client: its exact environment, the transcript that is
//! compared (status, stdout, stderr without the lines that are not the
//! client's own), and the check of which thunk it really loaded.

use std::process::ExitStatus;
use std::time::Duration;

use kfd_clients::thunk::LINE_PREFIX;

use super::{Client, Door};
use crate::rootfs::Place;

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

/// What rocminfo 7.2.4 prints only when `HSA_ENABLE_DTIF` is not `1`
/// (read from its code: with the variable set it prints "HSA-DTIF
/// environment detected." instead of probing the ROCk module, and skips
/// these agent fields, "Max Clock Freq." on CPU agents only). Under the
/// DTIF door both transcripts drop them, so that the reference run (no
/// DTIF, ROCr's embedded thunk) and ours compare what ROCr answered.
const ROCMINFO_NON_DTIF_ONLY: &[&str] = &[
    "ROCk module is loaded",
    "ASIC Revision:",
    "WatchPts on Addr. Ranges:",
];

/// The CPU-agent-only line of [`ROCMINFO_NON_DTIF_ONLY`].
const ROCMINFO_CPU_MAX_CLOCK: &str = "Max Clock Freq. (MHz):";

/// One run of one client.
#[derive(Debug)]
pub(super) struct Run {
    /// Exit status, stdout and stderr as compared.
    pub(super) transcript: String,
    pub(super) status: ExitStatus,
    /// Thunk libraries the dynamic loader loaded.
    pub(super) loaded: Vec<String>,
    /// What the ROCr client said it has mapped.
    pub(super) client_says: Option<String>,
    /// The last line it printed (stderr first), for a failure message.
    pub(super) last_words: String,
}

/// Which thunk a run must have loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Expect {
    /// One C libhsakmt of the suite (not from the stage).
    System,
    /// None at all.
    Embedded,
    /// Exactly this path (ours, in the stage, as the run sees it).
    Ours(String),
}

pub(super) fn summary(r: &Run) -> String {
    describe(r.status)
}

pub(crate) fn describe(s: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (s.code(), s.signal()) {
        (Some(124), _) => "timed out".into(),
        (Some(c), _) => format!("exit {c}"),
        (None, Some(sig)) => format!("signal {sig}"),
        (None, None) => "?".into(),
    }
}

/// Runs `client` (command line `argv`) once on `preset`; `ours_dir` (as
/// the run sees it) goes first on the library path, with
/// `HSA_ENABLE_DTIF=1` for the DTIF door.
#[allow(clippy::too_many_arguments)]
pub(super) fn run_one(
    place: &Place,
    preset: &str,
    client: Client,
    argv: &[String],
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
        .command(timeout, &env, argv)
        .output()
        .map_err(|e| format!("{} on {preset}: {e}", client.name()))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let (stderr, client_says) = split_thunk_line(&stderr);
    let stdout = if door == Door::Dtif && client == Client::Rocminfo {
        drop_rocminfo_non_dtif(&stdout)
    } else {
        stdout.into_owned()
    };
    let transcript = format!(
        "status: {}\n--- stdout\n{}--- stderr\n{}",
        describe(output.status),
        drop_dtif_log(&stdout),
        mask_addresses(&drop_dtif_log(&stderr))
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

/// Drops [`ROCMINFO_NON_DTIF_ONLY`] lines (colour codes aside) and
/// "Max Clock Freq." inside CPU agents (after a `Device Type: CPU`).
fn drop_rocminfo_non_dtif(text: &str) -> String {
    let mut cpu = false;
    let mut kept = String::new();
    for line in text.split_inclusive('\n') {
        let t = line.trim();
        if let Some(kind) = t.strip_prefix("Device Type:") {
            cpu = kind.trim() == "CPU";
        }
        let drop = ROCMINFO_NON_DTIF_ONLY.iter().any(|p| {
            t.starts_with(p) || (p.starts_with("ROCk") && t.contains(p) && t.len() < p.len() + 16)
        }) || (cpu && t.starts_with(ROCMINFO_CPU_MAX_CLOCK));
        if !drop {
            kept.push_str(line);
        }
    }
    kept
}

/// Hex numbers of [`ADDRESS_DIGITS`] digits or more in `text` as `0x…`:
/// the addresses in the stderr lines of a failed GPU step (kfd-sim's
/// "illegal instruction at 0x7f…", ROCr's "Queue at 0x7f…") change from
/// run to run, the rest of those lines must not.
fn mask_addresses(text: &str) -> String {
    let mut kept = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("0x") {
        kept.push_str(&rest[..at]);
        let digits = rest[at + 2..]
            .find(|c: char| !c.is_ascii_hexdigit())
            .unwrap_or(rest.len() - at - 2);
        if digits >= ADDRESS_DIGITS {
            kept.push_str("0x…");
        } else {
            kept.push_str(&rest[at..at + 2 + digits]);
        }
        rest = &rest[at + 2 + digits..];
    }
    kept.push_str(rest);
    kept
}

/// See [`mask_addresses`]: user-space addresses have 12 hex digits;
/// statuses, opcodes and instruction words have at most 8.
const ADDRESS_DIGITS: usize = 9;

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
pub(super) fn check_thunk(run: &Run, expect: &Expect, place: &Place) -> Result<(), String> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;
    use std::path::PathBuf;

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
    fn rocminfo_dtif_fields_are_dropped() {
        let text =
            "\x1b[37mROCk module is loaded\x1b[0m\nAgent 1\n  Device Type:             CPU\n  \
                    ASIC Revision:           0(0x0)\n  Max Clock Freq. (MHz):   3000\n  \
                    WatchPts on Addr. Ranges:1\nAgent 2\n  Device Type:             GPU\n  \
                    Max Clock Freq. (MHz):   1700\n  ROCk module version 6 is loaded\n";
        assert_eq!(
            drop_rocminfo_non_dtif(text),
            "Agent 1\n  Device Type:             CPU\nAgent 2\n  Device Type:             GPU\n  \
             Max Clock Freq. (MHz):   1700\n  ROCk module version 6 is loaded\n"
        );
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
    fn addresses_are_masked() {
        assert_eq!(
            mask_addresses(
                "illegal instruction at 0x7fa8b6e021ec: `x` (word 0xdc5c0000)\nQueue at \
                 0x7fa8b6e10000 inactivated\n0x\n"
            ),
            "illegal instruction at 0x…: `x` (word 0xdc5c0000)\nQueue at 0x… inactivated\n0x\n"
        );
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
}
