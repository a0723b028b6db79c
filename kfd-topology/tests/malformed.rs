//! Malformed sysfs trees: each gives a typed error naming the file (and
//! line), never a panic.

mod common;

use common::*;
use kfd_topology::*;

/// Replaces `from` by `to` in a topology file.
fn edit(t: &Tree, rel: &str, from: &str, to: &str) {
    let p = t.path(rel);
    let text = std::fs::read_to_string(&p).unwrap();
    assert!(text.contains(from), "{rel} has no {from:?}");
    std::fs::write(&p, text.replacen(from, to, 1)).unwrap();
}

type Setup = fn(&Tree);

/// (name, how to break the tree, file the error must name, expected kind).
const CASES: &[(&str, Setup, &str, &str)] = &[
    (
        "missing generation_id",
        |t| t.remove("generation_id"),
        "generation_id",
        "Io",
    ),
    (
        "garbage generation_id",
        |t| {
            t.topo("generation_id", "one\n");
        },
        "generation_id",
        "Malformed@1",
    ),
    (
        "empty system_properties",
        |t| {
            t.topo("system_properties", "");
        },
        "system_properties",
        "Empty",
    ),
    (
        "garbage system property",
        |t| edit(t, "system_properties", "platform_id 0", "platform_id zero"),
        "system_properties",
        "Malformed@2",
    ),
    (
        "truncated line",
        |t| edit(t, "nodes/1/properties", "simd_count 416", "simd_count"),
        "nodes/1/properties",
        "Malformed@2",
    ),
    (
        "garbage number",
        |t| edit(t, "nodes/1/properties", "simd_count 416", "simd_count 41a6"),
        "nodes/1/properties",
        "Malformed@2",
    ),
    (
        "negative number",
        |t| edit(t, "nodes/0/properties", "simd_count 0", "simd_count -1"),
        "nodes/0/properties",
        "Malformed@2",
    ),
    (
        "number past 64 bits",
        |t| {
            edit(
                t,
                "nodes/1/properties",
                "unique_id 12345678901234567",
                "unique_id 123456789012345678901",
            )
        },
        "nodes/1/properties",
        "Malformed",
    ),
    (
        "trailing junk on a line",
        |t| {
            edit(
                t,
                "nodes/1/properties",
                "wave_front_size 64",
                "wave_front_size 64 x",
            )
        },
        "nodes/1/properties",
        "Malformed",
    ),
    (
        "2^32 memory banks",
        |t| {
            edit(
                t,
                "nodes/0/properties",
                "mem_banks_count 1",
                "mem_banks_count 4294967296",
            )
        },
        "nodes/0/properties",
        "AbsurdCount",
    ),
    (
        "2^32 caches",
        |t| {
            edit(
                t,
                "nodes/1/properties",
                "caches_count 2",
                "caches_count 4294967296",
            )
        },
        "nodes/1/properties",
        "AbsurdCount",
    ),
    (
        "absurd io links",
        |t| {
            edit(
                t,
                "nodes/1/properties",
                "io_links_count 1",
                "io_links_count 18446744073709551615",
            )
        },
        "nodes/1/properties",
        "AbsurdCount",
    ),
    (
        "16-bit device id overflow",
        |t| {
            edit(
                t,
                "nodes/1/properties",
                "device_id 29711",
                "device_id 70000",
            )
        },
        "nodes/1/properties",
        "OutOfRange",
    ),
    (
        "32-bit field overflow",
        |t| {
            edit(
                t,
                "nodes/1/properties",
                "simd_count 416",
                "simd_count 4294967296",
            )
        },
        "nodes/1/properties",
        "OutOfRange@2",
    ),
    (
        "missing memory bank",
        |t| t.remove("nodes/1/mem_banks/0"),
        "nodes/1/mem_banks/0/properties",
        "Io",
    ),
    (
        "empty memory bank",
        |t| {
            t.topo("nodes/1/mem_banks/0/properties", "");
        },
        "nodes/1/mem_banks/0/properties",
        "Empty",
    ),
    (
        "more banks than files",
        |t| {
            edit(
                t,
                "nodes/1/properties",
                "mem_banks_count 1",
                "mem_banks_count 3",
            )
        },
        "nodes/1/mem_banks/1/properties",
        "Io",
    ),
    (
        "bad sibling map",
        |t| {
            edit(
                t,
                "nodes/1/caches/1/properties",
                "sibling_map 1,0",
                "sibling_map 1,x",
            )
        },
        "nodes/1/caches/1/properties",
        "Malformed@9",
    ),
    (
        "missing cache",
        |t| t.remove("nodes/1/caches/1"),
        "nodes/1/caches/1/properties",
        "Io",
    ),
    (
        "link from another node",
        |t| {
            edit(
                t,
                "nodes/1/io_links/0/properties",
                "node_from 1",
                "node_from 5",
            )
        },
        "nodes/1/io_links/0/properties",
        "LinkNodeFrom",
    ),
    (
        "link without node_to",
        |t| edit(t, "nodes/1/io_links/0/properties", "node_to 0\n", ""),
        "nodes/1/io_links/0/properties",
        "MissingKey",
    ),
    (
        "missing link file",
        |t| t.remove("nodes/1/io_links/0"),
        "nodes/1/io_links/0/properties",
        "Io",
    ),
    (
        "render minor out of range",
        |t| {
            edit(
                t,
                "nodes/1/properties",
                "drm_render_minor 128",
                "drm_render_minor 300",
            )
        },
        "nodes/1/properties",
        "RenderMinorOutOfRange",
    ),
    (
        "render minor zero",
        |t| {
            edit(
                t,
                "nodes/1/properties",
                "drm_render_minor 128",
                "drm_render_minor 0",
            )
        },
        "nodes/1/properties",
        "RenderMinorOutOfRange",
    ),
    (
        "no render minor",
        |t| edit(t, "nodes/1/properties", "drm_render_minor 128\n", ""),
        "nodes/1/properties",
        "MissingKey",
    ),
    (
        "garbage gpu_id",
        |t| {
            t.topo("nodes/1/gpu_id", "53284x\n");
        },
        "nodes/1/gpu_id",
        "Malformed@1",
    ),
    (
        "empty gpu_id",
        |t| {
            t.topo("nodes/1/gpu_id", "");
        },
        "nodes/1/gpu_id",
        "Empty",
    ),
    (
        "stray entry in nodes/",
        |t| {
            t.topo("nodes/README", "hi\n");
        },
        "nodes/2/gpu_id",
        "Io",
    ),
    (
        "missing properties",
        |t| t.remove("nodes/0/properties"),
        "nodes/0/properties",
        "Io",
    ),
    (
        "invalid UTF-8",
        |t| {
            std::fs::write(t.path("nodes/1/properties"), b"simd_count 4\n\xff\xfe 1\n").unwrap();
        },
        "nodes/1/properties",
        "Malformed@2",
    ),
    (
        "huge file",
        |t| {
            t.topo("nodes/0/properties", &"cpu_cores_count 1\n".repeat(5000));
        },
        "nodes/0/properties",
        "Malformed@1",
    ),
];

fn kind(e: &TopologyError) -> String {
    match e {
        TopologyError::Io { .. } => "Io".into(),
        TopologyError::Empty { .. } => "Empty".into(),
        TopologyError::Malformed { line, .. } => format!("Malformed@{line}"),
        TopologyError::OutOfRange { line, .. } => format!("OutOfRange@{line}"),
        TopologyError::AbsurdCount { .. } => "AbsurdCount".into(),
        TopologyError::MissingKey { .. } => "MissingKey".into(),
        TopologyError::RenderMinorOutOfRange { .. } => "RenderMinorOutOfRange".into(),
        TopologyError::LinkNodeFrom { .. } => "LinkNodeFrom".into(),
        other => format!("{other:?}"),
    }
}

#[test]
fn malformed_trees_give_typed_errors() {
    for (i, &(name, setup, file, expected)) in CASES.iter().enumerate() {
        let t = mi210_tree(&format!("malformed{i}"));
        setup(&t);
        let opts = SnapshotOptions {
            amdgpu_ids_path: None,
            ..SnapshotOptions::default()
        };
        let err = match Topology::read(t.root(), &FixtureDevices::new(), &opts) {
            Ok(_) => panic!("{name}: no error"),
            Err(e) => e,
        };
        let got = kind(&err);
        assert!(
            got.starts_with(expected),
            "{name}: expected {expected}, got {err:?}"
        );
        let msg = err.to_string();
        assert!(
            msg.contains(&format!("/{file}")),
            "{name}: {msg:?} does not name {file}"
        );
    }
}

#[test]
fn a_tree_that_is_not_there() {
    let err = Topology::read(
        std::path::Path::new("/nonexistent-kfd-root"),
        &FixtureDevices::new(),
        &SnapshotOptions::default(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("generation_id"), "{err}");
}

#[test]
fn an_empty_topology_is_not_an_error() {
    let t = Tree::new("empty");
    t.topo("generation_id", "3\n");
    t.topo("system_properties", "platform_oem 0\n");
    std::fs::create_dir_all(t.path("nodes")).unwrap();
    let topo = Topology::read(
        t.root(),
        &FixtureDevices::new(),
        &SnapshotOptions::default(),
    )
    .unwrap();
    assert_eq!(topo.num_nodes(), 0);
    assert!(topo.validate_node(0).is_err());
}
