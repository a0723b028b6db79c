//! The buffer-object ioctls of a render node: what libdrm_amdgpu's
//! `amdgpu_bo_*` functions issue on GEM handles the file holds (imported
//! dma-bufs, see [`super::GemObjects`]). Error numbers are amdgpu's
//! (`amdgpu_gem.c`, `amdgpu_vm.c` of a 2025 kernel):
//!
//! | request | model |
//! |---|---|
//! | `AMDGPU_GEM_METADATA` | GET/SET of the object's flags, tiling word and up to 256 bytes of UMD data, kept on the object (so every importer, in any OS process, sees them: [`GemMetadata`]); SET with 0 bytes clears the data and keeps the flags, as `amdgpu_bo_set_metadata`; more than 256 bytes → `EINVAL`; an unknown op → `EINVAL` |
//! | `AMDGPU_GEM_OP` | `GET_GEM_CREATE_INFO` writes the object's size, alignment, preferred domains and creation flags to the user pointer in `value` (`EFAULT` if it is bad); `SET_PLACEMENT` changes the preferred domains; other ops → `EINVAL` |
//! | `AMDGPU_GEM_VA` | MAP, UNMAP, CLEAR, REPLACE in this file's GPU VM: the address checks of the ioctl (below 64 KiB, in the canonical hole, past the top reserve → `EINVAL`), the flag and op checks (`EINVAL`), page alignment, a size of 0, a range past the object and overlaps (`EINVAL`), UNMAP of no mapping at that address (`ENOENT`); GPU addresses equal CPU ones in the model, so a mapping moves no data. Mappings made by KFD's own MAP_MEMORY_TO_GPU in the same VM are not seen here |
//! | `AMDGPU_GEM_MMAP` | the object's mmap offset in this file (`GEM_MMAP_BASE` + handle × `GEM_MMAP_STRIDE`); an `mmap` of the render node at it maps the object's pages (the preload library redirects it, [`crate::Sim::gem_mmap_target`]) |
//!
//! Unknown handles give `ENOENT` throughout, as `drm_gem_object_lookup`.

use std::collections::BTreeMap;
use std::mem::offset_of;

use kfd_sys::drm::*;
use kfd_sys::{Errno, PAGE_SIZE};

use super::{read_u32, read_u64, write_u64, Ctx, DrmFile};
use crate::kernel::usermem;

/// First mmap offset of GEM objects in a render file: above the render
/// memfd the KFD buffers live in (4 TiB), like the DRM core's offsets
/// above `DRM_FILE_PAGE_OFFSET_START`.
pub const GEM_MMAP_BASE: u64 = 1 << 46;
/// The mmap window of each GEM handle (1 TiB, more than any object).
pub const GEM_MMAP_STRIDE: u64 = 1 << 40;

/// Most UMD metadata bytes an object keeps (`sizeof(data.data)`).
pub const GEM_METADATA_MAX: usize = 256;

/// `AMDGPU_VA_RESERVED_BOTTOM`: GEM_VA refuses addresses below it.
const VA_RESERVED_BOTTOM: u64 = 1 << 16;
/// `AMDGPU_VA_RESERVED_TOP` (trap 8 KiB + seq64 2 MiB + CSA 2 MiB).
const VA_RESERVED_TOP: u64 = (2 << 12) + (2 << 20) + (2 << 20);
/// `AMDGPU_GMC_HOLE_START` / `_END` / `_MASK`.
const HOLE_START: u64 = 0x0000_8000_0000_0000;
const HOLE_END: u64 = 0xffff_8000_0000_0000;
const HOLE_MASK: u64 = 0x0000_ffff_ffff_ffff;
/// The VM size of the model's GPUs (48-bit, `max_pfn` × 4 KiB).
const VM_SIZE: u64 = 1 << 48;
/// `AMDGPU_VM_PAGE_NOALLOC` (newer than libdrm 2.4.114's header).
const VM_PAGE_NOALLOC: u32 = 1 << 9;

/// What `AMDGPU_GEM_METADATA` keeps on an object.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct GemMetadata {
    /// `data.flags` (set with non-empty data only).
    pub flags: u64,
    /// `data.tiling_info`.
    pub tiling_info: u64,
    /// The UMD bytes (`data.data[..data_size_bytes]`), at most
    /// [`GEM_METADATA_MAX`].
    pub data: Vec<u8>,
}

impl GemMetadata {
    /// A self-describing byte image (flags, tiling, length, data), the
    /// form the model stores on a dma-buf file.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(20 + self.data.len());
        b.extend_from_slice(&self.flags.to_le_bytes());
        b.extend_from_slice(&self.tiling_info.to_le_bytes());
        b.extend_from_slice(&(self.data.len() as u32).to_le_bytes());
        b.extend_from_slice(&self.data);
        b
    }

    /// Reads [`GemMetadata::to_bytes`] back; `None` if `b` is not one.
    pub fn from_bytes(b: &[u8]) -> Option<GemMetadata> {
        let u64_at = |o: usize| Some(u64::from_le_bytes(b.get(o..o + 8)?.try_into().ok()?));
        let len = u32::from_le_bytes(b.get(16..20)?.try_into().ok()?) as usize;
        let data = b.get(20..)?;
        (len == data.len() && len <= GEM_METADATA_MAX).then(|| GemMetadata {
            flags: u64_at(0).unwrap_or(0),
            tiling_info: u64_at(8).unwrap_or(0),
            data: data.to_vec(),
        })
    }

    /// The metadata after `AMDGPU_GEM_METADATA_OP_SET_METADATA` with
    /// `flags`, `tiling_info` and `data`: the tiling word always, the
    /// flags and data only when there is data (no data clears it).
    pub fn set(&self, flags: u64, tiling_info: u64, data: &[u8]) -> GemMetadata {
        if data.is_empty() {
            GemMetadata {
                flags: self.flags,
                tiling_info,
                data: Vec::new(),
            }
        } else {
            GemMetadata {
                flags,
                tiling_info,
                data: data.to_vec(),
            }
        }
    }
}

/// One GPU VA mapping of a render file's VM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VaMapping {
    /// The GEM handle mapped.
    pub handle: u32,
    /// Offset in the object.
    pub offset: u64,
    /// Size in bytes.
    pub size: u64,
    /// `AMDGPU_VM_*` flags.
    pub flags: u32,
}

/// The GPU VA mappings of one render file, by start address.
pub(super) type VaMap = BTreeMap<u64, VaMapping>;

/// `amdgpu_vm_verify_parameters`: page-aligned start, offset and size, a
/// size above 0, no overflow, inside the object when there is one.
fn verify(addr: u64, offset: u64, size: u64, object_size: Option<u64>) -> Result<(), Errno> {
    if (addr | offset | size) & (PAGE_SIZE - 1) != 0 || size == 0 {
        return Err(Errno::EINVAL);
    }
    let end = addr.checked_add(size).ok_or(Errno::EINVAL)?;
    let last = offset.checked_add(size).ok_or(Errno::EINVAL)?;
    if end > VM_SIZE || object_size.is_some_and(|s| last > s) {
        return Err(Errno::EINVAL);
    }
    Ok(())
}

/// Removes `[addr, addr + size)` from `va`, cutting mappings that cross
/// its ends (`amdgpu_vm_bo_clear_mappings`).
fn clear_range(va: &mut VaMap, addr: u64, size: u64) {
    let end = addr + size;
    let hit: Vec<(u64, VaMapping)> = va
        .range(..end)
        .rev()
        .take_while(|(s, m)| *s + m.size > addr)
        .map(|(s, m)| (*s, *m))
        .collect();
    for (start, m) in hit {
        va.remove(&start);
        if start < addr {
            va.insert(
                start,
                VaMapping {
                    size: addr - start,
                    ..m
                },
            );
        }
        let m_end = start + m.size;
        if m_end > end {
            va.insert(
                end,
                VaMapping {
                    offset: m.offset + (end - start),
                    size: m_end - end,
                    ..m
                },
            );
        }
    }
}

impl DrmFile {
    pub(super) fn gem_metadata(&self, c: &Ctx<'_>) -> Result<i32, Errno> {
        type M = drm_amdgpu_gem_metadata;
        type D = drm_amdgpu_gem_metadata_data;
        let handle = read_u32(c.arg + offset_of!(M, handle) as u64)?;
        let op = read_u32(c.arg + offset_of!(M, op) as u64)?;
        let object = self.object(handle).ok_or(Errno::ENOENT)?;
        let data = c.arg + offset_of!(M, data) as u64;
        match op {
            AMDGPU_GEM_METADATA_OP_GET_METADATA => {
                let md = c.gem.metadata(object)?;
                write_u64(data + offset_of!(D, tiling_info) as u64, md.tiling_info)?;
                usermem::write(data + offset_of!(D, data) as u64, &md.data)?;
                usermem::write(
                    data + offset_of!(D, data_size_bytes) as u64,
                    &(md.data.len() as u32).to_ne_bytes(),
                )?;
                write_u64(data + offset_of!(D, flags) as u64, md.flags)?;
            }
            AMDGPU_GEM_METADATA_OP_SET_METADATA => {
                let n = read_u32(data + offset_of!(D, data_size_bytes) as u64)? as usize;
                if n > GEM_METADATA_MAX {
                    return Err(Errno::EINVAL);
                }
                let mut bytes = vec![0u8; n];
                usermem::read(data + offset_of!(D, data) as u64, &mut bytes)?;
                let flags = read_u64(data + offset_of!(D, flags) as u64)?;
                let tiling = read_u64(data + offset_of!(D, tiling_info) as u64)?;
                let md = c.gem.metadata(object)?.set(flags, tiling, &bytes);
                c.gem.set_metadata(object, md)?;
            }
            _ => return Err(Errno::EINVAL),
        }
        Ok(0)
    }

    pub(super) fn gem_op(&self, c: &Ctx<'_>) -> Result<i32, Errno> {
        type O = drm_amdgpu_gem_op;
        let handle = read_u32(c.arg + offset_of!(O, handle) as u64)?;
        let op = read_u32(c.arg + offset_of!(O, op) as u64)?;
        let value = read_u64(c.arg + offset_of!(O, value) as u64)?;
        let object = self.object(handle).ok_or(Errno::ENOENT)?;
        match op {
            AMDGPU_GEM_OP_GET_GEM_CREATE_INFO => {
                type I = drm_amdgpu_gem_create_in;
                let info = c.gem.create_info(object)?;
                write_u64(value + offset_of!(I, bo_size) as u64, info.bo_size)?;
                write_u64(value + offset_of!(I, alignment) as u64, info.alignment)?;
                write_u64(value + offset_of!(I, domains) as u64, info.domains)?;
                write_u64(
                    value + offset_of!(I, domain_flags) as u64,
                    info.domain_flags,
                )?;
            }
            AMDGPU_GEM_OP_SET_PLACEMENT => {
                let domains = value
                    & (AMDGPU_GEM_DOMAIN_VRAM | AMDGPU_GEM_DOMAIN_GTT | AMDGPU_GEM_DOMAIN_CPU);
                c.gem.set_placement(object, domains)?;
            }
            _ => return Err(Errno::EINVAL),
        }
        Ok(0)
    }

    pub(super) fn gem_va(&self, c: &Ctx<'_>) -> Result<i32, Errno> {
        type V = drm_amdgpu_gem_va;
        let handle = read_u32(c.arg + offset_of!(V, handle) as u64)?;
        let op = read_u32(c.arg + offset_of!(V, operation) as u64)?;
        let flags = read_u32(c.arg + offset_of!(V, flags) as u64)?;
        let addr = read_u64(c.arg + offset_of!(V, va_address) as u64)?;
        let offset = read_u64(c.arg + offset_of!(V, offset_in_bo) as u64)?;
        let size = read_u64(c.arg + offset_of!(V, map_size) as u64)?;
        if addr < VA_RESERVED_BOTTOM || (HOLE_START..HOLE_END).contains(&addr) {
            return Err(Errno::EINVAL);
        }
        let addr = addr & HOLE_MASK;
        if size > (VM_SIZE - VA_RESERVED_TOP).saturating_sub(addr) {
            return Err(Errno::EINVAL);
        }
        let valid = AMDGPU_VM_DELAY_UPDATE
            | AMDGPU_VM_PAGE_READABLE
            | AMDGPU_VM_PAGE_WRITEABLE
            | AMDGPU_VM_PAGE_EXECUTABLE
            | AMDGPU_VM_MTYPE_MASK
            | VM_PAGE_NOALLOC;
        let prt = AMDGPU_VM_DELAY_UPDATE | AMDGPU_VM_PAGE_PRT;
        if flags & !valid != 0 && flags & !prt != 0 {
            return Err(Errno::EINVAL);
        }
        if !matches!(
            op,
            AMDGPU_VA_OP_MAP | AMDGPU_VA_OP_UNMAP | AMDGPU_VA_OP_CLEAR | AMDGPU_VA_OP_REPLACE
        ) {
            return Err(Errno::EINVAL);
        }
        let object_size = if op != AMDGPU_VA_OP_CLEAR && flags & AMDGPU_VM_PAGE_PRT == 0 {
            let object = self.object(handle).ok_or(Errno::ENOENT)?;
            Some(c.gem.create_info(object)?.bo_size)
        } else {
            None
        };
        let mapping = VaMapping {
            handle: if object_size.is_some() { handle } else { 0 },
            offset,
            size,
            flags,
        };
        let mut va = super::lock(&self.va);
        match op {
            AMDGPU_VA_OP_MAP => {
                verify(addr, offset, size, object_size)?;
                let end = addr + size;
                if va
                    .range(..end)
                    .next_back()
                    .is_some_and(|(s, m)| s + m.size > addr)
                {
                    return Err(Errno::EINVAL);
                }
                va.insert(addr, mapping);
            }
            AMDGPU_VA_OP_UNMAP => match va.get(&addr) {
                Some(m) if m.handle == mapping.handle => {
                    va.remove(&addr);
                }
                _ => return Err(Errno::ENOENT),
            },
            AMDGPU_VA_OP_CLEAR => {
                verify(addr, 0, size, None)?;
                clear_range(&mut va, addr, size);
            }
            _ => {
                verify(addr, offset, size, object_size)?;
                clear_range(&mut va, addr, size);
                va.insert(addr, mapping);
            }
        }
        Ok(0)
    }

    pub(super) fn gem_mmap(&self, c: &Ctx<'_>) -> Result<i32, Errno> {
        let handle = read_u32(c.arg + offset_of!(drm_amdgpu_gem_mmap_in, handle) as u64)?;
        self.object(handle).ok_or(Errno::ENOENT)?;
        let offset = u64::from(handle)
            .checked_mul(GEM_MMAP_STRIDE)
            .and_then(|o| o.checked_add(GEM_MMAP_BASE))
            .filter(|o| *o < i64::MAX as u64)
            .ok_or(Errno::ENOSPC)?;
        // The union's output overlays the whole argument.
        write_u64(c.arg, offset)?;
        Ok(0)
    }

    /// The GEM handle and the offset inside its object of an mmap offset
    /// `DRM_IOCTL_AMDGPU_GEM_MMAP` handed out, if `offset` is one.
    pub fn gem_mmap_handle(&self, offset: u64) -> Option<(u32, u64)> {
        let rel = offset.checked_sub(GEM_MMAP_BASE)?;
        let handle = u32::try_from(rel / GEM_MMAP_STRIDE).ok()?;
        self.object(handle)?;
        Some((handle, rel % GEM_MMAP_STRIDE))
    }

    /// The GPU VA mappings of this file, by start address.
    pub fn va_mappings(&self) -> Vec<(u64, VaMapping)> {
        super::lock(&self.va)
            .iter()
            .map(|(a, m)| (*a, *m))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(handle: u32, offset: u64, size: u64) -> VaMapping {
        VaMapping {
            handle,
            offset,
            size,
            flags: 0,
        }
    }

    #[test]
    fn metadata_bytes_round_trip_and_set_rules() {
        let md = GemMetadata {
            flags: 7,
            tiling_info: 9,
            data: vec![1, 2, 3, 4, 5],
        };
        assert_eq!(GemMetadata::from_bytes(&md.to_bytes()), Some(md.clone()));
        assert_eq!(GemMetadata::from_bytes(&[0; 19]), None);
        let mut long = md.to_bytes();
        long.push(0);
        assert_eq!(GemMetadata::from_bytes(&long), None);
        // No data: the tiling word changes, the flags stay, data goes.
        let cleared = md.set(1, 2, &[]);
        assert_eq!((cleared.flags, cleared.tiling_info), (7, 2));
        assert!(cleared.data.is_empty());
        assert_eq!(md.set(1, 2, &[9]).flags, 1);
    }

    #[test]
    fn clear_cuts_mappings_at_the_range_ends() {
        let mut va = VaMap::new();
        va.insert(0x10000, map(1, 0, 0x4000));
        va.insert(0x20000, map(2, 0x1000, 0x2000));
        clear_range(&mut va, 0x11000, 0x10000);
        let left: Vec<(u64, VaMapping)> = va.into_iter().collect();
        assert_eq!(
            left,
            [
                (0x10000, map(1, 0, 0x1000)),
                (0x21000, map(2, 0x2000, 0x1000))
            ]
        );
        assert_eq!(verify(0x1000, 0, 0, None), Err(Errno::EINVAL));
        assert_eq!(verify(0x1001, 0, 0x1000, None), Err(Errno::EINVAL));
        assert_eq!(
            verify(0x1000, 0x1000, 0x2000, Some(0x2000)),
            Err(Errno::EINVAL)
        );
        assert_eq!(verify(0x1000, 0x1000, 0x1000, Some(0x2000)), Ok(()));
        assert_eq!(verify(!0xfff, 0, 0x1000, None), Err(Errno::EINVAL));
    }
}
