//! `swan apas`: a block trace through Apas's SSD cache over shingled disks, and through the
//! HWSR baseline, reported per time period side by side.

use anyhow::{bail, Context};
use std::path::PathBuf;
use swan_sim::apas::report::{side_by_side, summaries};
use swan_sim::apas::run::{AUTO_PERIODS, DEFAULT_AUTO_HEADROOM, DEFAULT_DISKS, PAPER_PERIOD_S};
use swan_sim::apas::{run_policy, ApasSimConfig, ApasTrace, DiskFill, Policy, PolicyReport};
use swan_sim::trace::TraceFormat;

#[derive(clap::Args, Debug, Clone)]
#[command(long_about = "Replays a block trace through Apas (Liu, Zeng and Feng): an SSD cache (the apas-slc \
    preset: 25 µs read, 200 µs program, 1.5 ms erase) split per application into read and write caches, \
    re-sized every period by Algorithm 1, in front of shingled write disks (Atlas 10K IV, drive-managed \
    STL) whose bands are cleaned by Algorithm 2: aggressively when a disk is idle (100 ms without a \
    request), lazily below 20 % free space. With --policy both (the default) the same trace also runs \
    through HWSR as the Apas paper describes it, simplified: one fixed read cache and one fixed write \
    cache for all applications (half each), lazy greedy cleaning, no idle-time cleaning.

Requests arrive at the trace's own times (divided by --accel), each with its application id (the \
trace's device or ASU field; a format without one runs as one application, with a warning). Every \
block the trace touches is written to the disks before the run, after each disk is aged with \
older data the trace never touches, so that its free space starts just above the 20 % lazy-cleaning \
threshold (--disk-fill). The volume is striped over --disks \
disks in band-sized chunks (--chunk-mib to hold them at another size); the trace's block 0 sits at a chunk chosen by --seed (the only thing \
the seed changes). Without --period-s the trace's span is cut into 25 periods (the paper's \
10,000 s periods are longer than every trace here: give --period-s 10000 to use them).

Prints one row per period (mean, read and write response time in ms, cache hits, band cleanings) \
for each policy, then a summary line per policy. See docs/apas.md.")]
pub struct ApasArgs {
    /// The block trace to replay.
    #[arg(long, value_name = "FILE")]
    pub trace: PathBuf,
    /// The trace's format: msr, heimdall, mqsim, spc, disksim, blkparse, cloudphysics or etw
    /// (Microsoft's xperf dumps: Exchange, production servers, TPC-E; alias ms-etw)
    /// (guessed from the extension, then the content, when not given).
    #[arg(long, alias = "trace-format")]
    pub format: Option<TraceFormat>,
    /// apas, hwsr or both.
    #[arg(long, default_value = "both")]
    pub policy: String,
    /// SSD cache size in MiB [default: 10 % of the trace's footprint].
    #[arg(long, conflicts_with = "cache_percent")]
    pub cache_mib: Option<f64>,
    /// SSD cache size as a percentage of the trace's footprint (every block it touches).
    #[arg(long)]
    pub cache_percent: Option<f64>,
    /// Shingled disks behind the cache.
    #[arg(long, default_value_t = DEFAULT_DISKS)]
    pub disks: u32,
    /// Band size in MiB (a whole number of 4 KiB blocks).
    #[arg(long, default_value_t = 32.0)]
    pub band_mib: f64,
    /// Stripe chunk in MiB: how much of the volume stays together on one disk (a whole
    /// number of 4 KiB blocks) [default: one band].
    #[arg(long)]
    pub chunk_mib: Option<f64>,
    /// How full each disk is when the run starts: "auto" (free space at the lazy-cleaning
    /// threshold, 20 %, plus a quarter of the blocks the trace writes to the disk, so the run
    /// crosses it), or the fraction of the disk's shingled blocks holding valid
    /// data (older data the trace never touches, spread over the disk, plus the trace's
    /// footprint), at most what the spare bands leave (0.985 with 32 MiB bands); 0 leaves the
    /// disks empty but for the footprint.
    #[arg(long, default_value = "auto", value_name = "auto|FRACTION")]
    pub disk_fill: String,
    /// With --disk-fill auto: the share of the blocks the trace writes to a disk that is left
    /// free above the 20 % threshold. It sets when in the run each disk first cleans lazily
    /// (an experiment knob: docs/findings/apas.md, "Why: the sweep's open results").
    #[arg(long, default_value_t = DEFAULT_AUTO_HEADROOM, value_name = "SHARE", allow_negative_numbers = true)]
    pub fill_headroom: f64,
    /// An experiment, not HWSR: HWSR's greedy cleaner leaves partly written bands out of its
    /// choice (docs/findings/apas.md, "Why: the sweep's open results").
    #[arg(long)]
    pub hwsr_whole_bands_only: bool,
    /// Period length in seconds [default: the trace's span / 25].
    #[arg(long)]
    pub period_s: Option<f64>,
    /// Divide the trace's arrival times by this.
    #[arg(long, default_value_t = 1.0)]
    pub accel: f64,
    /// Places the trace in the volume (which disk each of its chunks lands on).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Also write the reports as JSON here.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

pub fn policies(s: &str) -> anyhow::Result<Vec<Policy>> {
    Ok(match s {
        "apas" => vec![Policy::Apas],
        "hwsr" => vec![Policy::Hwsr],
        "both" => vec![Policy::Apas, Policy::Hwsr],
        _ => bail!("--policy '{s}': expected apas, hwsr or both"),
    })
}

/// The run's configuration from the options, checked.
pub fn config(args: &ApasArgs) -> anyhow::Result<ApasSimConfig> {
    let mut cfg = ApasSimConfig { disks: args.disks, accel: args.accel, seed: args.seed, ..ApasSimConfig::default() };
    if !(args.accel.is_finite() && args.accel > 0.0) {
        bail!("--accel {}: the acceleration must be a positive number", args.accel);
    }
    if args.disks == 0 {
        bail!("--disks 0: at least one disk is needed");
    }
    let band = args.band_mib * (1u64 << 20) as f64;
    if !(band.is_finite() && band >= 4096.0 && band.fract() == 0.0 && (band as u64).is_multiple_of(4096)) {
        bail!("--band-mib {}: a band must be a positive whole number of 4 KiB blocks", args.band_mib);
    }
    cfg.band_bytes = band as u64;
    if let Some(c) = args.chunk_mib {
        let bytes = c * (1u64 << 20) as f64;
        if !(bytes.is_finite() && bytes >= 4096.0 && bytes.fract() == 0.0 && (bytes as u64).is_multiple_of(4096)) {
            bail!("--chunk-mib {c}: a stripe chunk must be a positive whole number of 4 KiB blocks");
        }
        cfg.chunk_bytes = Some(bytes as u64);
    }
    cfg.disk_fill = match args.disk_fill.as_str() {
        "auto" => DiskFill::Auto,
        f => match f.parse::<f64>() {
            Ok(x) if (0.0..=1.0).contains(&x) => DiskFill::Fraction(x),
            _ => bail!("--disk-fill '{f}': expected auto or a fraction between 0 and 1"),
        },
    };
    if !(args.fill_headroom.is_finite() && args.fill_headroom >= 0.0) {
        bail!("--fill-headroom {}: expected a share ≥ 0 of the trace's writes", args.fill_headroom);
    }
    if args.fill_headroom != DEFAULT_AUTO_HEADROOM && cfg.disk_fill != DiskFill::Auto {
        bail!("--fill-headroom applies to --disk-fill auto only (given --disk-fill {})", args.disk_fill);
    }
    cfg.auto_headroom = args.fill_headroom;
    cfg.hwsr_whole_bands_only = args.hwsr_whole_bands_only;
    let smr = cfg.smr();
    if let Err(e) = smr.validate() {
        bail!("--band-mib {}: {e}", args.band_mib);
    }
    let most = smr.logical_blocks() as f64 / (smr.shingled_bands() * smr.band_blocks()) as f64;
    if let DiskFill::Fraction(f) = cfg.disk_fill {
        if f > most {
            bail!("--disk-fill {f}: at most {most:.4} of a disk's shingled blocks can hold data (the rest are its spare bands)");
        }
    }
    if let Some(p) = args.period_s {
        if !(p.is_finite() && p > 0.0) {
            bail!("--period-s {p}: the period must be a positive number of seconds");
        }
        cfg.period_ns = Some((p * 1e9).round() as u64);
    }
    if let Some(m) = args.cache_mib {
        if !(m.is_finite() && m > 0.0) {
            bail!("--cache-mib {m}: the cache must be larger than 0 MiB");
        }
        cfg.cache_blocks = Some(((m * 256.0).round() as u64).max(1));
    }
    if let Some(p) = args.cache_percent {
        if !(p.is_finite() && p > 0.0 && p <= 100.0) {
            bail!("--cache-percent {p}: the cache must be more than 0 % and at most 100 % of the footprint");
        }
        cfg.cache_fraction = p / 100.0;
    }
    Ok(cfg)
}

/// Runs every policy on the trace; prints the statement first.
pub fn reports(args: &ApasArgs, cfg: &ApasSimConfig, quiet: bool) -> anyhow::Result<Vec<PolicyReport>> {
    let trace = ApasTrace::open(&args.trace, args.format, cfg.accel)?;
    if !quiet {
        println!("{}", trace.statement(cfg));
        if cfg.period_ns.is_none() {
            println!(
                "periods: the trace's span / {AUTO_PERIODS} (the paper's are {PAPER_PERIOD_S} s: --period-s 10000)"
            );
        }
    }
    policies(&args.policy)?
        .into_iter()
        .map(|p| run_policy(&trace, cfg, p).with_context(|| args.trace.display().to_string()))
        .collect()
}

pub fn run(args: &ApasArgs) -> anyhow::Result<()> {
    let cfg = config(args)?;
    let reports = reports(args, &cfg, false)?;
    print!("{}", side_by_side(&reports));
    print!("{}", summaries(&reports));
    for r in &reports {
        println!(
            "{}: {:.0} simulated requests per wall second, {:.1} model bytes per footprint block (prefill {:.1} s)",
            r.policy.name(),
            r.speed.requests_per_wall_s,
            r.speed.model_bytes_per_footprint_block,
            r.prefill_s
        );
    }
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&reports)?;
        std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}
