//! SVM attributes and the XNACK mode.

use std::ffi::c_void;

use hsakmt_sys::common::HSA_SVM_ATTRIBUTE;
use kfd_fmm::SvmAttr;

use crate::border::{check_mut, slice_in, st, write_array, write_out, Kmt};
use crate::ctx::{self, HsaKFDContext};

export! {
    /// `hsaKmtSVMSetAttrCtx`: 20; KFD < 1.5 → 11; NULL start or size 0
    /// → 3; unaligned → 3; bad node in a location/access attribute → 5.
    ctx fn hsaKmtSVMSetAttrCtx(ctx: *mut HsaKFDContext, start_addr: *mut c_void, size: u64, nattr: u32, attrs: *mut HSA_SVM_ATTRIBUTE) {
        let c = ctx::resolve(ctx)?;
        c.require_minor(5).kmt()?;
        if start_addr.is_null() || size == 0 {
            return Err(st::INVALID_PARAMETER);
        }
        // SAFETY: the C contract: `attrs` holds `nattr` attributes.
        let raw = unsafe { slice_in(attrs, nattr as usize, st::INVALID_PARAMETER) }?;
        let list: Vec<SvmAttr> = raw.iter().map(|a| SvmAttr::from_raw(a.r#type, a.value)).collect();
        c.fmm().kmt()?.svm_set_attr(start_addr as u64, size, &list).kmt()
    }

    /// `hsaKmtSVMGetAttrCtx`: as [`hsaKmtSVMSetAttrCtx`]; the attributes
    /// are read back into `attrs`.
    ctx fn hsaKmtSVMGetAttrCtx(ctx: *mut HsaKFDContext, start_addr: *mut c_void, size: u64, nattr: u32, attrs: *mut HSA_SVM_ATTRIBUTE) {
        let c = ctx::resolve(ctx)?;
        c.require_minor(5).kmt()?;
        if start_addr.is_null() || size == 0 {
            return Err(st::INVALID_PARAMETER);
        }
        // SAFETY: the C contract: `attrs` holds `nattr` attributes.
        let raw = unsafe { slice_in(attrs, nattr as usize, st::INVALID_PARAMETER) }?;
        let mut list: Vec<SvmAttr> = raw.iter().map(|a| SvmAttr::from_raw(a.r#type, a.value)).collect();
        c.fmm().kmt()?.svm_get_attr(start_addr as u64, size, &mut list).kmt()?;
        let out: Vec<HSA_SVM_ATTRIBUTE> = list
            .iter()
            .map(|a| {
                let (t, v) = a.to_raw();
                HSA_SVM_ATTRIBUTE { r#type: t, value: v }
            })
            .collect();
        // SAFETY: the same `nattr` attributes, IN/OUT.
        unsafe { write_array(attrs, &out, st::INVALID_PARAMETER) }
    }

    /// `hsaKmtSetXNACKModeCtx`: 20; KFD < 1.5 → 11; EPERM → 11; queues
    /// exist → 1.
    ctx fn hsaKmtSetXNACKModeCtx(ctx: *mut HsaKFDContext, enable: i32) {
        let c = ctx::resolve(ctx)?;
        c.fmm().kmt()?.set_xnack_mode(enable != 0).kmt()
    }

    /// `hsaKmtGetXNACKModeCtx`: NULL → 3.
    ctx fn hsaKmtGetXNACKModeCtx(ctx: *mut HsaKFDContext, enable: *mut i32) {
        let c = ctx::resolve(ctx)?;
        check_mut(enable, st::INVALID_PARAMETER)?;
        let on = c.fmm().kmt()?.xnack_mode().kmt()?;
        // SAFETY: checked above; an OUT argument.
        unsafe { write_out(enable, i32::from(on), st::INVALID_PARAMETER) }
    }
}

forward! {
    /// `hsaKmtSVMSetAttr`.
    all fn hsaKmtSVMSetAttr(start_addr: *mut c_void, size: u64, nattr: u32, attrs: *mut HSA_SVM_ATTRIBUTE) => hsaKmtSVMSetAttrCtx;
    /// `hsaKmtSVMGetAttr`.
    all fn hsaKmtSVMGetAttr(start_addr: *mut c_void, size: u64, nattr: u32, attrs: *mut HSA_SVM_ATTRIBUTE) => hsaKmtSVMGetAttrCtx;
    /// `hsaKmtSetXNACKMode`.
    all fn hsaKmtSetXNACKMode(enable: i32) => hsaKmtSetXNACKModeCtx;
    /// `hsaKmtGetXNACKMode`.
    all fn hsaKmtGetXNACKMode(enable: *mut i32) => hsaKmtGetXNACKModeCtx;
}
