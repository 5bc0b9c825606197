//! The `swan` command's server parts, as a library: the binary (`main.rs`) parses the
//! command line and calls them. The laboratory's commands (`swan sim`, `swan repro`, …) are
//! the `swan-lab` crate's, in the binary when the `lab` feature is on (the default); the
//! server's commands build and test without it.

pub mod alloc;
pub mod docs_cmd;
pub mod serve_cmd;
pub mod serve_config;
pub mod server_cmd;
pub mod zones_cmd;
