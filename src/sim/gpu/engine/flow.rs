//! The wind tunnel's parts of one system on the device (`FlowBuffers`): the constants block of
//! `shaders/sim/flow.wgsl`, the packed obstacle field, the per-workgroup body and zone sums,
//! the running sums and flow records `flow_finish` keeps (read back with the telemetry
//! records), the thermostat's flow bins, the flow-field sums, and their own bind group (group
//! 1 of the kernels of `tunnel.wgsl`, `fields.wgsl` and `profile.wgsl`; `fields_dye`, the
//! sample's dye channel, has one of its own with the dye tags, while the state has them).
//! `encode_flow_step` is the step loop's hook: the relative thermostat, the zone, the totals,
//! the thermal readout and a field sample after a step, each only when on (nothing at all
//! when every part is off). All of it tiny (one element) while off.

use super::super::device::SimDevice;
use super::super::flow::{FlowParams, flow_block, flow_words};
use super::super::layout::{state_bytes, state_reals};
use super::{Engine, Pipelines, Record, StepInfo, storage};
use crate::flow::Grid;
use crate::physics::obstacles::ObstacleField;
use crate::physics::params::SimParams;
use crate::physics::real::Precision;
use crate::sim::bodies::{BodyLayout, mean_forces};
use crate::sim::{SimError, Telemetry, ThermalTelemetry};

/// The obstacle field on the device: the packed words and their offsets (kept by the backend
/// across rebuilds, so an edit does not upload it again).
#[derive(Clone)]
pub struct DeviceObstacles {
    pub field: std::sync::Arc<ObstacleField>,
    pub data: wgpu::Buffer,
    pub offsets: [u32; 4],
}

impl DeviceObstacles {
    /// Packs `field` onto the device, refusing one too large for a storage binding.
    pub fn new(dev: &SimDevice, field: std::sync::Arc<ObstacleField>) -> Result<DeviceObstacles, SimError> {
        let (words, offsets) = super::super::flow::pack_obstacles(&field);
        let bytes = words.len() as u64 * 4;
        let limit = dev.device.limits().max_storage_buffer_binding_size;
        if bytes > limit {
            return Err(SimError::Device(format!(
                "the obstacle field needs {} MB; {} allows {} MB per buffer: use a coarser field or fewer shapes",
                bytes >> 20,
                dev.info.name,
                limit >> 20
            )));
        }
        let data = super::storage_init(dev, "obstacles", bytemuck::cast_slice(&words));
        Ok(DeviceObstacles { field, data, offsets })
    }
}

/// The flow parts' device arrays and what is on.
pub(in crate::sim::gpu) struct FlowBuffers {
    pub(super) consts: FlowParams,
    /// The precision of the kernels (the sums' widths).
    precision: Precision,
    pub(super) params: wgpu::Buffer,
    pub(super) obs: wgpu::Buffer,
    pub(super) body_part: wgpu::Buffer,
    /// Running sums (slot 0) and one flow record per telemetry record.
    rec: wgpu::Buffer,
    rec_bak: wgpu::Buffer,
    tunnel_part: wgpu::Buffer,
    /// The thermostat's flow bins (profile.wgsl `prof`).
    prof: wgpu::Buffer,
    /// The flow-field sums (kept by the backend across rebuilds while fields are on).
    pub(super) fields: wgpu::Buffer,
    fields_bak: wgpu::Buffer,
    pub(super) group: Option<wgpu::BindGroup>,
    /// `fields_dye`'s group 1 (the field sums and the dye tag words), while fields are on and
    /// the state has dye tags.
    dye_group: Option<wgpu::BindGroup>,
    pub(super) layout: BodyLayout,
    /// Sample the fields at steps divisible by this.
    pub(super) fields_every: Option<u64>,
}

impl FlowBuffers {
    /// Everything off (one element each), for kernels in `precision`.
    pub(super) fn off(dev: &SimDevice, precision: Precision) -> FlowBuffers {
        let consts = FlowParams { flow_words: flow_words(0), ..Default::default() };
        // One vec4<real_s>.
        let vs = 4 * state_bytes(precision);
        FlowBuffers {
            consts,
            precision,
            params: uniform(dev, &consts, precision),
            obs: storage(dev, "obstacles", 16),
            body_part: storage(dev, "body_part", vs),
            rec: storage(dev, "flow_rec", 16),
            rec_bak: storage(dev, "flow_rec_bak", 16),
            tunnel_part: storage(dev, "tunnel_part", vs),
            prof: storage(dev, "flow_profile", 16),
            fields: storage(dev, "field_sums", 16),
            fields_bak: storage(dev, "field_sums_bak", 16),
            group: None,
            dye_group: None,
            layout: BodyLayout::default(),
            fields_every: None,
        }
    }

    /// Whether `flow_finish` runs after every step (bodies or a zone to sum).
    fn per_step(&self) -> bool {
        self.consts.n_bodies > 0 || self.consts.tunnel != 0
    }

    /// Whether flow records come back (body forces, zone sums, the thermal readout).
    fn records_on(&self) -> bool {
        self.per_step() || self.consts.thermal != 0
    }

    /// Bytes of one flow record ((hi, lo) pairs of `real_s`).
    fn word_bytes(&self) -> u64 {
        self.consts.flow_words as u64 * 2 * state_bytes(self.precision)
    }
}

fn uniform(dev: &SimDevice, c: &FlowParams, precision: Precision) -> wgpu::Buffer {
    use wgpu::util::DeviceExt;
    dev.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("flow params"),
        contents: &c.bytes(precision),
        usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
    })
}

fn flow_group(dev: &SimDevice, pipes: &Pipelines, f: &FlowBuffers) -> wgpu::BindGroup {
    dev.device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("sim flow"),
        layout: &pipes.flow_layout,
        entries: &[
            wgpu::BindGroupEntry { binding: 0, resource: f.rec.as_entire_binding() },
            wgpu::BindGroupEntry { binding: 1, resource: f.tunnel_part.as_entire_binding() },
            wgpu::BindGroupEntry { binding: 2, resource: f.fields.as_entire_binding() },
            wgpu::BindGroupEntry { binding: 3, resource: f.prof.as_entire_binding() },
        ],
    })
}

/// Zeroed flow-field sums for `grid` (count, five 64-bit sums and the tagged count per bin,
/// the overflow word).
pub fn field_sums(dev: &SimDevice, grid: &Grid) -> Result<wgpu::Buffer, SimError> {
    let bytes = (grid.len() as u64 * FIELD_WORDS + 1) * 4;
    let limit = dev.device.limits().max_storage_buffer_binding_size;
    if bytes > limit {
        return Err(SimError::Invalid(format!(
            "fields: {} bins need {} MB of sums; {} allows {} MB: use larger bins (bin)",
            grid.len(),
            bytes >> 20,
            dev.info.name,
            limit >> 20
        )));
    }
    Ok(storage(dev, "field_sums", bytes))
}

/// u32 words per bin of the field sums (fields.wgsl `FIELD_WORDS`).
pub const FIELD_WORDS: u64 = 12;
/// The word of a bin's tagged atom-samples (fields.wgsl `FIELD_TAGGED`).
const FIELD_TAGGED: usize = 11;
/// The fixed-point scale of the field sums (fields.wgsl `FIELD_SCALE`).
pub const FIELD_SCALE: f64 = 65536.0;

impl Engine {
    /// Turns the flow parts on for `params` with obstacles `obs` and flow-field sums `fields`
    /// (sampled every `every` steps on `grid`); all off without any.
    pub fn configure_flow(
        &mut self,
        params: &SimParams,
        obs: Option<&DeviceObstacles>,
        fields: Option<(&Grid, &wgpu::Buffer, u64)>,
    ) -> Result<(), SimError> {
        let layout = BodyLayout::new(&self.sim_box, obs.map(|o| &*o.field));
        if layout.len() > super::super::flow::MAX_BODIES {
            return Err(SimError::Invalid(format!(
                "the wgpu backend sums the forces on up to {} bodies; this tank has {} (shapes and wall faces): \
                 merge shapes, or choose --backend cpu or cuda",
                super::super::flow::MAX_BODIES,
                layout.len()
            )));
        }
        let p = self.precision;
        let consts =
            flow_block(params, &self.sim_box, obs.map(|o| (&*o.field, o.offsets)), &layout, fields.map(|f| f.0), p);
        let d = &*self.dev;
        let groups = self.consts.n_groups as u64;
        // Bytes of a vec4<real_s>.
        let vs = 4 * state_bytes(p);
        let mut f = FlowBuffers::off(d, p);
        f.params = uniform(d, &consts, p);
        if let Some(o) = obs {
            f.obs = o.data.clone();
        }
        f.body_part = storage(d, "body_part", (groups * layout.len() as u64 * vs).max(vs));
        let words = consts.flow_words as u64 * 2 * state_bytes(p);
        f.rec = storage(d, "flow_rec", (1 + self.b.record_slots as u64) * words);
        f.rec_bak = storage(d, "flow_rec_bak", words);
        if consts.tunnel != 0 {
            f.tunnel_part = storage(d, "tunnel_part", groups * vs);
        }
        if consts.thermal != 0 {
            // Per bin 8 words of sums and the mean velocity (profile.wgsl PROF_MEAN_WORDS).
            let per_bin = if p == Precision::Single { 12 } else { 16 };
            f.prof = storage(d, "flow_profile", (per_bin * consts.pg_bins as u64 + 4) * 4);
        }
        if let Some((_, buf, every)) = fields {
            f.fields = buf.clone();
            f.fields_bak = storage(d, "field_sums_bak", buf.size());
            f.fields_every = Some(every);
        }
        f.consts = consts;
        f.layout = layout;
        f.group = Some(flow_group(d, &self.pipes, &f));
        self.b.flow = f;
        self.bind = super::bind_group(d, &self.pipes, &self.b);
        self.forces_valid = false;
        self.bind_dye_fields();
        Ok(())
    }

    /// Makes (or drops) `fields_dye`'s group for the field sums and dye tags there are now.
    pub(super) fn bind_dye_fields(&mut self) {
        let f = &self.b.flow;
        self.b.flow.dye_group = match (&self.dye_words(), f.fields_every) {
            (Some(words), Some(_)) => Some(self.dev.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("sim dye fields"),
                layout: &self.pipes.dye_fields_layout,
                entries: &[
                    wgpu::BindGroupEntry { binding: 2, resource: f.fields.as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 4, resource: words.as_entire_binding() },
                ],
            })),
            _ => None,
        };
    }

    /// Whether the tunnel's zone runs.
    pub(super) fn tunnel_on(&self) -> bool {
        self.b.flow.consts.tunnel != 0
    }

    /// Whether the thermostat is relative to the flow (`profile.wgsl` computes and applies
    /// its factor; `finish_step`'s stays 1).
    pub(super) fn relative_on(&self) -> bool {
        self.b.flow.consts.relative != 0
    }

    /// Whether the thermostat's factor is applied after the step by the flow kernels (the
    /// zone's, or the relative rescale), not by the next step's first kick.
    pub(super) fn flow_applies_thermostat(&self) -> bool {
        self.tunnel_on() || self.relative_on()
    }

    /// Whether step `step` needs its second half kick before the next step's first: the zone
    /// resets velocities after it, a field sample reads them.
    pub(super) fn flow_needs_kick(&self, step: u64) -> bool {
        self.tunnel_on() || self.b.flow.fields_every.is_some_and(|e| step.is_multiple_of(e))
    }

    /// The flow parts after step `info` (its dynamic offset already bound): the thermostat
    /// relative to the flow, the zone, the running totals, the thermal readout of a
    /// telemetry step, a field sample when due. `thermostat`: a rescaling thermostat is on.
    pub(super) fn encode_flow_step(&self, pass: &mut wgpu::ComputePass<'_>, info: &StepInfo, thermostat: bool) {
        let f = &self.b.flow;
        let step = info.step_lo as u64 | (info.step_hi as u64) << 32;
        let sample = f.fields_every.is_some_and(|e| step.is_multiple_of(e));
        let relative = thermostat && f.consts.relative != 0;
        let thermal = f.consts.thermal != 0 && info.record != super::layout::NO_RECORD;
        if !f.per_step() && !sample && !relative && !thermal {
            return;
        }
        let Some(group) = &f.group else { return };
        pass.set_bind_group(1, group, &[]);
        let groups = self.consts.n_groups;
        if relative {
            self.run(pass, "profile_sum", groups);
            self.run(pass, "profile_reduce", 1);
            self.run(pass, "thermo_relative", 1);
            self.run(pass, "scale_relative", groups);
        }
        if f.consts.tunnel != 0 {
            self.run(pass, "tunnel_zone", groups);
        }
        if f.per_step() {
            self.run(pass, "flow_finish", 1);
        }
        if thermal {
            self.run(pass, "profile_sum", groups);
            self.run(pass, "profile_reduce", 1);
            self.run(pass, "thermal_record", 1);
        }
        if sample {
            self.run(pass, "fields_sample", groups);
            if let Some(dye) = &f.dye_group {
                pass.set_bind_group(1, dye, &[]);
                self.run(pass, super::super::pipelines::DYE_FIELDS_KERNEL, groups);
            }
        }
    }

    /// A measurement's thermal readout (the flow bins of the state as it is), when on.
    pub(super) fn encode_measure_flow(&self, pass: &mut wgpu::ComputePass<'_>) {
        let f = &self.b.flow;
        let Some(group) = f.group.as_ref().filter(|_| f.consts.thermal != 0) else { return };
        pass.set_bind_group(1, group, &[]);
        self.run(pass, "profile_sum", self.consts.n_groups);
        self.run(pass, "profile_reduce", 1);
        self.run(pass, "thermal_record", 1);
    }

    /// The flow record a measurement writes (record 0), when it has a thermal readout.
    pub(super) fn measure_flow_record(&self) -> Option<(&wgpu::Buffer, u64)> {
        let f = &self.b.flow;
        (f.consts.thermal != 0).then(|| (&f.rec, 2 * f.word_bytes()))
    }

    /// Only the thermal readout of a measurement's flow record `raw` into `r` (no steps, so no
    /// body forces and nothing from the zone).
    pub(super) fn read_measure_flow(&self, raw: &[u8], r: &mut Record) {
        let mut one = [r.clone()];
        self.read_flow_records(raw, &mut one);
        let mut flow = vec![0.0; one[0].flow.len()];
        let w = flow.len();
        flow[w - 2..].copy_from_slice(&one[0].flow[w - 2..]);
        r.flow = flow;
    }

    /// Saves (or, `back`, restores) the running sums and field sums an advance may redo.
    pub(super) fn flow_backup(&self, enc: &mut wgpu::CommandEncoder, back: bool) {
        let f = &self.b.flow;
        if f.per_step() {
            let (a, b) = if back { (&f.rec_bak, &f.rec) } else { (&f.rec, &f.rec_bak) };
            enc.copy_buffer_to_buffer(a, 0, b, 0, f.word_bytes());
        }
        if f.fields_every.is_some() {
            let (a, b) = if back { (&f.fields_bak, &f.fields) } else { (&f.fields, &f.fields_bak) };
            enc.copy_buffer_to_buffer(a, 0, b, 0, a.size().min(b.size()));
        }
    }

    /// Room for `slots` flow records (with the running sums kept), after `ensure_room` grew
    /// the telemetry records.
    pub(super) fn flow_room(&mut self, slots: usize) {
        let f = &self.b.flow;
        let bytes = f.word_bytes();
        if f.rec.size() >= (1 + slots as u64) * bytes || f.group.is_none() {
            return;
        }
        let rec = storage(&self.dev, "flow_rec", (1 + slots as u64) * bytes);
        let mut enc = self.dev.device.create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(&f.rec, 0, &rec, 0, bytes);
        self.dev.queue.submit([enc.finish()]);
        self.b.flow.rec = rec;
        self.b.flow.group = Some(flow_group(&self.dev, &self.pipes, &self.b.flow));
    }

    /// Device bytes of the flow parts' arrays (the obstacle field included).
    pub fn flow_bytes(&self) -> usize {
        let f = &self.b.flow;
        [&f.obs, &f.body_part, &f.rec, &f.rec_bak, &f.tunnel_part, &f.prof, &f.fields, &f.fields_bak]
            .iter()
            .map(|x| x.size() as usize)
            .sum()
    }

    /// Forgets the steps summed for the next record (a rollback).
    pub(super) fn flow_clear(&self) {
        let f = &self.b.flow;
        if f.per_step() {
            self.dev.queue.write_buffer(&f.rec, 0, &vec![0u8; f.word_bytes() as usize]);
        }
    }

    /// The buffer and bytes of `records` flow records for a read-back (None while off).
    pub(super) fn flow_records(&self, records: usize) -> Option<(&wgpu::Buffer, u64)> {
        let f = &self.b.flow;
        (f.records_on() && records > 0).then(|| (&f.rec, (1 + records as u64) * f.word_bytes()))
    }

    /// Puts the flow records of a read-back `raw` into `out` (one per record).
    pub(super) fn read_flow_records(&self, raw: &[u8], out: &mut [Record]) {
        let words = self.b.flow.consts.flow_words as usize;
        let v = state_reals(raw, self.precision);
        for (r, rec) in out.iter_mut().enumerate() {
            let at = 2 * (1 + r) * words;
            rec.flow = (0..words).map(|q| v[at + 2 * q] + v[at + 2 * q + 1]).collect();
        }
    }

    /// Fills the body forces and the zone's sums of `t` from record `r`.
    pub fn flow_telemetry(&self, r: &Record, t: &mut Telemetry) {
        if r.flow.is_empty() {
            return;
        }
        let layout = &self.b.flow.layout;
        let nb = layout.len();
        if nb > 0 && r.flow[3 * nb] > 0.0 {
            let sums: Vec<[f64; 3]> = (0..nb).map(|b| [r.flow[3 * b], r.flow[3 * b + 1], r.flow[3 * b + 2]]).collect();
            t.body_forces = mean_forces(layout, &sums, r.flow[3 * nb] as u64);
        }
        if self.tunnel_on() {
            let z = 3 * nb + 1;
            t.tunnel_momentum = [r.flow[z], r.flow[z + 1], r.flow[z + 2]];
            t.tunnel_heat = r.flow[z + 3];
        }
        if self.b.flow.consts.thermal != 0 {
            let w = r.flow.len();
            let twice_ke = 2.0 * t.kinetic_energy;
            t.thermal = Some(ThermalTelemetry::from_sums(twice_ke, r.flow[w - 2], self.n, r.flow[w - 1] as usize));
        }
    }

    /// The flow-field sums read back and zeroed on the device: (count, mass, px, py, pz,
    /// m v^2) per bin, as `flow::Accumulator` holds them, and the tagged atom-samples per bin
    /// (its dye channel: zero without dye); an error when a term overflowed.
    pub fn take_field_sums(&self, bins: usize) -> Result<(Vec<f64>, Vec<f64>), SimError> {
        let f = &self.b.flow;
        let enc = self.dev.device.create_command_encoder(&Default::default());
        let raw = self.read_back(enc, &[(&f.fields, (bins as u64 * FIELD_WORDS + 1) * 4)])?;
        self.dev.queue.write_buffer(&f.fields, 0, &vec![0u8; raw[0].len()]);
        let w: Vec<u32> = bytemuck::pod_collect_to_vec(&raw[0]);
        if w[bins * FIELD_WORDS as usize] != 0 {
            return Err(SimError::Device(
                "fields: an atom's m |v|^2 passed the device sums' fixed-point range (32768 epsilon): \
                 the run is blowing up, or choose --backend cpu"
                    .into(),
            ));
        }
        let mut out = Vec::with_capacity(bins * 6);
        let mut tagged = Vec::with_capacity(bins);
        for b in 0..bins {
            let s = &w[b * FIELD_WORDS as usize..];
            out.push(s[0] as f64);
            for q in 0..5 {
                let v = (s[1 + 2 * q] as u64 | (s[2 + 2 * q] as u64) << 32) as i64;
                out.push(v as f64 / FIELD_SCALE);
            }
            tagged.push(s[FIELD_TAGGED] as f64);
        }
        Ok((out, tagged))
    }
}
