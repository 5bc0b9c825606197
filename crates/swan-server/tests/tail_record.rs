//! The journal's open tail record: batches of a few requests add their entries to the
//! newest tail record (its block written again) instead of taking a block of the ring each.
//! These tests pin down that this saves the ring, that a process killed between batches
//! still finds every acknowledged write, and that a torn rewrite of the tail block (power
//! lost in the middle of it) loses only what no FLUSH covered, and never returns garbage.
//!
//! The real engine on the caller's thread ([`Stepper`]) over member files; a "crash" is the
//! engine dropped without its shutdown.

mod common;

use common::{pattern, start};

use std::path::PathBuf;
use swan_server::engine::Stepper;
use swan_server::member::BLOCK;
use swan_server::service::{BlockOp, Reply};

fn call(st: &mut Stepper, op: BlockOp, lba: u64) -> Reply {
    common::call_within(st, op, lba, 1, 100_000)
}

/// Write `lbas`, one request per round, each acknowledged before the next is sent.
fn write_each(st: &mut Stepper, lbas: std::ops::Range<u64>, round: u64) {
    for lba in lbas {
        call(st, BlockOp::Write(pattern(lba, round).into()), lba).unwrap();
    }
}

#[test]
fn small_batches_share_one_tail_record_and_survive_a_kill() {
    let dir = tempfile::tempdir().unwrap();
    let (paths, _) = common::small_array(dir.path(), "swan0", 2, 2);
    let mut st = start(&paths, "tail");
    let before = st.status().journal_records;
    write_each(&mut st, 0..200, 1);
    // 200 batches of one write each: one record of 200 entries, not 200 records.
    assert_eq!(st.status().journal_records - before, 1, "records for 200 one-write batches");
    write_each(&mut st, 200..300, 1);
    // The block holds 254 entries; the 255th starts the next record.
    assert_eq!(st.status().journal_records - before, 2, "records for 300 one-write batches");
    drop(st); // killed: no shutdown, no FLUSH
    let mut st = start(&paths, "tail");
    for lba in 0..300 {
        assert_eq!(call(&mut st, BlockOp::Read, lba).unwrap(), pattern(lba, 1), "block {lba} after the kill");
    }
    st.shutdown().unwrap();
}

/// The blocks of `path` that differ between two of its images and start a journal record.
fn changed_records(before: &[u8], after: &[u8]) -> Vec<usize> {
    (0..after.len() / BLOCK)
        .filter(|&i| {
            let (a, b) = (&before[i * BLOCK..(i + 1) * BLOCK], &after[i * BLOCK..(i + 1) * BLOCK]);
            a != b && b.starts_with(b"SWANJRN1")
        })
        .collect()
}

#[test]
fn a_torn_tail_rewrite_loses_only_what_no_flush_covered() {
    let dir = tempfile::tempdir().unwrap();
    let (paths, _) = common::small_array(dir.path(), "swan0", 2, 2);
    let meta: Vec<PathBuf> = paths[..2].to_vec();
    let mut st = start(&paths, "tail");
    write_each(&mut st, 0..50, 1);
    call(&mut st, BlockOp::Flush, 0).unwrap();
    // The FLUSH closed the tail: what follows goes into a new tail record, grown by
    // rewrites, never into a record a synced one follows.
    write_each(&mut st, 50..60, 1);
    let mid: Vec<Vec<u8>> = meta.iter().map(|p| std::fs::read(p).unwrap()).collect();
    write_each(&mut st, 60..100, 1);
    drop(st);
    let end: Vec<Vec<u8>> = meta.iter().map(|p| std::fs::read(p).unwrap()).collect();
    for (k, p) in meta.iter().enumerate() {
        let grown = changed_records(&mid[k], &end[k]);
        assert_eq!(grown.len(), 1, "member {k}: one record block rewritten, got {grown:?}");
        // Power lost in the middle of the rewrite: the first half of the block is new.
        let i = grown[0];
        let mut torn = end[k].clone();
        torn[i * BLOCK + BLOCK / 2..(i + 1) * BLOCK].copy_from_slice(&mid[k][i * BLOCK + BLOCK / 2..(i + 1) * BLOCK]);
        std::fs::write(p, torn).unwrap();
    }
    let mut st = start(&paths, "tail");
    for lba in 0..100 {
        let got = call(&mut st, BlockOp::Read, lba).unwrap();
        if lba < 50 {
            assert_eq!(got, pattern(lba, 1), "block {lba}: covered by the FLUSH");
        } else {
            // Not covered: the written data or what was there before (nothing), never other.
            assert!(got == pattern(lba, 1) || got.iter().all(|&b| b == 0), "block {lba}: neither written nor empty");
        }
    }
    st.shutdown().unwrap();
}
