//! Placeholder: the kernel process model.
