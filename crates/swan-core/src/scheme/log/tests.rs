//! Unit tests of the log-structured array's own API: the free-space trims and SWAN's GC
//! target, and SWAN's read priority.

use super::{Layout, LogArray, LogConfig};
use crate::geometry::{Geometry, RaidLevel};
use crate::io::IoPlan;
use crate::scheme::{ReqOp, Request, Scheme};
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
        assert!(e.contains("1..=20") && e.contains("20 segments"), "{bad}: {e}");
        assert_eq!(a.config().swan_gc_target, 20);
    }
    // Log-RAID has watermarks, not SWAN's target.
    let mut l = array(Layout::LogRaid, 20);
    assert!(l.set_swan_gc_target(5).unwrap_err().contains("Log-RAID"));
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
