//! Declaration macros for the hsakmt C types: C enums as integer newtypes,
//! bit-field words as integer newtypes with per-field accessors, and an
//! all-zero `Default` for plain-old-data structs.

/// Declares a C enum as a `#[repr(transparent)]` integer newtype.
///
/// Every enumerator becomes an associated constant and a module-level
/// constant of the same name. Values the C side sends that have no name
/// stay representable (no undefined behaviour), and `Debug` prints them as
/// the raw number.
macro_rules! c_enum {
    (
        $(#[$meta:meta])*
        pub struct $name:ident($int:ty) {
            $(
                $(#[$vmeta:meta])*
                $variant:ident = $value:expr
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[repr(transparent)]
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
        pub struct $name(pub $int);

        #[allow(non_upper_case_globals)]
        impl $name {
            $(
                $(#[$vmeta])*
                pub const $variant: $name = $name($value);
            )*

            /// Every named value, in header order, as `(C name, value)`.
            pub const VALUES: &'static [(&'static str, $name)] =
                &[$((stringify!($variant), $name::$variant)),*];

            /// The C enumerator name of this value, or `None` if the value
            /// has no name. Where two names share a value the first one in
            /// header order is returned.
            pub fn name(self) -> Option<&'static str> {
                Self::VALUES.iter().find(|(_, v)| *v == self).map(|(n, _)| *n)
            }
        }

        impl ::core::fmt::Debug for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                match self.name() {
                    Some(n) => f.write_str(n),
                    None => write!(f, "{}({})", stringify!($name), self.0),
                }
            }
        }

        $(
            $(#[$vmeta])*
            pub const $variant: $name = $name::$variant;
        )*
    };
}

/// Describes one named bit field of a bit-field word (see `bitfield!`).
pub struct BitField<T, V> {
    /// The C member name.
    pub name: &'static str,
    /// Position of the lowest bit.
    pub lo: u32,
    /// Width in bits.
    pub width: u32,
    /// Reads the field.
    pub get: fn(T) -> V,
    /// Writes the field (value truncated to `width` bits).
    pub set: fn(&mut T, V),
}

impl<T, V> ::core::fmt::Debug for BitField<T, V> {
    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
        f.debug_struct("BitField")
            .field("name", &self.name)
            .field("lo", &self.lo)
            .field("width", &self.width)
            .finish()
    }
}

/// Declares a C bit-field word (a union of an integer and a struct of
/// `unsigned int x : n` members) as a `#[repr(transparent)]` integer
/// newtype with one getter and one setter per named field.
///
/// The caller writes the `#[repr]`: `transparent` for 32-bit words,
/// `C, packed(4)` for 64-bit words that the header's pack pragma leaves
/// 4-byte aligned.
///
/// Field syntax: `Name, set_Name: lo..hi;` with `hi` exclusive, bits
/// numbered from the least significant (gcc's x86_64 allocation order).
/// Setters truncate the value to the field width, like a C assignment.
macro_rules! bitfield {
    (
        $(#[$meta:meta])*
        pub struct $name:ident($int:ty) {
            $(
                $(#[$fmeta:meta])*
                $get:ident, $set:ident : $lo:literal .. $hi:literal;
            )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub struct $name(pub $int);

        #[allow(non_snake_case)]
        impl $name {
            $(
                $(#[$fmeta])*
                #[doc = concat!("\n\nGetter: bits ", stringify!($lo), "..", stringify!($hi), ".")]
                #[inline]
                pub const fn $get(self) -> $int {
                    (self.0 >> $lo) & (<$int>::MAX >> (<$int>::BITS - ($hi - $lo)))
                }

                #[doc = concat!("Sets `", stringify!($get), "` (bits ", stringify!($lo), "..",
                    stringify!($hi), "); the value is truncated to the field width.")]
                #[inline]
                pub fn $set(&mut self, value: $int) {
                    let mask: $int = (<$int>::MAX >> (<$int>::BITS - ($hi - $lo))) << $lo;
                    self.0 = (self.0 & !mask) | ((value << $lo) & mask);
                }
            )*

            /// Every named field, in header order.
            pub const FIELDS: &'static [$crate::BitField<$name, $int>] = &[$(
                $crate::BitField {
                    name: stringify!($get),
                    lo: $lo,
                    width: $hi - $lo,
                    get: $name::$get,
                    set: $name::$set,
                }
            ),*];
        }

        impl ::core::fmt::Debug for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                let mut d = f.debug_struct(stringify!($name));
                $( d.field(stringify!($get), &self.$get()); )*
                d.finish()
            }
        }
    };
}

/// Implements `Default` as the all-zero value for plain-old-data C structs
/// (integers, raw pointers, arrays and unions of those).
macro_rules! zeroed_default {
    ($($t:ty),* $(,)?) => {$(
        impl Default for $t {
            fn default() -> Self {
                // SAFETY: the type is a C struct made only of integers, raw
                // pointers, integer newtypes and arrays/unions of these; the
                // all-zero bit pattern is a valid value for each of them.
                unsafe { ::core::mem::zeroed() }
            }
        }
    )*};
}
