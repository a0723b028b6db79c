//! kfd-perf (in progress).
