//! kfd-topology: typed snapshots of the KFD sysfs topology.
