//! `topology`: system properties and every node's properties, memory
//! banks, caches and IO links, field by field; bad inputs.

use std::ptr::null_mut;

use hsakmt_sys::common::{HsaMemoryProperties, HsaSystemProperties};

use super::Applies::Since;
use super::{setup, teardown, Table};
use crate::abi::Abi;
use crate::abi::AbiKind::Rocm52;
use crate::cx::Cx;
use crate::kmt;

/// Registers the scenarios of this family.
#[rustfmt::skip]
pub(super) fn register<A: Abi>(t: &mut Table<A>) {
    t.add(Since(Rocm52), "topology/system", system);
    t.add(Since(Rocm52), "topology/node-properties", node_properties);
    t.add(Since(Rocm52), "topology/memory-properties", memory_properties);
    t.add(Since(Rocm52), "topology/cache-properties", cache_properties);
    t.add(Since(Rocm52), "topology/iolink-properties", iolink_properties);
    t.add(Since(Rocm52), "topology/partial-arrays", partial_arrays);
    t.add(Since(Rocm52), "topology/bad-input", bad_input);
    t.add(Since(Rocm52), "topology/release", release);
}

fn system<A: Abi>(cx: &mut Cx<A>) {
    if kmt!(cx, "open", hsaKmtOpenKFD(), "no arguments") != 0 {
        return;
    }
    let mut sp = HsaSystemProperties::default();
    if kmt!(
        cx,
        "acquire",
        hsaKmtAcquireSystemProperties(&mut sp),
        "live struct"
    ) == 0
    {
        cx.fields("system", &sp, &[]);
    }
    let mut sp2 = HsaSystemProperties::default();
    kmt!(
        cx,
        "acquire-again",
        hsaKmtAcquireSystemProperties(&mut sp2),
        "live struct"
    );
    cx.rec("acquire-again.same", format!("{:?}", sp == sp2));
    teardown(cx);
}

fn node_properties<A: Abi>(cx: &mut Cx<A>) {
    let Some(t) = setup(cx) else { return };
    for n in 0..t.nodes {
        let mut np = A::NodeProperties::default();
        if kmt!(
            cx,
            "node",
            hsaKmtGetNodeProperties(n, &mut np),
            "live struct of this generation"
        ) == 0
        {
            cx.fields(&format!("node{n}"), &np, &[]);
        }
    }
    teardown(cx);
}

fn memory_properties<A: Abi>(cx: &mut Cx<A>) {
    let Some(t) = setup(cx) else { return };
    for n in 0..t.nodes {
        let banks = t.counts[n as usize].banks;
        let mut mp = vec![HsaMemoryProperties::default(); banks.max(1) as usize];
        if kmt!(
            cx,
            "memory",
            hsaKmtGetNodeMemoryProperties(n, banks, mp.as_mut_ptr()),
            "array of max(banks,1) entries"
        ) == 0
        {
            for (i, m) in mp.iter().take(banks as usize).enumerate() {
                // The MMIO-remap heap's base is a CPU mapping made by
                // the thunk: compare it by relation.
                let ov = if m.HeapType.0 == 7 {
                    vec![("VirtualBaseAddress", cx.rel(m.VirtualBaseAddress as usize))]
                } else {
                    Vec::new()
                };
                cx.fields(&format!("node{n}.bank{i}"), m, &ov);
            }
        }
    }
    teardown(cx);
}

fn cache_properties<A: Abi>(cx: &mut Cx<A>) {
    let Some(t) = setup(cx) else { return };
    for n in 0..t.nodes {
        let c = t.counts[n as usize];
        let proc_id = if c.cpus > 0 {
            c.ccompute_id_lo
        } else {
            c.fcompute_id_lo
        };
        let mut cp = vec![A::CacheProperties::default(); c.caches.max(1) as usize];
        if kmt!(
            cx,
            "caches",
            hsaKmtGetNodeCacheProperties(n, proc_id, c.caches, cp.as_mut_ptr()),
            "array of max(caches,1) entries of this generation"
        ) == 0
        {
            for (i, e) in cp.iter().take(c.caches as usize).enumerate() {
                cx.fields(&format!("node{n}.cache{i}"), e, &[]);
            }
        }
    }
    teardown(cx);
}

fn iolink_properties<A: Abi>(cx: &mut Cx<A>) {
    let Some(t) = setup(cx) else { return };
    for n in 0..t.nodes {
        let links = t.counts[n as usize].links;
        let mut lp = vec![A::IoLinkProperties::default(); links.max(1) as usize];
        if kmt!(
            cx,
            "links",
            hsaKmtGetNodeIoLinkProperties(n, links, lp.as_mut_ptr()),
            "array of max(links,1) entries of this generation"
        ) == 0
        {
            for (i, e) in lp.iter().take(links as usize).enumerate() {
                cx.fields(&format!("node{n}.link{i}"), e, &[]);
            }
        }
    }
    teardown(cx);
}

fn partial_arrays<A: Abi>(cx: &mut Cx<A>) {
    let Some(t) = setup(cx) else { return };
    let g = t.gpu();
    let c = t.counts.get(g as usize).copied().unwrap_or_default();
    let mut mp = [HsaMemoryProperties::default(); 1];
    kmt!(
        cx,
        "memory-1",
        hsaKmtGetNodeMemoryProperties(g, 1, mp.as_mut_ptr()),
        "array of 1"
    );
    cx.fields("memory-1", &mp[0], &[]);
    kmt!(
        cx,
        "memory-0",
        hsaKmtGetNodeMemoryProperties(g, 0, mp.as_mut_ptr()),
        "array of 1, 0 requested"
    );
    let mut cp = [A::CacheProperties::default(); 1];
    kmt!(
        cx,
        "caches-1",
        hsaKmtGetNodeCacheProperties(g, c.fcompute_id_lo, 1, cp.as_mut_ptr()),
        "array of 1"
    );
    let mut lp = [A::IoLinkProperties::default(); 1];
    kmt!(
        cx,
        "links-1",
        hsaKmtGetNodeIoLinkProperties(g, 1, lp.as_mut_ptr()),
        "array of 1"
    );
    teardown(cx);
}

fn bad_input<A: Abi>(cx: &mut Cx<A>) {
    let Some(t) = setup(cx) else { return };
    let bad = t.nodes;
    let g = t.gpu();
    let c = t.counts.get(g as usize).copied().unwrap_or_default();
    let mut np = A::NodeProperties::default();
    kmt!(
        cx,
        "node-unknown",
        hsaKmtGetNodeProperties(bad, &mut np),
        "live struct; node out of range"
    );
    kmt!(
        cx,
        "node-invalid-id",
        hsaKmtGetNodeProperties(u32::MAX, &mut np),
        "live struct; node out of range"
    );
    kmt!(
        cx,
        "node-null",
        hsaKmtGetNodeProperties(0, null_mut()),
        "deliberate NULL"
    );
    let mut mp = vec![HsaMemoryProperties::default(); 8];
    kmt!(
        cx,
        "memory-unknown",
        hsaKmtGetNodeMemoryProperties(bad, 1, mp.as_mut_ptr()),
        "array of 8; node out of range"
    );
    kmt!(
        cx,
        "memory-null",
        hsaKmtGetNodeMemoryProperties(0, 1, null_mut()),
        "deliberate NULL"
    );
    let mut cp = vec![A::CacheProperties::default(); c.caches as usize + 2];
    kmt!(
        cx,
        "caches-too-many",
        hsaKmtGetNodeCacheProperties(g, c.fcompute_id_lo, c.caches + 1, cp.as_mut_ptr()),
        "array of caches+2 entries"
    );
    kmt!(
        cx,
        "caches-unknown",
        hsaKmtGetNodeCacheProperties(bad, 0, 1, cp.as_mut_ptr()),
        "array of caches+2 entries; node out of range"
    );
    kmt!(
        cx,
        "caches-null",
        hsaKmtGetNodeCacheProperties(g, 0, 1, null_mut()),
        "deliberate NULL"
    );
    let mut lp = vec![A::IoLinkProperties::default(); c.links as usize + 2];
    kmt!(
        cx,
        "links-too-many",
        hsaKmtGetNodeIoLinkProperties(g, c.links + 1, lp.as_mut_ptr()),
        "array of links+2 entries"
    );
    kmt!(
        cx,
        "links-unknown",
        hsaKmtGetNodeIoLinkProperties(bad, 1, lp.as_mut_ptr()),
        "array of links+2 entries; node out of range"
    );
    kmt!(
        cx,
        "links-null",
        hsaKmtGetNodeIoLinkProperties(g, 1, null_mut()),
        "deliberate NULL"
    );
    kmt!(
        cx,
        "acquire-null",
        hsaKmtAcquireSystemProperties(null_mut()),
        "deliberate NULL"
    );
    teardown(cx);
}

fn release<A: Abi>(cx: &mut Cx<A>) {
    let Some(_t) = setup(cx) else { return };
    kmt!(cx, "release", hsaKmtReleaseSystemProperties(), "none");
    let mut np = A::NodeProperties::default();
    kmt!(
        cx,
        "node-after-release",
        hsaKmtGetNodeProperties(0, &mut np),
        "live struct"
    );
    kmt!(cx, "release-again", hsaKmtReleaseSystemProperties(), "none");
    let mut sp = HsaSystemProperties::default();
    kmt!(
        cx,
        "reacquire",
        hsaKmtAcquireSystemProperties(&mut sp),
        "live struct"
    );
    cx.rec("reacquire.nodes", sp.NumNodes);
    teardown(cx);
}
