//! The papers' experiments as run configurations, at a chosen scale.
//!
//! Each function returns the runs of one figure. Scale shrinks every SSD's capacity while
//! keeping the paper's proportions: the SSD model's timing and over-provisioning, the
//! aging fraction, the disk utilization, request size and the footprint in multiples of
//! the array's capacity. Nothing here runs anything.

use swan_core::geometry::RaidLevel;
use swan_core::ggc::{GgcConfig, GgcPolicy};
use swan_core::scheme::{ArraySpec, SchemeKind};
use swan_core::victim::VictimPolicy;
use swan_models::ssd::{self, SsdConfig};
use swan_sim::engine::{SimConfig, StopRule};
use swan_sim::ggc::TimelineWindow;
use swan_sim::prefill::Prefill;
pub use swan_sim::runs::{aligned_segment_rows, interval_ms, random_writes, run_config, sata_ssd, spare_volume};
use swan_sim::workload::{hpc, Pattern, WorkloadSpec};

/// How big a reproduction is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scale {
    /// Capacity of each modelled SSD in GiB (the paper's SSDs hold 120 GB).
    pub ssd_gib: f64,
    /// User bytes written, in multiples of the array's raw capacity (the paper: ≈ 12 TB on ≈ 1 TB).
    pub footprint: f64,
}

impl Scale {
    /// The default main job: done in well under two minutes on two cores.
    pub const QUICK: Scale = Scale { ssd_gib: 0.5, footprint: 10.0 };
    /// Larger reproductions for the checked-in reference outputs.
    pub const FULL: Scale = Scale { ssd_gib: 4.0, footprint: 12.0 };
}

/// SWAN Fig. 4(a) / 5 / 6 / 7: RAID0, Log-RAID0 and SWAN0 (4R-2SSD) on 8 SSDs aged to
/// 60 %, 8 KiB random writes over 60 % of the capacity — first as the paper ran them (fio
/// on the host, no network), then behind a network interface as fast as SWAN's front-end
/// R-group (2 SSDs' sustained write bandwidth, 800 MB/s), which is how §3.5 sizes an array.
pub fn fig5(scale: Scale, seed: u64) -> Vec<SimConfig> {
    let ssd = sata_ssd(scale.ssd_gib, "sata850pro");
    let mut runs = Vec::new();
    for network_mbps in [0, FIG5_NETWORK_MBPS] {
        for (kind, g, n) in [
            (SchemeKind::Raid(RaidLevel::Raid0), 1, 8),
            (SchemeKind::LogRaid(RaidLevel::Raid0), 1, 8),
            (SchemeKind::Swan(RaidLevel::Raid0), 4, 2),
        ] {
            let mut cfg = run_config(kind, g, n, ssd.clone(), random_writes(64), 0.6, 0.6, scale.footprint, seed);
            cfg.network_mbps = network_mbps;
            runs.push(cfg);
        }
    }
    runs
}

/// The network interface of the capped Fig. 5 runs: the front-end R-group's two SSDs.
pub const FIG5_NETWORK_MBPS: u64 = 800;

/// SWAN Fig. 4(b): Log-RAID0 and SWAN0 with 3, 6 and 9 SSDs (3R-1SSD, 3R-2SSD, 3R-3SSD).
pub fn fig4b(scale: Scale, seed: u64) -> Vec<SimConfig> {
    let ssd = sata_ssd(scale.ssd_gib, "sata850pro");
    let mut runs = Vec::new();
    for per_group in 1..=3 {
        let n = 3 * per_group;
        runs.push(run_config(
            SchemeKind::LogRaid(RaidLevel::Raid0),
            1,
            n,
            ssd.clone(),
            random_writes(8 * n),
            0.6,
            0.6,
            scale.footprint,
            seed,
        ));
        runs.push(run_config(
            SchemeKind::Swan(RaidLevel::Raid0),
            3,
            per_group,
            ssd.clone(),
            random_writes(8 * n),
            0.6,
            0.6,
            scale.footprint,
            seed,
        ));
    }
    runs
}

/// SWAN Fig. 12: SSD-internal latency of SWAN0 and RAID0 on six open-channel SSDs under
/// random reads and writes (fio randrw, 50 % reads, 8 KiB).
/// The open-channel preset's 1 MiB blocks on 32 units need ≥ 4 GiB before its GC reserve
/// leaves any over-provisioning, so this figure never runs smaller.
pub fn fig12(scale: Scale, seed: u64) -> Vec<SimConfig> {
    let gib = scale.ssd_gib.max(4.0);
    let ssd = ssd::preset("openchannel").expect("built-in preset").with_user_pages((gib * 262_144.0) as u64);
    let workload = WorkloadSpec { pattern: Pattern::RandRw, read_fraction: 0.5, ..random_writes(48) };
    [(SchemeKind::Raid(RaidLevel::Raid0), 1, 6), (SchemeKind::Swan(RaidLevel::Raid0), 3, 2)]
        .into_iter()
        .map(|(kind, g, n)| {
            run_config(kind, g, n, ssd.clone(), workload.clone(), 0.6, 0.6, scale.footprint / 2.0, seed)
        })
        .collect()
}

/// SWAN §6, simpler SSDs: SWAN0 and RAID0 over block-level-FTL SSDs (and the page-level
/// FTL for reference). Segments are one superblock per SSD (an erase block on every die),
/// so SWAN's writes and TRIMs line up with what a block-mapped FTL handles without merges.
pub fn simple_ssd(scale: Scale, seed: u64) -> Vec<SimConfig> {
    let mut runs = Vec::new();
    for preset in ["sata850pro-blockftl", "sata850pro"] {
        let ssd = sata_ssd(scale.ssd_gib, preset);
        for (kind, g, n) in [(SchemeKind::Raid(RaidLevel::Raid0), 1, 8), (SchemeKind::Swan(RaidLevel::Raid0), 4, 2)] {
            runs.push(run_config(kind, g, n, ssd.clone(), random_writes(64), 0.6, 0.6, scale.footprint / 2.0, seed));
        }
    }
    // §6's smaller over-provisioning: the 850 PRO model's 6.7 % (the low end of the paper's
    // "6.7 % to 28 %") cut to 4.5 %.
    let mut lean = sata_ssd(scale.ssd_gib, "sata850pro");
    lean.over_provisioning = SMALL_OP;
    lean.name = format!("sata850pro-op{}", SMALL_OP);
    for (kind, g, n) in [(SchemeKind::Raid(RaidLevel::Raid0), 1, 8), (SchemeKind::Swan(RaidLevel::Raid0), 4, 2)] {
        runs.push(run_config(kind, g, n, lean.clone(), random_writes(64), 0.6, 0.6, scale.footprint / 2.0, seed));
    }
    // The same lean SWAN0 keeping a whole R-group's segments free and trimmed (its GC target;
    // the default is a quarter of them), so the SSDs need not collect before the TRIMs come.
    let mut ahead = runs.last().expect("the lean SWAN0 run").clone();
    ahead.array.tuning.swan_gc_target = Some(lean.user_pages / u64::from(ahead.array.segment_rows));
    runs.push(ahead);
    // §4.2: the paper's 1 MiB segments, an eighth of the model's erase stripe.
    let mut small = run_config(
        SchemeKind::Swan(RaidLevel::Raid0),
        4,
        2,
        sata_ssd(scale.ssd_gib, "sata850pro"),
        random_writes(64),
        0.6,
        0.6,
        scale.footprint / 2.0,
        seed,
    );
    small.array.segment_rows = PAPER_SEGMENT_ROWS;
    runs.push(small);
    runs
}

/// §6: the over-provisioning of the lean SSDs `simple_ssd` runs SWAN0 and RAID0 on: the least
/// with which the model's 0.5 GiB SSD (16 dies, a reserve of 34 blocks) can still collect.
pub const SMALL_OP: f64 = 0.045;

/// §4.2: the paper's segment, 1 MiB per SSD in 4 KiB blocks.
pub const PAPER_SEGMENT_ROWS: u32 = 256;

/// Harmonia's array schemes: in-place RAID0 with uncoordinated SSD GC (the paper's
/// baseline), RAID0 under each GGC policy, and — a comparison none of the papers made —
/// SWAN0 and Log-RAID0 on the same SSDs and workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HarmoniaScheme {
    Baseline,
    Ggc(GgcPolicy),
    Swan0,
    LogRaid0,
}

impl HarmoniaScheme {
    pub const ALL: [HarmoniaScheme; 6] = [
        HarmoniaScheme::Baseline,
        HarmoniaScheme::Ggc(GgcPolicy::Reactive),
        HarmoniaScheme::Ggc(GgcPolicy::ProactiveSoftLimit),
        HarmoniaScheme::Ggc(GgcPolicy::ProactiveIdle),
        HarmoniaScheme::Swan0,
        HarmoniaScheme::LogRaid0,
    ];
}

/// How big a Harmonia reproduction is, and how its SSDs are warmed up.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HarmoniaScale {
    /// User capacity of each SSD in GiB (Table IX: 32 GB raw, 85 % of it user-visible).
    pub ssd_gib: f64,
    /// Simulated seconds of workload, and the first seconds left out of the latencies.
    pub sim_s: f64,
    pub measure_from_s: f64,
    /// After the fill, the fraction of every SSD overwritten at random, untimed.
    pub age: f64,
}

impl HarmoniaScale {
    /// The paper's warm-up (§V-B: "fill the entire space on each SSD with valid data") on
    /// Table IX's SSD at its full size, then 600 simulated seconds, all measured. The
    /// SSDs' GC starts once each element's 15 % spare is down to 5 %: after about 130 s of
    /// HPC(W); the run then collects for about 470 s. The paper gives no run length.
    pub const DEFAULT: HarmoniaScale = HarmoniaScale { ssd_gib: 27.2, sim_s: 600.0, measure_from_s: 0.0, age: 0.0 };
    /// The paper's warm-up and 1,800 simulated seconds.
    pub const LONG: HarmoniaScale = HarmoniaScale { ssd_gib: 27.2, sim_s: 1800.0, measure_from_s: 0.0, age: 0.0 };
    /// swan's earlier warm-up: the fill, then 90 % of every SSD overwritten at random, so
    /// GC is in its steady state from the first request; 30 s from 3 s on. Every request
    /// then meets a collecting element, which makes the baseline slow and even (see
    /// `harmonia-warmup`).
    pub const STEADY: HarmoniaScale = HarmoniaScale { ssd_gib: 27.2, sim_s: 30.0, measure_from_s: 3.0, age: 0.9 };

    /// Table IX's SSD with this scale's capacity (the preset itself at full size).
    pub fn ssd(&self) -> SsdConfig {
        let full = ssd::preset("harmonia").expect("built-in preset");
        let pages = (self.ssd_gib * 262_144.0) as u64;
        if pages >= full.user_pages {
            full
        } else {
            full.with_user_pages(pages)
        }
    }
}

/// Spare space of SWAN0 and Log-RAID0 in the Harmonia runs, as a fraction of the payload
/// their segments hold: the share of raw flash the SSDs keep for their own GC (Table IX,
/// 15 %). A log that TRIMs whole erase-block-aligned segments leaves its SSDs nothing to
/// copy, so their over-provisioning sits idle and the log's GC works in the array's spare
/// alone; by default that is a few segments per R-group (under 1 % at 27 GiB SSDs), and with
/// a full volume greedy GC under uniform random writes would move about 1 / (2 × spare), some
/// 70 valid blocks per block written (each victim nearly all valid). With the same
/// 15 % at the array level the log's GC works with what the SSDs' GC works with under RAID0
/// — at the price of exposing 85 % of RAID0's volume.
pub const HARMONIA_LOG_SPARE: f64 = 0.15;

/// One Harmonia run: `scheme` over `ssds` SSDs under HPC(W) or HPC(R) (`read_fraction`)
/// at `iops`. RAID0 stripes 4 KiB units over every SSD (Table VIII). Every SSD is filled
/// with valid data first, as the paper warms up, then aged as `scale` says. SWAN0 uses
/// R-groups of two SSDs. The log-structured schemes TRIM their free space when built, so
/// the SSDs' fill does not survive for them: they are pre-filled instead, untimed
/// ([`Prefill::STEADY`]: the volume written whole and overwritten at random), and keep
/// [`HARMONIA_LOG_SPARE`] of their space spare, so their array GC is in its steady state
/// when the run starts, as the SSDs' GC is under RAID0.
pub fn harmonia_run(
    scheme: HarmoniaScheme,
    ssds: u32,
    read_fraction: f64,
    iops: f64,
    scale: HarmoniaScale,
    seed: u64,
) -> SimConfig {
    let ssd = scale.ssd();
    let (kind, rgroups, per_group) = match scheme {
        HarmoniaScheme::Baseline | HarmoniaScheme::Ggc(_) => (SchemeKind::Raid(RaidLevel::Raid0), 1, ssds),
        HarmoniaScheme::Swan0 => (SchemeKind::Swan(RaidLevel::Raid0), (ssds / 2).max(1), if ssds >= 2 { 2 } else { 1 }),
        HarmoniaScheme::LogRaid0 => (SchemeKind::LogRaid(RaidLevel::Raid0), 1, ssds),
    };
    let mut array = ArraySpec {
        kind,
        rgroups,
        ssds_per_rgroup: per_group,
        member_blocks: ssd.user_pages,
        member_offset: 0,
        segment_rows: aligned_segment_rows(&ssd),
        chunk_blocks: 1,
        victim: VictimPolicy::Greedy,
        tuning: Default::default(),
    };
    let log = kind.is_log_structured();
    if log {
        array.tuning.volume_blocks = Some(spare_volume(&array, HARMONIA_LOG_SPARE));
    }
    let volume = array.build().map(|s| s.volume_blocks()).unwrap_or(0);
    let interval = interval_ms(&ssd).min(1000);
    SimConfig {
        ggc: match scheme {
            HarmoniaScheme::Ggc(p) => Some(GgcConfig::new(p)),
            _ => None,
        },
        stop: StopRule { sim_seconds: Some(scale.sim_s), write_bytes: None },
        interval_ms: interval,
        seed,
        age_fraction: scale.age,
        stall_limit_s: 60.0,
        fill_first: true,
        measure_from_s: scale.measure_from_s,
        prefill: log.then_some(Prefill::STEADY),
        // The paper's simulator connects its SSDs as DiskSim does: one shared HBA bus.
        hba_bus: Some(swan_models::hba::HbaBusConfig::DISKSIM_PCIE_X8),
        ..SimConfig::new(array, ssd, hpc::workload(read_fraction, iops, volume))
    }
}

/// A higher forced-GC target tried beside the default (just above the soft limit): halfway
/// from the soft limit (6 %) to one more per cent.
pub const HARMONIA_ALT_TARGET: f64 = 0.065;

/// Harmonia Fig. 6 / 10 and Table X: HPC(W) and HPC(R) on 8 SSDs, every scheme, and the
/// reactive and idle policies again with [`HARMONIA_ALT_TARGET`].
pub fn harmonia_hpc(scale: HarmoniaScale, seed: u64) -> Vec<SimConfig> {
    let mut runs = Vec::new();
    for reads in [hpc::READ_FRACTION_W, hpc::READ_FRACTION_R] {
        for scheme in HarmoniaScheme::ALL {
            runs.push(harmonia_run(scheme, 8, reads, hpc::IOPS, scale, seed));
        }
        for policy in [GgcPolicy::Reactive, GgcPolicy::ProactiveIdle] {
            let mut cfg = harmonia_run(HarmoniaScheme::Ggc(policy), 8, reads, hpc::IOPS, scale, seed);
            if let Some(g) = cfg.ggc.as_mut() {
                g.force_target = Some(HARMONIA_ALT_TARGET);
            }
            runs.push(cfg);
        }
    }
    runs
}

/// Forced-GC bounds (victims per GC domain per cycle) swept by [`harmonia_bound`]; `None`
/// is no bound. The paper names none.
pub const HARMONIA_BOUNDS: [Option<u32>; 6] = [Some(1), Some(2), Some(4), Some(8), Some(16), None];

/// How the forced-GC bound moves Harmonia's claims: HPC(W) and HPC(R) on 8 SSDs, and
/// HPC(W) on 2 and 18 (Fig. 8's ends), baseline and reactive GGC at each bound.
pub fn harmonia_bound(scale: HarmoniaScale, seed: u64) -> Vec<SimConfig> {
    let mut runs = Vec::new();
    let cells =
        [(8, hpc::READ_FRACTION_W), (8, hpc::READ_FRACTION_R), (2, hpc::READ_FRACTION_W), (18, hpc::READ_FRACTION_W)];
    for (ssds, reads) in cells {
        runs.push(harmonia_run(HarmoniaScheme::Baseline, ssds, reads, hpc::IOPS, scale, seed));
        for bound in HARMONIA_BOUNDS {
            let mut cfg = harmonia_run(HarmoniaScheme::Ggc(GgcPolicy::Reactive), ssds, reads, hpc::IOPS, scale, seed);
            if let Some(g) = cfg.ggc.as_mut() {
                g.force_victims = bound;
            }
            runs.push(cfg);
        }
    }
    runs
}

/// Multiples of Table X's 476.5 IOPS swept in Fig. 7 (the paper's axis values are not
/// given in its text; swan sweeps from half to eight times the rate).
pub const HARMONIA_FIG7_RATES: [f64; 5] = [0.5, 1.0, 2.0, 4.0, 8.0];

/// Harmonia Fig. 7: baseline and reactive GGC against arrival rate, HPC(W) and HPC(R).
/// Above Table X's rate a run is shorter in proportion, so that every rate writes about
/// the same volume: after the paper's fill, that volume is what brings the SSDs into GC,
/// and a fixed length would leave the faster runs collecting for most of their time.
pub fn harmonia_fig7(scale: HarmoniaScale, seed: u64) -> Vec<SimConfig> {
    let mut runs = Vec::new();
    for reads in [hpc::READ_FRACTION_W, hpc::READ_FRACTION_R] {
        for m in HARMONIA_FIG7_RATES {
            let k = m.max(1.0);
            let sc = HarmoniaScale { sim_s: scale.sim_s / k, measure_from_s: scale.measure_from_s / k, ..scale };
            for scheme in [HarmoniaScheme::Baseline, HarmoniaScheme::Ggc(GgcPolicy::Reactive)] {
                runs.push(harmonia_run(scheme, 8, reads, hpc::IOPS * m, sc, seed));
            }
        }
    }
    runs
}

/// SSD counts of Harmonia Fig. 8.
pub const HARMONIA_FIG8_SSDS: [u32; 9] = [2, 4, 6, 8, 10, 12, 14, 16, 18];

/// Simulated seconds of a before-GC run: short enough that no element of a filled SSD
/// reaches its low watermark even at 2 SSDs (about 30 s of HPC(W) there).
pub const HARMONIA_BEFORE_GC_S: f64 = 20.0;

/// Whether `cfg` is a before-GC run of [`harmonia_fig8`].
pub fn is_before_gc(cfg: &SimConfig) -> bool {
    cfg.stop.sim_seconds == Some(HARMONIA_BEFORE_GC_S) && cfg.ggc.is_none() && cfg.age_fraction == 0.0
}

/// Harmonia Fig. 8: baseline and reactive GGC under HPC(W) on 2 … 18 SSDs, and at each
/// size the baseline's first [`HARMONIA_BEFORE_GC_S`] seconds, before any GC: the response
/// time no GC policy can go below, against which what GC adds under each policy is measured.
pub fn harmonia_fig8(scale: HarmoniaScale, seed: u64) -> Vec<SimConfig> {
    let mut runs = Vec::new();
    for n in HARMONIA_FIG8_SSDS {
        for scheme in [HarmoniaScheme::Baseline, HarmoniaScheme::Ggc(GgcPolicy::Reactive)] {
            runs.push(harmonia_run(scheme, n, hpc::READ_FRACTION_W, hpc::IOPS, scale, seed));
        }
        let before = HarmoniaScale { sim_s: HARMONIA_BEFORE_GC_S, measure_from_s: 0.0, age: 0.0, ..scale };
        runs.push(harmonia_run(HarmoniaScheme::Baseline, n, hpc::READ_FRACTION_W, hpc::IOPS, before, seed));
    }
    runs
}

/// Harmonia Fig. 9: each SSD's request latencies over a 300 ms window of HPC(W), baseline
/// and reactive GGC, 8 SSDs. The window opens once the SSDs collect: halfway through the
/// run (300 s with the paper's warm-up), or 0.5 s after measurement starts on SSDs warmed
/// to their steady state.
pub fn harmonia_fig9(scale: HarmoniaScale, seed: u64) -> Vec<SimConfig> {
    let start_s = if scale.age > 0.0 { scale.measure_from_s + 0.5 } else { scale.sim_s / 2.0 };
    [HarmoniaScheme::Baseline, HarmoniaScheme::Ggc(GgcPolicy::Reactive)]
        .into_iter()
        .map(|scheme| {
            let mut cfg = harmonia_run(scheme, 8, hpc::READ_FRACTION_W, hpc::IOPS, scale, seed);
            cfg.timeline = Some(TimelineWindow { start_s, len_s: 0.3 });
            cfg.stop.sim_seconds = Some(start_s + 1.5);
            cfg
        })
        .collect()
}

/// What the warm-up does to Harmonia's claims: baseline and reactive GGC on HPC(W) and
/// HPC(R), 8 SSDs, under the paper's warm-up (`scale`) and under [`HarmoniaScale::STEADY`].
pub fn harmonia_warmup(scale: HarmoniaScale, seed: u64) -> Vec<SimConfig> {
    let steady = HarmoniaScale { ssd_gib: scale.ssd_gib, ..HarmoniaScale::STEADY };
    let mut runs = Vec::new();
    for sc in [scale, steady] {
        for reads in [hpc::READ_FRACTION_W, hpc::READ_FRACTION_R] {
            for scheme in [HarmoniaScheme::Baseline, HarmoniaScheme::Ggc(GgcPolicy::Reactive)] {
                runs.push(harmonia_run(scheme, 8, reads, hpc::IOPS, sc, seed));
            }
        }
    }
    runs
}

/// Run lengths (simulated s) `harmonia-length` measures after the paper's fill: GC starts
/// 116–142 s into HPC(W), so the shortest sees little of it and the longest mostly GC.
pub const HARMONIA_LENGTHS_FILL_S: [f64; 4] = [150.0, 300.0, 600.0, 1200.0];
/// And after the steady-state warm-up (GC from the first request; measured from 3 s).
pub const HARMONIA_LENGTHS_STEADY_S: [f64; 2] = [30.0, 150.0];

/// The standard deviation's cut against run length, warm-up and array layer: baseline and
/// reactive GGC on HPC(W), 8 SSDs, after the paper's fill for each of
/// [`HARMONIA_LENGTHS_FILL_S`] and after [`HarmoniaScale::STEADY`]'s ageing for each of
/// [`HARMONIA_LENGTHS_STEADY_S`], each with the SSDs on their own links and on DiskSim's
/// shared HBA bus.
pub fn harmonia_length(scale: HarmoniaScale, seed: u64) -> Vec<SimConfig> {
    let steady = HarmoniaScale { ssd_gib: scale.ssd_gib, ..HarmoniaScale::STEADY };
    let mut runs = Vec::new();
    let warmups = [(scale, &HARMONIA_LENGTHS_FILL_S[..]), (steady, &HARMONIA_LENGTHS_STEADY_S[..])];
    for bus in [None, Some(swan_models::hba::HbaBusConfig::DISKSIM_PCIE_X8)] {
        for (warm, lengths) in warmups {
            for &len in lengths {
                for scheme in [HarmoniaScheme::Baseline, HarmoniaScheme::Ggc(GgcPolicy::Reactive)] {
                    let sc = HarmoniaScale { sim_s: len, ..warm };
                    let mut cfg = harmonia_run(scheme, 8, hpc::READ_FRACTION_W, hpc::IOPS, sc, seed);
                    cfg.hba_bus = bus;
                    runs.push(cfg);
                }
            }
        }
    }
    runs
}

/// Harmonia §III's measured drives as swan's presets: SSD(M) and SSD(S) (Table I).
pub const HARMONIA_DRIVES: [&str; 2] = ["ultradrive-gx", "x25e"];
/// Table II / IV: the write shares §III sweeps, write-heaviest first as its tables print them.
pub const HARMONIA_DRIVES_WRITE_SHARES: [f64; 4] = [0.8, 0.6, 0.4, 0.2];
/// §III-E, Fig. 3, Table VI: the write share the width and RAID-level comparisons use.
pub const HARMONIA_DRIVES_WIDTH_SHARE: f64 = 0.6;
/// Table II: 64 requests outstanding at every width.
pub const HARMONIA_DRIVES_QD: u32 = 64;
/// Shallower host queues tried beside Table II's 64, to test what keeps the drives apart.
pub const HARMONIA_DRIVES_SHALLOW_QD: [u32; 2] = [1, 4];
/// Simulated seconds of a run, and the start of what is measured: the first seconds carry
/// the free blocks the warm-up left, at the fresh drive's rate.
pub const HARMONIA_DRIVES_RUN_S: f64 = 70.0;
pub const HARMONIA_DRIVES_FROM_S: f64 = 10.0;

/// One §III run: `members` drives of `preset` as in-place RAID `level` with Table III's
/// 256 KiB stripe unit, Table II's 64 closed-loop requests of 320 KiB per drive
/// ("313 KB" = 1.25 MB / 4; 1.25 MiB on 4 drives, 1.875 MiB on 6; the paper's example of
/// one drive taking two units of a 1.25 MB request reads its MB as MiB), `write_share` of
/// them writes. The paper gives neither the access pattern nor the drives' state, so both
/// ends are run: `Pattern::RandRw`, uniformly random over the whole volume after every
/// drive is filled and 95 % overwritten at random (GC in its steady state, as in a drive long
/// in service), and `Pattern::Rw`, fio's sequential mix, after a sequential fill alone.
#[allow(clippy::too_many_arguments)]
pub fn harmonia_drive_run(
    preset: &str,
    pattern: Pattern,
    level: RaidLevel,
    members: u32,
    write_share: f64,
    iodepth: u32,
    ssd_gib: f64,
    seed: u64,
) -> SimConfig {
    let ssd = sata_ssd(ssd_gib, preset);
    // 320 KiB per drive of the array, parity drives included, as Table II scales it.
    let request_blocks = 80 * members;
    let workload = WorkloadSpec {
        pattern,
        read_fraction: 1.0 - write_share,
        block_blocks: request_blocks,
        arrival: swan_sim::workload::Arrival::Closed { iodepth },
        ..WorkloadSpec::default()
    };
    let age = if pattern == Pattern::Rw { 0.0 } else { 0.95 };
    let mut cfg = run_config(SchemeKind::Raid(level), 1, members, ssd, workload, 1.0, age, 0.0, seed);
    cfg.array.chunk_blocks = 64;
    cfg.fill_first = true;
    cfg.stop = StopRule { sim_seconds: Some(HARMONIA_DRIVES_RUN_S), write_bytes: None };
    cfg.interval_ms = 1000;
    cfg.measure_from_s = HARMONIA_DRIVES_FROM_S;
    cfg
}

/// Harmonia §III (Tables IV–VII, Fig. 1–3) for both drives and both access patterns: one
/// drive at each write share; RAID-0 of 6 at each (Table V's RAID(A) and RAID(B)); RAID-0 of
/// 4 and RAID-5 of 6 at 60 % writes (Fig. 3, Table VI, Table VII); every cell on identical
/// drives and again on drives varied as Tail at Store measured them. Then, random only, 1 and
/// 6 identical drives at shallower host queues.
pub fn harmonia_drives(ssd_gib: f64, seed: u64) -> Vec<SimConfig> {
    let mut runs = Vec::new();
    for preset in HARMONIA_DRIVES {
        let mut cells = Vec::new();
        for share in HARMONIA_DRIVES_WRITE_SHARES {
            cells.push((RaidLevel::Raid0, 1, share));
            cells.push((RaidLevel::Raid0, 6, share));
        }
        cells.push((RaidLevel::Raid0, 4, HARMONIA_DRIVES_WIDTH_SHARE));
        cells.push((RaidLevel::Raid5, 6, HARMONIA_DRIVES_WIDTH_SHARE));
        for pattern in [Pattern::RandRw, Pattern::Rw] {
            for variation in [swan_models::ssd::Variation::default(), swan_models::ssd::Variation::TAIL_AT_STORE] {
                for &(level, n, share) in &cells {
                    let mut cfg =
                        harmonia_drive_run(preset, pattern, level, n, share, HARMONIA_DRIVES_QD, ssd_gib, seed);
                    cfg.ssd_variation = variation;
                    runs.push(cfg);
                }
            }
        }
        for qd in HARMONIA_DRIVES_SHALLOW_QD {
            for n in [1, 6] {
                let share = HARMONIA_DRIVES_WIDTH_SHARE;
                runs.push(harmonia_drive_run(preset, Pattern::RandRw, RaidLevel::Raid0, n, share, qd, ssd_gib, seed));
            }
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_measured_drive_runs_scale_table_iis_requests_and_warm_each_pattern_its_way() {
        let runs = harmonia_drives(1.0, 1);
        // Per drive: 10 cells × 2 patterns × 2 variations, and 4 shallow-queue runs.
        assert_eq!(runs.len(), 2 * (10 * 2 * 2 + 4));
        for cfg in &runs {
            let members = cfg.array.members();
            assert_eq!(cfg.workload.block_blocks, 80 * members, "320 KiB per drive");
            assert_eq!(cfg.array.chunk_blocks, 64, "Table III's 256 KiB stripe unit");
            assert!(cfg.fill_first);
            let random = cfg.workload.pattern == Pattern::RandRw;
            assert_eq!(cfg.age_fraction > 0.0, random, "only the random runs are aged");
            assert!(random || cfg.workload.pattern == Pattern::Rw);
        }
    }

    #[test]
    fn the_harmonia_runs_prefill_only_the_logs() {
        let scale = HarmoniaScale { sim_s: 1.0, ..HarmoniaScale::STEADY };
        for scheme in [HarmoniaScheme::Swan0, HarmoniaScheme::LogRaid0, HarmoniaScheme::Baseline] {
            let cfg = harmonia_run(scheme, 8, hpc::READ_FRACTION_W, hpc::IOPS, scale, 1);
            let log = cfg.array.kind.is_log_structured();
            assert_eq!(cfg.prefill.is_some(), log, "{scheme:?}");
            assert_eq!(cfg.array.tuning.volume_blocks.is_some(), log, "{scheme:?}");
        }
    }
}
