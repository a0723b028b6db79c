//! CPU caches read from the host's `sys/devices/system/.../cache/index*`
//! directories, for CPU nodes whose KFD `caches_count` is 0.
//!
//! Each cache is listed once, under the first CPU of its
//! `shared_cpu_list`. Like the C library, unreadable attributes leave the
//! field 0 instead of failing (these are host files, not KFD's).

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

/// `cpuN` directories of `dir`, sorted by N.
fn cpu_dirs(dir: &Path) -> Vec<(usize, PathBuf)> {
    let Ok(rd) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut cpus: Vec<(usize, PathBuf)> = rd
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let rest = name.strip_prefix("cpu")?;
            if !rest.starts_with(|c: char| c.is_ascii_digit()) {
                return None;
            }
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            Some((digits.parse().ok()?, e.path()))
        })
        .take(MAX_ENTRIES)
        .collect();
    cpus.sort();
    cpus
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
    fn cpu_map_bits() {
        let info = CpuInfo::parse(
            "processor : 0\napicid : 0\nprocessor : 1\napicid : 2\nprocessor : 32\napicid : 300\nprocessor : 33\napicid : 5\n",
        );
        let mut s = [0u32; MAX_SIBLINGS];
        apply_cpu_map("00000003,00000003", &info, &mut s);
        assert_eq!(&s[..6], &[1, 0, 1, 0, 0, 1]);
    }
}
