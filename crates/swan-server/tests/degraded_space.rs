//! A degraded log array rewritten in large requests keeps serving: moving a block off a
//! failed member's open stripe row needs space like any write, and must wait for GC as a
//! user write does rather than give up and lose durability.
//!
//! Log-RAID5 over three members, member 1 failed, the volume rewritten in 64-block requests
//! queued 64 at a time: segments run out while blocks still sit on the failed member's slots
//! of open rows. The real engine on the caller's thread ([`Stepper`]) over member files.

mod common;

use common::{call_within, pattern, serve_like, small_array, write_all};
use swan_server::member::BLOCK;
use swan_server::service::BlockOp;

#[test]
fn a_degraded_array_rewritten_in_large_requests_keeps_its_space_and_data() {
    let dir = tempfile::tempdir().unwrap();
    let (paths, _) = small_array(dir.path(), "lograid5", 1, 3);
    let mut st = serve_like(&paths, "degraded-space");
    let volume = st.status().volume_bytes / BLOCK as u64;
    for round in 0..2 {
        write_all(&mut st, volume, round, 64);
    }
    st.fail(1).unwrap();
    for round in 2..6 {
        write_all(&mut st, volume, round, 64);
    }
    for lba in (0..volume).step_by(61) {
        assert_eq!(call_within(&mut st, BlockOp::Read, lba, 1, 100_000).unwrap(), pattern(lba, 5));
    }
    // Rebuilt, every row's parity matches its data: the padded rows included.
    let new = dir.path().join("m1-new");
    std::fs::File::create(&new).unwrap().set_len(24 << 20).unwrap();
    st.replace(1, &new).unwrap();
    for _ in 0..100_000 {
        if !st.rebuilding() {
            break;
        }
        st.round();
    }
    assert!(!st.rebuilding(), "the rebuild never finished");
    st.shutdown().unwrap();
    let mut whole = paths.clone();
    whole[1] = new;
    let rep = swan_server::check::check(&whole).unwrap();
    assert_eq!(rep.problems, 0, "{}", rep.text);
}
