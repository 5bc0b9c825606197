//! swan's laboratory: the simulator's commands (`swan sim`, `plan`, `report`, `bench`,
//! `host`, `triple-a`, `apas`, `replay`) and every reproduction of the papers (`swan repro`).
//! The `swan` binary carries them as commands beside the server's; the server's commands
//! (create, serve, status, …) build and test without this crate. The Python package
//! (`crates/swan-py`) reaches the simulator through [`api`], with `swan sim`'s own options.

pub mod apas_cmd;
pub mod api;
pub mod claims;
pub mod claims_cmd;
pub mod experiments;
pub mod host_cmd;
pub mod plan;
pub mod replay_cmd;
pub mod report_cmd;
pub mod repro;
pub mod runner;
pub mod sim_args;
pub mod sim_cmd;
mod sim_report;
mod sim_zoned;
pub mod triple_a_cmd;
pub mod verify;
