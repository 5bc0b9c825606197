//! The `swan` command's parts, as a library: the binary (`main.rs`) parses the command
//! line and calls them; the Python package (`crates/swan-py`) calls [`api`] with the same
//! options, so both take one set of tunables.

pub mod alloc;
pub mod apas_cmd;
pub mod api;
pub mod docs_cmd;
pub mod host_cmd;
pub mod plan;
pub mod read_args;
pub mod replay_cmd;
pub mod repro;
mod repro_apas;
mod repro_apas_sweep;
mod repro_apas_why;
pub mod repro_args;
mod repro_harmonia;
mod repro_spread;
mod repro_triple_a;
mod repro_triple_a_arrays;
mod repro_triple_a_gc;
mod repro_triple_a_traces;
mod repro_ycsb;
pub mod runner;
pub mod serve_cmd;
pub mod serve_config;
pub mod server_cmd;
pub mod sim_cmd;
pub mod triple_a_cmd;
mod units;
pub mod verify;
