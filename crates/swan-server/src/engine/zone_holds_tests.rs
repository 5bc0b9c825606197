use super::*;
use crate::member::ZonedLayout;
use swan_core::io::IoClass;
use swan_models::zns::zones::ZoneGeometry;

/// Two members of four zones of 1,024 blocks, behind 256 conventional blocks.
const LAYOUT: ZonedLayout = ZonedLayout {
    conventional_blocks: 256,
    zones: ZoneGeometry { zones: 4, zone_blocks: 1024, capacity_blocks: 1024, max_open: Some(3), max_active: Some(3) },
};

fn emu(preset: &str) -> Emulator {
    Emulator::zoned(preset, &[LAYOUT, LAYOUT], Instant::now()).unwrap()
}

fn write(member: u32, zone: u64, offset: u64, count: u32) -> ModelOp {
    let block = LAYOUT.conventional_blocks + zone * 1024 + offset;
    ModelOp { member, op: EmuOp::Write, block, count, class: IoClass::User }
}

#[test]
fn a_zones_second_write_waits_for_the_first_and_its_reply_learns_when() {
    let mut e = emu("pm1731a");
    let mut h = ZoneHolds::default();
    let t0 = e.start();
    let mut tokens = 0;
    let mut token = || {
        tokens += 1;
        tokens
    };
    h.owner = Owner::Request;
    let first = h.submit(&mut e, t0, write(0, 0, 0, 8), &mut token).expect("an idle zone takes it at once");
    assert_eq!(h.submit(&mut e, t0, write(0, 0, 8, 8), &mut token), None, "the zone is busy");
    let token = h.take_token(Some(first)).expect("a write of the request waits");
    h.owner = Owner::Nobody;
    assert_eq!(h.next_due(), Some(first));
    let mut done = Vec::new();
    h.advance(&mut e, first - std::time::Duration::from_nanos(1), false, &mut done);
    assert!(done.is_empty(), "not before the zone frees");
    // The engine looks late; the write went when its zone freed, as a kernel's zone write
    // lock sends it from the last one's completion.
    let late = first + std::time::Duration::from_millis(50);
    h.advance(&mut e, late, false, &mut done);
    assert_eq!(done.len(), 1);
    let (owner, end) = done[0];
    assert_eq!(owner, Owner::Reply(token));
    let (one, second) = (first - t0, end - first);
    assert!(
        second > one / 2 && second < 2 * one,
        "the second write ran from the first's end: {one:?}, then {second:?}"
    );
    assert_eq!(h.next_due(), None);
    assert_eq!(e.member_stats(0).zone_refused, 0, "the model heard the zone's writes in order");
}

#[test]
fn writes_held_for_a_zone_do_not_hold_up_another_zone_or_member() {
    let mut held = emu("zn540");
    let mut h = ZoneHolds::default();
    let t0 = held.start();
    for i in 0..16 {
        h.submit(&mut held, t0, write(0, 0, i * 64, 64), || 1);
    }
    let other_zone = h.submit(&mut held, t0, write(0, 1, 0, 64), || 1).expect("zone 1 is free");
    let other_member = h.submit(&mut held, t0, write(1, 0, 0, 64), || 1).expect("member 1's zone 0 is free");
    // On a drive that heard of nothing else, the same writes complete no sooner.
    let mut alone = emu("zn540");
    let a0 = alone.start();
    alone.complete_at(a0, 0, EmuOp::Write, write(0, 0, 0, 64).block, 64, IoClass::User);
    let w = write(0, 1, 0, 64);
    let fresh = alone.complete_at(a0, 0, EmuOp::Write, w.block, w.count, w.class) - a0;
    assert_eq!(other_zone - t0, fresh, "zone 1 queued only behind what the drive was really given");
    assert!(other_member - t0 < fresh, "member 1 is another drive: {:?}", other_member - t0);
    // Stopping gives the rest at once, in order.
    let mut done = Vec::new();
    h.advance(&mut held, t0, true, &mut done);
    assert_eq!(h.next_due(), None);
    assert_eq!(held.member_stats(0).zone_refused, 0);
    assert_eq!(held.member_stats(0).host_pages_written, 17 * 64);
}

#[test]
fn a_gc_jobs_held_writes_land_together_at_the_last() {
    let mut e = emu("pm1731a");
    let mut h = ZoneHolds::default();
    let t0 = e.start();
    let job: GcJobId = 7;
    h.owner = Owner::Gc(job);
    let first = h.submit(&mut e, t0, write(0, 2, 0, 4), || 0).unwrap();
    assert_eq!(h.submit(&mut e, t0, write(0, 2, 4, 4), || 0), None);
    assert_eq!(h.submit(&mut e, t0, write(0, 2, 8, 4), || 0), None);
    h.owner = Owner::Nobody;
    let mut done = Vec::new();
    let mut now = first;
    while let Some(t) = h.next_due() {
        now = now.max(t);
        h.advance(&mut e, now, false, &mut done);
    }
    assert_eq!(done.len(), 1, "one landing for the two held writes: {done:?}");
    assert_eq!(done[0].0, Owner::Gc(job));
    assert!(done[0].1 > now, "the last held write completes after it went: {:?}", done[0].1 - t0);
    assert_eq!(e.member_stats(0).zone_refused, 0);
}

#[test]
fn a_reset_waits_behind_its_zones_held_writes() {
    let mut e = emu("pm1731a");
    let mut h = ZoneHolds::default();
    let t0 = e.start();
    let first = h.submit(&mut e, t0, write(0, 3, 0, 8), || 0).unwrap();
    assert_eq!(h.submit(&mut e, t0, write(0, 3, 8, 1016), || 0), None, "the zone is busy");
    let reset = ModelOp { op: EmuOp::Trim, count: 1024, ..write(0, 3, 0, 0) };
    assert_eq!(h.submit(&mut e, t0, reset, || 0), None, "behind the write still waiting");
    let mut done = Vec::new();
    let mut now = first;
    while let Some(t) = h.next_due() {
        now = now.max(t);
        h.advance(&mut e, now, false, &mut done);
    }
    let s = e.member_stats(0);
    assert_eq!((s.zone_refused, s.zone_resets, s.host_pages_written), (0, 1, 1024), "{s:?}");
    // With nothing waiting, a reset goes at once, whatever the zone's last write.
    assert!(h.submit(&mut e, now, reset, || 0).is_some());
}
