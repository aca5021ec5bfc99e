//! Helpers for end-to-end tests: fresh databases, the real binaries, and a
//! controller on a loopback port in a temp dir.
//!
//! - [`borrow`]: our side of the `slurm` provisioner's tests: the definition, spur.conf, the wait for a borrowed node.
//! - [`cluster`]: a controller and an agent with the CLI pointed at them.
//! - [`config`]: the cluster part of a spur.conf, built ([`config::ClusterToml`]).
//! - [`db`]: a fresh SQLite file or PostgreSQL database per test.
//! - [`inproc`]: an in-process controller with no agents, for load commands.
//! - [`proc`]: running `spurctld` and the `spur` personalities.
//! - [`proxy`]: a TCP proxy a test cuts, for database outages.
//! - [`seed`]: jobs as sbatch leaves them, written straight into a store, for load commands.
//! - [`slurm`]: a one-node real Slurm (Debian's slurmctld and slurmd) on loopback, the provisioner's upstream.
//! - [`tmux`]: a tmux server of the test's own, for the console in a real terminal.
//! - [`users`]: real users (useradd), a private munged and the CLI run as each user.
//! - [`wait`]: waiting for an event with the shared deadline ([`wait::wait_until`]).

pub mod borrow;
pub mod cluster;
pub mod config;
pub mod db;
pub mod inproc;
pub mod proc;
pub mod proxy;
pub mod seed;
pub mod slurm;
pub mod tmux;
pub mod users;
pub mod wait;
