//! The v1 debugger entry points (`hsaKmtDbgRegister`, `hsaKmtDbgUnregister`,
//! `hsaKmtDbgWavefrontControl`, `hsaKmtDbgAddressWatch`) and 5.2.3's
//! `hsaKmtGetKernelDebugTrapVersionInfo`.
//!
//! They issue requests current kernels no longer implement: the four
//! deprecated `AMDKFD_IOC_DBG_*` requests (`0x0D..=0x10`) return `EPERM`,
//! and the thunk-private `AMDKFD_IOC_DBG_TRAP` at `0x82` of interface 1.8
//! is not a command at all (`ENOTTY`/`EINVAL`). The C library maps each of
//! those to `HSAKMT_STATUS_ERROR`; here they end in [`Error::Kernel`],
//! which has the same status. Node validation comes first, as in C.

use crate::{Debug, Error, Result};
use kfd_sys::dbg_trap;
use kfd_sys::hsakmt::current::{HSA_DBG_WATCH_MODE, HSA_DBG_WAVEMODE, HSA_DBG_WAVEOP};
use kfd_sys::kfd;

/// `MAX_ALLOWED_NUM_POINTS`: the most watch points one v1 address-watch
/// call accepts.
pub const MAX_ALLOWED_NUM_POINTS: usize = 100;

/// One watch point of [`Debug::dbg_address_watch`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AddressWatchPoint {
    /// What accesses trigger it.
    pub mode: HSA_DBG_WATCH_MODE,
    /// The watched address.
    pub address: u64,
    /// Address mask; 0 means "no mask".
    pub mask: u64,
}

impl Debug {
    /// `hsaKmtDbgRegister`: registers `node` with the v1 debugger.
    pub fn dbg_register(&self, node: u32) -> Result<()> {
        self.require_primary()?;
        let gpu_id = self.node_gpu_id(node)?;
        let mut args = kfd::kfd_ioctl_dbg_register_args { gpu_id, pad: 0 };
        self.file
            .ioctl_plain(kfd::AMDKFD_IOC_DBG_REGISTER_DEPRECATED, &mut args)
            .map_err(|errno| Error::Kernel {
                op: "DBG_REGISTER",
                errno,
            })?;
        Ok(())
    }

    /// `hsaKmtDbgUnregister`: unregisters `node` from the v1 debugger.
    pub fn dbg_unregister(&self, node: u32) -> Result<()> {
        self.require_primary()?;
        let gpu_id = self.node_gpu_id(node)?;
        let mut args = kfd::kfd_ioctl_dbg_unregister_args { gpu_id, pad: 0 };
        self.file
            .ioctl_plain(kfd::AMDKFD_IOC_DBG_UNREGISTER_DEPRECATED, &mut args)
            .map_err(|errno| Error::Kernel {
                op: "DBG_UNREGISTER",
                errno,
            })?;
        Ok(())
    }

    /// `hsaKmtDbgWavefrontControl`: sends a wave operation through the v1
    /// interface. `message_value` is the Gen2 wave message word and
    /// `memory_va` the message's host-accessible data address, both only
    /// passed on.
    pub fn dbg_wavefront_control(
        &self,
        node: u32,
        operand: HSA_DBG_WAVEOP,
        mode: HSA_DBG_WAVEMODE,
        trap_id: u32,
        message_value: u32,
        memory_va: u64,
    ) -> Result<()> {
        self.require_primary()?;
        let gpu_id = self.node_gpu_id(node)?;
        // Payload after the fixed part, as the v1 kernel reads it:
        // operand, mode, trap id, the 8-byte wave message, the VA.
        let mut payload = Vec::with_capacity(28);
        payload.extend_from_slice(&operand.0.to_ne_bytes());
        payload.extend_from_slice(&mode.0.to_ne_bytes());
        payload.extend_from_slice(&trap_id.to_ne_bytes());
        payload.extend_from_slice(&message_value.to_ne_bytes());
        payload.extend_from_slice(&0u32.to_ne_bytes());
        payload.extend_from_slice(&memory_va.to_ne_bytes());
        self.v1_content_ioctl(gpu_id, payload, true)
    }

    /// `hsaKmtDbgAddressWatch`: sets watch points through the v1
    /// interface. More than [`MAX_ALLOWED_NUM_POINTS`] points give
    /// [`Error::TooManyWatchPoints`] (checked after the node, as in C).
    ///
    /// The C library reads `WatchMask[0]` even for zero points and takes
    /// an array of event pointers; this takes no events.
    pub fn dbg_address_watch(&self, node: u32, points: &[AddressWatchPoint]) -> Result<()> {
        self.require_primary()?;
        let gpu_id = self.node_gpu_id(node)?;
        if points.len() > MAX_ALLOWED_NUM_POINTS {
            return Err(Error::TooManyWatchPoints {
                requested: points.len(),
                max: MAX_ALLOWED_NUM_POINTS,
            });
        }
        // Count, modes, addresses, then either one mask per point or a
        // single zero mask when the first mask is 0 (the C layout).
        let mut payload = Vec::new();
        payload.extend_from_slice(&(points.len() as u32).to_ne_bytes());
        for p in points {
            payload.extend_from_slice(&p.mode.0.to_ne_bytes());
        }
        for p in points {
            payload.extend_from_slice(&p.address.to_ne_bytes());
        }
        if points.first().is_some_and(|p| p.mask > 0) {
            for p in points {
                payload.extend_from_slice(&p.mask.to_ne_bytes());
            }
        } else {
            payload.extend_from_slice(&0u64.to_ne_bytes());
        }
        self.v1_content_ioctl(gpu_id, payload, false)
    }

    /// Issues a v1 request whose fixed part points at `payload`.
    fn v1_content_ioctl(&self, gpu_id: u32, payload: Vec<u8>, wave: bool) -> Result<()> {
        let (r, op) = if wave {
            let r = dbg_trap::v1_wave_control(&self.file, gpu_id, &payload);
            (r, "DBG_WAVE_CONTROL")
        } else {
            let r = dbg_trap::v1_address_watch(&self.file, gpu_id, &payload);
            (r, "DBG_ADDRESS_WATCH")
        };
        r.map_err(|errno| Error::Kernel { op, errno })
    }

    /// `hsaKmtGetKernelDebugTrapVersionInfo` (5.2.3 only): the debugger
    /// interface version through the thunk-private `AMDKFD_IOC_DBG_TRAP`
    /// (`0x82`, operation `GET_VERSION`). Current kernels do not have that
    /// request, so this fails with [`Error::Kernel`] there, and 5.2.3's
    /// runtime enable, which depends on it, reports `NOT_SUPPORTED`.
    pub fn kernel_debug_trap_version(&self) -> Result<(u32, u32)> {
        self.require_primary()?;
        dbg_trap::rocm_5_2_get_version(&self.file, std::process::id()).map_err(|errno| {
            Error::Kernel {
                op: "DBG_TRAP(0x82) GET_VERSION",
                errno,
            }
        })
    }
}
