use super::*;
use crate::member::{Member, OpenOptions};
use swan_models::zns::zones::ZoneCondition::*;

/// 2 conventional blocks, 6 zones of 8 blocks of which 6 are writable, 3 active at most.
fn layout() -> ZonedLayout {
    ZonedLayout {
        conventional_blocks: 2,
        zones: ZoneGeometry { zones: 6, zone_blocks: 8, capacity_blocks: 6, max_open: Some(2), max_active: Some(3) },
    }
}

fn made(dir: &tempfile::TempDir) -> std::path::PathBuf {
    let p = dir.path().join("z0");
    Member::create_zoned(&p, &layout(), false).unwrap();
    p
}

fn open(p: &Path) -> Member {
    Member::open(p, OpenOptions::default()).unwrap()
}

fn blocks(n: usize, fill: u8) -> Vec<u8> {
    vec![fill; n * BLOCK]
}

fn read(m: &Member, block: u64, n: usize) -> Vec<u8> {
    let mut b = vec![0xEE; n * BLOCK];
    m.read(block, &mut b).unwrap();
    b
}

#[test]
fn a_new_device_is_empty_and_its_conventional_blocks_take_rewrites() {
    let dir = tempfile::tempdir().unwrap();
    let m = open(&made(&dir));
    assert_eq!(m.zoned(), Some(layout()));
    assert_eq!(m.blocks(), 2 + 6 * 8);
    assert!(m.trims_free_space(), "a zoned member's free segments must be reset");
    assert!(m.report_zones().unwrap().iter().all(|z| z.condition == Empty && z.write_pointer == 0));
    m.write(0, &blocks(2, 1)).unwrap();
    m.write(1, &blocks(1, 2)).unwrap();
    assert_eq!(read(&m, 0, 2), [blocks(1, 1), blocks(1, 2)].concat());
    assert_eq!(read(&m, 2, 1), blocks(1, 0), "an unwritten zone reads as zeroes");
}

#[test]
fn a_zone_is_written_only_at_its_pointer_and_within_its_capacity() {
    let dir = tempfile::tempdir().unwrap();
    let m = open(&made(&dir));
    let z1 = layout().zone_start(1);
    m.write(z1, &blocks(2, 3)).unwrap();
    for (at, n, why) in [(z1, 1, "behind the pointer"), (z1 + 3, 1, "ahead of it"), (z1 + 2, 5, "past the capacity")] {
        let e = m.write(at, &blocks(n, 9)).unwrap_err();
        assert!(matches!(e, MemberError::Zoned { .. }), "{why}: {e}");
        assert!(!e.is_io_error(), "a broken contract is swan's fault, not the member's: {e}");
    }
    m.write(z1 + 2, &blocks(4, 4)).unwrap();
    let z = m.report_zones().unwrap()[1];
    assert_eq!((z.condition, z.write_pointer), (Full, 6));
    assert!(matches!(m.write(z1 + 6, &blocks(1, 5)).unwrap_err(), MemberError::Zoned { .. }), "a full zone");
    assert_eq!(read(&m, z1, 6), [blocks(2, 3), blocks(4, 4)].concat());
}

#[test]
fn a_write_across_zones_is_split_at_the_boundary() {
    let dir = tempfile::tempdir().unwrap();
    // Capacity equal to the size, so one zone's end is the next one's start.
    let l = ZonedLayout { zones: ZoneGeometry { capacity_blocks: 8, ..layout().zones }, ..layout() };
    let p = dir.path().join("z");
    Member::create_zoned(&p, &l, false).unwrap();
    let m = open(&p);
    // From the conventional blocks into zone 0, then zone 0 into zone 1.
    m.write(1, &blocks(5, 6)).unwrap();
    m.write(l.zone_start(0) + 4, &blocks(6, 7)).unwrap();
    let r = m.report_zones().unwrap();
    assert_eq!((r[0].condition, r[0].write_pointer, r[1].write_pointer), (Full, 8, 2));
    assert_eq!(read(&m, 1, 11), [blocks(5, 6), blocks(6, 7)].concat());
}

#[test]
fn a_trim_resets_whole_zones_and_refuses_part_of_one() {
    let dir = tempfile::tempdir().unwrap();
    let m = open(&made(&dir));
    let (z0, z1) = (layout().zone_start(0), layout().zone_start(1));
    m.write(z0, &blocks(3, 1)).unwrap();
    m.write(z1, &blocks(6, 2)).unwrap();
    let e = m.trim(z0, 4).unwrap_err();
    assert!(e.to_string().contains("freed only whole"), "{e}");
    m.trim(z0, 16).unwrap();
    assert!(m.report_zones().unwrap()[..2].iter().all(|z| z.condition == Empty && z.write_pointer == 0));
    assert_eq!(read(&m, z0, 16), blocks(16, 0), "a reset zone reads as zeroes");
    m.write(z0, &blocks(1, 8)).unwrap();
}

#[test]
fn write_pointers_survive_a_reopen_and_open_zones_come_back_closed() {
    let dir = tempfile::tempdir().unwrap();
    let p = made(&dir);
    let l = layout();
    {
        let m = open(&p);
        m.write(l.zone_start(0), &blocks(3, 1)).unwrap();
        m.write(l.zone_start(2), &blocks(6, 2)).unwrap();
        m.write(l.zone_start(3), &blocks(1, 3)).unwrap();
        m.finish_zone(3).unwrap();
        m.sync().unwrap();
    }
    let m = open(&p);
    let r = m.report_zones().unwrap();
    assert_eq!((r[0].condition, r[0].write_pointer), (Closed, 3));
    assert_eq!((r[2].condition, r[3].condition, r[3].written), (Full, Full, 1));
    m.write(l.zone_start(0) + 3, &blocks(1, 4)).unwrap();
    assert_eq!(read(&m, l.zone_start(0), 4), [blocks(3, 1), blocks(1, 4)].concat());
}

#[test]
fn data_whose_pointer_was_never_recorded_is_written_over() {
    // A process killed after a write's data and before its table entry: the device says the
    // write never happened (it was never acknowledged), and the next write at the pointer
    // takes its place.
    let dir = tempfile::tempdir().unwrap();
    let p = made(&dir);
    let l = layout();
    open(&p).write(l.zone_start(1), &blocks(2, 1)).unwrap();
    let raw = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
    use std::os::unix::fs::FileExt;
    raw.write_all_at(&blocks(1, 0xAB), l.base() + (l.zone_start(1) + 2) * BLOCK_U64).unwrap();
    let m = open(&p);
    assert_eq!(m.report_zones().unwrap()[1].write_pointer, 2);
    m.write(l.zone_start(1) + 2, &blocks(1, 5)).unwrap();
    assert_eq!(read(&m, l.zone_start(1) + 2, 1), blocks(1, 5));
}

#[test]
fn the_active_limit_holds_across_writes() {
    let dir = tempfile::tempdir().unwrap();
    let m = open(&made(&dir));
    let l = layout();
    for z in 0..3 {
        m.write(l.zone_start(z), &blocks(1, 1)).unwrap();
    }
    let e = m.write(l.zone_start(3), &blocks(1, 1)).unwrap_err();
    assert!(e.to_string().contains("Too Many Active"), "{e}");
    m.finish_zone(0).unwrap();
    m.write(l.zone_start(3), &blocks(1, 1)).unwrap();
}

#[test]
fn a_plain_member_is_not_taken_for_a_zoned_one_and_a_bad_device_block_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plain");
    Member::create_file(&plain, 1 << 20, false).unwrap();
    assert_eq!(open(&plain).zoned(), None);
    let p = made(&dir);
    let raw = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
    use std::os::unix::fs::FileExt;
    raw.write_all_at(&[7], 30).unwrap();
    let e = Member::open(&p, OpenOptions::default()).unwrap_err();
    assert!(matches!(e, MemberError::BadZonedDevice { .. }) && e.to_string().contains("checksum"), "{e}");
}

#[test]
fn random_commands_keep_the_contract_and_the_data() {
    // Against the contract itself and a byte image: every command the device takes or
    // refuses, it takes or refuses as `Zones` does, and what it reads is what was written.
    let dir = tempfile::tempdir().unwrap();
    let p = made(&dir);
    let l = layout();
    let mut m = open(&p);
    let mut reference = Zones::new(l.zones).unwrap();
    let mut image = vec![0u8; (l.member_blocks() * BLOCK_U64) as usize];
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    for step in 0..3000 {
        let zone = next(u64::from(l.zones.zones)) as u32;
        match next(10) {
            0..=5 => {
                let wp = reference.zone(zone).write_pointer;
                let at = match next(4) {
                    0 => next(l.zones.zone_blocks),
                    _ => wp,
                };
                let n = 1 + next(3);
                let block = l.zones.start(zone) + at;
                let fill = (step % 251) as u8 + 1;
                let expect = reference.write(block, n);
                let got = m.write(l.conventional_blocks + block, &blocks(n as usize, fill));
                assert_eq!(expect.is_ok(), got.is_ok(), "step {step}: write {n} at {at} of zone {zone}: {got:?}");
                if expect.is_ok() {
                    let from = ((l.conventional_blocks + block) * BLOCK_U64) as usize;
                    image[from..from + n as usize * BLOCK].fill(fill);
                }
            }
            6 => {
                reference.reset(zone).unwrap();
                m.trim(l.zone_start(zone), l.zones.zone_blocks).unwrap();
                let from = (l.zone_start(zone) * BLOCK_U64) as usize;
                image[from..from + (l.zones.zone_blocks * BLOCK_U64) as usize].fill(0);
            }
            7 => {
                reference.finish(zone).unwrap();
                m.finish_zone(zone).unwrap();
            }
            8 => {
                drop(m);
                m = open(&p);
                let state: Vec<(u64, u64)> =
                    (0..l.zones.zones).map(|z| (reference.zone(z).write_pointer, reference.zone(z).written)).collect();
                reference = Zones::power_cycled(l.zones, &state).unwrap();
            }
            _ => {
                let start = l.zone_start(zone);
                let got = read(&m, start, l.zones.zone_blocks as usize);
                let from = (start * BLOCK_U64) as usize;
                assert!(got == image[from..from + got.len()], "step {step}: zone {zone} reads other than written");
            }
        }
        let report = m.report_zones().unwrap();
        for z in 0..l.zones.zones {
            assert_eq!(report[z as usize], *reference.zone(z), "step {step}: zone {z}");
        }
    }
}

/// A power cut may keep a write's data in the file and lose its zone table entry: the
/// blocks past the pointer then read as zeroes, as a device holds nothing there, and the
/// next write at the pointer goes over them.
#[test]
fn what_the_file_holds_past_a_write_pointer_reads_as_zeroes() {
    let dir = tempfile::tempdir().unwrap();
    let p = made(&dir);
    let z1 = layout().zone_start(1);
    {
        let m = open(&p);
        m.write(z1, &blocks(2, 3)).unwrap();
    }
    // Block 2 of zone 1 as a page cache might have left it: data, no table entry.
    let file = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
    use std::os::unix::fs::FileExt;
    file.write_all_at(&blocks(1, 7), layout().base() + (z1 + 2) * BLOCK as u64).unwrap();
    let m = open(&p);
    assert_eq!(m.report_zones().unwrap()[1].write_pointer, 2);
    assert_eq!(read(&m, z1, 3), [blocks(2, 3), blocks(1, 0)].concat());
    let mut cached = blocks(1, 9);
    if m.read_if_cached(z1 + 2, &mut cached) {
        assert_eq!(cached, blocks(1, 0), "from the page cache too");
    }
    m.write(z1 + 2, &blocks(1, 5)).unwrap();
    assert_eq!(read(&m, z1, 3), [blocks(2, 3), blocks(1, 5)].concat());
}
