//! The `NT_AMDGPU_METADATA` note: one msgpack map with the key
//! `amdhsa.kernels` (code object v3+; LLVM's AMDGPUUsage, "Code Object
//! Metadata"), decoded into typed kernel and argument records.
//!
//! Keys the crate has no use for are skipped; a required key that is
//! absent, or a value of the wrong type, is an error naming where.

use std::fmt;

use rmpv::Value;

use crate::Error;

/// Deepest msgpack nesting accepted: the format needs four levels
/// (root, kernel list, kernel, argument list, argument) plus small arrays.
const MAX_DEPTH: usize = 16;

/// The decoded metadata of a code object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metadata {
    /// `amdhsa.version` (`[1, 1]` for code object v4, `[1, 2]` for v5 and
    /// v6), when present.
    pub version: Option<[u64; 2]>,
    /// `amdhsa.target`, e.g. `amdgcn-amd-amdhsa--gfx90a`, when present.
    pub target: Option<String>,
    /// `amdhsa.kernels`, in the note's order.
    pub kernels: Vec<KernelMetadata>,
}

/// One entry of `amdhsa.kernels`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelMetadata {
    /// `.name`: the source-level kernel name.
    pub name: String,
    /// `.symbol`: the kernel descriptor symbol, `<name>.kd`.
    pub symbol: String,
    /// `.kernarg_segment_size`: bytes of the kernarg buffer, explicit and
    /// hidden arguments together.
    pub kernarg_segment_size: u32,
    /// `.kernarg_segment_align`: alignment of the kernarg buffer (a power of
    /// two).
    pub kernarg_segment_align: u32,
    /// `.group_segment_fixed_size`: static LDS bytes per workgroup.
    pub group_segment_fixed_size: u32,
    /// `.private_segment_fixed_size`: static scratch bytes per work-item.
    pub private_segment_fixed_size: u32,
    /// `.wavefront_size`: 32 or 64.
    pub wavefront_size: u32,
    /// `.sgpr_count`: scalar registers per wave.
    pub sgpr_count: u32,
    /// `.vgpr_count`: vector registers per work-item.
    pub vgpr_count: u32,
    /// `.agpr_count` (gfx90a+), when present.
    pub agpr_count: Option<u32>,
    /// `.max_flat_workgroup_size`, when present.
    pub max_flat_workgroup_size: Option<u32>,
    /// `.args`: explicit and hidden arguments in the note's order (LLVM
    /// writes them by offset); empty when the key is absent.
    pub args: Vec<KernelArg>,
}

impl KernelMetadata {
    /// The explicit (source-level) arguments, in order: the ones the
    /// caller sets by index when building the kernarg buffer.
    pub fn explicit_args(&self) -> impl Iterator<Item = &KernelArg> {
        self.args.iter().filter(|a| !a.value_kind.is_hidden())
    }

    /// The hidden arguments, which the dispatch fills.
    pub fn hidden_args(&self) -> impl Iterator<Item = &KernelArg> {
        self.args.iter().filter(|a| a.value_kind.is_hidden())
    }
}

/// One entry of a kernel's `.args`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelArg {
    /// `.name`, when the compiler kept it.
    pub name: Option<String>,
    /// `.type_name`, when the compiler kept it.
    pub type_name: Option<String>,
    /// `.offset`: byte offset in the kernarg segment.
    pub offset: u32,
    /// `.size`: bytes.
    pub size: u32,
    /// `.value_kind`.
    pub value_kind: ValueKind,
    /// `.address_space` of a pointer argument (`global`, `local`...).
    pub address_space: Option<String>,
}

/// `.value_kind` of a kernel argument: what the argument holds, and for the
/// `hidden_*` kinds, which value the dispatcher puts there.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ValueKind {
    /// `by_value`: the value itself.
    ByValue,
    /// `global_buffer`: a global memory address.
    GlobalBuffer,
    /// `dynamic_shared_pointer`: an LDS offset for a dynamically sized
    /// group segment variable.
    DynamicSharedPointer,
    /// `sampler`: an image sampler handle.
    Sampler,
    /// `image`: an image handle.
    Image,
    /// `pipe`: a pipe address.
    Pipe,
    /// `queue`: a device queue address.
    Queue,
    /// `hidden_global_offset_x`: the OpenCL global offset, X.
    HiddenGlobalOffsetX,
    /// `hidden_global_offset_y`.
    HiddenGlobalOffsetY,
    /// `hidden_global_offset_z`.
    HiddenGlobalOffsetZ,
    /// `hidden_none`: present, unused; zero.
    HiddenNone,
    /// `hidden_printf_buffer`: the printf buffer address.
    HiddenPrintfBuffer,
    /// `hidden_hostcall_buffer`: the hostcall buffer address.
    HiddenHostcallBuffer,
    /// `hidden_default_queue`: the default device queue address.
    HiddenDefaultQueue,
    /// `hidden_completion_action`: the completion action address.
    HiddenCompletionAction,
    /// `hidden_multigrid_sync_arg`: the multi-grid sync address.
    HiddenMultigridSyncArg,
    /// `hidden_heap_v1`: the device malloc heap address (v5).
    HiddenHeapV1,
    /// `hidden_block_count_x`: whole workgroups in X (v5).
    HiddenBlockCountX,
    /// `hidden_block_count_y`.
    HiddenBlockCountY,
    /// `hidden_block_count_z`.
    HiddenBlockCountZ,
    /// `hidden_group_size_x`: workgroup size in X (v5).
    HiddenGroupSizeX,
    /// `hidden_group_size_y`.
    HiddenGroupSizeY,
    /// `hidden_group_size_z`.
    HiddenGroupSizeZ,
    /// `hidden_remainder_x`: size of the partial last workgroup in X, 0 if
    /// none (v5).
    HiddenRemainderX,
    /// `hidden_remainder_y`.
    HiddenRemainderY,
    /// `hidden_remainder_z`.
    HiddenRemainderZ,
    /// `hidden_grid_dims`: dimensions of the dispatch, 1 to 3 (v5).
    HiddenGridDims,
    /// `hidden_private_base`: the private aperture base (v5).
    HiddenPrivateBase,
    /// `hidden_shared_base`: the shared aperture base (v5).
    HiddenSharedBase,
    /// `hidden_queue_ptr`: the `amd_queue_t` address (v5).
    HiddenQueuePtr,
    /// `hidden_dynamic_lds_size`: dynamic LDS bytes of the dispatch (v5).
    HiddenDynamicLdsSize,
    /// A kind this crate does not know, as written. Kinds starting with
    /// `hidden_` count as hidden (and are zeroed in kernarg buffers).
    Unknown(String),
}

/// The known kinds and their metadata spelling.
const VALUE_KINDS: &[(&str, ValueKind)] = &[
    ("by_value", ValueKind::ByValue),
    ("global_buffer", ValueKind::GlobalBuffer),
    ("dynamic_shared_pointer", ValueKind::DynamicSharedPointer),
    ("sampler", ValueKind::Sampler),
    ("image", ValueKind::Image),
    ("pipe", ValueKind::Pipe),
    ("queue", ValueKind::Queue),
    ("hidden_global_offset_x", ValueKind::HiddenGlobalOffsetX),
    ("hidden_global_offset_y", ValueKind::HiddenGlobalOffsetY),
    ("hidden_global_offset_z", ValueKind::HiddenGlobalOffsetZ),
    ("hidden_none", ValueKind::HiddenNone),
    ("hidden_printf_buffer", ValueKind::HiddenPrintfBuffer),
    ("hidden_hostcall_buffer", ValueKind::HiddenHostcallBuffer),
    ("hidden_default_queue", ValueKind::HiddenDefaultQueue),
    (
        "hidden_completion_action",
        ValueKind::HiddenCompletionAction,
    ),
    (
        "hidden_multigrid_sync_arg",
        ValueKind::HiddenMultigridSyncArg,
    ),
    ("hidden_heap_v1", ValueKind::HiddenHeapV1),
    ("hidden_block_count_x", ValueKind::HiddenBlockCountX),
    ("hidden_block_count_y", ValueKind::HiddenBlockCountY),
    ("hidden_block_count_z", ValueKind::HiddenBlockCountZ),
    ("hidden_group_size_x", ValueKind::HiddenGroupSizeX),
    ("hidden_group_size_y", ValueKind::HiddenGroupSizeY),
    ("hidden_group_size_z", ValueKind::HiddenGroupSizeZ),
    ("hidden_remainder_x", ValueKind::HiddenRemainderX),
    ("hidden_remainder_y", ValueKind::HiddenRemainderY),
    ("hidden_remainder_z", ValueKind::HiddenRemainderZ),
    ("hidden_grid_dims", ValueKind::HiddenGridDims),
    ("hidden_private_base", ValueKind::HiddenPrivateBase),
    ("hidden_shared_base", ValueKind::HiddenSharedBase),
    ("hidden_queue_ptr", ValueKind::HiddenQueuePtr),
    ("hidden_dynamic_lds_size", ValueKind::HiddenDynamicLdsSize),
];

impl ValueKind {
    /// The kind spelled `s` in the metadata; unknown spellings are kept.
    pub fn parse(s: &str) -> Self {
        VALUE_KINDS
            .iter()
            .find(|(name, _)| *name == s)
            .map(|(_, kind)| kind.clone())
            .unwrap_or_else(|| ValueKind::Unknown(s.to_string()))
    }

    /// The metadata spelling.
    pub fn as_str(&self) -> &str {
        match self {
            ValueKind::Unknown(s) => s,
            known => VALUE_KINDS
                .iter()
                .find(|(_, kind)| kind == known)
                .map_or("", |(name, _)| name),
        }
    }

    /// Whether the dispatcher, not the caller, supplies the value.
    pub fn is_hidden(&self) -> bool {
        self.as_str().starts_with("hidden_")
    }
}

impl fmt::Display for ValueKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Metadata {
    /// Decodes the descriptor of an `NT_AMDGPU_METADATA` note: exactly one
    /// msgpack map.
    pub fn from_msgpack(bytes: &[u8]) -> Result<Self, Error> {
        let mut rest = bytes;
        let root = rmpv::decode::read_value_with_max_depth(&mut rest, MAX_DEPTH)
            .map_err(|e| Error::Msgpack(e.to_string()))?;
        if !rest.is_empty() {
            return Err(Error::Msgpack(format!(
                "{} bytes after the metadata map",
                rest.len()
            )));
        }
        let root = Map::new(&root, "the root".to_string())?;
        let version = match root.get("amdhsa.version") {
            None => None,
            Some(v) => {
                let at = root.at("amdhsa.version");
                let pair = v
                    .as_array()
                    .filter(|a| a.len() == 2)
                    .ok_or_else(|| Error::bad_value(&at, "an array [major, minor]"))?;
                let num = |v: &Value| {
                    v.as_u64()
                        .ok_or_else(|| Error::bad_value(&at, "unsigned integers"))
                };
                Some([num(&pair[0])?, num(&pair[1])?])
            }
        };
        let target = root.opt_str("amdhsa.target")?;
        let kernels = root
            .array("amdhsa.kernels")?
            .iter()
            .enumerate()
            .map(|(i, k)| KernelMetadata::from_value(k, format!("amdhsa.kernels[{i}]")))
            .collect::<Result<_, _>>()?;
        Ok(Metadata {
            version,
            target,
            kernels,
        })
    }
}

impl KernelMetadata {
    /// Decodes one kernel map found at `at`.
    fn from_value(value: &Value, at: String) -> Result<Self, Error> {
        let map = Map::new(value, at)?;
        let args = match map.get(".args") {
            None => Vec::new(),
            Some(_) => map
                .array(".args")?
                .iter()
                .enumerate()
                .map(|(i, a)| KernelArg::from_value(a, format!("{}.args[{i}]", map.at)))
                .collect::<Result<_, _>>()?,
        };
        let kernel = KernelMetadata {
            name: map.str(".name")?,
            symbol: map.str(".symbol")?,
            kernarg_segment_size: map.u32(".kernarg_segment_size")?,
            kernarg_segment_align: map.u32(".kernarg_segment_align")?,
            group_segment_fixed_size: map.u32(".group_segment_fixed_size")?,
            private_segment_fixed_size: map.u32(".private_segment_fixed_size")?,
            wavefront_size: map.u32(".wavefront_size")?,
            sgpr_count: map.u32(".sgpr_count")?,
            vgpr_count: map.u32(".vgpr_count")?,
            agpr_count: map.opt_u32(".agpr_count")?,
            max_flat_workgroup_size: map.opt_u32(".max_flat_workgroup_size")?,
            args,
        };
        if !kernel.kernarg_segment_align.is_power_of_two() {
            return Err(Error::bad_value(
                map.at(".kernarg_segment_align"),
                "a power of two",
            ));
        }
        for (index, arg) in kernel.args.iter().enumerate() {
            if u64::from(arg.offset) + u64::from(arg.size) > u64::from(kernel.kernarg_segment_size)
            {
                return Err(Error::ArgOutsideSegment {
                    kernel: kernel.name.clone(),
                    index,
                    offset: arg.offset,
                    size: arg.size,
                    segment_size: kernel.kernarg_segment_size,
                });
            }
        }
        Ok(kernel)
    }
}

impl KernelArg {
    /// Decodes one argument map found at `at`.
    fn from_value(value: &Value, at: String) -> Result<Self, Error> {
        let map = Map::new(value, at)?;
        Ok(KernelArg {
            name: map.opt_str(".name")?,
            type_name: map.opt_str(".type_name")?,
            offset: map.u32(".offset")?,
            size: map.u32(".size")?,
            value_kind: ValueKind::parse(&map.str(".value_kind")?),
            address_space: map.opt_str(".address_space")?,
        })
    }
}

/// A msgpack map with string keys, and where it is (for errors).
struct Map<'v> {
    /// The entries.
    entries: &'v [(Value, Value)],
    /// Its place in the metadata.
    at: String,
}

impl<'v> Map<'v> {
    /// `value` as a map, or an error naming `at`.
    fn new(value: &'v Value, at: String) -> Result<Self, Error> {
        match value.as_map() {
            Some(entries) => Ok(Map { entries, at }),
            None => Err(Error::bad_value(at, "a map")),
        }
    }

    /// Where `key` is.
    fn at(&self, key: &str) -> String {
        if self.at == "the root" {
            key.to_string()
        } else {
            format!("{}{key}", self.at)
        }
    }

    /// The value of `key`, if present.
    fn get(&self, key: &str) -> Option<&'v Value> {
        self.entries
            .iter()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(_, v)| v)
    }

    /// The value of a required `key`.
    fn required(&self, key: &'static str) -> Result<&'v Value, Error> {
        self.get(key).ok_or_else(|| Error::MissingKey {
            at: self.at.clone(),
            key,
        })
    }

    /// A required array.
    fn array(&self, key: &'static str) -> Result<&'v [Value], Error> {
        self.required(key)?
            .as_array()
            .map(Vec::as_slice)
            .ok_or_else(|| Error::bad_value(self.at(key), "an array"))
    }

    /// A required string.
    fn str(&self, key: &'static str) -> Result<String, Error> {
        self.required(key)?
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| Error::bad_value(self.at(key), "a UTF-8 string"))
    }

    /// An optional string.
    fn opt_str(&self, key: &'static str) -> Result<Option<String>, Error> {
        self.get(key).map(|_| self.str(key)).transpose()
    }

    /// A required unsigned integer that fits 32 bits.
    fn u32(&self, key: &'static str) -> Result<u32, Error> {
        self.required(key)?
            .as_u64()
            .and_then(|v| u32::try_from(v).ok())
            .ok_or_else(|| Error::bad_value(self.at(key), "an unsigned 32-bit integer"))
    }

    /// An optional unsigned 32-bit integer.
    fn opt_u32(&self, key: &'static str) -> Result<Option<u32>, Error> {
        self.get(key).map(|_| self.u32(key)).transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmpv::Value as V;

    /// A msgpack map from string keys.
    fn map(entries: Vec<(&str, V)>) -> V {
        V::Map(entries.into_iter().map(|(k, v)| (V::from(k), v)).collect())
    }

    fn arg(offset: u32, size: u32, kind: &str) -> V {
        map(vec![
            (".offset", V::from(offset)),
            (".size", V::from(size)),
            (".value_kind", V::from(kind)),
        ])
    }

    fn kernel(args: Vec<V>) -> Vec<(&'static str, V)> {
        vec![
            (".name", V::from("k")),
            (".symbol", V::from("k.kd")),
            (".kernarg_segment_size", V::from(16)),
            (".kernarg_segment_align", V::from(8)),
            (".group_segment_fixed_size", V::from(0)),
            (".private_segment_fixed_size", V::from(0)),
            (".wavefront_size", V::from(64)),
            (".sgpr_count", V::from(8)),
            (".vgpr_count", V::from(4)),
            (".args", V::Array(args)),
        ]
    }

    fn encode(root: &V) -> Vec<u8> {
        let mut out = Vec::new();
        rmpv::encode::write_value(&mut out, root).unwrap();
        out
    }

    fn root(kernels: Vec<V>) -> V {
        map(vec![
            ("amdhsa.version", V::Array(vec![V::from(1), V::from(2)])),
            ("amdhsa.kernels", V::Array(kernels)),
        ])
    }

    #[test]
    fn value_kinds_round_trip_and_unknown_hidden_kinds_stay_hidden() {
        for (name, kind) in VALUE_KINDS {
            assert_eq!(ValueKind::parse(name), *kind);
            assert_eq!(kind.as_str(), *name);
            assert_eq!(kind.is_hidden(), name.starts_with("hidden_"));
        }
        assert_eq!(
            ValueKind::parse("hidden_future"),
            ValueKind::Unknown("hidden_future".into())
        );
        assert!(ValueKind::parse("hidden_future").is_hidden());
        assert!(!ValueKind::parse("future").is_hidden());
    }

    #[test]
    fn decodes_a_kernel_and_splits_explicit_from_hidden() {
        let bytes = encode(&root(vec![map(kernel(vec![
            arg(0, 8, "global_buffer"),
            arg(8, 8, "hidden_global_offset_x"),
        ]))]));
        let md = Metadata::from_msgpack(&bytes).unwrap();
        assert_eq!(md.version, Some([1, 2]));
        assert_eq!(md.target, None);
        let k = &md.kernels[0];
        assert_eq!((k.name.as_str(), k.symbol.as_str()), ("k", "k.kd"));
        assert_eq!((k.kernarg_segment_size, k.wavefront_size), (16, 64));
        assert_eq!(k.explicit_args().count(), 1);
        assert_eq!(
            k.hidden_args().map(|a| a.offset).collect::<Vec<_>>(),
            vec![8]
        );
    }

    #[test]
    fn missing_required_key_is_named() {
        let mut k = kernel(vec![]);
        k.retain(|(key, _)| *key != ".vgpr_count");
        let err = Metadata::from_msgpack(&encode(&root(vec![map(k)]))).unwrap_err();
        assert_eq!(
            err,
            Error::MissingKey {
                at: "amdhsa.kernels[0]".into(),
                key: ".vgpr_count"
            }
        );
        let err = Metadata::from_msgpack(&encode(&map(vec![]))).unwrap_err();
        assert_eq!(
            err,
            Error::MissingKey {
                at: "the root".into(),
                key: "amdhsa.kernels"
            }
        );
    }

    #[test]
    fn wrong_types_and_ranges_are_named() {
        let mut k = kernel(vec![arg(0, 8, "by_value")]);
        k[2] = (".kernarg_segment_size", V::from("big"));
        let err = Metadata::from_msgpack(&encode(&root(vec![map(k)]))).unwrap_err();
        assert_eq!(
            err,
            Error::bad_value(
                "amdhsa.kernels[0].kernarg_segment_size",
                "an unsigned 32-bit integer"
            )
        );
        let k = kernel(vec![map(vec![
            (".offset", V::from(-1)),
            (".size", V::from(4)),
            (".value_kind", V::from("by_value")),
        ])]);
        let err = Metadata::from_msgpack(&encode(&root(vec![map(k)]))).unwrap_err();
        assert_eq!(
            err,
            Error::bad_value(
                "amdhsa.kernels[0].args[0].offset",
                "an unsigned 32-bit integer"
            )
        );
        let err = Metadata::from_msgpack(&encode(&V::from(3))).unwrap_err();
        assert_eq!(err, Error::bad_value("the root", "a map"));
        let mut k = kernel(vec![]);
        k[3] = (".kernarg_segment_align", V::from(12));
        let err = Metadata::from_msgpack(&encode(&root(vec![map(k)]))).unwrap_err();
        assert_eq!(
            err,
            Error::bad_value("amdhsa.kernels[0].kernarg_segment_align", "a power of two")
        );
    }

    #[test]
    fn argument_past_the_segment_is_refused() {
        let k = kernel(vec![arg(12, 8, "global_buffer")]);
        let err = Metadata::from_msgpack(&encode(&root(vec![map(k)]))).unwrap_err();
        assert_eq!(
            err,
            Error::ArgOutsideSegment {
                kernel: "k".into(),
                index: 0,
                offset: 12,
                size: 8,
                segment_size: 16
            }
        );
    }

    #[test]
    fn truncated_and_padded_msgpack_are_errors_at_every_length() {
        let bytes = encode(&root(vec![map(kernel(vec![arg(0, 8, "by_value")]))]));
        for len in 0..bytes.len() {
            let err = Metadata::from_msgpack(&bytes[..len]).unwrap_err();
            assert!(matches!(err, Error::Msgpack(_)), "{len}: {err:?}");
        }
        let mut padded = bytes.clone();
        padded.push(0);
        assert_eq!(
            Metadata::from_msgpack(&padded),
            Err(Error::Msgpack("1 bytes after the metadata map".into()))
        );
    }

    #[test]
    fn deep_nesting_is_refused_not_recursed() {
        // 10 000 one-element fixarrays around a zero.
        let mut bytes = vec![0x91; 10_000];
        bytes.push(0);
        assert!(matches!(
            Metadata::from_msgpack(&bytes),
            Err(Error::Msgpack(_))
        ));
    }
}
