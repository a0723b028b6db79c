//! The error type of topology snapshots.

use std::io;
use std::path::PathBuf;

use kfd_sys::Errno;

/// Why a topology snapshot (or a look-up in one) failed.
///
/// Every variant that comes from a file names the file; parse errors also
/// name the 1-based line.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TopologyError {
    /// A file or directory could not be opened or read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What the system call said.
        #[source]
        source: io::Error,
    },

    /// A file that must have content is empty.
    #[error("{}: file is empty", path.display())]
    Empty {
        /// The file.
        path: PathBuf,
    },

    /// A line is not of the expected form (`key value`, a decimal number,
    /// a comma-separated list, ...).
    #[error("{}:{line}: {reason}", path.display())]
    Malformed {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong with the line.
        reason: String,
    },

    /// A value does not fit the field it fills (for example a 16-bit
    /// `device_id` above 65535).
    #[error("{}:{line}: {key} = {value} does not fit in {bits} bits", path.display())]
    OutOfRange {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// The key.
        key: String,
        /// The value read.
        value: u64,
        /// Width of the field in bits.
        bits: u32,
    },

    /// A count (of nodes, banks, caches or links) is larger than any real
    /// topology has; reading it would try millions of files.
    #[error("{}: {key} = {value} exceeds the limit of {limit}", path.display())]
    AbsurdCount {
        /// The file the count comes from.
        path: PathBuf,
        /// The key (or a description of the count).
        key: String,
        /// The count.
        value: u64,
        /// The largest accepted count.
        limit: u64,
    },

    /// A key that must be present is missing.
    #[error("{}: missing key `{key}`", path.display())]
    MissingKey {
        /// The file.
        path: PathBuf,
        /// The key.
        key: String,
    },

    /// A GPU node's `drm_render_minor` is outside 128..=255.
    #[error("{}: drm_render_minor {minor} is outside 128..=255", path.display())]
    RenderMinorOutOfRange {
        /// The node's `properties` file.
        path: PathBuf,
        /// The minor read.
        minor: u64,
    },

    /// Opening a GPU node's render node failed with an errno other than
    /// ENOENT or EPERM (those drop the node instead).
    #[error("opening /dev/dri/renderD{minor} for sysfs node {sysfs_node} failed: {errno}")]
    RenderNode {
        /// The sysfs node id.
        sysfs_node: u32,
        /// The render minor.
        minor: u32,
        /// The errno.
        errno: Errno,
    },

    /// An io link's `node_from` is not the node it is listed under.
    #[error("{}: node_from is {found}, expected {expected}", path.display())]
    LinkNodeFrom {
        /// The link's `properties` file.
        path: PathBuf,
        /// The sysfs node the link is listed under.
        expected: u64,
        /// The `node_from` value.
        found: u64,
    },

    /// A CPU node reports no caches and none were found below
    /// `sys/devices/system/node/node<N>` (or `sys/devices/system/cpu`).
    #[error("no CPU cache information found for node {node}")]
    NoCpuCaches {
        /// The (user) node id.
        node: u32,
    },

    /// `HSA_OVERRIDE_GFX_VERSION` is not `major.minor.stepping` with
    /// major < 64 and minor, stepping < 256.
    #[error("HSA_OVERRIDE_GFX_VERSION {value:?} is invalid")]
    InvalidGfxOverride {
        /// The value given.
        value: String,
    },

    /// A node has SIMDs but neither its device id nor `gfx_target_version`
    /// gives a gfx version (the C library fails an assert here).
    #[error("node {node} (device id {device_id:#06x}) has SIMDs but no known gfx version; HSA_OVERRIDE_GFX_VERSION may be needed")]
    UnknownGfxVersion {
        /// The (user) node id.
        node: u32,
        /// The PCI device id.
        device_id: u32,
    },

    /// `generation_id` changed during every attempt to read the tree.
    #[error("the topology kept changing: generation_id differed in all {attempts} attempts")]
    Unstable {
        /// How many times the tree was read.
        attempts: u32,
    },

    /// A node id is not below the number of nodes of the snapshot.
    #[error("node {node} does not exist (the snapshot has {num_nodes} nodes)")]
    InvalidNode {
        /// The id asked for.
        node: u32,
        /// How many nodes the snapshot has.
        num_nodes: u32,
    },
}

impl TopologyError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: io::Error) -> Self {
        TopologyError::Io {
            path: path.into(),
            source,
        }
    }
}
