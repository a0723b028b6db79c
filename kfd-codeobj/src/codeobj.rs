//! Reading an AMDGPU HSA code object: the ELF header checks, the loadable
//! segments, the metadata note, the kernel descriptor symbols and the
//! dynamic relocations (LLVM's AMDGPUUsage, "ELF Code Object").
//!
//! The ELF structures are read with the `object` crate's low-level ELF
//! API; everything AMDGPU-specific (header values, note, relocation
//! types) is decided here.

use object::elf;
use object::read::elf::{FileHeader, ProgramHeader, Rela, SectionHeader, Sym, SymbolTable};
use object::read::SymbolIndex;
use object::LittleEndian as LE;

use crate::bundle::OffloadBundle;
use crate::load::Layout;
use crate::metadata::{KernelMetadata, Metadata};
use crate::target::TargetId;
use crate::Error;

/// The header of an ELF64 little-endian file.
type Header = elf::FileHeader64<LE>;

/// `ELFOSABI_AMDGPU_HSA`: `e_ident[EI_OSABI]` of code objects for HSA
/// runtimes.
const ELFOSABI_AMDGPU_HSA: u8 = 64;
/// `NT_AMDGPU_METADATA`: the note holding the msgpack metadata.
const NT_AMDGPU_METADATA: u32 = 32;
/// The owner name of AMDGPU notes.
const NOTE_OWNER: &[u8] = b"AMDGPU";
/// Bytes of a code object v3+ kernel descriptor.
const DESCRIPTOR_SIZE: u64 = 64;

/// `R_AMDGPU_*`: the relocation types of AMDGPU code objects.
mod reloc_type {
    /// No relocation.
    pub const NONE: u32 = 0;
    /// Low 32 bits of S + A.
    pub const ABS32_LO: u32 = 1;
    /// High 32 bits of S + A.
    pub const ABS32_HI: u32 = 2;
    /// S + A, 64 bits.
    pub const ABS64: u32 = 3;
    /// S + A, 32 bits.
    pub const ABS32: u32 = 6;
    /// B + A, 64 bits.
    pub const RELATIVE64: u32 = 13;
}

/// The code object version, from `e_ident[EI_ABIVERSION]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CodeObjectVersion {
    /// Code object v4 (`ELFABIVERSION_AMDGPU_HSA_V4`, 2).
    V4,
    /// Code object v5 (3): the 256-byte implicit argument block.
    V5,
    /// Code object v6 (4): generic processors.
    V6,
}

impl CodeObjectVersion {
    /// The version of an `EI_ABIVERSION` byte.
    fn from_abi_version(v: u8) -> Result<Self, Error> {
        match v {
            2 => Ok(CodeObjectVersion::V4),
            3 => Ok(CodeObjectVersion::V5),
            4 => Ok(CodeObjectVersion::V6),
            other => Err(Error::UnsupportedAbiVersion(other)),
        }
    }

    /// 4, 5 or 6.
    pub fn number(self) -> u32 {
        match self {
            CodeObjectVersion::V4 => 4,
            CodeObjectVersion::V5 => 5,
            CodeObjectVersion::V6 => 6,
        }
    }
}

/// A `PT_LOAD` segment: the bytes to place at `vaddr` (relative to the load
/// base), followed by zeros up to `mem_size`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    /// `p_vaddr`.
    pub vaddr: u64,
    /// `p_memsz`.
    pub mem_size: u64,
    /// `p_align` (0 and 1 mean none).
    pub align: u64,
    /// `p_flags`: `PF_X` 1, `PF_W` 2, `PF_R` 4.
    pub flags: u32,
    /// The file bytes (`p_filesz` of them).
    pub data: Vec<u8>,
}

/// What a dynamic relocation computes (S: the symbol's load address, A:
/// the addend, B: the load base).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RelocationKind {
    /// `R_AMDGPU_NONE`: nothing.
    None,
    /// `R_AMDGPU_ABS32_LO`: the low 32 bits of S + A.
    Abs32Lo,
    /// `R_AMDGPU_ABS32_HI`: the high 32 bits of S + A.
    Abs32Hi,
    /// `R_AMDGPU_ABS64`: S + A.
    Abs64,
    /// `R_AMDGPU_ABS32`: S + A, which must fit 32 bits.
    Abs32,
    /// `R_AMDGPU_RELATIVE64`: B + A.
    Relative64,
    /// Any other type; loading a code object that has one fails.
    Other(u32),
}

impl RelocationKind {
    /// The kind of an `r_type`.
    fn from_type(r_type: u32) -> Self {
        match r_type {
            reloc_type::NONE => RelocationKind::None,
            reloc_type::ABS32_LO => RelocationKind::Abs32Lo,
            reloc_type::ABS32_HI => RelocationKind::Abs32Hi,
            reloc_type::ABS64 => RelocationKind::Abs64,
            reloc_type::ABS32 => RelocationKind::Abs32,
            reloc_type::RELATIVE64 => RelocationKind::Relative64,
            other => RelocationKind::Other(other),
        }
    }
}

/// The symbol a relocation refers to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelocationSymbol {
    /// Its name.
    pub name: String,
    /// `st_value` when the code object defines it; `None` when undefined.
    pub value: Option<u64>,
}

/// A dynamic relocation (`SHT_RELA` section with `SHF_ALLOC`, normally
/// `.rela.dyn`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Relocation {
    /// `r_offset`: the virtual address to patch.
    pub offset: u64,
    /// The type.
    pub kind: RelocationKind,
    /// The symbol, for `r_sym` other than 0.
    pub symbol: Option<RelocationSymbol>,
    /// `r_addend`.
    pub addend: i64,
}

/// A kernel: its metadata and where its descriptor is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kernel {
    /// The kernel's entry of `amdhsa.kernels`.
    pub metadata: KernelMetadata,
    /// `st_value` of the descriptor symbol (`metadata.symbol`): its offset
    /// from the load base.
    pub descriptor_offset: u64,
}

/// A parsed AMDGPU HSA code object (v4, v5 or v6). It owns copies of the
/// parts it needs, so the input buffer can be dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeObject {
    /// `EI_ABIVERSION`.
    version: CodeObjectVersion,
    /// `e_flags`.
    e_flags: u32,
    /// Decoded from `e_flags`.
    target: TargetId,
    /// The metadata note.
    metadata: Metadata,
    /// One per metadata kernel, same order.
    kernels: Vec<Kernel>,
    /// The `PT_LOAD` segments in program header order.
    pub(crate) segments: Vec<Segment>,
    /// Where they go.
    pub(crate) layout: Layout,
    /// The dynamic relocations.
    pub(crate) relocations: Vec<Relocation>,
}

impl CodeObject {
    /// Parses a code object: checks the header (ELF64 LE, `EM_AMDGPU`,
    /// `ELFOSABI_AMDGPU_HSA`, v4 to v6, `ET_DYN`, a known processor), reads
    /// the `PT_LOAD` segments, decodes the metadata note, finds every
    /// kernel's descriptor symbol and collects the dynamic relocations.
    pub fn parse(data: &[u8]) -> Result<Self, Error> {
        let header = parse_header(data)?;
        let e_flags = header.e_flags(LE);
        let version = CodeObjectVersion::from_abi_version(header.e_ident().abi_version)?;
        let target = TargetId::from_e_flags(e_flags)?;
        let program_headers = header
            .program_headers(LE, data)
            .map_err(Error::elf("program headers"))?;
        let segments = load_segments(program_headers, data)?;
        let layout = Layout::of(&segments)?;
        let metadata = Metadata::from_msgpack(metadata_note(program_headers, data)?)?;

        let sections = header
            .sections(LE, data)
            .map_err(Error::elf("section headers"))?;
        let dynsym = sections
            .symbols(LE, data, elf::SHT_DYNSYM)
            .map_err(Error::elf("dynamic symbols"))?;
        let symtab = sections
            .symbols(LE, data, elf::SHT_SYMTAB)
            .map_err(Error::elf("symbols"))?;
        let kernels = metadata
            .kernels
            .iter()
            .map(|k| {
                let descriptor_offset = find_descriptor(k, &[&dynsym, &symtab], &segments)?;
                Ok(Kernel {
                    metadata: k.clone(),
                    descriptor_offset,
                })
            })
            .collect::<Result<_, Error>>()?;

        let mut relocations = Vec::new();
        for section in sections.iter() {
            let sh_type = section.sh_type(LE);
            let alloc = section.sh_flags(LE) & u64::from(elf::SHF_ALLOC) != 0;
            if !alloc {
                // Static relocations kept by --emit-relocs: not the loader's.
                continue;
            }
            if matches!(sh_type, elf::SHT_REL | elf::SHT_RELR | elf::SHT_CREL) {
                return Err(Error::UnsupportedRelocationSection(sh_type));
            }
            let Some((entries, link)) =
                section.rela(LE, data).map_err(Error::elf("relocations"))?
            else {
                continue;
            };
            let symbols = sections
                .symbol_table_by_index(LE, data, link)
                .map_err(Error::elf("relocation symbols"))?;
            for rela in entries {
                relocations.push(relocation(rela, &symbols)?);
            }
        }

        Ok(CodeObject {
            version,
            e_flags,
            target,
            metadata,
            kernels,
            segments,
            layout,
            relocations,
        })
    }

    /// The code object version.
    pub fn version(&self) -> CodeObjectVersion {
        self.version
    }

    /// The raw `e_flags`.
    pub fn e_flags(&self) -> u32 {
        self.e_flags
    }

    /// The target (`gfx90a`, `gfx942:sramecc+:xnack-`...).
    pub fn target(&self) -> TargetId {
        self.target
    }

    /// The decoded metadata note.
    pub fn metadata(&self) -> &Metadata {
        &self.metadata
    }

    /// The kernels, in metadata order.
    pub fn kernels(&self) -> &[Kernel] {
        &self.kernels
    }

    /// The kernel whose `.name` is `name`.
    pub fn kernel(&self, name: &str) -> Result<&Kernel, Error> {
        self.kernels
            .iter()
            .find(|k| k.metadata.name == name)
            .ok_or_else(|| Error::NoSuchKernel(name.to_string()))
    }

    /// The `PT_LOAD` segments, in program header order.
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// The dynamic relocations, in file order.
    pub fn relocations(&self) -> &[Relocation] {
        &self.relocations
    }
}

/// The ELF header, once it is known to be an AMDGPU HSA shared object.
fn parse_header(data: &[u8]) -> Result<&Header, Error> {
    if OffloadBundle::is_bundle(data) {
        return Err(Error::IsABundle);
    }
    if data.get(..4).is_some_and(|magic| magic != elf::ELFMAG) {
        return Err(Error::NotElf);
    }
    if let Some(ident) = data.get(..16) {
        // EI_CLASS and EI_DATA.
        let (class, encoding) = (ident[4], ident[5]);
        if class != elf::ELFCLASS64 || encoding != elf::ELFDATA2LSB {
            return Err(Error::NotElf64Le {
                class,
                data: encoding,
            });
        }
    }
    let header = Header::parse(data).map_err(Error::elf("file header"))?;
    let machine = header.e_machine(LE);
    if machine != elf::EM_AMDGPU {
        return Err(Error::WrongMachine(machine));
    }
    let os_abi = header.e_ident().os_abi;
    if os_abi != ELFOSABI_AMDGPU_HSA {
        return Err(Error::WrongOsAbi(os_abi));
    }
    // The version before the file type: a v2/v3 object is refused for
    // what it is even when it is relocatable.
    CodeObjectVersion::from_abi_version(header.e_ident().abi_version)?;
    let e_type = header.e_type(LE);
    if e_type != elf::ET_DYN {
        return Err(Error::NotSharedObject(e_type));
    }
    Ok(header)
}

/// The `PT_LOAD` segments, checked: file bytes inside the file and no
/// more of them than the memory size.
fn load_segments(
    program_headers: &[elf::ProgramHeader64<LE>],
    data: &[u8],
) -> Result<Vec<Segment>, Error> {
    program_headers
        .iter()
        .filter(|ph| ph.p_type(LE) == elf::PT_LOAD)
        .map(|ph| {
            let vaddr = ph.p_vaddr(LE);
            let bytes = ph.data(LE, data).map_err(|()| Error::BadSegment {
                vaddr,
                reason: "its file bytes lie outside the file",
            })?;
            let mem_size = ph.p_memsz(LE);
            if bytes.len() as u64 > mem_size {
                return Err(Error::BadSegment {
                    vaddr,
                    reason: "p_filesz is larger than p_memsz",
                });
            }
            if vaddr.checked_add(mem_size).is_none() {
                return Err(Error::BadSegment {
                    vaddr,
                    reason: "p_vaddr + p_memsz overflows",
                });
            }
            let align = ph.p_align(LE);
            if align > 1 && !align.is_power_of_two() {
                return Err(Error::BadSegment {
                    vaddr,
                    reason: "p_align is not a power of two",
                });
            }
            Ok(Segment {
                vaddr,
                mem_size,
                align,
                flags: ph.p_flags(LE),
                data: bytes.to_vec(),
            })
        })
        .collect()
}

/// The descriptor of the `NT_AMDGPU_METADATA` note in the `PT_NOTE`
/// segments.
fn metadata_note<'d>(
    program_headers: &[elf::ProgramHeader64<LE>],
    data: &'d [u8],
) -> Result<&'d [u8], Error> {
    for ph in program_headers {
        let Some(mut notes) = ph.notes(LE, data).map_err(Error::elf("note segment"))? else {
            continue;
        };
        while let Some(note) = notes.next().map_err(Error::elf("notes"))? {
            if note.name() == NOTE_OWNER && note.n_type(LE) == NT_AMDGPU_METADATA {
                return Ok(note.desc());
            }
        }
    }
    Err(Error::NoMetadata)
}

/// The defined symbol `name` of the first table that has it: `st_value`
/// and `st_size`.
fn defined_symbol(tables: &[&SymbolTable<'_, Header>], name: &str) -> Option<(u64, u64)> {
    tables.iter().find_map(|table| {
        table.iter().find_map(|sym| {
            let matches = table.symbol_name(LE, sym).ok() == Some(name.as_bytes());
            (matches && !sym.is_undefined(LE)).then(|| (sym.st_value(LE), sym.st_size(LE)))
        })
    })
}

/// The offset of `kernel`'s descriptor: a defined 64-byte symbol inside a
/// segment.
fn find_descriptor(
    kernel: &KernelMetadata,
    tables: &[&SymbolTable<'_, Header>],
    segments: &[Segment],
) -> Result<u64, Error> {
    let (value, size) =
        defined_symbol(tables, &kernel.symbol).ok_or_else(|| Error::MissingDescriptor {
            kernel: kernel.name.clone(),
            symbol: kernel.symbol.clone(),
        })?;
    let inside = segments.iter().any(|s| {
        value >= s.vaddr
            && value
                .checked_add(DESCRIPTOR_SIZE)
                .is_some_and(|end| end <= s.vaddr + s.mem_size)
    });
    if size != DESCRIPTOR_SIZE || !inside {
        return Err(Error::BadDescriptor {
            kernel: kernel.name.clone(),
            symbol: kernel.symbol.clone(),
            value,
            size,
        });
    }
    Ok(value)
}

/// One `Elf64_Rela` with its symbol resolved against `symbols`.
fn relocation(
    rela: &elf::Rela64<LE>,
    symbols: &SymbolTable<'_, Header>,
) -> Result<Relocation, Error> {
    let r_sym = rela.r_sym(LE, false);
    let symbol = if r_sym == 0 {
        None
    } else {
        let sym = symbols
            .symbol(SymbolIndex(r_sym as usize))
            .map_err(Error::elf("relocation symbol"))?;
        let name = symbols
            .symbol_name(LE, sym)
            .map_err(Error::elf("relocation symbol name"))?;
        Some(RelocationSymbol {
            name: String::from_utf8_lossy(name).into_owned(),
            value: (!sym.is_undefined(LE)).then(|| sym.st_value(LE)),
        })
    };
    Ok(Relocation {
        offset: rela.r_offset(LE),
        kind: RelocationKind::from_type(rela.r_type(LE, false)),
        symbol,
        addend: rela.r_addend(LE),
    })
}
