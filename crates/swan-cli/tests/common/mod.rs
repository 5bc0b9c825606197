//! The harness the CLI crate's test binaries share, one module a job: tools and child
//! processes under deadlines ([`process`]), a guarded `swan serve` on an ephemeral port
//! ([`server`]), arrays on member files and the operator's commands over them ([`array`]),
//! TLS material ([`certs`]), marked test data ([`marked`]), the client tools ([`tools`]), fio's verify runs
//! ([`fio_verify`]) and a member that hangs on command ([`pausable`]). Each test binary uses
//! a different part of it.
#![allow(dead_code, unused_imports)]

pub mod array;
pub mod certs;
pub mod fio_verify;
pub mod marked;
pub mod pausable;
pub mod process;
pub mod server;
pub mod tools;

pub use array::*;
pub use certs::*;
pub use process::*;
pub use server::*;
pub use tools::*;

pub const SWAN: &str = env!("CARGO_BIN_EXE_swan");
