//! `swan sim`'s flags ([`SimArgs`]) and the parsers of their values; what the flags make
//! of a run is in [`crate::sim_cmd`].

use std::path::PathBuf;
use swan_args::units::{parse_blocks, parse_size};
use swan_core::geometry::RaidLevel;
use swan_core::ggc::GgcPolicy;
use swan_core::scheme::SchemeKind;
use swan_core::victim::VictimPolicy;
use swan_models::ssd::{Suspension, WriteLayout};
use swan_sim::replay::ReplayMode;
use swan_sim::trace::{AddressPolicy, TraceFormat};
use swan_sim::workload::{Distribution, Pattern};

#[derive(clap::Args, Debug)]
pub struct SimArgs {
    /// Array scheme: raid0|raid4|raid5 (in place), lograid0|lograid4|lograid5, swan0|swan4|swan5,
    /// RAID0 under Harmonia's coordinated GC: harmonia-reactive|harmonia-proactive|harmonia-idle,
    /// or over zoned SSDs raizn (Log-RAID5 logging each partly filled row's parity, as RAIZN does)
    /// and zapraid (Log-RAID5 appending in ZapRAID's groups: --append-group).
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
    pub zoned: ZonedArgs,
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
    /// With --hba-bus: at most N operations outstanding at each SSD, the rest waiting, as
    /// DiskSim's per-device queue holds them (its SSD extension sets `Max queue length =
    /// 20`); default: no bound.
    #[arg(long, value_name = "N", requires = "hba_bus")]
    pub member_queue: Option<u32>,
    /// Which request waiting in a --member-queue goes next: cycle-lbn (DiskSim's CYCLE_LBN,
    /// what the SSD extension's configurations set: the lowest block at or after the last
    /// one let out, else round from the lowest) or fcfs (arrival order).
    #[arg(long, value_name = "ORDER", value_parser = parse_queue_order, requires = "member_queue")]
    pub member_queue_order: Option<swan_sim::engine::QueueOrder>,
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
    /// Stop after writing this many multiples of the array's raw capacity, the members' blocks
    /// its segments take (default 3 when --time is not given).
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
    /// RAIZN (`--scheme raizn`): Log-RAID5 that logs each partly filled stripe row's parity
    /// (`swan-core/src/scheme/log/parity_log.rs`), over zoned SSDs only.
    pub partial_parity_log: bool,
    /// ZapRAID (`--scheme zapraid`): Log-RAID5 whose Zone Appends keep ZapRAID's group
    /// layout (`swan-sim/src/append_group.rs`), over zoned SSDs only.
    pub append_groups: bool,
}

/// `--ssd-layout`: a chunk of whole blocks is resolved against the preset's block size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayoutChoice {
    Page,
    /// `Some(pages)`, or `None` for one erase block.
    Chunk(Option<u32>),
}

impl LayoutChoice {
    pub(crate) fn layout(self, pages_per_block: u32) -> WriteLayout {
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
        return Ok(SchemeChoice {
            kind: SchemeKind::Raid(RaidLevel::Raid0),
            ggc: Some(policy),
            partial_parity_log: false,
            append_groups: false,
        });
    }
    let lograid5 = SchemeChoice {
        kind: SchemeKind::LogRaid(RaidLevel::Raid5),
        ggc: None,
        partial_parity_log: false,
        append_groups: false,
    };
    if s.eq_ignore_ascii_case("raizn") {
        return Ok(SchemeChoice { partial_parity_log: true, ..lograid5 });
    }
    if s.eq_ignore_ascii_case("zapraid") {
        return Ok(SchemeChoice { append_groups: true, ..lograid5 });
    }
    match s.parse::<SchemeKind>() {
        Ok(kind) => Ok(SchemeChoice { kind, ggc: None, partial_parity_log: false, append_groups: false }),
        Err(e) => Err(format!("{e}, harmonia-reactive, harmonia-proactive, harmonia-idle, raizn, zapraid")),
    }
}

/// How a segment lies over a zoned SSD's zones (`--ssd zn540|pm1731a` only).
#[derive(clap::Args, Clone, Debug, Default)]
pub struct ZonedArgs {
    /// Zoned SSDs: zones one segment spans on each SSD, striped in units of
    /// --zone-stripe, so a segment on a small-zone drive (one die per zone) writes on that
    /// many dies. Default 1: a segment is one zone.
    #[arg(long, value_name = "ZONES")]
    pub zones_per_segment: Option<u32>,
    /// Zoned SSDs with --zones-per-segment above 1: the blocks of a segment that go to one
    /// of its zones before the next takes over (default 4KiB: page by page, as an SSD
    /// stripes its dies). A larger unit keeps fewer zones busy for the same blocks in flight.
    #[arg(long, value_name = "SIZE", value_parser = swan_args::units::parse_blocks)]
    pub zone_stripe: Option<u64>,
    /// Zoned SSDs: the command writes reach their zones with. `append` (default): Zone
    /// Append, any number per zone in flight, the drive placing each at the write pointer
    /// (ZapRAID's primitive). `write`: Zone Write as SPDK issues it, one per zone in flight,
    /// the next going to the drive when the last completes (Linux's merging of the writes
    /// waiting for a zone is not modelled; docs/zoned.md).
    #[arg(long, value_name = "append|write")]
    pub zone_primitive: Option<swan_sim::zoned_array::ZonePrimitive>,
    /// Zoned SSDs, Zone Append: keep ZapRAID's group layout, the appends of STRIPES stripes
    /// to a group of that many blocks in each zone, the next group going only once the last
    /// has completed (default with --scheme zapraid: 256, its code's `groupSize`).
    #[arg(long, value_name = "STRIPES")]
    pub append_group: Option<u32>,
    /// Zoned SSDs, with a group layout: appends one zone may have in flight (default 16, the
    /// stripes ZapRAID's code lets a segment have in flight).
    #[arg(long, value_name = "APPENDS")]
    pub append_in_flight: Option<u32>,
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

/// `--member-queue-order`: `cycle-lbn` or `fcfs`.
pub fn parse_queue_order(s: &str) -> Result<swan_sim::engine::QueueOrder, String> {
    match s {
        "cycle-lbn" => Ok(swan_sim::engine::QueueOrder::CycleLbn),
        "fcfs" => Ok(swan_sim::engine::QueueOrder::Fcfs),
        other => Err(format!("unknown queue order '{other}': expected cycle-lbn or fcfs")),
    }
}
