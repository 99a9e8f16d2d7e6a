//! The wgpu compute backend: the simulation as WGSL compute shaders on any GPU wgpu drives
//! (Vulkan, Metal, DX12), meeting the same physics contract as the CPU and CUDA backends.

pub mod shaders;
