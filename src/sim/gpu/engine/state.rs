//! The system's state as the device holds it in each precision: the bytes uploaded for the
//! positions (species in w: its bits in an f32, its value in an f64), velocities and, in
//! mixed, the f32 copy of the positions the forces read (`posf`); and the arrays read back
//! (`DeviceState`, in device order; `atoms` puts them in canonical order by id; the dye tags
//! are kept by canonical index already).

use super::super::layout::{force_reals, state_reals};
use crate::physics::real::Precision;
use crate::sim::AtomState;

/// Bytes of `values` as an array of `real_s` in `precision`.
pub(in crate::sim::gpu) fn state_bytes_of(values: &[f64], precision: Precision) -> Vec<u8> {
    if precision == Precision::Single {
        values.iter().flat_map(|&x| (x as f32).to_le_bytes()).collect()
    } else {
        values.iter().flat_map(|&x| x.to_le_bytes()).collect()
    }
}

/// A position with its species in w as a `vec4<real_s>` of `precision` holds it.
fn position(p: [f64; 3], t: u32, precision: Precision) -> [f64; 4] {
    let w = if precision == Precision::Single { f32::from_bits(t) as f64 } else { t as f64 };
    [p[0], p[1], p[2], w]
}

/// What is uploaded for `atoms` (canonical order): positions, velocities, and in mixed the f32
/// positions (species bits in w).
pub(super) struct Upload {
    pub pos: Vec<u8>,
    pub vel: Vec<u8>,
    pub posf: Option<Vec<u8>>,
}

impl Upload {
    pub fn new(atoms: &AtomState, precision: Precision) -> Upload {
        let pos: Vec<f64> =
            atoms.positions.iter().zip(&atoms.types).flat_map(|(p, &t)| position(*p, t, precision)).collect();
        let vel: Vec<f64> = atoms.velocities.iter().flat_map(|v| [v[0], v[1], v[2], 0.0]).collect();
        let posf = (precision == Precision::Mixed).then(|| {
            let f: Vec<f64> = atoms
                .positions
                .iter()
                .zip(&atoms.types)
                .flat_map(|(p, &t)| position(*p, t, Precision::Single))
                .collect();
            state_bytes_of(&f, Precision::Single)
        });
        Upload { pos: state_bytes_of(&pos, precision), vel: state_bytes_of(&vel, precision), posf }
    }
}

/// A system's arrays as the device holds them (device order; `ids` gives each slot's atom).
pub struct DeviceState {
    pub pos: Vec<[f64; 3]>,
    pub types: Vec<u32>,
    pub vel: Vec<[f64; 3]>,
    pub ids: Vec<u32>,
    pub force: Vec<[f64; 3]>,
    /// Dye tags in canonical order (empty: no dye column), as the device keeps them.
    pub dye: Vec<crate::physics::dye::Dye>,
}

impl DeviceState {
    /// The state from the read-back bytes of positions, velocities, ids and (or empty) forces
    /// in `precision`.
    pub fn parse(pos: &[u8], vel: &[u8], ids: &[u8], force: &[u8], precision: Precision) -> DeviceState {
        let p = state_reals(pos, precision);
        let v = state_reals(vel, precision);
        let f = force_reals(force, precision);
        let xyz = |q: &[f64]| [q[0], q[1], q[2]];
        let types = p
            .chunks_exact(4)
            .map(|q| if precision == Precision::Single { (q[3] as f32).to_bits() } else { q[3] as u32 })
            .collect();
        DeviceState {
            pos: p.chunks_exact(4).map(xyz).collect(),
            types,
            vel: v.chunks_exact(4).map(xyz).collect(),
            ids: bytemuck::pod_collect_to_vec(ids),
            force: f.chunks_exact(4).map(xyz).collect(),
            dye: Vec::new(),
        }
    }

    /// The atoms in canonical order (by id).
    pub fn atoms(&self) -> AtomState {
        let n = self.ids.len();
        let mut a = AtomState {
            positions: vec![[0.0; 3]; n],
            velocities: vec![[0.0; 3]; n],
            types: vec![0; n],
            dye: self.dye.clone(),
        };
        for (slot, &id) in self.ids.iter().enumerate() {
            let i = id as usize;
            a.positions[i] = self.pos[slot];
            a.velocities[i] = self.vel[slot];
            a.types[i] = self.types[slot];
        }
        a
    }

    /// Forces in canonical order.
    pub fn forces(&self) -> Vec<[f64; 3]> {
        let mut out = vec![[0.0; 3]; self.ids.len()];
        for (slot, &id) in self.ids.iter().enumerate() {
            out[id as usize] = self.force[slot];
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Uploaded and read back, a state comes back as it went (to f32 in single), species
    /// included (bits of an f32 in single, values in f64; mixed's f32 copy holds the bits).
    #[test]
    fn state_round_trips() {
        let atoms = AtomState {
            positions: vec![[0.1, 2.5, -3.25], [7.0, 1e-3, 4.4]],
            velocities: vec![[1.0, -0.3, 0.7], [0.0, 2.0, -1.5]],
            types: vec![0, 3],
            ..Default::default()
        };
        let ids = bytemuck::cast_slice(&[0u32, 1]).to_vec();
        for precision in Precision::ALL {
            let up = Upload::new(&atoms, precision);
            let back = DeviceState::parse(&up.pos, &up.vel, &ids, &[], precision).atoms();
            assert_eq!(back.types, atoms.types);
            for (a, b) in back.positions.iter().zip(&atoms.positions) {
                for k in 0..3 {
                    let want = if precision == Precision::Single { b[k] as f32 as f64 } else { b[k] };
                    assert_eq!(a[k], want, "{precision:?}");
                }
            }
            assert_eq!(up.posf.is_some(), precision == Precision::Mixed);
            if let Some(f) = up.posf {
                let w: Vec<f32> = bytemuck::pod_collect_to_vec(&f);
                assert_eq!(w[7].to_bits(), 3);
                assert_eq!(w[4], 7.0);
            }
        }
    }
}
