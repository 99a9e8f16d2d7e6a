//! One simulation held on a wgpu device (`Engine`): its buffers, the compute pipelines of
//! `shaders/sim`, and `advance`, which records every step of a call into command buffers
//! of 16 steps (the list rebuild launched by indirect dispatch, so nothing waits for the host between
//! steps), then reads back the flags and the telemetry records once. A list too short is
//! grown and the call redone from the backup taken at its start, as on CUDA. Under the cell
//! list (`Search::Cells`) the same kernels bin and sort the atoms every step, and
//! `forces_cells` scans each atom's 27 neighbour cells (no list). Child modules:
//! `buffers.rs` the device arrays and bind groups, `state.rs` the state's bytes in each
//! precision, `transfer.rs` read-backs and checkpoints, `dye.rs` the dye tags and the step's
//! rakes (`dye_step` after each drift, only while there is dye to update).

use std::sync::Arc;

use wgpu::util::DeviceExt;

mod buffers;
mod dye;
mod flow;
mod state;
mod transfer;

use buffers::{Buffers, bind_group, storage, storage_init};

pub use super::pipelines::Pipelines;
pub use dye::DyeKernels;
pub use flow::{DeviceObstacles, field_sums};
pub use state::DeviceState;
pub use transfer::DeviceCheckpoint;

use super::device::SimDevice;
use super::layout::{self, Params, RECORD_WORDS, STEP_STRIDE, StepInfo, as_state, flag, state_bytes, state_reals};
use crate::physics::params::{SimParams, Thermostat};
use crate::physics::real::Precision;
use crate::physics::sim_box::SimBox;
use crate::rng::{Sequence, Stream};
use crate::sim::list_room::{expected_list_room, list_room};
use crate::sim::{AtomState, SimError};

/// Threads per workgroup of every atom-parallel kernel (common.wgsl `WG`).
pub const WG: u32 = 256;
/// Cells the scan takes in one workgroup (cells.wgsl `SCAN_SINGLE_MAX`).
const SCAN_SINGLE_MAX: u32 = WG * 16;
/// Threads per atom of `forces_split` (forces.wgsl `TPA`).
const TPA: u32 = 4;
/// Below this many atoms, steps without energies take the list forces with TPA threads an
/// atom: one thread an atom leaves too few warps to hide the gathers' latency in small
/// systems, and at a million atoms (H200) the split is still 8 % faster, so always for now.
const SPLIT_BELOW: usize = usize::MAX;
/// SPLIT_BELOW, or `ARGON_WGPU_SPLIT_BELOW` (for measuring both kernels).
fn split_below() -> usize {
    static AT: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *AT.get_or_init(|| std::env::var("ARGON_WGPU_SPLIT_BELOW").ok().and_then(|v| v.parse().ok()).unwrap_or(SPLIT_BELOW))
}

/// Steps recorded into one command buffer before it is submitted.
const SUBMIT_STEPS: usize = 16;

/// How pair forces are found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Search {
    /// Full neighbour lists built from a cell grid, rebuilt when an atom moved half the skin.
    List,
    /// The cell list: atoms binned into cells at least the largest cut-off wide and sorted by
    /// cell every step, each scanning its 27 neighbour cells (cellforces.wgsl).
    Cells,
    /// Every pair, positions staged in workgroup tiles (small systems, boxes too small for cells).
    AllPairs,
}

/// Raw telemetry of one record: 2 KE, pair E, pair W, external E, external W, momentum;
/// the flow record (body forces, zone sums: `flow.rs`) when those are on.
#[derive(Clone, Debug, Default)]
pub struct Record {
    pub step: u64,
    pub sums: [f64; RECORD_WORDS],
    pub flow: Vec<f64>,
}

impl Record {
    /// Record `r` of the read-back `raw` ((hi, lo) pairs), for `step`.
    fn read(raw: &[f64], r: usize, step: u64) -> Record {
        let mut sums = [0.0f64; RECORD_WORDS];
        for (q, x) in sums.iter_mut().enumerate() {
            let at = 2 * (r * RECORD_WORDS + q);
            *x = raw[at] + raw[at + 1];
        }
        Record { step, sums, flow: Vec::new() }
    }
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
    /// The main bind group and `count_cells`'s own for the `plan` buffer (see common.wgsl).
    bind: (wgpu::BindGroup, wgpu::BindGroup),
    pub consts: Params,
    /// The precision of the kernels and arrays (`pipes`' too).
    pub precision: Precision,
    pub sim_box: SimBox,
    pub n: usize,
    pub search: Search,
    pub step: u64,
    pub time: f64,
    /// Neighbour-list builds (cell-list binnings) so far (for `bench` and tests).
    pub builds: u64,
    forces_valid: bool,
    /// The backup an advance is redone from after a list overflow: positions, velocities, ids,
    /// forces, and in mixed the f32 positions.
    bak: Vec<wgpu::Buffer>,
    /// The dye tags by canonical index, while the state has a dye column (`dye.rs`).
    dye: Option<dye::DeviceDye>,
    /// Kernel times under `ARGON_WGPU_PROFILE`.
    profile: std::cell::RefCell<Option<super::profile::Profile>>,
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
        let precision = params.precision;
        debug_assert_eq!(precision, pipes.precision);
        // The cell list's cells need only the cut-off (it bins every step); the lists' the skin too.
        let range = if search == Search::Cells { params.max_cutoff() } else { params.list_range() };
        let too_small = || SimError::Invalid("the box is too small for cell lists: use all pairs".into());
        let dims = match search {
            Search::List => layout::list_cell_dims(&sim_box, range, params.max_cutoff(), n).ok_or_else(too_small)?,
            Search::Cells => layout::cell_dims(&sim_box, range).ok_or_else(too_small)?,
            Search::AllPairs => [1, 1, 1],
        };
        let max_nbrs = match search {
            Search::List => expected_list_room(range, n as f64 / sim_box.volume()),
            Search::Cells | Search::AllPairs => 0,
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
        // Positions and velocities: the largest per-atom arrays (32 bytes an atom in f64).
        let state_array = n as u64 * 4 * state_bytes(precision);
        if state_array > limit {
            return Err(SimError::Device(format!(
                "{n} atoms need {} MB per state array in {} precision; {} allows {} MB per buffer: \
                 use fewer atoms or single precision",
                state_array >> 20,
                precision.name(),
                dev.info.name,
                limit >> 20
            )));
        }
        let groups = (n as u32).div_ceil(WG).max(1);
        // Every dispatch is one row of workgroups (the list build's rows are shorter), and the
        // indirect ones are not validated (device.rs): their counts must fit the adapter.
        let row = dev.device.limits().max_compute_workgroups_per_dimension;
        let n_cells: u32 = dims.iter().product();
        if groups > row || n_cells.div_ceil(WG) > row {
            return Err(SimError::Device(format!(
                "{n} atoms in {n_cells} cells need {} workgroups in a row; {} allows {row}: use fewer atoms or a smaller box",
                groups.max(n_cells.div_ceil(WG)),
                dev.info.name
            )));
        }
        let mut consts = layout::params_block(params, &sim_box, n, dims, max_nbrs as u32, dof, groups);
        if search == Search::Cells {
            // Every atom's kick asks for the binning (it moved more than -1 squared).
            consts.half_skin_sq = -1.0;
        }
        let up = state::Upload::new(atoms, precision);
        let ids: Vec<u32> = (0..n as u32).collect();
        let masses: Vec<f64> = params.species.iter().map(|s| s.mass).collect();
        let pairs = layout::pair_bytes(&layout::pair_table(params), precision);
        let n_cells = consts.n_cells as u64;
        let nb = n as u64;
        // Bytes of a vec4<real_s> and of a vec4<real_f>.
        let (vs, vf) = (4 * state_bytes(precision), 4 * layout::force_bytes(precision));
        let d = &*dev;
        let b = Buffers {
            params: d.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("params"),
                contents: &consts.bytes(precision),
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            }),
            steps: d.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("steps"),
                size: STEP_STRIDE * 64,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
            step_slots: 64,
            pos: storage_init(d, "pos", &up.pos),
            vel: storage_init(d, "vel", &up.vel),
            force: storage(d, "force", nb * vf),
            ids: storage_init(d, "ids", bytemuck::cast_slice(&ids)),
            pos_build: storage(d, "pos_build", nb * vf),
            flags: storage(d, "flags", flag::COUNT as u64 * 4),
            cell_count: storage(d, "cell_count", n_cells * 4),
            cell_start: storage(d, "cell_start", (n_cells + 1) * 4),
            cell_of: storage(d, "cell_of", nb * 4),
            nlist: storage(d, "nlist", list_bytes),
            ncount: storage(d, "ncount", nb * 4),
            tmp_pos: storage(d, "tmp_pos", nb * vs),
            tmp_vel: storage(d, "tmp_vel", nb * vs),
            tmp_ids: storage(d, "tmp_ids", nb * 4),
            partials: storage(d, "partials", groups as u64 * 2 * vs),
            // The thermostat's factor (and where the state is f64 the relative thermostat's two).
            lambda: storage_init(d, "lambda", &state::state_bytes_of(&[1.0, 1.0, 0.0, 0.0], precision)),
            records: storage(d, "records", 16 * RECORD_WORDS as u64 * 2 * state_bytes(precision)),
            record_slots: 16,
            pairs: storage_init(d, "pairs", &pairs),
            masses: storage_init(d, "masses", &state::state_bytes_of(&masses, precision)),
            posf: up.posf.as_ref().map(|f| storage_init(d, "posf", f)),
            plan: d.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("plan"),
                size: 64,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::INDIRECT | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
            cell_fill: storage(d, "cell_fill", n_cells * 4),
            block_sums: storage(d, "block_sums", n_cells.div_ceil(WG as u64) * 4),
            flow: flow::FlowBuffers::off(d, precision),
        };
        let mut bak = vec![
            storage(d, "pos_bak", nb * vs),
            storage(d, "vel_bak", nb * vs),
            storage(d, "ids_bak", nb * 4),
            storage(d, "force_bak", nb * vf),
        ];
        if b.posf.is_some() {
            bak.push(storage(d, "posf_bak", nb * 16));
        }
        let bind = bind_group(d, &pipes, &b);
        let dye = atoms.has_dye().then(|| dye::DeviceDye::new(d, &atoms.dye, n));
        let profile = std::cell::RefCell::new(super::profile::Profile::new(&dev));
        Ok(Engine {
            dev,
            pipes,
            b,
            bind,
            consts,
            precision,
            sim_box,
            n,
            search,
            step: 0,
            time: 0.0,
            builds: 0,
            forces_valid: false,
            bak,
            dye,
            profile,
        })
    }

    /// Bind group 0 of the system, for kernels kept outside the engine (`publish.rs`).
    pub fn system_bind_group(&self) -> &wgpu::BindGroup {
        &self.bind.0
    }

    /// Device bytes of the arrays.
    pub fn bytes(&self) -> usize {
        let b = &self.b;
        let mut arrays = vec![
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
        ];
        arrays.extend(&b.posf);
        arrays.extend(&self.bak);
        arrays.iter().map(|x| x.size() as usize).sum::<usize>() + self.dye_bytes()
    }

    /// The arrays an advance backs up (`bak`'s sources, in its order).
    fn backed_up(&self) -> Vec<&wgpu::Buffer> {
        let b = &self.b;
        let mut v = vec![&b.pos, &b.vel, &b.ids, &b.force];
        v.extend(&b.posf);
        v
    }

    fn write_flags(&self) {
        let mut f = [0u32; flag::COUNT];
        f[flag::BLOWUP_AT] = u32::MAX;
        // The forces of the current state (step `self.step`) read its parity's flag.
        f[if self.step % 2 == 1 { flag::REBUILD_ODD } else { flag::REBUILD }] = u32::from(!self.forces_valid);
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
            let bytes = (slots * RECORD_WORDS) as u64 * 2 * state_bytes(self.precision);
            self.b.records = storage(&self.dev, "records", bytes);
            self.b.record_slots = slots;
            rebind = true;
        }
        if rebind {
            self.bind = bind_group(&self.dev, &self.pipes, &self.b);
        }
        self.flow_room(self.b.record_slots);
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

    /// Records the binning and sort by cell (indirect: nothing runs unless the flag asks).
    fn encode_sort(&self, pass: &mut wgpu::ComputePass<'_>) {
        pass.set_bind_group(1, &self.bind.1, &[]);
        self.run(pass, "count_cells", self.consts.n_groups);
        if self.consts.n_cells <= SCAN_SINGLE_MAX {
            self.run_indirect(pass, "scan_single", 12);
        } else {
            self.run_indirect(pass, "scan_cells", 24);
            self.run_indirect(pass, "scan_blocks", 12);
            self.run_indirect(pass, "scan_add", 24);
        }
        self.run_indirect(pass, "scatter", 0);
        self.run_indirect(pass, "order_cells", 0);
    }

    /// Records the list rebuild (indirect: nothing runs unless the flag asks) into `pass`.
    fn encode_rebuild(&self, pass: &mut wgpu::ComputePass<'_>) {
        self.encode_sort(pass);
        if super::shaders::build_probe() != 0 {
            self.run_indirect(pass, "build_probe", 36);
        }
        self.run_indirect(pass, "build_list", 36);
    }

    /// The forces of a step (`ev`: with energies and virials summed).
    fn encode_forces(&self, pass: &mut wgpu::ComputePass<'_>, ev: bool) {
        let groups = self.consts.n_groups;
        match self.search {
            Search::List => {
                self.encode_rebuild(pass);
                // (surfaces sum body forces per workgroup of WG atoms: forces_list's groups)
                if ev || self.b.flow.consts.surfaces != 0 || self.n >= split_below() {
                    self.run(pass, "forces_list", groups);
                } else {
                    self.run(pass, "forces_split", (self.n as u32).div_ceil(WG / TPA));
                }
            }
            Search::Cells => {
                self.encode_sort(pass);
                self.run(pass, "forces_cells", groups);
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
            // The tunnel's zone or the relative rescale applies the thermostat's factor.
            info.scale = u32::from(k > 0 && thermostat_on && !self.flow_applies_thermostat());
            info.thermostat_on = u32::from(thermostat_on && !self.relative_on());
            if s % every == 0 {
                info.ev = 1;
                info.record = record_steps.len() as u32;
                record_steps.push(s);
            }
            if csvr {
                // The degrees of freedom as the shaders hold them (f32 in single).
                let dof = as_state(self.consts.dof, self.precision);
                let mut rng = Sequence::new(params.seed, Stream::Csvr, 0, s * 64);
                info.csvr_rr = rng.normal();
                info.csvr_chi = rng.chi_squared(dof - 1.0);
            }
            infos.push(info);
        }
        self.ensure_room(infos.len(), record_steps.len());
        let mut bytes = vec![0u8; infos.len() * STEP_STRIDE as usize];
        for (k, info) in infos.iter().enumerate() {
            let at = k * STEP_STRIDE as usize;
            let one = info.bytes(self.precision);
            bytes[at..at + one.len()].copy_from_slice(&one);
        }
        self.dev.queue.write_buffer(&self.b.steps, 0, &bytes);
        self.write_flags();
        let mut enc = self.dev.device.create_command_encoder(&Default::default());
        // The backup the call is redone from if a list turns out too short.
        for (src, dst) in self.backed_up().into_iter().zip(&self.bak) {
            enc.copy_buffer_to_buffer(src, 0, dst, 0, src.size());
        }
        self.flow_backup(&mut enc, false);
        self.dye_backup(&mut enc, false);
        // Steps go to the GPU in command buffers of SUBMIT_STEPS, so it runs the first while
        // the host records the rest.
        let groups = self.consts.n_groups;
        let mut profiled = None;
        if let Some(p) = self.profile.borrow_mut().as_mut() {
            p.on = true;
        }
        let totals = |k: usize| infos[k].ev != 0 || thermostat_on || self.flow_needs_kick(step0 + k as u64);
        let last = infos.len() - 1;
        let mut k = 1;
        loop {
            let end = (k + SUBMIT_STEPS).min(infos.len());
            {
                let mut pass = enc
                    .begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("steps"), timestamp_writes: None });
                if k == 1 && !self.forces_valid {
                    pass.set_bind_group(0, &self.bind.0, &[0]);
                    self.encode_forces(&mut pass, false);
                }
                // A step with neither telemetry nor a rescaling thermostat needs no totals:
                // its second half kick is fused into the next step's first.
                for k in k..end {
                    pass.set_bind_group(0, &self.bind.0, &[(k as u64 * STEP_STRIDE) as u32]);
                    let fused = k > 1 && !totals(k - 1);
                    self.run(&mut pass, if fused { "kick_fused" } else { "kick_drift" }, groups);
                    // Rakes and the tunnel zone's clearing on the drifted positions.
                    self.encode_dye(&mut pass);
                    self.encode_forces(&mut pass, infos[k].ev != 0);
                    if totals(k) || k == last {
                        self.run(&mut pass, "kick_second", groups);
                    }
                    if totals(k) {
                        self.run(&mut pass, "finish_step", 1);
                    }
                    self.encode_flow_step(&mut pass, &infos[k], thermostat_on);
                }
                if end == infos.len() && thermostat_on && !self.flow_applies_thermostat() {
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
        let record_bytes = (record_steps.len() * RECORD_WORDS) as u64 * 2 * state_bytes(self.precision);
        let mut wanted = vec![(&self.b.flags, flag::COUNT as u64 * 4), (&self.b.records, record_bytes)];
        if let Some((buf, bytes)) = &profiled {
            wanted.push((buf, *bytes));
        }
        let flow_records = self.flow_records(record_steps.len());
        if let Some(w) = flow_records {
            wanted.push(w);
        }
        let mut flags = self.read_back(enc, &wanted)?;
        let flow_raw = flow_records.and_then(|_| flags.pop());
        if let (Some(p), Some(raw)) = (self.profile.borrow_mut().as_mut(), flags.get(2)) {
            p.add(raw);
        }
        let f = parse_flags(&flags[0]);
        self.builds += f.builds as u64;
        if let Some(p) = self.profile.borrow_mut().as_mut() {
            p.steps += steps;
            p.builds += f.builds as u64;
        }
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
            for (dst, src) in self.backed_up().into_iter().zip(&self.bak) {
                enc.copy_buffer_to_buffer(src, 0, dst, 0, src.size());
            }
            self.flow_backup(&mut enc, true);
            self.dye_backup(&mut enc, true);
            self.dev.queue.submit([enc.finish()]);
            self.grow_list(f.max_seen as usize)?;
            self.step = step0;
            self.time = time0;
            return self.advance(steps, params, out);
        }
        let raw = state_reals(&flags[1], self.precision);
        let first = out.len();
        out.extend(record_steps.iter().enumerate().map(|(r, &s)| Record::read(&raw, r, s)));
        if let Some(raw) = flow_raw {
            self.read_flow_records(&raw, &mut out[first..]);
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
        self.dev.queue.write_buffer(&self.b.params, 0, &self.consts.bytes(self.precision));
        self.bind = bind_group(&self.dev, &self.pipes, &self.b);
        self.forces_valid = false;
        Ok(())
    }

    /// The telemetry sums of the current state (no step taken): forces with energies, the
    /// kinetic sums of the velocities as they are.
    /// The device the engine runs on.
    pub fn device(&self) -> &Arc<SimDevice> {
        &self.dev
    }

    /// Makes sure the forces, and with them the list's cell grid and the atoms' order, are
    /// those of the current positions (after an upload or a rollback none are yet).
    pub fn ensure_built(&mut self) -> Result<(), SimError> {
        if !self.forces_valid {
            self.measure()?;
        }
        Ok(())
    }

    pub fn measure(&mut self) -> Result<Record, SimError> {
        if self.n == 0 {
            return Ok(Record { step: self.step, sums: [0.0; RECORD_WORDS], flow: Vec::new() });
        }
        loop {
            let info = StepInfo { ev: 1, record: 0, no_kick: 1, ..StepInfo::at(self.step, 0) };
            self.ensure_room(1, 1);
            self.dev.queue.write_buffer(&self.b.steps, 0, &info.bytes(self.precision));
            self.write_flags();
            let mut enc = self.dev.device.create_command_encoder(&Default::default());
            {
                let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("measure"),
                    timestamp_writes: None,
                });
                pass.set_bind_group(0, &self.bind.0, &[0]);
                self.encode_forces(&mut pass, true);
                pass.set_pipeline(self.pipes.get("kick_second"));
                pass.dispatch_workgroups(self.consts.n_groups, 1, 1);
                pass.set_pipeline(self.pipes.get("finish_step"));
                pass.dispatch_workgroups(1, 1, 1);
                self.encode_measure_flow(&mut pass);
            }
            let record_bytes = RECORD_WORDS as u64 * 2 * state_bytes(self.precision);
            let mut wanted = vec![(&self.b.flags, flag::COUNT as u64 * 4), (&self.b.records, record_bytes)];
            wanted.extend(self.measure_flow_record());
            let out = self.read_back(enc, &wanted)?;
            let f = parse_flags(&out[0]);
            if f.overflow {
                self.grow_list(f.max_seen as usize)?;
                continue;
            }
            self.forces_valid = true;
            let raw = state_reals(&out[1], self.precision);
            let mut r = Record::read(&raw, 0, self.step);
            if let Some(flow) = out.get(2) {
                self.read_measure_flow(flow, &mut r);
            }
            return Ok(r);
        }
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
