//! What a run depends on ([`SimConfig`], [`StopRule`]) and how it can fail ([`SimError`]):
//! the settings are refused here, before any SSD is built, so a bad run fails at once.

use crate::ggc::TimelineWindow;
use crate::prefill::Prefill;
use crate::workload::WorkloadSpec;
use serde::{Deserialize, Serialize};
use swan_core::geometry::RaidLevel;
use swan_core::ggc::GgcConfig;
use swan_core::scheme::{ArraySpec, SchemeKind};
use swan_models::ssd::{SsdConfig, Variation};
use thiserror::Error;

/// When a run ends.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct StopRule {
    /// Simulated seconds.
    pub sim_seconds: Option<f64>,
    /// User bytes written.
    pub write_bytes: Option<u64>,
}

/// Everything a run depends on. Printed in full with every run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SimConfig {
    pub array: ArraySpec,
    pub ssd: SsdConfig,
    /// The AFA's network interface in MB/s (0 = unlimited).
    pub network_mbps: u64,
    pub workload: WorkloadSpec,
    pub stop: StopRule,
    pub interval_ms: u64,
    pub seed: u64,
    /// Fraction of each SSD's logical space written at random before the array is built
    /// (the paper's SSD aging).
    pub age_fraction: f64,
    /// Give up if no user request completes for this many simulated seconds.
    pub stall_limit_s: f64,
    /// Replay this block trace instead of drawing `workload` (built by [`crate::replay::engine`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<crate::replay::ReplaySpec>,
    /// Harmonia's warm-up: fill every SSD's whole logical space with valid data (before
    /// any aging).
    #[serde(default)]
    pub fill_first: bool,
    /// Harmonia's globally coordinated GC (`None`: every SSD collects on its own).
    #[serde(default)]
    pub ggc: Option<GgcConfig>,
    /// Record each SSD's user operations in this window (Harmonia Fig. 9).
    #[serde(default)]
    pub timeline: Option<TimelineWindow>,
    /// Latencies count only requests issued from this simulated second on (0: all).
    #[serde(default)]
    pub measure_from_s: f64,
    /// SSD-to-SSD variation of history: SSD `i` of `n` is aged `age_fraction × (1 −
    /// age_spread × i / n)` instead of `age_fraction`, so identical SSDs under identical
    /// striped load do not reach their GC thresholds in lockstep (0: all alike).
    #[serde(default)]
    pub age_spread: f64,
    /// Log-structured schemes: fill the volume and overwrite it before the run, untimed, so
    /// array GC is in its steady state when measurement starts (see [`crate::prefill`]).
    /// Done after the SSDs' own fill and aging, which the array's format then TRIMs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefill: Option<Prefill>,
    /// SSD-to-SSD variation of speed: per-SSD speed factors and slow periods drawn from
    /// `seed` (default: identical SSDs).
    #[serde(default)]
    pub ssd_variation: Variation,
    /// How user reads are served: SWAN's read priority, reads around busy SSDs.
    #[serde(default)]
    pub reads: super::ReadRules,
    /// An experiment, not a scheme: SWAN's user reads, which preempt array GC on their SSD
    /// (read priority), also overtake the user writes queued there, as they would if the
    /// front-end's SSDs put reads first. It asks whether front-end reads are slow because
    /// they wait for the write stream (docs/findings/swan.md). A write's completion, once reported,
    /// is not moved by the reads that overtake it later, so the writes' cost is understated.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reads_overtake_writes: bool,
    /// An experiment, not a scheme: SWAN's GC may take its victims in the front-end R-group
    /// too, greedy over every R-group ([`swan_core::scheme::LogArray::set_gc_in_front_end`]).
    /// It asks whether SWAN's victims are fuller than one log's because the emptiest
    /// segments sit in the front-end when GC must run (docs/findings/swan.md).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub gc_in_front_end: bool,
    /// Members are Triple-A clusters behind this PCIe fabric instead of independent SSDs
    /// (see [`crate::fabric_array`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fabric: Option<crate::fabric_array::spec::FabricSpec>,
    /// The SSDs share one host-bus-adapter bus, as DiskSim connects an array's devices
    /// (see [`crate::hba_array`]); `None`: each SSD has its own host link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hba_bus: Option<swan_models::hba::HbaBusConfig>,
    /// At most this many operations outstanding at each SSD behind the HBA bus, the rest
    /// waiting in arrival order (DiskSim's per-device queue; see [`crate::hba_array`]);
    /// `None`: no bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member_queue: Option<u32>,
    /// Which waiting operation a bounded member queue lets out next.
    #[serde(default)]
    pub member_queue_order: QueueOrder,
    /// Members are zoned SSDs instead of `ssd` (which is then unused), each segment over
    /// zones of them as this says (see [`crate::zoned_array`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zoned: Option<ZonedSpec>,
    /// The host's cores and the CPU cost of each stage of a request's path (client,
    /// connection reader, engine in and out, GC on the engine), as `swan host fit` measured
    /// them on a machine or a preset names them (docs/host-model.md). `None`: no host, every
    /// request reaches the scheme the moment it is sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<swan_models::host::HostModel>,
    /// Threads that build and age the SSDs before the clock starts (0: one per core). How
    /// the run is set up, not what it computes: every SSD ages from its own seed, so the
    /// results do not depend on it, and it is neither printed nor read back.
    #[serde(skip)]
    pub setup_threads: usize,
}

/// An array's zoned members ([`crate::zoned_array`]): the drive, and how a segment is laid
/// over its zones.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ZonedSpec {
    pub ssd: swan_models::zns::ZnsConfig,
    /// Zones one segment spans on each SSD.
    pub zones_per_segment: u32,
    /// Blocks of a segment that go to one of its zones before the next zone takes over
    /// (with one zone per segment, the whole segment).
    pub stripe_blocks: u32,
    /// The command writes reach their zones with.
    #[serde(default)]
    pub primitive: swan_models::zns::ZonePrimitive,
    /// ZapRAID's group layout over Zone Append, when the host keeps one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups: Option<AppendGroups>,
}

/// How a bounded member queue ([`SimConfig::member_queue`]) picks the request it lets out
/// next, as DiskSim's `Scheduling policy` does for its per-device queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum QueueOrder {
    /// DiskSim's CYCLE_LBN (policy 3, what the SSD extension's configurations set): the
    /// request starting at the lowest block at or after the last one let out, else, wrapping
    /// round, the lowest; equal blocks in arrival order.
    #[default]
    CycleLbn,
    /// First come, first served (DiskSim's FCFS, policy 1).
    Fcfs,
}

/// ZapRAID's group layout (APSys '23 and arXiv 2402.17963; its public code
/// `adslabcuhk/zapraid`, `Segment::Append` and `Segment::StateTransition`). A host that
/// appends learns where each block landed only when it completes, so ZapRAID confines the
/// appends of `stripes` consecutive stripes to that many blocks of each zone, where a
/// degraded read can search for a stripe by the ID each block carries. The next group
/// starts only once every append of the last one has completed, and each zone takes at
/// most `in_flight` appends at once: the stripes a segment may have in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppendGroups {
    /// Stripes in a group: blocks of one group in each zone (`groupSize`, 256 by default).
    pub stripes: u32,
    /// Appends one zone may have in flight (the segment's pool of 16 stripe contexts).
    pub in_flight: u32,
}

impl AppendGroups {
    /// ZapRAID's defaults, from its code: groups of 256 stripes, 16 stripes in flight.
    pub const ZAPRAID: AppendGroups = AppendGroups { stripes: 256, in_flight: 16 };
}

impl ZonedSpec {
    /// Each segment one zone.
    pub fn one_zone_per_segment(ssd: swan_models::zns::ZnsConfig) -> Self {
        Self { ssd, zones_per_segment: 1, stripe_blocks: 1, primitive: Default::default(), groups: None }
    }
}

impl SimConfig {
    /// A run of `array` over fresh SSDs like `ssd` under `workload`, everything else at its
    /// plain default: no network cap, no host model, no ageing, no trace, no GGC, reads by the
    /// default rules, 1 s intervals, seed 1, measured from the start, stopped by nothing but
    /// the workload or a 600 s stall. Callers set what their run differs in.
    pub fn new(array: ArraySpec, ssd: SsdConfig, workload: WorkloadSpec) -> SimConfig {
        SimConfig {
            array,
            ssd,
            network_mbps: 0,
            workload,
            stop: StopRule { sim_seconds: None, write_bytes: None },
            interval_ms: 1000,
            seed: 1,
            age_fraction: 0.0,
            stall_limit_s: 600.0,
            trace: None,
            fill_first: false,
            ggc: None,
            timeline: None,
            measure_from_s: 0.0,
            age_spread: 0.0,
            prefill: None,
            ssd_variation: Variation::default(),
            reads: super::ReadRules::default(),
            reads_overtake_writes: false,
            gc_in_front_end: false,
            fabric: None,
            hba_bus: None,
            member_queue: None,
            member_queue_order: QueueOrder::default(),
            zoned: None,
            host: None,
            setup_threads: 0,
        }
    }

    /// The scheme's name in reports: the GGC policy's when the array coordinates GC.
    pub fn scheme_label(&self) -> String {
        match &self.ggc {
            Some(g) => {
                let target = g.force_target.map(|t| format!("@{}%", t * 100.0)).unwrap_or_default();
                let bound = g.force_victims.map(|v| format!("/{v}v")).unwrap_or_default();
                format!("{}{target}{bound}", g.policy.scheme_name())
            }
            // ZapRAID is Log-RAID5 whose appends keep its group layout.
            None if self.zoned.as_ref().is_some_and(|z| z.groups.is_some())
                && self.array.kind == SchemeKind::LogRaid(RaidLevel::Raid5)
                && !self.array.tuning.partial_parity_log =>
            {
                "zapraid".into()
            }
            None => self.array.label(),
        }
    }
}

#[derive(Debug, Error)]
pub enum SimError {
    #[error("invalid array: {0}")]
    Geometry(#[from] swan_core::geometry::GeometryError),
    // The errors below that a prefix introduces are part of the message, not its cause: shown
    // with or without the chain of causes, the text is the same.
    #[error("invalid SSD model: {0}")]
    Ssd(swan_models::ssd::SsdConfigError),
    #[error("invalid workload: {0}")]
    Workload(crate::workload::WorkloadError),
    #[error("invalid run: {0}")]
    Config(String),
    #[error("invalid run: {0}")]
    Arrival(crate::workload::ArrivalError),
    /// The run's GC settings, refused by the scheme.
    #[error("invalid run: {0}")]
    GcSetting(swan_core::scheme::GcSettingError),
    #[error("invalid run: {0}")]
    Ggc(crate::ggc::GgcDriverError),
    #[error("invalid run: {0}")]
    Variation(swan_models::ssd::VariationError),
    #[error("invalid run: {0}")]
    Host(swan_models::host::HostModelError),
    #[error("invalid run: {0}")]
    Prefill(crate::prefill::PrefillError),
    #[error(transparent)]
    Source(#[from] crate::source::SourceError),
    /// A trace run's trace could not be opened or checked before the run.
    #[error(transparent)]
    Trace(#[from] crate::replay::ReplayError),
    /// Recording the members' traces failed ([`crate::member_trace`]).
    #[error("recording the members' I/O: {0}")]
    Recorder(crate::member_trace::RecordError),
    #[error("the array stalled: no user request completed for {seconds} simulated seconds at t = {at_s:.1} s ({stalled} requests waiting for free space); GC cannot keep up or cannot make progress")]
    Stalled { seconds: f64, at_s: f64, stalled: usize },
}

impl From<crate::fabric_array::spec::FabricRunError> for SimError {
    fn from(e: crate::fabric_array::spec::FabricRunError) -> Self {
        SimError::Config(e.0)
    }
}

/// The run's own settings (reporting interval, aging, measurement start), refused before
/// any SSD is built.
pub(super) fn check_run_settings(cfg: &SimConfig) -> Result<(), SimError> {
    if cfg.interval_ms == 0 {
        return Err(SimError::Config("the reporting interval must be at least 1 ms".into()));
    }
    if !(0.0..1.0).contains(&cfg.age_fraction) {
        return Err(SimError::Config(format!("aging fraction must be within 0..1, got {}", cfg.age_fraction)));
    }
    if !(0.0..=1.0).contains(&cfg.age_spread) {
        return Err(SimError::Config(format!("age spread must be within 0..1, got {}", cfg.age_spread)));
    }
    cfg.ssd_variation.validate().map_err(SimError::Variation)?;
    if let Some(f) = &cfg.fabric {
        check_fabric_settings(cfg, &f.preset)?;
        if cfg.hba_bus.is_some() {
            return Err(SimError::Config(
                "a shared HBA bus connects SSD members; a fabric's clusters have their own links".into(),
            ));
        }
    }
    if let Some(z) = &cfg.zoned {
        check_zoned_settings(cfg, &z.ssd.name)?;
    }
    match (cfg.member_queue, cfg.hba_bus) {
        (Some(0), _) => return Err(SimError::Config("a member queue must let at least one operation through".into())),
        (Some(_), None) => {
            return Err(SimError::Config(
                "a member queue bound is DiskSim's per-device queue, modelled behind its HBA bus (--hba-bus)".into(),
            ))
        }
        _ => {}
    }
    if !(cfg.measure_from_s.is_finite() && cfg.measure_from_s >= 0.0) {
        return Err(SimError::Config(format!("measurement start must be ≥ 0 s, got {}", cfg.measure_from_s)));
    }
    if cfg.reads.parity_min_gain_us.is_some() && !cfg.array.kind.is_log_structured() {
        return Err(SimError::Config(format!(
            "reads around a busy SSD (--parity-reads) are a log-structured scheme's: {} has none",
            cfg.array.kind
        )));
    }
    if cfg.reads.parity_min_gain_us.is_some() && cfg.array.kind.raid() == swan_core::geometry::RaidLevel::Raid0 {
        return Err(SimError::Config(format!(
            "reads around a busy SSD (--parity-reads) rebuild a block from its row's parity: {} has no parity",
            cfg.array.kind
        )));
    }
    if cfg.gc_in_front_end && !matches!(cfg.array.kind, swan_core::scheme::SchemeKind::Swan(_)) {
        return Err(SimError::Config(format!(
            "GC in the front-end (--gc-in-front-end on) is an experiment on SWAN's R-groups: {} has no front-end",
            cfg.array.kind
        )));
    }
    if cfg.reads_overtake_writes {
        if !matches!(cfg.array.kind, swan_core::scheme::SchemeKind::Swan(_)) {
            return Err(SimError::Config(format!(
                "reads overtaking user writes (--reads-overtake-writes on) is an experiment on SWAN's read priority: {} has none",
                cfg.array.kind
            )));
        }
        if !cfg.reads.priority {
            return Err(SimError::Config(
                "reads overtaking user writes (--reads-overtake-writes on) needs SWAN's read priority (--read-priority on)"
                    .into(),
            ));
        }
    }
    Ok(())
}

/// What a zoned SSD cannot be asked for: overwrites, and the conventional SSD's own GC,
/// filling and aging (it has no FTL).
fn check_zoned_settings(cfg: &SimConfig, name: &str) -> Result<(), SimError> {
    let refuse = |what: String| Err(SimError::Config(format!("zoned SSDs ({name}): {what}")));
    if !cfg.array.kind.is_log_structured() {
        return refuse(format!(
            "{} updates blocks in place, and a zone takes writes only at its write pointer: use a log-structured scheme (lograid0|lograid4|lograid5, swan0|swan4|swan5)",
            cfg.array.kind
        ));
    }
    if !cfg.array.tuning.zoned_members {
        return refuse("the array must write each member in block order (ArraySpec tuning.zoned_members)".into());
    }
    if cfg.array.tuning.partial_parity_log && cfg.array.kind.raid() == swan_core::geometry::RaidLevel::Raid0 {
        return refuse(format!("a partial-parity log (RAIZN's) logs parity: {} has none", cfg.array.kind));
    }
    if cfg.ggc.is_some() {
        return refuse(
            "Harmonia's coordinated GC (--scheme harmonia-*) coordinates the SSDs' own GC, which zoned SSDs do not run"
                .into(),
        );
    }
    if cfg.fill_first || cfg.age_fraction > 0.0 {
        return refuse("filling or aging the SSDs (--fill, --age) shapes an FTL's mapping, which zoned SSDs do not have: use --prefill for the array's steady state".into());
    }
    let v = &cfg.ssd_variation;
    if v.speed_spread != 0.0 || v.slow_fraction != 0.0 {
        return refuse(
            "SSD-to-SSD variation (--ssd-speed-spread, --ssd-slow-fraction) is modelled for conventional SSDs only"
                .into(),
        );
    }
    if cfg.fabric.is_some() || cfg.hba_bus.is_some() {
        return refuse("members behind a fabric or a shared HBA bus are conventional SSDs or clusters".into());
    }
    Ok(())
}

/// Settings that shape SSD members and mean nothing for clusters behind a fabric.
fn check_fabric_settings(cfg: &SimConfig, preset: &str) -> Result<(), SimError> {
    let refuse =
        |what: &str| Err(SimError::Config(format!("--fabric {preset}: {what} is for SSD members, not clusters")));
    if cfg.ggc.is_some() {
        return refuse("Harmonia's coordinated GC (--scheme harmonia-*)");
    }
    if cfg.fill_first || cfg.age_fraction > 0.0 {
        return refuse("filling or aging the SSDs (--fill, --age; a cluster's FIMMs age under --fimm-gc)");
    }
    let v = &cfg.ssd_variation;
    if v.speed_spread != 0.0 || v.slow_fraction != 0.0 {
        return refuse("SSD-to-SSD variation (--ssd-speed-spread, --ssd-slow-fraction)");
    }
    Ok(())
}
