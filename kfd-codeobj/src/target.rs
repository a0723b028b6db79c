//! The code object's target: processor and the XNACK / SRAMECC settings
//! that the ELF header's `e_flags` carry from code object v4 on, and the
//! target id string (`gfx90a:xnack-`) that names them.

use std::fmt;

use crate::Error;

/// `EF_AMDGPU_MACH`: the processor field of `e_flags`.
const EF_AMDGPU_MACH: u32 = 0x0ff;
/// `EF_AMDGPU_FEATURE_XNACK_V4`: the XNACK field (v4+).
const EF_AMDGPU_FEATURE_XNACK_V4: u32 = 0x300;
/// `EF_AMDGPU_FEATURE_SRAMECC_V4`: the SRAMECC field (v4+).
const EF_AMDGPU_FEATURE_SRAMECC_V4: u32 = 0xc00;
/// `EF_AMDGPU_GENERIC_VERSION`: the generic processor's version (v6).
const EF_AMDGPU_GENERIC_VERSION: u32 = 0xff00_0000;

/// `EF_AMDGPU_MACH` values of the AMDGCN processors (LLVM's AMDGPUUsage,
/// "AMDGPU ELF Header e_flags"). Reserved values are absent.
const PROCESSORS: &[(u32, &str)] = &[
    (0x020, "gfx600"),
    (0x021, "gfx601"),
    (0x022, "gfx700"),
    (0x023, "gfx701"),
    (0x024, "gfx702"),
    (0x025, "gfx703"),
    (0x026, "gfx704"),
    (0x028, "gfx801"),
    (0x029, "gfx802"),
    (0x02a, "gfx803"),
    (0x02b, "gfx810"),
    (0x02c, "gfx900"),
    (0x02d, "gfx902"),
    (0x02e, "gfx904"),
    (0x02f, "gfx906"),
    (0x030, "gfx908"),
    (0x031, "gfx909"),
    (0x032, "gfx90c"),
    (0x033, "gfx1010"),
    (0x034, "gfx1011"),
    (0x035, "gfx1012"),
    (0x036, "gfx1030"),
    (0x037, "gfx1031"),
    (0x038, "gfx1032"),
    (0x039, "gfx1033"),
    (0x03a, "gfx602"),
    (0x03b, "gfx705"),
    (0x03c, "gfx805"),
    (0x03d, "gfx1035"),
    (0x03e, "gfx1034"),
    (0x03f, "gfx90a"),
    (0x040, "gfx940"),
    (0x041, "gfx1100"),
    (0x042, "gfx1013"),
    (0x043, "gfx1150"),
    (0x044, "gfx1103"),
    (0x045, "gfx1036"),
    (0x046, "gfx1101"),
    (0x047, "gfx1102"),
    (0x048, "gfx1200"),
    (0x04a, "gfx1151"),
    (0x04b, "gfx941"),
    (0x04c, "gfx942"),
    (0x04e, "gfx1201"),
    (0x04f, "gfx950"),
    (0x051, "gfx9-generic"),
    (0x052, "gfx10-1-generic"),
    (0x053, "gfx10-3-generic"),
    (0x054, "gfx11-generic"),
    (0x055, "gfx1152"),
    (0x058, "gfx1153"),
    (0x059, "gfx12-generic"),
    (0x05f, "gfx9-4-generic"),
];

/// The setting of a target feature (XNACK replay, SRAMECC) that a code
/// object was compiled for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Feature {
    /// The processor does not have the feature.
    Unsupported,
    /// The code runs with the feature on or off (no suffix in the target id).
    Any,
    /// The code needs the feature off (`-` in the target id).
    Off,
    /// The code needs the feature on (`+` in the target id).
    On,
}

impl Feature {
    /// Decodes a two-bit v4+ feature field (0 unsupported, 1 any, 2 off,
    /// 3 on).
    fn from_field(bits: u32) -> Self {
        match bits & 3 {
            0 => Feature::Unsupported,
            1 => Feature::Any,
            2 => Feature::Off,
            _ => Feature::On,
        }
    }

    /// The target id suffix: `+`, `-` or nothing.
    fn suffix(self) -> Option<char> {
        match self {
            Feature::On => Some('+'),
            Feature::Off => Some('-'),
            Feature::Unsupported | Feature::Any => None,
        }
    }
}

/// What a code object runs on, decoded from `e_flags` (code object v4+).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TargetId {
    /// The processor (`gfx90a`, `gfx942`, `gfx9-generic`...).
    pub processor: &'static str,
    /// `EF_AMDGPU_MACH`.
    pub mach: u32,
    /// XNACK replay.
    pub xnack: Feature,
    /// SRAM ECC.
    pub sramecc: Feature,
    /// `EF_AMDGPU_GENERIC_VERSION` (code object v6, generic processors);
    /// 0 when absent.
    pub generic_version: u8,
}

impl TargetId {
    /// Decodes the `e_flags` of a v4+ code object.
    pub fn from_e_flags(flags: u32) -> Result<Self, Error> {
        let mach = flags & EF_AMDGPU_MACH;
        let processor = PROCESSORS
            .iter()
            .find(|(m, _)| *m == mach)
            .map(|(_, name)| *name)
            .ok_or(Error::UnknownProcessor { flags, mach })?;
        Ok(TargetId {
            processor,
            mach,
            xnack: Feature::from_field((flags & EF_AMDGPU_FEATURE_XNACK_V4) >> 8),
            sramecc: Feature::from_field((flags & EF_AMDGPU_FEATURE_SRAMECC_V4) >> 10),
            generic_version: ((flags & EF_AMDGPU_GENERIC_VERSION) >> 24) as u8,
        })
    }
}

/// The target id: the processor, then the features that are on or off in
/// alphabetical order (`gfx90a`, `gfx90a:xnack-`, `gfx942:sramecc+:xnack-`).
impl fmt::Display for TargetId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.processor)?;
        for (name, feature) in [("sramecc", self.sramecc), ("xnack", self.xnack)] {
            if let Some(sign) = feature.suffix() {
                write!(f, ":{name}{sign}")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gfx90a_any_any_is_bare_processor() {
        // clang -mcpu=gfx90a: mach 0x3f, xnack any (0x100), sramecc any (0x400).
        let t = TargetId::from_e_flags(0x53f).unwrap();
        assert_eq!(t.processor, "gfx90a");
        assert_eq!((t.xnack, t.sramecc), (Feature::Any, Feature::Any));
        assert_eq!(t.to_string(), "gfx90a");
    }

    #[test]
    fn features_print_in_alphabetical_order() {
        // gfx942, xnack off (0x200), sramecc on (0xc00).
        let t = TargetId::from_e_flags(0x04c | 0x200 | 0xc00).unwrap();
        assert_eq!(t.to_string(), "gfx942:sramecc+:xnack-");
        let t = TargetId::from_e_flags(0x03f | 0x200 | 0x400).unwrap();
        assert_eq!(t.to_string(), "gfx90a:xnack-");
        // gfx1100 has neither feature.
        let t = TargetId::from_e_flags(0x041).unwrap();
        assert_eq!(
            (t.xnack, t.sramecc),
            (Feature::Unsupported, Feature::Unsupported)
        );
        assert_eq!(t.to_string(), "gfx1100");
    }

    #[test]
    fn generic_version_is_the_top_byte() {
        let t = TargetId::from_e_flags(0x0100_0051).unwrap();
        assert_eq!((t.processor, t.generic_version), ("gfx9-generic", 1));
    }

    #[test]
    fn unknown_and_reserved_machs_are_errors() {
        for flags in [0x000, 0x027, 0x049, 0x0ff] {
            assert_eq!(
                TargetId::from_e_flags(flags),
                Err(Error::UnknownProcessor { flags, mach: flags })
            );
        }
    }
}
