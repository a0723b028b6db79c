//! How much of a target's instruction set the shader machine executes,
//! per encoding family, counted against the mnemonics LLVM's disassembler
//! names for the target (the generated opcode tables).

use super::exec;
use super::isa::{tables_of, Enc, Target};

/// One encoding family's coverage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Coverage {
    /// The family.
    pub enc: Enc,
    /// Distinct mnemonics LLVM lists for the family.
    pub listed: usize,
    /// Those with an executor.
    pub executed: usize,
    /// Those without one (they stop a dispatch as illegal instructions).
    pub missing: Vec<&'static str>,
}

/// The coverage of every encoding family of `target`.
pub fn coverage(target: Target) -> Vec<Coverage> {
    tables_of(target)
        .into_iter()
        .map(|(enc, names)| {
            let mut listed: Vec<&'static str> =
                names.iter().copied().filter(|n| !n.is_empty()).collect();
            listed.sort_unstable();
            listed.dedup();
            let missing: Vec<&'static str> = listed
                .iter()
                .copied()
                .filter(|n| exec::lookup_in(target, enc, n).is_none())
                .collect();
            Coverage {
                enc,
                listed: listed.len(),
                executed: listed.len() - missing.len(),
                missing,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_family_is_counted() {
        for t in [
            Target::Gfx900,
            Target::Gfx90a,
            Target::Gfx940,
            Target::Gfx1100,
        ] {
            let c = coverage(t);
            // gfx11 adds VOPD.
            assert_eq!(c.len(), if t.is_gfx11() { 17 } else { 16 });
            // SOPP's s_endpgm has an executor on every target.
            let sopp = c.iter().find(|c| c.enc == Enc::Sopp).unwrap();
            assert!(sopp.executed >= 1 && !sopp.missing.contains(&"s_endpgm"));
            assert!(c.iter().all(|c| c.executed + c.missing.len() == c.listed));
        }
    }
}
