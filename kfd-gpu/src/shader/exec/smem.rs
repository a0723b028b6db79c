//! SMEM: scalar loads, stores and atomics through the constant cache,
//! from a 64-bit address (`s_load_*`, `s_store_*`, `s_atomic_*`) or a
//! buffer resource (`s_buffer_*`), and the cache and clock instructions.
//!
//! The gfx9 encoding: SBASE (SGPR pair / quad, in units of two) in bits
//! 5:0, SDATA in 12:6, SOE (scalar offset enable) in 14, GLC in 16, IMM
//! in 17, the opcode in 25:18; the second word holds the 21-bit offset in
//! 20:0 and SOFFSET in 31:25. IMM=1 makes the offset field an immediate
//! (signed for `s_load`/`s_store`/`s_atomic`, 20-bit unsigned for the
//! buffer forms) to which SOE adds SGPR[SOFFSET]; IMM=0 takes the offset
//! from SGPR[SOFFSET] when SOE is set, else from the SGPR named by the
//! offset field's bits 6:0. Scalar memory ignores the address's low two
//! bits.

use super::vmem::{atom, rmw32, rmw64};
use super::{unimplemented, Ctx, Exec, Flow};
use crate::shader::isa::Inst;
use crate::shader::wave::Wave;

/// The executor of an SMEM mnemonic.
pub(super) fn lookup(name: &str) -> Option<Exec> {
    if let Some(e) = atomic(name) {
        return Some(e);
    }
    Some(match name {
        "s_load_dword" => |w, i, c| load(w, i, c, 1),
        "s_load_dwordx2" => |w, i, c| load(w, i, c, 2),
        "s_load_dwordx4" => |w, i, c| load(w, i, c, 4),
        "s_load_dwordx8" => |w, i, c| load(w, i, c, 8),
        "s_load_dwordx16" => |w, i, c| load(w, i, c, 16),
        "s_buffer_load_dword" => |w, i, c| buffer_load(w, i, c, 1),
        "s_buffer_load_dwordx2" => |w, i, c| buffer_load(w, i, c, 2),
        "s_buffer_load_dwordx4" => |w, i, c| buffer_load(w, i, c, 4),
        "s_buffer_load_dwordx8" => |w, i, c| buffer_load(w, i, c, 8),
        "s_buffer_load_dwordx16" => |w, i, c| buffer_load(w, i, c, 16),
        "s_store_dword" => |w, i, c| store(w, i, c, 1),
        "s_store_dwordx2" => |w, i, c| store(w, i, c, 2),
        "s_store_dwordx4" => |w, i, c| store(w, i, c, 4),
        "s_buffer_store_dword" => |w, i, c| buffer_store(w, i, c, 1),
        "s_buffer_store_dwordx2" => |w, i, c| buffer_store(w, i, c, 2),
        "s_buffer_store_dwordx4" => |w, i, c| buffer_store(w, i, c, 4),
        // The model has no scalar cache and no address translation cache
        // to probe: memory is coherent as soon as an access completes.
        "s_dcache_wb"
        | "s_dcache_inv"
        | "s_dcache_wb_vol"
        | "s_dcache_inv_vol"
        | "s_dcache_discard"
        | "s_dcache_discard_x2"
        | "s_atc_probe"
        | "s_atc_probe_buffer"
        | "s_gl1_inv" => |_, _, _| Flow::Next,
        "s_memtime" => |w, i, c| {
            w.write64(sdata(i), (c.clock)());
            Flow::Next
        },
        "s_memrealtime" => |w, i, c| {
            w.write64(sdata(i), (c.realtime)());
            Flow::Next
        },
        _ => return None,
    })
}

/// SDATA: the first data register.
fn sdata(i: &Inst) -> u16 {
    ((i.w[0] >> 6) & 0x7f) as u16
}

/// SBASE: the first register of the address pair or resource quad.
fn sbase(i: &Inst) -> u16 {
    (i.w[0] & 0x3f) as u16 * 2
}

/// GLC: an atomic returns the memory's old value.
fn glc(i: &Inst) -> bool {
    i.w[0] & (1 << 16) != 0
}

/// The offset an SMEM instruction adds to its base; `None` for a buffer
/// instruction whose immediate has bit 20 set (beyond the 20-bit
/// unsigned buffer offset).
fn offset(w: &Wave, i: &Inst, buffer: bool) -> Option<u64> {
    let (w0, w1) = (i.w[0], i.w[1]);
    let imm = w0 & (1 << 17) != 0;
    let soe = w0 & (1 << 14) != 0;
    let field = w1 & 0x1f_ffff;
    let soff = || u64::from(w.read32(((w1 >> 25) & 0x7f) as u16, None));
    if !imm {
        return Some(if soe {
            soff()
        } else {
            u64::from(w.read32((field & 0x7f) as u16, None))
        });
    }
    let k = if buffer {
        if field >> 20 != 0 {
            return None;
        }
        u64::from(field)
    } else {
        ((field << 11) as i32 >> 11) as i64 as u64
    };
    Some(if soe { k.wrapping_add(soff()) } else { k })
}

/// The address of an `s_load`/`s_store`/`s_atomic` access: the 48-bit
/// address in the SBASE pair plus the offset, without its low two bits.
pub(super) fn address(w: &Wave, i: &Inst) -> u64 {
    let base = w.read64(sbase(i), None) & 0xffff_ffff_ffff;
    base.wrapping_add(offset(w, i, false).unwrap_or(0)) & !3
}

/// A buffer resource (V#) as scalar memory uses it.
struct Buffer {
    base: u64,
    /// Bytes the buffer has.
    records: u64,
}

/// The resource in the SBASE quad and the access's byte offset in it
/// (low two bits clear); `Err` for a form the model does not have.
fn buffer(w: &Wave, i: &Inst) -> Result<(Buffer, u64), Flow> {
    let s = sbase(i);
    let d: [u32; 4] = std::array::from_fn(|k| w.read32(s + k as u16, None));
    if (d[1] >> 16) & 0x3fff != 0 {
        return Err(unimplemented(i, "buffer with a stride"));
    }
    let Some(off) = offset(w, i, true) else {
        return Err(unimplemented(i, "buffer offset beyond 20 bits"));
    };
    let b = Buffer {
        base: u64::from(d[0]) | u64::from(d[1] & 0xffff) << 32,
        records: u64::from(d[2]),
    };
    Ok((b, off & !3))
}

impl Buffer {
    /// The address of the dword at byte `off`, or `None` out of range.
    fn at(&self, off: u64) -> Option<u64> {
        if off + 4 <= self.records {
            Some(self.base.wrapping_add(off) & 0xffff_ffff_ffff)
        } else {
            None
        }
    }
}

fn load(w: &mut Wave, i: &Inst, c: &mut Ctx<'_, '_>, n: u16) -> Flow {
    let a = address(w, i);
    let d = sdata(i);
    for k in 0..n {
        match c.tlb.load::<u32>(a.wrapping_add(4 * u64::from(k))) {
            Ok(v) => w.write32(d + k, v),
            Err(f) => return f.into(),
        }
    }
    Flow::Next
}

fn store(w: &mut Wave, i: &Inst, c: &mut Ctx<'_, '_>, n: u16) -> Flow {
    let a = address(w, i);
    let d = sdata(i);
    for k in 0..n {
        let v = w.read32(d + k, None);
        if let Err(f) = c.tlb.store::<u32>(a.wrapping_add(4 * u64::from(k)), v) {
            return f.into();
        }
    }
    Flow::Next
}

/// `s_buffer_load_*`: dwords past the buffer's size read 0.
fn buffer_load(w: &mut Wave, i: &Inst, c: &mut Ctx<'_, '_>, n: u16) -> Flow {
    let (b, off) = match buffer(w, i) {
        Ok(x) => x,
        Err(e) => return e,
    };
    let d = sdata(i);
    for k in 0..n {
        let v = match b.at(off + 4 * u64::from(k)) {
            Some(a) => match c.tlb.load::<u32>(a) {
                Ok(v) => v,
                Err(f) => return f.into(),
            },
            None => 0,
        };
        w.write32(d + k, v);
    }
    Flow::Next
}

/// `s_buffer_store_*`: dwords past the buffer's size are dropped.
fn buffer_store(w: &mut Wave, i: &Inst, c: &mut Ctx<'_, '_>, n: u16) -> Flow {
    let (b, off) = match buffer(w, i) {
        Ok(x) => x,
        Err(e) => return e,
    };
    let d = sdata(i);
    for k in 0..n {
        if let Some(a) = b.at(off + 4 * u64::from(k)) {
            let v = w.read32(d + k, None);
            if let Err(f) = c.tlb.store::<u32>(a, v) {
                return f.into();
            }
        }
    }
    Flow::Next
}

/// The executors of `s_atomic_*` and `s_buffer_atomic_*`.
fn atomic(name: &str) -> Option<Exec> {
    macro_rules! atomics {
        ($($n:literal, $b:literal, $n2:literal, $b2:literal => $op:ident;)*) => {
            match name {
                $(
                    $n => |w, i, c| atomic_exec(w, i, c, atom::$op, false, false),
                    $b => |w, i, c| atomic_exec(w, i, c, atom::$op, true, false),
                    $n2 => |w, i, c| atomic_exec(w, i, c, atom::$op, false, true),
                    $b2 => |w, i, c| atomic_exec(w, i, c, atom::$op, true, true),
                )*
                _ => return None,
            }
        };
    }
    Some(atomics! {
        "s_atomic_swap", "s_buffer_atomic_swap",
            "s_atomic_swap_x2", "s_buffer_atomic_swap_x2" => SWAP;
        "s_atomic_cmpswap", "s_buffer_atomic_cmpswap",
            "s_atomic_cmpswap_x2", "s_buffer_atomic_cmpswap_x2" => CMPSWAP;
        "s_atomic_add", "s_buffer_atomic_add",
            "s_atomic_add_x2", "s_buffer_atomic_add_x2" => ADD;
        "s_atomic_sub", "s_buffer_atomic_sub",
            "s_atomic_sub_x2", "s_buffer_atomic_sub_x2" => SUB;
        "s_atomic_smin", "s_buffer_atomic_smin",
            "s_atomic_smin_x2", "s_buffer_atomic_smin_x2" => SMIN;
        "s_atomic_umin", "s_buffer_atomic_umin",
            "s_atomic_umin_x2", "s_buffer_atomic_umin_x2" => UMIN;
        "s_atomic_smax", "s_buffer_atomic_smax",
            "s_atomic_smax_x2", "s_buffer_atomic_smax_x2" => SMAX;
        "s_atomic_umax", "s_buffer_atomic_umax",
            "s_atomic_umax_x2", "s_buffer_atomic_umax_x2" => UMAX;
        "s_atomic_and", "s_buffer_atomic_and",
            "s_atomic_and_x2", "s_buffer_atomic_and_x2" => AND;
        "s_atomic_or", "s_buffer_atomic_or",
            "s_atomic_or_x2", "s_buffer_atomic_or_x2" => OR;
        "s_atomic_xor", "s_buffer_atomic_xor",
            "s_atomic_xor_x2", "s_buffer_atomic_xor_x2" => XOR;
        "s_atomic_inc", "s_buffer_atomic_inc",
            "s_atomic_inc_x2", "s_buffer_atomic_inc_x2" => INC;
        "s_atomic_dec", "s_buffer_atomic_dec",
            "s_atomic_dec_x2", "s_buffer_atomic_dec_x2" => DEC;
    })
}

/// A scalar atomic: data in SDATA (the compare value of cmpswap in the
/// next dword or pair), the old memory value returned to SDATA when GLC
/// is set. A buffer atomic past the buffer's size does nothing and
/// returns 0.
fn atomic_exec(
    w: &mut Wave,
    i: &Inst,
    c: &mut Ctx<'_, '_>,
    op: u8,
    buffered: bool,
    wide: bool,
) -> Flow {
    let a = if buffered {
        let (b, off) = match buffer(w, i) {
            Ok(x) => x,
            Err(e) => return e,
        };
        let size = if wide { 8 } else { 4 };
        // In range only when the whole operand is.
        match b.at(off + size - 4) {
            Some(_) => b.base.wrapping_add(off) & 0xffff_ffff_ffff,
            None => {
                if glc(i) {
                    if wide {
                        w.write64(sdata(i), 0);
                    } else {
                        w.write32(sdata(i), 0);
                    }
                }
                return Flow::Next;
            }
        }
    } else {
        address(w, i)
    };
    let d = sdata(i);
    if wide {
        let (src, cmp) = (w.read64(d, None), w.read64(d + 2, None));
        match c
            .tlb
            .update::<u64>(a, &mut |old| rmw64(op, old, src, cmp, 0))
        {
            Ok(old) => {
                if glc(i) {
                    w.write64(d, old);
                }
            }
            Err(f) => return f.into(),
        }
    } else {
        let (src, cmp) = (w.read32(d, None), w.read32(d + 1, None));
        match c
            .tlb
            .update::<u32>(a, &mut |old| rmw32(op, old, src, cmp, 0))
        {
            Ok(old) => {
                if glc(i) {
                    w.write32(d, old);
                }
            }
            Err(f) => return f.into(),
        }
    }
    Flow::Next
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_ops() {
        // The integer operations of s_atomic_*, which share the vector
        // memory's (the mode only matters to float atomics).
        assert_eq!(rmw32(atom::INC, 4, 5, 0, 0), 5);
        assert_eq!(rmw32(atom::INC, 5, 5, 0, 0), 0);
        assert_eq!(rmw32(atom::DEC, 0, 5, 0, 0), 5);
        assert_eq!(rmw32(atom::DEC, 6, 5, 0, 0), 5);
        assert_eq!(rmw32(atom::DEC, 3, 5, 0, 0), 2);
        assert_eq!(rmw32(atom::SMIN, u32::MAX, 1, 0, 0), u32::MAX);
        assert_eq!(rmw64(atom::UMIN, u64::MAX, 1, 0, 0), 1);
        assert_eq!(rmw64(atom::CMPSWAP, 7, 9, 7, 0), 9);
        assert_eq!(rmw64(atom::CMPSWAP, 8, 9, 7, 0), 8);
    }
}
