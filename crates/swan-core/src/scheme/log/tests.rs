//! Unit tests of the log-structured array's own API: the free-space trims and SWAN's GC
//! target, and SWAN's read priority.

use super::{Layout, LogArray, LogConfig};
use crate::geometry::{Geometry, RaidLevel};
use crate::io::IoPlan;
use crate::scheme::{GcSettingError, ReqOp, Request, Scheme};
use crate::victim::VictimPolicy;

fn array(layout: Layout, spare_segments: u64) -> LogArray {
    let geo = Geometry::new(3, 2, RaidLevel::Raid0, 8 * 96, 0, 8).unwrap();
    let mut cfg = LogConfig::new(geo, layout, VictimPolicy::Greedy);
    let per_segment = u64::from(geo.payload_slots());
    cfg.limit_volume((geo.segments() - spare_segments) * per_segment);
    LogArray::new(cfg)
}

#[test]
fn free_trims_cover_the_free_segments_only() {
    let mut a = array(Layout::Swan, 20);
    let trimmed = |a: &LogArray| -> u64 {
        let mut plan = IoPlan::new();
        a.plan_free_trims(&mut plan);
        plan.ios().iter().map(|io| u64::from(io.count)).sum()
    };
    let geo = *a.geometry();
    let per_segment = u64::from(geo.segment_rows) * u64::from(geo.ssds_per_rgroup);
    // A new array: everything, as its format trimmed it.
    assert_eq!(trimmed(&a), geo.segments() * per_segment);
    let mut plan = IoPlan::new();
    a.submit(&Request::new(ReqOp::Write, 0, 1), &mut plan).unwrap();
    // The open segment holds a block now.
    assert_eq!(trimmed(&a), (geo.segments() - 1) * per_segment);
}

#[test]
fn swan_gc_target_is_set_within_the_spare() {
    let mut a = array(Layout::Swan, 20);
    a.set_swan_gc_target(1).unwrap();
    assert_eq!(a.config().swan_gc_target, 1);
    a.set_swan_gc_target(20).unwrap();
    assert_eq!(a.config().swan_gc_target, 20);
    // Nothing at all, or above what the spare can hold: refused, naming the bounds, and
    // the target stays.
    for bad in [0, 21] {
        let e = a.set_swan_gc_target(bad).unwrap_err();
        assert_eq!(e, GcSettingError::TargetRange { segments: bad, least: 1, most: 20, spare: 20 });
        assert!(e.to_string().contains("1..=20") && e.to_string().contains("20 segments"), "{bad}: {e}");
        assert_eq!(a.config().swan_gc_target, 20);
    }
    // Log-RAID has watermarks, not SWAN's target.
    let mut l = array(Layout::LogRaid, 20);
    assert_eq!(l.set_swan_gc_target(5), Err(GcSettingError::TargetOnLogRaid));
}

#[test]
fn swan_reads_preempt_gc_unless_told_not_to() {
    let read_class = |a: &mut LogArray| {
        let mut plan = IoPlan::new();
        a.submit(&Request::new(ReqOp::Write, 0, 1), &mut plan).unwrap();
        a.submit(&Request::new(ReqOp::Read, 0, 1), &mut plan).unwrap();
        plan.ios()[0].class
    };
    let mut a = array(Layout::Swan, 20);
    assert!(a.read_priority(), "the paper's rule is on by default");
    assert_eq!(read_class(&mut a), crate::io::IoClass::UserPreempt);
    a.set_read_priority(false);
    assert_eq!(read_class(&mut a), crate::io::IoClass::User);
    // Log-RAID's GC shares every SSD with user writes: its reads never preempt.
    let mut l = array(Layout::LogRaid, 20);
    assert!(!l.read_priority());
    assert_eq!(read_class(&mut l), crate::io::IoClass::User);
}

/// Fill the volume in order, then rewrite its most recent blocks (which sit in the
/// front-end) round after round, and every fourth time an old block too (the back-end's),
/// with GC run as a driver runs it: after every write, and when a write finds no room. The
/// front-end then holds the emptiest segments, and the back-end some garbage.
fn rewrite_recent(a: &mut LogArray) {
    let mut plan = IoPlan::new();
    let vol = a.config().volume_blocks;
    let mut write = |a: &mut LogArray, lba: u64| {
        for _ in 0..1_000 {
            while let Some(id) = a.start_gc(&mut plan) {
                a.finish_gc(id, &mut plan);
            }
            if a.submit(&Request::new(ReqOp::Write, lba, 1), &mut plan).unwrap() == crate::scheme::Submitted::Planned {
                return;
            }
        }
        panic!("the write of {lba} found no room");
    };
    for lba in 0..vol {
        write(a, lba);
    }
    let per_segment = u64::from(a.geometry().payload_slots());
    let mut old = (0..vol - 3 * per_segment).step_by(3).cycle();
    for _ in 0..20 {
        for lba in vol - 3 * per_segment..vol {
            write(a, lba);
            if lba % 4 == 0 {
                write(a, old.next().unwrap());
            }
        }
    }
    a.check().unwrap();
}

#[test]
fn gc_in_front_end_is_an_experiment_on_swan_only() {
    let mut a = array(Layout::Swan, 20);
    assert!(!a.gc_in_front_end(), "the paper's GC stays in the back-end by default");
    a.set_gc_in_front_end(true).unwrap();
    assert!(a.gc_in_front_end());
    let mut l = array(Layout::LogRaid, 20);
    assert_eq!(l.set_gc_in_front_end(true), Err(GcSettingError::FrontEndOnLogRaid));
    l.set_gc_in_front_end(false).unwrap();
}

#[test]
fn victim_choice_counts_the_emptier_segments_gc_passed_over() {
    // The paper's rule: the emptiest segments sit in the front-end, out of GC's reach.
    let mut a = array(Layout::Swan, 20);
    rewrite_recent(&mut a);
    let (c, v) = (a.counters().clone(), a.counters().victim_choice);
    assert!(c.victims > 0);
    assert!(v.emptier_in_front_end > 0, "{v:?}");
    assert!(v.best_anywhere_valid_blocks < c.victim_valid_blocks, "{c:?}");
    // GC's own segments hold the back-end's cold blocks: some become victims in turn.
    assert!(v.gc_written_victims > 0 && v.gc_written_victims <= c.victims, "{c:?}");
    assert!(v.gc_written_valid_blocks <= c.victim_valid_blocks);

    // Let GC into the front-end: it takes the emptiest segment of the array every time (a
    // driver that finishes each job at once leaves no R-group collecting). It does not move
    // fewer blocks for it here: it collects the front-end's hot segments before their last
    // blocks die, where the paper's rule waits until they are back-end and empty.
    let mut b = array(Layout::Swan, 20);
    b.set_gc_in_front_end(true).unwrap();
    rewrite_recent(&mut b);
    let (d, w) = (b.counters().clone(), b.counters().victim_choice);
    assert_eq!(w.emptier_in_front_end, 0, "{w:?}");
    assert_eq!(w.best_anywhere_valid_blocks, d.victim_valid_blocks, "{d:?}");
    assert_eq!(d.user_blocks_written, c.user_blocks_written);

    // One pool (Log-RAID over the same 6 SSDs) has no front-end to pass over.
    let geo = Geometry::new(1, 6, RaidLevel::Raid0, 8 * 96, 0, 8).unwrap();
    let mut cfg = LogConfig::new(geo, Layout::LogRaid, VictimPolicy::Greedy);
    cfg.limit_volume((geo.segments() - 20) * u64::from(geo.payload_slots()));
    let mut l = LogArray::new(cfg);
    rewrite_recent(&mut l);
    let w = l.counters().victim_choice;
    assert_eq!((w.emptier_in_front_end, w.emptier_in_collecting, w.emptier_without_room), (0, 0, 0), "{w:?}");
    assert_eq!(w.best_anywhere_valid_blocks, l.counters().victim_valid_blocks);
}
