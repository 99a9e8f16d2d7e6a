//! Choosing a backend.
pub enum BackendChoice {
    Auto,
    Cpu,
    Cuda,
}
pub fn open_backend() {}
