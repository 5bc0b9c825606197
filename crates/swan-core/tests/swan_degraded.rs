//! A degraded R-group (one member failed) is not chosen as SWAN's front-end while a healthy
//! R-group has room: its new data would have no redundancy to spare. When it is the
//! front-end as the member fails, it hands over at its next segment; once whole again it
//! takes writes like the others.

use swan_core::geometry::RaidLevel;
use swan_core::io::IoPlan;
use swan_core::scheme::{ArraySpec, ReqOp, Request, Scheme, SchemeKind, Submitted};
use swan_core::victim::VictimPolicy;

fn array() -> Box<dyn Scheme> {
    ArraySpec {
        kind: SchemeKind::Swan(RaidLevel::Raid5),
        rgroups: 3,
        ssds_per_rgroup: 3,
        member_blocks: 8 * 64,
        member_offset: 0,
        segment_rows: 8,
        chunk_blocks: 4,
        victim: VictimPolicy::Greedy,
        tuning: Default::default(),
    }
    .build()
    .unwrap()
}

/// Write `n` blocks from `lba` on (wrapping), running GC when asked; the front-end after each.
fn write(s: &mut Box<dyn Scheme>, from: u64, n: u64) -> Vec<u32> {
    let mut plan = IoPlan::new();
    let vol = s.volume_blocks();
    let mut fronts = Vec::new();
    for i in 0..n {
        let lba = (from + i) % vol;
        loop {
            match s.submit(&Request::new(ReqOp::Write, lba, 1), &mut plan).unwrap() {
                Submitted::Planned => break,
                Submitted::NoSpace => {
                    let id = s.start_gc(&mut plan).expect("GC can free space");
                    s.finish_gc(id, &mut plan);
                }
            }
        }
        fronts.push(s.status().front_group.expect("SWAN has a front-end"));
    }
    fronts
}

#[test]
fn a_degraded_rgroup_hands_the_front_end_over_and_is_not_chosen_again() {
    let mut s = array();
    // A quarter of the volume: every R-group keeps free segments.
    let quarter = s.volume_blocks() / 4;
    write(&mut s, 0, quarter);
    let degraded = s.status().front_group.unwrap();
    s.set_degraded(degraded, true);
    // One segment's worth later (16 payload slots of 2 data members × 8 rows) it has moved.
    let fronts = write(&mut s, quarter, 2 * quarter);
    let moved = fronts.iter().position(|&f| f != degraded).expect("the front-end leaves the degraded R-group");
    assert!(moved <= 16, "the front-end stayed on the degraded R-group for {moved} writes");
    assert!(fronts[moved..].iter().all(|&f| f != degraded), "the degraded R-group became front-end again");
    s.check().unwrap();
    // Whole again: it is chosen like any other.
    s.set_degraded(degraded, false);
    let vol = s.volume_blocks();
    let fronts = write(&mut s, 0, 4 * vol);
    assert!(fronts.contains(&degraded), "the repaired R-group never became front-end again");
    s.check().unwrap();
}
