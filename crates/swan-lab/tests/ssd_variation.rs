//! SSD-to-SSD variation in whole runs: the factors a seed draws are the ones the SSDs run
//! at, and a striped log is held to its slowest SSD, which is the busiest.

use swan_lab::experiments::{fig5, Scale};
use swan_models::ssd::Variation;
use swan_sim::engine::{Engine, RunOutput, SimConfig};

/// Fig. 5's Log-RAID0 on 8 SSDs, small.
fn lograid0(seed: u64, variation: Variation) -> SimConfig {
    let mut cfg = fig5(Scale { ssd_gib: 0.25, footprint: 1.5 }, seed).remove(1);
    assert_eq!(cfg.array.kind.to_string(), "lograid0");
    cfg.ssd_variation = variation;
    cfg
}

fn run(cfg: SimConfig) -> RunOutput {
    Engine::new(cfg).unwrap().run(&mut |_| {}).unwrap()
}

fn write_mbps(out: &RunOutput) -> f64 {
    out.user_write_blocks as f64 * 4096.0 / (out.sim_ns as f64 / 1e9) / 1e6
}

#[test]
fn off_means_identical_ssds() {
    let out = run(lograid0(1, Variation::default()));
    assert_eq!(out.ssd_load.len(), 8);
    assert!(out.ssd_load.iter().all(|l| l.speed_factor == 1.0 && l.slow_s == 0.0), "{:?}", out.ssd_load);
}

#[test]
fn a_striped_log_runs_at_its_slowest_ssd() {
    let spread = Variation { speed_spread: 0.276, ..Variation::default() };
    let same = run(lograid0(3, Variation::default()));
    let varied = run(lograid0(3, spread));
    let factors: Vec<f64> = varied.ssd_load.iter().map(|l| l.speed_factor).collect();
    let drawn: Vec<f64> = (0..8).map(|i| spread.speed_factor(3, i)).collect();
    assert_eq!(factors, drawn, "the run's SSDs are the ones the seed draws");
    // The slowest SSD is the busiest: every full stripe waits for it.
    let slowest = (0..8).max_by(|&a, &b| factors[a].total_cmp(&factors[b])).unwrap();
    let busiest = (0..8).max_by(|&a, &b| varied.ssd_load[a].die_busy.total_cmp(&varied.ssd_load[b].die_busy)).unwrap();
    assert_eq!(slowest, busiest, "{:?}", varied.ssd_load);
    // And the array runs at about the speed of eight of it.
    let expected = write_mbps(&same) / factors[slowest];
    let got = write_mbps(&varied);
    assert!(
        (got / expected - 1.0).abs() < 0.2,
        "{got:.0} MB/s, want ≈ {expected:.0} (slowest factor {:.2})",
        factors[slowest]
    );
    // The same seed draws the same SSDs and gives the same run.
    let again = run(lograid0(3, spread));
    assert_eq!(again.ssd_load, varied.ssd_load);
    assert_eq!(again.user_write_blocks, varied.user_write_blocks);
    assert_eq!(again.sim_ns, varied.sim_ns);
}

#[test]
fn slow_periods_are_counted_per_ssd() {
    let v = Variation { slow_fraction: 0.2, slow_factor: 2.0, slow_period_ms: 50.0, ..Variation::default() };
    let out = run(lograid0(5, v));
    let sim_s = out.sim_ns as f64 / 1e9;
    let slow: Vec<f64> = out.ssd_load.iter().map(|l| l.slow_s / sim_s).collect();
    let mean = slow.iter().sum::<f64>() / slow.len() as f64;
    assert!((0.1..0.3).contains(&mean), "mean slow share {mean:.3}: {slow:?}");
    assert!(slow.iter().any(|&s| (s - slow[0]).abs() > 1e-6), "every SSD slow alike: {slow:?}");
}

#[test]
fn bad_variation_is_refused_before_the_run() {
    let e = Engine::new(lograid0(1, Variation { speed_spread: -0.5, ..Variation::default() })).err().unwrap();
    assert!(e.to_string().contains("--ssd-speed-spread -0.5"), "{e}");
}
