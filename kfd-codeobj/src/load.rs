//! Loading without a runtime: the load image is the `PT_LOAD` segments at
//! their `p_vaddr`s in one zeroed span, with the dynamic relocations
//! applied for the GPU address the span will have. The caller copies the
//! bytes into GPU memory at that address; kernel descriptors are then at
//! the base plus their symbol values.

use kfd_sys::hsa::kernel_descriptor_t;
use zerocopy::FromBytes;

use crate::codeobj::{CodeObject, Kernel, Relocation, RelocationKind, Segment};
use crate::Error;

/// Largest load image accepted (a corrupt `p_memsz` must not make the
/// loader allocate terabytes).
const MAX_IMAGE_SIZE: u64 = 1 << 30;

/// The span the `PT_LOAD` segments occupy, and the alignment its base
/// needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// The virtual address of the image's first byte: the lowest
    /// `p_vaddr`, rounded down to `align` (0 for LLVM's code objects).
    pub start_vaddr: u64,
    /// Bytes from `start_vaddr` to the end of the highest segment's memory.
    pub size: u64,
    /// The largest `p_align` of the segments (at least 1): the load base
    /// must be a multiple of it.
    pub align: u64,
}

impl Layout {
    /// The layout of `segments`: checked for overlaps and size.
    pub(crate) fn of(segments: &[Segment]) -> Result<Self, Error> {
        let mut sorted: Vec<&Segment> = segments.iter().collect();
        sorted.sort_by_key(|s| s.vaddr);
        let first = sorted.first().ok_or(Error::NoLoadSegments)?;
        let align = sorted.iter().map(|s| s.align).max().unwrap_or(1).max(1);
        let start_vaddr = first.vaddr & !(align - 1);
        let mut end = start_vaddr;
        for s in &sorted {
            if s.vaddr < end {
                return Err(Error::BadSegment {
                    vaddr: s.vaddr,
                    reason: "it overlaps the segment before it",
                });
            }
            // No overflow: checked when the segment was read.
            end = s.vaddr + s.mem_size;
        }
        let size = end - start_vaddr;
        if size > MAX_IMAGE_SIZE {
            return Err(Error::ImageTooLarge(size));
        }
        Ok(Layout {
            start_vaddr,
            size,
            align,
        })
    }
}

/// A kernel of a loaded image: where its descriptor is and what it says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadedKernel<'co> {
    /// The kernel's metadata and descriptor symbol.
    pub kernel: &'co Kernel,
    /// The descriptor's GPU address: what an AQL dispatch packet's
    /// `kernel_object` holds.
    pub descriptor_address: u64,
    /// The descriptor, read from the image.
    pub descriptor: kernel_descriptor_t,
}

impl LoadedKernel<'_> {
    /// The GPU address of the kernel's first instruction (descriptor
    /// address plus `kernel_code_entry_byte_offset`).
    pub fn entry_address(&self) -> u64 {
        self.descriptor_address
            .wrapping_add_signed(self.descriptor.kernel_code_entry_byte_offset)
    }
}

/// A load image built for one base address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadedImage<'co> {
    /// What was loaded.
    code_object: &'co CodeObject,
    /// The GPU address of `bytes[0]`.
    base: u64,
    /// [`Layout::size`] bytes, relocated.
    bytes: Vec<u8>,
}

impl<'co> LoadedImage<'co> {
    /// The GPU address the image was relocated for.
    pub fn base(&self) -> u64 {
        self.base
    }

    /// The bytes to copy to [`base`](Self::base).
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The kernel named `name`, at its address in this image.
    pub fn kernel(&self, name: &str) -> Result<LoadedKernel<'co>, Error> {
        let kernel = self.code_object.kernel(name)?;
        self.code_object
            .loaded_kernel(kernel, self.base, &self.bytes)
    }

    /// Every kernel, in metadata order.
    pub fn kernels(&self) -> Result<Vec<LoadedKernel<'co>>, Error> {
        self.code_object
            .kernels()
            .iter()
            .map(|k| self.code_object.loaded_kernel(k, self.base, &self.bytes))
            .collect()
    }
}

impl CodeObject {
    /// Where the segments go and how much memory they need.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// Builds the load image for GPU address `base` in a new buffer.
    pub fn load(&self, base: u64) -> Result<LoadedImage<'_>, Error> {
        // The layout bounds the size to MAX_IMAGE_SIZE.
        let mut bytes = vec![0; self.layout.size as usize];
        self.load_into(base, &mut bytes)?;
        Ok(LoadedImage {
            code_object: self,
            base,
            bytes,
        })
    }

    /// Builds the load image for GPU address `base` in `image` (for
    /// example the CPU view of the GPU buffer at `base`): its first
    /// [`Layout::size`] bytes become the segments, zeros between and after
    /// their file bytes, and the relocated words.
    pub fn load_into(&self, base: u64, image: &mut [u8]) -> Result<(), Error> {
        let Layout {
            start_vaddr,
            size,
            align,
        } = self.layout;
        if base % align != 0 {
            return Err(Error::MisalignedBase { base, align });
        }
        let size = size as usize;
        let got = image.len();
        let image = image.get_mut(..size).ok_or(Error::ImageTooSmall {
            needed: self.layout.size,
            got,
        })?;
        image.fill(0);
        for s in &self.segments {
            let at = (s.vaddr - start_vaddr) as usize;
            image[at..at + s.data.len()].copy_from_slice(&s.data);
        }
        // The address of virtual address v is v + delta.
        let delta = base.wrapping_sub(start_vaddr);
        for r in &self.relocations {
            apply(r, delta, start_vaddr, image)?;
        }
        Ok(())
    }

    /// `kernel` in an image built by [`load_into`](Self::load_into) for
    /// `base`: its descriptor's address and contents.
    pub fn loaded_kernel<'co>(
        &'co self,
        kernel: &'co Kernel,
        base: u64,
        image: &[u8],
    ) -> Result<LoadedKernel<'co>, Error> {
        let too_small = || Error::ImageTooSmall {
            needed: self.layout.size,
            got: image.len(),
        };
        let bytes = kernel
            .descriptor_offset
            .checked_sub(self.layout.start_vaddr)
            .and_then(|at| usize::try_from(at).ok())
            .and_then(|at| image.get(at..at.checked_add(size_of::<kernel_descriptor_t>())?))
            .ok_or_else(too_small)?;
        let descriptor = kernel_descriptor_t::read_from_bytes(bytes).map_err(|_| too_small())?;
        Ok(LoadedKernel {
            kernel,
            descriptor_address: base
                .wrapping_sub(self.layout.start_vaddr)
                .wrapping_add(kernel.descriptor_offset),
            descriptor,
        })
    }
}

/// Patches `image` for relocation `r`; virtual address v is at address
/// v + `delta`, and at `image[v - start_vaddr]`.
fn apply(r: &Relocation, delta: u64, start_vaddr: u64, image: &mut [u8]) -> Result<(), Error> {
    // S + A: the symbol's address plus the addend; no symbol is S = 0.
    let symbol_plus_addend = || -> Result<u64, Error> {
        let s = match &r.symbol {
            None => 0,
            Some(sym) => sym
                .value
                .ok_or_else(|| Error::UndefinedSymbol(sym.name.clone()))?
                .wrapping_add(delta),
        };
        Ok(s.wrapping_add_signed(r.addend))
    };
    let bytes: Vec<u8> = match r.kind {
        RelocationKind::None => return Ok(()),
        RelocationKind::Relative64 => delta.wrapping_add_signed(r.addend).to_le_bytes().to_vec(),
        RelocationKind::Abs64 => symbol_plus_addend()?.to_le_bytes().to_vec(),
        RelocationKind::Abs32Lo => (symbol_plus_addend()? as u32).to_le_bytes().to_vec(),
        RelocationKind::Abs32Hi => ((symbol_plus_addend()? >> 32) as u32)
            .to_le_bytes()
            .to_vec(),
        RelocationKind::Abs32 => {
            let v = symbol_plus_addend()?;
            u32::try_from(v)
                .map_err(|_| Error::RelocationOverflow {
                    offset: r.offset,
                    value: v,
                })?
                .to_le_bytes()
                .to_vec()
        }
        RelocationKind::Other(r_type) => {
            return Err(Error::UnsupportedRelocation {
                r_type,
                offset: r.offset,
            })
        }
    };
    let place = r
        .offset
        .checked_sub(start_vaddr)
        .and_then(|at| usize::try_from(at).ok())
        .and_then(|at| image.get_mut(at..at.checked_add(bytes.len())?))
        .ok_or(Error::RelocationOutsideImage { offset: r.offset })?;
    place.copy_from_slice(&bytes);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codeobj::RelocationSymbol;

    /// The gfx90a `vector_add` fixture, which has no relocations of its
    /// own, with `relocations` added.
    fn with_relocations(relocations: Vec<Relocation>) -> CodeObject {
        let mut co =
            CodeObject::parse(include_bytes!("../tests/fixtures/vector_add.gfx90a.co")).unwrap();
        co.relocations = relocations;
        co
    }

    fn abs(kind: RelocationKind, offset: u64, value: Option<u64>, addend: i64) -> Relocation {
        Relocation {
            offset,
            kind,
            symbol: Some(RelocationSymbol {
                name: "sym".into(),
                value,
            }),
            addend,
        }
    }

    fn word(image: &[u8], at: usize) -> u32 {
        u32::from_le_bytes(image[at..at + 4].try_into().unwrap())
    }

    #[test]
    fn abs32_lo_and_hi_split_the_symbol_address() {
        let base = 0x1234_5678_0000_0000;
        let co = with_relocations(vec![
            abs(RelocationKind::Abs32Lo, 0x2dc0, Some(0x880), 4),
            abs(RelocationKind::Abs32Hi, 0x2dc4, Some(0x880), 4),
        ]);
        let image = co.load(base).unwrap();
        assert_eq!(word(image.bytes(), 0x2dc0), 0x884);
        assert_eq!(word(image.bytes(), 0x2dc4), 0x1234_5678);
    }

    #[test]
    fn abs32_must_fit() {
        let co = with_relocations(vec![abs(RelocationKind::Abs32, 0x2dc0, Some(0x880), 0)]);
        assert_eq!(word(co.load(0x1000).unwrap().bytes(), 0x2dc0), 0x1880);
        assert_eq!(
            co.load(0x1_0000_0000).unwrap_err(),
            Error::RelocationOverflow {
                offset: 0x2dc0,
                value: 0x1_0000_0880
            }
        );
    }

    #[test]
    fn undefined_symbols_and_unknown_types_and_bad_places_are_refused() {
        let co = with_relocations(vec![abs(RelocationKind::Abs64, 0x2dc0, None, 0)]);
        assert_eq!(
            co.load(0).unwrap_err(),
            Error::UndefinedSymbol("sym".into())
        );
        let co = with_relocations(vec![abs(RelocationKind::Other(4), 0x2dc0, Some(0), 0)]);
        assert_eq!(
            co.load(0).unwrap_err(),
            Error::UnsupportedRelocation {
                r_type: 4,
                offset: 0x2dc0
            }
        );
        // The image ends at 0x3000 (0x2dc0 + 0x240): the last 8 bytes fit,
        // one more does not.
        let size = co.layout().size;
        let co = with_relocations(vec![abs(RelocationKind::Abs64, size - 8, Some(0), 0)]);
        assert!(co.load(0).is_ok());
        for offset in [size - 7, u64::MAX] {
            let co = with_relocations(vec![abs(RelocationKind::Abs64, offset, Some(0), 0)]);
            assert_eq!(
                co.load(0).unwrap_err(),
                Error::RelocationOutsideImage { offset }
            );
        }
    }

    #[test]
    fn layout_refuses_overlaps_and_huge_images() {
        let seg = |vaddr, mem_size| Segment {
            vaddr,
            mem_size,
            align: 0x1000,
            flags: 4,
            data: Vec::new(),
        };
        assert_eq!(Layout::of(&[]), Err(Error::NoLoadSegments));
        assert_eq!(
            Layout::of(&[seg(0x1000, 0x100), seg(0, 0x1001)]),
            Err(Error::BadSegment {
                vaddr: 0x1000,
                reason: "it overlaps the segment before it"
            })
        );
        assert_eq!(
            Layout::of(&[seg(0x1000, 0x100), seg(0x2000, 0x100)]),
            Ok(Layout {
                start_vaddr: 0x1000,
                size: 0x1100,
                align: 0x1000
            })
        );
        assert_eq!(
            Layout::of(&[seg(0, MAX_IMAGE_SIZE + 1)]),
            Err(Error::ImageTooLarge(MAX_IMAGE_SIZE + 1))
        );
    }
}
