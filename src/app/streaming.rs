//! Positions to the renderer without the host: the renderer's device handed to the
//! simulation thread (a wgpu backend runs on it), zero-copy slots set up, grown or dropped as
//! the backend and atom count require, and each slot freed when the GPU is done with it.

use super::*;

impl App {
    /// Hands the renderer's device to the simulation thread: a wgpu backend runs there from
    /// now on (a running one moves), and its positions are drawn without leaving the GPU.
    pub fn share_device(&mut self, dev: Arc<crate::sim::gpu::device::SimDevice>) {
        self.auto_wgpu = crate::sim::auto_prefers_wgpu(Some(&dev));
        self.sim.send(SimCommand::UseDevice(dev));
    }

    /// Called by the window or headless loop before each frame with its wgpu device: sets up,
    /// grows or drops zero-copy streaming as the backend and atom count require (CUDA through
    /// Vulkan external memory; the wgpu backend on this device through plain buffers of it).
    pub fn gpu_frame(&mut self, device: &wgpu::Device) {
        self.gpu_frame += 1;
        self.replay.gpu.set_device(device);
        self.retired.retain(|(t, _)| t.elapsed() < Duration::from_secs(2));
        let Some(s) = &self.status else { return };
        let same = s.info.kind == "wgpu" && s.on_render_device;
        if s.info.kind != "cuda" && !same {
            if let Some(old) = self.interop.take() {
                self.sim.send(SimCommand::UseSlots(None));
                self.retired.push((Instant::now(), old));
            }
            self.interop_note = if s.info.kind == "wgpu" {
                "the wgpu backend runs on a device of its own: positions are copied through host memory".into()
            } else {
                "the CPU backend runs: positions are copied from host memory".into()
            };
            self.interop_failed = false;
            return;
        }
        if std::env::var_os("ARGON_NO_ZERO_COPY").is_some_and(|v| v != "0") {
            self.interop_note = "zero-copy turned off by ARGON_NO_ZERO_COPY".into();
            return;
        }
        let need = s.n_atoms.max(self.need_slots);
        let fits = self.interop.as_ref().is_some_and(|i| i.is_same_device() == same && i.capacity() >= need);
        if fits || (!same && self.interop_failed) {
            return;
        }
        let capacity = need.next_power_of_two().max(4096);
        let made = if same {
            Ok(crate::interop::Interop::same_device(device, capacity))
        } else {
            crate::interop::Interop::new(device, capacity)
        };
        match made {
            Ok(i) => {
                self.sim.send(SimCommand::UseSlots(Some(i.slots.clone())));
                if let Some(old) = self.interop.replace(i) {
                    self.retired.push((Instant::now(), old));
                }
                self.interop_note = if same {
                    format!(
                        "the wgpu backend writes positions into {capacity}-atom buffers on the renderer's own device"
                    )
                } else {
                    format!("CUDA writes positions into {capacity}-atom buffers the renderer reads")
                };
            }
            Err(why) => {
                if self.verbose {
                    eprintln!("argon-sandbox: zero-copy positions are off: {why}; using host staging");
                }
                self.interop_failed = true;
                self.interop_note = why;
            }
        }
    }

    /// Called after the frame's GPU work was submitted: stores it for the replay, frees its
    /// slot when the GPU is done.
    pub fn frame_submitted(&mut self, queue: &wgpu::Queue) {
        self.replay_submitted(queue);
        if let Some(i) = &self.interop {
            let (slots, frame) = (i.slots.clone(), self.gpu_frame);
            queue.on_submitted_work_done(move || slots.frame_completed(frame));
        }
    }
}
