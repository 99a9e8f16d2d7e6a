//! File formats: extended XYZ trajectories, thermo CSV logs, and atomic (crash-safe) writes.
//! Readers reject bad input with the file, line and field; nothing here panics on input.

pub mod atomic;
