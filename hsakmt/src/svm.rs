//! SVM attributes and the XNACK mode.

use std::ffi::c_void;

use hsakmt_sys::common::HSA_SVM_ATTRIBUTE;
use kfd_fmm::SvmAttr;

use crate::border::{check_mut, slice_in, st, write_array, write_out, Kmt, KmtResult};
use crate::ctx::{self, CtxRef, HsaKFDContext};

// The C library sends a list longer than kfd::SVM_MAX_ATTRS with a
// mangled request number, which the kernel refuses; the border refuses it
// with the same status (ERROR) without reading the list.
use kfd_sys::kfd::SVM_MAX_ATTRS;

export! {
    /// `hsaKmtSVMSetAttrCtx`: 20; KFD < 1.5 → 11; NULL start or size 0
    /// → 3; unaligned → 3; more attributes than one request carries → 1;
    /// a location/access attribute naming a node the topology snapshot
    /// lacks (or any node while no snapshot is held) → 5; the kernel
    /// refusing → 1. Node ids are read in the snapshot, as the C library
    /// does: attributes without a node reach the kernel without one.
    ctx fn hsaKmtSVMSetAttrCtx(ctx: *mut HsaKFDContext, start_addr: *mut c_void, size: u64, nattr: u32, attrs: *mut HSA_SVM_ATTRIBUTE) {
        // SAFETY: the C contract: `attrs` holds `nattr` attributes.
        let (c, list) = unsafe { svm_request(ctx, start_addr, size, nattr, attrs) }?;
        let topo = c.topology().ok();
        kfd_fmm::svm_set_attr(c.kfd(), topo.as_deref(), start_addr as u64, size, &list).kmt()
    }

    /// `hsaKmtSVMGetAttrCtx`: as [`hsaKmtSVMSetAttrCtx`]; the attributes
    /// are read back into `attrs` (a location the snapshot cannot name
    /// → 5).
    ctx fn hsaKmtSVMGetAttrCtx(ctx: *mut HsaKFDContext, start_addr: *mut c_void, size: u64, nattr: u32, attrs: *mut HSA_SVM_ATTRIBUTE) {
        // SAFETY: the C contract: `attrs` holds `nattr` attributes.
        let (c, mut list) = unsafe { svm_request(ctx, start_addr, size, nattr, attrs) }?;
        let topo = c.topology().ok();
        kfd_fmm::svm_get_attr(c.kfd(), topo.as_deref(), start_addr as u64, size, &mut list).kmt()?;
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

/// The checks of both SVM calls, in the C library's order — 20, KFD <
/// 1.5 → 11, the range (NULL, empty or unaligned → 3), then the number of
/// attributes (more than [`SVM_MAX_ATTRS`] → 1) — and then the attribute
/// list, read (NULL with attributes → 3). Neither the topology snapshot
/// nor the memory manager is needed (the C library's SVM calls use
/// neither but for node ids).
///
/// # Safety
///
/// `attrs` holds `nattr` attributes when `nattr` is within
/// [`SVM_MAX_ATTRS`].
unsafe fn svm_request(
    ctx: *mut HsaKFDContext,
    start: *mut c_void,
    size: u64,
    nattr: u32,
    attrs: *mut HSA_SVM_ATTRIBUTE,
) -> KmtResult<(CtxRef, Vec<SvmAttr>)> {
    let c = ctx::resolve(ctx)?;
    c.require_minor(5).kmt()?;
    if start.is_null() || size == 0 {
        return Err(st::INVALID_PARAMETER);
    }
    kfd_fmm::check_svm_range(start as u64, size).kmt()?;
    if nattr as usize > SVM_MAX_ATTRS {
        return Err(st::ERROR);
    }
    // SAFETY: forwarded contract, the count within the limit.
    let raw = unsafe { slice_in(attrs, nattr as usize, SVM_MAX_ATTRS, st::INVALID_PARAMETER) }?;
    let list = raw
        .iter()
        .map(|a| SvmAttr::from_raw(a.r#type, a.value))
        .collect();
    Ok((c, list))
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
