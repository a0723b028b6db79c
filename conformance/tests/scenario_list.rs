//! The scenario list of every ABI generation is pinned.
//!
//! What a conformance run executes is, per family of
//! [`conformance::scenarios::FAMILIES`] and in that order, the family's
//! run settings and its scenario names in list order (the parent runs a
//! family's scenarios in one child in that order, or one child each when
//! the family is isolated). This test renders exactly that for each
//! generation and compares it with `tests/scenario-lists/<abi>.txt`, so a
//! reshaping of the scenario code cannot add, drop, rename or reorder a
//! scenario or change how a family runs unnoticed. Scenarios whose family
//! is not in `FAMILIES` (never run) are listed at the end.
//!
//! After a deliberate change, regenerate the files with
//! `KFD_PIN_SCENARIOS=write cargo test -p conformance --test scenario_list`
//! and review the diff.

use std::fmt::Write as _;
use std::path::PathBuf;

use conformance::abi::{Abi, Newest, Rocm52, Rocm62};
use conformance::scenarios::{all, family_of, FAMILIES};

/// The run-relevant rendering of generation `A`'s scenario table.
fn render<A: Abi>() -> String {
    let names: Vec<String> = all::<A>().into_iter().map(|s| s.name).collect();
    let mut out = String::new();
    for f in FAMILIES {
        writeln!(
            out,
            "# family {} all_presets={} isolated={} exit_check={} robustness={}",
            f.name, f.all_presets, f.isolated, f.exit_check, f.robustness
        )
        .unwrap();
        for n in names.iter().filter(|n| family_of(n) == f.name) {
            writeln!(out, "{n}").unwrap();
        }
    }
    out.push_str("# not in any family\n");
    for n in names
        .iter()
        .filter(|n| !FAMILIES.iter().any(|f| f.name == family_of(n)))
    {
        writeln!(out, "{n}").unwrap();
    }
    out
}

/// Compares (or, with `KFD_PIN_SCENARIOS=write`, writes) one pin file.
fn check(file: &str, got: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/scenario-lists")
        .join(file);
    if std::env::var("KFD_PIN_SCENARIOS").as_deref() == Ok("write") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (see this file's docs)", path.display()));
    if want != got {
        let (w, g): (Vec<&str>, Vec<&str>) = (want.lines().collect(), got.lines().collect());
        let first = w
            .iter()
            .zip(&g)
            .position(|(a, b)| a != b)
            .unwrap_or(w.len().min(g.len()));
        panic!(
            "{file}: scenario list changed at line {}: pinned {:?}, now {:?} ({} vs {} lines)",
            first + 1,
            w.get(first),
            g.get(first),
            w.len(),
            g.len()
        );
    }
}

#[test]
fn rocm_5_2_list_is_pinned() {
    check("rocm-5.2.txt", &render::<Rocm52>());
}

#[test]
fn rocm_6_2_list_is_pinned() {
    check("rocm-6.2.txt", &render::<Rocm62>());
}

#[test]
fn newest_list_is_pinned() {
    check("newest.txt", &render::<Newest>());
}
