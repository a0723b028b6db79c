//! Child processes on kfd-sim, shared by the conformance parent and
//! kfd-bench's: the `LD_PRELOAD` environment of a simulated child, the
//! waiting with a time limit, and the last stderr line of a failed child.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

/// `/dev/shm` when writable (the simulator renders its sysfs tree there;
/// much faster than a disk-backed /tmp). `probe` names the file written to
/// find out (`.{probe}-{pid}`, removed again).
pub fn fast_tmp(probe: &str) -> Option<PathBuf> {
    let d = PathBuf::from("/dev/shm");
    let probe = d.join(format!(".{probe}-{}", std::process::id()));
    std::fs::write(&probe, b"x").ok()?;
    let _ = std::fs::remove_file(&probe);
    Some(d)
}

/// Puts `cmd` on the simulator: `LD_PRELOAD=sim`, topology `preset`, and
/// `KFD_SIM_TMPDIR` on [`fast_tmp`] when that is available (`probe` as
/// there).
pub fn on_sim<'c>(cmd: &'c mut Command, sim: &Path, preset: &str, probe: &str) -> &'c mut Command {
    cmd.env("LD_PRELOAD", sim).env("KFD_SIM_TOPOLOGY", preset);
    if let Some(d) = fast_tmp(probe) {
        cmd.env("KFD_SIM_TMPDIR", d);
    }
    cmd
}

/// Waits for `child`, polling every `poll`; kills it once `timeout` has
/// passed. Returns its status and whether it was killed for the time.
pub fn wait_timeout(
    child: &mut Child,
    timeout: Duration,
    poll: Duration,
) -> Result<(ExitStatus, bool), String> {
    let t0 = Instant::now();
    loop {
        match child.try_wait().map_err(|e| e.to_string())? {
            Some(s) => return Ok((s, false)),
            None if t0.elapsed() > timeout => {
                let _ = child.kill();
                return Ok((child.wait().map_err(|e| e.to_string())?, true));
            }
            None => std::thread::sleep(poll),
        }
    }
}

/// The last non-blank line of a child's stderr, trimmed (`""` if none).
pub fn last_line(stderr: &str) -> &str {
    stderr
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_nonblank_line() {
        assert_eq!(last_line("a\n  b  \n \n"), "b");
        assert_eq!(last_line(""), "");
    }

    #[test]
    fn timeout_kills() {
        let mut c = Command::new("sleep").arg("5").spawn().unwrap();
        let (s, timed_out) =
            wait_timeout(&mut c, Duration::from_millis(50), Duration::from_millis(5)).unwrap();
        assert!(timed_out && !s.success());
        let mut c = Command::new("true").spawn().unwrap();
        let (s, timed_out) =
            wait_timeout(&mut c, Duration::from_secs(5), Duration::from_millis(2)).unwrap();
        assert!(!timed_out && s.success());
    }
}
