//! User-mode queues (kfd_chardev.c queue ioctls, kfd_queue.c buffer
//! validation, doorbell assignment of the device queue manager).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use kfd_sys::kfd::*;
use kfd_sys::Errno;

use super::dispatch::{Ctx, R};
use super::memory::doorbell_offset;
use super::process::{Pdd, ProcState};
use super::usermem::{self, FromBuf, ToBuf};
use super::{align_up, Device, PAGE_SIZE};
use kfd_gpu::engine::{stop, HwQueue, Kind, QueueDesc};

/// `KFD_MAX_NUM_OF_QUEUES_PER_PROCESS`.
const MAX_QUEUES: u32 = 1024;
/// Highest user address `access_ok` accepts on x86-64.
const TASK_SIZE_MAX: u64 = (1 << 47) - 4096;
/// First doorbell index reserved for SDMA queues (and its mirror).
const SDMA_DOORBELL_FIRST: u32 = 0x100;

/// One user-mode queue.
#[derive(Debug, Clone)]
pub(crate) struct Queue {
    pub dev: usize,
    pub gpu_id: u32,
    pub queue_type: u32,
    pub ring_base: u64,
    pub ring_size: u32,
    pub rptr: u64,
    pub wptr: u64,
    pub percent: u32,
    pub priority: u32,
    pub ctx_save: u64,
    pub ctx_save_size: u32,
    pub doorbell: u32,
    pub cu_mask: Vec<u32>,
    pub gws: bool,
    pub suspended: bool,
    pub exception_status: u64,
    /// What the packet processors see of the queue.
    pub hw: Arc<HwQueue>,
}

impl Queue {
    /// Debugger suspend/resume: the queue stops at its next packet
    /// boundary (a long copy at its next chunk) or runs again.
    pub fn set_suspended(&mut self, on: bool) {
        self.suspended = on;
        self.hw.set_stop(stop::SUSPENDED, on);
    }
}

/// `is_active` of the kernel's queue properties: a ring of non-zero size
/// at a non-zero address and a non-zero percentage.
fn is_active(ring_base: u64, ring_size: u32, percent: u32) -> bool {
    ring_base != 0 && ring_size != 0 && percent != 0
}

fn access_ok(addr: u64, size: u64) -> bool {
    addr.checked_add(size).is_some_and(|e| e <= TASK_SIZE_MAX)
}

/// Context-save sizes of kfd_queue_ctx_save_restore_size().
pub(crate) fn cwsr_sizes(d: &Device) -> (u32, u32, u32, u32) {
    let gfxv = d.gfx_version;
    let cu_num = d.simd_count / d.simd_per_cu / d.num_xcc;
    let wave_num = if gfxv < 100100 {
        (cu_num * 40).min(d.array_count / d.simd_arrays_per_engine * 512)
    } else {
        cu_num * 32
    };
    let vgpr = match gfxv {
        90402 | 90010 | 90008 | 90500 => 0x80000,
        110000 | 110001 | 120000 | 120001 => 0x60000,
        _ => 0x40000,
    };
    let lds = if gfxv == 90500 {
        d.lds_size_in_kb << 10
    } else {
        0x10000
    };
    let wg = align_up((cu_num * (vgpr + 0x4000 + lds + 0x1000)) as u64, PAGE_SIZE) as u32;
    let per_wave = if gfxv >= 100100 { 12 } else { 8 };
    let mut ctl = align_up((40 + wave_num * per_wave + 8) as u64, PAGE_SIZE) as u32;
    if gfxv / 10000 * 10000 == 100000 {
        ctl = ctl.min(0x7000);
    }
    let debug = align_up((wave_num * 32) as u64, 64) as u32;
    let eop = 4096;
    (ctl, ctl + wg, debug, eop)
}

/// The BO mapped on device `dev` that covers `addr`, as (va, size).
fn mapping_at(st: &ProcState, dev: usize, addr: u64) -> Option<(u64, u64)> {
    st.vm_va.get(dev)?.covering(addr)
}

/// `kfd_queue_buffer_get`: the mapping must start at `addr` and, when
/// `size` is not 0, span exactly `size` bytes (page granular).
fn buffer_ok(st: &ProcState, dev: usize, addr: u64, size: u64) -> bool {
    match mapping_at(st, dev, addr) {
        Some((va, len)) => {
            let va_p = va / PAGE_SIZE;
            let last = (va + len - 1) / PAGE_SIZE;
            addr / PAGE_SIZE == va_p
                && (size == 0 || addr / PAGE_SIZE + size / PAGE_SIZE - 1 == last)
        }
        None => false,
    }
}

fn validate_buffers(
    st: &ProcState,
    d: &Device,
    a: &kfd_ioctl_create_queue_args,
    compute: bool,
) -> Result<(), Errno> {
    let dev = d.index;
    if !buffer_ok(st, dev, a.write_pointer_address, PAGE_SIZE)
        || !buffer_ok(st, dev, a.read_pointer_address, PAGE_SIZE)
    {
        return Err(Errno::EINVAL);
    }
    let aql = a.queue_type == KFD_IOC_QUEUE_TYPE_COMPUTE_AQL;
    let expected = if aql && (70000..90000).contains(&d.gfx_version) {
        a.ring_size as u64 / 2
    } else {
        a.ring_size as u64
    };
    if !buffer_ok(st, dev, a.ring_base_address, expected) {
        return Err(Errno::EINVAL);
    }
    if !compute {
        return Ok(());
    }
    let (ctl, cwsr, debug, eop) = cwsr_sizes(d);
    if a.eop_buffer_address != 0
        && (a.eop_buffer_size != eop as u64
            || !buffer_ok(st, dev, a.eop_buffer_address, a.eop_buffer_size))
    {
        return Err(Errno::EINVAL);
    }
    if a.ctl_stack_size != ctl || a.ctx_save_restore_size < cwsr {
        return Err(Errno::EINVAL);
    }
    let total = align_up(
        ((a.ctx_save_restore_size + debug) * d.num_xcc) as u64,
        PAGE_SIZE,
    );
    if buffer_ok(st, dev, a.ctx_save_restore_address, total) {
        return Ok(());
    }
    Err(Errno::EINVAL)
}

fn alloc_doorbell(pdd: &mut Pdd, sdma: bool) -> Option<u32> {
    let range = if sdma {
        SDMA_DOORBELL_FIRST..SDMA_DOORBELL_FIRST * 2
    } else {
        0..MAX_QUEUES
    };
    let id = range
        .filter(|i| sdma || !(SDMA_DOORBELL_FIRST..SDMA_DOORBELL_FIRST * 2).contains(i))
        .filter(|i| sdma || !(0x300..0x400).contains(i))
        .find(|i| !pdd.doorbells.contains(i))?;
    pdd.doorbells.insert(id);
    Some(id)
}

pub(crate) fn create(c: &Ctx, buf: &mut [u8]) -> R {
    let mut a = kfd_ioctl_create_queue_args::from_buf(buf);
    // set_queue_properties_from_user
    if a.queue_percentage & 0xff > KFD_MAX_QUEUE_PERCENTAGE
        || a.queue_priority > KFD_MAX_QUEUE_PRIORITY
    {
        return Err(Errno::EINVAL);
    }
    if a.ring_base_address != 0 && !access_ok(a.ring_base_address, 8) {
        return Err(Errno::EFAULT);
    }
    if a.ring_size != 0 && !a.ring_size.is_power_of_two() {
        return Err(Errno::EINVAL);
    }
    if a.ring_size < KFD_MIN_QUEUE_RING_SIZE {
        a.ring_size = KFD_MIN_QUEUE_RING_SIZE;
    }
    if !access_ok(a.read_pointer_address, 4) || !access_ok(a.write_pointer_address, 4) {
        return Err(Errno::EFAULT);
    }
    if (a.eop_buffer_address != 0 && !access_ok(a.eop_buffer_address, 4))
        || (a.ctx_save_restore_address != 0 && !access_ok(a.ctx_save_restore_address, 4))
    {
        return Err(Errno::EFAULT);
    }
    let compute = match a.queue_type {
        KFD_IOC_QUEUE_TYPE_COMPUTE | KFD_IOC_QUEUE_TYPE_COMPUTE_AQL => true,
        KFD_IOC_QUEUE_TYPE_SDMA
        | KFD_IOC_QUEUE_TYPE_SDMA_XGMI
        | KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID => false,
        _ => return Err(Errno::ENOTSUPP),
    };
    let mut st = c.lock_state();
    let Some(pi) = st.pdds.iter().position(|p| p.gpu_id == a.gpu_id) else {
        return Err(Errno::EINVAL);
    };
    if st.pdds[pi].vm.is_none() {
        return Err(Errno::ESRCH);
    }
    let d = &c.m.devices[st.pdds[pi].dev];
    if a.queue_type == KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID
        && a.sdma_engine_id as i64 > d.num_sdma_engines as i64 + d.num_sdma_xgmi_engines as i64 - 1
    {
        return Err(Errno::EINVAL);
    }
    if c.m.validate_queue_buffers.load(Ordering::Relaxed) {
        validate_buffers(&st, d, &a, compute)?;
    }
    if !compute {
        let engines = match a.queue_type {
            KFD_IOC_QUEUE_TYPE_SDMA => d.num_sdma_engines,
            KFD_IOC_QUEUE_TYPE_SDMA_XGMI => d.num_sdma_xgmi_engines,
            _ => 1,
        };
        let limit = engines * d.num_sdma_queues_per_engine;
        let used = st
            .queues
            .values()
            .filter(|q| q.dev == d.index && q.queue_type == a.queue_type)
            .count() as u32;
        if used >= limit {
            return Err(Errno::ENOMEM);
        }
    }
    let Some(id) = (0..MAX_QUEUES).find(|i| !st.queues.contains_key(i)) else {
        return Err(Errno::ENOMEM);
    };
    let pdd = &mut st.pdds[pi];
    pdd.doorbells_allocated = true;
    let Some(db) = alloc_doorbell(pdd, !compute) else {
        return Err(Errno::ENOMEM);
    };
    let dev = pdd.dev;
    let percent = a.queue_percentage & 0xff;
    let port = Arc::new(super::gpu_port::Port::new(
        Arc::downgrade(&c.proc),
        dev,
        a.gpu_id,
        c.m.files.clone(),
    ));
    let hw = Arc::new(HwQueue::new(
        QueueDesc {
            queue_id: id,
            gpu_id: a.gpu_id,
            gfx_version: c.m.devices[dev].gfx_version,
            kind: Kind::of(a.queue_type),
            ring: (a.ring_base_address, u64::from(a.ring_size)),
            rptr: a.read_pointer_address,
            wptr: a.write_pointer_address,
            apertures: (super::layout::LDS_BASE, super::layout::SCRATCH_BASE),
            active: is_active(a.ring_base_address, a.ring_size, percent),
        },
        port.clone(),
        port,
    ));
    let q = Queue {
        dev,
        gpu_id: a.gpu_id,
        queue_type: a.queue_type,
        ring_base: a.ring_base_address,
        ring_size: a.ring_size,
        rptr: a.read_pointer_address,
        wptr: a.write_pointer_address,
        percent,
        priority: a.queue_priority,
        ctx_save: a.ctx_save_restore_address,
        ctx_save_size: a.ctx_save_restore_size,
        doorbell: db,
        cu_mask: Vec::new(),
        gws: false,
        suspended: false,
        exception_status: 0,
        hw: hw.clone(),
    };
    st.queues.insert(id, q);
    st.debug.raise_queue_new(id, a.gpu_id);
    drop(st);
    c.m.engine.register(hw);
    a.queue_id = id;
    // SOC15: the doorbell's byte offset inside the 2-page process slice.
    a.doorbell_offset = doorbell_offset(dev) + db as u64 * 8;
    a.to_buf(buf);
    Ok(0)
}

pub(crate) fn destroy(c: &Ctx, buf: &mut [u8]) -> R {
    let a = kfd_ioctl_destroy_queue_args::from_buf(buf);
    let mut st = c.lock_state();
    let Some(q) = st.queues.remove(&a.queue_id) else {
        return Err(Errno::EINVAL);
    };
    if let Some(p) = st.pdds.get_mut(q.dev) {
        p.doorbells.remove(&q.doorbell);
    }
    drop(st);
    retire(c.m, &q.hw);
    Ok(0)
}

/// The queue is gone: the engine stops serving it, and the caller returns
/// only once the engine is out of its current packet (the kernel's
/// preemption before the MQD is freed). Call without the process lock.
pub(crate) fn retire(m: &super::Machine, hw: &Arc<HwQueue>) {
    hw.set_stop(stop::DESTROYED, true);
    m.engine.unregister(hw);
    hw.wait_idle();
}

pub(crate) fn update(c: &Ctx, buf: &mut [u8]) -> R {
    let mut a = kfd_ioctl_update_queue_args::from_buf(buf);
    if a.queue_percentage & 0xff > KFD_MAX_QUEUE_PERCENTAGE
        || a.queue_priority > KFD_MAX_QUEUE_PRIORITY
    {
        return Err(Errno::EINVAL);
    }
    if a.ring_base_address != 0 && !access_ok(a.ring_base_address, 8) {
        return Err(Errno::EFAULT);
    }
    if a.ring_size != 0 && !a.ring_size.is_power_of_two() {
        return Err(Errno::EINVAL);
    }
    if a.ring_size < KFD_MIN_QUEUE_RING_SIZE {
        a.ring_size = KFD_MIN_QUEUE_RING_SIZE;
    }
    let mut st = c.lock_state();
    let Some(q) = st.queues.get_mut(&a.queue_id) else {
        return Err(Errno::EFAULT);
    };
    q.ring_base = a.ring_base_address;
    q.ring_size = a.ring_size;
    q.percent = a.queue_percentage & 0xff;
    q.priority = a.queue_priority;
    let hw = q.hw.clone();
    let active = is_active(q.ring_base, q.ring_size, q.percent);
    drop(st);
    hw.update(a.ring_base_address, u64::from(a.ring_size), active);
    c.m.engine.kick();
    Ok(0)
}

pub(crate) fn set_cu_mask(c: &Ctx, buf: &mut [u8]) -> R {
    let a = kfd_ioctl_set_cu_mask_args::from_buf(buf);
    if a.num_cu_mask % 32 != 0 || a.num_cu_mask == 0 {
        return Err(Errno::EINVAL);
    }
    let bits = a.num_cu_mask.min(1024);
    let mask: Vec<u32> = usermem::read_array(a.cu_mask_ptr, (bits / 32) as usize)?;
    let mut st = c.lock_state();
    let Some(q) = st.queues.get_mut(&a.queue_id) else {
        return Err(Errno::EFAULT);
    };
    q.cu_mask = mask;
    Ok(0)
}

pub(crate) fn get_wave_state(c: &Ctx, buf: &mut [u8]) -> R {
    let mut a = kfd_ioctl_get_queue_wave_state_args::from_buf(buf);
    let st = c.lock_state();
    let Some(q) = st.queues.get(&a.queue_id) else {
        return Err(Errno::EFAULT);
    };
    let compute = matches!(
        q.queue_type,
        KFD_IOC_QUEUE_TYPE_COMPUTE | KFD_IOC_QUEUE_TYPE_COMPUTE_AQL
    );
    // Only an inactive (suspended) compute queue has a saved wave state.
    if !compute || !q.suspended || q.ctx_save == 0 {
        return Err(Errno::EINVAL);
    }
    // No wave was ever saved: an empty control stack.
    a.ctl_stack_used_size = 0;
    a.save_area_used_size = 0;
    a.to_buf(buf);
    Ok(0)
}

pub(crate) fn alloc_gws(c: &Ctx, buf: &mut [u8]) -> R {
    let mut a = kfd_ioctl_alloc_queue_gws_args::from_buf(buf);
    let mut st = c.lock_state();
    let debug_on = st.debug.trap_enabled;
    let Some(q) = st.queues.get_mut(&a.queue_id) else {
        return Err(Errno::EINVAL);
    };
    let d = &c.m.devices[q.dev];
    if d.num_gws == 0 {
        return Err(Errno::ENODEV);
    }
    if debug_on && d.gfx_version < 90000 {
        return Err(Errno::EBUSY);
    }
    q.gws = a.num_gws != 0;
    a.first_gws = 0;
    a.to_buf(buf);
    Ok(0)
}
