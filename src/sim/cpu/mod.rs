//! The multithreaded CPU backend.
