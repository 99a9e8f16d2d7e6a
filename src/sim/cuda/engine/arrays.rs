//! The engine's device arrays: the `Arrays` it holds (raw bytes, reals of the precision's
//! size), their allocation for the atoms (`upload_state`) and the memory check before it,
//! the pointer table (`Bufs`) the kernels are given, and the helpers every part of the
//! engine moves bytes with (alloc, upload, download, packing reals).
//!
//! Owns which arrays exist and how large they are. It launches no kernel and does not read
//! telemetry, flags or checkpoints: those belong to `telemetry` and `checkpoint`.

use cudarc::driver::{CudaSlice, DevicePtr};

use super::Engine;
use crate::physics::params::SimParams;
use crate::physics::real::Precision;
use crate::sim::cuda::consts::{Bufs, flag};
use crate::sim::cuda::device::Device;
use crate::sim::list_room::expected_list_room;
use crate::sim::{AtomState, SimError};

#[derive(Default)]
pub(super) struct Arrays {
    pub(super) pos: Option<CudaSlice<u8>>,
    pub(super) vel: Option<CudaSlice<u8>>,
    pub(super) force: Option<CudaSlice<u8>>,
    pub(super) posf: Option<CudaSlice<u8>>,
    pub(super) pos_build: Option<CudaSlice<u8>>,
    pub(super) ids: Option<CudaSlice<u8>>,
    pub(super) pos2: Option<CudaSlice<u8>>,
    pub(super) vel2: Option<CudaSlice<u8>>,
    pub(super) ids2: Option<CudaSlice<u8>>,
    pub(super) masses: Option<CudaSlice<u8>>,
    pub(super) table: Option<CudaSlice<u8>>,
    pub(super) obs_start: Option<CudaSlice<u8>>,
    pub(super) obs_cand: Option<CudaSlice<u8>>,
    pub(super) obs_prims: Option<CudaSlice<u8>>,
    pub(super) obs_verts: Option<CudaSlice<u8>>,
    pub(super) obs_force: Option<CudaSlice<u8>>,
    /// Per atom: the surface friction force (surface.cuh), only while friction is on.
    pub(super) fric_force: Option<CudaSlice<u8>>,
    /// Per atom: which surfaces it may feel until the next rebuild (`kernels/near.cu`), with
    /// obstacles or surface friction.
    pub(super) near: Option<CudaSlice<u8>>,
    pub(super) cell_count: Option<CudaSlice<u8>>,
    pub(super) cell_start: Option<CudaSlice<u8>>,
    pub(super) cell_rank: Option<CudaSlice<u8>>,
    pub(super) cell_of: Option<CudaSlice<u8>>,
    pub(super) slot: Option<CudaSlice<u8>>,
    pub(super) order: Option<CudaSlice<u8>>,
    pub(super) nlist: Option<CudaSlice<u8>>,
    pub(super) ncount: Option<CudaSlice<u8>>,
    pub(super) partials_ev: Option<CudaSlice<u8>>,
    pub(super) partials_kin: Option<CudaSlice<u8>>,
    pub(super) lambda: Option<CudaSlice<u8>>,
    pub(super) records: Option<CudaSlice<u8>>,
    pub(super) flags: Option<CudaSlice<u8>>,
    pub(super) blowup_step: Option<CudaSlice<u8>>,
    pub(super) clock: Option<CudaSlice<u8>>,
    pub(super) scan_sums: Option<CudaSlice<u8>>,
    pub(super) pair_acc: Option<CudaSlice<u8>>,
    pub(super) piston: Option<CudaSlice<u8>>,
    pub(super) piston_part: Option<CudaSlice<u8>>,
    /// The flow bins (while the thermostat works relative to the flow or telemetry reports
    /// the thermal temperature, `SimParams::thermal_readout`): fixed-point
    /// sums, means, and [sum |P|^2 / M, occupied bins].
    pub(super) flow_sums: Option<CudaSlice<u8>>,
    pub(super) flow_mean: Option<CudaSlice<u8>>,
    pub(super) flow_stats: Option<CudaSlice<u8>>,
    // Body forces (engine/bodies.rs), only while there are bodies.
    pub(super) body_fix: Option<CudaSlice<u8>>,
    pub(super) body_sum: Option<CudaSlice<u8>>,
    pub(super) body_records: Option<CudaSlice<u8>>,
    pub(super) body_sum_bak: Option<CudaSlice<u8>>,
    // The tunnel's inflow-zone bookkeeping (engine/tunnel.rs), only while the tunnel is on.
    pub(super) tunnel_part: Option<CudaSlice<u8>>,
    pub(super) tunnel_sum: Option<CudaSlice<u8>>,
    pub(super) tunnel_sum_bak: Option<CudaSlice<u8>>,
    pub(super) tunnel_records: Option<CudaSlice<u8>>,
    /// Per cell, the first atom of each of its 27 neighbour cells (16-bit list entries).
    pub(super) nb_first: Option<CudaSlice<u8>>,
    /// In mixed precision with neighbour lists, the f32 positions' other array for fused steps.
    pub(super) posf_alt: Option<CudaSlice<u8>>,
    // Pressure-tensor sampling (engine/stress.rs), only while it is on.
    pub(super) partials_stress: Option<CudaSlice<u8>>,
    pub(super) stress_records: Option<CudaSlice<u8>>,
    // Copies taken at the start of an advance, to redo it after a list overflow.
    pub(super) pos_bak: Option<CudaSlice<u8>>,
    pub(super) vel_bak: Option<CudaSlice<u8>>,
    pub(super) ids_bak: Option<CudaSlice<u8>>,
    pub(super) force_bak: Option<CudaSlice<u8>>,
    pub(super) piston_bak: Option<CudaSlice<u8>>,
}

/// A device array that may not be allocated yet.
pub(super) type Slot = Option<CudaSlice<u8>>;

impl Arrays {
    /// Bytes of every array allocated now.
    pub(super) fn bytes(&self) -> usize {
        let all: [&Slot; 57] = [
            &self.pos,
            &self.vel,
            &self.force,
            &self.posf,
            &self.pos_build,
            &self.ids,
            &self.pos2,
            &self.vel2,
            &self.ids2,
            &self.masses,
            &self.table,
            &self.obs_start,
            &self.obs_cand,
            &self.obs_prims,
            &self.obs_verts,
            &self.obs_force,
            &self.fric_force,
            &self.near,
            &self.cell_count,
            &self.cell_start,
            &self.cell_rank,
            &self.cell_of,
            &self.slot,
            &self.order,
            &self.nlist,
            &self.ncount,
            &self.partials_ev,
            &self.partials_kin,
            &self.lambda,
            &self.records,
            &self.flags,
            &self.blowup_step,
            &self.clock,
            &self.scan_sums,
            &self.pair_acc,
            &self.piston,
            &self.piston_part,
            &self.flow_sums,
            &self.flow_mean,
            &self.flow_stats,
            &self.body_fix,
            &self.body_sum,
            &self.body_records,
            &self.body_sum_bak,
            &self.tunnel_part,
            &self.tunnel_sum,
            &self.tunnel_sum_bak,
            &self.tunnel_records,
            &self.nb_first,
            &self.posf_alt,
            &self.partials_stress,
            &self.stress_records,
            &self.pos_bak,
            &self.vel_bak,
            &self.ids_bak,
            &self.force_bak,
            &self.piston_bak,
        ];
        all.iter().map(|s| s.as_ref().map_or(0, |s| s.len())).sum()
    }
}

/// Bytes of one real of the state and of the force arithmetic.
pub(super) fn real_sizes(p: Precision) -> (usize, usize) {
    match p {
        Precision::Single => (4, 4),
        Precision::Mixed => (8, 4),
        Precision::Double => (8, 8),
    }
}

/// Bytes the device arrays of `n` atoms need (for the memory check before allocating).
fn bytes_needed(n: usize, precision: Precision, max_nbrs: usize, with_list: bool) -> usize {
    let (s, f) = real_sizes(precision);
    // The last 32: per-atom obstacle forces, when there are obstacles; 8 for the cells'
    // neighbour tables. List entries take 16 bits (32 only where a cell is too full).
    // The build positions (`pos_build`) are kept in force precision, as the list is built.
    // Mixed keeps f32 positions besides the state, and with a list a second array of them
    // for fused steps.
    let mixed = if precision == Precision::Mixed { if with_list { 32 } else { 16 } } else { 0 };
    let per_atom = 6 * 4 * s + 3 * 4 * f + mixed + 7 * 4 + 16 + 32 + 8;
    n * per_atom + if with_list { n * max_nbrs * 2 } else { 0 } + (1 << 20)
}

/// Refuses `n` atoms when their arrays would not fit in 90% of `free_bytes`, naming the
/// largest system that would.
fn memory_check(
    n: usize,
    precision: Precision,
    list_range: f64,
    density: f64,
    free_bytes: usize,
    device: &str,
) -> Result<(), SimError> {
    let max_nbrs = expected_list_room(list_range, density);
    let needed = bytes_needed(n, precision, max_nbrs, true);
    let usable = free_bytes as f64 * 0.9;
    if needed as f64 > usable {
        let per_atom = (bytes_needed(1_000_000, precision, max_nbrs, true) - bytes_needed(0, precision, max_nbrs, true))
            as f64
            / 1e6;
        return Err(SimError::OutOfMemory {
            what: format!("{n} atoms in {} precision on {device}", precision.name()),
            needed_mb: needed as f64 / 1e6,
            available_mb: usable / 1e6,
            max_atoms: ((usable - (1 << 20) as f64).max(0.0) / per_atom) as usize,
        });
    }
    Ok(())
}

pub(super) fn dev_err(what: &str) -> impl Fn(cudarc::driver::DriverError) -> SimError + '_ {
    move |e| SimError::Device(format!("{what}: {e}"))
}

pub(super) fn alloc(dev: &Device, bytes: usize, what: &str) -> Result<CudaSlice<u8>, SimError> {
    dev.stream.alloc_zeros::<u8>(bytes.max(16)).map_err(dev_err(what))
}

pub(super) fn upload(dev: &Device, data: &[u8], what: &str) -> Result<CudaSlice<u8>, SimError> {
    let mut s = alloc(dev, data.len(), what)?;
    if !data.is_empty() {
        dev.stream.memcpy_htod(data, &mut s).map_err(dev_err(what))?;
    }
    Ok(s)
}

pub(super) fn download(dev: &Device, s: &Option<CudaSlice<u8>>, bytes: usize, what: &str) -> Result<Vec<u8>, SimError> {
    let s = s.as_ref().ok_or_else(|| SimError::Device(format!("{what}: not allocated")))?;
    let mut out = vec![0u8; bytes];
    if bytes > 0 {
        dev.stream.memcpy_dtoh(&s.slice(0..bytes), &mut out).map_err(dev_err(what))?;
    }
    dev.stream.synchronize().map_err(dev_err(what))?;
    Ok(out)
}

/// The rows of a device ring (`cap` rows of `row_bytes`) that samples `steps` (increasing,
/// sample step s at row (s / every) % cap, at most `cap` of them) were written to: one copy of
/// the span they cover, or of the whole ring when they wrap past its end. Returns the row
/// each step's bytes start at in the copy, with the copy as f64 words.
pub(super) fn download_ring(
    dev: &Device,
    ring: &CudaSlice<u8>,
    (cap, row_bytes): (usize, usize),
    steps: &[u64],
    every: u64,
    what: &str,
) -> Result<(Vec<usize>, Vec<f64>), SimError> {
    let row = |s: u64| ((s / every.max(1)) % cap as u64) as usize;
    let (Some(&first), Some(&last)) = (steps.first(), steps.last()) else { return Ok((Vec::new(), Vec::new())) };
    let (r0, r1) = (row(first), row(last));
    let (lo, hi) = if r0 <= r1 && steps.len() <= cap { (r0, r1 + 1) } else { (0, cap) };
    let mut raw = vec![0u8; (hi - lo) * row_bytes];
    dev.stream.memcpy_dtoh(&ring.slice(lo * row_bytes..hi * row_bytes), &mut raw).map_err(dev_err(what))?;
    dev.stream.synchronize().map_err(dev_err(what))?;
    Ok((steps.iter().map(|&s| row(s) - lo).collect(), unpack(&raw, 8)))
}

fn ptr(dev: &Device, s: &Option<CudaSlice<u8>>) -> u64 {
    match s {
        Some(s) => s.device_ptr(&dev.stream).0,
        None => 0,
    }
}

fn pack(values: impl Iterator<Item = f64>, size: usize) -> Vec<u8> {
    if size == 4 {
        values.flat_map(|x| (x as f32).to_le_bytes()).collect()
    } else {
        values.flat_map(|x| x.to_le_bytes()).collect()
    }
}

pub(super) fn unpack(bytes: &[u8], size: usize) -> Vec<f64> {
    if size == 4 {
        bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64).collect()
    } else {
        bytes.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes"))).collect()
    }
}

impl Engine {
    /// Bytes of every device array the engine holds now.
    pub fn array_bytes(&self) -> usize {
        self.a.bytes() + self.dye_bytes()
    }

    pub(super) fn check_memory(&self, dev: &Device, params: &SimParams) -> Result<(), SimError> {
        let (free, _total) = dev.ctx.mem_get_info().map_err(dev_err("reading free GPU memory"))?;
        let density = self.n as f64 / self.sim_box.volume();
        memory_check(self.n, self.precision, params.list_range(), density, free, &dev.name)
    }

    pub(super) fn upload_state(&mut self, dev: &Device, atoms: &AtomState) -> Result<(), SimError> {
        let (s, f) = real_sizes(self.precision);
        let n = self.n;
        // x, y, z and species per atom, packed once in state and once in force precision.
        let rows = || atoms.positions.iter().zip(&atoms.types).flat_map(|(p, &t)| [p[0], p[1], p[2], t as f64]);
        let pos = pack(rows(), s);
        let vel = pack(atoms.velocities.iter().flat_map(|v| [v[0], v[1], v[2], 0.0]), s);
        let ids: Vec<u8> = (0..n as u32).flat_map(|i| i.to_le_bytes()).collect();
        self.a.pos = Some(upload(dev, &pos, "uploading positions")?);
        self.a.vel = Some(upload(dev, &vel, "uploading velocities")?);
        self.a.ids = Some(upload(dev, &ids, "uploading atom ids")?);
        // The build positions in force precision (the f32 copy in mixed), as the list is built.
        let posf = pack(rows(), f);
        self.a.pos_build = Some(upload(dev, &posf, "uploading positions")?);
        self.a.posf =
            if self.precision == Precision::Mixed { Some(upload(dev, &posf, "uploading positions")?) } else { None };
        self.a.force = Some(alloc(dev, n * 4 * f, "allocating forces")?);
        self.a.pos2 = Some(alloc(dev, n * 4 * s, "allocating scratch")?);
        self.a.vel2 = Some(alloc(dev, n * 4 * s, "allocating scratch")?);
        self.a.ids2 = Some(alloc(dev, n * 4, "allocating scratch")?);
        self.a.cell_of = Some(alloc(dev, n * 4, "allocating cell indices")?);
        self.a.slot = Some(alloc(dev, n * 4, "allocating cell slots")?);
        self.a.order = Some(alloc(dev, n * 4, "allocating the sort order")?);
        self.a.ncount = Some(alloc(dev, n * 4, "allocating neighbour counts")?);
        self.a.lambda = Some(alloc(dev, 8, "allocating the thermostat factor")?);
        let mut flags = [0i32; flag::COUNT];
        flags[flag::REBUILD as usize] = 1;
        flags[flag::ALWAYS as usize] = 1;
        let fb: Vec<u8> = flags.iter().flat_map(|x| x.to_le_bytes()).collect();
        self.a.flags = Some(upload(dev, &fb, "uploading flags")?);
        self.a.blowup_step = Some(upload(dev, &u64::MAX.to_le_bytes(), "uploading flags")?);
        self.a.clock = Some(alloc(dev, 16, "allocating the step clock")?);
        self.forces_valid = false;
        Ok(())
    }

    pub(super) fn refresh_bufs(&mut self, dev: &Device) {
        self.graphs.clear();
        let a = &self.a;
        let posf = if self.precision == Precision::Mixed { ptr(dev, &a.posf) } else { ptr(dev, &a.pos) };
        self.bufs = Bufs {
            pos: ptr(dev, &a.pos),
            vel: ptr(dev, &a.vel),
            force: ptr(dev, &a.force),
            posf,
            pos_build: ptr(dev, &a.pos_build),
            ids: ptr(dev, &a.ids),
            pos2: ptr(dev, &a.pos2),
            vel2: ptr(dev, &a.vel2),
            ids2: ptr(dev, &a.ids2),
            masses: ptr(dev, &a.masses),
            table: ptr(dev, &a.table),
            obs_start: ptr(dev, &a.obs_start),
            obs_cand: ptr(dev, &a.obs_cand),
            obs_prims: ptr(dev, &a.obs_prims),
            obs_verts: ptr(dev, &a.obs_verts),
            obs_force: ptr(dev, &a.obs_force),
            cell_count: ptr(dev, &a.cell_count),
            cell_start: ptr(dev, &a.cell_start),
            cell_rank: ptr(dev, &a.cell_rank),
            cell_of: ptr(dev, &a.cell_of),
            slot: ptr(dev, &a.slot),
            order: ptr(dev, &a.order),
            nlist: ptr(dev, &a.nlist),
            ncount: ptr(dev, &a.ncount),
            partials_ev: ptr(dev, &a.partials_ev),
            partials_kin: ptr(dev, &a.partials_kin),
            lambda: ptr(dev, &a.lambda),
            records: ptr(dev, &a.records),
            flags: ptr(dev, &a.flags),
            blowup_step: ptr(dev, &a.blowup_step),
            hist: 0,
            out: 0,
            clock: ptr(dev, &a.clock),
            scan_sums: ptr(dev, &a.scan_sums),
            pair_acc: ptr(dev, &a.pair_acc),
            piston: ptr(dev, &a.piston),
            piston_part: ptr(dev, &a.piston_part),
            flow_sums: ptr(dev, &a.flow_sums),
            flow_mean: ptr(dev, &a.flow_mean),
            flow_stats: ptr(dev, &a.flow_stats),
            body_fix: ptr(dev, &a.body_fix),
            body_sum: ptr(dev, &a.body_sum),
            body_records: ptr(dev, &a.body_records),
            fric_force: ptr(dev, &a.fric_force),
            tunnel_part: ptr(dev, &a.tunnel_part),
            tunnel_sum: ptr(dev, &a.tunnel_sum),
            tunnel_records: ptr(dev, &a.tunnel_records),
            nb_first: ptr(dev, &a.nb_first),
            partials_stress: ptr(dev, &a.partials_stress),
            stress_records: ptr(dev, &a.stress_records),
            near: ptr(dev, &a.near),
        };
        self.other_bufs = self.other_positions(dev);
    }

    /// The pointer table with the positions in their other array, for fused steps
    /// (`steps::Fused`). In single and double (positions in state precision, one array) the
    /// other array is the sort's scratch, which then takes the positions' place as scratch: a
    /// rebuild between the two steps of a pair sorts from it and back into it. In mixed the
    /// state stays in place (the fused kernel writes only each atom's own) and the f32
    /// positions alternate with `posf_alt`; None where it is not allocated.
    fn other_positions(&self, dev: &Device) -> Option<Bufs> {
        let b = self.bufs;
        match self.precision {
            Precision::Mixed => self.a.posf_alt.as_ref().map(|_| Bufs { posf: ptr(dev, &self.a.posf_alt), ..b }),
            _ if b.pos2 != 0 => Some(Bufs { pos: b.pos2, posf: b.pos2, pos2: b.pos, ..b }),
            _ => None,
        }
    }

    /// The flow bins of a thermostat relative to the flow and of the thermal readout
    /// (`telemetry.rs`): `bins` of them (4 words each for the sums and the means), or none
    /// when `bins` is 0. They hold nothing between steps (each use clears, sums and reduces
    /// them first), so checkpoints skip them.
    pub(super) fn set_flow_arrays(&mut self, dev: &Device, bins: usize) -> Result<(), SimError> {
        if bins == 0 {
            self.a.flow_sums = None;
            self.a.flow_mean = None;
            self.a.flow_stats = None;
            return Ok(());
        }
        self.a.flow_sums = Some(alloc(dev, bins * 32, "allocating the flow bins")?);
        self.a.flow_mean = Some(alloc(dev, bins * 32, "allocating the flow bins")?);
        self.a.flow_stats = Some(alloc(dev, 16, "allocating the flow bins")?);
        Ok(())
    }

    /// Mixed precision keeps an f32 copy of the positions: refresh it from the state.
    pub(super) fn sync_posf(&mut self, dev: &Device) -> Result<(), SimError> {
        if self.precision == Precision::Mixed {
            let raw = download(dev, &self.a.pos, self.n * 32, "reading positions")?;
            let posf = pack(unpack(&raw, 8).into_iter(), 4);
            if let Some(p) = self.a.posf.as_mut() {
                dev.stream.memcpy_htod(&posf[..], p).map_err(dev_err("refreshing f32 positions"))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn too_many_atoms_are_refused_before_allocating_with_the_largest_that_fits() {
        let free = 8usize << 30;
        let e = memory_check(50_000_000, Precision::Double, 2.8, 0.8442, free, "test GPU").unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("50000000 atoms") && msg.contains("largest system that fits"), "{msg}");
        let SimError::OutOfMemory { max_atoms, .. } = e else { panic!("{msg}") };
        assert!(memory_check(max_atoms, Precision::Double, 2.8, 0.8442, free, "test GPU").is_ok());
        assert!(memory_check(max_atoms + max_atoms / 50, Precision::Double, 2.8, 0.8442, free, "test GPU").is_err());
        // Single precision needs less memory per atom, and a gas is checked at a liquid's
        // density (its atoms may gather into drops).
        assert_eq!(
            memory_check(max_atoms, Precision::Double, 2.8, 0.01, free, "test GPU").is_ok(),
            memory_check(max_atoms, Precision::Double, 2.8, 0.85, free, "test GPU").is_ok()
        );
        assert!(memory_check(max_atoms + max_atoms / 50, Precision::Single, 2.8, 0.8442, free, "test GPU").is_ok());
    }
}
