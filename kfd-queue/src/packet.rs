//! Typed AQL packets: barrier-AND, barrier-OR and kernel dispatch, built
//! from the `kfd_sys::hsa` layouts and the signals and buffers they name.

use kfd_event::{Condition, Signal};
use kfd_fmm::Buffer;
use kfd_sys::hsa::{
    hsa_amd_barrier_value_packet_t, hsa_amd_vendor_packet_header_t, hsa_barrier_and_packet_t,
    hsa_kernel_dispatch_packet_t, HSA_AMD_PACKET_TYPE_BARRIER_VALUE, HSA_FENCE_SCOPE_SYSTEM,
    HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS, HSA_PACKET_HEADER_BARRIER,
    HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE, HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE,
    HSA_PACKET_HEADER_TYPE, HSA_PACKET_TYPE_BARRIER_AND, HSA_PACKET_TYPE_BARRIER_OR,
    HSA_PACKET_TYPE_KERNEL_DISPATCH, HSA_PACKET_TYPE_VENDOR_SPECIFIC,
};
use zerocopy::IntoBytes;

use crate::error::QueueError;

/// Bytes per AQL packet.
pub const AQL_PACKET_SIZE: u64 = 64;

/// Dependency signals a barrier packet holds.
pub const BARRIER_DEPENDENCIES: usize = 5;

/// Alignment the CP needs of a kernel descriptor.
const KERNEL_DESCRIPTOR_ALIGN: u64 = 64;

/// One AQL packet ready for [`crate::AqlQueue::submit`]: the 64 bytes of
/// a `kfd_sys::hsa` packet, whose first 32 bits (header and setup) the
/// queue publishes last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AqlPacket {
    bytes: [u8; 64],
}

impl AqlPacket {
    fn new(bytes: &[u8], packet_type: u16, barrier: bool) -> AqlPacket {
        let mut p = AqlPacket { bytes: [0; 64] };
        p.bytes.copy_from_slice(bytes);
        let header = (packet_type << HSA_PACKET_HEADER_TYPE)
            | (u16::from(barrier) << HSA_PACKET_HEADER_BARRIER)
            | (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE)
            | (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE);
        p.bytes[..2].copy_from_slice(&header.to_le_bytes());
        p
    }

    /// A barrier-AND packet: completes once every signal of `deps` is 0,
    /// then decrements `completion`. At most [`BARRIER_DEPENDENCIES`]
    /// signals ([`QueueError::TooManyDependencies`] otherwise). The
    /// barrier bit is set (later packets wait for it); fences are
    /// system scope.
    pub fn barrier_and(
        deps: &[&Signal],
        completion: Option<&Signal>,
    ) -> Result<AqlPacket, QueueError> {
        Self::barrier(HSA_PACKET_TYPE_BARRIER_AND, deps, completion)
    }

    /// A barrier-OR packet: completes once any signal of `deps` is 0
    /// (at once without dependencies); otherwise as
    /// [`AqlPacket::barrier_and`].
    pub fn barrier_or(
        deps: &[&Signal],
        completion: Option<&Signal>,
    ) -> Result<AqlPacket, QueueError> {
        Self::barrier(HSA_PACKET_TYPE_BARRIER_OR, deps, completion)
    }

    /// An AMD barrier-value packet (vendor format 2): completes once
    /// `(value(signal) & mask)` meets `condition` against `value`, then
    /// decrements `completion`. Barrier bit set, system-scope fences.
    pub fn barrier_value(
        signal: &Signal,
        condition: Condition,
        value: i64,
        mask: i64,
        completion: Option<&Signal>,
    ) -> AqlPacket {
        let p = hsa_amd_barrier_value_packet_t {
            header: hsa_amd_vendor_packet_header_t {
                AmdFormat: HSA_AMD_PACKET_TYPE_BARRIER_VALUE,
                ..Default::default()
            },
            signal: signal.handle().handle,
            value,
            mask,
            cond: condition.raw(),
            completion_signal: completion.map_or(0, |s| s.handle().handle),
            ..Default::default()
        };
        Self::new(p.as_bytes(), HSA_PACKET_TYPE_VENDOR_SPECIFIC, true)
    }

    fn barrier(
        packet_type: u16,
        deps: &[&Signal],
        completion: Option<&Signal>,
    ) -> Result<AqlPacket, QueueError> {
        if deps.len() > BARRIER_DEPENDENCIES {
            return Err(QueueError::TooManyDependencies(deps.len()));
        }
        let mut p = hsa_barrier_and_packet_t {
            completion_signal: completion.map_or(0, |s| s.handle().handle),
            ..Default::default()
        };
        for (slot, dep) in p.dep_signal.iter_mut().zip(deps) {
            *slot = dep.handle().handle;
        }
        Ok(Self::new(p.as_bytes(), packet_type, true))
    }

    /// A packet from its 64 bytes as they go into the ring, header
    /// included: for the kinds the builders do not make (vendor packets
    /// such as barrier-value). The GPU decides what it means; a packet it
    /// cannot execute stops the queue ([`QueueError::QueueStopped`] from
    /// [`crate::AqlQueue::wait`]).
    pub fn from_bytes(bytes: [u8; 64]) -> AqlPacket {
        AqlPacket { bytes }
    }

    /// The packet with its barrier bit set or cleared: with it set, the
    /// packet starts only after every earlier packet of the queue
    /// completed.
    pub fn with_barrier(mut self, barrier: bool) -> AqlPacket {
        let bit = 1u16 << HSA_PACKET_HEADER_BARRIER;
        let header = if barrier {
            self.header() | bit
        } else {
            self.header() & !bit
        };
        self.bytes[..2].copy_from_slice(&header.to_le_bytes());
        self
    }

    /// The 16-bit header (type, barrier bit, fence scopes).
    pub fn header(&self) -> u16 {
        u16::from_le_bytes([self.bytes[0], self.bytes[1]])
    }

    /// The packet type (`HSA_PACKET_TYPE_*`).
    pub fn packet_type(&self) -> u16 {
        self.header() & 0xff
    }

    /// The first 32 bits as the queue publishes them: the header and the
    /// 16 bits after it (the dispatch setup, reserved in barriers).
    pub fn header_word(&self) -> u32 {
        u32::from_le_bytes([self.bytes[0], self.bytes[1], self.bytes[2], self.bytes[3]])
    }

    /// The packet's 64 bytes.
    pub fn as_bytes(&self) -> &[u8; 64] {
        &self.bytes
    }
}

/// A kernel dispatch packet under construction: the kernel (descriptor
/// in a code buffer), grid and workgroup sizes, kernel arguments,
/// segment sizes and the completion signal.
#[derive(Debug, Clone, Copy)]
pub struct KernelDispatch {
    p: hsa_kernel_dispatch_packet_t,
    dims: u16,
}

impl KernelDispatch {
    /// A one-dimensional dispatch of one workgroup of one work-item of
    /// the kernel whose descriptor (code object v3+ kernel descriptor or
    /// `amd_kernel_code_t`) lies at `offset` in `code`.
    ///
    /// [`QueueError::BadKernelObject`] if the descriptor is not inside
    /// the buffer or not 64-byte aligned.
    pub fn new(code: &Buffer, offset: u64) -> Result<KernelDispatch, QueueError> {
        let inside = offset
            .checked_add(KERNEL_DESCRIPTOR_ALIGN)
            .is_some_and(|end| end <= code.size());
        let at = code.addr().wrapping_add(offset);
        if !inside || at % KERNEL_DESCRIPTOR_ALIGN != 0 {
            return Err(QueueError::BadKernelObject(at));
        }
        let p = hsa_kernel_dispatch_packet_t {
            workgroup_size_x: 1,
            workgroup_size_y: 1,
            workgroup_size_z: 1,
            grid_size_x: 1,
            grid_size_y: 1,
            grid_size_z: 1,
            kernel_object: at,
            ..Default::default()
        };
        Ok(KernelDispatch { p, dims: 1 })
    }

    /// Grid size (work-items) and workgroup size per dimension; 1 to 3
    /// dimensions. Every size must be at least 1 and a workgroup at most
    /// 1024 work-items ([`QueueError::BadDispatchSize`] otherwise).
    pub fn size(mut self, grid: &[u32], workgroup: &[u16]) -> Result<KernelDispatch, QueueError> {
        let dims = grid.len();
        let items: u64 = workgroup.iter().map(|w| u64::from(*w)).product();
        if !(1..=3).contains(&dims)
            || workgroup.len() != dims
            || grid.contains(&0)
            || workgroup.contains(&0)
            || items > 1024
        {
            return Err(QueueError::BadDispatchSize {
                grid: grid.to_vec(),
                workgroup: workgroup.to_vec(),
            });
        }
        let g = |i: usize| grid.get(i).copied().unwrap_or(1);
        let w = |i: usize| workgroup.get(i).copied().unwrap_or(1);
        (self.p.grid_size_x, self.p.grid_size_y, self.p.grid_size_z) = (g(0), g(1), g(2));
        (
            self.p.workgroup_size_x,
            self.p.workgroup_size_y,
            self.p.workgroup_size_z,
        ) = (w(0), w(1), w(2));
        self.dims = dims as u16;
        Ok(self)
    }

    /// The kernel arguments: the start of `kernargs`.
    pub fn kernargs(mut self, kernargs: &Buffer) -> KernelDispatch {
        self.p.kernarg_address = kernargs.addr();
        self
    }

    /// Group (LDS) bytes per workgroup and private bytes per work-item
    /// beyond what the descriptor declares.
    pub fn segments(mut self, group: u32, private: u32) -> KernelDispatch {
        self.p.group_segment_size = group;
        self.p.private_segment_size = private;
        self
    }

    /// The signal decremented when the dispatch completes.
    pub fn completion(mut self, signal: &Signal) -> KernelDispatch {
        self.p.completion_signal = signal.handle().handle;
        self
    }

    /// The packet (barrier bit clear, system-scope fences).
    pub fn build(mut self) -> AqlPacket {
        self.p.setup = self.dims << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS;
        AqlPacket::new(self.p.as_bytes(), HSA_PACKET_TYPE_KERNEL_DISPATCH, false)
    }
}
