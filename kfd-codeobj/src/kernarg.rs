//! Kernel argument buffers: the explicit arguments the caller sets by
//! index, the hidden ones computed from the dispatch's shape (code object
//! v5's implicit block: block counts, group sizes, remainders, grid
//! dimensions; v4's global offsets), each at its metadata offset.

use crate::metadata::{KernelArg, KernelMetadata, ValueKind};
use crate::Error;

/// The alignment HSA requires of a dispatch's kernarg address
/// (`hsa_kernel_dispatch_packet_t::kernarg_address`).
const HSA_KERNARG_ALIGN: u32 = 16;

/// The shape of a dispatch, as an AQL kernel dispatch packet gives it,
/// and the values of hidden arguments it does not determine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dispatch {
    /// Work-items per dimension (the packet's `grid_size_x/y/z`).
    pub grid_size: [u32; 3],
    /// Work-items per workgroup per dimension (`workgroup_size_x/y/z`).
    pub workgroup_size: [u16; 3],
    /// Dimensions, when set explicitly.
    dims: Option<u16>,
    /// Hidden argument values given by the caller.
    given: Vec<(ValueKind, u64)>,
}

impl Dispatch {
    /// A dispatch of `grid_size` work-items in workgroups of
    /// `workgroup_size`.
    pub fn new(grid_size: [u32; 3], workgroup_size: [u16; 3]) -> Self {
        Dispatch {
            grid_size,
            workgroup_size,
            dims: None,
            given: Vec::new(),
        }
    }

    /// A one-dimensional dispatch.
    pub fn linear(grid_size: u32, workgroup_size: u16) -> Self {
        Self::new([grid_size, 1, 1], [workgroup_size, 1, 1])
    }

    /// Sets the dimension count (the packet's `setup` field) instead of
    /// deriving it.
    pub fn with_dims(mut self, dims: u16) -> Self {
        self.dims = Some(dims);
        self
    }

    /// Gives the value of a hidden argument: an address the kernel needs
    /// (`HiddenHostcallBuffer`, `HiddenHeapV1`, `HiddenQueuePtr`...), a
    /// global offset, or a replacement for a computed value. Hidden
    /// arguments neither computed nor given are zero.
    pub fn with_hidden(mut self, kind: ValueKind, value: u64) -> Self {
        self.given.retain(|(k, _)| *k != kind);
        self.given.push((kind, value));
        self
    }

    /// The dimension count: as set by [`with_dims`](Self::with_dims), or
    /// one more than the highest dimension whose grid or workgroup size is
    /// not 1.
    pub fn dims(&self) -> u16 {
        self.dims.unwrap_or_else(|| {
            (0..3u16)
                .rev()
                .find(|&d| {
                    self.grid_size[usize::from(d)] != 1 || self.workgroup_size[usize::from(d)] != 1
                })
                .map_or(1, |d| d + 1)
        })
    }

    /// Refuses shapes no packet can have.
    fn check(&self) -> Result<(), Error> {
        if let Some(dim) = self.workgroup_size.iter().position(|&w| w == 0) {
            return Err(Error::ZeroWorkgroupSize { dim });
        }
        let dims = self.dims();
        if !(1..=3).contains(&dims) {
            return Err(Error::BadGridDims(dims));
        }
        Ok(())
    }

    /// The value of a hidden argument of kind `kind`.
    fn hidden_value(&self, kind: &ValueKind) -> u64 {
        if let Some((_, v)) = self.given.iter().find(|(k, _)| k == kind) {
            return *v;
        }
        let grid = |d: usize| u64::from(self.grid_size[d]);
        // Not zero: `check` refused that.
        let group = |d: usize| u64::from(self.workgroup_size[d]).max(1);
        match kind {
            ValueKind::HiddenBlockCountX => grid(0) / group(0),
            ValueKind::HiddenBlockCountY => grid(1) / group(1),
            ValueKind::HiddenBlockCountZ => grid(2) / group(2),
            ValueKind::HiddenGroupSizeX => group(0),
            ValueKind::HiddenGroupSizeY => group(1),
            ValueKind::HiddenGroupSizeZ => group(2),
            ValueKind::HiddenRemainderX => grid(0) % group(0),
            ValueKind::HiddenRemainderY => grid(1) % group(1),
            ValueKind::HiddenRemainderZ => grid(2) % group(2),
            ValueKind::HiddenGridDims => u64::from(self.dims()),
            _ => 0,
        }
    }
}

/// A finished kernarg buffer: copy it to memory the GPU reads, at an
/// address aligned to [`align`](Self::align), and put that address in the
/// dispatch packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kernarg {
    /// `.kernarg_segment_size` bytes.
    bytes: Vec<u8>,
    /// The alignment the buffer needs.
    align: u32,
}

impl Kernarg {
    /// The bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The alignment of the buffer's address: the kernel's
    /// `.kernarg_segment_align`, and at least the 16 bytes HSA requires.
    pub fn align(&self) -> u32 {
        self.align
    }
}

/// Builds the kernarg buffer of one kernel: explicit arguments are set by
/// their index among the explicit arguments (source order), hidden ones
/// are filled by [`build`](Self::build).
#[derive(Debug, Clone)]
pub struct KernargBuilder<'k> {
    /// The kernel.
    kernel: &'k KernelMetadata,
    /// Its explicit arguments.
    explicit: Vec<&'k KernelArg>,
    /// Their values, once set.
    values: Vec<Option<Vec<u8>>>,
}

impl<'k> KernargBuilder<'k> {
    /// A builder for `kernel` with no argument set.
    pub fn new(kernel: &'k KernelMetadata) -> Self {
        let explicit: Vec<_> = kernel.explicit_args().collect();
        let values = vec![None; explicit.len()];
        KernargBuilder {
            kernel,
            explicit,
            values,
        }
    }

    /// Sets explicit argument `index` to `bytes`, which must be exactly as
    /// long as the argument's `.size`.
    pub fn set_bytes(&mut self, index: usize, bytes: &[u8]) -> Result<&mut Self, Error> {
        let arg = self.explicit.get(index).ok_or(Error::NoSuchArg {
            index,
            count: self.explicit.len(),
        })?;
        if bytes.len() as u64 != u64::from(arg.size) {
            return Err(Error::ArgSize {
                index,
                expected: arg.size,
                got: bytes.len(),
            });
        }
        self.values[index] = Some(bytes.to_vec());
        Ok(self)
    }

    /// Sets a 4-byte argument (`uint`, `int` as two's complement).
    pub fn set_u32(&mut self, index: usize, value: u32) -> Result<&mut Self, Error> {
        self.set_bytes(index, &value.to_le_bytes())
    }

    /// Sets an 8-byte integer argument.
    pub fn set_u64(&mut self, index: usize, value: u64) -> Result<&mut Self, Error> {
        self.set_bytes(index, &value.to_le_bytes())
    }

    /// Sets a `float` argument.
    pub fn set_f32(&mut self, index: usize, value: f32) -> Result<&mut Self, Error> {
        self.set_bytes(index, &value.to_le_bytes())
    }

    /// Sets a pointer argument to the GPU address `address` (8 bytes).
    pub fn set_ptr(&mut self, index: usize, address: u64) -> Result<&mut Self, Error> {
        self.set_bytes(index, &address.to_le_bytes())
    }

    /// The kernarg buffer for `dispatch`: every explicit argument must be
    /// set; hidden arguments get the values of [`Dispatch`].
    pub fn build(&self, dispatch: &Dispatch) -> Result<Kernarg, Error> {
        dispatch.check()?;
        let kernel = self.kernel;
        let mut bytes = vec![0; kernel.kernarg_segment_size as usize];
        for (index, (arg, value)) in self.explicit.iter().zip(&self.values).enumerate() {
            let value = value.as_deref().ok_or_else(|| Error::MissingArg {
                index,
                name: arg.name.clone(),
            })?;
            write(kernel, arg, &mut bytes, value)?;
        }
        for arg in kernel.hidden_args() {
            let value = dispatch.hidden_value(&arg.value_kind);
            let size = arg.size as usize;
            let fits = match size {
                1..=7 => value >> (8 * size) == 0,
                8 => true,
                _ => {
                    return Err(Error::HiddenArgSize {
                        kind: arg.value_kind.clone(),
                        size: arg.size,
                    })
                }
            };
            if !fits {
                return Err(Error::HiddenValueTooLarge {
                    kind: arg.value_kind.clone(),
                    value,
                    size: arg.size,
                });
            }
            write(kernel, arg, &mut bytes, &value.to_le_bytes()[..size])?;
        }
        Ok(Kernarg {
            bytes,
            align: kernel.kernarg_segment_align.max(HSA_KERNARG_ALIGN),
        })
    }
}

/// Copies `value` to `arg`'s place in `bytes`, if the place is inside.
fn write(
    kernel: &KernelMetadata,
    arg: &KernelArg,
    bytes: &mut [u8],
    value: &[u8],
) -> Result<(), Error> {
    let start = arg.offset as usize;
    let place = start
        .checked_add(value.len())
        .and_then(|end| bytes.get_mut(start..end))
        .ok_or_else(|| Error::ArgOutsideSegment {
            kernel: kernel.name.clone(),
            index: kernel
                .args
                .iter()
                .position(|a| std::ptr::eq(a, arg))
                .unwrap_or(usize::MAX),
            offset: arg.offset,
            size: arg.size,
            segment_size: kernel.kernarg_segment_size,
        })?;
    place.copy_from_slice(value);
    Ok(())
}
