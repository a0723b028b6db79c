//! GFX IP versions: the [`GfxVersion`] type, target names (`gfx90a`), and
//! the device-id table the 5.2.3 C library consults before
//! `gfx_target_version`.

use std::fmt;

/// A GFX IP version, as in `HSA_ENGINE_ID` (major 6 bits, minor and
/// stepping 8 bits each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct GfxVersion {
    /// Major version (9 for gfx9xx, 11 for gfx11xx).
    pub major: u8,
    /// Minor version.
    pub minor: u8,
    /// Stepping.
    pub stepping: u8,
}

impl GfxVersion {
    /// A version from its parts.
    pub const fn new(major: u8, minor: u8, stepping: u8) -> Self {
        GfxVersion {
            major,
            minor,
            stepping,
        }
    }

    /// Decodes sysfs `gfx_target_version` (decimal `major*10000 +
    /// minor*100 + stepping`, e.g. 90010 for gfx90a). `None` for 0.
    ///
    /// The parts are truncated to the `HSA_ENGINE_ID` field widths like the
    /// C library does (`major & 0x3f`).
    pub const fn from_target_version(v: u32) -> Option<Self> {
        if v == 0 {
            return None;
        }
        Some(GfxVersion {
            major: (((v / 10000) % 100) & 0x3f) as u8,
            minor: ((v / 100) % 100) as u8,
            stepping: (v % 100) as u8,
        })
    }

    /// The decimal `gfx_target_version` encoding.
    pub const fn target_version(self) -> u32 {
        self.major as u32 * 10000 + self.minor as u32 * 100 + self.stepping as u32
    }

    /// The packed hex form the C library compares against
    /// (`major << 16 | minor << 8 | stepping`, e.g. 0x09000A).
    pub const fn full(self) -> u32 {
        (self.major as u32) << 16 | (self.minor as u32) << 8 | self.stepping as u32
    }

    /// The LLVM target name: `gfx` + major (decimal) + minor and stepping
    /// (one hex digit each): `gfx90a`, `gfx942`, `gfx1100`.
    pub fn name(self) -> String {
        format!("gfx{}{:x}{:x}", self.major, self.minor, self.stepping)
    }

    /// Parses `HSA_OVERRIDE_GFX_VERSION` (`major.minor.stepping`, decimal,
    /// major <= 63, minor and stepping <= 255, nothing after the stepping).
    pub fn parse_override(s: &str) -> Option<Self> {
        let mut parts = s.split('.');
        let mut next = || -> Option<u32> {
            let p = parts.next()?;
            // scanf's %u skips leading white space and accepts a sign; the
            // sensible subset is plain digits.
            let p = p.trim_start();
            if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            p.parse().ok()
        };
        let (major, minor, stepping) = (next()?, next()?, next()?);
        if parts.next().is_some() || major > 63 || minor > 255 || stepping > 255 {
            return None;
        }
        Some(GfxVersion::new(major as u8, minor as u8, stepping as u8))
    }

    /// VGPR register-file bytes per CU as the 5.2.3 library computes it
    /// (`VGPR_SIZE_PER_CU`): 512 KiB for Arcturus and Aldebaran, else
    /// 256 KiB.
    pub const fn vgpr_size_per_cu_rocm_5_2(self) -> u32 {
        match self.full() {
            0x090008 | 0x09000A => 0x80000,
            _ => 0x40000,
        }
    }

    /// VGPR register-file bytes per CU as the newest library computes it
    /// (`hsakmt_get_vgpr_size_per_cu`); 0 for versions past gfx1250, where
    /// the C library asserts.
    pub const fn vgpr_size_per_cu_current(self) -> u32 {
        let v = self.full();
        if v < 0x090008 {
            0x40000
        } else if v <= 0x09000A {
            0x80000
        } else if v <= 0x09000C {
            0x40000
        } else if v <= 0x090500 {
            0x80000
        } else if v < 0x0B0000 {
            0x40000
        } else if v <= 0x0C0001 {
            0x60000
        } else if v <= 0x0C0500 {
            0x80000
        } else {
            0
        }
    }
}

impl fmt::Display for GfxVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.stepping)
    }
}

/// SGPR register-file bytes per CU (`SGPR_SIZE_PER_CU`).
pub const SGPR_SIZE_PER_CU: u32 = 0x4000;

/// An entry of the C library's device-id table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GfxIpEntry {
    /// PCI device id.
    pub device_id: u16,
    /// The GFX IP version the table assigns.
    pub version: GfxVersion,
    /// The CAL name (`AMDName`), e.g. `Aldebaran`.
    pub amd_name: &'static str,
}

/// (name, major, minor, stepping, device ids): the libhsakmt 5.2.3 table.
/// The newest library has the same entries but only consults them when
/// `gfx_target_version`'s major is 10 or less.
const GFXIP_TABLE: &[(&str, u8, u8, u8, &[u16])] = &[
    (
        "Spectre",
        7,
        0,
        0,
        &[
            0x1304, 0x1305, 0x1306, 0x1307, 0x1309, 0x130A, 0x130B, 0x130C, 0x130D, 0x130E, 0x130F,
            0x1310, 0x1311, 0x1313, 0x1315, 0x1318, 0x131B, 0x131C, 0x131D,
        ],
    ),
    ("Spooky", 7, 0, 0, &[0x1312, 0x1316, 0x1317]),
    (
        "Hawaii",
        7,
        0,
        1,
        &[
            0x67A0, 0x67A1, 0x67A2, 0x67A8, 0x67A9, 0x67AA, 0x67B0, 0x67B1, 0x67B8, 0x67B9, 0x67BA,
            0x67BE,
        ],
    ),
    (
        "Carrizo",
        8,
        0,
        1,
        &[0x9870, 0x9874, 0x9875, 0x9876, 0x9877],
    ),
    (
        "Tonga",
        8,
        0,
        2,
        &[
            0x6920, 0x6921, 0x6928, 0x6929, 0x692B, 0x692F, 0x6930, 0x6938, 0x6939,
        ],
    ),
    ("Fiji", 8, 0, 3, &[0x7300, 0x730F]),
    (
        "Polaris10",
        8,
        0,
        3,
        &[
            0x67C0, 0x67C1, 0x67C2, 0x67C4, 0x67C7, 0x67C8, 0x67C9, 0x67CA, 0x67CC, 0x67CF, 0x67D0,
            0x67DF, 0x6FDF,
        ],
    ),
    (
        "Polaris11",
        8,
        0,
        3,
        &[
            0x67E0, 0x67E1, 0x67E3, 0x67E7, 0x67E8, 0x67E9, 0x67EB, 0x67EF, 0x67FF,
        ],
    ),
    (
        "Polaris12",
        8,
        0,
        3,
        &[
            0x6980, 0x6981, 0x6985, 0x6986, 0x6987, 0x6995, 0x6997, 0x699F,
        ],
    ),
    ("VegaM", 8, 0, 3, &[0x694C, 0x694E, 0x694F]),
    (
        "Vega10",
        9,
        0,
        0,
        &[
            0x6860, 0x6861, 0x6862, 0x6863, 0x6864, 0x6867, 0x6868, 0x6869, 0x686A, 0x686B, 0x686C,
            0x686D, 0x686E, 0x687F,
        ],
    ),
    ("Vega12", 9, 0, 4, &[0x69A0, 0x69A1, 0x69A2, 0x69A3, 0x69AF]),
    ("Raven", 9, 0, 2, &[0x15DD, 0x15D8]),
    (
        "Vega20",
        9,
        0,
        6,
        &[0x66A0, 0x66A1, 0x66A2, 0x66A3, 0x66A4, 0x66A7, 0x66AF],
    ),
    ("Arcturus", 9, 0, 8, &[0x7388, 0x738C, 0x738E, 0x7390]),
    ("Aldebaran", 9, 0, 10, &[0x7408, 0x740C, 0x740F, 0x7410]),
    ("Renoir", 9, 0, 12, &[0x15E7, 0x1636, 0x1638, 0x164C]),
    (
        "Navi10",
        10,
        1,
        0,
        &[0x7310, 0x7312, 0x7318, 0x731A, 0x731E, 0x731F],
    ),
    (
        "cyan_skillfish",
        10,
        1,
        3,
        &[0x13F9, 0x13FA, 0x13FB, 0x13FC, 0x13FE, 0x143F],
    ),
    ("Navi14", 10, 1, 2, &[0x7340, 0x7341, 0x7347]),
    ("Navi12", 10, 1, 1, &[0x7360, 0x7362]),
    (
        "SIENNA_CICHLID",
        10,
        3,
        0,
        &[
            0x73A0, 0x73A1, 0x73A2, 0x73A3, 0x73A5, 0x73A8, 0x73A9, 0x73AC, 0x73AD, 0x73AB, 0x73AE,
            0x73BF,
        ],
    ),
    (
        "NAVY_FLOUNDER",
        10,
        3,
        1,
        &[
            0x73C0, 0x73C1, 0x73C3, 0x73DA, 0x73DB, 0x73DC, 0x73DD, 0x73DE, 0x73DF,
        ],
    ),
    (
        "DIMGREY_CAVEFISH",
        10,
        3,
        2,
        &[
            0x73E0, 0x73E1, 0x73E2, 0x73E8, 0x73E9, 0x73EA, 0x73EB, 0x73EC, 0x73ED, 0x73EF, 0x73FF,
        ],
    ),
    ("VanGogh", 10, 3, 3, &[0x163F]),
    (
        "BEIGE_GOBY",
        10,
        3,
        4,
        &[0x7420, 0x7421, 0x7422, 0x7423, 0x743F],
    ),
    ("YELLOW_CARP", 10, 3, 5, &[0x164D, 0x1681]),
];

/// Looks `device_id` up in the C library's device-id table.
pub fn lookup_device_id(device_id: u16) -> Option<GfxIpEntry> {
    GFXIP_TABLE
        .iter()
        .find_map(|&(name, major, minor, stepping, ids)| {
            ids.contains(&device_id).then_some(GfxIpEntry {
                device_id,
                version: GfxVersion::new(major, minor, stepping),
                amd_name: name,
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        let v = GfxVersion::from_target_version(90010).unwrap();
        assert_eq!(v, GfxVersion::new(9, 0, 10));
        assert_eq!(v.name(), "gfx90a");
        assert_eq!(v.full(), 0x09000A);
        assert_eq!(GfxVersion::new(9, 4, 2).name(), "gfx942");
        assert_eq!(GfxVersion::new(11, 0, 0).name(), "gfx1100");
        assert_eq!(GfxVersion::new(10, 3, 0).name(), "gfx1030");
        assert_eq!(GfxVersion::new(9, 0, 12).name(), "gfx90c");
        assert_eq!(GfxVersion::from_target_version(0), None);
        assert_eq!(GfxVersion::new(11, 0, 0).target_version(), 110000);
    }

    #[test]
    fn table() {
        let e = lookup_device_id(0x740F).unwrap();
        assert_eq!(e.version, GfxVersion::new(9, 0, 10));
        assert_eq!(e.amd_name, "Aldebaran");
        assert_eq!(lookup_device_id(0x7388).unwrap().amd_name, "Arcturus");
        assert_eq!(lookup_device_id(0x74A1), None);
        let mut all: Vec<u16> = GFXIP_TABLE
            .iter()
            .flat_map(|e| e.4.iter().copied())
            .collect();
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n, "device ids are unique");
        assert_eq!(n, 180);
    }

    #[test]
    fn overrides() {
        assert_eq!(
            GfxVersion::parse_override("9.4.2"),
            Some(GfxVersion::new(9, 4, 2))
        );
        assert_eq!(
            GfxVersion::parse_override("11.0.0"),
            Some(GfxVersion::new(11, 0, 0))
        );
        for bad in ["", "9.4", "9.4.2.1", "64.0.0", "9.256.0", "9.4.2x", "a.b.c"] {
            assert_eq!(GfxVersion::parse_override(bad), None, "{bad}");
        }
    }

    #[test]
    fn vgpr_sizes() {
        let v = |a, b, c| GfxVersion::new(a, b, c);
        assert_eq!(v(9, 0, 10).vgpr_size_per_cu_rocm_5_2(), 0x80000);
        assert_eq!(v(9, 4, 2).vgpr_size_per_cu_rocm_5_2(), 0x40000);
        assert_eq!(v(9, 4, 2).vgpr_size_per_cu_current(), 0x80000);
        assert_eq!(v(11, 0, 0).vgpr_size_per_cu_current(), 0x60000);
        assert_eq!(v(10, 3, 0).vgpr_size_per_cu_current(), 0x40000);
        assert_eq!(v(9, 0, 12).vgpr_size_per_cu_current(), 0x40000);
    }
}
