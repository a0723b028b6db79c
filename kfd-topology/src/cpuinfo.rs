//! `/proc/cpuinfo`: processor numbers, APIC ids, model names and the
//! vendor, as the C library reads them (x86 layout).

use std::path::Path;

use crate::error::TopologyError;
use crate::parse;

/// Bytes kept of a model name (`HSA_PUBLIC_NAME_SIZE - 1`).
pub(crate) const NAME_MAX: usize = 63;

/// Processors beyond this are ignored (the C library sizes its table by
/// `get_nprocs()`; this bounds a malformed file).
const MAX_PROCESSORS: usize = 1 << 16;

/// The CPU vendor named by the first `vendor_id` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuVendor {
    /// `GenuineIntel`.
    Intel,
    /// `AuthenticAMD`.
    Amd,
    /// Anything else or missing (the C library warns and assumes Intel).
    Unknown,
}

/// One processor's entry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Processor {
    /// `apicid`.
    pub apicid: u32,
    /// `model name`, at most 63 bytes.
    pub model_name: String,
}

/// What the topology needs from `/proc/cpuinfo`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuInfo {
    /// The vendor.
    pub vendor: CpuVendor,
    /// Indexed by processor number; processors the file does not list have
    /// APIC id 0 and an empty name (as in the C library's zeroed table).
    pub processors: Vec<Processor>,
}

impl Default for CpuInfo {
    fn default() -> Self {
        CpuInfo {
            vendor: CpuVendor::Unknown,
            processors: Vec::new(),
        }
    }
}

/// C `atoi`: optional white space and sign, then digits; 0 if none.
fn atoi(s: &str) -> i64 {
    let s = s.trim_start();
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let mut v: i64 = 0;
    for b in digits.bytes().take_while(u8::is_ascii_digit) {
        v = v.saturating_mul(10).saturating_add(i64::from(b - b'0'));
    }
    if neg {
        -v
    } else {
        v
    }
}

/// The value of a `key<tabs>: value` line: what follows ": " (the C
/// library skips exactly two bytes after the colon).
fn value_of(line: &str) -> Option<&str> {
    let colon = line.find(':')?;
    Some(line.get(colon + 2..).unwrap_or(""))
}

impl CpuInfo {
    /// Reads `<root>/proc/cpuinfo`.
    pub fn read(root: &Path) -> Result<CpuInfo, TopologyError> {
        let path = root.join("proc/cpuinfo");
        let bytes = parse::read_bytes(&path).map_err(|e| e.into_error(&path))?;
        Ok(Self::parse(&String::from_utf8_lossy(&bytes)))
    }

    /// Parses the text of `/proc/cpuinfo`.
    pub fn parse(text: &str) -> CpuInfo {
        let mut info = CpuInfo::default();
        let mut vendor_seen = false;
        let mut proc: usize = 0;
        for line in text.lines() {
            let Some(value) = value_of(line) else {
                continue;
            };
            if line.starts_with("processor") {
                let n = atoi(value);
                if n < 0 || n as usize >= MAX_PROCESSORS {
                    break;
                }
                proc = n as usize;
                if info.processors.len() <= proc {
                    info.processors.resize(proc + 1, Processor::default());
                }
            } else if line.starts_with("vendor_id") && !vendor_seen {
                vendor_seen = true;
                info.vendor = match value.trim_end() {
                    "GenuineIntel" => CpuVendor::Intel,
                    "AuthenticAMD" => CpuVendor::Amd,
                    _ => CpuVendor::Unknown,
                };
            } else if line.starts_with("model name") {
                let entry = info.entry(proc);
                let mut name = value.to_owned();
                truncate_bytes(&mut name, NAME_MAX);
                entry.model_name = name;
            } else if line.starts_with("apicid") {
                info.entry(proc).apicid = atoi(value) as u32;
            }
        }
        info
    }

    fn entry(&mut self, proc: usize) -> &mut Processor {
        if self.processors.len() <= proc {
            self.processors.resize(proc + 1, Processor::default());
        }
        &mut self.processors[proc]
    }

    /// The model name of the first processor whose APIC id is `apicid`.
    pub fn model_name_for_apicid(&self, apicid: u32) -> Option<&str> {
        self.processors
            .iter()
            .find(|p| p.apicid == apicid)
            .map(|p| p.model_name.as_str())
    }

    /// The APIC id of processor `proc` (0 if not listed).
    pub fn apicid(&self, proc: usize) -> u32 {
        self.processors.get(proc).map_or(0, |p| p.apicid)
    }
}

/// Truncates to at most `max` bytes on a character boundary.
pub(crate) fn truncate_bytes(s: &mut String, max: usize) {
    if s.len() > max {
        let mut end = max;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: &str = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7763 64-Core Processor\napicid\t\t: 0\n\nprocessor\t: 1\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7763 64-Core Processor\napicid\t\t: 2\n";

    #[test]
    fn parses_processors() {
        let c = CpuInfo::parse(TWO);
        assert_eq!(c.vendor, CpuVendor::Amd);
        assert_eq!(c.processors.len(), 2);
        assert_eq!(c.apicid(1), 2);
        assert_eq!(
            c.model_name_for_apicid(2),
            Some("AMD EPYC 7763 64-Core Processor")
        );
        assert_eq!(c.model_name_for_apicid(7), None);
    }

    #[test]
    fn long_names_are_cut_and_garbage_is_harmless() {
        let long = format!("processor : 0\nmodel name : {}\n", "x".repeat(100));
        let c = CpuInfo::parse(&long);
        assert_eq!(c.processors[0].model_name.len(), 63);
        let c = CpuInfo::parse("processor\nprocessor : -3\napicid:\n");
        assert!(c.processors.is_empty());
        assert_eq!(
            CpuInfo::parse("vendor_id : Foo\n").vendor,
            CpuVendor::Unknown
        );
    }
}
