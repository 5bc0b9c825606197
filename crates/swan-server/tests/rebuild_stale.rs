//! A rebuild over free segments that still hold their old blocks, while the volume is
//! rewritten.
//!
//! On file members a log array does not TRIM its free segments (`Member::trims_free_space`),
//! so a free segment keeps the blocks of its last life, parity included. A replacement
//! rebuilt over such a segment gets what those blocks rebuild to: the old block of its
//! member, not zero. Rows opened while the member is still failed or rebuilding leave its
//! slot unused and give the row parity that counts the slot as zero, so that slot must be
//! made zero on the replacement, or the row's parity no longer matches its data and a second
//! member's failure would be rebuilt wrong.
//!
//! Log-RAID5 over three members: every write goes to the one parity group, degraded or not.
//! The real engine on the caller's thread ([`Stepper`]) over member files. (This run has not
//! been seen to fail without the zero writes; the e2e test `swan5_writes_on_degraded_and_
//! rebuilds_while_writing` was, about once in forty runs.)

mod common;

use common::{call_within, pattern, serve_like, small_array, write_all};
use swan_server::service::BlockOp;

#[test]
fn rows_opened_while_rebuilding_keep_their_parity_over_stale_free_segments() {
    let dir = tempfile::tempdir().unwrap();
    let (paths, _) = small_array(dir.path(), "lograid5", 1, 3);
    let mut st = serve_like(&paths, "rebuild-stale");
    let volume = st.status().volume_bytes / swan_server::member::BLOCK as u64;
    // Two laps of the log: GC frees segments, which keep their old blocks on the files.
    for round in 0..3 {
        write_all(&mut st, volume, round, 16);
    }
    st.fail(1).unwrap();
    let new = dir.path().join("m1-new");
    std::fs::File::create(&new).unwrap().set_len(24 << 20).unwrap();
    st.replace(1, &new).unwrap();
    // Rewrite the volume while the rebuild runs (one rebuild slice per round with requests
    // waiting): segments freed behind the cursor are opened again before it finishes.
    let mut round = 3;
    while st.rebuilding() {
        write_all(&mut st, volume, round, 16);
        round += 1;
        assert!(round < 200, "the rebuild never finished");
    }
    for lba in (0..volume).step_by(97) {
        assert_eq!(call_within(&mut st, BlockOp::Read, lba, 1, 100_000).unwrap(), pattern(lba, round - 1));
    }
    st.shutdown().unwrap();
    let mut whole = paths.clone();
    whole[1] = new;
    let rep = swan_server::check::check(&whole).unwrap();
    assert_eq!(rep.problems, 0, "{}", rep.text);
}
