//! The offload bundle fixture (`vector_add.bundle`, made by
//! clang-offload-bundler 19 from the two v5 objects): entries, choosing by
//! target id, and broken bundles.

mod common;

use common::fixture;
use kfd_codeobj::{CodeObject, Error, OffloadBundle};

#[test]
fn entries_and_their_target_ids() {
    let data = fixture("vector_add.bundle");
    assert!(OffloadBundle::is_bundle(&data));
    let bundle = OffloadBundle::parse(&data).unwrap();
    let ids: Vec<_> = bundle
        .entries()
        .iter()
        .map(|e| (e.id, e.target_id(), e.data.len()))
        .collect();
    assert_eq!(
        ids,
        vec![
            // The bundler appends the empty environment to the host triple.
            ("host-x86_64-unknown-linux-gnu-", None, 0),
            ("hipv4-amdgcn-amd-amdhsa--gfx90a", Some("gfx90a"), 4888),
            ("hipv4-amdgcn-amd-amdhsa--gfx942", Some("gfx942"), 4888),
        ]
    );
    assert_eq!(bundle.entries()[1].data, fixture("vector_add.gfx90a.co"));
    assert_eq!(bundle.entries()[2].data, fixture("vector_add.gfx942.co"));
}

#[test]
fn code_object_by_target_id() {
    let data = fixture("vector_add.bundle");
    let bundle = OffloadBundle::parse(&data).unwrap();
    let co = CodeObject::parse(bundle.code_object_for("gfx942").unwrap()).unwrap();
    assert_eq!(co.target().processor, "gfx942");
    // A process with XNACK off runs the any-XNACK build.
    assert_eq!(
        bundle.code_object_for("gfx90a:xnack-").unwrap(),
        fixture("vector_add.gfx90a.co")
    );
    assert_eq!(
        bundle.code_object_for("gfx1100").unwrap_err(),
        Error::NoBundleEntry("gfx1100".into())
    );
    // Given to the code object parser, the bundle is named as such.
    assert_eq!(CodeObject::parse(&data), Err(Error::IsABundle));
}

#[test]
fn broken_bundles() {
    let data = fixture("vector_add.bundle");
    // The last entry runs to the end of the file: every truncation fails.
    for len in 0..data.len() {
        let err = OffloadBundle::parse(&data[..len]).unwrap_err();
        let expected = if len < 24 {
            matches!(err, Error::NotABundle)
        } else {
            matches!(err, Error::BadBundle(_))
        };
        assert!(expected, "{len}: {err:?}");
    }
    assert_eq!(
        OffloadBundle::parse(&data[..36]),
        Err(Error::BadBundle("the file ends in an entry offset"))
    );
    assert_eq!(
        OffloadBundle::parse(&data[..data.len() - 1]),
        Err(Error::BadBundle("an entry lies outside the file"))
    );
    assert_eq!(
        OffloadBundle::parse(b"CCOB\x02\x00\x01\x00"),
        Err(Error::CompressedBundle)
    );
    assert_eq!(
        OffloadBundle::parse(&fixture("vector_add.gfx90a.co")),
        Err(Error::NotABundle)
    );
    // An entry count of 2^64 - 1 stops at the end of the header.
    let mut huge = data.clone();
    huge[24..32].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(matches!(
        OffloadBundle::parse(&huge),
        Err(Error::BadBundle(_))
    ));
    for i in 0..data.len().min(512) {
        let mut bad = data.clone();
        bad[i] ^= 0xff;
        if let Ok(bundle) = OffloadBundle::parse(&bad) {
            let _ = bundle.code_object_for("gfx90a").map(CodeObject::parse);
        }
    }
}
