//! Deferred release as the server runs it: a write that finds no free segment while victims
//! wait for release, and no GC job is running to add to them, releases them at once. GC
//! cannot start then (it needs a free segment to move into), so waiting for the release
//! timer instead would leave the array idle, writes and GC alike.

use swan_lab::experiments::{fig5, Scale};
use swan_sim::engine::{Engine, RunOutput, SimConfig};

/// Log-RAID0 over 8 SSDs of 0.25 GiB under Fig. 5's random writes, with victims released
/// as a server releases them, in intervals of 50 ms for 6 simulated seconds.
fn served_lograid0() -> SimConfig {
    let mut cfg = fig5(Scale { ssd_gib: 0.25, footprint: 1.0 }, 1).remove(1);
    assert!(cfg.array.kind.is_log_structured());
    cfg.array.tuning.defer_release = true;
    cfg.interval_ms = 50;
    cfg.stop.write_bytes = None;
    cfg.stop.sim_seconds = Some(6.0);
    cfg
}

fn run(cfg: SimConfig) -> RunOutput {
    Engine::new(cfg).unwrap().run(&mut |_| {}).unwrap()
}

#[test]
fn writes_out_of_space_release_the_waiting_victims_at_once() {
    let out = run(served_lograid0());
    assert!(out.counters.victims > 20, "GC ran: {} victims", out.counters.victims);
    // An interval in which nothing reached the SSDs, neither a user write nor a GC move,
    // is the array idling while writes wait for a release.
    let idle: Vec<f64> =
        out.rows.iter().filter(|r| r.user_write_mbps == 0.0 && r.array_gc_write_blocks == 0).map(|r| r.t_s).collect();
    assert!(idle.is_empty(), "idle intervals at {idle:?} s");
    // Writes still wait for space now and then, but for the moves of a running job, not for
    // a timer: far less than the 500 ms a timed release would cost each time.
    assert!(out.stall_ns < out.sim_ns / 20, "stalled {} of {} ns", out.stall_ns, out.sim_ns);
}
