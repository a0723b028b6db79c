//! Parsing the committed fixtures (`tests/fixtures/*.co`, built by
//! Debian's clang 19 from `vector_add.cl`), and refusing broken copies of
//! them with the right error.

mod common;

use common::{find, fixture};
use kfd_codeobj::{CodeObject, CodeObjectVersion, Error, Feature, ValueKind};

/// `vector_add` for gfx90a, code object v5.
fn gfx90a() -> Vec<u8> {
    fixture("vector_add.gfx90a.co")
}

#[test]
fn fixture_header_version_and_target() {
    let co = CodeObject::parse(&gfx90a()).unwrap();
    assert_eq!(co.version(), CodeObjectVersion::V5);
    assert_eq!(co.version().number(), 5);
    // mach 0x3f, xnack any, sramecc any.
    assert_eq!(co.e_flags(), 0x53f);
    assert_eq!(co.target().to_string(), "gfx90a");
    assert_eq!(co.target().xnack, Feature::Any);
    assert_eq!(
        co.metadata().target.as_deref(),
        Some("amdgcn-amd-amdhsa--gfx90a")
    );
    assert_eq!(co.metadata().version, Some([1, 2]));

    let co = CodeObject::parse(&fixture("vector_add.gfx942.co")).unwrap();
    assert_eq!(co.target().processor, "gfx942");
    assert_eq!(co.target().sramecc, Feature::Any);
}

#[test]
fn fixture_v4_and_v6_headers() {
    let co = CodeObject::parse(&fixture("vector_add.gfx90a-xnack-off.v4.co")).unwrap();
    assert_eq!(co.version(), CodeObjectVersion::V4);
    // mach 0x3f, xnack off (0x200), sramecc any (0x400).
    assert_eq!(co.e_flags(), 0x63f);
    assert_eq!(co.target().xnack, Feature::Off);
    assert_eq!(co.target().to_string(), "gfx90a:xnack-");
    assert_eq!(co.metadata().version, Some([1, 1]));
    let md = &co.kernel("vector_add").unwrap().metadata;
    // v4: the workgroup size comes from the dispatch packet; no hidden
    // arguments, 28 kernarg bytes.
    assert_eq!(md.kernarg_segment_size, 28);
    assert_eq!(md.hidden_args().count(), 0);
    let offsets: Vec<_> = md.explicit_args().map(|a| a.offset).collect();
    assert_eq!(offsets, vec![0, 8, 16, 24]);

    let co = CodeObject::parse(&fixture("vector_add.gfx9-generic.v6.co")).unwrap();
    assert_eq!(co.version(), CodeObjectVersion::V6);
    assert_eq!(co.version().number(), 6);
    // gfx9-generic (0x51), xnack any, generic version 1 in the top byte.
    assert_eq!(co.e_flags(), 0x0100_0151);
    assert_eq!(co.target().processor, "gfx9-generic");
    assert_eq!(co.target().generic_version, 1);
    assert_eq!(co.target().to_string(), "gfx9-generic");
    assert_eq!(
        co.kernel("vector_add")
            .unwrap()
            .metadata
            .kernarg_segment_size,
        288
    );
}

#[test]
fn fixture_metadata_explicit_and_hidden_args() {
    let co = CodeObject::parse(&gfx90a()).unwrap();
    assert_eq!(co.kernels().len(), 1);
    let k = co.kernel("vector_add").unwrap();
    let md = &k.metadata;
    assert_eq!(md.symbol, "vector_add.kd");
    assert_eq!(md.kernarg_segment_size, 288);
    assert_eq!(md.kernarg_segment_align, 8);
    assert_eq!(md.wavefront_size, 64);
    assert_eq!(md.group_segment_fixed_size, 0);
    assert_eq!(md.private_segment_fixed_size, 0);
    assert!(md.sgpr_count > 0 && md.vgpr_count > 0, "{md:?}");

    let explicit: Vec<_> = md
        .explicit_args()
        .map(|a| {
            (
                a.offset,
                a.size,
                a.value_kind.clone(),
                a.type_name.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        explicit,
        vec![
            (0, 8, ValueKind::GlobalBuffer, Some("float*")),
            (8, 8, ValueKind::GlobalBuffer, Some("float*")),
            (16, 8, ValueKind::GlobalBuffer, Some("float*")),
            (24, 4, ValueKind::ByValue, Some("uint")),
        ]
    );
    // The v5 implicit block starts after the explicit arguments.
    let hidden: Vec<_> = md
        .hidden_args()
        .map(|a| (a.value_kind.clone(), a.offset, a.size))
        .collect();
    assert!(hidden.iter().all(|(_, offset, _)| *offset >= 28));
    for expected in [
        (ValueKind::HiddenBlockCountX, 32, 4),
        (ValueKind::HiddenGroupSizeX, 44, 2),
        (ValueKind::HiddenRemainderX, 50, 2),
        (ValueKind::HiddenGlobalOffsetX, 72, 8),
        (ValueKind::HiddenGridDims, 96, 2),
    ] {
        assert!(hidden.contains(&expected), "{expected:?} in {hidden:?}");
    }
}

#[test]
fn fixture_descriptor_symbol_offset() {
    let co = CodeObject::parse(&gfx90a()).unwrap();
    let k = co.kernel("vector_add").unwrap();
    // llvm-readelf --dyn-syms: vector_add.kd at 0x840, 64 bytes, in the
    // first (read-only) PT_LOAD.
    assert_eq!(k.descriptor_offset, 0x840);
    let ro = &co.segments()[0];
    assert!(k.descriptor_offset + 64 <= ro.vaddr + ro.data.len() as u64);
    assert_eq!(
        co.kernel("vector_sub").unwrap_err(),
        Error::NoSuchKernel("vector_sub".into())
    );
}

#[test]
fn every_truncation_is_an_error() {
    let data = gfx90a();
    for len in 0..data.len() {
        assert!(
            CodeObject::parse(&data[..len]).is_err(),
            "{len} of {} bytes parsed",
            data.len()
        );
    }
}

#[test]
fn every_flipped_byte_parses_or_fails_without_panicking() {
    let data = gfx90a();
    for i in 0..data.len() {
        let mut bad = data.clone();
        bad[i] ^= 0xff;
        let _ = CodeObject::parse(&bad);
    }
}

#[test]
fn header_fields_are_checked_in_order() {
    let data = gfx90a();
    let patched = |offset: usize, bytes: &[u8]| {
        let mut d = data.clone();
        d[offset..offset + bytes.len()].copy_from_slice(bytes);
        CodeObject::parse(&d).unwrap_err()
    };
    assert_eq!(patched(4, &[1]), Error::NotElf64Le { class: 1, data: 1 });
    assert_eq!(patched(5, &[2]), Error::NotElf64Le { class: 2, data: 2 });
    // e_machine: EM_X86_64.
    assert_eq!(patched(18, &[62, 0]), Error::WrongMachine(62));
    // OS ABI: ELFOSABI_AMDGPU_PAL.
    assert_eq!(patched(7, &[65]), Error::WrongOsAbi(65));
    // ABI version 1: code object v3.
    assert_eq!(patched(8, &[1]), Error::UnsupportedAbiVersion(1));
    // e_type: ET_REL.
    assert_eq!(patched(16, &[1, 0]), Error::NotSharedObject(1));
    // e_flags mach 0x27: reserved.
    assert_eq!(
        patched(48, &[0x27]),
        Error::UnknownProcessor {
            flags: 0x527,
            mach: 0x27
        }
    );
    assert_eq!(
        CodeObject::parse(b"not an elf file at all, but long enough for a header........."),
        Err(Error::NotElf)
    );
    // The magic alone, or a header cut short.
    for len in [4, 16, 63] {
        assert!(matches!(
            CodeObject::parse(&data[..len]),
            Err(Error::Elf {
                what: "file header",
                ..
            })
        ));
    }
}

#[test]
fn bad_metadata_note() {
    let data = gfx90a();
    // The note's name "AMDGPU" follows its three header words.
    let n_type = find(&data, b"AMDGPU\0") - 4;
    assert_eq!(data[n_type..n_type + 4], 32u32.to_le_bytes());

    let mut other_type = data.clone();
    other_type[n_type] = 33;
    assert_eq!(CodeObject::parse(&other_type), Err(Error::NoMetadata));

    // The msgpack root map: turn the map marker into a string marker.
    let mut not_a_map = data.clone();
    let desc = n_type + 4 + 8;
    assert_eq!(not_a_map[desc] & 0xf0, 0x80, "fixmap");
    not_a_map[desc] = 0xa0;
    assert_eq!(
        CodeObject::parse(&not_a_map).unwrap_err(),
        Error::Msgpack(format!(
            "{} bytes after the metadata map",
            u32::from_le_bytes(data[n_type - 4..n_type].try_into().unwrap()) - 1
        ))
    );

    // A required key renamed.
    let mut renamed = data.clone();
    let key = find(&data, b".vgpr_count");
    renamed[key + 1] = b'w';
    assert_eq!(
        CodeObject::parse(&renamed),
        Err(Error::MissingKey {
            at: "amdhsa.kernels[0]".into(),
            key: ".vgpr_count"
        })
    );
}

#[test]
fn missing_and_misplaced_descriptor_symbols() {
    let data = gfx90a();
    // The NUL-terminated names are in .dynstr and .strtab; the msgpack
    // string in the note is not NUL-terminated.
    let mut renamed = data.clone();
    for _ in 0..2 {
        let at = renamed
            .windows(14)
            .position(|w| w == b"vector_add.kd\0")
            .unwrap();
        renamed[at + 12] = b'x';
    }
    assert_eq!(
        CodeObject::parse(&renamed),
        Err(Error::MissingDescriptor {
            kernel: "vector_add".into(),
            symbol: "vector_add.kd".into()
        })
    );

    // st_value 0x840 then st_size 64, in .dynsym and .symtab: size 32.
    let mut entry = 0x840u64.to_le_bytes().to_vec();
    entry.extend_from_slice(&64u64.to_le_bytes());
    let mut short = data.clone();
    for _ in 0..2 {
        let at = short.windows(16).position(|w| w == entry).unwrap();
        short[at + 8] = 32;
    }
    assert_eq!(
        CodeObject::parse(&short),
        Err(Error::BadDescriptor {
            kernel: "vector_add".into(),
            symbol: "vector_add.kd".into(),
            value: 0x840,
            size: 32
        })
    );
}
