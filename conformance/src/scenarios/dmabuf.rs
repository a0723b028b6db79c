//! `dmabuf` (6.2.4 and newest): ExportDMABufHandle, and the newest
//! library's DRM-handle layer (HandleExport, HandleImport and the
//! memory map flags).
//!
//! The DRM-handle layer is newer than any library a reference can be
//! built from (the 2026 upstream); every expectation is therefore also a
//! `check.*` record (the documented semantics, see the module docs of
//! hsakmt's `render.rs`), judged when the reference lacks the function.

use std::ffi::c_void;
use std::ptr::null_mut;

use hsakmt_sys::newest::{
    HsaExternalHandleType, HsaHandleExportDesc, HsaHandleImportDesc, HsaHandleImportDescHandle,
    HsaHandleImportFlags, HsaHandleImportResult, HsaMemoryExportResult, HsaMemoryMapFlags,
};

use super::Applies::Since;
use super::{alloc, close, free, require, setup, teardown, Table};
use crate::abi::AbiKind::{Newest, Rocm62};
use crate::abi::{memflag as mf, Abi};
use crate::cx::{Cx, HostBuf};
use crate::kmt;

/// A GTT buffer of `size` bytes with `pattern` at its start, exported as
/// a dma-buf: `(address, descriptor)`.
pub(super) fn exported<A: Abi>(
    cx: &mut Cx<A>,
    size: u64,
    pattern: &[u8],
) -> Option<(*mut c_void, i32)> {
    let p = alloc(cx, "gtt.alloc", 0, size, mf::NON_PAGED | mf::HOST_ACCESS)?;
    // SAFETY: a host-accessible allocation of `size` bytes, longer than
    // the pattern.
    unsafe { std::ptr::copy_nonoverlapping(pattern.as_ptr(), p.cast::<u8>(), pattern.len()) };
    let (mut fd, mut off) = (-1i32, 0u64);
    let s = kmt!(
        cx,
        "gtt.export",
        hsaKmtExportDMABufHandle(p, size, &mut fd, &mut off),
        "the allocation above; live outs"
    );
    if s != 0 {
        free(cx, "gtt.free", p, size);
        return None;
    }
    Some((p, fd))
}

/// `hsaKmtGetAMDGPUDeviceHandle` of `node`.
pub(super) fn device<A: Abi>(cx: &mut Cx<A>, node: u32) -> *mut c_void {
    let mut h: *mut c_void = null_mut();
    kmt!(
        cx,
        "device",
        hsaKmtGetAMDGPUDeviceHandle(node, &mut h),
        "live out-pointer"
    );
    h
}

fn import_desc(
    dev: *mut c_void,
    ty: HsaExternalHandleType,
    fd: i32,
    md: u32,
) -> HsaHandleImportDesc {
    HsaHandleImportDesc {
        device_handle: dev,
        r#type: ty,
        handle: HsaHandleImportDescHandle {
            dmabuf_fd: i64::from(fd),
        },
        mem: null_mut(),
        metadata: md,
    }
}

/// `hsaKmtHandleImport`; returns the status and result.
fn import<A: Abi>(
    cx: &mut Cx<A>,
    label: &str,
    desc: &HsaHandleImportDesc,
    flags: u32,
) -> (u32, HsaHandleImportResult) {
    let mut res = HsaHandleImportResult::default();
    let mut fl = HsaHandleImportFlags(flags);
    let s = kmt!(
        cx,
        label,
        hsaKmtHandleImport(
            (desc as *const HsaHandleImportDesc).cast(),
            (&mut res as *mut HsaHandleImportResult).cast(),
            (&mut fl as *mut HsaHandleImportFlags).cast()
        ),
        "live descriptor, result and flags"
    );
    (s, res)
}

/// Registers the scenarios of this family.
#[rustfmt::skip]
pub(super) fn register<A: Abi>(t: &mut Table<A>) {
    t.add(Since(Rocm62), "dmabuf/export", export);
    t.add(Since(Rocm62), "dmabuf/export-null-outputs", export_null_outputs);
    t.add(Since(Newest), "dmabuf/drm-handles", drm_handles);
    t.add(Since(Newest), "dmabuf/drm-handles-bad-input", drm_handles_bad_input);
}

fn export<A: Abi>(cx: &mut Cx<A>) {
    let Some(t) = setup(cx) else { return };
    if let Some(p) = alloc(cx, "alloc", t.gpu(), 0x4000, 0) {
        let mut fd = -1i32;
        let mut off = u64::MAX;
        if kmt!(
            cx,
            "export",
            hsaKmtExportDMABufHandle(p, 0x4000, &mut fd, &mut off),
            "allocation; live outs"
        ) == 0
        {
            cx.rec("export.fd-valid", fd >= 0);
            cx.rec("export.offset", off);
            if fd >= 0 {
                // SAFETY: the fd was just returned to us and is
                // closed once.
                unsafe { libc::close(fd) };
            }
        }
        kmt!(
            cx,
            "export-past-end",
            hsaKmtExportDMABufHandle(p, 0x8000, &mut fd, &mut off),
            "range past the allocation"
        );
        free(cx, "free", p, 0x4000);
    }
    let buf = HostBuf::new(0x1000);
    let mut fd = -1i32;
    let mut off = 0u64;
    kmt!(
        cx,
        "export-unknown",
        hsaKmtExportDMABufHandle(buf.ptr(), 0x1000, &mut fd, &mut off),
        "address unknown to the thunk"
    );
    teardown(cx);
}

fn export_null_outputs<A: Abi>(cx: &mut Cx<A>) {
    let Some(t) = setup(cx) else { return };
    if let Some(p) = super::alloc(cx, "alloc", t.gpu(), 0x4000, mf::NON_PAGED) {
        let mut off = 0u64;
        kmt!(
            cx,
            "null-fd",
            hsaKmtExportDMABufHandle(p, 0x4000, null_mut(), &mut off),
            "deliberate NULL descriptor out-pointer"
        );
        free(cx, "free", p, 0x4000);
    }
    teardown(cx);
}

fn drm_handles<A: Abi>(cx: &mut Cx<A>) {
    if !require(
        cx,
        &[
            "hsaKmtHandleImport",
            "hsaKmtHandleExport",
            "hsaKmtMemoryCpuMap",
            "hsaKmtMemoryGetCpuAddr",
            "hsaKmtMemoryVaMap",
            "hsaKmtMemoryVaUnmap",
            "hsaKmtMemHandleFree",
            "hsaKmtMemHandleFreePreserveMetadata",
        ],
    ) {
        return;
    }
    let Some(t) = setup(cx) else { return };
    let g = t.gpu();
    let pattern = b"through the DRM handle layer";
    let Some((p, fd)) = exported(cx, 0x4000, pattern) else {
        teardown(cx);
        return;
    };
    let dev = device(cx, g);
    let desc = import_desc(
        dev,
        HsaExternalHandleType::HSA_EXTERNAL_HANDLE_DMA_BUF,
        fd,
        0,
    );
    let (s, res) = import(cx, "import", &desc, 0);
    let h = res.buf_handle;
    cx.check(
        "import.result",
        s == 0 && !h.is_null() && { res.alloc_size } == 0x4000 && { res.dmabuf_fd } == fd,
        format!("status {s}, size {:#x}", { res.alloc_size }),
    );
    let (s2, res2) = import(cx, "import-again", &desc, 0);
    cx.check(
        "import-again.same-handle",
        s2 == 0 && res2.buf_handle == h,
        format!("status {s2}"),
    );
    let mut cpu: *mut c_void = null_mut();
    let s = kmt!(
        cx,
        "cpu-map",
        hsaKmtMemoryCpuMap(h.cast(), &mut cpu),
        "imported handle; live out"
    );
    // SAFETY: on success `cpu` maps the whole 16 KiB buffer.
    let seen =
        s == 0 && unsafe { std::slice::from_raw_parts(cpu.cast::<u8>(), pattern.len()) } == pattern;
    cx.check("cpu-map.reads-the-buffer", seen, format!("status {s}"));
    let mut off = 0u64;
    let s = kmt!(
        cx,
        "get-cpu-addr",
        hsaKmtMemoryGetCpuAddr(dev, h.cast(), &mut off),
        "device and imported handle; live out"
    );
    cx.check(
        "get-cpu-addr.offset",
        s == 0 && off % 4096 == 0 && off != 0,
        format!("status {s}, {off:#x}"),
    );
    let va = 0x7e00_0000_0000u64;
    let rw = HsaMemoryMapFlags::HSA_MEMORY_ACCESS_RW.0;
    let s = kmt!(
        cx,
        "va-map",
        hsaKmtMemoryVaMap(h.cast(), 0, 0x4000, va, rw, g),
        "imported handle"
    );
    cx.check("va-map.ok", s == 0, format!("status {s}"));
    let s = kmt!(
        cx,
        "va-map-overlap",
        hsaKmtMemoryVaMap(h.cast(), 0, 0x1000, va, rw, g),
        "mapped above"
    );
    cx.check("va-map-overlap.error", s == 1, format!("status {s}"));
    let s = kmt!(
        cx,
        "va-unmap",
        hsaKmtMemoryVaUnmap(h.cast(), 0, 0x4000, va, g),
        "mapped above"
    );
    cx.check("va-unmap.ok", s == 0, format!("status {s}"));
    let s = kmt!(
        cx,
        "va-unmap-again",
        hsaKmtMemoryVaUnmap(h.cast(), 0, 0x4000, va, g),
        "unmapped above"
    );
    cx.check("va-unmap-again.error", s == 1, format!("status {s}"));
    let s = kmt!(
        cx,
        "va-map-cpu-node",
        hsaKmtMemoryVaMap(h.cast(), 0, 0x4000, va, rw, 0),
        "node 0 is the CPU"
    );
    cx.check("va-map-cpu-node.5", s == 5, format!("status {s}"));
    // IPC metadata: the first importer with UpdateMetadata sets it,
    // later ones must name it.
    let ipc = 1;
    let update = 1 << 2;
    let set = import_desc(
        dev,
        HsaExternalHandleType::HSA_EXTERNAL_HANDLE_DMA_BUF,
        fd,
        0x1234,
    );
    let (s, _) = import(cx, "ipc-update", &set, ipc | update);
    cx.check("ipc-update.ok", s == 0, format!("status {s}"));
    let (s, _) = import(cx, "ipc-match", &set, ipc);
    cx.check("ipc-match.ok", s == 0, format!("status {s}"));
    let wrong = import_desc(
        dev,
        HsaExternalHandleType::HSA_EXTERNAL_HANDLE_DMA_BUF,
        fd,
        9,
    );
    let (s, r) = import(cx, "ipc-mismatch", &wrong, ipc);
    cx.check(
        "ipc-mismatch.3-with-metadata",
        s == 3 && { r.metadata } == 0x1234,
        format!("status {s}, metadata {:#x}", { r.metadata }),
    );
    let mut out = HsaMemoryExportResult { dmabuf_fd: -1 };
    let ed = HsaHandleExportDesc {
        device_handle: dev,
        r#type: HsaExternalHandleType::HSA_EXTERNAL_HANDLE_DMA_BUF,
        buf_handle: h,
        size: 0x4000,
    };
    let s = kmt!(
        cx,
        "export",
        hsaKmtHandleExport(
            (&ed as *const HsaHandleExportDesc).cast(),
            (&mut out as *mut HsaMemoryExportResult).cast(),
            null_mut()
        ),
        "live descriptor and result"
    );
    // SAFETY: the union holds a descriptor for DMA_BUF.
    let efd = unsafe { out.dmabuf_fd };
    cx.check("export.fd", s == 0 && efd >= 0, format!("status {s}"));
    close(efd);
    // Four references (import, import-again, ipc-update, ipc-match).
    for i in 0..3 {
        let s = kmt!(
            cx,
            &format!("free-preserve{i}"),
            hsaKmtMemHandleFreePreserveMetadata(h.cast()),
            "live handle"
        );
        cx.check(
            &format!("free-preserve{i}.ok"),
            s == 0,
            format!("status {s}"),
        );
    }
    let s = kmt!(cx, "free", hsaKmtMemHandleFree(h.cast()), "last reference");
    cx.check("free.ok", s == 0, format!("status {s}"));
    let s = kmt!(
        cx,
        "free-again",
        hsaKmtMemHandleFree(h.cast()),
        "freed above"
    );
    cx.check("free-again.4", s == 4, format!("status {s}"));
    close(fd);
    free(cx, "gtt.free", p, 0x4000);
    teardown(cx);
}

fn drm_handles_bad_input<A: Abi>(cx: &mut Cx<A>) {
    if !require(
        cx,
        &[
            "hsaKmtHandleImport",
            "hsaKmtMemoryCpuMap",
            "hsaKmtMemoryVaMap",
            "hsaKmtMemHandleFree",
            "hsaKmtMemoryGetCpuAddr",
        ],
    ) {
        return;
    }
    let Some(t) = setup(cx) else { return };
    let dev = device(cx, t.gpu());
    let buf = HostBuf::new(0x1000);
    let mut res = HsaHandleImportResult::default();
    let s = kmt!(
        cx,
        "import-null",
        hsaKmtHandleImport(
            null_mut(),
            (&mut res as *mut HsaHandleImportResult).cast(),
            null_mut()
        ),
        "deliberate NULL descriptor"
    );
    cx.check("import-null.4", s == 4, format!("status {s}"));
    for (label, d, want) in [
        (
            "import-kms",
            import_desc(dev, HsaExternalHandleType::HSA_EXTERNAL_HANDLE_KMS, 0, 0),
            11,
        ),
        (
            "import-fabric",
            import_desc(dev, HsaExternalHandleType::HSA_EXTERNAL_HANDLE_FABRIC, 0, 0),
            11,
        ),
        (
            "import-null-device",
            import_desc(
                null_mut(),
                HsaExternalHandleType::HSA_EXTERNAL_HANDLE_DMA_BUF,
                0,
                0,
            ),
            4,
        ),
        (
            "import-unknown-device",
            import_desc(
                buf.ptr(),
                HsaExternalHandleType::HSA_EXTERNAL_HANDLE_DMA_BUF,
                0,
                0,
            ),
            4,
        ),
        (
            "import-bad-fd",
            import_desc(
                dev,
                HsaExternalHandleType::HSA_EXTERNAL_HANDLE_DMA_BUF,
                -1,
                0,
            ),
            1,
        ),
    ] {
        let (s, _) = import(cx, label, &d, 0);
        cx.check(&format!("{label}.{want}"), s == want, format!("status {s}"));
    }
    let mut cpu: *mut c_void = null_mut();
    let s = kmt!(
        cx,
        "cpu-map-unknown",
        hsaKmtMemoryCpuMap(buf.ptr(), &mut cpu),
        "not a buffer handle"
    );
    cx.check("cpu-map-unknown.4", s == 4, format!("status {s}"));
    let s = kmt!(
        cx,
        "va-map-null",
        hsaKmtMemoryVaMap(null_mut(), 0, 0x1000, 0x1000, 3, t.gpu()),
        "deliberate NULL handle"
    );
    cx.check("va-map-null.1", s == 1, format!("status {s}"));
    let s = kmt!(
        cx,
        "free-unknown",
        hsaKmtMemHandleFree(buf.ptr()),
        "not a buffer handle"
    );
    cx.check("free-unknown.4", s == 4, format!("status {s}"));
    let mut off = 0u64;
    let s = kmt!(
        cx,
        "get-cpu-addr-unknown-device",
        hsaKmtMemoryGetCpuAddr(buf.ptr(), buf.ptr(), &mut off),
        "not a device handle"
    );
    cx.check(
        "get-cpu-addr-unknown-device.1",
        s == 1,
        format!("status {s}"),
    );
    teardown(cx);
}
