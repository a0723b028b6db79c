//! C probe harness for layout tests: every `#[repr(C)]` type and constant
//! registered here is compared with what the C compiler says about the
//! system header (the compiler the `cc` crate picks: `CC`, `CC_<target>`,
//! `CFLAGS`).
//!
//! Usage:
//! ```ignore
//! let mut p = Probe::new(&["linux/kfd_ioctl.h"]);
//! layout!(p, kfd_ioctl_get_version_args, "struct kfd_ioctl_get_version_args",
//!         [major_version, minor_version]);
//! p.constant("AMDKFD_IOC_GET_VERSION", AMDKFD_IOC_GET_VERSION.request());
//! p.run(env!("CARGO_TARGET_TMPDIR"));
//! ```
//!
//! Headers are looked up in the system include path, after any directory
//! given with [`Probe::include_dir`] (headers of another ABI generation
//! extracted from a Debian package, for instance).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One registered check.
#[derive(Debug)]
enum Check {
    Layout {
        ctype: String,
        size: usize,
        align: usize,
        fields: Vec<(String, usize)>,
    },
    Const {
        cexpr: String,
        value: u64,
    },
}

/// Collects checks, generates one C program, compiles and runs it, and
/// reports every mismatch at once.
#[derive(Debug)]
pub struct Probe {
    includes: Vec<String>,
    include_dirs: Vec<PathBuf>,
    prelude: String,
    checks: Vec<Check>,
}

impl Probe {
    /// A probe that `#include`s the given headers (in order).
    pub fn new(includes: &[&str]) -> Self {
        Probe {
            includes: includes.iter().map(|s| s.to_string()).collect(),
            include_dirs: Vec::new(),
            prelude: String::new(),
            checks: Vec::new(),
        }
    }

    /// Searches `dir` for headers before the system include path.
    pub fn include_dir(&mut self, dir: impl Into<PathBuf>) {
        self.include_dirs.push(dir.into());
    }

    /// Extra C code placed after the includes (typedefs, feature macros).
    pub fn prelude(&mut self, code: &str) {
        self.prelude.push_str(code);
        self.prelude.push('\n');
    }

    /// Registers a layout check: `ctype` is the C type expression
    /// (`struct foo` or a typedef name); `fields` pairs the C member
    /// designator (may be nested, `a.b`) with the Rust offset.
    pub fn layout<T>(&mut self, ctype: &str, fields: &[(&str, usize)]) {
        self.checks.push(Check::Layout {
            ctype: ctype.to_string(),
            size: std::mem::size_of::<T>(),
            align: std::mem::align_of::<T>(),
            fields: fields.iter().map(|(n, o)| (n.to_string(), *o)).collect(),
        });
    }

    /// Registers a constant check: the C expression must equal `value`
    /// (compared as 64-bit two's complement).
    pub fn constant(&mut self, cexpr: &str, value: impl Into<i128>) {
        self.checks.push(Check::Const {
            cexpr: cexpr.to_string(),
            value: value.into() as u64,
        });
    }

    /// Number of registered checks.
    pub fn len(&self) -> usize {
        self.checks.len()
    }

    /// Whether no check is registered.
    pub fn is_empty(&self) -> bool {
        self.checks.is_empty()
    }

    fn program(&self) -> String {
        let mut c = String::new();
        c.push_str(
            "#include <stdio.h>\n#include <stddef.h>\n#include <stdint.h>\n#include <stdbool.h>\n",
        );
        for i in &self.includes {
            let _ = writeln!(c, "#include <{i}>");
        }
        c.push_str(&self.prelude);
        c.push_str("int main(void) {\n");
        for (idx, check) in self.checks.iter().enumerate() {
            match check {
                Check::Layout { ctype, fields, .. } => {
                    let _ = writeln!(
                        c,
                        "  printf(\"{idx} %zu %zu\", sizeof({ctype}), _Alignof({ctype}));"
                    );
                    for (f, _) in fields {
                        let _ = writeln!(c, "  printf(\" %zu\", offsetof({ctype}, {f}));");
                    }
                    c.push_str("  printf(\"\\n\");\n");
                }
                Check::Const { cexpr, .. } => {
                    let _ = writeln!(
                        c,
                        "  printf(\"{idx} %llu\\n\", (unsigned long long)({cexpr}));"
                    );
                }
            }
        }
        c.push_str("  return 0;\n}\n");
        c
    }

    /// Compiles and runs the probe in a directory below `tmp` (a test's
    /// `CARGO_TARGET_TMPDIR`); panics with the list of mismatches.
    pub fn run(self, tmp: impl AsRef<Path>) {
        let dir = tmp.as_ref().join(format!(
            "probe-{}-{}",
            std::process::id(),
            self.checks.len()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let src = dir.join("probe.c");
        let exe = dir.join("probe");
        std::fs::write(&src, self.program()).unwrap();
        // kfd_ioctl.h includes <drm/drm.h>, which Debian ships as
        // <libdrm/drm.h>; a shim directory supplies the expected path.
        let shim = dir.join("shim");
        std::fs::create_dir_all(shim.join("drm")).unwrap();
        std::fs::write(shim.join("drm/drm.h"), "#include <libdrm/drm.h>\n").unwrap();
        let compiler = cc::Build::new()
            .target(env!("LAYOUT_PROBE_TARGET"))
            .host(env!("LAYOUT_PROBE_TARGET"))
            .opt_level(0)
            .cargo_metadata(false)
            .cargo_warnings(false)
            .warnings(false)
            .try_get_compiler()
            .unwrap_or_else(|e| panic!("no C compiler for the layout probe: {e}"));
        let cc = compiler.path().display().to_string();
        let mut compile = compiler.to_command();
        for d in &self.include_dirs {
            compile.arg("-I").arg(d);
        }
        let out = compile
            .arg("-std=gnu11")
            .arg("-I")
            .arg(&shim)
            .arg("-I/usr/include/libdrm")
            .arg("-o")
            .arg(&exe)
            .arg(&src)
            .output()
            .unwrap_or_else(|e| panic!("cannot run the C compiler `{cc}`: {e}"));
        assert!(
            out.status.success(),
            "C probe failed to compile ({}):\n{}",
            src.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let run = Command::new(&exe).output().expect("run probe");
        assert!(run.status.success(), "probe exited with {}", run.status);
        let text = String::from_utf8(run.stdout).unwrap();
        let mut errors = Vec::new();
        let mut seen = 0;
        for line in text.lines() {
            let mut it = line.split_whitespace();
            let idx: usize = it.next().unwrap().parse().unwrap();
            let nums: Vec<u64> = it.map(|n| n.parse().unwrap()).collect();
            seen += 1;
            match &self.checks[idx] {
                Check::Layout {
                    ctype,
                    size,
                    align,
                    fields,
                } => {
                    if nums[0] as usize != *size {
                        errors.push(format!("{ctype}: size C {} != Rust {size}", nums[0]));
                    }
                    if nums[1] as usize != *align {
                        errors.push(format!("{ctype}: align C {} != Rust {align}", nums[1]));
                    }
                    for ((name, off), c_off) in fields.iter().zip(&nums[2..]) {
                        if *c_off as usize != *off {
                            errors.push(format!("{ctype}.{name}: offset C {c_off} != Rust {off}"));
                        }
                    }
                }
                Check::Const { cexpr, value } => {
                    if nums[0] != *value {
                        errors.push(format!("{cexpr}: C {:#x} != Rust {value:#x}", nums[0]));
                    }
                }
            }
        }
        assert_eq!(seen, self.checks.len(), "probe printed too few lines");
        assert!(
            errors.is_empty(),
            "{} mismatches:\n{}",
            errors.len(),
            errors.join("\n")
        );
    }
}

/// `layout!(probe, RustType, "c type", [field, field, "c.path" => rust_field, ...])`
#[macro_export]
macro_rules! layout {
    ($p:expr, $t:ty, $c:expr, [$($f:tt)*]) => {{
        let fields: Vec<(&str, usize)> = $crate::layout!(@fields $t; [] $($f)*);
        $p.layout::<$t>($c, &fields)
    }};
    (@fields $t:ty; [$($acc:expr,)*]) => { vec![$($acc,)*] };
    (@fields $t:ty; [$($acc:expr,)*] $cname:literal => $f:ident $(, $($rest:tt)*)?) => {
        $crate::layout!(@fields $t; [$($acc,)* ($cname, ::std::mem::offset_of!($t, $f)),] $($($rest)*)?)
    };
    (@fields $t:ty; [$($acc:expr,)*] $f:ident $(, $($rest:tt)*)?) => {
        $crate::layout!(@fields $t; [$($acc,)* (stringify!($f), ::std::mem::offset_of!($t, $f)),] $($($rest)*)?)
    };
}
