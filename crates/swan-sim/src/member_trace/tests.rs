//! The recorder and the one-SSD replay agree with the array run they come from. Why: Fig. 12
//! compares SWAN0 and RAID0 on per-SSD traces replayed alone, and that comparison means
//! something only if a trace holds everything the array sent its SSD (TRIMs included) at
//! the times it sent it, and the replay starts from the SSD the member was. Where nothing
//! in the array reorders an SSD's queue (RAID0; SWAN0 without read priority), a member's
//! replayed latencies must then be exactly the ones the SSD gave in the array.

use super::*;
use crate::engine::{Engine, SimConfig};
use crate::runs::{random_writes, run_config, sata_ssd};
use crate::workload::{Pattern, WorkloadSpec};
use swan_core::geometry::RaidLevel;
use swan_core::scheme::SchemeKind;

/// Count, mean, p50, p99 and max, µs.
fn show(h: &hdrhistogram::Histogram<u64>) -> String {
    let q = |x| h.value_at_quantile(x);
    format!("{} requests, mean {:.1}, p50 {}, p99 {}, max {}", h.len(), h.mean(), q(0.5), q(0.99), h.max())
}

fn small_run(kind: SchemeKind, rgroups: u32, per_group: u32) -> SimConfig {
    let workload = WorkloadSpec { pattern: Pattern::RandRw, read_fraction: 0.5, ..random_writes(16) };
    let mut cfg = run_config(kind, rgroups, per_group, sata_ssd(0.5, "sata850pro"), workload, 0.6, 0.6, 1.0, 3);
    // Nothing may reorder an SSD's queue in the array that a trace cannot carry.
    cfg.reads.priority = false;
    cfg
}

#[test]
fn each_member_replayed_alone_gives_back_the_latencies_its_ssd_gave_in_the_array() {
    let dir = std::env::temp_dir().join(format!("swan-member-trace-{}", std::process::id()));
    for (name, cfg) in [
        ("raid0", small_run(SchemeKind::Raid(RaidLevel::Raid0), 1, 2)),
        ("swan0", small_run(SchemeKind::Swan(RaidLevel::Raid0), 2, 1)),
    ] {
        let traces = dir.join(name);
        let mut engine = Engine::new(cfg.clone()).unwrap();
        let members = cfg.array.members();
        engine.record_member_io(Box::new(TraceFiles::create(&traces, members).unwrap()));
        let out = engine.run(&mut |_| {}).unwrap();
        assert!(out.ssd_gc_copied_pages > 0 || name == "swan0", "{name}: the SSDs collect in the run");
        let mut all = MemberReplay::default();
        for m in 0..members {
            let mut ssd = member_ssd(&cfg, m).unwrap();
            all.add(&replay(&mut ssd, &trace_path(&traces, m)).unwrap());
        }
        for (op, replayed, in_array) in [
            ("reads", &all.reads.all.latency, &out.ssd_read_latency),
            ("writes", &all.writes.all.latency, &out.ssd_write_latency),
        ] {
            assert!(
                replayed == in_array,
                "{name} {op}: replayed {} against {} in the array",
                show(replayed),
                show(in_array)
            );
        }
        assert_eq!(all.discards > 0, name == "swan0", "{name}: only the log TRIMs");
        // Only the log has GC of its own, and its GC both reads and writes.
        for s in [&all.reads, &all.writes] {
            assert_eq!(s.gc.requests() > 0, name == "swan0", "{name}: the array GC's I/O");
            assert_eq!(s.user.requests() + s.gc.requests(), s.all.requests());
        }
        assert_eq!(all.out_of_order, 0);
        // Service and queueing add up to each request's latency (to the µs each is cut to),
        // and some requests waited.
        for s in [&all.reads.all, &all.writes.all] {
            assert_eq!(s.service.len(), s.latency.len());
            let (whole, parts) = (s.latency.mean(), s.service.mean() + s.queueing.mean());
            assert!((whole - parts).abs() <= 1.0, "{name}: {whole} µs against {parts} µs");
            assert!(s.queueing.max() > 0, "{name}: nothing waited");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
