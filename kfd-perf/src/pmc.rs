//! Performance counter property tables: which counter blocks a GPU
//! generation has, how many counters each block has and how many of them
//! can count at once.
//!
//! # Where the numbers come from
//!
//! The tables are the ones of the C library's `pmc_table.c`, identical in
//! ROCT-Thunk-Interface `rocm-5.2.3` (Debian's libhsakmt 5.2.3) and in the
//! last ROCT master; the newest rocm-systems libhsakmt still carries them.
//! They were transcribed as facts (block, slot count, counter id ranges)
//! into the compact range form below. The C library selects a table by
//! GFX version:
//!
//! | GFX version | table |
//! |---|---|
//! | 7.0.0 (Kaveri) | Kaveri (SQ only) |
//! | other 7.x | Hawaii |
//! | 8.0.1 (Carrizo) | Carrizo |
//! | 8.0.2 (Tonga) | none: `INVALID_PARAMETER` |
//! | other 8.x, device id 0x7300 or 0x730F | Fiji |
//! | other 8.x | Polaris (Polaris 10/11/12, VegaM) |
//! | any 9.x (Vega10 .. gfx90a, gfx942, gfx950) | Vega |
//! | any 10.x | Navi |
//! | anything else (gfx11, gfx12, CPU nodes) | none: `INVALID_PARAMETER` |
//!
//! So gfx90a and gfx942 report the Vega table and gfx1100 reports nothing
//! (the C library never gained gfx11 tables; newer profilers describe
//! counters themselves, in rocprofiler's and aqlprofile's own tables, and
//! program them through PM4 packets on user queues, not through the thunk).
//!
//! The privileged IOMMUv2 block (APUs only) is not reported: 5.2.3 found it
//! through the host's `amd_iommu` perf-event source, which this machine
//! and the simulator do not have, and upstream removed the block.

/// The thunk's counter block ids (`enum perf_block_id`); the value is what
/// `HsaCounter::BlockIndex` carries. (The C API also names each block by
/// an `HSA_PROFILEBLOCK_AMD_*` UUID; the `hsakmt` border maps block ids
/// to them.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u32)]
#[allow(missing_docs)]
pub enum BlockId {
    Cb = 0,
    Cpc,
    Cpf,
    Cpg,
    Db,
    Gds,
    Grbm,
    Grbmse,
    Ia,
    Mc,
    Pasc,
    Pasu,
    Spi,
    Srbm,
    Sq,
    Sx,
    Ta,
    Tca,
    Tcc,
    Tcp,
    Tcs,
    Td,
    Vgt,
    Wd,
    /// The privileged IOMMUv2 block.
    Iommuv2,
}

/// `PERFCOUNTER_BLOCKID__MAX`: one past the last block id.
pub const NUM_BLOCK_IDS: u32 = 25;

impl BlockId {
    /// Every block id in order.
    pub const ALL: [BlockId; NUM_BLOCK_IDS as usize] = [
        BlockId::Cb,
        BlockId::Cpc,
        BlockId::Cpf,
        BlockId::Cpg,
        BlockId::Db,
        BlockId::Gds,
        BlockId::Grbm,
        BlockId::Grbmse,
        BlockId::Ia,
        BlockId::Mc,
        BlockId::Pasc,
        BlockId::Pasu,
        BlockId::Spi,
        BlockId::Srbm,
        BlockId::Sq,
        BlockId::Sx,
        BlockId::Ta,
        BlockId::Tca,
        BlockId::Tcc,
        BlockId::Tcp,
        BlockId::Tcs,
        BlockId::Td,
        BlockId::Vgt,
        BlockId::Wd,
        BlockId::Iommuv2,
    ];

    /// The block with index `index`, if it is one.
    pub fn from_index(index: u32) -> Option<BlockId> {
        BlockId::ALL.get(index as usize).copied()
    }

    /// Whether counters of this block need privileged (kernel or root)
    /// access; only IOMMUv2 does.
    pub fn is_privileged(self) -> bool {
        self == BlockId::Iommuv2
    }
}

/// The GFX IP version the counter tables are chosen by: kfd-topology's
/// (`HSA_ENGINE_ID` major.minor.stepping), re-exported here.
pub use kfd_topology::GfxVersion;

/// The counter tables the C library has (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Asic {
    /// Kaveri (gfx 7.0.0).
    Kaveri,
    /// Other gfx7 (Hawaii).
    Hawaii,
    /// Carrizo (gfx 8.0.1).
    Carrizo,
    /// Fiji (gfx 8.0.3, device 0x7300/0x730F).
    Fiji,
    /// Polaris 10/11/12 and VegaM (other gfx 8.0.x except Tonga).
    Polaris,
    /// Every gfx9 (Vega10 through gfx90a, gfx942, gfx950).
    Vega,
    /// Every gfx10 (Navi).
    Navi,
}

impl Asic {
    /// The table the C library uses for a node, or `None` when it has none
    /// (Tonga, gfx11 and later, CPU nodes).
    pub fn for_node(gfx: GfxVersion, device_id: u16) -> Option<Asic> {
        match (gfx.major, gfx.minor, gfx.stepping) {
            (7, 0, 0) => Some(Asic::Kaveri),
            (7, _, _) => Some(Asic::Hawaii),
            (8, 0, 2) => None,
            (8, 0, 1) => Some(Asic::Carrizo),
            (8, _, _) if device_id == 0x7300 || device_id == 0x730F => Some(Asic::Fiji),
            (8, _, _) => Some(Asic::Polaris),
            (9, _, _) => Some(Asic::Vega),
            (10, _, _) => Some(Asic::Navi),
            _ => None,
        }
    }

    pub(crate) fn entries(self) -> &'static [BlockEntry] {
        match self {
            Asic::Kaveri => KAVERI,
            Asic::Hawaii => HAWAII,
            Asic::Carrizo => CARRIZO,
            Asic::Fiji => FIJI,
            Asic::Polaris => POLARIS,
            Asic::Vega => VEGA,
            Asic::Navi => NAVI,
        }
    }

    /// The counter properties of this table, as the C library builds them.
    pub fn counter_properties(self) -> CounterProperties {
        let blocks: Vec<CounterBlock> = self
            .entries()
            .iter()
            .map(|e| CounterBlock {
                block: e.block,
                num_concurrent: e.slots,
                counters: e
                    .ids
                    .iter()
                    .flat_map(|&(lo, hi)| lo..=hi)
                    .map(|id| Counter {
                        kind: if e.block.is_privileged() {
                            ProfileType::PrivilegedImmediate
                        } else {
                            ProfileType::NonPrivImmediate
                        },
                        id: u64::from(id),
                        size_in_bits: COUNTER_SIZE_IN_BITS,
                        mask: u64::MAX,
                        flags: COUNTER_FLAG_GLOBAL,
                        block_index: e.block as u32,
                    })
                    .collect(),
            })
            .collect();
        CounterProperties {
            num_concurrent: blocks.iter().map(|b| b.num_concurrent).sum(),
            blocks,
        }
    }
}

/// Every table counter is 64 bits wide, with a full 64-bit mask.
pub const COUNTER_SIZE_IN_BITS: u32 = 64;

/// `HsaCounterFlags::Global` (bit 0): the counter is not tied to a VMID,
/// wave or CU. Every table counter has it.
pub const COUNTER_FLAG_GLOBAL: u32 = 1;

/// How a counter is accessed (`HSA_PROFILE_TYPE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProfileType {
    /// Privileged, read on demand (value 0).
    PrivilegedImmediate,
    /// Privileged, streamed into a trace buffer (1).
    PrivilegedStreaming,
    /// Unprivileged, read on demand (2).
    NonPrivImmediate,
    /// Unprivileged, streamed (3).
    NonPrivStreaming,
    /// Any other value a caller passed (kept so that it is treated as the
    /// C library treats it: not privileged).
    Other(u32),
}

impl ProfileType {
    /// From the C value.
    pub fn from_raw(v: u32) -> ProfileType {
        match v {
            0 => ProfileType::PrivilegedImmediate,
            1 => ProfileType::PrivilegedStreaming,
            2 => ProfileType::NonPrivImmediate,
            3 => ProfileType::NonPrivStreaming,
            other => ProfileType::Other(other),
        }
    }

    /// The C value.
    pub fn raw(self) -> u32 {
        match self {
            ProfileType::PrivilegedImmediate => 0,
            ProfileType::PrivilegedStreaming => 1,
            ProfileType::NonPrivImmediate => 2,
            ProfileType::NonPrivStreaming => 3,
            ProfileType::Other(v) => v,
        }
    }

    /// Whether the type is one of the two privileged ones (the only
    /// counters a trace records: the C library skips every value above
    /// `HSA_PROFILE_TYPE_PRIVILEGED_STREAMING`).
    pub fn is_privileged(self) -> bool {
        self.raw() <= 1
    }
}

/// One counter (`HsaCounter`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Counter {
    /// How it is accessed.
    pub kind: ProfileType,
    /// Counter id (register select value).
    pub id: u64,
    /// Counter width in bits.
    pub size_in_bits: u32,
    /// Mask of the counter's value bits.
    pub mask: u64,
    /// `HsaCounterFlags` word.
    pub flags: u32,
    /// The block index ([`BlockId`] value); raw so that out-of-range
    /// values from callers can be rejected as the C library does.
    pub block_index: u32,
}

/// One counter block (`HsaCounterBlockProperties`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CounterBlock {
    /// Which block.
    pub block: BlockId,
    /// How many of its counters can count at once.
    pub num_concurrent: u32,
    /// Its counters.
    pub counters: Vec<Counter>,
}

/// The counter properties of a node (`HsaCounterProperties`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CounterProperties {
    /// Sum of the blocks' concurrency.
    pub num_concurrent: u32,
    /// The blocks, in block-id order.
    pub blocks: Vec<CounterBlock>,
}

impl CounterProperties {
    /// Total number of counters over all blocks.
    pub fn num_counters(&self) -> usize {
        self.blocks.iter().map(|b| b.counters.len()).sum()
    }

    /// The block `block`, if the node has it.
    pub fn block(&self, block: BlockId) -> Option<&CounterBlock> {
        self.blocks.iter().find(|b| b.block == block)
    }
}

/// One block of a table: its slot count and counter id ranges.
#[derive(Debug)]
pub(crate) struct BlockEntry {
    pub(crate) block: BlockId,
    pub(crate) slots: u32,
    pub(crate) ids: &'static [(u32, u32)],
}

// Counter id lists, as inclusive ranges. Names follow the C arrays
// (`gfx9_cb_counter_ids` -> `GFX9_CB`).

const GFX10_CB: &[(u32, u32)] = &[(0, 460)];
const GFX10_CPF: &[(u32, u32)] = &[(0, 39)];
const GFX10_CPG: &[(u32, u32)] = &[(0, 81)];
const GFX10_DB: &[(u32, u32)] = &[(0, 369)];
const GFX10_GDS: &[(u32, u32)] = &[(0, 122)];
const GFX10_GRBM: &[(u32, u32)] = &[(0, 46)];
const GFX10_GRBMSE: &[(u32, u32)] = &[(0, 18)];
const GFX10_PASC: &[(u32, u32)] = &[(0, 551)];
const GFX10_PASU: &[(u32, u32)] = &[(0, 265)];
const GFX10_SPI: &[(u32, u32)] = &[(0, 328)];
const GFX10_SQ: &[(u32, u32)] = &[(0, 511)];
const GFX10_SX: &[(u32, u32)] = &[(0, 224)];
const GFX10_TA: &[(u32, u32)] = &[(0, 225)];
const GFX10_TCP: &[(u32, u32)] = &[(0, 76)];
const GFX10_TD: &[(u32, u32)] = &[(0, 60)];
const GFX7_CB: &[(u32, u32)] = &[(0, 225)];
const GFX7_CPF: &[(u32, u32)] = &[(0, 16)];
const GFX7_CPG: &[(u32, u32)] = &[(0, 45)];
const GFX7_DB: &[(u32, u32)] = &[(0, 256)];
const GFX7_GDS: &[(u32, u32)] = &[(0, 120)];
const GFX7_GRBM: &[(u32, u32)] = &[(0, 33)];
const GFX7_GRBMSE: &[(u32, u32)] = &[(0, 14)];
const GFX7_IA: &[(u32, u32)] = &[(0, 17)];
const GFX7_PASC: &[(u32, u32)] = &[(0, 394)];
const GFX7_PASU: &[(u32, u32)] = &[(0, 152)];
const GFX7_SPI: &[(u32, u32)] = &[(0, 185)];
const GFX7_SQ: &[(u32, u32)] = &[(0, 162), (168, 250)];
const GFX7_SRBM: &[(u32, u32)] = &[(0, 18)];
const GFX7_SX: &[(u32, u32)] = &[(0, 33)];
const GFX7_TA: &[(u32, u32)] = &[(0, 110)];
const GFX7_TCA: &[(u32, u32)] = &[(0, 38)];
const GFX7_TCC: &[(u32, u32)] = &[(0, 44), (64, 159), (159, 159)];
const GFX7_TCP: &[(u32, u32)] = &[(0, 153)];
const GFX7_TCS: &[(u32, u32)] = &[(0, 20), (64, 127)];
const GFX7_TD: &[(u32, u32)] = &[(0, 54)];
const GFX7_VGT: &[(u32, u32)] = &[(0, 139)];
const GFX7_WD: &[(u32, u32)] = &[(0, 9)];
const GFX8_CB: &[(u32, u32)] = &[(0, 395)];
const GFX8_CPF: &[(u32, u32)] = &[(0, 19)];
const GFX8_CPG: &[(u32, u32)] = &[(0, 48)];
const GFX8_CZ_TCC: &[(u32, u32)] = &[(0, 107), (128, 191)];
const GFX8_IA: &[(u32, u32)] = &[(0, 23)];
const GFX8_PASC: &[(u32, u32)] = &[(0, 396)];
const GFX8_PL_SQ: &[(u32, u32)] = &[(1, 165), (168, 274), (276, 295)];
const GFX8_PL_VGT: &[(u32, u32)] = &[(0, 146)];
const GFX8_SPI: &[(u32, u32)] = &[(0, 196)];
const GFX8_SQ: &[(u32, u32)] = &[(1, 165), (167, 291), (298, 298)];
const GFX8_SRBM: &[(u32, u32)] = &[(0, 27)];
const GFX8_TA: &[(u32, u32)] = &[(0, 118)];
const GFX8_TCA: &[(u32, u32)] = &[(1, 34)];
const GFX8_TCC: &[(u32, u32)] = &[(0, 107), (128, 255)];
const GFX8_TCP: &[(u32, u32)] = &[(0, 182)];
const GFX8_VGT: &[(u32, u32)] = &[(0, 145)];
const GFX8_WD: &[(u32, u32)] = &[(0, 36)];
const GFX9_CB: &[(u32, u32)] = &[(0, 437)];
const GFX9_CPF: &[(u32, u32)] = &[(0, 31)];
const GFX9_CPG: &[(u32, u32)] = &[(0, 58)];
const GFX9_DB: &[(u32, u32)] = &[(0, 327)];
const GFX9_GRBM: &[(u32, u32)] = &[(0, 37)];
const GFX9_GRBMSE: &[(u32, u32)] = &[(0, 15)];
const GFX9_IA: &[(u32, u32)] = &[(0, 31)];
const GFX9_PASC: &[(u32, u32)] = &[(0, 490)];
const GFX9_PASU: &[(u32, u32)] = &[(0, 291)];
const GFX9_SPI: &[(u32, u32)] = &[(0, 195)];
const GFX9_SQ: &[(u32, u32)] = &[(1, 183), (255, 372)];
const GFX9_SX: &[(u32, u32)] = &[(0, 207)];
const GFX9_TCP: &[(u32, u32)] = &[(0, 84)];
const GFX9_TD: &[(u32, u32)] = &[(0, 56)];
const GFX9_VGT: &[(u32, u32)] = &[(0, 147)];
const GFX9_WD: &[(u32, u32)] = &[(0, 57)];

/// The C `kaveri_blocks` table.
const KAVERI: &[BlockEntry] = &[BlockEntry {
    block: BlockId::Sq,
    slots: 8,
    ids: GFX7_SQ,
}];

/// The C `hawaii_blocks` table.
const HAWAII: &[BlockEntry] = &[
    BlockEntry {
        block: BlockId::Cb,
        slots: 7,
        ids: GFX7_CB,
    },
    BlockEntry {
        block: BlockId::Cpf,
        slots: 5,
        ids: GFX7_CPF,
    },
    BlockEntry {
        block: BlockId::Cpg,
        slots: 5,
        ids: GFX7_CPG,
    },
    BlockEntry {
        block: BlockId::Db,
        slots: 12,
        ids: GFX7_DB,
    },
    BlockEntry {
        block: BlockId::Gds,
        slots: 4,
        ids: GFX7_GDS,
    },
    BlockEntry {
        block: BlockId::Grbm,
        slots: 2,
        ids: GFX7_GRBM,
    },
    BlockEntry {
        block: BlockId::Grbmse,
        slots: 1,
        ids: GFX7_GRBMSE,
    },
    BlockEntry {
        block: BlockId::Ia,
        slots: 7,
        ids: GFX7_IA,
    },
    BlockEntry {
        block: BlockId::Pasc,
        slots: 11,
        ids: GFX7_PASC,
    },
    BlockEntry {
        block: BlockId::Pasu,
        slots: 10,
        ids: GFX7_PASU,
    },
    BlockEntry {
        block: BlockId::Spi,
        slots: 4,
        ids: GFX7_SPI,
    },
    BlockEntry {
        block: BlockId::Srbm,
        slots: 2,
        ids: GFX7_SRBM,
    },
    BlockEntry {
        block: BlockId::Sq,
        slots: 8,
        ids: GFX7_SQ,
    },
    BlockEntry {
        block: BlockId::Sx,
        slots: 4,
        ids: GFX7_SX,
    },
    BlockEntry {
        block: BlockId::Ta,
        slots: 6,
        ids: GFX7_TA,
    },
    BlockEntry {
        block: BlockId::Tca,
        slots: 10,
        ids: GFX7_TCA,
    },
    BlockEntry {
        block: BlockId::Tcc,
        slots: 10,
        ids: GFX7_TCC,
    },
    BlockEntry {
        block: BlockId::Tcp,
        slots: 10,
        ids: GFX7_TCP,
    },
    BlockEntry {
        block: BlockId::Tcs,
        slots: 7,
        ids: GFX7_TCS,
    },
    BlockEntry {
        block: BlockId::Td,
        slots: 6,
        ids: GFX7_TD,
    },
    BlockEntry {
        block: BlockId::Vgt,
        slots: 10,
        ids: GFX7_VGT,
    },
    BlockEntry {
        block: BlockId::Wd,
        slots: 4,
        ids: GFX7_WD,
    },
];

/// The C `carrizo_blocks` table.
const CARRIZO: &[BlockEntry] = &[
    BlockEntry {
        block: BlockId::Cb,
        slots: 7,
        ids: GFX8_CB,
    },
    BlockEntry {
        block: BlockId::Cpf,
        slots: 5,
        ids: GFX8_CPF,
    },
    BlockEntry {
        block: BlockId::Cpg,
        slots: 5,
        ids: GFX8_CPG,
    },
    BlockEntry {
        block: BlockId::Db,
        slots: 12,
        ids: GFX7_DB,
    },
    BlockEntry {
        block: BlockId::Gds,
        slots: 4,
        ids: GFX7_GDS,
    },
    BlockEntry {
        block: BlockId::Grbm,
        slots: 2,
        ids: GFX7_GRBM,
    },
    BlockEntry {
        block: BlockId::Grbmse,
        slots: 1,
        ids: GFX7_GRBMSE,
    },
    BlockEntry {
        block: BlockId::Ia,
        slots: 7,
        ids: GFX8_IA,
    },
    BlockEntry {
        block: BlockId::Pasc,
        slots: 11,
        ids: GFX8_PASC,
    },
    BlockEntry {
        block: BlockId::Pasu,
        slots: 10,
        ids: GFX7_PASU,
    },
    BlockEntry {
        block: BlockId::Spi,
        slots: 4,
        ids: GFX8_SPI,
    },
    BlockEntry {
        block: BlockId::Srbm,
        slots: 2,
        ids: GFX8_SRBM,
    },
    BlockEntry {
        block: BlockId::Sq,
        slots: 8,
        ids: GFX8_SQ,
    },
    BlockEntry {
        block: BlockId::Sx,
        slots: 4,
        ids: GFX7_SX,
    },
    BlockEntry {
        block: BlockId::Ta,
        slots: 6,
        ids: GFX8_TA,
    },
    BlockEntry {
        block: BlockId::Tca,
        slots: 10,
        ids: GFX8_TCA,
    },
    BlockEntry {
        block: BlockId::Tcc,
        slots: 10,
        ids: GFX8_CZ_TCC,
    },
    BlockEntry {
        block: BlockId::Tcp,
        slots: 10,
        ids: GFX8_TCP,
    },
    BlockEntry {
        block: BlockId::Td,
        slots: 6,
        ids: GFX7_TD,
    },
    BlockEntry {
        block: BlockId::Vgt,
        slots: 10,
        ids: GFX8_VGT,
    },
    BlockEntry {
        block: BlockId::Wd,
        slots: 4,
        ids: GFX8_WD,
    },
];

/// The C `fiji_blocks` table.
const FIJI: &[BlockEntry] = &[
    BlockEntry {
        block: BlockId::Cb,
        slots: 7,
        ids: GFX8_CB,
    },
    BlockEntry {
        block: BlockId::Cpf,
        slots: 5,
        ids: GFX8_CPF,
    },
    BlockEntry {
        block: BlockId::Cpg,
        slots: 5,
        ids: GFX8_CPG,
    },
    BlockEntry {
        block: BlockId::Db,
        slots: 12,
        ids: GFX7_DB,
    },
    BlockEntry {
        block: BlockId::Gds,
        slots: 4,
        ids: GFX7_GDS,
    },
    BlockEntry {
        block: BlockId::Grbm,
        slots: 2,
        ids: GFX7_GRBM,
    },
    BlockEntry {
        block: BlockId::Grbmse,
        slots: 1,
        ids: GFX7_GRBMSE,
    },
    BlockEntry {
        block: BlockId::Ia,
        slots: 7,
        ids: GFX8_IA,
    },
    BlockEntry {
        block: BlockId::Pasc,
        slots: 11,
        ids: GFX8_PASC,
    },
    BlockEntry {
        block: BlockId::Pasu,
        slots: 10,
        ids: GFX7_PASU,
    },
    BlockEntry {
        block: BlockId::Spi,
        slots: 4,
        ids: GFX8_SPI,
    },
    BlockEntry {
        block: BlockId::Srbm,
        slots: 2,
        ids: GFX8_SRBM,
    },
    BlockEntry {
        block: BlockId::Sq,
        slots: 8,
        ids: GFX8_SQ,
    },
    BlockEntry {
        block: BlockId::Sx,
        slots: 4,
        ids: GFX7_SX,
    },
    BlockEntry {
        block: BlockId::Ta,
        slots: 6,
        ids: GFX8_TA,
    },
    BlockEntry {
        block: BlockId::Tca,
        slots: 10,
        ids: GFX8_TCA,
    },
    BlockEntry {
        block: BlockId::Tcc,
        slots: 10,
        ids: GFX8_TCC,
    },
    BlockEntry {
        block: BlockId::Tcp,
        slots: 10,
        ids: GFX8_TCP,
    },
    BlockEntry {
        block: BlockId::Td,
        slots: 6,
        ids: GFX7_TD,
    },
    BlockEntry {
        block: BlockId::Vgt,
        slots: 10,
        ids: GFX8_VGT,
    },
    BlockEntry {
        block: BlockId::Wd,
        slots: 4,
        ids: GFX8_WD,
    },
];

/// The C `polaris_blocks` table.
const POLARIS: &[BlockEntry] = &[
    BlockEntry {
        block: BlockId::Cb,
        slots: 7,
        ids: GFX8_CB,
    },
    BlockEntry {
        block: BlockId::Cpf,
        slots: 5,
        ids: GFX8_CPF,
    },
    BlockEntry {
        block: BlockId::Cpg,
        slots: 5,
        ids: GFX8_CPG,
    },
    BlockEntry {
        block: BlockId::Db,
        slots: 12,
        ids: GFX7_DB,
    },
    BlockEntry {
        block: BlockId::Gds,
        slots: 4,
        ids: GFX7_GDS,
    },
    BlockEntry {
        block: BlockId::Grbm,
        slots: 2,
        ids: GFX7_GRBM,
    },
    BlockEntry {
        block: BlockId::Grbmse,
        slots: 1,
        ids: GFX7_GRBMSE,
    },
    BlockEntry {
        block: BlockId::Ia,
        slots: 7,
        ids: GFX8_IA,
    },
    BlockEntry {
        block: BlockId::Pasc,
        slots: 11,
        ids: GFX8_PASC,
    },
    BlockEntry {
        block: BlockId::Pasu,
        slots: 10,
        ids: GFX7_PASU,
    },
    BlockEntry {
        block: BlockId::Spi,
        slots: 4,
        ids: GFX8_SPI,
    },
    BlockEntry {
        block: BlockId::Srbm,
        slots: 2,
        ids: GFX8_SRBM,
    },
    BlockEntry {
        block: BlockId::Sq,
        slots: 8,
        ids: GFX8_PL_SQ,
    },
    BlockEntry {
        block: BlockId::Sx,
        slots: 4,
        ids: GFX7_SX,
    },
    BlockEntry {
        block: BlockId::Ta,
        slots: 6,
        ids: GFX8_TA,
    },
    BlockEntry {
        block: BlockId::Tca,
        slots: 10,
        ids: GFX8_TCA,
    },
    BlockEntry {
        block: BlockId::Tcc,
        slots: 10,
        ids: GFX8_TCC,
    },
    BlockEntry {
        block: BlockId::Tcp,
        slots: 10,
        ids: GFX8_TCP,
    },
    BlockEntry {
        block: BlockId::Td,
        slots: 6,
        ids: GFX7_TD,
    },
    BlockEntry {
        block: BlockId::Vgt,
        slots: 10,
        ids: GFX8_PL_VGT,
    },
    BlockEntry {
        block: BlockId::Wd,
        slots: 4,
        ids: GFX8_WD,
    },
];

/// The C `vega_blocks` table.
const VEGA: &[BlockEntry] = &[
    BlockEntry {
        block: BlockId::Cb,
        slots: 7,
        ids: GFX9_CB,
    },
    BlockEntry {
        block: BlockId::Cpf,
        slots: 5,
        ids: GFX9_CPF,
    },
    BlockEntry {
        block: BlockId::Cpg,
        slots: 5,
        ids: GFX9_CPG,
    },
    BlockEntry {
        block: BlockId::Db,
        slots: 12,
        ids: GFX9_DB,
    },
    BlockEntry {
        block: BlockId::Gds,
        slots: 4,
        ids: GFX7_GDS,
    },
    BlockEntry {
        block: BlockId::Grbm,
        slots: 2,
        ids: GFX9_GRBM,
    },
    BlockEntry {
        block: BlockId::Grbmse,
        slots: 1,
        ids: GFX9_GRBMSE,
    },
    BlockEntry {
        block: BlockId::Ia,
        slots: 7,
        ids: GFX9_IA,
    },
    BlockEntry {
        block: BlockId::Pasc,
        slots: 11,
        ids: GFX9_PASC,
    },
    BlockEntry {
        block: BlockId::Pasu,
        slots: 10,
        ids: GFX9_PASU,
    },
    BlockEntry {
        block: BlockId::Spi,
        slots: 18,
        ids: GFX9_SPI,
    },
    BlockEntry {
        block: BlockId::Sq,
        slots: 16,
        ids: GFX9_SQ,
    },
    BlockEntry {
        block: BlockId::Sx,
        slots: 4,
        ids: GFX9_SX,
    },
    BlockEntry {
        block: BlockId::Ta,
        slots: 6,
        ids: GFX8_TA,
    },
    BlockEntry {
        block: BlockId::Tca,
        slots: 10,
        ids: GFX8_TCA,
    },
    BlockEntry {
        block: BlockId::Tcc,
        slots: 10,
        ids: GFX8_TCC,
    },
    BlockEntry {
        block: BlockId::Tcp,
        slots: 10,
        ids: GFX9_TCP,
    },
    BlockEntry {
        block: BlockId::Td,
        slots: 6,
        ids: GFX9_TD,
    },
    BlockEntry {
        block: BlockId::Vgt,
        slots: 10,
        ids: GFX9_VGT,
    },
    BlockEntry {
        block: BlockId::Wd,
        slots: 4,
        ids: GFX9_WD,
    },
];

/// The C `navi_blocks` table.
const NAVI: &[BlockEntry] = &[
    BlockEntry {
        block: BlockId::Cb,
        slots: 7,
        ids: GFX10_CB,
    },
    BlockEntry {
        block: BlockId::Cpf,
        slots: 6,
        ids: GFX10_CPF,
    },
    BlockEntry {
        block: BlockId::Cpg,
        slots: 6,
        ids: GFX10_CPG,
    },
    BlockEntry {
        block: BlockId::Db,
        slots: 12,
        ids: GFX10_DB,
    },
    BlockEntry {
        block: BlockId::Gds,
        slots: 10,
        ids: GFX10_GDS,
    },
    BlockEntry {
        block: BlockId::Grbm,
        slots: 2,
        ids: GFX10_GRBM,
    },
    BlockEntry {
        block: BlockId::Grbmse,
        slots: 1,
        ids: GFX10_GRBMSE,
    },
    BlockEntry {
        block: BlockId::Pasc,
        slots: 11,
        ids: GFX10_PASC,
    },
    BlockEntry {
        block: BlockId::Pasu,
        slots: 16,
        ids: GFX10_PASU,
    },
    BlockEntry {
        block: BlockId::Spi,
        slots: 18,
        ids: GFX10_SPI,
    },
    BlockEntry {
        block: BlockId::Sq,
        slots: 16,
        ids: GFX10_SQ,
    },
    BlockEntry {
        block: BlockId::Sx,
        slots: 4,
        ids: GFX10_SX,
    },
    BlockEntry {
        block: BlockId::Ta,
        slots: 5,
        ids: GFX10_TA,
    },
    BlockEntry {
        block: BlockId::Tcp,
        slots: 10,
        ids: GFX10_TCP,
    },
    BlockEntry {
        block: BlockId::Td,
        slots: 5,
        ids: GFX10_TD,
    },
];
