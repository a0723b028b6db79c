//! Dispatch set-up, workgroups, barriers and faults, on flat memory.

mod common;

use common::*;
use kfd_gpu::shader::{DispatchError, Target};

/// Stores each lane's work-item id X (from v0) at DATA + 4 * global id.
const STORE_TID: &str = "
    s_load_dwordx2 s[4:5], s[0:1], 0x0
    s_lshl_b32 s3, s2, 6            // workgroup id * 64
    v_and_b32 v1, 0x3ff, v0
    v_add_u32 v1, s3, v1            // global id
    v_lshlrev_b32 v2, 2, v1
    s_waitcnt lgkmcnt(0)
    v_mov_b32 v3, s5
    v_add_co_u32 v2, vcc, s4, v2
    v_addc_co_u32 v3, vcc, 0, v3, vcc
    global_store_dword v[2:3], v1, off
    s_endpgm
";

#[test]
fn every_work_item_runs_once_with_its_id() {
    for target in [Target::Gfx90a, Target::Gfx940] {
        let mem = memory();
        mem.store::<u64>(KERNARG, DATA);
        let mut k = Kernel::new(target, STORE_TID);
        k.grid = [64 * 8, 1, 1];
        let s = k.run(&mem).unwrap();
        assert_eq!(s.workgroups, 8);
        assert_eq!(results(&mem, 512), (0..512).collect::<Vec<_>>());
    }
}

#[test]
fn an_unknown_instruction_is_an_illegal_instruction_error() {
    let mem = memory();
    mem.store::<u32>(CODE, 0xbfff_0000); // SOPP opcode 0x7f
    let k = Kernel::new(Target::Gfx90a, "");
    // `run` assembles the empty source (no words) over nothing.
    let e = k.run(&mem).unwrap_err();
    match e {
        DispatchError::IllegalInstruction { pc, op, .. } => assert_eq!((pc, op), (CODE, 0x7f)),
        e => panic!("{e}"),
    }
}

#[test]
fn a_store_to_unmapped_memory_faults() {
    let mem = memory();
    mem.store::<u64>(KERNARG, 0x10); // not in the flat memory
    let e = Kernel::new(Target::Gfx90a, STORE_TID)
        .run(&mem)
        .unwrap_err();
    match e {
        DispatchError::Fault { fault, .. } => assert!(fault.write && fault.va < 0x1000),
        e => panic!("{e}"),
    }
}
