//! The untimed pre-fill of a log-structured array (SWAN, Log-RAID): its whole volume
//! written with valid data and overwritten at random before the measured run starts.
//!
//! Why: a log-structured scheme formats by TRIMming every segment, so whatever fill the SSDs
//! were given underneath does not survive, and a run that starts from a formatted array
//! measures an empty log. Harmonia's HPC workloads write ≈ 6 GB in 30 s into a 200 GB
//! volume: the log never runs out of free segments, its GC never starts, and its response
//! times (0.1–0.8 ms) are those of an array with no GC at all — not comparable with RAID0
//! over SSDs that were filled and aged first. The pre-fill gives the log the state
//! Harmonia's warm-up gives the SSDs: full of valid data, with array GC choosing victims in
//! its steady state.
//!
//! How: the same scheme code the run uses ([`Scheme::submit`], [`Scheme::start_gc`],
//! [`Scheme::finish_gc`]) plans every write, GC job and TRIM, and each planned member write
//! and TRIM is applied to the SSD models' mapping without time ([`swan_models::ssd::Ssd::apply_untimed`], the
//! way `Ssd::fill_sequential` and `Ssd::age_random` warm an SSD up). A GC job finishes
//! the moment it starts, which is one legal ordering of the concurrent run (GC that always
//! keeps up); reads are not carried out, since nothing waits for them. It costs about a
//! microsecond of wall time per block written (≈ 170 s for a SWAN0 of eight 27 GiB SSDs,
//! GC moves included) and no simulated time; the driver
//! subtracts its counters and resets the SSDs' statistics, so nothing of it is measured.
//!
//! What is written ([`Prefill`]): random writes drawn, from their own seeded stream, with
//! the run's request sizes and address distribution over the whole volume — so the dead
//! blocks the measured run finds are spread the way its own writes spread them — then, in
//! order, every block they missed, then more random writes ([`run`] says why in that order).

use crate::members::Members;
use crate::workload::{Arrival, Generator, Pattern, WorkloadSpec};
use serde::{Deserialize, Serialize};
use swan_core::io::{IoKind, IoPlan};
use swan_core::scheme::{ArrayScheme, Counters, ReqOp, Request, RequestError, SchemeKind, Submitted};
use swan_models::{DevOp, DevOpKind};

/// Blocks per request when the pre-fill writes the blocks its random writes missed (1 MiB).
const HOLE_REQUEST_BLOCKS: u32 = 256;

/// How much a log-structured array is written before the measured run, in multiples of its
/// volume.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Prefill {
    /// Random writes into the empty log, before the blocks they missed are written.
    pub scatter: f64,
    /// Random writes after that, with every block of the volume valid.
    pub settle: f64,
}

impl Prefill {
    /// Two volumes scattered (86 % of the blocks written, GC running since the log first
    /// filled), the rest written in order, then half a volume at random. Already in the
    /// first half of the settling writes the victims GC picks are as full as they stay
    /// (`settle_victim_valid_fraction`: on a SWAN0 of 1 GiB SSDs, 0.82–0.83 in every eighth
    /// of a whole settling volume; of eight 27 GiB SSDs, 0.835 then 0.847, and Log-RAID0's
    /// 0.724 then 0.753, still creeping up; the test below checks the halves agree).
    pub const STEADY: Prefill = Prefill { scatter: 2.0, settle: 0.5 };
}

/// What the pre-fill did (reported with the run, never counted in its measurements).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PrefillReport {
    /// User blocks written: scattered, holes, settling.
    pub user_blocks: u64,
    /// Blocks the scattered writes missed, written in order.
    pub hole_blocks: u64,
    /// Valid blocks array GC moved, and victims it collected.
    pub gc_blocks_moved: u64,
    pub victims: u64,
    /// Mean valid fraction of the victims collected during the first and the second half
    /// of the settling writes: in steady state they agree, and the second is what GC is
    /// doing when measurement starts.
    pub settle_victim_valid_fraction: [Option<f64>; 2],
    /// Free segments left when the run starts.
    pub free_segments: u64,
}

/// The random writes of the pre-fill: `workload`'s request sizes and address distribution,
/// writes only, over the whole volume.
pub fn overwrite_spec(workload: &WorkloadSpec) -> WorkloadSpec {
    WorkloadSpec {
        pattern: Pattern::RandWrite,
        read_fraction: 0.0,
        region_start: 0,
        region_blocks: 0,
        arrival: Arrival::Closed { iodepth: 1 },
        ..workload.clone()
    }
}

/// Why the pre-fill could not run, or stopped.
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum PrefillError {
    #[error("the pre-fill is for log-structured schemes, not {kind}")]
    NotLogStructured { kind: SchemeKind },
    #[error("pre-fill writes must be ≥ 0 volumes, got {scatter} and {settle}")]
    Volumes { scatter: f64, settle: f64 },
    #[error(transparent)]
    Request(#[from] RequestError),
    #[error("the pre-fill stalled: no room for a {blocks}-block write and GC can free nothing")]
    Stalled { blocks: u32 },
}

/// Format `scheme`, then fill and overwrite its volume as `spec` says, applying every member
/// write and TRIM to `members` untimed; `random` draws the random writes.
///
/// Why scattered first and not in order: a volume written whole in order leaves every sealed
/// segment fully valid and the spare in the last front-end R-group. SWAN's GC then has too
/// few free back-end segments and no victim worth taking: each overwritten block makes one
/// almost-full victim, moved whole to gain one slot (SWAN0 on 1 GiB SSDs, 16 segments per
/// R-group: 60 blocks moved per block written over the first half volume). Writing the empty log at random
/// instead lets GC start the way it starts under the workload, on victims with dead blocks
/// to give.
pub fn run(
    scheme: &mut ArrayScheme,
    members: &mut impl Members,
    spec: Prefill,
    random: &mut Generator,
) -> Result<PrefillReport, PrefillError> {
    if !scheme.kind().is_log_structured() {
        return Err(PrefillError::NotLogStructured { kind: scheme.kind() });
    }
    let ok = |v: f64| v.is_finite() && v >= 0.0;
    if !(ok(spec.scatter) && ok(spec.settle)) {
        return Err(PrefillError::Volumes { scatter: spec.scatter, settle: spec.settle });
    }
    let mut w = Writer { scheme, members, plan: IoPlan::new() };
    w.scheme.format(&mut w.plan);
    w.apply();
    let start = w.scheme.counters().clone();
    let volume = w.scheme.volume_blocks();
    w.random_writes(random, (spec.scatter * volume as f64) as u64, None)?;
    let holes = w.fill_holes()?;
    let settle = (spec.settle * volume as f64) as u64;
    let settled = w.scheme.counters().clone();
    let mut half = None;
    w.random_writes(random, settle, Some((settle / 2, &mut half)))?;
    let end = w.scheme.counters();
    let done = end.since(&start);
    let half = half.unwrap_or_else(|| end.clone());
    let utilization =
        |c: Counters| (c.victims > 0).then(|| c.victim_valid_blocks as f64 / c.victim_payload_blocks as f64);
    Ok(PrefillReport {
        user_blocks: done.user_blocks_written,
        hole_blocks: holes,
        gc_blocks_moved: done.gc_blocks_moved,
        victims: done.victims,
        settle_victim_valid_fraction: [utilization(half.since(&settled)), utilization(end.since(&half))],
        free_segments: w.scheme.status().free_segments,
    })
}

/// The scheme and its members, with one plan reused for every step.
struct Writer<'a, M> {
    scheme: &'a mut ArrayScheme,
    members: &'a mut M,
    plan: IoPlan,
}

impl<M: Members> Writer<'_, M> {
    /// Carry out the plan's writes and TRIMs on the members, untimed.
    fn apply(&mut self) {
        for io in self.plan.ios() {
            let kind = match io.kind {
                IoKind::Write(_) => DevOpKind::Write,
                IoKind::Trim => DevOpKind::Trim,
                IoKind::Read(_) | IoKind::Flush => continue,
            };
            self.members.apply_untimed(io.member, DevOp { kind, block: io.block, count: io.count, class: io.class });
        }
    }

    /// Every GC job the scheme wants now, each finished at once; whether any ran.
    fn collect(&mut self) -> bool {
        let mut any = false;
        while let Some(job) = self.scheme.start_gc(&mut self.plan) {
            self.apply();
            self.scheme.finish_gc(job, &mut self.plan);
            self.apply();
            // Untimed, every sync point is already behind: deferred victims go back at once.
            if self.scheme.release_deferred(&mut self.plan) > 0 {
                self.apply();
            }
            any = true;
        }
        any
    }

    /// At least `blocks` blocks of random writes; with `mark`, a snapshot of the counters
    /// once `mark.0` blocks are written.
    fn random_writes(
        &mut self,
        random: &mut Generator,
        blocks: u64,
        mut mark: Option<(u64, &mut Option<Counters>)>,
    ) -> Result<(), PrefillError> {
        let mut written = 0;
        while written < blocks {
            if let Some((at, snap)) = mark.as_mut() {
                if snap.is_none() && written >= *at {
                    **snap = Some(self.scheme.counters().clone());
                }
            }
            let req = random.next_request();
            debug_assert_eq!(req.op, ReqOp::Write);
            self.write(req)?;
            written += u64::from(req.blocks);
        }
        Ok(())
    }

    /// Write, in order, every block of the volume no write has reached; returns how many.
    fn fill_holes(&mut self) -> Result<u64, PrefillError> {
        let volume = self.scheme.volume_blocks();
        let (mut lba, mut total) = (0, 0);
        while lba < volume {
            if self.scheme.locate(lba).is_some() {
                lba += 1;
                continue;
            }
            let mut n = 1;
            while n < HOLE_REQUEST_BLOCKS
                && lba + u64::from(n) < volume
                && self.scheme.locate(lba + u64::from(n)).is_none()
            {
                n += 1;
            }
            self.write(Request::new(ReqOp::Write, lba, n))?;
            lba += u64::from(n);
            total += u64::from(n);
        }
        Ok(total)
    }

    /// One user write, after GC has made room for it if it had to, and the GC it calls for.
    fn write(&mut self, req: Request) -> Result<(), PrefillError> {
        loop {
            match self.scheme.submit(&req, &mut self.plan)? {
                Submitted::Planned => break,
                Submitted::NoSpace if self.collect() => {}
                Submitted::NoSpace => return Err(PrefillError::Stalled { blocks: req.blocks }),
            }
        }
        self.apply();
        self.collect();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{Prefill, PrefillReport};
    use crate::engine::{Engine, SimConfig};
    use crate::runs::{run_config, sata_ssd, spare_volume};
    use crate::workload::hpc;
    use swan_core::geometry::RaidLevel;
    use swan_core::scheme::SchemeKind;

    const SPARE: f64 = 0.15;

    /// HPC(W) on `kind` over 8 quarter-GiB SSDs with 1 MiB segments (256 per SSD: enough
    /// segments for Log-RAID's watermarks to sit well inside a 15 % spare), pre-filled.
    fn small(kind: SchemeKind, seed: u64) -> SimConfig {
        let (g, n) = if matches!(kind, SchemeKind::Swan(_)) { (4, 2) } else { (1, 8) };
        let workload = hpc::workload(hpc::READ_FRACTION_W, hpc::IOPS, 0);
        let mut cfg = run_config(kind, g, n, sata_ssd(0.25, "sata850pro"), workload, 0.0, 0.0, 0.0, seed);
        cfg.array.segment_rows = 256;
        cfg.array.tuning.volume_blocks = Some(spare_volume(&cfg.array, SPARE));
        cfg.workload.region_blocks = 0;
        cfg.stop = crate::engine::StopRule { sim_seconds: Some(0.5), write_bytes: None };
        cfg.prefill = Some(Prefill::STEADY);
        cfg
    }

    fn report(e: &Engine) -> PrefillReport {
        e.prefill_report().cloned().expect("pre-filled")
    }

    #[test]
    fn a_prefilled_log_is_full_and_its_gc_in_steady_state() {
        for kind in [SchemeKind::Swan(RaidLevel::Raid0), SchemeKind::LogRaid(RaidLevel::Raid0)] {
            let engine = Engine::new(small(kind, 1)).unwrap();
            let s = engine.scheme();
            s.check().unwrap();
            // Every block of the volume holds valid data (a formatted log holds none)...
            let cfg = small(kind, 1).array.log_config().unwrap().expect("log-structured");
            let geo = cfg.geometry;
            let unmapped = (0..s.volume_blocks()).filter(|&lba| s.locate(lba).is_none()).count();
            assert_eq!(unmapped, 0, "{kind}");
            // ...so what is free is what GC keeps free: less than the spare, whose rest is
            // dead blocks spread over sealed segments (a formatted log has every segment free;
            // SWAN keeps up to half the spare free in the back-end, Log-RAID 1/32 of it all).
            let free = s.status().free_segments;
            let spare = (geo.payload_blocks() as f64 * SPARE) as u64 / u64::from(geo.payload_slots());
            assert!(free < spare, "{kind}: {free} free segments of a {spare}-segment spare");
            // GC has collected every segment's worth of victims, neither empty nor full, and
            // as full in the last half of the settling writes as in the first.
            let r = report(&engine);
            assert!(r.victims > geo.segments(), "{kind}: only {} victims", r.victims);
            let [a, b] = r.settle_victim_valid_fraction.map(Option::unwrap);
            assert!(b > 0.3 && b < 0.95, "{kind}: victims {b:.2} valid");
            assert!((a - b).abs() < 0.05, "{kind}: victims {a:.2} then {b:.2} valid: not settled");
        }
    }

    #[test]
    fn the_prefill_is_deterministic_and_not_measured() {
        let kind = SchemeKind::Swan(RaidLevel::Raid0);
        let a = Engine::new(small(kind, 3)).unwrap();
        let b = Engine::new(small(kind, 3)).unwrap();
        let c = Engine::new(small(kind, 4)).unwrap();
        assert_eq!(report(&a), report(&b));
        assert_ne!(report(&a), report(&c), "the seed drives the random writes");
        let before = report(&a);
        let out = a.run(&mut |_| {}).unwrap();
        assert_eq!(out.prefill.as_ref(), Some(&before));
        // The run's counters and SSD statistics start after the pre-fill.
        assert!(out.user_write_blocks > 0);
        // (The scheme counts writes when planned, the engine when complete.)
        assert!(out.counters.user_blocks_written >= out.user_write_blocks);
        assert!(out.counters.user_blocks_written < before.user_blocks);
        assert!(out.ssd_host_write_pages <= out.member_write_blocks);
        assert!(out.counters.victims < before.victims);
    }

    #[test]
    fn only_a_log_is_prefilled() {
        let mut cfg = small(SchemeKind::Raid(RaidLevel::Raid0), 1);
        cfg.array.tuning.volume_blocks = None;
        let err = Engine::new(cfg).err().unwrap().to_string();
        assert!(err.contains("log-structured"), "{err}");
    }
}
