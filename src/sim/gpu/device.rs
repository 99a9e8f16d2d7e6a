//! Finding a wgpu adapter for the simulation and opening a device on it with the adapter's
//! own limits (storage bindings of 2 GiB on a datacentre GPU where the defaults allow
//! 128 MiB), without panicking: every failure is a sentence the backend choice can show.

use std::sync::{Arc, Mutex};

use crate::sim::SimError;

/// Storage buffers one kernel binds at most (common.wgsl and flow.wgsl in group 0, the flow
/// kernels' four in group 1); an adapter allowing fewer cannot run it.
pub const STORAGE_BINDINGS: u32 = 27;

/// A device for the simulation and what it runs on.
pub struct SimDevice {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub info: wgpu::AdapterInfo,
    /// Software rasteriser or CPU emulation (lavapipe, WARP, SwiftShader).
    pub software: bool,
    /// The first error wgpu reported outside an error scope (an out-of-memory buffer, a lost
    /// device), which the next read-back turns into a `SimError` instead of a panic.
    pub failed: Arc<Mutex<Option<String>>>,
}

impl SimDevice {
    /// The error wgpu reported since the last call, if any.
    pub fn take_error(&self) -> Option<String> {
        self.failed.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    /// "GPU, Vulkan: NVIDIA H200" or "software, Vulkan: llvmpipe ...".
    pub fn describe(&self) -> String {
        let kind = if self.software { "software" } else { "GPU" };
        format!("{kind}, {}: {}", self.info.backend, self.info.name)
    }
}

/// Opens the best adapter (a hardware GPU before a software one) with its own limits.
pub fn open() -> Result<SimDevice, SimError> {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
    if std::env::var_os("WGPU_BACKEND").is_none() {
        desc.backends = wgpu::Backends::PRIMARY;
    }
    // wgpu would check every indirect dispatch's counts with a compute pass of its own before
    // it (a dispatch and barriers more for each of the rebuild's, every step, taken or not);
    // `plan` writes counts the engine has checked against the adapter's limits.
    if std::env::var_os("WGPU_VALIDATION_INDIRECT_CALL").is_none() {
        desc.flags.remove(wgpu::InstanceFlags::VALIDATION_INDIRECT_CALL);
    }
    let instance = wgpu::Instance::new(desc);
    let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
        power_preference: wgpu::PowerPreference::HighPerformance,
        compatible_surface: None,
        force_fallback_adapter: false,
        apply_limit_buckets: false,
    }))
    .map_err(|e| SimError::Device(format!("no wgpu adapter: {e}")))?;
    let info = adapter.get_info();
    let limits = adapter.limits();
    if limits.max_storage_buffers_per_shader_stage < STORAGE_BINDINGS {
        return Err(SimError::Device(format!(
            "{} allows {} storage buffers per shader stage; the simulation's kernels bind {STORAGE_BINDINGS}",
            info.name, limits.max_storage_buffers_per_shader_stage
        )));
    }
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("argon-sandbox simulation"),
        required_features: super::profile::features(&adapter),
        required_limits: limits,
        ..Default::default()
    }))
    .map_err(|e| SimError::Device(format!("opening {} failed: {e}", info.name)))?;
    let software = matches!(info.device_type, wgpu::DeviceType::Cpu);
    let failed = Arc::new(Mutex::new(None));
    let slot = failed.clone();
    device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
        let mut s = slot.lock().unwrap_or_else(|e| e.into_inner());
        if s.is_none() {
            *s = Some(e.to_string());
        }
    }));
    Ok(SimDevice { device, queue, info, software, failed })
}
