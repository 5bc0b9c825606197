//! GC verifies what it moves (issue 5, item 2): a block that rotted in a victim is rebuilt
//! from parity before it is moved (swan5), or moved marked bad so that reading it fails
//! (swan0) — never moved with a fresh CRC that would make the bad data look good.
//!
//! The real engine on the caller's thread ([`Stepper`]) over member files: the whole volume
//! written, one block's bits flipped on its member behind the server's back, every other
//! block rewritten until GC has moved that one.

mod common;

use common::{find, pattern, start};

use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use swan_server::engine::Stepper;
use swan_server::service::{BlockOp, Reply};

fn call(st: &mut Stepper, op: BlockOp, lba: u64, blocks: u32) -> Reply {
    common::call_within(st, op, lba, blocks, 1_000_000)
}

fn rot_then_collect(scheme: &str, dir: &Path) -> (Stepper, Vec<PathBuf>, u64, Vec<u8>) {
    let ssds = if scheme.ends_with('0') { 2 } else { 3 };
    let (paths, sb) = common::small_array(dir, scheme, 3, ssds);
    let volume = sb.volume_blocks;
    let mut st = start(&paths, "gc-verify");
    for lba in (0..volume).step_by(16) {
        let n = 16.min(volume - lba) as u32;
        let data: Vec<u8> = (lba..lba + u64::from(n)).flat_map(|l| pattern(l, 0)).collect();
        call(&mut st, BlockOp::Write(data.into()), lba, n).unwrap();
    }
    call(&mut st, BlockOp::Flush, 0, 0).unwrap();
    // Block `victim` rots on its member: some bits flipped behind the server's back.
    let victim = volume / 3;
    let good = pattern(victim, 0);
    let (member, at) = find(&paths, &good);
    let mut bad = good.clone();
    bad[100] ^= 0x24;
    bad[3000] ^= 0x81;
    std::fs::OpenOptions::new().write(true).open(&member).unwrap().write_all_at(&bad, at).unwrap();
    // Everything else is rewritten until GC has moved the rotten block.
    for round in 1..=8 {
        for lba in (0..volume).filter(|&l| l != victim) {
            call(&mut st, BlockOp::Write(pattern(lba, round).into()), lba, 1).unwrap();
        }
        let s = st.status();
        if s.gc_repaired + s.gc_lost > 0 {
            return (st, paths, victim, good);
        }
    }
    panic!("{scheme}: GC never moved block {victim}: {:?}", st.status());
}

#[test]
fn gc_rebuilds_a_rotten_block_from_parity_before_moving_it() {
    let dir = tempfile::tempdir().unwrap();
    let (mut st, paths, victim, good) = rot_then_collect("swan5", dir.path());
    let s = st.status();
    assert_eq!((s.gc_repaired, s.gc_lost), (1, 0), "{s:?}");
    assert!(s.gc_verified > 100, "GC checked too few blocks: {s:?}");
    assert_eq!(call(&mut st, BlockOp::Read, victim, 1).unwrap(), good);
    st.shutdown().unwrap();
    let mut st = start(&paths, "gc-verify");
    assert_eq!(call(&mut st, BlockOp::Read, victim, 1).unwrap(), good, "after a restart");
    st.shutdown().unwrap();
    let rep = swan_server::check::check(&paths).unwrap();
    assert_eq!(rep.problems, 0, "{}", rep.text);
}

#[test]
fn gc_moves_a_rotten_block_it_cannot_rebuild_marked_bad() {
    let dir = tempfile::tempdir().unwrap();
    let (mut st, _paths, victim, _good) = rot_then_collect("swan0", dir.path());
    let s = st.status();
    // (Moved again later, it fails its CRC again: each move counts.)
    assert!(s.gc_repaired == 0 && s.gc_lost >= 1 && s.gc_verified > 100, "{s:?}");
    // The bad data is not laundered by the move: reading it fails.
    assert!(call(&mut st, BlockOp::Read, victim, 1).is_err(), "GC handed the rotten block a good CRC");
    // Rewritten, it is good again.
    call(&mut st, BlockOp::Write(pattern(victim, 9).into()), victim, 1).unwrap();
    assert_eq!(call(&mut st, BlockOp::Read, victim, 1).unwrap(), pattern(victim, 9));
    st.shutdown().unwrap();
}
