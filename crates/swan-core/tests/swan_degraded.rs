//! A degraded R-group (one member failed) is not chosen as SWAN's front-end while a healthy
//! R-group has room: its new data would have no redundancy to spare. When it is the
//! front-end as the member fails, it hands over at its next segment; once whole again it
//! takes writes like the others. Where a degraded R-group must take writes (Log-RAID has
//! one), the failed member's slots are left unused: no new data needs parity to be read.

use swan_core::geometry::RaidLevel;
use swan_core::io::{IoKind, IoPlan, Src};
use swan_core::scheme::{ArrayScheme, ArraySpec, ReqOp, Request, SchemeKind, Submitted};
use swan_core::victim::VictimPolicy;

fn array() -> ArrayScheme {
    array_of(SchemeKind::Swan(RaidLevel::Raid5), 3, 3, 8 * 64)
}

fn array_of(kind: SchemeKind, rgroups: u32, ssds_per_rgroup: u32, member_blocks: u64) -> ArrayScheme {
    ArraySpec {
        kind,
        rgroups,
        ssds_per_rgroup,
        member_blocks,
        member_offset: 0,
        segment_rows: 8,
        chunk_blocks: 4,
        victim: VictimPolicy::Greedy,
        tuning: Default::default(),
    }
    .build()
    .unwrap()
}

/// Plan a one-block write of `lba` into `plan`, running GC (and releasing its victims)
/// until there is room.
fn write_one(s: &mut ArrayScheme, lba: u64, plan: &mut IoPlan) {
    loop {
        match s.submit(&Request::new(ReqOp::Write, lba, 1), plan).unwrap() {
            Submitted::Planned => return,
            Submitted::NoSpace => {
                let id = s.start_gc(plan).expect("GC can free space");
                s.finish_gc(id, plan);
                s.log_mut().unwrap().release_deferred(plan);
            }
        }
    }
}

/// Write `n` blocks from `lba` on (wrapping), running GC when asked; the front-end after each.
fn write(s: &mut ArrayScheme, from: u64, n: u64) -> Vec<u32> {
    let mut plan = IoPlan::new();
    let vol = s.volume_blocks();
    let mut fronts = Vec::new();
    for i in 0..n {
        write_one(s, (from + i) % vol, &mut plan);
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
    s.set_failed_member(degraded * 3 + 1, true);
    // One segment's worth later (16 payload slots of 2 data members × 8 rows) it has moved.
    let fronts = write(&mut s, quarter, 2 * quarter);
    let moved = fronts.iter().position(|&f| f != degraded).expect("the front-end leaves the degraded R-group");
    assert!(moved <= 16, "the front-end stayed on the degraded R-group for {moved} writes");
    assert!(fronts[moved..].iter().all(|&f| f != degraded), "the degraded R-group became front-end again");
    s.check().unwrap();
    // Whole again: it is chosen like any other.
    s.set_failed_member(degraded * 3 + 1, false);
    let vol = s.volume_blocks();
    let fronts = write(&mut s, 0, 4 * vol);
    assert!(fronts.contains(&degraded), "the repaired R-group never became front-end again");
    s.check().unwrap();
}

#[test]
fn user_writes_skip_the_failed_members_slots() {
    let mut s = array_of(SchemeKind::LogRaid(RaidLevel::Raid5), 1, 4, 16 * 64);
    let failed = 2;
    let vol = s.volume_blocks();
    let mut plan = IoPlan::new();
    write(&mut s, 0, vol / 3);
    s.set_failed_member(failed, true);
    let (mut user_writes, mut parity_writes, mut zeroed) = (0, 0, 0);
    for i in 0..3 * vol {
        let lba = (i * 7) % vol;
        write_one(&mut s, lba, &mut plan);
        for io in plan.ios() {
            match io.kind {
                IoKind::Write(Src::User { .. }) => {
                    user_writes += 1;
                    assert_ne!(io.member, failed, "a user write went to the failed member");
                }
                IoKind::Write(Src::Parity { .. }) => parity_writes += 1,
                // The unused slot is written with zeroes, as its row's parity counts it.
                IoKind::Write(Src::Zero) if io.class == swan_core::io::IoClass::User => {
                    assert_eq!(io.member, failed, "only the failed member's unused slots are zeroed");
                    zeroed += 1;
                }
                _ => {}
            }
        }
    }
    assert_eq!(user_writes, 3 * vol);
    assert!(parity_writes > 0);
    // One unused slot per row the user writes opened: a third of the data slots.
    assert!(zeroed * 2 >= user_writes / 3 && zeroed * 2 <= user_writes, "{zeroed} zeroed for {user_writes} writes");
    s.check().unwrap();
    // Whole again: its slots are used again.
    s.set_failed_member(failed, false);
    let mut on_it = 0;
    for lba in 0..vol / 4 {
        write_one(&mut s, lba, &mut plan);
        on_it += plan
            .ios()
            .iter()
            .filter(|io| matches!(io.kind, IoKind::Write(Src::User { .. })) && io.member == failed)
            .count();
    }
    assert!(on_it > 0, "the rebuilt member's slots were never used again");
}
