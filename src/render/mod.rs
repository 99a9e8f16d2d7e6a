//! What people see: atoms as instanced sphere impostors read from a storage buffer of
//! `[x, y, z, colour]` f32x4 (uploaded here, or filled by another owner such as CUDA
//! interop), the tank outline and walls, obstacle prisms, and the colour maps. Pipelines are
//! built once; per frame only uniforms are written. `prepare` + `paint` fit egui-wgpu paint
//! callbacks; `offscreen` renders to a texture for `record` and tests.
//!
//! Owns GPU drawing only: it never touches the simulation or UI state.

pub mod camera;
pub mod colour;
pub mod flow_layer;
pub mod flow_plane;
pub mod geometry;
pub mod offscreen;
pub mod overlay;
pub mod overlay_layout;
pub mod splat;
pub mod view;

use bytemuck::{Pod, Zeroable};
use wgpu::util::DeviceExt;

pub use self::camera::{Camera, CameraMode};
pub use self::colour::{ColourBy, Palette, Untagged};
use self::flow_layer::{FlowMesh, FlowView};
use self::geometry::FlatVertex;
use self::splat::Splat;
pub use self::splat::SplatMode;
use crate::physics::sim_box::SimBox;
use crate::shapes::Shape;

/// Optional device features the renderer uses when the adapter has them.
pub fn wanted_features(adapter: &wgpu::Adapter) -> wgpu::Features {
    adapter.features() & (wgpu::Features::SHADER_EARLY_DEPTH_TEST | splat::features())
        | crate::interop::wanted_features(adapter)
}

/// Depth format of every render target.
pub const DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;

/// Display choices for one frame.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ViewSettings {
    pub colour_by: ColourBy,
    /// Colour scalar at the two ends of the map.
    pub range: [f32; 2],
    /// Colour of `ColourBy::Single` (linear RGB).
    pub single: [f32; 3],
    /// Drawn atom radius in sigma (0.5 touches at contact).
    pub radius: f32,
    pub show_walls: bool,
    pub show_obstacles: bool,
    pub show_scale_bar: bool,
    pub show_legend: bool,
    pub background: [f32; 3],
    /// The flow layer (averaged fields over the atoms); settings saved before it existed load
    /// with it off.
    #[serde(default)]
    pub flow: FlowView,
    /// How untagged atoms look when coloured by dye (settings saved before it load dimmed).
    #[serde(default)]
    pub untagged: Untagged,
}

impl Default for ViewSettings {
    fn default() -> Self {
        ViewSettings {
            colour_by: ColourBy::Speed,
            range: [0.0, 3.0],
            single: [0.35, 0.65, 0.95],
            radius: 0.5,
            show_walls: true,
            show_obstacles: true,
            show_scale_bar: true,
            show_legend: true,
            background: [0.03, 0.035, 0.05],
            flow: FlowView::default(),
            untagged: Untagged::default(),
        }
    }
}

impl ViewSettings {
    /// The frame's `single` uniform: the single colour, or under the dye colouring the
    /// untagged atoms' colour with w = 0 when they are hidden.
    fn single_uniform(&self) -> [f32; 4] {
        match self.colour_by {
            ColourBy::Dye => {
                let c = self.untagged.colour();
                [c[0], c[1], c[2], if self.untagged == Untagged::Hidden { 0.0 } else { 1.0 }]
            }
            _ => [self.single[0], self.single[1], self.single[2], 1.0],
        }
    }
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
struct AtomUniform {
    view: [[f32; 4]; 4],
    proj: [[f32; 4]; 4],
    params: [f32; 4],
    map: [u32; 4],
    single: [f32; 4],
    light: [f32; 4],
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
struct FlatUniform {
    view_proj: [[f32; 4]; 4],
}

/// Which buffer the atoms come from.
enum AtomSource {
    /// Our own storage buffer, filled by `upload_atoms`.
    Own,
    /// A buffer another owner fills (e.g. CUDA through Vulkan interop).
    External(wgpu::Buffer),
}

/// The renderer's GPU resources, made once per device and target format.
pub struct Renderer {
    atoms_pipeline: wgpu::RenderPipeline,
    lines_pipeline: wgpu::RenderPipeline,
    solid_pipeline: wgpu::RenderPipeline,
    translucent_pipeline: wgpu::RenderPipeline,
    /// Translucent lines (arrows and streamlines of the flow layer).
    flow_lines_pipeline: wgpu::RenderPipeline,
    atoms_layout: wgpu::BindGroupLayout,
    atom_uniform: wgpu::Buffer,
    flat_uniform: wgpu::Buffer,
    flat_bind: wgpu::BindGroup,
    atom_buffer: wgpu::Buffer,
    atom_capacity: u64,
    atom_bind: wgpu::BindGroup,
    source: AtomSource,
    n_atoms: u32,
    outline: (wgpu::Buffer, u32),
    walls: (wgpu::Buffer, u32),
    obstacles: (wgpu::Buffer, u32),
    /// The flow layer's colour plane (an image on one quad) and lines (empty when off).
    plane_pipeline: flow_plane::PlanePipeline,
    flow_plane: Option<flow_plane::PlaneBind>,
    flow_covers: (wgpu::Buffer, u32),
    flow_lines: (wgpu::Buffer, u32),
    settings: ViewSettings,
    /// The compute splat path, where the device can run it.
    splat: Option<Splat>,
    /// When the splat path draws (see [`SplatMode`]).
    pub splat_mode: SplatMode,
    /// An atom's radius on screen this frame (pixels, at the view's centre).
    radius_px: f32,
    /// This frame's splat resolve, when the atoms were splatted.
    splat_bind: Option<wgpu::BindGroup>,
}

fn vertex_buffer(device: &wgpu::Device, label: &str, data: &[FlatVertex]) -> (wgpu::Buffer, u32) {
    let bytes: &[u8] = if data.is_empty() { &[0u8; 28] } else { bytemuck::cast_slice(data) };
    let buf = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some(label),
        contents: bytes,
        usage: wgpu::BufferUsages::VERTEX,
    });
    (buf, data.len() as u32)
}

fn atom_storage(device: &wgpu::Device, capacity: u64) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("atoms (own)"),
        size: capacity.max(1) * 16,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    })
}

impl Renderer {
    /// Builds the pipelines for colour targets of `format` (with [`DEPTH_FORMAT`] depth).
    pub fn new(device: &wgpu::Device, format: wgpu::TextureFormat) -> Renderer {
        // Where the device allows it, promise conservative depth (the shader only pushes depth
        // further away) so hidden sphere fragments are rejected before shading.
        let mut atoms_source = include_str!("../../shaders/atoms.wgsl").to_string();
        if device.features().contains(wgpu::Features::SHADER_EARLY_DEPTH_TEST) {
            atoms_source = atoms_source.replace("/*EARLY_DEPTH*/", "@early_depth_test(greater_equal)");
        }
        let atoms_shader = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("atoms.wgsl"),
            source: wgpu::ShaderSource::Wgsl(atoms_source.as_str().into()),
        });
        let flat_shader = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("flat.wgsl"),
            source: wgpu::ShaderSource::Wgsl(include_str!("../../shaders/flat.wgsl").into()),
        });
        let atoms_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("atoms layout"),
            entries: &[
                wgpu::BindGroupLayoutEntry {
                    binding: 0,
                    visibility: wgpu::ShaderStages::VERTEX_FRAGMENT,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Uniform,
                        has_dynamic_offset: false,
                        min_binding_size: None,
                    },
                    count: None,
                },
                wgpu::BindGroupLayoutEntry {
                    binding: 1,
                    visibility: wgpu::ShaderStages::VERTEX,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Storage { read_only: true },
                        has_dynamic_offset: false,
                        min_binding_size: None,
                    },
                    count: None,
                },
            ],
        });
        let flat_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("flat layout"),
            entries: &[wgpu::BindGroupLayoutEntry {
                binding: 0,
                visibility: wgpu::ShaderStages::VERTEX,
                ty: wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Uniform,
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            }],
        });
        let atom_uniform = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("atoms uniform"),
            size: std::mem::size_of::<AtomUniform>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let flat_uniform = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("flat uniform"),
            size: std::mem::size_of::<FlatUniform>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let flat_bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("flat bind group"),
            layout: &flat_layout,
            entries: &[wgpu::BindGroupEntry { binding: 0, resource: flat_uniform.as_entire_binding() }],
        });
        let atoms_pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("atoms pipeline layout"),
            bind_group_layouts: &[Some(&atoms_layout)],
            immediate_size: 0,
        });
        let flat_pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("flat pipeline layout"),
            bind_group_layouts: &[Some(&flat_layout)],
            immediate_size: 0,
        });
        let depth = |write: bool| {
            Some(wgpu::DepthStencilState {
                format: DEPTH_FORMAT,
                depth_write_enabled: Some(write),
                depth_compare: Some(wgpu::CompareFunction::LessEqual),
                stencil: wgpu::StencilState::default(),
                bias: wgpu::DepthBiasState::default(),
            })
        };
        let atoms_pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("atoms pipeline"),
            layout: Some(&atoms_pl),
            vertex: wgpu::VertexState {
                module: &atoms_shader,
                entry_point: Some("vs_main"),
                buffers: &[],
                compilation_options: Default::default(),
            },
            primitive: wgpu::PrimitiveState { topology: wgpu::PrimitiveTopology::TriangleList, ..Default::default() },
            depth_stencil: depth(true),
            multisample: wgpu::MultisampleState::default(),
            fragment: Some(wgpu::FragmentState {
                module: &atoms_shader,
                entry_point: Some("fs_main"),
                targets: &[Some(wgpu::ColorTargetState { format, blend: None, write_mask: wgpu::ColorWrites::ALL })],
                compilation_options: Default::default(),
            }),
            multiview_mask: None,
            cache: None,
        });
        let flat_vertex = wgpu::VertexBufferLayout {
            array_stride: std::mem::size_of::<FlatVertex>() as u64,
            step_mode: wgpu::VertexStepMode::Vertex,
            attributes: &wgpu::vertex_attr_array![0 => Float32x3, 1 => Float32x4],
        };
        let flat = |label: &str, topology, write_depth: bool, blend: Option<wgpu::BlendState>| {
            device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                label: Some(label),
                layout: Some(&flat_pl),
                vertex: wgpu::VertexState {
                    module: &flat_shader,
                    entry_point: Some("vs_main"),
                    buffers: &[Some(flat_vertex.clone())],
                    compilation_options: Default::default(),
                },
                primitive: wgpu::PrimitiveState { topology, ..Default::default() },
                depth_stencil: depth(write_depth),
                multisample: wgpu::MultisampleState::default(),
                fragment: Some(wgpu::FragmentState {
                    module: &flat_shader,
                    entry_point: Some("fs_main"),
                    targets: &[Some(wgpu::ColorTargetState { format, blend, write_mask: wgpu::ColorWrites::ALL })],
                    compilation_options: Default::default(),
                }),
                multiview_mask: None,
                cache: None,
            })
        };
        let lines_pipeline = flat("tank outline pipeline", wgpu::PrimitiveTopology::LineList, false, None);
        let solid_pipeline = flat("obstacle pipeline", wgpu::PrimitiveTopology::TriangleList, true, None);
        let translucent_pipeline = flat(
            "tank wall pipeline",
            wgpu::PrimitiveTopology::TriangleList,
            false,
            Some(wgpu::BlendState::ALPHA_BLENDING),
        );
        let flow_lines_pipeline = flat(
            "flow lines pipeline",
            wgpu::PrimitiveTopology::LineList,
            false,
            Some(wgpu::BlendState::ALPHA_BLENDING),
        );
        let atom_buffer = atom_storage(device, 1);
        let atom_bind = Self::bind_atoms(device, &atoms_layout, &atom_uniform, &atom_buffer);
        let splat = Splat::new(device, &atoms_source, format, depth(true));
        let plane_pipeline = flow_plane::PlanePipeline::new(device, format, depth(false));
        Renderer {
            splat,
            splat_mode: SplatMode::Auto,
            radius_px: 0.0,
            splat_bind: None,
            atoms_pipeline,
            lines_pipeline,
            solid_pipeline,
            translucent_pipeline,
            flow_lines_pipeline,
            atoms_layout,
            atom_uniform,
            flat_uniform,
            flat_bind,
            atom_buffer,
            atom_capacity: 1,
            atom_bind,
            source: AtomSource::Own,
            n_atoms: 0,
            outline: vertex_buffer(device, "tank outline", &[]),
            walls: vertex_buffer(device, "tank walls", &[]),
            obstacles: vertex_buffer(device, "obstacles", &[]),
            plane_pipeline,
            flow_plane: None,
            flow_covers: vertex_buffer(device, "flow obstacle covers", &[]),
            flow_lines: vertex_buffer(device, "flow lines", &[]),
            settings: ViewSettings::default(),
        }
    }

    fn bind_atoms(
        device: &wgpu::Device,
        layout: &wgpu::BindGroupLayout,
        uniform: &wgpu::Buffer,
        atoms: &wgpu::Buffer,
    ) -> wgpu::BindGroup {
        device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("atoms bind group"),
            layout,
            entries: &[
                wgpu::BindGroupEntry { binding: 0, resource: uniform.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 1, resource: atoms.as_entire_binding() },
            ],
        })
    }

    /// Copies `atoms` into the renderer's own buffer (grown, never shrunk, only when too
    /// small) and draws from it.
    pub fn upload_atoms(&mut self, device: &wgpu::Device, queue: &wgpu::Queue, atoms: &[[f32; 4]]) {
        let n = atoms.len() as u64;
        if n > self.atom_capacity || !matches!(self.source, AtomSource::Own) {
            if n > self.atom_capacity {
                self.atom_capacity = n.next_power_of_two();
                self.atom_buffer = atom_storage(device, self.atom_capacity);
            }
            self.atom_bind = Self::bind_atoms(device, &self.atoms_layout, &self.atom_uniform, &self.atom_buffer);
            self.source = AtomSource::Own;
        }
        let bytes: &[u8] = bytemuck::cast_slice(atoms);
        if let Some(size) = wgpu::BufferSize::new(bytes.len() as u64)
            && let Some(mut view) = queue.write_buffer_with(&self.atom_buffer, 0, size)
        {
            view.copy_from_slice(bytes);
        }
        self.n_atoms = atoms.len() as u32;
    }

    /// Draws `n` atoms from `buffer`, which another owner fills (storage usage required).
    pub fn use_external_atoms(&mut self, device: &wgpu::Device, buffer: &wgpu::Buffer, n: u32) {
        self.atom_bind = Self::bind_atoms(device, &self.atoms_layout, &self.atom_uniform, buffer);
        self.source = AtomSource::External(buffer.clone());
        self.n_atoms = n;
    }

    /// The renderer's own atom buffer (for tests and copies).
    pub fn own_atom_buffer(&self) -> &wgpu::Buffer {
        &self.atom_buffer
    }

    /// Rebuilds the tank and obstacle geometry (when the scene changes, not per frame).
    pub fn set_scene(&mut self, device: &wgpu::Device, sim_box: &SimBox, shapes: &[Shape]) {
        self.outline = vertex_buffer(device, "tank outline", &geometry::tank_outline(sim_box));
        self.walls = vertex_buffer(device, "tank walls", &geometry::tank_walls(sim_box));
        let prisms = geometry::obstacle_prisms(shapes, sim_box.lo[2] as f32, sim_box.hi[2] as f32);
        self.obstacles = vertex_buffer(device, "obstacles", &prisms);
    }

    /// Draws the top wall as the piston at `height` (None: the fixed wall at the box top).
    /// Called after [`Renderer::set_scene`], whose walls it replaces.
    pub fn set_piston(&mut self, device: &wgpu::Device, sim_box: &SimBox, height: Option<f64>) {
        self.walls = vertex_buffer(device, "tank walls", &geometry::tank_walls_at(sim_box, height));
        let mut lines = geometry::tank_outline(sim_box);
        if let Some(h) = height {
            lines.extend(geometry::piston_outline(sim_box, h));
        }
        self.outline = vertex_buffer(device, "tank outline", &lines);
    }

    /// Replaces the flow layer's geometry (None: nothing to draw). Drawn while the view's
    /// `flow.on` is set.
    pub fn set_flow(&mut self, device: &wgpu::Device, queue: &wgpu::Queue, mesh: Option<&FlowMesh>) {
        let (covers, lines) = mesh.map(|m| (&m.covers[..], &m.lines[..])).unwrap_or((&[], &[]));
        let plane = mesh.and_then(|m| m.plane.as_ref());
        self.flow_plane = plane.and_then(|p| self.plane_pipeline.upload(device, queue, &self.flat_uniform, p));
        self.flow_covers = vertex_buffer(device, "flow obstacle covers", covers);
        self.flow_lines = vertex_buffer(device, "flow lines", lines);
    }

    /// Whether this frame draws atoms (the flow layer can hide them).
    fn atoms_drawn(&self) -> bool {
        self.n_atoms > 0 && self.settings.flow.atom_brightness() > 0.0
    }

    /// Writes this frame's uniforms.
    pub fn prepare(&mut self, queue: &wgpu::Queue, camera: &Camera, size: [u32; 2], settings: &ViewSettings) {
        let aspect = size[0].max(1) as f32 / size[1].max(1) as f32;
        let (view, proj) = (camera.view(), camera.proj(aspect));
        let light = view.transform_vector3(glam::Vec3::new(0.4, 0.8, 0.5)).normalize();
        let u = AtomUniform {
            view: view.to_cols_array_2d(),
            proj: proj.to_cols_array_2d(),
            params: [settings.radius, if camera.is_ortho() { 1.0 } else { 0.0 }, settings.range[0], settings.range[1]],
            // Scenes and lattices place atoms with z ascending: drawing them in reverse when the
            // camera looks down -z draws front to back, so early depth tests skip hidden atoms.
            map: [
                settings.colour_by.palette() as u32,
                self.n_atoms,
                u32::from(camera.looks_down_z()),
                size[0].min(0xffff) | size[1].min(0xffff) << 16,
            ],
            single: settings.single_uniform(),
            light: [light.x, light.y, light.z, settings.flow.atom_brightness()],
        };
        queue.write_buffer(&self.atom_uniform, 0, bytemuck::bytes_of(&u));
        let f = FlatUniform { view_proj: (proj * view).to_cols_array_2d() };
        queue.write_buffer(&self.flat_uniform, 0, bytemuck::bytes_of(&f));
        self.settings = *settings;
        self.radius_px = settings.radius * camera.pixels_per_sigma(size[1]);
    }

    /// Whether this frame's atoms go through the splat path (see [`SplatMode`]).
    pub fn splats(&self) -> bool {
        self.splat.is_some()
            && self.atoms_drawn()
            && match self.splat_mode {
                SplatMode::Never => false,
                SplatMode::Always => true,
                SplatMode::Auto => {
                    self.n_atoms >= splat::SPLAT_MIN_ATOMS && self.radius_px <= splat::SPLAT_MAX_RADIUS_PX
                }
            }
    }

    /// Before the frame's render pass: splats the atoms into `vis` (the target's visibility
    /// buffer, None where the device lacks the splat path) when [`Renderer::splats`], so that
    /// [`Renderer::paint`] resolves them; otherwise paint draws triangles.
    pub fn encode_splat(
        &mut self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        vis: Option<&wgpu::Buffer>,
    ) {
        self.splat_bind = match (&self.splat, vis) {
            (Some(s), Some(vis)) if self.splats() => {
                let atoms = match &self.source {
                    AtomSource::Own => &self.atom_buffer,
                    AtomSource::External(b) => b,
                };
                Some(s.encode(device, encoder, &self.atom_uniform, atoms, vis, self.n_atoms))
            }
            _ => None,
        };
    }

    /// Records the draws into a pass whose targets match this renderer's formats.
    pub fn paint(&self, pass: &mut wgpu::RenderPass<'_>) {
        if self.settings.show_obstacles && self.obstacles.1 > 0 {
            pass.set_pipeline(&self.solid_pipeline);
            pass.set_bind_group(0, &self.flat_bind, &[]);
            pass.set_vertex_buffer(0, self.obstacles.0.slice(..));
            pass.draw(0..self.obstacles.1, 0..1);
        }
        if let (Some(s), Some(bind)) = (&self.splat, &self.splat_bind) {
            s.paint(pass, bind);
        } else if self.atoms_drawn() {
            pass.set_pipeline(&self.atoms_pipeline);
            pass.set_bind_group(0, &self.atom_bind, &[]);
            pass.draw(0..3 * self.n_atoms, 0..1);
        }
        if self.settings.show_walls {
            pass.set_pipeline(&self.lines_pipeline);
            pass.set_bind_group(0, &self.flat_bind, &[]);
            pass.set_vertex_buffer(0, self.outline.0.slice(..));
            pass.draw(0..self.outline.1, 0..1);
            if self.walls.1 > 0 {
                pass.set_pipeline(&self.translucent_pipeline);
                pass.set_vertex_buffer(0, self.walls.0.slice(..));
                pass.draw(0..self.walls.1, 0..1);
            }
        }
        if self.settings.flow.on {
            if let Some(plane) = &self.flow_plane {
                self.plane_pipeline.paint(pass, plane);
            }
            pass.set_bind_group(0, &self.flat_bind, &[]);
            if self.settings.show_obstacles && self.flow_covers.1 > 0 {
                pass.set_pipeline(&self.solid_pipeline);
                pass.set_vertex_buffer(0, self.flow_covers.0.slice(..));
                pass.draw(0..self.flow_covers.1, 0..1);
            }
            if self.flow_lines.1 > 0 {
                pass.set_pipeline(&self.flow_lines_pipeline);
                pass.set_vertex_buffer(0, self.flow_lines.0.slice(..));
                pass.draw(0..self.flow_lines.1, 0..1);
            }
        }
    }

    pub fn n_atoms(&self) -> u32 {
        self.n_atoms
    }
}
