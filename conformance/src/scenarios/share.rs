//! `share`: IPC handles (ShareMemory, RegisterSharedHandle...) and
//! graphics handles (RegisterGraphicsHandleToNodes, its newest `Ext`
//! form, MapGraphicHandle).

use std::ffi::c_void;
use std::ptr::null_mut;

use hsakmt_sys::common::HsaSharedMemoryHandle;

use super::dmabuf::exported;
use super::Applies::Since;
use super::{alloc, close, cnull, free, pointer_info, require, setup, teardown, Table};
use crate::abi::AbiKind::{Newest, Rocm52};
use crate::abi::{memflag as mf, Abi};
use crate::cx::{Cx, HostBuf};
use crate::kmt;

/// Registers the scenarios of this family.
#[rustfmt::skip]
pub(super) fn register<A: Abi>(t: &mut Table<A>) {
    for (name, vram) in [("share/ipc-sys", false), ("share/ipc-vram", true)] {
        t.add(Since(Rocm52), name, move |cx| ipc(cx, vram));
    }
    t.add(Since(Rocm52), "share/bad-input", bad_input);
    t.add(Since(Rocm52), "share/graphics", graphics);
    t.add(Since(Newest), "share/graphics-ext", graphics_ext);
}

/// IPC sharing of a 16 KiB allocation (VRAM or host-accessible system
/// memory): share, import, import to nodes, and what each import maps.
fn ipc<A: Abi>(cx: &mut Cx<A>, vram: bool) {
    let Some(t) = setup(cx) else { return };
    let (node, flags) = if vram {
        (t.gpu(), 0)
    } else {
        (0, mf::HOST_ACCESS)
    };
    let Some(p) = alloc(cx, "alloc", node, 0x4000, flags) else {
        teardown(cx);
        return;
    };
    let mut h: HsaSharedMemoryHandle = [0; 8];
    if kmt!(
        cx,
        "share",
        hsaKmtShareMemory(p, 0x4000, &mut h),
        "allocation; live handle"
    ) == 0
    {
        cx.rec("share.handle-nonzero", h.iter().any(|w| *w != 0));
        let mut p2: *mut c_void = null_mut();
        let mut size = 0u64;
        if kmt!(
            cx,
            "import",
            hsaKmtRegisterSharedHandle(&h, &mut p2, &mut size),
            "handle from ShareMemory; live outs"
        ) == 0
        {
            cx.rec(
                "import.ptr",
                if p2 == p {
                    "=original".into()
                } else {
                    cx.rel(p2 as usize)
                },
            );
            cx.rec("import.size", size);
            cx.note_alloc(p2 as usize, size);
            pointer_info(cx, "import.info", p2);
            let mut va = 0u64;
            kmt!(
                cx,
                "import.map",
                hsaKmtMapMemoryToGPU(p2, size, &mut va),
                "imported range"
            );
            kmt!(
                cx,
                "import.unmap",
                hsaKmtUnmapMemoryToGPU(p2),
                "mapped above"
            );
            kmt!(
                cx,
                "import.deregister",
                hsaKmtDeregisterMemory(p2),
                "imported above"
            );
        }
        let mut one = [t.gpu()];
        let mut p3: *mut c_void = null_mut();
        if kmt!(
            cx,
            "import-nodes",
            hsaKmtRegisterSharedHandleToNodes(&h, &mut p3, &mut size, 1, one.as_mut_ptr()),
            "handle; live outs; node array of 1"
        ) == 0
        {
            cx.note_alloc(p3 as usize, size);
            pointer_info(cx, "import-nodes.info", p3);
            kmt!(
                cx,
                "import-nodes.deregister",
                hsaKmtDeregisterMemory(p3),
                "imported above"
            );
        }
    }
    free(cx, "free", p, 0x4000);
    teardown(cx);
}

fn bad_input<A: Abi>(cx: &mut Cx<A>) {
    let Some(_t) = setup(cx) else { return };
    let buf = HostBuf::new(0x1000);
    let mut h: HsaSharedMemoryHandle = [0; 8];
    kmt!(
        cx,
        "share-unknown",
        hsaKmtShareMemory(buf.ptr(), 0x1000, &mut h),
        "address unknown to the thunk"
    );
    if let Some(p) = alloc(cx, "alloc", 0, 0x1000, mf::HOST_ACCESS) {
        kmt!(
            cx,
            "share-null-handle",
            hsaKmtShareMemory(p, 0x1000, null_mut()),
            "deliberate NULL"
        );
        free(cx, "free", p, 0x1000);
    }
    let mut p2: *mut c_void = null_mut();
    let mut size = 0u64;
    kmt!(
        cx,
        "import-null",
        hsaKmtRegisterSharedHandle(cnull(), &mut p2, &mut size),
        "deliberate NULL handle"
    );
    let garbage: HsaSharedMemoryHandle = [0xdead_beef; 8];
    kmt!(
        cx,
        "import-garbage",
        hsaKmtRegisterSharedHandle(&garbage, &mut p2, &mut size),
        "handle not produced by ShareMemory"
    );
    teardown(cx);
}

fn graphics<A: Abi>(cx: &mut Cx<A>) {
    let Some(t) = setup(cx) else { return };
    let mut gi = A::GraphicsResourceInfo::default();
    let mut one = [t.gpu()];
    kmt!(
        cx,
        "register-bad-fd",
        hsaKmtRegisterGraphicsHandleToNodes(u32::MAX as u64, &mut gi, 1, one.as_mut_ptr()),
        "invalid fd; live info and node array"
    );
    let mut va = 0u64;
    kmt!(
        cx,
        "map-graphic",
        hsaKmtMapGraphicHandle(t.gpu(), 0, 0, 0, 0x1000, &mut va),
        "live out"
    );
    kmt!(
        cx,
        "unmap-graphic-unknown",
        hsaKmtUnmapGraphicHandle(t.gpu(), 0x1000_0000, 0x1000),
        "address never mapped"
    );
    teardown(cx);
}

fn graphics_ext<A: Abi>(cx: &mut Cx<A>) {
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
}
