//! What the PM4 ([`crate::pm4`]) and SDMA ([`crate::sdma`]) packet
//! formats share: the dword view a ring producer copies
//! ([`Dwords`]), the compare functions of their memory polls
//! ([`CompareFunction`]) and the error of building or decoding a packet
//! ([`PacketError`]).

use std::fmt;

/// A packet that is a whole number of little-endian dwords, in the order
/// the engine reads them from its ring.
///
/// Fixed-size packets are the whole struct; a packet with a payload
/// (SDMA `WRITE`, PM4 `WRITE_DATA`) is its head struct followed by the
/// payload dwords.
pub trait Dwords {
    /// The packet's dwords.
    fn dwords(&self) -> &[u32];
}

/// Implements [`Dwords`] and the `DWORDS` constant for a `#[repr(C)]`
/// packet struct of `$n` `u32`-sized fields (the sizes are checked at
/// compile time by `transmute_ref!`).
macro_rules! dword_packet {
    ($($t:ty = $n:literal),+ $(,)?) => {$(
        impl $t {
            /// Length of the packet in dwords.
            pub const DWORDS: usize = $n;
        }

        impl $crate::packet::Dwords for $t {
            fn dwords(&self) -> &[u32] {
                let d: &[u32; $n] = zerocopy::transmute_ref!(self);
                d
            }
        }
    )+};
}
pub(crate) use dword_packet;

/// The compare function of a memory poll: PM4 `WAIT_REG_MEM` (`function`,
/// bits 2:0 of its second dword) and SDMA `POLL_REGMEM` (`func`, header
/// bits 30:28) encode it the same way (kfdtest's
/// `MEC_WAIT_REG_MEM_function_enum`, ROCr's `sdma_registers.h`). The poll
/// ends when `(value & mask) <function> reference` holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum CompareFunction {
    /// Always passes.
    Always = 0,
    /// `value < reference`.
    Less = 1,
    /// `value <= reference`.
    LessEqual = 2,
    /// `value == reference`.
    Equal = 3,
    /// `value != reference`.
    NotEqual = 4,
    /// `value >= reference`.
    GreaterEqual = 5,
    /// `value > reference`.
    Greater = 6,
}

impl CompareFunction {
    /// The function of a 3-bit field value (`None`: 7, reserved).
    pub fn from_bits(bits: u32) -> Option<CompareFunction> {
        use CompareFunction::*;
        Some(match bits {
            0 => Always,
            1 => Less,
            2 => LessEqual,
            3 => Equal,
            4 => NotEqual,
            5 => GreaterEqual,
            6 => Greater,
            _ => return None,
        })
    }
}

/// Why a packet could not be built or decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PacketError {
    /// A value does not fit the field that carries it (a byte count, a
    /// dword count, an address above the field's width).
    Range {
        /// The packet (`"COPY_LINEAR"`, `"INDIRECT_BUFFER"`, ...).
        packet: &'static str,
        /// The field.
        field: &'static str,
        /// The value asked for.
        value: u64,
        /// The smallest value the field takes.
        min: u64,
        /// The largest value the field takes.
        max: u64,
    },
    /// An address or size lacks the alignment the field needs (its low
    /// bits are not part of it).
    Misaligned {
        /// The packet.
        packet: &'static str,
        /// The field.
        field: &'static str,
        /// The value asked for.
        value: u64,
        /// The alignment in bytes.
        align: u64,
    },
    /// The dwords end before the packet does.
    Truncated {
        /// The packet.
        packet: &'static str,
        /// Dwords the packet needs.
        need: usize,
        /// Dwords there are.
        got: usize,
    },
    /// An SDMA header whose op (or op and sub-op) has no known format.
    UnknownSdma {
        /// The op (header bits 7:0).
        op: u32,
        /// The sub-op (header bits 15:8).
        sub_op: u32,
    },
    /// A PM4 header of type 0 or 1, which a compute queue's CP does not
    /// parse.
    Pm4Type {
        /// The header dword.
        header: u32,
    },
}

impl PacketError {
    /// `Range` unless `min <= value <= max`.
    pub(crate) fn check_range(
        packet: &'static str,
        field: &'static str,
        value: u64,
        min: u64,
        max: u64,
    ) -> Result<(), PacketError> {
        if (min..=max).contains(&value) {
            Ok(())
        } else {
            Err(PacketError::Range {
                packet,
                field,
                value,
                min,
                max,
            })
        }
    }

    /// `Misaligned` unless `value` is a multiple of `align` (a power of
    /// two).
    pub(crate) fn check_align(
        packet: &'static str,
        field: &'static str,
        value: u64,
        align: u64,
    ) -> Result<(), PacketError> {
        if value & (align - 1) == 0 {
            Ok(())
        } else {
            Err(PacketError::Misaligned {
                packet,
                field,
                value,
                align,
            })
        }
    }
}

impl fmt::Display for PacketError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PacketError::Range {
                packet,
                field,
                value,
                min,
                max,
            } => write!(
                f,
                "{packet}: {field} {value:#x} is outside {min:#x}..={max:#x}"
            ),
            PacketError::Misaligned {
                packet,
                field,
                value,
                align,
            } => write!(
                f,
                "{packet}: {field} {value:#x} is not {align}-byte aligned"
            ),
            PacketError::Truncated { packet, need, got } => {
                write!(f, "short {packet}: {got} of {need} dwords")
            }
            PacketError::UnknownSdma { op, sub_op } => match crate::sdma::op_name(*op) {
                Some(name) => write!(f, "SDMA {name} sub-op {sub_op} not supported"),
                None => write!(f, "SDMA op {op} sub-op {sub_op} not supported"),
            },
            PacketError::Pm4Type { header } => write!(f, "bad PM4 header {header:#010x}"),
        }
    }
}

impl std::error::Error for PacketError {}

/// The low and high dwords of a 64-bit value.
pub(crate) fn split(v: u64) -> (u32, u32) {
    (v as u32, (v >> 32) as u32)
}

/// The 64-bit value of a low and a high dword.
pub(crate) fn join(lo: u32, hi: u32) -> u64 {
    u64::from(lo) | u64::from(hi) << 32
}

/// Reads a packet struct from the front of `dws`.
pub(crate) fn read<T: zerocopy::FromBytes>(
    packet: &'static str,
    dws: &[u32],
) -> Result<T, PacketError> {
    use zerocopy::IntoBytes;
    T::read_from_prefix(dws.as_bytes())
        .map(|(t, _)| t)
        .map_err(|_| PacketError::Truncated {
            packet,
            need: std::mem::size_of::<T>() / 4,
            got: dws.len(),
        })
}
