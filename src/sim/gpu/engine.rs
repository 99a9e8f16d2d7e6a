//! One simulation held on a wgpu device (`Engine`): its buffers, the compute pipelines of
//! `shaders/sim`, and `advance`, which records every step of a call into one command buffer
//! (the list rebuild launched by indirect dispatch, so nothing waits for the host between
//! steps), then reads back the flags and the telemetry records once. A list too short is
//! grown and the call redone from the backup taken at its start, as on CUDA.

use std::sync::Arc;

use wgpu::util::DeviceExt;

use super::device::SimDevice;
use super::layout::{self, Pair, Params, RECORD_WORDS, STEP_STRIDE, StepInfo, flag};
use crate::physics::params::{SimParams, Thermostat};
use crate::physics::sim_box::SimBox;
use crate::rng::{Sequence, Stream};
use crate::sim::{AtomState, SimError};

/// Threads per workgroup of every atom-parallel kernel (common.wgsl `WG`).
pub const WG: u32 = 256;
/// Steps recorded into one command buffer before it is submitted.
const SUBMIT_STEPS: usize = 16;

/// How pair forces are found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Search {
    /// Full neighbour lists built from a cell grid, rebuilt when an atom moved half the skin.
    List,
    /// Every pair, positions staged in workgroup tiles (small systems, boxes too small for cells).
    AllPairs,
}

/// The compiled kernels of one module (one species count).
pub struct Pipelines {
    layout: wgpu::BindGroupLayout,
    plan_layout: wgpu::BindGroupLayout,
    kernels: std::collections::HashMap<&'static str, wgpu::ComputePipeline>,
}

/// Kernel entry points of the module.
const KERNELS: [&str; 15] = [
    "kick_drift",
    "kick_fused",
    "plan",
    "count_cells",
    "scan_cells",
    "scan_blocks",
    "scan_add",
    "scatter",
    "order_cells",
    "build_list",
    "forces_list",
    "forces_all",
    "kick_second",
    "finish_step",
    "scale_velocities",
];

impl Pipelines {
    /// Compiles the module for `ntypes` species; `checked` keeps wgpu's runtime bounds checks
    /// (tests), else the module is trusted (release speed).
    pub fn new(dev: &SimDevice, ntypes: usize, checked: bool) -> Result<Pipelines, SimError> {
        let scope = dev.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let source = super::shaders::module(ntypes);
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
                    min_binding_size: wgpu::BufferSize::new(std::mem::size_of::<StepInfo>() as u64),
                },
                count: None,
            },
        ];
        entries.extend((2..=20).chain([22, 23]).map(storage));
        let layout = dev.device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("sim layout"),
            entries: &entries,
        });
        let plan_layout = dev.device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("sim plan layout"),
            entries: &[storage(0)],
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
            .map(|&name| {
                let p = dev.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some(name),
                    layout: Some(if name == "plan" { &plan_pl } else { &pl }),
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
                "compiling the simulation shaders for {} failed: {e}",
                dev.info.name
            )));
        }
        Ok(Pipelines { layout, plan_layout, kernels })
    }

    fn get(&self, name: &str) -> &wgpu::ComputePipeline {
        &self.kernels[name]
    }
}

/// The device arrays of a system.
struct Buffers {
    params: wgpu::Buffer,
    steps: wgpu::Buffer,
    /// StepInfo slots `steps` holds.
    step_slots: usize,
    pos: wgpu::Buffer,
    vel: wgpu::Buffer,
    force: wgpu::Buffer,
    ids: wgpu::Buffer,
    pos_build: wgpu::Buffer,
    flags: wgpu::Buffer,
    cell_count: wgpu::Buffer,
    cell_start: wgpu::Buffer,
    cell_of: wgpu::Buffer,
    nlist: wgpu::Buffer,
    ncount: wgpu::Buffer,
    tmp_pos: wgpu::Buffer,
    tmp_vel: wgpu::Buffer,
    tmp_ids: wgpu::Buffer,
    partials: wgpu::Buffer,
    lambda: wgpu::Buffer,
    records: wgpu::Buffer,
    /// Records `records` holds.
    record_slots: usize,
    pairs: wgpu::Buffer,
    masses: wgpu::Buffer,
    plan: wgpu::Buffer,
    cell_fill: wgpu::Buffer,
    block_sums: wgpu::Buffer,
}

/// Device copies of positions, velocities and ids at one step (a rollback point).
pub struct DeviceCheckpoint {
    pos: wgpu::Buffer,
    vel: wgpu::Buffer,
    ids: wgpu::Buffer,
    pub n: usize,
    pub step: u64,
    pub time: f64,
}

/// Raw telemetry of one record: 2 KE, pair E, pair W, external E, external W, momentum.
#[derive(Clone, Copy, Debug, Default)]
pub struct Record {
    pub step: u64,
    pub sums: [f64; RECORD_WORDS],
}

/// What the flags said after a call.
struct Flags {
    builds: u32,
    overflow: bool,
    max_seen: u32,
    blowup: Option<u32>,
    escape: bool,
}

pub struct Engine {
    dev: Arc<SimDevice>,
    pipes: Arc<Pipelines>,
    b: Buffers,
    /// The main bind group and `plan`'s own (see common.wgsl).
    bind: (wgpu::BindGroup, wgpu::BindGroup),
    pub consts: Params,
    pub sim_box: SimBox,
    pub n: usize,
    pub search: Search,
    pub step: u64,
    pub time: f64,
    /// Neighbour-list builds so far (for `bench` and tests).
    pub builds: u64,
    forces_valid: bool,
    /// The backup an advance is redone from after a list overflow.
    bak: [wgpu::Buffer; 4],
    /// Kernel times under `ARGON_WGPU_PROFILE`.
    profile: std::cell::RefCell<Option<super::profile::Profile>>,
}

fn storage(dev: &SimDevice, label: &str, bytes: u64) -> wgpu::Buffer {
    dev.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: bytes.max(16).next_multiple_of(4),
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

fn storage_init(dev: &SimDevice, label: &str, data: &[u8]) -> wgpu::Buffer {
    let mut padded = data.to_vec();
    padded.resize(data.len().max(16).next_multiple_of(4), 0);
    dev.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some(label),
        contents: &padded,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
    })
}

/// Room in the list for `seen` neighbours: a quarter more plus 16, in whole 8s.
pub fn list_room(seen: usize) -> usize {
    (seen + seen / 4 + 16).next_multiple_of(8)
}

/// The room a liquid at number density `rho` needs within `range`.
fn expected_room(range: f64, rho: f64) -> usize {
    let count = 4.0 / 3.0 * std::f64::consts::PI * range.powi(3) * rho.max(0.85);
    list_room(count.ceil() as usize)
}

impl Engine {
    /// A system of `atoms` (canonical order; ids 0..n) in `sim_box` with `params`.
    pub fn new(
        dev: Arc<SimDevice>,
        pipes: Arc<Pipelines>,
        sim_box: SimBox,
        params: &SimParams,
        atoms: &AtomState,
        dof: f64,
        search: Search,
    ) -> Result<Engine, SimError> {
        let n = atoms.len();
        let range = params.list_range();
        let dims = match search {
            Search::List => layout::cell_dims(&sim_box, range)
                .ok_or_else(|| SimError::Invalid("the box is too small for cell lists: use all pairs".into()))?,
            Search::AllPairs => [1, 1, 1],
        };
        let max_nbrs = match search {
            Search::List => expected_room(range, n as f64 / sim_box.volume()),
            Search::AllPairs => 0,
        };
        let limit = dev.device.limits().max_storage_buffer_binding_size;
        let list_bytes = (n * max_nbrs * 4) as u64;
        if list_bytes > limit {
            return Err(SimError::Device(format!(
                "{n} atoms need a {} MB neighbour list; {} allows {} MB per buffer",
                list_bytes >> 20,
                dev.info.name,
                limit >> 20
            )));
        }
        let groups = (n as u32).div_ceil(WG).max(1);
        let consts = layout::params_block(params, &sim_box, n, dims, max_nbrs as u32, dof, groups);
        let pos: Vec<[f32; 4]> = atoms
            .positions
            .iter()
            .zip(&atoms.types)
            .map(|(p, &t)| [p[0] as f32, p[1] as f32, p[2] as f32, f32::from_bits(t)])
            .collect();
        let vel: Vec<[f32; 4]> =
            atoms.velocities.iter().map(|v| [v[0] as f32, v[1] as f32, v[2] as f32, 0.0]).collect();
        let ids: Vec<u32> = (0..n as u32).collect();
        let masses: Vec<f32> = params.species.iter().map(|s| s.mass as f32).collect();
        let pairs: Vec<Pair> = layout::pair_table(params);
        let n_cells = consts.n_cells as u64;
        let nb = n as u64;
        let d = &*dev;
        let b = Buffers {
            params: d.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("params"),
                contents: bytemuck::bytes_of(&consts),
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            }),
            steps: d.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("steps"),
                size: STEP_STRIDE * 64,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
            step_slots: 64,
            pos: storage_init(d, "pos", bytemuck::cast_slice(&pos)),
            vel: storage_init(d, "vel", bytemuck::cast_slice(&vel)),
            force: storage(d, "force", nb * 16),
            ids: storage_init(d, "ids", bytemuck::cast_slice(&ids)),
            pos_build: storage(d, "pos_build", nb * 16),
            flags: storage(d, "flags", flag::COUNT as u64 * 4),
            cell_count: storage(d, "cell_count", n_cells * 4),
            cell_start: storage(d, "cell_start", (n_cells + 1) * 4),
            cell_of: storage(d, "cell_of", nb * 4),
            nlist: storage(d, "nlist", list_bytes),
            ncount: storage(d, "ncount", nb * 4),
            tmp_pos: storage(d, "tmp_pos", nb * 16),
            tmp_vel: storage(d, "tmp_vel", nb * 16),
            tmp_ids: storage(d, "tmp_ids", nb * 4),
            partials: storage(d, "partials", groups as u64 * 32),
            lambda: storage_init(d, "lambda", bytemuck::bytes_of(&1.0f32)),
            records: storage(d, "records", 16 * RECORD_WORDS as u64 * 8),
            record_slots: 16,
            pairs: storage_init(d, "pairs", bytemuck::cast_slice(&pairs)),
            masses: storage_init(d, "masses", bytemuck::cast_slice(&masses)),
            plan: d.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("plan"),
                size: 64,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::INDIRECT | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
            cell_fill: storage(d, "cell_fill", n_cells * 4),
            block_sums: storage(d, "block_sums", n_cells.div_ceil(WG as u64) * 4),
        };
        let bak = [
            storage(d, "pos_bak", nb * 16),
            storage(d, "vel_bak", nb * 16),
            storage(d, "ids_bak", nb * 4),
            storage(d, "force_bak", nb * 16),
        ];
        let bind = bind_group(d, &pipes, &b);
        let profile = std::cell::RefCell::new(super::profile::Profile::new(&dev));
        Ok(Engine {
            dev,
            pipes,
            b,
            bind,
            consts,
            sim_box,
            n,
            search,
            step: 0,
            time: 0.0,
            builds: 0,
            forces_valid: false,
            bak,
            profile,
        })
    }

    pub fn device(&self) -> &SimDevice {
        &self.dev
    }

    /// Device bytes of the arrays.
    pub fn bytes(&self) -> usize {
        let b = &self.b;
        [
            &b.pos,
            &b.vel,
            &b.force,
            &b.ids,
            &b.pos_build,
            &b.cell_of,
            &b.nlist,
            &b.ncount,
            &b.tmp_pos,
            &b.tmp_vel,
            &b.tmp_ids,
            &b.cell_count,
            &b.cell_start,
            &b.cell_fill,
            &self.bak[0],
            &self.bak[1],
            &self.bak[2],
            &self.bak[3],
        ]
        .iter()
        .map(|x| x.size() as usize)
        .sum()
    }

    /// New constants (thermostat, temperature, dt, forces) for the same atoms and grid.
    pub fn set_consts(&mut self, params: &SimParams, dof: f64) {
        let c = self.consts;
        self.consts = layout::params_block(
            params,
            &self.sim_box,
            self.n,
            [c.dims[0], c.dims[1], c.dims[2]],
            c.max_nbrs,
            dof,
            c.n_groups,
        );
        self.dev.queue.write_buffer(&self.b.params, 0, bytemuck::bytes_of(&self.consts));
        let pairs = layout::pair_table(params);
        self.dev.queue.write_buffer(&self.b.pairs, 0, bytemuck::cast_slice(&pairs));
        self.forces_valid = false;
    }

    fn write_flags(&self) {
        let mut f = [0u32; flag::COUNT];
        f[flag::BLOWUP_AT] = u32::MAX;
        f[flag::REBUILD] = u32::from(!self.forces_valid);
        self.dev.queue.write_buffer(&self.b.flags, 0, bytemuck::cast_slice(&f));
    }

    /// Room for `count` StepInfo slots and `records` telemetry records.
    fn ensure_room(&mut self, count: usize, records: usize) {
        let mut rebind = false;
        if count > self.b.step_slots {
            let slots = count.next_power_of_two();
            self.b.steps = self.dev.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("steps"),
                size: STEP_STRIDE * slots as u64,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            self.b.step_slots = slots;
            rebind = true;
        }
        if records > self.b.record_slots {
            let slots = records.next_power_of_two();
            self.b.records = storage(&self.dev, "records", (slots * RECORD_WORDS * 8) as u64);
            self.b.record_slots = slots;
            rebind = true;
        }
        if rebind {
            self.bind = bind_group(&self.dev, &self.pipes, &self.b);
        }
    }

    /// Dispatches `name` over `groups` workgroups (timed when profiling).
    fn run(&self, pass: &mut wgpu::ComputePass<'_>, name: &'static str, groups: u32) {
        if let Some(p) = self.profile.borrow_mut().as_mut() {
            p.mark(pass, name);
        }
        pass.set_pipeline(self.pipes.get(name));
        pass.dispatch_workgroups(groups, 1, 1);
    }

    /// Dispatches `name` with the group count `plan` left at byte `offset`.
    fn run_indirect(&self, pass: &mut wgpu::ComputePass<'_>, name: &'static str, offset: u64) {
        if let Some(p) = self.profile.borrow_mut().as_mut() {
            p.mark(pass, name);
        }
        pass.set_pipeline(self.pipes.get(name));
        pass.dispatch_workgroups_indirect(&self.b.plan, offset);
    }

    /// Records the rebuild (indirect: nothing runs unless the flag asks) into `pass`.
    fn encode_rebuild(&self, pass: &mut wgpu::ComputePass<'_>) {
        pass.set_bind_group(1, &self.bind.1, &[]);
        self.run(pass, "plan", 1);
        for (name, offset) in [
            ("count_cells", 0),
            ("scan_cells", 24),
            ("scan_blocks", 12),
            ("scan_add", 24),
            ("scatter", 0),
            ("order_cells", 0),
            ("build_list", 0),
        ] {
            self.run_indirect(pass, name, offset);
        }
    }

    fn encode_forces(&self, pass: &mut wgpu::ComputePass<'_>) {
        let groups = self.consts.n_groups;
        match self.search {
            Search::List => {
                self.encode_rebuild(pass);
                self.run(pass, "forces_list", groups);
            }
            Search::AllPairs => self.run(pass, "forces_all", groups),
        }
    }

    /// Advances `steps` steps, returning a record for every step divisible by `every`.
    /// `csvr` draws the CSVR thermostat's noise for a step (None without CSVR).
    pub fn advance(&mut self, steps: u64, params: &SimParams, out: &mut Vec<Record>) -> Result<(), SimError> {
        if self.n == 0 || steps == 0 {
            self.step += steps;
            self.time += steps as f64 * params.dt;
            return Ok(());
        }
        let every = params.telemetry_every.max(1);
        let (step0, time0) = (self.step, self.time);
        let mut infos = Vec::with_capacity(steps as usize + 1);
        // Slot 0: the forces of the current state when they are not valid.
        infos.push(StepInfo::at(step0, 0));
        let mut record_steps = Vec::new();
        let csvr = matches!(params.thermostat, Thermostat::Csvr { .. });
        let thermostat_on = matches!(params.thermostat, Thermostat::Berendsen { .. } | Thermostat::Csvr { .. });
        for k in 0..steps {
            let s = step0 + k + 1;
            let mut info = StepInfo::at(s, k as u32);
            info.scale = u32::from(k > 0 && thermostat_on);
            info.thermostat_on = u32::from(thermostat_on);
            if s % every == 0 {
                info.ev = 1;
                info.record = record_steps.len() as u32;
                record_steps.push(s);
            }
            if csvr {
                let dof = self.consts.dof as f64;
                let mut rng = Sequence::new(params.seed, Stream::Csvr, 0, s * 64);
                info.csvr_rr = rng.normal() as f32;
                info.csvr_chi = rng.chi_squared(dof - 1.0) as f32;
            }
            infos.push(info);
        }
        self.ensure_room(infos.len(), record_steps.len());
        let mut bytes = vec![0u8; infos.len() * STEP_STRIDE as usize];
        for (k, info) in infos.iter().enumerate() {
            let at = k * STEP_STRIDE as usize;
            bytes[at..at + std::mem::size_of::<StepInfo>()].copy_from_slice(bytemuck::bytes_of(info));
        }
        self.dev.queue.write_buffer(&self.b.steps, 0, &bytes);
        self.write_flags();
        let mut enc = self.dev.device.create_command_encoder(&Default::default());
        // The backup the call is redone from if a list turns out too short.
        for (src, dst) in [&self.b.pos, &self.b.vel, &self.b.ids, &self.b.force].into_iter().zip(&self.bak) {
            enc.copy_buffer_to_buffer(src, 0, dst, 0, src.size());
        }
        // Steps go to the GPU in command buffers of SUBMIT_STEPS, so it runs the first while
        // the host records the rest.
        let groups = self.consts.n_groups;
        let mut profiled = None;
        if let Some(p) = self.profile.borrow_mut().as_mut() {
            p.on = true;
        }
        let totals = |k: usize| infos[k].ev != 0 || thermostat_on;
        let last = infos.len() - 1;
        let mut k = 1;
        loop {
            let end = (k + SUBMIT_STEPS).min(infos.len());
            {
                let mut pass = enc
                    .begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("steps"), timestamp_writes: None });
                if k == 1 && !self.forces_valid {
                    pass.set_bind_group(0, &self.bind.0, &[0]);
                    self.encode_forces(&mut pass);
                }
                // A step with neither telemetry nor a rescaling thermostat needs no totals:
                // its second half kick is fused into the next step's first.
                for k in k..end {
                    pass.set_bind_group(0, &self.bind.0, &[(k as u64 * STEP_STRIDE) as u32]);
                    let fused = k > 1 && !totals(k - 1);
                    self.run(&mut pass, if fused { "kick_fused" } else { "kick_drift" }, groups);
                    self.encode_forces(&mut pass);
                    if totals(k) || k == last {
                        self.run(&mut pass, "kick_second", groups);
                    }
                    if totals(k) {
                        self.run(&mut pass, "finish_step", 1);
                    }
                }
                if end == infos.len() && thermostat_on {
                    self.run(&mut pass, "scale_velocities", groups);
                }
                if let Some(p) = self.profile.borrow_mut().as_mut() {
                    p.mark(&mut pass, "end");
                }
            }
            if let Some(p) = self.profile.borrow_mut().as_mut()
                && let Some((buf, bytes)) = p.finish(&mut enc)
            {
                let dst = storage(&self.dev, "profile", bytes);
                enc.copy_buffer_to_buffer(buf, 0, &dst, 0, bytes);
                profiled = Some((dst, bytes));
            }
            k = end;
            if k == infos.len() {
                break;
            }
            let full = std::mem::replace(&mut enc, self.dev.device.create_command_encoder(&Default::default()));
            self.dev.queue.submit([full.finish()]);
        }
        let record_bytes = (record_steps.len() * RECORD_WORDS * 8) as u64;
        let mut wanted = vec![(&self.b.flags, flag::COUNT as u64 * 4), (&self.b.records, record_bytes)];
        if let Some((buf, bytes)) = &profiled {
            wanted.push((buf, *bytes));
        }
        let flags = self.read_back(enc, &wanted)?;
        if let (Some(p), Some(raw)) = (self.profile.borrow_mut().as_mut(), flags.get(2)) {
            p.add(raw);
        }
        let f = parse_flags(&flags[0]);
        self.builds += f.builds as u64;
        if let Some(k) = f.blowup {
            self.forces_valid = false;
            self.step = step0 + steps;
            let what = if f.escape {
                format!("an atom left the closed tank (more than {} sigma through a wall)", crate::sim::ESCAPE_MARGIN)
            } else {
                format!("an atom moved more than {} sigma in one step, or became NaN", crate::sim::RUNAWAY_STEP)
            };
            return Err(SimError::BlowUp {
                step: step0 + k as u64 + 1,
                what,
                hint: "Use a smaller time step (dt, e.g. 0.002), a lower temperature, or remove overlapping atoms."
                    .into(),
            });
        }
        if f.overflow {
            // Redo the whole call with room for the largest count seen.
            let mut enc = self.dev.device.create_command_encoder(&Default::default());
            for (dst, src) in [&self.b.pos, &self.b.vel, &self.b.ids, &self.b.force].into_iter().zip(&self.bak) {
                enc.copy_buffer_to_buffer(src, 0, dst, 0, src.size());
            }
            self.dev.queue.submit([enc.finish()]);
            self.grow_list(f.max_seen as usize)?;
            self.step = step0;
            self.time = time0;
            return self.advance(steps, params, out);
        }
        let raw: Vec<f32> = bytemuck::pod_collect_to_vec(&flags[1]);
        for (r, &s) in record_steps.iter().enumerate() {
            let mut sums = [0.0f64; RECORD_WORDS];
            for (q, x) in sums.iter_mut().enumerate() {
                let at = 2 * (r * RECORD_WORDS + q);
                *x = raw[at] as f64 + raw[at + 1] as f64;
            }
            out.push(Record { step: s, sums });
        }
        self.step = step0 + steps;
        self.time = time0 + steps as f64 * params.dt;
        self.forces_valid = true;
        Ok(())
    }

    /// A longer list (room for `seen` neighbours), rebuilt at the next step.
    fn grow_list(&mut self, seen: usize) -> Result<(), SimError> {
        let room = list_room(seen).max(self.consts.max_nbrs as usize + 8);
        let bytes = (self.n * room * 4) as u64;
        let limit = self.dev.device.limits().max_storage_buffer_binding_size;
        if bytes > limit {
            return Err(SimError::Device(format!(
                "the neighbour list needs {} MB; {} allows {} MB per buffer: use fewer atoms",
                bytes >> 20,
                self.dev.info.name,
                limit >> 20
            )));
        }
        self.b.nlist = storage(&self.dev, "nlist", bytes);
        self.consts.max_nbrs = room as u32;
        self.dev.queue.write_buffer(&self.b.params, 0, bytemuck::bytes_of(&self.consts));
        self.bind = bind_group(&self.dev, &self.pipes, &self.b);
        self.forces_valid = false;
        Ok(())
    }

    /// The telemetry sums of the current state (no step taken): forces with energies, the
    /// kinetic sums of the velocities as they are.
    pub fn measure(&mut self) -> Result<Record, SimError> {
        if self.n == 0 {
            return Ok(Record { step: self.step, sums: [0.0; RECORD_WORDS] });
        }
        loop {
            let info = StepInfo { ev: 1, record: 0, no_kick: 1, ..StepInfo::at(self.step, 0) };
            self.ensure_room(1, 1);
            self.dev.queue.write_buffer(&self.b.steps, 0, bytemuck::bytes_of(&info));
            self.write_flags();
            let mut enc = self.dev.device.create_command_encoder(&Default::default());
            {
                let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("measure"),
                    timestamp_writes: None,
                });
                pass.set_bind_group(0, &self.bind.0, &[0]);
                self.encode_forces(&mut pass);
                pass.set_pipeline(self.pipes.get("kick_second"));
                pass.dispatch_workgroups(self.consts.n_groups, 1, 1);
                pass.set_pipeline(self.pipes.get("finish_step"));
                pass.dispatch_workgroups(1, 1, 1);
            }
            let out = self.read_back(
                enc,
                &[(&self.b.flags, flag::COUNT as u64 * 4), (&self.b.records, (RECORD_WORDS * 8) as u64)],
            )?;
            let f = parse_flags(&out[0]);
            if f.overflow {
                self.grow_list(f.max_seen as usize)?;
                continue;
            }
            self.forces_valid = true;
            let raw: Vec<f32> = bytemuck::pod_collect_to_vec(&out[1]);
            let mut sums = [0.0f64; RECORD_WORDS];
            for (q, x) in sums.iter_mut().enumerate() {
                *x = raw[2 * q] as f64 + raw[2 * q + 1] as f64;
            }
            return Ok(Record { step: self.step, sums });
        }
    }

    /// Positions (with types), velocities, forces and ids in the device's order.
    pub fn read_state(&mut self, with_forces: bool) -> Result<DeviceState, SimError> {
        if with_forces && !self.forces_valid {
            self.measure()?;
        }
        let n = self.n as u64;
        let enc = self.dev.device.create_command_encoder(&Default::default());
        let mut wanted = vec![(&self.b.pos, n * 16), (&self.b.vel, n * 16), (&self.b.ids, n * 4)];
        if with_forces {
            wanted.push((&self.b.force, n * 16));
        }
        let raw = self.read_back(enc, &wanted)?;
        Ok(DeviceState {
            pos: bytemuck::pod_collect_to_vec(&raw[0]),
            vel: bytemuck::pod_collect_to_vec(&raw[1]),
            ids: bytemuck::pod_collect_to_vec(&raw[2]),
            force: raw.get(3).map(|f| bytemuck::pod_collect_to_vec(f)).unwrap_or_default(),
        })
    }

    /// Device copies of the state (a rollback point).
    pub fn checkpoint(&self) -> DeviceCheckpoint {
        let n = self.n as u64;
        let mut enc = self.dev.device.create_command_encoder(&Default::default());
        let copy = |enc: &mut wgpu::CommandEncoder, src: &wgpu::Buffer, bytes: u64, label| {
            let dst = storage(&self.dev, label, bytes);
            enc.copy_buffer_to_buffer(src, 0, &dst, 0, dst.size().min(src.size()));
            dst
        };
        let pos = copy(&mut enc, &self.b.pos, n * 16, "checkpoint pos");
        let vel = copy(&mut enc, &self.b.vel, n * 16, "checkpoint vel");
        let ids = copy(&mut enc, &self.b.ids, n * 4, "checkpoint ids");
        self.dev.queue.submit([enc.finish()]);
        DeviceCheckpoint { pos, vel, ids, n: self.n, step: self.step, time: self.time }
    }

    /// Back to `c` when it has this system's atom count (true); false leaves the state alone.
    pub fn restore_checkpoint(&mut self, c: &DeviceCheckpoint) -> bool {
        if c.n != self.n {
            return false;
        }
        let mut enc = self.dev.device.create_command_encoder(&Default::default());
        for (src, dst) in [(&c.pos, &self.b.pos), (&c.vel, &self.b.vel), (&c.ids, &self.b.ids)] {
            enc.copy_buffer_to_buffer(src, 0, dst, 0, src.size().min(dst.size()));
        }
        self.dev.queue.write_buffer(&self.b.lambda, 0, bytemuck::bytes_of(&1.0f32));
        self.dev.queue.submit([enc.finish()]);
        self.step = c.step;
        self.time = c.time;
        self.forces_valid = false;
        true
    }

    /// A checkpoint's state read back (for one with another atom count than the system now).
    pub fn read_checkpoint(&self, c: &DeviceCheckpoint) -> Result<DeviceState, SimError> {
        let n = c.n as u64;
        let enc = self.dev.device.create_command_encoder(&Default::default());
        let raw = self.read_back(enc, &[(&c.pos, n * 16), (&c.vel, n * 16), (&c.ids, n * 4)])?;
        Ok(DeviceState {
            pos: bytemuck::pod_collect_to_vec(&raw[0]),
            vel: bytemuck::pod_collect_to_vec(&raw[1]),
            ids: bytemuck::pod_collect_to_vec(&raw[2]),
            force: Vec::new(),
        })
    }

    /// Submits `enc` after copying each (buffer, bytes) into a mappable buffer, waits, and
    /// returns the bytes.
    fn read_back(
        &self,
        mut enc: wgpu::CommandEncoder,
        what: &[(&wgpu::Buffer, u64)],
    ) -> Result<Vec<Vec<u8>>, SimError> {
        let staging: Vec<_> = what
            .iter()
            .map(|&(src, bytes)| {
                let size = bytes.max(4).next_multiple_of(4);
                let dst = self.dev.device.create_buffer(&wgpu::BufferDescriptor {
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
        self.dev.queue.submit([enc.finish()]);
        for (dst, _) in &staging {
            dst.slice(..).map_async(wgpu::MapMode::Read, |_| {});
        }
        self.dev
            .device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| SimError::Device(format!("waiting for the GPU ({}): {e}", self.dev.info.name)))?;
        if let Some(e) = self.dev.take_error() {
            return Err(SimError::Device(format!("the GPU ({}) reported: {e}", self.dev.info.name)));
        }
        staging
            .iter()
            .map(|(dst, bytes)| {
                let v = dst
                    .slice(..)
                    .get_mapped_range()
                    .map_err(|e| SimError::Device(format!("reading back from {}: {e}", self.dev.info.name)))?
                    [..*bytes as usize]
                    .to_vec();
                dst.unmap();
                Ok(v)
            })
            .collect()
    }
}

/// A system's arrays as the device holds them (device order; `ids` gives each slot's atom).
pub struct DeviceState {
    pub pos: Vec<[f32; 4]>,
    pub vel: Vec<[f32; 4]>,
    pub ids: Vec<u32>,
    pub force: Vec<[f32; 4]>,
}

impl DeviceState {
    /// The atoms in canonical order (by id).
    pub fn atoms(&self) -> AtomState {
        let n = self.ids.len();
        let mut a = AtomState { positions: vec![[0.0; 3]; n], velocities: vec![[0.0; 3]; n], types: vec![0; n] };
        for (slot, &id) in self.ids.iter().enumerate() {
            let (p, v, i) = (self.pos[slot], self.vel[slot], id as usize);
            a.positions[i] = [p[0] as f64, p[1] as f64, p[2] as f64];
            a.velocities[i] = [v[0] as f64, v[1] as f64, v[2] as f64];
            a.types[i] = p[3].to_bits();
        }
        a
    }

    /// Forces in canonical order.
    pub fn forces(&self) -> Vec<[f64; 3]> {
        let mut out = vec![[0.0; 3]; self.ids.len()];
        for (slot, &id) in self.ids.iter().enumerate() {
            let f = self.force[slot];
            out[id as usize] = [f[0] as f64, f[1] as f64, f[2] as f64];
        }
        out
    }
}

fn parse_flags(raw: &[u8]) -> Flags {
    let f: Vec<u32> = bytemuck::pod_collect_to_vec(raw);
    Flags {
        builds: f[flag::BUILDS],
        overflow: f[flag::OVERFLOW] != 0,
        max_seen: f[flag::MAX_SEEN],
        blowup: (f[flag::BLOWUP] != 0).then_some(f[flag::BLOWUP_AT]),
        escape: f[flag::ESCAPE] != 0,
    }
}

fn bind_group(dev: &SimDevice, pipes: &Pipelines, b: &Buffers) -> (wgpu::BindGroup, wgpu::BindGroup) {
    fn whole(binding: u32, buf: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
        wgpu::BindGroupEntry { binding, resource: buf.as_entire_binding() }
    }
    let entries = [
        whole(0, &b.params),
        wgpu::BindGroupEntry {
            binding: 1,
            resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer: &b.steps,
                offset: 0,
                size: wgpu::BufferSize::new(std::mem::size_of::<StepInfo>() as u64),
            }),
        },
        whole(2, &b.pos),
        whole(3, &b.vel),
        whole(4, &b.force),
        whole(5, &b.ids),
        whole(6, &b.pos_build),
        whole(7, &b.flags),
        whole(8, &b.cell_count),
        whole(9, &b.cell_start),
        whole(10, &b.cell_of),
        whole(11, &b.nlist),
        whole(12, &b.ncount),
        whole(13, &b.tmp_pos),
        whole(14, &b.tmp_vel),
        whole(15, &b.tmp_ids),
        whole(16, &b.partials),
        whole(17, &b.lambda),
        whole(18, &b.records),
        whole(19, &b.pairs),
        whole(20, &b.masses),
        whole(22, &b.cell_fill),
        whole(23, &b.block_sums),
    ];
    let main = dev.device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("sim"),
        layout: &pipes.layout,
        entries: &entries,
    });
    let plan = dev.device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("sim plan"),
        layout: &pipes.plan_layout,
        entries: &[whole(0, &b.plan)],
    });
    (main, plan)
}
