//! A degraded log array rewritten in large requests keeps serving: moving a block off a
//! failed member's open stripe row needs space like any write, and must wait for GC as a
//! user write does rather than give up and lose durability.
//!
//! Log-RAID5 over three members, member 1 failed, the volume rewritten in 64-block requests
//! queued 64 at a time: segments run out while blocks still sit on the failed member's slots
//! of open rows. The real engine on the caller's thread ([`Stepper`]) over member files.

mod common;

use common::{call_within, pattern, small_array};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use swan_server::array;
use swan_server::engine::{EngineOptions, Stepper};
use swan_server::member::BLOCK;
use swan_server::service::{BlockOp, BlockRequest};

fn serve_like(paths: &[std::path::PathBuf]) -> Stepper {
    let opened = array::open(paths, false, false).unwrap();
    let recovered = array::recover(&opened).unwrap();
    let opts = EngineOptions {
        name: "degraded-space".into(),
        read_only: false,
        emulate: None,
        verbose: false,
        punch_holes: false,
    };
    Stepper::start(opened, recovered, opts).unwrap()
}

/// Writes blocks `0..blocks` with `round`'s pattern in `per`-block requests, all queued
/// before the engine runs, then a FLUSH.
fn write_all(st: &mut Stepper, blocks: u64, round: u64, per: u64) {
    let done = Arc::new(AtomicUsize::new(0));
    let mut sent = 0;
    for lba in (0..blocks).step_by(per as usize) {
        let n = per.min(blocks - lba);
        let data: Vec<u8> = (lba..lba + n).flat_map(|b| pattern(b, round)).collect();
        let req = BlockRequest {
            op: BlockOp::Write(data.into()),
            offset: lba * BLOCK as u64,
            len: (n as usize * BLOCK) as u32,
            fua: false,
        };
        let d = done.clone();
        st.submit(
            req,
            Box::new(move |r| {
                r.unwrap_or_else(|e| panic!("a write of {n} blocks at {lba} failed: {e:?}"));
                d.fetch_add(1, Ordering::SeqCst);
            }),
        );
        sent += 1;
    }
    for _ in 0..1_000_000 {
        if done.load(Ordering::SeqCst) == sent {
            break;
        }
        st.round();
    }
    assert_eq!(done.load(Ordering::SeqCst), sent, "writes never completed");
    call_within(st, BlockOp::Flush, 0, 0, 100_000).unwrap();
}

#[test]
fn a_degraded_array_rewritten_in_large_requests_keeps_its_space_and_data() {
    let dir = tempfile::tempdir().unwrap();
    let (paths, _) = small_array(dir.path(), "lograid5", 1, 3);
    let mut st = serve_like(&paths);
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
