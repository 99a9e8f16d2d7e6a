//! The kernel sequence of a time step and its launch: the list rebuild, the forces, the
//! integrator (fused across steps where nothing reads the state in between), the thermostat
//! (relative to the flow: the flow bins' sums and the rescale about their means), the wind
//! tunnel's inflow zone (`tunnel.rs`) and the flow-field samples, as calls that become CUDA
//! graphs (the rebuild inside a conditional node) or launch one by one; and the split of a
//! run into graph-sized segments that end on telemetry steps, with sampling patterns that
//! recur.

use super::*;
use crate::sim::cuda::consts::FieldGridArgs;
use crate::sim::cuda::graph::{self, Builder};
use crate::sim::cuda::launch::{Call, SCAN_ITEMS, SCAN_THREADS};

/// Steps in one graph at most when it ends on a telemetry step, and in one plain graph.
pub(super) const MAX_GRAPH_STEPS: u64 = 32;
pub(super) const GRAPH_CHUNK: u64 = 16;
/// Graphs kept at once (`graph::GraphCache`, the least recently used replaced): a run whose
/// calls end where [`Engine::step_grain`] says meets about a dozen shapes, one whose calls end
/// anywhere about 50 (chunks of 60 to 95 steps from any step, telemetry every 100).
pub(super) const MAX_GRAPHS: usize = 64;

/// Splits steps step0 + 1 ..= step0 + steps into (length, telemetry on the last, samples)
/// segments: a segment ends on every telemetry step (multiples of `every`) and on no other,
/// and is at most MAX_GRAPH_STEPS long when it ends on one, else GRAPH_CHUNK, so the same few
/// graph shapes recur. With flow-field sampling every `sample_every` steps (0: none), bit s of
/// `samples` says a sample follows the segment's step s + 1, and segments also end on anchor
/// steps (multiples of the largest multiple of `sample_every` up to GRAPH_CHUNK, or of
/// `sample_every` itself when longer), so their sampling patterns recur as well.
/// Where [`segments`] cuts a run into graphs whatever its calls: the sampling anchor with
/// flow-field sampling every `sample_every` steps, else every GRAPH_CHUNK steps. Calls that
/// end on its multiples meet only the shapes of one long run.
pub fn step_grain(sample_every: u64) -> u64 {
    match sample_every {
        0 => GRAPH_CHUNK,
        s if s <= GRAPH_CHUNK => s * (GRAPH_CHUNK / s),
        s => s,
    }
}

pub(super) fn segments(step0: u64, steps: u64, every: u64, sample_every: u64) -> Vec<(u64, bool, u32)> {
    let every = every.max(1);
    let anchor = if sample_every == 0 { u64::MAX } else { step_grain(sample_every) };
    let (mut cur, end) = (step0, step0 + steps);
    let mut out = Vec::new();
    while cur < end {
        let next_ev = (cur / every + 1) * every;
        let next_anchor = if anchor == u64::MAX { u64::MAX } else { (cur / anchor + 1) * anchor };
        let (len, ev) = if next_ev <= end && next_ev - cur <= MAX_GRAPH_STEPS && next_ev <= next_anchor {
            (next_ev - cur, true)
        } else {
            ((end - cur).min(next_ev - 1 - cur).min(GRAPH_CHUNK).min(next_anchor - cur), false)
        };
        out.push((len, ev, mask_every(cur, len, sample_every)));
        cur += len;
    }
    out
}

/// A segment's graph shape (the graph cache's key): its steps, telemetry on the last, the
/// rescaling thermostat on, the tunnel's inflow zone on, the steps followed by a
/// flow-field sample (bit s: step s + 1), the pressure-tensor steps (`stress.rs`) and the
/// MSD and VACF sample steps (`transport.rs`), each bit s for step s + 1. The tunnel's values (and every other constant) are
/// held by value in the graphs: `configure` empties the cache whenever they change.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(super) struct Shape {
    pub steps: u64,
    pub ev_last: bool,
    pub thermostat_on: bool,
    pub tunnel_on: bool,
    pub samples: u32,
    pub stress: u32,
    pub msd: u32,
    pub vacf: u32,
}

/// What a force pass sums besides the forces (the kernels' `MODE_*`, kernels/forces.cu):
/// nothing, energies and the virial (telemetry), or those and the virial tensor (a
/// pressure-tensor sample).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Mode {
    NoEv,
    Ev,
    Stress,
}

impl Mode {
    /// The suffix of the kernels of this mode.
    fn suffix(self) -> &'static str {
        match self {
            Mode::NoEv => "noev",
            Mode::Ev => "ev",
            Mode::Stress => "stress",
        }
    }
}

/// Bit s set where step `step0 + s + 1` of a `len`-step segment is divisible by `every` (0:
/// none).
pub(super) fn mask_every(step0: u64, len: u64, every: u64) -> u32 {
    if every == 0 {
        return 0;
    }
    (0..len).filter(|s| (step0 + s + 1).is_multiple_of(every)).fold(0u32, |m, s| m | 1 << s)
}

/// Which kernels one step of a segment needs (see `Engine::add_step`).
#[derive(Clone, Copy)]
struct StepKind {
    /// Its kick and drift are not done by the previous step's fused pass.
    first: bool,
    /// Energies, virial and a telemetry record.
    ev: bool,
    /// A pressure-tensor sample (`stress.rs`) after the step.
    stress: bool,
    /// Its kinetic tensor from a pass of its own at the step's end (not from the integrator).
    stress_separate: bool,
    /// Berendsen or CSVR velocity scaling.
    thermostat_on: bool,
    /// The next step of the segment follows without telemetry or scaling in between.
    fuse_next: bool,
    /// The previous step's thermostat factor is still to be applied (by integrate_first).
    scale_first: bool,
    /// The next step of the segment applies this step's thermostat factor (never relative to
    /// the flow).
    scale_next: bool,
}

/// How a step's forces and integrator run. A fused step (`Fused::Out` or `Fused::Back`) is
/// one kernel, `forces_neighbors_step`: the forces without energies and integrate_fused's
/// kicks and drift in its epilogue, so the forces never go through memory. Its drift cannot
/// write the positions every thread of it still reads, so fused steps come in pairs: the
/// first (`Out`) reads the positions and writes the other array (`Engine::other_bufs`), the
/// second (`Back`) reads that one (its list rebuild and obstacle pass too) and writes the
/// positions back. Every other kernel finds the positions where it always does.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Fused {
    No,
    Out,
    Back,
}

/// Pairs up the steps that may fuse (`may[s]`: its integrator is integrate_fused with no
/// pressure tensor and no piston between the forces and it), in order: a step and
/// the next one fuse when both may.
pub(super) fn pair_fused(may: &[bool]) -> Vec<Fused> {
    let mut out = vec![Fused::No; may.len()];
    let mut s = 0;
    while s + 1 < may.len() {
        if may[s] && may[s + 1] {
            out[s] = Fused::Out;
            out[s + 1] = Fused::Back;
            s += 2;
        } else {
            s += 1;
        }
    }
    out
}

/// One step of a segment as `add_steps` lays it out.
struct Planned {
    kind: StepKind,
    fused: Fused,
    msd: bool,
    vacf: bool,
    sample: bool,
}

impl Engine {
    /// The kernels of one list rebuild, gated on the skin flag (neighbour lists) or on
    /// always (the cell list's sort); none for all pairs. `in_if`: the body of a graph's
    /// conditional node, whose `step_begin_if` already read, cleared and counted the skin
    /// flag, so the kernels run ungated and no `rebuild_done` follows.
    fn list_calls(&self, l: &Launcher, in_if: bool) -> Vec<Call> {
        let gate = match self.algorithm {
            Algorithm::Neighbors if !in_if => flag::REBUILD,
            Algorithm::Neighbors | Algorithm::Cells => flag::ALWAYS,
            _ => return Vec::new(),
        };
        let mut calls = vec![l.gated_call("cells_bin", Over::Atoms, gate)];
        // Cells few enough for one block are scanned in one launch instead of three.
        if self.consts.n_cells as u32 <= SCAN_THREADS * SCAN_ITEMS {
            calls.push(l.gated_call("cells_scan_single", Over::Scan, gate));
        } else {
            calls.push(l.gated_call("cells_scan_blocks", Over::ScanBlocks, gate));
            calls.push(l.gated_call("cells_scan_top", Over::Scan, gate));
            calls.push(l.gated_call("cells_scan_add", Over::Cells, gate));
        }
        // Which atoms may feel a surface until the next rebuild (cells: this step), set by
        // permute_copy on the sorted positions (negative: no surfaces, no flags).
        let margin = if self.algorithm == Algorithm::Neighbors { self.consts.skin_half_sq.sqrt() } else { 0.0 };
        let near_margin = if self.has_surfaces() { margin } else { -1.0 };
        calls.extend([
            l.gated_call("cells_scatter", Over::Atoms, gate),
            l.gated_call("cells_sort", Over::CellWarps, gate),
            l.gated_call("permute_copy", Over::Atoms, gate).map(|c| c.arg(&near_margin)),
        ]);
        if self.algorithm == Algorithm::Neighbors {
            // Columns through a thin slab (a periodic axis of one cell) take their own variants.
            let column = (0..3).any(|k| self.consts.periodic[k] != 0 && self.consts.cell_dims[k] == 1);
            let build = match (self.consts.list_wide != 0, column) {
                (false, false) => "nlist_build",
                (true, false) => "nlist_build_wide",
                (false, true) => "nlist_build_column",
                (true, true) => "nlist_build_wide_column",
            };
            calls.push(l.gated_call(build, Over::BuildWarps, gate));
        }
        if self.algorithm == Algorithm::Neighbors && !in_if {
            calls.push(l.gated_call("rebuild_done", Over::Single, gate));
        }
        calls.into_iter().flatten().collect()
    }

    /// The pass of obstacle forces and surface friction before each force pass, for the atoms
    /// the near-surface flags name (`kernels/surface.cu`): `obstacle_pass` where there is no
    /// friction; none where there are neither.
    pub(super) fn surface_kernel(&self) -> Option<&'static str> {
        match (self.consts.has_obstacles != 0, self.consts.friction_range > 0.0) {
            (_, true) => Some("surface_pass"),
            (true, false) => Some("obstacle_pass"),
            (false, false) => None,
        }
    }

    /// Whether there are obstacles or surface friction, whose pass takes the near-surface
    /// flags (`kernels/near.cu`).
    fn has_surfaces(&self) -> bool {
        self.surface_kernel().is_some()
    }

    /// `near_pass` (`kernels/near.cu`) on `gate` with `margin` (how far atoms may move before
    /// it runs again); none without obstacles or surface friction. With lists or cells
    /// permute_copy sets the flags instead.
    fn near_call(&self, l: &Launcher, gate: i32, margin: f64) -> Option<Call> {
        if !self.has_surfaces() {
            return None;
        }
        l.gated_call("near_pass", Over::Atoms, gate).map(|c| c.arg(&margin))
    }

    /// Queues the cell sort (every step for cells) or the gated list rebuild (neighbours).
    pub(super) fn queue_lists(&self, dev: &Device) -> Result<(), SimError> {
        dev.ctx.bind_to_thread().map_err(dev_err("binding the CUDA context"))?;
        let l = self.launcher(dev);
        for c in self.list_calls(&l, false) {
            c.launch(&dev.stream)?;
        }
        Ok(())
    }

    /// The forces: the surfaces' pass (`surface_kernel`), then the force kernel.
    fn force_calls(&self, l: &Launcher, mode: Mode) -> Vec<Call> {
        self.force_calls_into(l, mode, None)
    }

    /// `force_calls`, with the force kernel replaced by the fused step kernel writing the
    /// drifted positions to `fused_out` when given (neighbour lists only, see `Fused`).
    fn force_calls_into(&self, l: &Launcher, mode: Mode, fused_out: Option<u64>) -> Vec<Call> {
        let mut calls = Vec::new();
        if !matches!(self.algorithm, Algorithm::Neighbors | Algorithm::Cells) {
            // No rebuild to run it with (`list_calls`): every step, on these positions.
            calls.extend(self.near_call(l, flag::ALWAYS, 0.0));
        }
        calls.extend(self.surface_kernel().and_then(|k| l.plain_call(k, Over::Atoms)));
        if let Some((tiles, segs)) = self.symmetric_tiles() {
            let segs32 = segs as i32;
            calls.push(l.grid_call(self.force_kernel(mode), (tiles * segs) as u32).arg(&segs32));
            let part0 = (tiles * segs) as i32;
            let finish = match mode {
                Mode::NoEv => "allpairs_finish_noev",
                Mode::Ev => "allpairs_finish_ev",
                Mode::Stress => "allpairs_finish_stress",
            };
            calls.extend(l.plain_call(finish, Over::Atoms).map(|c| c.arg(&part0)));
        } else {
            let over = if self.algorithm == Algorithm::Neighbors { Over::Lanes } else { Over::Atoms };
            let call = match fused_out {
                Some(out) => l.plain_call("forces_neighbors_step", Over::Lanes).map(|c| c.arg(&out).arg(&1i32)),
                None => l.plain_call(self.force_kernel(mode), over),
            };
            let tiled = self.algorithm == Algorithm::AllPairsTiled;
            calls.extend(call.map(|c| if tiled { c.arg(&1i32) } else { c }));
        }
        if self.consts.piston_on != 0 {
            // The atoms' push on the piston from this force pass.
            calls.extend(l.plain_call("piston_latch", Over::Scan));
        }
        calls
    }

    /// The piston's half kick closing a step (`second`) and its half kick and drift opening
    /// the next (`first`); none without a piston.
    fn piston_call(&self, l: &Launcher, second: bool, first: bool) -> Option<Call> {
        if self.consts.piston_on == 0 {
            return None;
        }
        l.plain_call("piston_step", Over::Single).map(|c| c.arg(&i32::from(second)).arg(&i32::from(first)))
    }

    /// One time step: kick and drift (unless the previous step's fused pass did it; after the
    /// previous step's thermostat factor when it was left to this step), the
    /// step clock (with the rebuild's IF node when `cond` gives the conditional kernel and
    /// its context), the list rebuild, the forces, then the second kick: fused with the next
    /// step's first half when `fuse_next`, else with the thermostat and telemetry kernels it
    /// needs.
    fn add_step(
        &self,
        l: &Launcher,
        out: &mut Builder<'_>,
        cond: Option<(&cudarc::driver::CudaFunction, cudarc::driver::sys::CUcontext)>,
        kind: StepKind,
        fused_out: Option<u64>,
    ) -> Result<(), SimError> {
        let StepKind { first, ev, stress, stress_separate, thermostat_on, fuse_next, scale_first, scale_next } = kind;
        let kin_off = if stress && !stress_separate { self.stress_kin_off() } else { -1 };
        let track = i32::from(self.algorithm == Algorithm::Neighbors);
        if first {
            out.add(l.integrate_first_call(track, scale_first))?;
            out.add(self.piston_call(l, false, true))?;
        }
        // Rakes and the tunnel zone's clearing on the drifted positions (this step's drift:
        // integrate_first above, or the previous step's fused pass; `l` reads the array it
        // wrote), before the rebuild re-sorts them; a tunnel's fused pass did them itself.
        if first || !self.tunnel_on() {
            out.add(self.dye_call(l))?;
        }
        // `cond` comes only with neighbour lists, so there is always a rebuild to hold.
        match cond {
            Some((f, ctx)) => {
                let rebuild = self.list_calls(l, true);
                let h = out.condition(ctx)?;
                out.add(Some(Call::of("step_begin_if", f, 1, 32).arg(&self.bufs.clock).arg(&self.bufs.flags).arg(&h)))?;
                let mut body = out.if_node(ctx, h)?;
                for c in rebuild {
                    body.add(Some(c))?;
                }
            }
            None => {
                out.add(l.plain_call("step_tick", Over::Single))?;
                for c in self.list_calls(l, false) {
                    out.add(Some(c))?;
                }
            }
        }
        let mode = if stress {
            Mode::Stress
        } else if ev {
            Mode::Ev
        } else {
            Mode::NoEv
        };
        if fused_out.is_some() {
            // The whole step in one kernel (`Fused`: no piston or pressure tensor here), then
            // the bodies' latch, which reads only their force sums.
            for c in self.force_calls_into(l, mode, fused_out) {
                out.add(Some(c))?;
            }
            return out.add(self.body_latch_call(l, bodies::LATCH_ADD));
        }
        for c in self.force_calls(l, mode) {
            out.add(Some(c))?;
        }
        if fuse_next && self.tunnel_on() {
            // The tunnel's fused pass (`plan`: no thermostat, telemetry or sample here): the
            // second kick, the zone, the next step's kick, drift and dye, and the bodies'
            // latch; then the zone's latch.
            out.add(self.fused_zone_call(l, track, self.consts.n_bodies > 0))?;
            for c in self.tunnel_calls(l, false, false) {
                out.add(Some(c))?;
            }
            return Ok(());
        }
        out.add(self.body_latch_call(l, if ev { bodies::LATCH_RECORD } else { bodies::LATCH_ADD }))?;
        if fuse_next {
            out.add(self.piston_call(l, true, true))?;
            out.add(l.integrate_fused_call(track, kin_off))?;
            if stress {
                // No thermostat factor here: fused steps have no velocity-scaling thermostat.
                for c in self.stress_calls(l, false, false) {
                    out.add(Some(c))?;
                }
            }
            return Ok(());
        }
        out.add(self.piston_call(l, true, false))?;
        // With nothing to scale the velocities between them, the kick and the tunnel's zone
        // are one pass (kernels/tunnel.cu).
        let zone_in_kick = self.tunnel_on() && !thermostat_on && kin_off < 0;
        if zone_in_kick {
            out.add(l.plain_call("integrate_second_zone", Over::Atoms))?;
        } else {
            out.add(l.integrate_second_call(1, kin_off))?;
        }
        let relative = thermostat_on && self.relative_to_flow();
        if relative {
            // The bins' mass and momentum, then their means and sum |P|^2 / M for finish_step.
            out.add(l.plain_call("flow_bins_clear", Over::FlowBins))?;
            out.add(l.flow_bins_sum_call())?;
            out.add(l.plain_call("flow_bins_reduce", Over::Single))?;
        }
        if thermostat_on || ev {
            let finish =
                l.finish_step_call(self.n_blocks as i32, self.ev_blocks(), i32::from(ev), i32::from(thermostat_on));
            out.add(Some(finish))?;
            if thermostat_on && !scale_next {
                let scale = if relative { "scale_relative" } else { "scale_velocities" };
                out.add(l.plain_call(scale, Over::Atoms))?;
            }
        }
        // The tunnel's inflow zone after the thermostat's scaling (never left to the next
        // step), and its latch, which on a telemetry step corrects the record just written.
        for c in self.tunnel_calls(l, ev, !zone_in_kick) {
            out.add(Some(c))?;
        }
        // A pressure-tensor sample of the step's final velocities, as the CPU's: the
        // integrator's sums times the thermostat's factor squared, or a pass of their own.
        if stress {
            for c in self.stress_calls(l, stress_separate, thermostat_on) {
                out.add(Some(c))?;
            }
        }
        Ok(())
    }

    /// The steps of a segment of `shape`: which kernels each needs, whether it fuses (see
    /// `Fused`), and the samples after it.
    fn plan(&self, shape: Shape) -> Vec<Planned> {
        let Shape { steps, ev_last, thermostat_on, tunnel_on, samples, stress: stress_mask, msd, vacf } = shape;
        let (mut first, mut scale_first) = (true, false);
        // A tunnel's steps fuse through integrate_fused_zone (see `fuse_next` below).
        let zone_fuses = self.fuse_steps && self.consts.piston_on == 0;
        let mut out = Vec::with_capacity(steps as usize);
        for s in 0..steps {
            let ev = ev_last && s + 1 == steps;
            // A flow-field sample reads the state at the step's end, as a segment's end does.
            let sample = samples & (1 << s) != 0;
            // A pressure-tensor step whose velocities change after its integrator other than
            // by a uniform factor (relative to the flow, the tunnel's zone) sums its kinetic
            // tensor at its end: like a sample, it ends its fused pass and scales itself.
            let stress = stress_mask & (1 << s) != 0;
            let stress_separate = stress && (tunnel_on || (thermostat_on && self.relative_to_flow()));
            // MSD and VACF samples read the step's final state, as a flow-field sample does.
            let (msd_now, vacf_now) = (msd & (1 << s) != 0, vacf & (1 << s) != 0);
            let sampled = sample || stress_separate || msd_now || vacf_now;
            // The tunnel's zone runs between a step's second kick and the next one's first, on
            // scaled velocities: with it on, only steps without a thermostat or a piston fuse
            // (through integrate_fused_zone, and only with fused steps on), and steps always
            // scale themselves.
            let fuse_next = !ev && !thermostat_on && (!tunnel_on || zone_fuses) && !sampled && s + 1 < steps;
            // Inside a segment the next step's kick applies this step's velocity factor; the
            // last step scales before the state can be read. Relative to the flow the factor
            // applies about each bin's mean, which only scale_relative does: every step scales.
            let scale_next = thermostat_on && !self.relative_to_flow() && !tunnel_on && !sampled && s + 1 < steps;
            let kind =
                StepKind { first, ev, stress, stress_separate, thermostat_on, fuse_next, scale_first, scale_next };
            out.push(Planned { kind, fused: Fused::No, msd: msd_now, vacf: vacf_now, sample });
            first = !fuse_next;
            scale_first = scale_next;
        }
        // Fused steps: integrate_fused right after the force kernel (no pressure tensor or
        // piston in between), with a second array for the positions.
        let can_fuse = self.fuse_steps
            && self.algorithm == Algorithm::Neighbors
            && self.consts.piston_on == 0
            && self.other_bufs.is_some();
        let may: Vec<bool> = out.iter().map(|p| can_fuse && p.kind.fuse_next && !p.kind.stress && !tunnel_on).collect();
        for (p, f) in out.iter_mut().zip(pair_fused(&may)) {
            p.fused = f;
        }
        out
    }

    /// Steps of a segment of `shape` that run fused: in one kernel with their forces (see
    /// `Fused`), or a tunnel's whose integrator, zone and dye run in one pass with the next
    /// step's (`integrate_fused_zone`).
    pub(super) fn fused_steps(&self, shape: Shape) -> u64 {
        let tunnel = shape.tunnel_on;
        self.plan(shape).iter().filter(|p| p.fused != Fused::No || (tunnel && p.kind.fuse_next)).count() as u64
    }

    /// Adds (or, with no graph, launches) `steps` steps, telemetry on the last with `ev_last`,
    /// and a flow-field sample into the sums at `acc` after each step whose bit is set in
    /// `shape.samples` (no bit without `sample`: see `launch_steps`).
    fn add_steps(
        &self,
        dev: &Device,
        out: &mut Builder<'_>,
        shape: Shape,
        sample: Option<(&FieldGridArgs, u64)>,
    ) -> Result<(), SimError> {
        let l = self.launcher(dev);
        // The same kernels on the positions' other array (the second step of a fused pair).
        let other = self.other_bufs.unwrap_or(self.bufs);
        let lb = Launcher { b: &other, ..self.launcher(dev) };
        let cond = if self.algorithm == Algorithm::Neighbors && out.is_graph() {
            graph::conditional_kernel(dev)
        } else {
            None
        };
        let cond = cond.as_deref().map(|f| (f, dev.ctx.cu_ctx()));
        for p in self.plan(shape) {
            let (ls, fused_out) = match p.fused {
                Fused::No => (&l, None),
                Fused::Out => (&l, Some(other.posf)),
                Fused::Back => (&lb, Some(self.bufs.posf)),
            };
            self.add_step(ls, out, cond, p.kind, fused_out)?;
            for (on, is_msd) in [(p.msd, true), (p.vacf, false)] {
                if on {
                    for c in self.transport_calls(&l, is_msd) {
                        out.add(Some(c))?;
                    }
                }
            }
            if let Some((grid, acc)) = sample
                && p.sample
            {
                out.add(l.fields_sample_call(grid, acc, self.dye_ptr()))?;
            }
        }
        Ok(())
    }

    /// Launches one segment: one graph launch, or kernel by kernel when graphs are off or
    /// cannot be built. `sample` (the grid and the sums' address) is needed when the shape
    /// has samples; graphs hold it by value, so a new one empties the graph cache.
    pub(super) fn launch_steps(
        &mut self,
        dev: &Device,
        shape: Shape,
        sample: Option<(&FieldGridArgs, u64)>,
    ) -> Result<(), SimError> {
        let sample = sample.filter(|_| shape.samples != 0);
        // Without the sums to sample into, no step samples.
        let shape = Shape { samples: if sample.is_some() { shape.samples } else { 0 }, ..shape };
        if let Some((grid, acc)) = sample
            && self.graph_sample != Some((*grid, acc))
        {
            self.graphs.clear();
            self.graph_sample = Some((*grid, acc));
        }
        if self.use_graphs && !self.graphs.contains(&shape) {
            let built = Builder::new().and_then(|mut g| {
                self.add_steps(dev, &mut g, shape, sample)?;
                g.instantiate()
            });
            match built {
                Ok(g) => self.graphs.insert(shape, g),
                Err(_) => self.use_graphs = false,
            }
        }
        self.fused_count += self.fused_steps(shape);
        if let Some(g) = self.graphs.get(&shape) {
            return g.launch(&dev.stream);
        }
        self.add_steps(dev, &mut Builder::direct(&dev.stream), shape, sample)
    }

    /// Sets the device step clock to `step` with no records written.
    pub(super) fn set_clock(&mut self, dev: &Device, step: u64) -> Result<(), SimError> {
        dev.ctx.bind_to_thread().map_err(dev_err("binding the CUDA context"))?;
        if let Some(c) = self.a.clock.as_mut() {
            let words: Vec<u8> = [step, 0u64].iter().flat_map(|x| x.to_le_bytes()).collect();
            dev.stream.memcpy_htod(&words[..], c).map_err(dev_err("setting the step clock"))?;
        }
        Ok(())
    }

    /// Whether the rescaling thermostat works relative to the flow (set by `configure`, which
    /// also empties the graph cache, so cached graphs always match it).
    fn relative_to_flow(&self) -> bool {
        self.consts.relative_to_flow != 0
    }

    /// Blocks of the force kernels (each leaves one energy/virial partial).
    pub(super) fn ev_blocks(&self) -> i32 {
        let block = self.module.block as usize;
        if let Some((tiles, segs)) = self.symmetric_tiles() {
            return (tiles * segs + self.n.div_ceil(block)).max(1) as i32;
        }
        let tpa = if self.algorithm == Algorithm::Neighbors { self.consts.tpa.max(1) as usize } else { 1 };
        (self.n * tpa).div_ceil(block).max(1) as i32
    }

    /// (atom tiles, blocks per tile) of the symmetric all-pairs kernel (f32 only): enough
    /// blocks to fill the GPU at small N.
    fn symmetric_tiles(&self) -> Option<(usize, usize)> {
        if self.algorithm != Algorithm::AllPairsTiled || self.precision == Precision::Double || self.n == 0 {
            return None;
        }
        let tiles = self.n.div_ceil(self.module.block as usize);
        Some((tiles, (2048 / tiles).clamp(1, 8)))
    }

    /// The force kernel of this algorithm in `mode`.
    pub(super) fn force_kernel(&self, mode: Mode) -> &'static str {
        const NAMES: [[&str; 3]; 4] = [
            ["forces_allpairs_global_noev", "forces_allpairs_global_ev", "forces_allpairs_global_stress"],
            ["forces_cells_noev", "forces_cells_ev", "forces_cells_stress"],
            ["forces_neighbors_noev", "forces_neighbors_ev", "forces_neighbors_stress"],
            ["forces_allpairs_tiled_noev", "forces_allpairs_tiled_ev", "forces_allpairs_tiled_stress"],
        ];
        let row = match self.algorithm {
            Algorithm::AllPairsGlobal => 0,
            Algorithm::Cells => 1,
            Algorithm::Neighbors => 2,
            _ => 3,
        };
        let name = NAMES[row][mode as usize];
        debug_assert!(name.ends_with(mode.suffix()));
        name
    }

    /// Launches the forces now (outside the step loop: the body forces of this pass are
    /// dropped).
    pub(super) fn launch_forces(&self, l: &Launcher, mode: Mode) -> Result<(), SimError> {
        for c in self.force_calls(l, mode) {
            l.run(Some(c))?;
        }
        l.run(self.body_latch_call(l, bodies::LATCH_DISCARD))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fused_steps_pair_up_where_two_in_a_row_may() {
        use Fused::{Back, No, Out};
        let t = true;
        let f = false;
        assert_eq!(pair_fused(&[]), vec![]);
        assert_eq!(pair_fused(&[t]), vec![No]);
        assert_eq!(pair_fused(&[t, t]), vec![Out, Back]);
        assert_eq!(pair_fused(&[t, t, t]), vec![Out, Back, No]);
        assert_eq!(pair_fused(&[f, t, t, t, t, f]), vec![No, Out, Back, Out, Back, No]);
        assert_eq!(pair_fused(&[t, f, t, t, f, t]), vec![No, No, Out, Back, No, No]);
        // Every pattern of 10: an Out is always followed by its Back, both allowed, and the
        // positions are back in their array after every step that is not an Out.
        for bits in 0u32..1024 {
            let may: Vec<bool> = (0..10).map(|s| bits & (1 << s) != 0).collect();
            let plan = pair_fused(&may);
            let mut away = false;
            for (s, &p) in plan.iter().enumerate() {
                assert!(p == No || may[s], "{may:?}: step {s} fused without leave");
                match p {
                    Out => {
                        assert!(!away, "{may:?}: step {s}");
                        away = true;
                    }
                    Back => {
                        assert!(away, "{may:?}: step {s}");
                        away = false;
                    }
                    No => assert!(!away, "{may:?}: step {s} runs on the other array"),
                }
            }
            assert!(!away, "{may:?}: the segment ends with the positions away");
            // Greedy from the start: no two allowed steps in a row are left unfused.
            for s in 0..9 {
                assert!(!(may[s] && may[s + 1] && plan[s] == No && plan[s + 1] == No), "{may:?}: step {s}");
            }
        }
    }

    #[test]
    fn segments_end_exactly_on_telemetry_steps_and_cover_every_step() {
        for sample_every in [0, 1, 3, 5, 10, 16, 25, 50] {
            for (step0, steps, every) in
                [(0, 200, 200), (20, 200, 200), (7, 1000, 10), (3, 5, 1), (0, 31, 64), (99, 1, 100), (13, 997, 100)]
            {
                let segs = segments(step0, steps, every, sample_every);
                assert_eq!(segs.iter().map(|s| s.0).sum::<u64>(), steps, "{step0} {steps} {every}");
                let mut at = step0;
                for &(k, ev, samples) in &segs {
                    assert!((1..=MAX_GRAPH_STEPS).contains(&k));
                    // Telemetry steps inside a segment: only its last step, exactly when flagged.
                    for st in at + 1..at + k {
                        assert!(st % every != 0, "step {st} of a segment from {at} is a telemetry step");
                    }
                    assert_eq!((at + k) % every == 0, ev, "segment from {at} of {k} steps");
                    if !ev {
                        assert!(k <= GRAPH_CHUNK);
                    }
                    // A sample after exactly the steps divisible by the interval.
                    for s in 0..k {
                        let due = sample_every > 0 && (at + s + 1) % sample_every == 0;
                        assert_eq!(samples & (1 << s) != 0, due, "step {} (every {sample_every})", at + s + 1);
                    }
                    assert_eq!(samples >> k, 0);
                    at += k;
                }
            }
            // A long run repeats a handful of shapes (graphs are cached by shape), sampled or
            // not, from any starting phase.
            for step0 in [0, 20, 7, 123] {
                let shapes: std::collections::HashSet<_> =
                    segments(step0, 100_000, 200, sample_every).into_iter().skip(40).collect();
                assert!(shapes.len() <= 8, "every {sample_every} from {step0}: {shapes:?}");
            }
        }
    }
}
