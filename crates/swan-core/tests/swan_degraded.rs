//! A degraded R-group (one member failed) is not chosen as SWAN's front-end while a healthy
//! R-group has room: its new data would have no redundancy to spare. When it is the
//! front-end as the member fails, it hands over at its next segment; once whole again it
//! takes writes like the others. Where a degraded R-group must take writes (Log-RAID has
//! one), it fills every slot, the failed member's included, and completes the rows that
//! hold one of its blocks before a sync, so that block is in parity on the members.

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
                s.release_deferred(plan);
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
fn a_degraded_rgroup_fills_every_slot_and_completes_the_rows_a_sync_would_leave_at_risk() {
    let mut s = array_of(SchemeKind::LogRaid(RaidLevel::Raid5), 1, 4, 16 * 64);
    // Victims here hold 22 live blocks of 23, so a GC segment's cursor stops in its last row
    // (slot 21 on), whose first slot member 1 holds.
    let failed = 1;
    let vol = s.volume_blocks();
    // The whole volume live: a degraded R-group that lost a slot in every row could not
    // hold it, and GC would find nothing to free.
    write(&mut s, 0, vol);
    s.set_failed_member(failed, true);
    let (mut plan, mut pad) = (IoPlan::new(), IoPlan::new());
    let (mut user_writes, mut on_failed, mut gc_rows, mut rows_padded) = (0, 0, 0, 0);
    for i in 0..3 * vol {
        let lba = (i * 7) % vol;
        loop {
            match s.submit(&Request::new(ReqOp::Write, lba, 1), &mut plan).unwrap() {
                Submitted::Planned => break,
                Submitted::NoSpace => {
                    let id = s.start_gc(&mut plan).expect("GC can free space");
                    s.finish_gc(id, &mut plan);
                    s.release_deferred(&mut plan);
                }
            }
        }
        for io in plan.ios().iter().filter(|io| matches!(io.kind, IoKind::Write(Src::User { .. }))) {
            user_writes += 1;
            on_failed += usize::from(io.member == failed);
        }
        // A sync every five writes (GC jobs here finish at once): the rows holding a block
        // of the failed member are completed.
        if i % 5 == 4 {
            pad.clear();
            let rows = s.pad_rows_at_risk(&mut pad);
            rows_padded += rows;
            let parity = pad.ios().iter().filter(|io| matches!(io.kind, IoKind::Write(Src::Parity { .. }))).count();
            assert!(parity >= rows as usize, "{rows} rows completed with {parity} parity writes");
            gc_rows += usize::from(pad.ios().iter().any(|io| io.class == swan_core::io::IoClass::Gc));
            pad.clear();
            assert_eq!(s.pad_rows_at_risk(&mut pad), 0, "a row is still at risk");
        }
    }
    assert_eq!(user_writes, 3 * vol as usize);
    // Three data columns per row, the failed member one of them in three rows of four.
    assert!(on_failed * 6 >= user_writes && on_failed * 3 <= user_writes, "{on_failed} of {user_writes} on it");
    assert!(
        gc_rows > 0 && rows_padded as usize > gc_rows,
        "{rows_padded} rows padded, {gc_rows} syncs padded a GC row"
    );
    assert!(s.counters().padded_slots >= u64::from(rows_padded));
    s.check().unwrap();
    // Whole again: nothing is padded.
    s.set_failed_member(failed, false);
    write(&mut s, 0, vol);
    pad.clear();
    assert_eq!(s.pad_rows_at_risk(&mut pad), 0);
}
