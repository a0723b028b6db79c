//! GEM buffers of a render node (the DRM-handle layer) on the simulator.

mod common;

use common::{gpu_node, primary, teardown};
use kfd_fmm::{GemBuffer, MemFlags, PAGE_SIZE};
use std::os::fd::AsFd;

#[test]
fn import_metadata_va_and_cpu_map_of_an_exported_buffer() {
    let (sim, fmm) = primary("mi300x");
    let g = gpu_node(&fmm);
    let b = fmm
        .alloc_buffer(
            g,
            4 * PAGE_SIZE,
            0,
            MemFlags::NON_PAGED | MemFlags::HOST_ACCESS,
        )
        .unwrap();
    b.write(PAGE_SIZE, b"through the gem").unwrap();
    let (fd, _) = fmm.export_dmabuf(b.addr(), 4 * PAGE_SIZE).unwrap();
    let gpu_id = sim.topology().nodes[g as usize].gpu_id;
    let render = fmm.render_node(gpu_id).unwrap().clone();

    let gem = GemBuffer::import_dmabuf(render.clone(), fd.as_fd()).unwrap();
    assert_eq!(gem.size(), 4 * PAGE_SIZE);
    // The render node gives the same handle for the same buffer.
    let again = GemBuffer::import_dmabuf(render.clone(), fd.as_fd()).unwrap();
    assert_eq!(again.handle(), gem.handle());
    again.into_duplicate();

    assert_eq!(gem.metadata().unwrap(), Vec::<u32>::new());
    gem.set_metadata(&[0xfeed]).unwrap();
    assert_eq!(gem.metadata().unwrap(), vec![0xfeed]);
    assert!(gem.set_metadata(&[0; 65]).is_err());

    let va = 0x7f00_0000_0000;
    gem.va_map(0, 2 * PAGE_SIZE, va, kfd_fmm::VaAccess::ReadWrite)
        .unwrap();
    assert!(
        gem.va_map(PAGE_SIZE, PAGE_SIZE, va, kfd_fmm::VaAccess::Read)
            .is_err(),
        "overlap"
    );
    assert!(
        gem.va_map(0, 8 * PAGE_SIZE, va + (1 << 30), kfd_fmm::VaAccess::Read)
            .is_err(),
        "past the end"
    );
    gem.va_unmap(0, 2 * PAGE_SIZE, va).unwrap();
    assert!(
        gem.va_unmap(0, 2 * PAGE_SIZE, va).is_err(),
        "unmapped twice"
    );

    let off = gem.mmap_offset().unwrap();
    assert_eq!(off % PAGE_SIZE, 0);
    let cpu = gem.cpu_map().unwrap();
    assert_eq!(gem.cpu_map().unwrap(), cpu, "mapped once");
    // SAFETY: `cpu` maps the whole 4-page buffer while `gem` lives.
    let bytes = unsafe { std::slice::from_raw_parts((cpu + PAGE_SIZE as usize) as *const u8, 15) };
    assert_eq!(bytes, b"through the gem");

    drop(gem);
    drop(render);
    drop(fd);
    drop(b);
    teardown(sim, fmm);
}
