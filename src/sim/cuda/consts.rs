//! The two structs every kernel takes by value, mirrored field for field from
//! `kernels/common.cuh`: [`Consts`] (box, potentials, thermostat, grids: everything that
//! `set_params` can change) and [`Bufs`] (the device address of every array).

use cudarc::driver::DeviceRepr;

use crate::physics::lj::LjPair;
use crate::physics::obstacles::ObstacleField;
use crate::physics::params::{SimParams, Thermostat};
use crate::physics::sim_box::SimBox;
use crate::physics::wall::Wall93;

/// Mirrors `struct Consts` in kernels/common.cuh (same order, same C layout).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Consts {
    pub lo: [f64; 3],
    pub hi: [f64; 3],
    pub len: [f64; 3],
    pub inv_len: [f64; 3],
    pub periodic: [i32; 3],
    pub n: i32,
    pub dt: f64,
    pub skin_half_sq: f64,
    pub r_list_sq: f64,
    pub lj1: f64,
    pub lj2: f64,
    pub lj3: f64,
    pub lj4: f64,
    pub lj_offset: f64,
    pub rcut_sq: f64,
    pub wall: [f64; 9],
    pub obstacle: [f64; 9],
    pub has_obstacles: i32,
    pub grid_cells: [i32; 2],
    pub grid_periodic: [i32; 2],
    pub grid_lo: [f64; 2],
    pub grid_cell: [f64; 2],
    pub grid_len: [f64; 2],
    pub obs_far: f64,
    pub gravity: f64,
    pub drive: f64,
    pub drive_potential: i32,
    pub cell_dims: [i32; 3],
    pub n_cells: i32,
    pub cell_inv: [f64; 3],
    pub max_nbrs: i32,
    pub thermostat: i32,
    pub target_t: f64,
    pub tau: f64,
    pub langevin_c1: f64,
    pub langevin_c2: f64,
    pub dof: f64,
    pub seed: u64,
    pub runaway_sq: f64,
    /// Neighbour-list entries of 32 bits (the atom's index) instead of 16 (its neighbour
    /// cell and place there, `nb_first`): set when some cell holds more atoms than 16-bit
    /// entries can name (`flag::CELL_FULL`).
    pub list_wide: i32,
    /// Canonical index of the tethered atom; [`NO_TETHER`] when there is none (or it is out
    /// of range).
    pub tether_id: u32,
    /// Tether target on x and y (moved into the box on periodic axes), and stiffness.
    pub tether_x: f64,
    pub tether_y: f64,
    pub tether_k: f64,
    /// Half the box length on periodic axes, [`FAR`] on walled ones (minimum image by compares).
    pub half_len: [f64; 3],
    /// f32 copies of `len` and `half_len`, and of the species (0, 0) LJ coefficients
    /// (lj1, lj2, lj3, lj4, offset, rcut_sq) and the squared list range.
    pub len_f: [f32; 3],
    pub half_f: [f32; 3],
    pub lj_f: [f32; 6],
    pub r_list_sq_f: f32,
    /// Threads per atom in the neighbour-list force kernel (a power of two, at most 32).
    pub tpa: i32,
    /// The piston: P_ext A, mass, friction, height limits, and whether there is one.
    pub piston_pa: f64,
    pub piston_mass: f64,
    pub piston_damp: f64,
    pub piston_lo: f64,
    pub piston_hi: f64,
    pub piston_on: i32,
    pub pad1: i32,
    /// The flow bins of the thermostat relative to the flow and of the thermal readout
    /// ([`SimParams::thermal_readout`]): the x-y grid ([`crate::flow::Grid::for_thermostat`])
    /// and its bin count (0 when neither needs them), and 1 when the thermostat works
    /// relative to the flow (else 0).
    pub flow_grid: FieldGridArgs,
    pub flow_bins: i32,
    pub relative_to_flow: i32,
    /// Body forces (`sim::bodies`, `kernels/bodies.cuh`): the number of bodies (0: none
    /// summed) and the body index of each wall face `[2 * axis + hi]` (-1 on periodic axes).
    pub n_bodies: i32,
    pub body_wall: [i32; 6],
    pub pad2: i32,
    /// Surface friction (`physics::friction`, `kernels/surface.cuh`): gamma = 1/damp, the
    /// range (0: off) and sqrt(2 gamma T / dt), the noise amplitude per sqrt(mass).
    pub friction_gamma: f64,
    pub friction_range: f64,
    pub friction_noise: f64,
    /// The wind tunnel's inflow zone (`physics::tunnel`, `kernels/tunnel.cu`): the stream
    /// speed, the zone `[tunnel_lo, tunnel_hi)` along x, 1 while the tunnel is on, and the
    /// blocks of running sums the zone keeps (`engine/tunnel.rs`, set by the engine).
    pub tunnel_speed: f64,
    pub tunnel_lo: f64,
    pub tunnel_hi: f64,
    pub tunnel_on: i32,
    pub tunnel_slots: i32,
    /// The inner region of the box: positions farther than [`inner_margin`] from every
    /// periodic face, whose listed partners all sit in the same image, so the neighbour-list
    /// force loop leaves the minimum image out there (empty when the box is too small for one;
    /// unbounded on walled axes).
    pub inner_lo: [f32; 3],
    pub inner_hi: [f32; 3],
    /// The tunnel's start spin ([`crate::physics::friction::Spin`], `kernels/surface.cuh`):
    /// the obstacle surfaces' tangential speed and the first device clock step without it
    /// (0: no spin).
    pub friction_spin: f64,
    pub friction_spin_until: u64,
}

/// How far from a periodic face an atom must be for the force loop to skip the minimum image:
/// listed partners were within the list range at the build and each atom has moved at most
/// half the skin since, so they are within the list range plus the skin; the rest is room
/// for the f32 rounding of the bounds and positions.
pub fn inner_margin(list_range: f64, skin: f64) -> f64 {
    list_range + skin + 0.05
}

/// The inner region's bounds along one axis, in f32 (rounded inward by the margin's slack).
fn inner_bounds(lo: f64, hi: f64, periodic: bool, margin: f64) -> (f32, f32) {
    if !periodic {
        return (f32::MIN, f32::MAX);
    }
    let (a, b) = (lo + margin, hi - margin);
    if a < b { (a as f32, b as f32) } else { (f32::MAX, f32::MIN) }
}

/// `half_len` on walled axes: no difference of positions ever exceeds it.
pub const FAR: f64 = 1e30;

/// Threads sharing one atom's neighbour list: more at small N, so one wave of threads fills
/// the GPU (up to about 40,000 threads); `ARGON_TPA` (1, 2, 4, 8, 16 or 32) overrides it for
/// tuning. Measured on an H200 (in.lj single, two rounds): at 32,000 atoms 2 threads beat 4
/// by 1.5% and 1 by 8%; at 108,000 and above 1 is fastest.
pub fn threads_per_atom(n: usize) -> i32 {
    if let Some(t) = std::env::var("ARGON_TPA").ok().and_then(|v| v.trim().parse::<i32>().ok())
        && [1, 2, 4, 8, 16, 32].contains(&t)
    {
        return t;
    }
    let mut t = 1;
    while t < 8 && n * t * 4 <= 160_000 {
        t *= 2;
    }
    t as i32
}

/// `Consts::tether_id` when no atom is tethered.
pub const NO_TETHER: u32 = u32::MAX;

// SAFETY: plain old data with the C layout the kernels expect.
unsafe impl DeviceRepr for Consts {}

/// A flow-field grid as `fields_sample` (`kernels/fields.cu`, `struct FieldGrid`) takes it:
/// what [`crate::flow::Grid::bin_of`] reads, with flags as ints.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FieldGridArgs {
    pub origin: [f64; 3],
    pub inv_cell: [f64; 3],
    pub n: [i32; 3],
    pub periodic: [i32; 3],
    pub walled: [i32; 3],
    pub pad: i32,
}

const _: () = assert!(std::mem::size_of::<FieldGridArgs>() == 88);

impl FieldGridArgs {
    pub fn new(g: &crate::flow::Grid) -> Self {
        let walled = g.walled();
        FieldGridArgs {
            origin: g.origin,
            inv_cell: g.inv_cell(),
            n: g.n.map(|n| n as i32),
            periodic: g.periodic.map(i32::from),
            walled: walled.map(i32::from),
            pad: 0,
        }
    }
}

// SAFETY: plain old data with the C layout of `struct FieldGrid`.
unsafe impl DeviceRepr for FieldGridArgs {}

fn wall_coeffs(w: &Wall93<f64>) -> [f64; 9] {
    [w.coeff1, w.coeff2, w.coeff3, w.coeff4, w.offset, w.cutoff, w.d_cap, w.e_cap, w.f_cap]
}

impl Consts {
    /// Everything but the cell grid and list sizes, which the engine sets.
    pub fn new(b: &SimBox, p: &SimParams, n: usize, dof: f64, field: Option<&ObstacleField>) -> Consts {
        let len = b.length();
        let lj = LjPair::<f64>::like_pair(p, 0);
        let (thermostat, tau) = match p.thermostat {
            // Hybrid Monte Carlo trajectories are plain NVE; sim::hmc accepts or rejects them.
            Thermostat::Nve | Thermostat::Hmc { .. } | Thermostat::HmcNpt { .. } => (0, 1.0),
            Thermostat::Berendsen { tau, .. } => (1, tau),
            Thermostat::Csvr { tau, .. } => (2, tau),
            Thermostat::Langevin { damp } => (3, damp),
        };
        let c1 = (-p.dt / tau).exp();
        let mut c = Consts {
            lo: b.lo,
            hi: b.hi,
            len,
            inv_len: std::array::from_fn(|k| if b.periodic[k] { 1.0 / len[k] } else { 0.0 }),
            periodic: b.periodic.map(i32::from),
            n: n as i32,
            dt: p.dt,
            skin_half_sq: 0.25 * p.skin * p.skin,
            r_list_sq: p.list_range().powi(2),
            lj1: lj.lj1,
            lj2: lj.lj2,
            lj3: lj.lj3,
            lj4: lj.lj4,
            lj_offset: lj.offset,
            rcut_sq: lj.rcut_sq,
            wall: wall_coeffs(&Wall93::new(&p.wall)),
            obstacle: wall_coeffs(&Wall93::new(&p.obstacle)),
            gravity: p.gravity,
            drive: p.drive,
            drive_potential: i32::from(!b.periodic[0]),
            thermostat,
            target_t: p.temperature,
            tau,
            langevin_c1: c1,
            langevin_c2: (1.0 - c1 * c1).sqrt(),
            dof,
            seed: p.seed,
            runaway_sq: crate::sim::RUNAWAY_STEP.powi(2),
            tether_id: NO_TETHER,
            ..Consts::default()
        };
        c.half_len = std::array::from_fn(|k| if b.periodic[k] { 0.5 * len[k] } else { FAR });
        c.len_f = len.map(|x| x as f32);
        c.half_f = c.half_len.map(|x| x as f32);
        c.lj_f = [lj.lj1, lj.lj2, lj.lj3, lj.lj4, lj.offset, lj.rcut_sq].map(|x| x as f32);
        c.r_list_sq_f = c.r_list_sq as f32;
        c.tpa = threads_per_atom(n);
        let margin = inner_margin(p.list_range(), p.skin);
        for k in 0..3 {
            (c.inner_lo[k], c.inner_hi[k]) = inner_bounds(b.lo[k], b.hi[k], b.periodic[k], margin);
        }
        if let Some(pp) = &p.piston {
            let (lo, hi) = crate::physics::piston::PistonParams::limits(b);
            c.piston_pa = pp.pressure * crate::physics::piston::PistonParams::area(b);
            c.piston_mass = pp.mass;
            c.piston_damp = pp.damping;
            c.piston_lo = lo;
            c.piston_hi = hi;
            c.piston_on = 1;
        }
        if p.thermal_readout() {
            let g = crate::flow::Grid::for_thermostat(b);
            c.flow_grid = FieldGridArgs::new(&g);
            c.flow_bins = g.len() as i32;
        }
        c.relative_to_flow = i32::from(p.thermostat.relative_to_flow());
        if let Some(t) = p.tether.filter(|t| t.is_active(n)) {
            let target = t.target_in_box(b);
            c.tether_id = t.atom;
            c.tether_x = target[0];
            c.tether_y = target[1];
            c.tether_k = t.stiffness;
        }
        if let Some(f) = field {
            c.has_obstacles = 1;
            c.grid_cells = f.cells.map(|x| x as i32);
            c.grid_periodic = f.periodic.map(i32::from);
            c.grid_lo = f.lo;
            c.grid_cell = f.cell;
            c.grid_len = f.len;
            c.obs_far = ObstacleField::FAR;
        }
        if let Some(s) = &p.surface_friction {
            // The step is the device clock's; 0 here is unused.
            let f = crate::physics::friction::Friction::new(s, p.temperature, p.dt, p.seed, 0);
            c.friction_gamma = f.gamma;
            c.friction_range = f.range;
            c.friction_noise = f.noise;
            let spin = p.start_spin();
            c.friction_spin = spin.speed;
            c.friction_spin_until = spin.until;
        }
        if let Some(t) = &p.tunnel {
            (c.tunnel_lo, c.tunnel_hi) = t.bounds(b);
            c.tunnel_speed = t.speed;
            c.tunnel_on = 1;
        }
        let bodies = crate::sim::bodies::BodyLayout::new(b, field);
        c.n_bodies = bodies.len() as i32;
        c.body_wall = std::array::from_fn(|f| bodies.wall[f / 2][f % 2].map_or(-1, |i| i as i32));
        c
    }
}

/// Mirrors `struct Bufs` in kernels/common.cuh: device addresses (0 for unused arrays).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Bufs {
    pub pos: u64,
    pub vel: u64,
    pub force: u64,
    pub posf: u64,
    pub pos_build: u64,
    pub ids: u64,
    pub pos2: u64,
    pub vel2: u64,
    pub ids2: u64,
    pub masses: u64,
    pub table: u64,
    pub obs_start: u64,
    pub obs_cand: u64,
    pub obs_prims: u64,
    pub obs_verts: u64,
    pub obs_force: u64,
    pub cell_count: u64,
    pub cell_start: u64,
    pub cell_rank: u64,
    pub cell_of: u64,
    pub slot: u64,
    pub order: u64,
    pub nlist: u64,
    pub ncount: u64,
    pub partials_ev: u64,
    pub partials_kin: u64,
    pub lambda: u64,
    pub records: u64,
    pub flags: u64,
    pub blowup_step: u64,
    pub hist: u64,
    pub out: u64,
    pub clock: u64,
    pub scan_sums: u64,
    pub pair_acc: u64,
    pub piston: u64,
    pub piston_part: u64,
    pub flow_sums: u64,
    pub flow_mean: u64,
    pub flow_stats: u64,
    pub body_fix: u64,
    pub body_sum: u64,
    pub body_records: u64,
    pub fric_force: u64,
    pub tunnel_part: u64,
    pub tunnel_sum: u64,
    pub tunnel_records: u64,
    pub nb_first: u64,
    pub partials_stress: u64,
    pub stress_records: u64,
    pub near: u64,
}

// SAFETY: plain old data with the C layout the kernels expect.
unsafe impl DeviceRepr for Bufs {}

/// Indices into the device `flags` array (kernels/common.cuh).
pub mod flag {
    pub const REBUILD: i32 = 0;
    pub const OVERFLOW: usize = 1;
    pub const BLOWUP: usize = 2;
    pub const BUILDS: usize = 3;
    pub const MAX_NBRS_SEEN: usize = 4;
    pub const ALWAYS: i32 = 5;
    pub const ESCAPE: usize = 6;
    pub const CELL_FULL: usize = 7;
    pub const COUNT: usize = 8;
}

#[cfg(test)]
mod layout_tests {
    use super::*;
    use std::mem::offset_of;

    #[test]
    fn threads_per_atom_fill_small_systems_and_stay_one_for_large() {
        if std::env::var("ARGON_TPA").is_ok() {
            return;
        }
        assert_eq!(threads_per_atom(32_000), 2);
        assert_eq!(threads_per_atom(20_000), 4);
        assert_eq!(threads_per_atom(10_000), 8);
        assert_eq!(threads_per_atom(256_000), 1);
        for n in [0, 1, 500, 40_000, 80_000, 1 << 20] {
            let t = threads_per_atom(n);
            assert!([1, 2, 4, 8].contains(&t), "{n}: {t}");
        }
    }

    #[test]
    fn the_inner_region_keeps_the_list_range_and_skin_from_periodic_faces() {
        let m = inner_margin(2.8, 0.3);
        assert!((m - 3.15).abs() < 1e-12);
        let (lo, hi) = inner_bounds(0.0, 16.8, true, m);
        assert!(lo >= 3.15 - 1e-6 && (lo - 3.15).abs() < 1e-5 && (hi - 13.65).abs() < 1e-5, "{lo} {hi}");
        // A box too small for an inner region has none (every atom takes the image loop).
        let (lo, hi) = inner_bounds(0.0, 6.0, true, m);
        assert!(lo > hi);
        // Walled axes never need an image.
        assert_eq!(inner_bounds(0.0, 6.0, false, m), (f32::MIN, f32::MAX));
    }

    /// Offsets gcc gives the header's `struct Consts` (x86-64; NVCC uses the same layout).
    #[test]
    fn consts_offsets_match_the_c_header() {
        let got = [
            offset_of!(Consts, n),
            offset_of!(Consts, dt),
            offset_of!(Consts, lj1),
            offset_of!(Consts, wall),
            offset_of!(Consts, obstacle),
            offset_of!(Consts, has_obstacles),
            offset_of!(Consts, grid_lo),
            offset_of!(Consts, gravity),
            offset_of!(Consts, drive_potential),
            offset_of!(Consts, cell_dims),
            offset_of!(Consts, cell_inv),
            offset_of!(Consts, max_nbrs),
            offset_of!(Consts, target_t),
            offset_of!(Consts, seed),
            offset_of!(Consts, runaway_sq),
            offset_of!(Consts, list_wide),
            offset_of!(Consts, tether_id),
            offset_of!(Consts, tether_x),
            offset_of!(Consts, tether_y),
            offset_of!(Consts, tether_k),
            offset_of!(Consts, half_len),
            offset_of!(Consts, len_f),
            offset_of!(Consts, half_f),
            offset_of!(Consts, lj_f),
            offset_of!(Consts, r_list_sq_f),
            offset_of!(Consts, tpa),
            offset_of!(Consts, piston_pa),
            offset_of!(Consts, piston_on),
            offset_of!(Consts, flow_grid),
            offset_of!(Consts, flow_bins),
            offset_of!(Consts, relative_to_flow),
            offset_of!(Consts, n_bodies),
            offset_of!(Consts, body_wall),
            offset_of!(Consts, friction_gamma),
            offset_of!(Consts, friction_noise),
            offset_of!(Consts, tunnel_speed),
            offset_of!(Consts, tunnel_hi),
            offset_of!(Consts, tunnel_on),
            offset_of!(Consts, inner_lo),
            offset_of!(Consts, inner_hi),
            offset_of!(Consts, friction_spin),
            offset_of!(Consts, friction_spin_until),
            std::mem::size_of::<Consts>(),
        ];
        assert_eq!(
            got,
            [
                108, 112, 136, 184, 256, 328, 352, 408, 424, 428, 448, 472, 480, 520, 528, 536, 540, 544, 552, 560,
                568, 592, 604, 616, 640, 644, 648, 688, 696, 784, 788, 792, 796, 824, 840, 848, 864, 872, 880, 892,
                904, 912, 920
            ]
        );
        assert_eq!(std::mem::size_of::<Bufs>(), 408);
    }
}
