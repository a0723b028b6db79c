//! Compares (VOPC and their VOP3 forms): `v_cmp_*` write a lane mask,
//! `v_cmpx_*` also write EXEC; `v_cmp_class_*` test float classes.

use super::fp::{self, dec};
use super::Ty::{self, F16, F32, F64, U16, U32, U64};
use super::{compare, Exec, Flow};
use crate::shader::exec::Ctx;
use crate::shader::isa::Inst;
use crate::shader::wave::Wave;

/// Float predicates, in VOPC opcode order: f, lt, eq, le, gt, lg, ge, o,
/// u, nge, nlg, ngt, nle, neq, nlt, tru.
const FLOAT_OPS: [&str; 16] = [
    "f", "lt", "eq", "le", "gt", "lg", "ge", "o", "u", "nge", "nlg", "ngt", "nle", "neq", "nlt",
    "tru",
];

/// Integer predicates in opcode order: f, lt, eq, le, gt, ne, ge, t.
const INT_OPS: [&str; 8] = ["f", "lt", "eq", "le", "gt", "ne", "ge", "t"];

/// The float type of compare type index `t` (f16, f32, f64).
const fn float_ty(t: u8) -> Ty {
    match t {
        0 => F16,
        1 => F32,
        _ => F64,
    }
}

#[inline]
fn float_pred<const P: u8>(a: f64, b: f64) -> bool {
    let un = a.is_nan() || b.is_nan();
    match P {
        0 => false,
        1 => a < b,
        2 => a == b,
        3 => a <= b,
        4 => a > b,
        5 => !un && a != b,
        6 => a >= b,
        7 => !un,
        8 => un,
        9 => un || a < b,
        10 => un || a == b,
        11 => un || a <= b,
        12 => un || a > b,
        13 => a != b,
        14 => un || a >= b,
        _ => true,
    }
}

#[inline]
fn int_pred<const P: u8, T: Ord>(a: T, b: T) -> bool {
    match P {
        0 => false,
        1 => a < b,
        2 => a == b,
        3 => a <= b,
        4 => a > b,
        5 => a != b,
        6 => a >= b,
        _ => true,
    }
}

fn fcmp<const P: u8, const T: u8, const X: bool>(
    w: &mut Wave,
    i: &Inst,
    _: &mut Ctx<'_, '_>,
) -> Flow {
    let t = float_ty(T);
    compare(w, i, [t, t], 0, X, |_, [a, b]| {
        float_pred::<P>(dec(t, a), dec(t, b))
    })
}

fn icmp<const P: u8, const T: u8, const X: bool>(
    w: &mut Wave,
    i: &Inst,
    _: &mut Ctx<'_, '_>,
) -> Flow {
    match T {
        0 => compare(w, i, [U16, U16], 0, X, |_, [a, b]| {
            int_pred::<P, _>(a as i16, b as i16)
        }),
        1 => compare(w, i, [U16, U16], 0, X, |_, [a, b]| {
            int_pred::<P, _>(a as u16, b as u16)
        }),
        2 => compare(w, i, [U32, U32], 0, X, |_, [a, b]| {
            int_pred::<P, _>(a as i32, b as i32)
        }),
        3 => compare(w, i, [U32, U32], 0, X, |_, [a, b]| {
            int_pred::<P, _>(a as u32, b as u32)
        }),
        4 => compare(w, i, [U64, U64], 0, X, |_, [a, b]| {
            int_pred::<P, _>(a as i64, b as i64)
        }),
        _ => compare(w, i, [U64, U64], 0, X, |_, [a, b]| int_pred::<P, _>(a, b)),
    }
}

fn class<const T: u8, const X: bool>(w: &mut Wave, i: &Inst, _: &mut Ctx<'_, '_>) -> Flow {
    let t = float_ty(T);
    compare(w, i, [t, U32], super::flag::NOFLUSH, X, |_, [a, m]| {
        m >> fp::class(t, a) & 1 != 0
    })
}

macro_rules! by_type {
    ($f:ident, $p:literal, $t:expr, $x:expr) => {
        match ($t, $x) {
            (0, false) => $f::<$p, 0, false> as Exec,
            (1, false) => $f::<$p, 1, false>,
            (2, false) => $f::<$p, 2, false>,
            (3, false) => $f::<$p, 3, false>,
            (4, false) => $f::<$p, 4, false>,
            (5, false) => $f::<$p, 5, false>,
            (0, true) => $f::<$p, 0, true>,
            (1, true) => $f::<$p, 1, true>,
            (2, true) => $f::<$p, 2, true>,
            (3, true) => $f::<$p, 3, true>,
            (4, true) => $f::<$p, 4, true>,
            _ => $f::<$p, 5, true>,
        }
    };
}

macro_rules! by_pred {
    ($f:ident, $p:expr, $t:expr, $x:expr) => {
        match $p {
            0 => by_type!($f, 0, $t, $x),
            1 => by_type!($f, 1, $t, $x),
            2 => by_type!($f, 2, $t, $x),
            3 => by_type!($f, 3, $t, $x),
            4 => by_type!($f, 4, $t, $x),
            5 => by_type!($f, 5, $t, $x),
            6 => by_type!($f, 6, $t, $x),
            7 => by_type!($f, 7, $t, $x),
            8 => by_type!($f, 8, $t, $x),
            9 => by_type!($f, 9, $t, $x),
            10 => by_type!($f, 10, $t, $x),
            11 => by_type!($f, 11, $t, $x),
            12 => by_type!($f, 12, $t, $x),
            13 => by_type!($f, 13, $t, $x),
            14 => by_type!($f, 14, $t, $x),
            _ => by_type!($f, 15, $t, $x),
        }
    };
}

/// The executor of a compare mnemonic (`v_cmp[x]_<pred>_<type>`).
pub(super) fn lookup(name: &str) -> Option<Exec> {
    let (x, rest) = if let Some(r) = name.strip_prefix("v_cmpx_") {
        (true, r)
    } else {
        (false, name.strip_prefix("v_cmp_")?)
    };
    let (pred, ty) = rest.rsplit_once('_')?;
    if pred == "class" {
        let t = ["f16", "f32", "f64"].iter().position(|s| *s == ty)?;
        return Some(match (t, x) {
            (0, false) => class::<0, false>,
            (1, false) => class::<1, false>,
            (2, false) => class::<2, false>,
            (0, true) => class::<0, true>,
            (1, true) => class::<1, true>,
            _ => class::<2, true>,
        });
    }
    if let Some(t) = ["f16", "f32", "f64"].iter().position(|s| *s == ty) {
        let p = FLOAT_OPS.iter().position(|s| *s == pred)?;
        return Some(by_pred!(fcmp, p, t, x));
    }
    let t = ["i16", "u16", "i32", "u32", "i64", "u64"]
        .iter()
        .position(|s| *s == ty)?;
    let p = INT_OPS.iter().position(|s| *s == pred)?;
    Some(by_pred!(icmp, p, t, x))
}
