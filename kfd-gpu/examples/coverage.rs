//! Prints how many of each target's instructions (per encoding family, as
//! LLVM 19 lists them) the shader machine executes, and with `--missing`
//! the mnemonics it does not.

use kfd_gpu::shader::{coverage, Target};

fn main() {
    let missing = std::env::args().any(|a| a == "--missing");
    for t in [
        Target::Gfx900,
        Target::Gfx90a,
        Target::Gfx940,
        Target::Gfx1100,
    ] {
        let c = coverage(t);
        let (listed, executed) = c
            .iter()
            .fold((0, 0), |(l, e), c| (l + c.listed, e + c.executed));
        println!(
            "{}: {executed} of {listed} mnemonics executed",
            t.llvm_cpu()
        );
        for f in &c {
            println!(
                "  {:8} {:4} / {:4}{}",
                f.enc.name(),
                f.executed,
                f.listed,
                if missing && !f.missing.is_empty() {
                    format!("  missing: {}", f.missing.join(" "))
                } else {
                    String::new()
                }
            );
        }
    }
}
