//! `swan triple-a`: Triple-A's micro-benchmark or a block trace on a modelled PCIe
//! flash-array network, the non-autonomic array and Triple-A side by side.

use anyhow::{bail, Context};
use std::path::PathBuf;
use std::time::Instant;
use swan_args::units::parse_size;
use swan_core::triple_a::{AutonomicConfig, GcLaggard, LaggardDetection};
use swan_models::fabric::{preset, FabricConfig, PRESET_NAMES};
use swan_sim::hot_clusters::{HotClusterSpec, HotPlacement};
use swan_sim::trace::TraceFormat;
use swan_sim::triple_a::{GcConfig, TraceWorkload, TripleAConfig, TripleADriver, TripleAReport, TRACE_DEPTH};

/// The data layout's page: a chunk is a whole number of them.
const PAGE_BYTES: u64 = 4096;

#[derive(clap::Args, Debug)]
#[command(long_about = "Runs Triple-A's micro-benchmark (§5.2: random 4 KB reads or writes, a fixed share of \
    them on each of N hot clusters) on a modelled all-flash PCIe network — root complex, switches, \
    endpoints, FIMMs — once without management (the non-autonomic array) and once with Triple-A's \
    hot-cluster migration and laggard reshaping, and prints Table 2's columns for both.

With --trace FILE it replays a block trace instead (§5.2's real workloads): a closed loop of \
--iodepth requests in the trace's order, its timestamps ignored, looped from its first request for \
as long as --seconds needs; each request covers the 4 KiB pages of its byte range, trace page 0 \
sits at a chunk of the array chosen by --seed, and an address past the array wraps modulo its \
page space (the run says so). A line that does not parse is an error naming the file and line. \
The default depth for traces is the one calibrated on Table 2's hm row (docs/triple-a.md, \"Traces\").

See docs/triple-a.md for the model and its parameters.")]
pub struct TripleAArgs {
    /// The network: 4x8, 4x12, 4x16 or 4x20 (switches x clusters per switch).
    #[arg(long, default_value = "4x16")]
    pub preset: String,
    /// Which arrays to run: both (non-autonomic and triple-a), triple-a, non-autonomic, or one
    /// half of Triple-A alone: migration-only, reshaping-only.
    #[arg(long, default_value = "both")]
    pub policy: String,
    /// Replay this block trace instead of the micro-benchmark (closed loop, looped; --help says how).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["hot", "share", "hot_pages", "one_switch", "rw", "write_share", "rate"])]
    pub trace: Option<PathBuf>,
    /// The trace's format: msr, heimdall, mqsim, spc, disksim, blkparse, cloudphysics or etw
    /// (Microsoft's xperf dumps: Exchange, production servers, TPC-E; alias ms-etw)
    /// (guessed from the extension, then the content, when not given).
    #[arg(long, alias = "trace-format", requires = "trace")]
    pub format: Option<TraceFormat>,
    /// Hot clusters (micro-benchmark).
    #[arg(long, default_value_t = 4)]
    pub hot: u32,
    /// Share of all requests each hot cluster receives.
    #[arg(long, default_value_t = 0.10)]
    pub share: f64,
    /// Pages of hot data on each hot cluster (its share of requests falls on them).
    #[arg(long, default_value_t = 8192)]
    pub hot_pages: u64,
    /// Put every hot cluster under one switch instead of spreading them.
    #[arg(long)]
    pub one_switch: bool,
    /// randread, randwrite or randrw (micro-benchmark; randrw mixes them by --write-share).
    #[arg(long, default_value = "randread")]
    pub rw: String,
    /// With --rw randrw: the share of requests that are writes, in [0, 1].
    #[arg(long, default_value_t = 0.5)]
    pub write_share: f64,
    /// Requests kept outstanding (closed loop) [default: 1024 for the micro-benchmark, 215 for
    /// a trace: the median of what Table 2's rows keep in flight, latency × IOPS].
    #[arg(long)]
    pub iodepth: Option<u32>,
    /// Open loop instead: requests arrive at this mean rate in IOPS (Poisson).
    #[arg(long)]
    pub rate: Option<f64>,
    /// Simulated seconds.
    #[arg(long, default_value_t = 0.5)]
    pub seconds: f64,
    /// Count only requests issued from this simulated second on (the reproductions: 0.2).
    #[arg(long, default_value_t = 0.0)]
    pub measure_from: f64,
    /// The seed that drives every random choice of the run (for a trace: where it sits).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Override the NAND page program time, in µs (the preset's: 1,600, Micron L95B MLC).
    #[arg(long)]
    pub t_prog_us: Option<u64>,
    /// Override the NAND page read time (tR), in µs (the preset's: 115, Micron L95B MLC).
    #[arg(long)]
    pub t_read_us: Option<u64>,
    /// Override the width of each endpoint's PCIe link to its switch, in lanes (1, 2, 4, 8,
    /// 12, 16 or 32; the preset's: 4). Narrow links make link contention, which Triple-A's
    /// migration acts on.
    #[arg(long)]
    pub endpoint_lanes: Option<u32>,
    /// Override the time from a buffered write's data landing in the endpoint's buffer to
    /// its acknowledgement, in µs (the preset's: 36.7, fitted to Table 2's service times).
    #[arg(long)]
    pub write_ack_us: Option<f64>,
    /// Every buffered write programs a page of its own, even when a program of the same
    /// page still waits for its die (the preset merges them, as a write-back buffer does).
    #[arg(long)]
    pub no_write_merging: bool,
    /// Override Eq. 3's t_SLA, in µs (the paper's: 3.3): a FIMM lags once the requests
    /// stalled for it need longer than this. For sweeping the laggard detector.
    #[arg(long)]
    pub t_sla_us: Option<f64>,
    /// Migrations read each page again from the hot FIMM instead of cloning it from the
    /// endpoint that has just served it (Fig. 16(b) against 16(c); shadow cloning is the default).
    #[arg(long)]
    pub no_shadow_cloning: bool,
    /// The copy budget: at most this many moved pages in flight (copied, not yet landed) for
    /// each of migration and reshaping; further detections wait [default: 64].
    #[arg(long, value_name = "PAGES")]
    pub max_in_flight: Option<u32>,
    /// The hysteresis: a page moved is not moved again for this many milliseconds
    /// [default: 100].
    #[arg(long, value_name = "MS")]
    pub settle_ms: Option<f64>,
    /// Reads of a moved page go to its old place until its copy has been programmed at the
    /// new one (the map switches after the copy). Off by default: the map switches when the
    /// move is decided, and such a read waits at the new die behind the copy's program.
    #[arg(long)]
    pub map_after_copy: bool,
    /// Also print each array's requests by class — reads, writes, those routed to a cluster
    /// a migration's copy was leaving (source) or landing on (target) and those clear of
    /// both, those on moved pages — with their latency quantiles and waits, and what the
    /// migrations' copies took.
    #[arg(long)]
    pub by_class: bool,
    /// Which laggard detector runs (§4.2): latency (Eq. 3 on every stall), queue (Fig. 8's
    /// examination of a switch's queue each time it fills) or both (the default).
    #[arg(long, default_value = "both")]
    pub laggard_detection: String,
    /// GC-active FIMMs: each FIMM gets a log-structured FTL with greedy GC (run by the
    /// management module; its copies and erases run inside the cluster), filled and aged
    /// before the run. Needs FIMMs scaled down (--blocks-per-plane, --pages-per-block): the
    /// maps take 8 bytes per 4 KiB of flash, and at most 4 GiB.
    #[arg(long)]
    pub gc: bool,
    /// With --gc: the share of each FIMM's flash kept from the data layout for GC (0.10).
    #[arg(long, requires = "gc")]
    pub gc_op: Option<f64>,
    /// With --gc: what laggard detection makes of a collecting FIMM: blind (Eq. 3 as for any
    /// FIMM), laggard (it lags at once) or exempt (its stalls are not examined).
    #[arg(long, default_value = "blind", requires = "gc")]
    pub gc_laggard: String,
    /// With --gc: collections take no time (their copies and erases occupy no die, bus or
    /// buffer): an ideal FTL whose only effect is to program each write at its FIMM's log
    /// head instead of in place. For measuring write placement apart from what GC costs.
    #[arg(long, requires = "gc")]
    pub gc_untimed: bool,
    /// Override the blocks per plane of every FIMM (the preset's: 256). Each block of every
    /// die and plane together is one erase unit of a FIMM's FTL under --gc.
    #[arg(long)]
    pub blocks_per_plane: Option<u32>,
    /// Override the pages per block of every FIMM (the preset's: 512).
    #[arg(long)]
    pub pages_per_block: Option<u32>,
    /// The static layout's chunk: the logical space is dealt to the clusters round-robin in
    /// chunks of this size (whole 4 KiB pages; default 1MiB). A larger chunk puts a trace's
    /// busy ranges on fewer clusters; for experiments on how concentrated a workload is.
    #[arg(long, value_parser = parse_size)]
    pub chunk: Option<u64>,
    /// Also write the reports as JSON here.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

pub fn run(args: &TripleAArgs) -> anyhow::Result<()> {
    let Some(mut fabric) = preset(&args.preset) else {
        bail!("unknown network '{}': expected one of {}", args.preset, PRESET_NAMES.join(", "));
    };
    if let Some(us) = args.t_prog_us {
        fabric.fimm.t_prog_ns = us * 1_000;
    }
    if let Some(us) = args.t_read_us {
        fabric.fimm.t_read_ns = us * 1_000;
    }
    if let Some(lanes) = args.endpoint_lanes {
        fabric.endpoint.link_lanes = lanes;
    }
    if let Some(us) = args.write_ack_us {
        if !(us.is_finite() && us >= 0.0) {
            bail!("--write-ack-us {us}: a time in µs, 0 or more");
        }
        fabric.endpoint.write_ack_ns = (us * 1_000.0).round() as u64;
    }
    fabric.endpoint.write_merging &= !args.no_write_merging;
    if let Some(n) = args.blocks_per_plane {
        fabric.fimm.blocks_per_plane = n;
    }
    if let Some(n) = args.pages_per_block {
        fabric.fimm.pages_per_block = n;
    }
    fabric.validate().context("--preset with --blocks-per-plane / --pages-per-block / --endpoint-lanes")?;
    if let Some(bytes) = args.chunk {
        if bytes == 0 || bytes % PAGE_BYTES != 0 {
            bail!("--chunk {bytes} B: a chunk must be a positive whole number of 4 KiB pages");
        }
    }
    let mut policies = policies(&args.policy)?;
    let Some(gc_laggard) = GcLaggard::parse(&args.gc_laggard) else {
        bail!("--gc-laggard {}: expected one of {}", args.gc_laggard, GcLaggard::NAMES.join(", "));
    };
    policies.iter_mut().for_each(|p| p.gc_laggard = gc_laggard);
    let Some(detection) = LaggardDetection::parse(&args.laggard_detection) else {
        bail!("--laggard-detection {}: expected one of {}", args.laggard_detection, LaggardDetection::NAMES.join(", "));
    };
    policies.iter_mut().for_each(|p| p.laggard_detection = detection);
    for p in &mut policies {
        p.shadow_cloning = !args.no_shadow_cloning;
        if let Some(n) = args.max_in_flight {
            if n == 0 {
                bail!("--max-in-flight 0: a copy budget of 0 pages would never move one");
            }
            p.max_in_flight = n;
        }
        if let Some(ms) = args.settle_ms {
            if !(ms.is_finite() && ms >= 0.0) {
                bail!("--settle-ms {ms}: the hysteresis must be a time of 0 ms or more");
            }
            p.settle = (ms * 1e6).round() as u64;
        }
    }
    if let Some(us) = args.t_sla_us {
        if !(us.is_finite() && us > 0.0) {
            bail!("--t-sla-us {us}: t_SLA must be a positive time in µs");
        }
        for p in &mut policies {
            p.t_sla = (us * 1_000.0).round() as u64;
            p.validate()?;
        }
    }
    let mut reports = Vec::new();
    let mut passes = None;
    if let Some(path) = &args.trace {
        let depth = args.iodepth.unwrap_or(TRACE_DEPTH);
        if depth == 0 {
            bail!("an I/O depth of 0 issues nothing");
        }
        let workload = TraceWorkload::open(path, args.format, depth)?;
        let mut said = false;
        for autonomic in policies {
            let cfg = config(&fabric, autonomic, args);
            let driver = TripleADriver::trace(cfg, &workload, args.seed)?;
            if !said {
                println!("{}", driver.trace_statement(&workload, args.seed));
                said = true;
            }
            reports.push(timed(driver)?);
        }
        passes = Some(workload.requests_per_pass());
    } else {
        let spec = micro_benchmark(args)?;
        for autonomic in policies {
            let cfg = config(&fabric, autonomic, args);
            reports.push(timed(TripleADriver::hot_clusters(cfg, spec, args.seed)?)?);
        }
    }
    print_table(&args.preset, &reports);
    if args.by_class {
        print_classes(&reports);
    }
    if let Some(per_pass) = passes {
        let shown: Vec<String> = reports
            .iter()
            .map(|r| format!("{} {:.1}", r.label, r.issued_requests as f64 / per_pass.max(1) as f64))
            .collect();
        println!("(passes over the trace: {})", shown.join(", "));
    }
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&reports)?;
        std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

fn config(fabric: &FabricConfig, autonomic: AutonomicConfig, args: &TripleAArgs) -> TripleAConfig {
    let mut cfg = TripleAConfig::new(fabric.clone(), autonomic, args.seconds);
    cfg.measure_from_s = args.measure_from;
    if let Some(bytes) = args.chunk {
        cfg.chunk_pages = bytes / PAGE_BYTES;
    }
    cfg.map_after_copy = args.map_after_copy;
    if args.gc {
        let mut gc = GcConfig::default();
        if let Some(op) = args.gc_op {
            gc.over_provisioning = op;
        }
        gc.timed = !args.gc_untimed;
        cfg.gc = Some(gc);
    }
    cfg
}

/// Runs `driver` to the end, saying on stderr how fast it went.
fn timed(driver: TripleADriver) -> anyhow::Result<TripleAReport> {
    let wall = Instant::now();
    let report = driver.run()?;
    let secs = wall.elapsed().as_secs_f64();
    eprintln!(
        "{}: {} requests in {secs:.1} s of wall time ({:.0} simulated requests per wall second)",
        report.label,
        report.requests,
        report.requests as f64 / secs
    );
    Ok(report)
}

fn policies(name: &str) -> anyhow::Result<Vec<AutonomicConfig>> {
    Ok(match name {
        "both" => vec![AutonomicConfig::non_autonomic(), AutonomicConfig::triple_a()],
        "triple-a" => vec![AutonomicConfig::triple_a()],
        "non-autonomic" => vec![AutonomicConfig::non_autonomic()],
        "migration-only" => vec![AutonomicConfig { reshaping: false, ..AutonomicConfig::triple_a() }],
        "reshaping-only" => vec![AutonomicConfig { migration: false, ..AutonomicConfig::triple_a() }],
        other => {
            bail!("unknown policy '{other}': expected both, triple-a, non-autonomic, migration-only or reshaping-only")
        }
    })
}

fn micro_benchmark(args: &TripleAArgs) -> anyhow::Result<HotClusterSpec> {
    let write_share = match args.rw.as_str() {
        "randread" => 0.0,
        "randwrite" => 1.0,
        "randrw" if (0.0..=1.0).contains(&args.write_share) => args.write_share,
        "randrw" => bail!("--write-share {}: a share of requests must be in [0, 1]", args.write_share),
        other => bail!("--rw {other}: Triple-A's micro-benchmark is randread, randwrite or randrw"),
    };
    let placement = if args.one_switch { HotPlacement::OneSwitch } else { HotPlacement::Spread };
    Ok(HotClusterSpec {
        write_share,
        hot_clusters: args.hot,
        share_per_hot: args.share,
        hot_pages: args.hot_pages,
        placement,
        iodepth: args.iodepth.unwrap_or(1024),
        rate_iops: args.rate,
    })
}

fn print_table(preset: &str, reports: &[TripleAReport]) {
    println!(
        "{preset}   {:>9} {:>10} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8} {:>8} {:>9} {:>8}",
        "kIOPS", "latency", "p99", "link", "storage", "stall", "RC", "switch", "EP", "migrated", "reshaped"
    );
    for r in reports {
        let s = r.queue_stall_us;
        println!(
            "{:<14} {:>9.1} {:>10.1} {:>9} {:>9.1} {:>9.1} {:>9.1} {:>8.1} {:>8.1} {:>8.1} {:>9} {:>8}",
            r.label,
            r.iops / 1e3,
            r.latency_us.mean,
            r.latency_us.p99,
            r.link_contention_us,
            r.storage_contention_us,
            s.total,
            s.root_complex,
            s.switch,
            s.endpoint,
            r.autonomic.migrated_pages,
            r.autonomic.reshaped_pages
        );
    }
    println!("(µs per request; stall = link + storage contention, by level: root complex, switch, endpoint)");
    for r in reports.iter().filter(|r| r.autonomic.laggards_by_latency + r.autonomic.laggards_by_queue > 0) {
        println!(
            "{}: laggards found by latency (Eq. 3) {}, by queue examination (Fig. 8) {}",
            r.label, r.autonomic.laggards_by_latency, r.autonomic.laggards_by_queue
        );
    }
    for r in reports {
        if let Some(g) = &r.gc {
            println!(
                "{}: {} collections, {} slots copied, {:.1} % of FIMMs collecting; {} requests met GC at {:.1} µs, \
                 the others {:.1} µs; laggards {} ({} collecting), GC stalls exempted {}",
                r.label,
                g.collections,
                g.copied_slots,
                100.0 * g.collecting_share,
                g.requests_meeting_gc,
                g.latency_meeting_gc_us,
                g.latency_clear_of_gc_us,
                r.autonomic.laggards_by_latency,
                r.autonomic.laggards_collecting,
                r.autonomic.gc_stalls_exempted
            );
        }
    }
}

/// `--by-class`: each array's requests by class, and its migrations' copies.
fn print_classes(reports: &[TripleAReport]) {
    println!(
        "\n{:<14} {:<24} {:>9} {:>9} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}",
        "by class", "", "requests", "mean", "p50", "p90", "p99", "p99.9", "max", "link", "storage", "RC", "EP"
    );
    for r in reports {
        for c in &r.classes {
            println!(
                "{:<14} {:<24} {:>9} {:>9.1} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8.1} {:>8.1} {:>8.1} {:>8.1}",
                r.label,
                c.class,
                c.requests,
                c.mean_us,
                c.p50_us,
                c.p90_us,
                c.p99_us,
                c.p999_us,
                c.max_us,
                c.link_us,
                c.storage_us,
                c.rc_stall_us,
                c.endpoint_stall_us
            );
        }
    }
    println!("(µs; a request is in every class it belongs to; worst page's waits)");
    for r in reports.iter().filter(|r| r.autonomic.migrated_pages > 0) {
        let m = r.migration_copies;
        println!(
            "{}: {} migration copies landed, {:.1} µs from decision (extra read {:.1} µs, {} pages read again); \
             trip {:.1} µs, of it {:.1} µs at the hot endpoint, {:.1} µs held in the switch queue; \
             user pages that found a switch queue full: {}; the busiest cluster's bus {:.0} % busy, \
             {:.1} % of requests on the busiest cluster",
            r.label,
            m.copies,
            m.decided_to_landed_us,
            m.extra_read_us,
            r.copy_reads,
            m.trip_us,
            m.trip_endpoint_stall_us,
            m.trip_switch_stall_us,
            r.switch_queue_full_pages,
            100.0 * r.busiest_bus_share,
            100.0 * r.busiest_cluster_request_share
        );
    }
}
