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

#[test]
fn a_wave_that_never_ends_is_reported_as_a_runaway() {
    let mem = memory();
    let e = Kernel::new(Target::Gfx90a, "forever:\n s_branch forever\n")
        .run(&mem)
        .unwrap_err();
    match e {
        DispatchError::Runaway { pc, limit } => assert_eq!((pc, limit), (CODE, 1 << 24)),
        e => panic!("{e}"),
    }
}

#[test]
fn s_trap_stops_the_dispatch_with_its_id() {
    let mem = memory();
    let e = Kernel::new(Target::Gfx90a, "s_nop 0\n s_trap 2\n s_endpgm\n")
        .run(&mem)
        .unwrap_err();
    assert_eq!(
        e,
        DispatchError::Trap {
            pc: CODE + 4,
            id: 2
        }
    );
}

#[test]
fn waves_of_a_workgroup_meet_at_barriers() {
    // Four waves: each stores its wave's X id to LDS, waits at the
    // barrier, then reads the next wave's slot: only correct if every
    // wave wrote before any read.
    let mem = memory();
    mem.store::<u64>(KERNARG, DATA);
    let mut k = Kernel::new(
        Target::Gfx90a,
        "
        s_load_dwordx2 s[4:5], s[0:1], 0x0
        v_lshlrev_b32 v1, 2, v0
        ds_write_b32 v1, v0
        s_waitcnt lgkmcnt(0)
        s_barrier
        v_add_u32 v2, 64, v0
        v_and_b32 v2, 0xff, v2
        v_lshlrev_b32 v2, 2, v2
        ds_read_b32 v3, v2
        s_waitcnt lgkmcnt(0)
        global_store_dword v1, v3, s[4:5]
        s_endpgm
        ",
    );
    k.grid = [256, 1, 1];
    k.workgroup = [256, 1, 1];
    k.lds = 1024;
    k.run(&mem).unwrap();
    let want: Vec<u32> = (0..256).map(|i| (i + 64) % 256).collect();
    assert_eq!(results(&mem, 256), want);
}
