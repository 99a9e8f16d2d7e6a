//! Positions for the renderer from the wgpu backend (`Publisher`): the publish kernel
//! (`shaders/sim/publish.wgsl`) writes each atom's (x, y, z, colour scalar) at its
//! canonical index, either into a buffer on the simulation's own device (zero-copy: the
//! renderer shares that device and draws the buffer; nothing crosses to the host, and
//! same-queue ordering makes the write visible to every later submission) or into a scratch
//! buffer read back for the host, so both paths hold the same bits.
//!
//! The kernel reads the system through the simulation's bind group 0 (the engine's) and
//! writes through a group 1 of its own, so the simulation's kernels keep their bindings; the
//! dye tags (`engine/dye.rs`), where the system has them, are read through that group too.

use std::sync::Arc;

use wgpu::util::DeviceExt;

use super::device::SimDevice;
use super::engine::{Pipelines, WG};
use super::pipelines::SideKernels;
use crate::sim::{ColourScalar, SimError};

/// The publish pipeline built against one `Pipelines` (its group-0 layout).
pub struct Publisher {
    built_for: Arc<Pipelines>,
    pipeline: wgpu::ComputePipeline,
    out_layout: wgpu::BindGroupLayout,
    /// Scratch output for host reads (grown as needed).
    scratch: Option<wgpu::Buffer>,
    /// Bound as the tags where the system has none (the kernel then reads no tag).
    no_dye: wgpu::Buffer,
}

/// The system a publish reads: the engine's bind group 0 and its dye tags (where it has them).
pub type System<'a> = (&'a wgpu::BindGroup, Option<&'a wgpu::Buffer>);

/// The kernel's arguments (publish.wgsl `PublishArgs`).
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Args {
    colour: u32,
    n: u32,
    /// 1: the system has dye tags (bound at 3).
    dye: u32,
    pad: u32,
}

/// The scalar code the kernel switches on (0 speed, 1 kinetic energy, 2 height, 3 species, 4 dye).
fn colour_code(c: ColourScalar) -> u32 {
    match c {
        ColourScalar::Speed => 0,
        ColourScalar::KineticEnergy => 1,
        ColourScalar::Height => 2,
        ColourScalar::Species => 3,
        ColourScalar::Dye => 4,
    }
}

impl Publisher {
    /// Compiles the kernel for `ntypes` species against `pipes`' group-0 layout (and precision).
    pub fn new(dev: &SimDevice, pipes: &Arc<Pipelines>, ntypes: usize) -> Result<Publisher, SimError> {
        let source = super::shaders::publish_module(ntypes, pipes.precision);
        let what = "the publish kernel (publish.wgsl)";
        let k = SideKernels::with_reads(dev, pipes, what, source, (1, 2), &[3], &["publish"])?;
        let SideKernels { out_layout, mut pipelines } = k;
        let pipeline = pipelines.remove(0);
        let no_dye = dev.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("publish no dye"),
            size: 16,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        Ok(Publisher { built_for: pipes.clone(), pipeline, out_layout, scratch: None, no_dye })
    }

    /// Device bytes it keeps (the scratch buffer of host reads).
    pub fn bytes(&self) -> usize {
        self.scratch.as_ref().map_or(0, |s| s.size() as usize)
    }

    /// Whether this publisher was built for `pipes` (a rebuilt module needs a new one).
    pub fn fits(&self, pipes: &Arc<Pipelines>) -> bool {
        Arc::ptr_eq(&self.built_for, pipes)
    }

    /// Records the kernel writing `n` atoms into `out` (room checked by the caller) and
    /// submits it; returns at once. A buffer this device cannot bind (another device's) is
    /// refused by wgpu's validation, caught here.
    fn submit(
        &self,
        dev: &SimDevice,
        (system, dye): System<'_>,
        out: &wgpu::Buffer,
        n: usize,
        colour: ColourScalar,
    ) -> Result<(), SimError> {
        let scope = dev.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let args = Args { colour: colour_code(colour), n: n as u32, dye: u32::from(dye.is_some()), pad: 0 };
        let args = dev.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("publish args"),
            contents: bytemuck::bytes_of(&args),
            usage: wgpu::BufferUsages::UNIFORM,
        });
        let bind = dev.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("publish"),
            layout: &self.out_layout,
            entries: &[
                wgpu::BindGroupEntry { binding: 1, resource: out.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 2, resource: args.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 3, resource: dye.unwrap_or(&self.no_dye).as_entire_binding() },
            ],
        });
        let mut enc = dev.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("publish") });
        {
            let mut pass =
                enc.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("publish"), timestamp_writes: None });
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, system, &[0]);
            pass.set_bind_group(1, &bind, &[]);
            pass.dispatch_workgroups((n as u32).div_ceil(WG).max(1), 1, 1);
        }
        let commands = enc.finish();
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(SimError::Invalid(format!("the simulation's device cannot write that position buffer: {e}")));
        }
        dev.queue.submit([commands]);
        Ok(())
    }

    /// Writes the `n` atoms into `out`, a storage buffer on `dev` with room for `len`
    /// quadruples: submitted, not waited for (later submissions on the queue see it).
    pub fn to_buffer(
        &self,
        dev: &SimDevice,
        (system, dye): System<'_>,
        out: &wgpu::Buffer,
        len: usize,
        n: usize,
        colour: ColourScalar,
    ) -> Result<(), SimError> {
        if len < n || out.size() < (n * 16) as u64 {
            return Err(SimError::Invalid(format!(
                "the position buffer holds {} atoms, need {n}",
                len.min((out.size() / 16) as usize)
            )));
        }
        if !out.usage().contains(wgpu::BufferUsages::STORAGE) {
            return Err(SimError::Invalid("the position buffer is not a storage buffer".into()));
        }
        if n > 0 {
            self.submit(dev, (system, dye), out, n, colour)?;
        }
        Ok(())
    }

    /// Writes the `n` atoms into `out` on the host (the same kernel into a scratch buffer,
    /// read back).
    pub fn to_host(
        &mut self,
        dev: &SimDevice,
        (system, dye): System<'_>,
        n: usize,
        colour: ColourScalar,
        out: &mut [[f32; 4]],
    ) -> Result<(), SimError> {
        if out.len() < n {
            return Err(SimError::Invalid(format!("position buffer holds {} atoms, need {n}", out.len())));
        }
        if n == 0 {
            return Ok(());
        }
        let bytes = (n * 16) as u64;
        let scratch = match self.scratch.take() {
            Some(s) if s.size() >= bytes => s,
            _ => dev.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("publish scratch"),
                size: bytes,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            }),
        };
        let read = self
            .submit(dev, (system, dye), &scratch, n, colour)
            .and_then(|()| dev.read_back(dev.device.create_command_encoder(&Default::default()), &[(&scratch, bytes)]));
        self.scratch = Some(scratch);
        out[..n].copy_from_slice(bytemuck::cast_slice(&read?[0]));
        Ok(())
    }
}
