//! Opens the KFD through a driver, prints its ioctl interface version and
//! issues one typed request, `AMDKFD_IOC_GET_PROCESS_APERTURES`, printing
//! each GPU's apertures; then reads each GPU's clock counters.
//!
//! The driver is a simulated machine (kfd-sim) unless `--real` is given,
//! in which case it is this machine's `/dev/kfd`.
//!
//! ```text
//! cargo run -p kfd-sys --example version            # simulated MI210
//! cargo run -p kfd-sys --example version -- mi300x  # another preset
//! cargo run -p kfd-sys --example version -- --real  # this machine's GPUs
//! ```

use std::sync::Arc;

use kfd_sys::{kfd, DeviceFile, Driver, NixDriver};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let arg = std::env::args().nth(1).unwrap_or_else(|| "mi210".into());
    let driver: Arc<dyn Driver> = if arg == "--real" {
        Arc::new(NixDriver::new())
    } else {
        println!("driver: kfd-sim preset {arg}");
        Arc::new(kfd_sim::Sim::preset(&arg)?)
    };
    let kfd = DeviceFile::open_kfd(driver)?;
    let (major, minor) = kfd.kfd_version()?;
    println!("KFD ioctl interface {major}.{minor}");

    // A typed request: the argument type is fixed by the request constant,
    // and `ioctl_plain` is safe because the struct carries no pointers.
    let mut apertures = kfd::kfd_ioctl_get_process_apertures_args::default();
    kfd.ioctl_plain(kfd::AMDKFD_IOC_GET_PROCESS_APERTURES, &mut apertures)?;
    let gpus = &apertures.process_apertures[..apertures.num_of_nodes as usize];
    let limit = if gpus.len() == kfd::NUM_OF_SUPPORTED_GPUS as usize {
        " (the deprecated request's limit; _NEW reports every GPU)"
    } else {
        ""
    };
    println!("GET_PROCESS_APERTURES: {} GPU(s){limit}", gpus.len());
    for a in gpus {
        println!(
            "  gpu_id {:5}: GPUVM {:#014x}..{:#014x}  LDS {:#x}  scratch {:#x}",
            a.gpu_id, a.gpuvm_base, a.gpuvm_limit, a.lds_base, a.scratch_base
        );
    }

    for a in gpus {
        let mut clocks = kfd::kfd_ioctl_get_clock_counters_args {
            gpu_id: a.gpu_id,
            ..Default::default()
        };
        kfd.ioctl_plain(kfd::AMDKFD_IOC_GET_CLOCK_COUNTERS, &mut clocks)?;
        println!(
            "  gpu_id {:5}: GPU clock {}, system clock {} ns at {} Hz",
            a.gpu_id,
            clocks.gpu_clock_counter,
            clocks.system_clock_counter,
            clocks.system_clock_freq
        );
    }
    Ok(())
}
