//! The driver model's side of the hardware: what amdkfd hands the GPU's
//! engines (`kfd_gpu::engine`) for each queue, a [`Port`]:
//!
//! - **GPU memory** ([`kfd_gpu::engine::VmAccess`]): an address resolves
//!   the way the GPU's page tables would ([`resolve`]): a buffer object
//!   mapped on the queue's device (VRAM/GTT pages through their memfd,
//!   userptr memory through the user's own pages, doorbell and MMIO
//!   buffers through the kfd file), else an SVM range of the process, else
//!   it is a GPU page fault. Memfd pages are mapped once into the model
//!   ([`RegionMap`], cached per port) and the engines work on that mapping
//!   directly; user memory is the OS process's own memory at the same
//!   address. Writes to a BO without `WRITABLE` (or an SVM range with
//!   `GPU_RO`) are read-only faults.
//! - **the interrupt handler** ([`kfd_gpu::engine::InterruptSink`]): the
//!   one place that turns a hardware interrupt into event slots, debugger
//!   and runtime exceptions, and evictions, as the kernel's
//!   `kfd_signal_event_interrupt`, `kfd_dbg_ev_raise`,
//!   `kfd_send_exception_to_runtime` and `kfd_signal_vm_fault_event` do.
//!
//! Known limit: a range of user memory unmapped while a kernel running on
//! the simulated GPU still uses it is not waited for (the kernel's MMU
//! notifier would evict the queues first).

use std::ptr::NonNull;
use std::sync::{Arc, Mutex, Weak};

use kfd_gpu::engine::{HwQueue, Interrupt, InterruptSink, VmAccess};
use kfd_gpu::mem::{Access, GpuMemory, GpuMemoryDebug};
use kfd_sys::kfd::*;

use crate::kernel::memfd::{FileId, Memfd, RegionMap};
use crate::kernel::process::Process;
use crate::kernel::{lock, smi_event, task_name, usermem, Files, PAGE_SIZE};

/// A GPU page fault: no mapping (or no write permission) for `va`.
pub(crate) type Fault = kfd_gpu::mem::Fault;

/// Where a run of bytes lives.
#[derive(Debug, Clone)]
pub(crate) enum Backing {
    /// A memfd at this file offset.
    File(Arc<Memfd>, u64),
    /// The user's memory at this CPU address.
    User(u64),
}

/// A contiguous run of translated bytes starting at the requested address.
#[derive(Debug)]
pub(crate) struct Span {
    pub at: Backing,
    /// Bytes available from the address on.
    pub len: u64,
}

/// Translates `va` (a `write` access) in the GPU VM of device `dev` of
/// `proc` to its backing and the number of bytes contiguous from there,
/// the way the GPU's page tables would.
pub(crate) fn resolve(proc: &Process, dev: usize, va: u64, write: bool) -> Result<Span, Fault> {
    let fault = |read_only| Fault {
        va,
        write,
        read_only,
    };
    let st = lock(&proc.state);
    if let Some((start, e)) = st.vm_va.get(dev).and_then(|v| v.entry_at(va)) {
        let end = e.end;
        let Some(bo) = st.pdds.get(e.owner).and_then(|p| p.bos.get(&e.idr)) else {
            return Err(fault(false));
        };
        if write && bo.flags & KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE == 0 {
            return Err(fault(true));
        }
        let off = va - start;
        let len = end - va;
        let at = if let Some(s) = &bo.storage {
            let (memfd, base) = s.backing().ok_or(fault(false))?;
            // Stay inside the buffer's own pages.
            let len = len.min(s.size.saturating_sub(off));
            if len == 0 {
                return Err(fault(false));
            }
            return Ok(Span {
                at: Backing::File(memfd, base + off),
                len,
            });
        } else if bo.userptr != 0 {
            Backing::User(bo.userptr + off)
        } else if bo.flags & (KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL | KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP)
            != 0
        {
            Backing::File(proc.home.clone(), bo.mmap_offset + off)
        } else {
            return Err(fault(false));
        };
        return Ok(Span { at, len });
    }
    let page = va / PAGE_SIZE;
    if let Some((last, attrs)) = st.svm.range_of(page) {
        if write && attrs.flags & KFD_IOCTL_SVM_FLAG_GPU_RO != 0 {
            return Err(fault(true));
        }
        return Ok(Span {
            at: Backing::User(va),
            len: (last + 1) * PAGE_SIZE - va,
        });
    }
    Err(fault(false))
}

/// Memfd regions a port keeps mapped.
const MAPS: usize = 64;

/// What one queue's engine is handed: the process's GPU VM on the
/// queue's device and the interrupt handler.
pub(crate) struct Port {
    proc: Weak<Process>,
    dev: usize,
    gpu_id: u32,
    /// The machine's open files (SMI clients of a fault).
    files: Files,
    maps: Mutex<Vec<(FileId, u64, Arc<RegionMap>)>>,
}

impl Port {
    /// The port of a queue of `proc` on device `dev` of a machine whose
    /// open files are `files`.
    pub fn new(proc: Weak<Process>, dev: usize, gpu_id: u32, files: Files) -> Port {
        Port {
            proc,
            dev,
            gpu_id,
            files,
            maps: Mutex::new(Vec::new()),
        }
    }

    /// The mapping of `len` bytes of `memfd` from `off`, made once.
    fn region(&self, memfd: &Arc<Memfd>, off: u64, len: u64) -> Option<Arc<RegionMap>> {
        let mut maps = lock(&self.maps);
        if let Some(i) = maps
            .iter()
            .position(|(id, o, m)| *id == memfd.id && *o == off && m.len() >= len)
        {
            let e = maps.remove(i);
            let m = e.2.clone();
            maps.insert(0, e);
            return Some(m);
        }
        let m = Arc::new(RegionMap::new(memfd.clone(), off, len).ok()?);
        maps.insert(0, (memfd.id, off, m.clone()));
        // Views still hold the mappings they gave spans into.
        maps.truncate(MAPS);
        Some(m)
    }
}

/// The memory of one step of an engine: spans into the mappings it holds.
struct View<'a> {
    port: &'a Port,
    proc: Arc<Process>,
    held: Mutex<Vec<Arc<RegionMap>>>,
}

impl std::fmt::Debug for View<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("View")
            .field("dev", &self.port.dev)
            .finish_non_exhaustive()
    }
}

impl GpuMemory for View<'_> {
    fn translate(&self, va: u64, access: Access) -> Result<kfd_gpu::mem::Span, Fault> {
        let write = access == Access::Write;
        // Spans start at the page of `va` (buffers and SVM ranges are
        // page-aligned) and run to the end of the buffer or range.
        let page = va & !(PAGE_SIZE - 1);
        let dev = self.port.dev;
        let span = resolve(&self.proc, dev, page, false)?;
        let writable = resolve(&self.proc, dev, page, true).is_ok();
        if write && !writable {
            return Err(Fault {
                va,
                write,
                read_only: true,
            });
        }
        let host = match span.at {
            Backing::File(memfd, off) => {
                let m = self
                    .port
                    .region(&memfd, off, span.len)
                    .ok_or(Fault::not_present(va, write))?;
                let p = m.ptr();
                lock(&self.held).push(m);
                p
            }
            Backing::User(addr) => {
                NonNull::new(addr as usize as *mut u8).ok_or(Fault::not_present(va, write))?
            }
        };
        // SAFETY: a memfd region stays mapped while this view holds it
        // (`held`), and the view outlives every span it gives (the engine
        // drops its TLB first); user memory is this OS process's own,
        // registered with the GPU VM (userptr buffer or SVM range), mapped
        // while registered (see the module's known limit). The engines
        // access spans only atomically.
        Ok(unsafe { kfd_gpu::mem::Span::new(page, span.len, host, writable) })
    }
}

impl VmAccess for Port {
    fn memory(&self) -> Option<Box<dyn GpuMemoryDebug + '_>> {
        let proc = self.proc.upgrade()?;
        Some(Box::new(View {
            port: self,
            proc,
            held: Mutex::new(Vec::new()),
        }))
    }
}

impl InterruptSink for Port {
    fn interrupt(&self, queue: &HwQueue, irq: Interrupt) -> bool {
        let Some(proc) = self.proc.upgrade() else {
            return false;
        };
        match irq {
            Interrupt::Signal { ctx_id, valid_bits } => {
                proc.events.signal_interrupt(ctx_id, valid_bits);
                false
            }
            Interrupt::QueueError { ec } => queue_error(&proc, queue.queue_id, ec),
            Interrupt::VmFault(f) => {
                vm_fault(&proc, self, f);
                false
            }
        }
    }
}

/// A queue error, where the kernel sends it: to a debugger that enabled
/// the exception (`kfd_dbg_ev_raise`), else, when the runtime is enabled,
/// into the error payload of the queue's context save area header with
/// its error event set (`kfd_send_exception_to_runtime`). False when
/// neither took it (the CP then reports it itself).
fn queue_error(proc: &Process, queue_id: u32, ec: u32) -> bool {
    let mask = kfd_ec_mask(ec);
    let (debugger, runtime, ctx_save) = {
        let mut st = lock(&proc.state);
        let debugger = st.debug.trap_enabled && st.debug.exception_enable_mask & mask != 0;
        let mut ctx_save = 0;
        let trap_enabled = st.debug.trap_enabled;
        if let Some(kq) = st.queues.get_mut(&queue_id) {
            ctx_save = kq.ctx_save;
            if trap_enabled {
                kq.exception_status |= mask;
            }
        }
        if debugger {
            st.debug.notify_debugger();
        }
        (
            debugger,
            st.debug.runtime_state == DEBUG_RUNTIME_STATE_ENABLED,
            ctx_save,
        )
    };
    debugger || (runtime && ctx_save != 0 && send_to_runtime(proc, ctx_save, mask))
}

/// `send_exception_work_handler`: ORs the exception into the payload the
/// context save area header points at and sets the header's error event.
/// The header is user memory the kernel reaches with get_user/put_user.
fn send_to_runtime(proc: &Process, hdr: u64, mask: u64) -> bool {
    let read = |addr: u64| {
        let mut b = [0u8; 8];
        usermem::read(addr, &mut b)
            .ok()
            .map(|()| u64::from_ne_bytes(b))
    };
    let (Some(payload), Some(ev)) = (read(hdr + 24), read(hdr + 32)) else {
        return false;
    };
    if payload == 0 {
        return false;
    }
    let Some(cur) = read(payload) else {
        return false;
    };
    if usermem::write(payload, &(cur | mask).to_ne_bytes()).is_err() {
        return false;
    }
    proc.events.set_signal_event(ev as u32);
    true
}

/// A GPU memory fault, handled as the kernel's interrupt handler does
/// (`event_interrupt_wq_v9`): the SMI `VMFAULT` event (`pid:task`, to the
/// process's SMI clients of this GPU), the eviction of every queue of the
/// process on this GPU, and `kfd_signal_vm_fault_event`: every memory
/// exception event of the process is set with the faulting page, GPU and
/// reason.
fn vm_fault(proc: &Process, port: &Port, f: Fault) {
    let (dev, gpu_id) = (port.dev, port.gpu_id);
    let pid = proc.os_pid;
    smi_event(
        &port.files,
        gpu_id,
        pid,
        KFD_SMI_EVENT_VMFAULT,
        &format!("{pid:x}:{}\n", task_name()),
    );
    {
        let st = lock(&proc.state);
        for kq in st.queues.values().filter(|kq| kq.dev == dev) {
            kq.hw.set_stop(kfd_gpu::engine::stop::EVICTED, true);
        }
    }
    let data = kfd_hsa_memory_exception_data {
        failure: kfd_memory_exception_failure {
            NotPresent: u32::from(!f.read_only),
            ReadOnly: u32::from(f.read_only),
            NoExecute: 0,
            imprecise: 0,
        },
        va: f.va & !(PAGE_SIZE - 1),
        gpu_id,
        ErrorType: 0,
    };
    proc.events.signal_type(KFD_IOC_EVENT_MEMORY, Some(data));
}
