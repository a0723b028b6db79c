//! Clang offload bundles: the container `hipcc --genco` and
//! `clang-offload-bundler` write around one code object per target
//! (clang's ClangOffloadBundler documentation, "Bundled Code Object
//! Layout"): the magic `__CLANG_OFFLOAD_BUNDLE__`, an entry count, then per
//! entry its offset, size, id length and id (`hipv4-amdgcn-amd-amdhsa--
//! gfx90a:xnack-`), all integers 64-bit little-endian.

use crate::Error;

/// The magic of an uncompressed bundle.
const MAGIC: &[u8] = b"__CLANG_OFFLOAD_BUNDLE__";
/// The magic of a compressed bundle (`clang-offload-bundler -compress`).
const COMPRESSED_MAGIC: &[u8] = b"CCOB";
/// The triple of AMDGPU HSA code objects within entry ids.
const AMDHSA_TRIPLE: &str = "amdgcn-amd-amdhsa-";

/// One entry of a bundle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BundleEntry<'a> {
    /// The bundle entry id: offload kind, triple, target id
    /// (`hipv4-amdgcn-amd-amdhsa--gfx90a`).
    pub id: &'a str,
    /// The entry's bytes: a code object for AMDGPU entries, often empty for
    /// the `host-` entry.
    pub data: &'a [u8],
}

impl<'a> BundleEntry<'a> {
    /// The target id of an AMDGPU HSA entry (`gfx90a`, `gfx90a:xnack-`):
    /// what follows the `amdgcn-amd-amdhsa-` triple and its empty
    /// environment field.
    pub fn target_id(&self) -> Option<&'a str> {
        let (_, rest) = self.id.split_once(AMDHSA_TRIPLE)?;
        // The triple's environment field is empty: `...-amdhsa--gfx90a`.
        rest.strip_prefix('-')
    }
}

/// A parsed offload bundle: its entries, borrowing the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OffloadBundle<'a> {
    /// The entries, in file order.
    entries: Vec<BundleEntry<'a>>,
}

impl<'a> OffloadBundle<'a> {
    /// Whether `data` starts like a bundle (compressed or not).
    pub fn is_bundle(data: &[u8]) -> bool {
        data.starts_with(MAGIC) || data.starts_with(COMPRESSED_MAGIC)
    }

    /// Reads the bundle header and checks every entry lies inside `data`.
    pub fn parse(data: &'a [u8]) -> Result<Self, Error> {
        if data.starts_with(COMPRESSED_MAGIC) {
            return Err(Error::CompressedBundle);
        }
        let mut reader = Reader {
            data,
            at: MAGIC.len(),
        };
        if !data.starts_with(MAGIC) {
            return Err(Error::NotABundle);
        }
        let count = reader.u64("the file ends in the entry count")?;
        let mut entries = Vec::new();
        for _ in 0..count {
            let offset = reader.u64("the file ends in an entry offset")?;
            let size = reader.u64("the file ends in an entry size")?;
            let id_len = reader.u64("the file ends in an entry id length")?;
            let id = reader.bytes(id_len, "the file ends in an entry id")?;
            let id = std::str::from_utf8(id)
                .map_err(|_| Error::BadBundle("an entry id is not UTF-8"))?;
            let data = usize::try_from(offset)
                .ok()
                .zip(usize::try_from(size).ok())
                .and_then(|(o, s)| data.get(o..o.checked_add(s)?))
                .ok_or(Error::BadBundle("an entry lies outside the file"))?;
            entries.push(BundleEntry { id, data });
        }
        Ok(OffloadBundle { entries })
    }

    /// The entries, in file order.
    pub fn entries(&self) -> &[BundleEntry<'a>] {
        &self.entries
    }

    /// The code object for `target_id` (`gfx90a`, `gfx942:sramecc+:xnack-`):
    /// the entry with exactly that target id, else the entry for the same
    /// processor compiled for any XNACK and SRAMECC setting (no features in
    /// its id).
    pub fn code_object_for(&self, target_id: &str) -> Result<&'a [u8], Error> {
        let processor = target_id.split(':').next().unwrap_or(target_id);
        let exact = self
            .entries
            .iter()
            .find(|e| e.target_id() == Some(target_id));
        let any = || {
            self.entries
                .iter()
                .find(|e| e.target_id() == Some(processor))
        };
        exact
            .or_else(any)
            .map(|e| e.data)
            .ok_or_else(|| Error::NoBundleEntry(target_id.to_string()))
    }
}

/// A cursor over the bundle header.
struct Reader<'a> {
    /// The whole file.
    data: &'a [u8],
    /// The next byte to read.
    at: usize,
}

impl<'a> Reader<'a> {
    /// The next `len` bytes, for `what`.
    fn bytes(&mut self, len: u64, what: &'static str) -> Result<&'a [u8], Error> {
        let bytes = usize::try_from(len)
            .ok()
            .and_then(|len| self.data.get(self.at..self.at.checked_add(len)?))
            .ok_or(Error::BadBundle(what))?;
        self.at += bytes.len();
        Ok(bytes)
    }

    /// The next little-endian u64, for `what`.
    fn u64(&mut self, what: &'static str) -> Result<u64, Error> {
        let bytes = self.bytes(8, what)?;
        Ok(u64::from_le_bytes(
            bytes.try_into().map_err(|_| Error::BadBundle(what))?,
        ))
    }
}
