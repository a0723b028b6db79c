//! Sample code objects, the crate's test fixtures, for examples and tests
//! of code that loads and dispatches kernels (built by Debian's clang 19
//! from the OpenCL C sources in `tests/fixtures/`, code object v5; the
//! crate README gives the commands).

/// `vector_add(const float *a, const float *b, float *c, uint n)`:
/// `c[i] = a[i] + b[i]` for `i < n`, where `i` is the work-item's flat X id
/// (workgroup id × `hidden_group_size_x` + work-item id). gfx90a.
pub const VECTOR_ADD_GFX90A: &[u8] = include_bytes!("../tests/fixtures/vector_add.gfx90a.co");

/// [`VECTOR_ADD_GFX90A`] compiled for gfx942.
pub const VECTOR_ADD_GFX942: &[u8] = include_bytes!("../tests/fixtures/vector_add.gfx942.co");

/// `read_table(int *out)`: `out[0] = *table_ptr + *hidden_ptr` (3 + 7)
/// through program-scope pointers that the loader relocates
/// (`R_AMDGPU_RELATIVE64`, `R_AMDGPU_ABS64`). gfx90a.
pub const GLOBALS_GFX90A: &[u8] = include_bytes!("../tests/fixtures/globals.gfx90a.co");
