//! End-to-end tests of the real block server: `swan create` members in a temporary
//! directory, start `swan serve` as a child process on a loopback port, and drive it with
//! real clients (fio's nbd engine, nbdinfo, nbdcopy, qemu-img) and with a hand-rolled NBD
//! client that misbehaves on purpose. Then stop it with SIGTERM, `swan check` the members
//! offline, and restart it to prove the data survived.
//!
//! - [`gc_restart`]: fio writes and verifies until GC has run in every R-group, and the data
//!   survives a clean stop and a restart;
//! - [`clients`]: what real and hostile NBD clients see of a running server;
//! - [`operator`]: the operator's commands around a server: who owns an array, its spare
//!   space and GC target, and the refusals of bad members;
//! - [`operator_copies`]: an array and its copy served side by side, each reached by its own;
//! - [`operator_names`]: member paths that are links or other names of one file.
//!
//! Every client tool is required: a missing one fails the test and names its Debian package
//! (scripts/test.sh installs them). Every child process and every wait has a deadline, and the
//! server is killed when its guard is dropped, also on a failed test. The server listens on
//! 127.0.0.1:0 and the test reads the port it got from its log, so parallel tests never race
//! for a port. One binary with a module a theme: one link for all of them.

#[path = "../common/mod.rs"]
mod common;
#[path = "../nbd_wire/mod.rs"]
mod nbd_wire;

mod clients;
mod gc_restart;
mod operator;
mod operator_copies;
mod operator_names;

const MIB: u64 = 1 << 20;
