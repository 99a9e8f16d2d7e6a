//! Zero-copy position streaming from CUDA to wgpu through Vulkan external memory (the recipe
//! in DESIGN.md): exportable Vulkan buffers (opaque fd) made with the raw ash device under
//! wgpu, handed to wgpu as buffers the atom shader reads, and imported into the CUDA context
//! the backend runs in, so its publish kernel writes positions straight into them. The CUDA
//! device must be the Vulkan device (same UUID). Anything missing is a reason, and the
//! caller stays on host staging.
//!
//! Or, when the wgpu backend runs on the renderer's own device, plain wgpu storage buffers
//! on that device (`Interop::same_device`): its publish kernel writes them and the atom
//! shader reads them, with no host traffic and nothing external.
//!
//! Owns the shared buffers and their slot protocol (`slots.rs`); knows nothing of the UI.

pub mod slots;

use std::sync::Arc;

use ash::vk;

pub use self::slots::{SharedSlots, SlotFrame, SlotMemory};

/// Slots in flight: one on display, one newest, one being written.
pub const SLOTS: usize = 3;

/// The shared buffers of one allocation.
pub struct Interop {
    /// CUDA mappings (dropped before the Vulkan memory they map).
    mapped: Vec<cudarc::driver::MappedBuffer>,
    /// The same memory as wgpu buffers, one per slot.
    pub buffers: Vec<wgpu::Buffer>,
    pub slots: Arc<SharedSlots>,
}

/// The Vulkan feature the device must be created with.
pub fn wanted_features(adapter: &wgpu::Adapter) -> wgpu::Features {
    adapter.features() & wgpu::Features::VULKAN_EXTERNAL_MEMORY_FD
}

/// The Vulkan device UUID of `device` (None when it is not a Vulkan device).
pub fn vulkan_uuid(device: &wgpu::Device) -> Option<[u8; 16]> {
    // SAFETY: only reads properties of the physical device.
    let hal = unsafe { device.as_hal::<wgpu::hal::api::Vulkan>() }?;
    let instance = hal.shared_instance().raw_instance();
    let mut id = vk::PhysicalDeviceIDProperties::default();
    let mut props = vk::PhysicalDeviceProperties2::default().push_next(&mut id);
    // SAFETY: valid instance and physical device.
    unsafe { instance.get_physical_device_properties2(hal.raw_physical_device(), &mut props) };
    Some(id.device_uuid)
}

impl Interop {
    /// Slots for `capacity` atoms that are plain storage buffers of `device`, for a wgpu
    /// backend running on that same device (no CUDA, no external memory).
    pub fn same_device(device: &wgpu::Device, capacity: usize) -> Interop {
        let size = (capacity.max(1) * 16) as u64;
        let labels = ["atoms (same device 0)", "atoms (same device 1)", "atoms (same device 2)"];
        let buffers: Vec<wgpu::Buffer> = labels[..SLOTS]
            .iter()
            .map(|&label| {
                device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some(label),
                    size,
                    usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                })
            })
            .collect();
        let slots = SharedSlots::same_device(buffers.clone(), capacity);
        Interop { mapped: Vec::new(), buffers, slots: Arc::new(slots) }
    }

    /// Whether the slots are buffers of the renderer's device written by a wgpu backend.
    pub fn is_same_device(&self) -> bool {
        matches!(self.slots.memory, SlotMemory::SameDevice { .. })
    }

    /// Shared buffers for `capacity` atoms on `device`, imported into the process's CUDA
    /// device; or why not.
    pub fn new(device: &wgpu::Device, capacity: usize) -> Result<Interop, String> {
        if !device.features().contains(wgpu::Features::VULKAN_EXTERNAL_MEMORY_FD) {
            return Err(
                "the renderer's device has no Vulkan external memory (not Vulkan, or no VK_KHR_external_memory_fd)"
                    .into(),
            );
        }
        let cuda = crate::sim::cuda::device::open().map_err(|e| format!("no CUDA device: {e}"))?;
        let cuda_uuid = cuda.ctx.uuid().map_err(|e| format!("reading the CUDA device's UUID: {e}"))?;
        let cuda_uuid: [u8; 16] = std::array::from_fn(|i| cuda_uuid.bytes[i] as u8);
        let size = (capacity.max(1) * 16) as u64;
        let mut raw = Vec::new();
        {
            // SAFETY: the raw handles are used only inside this block, on this device, and the
            // objects made here are handed to wgpu (which then owns them) before it ends.
            let hal = unsafe { device.as_hal::<wgpu::hal::api::Vulkan>() }
                .ok_or_else(|| "the renderer does not run on Vulkan".to_string())?;
            if !hal.enabled_device_extensions().contains(&ash::khr::external_memory_fd::NAME) {
                return Err("the Vulkan device lacks VK_KHR_external_memory_fd".into());
            }
            let instance = hal.shared_instance().raw_instance();
            let phys = hal.raw_physical_device();
            let dev = hal.raw_device();
            let mut id = vk::PhysicalDeviceIDProperties::default();
            let mut props = vk::PhysicalDeviceProperties2::default().push_next(&mut id);
            // SAFETY: valid instance and physical device.
            unsafe { instance.get_physical_device_properties2(phys, &mut props) };
            if id.device_uuid != cuda_uuid {
                return Err(format!(
                    "the CUDA device ({}) is not the GPU that draws (UUIDs differ); set ARGON_CUDA_DEVICE to the display GPU",
                    cuda.name
                ));
            }
            // SAFETY: as above.
            let mem_props = unsafe { instance.get_physical_device_memory_properties(phys) };
            let fd_fns = ash::khr::external_memory_fd::Device::new(instance, dev);
            for _ in 0..SLOTS {
                // SAFETY: valid device; every object is destroyed on the error paths.
                unsafe {
                    let mut external = vk::ExternalMemoryBufferCreateInfo::default()
                        .handle_types(vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD);
                    let info = vk::BufferCreateInfo::default()
                        .size(size)
                        .usage(
                            vk::BufferUsageFlags::STORAGE_BUFFER
                                | vk::BufferUsageFlags::TRANSFER_SRC
                                | vk::BufferUsageFlags::TRANSFER_DST,
                        )
                        .sharing_mode(vk::SharingMode::EXCLUSIVE)
                        .push_next(&mut external);
                    let buffer = dev.create_buffer(&info, None).map_err(|e| format!("vkCreateBuffer: {e}"))?;
                    let req = dev.get_buffer_memory_requirements(buffer);
                    let Some(type_index) = (0..mem_props.memory_type_count).find(|&i| {
                        req.memory_type_bits & (1 << i) != 0
                            && mem_props.memory_types[i as usize]
                                .property_flags
                                .contains(vk::MemoryPropertyFlags::DEVICE_LOCAL)
                    }) else {
                        dev.destroy_buffer(buffer, None);
                        return Err("no device-local Vulkan memory type for the shared buffer".into());
                    };
                    let mut export = vk::ExportMemoryAllocateInfo::default()
                        .handle_types(vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD);
                    let alloc = vk::MemoryAllocateInfo::default()
                        .allocation_size(req.size)
                        .memory_type_index(type_index)
                        .push_next(&mut export);
                    let memory = match dev.allocate_memory(&alloc, None) {
                        Ok(m) => m,
                        Err(e) => {
                            dev.destroy_buffer(buffer, None);
                            return Err(format!("vkAllocateMemory of {} MB: {e}", req.size >> 20));
                        }
                    };
                    if let Err(e) = dev.bind_buffer_memory(buffer, memory, 0) {
                        dev.destroy_buffer(buffer, None);
                        dev.free_memory(memory, None);
                        return Err(format!("vkBindBufferMemory: {e}"));
                    }
                    let fd_info = vk::MemoryGetFdInfoKHR::default()
                        .memory(memory)
                        .handle_type(vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD);
                    let fd = match fd_fns.get_memory_fd(&fd_info) {
                        Ok(fd) => fd,
                        Err(e) => {
                            dev.destroy_buffer(buffer, None);
                            dev.free_memory(memory, None);
                            return Err(format!("vkGetMemoryFdKHR: {e}"));
                        }
                    };
                    raw.push((buffer, memory, req.size, fd));
                }
            }
        }
        let mut buffers = Vec::new();
        let mut mapped = Vec::new();
        for (k, (buffer, memory, alloc_size, fd)) in raw.into_iter().enumerate() {
            // SAFETY: buffer and memory were made above on this device for `size` bytes; wgpu
            // now owns and frees them.
            let hal_buffer = unsafe { wgpu::hal::vulkan::Buffer::from_raw_managed(buffer, memory, 0, size) };
            let desc = wgpu::BufferDescriptor {
                label: Some(if k == 0 {
                    "atoms (shared 0)"
                } else if k == 1 {
                    "atoms (shared 1)"
                } else {
                    "atoms (shared 2)"
                }),
                size,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            };
            // SAFETY: made from this device's handles, respecting `desc`, bound to memory.
            buffers.push(unsafe { device.create_buffer_from_hal::<wgpu::hal::api::Vulkan>(hal_buffer, &desc) });
            use std::os::fd::FromRawFd;
            // SAFETY: the fd was just exported for this memory and is owned by nobody else.
            let file = unsafe { std::fs::File::from_raw_fd(fd) };
            // SAFETY: the fd refers to `alloc_size` bytes of opaque-fd memory.
            let ext = unsafe { cuda.ctx.import_external_memory(file, alloc_size) }
                .map_err(|e| format!("CUDA could not import the shared buffer: {e}"))?;
            mapped.push(ext.map_all().map_err(|e| format!("CUDA could not map the shared buffer: {e}"))?);
        }
        let ptrs = mapped
            .iter()
            .map(|m| {
                use cudarc::driver::DevicePtr;
                m.device_ptr(&cuda.stream).0
            })
            .collect();
        Ok(Interop { mapped, buffers, slots: Arc::new(SharedSlots::new(ptrs, capacity)) })
    }

    /// Atoms each slot holds.
    pub fn capacity(&self) -> usize {
        self.slots.capacity
    }

    /// Number of CUDA mappings alive (for tests).
    pub fn mapped(&self) -> usize {
        self.mapped.len()
    }
}
