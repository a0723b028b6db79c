//! Normalising kfd-sim ioctl traces so that two libraries' traces of one
//! scenario can be compared line by line.
//!
//! A trace line looks like
//! `[pid] AMDKFD_IOC_NAME struct_name { field: value, ... } -> result`.
//! Normalisation drops the pid and replaces values that differ from run
//! to run without meaning anything (addresses, handles, descriptors, mmap
//! offsets) with symbolic names numbered in order of first appearance per
//! class, so that relations survive (the handle freed is the handle
//! allocated) while raw values do not. Any other number above 2^32 is
//! an address in disguise (sizes of address ranges) and becomes `big`.
//! The simulator's engine lines (`[engine] gpu=... q=0 sdma copy N bytes
//! 0x7f.. -> 0x7f..`, the packets the GPU ran) name addresses in hex
//! outside any field: those above 2^32 become `addr#N` the same way.
//!
//! Pure queries (ioctls that only read kernel state, see [`QUERIES`]) are
//! dropped: issuing GET_VERSION once or twice changes nothing a program can
//! observe, while the order of the state-changing ioctls is what the
//! comparison is about.

/// Read-only KFD ioctls, left out of the comparison.
pub const QUERIES: &[&str] = &[
    "AMDKFD_IOC_GET_VERSION",
    "AMDKFD_IOC_GET_PROCESS_APERTURES",
    "AMDKFD_IOC_GET_PROCESS_APERTURES_NEW",
    "AMDKFD_IOC_GET_CLOCK_COUNTERS",
    "AMDKFD_IOC_GET_TILE_CONFIG",
    "AMDKFD_IOC_GET_DMABUF_INFO",
    "AMDKFD_IOC_AVAILABLE_MEMORY",
];

use std::collections::HashMap;

/// Fields the kernel only writes: what a library leaves in them before
/// the call means nothing (6.2.4's `hsaKmtOpenSMI` leaves its stack's
/// garbage in `anon_fd`, a different value from run to run).
const OUTPUT_ONLY: &[(&str, &str)] = &[("AMDKFD_IOC_SMI_EVENTS", "anon_fd")];

/// The class of a field whose value is replaced, if any.
fn class_of(field: &str) -> Option<&'static str> {
    let f = field;
    if f == "handle" || f.ends_with("_handle") {
        Some("handle")
    } else if f.ends_with("_fd") || f == "fd" {
        Some("fd")
    } else if f.ends_with("_ptr") {
        // Pointers to argument arrays the thunk builds on its heap: only
        // null versus non-null means anything.
        Some("uptr")
    } else if f == "pid" {
        // The target process of a debug-trap request: each library runs
        // in a process of its own.
        Some("pid")
    } else if f == "event_id" || f == "queue_id" || f == "trace_id" {
        Some("id")
    } else if f.ends_with("addr")
        || f.ends_with("address")
        || f.ends_with("_base")
        || f.ends_with("offset")
        || f == "va"
    {
        Some("addr")
    } else {
        None
    }
}

/// Normalises one trace slice (the lines one scenario produced).
pub fn normalise(lines: &[String]) -> Vec<String> {
    let mut names: HashMap<(&'static str, String), usize> = HashMap::new();
    let mut counters: HashMap<&'static str, usize> = HashMap::new();
    let mut out = Vec::new();
    for line in lines {
        let mut l = line.trim();
        if l.starts_with('[') {
            if let Some(end) = l.find("] ") {
                l = &l[end + 2..];
            }
        }
        let ioctl = l.split_whitespace().next().unwrap_or("");
        if QUERIES.contains(&ioctl) {
            continue;
        }
        let mut res = String::with_capacity(l.len());
        let mut rest = l;
        // Walk `name: value` pairs; anything else is copied verbatim.
        while let Some(colon) = rest.find(": ") {
            let before = &rest[..colon];
            let field_start = before
                .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .map(|i| i + 1)
                .unwrap_or(0);
            let field = &before[field_start..];
            res.push_str(&rest[..colon + 2]);
            rest = &rest[colon + 2..];
            let vend = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
                .unwrap_or(rest.len());
            let value = &rest[..vend];
            rest = &rest[vend..];
            let num = value.parse::<u64>().ok();
            if OUTPUT_ONLY.contains(&(ioctl, field)) {
                res.push_str("out");
                continue;
            }
            match (class_of(field), num) {
                (Some(class), Some(0)) => res.push_str(&format!("{class}:0")),
                (Some("uptr"), Some(_)) => res.push_str("uptr"),
                (Some(class), Some(_)) => {
                    let key = (class, value.to_string());
                    let n = *names.entry(key).or_insert_with(|| {
                        let c = counters.entry(class).or_insert(0);
                        *c += 1;
                        *c
                    });
                    res.push_str(&format!("{class}#{n}"));
                }
                (None, Some(v)) if v > u64::from(u32::MAX) => res.push_str("big"),
                _ => res.push_str(value),
            }
        }
        res.push_str(rest);
        let mut name = |class: &'static str, value: String| {
            let n = *names.entry((class, value)).or_insert_with(|| {
                let c = counters.entry(class).or_insert(0);
                *c += 1;
                *c
            });
            format!("{class}#{n}")
        };
        out.push(hex_addresses(&res, &mut name));
    }
    out
}

/// `line` with every `0x…` word above 2^32 (alone or after `key=`)
/// replaced by `name("addr", its decimal value)` (so a hex address
/// relates to the same address in decimal elsewhere).
fn hex_addresses(line: &str, name: &mut impl FnMut(&'static str, String) -> String) -> String {
    let mut out = String::with_capacity(line.len());
    for (i, word) in line.split(' ').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let (key, word) = match word.rfind('=') {
            Some(at) => word.split_at(at + 1),
            None => ("", word),
        };
        out.push_str(key);
        let end = word
            .find(|c: char| !c.is_ascii_alphanumeric())
            .unwrap_or(word.len());
        let value = word[..end]
            .strip_prefix("0x")
            .and_then(|h| u64::from_str_radix(h, 16).ok())
            .filter(|v| *v > u64::from(u32::MAX));
        match value {
            Some(v) => {
                out.push_str(&name("addr", v.to_string()));
                out.push_str(&word[end..]);
            }
            None => out.push_str(word),
        }
    }
    out
}

/// The first difference between two normalised traces, described.
pub fn first_difference(a: &[String], b: &[String]) -> Option<String> {
    let n = a.len().max(b.len());
    for i in 0..n {
        match (a.get(i), b.get(i)) {
            (Some(x), Some(y)) if x == y => continue,
            (x, y) => {
                return Some(format!(
                    "ioctl #{}: reference `{}` vs ours `{}` ({} vs {} ioctls)",
                    i + 1,
                    x.map(String::as_str).unwrap_or("<none>"),
                    y.map(String::as_str).unwrap_or("<none>"),
                    a.len(),
                    b.len()
                ))
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_keep_relations_not_values() {
        let a = vec![
            "[11] AMDKFD_IOC_ALLOC_MEMORY_OF_GPU args { va_addr: 140185839443968, size: 4096, handle: 34578781700096, gpu_id: 8051 } -> 0".to_string(),
            "[11] AMDKFD_IOC_FREE_MEMORY_OF_GPU args { handle: 34578781700096 } -> 0".to_string(),
        ];
        let b = vec![
            "[99] AMDKFD_IOC_ALLOC_MEMORY_OF_GPU args { va_addr: 139000000000000, size: 4096, handle: 12, gpu_id: 8051 } -> 0".to_string(),
            "[99] AMDKFD_IOC_FREE_MEMORY_OF_GPU args { handle: 12 } -> 0".to_string(),
        ];
        assert_eq!(normalise(&a), normalise(&b));
        assert!(normalise(&a)[0].contains("handle: handle#1"));
        assert!(normalise(&a)[0].contains("size: 4096"));
        let c = vec![
            b[0].clone(),
            "[99] AMDKFD_IOC_FREE_MEMORY_OF_GPU args { handle: 13 } -> 0".to_string(),
        ];
        assert!(first_difference(&normalise(&a), &normalise(&c)).is_some());
    }

    #[test]
    fn output_only_fields_are_not_compared() {
        let smi = |fd: u32| {
            vec![format!(
                "[3] AMDKFD_IOC_SMI_EVENTS kfd_ioctl_smi_events_args {{ gpuid: 0, anon_fd: {fd} }} -> -EINVAL"
            )]
        };
        assert_eq!(normalise(&smi(3)), normalise(&smi(0)));
        assert!(normalise(&smi(3))[0].contains("anon_fd: out"));
        // Other requests' descriptors still relate.
        let other = |fd: u32| {
            vec![format!(
                "[3] AMDKFD_IOC_OTHER args {{ anon_fd: {fd} }} -> 0"
            )]
        };
        assert_ne!(normalise(&other(3)), normalise(&other(0)));
    }

    #[test]
    fn engine_lines_relate_hex_addresses() {
        let a = vec![
            "[1] AMDKFD_IOC_ALLOC_MEMORY_OF_GPU args { va_addr: 140185839443968, size: 4096 } -> 0"
                .to_string(),
            "[engine] gpu=0x1f73 q=0 sdma copy 5 bytes 0x7f7f8f29a000 -> 0x7f7f8f29a100"
                .to_string(),
        ];
        let b = vec![
            "[2] AMDKFD_IOC_ALLOC_MEMORY_OF_GPU args { va_addr: 139000000000000, size: 4096 } -> 0"
                .to_string(),
            "[engine] gpu=0x1f73 q=0 sdma copy 5 bytes 0x7e6b759fb000 -> 0x7e6b759fb100"
                .to_string(),
        ];
        let (na, nb) = (normalise(&a), normalise(&b));
        assert_eq!(na, nb);
        // The copy's source is the allocation's address, named once.
        assert_eq!(na[1], "gpu=0x1f73 q=0 sdma copy 5 bytes addr#1 -> addr#2");
        let c = vec![b[0].clone(), b[1].replace("5 bytes", "6 bytes")];
        assert!(first_difference(&na, &normalise(&c)).is_some());
        // After `key=` too (AQL packet lines name their signals so).
        let d = normalise(&[
            "[engine] gpu=0x1f73 q=0 aql #0 KERNEL_DISPATCH signal=0x7f0670c03000".to_string(),
        ]);
        assert_eq!(d, ["gpu=0x1f73 q=0 aql #0 KERNEL_DISPATCH signal=addr#1"]);
    }

    #[test]
    fn debug_trap_pids_are_the_process_not_a_value() {
        let line = |pid: u32, op: u32| {
            vec![format!(
                "[{pid}] AMDKFD_IOC_DBG_TRAP kfd_ioctl_dbg_trap_args {{ pid: {pid}, op: {op}, u: kfd_ioctl_dbg_trap_args_union {{ .. }} }} -> 0"
            )]
        };
        assert_eq!(normalise(&line(11452, 0)), normalise(&line(11466, 0)));
        assert!(normalise(&line(11452, 0))[0].contains("pid: pid#1"));
        assert_ne!(normalise(&line(11452, 0)), normalise(&line(11452, 1)));
    }
}
