//! Link arguments for the LD_PRELOAD library.
//!
//! The interposers are Rust functions named `kfd_sim_<libc name>` in both
//! crate types. Only the cdylib gets the libc names: `--defsym=NAME=kfd_sim_NAME`
//! defines each alias, and an anonymous version script exports the aliases
//! unversioned (so glibc binds `open@GLIBC_2.2.5`, `stat@GLIBC_2.33`, ...
//! references to them). The rlib keeps only the prefixed names, so Rust
//! test binaries that link kfd-sim never shadow libc.

use std::env;
use std::fs;
use std::path::PathBuf;

fn main() {
    let list = "src/preload/interpose.list";
    println!("cargo:rerun-if-changed={list}");
    println!("cargo:rerun-if-changed=build.rs");
    let text = fs::read_to_string(list).expect("read interpose.list");
    let names: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    let out = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR"));
    let script = out.join("interpose.ver");
    let mut ver = String::from("{\n  global:\n");
    for name in &names {
        println!("cargo:rustc-cdylib-link-arg=-Wl,--defsym={name}=kfd_sim_{name}");
        ver.push_str(&format!("    {name};\n"));
    }
    ver.push_str("};\n");
    fs::write(&script, ver).expect("write interpose.ver");
    println!(
        "cargo:rustc-cdylib-link-arg=-Wl,--version-script={}",
        script.display()
    );
}
