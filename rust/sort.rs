//! Sorting helpers shared by the kernels.
