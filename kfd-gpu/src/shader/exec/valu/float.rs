//! Floating-point operations: f16, f32 and f64 arithmetic, conversions
//! and the division helpers.

use super::fp::{self, dec, enc, fma_narrow};
use super::Ty::{self, F16, F32, F64, U16, U32};
use super::{
    check, fetch32, fetch64, flag, put32, run32, run32_lanes, run32x, run64, unimplemented, vdst,
    vstore64,
};
use super::{write_sdst64, Env, Exec, Flow};
use crate::shader::isa::{Enc, Inst};
use crate::shader::wave::{reg, Wave, LANES};

const OPSEL: u8 = flag::OPSEL | flag::KEEP_HI;

/// Runs a float operation of type `t` with `N` sources given to `f` as
/// exact `f64`s; its `f64` result is rounded to `t`.
#[inline]
fn fop<const N: usize, F>(w: &mut Wave, i: &Inst, t: Ty, flags: u8, f: F) -> Flow
where
    F: Fn(Env, [f64; N]) -> f64,
{
    if t == F64 {
        run64(w, i, [t; N], t, flags, |e, a| {
            enc(t, f(e, a.map(|v| dec(t, v))))
        })
    } else {
        run32(w, i, [t; N], t, flags, |e, a| {
            enc(t, f(e, a.map(|v| dec(t, u64::from(v))))) as u32
        })
    }
}

/// Runs an operation on the raw bits of float type `t`.
#[inline]
fn bits<const N: usize, F>(w: &mut Wave, i: &Inst, t: Ty, flags: u8, f: F) -> Flow
where
    F: Fn(Env, [u64; N]) -> u64,
{
    if t == F64 {
        run64(w, i, [t; N], t, flags, f)
    } else {
        run32(w, i, [t; N], t, flags, |e, a| f(e, a.map(u64::from)) as u32)
    }
}

/// Largest value below 1.0 of type `t`.
fn below_one(t: Ty) -> f64 {
    match t {
        F16 => 1.0 - (2f64).powi(-11),
        F32 => 1.0 - (2f64).powi(-24),
        _ => 1.0 - (2f64).powi(-53),
    }
}

/// `fma` for type `t` (correctly rounded).
#[inline]
fn fma(t: Ty, a: f64, b: f64, c: f64) -> f64 {
    if t == F64 {
        a.mul_add(b, c)
    } else {
        fma_narrow(a, b, c)
    }
}

/// Unfused multiply-add: the product is rounded (and flushed) to `t`
/// before the add.
#[inline]
fn mad(t: Ty, a: f64, b: f64, c: f64) -> f64 {
    let p = dec(t, enc(t, a * b));
    let min_normal = match t {
        F32 => f64::from(f32::MIN_POSITIVE),
        F16 => (2f64).powi(-14),
        _ => f64::MIN_POSITIVE,
    };
    let p = if p != 0.0 && p.abs() < min_normal {
        0.0f64.copysign(p)
    } else {
        p
    };
    p + c
}

/// `v_mul_legacy_f32`: zero times anything (even inf or NaN) is +0.
#[inline]
fn mul_legacy(a: f64, b: f64) -> f64 {
    if a == 0.0 || b == 0.0 {
        0.0
    } else {
        a * b
    }
}

fn fract(t: Ty, x: f64) -> f64 {
    if !x.is_finite() {
        return if x.is_nan() { x } else { f64::NAN };
    }
    (x - x.floor()).min(below_one(t))
}

/// sin/cos take revolutions: the argument's fraction times 2 pi.
fn turns(x: f64) -> f64 {
    (x - x.round()) * std::f64::consts::TAU
}

/// The executor of a float VALU mnemonic.
pub(super) fn lookup(name: &str) -> Option<Exec> {
    Some(match name {
        "v_add_f32" => |w, i, _| fop(w, i, F32, 0, |_, [a, b]| a + b),
        "v_sub_f32" => |w, i, _| fop(w, i, F32, 0, |_, [a, b]| a - b),
        "v_subrev_f32" => |w, i, _| fop(w, i, F32, 0, |_, [a, b]| b - a),
        "v_mul_f32" => |w, i, _| fop(w, i, F32, 0, |_, [a, b]| a * b),
        "v_add_f16" => |w, i, _| fop(w, i, F16, 0, |_, [a, b]| a + b),
        "v_sub_f16" => |w, i, _| fop(w, i, F16, 0, |_, [a, b]| a - b),
        "v_subrev_f16" => |w, i, _| fop(w, i, F16, 0, |_, [a, b]| b - a),
        "v_mul_f16" => |w, i, _| fop(w, i, F16, 0, |_, [a, b]| a * b),
        "v_add_f64" => |w, i, _| fop(w, i, F64, 0, |_, [a, b]| a + b),
        "v_mul_f64" => |w, i, _| fop(w, i, F64, 0, |_, [a, b]| a * b),
        "v_mul_legacy_f32" => |w, i, _| fop(w, i, F32, 0, |_, [a, b]| mul_legacy(a, b)),
        "v_min_f32" => |w, i, _| {
            bits(w, i, F32, 0, |e, [a, b]| {
                fp::minmax(F32, a, b, e.ieee(), false)
            })
        },
        "v_max_f32" => |w, i, _| {
            bits(w, i, F32, 0, |e, [a, b]| {
                fp::minmax(F32, a, b, e.ieee(), true)
            })
        },
        "v_min_f16" => |w, i, _| {
            bits(w, i, F16, 0, |e, [a, b]| {
                fp::minmax(F16, a, b, e.ieee(), false)
            })
        },
        "v_max_f16" => |w, i, _| {
            bits(w, i, F16, 0, |e, [a, b]| {
                fp::minmax(F16, a, b, e.ieee(), true)
            })
        },
        "v_min_f64" => |w, i, _| {
            bits(w, i, F64, 0, |e, [a, b]| {
                fp::minmax(F64, a, b, e.ieee(), false)
            })
        },
        "v_max_f64" => |w, i, _| {
            bits(w, i, F64, 0, |e, [a, b]| {
                fp::minmax(F64, a, b, e.ieee(), true)
            })
        },
        "v_min3_f32" => |w, i, _| bits(w, i, F32, 0, |e, [a, b, c]| min3(F32, e, a, b, c, false)),
        "v_max3_f32" => |w, i, _| bits(w, i, F32, 0, |e, [a, b, c]| min3(F32, e, a, b, c, true)),
        "v_med3_f32" => |w, i, _| {
            bits(w, i, F32, 0, |e, [a, b, c]| {
                fp::med3(F32, a, b, c, e.ieee())
            })
        },
        "v_min3_f16" => |w, i, _| {
            bits(w, i, F16, OPSEL, |e, [a, b, c]| {
                min3(F16, e, a, b, c, false)
            })
        },
        "v_max3_f16" => {
            |w, i, _| bits(w, i, F16, OPSEL, |e, [a, b, c]| min3(F16, e, a, b, c, true))
        }
        "v_med3_f16" => |w, i, _| {
            bits(w, i, F16, OPSEL, |e, [a, b, c]| {
                fp::med3(F16, a, b, c, e.ieee())
            })
        },
        // Multiply-adds.
        "v_fma_f32" => |w, i, _| fma32(w, i),
        "v_fma_f64" => |w, i, _| fop(w, i, F64, 0, |_, [a, b, c]| fma(F64, a, b, c)),
        "v_fma_f16" => |w, i, _| fop(w, i, F16, OPSEL, |_, [a, b, c]| fma(F16, a, b, c)),
        "v_fma_legacy_f16" => |w, i, _| fop(w, i, F16, 0, |_, [a, b, c]| fma(F16, a, b, c)),
        "v_mad_f32" => |w, i, _| fop(w, i, F32, flag::FTZ, |_, [a, b, c]| mad(F32, a, b, c)),
        "v_mad_f16" => |w, i, _| {
            fop(w, i, F16, OPSEL | flag::FTZ, |_, [a, b, c]| {
                mad(F16, a, b, c)
            })
        },
        "v_mad_legacy_f16" => |w, i, _| fop(w, i, F16, flag::FTZ, |_, [a, b, c]| mad(F16, a, b, c)),
        "v_mad_legacy_f32" => |w, i, _| {
            fop(w, i, F32, flag::FTZ, |_, [a, b, c]| {
                let p = dec(F32, enc(F32, mul_legacy(a, b)));
                p + c
            })
        },
        "v_mac_f32" => |w, i, _| acc(w, i, F32, flag::FTZ, |_, [a, b, c]| mad(F32, a, b, c)),
        "v_mac_f16" => |w, i, _| {
            acc(w, i, F16, flag::FTZ | flag::KEEP_HI, |_, [a, b, c]| {
                mad(F16, a, b, c)
            })
        },
        "v_fmac_f32" => |w, i, _| match acc_form(i) {
            Ok(j) => fma32(w, &j),
            Err(e) => e,
        },
        "v_fmac_f64" => |w, i, _| acc(w, i, F64, 0, |_, [a, b, c]| fma(F64, a, b, c)),
        "v_madmk_f32" => {
            |w, i, _| k_form(w, i, F32, flag::FTZ, true, |_, [a, b, c]| mad(F32, a, b, c))
        }
        "v_madak_f32" => |w, i, _| {
            k_form(w, i, F32, flag::FTZ, false, |_, [a, b, c]| {
                mad(F32, a, b, c)
            })
        },
        "v_madmk_f16" => |w, i, _| {
            k_form(
                w,
                i,
                F16,
                flag::FTZ | flag::KEEP_HI,
                true,
                |_, [a, b, c]| mad(F16, a, b, c),
            )
        },
        "v_madak_f16" => |w, i, _| {
            k_form(
                w,
                i,
                F16,
                flag::FTZ | flag::KEEP_HI,
                false,
                |_, [a, b, c]| mad(F16, a, b, c),
            )
        },
        "v_fmamk_f32" => |w, i, _| fma32(w, &k_inst(i, true)),
        "v_fmaak_f32" => |w, i, _| fma32(w, &k_inst(i, false)),
        // ldexp and frexp.
        "v_ldexp_f32" => |w, i, _| {
            run32(w, i, [F32, U32], F32, 0, |_, [a, b]| {
                enc(F32, fp::ldexp(dec(F32, a.into()), i64::from(b as i32))) as u32
            })
        },
        // The exponent is the low 16 bits (LLVM clamps and truncates it).
        "v_ldexp_f16" => |w, i, _| {
            run32(w, i, [F16, U16], F16, 0, |_, [a, b]| {
                enc(F16, fp::ldexp(dec(F16, a.into()), i64::from(b as i16))) as u32
            })
        },
        "v_ldexp_f64" => |w, i, _| {
            run64(w, i, [F64, U32], F64, 0, |_, [a, b]| {
                enc(F64, fp::ldexp(dec(F64, a), i64::from(b as u32 as i32)))
            })
        },
        "v_frexp_mant_f32" => |w, i, _| fop(w, i, F32, 0, |_, [a]| fp::frexp(a).0),
        "v_frexp_mant_f16" => |w, i, _| fop(w, i, F16, 0, |_, [a]| fp::frexp(a).0),
        "v_frexp_mant_f64" => |w, i, _| fop(w, i, F64, 0, |_, [a]| fp::frexp(a).0),
        "v_frexp_exp_i32_f32" => |w, i, _| {
            run32(w, i, [F32], U32, 0, |_, [a]| {
                fp::frexp(dec(F32, a.into())).1 as u32
            })
        },
        "v_frexp_exp_i16_f16" => |w, i, _| {
            run32(w, i, [F16], U16, 0, |_, [a]| {
                fp::frexp(dec(F16, a.into())).1 as u16 as u32
            })
        },
        "v_frexp_exp_i32_f64" => |w, i, _| {
            run64(w, i, [F64], U32, 0, |_, [a]| {
                u64::from(fp::frexp(dec(F64, a)).1 as u32)
            })
        },
        // Rounding and fractions.
        "v_fract_f32" => |w, i, _| fop(w, i, F32, 0, |_, [a]| fract(F32, a)),
        "v_fract_f16" => |w, i, _| fop(w, i, F16, 0, |_, [a]| fract(F16, a)),
        "v_fract_f64" => |w, i, _| fop(w, i, F64, 0, |_, [a]| fract(F64, a)),
        "v_trunc_f32" => |w, i, _| fop(w, i, F32, 0, |_, [a]| a.trunc()),
        "v_trunc_f16" => |w, i, _| fop(w, i, F16, 0, |_, [a]| a.trunc()),
        "v_trunc_f64" => |w, i, _| fop(w, i, F64, 0, |_, [a]| a.trunc()),
        "v_ceil_f32" => |w, i, _| fop(w, i, F32, 0, |_, [a]| a.ceil()),
        "v_ceil_f16" => |w, i, _| fop(w, i, F16, 0, |_, [a]| a.ceil()),
        "v_ceil_f64" => |w, i, _| fop(w, i, F64, 0, |_, [a]| a.ceil()),
        "v_floor_f32" => |w, i, _| fop(w, i, F32, 0, |_, [a]| a.floor()),
        "v_floor_f16" => |w, i, _| fop(w, i, F16, 0, |_, [a]| a.floor()),
        "v_floor_f64" => |w, i, _| fop(w, i, F64, 0, |_, [a]| a.floor()),
        "v_rndne_f32" => |w, i, _| fop(w, i, F32, 0, |_, [a]| a.round_ties_even()),
        "v_rndne_f16" => |w, i, _| fop(w, i, F16, 0, |_, [a]| a.round_ties_even()),
        "v_rndne_f64" => |w, i, _| fop(w, i, F64, 0, |_, [a]| a.round_ties_even()),
        // Transcendentals (the hardware's are within an ulp or so; these
        // are correctly rounded from f64).
        "v_exp_f32" => |w, i, _| fop(w, i, F32, 0, |_, [a]| a.exp2()),
        "v_exp_f16" => |w, i, _| fop(w, i, F16, 0, |_, [a]| a.exp2()),
        "v_log_f32" => |w, i, _| fop(w, i, F32, 0, |_, [a]| a.log2()),
        "v_log_f16" => |w, i, _| fop(w, i, F16, 0, |_, [a]| a.log2()),
        "v_rcp_f32" | "v_rcp_iflag_f32" => |w, i, _| fop(w, i, F32, 0, |_, [a]| 1.0 / a),
        "v_rcp_f16" => |w, i, _| fop(w, i, F16, 0, |_, [a]| 1.0 / a),
        "v_rcp_f64" => |w, i, _| fop(w, i, F64, 0, |_, [a]| 1.0 / a),
        "v_rsq_f32" => |w, i, _| fop(w, i, F32, 0, |_, [a]| 1.0 / a.sqrt()),
        "v_rsq_f16" => |w, i, _| fop(w, i, F16, 0, |_, [a]| 1.0 / a.sqrt()),
        "v_rsq_f64" => |w, i, _| fop(w, i, F64, 0, |_, [a]| 1.0 / a.sqrt()),
        "v_sqrt_f32" => |w, i, _| fop(w, i, F32, 0, |_, [a]| a.sqrt()),
        "v_sqrt_f16" => |w, i, _| fop(w, i, F16, 0, |_, [a]| a.sqrt()),
        "v_sqrt_f64" => |w, i, _| fop(w, i, F64, 0, |_, [a]| a.sqrt()),
        "v_sin_f32" => |w, i, _| fop(w, i, F32, 0, |_, [a]| turns(a).sin()),
        "v_sin_f16" => |w, i, _| fop(w, i, F16, 0, |_, [a]| turns(a).sin()),
        "v_cos_f32" => |w, i, _| fop(w, i, F32, 0, |_, [a]| turns(a).cos()),
        "v_cos_f16" => |w, i, _| fop(w, i, F16, 0, |_, [a]| turns(a).cos()),
        // Conversions.
        "v_cvt_f32_i32" => {
            |w, i, _| run32(w, i, [U32], F32, 0, |_, [a]| (a as i32 as f32).to_bits())
        }
        "v_cvt_f32_u32" => |w, i, _| run32(w, i, [U32], F32, 0, |_, [a]| (a as f32).to_bits()),
        "v_cvt_f64_i32" => |w, i, _| {
            run64(w, i, [U32], F64, 0, |_, [a]| {
                f64::from(a as u32 as i32).to_bits()
            })
        },
        "v_cvt_f64_u32" => |w, i, _| run64(w, i, [U32], F64, 0, |_, [a]| (a as f64).to_bits()),
        "v_cvt_i32_f32" => {
            |w, i, _| run32(w, i, [F32], U32, 0, |_, [a]| fp::to_i32(dec(F32, a.into())))
        }
        "v_cvt_u32_f32" => {
            |w, i, _| run32(w, i, [F32], U32, 0, |_, [a]| fp::to_u32(dec(F32, a.into())))
        }
        "v_cvt_i32_f64" => |w, i, _| {
            run64(w, i, [F64], U32, 0, |_, [a]| {
                fp::to_i32(f64::from_bits(a)).into()
            })
        },
        "v_cvt_u32_f64" => |w, i, _| {
            run64(w, i, [F64], U32, 0, |_, [a]| {
                fp::to_u32(f64::from_bits(a)).into()
            })
        },
        "v_cvt_rpi_i32_f32" => |w, i, _| {
            run32(w, i, [F32], U32, 0, |_, [a]| {
                fp::to_i32((dec(F32, a.into()) + 0.5).floor())
            })
        },
        "v_cvt_flr_i32_f32" => |w, i, _| {
            run32(w, i, [F32], U32, 0, |_, [a]| {
                fp::to_i32(dec(F32, a.into()).floor())
            })
        },
        "v_cvt_f16_f32" => |w, i, _| {
            run32(w, i, [F32], F16, 0, |_, [a]| {
                enc(F16, dec(F32, a.into())) as u32
            })
        },
        "v_cvt_f32_f16" => |w, i, _| {
            run32(w, i, [F16], F32, 0, |_, [a]| {
                enc(F32, dec(F16, a.into())) as u32
            })
        },
        "v_cvt_f64_f32" => |w, i, _| run64(w, i, [F32], F64, 0, |_, [a]| dec(F32, a).to_bits()),
        "v_cvt_f32_f64" => {
            |w, i, _| run64(w, i, [F64], F32, 0, |_, [a]| enc(F32, f64::from_bits(a)))
        }
        "v_cvt_f16_u16" => |w, i, _| {
            run32(w, i, [U16], F16, 0, |_, [a]| {
                enc(F16, f64::from(a as u16)) as u32
            })
        },
        "v_cvt_f16_i16" => |w, i, _| {
            run32(w, i, [U16], F16, 0, |_, [a]| {
                enc(F16, f64::from(a as i16)) as u32
            })
        },
        "v_cvt_u16_f16" => |w, i, _| {
            run32(w, i, [F16], U16, 0, |_, [a]| {
                u32::from(dec(F16, a.into()) as u16)
            })
        },
        "v_cvt_i16_f16" => |w, i, _| {
            run32(w, i, [F16], U16, 0, |_, [a]| {
                dec(F16, a.into()) as i16 as u16 as u32
            })
        },
        "v_cvt_f32_ubyte0" => {
            |w, i, _| run32(w, i, [U32], F32, 0, |_, [a]| ((a & 0xff) as f32).to_bits())
        }
        "v_cvt_f32_ubyte1" => |w, i, _| {
            run32(w, i, [U32], F32, 0, |_, [a]| {
                ((a >> 8 & 0xff) as f32).to_bits()
            })
        },
        "v_cvt_f32_ubyte2" => |w, i, _| {
            run32(w, i, [U32], F32, 0, |_, [a]| {
                ((a >> 16 & 0xff) as f32).to_bits()
            })
        },
        "v_cvt_f32_ubyte3" => {
            |w, i, _| run32(w, i, [U32], F32, 0, |_, [a]| ((a >> 24) as f32).to_bits())
        }
        "v_cvt_off_f32_i4" => |w, i, _| {
            run32(w, i, [U32], F32, 0, |_, [a]| {
                let v = ((a << 28) as i32) >> 28;
                (v as f32 / 16.0).to_bits()
            })
        },
        "v_cvt_norm_i16_f16" => {
            |w, i, _| run32(w, i, [F16], U16, 0, |_, [a]| snorm16(dec(F16, a.into())))
        }
        "v_cvt_norm_u16_f16" => {
            |w, i, _| run32(w, i, [F16], U16, 0, |_, [a]| unorm16(dec(F16, a.into())))
        }
        "v_cvt_pkrtz_f16_f32" => |w, i, _| {
            run32(w, i, [F32, F32], U32, 0, |_, [a, b]| {
                u32::from(fp::f32_to_f16_rtz(f32::from_bits(a)))
                    | u32::from(fp::f32_to_f16_rtz(f32::from_bits(b))) << 16
            })
        },
        "v_cvt_pknorm_i16_f32" => |w, i, _| {
            run32(w, i, [F32, F32], U32, 0, |_, [a, b]| {
                snorm16(dec(F32, a.into())) | snorm16(dec(F32, b.into())) << 16
            })
        },
        "v_cvt_pknorm_u16_f32" => |w, i, _| {
            run32(w, i, [F32, F32], U32, 0, |_, [a, b]| {
                unorm16(dec(F32, a.into())) | unorm16(dec(F32, b.into())) << 16
            })
        },
        "v_cvt_pknorm_i16_f16" => |w, i, _| {
            run32(w, i, [F16, F16], U32, flag::OPSEL, |_, [a, b]| {
                snorm16(dec(F16, a.into())) | snorm16(dec(F16, b.into())) << 16
            })
        },
        "v_cvt_pknorm_u16_f16" => |w, i, _| {
            run32(w, i, [F16, F16], U32, flag::OPSEL, |_, [a, b]| {
                unorm16(dec(F16, a.into())) | unorm16(dec(F16, b.into())) << 16
            })
        },
        "v_pack_b32_f16" => |w, i, _| {
            run32(
                w,
                i,
                [F16, F16],
                U32,
                flag::OPSEL | flag::NOFLUSH,
                |_, [a, b]| a & 0xffff | b << 16,
            )
        },
        "v_cvt_pk_u8_f32" => |w, i, _| {
            run32(w, i, [F32, U32, U32], U32, 0, |_, [a, b, c]| {
                let x = dec(F32, a.into()).round_ties_even();
                let v = if x.is_nan() {
                    0
                } else {
                    x.clamp(0.0, 255.0) as u32
                };
                let s = 8 * (b & 3);
                c & !(0xff << s) | v << s
            })
        },
        "v_trig_preop_f64" => |w, i, _| {
            run64(w, i, [F64, U32], F64, flag::NOFLUSH, |_, [a, b]| {
                fp::trig_preop((a >> 52) as u32 & 0x7ff, b as u32).to_bits()
            })
        },
        "v_pk_fmac_f16" => |w, i, _| pk_fmac(w, i),
        // gfx940's 8-bit floats.
        "v_cvt_f32_fp8" => |w, i, _| {
            run32(w, i, [U32], F32, 0, |_, [a]| {
                enc(F32, fp::FP8.decode(a)) as u32
            })
        },
        "v_cvt_f32_bf8" => |w, i, _| {
            run32(w, i, [U32], F32, 0, |_, [a]| {
                enc(F32, fp::BF8.decode(a)) as u32
            })
        },
        "v_cvt_pk_f32_fp8" => |w, i, _| pk_from_fp8(w, i, fp::FP8),
        "v_cvt_pk_f32_bf8" => |w, i, _| pk_from_fp8(w, i, fp::BF8),
        "v_cvt_pk_fp8_f32" => |w, i, _| pk_to_fp8(w, i, fp::FP8),
        "v_cvt_pk_bf8_f32" => |w, i, _| pk_to_fp8(w, i, fp::BF8),
        // Division helpers.
        "v_div_scale_f32" => |w, i, _| div_scale(w, i, F32),
        "v_div_scale_f64" => |w, i, _| div_scale(w, i, F64),
        "v_div_fmas_f32" => |w, i, _| div_fmas(w, i, F32),
        "v_div_fmas_f64" => |w, i, _| div_fmas(w, i, F64),
        "v_div_fixup_f32" => {
            |w, i, _| fop(w, i, F32, 0, |_, [q, d, n]| fp::div_fixup(q, d, n, F32))
        }
        "v_div_fixup_f64" => {
            |w, i, _| fop(w, i, F64, 0, |_, [q, d, n]| fp::div_fixup(q, d, n, F64))
        }
        "v_div_fixup_f16" => {
            |w, i, _| fop(w, i, F16, OPSEL, |_, [q, d, n]| fp::div_fixup(q, d, n, F16))
        }
        "v_div_fixup_legacy_f16" => {
            |w, i, _| fop(w, i, F16, 0, |_, [q, d, n]| fp::div_fixup(q, d, n, F16))
        }
        _ => return None,
    })
}

#[inline]
fn min3(t: Ty, e: Env, a: u64, b: u64, c: u64, max: bool) -> u64 {
    fp::minmax(t, fp::minmax(t, a, b, e.ieee(), max), c, e.ieee(), max)
}

/// Float to signed normalized 16 bits (round to nearest even).
fn snorm16(x: f64) -> u32 {
    if x.is_nan() {
        return 0;
    }
    ((x.clamp(-1.0, 1.0) * 32767.0).round_ties_even() as i16) as u16 as u32
}

/// Float to unsigned normalized 16 bits (round to nearest even).
fn unorm16(x: f64) -> u32 {
    if x.is_nan() {
        return 0;
    }
    (x.clamp(0.0, 1.0) * 65535.0).round_ties_even() as u32
}

/// `v_mac_*`/`v_fmac_*`: source 2 is the destination.
fn acc<F>(w: &mut Wave, i: &Inst, t: Ty, flags: u8, f: F) -> Flow
where
    F: Fn(Env, [f64; 3]) -> f64,
{
    match acc_form(i) {
        Ok(j) => fop(w, &j, t, flags, f),
        Err(e) => e,
    }
}

/// `i` with its destination as source 2 (the accumulator), or the
/// error of modifiers the model does not apply to it.
fn acc_form(i: &Inst) -> Result<Inst, Flow> {
    if i.enc == Enc::Vop3 && (i.mods.abs | i.mods.neg) & 4 != 0 {
        return Err(unimplemented(i, "modifiers on the accumulator"));
    }
    let mut j = *i;
    j.src[2] = i.dst;
    Ok(j)
}

/// `v_fma_f32` (and the forms that become it): every lane at once.
fn fma32(w: &mut Wave, i: &Inst) -> Flow {
    run32_lanes(w, i, [F32; 3], F32, 0, 0, |_, [a, b, c], r| {
        fp::fma_f32_lanes(a, b, c, r)
    })
}

/// `v_madmk_*`/`v_fmamk_*` (`S0 * K + S1`, `mk`) and `v_madak_*`/
/// `v_fmaak_*` (`S0 * S1 + K`): K is the literal.
fn k_form<F>(w: &mut Wave, i: &Inst, t: Ty, flags: u8, mk: bool, f: F) -> Flow
where
    F: Fn(Env, [f64; 3]) -> f64,
{
    fop(w, &k_inst(i, mk), t, flags, f)
}

/// `i` with the literal K as source 1 (`mk`) or 2.
fn k_inst(i: &Inst, mk: bool) -> Inst {
    let mut j = *i;
    j.src = if mk {
        [i.src[0], reg::LITERAL, i.src[1]]
    } else {
        [i.src[0], i.src[1], reg::LITERAL]
    };
    j
}

/// `v_div_scale_*` (VOP3b): scales source 0 as the division's operands
/// require; the scalar destination gets the rescale flags.
fn div_scale(w: &mut Wave, i: &Inst, t: Ty) -> Flow {
    let flags = flag::VOP3B;
    if let Err(e) = check(i, &[t; 3], Some(t), flags) {
        return e;
    }
    if w.mode & 0xf != 0 {
        return unimplemented(i, "rounding mode");
    }
    let double = t == F64;
    let mut mask = w.exec();
    let mut s = [[0u64; LANES]; 3];
    for n in 0..3 {
        if double {
            fetch64(w, i, n, t, flags, &mut s[n]);
        } else {
            let mut v = [0u32; LANES];
            fetch32(w, i, n, t, flags, &mut mask, &mut v);
            s[n] = v.map(u64::from);
        }
    }
    let mut vcc = 0u64;
    let mut r = [0u64; LANES];
    for l in 0..LANES {
        let (x, d, n) = (dec(t, s[0][l]), dec(t, s[1][l]), dec(t, s[2][l]));
        let (v, flag) = fp::div_scale(x, d, n, double);
        r[l] = enc(t, v);
        vcc |= u64::from(flag) << l;
    }
    if double {
        super::float_out(
            t,
            w.mode,
            flags,
            i.mods.clamp,
            u32::from(i.mods.omod),
            &mut r,
            LANES,
        );
        vstore64(w, vdst(i), mask, &r);
    } else {
        let mut r32 = r.map(|v| v as u32);
        put32(w, i, t, flags, mask, &mut r32);
    }
    write_sdst64(w, i.sdst, vcc & mask);
    Flow::Next
}

/// `v_div_fmas_*`: `fma(S0, S1, S2)`, scaled by 2^64 (f32; 2^128 for f64)
/// where VCC is set: up if |S2| >= 2, else down.
fn div_fmas(w: &mut Wave, i: &Inst, t: Ty) -> Flow {
    let vcc = w.vcc();
    let scale = if t == F64 { 128 } else { 64 };
    let f = move |e: Env, a: f64, b: f64, c: f64| {
        let r = fma(t, a, b, c);
        if e.extra >> e.lane & 1 != 0 {
            fp::ldexp(r, if c.abs() >= 2.0 { scale } else { -scale })
        } else {
            r
        }
    };
    if t == F64 {
        // run64 has no extra value: do it by lane here.
        let mut j = *i;
        j.src = i.src;
        return fmas64(w, &j, vcc, f);
    }
    run32x(w, i, [t; 3], t, 0, vcc, |e, [a, b, c]| {
        enc(
            t,
            f(e, dec(t, a.into()), dec(t, b.into()), dec(t, c.into())),
        ) as u32
    })
}

fn fmas64<F>(w: &mut Wave, i: &Inst, vcc: u64, f: F) -> Flow
where
    F: Fn(Env, f64, f64, f64) -> f64,
{
    let t = F64;
    if let Err(e) = check(i, &[t; 3], Some(t), 0) {
        return e;
    }
    if w.mode & 0xf != 0 {
        return unimplemented(i, "rounding mode");
    }
    let mask = w.exec();
    let mut s = [[0u64; LANES]; 3];
    for n in 0..3 {
        fetch64(w, i, n, t, 0, &mut s[n]);
    }
    let env = Env {
        mode: w.mode,
        clamp: false,
        lane: 0,
        extra: vcc,
    };
    let mut r: [u64; LANES] = std::array::from_fn(|l| {
        let e = Env { lane: l, ..env };
        f(e, dec(t, s[0][l]), dec(t, s[1][l]), dec(t, s[2][l])).to_bits()
    });
    super::float_out(
        t,
        w.mode,
        0,
        i.mods.clamp,
        u32::from(i.mods.omod),
        &mut r,
        LANES,
    );
    vstore64(w, vdst(i), mask, &r);
    Flow::Next
}

/// `v_pk_fmac_f16`: `D.h[k] = fma(S0.h[k], S1.h[k], D.h[k])` for both
/// halves.
fn pk_fmac(w: &mut Wave, i: &Inst) -> Flow {
    if w.mode >> 6 & 3 != 3 || w.mode & 0xf != 0 {
        return unimplemented(i, "f16 denormal flushing or rounding mode");
    }
    let mut j = *i;
    j.src[2] = i.dst;
    run32(w, &j, [U32; 3], U32, 0, |_, [a, b, c]| {
        let half = |s: u32| {
            let h = |v: u32| dec(F16, u64::from(v >> s & 0xffff));
            (enc(F16, fma_narrow(h(a), h(b), h(c))) as u32) << s
        };
        half(0) | half(16)
    })
}

/// `v_cvt_pk_f32_fp8`/`_bf8`: the two 8-bit floats of a source word (the
/// low word, or the one an SDWA select names) to an f32 pair.
fn pk_from_fp8(w: &mut Wave, i: &Inst, f: fp::Fp8) -> Flow {
    if let Err(e) = check(i, &[U32], Some(U32), 0) {
        return e;
    }
    let word_ok = match i.ext {
        super::Ext::Sdwa(x) => x >> 8 & 0xff == 6 && x >> 16 & 7 >= 4,
        super::Ext::None => true,
        super::Ext::Dpp(_) | super::Ext::Dpp8(..) => false,
    };
    if !word_ok {
        return unimplemented(i, "SDWA/DPP form");
    }
    let mut mask = w.exec();
    let mut v = [0u32; LANES];
    fetch32(w, i, 0, U32, 0, &mut mask, &mut v);
    let r: [u64; LANES] = std::array::from_fn(|l| {
        let lo = enc(F32, f.decode(v[l])) as u32;
        let hi = enc(F32, f.decode(v[l] >> 8)) as u32;
        u64::from(lo) | u64::from(hi) << 32
    });
    vstore64(w, vdst(i), mask, &r);
    Flow::Next
}

/// `v_cvt_pk_fp8_f32`/`_bf8_f32`: two f32 to two 8-bit floats in the
/// destination word op_sel[3] names (the other word kept); clamp
/// saturates.
fn pk_to_fp8(w: &mut Wave, i: &Inst, f: fp::Fp8) -> Flow {
    if i.mods.opsel & 7 != 0 {
        return unimplemented(i, "op_sel");
    }
    let hi = u64::from(i.mods.opsel >> 3 & 1);
    let mut j = *i;
    j.mods.opsel = 0;
    j.src[2] = i.dst;
    run32x(
        w,
        &j,
        [F32, F32, U32],
        U32,
        flag::ICLAMP,
        hi,
        |e, [a, b, d]| {
            let x = |v: u32| f.encode(dec(F32, v.into()), e.clamp);
            let pair = x(a) | x(b) << 8;
            let s = 16 * e.extra as u32;
            d & !(0xffff << s) | pair << s
        },
    )
}
