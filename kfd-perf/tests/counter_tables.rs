//! Counter property tables checked against the C library.
//!
//! How this was checked: the C library's tables live in `src/pmc_table.c`
//! of ROCT-Thunk-Interface; the tag `rocm-5.2.3` is what Debian's
//! libhsakmt 5.2.3 was built from (ROCT master has the same tables for
//! every ASIC). The per-block slot counts, counter counts, first/last ids
//! and gaps below were read off that file as facts and written down here
//! by hand; the table selection (which GFX version gets which table) is
//! `get_block_properties` of the same file. (The C byte layout of
//! `hsaKmtPmcGetCounterProperties`, `src/perfctr.c`, is built and tested
//! in `hsakmt/src/perf.rs`.)
//!
//! The Debian library itself was also run, under the kfd-sim LD_PRELOAD
//! library: `tests/sim.rs` compares kfd-perf with its output for the mi210,
//! mi300x and navi31 presets (fixtures in `tests/fixtures/`).

use kfd_perf::pmc::{Asic, BlockId, GfxVersion, ProfileType, COUNTER_FLAG_GLOBAL};

/// (block, slots, number of counters) of 5.2.3's `vega_blocks`, in order.
const VEGA: &[(BlockId, u32, usize)] = &[
    (BlockId::Cb, 7, 438),
    (BlockId::Cpf, 5, 32),
    (BlockId::Cpg, 5, 59),
    (BlockId::Db, 12, 328),
    (BlockId::Gds, 4, 121),
    (BlockId::Grbm, 2, 38),
    (BlockId::Grbmse, 1, 16),
    (BlockId::Ia, 7, 32),
    (BlockId::Pasc, 11, 491),
    (BlockId::Pasu, 10, 292),
    (BlockId::Spi, 18, 196),
    (BlockId::Sq, 16, 301),
    (BlockId::Sx, 4, 208),
    (BlockId::Ta, 6, 119),
    (BlockId::Tca, 10, 34),
    (BlockId::Tcc, 10, 236),
    (BlockId::Tcp, 10, 85),
    (BlockId::Td, 6, 57),
    (BlockId::Vgt, 10, 148),
    (BlockId::Wd, 4, 58),
];

/// The same for `navi_blocks`.
const NAVI: &[(BlockId, u32, usize)] = &[
    (BlockId::Cb, 7, 461),
    (BlockId::Cpf, 6, 40),
    (BlockId::Cpg, 6, 82),
    (BlockId::Db, 12, 370),
    (BlockId::Gds, 10, 123),
    (BlockId::Grbm, 2, 47),
    (BlockId::Grbmse, 1, 19),
    (BlockId::Pasc, 11, 552),
    (BlockId::Pasu, 16, 266),
    (BlockId::Spi, 18, 329),
    (BlockId::Sq, 16, 512),
    (BlockId::Sx, 4, 225),
    (BlockId::Ta, 5, 226),
    (BlockId::Tcp, 10, 77),
    (BlockId::Td, 5, 61),
];

fn check(asic: Asic, expected: &[(BlockId, u32, usize)], total: usize, concurrent: u32) {
    let p = asic.counter_properties();
    let got: Vec<(BlockId, u32, usize)> = p
        .blocks
        .iter()
        .map(|b| (b.block, b.num_concurrent, b.counters.len()))
        .collect();
    assert_eq!(got, expected, "{asic:?}");
    assert_eq!(p.num_counters(), total);
    assert_eq!(p.num_concurrent, concurrent);
    for b in &p.blocks {
        for c in &b.counters {
            assert_eq!(c.block_index, b.block as u32);
            assert_eq!(c.kind, ProfileType::NonPrivImmediate);
            assert_eq!(c.size_in_bits, 64);
            assert_eq!(c.mask, u64::MAX);
            assert_eq!(c.flags, COUNTER_FLAG_GLOBAL);
        }
    }
}

fn ids(asic: Asic, block: BlockId) -> Vec<u64> {
    let p = asic.counter_properties();
    p.block(block)
        .unwrap()
        .counters
        .iter()
        .map(|c| c.id)
        .collect()
}

#[test]
fn gfx90a_and_gfx942_use_the_vega_table() {
    // gfx90a: MI210 (device 0x740F, 9.0.10); gfx942: MI300X (9.4.2).
    assert_eq!(
        Asic::for_node(GfxVersion::new(9, 0, 10), 0x740f),
        Some(Asic::Vega)
    );
    assert_eq!(
        Asic::for_node(GfxVersion::from_target_version(90402).unwrap(), 0x74a1),
        Some(Asic::Vega)
    );
    check(Asic::Vega, VEGA, 3289, 158);
    // Sample ids: SQ starts at 1 and skips 184..=254; TCA is 1..=34; TCC
    // skips 108..=127; CB is 0..=437.
    let sq = ids(Asic::Vega, BlockId::Sq);
    assert_eq!(sq[0], 1);
    assert_eq!(&sq[181..185], &[182, 183, 255, 256]);
    assert_eq!(*sq.last().unwrap(), 372);
    assert_eq!(ids(Asic::Vega, BlockId::Tca), (1..=34).collect::<Vec<_>>());
    let tcc = ids(Asic::Vega, BlockId::Tcc);
    assert_eq!(&tcc[106..110], &[106, 107, 128, 129]);
    assert_eq!(ids(Asic::Vega, BlockId::Cb), (0..=437).collect::<Vec<_>>());
}

#[test]
fn gfx1100_has_no_table() {
    // 5.2.3 (and every later C library) only knows gfx7..gfx10: a gfx11
    // node makes hsaKmtPmcGetCounterProperties return INVALID_PARAMETER.
    assert_eq!(Asic::for_node(GfxVersion::new(11, 0, 0), 0x744c), None);
    assert_eq!(Asic::for_node(GfxVersion::new(12, 0, 1), 0x7550), None);
    assert_eq!(Asic::for_node(GfxVersion::default(), 0), None);
}

#[test]
fn navi_table() {
    assert_eq!(
        Asic::for_node(GfxVersion::new(10, 3, 0), 0x73bf),
        Some(Asic::Navi)
    );
    check(Asic::Navi, NAVI, 3390, 129);
    assert_eq!(ids(Asic::Navi, BlockId::Sq), (0..=511).collect::<Vec<_>>());
}

#[test]
fn older_tables_and_selection() {
    assert_eq!(
        Asic::for_node(GfxVersion::new(7, 0, 0), 0x1304),
        Some(Asic::Kaveri)
    );
    assert_eq!(
        Asic::for_node(GfxVersion::new(7, 0, 1), 0x67a0),
        Some(Asic::Hawaii)
    );
    assert_eq!(
        Asic::for_node(GfxVersion::new(8, 0, 1), 0x9870),
        Some(Asic::Carrizo)
    );
    assert_eq!(Asic::for_node(GfxVersion::new(8, 0, 2), 0x6920), None); // Tonga
    assert_eq!(
        Asic::for_node(GfxVersion::new(8, 0, 3), 0x7300),
        Some(Asic::Fiji)
    );
    assert_eq!(
        Asic::for_node(GfxVersion::new(8, 0, 3), 0x67df),
        Some(Asic::Polaris)
    );
    // (blocks, counters, concurrency) per table.
    for (asic, blocks, counters, conc) in [
        (Asic::Kaveri, 1, 246, 8),
        (Asic::Hawaii, 22, 2503, 145),
        (Asic::Carrizo, 21, 2762, 138),
        (Asic::Fiji, 21, 2826, 138),
        (Asic::Polaris, 21, 2828, 138),
    ] {
        let p = asic.counter_properties();
        assert_eq!(
            (p.blocks.len(), p.num_counters(), p.num_concurrent),
            (blocks, counters, conc),
            "{asic:?}"
        );
    }
    // Hawaii's TCC list repeats id 159 in the C table; kept as is.
    let tcc = ids(Asic::Hawaii, BlockId::Tcc);
    assert_eq!(tcc.len(), 142);
    assert_eq!(tcc.iter().filter(|&&i| i == 159).count(), 2);
}

#[test]
fn profile_types_keep_their_c_values() {
    for v in 0..6 {
        assert_eq!(ProfileType::from_raw(v).raw(), v);
    }
    assert_eq!(ProfileType::from_raw(2), ProfileType::NonPrivImmediate);
    assert_eq!(ProfileType::from_raw(9), ProfileType::Other(9));
    // Only the two privileged kinds go into a trace, as in C.
    assert!(ProfileType::PrivilegedImmediate.is_privileged());
    assert!(ProfileType::PrivilegedStreaming.is_privileged());
    assert!(!ProfileType::NonPrivImmediate.is_privileged());
    assert!(!ProfileType::Other(u32::MAX).is_privileged());
}
