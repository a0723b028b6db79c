//! VOP3P: packed math, mixed precision, dot products, AccVGPR moves and
//! the matrix (MFMA) instructions, against host-computed results.

// Lane loops index several per-lane arrays by the lane number.
#![allow(clippy::needless_range_loop)]

mod common;

use common::*;
use kfd_gpu::shader::Target;

const PACKED_TARGETS: [Target; 3] = [Target::Gfx900, Target::Gfx90a, Target::Gfx940];
const MFMA_TARGETS: [Target; 2] = [Target::Gfx90a, Target::Gfx940];

/// A lane-indexed register image.
type Reg = [u32; 64];

/// Runs one wave of `body`. Register `inputs[k].0` (a VGPR, or an AccVGPR
/// `aN`, loaded through v199) starts as `inputs[k].1`; the registers named
/// in `outputs` are stored afterwards and returned. The body may use every
/// register but v199..v204 and s[4:5], and must leave EXEC all ones.
fn run(target: Target, inputs: &[(&str, Reg)], body: &str, outputs: &[&str]) -> Vec<Reg> {
    run_in_mode(target, 0, inputs, body, outputs)
}

/// `compute_pgm_rsrc1` float controls as hipcc sets them: f32 and f16/f64
/// subnormals kept, DX10_CLAMP and IEEE_MODE on.
const HIP_RSRC1: u32 = 3 << 16 | 3 << 18 | 1 << 21 | 1 << 23;

/// As `run`, with the kernel's `compute_pgm_rsrc1` (its MODE fields) set
/// to `rsrc1`.
fn run_in_mode(
    target: Target,
    rsrc1: u32,
    inputs: &[(&str, Reg)],
    body: &str,
    outputs: &[&str],
) -> Vec<Reg> {
    let mem = memory();
    mem.store::<u64>(KERNARG, DATA);
    let slot_addr = |slot: usize| {
        format!(
            "v_add_co_u32 v202, vcc, {}, v200\nv_addc_co_u32 v203, vcc, 0, v201, vcc\n",
            slot * 256
        )
    };
    let mut asm = String::from(
        "s_load_dwordx2 s[4:5], s[0:1], 0x0\n\
         v_and_b32 v204, 0x3ff, v0\n\
         v_lshlrev_b32 v204, 2, v204\n\
         s_waitcnt lgkmcnt(0)\n\
         v_mov_b32 v201, s5\n\
         v_add_co_u32 v200, vcc, s4, v204\n\
         v_addc_co_u32 v201, vcc, 0, v201, vcc\n",
    );
    for (k, (r, vals)) in inputs.iter().enumerate() {
        for (l, v) in vals.iter().enumerate() {
            mem.store::<u32>(DATA + 256 * k as u64 + 4 * l as u64, *v);
        }
        asm += &slot_addr(k);
        if let Some(a) = r.strip_prefix('a') {
            asm += &format!(
                "global_load_dword v199, v[202:203], off\ns_waitcnt vmcnt(0)\nv_accvgpr_write_b32 a{a}, v199\n"
            );
        } else {
            asm += &format!("global_load_dword {r}, v[202:203], off\n");
        }
    }
    asm += "s_waitcnt vmcnt(0)\n";
    asm += body;
    asm += "\n";
    let first = inputs.len();
    for (k, r) in outputs.iter().enumerate() {
        asm += &slot_addr(first + k);
        let src = if let Some(a) = r.strip_prefix('a') {
            asm += &format!("v_accvgpr_read_b32 v199, a{a}\n");
            "v199"
        } else {
            r
        };
        asm += &format!("global_store_dword v[202:203], {src}, off\n");
    }
    asm += "s_endpgm\n";
    let words = assemble(target, &asm);
    Kernel {
        rsrc1,
        ..Kernel::new(target, "")
    }
    .run_code(&mem, &words)
    .unwrap_or_else(|e| panic!("{target:?}: {e}\n{body}"));
    (0..outputs.len())
        .map(|k| {
            std::array::from_fn(|l| mem.load::<u32>(DATA + 256 * (first + k) as u64 + 4 * l as u64))
        })
        .collect()
}

/// A deterministic pseudo-random generator (splitmix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn reg(&mut self) -> Reg {
        std::array::from_fn(|_| self.next() as u32)
    }
}

// ---------------------------------------------------------------------
// Host half precision, written independently of the executors: decode by
// formula, encode by searching the ordered finite values.

fn h2f(h: u16) -> f64 {
    let s = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let e = i32::from(h >> 10 & 0x1f);
    let m = f64::from(h & 0x3ff);
    match e {
        0 => s * m * 2f64.powi(-24),
        31 if m == 0.0 => s * f64::INFINITY,
        31 => f64::NAN,
        _ => s * (1.0 + m / 1024.0) * 2f64.powi(e - 15),
    }
}

/// The f16 nearest `x` (ties to even), infinities past the largest.
fn f2h(x: f64) -> u16 {
    if x.is_nan() {
        return 0x7e00;
    }
    let sign = if x.is_sign_negative() { 0x8000 } else { 0 };
    let a = x.abs();
    if a >= 65520.0 {
        return sign | 0x7c00;
    }
    // The largest positive pattern not above a, then the closer of it and
    // its successor.
    let (mut lo, mut hi) = (0u16, 0x7bffu16);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if h2f(mid) <= a {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let (d0, d1) = (a - h2f(lo), h2f(lo + 1) - a);
    let r = if d0 < d1 || (d0 == d1 && lo & 1 == 0) {
        lo
    } else {
        lo + 1
    };
    sign | r
}

/// Flushes a subnormal f16 to a signed zero (the test kernels run with
/// MODE's denormal controls at zero: flush inputs and results).
fn ftz_h(h: u16) -> u16 {
    if h & 0x7c00 == 0 {
        h & 0x8000
    } else {
        h
    }
}

fn ftz_f(x: f32) -> f32 {
    if x.is_subnormal() {
        0.0f32.copysign(x)
    } else {
        x
    }
}

fn is_nan_h(h: u16) -> bool {
    h & 0x7fff > 0x7c00
}

/// A random f16 of moderate magnitude (2^-6 .. 2^6), either sign.
fn rand_h(r: &mut Rng) -> u16 {
    let v = r.next() as u16;
    (v & 0x83ff) | ((9 + (v >> 10) % 13) << 10)
}

fn halves(r: &mut Rng, special: &[u16]) -> Reg {
    std::array::from_fn(|l| {
        let lo = if l < special.len() {
            special[l]
        } else {
            rand_h(r)
        };
        let hi = if l + 1 < special.len() {
            special[special.len() - 1 - l]
        } else {
            rand_h(r)
        };
        u32::from(lo) | u32::from(hi) << 16
    })
}

fn lo(x: u32) -> u16 {
    x as u16
}

fn hi(x: u32) -> u16 {
    (x >> 16) as u16
}

fn pack(l: u16, h: u16) -> u32 {
    u32::from(l) | u32::from(h) << 16
}

// ---------------------------------------------------------------------
// Packed 16-bit integers.

#[test]
fn packed_integer_ops_on_both_halves() {
    type Op = fn(u16, u16, u16) -> u16;
    let cases: [(&str, Op); 13] = [
        ("v_pk_mad_i16 v3, v0, v1, v2", |a, b, c| {
            (a as i16).wrapping_mul(b as i16).wrapping_add(c as i16) as u16
        }),
        ("v_pk_mad_u16 v3, v0, v1, v2", |a, b, c| {
            a.wrapping_mul(b).wrapping_add(c)
        }),
        ("v_pk_mul_lo_u16 v3, v0, v1", |a, b, _| a.wrapping_mul(b)),
        ("v_pk_add_i16 v3, v0, v1", |a, b, _| a.wrapping_add(b)),
        ("v_pk_sub_i16 v3, v0, v1", |a, b, _| a.wrapping_sub(b)),
        ("v_pk_add_u16 v3, v0, v1", |a, b, _| a.wrapping_add(b)),
        ("v_pk_sub_u16 v3, v0, v1", |a, b, _| a.wrapping_sub(b)),
        ("v_pk_lshlrev_b16 v3, v0, v1", |a, b, _| b << (a % 16)),
        ("v_pk_lshrrev_b16 v3, v0, v1", |a, b, _| b >> (a % 16)),
        ("v_pk_ashrrev_i16 v3, v0, v1", |a, b, _| {
            ((b as i16) >> (a % 16)) as u16
        }),
        ("v_pk_max_i16 v3, v0, v1", |a, b, _| {
            (a as i16).max(b as i16) as u16
        }),
        ("v_pk_min_u16 v3, v0, v1", |a, b, _| a.min(b)),
        ("v_pk_max_u16 v3, v0, v1", |a, b, _| a.max(b)),
    ];
    let mut r = Rng(1);
    for t in PACKED_TARGETS {
        for (asm, f) in cases {
            let (a, b, c) = (r.reg(), r.reg(), r.reg());
            let out = run(t, &[("v0", a), ("v1", b), ("v2", c)], asm, &["v3"]);
            for l in 0..64 {
                let want = pack(
                    f(lo(a[l]), lo(b[l]), lo(c[l])),
                    f(hi(a[l]), hi(b[l]), hi(c[l])),
                );
                assert_eq!(out[0][l], want, "{t:?} {asm} lane {l}");
            }
        }
    }
}

#[test]
fn packed_integer_clamp_saturates() {
    let mut r = Rng(2);
    type Op = fn(u16, u16) -> u16;
    let cases: [(&str, Op); 4] = [
        ("v_pk_add_i16 v3, v0, v1 clamp", |a, b| {
            (i32::from(a as i16) + i32::from(b as i16)).clamp(-32768, 32767) as u16
        }),
        ("v_pk_sub_i16 v3, v0, v1 clamp", |a, b| {
            (i32::from(a as i16) - i32::from(b as i16)).clamp(-32768, 32767) as u16
        }),
        ("v_pk_add_u16 v3, v0, v1 clamp", |a, b| a.saturating_add(b)),
        ("v_pk_sub_u16 v3, v0, v1 clamp", |a, b| a.saturating_sub(b)),
    ];
    for t in PACKED_TARGETS {
        for (asm, f) in cases {
            let (a, b) = (r.reg(), r.reg());
            let out = run(t, &[("v0", a), ("v1", b)], asm, &["v3"]);
            for l in 0..64 {
                let want = pack(f(lo(a[l]), lo(b[l])), f(hi(a[l]), hi(b[l])));
                assert_eq!(out[0][l], want, "{t:?} {asm} lane {l}");
            }
        }
        // mad_u16 saturating: 300 * 300 + 5 = 90005 -> 65535; 2 * 3 + 4 = 10.
        let a = [pack(300, 2); 64];
        let b = [pack(300, 3); 64];
        let c = [pack(5, 4); 64];
        let out = run(
            t,
            &[("v0", a), ("v1", b), ("v2", c)],
            "v_pk_mad_u16 v3, v0, v1, v2 clamp",
            &["v3"],
        );
        assert_eq!(out[0][0], pack(65535, 10));
        // mad_i16 saturating: -300 * 300 + 0 -> -32768.
        let a = [pack((-300i16) as u16, 7); 64];
        let out = run(
            t,
            &[("v0", a), ("v1", b), ("v2", [0; 64])],
            "v_pk_mad_i16 v3, v0, v1, v2 clamp",
            &["v3"],
        );
        assert_eq!(out[0][0], pack(0x8000, 21));
    }
}

#[test]
fn op_sel_chooses_halves_and_exec_masks_lanes() {
    let mut r = Rng(3);
    for t in PACKED_TARGETS {
        let (a, b, old) = (r.reg(), r.reg(), r.reg());
        // Low result: a.hi - b.lo; high result: a.lo - b.hi.
        let body = "s_mov_b32 s6, 0x0f0f0f0f\n\
                    s_mov_b32 s7, 0x80000001\n\
                    s_mov_b64 exec, s[6:7]\n\
                    v_pk_sub_u16 v3, v0, v1 op_sel:[1,0] op_sel_hi:[0,1]\n\
                    s_mov_b64 exec, -1";
        let out = run(t, &[("v0", a), ("v1", b), ("v3", old)], body, &["v3"]);
        let exec = 0x8000_0001_0f0f_0f0fu64;
        for l in 0..64 {
            let want = if exec >> l & 1 != 0 {
                pack(
                    hi(a[l]).wrapping_sub(lo(b[l])),
                    lo(a[l]).wrapping_sub(hi(b[l])),
                )
            } else {
                old[l]
            };
            assert_eq!(out[0][l], want, "{t:?} lane {l}");
        }
        // Both results from the high halves, with an SGPR source.
        let body = "s_mov_b32 s6, 0x00050003\n\
                    v_pk_add_u16 v3, s6, v1 op_sel:[1,1] op_sel_hi:[1,1]";
        let out = run(t, &[("v1", b)], body, &["v3"]);
        for l in 0..64 {
            let want = pack(hi(b[l]).wrapping_add(5), hi(b[l]).wrapping_add(5));
            assert_eq!(out[0][l], want, "{t:?} lane {l}");
        }
    }
}

#[test]
fn packed_inline_constants() {
    let b: Reg = std::array::from_fn(|l| pack(l as u16 * 3, 1000 + l as u16));
    for t in PACKED_TARGETS {
        // An integer constant is its sign-extended 32-bit value: -1 gives
        // 0xffff to both halves, 5 gives 5 low and 0 high.
        let out = run(t, &[("v1", b)], "v_pk_add_u16 v3, -1, v1", &["v3"]);
        for l in 0..64 {
            assert_eq!(
                out[0][l],
                pack(lo(b[l]).wrapping_sub(1), hi(b[l]).wrapping_sub(1))
            );
        }
        let out = run(t, &[("v1", b)], "v_pk_add_u16 v3, 5, v1", &["v3"]);
        for l in 0..64 {
            assert_eq!(out[0][l], pack(lo(b[l]) + 5, hi(b[l])));
        }
        let out = run(
            t,
            &[("v1", b)],
            "v_pk_add_u16 v3, 5, v1 op_sel_hi:[0,1]",
            &["v3"],
        );
        for l in 0..64 {
            assert_eq!(out[0][l], pack(lo(b[l]) + 5, hi(b[l]) + 5));
        }
        // A float constant in a 16-bit integer operation is its f32 bits.
        let out = run(t, &[("v1", b)], "v_pk_add_u16 v3, 1.0, v1", &["v3"]);
        for l in 0..64 {
            assert_eq!(out[0][l], pack(lo(b[l]), hi(b[l]).wrapping_add(0x3f80)));
        }
        // In an f16 operation it is the half in the low half, zero above.
        let x: Reg = [pack(0x4200, 0x4400); 64]; // 3.0, 4.0
        let out = run(t, &[("v1", x)], "v_pk_add_f16 v3, 1.0, v1", &["v3"]);
        assert_eq!(out[0][0], pack(0x4400, 0x4400)); // 4.0, 4.0 + 0
        let out = run(
            t,
            &[("v1", x)],
            "v_pk_add_f16 v3, 1.0, v1 op_sel_hi:[0,1]",
            &["v3"],
        );
        assert_eq!(out[0][0], pack(0x4400, 0x4500)); // 4.0, 5.0
    }
}

// ---------------------------------------------------------------------
// Packed half precision.

fn max_h(a: u16, b: u16, max: bool) -> u16 {
    match (is_nan_h(a), is_nan_h(b)) {
        (true, true) => return a | 0x200,
        (true, false) => return b,
        (false, true) => return a,
        _ => {}
    }
    let (x, y) = (h2f(a), h2f(b));
    if x == y {
        // -0 < +0
        let neg_a = a & 0x8000 != 0;
        return if neg_a == max { b } else { a };
    }
    if (x > y) == max {
        a
    } else {
        b
    }
}

fn check_h(got: u16, want: u16, what: &str) {
    if is_nan_h(want) {
        assert!(is_nan_h(got), "{what}: got {got:#06x}, want NaN");
    } else {
        assert_eq!(got, want, "{what}: got {got:#06x} want {want:#06x}");
    }
}

#[test]
fn packed_f16_arithmetic() {
    type Op = fn(u16, u16, u16) -> u16;
    let cases: [(&str, Op); 5] = [
        ("v_pk_add_f16 v3, v0, v1", |a, b, _| f2h(h2f(a) + h2f(b))),
        ("v_pk_mul_f16 v3, v0, v1", |a, b, _| f2h(h2f(a) * h2f(b))),
        ("v_pk_fma_f16 v3, v0, v1, v2", |a, b, c| {
            f2h(h2f(a).mul_add(h2f(b), h2f(c)))
        }),
        ("v_pk_max_f16 v3, v0, v1", |a, b, _| max_h(a, b, true)),
        ("v_pk_min_f16 v3, v0, v1", |a, b, _| max_h(a, b, false)),
    ];
    let special = [
        0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x3c00, 0x0001, 0x83ff, 0x7bff, 0xfbff, 0x0400,
        0x3555,
    ];
    let mut r = Rng(4);
    for t in PACKED_TARGETS {
        for (asm, f) in cases {
            let (a, b, c) = (
                halves(&mut r, &special),
                r.reg(),
                halves(&mut r, &special[3..]),
            );
            let b: Reg = std::array::from_fn(|l| {
                if l % 3 == 0 {
                    pack(rand_h(&mut r), rand_h(&mut r))
                } else {
                    b[l] & 0x7bff_fbff
                }
            });
            let out = run(t, &[("v0", a), ("v1", b), ("v2", c)], asm, &["v3"]);
            for l in 0..64 {
                for (g, x, y, z) in [
                    (lo(out[0][l]), lo(a[l]), lo(b[l]), lo(c[l])),
                    (hi(out[0][l]), hi(a[l]), hi(b[l]), hi(c[l])),
                ] {
                    let want = ftz_h(f(ftz_h(x), ftz_h(y), ftz_h(z)));
                    check_h(
                        g,
                        want,
                        &format!("{t:?} {asm} lane {l} {x:#x} {y:#x} {z:#x}"),
                    );
                }
            }
        }
    }
}

#[test]
fn packed_f16_rounds_to_nearest_even_and_fma_is_fused() {
    for t in PACKED_TARGETS {
        // 1 + 2^-11 (a tie) rounds to 1; 1 + 3*2^-11 to 1 + 2^-9.
        let a = [pack(0x3c00, 0x3c00); 64];
        let b = [pack(0x1000, 0x1600); 64]; // 2^-11, 3 * 2^-11
        let out = run(
            t,
            &[("v0", a), ("v1", b)],
            "v_pk_add_f16 v3, v0, v1",
            &["v3"],
        );
        assert_eq!(out[0][0], pack(0x3c00, 0x3c02), "{t:?}");
        // fma(1 + 2^-10, 1 - 2^-11, -1): exact 2^-11 - 2^-21 (unfused it
        // would be 0 or 2^-10 after rounding the product).
        let a = [pack(0x3c01, 0); 64];
        let b = [pack(0x3bff, 0); 64];
        let c = [pack(0xbc00, 0); 64];
        let out = run(
            t,
            &[("v0", a), ("v1", b), ("v2", c)],
            "v_pk_fma_f16 v3, v0, v1, v2",
            &["v3"],
        );
        assert_eq!(lo(out[0][0]), f2h(2f64.powi(-11) - 2f64.powi(-21)), "{t:?}");
    }
}

#[test]
fn packed_f16_neg_and_clamp() {
    let mut r = Rng(5);
    for t in PACKED_TARGETS {
        let (a, b) = (halves(&mut r, &[]), halves(&mut r, &[]));
        // Low: -a.lo + b.lo; high: a.hi + -b.hi.
        let out = run(
            t,
            &[("v0", a), ("v1", b)],
            "v_pk_add_f16 v3, v0, v1 neg_lo:[1,0] neg_hi:[0,1]",
            &["v3"],
        );
        for l in 0..64 {
            let want = pack(
                ftz_h(f2h(h2f(lo(b[l])) - h2f(lo(a[l])))),
                ftz_h(f2h(h2f(hi(a[l])) - h2f(hi(b[l])))),
            );
            assert_eq!(out[0][l], want, "{t:?} lane {l}");
        }
        let out = run(
            t,
            &[("v0", a), ("v1", b)],
            "v_pk_mul_f16 v3, v0, v1 clamp",
            &["v3"],
        );
        for l in 0..64 {
            let c = |x: u16, y: u16| {
                let p = h2f(f2h(h2f(x) * h2f(y)));
                f2h(p.clamp(0.0, 1.0)) & 0x7fff
            };
            let want = pack(c(lo(a[l]), lo(b[l])), c(hi(a[l]), hi(b[l])));
            assert_eq!(out[0][l], want, "{t:?} lane {l}");
        }
    }
}

// ---------------------------------------------------------------------
// Packed single precision (gfx90a+).

fn rand_f(r: &mut Rng) -> f32 {
    let v = r.next();
    let m = (v & 0x7f_ffff) as u32;
    let e = 100 + (v >> 23) as u32 % 56;
    f32::from_bits(m | e << 23 | ((v >> 40) as u32 & 1) << 31)
}

fn regs_f(r: &mut Rng) -> Reg {
    std::array::from_fn(|_| rand_f(r).to_bits())
}

#[test]
fn packed_f32_ops_select_dwords() {
    let mut r = Rng(6);
    type Op = fn(f32, f32, f32) -> f32;
    let cases: [(&str, Op); 3] = [
        ("v_pk_fma_f32", f32::mul_add),
        ("v_pk_add_f32", |a, b, _| a + b),
        ("v_pk_mul_f32", |a, b, _| a * b),
    ];
    for t in MFMA_TARGETS {
        for (name, f) in cases {
            let v: Vec<Reg> = (0..6).map(|_| regs_f(&mut r)).collect();
            let srcs = if name == "v_pk_fma_f32" {
                "v[0:1], v[2:3], v[4:5]"
            } else {
                "v[0:1], v[2:3]"
            };
            // op_sel:[1,0,1] op_sel_hi:[0,1,1], negate source 1 of the low
            // result and source 0 of the high one.
            let mods = if name == "v_pk_fma_f32" {
                "op_sel:[1,0,1] op_sel_hi:[0,1,1] neg_lo:[0,1,0] neg_hi:[1,0,0]"
            } else {
                "op_sel:[1,0] op_sel_hi:[0,1] neg_lo:[0,1] neg_hi:[1,0]"
            };
            let inputs: Vec<(&str, Reg)> = ["v0", "v1", "v2", "v3", "v4", "v5"]
                .into_iter()
                .zip(v.iter().copied())
                .collect();
            for (m, sel) in [("", false), (mods, true)] {
                let body = format!("{name} v[6:7], {srcs} {m}");
                let out = run(t, &inputs, &body, &["v6", "v7"]);
                for l in 0..64 {
                    let x = |k: usize| f32::from_bits(v[k][l]);
                    let (lo_res, hi_res) = if sel {
                        (f(x(1), -x(2), x(5)), f(-x(0), x(3), x(5)))
                    } else {
                        (f(x(0), x(2), x(4)), f(x(1), x(3), x(5)))
                    };
                    assert_eq!(out[0][l], ftz_f(lo_res).to_bits(), "{t:?} {body} lane {l}");
                    assert_eq!(out[1][l], ftz_f(hi_res).to_bits(), "{t:?} {body} lane {l}");
                }
            }
        }
    }
}

#[test]
fn packed_f32_scalar_pairs_constants_and_mov() {
    let mut r = Rng(7);
    for t in MFMA_TARGETS {
        let (a, b) = (regs_f(&mut r), regs_f(&mut r));
        let body = "s_mov_b32 s6, 2.0\n\
                    s_mov_b32 s7, 0.5\n\
                    v_pk_mul_f32 v[6:7], s[6:7], v[0:1]\n\
                    v_pk_mul_f32 v[8:9], s[6:7], v[0:1] op_sel:[1,0] op_sel_hi:[0,1]\n\
                    v_pk_add_f32 v[10:11], 1.0, v[0:1]\n\
                    v_pk_mov_b32 v[12:13], v[0:1], v[0:1] op_sel:[1,0]\n\
                    v_pk_mov_b32 v[14:15], v[0:1], v[0:1] op_sel:[0,1]";
        let out = run(
            t,
            &[("v0", a), ("v1", b)],
            body,
            &[
                "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13", "v14", "v15",
            ],
        );
        for l in 0..64 {
            let (x, y) = (f32::from_bits(a[l]), f32::from_bits(b[l]));
            let want = [
                2.0 * x,
                0.5 * y,
                0.5 * x,
                2.0 * y,
                1.0 + x,
                1.0 + y,
                y,
                x,
                x,
                y,
            ];
            for (k, w) in want.iter().enumerate() {
                assert_eq!(out[k][l], ftz_f(*w).to_bits(), "{t:?} result {k} lane {l}");
            }
        }
    }
}

#[test]
fn packed_f32_clamp_and_nan() {
    for t in MFMA_TARGETS {
        let a: Reg = std::array::from_fn(|l| [1.5f32, -0.25, 0.75, f32::NAN][l % 4].to_bits());
        let out = run(
            t,
            &[("v0", a), ("v1", a)],
            "v_pk_add_f32 v[6:7], v[0:1], 0 clamp\nv_pk_mul_f32 v[8:9], v[0:1], 1.0",
            &["v6", "v8"],
        );
        for l in 0..64 {
            // MODE.DX10_CLAMP is off in the test kernels: NaN stays NaN.
            let want = [1.0f32, 0.0, 0.75, f32::NAN][l % 4];
            let got = f32::from_bits(out[0][l]);
            assert!(
                got == want || (got.is_nan() && want.is_nan()),
                "lane {l}: {got}"
            );
            assert_eq!(f32::from_bits(out[1][l]).is_nan(), l % 4 == 3);
        }
    }
}

// ---------------------------------------------------------------------
// Mixed precision and dot products.

#[test]
fn fma_mix_reads_f16_or_f32_per_source() {
    let mut r = Rng(8);
    for t in MFMA_TARGETS {
        let a = halves(&mut r, &[]);
        let b = regs_f(&mut r);
        let c = halves(&mut r, &[]);
        let old = r.reg();
        // a: f16 high half, |.|; b: f32, negated; c: f16 low half.
        let body = "v_fma_mix_f32 v3, |v0|, -v1, v2 op_sel:[1,0,0] op_sel_hi:[1,0,1]\n\
                    v_fma_mixlo_f16 v4, v0, v1, v2 op_sel:[1,0,1] op_sel_hi:[1,0,1]\n\
                    v_fma_mixhi_f16 v5, v0, v1, v2 op_sel_hi:[1,0,1] clamp";
        let out = run(
            t,
            &[("v0", a), ("v1", b), ("v2", c), ("v4", old), ("v5", old)],
            body,
            &["v3", "v4", "v5"],
        );
        for l in 0..64 {
            let x = h2f(hi(a[l])).abs() as f32;
            let y = f32::from_bits(b[l]);
            let z = h2f(lo(c[l])) as f32;
            assert_eq!(
                out[0][l],
                ftz_f(x.mul_add(-y, z)).to_bits(),
                "{t:?} mix_f32 lane {l}"
            );
            let e = h2f(hi(a[l])) * f64::from(y) + h2f(hi(c[l]));
            assert_eq!(
                out[1][l],
                old[l] & 0xffff_0000 | u32::from(ftz_h(f2h(e))),
                "{t:?} mixlo lane {l}"
            );
            let e = h2f(lo(a[l])) * f64::from(y) + h2f(lo(c[l]));
            let h = if e > 1.0 {
                0x3c00
            } else {
                ftz_h(f2h(e.max(0.0)))
            };
            assert_eq!(
                out[2][l],
                old[l] & 0xffff | u32::from(h) << 16,
                "{t:?} mixhi lane {l}"
            );
        }
    }
}

#[test]
fn gfx900_mad_mix_is_unfused() {
    let mut r = Rng(9);
    let a = halves(&mut r, &[]);
    let b = regs_f(&mut r);
    let c = regs_f(&mut r);
    let out = run(
        Target::Gfx900,
        &[("v0", a), ("v1", b), ("v2", c)],
        "v_mad_mix_f32 v3, v0, v1, v2 op_sel_hi:[1,0,0]",
        &["v3"],
    );
    for l in 0..64 {
        let x = h2f(lo(a[l])) as f32;
        let want = ftz_f(ftz_f(x * f32::from_bits(b[l])) + f32::from_bits(c[l]));
        assert_eq!(out[0][l], want.to_bits(), "lane {l}");
    }
}

#[test]
fn dot2_f32_f16_sums_both_products() {
    let mut r = Rng(10);
    for t in MFMA_TARGETS {
        let (a, b, c) = (halves(&mut r, &[]), halves(&mut r, &[]), regs_f(&mut r));
        let out = run(
            t,
            &[("v0", a), ("v1", b), ("v2", c)],
            "v_dot2_f32_f16 v3, v0, v1, v2\n\
             v_dot2_f32_f16 v4, v0, v1, v2 neg_lo:[0,0,1] neg_hi:[0,1,0]",
            &["v3", "v4"],
        );
        for l in 0..64 {
            let z = f64::from(f32::from_bits(c[l]));
            let s = h2f(lo(a[l])) * h2f(lo(b[l])) + h2f(hi(a[l])) * h2f(hi(b[l])) + z;
            assert_eq!(out[0][l], ftz_f(s as f32).to_bits(), "{t:?} lane {l}");
            let s = h2f(lo(a[l])) * h2f(lo(b[l])) - h2f(hi(a[l])) * h2f(hi(b[l])) - z;
            assert_eq!(out[1][l], ftz_f(s as f32).to_bits(), "{t:?} sel lane {l}");
        }
    }
}

#[test]
fn integer_dot_products_wrap_or_saturate() {
    let mut r = Rng(11);
    let s8 = |v: u32, n: u32| i64::from((v >> (8 * n)) as u8 as i8);
    let u8_ = |v: u32, n: u32| i64::from((v >> (8 * n)) as u8);
    let s4 = |v: u32, n: u32| i64::from(((v >> (4 * n)) as i32) << 28 >> 28);
    let u4 = |v: u32, n: u32| i64::from((v >> (4 * n)) & 15);
    let s16 = |v: u32, n: u32| i64::from((v >> (16 * n)) as u16 as i16);
    let u16_ = |v: u32, n: u32| i64::from((v >> (16 * n)) as u16);
    type Field = fn(u32, u32) -> i64;
    let cases: [(&str, u32, Field, bool); 6] = [
        ("v_dot2_i32_i16", 2, s16, true),
        ("v_dot2_u32_u16", 2, u16_, false),
        ("v_dot4_i32_i8", 4, s8, true),
        ("v_dot4_u32_u8", 4, u8_, false),
        ("v_dot8_i32_i4", 8, s4, true),
        ("v_dot8_u32_u4", 8, u4, false),
    ];
    for t in MFMA_TARGETS {
        for (name, n, field, signed) in cases {
            let (a, b) = (r.reg(), r.reg());
            // Accumulators near the limits, so the sums overflow.
            let c: Reg = std::array::from_fn(|l| match l % 4 {
                0 => 0x7fff_fff0,
                1 => 0x8000_0010,
                2 => 0xffff_fff0,
                _ => r.next() as u32,
            });
            let body = format!("{name} v3, v0, v1, v2\n{name} v4, v0, v1, v2 clamp");
            let out = run(t, &[("v0", a), ("v1", b), ("v2", c)], &body, &["v3", "v4"]);
            for l in 0..64 {
                let cc = if signed {
                    i64::from(c[l] as i32)
                } else {
                    i64::from(c[l])
                };
                let sum: i64 = (0..n).map(|k| field(a[l], k) * field(b[l], k)).sum::<i64>() + cc;
                let sat = if signed {
                    sum.clamp(i64::from(i32::MIN), i64::from(i32::MAX))
                } else {
                    sum.clamp(0, i64::from(u32::MAX))
                };
                assert_eq!(out[0][l], sum as u32, "{t:?} {name} lane {l}");
                assert_eq!(out[1][l], sat as u32, "{t:?} {name} clamp lane {l}");
            }
        }
    }
}

// ---------------------------------------------------------------------
// AccVGPRs.

#[test]
fn accvgpr_moves_are_a_separate_register_file() {
    let mut r = Rng(12);
    for t in MFMA_TARGETS {
        let (a, b) = (r.reg(), r.reg());
        let body = "v_accvgpr_write_b32 a1, v1\n\
                    v_accvgpr_write_b32 a255, v2\n\
                    v_accvgpr_write_b32 a3, -2.0\n\
                    s_mov_b32 s6, 0x12345678\n\
                    v_accvgpr_write_b32 a4, s6\n\
                    v_accvgpr_write_b32 a5, 7\n\
                    v_accvgpr_write_b32 a6, v1\n\
                    s_mov_b32 s6, 0x0000ffff\n\
                    s_mov_b32 s7, 0xff000000\n\
                    s_mov_b64 exec, s[6:7]\n\
                    v_accvgpr_mov_b32 a6, a255\n\
                    v_accvgpr_read_b32 v3, a1\n\
                    s_mov_b64 exec, -1\n\
                    v_accvgpr_read_b32 v4, a255";
        let out = run(
            t,
            &[("v1", a), ("v2", b), ("v3", b)],
            body,
            &["v1", "a1", "a255", "a3", "a4", "a5", "a6", "v3", "v4"],
        );
        let exec = 0xff00_0000_0000_ffffu64;
        for l in 0..64 {
            let on = exec >> l & 1 != 0;
            assert_eq!(out[0][l], a[l], "{t:?} v1 untouched");
            assert_eq!(out[1][l], a[l], "{t:?} a1");
            assert_eq!(out[2][l], b[l], "{t:?} a255");
            assert_eq!(out[3][l], (-2.0f32).to_bits(), "{t:?} a3");
            assert_eq!(out[4][l], 0x1234_5678, "{t:?} a4");
            assert_eq!(out[5][l], 7, "{t:?} a5");
            assert_eq!(out[6][l], if on { b[l] } else { a[l] }, "{t:?} a6 lane {l}");
            assert_eq!(out[7][l], if on { a[l] } else { b[l] }, "{t:?} v3 lane {l}");
            assert_eq!(out[8][l], b[l], "{t:?} v4");
        }
    }
}

// ---------------------------------------------------------------------
// MFMA. The register layouts below are transcribed from AMD's matrix
// instruction calculator (`--detail-instruction` formulas and
// `--matrix-layout` tables for CDNA2/CDNA3).

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ty {
    F32,
    F16,
    Bf16,
    I8,
    Fp8,
    Bf8,
    F64,
}

impl Ty {
    fn bits(self) -> usize {
        match self {
            Ty::F32 => 32,
            Ty::F16 | Ty::Bf16 => 16,
            Ty::I8 | Ty::Fp8 | Ty::Bf8 => 8,
            Ty::F64 => 64,
        }
    }

    /// A random element, as raw bits, of moderate magnitude.
    fn random(self, r: &mut Rng) -> u64 {
        match self {
            Ty::F32 => u64::from(rand_f(r).to_bits()),
            Ty::F16 => u64::from(rand_h(r)),
            Ty::Bf16 => {
                let v = r.next() as u16;
                u64::from((v & 0x807f) | (120 + (v >> 7) % 16) << 7)
            }
            Ty::I8 => r.next() & 0xff,
            Ty::Fp8 | Ty::Bf8 => {
                let v = r.next() & 0xff;
                if v == 0x80 {
                    0
                } else {
                    v
                }
            }
            Ty::F64 => {
                let v = r.next();
                (v & 0x800f_ffff_ffff_ffff) | (1000 + (v >> 52) % 40) << 52
            }
        }
    }

    fn value(self, v: u64) -> f64 {
        let fnuz = |v: u64, man: i32, bias: i32| {
            let s = if v & 0x80 != 0 { -1.0 } else { 1.0 };
            let e = ((v & 0x7f) >> man) as i32;
            let m = (v & ((1 << man) - 1)) as f64 / f64::from(1 << man);
            if e == 0 {
                s * m * 2f64.powi(1 - bias)
            } else {
                s * (1.0 + m) * 2f64.powi(e - bias)
            }
        };
        match self {
            Ty::F32 => f64::from(f32::from_bits(v as u32)),
            Ty::F16 => h2f(v as u16),
            Ty::Bf16 => f64::from(f32::from_bits((v as u32) << 16)),
            Ty::I8 => f64::from(v as u8 as i8),
            Ty::Fp8 => fnuz(v, 3, 8),
            Ty::Bf8 => fnuz(v, 2, 16),
            Ty::F64 => f64::from_bits(v),
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Mfma {
    gfx90a: Option<&'static str>,
    gfx940: Option<&'static str>,
    m: usize,
    k: usize,
    blocks: usize,
    a: Ty,
    b: Ty,
}

impl Mfma {
    /// Elements of A per lane.
    fn kpl(&self) -> usize {
        self.k * self.m * self.blocks / 64
    }

    fn in_regs(&self) -> usize {
        (self.kpl() * self.a.bits()).div_ceil(32)
    }

    fn float_out(&self) -> bool {
        self.a != Ty::I8
    }

    fn f64(&self) -> bool {
        self.a == Ty::F64
    }

    /// 32-bit registers of C/D.
    fn out_regs(&self) -> usize {
        self.blocks * self.m * self.m / 64 * if self.f64() { 2 } else { 1 }
    }

    /// (block, row of A / column of B, k) of element `e` of lane `l`.
    fn input(&self, l: usize, e: usize) -> (usize, usize, usize) {
        let m = self.m;
        if self.f64() {
            return if m == 16 {
                (0, l % 16, l / 16)
            } else {
                ((l / 4) % 4, l % 4, l / 16)
            };
        }
        if self.blocks > 1 {
            (l / m, l % m, e)
        } else {
            (0, l % m, self.kpl() * (l / m) + e)
        }
    }

    /// (block, row, column) of D held by 32-bit register `g` (f64: pair
    /// `g`) in lane `l`.
    fn output(&self, g: usize, l: usize) -> (usize, usize, usize) {
        if self.f64() {
            return if self.m == 16 {
                (0, 4 * g + l / 16, l % 16)
            } else {
                ((l / 4) % 4, l / 16, l % 4)
            };
        }
        match self.m {
            32 => (g / 16, (8 * (g / 4)) % 32 + 4 * (l / 32) + g % 4, l % 32),
            16 => (g / 4, 4 * (l / 16) + g % 4, l % 16),
            _ => (l / 4, g % 4, l % 4),
        }
    }
}

const fn mf(
    gfx90a: Option<&'static str>,
    gfx940: Option<&'static str>,
    m: usize,
    k: usize,
    blocks: usize,
    a: Ty,
) -> Mfma {
    Mfma {
        gfx90a,
        gfx940,
        m,
        k,
        blocks,
        a,
        b: a,
    }
}

const MFMAS: [Mfma; 38] = [
    mf(
        Some("v_mfma_f32_32x32x1f32"),
        Some("v_mfma_f32_32x32x1_2b_f32"),
        32,
        1,
        2,
        Ty::F32,
    ),
    mf(
        Some("v_mfma_f32_16x16x1f32"),
        Some("v_mfma_f32_16x16x1_4b_f32"),
        16,
        1,
        4,
        Ty::F32,
    ),
    mf(
        Some("v_mfma_f32_4x4x1f32"),
        Some("v_mfma_f32_4x4x1_16b_f32"),
        4,
        1,
        16,
        Ty::F32,
    ),
    mf(
        Some("v_mfma_f32_32x32x2f32"),
        Some("v_mfma_f32_32x32x2_f32"),
        32,
        2,
        1,
        Ty::F32,
    ),
    mf(
        Some("v_mfma_f32_16x16x4f32"),
        Some("v_mfma_f32_16x16x4_f32"),
        16,
        4,
        1,
        Ty::F32,
    ),
    mf(
        Some("v_mfma_f32_32x32x4f16"),
        Some("v_mfma_f32_32x32x4_2b_f16"),
        32,
        4,
        2,
        Ty::F16,
    ),
    mf(
        Some("v_mfma_f32_16x16x4f16"),
        Some("v_mfma_f32_16x16x4_4b_f16"),
        16,
        4,
        4,
        Ty::F16,
    ),
    mf(
        Some("v_mfma_f32_4x4x4f16"),
        Some("v_mfma_f32_4x4x4_16b_f16"),
        4,
        4,
        16,
        Ty::F16,
    ),
    mf(
        Some("v_mfma_f32_32x32x8f16"),
        Some("v_mfma_f32_32x32x8_f16"),
        32,
        8,
        1,
        Ty::F16,
    ),
    mf(
        Some("v_mfma_f32_16x16x16f16"),
        Some("v_mfma_f32_16x16x16_f16"),
        16,
        16,
        1,
        Ty::F16,
    ),
    mf(
        Some("v_mfma_i32_32x32x4i8"),
        Some("v_mfma_i32_32x32x4_2b_i8"),
        32,
        4,
        2,
        Ty::I8,
    ),
    mf(
        Some("v_mfma_i32_16x16x4i8"),
        Some("v_mfma_i32_16x16x4_4b_i8"),
        16,
        4,
        4,
        Ty::I8,
    ),
    mf(
        Some("v_mfma_i32_4x4x4i8"),
        Some("v_mfma_i32_4x4x4_16b_i8"),
        4,
        4,
        16,
        Ty::I8,
    ),
    mf(Some("v_mfma_i32_32x32x8i8"), None, 32, 8, 1, Ty::I8),
    mf(Some("v_mfma_i32_16x16x16i8"), None, 16, 16, 1, Ty::I8),
    mf(None, Some("v_mfma_i32_32x32x16_i8"), 32, 16, 1, Ty::I8),
    mf(None, Some("v_mfma_i32_16x16x32_i8"), 16, 32, 1, Ty::I8),
    mf(
        Some("v_mfma_f32_32x32x4bf16_1k"),
        Some("v_mfma_f32_32x32x4_2b_bf16"),
        32,
        4,
        2,
        Ty::Bf16,
    ),
    mf(
        Some("v_mfma_f32_16x16x4bf16_1k"),
        Some("v_mfma_f32_16x16x4_4b_bf16"),
        16,
        4,
        4,
        Ty::Bf16,
    ),
    mf(
        Some("v_mfma_f32_4x4x4bf16_1k"),
        Some("v_mfma_f32_4x4x4_16b_bf16"),
        4,
        4,
        16,
        Ty::Bf16,
    ),
    mf(
        Some("v_mfma_f32_32x32x8bf16_1k"),
        Some("v_mfma_f32_32x32x8_bf16"),
        32,
        8,
        1,
        Ty::Bf16,
    ),
    mf(
        Some("v_mfma_f32_16x16x16bf16_1k"),
        Some("v_mfma_f32_16x16x16_bf16"),
        16,
        16,
        1,
        Ty::Bf16,
    ),
    mf(Some("v_mfma_f32_32x32x2bf16"), None, 32, 2, 2, Ty::Bf16),
    mf(Some("v_mfma_f32_16x16x2bf16"), None, 16, 2, 4, Ty::Bf16),
    mf(Some("v_mfma_f32_4x4x2bf16"), None, 4, 2, 16, Ty::Bf16),
    mf(Some("v_mfma_f32_32x32x4bf16"), None, 32, 4, 1, Ty::Bf16),
    mf(Some("v_mfma_f32_16x16x8bf16"), None, 16, 8, 1, Ty::Bf16),
    mf(
        Some("v_mfma_f64_16x16x4f64"),
        Some("v_mfma_f64_16x16x4_f64"),
        16,
        4,
        1,
        Ty::F64,
    ),
    mf(
        Some("v_mfma_f64_4x4x4f64"),
        Some("v_mfma_f64_4x4x4_4b_f64"),
        4,
        4,
        4,
        Ty::F64,
    ),
    mf(
        None,
        Some("v_mfma_f32_16x16x32_fp8_fp8"),
        16,
        32,
        1,
        Ty::Fp8,
    ),
    Mfma {
        b: Ty::Bf8,
        ..mf(
            None,
            Some("v_mfma_f32_16x16x32_fp8_bf8"),
            16,
            32,
            1,
            Ty::Fp8,
        )
    },
    Mfma {
        b: Ty::Fp8,
        ..mf(
            None,
            Some("v_mfma_f32_16x16x32_bf8_fp8"),
            16,
            32,
            1,
            Ty::Bf8,
        )
    },
    mf(
        None,
        Some("v_mfma_f32_16x16x32_bf8_bf8"),
        16,
        32,
        1,
        Ty::Bf8,
    ),
    mf(
        None,
        Some("v_mfma_f32_32x32x16_fp8_fp8"),
        32,
        16,
        1,
        Ty::Fp8,
    ),
    Mfma {
        b: Ty::Bf8,
        ..mf(
            None,
            Some("v_mfma_f32_32x32x16_fp8_bf8"),
            32,
            16,
            1,
            Ty::Fp8,
        )
    },
    Mfma {
        b: Ty::Fp8,
        ..mf(
            None,
            Some("v_mfma_f32_32x32x16_bf8_fp8"),
            32,
            16,
            1,
            Ty::Bf8,
        )
    },
    mf(
        None,
        Some("v_mfma_f32_32x32x16_bf8_bf8"),
        32,
        16,
        1,
        Ty::Bf8,
    ),
    mf(
        Some("v_mfma_f32_32x32x8f16"),
        Some("v_mfma_f32_32x32x8_f16"),
        32,
        8,
        1,
        Ty::F16,
    ),
];

fn range(base: &str, first: usize, n: usize) -> String {
    if n == 1 {
        format!("{base}{first}")
    } else {
        format!("{base}[{first}:{}]", first + n - 1)
    }
}

/// How a test places the MFMA operands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// A, B in VGPRs, C and D in AccVGPRs.
    AccCd,
    /// Everything in VGPRs.
    Vgprs,
    /// A and B in AccVGPRs, C the constant 0, D in AccVGPRs.
    AccAbZeroC,
}

/// Runs `x` on `t` with random operands and compares with the product
/// computed on the host from the transcribed layouts.
fn check_mfma(t: Target, name: &str, x: &Mfma, place: Place, r: &mut Rng) {
    check_mfma_mods(t, name, x, place, (0, 0, 0), r)
}

/// The lane whose B registers lane `lane` reads under BLGP (as the
/// calculator's `_get_blgp_transformed_lane`).
fn blgp_source(lane: usize, blgp: usize) -> usize {
    match blgp {
        1 => lane % 32,
        2 if lane < 32 => lane + 32,
        3 => (lane + 16) % 64,
        4 => lane % 16,
        5 if lane < 16 => lane + 16,
        5 if lane >= 48 => lane - 32,
        5 if lane >= 32 => lane - 16,
        6 if lane >= 48 => lane - 16,
        6 if lane < 16 => lane + 32,
        6 if lane < 32 => lane + 16,
        7 => lane + (3 - lane / 16) * 16,
        _ => lane,
    }
}

/// As `check_mfma`, with modifiers (CBSZ, ABID, BLGP).
fn check_mfma_mods(
    t: Target,
    name: &str,
    x: &Mfma,
    place: Place,
    (cbsz, abid, blgp): (usize, usize, usize),
    r: &mut Rng,
) {
    let (ra, rc) = (x.in_regs(), x.out_regs());
    // Random matrices, as raw element bits.
    let mut a = vec![0u64; x.blocks * x.m * x.k];
    let mut b = vec![0u64; x.blocks * x.k * x.m];
    for v in a.iter_mut() {
        *v = x.a.random(r);
    }
    for v in b.iter_mut() {
        *v = x.b.random(r);
    }
    // Their registers.
    let mut areg = vec![[0u32; 64]; ra];
    let mut breg = vec![[0u32; 64]; ra];
    let per_reg = (32 / x.a.bits()).max(1);
    for l in 0..64 {
        for e in 0..x.kpl() {
            let (blk, rc_, k) = x.input(l, e);
            let va = a[(blk * x.m + rc_) * x.k + k];
            let vb = b[(blk * x.k + k) * x.m + rc_];
            if x.f64() {
                areg[0][l] = va as u32;
                areg[1][l] = (va >> 32) as u32;
                breg[0][l] = vb as u32;
                breg[1][l] = (vb >> 32) as u32;
            } else {
                let (g, sh) = (e / per_reg, (e % per_reg) * x.a.bits());
                areg[g][l] |= (va as u32) << sh;
                breg[g][l] |= (vb as u32) << sh;
            }
        }
    }
    let mut c = vec![[0u32; 64]; rc];
    if place != Place::AccAbZeroC {
        if x.f64() {
            for p in 0..rc / 2 {
                let v: [u64; 64] = std::array::from_fn(|_| Ty::F64.random(r));
                c[2 * p] = v.map(|x| x as u32);
                c[2 * p + 1] = v.map(|x| (x >> 32) as u32);
            }
        } else {
            for g in &mut c {
                *g = if x.float_out() { regs_f(r) } else { r.reg() };
            }
        }
    }
    let (a_file, cd_file) = match place {
        Place::AccCd => ("v", "a"),
        Place::Vgprs => ("v", "v"),
        Place::AccAbZeroC => ("a", "a"),
    };
    let mut inputs: Vec<(String, Reg)> = Vec::new();
    for (g, v) in areg.iter().enumerate() {
        inputs.push((format!("{a_file}{}", g), *v));
    }
    for (g, v) in breg.iter().enumerate() {
        inputs.push((format!("{a_file}{}", 4 + g), *v));
    }
    let cd0 = 32;
    if place != Place::AccAbZeroC {
        for (g, v) in c.iter().enumerate() {
            inputs.push((format!("{cd_file}{}", cd0 + g), *v));
        }
    }
    let src_c = if place == Place::AccAbZeroC {
        "0".to_string()
    } else {
        range(cd_file, cd0, rc)
    };
    let mods = if (cbsz, abid, blgp) == (0, 0, 0) {
        String::new()
    } else {
        format!(" cbsz:{cbsz} abid:{abid} blgp:{blgp}")
    };
    let body = format!(
        "{name} {}, {}, {}, {src_c}{mods}",
        range(cd_file, cd0, rc),
        range(a_file, 0, ra),
        range(a_file, 4, ra),
    );
    // The B the instruction sees: each element from the lane BLGP names.
    let mut b_seen = vec![0u64; b.len()];
    for l in 0..64 {
        let src = blgp_source(l, blgp);
        for e in 0..x.kpl() {
            let (blk, j, k) = x.input(l, e);
            let raw = if x.f64() {
                u64::from(breg[0][src]) | u64::from(breg[1][src]) << 32
            } else {
                let (g, sh) = (e / per_reg, (e % per_reg) * x.b.bits());
                u64::from(breg[g][src] >> sh) & ((1u64 << x.b.bits()) - 1)
            };
            b_seen[(blk * x.k + k) * x.m + j] = raw;
        }
    }
    let b = b_seen;
    // The block of A each block of the product uses.
    let a_block = |blk: usize| blk / (1 << cbsz) * (1 << cbsz) + abid;
    let outs: Vec<String> = (0..rc).map(|g| format!("{cd_file}{}", cd0 + g)).collect();
    let inputs_ref: Vec<(&str, Reg)> = inputs.iter().map(|(n, v)| (n.as_str(), *v)).collect();
    let outs_ref: Vec<&str> = outs.iter().map(|s| s.as_str()).collect();
    let got = run(t, &inputs_ref, &body, &outs_ref);
    let what = format!("{t:?} {body} ({place:?})");
    let per = if x.f64() { 2 } else { 1 };
    for g in 0..rc / per {
        for l in 0..64 {
            let (blk, i, j) = x.output(g, l);
            let prods = (0..x.k).map(|k| {
                x.a.value(a[(a_block(blk) * x.m + i) * x.k + k])
                    * x.b.value(b[(blk * x.k + k) * x.m + j])
            });
            if x.f64() {
                let mut acc =
                    f64::from_bits(u64::from(c[2 * g][l]) | u64::from(c[2 * g + 1][l]) << 32);
                let mut want_abs = acc.abs();
                for p in prods {
                    acc += p;
                    want_abs += p.abs();
                }
                let v =
                    f64::from_bits(u64::from(got[2 * g][l]) | u64::from(got[2 * g + 1][l]) << 32);
                assert!(
                    (v - acc).abs() <= 1e-13 * want_abs,
                    "{what}: D[{blk}][{i}][{j}] = {v}, want {acc}"
                );
            } else if x.float_out() {
                let cc = f64::from(f32::from_bits(c[g][l]));
                let (mut acc, mut mag) = (cc, cc.abs());
                for p in prods {
                    acc += p;
                    mag += p.abs();
                }
                let v = f64::from(f32::from_bits(got[g][l]));
                assert!(
                    (v - acc).abs() <= 1e-6 * mag,
                    "{what}: D[{blk}][{i}][{j}] = {v}, want {acc} (reg {g} lane {l})"
                );
            } else {
                let acc = prods.sum::<f64>() as i64 + i64::from(c[g][l] as i32);
                assert_eq!(
                    got[g][l], acc as u32,
                    "{what}: D[{blk}][{i}][{j}] (reg {g} lane {l})"
                );
            }
        }
    }
}

#[test]
fn mfma_layouts_and_products_match_the_host() {
    let mut r = Rng(13);
    for x in MFMAS.iter() {
        for (t, name) in [(Target::Gfx90a, x.gfx90a), (Target::Gfx940, x.gfx940)] {
            let Some(name) = name else {
                continue;
            };
            check_mfma(t, name, x, Place::AccCd, &mut r);
        }
    }
}

#[test]
fn mfma_operand_files_and_constant_c() {
    let mut r = Rng(14);
    // One shape of each layout family is enough for the operand forms.
    for x in [&MFMAS[8], &MFMAS[1], &MFMAS[12], &MFMAS[27], &MFMAS[28]] {
        for (t, name) in [(Target::Gfx90a, x.gfx90a), (Target::Gfx940, x.gfx940)] {
            let Some(name) = name else {
                continue;
            };
            check_mfma(t, name, x, Place::Vgprs, &mut r);
            check_mfma(t, name, x, Place::AccAbZeroC, &mut r);
        }
    }
}

#[test]
fn mfma_broadcast_modifiers() {
    let mut r = Rng(15);
    let cases: [(usize, (usize, usize, usize)); 9] = [
        (5, (1, 1, 0)), // 32x32x4f16, two blocks: A of block 1 to both
        (5, (0, 0, 2)),
        (5, (1, 0, 3)),
        (2, (2, 3, 5)),  // 4x4x1f32, sixteen blocks
        (7, (4, 9, 6)),  // 4x4x4f16
        (1, (1, 1, 7)),  // 16x16x1f32
        (11, (2, 2, 4)), // 16x16x4i8
        (4, (0, 0, 1)),  // 16x16x4f32: BLGP on both targets
        (8, (0, 0, 1)),  // 32x32x8f16: BLGP on gfx90a only
    ];
    for (n, mods) in cases {
        let x = &MFMAS[n];
        for (t, name) in [(Target::Gfx90a, x.gfx90a), (Target::Gfx940, x.gfx940)] {
            let Some(name) = name else {
                continue;
            };
            if t == Target::Gfx940 && n == 8 {
                continue;
            }
            check_mfma_mods(t, name, x, Place::AccCd, mods, &mut r);
        }
    }
}

#[test]
fn mfma_undocumented_modifier_forms_are_reported_unimplemented() {
    for (t, asm) in [
        // ABID beyond 2^CBSZ - 1.
        (
            Target::Gfx90a,
            "v_mfma_f32_32x32x4f16 a[0:31], v[0:1], v[2:3], a[0:31] cbsz:0 abid:1",
        ),
        // BLGP on a gfx940 single-block f16 shape.
        (
            Target::Gfx940,
            "v_mfma_f32_32x32x8_f16 a[0:15], v[0:1], v[2:3], a[0:15] blgp:1",
        ),
        // f64 negate bits.
        (
            Target::Gfx940,
            "v_mfma_f64_16x16x4_f64 a[0:7], v[0:1], v[2:3], a[0:7] neg:[1,0,0]",
        ),
    ] {
        let mem = memory();
        mem.store::<u64>(KERNARG, DATA);
        let e = Kernel::new(t, &format!("{asm}\ns_endpgm"))
            .run(&mem)
            .unwrap_err()
            .to_string();
        assert!(e.contains("v_mfma_f"), "{t:?} {asm}: {e}");
    }
}

#[test]
fn op_sel_of_the_third_source() {
    let mut r = Rng(16);
    for t in PACKED_TARGETS {
        let (a, b, c) = (
            halves(&mut r, &[]),
            halves(&mut r, &[]),
            halves(&mut r, &[]),
        );
        // Low: a.lo * b.hi + c.hi; high: a.hi * b.hi + c.lo.
        let out = run(
            t,
            &[("v0", a), ("v1", b), ("v2", c)],
            "v_pk_fma_f16 v3, v0, v1, v2 op_sel:[0,1,1] op_sel_hi:[1,1,0]\n\
             v_pk_mad_u16 v4, v0, v1, v2 op_sel:[0,1,1] op_sel_hi:[1,1,0]",
            &["v3", "v4"],
        );
        for l in 0..64 {
            let f = |x: u16, y: u16, z: u16| ftz_h(f2h(h2f(x).mul_add(h2f(y), h2f(z))));
            let want = pack(
                f(lo(a[l]), hi(b[l]), hi(c[l])),
                f(hi(a[l]), hi(b[l]), lo(c[l])),
            );
            assert_eq!(out[0][l], want, "{t:?} fma lane {l}");
            let g = |x: u16, y: u16, z: u16| x.wrapping_mul(y).wrapping_add(z);
            let want = pack(
                g(lo(a[l]), hi(b[l]), hi(c[l])),
                g(hi(a[l]), hi(b[l]), lo(c[l])),
            );
            assert_eq!(out[1][l], want, "{t:?} mad lane {l}");
        }
    }
}

// ---------------------------------------------------------------------
// SMFMAC (gfx940): 4:2 sparse A. Layouts from the matrix instruction
// calculator: A lane M * (k / kpl) + i, two stored values per group of
// four K positions; the index register's 4-bit field per group (set ABID
// at bit ABID * kpl) holds the two positions, first value in bits [1:0].

fn check_smfmac(name: &str, m: usize, k: usize, ty: (Ty, Ty), abid: usize, r: &mut Rng) {
    let (ta, tb) = ty;
    let kpl = k * m / 64; // B elements per lane; A stores half
    let bits = ta.bits();
    let int = ta == Ty::I8;
    // Dense sparse A and its stored form.
    let mut a = vec![0u64; m * k];
    let mut areg = [[0u32; 64]; 2];
    let mut index = r.reg();
    for l in 0..64 {
        let (i, base) = (l % m, (l / m) * kpl);
        for q in 0..kpl / 4 {
            let p0 = (r.next() % 4) as usize;
            let p1 = (p0 + 1 + (r.next() % 3) as usize) % 4;
            let sh = abid * kpl + 4 * q;
            index[l] = index[l] & !(0xf << sh) | ((p0 | p1 << 2) as u32) << sh;
            for (t, p) in [(0, p0), (1, p1)] {
                let v = ta.random(r);
                a[i * k + base + 4 * q + p] = v;
                let e = 2 * q + t;
                areg[e * bits / 32][l] |= (v as u32) << (e * bits % 32);
            }
        }
    }
    let mut b = vec![0u64; k * m];
    let mut breg = [[0u32; 64]; 4];
    for l in 0..64 {
        let (j, base) = (l % m, (l / m) * kpl);
        for e in 0..kpl {
            let v = tb.random(r);
            b[(base + e) * m + j] = v;
            breg[e * bits / 32][l] |= (v as u32) << (e * bits % 32);
        }
    }
    let nd = m * m / 64;
    let c: Vec<Reg> = (0..nd)
        .map(|_| if int { r.reg() } else { regs_f(r) })
        .collect();
    let mut inputs: Vec<(String, Reg)> = vec![
        ("v0".into(), areg[0]),
        ("v1".into(), areg[1]),
        ("v9".into(), index),
    ];
    for (g, v) in breg.iter().enumerate() {
        inputs.push((format!("v{}", 4 + g), *v));
    }
    for (g, v) in c.iter().enumerate() {
        inputs.push((format!("a{}", 32 + g), *v));
    }
    let abid_s = if abid != 0 {
        format!(" abid:{abid}")
    } else {
        String::new()
    };
    let body = format!("{name} {}, v[0:1], v[4:7], v9{abid_s}", range("a", 32, nd));
    let outs: Vec<String> = (0..nd).map(|g| format!("a{}", 32 + g)).collect();
    let inputs_ref: Vec<(&str, Reg)> = inputs.iter().map(|(n, v)| (n.as_str(), *v)).collect();
    let outs_ref: Vec<&str> = outs.iter().map(|s| s.as_str()).collect();
    let got = run(Target::Gfx940, &inputs_ref, &body, &outs_ref);
    let x = mf(None, None, m, k, 1, ta);
    for g in 0..nd {
        for l in 0..64 {
            let (_, i, j) = x.output(g, l);
            let prods = (0..k).map(|kk| ta.value(a[i * k + kk]) * tb.value(b[kk * m + j]));
            if int {
                let want = prods.sum::<f64>() as i64 + i64::from(c[g][l] as i32);
                assert_eq!(got[g][l], want as u32, "{body}: D[{i}][{j}]");
            } else {
                let cc = f64::from(f32::from_bits(c[g][l]));
                let (mut acc, mut mag) = (cc, cc.abs());
                for p in prods {
                    acc += p;
                    mag += p.abs();
                }
                let v = f64::from(f32::from_bits(got[g][l]));
                assert!(
                    (v - acc).abs() <= 1e-6 * mag,
                    "{body}: D[{i}][{j}] = {v}, want {acc}"
                );
            }
        }
    }
}

#[test]
fn smfmac_sparse_products_match_the_host() {
    let mut r = Rng(17);
    let cases: [(&str, usize, usize, (Ty, Ty)); 14] = [
        ("v_smfmac_f32_16x16x32_f16", 16, 32, (Ty::F16, Ty::F16)),
        ("v_smfmac_f32_32x32x16_f16", 32, 16, (Ty::F16, Ty::F16)),
        ("v_smfmac_f32_16x16x32_bf16", 16, 32, (Ty::Bf16, Ty::Bf16)),
        ("v_smfmac_f32_32x32x16_bf16", 32, 16, (Ty::Bf16, Ty::Bf16)),
        ("v_smfmac_i32_16x16x64_i8", 16, 64, (Ty::I8, Ty::I8)),
        ("v_smfmac_i32_32x32x32_i8", 32, 32, (Ty::I8, Ty::I8)),
        ("v_smfmac_f32_16x16x64_bf8_bf8", 16, 64, (Ty::Bf8, Ty::Bf8)),
        ("v_smfmac_f32_16x16x64_bf8_fp8", 16, 64, (Ty::Bf8, Ty::Fp8)),
        ("v_smfmac_f32_16x16x64_fp8_bf8", 16, 64, (Ty::Fp8, Ty::Bf8)),
        ("v_smfmac_f32_16x16x64_fp8_fp8", 16, 64, (Ty::Fp8, Ty::Fp8)),
        ("v_smfmac_f32_32x32x32_bf8_bf8", 32, 32, (Ty::Bf8, Ty::Bf8)),
        ("v_smfmac_f32_32x32x32_bf8_fp8", 32, 32, (Ty::Bf8, Ty::Fp8)),
        ("v_smfmac_f32_32x32x32_fp8_bf8", 32, 32, (Ty::Fp8, Ty::Bf8)),
        ("v_smfmac_f32_32x32x32_fp8_fp8", 32, 32, (Ty::Fp8, Ty::Fp8)),
    ];
    for (name, m, k, ty) in cases {
        check_smfmac(name, m, k, ty, 0, &mut r);
        // The last index set: ABID 3 for 16-bit data, 1 for 8-bit.
        let last = 32 / (k * m / 64) - 1;
        check_smfmac(name, m, k, ty, last, &mut r);
    }
}

// ---------------------------------------------------------------------
// The MODE hipcc kernels run in: subnormals kept, IEEE mode, DX10 clamp.

#[test]
fn subnormals_are_kept_in_hip_mode() {
    let mut r = Rng(18);
    for t in PACKED_TARGETS {
        // Subnormal halves (and normal ones whose products underflow).
        let sub = |r: &mut Rng| {
            let v = r.next() as u16;
            if v & 0x4000 != 0 {
                v & 0x83ff
            } else {
                (v & 0x83ff) | (0x0400 * (1 + (v >> 11) % 4))
            }
        };
        let a: Reg = std::array::from_fn(|_| pack(sub(&mut r), sub(&mut r)));
        let b: Reg = std::array::from_fn(|_| pack(rand_h(&mut r), sub(&mut r)));
        let c: Reg = std::array::from_fn(|_| pack(sub(&mut r), sub(&mut r)));
        let out = run_in_mode(
            t,
            HIP_RSRC1,
            &[("v0", a), ("v1", b), ("v2", c)],
            "v_pk_add_f16 v3, v0, v2\nv_pk_mul_f16 v4, v0, v1\nv_pk_fma_f16 v5, v0, v1, v2",
            &["v3", "v4", "v5"],
        );
        for l in 0..64 {
            for (sel, get) in [(0, lo as fn(u32) -> u16), (1, hi as fn(u32) -> u16)] {
                let (x, y, z) = (h2f(get(a[l])), h2f(get(b[l])), h2f(get(c[l])));
                let what = format!("{t:?} lane {l} half {sel}");
                assert_eq!(get(out[0][l]), f2h(x + z), "add {what}");
                assert_eq!(get(out[1][l]), f2h(x * y), "mul {what}");
                assert_eq!(get(out[2][l]), f2h(x.mul_add(y, z)), "fma {what}");
            }
        }
    }
    for t in MFMA_TARGETS {
        let a: Reg =
            std::array::from_fn(|l| (r.next() as u32 & 0x807f_ffff) | (l as u32 % 2) << 23);
        let b = regs_f(&mut r);
        let out = run_in_mode(
            t,
            HIP_RSRC1,
            &[("v0", a), ("v1", a), ("v2", b), ("v3", b)],
            "v_pk_mul_f32 v[4:5], v[0:1], 0.5\nv_pk_add_f32 v[6:7], v[0:1], v[2:3]",
            &["v4", "v6"],
        );
        for l in 0..64 {
            let x = f32::from_bits(a[l]);
            assert_eq!(out[0][l], (x * 0.5).to_bits(), "{t:?} lane {l}");
            assert_eq!(
                out[1][l],
                (x + f32::from_bits(b[l])).to_bits(),
                "{t:?} lane {l}"
            );
        }
    }
}

#[test]
fn ieee_mode_min_max_and_dx10_clamp() {
    // sNaN, qNaN, numbers; signed zeros.
    let pairs: [(u16, u16, u16, u16); 6] = [
        // (a, b, max, min) with IEEE mode: an sNaN gives itself quieted.
        (0x7c01, 0x3c00, 0x7e01, 0x7e01),
        (0x3c00, 0xfc02, 0xfe02, 0xfe02),
        (0x7e00, 0x3c00, 0x3c00, 0x3c00),
        (0xc000, 0x7e00, 0xc000, 0xc000),
        (0x8000, 0x0000, 0x0000, 0x8000),
        (0x3c00, 0xbc00, 0x3c00, 0xbc00),
    ];
    let a: Reg = std::array::from_fn(|l| u32::from(pairs[l % 6].0) * 0x1_0001);
    let b: Reg = std::array::from_fn(|l| u32::from(pairs[l % 6].1) * 0x1_0001);
    for t in PACKED_TARGETS {
        let out = run_in_mode(
            t,
            HIP_RSRC1,
            &[("v0", a), ("v1", b)],
            "v_pk_max_f16 v3, v0, v1\nv_pk_min_f16 v4, v0, v1\nv_pk_add_f16 v5, v0, v1 clamp",
            &["v3", "v4", "v5"],
        );
        for l in 0..64 {
            let (x, y, mx, mn) = pairs[l % 6];
            assert_eq!(
                out[0][l],
                u32::from(mx) * 0x1_0001,
                "{t:?} max {x:#x} {y:#x}"
            );
            assert_eq!(
                out[1][l],
                u32::from(mn) * 0x1_0001,
                "{t:?} min {x:#x} {y:#x}"
            );
            // With DX10_CLAMP a NaN result clamps to 0.
            let s = h2f(x) + h2f(y);
            let want = if s.is_nan() {
                0
            } else {
                f2h(s.clamp(0.0, 1.0)) & 0x7fff
            };
            assert_eq!(
                out[2][l],
                u32::from(want) * 0x1_0001,
                "{t:?} clamp {x:#x} {y:#x}"
            );
        }
    }
}

#[test]
fn mixed_precision_and_dot_keep_subnormals_in_hip_mode() {
    let mut r = Rng(19);
    for t in MFMA_TARGETS {
        let a: Reg = std::array::from_fn(|_| pack(r.next() as u16 & 0x83ff, rand_h(&mut r)));
        let b: Reg = std::array::from_fn(|_| pack(rand_h(&mut r), r.next() as u16 & 0x83ff));
        let c: Reg = std::array::from_fn(|_| r.next() as u32 & 0x807f_ffff);
        let out = run_in_mode(
            t,
            HIP_RSRC1,
            &[("v0", a), ("v1", b), ("v2", c)],
            "v_fma_mix_f32 v3, v0, v1, v2 op_sel_hi:[1,1,0]\nv_dot2_f32_f16 v4, v0, v1, v2",
            &["v3", "v4"],
        );
        for l in 0..64 {
            let z = f32::from_bits(c[l]);
            let x = h2f(lo(a[l])) as f32;
            let y = h2f(lo(b[l])) as f32;
            assert_eq!(out[0][l], x.mul_add(y, z).to_bits(), "{t:?} mix lane {l}");
            let s = h2f(lo(a[l])) * h2f(lo(b[l])) + h2f(hi(a[l])) * h2f(hi(b[l])) + f64::from(z);
            assert_eq!(out[1][l], (s as f32).to_bits(), "{t:?} dot lane {l}");
        }
    }
}
