//! The `fuzz` family: one scenario per export of the generation
//! ([`crate::api::coverage_list`]), each [`crate::fuzz::calls`] calls
//! with generated arguments, every call in a forked child (see
//! [`crate::fuzz`]).

use crate::abi::Abi;
use crate::api::coverage_list;
use crate::fuzz::{call_in_child, calls};

use super::{add, Scenario};

/// Adds `fuzz/<export>` for every export of generation `A`.
pub(super) fn add_all<A: Abi>(v: &mut Vec<Scenario<A>>) {
    for f in coverage_list(A::KIND) {
        add(v, format!("fuzz/{f}"), move |cx| {
            cx.covers(f);
            for n in 0..calls() {
                let (args, outcome) = call_in_child(cx.api, f, n);
                cx.rec(&format!("a{n:02}"), args);
                cx.rec(&format!("c{n:02}"), outcome);
            }
        });
    }
}
