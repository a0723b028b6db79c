//! What differs between the hsakmt ABI generations: the size of every
//! struct whose layout changed, and how one `HsaMemFlags` word reads in
//! each generation (bits a generation does not know are `Reserved`).
//!
//! `cargo run -p hsakmt-sys --example generations [-- FLAGS]` (FLAGS: a
//! hex word, default 0x7c0041).

use core::mem::size_of;
use hsakmt_sys::{newest, rocm_5_2, rocm_6_2};

fn main() {
    let word = std::env::args()
        .nth(1)
        .map(|a| u32::from_str_radix(a.trim_start_matches("0x"), 16))
        .transpose()
        .unwrap_or_else(|e| {
            eprintln!("generations: FLAGS must be a hex word: {e}");
            std::process::exit(2)
        })
        .unwrap_or(0x7c_0041);

    println!(
        "{:<28} {:>9} {:>9} {:>9}",
        "struct", "rocm-5.2", "rocm-6.2", "newest"
    );
    macro_rules! row {
        ($t:ident) => {
            println!(
                "{:<28} {:>9} {:>9} {:>9}",
                stringify!($t),
                size_of::<rocm_5_2::$t>(),
                size_of::<rocm_6_2::$t>(),
                size_of::<newest::$t>()
            );
        };
    }
    row!(HsaNodeProperties);
    row!(HsaCacheProperties);
    row!(HsaIoLinkProperties);
    row!(HsaGraphicsResourceInfo);
    row!(HsaQueueInfo);
    row!(HsaQueueResource);
    row!(HsaEvent);

    println!("\nHsaMemFlags {word:#010x}:");
    println!("  rocm-5.2: {:?}", rocm_5_2::HsaMemFlags(word));
    println!("  rocm-6.2: {:?}", rocm_6_2::HsaMemFlags(word));
    println!("  newest:   {:?}", newest::HsaMemFlags(word));
}
