//! Kernel model: version, apertures, dispatch rules, VM acquisition and
//! buffer objects.

mod kernel_util;

use std::os::fd::AsRawFd;

use kernel_util::*;
use kfd_sim::Sim;
use kfd_sys::ioctl::ioc;
use kfd_sys::kfd::*;
use kfd_sys::{Driver, Errno};

fn mi210() -> Sim {
    Sim::preset("mi210").expect("preset")
}

#[test]
fn version_is_configurable() {
    let sim = mi210();
    let fd = sim.open_kfd().unwrap();
    let mut v = kfd_ioctl_get_version_args::default();
    io(&sim, &fd, AMDKFD_IOC_GET_VERSION, &mut v).unwrap();
    assert_eq!(
        (v.major_version, v.minor_version),
        (1, KFD_IOCTL_MINOR_VERSION)
    );
    assert!(v.minor_version >= 17);
    sim.set_version_minor(17);
    io(&sim, &fd, AMDKFD_IOC_GET_VERSION, &mut v).unwrap();
    assert_eq!(v.minor_version, 17);
    // CREATE_PROCESS does not exist before 1.19.
    let mut cp = kfd_ioctl_create_process_args::default();
    assert_eq!(
        io(&sim, &fd, AMDKFD_IOC_CREATE_PROCESS, &mut cp),
        Err(Errno::EINVAL)
    );
    sim.close(fd);
    assert!(sim.live_objects().is_empty(), "{:?}", sim.live_objects());
    assert!(sim
        .root()
        .join("sys/devices/virtual/kfd/kfd/topology/nodes")
        .is_dir());
}

#[test]
fn unknown_numbers_are_einval_and_type_byte_is_ignored() {
    let sim = mi210();
    let fd = sim.open_kfd().unwrap();
    let mut buf = [0u64; 16];
    for nr in [0x00u8, 0x28, 0x50, 0x80, 0x82, 0xff] {
        let req = ioc(3, b'K', nr, 16);
        assert_eq!(
            raw(&sim, &fd, req, buf.as_mut_ptr().cast()),
            Err(Errno::EINVAL),
            "nr {nr:#x}"
        );
    }
    // kfd_ioctl() dispatches on _IOC_NR only: a foreign type byte with
    // GET_VERSION's number still reaches GET_VERSION.
    let req = ioc(2, b'X', 0x01, 8);
    assert_eq!(raw(&sim, &fd, req, buf.as_mut_ptr().cast()), Ok(0));
    assert_eq!(buf[0] as u32, 1);
    // The thunk-private 1.8 DBG_TRAP (0x82) is EINVAL, which ROCr tolerates.
    assert_eq!(
        raw(&sim, &fd, 0xc028_4b82, buf.as_mut_ptr().cast()),
        Err(Errno::EINVAL)
    );
    // Deprecated debugger ioctls.
    let mut r = kfd_ioctl_dbg_register_args::default();
    assert_eq!(
        io(&sim, &fd, AMDKFD_IOC_DBG_REGISTER_DEPRECATED, &mut r),
        Err(Errno::EPERM)
    );
    // CRIU needs CAP_CHECKPOINT_RESTORE.
    let mut c = kfd_ioctl_criu_args::default();
    assert_eq!(
        io(&sim, &fd, AMDKFD_IOC_CRIU_OP, &mut c),
        Err(Errno::EACCES)
    );
    sim.close(fd);
}

#[test]
fn bad_pointers_are_efault() {
    let sim = mi210();
    let p = Proc::open(&sim);
    let req = AMDKFD_IOC_GET_VERSION.request();
    assert_eq!(raw(&sim, &p.kfd, req, 0x10 as *mut _), Err(Errno::EFAULT));
    assert_eq!(
        raw(&sim, &p.kfd, req, std::ptr::null_mut()),
        Err(Errno::EFAULT)
    );
    let (h, _) = p.alloc(p.gpu(), 0x10_0000_0000, 1 << 20, VRAM).unwrap();
    let mut a = kfd_ioctl_map_memory_to_gpu_args {
        handle: h,
        device_ids_array_ptr: 0xdead_0000,
        n_devices: 1,
        n_success: 0,
    };
    assert_eq!(
        io(&sim, &p.kfd, AMDKFD_IOC_MAP_MEMORY_TO_GPU, &mut a),
        Err(Errno::EFAULT)
    );
    let mut w = kfd_ioctl_wait_events_args {
        events_ptr: 8,
        num_events: 1,
        wait_for_all: 0,
        timeout: 0,
        wait_result: 0,
    };
    assert_eq!(
        io(&sim, &p.kfd, AMDKFD_IOC_WAIT_EVENTS, &mut w),
        Err(Errno::EFAULT)
    );
    let mut ap = kfd_ioctl_get_process_apertures_new_args {
        kfd_process_device_apertures_ptr: 0x20,
        num_of_nodes: 4,
        pad: 0,
    };
    assert_eq!(
        io(&sim, &p.kfd, AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, &mut ap),
        Err(Errno::EFAULT)
    );
    p.free(h).unwrap();
    p.close();
    assert!(sim.live_objects().is_empty());
}

#[test]
fn apertures_old_and_new() {
    let sim = Sim::preset("mi300x").unwrap();
    let fd = sim.open_kfd().unwrap();
    let gpus = gpu_ids(&sim);
    let mut a = kfd_ioctl_get_process_apertures_new_args::default();
    io(&sim, &fd, AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, &mut a).unwrap();
    assert_eq!(a.num_of_nodes as usize, gpus.len());
    let mut list = vec![kfd_process_device_apertures::default(); gpus.len() + 2];
    a.kfd_process_device_apertures_ptr = list.as_mut_ptr() as u64;
    a.num_of_nodes = list.len() as u32;
    io(&sim, &fd, AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, &mut a).unwrap();
    assert_eq!(a.num_of_nodes as usize, gpus.len());
    for (ap, g) in list.iter().zip(&gpus) {
        assert_eq!(ap.gpu_id, *g);
        assert_eq!(ap.lds_base, 1 << 48);
        assert_eq!(ap.lds_limit, (1 << 48) | 0xffff_ffff);
        assert_eq!(ap.scratch_base, 2 << 48);
        assert_eq!(ap.scratch_limit, (2 << 48) | 0xffff_ffff);
        assert_eq!(ap.gpuvm_limit, (1 << 47) - 1);
        assert!(ap.gpuvm_base < 0x100_0000);
    }
    // The old ioctl caps at NUM_OF_SUPPORTED_GPUS (7) of the 8 GPUs.
    let mut old = kfd_ioctl_get_process_apertures_args::default();
    io(&sim, &fd, AMDKFD_IOC_GET_PROCESS_APERTURES, &mut old).unwrap();
    assert_eq!(
        old.num_of_nodes,
        NUM_OF_SUPPORTED_GPUS.min(gpus.len() as u32)
    );
    assert_eq!(old.process_apertures[0].gpu_id, gpus[0]);
    sim.close(fd);
}

#[test]
fn acquire_vm_rules() {
    let sim = mi210();
    let fd = sim.open_kfd().unwrap();
    let g = gpu_ids(&sim)[0];
    let m = minors(&sim)[0];
    // Nothing works on the GPU before its VM is acquired.
    let p0 = Proc {
        sim: sim.clone(),
        kfd: fd,
        renders: vec![],
        gpus: vec![g],
    };
    assert_eq!(p0.alloc(g, 0x1000_0000, 4096, GTT), Err(Errno::ENODEV));
    let fd = p0.kfd;
    let null = std::fs::File::open("/dev/null").unwrap();
    let mut a = kfd_ioctl_acquire_vm_args {
        drm_fd: null.as_raw_fd() as u32,
        gpu_id: g,
    };
    assert_eq!(
        io(&sim, &fd, AMDKFD_IOC_ACQUIRE_VM, &mut a),
        Err(Errno::EINVAL)
    );
    a.drm_fd = 999_999;
    assert_eq!(
        io(&sim, &fd, AMDKFD_IOC_ACQUIRE_VM, &mut a),
        Err(Errno::EINVAL)
    );
    let r1 = sim.open_render_node(m).unwrap();
    let r2 = sim.open_render_node(m).unwrap();
    a.drm_fd = r1.as_raw_fd() as u32;
    a.gpu_id = 0x1234_5678;
    assert_eq!(
        io(&sim, &fd, AMDKFD_IOC_ACQUIRE_VM, &mut a),
        Err(Errno::EINVAL)
    );
    a.gpu_id = g;
    io(&sim, &fd, AMDKFD_IOC_ACQUIRE_VM, &mut a).unwrap();
    // Same file again is fine (also through a dup), another file is EBUSY.
    let dup = kfd_sys::driver::dup_cloexec(std::os::fd::AsFd::as_fd(&r1)).unwrap();
    a.drm_fd = dup.as_raw_fd() as u32;
    io(&sim, &fd, AMDKFD_IOC_ACQUIRE_VM, &mut a).unwrap();
    a.drm_fd = r2.as_raw_fd() as u32;
    assert_eq!(
        io(&sim, &fd, AMDKFD_IOC_ACQUIRE_VM, &mut a),
        Err(Errno::EBUSY)
    );
    assert_eq!(
        sim.file_kind(r1.as_raw_fd()),
        Some(kfd_sim::kernel::FileKind::Render { minor: m })
    );
    assert_eq!(
        sim.file_kind(fd.as_raw_fd()),
        Some(kfd_sim::kernel::FileKind::Kfd)
    );
    assert_eq!(sim.file_kind(null.as_raw_fd()), None);
    sim.close(dup);
    sim.close(r1);
    sim.close(r2);
    sim.close(fd);
    assert!(sim.live_objects().is_empty(), "{:?}", sim.live_objects());
}

#[test]
fn bo_contents_visible_through_mappings() {
    let sim = mi210();
    let p = Proc::open(&sim);
    let g = p.gpu();
    let len = 2 << 20;
    // The navi31 preset reports a small BAR (heap_type 2, FB_PRIVATE):
    // host-visible VRAM is refused like the kernel does; mi210 and mi300x
    // have a large BAR (heap_type 1, FB_PUBLIC).
    let small = Sim::preset("navi31").unwrap();
    let n = Proc::open(&small);
    assert_eq!(
        n.alloc(
            n.gpu(),
            0x4000_0000,
            4096,
            VRAM | KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC
        ),
        Err(Errno::EINVAL)
    );
    n.close();
    let big = Sim::preset("mi300x").unwrap();
    let q = Proc::open(&big);
    let (hq, _) = q
        .alloc(
            q.gpu(),
            0x4000_0000,
            4096,
            VRAM | KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC,
        )
        .unwrap();
    q.free(hq).unwrap();
    q.close();
    assert!(big.live_objects().is_empty());
    for flags in [VRAM, GTT] {
        let (h, off) = p
            .alloc(g, 0x7f00_0000_0000 - 0x4000_0000, len as u64, flags)
            .unwrap();
        assert_eq!(h >> 32, g as u64);
        let (r, n) = p.map(h, &[g], 0);
        assert_eq!((r, n), (Ok(0), 1));
        let a = map_fd(&p.renders[0], off, len);
        let b = map_fd(&p.renders[0], off, len);
        // SAFETY: both mappings are `len` bytes long and live.
        unsafe {
            *a.add(12345) = 0x5a;
            assert_eq!(*b.add(12345), 0x5a);
            *b.add(len - 1) = 0xa5;
            assert_eq!(*a.add(len - 1), 0xa5);
        }
        unmap_fd(a, len);
        unmap_fd(b, len);
        assert_eq!(p.free(h), Err(Errno::EBUSY), "still mapped");
        assert_eq!(p.unmap(h, &[g], 0), (Ok(0), 1));
        // Unmapping again is harmless (still attached).
        assert_eq!(p.unmap(h, &[g], 0), (Ok(0), 1));
        p.free(h).unwrap();
        // A new BO reusing the offset reads zeros (FREE punched a hole).
        let (h2, off2) = p.alloc(g, 0x5000_0000, len as u64, flags).unwrap();
        let c = map_fd(&p.renders[0], off2, len);
        // SAFETY: live mapping of `len` bytes.
        unsafe { assert_eq!(*c.add(12345), 0) };
        unmap_fd(c, len);
        p.free(h2).unwrap();
    }
    p.close();
    assert!(sim.live_objects().is_empty());
}

#[test]
fn alloc_argument_checks() {
    let sim = mi210();
    let p = Proc::open(&sim);
    let g = p.gpu();
    assert_eq!(p.alloc(g, 0x1000_0000, 0, GTT), Err(Errno::EINVAL));
    assert_eq!(p.alloc(0xdead, 0x1000_0000, 4096, GTT), Err(Errno::EINVAL));
    assert_eq!(p.alloc(g, 0x1000_0000, 4096, 0), Err(Errno::EINVAL));
    // Doorbell BOs are exactly one 8 KiB process slice, MMIO one page.
    assert_eq!(
        p.alloc(g, 0x1000_0000, 4096, KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL),
        Err(Errno::EINVAL)
    );
    let (db, _) = p
        .alloc(g, 0x1000_0000, 8192, KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL)
        .unwrap();
    assert_eq!(
        p.alloc(g, 0x1000_0000, 8192, KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP),
        Err(Errno::EINVAL)
    );
    let (mmio, mmio_off) = p
        .alloc(g, 0x1100_0000, 4096, KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP)
        .unwrap();
    let m = map_fd(&p.kfd, mmio_off, 4096);
    unmap_fd(m, 4096);
    // Userptr: page aligned and mapped.
    let mem = anon(1 << 16) as u64;
    assert_eq!(p.userptr(g, mem + 8, 4096), Err(Errno::EINVAL));
    assert_eq!(p.userptr(g, 0x1000, 4096), Err(Errno::EFAULT));
    let up = p.userptr(g, mem, 1 << 16).unwrap();
    assert_eq!(p.map(up, &[g], 0), (Ok(0), 1));
    // A second BO mapped over the same GPU VA range is refused.
    let (h1, _) = p.alloc(g, 0x2000_0000, 1 << 20, GTT).unwrap();
    let (h2, _) = p.alloc(g, 0x2008_0000, 1 << 20, GTT).unwrap();
    assert_eq!(p.map(h1, &[g], 0), (Ok(0), 1));
    assert_eq!(p.map(h2, &[g], 0).0, Err(Errno::EINVAL));
    // Map argument checks and n_success.
    assert_eq!(p.map(h1, &[], 0).0, Err(Errno::EINVAL));
    assert_eq!(p.map(h1, &[g], 2).0, Err(Errno::EINVAL));
    assert_eq!(p.map(h1 + 77, &[g], 0).0, Err(Errno::ENOMEM));
    assert_eq!(p.map(h1, &[g, 0xbad], 0), (Err(Errno::EINVAL), 1));
    assert_eq!(p.map(h1, &[g, 0xbad], 1), (Err(Errno::EINVAL), 1));
    assert_eq!(
        p.unmap(h2, &[g], 0).0,
        Err(Errno::EINVAL),
        "never mapped on this GPU"
    );
    assert_eq!(p.free(h1 | 0xffff), Err(Errno::EINVAL));
    for h in [h1, up] {
        assert_eq!(p.unmap(h, &[g], 0), (Ok(0), 1));
    }
    for h in [h1, h2, up, db, mmio] {
        p.free(h).unwrap();
    }
    assert_eq!(p.free(h1), Err(Errno::EINVAL), "double free");
    p.close();
    assert!(sim.live_objects().is_empty());
}

#[test]
fn vram_accounting_and_enomem() {
    let sim = mi210();
    let p = Proc::open(&sim);
    let g = p.gpu();
    let mut avail = kfd_ioctl_get_available_memory_args {
        available: 0,
        gpu_id: g,
        pad: 0,
    };
    io(&sim, &p.kfd, AMDKFD_IOC_AVAILABLE_MEMORY, &mut avail).unwrap();
    let total = avail.available;
    assert!(total >= 32 << 30, "mi210 has 64 GiB: {total}");
    let (h, _) = p.alloc(g, 0x1_0000_0000, 1 << 30, VRAM).unwrap();
    io(&sim, &p.kfd, AMDKFD_IOC_AVAILABLE_MEMORY, &mut avail).unwrap();
    assert_eq!(avail.available, total - (1 << 30));
    assert_eq!(sim.live_objects().vram_used[0], 1 << 30);
    // More than what is left: ENOMEM.
    assert_eq!(p.alloc(g, 0x100_0000_0000, total, VRAM), Err(Errno::ENOMEM));
    // A second process shares the device's VRAM.
    let other = sim.new_os_process();
    let q = Proc::open(&other);
    let (h2, _) = q.alloc(g, 0x1_0000_0000, total - (1 << 30), VRAM).unwrap();
    assert_eq!(
        p.alloc(g, 0x200_0000_0000, 2 << 20, VRAM),
        Err(Errno::ENOMEM)
    );
    assert_eq!(
        p.alloc(g, 0x200_0000_0000, 2 << 20, VRAM),
        Err(Errno::ENOMEM)
    );
    // GTT is not VRAM.
    let (h3, _) = p.alloc(g, 0x300_0000_0000, 2 << 20, GTT).unwrap();
    q.free(h2).unwrap();
    p.free(h).unwrap();
    p.free(h3).unwrap();
    io(&sim, &p.kfd, AMDKFD_IOC_AVAILABLE_MEMORY, &mut avail).unwrap();
    assert_eq!(avail.available, total);
    // Closing a process with live VRAM BOs gives the VRAM back.
    let _ = q.alloc(g, 0x1_0000_0000, 8 << 20, VRAM).unwrap();
    q.close();
    p.close();
    let s = sim.live_objects();
    assert!(s.is_empty(), "{s:?}");
}

#[test]
fn misc_device_ioctls() {
    let sim = mi210();
    let p = Proc::open(&sim);
    let g = p.gpu();
    let mut c = kfd_ioctl_get_clock_counters_args {
        gpu_id: g,
        ..Default::default()
    };
    io(&sim, &p.kfd, AMDKFD_IOC_GET_CLOCK_COUNTERS, &mut c).unwrap();
    assert_eq!(c.system_clock_freq, 1_000_000_000);
    assert!(c.gpu_clock_counter > 0 && c.cpu_clock_counter > 0 && c.system_clock_counter > 0);
    c.gpu_id = 0;
    io(&sim, &p.kfd, AMDKFD_IOC_GET_CLOCK_COUNTERS, &mut c).unwrap();
    assert_eq!(c.gpu_clock_counter, 0);

    let mut mp = kfd_ioctl_set_memory_policy_args {
        alternate_aperture_base: 0,
        alternate_aperture_size: 0,
        gpu_id: g,
        default_policy: KFD_IOC_CACHE_POLICY_NONCOHERENT,
        alternate_policy: KFD_IOC_CACHE_POLICY_COHERENT,
        misc_process_flag: 0,
    };
    io(&sim, &p.kfd, AMDKFD_IOC_SET_MEMORY_POLICY, &mut mp).unwrap();
    mp.default_policy = 7;
    assert_eq!(
        io(&sim, &p.kfd, AMDKFD_IOC_SET_MEMORY_POLICY, &mut mp),
        Err(Errno::EINVAL)
    );
    mp.default_policy = 0;
    mp.gpu_id = 1;
    assert_eq!(
        io(&sim, &p.kfd, AMDKFD_IOC_SET_MEMORY_POLICY, &mut mp),
        Err(Errno::EINVAL)
    );

    let mut th = kfd_ioctl_set_trap_handler_args {
        tba_addr: 0x1000,
        tma_addr: 0x2000,
        gpu_id: g,
        pad: 0,
    };
    io(&sim, &p.kfd, AMDKFD_IOC_SET_TRAP_HANDLER, &mut th).unwrap();
    let mut sc = kfd_ioctl_set_scratch_backing_va_args {
        va_addr: 0x1_0000_0000,
        gpu_id: g,
        pad: 0,
    };
    io(&sim, &p.kfd, AMDKFD_IOC_SET_SCRATCH_BACKING_VA, &mut sc).unwrap();
    sc.gpu_id = 3;
    assert_eq!(
        io(&sim, &p.kfd, AMDKFD_IOC_SET_SCRATCH_BACKING_VA, &mut sc),
        Err(Errno::EINVAL)
    );
    let mut tc = kfd_ioctl_get_tile_config_args {
        gpu_id: g,
        ..Default::default()
    };
    io(&sim, &p.kfd, AMDKFD_IOC_GET_TILE_CONFIG, &mut tc).unwrap();
    assert_ne!(tc.gb_addr_config, 0);

    let mut x = kfd_ioctl_set_xnack_mode_args { xnack_enabled: -1 };
    io(&sim, &p.kfd, AMDKFD_IOC_SET_XNACK_MODE, &mut x).unwrap();
    assert_eq!(x.xnack_enabled, 0);
    x.xnack_enabled = 1;
    io(&sim, &p.kfd, AMDKFD_IOC_SET_XNACK_MODE, &mut x).unwrap();
    x.xnack_enabled = -1;
    io(&sim, &p.kfd, AMDKFD_IOC_SET_XNACK_MODE, &mut x).unwrap();
    assert_eq!(x.xnack_enabled, 1);

    let mut smi = kfd_ioctl_smi_events_args {
        gpuid: g,
        anon_fd: 0,
    };
    io(&sim, &p.kfd, AMDKFD_IOC_SMI_EVENTS, &mut smi).unwrap();
    assert_eq!(
        sim.file_kind(smi.anon_fd as i32),
        Some(kfd_sim::kernel::FileKind::SmiEvents)
    );
    // SAFETY: the descriptor the ioctl just handed us.
    let smi_fd = unsafe {
        <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(smi.anon_fd as i32)
    };
    sim.close(smi_fd);
    smi.gpuid = 5;
    assert_eq!(
        io(&sim, &p.kfd, AMDKFD_IOC_SMI_EVENTS, &mut smi),
        Err(Errno::EINVAL)
    );
    p.close();
    assert!(sim.live_objects().is_empty());
}

#[test]
fn render_nodes_answer_drm_ioctls() {
    let sim = mi210();
    let p = Proc::open(&sim);
    // DRM_IOCTL_VERSION, first call with NULL buffers: lengths only.
    let mut v = [0u64; 8];
    let r = raw(&sim, &p.renders[0], 0xc040_6400, v.as_mut_ptr().cast());
    assert_eq!(r, Ok(0));
    assert_eq!(v[0] as u32, 3, "version_major");
    // KFD requests on a render node are not KFD requests.
    let mut g = kfd_ioctl_get_version_args::default();
    assert!(io(&sim, &p.renders[0], AMDKFD_IOC_GET_VERSION, &mut g).is_err());
    p.close();
}
