//! Atoms drawn by compute splatting instead of rasterised triangles, for many small atoms:
//! a compute pass (shaders/splat.wgsl) keeps the nearest atom of every pixel in a 64-bit
//! visibility buffer, then a full-screen pass shades each covered pixel from its atom with
//! the same lighting, colours and depth as the triangle path. Datacentre GPUs such as the
//! H100/H200 run graphics on a couple of units only (a million atoms took 6 ms a frame
//! there), while compute uses the whole chip. Needs 64-bit atomic max
//! ([`Splat::supported`]); otherwise the triangle path draws.

/// When the splat path draws the atoms.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SplatMode {
    /// From [`SPLAT_MIN_ATOMS`] atoms while they are at most [`SPLAT_MAX_RADIUS_PX`] pixels
    /// in radius (large atoms are cheaper as triangles).
    #[default]
    Auto,
    /// Whenever the device can.
    Always,
    /// Never (triangles only).
    Never,
}

/// Atom count from which [`SplatMode::Auto`] splats.
pub const SPLAT_MIN_ATOMS: u32 = 100_000;
/// Largest on-screen atom radius (pixels) that [`SplatMode::Auto`] splats.
pub const SPLAT_MAX_RADIUS_PX: f32 = 10.0;

/// The splat pipelines.
pub struct Splat {
    splat: wgpu::ComputePipeline,
    resolve: wgpu::RenderPipeline,
}

/// Device features the splat path needs.
pub fn features() -> wgpu::Features {
    wgpu::Features::SHADER_INT64 | wgpu::Features::SHADER_INT64_ATOMIC_MIN_MAX
}

impl Splat {
    /// True when `device` has 64-bit atomic min/max in shaders.
    pub fn supported(device: &wgpu::Device) -> bool {
        device.features().contains(features())
    }

    /// The pipelines, from the atoms shader's source (shared definitions and `shade`), for
    /// colour targets of `format` with `depth`; None when the device lacks the features.
    pub fn new(
        device: &wgpu::Device,
        atoms_source: &str,
        format: wgpu::TextureFormat,
        depth: Option<wgpu::DepthStencilState>,
    ) -> Option<Splat> {
        if !Self::supported(device) {
            return None;
        }
        let source = format!("{atoms_source}\n{}", include_str!("../../shaders/splat.wgsl"));
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("splat.wgsl"),
            source: wgpu::ShaderSource::Wgsl(source.into()),
        });
        let splat = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("atom splat"),
            layout: None,
            module: &module,
            entry_point: Some("splat_main"),
            compilation_options: Default::default(),
            cache: None,
        });
        let resolve = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("atom splat resolve"),
            layout: None,
            vertex: wgpu::VertexState {
                module: &module,
                entry_point: Some("vs_resolve"),
                buffers: &[],
                compilation_options: Default::default(),
            },
            primitive: wgpu::PrimitiveState::default(),
            depth_stencil: depth,
            multisample: wgpu::MultisampleState::default(),
            fragment: Some(wgpu::FragmentState {
                module: &module,
                entry_point: Some("fs_resolve"),
                targets: &[Some(wgpu::ColorTargetState { format, blend: None, write_mask: wgpu::ColorWrites::ALL })],
                compilation_options: Default::default(),
            }),
            multiview_mask: None,
            cache: None,
        });
        Some(Splat { splat, resolve })
    }

    /// A visibility buffer for a target of `size` pixels.
    pub fn visibility_buffer(device: &wgpu::Device, size: [u32; 2]) -> wgpu::Buffer {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("atom visibility"),
            size: (size[0] as u64 * size[1] as u64 * 8).max(8),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    /// Records the splat of `n` atoms into `vis` (cleared first) and returns the bind group
    /// of the resolve, for [`Splat::paint`].
    pub fn encode(
        &self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        uniform: &wgpu::Buffer,
        atoms: &wgpu::Buffer,
        vis: &wgpu::Buffer,
        n: u32,
    ) -> wgpu::BindGroup {
        let entries = |vis_binding: u32| {
            [
                wgpu::BindGroupEntry { binding: 0, resource: uniform.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 1, resource: atoms.as_entire_binding() },
                wgpu::BindGroupEntry { binding: vis_binding, resource: vis.as_entire_binding() },
            ]
        };
        let splat_bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("atom splat"),
            layout: &self.splat.get_bind_group_layout(0),
            entries: &entries(2),
        });
        let resolve_bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("atom splat resolve"),
            layout: &self.resolve.get_bind_group_layout(0),
            entries: &entries(3),
        });
        encoder.clear_buffer(vis, 0, None);
        let mut pass = encoder
            .begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("atom splat"), timestamp_writes: None });
        pass.set_pipeline(&self.splat);
        pass.set_bind_group(0, &splat_bind, &[]);
        // 64 atoms per workgroup; large counts go over the y dimension.
        let groups = n.div_ceil(64);
        let limit = device.limits().max_compute_workgroups_per_dimension.max(1);
        pass.dispatch_workgroups(groups.min(limit), groups.div_ceil(limit), 1);
        drop(pass);
        resolve_bind
    }

    /// Draws the splatted atoms (a full-screen triangle) into `pass`.
    pub fn paint(&self, pass: &mut wgpu::RenderPass<'_>, bind: &wgpu::BindGroup) {
        pass.set_pipeline(&self.resolve);
        pass.set_bind_group(0, bind, &[]);
        pass.draw(0..3, 0..1);
    }
}
