//! The process apertures of a GPU node, as the memory manager set them
//! up: what the topology queries of the C API report next to the sysfs
//! values (the banks the thunk adds are made by the `hsakmt` border).

/// A process aperture: `base..=limit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Aperture {
    /// First address.
    pub base: u64,
    /// Last address.
    pub limit: u64,
}

impl Aperture {
    /// `limit - base + 1`.
    pub const fn size(self) -> u64 {
        self.limit.wrapping_sub(self.base).wrapping_add(1)
    }
}

/// The apertures the memory manager set up for one GPU
/// (`fmm_get_aperture_base_and_limit`); an aperture that is `None` is not
/// reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GpuApertures {
    /// LDS aperture.
    pub lds: Option<Aperture>,
    /// GPUVM aperture (only reported as a bank on Kaveri).
    pub gpuvm: Option<Aperture>,
    /// Scratch aperture.
    pub scratch: Option<Aperture>,
    /// SVM aperture.
    pub svm: Option<Aperture>,
    /// The MMIO-remap page, only when it was mapped.
    pub mmio: Option<Aperture>,
}
