//! Safe forms of the memory requests whose arguments carry user
//! pointers, and of the ones that hand back a new descriptor.
//!
//! Each function builds the pointer fields from Rust values (slices it
//! borrows for the call), so the kernel reads and writes exactly those;
//! the one place that argues why each call is sound. Nothing here maps
//! errors, checks versions or retries beyond [`crate::ioctl::ioctl`]'s
//! `EINTR`/`EAGAIN` loop.

use std::os::fd::{AsFd, FromRawFd, OwnedFd};

use crate::ioctl::IoctlInfo;
use crate::kfd::{self, kfd_process_device_apertures};
use crate::{DeviceFile, Errno};

/// `AMDKFD_IOC_ALLOC_MEMORY_OF_GPU`. The arguments carry addresses the
/// kernel records: the GPU VA, and for a userptr BO
/// (`KFD_IOC_ALLOC_MEM_FLAGS_USERPTR`) the user address in
/// `mmap_offset`, whose pages the kernel pins without reading or writing
/// them during the call (the GPU reaches them later, like any memory
/// shared with a device). Returns the request's result with the handle
/// and mmap offset filled in.
pub fn alloc_memory_of_gpu(
    file: &DeviceFile,
    args: &mut kfd::kfd_ioctl_alloc_memory_of_gpu_args,
) -> Result<i32, Errno> {
    // SAFETY: no field is a pointer the kernel dereferences during the
    // call (see the function's docs).
    unsafe { file.ioctl(kfd::AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, args) }
}

/// The outcome of a map or unmap request: its result, and how many of
/// the devices it was given are done (the kernel's `n_success`, at most
/// the number given).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DevicesDone {
    /// The request's result.
    pub result: Result<(), Errno>,
    /// Devices of the list the request is done for, from the start.
    pub done: usize,
}

/// `AMDKFD_IOC_MAP_MEMORY_TO_GPU` of BO `handle` to the devices `ids`,
/// the first `done` of which the BO is mapped on already (the kernel
/// resumes after them).
pub fn map_memory_to_gpu(file: &DeviceFile, handle: u64, ids: &[u32], done: usize) -> DevicesDone {
    let mut args = kfd::kfd_ioctl_map_memory_to_gpu_args {
        handle,
        device_ids_array_ptr: ids.as_ptr() as u64,
        n_devices: ids.len() as u32,
        n_success: done.min(ids.len()) as u32,
    };
    // SAFETY: `device_ids_array_ptr` points to `ids`, `n_devices`
    // initialised u32s borrowed for the call; the kernel only reads them.
    let r = unsafe { file.ioctl(kfd::AMDKFD_IOC_MAP_MEMORY_TO_GPU, &mut args) };
    DevicesDone {
        result: r.map(drop),
        done: (args.n_success as usize).min(ids.len()),
    }
}

/// `AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU` of BO `handle` from the devices
/// `ids`.
pub fn unmap_memory_from_gpu(file: &DeviceFile, handle: u64, ids: &[u32]) -> DevicesDone {
    let mut args = kfd::kfd_ioctl_unmap_memory_from_gpu_args {
        handle,
        device_ids_array_ptr: ids.as_ptr() as u64,
        n_devices: ids.len() as u32,
        n_success: 0,
    };
    // SAFETY: as for map: the id array is borrowed for the call and only
    // read.
    let r = unsafe { file.ioctl(kfd::AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, &mut args) };
    DevicesDone {
        result: r.map(drop),
        done: (args.n_success as usize).min(ids.len()),
    }
}

/// `AMDKFD_IOC_GET_PROCESS_APERTURES_NEW` into `out`; returns how many
/// entries the kernel has (it fills at most `out.len()`). With an empty
/// `out` this is the count query.
pub fn get_process_apertures(
    file: &DeviceFile,
    out: &mut [kfd_process_device_apertures],
) -> Result<u32, Errno> {
    let mut args = kfd::kfd_ioctl_get_process_apertures_new_args {
        kfd_process_device_apertures_ptr: if out.is_empty() {
            0
        } else {
            out.as_mut_ptr() as u64
        },
        num_of_nodes: out.len() as u32,
        pad: 0,
    };
    // SAFETY: the pointer is `out` (or NULL for none), `num_of_nodes`
    // entries borrowed mutably for the call, which the kernel fills.
    unsafe { file.ioctl(kfd::AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, &mut args) }?;
    Ok(args.num_of_nodes)
}

/// `AMDKFD_IOC_GET_DMABUF_INFO` of `dmabuf_fd`, with room for
/// `metadata.len()` bytes of driver metadata (the kernel writes at most
/// that many). The returned arguments carry the size, the gpu_id, the
/// flags and the metadata size the buffer has (which may be larger than
/// `metadata`: the request then fails and can be issued again with room
/// for all of it).
pub fn get_dmabuf_info(
    file: &DeviceFile,
    dmabuf_fd: u32,
    metadata: &mut [u8],
) -> (Result<(), Errno>, kfd::kfd_ioctl_get_dmabuf_info_args) {
    let mut args = kfd::kfd_ioctl_get_dmabuf_info_args {
        metadata_ptr: metadata.as_mut_ptr() as u64,
        metadata_size: metadata.len() as u32,
        dmabuf_fd,
        ..Default::default()
    };
    // SAFETY: `metadata_ptr` points to `metadata`, `metadata_size` bytes
    // borrowed mutably for the call; the kernel writes at most that many.
    let r = unsafe { file.ioctl(kfd::AMDKFD_IOC_GET_DMABUF_INFO, &mut args) };
    (r.map(drop), args)
}

/// `AMDKFD_IOC_EXPORT_DMABUF` of BO `handle` with `flags` (`O_CLOEXEC`,
/// `O_RDWR`): the new dma-buf descriptor, owned by the caller.
pub fn export_dmabuf(file: &DeviceFile, handle: u64, flags: u32) -> Result<OwnedFd, Errno> {
    let mut args = kfd::kfd_ioctl_export_dmabuf_args {
        handle,
        flags,
        dmabuf_fd: 0,
    };
    file.ioctl_plain(kfd::AMDKFD_IOC_EXPORT_DMABUF, &mut args)?;
    // SAFETY: on success the kernel installed `dmabuf_fd` in this process
    // for the caller; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(args.dmabuf_fd as i32) })
}

/// `AMDKFD_IOC_SMI_EVENTS` of GPU `gpu_id`: the new SMI event
/// descriptor, owned by the caller.
pub fn smi_events(file: &DeviceFile, gpu_id: u32) -> Result<OwnedFd, Errno> {
    let mut args = kfd::kfd_ioctl_smi_events_args {
        gpuid: gpu_id,
        anon_fd: 0,
    };
    file.ioctl_plain(kfd::AMDKFD_IOC_SMI_EVENTS, &mut args)?;
    // SAFETY: on success the kernel installed `anon_fd` in this process
    // for the caller; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(args.anon_fd as i32) })
}

/// What [`get_tile_config`] reports besides the arrays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TileConfig {
    /// Entries of the tile-mode array the kernel filled.
    pub num_tile_configs: u32,
    /// Entries of the macro-tile-mode array the kernel filled.
    pub num_macro_tile_configs: u32,
    /// `GB_ADDR_CONFIG`.
    pub gb_addr_config: u32,
    /// Number of banks.
    pub num_banks: u32,
    /// Number of ranks.
    pub num_ranks: u32,
}

/// `AMDKFD_IOC_GET_TILE_CONFIG` of GPU `gpu_id` into `tiles` and
/// `macro_tiles` (the kernel fills at most their lengths).
pub fn get_tile_config(
    file: &DeviceFile,
    gpu_id: u32,
    tiles: &mut [u32],
    macro_tiles: &mut [u32],
) -> Result<TileConfig, Errno> {
    let mut args = kfd::kfd_ioctl_get_tile_config_args {
        tile_config_ptr: tiles.as_mut_ptr() as u64,
        macro_tile_config_ptr: macro_tiles.as_mut_ptr() as u64,
        num_tile_configs: tiles.len() as u32,
        num_macro_tile_configs: macro_tiles.len() as u32,
        gpu_id,
        ..Default::default()
    };
    // SAFETY: the two pointers are the slices, borrowed mutably for the
    // call, announced with their lengths; the kernel writes at most that
    // many entries into each.
    unsafe { file.ioctl(kfd::AMDKFD_IOC_GET_TILE_CONFIG, &mut args) }?;
    Ok(TileConfig {
        num_tile_configs: args.num_tile_configs,
        num_macro_tile_configs: args.num_macro_tile_configs,
        gb_addr_config: args.gb_addr_config,
        num_banks: args.num_banks,
        num_ranks: args.num_ranks,
    })
}

/// What [`cross_memory_copy`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CopyDone {
    /// The request's result.
    pub result: Result<(), Errno>,
    /// Bytes the kernel copied (also reported when it failed part way).
    pub bytes_copied: u64,
}

/// `AMDKFD_IOC_CROSS_MEMORY_COPY` (ROCm kernels only; upstream ones do
/// not have the request): copies between this process and process `pid`
/// as two arrays of `kfd_memory_range` describe, `src` to `dst`, each an
/// (address, element count) pair handed to the kernel as it is. With
/// `write` the destination ranges are in `pid` (`KFD_CROSS_MEMORY_RW_BIT`),
/// else the source ranges are.
///
/// # Safety
///
/// The kernel copies both arrays in itself (`EFAULT` for memory it cannot
/// read), then reads the source ranges and writes the destination ranges
/// they name. The ranges named in this process must be valid for that
/// access for the call, and the memory written must not be referred to by
/// anything Rust holds (the C API's contract, passed on).
pub unsafe fn cross_memory_copy(
    file: &DeviceFile,
    pid: u32,
    write: bool,
    src: (u64, u64),
    dst: (u64, u64),
) -> CopyDone {
    let mut args = kfd::kfd_ioctl_cross_memory_copy_args {
        pid,
        flags: u32::from(write),
        src_mem_range_array: src.0,
        src_mem_array_size: src.1,
        dst_mem_range_array: dst.0,
        dst_mem_array_size: dst.1,
        bytes_copied: 0,
    };
    // SAFETY: forwarded contract: the arrays and the ranges they name are
    // the caller's to hand to the kernel.
    let r = unsafe { file.ioctl(kfd::AMDKFD_IOC_CROSS_MEMORY_COPY, &mut args) };
    CopyDone {
        result: r.map(drop),
        bytes_copied: args.bytes_copied,
    }
}

/// The `AMDKFD_IOC_SVM` request for `attrs.len()` attributes (its size
/// field counts them), as an error names it.
pub fn svm_request(attrs: usize) -> IoctlInfo {
    IoctlInfo {
        name: "AMDKFD_IOC_SVM",
        request: kfd::svm_request(attrs),
    }
}

/// `AMDKFD_IOC_SVM` operation `op` (`KFD_IOCTL_SVM_OP_*`) on
/// `[start, start + size)` with the attributes `attrs` as
/// `(type, value)` pairs, which the kernel reads and (for GET_ATTR)
/// writes back. The range is an address range the kernel records (SVM
/// ranges are managed by the kernel, not accessed during the call).
/// At most [`kfd::SVM_MAX_ATTRS`] attributes (`E2BIG` otherwise).
pub fn svm(
    file: &DeviceFile,
    op: u32,
    start: u64,
    size: u64,
    attrs: &mut [(u32, u32)],
) -> Result<(), Errno> {
    if attrs.len() > kfd::SVM_MAX_ATTRS {
        return Err(Errno::E2BIG);
    }
    // struct kfd_ioctl_svm_args followed by its attributes, built in a
    // u64 buffer (8-byte aligned; every field pair packs into one u64,
    // low half first, as the structs lie in memory on little-endian).
    let mut buf = Vec::with_capacity(3 + attrs.len());
    buf.push(start);
    buf.push(size);
    buf.push(op as u64 | (attrs.len() as u64) << 32);
    buf.extend(attrs.iter().map(|&(t, v)| t as u64 | (v as u64) << 32));
    let request = kfd::svm_request(attrs.len());
    loop {
        // SAFETY: `buf` holds the header and `attrs.len()` attributes,
        // exactly the size encoded in `request`, borrowed mutably for the
        // call; the range is only recorded by the kernel.
        let r = unsafe {
            file.driver().ioctl(
                file.as_fd(),
                request as libc::c_ulong,
                buf.as_mut_ptr().cast(),
            )
        };
        match r {
            Err(Errno::EINTR) | Err(Errno::EAGAIN) => continue,
            Err(e) => return Err(e),
            Ok(_) => break,
        }
    }
    for (a, w) in attrs.iter_mut().zip(&buf[3..]) {
        *a = (*w as u32, (*w >> 32) as u32);
    }
    Ok(())
}

#[cfg(target_endian = "big")]
compile_error!("kfd-sys lays out the SVM ioctl for little-endian targets only");
