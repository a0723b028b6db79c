//! VALU: vector ALU instructions (VOP1, VOP2, VOPC, VOP3).

use super::{unimplemented, Exec, Flow};
use crate::shader::isa::{Enc, Ext, Inst, Mods};
use crate::shader::wave::{Wave, LANES};

/// The executor of a VALU mnemonic.
pub(super) fn lookup(name: &str) -> Option<Exec> {
    Some(match name {
        "v_mov_b32" => |w, i, _| unary32(w, i, |a| a),
        "v_add_u32" => |w, i, _| binary32(w, i, u32::wrapping_add),
        "v_and_b32" => |w, i, _| binary32(w, i, |a, b| a & b),
        "v_lshlrev_b32" => |w, i, _| binary32(w, i, |a, b| b << (a & 31)),
        "v_add_co_u32" => |w, i, _| carry32(w, i, false),
        "v_addc_co_u32" => |w, i, _| carry32(w, i, true),
        _ => return None,
    })
}

/// True if the instruction has modifiers or an extra word the simple
/// executors below do not apply.
fn plain(i: &Inst) -> bool {
    i.mods == Mods::default() && i.ext == Ext::None
}

fn unary32(w: &mut Wave, i: &Inst, f: fn(u32) -> u32) -> Flow {
    if !plain(i) {
        return unimplemented(i, "modifiers");
    }
    let mut a = [0u32; LANES];
    w.fetch32(i.src[0], i.lit, &mut a);
    let r: [u32; LANES] = std::array::from_fn(|l| f(a[l]));
    w.store32(i.dst, w.exec(), &r);
    Flow::Next
}

fn binary32(w: &mut Wave, i: &Inst, f: fn(u32, u32) -> u32) -> Flow {
    if !plain(i) {
        return unimplemented(i, "modifiers");
    }
    let (mut a, mut b) = ([0u32; LANES], [0u32; LANES]);
    w.fetch32(i.src[0], i.lit, &mut a);
    w.fetch32(i.src[1], i.lit, &mut b);
    let r: [u32; LANES] = std::array::from_fn(|l| f(a[l], b[l]));
    w.store32(i.dst, w.exec(), &r);
    Flow::Next
}

/// `v_add_co_u32` / `v_addc_co_u32`: the sum (plus the carry-in bit of
/// source 2, VCC in the 32-bit encoding) and the carry-out mask.
fn carry32(w: &mut Wave, i: &Inst, with_carry: bool) -> Flow {
    if !plain(i) {
        return unimplemented(i, "modifiers");
    }
    let (mut a, mut b) = ([0u32; LANES], [0u32; LANES]);
    w.fetch32(i.src[0], i.lit, &mut a);
    w.fetch32(i.src[1], i.lit, &mut b);
    let (cin, cout_reg) = match i.enc {
        Enc::Vop2 => (w.vcc(), 106),
        _ => (w.read64(i.src[2], None), i.sdst),
    };
    let exec = w.exec();
    let mut cout = 0u64;
    let r: [u32; LANES] = std::array::from_fn(|l| {
        let c = if with_carry { cin >> l & 1 } else { 0 };
        let s = u64::from(a[l]) + u64::from(b[l]) + c;
        cout |= (s >> 32) << l;
        s as u32
    });
    w.store32(i.dst, exec, &r);
    w.write64(cout_reg, cout & exec);
    Flow::Next
}
