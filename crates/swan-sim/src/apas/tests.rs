use super::*;
use std::io::Write;
use std::path::{Path, PathBuf};

/// A trace file of `lines`, at a path of its own: tests run in parallel threads of one
/// process, and two writing the same trace to one path would change it under each other.
fn trace_file(name: &str, lines: &[String]) -> PathBuf {
    static MADE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("swan-apas-{}-{name}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(format!("{name}.heimdall"));
    let mut f = std::fs::File::create(&p).unwrap();
    for l in lines {
        writeln!(f, "{l}").unwrap();
    }
    p
}

fn repo_trace(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/traces").join(name)
}

#[test]
fn a_cached_block_reads_at_ssd_speed_and_a_cold_one_from_the_disk() {
    // Heimdall: time_ms device offset size op (1 read, 0 write).
    let p = trace_file(
        "hit",
        &["0 0 0 4096 0".into(), "10 0 0 4096 1".into(), "20 0 1048576 4096 1".into(), "30 0 0 4096 1".into()],
    );
    let trace = ApasTrace::open(&p, None, 1.0).unwrap();
    let cfg = ApasSimConfig { period_ns: Some(15_000_000), cache_blocks: Some(64), ..ApasSimConfig::default() };
    for policy in [Policy::Apas, Policy::Hwsr] {
        let r = run_policy(&trace, &cfg, policy).unwrap();
        let rows = &r.rows;
        assert_eq!(rows.len(), 3, "{policy:?}: 30 ms in periods of 15 ms");
        // Period 0: the write (SSD only, 200 µs program + transfers) and its block read back.
        let w = rows[0].write_ms.unwrap();
        assert!((0.3..0.4).contains(&w), "{policy:?}: write {w} ms");
        let hit = rows[0].read_ms.unwrap();
        assert!((0.12..0.2).contains(&hit), "{policy:?}: hit {hit} ms");
        assert_eq!((rows[0].read_hits, rows[0].read_misses, rows[0].write_hits), (1, 0, 0));
        // Period 1: a block only the prefill wrote: a disk access (seek and rotation).
        let miss = rows[1].read_ms.unwrap();
        assert!(miss > 1.0 && miss < 20.0, "{policy:?}: miss {miss} ms");
        assert_eq!((rows[1].read_hits, rows[1].read_misses), (0, 1));
        assert_eq!(r.footprint_blocks, 2);
        assert_eq!(r.summary.requests, 4);
    }
}

/// Writes over 4 MiB in 16 KiB pieces from two applications, then an idle second, then reads.
fn overwrite_then_idle() -> PathBuf {
    let mut lines: Vec<String> = (0..256).map(|i| format!("{}.0 {} {} 16384 0", i, i % 2, i * 16384)).collect();
    lines.extend((0..64).map(|i| format!("{} {} {} 4096 1", 2000 + i, i % 2, i * 65536)));
    trace_file("idle", &lines)
}

#[test]
fn apas_cleans_in_idle_time_and_hwsr_does_not() {
    let trace = ApasTrace::open(&overwrite_then_idle(), None, 1.0).unwrap();
    assert_eq!(trace.applications(), 2);
    // Disks holding the footprint alone: only idle time, never space, makes anyone clean.
    let cfg = ApasSimConfig { band_bytes: 1 << 20, disk_fill: DiskFill::Fraction(0.0), ..ApasSimConfig::default() };
    let apas = run_policy(&trace, &cfg, Policy::Apas).unwrap();
    let hwsr = run_policy(&trace, &cfg, Policy::Hwsr).unwrap();
    assert_eq!(apas.footprint_blocks, 1024);
    assert_eq!(apas.cache_blocks, 103, "10 % of the footprint");
    for r in [&apas, &hwsr] {
        assert!(r.summary.destaged_blocks > 800, "{:?}: {} destaged", r.policy, r.summary.destaged_blocks);
        assert_eq!(r.summary.disk.host_blocks_written, r.summary.destaged_blocks);
        assert!(r.rows.len() >= 20, "{} periods", r.rows.len());
    }
    // The prefilled bands are overwritten almost whole: type A, cleaned once the disks idle.
    assert!(apas.summary.disk.idle_cleanings >= 4, "{:?}", apas.summary.disk);
    assert!(apas.summary.smr_write_amplification.unwrap() >= 1.0);
    assert_eq!(hwsr.summary.disk.idle_cleanings, 0);
    assert_eq!(hwsr.summary.smr_write_amplification, Some(1.0), "nothing forced HWSR's disks to clean");
}

#[test]
fn aged_disks_start_just_above_the_lazy_threshold_and_the_run_crosses_it() {
    let trace =
        ApasTrace::open(&repo_trace("msr-window-rw20.heimdall"), None, 1.0).expect("the repository's MSR window");
    for policy in [Policy::Apas, Policy::Hwsr] {
        let aged = run_policy(&trace, &ApasSimConfig::default(), policy).unwrap();
        assert_eq!(aged.free_at_start.len(), 4);
        for &f in &aged.free_at_start {
            assert!((0.2..0.2005).contains(&f), "{policy:?}: {f} free at the start");
        }
        let d = aged.summary.disk;
        assert!(d.lazy_cleanings > 0 && d.lazy_cleaning_ns > 0, "{policy:?}: {d:?}");
        assert_eq!(d.forced_cleanings, 0, "{policy:?}: lazy cleaning keeps room: {d:?}");
        let empty = ApasSimConfig { disk_fill: DiskFill::Fraction(0.0), ..ApasSimConfig::default() };
        let empty = run_policy(&trace, &empty, policy).unwrap();
        assert!(empty.free_at_start.iter().all(|&f| f > 0.99), "{:?}", empty.free_at_start);
        assert_eq!(empty.summary.disk.lazy_cleanings, 0);
        // A fixed fill counts the footprint in: 0.5 of every disk holds data.
        let half = ApasSimConfig { disk_fill: DiskFill::Fraction(0.5), ..ApasSimConfig::default() };
        let half = run_policy(&trace, &half, policy).unwrap();
        assert!(half.free_at_start.iter().all(|&f| (0.4999..=0.5001).contains(&f)), "{:?}", half.free_at_start);
    }
    let too_full = ApasSimConfig { disk_fill: DiskFill::Fraction(0.99), ..ApasSimConfig::default() };
    let e = run_policy(&trace, &too_full, Policy::Apas).unwrap_err();
    assert!(matches!(e, ApasRunError::DiskFill { fill: 0.99, .. }), "{e:?}");
    assert!(e.to_string().contains("disk fill 0.99"), "{e}");
}

#[test]
fn the_same_seed_gives_the_same_report() {
    let trace =
        ApasTrace::open(&repo_trace("msr-window-rw20.heimdall"), None, 1.0).expect("the repository's MSR window");
    let cfg = ApasSimConfig { seed: 3, ..ApasSimConfig::default() };
    for policy in [Policy::Apas, Policy::Hwsr] {
        let a = run_policy(&trace, &cfg, policy).unwrap();
        let b = run_policy(&trace, &cfg, policy).unwrap();
        assert_eq!(a.result(), b.result(), "{policy:?}");
        assert!(a.summary.requests >= 10_000);
        assert!(a.rows.len() >= 20);
    }
}

#[test]
fn bad_settings_are_errors_that_say_what() {
    let trace = ApasTrace::open(&overwrite_then_idle(), None, 1.0).unwrap();
    let bad = |cfg: ApasSimConfig| run_policy(&trace, &cfg, Policy::Apas).unwrap_err().to_string();
    assert!(bad(ApasSimConfig { accel: 0.0, ..Default::default() }).contains("acceleration"));
    assert!(bad(ApasSimConfig { disks: 0, ..Default::default() }).contains("disk"));
    assert!(bad(ApasSimConfig { band_bytes: 1000, ..Default::default() }).contains("band size"));
    assert!(bad(ApasSimConfig { chunk_bytes: Some(1000), ..Default::default() }).contains("stripe chunk"));
    assert!(bad(ApasSimConfig { period_ns: Some(0), ..Default::default() }).contains("period"));
    assert!(bad(ApasSimConfig { cache_blocks: Some(3), ..Default::default() }).contains("cache"));
}

/// When each disk of the MSR window first cleans lazily, on 8 disks, under a fill headroom.
fn first_cleaning_s(trace: &ApasTrace, policy: Policy, headroom: f64) -> (f64, PolicyReport) {
    let cfg = ApasSimConfig { disks: 8, auto_headroom: headroom, ..ApasSimConfig::default() };
    let r = run_policy(trace, &cfg, policy).unwrap();
    let first = r.cleanings.iter().map(|c| c.queued_ns).min().expect("the run cleans lazily");
    (first as f64 / 1e9, r)
}

#[test]
fn the_fill_headroom_moves_the_first_cleaning_and_the_log_matches_the_counters() {
    let trace =
        ApasTrace::open(&repo_trace("msr-window-rw20.heimdall"), None, 1.0).expect("the repository's MSR window");
    for policy in [Policy::Apas, Policy::Hwsr] {
        let (early, r) = first_cleaning_s(&trace, policy, 0.0625);
        let (default, d) = first_cleaning_s(&trace, policy, DEFAULT_AUTO_HEADROOM);
        let (late, _) = first_cleaning_s(&trace, policy, 0.5);
        assert!(early < default && default < late, "{policy:?}: first cleanings at {early}, {default}, {late} s");
        // No headroom: every disk starts at the threshold itself.
        assert!(r.free_at_start.iter().all(|&f| (0.2..0.20002).contains(&f)), "{:?}", r.free_at_start);
        let plain = run_policy(&trace, &ApasSimConfig { disks: 8, ..Default::default() }, policy).unwrap();
        assert_eq!(d.result(), plain.result(), "{policy:?}: the default headroom is the default fill");
        // The log holds every idle and lazy cleaning (none forced here) and what each moved.
        let s = &d.summary.disk;
        assert_eq!(s.forced_cleanings, 0);
        assert_eq!(d.cleanings.len() as u64, s.idle_cleanings + s.lazy_cleanings, "{policy:?}");
        assert_eq!(d.cleanings.iter().map(|c| u64::from(c.valid)).sum::<u64>(), s.moved_blocks, "{policy:?}");
        let ns: u64 = d.cleanings.iter().map(|c| c.done_ns - c.queued_ns).sum();
        assert_eq!(ns, s.idle_cleaning_ns + s.lazy_cleaning_ns, "{policy:?}");
    }
    let bad = ApasSimConfig { auto_headroom: -0.1, ..ApasSimConfig::default() };
    assert!(run_policy(&trace, &bad, Policy::Apas).unwrap_err().to_string().contains("headroom -0.1"));
}

#[test]
fn greedy_on_whole_bands_only_never_picks_a_partly_written_band() {
    let trace = ApasTrace::open(&repo_trace("tpcc-small.mqsim"), None, 0.01).expect("the repository's TPC-C");
    let cfg = ApasSimConfig { accel: 0.01, band_bytes: 8 << 20, chunk_bytes: Some(32 << 20), ..Default::default() };
    let greedy = run_policy(&trace, &cfg, Policy::Hwsr).unwrap();
    let whole = ApasSimConfig { hwsr_whole_bands_only: true, ..cfg.clone() };
    let whole = run_policy(&trace, &whole, Policy::Hwsr).unwrap();
    let partly = |r: &PolicyReport| r.cleanings.iter().filter(|c| c.unwritten > 0).count();
    // Fewest valid first takes partly written bands: few valid blocks because few are written.
    assert!(partly(&greedy) > 10, "{} of {}", partly(&greedy), greedy.cleanings.len());
    assert_eq!(partly(&whole), 0);
    assert!(
        whole.cleanings.len() < greedy.cleanings.len(),
        "{} against {}",
        whole.cleanings.len(),
        greedy.cleanings.len()
    );
    // The knob is HWSR's only: Apas's cleaner does not read it.
    let apas = run_policy(&trace, &cfg, Policy::Apas).unwrap();
    let apas_whole = run_policy(&trace, &ApasSimConfig { hwsr_whole_bands_only: true, ..cfg }, Policy::Apas).unwrap();
    assert_eq!(apas.result(), apas_whole.result());
}
