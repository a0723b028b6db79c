//! Readers for the sysfs file formats: `key value` property files, files
//! holding one number, and the cache `sibling_map` list.
//!
//! The C library parses with `sscanf("%s %llu")` and silently stops at the
//! first line that does not match; here every such line is an error that
//! names the file and line.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use crate::error::TopologyError;

/// Larger files are rejected (sysfs attributes are at most one page; the
/// C library reads only the first 4095 bytes).
pub(crate) const MAX_FILE_SIZE: u64 = 64 * 1024;

/// Most sibling-map entries kept (`HSA_CPU_SIBLINGS`); the C library stops
/// reading there too.
pub(crate) const MAX_SIBLINGS: usize = 256;

/// How reading a file failed.
#[derive(Debug)]
pub(crate) enum ReadFailure {
    /// `open` failed.
    Open(io::Error),
    /// `read` failed (sysfs reports EPERM here for nodes a cgroup hides).
    Read(io::Error),
    /// The file is larger than [`MAX_FILE_SIZE`].
    TooLarge,
}

impl ReadFailure {
    /// The error as a [`TopologyError`] naming `path`.
    pub(crate) fn into_error(self, path: &Path) -> TopologyError {
        match self {
            ReadFailure::Open(e) | ReadFailure::Read(e) => TopologyError::io(path, e),
            ReadFailure::TooLarge => TopologyError::Malformed {
                path: path.to_owned(),
                line: 1,
                reason: format!("file is larger than {MAX_FILE_SIZE} bytes"),
            },
        }
    }

    /// True when `read` (not `open`) failed with EPERM.
    pub(crate) fn is_read_eperm(&self) -> bool {
        matches!(self, ReadFailure::Read(e) if e.raw_os_error() == Some(kfd_sys::Errno::EPERM.raw()))
    }
}

/// Reads a whole (small) file as bytes.
pub(crate) fn read_bytes(path: &Path) -> Result<Vec<u8>, ReadFailure> {
    let file = File::open(path).map_err(ReadFailure::Open)?;
    let mut buf = Vec::new();
    file.take(MAX_FILE_SIZE + 1)
        .read_to_end(&mut buf)
        .map_err(ReadFailure::Read)?;
    if buf.len() as u64 > MAX_FILE_SIZE {
        return Err(ReadFailure::TooLarge);
    }
    Ok(buf)
}

/// Reads a whole file as text; invalid UTF-8 is a [`TopologyError::Malformed`].
pub(crate) fn read_text(path: &Path) -> Result<String, TopologyError> {
    let bytes = read_bytes(path).map_err(|e| e.into_error(path))?;
    bytes_to_text(path, bytes)
}

pub(crate) fn bytes_to_text(path: &Path, bytes: Vec<u8>) -> Result<String, TopologyError> {
    String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
        TopologyError::Malformed {
            path: path.to_owned(),
            line,
            reason: "invalid UTF-8".into(),
        }
    })
}

/// Parses a decimal `u64` the way the strict reader wants it: digits only,
/// no sign, no overflow.
fn parse_decimal(token: &str) -> Result<u64, String> {
    if token.is_empty() || !token.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("`{token}` is not a decimal number"));
    }
    token
        .parse::<u64>()
        .map_err(|_| format!("`{token}` does not fit in 64 bits"))
}

/// A file holding one decimal number (`generation_id`, `gpu_id`, host cache
/// attributes): leading and trailing white space allowed, nothing else.
pub(crate) fn parse_single_u32(path: &Path, text: &str) -> Result<u32, TopologyError> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(TopologyError::Empty {
            path: path.to_owned(),
        });
    }
    let line = text[..text.len() - text.trim_start().len()]
        .matches('\n')
        .count()
        + 1;
    let value = parse_decimal(trimmed).map_err(|reason| TopologyError::Malformed {
        path: path.to_owned(),
        line,
        reason,
    })?;
    u32::try_from(value).map_err(|_| TopologyError::OutOfRange {
        path: path.to_owned(),
        line,
        key: "value".into(),
        value,
        bits: 32,
    })
}

/// One `key value` line.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub key: String,
    pub value: u64,
    pub line: usize,
}

/// A parsed `properties` file.
#[derive(Debug, Clone)]
pub(crate) struct PropFile {
    pub path: PathBuf,
    /// Entries in file order (order matters: later keys overwrite earlier
    /// ones, and `p2p_links_count` adds to `io_links_count`).
    pub entries: Vec<Entry>,
    /// For cache files: the `sibling_map` list, if present.
    pub sibling_map: Option<Vec<u32>>,
}

impl PropFile {
    /// Reads and parses `path`. An empty file is an error (the C library
    /// fails on a zero-length read too).
    pub(crate) fn read(path: &Path, sibling_map: bool) -> Result<PropFile, TopologyError> {
        let text = read_text(path)?;
        Self::parse(path, &text, sibling_map)
    }

    /// Parses already-read text.
    pub(crate) fn parse(
        path: &Path,
        text: &str,
        sibling_map: bool,
    ) -> Result<PropFile, TopologyError> {
        if text.is_empty() {
            return Err(TopologyError::Empty {
                path: path.to_owned(),
            });
        }
        let malformed = |line: usize, reason: String| TopologyError::Malformed {
            path: path.to_owned(),
            line,
            reason,
        };
        let mut entries = Vec::new();
        let mut siblings = None;
        for (idx, raw) in text.lines().enumerate() {
            let line = idx + 1;
            let mut tokens = raw.split_ascii_whitespace();
            let Some(key) = tokens.next() else { continue };
            let Some(value) = tokens.next() else {
                return Err(malformed(line, format!("`{key}` has no value")));
            };
            if sibling_map && key == kfd_sys::sysfs::cache::SIBLING_MAP {
                if tokens.next().is_some() {
                    return Err(malformed(line, "sibling_map has trailing text".into()));
                }
                siblings = Some(parse_sibling_list(value).map_err(|r| malformed(line, r))?);
                // The C library stops at sibling_map: later keys are ignored.
                break;
            }
            if let Some(extra) = tokens.next() {
                return Err(malformed(
                    line,
                    format!("expected `key value`, found extra `{extra}`"),
                ));
            }
            let value = parse_decimal(value).map_err(|r| malformed(line, format!("{key}: {r}")))?;
            entries.push(Entry {
                key: key.to_owned(),
                value,
                line,
            });
        }
        Ok(PropFile {
            path: path.to_owned(),
            entries,
            sibling_map: siblings,
        })
    }

    /// The last value of `key`, if present.
    #[cfg(test)]
    pub(crate) fn get(&self, key: &str) -> Option<&Entry> {
        self.entries.iter().rev().find(|e| e.key == key)
    }

    /// Narrows an entry's value to `bits` bits.
    pub(crate) fn narrow(&self, entry: &Entry, bits: u32) -> Result<u64, TopologyError> {
        if bits < 64 && entry.value >> bits != 0 {
            return Err(TopologyError::OutOfRange {
                path: self.path.clone(),
                line: entry.line,
                key: entry.key.clone(),
                value: entry.value,
                bits,
            });
        }
        Ok(entry.value)
    }

    /// The entry as a `u32` (range-checked).
    pub(crate) fn u32_of(&self, entry: &Entry) -> Result<u32, TopologyError> {
        Ok(self.narrow(entry, 32)? as u32)
    }

    /// A count (of banks, caches, links), range-checked against `limit`.
    pub(crate) fn count_of(&self, entry: &Entry, limit: u64) -> Result<u32, TopologyError> {
        if entry.value > limit {
            return Err(TopologyError::AbsurdCount {
                path: self.path.clone(),
                key: entry.key.clone(),
                value: entry.value,
                limit,
            });
        }
        Ok(entry.value as u32)
    }
}

/// `1,0,0,1`: comma-separated decimals; a trailing comma is tolerated.
/// At most [`MAX_SIBLINGS`] entries are kept, like the C library.
fn parse_sibling_list(list: &str) -> Result<Vec<u32>, String> {
    let list = list.strip_suffix(',').unwrap_or(list);
    let mut out = Vec::new();
    for item in list.split(',') {
        let v = parse_decimal(item).map_err(|r| format!("sibling_map: {r}"))?;
        let v =
            u32::try_from(v).map_err(|_| format!("sibling_map: {v} does not fit in 32 bits"))?;
        if out.len() < MAX_SIBLINGS {
            out.push(v);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> Result<PropFile, TopologyError> {
        PropFile::parse(Path::new("/t/properties"), text, true)
    }

    #[test]
    fn parses_keys_in_order() {
        let f = p("a 1\nb 2\n\na 3\n").unwrap();
        assert_eq!(f.entries.len(), 3);
        assert_eq!(f.get("a").unwrap().value, 3);
        assert_eq!(f.get("b").unwrap().line, 2);
    }

    #[test]
    fn rejects_malformed_lines() {
        for (text, line) in [
            ("a 1\nb\n", 2),
            ("a -1\n", 1),
            ("a 1x\n", 1),
            ("a 1 2\n", 1),
            ("a 99999999999999999999\n", 1),
            ("x 1\nsibling_map 1,a\n", 2),
        ] {
            match p(text) {
                Err(TopologyError::Malformed { line: l, .. }) => assert_eq!(l, line, "{text:?}"),
                other => panic!("{text:?}: {other:?}"),
            }
        }
        assert!(matches!(p(""), Err(TopologyError::Empty { .. })));
    }

    #[test]
    fn sibling_map_ends_the_file() {
        let f = p("level 1\nsibling_map 1,0,1,\nlevel 2\n").unwrap();
        assert_eq!(f.sibling_map.as_deref(), Some(&[1, 0, 1][..]));
        assert_eq!(f.get("level").unwrap().value, 1);
    }

    #[test]
    fn single_numbers() {
        let path = Path::new("/t/gpu_id");
        assert_eq!(parse_single_u32(path, " 42\n").unwrap(), 42);
        assert!(matches!(
            parse_single_u32(path, "\n4294967296\n"),
            Err(TopologyError::OutOfRange { line: 2, .. })
        ));
        assert!(matches!(
            parse_single_u32(path, "12ab"),
            Err(TopologyError::Malformed { .. })
        ));
        assert!(matches!(
            parse_single_u32(path, ""),
            Err(TopologyError::Empty { .. })
        ));
    }
}
