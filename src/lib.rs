//! argon-sandbox: a real-time, interactive Lennard-Jones argon fluid sandbox.
//!
//! Data flows one way: `scene` describes a system, `sim` backends advance it (`physics`
//! holds the contract they share), `analysis` turns state into observables, `eos` runs equation-of-state sweeps, `flow` averages atoms into continuum fields, `transport` measures diffusion and viscosity, `io` reads and
//! writes files, `render` draws, `app` + `ui` make the desktop app (simulation thread ->
//! renderer -> panels), and `cli` drives it all from the command line. See ARCHITECTURE.md.

pub mod analysis;
pub mod app;
pub mod cli;
pub mod eos;
pub mod export;
pub mod flow;
pub mod interop;
pub mod interrupt;
pub mod io;
pub mod numfmt;
pub mod physics;
pub mod record;
pub mod render;
pub mod rng;
pub mod scene;
pub mod shapes;
pub mod sim;
pub mod transport;
pub mod ui;
pub mod units;
