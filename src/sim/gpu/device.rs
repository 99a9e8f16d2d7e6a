//! Finding a wgpu adapter for the simulation and opening a device on it with the adapter's
//! own limits (storage bindings of 2 GiB on a datacentre GPU where the defaults allow
//! 128 MiB), without panicking: every failure is a sentence the backend choice can show.
//! Or taking a device someone else opened (`SimDevice::shared`: the app's renderer, so the
//! simulation's positions are drawn where they are): whoever opens such a device asks for
//! what the simulation needs too, the adapter's limits and [`wanted_features`]. Mixed and
//! double precision need 64-bit floats in shaders (`SHADER_F64`: Vulkan on most desktop GPUs
//! and lavapipe; never Metal): [`f64_missing`] says why a device cannot run them, and
//! `ARGON_WGPU_NO_F64=1` (or [`SimDevice::hide_f64`], for tests) makes one act as if its
//! adapter had none.

use std::sync::{Arc, Mutex};

use crate::physics::real::Precision;
use crate::sim::SimError;

/// Storage buffers one kernel binds at most (common.wgsl and flow.wgsl in group 0, the flow
/// kernels' four in group 1; mixed precision binds one more, the f32 positions); an adapter
/// allowing fewer cannot run it.
pub const STORAGE_BINDINGS: u32 = 27;

/// Workgroup memory the f64 kernels' largest entry point may take (double precision's list
/// build stages positions at 32 bytes each and their atoms apart: 17,748 bytes at most
/// today, which `shaders.rs`'s tests check against this): a little more than WebGPU's
/// default 16 KiB, less than any desktop adapter with f64 allows (lavapipe 32 KiB, NVIDIA
/// 48 KiB).
pub const F64_WORKGROUP_BYTES: u32 = 18 * 1024;

/// Why a device cannot run mixed or double precision without 64-bit floats.
pub const NO_F64: &str = "this GPU's wgpu adapter has no 64-bit floats (SHADER_F64)";

/// `ARGON_WGPU_NO_F64` is set: act as if no adapter had 64-bit floats.
fn f64_hidden() -> bool {
    std::env::var_os("ARGON_WGPU_NO_F64").is_some_and(|v| !v.is_empty() && v != "0")
}

/// Why an adapter (or a device opened on it) with `features` and `limits` cannot run the f64
/// kernels of mixed and double precision; None when it can.
pub fn f64_missing(features: wgpu::Features, limits: &wgpu::Limits) -> Option<String> {
    if !features.contains(wgpu::Features::SHADER_F64) || f64_hidden() {
        return Some(NO_F64.into());
    }
    if limits.max_compute_workgroup_storage_size < F64_WORKGROUP_BYTES {
        return Some(format!(
            "this GPU allows {} bytes of workgroup memory; the f64 kernels need {F64_WORKGROUP_BYTES}",
            limits.max_compute_workgroup_storage_size
        ));
    }
    if limits.max_storage_buffers_per_shader_stage < STORAGE_BINDINGS + 1 {
        return Some(format!(
            "this GPU allows {} storage buffers per shader stage; mixed precision binds {}",
            limits.max_storage_buffers_per_shader_stage,
            STORAGE_BINDINGS + 1
        ));
    }
    None
}

/// A device for the simulation and what it runs on.
#[derive(Debug)]
pub struct SimDevice {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub info: wgpu::AdapterInfo,
    /// Software rasteriser or CPU emulation (lavapipe, WARP, SwiftShader).
    pub software: bool,
    /// Why the device cannot run mixed and double precision (no SHADER_F64); None when it can.
    f64_missing: Option<String>,
    /// The first error wgpu reported outside an error scope (an out-of-memory buffer, a lost
    /// device), which the next read-back turns into a `SimError` instead of a panic.
    pub failed: Arc<Mutex<Option<String>>>,
    /// The error handler is installed (at once on a device of our own; on a shared one when
    /// the first simulation starts on it, so a renderer alone keeps wgpu's own handling).
    watching: std::sync::Once,
}

/// The features the simulation wants of `adapter` (64-bit floats in shaders for mixed and
/// double precision, unless `ARGON_WGPU_NO_F64` hides them; timestamp queries when
/// `ARGON_WGPU_PROFILE` asks for kernel times), where the adapter has them: a device opened
/// by someone else for the simulation to share must be opened with these.
pub fn wanted_features(adapter: &wgpu::Adapter) -> wgpu::Features {
    let mut f = super::profile::features(adapter);
    if adapter.features().contains(wgpu::Features::SHADER_F64) && !f64_hidden() {
        f |= wgpu::Features::SHADER_F64;
    }
    f
}

/// The adapter [`open`] would take, without opening a device (for choosing a backend).
pub struct Probe {
    pub info: wgpu::AdapterInfo,
    /// A software adapter (lavapipe, WARP).
    pub software: bool,
    /// Why it cannot run mixed and double precision ([`f64_missing`]); None when it can.
    pub f64_missing: Option<String>,
}

/// What [`open`] would take.
pub fn probe() -> Result<Probe, SimError> {
    let adapter = best_adapter()?;
    let info = adapter.get_info();
    let software = is_software(&info);
    let f64_missing = f64_missing(adapter.features(), &adapter.limits());
    Ok(Probe { info, software, f64_missing })
}

/// Why the wgpu backend cannot run mixed and double precision on `gpu` (a device someone else
/// opened), or on the adapter it would open for itself when none is given; None when it can.
/// No adapter at all: the reason is that (the backend cannot run anything then).
pub fn f64_missing_on(gpu: Option<&Arc<SimDevice>>) -> Option<String> {
    match gpu {
        Some(d) => d.f64_missing.clone(),
        None => match probe() {
            Ok(p) => p.f64_missing,
            Err(e) => Some(e.to_string()),
        },
    }
}

fn is_software(info: &wgpu::AdapterInfo) -> bool {
    matches!(info.device_type, wgpu::DeviceType::Cpu)
}

fn best_adapter() -> Result<wgpu::Adapter, SimError> {
    let _init = init_lock();
    let instance = headless_instance();
    pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
        power_preference: wgpu::PowerPreference::HighPerformance,
        compatible_surface: None,
        force_fallback_adapter: false,
        apply_limit_buckets: false,
    }))
    .map_err(|e| SimError::Device(format!("no wgpu adapter: {e}")))
}

/// The process's one wgpu instance without a window (the simulation's own devices and the
/// offscreen renderer's are opened from it): with a new instance for every device, NVIDIA's
/// Vulkan driver stopped loading after some dozens in one process ("vulkan drivers/libraries
/// could not be loaded": seen on the H200 in a test binary that opens a device per test; the
/// app opens one at each switch to wgpu). Devices are still opened and dropped one by one.
pub fn headless_instance() -> wgpu::Instance {
    static INSTANCE: std::sync::OnceLock<wgpu::Instance> = std::sync::OnceLock::new();
    INSTANCE
        .get_or_init(|| {
            let mut desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
            if std::env::var_os("WGPU_BACKEND").is_none() {
                desc.backends = wgpu::Backends::PRIMARY;
            }
            unvalidated_indirect(&mut desc);
            wgpu::Instance::new(desc)
        })
        .clone()
}

/// Held while a Vulkan instance, adapter or device is created (here, by the window and by
/// the offscreen renderer): NVIDIA's Linux driver can crash when threads create them at the
/// same moment (gfx-rs/wgpu#5930; seen here as a segfault of a test binary whose tests open
/// devices in parallel). A poisoned lock still serialises.
pub fn init_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// Every instance whose devices may run the simulation (its own, the window's, the offscreen
/// renderer's): wgpu would check each indirect dispatch's counts with a compute pass of its
/// own before it (a dispatch and barriers more for each of the rebuild's, every step, taken
/// or not); `plan` writes counts the engine has checked against the adapter's limits, and
/// nothing else here dispatches or draws indirectly. `WGPU_VALIDATION_INDIRECT_CALL` still
/// turns the check on.
pub fn unvalidated_indirect(desc: &mut wgpu::InstanceDescriptor) {
    if std::env::var_os("WGPU_VALIDATION_INDIRECT_CALL").is_none() {
        desc.flags.remove(wgpu::InstanceFlags::VALIDATION_INDIRECT_CALL);
    }
}

/// Refuses a device whose limits cannot bind the simulation's kernels.
fn check_limits(name: &str, limits: &wgpu::Limits) -> Result<(), SimError> {
    if limits.max_storage_buffers_per_shader_stage < STORAGE_BINDINGS {
        return Err(SimError::Device(format!(
            "{name} allows {} storage buffers per shader stage; the simulation's kernels bind {STORAGE_BINDINGS}",
            limits.max_storage_buffers_per_shader_stage
        )));
    }
    Ok(())
}

impl SimDevice {
    /// Submits `enc` after copying each (buffer, bytes) into a mappable buffer, waits, and
    /// returns the bytes; an error wgpu reported meanwhile is returned instead.
    pub fn read_back(
        &self,
        mut enc: wgpu::CommandEncoder,
        what: &[(&wgpu::Buffer, u64)],
    ) -> Result<Vec<Vec<u8>>, SimError> {
        let staging: Vec<_> = what
            .iter()
            .map(|&(src, bytes)| {
                let size = bytes.max(4).next_multiple_of(4);
                let dst = self.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("readback"),
                    size,
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                });
                if bytes > 0 {
                    enc.copy_buffer_to_buffer(src, 0, &dst, 0, size.min(src.size()));
                }
                (dst, bytes)
            })
            .collect();
        self.queue.submit([enc.finish()]);
        for (dst, _) in &staging {
            dst.slice(..).map_async(wgpu::MapMode::Read, |_| {});
        }
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| SimError::Device(format!("waiting for the GPU ({}): {e}", self.info.name)))?;
        if let Some(e) = self.take_error() {
            return Err(SimError::Device(format!("the GPU ({}) reported: {e}", self.info.name)));
        }
        staging
            .iter()
            .map(|(dst, bytes)| {
                let v = dst
                    .slice(..)
                    .get_mapped_range()
                    .map_err(|e| SimError::Device(format!("reading back from {}: {e}", self.info.name)))?
                    [..*bytes as usize]
                    .to_vec();
                dst.unmap();
                Ok(v)
            })
            .collect()
    }

    /// Why this device cannot run mixed and double precision; None when it can.
    pub fn f64_missing(&self) -> Option<&str> {
        self.f64_missing.as_deref()
    }

    /// Acts from now on as if the adapter had no 64-bit floats (what `ARGON_WGPU_NO_F64` does
    /// for every device of the process), so a test checks that path where they exist.
    pub fn hide_f64(&mut self) {
        self.f64_missing = Some(NO_F64.into());
    }

    /// The precisions the wgpu backend runs on this device, each with why not where it does not
    /// (the app's precision menu greys those out with the reason).
    pub fn precisions(&self) -> Vec<(Precision, Option<String>)> {
        Precision::ALL.iter().map(|&p| (p, super::unsupported_precision(p, self.f64_missing.as_deref()))).collect()
    }

    /// The error wgpu reported since the last call, if any.
    pub fn take_error(&self) -> Option<String> {
        self.failed.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    /// The simulation on a device opened by someone else (the renderer's), described by its
    /// adapter's `info`. That device must have been opened with the adapter's limits and
    /// [`wanted_features`]; one that cannot bind the kernels is refused.
    pub fn shared(device: wgpu::Device, queue: wgpu::Queue, info: wgpu::AdapterInfo) -> Result<SimDevice, SimError> {
        check_limits(&info.name, &device.limits())?;
        let software = is_software(&info);
        let f64_missing = f64_missing(device.features(), &device.limits());
        Ok(SimDevice {
            device,
            queue,
            info,
            software,
            f64_missing,
            failed: Arc::new(Mutex::new(None)),
            watching: std::sync::Once::new(),
        })
    }

    /// Turns errors wgpu reports outside an error scope into `failed` (read by the next
    /// read-back) instead of a panic; printed too, since on a shared device they may be the
    /// renderer's.
    pub fn watch_errors(&self) {
        self.watching.call_once(|| {
            let slot = self.failed.clone();
            self.device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
                eprintln!("argon-sandbox: the GPU reported: {e}");
                let mut s = slot.lock().unwrap_or_else(|e| e.into_inner());
                if s.is_none() {
                    *s = Some(e.to_string());
                }
            }));
        });
    }

    /// "GPU, Vulkan: NVIDIA H200" or "software, Vulkan: llvmpipe ...".
    pub fn describe(&self) -> String {
        let kind = if self.software { "software" } else { "GPU" };
        let api = match self.info.backend {
            wgpu::Backend::Vulkan => "Vulkan".to_string(),
            wgpu::Backend::Metal => "Metal".to_string(),
            wgpu::Backend::Dx12 => "DX12".to_string(),
            wgpu::Backend::Gl => "OpenGL".to_string(),
            wgpu::Backend::BrowserWebGpu => "WebGPU".to_string(),
            other => other.to_string(),
        };
        format!("{kind}, {api}: {}", self.info.name)
    }
}

/// Opens the best adapter (a hardware GPU before a software one) with its own limits.
pub fn open() -> Result<SimDevice, SimError> {
    let adapter = best_adapter()?;
    let info = adapter.get_info();
    let limits = adapter.limits();
    check_limits(&info.name, &limits)?;
    let init = init_lock();
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("argon-sandbox simulation"),
        required_features: wanted_features(&adapter),
        required_limits: limits,
        ..Default::default()
    }))
    .map_err(|e| SimError::Device(format!("opening {} failed: {e}", info.name)))?;
    drop(init);
    let dev = SimDevice::shared(device, queue, info)?;
    dev.watch_errors();
    Ok(dev)
}
