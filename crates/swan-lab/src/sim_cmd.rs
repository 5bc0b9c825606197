//! `swan sim`: one simulated run with every knob on the command line.

use crate::runner::{print_table, run_all, Job};
use crate::sim_report;
use anyhow::{bail, Context};
use swan_args::units::format_size;
use swan_core::ggc::GgcConfig;
use swan_core::scheme::log::DEFAULT_SPARE;
use swan_core::scheme::{ArraySpec, SchemeKind};
use swan_models::ssd::{SsdConfig, PAGE_BYTES};
use swan_sim::engine::{SimConfig, StopRule};
use swan_sim::replay::ReplaySpec;
use swan_sim::workload::{hpc, Arrival, Pattern, WorkloadSpec};

pub use crate::sim_args::{parse_layout, parse_scheme, LayoutChoice, SchemeChoice, SimArgs};

impl SimArgs {
    pub fn to_config(&self) -> anyhow::Result<SimConfig> {
        let created = self.array.as_deref().map(created_array).transpose()?;
        let served_zones = created.as_ref().and_then(|(_, zones)| *zones);
        let zoned = crate::sim_zoned::zoned_model(self, served_zones)?;
        let created = created.map(|(spec, _)| spec);
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
        if self.scheme.partial_parity_log && zoned.is_none() {
            bail!(
                "--scheme raizn is an array of zoned SSDs (it logs partial parity in a zone of its own): give --ssd {}; over conventional SSDs, lograid5 is the same log without it",
                swan_models::zns::ZNS_PRESET_NAMES.join(" or --ssd ")
            );
        }
        if self.scheme.append_groups && zoned.is_none() {
            bail!(
                "--scheme zapraid is an array of zoned SSDs (it groups its Zone Appends): give --ssd {}; over conventional SSDs, lograid5 is the same log without it",
                swan_models::zns::ZNS_PRESET_NAMES.join(" or --ssd ")
            );
        }
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
                let (member_blocks, segment_rows) = crate::sim_zoned::zoned_layout(self, z)?;
                let mut spec = self.array_spec_with(member_blocks, segment_rows)?;
                spec.tuning.zoned_members = true;
                with_spare(spec, Some(self.spare.unwrap_or(DEFAULT_SPARE)))
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
        // The segments' capacity: a RAIZN log's zones are not space the user writes fill, and
        // counting them would make its runs write more than the other schemes' at one footprint.
        let raw_bytes = u64::from(array.members()) * array.segment_member_blocks() * swan_core::BLOCK_BYTES;
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
            member_queue: self.member_queue,
            member_queue_order: self.member_queue_order.unwrap_or_default(),
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
                partial_parity_log: self.scheme.partial_parity_log,
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
        // The share is of the blocks the segments take: RAIZN's partial-parity log is not data.
        let member_blocks = array.segment_member_blocks();
        let region = (member_blocks as f64 * data_members as f64 * self.working_set) as u64;
        if region > volume {
            // Rounded down, so that the value suggested is one that fits.
            let fits = (volume as f64 / (member_blocks * data_members) as f64 * 1e4).floor() / 1e4;
            bail!(
                "--working-set {} covers {region} blocks but {} exposes {volume}; use --working-set {fits:.4} or less",
                self.working_set,
                array.label(),
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
    /// The run `swan sim FLAGS` makes: how a reproduction turns the command it prints into
    /// the configuration it runs.
    pub(crate) fn config_of(flags: &[String]) -> anyhow::Result<swan_sim::engine::SimConfig> {
        #[derive(clap::Parser)]
        struct Sim {
            #[command(flatten)]
            sim: SimArgs,
        }
        let argv = std::iter::once("swan-sim".to_string()).chain(flags.iter().cloned());
        <Sim as clap::Parser>::try_parse_from(argv)?.sim.to_config()
    }

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
/// The array `swan create` made that `member` belongs to, and its members' layout if they
/// are emulated zoned devices.
fn created_array(member: &std::path::Path) -> anyhow::Result<(ArraySpec, Option<swan_server::member::ZonedLayout>)> {
    let m =
        swan_server::member::Member::open(member, swan_server::member::OpenOptions { direct: false, read_only: true })
            .with_context(|| format!("--array {}", member.display()))?;
    let sb = swan_server::array::read_superblock(&m)
        .with_context(|| format!("--array {}: not a member of a swan array", member.display()))?;
    Ok((sb.array_spec(), m.zoned().filter(|_| sb.zoned)))
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
