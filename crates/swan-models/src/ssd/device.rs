//! The SSD as the array sees it: [`Ssd`] implements [`Device`] by asking the FTL what
//! each operation does and the timing model when that work is done, and offers the
//! hooks experiments need around it (aging, GC pressure for Harmonia, statistics).

use super::aging::Permutation;
use super::config::{SsdConfig, SsdConfigError};
use super::ftl::Ftl;
use super::ftl_error::FtlInvariantError;
use super::nand::{Nand, Untimed};
use super::stats::SsdStats;
use super::timing::{Prio, Timing};
use super::variation::SlowPeriods;
use crate::{DevOp, DevOpKind, Device, IoClass, Nanos};
use swan_core::ggc::MemberGcState;

/// How close a device is to running out of free blocks (for Harmonia's coordinated GC).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GcPressure {
    /// Above the soft limit.
    None,
    /// At or below the soft limit, above the GC trigger: a good time for coordinated GC.
    SoftLimit,
    /// At or below the trigger: the next write runs foreground GC.
    HardLimit,
}

/// How far a FORCE GC cleans each of an SSD's GC domains (at least one victim each, if any
/// is worth collecting; see [`Ssd::force_gc`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ForceTarget {
    /// Until the domain's free blocks exceed its soft limit, which re-arms the notice.
    PastSoftLimit,
    /// Until this fraction of the domain's blocks is free.
    FreeFraction(f64),
}

/// What an O-SSD tells its array controller when its free blocks fall to the soft limit
/// (Harmonia §IV-C.1: it "will soon need to initiate a GC process", with "an estimate of how
/// much data can be written before a hard threshold is reached").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SoftLimitNotice {
    pub free_blocks: u64,
    /// Pages that can be written before the SSD must collect on its own (a lower bound).
    pub pages_to_hard_limit: u64,
}

/// One SSD in virtual time. See the [module docs](super) for the model.
///
/// `Clone` copies the whole mapping: age a device once, then clone it per experiment.
///
/// # Payload tracking
/// Off by default, the model carries no data. [`Ssd::enable_payload`] (or
/// [`Ssd::with_payload`]) turns on an opt-in mode for deep tests: the device stores one
/// `u64` *token* per physical page, and its FTL moves the token whenever it moves the page
/// (page-FTL GC copies, block-FTL merges) and clears it when the page stops holding live
/// data (overwrite, trim, erase). [`Ssd::write_tokens`] and [`Ssd::read_tokens`] are
/// [`Device::submit`] plus the token bookkeeping, so timing and statistics are exactly those
/// of the plain operation; tokens are placed at submission, as the mapping is, and nothing
/// changes them at completion. A plain `submit` write stores token 0 in the pages it
/// writes; unmapped pages read as 0. When off, the cost is one predictable branch where
/// a page is invalidated or copied.
#[derive(Clone)]
pub struct Ssd {
    config: SsdConfig,
    ftl: Ftl,
    timing: Timing,
    stats: SsdStats,
    total_blocks: u64,
    /// Latest completion returned; with the media horizon, what `busy_until` reports.
    last_done: Nanos,
    /// The soft-limit notice is edge-triggered: armed while every GC domain is above its
    /// soft limit (or not yet looked at), fired once when a write takes one to it.
    notice_armed: bool,
    notice: Option<SoftLimitNotice>,
    /// This SSD's slow periods, when the array's SSDs vary ([`super::Variation`]).
    slow: Option<SlowPeriods>,
    /// An idle copy of the timing state, on which [`Ssd::submit_split`] times an operation
    /// alone (made at its first call).
    idle: Option<Box<Timing>>,
}

/// An operation's completion, and how much of its latency was its own work
/// ([`Ssd::submit_split`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Served {
    pub done: Nanos,
    /// What the operation would have taken on this device idle: its own pages' NAND and
    /// transfer time, the GC it set off itself, and the command latency. The rest of its
    /// latency (`done − now − service_ns`) was waiting behind earlier work.
    pub service_ns: Nanos,
}

/// Charges the NAND work of one operation submitted at `now`, and remembers when the
/// last of it ends: an operation completes only when all the work it caused (its own
/// pages and any GC it triggered) is done.
///
/// With a write buffer, a write completes instead when the last of its pages is in DRAM
/// (`admitted`): its programs, and the GC it set off, go on behind it.
struct Clocked<'a> {
    timing: &'a mut Timing,
    now: Nanos,
    prio: Prio,
    done: Nanos,
    admitted: Option<Nanos>,
}

impl<'a> Clocked<'a> {
    fn new(timing: &'a mut Timing, now: Nanos, prio: Prio) -> Self {
        Self { timing, now, prio, done: now, admitted: None }
    }

    /// When the operation completes, before the command latency.
    fn finished(&self) -> Nanos {
        self.admitted.unwrap_or(self.done)
    }
}

/// The NAND work of one operation, with the host reads the FTL does not ask for itself.
trait Charge: Nand {
    /// A host read of a page on `die`.
    fn read(&mut self, die: u32);
    /// A FLUSH: waits until every write acknowledged so far is on flash.
    fn flush(&mut self);
}

impl Charge for Clocked<'_> {
    #[inline]
    fn read(&mut self, die: u32) {
        self.done = self.done.max(self.timing.read_page(self.now, die, self.prio));
    }

    fn flush(&mut self) {
        self.done = self.done.max(self.timing.drained_at());
    }
}

/// One operation charged twice: to the device as it is, and to the same device idle.
struct Both<'a> {
    real: Clocked<'a>,
    idle: Clocked<'a>,
}

impl Nand for Both<'_> {
    fn program(&mut self, die: u32) {
        self.real.program(die);
        self.idle.program(die);
    }

    fn copy(&mut self, from: u32, to: u32) {
        self.real.copy(from, to);
        self.idle.copy(from, to);
    }

    fn copy_back(&mut self, die: u32) {
        self.real.copy_back(die);
        self.idle.copy_back(die);
    }

    fn erase(&mut self, die: u32) {
        self.real.erase(die);
        self.idle.erase(die);
    }
}

impl Charge for Both<'_> {
    fn read(&mut self, die: u32) {
        self.real.read(die);
        self.idle.read(die);
    }

    fn flush(&mut self) {
        self.real.flush();
        self.idle.flush();
    }
}

/// Carries out `op` on the mapping, charging its NAND work to `clock`, and counts its pages.
#[inline(always)]
fn carry_out(ftl: &mut Ftl, stats: &mut SsdStats, op: &DevOp, clock: &mut impl Charge) {
    match op.kind {
        DevOpKind::Read => {
            stats.host_pages_read += u64::from(op.count);
            ftl.for_each_mapped(op.block, op.count, |die| clock.read(die));
        }
        DevOpKind::Write => {
            stats.host_pages_written += u64::from(op.count);
            ftl.write(op.block, op.count, clock, stats);
        }
        DevOpKind::Trim => {
            stats.host_pages_trimmed += u64::from(op.count);
            ftl.trim(op.block, op.count);
        }
        DevOpKind::Flush => clock.flush(),
    }
}

impl Nand for Clocked<'_> {
    fn program(&mut self, die: u32) {
        if self.timing.buffered() {
            let (admitted, end) = self.timing.write_page_buffered(self.now, die, self.prio);
            self.admitted = Some(self.admitted.unwrap_or(admitted).max(admitted));
            self.done = self.done.max(end);
        } else {
            self.done = self.done.max(self.timing.write_page(self.now, die, self.prio));
        }
    }

    fn copy(&mut self, from: u32, to: u32) {
        self.done = self.done.max(self.timing.copy_page(self.now, from, to));
    }

    fn copy_back(&mut self, die: u32) {
        self.done = self.done.max(self.timing.copy_back_page(self.now, die));
    }

    fn erase(&mut self, die: u32) {
        self.done = self.done.max(self.timing.erase_block(self.now, die));
    }
}

impl Ssd {
    /// A fresh (fully erased, unmapped) device, or why `config` cannot be modelled.
    pub fn new(config: SsdConfig) -> Result<Self, SsdConfigError> {
        config.validate()?;
        Ok(Self {
            ftl: Ftl::new(&config),
            timing: Timing::new(&config),
            stats: SsdStats::default(),
            total_blocks: config.raw_blocks(),
            last_done: 0,
            notice_armed: true,
            notice: None,
            slow: None,
            idle: None,
            config,
        })
    }

    /// The same device, made slow during `periods` (see [`super::Variation`]).
    pub fn with_slow_periods(mut self, periods: SlowPeriods) -> Self {
        self.timing.set_multiplier(periods.multiplier());
        self.slow = Some(periods);
        self
    }

    /// Simulated nanoseconds this SSD has spent in slow periods up to `now` (0 without any).
    pub fn slow_ns(&mut self, now: Nanos) -> Nanos {
        self.slow.as_mut().map_or(0, |p| p.slow_ns(now))
    }

    /// Mean fraction of its units' time the flash was busy (reading, transferring,
    /// programming, erasing) from the last [`Ssd::reset_stats`] up to `elapsed` later.
    pub fn die_busy_fraction(&self, elapsed: Nanos) -> f64 {
        if elapsed == 0 {
            return 0.0;
        }
        self.timing.die_busy_ns() as f64 / (elapsed as f64 * self.timing.units() as f64)
    }

    /// How often host reads met the device's own work in flight on their die since the last
    /// [`Ssd::reset_stats`] (always zero under [`super::Suspension::Instant`]).
    pub fn overtakes(&self) -> super::Overtakes {
        self.timing.overtakes
    }

    /// Enters the slow or normal period that holds `now`.
    fn enter_period(&mut self, now: Nanos) {
        if let Some(multiplier) = self.slow.as_mut().and_then(|p| p.advance(now)) {
            self.timing.set_multiplier(multiplier);
        }
    }

    pub fn config(&self) -> &SsdConfig {
        &self.config
    }

    pub fn stats(&self) -> &SsdStats {
        &self.stats
    }

    /// Clears counters and histograms, keeping the mapping and the busy-until times (used
    /// after aging, so measurements start from an aged device).
    pub fn reset_stats(&mut self) {
        self.stats.reset();
        self.timing.reset_busy();
    }

    /// Size of the LBA space in 4 KiB pages.
    pub fn user_pages(&self) -> u64 {
        self.config.user_pages
    }

    /// Free (erased or releasable) blocks as a fraction of all blocks.
    pub fn free_block_fraction(&self) -> f64 {
        self.ftl.free_blocks() as f64 / self.total_blocks as f64
    }

    /// The pressure of the GC domain closest to collecting on its own.
    pub fn gc_pressure(&self) -> GcPressure {
        let st = self.gc_state();
        if st.at_hard_limit() {
            GcPressure::HardLimit
        } else if st.at_soft_limit() {
            GcPressure::SoftLimit
        } else {
            GcPressure::None
        }
    }

    /// The GC state an O-RAID reads from an O-SSD (Harmonia's proactive soft-limit polls
    /// it): that of its GC domain with the fewest free blocks, the one that will collect on
    /// its own first (the whole device when it has one domain).
    pub fn gc_state(&self) -> MemberGcState {
        let domains = self.ftl.domains();
        let tightest = domains.iter().min_by_key(|d| d.free_blocks());
        let (free_blocks, soft, hard) = match tightest {
            Some(d) => (d.free_blocks(), d.soft_limit, d.trigger),
            // The block FTL: no GC to coordinate, never at a limit.
            None => (self.total_blocks, 0, 0),
        };
        MemberGcState {
            free_blocks,
            soft_limit_blocks: soft,
            hard_limit_blocks: hard,
            total_blocks: self.config.domain_blocks(),
            pages_per_block: self.config.pages_per_block,
        }
    }

    /// The pending soft-limit notice, if a write took a GC domain to its soft limit since
    /// the last call. The O-SSD pushes it; the driver delivers it to the O-RAID. It fires
    /// again only after every domain has risen above its soft limit (forced GC does that;
    /// the SSD's own hard-limit GC stops below it).
    pub fn take_soft_limit_notice(&mut self) -> Option<SoftLimitNotice> {
        self.notice.take()
    }

    /// Arms or fires the soft-limit notice after free blocks changed.
    fn watch_soft_limit(&mut self) {
        if self.ftl.domains_at_soft_limit() == 0 {
            self.notice_armed = true;
        } else if self.notice_armed {
            self.notice_armed = false;
            let st = self.gc_state();
            self.notice =
                Some(SoftLimitNotice { free_blocks: st.free_blocks, pages_to_hard_limit: st.pages_to_hard_limit() });
        }
    }

    /// Harmonia's FORCE GC command, at `now`: every GC domain with a victim worth
    /// collecting collects one, then goes on while its free blocks are at or below
    /// `target`, up to `max_victims` per domain (`None`: no bound). Its work is the SSD's
    /// own GC, charged to the domain's units like foreground GC, so host requests that need
    /// those units queue behind it. Returns when that work ends (`now` if there was none).
    /// Counts one forced GC invocation if any victim was collected. A no-op on the block
    /// FTL, which has no GC.
    ///
    /// "Every stale/invalid element" cleans (§V-A): a domain above its threshold still
    /// collects one victim, or forcing would reach only the SSD that raised the notice.
    pub fn force_gc(&mut self, now: Nanos, target: ForceTarget, max_victims: Option<u32>) -> Nanos {
        self.enter_period(now);
        let domain_blocks = self.config.domain_blocks() as f64;
        let threshold = |soft: u64| match target {
            ForceTarget::PastSoftLimit => soft,
            // At most this many free blocks means below the fraction.
            ForceTarget::FreeFraction(f) => ((f.clamp(0.0, 1.0) * domain_blocks).ceil() as u64).saturating_sub(1),
        };
        let mut clock = Clocked::new(&mut self.timing, now, Prio::Foreground);
        let victims = self.ftl.force_collect(threshold, max_victims, &mut clock, &mut self.stats);
        if victims > 0 {
            self.stats.forced_gc_invocations += 1;
            self.stats.forced_gc_victims += u64::from(victims);
        }
        let done = clock.done;
        self.last_done = self.last_done.max(done);
        self.watch_soft_limit();
        done
    }

    /// Ages the device without advancing time, as SWAN §5 does before measuring: writes a
    /// uniformly random `fraction` of the logical pages, each chosen page once, in random
    /// order (seeded). GC runs as needed but costs no time. Counts as host writes; call
    /// [`Ssd::reset_stats`] afterwards.
    pub fn age_random(&mut self, fraction: f64, seed: u64) {
        let pages = self.fraction_of_pages(fraction);
        if pages == 0 {
            return;
        }
        let order = Permutation::new(self.config.user_pages, seed);
        for i in 0..pages {
            self.ftl.write(order.at(i), 1, &mut Untimed, &mut self.stats);
        }
        self.stats.host_pages_written += pages;
    }

    /// Writes the first `fraction` of the logical pages in order, without advancing time
    /// (Harmonia's warm-up). Counts as host writes.
    pub fn fill_sequential(&mut self, fraction: f64) {
        let pages = self.fraction_of_pages(fraction);
        let mut lpn = 0;
        while lpn < pages {
            let n = (pages - lpn).min(1 << 20) as u32;
            self.ftl.write(lpn, n, &mut Untimed, &mut self.stats);
            lpn += u64::from(n);
        }
        self.stats.host_pages_written += pages;
    }

    /// Panics if `op` reaches past the device's user capacity.
    fn assert_in_range(&self, op: &DevOp) {
        assert!(
            op.block + u64::from(op.count) <= self.config.user_pages,
            "{}: {:?} reaches past the last page {}",
            self.config.name,
            op,
            self.config.user_pages
        );
    }

    /// Carries out `op`'s effect on the mapping without advancing time, for warming up an
    /// array that sits above the device (the simulator's log pre-fill): a write maps its
    /// pages (running GC as needed, at no cost), a TRIM unmaps them; reads and flushes change
    /// nothing. Counts as host I/O; call [`Ssd::reset_stats`] afterwards.
    ///
    /// # Panics
    /// If the operation reaches past the device's user capacity.
    pub fn apply_untimed(&mut self, op: DevOp) {
        self.assert_in_range(&op);
        match op.kind {
            DevOpKind::Write => {
                self.ftl.write(op.block, op.count, &mut Untimed, &mut self.stats);
                self.stats.host_pages_written += u64::from(op.count);
            }
            DevOpKind::Trim => {
                self.ftl.trim(op.block, op.count);
                self.stats.host_pages_trimmed += u64::from(op.count);
            }
            DevOpKind::Read | DevOpKind::Flush => {}
        }
    }

    fn fraction_of_pages(&self, fraction: f64) -> u64 {
        (fraction.clamp(0.0, 1.0) * self.config.user_pages as f64).round() as u64
    }

    /// DRAM a real controller needs for this FTL's mapping table (page-level: 4 bytes per
    /// logical page; block-level: 4 bytes per logical block).
    pub fn map_dram_bytes(&self) -> u64 {
        self.ftl.map_dram_bytes()
    }

    /// Host memory this model holds for the device's mapping state.
    pub fn model_bytes(&self) -> u64 {
        self.ftl.model_bytes()
    }

    /// Charges one erase on `unit` in the device's GC lane, as its own GC would.
    #[cfg(test)]
    pub(crate) fn erase_in_gc_lane(&mut self, now: Nanos, unit: u32) -> Nanos {
        self.timing.erase_block(now, unit)
    }

    #[cfg(test)]
    pub(crate) fn is_mapped(&self, lpn: u64) -> bool {
        let mut mapped = false;
        self.ftl.for_each_mapped(lpn, 1, |_| mapped = true);
        mapped
    }

    /// Turns payload tracking on (see [`Ssd`'s notes](Ssd#payload-tracking)); pages mapped before carry
    /// token 0. Costs 8 bytes of host memory per physical page. A no-op if already on.
    pub fn enable_payload(&mut self) {
        self.ftl.enable_payload();
    }

    /// This device with payload tracking on.
    pub fn with_payload(mut self) -> Self {
        self.enable_payload();
        self
    }

    pub fn has_payload(&self) -> bool {
        self.ftl.has_payload()
    }

    /// Writes `tokens.len()` pages from `block` as `submit` would (same completion time,
    /// same statistics) and stores `tokens` in the physical pages that now hold them.
    ///
    /// # Panics
    /// If payload tracking is off, or as [`Device::submit`].
    pub fn write_tokens(&mut self, now: Nanos, block: u64, tokens: &[u64], class: IoClass) -> Nanos {
        assert!(self.has_payload(), "{}: write_tokens needs payload tracking (Ssd::enable_payload)", self.config.name);
        let count = u32::try_from(tokens.len()).expect("a write of at most u32::MAX pages");
        let done = self.submit(now, DevOp { kind: DevOpKind::Write, block, count, class });
        self.ftl.set_tokens(block, tokens);
        done
    }

    /// Reads `out.len()` pages from `block` as `submit` would (same completion time, same
    /// statistics) and fills `out` with their tokens (0 for unmapped pages).
    ///
    /// # Panics
    /// If payload tracking is off, or as [`Device::submit`].
    pub fn read_tokens(&mut self, now: Nanos, block: u64, out: &mut [u64], class: IoClass) -> Nanos {
        assert!(self.has_payload(), "{}: read_tokens needs payload tracking (Ssd::enable_payload)", self.config.name);
        let count = u32::try_from(out.len()).expect("a read of at most u32::MAX pages");
        let done = self.submit(now, DevOp { kind: DevOpKind::Read, block, count, class });
        self.ftl.tokens(block, out);
        done
    }

    /// The token page `block` holds now (0 if unmapped or tracking is off), without doing
    /// any I/O: no time passes and no statistic changes. For test oracles.
    ///
    /// # Panics
    /// If `block` is past the device's user capacity.
    pub fn token(&self, block: u64) -> u64 {
        assert!(block < self.config.user_pages, "{}: page {block} is past the last page", self.config.name);
        let mut t = [0];
        self.ftl.tokens(block, &mut t);
        t[0]
    }

    /// How long a read of `count` pages from `block`, submitted at `now` in `class`, would
    /// wait before the slowest of its pages starts (0 if none is mapped): the prediction a
    /// driver weighs when it could read the data elsewhere (SWAN4/5's reads around a busy
    /// SSD). Changes nothing; O(pages).
    pub fn read_wait(&self, now: Nanos, block: u64, count: u32, class: IoClass) -> Nanos {
        let end = (block + u64::from(count)).min(self.config.user_pages);
        let mut wait = 0;
        if block < end {
            self.ftl.for_each_mapped(block, (end - block) as u32, |die| {
                wait = wait.max(self.timing.read_wait(now, die, Prio::of(class)));
            });
        }
        wait
    }

    /// Checks the FTL's internal consistency (O(device size); for tests and debugging).
    pub fn check_invariants(&self) -> Result<(), FtlInvariantError> {
        self.ftl.check_invariants()
    }
}

/// A summary: the mapping tables are far too large to print.
impl std::fmt::Debug for Ssd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ssd")
            .field("name", &self.config.name)
            .field("user_pages", &self.config.user_pages)
            .field("free_block_fraction", &self.free_block_fraction())
            .field("busy_until", &self.busy_until())
            .field("waf", &self.stats.waf())
            .finish_non_exhaustive()
    }
}

impl Device for Ssd {
    /// Costs O(pages touched + pages GC copies), allocates nothing.
    ///
    /// # Panics
    /// If the operation reaches past the device's user capacity.
    fn submit(&mut self, now: Nanos, op: DevOp) -> Nanos {
        self.assert_in_range(&op);
        self.enter_period(now);
        let mut clock = Clocked::new(&mut self.timing, now, Prio::of(op.class));
        carry_out(&mut self.ftl, &mut self.stats, &op, &mut clock);
        let done = clock.finished() + self.config.cmd_latency_ns;
        self.complete(now, &op, done)
    }

    fn busy_until(&self) -> Nanos {
        self.timing.horizon().max(self.last_done)
    }
}

impl Ssd {
    /// [`Device::submit`], also timing the operation on this device idle: its completion
    /// and its service time ([`Served`]), which with it tell the waiting apart. Exactly what
    /// `submit` does to the device, its timing and its statistics; the second timing costs
    /// as much again.
    ///
    /// # Panics
    /// As [`Device::submit`].
    pub fn submit_split(&mut self, now: Nanos, op: DevOp) -> Served {
        self.assert_in_range(&op);
        self.enter_period(now);
        let mut idle = self.idle.take().unwrap_or_else(|| Box::new(self.timing.clone()));
        idle.idle_like(&self.timing);
        let prio = Prio::of(op.class);
        let mut both =
            Both { real: Clocked::new(&mut self.timing, now, prio), idle: Clocked::new(&mut idle, now, prio) };
        carry_out(&mut self.ftl, &mut self.stats, &op, &mut both);
        let (real, alone) = (both.real.finished(), both.idle.finished());
        self.idle = Some(idle);
        let cmd = self.config.cmd_latency_ns;
        let done = self.complete(now, &op, real + cmd);
        Served { done, service_ns: alone + cmd - now }
    }

    /// Books an operation submitted at `now` that completes at `done`.
    #[inline(always)]
    fn complete(&mut self, now: Nanos, op: &DevOp, done: Nanos) -> Nanos {
        if op.kind == DevOpKind::Write {
            self.watch_soft_limit();
        }
        let latency_us = (done - now) / 1_000;
        match op.kind {
            DevOpKind::Read => self.stats.read_latency_us.saturating_record(latency_us),
            DevOpKind::Write => self.stats.write_latency_us.saturating_record(latency_us),
            DevOpKind::Trim | DevOpKind::Flush => {}
        }
        self.last_done = self.last_done.max(done);
        done
    }
}
