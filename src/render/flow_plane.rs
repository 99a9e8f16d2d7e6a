//! The flow layer's colour plane on the GPU: the grid's texels ([`FlowPlane`]) in an
//! `Rgba8UnormSrgb` texture drawn on one quad (shaders/flow_plane.wgsl), blended with
//! premultiplied alpha over the atoms. One draw of six vertices whatever the grid's size:
//! datacentre GPUs run graphics on a few units only, where a quad per bin (hundreds of
//! thousands of vertices at a million atoms) took time from the simulation every frame.

use super::flow_layer::FlowPlane;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct PlaneUniform {
    rect: [f32; 4],
    z: [f32; 4],
}

/// The plane's pipeline and layout, made once per renderer.
pub struct PlanePipeline {
    pipeline: wgpu::RenderPipeline,
    layout: wgpu::BindGroupLayout,
}

/// One uploaded plane: its bind group (uniform, texture, sampler).
pub struct PlaneBind(wgpu::BindGroup);

fn entry(binding: u32, visibility: wgpu::ShaderStages, ty: wgpu::BindingType) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry { binding, visibility, ty, count: None }
}

fn uniform() -> wgpu::BindingType {
    wgpu::BindingType::Buffer {
        ty: wgpu::BufferBindingType::Uniform,
        has_dynamic_offset: false,
        min_binding_size: None,
    }
}

impl PlanePipeline {
    /// The pipeline for colour targets of `format` with `depth` (tested, not written).
    pub fn new(device: &wgpu::Device, format: wgpu::TextureFormat, depth: Option<wgpu::DepthStencilState>) -> Self {
        let shader = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("flow_plane.wgsl"),
            source: wgpu::ShaderSource::Wgsl(include_str!("../../shaders/flow_plane.wgsl").into()),
        });
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("flow plane layout"),
            entries: &[
                entry(0, wgpu::ShaderStages::VERTEX, uniform()),
                entry(1, wgpu::ShaderStages::VERTEX, uniform()),
                entry(
                    2,
                    wgpu::ShaderStages::FRAGMENT,
                    wgpu::BindingType::Texture {
                        sample_type: wgpu::TextureSampleType::Float { filterable: true },
                        view_dimension: wgpu::TextureViewDimension::D2,
                        multisampled: false,
                    },
                ),
                entry(3, wgpu::ShaderStages::FRAGMENT, wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering)),
            ],
        });
        let pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("flow plane pipeline layout"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("flow plane pipeline"),
            layout: Some(&pl),
            vertex: wgpu::VertexState {
                module: &shader,
                entry_point: Some("vs_main"),
                buffers: &[],
                compilation_options: Default::default(),
            },
            primitive: wgpu::PrimitiveState { topology: wgpu::PrimitiveTopology::TriangleList, ..Default::default() },
            depth_stencil: depth,
            multisample: wgpu::MultisampleState::default(),
            fragment: Some(wgpu::FragmentState {
                module: &shader,
                entry_point: Some("fs_main"),
                targets: &[Some(wgpu::ColorTargetState {
                    format,
                    blend: Some(wgpu::BlendState::PREMULTIPLIED_ALPHA_BLENDING),
                    write_mask: wgpu::ColorWrites::ALL,
                })],
                compilation_options: Default::default(),
            }),
            multiview_mask: None,
            cache: None,
        });
        PlanePipeline { pipeline, layout }
    }

    /// Uploads `plane` (texture, sampler, uniform) for drawing with the frame uniform `frame`
    /// (the view-projection matrix the flat geometry uses). None for an empty plane.
    pub fn upload(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        frame: &wgpu::Buffer,
        plane: &FlowPlane,
    ) -> Option<PlaneBind> {
        let [w, h] = plane.size;
        if w == 0 || h == 0 || plane.texels.len() != (w * h) as usize {
            return None;
        }
        let max = device.limits().max_texture_dimension_2d;
        if w > max || h > max {
            return None;
        }
        let size = wgpu::Extent3d { width: w, height: h, depth_or_array_layers: 1 };
        let texture = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("flow plane bins"),
            size,
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: wgpu::TextureFormat::Rgba8UnormSrgb,
            usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
            view_formats: &[],
        });
        queue.write_texture(
            wgpu::TexelCopyTextureInfo {
                texture: &texture,
                mip_level: 0,
                origin: wgpu::Origin3d::ZERO,
                aspect: wgpu::TextureAspect::All,
            },
            bytemuck::cast_slice(&plane.texels),
            wgpu::TexelCopyBufferLayout { offset: 0, bytes_per_row: Some(4 * w), rows_per_image: Some(h) },
            size,
        );
        let address = |periodic: bool| {
            if periodic { wgpu::AddressMode::Repeat } else { wgpu::AddressMode::ClampToEdge }
        };
        let filter = if plane.smooth { wgpu::FilterMode::Linear } else { wgpu::FilterMode::Nearest };
        let sampler = device.create_sampler(&wgpu::SamplerDescriptor {
            label: Some("flow plane sampler"),
            address_mode_u: address(plane.periodic[0]),
            address_mode_v: address(plane.periodic[1]),
            mag_filter: filter,
            min_filter: filter,
            ..Default::default()
        });
        let u =
            PlaneUniform { rect: [plane.lo[0], plane.lo[1], plane.hi[0], plane.hi[1]], z: [plane.z, 0.0, 0.0, 0.0] };
        let ubuf = wgpu::util::DeviceExt::create_buffer_init(
            device,
            &wgpu::util::BufferInitDescriptor {
                label: Some("flow plane uniform"),
                contents: bytemuck::bytes_of(&u),
                usage: wgpu::BufferUsages::UNIFORM,
            },
        );
        let view = texture.create_view(&wgpu::TextureViewDescriptor::default());
        let bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("flow plane bind group"),
            layout: &self.layout,
            entries: &[
                wgpu::BindGroupEntry { binding: 0, resource: frame.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 1, resource: ubuf.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 2, resource: wgpu::BindingResource::TextureView(&view) },
                wgpu::BindGroupEntry { binding: 3, resource: wgpu::BindingResource::Sampler(&sampler) },
            ],
        });
        Some(PlaneBind(bind))
    }

    /// Draws an uploaded plane.
    pub fn paint(&self, pass: &mut wgpu::RenderPass<'_>, bind: &PlaneBind) {
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &bind.0, &[]);
        pass.draw(0..6, 0..1);
    }
}
