//! `register`: userptr registration (RegisterMemory, ...ToNodes,
//! ...WithFlags) and deregistration.

use std::ptr::null_mut;

use super::Applies::Since;
use super::{pointer_info, setup, teardown, Table};
use crate::abi::AbiKind::Rocm52;
use crate::abi::{memflag as mf, Abi};
use crate::cx::{Cx, HostBuf};
use crate::kmt;

/// Registers the scenarios of this family.
#[rustfmt::skip]
pub(super) fn register<A: Abi>(t: &mut Table<A>) {
    t.add(Since(Rocm52), "register/memory", memory);
    t.add(Since(Rocm52), "register/to-nodes", to_nodes);
    for (name, flags) in [
        ("register/with-flags-host", mf::HOST_ACCESS),
        (
            "register/with-flags-host+coarse",
            mf::HOST_ACCESS | mf::COARSE_GRAIN,
        ),
        ("register/with-flags-none", 0),
        (
            "register/with-flags-nonpaged",
            mf::HOST_ACCESS | mf::NON_PAGED,
        ),
    ] {
        t.add(Since(Rocm52), name, move |cx| with_flags(cx, flags));
    }
    t.add(Since(Rocm52), "register/bad-input", bad_input);
}

/// RegisterMemoryWithFlags of a 64 KiB buffer with `flags`, its pointer
/// info, deregistration.
fn with_flags<A: Abi>(cx: &mut Cx<A>, flags: u32) {
    let Some(_t) = setup(cx) else { return };
    let buf = HostBuf::new(0x10000);
    cx.note_alloc(buf.ptr() as usize, 0x10000);
    if kmt!(
        cx,
        "register",
        hsaKmtRegisterMemoryWithFlags(buf.ptr(), 0x10000, A::mem_flags(flags)),
        "live page-aligned buffer"
    ) == 0
    {
        pointer_info(cx, "info", buf.ptr());
        kmt!(
            cx,
            "deregister",
            hsaKmtDeregisterMemory(buf.ptr()),
            "registered above"
        );
    }
    teardown(cx);
}

fn memory<A: Abi>(cx: &mut Cx<A>) {
    let Some(_t) = setup(cx) else { return };
    let buf = HostBuf::new(0x10000);
    cx.note_alloc(buf.ptr() as usize, 0x10000);
    if kmt!(
        cx,
        "register",
        hsaKmtRegisterMemory(buf.ptr(), 0x10000),
        "live page-aligned 64 KiB buffer"
    ) == 0
    {
        pointer_info(cx, "info", buf.ptr());
        let mut va = 0u64;
        if kmt!(
            cx,
            "map",
            hsaKmtMapMemoryToGPU(buf.ptr(), 0x10000, &mut va),
            "registered buffer"
        ) == 0
        {
            cx.rec("map.va", cx.rel(va as usize));
            pointer_info(cx, "info-mapped", buf.ptr());
            kmt!(
                cx,
                "unmap",
                hsaKmtUnmapMemoryToGPU(buf.ptr()),
                "mapped above"
            );
        }
        kmt!(
            cx,
            "register-twice",
            hsaKmtRegisterMemory(buf.ptr(), 0x10000),
            "already registered"
        );
        kmt!(
            cx,
            "deregister",
            hsaKmtDeregisterMemory(buf.ptr()),
            "registered above"
        );
        kmt!(
            cx,
            "deregister-again",
            hsaKmtDeregisterMemory(buf.ptr()),
            "no longer registered"
        );
    }
    teardown(cx);
}

fn to_nodes<A: Abi>(cx: &mut Cx<A>) {
    let Some(t) = setup(cx) else { return };
    let buf = HostBuf::new(0x10000);
    cx.note_alloc(buf.ptr() as usize, 0x10000);
    let mut nodes = t.gpus.clone();
    if kmt!(
        cx,
        "register",
        hsaKmtRegisterMemoryToNodes(buf.ptr(), 0x10000, nodes.len() as u64, nodes.as_mut_ptr()),
        "live buffer; node array of the given length"
    ) == 0
    {
        pointer_info(cx, "info", buf.ptr());
        let mut va = 0u64;
        let mut one = [t.gpu()];
        kmt!(
            cx,
            "map-nodes",
            hsaKmtMapMemoryToGPUNodes(
                buf.ptr(),
                0x10000,
                &mut va,
                A::map_flags(0),
                1,
                one.as_mut_ptr()
            ),
            "registered buffer; node array of 1"
        );
        kmt!(
            cx,
            "unmap",
            hsaKmtUnmapMemoryToGPU(buf.ptr()),
            "mapped above"
        );
        kmt!(
            cx,
            "deregister",
            hsaKmtDeregisterMemory(buf.ptr()),
            "registered above"
        );
    }
    let mut bad = [t.nodes + 1];
    kmt!(
        cx,
        "unknown-node",
        hsaKmtRegisterMemoryToNodes(buf.ptr(), 0x10000, 1, bad.as_mut_ptr()),
        "node array with an unknown node"
    );
    kmt!(
        cx,
        "zero-nodes",
        hsaKmtRegisterMemoryToNodes(buf.ptr(), 0x10000, 0, nodes.as_mut_ptr()),
        "count 0"
    );
    kmt!(
        cx,
        "null-array",
        hsaKmtRegisterMemoryToNodes(buf.ptr(), 0x10000, 1, null_mut()),
        "deliberate NULL array"
    );
    teardown(cx);
}

fn bad_input<A: Abi>(cx: &mut Cx<A>) {
    let Some(_t) = setup(cx) else { return };
    let buf = HostBuf::new(0x10000);
    kmt!(
        cx,
        "null",
        hsaKmtRegisterMemory(null_mut(), 0x1000),
        "deliberate NULL"
    );
    kmt!(
        cx,
        "size-zero",
        hsaKmtRegisterMemory(buf.ptr(), 0),
        "size 0"
    );
    let s = kmt!(
        cx,
        "unaligned",
        hsaKmtRegisterMemory(buf.ptr().wrapping_byte_add(8), 0x1000),
        "unaligned start inside a live buffer"
    );
    if s == 0 {
        kmt!(
            cx,
            "unaligned.deregister",
            hsaKmtDeregisterMemory(buf.ptr().wrapping_byte_add(8)),
            "registered above"
        );
    }
    kmt!(
        cx,
        "deregister-unknown",
        hsaKmtDeregisterMemory(buf.ptr()),
        "never registered"
    );
    kmt!(
        cx,
        "deregister-null",
        hsaKmtDeregisterMemory(null_mut()),
        "deliberate NULL"
    );
    teardown(cx);
}
