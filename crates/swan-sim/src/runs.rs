//! One run's configuration built from the few things an experiment varies: the SSD at a
//! size, a closed-loop random-write job, a scheme over so many SSDs aged so far, the volume
//! that keeps a share spare. The laboratory's experiments (`swan-lab`) and the simulator's
//! own tests build their runs from these. Nothing here runs anything.

use crate::engine::{SimConfig, StopRule};
use crate::workload::{Arrival, Distribution, Pattern, WorkloadSpec};
use swan_core::scheme::{ArraySpec, SchemeKind};
use swan_core::victim::VictimPolicy;
use swan_models::ssd::{self, SsdConfig};

/// The paper's SATA SSD at `gib` GiB.
pub fn sata_ssd(gib: f64, preset: &str) -> SsdConfig {
    let cfg = ssd::preset(preset).unwrap_or_else(|| panic!("built-in preset {preset} exists"));
    cfg.with_user_pages((gib * 262_144.0) as u64)
}

/// Segment rows that make one segment on an SSD exactly one erase block on each of its
/// parallel units ([`SsdConfig::erase_stripe_pages`]).
pub fn aligned_segment_rows(ssd: &SsdConfig) -> u32 {
    u32::try_from(ssd.erase_stripe_pages()).expect("an erase stripe of fewer than 2^32 pages")
}

/// The reporting interval, scaled with SSD capacity so a reduced-scale run shows what the
/// paper's 1 s intervals show on 120 GB SSDs: a front-end period spans many intervals
/// (8 GiB SSDs or more: 1 s; 0.5 GiB: 62 ms).
pub fn interval_ms(ssd: &SsdConfig) -> u64 {
    let gib = ssd.user_pages as f64 / 262_144.0;
    ((1000.0 * gib / 8.0) as u64).clamp(10, 1000)
}

/// A closed-loop 8 KiB random-write job (its region is set by [`run_config`]).
pub fn random_writes(iodepth: u32) -> WorkloadSpec {
    WorkloadSpec {
        pattern: Pattern::RandWrite,
        read_fraction: 0.0,
        block_blocks: 2,
        block_blocks_max: 0,
        region_start: 0,
        region_blocks: 0,
        distribution: Distribution::Uniform,
        arrival: Arrival::Closed { iodepth },
    }
}

/// One run: scheme `kind` as `rgroups` × `per_group` SSDs of `ssd`, aged to `age`,
/// with the workload's region set to `utilization` of the raw data capacity.
#[allow(clippy::too_many_arguments)]
pub fn run_config(
    kind: SchemeKind,
    rgroups: u32,
    per_group: u32,
    ssd: SsdConfig,
    mut workload: WorkloadSpec,
    utilization: f64,
    age: f64,
    footprint: f64,
    seed: u64,
) -> SimConfig {
    let member_blocks = ssd.user_pages;
    let members = u64::from(rgroups * per_group);
    let parity = u64::from(kind.raid().parity_members());
    let data_members = match kind {
        SchemeKind::Swan(_) => u64::from(rgroups) * (u64::from(per_group) - parity),
        _ => members - parity,
    };
    let raw_data_blocks = member_blocks * data_members;
    workload.region_blocks = (raw_data_blocks as f64 * utilization) as u64;
    let array = ArraySpec {
        kind,
        rgroups,
        ssds_per_rgroup: per_group,
        member_blocks,
        member_offset: 0,
        segment_rows: aligned_segment_rows(&ssd),
        chunk_blocks: 128,
        victim: VictimPolicy::Greedy,
        tuning: Default::default(),
    };
    SimConfig {
        stop: StopRule {
            sim_seconds: None,
            write_bytes: Some((footprint * (members * member_blocks * swan_core::BLOCK_BYTES) as f64) as u64),
        },
        interval_ms: interval_ms(&ssd),
        seed,
        age_fraction: age,
        ..SimConfig::new(array, ssd, workload)
    }
}

/// The volume of log-structured `array` that keeps `spare` of its segments' payload free
/// for GC (0 if the array cannot be built).
pub fn spare_volume(array: &ArraySpec, spare: f64) -> u64 {
    array.log_config().ok().flatten().map_or(0, |c| c.volume_for_spare(spare))
}
