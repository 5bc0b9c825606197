//! Reads of segments whose summaries were sealed before block CRCs (`SWANSUM1`, every entry's
//! CRC 0; FORMAT.md: arrays mix both) are served as they are and counted unverified, not as
//! checked against a CRC of 0. Reads look up only a block's own summary entry (pool.rs,
//! `expected_crc`), so a CRC of 0 there is what sends them to the header's magic.
//!
//! The real engine on the caller's thread ([`swan_server::engine::Stepper`]) over member
//! files: the volume written, every sealed summary rewritten as version 1 behind the
//! server's back, then every block read back.

mod common;

use common::{pattern, start};

use swan_core::summary::Summary;
use swan_server::array;
use swan_server::member::BLOCK;
use swan_server::service::BlockOp;
use swan_server::summaries;

#[test]
fn blocks_of_version_1_summaries_read_back_unverified() {
    let dir = tempfile::tempdir().unwrap();
    let (paths, sb) = common::small_array(dir.path(), "swan5", 3, 3);
    let volume = sb.volume_blocks;
    let mut st = start(&paths, "summary-v1");
    for lba in (0..volume).step_by(16) {
        let n = 16.min(volume - lba) as u32;
        let data: Vec<u8> = (lba..lba + u64::from(n)).flat_map(|l| pattern(l, 0)).collect();
        common::call_within(&mut st, BlockOp::Write(data.into()), lba, n, 1_000).unwrap();
    }
    st.shutdown().unwrap();

    // Every sealed summary becomes a version-1 one: magic SWANSUM1, each CRC 0.
    let opened = array::open(&paths, false, false).unwrap();
    let scheme = opened.sb.array_spec().build().unwrap();
    let geo = *scheme.log_geometry().expect("a log-structured scheme");
    let mut buf = Vec::new();
    let mut rewritten = 0;
    for segment in 0..geo.segments() {
        summaries::read_raw(&opened.members, &geo, segment, &mut buf).unwrap();
        let Ok(mut s) = Summary::decode(&buf) else { continue };
        assert!(s.block_crcs, "segment {segment}: this swan seals summaries with block CRCs");
        s.block_crcs = false;
        s.entries.iter_mut().for_each(|e| e.crc = 0);
        let v1 = s.encode(geo.summary_blocks);
        for b in 0..geo.summary_blocks {
            let (m, at) = geo.slot_location(segment, geo.payload_slots() + b);
            opened.members[m as usize].write(at, &v1[b as usize * BLOCK..(b as usize + 1) * BLOCK]).unwrap();
        }
        rewritten += 1;
    }
    drop(opened);
    assert!(rewritten > 10, "too few sealed segments to matter: {rewritten}");

    let mut st = start(&paths, "summary-v1");
    for lba in 0..volume {
        let got = common::call_within(&mut st, BlockOp::Read, lba, 1, 1_000).unwrap();
        assert!(got == pattern(lba, 0), "block {lba} read back wrong");
    }
    let s = st.status();
    assert_eq!((s.read_mismatches, s.read_repairs, s.read_failures), (0, 0, 0), "{s:?}");
    // Blocks of sealed segments had nothing to check; those of the open segments did.
    assert!(s.reads_unverified >= rewritten * u64::from(geo.payload_slots()) / 2, "{s:?}");
    assert!(s.reads_verified < volume / 4, "blocks of version-1 summaries counted as verified: {s:?}");
    st.shutdown().unwrap();
}
