//! SPM (streaming performance monitor) and PC sampling.
//!
//! Both are ROCm-only kernel interfaces (`AMDKFD_IOC_RLC_SPM`, `0x84`, and
//! `AMDKFD_IOC_PC_SAMPLE`, `0x85`); upstream Linux has neither and answers
//! unknown KFD request numbers with `EINVAL` (`ENOTTY` from other
//! drivers). SPM acquire reports that as [`Error::NotImplementedByKernel`]
//! (`NOT_SUPPORTED`); PC sampling keeps the C library's errno tables, so
//! on upstream kernels its calls end in `INVALID_PARAMETER`.

use kfd_sys::kfd;
use kfd_sys::spm::SpmStream;
use kfd_sys::{pc_sample, spm, Errno};

/// Memory SPM data streams into (kfd-sys's [`kfd_sys::spm::SpmBuffer`]).
pub use kfd_sys::spm::SpmBuffer;

use crate::{Error, KernelOp, Perf, Result};

/// One PC-sampling configuration (`HsaPcSamplingInfo`, the same 40 bytes
/// as the kernel's `struct kfd_pc_sample_info`).
pub type PcSamplingInfo = kfd::kfd_pc_sample_info;

/// Where a capabilities query ([`Perf::pc_sampling_query`]) puts the
/// configurations.
#[derive(Debug)]
pub enum SampleInfos<'a> {
    /// Into these entries (as many as fit).
    Buffer(&'a mut [PcSamplingInfo]),
    /// Nowhere, telling the kernel the buffer holds this many (the C
    /// library's NULL buffer with a count).
    CountOnly(u32),
}

/// A PC-sampling session id (`HsaPcSamplingTraceId`); 0 is never valid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PcSamplingTraceId(pub u32);

/// The KFD ioctl minor version that introduced PC sampling.
pub const KFD_MINOR_MIN_PC_SAMPLING: u32 = 16;

/// What [`Perf::spm_set_dest_buffer`] reports about the previous buffer.
#[derive(Debug, Default)]
pub struct SpmBufferStatus {
    /// Bytes the kernel copied into the previous buffer.
    pub bytes_copied: u32,
    /// Whether samples were lost.
    pub has_data_loss: bool,
    /// Time left of the timeout, in ms.
    pub timeout_left_ms: u32,
    /// The previous buffer, which the kernel no longer writes (`None` if
    /// there was none).
    pub previous: Option<SpmBuffer>,
}

impl Perf {
    /// Maps a failed `AMDKFD_IOC_RLC_SPM` of `op` on `gpu_id`.
    fn spm_error(op: KernelOp, gpu_id: u32, errno: Errno) -> Error {
        match errno {
            Errno::ENOTTY => Error::NotImplementedByKernel(op),
            // Upstream amdkfd answers request numbers it does not know
            // with EINVAL; ROCm's SPM acquire of a valid GPU has no other
            // reason to.
            Errno::EINVAL if op == KernelOp::SpmAcquire && gpu_id != 0 => {
                Error::NotImplementedByKernel(op)
            }
            errno => Error::Kernel { op, errno },
        }
    }

    /// Takes exclusive use of SPM on `node` (`hsaKmtSPMAcquire`).
    pub fn spm_acquire(&self, node: u32) -> Result<()> {
        let gpu_id = self.node(node)?.gpu_id;
        spm::acquire(&self.file, gpu_id)
            .map_err(|e| Self::spm_error(KernelOp::SpmAcquire, gpu_id, e))
    }

    /// Gives SPM on `node` back (`hsaKmtSPMRelease`). The destination
    /// buffer, if one was set, is no longer written and is dropped.
    pub fn spm_release(&self, node: u32) -> Result<()> {
        let gpu_id = self.node(node)?.gpu_id;
        let mut streams = self.spm_streams();
        let r = match streams.get_mut(&gpu_id) {
            Some(stream) => stream.release().map(drop),
            None => spm::release(&self.file, gpu_id),
        };
        r.map_err(|e| Self::spm_error(KernelOp::SpmRelease, gpu_id, e))?;
        streams.remove(&gpu_id);
        Ok(())
    }

    /// Sets (or, with `None`, clears) the buffer SPM data of `node` streams
    /// into (`hsaKmtSPMSetDestBuffer`), waiting up to `timeout_ms` for the
    /// previous buffer to fill. Returns what happened to the previous
    /// buffer, and the buffer itself, which the kernel no longer writes.
    ///
    /// The kernel keeps writing into `dest` after this returns, so this
    /// sub-context holds it until it is replaced or SPM is released. Use
    /// [`SpmBuffer::zeroed`] for memory of its own, or (at the C border)
    /// `unsafe` [`SpmBuffer::from_raw`] for the caller's memory.
    ///
    /// The C library returns the raw ioctl result (-1) as its status on
    /// failure; this returns [`Error::NotImplementedByKernel`] where the
    /// kernel has no SPM and [`Error::Kernel`] otherwise.
    pub fn spm_set_dest_buffer(
        &self,
        node: u32,
        dest: Option<SpmBuffer>,
        timeout_ms: u32,
    ) -> Result<SpmBufferStatus> {
        let gpu_id = self.node(node)?.gpu_id;
        let mut streams = self.spm_streams();
        let stream = streams
            .entry(gpu_id)
            .or_insert_with(|| SpmStream::new(self.file.clone(), gpu_id));
        let (args, previous) = stream
            .set_dest_buffer(dest, timeout_ms)
            .map_err(|(e, _)| Self::spm_error(KernelOp::SpmSetDestBuffer, gpu_id, e))?;
        Ok(SpmBufferStatus {
            bytes_copied: args.bytes_copied,
            has_data_loss: args.has_data_loss != 0,
            timeout_left_ms: args.timeout,
            previous,
        })
    }

    /// Whether the kernel interface has PC sampling
    /// (`hsaKmtPcSamplingSupport`: KFD 1.16 or newer).
    pub fn pc_sampling_support(&self) -> Result<()> {
        self.require_kfd_minor(KFD_MINOR_MIN_PC_SAMPLING)
    }

    /// Lists the PC-sampling configurations `node` supports into `infos`
    /// (`hsaKmtPcSamplingQueryCapabilities`) and returns how many the
    /// kernel has. If they do not fit, [`Error::BufferTooSmall`] carries
    /// the count (`BUFFER_TOO_SMALL`).
    pub fn pc_sampling_query_capabilities(
        &self,
        node: u32,
        infos: &mut [PcSamplingInfo],
    ) -> Result<u32> {
        match self.pc_sampling_query(node, SampleInfos::Buffer(infos)) {
            (Ok(()), n) => Ok(n),
            (
                Err(Error::Kernel {
                    errno: Errno::ENOSPC,
                    ..
                }),
                needed,
            ) => Err(Error::BufferTooSmall { needed }),
            (Err(e), _) => Err(e),
        }
    }

    /// The capabilities query as the C library issues it: returns the
    /// result (a kernel refusal as [`Error::Kernel`], `ENOSPC` included)
    /// together with the `num_sample_info` the kernel left, which the C
    /// library reports whatever the result: the count needed with
    /// `ENOSPC`, the count it was told when the kernel refused without
    /// answering. The version and node checks come first (their failures
    /// report a count of 0).
    pub fn pc_sampling_query(&self, node: u32, infos: SampleInfos<'_>) -> (Result<()>, u32) {
        let checked = self
            .require_kfd_minor(KFD_MINOR_MIN_PC_SAMPLING)
            .and_then(|()| {
                let gpu_id = self.node(node)?.gpu_id;
                Ok(gpu_id)
            });
        let gpu_id = match checked {
            Ok(g) => g,
            Err(e) => return (Err(e), 0),
        };
        let op = KernelOp::PcSamplingQueryCapabilities;
        let (r, n) = match infos {
            SampleInfos::Buffer(b) => pc_sample::query_capabilities(&self.file, gpu_id, 0, b),
            SampleInfos::CountOnly(n) => {
                pc_sample::query_capabilities_count(&self.file, gpu_id, 0, n)
            }
        };
        (r.map_err(|errno| Error::Kernel { op, errno }), n)
    }

    /// Every PC-sampling configuration of `node`: asks for the count, then
    /// for that many.
    pub fn pc_sampling_capabilities(&self, node: u32) -> Result<Vec<PcSamplingInfo>> {
        let mut infos = Vec::new();
        loop {
            match self.pc_sampling_query_capabilities(node, &mut infos) {
                Ok(n) if n as usize <= infos.len() => {
                    infos.truncate(n as usize);
                    return Ok(infos);
                }
                Ok(n) | Err(Error::BufferTooSmall { needed: n }) => {
                    infos.resize(n as usize, PcSamplingInfo::default());
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Creates a PC-sampling session on `node` with configuration `info`
    /// (`hsaKmtPcSamplingCreate`). The kernel may adjust `info`.
    pub fn pc_sampling_create(
        &self,
        node: u32,
        info: &mut PcSamplingInfo,
    ) -> Result<PcSamplingTraceId> {
        let gpu_id = self.node(node)?.gpu_id;
        let op = KernelOp::PcSamplingCreate;
        let id = pc_sample::create(&self.file, gpu_id, info)
            .map_err(|errno| Error::Kernel { op, errno })?;
        Ok(PcSamplingTraceId(id))
    }

    fn pcs_trace_op(
        &self,
        node: u32,
        trace: PcSamplingTraceId,
        kop: u32,
        op: KernelOp,
    ) -> Result<()> {
        let gpu_id = self.node(node)?.gpu_id;
        pc_sample::trace_op(&self.file, gpu_id, kop, trace.0)
            .map_err(|errno| Error::Kernel { op, errno })
    }
    /// Destroys a PC-sampling session (`hsaKmtPcSamplingDestroy`),
    /// stopping it first (ignoring whether that succeeds). Trace id 0 →
    /// `INVALID_HANDLE`, checked before the node.
    pub fn pc_sampling_destroy(&self, node: u32, trace: PcSamplingTraceId) -> Result<()> {
        if trace.0 == 0 {
            return Err(Error::InvalidPcSamplingTrace);
        }
        self.node(node)?;
        let _ = self.pc_sampling_stop(node, trace);
        self.pcs_trace_op(
            node,
            trace,
            kfd::rocm::KFD_IOCTL_PCS_OP_DESTROY,
            KernelOp::PcSamplingDestroy,
        )
    }

    /// Starts a PC-sampling session (`hsaKmtPcSamplingStart`). Trace id 0
    /// → `INVALID_HANDLE`; already running → `KERNEL_ALREADY_OPENED`.
    pub fn pc_sampling_start(&self, node: u32, trace: PcSamplingTraceId) -> Result<()> {
        if trace.0 == 0 {
            return Err(Error::InvalidPcSamplingTrace);
        }
        self.pcs_trace_op(
            node,
            trace,
            kfd::rocm::KFD_IOCTL_PCS_OP_START,
            KernelOp::PcSamplingStart,
        )
    }

    /// Stops a PC-sampling session (`hsaKmtPcSamplingStop`). Trace id 0 →
    /// `INVALID_HANDLE`; already stopped → `KERNEL_ALREADY_OPENED`.
    pub fn pc_sampling_stop(&self, node: u32, trace: PcSamplingTraceId) -> Result<()> {
        if trace.0 == 0 {
            return Err(Error::InvalidPcSamplingTrace);
        }
        self.pcs_trace_op(
            node,
            trace,
            kfd::rocm::KFD_IOCTL_PCS_OP_STOP,
            KernelOp::PcSamplingStop,
        )
    }
}
