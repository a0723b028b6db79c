//! Kernel model: user-mode queues and doorbells.

mod kernel_util;

use kernel_util::*;
use kfd_sim::Sim;
use kfd_sys::kfd::*;
use kfd_sys::Errno;

fn queue_args(gpu: u32, ty: u32, ring: u64, rptr: u64, wptr: u64) -> kfd_ioctl_create_queue_args {
    kfd_ioctl_create_queue_args {
        ring_base_address: ring,
        write_pointer_address: wptr,
        read_pointer_address: rptr,
        ring_size: 4096,
        gpu_id: gpu,
        queue_type: ty,
        queue_percentage: 100,
        queue_priority: 7,
        ..Default::default()
    }
}

#[test]
fn create_destroy_all_types_and_doorbells() {
    let sim = Sim::preset("mi210").unwrap();
    let p = Proc::open(&sim);
    let g = p.gpu();
    let mem = anon(1 << 16) as u64;
    let mut ids = Vec::new();
    let mut offsets = Vec::new();
    for ty in [
        KFD_IOC_QUEUE_TYPE_COMPUTE,
        KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
        KFD_IOC_QUEUE_TYPE_SDMA,
        KFD_IOC_QUEUE_TYPE_SDMA_XGMI,
        KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID,
    ] {
        let mut a = queue_args(g, ty, mem, mem + 0x1000, mem + 0x2000);
        io(&sim, &p.kfd, AMDKFD_IOC_CREATE_QUEUE, &mut a)
            .unwrap_or_else(|e| panic!("type {ty}: {e}"));
        ids.push(a.queue_id);
        offsets.push(a.doorbell_offset);
    }
    assert_eq!(ids, vec![0, 1, 2, 3, 4]);
    // 64-bit doorbells in one 8 KiB page per process and device.
    let page = offsets[0] & !8191;
    for o in &offsets {
        assert_eq!(o & !8191, page);
        assert_eq!(o % 8, 0);
    }
    let mut uniq = offsets.clone();
    uniq.sort();
    uniq.dedup();
    assert_eq!(uniq.len(), offsets.len());
    let db = map_fd(&p.kfd, page, 8192);
    // SAFETY: the doorbell page mapping is 8 KiB.
    unsafe { *(db.add((offsets[1] & 8191) as usize) as *mut u64) = 42 };
    unmap_fd(db, 8192);
    // XNACK cannot change while queues exist.
    let mut x = kfd_ioctl_set_xnack_mode_args { xnack_enabled: 1 };
    assert_eq!(
        io(&sim, &p.kfd, AMDKFD_IOC_SET_XNACK_MODE, &mut x),
        Err(Errno::EBUSY)
    );
    // Update, CU mask, wave state.
    let mut u = kfd_ioctl_update_queue_args {
        ring_base_address: mem,
        queue_id: ids[1],
        ring_size: 8192,
        queue_percentage: 50,
        queue_priority: 3,
    };
    io(&sim, &p.kfd, AMDKFD_IOC_UPDATE_QUEUE, &mut u).unwrap();
    u.ring_size = 3000;
    assert_eq!(
        io(&sim, &p.kfd, AMDKFD_IOC_UPDATE_QUEUE, &mut u),
        Err(Errno::EINVAL)
    );
    u.ring_size = 8192;
    u.queue_priority = 16;
    assert_eq!(
        io(&sim, &p.kfd, AMDKFD_IOC_UPDATE_QUEUE, &mut u),
        Err(Errno::EINVAL)
    );
    u.queue_priority = 1;
    u.queue_id = 500;
    assert_eq!(
        io(&sim, &p.kfd, AMDKFD_IOC_UPDATE_QUEUE, &mut u),
        Err(Errno::EFAULT)
    );
    let mask = [0xffff_ffffu32; 4];
    let mut cu = kfd_ioctl_set_cu_mask_args {
        queue_id: ids[1],
        num_cu_mask: 128,
        cu_mask_ptr: mask.as_ptr() as u64,
    };
    io(&sim, &p.kfd, AMDKFD_IOC_SET_CU_MASK, &mut cu).unwrap();
    cu.num_cu_mask = 33;
    assert_eq!(
        io(&sim, &p.kfd, AMDKFD_IOC_SET_CU_MASK, &mut cu),
        Err(Errno::EINVAL)
    );
    cu.num_cu_mask = 0;
    assert_eq!(
        io(&sim, &p.kfd, AMDKFD_IOC_SET_CU_MASK, &mut cu),
        Err(Errno::EINVAL)
    );
    cu.num_cu_mask = 64;
    cu.cu_mask_ptr = 0x40;
    assert_eq!(
        io(&sim, &p.kfd, AMDKFD_IOC_SET_CU_MASK, &mut cu),
        Err(Errno::EFAULT)
    );
    let mut ws = kfd_ioctl_get_queue_wave_state_args {
        queue_id: ids[1],
        ..Default::default()
    };
    assert_eq!(
        io(&sim, &p.kfd, AMDKFD_IOC_GET_QUEUE_WAVE_STATE, &mut ws),
        Err(Errno::EINVAL),
        "an active queue has no saved wave state"
    );
    let mut gws = kfd_ioctl_alloc_queue_gws_args {
        queue_id: ids[1],
        num_gws: 1,
        ..Default::default()
    };
    let gws_r = io(&sim, &p.kfd, AMDKFD_IOC_ALLOC_QUEUE_GWS, &mut gws);
    assert!(gws_r == Ok(0) || gws_r == Err(Errno::ENODEV));
    gws.queue_id = 999;
    assert_eq!(
        io(&sim, &p.kfd, AMDKFD_IOC_ALLOC_QUEUE_GWS, &mut gws),
        Err(Errno::EINVAL)
    );
    assert_eq!(sim.live_objects().processes[0].queues, 5);
    for id in &ids {
        let mut d = kfd_ioctl_destroy_queue_args {
            queue_id: *id,
            pad: 0,
        };
        io(&sim, &p.kfd, AMDKFD_IOC_DESTROY_QUEUE, &mut d).unwrap();
    }
    let mut d = kfd_ioctl_destroy_queue_args {
        queue_id: 0,
        pad: 0,
    };
    assert_eq!(
        io(&sim, &p.kfd, AMDKFD_IOC_DESTROY_QUEUE, &mut d),
        Err(Errno::EINVAL)
    );
    p.close();
    assert!(sim.live_objects().is_empty());
}

#[test]
fn create_queue_argument_checks() {
    let sim = Sim::preset("mi210").unwrap();
    let p = Proc::open(&sim);
    let g = p.gpu();
    let mem = anon(1 << 16) as u64;
    let ok = queue_args(
        g,
        KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
        mem,
        mem + 0x1000,
        mem + 0x2000,
    );
    type Case = (Box<dyn Fn(&mut kfd_ioctl_create_queue_args)>, Errno);
    let cases: Vec<Case> = vec![
        (Box::new(|a| a.queue_percentage = 101), Errno::EINVAL),
        (Box::new(|a| a.queue_priority = 16), Errno::EINVAL),
        (Box::new(|a| a.ring_size = 3000), Errno::EINVAL),
        (
            Box::new(|a| a.ring_base_address = 0xffff_8000_0000_0000),
            Errno::EFAULT,
        ),
        (
            Box::new(|a| a.read_pointer_address = u64::MAX - 2),
            Errno::EFAULT,
        ),
        (
            Box::new(|a| a.write_pointer_address = 0xffff_ffff_ffff_0000),
            Errno::EFAULT,
        ),
        (Box::new(|a| a.queue_type = 9), Errno(524)),
        (Box::new(|a| a.gpu_id = 0x77), Errno::EINVAL),
        (
            Box::new(|a| {
                a.queue_type = KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID;
                a.sdma_engine_id = 64;
            }),
            Errno::EINVAL,
        ),
    ];
    for (i, (f, e)) in cases.iter().enumerate() {
        let mut a = ok;
        f(&mut a);
        assert_eq!(
            io(&sim, &p.kfd, AMDKFD_IOC_CREATE_QUEUE, &mut a),
            Err(*e),
            "case {i}"
        );
    }
    // Ring sizes below the minimum are clamped, not refused.
    let mut a = ok;
    a.ring_size = 256;
    io(&sim, &p.kfd, AMDKFD_IOC_CREATE_QUEUE, &mut a).unwrap();
    assert_eq!(a.ring_size, KFD_MIN_QUEUE_RING_SIZE);
    // A process without the GPU's VM: ESRCH.
    let other = sim.new_os_process();
    let fd = kfd_sys::Driver::open_kfd(&other).unwrap();
    let mut b = ok;
    assert_eq!(
        io(&other, &fd, AMDKFD_IOC_CREATE_QUEUE, &mut b),
        Err(Errno::ESRCH)
    );
    // Using a descriptor from another (simulated) process: EBADF.
    assert_eq!(
        io(&sim, &fd, AMDKFD_IOC_CREATE_QUEUE, &mut b),
        Err(Errno::EBADF)
    );
    kfd_sys::Driver::close(&other, fd);
    // SDMA queue limit per engine type.
    let mut n = 0;
    loop {
        let mut s = queue_args(g, KFD_IOC_QUEUE_TYPE_SDMA, mem, mem + 0x1000, mem + 0x2000);
        match io(&sim, &p.kfd, AMDKFD_IOC_CREATE_QUEUE, &mut s) {
            Ok(_) => n += 1,
            Err(e) => {
                assert_eq!(e, Errno::ENOMEM);
                break;
            }
        }
        assert!(n < 1000);
    }
    assert!(n > 0);
    p.close();
    assert!(sim.live_objects().is_empty());
}

#[test]
fn queue_buffer_validation_of_newer_kernels() {
    let sim = Sim::preset("mi210").unwrap();
    sim.set_queue_buffer_validation(true);
    let p = Proc::open(&sim);
    let g = p.gpu();
    let mem = anon(1 << 16) as u64;
    let mut a = queue_args(g, KFD_IOC_QUEUE_TYPE_SDMA, mem, mem + 0x1000, mem + 0x2000);
    assert_eq!(
        io(&sim, &p.kfd, AMDKFD_IOC_CREATE_QUEUE, &mut a),
        Err(Errno::EINVAL)
    );
    // GPU-mapped BOs of the exact sizes.
    let (hr, _) = p.alloc(g, 0x1000_0000, 4096, GTT).unwrap();
    let (hp, _) = p.alloc(g, 0x1001_0000, 4096, GTT).unwrap();
    let (hw, _) = p.alloc(g, 0x1002_0000, 4096, GTT).unwrap();
    for h in [hr, hp, hw] {
        assert_eq!(p.map(h, &[g], 0).0, Ok(0));
    }
    let mut a = queue_args(
        g,
        KFD_IOC_QUEUE_TYPE_SDMA,
        0x1000_0000,
        0x1001_0000,
        0x1002_0000,
    );
    io(&sim, &p.kfd, AMDKFD_IOC_CREATE_QUEUE, &mut a).unwrap();
    // A compute queue also needs the CWSR area and control stack size.
    let mut c = queue_args(
        g,
        KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
        0x1000_0000,
        0x1001_0000,
        0x1002_0000,
    );
    assert_eq!(
        io(&sim, &p.kfd, AMDKFD_IOC_CREATE_QUEUE, &mut c),
        Err(Errno::EINVAL)
    );
    p.close();
    assert!(sim.live_objects().is_empty());
}
