//! VALU instructions (VOP1, VOP2, VOPC, VOP3, SDWA, DPP) run on one wave,
//! checked against host arithmetic.

// Lanes index several arrays at once; float predicates are spelled the
// way the ISA defines them (NaN-aware).
#![allow(
    clippy::needless_range_loop,
    clippy::type_complexity,
    clippy::double_comparisons,
    clippy::neg_cmp_op_on_partial_ord,
    clippy::nonminimal_bool
)]

mod common;

use common::*;
use kfd_gpu::shader::{DispatchError, Target};

const LANES: usize = 64;
type Lanes = [u32; LANES];

/// MODE as hipcc sets it: denormals kept (f32 and f16/f64), DX10 clamp
/// and IEEE mode on (`compute_pgm_rsrc1` bits).
const HIP: u32 = 0xf0 << 12 | 1 << 21 | 1 << 23;
/// Everything off: denormals flushed, no IEEE mode, no DX10 clamp.
const FLUSH: u32 = 0;

/// Runs `body` on one wave of 64 lanes: v0 holds the lane id, v1..vN the
/// lanes of `inputs`; returns v10.. (`outs` registers) of every lane
/// (stored with EXEC all ones). The body may use s[6:..] and v2..v199.
fn try_run(
    target: Target,
    rsrc1: u32,
    inputs: &[Lanes],
    body: &str,
    outs: usize,
) -> Result<Vec<Lanes>, DispatchError> {
    try_run_patched(target, rsrc1, inputs, body, outs, |_| {})
}

/// [`try_run`] with the assembled words edited by `patch` (to make forms
/// the assembler refuses).
fn try_run_patched(
    target: Target,
    rsrc1: u32,
    inputs: &[Lanes],
    body: &str,
    outs: usize,
    patch: impl Fn(&mut Vec<u32>),
) -> Result<Vec<Lanes>, DispatchError> {
    assert!(inputs.len() <= 8 && outs <= 8);
    let mut asm = String::from(
        "s_load_dwordx2 s[4:5], s[0:1], 0x0
         v_lshlrev_b32 v200, 2, v0
         s_waitcnt lgkmcnt(0)
         v_mov_b32 v201, s5
         v_add_co_u32 v200, vcc, s4, v200
         v_addc_co_u32 v201, vcc, 0, v201, vcc\n",
    );
    for k in 0..inputs.len() {
        asm += &format!(
            "global_load_dword v{}, v[200:201], off offset:{}\n",
            k + 1,
            k * 256
        );
    }
    asm += "s_waitcnt vmcnt(0)\n";
    asm += body;
    asm += "\ns_mov_b64 exec, -1\n";
    for k in 0..outs {
        asm += &format!(
            "global_store_dword v[200:201], v{}, off offset:{}\n",
            k + 10,
            2048 + k * 256
        );
    }
    asm += "s_endpgm\n";
    let mem = memory();
    mem.store::<u64>(KERNARG, DATA);
    for (k, v) in inputs.iter().enumerate() {
        for l in 0..LANES {
            mem.store::<u32>(DATA + (k * 256 + l * 4) as u64, v[l]);
        }
    }
    let mut words = assemble(target, &asm);
    patch(&mut words);
    Kernel {
        rsrc1,
        ..Kernel::new(target, "")
    }
    .run_code(&mem, &words)?;
    Ok((0..outs)
        .map(|k| std::array::from_fn(|l| mem.load::<u32>(DATA + (2048 + k * 256 + l * 4) as u64)))
        .collect())
}

fn run(target: Target, rsrc1: u32, inputs: &[Lanes], body: &str, outs: usize) -> Vec<Lanes> {
    try_run(target, rsrc1, inputs, body, outs).unwrap_or_else(|e| panic!("{body}\n{e}"))
}

const ALL: [Target; 3] = [Target::Gfx900, Target::Gfx90a, Target::Gfx940];
const NEW: [Target; 2] = [Target::Gfx90a, Target::Gfx940];

fn lanes(f: impl FnMut(usize) -> u32) -> Lanes {
    std::array::from_fn(f)
}

/// A deterministic spread of 32-bit values with the edge cases first.
fn ints(seed: u32) -> Lanes {
    const EDGE: [u32; 8] = [
        0,
        1,
        0xffff_ffff,
        0x8000_0000,
        0x7fff_ffff,
        0xff,
        0xffff,
        0x1_0000,
    ];
    let mut x = seed.wrapping_mul(0x9e37_79b9) | 1;
    lanes(|l| {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        if l < 8 {
            EDGE[(l + seed as usize) % 8]
        } else {
            x
        }
    })
}

fn f32s(v: &[f32]) -> Lanes {
    lanes(|l| v[l % v.len()].to_bits())
}

#[test]
fn integer_ops_match_host_arithmetic() {
    let (a, b, c) = (ints(1), ints(2), ints(3));
    let body = "
        v_add_u32 v10, v1, v2
        v_sub_co_u32 v11, vcc, v1, v2
        v_mul_hi_u32 v12, v1, v2
        v_mul_hi_i32 v13, v1, v2
        v_mul_lo_u32 v14, v1, v2
        v_bfe_i32 v15, v1, v2, v3
        v_alignbit_b32 v16, v1, v2, v3
        v_perm_b32 v17, v1, v2, v3";
    for t in ALL {
        let r = run(t, HIP, &[a, b, c], body, 8);
        for l in 0..LANES {
            let (x, y, z) = (a[l], b[l], c[l]);
            assert_eq!(r[0][l], x.wrapping_add(y));
            assert_eq!(r[1][l], x.wrapping_sub(y));
            assert_eq!(r[2][l], ((x as u64 * y as u64) >> 32) as u32);
            assert_eq!(r[3][l], ((x as i32 as i64 * y as i32 as i64) >> 32) as u32);
            assert_eq!(r[4][l], x.wrapping_mul(y));
            let (off, w) = (y & 31, z & 31);
            let bfe = if w == 0 {
                0
            } else {
                (((x >> off) << (32 - w)) as i32 >> (32 - w)) as u32
            };
            assert_eq!(r[5][l], bfe, "bfe {x:#x} {y} {z}");
            assert_eq!(r[6][l], (((x as u64) << 32 | y as u64) >> (z & 31)) as u32);
            // v_perm_b32 by hand for each selector byte.
            let data = (x as u64) << 32 | y as u64;
            let mut p = 0u32;
            for k in 0..4 {
                let s = (z >> (8 * k)) & 0xff;
                let byte = match s {
                    0..=7 => (data >> (8 * s)) as u32 & 0xff,
                    8..=11 => ((data >> (16 * (s - 8) + 15)) & 1) as u32 * 0xff,
                    12 => 0,
                    _ => 0xff,
                };
                p |= byte << (8 * k);
            }
            assert_eq!(r[7][l], p);
        }
    }
}

#[test]
fn more_integer_ops() {
    let (a, b, c) = (ints(4), ints(5), ints(6));
    let body = "
        v_mul_i32_i24 v10, v1, v2
        v_mad_u32_u24 v11, v1, v2, v3
        v_med3_i32 v12, v1, v2, v3
        v_ffbh_i32 v13, v1
        v_ffbh_u32 v14, v1
        v_bfi_b32 v15, v1, v2, v3
        v_xad_u32 v16, v1, v2, v3
        v_ashrrev_i32 v17, v2, v1";
    for t in ALL {
        let r = run(t, HIP, &[a, b, c], body, 8);
        for l in 0..LANES {
            let (x, y, z) = (a[l], b[l], c[l]);
            let s24 = |v: u32| ((v << 8) as i32 >> 8) as i64;
            assert_eq!(r[0][l], (s24(x) * s24(y)) as u32);
            assert_eq!(
                r[1][l],
                (x & 0xffffff).wrapping_mul(y & 0xffffff).wrapping_add(z)
            );
            let mut m = [x as i32, y as i32, z as i32];
            m.sort();
            assert_eq!(r[2][l], m[1] as u32);
            let ffbh_i = if x == 0 || x == u32::MAX {
                u32::MAX
            } else if (x as i32) < 0 {
                (!x).leading_zeros()
            } else {
                x.leading_zeros()
            };
            assert_eq!(r[3][l], ffbh_i);
            assert_eq!(r[4][l], if x == 0 { u32::MAX } else { x.leading_zeros() });
            assert_eq!(r[5][l], (x & y) | (!x & z));
            assert_eq!(r[6][l], (x ^ y).wrapping_add(z));
            assert_eq!(r[7][l], ((x as i32) >> (y & 31)) as u32);
        }
    }
}

#[test]
fn inactive_lanes_keep_their_values() {
    let a = ints(7);
    // Lanes 0..32 and 40 active.
    let body = "
        v_mov_b32 v10, 0x5a5a
        s_mov_b32 s6, -1
        s_mov_b32 s7, 0x100
        s_mov_b64 exec, s[6:7]
        v_not_b32 v10, v1
        v_cmp_gt_u32 vcc, 10, v0
        s_mov_b64 exec, -1
        v_mov_b32 v11, vcc_lo
        v_mov_b32 v12, vcc_hi";
    for t in ALL {
        let r = run(t, HIP, &[a], body, 3);
        for l in 0..LANES {
            let active = l < 32 || l == 40;
            assert_eq!(r[0][l], if active { !a[l] } else { 0x5a5a });
            // The compare ran under the same EXEC: lanes 0..10 true.
            assert_eq!((r[1][l], r[2][l]), (0x3ff, 0));
        }
    }
}

#[test]
fn carries_chain_through_vcc_and_sgpr_pairs() {
    let (a, b, c, d) = (ints(8), ints(9), ints(10), ints(11));
    let body = "
        v_add_co_u32 v10, vcc, v1, v2
        v_addc_co_u32 v11, vcc, v3, v4, vcc
        v_sub_co_u32_e64 v12, s[6:7], v1, v2
        v_subb_co_u32_e64 v13, s[8:9], v3, v4, s[6:7]
        v_mov_b32 v14, s8
        v_mov_b32 v15, s9
        v_subrev_co_u32 v16, vcc, v1, v2
        v_subbrev_co_u32 v17, vcc, v3, v4, vcc";
    for t in ALL {
        let r = run(t, HIP, &[a, b, c, d], body, 8);
        let mut borrow = 0u64;
        for l in 0..LANES {
            let x =
                (a[l] as u64 | (c[l] as u64) << 32).wrapping_add(b[l] as u64 | (d[l] as u64) << 32);
            assert_eq!((r[0][l], r[1][l]), (x as u32, (x >> 32) as u32));
            let y =
                (a[l] as u64 | (c[l] as u64) << 32).wrapping_sub(b[l] as u64 | (d[l] as u64) << 32);
            assert_eq!((r[2][l], r[3][l]), (y as u32, (y >> 32) as u32));
            let ya = a[l] as u64 | (c[l] as u64) << 32;
            let yb = b[l] as u64 | (d[l] as u64) << 32;
            borrow |= u64::from(ya < yb) << l;
            let z = yb.wrapping_sub(ya);
            assert_eq!((r[6][l], r[7][l]), (z as u32, (z >> 32) as u32));
        }
        assert_eq!((r[4][0], r[5][0]), (borrow as u32, (borrow >> 32) as u32));
    }
}

#[test]
fn shifts_and_64_bit_ops() {
    let (a, b, c) = (ints(12), ints(13), ints(14));
    let body = "
        v_lshlrev_b64 v[10:11], v1, v[2:3]
        v_ashrrev_i64 v[12:13], v1, v[2:3]
        v_mad_u64_u32 v[14:15], s[6:7], v1, v2, v[2:3]
        v_mov_b32 v16, s6
        v_mov_b32 v17, s7";
    for t in ALL {
        let r = run(t, HIP, &[a, b, c], body, 8);
        let mut carry = 0u64;
        for l in 0..LANES {
            let v = b[l] as u64 | (c[l] as u64) << 32;
            let s = a[l] & 63;
            let sh = v << s;
            assert_eq!((r[0][l], r[1][l]), (sh as u32, (sh >> 32) as u32));
            let sa = ((v as i64) >> s) as u64;
            assert_eq!((r[2][l], r[3][l]), (sa as u32, (sa >> 32) as u32));
            let m = a[l] as u128 * b[l] as u128 + v as u128;
            assert_eq!((r[4][l], r[5][l]), (m as u32, (m >> 32) as u32));
            carry |= ((m >> 64) as u64 & 1) << l;
        }
        assert_eq!((r[6][0], r[7][0]), (carry as u32, (carry >> 32) as u32));
    }
}

#[test]
fn sixteen_bit_ops_zero_or_keep_the_high_half() {
    let (a, b, c) = (ints(15), ints(16), ints(17));
    let body = "
        v_mov_b32 v10, v3
        v_add_u16 v10, v1, v2
        v_mov_b32 v11, v3
        v_mad_u16 v11, v1, v2, v3 op_sel:[1,0,1,1]
        v_mov_b32 v12, v3
        v_mad_u16 v12, v1, v2, v3
        v_ashrrev_i16 v13, v1, v2
        v_add_u16_e64 v14, v1, v2 clamp
        v_max_i16 v15, v1, v2";
    for t in ALL {
        let r = run(t, HIP, &[a, b, c], body, 6);
        for l in 0..LANES {
            let (x, y, z) = (a[l], b[l], c[l]);
            assert_eq!(r[0][l], (x as u16).wrapping_add(y as u16) as u32);
            let hi = ((x >> 16) as u16)
                .wrapping_mul(y as u16)
                .wrapping_add((z >> 16) as u16);
            assert_eq!(r[1][l], z & 0xffff | (hi as u32) << 16, "op_sel");
            let lo = (x as u16).wrapping_mul(y as u16).wrapping_add(z as u16);
            assert_eq!(r[2][l], z & 0xffff_0000 | lo as u32);
            assert_eq!(r[3][l], ((y as i16) >> (x & 15)) as u16 as u32);
            assert_eq!(r[4][l], (x as u16).saturating_add(y as u16) as u32);
            assert_eq!(r[5][l], (x as i16).max(y as i16) as u16 as u32);
        }
    }
}

#[test]
fn sdwa_selects_extends_and_preserves() {
    let (a, b, c) = (ints(18), ints(19), ints(20));
    let body = "
        v_add_u32_sdwa v10, v1, v2 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:BYTE_1 src1_sel:WORD_1
        v_mov_b32 v11, v3
        v_add_u32_sdwa v11, sext(v1), v2 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:BYTE_2 src1_sel:BYTE_0
        v_mov_b32_sdwa v12, v1 dst_sel:BYTE_1 dst_unused:UNUSED_SEXT src0_sel:BYTE_3
        v_cmp_eq_u32_sdwa s[6:7], v1, v2 src0_sel:BYTE_0 src1_sel:BYTE_0
        v_mov_b32 v13, s6
        v_mov_b32 v14, s7";
    for t in ALL {
        let r = run(t, HIP, &[a, b, c], body, 5);
        let mut eq = 0u64;
        for l in 0..LANES {
            let (x, y, z) = (a[l], b[l], c[l]);
            assert_eq!(r[0][l], ((x >> 8) & 0xff) + (y >> 16));
            let s = (((x >> 16) & 0xff) as u8 as i8 as i32 as u32).wrapping_add(y & 0xff);
            assert_eq!(r[1][l], z & 0xffff | (s & 0xffff) << 16);
            let byte = x >> 24;
            let sext = if byte & 0x80 != 0 { 0xffff_0000 } else { 0 };
            assert_eq!(r[2][l], sext | byte << 8);
            eq |= u64::from(x & 0xff == y & 0xff) << l;
        }
        assert_eq!((r[3][0], r[4][0]), (eq as u32, (eq >> 32) as u32));
    }
}

#[test]
fn dpp_permutes_lanes_with_masks_and_bounds() {
    let a = lanes(|l| 1000 + l as u32);
    let body = "
        v_mov_b32 v10, 7
        v_mov_b32_dpp v10, v1 quad_perm:[3,2,1,0] row_mask:0xf bank_mask:0xf
        v_mov_b32 v11, 7
        v_mov_b32_dpp v11, v1 row_shr:1 row_mask:0xf bank_mask:0xf
        v_mov_b32 v12, 7
        v_mov_b32_dpp v12, v1 row_shr:1 row_mask:0xf bank_mask:0xf bound_ctrl:0
        v_mov_b32 v13, 7
        v_mov_b32_dpp v13, v1 row_ror:3 row_mask:0x5 bank_mask:0xf
        v_mov_b32 v14, 7
        v_mov_b32_dpp v14, v1 row_bcast:15 row_mask:0xa bank_mask:0xf
        v_mov_b32 v15, 7
        v_add_u32_dpp v15, v1, v1 row_mirror row_mask:0xf bank_mask:0x3
        v_mov_b32 v16, 7
        v_mov_b32_dpp v16, v1 wave_shr:1 row_mask:0xf bank_mask:0xf
        v_mov_b32 v17, 7
        v_mov_b32_dpp v17, v1 wave_rol:1 row_mask:0xf bank_mask:0xf";
    // LLVM accepts the wave shifts and row broadcasts on every gfx9
    // target.
    for t in ALL {
        let r = run(t, HIP, &[a], body, 8);
        for l in 0..LANES {
            let v = |s: usize| 1000 + s as u32;
            assert_eq!(r[0][l], v((l & !3) | (3 - (l & 3))));
            assert_eq!(r[1][l], if l % 16 == 0 { 7 } else { v(l - 1) });
            assert_eq!(r[2][l], if l % 16 == 0 { 0 } else { v(l - 1) });
            let row = l / 16;
            let ror = (l & !15) | ((l + 16 - 3) & 15);
            assert_eq!(r[3][l], if row % 2 == 0 { v(ror) } else { 7 });
            assert_eq!(r[4][l], if row % 2 == 1 { v(row * 16 - 1) } else { 7 });
            let mirror = (l & !15) | (15 - (l & 15));
            assert_eq!(r[5][l], if l % 16 < 8 { v(mirror) + v(l) } else { 7 });
            assert_eq!(r[6][l], if l == 0 { 7 } else { v(l - 1) });
            assert_eq!(r[7][l], v((l + 1) % 64));
        }
    }
}

#[test]
fn float_compares_handle_nan_and_write_exec() {
    let nan = f32::NAN;
    let av = [1.0f32, 2.0, nan, -0.0, f32::INFINITY, 3.0, nan, -1.0];
    let bv = [2.0f32, 2.0, 1.0, 0.0, 1.0, nan, nan, -2.0];
    let (a, b) = (f32s(&av), f32s(&bv));
    let preds: [(&str, fn(f32, f32) -> bool); 8] = [
        ("lt", |x, y| x < y),
        ("eq", |x, y| x == y),
        ("lg", |x, y| x < y || x > y),
        ("o", |x, y| !x.is_nan() && !y.is_nan()),
        ("u", |x, y| x.is_nan() || y.is_nan()),
        ("nge", |x, y| !(x >= y)),
        ("neq", |x, y| x != y),
        ("nlt", |x, y| !(x < y)),
    ];
    for t in ALL {
        for (p, f) in preds {
            let body = format!(
                "v_cmp_{p}_f32 vcc, v1, v2
                 v_mov_b32 v10, vcc_lo
                 v_cmp_{p}_f32_e64 s[6:7], v1, v2
                 v_mov_b32 v11, s7
                 v_mov_b32 v12, 0
                 v_cmpx_{p}_f32 vcc, v1, v2
                 v_mov_b32 v12, 1
                 s_mov_b64 exec, -1
                 v_mov_b32 v13, vcc_lo"
            );
            let r = run(t, HIP, &[a, b], &body, 4);
            let mut m = 0u64;
            for l in 0..LANES {
                m |= u64::from(f(av[l % 8], bv[l % 8])) << l;
            }
            assert_eq!(r[0][0], m as u32, "{p}");
            assert_eq!(r[1][0], (m >> 32) as u32, "{p}");
            for l in 0..LANES {
                assert_eq!(r[2][l], (m >> l & 1) as u32, "cmpx {p}");
            }
            assert_eq!(r[3][0], m as u32, "{p}");
        }
    }
}

#[test]
fn integer_and_class_compares() {
    let (a, b) = (ints(21), ints(22));
    let vals = [
        0.0f32,
        -0.0,
        1.0,
        -1.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        1e-40,
    ];
    let c = f32s(&vals);
    let body = "
        v_cmp_lt_i32 vcc, v1, v2
        v_mov_b32 v10, vcc_lo
        v_mov_b32 v11, vcc_hi
        v_cmp_ge_u16_e64 s[6:7], v1, v2
        v_mov_b32 v12, s6
        s_mov_b32 s10, 0x3c0
        v_cmp_class_f32_e64 s[6:7], v3, s10
        v_mov_b32 v13, s6
        v_mov_b32 v20, v1
        v_mov_b32 v21, v2
        v_mov_b32 v22, v2
        v_mov_b32 v23, v3
        v_cmp_ne_u64 vcc, v[20:21], v[22:23]
        v_mov_b32 v14, vcc_lo";
    for t in ALL {
        let r = run(t, HIP, &[a, b, c], body, 5);
        let (mut lt, mut ge, mut cls, mut ne) = (0u64, 0u64, 0u64, 0u64);
        for l in 0..LANES {
            lt |= u64::from((a[l] as i32) < b[l] as i32) << l;
            ge |= u64::from(a[l] as u16 >= b[l] as u16) << l;
            // 0x3c0: +0, +denormal, +normal, +inf.
            let v = vals[l % 8];
            cls |= u64::from(v.is_sign_positive() && !v.is_nan()) << l;
            let x = a[l] as u64 | (b[l] as u64) << 32;
            let y = b[l] as u64 | (c[l] as u64) << 32;
            ne |= u64::from(x != y) << l;
        }
        assert_eq!((r[0][0], r[1][0]), (lt as u32, (lt >> 32) as u32));
        assert_eq!(r[2][0], ge as u32);
        assert_eq!(r[3][0], cls as u32);
        assert_eq!(r[4][0], ne as u32);
    }
}

#[test]
fn float_arithmetic_rounds_like_the_host() {
    let vals = [
        1.0f32, -2.5, 3.3125, 1e30, -1e-30, 0.1, 7.0e-39, 65504.0, -0.0, 1.0e10, 0.333, 8388609.0,
    ];
    let a = f32s(&vals);
    let b = lanes(|l| (vals[(l * 7 + 3) % vals.len()] * 1.5).to_bits());
    let c = lanes(|l| (vals[(l * 5 + 1) % vals.len()] - 0.25).to_bits());
    let body = "
        v_add_f32 v10, v1, v2
        v_mul_f32 v11, v1, v2
        v_fma_f32 v12, v1, v2, v3
        v_sub_f32_e64 v13, -|v1|, v2
        v_fmac_f32 v3, v1, v2
        v_mov_b32 v14, v3
        v_sqrt_f32 v15, |v1|
        v_cvt_i32_f32 v16, v1
        v_rndne_f32 v17, v2";
    for t in NEW {
        let r = run(t, HIP, &[a, b, c], body, 8);
        for l in 0..LANES {
            let (x, y, z) = (
                f32::from_bits(a[l]),
                f32::from_bits(b[l]),
                f32::from_bits(c[l]),
            );
            assert_eq!(r[0][l], (x + y).to_bits());
            assert_eq!(r[1][l], (x * y).to_bits());
            assert_eq!(r[2][l], x.mul_add(y, z).to_bits(), "fma {x} {y} {z}");
            assert_eq!(r[3][l], (-x.abs() - y).to_bits());
            assert_eq!(r[4][l], x.mul_add(y, z).to_bits());
            assert_eq!(r[5][l], x.abs().sqrt().to_bits());
            assert_eq!(r[6][l], x as i32 as u32);
            assert_eq!(r[7][l], y.round_ties_even().to_bits());
        }
    }
}

#[test]
fn denormals_follow_the_mode() {
    let tiny = f32::from_bits(0x0000_1234);
    let a = f32s(&[tiny, -tiny, 1.0]);
    let body = "
        v_add_f32 v10, v1, 0
        v_mul_f32 v11, v1, 0.5
        v_mov_b32 v12, v1";
    for t in NEW {
        let keep = run(t, HIP, &[a], body, 3);
        let flush = run(t, FLUSH, &[a], body, 3);
        for l in 0..LANES {
            let x = f32::from_bits(a[l]);
            assert_eq!(keep[0][l], (x + 0.0).to_bits());
            assert_eq!(keep[1][l], (x * 0.5).to_bits());
            let ftz = |v: f32| {
                if v.is_subnormal() {
                    0.0f32.copysign(v)
                } else {
                    v
                }
            };
            assert_eq!(flush[0][l], (ftz(x) + 0.0).to_bits());
            assert_eq!(flush[1][l], ftz(ftz(x) * 0.5).to_bits());
            // A move is not a float operation.
            assert_eq!(flush[2][l], a[l]);
        }
    }
}

#[test]
fn min_max_with_nans_in_ieee_mode() {
    let snan = f32::from_bits(0x7f80_0001);
    let qnan = f32::from_bits(0x7fc0_0000);
    let a = f32s(&[1.0, qnan, snan, -0.0, 2.0, qnan]);
    let b = f32s(&[qnan, 3.0, 4.0, 0.0, -5.0, qnan]);
    let body = "
        v_min_f32 v10, v1, v2
        v_max_f32 v11, v1, v2
        v_med3_f32 v12, v1, v2, 1.0";
    for t in NEW {
        let r = run(t, HIP, &[a, b], body, 3);
        let min = [1.0f32, 3.0, f32::from_bits(0x7fc0_0001), -0.0, -5.0, qnan];
        let max = [1.0f32, 3.0, f32::from_bits(0x7fc0_0001), 0.0, 2.0, qnan];
        for l in 0..LANES {
            assert_eq!(r[0][l], min[l % 6].to_bits(), "min lane {l}");
            assert_eq!(r[1][l], max[l % 6].to_bits(), "max lane {l}");
        }
        assert_eq!(r[2][4], 1.0f32.to_bits());
        assert_eq!(r[2][3], 0.0f32.to_bits());
    }
}

/// LLVM's expansion of an f32 `fdiv` with denormals kept.
const FDIV32: &str = "
    v_div_scale_f32 v3, s[6:7], v2, v2, v1
    v_div_scale_f32 v4, vcc, v1, v2, v1
    v_rcp_f32 v5, v3
    v_fma_f32 v6, -v3, v5, 1.0
    v_fma_f32 v5, v6, v5, v5
    v_mul_f32 v6, v4, v5
    v_fma_f32 v7, -v3, v6, v4
    v_fma_f32 v6, v7, v5, v6
    v_fma_f32 v3, -v3, v6, v4
    v_div_fmas_f32 v3, v3, v5, v6
    v_div_fixup_f32 v10, v3, v2, v1";

#[test]
fn f32_division_sequence_is_correctly_rounded() {
    let num = [
        1.0f32,
        1.0,
        22.0,
        -7.5,
        1e30,
        1e-30,
        3.0e38,
        1.0e-38,
        0.0,
        5.0,
        f32::INFINITY,
        0.0,
        1e-45,
        123456.79,
        f32::NAN,
        -0.0,
        1e30,
        2.0,
        1e-20,
        3.0e-39,
    ];
    let den = [
        3.0f32,
        7.0,
        7.0,
        0.1,
        1e-10,
        1e10,
        1e-5,
        3.0,
        0.0,
        0.0,
        f32::INFINITY,
        -4.0,
        3.0,
        1.0e38,
        2.0,
        5.0,
        -1e-5,
        3.0e38,
        7e18,
        0.75,
    ];
    let a = f32s(&num);
    let b = f32s(&den);
    for t in NEW {
        let r = run(t, HIP, &[a, b], FDIV32, 1);
        for l in 0..LANES {
            let (x, y) = (num[l % num.len()], den[l % num.len()]);
            let q = x / y;
            let got = f32::from_bits(r[0][l]);
            if q.is_nan() {
                assert!(
                    got.is_nan(),
                    "{} / {} = {got}",
                    num[l % num.len()],
                    den[l % num.len()]
                );
            } else {
                assert_eq!(
                    r[0][l],
                    q.to_bits(),
                    "{} / {} = {got}, want {q}",
                    num[l % num.len()],
                    den[l % num.len()]
                );
            }
        }
    }
}

/// LLVM's expansion of an f64 `fdiv`.
const FDIV64: &str = "
    v_mov_b32 v20, v1
    v_mov_b32 v21, v2
    v_mov_b32 v22, v3
    v_mov_b32 v23, v4
    v_div_scale_f64 v[24:25], s[6:7], v[22:23], v[22:23], v[20:21]
    v_rcp_f64 v[26:27], v[24:25]
    v_fma_f64 v[28:29], -v[24:25], v[26:27], 1.0
    v_fma_f64 v[26:27], v[26:27], v[28:29], v[26:27]
    v_fma_f64 v[28:29], -v[24:25], v[26:27], 1.0
    v_fma_f64 v[26:27], v[26:27], v[28:29], v[26:27]
    v_div_scale_f64 v[28:29], vcc, v[20:21], v[22:23], v[20:21]
    v_mul_f64 v[30:31], v[28:29], v[26:27]
    v_fma_f64 v[24:25], -v[24:25], v[30:31], v[28:29]
    v_div_fmas_f64 v[24:25], v[24:25], v[26:27], v[30:31]
    v_div_fixup_f64 v[30:31], v[24:25], v[22:23], v[20:21]
    v_mov_b32 v10, v30
    v_mov_b32 v11, v31";

#[test]
fn f64_division_sequence_is_correctly_rounded() {
    let num = [
        1.0f64,
        22.0,
        -7.5,
        1e300,
        1e-300,
        0.0,
        5.0,
        1.0,
        2.0e-310,
        9.87654321e123,
        1e200,
        3.0,
        1e-200,
        1.0,
        -3.0,
    ];
    let den = [
        3.0f64,
        7.0,
        0.1,
        1e-10,
        1e10,
        0.0,
        0.0,
        f64::INFINITY,
        3.0,
        1.23456789e-45,
        -1e-100,
        1e-308,
        7e107,
        1e308,
        1.5e308,
    ];
    // v[1:2] = numerator, v[3:4] = denominator.
    let bits = |v: &[f64], hi: bool| {
        lanes(|l| (v[l % v.len()].to_bits() >> if hi { 32 } else { 0 }) as u32)
    };
    let inputs = [
        bits(&num, false),
        bits(&num, true),
        bits(&den, false),
        bits(&den, true),
    ];
    for t in NEW {
        let r = run(t, HIP, &inputs, FDIV64, 2);
        for l in 0..LANES {
            let q = num[l % num.len()] / den[l % den.len()];
            let got = f64::from_bits(r[0][l] as u64 | (r[1][l] as u64) << 32);
            if q.is_nan() {
                assert!(got.is_nan());
            } else {
                assert_eq!(
                    got.to_bits(),
                    q.to_bits(),
                    "{} / {}",
                    num[l % num.len()],
                    den[l % den.len()]
                );
            }
        }
    }
}

#[test]
fn conversions_saturate_and_round() {
    let vals = [
        1.5f32,
        -1.5,
        2.5,
        3e9,
        -3e9,
        f32::NAN,
        65519.0,
        1e-7,
        -0.5,
        100000.0,
    ];
    let a = f32s(&vals);
    let body = "
        v_cvt_i32_f32 v10, v1
        v_cvt_u32_f32 v11, v1
        v_cvt_f16_f32 v12, v1
        v_cvt_f32_f16 v13, v12
        v_cvt_rpi_i32_f32 v14, v1
        v_cvt_flr_i32_f32 v15, v1
        v_cvt_pkrtz_f16_f32 v16, v1, 1.0
        v_cvt_f32_ubyte2 v17, v0";
    let f16_of = |x: f32| -> u32 {
        // Hand-worked f16 encodings of the test values.
        match x {
            v if v.is_nan() => 0x7e00,
            1.5 => 0x3e00,
            -1.5 => 0xbe00,
            2.5 => 0x4100,
            3e9 => 0x7c00,
            -3e9 => 0xfc00,
            65519.0 => 0x7bff,
            1e-7 => 0x0002,
            -0.5 => 0xb800,
            100000.0 => 0x7c00,
            _ => unreachable!(),
        }
    };
    for t in ALL {
        let r = run(t, HIP, &[a], body, 8);
        for l in 0..LANES {
            let x = vals[l % vals.len()];
            assert_eq!(r[0][l], x as i32 as u32);
            assert_eq!(r[1][l], x as u32);
            assert_eq!(r[2][l], f16_of(x), "cvt_f16 {x}");
            let back = f32::from_bits(r[3][l]);
            if x.is_nan() {
                assert!(back.is_nan());
            }
            assert_eq!(r[4][l], (x + 0.5).floor() as i32 as u32);
            assert_eq!(r[5][l], x.floor() as i32 as u32);
            assert_eq!(r[6][l] >> 16, 0x3c00);
            assert_eq!(r[7][l], 0);
        }
        // 1e-7 is 1.68 * 2^-24: the f16 denormal 2 * 2^-24.
        assert_eq!(f32::from_bits(r[3][7]), 2.0 * (2f32).powi(-24));
        // pkrtz truncates 65519 to 65504 and 3e9 to the largest finite.
        assert_eq!(r[6][6] & 0xffff, 0x7bff);
        assert_eq!(r[6][3] & 0xffff, 0x7bff);
    }
}

#[test]
fn half_precision_arithmetic() {
    // 1.0, 2.0, 0.5, 65504, -3.0 as f16.
    let a = lanes(|l| [0x3c00, 0x4000, 0x3800, 0x7bff, 0xc200][l % 5] | 0xabcd_0000);
    let b = lanes(|l| [0x4000, 0x4000, 0x3800, 0x7bff, 0x3c00][l % 5]);
    let body = "
        v_add_f16 v10, v1, v2
        v_mul_f16 v11, v1, v2
        v_fma_f16 v12, v1, v2, v2
        v_max_f16 v13, v1, v2
        v_add_f16_sdwa v14, v1, v2 dst_sel:WORD_1 dst_unused:UNUSED_PAD src0_sel:WORD_0 src1_sel:WORD_0";
    for t in ALL {
        let r = run(t, HIP, &[a, b], body, 5);
        let add = [0x4200, 0x4400, 0x3c00, 0x7c00, 0xc000];
        let mul = [0x4000, 0x4400, 0x3400, 0x7c00, 0xc200];
        let fma = [0x4400, 0x4600, 0x3a00, 0x7c00, 0xc000];
        let max = [0x4000, 0x4000, 0x3800, 0x7bff, 0x3c00];
        for l in 0..LANES {
            assert_eq!(r[0][l], add[l % 5], "add lane {l}");
            assert_eq!(r[1][l], mul[l % 5]);
            assert_eq!(r[2][l], fma[l % 5]);
            assert_eq!(r[3][l], max[l % 5]);
            assert_eq!(r[4][l], add[l % 5] << 16);
        }
    }
}

#[test]
fn output_modifiers_clamp_and_scale() {
    let a = f32s(&[0.75, -3.0, 2.0, f32::NAN, 0.25]);
    let body = "
        v_add_f32_e64 v10, v1, v1 clamp
        v_mul_f32_e64 v11, v1, 1.0 mul:2
        v_add_f32_e64 v12, v1, 0 clamp div:2";
    for t in NEW {
        // DX10 clamp on, IEEE off (omod applies).
        let r = run(t, 0xf0 << 12 | 1 << 21, &[a], body, 3);
        let clamp = [1.0f32, 0.0, 1.0, 0.0, 0.5];
        let mul2 = [1.5f32, -6.0, 4.0, f32::NAN, 0.5];
        let half = [0.375f32, 0.0, 1.0, 0.0, 0.125];
        for l in 0..LANES {
            assert_eq!(r[0][l], clamp[l % 5].to_bits());
            assert!(
                f32::from_bits(r[1][l]).is_nan() && mul2[l % 5].is_nan()
                    || r[1][l] == mul2[l % 5].to_bits()
            );
            assert_eq!(r[2][l], half[l % 5].to_bits());
        }
    }
}

#[test]
fn transcendentals_are_close() {
    let vals = [0.25f32, 1.0, 2.5, -0.125, 10.0, 0.0, 100.5, 3.0];
    let a = f32s(&vals);
    let body = "
        v_exp_f32 v10, v1
        v_log_f32 v11, |v1|
        v_rcp_f32 v12, v1
        v_rsq_f32 v13, |v1|
        v_sin_f32 v14, v1
        v_cos_f32 v15, v1
        v_fract_f32 v16, v1
        v_frexp_mant_f32 v17, v1";
    for t in NEW {
        let r = run(t, HIP, &[a], body, 8);
        for l in 0..LANES {
            let x = vals[l % 8] as f64;
            let close = |got: u32, want: f64| {
                let g = f32::from_bits(got) as f64;
                assert!(
                    g == want as f32 as f64 || (g - want).abs() <= want.abs() * 2e-7 + 1e-7,
                    "{x}: {g} vs {want}"
                );
            };
            close(r[0][l], x.exp2());
            close(r[1][l], x.abs().log2());
            close(r[2][l], 1.0 / x);
            close(r[3][l], 1.0 / x.abs().sqrt());
            close(r[4][l], (x * std::f64::consts::TAU).sin());
            close(r[5][l], (x * std::f64::consts::TAU).cos());
            close(r[6][l], x - x.floor());
        }
        // frexp: 2.5 = 0.625 * 2^2; 10 = 0.625 * 2^4.
        assert_eq!(f32::from_bits(r[7][2]), 0.625);
        assert_eq!(f32::from_bits(r[7][4]), 0.625);
    }
}

#[test]
fn f64_ops() {
    let vals = [1.5f64, -2.25, 1e300, 3.0e-320, 0.1, 7.0];
    let lo = lanes(|l| vals[l % 6].to_bits() as u32);
    let hi = lanes(|l| (vals[l % 6].to_bits() >> 32) as u32);
    let body = "
        v_mov_b32 v20, v1
        v_mov_b32 v21, v2
        v_add_f64 v[10:11], v[20:21], v[20:21]
        v_fma_f64 v[12:13], v[20:21], v[20:21], -v[20:21]
        v_ldexp_f64 v[14:15], v[20:21], -3
        v_floor_f64 v[16:17], v[20:21]";
    for t in ALL {
        let r = run(t, HIP, &[lo, hi], body, 8);
        for l in 0..LANES {
            let x = vals[l % 6];
            let got = |k: usize| r[k][l] as u64 | (r[k + 1][l] as u64) << 32;
            assert_eq!(got(0), (x + x).to_bits());
            assert_eq!(got(2), x.mul_add(x, -x).to_bits());
            assert_eq!(got(4), (x / 8.0).to_bits());
            assert_eq!(got(6), x.floor().to_bits());
        }
    }
}

#[test]
fn lane_moves_and_cndmask() {
    let a = lanes(|l| 100 + l as u32);
    let body = "
        s_mov_b32 s6, 5
        v_readlane_b32 s8, v1, s6
        v_readlane_b32 s9, v1, 63
        v_mov_b32 v10, s8
        v_mov_b32 v11, s9
        v_mov_b32 v12, v1
        v_writelane_b32 v12, s9, 2
        s_mov_b32 s10, 0
        s_mov_b32 s11, 0xf0
        s_mov_b64 exec, s[10:11]
        v_readfirstlane_b32 s12, v1
        s_mov_b64 exec, -1
        v_mov_b32 v13, s12
        v_cmp_gt_u32 vcc, 3, v0
        v_cndmask_b32 v14, 7, v1, vcc
        v_cndmask_b32_e64 v15, v1, -1, s[10:11]";
    for t in ALL {
        let r = run(t, HIP, &[a], body, 6);
        for l in 0..LANES {
            assert_eq!(r[0][l], 105);
            assert_eq!(r[1][l], 163);
            assert_eq!(r[2][l], if l == 2 { 163 } else { 100 + l as u32 });
            assert_eq!(r[3][l], 136);
            assert_eq!(r[4][l], if l < 3 { 100 + l as u32 } else { 7 });
            assert_eq!(
                r[5][l],
                if (36..40).contains(&l) {
                    u32::MAX
                } else {
                    100 + l as u32
                }
            );
        }
    }
}

#[test]
fn unsupported_forms_are_errors() {
    // abs on an integer operand is no valid VOP3 form: set the abs bit of
    // source 0 in `v_add_u32_e64 v10, v1, v2` (0xd134000a 0x00020501).
    let set_abs = |w: &mut Vec<u32>| {
        let k = w.iter().position(|&x| x == 0xd134_000a).unwrap();
        w[k] |= 1 << 8;
    };
    for t in NEW {
        let ok = try_run(t, HIP, &[], "v_add_u32_e64 v10, v1, v2", 1);
        assert!(ok.is_ok());
        let r = try_run_patched(t, HIP, &[], "v_add_u32_e64 v10, v1, v2", 1, set_abs);
        match r {
            Err(DispatchError::IllegalInstruction { what, .. }) => {
                assert!(what.contains("abs"), "{what}")
            }
            e => panic!("{e:?}"),
        }
    }
}

#[test]
fn trig_preop_gives_two_over_pi_in_pieces() {
    let body = "
        v_mov_b32 v20, 0
        v_mov_b32 v21, 0x3ff00000
        v_trig_preop_f64 v[22:23], v[20:21], 0
        v_trig_preop_f64 v[24:25], v[20:21], 1
        v_mov_b32 v10, v22
        v_mov_b32 v11, v23
        v_mov_b32 v12, v24
        v_mov_b32 v13, v25";
    for t in ALL {
        let r = run(t, HIP, &[], body, 4);
        let s0 = f64::from_bits(r[0][0] as u64 | (r[1][0] as u64) << 32);
        let s1 = f64::from_bits(r[2][0] as u64 | (r[3][0] as u64) << 32);
        // 2/pi truncated to 53 bits, then the next 53 bits.
        assert_eq!(s0.to_bits(), 0x3fe4_5f30_6dc9_c882);
        assert!(s1 > 0.0 && s1 < (2f64).powi(-53));
        assert_eq!((s0 + s1).to_bits(), std::f64::consts::FRAC_2_PI.to_bits());
    }
}

#[test]
fn dots_sads_and_lane_counts() {
    let (a, b, c) = (ints(23), ints(24), ints(25));
    let body = "
        v_mov_b32 v10, v3
        v_dot4c_i32_i8 v10, v1, v2
        v_msad_u8 v11, v1, v2, v3
        v_sad_u16 v12, v1, v2, v3
        v_mbcnt_lo_u32_b32 v13, v1, 0
        v_mbcnt_hi_u32_b32 v13, v1, v13
        v_lerp_u8 v14, v1, v2, v3";
    for t in NEW {
        let r = run(t, HIP, &[a, b, c], body, 5);
        for l in 0..LANES {
            let (x, y, z) = (a[l], b[l], c[l]);
            let dot: i32 = (0..4)
                .map(|k| (x >> (8 * k)) as i8 as i32 * (y >> (8 * k)) as i8 as i32)
                .sum();
            assert_eq!(r[0][l], (z as i32).wrapping_add(dot) as u32);
            let msad: u32 = (0..4)
                .map(|k| {
                    let (p, q) = ((x >> (8 * k)) & 0xff, (y >> (8 * k)) & 0xff);
                    if q == 0 {
                        0
                    } else {
                        p.abs_diff(q)
                    }
                })
                .sum();
            assert_eq!(r[1][l], msad.wrapping_add(z));
            let sad16 = (x & 0xffff).abs_diff(y & 0xffff) + (x >> 16).abs_diff(y >> 16);
            assert_eq!(r[2][l], sad16.wrapping_add(z));
            let lerp: u32 = (0..4)
                .map(|k| {
                    ((((x >> (8 * k)) & 0xff) + ((y >> (8 * k)) & 0xff) + ((z >> (8 * k)) & 1))
                        >> 1)
                        << (8 * k)
                })
                .sum();
            assert_eq!(r[4][l], lerp);
        }
    }
    // mbcnt with a uniform mask: v_mbcnt of a scalar all-ones counts lanes.
    let body = "
        v_mbcnt_lo_u32_b32 v10, -1, 0
        v_mbcnt_hi_u32_b32 v10, -1, v10
        s_mov_b32 s6, 0x55555555
        v_mbcnt_lo_u32_b32 v11, s6, 0
        v_mbcnt_hi_u32_b32 v11, s6, v11";
    for t in ALL {
        let r = run(t, HIP, &[], body, 2);
        for l in 0..LANES {
            assert_eq!(r[0][l], l as u32);
            assert_eq!(r[1][l], l.div_ceil(2) as u32);
        }
    }
}

#[test]
fn more_conversions_and_scaling() {
    let vals = [1.0f32, -1.0, 0.5, 1e-40, -3.75, 1e20, f32::INFINITY, 300.0];
    let a = f32s(&vals);
    let n = lanes(|l| [0u32, 1, 0xffff_fffe, 130, 0xffff_ff00, 5, 3, 0x7fff_ffff][l % 8]);
    let body = "
        v_ldexp_f32 v10, v1, v2
        v_frexp_exp_i32_f32 v11, v1
        v_cvt_pknorm_i16_f32 v12, v1, 0.5
        v_cvt_pknorm_u16_f32 v13, v1, 0.5
        v_cvt_pk_u8_f32 v14, v1, 1, 0
        v_cvt_f32_i32 v15, v2
        v_cvt_f32_u32 v16, v2
        v_cvt_off_f32_i4 v17, v2";
    for t in ALL {
        let r = run(t, HIP, &[a, n], body, 8);
        for l in 0..LANES {
            let (x, k) = (vals[l % 8] as f64, n[l]);
            // ldexp through f64 (exact), then one rounding to f32.
            let want = (x * (2f64).powi((k as i32).clamp(-400, 400))) as f32;
            assert_eq!(r[0][l], want.to_bits(), "ldexp {x} {}", k as i32);
            let e = if x == 0.0 || !x.is_finite() {
                0
            } else {
                x.abs().log2().floor() as i32 + 1
            };
            assert_eq!(r[1][l] as i32, e, "frexp_exp {x}");
            let sn =
                |v: f64| ((v.clamp(-1.0, 1.0) * 32767.0).round_ties_even() as i16 as u16) as u32;
            assert_eq!(r[2][l], sn(x) | sn(0.5) << 16);
            let un = |v: f64| (v.clamp(0.0, 1.0) * 65535.0).round_ties_even() as u32;
            assert_eq!(r[3][l], un(x) | un(0.5) << 16);
            let byte = if x.is_nan() {
                0
            } else {
                x.round_ties_even().clamp(0.0, 255.0) as u32
            };
            assert_eq!(r[4][l], byte << 8);
            assert_eq!(r[5][l], (k as i32 as f32).to_bits());
            assert_eq!(r[6][l], (k as f32).to_bits());
            assert_eq!(
                r[7][l],
                ((((k << 28) as i32) >> 28) as f32 / 16.0).to_bits()
            );
        }
    }
}

#[test]
fn half_operands_from_sgpr_high_halves_and_f16_modifiers() {
    let a = lanes(|l| 0x4000_3c00 + l as u32); // hi 2.0, lo ~1.0
    let body = "
        s_mov_b32 s6, 0x44003800
        v_mad_u16 v10, s6, 2, v1 op_sel:[1,0,0,0]
        v_max3_f16 v11, -v1, s6, 0 op_sel:[1,1,0,0]
        v_add_f16_e64 v12, -|v1|, 1.0
        v_cvt_f32_f16_e64 v13, -v1
        v_med3_i16 v14, v1, -1, 5 op_sel:[0,0,0,1]";
    for t in ALL {
        let r = run(t, HIP, &[a], body, 5);
        for l in 0..LANES {
            let lo = 0x3c00 + l as u32;
            // 0x4400 * 2 + lo, high half of v10 kept (it is 0).
            assert_eq!(r[0][l], (0x4400u32 * 2 + lo) & 0xffff);
            // max3(-2.0, 4.0, 0) = 4.0.
            assert_eq!(r[1][l], 0x4400);
            // -|lo| + 1.0: lane 0 gives 0; others are small negatives.
            if l == 0 {
                assert_eq!(r[2][l], 0);
            } else {
                assert_eq!(r[2][l] & 0x8000, 0x8000);
            }
            assert!(f32::from_bits(r[3][l]) < 0.0);
            // med3(lo, -1, 5) = 5 written to the high half; the low
            // half (zero) kept.
            assert_eq!(r[4][l], 5 << 16);
        }
        assert_eq!(f32::from_bits(r[3][0]), -1.0);
    }
}

#[test]
fn f64_compares_class_and_vop3_exec_writes() {
    let vals = [1.0f64, -0.0, f64::NAN, f64::NEG_INFINITY, 5e-324, 2.0];
    let lo = lanes(|l| vals[l % 6].to_bits() as u32);
    let hi = lanes(|l| (vals[l % 6].to_bits() >> 32) as u32);
    let body = "
        v_mov_b32 v20, v1
        v_mov_b32 v21, v2
        v_cmp_ge_f64 vcc, v[20:21], 1.0
        v_mov_b32 v10, vcc_lo
        s_mov_b32 s10, 0x13
        v_cmp_class_f64_e64 s[6:7], v[20:21], s10
        v_mov_b32 v11, s6
        v_cmpx_neq_f64_e64 s[8:9], v[20:21], 2.0
        v_mov_b32 v12, 0
        v_mov_b32 v12, 1
        s_mov_b64 exec, -1
        v_mov_b32 v13, s8";
    for t in ALL {
        let r = run(t, HIP, &[lo, hi], body, 4);
        let (mut ge, mut cls, mut neq) = (0u64, 0u64, 0u64);
        for l in 0..LANES {
            let v = vals[l % 6];
            ge |= u64::from(v >= 1.0) << l;
            // 0x13: signalling NaN, quiet NaN, -denormal.
            cls |= u64::from(v.is_nan()) << l;
            neq |= u64::from(v != 2.0) << l;
        }
        assert_eq!(r[0][0], ge as u32);
        assert_eq!(r[1][0], cls as u32);
        for l in 0..LANES {
            assert_eq!(r[2][l], (neq >> l & 1) as u32);
        }
        assert_eq!(r[3][0], neq as u32);
    }
}

#[test]
fn packed_fmac_and_reserved_sources() {
    let body = "
        v_mov_b32 v2, 0x40003c00
        v_mov_b32 v3, 0x40004000
        v_mov_b32 v10, 0x3c003c00
        v_pk_fmac_f16 v10, v2, v3";
    for t in NEW {
        let r = run(t, HIP, &[], body, 1);
        assert_eq!(r[0][5], 0x4500_4200);
    }
    // LDS direct (source 254) is not modelled.
    let e = try_run(Target::Gfx900, HIP, &[], "v_mov_b32 v10, src_lds_direct", 1);
    assert!(
        matches!(e, Err(DispatchError::IllegalInstruction { .. })),
        "{e:?}"
    );
}

#[test]
fn f16_mac_forms_keep_the_high_half() {
    // LLVM (zeroesHigh16BitsOfDest): gfx9's v_mac_f16/v_madak_f16 keep
    // the high half, v_add_f16 zeroes it.
    let body = "
        v_mov_b32 v2, 0x3c00
        v_mov_b32 v10, 0x12343c00
        v_mac_f16 v10, v2, v2
        v_mov_b32 v11, 0x12340000
        v_madak_f16 v11, v2, v2, 0x3c00
        v_mov_b32 v12, 0x12340000
        v_add_f16 v12, v2, v2";
    for t in ALL {
        let r = run(t, HIP, &[], body, 3);
        assert_eq!(r[0][0], 0x1234_4000);
        assert_eq!(r[1][0], 0x1234_4000);
        assert_eq!(r[2][0], 0x4000);
    }
}

#[test]
fn sdwa_and_dpp_float_modifiers() {
    let a = f32s(&[1.5, -2.0, 0.25, -0.0]);
    let b = lanes(|l| 0x4000_3c00 + (l as u32 & 1) * 0x0400); // f16 pairs
    let body = "
        v_add_f32_sdwa v10, -v1, |v1| dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:DWORD src1_sel:DWORD
        v_cvt_f32_f16_sdwa v11, -v2 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_1
        v_mul_f32_dpp v12, -v1, v1 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf
        v_cmp_lt_f32_sdwa vcc, -v1, |v1| src0_sel:DWORD src1_sel:DWORD
        v_mov_b32 v13, vcc_lo";
    for t in ALL {
        let r = run(t, HIP, &[a, b], body, 4);
        let mut lt = 0u32;
        for l in 0..LANES {
            let x = f32::from_bits(a[l]);
            assert_eq!(r[0][l], (-x + x.abs()).to_bits());
            assert_eq!(f32::from_bits(r[1][l]), -2.0);
            let y = f32::from_bits(a[l ^ 1]);
            assert_eq!(r[2][l], (-y * x).to_bits());
            if l < 32 && -x < x.abs() {
                lt |= 1 << l;
            }
        }
        assert_eq!(r[3][0], lt);
    }
}

#[test]
fn gfx940_moves_and_swaps() {
    let (a, b) = (ints(26), ints(27));
    let body = "
        v_mov_b32 v20, v1
        v_mov_b32 v21, v2
        v_mov_b64 v[22:23], v[20:21]
        v_lshl_add_u64 v[24:25], v[22:23], 3, v[20:21]
        v_mov_b32 v10, v24
        v_mov_b32 v11, v25
        v_mov_b32 v12, v1
        v_mov_b32 v13, v2
        v_swap_b32 v12, v13";
    let r = run(Target::Gfx940, HIP, &[a, b], body, 4);
    for l in 0..LANES {
        let x = a[l] as u64 | (b[l] as u64) << 32;
        let y = (x << 3).wrapping_add(x);
        assert_eq!((r[0][l], r[1][l]), (y as u32, (y >> 32) as u32));
        assert_eq!((r[2][l], r[3][l]), (b[l], a[l]));
    }
}

#[test]
fn gfx940_fp8_conversions() {
    // Hand-worked FNUZ codes: fp8 (E4M3, bias 8), bf8 (E5M2, bias 16).
    let body = "
        v_mov_b32 v2, 0x0180c040
        v_cvt_f32_fp8 v10, v2
        v_cvt_f32_fp8_sdwa v11, v2 src0_sel:BYTE_1
        v_cvt_pk_f32_bf8_sdwa v[20:21], v2 src0_sel:WORD_1
        v_mov_b32 v12, v20
        v_mov_b32 v13, v21
        v_mov_b32 v3, 1.0
        v_mov_b32 v4, -0.5
        v_mov_b32 v5, 0x43960000
        v_mov_b32 v14, 0x12345678
        v_cvt_pk_fp8_f32 v14, v3, v4 op_sel:[0,0,1]
        v_mov_b32 v15, 0
        v_cvt_pk_fp8_f32 v15, v5, 0
        v_cvt_pk_bf8_f32 v16, v5, -v3";
    let r = run(Target::Gfx940, HIP, &[], body, 7);
    assert_eq!(f32::from_bits(r[0][0]), 1.0); // 0x40
    assert_eq!(f32::from_bits(r[1][0]), -1.0); // 0xc0
    assert!(f32::from_bits(r[2][0]).is_nan()); // bf8 0x80
    assert_eq!(f32::from_bits(r[3][0]), (2f32).powi(-17)); // bf8 0x01
    assert_eq!(r[4][0], 0xb840_5678);
    // 300 overflows fp8 (max 240): NaN without clamp.
    assert_eq!(r[5][0], 0x0080);
    // bf8: 300 = 1.171875 * 2^8 rounds to 1.25 * 2^8 (0x61); -1.0 is 0xc0.
    assert_eq!(r[6][0], 0xc061);
}

#[test]
fn f64_conversions_and_transcendentals() {
    let vals = [2.5f64, -3.75, 1e10, -1e10, f64::NAN, 0.1, 4.0, 1e-310];
    let lo = lanes(|l| vals[l % 8].to_bits() as u32);
    let hi = lanes(|l| (vals[l % 8].to_bits() >> 32) as u32);
    let body = "
        v_mov_b32 v20, v1
        v_mov_b32 v21, v2
        v_cvt_i32_f64 v10, v[20:21]
        v_cvt_u32_f64 v11, v[20:21]
        v_cvt_f32_f64 v12, v[20:21]
        v_frexp_exp_i32_f64 v13, v[20:21]
        v_rcp_f64 v[22:23], v[20:21]
        v_mov_b32 v14, v22
        v_mov_b32 v15, v23
        v_cvt_f64_i32 v[24:25], v10
        v_mov_b32 v16, v24
        v_mov_b32 v17, v25";
    for t in ALL {
        let r = run(t, HIP, &[lo, hi], body, 8);
        for l in 0..LANES {
            let x = vals[l % 8];
            assert_eq!(r[0][l], x as i32 as u32, "{x}");
            assert_eq!(r[1][l], x as u32);
            let f = f32::from_bits(r[2][l]);
            assert!(f.to_bits() == (x as f32).to_bits() || f.is_nan() && x.is_nan());
            let e = if x == 0.0 || !x.is_finite() {
                0
            } else {
                x.abs().log2().floor() as i32 + 1
            };
            assert_eq!(r[3][l] as i32, e, "frexp_exp {x}");
            let rcp = f64::from_bits(r[4][l] as u64 | (r[5][l] as u64) << 32);
            assert!(rcp.to_bits() == (1.0 / x).to_bits() || rcp.is_nan() && x.is_nan());
            let back = f64::from_bits(r[6][l] as u64 | (r[7][l] as u64) << 32);
            assert_eq!(back, f64::from(x as i32));
        }
    }
}

#[test]
fn div_fixup_special_cases() {
    let inf = f32::INFINITY;
    // (quotient estimate, denominator, numerator) -> expected
    let cases: [(f32, f32, f32, f32); 8] = [
        (7.0, 2.0, -14.0, -7.0),
        (0.0, 0.0, 0.0, f32::NAN),
        (0.0, inf, -inf, f32::NAN),
        (0.0, -0.0, 3.0, -inf),
        (0.0, 2.0, inf, inf),
        (9.0, inf, 3.0, 0.0),
        (9.0, -2.0, 0.0, -0.0),
        (1.0, f32::NAN, 1.0, f32::NAN),
    ];
    let q = lanes(|l| cases[l % 8].0.to_bits());
    let d = lanes(|l| cases[l % 8].1.to_bits());
    let n = lanes(|l| cases[l % 8].2.to_bits());
    let body = "v_div_fixup_f32 v10, v1, v2, v3";
    for t in ALL {
        let r = run(t, HIP, &[q, d, n], body, 1);
        for l in 0..LANES {
            let want = cases[l % 8].3;
            let got = f32::from_bits(r[0][l]);
            assert!(
                got.to_bits() == want.to_bits() || got.is_nan() && want.is_nan(),
                "case {}: {got}",
                l % 8
            );
        }
    }
}

#[test]
fn non_ieee_min_max_and_f16_class() {
    let snan = 0x7f80_0001u32;
    let a = lanes(|l| if l % 2 == 0 { snan } else { 3.0f32.to_bits() });
    // f16: +inf, -0, qNaN, 1.0
    let h = lanes(|l| [0x7c00u32, 0x8000, 0x7e00, 0x3c00][l % 4]);
    let body = "
        v_max_f32 v10, v1, 1.0
        s_mov_b32 s6, 0x260
        v_cmp_class_f16_e64 s[8:9], v2, s6
        v_mov_b32 v11, s8
        v_cmpx_class_f16 vcc, v2, s6
        v_mov_b32 v12, 0
        v_mov_b32 v12, 1";
    for t in ALL {
        // IEEE off: a signalling NaN is just a NaN, the other operand wins.
        let r = run(t, 0xf0 << 12, &[a, h], body, 3);
        let mut cls = 0u32;
        for l in 0..LANES {
            let want = if l % 2 == 0 { 1.0f32 } else { 3.0 };
            assert_eq!(r[0][l], want.to_bits());
            // 0x260: -0 (5), +0 (6), +inf (9).
            let m = matches!(l % 4, 0 | 1);
            if l < 32 && m {
                cls |= 1 << l;
            }
            assert_eq!(r[2][l], u32::from(m));
        }
        assert_eq!(r[1][0], cls);
    }
}

#[test]
fn integer_clamp_saturates_in_vop3_and_sdwa() {
    let a = lanes(|l| [0xffff_fff0u32, 5, 0x7fff_fff0, 0x8000_0005][l % 4]);
    let b = lanes(|l| [0x20u32, 7, 0x20, 0x10][l % 4]);
    let body = "
        v_add_u32_e64 v10, v1, v2 clamp
        v_add_u32_sdwa v11, v1, v2 clamp dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:DWORD src1_sel:DWORD
        v_sub_u32_e64 v12, v2, v1 clamp
        v_add_i32 v13, v1, v2 clamp
        v_sub_i32 v14, v1, v2 clamp";
    for t in ALL {
        let r = run(t, HIP, &[a, b], body, 5);
        for l in 0..LANES {
            let (x, y) = (a[l], b[l]);
            assert_eq!(r[0][l], x.saturating_add(y));
            assert_eq!(r[1][l], x.saturating_add(y));
            assert_eq!(r[2][l], y.saturating_sub(x));
            assert_eq!(r[3][l], (x as i32).saturating_add(y as i32) as u32);
            assert_eq!(r[4][l], (x as i32).saturating_sub(y as i32) as u32);
        }
    }
}

/// Random well-formed VALU instruction words (VOP1, VOP2, VOPC, VOP3
/// with their literal, SDWA or DPP words).
fn random_valu(seed: u32, n: usize) -> Vec<u32> {
    let mut x = seed | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        x
    };
    let mut w = Vec::new();
    for _ in 0..n {
        let r = next();
        match r % 4 {
            0 => {
                // VOP3 (not VOP3P: opcode field below 0x1c0 in bits 25:16
                // keeps bits 31:23 away from 0x1a7).
                let op = next() % 0x380;
                // Modifiers (abs, op_sel, clamp; omod, neg) one time in
                // four.
                let mods = next() % 4 == 0;
                let lo = next() & if mods { 0xffff } else { 0xff };
                w.push(0xd000_0000 | op << 16 | lo);
                w.push(next() & if mods { !0 } else { 0x07ff_ffff });
            }
            k => {
                let mut word = next();
                word = match k {
                    1 => 0x7e00_0000 | word & 0x01ff_ffff, // VOP1
                    2 => 0x7c00_0000 | word & 0x01ff_ffff, // VOPC
                    _ => {
                        // VOP2 without the K-constant opcodes.
                        let mut op = (word >> 25) & 0x3f;
                        if matches!(op, 0x17 | 0x18 | 0x24 | 0x25) || op >= 0x3e {
                            op = 0x1;
                        }
                        word & 0x01ff_ffff | op << 25
                    }
                };
                // Source 0 picks a literal, SDWA or DPP word now and then.
                let src0 = match next() % 8 {
                    0 => 255,
                    1 => 249,
                    2 => 250,
                    _ => word & 0x1ff,
                };
                word = word & !0x1ff | src0;
                w.push(word);
                if matches!(src0, 249 | 250 | 255) {
                    w.push(next());
                }
            }
        }
    }
    w
}

/// Random programs per target in `random_valu_words_never_panic`.
const FUZZ_SEEDS: u32 = 40;

#[test]
fn random_valu_words_never_panic() {
    // Each run: a placeholder block of v_nop, replaced by random words,
    // then s_endpgm. Errors (unimplemented forms) are fine; panics are
    // not.
    let body = "v_nop\n".repeat(64);
    let mut runs = 0;
    for t in ALL {
        for seed in 0..FUZZ_SEEDS {
            let words = random_valu(seed * 7919 + t as u32, 24);
            let patch = |w: &mut Vec<u32>| {
                let start = w.iter().position(|&x| x == 0x7e00_0000).unwrap();
                for (k, v) in words.iter().enumerate().take(64) {
                    w[start + k] = *v;
                }
            };
            let _ = try_run_patched(t, HIP, &[lanes(|l| l as u32)], &body, 1, patch);
            runs += 1;
        }
    }
    assert_eq!(runs, 3 * FUZZ_SEEDS);
}

#[test]
fn division_sequences_match_the_host_on_random_bits() {
    for seed in 0..12u32 {
        // Random f32 bit patterns: every exponent, denormals, specials.
        let (n, d) = (ints(100 + seed), ints(200 + seed));
        let r = run(Target::Gfx90a, HIP, &[n, d], FDIV32, 1);
        for l in 0..LANES {
            let (x, y) = (f32::from_bits(n[l]), f32::from_bits(d[l]));
            let q = x / y;
            let got = f32::from_bits(r[0][l]);
            assert!(
                got.to_bits() == q.to_bits() || got.is_nan() && q.is_nan(),
                "{x:e} / {y:e} = {got:e}, want {q:e}"
            );
        }
        let (nh, dh) = (ints(300 + seed), ints(400 + seed));
        let inputs = [ints(500 + seed), nh, ints(600 + seed), dh];
        let r = run(Target::Gfx940, HIP, &inputs, FDIV64, 2);
        for l in 0..LANES {
            let x = f64::from_bits(inputs[0][l] as u64 | (inputs[1][l] as u64) << 32);
            let y = f64::from_bits(inputs[2][l] as u64 | (inputs[3][l] as u64) << 32);
            let q = x / y;
            let got = f64::from_bits(r[0][l] as u64 | (r[1][l] as u64) << 32);
            assert!(
                got.to_bits() == q.to_bits() || got.is_nan() && q.is_nan(),
                "{x:e} / {y:e} = {got:e}, want {q:e}"
            );
        }
    }
}
