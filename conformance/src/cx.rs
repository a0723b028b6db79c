//! The child side's recorder: what a scenario observes becomes text lines
//! (`R <key> <value>`), which the parent diffs between the two libraries.
//!
//! Line kinds written to the child's output file (tab separated):
//!
//! | line | meaning |
//! |---|---|
//! | `B name offset` | scenario `name` begins; `offset` = trace file length |
//! | `F function` | the scenario calls `function` (written before the call) |
//! | `C function` | the scenario is there for `function` (coverage only) |
//! | `R key value` | one observation |
//! | `E name offset` | scenario `name` ended normally |
//!
//! Keys are labels chosen by the scenario; a label used twice in one
//! scenario gets `#2`, `#3`, ... appended so keys stay unique.

use std::collections::HashMap;
use std::fmt::{Debug, Display};
use std::io::Write;

use crate::abi::Abi;
use crate::api::{Api, St};

/// The status word [`kmt!`](crate::kmt!) returns for a function the
/// library does not export (recorded as `MISSING`; a library returning
/// this value is recorded as `UNKNOWN(4294967295)`).
pub const MISSING: u32 = u32::MAX;

/// `HSAKMT_STATUS_NOT_SUPPORTED`.
pub const NOT_SUPPORTED: u32 = 11;

/// Calls an entry point of `cx.api`, records its status under `label` and
/// returns the status word ([`MISSING`] when the symbol is absent).
///
/// The last argument states why the call's pointer arguments are valid
/// for the prototype (or which invalid argument is deliberate).
#[macro_export]
macro_rules! kmt {
    ($cx:expr, $label:expr, $f:ident($($a:expr),* $(,)?), $why:literal) => {
        $crate::kmt!(@bind $cx, $label, $f, $why, [$($a,)*],
            [x0 x1 x2 x3 x4 x5 x6 x7 x8 x9], [])
    };
    // Evaluates the argument expressions one by one outside the unsafe
    // block, so no caller expression runs inside it.
    (@bind $cx:expr, $label:expr, $f:ident, $why:literal, [$head:expr, $($rest:expr,)*],
        [$n:ident $($ns:ident)*], [$($b:ident)*]) => {{
        let $n = $head;
        $crate::kmt!(@bind $cx, $label, $f, $why, [$($rest,)*], [$($ns)*], [$($b)* $n])
    }};
    (@bind $cx:expr, $label:expr, $f:ident, $why:literal, [], [$($ns:ident)*], [$($b:ident)*]) => {{
        let _why: &str = $why;
        let func = $cx.api.$f;
        $cx.begin_call(stringify!($f));
        let s = match func {
            // SAFETY: the function is typed with the C prototype of the
            // ABI generation the library was loaded as (api.rs); every
            // pointer argument is either a live buffer of that
            // generation's type and size, or a deliberate bad input (NULL,
            // unknown or freed address) that the C contract says the
            // library checks; the call site's reason string says which. A
            // library that crashes anyway only ends this child process,
            // which the parent records.
            Some(f) => Some(unsafe { f($($b),*) }),
            None => None,
        };
        $cx.status($label, stringify!($f), s)
    }};
}

/// Whether the process runs on the simulator or on a real KFD.
#[derive(Debug, Clone)]
pub struct Env {
    /// True on real hardware (`/dev/kfd` of the kernel).
    pub hardware: bool,
    /// Topology preset name on the simulator (`hw` on hardware).
    pub preset: String,
}

/// A page-aligned, zeroed host buffer (for register/userptr/SVM tests).
#[derive(Debug)]
pub struct HostBuf {
    ptr: *mut u8,
    layout: std::alloc::Layout,
}

impl HostBuf {
    /// `size` bytes aligned to 4 KiB (`size` must be non-zero).
    pub fn new(size: usize) -> HostBuf {
        let layout = std::alloc::Layout::from_size_align(size.max(1), 4096).expect("layout");
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        assert!(!ptr.is_null(), "out of memory");
        HostBuf { ptr, layout }
    }

    /// The start address.
    pub fn ptr(&self) -> *mut std::ffi::c_void {
        self.ptr.cast()
    }

    /// The size in bytes.
    pub fn len(&self) -> usize {
        self.layout.size()
    }

    /// Whether the buffer is empty (never: sizes are at least 1).
    pub fn is_empty(&self) -> bool {
        self.layout.size() == 0
    }
}

impl Drop for HostBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout, freed once.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) };
    }
}

/// A fresh private anonymous mapping (read-write, never touched), what a
/// program hands `hsaKmtSVMSetAttr` straight from `mmap`; unmapped on
/// drop.
#[derive(Debug)]
pub struct AnonMap {
    ptr: *mut std::ffi::c_void,
    len: usize,
}

impl AnonMap {
    /// `len` bytes (a multiple of 4 KiB) at an address the kernel picks.
    pub fn new(len: usize) -> AnonMap {
        // SAFETY: a new private anonymous mapping at a kernel-chosen
        // address; nothing else refers to it.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(ptr, libc::MAP_FAILED, "mmap of {len} bytes");
        AnonMap { ptr, len }
    }

    /// The start address.
    pub fn ptr(&self) -> *mut std::ffi::c_void {
        self.ptr
    }
}

impl Drop for AnonMap {
    fn drop(&mut self) {
        // SAFETY: our own mapping of `len` bytes, unmapped once.
        unsafe { libc::munmap(self.ptr, self.len) };
    }
}

/// The recorder a scenario runs with.
pub struct Cx<'a, A: Abi> {
    /// The library under test.
    pub api: &'a Api<A>,
    /// Where the run happens.
    pub env: &'a Env,
    out: &'a mut dyn Write,
    seen: HashMap<String, u32>,
    /// Known allocations `(start, size)`, to describe pointers by relation.
    allocs: Vec<(usize, u64)>,
}

impl<A: Abi> Debug for Cx<'_, A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cx")
            .field("env", self.env)
            .finish_non_exhaustive()
    }
}

/// `SUCCESS(0)`, `INVALID_PARAMETER(3)`, ... (`UNKNOWN(n)` for values
/// without a name).
pub fn status_text(s: u32) -> String {
    match hsakmt_sys::HSAKMT_STATUS(s).name() {
        Some(n) => format!("{}({s})", n.trim_start_matches("HSAKMT_STATUS_")),
        None => format!("UNKNOWN({s})"),
    }
}

impl<'a, A: Abi> Cx<'a, A> {
    /// A recorder writing to `out`.
    pub fn new(api: &'a Api<A>, env: &'a Env, out: &'a mut dyn Write) -> Cx<'a, A> {
        Cx {
            api,
            env,
            out,
            seen: HashMap::new(),
            allocs: Vec::new(),
        }
    }

    fn line(&mut self, s: &str) {
        // Unbuffered on purpose: a crash must not lose earlier records.
        let _ = self.out.write_all(s.as_bytes());
        let _ = self.out.flush();
    }

    /// Resets the per-scenario state (labels, known allocations).
    pub fn reset(&mut self) {
        self.seen.clear();
        self.allocs.clear();
    }

    /// Writes a raw protocol line (`B`/`E`).
    pub fn raw(&mut self, s: &str) {
        self.line(s);
    }

    fn key(&mut self, label: &str) -> String {
        let n = self.seen.entry(label.to_string()).or_insert(0);
        *n += 1;
        let k = if *n == 1 {
            label.to_string()
        } else {
            format!("{label}#{n}")
        };
        k.replace(['\t', '\n'], " ")
    }

    /// Records one observation.
    pub fn rec(&mut self, label: &str, value: impl Display) {
        let k = self.key(label);
        let v = value.to_string().replace(['\t', '\n'], " ");
        self.line(&format!("R\t{k}\t{v}\n"));
    }

    /// Counts `func` as exercised by this scenario (coverage) without
    /// calling it: used where a scenario exists for a function the library
    /// under test lacks.
    pub fn covers(&mut self, func: &str) {
        self.line(&format!("C\t{func}\n"));
    }

    /// Marks the start of a call (used by [`kmt!`](crate::kmt!)): written
    /// before the call so that a crash inside it names the function.
    pub fn begin_call(&mut self, func: &str) {
        self.line(&format!("F\t{func}\n"));
    }

    /// Records a call's status (used by [`kmt!`](crate::kmt!)).
    pub fn status(&mut self, label: &str, _func: &str, s: Option<St>) -> u32 {
        match s {
            Some(s) => {
                self.rec(label, status_text(s.0));
                s.0
            }
            None => {
                self.rec(label, "MISSING");
                MISSING
            }
        }
    }

    /// Records a documented-semantics check: `ok` or `FAIL: detail`.
    pub fn check(&mut self, name: &str, ok: bool, detail: impl Display) {
        let v = if ok {
            "ok".to_string()
        } else {
            format!("FAIL: {detail}")
        };
        self.rec(&format!("check.{name}"), v);
    }

    /// Records every top-level field of a `#[derive(Debug)]` struct as
    /// `prefix.Field`; fields named in `overrides` are recorded with the
    /// given text instead (pointers, compared by relation).
    pub fn fields(&mut self, prefix: &str, v: &impl Debug, overrides: &[(&str, String)]) {
        let text = format!("{v:?}");
        for (name, value) in split_fields(&text) {
            let value = overrides
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, o)| o.clone())
                .unwrap_or(value);
            self.rec(&format!("{prefix}.{name}"), value);
        }
    }

    /// Remembers an allocation so later pointers can be described
    /// relative to it.
    pub fn note_alloc(&mut self, p: usize, size: u64) {
        if p != 0 {
            self.allocs.push((p, size));
        }
    }

    /// Forgets an allocation.
    pub fn forget_alloc(&mut self, p: usize) {
        self.allocs.retain(|(a, _)| *a != p);
    }

    /// Describes an address by relation, never by value: `null`, the
    /// allocation it lies in (`alloc0+0x10`), or its alignment.
    pub fn rel(&self, p: usize) -> String {
        if p == 0 {
            return "null".into();
        }
        for (i, (a, s)) in self.allocs.iter().enumerate() {
            if p >= *a && (p as u64) < (*a as u64).saturating_add(*s) {
                return format!("alloc{i}+{:#x}", p - a);
            }
        }
        // Only page alignment is a contract; larger alignments are
        // incidental (they vary from run to run).
        let align = if p % 0x1000 == 0 {
            "4K"
        } else if p % 8 == 0 {
            "8"
        } else {
            "1"
        };
        format!("nonnull,align{align}")
    }
}

/// Splits `Name { a: 1, b: [1, 2], c: X { .. } }` into its top-level
/// `(field, value)` pairs. Text without braces is one pair `("value", ..)`.
pub fn split_fields(text: &str) -> Vec<(String, String)> {
    let Some(open) = text.find('{') else {
        return vec![("value".into(), text.to_string())];
    };
    let body = text[open + 1..].trim_end();
    let body = body.strip_suffix('}').unwrap_or(body);
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0usize;
    let bytes = body.as_bytes();
    let mut push = |s: &str| {
        let s = s.trim();
        if s.is_empty() {
            return;
        }
        match s.split_once(": ") {
            Some((k, v)) => out.push((k.trim().to_string(), v.trim().to_string())),
            None => out.push(("..".into(), s.to_string())),
        }
    };
    for (i, b) in bytes.iter().enumerate() {
        match b {
            b'{' | b'[' | b'(' => depth += 1,
            b'}' | b']' | b')' => depth -= 1,
            b',' if depth == 0 => {
                push(&body[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    push(&body[start..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_top_level_fields() {
        let v = split_fields("X { a: 1, b: [1, 2], c: Y { d: 3, e: (4, 5) } }");
        assert_eq!(
            v,
            vec![
                ("a".into(), "1".into()),
                ("b".into(), "[1, 2]".into()),
                ("c".into(), "Y { d: 3, e: (4, 5) }".into()),
            ]
        );
        assert_eq!(split_fields("7"), vec![("value".into(), "7".into())]);
    }

    #[test]
    fn status_names() {
        assert_eq!(status_text(0), "SUCCESS(0)");
        assert_eq!(status_text(22), "KERNEL_ALREADY_OPENED(22)");
        assert_eq!(status_text(u32::MAX), "UNKNOWN(4294967295)");
    }
}
