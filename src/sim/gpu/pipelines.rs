//! The compiled kernels of the wgpu backend (`Pipelines`): the one module of `shaders/sim`
//! for a species count and precision, checked or trusted, the bind group layouts every kernel
//! shares (and `plan`'s own), and a compute pipeline per entry point, with compile errors
//! caught by an error scope rather than a panic; and `SideKernels`, the modules of kernels
//! outside the step (publish, the histograms) built against it.

use super::device::SimDevice;
use super::layout::StepInfo;
use crate::physics::real::Precision;
use crate::sim::SimError;

/// The compiled kernels of one module (one species count and precision).
pub struct Pipelines {
    /// The precision the kernels run in (the arrays bound to them must be in it too).
    pub precision: Precision,
    pub(super) layout: wgpu::BindGroupLayout,
    pub(super) plan_layout: wgpu::BindGroupLayout,
    /// Group 1 of the flow kernels (`tunnel_zone`, `flow_finish`, `fields_sample`).
    pub(super) flow_layout: wgpu::BindGroupLayout,
    /// Group 1 of `fields_dye`: the field sums (binding 2) and the dye tag words (4).
    pub(super) dye_fields_layout: wgpu::BindGroupLayout,
    kernels: std::collections::HashMap<&'static str, wgpu::ComputePipeline>,
}

/// Kernel entry points of the module.
const KERNELS: [&str; 18] = [
    "kick_drift",
    "kick_fused",
    "count_cells",
    "scan_cells",
    "scan_blocks",
    "scan_add",
    "scan_single",
    "scatter",
    "order_cells",
    "build_list",
    "build_probe",
    "forces_list",
    "forces_all",
    "forces_split",
    "forces_cells",
    "kick_second",
    "finish_step",
    "scale_velocities",
];

/// The kernels bound with the flow group as group 1 (compiled besides KERNELS).
const FLOW_KERNELS: [&str; 8] = [
    "tunnel_zone",
    "flow_finish",
    "fields_sample",
    "profile_sum",
    "profile_reduce",
    "thermo_relative",
    "scale_relative",
    "thermal_record",
];

/// The flow-field sampler's dye channel (fields.wgsl), bound with its own group 1.
pub(super) const DYE_FIELDS_KERNEL: &str = "fields_dye";

impl Pipelines {
    /// Compiles the module for `ntypes` species in `precision`; `checked` keeps wgpu's runtime
    /// bounds checks (tests), else the module is trusted (release speed).
    pub fn new(dev: &SimDevice, ntypes: usize, precision: Precision, checked: bool) -> Result<Pipelines, SimError> {
        let scope = dev.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let source = super::shaders::module(ntypes, precision);
        let desc =
            wgpu::ShaderModuleDescriptor { label: Some("sim.wgsl"), source: wgpu::ShaderSource::Wgsl(source.into()) };
        let module = if checked {
            dev.device.create_shader_module(desc)
        } else {
            // SAFETY: every kernel bounds its own indices by the atom, cell and list counts it
            // is given (tested with the checked module giving the same forces).
            unsafe { dev.device.create_shader_module_trusted(desc, wgpu::ShaderRuntimeChecks::unchecked()) }
        };
        let storage = |binding| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only: false },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let mut entries = vec![
            wgpu::BindGroupLayoutEntry {
                binding: 0,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Uniform,
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            },
            wgpu::BindGroupLayoutEntry {
                binding: 1,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Uniform,
                    has_dynamic_offset: true,
                    min_binding_size: wgpu::BufferSize::new(StepInfo::size(precision)),
                },
                count: None,
            },
        ];
        entries.extend((2..=20).chain([22, 23, 25, 26]).map(storage));
        if precision == Precision::Mixed {
            // posf
            entries.push(storage(21));
        }
        // The flow constants (flow.wgsl `F`).
        entries.push(wgpu::BindGroupLayoutEntry { binding: 24, ..entries[0] });
        let layout = dev.device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("sim layout"),
            entries: &entries,
        });
        let plan_layout = dev.device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("sim plan layout"),
            entries: &[storage(0)],
        });
        let flow_layout = dev.device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("sim flow layout"),
            entries: &[storage(0), storage(1), storage(2), storage(3)],
        });
        let flow_pl = dev.device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("sim flow pipeline layout"),
            bind_group_layouts: &[Some(&layout), Some(&flow_layout)],
            immediate_size: 0,
        });
        let read_only = |binding| wgpu::BindGroupLayoutEntry {
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only: true },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            ..storage(binding)
        };
        let dye_fields_layout = dev.device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("sim dye fields layout"),
            entries: &[storage(2), read_only(4)],
        });
        let dye_fields_pl = dev.device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("sim dye fields pipeline layout"),
            bind_group_layouts: &[Some(&layout), Some(&dye_fields_layout)],
            immediate_size: 0,
        });
        let pl = dev.device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("sim pipeline layout"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let plan_pl = dev.device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("sim plan pipeline layout"),
            bind_group_layouts: &[Some(&layout), Some(&plan_layout)],
            immediate_size: 0,
        });
        let kernels = KERNELS
            .iter()
            .chain(&FLOW_KERNELS)
            .chain(&[DYE_FIELDS_KERNEL])
            .map(|&name| {
                let p = dev.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some(name),
                    layout: Some(if name == "count_cells" {
                        &plan_pl
                    } else if name == DYE_FIELDS_KERNEL {
                        &dye_fields_pl
                    } else if FLOW_KERNELS.contains(&name) {
                        &flow_pl
                    } else {
                        &pl
                    }),
                    module: &module,
                    entry_point: Some(name),
                    compilation_options: Default::default(),
                    cache: None,
                });
                (name, p)
            })
            .collect();
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(SimError::Device(format!(
                "compiling the simulation shaders ({} precision) for {} failed: {e}",
                precision.name(),
                dev.info.name
            )));
        }
        Ok(Pipelines { precision, layout, plan_layout, flow_layout, dye_fields_layout, kernels })
    }

    pub(super) fn get(&self, name: &str) -> &wgpu::ComputePipeline {
        &self.kernels[name]
    }
}

/// Kernels outside the step (the publish kernel, the histograms): a module of their own
/// compiled against a simulation module's group-0 layout, with a group 1 of their own of one
/// writable storage buffer and one uniform.
pub struct SideKernels {
    /// The group 1 they write through.
    pub out_layout: wgpu::BindGroupLayout,
    /// A pipeline per entry point, in the order asked.
    pub pipelines: Vec<wgpu::ComputePipeline>,
}

impl SideKernels {
    /// Compiles `source` (named `what` in errors) against `pipes`' group-0 layout, its group 1
    /// a storage buffer at `bindings.0` and a uniform at `bindings.1`, with a pipeline for
    /// each of `entries`.
    pub fn new(
        dev: &SimDevice,
        pipes: &Pipelines,
        what: &str,
        source: String,
        bindings: (u32, u32),
        entries: &[&str],
    ) -> Result<SideKernels, SimError> {
        Self::with_reads(dev, pipes, what, source, bindings, &[], entries)
    }

    /// As [`SideKernels::new`], with read-only storage buffers at `reads` in group 1 too.
    pub fn with_reads(
        dev: &SimDevice,
        pipes: &Pipelines,
        what: &str,
        source: String,
        bindings: (u32, u32),
        reads: &[u32],
        entries: &[&str],
    ) -> Result<SideKernels, SimError> {
        let scope = dev.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let module = dev.device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(what),
            source: wgpu::ShaderSource::Wgsl(source.into()),
        });
        let entry = |binding, ty| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer { ty, has_dynamic_offset: false, min_binding_size: None },
            count: None,
        };
        let out_layout = dev.device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some(what),
            entries: &[
                entry(bindings.0, wgpu::BufferBindingType::Storage { read_only: false }),
                entry(bindings.1, wgpu::BufferBindingType::Uniform),
            ]
            .into_iter()
            .chain(reads.iter().map(|&b| entry(b, wgpu::BufferBindingType::Storage { read_only: true })))
            .collect::<Vec<_>>(),
        });
        let layout = dev.device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some(what),
            bind_group_layouts: &[Some(&pipes.layout), Some(&out_layout)],
            immediate_size: 0,
        });
        let pipelines = entries
            .iter()
            .map(|&name| {
                dev.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some(name),
                    layout: Some(&layout),
                    module: &module,
                    entry_point: Some(name),
                    compilation_options: Default::default(),
                    cache: None,
                })
            })
            .collect();
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(SimError::Device(format!("compiling {what} for {} failed: {e}", dev.info.name)));
        }
        Ok(SideKernels { out_layout, pipelines })
    }
}
