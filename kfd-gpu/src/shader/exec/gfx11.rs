//! gfx11 instructions on the shared executors: gfx11 renamed many
//! mnemonics whose meaning did not change (`global_load_b32` is gfx9's
//! `global_load_dword`, `v_add_nc_u32` gfx9's `v_add_u32`); each is run
//! by the executor of its gfx9 name. What gfx11 changed in meaning is not
//! renamed here and stays without an executor until it has its own.

use std::sync::OnceLock;

use super::{lookup as by_name, unimplemented, Ctx, Exec, Flow};
use crate::shader::isa::{Dual, Enc, Ext, Inst, Mods};
use crate::shader::wave::Wave;

/// The executor of gfx11 mnemonic `name` of family `enc`, or `None` when
/// the model does not run it (it then stops the dispatch as an illegal
/// instruction).
pub(super) fn lookup(enc: Enc, name: &str) -> Option<Exec> {
    if enc == Enc::Vopd {
        return half(name).map(|_| vopd as Exec);
    }
    match gfx9_name(name) {
        Some(n) => by_name(&n),
        None => by_name(name),
    }
}

/// The VALU mnemonic of VOPD operation `name` (`v_dual_add_f32` ->
/// `v_add_f32`), its family in the 32-bit encodings, and its executor.
fn half(name: &str) -> Option<(&'static str, Enc, Exec)> {
    static HALVES: OnceLock<Vec<(&'static str, &'static str, Enc, Exec)>> = OnceLock::new();
    let all = HALVES.get_or_init(|| {
        let names = crate::shader::isa::tables_of(crate::shader::isa::Target::Gfx1100)
            .into_iter()
            .filter(|(e, _)| *e == Enc::Vopd)
            .flat_map(|(_, t)| t.iter().copied());
        let mut v = Vec::new();
        for dual in names.filter(|n| !n.is_empty()) {
            let valu: &'static str = match dual.strip_prefix("v_dual_") {
                Some(op) => Box::leak(format!("v_{op}").into_boxed_str()),
                None => continue,
            };
            let enc = if valu == "v_mov_b32" {
                Enc::Vop1
            } else {
                Enc::Vop2
            };
            if let Some(e) = lookup(enc, valu) {
                v.push((dual, valu, enc, e));
            }
        }
        v
    });
    all.iter()
        .find(|(d, ..)| *d == name)
        .map(|&(_, valu, enc, e)| (valu, enc, e))
}

/// The 32-bit VALU instruction doing one operation of a VOPD `i`.
fn operation(i: &Inst, name: &'static str, enc: Enc, dst: u16, src: [u16; 2]) -> Inst {
    Inst {
        enc,
        op: 0,
        name,
        len: i.len,
        w: i.w,
        lit: i.lit,
        dst,
        sdst: 0,
        src: [src[0], src[1], 0],
        simm16: 0,
        mods: Mods::default(),
        ext: Ext::None,
        y: None,
    }
}

/// VOPD: X and Y read their sources before either writes (their
/// destinations differ). X runs first; when Y reads X's destination, Y
/// runs with that register as it was before X.
fn vopd(w: &mut Wave, i: &Inst, c: &mut Ctx<'_, '_>) -> Flow {
    let Some(Dual {
        name: yname,
        dst,
        src,
        ..
    }) = i.y
    else {
        return unimplemented(i, "VOPD without its Y operation");
    };
    let (Some((xn, xe, xf)), Some((yn, ye, yf))) = (half(i.name), half(yname)) else {
        return unimplemented(i, yname);
    };
    let x = operation(i, xn, xe, i.dst, [i.src[0], i.src[1]]);
    let y = operation(i, yn, ye, dst, src);
    // (An accumulating Y reads its own destination, never X's.)
    let hazard = y.src[..2].contains(&x.dst);
    let xd = usize::from(x.dst.wrapping_sub(256)) % w.vgpr.len();
    let before = hazard.then(|| w.vgpr[xd]);
    match xf(w, &x, c) {
        Flow::Next => {}
        other => return other,
    }
    let Some(before) = before else {
        return yf(w, &y, c);
    };
    let after = std::mem::replace(&mut w.vgpr[xd], before);
    let r = yf(w, &y, c);
    w.vgpr[xd] = after;
    r
}

/// Whole-name renames.
const RENAMED: &[(&str, &str)] = &[
    ("s_and_not1_b32", "s_andn2_b32"),
    ("s_and_not1_b64", "s_andn2_b64"),
    ("s_or_not1_b32", "s_orn2_b32"),
    ("s_or_not1_b64", "s_orn2_b64"),
    ("s_ctz_i32_b32", "s_ff1_i32_b32"),
    ("s_ctz_i32_b64", "s_ff1_i32_b64"),
    ("s_clz_i32_u32", "s_flbit_i32_b32"),
    ("s_clz_i32_u64", "s_flbit_i32_b64"),
    ("s_cls_i32", "s_flbit_i32"),
    ("s_cls_i32_i64", "s_flbit_i32_i64"),
    ("s_and_not1_saveexec_b64", "s_andn2_saveexec_b64"),
    ("s_or_not1_saveexec_b64", "s_orn2_saveexec_b64"),
    ("s_and_not0_saveexec_b64", "s_andn1_saveexec_b64"),
    ("s_or_not0_saveexec_b64", "s_orn1_saveexec_b64"),
    ("s_and_not0_wrexec_b64", "s_andn1_wrexec_b64"),
    ("s_and_not1_wrexec_b64", "s_andn2_wrexec_b64"),
    ("v_add_nc_u32", "v_add_u32"),
    ("v_sub_nc_u32", "v_sub_u32"),
    ("v_subrev_nc_u32", "v_subrev_u32"),
    ("v_add_nc_i32", "v_add_i32"),
    ("v_sub_nc_i32", "v_sub_i32"),
    ("v_add_nc_u16", "v_add_u16"),
    ("v_sub_nc_u16", "v_sub_u16"),
    ("v_add_nc_i16", "v_add_i16"),
    ("v_sub_nc_i16", "v_sub_i16"),
    ("v_add_co_ci_u32", "v_addc_co_u32"),
    ("v_sub_co_ci_u32", "v_subb_co_u32"),
    ("v_subrev_co_ci_u32", "v_subbrev_co_u32"),
    ("v_cvt_pk_rtz_f16_f32", "v_cvt_pkrtz_f16_f32"),
    ("v_clz_i32_u32", "v_ffbh_u32"),
    ("v_ctz_i32_b32", "v_ffbl_b32"),
    ("v_cls_i32", "v_ffbh_i32"),
    ("v_cvt_floor_i32_f32", "v_cvt_flr_i32_f32"),
    ("v_cvt_nearest_i32_f32", "v_cvt_rpi_i32_f32"),
    ("ds_store_b32", "ds_write_b32"),
    ("ds_store_2addr_b32", "ds_write2_b32"),
    ("ds_store_2addr_stride64_b32", "ds_write2st64_b32"),
    ("ds_store_b8", "ds_write_b8"),
    ("ds_store_b16", "ds_write_b16"),
    ("ds_store_b64", "ds_write_b64"),
    ("ds_store_2addr_b64", "ds_write2_b64"),
    ("ds_store_2addr_stride64_b64", "ds_write2st64_b64"),
    ("ds_store_b96", "ds_write_b96"),
    ("ds_store_b128", "ds_write_b128"),
    ("ds_store_b8_d16_hi", "ds_write_b8_d16_hi"),
    ("ds_store_b16_d16_hi", "ds_write_b16_d16_hi"),
    ("ds_store_addtid_b32", "ds_write_addtid_b32"),
    ("ds_load_b32", "ds_read_b32"),
    ("ds_load_2addr_b32", "ds_read2_b32"),
    ("ds_load_2addr_stride64_b32", "ds_read2st64_b32"),
    ("ds_load_i8", "ds_read_i8"),
    ("ds_load_u8", "ds_read_u8"),
    ("ds_load_i16", "ds_read_i16"),
    ("ds_load_u16", "ds_read_u16"),
    ("ds_load_b64", "ds_read_b64"),
    ("ds_load_2addr_b64", "ds_read2_b64"),
    ("ds_load_2addr_stride64_b64", "ds_read2st64_b64"),
    ("ds_load_b96", "ds_read_b96"),
    ("ds_load_b128", "ds_read_b128"),
    ("ds_load_u8_d16", "ds_read_u8_d16"),
    ("ds_load_u8_d16_hi", "ds_read_u8_d16_hi"),
    ("ds_load_i8_d16", "ds_read_i8_d16"),
    ("ds_load_i8_d16_hi", "ds_read_i8_d16_hi"),
    ("ds_load_u16_d16", "ds_read_u16_d16"),
    ("ds_load_u16_d16_hi", "ds_read_u16_d16_hi"),
    ("ds_load_addtid_b32", "ds_read_addtid_b32"),
    ("ds_storexchg_rtn_b32", "ds_wrxchg_rtn_b32"),
    ("ds_storexchg_2addr_rtn_b32", "ds_wrxchg2_rtn_b32"),
    (
        "ds_storexchg_2addr_stride64_rtn_b32",
        "ds_wrxchg2st64_rtn_b32",
    ),
    ("ds_storexchg_rtn_b64", "ds_wrxchg_rtn_b64"),
    ("ds_storexchg_2addr_rtn_b64", "ds_wrxchg2_rtn_b64"),
    (
        "ds_storexchg_2addr_stride64_rtn_b64",
        "ds_wrxchg2st64_rtn_b64",
    ),
];

/// Renames of the part after `flat_`/`global_`/`scratch_`.
const VMEM_RENAMED: &[(&str, &str)] = &[
    ("load_u8", "load_ubyte"),
    ("load_i8", "load_sbyte"),
    ("load_u16", "load_ushort"),
    ("load_i16", "load_sshort"),
    ("load_b32", "load_dword"),
    ("load_b64", "load_dwordx2"),
    ("load_b96", "load_dwordx3"),
    ("load_b128", "load_dwordx4"),
    ("store_b8", "store_byte"),
    ("store_b16", "store_short"),
    ("store_b32", "store_dword"),
    ("store_b64", "store_dwordx2"),
    ("store_b96", "store_dwordx3"),
    ("store_b128", "store_dwordx4"),
    ("load_d16_u8", "load_ubyte_d16"),
    ("load_d16_i8", "load_sbyte_d16"),
    ("load_d16_b16", "load_short_d16"),
    ("load_d16_hi_u8", "load_ubyte_d16_hi"),
    ("load_d16_hi_i8", "load_sbyte_d16_hi"),
    ("load_d16_hi_b16", "load_short_d16_hi"),
    ("store_d16_hi_b8", "store_byte_d16_hi"),
    ("store_d16_hi_b16", "store_short_d16_hi"),
    ("load_addtid_b32", "load_dword_addtid"),
    ("store_addtid_b32", "store_dword_addtid"),
    ("atomic_swap_b32", "atomic_swap"),
    ("atomic_cmpswap_b32", "atomic_cmpswap"),
    ("atomic_add_u32", "atomic_add"),
    ("atomic_sub_u32", "atomic_sub"),
    ("atomic_min_i32", "atomic_smin"),
    ("atomic_min_u32", "atomic_umin"),
    ("atomic_max_i32", "atomic_smax"),
    ("atomic_max_u32", "atomic_umax"),
    ("atomic_and_b32", "atomic_and"),
    ("atomic_or_b32", "atomic_or"),
    ("atomic_xor_b32", "atomic_xor"),
    ("atomic_inc_u32", "atomic_inc"),
    ("atomic_dec_u32", "atomic_dec"),
    ("atomic_swap_b64", "atomic_swap_x2"),
    ("atomic_cmpswap_b64", "atomic_cmpswap_x2"),
    ("atomic_add_u64", "atomic_add_x2"),
    ("atomic_sub_u64", "atomic_sub_x2"),
    ("atomic_min_i64", "atomic_smin_x2"),
    ("atomic_min_u64", "atomic_umin_x2"),
    ("atomic_max_i64", "atomic_smax_x2"),
    ("atomic_max_u64", "atomic_umax_x2"),
    ("atomic_and_b64", "atomic_and_x2"),
    ("atomic_or_b64", "atomic_or_x2"),
    ("atomic_xor_b64", "atomic_xor_x2"),
    ("atomic_inc_u64", "atomic_inc_x2"),
    ("atomic_dec_u64", "atomic_dec_x2"),
];

/// The gfx9 mnemonic with the meaning of gfx11 mnemonic `name`, when
/// gfx11 renamed it.
fn gfx9_name(name: &str) -> Option<String> {
    if let Some((_, n)) = RENAMED.iter().find(|(g, _)| *g == name) {
        return Some((*n).to_string());
    }
    // SMEM: s_load_b32 .. s_load_b512, s_buffer_load_b32 .. _b512.
    for p in ["s_load_", "s_buffer_load_"] {
        if let Some(w) = name.strip_prefix(p) {
            let d = match w {
                "b32" => "dword",
                "b64" => "dwordx2",
                "b128" => "dwordx4",
                "b256" => "dwordx8",
                "b512" => "dwordx16",
                _ => return None,
            };
            return Some(format!("{p}{d}"));
        }
    }
    // Float compares: gfx11's always-true `t` is gfx9's `tru`.
    for p in ["v_cmp_t_", "v_cmpx_t_"] {
        if let Some(ty) = name.strip_prefix(p).filter(|t| t.starts_with('f')) {
            return Some(format!("{}tru_{ty}", &p[..p.len() - 2]));
        }
    }
    for p in ["flat_", "global_", "scratch_", "buffer_"] {
        if let Some(op) = name.strip_prefix(p) {
            let (_, n) = VMEM_RENAMED.iter().find(|(g, _)| *g == op)?;
            return Some(format!("{p}{n}"));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renamed_mnemonics_find_their_gfx9_executor() {
        for (g11, g9) in [
            ("global_load_b32", "global_load_dword"),
            ("global_atomic_max_u64", "global_atomic_umax_x2"),
            ("s_load_b512", "s_load_dwordx16"),
            ("v_cmpx_t_f32", "v_cmpx_tru_f32"),
            ("v_add_nc_u32", "v_add_u32"),
        ] {
            assert_eq!(gfx9_name(g11).as_deref(), Some(g9));
            assert!(by_name(g9).is_some(), "{g9} has no executor");
        }
        assert_eq!(gfx9_name("v_mov_b32"), None);
        assert_eq!(gfx9_name("v_cmp_t_i32"), None);
        assert_eq!(gfx9_name("global_load_lds_dword"), None);
    }
}
