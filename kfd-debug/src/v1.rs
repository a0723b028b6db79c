//! The v1 debugger entry points (`hsaKmtDbgRegister`, `hsaKmtDbgUnregister`,
//! `hsaKmtDbgWavefrontControl`, `hsaKmtDbgAddressWatch`) and 5.2.3's
//! `hsaKmtGetKernelDebugTrapVersionInfo`.
//!
//! They issue requests current kernels no longer implement: the four
//! deprecated `AMDKFD_IOC_DBG_*` requests (`0x0D..=0x10`) return `EPERM`,
//! and the thunk-private `AMDKFD_IOC_DBG_TRAP` at `0x82` of interface 1.8
//! is not a command at all (`ENOTTY`/`EINVAL`). The C library maps each of
//! those to `ERROR`; here they end in [`Error::Kernel`], which the C
//! border maps to `ERROR` too. Node validation comes first, as in C.

use crate::{Debug, Error, Result};
use kfd_sys::dbg_trap;
use kfd_sys::kfd;

/// `MAX_ALLOWED_NUM_POINTS`: the most watch points one v1 address-watch
/// call accepts.
pub const MAX_ALLOWED_NUM_POINTS: usize = 100;

/// One watch point of [`Debug::dbg_address_watch`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AddressWatchPoint {
    /// What accesses trigger it: the C API's `HSA_DBG_WATCH_MODE` value,
    /// passed to the v1 kernel as it is.
    pub mode: u32,
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
    /// passed on, as are `operand` and `mode` (the C API's
    /// `HSA_DBG_WAVEOP` and `HSA_DBG_WAVEMODE` values).
    pub fn dbg_wavefront_control(
        &self,
        node: u32,
        operand: u32,
        mode: u32,
        trap_id: u32,
        message_value: u32,
        memory_va: u64,
    ) -> Result<()> {
        self.require_primary()?;
        let gpu_id = self.node_gpu_id(node)?;
        // Payload after the fixed part, as the v1 kernel reads it:
        // operand, mode, trap id, the 8-byte wave message, the VA.
        let mut payload = Vec::with_capacity(28);
        payload.extend_from_slice(&operand.to_ne_bytes());
        payload.extend_from_slice(&mode.to_ne_bytes());
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
    /// `events` is the C caller's `WatchEvent` array: `None` for a NULL
    /// array, otherwise one event address per point (NULL entries are 0),
    /// appended to the payload after the masks exactly as the C library
    /// does; the v1 kernel receives them as opaque values. A length other
    /// than `points.len()` is [`Error::InvalidArgument`].
    ///
    /// The C library reads `WatchMask[0]` even for zero points; here zero
    /// points always carry the single zero mask.
    pub fn dbg_address_watch(
        &self,
        node: u32,
        points: &[AddressWatchPoint],
        events: Option<&[u64]>,
    ) -> Result<()> {
        self.require_primary()?;
        let gpu_id = self.node_gpu_id(node)?;
        if points.len() > MAX_ALLOWED_NUM_POINTS {
            return Err(Error::TooManyWatchPoints {
                requested: points.len(),
                max: MAX_ALLOWED_NUM_POINTS,
            });
        }
        let events = events.unwrap_or(&[]);
        if !events.is_empty() && events.len() != points.len() {
            return Err(Error::InvalidArgument(
                "one watch event per watch point, or none",
            ));
        }
        self.v1_content_ioctl(gpu_id, address_watch_payload(points, events), false)
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

/// The variable part of a v1 address-watch request: the count, every
/// mode, every address, then either one mask per point or a single zero
/// mask when the first mask is 0, then the event addresses (none when the
/// caller passed no event array). This is the C library's layout.
fn address_watch_payload(points: &[AddressWatchPoint], events: &[u64]) -> Vec<u8> {
    let masks = if points.first().is_some_and(|p| p.mask > 0) {
        points.len()
    } else {
        1
    };
    let mut payload = Vec::with_capacity(4 + points.len() * 12 + (masks + events.len()) * 8);
    payload.extend_from_slice(&(points.len() as u32).to_ne_bytes());
    for p in points {
        payload.extend_from_slice(&p.mode.to_ne_bytes());
    }
    for p in points {
        payload.extend_from_slice(&p.address.to_ne_bytes());
    }
    if masks == points.len() {
        for p in points {
            payload.extend_from_slice(&p.mask.to_ne_bytes());
        }
    } else {
        payload.extend_from_slice(&0u64.to_ne_bytes());
    }
    for e in events {
        payload.extend_from_slice(&e.to_ne_bytes());
    }
    payload
}

#[cfg(test)]
mod tests {
    use super::*;
    use hsakmt_sys::newest::HSA_DBG_WATCH_ALL;

    fn point(address: u64, mask: u64) -> AddressWatchPoint {
        AddressWatchPoint {
            mode: HSA_DBG_WATCH_ALL.0,
            address,
            mask,
        }
    }

    #[test]
    fn payload_layout_matches_the_c_library() {
        // One point with a mask and no event array: 4 + 4 + 8 + 8.
        let p = address_watch_payload(&[point(0x1000, u64::MAX)], &[]);
        assert_eq!(p.len(), 24);
        // The same with an event array: one 8-byte address more (5.2.3's
        // buffer: 48 bytes with the 16-byte fixed part).
        let p = address_watch_payload(&[point(0x1000, u64::MAX)], &[0]);
        assert_eq!(p.len(), 32);
        assert_eq!(&p[24..], &0u64.to_ne_bytes());
        // Two points, first mask 0: a single zero mask, then two events.
        let p = address_watch_payload(&[point(0x1000, 0), point(0x2000, 7)], &[0xa0, 0xb0]);
        assert_eq!(p.len(), 4 + 2 * 4 + 2 * 8 + 8 + 2 * 8);
        assert_eq!(&p[0..4], &2u32.to_ne_bytes());
        assert_eq!(&p[12..20], &0x1000u64.to_ne_bytes());
        assert_eq!(&p[28..36], &0u64.to_ne_bytes());
        assert_eq!(&p[36..44], &0xa0u64.to_ne_bytes());
        assert_eq!(&p[44..52], &0xb0u64.to_ne_bytes());
        // Two points with masks: one per point.
        let p = address_watch_payload(&[point(0x1000, 3), point(0x2000, 7)], &[]);
        assert_eq!(&p[28..36], &3u64.to_ne_bytes());
        assert_eq!(&p[36..44], &7u64.to_ne_bytes());
    }
}
