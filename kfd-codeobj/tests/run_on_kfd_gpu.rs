//! End to end without a driver: the samples' load images and kernarg
//! buffers are placed in kfd-gpu's flat memory and run by its shader
//! machine (the hardware model under kfd-sim), which reads the kernel
//! descriptor from the image itself. `vector_add` must add; `read_table`
//! must follow the pointers the loader relocated.

mod common;

use common::fixture;
use kfd_codeobj::{samples, CodeObject, Dispatch, KernargBuilder, ValueKind};
use kfd_gpu::mem::{FlatMemory, Tlb};
use kfd_gpu::shader::{self, CodeCache, KernelCode, Limits, Target};
use kfd_sys::hsa::{hsa_kernel_dispatch_packet_t, HSA_PACKET_TYPE_KERNEL_DISPATCH};
use zerocopy::IntoBytes;

/// The flat memory: 16 MiB at 16 MiB.
const MEM_BASE: u64 = 0x100_0000;
/// Where the load image goes (page aligned, as the layouts need).
const IMAGE: u64 = MEM_BASE;
/// The kernarg buffer.
const KERNARG: u64 = MEM_BASE + 0x10_0000;
/// Data buffers.
const DATA: u64 = MEM_BASE + 0x20_0000;
/// The AQL dispatch packet (v4 kernels read their workgroup size there).
const PACKET: u64 = MEM_BASE + 0x18_0000;

/// Loads `co` at [`IMAGE`], writes `kernarg` at [`KERNARG`] and a
/// dispatch packet at [`PACKET`], and runs kernel `name` over `dispatch`'s
/// grid, as a command processor would from that packet.
fn run(
    mem: &FlatMemory,
    target: Target,
    co: &CodeObject,
    name: &str,
    kernarg: &[u8],
    dispatch: &Dispatch,
) {
    let image = co.load(IMAGE).unwrap();
    mem.write(IMAGE, image.bytes());
    mem.write(KERNARG, kernarg);
    let kernel = image.kernel(name).unwrap();
    // The GPU model reads the descriptor from memory, at the address a
    // dispatch packet's kernel_object would hold.
    let code = KernelCode::read(&mut Tlb::new(mem), kernel.descriptor_address).unwrap();
    assert_eq!(code.entry, kernel.entry_address());
    let packet = hsa_kernel_dispatch_packet_t {
        header: HSA_PACKET_TYPE_KERNEL_DISPATCH,
        setup: dispatch.dims(),
        workgroup_size_x: dispatch.workgroup_size[0],
        workgroup_size_y: dispatch.workgroup_size[1],
        workgroup_size_z: dispatch.workgroup_size[2],
        grid_size_x: dispatch.grid_size[0],
        grid_size_y: dispatch.grid_size[1],
        grid_size_z: dispatch.grid_size[2],
        kernel_object: kernel.descriptor_address,
        kernarg_address: KERNARG,
        ..Default::default()
    };
    mem.write(PACKET, packet.as_bytes());
    let d = shader::Dispatch {
        target,
        code,
        grid: dispatch.grid_size,
        workgroup: dispatch.workgroup_size,
        group_segment_size: kernel.descriptor.group_segment_fixed_size,
        private_segment_size: kernel.descriptor.private_segment_fixed_size,
        kernarg: KERNARG,
        packet: PACKET,
        queue: 0,
        dispatch_id: 0,
        shared_base: 1 << 48,
        private_base: 2 << 48,
        mem,
        limits: Limits::default(),
        stop: &|| false,
        clock: &|| 0,
        realtime: &|| 0,
    };
    shader::run(&d, &CodeCache::new()).unwrap_or_else(|e| panic!("{name}: {e}"));
}

/// `c = a + b` for `n` elements over `grid` work-items in groups of 256
/// with the dispatch's hidden values, optionally replaced; `c` after it.
fn vector_add(
    bytes: &[u8],
    target: Target,
    n: u32,
    grid: u32,
    group_size_x: Option<u64>,
) -> Vec<f32> {
    let co = CodeObject::parse(bytes).unwrap();
    let mem = FlatMemory::new(MEM_BASE, 16 << 20);
    let (a, b, c) = (DATA, DATA + 0x1_0000, DATA + 0x2_0000);
    for i in 0..u64::from(n) + 64 {
        mem.store(a + 4 * i, (i as f32).to_bits());
        mem.store(b + 4 * i, 0.5f32.to_bits());
        mem.store(c + 4 * i, (-1.0f32).to_bits());
    }
    let mut dispatch = Dispatch::linear(grid, 256);
    if let Some(size) = group_size_x {
        dispatch = dispatch.with_hidden(ValueKind::HiddenGroupSizeX, size);
    }
    let mut args = KernargBuilder::new(&co.kernel("vector_add").unwrap().metadata);
    args.set_ptr(0, a)
        .unwrap()
        .set_ptr(1, b)
        .unwrap()
        .set_ptr(2, c)
        .unwrap();
    args.set_u32(3, n).unwrap();
    let kernarg = args.build(&dispatch).unwrap();
    assert_eq!(KERNARG % u64::from(kernarg.align()), 0);
    run(&mem, target, &co, "vector_add", kernarg.bytes(), &dispatch);
    (0..u64::from(n) + 64)
        .map(|i| f32::from_bits(mem.load(c + 4 * i)))
        .collect()
}

/// `c[i] = i + 0.5` below `n`, untouched (-1) from `n` on.
fn check_sum(c: &[f32], n: usize) {
    for (i, &v) in c.iter().enumerate() {
        let want = if i < n { i as f32 + 0.5 } else { -1.0 };
        assert_eq!(v, want, "c[{i}]");
    }
}

#[test]
fn vector_add_gfx90a_adds() {
    // A grid of exactly n: the last workgroup has 1000 - 768 = 232
    // work-items (hidden_remainder_x).
    check_sum(
        &vector_add(samples::VECTOR_ADD_GFX90A, Target::Gfx90a, 1000, 1000, None),
        1000,
    );
    // A rounded-up grid: the kernel's `i < n` stops the extra work-items.
    check_sum(
        &vector_add(samples::VECTOR_ADD_GFX90A, Target::Gfx90a, 1000, 1024, None),
        1000,
    );
}

#[test]
fn vector_add_gfx942_adds() {
    check_sum(
        &vector_add(samples::VECTOR_ADD_GFX942, Target::Gfx940, 1000, 1000, None),
        1000,
    );
}

#[test]
fn vector_add_v4_gfx90a_adds() {
    // Code object v4: no hidden arguments, the workgroup size comes from
    // the dispatch packet; the 28-byte kernarg buffer is all explicit.
    check_sum(
        &vector_add(
            &fixture("vector_add.gfx90a-xnack-off.v4.co"),
            Target::Gfx90a,
            1000,
            1000,
            None,
        ),
        1000,
    );
}

#[test]
fn vector_add_reads_its_group_size_from_the_kernarg_buffer() {
    // The kernel computes i from hidden_group_size_x: a wrong value there
    // (128 for groups of 256) makes groups overlap and leaves the top of c
    // unwritten. The builder's value is what the kernel uses.
    let c = vector_add(
        samples::VECTOR_ADD_GFX90A,
        Target::Gfx90a,
        1000,
        1000,
        Some(128),
    );
    assert_eq!(c[0], 0.5);
    assert_eq!(c[999], -1.0);
}

#[test]
fn read_table_follows_relocated_pointers() {
    let co = CodeObject::parse(samples::GLOBALS_GFX90A).unwrap();
    let mem = FlatMemory::new(MEM_BASE, 16 << 20);
    let dispatch = Dispatch::linear(1, 1);
    let mut args = KernargBuilder::new(&co.kernel("read_table").unwrap().metadata);
    args.set_ptr(0, DATA).unwrap();
    let kernarg = args.build(&dispatch).unwrap();
    run(
        &mem,
        Target::Gfx90a,
        &co,
        "read_table",
        kernarg.bytes(),
        &dispatch,
    );
    // table[2] + hidden_word.
    assert_eq!(mem.load::<u32>(DATA), 3 + 7);
}
