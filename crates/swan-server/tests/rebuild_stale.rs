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

use common::{call_within, pattern, small_array};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use swan_server::array;
use swan_server::engine::{EngineOptions, Stepper};
use swan_server::member::BLOCK;
use swan_server::service::{BlockOp, BlockRequest};

/// As `swan serve` runs over files: free-space TRIMs skipped.
fn serve_like(paths: &[std::path::PathBuf]) -> Stepper {
    let opened = array::open(paths, false, false).unwrap();
    let recovered = array::recover(&opened).unwrap();
    let opts = EngineOptions {
        name: "rebuild-stale".into(),
        read_only: false,
        emulate: None,
        verbose: false,
        punch_holes: false,
    };
    Stepper::start(opened, recovered, opts).unwrap()
}

/// Writes blocks `0..blocks` with `round`'s pattern, 16 at a time, all queued before the
/// engine runs: a round then serves a batch of them, and a rebuild advances one slice per
/// round, so the log moves far while the rebuild moves little.
fn write_all(st: &mut Stepper, blocks: u64, round: u64) {
    let done = Arc::new(AtomicUsize::new(0));
    let mut sent = 0;
    for lba in (0..blocks).step_by(16) {
        let n = 16.min(blocks - lba);
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
                r.expect("a write");
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
fn rows_opened_while_rebuilding_keep_their_parity_over_stale_free_segments() {
    let dir = tempfile::tempdir().unwrap();
    let (paths, _) = small_array(dir.path(), "lograid5", 1, 3);
    let mut st = serve_like(&paths);
    let volume = st.status().volume_bytes / swan_server::member::BLOCK as u64;
    // Two laps of the log: GC frees segments, which keep their old blocks on the files.
    for round in 0..3 {
        write_all(&mut st, volume, round);
    }
    st.fail(1).unwrap();
    let new = dir.path().join("m1-new");
    std::fs::File::create(&new).unwrap().set_len(24 << 20).unwrap();
    st.replace(1, &new).unwrap();
    // Rewrite the volume while the rebuild runs (one rebuild slice per round with requests
    // waiting): segments freed behind the cursor are opened again before it finishes.
    let mut round = 3;
    while st.rebuilding() {
        write_all(&mut st, volume, round);
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
