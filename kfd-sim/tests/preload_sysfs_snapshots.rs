//! Snapshots of the sysfs/procfs tree each preset renders.
//!
//! The snapshot is a listing of every file (with its contents) and every
//! symlink (with its target) below the render root, in path order. Review
//! changes with `cargo insta review` or by reading the `.snap.new` files.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use kfd_sim::{presets, sysfs};

fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
        let meta = fs::symlink_metadata(&p).unwrap();
        if meta.file_type().is_symlink() {
            out.push((
                rel,
                format!("-> {}\n", fs::read_link(&p).unwrap().display()),
            ));
        } else if meta.is_dir() {
            if fs::read_dir(&p).unwrap().next().is_none() {
                out.push((format!("{rel}/"), String::new()));
            }
            walk(root, &p, out);
        } else {
            out.push((rel, fs::read_to_string(&p).unwrap()));
        }
    }
}

fn listing(root: &Path, keep: impl Fn(&str) -> bool) -> String {
    let mut files = Vec::new();
    walk(root, root, &mut files);
    let mut s = String::new();
    for (path, text) in files.iter().filter(|(p, _)| keep(p)) {
        let _ = writeln!(s, "== {path}");
        s.push_str(text);
    }
    s
}

fn render(name: &str) -> PathBuf {
    let root = std::env::temp_dir().join(format!("kfd-sim-snap-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&root);
    sysfs::render(&presets::preset(name).unwrap(), &root).unwrap();
    root
}

fn snapshot(name: &str, keep: impl Fn(&str) -> bool) {
    let root = render(name);
    let text = listing(&root, keep);
    fs::remove_dir_all(&root).unwrap();
    insta::assert_snapshot!(format!("sysfs_{name}"), text);
}

#[test]
fn sysfs_mi210() {
    snapshot("mi210", |_| true);
}

#[test]
fn sysfs_mi300x() {
    snapshot("mi300x", |_| true);
}

#[test]
fn sysfs_apu() {
    snapshot("apu", |_| true);
}

#[test]
fn sysfs_navi31() {
    snapshot("navi31", |_| true);
}

/// large64 in full would be ~10k lines: keep the CPU nodes, the first and
/// last GPU, and the PCI/DRM entries of those two.
#[test]
fn sysfs_large64() {
    let t = presets::preset("large64").unwrap();
    let first = &t.nodes[2];
    let last = &t.nodes[65];
    let keep_dirs = [sysfs::pci_device_dir(first), sysfs::pci_device_dir(last)];
    snapshot("large64", |p| {
        let node = p.split("/nodes/").nth(1).and_then(|r| r.split('/').next());
        match node {
            Some(n) => ["0", "1", "2", "65"].contains(&n),
            None if p.starts_with("sys/devices/pci") => {
                keep_dirs.iter().any(|d| p.starts_with(d.as_str()))
            }
            None if p.starts_with("sys/bus/pci/devices/") || p.starts_with("sys/dev/char/") => {
                p.ends_with(":128")
                    || p.ends_with(":191")
                    || p.ends_with(":0")
                    || p.ends_with(":63")
                    || keep_dirs
                        .iter()
                        .any(|d| p.ends_with(d.rsplit('/').next().unwrap()))
            }
            None => true,
        }
    });
}
