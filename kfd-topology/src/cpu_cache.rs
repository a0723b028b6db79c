//! CPU caches read from the host's `sys/devices/system/.../cache/index*`
//! directories, for CPU nodes whose KFD `caches_count` is 0.
//!
//! Each cache is listed once, under the first CPU of its
//! `shared_cpu_list`. Like the C library, unreadable attributes leave the
//! field 0 instead of failing (these are host files, not KFD's).
//!
//! # Order
//!
//! libhsakmt (5.2.3, 6.2.4 and the current one alike) walks the `cpuN`
//! directories in `readdir` order and lists each CPU's caches `index0`,
//! `index1`, ... in turn; the result is that order, not CPU number order.
//! sysfs lists a directory by a hash of the entry names (kernfs), so on a
//! 2-CPU machine `cpu1` (and its private caches) usually comes before
//! `cpu0` (which also carries the shared L3). This reader sorts the
//! entries the way kernfs lists them ([`kernfs_hash`]): on sysfs that is
//! exactly the `readdir` order the C library sees, and a copy of the tree
//! on another file system (a simulator's render root, a fixture) reads the
//! same as the real one would.

use std::fs;
use std::path::{Path, PathBuf};

use crate::cpuinfo::CpuInfo;
use crate::model::{Cache, CacheType};
use crate::parse::MAX_SIBLINGS;

/// Most `cpuN` directories or `indexN` directories looked at (a bound
/// against absurd trees).
const MAX_ENTRIES: usize = 1 << 16;

fn read_trimmed(path: &Path) -> Option<String> {
    let bytes = crate::parse::read_bytes(path).ok()?;
    Some(String::from_utf8_lossy(&bytes).trim().to_owned())
}

/// `%u`: the leading decimal digits of the file.
fn read_leading_u32(path: &Path) -> Option<u32> {
    let s = read_trimmed(path)?;
    let digits: String = s.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// `32K`, `1M`, `1024`: the size in bytes.
fn read_size(path: &Path) -> u32 {
    let Some(s) = read_trimmed(path) else {
        return 0;
    };
    let digits: String = s.chars().take_while(char::is_ascii_digit).collect();
    let Ok(v) = digits.parse::<u32>() else {
        return 0;
    };
    match s[digits.len()..].chars().next() {
        Some('K') => v.wrapping_shl(10),
        Some('M') => v.wrapping_shl(20),
        Some('G') => v.wrapping_shl(30),
        _ => v,
    }
}

/// Entries of `dir` whose names start with `prefix` (like the C
/// `num_subdirs`, which counts files too).
fn count_prefixed(dir: &Path, prefix: &str) -> usize {
    fs::read_dir(dir).map_or(0, |rd| {
        rd.filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
            .take(MAX_ENTRIES)
            .count()
    })
}

/// The kernfs name hash (`kernfs_name_hash`, `fs/kernfs/dir.c`, 64-bit
/// kernels since 4.8), by which sysfs orders a directory's entries.
fn kernfs_hash(name: &[u8]) -> u32 {
    let mut h: u64 = 0;
    for &c in name {
        let c = u64::from(c);
        h = h.wrapping_add(c << 4).wrapping_add(c >> 4).wrapping_mul(11);
    }
    let h = ((h.wrapping_mul(0x61C8_8646_80B5_83EB) >> 32) as u32) & 0x7fff_ffff;
    // 0, 1 and INT_MAX are reserved for the magic entries.
    match h {
        0 | 1 => h + 2,
        0x7fff_ffff => 0x7fff_fffe,
        _ => h,
    }
}

/// Sorts `(name, ..)` entries as sysfs lists them: by [`kernfs_hash`] of
/// the name, then by name.
fn kernfs_sort<T>(entries: &mut [(String, T)]) {
    entries.sort_by_cached_key(|(n, _)| (kernfs_hash(n.as_bytes()), n.clone()));
}

/// `cpuN` directories of `dir` as `(N, path)`, in the order sysfs lists
/// them (see the module docs).
fn cpu_dirs(dir: &Path) -> Vec<(usize, PathBuf)> {
    let Ok(rd) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut named: Vec<(String, PathBuf)> = rd
        .filter_map(Result::ok)
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .take(MAX_ENTRIES)
        .collect();
    kernfs_sort(&mut named);
    named
        .into_iter()
        .filter_map(|(name, path)| {
            let rest = name.strip_prefix("cpu")?;
            if !rest.starts_with(|c: char| c.is_ascii_digit()) {
                return None;
            }
            // C `atoi`: the leading digits.
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            Some((digits.parse().ok()?, path))
        })
        .collect()
}

/// Sets `siblings[apicid] = 1` for each CPU set in a `shared_cpu_map`
/// (hex groups of 32 CPUs, most significant first, comma separated).
fn apply_cpu_map(map: &str, cpuinfo: &CpuInfo, siblings: &mut [u32; MAX_SIBLINGS]) {
    let groups: Vec<&str> = map.split(',').collect();
    let n = groups.len();
    for (i, g) in groups.iter().enumerate() {
        let Ok(mask) = u32::from_str_radix(g.trim(), 16) else {
            continue;
        };
        let group = n - 1 - i;
        for bit in 0..32 {
            if mask & (1 << bit) == 0 {
                continue;
            }
            let apicid = cpuinfo.apicid(group * 32 + bit) as usize;
            if let Some(slot) = siblings.get_mut(apicid) {
                *slot = 1;
            }
        }
    }
}

/// Reads the caches of CPU node `node` below `root`. An empty result means
/// none were found.
pub(crate) fn host_cpu_caches(root: &Path, node: u32, cpuinfo: &CpuInfo) -> Vec<Cache> {
    let mut dir = root.join(format!("sys/devices/system/node/node{node}"));
    if count_prefixed(&dir, "cpu") == 0 {
        if node != 0 {
            return Vec::new();
        }
        dir = root.join("sys/devices/system/cpu");
        if count_prefixed(&dir, "cpu") == 0 {
            return Vec::new();
        }
    }
    let mut caches = Vec::new();
    for (proc, cpu_dir) in cpu_dirs(&dir) {
        let cache_dir = cpu_dir.join("cache");
        let n = count_prefixed(&cache_dir, "index");
        for idx in 0..n {
            let index = cache_dir.join(format!("index{idx}"));
            let first = read_leading_u32(&index.join("shared_cpu_list"));
            if first != Some(proc as u32) {
                continue;
            }
            let mut cache_type = CacheType::CPU;
            match read_trimmed(&index.join("type")).as_deref() {
                Some("Data") => cache_type |= CacheType::DATA,
                Some("Instruction") => cache_type |= CacheType::INSTRUCTION,
                Some("Unified") => cache_type |= CacheType::DATA | CacheType::INSTRUCTION,
                _ => {}
            }
            let mut siblings = [0u32; MAX_SIBLINGS];
            if let Some(map) = read_trimmed(&index.join("shared_cpu_map")) {
                apply_cpu_map(&map, cpuinfo, &mut siblings);
            }
            let last = siblings.iter().rposition(|&s| s != 0).map_or(0, |p| p + 1);
            caches.push(Cache {
                processor_id_low: cpuinfo.apicid(proc),
                level: read_leading_u32(&index.join("level")).unwrap_or(0),
                size: read_size(&index.join("size")),
                cache_line_size: read_leading_u32(&index.join("coherency_line_size")).unwrap_or(0),
                cache_lines_per_tag: read_leading_u32(&index.join("physical_line_partition"))
                    .unwrap_or(0),
                associativity: read_leading_u32(&index.join("ways_of_associativity")).unwrap_or(0),
                latency: 0,
                cache_type,
                sibling_map: siblings[..last].to_vec(),
            });
        }
    }
    caches
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernfs_order_of_cpu_directories() {
        // What `ls -f /sys/devices/system/node/node0` prints on a 6.x
        // kernel with two CPUs.
        let mut e: Vec<(String, ())> = ["cpu0", "cpu1", "cpulist", "cpumap", "distance"]
            .iter()
            .map(|n| (n.to_string(), ()))
            .collect();
        kernfs_sort(&mut e);
        let names: Vec<&str> = e.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["distance", "cpu1", "cpulist", "cpu0", "cpumap"]);
        assert_eq!(kernfs_hash(b""), 2);
    }

    /// On a real sysfs, the order this reader uses is `readdir`'s.
    #[test]
    fn kernfs_order_is_readdir_order_on_sysfs() {
        for dir in ["/sys/devices/system/cpu", "/sys/devices/system/node/node0"] {
            let Ok(rd) = fs::read_dir(dir) else { continue };
            let listed: Vec<(String, ())> = rd
                .filter_map(Result::ok)
                .map(|e| (e.file_name().to_string_lossy().into_owned(), ()))
                .collect();
            let mut sorted = listed.clone();
            kernfs_sort(&mut sorted);
            assert_eq!(sorted, listed, "{dir}");
        }
    }

    #[test]
    fn cpu_map_bits() {
        let info = CpuInfo::parse(
            "processor : 0\napicid : 0\nprocessor : 1\napicid : 2\nprocessor : 32\napicid : 300\nprocessor : 33\napicid : 5\n",
        );
        let mut s = [0u32; MAX_SIBLINGS];
        apply_cpu_map("00000003,00000003", &info, &mut s);
        assert_eq!(&s[..6], &[1, 0, 1, 0, 0, 1]);
    }
}
