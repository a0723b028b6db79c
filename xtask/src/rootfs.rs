//! Debian root filesystems of other suites, for running their binaries
//! (which need a newer glibc than the build machine's) on the simulator.
//!
//! - [`ensure`] makes `target/rootfs/<name>/root` with `mmdebstrap`
//!   (`--variant=apt`, root mode) when it is missing or was made from a
//!   different [`Spec`]: the spec's text is kept in `<name>/stamp`, and a
//!   changed package list (or suite, source, pin) builds again. A build
//!   goes into a temporary directory that is renamed into place at the
//!   end, so an interrupted build leaves no half rootfs behind.
//! - [`Place`] runs a command on the host or inside a rootfs: `unshare
//!   --mount` (a private mount namespace, so no mount leaks and nothing
//!   needs cleaning up if the process dies), /proc, /dev and /sys
//!   bind-mounted, a fresh tmpfs on /tmp (the cached rootfs stays
//!   untouched), a host "stage" directory bind-mounted at [`INSIDE`], and
//!   `chroot`. /sys is the host's because libnuma (in ROCr and libhsakmt)
//!   reads `/sys/devices/system/node` and `/sys/devices/system/cpu/*`,
//!   which the simulator does not serve; the KFD sysfs paths come from the
//!   simulator's preload either way.
//!
//! All of this needs root (mmdebstrap's root mode, mount namespaces,
//! chroot); in a container, `--privileged` (see `.github/workflows`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::{deps, target_dir};

/// Where a stage directory appears inside a rootfs.
pub const INSIDE: &str = "/opt/kfd-rs";

/// Bump when the way a rootfs is made changes in a way the spec text
/// does not show (every rootfs is then made again).
const LAYOUT: u32 = 1;

/// A Debian root filesystem: a suite, extra suites (their packages only
/// where pinned), and the packages to install.
#[derive(Debug)]
pub struct Spec {
    /// Directory name under `target/rootfs`.
    pub name: &'static str,
    /// The base suite (`trixie`, `sid`).
    pub suite: &'static str,
    /// Further suites in the sources list (`experimental`).
    pub extra_suites: &'static [&'static str],
    /// Packages to install (with their dependencies).
    pub packages: &'static [&'static str],
    /// Packages taken from the extra suites (pin priority 990).
    pub pinned: &'static [&'static str],
    /// Accept Release files past their Valid-Until date (sid and
    /// experimental here).
    pub ignore_valid_until: bool,
}

const MIRROR: &str = "http://deb.debian.org/debian";

/// Debian 13: rocminfo 6.1.2, ROCr 6.1.2, libhsakmt1 6.2.4 (the C
/// reference of the `rocm-6.2` generation) and its libhsakmt-dev headers
/// (hsakmt-sys checks its `rocm_6_2` layouts against them).
pub const TRIXIE: Spec = Spec {
    name: "trixie",
    suite: "trixie",
    extra_suites: &[],
    packages: &[
        "rocminfo",
        "libhsa-runtime64-1",
        "libhsakmt1",
        "libhsakmt-dev",
    ],
    pinned: &[],
    ignore_valid_until: false,
};

/// Debian sid with ROCr 7.2.4 from experimental (its thunk embedded) and
/// rocminfo 7.2.4 from sid; their Release files are past Valid-Until
/// here.
pub const SID: Spec = Spec {
    name: "sid",
    suite: "sid",
    extra_suites: &["experimental"],
    packages: &["rocminfo", "libhsa-runtime64-1"],
    pinned: &["libhsa-runtime64-1"],
    ignore_valid_until: true,
};

/// Debian sid with HIP 7.2.4 from experimental: hipcc (and the clang-22,
/// lld-22 and rocm-device-libs-22 it drives), libamdhip64-dev and ROCr
/// 7.2.4, for building and running our HIP program (`cargo xtask hip`).
/// About 96 packages and 213 MB of downloads on top of sid's base.
pub const SID_HIP: Spec = Spec {
    name: "sid-hip",
    suite: "sid",
    extra_suites: &["experimental"],
    packages: &["rocminfo", "libhsa-runtime64-1", "hipcc", "libamdhip64-dev"],
    // Everything of HIP 7.2.4 that sid has only in older versions.
    pinned: &[
        "hipcc",
        "libamdhip64*",
        "libhiprtc*",
        "libamd-comgr*",
        "libhsa-runtime*",
        "rocm-device-libs-22",
    ],
    ignore_valid_until: true,
};

/// Every rootfs `cargo xtask rootfs` can make.
pub const ALL: &[&Spec] = &[&TRIXIE, &SID, &SID_HIP];

impl Spec {
    /// The mmdebstrap arguments after the mode (everything that decides
    /// the result).
    fn mmdebstrap_args(&self, dir: &Path) -> Vec<String> {
        let mut a = vec![
            "--variant=apt".to_string(),
            format!("--include={}", self.packages.join(",")),
            format!("--customize-hook=mkdir -p \"$1{INSIDE}\""),
        ];
        if self.ignore_valid_until {
            a.push("--aptopt=Acquire::Check-Valid-Until \"false\"".into());
        }
        if !self.pinned.is_empty() {
            // One stanza per extra suite: the pinned packages come from
            // there, everything else from the base suite.
            let mut prefs = String::new();
            for s in self.extra_suites {
                prefs.push_str(&format!(
                    "Package: {}\\nPin: release a={s}\\nPin-Priority: 990\\n\\n",
                    self.pinned.join(" ")
                ));
            }
            a.push(format!(
                "--setup-hook=mkdir -p \"$1/etc/apt/preferences.d\" && \
                 printf '{prefs}' > \"$1/etc/apt/preferences.d/kfd-rs\""
            ));
        }
        a.push(self.suite.into());
        a.push(dir.display().to_string());
        for s in std::iter::once(&self.suite).chain(self.extra_suites) {
            a.push(format!("deb {MIRROR} {s} main"));
        }
        a
    }

    /// The stamp: everything the rootfs is made from.
    fn stamp(&self) -> String {
        let args = self.mmdebstrap_args(Path::new("DIR"));
        format!(
            "kfd-rs rootfs layout {LAYOUT}\nmmdebstrap --mode=root {}\n",
            args.join(" ")
        )
    }
}

/// A rootfs ready to use.
#[derive(Debug)]
pub struct Ready {
    /// The root directory.
    pub root: PathBuf,
    /// It was made now (not found in the cache).
    pub built: bool,
    /// How long making it (or finding it) took.
    pub elapsed: Duration,
}

fn is_root() -> Result<(), String> {
    if deps::is_root() {
        Ok(())
    } else {
        Err("Debian rootfs suites need root (mmdebstrap --mode=root, \
             unshare --mount, chroot); run as root or pick --suite bookworm"
            .into())
    }
}

/// Checks that this process may make a private mount namespace (a
/// container needs `--privileged`).
pub fn preflight() -> Result<(), String> {
    is_root()?;
    let ok = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "true"])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if ok {
        Ok(())
    } else {
        Err("`unshare --mount` failed: no permission to make a mount \
             namespace (in a container, run it with --privileged)"
            .into())
    }
}

/// The rootfs of `spec`, made with mmdebstrap when missing or stale.
pub fn ensure(spec: &Spec) -> Result<Ready, String> {
    preflight()?;
    let t0 = Instant::now();
    let base = target_dir().join("rootfs");
    let dir = base.join(spec.name);
    let root = dir.join("root");
    let stamp = spec.stamp();
    let current = std::fs::read_to_string(dir.join("stamp")).ok();
    if current.as_deref() == Some(stamp.as_str()) && root.join("usr/bin").is_dir() {
        return Ok(Ready {
            root,
            built: false,
            elapsed: t0.elapsed(),
        });
    }
    deps::ensure(deps::ROOTFS_PACKAGES, false)?;
    std::fs::create_dir_all(&base).map_err(|e| format!("{}: {e}", base.display()))?;
    remove_stale(&base, spec.name);
    let pid = std::process::id();
    let tmp = base.join(format!(".{}.tmp-{pid}", spec.name));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
    println!(
        "rootfs {}: making it with mmdebstrap ({} + {})",
        spec.name,
        spec.suite,
        spec.packages.join(", ")
    );
    // In a private mount namespace too: whatever mmdebstrap mounts in the
    // new tree goes away with it, even if it is killed.
    let status = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "--"])
        .args(["mmdebstrap", "--mode=root"])
        .args(spec.mmdebstrap_args(&tmp.join("root")))
        .status()
        .map_err(|e| format!("mmdebstrap: {e}"))?;
    if !status.success() {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(format!(
            "mmdebstrap for rootfs {} failed ({status})",
            spec.name
        ));
    }
    std::fs::write(tmp.join("stamp"), &stamp).map_err(|e| e.to_string())?;
    let old = base.join(format!(".{}.old-{pid}", spec.name));
    if dir.exists() {
        std::fs::rename(&dir, &old).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::rename(&tmp, &dir).map_err(|e| format!("{}: {e}", tmp.display()))?;
    let _ = std::fs::remove_dir_all(&old);
    Ok(Ready {
        root,
        built: true,
        elapsed: t0.elapsed(),
    })
}

/// `cargo xtask rootfs SUITE...`: makes (or finds up to date) the rootfs
/// of each suite named, and prints where it is.
pub fn make(args: &[String]) -> Result<(), String> {
    if args.is_empty() || args.iter().any(|a| a.starts_with('-')) {
        return Err(format!("usage: cargo xtask rootfs SUITE... ({})", names()));
    }
    for name in args {
        let spec = ALL
            .iter()
            .find(|s| s.name == name)
            .ok_or_else(|| format!("unknown rootfs suite `{name}` ({})", names()))?;
        let ready = ensure(spec)?;
        println!(
            "rootfs {name}: {} ({} in {:.1} s)",
            ready.root.display(),
            if ready.built { "made" } else { "cached" },
            ready.elapsed.as_secs_f64()
        );
    }
    Ok(())
}

fn names() -> String {
    ALL.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
}

/// Removes `.<name>.tmp-<pid>` / `.<name>.old-<pid>` left by runs that
/// died (their pid is gone).
fn remove_stale(base: &Path, name: &str) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for e in entries.flatten() {
        let file = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = stale_pid(&file, name) else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// The pid in `.<name>.tmp-<pid>` or `.<name>.old-<pid>`.
fn stale_pid(file: &str, name: &str) -> Option<u32> {
    let rest = file.strip_prefix('.')?.strip_prefix(name)?;
    let pid = rest
        .strip_prefix(".tmp-")
        .or_else(|| rest.strip_prefix(".old-"))?;
    pid.parse().ok()
}

/// Mounts and chroots inside the new mount namespace: `$1` the rootfs,
/// `$2` the stage, `$3` where the stage goes ([`INSIDE`]), the rest the
/// command.
const ENTER: &str = r#"set -e
root=$1; stage=$2; inside=$3; shift 3
mount --rbind /proc "$root/proc"
mount --rbind /dev "$root/dev"
mount --rbind /sys "$root/sys"
mount -t tmpfs -o mode=1777 tmpfs "$root/tmp"
mount --bind "$stage" "$root$inside"
exec chroot "$root" "$@""#;

/// Where commands run: on the host, or in a rootfs. Either way a stage
/// directory of the host holds what the run brings along.
#[derive(Debug)]
pub enum Place {
    /// The build machine itself.
    Host {
        /// The stage directory.
        stage: PathBuf,
    },
    /// Inside a rootfs, the stage at [`INSIDE`].
    Chroot {
        /// The rootfs.
        root: PathBuf,
        /// The stage directory on the host.
        stage: PathBuf,
    },
}

impl Place {
    /// The stage directory on the host.
    pub fn stage(&self) -> &Path {
        match self {
            Place::Host { stage } | Place::Chroot { stage, .. } => stage,
        }
    }

    /// `rel` in the stage, as the commands run here see it.
    pub fn seen(&self, rel: &str) -> String {
        match self {
            Place::Host { stage } => stage.join(rel).display().to_string(),
            Place::Chroot { .. } => format!("{INSIDE}/{rel}"),
        }
    }

    /// `argv` with exactly the environment `env` (nothing of this
    /// process's), killed after `timeout`.
    pub fn command(&self, timeout: Duration, env: &[(String, String)], argv: &[String]) -> Command {
        let mut c = Command::new("timeout");
        c.args(["--kill-after=10", &format!("{}", timeout.as_secs().max(1))]);
        if let Place::Chroot { root, stage } = self {
            c.args(["unshare", "--mount", "--propagation", "private", "--"])
                .args(["sh", "-c", ENTER, "sh"])
                .arg(root)
                .arg(stage)
                .arg(INSIDE);
        }
        c.args(["/usr/bin/env", "-i"]);
        c.args(env.iter().map(|(k, v)| format!("{k}={v}")));
        c.args(argv);
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: Spec = Spec {
        name: "t",
        suite: "trixie",
        extra_suites: &["trixie-backports"],
        packages: &["rocminfo", "libhsakmt1"],
        pinned: &["libhsakmt1"],
        ignore_valid_until: true,
    };

    #[test]
    fn stamp_changes_with_the_package_list() {
        let other = Spec {
            packages: &["rocminfo"],
            ..SPEC
        };
        assert_ne!(SPEC.stamp(), other.stamp());
        assert_eq!(SPEC.stamp(), SPEC.stamp());
        let s = SPEC.stamp();
        assert!(s.contains("--include=rocminfo,libhsakmt1"), "{s}");
        assert!(s.contains("deb http://deb.debian.org/debian trixie-backports main"));
        assert!(s.contains("Pin: release a=trixie-backports"));
        assert!(s.contains("Check-Valid-Until"));
    }

    #[test]
    fn stale_names() {
        assert_eq!(stale_pid(".sid.tmp-42", "sid"), Some(42));
        assert_eq!(stale_pid(".sid.old-7", "sid"), Some(7));
        assert_eq!(stale_pid(".sidx.tmp-7", "sid"), None);
        assert_eq!(stale_pid("sid", "sid"), None);
        assert_eq!(stale_pid(".sid.tmp-x", "sid"), None);
    }

    #[test]
    fn chroot_command_wraps_in_a_namespace() {
        let p = Place::Chroot {
            root: "/r".into(),
            stage: "/s".into(),
        };
        assert_eq!(p.seen("lib/x.so"), "/opt/kfd-rs/lib/x.so");
        let c = p.command(
            Duration::from_secs(30),
            &[("A".into(), "1".into())],
            &["rocminfo".into()],
        );
        let args: Vec<String> = c.get_args().map(|a| a.to_string_lossy().into()).collect();
        assert_eq!(c.get_program(), "timeout");
        let tail = &args[args.len() - 6..];
        assert_eq!(
            tail,
            ["/s", INSIDE, "/usr/bin/env", "-i", "A=1", "rocminfo"]
        );
        assert!(args.contains(&"unshare".to_string()));
        let h = Place::Host { stage: "/s".into() };
        assert_eq!(h.seen("bin/c"), "/s/bin/c");
        let c = h.command(Duration::from_secs(30), &[], &["x".into()]);
        let args: Vec<String> = c.get_args().map(|a| a.to_string_lossy().into()).collect();
        assert_eq!(args, ["--kill-after=10", "30", "/usr/bin/env", "-i", "x"]);
    }
}
