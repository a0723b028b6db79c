//! `clocks`: GetClockCounters plausibility, and the newest library's
//! precise clocks.

use std::ptr::null_mut;

use hsakmt_sys::common::HsaClockCounters;

use super::Applies::Since;
use super::{require, setup, teardown, Table};
use crate::abi::Abi;
use crate::abi::AbiKind::{Newest, Rocm52};
use crate::cx::Cx;
use crate::kmt;

/// Registers the scenarios of this family.
#[rustfmt::skip]
pub(super) fn register<A: Abi>(t: &mut Table<A>) {
    t.add(Since(Rocm52), "clocks/plausible", plausible);
    t.add(Since(Newest), "clocks/precise", precise);
}

fn plausible<A: Abi>(cx: &mut Cx<A>) {
    let Some(t) = setup(cx) else { return };
    for n in 0..t.nodes {
        let mut a = HsaClockCounters::default();
        let mut b = HsaClockCounters::default();
        let label = format!("node{n}");
        let s1 = kmt!(cx, &label, hsaKmtGetClockCounters(n, &mut a), "live struct");
        std::thread::sleep(std::time::Duration::from_millis(2));
        let s2 = kmt!(cx, &label, hsaKmtGetClockCounters(n, &mut b), "live struct");
        if s1 == 0 && s2 == 0 {
            let gpu = t.gpus.contains(&n);
            cx.rec(
                &format!("{label}.gpu-counter-nonzero"),
                !gpu || a.GPUClockCounter != 0,
            );
            cx.rec(
                &format!("{label}.cpu-counter-nonzero"),
                a.CPUClockCounter != 0,
            );
            cx.rec(
                &format!("{label}.system-counter-nonzero"),
                a.SystemClockCounter != 0,
            );
            cx.rec(
                &format!("{label}.frequency-nonzero"),
                a.SystemClockFrequencyHz != 0,
            );
            cx.rec(
                &format!("{label}.gpu-monotonic"),
                b.GPUClockCounter >= a.GPUClockCounter,
            );
            cx.rec(
                &format!("{label}.cpu-advances"),
                b.CPUClockCounter > a.CPUClockCounter,
            );
            cx.rec(
                &format!("{label}.system-advances"),
                b.SystemClockCounter > a.SystemClockCounter,
            );
            cx.rec(
                &format!("{label}.frequency-stable"),
                b.SystemClockFrequencyHz == a.SystemClockFrequencyHz,
            );
        }
    }
    let mut c = HsaClockCounters::default();
    kmt!(
        cx,
        "unknown-node",
        hsaKmtGetClockCounters(t.nodes, &mut c),
        "unknown node"
    );
    teardown(cx);
}

fn precise<A: Abi>(cx: &mut Cx<A>) {
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
}
