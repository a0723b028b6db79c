//! Which thunk library the process has mapped: every file of
//! `/proc/self/maps` whose name starts with `libhsakmt` or `libdtif`.
//! The client prints it on stderr (a line `cargo xtask clients` checks and
//! filters out of the comparison), so a silent fallback from our library
//! to the C one cannot pass as ours.

/// The prefix of the stderr line naming the thunk.
pub const LINE_PREFIX: &str = "kfd-rocr-client: thunk:";

/// The distinct thunk paths in a `/proc/<pid>/maps` text, in order of
/// first appearance.
pub fn mapped(maps: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for line in maps.lines() {
        // address perms offset dev inode pathname: the path is the sixth
        // field and may itself hold spaces.
        let Some(path) = line.splitn(6, ' ').nth(5).map(str::trim_start) else {
            continue;
        };
        let file = path.rsplit('/').next().unwrap_or("");
        if path.starts_with('/')
            && (file.starts_with("libhsakmt") || file.starts_with("libdtif"))
            && !found.iter().any(|f| f == path)
        {
            found.push(path.to_string());
        }
    }
    found
}

/// The stderr line for `paths` (`none` when the runtime has no separate
/// thunk library, as ROCr 6.3+ with its embedded one).
pub fn line(paths: &[String]) -> String {
    if paths.is_empty() {
        format!("{LINE_PREFIX} none")
    } else {
        format!("{LINE_PREFIX} {}", paths.join(" "))
    }
}

/// Prints this process's thunk line on stderr (see [`mapped`]).
pub fn print_mapped() {
    match std::fs::read_to_string("/proc/self/maps") {
        Ok(maps) => eprintln!("{}", line(&mapped(&maps))),
        Err(e) => eprintln!("{LINE_PREFIX} unknown (/proc/self/maps: {e})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAPS: &str = "\
7f0000000000-7f0000001000 r--p 00000000 fd:01 123 /usr/lib/x86_64-linux-gnu/libhsakmt.so.1.0.6
7f0000001000-7f0000002000 r-xp 00001000 fd:01 123 /usr/lib/x86_64-linux-gnu/libhsakmt.so.1.0.6
7f0000003000-7f0000004000 r--p 00000000 fd:01 9 /opt/kfd-rs/ours/libdtif.so
7f0000005000-7f0000006000 rw-p 00000000 00:00 0
7f0000007000-7f0000008000 r--p 00000000 fd:01 77 /usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1.14.0
7ffd00000000-7ffd00001000 rw-p 00000000 00:00 0                          [stack]
";

    #[test]
    fn finds_each_thunk_once() {
        assert_eq!(
            mapped(MAPS),
            [
                "/usr/lib/x86_64-linux-gnu/libhsakmt.so.1.0.6",
                "/opt/kfd-rs/ours/libdtif.so"
            ]
        );
        assert_eq!(
            line(&mapped(MAPS)[1..]),
            "kfd-rocr-client: thunk: /opt/kfd-rs/ours/libdtif.so"
        );
        assert_eq!(line(&[]), "kfd-rocr-client: thunk: none");
    }
}
