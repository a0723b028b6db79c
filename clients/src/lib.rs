//! Real-client programs for `cargo xtask clients`.
//!
//! `kfd-rocr-client` loads the HSA runtime (`libhsa-runtime64.so.1`, any
//! ROCr from 5.2 to 7.x) at run time, walks agents, regions, memory
//! pools, allocations, queues and signals ([`probe`]) and prints a report
//! with no address, pid or time in it, so a run with the C libhsakmt and
//! one with ours can be compared byte for byte. On stderr it names the
//! thunk library it has mapped ([`thunk`]). Then it has the runtime
//! finish GPU work on the simulator's engines ([`work`]): async copies of
//! 4 KiB to 64 MiB with the bytes compared, barrier packets and infinite
//! signal waits. With `--blit` it runs ROCr's blit kernels instead
//! ([`blit`]): `hsa_amd_memory_fill` and async copies with SDMA off, 1
//! byte to 64 MiB at aligned and misaligned offsets, every byte checked.
//!
//! `kfd-ipc-client` shares GPU and system memory with a second process
//! of itself through ROCr's IPC API ([`ipc`]), the path on which ROCr 7.x
//! calls the libdrm_amdgpu buffer-object entry points of a DTIF thunk.
//!
//! `kfd-ctx-client` opens a secondary KFD context of our newest build
//! through the context API ([`kmt`]) and checks what it does against the
//! documented semantics ([`ctx`]).

/// Declares a struct of C entry points, one field each, resolved by their
/// C names when the library is loaded (`load`); the function pointers
/// stay valid while the value (which owns the library) lives.
macro_rules! entry_points {
    (
        $(#[doc = $sdoc:literal])* $name:ident;
        $($(#[doc = $doc:literal])* $field:ident: fn($($arg:ty),*) $(-> $ret:ty)?;)*
    ) => {
        $(#[doc = $sdoc])*
        #[derive(Debug)]
        pub struct $name {
            $($(#[doc = $doc])* pub $field: unsafe extern "C" fn($($arg),*) $(-> $ret)?,)*
            _lib: libloading::Library,
        }

        impl $name {
            /// Loads `name` (a file name searched like `dlopen` does, or a
            /// path) and resolves every entry point; the error names the
            /// library or the first missing symbol.
            pub fn load(name: &str) -> Result<Self, String> {
                // SAFETY: loading runs the library's initialisers, which
                // only set up its own globals.
                let lib = unsafe { libloading::Library::new(name) }
                    .map_err(|e| format!("{name}: {e}"))?;
                $(
                    // SAFETY: the symbol is the C function of that name,
                    // whose prototype in the library's header is the
                    // field's type (checked by the crate's layout tests).
                    let $field = *unsafe {
                        lib.get::<unsafe extern "C" fn($($arg),*) $(-> $ret)?>(
                            concat!(stringify!($field), "\0").as_bytes(),
                        )
                    }
                    .map_err(|e| format!("{name}: {}: {e}", stringify!($field)))?;
                )*
                Ok(Self { $($field,)* _lib: lib })
            }
        }
    };
}

pub mod blit;
pub mod ctx;
pub mod hsa;
pub mod ipc;
pub mod kmt;
pub mod probe;
pub mod session;
pub mod thunk;
pub mod work;
