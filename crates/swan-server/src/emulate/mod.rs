//! `swan serve --emulate <preset>`: the simulator's SSD model in front of every member, in
//! wall-clock time.
//!
//! # Why
//! The members a test machine offers (files on one disk, a tmpfs, a loop device) behave
//! nothing like the array of SATA SSDs SWAN was designed for: no per-device bandwidth cap,
//! no NAND latency, and above all no SSD-internal garbage collection, the interference SWAN
//! exists to avoid. Emulation puts one modelled SSD ([`swan_models::ssd::Ssd`], the very
//! model the simulator's results come from) in front of each member, so a real NBD client
//! sees the latencies, throughput and GC stalls of the modelled array while the bytes still
//! go to, and come back from, the real members.
//!
//! # How
//! The engine performs every member operation at once (pread/pwrite/discard), then asks
//! [`Emulator::complete_at`] *when that operation would have completed on the model SSD*
//! and holds the reply until that wall-clock instant. The model never sleeps and reads no
//! clock: it computes completion times from the busy-until state of its dies, channels and
//! host link, so the emulator is just a translation of time:
//!
//! - model time ([`Nanos`] since [`Emulator::start`]) ↔ wall clock: `start + Duration::from_nanos(t)`;
//!   an `Instant` before `start` counts as model time 0;
//! - an operation issued while the model SSD is still busy queues behind that work, which
//!   is how bandwidth limits and GC stalls reach the client. A later phase of a plan reaches
//!   the model only once the phase before it has completed there (a GC job's waits for it;
//!   a user request's is kept by `engine::later_phases`), so the model hears of work in time
//!   order, as the simulator's models do. Work given for an instant before one the model was
//!   already given is safe (nothing in it goes backwards) but queues behind that later work;
//!   it is counted ([`EmuStats::out_of_order_ops`]);
//! - the [`IoClass`] is passed through, so SWAN's reads (`UserPreempt`) overtake queued
//!   array GC (`Gc`) on the model, as the paper prescribes; the SSD's *own* GC cannot be
//!   overtaken.
//!
//! # Sizing
//! Each model SSD is the named preset scaled to the member's size exactly as the
//! simulator's reduced-scale experiments scale it ([`SsdConfig::with_user_pages`]: same
//! timing, geometry per die, over-provisioning and GC policy; raw flash follows). Its LBA
//! space is therefore exactly `member_blocks` 4 KiB pages. A preset cannot be shrunk below
//! the size at which its GC reserve eats its over-provisioning; [`Emulator::new`] then says
//! the minimum. The model holds under 8 bytes per physical page (about 2 MiB per GiB of
//! member), see [`Emulator::model_bytes`].
//!
//! The model SSDs start fresh (erased, unmapped), so the first pass of writes runs at the
//! fresh-drive rate (≈ 430 MB/s for `sata850pro`) and SSD GC starts only once the flash has
//! been written over; [`Emulator::age`] ages them as the simulator does, for demos.
//!
//! # Zoned members
//! Emulated zoned members take a zoned SSD instead ([`Emulator::zoned`], `zoned.rs`): the
//! drive's timing over the member's own zones, told what they hold once the array has
//! opened. A zone's writes reach it one at a time, held by the engine until the last one
//! completes there (`engine/zone_holds.rs`).

mod zoned;

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use swan_core::io::IoClass;
use swan_models::ssd::{self, Ssd, SsdConfig, SsdConfigError, PAGE_BYTES};
use swan_models::zns::zns_preset;
use swan_models::{DevOp, DevOpKind, Device, Nanos};

use crate::member::{Zone, ZonedLayout};
use zoned::ZonedModel;

/// What a member operation does, as the model sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmuOp {
    Read,
    Write,
    Trim,
    Flush,
}

/// One model SSD's counters since it was created (or aged), for `swan status`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EmuStats {
    /// 4 KiB pages the array wrote to this SSD.
    pub host_pages_written: u64,
    /// 4 KiB pages the array read from this SSD (mapped or not).
    pub host_pages_read: u64,
    /// 4 KiB pages the array trimmed.
    pub host_pages_trimmed: u64,
    /// Valid pages the SSD copied in its own GC (or block-FTL merges).
    pub gc_pages_copied: u64,
    /// Erase blocks the SSD erased.
    pub erases: u64,
    /// Times a host write found the SSD out of free blocks and waited for its GC.
    pub gc_invocations: u64,
    /// Erased (or releasable) blocks as a fraction of all the SSD's blocks.
    pub free_block_fraction: f64,
    /// SSD-internal write amplification: (host + GC-copied pages) / host pages.
    pub waf: f64,
    /// 99th-percentile model latency of reads and writes in µs, queueing included (0 if none).
    pub read_p99_us: u64,
    pub write_p99_us: u64,
    /// Operations that reached past the model's capacity and were cut to fit (always 0
    /// when the engine passes member-relative blocks, as it should).
    pub out_of_range_ops: u64,
    /// Operations submitted for an instant before one the model SSD had already been given
    /// work at: they queue behind that later work, which the simulator (submitting in time
    /// order) never makes them do. And the summed time they were submitted early by, µs.
    #[serde(default)]
    pub out_of_order_ops: u64,
    #[serde(default)]
    pub out_of_order_us: u64,
    /// Zoned members: zones the model reset, and commands its contract refused (timed in
    /// place instead; always 0 when the model hears what the member took, in its order).
    #[serde(default)]
    pub zone_resets: u64,
    #[serde(default)]
    pub zone_refused: u64,
}

/// Why an emulator could not be built.
#[derive(Debug, thiserror::Error)]
pub enum EmulateError {
    #[error(
        "unknown SSD preset '{name}' for --emulate: expected one of {}, or for zoned members {}",
        ssd::PRESET_NAMES.join(", "),
        swan_models::zns::ZNS_PRESET_NAMES.join(", ")
    )]
    UnknownPreset { name: String },
    #[error(
        "--emulate {name} is a conventional SSD; this array's members are zoned: emulate them as a zoned one ({})",
        swan_models::zns::ZNS_PRESET_NAMES.join(", ")
    )]
    NotZoned { name: String },
    #[error(
        "--emulate {name} is a zoned SSD; this array's members are not zoned: emulate them as a conventional one ({})",
        ssd::PRESET_NAMES.join(", ")
    )]
    Zoned { name: String },
    #[error("the zoned members cannot be laid over the {preset} model: {problem}")]
    ZonedLayout { preset: String, problem: String },
    #[error("--emulate needs an array of at least one member")]
    NoMembers,
    #[error(
        "members of {member_blocks} blocks ({}) are too small for the {preset} SSD model: its GC reserve would eat \
         its over-provisioning; emulating it needs members of at least {min_blocks} blocks ({}), or another preset",
        mib(*member_blocks),
        mib(*min_blocks)
    )]
    TooSmall { preset: String, member_blocks: u64, min_blocks: u64 },
    #[error("members of {member_blocks} blocks ({}) do not fit the {preset} SSD model", mib(*member_blocks))]
    Config {
        preset: String,
        member_blocks: u64,
        #[source]
        source: SsdConfigError,
    },
}

/// A size in 4 KiB blocks as MiB, rounded up, for messages.
fn mib(blocks: u64) -> String {
    format!("{} MiB", blocks.saturating_mul(PAGE_BYTES).div_ceil(1 << 20))
}

/// One model SSD per member of an array, on a wall clock that starts at [`Emulator::start`].
#[derive(Clone)]
pub struct Emulator {
    models: Vec<Model>,
    start: Instant,
    preset: String,
    out_of_range: Vec<u64>,
    /// Per member, the latest model time it was given work at, and the submissions before it.
    latest: Vec<Nanos>,
    out_of_order: Vec<(u64, Nanos)>,
}

/// A member's model: a conventional SSD, or a zoned one in front of an emulated zoned member.
#[derive(Clone)]
enum Model {
    Ssd(Ssd),
    Zoned(ZonedModel),
}

impl std::fmt::Debug for Emulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Emulator").field("preset", &self.preset).field("members", &self.models.len()).finish()
    }
}

impl Emulator {
    /// One fresh model SSD per member, preset `preset` (a name [`swan_models::ssd::preset`]
    /// accepts) scaled to exactly `member_blocks` 4 KiB blocks; model time 0 is now.
    pub fn new(preset: &str, members: u32, member_blocks: u64) -> Result<Self, EmulateError> {
        Self::configured(preset, None, members, member_blocks, Instant::now())
    }

    /// [`Emulator::new`] with model time 0 at `start`, and whether host reads overtake the
    /// SSDs' own GC when not the preset's choice (`swan sim --ssd-gc-preemptible` says the same
    /// for the simulator, so both faces can run one model).
    pub fn configured(
        preset: &str,
        gc_preemptible: Option<bool>,
        members: u32,
        member_blocks: u64,
        start: Instant,
    ) -> Result<Self, EmulateError> {
        let Some(mut base) = ssd::preset(preset) else {
            return Err(match zns_preset(preset) {
                Some(_) => EmulateError::Zoned { name: preset.to_owned() },
                None => EmulateError::UnknownPreset { name: preset.to_owned() },
            });
        };
        if let Some(on) = gc_preemptible {
            base.gc_preemptible = on;
        }
        if members == 0 {
            return Err(EmulateError::NoMembers);
        }
        let cfg = base.with_user_pages(member_blocks);
        if let Err(source) = cfg.validate() {
            return Err(match min_user_pages(&base) {
                Some(min_blocks) if member_blocks < min_blocks => {
                    EmulateError::TooSmall { preset: preset.to_owned(), member_blocks, min_blocks }
                }
                _ => EmulateError::Config { preset: preset.to_owned(), member_blocks, source },
            });
        }
        let ssd = Ssd::new(cfg).map_err(|source| EmulateError::Config {
            preset: preset.to_owned(),
            member_blocks,
            source,
        })?;
        Ok(Self::over(vec![Model::Ssd(ssd); members as usize], preset, start))
    }

    /// One zoned SSD model, preset `preset` (`zn540`, `pm1731a`), in front of each emulated
    /// zoned member `layouts` describes (see `zoned.rs`); model time 0 at `start`. Its zones
    /// start empty: the array's open tells it the members' ([`Emulator::take_zone_report`]).
    pub fn zoned(preset: &str, layouts: &[ZonedLayout], start: Instant) -> Result<Self, EmulateError> {
        let Some(drive) = zns_preset(preset) else {
            return Err(match ssd::preset(preset) {
                Some(_) => EmulateError::NotZoned { name: preset.to_owned() },
                None => EmulateError::UnknownPreset { name: preset.to_owned() },
            });
        };
        if layouts.is_empty() {
            return Err(EmulateError::NoMembers);
        }
        let models = layouts
            .iter()
            .map(|l| ZonedModel::new(&drive, l).map(Model::Zoned))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|problem| EmulateError::ZonedLayout { preset: preset.to_owned(), problem })?;
        Ok(Self::over(models, preset, start))
    }

    fn over(models: Vec<Model>, preset: &str, start: Instant) -> Self {
        let n = models.len();
        Self {
            models,
            start,
            preset: preset.to_owned(),
            out_of_range: vec![0; n],
            latest: vec![0; n],
            out_of_order: vec![(0, 0); n],
        }
    }

    /// Whether the models are zoned SSDs.
    pub fn is_zoned(&self) -> bool {
        matches!(self.models.first(), Some(Model::Zoned(_)))
    }

    /// Tells member `member`'s zoned model what its zones hold now, as the member reports
    /// them, untimed: after the array's open reset, padded and finished zones. Nothing for a
    /// conventional model.
    pub fn take_zone_report(&mut self, member: u32, report: &[Zone]) {
        if let Some(Model::Zoned(z)) = self.models.get_mut(member as usize) {
            z.take_report(report);
        }
    }

    /// Ages every model SSD as the simulator does before measuring (SWAN §5): writes a
    /// uniformly random `fraction` (clamped to 0..=1) of its pages once each, without
    /// advancing time, then clears its counters. Each member gets its own seed derived from
    /// `seed`, as in `swan sim`.
    pub fn age(&mut self, fraction: f64, seed: u64) {
        for (i, model) in self.models.iter_mut().enumerate() {
            let Model::Ssd(ssd) = model else { continue };
            ssd.age_random(fraction, seed ^ (i as u64 + 1).wrapping_mul(0xA076_1D64_78BD_642F));
            ssd.reset_stats();
        }
    }

    /// Tells member `member`'s model SSD, without advancing time or counting it, that
    /// `count` blocks from `block` hold nothing: after [`Emulator::age`], the array's free
    /// space, which its format TRIMmed on the real members before the model SSDs existed.
    /// Without it an aged model keeps every page it aged live until the log overwrites it.
    pub fn trim_untimed(&mut self, member: u32, block: u64, count: u32) {
        let Some(Model::Ssd(ssd)) = self.models.get_mut(member as usize) else { return };
        let cap = ssd.user_pages();
        let end = block.saturating_add(u64::from(count)).min(cap);
        if block < end {
            ssd.apply_untimed(DevOp { kind: DevOpKind::Trim, block, count: (end - block) as u32, class: IoClass::Gc });
            ssd.reset_stats();
        }
    }

    /// Accounts one member operation issued at wall-clock `now`: `count` 4 KiB blocks from
    /// member-relative block `block`. Returns the wall-clock instant it completes on the
    /// model (never before `now`).
    ///
    /// Never panics: blocks past the model's capacity (the member's size) are cut off and
    /// counted in [`EmuStats::out_of_range_ops`]; an operation wholly beyond it, or on an
    /// unknown member, costs only command latency or nothing.
    ///
    /// Flush: the model has no volatile write cache (a write completes when its last page
    /// is programmed) and the engine acknowledges a write only at its model completion, so
    /// every write a flush covers (NBD: the writes *completed* before it) is already on
    /// flash. The flush therefore costs only the model's command latency (10 µs on the
    /// 850 PRO), like a SATA drive whose cache is empty; waiting for still-queued,
    /// unacknowledged writes would charge it for work it does not cover. A zoned model with
    /// zone write buffers (the ZN540's) acknowledges writes from them, so its flush waits
    /// until they are programmed, as the drive's does.
    pub fn complete_at(
        &mut self,
        now: Instant,
        member: u32,
        op: EmuOp,
        block: u64,
        count: u32,
        class: IoClass,
    ) -> Instant {
        let t = self.model_time(now);
        let Some(model) = self.models.get_mut(member as usize) else {
            return now;
        };
        let cap = match model {
            Model::Ssd(ssd) => ssd.user_pages(),
            Model::Zoned(z) => z.blocks(),
        };
        let (block, count) = if block.saturating_add(u64::from(count)) <= cap {
            (block, count)
        } else {
            self.out_of_range[member as usize] += 1;
            let block = block.min(cap);
            // Fits in u32: at most `count`.
            (block, (cap - block).min(u64::from(count)) as u32)
        };
        let kind = match op {
            EmuOp::Read => DevOpKind::Read,
            EmuOp::Write => DevOpKind::Write,
            EmuOp::Trim => DevOpKind::Trim,
            EmuOp::Flush => DevOpKind::Flush,
        };
        let latest = &mut self.latest[member as usize];
        if t < *latest {
            let o = &mut self.out_of_order[member as usize];
            o.0 += 1;
            o.1 += *latest - t;
        }
        *latest = (*latest).max(t);
        let done = match model {
            Model::Ssd(ssd) => ssd.submit(t, DevOp { kind, block, count, class }),
            Model::Zoned(z) => z.submit(t, kind, block, count, class),
        };
        self.wall(done).max(now)
    }

    /// The zone a write at `block` of `member` goes to, if the member's model is zoned and
    /// the block is in a zone (not in the in-place area): a zone takes one write at a time.
    pub fn write_zone(&self, member: u32, block: u64) -> Option<u32> {
        match self.models.get(member as usize) {
            Some(Model::Zoned(z)) => z.zone_of(block),
            _ => None,
        }
    }

    /// When `zone` of `member`'s zoned model has completed the last write given it.
    pub fn zone_free_at(&self, member: u32, zone: u32) -> Instant {
        match self.models.get(member as usize) {
            Some(Model::Zoned(z)) => self.wall(z.zone_done(zone)),
            _ => self.start,
        }
    }

    /// How long a read of `block` on `member`, issued at `at` in `class`, would wait on its
    /// model SSD before starting, in nanoseconds (0 for an unknown member or a block past
    /// its end): the prediction reads around a busy SSD weigh. Changes nothing.
    pub fn read_wait_ns(&self, at: Instant, member: u32, block: u64, class: IoClass) -> u64 {
        let t = self.model_time(at);
        match self.models.get(member as usize) {
            Some(Model::Ssd(s)) => s.read_wait(t, block, 1, class),
            Some(Model::Zoned(z)) => z.read_wait(t, block, class),
            None => 0,
        }
    }

    /// The counters of member `member`'s model SSD (all zero for an unknown member).
    pub fn member_stats(&self, member: u32) -> EmuStats {
        let m = member as usize;
        let (s, free, refused, resets) = match self.models.get(m) {
            None => return EmuStats::default(),
            Some(Model::Ssd(ssd)) => (ssd.stats(), ssd.free_block_fraction(), 0, 0),
            Some(Model::Zoned(z)) => {
                (z.device().stats(), z.empty_fraction(), z.refused(), z.device().zone_stats().resets)
            }
        };
        EmuStats {
            host_pages_written: s.host_pages_written,
            host_pages_read: s.host_pages_read,
            host_pages_trimmed: s.host_pages_trimmed,
            gc_pages_copied: s.gc_pages_copied,
            erases: s.erases,
            gc_invocations: s.gc_invocations,
            free_block_fraction: free,
            waf: s.waf(),
            read_p99_us: if s.read_latency_us.is_empty() { 0 } else { s.read_latency_us.value_at_quantile(0.99) },
            write_p99_us: if s.write_latency_us.is_empty() { 0 } else { s.write_latency_us.value_at_quantile(0.99) },
            out_of_range_ops: self.out_of_range[member as usize],
            out_of_order_ops: self.out_of_order[member as usize].0,
            out_of_order_us: self.out_of_order[member as usize].1 / 1_000,
            zone_resets: resets,
            zone_refused: refused,
        }
    }

    /// Model time 0 is `start` from now on: for an engine whose clock starts later than
    /// the emulator was built (a stepper's manual clock). Before any operation.
    pub fn start_at(&mut self, start: Instant) {
        self.start = start;
    }

    /// Wall-clock instant of model time 0.
    pub fn start(&self) -> Instant {
        self.start
    }

    /// The preset name the model SSDs were built from.
    pub fn preset(&self) -> &str {
        &self.preset
    }

    pub fn members(&self) -> u32 {
        self.models.len() as u32
    }

    /// The (scaled) configuration of every model SSD; None for zoned models.
    pub fn config(&self) -> Option<&SsdConfig> {
        match self.models.first() {
            Some(Model::Ssd(ssd)) => Some(ssd.config()),
            _ => None,
        }
    }

    /// When member `member`'s model SSD will have finished everything submitted so far,
    /// its own GC included (`start` for an unknown member).
    pub fn busy_until(&self, member: u32) -> Instant {
        match self.models.get(member as usize) {
            Some(Model::Ssd(s)) => self.wall(s.busy_until()),
            Some(Model::Zoned(z)) => self.wall(z.busy_until()),
            None => self.start,
        }
    }

    /// Host memory the models hold, in bytes.
    pub fn model_bytes(&self) -> u64 {
        let bytes = |m: &Model| match m {
            Model::Ssd(s) => s.model_bytes(),
            Model::Zoned(z) => z.device().model_bytes(),
        };
        self.models.iter().map(bytes).sum()
    }

    fn model_time(&self, at: Instant) -> Nanos {
        u64::try_from(at.saturating_duration_since(self.start).as_nanos()).unwrap_or(Nanos::MAX)
    }

    fn wall(&self, t: Nanos) -> Instant {
        self.start + Duration::from_nanos(t)
    }
}

/// The smallest user capacity (in pages) at which `preset`'s model validates, or `None` if
/// even its full size does not. The GC reserve has a fixed part (a block per unit and
/// more), so below some size it leaves GC no room; above it, every size works.
fn min_user_pages(preset: &SsdConfig) -> Option<u64> {
    preset.min_user_pages(preset.user_pages)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    use swan_models::ssd::bandwidth::sequential_mbps;

    /// 512 MiB members: the size `sequential_mbps` measures the 850 PRO model at.
    const MEMBER: u64 = 131_072;
    /// 128 KiB operations.
    const OP: u32 = 32;
    const DEPTH: usize = 32;

    fn emu() -> Emulator {
        Emulator::new("sata850pro", 2, MEMBER).unwrap()
    }

    /// Runs `ops` operations of `OP` blocks over consecutive blocks from `first` on member 0,
    /// as a client at queue depth `DEPTH` would (each new one issued the instant an earlier
    /// one completes), starting at `t0`. Returns (MB/s, when the last completed).
    fn closed_loop(e: &mut Emulator, t0: Instant, op: EmuOp, first: u64, ops: u64, class: IoClass) -> (f64, Instant) {
        let mut inflight: BinaryHeap<Reverse<Instant>> = (0..DEPTH).map(|_| Reverse(t0)).collect();
        let mut last = t0;
        for i in 0..ops {
            let Reverse(now) = inflight.pop().unwrap();
            let done = e.complete_at(now, 0, op, first + i * u64::from(OP), OP, class);
            assert!(done >= now);
            last = last.max(done);
            inflight.push(Reverse(done));
        }
        (mbps(ops * u64::from(OP), last - t0), last)
    }

    fn mbps(blocks: u64, d: Duration) -> f64 {
        (blocks * PAGE_BYTES) as f64 / d.as_secs_f64() / 1e6
    }

    fn within(x: f64, want: f64, tol: f64) -> bool {
        (x - want).abs() <= tol * want
    }

    #[test]
    fn sequential_writes_pace_at_the_presets_bandwidth() {
        let (_, sustained) = sequential_mbps(&ssd::preset("sata850pro").unwrap());
        let mut e = emu();
        let t0 = e.start() + Duration::from_millis(1);
        let ops = MEMBER / u64::from(OP);
        // Fresh: the first pass over never-written flash (README: ≈ 430 MB/s).
        let (fresh, end) = closed_loop(&mut e, t0, EmuOp::Write, 0, ops, IoClass::User);
        // Sustained: trim everything, write again; every block is now erased before reuse.
        let t1 = end + Duration::from_millis(1);
        e.complete_at(t1, 0, EmuOp::Trim, 0, MEMBER as u32, IoClass::User);
        let (again, _) = closed_loop(&mut e, t1, EmuOp::Write, 0, ops, IoClass::User);
        // All issued at once (a deep queue): the model paces them by itself.
        let mut burst = emu();
        let t0 = burst.start();
        let last = (0..ops)
            .map(|i| burst.complete_at(t0, 0, EmuOp::Write, i * u64::from(OP), OP, IoClass::User))
            .max()
            .unwrap();
        let at_once = mbps(MEMBER, last - t0);
        eprintln!(
            "sequential 128 KiB writes: fresh {fresh:.1} MB/s (QD{DEPTH}), {at_once:.1} (all at once); \
             sustained {again:.1}; sequential_mbps {sustained:.1}"
        );
        assert!(within(again, sustained, 0.15), "sustained {again} vs model's {sustained}");
        assert!(within(fresh, 430.0, 0.15), "fresh {fresh}");
        assert!(within(at_once, 430.0, 0.15), "all at once {at_once}");
        assert!(within(fresh, sustained, 0.15), "fresh {fresh} vs sustained {sustained}");
        let s = e.member_stats(0);
        assert_eq!(s.host_pages_written, 2 * MEMBER);
        assert_eq!(s.gc_pages_copied, 0, "trimmed space needs no copying");
        assert_eq!(e.member_stats(1).host_pages_written, 0, "members are independent");
    }

    #[test]
    fn reads_are_faster_than_writes() {
        let mut e = emu();
        let t0 = e.start();
        let ops = 2048; // 256 MiB
        let (write, end) = closed_loop(&mut e, t0, EmuOp::Write, 0, ops, IoClass::User);
        let t1 = end + Duration::from_millis(1);
        let (read, end) = closed_loop(&mut e, t1, EmuOp::Read, 0, ops, IoClass::User);
        // One 4 KiB operation on an idle device.
        let t2 = end + Duration::from_millis(1);
        let w4 = e.complete_at(t2, 0, EmuOp::Write, 0, 1, IoClass::User) - t2;
        let t3 = t2 + Duration::from_millis(1);
        let r4 = e.complete_at(t3, 0, EmuOp::Read, 0, 1, IoClass::User) - t3;
        eprintln!(
            "128 KiB QD{DEPTH}: write {write:.1} MB/s, read {read:.1} MB/s; 4 KiB QD1: write {w4:?}, read {r4:?}"
        );
        assert!(read > 1.1 * write, "read {read} vs write {write}");
        assert!(within(read, 520.0, 0.15), "reads are held to the SATA link: {read}");
        // Alone, a 4 KiB write is acknowledged from the drive's DRAM, before a read can sense
        // its page: the data sheet's QD1 figures (36K write, 10K read IOPS).
        assert!(w4 * 2 < r4, "read {r4:?} vs write {w4:?}");
        let s = e.member_stats(0);
        assert_eq!(s.host_pages_read, ops * u64::from(OP) + 1);
        assert!(s.read_p99_us > 0 && s.write_p99_us > s.read_p99_us, "{s:?}");
    }

    #[test]
    fn a_preempting_read_overtakes_queued_array_gc() {
        let mut e = emu();
        let t0 = e.start();
        // Data to read back later, and for the array's GC to read, written and settled.
        let (_, end) = closed_loop(&mut e, t0, EmuOp::Write, 0, 8, IoClass::User);
        let (_, end) = closed_loop(&mut e, end, EmuOp::Write, 65_536, 160, IoClass::User);
        let t1 = end + Duration::from_millis(100);
        // A burst of array GC reads (20 MiB) issued at t1: tens of ms of backlog. (Its writes
        // would not do: the drive buffers them, and every host read goes before those.)
        let gc_end = (0..160)
            .map(|i| e.complete_at(t1, 0, EmuOp::Read, 65_536 + i * u64::from(OP), OP, IoClass::Gc))
            .max()
            .unwrap();
        // What reads around a busy SSD weigh: a FIFO read's wait is the backlog, a
        // preempting one's is not; an idle member predicts nothing.
        let wait = |class| Duration::from_nanos(e.read_wait_ns(t1, 0, 0, class));
        assert!(wait(IoClass::User) >= gc_end - t1 - Duration::from_millis(2), "{:?}", wait(IoClass::User));
        assert!(wait(IoClass::UserPreempt) < Duration::from_millis(1), "{:?}", wait(IoClass::UserPreempt));
        assert_eq!(e.read_wait_ns(t1, 1, 0, IoClass::User), 0);
        let mut fifo = e.clone();
        let preempt = e.complete_at(t1, 0, EmuOp::Read, 0, OP, IoClass::UserPreempt) - t1;
        let user = fifo.complete_at(t1, 0, EmuOp::Read, 0, OP, IoClass::User) - t1;
        // GC submitted after the preempting read is pushed back, not dropped.
        let gc_after = e.complete_at(t1, 0, EmuOp::Read, 70_000, 1, IoClass::Gc);
        eprintln!("128 KiB read behind {:?} of queued GC reads: UserPreempt {preempt:?}, User {user:?}", gc_end - t1);
        assert!(gc_end - t1 > Duration::from_millis(30), "{:?}", gc_end - t1);
        assert!(preempt < Duration::from_millis(1), "{preempt:?}");
        assert!(user >= gc_end - t1, "a User read waits for the queued GC: {user:?}");
        assert!(gc_after > gc_end);
    }

    #[test]
    fn reads_overtake_gc_as_the_preset_says_unless_told_otherwise() {
        let preset_gc = |on| {
            let e = Emulator::configured("sata850pro", on, 1, MEMBER, Instant::now()).unwrap();
            e.config().unwrap().gc_preemptible
        };
        assert!(preset_gc(None), "sata850pro's reads overtake its GC");
        assert!(!preset_gc(Some(false)), "the override was not taken");
        let harmonia = Emulator::configured("harmonia", Some(true), 1, 262_144, Instant::now()).unwrap();
        assert!(harmonia.config().unwrap().gc_preemptible, "the override was not taken");
    }

    #[test]
    fn unknown_presets_are_refused_with_the_valid_names() {
        let err = Emulator::new("floppy", 4, MEMBER).unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, EmulateError::UnknownPreset { .. }));
        assert!(msg.contains("floppy"), "{msg}");
        for name in ssd::PRESET_NAMES {
            assert!(msg.contains(name), "{msg}");
            // 1 GiB members fit every preset (harmonia's minimum is 728 MiB).
            Emulator::new(name, 1, 262_144).unwrap();
        }
        assert!(matches!(Emulator::new("sata850pro", 0, MEMBER), Err(EmulateError::NoMembers)));
    }

    #[test]
    fn members_too_small_for_the_model_are_refused_with_the_minimum() {
        let min = min_user_pages(&ssd::preset("sata850pro").unwrap()).unwrap();
        let err = Emulator::new("sata850pro", 1, min - 1).unwrap_err();
        let msg = err.to_string();
        eprintln!("{msg}");
        assert!(matches!(err, EmulateError::TooSmall { min_blocks, .. } if min_blocks == min), "{msg}");
        assert!(msg.contains(&format!("at least {min} blocks")), "{msg}");
        let e = Emulator::new("sata850pro", 1, min).unwrap();
        assert_eq!(e.config().unwrap().user_pages, min);
        // Too large for the model's 32-bit page numbers: refused, not a panic.
        let err = Emulator::new("sata850pro", 1, u64::MAX / 2).unwrap_err();
        assert!(matches!(err, EmulateError::Config { .. }), "{err}");
    }

    #[test]
    fn blocks_past_the_member_do_not_panic() {
        let mut e = emu();
        let t = e.start();
        for op in [EmuOp::Read, EmuOp::Write, EmuOp::Trim, EmuOp::Flush] {
            assert!(e.complete_at(t, 0, op, MEMBER - 4, 32, IoClass::User) >= t);
            assert!(e.complete_at(t, 0, op, u64::MAX, u32::MAX, IoClass::User) >= t);
        }
        assert_eq!(e.complete_at(t, 9, EmuOp::Write, 0, 1, IoClass::User), t, "unknown member");
        let s = e.member_stats(0);
        assert_eq!(s.out_of_range_ops, 8, "{s:?}");
        assert_eq!(s.host_pages_written, 4, "only the in-range part is charged");
    }

    #[test]
    fn wall_clock_maps_to_model_time_and_queues_behind_earlier_work() {
        let mut e = emu();
        let t0 = e.start() + Duration::from_secs(5);
        // On an idle device a flush or trim costs only command latency (10 µs).
        assert_eq!(e.complete_at(t0, 0, EmuOp::Flush, 0, 0, IoClass::User) - t0, Duration::from_micros(10));
        assert_eq!(e.complete_at(t0, 0, EmuOp::Trim, 0, 64, IoClass::User) - t0, Duration::from_micros(10));
        let w = e.complete_at(t0, 0, EmuOp::Write, 0, 1, IoClass::User);
        assert!(w - t0 < Duration::from_micros(300), "{:?}", w - t0);
        // Issued earlier than the model's last activity: it queues behind it.
        let big = e.complete_at(t0, 0, EmuOp::Write, 0, 4096, IoClass::User);
        let early = e.complete_at(t0 - Duration::from_secs(1), 0, EmuOp::Write, 8192, 16, IoClass::User);
        assert!(early > big - Duration::from_millis(1), "{early:?} vs {big:?}");
        // The flash is busy past both acknowledgements: the buffered pages are still programming.
        assert!(e.busy_until(0) >= big.max(early));
        // An Instant before the start is model time 0, and nothing completes before `now`.
        let before = e.start() - Duration::from_secs(1);
        assert!(e.complete_at(before, 1, EmuOp::Flush, 0, 0, IoClass::User) >= e.start());
    }

    #[test]
    fn aging_fills_the_flash_and_random_overwrites_make_the_ssd_collect() {
        let mut e = Emulator::new("sata850pro", 1, 65_536).unwrap();
        assert!(e.member_stats(0).free_block_fraction > 0.99, "fresh by default");
        e.age(0.9, 7);
        let s = e.member_stats(0);
        assert_eq!(s.host_pages_written, 0, "aging clears the counters");
        assert!(s.free_block_fraction < 0.2, "{s:?}");
        // 4 KiB random overwrites, QD 32, until the SSD's own GC has run a while.
        let mut rng = 0x1234_5678_u64;
        let t0 = e.start();
        let mut inflight: BinaryHeap<Reverse<Instant>> = (0..DEPTH).map(|_| Reverse(t0)).collect();
        let n = 65_536;
        let mut last = t0;
        for _ in 0..n {
            rng = rng.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            let Reverse(now) = inflight.pop().unwrap();
            let done = e.complete_at(now, 0, EmuOp::Write, (rng >> 33) % 65_536, 1, IoClass::User);
            last = last.max(done);
            inflight.push(Reverse(done));
        }
        let random = mbps(n, last - t0);
        let s = e.member_stats(0);
        eprintln!("aged 90 %, 4 KiB random writes: {random:.1} MB/s, SSD WAF {:.2}, {s:?}", s.waf);
        assert!(s.gc_pages_copied > 0 && s.erases > 0 && s.gc_invocations > 0, "{s:?}");
        assert!(s.waf > 1.5, "{s:?}");
        assert!(random < 300.0, "GC slows random writes: {random}");
    }

    #[test]
    fn an_aged_model_told_what_is_free_collects_without_copying() {
        // The whole member written once in order, on an aged model with and without the
        // untimed TRIM of its space: the SSD must collect either way (the aged pages hold
        // its blocks), but copies pages only when it still believes they are live.
        let copied = |trim: bool| {
            let mut e = Emulator::new("sata850pro", 1, 65_536).unwrap();
            e.age(0.9, 7);
            if trim {
                e.trim_untimed(0, 0, 65_536);
                // Past the member's end: cut off, no panic.
                e.trim_untimed(0, 65_000, 10_000);
                let s = e.member_stats(0);
                assert_eq!((s.host_pages_trimmed, s.host_pages_written), (0, 0), "counted: {s:?}");
            }
            closed_loop(&mut e, Instant::now(), EmuOp::Write, 0, 65_536 / u64::from(OP), IoClass::User);
            let s = e.member_stats(0);
            assert!(s.erases > 0, "the model never collected: {s:?}");
            s.gc_pages_copied
        };
        assert_eq!(copied(true), 0);
        assert!(copied(false) > 0);
    }
}
