//! Kernel model: processes, CREATE_PROCESS, dma-buf between processes,
//! teardown, fault injection, tracing, debugger operations.

mod kernel_util;

use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::{Arc, Mutex};

use kernel_util::*;
use kfd_sim::kernel::FaultPlan;
use kfd_sim::Sim;
use kfd_sys::kfd::*;
use kfd_sys::{Driver, Errno};

#[test]
fn create_process_isolates_handles() {
    let sim = Sim::preset("mi210").unwrap();
    let a = Proc::open(&sim);
    let g = a.gpu();
    let (h, _) = a.alloc(g, 0x1000_0000, 1 << 20, GTT).unwrap();
    let ev = a
        .create_event(KFD_IOC_EVENT_SIGNAL, true, 0)
        .unwrap()
        .event_id;
    // A second open in the same OS process is the same kernel process.
    let same = sim.open_kfd().unwrap();
    assert_eq!(sim.live_objects().processes.len(), 1);
    // CREATE_PROCESS turns that fd into an independent secondary process.
    let mut cp = kfd_ioctl_create_process_args::default();
    io(&sim, &same, AMDKFD_IOC_CREATE_PROCESS, &mut cp).unwrap();
    assert_eq!(
        io(&sim, &same, AMDKFD_IOC_CREATE_PROCESS, &mut cp),
        Err(Errno::EINVAL)
    );
    let s = sim.live_objects();
    assert_eq!(s.processes.len(), 2);
    assert!(s.processes.iter().any(|p| p.secondary));
    // Handles of the primary are unknown there; its GPU VM is not acquired.
    let b = Proc {
        sim: sim.clone(),
        kfd: same,
        renders: vec![],
        gpus: vec![g],
    };
    assert_eq!(b.free(h), Err(Errno::EINVAL));
    assert_eq!(b.set_event(ev), Err(Errno::EINVAL));
    let r = sim.open_render_node(minors(&sim)[0]).unwrap();
    // The primary's render file is bound to the primary's VM.
    let mut acq = kfd_ioctl_acquire_vm_args {
        drm_fd: a.renders[0].as_raw_fd() as u32,
        gpu_id: g,
    };
    assert_eq!(
        io(&sim, &b.kfd, AMDKFD_IOC_ACQUIRE_VM, &mut acq),
        Err(Errno::EINVAL)
    );
    acq.drm_fd = r.as_raw_fd() as u32;
    io(&sim, &b.kfd, AMDKFD_IOC_ACQUIRE_VM, &mut acq).unwrap();
    assert_eq!(b.free(h), Err(Errno::EINVAL));
    let (hb, _) = b.alloc(g, 0x1000_0000, 1 << 20, GTT).unwrap();
    assert_eq!(hb, h, "same VA and handle numbering, different process");
    b.free(hb).unwrap();
    // Secondary processes cannot be debugged.
    let mut rinfo = kfd_runtime_info::default();
    let (rd, wr) = pipe();
    let mut d = dbg_trap_enable(sim.os_pid(), 0, &mut rinfo, &wr);
    assert_eq!(
        io(&sim, &b.kfd, AMDKFD_IOC_DBG_TRAP, &mut d),
        Err(Errno::EPERM)
    );
    drop((rd, wr));
    sim.close(r);
    let b_kfd = b.kfd;
    sim.close(b_kfd);
    assert_eq!(sim.live_objects().processes.len(), 1);
    a.free(h).unwrap();
    a.close();
    assert!(sim.live_objects().is_empty(), "{:?}", sim.live_objects());
}

#[test]
fn os_processes_share_buffers_only_through_dmabuf() {
    let sim = Sim::preset("mi210").unwrap();
    let other = sim.new_os_process();
    assert_ne!(sim.os_pid(), other.os_pid());
    let a = Proc::open(&sim);
    let b = Proc::open(&other);
    let g = a.gpu();
    let (h, off) = a.alloc(g, 0x2000_0000, 1 << 20, VRAM).unwrap();
    let m = map_fd(&a.renders[0], off, 1 << 20);
    // SAFETY: 1 MiB mapping.
    unsafe { *m.add(100) = 7 };
    unmap_fd(m, 1 << 20);
    // b does not see a's handle.
    assert_eq!(b.free(h), Err(Errno::EINVAL));
    // Export a dma-buf, pass the fd, import it in b.
    let mut ex = kfd_ioctl_export_dmabuf_args {
        handle: h,
        flags: libc::O_CLOEXEC as u32,
        dmabuf_fd: 0,
    };
    io(&sim, &a.kfd, AMDKFD_IOC_EXPORT_DMABUF, &mut ex).unwrap();
    // SAFETY: the ioctl handed us this descriptor.
    let dmabuf = unsafe { OwnedFd::from_raw_fd(ex.dmabuf_fd as i32) };
    assert_eq!(
        sim.file_kind(dmabuf.as_raw_fd()),
        Some(kfd_sim::kernel::FileKind::DmaBuf)
    );
    let mut info = kfd_ioctl_get_dmabuf_info_args {
        dmabuf_fd: dmabuf.as_raw_fd() as u32,
        ..Default::default()
    };
    io(&other, &b.kfd, AMDKFD_IOC_GET_DMABUF_INFO, &mut info).unwrap();
    assert_eq!(
        (
            info.size,
            info.gpu_id,
            info.flags & KFD_IOC_ALLOC_MEM_FLAGS_VRAM
        ),
        (1 << 20, g, KFD_IOC_ALLOC_MEM_FLAGS_VRAM)
    );
    let mut im = kfd_ioctl_import_dmabuf_args {
        va_addr: 0x3000_0000,
        handle: 0,
        gpu_id: g,
        dmabuf_fd: dmabuf.as_raw_fd() as u32,
    };
    io(&other, &b.kfd, AMDKFD_IOC_IMPORT_DMABUF, &mut im).unwrap();
    let imported = im.handle;
    assert_eq!(b.map(imported, &[g], 0), (Ok(0), 1));
    // Non-dma-buf descriptors are refused.
    im.dmabuf_fd = a.kfd.as_raw_fd() as u32;
    assert_eq!(
        io(&other, &b.kfd, AMDKFD_IOC_IMPORT_DMABUF, &mut im),
        Err(Errno::EINVAL)
    );
    info.dmabuf_fd = 12345;
    assert_eq!(
        io(&other, &b.kfd, AMDKFD_IOC_GET_DMABUF_INFO, &mut info),
        Err(Errno::EINVAL)
    );
    // Userptr BOs cannot be exported.
    let mem = anon(4096) as u64;
    let up = a.userptr(g, mem, 4096).unwrap();
    let mut ex2 = kfd_ioctl_export_dmabuf_args {
        handle: up,
        flags: 0,
        dmabuf_fd: 0,
    };
    assert_eq!(
        io(&sim, &a.kfd, AMDKFD_IOC_EXPORT_DMABUF, &mut ex2),
        Err(Errno::EPERM)
    );
    a.free(up).unwrap();
    // The exporter frees and exits; the pages live on in the importer.
    a.free(h).unwrap();
    let vram_before = sim.live_objects().vram_used[0];
    assert!(vram_before >= 1 << 20);
    a.close();
    sim.close(dmabuf);
    assert_eq!(b.unmap(imported, &[g], 0).0, Ok(0));
    b.free(imported).unwrap();
    b.close();
    let s = sim.live_objects();
    assert!(s.is_empty(), "{s:?}");
}

#[test]
fn teardown_on_close_and_dup_keeps_file_alive() {
    let sim = Sim::preset("mi300x").unwrap();
    let p = Proc::open(&sim);
    let g = p.gpu();
    for i in 0..4 {
        let (h, _) = p
            .alloc(g, 0x1000_0000 + i * 0x10_0000, 0x10_0000, VRAM)
            .unwrap();
        assert_eq!(p.map(h, &p.gpus.clone(), 0), (Ok(0), p.gpus.len() as u32));
    }
    let _ = p.create_event(KFD_IOC_EVENT_SIGNAL, true, 0).unwrap();
    let mem = anon(1 << 16) as u64;
    let mut q = kfd_ioctl_create_queue_args {
        ring_base_address: mem,
        write_pointer_address: mem,
        read_pointer_address: mem,
        ring_size: 4096,
        gpu_id: g,
        queue_type: KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
        ..Default::default()
    };
    io(&sim, &p.kfd, AMDKFD_IOC_CREATE_QUEUE, &mut q).unwrap();
    let s = sim.live_objects();
    assert_eq!(
        (
            s.processes[0].bos,
            s.processes[0].queues,
            s.processes[0].events
        ),
        (4, 1, 1)
    );
    // A dup of the kfd descriptor keeps the file (and process) alive.
    let dup = kfd_sys::driver::dup_cloexec(std::os::fd::AsFd::as_fd(&p.kfd)).unwrap();
    let Proc {
        sim: s2,
        kfd,
        renders,
        ..
    } = p;
    for r in renders {
        s2.close(r);
    }
    s2.close(kfd);
    assert_eq!(sim.live_objects().processes.len(), 1);
    let mut v = kfd_ioctl_get_version_args::default();
    io(&sim, &dup, AMDKFD_IOC_GET_VERSION, &mut v).unwrap();
    // Dropping the last descriptor without Driver::close is noticed by the
    // sweep in live_objects().
    drop(dup);
    let s = sim.live_objects();
    assert!(s.is_empty(), "{s:?}");
}

#[test]
fn fault_injection_fails_the_nth_call() {
    let sim = Sim::preset("mi210").unwrap();
    sim.inject_faults(
        FaultPlan::parse("ALLOC_MEMORY_OF_GPU:2:ENOMEM,AMDKFD_IOC_CREATE_EVENT:1:EIO").unwrap(),
    );
    sim.inject_fault("SET_EVENT", 1, Errno::EINVAL);
    let p = Proc::open(&sim);
    let g = p.gpu();
    let (h1, _) = p.alloc(g, 0x1000_0000, 4096, GTT).unwrap();
    assert_eq!(p.alloc(g, 0x1100_0000, 4096, GTT), Err(Errno::ENOMEM));
    let (h3, _) = p.alloc(g, 0x1200_0000, 4096, GTT).unwrap();
    assert_eq!(
        p.create_event(KFD_IOC_EVENT_SIGNAL, true, 0).err(),
        Some(Errno::EIO)
    );
    let ev = p
        .create_event(KFD_IOC_EVENT_SIGNAL, true, 0)
        .unwrap()
        .event_id;
    assert_eq!(p.set_event(ev), Err(Errno::EINVAL));
    p.set_event(ev).unwrap();
    assert_eq!(
        sim.live_objects().processes[0].bos,
        2,
        "the failed call left nothing behind"
    );
    p.free(h1).unwrap();
    p.free(h3).unwrap();
    p.close();
    assert!(sim.live_objects().is_empty());
}

#[derive(Clone, Default)]
struct Buf(Arc<Mutex<Vec<u8>>>);
impl Write for Buf {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn trace_has_one_line_per_ioctl() {
    let sim = Sim::preset("mi210").unwrap();
    let buf = Buf::default();
    sim.set_trace(buf.clone());
    let p = Proc::open(&sim);
    let (h, _) = p.alloc(p.gpu(), 0x1000_0000, 4096, GTT).unwrap();
    assert_eq!(p.free(h + 99), Err(Errno::EINVAL));
    p.free(h).unwrap();
    sim.clear_trace();
    p.close();
    let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(
        lines[0].contains("AMDKFD_IOC_ACQUIRE_VM") && lines[0].ends_with("-> 0"),
        "{text}"
    );
    assert!(
        lines[1].contains("AMDKFD_IOC_ALLOC_MEMORY_OF_GPU") && lines[1].contains("size: 4096"),
        "{text}"
    );
    assert!(
        lines[2].contains("AMDKFD_IOC_FREE_MEMORY_OF_GPU") && lines[2].ends_with("-> -EINVAL"),
        "{text}"
    );
}

#[test]
fn several_sims_in_parallel() {
    let hs: Vec<_> = ["mi210", "mi300x", "apu", "navi31", "mi210", "mi300x"]
        .into_iter()
        .map(|name| {
            std::thread::spawn(move || {
                let sim = Sim::preset(name).unwrap();
                let p = Proc::open(&sim);
                for g in p.gpus.clone() {
                    for i in 0..8u64 {
                        let (h, _) = p
                            .alloc(g, 0x1000_0000 + i * 0x10_0000, 0x10_0000, GTT)
                            .unwrap();
                        assert_eq!(p.map(h, &[g], 0).0, Ok(0));
                        assert_eq!(p.unmap(h, &[g], 0).0, Ok(0));
                        p.free(h).unwrap();
                    }
                }
                p.close();
                assert!(sim.live_objects().is_empty());
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
}

#[test]
fn runtime_enable_and_debug_trap() {
    let sim = Sim::preset("mi210").unwrap();
    let p = Proc::open(&sim);
    let g = p.gpu();
    let mut re = kfd_ioctl_runtime_enable_args {
        r_debug: 0x1234,
        mode_mask: KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK,
        capabilities_mask: 0,
    };
    io(&sim, &p.kfd, AMDKFD_IOC_RUNTIME_ENABLE, &mut re).unwrap();
    assert_eq!(
        io(&sim, &p.kfd, AMDKFD_IOC_RUNTIME_ENABLE, &mut re),
        Err(Errno::EBUSY)
    );
    let mut d = kfd_ioctl_dbg_trap_args {
        pid: sim.os_pid(),
        op: KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_MODE,
        ..Default::default()
    };
    assert_eq!(
        io(&sim, &p.kfd, AMDKFD_IOC_DBG_TRAP, &mut d),
        Err(Errno::EINVAL),
        "not enabled"
    );
    d.pid = 1;
    assert_eq!(
        io(&sim, &p.kfd, AMDKFD_IOC_DBG_TRAP, &mut d),
        Err(Errno::ESRCH)
    );
    d.pid = sim.os_pid();
    let (rd, wr) = pipe();
    let mut rinfo = kfd_runtime_info::default();
    d.op = KFD_IOC_DBG_TRAP_ENABLE;
    d.u.enable = kfd_ioctl_dbg_trap_enable_args {
        exception_mask: u64::MAX,
        rinfo_ptr: &mut rinfo as *mut _ as u64,
        rinfo_size: std::mem::size_of::<kfd_runtime_info>() as u32,
        dbg_fd: wr.as_raw_fd() as u32,
    };
    io(&sim, &p.kfd, AMDKFD_IOC_DBG_TRAP, &mut d).unwrap();
    assert_eq!(
        (rinfo.r_debug, rinfo.runtime_state),
        (0x1234, DEBUG_RUNTIME_STATE_ENABLED)
    );
    assert_eq!(
        io(&sim, &p.kfd, AMDKFD_IOC_DBG_TRAP, &mut d),
        Err(Errno::EALREADY)
    );
    // Wave launch mode.
    d.op = KFD_IOC_DBG_TRAP_SET_WAVE_LAUNCH_MODE;
    d.u.launch_mode = kfd_ioctl_dbg_trap_set_wave_launch_mode_args {
        launch_mode: 2,
        pad: 0,
    };
    assert_eq!(
        io(&sim, &p.kfd, AMDKFD_IOC_DBG_TRAP, &mut d),
        Err(Errno::EINVAL)
    );
    d.u.launch_mode.launch_mode = KFD_DBG_TRAP_WAVE_LAUNCH_MODE_HALT;
    io(&sim, &p.kfd, AMDKFD_IOC_DBG_TRAP, &mut d).unwrap();
    // Address watch points: 4 per device.
    d.op = KFD_IOC_DBG_TRAP_SET_NODE_ADDRESS_WATCH;
    for i in 0..4 {
        d.u.set_node_address_watch = kfd_ioctl_dbg_trap_set_node_address_watch_args {
            address: 0x1000,
            mode: KFD_DBG_TRAP_ADDRESS_WATCH_MODE_ALL,
            mask: 0xffff_ffff,
            gpu_id: g,
            id: 0,
        };
        io(&sim, &p.kfd, AMDKFD_IOC_DBG_TRAP, &mut d).unwrap();
        // SAFETY: the member just written by the simulator.
        assert_eq!(unsafe { d.u.set_node_address_watch.id }, i);
    }
    assert_eq!(
        io(&sim, &p.kfd, AMDKFD_IOC_DBG_TRAP, &mut d),
        Err(Errno::ENOMEM)
    );
    d.op = KFD_IOC_DBG_TRAP_CLEAR_NODE_ADDRESS_WATCH;
    d.u.clear_node_address_watch =
        kfd_ioctl_dbg_trap_clear_node_address_watch_args { gpu_id: g, id: 2 };
    io(&sim, &p.kfd, AMDKFD_IOC_DBG_TRAP, &mut d).unwrap();
    assert_eq!(
        io(&sim, &p.kfd, AMDKFD_IOC_DBG_TRAP, &mut d),
        Err(Errno::EINVAL)
    );
    d.u.clear_node_address_watch =
        kfd_ioctl_dbg_trap_clear_node_address_watch_args { gpu_id: 9, id: 2 };
    assert_eq!(
        io(&sim, &p.kfd, AMDKFD_IOC_DBG_TRAP, &mut d),
        Err(Errno::ENODEV)
    );
    // Queues: create, snapshot, suspend, wave state, resume.
    let mem = anon(1 << 16) as u64;
    let mut q = kfd_ioctl_create_queue_args {
        ring_base_address: mem,
        write_pointer_address: mem,
        read_pointer_address: mem,
        ring_size: 4096,
        gpu_id: g,
        queue_type: KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
        ctx_save_restore_address: mem,
        ctx_save_restore_size: 4096,
        ..Default::default()
    };
    io(&sim, &p.kfd, AMDKFD_IOC_CREATE_QUEUE, &mut q).unwrap();
    let mut snap = [kfd_queue_snapshot_entry::default(); 4];
    d.op = KFD_IOC_DBG_TRAP_GET_QUEUE_SNAPSHOT;
    d.u.queue_snapshot = kfd_ioctl_dbg_trap_queue_snapshot_args {
        exception_mask: 0,
        snapshot_buf_ptr: snap.as_mut_ptr() as u64,
        num_queues: 4,
        entry_size: std::mem::size_of::<kfd_queue_snapshot_entry>() as u32,
    };
    io(&sim, &p.kfd, AMDKFD_IOC_DBG_TRAP, &mut d).unwrap();
    // SAFETY: written by the simulator.
    assert_eq!(unsafe { d.u.queue_snapshot.num_queues }, 1);
    assert_eq!(
        (snap[0].queue_id, snap[0].gpu_id, snap[0].ring_size),
        (q.queue_id, g, 4096)
    );
    let mut ids = [q.queue_id, 77];
    d.op = KFD_IOC_DBG_TRAP_SUSPEND_QUEUES;
    d.u.suspend_queues = kfd_ioctl_dbg_trap_suspend_queues_args {
        exception_mask: 0,
        queue_array_ptr: ids.as_mut_ptr() as u64,
        num_queues: 2,
        grace_period: 0,
    };
    assert_eq!(io(&sim, &p.kfd, AMDKFD_IOC_DBG_TRAP, &mut d), Ok(1));
    assert_eq!(ids[1], 77 | KFD_DBG_QUEUE_INVALID_MASK);
    let mut ws = kfd_ioctl_get_queue_wave_state_args {
        ctl_stack_address: mem,
        queue_id: q.queue_id,
        ..Default::default()
    };
    io(&sim, &p.kfd, AMDKFD_IOC_GET_QUEUE_WAVE_STATE, &mut ws).unwrap();
    let mut ids = [q.queue_id];
    d.op = KFD_IOC_DBG_TRAP_RESUME_QUEUES;
    d.u.resume_queues = kfd_ioctl_dbg_trap_resume_queues_args {
        queue_array_ptr: ids.as_mut_ptr() as u64,
        num_queues: 1,
        pad: 0,
    };
    assert_eq!(io(&sim, &p.kfd, AMDKFD_IOC_DBG_TRAP, &mut d), Ok(1));
    // Device snapshot.
    let mut dev = [kfd_dbg_device_info_entry::default(); 2];
    d.op = KFD_IOC_DBG_TRAP_GET_DEVICE_SNAPSHOT;
    d.u.device_snapshot = kfd_ioctl_dbg_trap_device_snapshot_args {
        exception_mask: 0,
        snapshot_buf_ptr: dev.as_mut_ptr() as u64,
        num_devices: 2,
        entry_size: std::mem::size_of::<kfd_dbg_device_info_entry>() as u32,
    };
    io(&sim, &p.kfd, AMDKFD_IOC_DBG_TRAP, &mut d).unwrap();
    assert_eq!((dev[0].gpu_id, dev[0].gfx_target_version), (g, 90010));
    // Nothing pending: no event (the kernel's EAGAIN is never returned).
    d.op = KFD_IOC_DBG_TRAP_QUERY_DEBUG_EVENT;
    d.u.query_debug_event = kfd_ioctl_dbg_trap_query_debug_event_args {
        exception_mask: u64::MAX,
        gpu_id: 0,
        queue_id: 0,
    };
    assert_eq!(
        io(&sim, &p.kfd, AMDKFD_IOC_DBG_TRAP, &mut d),
        Err(Errno::ENODATA)
    );
    d.op = KFD_IOC_DBG_TRAP_DISABLE;
    io(&sim, &p.kfd, AMDKFD_IOC_DBG_TRAP, &mut d).unwrap();
    // Runtime enable refuses once queues exist.
    re.mode_mask = 0;
    io(&sim, &p.kfd, AMDKFD_IOC_RUNTIME_ENABLE, &mut re).unwrap();
    re.mode_mask = KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK;
    assert_eq!(
        io(&sim, &p.kfd, AMDKFD_IOC_RUNTIME_ENABLE, &mut re),
        Err(Errno::EEXIST)
    );
    drop((rd, wr));
    p.close();
    assert!(sim.live_objects().is_empty());
}
