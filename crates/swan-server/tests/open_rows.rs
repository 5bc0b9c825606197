//! A stripe row of a log-structured segment gets its parity when the row completes. What is
//! in a row still filling has no redundancy on the members yet; these tests pin down what
//! a member missing at the next start costs then:
//! - after a clean stop, nothing (the stop gives those rows their parity);
//! - after a crash, a block written before the last checkpoint into a row still filling
//!   cannot be rebuilt (two faults: the crash and the member), and it must read as an
//!   error, never as the garbage its row rebuilds.
//!
//! The real engine on the caller's thread ([`Stepper`]) over member files; a "crash" is the
//! engine dropped without its shutdown.

mod common;

use common::start;

use std::path::PathBuf;
use swan_server::array;
use swan_server::engine::Stepper;
use swan_server::member::BLOCK;
use swan_server::service::{BlockOp, Reply};

fn block(lba: u64) -> Vec<u8> {
    (0..BLOCK).map(|i| (lba as usize * 31 + i * 7 + 1) as u8).collect()
}

fn call(st: &mut Stepper, op: BlockOp, lba: u64) -> Reply {
    common::call_within(st, op, lba, 1, 100_000)
}

/// The array's members with `member` given as missing.
fn without(paths: &[PathBuf], member: usize) -> Vec<PathBuf> {
    let mut p = paths.to_vec();
    p[member] = array::MISSING.into();
    p
}

/// The member holding `data` (a block written once).
fn holder(paths: &[PathBuf], data: &[u8]) -> usize {
    paths
        .iter()
        .position(|p| std::fs::read(p).unwrap().chunks(BLOCK).any(|c| c == data))
        .expect("the block is on a member")
}

/// Write three blocks: two fill a row (2 data columns), the third half fills the next.
fn three_blocks(paths: &[PathBuf], checkpoint_every: u64) -> Stepper {
    let mut st = start(paths, "open-rows");
    st.set_checkpoint_every(checkpoint_every);
    for lba in 0..3 {
        call(&mut st, BlockOp::Write(block(lba).into()), lba).unwrap();
    }
    call(&mut st, BlockOp::Flush, 0).unwrap();
    st
}

#[test]
fn a_clean_stop_leaves_no_row_without_parity() {
    let dir = tempfile::tempdir().unwrap();
    let (paths, _) = common::small_array(dir.path(), "swan5", 2, 3);
    three_blocks(&paths, 0).shutdown().unwrap();
    let m = holder(&paths, &block(2));
    let mut st = start(&without(&paths, m), "open-rows");
    for lba in 0..3 {
        assert_eq!(call(&mut st, BlockOp::Read, lba).unwrap(), block(lba), "block {lba}, member {m} missing");
    }
    st.shutdown().unwrap();
}

#[test]
fn after_a_crash_a_block_of_a_row_still_filling_reads_as_an_error_not_garbage() {
    let dir = tempfile::tempdir().unwrap();
    let (paths, _) = common::small_array(dir.path(), "swan5", 2, 3);
    // A checkpoint at every record: the flush's record makes one, after the three blocks
    // were written, so their own journal entries are behind it.
    let st = three_blocks(&paths, 1);
    drop(st); // the crash
    let m = holder(&paths, &block(2));
    let mut st = start(&without(&paths, m), "open-rows");
    for lba in 0..2 {
        assert_eq!(call(&mut st, BlockOp::Read, lba).unwrap(), block(lba), "block {lba} of a whole row");
    }
    // Lost with its member and the crash: an error says so. Data, if any, must be right.
    if let Ok(got) = call(&mut st, BlockOp::Read, 2) {
        assert_eq!(got, block(2), "block 2 of the open row read as garbage with member {m} missing");
    }
    st.shutdown().unwrap();
}
