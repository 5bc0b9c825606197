//! `swan sim`: one simulated run with every knob on the command line.

use crate::runner::{print_table, run_all, Job};
use crate::sim_report;
use anyhow::{bail, Context};
use std::path::PathBuf;
use swan_args::units::{format_size, parse_blocks, parse_size};
use swan_core::geometry::RaidLevel;
use swan_core::ggc::{GgcConfig, GgcPolicy};
use swan_core::scheme::log::DEFAULT_SPARE;
use swan_core::scheme::{ArraySpec, SchemeKind};
use swan_core::victim::VictimPolicy;
use swan_models::ssd::{SsdConfig, Suspension, WriteLayout, PAGE_BYTES};
use swan_sim::engine::{SimConfig, StopRule};
use swan_sim::replay::{ReplayMode, ReplaySpec};
use swan_sim::trace::{AddressPolicy, TraceFormat};
use swan_sim::workload::{hpc, Arrival, Distribution, Pattern, WorkloadSpec};

#[derive(clap::Args, Debug)]
pub struct SimArgs {
    /// Array scheme: raid0|raid4|raid5 (in place), lograid0|lograid4|lograid5, swan0|swan4|swan5,
    /// or RAID0 under Harmonia's coordinated GC: harmonia-reactive|harmonia-proactive|harmonia-idle.
    #[arg(long, default_value = "swan0", value_parser = parse_scheme)]
    pub scheme: SchemeChoice,
    /// R-groups (SWAN's 2-D array); Log-RAID and RAID use rgroups × ssds-per-rgroup SSDs as one stripe.
    #[arg(long, default_value_t = 4)]
    pub rgroups: u32,
    /// SSDs per R-group (4R-2SSD = --rgroups 4 --ssds-per-rgroup 2).
    #[arg(long, default_value_t = 2)]
    pub ssds_per_rgroup: u32,
    /// SSD model preset: sata850pro, sata850pro-blockftl, openchannel, harmonia, apas-slc, x25e and ultradrive-gx (Harmonia §III's SSD(S) and SSD(M)); or a zoned SSD, zn540 (large zones) or pm1731a (small zones), for log-structured schemes, one segment per zone.
    #[arg(long, default_value = "sata850pro")]
    pub ssd: String,
    /// Whether host reads overtake the SSDs' own GC (its copies and erases), as preemptible
    /// GC and erase suspension allow; host writes wait for it either way: on or off
    /// (default: the preset's; on for sata850pro and sata850pro-blockftl, off for the others).
    #[arg(long, value_parser = swan_args::read_args::parse_on_off, value_name = "on|off")]
    pub ssd_gc_preemptible: Option<bool>,
    /// What a host read does about the SSD's own work already running on its flash die
    /// (preemptible GC, buffered write-back): `instant` (overtakes it at no cost, an
    /// idealisation), `between-ops` (waits for it: semi-preemptive GC), or NAND suspension
    /// `program`, `erase`, `program-erase` with latencies in µs (`program-erase:100,700`,
    /// MQSim's defaults when omitted). Default: the preset's (between-ops for sata850pro and
    /// sata850pro-blockftl, instant for the others).
    #[arg(long, value_name = "MODE")]
    pub ssd_suspension: Option<Suspension>,
    /// DRAM write buffer of each modelled SSD (e.g. 16MiB; 0 = none): writes complete once in
    /// DRAM and are programmed behind, reads overtaking them, FLUSH waiting for them.
    /// Default: the preset's (64KiB, one page per die, for sata850pro and sata850pro-blockftl;
    /// none for the others). No drive publishes this size: name it with a result.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub ssd_write_buffer: Option<u64>,
    /// Whether host reads go before the buffered writes queued on their flash die (on, as
    /// MQSim schedules them and the presets do) or wait for them in order (off).
    #[arg(long, value_parser = swan_args::read_args::parse_on_off, value_name = "on|off")]
    pub ssd_reads_first: Option<bool>,
    /// Over-provisioning of each modelled SSD: its spare flash as a fraction of its user
    /// capacity (default: the preset's; 1/15 = 6.7 % for sata850pro). Too little for the
    /// SSD's own GC to make progress is refused with the least that is enough.
    #[arg(long, value_name = "FRACTION", allow_negative_numbers = true)]
    pub ssd_op: Option<f64>,
    /// Where each modelled SSD's page FTL puts consecutive pages, unit by unit: `page` stripes
    /// page by page over every unit (the presets'); `chunk` fills a whole erase block on one
    /// unit before moving to the next, so a TRIM of an aligned block's worth frees it whole
    /// but one stream programs one unit at a time; `chunk:PAGES` moves on after PAGES pages.
    /// Default: the preset's (page).
    #[arg(long, value_parser = parse_layout, value_name = "page|chunk|chunk:PAGES")]
    pub ssd_layout: Option<LayoutChoice>,
    /// Whether each modelled SSD's GC copies go to open blocks of their own (a separate GC
    /// write frontier, as MQSim's) instead of into the blocks host writes fill: on or off
    /// (default: the preset's; off for every preset). It keeps a second open block per unit.
    #[arg(long, value_parser = swan_args::read_args::parse_on_off, value_name = "on|off")]
    pub ssd_gc_frontier: Option<bool>,
    /// Pages per erase block of each modelled SSD (default: the preset's; 128 = 512 KiB for
    /// sata850pro), for sensitivities: MLC parts of the 850 PRO's time have 2–8 MiB blocks.
    /// The erase time per block stays the preset's.
    #[arg(long, value_name = "PAGES")]
    pub ssd_pages_per_block: Option<u32>,
    /// Capacity of each modelled SSD (the preset's timing and proportions are kept).
    #[arg(long, default_value = "1GiB", value_parser = parse_size, conflicts_with = "array")]
    pub ssd_capacity: u64,
    #[command(flatten)]
    pub zoned: crate::sim_zoned::ZonedArgs,
    /// Simulate the array `swan create` made, as `swan serve` runs it: its scheme, geometry,
    /// volume and GC tuning, read from the superblock of MEMBER (any one of its members),
    /// over modelled SSDs the size of its members. Instead of --scheme, --rgroups,
    /// --ssds-per-rgroup, --ssd-capacity, --segment, --chunk, --victim, --spare and the GC flags
    /// (but --gc-groups, which it takes as an experiment on the array as served).
    #[arg(long, value_name = "MEMBER", conflicts_with_all = [
        "scheme", "rgroups", "ssds_per_rgroup", "segment", "chunk", "victim", "spare",
        "gc_target", "gc_low", "gc_high",
    ])]
    pub array: Option<PathBuf>,
    /// Segment size on each SSD (a segment spans every SSD of its R-group). Default: the
    /// SSD model's erase stripe (an erase block on each of its units, 8 MiB for sata850pro;
    /// one erase block with --ssd-layout chunk), so a victim's TRIM frees whole erase blocks.
    #[arg(long, value_parser = parse_blocks)]
    pub segment: Option<u64>,
    /// Chunk size of in-place RAID (mdadm's default is 512 KiB).
    #[arg(long, default_value = "512KiB", value_parser = parse_blocks)]
    pub chunk: u64,
    /// GC victim policy: greedy or cost-benefit.
    #[arg(long, default_value = "greedy", value_parser = swan_args::parse_victim)]
    pub victim: VictimPolicy,
    /// SWAN: run GC while the back-end R-groups hold fewer free segments than this
    /// (default: a quarter of an R-group's segments).
    #[arg(long)]
    pub gc_target: Option<u64>,
    /// SWAN: at most this many back-end R-groups collect at once (default: all of them; the
    /// paper's Fig. 6(b) shows one). With --array, an experiment on the array as served,
    /// whose server collects in all of them.
    #[arg(long)]
    pub gc_groups: Option<u32>,
    /// Log-RAID: GC starts below this many free segments (default: 1/64 of the segments).
    #[arg(long)]
    pub gc_low: Option<u64>,
    /// Log-RAID: GC stops at this many free segments (default: 1/32 of the segments).
    #[arg(long)]
    pub gc_high: Option<u64>,
    /// The AFA's network interface in MB/s (0 = unlimited).
    #[arg(long, default_value_t = 0)]
    pub network_mbps: u64,
    /// Model the host a request's path crosses — the client's, the connection reader's and
    /// the engine's CPU on shared cores, GC's on the engine: `paper` (the SWAN paper's host,
    /// chosen on its Fig. 1) or a host model file (JSON: `swan host fit` writes one from a
    /// server's own measurement; docs/host-model.md). Without it requests reach the array
    /// the moment they are sent.
    #[arg(long, value_name = "paper|FILE")]
    pub host: Option<PathBuf>,
    /// Harmonia GGC: forced GC collects until this fraction of each GC domain's blocks is
    /// free (default: just above the domain's soft limit); every domain with garbage
    /// collects at least one victim.
    #[arg(long, allow_negative_numbers = true)]
    pub ggc_target: Option<f64>,
    /// Harmonia GGC: at most this many victims per GC domain per forced GC (default: no bound).
    #[arg(long)]
    pub ggc_victims: Option<u32>,
    /// Harmonia proactive soft-limit: GC-state poll period in simulated milliseconds.
    #[arg(long, default_value_t = 10.0, allow_negative_numbers = true)]
    pub ggc_poll_ms: f64,
    /// Harmonia proactive policies: idle after this many milliseconds without a request.
    #[arg(long, default_value_t = 5.0, allow_negative_numbers = true)]
    pub ggc_idle_ms: f64,
    /// Fill every SSD's whole logical space with valid data first (Harmonia's warm-up),
    /// before --age.
    #[arg(long)]
    pub fill: bool,
    /// SSD-to-SSD variation: SSD i of n is aged --age × (1 − SPREAD·i/n), so identical SSDs
    /// under identical striped load do not reach their GC thresholds in lockstep.
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    pub age_spread: f64,
    /// SSD-to-SSD variation of speed: SSD i's NAND and transfer times are multiplied by
    /// exp(SIGMA·z_i), z_i standard normal drawn per SSD from --seed (clamped to ±3). 0.276
    /// matches Hao et al. (FAST '16): an SSD is more than 2× slower than its RAID peers 0.6 %
    /// of the time. 0 (the default): identical SSDs.
    #[arg(long, default_value_t = 0.0, value_name = "SIGMA", allow_negative_numbers = true)]
    pub ssd_speed_spread: f64,
    /// Slow periods: each SSD spends this fraction of the time in slow periods, drawn per
    /// SSD from --seed, during which its operations take --ssd-slow-factor times as long
    /// (Hao et al.: 0.006 at 2×). 0 (the default): never slow.
    #[arg(long, default_value_t = 0.0, value_name = "FRACTION", allow_negative_numbers = true)]
    pub ssd_slow_fraction: f64,
    /// How many times longer an SSD's operations take in a slow period.
    #[arg(long, default_value_t = 2.0, value_name = "FACTOR", allow_negative_numbers = true)]
    pub ssd_slow_factor: f64,
    /// Mean length of one slow period in simulated milliseconds (exponentially distributed;
    /// the field data is hourly, so this is a time compression for short runs).
    #[arg(long, default_value_t = 1000.0, value_name = "MS", allow_negative_numbers = true)]
    pub ssd_slow_period: f64,
    /// Log-structured schemes: before the run, fill the volume and overwrite it at random,
    /// untimed, so array GC is in its steady state when measurement starts (the random
    /// writes take --bs/--dist or the named workload's sizes, over the whole volume).
    #[arg(long)]
    pub prefill: bool,
    /// Log-structured schemes: keep this share of the segments' payload spare for GC and
    /// expose the rest, in per cent as `swan create --spare` takes it (default 10, what
    /// `swan create` keeps, so the simulated array is the one the server would make; 0
    /// exposes all but what GC may be unable to give back).
    #[arg(long, value_name = "PERCENT", value_parser = swan_args::units::parse_spare_percent)]
    pub spare: Option<f64>,
    /// Leave requests issued before this simulated second out of the latencies.
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    pub measure_from: f64,
    /// A named workload instead of --rw/--bs/--rwmixread/--iodepth: hpc-w or hpc-r
    /// (Harmonia Table X: 510.53 KB average, 20 % or 80 % reads, 476.5 IOPS, bursty).
    /// --rate-iops changes its mean rate.
    #[arg(long)]
    pub workload: Option<String>,
    /// fio pattern: read, write, randread, randwrite, randrw, rw (reads and writes mixed at one sequential cursor).
    #[arg(long, default_value = "randwrite", conflicts_with = "trace")]
    pub rw: Pattern,
    /// Fraction of reads for randrw and rw.
    #[arg(long, default_value_t = 0.5, allow_negative_numbers = true, conflicts_with = "trace")]
    pub rwmixread: f64,
    /// Request size.
    #[arg(long, default_value = "8k", value_parser = parse_blocks, conflicts_with = "trace")]
    pub bs: u64,
    /// Outstanding requests (closed loop). Ignored with --rate-iops.
    #[arg(long, default_value_t = 64, conflicts_with = "trace")]
    pub iodepth: u32,
    /// Open loop: issue this many requests per simulated second regardless of completions.
    #[arg(long, allow_negative_numbers = true, conflicts_with = "trace")]
    pub rate_iops: Option<f64>,
    /// Address distribution: uniform, zipf (θ = 0.99) or zipf:THETA.
    #[arg(long, default_value = "uniform", conflicts_with = "trace")]
    pub dist: Distribution,
    /// Region the workload touches, as a fraction of the array's raw data capacity
    /// (the disk utilization ud of §3.5; the paper's runs use 0.6).
    #[arg(long, default_value_t = 0.6, allow_negative_numbers = true, conflicts_with = "trace")]
    pub working_set: f64,
    /// Region the workload touches as bytes from the volume's start, as fio's --size over
    /// the served volume (a multiple of 4 KiB), in place of --working-set: the way to give
    /// the simulator the very region a live run's fio wrote.
    #[arg(long, value_name = "SIZE", value_parser = parse_blocks, conflicts_with_all = ["trace", "working_set"])]
    pub span: Option<u64>,
    /// Fraction of each SSD written at random before the array is built (default 0.6: the
    /// paper ages to 0.6; none with --fabric, whose FIMMs age under --fimm-gc).
    #[arg(long, allow_negative_numbers = true)]
    pub age: Option<f64>,
    /// Members are Triple-A clusters behind this PCIe fabric instead of independent SSDs: a
    /// preset, 4x8, 4x12, 4x16 (the paper's) or 4x20 (switches × clusters per switch, four
    /// 64 GiB FIMMs a cluster). Member i is cluster i, switch-major (members 0–15 of a 4x16
    /// share switch 0 and its up-link); every member I/O crosses the root complex, the
    /// member's switch and its endpoint to the cluster's FIMMs and back, a flash page at a
    /// time. Any scheme; --ssd-capacity is the member size, and the SSD-only flags (--age,
    /// --fill, --ssd-speed-spread, --ssd-slow-*, Harmonia's schemes) are refused. summary.json
    /// then has `fabric`: per page operation, link vs storage contention and each queue's stall.
    #[arg(long, value_name = "PRESET", conflicts_with = "array")]
    pub fabric: Option<String>,
    /// With --fabric: the FIMMs collect garbage (the management module's page-mapped FTL per
    /// FIMM, 10 % over-provisioning, filled and overwritten once before the run), their
    /// copies and erases taking the same dies, local bus and endpoint as the array's I/O.
    /// Without it pages are programmed in place, as the paper's FIMMs are. Its maps take 8
    /// bytes per 4 KiB of flash: scale the FIMMs down with --fimm-blocks-per-plane.
    #[arg(long, requires = "fabric")]
    pub fimm_gc: bool,
    /// With --fabric: flash blocks per plane of each FIMM (the preset's 256 if unset).
    #[arg(long, value_name = "N", requires = "fabric")]
    pub fimm_blocks_per_plane: Option<u32>,
    /// With --fabric: pages per flash block of each FIMM (the preset's if unset).
    #[arg(long, value_name = "N", requires = "fabric")]
    pub fimm_pages_per_block: Option<u32>,
    /// With --fabric: which clusters the members are. switch-major (member i is cluster i,
    /// so an array of up to 16 members sits under one switch of 4x16 and shares its up-link
    /// and queue) or spread (members dealt round-robin over the switches).
    #[arg(long, value_name = "PLACEMENT", requires = "fabric", default_value = "switch-major")]
    pub fabric_placement: swan_sim::fabric_array::Placement,
    /// The SSDs share one host-bus-adapter bus, as DiskSim connects an array's devices (the
    /// paper's simulator for Harmonia): every byte any member reads or writes crosses it,
    /// with an arbitration per member per request, and an SSD's own host link costs nothing.
    /// `disksim` is the SSD extension's bus (2,147 MB/s, 1 µs arbitration); or MBPS[:ARB_US].
    #[arg(long, value_name = "BUS", value_parser = parse_hba_bus, conflicts_with = "fabric")]
    pub hba_bus: Option<swan_models::hba::HbaBusConfig>,
    /// Replay this block trace instead of the fio-like workload (--rw, --bs, --iodepth...):
    /// every request of the trace, to its end (or --time, --max-requests).
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// The trace's format: msr, spc, mqsim, disksim, blkparse, heimdall, cloudphysics, etw
    /// (Microsoft's xperf dumps: Exchange, production servers, TPC-E; alias ms-etw)
    /// (default: guessed from the extension, then the content, and said so).
    #[arg(long, value_name = "FORMAT", requires = "trace")]
    pub trace_format: Option<TraceFormat>,
    /// recorded (the trace's own times), accel=N (times divided by N) or closed=DEPTH (as fast
    /// as the array allows, DEPTH requests outstanding).
    #[arg(long, default_value = "recorded", value_name = "MODE", requires = "trace")]
    pub replay: ReplayMode,
    /// Fitting trace addresses into the volume: wrap (block address modulo the volume) or
    /// scale (by volume / trace span). Requests are expanded to the 4 KiB blocks they cover.
    #[arg(long, default_value = "wrap", value_name = "POLICY", requires = "trace")]
    pub address_policy: AddressPolicy,
    /// Skip malformed trace lines and count them (default: the first one is an error naming
    /// its file and line).
    #[arg(long, requires = "trace")]
    pub skip_bad: bool,
    /// Replay only the trace's first N requests.
    #[arg(long, value_name = "N", requires = "trace")]
    pub max_requests: Option<u64>,
    /// Measure windows of the trace's recorded time apart (an application's phases, e.g.
    /// YCSB's Load and A–D): FILE holds lines `NAME START_S END_S`, seconds from the trace's
    /// start; each window is reported on its own in summary.json (`windows`) and
    /// window_read_cdf.csv, over the array state the windows before it left.
    #[arg(long, value_name = "FILE", requires = "trace")]
    pub windows: Option<PathBuf>,
    /// Stop after this many simulated seconds.
    #[arg(long, allow_negative_numbers = true)]
    pub time: Option<f64>,
    /// Stop after writing this many multiples of the array's raw capacity (default 3 when --time is not given).
    #[arg(long, allow_negative_numbers = true)]
    pub footprint: Option<f64>,
    /// Reporting interval in simulated milliseconds.
    #[arg(long, default_value_t = 1000)]
    pub interval_ms: u64,
    /// The seed that drives every random choice of the run.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Output directory.
    #[arg(long, default_value = "out/sim")]
    pub out: PathBuf,
    #[command(flatten)]
    pub reads: swan_args::read_args::ReadArgs,
    /// An experiment, off by default: with SWAN's read priority, user reads also overtake the
    /// user writes queued on their SSD (the front-end's), not only array GC. It tests whether
    /// front-end reads are slow because they wait for the write stream (docs/findings/swan.md,
    /// "Table 4"); a write's reported completion is not moved by reads that overtake it
    /// later, so the writes' cost is understated: on or off.
    #[arg(long, default_value = "off", value_parser = swan_args::read_args::parse_on_off, value_name = "on|off", action = clap::ArgAction::Set)]
    pub reads_overtake_writes: bool,
    /// An experiment, off by default: SWAN's GC may take its victims in the front-end
    /// R-group too (greedy over every R-group, the victim's blocks moved inside it), where
    /// the paper's GC runs only in the back-end. It tests whether SWAN's victims are fuller
    /// than one log's because the emptiest segments sit in the front-end when GC must run
    /// (docs/findings/swan.md, "The causes, by experiment"); summary.json's `victim_choice` counts what each
    /// pick passed over: on or off.
    #[arg(long, default_value = "off", value_parser = swan_args::read_args::parse_on_off, value_name = "on|off", action = clap::ArgAction::Set)]
    pub gc_in_front_end: bool,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}

/// An array scheme, possibly with Harmonia's GC coordination over it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SchemeChoice {
    pub kind: SchemeKind,
    pub ggc: Option<GgcPolicy>,
}

/// `--ssd-layout`: a chunk of whole blocks is resolved against the preset's block size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayoutChoice {
    Page,
    /// `Some(pages)`, or `None` for one erase block.
    Chunk(Option<u32>),
}

impl LayoutChoice {
    fn layout(self, pages_per_block: u32) -> WriteLayout {
        match self {
            LayoutChoice::Page => WriteLayout::PageStriped,
            LayoutChoice::Chunk(pages) => WriteLayout::Chunked { pages: pages.unwrap_or(pages_per_block) },
        }
    }
}

pub fn parse_layout(s: &str) -> Result<LayoutChoice, String> {
    match s.split_once(':') {
        None if s == "page" => Ok(LayoutChoice::Page),
        None if s == "chunk" => Ok(LayoutChoice::Chunk(None)),
        Some(("chunk", n)) => match n.parse::<u32>() {
            Ok(pages) if pages > 0 => Ok(LayoutChoice::Chunk(Some(pages))),
            _ => Err(format!("chunk:{n}: PAGES must be a whole number of 4 KiB pages ≥ 1, e.g. chunk:128")),
        },
        _ => Err(format!("'{s}': expected page, chunk (one erase block) or chunk:PAGES")),
    }
}

pub fn parse_scheme(s: &str) -> Result<SchemeChoice, String> {
    if let Ok(policy) = s.parse::<GgcPolicy>() {
        return Ok(SchemeChoice { kind: SchemeKind::Raid(RaidLevel::Raid0), ggc: Some(policy) });
    }
    match s.parse::<SchemeKind>() {
        Ok(kind) => Ok(SchemeChoice { kind, ggc: None }),
        Err(e) => Err(format!("{e}, harmonia-reactive, harmonia-proactive, harmonia-idle")),
    }
}

impl SimArgs {
    pub fn to_config(&self) -> anyhow::Result<SimConfig> {
        let zoned = crate::sim_zoned::zoned_model(self)?;
        // A zoned run's members are `zoned`; the conventional model is carried unused.
        let preset = match (swan_models::ssd::preset(&self.ssd), &zoned) {
            (Some(preset), _) => preset,
            (None, Some(_)) => swan_models::ssd::presets::sata850pro(),
            (None, None) => bail!(
                "unknown SSD preset '{}': expected one of {}, or a zoned SSD: {}",
                self.ssd,
                swan_models::ssd::PRESET_NAMES.join(", "),
                swan_models::zns::ZNS_PRESET_NAMES.join(", ")
            ),
        };
        let created = self.array.as_deref().map(created_array).transpose()?;
        let kind = created.as_ref().map_or(self.scheme.kind, |a| a.kind);
        self.check_flags(kind)?;
        let capacity = created.as_ref().map_or(self.ssd_capacity, |a| a.member_blocks * PAGE_BYTES);
        let ssd = if zoned.is_some() { preset } else { self.ssd_model(&preset, capacity)? };
        let array = match (created, &zoned) {
            (Some(mut a), _) => {
                a.tuning.swan_gc_max_groups = self.gc_groups.or(a.tuning.swan_gc_max_groups);
                with_spare(a, self.spare)
            }
            (None, Some(z)) => {
                with_spare(crate::sim_zoned::zoned_array_spec(self, z)?, Some(self.spare.unwrap_or(DEFAULT_SPARE)))
            }
            (None, None) => with_spare(self.array_spec(&ssd)?, Some(self.spare.unwrap_or(DEFAULT_SPARE))),
        };
        let region = self.working_region(&array)?;
        let named = self.named_workload(region)?;
        let ggc = self.ggc_config()?;
        if !(self.measure_from.is_finite() && self.measure_from >= 0.0) {
            bail!("--measure-from must be ≥ 0 seconds, got {}", self.measure_from);
        }
        let workload = match named {
            Some(w) => w,
            None => self.synthetic_workload(region)?,
        };
        let footprint = match (self.time, self.footprint, &self.trace) {
            (None, None, None) => Some(3.0),
            (_, f, _) => f,
        };
        let windows = match &self.windows {
            Some(file) => swan_sim::replay::read_windows(file).context("--windows")?,
            None => Vec::new(),
        };
        let trace = self.trace.as_ref().map(|path| ReplaySpec {
            path: path.clone(),
            format: self.trace_format,
            mode: self.replay,
            policy: self.address_policy,
            skip_bad: self.skip_bad,
            max_requests: self.max_requests,
            windows,
        });
        let raw_bytes = u64::from(array.members()) * array.member_blocks * swan_core::BLOCK_BYTES;
        Ok(SimConfig {
            array,
            ssd,
            network_mbps: self.network_mbps,
            workload,
            stop: StopRule { sim_seconds: self.time, write_bytes: footprint.map(|f| (f * raw_bytes as f64) as u64) },
            interval_ms: self.interval_ms,
            seed: self.seed,
            age_fraction: self.age_fraction(zoned.is_some())?,
            stall_limit_s: 600.0,
            trace,
            fill_first: self.fill,
            ggc,
            timeline: None,
            measure_from_s: self.measure_from,
            age_spread: self.age_spread,
            prefill: self.prefill.then_some(swan_sim::prefill::Prefill::STEADY),
            ssd_variation: swan_models::ssd::Variation {
                speed_spread: self.ssd_speed_spread,
                slow_fraction: self.ssd_slow_fraction,
                slow_factor: self.ssd_slow_factor,
                slow_period_ms: self.ssd_slow_period,
            },
            reads: self.reads.rules(kind)?,
            reads_overtake_writes: self.reads_overtake_writes,
            gc_in_front_end: self.gc_in_front_end,
            fabric: self.fabric.as_ref().map(|preset| swan_sim::fabric_array::FabricSpec {
                preset: preset.clone(),
                gc: self.fimm_gc,
                blocks_per_plane: self.fimm_blocks_per_plane,
                pages_per_block: self.fimm_pages_per_block,
                placement: self.fabric_placement,
            }),
            hba_bus: self.hba_bus,
            zoned,
            host: match &self.host {
                Some(path) => Some(read_host_model(path)?),
                None => None,
            },
            setup_threads: 0,
        })
    }

    /// `--age`, its default 0.6 for conventional SSD members (none for zoned ones, which
    /// have no mapping to age); refused with `--fabric`.
    fn age_fraction(&self, zoned: bool) -> anyhow::Result<f64> {
        match (self.age, &self.fabric) {
            (Some(_), Some(f)) => {
                bail!("--age ages SSD members; the clusters of --fabric {f} have FIMMs, aged by --fimm-gc")
            }
            (None, Some(_)) => Ok(0.0),
            (None, None) if zoned => Ok(0.0),
            (age, None) => Ok(age.unwrap_or(0.6)),
        }
    }

    /// The SSD model: `preset` at `capacity` bytes, refused with the smallest capacity that
    /// would fit when it is too small.
    fn ssd_model(&self, preset: &SsdConfig, capacity: u64) -> anyhow::Result<SsdConfig> {
        let mut preset = preset.clone();
        if let Some(op) = self.ssd_op {
            preset.over_provisioning = op;
        }
        if let Some(pages) = self.ssd_pages_per_block {
            preset.pages_per_block = pages;
        }
        if let Some(layout) = self.ssd_layout {
            preset.layout = layout.layout(preset.pages_per_block);
        }
        preset.gc_frontier = self.ssd_gc_frontier.unwrap_or(preset.gc_frontier);
        let preset = &preset;
        let mut ssd = preset.with_user_pages(capacity / PAGE_BYTES);
        ssd.gc_preemptible = self.ssd_gc_preemptible.unwrap_or(preset.gc_preemptible);
        ssd.suspension = self.ssd_suspension.unwrap_or(preset.suspension);
        ssd.reads_before_write_back = self.ssd_reads_first.unwrap_or(preset.reads_before_write_back);
        if let Some(bytes) = self.ssd_write_buffer {
            ssd.write_buffer_pages = u32::try_from(bytes.div_ceil(PAGE_BYTES))
                .map_err(|_| anyhow::anyhow!("--ssd-write-buffer {}: at most 16 TiB", format_size(bytes)))?;
        }
        let Err(e) = ssd.validate() else { return Ok(ssd) };
        if matches!(e.field, "layout" | "gc_frontier") {
            return Err(
                anyhow::Error::new(e).context(format!("--ssd-layout or --ssd-gc-frontier on the {} model", self.ssd))
            );
        }
        let given = format_size(capacity);
        if self.array.is_some() {
            let hint = format!("the array's members ({given}) are too small for the {} SSD model", self.ssd);
            return Err(anyhow::Error::new(e).context(hint));
        }
        let hint = match min_capacity(preset) {
            Some(min) if capacity < min => format!(
                "--ssd-capacity {given} is too small for the {} SSD model{}; use --ssd-capacity {} or more",
                self.ssd,
                if e.field == "over_provisioning" {
                    ": the blocks its GC holds in reserve would eat its over-provisioning"
                } else {
                    ""
                },
                format_size(min)
            ),
            _ => format!("--ssd-capacity {given} does not fit the {} SSD model", self.ssd),
        };
        Err(anyhow::Error::new(e).context(hint))
    }

    /// The array the flags describe, over members the size of `ssd`'s user space.
    fn array_spec(&self, ssd: &SsdConfig) -> anyhow::Result<ArraySpec> {
        let segment = self.segment.unwrap_or_else(|| ssd.erase_stripe_pages());
        self.array_spec_with(ssd.user_pages, u32::try_from(segment).context("segment is too large")?)
    }

    /// The array the flags describe, over members of `member_blocks` in segments of
    /// `segment_rows` blocks per member.
    pub(crate) fn array_spec_with(&self, member_blocks: u64, segment_rows: u32) -> anyhow::Result<ArraySpec> {
        let to_u32 = |v: u64, what: &str| u32::try_from(v).with_context(|| format!("{what} is too large"));
        Ok(ArraySpec {
            kind: self.scheme.kind,
            rgroups: self.rgroups,
            ssds_per_rgroup: self.ssds_per_rgroup,
            member_blocks,
            member_offset: 0,
            segment_rows,
            chunk_blocks: to_u32(self.chunk, "chunk")?,
            victim: self.victim,
            tuning: swan_core::scheme::LogTuning {
                swan_gc_target: self.gc_target,
                swan_gc_max_groups: self.gc_groups,
                lograid_gc_low: self.gc_low,
                lograid_gc_high: self.gc_high,
                ..Default::default()
            },
        })
    }

    /// The blocks the workload touches from the volume's start: `--span`, or the share
    /// `--working-set` gives of the data members' blocks; either must fit in the volume the
    /// array exposes.
    fn working_region(&self, array: &ArraySpec) -> anyhow::Result<u64> {
        let volume = array.build()?.volume_blocks();
        if let Some(blocks) = self.span {
            if blocks > volume {
                bail!(
                    "--span {} is more than the {} the array exposes",
                    format_size(blocks * swan_core::BLOCK_BYTES),
                    format_size(volume * swan_core::BLOCK_BYTES),
                );
            }
            return Ok(blocks);
        }
        let kind = array.kind;
        let parity = kind.raid().parity_members();
        let data_members = match kind {
            SchemeKind::Swan(_) => u64::from(array.rgroups) * u64::from(array.ssds_per_rgroup.saturating_sub(parity)),
            _ => u64::from(array.members().saturating_sub(parity)),
        };
        let region = (array.member_blocks as f64 * data_members as f64 * self.working_set) as u64;
        if region > volume {
            // Rounded down, so that the value suggested is one that fits.
            let fits = (volume as f64 / (array.member_blocks * data_members) as f64 * 1e4).floor() / 1e4;
            bail!(
                "--working-set {} covers {region} blocks but {} exposes {volume}; use --working-set {fits:.4} or less",
                self.working_set,
                kind,
            );
        }
        Ok(region)
    }

    fn arrival(&self) -> Arrival {
        match self.rate_iops {
            Some(iops) => Arrival::Open { iops },
            None => Arrival::Closed { iodepth: self.iodepth },
        }
    }

    /// `--workload`'s HPC workload over `region`, with `--rate-iops` as its burst rate.
    fn named_workload(&self, region: u64) -> anyhow::Result<Option<WorkloadSpec>> {
        let Some(name) = &self.workload else { return Ok(None) };
        let Some(mut w) = hpc::by_name(name, region) else {
            bail!("unknown --workload '{name}': expected one of {}", hpc::NAMES.join(", "));
        };
        if let (Some(iops), Arrival::Bursty { on_ms, off_ms, .. }) = (self.rate_iops, w.arrival) {
            w.arrival = Arrival::Bursty { iops, on_ms, off_ms };
        }
        Ok(Some(w))
    }

    /// The fio-like workload `--rw`, `--bs`, `--dist` and friends describe.
    fn synthetic_workload(&self, region: u64) -> anyhow::Result<WorkloadSpec> {
        Ok(WorkloadSpec {
            pattern: self.rw,
            read_fraction: self.rwmixread,
            block_blocks: u32::try_from(self.bs).context("block size is too large")?,
            block_blocks_max: 0,
            region_start: 0,
            region_blocks: region,
            distribution: self.dist,
            arrival: self.arrival(),
        })
    }

    /// Harmonia's coordinator, when the scheme asks for one.
    fn ggc_config(&self) -> anyhow::Result<Option<GgcConfig>> {
        let Some(policy) = self.scheme.ggc else { return Ok(None) };
        let ms = |v: f64, flag: &str| -> anyhow::Result<u64> {
            if !(v.is_finite() && v > 0.0) {
                bail!("{flag} must be a positive number of milliseconds, got {v}");
            }
            Ok((v * 1e6) as u64)
        };
        let cfg = GgcConfig {
            policy,
            force_target: self.ggc_target,
            force_victims: self.ggc_victims,
            poll_ns: ms(self.ggc_poll_ms, "--ggc-poll-ms")?,
            idle_ns: ms(self.ggc_idle_ms, "--ggc-idle-ms")?,
        };
        cfg.validate().map_err(|e| anyhow::anyhow!("--ggc-target/--ggc-victims: {e}"))?;
        Ok(Some(cfg))
    }
}

impl SimArgs {
    /// Flags that are wrong on their own (or together, or for an array of scheme `kind`),
    /// named in the error.
    fn check_flags(&self, kind: SchemeKind) -> anyhow::Result<()> {
        if self.rgroups == 0 {
            bail!("--rgroups must be at least 1");
        }
        if self.ssds_per_rgroup == 0 {
            bail!("--ssds-per-rgroup must be at least 1");
        }
        if !(self.working_set > 0.0 && self.working_set <= 1.0) {
            bail!("--working-set must be within (0, 1], got {}", self.working_set);
        }
        if let Some(age) = self.age.filter(|a| !(0.0..1.0).contains(a)) {
            bail!("--age must be within [0, 1), got {age}");
        }
        let log = kind.is_log_structured();
        if self.gc_groups.is_some() && !matches!(kind, SchemeKind::Swan(_)) {
            bail!("--gc-groups is SWAN's (how many back-end R-groups collect at once); {kind} has no back-end");
        }
        if self.gc_groups == Some(0) {
            bail!("--gc-groups must be at least 1");
        }
        match self.spare {
            Some(_) if !log => bail!("--spare is for log-structured schemes (lograid*, swan*)"),
            _ => {}
        }
        if self.prefill && !log {
            bail!("--prefill is for log-structured schemes (lograid*, swan*); --fill warms in-place RAID's SSDs");
        }
        if !(0.0..=1.0).contains(&self.rwmixread) {
            bail!("--rwmixread must be within [0, 1], got {}", self.rwmixread);
        }
        match self.rate_iops {
            Some(iops) if !(iops.is_finite() && iops > 0.0) => {
                bail!("--rate-iops must be a positive number of requests per second, got {iops}")
            }
            None if self.iodepth == 0 => bail!("--iodepth must be at least 1"),
            _ => {}
        }
        if self.interval_ms == 0 {
            bail!("--interval-ms must be at least 1");
        }
        for (flag, value) in [("--time", self.time), ("--footprint", self.footprint)] {
            if let Some(v) = value {
                if !(v.is_finite() && v > 0.0) {
                    bail!("{flag} must be positive, got {v}");
                }
            }
        }
        let reads_only = match self.rw {
            Pattern::Read | Pattern::RandRead => true,
            Pattern::RandRw | Pattern::Rw => self.rwmixread >= 1.0,
            Pattern::Write | Pattern::RandWrite => false,
        };
        if self.max_requests == Some(0) {
            bail!("--max-requests must be at least 1");
        }
        if reads_only && self.time.is_none() && self.trace.is_none() {
            bail!(
                "--rw {} writes nothing, so the run would never reach its --footprint stop; give --time SECONDS",
                self.rw
            );
        }
        Ok(())
    }
}

/// The smallest capacity (a whole number of MiB, up to 1 TiB) the SSD model accepts for
/// `preset`, if any: below it the GC reserve leaves no room to spare.
fn min_capacity(preset: &SsdConfig) -> Option<u64> {
    const MIB_PAGES: u64 = (1 << 20) / PAGE_BYTES;
    let pages = preset.min_user_pages((1u64 << 20) * MIB_PAGES)?;
    Some(pages.div_ceil(MIB_PAGES) << 20)
}

pub fn run(args: &SimArgs) -> anyhow::Result<()> {
    let cfg = args.to_config()?;
    println!("swan sim: seed {} with options {}", cfg.seed, serde_json::to_string(&cfg)?);
    if cfg.array.kind.is_log_structured() && cfg.zoned.is_none() {
        if let Some(why) = cfg.ssd.segment_misalignment(u64::from(cfg.array.segment_rows)) {
            eprintln!("swan sim: note: {why} (README, \"Segments must match\")");
        }
    }
    let job = Job { name: cfg.scheme_label(), cfg, dir: args.out.clone() };
    let summaries = run_all(std::slice::from_ref(&job), 1, args.quiet)?;
    print_table(&summaries);
    sim_report::print_reads(&summaries[0]);
    if let Some(replay) = &summaries[0].replay {
        sim_report::print_replay(&summaries[0], replay);
    }
    println!("run written to {}", args.out.display());
    Ok(())
}

/// The array `swan create` made, as `swan serve` runs it, from the superblock of `member`.
fn created_array(member: &std::path::Path) -> anyhow::Result<ArraySpec> {
    let m =
        swan_server::member::Member::open(member, swan_server::member::OpenOptions { direct: false, read_only: true })
            .with_context(|| format!("--array {}", member.display()))?;
    let sb = swan_server::array::read_superblock(&m)
        .with_context(|| format!("--array {}: not a member of a swan array", member.display()))?;
    Ok(sb.array_spec())
}

/// `array` with the volume `spare` leaves, if any, for a log-structured scheme. A created
/// array (`--array`) keeps the volume its superblock records unless `--spare` is given.
fn with_spare(mut array: ArraySpec, spare: Option<f64>) -> ArraySpec {
    if let (Some(spare), true) = (spare, array.kind.is_log_structured()) {
        array.tuning.volume_blocks = Some(crate::experiments::spare_volume(&array, spare));
    }
    array
}

/// A host model (`--host`): a preset's name or a file, checked.
pub(crate) fn read_host_model(path: &std::path::Path) -> anyhow::Result<swan_models::host::HostModel> {
    if let Some(model) = path.to_str().and_then(swan_models::host::preset) {
        return Ok(model);
    }
    let text = std::fs::read_to_string(path).with_context(|| format!("--host {}", path.display()))?;
    let model: swan_models::host::HostModel =
        serde_json::from_str(&text).with_context(|| format!("--host {}: not a host model", path.display()))?;
    model.validate().with_context(|| format!("--host {}", path.display()))?;
    Ok(model)
}

/// `--hba-bus`: `disksim`, or a rate in MB/s with an optional arbitration in µs.
fn parse_hba_bus(s: &str) -> Result<swan_models::hba::HbaBusConfig, String> {
    use swan_models::hba::HbaBusConfig;
    if s == "disksim" {
        return Ok(HbaBusConfig::DISKSIM_PCIE_X8);
    }
    let (rate, arb) = s.split_once(':').map_or((s, None), |(r, a)| (r, Some(a)));
    let mbps: u64 = rate.parse().map_err(|_| format!("`{rate}`: expected `disksim` or MBPS[:ARB_US]"))?;
    if mbps == 0 {
        return Err("the bus needs a rate above 0 MB/s".into());
    }
    let arbitration_us: f64 = match arb {
        Some(a) => a
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v >= 0.0)
            .ok_or(format!("`{a}`: an arbitration time in µs, 0 or more"))?,
        None => 0.0,
    };
    Ok(HbaBusConfig { mbps, arbitration_ns: (arbitration_us * 1_000.0).round() as u64 })
}

#[cfg(test)]
#[path = "sim_cmd_tests.rs"]
mod tests;
