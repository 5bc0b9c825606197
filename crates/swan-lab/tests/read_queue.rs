//! Why SWAN's reads wait, by R-group role: what each read met on its SSDs (the models' wait,
//! user writes in flight), and the experiment of reads overtaking the user writes queued
//! on the front-end (`reads_overtake_writes`, off by default).

use swan_lab::experiments::{fig5, Scale};
use swan_sim::engine::{Engine, ReadRoles, RunOutput, SimConfig};
use swan_sim::workload::{Arrival, Pattern};

/// SWAN0 4R-2SSD on 0.25 GiB SSDs under 50/50 random reads and writes of `blocks` 4 KiB
/// blocks over 2 % of the volume, arriving at `iops` a second for 4 simulated s. At 100,000
/// of one block the front-end always has writes in flight and hands over to the next
/// R-group at least once, so reads land on back-ends too; at 4,000 of 32 blocks it has
/// writes in flight part of the time, each over most of its dies. The SSDs are the 850 PRO
/// model before issue 47: a write completes only once programmed (no write buffer), so it
/// stays in flight while its programs hold the dies, the case the counts below are about;
/// and a read overtakes the SSD's own work even mid-operation, so what is left is the writes.
fn swan_mixed(iops: f64, blocks: u32) -> SimConfig {
    let mut cfg = fig5(Scale { ssd_gib: 0.25, footprint: 1.0 }, 3).remove(2);
    cfg.ssd.write_buffer_pages = 0;
    cfg.ssd.suspension = swan_models::ssd::Suspension::Instant;
    cfg.workload.pattern = Pattern::RandRw;
    cfg.workload.read_fraction = 0.5;
    cfg.workload.block_blocks = blocks;
    cfg.workload.arrival = Arrival::Open { iops };
    cfg.workload.region_blocks /= 30;
    cfg.stop.write_bytes = None;
    cfg.stop.sim_seconds = Some(4.0);
    cfg
}

fn run(cfg: SimConfig) -> RunOutput {
    Engine::new(cfg).unwrap().run(&mut |_| {}).unwrap()
}

fn roles(out: &RunOutput) -> ReadRoles {
    out.read_roles.expect("SWAN reports reads by role")
}

fn mean_us(sum_ns: u64, n: u64) -> f64 {
    sum_ns as f64 / n.max(1) as f64 / 1e3
}

#[test]
fn user_writes_in_flight_are_met_on_the_front_end_only() {
    let r = roles(&run(swan_mixed(100_000.0, 1)));
    let (front, idle) = (r.front_end, r.idle_back_end);
    assert!(front.reads > 10_000 && idle.reads > 1_000, "{r:?}");
    // User writes go to the front-end: a back-end read finds one in flight only on an
    // R-group that has just handed the front-end on.
    assert!(front.behind_writes * 10 > 9 * front.reads, "{r:?}");
    assert!(idle.behind_writes * 100 < idle.reads, "{r:?}");
    assert!(r.collecting_back_end.behind_writes * 100 <= r.collecting_back_end.reads, "{r:?}");
    // The predicted wait is part of the latency, never more, and longer on the front-end.
    for t in [front, idle] {
        assert!(t.wait_ns_sum <= t.latency_ns_sum, "{t:?}");
    }
    assert!(mean_us(front.wait_ns_sum, front.reads) > 2.0 * mean_us(idle.wait_ns_sum, idle.reads), "{r:?}");
}

#[test]
fn front_end_reads_that_meet_writes_wait_longer_than_the_others() {
    let r = roles(&run(swan_mixed(4_000.0, 32)));
    let front = r.front_end;
    assert!(front.behind_writes * 50 > front.reads && front.behind_writes * 10 < 9 * front.reads, "{r:?}");
    let behind = mean_us(front.behind_writes_latency_ns_sum, front.behind_writes);
    let clear = mean_us(front.latency_ns_sum - front.behind_writes_latency_ns_sum, front.reads - front.behind_writes);
    assert!(behind > 1.5 * clear, "front-end reads behind writes {behind:.0} µs, the others {clear:.0} µs");
}

#[test]
fn reads_overtaking_writes_shorten_front_end_reads_and_count_writes_as_the_users() {
    let base = run(swan_mixed(100_000.0, 1));
    let over = run(SimConfig { reads_overtake_writes: true, ..swan_mixed(100_000.0, 1) });
    let (b, o) = (roles(&base).front_end, roles(&over).front_end);
    let (b_us, o_us) = (mean_us(b.latency_ns_sum, b.reads), mean_us(o.latency_ns_sum, o.reads));
    assert!(o_us < 0.7 * b_us, "front-end reads: {b_us:.0} µs as the paper, {o_us:.0} µs overtaking writes");
    assert!(mean_us(o.wait_ns_sum, o.reads) < mean_us(b.wait_ns_sum, b.reads));
    // The writes still count as the user's, not as array GC: the array writes what the
    // same workload makes it write.
    let waf = |out: &RunOutput| out.member_write_blocks as f64 / out.user_write_blocks as f64;
    assert!((waf(&over) / waf(&base) - 1.0).abs() < 0.15, "WAF {:.3} against {:.3}", waf(&over), waf(&base));
    assert_eq!(over.counters.gc_blocks_moved, base.counters.gc_blocks_moved);
    assert!(over.user_write_blocks > 0);
}

#[test]
fn reads_overtaking_writes_is_refused_where_it_means_nothing() {
    let log_raid =
        SimConfig { reads_overtake_writes: true, ..fig5(Scale { ssd_gib: 0.25, footprint: 1.0 }, 1).remove(1) };
    let e = Engine::new(log_raid).err().expect("Log-RAID0 has no read priority").to_string();
    assert!(e.contains("--reads-overtake-writes on") && e.contains("lograid0"), "{e}");
    let mut no_priority = SimConfig { reads_overtake_writes: true, ..swan_mixed(4_000.0, 1) };
    no_priority.reads.priority = false;
    let e = Engine::new(no_priority).err().expect("needs read priority").to_string();
    assert!(e.contains("--read-priority on"), "{e}");
}

#[test]
fn off_by_default_and_left_out_of_the_printed_options() {
    let cfg = swan_mixed(4_000.0, 1);
    assert!(!cfg.reads_overtake_writes);
    let json = serde_json::to_string(&cfg).unwrap();
    assert!(!json.contains("reads_overtake_writes"), "{json}");
    let on = serde_json::to_string(&SimConfig { reads_overtake_writes: true, ..cfg }).unwrap();
    assert!(on.contains("\"reads_overtake_writes\":true"), "{on}");
    let back: SimConfig = serde_json::from_str(&json).unwrap();
    assert!(!back.reads_overtake_writes);
}
