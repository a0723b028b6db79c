//! The `export!` macro: declares an exported hsakmt function.
//!
//! Each export is a `#[no_mangle] extern "C"` function whose body runs
//! inside [`crate::border::guard`], plus an assembler `.symver` directive
//! binding the symbol to the `HSAKMT_1` version node as its default
//! version, exactly as the C library's symbols are.

/// Declares exported functions:
///
/// ```ignore
/// export! {
///     /// Docs.
///     fn hsaKmtCloseKFD() { ...body returning KmtResult... }
/// }
/// ```
macro_rules! export {
    ($(
        $(#[$meta:meta])*
        fn $name:ident($($arg:ident : $ty:ty),* $(,)?) $body:block
    )*) => {$(
        $(#[$meta])*
        ///
        /// # Safety
        ///
        /// A C entry point: pointer arguments must satisfy the hsakmt.h
        /// contract; NULL and misaligned pointers are rejected with a status.
        #[no_mangle]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> $crate::border::Status {
            $crate::border::guard(|| $body)
        }

        ::core::arch::global_asm!(concat!(
            ".symver ", stringify!($name), ", ", stringify!($name), "@@HSAKMT_1"
        ));
    )*};
}
