//! The one place where the builds differ: which generation of the C types
//! the exports take (`abi`), the conversions into them, and which
//! [`Profile`] of behaviours they follow.
//!
//! `abi` is `hsakmt_sys::rocm_5_2`, `hsakmt_sys::rocm_6_2` or
//! `hsakmt_sys::newest`, selected by the Cargo feature of the same name
//! (`rocm-5.2`, `rocm-6.2`, `newest`). Every export is written once
//! against `abi::...`; the conversions of [`crate::convert`] for the same
//! generation are re-exported here; behaviour differences are the
//! switches of [`PROFILE`].

#[cfg(feature = "newest")]
pub use hsakmt_sys::newest as abi;
#[cfg(feature = "rocm-5.2")]
pub use hsakmt_sys::rocm_5_2 as abi;
#[cfg(feature = "rocm-6.2")]
pub use hsakmt_sys::rocm_6_2 as abi;

/// The conversions into this build's C structs (`node_properties`,
/// `store_queue_info`, `map_flags`, ...).
#[cfg(feature = "newest")]
pub use crate::convert::newest::*;
/// The conversions into this build's C structs (`node_properties`,
/// `store_queue_info`, `map_flags`, ...).
#[cfg(feature = "rocm-5.2")]
pub use crate::convert::rocm_5_2::*;
/// The conversions into this build's C structs (`node_properties`,
/// `store_queue_info`, `map_flags`, ...).
#[cfg(feature = "rocm-6.2")]
pub use crate::convert::rocm_6_2::*;

use crate::profile::Profile;

/// The behaviour profile of this build.
#[cfg(feature = "newest")]
pub const PROFILE: &Profile = &crate::profile::NEWEST;
/// The behaviour profile of this build.
#[cfg(feature = "rocm-5.2")]
pub const PROFILE: &Profile = &crate::profile::ROCM_5_2;
/// The behaviour profile of this build.
#[cfg(feature = "rocm-6.2")]
pub const PROFILE: &Profile = &crate::profile::ROCM_6_2;

/// The options the primary context is opened with under `profile`
/// (secondary contexts start from them too; kfd-context turns off what a
/// secondary may not use): the environment knobs, the profile's memory
/// and queue rules, and the SVM API only where the generation has it.
pub fn context_options(profile: &Profile) -> kfd_context::ContextOptions {
    let mut o = kfd_context::ContextOptions::from_env();
    if !profile.border.svm_api {
        o.svm_api = false;
        o.fmm.svm_api_enabled = false;
    }
    o.keep_after_close = profile.border.keep_after_close;
    o.fmm.accept_unknown_addresses = true;
    o.fmm.rules = profile.fmm;
    o.queues.rules = profile.queues;
    o.debug = profile.debug;
    o.queues.svm_save_area = true;
    o
}

/// [`context_options`] of this build's profile.
pub fn primary_options() -> kfd_context::ContextOptions {
    context_options(PROFILE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::{NEWEST, ROCM_5_2, ROCM_6_2};

    #[test]
    fn context_options_follow_the_profile() {
        for p in [&ROCM_5_2, &ROCM_6_2, &NEWEST] {
            let o = context_options(p);
            assert_eq!(o.fmm.rules, p.fmm, "{}", p.name);
            assert_eq!(o.queues.rules, p.queues, "{}", p.name);
            assert_eq!(o.debug, p.debug, "{}", p.name);
        }
        let old = context_options(&ROCM_5_2);
        assert!(!old.svm_api && !old.fmm.svm_api_enabled);
    }
}
