//! Finding a usable CUDA device: the driver library, NVRTC, a device, a context. Each
//! missing piece is a clear reason, never a panic (cudarc loads libraries lazily and panics
//! when one is absent, so every probe is guarded).

use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaStream};

/// An opened device: context, the one stream all work goes to, and what it is.
pub struct Device {
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    pub name: String,
    pub arch: (i32, i32),
    pub ordinal: usize,
}

fn guarded<T>(what: &str, f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown failure".into());
            Err(format!("{what}: {msg}"))
        }
    }
}

static PREFERRED_UUID: std::sync::Mutex<Option<[u8; 16]>> = std::sync::Mutex::new(None);

/// Asks for the CUDA device with this UUID (the GPU that draws the window) when the device is
/// first opened, unless `ARGON_CUDA_DEVICE` names one.
pub fn prefer_uuid(uuid: [u8; 16]) {
    *PREFERRED_UUID.lock().unwrap_or_else(|e| e.into_inner()) = Some(uuid);
}

/// The device ordinal to use: `ARGON_CUDA_DEVICE`, else the device with the preferred UUID
/// (see [`prefer_uuid`]), else 0.
pub fn chosen_ordinal() -> Result<usize, String> {
    if let Ok(v) = std::env::var("ARGON_CUDA_DEVICE") {
        return v.trim().parse().map_err(|_| format!("ARGON_CUDA_DEVICE={v} is not a device number (0, 1, ...)"));
    }
    let Some(want) = *PREFERRED_UUID.lock().unwrap_or_else(|e| e.into_inner()) else { return Ok(0) };
    let count = CudaContext::device_count().map_err(|e| format!("the CUDA driver did not start: {e}"))?;
    for k in 0..count.max(0) {
        let uuid = cudarc::driver::result::device::get(k).and_then(cudarc::driver::result::device::get_uuid);
        if let Ok(u) = uuid
            && u.bytes.iter().zip(want).all(|(a, b)| *a as u8 == b)
        {
            return Ok(k as usize);
        }
    }
    Ok(0)
}

/// The process's device (opened once and shared by every CUDA backend, so compiled kernels
/// are shared too), or why there is none.
pub fn open() -> Result<Arc<Device>, String> {
    static SHARED: std::sync::Mutex<Option<Arc<Device>>> = std::sync::Mutex::new(None);
    let mut slot = SHARED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(d) = slot.as_ref() {
        return Ok(d.clone());
    }
    let d = Arc::new(open_new()?);
    *slot = Some(d.clone());
    Ok(d)
}

fn open_new() -> Result<Device, String> {
    // SAFETY: only probes whether the libraries can be loaded.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err("no NVIDIA driver library (libcuda.so) was found".into());
    }
    // SAFETY: as above.
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return Err("the NVIDIA driver is present but NVRTC (libnvrtc.so, part of the CUDA toolkit) was not found; \
                    install it or add its folder to LD_LIBRARY_PATH"
            .into());
    }
    guarded("opening the CUDA device", || {
        let ordinal = chosen_ordinal()?;
        let count = CudaContext::device_count().map_err(|e| format!("the CUDA driver did not start: {e}"))?;
        if count <= 0 {
            return Err("the CUDA driver found no device".into());
        }
        if ordinal >= count as usize {
            return Err(format!("ARGON_CUDA_DEVICE={ordinal} but there are only {count} CUDA devices"));
        }
        let ctx = CudaContext::new(ordinal).map_err(|e| format!("could not create a CUDA context: {e}"))?;
        // One stream does all the work in order, so cudarc's cross-stream event tracking is
        // not needed (it would add two events per launch).
        // SAFETY: no other stream uses these allocations.
        unsafe { ctx.disable_event_tracking() };
        let name = ctx.name().unwrap_or_else(|_| "CUDA device".into());
        let arch = ctx.compute_capability().map_err(|e| format!("could not read the compute capability: {e}"))?;
        let stream = ctx.default_stream();
        Ok(Device { ctx, stream, name, arch, ordinal })
    })
}
