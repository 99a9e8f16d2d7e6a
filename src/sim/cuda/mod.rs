//! The CUDA backend.
pub mod source;
