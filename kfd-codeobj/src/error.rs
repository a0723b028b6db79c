//! The one error type of the crate: what was wrong with the code object,
//! its metadata, the load request or the kernel arguments.

use crate::ValueKind;

/// Why a code object could not be parsed or loaded, or a kernel argument
/// buffer could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The ELF reader refused the bytes: too short, a table that points
    /// outside the file, a bad entry size. `what` names the structure that
    /// was being read.
    #[error("malformed ELF ({what}): {reason}")]
    Elf {
        /// The structure being read (`"file header"`, `"program headers"`...).
        what: &'static str,
        /// The ELF reader's message.
        reason: String,
    },
    /// The bytes do not start with the ELF magic (`0x7f` `E` `L` `F`).
    #[error("not an ELF file (no ELF magic)")]
    NotElf,
    /// The file is ELF but not ELF64 little-endian, the only form of AMDGPU
    /// code objects.
    #[error("not an ELF64 little-endian file (class {class}, data {data})")]
    NotElf64Le {
        /// `e_ident[EI_CLASS]`.
        class: u8,
        /// `e_ident[EI_DATA]`.
        data: u8,
    },
    /// `e_machine` is not `EM_AMDGPU` (224).
    #[error("e_machine {0} is not EM_AMDGPU (224)")]
    WrongMachine(u16),
    /// `e_ident[EI_OSABI]` is not `ELFOSABI_AMDGPU_HSA` (64): a PAL or Mesa
    /// object, or no GPU object at all.
    #[error("OS ABI {0} is not ELFOSABI_AMDGPU_HSA (64)")]
    WrongOsAbi(u8),
    /// `e_ident[EI_ABIVERSION]` is not that of code object v4, v5 or v6.
    #[error("HSA ABI version {0} is not code object v4, v5 or v6 (2, 3 or 4)")]
    UnsupportedAbiVersion(u8),
    /// `e_type` is not `ET_DYN`: only linked code objects can be loaded
    /// (a relocatable `.o` from `-c` needs `ld.lld -shared` first).
    #[error("e_type {0} is not ET_DYN (3): link the object with ld.lld -shared")]
    NotSharedObject(u16),
    /// The `EF_AMDGPU_MACH` field of `e_flags` names no processor.
    #[error("e_flags {flags:#x}: unknown processor {mach:#04x}")]
    UnknownProcessor {
        /// The whole `e_flags`.
        flags: u32,
        /// Its `EF_AMDGPU_MACH` field.
        mach: u32,
    },
    /// No `NT_AMDGPU_METADATA` note from owner `AMDGPU`.
    #[error("no NT_AMDGPU_METADATA note")]
    NoMetadata,
    /// The metadata note is not one msgpack value.
    #[error("metadata note: msgpack: {0}")]
    Msgpack(String),
    /// A required metadata key is absent.
    #[error("metadata {at}: required key {key} is missing")]
    MissingKey {
        /// Where: `amdhsa.kernels[0]`, `amdhsa.kernels[0].args[3]`...
        at: String,
        /// The key, with its leading dot.
        key: &'static str,
    },
    /// A metadata value has the wrong msgpack type or is out of range.
    #[error("metadata {at}: expected {expected}")]
    BadValue {
        /// Where, down to the key.
        at: String,
        /// What the format requires there.
        expected: &'static str,
    },
    /// A kernel argument does not lie inside its kernel's kernarg segment.
    #[error(
        "kernel {kernel}: argument {index} at {offset}+{size} is outside the \
         {segment_size}-byte kernarg segment"
    )]
    ArgOutsideSegment {
        /// The kernel's `.name`.
        kernel: String,
        /// Index in `.args` (explicit and hidden).
        index: usize,
        /// Its `.offset`.
        offset: u32,
        /// Its `.size`.
        size: u32,
        /// The kernel's `.kernarg_segment_size`.
        segment_size: u32,
    },
    /// The kernel descriptor symbol named by a kernel's `.symbol` is not
    /// defined in the symbol tables.
    #[error("kernel {kernel}: descriptor symbol {symbol} is not defined")]
    MissingDescriptor {
        /// The kernel's `.name`.
        kernel: String,
        /// Its `.symbol`.
        symbol: String,
    },
    /// The kernel descriptor symbol is not a 64-byte object inside the
    /// loaded segments.
    #[error(
        "kernel {kernel}: descriptor symbol {symbol} (value {value:#x}, size {size}) \
         is not a 64-byte object inside a loaded segment"
    )]
    BadDescriptor {
        /// The kernel's `.name`.
        kernel: String,
        /// Its `.symbol`.
        symbol: String,
        /// `st_value`.
        value: u64,
        /// `st_size`.
        size: u64,
    },
    /// A `PT_LOAD` program header that cannot be laid out.
    #[error("PT_LOAD segment at {vaddr:#x}: {reason}")]
    BadSegment {
        /// Its `p_vaddr`.
        vaddr: u64,
        /// What is wrong.
        reason: &'static str,
    },
    /// A loaded relocation section of a type the loader does not apply
    /// (`SHT_REL`, `SHT_RELR`, `SHT_CREL`; AMDGPU code objects use
    /// `SHT_RELA`).
    #[error("relocation section type {0:#x} is not SHT_RELA")]
    UnsupportedRelocationSection(u32),
    /// The code object has no `PT_LOAD` segment.
    #[error("no PT_LOAD segment")]
    NoLoadSegments,
    /// The segments span more than the loader accepts (1 GiB).
    #[error("the load image would be {0} bytes (at most 1 GiB)")]
    ImageTooLarge(u64),
    /// The load base is not a multiple of the segments' alignment.
    #[error("load base {base:#x} is not {align:#x}-byte aligned")]
    MisalignedBase {
        /// The requested base.
        base: u64,
        /// The alignment the segments need.
        align: u64,
    },
    /// The buffer given for the load image is smaller than the layout.
    #[error("the load image needs {needed} bytes, the buffer has {got}")]
    ImageTooSmall {
        /// [`Layout::size`](crate::Layout::size).
        needed: u64,
        /// The buffer's length.
        got: usize,
    },
    /// An absolute relocation refers to a symbol the code object does not
    /// define (the loader links no other objects).
    #[error("relocation against undefined symbol {0}")]
    UndefinedSymbol(String),
    /// A relocation type the loader does not apply.
    #[error("relocation type {r_type} at {offset:#x} is not supported")]
    UnsupportedRelocation {
        /// `r_type`.
        r_type: u32,
        /// `r_offset`.
        offset: u64,
    },
    /// An `R_AMDGPU_ABS32` value does not fit 32 bits at this load base.
    #[error("relocation at {offset:#x}: value {value:#x} does not fit 32 bits")]
    RelocationOverflow {
        /// `r_offset`.
        offset: u64,
        /// The computed value.
        value: u64,
    },
    /// A relocation would patch bytes outside the load image.
    #[error("relocation at {offset:#x} lies outside the load image")]
    RelocationOutsideImage {
        /// `r_offset`.
        offset: u64,
    },
    /// An explicit argument index past the kernel's explicit arguments.
    #[error("argument {index}: the kernel has {count} explicit arguments")]
    NoSuchArg {
        /// The index given.
        index: usize,
        /// How many explicit arguments there are.
        count: usize,
    },
    /// A value of the wrong size for an explicit argument.
    #[error("argument {index} is {expected} bytes, the value {got}")]
    ArgSize {
        /// Index among the explicit arguments.
        index: usize,
        /// The argument's `.size`.
        expected: u32,
        /// The value's size.
        got: usize,
    },
    /// An explicit argument was never set.
    #[error("argument {index} ({}) is not set", name.as_deref().unwrap_or("unnamed"))]
    MissingArg {
        /// Index among the explicit arguments.
        index: usize,
        /// Its `.name`, when the metadata has one.
        name: Option<String>,
    },
    /// A hidden argument whose `.size` is not 1 to 8 bytes.
    #[error("hidden argument {kind} has size {size}")]
    HiddenArgSize {
        /// Its kind.
        kind: ValueKind,
        /// Its `.size`.
        size: u32,
    },
    /// A hidden value that does not fit its argument.
    #[error("hidden argument {kind}: {value} does not fit {size} bytes")]
    HiddenValueTooLarge {
        /// Its kind.
        kind: ValueKind,
        /// The value.
        value: u64,
        /// Its `.size`.
        size: u32,
    },
    /// A dispatch with a workgroup size of 0.
    #[error("workgroup size of dimension {dim} is 0")]
    ZeroWorkgroupSize {
        /// 0, 1 or 2.
        dim: usize,
    },
    /// A dispatch dimension count outside 1 to 3.
    #[error("{0} grid dimensions (1 to 3)")]
    BadGridDims(u16),
    /// The bytes are a clang offload bundle, not a code object: choose an
    /// entry with [`OffloadBundle::code_object_for`](crate::OffloadBundle::code_object_for).
    #[error("an offload bundle, not a code object: pick its entry for a target first")]
    IsABundle,
    /// The bytes do not start with `__CLANG_OFFLOAD_BUNDLE__`.
    #[error("not an offload bundle (no __CLANG_OFFLOAD_BUNDLE__ magic)")]
    NotABundle,
    /// A compressed bundle (`CCOB`): decompressing is not supported.
    #[error("a compressed offload bundle (CCOB): unbundle it with clang-offload-bundler first")]
    CompressedBundle,
    /// The bundle header is cut short or points outside the file.
    #[error("malformed offload bundle: {0}")]
    BadBundle(&'static str),
    /// No bundle entry for the target id asked for.
    #[error("the offload bundle has no code object for {0}")]
    NoBundleEntry(String),
    /// No kernel of that `.name`.
    #[error("no kernel named {0}")]
    NoSuchKernel(String),
}

impl Error {
    /// An ELF reader error while reading `what`.
    pub(crate) fn elf(what: &'static str) -> impl FnOnce(object::read::Error) -> Self {
        move |e| Error::Elf {
            what,
            reason: e.to_string(),
        }
    }

    /// A metadata value of the wrong type at `at`.
    pub(crate) fn bad_value(at: impl Into<String>, expected: &'static str) -> Self {
        Error::BadValue {
            at: at.into(),
            expected,
        }
    }
}
