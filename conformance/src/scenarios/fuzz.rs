//! The `fuzz` family: one scenario per export of the generation
//! ([`crate::api::coverage_list`]), each [`crate::fuzz::calls`] calls
//! with generated arguments, every call in a forked child (see
//! [`crate::fuzz`]).

use super::Applies::Only;
use super::Table;
use crate::abi::Abi;
use crate::api::coverage_list;
use crate::cx::Cx;
use crate::fuzz::{call_in_child, calls};

/// Registers `fuzz/<export>` for every export of generation `A` (from
/// the generation's own export list, so each applies to that generation
/// only).
#[rustfmt::skip]
pub(super) fn register<A: Abi>(t: &mut Table<A>) {
    for f in coverage_list(A::KIND) {
        t.add(Only(A::KIND), format!("fuzz/{f}"), move |cx| fuzz(cx, f));
    }
}

/// [`calls`] calls of export `f` with generated arguments, each in a
/// forked child; records each call's arguments and outcome.
fn fuzz<A: Abi>(cx: &mut Cx<A>, f: &'static str) {
    cx.covers(f);
    for n in 0..calls() {
        let (args, outcome) = call_in_child(cx.api, f, n);
        cx.rec(&format!("a{n:02}"), args);
        cx.rec(&format!("c{n:02}"), outcome);
    }
}
