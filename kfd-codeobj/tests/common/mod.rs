//! Helpers the integration tests share: fixture files, byte searches and
//! little-endian reads.
// Each test file uses a subset.
#![allow(dead_code)]

/// The bytes of `tests/fixtures/<name>`.
pub fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The offsets of `needle` in `data`.
pub fn hits(data: &[u8], needle: &[u8]) -> Vec<usize> {
    data.windows(needle.len())
        .enumerate()
        .filter(|(_, w)| *w == needle)
        .map(|(i, _)| i)
        .collect()
}

/// The offset of the only `needle` in `data`.
pub fn find(data: &[u8], needle: &[u8]) -> usize {
    let hits = hits(data, needle);
    assert_eq!(hits.len(), 1, "{needle:x?}");
    hits[0]
}

/// The little-endian u16 at `at`.
pub fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(b[at..at + 2].try_into().unwrap())
}

/// The little-endian u32 at `at`.
pub fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

/// The little-endian u64 at `at`.
pub fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}
