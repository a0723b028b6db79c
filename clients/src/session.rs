//! A safe layer over [`Runtime`]: an initialised runtime ([`Session`]),
//! typed attribute queries, iteration into vectors, and owned
//! allocations, queues and signals that free themselves.

use std::ffi::{c_void, CStr};
use std::ptr::{null, null_mut, NonNull};
use std::sync::atomic::{AtomicU16, Ordering};

use crate::hsa::*;

/// The runtime between a successful `hsa_init` and `hsa_shut_down`
/// ([`Session::shut_down`], or on drop).
#[derive(Debug)]
pub struct Session<'r> {
    rt: &'r Runtime,
    open: bool,
}

/// Collects each iterated item into the `Vec<T>` behind `data`.
///
/// # Safety
///
/// `data` must point to a live `Vec<T>` not otherwise borrowed.
unsafe extern "C" fn collect<T>(item: T, data: *mut c_void) -> Status {
    // SAFETY: per the contract, `data` is the exclusive `&mut Vec<T>` that
    // `iterate` passes for the duration of the call.
    unsafe { &mut *data.cast::<Vec<T>>() }.push(item);
    HSA_STATUS_SUCCESS
}

fn check(status: Status) -> Result<(), Status> {
    if status == HSA_STATUS_SUCCESS {
        Ok(())
    } else {
        Err(status)
    }
}

impl<'r> Session<'r> {
    /// `hsa_init`.
    pub fn init(rt: &'r Runtime) -> Result<Self, Status> {
        // SAFETY: hsa_init takes no arguments.
        check(unsafe { (rt.hsa_init)() })?;
        Ok(Self { rt, open: true })
    }

    /// `hsa_shut_down`; its status.
    pub fn shut_down(mut self) -> Status {
        self.open = false;
        // SAFETY: balanced with the hsa_init of `init`; nothing of the
        // session outlives it (allocations, queues and signals borrow it).
        unsafe { (self.rt.hsa_shut_down)() }
    }

    /// `hsa_status_string` of `status`, if the runtime has one.
    pub fn status_text(&self, status: Status) -> Option<String> {
        let mut text = null();
        // SAFETY: `text` is a valid out-pointer; on success the runtime
        // stores a pointer to a static NUL-terminated string.
        let s = unsafe { (self.rt.hsa_status_string)(status, &mut text) };
        if s != HSA_STATUS_SUCCESS || text.is_null() {
            return None;
        }
        // SAFETY: non-null, NUL-terminated, static (see above).
        Some(
            unsafe { CStr::from_ptr(text) }
                .to_string_lossy()
                .into_owned(),
        )
    }

    /// One system attribute.
    pub fn system<T: Plain>(&self, attr: Attr<OfSystem, T>) -> Result<T, Status> {
        // SAFETY: Plain types are valid when zeroed.
        let mut v: T = unsafe { std::mem::zeroed() };
        // SAFETY: `attr` pairs the id with its C type `T`, so the runtime
        // writes at most size_of::<T>() bytes into `v`.
        check(unsafe { (self.rt.hsa_system_get_info)(attr.id, (&raw mut v).cast()) })?;
        Ok(v)
    }

    /// One agent attribute.
    pub fn agent<T: Plain>(&self, agent: Agent, attr: Attr<OfAgent, T>) -> Result<T, Status> {
        // SAFETY: Plain types are valid when zeroed.
        let mut v: T = unsafe { std::mem::zeroed() };
        // SAFETY: as in `system`.
        check(unsafe { (self.rt.hsa_agent_get_info)(agent, attr.id, (&raw mut v).cast()) })?;
        Ok(v)
    }

    /// One region attribute.
    pub fn region<T: Plain>(&self, region: Region, attr: Attr<OfRegion, T>) -> Result<T, Status> {
        // SAFETY: Plain types are valid when zeroed.
        let mut v: T = unsafe { std::mem::zeroed() };
        // SAFETY: as in `system`.
        check(unsafe { (self.rt.hsa_region_get_info)(region, attr.id, (&raw mut v).cast()) })?;
        Ok(v)
    }

    /// One memory-pool attribute.
    pub fn pool<T: Plain>(&self, pool: MemoryPool, attr: Attr<OfPool, T>) -> Result<T, Status> {
        // SAFETY: Plain types are valid when zeroed.
        let mut v: T = unsafe { std::mem::zeroed() };
        // SAFETY: as in `system`.
        check(unsafe {
            (self.rt.hsa_amd_memory_pool_get_info)(pool, attr.id, (&raw mut v).cast())
        })?;
        Ok(v)
    }

    /// `HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS` of `agent` to `pool`.
    pub fn access(&self, agent: Agent, pool: MemoryPool) -> Result<u32, Status> {
        let mut v = 0u32;
        // SAFETY: the attribute's type is hsa_amd_memory_pool_access_t, a
        // 4-byte enum (checked by the header test).
        check(unsafe {
            (self.rt.hsa_amd_agent_memory_pool_get_info)(
                agent,
                pool,
                HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS,
                (&raw mut v).cast(),
            )
        })?;
        Ok(v)
    }

    /// Every agent, in the runtime's order.
    pub fn agents(&self) -> Result<Vec<Agent>, Status> {
        let mut v: Vec<Agent> = Vec::new();
        // SAFETY: `collect::<Agent>` matches the callback type and gets
        // `&mut v`, alive and unborrowed for the call.
        check(unsafe { (self.rt.hsa_iterate_agents)(collect::<Agent>, (&raw mut v).cast()) })?;
        Ok(v)
    }

    /// Every region of `agent`.
    pub fn regions(&self, agent: Agent) -> Result<Vec<Region>, Status> {
        let mut v: Vec<Region> = Vec::new();
        // SAFETY: as in `agents`.
        check(unsafe {
            (self.rt.hsa_agent_iterate_regions)(agent, collect::<Region>, (&raw mut v).cast())
        })?;
        Ok(v)
    }

    /// Every memory pool of `agent`.
    pub fn pools(&self, agent: Agent) -> Result<Vec<MemoryPool>, Status> {
        let mut v: Vec<MemoryPool> = Vec::new();
        // SAFETY: as in `agents`.
        check(unsafe {
            (self.rt.hsa_amd_agent_iterate_memory_pools)(
                agent,
                collect::<MemoryPool>,
                (&raw mut v).cast(),
            )
        })?;
        Ok(v)
    }

    /// `hsa_amd_memory_pool_allocate` of `size` bytes.
    pub fn allocate(&self, pool: MemoryPool, size: usize) -> Result<Allocation<'_, 'r>, Status> {
        let mut ptr = null_mut();
        // SAFETY: `ptr` is a valid out-pointer; flags 0.
        check(unsafe { (self.rt.hsa_amd_memory_pool_allocate)(pool, size, 0, &mut ptr) })?;
        let ptr = NonNull::new(ptr).ok_or(HSA_STATUS_ERROR_NULL)?;
        Ok(Allocation {
            owned: Owned::new(self, ptr, free_memory),
            size,
        })
    }

    /// `hsa_queue_create` on `agent` (no error callback, default segment
    /// sizes).
    pub fn queue(
        &self,
        agent: Agent,
        size: u32,
        queue_type: u32,
    ) -> Result<OwnedQueue<'_, 'r>, Status> {
        let mut q = null_mut();
        // SAFETY: `q` is a valid out-pointer; a NULL callback is allowed;
        // u32::MAX asks for the default private/group segment sizes.
        check(unsafe {
            (self.rt.hsa_queue_create)(
                agent,
                size,
                queue_type,
                None,
                null_mut(),
                u32::MAX,
                u32::MAX,
                &mut q,
            )
        })?;
        let q = NonNull::new(q).ok_or(HSA_STATUS_ERROR_NULL)?;
        Ok(OwnedQueue {
            owned: Owned::new(self, q, destroy_queue),
        })
    }

    /// `hsa_amd_memory_async_copy` of `size` bytes from `src` (reached by
    /// `src_agent`) to `dst` (reached by `dst_agent`) once every signal
    /// of `deps` is 0; `done` is decremented on completion.
    ///
    /// Both ranges must be `size` bytes inside live allocations of this
    /// session, which the copy engine writes and reads behind the back
    /// of any Rust reference: hold none into `dst` until `done` is waited
    /// for.
    #[allow(clippy::too_many_arguments)]
    pub fn async_copy(
        &self,
        dst: &Allocation<'_, 'r>,
        dst_agent: Agent,
        src: &Allocation<'_, 'r>,
        src_agent: Agent,
        size: usize,
        deps: &[&OwnedSignal<'_, 'r>],
        done: &OwnedSignal<'_, 'r>,
    ) -> Result<(), Status> {
        self.async_copy_at((dst, 0, dst_agent), (src, 0, src_agent), size, deps, done)
    }

    /// [`Session::async_copy`] between byte offsets: `size` bytes from
    /// `src.1` bytes into `src.0` to `dst.1` bytes into `dst.0` (each
    /// with the agent that reaches it); both ranges must lie inside
    /// their allocations.
    pub fn async_copy_at(
        &self,
        dst: (&Allocation<'_, 'r>, usize, Agent),
        src: (&Allocation<'_, 'r>, usize, Agent),
        size: usize,
        deps: &[&OwnedSignal<'_, 'r>],
        done: &OwnedSignal<'_, 'r>,
    ) -> Result<(), Status> {
        let (Some(to), Some(from)) = (dst.0.span(dst.1, size), src.0.span(src.1, size)) else {
            return Err(HSA_STATUS_ERROR_NULL);
        };
        let deps: Vec<Signal> = deps.iter().map(|d| d.owned.handle).collect();
        let n = u32::try_from(deps.len()).map_err(|_| HSA_STATUS_ERROR_NULL)?;
        // SAFETY: both pointers start `size` bytes inside live
        // allocations (checked by `span`); `deps` holds `n` live signals
        // (NULL is allowed for none); the runtime validates the agents.
        check(unsafe {
            (self.rt.hsa_amd_memory_async_copy)(
                to,
                dst.2,
                from,
                src.2,
                size,
                n,
                if deps.is_empty() {
                    null()
                } else {
                    deps.as_ptr()
                },
                done.owned.handle,
            )
        })
    }

    /// `hsa_amd_ipc_memory_attach` of `len` bytes, mapped to `agents`
    /// (none: every GPU, as the runtime decides).
    pub fn ipc_attach(
        &self,
        handle: &IpcMemory,
        len: usize,
        agents: &[Agent],
    ) -> Result<IpcMapping<'_, 'r>, Status> {
        let n = u32::try_from(agents.len()).map_err(|_| HSA_STATUS_ERROR_NULL)?;
        let mut p = null_mut();
        // SAFETY: `handle` is one handle, `agents` holds `n` agents (NULL
        // when none), `p` is a valid out-pointer.
        check(unsafe {
            (self.rt.hsa_amd_ipc_memory_attach)(
                handle,
                len,
                n,
                if n == 0 { null() } else { agents.as_ptr() },
                &mut p,
            )
        })?;
        let p = NonNull::new(p).ok_or(HSA_STATUS_ERROR_NULL)?;
        Ok(IpcMapping {
            owned: Owned::new(self, p, detach_memory),
        })
    }

    /// `hsa_amd_pointer_info` of `ptr`: its type and allocation size (no
    /// agent list).
    pub(crate) fn pointer_info(&self, ptr: *const c_void) -> Result<(u32, usize), Status> {
        let mut info = PointerInfo {
            size: std::mem::size_of::<PointerInfo>() as u32,
            pointer_type: 0,
            agent_base_address: null_mut(),
            host_base_address: null_mut(),
            size_in_bytes: 0,
            user_data: null_mut(),
            agent_owner: Agent { handle: 0 },
            global_flags: 0,
        };
        // SAFETY: `info` is a live struct whose `size` says how much of it
        // the runtime may fill; no allocator and no agent list are asked
        // for (NULL out-pointers).
        check(unsafe {
            (self.rt.hsa_amd_pointer_info)(ptr, &mut info, None, null_mut(), null_mut())
        })?;
        Ok((info.pointer_type, info.size_in_bytes))
    }

    /// `hsa_signal_create` with `initial` and no consumer list.
    pub fn signal(&self, initial: SignalValue) -> Result<OwnedSignal<'_, 'r>, Status> {
        let mut s = Signal { handle: 0 };
        // SAFETY: no consumers (NULL with count 0); `s` is a valid out-pointer.
        check(unsafe { (self.rt.hsa_signal_create)(initial, 0, null(), &mut s) })?;
        Ok(OwnedSignal {
            owned: Owned::new(self, s, destroy_signal),
        })
    }
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        if self.open {
            // SAFETY: as in `shut_down`.
            unsafe { (self.rt.hsa_shut_down)() };
        }
    }
}

/// Not a real HSA status: a call reported success but returned NULL.
pub const HSA_STATUS_ERROR_NULL: Status = 0xFFFF_FFFF;

/// A runtime object released exactly once: by [`Owned::release`] (which
/// reports the status) or on drop.
#[derive(Debug)]
struct Owned<'s, 'r, H: Copy + std::fmt::Debug> {
    session: &'s Session<'r>,
    handle: H,
    /// # Safety
    ///
    /// Called once, with the handle the runtime gave this value.
    release_fn: unsafe fn(&Runtime, H) -> Status,
    live: bool,
}

impl<'s, 'r, H: Copy + std::fmt::Debug> Owned<'s, 'r, H> {
    fn new(
        session: &'s Session<'r>,
        handle: H,
        release_fn: unsafe fn(&Runtime, H) -> Status,
    ) -> Self {
        Self {
            session,
            handle,
            release_fn,
            live: true,
        }
    }

    fn release(mut self) -> Result<(), Status> {
        self.live = false;
        // SAFETY: the handle came from the runtime with this release
        // function; `live` is now false, so Drop does not release again.
        check(unsafe { (self.release_fn)(self.session.rt, self.handle) })
    }
}

impl<H: Copy + std::fmt::Debug> Drop for Owned<'_, '_, H> {
    fn drop(&mut self) {
        if self.live {
            // SAFETY: as in `release`; reached only when it was not called.
            unsafe { (self.release_fn)(self.session.rt, self.handle) };
        }
    }
}

/// # Safety
///
/// `p` came from `hsa_amd_memory_pool_allocate` and is not freed yet.
unsafe fn free_memory(rt: &Runtime, p: NonNull<c_void>) -> Status {
    // SAFETY: per the contract.
    unsafe { (rt.hsa_amd_memory_pool_free)(p.as_ptr()) }
}

/// # Safety
///
/// `q` came from `hsa_queue_create` and is not destroyed yet.
unsafe fn destroy_queue(rt: &Runtime, q: NonNull<Queue>) -> Status {
    // SAFETY: per the contract.
    unsafe { (rt.hsa_queue_destroy)(q.as_ptr()) }
}

/// # Safety
///
/// `s` came from `hsa_signal_create` and is not destroyed yet.
unsafe fn destroy_signal(rt: &Runtime, s: Signal) -> Status {
    // SAFETY: per the contract.
    unsafe { (rt.hsa_signal_destroy)(s) }
}

/// Memory from `hsa_amd_memory_pool_allocate`, freed on drop.
#[derive(Debug)]
pub struct Allocation<'s, 'r> {
    owned: Owned<'s, 'r, NonNull<c_void>>,
    size: usize,
}

impl Allocation<'_, '_> {
    /// `hsa_amd_agents_allow_access` for `agents`.
    pub fn allow_access(&self, agents: &[Agent]) -> Result<(), Status> {
        let n = u32::try_from(agents.len()).map_err(|_| HSA_STATUS_ERROR_NULL)?;
        // SAFETY: `agents` holds `n` handles; NULL flags (reserved); the
        // pointer came from pool_allocate and is not freed yet.
        check(unsafe {
            (self.owned.session.rt.hsa_amd_agents_allow_access)(
                n,
                agents.as_ptr(),
                null(),
                self.owned.handle.as_ptr(),
            )
        })
    }

    /// The allocation as bytes.
    ///
    /// # Safety
    ///
    /// The memory must be CPU-accessible (a system-memory pool), and no
    /// copy may be writing or reading it while the slice lives.
    pub unsafe fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: the handle is `size` bytes this value owns; CPU access
        // and the absence of concurrent copies are the caller's promise.
        unsafe {
            std::slice::from_raw_parts_mut(self.owned.handle.as_ptr().cast::<u8>(), self.size)
        }
    }

    /// Its size in bytes.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The address `offset` bytes in, when `len` bytes from there lie
    /// inside the allocation.
    fn span(&self, offset: usize, len: usize) -> Option<*mut c_void> {
        let end = offset.checked_add(len)?;
        (end <= self.size).then(|| {
            // SAFETY: `offset` <= `size`, so the result stays inside (or
            // one past the end of) the allocation.
            unsafe { self.owned.handle.as_ptr().cast::<u8>().add(offset) }.cast()
        })
    }

    /// `hsa_amd_memory_fill` of `count` 32-bit `value`s from `offset`
    /// bytes in (the runtime requires a 4-byte aligned address and
    /// refuses others); the 4 × `count` bytes must lie inside the
    /// allocation.
    pub fn fill(&self, offset: usize, value: u32, count: usize) -> Result<(), Status> {
        let ptr = count
            .checked_mul(4)
            .and_then(|len| self.span(offset, len))
            .ok_or(HSA_STATUS_ERROR_NULL)?;
        // SAFETY: the 4 × `count` bytes at `ptr` lie inside this live
        // allocation (checked by `span`); the runtime checks alignment.
        check(unsafe { (self.owned.session.rt.hsa_amd_memory_fill)(ptr, value, count) })
    }

    /// Fills the buffer with `byte` and reads it back; whether every byte
    /// came back.
    ///
    /// # Safety
    ///
    /// The memory must be CPU-accessible (a system-memory pool).
    pub unsafe fn fill_and_check(&mut self, byte: u8) -> bool {
        // SAFETY: the handle is `size` bytes this value owns; CPU access is
        // the caller's promise.
        let bytes = unsafe {
            std::slice::from_raw_parts_mut(self.owned.handle.as_ptr().cast::<u8>(), self.size)
        };
        bytes.fill(byte);
        bytes.iter().all(|b| *b == byte)
    }

    /// `hsa_amd_ipc_memory_create` for the whole allocation.
    pub fn ipc_create(&self) -> Result<IpcMemory, Status> {
        let mut h = IpcMemory::default();
        // SAFETY: the pointer and size are the allocation's; `h` is a valid
        // out-pointer for one handle.
        check(unsafe {
            (self.owned.session.rt.hsa_amd_ipc_memory_create)(
                self.owned.handle.as_ptr(),
                self.size,
                &mut h,
            )
        })?;
        Ok(h)
    }

    /// `hsa_amd_memory_pool_free`; its result.
    pub fn free(self) -> Result<(), Status> {
        self.owned.release()
    }
}

/// # Safety
///
/// `p` came from `hsa_amd_ipc_memory_attach` and is not detached yet.
unsafe fn detach_memory(rt: &Runtime, p: NonNull<c_void>) -> Status {
    // SAFETY: per the contract.
    unsafe { (rt.hsa_amd_ipc_memory_detach)(p.as_ptr()) }
}

/// Memory of another process attached with `hsa_amd_ipc_memory_attach`,
/// detached on drop.
#[derive(Debug)]
pub struct IpcMapping<'s, 'r> {
    owned: Owned<'s, 'r, NonNull<c_void>>,
}

impl IpcMapping<'_, '_> {
    /// `hsa_amd_pointer_info` of the mapping: its type and size.
    pub fn pointer_info(&self) -> Result<(u32, usize), Status> {
        self.owned.session.pointer_info(self.owned.handle.as_ptr())
    }

    /// `hsa_amd_ipc_memory_detach`; its result.
    pub fn detach(self) -> Result<(), Status> {
        self.owned.release()
    }
}

/// A queue from `hsa_queue_create`, destroyed on drop.
#[derive(Debug)]
pub struct OwnedQueue<'s, 'r> {
    owned: Owned<'s, 'r, NonNull<Queue>>,
}

/// What a created queue reports about itself (no addresses).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueFacts {
    /// `hsa_queue_type32_t`.
    pub queue_type: u32,
    /// `HSA_QUEUE_FEATURE_*` bits.
    pub features: u32,
    /// Ring size in packets.
    pub size: u32,
    /// Queue id.
    pub id: u64,
}

impl OwnedQueue<'_, '_> {
    /// The queue's type, features, size and id.
    pub fn facts(&self) -> QueueFacts {
        // SAFETY: the runtime's hsa_queue_t stays valid until destroy.
        let q = unsafe { self.owned.handle.as_ref() };
        QueueFacts {
            queue_type: q.queue_type,
            features: q.features,
            size: q.size,
            id: q.id,
        }
    }

    /// `hsa_queue_load_read_index_scacquire`.
    pub fn read_index(&self) -> u64 {
        // SAFETY: a live queue of this session.
        unsafe {
            (self.owned.session.rt.hsa_queue_load_read_index_scacquire)(self.owned.handle.as_ptr())
        }
    }

    /// `hsa_queue_load_write_index_scacquire`.
    pub fn write_index(&self) -> u64 {
        // SAFETY: a live queue of this session.
        unsafe {
            (self.owned.session.rt.hsa_queue_load_write_index_scacquire)(self.owned.handle.as_ptr())
        }
    }

    /// Submits one packet as a producer does: reserves a slot (waiting
    /// while the ring is full), writes the body, publishes the header
    /// with release order and rings the doorbell. The packet index.
    pub fn submit<P: AqlPacket>(&self, packet: &P) -> u64 {
        let rt = self.owned.session.rt;
        let q = self.owned.handle.as_ptr();
        // SAFETY: a live queue of this session.
        let index = unsafe { (rt.hsa_queue_add_write_index_scacq_screl)(q, 1) };
        // SAFETY: the runtime's hsa_queue_t stays valid until destroy.
        let queue = unsafe { self.owned.handle.as_ref() };
        let size = u64::from(queue.size.max(1));
        while index.wrapping_sub(self.read_index()) >= size {
            std::thread::yield_now();
        }
        // SAFETY: `P: AqlPacket` is 64 plain bytes without padding.
        let bytes: [u8; 64] = unsafe { std::mem::transmute_copy(packet) };
        // `index % size` < size, so the slot's 64 bytes lie in the ring.
        let slot = (index % size) as usize * 64;
        // SAFETY: the ring is `size` 64-byte slots at base_address; this
        // producer reserved slot `index`, which the packet processor has
        // released (read index caught up above). Bytes 2..64 first...
        unsafe {
            let base = queue.base_address.cast::<u8>().add(slot);
            std::ptr::copy_nonoverlapping(bytes.as_ptr().add(2), base.add(2), 62);
            // ...then the header, 2-byte aligned (slots are 64-byte
            // aligned), published with release order so the packet
            // processor never sees a valid header over an old body.
            AtomicU16::from_ptr(base.cast::<u16>()).store(packet.header(), Ordering::Release);
        }
        let value = SignalValue::try_from(index).unwrap_or(SignalValue::MAX);
        // SAFETY: the queue's doorbell is a live signal of the runtime.
        unsafe { (rt.hsa_signal_store_screlease)(queue.doorbell_signal, value) };
        index
    }

    /// `hsa_queue_destroy`; its result.
    pub fn destroy(self) -> Result<(), Status> {
        self.owned.release()
    }
}

/// A signal from `hsa_signal_create`, destroyed on drop.
#[derive(Debug)]
pub struct OwnedSignal<'s, 'r> {
    owned: Owned<'s, 'r, Signal>,
}

impl OwnedSignal<'_, '_> {
    /// `hsa_signal_store_screlease`.
    pub fn store(&self, value: SignalValue) {
        // SAFETY: a live signal of this session.
        unsafe { (self.owned.session.rt.hsa_signal_store_screlease)(self.owned.handle, value) }
    }

    /// `hsa_signal_load_scacquire`.
    pub fn load(&self) -> SignalValue {
        // SAFETY: a live signal of this session.
        unsafe { (self.owned.session.rt.hsa_signal_load_scacquire)(self.owned.handle) }
    }

    /// `hsa_signal_wait_scacquire` (blocked wait) until the condition
    /// holds or about `timeout_ticks` timestamp ticks have passed; the
    /// value observed last.
    pub fn wait(&self, condition: u32, compare: SignalValue, timeout_ticks: u64) -> SignalValue {
        // SAFETY: a live signal of this session; the runtime validates
        // the condition.
        unsafe {
            (self.owned.session.rt.hsa_signal_wait_scacquire)(
                self.owned.handle,
                condition,
                compare,
                timeout_ticks,
                HSA_WAIT_STATE_BLOCKED,
            )
        }
    }

    /// The runtime's handle (for a packet's signal fields).
    pub fn handle(&self) -> Signal {
        self.owned.handle
    }

    /// `hsa_signal_destroy`; its result.
    pub fn destroy(self) -> Result<(), Status> {
        self.owned.release()
    }
}

/// The frame of a ROCr client program: loads `library`, `hsa_init`
/// (printed), the thunk line on stderr when `thunk_line`, `walk`'s text
/// (it returns the text and whether every step went as it should),
/// `hsa_shut_down` (printed). The exit status: 0 when the walk and the
/// shut-down succeeded, 1 when not, 2 when the runtime could not be loaded
/// or initialised (`program` names the error line).
pub fn client_main(
    program: &str,
    library: &str,
    thunk_line: bool,
    walk: impl FnOnce(&Session<'_>) -> (String, bool),
) -> std::process::ExitCode {
    use std::process::ExitCode;
    let rt = match Runtime::load(library) {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("{program}: {e}");
            return ExitCode::from(2);
        }
    };
    let session = match Session::init(&rt) {
        Ok(s) => s,
        Err(status) => {
            println!("hsa_init: {status:#x}");
            return ExitCode::from(2);
        }
    };
    println!("hsa_init: SUCCESS");
    if thunk_line {
        crate::thunk::print_mapped();
    }
    let (text, ok) = walk(&session);
    print!("{text}");
    let status = session.shut_down();
    if status == HSA_STATUS_SUCCESS {
        println!("hsa_shut_down: SUCCESS");
    } else {
        println!("hsa_shut_down: {status:#x}");
    }
    if ok && status == HSA_STATUS_SUCCESS {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
