//! Load images of the committed fixtures: layout, segment bytes, the
//! relocations of `globals.gfx90a.co` (values cross-checked with
//! `llvm-readelf -r`), kernel descriptors, and load requests that fail.

mod common;

use common::{find, fixture, hits, u64_at};
use kfd_codeobj::{CodeObject, Dispatch, Error, KernargBuilder, Layout, RelocationKind};

/// A GPU address such as kfd-sim's: page aligned, far from 0.
const BASE: u64 = 0x7f12_3456_0000;

#[test]
fn vector_add_layout_and_segments() {
    let data = fixture("vector_add.gfx90a.co");
    let co = CodeObject::parse(&data).unwrap();
    // llvm-readelf -l: LOADs at 0 (0x884), 0x1900 (0x4c0), 0x2dc0
    // (0x70 file, 0x240 memory), all 0x1000-aligned.
    assert_eq!(
        co.layout(),
        Layout {
            start_vaddr: 0,
            size: 0x3000,
            align: 0x1000
        }
    );
    let image = co.load(BASE).unwrap();
    assert_eq!(image.base(), BASE);
    assert_eq!(image.bytes().len(), 0x3000);
    // The text segment's bytes are the file's bytes at its offset 0x900.
    assert_eq!(
        &image.bytes()[0x1900..0x1900 + 0x4c0],
        &data[0x900..0x900 + 0x4c0]
    );
    // The gap between segments and the tail past p_filesz are zero.
    assert!(image.bytes()[0x884..0x1900].iter().all(|&b| b == 0));
    assert!(image.bytes()[0x2dc0 + 0x70..].iter().all(|&b| b == 0));
}

#[test]
fn vector_add_descriptor_from_the_image() {
    let co = CodeObject::parse(&fixture("vector_add.gfx90a.co")).unwrap();
    let image = co.load(BASE).unwrap();
    let k = image.kernel("vector_add").unwrap();
    assert_eq!(k.descriptor_address, BASE + 0x840);
    // The descriptor agrees with the metadata.
    assert_eq!(k.descriptor.kernarg_size, 288);
    assert_eq!(k.descriptor.group_segment_fixed_size, 0);
    assert_eq!(k.descriptor.private_segment_fixed_size, 0);
    // The entry is the function symbol `vector_add` at 0x1900.
    assert_eq!(k.descriptor.kernel_code_entry_byte_offset, 0x1900 - 0x840);
    assert_eq!(k.entry_address(), BASE + 0x1900);
    // The kernarg segment pointer is a user SGPR the kernel asks for.
    assert_ne!(
        k.descriptor.kernel_code_properties as u32
            & kfd_sys::hsa::kernel_code_properties::ENABLE_SGPR_KERNARG_SEGMENT_PTR,
        0
    );
    assert_eq!(image.kernels().unwrap(), vec![k]);
    assert_eq!(
        image.kernel("nope").unwrap_err(),
        Error::NoSuchKernel("nope".into())
    );
}

#[test]
fn globals_relocations_are_applied_for_the_base() {
    let co = CodeObject::parse(&fixture("globals.gfx90a.co")).unwrap();
    // llvm-readelf -r: RELATIVE64 at 0x3b58 (+0x3b50), ABS64 at 0x2b30
    // (table_ptr 0x3b48 + 0), ABS64 at 0x3b48 (table 0x3b38 + 8).
    let kinds: Vec<_> = co
        .relocations()
        .iter()
        .map(|r| (r.offset, r.kind, r.addend))
        .collect();
    assert_eq!(
        kinds,
        vec![
            (0x3b58, RelocationKind::Relative64, 0x3b50),
            (0x2b30, RelocationKind::Abs64, 0),
            (0x3b48, RelocationKind::Abs64, 8),
        ]
    );
    let table = co.relocations()[2].symbol.as_ref().unwrap();
    assert_eq!((table.name.as_str(), table.value), ("table", Some(0x3b38)));

    for base in [0, BASE, 0xffff_8000_0000_0000] {
        let image = co.load(base).unwrap();
        let bytes = image.bytes();
        // hidden_ptr = &hidden_word; table_ptr = &table[2]; the GOT entry
        // of table_ptr.
        assert_eq!(u64_at(bytes, 0x3b58), base + 0x3b50);
        assert_eq!(u64_at(bytes, 0x3b48), base + 0x3b38 + 8);
        assert_eq!(u64_at(bytes, 0x2b30), base + 0x3b48);
        // The data the pointers point at is loaded: table = {1, 2, 3, 4}.
        assert_eq!(&bytes[0x3b38 + 8..0x3b38 + 12], &3i32.to_le_bytes());
        assert_eq!(&bytes[0x3b50..0x3b54], &7i32.to_le_bytes());
    }
}

#[test]
fn load_into_a_callers_buffer_matches_load() {
    let co = CodeObject::parse(&fixture("globals.gfx90a.co")).unwrap();
    // A dirty, larger buffer: the image part is overwritten (gaps zeroed),
    // the rest is left alone.
    let mut buffer = vec![0xaa; co.layout().size as usize + 16];
    co.load_into(BASE, &mut buffer).unwrap();
    let image = co.load(BASE).unwrap();
    assert_eq!(&buffer[..image.bytes().len()], image.bytes());
    assert!(buffer[image.bytes().len()..].iter().all(|&b| b == 0xaa));
    let k = co.kernel("read_table").unwrap();
    assert_eq!(
        co.loaded_kernel(k, BASE, &buffer).unwrap(),
        image.kernel("read_table").unwrap()
    );
}

#[test]
fn bad_load_requests() {
    let co = CodeObject::parse(&fixture("globals.gfx90a.co")).unwrap();
    assert_eq!(
        co.load(BASE + 0x100).unwrap_err(),
        Error::MisalignedBase {
            base: BASE + 0x100,
            align: 0x1000
        }
    );
    let mut short = vec![0; 0x1000];
    assert_eq!(
        co.load_into(BASE, &mut short).unwrap_err(),
        Error::ImageTooSmall {
            needed: co.layout().size,
            got: 0x1000
        }
    );
    let k = co.kernel("read_table").unwrap();
    assert_eq!(
        co.loaded_kernel(k, BASE, &short[..0x100]).unwrap_err(),
        Error::ImageTooSmall {
            needed: co.layout().size,
            got: 0x100
        }
    );
}

#[test]
fn corrupted_relocations_are_typed_errors() {
    let data = fixture("globals.gfx90a.co");
    // The RELATIVE64 entry: r_offset 0x3b58, r_info 13 (no symbol).
    let mut rela = 0x3b58u64.to_le_bytes().to_vec();
    rela.extend_from_slice(&13u64.to_le_bytes());
    let at = find(&data, &rela);

    // r_type 4 (R_AMDGPU_REL32): not a dynamic relocation the loader does.
    let mut rel32 = data.clone();
    rel32[at + 8] = 4;
    let co = CodeObject::parse(&rel32).unwrap();
    assert_eq!(
        co.load(BASE).unwrap_err(),
        Error::UnsupportedRelocation {
            r_type: 4,
            offset: 0x3b58
        }
    );

    // r_offset far past the image.
    let mut far = data.clone();
    far[at + 4] = 0x10;
    let co = CodeObject::parse(&far).unwrap();
    assert_eq!(
        co.load(BASE).unwrap_err(),
        Error::RelocationOutsideImage {
            offset: 0x10_0000_3b58
        }
    );

    // `table` undefined (st_shndx 0) in .dynsym and .symtab: Elf64_Sym
    // has st_shndx just before st_value 0x3b38, st_size 16.
    let mut sym = 0x3b38u64.to_le_bytes().to_vec();
    sym.extend_from_slice(&16u64.to_le_bytes());
    let mut undefined = data.clone();
    let entries = hits(&data, &sym);
    assert_eq!(entries.len(), 2);
    for at in entries {
        undefined[at - 2..at].copy_from_slice(&[0, 0]);
    }
    let co = CodeObject::parse(&undefined).unwrap();
    assert_eq!(
        co.load(BASE).unwrap_err(),
        Error::UndefinedSymbol("table".into())
    );

    // A relocation symbol index past the symbol table: the ABS64 entry
    // at 0x3b48 against symbol 4 (`table`) made to name symbol 99.
    let mut abs = 0x3b48u64.to_le_bytes().to_vec();
    abs.extend_from_slice(&(4u64 << 32 | 3).to_le_bytes());
    let at = find(&data, &abs);
    let mut bad_index = data.clone();
    bad_index[at + 12] = 99;
    assert!(matches!(
        CodeObject::parse(&bad_index),
        Err(Error::Elf {
            what: "relocation symbol",
            ..
        })
    ));
}

#[test]
fn truncated_globals_are_errors() {
    let data = fixture("globals.gfx90a.co");
    for len in 0..data.len() {
        assert!(CodeObject::parse(&data[..len]).is_err(), "{len}");
    }
}

#[test]
fn every_flipped_byte_loads_and_builds_or_fails_without_panicking() {
    for name in ["globals.gfx90a.co", "vector_add.gfx90a.co"] {
        let data = fixture(name);
        let mut loaded = 0;
        for i in 0..data.len() {
            let mut bad = data.clone();
            bad[i] ^= 0xff;
            let Ok(co) = CodeObject::parse(&bad) else {
                continue;
            };
            if let Ok(image) = co.load(BASE) {
                let _ = image.kernels();
                loaded += 1;
            }
            // And the kernargs of whatever metadata survived.
            for k in co.kernels() {
                let mut args = KernargBuilder::new(&k.metadata);
                for (index, arg) in k.metadata.explicit_args().enumerate() {
                    let _ = args.set_bytes(index, &vec![0; arg.size as usize]);
                }
                let _ = args.build(&Dispatch::linear(1000, 256));
            }
        }
        // Most bytes (code, padding, unused fields) do not matter to the
        // loader: the loop exercised load, not only parse.
        assert!(loaded > data.len() / 2, "{name}: {loaded} loads");
    }
}
