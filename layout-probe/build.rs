//! Hands the target triple to the probe, which asks the `cc` crate for
//! that target's C compiler at test time (outside a build script, `cc`
//! cannot read the triple from the environment).

fn main() {
    let target = std::env::var("TARGET").unwrap_or_default();
    println!("cargo:rustc-env=LAYOUT_PROBE_TARGET={target}");
}
