//! Shared by the server crate's integration tests.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use swan_core::victim::VictimPolicy;
use swan_server::array::{self, CreateOptions};
use swan_server::engine::{EngineOptions, Stepper};
use swan_server::layout::Superblock;
use swan_server::member::BLOCK;
use swan_server::service::{BlockOp, BlockRequest, Reply};

/// A small array over member files `m0`, `m1`, ... in `dir`: `rgroups` × `ssds` members of
/// 24 MiB, 128 KiB segments.
pub fn small_array(dir: &Path, scheme: &str, rgroups: u32, ssds: u32) -> (Vec<PathBuf>, Superblock) {
    let paths: Vec<PathBuf> = (0..rgroups * ssds).map(|i| dir.join(format!("m{i}"))).collect();
    let o = CreateOptions {
        kind: scheme.parse().unwrap(),
        rgroups,
        ssds_per_rgroup: ssds,
        member_bytes: Some(24 << 20),
        segment_bytes: Some(128 << 10),
        chunk_bytes: 64 << 10,
        victim: VictimPolicy::Greedy,
        spare: None,
        force: false,
        created: 0,
        zoned: None,
    };
    let sb = array::create(&paths, &o).unwrap();
    (paths, sb)
}

/// The real engine on the caller's thread over the array on `paths`, recovered as
/// `swan serve` recovers it.
#[allow(dead_code)]
pub fn start(paths: &[PathBuf], name: &str) -> Stepper {
    start_with(paths, name, true)
}

fn start_with(paths: &[PathBuf], name: &str, punch_holes: bool) -> Stepper {
    let opened = array::open(paths, false, false).unwrap();
    let recovered = array::recover(&opened).unwrap();
    let opts = EngineOptions {
        name: name.into(),
        read_only: false,
        emulate: None,
        verbose: false,
        punch_holes,
        reads: Default::default(),
    };
    Stepper::start(opened, recovered, opts).unwrap()
}

/// A block of test data, different for every logical block and round of writes.
#[allow(dead_code)]
pub fn pattern(lba: u64, round: u64) -> Vec<u8> {
    let mut b = vec![0u8; BLOCK];
    for (i, chunk) in b.chunks_mut(8).enumerate() {
        chunk.copy_from_slice(&(lba.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ round << 48 ^ i as u64).to_le_bytes());
    }
    b
}

/// (member path, byte offset) holding exactly `data`.
#[allow(dead_code)]
pub fn find(paths: &[PathBuf], data: &[u8]) -> (PathBuf, u64) {
    for p in paths {
        let bytes = std::fs::read(p).unwrap();
        if let Some(i) = bytes.chunks(BLOCK).position(|c| c == data) {
            return (p.clone(), (i * BLOCK) as u64);
        }
    }
    panic!("the block is on no member");
}

/// Submit one request of `blocks` blocks at `lba` (a FLUSH carries no length) and run the
/// stepper's rounds until it completes; panics if it has not after `rounds` rounds.
#[allow(dead_code)]
pub fn call_within(st: &mut Stepper, op: BlockOp, lba: u64, blocks: u32, rounds: u32) -> Reply {
    let slot: Arc<Mutex<Option<Reply>>> = Arc::new(Mutex::new(None));
    let s = slot.clone();
    let len = if matches!(op, BlockOp::Flush) { 0 } else { blocks * BLOCK as u32 };
    let req = BlockRequest { op, offset: lba * BLOCK as u64, len, fua: false };
    st.submit(req, Box::new(move |r| *s.lock().unwrap() = Some(r)));
    for _ in 0..rounds {
        if let Some(r) = slot.lock().unwrap().take() {
            return r;
        }
        st.round();
    }
    panic!("request at {lba} never completed");
}

/// The real engine on the caller's thread as `swan serve` runs over files: free-space TRIMs
/// skipped, so a free segment keeps the blocks of its last life.
#[allow(dead_code)]
pub fn serve_like(paths: &[PathBuf], name: &str) -> Stepper {
    start_with(paths, name, false)
}

/// Writes blocks `0..blocks` with `round`'s pattern in `per`-block requests, all queued
/// before the engine runs (a round then serves a batch of them), then a FLUSH. A write that
/// fails panics, naming it.
#[allow(dead_code)]
pub fn write_all(st: &mut Stepper, blocks: u64, round: u64, per: u64) {
    use std::sync::atomic::{AtomicUsize, Ordering};
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
