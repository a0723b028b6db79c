//! Marketing names from libdrm's `amdgpu.ids` table, looked up the way
//! libdrm 2.4.114's `amdgpu_get_marketing_name` does, in pure Rust.

use std::path::{Path, PathBuf};

use crate::error::TopologyError;
use crate::parse;

/// Where libdrm keeps the table.
pub const DEFAULT_AMDGPU_IDS_PATH: &str = "/usr/share/libdrm/amdgpu.ids";

/// What libdrm returns when the table has no entry for the device.
pub const FALLBACK_MARKETING_NAME: &str = "AMD Radeon Graphics";

/// The parsed `amdgpu.ids` table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AmdgpuIds {
    /// The file it was read from (if any).
    pub path: Option<PathBuf>,
    /// The version line (`1.0.0`).
    pub version: Option<String>,
    /// The data lines after the version line, in file order, newline
    /// removed (comments and blank lines included: libdrm skips them while
    /// scanning).
    lines: Vec<String>,
}

impl AmdgpuIds {
    /// Reads the table at `path`.
    pub fn read(path: &Path) -> Result<AmdgpuIds, TopologyError> {
        let bytes = std::fs::read(path).map_err(|e| TopologyError::io(path, e))?;
        let text = parse::bytes_to_text(path, bytes)?;
        let mut ids = Self::parse(&text);
        ids.path = Some(path.to_owned());
        Ok(ids)
    }

    /// Parses the text of a table.
    pub fn parse(text: &str) -> AmdgpuIds {
        let mut ids = AmdgpuIds::default();
        let mut lines = text.split('\n');
        // getline keeps the text after the last newline as a final line.
        for line in lines.by_ref() {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            ids.version = Some(line.to_owned());
            break;
        }
        ids.lines = lines.map(str::to_owned).collect();
        if ids.lines.last().is_some_and(String::is_empty) {
            ids.lines.pop();
        }
        ids
    }

    /// libdrm's answer for (device id, PCI revision): the table's name, or
    /// `None` when the scan finds no entry (libdrm then reports
    /// [`FALLBACK_MARKETING_NAME`]). Like libdrm, the scan stops at the
    /// first malformed line of the matching device.
    pub fn lookup(&self, device_id: u32, revision: u32) -> Option<&str> {
        for line in &self.lines {
            match parse_line(line, device_id, revision) {
                Line::Skip => continue,
                Line::Match(name) => return Some(name),
                Line::Invalid => return None,
            }
        }
        None
    }

    /// The marketing name libdrm reports: the table entry or the fallback.
    pub fn marketing_name(&self, device_id: u32, revision: u32) -> &str {
        self.lookup(device_id, revision)
            .unwrap_or(FALLBACK_MARKETING_NAME)
    }
}

enum Line<'a> {
    Skip,
    Match(&'a str),
    Invalid,
}

/// C `strtol(s, &end, 16)` with the libdrm check `*end == 0`.
fn hex_field(s: &str) -> Option<u32> {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (neg, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let t = t
        .strip_prefix("0x")
        .or_else(|| t.strip_prefix("0X"))
        .unwrap_or(t);
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let v = i64::from_str_radix(t, 16).unwrap_or(i64::MAX);
    Some(if neg {
        v.wrapping_neg() as u32
    } else {
        v as u32
    })
}

fn parse_line<'a>(line: &'a str, device_id: u32, revision: u32) -> Line<'a> {
    if line.is_empty() || line.starts_with('#') {
        return Line::Skip;
    }
    // strtok(",") skips empty fields.
    let mut fields = line.split(',').filter(|f| !f.is_empty());
    let Some(did) = fields.next().and_then(hex_field) else {
        return Line::Invalid;
    };
    if did != device_id {
        return Line::Skip;
    }
    let Some(rid) = fields.next().and_then(hex_field) else {
        return Line::Invalid;
    };
    if rid != revision {
        return Line::Skip;
    }
    let Some(name) = fields.next() else {
        return Line::Invalid;
    };
    let name = name.trim_start_matches([' ', '\t']);
    if name.is_empty() {
        return Line::Invalid;
    }
    Line::Match(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "# comment\n\n1.0.0\n740C,\t01,\tAMD Instinct MI250X / MI250\n740F,\t02,\tAMD Instinct MI210\n7448, 00, AMD Radeon PRO W7900, rev\n";

    #[test]
    fn lookups() {
        let t = AmdgpuIds::parse(TABLE);
        assert_eq!(t.version.as_deref(), Some("1.0.0"));
        assert_eq!(t.lookup(0x740F, 2), Some("AMD Instinct MI210"));
        assert_eq!(t.lookup(0x740C, 1), Some("AMD Instinct MI250X / MI250"));
        assert_eq!(t.lookup(0x7448, 0), Some("AMD Radeon PRO W7900"));
        assert_eq!(t.lookup(0x740F, 3), None);
        assert_eq!(t.marketing_name(0x1234, 0), FALLBACK_MARKETING_NAME);
    }

    #[test]
    fn malformed_line_stops_the_scan() {
        let t = AmdgpuIds::parse("1.0.0\nzz,00,Bad\n740F,02,Late\n");
        assert_eq!(t.lookup(0x740F, 2), None);
        let t = AmdgpuIds::parse("1.0.0\n740F,02 ,Bad rev\n740F,02,Late\n");
        assert_eq!(t.lookup(0x740F, 2), None);
    }

    #[test]
    fn system_table_if_present() {
        let path = Path::new(DEFAULT_AMDGPU_IDS_PATH);
        if path.exists() {
            let t = AmdgpuIds::read(path).unwrap();
            assert_eq!(t.lookup(0x740F, 2), Some("AMD Instinct MI210"));
        }
    }
}
