//! SWAN collects its front-end R-group only as a last resort: when every back-end R-group
//! is full of live data and all the garbage sits in the front-end. Without it the array
//! deadlocks: writes wait for space that back-end GC can never free.

use swan_core::geometry::RaidLevel;
use swan_core::io::IoPlan;
use swan_core::scheme::{ArrayScheme, ArraySpec, ReqOp, Request, SchemeKind, Submitted};
use swan_core::victim::VictimPolicy;

#[test]
fn rewriting_the_front_end_data_never_deadlocks() {
    rewrite_recent_data(3, 1);
}

/// Found replaying a CloudPhysics trace on swan0 2×2: a write larger than the room left
/// (but with some room left) waited forever, because the front-end collected only at zero.
#[test]
fn multi_block_rewrites_on_two_rgroups_never_deadlock() {
    rewrite_recent_data(2, 24);
}

fn rewrite_recent_data(rgroups: u32, blocks: u32) {
    let spec = ArraySpec {
        kind: SchemeKind::Swan(RaidLevel::Raid0),
        rgroups,
        ssds_per_rgroup: 2,
        member_blocks: 8 * 40,
        member_offset: 0,
        segment_rows: 8,
        chunk_blocks: 4,
        victim: VictimPolicy::Greedy,
        tuning: Default::default(),
    };
    let mut s = spec.build().unwrap();
    let mut plan = IoPlan::new();
    let vol = s.volume_blocks();
    // Fill the volume once, in order: back-end R-groups end up holding only live data.
    let write = |s: &mut ArrayScheme, plan: &mut IoPlan, lba: u64, n: u32| -> bool {
        for _ in 0..10_000 {
            match s.submit(&Request::new(ReqOp::Write, lba, n), plan).unwrap() {
                Submitted::Planned => return true,
                Submitted::NoSpace => match s.start_gc(plan) {
                    Some(id) => s.finish_gc(id, plan),
                    None => return false,
                },
            }
        }
        false
    };
    for lba in 0..vol {
        assert!(write(&mut s, &mut plan, lba, 1), "first pass stuck at {lba}");
    }
    // Now rewrite only the most recent data, again and again: all garbage lands in the front-end.
    let n = u64::from(blocks);
    let recent = (vol - 4 * n..vol).step_by(blocks as usize);
    for round in 0..200 {
        for lba in recent.clone() {
            assert!(write(&mut s, &mut plan, lba, blocks), "round {round}: write of {n} at {lba} deadlocked");
        }
    }
    s.check().unwrap();
}
