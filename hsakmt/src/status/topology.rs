//! Topology: `hsaKmtAcquireSystemProperties`, `hsaKmtGetNode*`.

use kfd_topology::TopologyError;

use super::ToStatus;
use crate::border::{st, Status};
use crate::profile::Profile;

/// A node id the snapshot does not have, in a query or in a link, is
/// `INVALID_NODE_UNIT`; every failure to read the tree is `ERROR`.
impl ToStatus for TopologyError {
    fn status_in(&self, _: &Profile) -> Status {
        match self {
            TopologyError::InvalidNode { .. } | TopologyError::LinkNodeFrom { .. } => {
                st::INVALID_NODE_UNIT
            }
            _ => st::ERROR,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    #[test]
    fn unknown_nodes_are_invalid_node_unit_and_the_rest_error() {
        let p = crate::generation::PROFILE;
        let node = TopologyError::InvalidNode {
            node: 7,
            num_nodes: 2,
        };
        assert_eq!(node.status_in(p), st::INVALID_NODE_UNIT);
        let link = TopologyError::LinkNodeFrom {
            path: PathBuf::from("x"),
            expected: 1,
            found: 2,
        };
        assert_eq!(link.status_in(p), st::INVALID_NODE_UNIT);
        let empty = TopologyError::Empty {
            path: PathBuf::from("x"),
        };
        assert_eq!(empty.status_in(p), st::ERROR);
    }
}
