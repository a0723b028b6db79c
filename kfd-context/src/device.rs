//! GPU requests that need only the context's KFD descriptor.

use kfd_sys::kfd::AMDKFD_IOC_GET_TILE_CONFIG;
use kfd_sys::memory::{self, TileConfig};

use crate::{Context, ContextError};

impl Context {
    /// `AMDKFD_IOC_GET_TILE_CONFIG` of the GPU `gpu_id`
    /// (`hsaKmtGetTileConfig`): the kernel fills at most `tiles.len()`
    /// tile modes and `macro_tiles.len()` macro-tile modes and reports
    /// how many there are and the address configuration.
    pub fn tile_config(
        &self,
        gpu_id: u32,
        tiles: &mut [u32],
        macro_tiles: &mut [u32],
    ) -> Result<TileConfig, ContextError> {
        memory::get_tile_config(self.kfd(), gpu_id, tiles, macro_tiles).map_err(|errno| {
            ContextError::Ioctl {
                request: AMDKFD_IOC_GET_TILE_CONFIG.info(),
                errno,
            }
        })
    }
}
