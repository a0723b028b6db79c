//! What a benchmark report says about where and when it was measured.

use std::time::{SystemTime, UNIX_EPOCH};

/// The machine a run measured on, as `/proc` and `/etc/os-release` say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Machine {
    /// CPU model (`model name` in `/proc/cpuinfo`).
    pub cpu: String,
    /// CPUs this process may use.
    pub cpus: usize,
    /// `PRETTY_NAME` of `/etc/os-release`.
    pub os: String,
    /// Kernel release.
    pub kernel: String,
    /// `vm.max_map_count` (bounds the live-set levels).
    pub max_map_count: String,
    /// `/proc/loadavg`'s 1, 5 and 15 minute averages, read at the end.
    pub load: String,
}

fn read_trimmed(path: &str) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

impl Machine {
    /// Reads the machine's description now.
    pub fn probe() -> Machine {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu = cpuinfo
            .lines()
            .find_map(|l| l.strip_prefix("model name"))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
            .unwrap_or_else(|| "unknown".into());
        let os = std::fs::read_to_string("/etc/os-release")
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("PRETTY_NAME="))
            .map(|v| v.trim_matches('"').to_string())
            .unwrap_or_else(|| "unknown".into());
        let load = read_trimmed("/proc/loadavg")
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ");
        Machine {
            cpu,
            cpus: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(0),
            os,
            kernel: read_trimmed("/proc/sys/kernel/osrelease"),
            max_map_count: read_trimmed("/proc/sys/vm/max_map_count"),
            load,
        }
    }
}

/// `YYYY-MM-DD HH:MM UTC` of a time given in seconds since the epoch.
pub fn utc(secs: u64) -> String {
    // Days to a civil date in the proleptic Gregorian calendar, counted in
    // 400-year eras of 146097 days that start on 1 March.
    let days = (secs / 86_400) as i64;
    let (hour, minute) = ((secs % 86_400) / 3600, (secs % 3600) / 60);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02} {hour:02}:{minute:02} UTC")
}

/// Now, as [`utc`] prints it.
pub fn now_utc() -> String {
    utc(SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0), "1970-01-01 00:00 UTC");
        // 2000-02-29 (a leap day of a century leap year) 12:34:56.
        assert_eq!(utc(951_827_696), "2000-02-29 12:34 UTC");
        // 2026-12-01 13:30.
        assert_eq!(utc(1_796_131_800), "2026-12-01 13:30 UTC");
        // 2100-03-01 (2100 is not a leap year).
        assert_eq!(utc(4_107_542_400), "2100-03-01 00:00 UTC");
    }

    #[test]
    fn probe_reads_this_machine() {
        let m = Machine::probe();
        assert!(m.cpus >= 1);
        assert_ne!(m.kernel, "unknown");
        assert_eq!(m.load.split_whitespace().count(), 3);
    }
}
