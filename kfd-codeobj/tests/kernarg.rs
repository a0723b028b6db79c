//! Kernarg buffers for the `vector_add` fixture: explicit arguments at
//! their offsets, the v5 hidden block from the dispatch shape, and the
//! errors for wrong indices, sizes, missing arguments and bad shapes.

mod common;

use common::{fixture, u16_at, u32_at, u64_at};
use kfd_codeobj::{CodeObject, Dispatch, Error, KernargBuilder, ValueKind};

fn vector_add() -> CodeObject {
    CodeObject::parse(&fixture("vector_add.gfx90a.co")).unwrap()
}

#[test]
fn explicit_and_hidden_arguments_at_their_offsets() {
    let co = vector_add();
    let md = &co.kernel("vector_add").unwrap().metadata;
    let mut b = KernargBuilder::new(md);
    b.set_ptr(0, 0x1000_0000)
        .unwrap()
        .set_ptr(1, 0x2000_0000)
        .unwrap()
        .set_ptr(2, 0x3000_0000)
        .unwrap()
        .set_u32(3, 1000)
        .unwrap();
    // 1000 work-items in groups of 256: 3 whole groups and one of 232.
    let k = b.build(&Dispatch::linear(1000, 256)).unwrap();
    let bytes = k.bytes();
    assert_eq!(bytes.len(), 288);
    assert_eq!(k.align(), 16);
    assert_eq!(u64_at(bytes, 0), 0x1000_0000);
    assert_eq!(u64_at(bytes, 8), 0x2000_0000);
    assert_eq!(u64_at(bytes, 16), 0x3000_0000);
    assert_eq!(u32_at(bytes, 24), 1000);
    // hidden_block_count_x/y/z at 32/36/40.
    assert_eq!(
        [u32_at(bytes, 32), u32_at(bytes, 36), u32_at(bytes, 40)],
        [3, 1, 1]
    );
    // hidden_group_size_x/y/z at 44/46/48, hidden_remainder_x/y/z at 50/52/54.
    assert_eq!(
        [u16_at(bytes, 44), u16_at(bytes, 46), u16_at(bytes, 48)],
        [256, 1, 1]
    );
    assert_eq!(
        [u16_at(bytes, 50), u16_at(bytes, 52), u16_at(bytes, 54)],
        [232, 0, 0]
    );
    // hidden_global_offset_x/y/z at 72/80/88: 0; hidden_grid_dims at 96.
    assert_eq!(
        [u64_at(bytes, 72), u64_at(bytes, 80), u64_at(bytes, 88)],
        [0, 0, 0]
    );
    assert_eq!(u16_at(bytes, 96), 1);
    // Padding and the parts of the implicit block the kernel does not
    // declare are zero.
    assert_eq!(&bytes[28..32], &[0; 4]);
    assert!(bytes[98..].iter().all(|&b| b == 0));
}

#[test]
fn three_dimensional_shape_and_given_values() {
    let co = vector_add();
    let md = &co.kernel("vector_add").unwrap().metadata;
    let mut b = KernargBuilder::new(md);
    for i in 0..3 {
        b.set_u64(i, 0).unwrap();
    }
    b.set_f32(3, 1.5).unwrap();
    let d = Dispatch::new([64, 10, 3], [16, 4, 2])
        .with_hidden(ValueKind::HiddenGlobalOffsetY, 7)
        .with_hidden(ValueKind::HiddenGlobalOffsetY, 9);
    assert_eq!(d.dims(), 3);
    let k = b.build(&d).unwrap();
    let bytes = k.bytes();
    assert_eq!(u32_at(bytes, 24), 1.5f32.to_bits());
    assert_eq!(
        [u32_at(bytes, 32), u32_at(bytes, 36), u32_at(bytes, 40)],
        [4, 2, 1]
    );
    assert_eq!(
        [u16_at(bytes, 50), u16_at(bytes, 52), u16_at(bytes, 54)],
        [0, 2, 1]
    );
    assert_eq!(u64_at(bytes, 80), 9, "the last given value wins");
    assert_eq!(u16_at(bytes, 96), 3);
    assert_eq!(Dispatch::new([64, 4, 1], [64, 1, 1]).dims(), 2);
    assert_eq!(Dispatch::linear(1, 1).dims(), 1);
    let k = b.build(&Dispatch::linear(64, 64).with_dims(2)).unwrap();
    assert_eq!(u16_at(k.bytes(), 96), 2);
}

#[test]
fn argument_errors() {
    let co = vector_add();
    let md = &co.kernel("vector_add").unwrap().metadata;
    let mut b = KernargBuilder::new(md);
    assert_eq!(
        b.set_u32(0, 1).unwrap_err(),
        Error::ArgSize {
            index: 0,
            expected: 8,
            got: 4
        }
    );
    assert_eq!(
        b.set_ptr(3, 1).unwrap_err(),
        Error::ArgSize {
            index: 3,
            expected: 4,
            got: 8
        }
    );
    assert_eq!(
        b.set_u32(4, 1).unwrap_err(),
        Error::NoSuchArg { index: 4, count: 4 }
    );
    b.set_ptr(0, 0)
        .unwrap()
        .set_ptr(1, 0)
        .unwrap()
        .set_ptr(2, 0)
        .unwrap();
    // The fixture's metadata has no argument names (no -cl-kernel-arg-info).
    assert_eq!(
        b.build(&Dispatch::linear(1, 1)).unwrap_err(),
        Error::MissingArg {
            index: 3,
            name: None
        }
    );
    b.set_u32(3, 1).unwrap();
    assert_eq!(
        b.build(&Dispatch::new([1, 1, 1], [1, 0, 1])).unwrap_err(),
        Error::ZeroWorkgroupSize { dim: 1 }
    );
    assert_eq!(
        b.build(&Dispatch::linear(1, 1).with_dims(4)).unwrap_err(),
        Error::BadGridDims(4)
    );
    // hidden_group_size_x is 2 bytes.
    assert_eq!(
        b.build(&Dispatch::linear(1, 1).with_hidden(ValueKind::HiddenGroupSizeX, 70_000))
            .unwrap_err(),
        Error::HiddenValueTooLarge {
            kind: ValueKind::HiddenGroupSizeX,
            value: 70_000,
            size: 2
        }
    );
}

#[test]
fn hand_made_metadata_is_checked_not_trusted() {
    let co = vector_add();
    let mut md = co.kernel("vector_add").unwrap().metadata.clone();
    // A hidden argument of 16 bytes, and one past the segment.
    md.args[4].size = 16;
    let mut b = KernargBuilder::new(&md);
    b.set_ptr(0, 0)
        .unwrap()
        .set_ptr(1, 0)
        .unwrap()
        .set_ptr(2, 0)
        .unwrap();
    b.set_u32(3, 0).unwrap();
    assert_eq!(
        b.build(&Dispatch::linear(1, 1)).unwrap_err(),
        Error::HiddenArgSize {
            kind: ValueKind::HiddenBlockCountX,
            size: 16
        }
    );
    let mut md = co.kernel("vector_add").unwrap().metadata.clone();
    md.args[0].offset = 284;
    let mut b = KernargBuilder::new(&md);
    b.set_ptr(0, 0)
        .unwrap()
        .set_ptr(1, 0)
        .unwrap()
        .set_ptr(2, 0)
        .unwrap();
    b.set_u32(3, 0).unwrap();
    assert_eq!(
        b.build(&Dispatch::linear(1, 1)).unwrap_err(),
        Error::ArgOutsideSegment {
            kernel: "vector_add".into(),
            index: 0,
            offset: 284,
            size: 8,
            segment_size: 288
        }
    );
}
