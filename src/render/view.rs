//! The 3D view inside egui, through one egui-wgpu paint callback: [`ViewResources`] (made once
//! and kept in egui-wgpu's `callback_resources`) holds the [`Renderer`], a view-sized
//! offscreen colour + depth target and a blit pipeline. Each frame a [`ViewCallback`] carries
//! the camera, display settings and (when new) positions and scene geometry: `prepare`
//! uploads them and draws the atoms into the offscreen target inside egui's command encoder;
//! `paint` copies the image into egui's pass. egui's pass needs no depth buffer this way, so
//! the same code runs in the window, headless, and under egui_kittest.

use std::sync::Arc;

use egui_wgpu::{CallbackResources, CallbackTrait, ScreenDescriptor};

use super::offscreen::{COLOUR_FORMAT, Offscreen};
use super::{Camera, Renderer, ViewSettings};
use crate::physics::sim_box::SimBox;
use crate::shapes::Shape;

/// Positions for the renderer's own buffer (the host-staging path).
pub type PositionFrame = Arc<crate::sim::HostBuf>;

/// Tank and obstacle geometry for the renderer, and the piston's height when there is one.
pub type SceneGeometry = Arc<(SimBox, Vec<Shape>, Option<f64>)>;

/// The flow layer's geometry, when there is one.
pub type FlowGeometry = Option<Arc<super::flow_layer::FlowMesh>>;

/// GPU resources of the 3D view, created once per device and target format.
pub struct ViewResources {
    pub renderer: Renderer,
    /// The view's image, resized with the view.
    pub target: Option<Offscreen>,
    blit_pipeline: wgpu::RenderPipeline,
    blit_layout: wgpu::BindGroupLayout,
    sampler: wgpu::Sampler,
    blit_bind: Option<wgpu::BindGroup>,
    /// Sequence numbers of the positions and geometry uploaded last (0: none).
    uploaded_positions: u64,
    uploaded_scene: u64,
    uploaded_external: u64,
    uploaded_flow: u64,
    /// What the view's image shows now: it is drawn again only when any of it changes, so a
    /// display frame without new positions (paused, or between two of the simulation's
    /// chunks) costs the GPU only the blit.
    drawn: Option<Drawn>,
    /// Set when the last frame's view could not be drawn (e.g. too large a target).
    pub error: Option<String>,
}

/// Everything the view's image depends on: camera, display settings, size and the sequence
/// numbers of the positions (host or shared buffer), the tank and the flow layer.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Drawn {
    camera: Camera,
    settings: ViewSettings,
    size: [u32; 2],
    seqs: [u64; 4],
}

impl ViewResources {
    /// The sequence number of the positions (host or shared buffer) the view's image was last
    /// drawn from (None before the first image).
    pub fn drawn_positions(&self) -> Option<u64> {
        self.drawn.map(|d| d.seqs[0].max(d.seqs[1]))
    }

    /// Resources for egui targets of `target_format`.
    pub fn new(device: &wgpu::Device, target_format: wgpu::TextureFormat) -> ViewResources {
        let renderer = Renderer::new(device, COLOUR_FORMAT);
        let encode = if target_format.is_srgb() { "false" } else { "true" };
        let source = include_str!("../../shaders/blit.wgsl").replace("/*ENCODE_SRGB*/false", encode);
        let shader = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("blit.wgsl"),
            source: wgpu::ShaderSource::Wgsl(source.into()),
        });
        let blit_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("view blit layout"),
            entries: &[
                wgpu::BindGroupLayoutEntry {
                    binding: 0,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Texture {
                        sample_type: wgpu::TextureSampleType::Float { filterable: true },
                        view_dimension: wgpu::TextureViewDimension::D2,
                        multisampled: false,
                    },
                    count: None,
                },
                wgpu::BindGroupLayoutEntry {
                    binding: 1,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering),
                    count: None,
                },
            ],
        });
        let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("view blit pipeline layout"),
            bind_group_layouts: &[Some(&blit_layout)],
            immediate_size: 0,
        });
        let blit_pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("view blit pipeline"),
            layout: Some(&layout),
            vertex: wgpu::VertexState {
                module: &shader,
                entry_point: Some("vs_main"),
                buffers: &[],
                compilation_options: Default::default(),
            },
            primitive: wgpu::PrimitiveState::default(),
            depth_stencil: None,
            multisample: wgpu::MultisampleState::default(),
            fragment: Some(wgpu::FragmentState {
                module: &shader,
                entry_point: Some("fs_main"),
                targets: &[Some(wgpu::ColorTargetState {
                    format: target_format,
                    blend: None,
                    write_mask: wgpu::ColorWrites::ALL,
                })],
                compilation_options: Default::default(),
            }),
            multiview_mask: None,
            cache: None,
        });
        let sampler = device.create_sampler(&wgpu::SamplerDescriptor {
            label: Some("view blit sampler"),
            mag_filter: wgpu::FilterMode::Nearest,
            min_filter: wgpu::FilterMode::Nearest,
            ..Default::default()
        });
        ViewResources {
            renderer,
            target: None,
            blit_pipeline,
            blit_layout,
            sampler,
            blit_bind: None,
            uploaded_positions: 0,
            uploaded_scene: 0,
            uploaded_external: 0,
            uploaded_flow: 0,
            drawn: None,
            error: None,
        }
    }

    /// Makes the target `size` pixels (recreated only when the size changes).
    fn ensure_target(&mut self, device: &wgpu::Device, size: [u32; 2]) -> bool {
        if self.target.as_ref().is_some_and(|t| t.size == size) {
            return true;
        }
        match Offscreen::new(device, size) {
            Ok(t) => {
                self.blit_bind = Some(device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("view blit bind group"),
                    layout: &self.blit_layout,
                    entries: &[
                        wgpu::BindGroupEntry {
                            binding: 0,
                            resource: wgpu::BindingResource::TextureView(&t.colour_view),
                        },
                        wgpu::BindGroupEntry { binding: 1, resource: wgpu::BindingResource::Sampler(&self.sampler) },
                    ],
                }));
                self.target = Some(t);
                self.error = None;
                true
            }
            Err(e) => {
                self.error = Some(e.to_string());
                self.target = None;
                self.blit_bind = None;
                false
            }
        }
    }
}

/// One frame of the 3D view. Positions and geometry come with sequence numbers; `prepare`
/// uploads them only when they differ from what the renderer last took, so frames that were
/// never painted (hidden windows, tests that render only now and then) lose nothing.
pub struct ViewCallback {
    pub camera: Camera,
    pub settings: ViewSettings,
    /// The view's size in physical pixels.
    pub size: [u32; 2],
    /// The newest positions and their sequence number.
    pub positions: Option<(u64, PositionFrame)>,
    /// The tank and obstacles and their sequence number.
    pub scene: (u64, SceneGeometry),
    /// Zero-copy: draw `n` atoms from this shared buffer (sequence number, buffer, n)
    /// instead of `positions`.
    pub external: Option<(u64, wgpu::Buffer, u32)>,
    /// The flow layer's geometry and its sequence number.
    pub flow: (u64, FlowGeometry),
}

impl CallbackTrait for ViewCallback {
    fn prepare(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        _screen: &ScreenDescriptor,
        encoder: &mut wgpu::CommandEncoder,
        resources: &mut CallbackResources,
    ) -> Vec<wgpu::CommandBuffer> {
        let Some(view) = resources.get_mut::<ViewResources>() else { return Vec::new() };
        if view.uploaded_scene != self.scene.0 {
            let (b, shapes, piston) = &*self.scene.1;
            view.renderer.set_scene(device, b, shapes);
            if piston.is_some() {
                view.renderer.set_piston(device, b, *piston);
            }
            view.uploaded_scene = self.scene.0;
        }
        if view.uploaded_flow != self.flow.0 {
            view.renderer.set_flow(device, queue, self.flow.1.as_deref());
            view.uploaded_flow = self.flow.0;
        }
        match (&self.external, &self.positions) {
            (Some((seq, buffer, n)), _) => {
                if view.uploaded_external != *seq {
                    view.renderer.use_external_atoms(device, buffer, *n);
                    view.uploaded_external = *seq;
                    view.uploaded_positions = 0;
                }
            }
            (None, Some((seq, p))) => {
                if view.uploaded_positions != *seq {
                    view.renderer.upload_atoms(device, queue, p);
                    view.uploaded_positions = *seq;
                    view.uploaded_external = 0;
                }
            }
            (None, None) => {}
        }
        let now = Drawn {
            camera: self.camera,
            settings: self.settings,
            size: self.size,
            seqs: [view.uploaded_positions, view.uploaded_external, view.uploaded_scene, view.uploaded_flow],
        };
        if view.ensure_target(device, self.size) && view.drawn != Some(now) {
            view.renderer.prepare(queue, &self.camera, self.size, &self.settings);
            if let Some(t) = &view.target {
                t.encode(device, encoder, &mut view.renderer, &self.settings);
                view.drawn = Some(now);
            }
        }
        Vec::new()
    }

    fn paint(
        &self,
        _info: egui::PaintCallbackInfo,
        pass: &mut wgpu::RenderPass<'static>,
        resources: &CallbackResources,
    ) {
        let Some(view) = resources.get::<ViewResources>() else { return };
        let Some(bind) = &view.blit_bind else { return };
        pass.set_pipeline(&view.blit_pipeline);
        pass.set_bind_group(0, bind, &[]);
        pass.draw(0..3, 0..1);
    }
}
