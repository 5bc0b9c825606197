//! An array whose members are Triple-A clusters behind one PCIe fabric (issue 21's "a
//! cluster as an SSD"): SWAN, Log-RAID or RAID run by the engine over [`FabricArray`], which
//! carries every member operation from the host through the root complex, the member's
//! switch and its endpoint to the cluster's FIMMs and back ([`Fabric::submit`], one FIMM
//! page operation at a time). So a member's I/O waits on the links it shares with the other
//! members under its switch, on its cluster's local bus, and on its FIMMs' dies — busy with
//! the user's pages or with the FIMMs' own collections.
//!
//! # A member's blocks
//! By default member `i` is cluster `i` of the fabric, switch-major: members 0 … 15 of a
//! 4x16 fabric share switch 0 (and its up-link), member 16 starts switch 1;
//! [`Placement::Spread`] deals them round-robin over the switches. Inside the cluster a member
//! block is dealt to the FIMMs a flash page at a time (blocks 0–3 of a 16 KiB page on FIMM 0,
//! 4–7 on FIMM 1, …), so a segment-sized write spreads over all four FIMMs and, inside each,
//! over its dies ([`crate::triple_a::gc::page_addr`]). Consecutive blocks of one flash page
//! travel as one FIMM operation.
//!
//! # With and without FIMM GC
//! Without GC a block's page is fixed (programmed in place, as the paper's FIMMs are). With
//! GC ([`FabricSpec::gc`]) each FIMM has the management module's flash translation
//! (`swan_core::triple_a::FimmFtl`), filled and aged before the run: a write goes to the
//! FIMM's log head, a read to where the map says, a TRIM unmaps, and a FIMM low on free
//! erase units collects — its copies and erases taking the same dies, local bus and endpoint
//! buffers as the array's I/O, step by step as events of the run ([`Members::wake`]).
//!
//! # Why not `Fabric::carry`
//! `carry` puts an opaque device behind an endpoint in place of its FIMMs; here the members
//! *are* the FIMMs, so each page operation takes the ordinary route to its FIMM.
//!
//! Approximation, as in [`crate::triple_a`]: an operation is timed whole when submitted; a
//! write shorter than a flash page programs the page padded, and a later write may program
//! the rest of the same page again (the FTL's log head does not wait to fill a page).

pub mod report;
pub mod spec;
#[cfg(test)]
mod tests;

pub use report::{FabricReport, FimmGc, OpTally};
pub use spec::{FabricRunError, FabricSpec, Placement};

use crate::members::Members;
use crate::triple_a::gc::{page_addr, GcEvent, GcState};
use crate::triple_a::GcConfig;
use report::Tally;
use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};
use swan_core::io::IoClass;
use swan_core::triple_a::LayoutConfig;
use swan_models::fabric::{Completion, Fabric, FabricConfig, FimmAddr};
use swan_models::fimm::{FimmConfig, FimmOp};
use swan_models::ssd::{Ssd, SsdStats};
use swan_models::{DevOp, DevOpKind, Nanos};

const SLOT: u64 = swan_core::BLOCK_BYTES;

/// How often the share of collecting FIMMs is sampled.
const SAMPLE_NS: Nanos = 1_000_000;

/// An array's members, each a cluster behind one fabric.
pub struct FabricArray {
    fabric: Fabric,
    fimm: FimmConfig,
    members: u32,
    fimms_per_cluster: u64,
    /// Each member's (switch, cluster) in the fabric ([`FabricSpec::placement`]).
    clusters: Vec<(u32, u32)>,
    slots_per_page: u64,
    /// Slots of each FIMM a member may use (its share of the member's blocks).
    user_slots: u64,
    gc: Option<GcState>,
    /// Collection steps due, in (time, order) order.
    due: BinaryHeap<Reverse<(Nanos, u64, GcEvent)>>,
    seq: u64,
    /// Times the engine has been asked to wake the members at and has not yet.
    asked: BTreeSet<Nanos>,
    next_sample: Nanos,
    stats: Vec<SsdStats>,
    /// Per member: when its last write was programmed (a flush waits for it).
    programmed: Vec<Nanos>,
    /// Per FIMM of each member: the flash page its endpoint is filling, and blocks in it.
    open: Vec<Option<(u64, u32)>>,
    tally: Tally,
}

impl FabricArray {
    /// The members of an array of `members` clusters over `spec`'s fabric, checked against
    /// the run: every member must be a cluster, and its blocks must fit one.
    pub fn new(spec: &FabricSpec, members: u32, member_blocks: u64, seed: u64) -> Result<Self, FabricRunError> {
        let config = spec.config()?;
        if members > config.clusters() {
            return Err(FabricRunError(format!(
                "--fabric {}: the array has {members} members but the fabric has {} clusters ({} switches × {})",
                spec.preset,
                config.clusters(),
                config.switches,
                config.clusters_per_switch
            )));
        }
        let fimm = config.fimm.clone();
        let slots_per_page = u64::from(fimm.page_bytes) / SLOT;
        if slots_per_page == 0 || u64::from(fimm.page_bytes) % SLOT != 0 {
            return Err(FabricRunError(format!(
                "--fabric {}: a flash page of {} bytes is not a whole number of 4 KiB blocks",
                spec.preset, fimm.page_bytes
            )));
        }
        let physical = fimm.pages() * slots_per_page;
        let gc_cfg = GcConfig::default();
        let usable = if spec.gc {
            GcState::logical_slots(&gc_cfg, physical).map_err(|e| FabricRunError(e.to_string()))?
        } else {
            physical
        };
        // Whole flash pages per FIMM, so the dealing of pages to FIMMs stays inside each.
        let usable = usable / slots_per_page * slots_per_page;
        let per = u64::from(config.fimms_per_cluster);
        if member_blocks > usable * per {
            return Err(FabricRunError(format!(
                "--fabric {}: members of {member_blocks} blocks do not fit a cluster of {} blocks \
                 ({per} FIMMs of {usable} usable 4 KiB slots{}); use a smaller --ssd-capacity or larger FIMMs",
                spec.preset,
                usable * per,
                if spec.gc { ", over-provisioning taken off" } else { "" }
            )));
        }
        // A FIMM's translation covers just the member's slots on it: flash the member does
        // not use is over-provisioning, not cold data its collections would have to move.
        let user_slots = (member_blocks.div_ceil(slots_per_page).div_ceil(per) * slots_per_page).min(usable);
        let clusters: Vec<(u32, u32)> =
            (0..members).map(|m| spec.placement.cluster_of(m, config.switches, config.clusters_per_switch)).collect();
        let gc = if spec.gc {
            // FTLs for as many switches' clusters as there are members, numbered by member:
            // FIMM `f` of member `m` is `m × FIMMs per cluster + f`, placed where `m` is.
            let switches = members.div_ceil(config.clusters_per_switch).max(1);
            let used = FabricConfig { switches, ..config.clone() };
            let layout = LayoutConfig { chunk_pages: 1, user_slots, spare_slots: 0 };
            let mut state = GcState::new(gc_cfg, &used, layout, seed).map_err(|e| FabricRunError(e.to_string()))?;
            state.place_clusters(clusters.clone());
            state.start_measuring();
            Some(state)
        } else {
            None
        };
        let config_fimms = config.fimms_per_cluster;
        Ok(Self {
            fimms_per_cluster: u64::from(config.fimms_per_cluster),
            clusters,
            fabric: Fabric::new(config).map_err(|e| FabricRunError(format!("--fabric {}: {e}", spec.preset)))?,
            fimm,
            members,
            slots_per_page,
            user_slots,
            gc,
            due: BinaryHeap::new(),
            seq: 0,
            asked: BTreeSet::new(),
            next_sample: 0,
            stats: vec![SsdStats::default(); members as usize],
            programmed: vec![0; members as usize],
            open: vec![None; (members * config_fimms) as usize],
            tally: Tally::default(),
        })
    }

    pub fn fabric(&self) -> &Fabric {
        &self.fabric
    }

    /// Where member `member`'s cluster is in the fabric.
    fn cluster_of(&self, member: u32) -> (u32, u32) {
        self.clusters[member as usize]
    }

    /// Member block `block`: the FIMM of its cluster it is on, and its slot there.
    fn place(&self, block: u64) -> (u32, u64) {
        let unit = block / self.slots_per_page;
        let fimm = (unit % self.fimms_per_cluster) as u32;
        (fimm, unit / self.fimms_per_cluster * self.slots_per_page + block % self.slots_per_page)
    }

    /// The fabric-wide index of FIMM `fimm` of member `member` (the GC state's numbering).
    fn global_fimm(&self, member: u32, fimm: u32) -> u32 {
        member * self.fimms_per_cluster as u32 + fimm
    }

    /// Runs of `count` blocks from `block` that go to one flash page, as (FIMM, first
    /// physical slot, blocks); `locate` maps (FIMM, slot) to the physical slot.
    fn runs(
        &mut self,
        member: u32,
        block: u64,
        count: u32,
        mut locate: impl FnMut(&mut Self, u32, u64) -> u64,
    ) -> Runs {
        let mut runs = Runs::default();
        for b in block..block + u64::from(count) {
            let (fimm, slot) = self.place(b);
            let phys = locate(self, self.global_fimm(member, fimm), slot);
            match runs.0.last_mut() {
                Some((f, first, n))
                    if *f == fimm
                        && phys == *first + u64::from(*n)
                        && phys / self.slots_per_page == *first / self.slots_per_page =>
                {
                    *n += 1
                }
                _ => runs.0.push((fimm, phys, 1)),
            }
        }
        runs
    }

    /// Carries `runs` of `kind` for member `member` through the fabric at `now`; returns
    /// when the last is answered.
    fn route(&mut self, member: u32, now: Nanos, kind: DevOpKind, class: IoClass, runs: &Runs) -> Nanos {
        let (switch, cluster) = self.cluster_of(member);
        let mut done = now;
        for &(fimm, phys, n) in &runs.0 {
            let met = self.gc.as_ref().is_some_and(|g| g.collecting(self.global_fimm(member, fimm)));
            let c = if kind == DevOpKind::Read {
                let op = FimmOp::read(page_addr(phys, &self.fimm), n * SLOT as u32);
                self.fabric
                    .submit(now, FimmAddr { switch, cluster, fimm }, op)
                    .expect("a member's blocks are dealt inside its cluster's FIMMs")
            } else {
                self.write(member, now, fimm, phys, n)
            };
            self.tally.op(class, kind, met, &c);
            done = done.max(c.done);
        }
        done
    }

    /// A write of `n` blocks from physical slot `phys` of FIMM `fimm`: the data crosses the
    /// fabric into the endpoint ([`Fabric::carry`]), which fills a flash page before it
    /// programs it, so a member's stream of small writes programs each page once. The page
    /// is programmed when full, or padded when the FIMM's next write goes to another page.
    /// A program is issued when the write that starts it is submitted, not a few µs later
    /// when its last packet lands, which keeps the cluster's calls in time order; the write
    /// is answered when its data is in the endpoint and the program it starts has its place
    /// in the write buffer (a full buffer holds it back).
    fn write(&mut self, member: u32, now: Nanos, fimm: u32, phys: u64, n: u32) -> Completion {
        let (switch, cluster) = self.cluster_of(member);
        let mut c = self
            .fabric
            .carry(now, switch, cluster, n * SLOT as u32, |at| (at, 0))
            .expect("a member's cluster is in the fabric");
        let page = phys / self.slots_per_page;
        let open = &mut self.open[(member * self.fimms_per_cluster as u32 + fimm) as usize];
        let mut programs = [None, None];
        match *open {
            Some((p, filled)) if p == page => *open = Some((p, filled + n)),
            Some((p, _)) => {
                programs[0] = Some(p);
                *open = Some((page, n));
            }
            None => *open = Some((page, n)),
        }
        if let Some((p, filled)) = *open {
            if u64::from(filled) >= self.slots_per_page {
                programs[1] = Some(p);
                *open = None;
            }
        }
        for p in programs.into_iter().flatten() {
            let pc = self.program(member, now, fimm, p);
            merge(&mut c, &pc);
        }
        c
    }

    /// Programs flash page `page` of FIMM `fimm` of `member` from the endpoint at `now`.
    fn program(&mut self, member: u32, now: Nanos, fimm: u32, page: u64) -> Completion {
        let (switch, cluster) = self.cluster_of(member);
        let op = FimmOp::program(page_addr(page * self.slots_per_page, &self.fimm), self.fimm.page_bytes);
        let c = self
            .fabric
            .cluster_mut(switch, cluster)
            .and_then(|cl| cl.submit(now, fimm, op))
            .expect("a member's blocks are dealt inside its cluster's FIMMs");
        let p = &mut self.programmed[member as usize];
        *p = (*p).max(c.media_done);
        c
    }

    /// Programs every page `member`'s endpoint holds open, padded; returns when all are on flash.
    fn flush(&mut self, member: u32, now: Nanos) -> Nanos {
        for fimm in 0..self.fimms_per_cluster as u32 {
            let at = (member * self.fimms_per_cluster as u32 + fimm) as usize;
            if let Some((page, _)) = self.open[at].take() {
                self.program(member, now, fimm, page);
            }
        }
        now.max(self.programmed[member as usize])
    }

    /// Moves the collections' new steps into the queue of steps due.
    fn take_steps(&mut self) {
        if let Some(gc) = self.gc.as_mut() {
            for (at, e) in gc.out.drain(..) {
                self.due.push(Reverse((at, self.seq, e)));
                self.seq += 1;
            }
        }
    }

    /// Brings member `member`'s GC counts up to date with its FIMMs'.
    fn count_gc(&mut self, member: u32) {
        let Some(gc) = self.gc.as_ref() else { return };
        let (mut copied, mut erased) = (0, 0);
        for f in 0..self.fimms_per_cluster as u32 {
            let (c, e) = gc.fimm_counts(self.global_fimm(member, f));
            copied += c;
            erased += e;
        }
        let s = &mut self.stats[member as usize];
        s.gc_pages_copied = copied;
        s.erases = erased;
    }

    fn sample(&mut self, now: Nanos) {
        if let Some(gc) = self.gc.as_mut() {
            while self.next_sample <= now {
                gc.sample();
                self.next_sample += SAMPLE_NS;
            }
        }
    }

    /// What the fabric measured over the run, at `now`.
    pub fn report(&self, now: Nanos) -> FabricReport {
        let cfg = self.fabric.config();
        // The up-links of the switches the members sit under, in switch order.
        let mut switches: Vec<u32> = self.clusters.iter().map(|&(s, _)| s).collect();
        switches.sort_unstable();
        switches.dedup();
        let uplink = switches
            .into_iter()
            .map(|s| {
                let (down, up) = self.fabric.uplink_reserved_ns(s).unwrap_or((0, 0));
                down.max(up) as f64 / now.max(1) as f64
            })
            .collect();
        let bus = (0..self.members)
            .map(|m| {
                let (s, c) = self.cluster_of(m);
                let cl = self.fabric.cluster(s, c).expect("a member's cluster");
                cl.local_bus().reserved_ns() as f64 / now.max(1) as f64
            })
            .sum::<f64>()
            / f64::from(self.members.max(1));
        FabricReport::new(&cfg.name, self.members, &self.tally, uplink, bus, self.gc.as_ref().map(GcState::finish))
    }
}

/// Adds what `b` waited for to `c`, and ends `c` when `b` ends if later.
fn merge(c: &mut Completion, b: &Completion) {
    c.done = c.done.max(b.done);
    c.media_done = c.media_done.max(b.media_done);
    c.link_contention_ns += b.link_contention_ns;
    c.storage_contention_ns += b.storage_contention_ns;
    c.queue_stall.root_complex_ns += b.queue_stall.root_complex_ns;
    c.queue_stall.switch_ns += b.queue_stall.switch_ns;
    c.queue_stall.endpoint_ns += b.queue_stall.endpoint_ns;
}

/// Runs of blocks bound for one flash page each: (FIMM in the cluster, first physical slot,
/// blocks).
#[derive(Default)]
struct Runs(Vec<(u32, u64, u32)>);

impl Members for FabricArray {
    fn count(&self) -> usize {
        self.members as usize
    }

    fn submit(&mut self, member: u32, now: Nanos, op: DevOp) -> Nanos {
        self.sample(now);
        let done = match op.kind {
            DevOpKind::Read => {
                let runs = self.runs(member, op.block, op.count, |s, f, slot| match &s.gc {
                    Some(gc) => gc.resolve(f, slot),
                    None => slot,
                });
                self.route(member, now, DevOpKind::Read, op.class, &runs)
            }
            DevOpKind::Write => {
                let runs = self.runs(member, op.block, op.count, |s, f, slot| match s.gc.as_mut() {
                    Some(gc) => gc.write(now, f, slot),
                    None => slot,
                });
                self.take_steps();
                self.count_gc(member);
                self.route(member, now, DevOpKind::Write, op.class, &runs)
            }
            // The flash translation is the host's (Triple-A §4): a TRIM only unmaps there.
            DevOpKind::Trim => {
                let blocks = if self.gc.is_some() { op.block..op.block + u64::from(op.count) } else { 0..0 };
                for b in blocks {
                    let (fimm, slot) = self.place(b);
                    let f = self.global_fimm(member, fimm);
                    if let Some(gc) = self.gc.as_mut() {
                        gc.trim(f, slot);
                    }
                }
                now
            }
            // The endpoint's write buffer acknowledges before programming: a flush waits.
            DevOpKind::Flush => self.flush(member, now),
        };
        let s = &mut self.stats[member as usize];
        let latency_us = (done - now) / 1_000;
        match op.kind {
            DevOpKind::Read => {
                s.host_pages_read += u64::from(op.count);
                s.read_latency_us.saturating_record(latency_us);
            }
            DevOpKind::Write => {
                s.host_pages_written += u64::from(op.count);
                s.write_latency_us.saturating_record(latency_us);
            }
            DevOpKind::Trim => s.host_pages_trimmed += u64::from(op.count),
            DevOpKind::Flush => {}
        }
        done
    }

    fn read_wait(&self, member: u32, now: Nanos, block: u64, count: u32, _class: IoClass) -> Nanos {
        let (s, c) = self.cluster_of(member);
        let cluster = self.fabric.cluster(s, c).expect("a member's cluster");
        (block..block + u64::from(count))
            .map(|b| cluster.fimms()[self.place(b).0 as usize].busy_until().saturating_sub(now))
            .max()
            .unwrap_or(0)
    }

    fn busy_until(&self, member: u32) -> Nanos {
        let (s, c) = self.cluster_of(member);
        self.fabric.cluster(s, c).expect("a member's cluster").busy_until()
    }

    fn apply_untimed(&mut self, member: u32, op: DevOp) {
        let Some(gc) = self.gc.as_mut() else { return };
        let per = self.fimms_per_cluster as u32;
        for b in op.block..op.block + u64::from(op.count) {
            let unit = b / self.slots_per_page;
            let fimm = member * per + (unit % self.fimms_per_cluster) as u32;
            let slot = unit / self.fimms_per_cluster * self.slots_per_page + b % self.slots_per_page;
            match op.kind {
                DevOpKind::Write => gc.write_untimed(fimm, slot),
                DevOpKind::Trim => gc.trim(fimm, slot),
                DevOpKind::Read | DevOpKind::Flush => {}
            }
        }
    }

    fn reset_stats(&mut self) {
        self.stats.iter_mut().for_each(|s| *s = SsdStats::default());
        if let Some(gc) = self.gc.as_mut() {
            gc.reset_counts();
        }
    }

    fn stats(&self, member: u32) -> &SsdStats {
        &self.stats[member as usize]
    }

    fn ssds(&mut self) -> &mut [Ssd] {
        &mut []
    }

    fn wakeup(&mut self) -> Option<Nanos> {
        let Reverse((at, _, _)) = *self.due.peek()?;
        self.asked.insert(at).then_some(at)
    }

    fn wake(&mut self, now: Nanos) {
        self.asked.remove(&now);
        self.sample(now);
        while let Some(&Reverse((at, _, event))) = self.due.peek() {
            if at > now {
                break;
            }
            self.due.pop();
            let gc = self.gc.as_mut().expect("steps come from collections");
            gc.step(now, event, &mut self.fabric).expect("a collection stays inside its FIMM's cluster");
            self.take_steps();
            if let GcEvent::Done(_) = event {
                (0..self.members).for_each(|m| self.count_gc(m));
            }
        }
    }

    fn slow_ns(&mut self, _member: u32, _now: Nanos) -> Nanos {
        0
    }

    fn busy_fraction(&self, member: u32, elapsed: Nanos) -> f64 {
        let (s, c) = self.cluster_of(member);
        let bus = self.fabric.cluster(s, c).expect("a member's cluster").local_bus().reserved_ns();
        bus as f64 / elapsed.max(1) as f64
    }

    fn user_blocks(&self, _member: u32) -> u64 {
        self.user_slots * self.fimms_per_cluster
    }

    fn map_dram_bytes(&self, _member: u32) -> u64 {
        0
    }

    /// With GC, the FIMMs' maps (8 bytes a physical slot, as `FimmFtl` keeps them).
    fn model_bytes(&self, _member: u32) -> u64 {
        let physical = self.fimm.pages() * self.slots_per_page * self.fimms_per_cluster;
        if self.gc.is_some() {
            8 * physical
        } else {
            0
        }
    }

    fn fabric_report(&self, now: Nanos) -> Option<FabricReport> {
        Some(self.report(now))
    }
}
