//! The aperture set of a memory manager: the SVM apertures, the handle
//! aperture of address-less memory and each GPU's own apertures.

use std::sync::Arc;

use kfd_sys::mapping::SharedReservation;

use super::{FmmOptions, Range};
use crate::aperture::{reserve_svm_range, Aperture, GPU_HUGE_PAGE_SIZE};
use crate::error::{AddressSpace, Result};
use crate::objects::ApId;
use crate::va::align_up;
use crate::PAGE_SIZE;

/// Start of the handle aperture for address-less allocations: a
/// non-canonical range no CPU or GPU address can fall into.
const MEM_HANDLE_BASE: u64 = 1 << 56;

/// The apertures the kernel reported for one GPU.
#[derive(Debug)]
pub(super) struct GpuApertures {
    /// LDS aperture.
    pub lds: Range,
    /// Scratch aperture.
    pub scratch: Range,
    /// The GPU's own GPUVM aperture (GPUs whose VM does not cover the
    /// canonical address space).
    pub gpuvm: Option<Aperture>,
}

/// Where a memory manager places addresses.
///
/// Invariants: `gpu` has one entry per GPU of the manager's GPU set, by
/// GPU index; `svm_alt` is set only with `svm`, and both then lie in
/// `svm_reservation`.
#[derive(Debug)]
pub(super) struct Apertures {
    svm: Option<Aperture>,
    svm_alt: Option<Aperture>,
    /// The SVM range this manager reserved (GPUs that do not address
    /// the whole canonical range); the apertures inside share it.
    svm_reservation: Option<Arc<SharedReservation>>,
    mem_handle: Aperture,
    gpu: Vec<GpuApertures>,
}

impl Apertures {
    /// The apertures of a manager of `gpus` GPUs before the kernel is
    /// asked: the handle aperture only.
    pub fn new(gpus: usize, guard_pages: u32) -> Apertures {
        let mem_handle = Aperture::reserved(
            AddressSpace::MemHandle,
            MEM_HANDLE_BASE,
            MEM_HANDLE_BASE + (1 << 47) - 1,
            PAGE_SIZE,
            guard_pages,
            None,
        );
        let empty = Range { base: 0, limit: 0 };
        Apertures {
            svm: None,
            svm_alt: None,
            svm_reservation: None,
            mem_handle,
            gpu: (0..gpus)
                .map(|_| GpuApertures {
                    lds: empty,
                    scratch: empty,
                    gpuvm: None,
                })
                .collect(),
        }
    }

    /// Records the apertures of GPU `gi`.
    pub fn set_gpu(&mut self, gi: usize, apertures: GpuApertures) {
        self.gpu[gi] = apertures;
    }

    /// The apertures of GPU `gi`.
    pub fn gpu(&self, gi: usize) -> &GpuApertures {
        &self.gpu[gi]
    }

    /// The default (non-coherent) SVM aperture.
    pub fn svm(&self) -> Option<&Aperture> {
        self.svm.as_ref()
    }

    /// The coherent SVM aperture (the default one when they are not
    /// split).
    pub fn coherent(&self) -> Option<&Aperture> {
        self.svm_alt.as_ref().or(self.svm.as_ref())
    }

    /// Whether the SVM range is split into a coherent and a default
    /// aperture.
    pub fn is_split(&self) -> bool {
        self.svm_alt.is_some()
    }

    /// The aperture `id` names, if it exists.
    pub fn get(&self, id: ApId) -> Option<&Aperture> {
        match id {
            ApId::SvmDefault => self.svm.as_ref(),
            ApId::SvmCoherent => self.coherent(),
            ApId::Gpuvm(gi) => self.gpu.get(gi)?.gpuvm.as_ref(),
            ApId::MemHandle => Some(&self.mem_handle),
            ApId::CpuVm => None,
        }
    }

    /// The SVM range (start of the coherent aperture to the end of the
    /// default one), if any.
    pub fn svm_range(&self) -> Option<Range> {
        let d = self.svm.as_ref()?;
        let a = self.coherent()?;
        Some(Range {
            base: a.base.min(d.base),
            limit: d.limit.max(a.limit),
        })
    }

    /// Sets up the SVM apertures over `[base, limit]` (rounded inwards to
    /// GPU huge pages) with allocation alignment `align`: mmap-managed
    /// when the range is the whole canonical one and mmap places an
    /// address in it, else a reservation split into a coherent quarter
    /// and a default rest.
    pub fn init_svm(&mut self, base: u64, limit: u64, align: u64, opts: &FmmOptions) -> Result<()> {
        let base = align_up(base, GPU_HUGE_PAGE_SIZE);
        let limit = ((limit + 1) & !(GPU_HUGE_PAGE_SIZE - 1)).wrapping_sub(1);
        let guard = opts.guard_pages;
        if limit >= (1 << 47) - 1 && !opts.reserve_svm && align <= PAGE_SIZE {
            // The GPUs address the whole canonical range: let mmap place
            // allocations. Probe once; fall back to a reservation if mmap
            // cannot give us an address in range.
            let ap = Aperture::mmap(base, limit, align, guard, opts.max_va_align_order);
            // The probe range goes back when it drops.
            if ap.allocate(None, PAGE_SIZE, 0).is_ok() {
                self.svm = Some(ap);
                return Ok(());
            }
        }
        let res = Arc::new(SharedReservation::new(reserve_svm_range(base, limit)?));
        let (b, l) = (res.addr(), res.addr() + res.len() - 1);
        // The first quarter (64 KiB aligned) is the coherent alternate
        // aperture, the rest the default (non-coherent) one.
        let alt_base = align_up(b, 0x10000);
        let alt_size = align_up((l - b + 1) >> 2, 0x10000);
        self.svm_alt = Some(Aperture::reserved(
            AddressSpace::Svm,
            alt_base,
            alt_base + alt_size - 1,
            align,
            guard,
            Some(res.clone()),
        ));
        self.svm = Some(Aperture::reserved(
            AddressSpace::Svm,
            alt_base + alt_size,
            l,
            align,
            guard,
            Some(res.clone()),
        ));
        self.svm_reservation = Some(res);
        Ok(())
    }
}
