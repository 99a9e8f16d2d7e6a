//! Taking a system elsewhere: a LAMMPS input deck (`lammps.rs`) that reproduces what was built
//! here. Pure text generation plus atomic writes; no backend or UI code.

pub mod lammps;
pub mod lammps_fields;
mod lammps_friction;
mod lammps_obstacle_friction;
mod lammps_obstacles;
mod lammps_pair;
pub mod lammps_tunnel;
