//! The host side of `shaders/sim/flow.wgsl`: the wind tunnel's constants block (`FlowParams`,
//! laid out field for field as the shader's `Flow`; a test pins the size), how the obstacles,
//! the surface friction, the tunnel's zone, the bodies and the flow-field grid fill it, and
//! the obstacle field packed into the one word array the shaders read (`pack_obstacles`):
//! every coordinate as a (hi, lo) pair of f32, so the shaders' differences p - c keep f32's
//! relative precision wherever the shape sits.

use bytemuck::{Pod, Zeroable};

use crate::flow::Grid;
use crate::physics::friction::Friction;
use crate::physics::obstacles::ObstacleField;
use crate::physics::params::{SimParams, Thermostat};
use crate::physics::sim_box::SimBox;
use crate::physics::wall::Wall93;
use crate::sim::bodies::BodyLayout;

/// Bodies the shaders' per-workgroup masks hold (flow.wgsl `MAX_BODY_WORDS` words of 32).
pub const MAX_BODIES: usize = 32 * 32;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct FlowParams {
    pub grid_lo: [f32; 2],
    pub grid_cell_inv: [f32; 2],
    pub grid_len: [f32; 2],
    pub grid_cells: [u32; 2],
    pub grid_periodic: [u32; 2],
    pub n_bodies: u32,
    pub obstacles: u32,
    pub obs_a: [f32; 4],
    pub obs_b: [f32; 4],
    pub obs_f: f32,
    pub far: f32,
    pub friction: u32,
    pub fr_range: f32,
    pub fr_gamma: f32,
    pub fr_noise: f32,
    pub tunnel: u32,
    pub tunnel_lo: f32,
    pub tunnel_hi: f32,
    pub tunnel_speed: f32,
    pub fields: u32,
    pub surfaces: u32,
    pub prims_at: u32,
    pub verts_at: u32,
    pub start_at: u32,
    pub cand_at: u32,
    pub body_wall: [i32; 8],
    pub fg_origin: [f32; 4],
    pub fg_inv: [f32; 4],
    pub fg_n: [u32; 4],
    pub fg_periodic: [u32; 4],
    pub fg_walled: [u32; 4],
    pub fg_bins: u32,
    pub flow_words: u32,
    pub pad: [u32; 2],
    pub pg_origin: [f32; 4],
    pub pg_inv: [f32; 4],
    pub pg_n: [u32; 4],
    pub pg_periodic: [u32; 4],
    pub pg_walled: [u32; 4],
    pub pg_bins: u32,
    pub relative: u32,
    pub thermal: u32,
    pub pad2: u32,
}

/// (origin, 1 / bin, bins, periodic, walled) of a flow grid as the shaders read them.
type GridWords = ([f32; 4], [f32; 4], [u32; 4], [u32; 4], [u32; 4]);

fn grid_words(g: &Grid) -> GridWords {
    let walled = g.walled();
    let inv = g.inv_cell();
    (
        [g.origin[0] as f32, g.origin[1] as f32, g.origin[2] as f32, 0.0],
        [inv[0] as f32, inv[1] as f32, inv[2] as f32, 0.0],
        [g.n[0] as u32, g.n[1] as u32, g.n[2] as u32, 0],
        [g.periodic[0] as u32, g.periodic[1] as u32, g.periodic[2] as u32, 0],
        [walled[0] as u32, walled[1] as u32, walled[2] as u32, 0],
    )
}

/// The smallest f32 at or above `x`: an f32 coordinate c satisfies c < x (or c >= x) in f64
/// exactly when it does against this, so the zone's edges select the CPU's atoms.
fn f32_at_or_above(x: f64) -> f32 {
    let f = x as f32;
    if (f as f64) < x { f.next_up() } else { f }
}

/// (hi, lo) of `x`: hi the nearest f32, lo the nearest f32 to the rest.
fn split(x: f64) -> [f32; 2] {
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
/// `bodies` and flow fields on `grid`.
pub fn flow_block(
    params: &SimParams,
    b: &SimBox,
    field: Option<(&ObstacleField, [u32; 4])>,
    bodies: &BodyLayout,
    grid: Option<&Grid>,
) -> FlowParams {
    let mut f = FlowParams { far: ObstacleField::FAR as f32, body_wall: [-1; 8], ..Default::default() };
    if let Some((field, at)) = field {
        let w = Wall93::<f64>::new(&params.obstacle);
        f.obstacles = 1;
        f.grid_lo = field.lo.map(|x| x as f32);
        f.grid_cell_inv = field.cell.map(|c| (1.0 / c) as f32);
        f.grid_len = field.len.map(|x| x as f32);
        f.grid_cells = field.cells.map(|c| c as u32);
        f.grid_periodic = field.periodic.map(u32::from);
        f.obs_a = [w.coeff1 as f32, w.coeff2 as f32, w.coeff3 as f32, w.coeff4 as f32];
        f.obs_b = [w.offset as f32, w.cutoff as f32, w.d_cap as f32, w.e_cap as f32];
        f.obs_f = w.f_cap as f32;
        [f.prims_at, f.verts_at, f.start_at, f.cand_at] = at;
    }
    if let Some(s) = &params.surface_friction {
        let fr = Friction::new(s, params.temperature, params.dt, params.seed, 0);
        f.friction = 1;
        f.fr_range = s.range as f32;
        f.fr_gamma = fr.gamma as f32;
        f.fr_noise = fr.noise as f32;
    }
    if let Some(t) = &params.tunnel {
        let (lo, hi) = t.bounds(b);
        f.tunnel = 1;
        f.tunnel_lo = f32_at_or_above(lo);
        f.tunnel_hi = f32_at_or_above(hi);
        f.tunnel_speed = t.speed as f32;
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

    /// The size the shader expects (WGSL's uniform layout of `Flow`).
    #[test]
    fn block_has_the_shader_layout() {
        assert_eq!(std::mem::size_of::<FlowParams>(), 368);
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
