//! Scenarios for the newest library's exports that had none (issue 13):
//! the DRM-handle layer, the device descriptor, the SIGBUS delay, the
//! persisting cache size, the precise clocks, ModelEnabled,
//! AisReadWriteFile, AllocMemoryHostGtt, CreateQueueExt,
//! RegisterGraphicsHandleToNodesExt, SMI event delivery, MapMemoryToGPUNodes
//! of a NoAddress allocation, and the Ctx forms on the primary context.
//!
//! Most of these are newer than any library a reference can be built
//! from (the 2026 upstream); every expectation is therefore also a
//! `check.*` record (the documented semantics, see the module docs of
//! hsakmt's `render.rs`), judged when the reference lacks the function.

use std::ffi::c_void;
use std::ptr::null_mut;

use hsakmt_sys::common::{HsaClockCounters, HSA_SVM_ATTRIBUTE};
use hsakmt_sys::newest::{
    HsaExternalHandleType, HsaHandleExportDesc, HsaHandleImportDesc, HsaHandleImportDescHandle,
    HsaHandleImportFlags, HsaHandleImportResult, HsaMemoryExportResult, HsaMemoryMapFlags,
};

use super::{add, alloc, free, queues, require, setup, teardown, Scenario};
use crate::abi::{memflag as mf, Abi, AbiKind};
use crate::api::CtxPtr;
use crate::cx::{AnonMap, Cx, HostBuf};
use crate::kmt;

/// `KFD_SMI_EVENT_MIGRATE_START` and `_END`.
const SMI_MIGRATE_START: u32 = 5;
const SMI_MIGRATE_END: u32 = 6;
/// `HSA_SVM_ATTR_PREFETCH_LOC`.
const SVM_PREFETCH_LOC: u32 = 1;
/// `HsaMemFlags::NoAddress`.
const NO_ADDRESS: u32 = 1 << 18;

/// Closes a descriptor a library handed out (ignored when negative).
fn close(fd: i32) {
    if fd >= 0 {
        // SAFETY: the descriptor was handed to us and is closed once.
        unsafe { libc::close(fd) };
    }
}

/// A GTT buffer of `size` bytes with `pattern` at its start, exported as
/// a dma-buf: `(address, descriptor)`.
fn exported<A: Abi>(cx: &mut Cx<A>, size: u64, pattern: &[u8]) -> Option<(*mut c_void, i32)> {
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
fn device<A: Abi>(cx: &mut Cx<A>, node: u32) -> *mut c_void {
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

fn drm_handles<A: Abi>(v: &mut Vec<Scenario<A>>) {
    add(v, "dmabuf/drm-handles", |cx| {
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
        let seen = s == 0
            && unsafe { std::slice::from_raw_parts(cpu.cast::<u8>(), pattern.len()) } == pattern;
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
    });
    add(v, "dmabuf/drm-handles-bad-input", |cx| {
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
    });
}

fn render_node<A: Abi>(v: &mut Vec<Scenario<A>>) {
    add(v, "misc/amdgpu-device-fd", |cx| {
        if !require(cx, &["hsaKmtGetAmdGPUDeviceFd"]) {
            return;
        }
        let Some(t) = setup(cx) else { return };
        let dev = device(cx, t.gpu());
        let mut fd = -1i32;
        let s = kmt!(
            cx,
            "fd",
            hsaKmtGetAmdGPUDeviceFd(dev, &mut fd),
            "device handle; live out"
        );
        // The context's own render node: a character device (not ours to close).
        // SAFETY: an all-zero stat is valid to be overwritten.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: fstat writes one stat into `st`.
        let chr = fd >= 0 && unsafe { libc::fstat(fd, &mut st) } == 0;
        cx.check(
            "fd.render-node",
            s == 0 && chr,
            format!("status {s}, fd {fd}"),
        );
        let buf = HostBuf::new(0x1000);
        let s = kmt!(
            cx,
            "fd-unknown",
            hsaKmtGetAmdGPUDeviceFd(buf.ptr(), &mut fd),
            "not a device handle"
        );
        cx.check("fd-unknown.4", s == 4, format!("status {s}"));
        let s = kmt!(
            cx,
            "fd-null",
            hsaKmtGetAmdGPUDeviceFd(dev, null_mut()),
            "deliberate NULL out"
        );
        cx.check("fd-null.3", s == 3, format!("status {s}"));
        teardown(cx);
    });
    add(v, "misc/sigbus-delay", |cx| {
        if !require(cx, &["hsaKmtSetSigbusDelay"]) {
            return;
        }
        let Some(t) = setup(cx) else { return };
        for (label, node, delay, want) in [
            ("gpu", t.gpu(), 250, 0),
            ("gpu-never", t.gpu(), u32::MAX, 0),
            ("cpu-node", 0, 250, 11),
            ("unknown-node", t.nodes, 250, 11),
        ] {
            let s = kmt!(cx, label, hsaKmtSetSigbusDelay(node, delay), "no pointers");
            cx.check(&format!("{label}.{want}"), s == want, format!("status {s}"));
        }
        teardown(cx);
    });
    add(v, "misc/persisting-cache-size", |cx| {
        if !require(cx, &["hsaKmtSetPersistingCacheSize"]) {
            return;
        }
        let Some(t) = setup(cx) else { return };
        for (label, node, size, want) in [
            ("gpu", t.gpu(), 1 << 20, 11),
            ("too-large", t.gpu(), 1u64 << 33, 3),
            ("cpu-node", 0, 1 << 20, 3),
            ("unknown-node", t.nodes, 1 << 20, 3),
        ] {
            let s = kmt!(
                cx,
                label,
                hsaKmtSetPersistingCacheSize(node, size),
                "no pointers"
            );
            cx.check(&format!("{label}.{want}"), s == want, format!("status {s}"));
        }
        teardown(cx);
    });
}

fn misc<A: Abi>(v: &mut Vec<Scenario<A>>) {
    add(v, "misc/model-enabled", |cx| {
        if !require(cx, &["hsaKmtModelEnabled"]) {
            return;
        }
        let mut on = true;
        let s = kmt!(cx, "closed", hsaKmtModelEnabled(&mut on), "live out");
        cx.rec("closed.enabled", on);
        let Some(_) = setup(cx) else { return };
        on = true;
        let s2 = kmt!(cx, "open", hsaKmtModelEnabled(&mut on), "live out");
        cx.rec("open.enabled", on);
        cx.check(
            "no-model",
            s == 0 && s2 == 0 && !on,
            format!("status {s}/{s2}"),
        );
        kmt!(
            cx,
            "null",
            hsaKmtModelEnabled(null_mut()),
            "deliberate NULL out"
        );
        teardown(cx);
    });
    add(v, "clocks/precise", |cx| {
        if !require(cx, &["hsaKmtGetClockCountersPrecise"]) {
            return;
        }
        let Some(t) = setup(cx) else { return };
        let mut c = HsaClockCounters::default();
        let s = kmt!(
            cx,
            "gpu",
            hsaKmtGetClockCountersPrecise(t.gpu(), &mut c),
            "live out"
        );
        cx.check(
            "gpu.counts",
            s == 0 && c.GPUClockCounter != 0 && c.SystemClockFrequencyHz != 0,
            format!("status {s}"),
        );
        let s = kmt!(
            cx,
            "cpu",
            hsaKmtGetClockCountersPrecise(0, &mut c),
            "live out"
        );
        cx.check("cpu.ok", s == 0, format!("status {s}"));
        let s = kmt!(
            cx,
            "unknown-node",
            hsaKmtGetClockCountersPrecise(t.nodes, &mut c),
            "live out"
        );
        cx.check("unknown-node.5", s == 5, format!("status {s}"));
        kmt!(
            cx,
            "null",
            hsaKmtGetClockCountersPrecise(t.gpu(), null_mut()),
            "deliberate NULL out"
        );
        teardown(cx);
    });
    add(v, "memory/ais-read-write-file", |cx| {
        if !require(cx, &["hsaKmtAisReadWriteFile"]) {
            return;
        }
        let Some(_) = setup(cx) else { return };
        let (mut copied, mut status) = (0u64, 0i32);
        let buf = HostBuf::new(0x1000);
        kmt!(
            cx,
            "read",
            hsaKmtAisReadWriteFile(buf.ptr(), 0x1000, 0, 0, 1, &mut copied, &mut status),
            "an address unknown to the thunk; stdin"
        );
        teardown(cx);
    });
    add(v, "memory/host-gtt", |cx| {
        if !require(cx, &["hsaKmtAllocMemoryHostGtt"]) {
            return;
        }
        let Some(t) = setup(cx) else { return };
        let mut p: *mut c_void = null_mut();
        let s = kmt!(
            cx,
            "alloc",
            hsaKmtAllocMemoryHostGtt(
                0,
                t.gpu(),
                0x4000,
                A::mem_flags(mf::HOST_ACCESS | mf::NON_PAGED),
                &mut p
            ),
            "live out-pointer"
        );
        if s == 0 {
            free(cx, "free", p, 0x4000);
        }
        teardown(cx);
    });
}

fn queues_and_graphics<A: Abi>(v: &mut Vec<Scenario<A>>) {
    add(v, "queues/create-ext", |cx| {
        if !require(cx, &["hsaKmtCreateQueueExt"]) {
            return;
        }
        queues::with_ring(cx, |cx, t, r| {
            let mut q = A::QueueResource::default();
            let s = kmt!(
                cx,
                "create-ext",
                hsaKmtCreateQueueExt(
                    t.gpu(),
                    queues::COMPUTE,
                    100,
                    0,
                    0,
                    r.ring,
                    queues::RING,
                    null_mut(),
                    &mut q
                ),
                "ring is a live GPU-mapped buffer of RING bytes; q a live QueueResource"
            );
            if s == 0 {
                let (id, ..) = A::queue_view(&q);
                queues::destroy(cx, "destroy", id);
            }
        });
    });
    add(v, "share/graphics-ext", |cx| {
        if !require(cx, &["hsaKmtRegisterGraphicsHandleToNodesExt"]) {
            return;
        }
        let Some(t) = setup(cx) else { return };
        let Some((p, fd)) = exported(cx, 0x4000, b"graphics") else {
            teardown(cx);
            return;
        };
        let mut gi = A::GraphicsResourceInfo::default();
        let mut one = [t.gpu()];
        let s = kmt!(
            cx,
            "register",
            hsaKmtRegisterGraphicsHandleToNodesExt(fd as u64, &mut gi, 1, one.as_mut_ptr(), 0),
            "dma-buf exported above; live info and node array"
        );
        if s == 0 {
            let addr = A::graphics_address(&gi);
            cx.rec("register.addr", cx.rel(addr as usize));
            kmt!(
                cx,
                "deregister",
                hsaKmtDeregisterMemory(addr as *mut c_void),
                "registered above"
            );
        }
        close(fd);
        free(cx, "gtt.free", p, 0x4000);
        teardown(cx);
    });
}

/// MapMemoryToGPUNodes of NoAddress VRAM (6.2.4 and newest).
fn no_address<A: Abi>(v: &mut Vec<Scenario<A>>) {
    add(v, "memory/map-nodes-no-address", |cx| {
        let Some(t) = setup(cx) else { return };
        let g = t.gpu();
        if let Some(p) = alloc(cx, "alloc", g, 0x4000, mf::NON_PAGED | NO_ADDRESS) {
            let mut va = 0u64;
            let mut one = [g];
            kmt!(
                cx,
                "map-nodes",
                hsaKmtMapMemoryToGPUNodes(p, 0x4000, &mut va, A::map_flags(0), 1, one.as_mut_ptr()),
                "a NoAddress allocation; live out and node array"
            );
            free(cx, "free", p, 0x4000);
        }
        teardown(cx);
    });
}

fn smi_delivery<A: Abi>(v: &mut Vec<Scenario<A>>) {
    add(v, "events/smi-delivery", |cx| {
        let Some(t) = setup(cx) else { return };
        let g = t.gpu();
        let mut fd = -1i32;
        if kmt!(cx, "open", hsaKmtOpenSMI(g, &mut fd), "live out word") != 0 {
            teardown(cx);
            return;
        }
        let read = |fd: i32| -> Result<String, i32> {
            let mut b = [0u8; 1024];
            // SAFETY: reads into `b` from the SMI descriptor.
            let n = unsafe { libc::read(fd, b.as_mut_ptr().cast(), b.len()) };
            if n < 0 {
                return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0));
            }
            Ok(String::from_utf8_lossy(&b[..n as usize]).into_owned())
        };
        cx.rec("empty-read", format!("{:?}", read(fd).map(|s| s.len())));
        let mask: u64 = (1 << (SMI_MIGRATE_START - 1)) | (1 << (SMI_MIGRATE_END - 1));
        // SAFETY: writes the 8-byte mask from a local.
        let w = unsafe { libc::write(fd, (&mask as *const u64).cast(), 8) };
        cx.rec("mask-written", w);
        let buf = HostBuf::new(0x4000);
        let mut a = [HSA_SVM_ATTRIBUTE {
            r#type: SVM_PREFETCH_LOC,
            value: g,
        }];
        kmt!(
            cx,
            "prefetch",
            hsaKmtSVMSetAttr(buf.ptr(), 0x4000, 1, a.as_mut_ptr()),
            "live page-aligned 16 KiB range; one attribute"
        );
        // Event numbers and shapes, not timestamps or pids.
        let lines = read(fd).unwrap_or_default();
        let events: Vec<String> = lines
            .lines()
            .map(|l| {
                // "<event> <ns> -<pid> @<start>(<pages>) <from>-><to> ...":
                // the event, the page count and the move.
                let mut w = l.split_whitespace();
                let ev = w.next().unwrap_or("");
                let pages = w.nth(2).and_then(|r| r.split('(').nth(1)).unwrap_or("");
                let moves = w.next().unwrap_or("");
                format!("{ev} ({pages} {moves}")
            })
            .collect();
        cx.rec("events", events.join(" | "));
        cx.check(
            "events.migrate-start-end",
            events.len() == 2 && events[0].starts_with("5 ") && events[1].starts_with("6 "),
            &lines,
        );
        close(fd);
        teardown(cx);
    });
}

/// OpenSMI on every GPU node (issue 27: a GPU node's request must carry
/// its gpu_id), each with an event actually read: a prefetch of fresh
/// anonymous memory to that GPU migrates it, and the kernel reports the
/// migration's start and end (`MIGRATE_START`, `MIGRATE_END`) to that
/// GPU's SMI clients of the process.
fn smi_every_gpu<A: Abi>(v: &mut Vec<Scenario<A>>) {
    add(v, "events/smi-every-gpu", |cx| {
        let Some(t) = setup(cx) else { return };
        cx.rec("gpus", t.gpus.len());
        for (i, &g) in t.gpus.iter().enumerate() {
            let mut fd = -1i32;
            let s = kmt!(
                cx,
                &format!("gpu{i}.open"),
                hsaKmtOpenSMI(g, &mut fd),
                "a GPU node; live out word"
            );
            cx.check(
                &format!("smi.gpu{i}.open"),
                s == 0 && fd >= 0,
                format!("status {s}"),
            );
            if s != 0 {
                continue;
            }
            let mask: u64 = (1 << (SMI_MIGRATE_START - 1)) | (1 << (SMI_MIGRATE_END - 1));
            // SAFETY: writes the 8-byte mask from a local to the SMI
            // descriptor the library handed out.
            let w = unsafe { libc::write(fd, (&mask as *const u64).cast(), 8) };
            cx.rec(&format!("gpu{i}.mask-written"), w);
            let m = AnonMap::new(0x4000);
            let mut a = [HSA_SVM_ATTRIBUTE {
                r#type: SVM_PREFETCH_LOC,
                value: g,
            }];
            kmt!(
                cx,
                &format!("gpu{i}.prefetch"),
                hsaKmtSVMSetAttr(m.ptr(), 0x4000, 1, a.as_mut_ptr()),
                "fresh page-aligned 16 KiB mapping; one attribute"
            );
            let mut b = [0u8; 1024];
            // SAFETY: reads into `b` from the SMI descriptor (non-blocking:
            // the events of the request above are already queued).
            let n = unsafe { libc::read(fd, b.as_mut_ptr().cast(), b.len()) };
            let text = String::from_utf8_lossy(&b[..n.max(0) as usize]).into_owned();
            // The event numbers and page counts, not times, pids or addresses.
            let events: Vec<String> = text
                .lines()
                .map(|l| {
                    let mut w = l.split_whitespace();
                    let ev = w.next().unwrap_or("");
                    let pages = w.nth(2).and_then(|r| r.split('(').nth(1)).unwrap_or("");
                    format!("{ev} ({pages}")
                })
                .collect();
            cx.rec(&format!("gpu{i}.events"), events.join(" | "));
            cx.check(
                &format!("smi.gpu{i}.event-read"),
                events.len() == 2 && events[0].starts_with("5 ") && events[1].starts_with("6 "),
                &text,
            );
            close(fd);
        }
        teardown(cx);
    });
}

/// The Ctx forms answer on the primary context what the legacy forms do.
fn ctx_forms<A: Abi>(v: &mut Vec<Scenario<A>>) {
    add(v, "misc/ctx-forms", |cx| {
        if !require(
            cx,
            &[
                "hsaKmtOpenKFDCtx",
                "hsaKmtCloseKFDCtx",
                "hsaKmtAvailableMemoryCtx",
                "hsaKmtGetAMDGPUDeviceHandleCtx",
                "hsaKmtGetRuntimeCapabilitiesCtx",
                "hsaKmtGetClockCountersPrecise",
                "hsaKmtGetClockCountersPreciseCtx",
                "hsaKmtSetPersistingCacheSize",
                "hsaKmtSetPersistingCacheSizeCtx",
                "hsaKmtOpenSMICtx",
            ],
        ) {
            return;
        }
        let Some(t) = setup(cx) else { return };
        let mut ctx: CtxPtr = null_mut();
        kmt!(
            cx,
            "open-ctx",
            hsaKmtOpenKFDCtx(&mut ctx),
            "live out-pointer"
        );
        let g = t.gpu();
        let pairs: [(&str, u32, u32); 5] = [
            {
                let (mut a, mut b) = (0u64, 0u64);
                let l = kmt!(
                    cx,
                    "available",
                    hsaKmtAvailableMemory(g, &mut a),
                    "live out"
                );
                let c = kmt!(
                    cx,
                    "available-ctx",
                    hsaKmtAvailableMemoryCtx(ctx, g, &mut b),
                    "live out"
                );
                ("available", l, c)
            },
            {
                let (mut a, mut b) = (null_mut(), null_mut());
                let l = kmt!(
                    cx,
                    "device",
                    hsaKmtGetAMDGPUDeviceHandle(g, &mut a),
                    "live out"
                );
                let c = kmt!(
                    cx,
                    "device-ctx",
                    hsaKmtGetAMDGPUDeviceHandleCtx(ctx, g, &mut b),
                    "live out"
                );
                cx.check("device-ctx.same-handle", a == b, "");
                ("device", l, c)
            },
            {
                let (mut a, mut b) = (0u32, 0u32);
                let l = kmt!(cx, "caps", hsaKmtGetRuntimeCapabilities(&mut a), "live out");
                let c = kmt!(
                    cx,
                    "caps-ctx",
                    hsaKmtGetRuntimeCapabilitiesCtx(ctx, &mut b),
                    "live out"
                );
                ("caps", l, c)
            },
            {
                let (mut a, mut b) = (HsaClockCounters::default(), HsaClockCounters::default());
                let l = kmt!(
                    cx,
                    "precise",
                    hsaKmtGetClockCountersPrecise(g, &mut a),
                    "live out"
                );
                let c = kmt!(
                    cx,
                    "precise-ctx",
                    hsaKmtGetClockCountersPreciseCtx(ctx, g, &mut b),
                    "live out"
                );
                ("precise", l, c)
            },
            {
                let l = kmt!(
                    cx,
                    "persisting",
                    hsaKmtSetPersistingCacheSize(g, 1 << 20),
                    "no pointers"
                );
                let c = kmt!(
                    cx,
                    "persisting-ctx",
                    hsaKmtSetPersistingCacheSizeCtx(ctx, g, 1 << 20),
                    "no pointers"
                );
                ("persisting", l, c)
            },
        ];
        for (name, l, c) in pairs {
            cx.check(
                &format!("{name}.ctx-equals-legacy"),
                l == c,
                format!("{l} vs {c}"),
            );
        }
        let (mut fd1, mut fd2) = (-1i32, -1i32);
        let l = kmt!(cx, "smi", hsaKmtOpenSMI(g, &mut fd1), "live out");
        let c = kmt!(
            cx,
            "smi-ctx",
            hsaKmtOpenSMICtx(ctx, g, &mut fd2),
            "live out"
        );
        cx.check("smi.ctx-equals-legacy", l == c, format!("{l} vs {c}"));
        close(fd1);
        close(fd2);
        kmt!(cx, "close-ctx", hsaKmtCloseKFDCtx(), "opened above");
        teardown(cx);
    });
}

pub(super) fn add_all<A: Abi>(v: &mut Vec<Scenario<A>>) {
    if A::KIND == AbiKind::Rocm52 {
        return;
    }
    smi_delivery(v);
    smi_every_gpu(v);
    no_address(v);
    if A::KIND != AbiKind::Newest {
        return;
    }
    queues_and_graphics(v);
    drm_handles(v);
    render_node(v);
    misc(v);
    ctx_forms(v);
}
