//! Executors: what each instruction does to a [`Wave`] and the memory
//! around it, one module per family of instructions. An executor is
//! looked up by mnemonic once, when its instruction is decoded.

mod ds;
mod gfx11;
mod mfma;
mod salu;
mod smem;
mod sopp;
mod valu;
mod vmem;
mod vop3p;
mod vop3p_half;
mod wmma;

use crate::mem::{Fault, Tlb, Word};

use super::isa::{Enc, Ext, Inst, Target};
use super::wave::Wave;

/// What an instruction asks of the wave scheduler.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Flow {
    /// Go on with the next instruction.
    Next,
    /// Go on at this address.
    Jump(u64),
    /// Wait at the workgroup barrier (the PC is already past it).
    Barrier,
    /// The wave ended (`s_endpgm`).
    End,
    /// The wave stops with an error.
    Error(Stop),
}

impl From<Fault> for Flow {
    fn from(f: Fault) -> Flow {
        Flow::Error(Stop::Fault(f))
    }
}

/// Why a wave stopped before its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// A memory access faulted.
    Fault(Fault),
    /// The instruction exists but the model does not execute it (named by
    /// family, opcode and mnemonic); or an operand form it does not
    /// model.
    Unimplemented {
        /// Encoding family.
        enc: Enc,
        /// Opcode.
        op: u16,
        /// Mnemonic (and the unmodelled detail, if any).
        what: String,
    },
    /// `s_trap` with this trap id (no trap handler runs in the model).
    Trap(u16),
    /// The wave halted itself (`s_sethalt 1`).
    Halted,
}

/// An executor.
pub type Exec = fn(&mut Wave, &Inst, &mut Ctx<'_, '_>) -> Flow;

/// The executor of decoded instruction `i` of `target`: its mnemonic's,
/// except for what the target's generation changed.
pub fn lookup_inst(target: Target, i: &Inst) -> Option<Exec> {
    if target.is_gfx11() {
        match i.ext {
            Ext::None => {}
            // gfx11's DPP16 word is gfx9's DPP word plus fetch-inactive
            // (bit 18); the controls both have (quad_perm, row shifts and
            // rotates, mirrors) run on gfx9's DPP, in the 32-bit
            // encodings, as does DPP8. Fetch-inactive, row_share/
            // row_xmask and DPP in VOP3 are not modelled.
            Ext::Dpp(x)
                if matches!(i.enc, Enc::Vop1 | Enc::Vop2 | Enc::Vopc)
                    && x >> 18 & 1 == 0
                    && matches!(
                        x >> 8 & 0x1ff,
                        0..=0xff | 0x101..=0x10f | 0x111..=0x11f | 0x121..=0x12f | 0x140 | 0x141
                    ) => {}
            Ext::Dpp8(..) if matches!(i.enc, Enc::Vop1 | Enc::Vop2 | Enc::Vopc) => {}
            _ => return None,
        }
    }
    lookup_in(target, i.enc, i.name)
}

/// The executor of mnemonic `name` of family `enc` on `target` (gfx11's
/// renamed mnemonics run on the executors of their gfx9 names).
pub fn lookup_in(target: Target, enc: Enc, name: &str) -> Option<Exec> {
    if target.is_gfx11() {
        gfx11::lookup(enc, name)
    } else {
        lookup(name)
    }
}

/// The executor of mnemonic `name` (by its gfx9 name).
pub fn lookup(name: &str) -> Option<Exec> {
    sopp::lookup(name)
        .or_else(|| salu::lookup(name))
        .or_else(|| smem::lookup(name))
        .or_else(|| valu::lookup(name))
        .or_else(|| vmem::lookup(name))
        .or_else(|| vop3p::lookup(name))
        .or_else(|| mfma::lookup(name))
        .or_else(|| wmma::lookup(name))
        .or_else(|| ds::lookup(name))
}

/// The base of the simulator's private window: addresses the private
/// segment buffer resource and flat-scratch base point at. Above every
/// user-space address, so no CPU memory lives there.
pub const PRIVATE_WINDOW: u64 = 0xff00_0000_0000;

/// The hardware a wave runs on: memory, its workgroup's LDS and its
/// private segment.
pub struct Ctx<'a, 'm> {
    /// The target.
    pub target: Target,
    /// GPU memory.
    pub tlb: &'a mut Tlb<'m>,
    /// The workgroup's LDS (its size is the dispatch's group segment).
    pub lds: &'a mut Vec<u8>,
    /// The running wave's private memory (swizzled as the hardware lays
    /// out scratch: dword `i` of lane `l` at byte `(i * 64 + l) * 4`).
    pub private: &'a mut Vec<u8>,
    /// Largest private memory a wave may grow to (bytes per wave).
    pub private_limit: usize,
    /// The shared (LDS) aperture base of flat addresses.
    pub shared_base: u64,
    /// The private aperture base of flat addresses.
    pub private_base: u64,
    /// The GPU's clock (`s_memtime`), in its ticks.
    pub clock: &'a (dyn Fn() -> u64 + Sync),
    /// The constant-rate clock (`s_memrealtime`).
    pub realtime: &'a (dyn Fn() -> u64 + Sync),
}

impl std::fmt::Debug for Ctx<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ctx")
            .field("target", &self.target)
            .field("lds", &self.lds.len())
            .field("private", &self.private.len())
            .finish_non_exhaustive()
    }
}

/// Where a flat address points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Segment {
    /// Global memory at this address.
    Global(u64),
    /// LDS at this offset.
    Lds(u32),
    /// The lane's private memory at this offset.
    Private(u32),
}

impl Ctx<'_, '_> {
    /// Which segment the flat address `addr` lies in.
    #[inline]
    pub fn segment(&self, addr: u64) -> Segment {
        let hi = addr >> 32;
        if hi == self.shared_base >> 32 {
            Segment::Lds(addr as u32)
        } else if hi == self.private_base >> 32 {
            Segment::Private(addr as u32)
        } else {
            Segment::Global(addr)
        }
    }

    /// Loads from LDS at `off`: 0 beyond the allocation, as the hardware's
    /// LDS bounds check gives.
    #[inline]
    pub fn lds_load<T: Word>(&self, off: u32) -> T {
        let off = off as usize;
        match self.lds.get(off..off + T::SIZE) {
            Some(b) => T::from_bytes(b),
            None => T::default(),
        }
    }

    /// Stores to LDS at `off` (dropped beyond the allocation).
    #[inline]
    pub fn lds_store<T: Word>(&mut self, off: u32, v: T) {
        let off = off as usize;
        if let Some(b) = self.lds.get_mut(off..off + T::SIZE) {
            v.to_bytes(b);
        }
    }

    /// The byte offset in the wave's private memory of byte `off` of lane
    /// `lane`'s private segment (dword-interleaved, as the hardware's
    /// swizzled scratch), growing the memory as needed; `None` past the
    /// limit.
    #[inline]
    fn private_at(&mut self, lane: usize, off: u32, size: usize) -> Option<usize> {
        let off = off as usize;
        let at = (off / 4 * super::wave::LANES + lane) * 4 + off % 4;
        // A misaligned access that crosses a dword goes byte by byte.
        if off % 4 + size > 4 {
            return None;
        }
        if at + size > self.private.len() {
            if at + size > self.private_limit {
                return None;
            }
            let want = (at + size).next_power_of_two().min(self.private_limit);
            self.private.resize(want, 0);
        }
        Some(at)
    }

    /// Loads from lane `lane`'s private segment at byte `off`.
    pub fn private_load<T: Word>(&mut self, lane: usize, off: u32) -> Result<T, Fault> {
        if let Some(at) = self.private_at(lane, off, T::SIZE) {
            return Ok(T::from_bytes(&self.private[at..at + T::SIZE]));
        }
        let mut b = [0u8; 8];
        for (i, x) in b[..T::SIZE].iter_mut().enumerate() {
            let at = self
                .private_at(lane, off + i as u32, 1)
                .ok_or(Fault::not_present(
                    self.private_base + u64::from(off),
                    false,
                ))?;
            *x = self.private[at];
        }
        Ok(T::from_bytes(&b))
    }

    /// Stores to lane `lane`'s private segment at byte `off`.
    pub fn private_store<T: Word>(&mut self, lane: usize, off: u32, v: T) -> Result<(), Fault> {
        if let Some(at) = self.private_at(lane, off, T::SIZE) {
            v.to_bytes(&mut self.private[at..at + T::SIZE]);
            return Ok(());
        }
        let mut b = [0u8; 8];
        v.to_bytes(&mut b);
        for (i, x) in b[..T::SIZE].iter().enumerate() {
            let at = self
                .private_at(lane, off + i as u32, 1)
                .ok_or(Fault::not_present(self.private_base + u64::from(off), true))?;
            self.private[at] = *x;
        }
        Ok(())
    }

    /// Loads the word at flat address `addr` for lane `lane`.
    #[inline]
    pub fn flat_load<T: Word>(&mut self, lane: usize, addr: u64) -> Result<T, Fault> {
        match self.segment(addr) {
            Segment::Global(a) => self.tlb.load(a),
            Segment::Lds(o) => Ok(self.lds_load(o)),
            Segment::Private(o) => self.private_load(lane, o),
        }
    }

    /// Stores the word at flat address `addr` for lane `lane`.
    #[inline]
    pub fn flat_store<T: Word>(&mut self, lane: usize, addr: u64, v: T) -> Result<(), Fault> {
        match self.segment(addr) {
            Segment::Global(a) => self.tlb.store(a, v),
            Segment::Lds(o) => {
                self.lds_store(o, v);
                Ok(())
            }
            Segment::Private(o) => self.private_store(lane, o, v),
        }
    }

    /// Atomically replaces the word at flat address `addr` with `f(old)`
    /// and returns `old` (LDS and private memory belong to one thread,
    /// so a plain read-modify-write is atomic there).
    #[inline]
    pub fn flat_update<T: Word>(
        &mut self,
        lane: usize,
        addr: u64,
        f: &mut dyn FnMut(T) -> T,
    ) -> Result<T, Fault> {
        match self.segment(addr) {
            Segment::Global(a) => self.tlb.update(a, f),
            Segment::Lds(o) => {
                let old = self.lds_load::<T>(o);
                self.lds_store(o, f(old));
                Ok(old)
            }
            Segment::Private(o) => {
                let old = self.private_load::<T>(lane, o)?;
                self.private_store(lane, o, f(old))?;
                Ok(old)
            }
        }
    }
}

/// A [`Stop::Unimplemented`] for `inst`, naming `detail` (an operand form
/// or modifier the model lacks).
pub fn unimplemented(inst: &Inst, detail: &str) -> Flow {
    Flow::Error(Stop::Unimplemented {
        enc: inst.enc,
        op: inst.op,
        what: if detail.is_empty() {
            inst.name.to_string()
        } else {
            format!("{} ({detail})", inst.name)
        },
    })
}
