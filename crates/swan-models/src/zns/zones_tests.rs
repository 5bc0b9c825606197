use super::*;
use ZoneCondition::*;

fn device(max_open: Option<u32>, max_active: Option<u32>) -> Zones {
    Zones::new(ZoneGeometry { zones: 8, zone_blocks: 16, capacity_blocks: 12, max_open, max_active }).unwrap()
}

#[test]
fn writes_at_the_write_pointer_fill_a_zone_and_free_its_resources() {
    let mut d = device(Some(2), Some(3));
    d.write(16, 4).unwrap();
    assert_eq!(d.zone(1).condition, ImplicitlyOpen);
    assert_eq!((d.open_count(), d.active_count()), (1, 1));
    d.write(20, 8).unwrap();
    // 12 of 16 blocks are writable: the zone is full at its capacity, not its size.
    assert_eq!(*d.zone(1), Zone { condition: Full, write_pointer: 12, written: 12 });
    assert_eq!((d.open_count(), d.active_count()), (0, 0));
    assert_eq!(d.write(28, 1), Err(ZoneError::Full { zone: 1 }));
}

#[test]
fn a_write_off_the_write_pointer_or_across_the_capacity_is_refused_and_changes_nothing() {
    let mut d = device(None, None);
    d.write(0, 3).unwrap();
    let before = *d.zone(0);
    assert_eq!(d.write(4, 1), Err(ZoneError::NotAtWritePointer { zone: 0, block: 4, write_pointer: 3 }));
    assert_eq!(d.write(2, 1), Err(ZoneError::NotAtWritePointer { zone: 0, block: 2, write_pointer: 3 }));
    assert_eq!(d.write(3, 10), Err(ZoneError::CrossesCapacity { zone: 0, offset: 3, count: 10, capacity: 12 }));
    assert_eq!(d.write(200, 1), Err(ZoneError::OutOfRange { block: 200, count: 1 }));
    assert_eq!(d.write(3, 0), Err(ZoneError::Empty));
    assert_eq!(*d.zone(0), before);
    assert!(d.write(3, 10).unwrap_err().to_string().contains("Zone Boundary Error"));
}

#[test]
fn a_zone_the_device_does_not_have_is_named_as_such_by_every_command() {
    let mut d = device(None, None);
    let none = Err(ZoneError::NoSuchZone { zone: 8 });
    assert_eq!(d.append(8, 1), none.clone().map(|()| 0));
    assert_eq!(d.open(8), none);
    assert_eq!(d.close(8), none);
    assert_eq!(d.finish(8), none);
    assert_eq!(d.reset(8), none.clone().map(|()| 0));
    assert_eq!(d.reset(8).unwrap_err().to_string(), "zone 8 is not on the device");
}

#[test]
fn append_places_at_the_write_pointer_and_says_where() {
    let mut d = device(None, None);
    assert_eq!(d.append(2, 5), Ok(32));
    assert_eq!(d.append(2, 5), Ok(37));
    assert_eq!(d.append(2, 3), Err(ZoneError::CrossesCapacity { zone: 2, offset: 10, count: 3, capacity: 12 }));
    assert_eq!(d.append(2, 2), Ok(42));
    assert_eq!(d.zone(2).condition, Full);
}

#[test]
fn the_device_closes_its_oldest_implicitly_open_zone_for_a_new_one() {
    let mut d = device(Some(2), None);
    d.write(0, 1).unwrap();
    d.write(16, 1).unwrap();
    d.write(32, 1).unwrap();
    assert_eq!(
        (d.zone(0).condition, d.zone(1).condition, d.zone(2).condition),
        (Closed, ImplicitlyOpen, ImplicitlyOpen)
    );
    assert_eq!((d.open_count(), d.active_count()), (2, 3));
    // Writing the closed zone again reopens it, closing zone 1, now the oldest.
    d.write(1, 1).unwrap();
    assert_eq!((d.zone(0).condition, d.zone(1).condition), (ImplicitlyOpen, Closed));
}

#[test]
fn zones_the_host_opened_are_never_closed_for_it() {
    let mut d = device(Some(2), None);
    d.open(0).unwrap();
    d.open(1).unwrap();
    assert_eq!(d.write(32, 1), Err(ZoneError::TooManyOpen { zone: 2, max: 2 }));
    assert_eq!(d.zone(2).condition, Empty);
    d.close(1).unwrap();
    // Zone 1 had nothing written: closing it empties it and frees its active resource too.
    assert_eq!((d.zone(1).condition, d.active_count()), (Empty, 1));
    d.write(32, 1).unwrap();
}

#[test]
fn the_active_limit_holds_even_when_an_open_resource_could_be_freed() {
    let mut d = device(Some(1), Some(2));
    d.write(0, 1).unwrap();
    d.write(16, 1).unwrap(); // zone 0 is closed by the device; both stay active
    assert_eq!(d.write(32, 1), Err(ZoneError::TooManyActive { zone: 2, max: 2 }));
    d.finish(0).unwrap();
    assert_eq!(*d.zone(0), Zone { condition: Full, write_pointer: 12, written: 1 });
    d.write(32, 1).unwrap();
    assert_eq!((d.open_count(), d.active_count()), (1, 2));
}

#[test]
fn reset_empties_a_zone_and_reports_what_erasing_it_costs() {
    let mut d = device(Some(2), Some(2));
    d.write(0, 5).unwrap();
    assert_eq!(d.reset(0), Ok(5));
    assert_eq!(*d.zone(0), Zone { condition: Empty, write_pointer: 0, written: 0 });
    assert_eq!((d.open_count(), d.active_count()), (0, 0));
    d.write(0, 1).unwrap();
    assert_eq!(d.close(3), Err(ZoneError::Transition { zone: 3, from: Empty, action: "close" }));
    d.finish(0).unwrap();
    assert_eq!(d.open(0), Err(ZoneError::Transition { zone: 0, from: Full, action: "open" }));
}

#[test]
fn impossible_geometries_are_refused() {
    let g = ZoneGeometry { zones: 4, zone_blocks: 16, capacity_blocks: 16, max_open: Some(3), max_active: Some(2) };
    assert!(Zones::new(g).unwrap_err().to_string().contains("open ≤ active"));
    assert!(Zones::new(ZoneGeometry { capacity_blocks: 17, ..g }).is_err());
    assert!(Zones::new(ZoneGeometry { max_open: Some(0), ..g }).is_err());
    assert!(Zones::new(ZoneGeometry { zones: 0, ..g }).is_err());
}

/// Whatever the host asks, in any order, the counts match the zones' conditions, stay
/// within the limits, and a refused command changes nothing.
#[test]
fn random_commands_keep_the_counts_true_and_within_the_limits() {
    let (max_open, max_active) = (3, 5);
    let mut d = device(Some(max_open), Some(max_active));
    let mut x = 0x2e5u64;
    let mut refused = 0;
    for _ in 0..200_000 {
        let r = swan_testkit::rng::xorshift64(&mut x);
        let zone = (r % 8) as u32;
        let before = d.zones.clone();
        let result = match (r >> 8) % 7 {
            0 | 1 => d.write(d.geometry.start(zone) + d.zone(zone).write_pointer, 1 + (r >> 16) % 4),
            2 => d.append(zone, 1 + (r >> 16) % 4).map(|_| ()),
            3 => d.open(zone),
            4 => d.close(zone),
            5 => d.finish(zone),
            _ => d.reset(zone).map(|_| ()),
        };
        if result.is_err() {
            refused += 1;
            assert_eq!(d.zones, before, "a refused command changed the zones");
        }
        let open = d.zones.iter().filter(|z| z.condition.is_open()).count() as u32;
        let active = d.zones.iter().filter(|z| z.condition.is_active()).count() as u32;
        assert_eq!((d.open_count(), d.active_count()), (open, active));
        assert!(open <= max_open && active <= max_active);
        let implicit = d.zones.iter().filter(|z| z.condition == ImplicitlyOpen).count();
        assert_eq!(d.implicit.len(), implicit);
        for z in &d.zones {
            assert!(z.written <= z.write_pointer && z.write_pointer <= d.geometry.capacity_blocks);
            match z.condition {
                Empty => assert_eq!((z.write_pointer, z.written), (0, 0)),
                ImplicitlyOpen | Closed => assert!(z.write_pointer > 0),
                Full => assert_eq!(z.write_pointer, d.geometry.capacity_blocks),
                ExplicitlyOpen => {}
            }
        }
    }
    assert!(refused > 1_000, "the limits were exercised ({refused} refusals)");
}

#[test]
fn a_power_cycle_closes_what_was_open_and_keeps_every_write_pointer() {
    let mut z = device(Some(2), Some(3));
    let cap = z.geometry().capacity_blocks;
    z.write(0, 3).unwrap();
    z.open(1).unwrap();
    z.write(z.geometry().start(2), cap).unwrap();
    z.write(z.geometry().start(3), 1).unwrap();
    z.finish(3).unwrap();
    let state: Vec<(u64, u64)> =
        (0..z.geometry().zones).map(|i| (z.zone(i).write_pointer, z.zone(i).written)).collect();
    let back = Zones::power_cycled(*z.geometry(), &state).unwrap();
    assert_eq!(back.zone(0).condition, ZoneCondition::Closed);
    assert_eq!(back.zone(0).write_pointer, 3);
    assert_eq!(back.zone(1).condition, ZoneCondition::Empty, "an explicit open with nothing written is lost");
    assert_eq!(back.zone(2).condition, ZoneCondition::Full);
    assert_eq!((back.zone(3).condition, back.zone(3).written), (ZoneCondition::Full, 1));
    assert_eq!((back.open_count(), back.active_count()), (0, 1));
    let mut back = back;
    back.write(3, 1).unwrap();
    assert_eq!(back.zone(0).condition, ZoneCondition::ImplicitlyOpen);
    // A state no device keeps is refused.
    let mut bad = state.clone();
    bad[0] = (cap + 1, 0);
    assert!(Zones::power_cycled(*z.geometry(), &bad).is_err());
    bad[0] = (2, 3);
    assert!(Zones::power_cycled(*z.geometry(), &bad).is_err());
    assert!(Zones::power_cycled(*z.geometry(), &state[1..]).is_err());
}

#[test]
fn can_write_answers_as_write_does_and_changes_nothing() {
    // Random commands on a device with both limits: whenever can_write says yes, write
    // succeeds; whenever it says no, write fails with the same error and changes nothing.
    let mut z = device(Some(2), Some(3));
    let mut seed = 12345u64;
    let mut next = |n: u64| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    for _ in 0..20_000 {
        let zone = next(8) as u32;
        let wp = z.zone(zone).write_pointer;
        let block = z.geometry().start(zone) + if next(5) == 0 { next(16) } else { wp };
        let count = next(5);
        match next(12) {
            0 => {
                z.reset(zone).unwrap();
            }
            1 => {
                let _ = z.finish(zone);
            }
            2 => {
                let _ = z.open(zone);
            }
            _ => {
                let before = format!("{z:?}");
                let asked = z.can_write(block, count);
                assert_eq!(format!("{z:?}"), before, "can_write changed the device");
                let done = z.write(block, count);
                assert_eq!(asked, done, "write of {count} at {block}");
                if done.is_err() {
                    assert_eq!(format!("{z:?}"), before, "a refused write changed the device");
                }
            }
        }
    }
}
