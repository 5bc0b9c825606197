//! In-place RAID verifies every block it reads against a per-block CRC table
//! (crates/swan-server/src/blockcrc.rs): a flipped bit, a zeroed block and a misdirected
//! write (another block's data in its place) on one member are rebuilt from parity on RAID5
//! and answered with EIO on RAID0 — bad data is never returned; the table survives a clean
//! stop; after a crash the array is resynced (parity and CRCs from the data) and nothing
//! that was written reads as an error.
//!
//! The real engine on the caller's thread ([`Stepper`]) over member files; a "crash" is the
//! engine dropped without its shutdown.

mod common;

use common::{find, pattern, start};

use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use swan_server::engine::Stepper;
use swan_server::member::BLOCK;
use swan_server::service::{BlockOp, Reply};

const BLOCKS: u64 = 600;

fn call(st: &mut Stepper, op: BlockOp, lba: u64, blocks: u32) -> Reply {
    common::call_within(st, op, lba, blocks, 100_000)
}

fn write_all(st: &mut Stepper, round: u64) {
    for lba in (0..BLOCKS).step_by(8) {
        let data: Vec<u8> = (lba..lba + 8).flat_map(|l| pattern(l, round)).collect();
        call(st, BlockOp::Write(data.into()), lba, 8).unwrap();
    }
    call(st, BlockOp::Flush, 0, 0).unwrap();
}

fn put(path: &Path, at: u64, data: &[u8]) {
    std::fs::OpenOptions::new().write(true).open(path).unwrap().write_all_at(data, at).unwrap();
}

/// Damage three blocks behind the server's back: a flipped bit (block 10), a zeroed block
/// (block 200) and a misdirected write (block 400 holds block 401's data).
fn damage(paths: &[PathBuf], round: u64) -> [u64; 3] {
    let (m, at) = find(paths, &pattern(10, round));
    let mut bad = pattern(10, round);
    bad[77] ^= 0x10;
    put(&m, at, &bad);
    let (m, at) = find(paths, &pattern(200, round));
    put(&m, at, &[0u8; BLOCK]);
    let (m, at) = find(paths, &pattern(400, round));
    put(&m, at, &pattern(401, round));
    [10, 200, 400]
}

#[test]
fn raid5_rebuilds_rotten_blocks_from_parity_and_raid0_refuses_them() {
    let dir = tempfile::tempdir().unwrap();
    let (paths, _) = common::small_array(dir.path(), "raid5", 1, 4);
    let mut st = start(&paths, "inplace-crcs");
    write_all(&mut st, 1);
    damage(&paths, 1);
    for lba in 0..BLOCKS {
        assert_eq!(call(&mut st, BlockOp::Read, lba, 1).unwrap(), pattern(lba, 1), "raid5 block {lba}");
    }
    let s = st.status();
    assert_eq!((s.read_mismatches, s.read_repairs, s.read_failures), (3, 3, 0), "{s:?}");
    st.shutdown().unwrap();
    // Rewritten in place: the members hold good data again, and parity agrees.
    let rep = swan_server::check::check(&paths).unwrap();
    assert_eq!(rep.problems, 0, "{}", rep.text);

    let dir = tempfile::tempdir().unwrap();
    let (paths, _) = common::small_array(dir.path(), "raid0", 1, 2);
    let mut st = start(&paths, "inplace-crcs");
    write_all(&mut st, 1);
    let bad = damage(&paths, 1);
    for lba in 0..BLOCKS {
        match call(&mut st, BlockOp::Read, lba, 1) {
            Ok(got) => {
                assert!(!bad.contains(&lba), "raid0 returned damaged block {lba}");
                assert_eq!(got, pattern(lba, 1), "raid0 block {lba}");
            }
            Err(_) => assert!(bad.contains(&lba), "raid0 block {lba} failed but was not damaged"),
        }
    }
    // Rewritten, a block is good again.
    call(&mut st, BlockOp::Write(pattern(10, 2).into()), 10, 1).unwrap();
    assert_eq!(call(&mut st, BlockOp::Read, 10, 1).unwrap(), pattern(10, 2));
    st.shutdown().unwrap();
}

#[test]
fn the_table_outlives_a_clean_stop() {
    let dir = tempfile::tempdir().unwrap();
    let (paths, _) = common::small_array(dir.path(), "raid5", 1, 3);
    let mut st = start(&paths, "inplace-crcs");
    write_all(&mut st, 1);
    st.shutdown().unwrap();
    damage(&paths, 1);
    let mut st = start(&paths, "inplace-crcs");
    for lba in 0..BLOCKS {
        assert_eq!(call(&mut st, BlockOp::Read, lba, 1).unwrap(), pattern(lba, 1), "block {lba} after a restart");
    }
    assert_eq!(st.status().read_repairs, 3);
    st.shutdown().unwrap();
}

#[test]
fn after_a_crash_the_array_is_resynced_and_nothing_written_reads_as_an_error() {
    for scheme in ["raid5", "raid0"] {
        let dir = tempfile::tempdir().unwrap();
        let (paths, _) = common::small_array(dir.path(), scheme, 1, 3);
        let mut st = start(&paths, "inplace-crcs");
        write_all(&mut st, 1);
        // Unflushed overwrites, then the crash.
        for lba in (0..BLOCKS).step_by(3) {
            call(&mut st, BlockOp::Write(pattern(lba, 2).into()), lba, 1).unwrap();
        }
        drop(st);
        // A torn parity write (the RAID5 write hole): garbage where one row's parity is.
        if scheme == "raid5" {
            let (m, at) = find(&paths, &pattern(30, 2));
            let is_data = |b: &[u8]| (0..BLOCKS).any(|l| b == pattern(l, 1) || b == pattern(l, 2));
            let parity = paths
                .iter()
                .filter(|p| **p != m)
                .find(|p| {
                    let mut b = vec![0u8; BLOCK];
                    std::fs::File::open(p).unwrap().read_exact_at(&mut b, at).unwrap();
                    !is_data(&b)
                })
                .expect("a parity member");
            put(parity, at, &pattern(9999, 9));
        }
        let mut st = start(&paths, "inplace-crcs");
        for lba in 0..BLOCKS {
            let got = call(&mut st, BlockOp::Read, lba, 1).unwrap_or_else(|e| panic!("{scheme} block {lba}: {e:?}"));
            assert!(got == pattern(lba, 1) || got == pattern(lba, 2), "{scheme} block {lba}: neither write");
        }
        st.shutdown().unwrap();
        let rep = swan_server::check::check(&paths).unwrap();
        assert_eq!(rep.problems, 0, "{scheme}: {}", rep.text);
    }
}

#[test]
fn scrub_finds_and_repairs_what_rotted_and_names_what_is_lost() {
    let dir = tempfile::tempdir().unwrap();
    let (paths, _) = common::small_array(dir.path(), "raid5", 1, 4);
    let mut st = start(&paths, "inplace-crcs");
    write_all(&mut st, 1);
    st.shutdown().unwrap();
    damage(&paths, 1);
    let rep = swan_server::scrub::scrub(&paths, true).unwrap();
    assert_eq!((rep.mismatches, rep.repaired, rep.lost.len()), (3, 3, 0), "{}", rep.text);
    let mut st = start(&paths, "inplace-crcs");
    for lba in 0..BLOCKS {
        assert_eq!(call(&mut st, BlockOp::Read, lba, 1).unwrap(), pattern(lba, 1), "block {lba} after the scrub");
    }
    assert_eq!(st.status().read_mismatches, 0, "the scrub left something for the reads to repair");
    st.shutdown().unwrap();

    let dir = tempfile::tempdir().unwrap();
    let (paths, _) = common::small_array(dir.path(), "raid0", 1, 2);
    let mut st = start(&paths, "inplace-crcs");
    write_all(&mut st, 1);
    st.shutdown().unwrap();
    let bad = damage(&paths, 1);
    let rep = swan_server::scrub::scrub(&paths, true).unwrap();
    assert_eq!(rep.lost, bad.to_vec(), "{}", rep.text);
    // Not stopped cleanly: scrub says to serve it once first.
    drop(start(&paths, "inplace-crcs"));
    let err = swan_server::scrub::scrub(&paths, true).unwrap_err();
    assert!(err.to_string().contains("not stopped cleanly"), "{err}");
}
