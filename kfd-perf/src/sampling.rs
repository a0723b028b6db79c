//! SPM (streaming performance monitor) and PC sampling.
//!
//! Both are ROCm-only kernel interfaces (`AMDKFD_IOC_RLC_SPM`, `0x84`, and
//! `AMDKFD_IOC_PC_SAMPLE`, `0x85`); upstream Linux has neither and answers
//! unknown KFD request numbers with `EINVAL` (`ENOTTY` from other
//! drivers). SPM acquire reports that as [`Error::NotImplementedByKernel`]
//! (`NOT_SUPPORTED`); PC sampling keeps the C library's errno tables, so
//! on upstream kernels its calls end in `INVALID_PARAMETER`.

use kfd_sys::kfd;
use kfd_sys::Errno;

use crate::{Error, KernelOp, Perf, Result};

/// One PC-sampling configuration (`HsaPcSamplingInfo`, the same 40 bytes
/// as the kernel's `struct kfd_pc_sample_info`).
pub type PcSamplingInfo = kfd::kfd_pc_sample_info;

/// A PC-sampling session id (`HsaPcSamplingTraceId`); 0 is never valid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PcSamplingTraceId(pub u32);

/// The KFD ioctl minor version that introduced PC sampling.
pub const KFD_MINOR_MIN_PC_SAMPLING: u32 = 16;

/// What [`Perf::spm_set_dest_buffer`] reports about the previous buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SpmBufferStatus {
    /// Bytes the kernel copied into the previous buffer.
    pub bytes_copied: u32,
    /// Whether samples were lost.
    pub has_data_loss: bool,
    /// Time left of the timeout, in ms.
    pub timeout_left_ms: u32,
}

impl Perf {
    fn spm(&self, op: KernelOp, args: &mut kfd::kfd_ioctl_spm_args) -> Result<()> {
        // SAFETY: ACQUIRE and RELEASE carry no pointer (`dest_buf` is 0);
        // SET_DEST_BUF callers guarantee `dest_buf` per
        // `spm_set_dest_buffer`'s contract.
        let r = unsafe { self.file.ioctl(kfd::AMDKFD_IOC_RLC_SPM, args) };
        match r {
            Ok(_) => Ok(()),
            Err(Errno::ENOTTY) => Err(Error::NotImplementedByKernel(op)),
            // Upstream amdkfd answers request numbers it does not know
            // with EINVAL; ROCm's SPM acquire of a valid GPU has no other
            // reason to.
            Err(Errno::EINVAL) if op == KernelOp::SpmAcquire && args.gpu_id != 0 => {
                Err(Error::NotImplementedByKernel(op))
            }
            Err(errno) => Err(Error::Kernel { op, errno }),
        }
    }

    /// Takes exclusive use of SPM on `node` (`hsaKmtSPMAcquire`).
    pub fn spm_acquire(&self, node: u32) -> Result<()> {
        let gpu_id = self.node(node)?.gpu_id;
        let mut args = kfd::kfd_ioctl_spm_args {
            op: kfd::rocm::KFD_IOCTL_SPM_OP_ACQUIRE,
            gpu_id,
            ..Default::default()
        };
        self.spm(KernelOp::SpmAcquire, &mut args)
    }

    /// Gives SPM on `node` back (`hsaKmtSPMRelease`).
    pub fn spm_release(&self, node: u32) -> Result<()> {
        let gpu_id = self.node(node)?.gpu_id;
        let mut args = kfd::kfd_ioctl_spm_args {
            op: kfd::rocm::KFD_IOCTL_SPM_OP_RELEASE,
            gpu_id,
            ..Default::default()
        };
        self.spm(KernelOp::SpmRelease, &mut args)
    }

    /// Sets (or, with a null `dest`, clears) the buffer SPM data of `node`
    /// streams into (`hsaKmtSPMSetDestBuffer`), waiting up to `timeout_ms`
    /// for the previous buffer to fill. Returns what happened to the
    /// previous buffer.
    ///
    /// The C library returns the raw ioctl result (-1) as its status on
    /// failure; this returns [`Error::NotImplementedByKernel`] where the
    /// kernel has no SPM and [`Error::Kernel`] otherwise.
    ///
    /// # Safety
    ///
    /// `dest` must be null or valid for writes of `size` bytes from now
    /// until it is replaced by another call, or SPM is released: the
    /// kernel keeps writing into it after this call returns.
    pub unsafe fn spm_set_dest_buffer(
        &self,
        node: u32,
        dest: *mut u8,
        size: u32,
        timeout_ms: u32,
    ) -> Result<SpmBufferStatus> {
        let gpu_id = self.node(node)?.gpu_id;
        let mut args = kfd::kfd_ioctl_spm_args {
            dest_buf: dest as u64,
            buf_size: size,
            op: kfd::rocm::KFD_IOCTL_SPM_OP_SET_DEST_BUF,
            timeout: timeout_ms,
            gpu_id,
            ..Default::default()
        };
        self.spm(KernelOp::SpmSetDestBuffer, &mut args)?;
        Ok(SpmBufferStatus {
            bytes_copied: args.bytes_copied,
            has_data_loss: args.has_data_loss != 0,
            timeout_left_ms: args.timeout,
        })
    }

    /// Whether the kernel interface has PC sampling
    /// (`hsaKmtPcSamplingSupport`: KFD 1.16 or newer).
    pub fn pc_sampling_support(&self) -> Result<()> {
        self.require_kfd_minor(KFD_MINOR_MIN_PC_SAMPLING)
    }

    /// Issues `AMDKFD_IOC_PC_SAMPLE`.
    ///
    /// # Safety
    ///
    /// `args.sample_info_ptr` must be 0 or point at `args.num_sample_info`
    /// entries, valid and exclusively borrowed for the call.
    unsafe fn pc_sample(
        &self,
        args: &mut kfd::kfd_ioctl_pc_sample_args,
    ) -> std::result::Result<(), Errno> {
        // SAFETY: forwarded contract.
        unsafe { self.file.ioctl(kfd::AMDKFD_IOC_PC_SAMPLE, args) }.map(drop)
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
        self.require_kfd_minor(KFD_MINOR_MIN_PC_SAMPLING)?;
        let gpu_id = self.node(node)?.gpu_id;
        let mut args = kfd::kfd_ioctl_pc_sample_args {
            sample_info_ptr: if infos.is_empty() {
                0
            } else {
                infos.as_mut_ptr() as u64
            },
            num_sample_info: u32::try_from(infos.len())
                .map_err(|_| Error::InvalidArgument("too many sample infos"))?,
            op: kfd::rocm::KFD_IOCTL_PCS_OP_QUERY_CAPABILITIES,
            gpu_id,
            ..Default::default()
        };
        let op = KernelOp::PcSamplingQueryCapabilities;
        // SAFETY: `sample_info_ptr` is 0 for an empty slice, else `infos`,
        // exclusively borrowed, `num_sample_info` entries.
        match unsafe { self.pc_sample(&mut args) } {
            Ok(()) => Ok(args.num_sample_info),
            Err(Errno::ENOSPC) => Err(Error::BufferTooSmall {
                needed: args.num_sample_info,
            }),
            Err(errno) => Err(Error::Kernel { op, errno }),
        }
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
        let mut args = kfd::kfd_ioctl_pc_sample_args {
            sample_info_ptr: info as *mut PcSamplingInfo as u64,
            num_sample_info: 1,
            op: kfd::rocm::KFD_IOCTL_PCS_OP_CREATE,
            gpu_id,
            trace_id: 0,
            ..Default::default()
        };
        let op = KernelOp::PcSamplingCreate;
        // SAFETY: `sample_info_ptr` points at `info`, one entry, exclusively
        // borrowed for the call.
        unsafe { self.pc_sample(&mut args) }.map_err(|errno| Error::Kernel { op, errno })?;
        Ok(PcSamplingTraceId(args.trace_id))
    }

    fn pcs_trace_op(
        &self,
        node: u32,
        trace: PcSamplingTraceId,
        kop: u32,
        op: KernelOp,
    ) -> Result<()> {
        let gpu_id = self.node(node)?.gpu_id;
        let mut args = kfd::kfd_ioctl_pc_sample_args {
            op: kop,
            gpu_id,
            trace_id: trace.0,
            ..Default::default()
        };
        // SAFETY: no sample info pointer (0).
        unsafe { self.pc_sample(&mut args) }.map_err(|errno| Error::Kernel { op, errno })
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
