//! The scalar side of the interpreter: SOP2, SOP1, SOPC, SOPK, SOPP and
//! SMEM instructions, checked against hand-worked values (SCC captured
//! with `s_cselect_b32 sN, 1, 0`).

mod common;

use common::*;
use kfd_gpu::mem::FlatMemory;
use kfd_gpu::shader::{DispatchError, Target};

const TARGETS: [Target; 3] = [Target::Gfx900, Target::Gfx90a, Target::Gfx940];

/// Bytes of the prologue `kernel` puts before the body (the body's
/// first instruction is at CODE + PROLOGUE).
const PROLOGUE: u64 = 12;

/// A kernel: s[90:91] = the result pointer, then `body`, then each of
/// `outs` (scalar operands) stored at DATA + 4 * k by every lane.
fn kernel(body: &str, outs: &[&str]) -> String {
    let mut s = String::from("s_load_dwordx2 s[90:91], s[0:1], 0x0\ns_waitcnt lgkmcnt(0)\n");
    s.push_str(body);
    s.push_str("\ns_mov_b64 exec, -1\nv_mov_b32 v2, s90\nv_mov_b32 v3, s91\n");
    for (k, o) in outs.iter().enumerate() {
        s.push_str(&format!(
            "v_mov_b32 v1, {o}\nglobal_store_dword v[2:3], v1, off offset:{}\n",
            4 * k
        ));
    }
    s.push_str("s_endpgm\n");
    s
}

/// Runs `body` on `target` with memory prepared by `setup`; returns the
/// memory and the stored `outs`.
fn run_with(
    target: Target,
    body: &str,
    outs: &[&str],
    setup: &dyn Fn(&FlatMemory),
) -> (FlatMemory, Vec<u32>) {
    let mem = memory();
    mem.store::<u64>(KERNARG, DATA);
    setup(&mem);
    Kernel::new(target, &kernel(body, outs))
        .run(&mem)
        .unwrap_or_else(|e| panic!("{target:?}: {e}"));
    let r = results(&mem, outs.len());
    (mem, r)
}

/// Runs `body` on every target and checks `outs` against `want`.
fn check(body: &str, outs: &[&str], want: &[u32]) {
    assert_eq!(outs.len(), want.len());
    for t in TARGETS {
        let (_, got) = run_with(t, body, outs, &|_| {});
        for (k, (g, w)) in got.iter().zip(want).enumerate() {
            assert_eq!(g, w, "{t:?}: {} = {g:#x}, want {w:#x}", outs[k]);
        }
    }
}

/// The error of running `body` (which must fail) on `target`.
fn error(target: Target, body: &str) -> DispatchError {
    let mem = memory();
    mem.store::<u64>(KERNARG, DATA);
    Kernel::new(target, &kernel(body, &[]))
        .run(&mem)
        .expect_err("the kernel should stop with an error")
}

fn lo(v: u64) -> u32 {
    v as u32
}

fn hi(v: u64) -> u32 {
    (v >> 32) as u32
}

#[test]
fn sop2_add_sub_carry_and_overflow() {
    let body = "
        s_mov_b32 s4, 0xffffffff
        s_add_u32 s10, s4, 2
        s_cselect_b32 s11, 1, 0
        s_add_u32 s12, 5, 7
        s_cselect_b32 s13, 1, 0
        s_sub_u32 s14, 3, 5
        s_cselect_b32 s15, 1, 0
        s_sub_u32 s16, 5, 3
        s_cselect_b32 s17, 1, 0
        s_add_i32 s18, 0x7fffffff, 1
        s_cselect_b32 s19, 1, 0
        s_add_i32 s20, -1, 1
        s_cselect_b32 s21, 1, 0
        s_sub_i32 s22, 0x80000000, 1
        s_cselect_b32 s23, 1, 0
        s_sub_i32 s24, -2, 0x7fffffff
        s_cselect_b32 s25, 1, 0
        s_mov_b32 s5, 1
        s_add_u32 s26, s4, 1
        s_addc_u32 s27, s5, 0
        s_cselect_b32 s28, 1, 0
        s_cmp_eq_u32 0, 0
        s_addc_u32 s29, s4, 0
        s_cselect_b32 s30, 1, 0
        s_sub_u32 s31, 0, 1
        s_subb_u32 s32, 1, 0
        s_cselect_b32 s33, 1, 0
        s_cmp_eq_u32 0, 0
        s_subb_u32 s34, 0, 0
        s_cselect_b32 s35, 1, 0
        s_cmp_eq_u32 0, 0
        s_subb_u32 s36, 5, 4
        s_cselect_b32 s37, 1, 0
    ";
    let outs: Vec<String> = (10..38).map(|r| format!("s{r}")).collect();
    let outs: Vec<&str> = outs.iter().map(|s| s.as_str()).collect();
    #[rustfmt::skip]
    let want = [
        1, 1,            // 0xffffffff + 2: carry
        12, 0,
        0xffff_fffe, 1,  // 3 - 5: borrow
        2, 0,
        0x8000_0000, 1,  // i32::MAX + 1: overflow
        0, 0,            // -1 + 1: carry out but no signed overflow
        0x7fff_ffff, 1,  // i32::MIN - 1
        0x7fff_ffff, 1,  // -2 - i32::MAX
        0, 2, 0,         // 0x1_ffffffff + 1 = 0x2_00000000
        0, 1,            // 0xffffffff + 0 + carry
        0xffff_ffff, 0, 0, // 0x1_00000000 - 1 = 0x0_ffffffff
        0xffff_ffff, 1,  // 0 - 0 - borrow
        0, 0,            // 5 - 4 - 1
    ];
    check(body, &outs, &want);
}

#[test]
fn sop2_min_max_mul_shift_add_pack() {
    let a: u32 = 0x1234_5678;
    let b: u32 = 0xabcd_ef01;
    let body = "
        s_min_i32 s10, -5, 3
        s_cselect_b32 s11, 1, 0
        s_min_u32 s12, -5, 3
        s_cselect_b32 s13, 1, 0
        s_max_i32 s14, -5, 3
        s_cselect_b32 s15, 1, 0
        s_max_u32 s16, -5, 3
        s_cselect_b32 s17, 1, 0
        s_min_u32 s18, 3, 3
        s_cselect_b32 s19, 1, 0
        s_mov_b32 s4, 0x12345678
        s_mov_b32 s5, 0xabcdef01
        s_mul_i32 s20, s4, -3
        s_mul_hi_u32 s21, s4, s5
        s_mul_hi_i32 s22, s4, s5
        s_mul_hi_i32 s23, -2, s4
        s_absdiff_i32 s24, 3, 10
        s_cselect_b32 s25, 1, 0
        s_absdiff_i32 s26, 0x80000000, 1
        s_absdiff_i32 s27, 7, 7
        s_cselect_b32 s28, 1, 0
        s_lshl1_add_u32 s29, 0x80000001, 1
        s_cselect_b32 s30, 1, 0
        s_lshl4_add_u32 s31, 0x1000000, 5
        s_cselect_b32 s32, 1, 0
        s_lshl2_add_u32 s33, 3, 4
        s_lshl3_add_u32 s34, 3, 4
        s_lshl2_add_u32 s35, 0x3fffffff, 4
        s_cselect_b32 s36, 1, 0
        s_pack_ll_b32_b16 s37, s4, s5
        s_pack_lh_b32_b16 s38, s4, s5
        s_pack_hh_b32_b16 s39, s4, s5
    ";
    let outs: Vec<String> = (10..40).map(|r| format!("s{r}")).collect();
    let outs: Vec<&str> = outs.iter().map(|s| s.as_str()).collect();
    #[rustfmt::skip]
    let want = [
        (-5i32) as u32, 1,
        3, 0,
        3, 0,
        (-5i32) as u32, 1,
        3, 0,
        a.wrapping_mul((-3i32) as u32),
        ((u64::from(a) * u64::from(b)) >> 32) as u32,
        ((i64::from(a as i32) * i64::from(b as i32)) >> 32) as u32,
        0xffff_ffff,
        7, 1,
        0x7fff_ffff,     // |i32::MIN - 1| with wrap-around
        0, 0,
        3, 1,            // 0x1_00000003: carry
        0x1000_0005, 0,
        16, 28,
        0, 1,            // 0xfffffffc + 4 = 0x1_00000000
        0xef01_5678, 0xabcd_5678, 0xabcd_1234,
    ];
    check(body, &outs, &want);
}

#[test]
fn sop2_bitwise_shifts_and_bit_fields() {
    let (a, b): (u32, u32) = (0xf0f0_ff00, 0x0ff0_00ff);
    let (x, y): (u64, u64) = (0x9abc_def0_1234_5678, 0x0000_ffff_ffff_0000);
    let body = "
        s_mov_b32 s4, 0xf0f0ff00
        s_mov_b32 s5, 0x0ff000ff
        s_and_b32 s10, s4, s5
        s_cselect_b32 s11, 1, 0
        s_or_b32 s12, s4, s5
        s_xor_b32 s13, s4, s5
        s_andn2_b32 s14, s4, s5
        s_orn2_b32 s15, s4, s5
        s_nand_b32 s16, s4, s5
        s_nor_b32 s17, s4, s5
        s_xnor_b32 s18, s4, s5
        s_and_b32 s19, s4, 0x0f0f00ff
        s_cselect_b32 s20, 1, 0
        s_mov_b32 s6, 0x12345678
        s_mov_b32 s7, 0x9abcdef0
        s_mov_b32 s8, 0xffff0000
        s_mov_b32 s9, 0x0000ffff
        s_and_b64 s[22:23], s[6:7], s[8:9]
        s_or_b64 s[24:25], s[6:7], s[8:9]
        s_xor_b64 s[26:27], s[6:7], s[8:9]
        s_andn2_b64 s[28:29], s[6:7], s[8:9]
        s_orn2_b64 s[30:31], s[6:7], s[8:9]
        s_nand_b64 s[32:33], s[6:7], s[8:9]
        s_nor_b64 s[34:35], s[6:7], s[8:9]
        s_xnor_b64 s[36:37], s[6:7], s[8:9]
        s_and_b64 s[38:39], s[6:7], 0
        s_cselect_b32 s40, 1, 0
        s_lshl_b32 s41, s4, 36
        s_lshr_b32 s42, s4, 4
        s_ashr_i32 s43, s4, 4
        s_lshl_b64 s[44:45], s[6:7], 40
        s_lshr_b64 s[46:47], s[6:7], 12
        s_ashr_i64 s[48:49], s[6:7], 36
        s_lshr_b32 s50, 1, 1
        s_cselect_b32 s51, 1, 0
        s_bfm_b32 s52, 5, 3
        s_bfm_b64 s[54:55], 40, 8
        s_bfe_u32 s56, s4, 0x80004
        s_bfe_i32 s57, s4, 0x80004
        s_bfe_i64 s[58:59], s[6:7], 0x8001c
        s_bfe_u64 s[60:61], s[6:7], 0x24001c
        s_bfe_u32 s62, s4, 4
        s_cselect_b32 s63, 1, 0
        s_bfe_i32 s64, s4, 0x10001c
        s_bfe_i64 s[66:67], s[6:7], 0x4003f
        s_cmp_eq_u32 0, 0
        s_cselect_b64 s[68:69], s[6:7], s[8:9]
        s_cmp_eq_u32 0, 1
        s_cselect_b64 s[70:71], s[6:7], s[8:9]
        s_cselect_b32 s72, 1, 0
    ";
    let outs: Vec<String> = (10..73).map(|r| format!("s{r}")).collect();
    let outs: Vec<&str> = outs.iter().map(|s| s.as_str()).collect();
    // Expected bit fields, worked by masks rather than shift pairs.
    let bfe_i64_28_8 = {
        let f = (x >> 28) & 0xff;
        if f & 0x80 != 0 {
            f | !0xff
        } else {
            f
        }
    };
    #[rustfmt::skip]
    let want = [
        a & b, 1,
        a | b, a ^ b, a & !b, a | !b, !(a & b), !(a | b), !(a ^ b),
        0, 0,
        0, // s21 untouched
        lo(x & y), hi(x & y), lo(x | y), hi(x | y), lo(x ^ y), hi(x ^ y),
        lo(x & !y), hi(x & !y), lo(x | !y), hi(x | !y), lo(!(x & y)), hi(!(x & y)),
        lo(!(x | y)), hi(!(x | y)), lo(!(x ^ y)), hi(!(x ^ y)),
        0, 0, 0,
        a << 4, a >> 4, 0xff0f_0ff0,
        lo(x << 40), hi(x << 40), lo(x >> 12), hi(x >> 12),
        lo(((x as i64) >> 36) as u64), hi(((x as i64) >> 36) as u64),
        0, 0,
        0xf8, 0, // s53 untouched
        lo(0xff_ffff_ffff << 8), hi(0xff_ffff_ffff << 8),
        0xf0, 0xffff_fff0,
        lo(bfe_i64_28_8), hi(bfe_i64_28_8),
        lo(x >> 28), hi(x >> 28), // width 36 from bit 28: all of it
        0, 0,                     // width 0
        0xffff_ffff,              // from bit 28, 16 wide: past bit 31, arithmetic
        0, // s65 untouched
        0xffff_ffff, 0xffff_ffff, // bit 63 of a negative value, sign-extended
        lo(x), hi(x), lo(y), hi(y),
        0,
    ];
    check(body, &outs, &want);
}

#[test]
fn sop1_moves_bits_and_counts() {
    let a: u32 = 0x00f0_0010;
    let x: u64 = 0x8400_0000_0003_0100;
    let body = "
        s_mov_b32 s4, 0x00f00010
        s_mov_b32 s5, 0x80000000
        s_mov_b32 s6, 0x00030100
        s_mov_b32 s7, 0x84000000
        s_not_b32 s10, s4
        s_cselect_b32 s11, 1, 0
        s_not_b32 s12, -1
        s_cselect_b32 s13, 1, 0
        s_wqm_b32 s14, s4
        s_wqm_b64 s[16:17], s[6:7]
        s_brev_b32 s18, s4
        s_brev_b64 s[20:21], s[6:7]
        s_bcnt0_i32_b32 s22, s4
        s_bcnt1_i32_b64 s23, s[6:7]
        s_bcnt1_i32_b32 s24, 0
        s_cselect_b32 s25, 1, 0
        s_ff0_i32_b32 s26, 0xff
        s_ff1_i32_b32 s27, s4
        s_ff1_i32_b32 s28, 0
        s_ff1_i32_b64 s29, s[6:7]
        s_ff0_i32_b64 s30, -1
        s_flbit_i32_b32 s31, s4
        s_flbit_i32_b32 s32, 0
        s_flbit_i32 s33, -1
        s_flbit_i32 s34, 0xfff00000
        s_flbit_i32 s35, s4
        s_flbit_i32_b64 s36, s[6:7]
        s_flbit_i32_i64 s37, s[6:7]
        s_sext_i32_i8 s38, 0x80
        s_sext_i32_i16 s39, 0x7fff
        s_mov_b32 s40, s4
        s_bitset1_b32 s40, 35
        s_mov_b32 s41, s4
        s_bitset0_b32 s41, 4
        s_mov_b64 s[42:43], s[6:7]
        s_bitset1_b64 s[42:43], 62
        s_bitset0_b64 s[42:43], 8
        s_quadmask_b32 s44, s4
        s_quadmask_b64 s[46:47], s[6:7]
        s_abs_i32 s48, -7
        s_abs_i32 s49, 0x80000000
        s_cselect_b32 s50, 1, 0
        s_bitreplicate_b64_b32 s[52:53], 0x80000005
        s_cmp_eq_u32 0, 1
        s_mov_b32 s54, 1
        s_cmov_b32 s54, 2
        s_cmp_eq_u32 0, 0
        s_mov_b32 s55, 1
        s_cmov_b32 s55, 2
        s_cmov_b64 s[56:57], s[6:7]
        s_mov_b64 s[58:59], -2
    ";
    let outs: Vec<String> = (10..60).map(|r| format!("s{r}")).collect();
    let outs: Vec<&str> = outs.iter().map(|s| s.as_str()).collect();
    let bitset = (x | 1 << 62) & !0x100;
    #[rustfmt::skip]
    let want = [
        !a, 1,                              // s10, s11
        0, 0,                               // s12, s13
        0x00f0_00f0,                        // s14: nibbles 1 and 5
        0,                                  // s15 untouched
        0x000f_0f00, 0xff00_0000,           // s16, s17: nibbles 2, 4, 14, 15
        a.reverse_bits(), 0,                // s18, s19 untouched
        lo(x.reverse_bits()), hi(x.reverse_bits()),
        32 - 5, x.count_ones(),             // s22, s23
        0, 0,                               // s24, s25
        8, 4, u32::MAX, 8, u32::MAX,        // s26..s30
        8, u32::MAX,                        // s31, s32
        u32::MAX, 12, 8,                    // s33..s35
        0, 1,                               // s36: clz; s37: first bit != sign
        0xffff_ff80, 0x7fff,                // s38, s39
        a | 8, a & !0x10,                   // s40, s41
        lo(bitset), hi(bitset),             // s42, s43
        0b10_0010, 0,                       // s44, s45 untouched
        0xc014, 0,                          // s46, s47: nibbles 2, 4, 14, 15
        7, 0x8000_0000, 1,                  // s48..s50
        0,                                  // s51 untouched
        0x33, 0xc000_0000,                  // s52, s53
        1, 2,                               // s54, s55
        lo(x), hi(x),                       // s56, s57
        0xffff_fffe, 0xffff_ffff,           // s58, s59
    ];
    check(body, &outs, &want);
}

/// A new EXEC from S0 and the old EXEC.
type ExecUpdate = fn(u64, u64) -> u64;

#[test]
fn sop1_saveexec_and_wrexec() {
    let e: u64 = 0x00ff_00ff_f0f0_1234;
    let s: u64 = 0x0f0f_0f0f_ffff_0000;
    let ops: [(&str, ExecUpdate); 12] = [
        ("s_and_saveexec_b64", |s, e| s & e),
        ("s_or_saveexec_b64", |s, e| s | e),
        ("s_xor_saveexec_b64", |s, e| s ^ e),
        ("s_andn2_saveexec_b64", |s, e| s & !e),
        ("s_orn2_saveexec_b64", |s, e| s | !e),
        ("s_nand_saveexec_b64", |s, e| !(s & e)),
        ("s_nor_saveexec_b64", |s, e| !(s | e)),
        ("s_xnor_saveexec_b64", |s, e| !(s ^ e)),
        ("s_andn1_saveexec_b64", |s, e| !s & e),
        ("s_orn1_saveexec_b64", |s, e| !s | e),
        ("s_andn1_wrexec_b64", |s, e| !s & e),
        ("s_andn2_wrexec_b64", |s, e| s & !e),
    ];
    let mut body = String::from(
        "s_mov_b32 s20, 0xf0f01234\ns_mov_b32 s21, 0x00ff00ff\n\
         s_mov_b32 s22, 0xffff0000\ns_mov_b32 s23, 0x0f0f0f0f\n",
    );
    let mut outs = Vec::new();
    let mut want = Vec::new();
    for (k, (op, f)) in ops.iter().enumerate() {
        // Pairs at s24..s71, SCC at s72..s83.
        let r = 24 + 4 * k;
        let c = 72 + k;
        body.push_str(&format!(
            "s_mov_b64 exec, s[20:21]\n{op} s[{r}:{}], s[22:23]\n\
             s_mov_b64 s[{}:{}], exec\ns_cselect_b32 s{c}, 1, 0\n",
            r + 1,
            r + 2,
            r + 3,
        ));
        for q in 0..4 {
            outs.push(format!("s{}", r + q));
        }
        outs.push(format!("s{c}"));
        let n = f(s, e);
        let saved = if op.contains("wrexec") { n } else { e };
        want.extend([lo(saved), hi(saved), lo(n), hi(n), u32::from(n != 0)]);
    }
    // A zero result clears SCC.
    body.push_str(
        "s_mov_b64 exec, s[20:21]\ns_and_saveexec_b64 s[84:85], 0\n\
         s_mov_b64 s[86:87], exec\ns_cselect_b32 s88, 1, 0\n",
    );
    for r in 84..89 {
        outs.push(format!("s{r}"));
    }
    want.extend([lo(e), hi(e), 0, 0, 0]);
    let outs: Vec<&str> = outs.iter().map(|s| s.as_str()).collect();
    check(&body, &outs, &want);
}

#[test]
fn saveexec_masks_the_vector_stores_that_follow() {
    // Lanes 0..3 and 62 active after the and_saveexec: only they store.
    let body = "
        s_mov_b32 s4, 0x0000000f
        s_mov_b32 s5, 0x40000000
        v_lshlrev_b32 v4, 2, v0
        v_mov_b32 v5, s91
        v_add_co_u32 v4, vcc, s90, v4
        v_addc_co_u32 v5, vcc, 0, v5, vcc
        v_mov_b32 v6, 0x77
        s_and_saveexec_b64 s[6:7], s[4:5]
        global_store_dword v[4:5], v6, off offset:0x100
        s_mov_b64 exec, s[6:7]
    ";
    for t in TARGETS {
        let (mem, _) = run_with(t, body, &[], &|_| {});
        for l in 0..64u64 {
            let v = mem.load::<u32>(DATA + 0x100 + 4 * l);
            let want = if l < 4 || l == 62 { 0x77 } else { 0 };
            assert_eq!(v, want, "{t:?} lane {l}");
        }
    }
}

#[test]
fn sop1_movrel_uses_m0() {
    let body = "
        s_mov_b32 s4, 0x11
        s_mov_b32 s5, 0x22
        s_mov_b32 s6, 0x33
        s_mov_b32 s7, 0x44
        s_mov_b32 s8, 0x55
        s_mov_b32 m0, 3
        s_movrels_b32 s10, s4
        s_movrels_b64 s[12:13], s[4:5]
        s_movreld_b32 s20, s5
        s_movreld_b64 s[24:25], s[6:7]
        s_mov_b32 m0, 0
        s_movrels_b32 s14, s6
    ";
    check(
        body,
        &["s10", "s12", "s13", "s23", "s27", "s28", "s14"],
        &[0x44, 0x44, 0x55, 0x22, 0x33, 0x44, 0x33],
    );
    // An index past the SGPRs is not modelled.
    match error(Target::Gfx90a, "s_mov_b32 m0, 100\ns_movrels_b32 s10, s4") {
        DispatchError::IllegalInstruction { what, .. } => assert!(what.contains("s_movrels_b32")),
        e => panic!("{e}"),
    }
}

#[test]
fn sopc_compares() {
    let body = "
        s_mov_b32 s4, -1
        s_mov_b32 s5, 1
        s_mov_b32 s6, 0x00000001
        s_mov_b32 s7, 0x80000000
        s_cmp_eq_i32 s4, -1
        s_cselect_b32 s10, 1, 0
        s_cmp_lg_i32 s4, -1
        s_cselect_b32 s11, 1, 0
        s_cmp_gt_i32 s4, s5
        s_cselect_b32 s12, 1, 0
        s_cmp_ge_i32 s5, s5
        s_cselect_b32 s13, 1, 0
        s_cmp_lt_i32 s4, s5
        s_cselect_b32 s14, 1, 0
        s_cmp_le_i32 s5, s4
        s_cselect_b32 s15, 1, 0
        s_cmp_eq_u32 s5, 1
        s_cselect_b32 s16, 1, 0
        s_cmp_lg_u32 s5, 1
        s_cselect_b32 s17, 1, 0
        s_cmp_gt_u32 s4, s5
        s_cselect_b32 s18, 1, 0
        s_cmp_ge_u32 s5, s4
        s_cselect_b32 s19, 1, 0
        s_cmp_lt_u32 s4, s5
        s_cselect_b32 s20, 1, 0
        s_cmp_le_u32 s5, s5
        s_cselect_b32 s21, 1, 0
        s_cmp_eq_u64 s[6:7], s[6:7]
        s_cselect_b32 s22, 1, 0
        s_cmp_lg_u64 s[6:7], s[4:5]
        s_cselect_b32 s23, 1, 0
        s_cmp_eq_u64 s[6:7], 1
        s_cselect_b32 s24, 1, 0
        s_bitcmp0_b32 s7, 31
        s_cselect_b32 s25, 1, 0
        s_bitcmp1_b32 s7, 63
        s_cselect_b32 s26, 1, 0
        s_bitcmp1_b64 s[6:7], 63
        s_cselect_b32 s27, 1, 0
        s_bitcmp0_b64 s[6:7], 32
        s_cselect_b32 s28, 1, 0
        s_bitcmp1_b64 s[6:7], 0
        s_cselect_b32 s29, 1, 0
    ";
    let outs: Vec<String> = (10..30).map(|r| format!("s{r}")).collect();
    let outs: Vec<&str> = outs.iter().map(|s| s.as_str()).collect();
    check(
        body,
        &outs,
        &[1, 0, 0, 1, 1, 0, 1, 0, 1, 0, 0, 1, 1, 1, 0, 0, 1, 1, 1, 1],
    );
}

#[test]
fn sopk_immediates_compares_and_addk() {
    let body = "
        s_movk_i32 s10, 0x8000
        s_cmp_eq_u32 0, 1
        s_movk_i32 s11, 7
        s_cmovk_i32 s11, 9
        s_cmp_eq_u32 0, 0
        s_movk_i32 s12, 7
        s_cmovk_i32 s12, 9
        s_movk_i32 s13, -1
        s_cmpk_eq_i32 s13, -1
        s_cselect_b32 s14, 1, 0
        s_cmpk_eq_u32 s13, 0xffff
        s_cselect_b32 s15, 1, 0
        s_cmpk_lt_i32 s13, 0
        s_cselect_b32 s16, 1, 0
        s_cmpk_gt_u32 s13, 5
        s_cselect_b32 s17, 1, 0
        s_cmpk_le_u32 s13, 0xffff
        s_cselect_b32 s18, 1, 0
        s_cmpk_ge_i32 s13, -1
        s_cselect_b32 s19, 1, 0
        s_cmpk_lg_u32 s13, 0
        s_cselect_b32 s20, 1, 0
        s_cmpk_lg_i32 s13, -1
        s_cselect_b32 s21, 1, 0
        s_mov_b32 s22, 0x7ffffff0
        s_addk_i32 s22, 0x10
        s_cselect_b32 s23, 1, 0
        s_mov_b32 s24, -5
        s_addk_i32 s24, 5
        s_cselect_b32 s25, 1, 0
        s_movk_i32 s26, 100
        s_mulk_i32 s26, -3
        s_movk_i32 s27, 0xffff
        s_cmpk_gt_i32 s27, -2
        s_cselect_b32 s28, 1, 0
        s_cmpk_ge_u32 s27, 0xffff
        s_cselect_b32 s29, 1, 0
    ";
    let outs: Vec<String> = (10..30).map(|r| format!("s{r}")).collect();
    let outs: Vec<&str> = outs.iter().map(|s| s.as_str()).collect();
    #[rustfmt::skip]
    let want = [
        0xffff_8000, 7, 9, 0xffff_ffff,
        1, 0, 1, 1, 0, 1, 1, 0,
        0x8000_0000, 1,
        0, 0,
        (-300i32) as u32,
        0xffff_ffff, 1, 1,
    ];
    check(body, &outs, &want);
}

#[test]
fn hardware_registers() {
    let body = "
        s_getreg_b32 s10, hwreg(HW_REG_MODE)
        s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 4), 0xf5
        s_getreg_b32 s11, hwreg(HW_REG_MODE)
        s_mov_b32 s4, 0xc
        s_setreg_b32 hwreg(HW_REG_MODE, 4, 4), s4
        s_getreg_b32 s12, hwreg(HW_REG_MODE, 4, 2)
        s_getreg_b32 s13, hwreg(HW_REG_MODE, 6, 2)
        s_getreg_b32 s14, hwreg(HW_REG_MODE)
        s_getreg_b32 s15, hwreg(HW_REG_SH_MEM_BASES)
        s_cmp_eq_u32 0, 0
        s_getreg_b32 s16, hwreg(HW_REG_STATUS, 0, 1)
        s_cmp_eq_u32 0, 1
        s_getreg_b32 s17, hwreg(HW_REG_STATUS, 0, 1)
        s_getreg_b32 s18, hwreg(HW_REG_IB_STS)
        s_getreg_b32 s19, hwreg(HW_REG_TRAPSTS)
        s_setreg_imm32_b32 hwreg(HW_REG_TRAPSTS, 0, 9), 0x1ff
        s_getreg_b32 s20, hwreg(HW_REG_TRAPSTS)
    ";
    // SH_MEM_BASES: private base 2 << 48 in bits 15:0, shared 1 << 48 in
    // bits 31:16.
    check(
        body,
        &[
            "s10", "s11", "s12", "s13", "s14", "s15", "s16", "s17", "s18", "s19", "s20",
        ],
        &[0, 5, 0, 3, 0xc5, 0x0001_0002, 1, 0, 0, 0, 0x1ff],
    );
    for t in TARGETS {
        match error(t, "s_getreg_b32 s10, hwreg(HW_REG_GPR_ALLOC)") {
            DispatchError::IllegalInstruction { what, .. } => {
                assert!(what.contains("s_getreg_b32"), "{what}")
            }
            e => panic!("{e}"),
        }
    }
}

#[test]
fn program_counter_calls_and_branches() {
    // Body offsets (from CODE + PROLOGUE) in the comments; the call
    // and swappc subroutines return with s_setpc and the main line
    // branches over them.
    let body = "
        s_getpc_b64 s[4:5]              // 0: s[4:5] = 4
        s_mov_b32 s10, 0                // 4
        s_call_b64 s[30:31], 1          // 8: to 16, s[30:31] = 12
        s_branch 2                      // 12: to 24
        s_add_u32 s10, s10, 5           // 16
        s_setpc_b64 s[30:31]            // 20: back to 12
        s_getpc_b64 s[6:7]              // 24: s[6:7] = 28
        s_add_u32 s6, s6, 20            // 28: s6 = 48
        s_swappc_b64 s[8:9], s[6:7]     // 32: to 48, s[8:9] = 36
        s_branch 4                      // 36: to 56
        s_addk_i32 s10, 0x100           // 40 (never)
        s_addk_i32 s10, 0x200           // 44 (never)
        s_addk_i32 s10, 0x40            // 48: subroutine
        s_setpc_b64 s[8:9]              // 52: back to 36
        s_nop 0                         // 56
    ";
    for t in TARGETS {
        let (_, got) = run_with(
            t,
            body,
            &["s4", "s5", "s6", "s7", "s8", "s9", "s30", "s31", "s10"],
            &|_| {},
        );
        let at = |off: u64| CODE + PROLOGUE + off;
        assert_eq!(
            got,
            [
                lo(at(4)),
                hi(at(4)),
                lo(at(48)),
                hi(at(28)),
                lo(at(36)),
                hi(at(36)),
                lo(at(12)),
                hi(at(12)),
                5 + 0x40
            ],
            "{t:?}"
        );
    }
}

#[test]
fn conditional_branches() {
    // Each test: a condition, a branch over one s_mov that marks "not
    // taken". Initial SGPRs past the user ones are 0.
    let body = "
        s_cmp_eq_u32 0, 0
        s_cbranch_scc1 1
        s_mov_b32 s10, 1
        s_cbranch_scc0 1
        s_mov_b32 s11, 1
        s_cmp_eq_u32 0, 1
        s_cbranch_scc0 1
        s_mov_b32 s12, 1
        s_cbranch_scc1 1
        s_mov_b32 s13, 1
        s_mov_b64 vcc, 0
        s_cbranch_vccz 1
        s_mov_b32 s14, 1
        s_cbranch_vccnz 1
        s_mov_b32 s15, 1
        s_mov_b32 vcc_hi, 0x100
        s_cbranch_vccnz 1
        s_mov_b32 s16, 1
        s_cbranch_vccz 1
        s_mov_b32 s17, 1
        s_cbranch_execnz 1
        s_mov_b32 s18, 1
        s_cbranch_execz 1
        s_mov_b32 s19, 1
        s_mov_b64 s[20:21], exec
        s_mov_b64 exec, 0
        s_cbranch_execz 1
        s_mov_b32 s22, 1
        s_cbranch_execnz 1
        s_mov_b32 s23, 1
        s_mov_b64 exec, s[20:21]
        s_cbranch_cdbgsys 1
        s_mov_b32 s24, 1
        s_cbranch_cdbguser 1
        s_mov_b32 s25, 1
        s_cbranch_cdbgsys_or_user 1
        s_mov_b32 s26, 1
        s_cbranch_cdbgsys_and_user 1
        s_mov_b32 s27, 1
        s_branch 1
        s_mov_b32 s28, 1
        s_nop 3
        s_setprio 2
        s_sleep 1
        s_sendmsg sendmsg(MSG_INTERRUPT)
        s_icache_inv
        s_ttracedata
        s_waitcnt vmcnt(0) lgkmcnt(0)
    ";
    let outs: Vec<String> = (10..29)
        .filter(|r| *r != 20 && *r != 21)
        .map(|r| format!("s{r}"))
        .collect();
    let outs: Vec<&str> = outs.iter().map(|s| s.as_str()).collect();
    check(
        body,
        &outs,
        &[0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 1, 1, 1, 1, 0],
    );
}

#[test]
fn backward_branch_loop() {
    // s10 = 0 + 1 + 2 + ... + 9 by a loop that branches back.
    let body = "
        s_mov_b32 s10, 0
        s_mov_b32 s11, 0
        s_add_u32 s10, s10, s11
        s_add_u32 s11, s11, 1
        s_cmp_lt_u32 s11, 10
        s_cbranch_scc1 -4
    ";
    check(body, &["s10", "s11"], &[45, 10]);
}

#[test]
fn traps_halts_and_messages() {
    for t in TARGETS {
        match error(t, "s_trap 2") {
            DispatchError::Trap { id, pc } => assert_eq!((id, pc), (2, CODE + PROLOGUE)),
            e => panic!("{e}"),
        }
        match error(t, "s_nop 0\ns_sethalt 1") {
            DispatchError::Halted { pc } => assert_eq!(pc, CODE + PROLOGUE + 4),
            e => panic!("{e}"),
        }
        match error(t, "s_sendmsg sendmsg(MSG_GS_DONE, GS_OP_NOP)") {
            DispatchError::IllegalInstruction { what, .. } => {
                assert!(what.contains("s_sendmsg"), "{what}")
            }
            e => panic!("{e}"),
        }
        // s_sethalt 0 and a plain s_endpgm part-way end normally.
        let (_, got) = run_with(t, "s_sethalt 0\ns_mov_b32 s10, 3", &["s10"], &|_| {});
        assert_eq!(got, [3]);
    }
}

/// Source words for the SMEM tests at DATA + 0x1000: word k = k * 0x101 +
/// 0x10000.
fn src_word(k: u64) -> u32 {
    (k * 0x101 + 0x10000) as u32
}

fn fill_source(mem: &FlatMemory) {
    for k in 0..64 {
        mem.store::<u32>(DATA + 0x1000 + 4 * k, src_word(k));
    }
}

#[test]
fn smem_loads_with_every_offset_form() {
    let body = "
        s_add_u32 s4, s90, 0x1000
        s_addc_u32 s5, s91, 0
        s_load_dword s10, s[4:5], 0x4
        s_load_dwordx2 s[12:13], s[4:5], 0x8
        s_mov_b32 s6, 0x10
        s_load_dwordx4 s[16:19], s[4:5], s6
        s_load_dwordx8 s[20:27], s[4:5], s6 offset:0x10
        s_load_dwordx16 s[32:47], s[4:5], 0x40
        s_load_dword s48, s[4:5], 0x7
        s_add_u32 s8, s4, 0x20
        s_addc_u32 s9, s5, 0
        s_load_dword s49, s[8:9], -0x10
        s_mov_b32 m0, 0xc
        s_load_dword s50, s[4:5], m0
        s_waitcnt lgkmcnt(0)
    ";
    let mut outs: Vec<String> = vec!["s10".into(), "s12".into(), "s13".into()];
    let mut want = vec![src_word(1), src_word(2), src_word(3)];
    for k in 0..4 {
        outs.push(format!("s{}", 16 + k));
        want.push(src_word(4 + k as u64));
    }
    for k in 0..8 {
        outs.push(format!("s{}", 20 + k));
        want.push(src_word(8 + k as u64));
    }
    for k in 0..16 {
        outs.push(format!("s{}", 32 + k));
        want.push(src_word(16 + k as u64));
    }
    outs.extend(["s48".into(), "s49".into(), "s50".into()]);
    want.extend([src_word(1), src_word(4), src_word(3)]);
    let outs: Vec<&str> = outs.iter().map(|s| s.as_str()).collect();
    for t in TARGETS {
        let (_, got) = run_with(t, body, &outs, &fill_source);
        assert_eq!(got, want, "{t:?}");
    }
}

/// Sets s[52:55] to a buffer resource over DATA + 0x1000 with `records`
/// bytes.
fn resource(records: u32) -> String {
    format!(
        "s_add_u32 s52, s90, 0x1000\ns_addc_u32 s53, s91, 0\n\
         s_and_b32 s53, s53, 0xffff\ns_mov_b32 s54, {records}\ns_mov_b32 s55, 0\n"
    )
}

#[test]
fn smem_buffer_loads_read_zero_out_of_range() {
    let body = resource(0x18)
        + "
        s_buffer_load_dwordx4 s[56:59], s[52:55], 0x10
        s_buffer_load_dword s60, s[52:55], 0x4
        s_mov_b32 s61, 0x14
        s_buffer_load_dwordx2 s[62:63], s[52:55], s61
        s_mov_b32 s64, 0x4
        s_buffer_load_dword s65, s[52:55], s64 offset:0x8
        s_buffer_load_dwordx8 s[72:79], s[52:55], 0x0
        s_waitcnt lgkmcnt(0)
    ";
    let outs = [
        "s56", "s57", "s58", "s59", "s60", "s62", "s63", "s65", "s72", "s77", "s78", "s79",
    ];
    let want = [
        src_word(4),
        src_word(5),
        0,
        0,
        src_word(1),
        src_word(5),
        0,
        src_word(3),
        src_word(0),
        src_word(5),
        0,
        0,
    ];
    for t in TARGETS {
        let (_, got) = run_with(t, &body, &outs, &fill_source);
        assert_eq!(got, want, "{t:?}");
    }
}

#[test]
fn smem_stores_and_buffer_stores() {
    let body = resource(0x2c)
        + "
        s_add_u32 s64, s90, 0x2000
        s_addc_u32 s65, s91, 0
        s_mov_b32 s72, 0x1111
        s_mov_b32 s73, 0x2222
        s_mov_b32 s74, 0x3333
        s_mov_b32 s75, 0x4444
        s_store_dword s72, s[64:65], 0x0
        s_store_dwordx2 s[72:73], s[64:65], 0x8
        s_store_dwordx4 s[72:75], s[64:65], 0x10
        s_mov_b32 s76, 0x20
        s_store_dword s75, s[64:65], s76
        s_buffer_store_dwordx2 s[72:73], s[52:55], 0x0
        s_buffer_store_dwordx4 s[72:75], s[52:55], 0x20
        s_buffer_store_dword s75, s[52:55], 0x30
        s_dcache_wb
        s_dcache_inv
        s_waitcnt lgkmcnt(0)
    ";
    for t in TARGETS {
        let (mem, _) = run_with(t, &body, &[], &fill_source);
        let at = |off: u64| mem.load::<u32>(DATA + off);
        assert_eq!(
            [at(0x2000), at(0x2004), at(0x2008), at(0x200c)],
            [0x1111, 0, 0x1111, 0x2222],
            "{t:?}"
        );
        assert_eq!(
            [at(0x2010), at(0x2014), at(0x2018), at(0x201c), at(0x2020)],
            [0x1111, 0x2222, 0x3333, 0x4444, 0x4444],
            "{t:?}"
        );
        // The buffer has 0x2c bytes: dwords at 0x20..0x28 written, 0x2c
        // and 0x30 dropped.
        assert_eq!(
            [at(0x1000), at(0x1004), at(0x1008)],
            [0x1111, 0x2222, src_word(2)],
            "{t:?}"
        );
        assert_eq!(
            [at(0x1020), at(0x1024), at(0x1028), at(0x102c), at(0x1030)],
            [0x1111, 0x2222, 0x3333, src_word(11), src_word(12)],
            "{t:?}"
        );
    }
}

#[test]
fn smem_atomics_return_the_old_value_with_glc() {
    let body = resource(0x10)
        + "
        s_add_u32 s70, s90, 0x3000
        s_addc_u32 s71, s91, 0
        s_mov_b32 s10, 5
        s_atomic_add s10, s[70:71], 0x0 glc
        s_mov_b32 s11, 3
        s_atomic_sub s11, s[70:71], 0x4
        s_mov_b32 s12, 7
        s_mov_b32 s13, 20
        s_atomic_cmpswap s[12:13], s[70:71], 0x8 glc
        s_mov_b32 s14, 8
        s_mov_b32 s15, 99
        s_atomic_cmpswap s[14:15], s[70:71], 0xc glc
        s_mov_b32 s16, 31
        s_atomic_inc s16, s[70:71], 0x10 glc
        s_mov_b32 s17, 5
        s_atomic_dec s17, s[70:71], 0x14 glc
        s_mov_b32 s18, -1
        s_atomic_smin s18, s[70:71], 0x18 glc
        s_mov_b32 s19, -1
        s_atomic_umax s19, s[70:71], 0x1c glc
        s_mov_b32 s20, 1
        s_mov_b32 s21, 0
        s_atomic_add_x2 s[20:21], s[70:71], 0x20 glc
        s_mov_b32 s24, 0xaaaa
        s_mov_b32 s25, 0xbbbb
        s_mov_b32 s26, 0x89abcdef
        s_mov_b32 s27, 0x01234567
        s_atomic_cmpswap_x2 s[24:27], s[70:71], 0x28 glc
        s_mov_b32 s28, 0xff
        s_mov_b32 s29, 0
        s_atomic_xor_x2 s[28:29], s[70:71], 0x30
        s_mov_b32 s30, 2
        s_mov_b32 s31, 0
        s_atomic_smax_x2 s[30:31], s[70:71], 0x38 glc
        s_mov_b32 s32, 0x10
        s_atomic_or s32, s[70:71], s32 glc
        s_mov_b32 s33, 100
        s_buffer_atomic_add s33, s[52:55], 0x4 glc
        s_mov_b32 s36, 100
        s_buffer_atomic_add s36, s[52:55], 0x10 glc
        s_mov_b32 s34, 6
        s_mov_b32 s35, 0
        s_buffer_atomic_swap_x2 s[34:35], s[52:55], 0x8 glc
        s_waitcnt lgkmcnt(0)
    ";
    let setup = |mem: &FlatMemory| {
        fill_source(mem);
        let a = DATA + 0x3000;
        for (k, v) in [10u32, 100, 20, 30, 31, 0, 4, 7].iter().enumerate() {
            mem.store::<u32>(a + 4 * k as u64, *v);
        }
        mem.store::<u64>(a + 0x20, 0xffff_ffff);
        mem.store::<u64>(a + 0x28, 0x0123_4567_89ab_cdef);
        mem.store::<u64>(a + 0x30, 0xf0f0);
        mem.store::<u64>(a + 0x38, (-5i64) as u64);
    };
    let outs = [
        "s10", "s11", "s12", "s14", "s16", "s17", "s18", "s19", "s20", "s21", "s24", "s25", "s30",
        "s31", "s32", "s33", "s36", "s34", "s35",
    ];
    #[rustfmt::skip]
    let want = [
        10, 3, 20, 30, 31, 0, 4, 7,
        0xffff_ffff, 0,
        0x89ab_cdef, 0x0123_4567,
        (-5i32) as u32, 0xffff_ffff,
        0,               // atomic_or at DATA + 0x3010 (inc's word, now 0)
        src_word(1),
        0,               // out of range: nothing, 0 returned
        src_word(2), src_word(3),
    ];
    for t in TARGETS {
        let (mem, got) = run_with(t, &body, &outs, &setup);
        assert_eq!(got, want, "{t:?}");
        let a = DATA + 0x3000;
        let w32 = |k: u64| mem.load::<u32>(a + 4 * k);
        assert_eq!(
            (0..8).map(w32).collect::<Vec<_>>(),
            [15, 97, 7, 30, 0x10, 5, u32::MAX, u32::MAX],
            "{t:?}"
        );
        assert_eq!(mem.load::<u64>(a + 0x20), 0x1_0000_0000);
        assert_eq!(mem.load::<u64>(a + 0x28), 0x0000_bbbb_0000_aaaa);
        assert_eq!(mem.load::<u64>(a + 0x30), 0xf00f);
        assert_eq!(mem.load::<u64>(a + 0x38), 2);
        assert_eq!(mem.load::<u32>(DATA + 0x1004), src_word(1) + 100);
        assert_eq!(mem.load::<u32>(DATA + 0x1010), src_word(4));
        assert_eq!(mem.load::<u64>(DATA + 0x1008), 6);
    }
}

#[test]
fn smem_clocks() {
    // The test dispatch's clocks read 1000 and 2000.
    let body = "
        s_memtime s[10:11]
        s_memrealtime s[12:13]
        s_waitcnt lgkmcnt(0)
    ";
    check(body, &["s10", "s11", "s12", "s13"], &[1000, 0, 2000, 0]);
}

#[test]
fn unmodelled_forms_are_illegal_instructions() {
    let cases: [(&str, &str); 6] = [
        // VGPR indexing mode is not modelled.
        (
            "s_setreg_imm32_b32 hwreg(HW_REG_MODE, 27, 1), 1",
            "s_setreg_imm32_b32",
        ),
        // A buffer with a stride.
        (
            "s_mov_b32 s4, 0\ns_mov_b32 s5, 0x40000\ns_mov_b32 s6, 16\ns_mov_b32 s7, 0\n\
             s_buffer_load_dword s8, s[4:7], 0x0",
            "s_buffer_load_dword",
        ),
        // s_movrels_b64 whose second dword is past s101.
        (
            "s_mov_b32 m0, 1\ns_movrels_b64 s[10:11], s[100:101]",
            "s_movrels_b64",
        ),
        ("s_setreg_b32 hwreg(HW_REG_HW_ID), s4", "s_setreg_b32"),
        ("s_sendmsg sendmsg(MSG_GET_DOORBELL)", "s_sendmsg"),
        ("s_cbranch_join s4", "s_cbranch_join"),
    ];
    for t in TARGETS {
        for (body, name) in cases {
            match error(t, body) {
                DispatchError::IllegalInstruction { what, .. } => {
                    assert!(what.contains(name), "{t:?} {body}: {what}")
                }
                e => panic!("{t:?} {body}: {e}"),
            }
        }
    }
}

#[test]
fn xcc_id_exists_on_gfx940_only() {
    let (_, got) = run_with(
        Target::Gfx940,
        "s_mov_b32 s10, -1\ns_getreg_b32 s10, hwreg(HW_REG_XCC_ID)",
        &["s10"],
        &|_| {},
    );
    assert_eq!(got, [0]);
    match error(Target::Gfx90a, "s_getreg_b32 s10, hwreg(20)") {
        DispatchError::IllegalInstruction { what, .. } => assert!(what.contains("s_getreg_b32")),
        e => panic!("{e}"),
    }
}

#[test]
fn other_program_ends() {
    for t in TARGETS {
        // s_endpgm_saved ends the wave like s_endpgm: nothing after it
        // runs (the store epilogue would write 0x5 otherwise).
        let (mem, _) = run_with(t, "s_mov_b32 s10, 5\ns_endpgm_saved", &["s10"], &|_| {});
        assert_eq!(mem.load::<u32>(DATA), 0, "{t:?}");
        match error(t, "s_sendmsghalt sendmsg(MSG_INTERRUPT)") {
            DispatchError::Halted { pc } => assert_eq!(pc, CODE + PROLOGUE),
            e => panic!("{e}"),
        }
    }
}

#[test]
fn one_literal_serves_both_sources() {
    check(
        "s_add_u32 s10, 0x12345, 0x12345\ns_cselect_b32 s11, 1, 0\n\
         s_and_b64 s[12:13], 0x8000ffff, 0x8000ffff",
        &["s10", "s11", "s12", "s13"],
        &[0x2468a, 0, 0x8000_ffff, 0],
    );
}

#[test]
fn literals_of_signed_64_bit_operands_are_sign_extended() {
    // s_ashr_i64 and s_flbit_i32_i64 sign-extend a 32-bit literal; the
    // bitwise s_lshr_b64 zero-extends it.
    check(
        "s_ashr_i64 s[10:11], 0x80000000, 4\n\
         s_lshr_b64 s[12:13], 0x80000000, 4\n\
         s_flbit_i32_i64 s14, 0xfffffff0",
        &["s10", "s11", "s12", "s13", "s14"],
        &[0xf800_0000, 0xffff_ffff, 0x0800_0000, 0, 60],
    );
}

/// LLVM's code generator, for kernels compiled at test time.
const LLC: &str = "/usr/lib/llvm-19/bin/llc";

/// Uniform integer operations as LLVM compiles them to SALU code
/// (flbit/ff1 with the -1 results clamped by s_min_u32, 64-bit multiply
/// from s_mul_i32/s_mul_hi_u32, s_bfe_u32, s_sext_i32_i8, s_abs_i32...).
const UNIFORM_IR: &str = r#"target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.ctlz.i32(i32, i1)
declare i64 @llvm.ctlz.i64(i64, i1)
declare i32 @llvm.cttz.i32(i32, i1)
declare i64 @llvm.cttz.i64(i64, i1)
declare i32 @llvm.ctpop.i32(i32)
declare i64 @llvm.ctpop.i64(i64)
declare i32 @llvm.bitreverse.i32(i32)
declare i64 @llvm.bitreverse.i64(i64)
declare i32 @llvm.smin.i32(i32, i32)
declare i32 @llvm.umax.i32(i32, i32)
declare i32 @llvm.abs.i32(i32, i1)
declare i32 @llvm.fshl.i32(i32, i32, i32)
declare {i32, i1} @llvm.uadd.with.overflow.i32(i32, i32)
declare {i32, i1} @llvm.sadd.with.overflow.i32(i32, i32)

define amdgpu_kernel void @k(ptr addrspace(1) %out, i32 %a, i32 %b, i64 %x, i64 %y) #0 {
  %p = getelementptr i32, ptr addrspace(1) %out, i32 0
  %r0 = call i32 @llvm.ctlz.i32(i32 %a, i1 false)
  store volatile i32 %r0, ptr addrspace(1) %out
  %r1 = call i64 @llvm.ctlz.i64(i64 %x, i1 false)
  %r1t = trunc i64 %r1 to i32
  %q1 = getelementptr i32, ptr addrspace(1) %out, i32 1
  store volatile i32 %r1t, ptr addrspace(1) %q1
  %r2 = call i32 @llvm.cttz.i32(i32 %b, i1 false)
  %q2 = getelementptr i32, ptr addrspace(1) %out, i32 2
  store volatile i32 %r2, ptr addrspace(1) %q2
  %r3 = call i64 @llvm.cttz.i64(i64 %y, i1 false)
  %r3t = trunc i64 %r3 to i32
  %q3 = getelementptr i32, ptr addrspace(1) %out, i32 3
  store volatile i32 %r3t, ptr addrspace(1) %q3
  %r4 = call i64 @llvm.ctpop.i64(i64 %x)
  %r4t = trunc i64 %r4 to i32
  %q4 = getelementptr i32, ptr addrspace(1) %out, i32 4
  store volatile i32 %r4t, ptr addrspace(1) %q4
  %r5 = call i32 @llvm.bitreverse.i32(i32 %a)
  %q5 = getelementptr i32, ptr addrspace(1) %out, i32 5
  store volatile i32 %r5, ptr addrspace(1) %q5
  %m = mul i64 %x, %y
  %ml = trunc i64 %m to i32
  %mh64 = lshr i64 %m, 32
  %mh = trunc i64 %mh64 to i32
  %q6 = getelementptr i32, ptr addrspace(1) %out, i32 6
  store volatile i32 %ml, ptr addrspace(1) %q6
  %q7 = getelementptr i32, ptr addrspace(1) %out, i32 7
  store volatile i32 %mh, ptr addrspace(1) %q7
  %sh = zext i32 %b to i64
  %s1 = ashr i64 %x, %sh
  %s1l = trunc i64 %s1 to i32
  %s1h64 = lshr i64 %s1, 32
  %s1h = trunc i64 %s1h64 to i32
  %q8 = getelementptr i32, ptr addrspace(1) %out, i32 8
  store volatile i32 %s1l, ptr addrspace(1) %q8
  %q9 = getelementptr i32, ptr addrspace(1) %out, i32 9
  store volatile i32 %s1h, ptr addrspace(1) %q9
  %mn = call i32 @llvm.smin.i32(i32 %a, i32 %b)
  %mx = call i32 @llvm.umax.i32(i32 %a, i32 %b)
  %ab = call i32 @llvm.abs.i32(i32 %a, i1 false)
  %q10 = getelementptr i32, ptr addrspace(1) %out, i32 10
  store volatile i32 %mn, ptr addrspace(1) %q10
  %q11 = getelementptr i32, ptr addrspace(1) %out, i32 11
  store volatile i32 %mx, ptr addrspace(1) %q11
  %q12 = getelementptr i32, ptr addrspace(1) %out, i32 12
  store volatile i32 %ab, ptr addrspace(1) %q12
  %t8 = trunc i32 %a to i8
  %e8 = sext i8 %t8 to i32
  %q13 = getelementptr i32, ptr addrspace(1) %out, i32 13
  store volatile i32 %e8, ptr addrspace(1) %q13
  %bf1 = lshr i32 %a, 5
  %bf = and i32 %bf1, 255
  %q14 = getelementptr i32, ptr addrspace(1) %out, i32 14
  store volatile i32 %bf, ptr addrspace(1) %q14
  %r20 = call i32 @llvm.ctpop.i32(i32 %b)
  %q20 = getelementptr i32, ptr addrspace(1) %out, i32 20
  store volatile i32 %r20, ptr addrspace(1) %q20
  %r21 = call i64 @llvm.bitreverse.i64(i64 %y)
  %r21t = trunc i64 %r21 to i32
  %q21 = getelementptr i32, ptr addrspace(1) %out, i32 21
  store volatile i32 %r21t, ptr addrspace(1) %q21
  %xm = mul i32 %a, %b
  %q22 = getelementptr i32, ptr addrspace(1) %out, i32 22
  store volatile i32 %xm, ptr addrspace(1) %q22
  ret void
}
attributes #0 = { "amdgpu-no-dispatch-ptr" "amdgpu-no-queue-ptr" "amdgpu-no-implicitarg-ptr" "amdgpu-no-dispatch-id" "amdgpu-no-workitem-id-y" "amdgpu-no-workitem-id-z" "amdgpu-no-workgroup-id-y" "amdgpu-no-workgroup-id-z" "amdgpu-no-lds-kernel-id" "amdgpu-no-heap-ptr" "amdgpu-no-hostcall-ptr" "amdgpu-no-multigrid-sync-arg" "amdgpu-no-completion-action" "amdgpu-no-default-queue" }
"#;

/// The assembly `llc` makes of `ir` for `target`.
fn compile(target: Target, ir: &str) -> String {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(LLC)
        .args([
            "-mtriple=amdgcn-amd-amdhsa",
            &format!("-mcpu={}", target.llvm_cpu()),
            "-O2",
            "-o",
            "-",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{LLC}: {e}: install llvm-19"));
    child
        .stdin
        .take()
        .unwrap()
        .write_all(ir.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn llvm_compiled_uniform_integer_code() {
    let inputs: [(u32, u32, u64, u64); 3] = [
        (0x0012_3480, 9, 0x0000_0f00_0000_1234, 0x8000_0000_0000_0000),
        (0, 0, 0, 0),
        (
            0xffff_ff85,
            40,
            0xf123_4567_89ab_cdef,
            0x0000_0000_0003_0000,
        ),
    ];
    for t in TARGETS {
        let asm = compile(t, UNIFORM_IR);
        for &(a, b, x, y) in &inputs {
            let mem = memory();
            mem.store::<u64>(KERNARG, DATA);
            mem.store::<u32>(KERNARG + 8, a);
            mem.store::<u32>(KERNARG + 12, b);
            mem.store::<u64>(KERNARG + 16, x);
            mem.store::<u64>(KERNARG + 24, y);
            let mut k = Kernel::new(t, &asm);
            // The kernarg pointer, after the private segment buffer
            // (s[0:3]) when the kernel asks for one (not with gfx940's
            // architected flat scratch).
            if asm.contains(".amdhsa_user_sgpr_private_segment_buffer 1") {
                k.properties = 1 | 1 << 3;
            }
            k.run(&mem).unwrap_or_else(|e| panic!("{t:?}: {e}"));
            let m = x.wrapping_mul(y);
            let s = (x as i64 >> b) as u64;
            let mut want = [0u32; 23];
            want[..15].copy_from_slice(&[
                a.leading_zeros(),
                x.leading_zeros(),
                b.trailing_zeros(),
                y.trailing_zeros(),
                x.count_ones(),
                a.reverse_bits(),
                m as u32,
                (m >> 32) as u32,
                s as u32,
                (s >> 32) as u32,
                (a as i32).min(b as i32) as u32,
                a.max(b),
                (a as i32).unsigned_abs(),
                a as u8 as i8 as i32 as u32,
                (a >> 5) & 0xff,
            ]);
            want[20] = b.count_ones();
            want[21] = y.reverse_bits() as u32;
            want[22] = a.wrapping_mul(b);
            assert_eq!(results(&mem, 23), want, "{t:?} {a:#x} {b} {x:#x} {y:#x}");
        }
    }
}

/// A uniform loop with an if/else inside and a branch after it: LLVM's
/// scalar control flow (s_bitcmp0, s_cbranch_scc*/vccnz, s_andn2_b64 vcc,
/// exec, backward s_branch).
const LOOP_IR: &str = r#"target triple = "amdgcn-amd-amdhsa"
define amdgpu_kernel void @k(ptr addrspace(1) %out, i32 %n, i32 %m) #0 {
entry:
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %i1, %cont ]
  %acc = phi i32 [ 0, %entry ], [ %acc2, %cont ]
  %sq = mul i32 %i, %i
  %odd = and i32 %i, 1
  %isodd = icmp ne i32 %odd, 0
  br i1 %isodd, label %then, label %else
then:
  %t = xor i32 %acc, %sq
  br label %cont
else:
  %e = add i32 %acc, %sq
  br label %cont
cont:
  %acc2 = phi i32 [ %t, %then ], [ %e, %else ]
  %i1 = add i32 %i, 1
  %done = icmp uge i32 %i1, %n
  br i1 %done, label %exit, label %loop
exit:
  %big = icmp sgt i32 %acc2, %m
  br i1 %big, label %b1, label %b2
b1:
  store volatile i32 %acc2, ptr addrspace(1) %out
  ret void
b2:
  %q = getelementptr i32, ptr addrspace(1) %out, i32 1
  store volatile i32 %acc2, ptr addrspace(1) %q
  ret void
}
attributes #0 = { "amdgpu-no-dispatch-ptr" "amdgpu-no-queue-ptr" "amdgpu-no-implicitarg-ptr" "amdgpu-no-dispatch-id" "amdgpu-no-workitem-id-y" "amdgpu-no-workitem-id-z" "amdgpu-no-workgroup-id-y" "amdgpu-no-workgroup-id-z" "amdgpu-no-lds-kernel-id" "amdgpu-no-heap-ptr" "amdgpu-no-hostcall-ptr" "amdgpu-no-multigrid-sync-arg" "amdgpu-no-completion-action" "amdgpu-no-default-queue" }
"#;

/// Runs a tool on `input`, returning its standard output.
fn pipe(tool: &str, args: &[&str], input: &[u8]) -> Vec<u8> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(tool)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{tool}: {e}: install llvm-19"));
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(
        out.status.success(),
        "{tool}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The machine code (the object's `.text`, kernel first) `llc` makes of
/// `ir` for `target`, as words, with branches resolved.
fn compile_code(target: Target, ir: &str) -> Vec<u32> {
    let cpu = format!("-mcpu={}", target.llvm_cpu());
    let obj = pipe(
        LLC,
        &[
            "-mtriple=amdgcn-amd-amdhsa",
            &cpu,
            "-O2",
            "-filetype=obj",
            "-o",
            "-",
        ],
        ir.as_bytes(),
    );
    let text = pipe(
        "/usr/lib/llvm-19/bin/llvm-objcopy",
        &["-O", "binary", "--only-section=.text", "-", "-"],
        &obj,
    );
    text.chunks(4)
        .map(|c| {
            let mut b = [0u8; 4];
            b[..c.len()].copy_from_slice(c);
            u32::from_le_bytes(b)
        })
        .collect()
}

#[test]
fn llvm_compiled_uniform_control_flow() {
    for t in TARGETS {
        let code = compile_code(t, LOOP_IR);
        let buffer = compile(t, LOOP_IR).contains(".amdhsa_user_sgpr_private_segment_buffer 1");
        for (n, m) in [
            (0u32, 0i32),
            (1, 0),
            (7, 10),
            (10, 1000),
            (1000, 5),
            (3, -1),
        ] {
            let mem = memory();
            for (k, w) in code.iter().enumerate() {
                mem.store::<u32>(CODE + 4 * k as u64, *w);
            }
            mem.store::<u64>(KERNARG, DATA);
            mem.store::<u32>(KERNARG + 8, n);
            mem.store::<u32>(KERNARG + 12, m as u32);
            // The code is in memory already: the kernel's own source is
            // empty.
            let mut k = Kernel::new(t, "");
            if buffer {
                k.properties = 1 | 1 << 3;
            }
            k.run(&mem).unwrap_or_else(|e| panic!("{t:?}: {e}"));
            let mut acc = 0u32;
            for i in 0..n.max(1) {
                let sq = i.wrapping_mul(i);
                acc = if i & 1 != 0 {
                    acc ^ sq
                } else {
                    acc.wrapping_add(sq)
                };
            }
            let want = if acc as i32 > m { [acc, 0] } else { [0, acc] };
            assert_eq!(results(&mem, 2), want, "{t:?} n={n} m={m}");
        }
    }
}

#[test]
fn status_and_hw_id() {
    // STATUS: SCC (bit 0), EXECZ (9), VCCZ (10), VALID (16). HW_ID of the
    // first wave: wave 0 on SIMD 0.
    let body = "
        s_mov_b64 vcc, 0
        s_mov_b64 s[20:21], exec
        s_mov_b64 exec, 0
        s_cmp_eq_u32 0, 0
        s_getreg_b32 s10, hwreg(HW_REG_STATUS)
        s_mov_b64 exec, s[20:21]
        s_mov_b32 vcc_lo, 1
        s_cmp_eq_u32 0, 1
        s_getreg_b32 s11, hwreg(HW_REG_STATUS)
        s_getreg_b32 s12, hwreg(HW_REG_STATUS, 9, 2)
        s_getreg_b32 s13, hwreg(HW_REG_HW_ID)
    ";
    check(
        body,
        &["s10", "s11", "s12", "s13"],
        &[1 | 1 << 9 | 1 << 10 | 1 << 16, 1 << 16, 0, 0],
    );
}
