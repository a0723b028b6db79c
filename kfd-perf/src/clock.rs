//! Clock counters (`hsaKmtGetClockCounters`) and the GPU wall clock
//! frequency (`hsaKmtGetNodeWallclockFrequency`).

use std::time::{Duration, Instant};

use kfd_sys::kfd;

use crate::{Error, KernelOp, Perf, Result};

/// A correlated snapshot of the clocks (`HsaClockCounters`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ClockCounters {
    /// The GPU's clock counter (0 for a CPU node).
    pub gpu: u64,
    /// CPU clock counter: `CLOCK_MONOTONIC_RAW` in ns.
    pub cpu: u64,
    /// System clock counter: `CLOCK_BOOTTIME` in ns.
    pub system: u64,
    /// Frequency of the system clock counter in Hz.
    pub system_frequency_hz: u64,
}

impl From<kfd::kfd_ioctl_get_clock_counters_args> for ClockCounters {
    fn from(a: kfd::kfd_ioctl_get_clock_counters_args) -> Self {
        ClockCounters {
            gpu: a.gpu_clock_counter,
            cpu: a.cpu_clock_counter,
            system: a.system_clock_counter,
            system_frequency_hz: a.system_clock_freq,
        }
    }
}

/// How many samples [`Perf::clock_counters_precise`] takes on a GPU node.
pub const PRECISE_SAMPLES: usize = 4;

impl Perf {
    fn clock_sample(&self, gpu_id: u32) -> Result<kfd::kfd_ioctl_get_clock_counters_args> {
        let mut args = kfd::kfd_ioctl_get_clock_counters_args {
            gpu_id,
            ..Default::default()
        };
        self.file
            .ioctl_plain(kfd::AMDKFD_IOC_GET_CLOCK_COUNTERS, &mut args)
            .map_err(|errno| Error::Kernel {
                op: KernelOp::GetClockCounters,
                errno,
            })?;
        Ok(args)
    }

    /// One `AMDKFD_IOC_GET_CLOCK_COUNTERS` for `node` (the 5.2.3
    /// behaviour). Unknown node → `INVALID_NODE_UNIT`; kernel error →
    /// `ERROR`. A CPU node passes gpu_id 0, for which the kernel reports
    /// the CPU clocks and a GPU counter of 0.
    pub fn clock_counters(&self, node: u32) -> Result<ClockCounters> {
        let gpu_id = self.node(node)?.gpu_id;
        Ok(self.clock_sample(gpu_id)?.into())
    }

    /// Like [`Perf::clock_counters`], but on a GPU node takes
    /// `PRECISE_SAMPLES` (4) samples and keeps the one whose ioctl took the
    /// least time, as the newest C library does: the kernel reads the GPU
    /// counter before the CPU clocks, so a short call bounds how far apart
    /// the readings can be. All fields come from the same sample.
    pub fn clock_counters_precise(&self, node: u32) -> Result<ClockCounters> {
        let gpu_id = self.node(node)?.gpu_id;
        let samples = if gpu_id == 0 { 1 } else { PRECISE_SAMPLES };
        let mut best: Option<(Duration, kfd::kfd_ioctl_get_clock_counters_args)> = None;
        for _ in 0..samples {
            let t0 = Instant::now();
            let args = self.clock_sample(gpu_id)?;
            let elapsed = t0.elapsed();
            if best.map_or(true, |(b, _)| elapsed < b) {
                best = Some((elapsed, args));
            }
        }
        Ok(best.map(|(_, a)| a.into()).unwrap_or_default())
    }

    /// The frequency of `node`'s GPU wall clock in Hz
    /// (`hsaKmtGetNodeWallclockFrequency`): the topology's `WallClockKHz`
    /// times 1000. The C library indexes its node array without checking;
    /// here an unknown node is `INVALID_NODE_UNIT`.
    pub fn wallclock_frequency(&self, node: u32) -> Result<u64> {
        Ok(self.node(node)?.wall_clock_khz * 1000)
    }
}
