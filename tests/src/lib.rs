//! Helpers for end-to-end tests: fresh databases, the real binaries, and a
//! controller on a loopback port in a temp dir.
//!
//! - [`db`]: a fresh SQLite file or PostgreSQL database per test.
//! - [`proc`]: running `spurctld` and the `spur` personalities.

pub mod db;
pub mod proc;
