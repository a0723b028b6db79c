//! The `export!` and `forward!` macros: how every hsakmt entry point is
//! declared.
//!
//! Each entry is a `pub unsafe extern "C"` function returning
//! `HSAKMT_STATUS`. Which build exports it is given by a leading mode
//! word:
//!
//! | mode      | `rocm-5.2`            | `rocm-6.2`            | `newest`                   |
//! |-----------|-----------------------|-----------------------|----------------------------|
//! | `all`     | exported              | exported              | exported                   |
//! | `since62` | not compiled          | exported              | exported                   |
//! | `newest`  | not compiled          | not compiled          | exported                   |
//! | `rocm52`  | exported              | not compiled          | not compiled               |
//! | `ctx`     | compiled, not exported| compiled, not exported| exported (a `...Ctx` form) |
//!
//! Exported means: the C name is defined in assembly, next to the Rust
//! function, as a jump to it (the Rust function keeps its mangled,
//! internal symbol), with `.symver NAME, NAME@@HSAKMT_1`, so that the
//! symbol carries the `HSAKMT_1` version as its default version, as in
//! the C library; `build.rs`'s version script makes it global. Defining
//! the symbol in the same assembly block as its `.symver` keeps the two in
//! one object file whatever the codegen-unit split (a `#[no_mangle]`
//! function may land in another object than a module-level `.symver`,
//! which the assembler rejects).
//!
//! `export!` bodies are blocks returning [`crate::border::KmtResult`]
//! and run inside [`crate::border::guard`] (no panic crosses the border).
//! `forward!` declares a legacy function as a one-line call of its `Ctx`
//! form on the primary context.

/// Declares entry points whose bodies are written out (see the module
/// docs for the mode words).
macro_rules! export {
    (@symbol $name:ident) => {
        ::core::arch::global_asm!(
            ".pushsection .text",
            concat!(".globl ", stringify!($name)),
            concat!(".type ", stringify!($name), ", @function"),
            concat!(stringify!($name), ":"),
            "jmp {f}",
            concat!(".size ", stringify!($name), ", . - ", stringify!($name)),
            concat!(".symver ", stringify!($name), ", ", stringify!($name), "@@HSAKMT_1"),
            ".popsection",
            f = sym $name,
        );
    };
    (@one all [$($m:tt)*] $name:ident [$($a:ident : $t:ty),*] $body:block) => {
        $($m)*
        ///
        /// # Safety
        ///
        /// A C entry point: pointer arguments must satisfy the hsakmt.h
        /// contract; NULL and misaligned pointers are rejected with a status.
        pub unsafe extern "C" fn $name($($a: $t),*) -> $crate::border::Status $body

        export!(@symbol $name);
    };
    (@one ctx [$($m:tt)*] $name:ident [$($a:ident : $t:ty),*] $body:block) => {
        $($m)*
        ///
        /// # Safety
        ///
        /// A C entry point: pointer arguments must satisfy the hsakmtctx.h
        /// contract; NULL and misaligned pointers are rejected with a
        /// status, and the context pointer is looked up in the registry of
        /// live contexts before use (never dereferenced).
        pub unsafe extern "C" fn $name($($a: $t),*) -> $crate::border::Status $body

        #[cfg(feature = "newest")]
        export!(@symbol $name);
    };
    (@one since62 [$($m:tt)*] $name:ident [$($a:ident : $t:ty),*] $body:block) => {
        $($m)*
        ///
        /// # Safety
        ///
        /// A C entry point of the 6.2 and newest hsakmt.h: pointer
        /// arguments must satisfy its contract; NULL and misaligned
        /// pointers are rejected with a status.
        #[cfg(any(feature = "rocm-6.2", feature = "newest"))]
        pub unsafe extern "C" fn $name($($a: $t),*) -> $crate::border::Status $body

        #[cfg(any(feature = "rocm-6.2", feature = "newest"))]
        export!(@symbol $name);
    };
    (@one newest [$($m:tt)*] $name:ident [$($a:ident : $t:ty),*] $body:block) => {
        $($m)*
        ///
        /// # Safety
        ///
        /// A C entry point of the newest hsakmt.h: pointer arguments must
        /// satisfy its contract; NULL and misaligned pointers are rejected
        /// with a status.
        #[cfg(feature = "newest")]
        pub unsafe extern "C" fn $name($($a: $t),*) -> $crate::border::Status $body

        #[cfg(feature = "newest")]
        export!(@symbol $name);
    };
    (@one rocm52 [$($m:tt)*] $name:ident [$($a:ident : $t:ty),*] $body:block) => {
        $($m)*
        ///
        /// # Safety
        ///
        /// A C entry point of Debian's 5.2.3 hsakmt.h: pointer arguments
        /// must satisfy its contract; NULL and misaligned pointers are
        /// rejected with a status.
        #[cfg(feature = "rocm-5.2")]
        pub unsafe extern "C" fn $name($($a: $t),*) -> $crate::border::Status $body

        #[cfg(feature = "rocm-5.2")]
        export!(@symbol $name);
    };
    // The body of each entry point, as a Rust function of its own in a
    // module named after it (modules and functions live in different
    // namespaces): the export runs it inside its guard, and a forward or
    // another export calls it directly, inside the guard it already runs
    // in (one guard per C call). Compiled where the export is.
    (@body all $($rest:tt)*) => { export!(@module [] $($rest)*); };
    (@body ctx $($rest:tt)*) => { export!(@module [] $($rest)*); };
    (@body since62 $($rest:tt)*) => {
        export!(@module [#[cfg(any(feature = "rocm-6.2", feature = "newest"))]] $($rest)*);
    };
    (@body newest $($rest:tt)*) => {
        export!(@module [#[cfg(feature = "newest")]] $($rest)*);
    };
    (@body rocm52 $($rest:tt)*) => {
        export!(@module [#[cfg(feature = "rocm-5.2")]] $($rest)*);
    };
    (@module [$(#[$cfg:meta])*] $name:ident [$($a:ident : $t:ty),*] $body:block) => {
        $(#[$cfg])*
        #[doc(hidden)]
        #[allow(non_snake_case)]
        pub(crate) mod $name {
            #[allow(unused_imports)]
            use super::*;

            /// The entry point's body, without its guard.
            ///
            /// # Safety
            ///
            /// The entry point's contract; called inside a guard.
            #[allow(non_snake_case, unused_unsafe, clippy::too_many_arguments)]
            #[inline(always)]
            pub(crate) unsafe fn body($($a: $t),*) -> $crate::border::KmtResult $body
        }
    };
    ($(
        $(#[$meta:meta])*
        $mode:ident fn $name:ident($($arg:ident : $ty:ty),* $(,)?) $body:block
    )*) => {$(
        export!(@body $mode $name [$($arg : $ty),*] $body);
        export!(@one $mode [$(#[$meta])*] $name [$($arg : $ty),*] {
            // SAFETY: the C caller's contract is this function's.
            $crate::border::guard(|| unsafe { $name::body($($arg),*) })
        });
    )*};
}

/// Declares legacy entry points that forward to their `Ctx` form on the
/// primary context: `mode fn hsaKmtX(args) => hsaKmtXCtx;`.
macro_rules! forward {
    ($(
        $(#[$meta:meta])*
        $mode:ident fn $name:ident($($arg:ident : $ty:ty),* $(,)?) => $target:ident;
    )*) => {$(
        export!(@one $mode [
            $(#[$meta])*
            #[doc = ""]
            #[doc = concat!("Forwards to [`", stringify!($target), "`] on the primary context.")]
        ] $name [$($arg : $ty),*] {
            // SAFETY: the arguments are this function's own, passed on
            // unchanged to the body of a function with the same contract
            // plus a context, which is the primary context's stable
            // handle; this guard is the body's.
            $crate::border::guard(|| unsafe { $target::body($crate::ctx::primary_ptr(), $($arg),*) })
        });
    )*};
}

// The absolute symbol GNU ld defines for each version node (value 0,
// bound to the node itself); Debian's libhsakmt.so.1 exports it, rustc's
// linker (lld) does not create it, so it is declared here.
::core::arch::global_asm!(
    ".globl HSAKMT_1",
    ".type HSAKMT_1, @object",
    ".set HSAKMT_1, 0",
    ".symver HSAKMT_1, HSAKMT_1@@HSAKMT_1",
);
