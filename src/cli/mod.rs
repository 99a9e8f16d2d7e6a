//! The command line: `run`, `bench` (and later `record`, `export-lammps`).

/// Entry point of the binary.
pub fn main() -> std::process::ExitCode {
    std::process::ExitCode::SUCCESS
}
