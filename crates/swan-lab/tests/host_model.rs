//! The host in the simulator (`swan_models::host`): requests cross the client's, the
//! connection reader's and the engine's threads on shared cores before and after the SSDs,
//! and GC's member operations take the engine's time. A host whose engine is slower than the
//! SSDs bounds the array at the engine's rate; no host leaves the run as it was.

use swan_lab::experiments::{fig5, Scale};
use swan_models::host::{HostModel, StageCost};
use swan_sim::engine::{Engine, RunOutput, SimConfig};

/// SWAN0 over 8 SSDs of 0.25 GiB under Fig. 5's random writes at depth 32 for 4 s.
fn swan0() -> SimConfig {
    let mut cfg = fig5(Scale { ssd_gib: 0.25, footprint: 1.0 }, 1).remove(2);
    assert_eq!(cfg.array.kind.to_string(), "swan0");
    cfg.stop.write_bytes = None;
    cfg.stop.sim_seconds = Some(4.0);
    cfg.workload.arrival = swan_sim::workload::Arrival::Closed { iodepth: 32 };
    cfg
}

fn host(engine_in_ns: f64, gc_per_kib_ns: f64) -> HostModel {
    let c = |ns| StageCost { per_request_ns: ns, ..StageCost::default() };
    HostModel {
        name: "test".into(),
        cores: 2,
        client: c(2_000.0),
        reader: c(2_000.0),
        engine_in: c(engine_in_ns),
        engine_out: c(1_000.0),
        gc: StageCost { per_kib_ns: gc_per_kib_ns, ..StageCost::default() },
        gc_on_engine: true,
        runq_per_cpu: Default::default(),
    }
}

fn run(cfg: SimConfig) -> RunOutput {
    Engine::new(cfg).unwrap().run(&mut |_| {}).unwrap()
}

fn iops(out: &RunOutput) -> f64 {
    out.requests as f64 / (out.sim_ns as f64 / 1e9)
}

#[test]
fn a_slow_engine_bounds_the_array_at_its_rate() {
    let free = run(swan0());
    // 100 µs in, 1 µs out per request: at most 1 / 101 µs ≈ 9 900 requests a second.
    let slow = run(SimConfig { host: Some(host(100_000.0, 0.0)), ..swan0() });
    assert!(iops(&free) > 20_000.0, "the SSDs alone are faster than the engine: {:.0}", iops(&free));
    let bound = 1e9 / 101_000.0;
    assert!(
        iops(&slow) <= bound * 1.01 && iops(&slow) > bound * 0.9,
        "{:.0} requests/s against {bound:.0}",
        iops(&slow)
    );
}

#[test]
fn gc_on_the_engine_takes_its_time_from_user_requests() {
    let cheap = run(SimConfig { host: Some(host(10_000.0, 0.0)), ..swan0() });
    let costly = run(SimConfig { host: Some(host(10_000.0, 5_000.0)), ..swan0() });
    assert!(cheap.counters.gc_blocks_moved > 0, "GC ran");
    assert!(iops(&costly) < iops(&cheap) * 0.95, "{:.0} against {:.0}", iops(&costly), iops(&cheap));
}

#[test]
fn a_host_run_is_deterministic_and_no_host_changes_nothing() {
    let a = run(SimConfig { host: Some(host(20_000.0, 500.0)), ..swan0() });
    let b = run(SimConfig { host: Some(host(20_000.0, 500.0)), ..swan0() });
    assert_eq!((a.requests, a.counters.gc_blocks_moved), (b.requests, b.counters.gc_blocks_moved));
    let none = run(SimConfig { host: None, ..swan0() });
    let again = run(swan0());
    assert_eq!(none.requests, again.requests);
    // The host's model goes into the printed options, so a run says what host it had.
    let text = serde_json::to_string(&SimConfig { host: Some(host(1.0, 0.0)), ..swan0() }).unwrap();
    assert!(text.contains("\"engine_in\""), "{text}");
    assert!(!serde_json::to_string(&swan0()).unwrap().contains("engine_in"));
}

/// GC paced on the engine thread (`gc_on_engine`) shares it with requests that keep it busy:
/// it still moves blocks when the engine is the bottleneck, and the run neither stalls nor
/// differs from itself. (The share itself is core's `GcPacing`, tested there.)
#[test]
fn paced_gc_keeps_moving_under_a_saturated_engine() {
    let saturated = || SimConfig { host: Some(host(15_000.0, 1.0)), ..swan0() };
    let a = run(saturated());
    // 15 µs in, 1 µs out: the engine's rate, which the SSDs alone exceed.
    assert!(iops(&a) > 1e9 / 16_000.0 * 0.9, "the engine is the bottleneck: {:.0} requests/s", iops(&a));
    assert!(a.counters.gc_blocks_moved > 0, "GC moved nothing under a busy engine");
    let b = run(saturated());
    assert_eq!((a.requests, a.counters.gc_blocks_moved), (b.requests, b.counters.gc_blocks_moved));
    // GC that runs elsewhere (the paper's kernel thread) hands its phases out whole; the
    // same array then moves its blocks without waiting for the engine.
    let mut elsewhere = host(15_000.0, 1.0);
    elsewhere.gc_on_engine = false;
    let c = run(SimConfig { host: Some(elsewhere), ..swan0() });
    assert!(c.counters.gc_blocks_moved > 0);
}
