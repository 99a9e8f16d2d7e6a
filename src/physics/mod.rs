//! The physics contract every backend meets: parameters, the LJ pair evaluator, the 9-3 wall
//! evaluator, the obstacle signed-distance field, the wind tunnel's inflow zone (`tunnel.rs`),
//! dye sources and their geometry (`dye.rs`),
//! initial states, thermostat arithmetic, and the JZG equation of state (`jzg.rs`) the
//! simulations are checked against.
//! Backends call into these; nothing here knows which backend runs.

pub mod cutoff;
pub mod dye;
pub mod friction;
pub mod init;
pub mod jzg;
pub mod lj;
pub mod obstacles;
pub mod params;
pub mod piston;
pub mod real;
pub mod sim_box;
pub mod species;
pub mod tunnel;
pub mod wall;
