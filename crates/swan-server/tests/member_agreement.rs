//! Which members are current, decided at open from the superblocks (FORMAT.md, "Member
//! failure and rebuild"): a crash partway through writing a superblock update leaves the
//! healthy members one event apart, or one superblock torn; neither may cost a member. A
//! member replaced while it was away is refused (its replacement holds its index); one that
//! is gone is given as `missing`.

mod common;

use std::path::{Path, PathBuf};
use swan_server::array::{self, MISSING};
use swan_server::layout::Superblock;
use swan_server::member::{Member, OpenOptions, BLOCK};
use swan_server::members::Health;

fn swan5(dir: &Path) -> Vec<PathBuf> {
    common::small_array(dir, "swan5", 2, 3).0
}

fn superblock(p: &Path) -> Superblock {
    let m = Member::open(p, OpenOptions::default()).unwrap();
    array::read_superblock(&m).unwrap()
}

fn put(p: &Path, sb: &Superblock) {
    let m = Member::open(p, OpenOptions::default()).unwrap();
    m.write(0, &sb.encode()).unwrap();
    m.sync().unwrap();
}

fn failed(paths: &[PathBuf], read_only: bool) -> Vec<u32> {
    let o = array::open(paths, false, read_only).unwrap();
    let v: Vec<u32> = o.sb.failed.iter().copied().collect();
    for m in 0..paths.len() as u32 {
        assert_eq!(o.members.health(m) == Health::Failed, v.contains(&m));
    }
    v
}

#[test]
fn a_crash_partway_through_recording_a_failure_fails_only_that_member() {
    let dir = tempfile::tempdir().unwrap();
    let paths = swan5(dir.path());
    // Member 4 failed; the update reached members 0 and 1 only.
    for p in &paths[..2] {
        let sb = superblock(p);
        put(p, &Superblock { events: sb.events + 1, failed: [4].into(), ..sb });
    }
    assert_eq!(failed(&paths, true), vec![4]);
    // Opened read-write, the others are brought up to date.
    assert_eq!(failed(&paths, false), vec![4]);
    let events: Vec<u64> = paths.iter().filter(|p| **p != paths[4]).map(|p| superblock(p).events).collect();
    assert!(events.windows(2).all(|w| w[0] == w[1]), "superblocks still disagree: {events:?}");
}

#[test]
fn a_member_two_changes_behind_that_its_peers_count_healthy_is_refused_as_superseded() {
    let dir = tempfile::tempdir().unwrap();
    let paths = swan5(dir.path());
    // Two completed changes member 2 never saw, after which its peers count index 2
    // healthy: only a rebuild of index 2 onto another file (swan replace) gets there, so
    // this file is the replaced one. Served around, it would make that replacement stale.
    for p in paths.iter().filter(|p| **p != paths[2]) {
        let sb = superblock(p);
        put(p, &Superblock { events: sb.events + 2, ..sb });
    }
    let err = array::open(&paths, false, true).err().expect("a superseded member is refused");
    let text = err.to_string();
    assert!(matches!(err, array::OpenError::Superseded { member: 2, .. }) && text.contains("missing"), "{text}");
    // Given as `missing` instead, the array serves without it.
    let mut given = paths.clone();
    given[2] = MISSING.into();
    assert_eq!(failed(&given, true), vec![2]);
}

#[test]
fn a_torn_superblock_update_costs_no_member() {
    let dir = tempfile::tempdir().unwrap();
    let paths = swan5(dir.path());
    // Member 3's update to "member 4 failed" landed in its first sector only.
    for p in &paths {
        let sb = superblock(p);
        let new = Superblock { events: sb.events + 1, failed: [4].into(), ..sb.clone() };
        if p == &paths[3] {
            let mut b = sb.encode();
            b[..512].copy_from_slice(&new.encode()[..512]);
            let m = Member::open(p, OpenOptions::default()).unwrap();
            m.write(0, &b).unwrap();
        } else if p != &paths[4] {
            put(p, &new);
        }
    }
    assert!(Superblock::decode(&std::fs::read(&paths[3]).unwrap()[..BLOCK]).is_err(), "not torn");
    assert_eq!(failed(&paths, false), vec![4]);
    // Rewritten whole.
    assert_eq!(superblock(&paths[3]).failed, [4].into());
}

#[test]
fn a_missing_member_is_failed_and_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let paths = swan5(dir.path());
    let mut given = paths.clone();
    given[1] = MISSING.into();
    // Fewer paths without `missing`: refused, naming the way out.
    let err = array::open(&paths[..5], false, true).err().unwrap().to_string();
    assert!(err.contains("missing member index 5") && err.contains("`missing`"), "{err}");
    assert_eq!(failed(&given, false), vec![1]);
    assert_eq!(superblock(&paths[0]).failed, [1].into(), "the failure was not recorded");
    // Given back later, member 1 is stale.
    assert_eq!(failed(&paths, true), vec![1]);
    // Two missing in one R-group: refused.
    given[2] = MISSING.into();
    let err = array::open(&given, false, true).err().unwrap().to_string();
    assert!(err.contains("both failed"), "{err}");
}
