//! What `swan sim` prints after its run's table: reads by R-group role, reads around busy
//! SSDs, a replayed trace's account and its windows. Printing only; the run is `sim_cmd`'s.

/// SWAN's Table 4 (reads by the role of the R-group they landed on) and what reads around
/// busy SSDs cost, when the run has them.
pub(crate) fn print_reads(s: &swan_sim::output::RunSummary) {
    if let Some(roles) = &s.read_roles {
        println!("\nreads by R-group role (SWAN Table 4): role, reads, share, mean latency");
        for r in roles {
            println!("  {:<20} {:>9} {:>6.1} % {:>10.1} µs", r.role, r.reads, 100.0 * r.share, r.mean_latency_us);
        }
    }
    if s.options.reads.parity_min_gain_us.is_some() {
        println!(
            "reads around a busy SSD: {} blocks from their row, {} extra member reads",
            s.parity_read_blocks, s.parity_extra_reads
        );
    }
}

/// What a trace run measured, beside the usual table.
pub(crate) fn print_replay(s: &swan_sim::output::RunSummary, replay: &swan_sim::replay::ReplayReport) {
    let iops = if s.sim_s > 0.0 { s.requests as f64 / s.sim_s } else { 0.0 };
    println!(
        "\nreplayed {} requests of {} in {:.3} simulated s ({iops:.0} IOPS; read {:.1} MB/s, write {:.1} MB/s), {} malformed lines skipped",
        s.requests, replay.file, s.sim_s, s.user_read_mbps_mean, s.user_write_mbps_mean, replay.skipped_lines
    );
    for (what, l) in [("read", &s.read_latency_us), ("write", &s.write_latency_us)] {
        if let Some(l) = l {
            println!(
                "  {what:<5} latency µs: mean {:.1}  p50 {}  p99 {}  p99.9 {}  max {}",
                l.mean, l.p50, l.p99, l.p999, l.max
            );
        }
    }
    println!("  {} {}", replay.address_policy, replay.address_mapping);
    print_windows(&s.windows);
}

/// Each trace window (an application's phase) measured on its own.
fn print_windows(windows: &[swan_sim::output::WindowSummary]) {
    if windows.is_empty() {
        return;
    }
    println!(
        "
{:<10} {:>8} {:>8} {:>9} {:>10} {:>9} {:>9} {:>11} {:>9} {:>9}",
        "window", "reads", "writes", "read MiB", "write MiB", "sim s", "MB/s", "read µs avg", "p99", "p99.9"
    );
    for w in windows {
        let (mean, p99, p999) = w.read_latency_us.as_ref().map_or((f64::NAN, 0, 0), |l| (l.mean, l.p99, l.p999));
        println!(
            "{:<10} {:>8} {:>8} {:>9.1} {:>10.1} {:>9.3} {:>9.1} {:>11.1} {:>9} {:>9}",
            w.name,
            w.reads,
            w.writes,
            w.read_bytes as f64 / 1048576.0,
            w.write_bytes as f64 / 1048576.0,
            w.span_s,
            w.mbps,
            mean,
            p99,
            p999
        );
    }
}
