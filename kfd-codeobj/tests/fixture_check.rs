//! The committed fixtures are what their sources give: the regenerate
//! commands at the top of each `tests/fixtures/*.cl` are run (with Debian's
//! clang 19, which the test needs) in a scratch directory and its outputs are
//! compared byte for byte with the committed outputs. The crate README
//! must show the same commands.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The clang the commands name (`apt-get install clang-19 lld-19`).
const CLANG: &str = "/usr/lib/llvm-19/bin/clang";

/// The fixture sources.
const SOURCES: &[&str] = &["vector_add.cl", "globals.cl"];

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// The regenerate commands in the header comment of `source`: the
/// comment lines that run [`CLANG`].
fn commands(source: &str) -> Vec<String> {
    let text = std::fs::read_to_string(fixtures().join(source)).unwrap();
    let lines: Vec<String> = text
        .lines()
        .take_while(|l| l.starts_with("//"))
        .filter(|l| l.contains(CLANG))
        .map(|l| l.trim_start_matches('/').trim().to_string())
        .collect();
    assert!(!lines.is_empty(), "{source}: no command in the header");
    lines
}

#[test]
fn fixture_check_readme_shows_the_commands() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    for source in SOURCES {
        for cmd in commands(source) {
            assert!(readme.contains(&cmd), "README.md lacks {source}'s: {cmd}");
        }
    }
}

#[test]
fn fixture_check_rebuild_matches_committed() {
    // CI installs the toolchain (xtask's TEST_PACKAGES): a check that
    // cannot run fails rather than passing unseen.
    assert!(
        Path::new(CLANG).exists(),
        "{CLANG} is absent: apt-get install clang-19 lld-19 (the fixtures are \
         checked against their sources with it)"
    );
    let scratch = std::env::temp_dir().join(format!("kfd-codeobj-fixtures-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    let mut compared = 0;
    for source in SOURCES {
        std::fs::copy(fixtures().join(source), scratch.join(source)).unwrap();
        for cmd in commands(source) {
            let out = Command::new("sh")
                .arg("-c")
                .arg(&cmd)
                .current_dir(&scratch)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{cmd}\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    for entry in std::fs::read_dir(&scratch).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e != "cl") {
            let name = path.file_name().unwrap();
            let committed = std::fs::read(fixtures().join(name))
                .unwrap_or_else(|e| panic!("{name:?} built but not committed: {e}"));
            assert!(
                std::fs::read(&path).unwrap() == committed,
                "{name:?} differs from the committed fixture: regenerate it"
            );
            compared += 1;
        }
    }
    std::fs::remove_dir_all(&scratch).unwrap();
    // vector_add: v5 for gfx90a and gfx942, v4, v6, the bundle; globals
    // for gfx90a.
    assert_eq!(compared, 6);
    let committed = std::fs::read_dir(fixtures())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|e| e != "cl")
        })
        .count();
    assert_eq!(committed, compared, "a committed output no source builds");
}
