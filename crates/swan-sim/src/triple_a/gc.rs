//! GC-active FIMMs: each FIMM's flash translation ([`FimmFtl`], the management module's,
//! §6.7) and the collections it decides, carried out inside the FIMM's cluster by its
//! endpoint — each valid slot read over the local bus into the endpoint, programmed back a
//! flash page at a time, then the victim's blocks erased on every die. Collections thus take
//! the same dies, local bus and endpoint buffers as the user's requests: where GC and link
//! contention meet.

use super::TripleARunError;
use crate::rng::SimRng;
use std::collections::HashMap;
use swan_core::triple_a::{Collection, FimmFtl, LayoutConfig};
use swan_models::fabric::{Fabric, FimmAddr};
use swan_models::fimm::{FimmConfig, FimmOp, PageAddr};
use swan_models::Nanos;

const SLOT: u32 = swan_core::BLOCK_SIZE as u32;

/// GC-active FIMMs: how much flash GC keeps for itself, when it starts, how hard it copies.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GcConfig {
    /// The share of each FIMM's flash the data layout never sees (over-provisioning).
    /// 10 %: between a consumer SSD's 7 % and an enterprise one's 28 %, and the least that
    /// leaves a 64-unit FIMM more than `trigger_units` + 2 spare units (7 % leaves 4).
    pub over_provisioning: f64,
    /// A FIMM starts collecting when its free erase units fall to this many (one collection
    /// at a time; more only when fewer than two are left).
    pub trigger_units: u32,
    /// Flash pages of one collection being copied at once: 16, one per die of the FIMM, so a
    /// collection keeps every die busy without taking every endpoint buffer entry.
    pub pages_in_flight: u32,
    /// Before the run, every FIMM is filled and then overwritten at random this many times
    /// its user slots (no time passes), so that GC is in steady state from the start.
    pub aging_passes: f64,
    /// Refuse runs whose FTL maps would take more than this (8 bytes per slot).
    pub max_map_bytes: u64,
    /// Collections are carried out on the cluster's dies, bus and buffers (true), or take no
    /// time at all (false: an ideal FTL whose only effect is to place writes out of place,
    /// for measuring placement apart from what GC costs).
    pub timed: bool,
}

impl Default for GcConfig {
    fn default() -> Self {
        Self {
            over_provisioning: 0.10,
            trigger_units: 3,
            pages_in_flight: 16,
            aging_passes: 1.0,
            max_map_bytes: 4 << 30,
            timed: true,
        }
    }
}

/// A collection's step, as an event of the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum GcEvent {
    /// Read the valid slots bound for flash page `group` of collection `job`.
    Read(u64, u32),
    /// Program flash page `group` of collection `job` (its slots are in the endpoint).
    Program(u64, u32),
    /// Every copy of collection `job` is programmed: erase its victim.
    Erase(u64),
    /// Collection `job`'s erase is done.
    Done(u64),
}

struct Job {
    fimm: u32,
    collection: Collection,
    /// Consecutive runs of `collection.copies` that go to one flash page.
    groups: Vec<(u32, u32)>,
    next_group: u32,
    programmed: u32,
    last_programmed: Nanos,
}

/// What the collections did over the measured part of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct GcReport {
    pub collections: u64,
    pub copied_slots: u64,
    pub erased_units: u64,
    /// Mean share of FIMMs collecting, sampled every bus window.
    pub collecting_share: f64,
    /// Measured requests with a page on a FIMM that was collecting when it was routed.
    pub requests_meeting_gc: u64,
    pub latency_meeting_gc_us: f64,
    pub latency_clear_of_gc_us: f64,
}

pub(crate) struct GcState {
    cfg: GcConfig,
    fimm: FimmConfig,
    fimms_per_cluster: u32,
    clusters_per_switch: u32,
    /// Where each cluster of the numbering sits in the fabric, when not switch-major
    /// ([`GcState::place_clusters`]).
    cluster_at: Option<Vec<(u32, u32)>>,
    ftls: Vec<FimmFtl>,
    jobs: HashMap<u64, Job>,
    next_job: u64,
    /// Events to schedule, drained by the driver after each call.
    pub(crate) out: Vec<(Nanos, GcEvent)>,
    pub(super) report: GcReport,
    /// Per FIMM over the whole run: slots copied by its collections, units erased.
    copied: Vec<u64>,
    erased: Vec<u64>,
    samples: u64,
    collecting_sum: u64,
    meeting_ns: u128,
    clear_ns: u128,
    clear: u64,
    measuring: bool,
}

impl GcState {
    /// Every FIMM's FTL, filled with the layout's user slots and aged by random overwrites
    /// drawn from `seed`. `layout` is the data layout's view of one FIMM.
    pub(crate) fn new(
        cfg: GcConfig,
        fabric: &swan_models::fabric::FabricConfig,
        layout: LayoutConfig,
        seed: u64,
    ) -> Result<Self, TripleARunError> {
        let fimm = fabric.fimm.clone();
        let fimms = fabric.switches * fabric.clusters_per_switch * fabric.fimms_per_cluster;
        let slots_per_page = fimm.page_bytes / SLOT;
        let per_unit = u64::from(slots_per_page)
            * u64::from(fimm.dies())
            * u64::from(fimm.planes_per_die)
            * u64::from(fimm.pages_per_block);
        let physical = per_unit * u64::from(fimm.blocks_per_plane);
        let map_bytes = 8 * physical * u64::from(fimms);
        if map_bytes > cfg.max_map_bytes {
            return Err(TripleARunError::Config(format!(
                "--gc: {fimms} FIMMs of {physical} 4 KiB slots need {} MiB of FTL maps (limit {} MiB); \
                 scale the FIMMs down with --blocks-per-plane / --pages-per-block",
                map_bytes >> 20,
                cfg.max_map_bytes >> 20
            )));
        }
        let per_unit = u32::try_from(per_unit)
            .map_err(|_| TripleARunError::Config(format!("--gc: an erase unit of {per_unit} slots is too large")))?;
        let logical = layout.user_slots + layout.spare_slots;
        let mut rng = SimRng::fork(seed, 0x6C_A61E);
        let mut ftls = Vec::with_capacity(fimms as usize);
        for _ in 0..fimms {
            let mut ftl = FimmFtl::new(per_unit, fimm.blocks_per_plane, logical, cfg.trigger_units)?;
            let write = |ftl: &mut FimmFtl, slot: u64| {
                while ftl.wants_collection() {
                    ftl.collect();
                    ftl.collected();
                }
                ftl.write(slot);
            };
            (0..layout.user_slots).for_each(|s| write(&mut ftl, s));
            let overwrites = (cfg.aging_passes * layout.user_slots as f64) as u64;
            for _ in 0..overwrites {
                let s = rng.below(layout.user_slots);
                write(&mut ftl, s);
            }
            ftls.push(ftl);
        }
        Ok(Self {
            cfg,
            fimm,
            fimms_per_cluster: fabric.fimms_per_cluster,
            clusters_per_switch: fabric.clusters_per_switch,
            cluster_at: None,
            copied: vec![0; ftls.len()],
            erased: vec![0; ftls.len()],
            ftls,
            jobs: HashMap::new(),
            next_job: 0,
            out: Vec::new(),
            report: GcReport::default(),
            samples: 0,
            collecting_sum: 0,
            meeting_ns: 0,
            clear_ns: 0,
            clear: 0,
            measuring: false,
        })
    }

    /// The layout's slots of a FIMM with `physical` slots, over-provisioning taken off.
    pub(crate) fn logical_slots(cfg: &GcConfig, physical: u64) -> Result<u64, TripleARunError> {
        if !(cfg.over_provisioning > 0.0 && cfg.over_provisioning < 0.5) {
            return Err(TripleARunError::Config(format!(
                "--gc-op {}: over-provisioning must be in (0, 0.5)",
                cfg.over_provisioning
            )));
        }
        if cfg.pages_in_flight == 0 {
            return Err(TripleARunError::Config("a collection with 0 pages in flight never ends".into()));
        }
        Ok((physical as f64 * (1.0 - cfg.over_provisioning)) as u64)
    }

    pub(crate) fn collecting(&self, fimm: u32) -> bool {
        self.ftls[fimm as usize].collecting() > 0
    }

    /// Where slot `slot` of `fimm` is in flash (a slot never written reads where the static
    /// layout would have put it).
    pub(crate) fn resolve(&self, fimm: u32, slot: u64) -> u64 {
        self.ftls[fimm as usize].resolve(slot).unwrap_or(slot)
    }

    /// Writes slot `slot` of `fimm` at its log head, collecting first if it must.
    pub(crate) fn write(&mut self, now: Nanos, fimm: u32, slot: u64) -> u64 {
        while self.ftls[fimm as usize].wants_collection() {
            if self.cfg.timed {
                self.start(now, fimm);
            } else {
                self.collect_untimed(fimm);
            }
        }
        self.ftls[fimm as usize].write(slot)
    }

    /// A collection of `fimm` carried out at once: counted, but no die, bus or buffer pays.
    fn collect_untimed(&mut self, fimm: u32) {
        let ftl = &mut self.ftls[fimm as usize];
        let Some(collection) = ftl.collect() else { return };
        ftl.collected();
        let copies = collection.copies.len() as u64;
        self.copied[fimm as usize] += copies;
        self.erased[fimm as usize] += 1;
        if self.measuring {
            self.report.collections += 1;
            self.report.copied_slots += copies;
            self.report.erased_units += 1;
        }
    }

    /// Writes slot `slot` of `fimm` at its log head with no time passing: a collection it
    /// needs first is carried out at once (the untimed pre-fill of an array over the fabric).
    pub(crate) fn write_untimed(&mut self, fimm: u32, slot: u64) {
        let ftl = &mut self.ftls[fimm as usize];
        while ftl.wants_collection() {
            ftl.collect();
            ftl.collected();
        }
        ftl.write(slot);
    }

    /// Slots `fimm`'s collections copied and units they erased, over the whole run.
    pub(crate) fn fimm_counts(&self, fimm: u32) -> (u64, u64) {
        (self.copied[fimm as usize], self.erased[fimm as usize])
    }

    /// Forget the per-FIMM counts (after an untimed pre-fill).
    pub(crate) fn reset_counts(&mut self) {
        self.copied.iter_mut().for_each(|c| *c = 0);
        self.erased.iter_mut().for_each(|c| *c = 0);
    }

    /// The page in slot `slot` of `fimm` has moved to another FIMM (or was trimmed).
    pub(crate) fn trim(&mut self, fimm: u32, slot: u64) {
        self.ftls[fimm as usize].trim(slot);
    }

    fn start(&mut self, now: Nanos, fimm: u32) {
        let Some(collection) = self.ftls[fimm as usize].collect() else { return };
        let per_page = u64::from(self.fimm.page_bytes / SLOT);
        let mut groups: Vec<(u32, u32)> = Vec::new();
        for (i, c) in collection.copies.iter().enumerate() {
            match groups.last_mut() {
                Some((start, end)) if collection.copies[*start as usize].to / per_page == c.to / per_page => {
                    *end = i as u32 + 1
                }
                _ => groups.push((i as u32, i as u32 + 1)),
            }
        }
        self.copied[fimm as usize] += collection.copies.len() as u64;
        if self.measuring {
            self.report.collections += 1;
            self.report.copied_slots += collection.copies.len() as u64;
        }
        let job = self.next_job;
        self.next_job += 1;
        let first = (groups.len() as u32).min(self.cfg.pages_in_flight);
        (0..first).for_each(|g| self.out.push((now, GcEvent::Read(job, g))));
        if groups.is_empty() {
            self.out.push((now, GcEvent::Erase(job)));
        }
        self.jobs.insert(job, Job { fimm, collection, groups, next_group: first, programmed: 0, last_programmed: now });
    }

    /// Numbers the clusters in the order given, as (switch, cluster) places in the fabric,
    /// instead of switch-major: for an array whose members are spread over the switches.
    pub(crate) fn place_clusters(&mut self, at: Vec<(u32, u32)>) {
        debug_assert!(at.len() * self.fimms_per_cluster as usize <= self.ftls.len());
        self.cluster_at = Some(at);
    }

    fn addr(&self, fimm: u32) -> FimmAddr {
        let cluster = fimm / self.fimms_per_cluster;
        let (switch, cluster) = match &self.cluster_at {
            Some(at) => at[cluster as usize],
            None => (cluster / self.clusters_per_switch, cluster % self.clusters_per_switch),
        };
        FimmAddr { switch, cluster, fimm: fimm % self.fimms_per_cluster }
    }

    /// Carries out one step of a collection.
    pub(crate) fn step(&mut self, now: Nanos, event: GcEvent, fabric: &mut Fabric) -> Result<(), TripleARunError> {
        match event {
            GcEvent::Read(job, group) => {
                let j = &self.jobs[&job];
                let at = self.addr(j.fimm);
                let (start, end) = j.groups[group as usize];
                let cluster = fabric.cluster_mut(at.switch, at.cluster)?;
                let mut ready = now;
                for c in &j.collection.copies[start as usize..end as usize] {
                    let op = FimmOp::read(page_addr(c.from, &self.fimm), SLOT);
                    ready = ready.max(cluster.submit(now, at.fimm, op)?.done);
                }
                self.out.push((ready, GcEvent::Program(job, group)));
            }
            GcEvent::Program(job, group) => {
                let at = self.addr(self.jobs[&job].fimm);
                let j = self.jobs.get_mut(&job).expect("a collection in progress");
                let (start, end) = j.groups[group as usize];
                let first = j.collection.copies[start as usize].to;
                let op = FimmOp::program(page_addr(first, &self.fimm), (end - start) * SLOT);
                let c = fabric.cluster_mut(at.switch, at.cluster)?.submit(now, at.fimm, op)?;
                j.programmed += 1;
                j.last_programmed = j.last_programmed.max(c.media_done);
                if j.next_group < j.groups.len() as u32 {
                    // The next page's reads start once the endpoint has taken this one.
                    self.out.push((c.done, GcEvent::Read(job, j.next_group)));
                    j.next_group += 1;
                } else if j.programmed == j.groups.len() as u32 {
                    self.out.push((j.last_programmed, GcEvent::Erase(job)));
                }
            }
            GcEvent::Erase(job) => {
                let j = &self.jobs[&job];
                let at = self.addr(j.fimm);
                let cluster = fabric.cluster_mut(at.switch, at.cluster)?;
                let mut done = now;
                for die in 0..self.fimm.dies() {
                    let block = PageAddr {
                        package: die / self.fimm.dies_per_package,
                        die: die % self.fimm.dies_per_package,
                        plane: 0,
                        block: j.collection.victim,
                        page: 0,
                    };
                    let op = FimmOp::erase(block).multi_plane(self.fimm.planes_per_die);
                    done = done.max(cluster.submit(now, at.fimm, op)?.done);
                }
                self.out.push((done, GcEvent::Done(job)));
            }
            GcEvent::Done(job) => {
                let j = self.jobs.remove(&job).expect("a collection in progress");
                self.ftls[j.fimm as usize].collected();
                self.erased[j.fimm as usize] += 1;
                if self.measuring {
                    self.report.erased_units += 1;
                }
            }
        }
        Ok(())
    }

    /// Counts from now on.
    pub(crate) fn start_measuring(&mut self) {
        self.measuring = true;
    }

    /// Samples how many FIMMs are collecting.
    pub(crate) fn sample(&mut self) {
        if self.measuring {
            self.samples += 1;
            self.collecting_sum += self.ftls.iter().filter(|f| f.collecting() > 0).count() as u64;
        }
    }

    /// A measured request of `latency` that did (`met`) or did not meet a collection.
    pub(super) fn request(&mut self, latency: Nanos, met: bool) {
        if met {
            self.report.requests_meeting_gc += 1;
            self.meeting_ns += u128::from(latency);
        } else {
            self.clear += 1;
            self.clear_ns += u128::from(latency);
        }
    }

    /// Every FIMM's map is whole (tests run it at the end of each GC run); Err names the
    /// first FIMM whose map is not.
    #[cfg(test)]
    pub(crate) fn check(&self) -> Result<(), (usize, swan_core::triple_a::FimmMapError)> {
        for (i, f) in self.ftls.iter().enumerate() {
            f.check().map_err(|e| (i, e))?;
        }
        Ok(())
    }

    pub(crate) fn finish(&self) -> GcReport {
        let mean = |ns: u128, n: u64| ns as f64 / n.max(1) as f64 / 1_000.0;
        GcReport {
            collecting_share: self.collecting_sum as f64 / (self.samples.max(1) * self.ftls.len() as u64) as f64,
            latency_meeting_gc_us: mean(self.meeting_ns, self.report.requests_meeting_gc),
            latency_clear_of_gc_us: mean(self.clear_ns, self.clear),
            ..self.report
        }
    }
}

/// Slot `slot` of a FIMM: consecutive flash pages go to consecutive dies, then planes, so a
/// run of pages is spread over the module's parallel units; erase unit `u` is flash block `u`
/// of every die and plane.
pub(crate) fn page_addr(slot: u64, c: &FimmConfig) -> PageAddr {
    let unit = slot / u64::from(c.page_bytes / SLOT);
    let dies = u64::from(c.dies());
    let die = (unit % dies) as u32;
    let rest = unit / dies;
    let plane = (rest % u64::from(c.planes_per_die)) as u32;
    let rest = rest / u64::from(c.planes_per_die);
    PageAddr {
        package: die / c.dies_per_package,
        die: die % c.dies_per_package,
        plane,
        block: (rest / u64::from(c.pages_per_block)) as u32,
        page: (rest % u64::from(c.pages_per_block)) as u32,
    }
}
