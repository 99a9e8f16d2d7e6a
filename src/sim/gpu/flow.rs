//! The host side of `shaders/sim/flow.wgsl`: the wind tunnel's constants block (`FlowParams`,
//! reals in f64, written field for field as the shader's `Flow` in each precision; a test pins
//! the sizes), how the obstacles,
//! the surface friction, the tunnel's zone, the bodies and the flow-field grid fill it, and
//! the obstacle field packed into the one word array the shaders read (`pack_obstacles`):
//! every coordinate as a (hi, lo) pair of f32, so the shaders' differences p - c keep f32's
//! relative precision wherever the shape sits.

use super::block::Block;
use crate::flow::Grid;
use crate::physics::friction::Friction;
use crate::physics::obstacles::ObstacleField;
use crate::physics::params::{SimParams, Thermostat};
use crate::physics::real::Precision;
use crate::physics::sim_box::SimBox;
use crate::physics::wall::Wall93;
use crate::sim::bodies::BodyLayout;

/// Bodies the shaders' per-workgroup masks hold (flow.wgsl `MAX_BODY_WORDS` words of 32).
pub const MAX_BODIES: usize = 32 * 32;

/// The wind tunnel's constants (flow.wgsl `Flow`): reals in f64 here, written in the
/// precision's.
#[derive(Clone, Copy, Debug, Default)]
pub struct FlowParams {
    pub grid_lo: [f64; 2],
    pub grid_cell_inv: [f64; 2],
    pub grid_len: [f64; 2],
    pub grid_cells: [u32; 2],
    pub grid_periodic: [u32; 2],
    pub n_bodies: u32,
    pub obstacles: u32,
    pub obs_a: [f64; 4],
    pub obs_b: [f64; 4],
    pub obs_f: f64,
    pub far: f64,
    pub friction: u32,
    pub fr_range: f64,
    pub fr_gamma: f64,
    pub fr_noise: f64,
    pub tunnel: u32,
    pub tunnel_lo: f64,
    pub tunnel_hi: f64,
    pub tunnel_speed: f64,
    pub fields: u32,
    pub surfaces: u32,
    pub prims_at: u32,
    pub verts_at: u32,
    pub start_at: u32,
    pub cand_at: u32,
    pub body_wall: [i32; 8],
    pub fg_origin: [f64; 4],
    pub fg_inv: [f64; 4],
    pub fg_n: [u32; 4],
    pub fg_periodic: [u32; 4],
    pub fg_walled: [u32; 4],
    pub fg_bins: u32,
    pub flow_words: u32,
    pub pg_origin: [f64; 4],
    pub pg_inv: [f64; 4],
    pub pg_n: [u32; 4],
    pub pg_periodic: [u32; 4],
    pub pg_walled: [u32; 4],
    pub pg_bins: u32,
    pub relative: u32,
    pub thermal: u32,
    /// The start spin (`physics::friction::Spin`): surface speed and its end step as (lo, hi).
    pub fr_spin: f64,
    pub spin_until: [u32; 2],
}

impl FlowParams {
    /// The block as the shaders of `precision` read it.
    pub fn bytes(&self, precision: Precision) -> Vec<u8> {
        self.block(precision).finish_uniform()
    }

    /// The block being written, for the layout test.
    pub fn block(&self, precision: Precision) -> Block {
        let mut b = Block::new(precision);
        b.f(&self.grid_lo).f(&self.grid_cell_inv).f(&self.grid_len);
        b.u32s(&self.grid_cells).u32s(&self.grid_periodic).u32s(&[self.n_bodies]).u32s(&[self.obstacles]);
        b.f(&self.obs_a).f(&self.obs_b).f(&[self.obs_f]).f(&[self.far]).u32s(&[self.friction]);
        b.f(&[self.fr_range]).f(&[self.fr_gamma]).f(&[self.fr_noise]).u32s(&[self.tunnel]);
        b.s(&[self.tunnel_lo]).s(&[self.tunnel_hi]).s(&[self.tunnel_speed]);
        for x in [self.fields, self.surfaces, self.prims_at, self.verts_at, self.start_at, self.cand_at] {
            b.u32s(&[x]);
        }
        b.i32x4s(&self.body_wall);
        b.s(&self.fg_origin).s(&self.fg_inv).u32s(&self.fg_n).u32s(&self.fg_periodic).u32s(&self.fg_walled);
        b.u32s(&[self.fg_bins]).u32s(&[self.flow_words]).u32s(&[0]).u32s(&[0]);
        b.s(&self.pg_origin).s(&self.pg_inv).u32s(&self.pg_n).u32s(&self.pg_periodic).u32s(&self.pg_walled);
        b.u32s(&[self.pg_bins]).u32s(&[self.relative]).u32s(&[self.thermal]).u32s(&[0]);
        b.f(&[self.fr_spin]).u32s(&self.spin_until);
        b
    }
}

/// (origin, 1 / bin, bins, periodic, walled) of a flow grid as the shaders read them.
type GridWords = ([f64; 4], [f64; 4], [u32; 4], [u32; 4], [u32; 4]);

fn grid_words(g: &Grid) -> GridWords {
    let walled = g.walled();
    let inv = g.inv_cell();
    (
        [g.origin[0], g.origin[1], g.origin[2], 0.0],
        [inv[0], inv[1], inv[2], 0.0],
        [g.n[0] as u32, g.n[1] as u32, g.n[2] as u32, 0],
        [g.periodic[0] as u32, g.periodic[1] as u32, g.periodic[2] as u32, 0],
        [walled[0] as u32, walled[1] as u32, walled[2] as u32, 0],
    )
}

/// The smallest f32 at or above `x`: an f32 coordinate c satisfies c < x (or c >= x) in f64
/// exactly when it does against this, so the zone's edges select the CPU's atoms.
pub(super) fn f32_at_or_above(x: f64) -> f32 {
    let f = x as f32;
    if (f as f64) < x { f.next_up() } else { f }
}

/// (hi, lo) of `x`: hi the nearest f32, lo the nearest f32 to the rest.
pub(super) fn split(x: f64) -> [f32; 2] {
    let hi = x as f32;
    [hi, (x - hi as f64) as f32]
}

/// (hi, lo) f32 words of the (x, y) coordinate pairs the primitives and vertices are made of.
fn push_pair(out: &mut Vec<u32>, x: f64) {
    let [hi, lo] = split(x);
    out.push(hi.to_bits());
    out.push(lo.to_bits());
}

/// The obstacle field as one word array (primitives of 16 words, vertices of 4, the cell
/// starts, the candidates) and the word offset of each part.
pub fn pack_obstacles(f: &ObstacleField) -> (Vec<u32>, [u32; 4]) {
    let mut out = Vec::with_capacity(f.prims.len() * 16 + f.verts.len() * 4 + f.start.len() + f.cand.len());
    for p in &f.prims {
        out.extend([p.kind, p.first, p.count, p.shape]);
        for &a in &p.a {
            push_pair(&mut out, a);
        }
    }
    let verts_at = out.len() as u32;
    for v in &f.verts {
        push_pair(&mut out, v[0]);
        push_pair(&mut out, v[1]);
    }
    let start_at = out.len() as u32;
    out.extend_from_slice(&f.start);
    let cand_at = out.len() as u32;
    out.extend_from_slice(&f.cand);
    (out, [0, verts_at, start_at, cand_at])
}

/// The constants for `params` in `b` with obstacles `field` (packed at `offsets`), bodies
/// `bodies` and flow fields on `grid`, for the shaders of `precision`.
pub fn flow_block(
    params: &SimParams,
    b: &SimBox,
    field: Option<(&ObstacleField, [u32; 4])>,
    bodies: &BodyLayout,
    grid: Option<&Grid>,
    precision: Precision,
) -> FlowParams {
    let mut f = FlowParams { far: ObstacleField::FAR, body_wall: [-1; 8], ..Default::default() };
    if let Some((field, at)) = field {
        let w = Wall93::<f64>::new(&params.obstacle);
        f.obstacles = 1;
        f.grid_lo = field.lo;
        f.grid_cell_inv = field.cell.map(|c| 1.0 / c);
        f.grid_len = field.len;
        f.grid_cells = field.cells.map(|c| c as u32);
        f.grid_periodic = field.periodic.map(u32::from);
        f.obs_a = [w.coeff1, w.coeff2, w.coeff3, w.coeff4];
        f.obs_b = [w.offset, w.cutoff, w.d_cap, w.e_cap];
        f.obs_f = w.f_cap;
        [f.prims_at, f.verts_at, f.start_at, f.cand_at] = at;
    }
    if let Some(s) = &params.surface_friction {
        let fr = Friction::new(s, params.temperature, params.dt, params.seed, 0);
        f.friction = 1;
        f.fr_range = s.range;
        f.fr_gamma = fr.gamma;
        f.fr_noise = fr.noise;
        let spin = params.start_spin();
        f.fr_spin = spin.speed;
        f.spin_until = [spin.until as u32, (spin.until >> 32) as u32];
    }
    if let Some(t) = &params.tunnel {
        let (lo, hi) = t.bounds(b);
        f.tunnel = 1;
        // f32 positions compare against the edges as the CPU's f64 ones do; f64 ones exactly.
        let edge = |x: f64| if precision == Precision::Single { f32_at_or_above(x) as f64 } else { x };
        f.tunnel_lo = edge(lo);
        f.tunnel_hi = edge(hi);
        f.tunnel_speed = t.speed;
    }
    f.n_bodies = bodies.len() as u32;
    for (k, w) in bodies.wall.iter().enumerate() {
        for (h, slot) in w.iter().enumerate() {
            f.body_wall[2 * k + h] = slot.map_or(-1, |s| s as i32);
        }
    }
    if let Some(g) = grid {
        f.fields = 1;
        (f.fg_origin, f.fg_inv, f.fg_n, f.fg_periodic, f.fg_walled) = grid_words(g);
        f.fg_bins = g.len() as u32;
    }
    if params.thermal_readout() {
        let g = Grid::for_thermostat(b);
        (f.pg_origin, f.pg_inv, f.pg_n, f.pg_periodic, f.pg_walled) = grid_words(&g);
        f.pg_bins = g.len() as u32;
        f.thermal = 1;
        f.relative = match params.thermostat {
            Thermostat::Berendsen { relative_to_flow: true, .. } => 1,
            Thermostat::Csvr { relative_to_flow: true, .. } => 2,
            _ => 0,
        };
    }
    f.surfaces = u32::from(f.obstacles != 0 || f.friction != 0 || f.n_bodies != 0);
    f.flow_words = flow_words(bodies.len());
    f
}

/// (hi, lo) words of one flow record with `bodies` bodies: 3 per body, the steps summed, the
/// zone's momentum and kinetic energy, the thermal readout's sum |P_b|^2 / M_b and occupied
/// bins.
pub fn flow_words(bodies: usize) -> u32 {
    (3 * bodies + 7) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sizes the shader expects (WGSL's uniform layout of `Flow`; naga's offsets are checked
    /// in `shaders.rs`), with the start spin at the end.
    #[test]
    fn block_has_the_shader_layout() {
        let f = FlowParams {
            tunnel_speed: 0.5,
            cand_at: 9,
            pg_bins: 3,
            fr_spin: 2.5,
            spin_until: [7, 1],
            ..Default::default()
        };
        let single = f.bytes(Precision::Single);
        assert_eq!(single.len(), 384);
        assert_eq!(&single[368..372], &2.5f32.to_le_bytes());
        assert_eq!(&single[376..384], &[7, 0, 0, 0, 1, 0, 0, 0]);
        assert_eq!(&single[116..120], &0.5f32.to_le_bytes());
        assert_eq!(&single[140..144], &9u32.to_le_bytes());
        assert_eq!(&single[352..356], &3u32.to_le_bytes());
        let mixed = f.bytes(Precision::Mixed);
        assert_eq!(&mixed[128..136], &0.5f64.to_le_bytes());
        assert_eq!(&mixed[156..160], &9u32.to_le_bytes());
        assert_eq!(&mixed[432..436], &3u32.to_le_bytes());
        assert_eq!(&mixed[448..452], &2.5f32.to_le_bytes());
        assert_eq!(&mixed[456..460], &7u32.to_le_bytes());
        assert_eq!(mixed.len(), 480);
        let double = f.bytes(Precision::Double);
        assert_eq!(&double[232..240], &0.5f64.to_le_bytes());
        assert_eq!(&double[560..564], &3u32.to_le_bytes());
        assert_eq!(&double[576..584], &2.5f64.to_le_bytes());
        assert_eq!(&double[584..588], &7u32.to_le_bytes());
        assert_eq!(double.len(), 608);
    }

    #[test]
    fn zone_edges_select_as_f64_does() {
        for x in [0.0, 4.0, 0.1, -3.3, 147.0 / 7.0] {
            let e = f32_at_or_above(x);
            assert!(e as f64 >= x && (e.next_down() as f64) < x, "{x}");
        }
        let [hi, lo] = split(54.2);
        assert_eq!(hi as f64 + lo as f64, 54.2f64 as f32 as f64 + (54.2 - (54.2f32 as f64)) as f32 as f64);
        assert!((hi as f64 + lo as f64 - 54.2).abs() < 1e-12);
    }
}
