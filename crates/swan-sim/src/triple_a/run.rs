//! The event loop of a Triple-A run (see the module docs of [`super`]).

use super::classes::Met;
use super::gc::{page_addr, GcEvent, GcState};
use super::report::{Tally, TripleAReport};
use super::watch::{Outstanding, Watch};
use super::{TripleAConfig, TripleARunError};
use crate::hot_clusters::{HotClusterSource, HotClusterSpec};
use crate::source::{ArrivalSource, Next, Pacing};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use swan_core::scheme::ReqOp;
use swan_core::triple_a::{
    Action, ActionKind, Autonomic, Carry, Completed, DataLayout, FabricShape, LayoutConfig, Location, Move, OpKind,
    PageTiming, Stalled, StaticLayout,
};
use swan_core::BLOCK_SIZE;
use swan_models::fabric::{Completion, Fabric, FimmAddr};
use swan_models::fimm::FimmOp;
use swan_models::Nanos;

const PAGE: u32 = BLOCK_SIZE as u32;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// A closed-loop slot issues its next request.
    Issue,
    /// Request slot `n` has its answer.
    Done(u32),
    /// Pending copy `n` can start (its data is in the endpoint, or must be read first).
    Copy(u64),
    /// A copy's page is acknowledged at its new place: a migration's (`true`) or a reshape's,
    /// from cluster `from` to cluster `to`.
    CopyDone { migration: bool, from: u32, to: u32 },
    /// Sample the buses' utilisation.
    Tick,
    /// A step of a FIMM's garbage collection.
    Gc(GcEvent),
}

/// A page's move still to carry out.
#[derive(Clone, Copy, Debug)]
struct PendingCopy {
    mv: Move,
    kind: ActionKind,
    read_first: bool,
    /// Where the page was in its old FIMM's flash when the move was decided.
    from_flash: u64,
    /// When the move was decided.
    decided: Nanos,
}

/// One request in flight: when it was issued and how each page went.
#[derive(Clone, Debug, Default)]
struct Slot {
    start: Nanos,
    /// What it met when routed (and whether it writes).
    met: Met,
    /// A page of it went to a FIMM that was collecting garbage.
    met_gc: bool,
    pages: Vec<(u64, Location, Completion)>,
}

/// A Triple-A run in progress. See the module docs of [`super`].
pub struct TripleADriver {
    cfg: TripleAConfig,
    fabric: Fabric,
    manager: Autonomic,
    source: Box<dyn ArrivalSource>,
    shape: FabricShape,
    events: BinaryHeap<Reverse<(Nanos, u64, Event)>>,
    seq: u64,
    slots: Vec<Slot>,
    free_slots: Vec<u32>,
    copies: HashMap<u64, PendingCopy>,
    watch: Watch,
    tally: Tally,
    measure_from: Nanos,
    /// Open loop: the request arriving at the next `Issue` (drawn ahead to know when).
    due: Option<Next>,
    closed: bool,
    /// The pages of one observation, reused.
    scratch: Vec<u64>,
    /// GC-active FIMMs, if the run has them.
    gc: Option<GcState>,
    /// Per switch: the last request routed through it found its queue full. The queue is
    /// examined when it fills, not again for every request that waits while it stays full.
    queue_full: Vec<bool>,
    /// Per cluster: migration copies leaving it and landing on it (decided, not yet landed).
    migrating: Vec<[u32; 2]>,
    /// Per cluster: its local bus's reserved time when measurement began, and the measured
    /// requests it served a page of.
    bus_at_measure: Option<Vec<Nanos>>,
    cluster_requests: Vec<u64>,
    /// Per moved page: where it was before its latest copy (place and flash slot) and when
    /// that copy's program ends at its new place (`Nanos::MAX` until the copy is under way).
    copy_programmed: HashMap<u64, (Location, u64, Nanos)>,
}

impl TripleADriver {
    /// A run of `cfg`, its requests from the source `make_source` builds for the static layout.
    pub fn new(
        cfg: TripleAConfig,
        make_source: impl FnOnce(StaticLayout) -> Result<Box<dyn ArrivalSource>, TripleARunError>,
    ) -> Result<Self, TripleARunError> {
        if !(cfg.sim_seconds > 0.0 && cfg.sim_seconds.is_finite()) {
            return Err(TripleARunError::Config(format!("run for a positive time, not {} s", cfg.sim_seconds)));
        }
        if !(0.0..cfg.sim_seconds).contains(&cfg.measure_from_s) {
            return Err(TripleARunError::Config("measurement must start within the run".into()));
        }
        if cfg.bus_window_ns == 0 {
            return Err(TripleARunError::Config("the bus-utilisation window must be positive".into()));
        }
        let fabric = Fabric::new(cfg.fabric.clone())?;
        let f = &cfg.fabric;
        let shape = FabricShape::new(f.switches, f.clusters_per_switch, f.fimms_per_cluster)?;
        let layout = DataLayout::new(shape, layout_config(&cfg)?)?;
        let timing = PageTiming {
            t_dma: f.endpoint.local_bus.xfer_ns(u64::from(PAGE)),
            t_exe_read: f.fimm.t_read_ns,
            t_exe_write: f.fimm.t_prog_ns,
        };
        let gc = match cfg.gc {
            Some(g) => Some(GcState::new(g, f, layout.fixed().config(), cfg.gc_seed)?),
            None => None,
        };
        let source = make_source(*layout.fixed())?;
        let depth = match source.pacing() {
            Pacing::Closed { depth } => Some(depth.max(1)),
            Pacing::Timed => None,
        };
        let manager = Autonomic::new(cfg.autonomic, timing, layout)?;
        let mut d = Self {
            watch: Watch::new(shape.fimms(), shape.clusters()),
            measure_from: (cfg.measure_from_s * 1e9) as Nanos,
            cfg,
            fabric,
            manager,
            source,
            shape,
            events: BinaryHeap::new(),
            seq: 0,
            slots: Vec::new(),
            free_slots: Vec::new(),
            copies: HashMap::new(),
            tally: Tally::new(),
            due: None,
            closed: depth.is_some(),
            scratch: Vec::new(),
            gc,
            queue_full: vec![false; shape.switches as usize],
            migrating: vec![[0; 2]; shape.clusters() as usize],
            bus_at_measure: None,
            cluster_requests: vec![0; shape.clusters() as usize],
            copy_programmed: HashMap::new(),
        };
        match depth {
            Some(depth) => (0..depth).for_each(|_| d.push(0, Event::Issue)),
            None => {
                d.due = d.source.next(0)?;
                if let Some(first) = d.due {
                    d.push(first.at, Event::Issue);
                }
            }
        }
        d.push(d.cfg.bus_window_ns, Event::Tick);
        Ok(d)
    }

    /// A run of `cfg` under Triple-A's micro-benchmark ([`HotClusterSource`]).
    pub fn hot_clusters(mut cfg: TripleAConfig, spec: HotClusterSpec, seed: u64) -> Result<Self, TripleARunError> {
        cfg.gc_seed = seed;
        Self::new(cfg, |layout| Ok(Box::new(HotClusterSource::new(layout, spec, seed)?) as Box<dyn ArrivalSource>))
    }

    /// The non-autonomic array's placement, which the run starts from.
    pub fn static_layout(&self) -> StaticLayout {
        *self.manager.layout().fixed()
    }

    /// Runs to the end of the simulated time and reports.
    pub fn run(mut self) -> Result<TripleAReport, TripleARunError> {
        let end = (self.cfg.sim_seconds * 1e9) as Nanos;
        while let Some(Reverse((now, _, event))) = self.events.pop() {
            if now > end {
                break;
            }
            match event {
                Event::Issue => self.issue(now)?,
                Event::Done(slot) => self.done(now, slot),
                Event::Copy(key) => self.copy(now, key)?,
                Event::CopyDone { migration, from, to } => {
                    let kind = if migration { ActionKind::Migrate } else { ActionKind::Reshape };
                    self.manager.copies_done(kind, 1);
                    if migration {
                        self.migrating[from as usize][0] -= 1;
                        self.migrating[to as usize][1] -= 1;
                    }
                }
                Event::Tick => {
                    self.watch.sample_buses(&self.fabric, self.cfg.bus_window_ns);
                    if now >= self.measure_from && self.bus_at_measure.is_none() {
                        self.bus_at_measure = Some(self.bus_reserved());
                    }
                    if let Some(gc) = self.gc.as_mut() {
                        if now >= self.measure_from {
                            gc.start_measuring();
                        }
                        gc.sample();
                    }
                    self.push(now + self.cfg.bus_window_ns, Event::Tick);
                }
                Event::Gc(step) => {
                    if let Some(gc) = self.gc.as_mut() {
                        gc.step(now, step, &mut self.fabric)?;
                    }
                }
            }
            self.schedule_gc();
        }
        let measured = end - self.measure_from;
        let label = self.cfg.label();
        let mut report = self.tally.report(label, measured, self.manager.stats(), self.manager.layout().moved_pages());
        report.gc = self.gc.as_ref().map(GcState::finish);
        let from = self.bus_at_measure.clone().unwrap_or_else(|| vec![0; self.cluster_requests.len()]);
        let busiest = self.bus_reserved().iter().zip(&from).map(|(&e, &s)| e - s).max().unwrap_or(0);
        report.busiest_bus_share = busiest as f64 / measured.max(1) as f64;
        let most = self.cluster_requests.iter().copied().max().unwrap_or(0);
        report.busiest_cluster_request_share = most as f64 / report.requests.max(1) as f64;
        #[cfg(test)]
        if let Some(gc) = &self.gc {
            gc.check().expect("every FIMM's map whole after the run");
        }
        Ok(report)
    }

    /// Every cluster's local-bus time reserved so far (future reservations included).
    fn bus_reserved(&self) -> Vec<Nanos> {
        let cps = self.shape.clusters_per_switch;
        (0..self.shape.clusters())
            .map(|c| self.fabric.cluster(c / cps, c % cps).expect("every cluster exists").local_bus().reserved_ns())
            .collect()
    }

    /// Puts the collection steps decided since the last call on the calendar.
    fn schedule_gc(&mut self) {
        let Some(gc) = self.gc.as_mut() else { return };
        let steps = std::mem::take(&mut gc.out);
        for (at, step) in steps {
            self.push(at, Event::Gc(step));
        }
    }

    /// Where slot `slot` of `fimm` is in flash: the slot itself unless its FIMM has an FTL.
    fn flash_slot(&self, fimm: u32, slot: u64) -> u64 {
        self.gc.as_ref().map_or(slot, |gc| gc.resolve(fimm, slot))
    }

    /// Where a write of slot `slot` of `fimm` goes in flash.
    fn flash_write(&mut self, now: Nanos, fimm: u32, slot: u64) -> u64 {
        self.gc.as_mut().map_or(slot, |gc| gc.write(now, fimm, slot))
    }

    fn push(&mut self, at: Nanos, event: Event) {
        self.seq += 1;
        self.events.push(Reverse((at, self.seq, event)));
    }

    fn addr(&self, loc: Location) -> FimmAddr {
        let cps = self.shape.clusters_per_switch;
        FimmAddr { switch: loc.cluster / cps, cluster: loc.cluster % cps, fimm: loc.fimm }
    }

    /// Routes every page of the source's next request; a page that stalls is shown to the
    /// laggard detector at once.
    fn issue(&mut self, now: Nanos) -> Result<(), TripleARunError> {
        let next = if self.closed {
            self.source.next(now)?
        } else {
            let due = self.due.take();
            self.due = self.source.next(now)?;
            if let Some(n) = self.due {
                self.push(n.at.max(now), Event::Issue);
            }
            due
        };
        let Some(next) = next else { return Ok(()) };
        let req = next.req;
        let write = match req.op {
            ReqOp::Read => false,
            ReqOp::Write => true,
            // Nothing to route: answered at once (Triple-A's paper has neither).
            ReqOp::Trim | ReqOp::Flush => {
                if self.closed {
                    self.push(now + 1_000, Event::Issue);
                }
                return Ok(());
            }
        };
        let kind = if write { OpKind::Write } else { OpKind::Read };
        self.tally.issued += 1;
        let slot = self.free_slots.pop().unwrap_or_else(|| {
            self.slots.push(Slot::default());
            self.slots.len() as u32 - 1
        });
        let mut pages = std::mem::take(&mut self.slots[slot as usize].pages);
        pages.clear();
        let mut done = now;
        let mut met_gc = false;
        let mut met = Met { write, ..Met::default() };
        let measured = now >= self.measure_from;
        for i in 0..u64::from(req.blocks) {
            let lpn = (req.lba + i) % self.manager.layout().pages();
            let mut loc = self.manager.resolve(lpn);
            let pending = self.copy_programmed.get(&lpn).filter(|p| p.2 > now).copied();
            met.copy_pending |= pending.is_some();
            if write && pending.is_some() {
                // The write supersedes the copy: from now on the new place holds the page.
                self.copy_programmed.remove(&lpn);
            }
            met.moved |= loc != self.manager.layout().fixed().home(lpn);
            // The old place still holds the data until the copy is programmed.
            let old = pending.filter(|_| !write && self.cfg.map_after_copy);
            if let Some((from, _, _)) = old {
                loc = from;
            }
            let [leaving, landing] = self.migrating[loc.cluster as usize];
            met.migration_source |= leaving > 0;
            met.migration_target |= landing > 0;
            let fimm = self.shape.fimm_index(loc.cluster, loc.fimm);
            let flash = match old {
                Some((_, from_flash, _)) => from_flash,
                None if write => self.flash_write(now, fimm, loc.slot),
                None => self.flash_slot(fimm, loc.slot),
            };
            let collecting = self.gc.as_ref().is_some_and(|gc| gc.collecting(fimm));
            met_gc |= collecting;
            let at = page_addr(flash, &self.cfg.fabric.fimm);
            let op = if write { FimmOp::program(at, PAGE) } else { FimmOp::read(at, PAGE) };
            let c = self.fabric.submit(now, self.addr(loc), op)?;
            self.tally.classes.switch_queue_full_pages += u64::from(measured && c.switch_queue_full);
            self.watch.routed(now, fimm, Outstanding { lpn, kind, issued: c.issued, done: c.done });
            if c.issued > now {
                self.on_stall(now, fimm, collecting);
            }
            let switch = loc.cluster / self.shape.clusters_per_switch;
            let was_full = std::mem::replace(&mut self.queue_full[switch as usize], c.switch_queue_full);
            if c.switch_queue_full && !was_full {
                self.examine_queue(now, switch);
            }
            self.tally.user_page_writes += u64::from(write);
            done = done.max(c.done);
            pages.push((lpn, loc, c));
        }
        self.slots[slot as usize] = Slot { start: now, met, met_gc, pages };
        self.push(done, Event::Done(slot));
        Ok(())
    }

    fn on_stall(&mut self, now: Nanos, fimm: u32, collecting: bool) {
        let any_write = self.watch.stalled(fimm, now).any(|o| o.kind == OpKind::Write);
        if !self.manager.wants_stalls(any_write) {
            return;
        }
        let stalled: Vec<Stalled> = stalled_on(&self.watch, &self.shape, fimm, now).collect();
        if let Some(action) = self.manager.on_stall_gc(now, &stalled, collecting) {
            self.carry_out(now, action);
        }
    }

    /// Fig. 8's queue examination: a switch's queue has filled, so the management module
    /// looks at every request stalled under that switch.
    fn examine_queue(&mut self, now: Nanos, switch: u32) {
        let fimms = self.shape.clusters_per_switch * self.shape.fimms_per_cluster;
        let (watch, shape) = (&self.watch, &self.shape);
        let stalled: Vec<Stalled> =
            (switch * fimms..(switch + 1) * fimms).flat_map(|fimm| stalled_on(watch, shape, fimm, now)).collect();
        if let Some(action) = self.manager.on_queue_full(now, &stalled, &self.watch.bus_utilisation) {
            self.carry_out(now, action);
        }
    }

    /// A request's answer is back: count it, show its device-level latency per cluster to
    /// the hot-cluster detector, and issue the next.
    fn done(&mut self, now: Nanos, slot: u32) {
        let s = std::mem::take(&mut self.slots[slot as usize]);
        if s.start >= self.measure_from {
            let worst = self.tally.request(now - s.start, s.pages.iter().map(|p| p.2));
            self.tally.classes.request(now - s.start, &s.met, &worst);
            for (i, p) in s.pages.iter().enumerate() {
                if !s.pages[..i].iter().any(|q| q.1.cluster == p.1.cluster) {
                    self.cluster_requests[p.1.cluster as usize] += 1;
                }
            }
            if let Some(gc) = self.gc.as_mut() {
                gc.request(now - s.start, s.met_gc);
            }
        }
        let kind = if s.met.write { OpKind::Write } else { OpKind::Read };
        // One observation per cluster the request touched (usually one: no allocation).
        for (i, &(_, first, _)) in s.pages.iter().enumerate() {
            if s.pages[..i].iter().any(|p| p.1.cluster == first.cluster) {
                continue;
            }
            self.scratch.clear();
            let (mut device_latency, mut fimm_ready) = (0, true);
            for &(lpn, _, c) in s.pages[i..].iter().filter(|p| p.1.cluster == first.cluster) {
                // Device-level: from the switch on, so that a wait at the root complex or
                // the switch is not blamed on the cluster's bus.
                let device = c.latency_ns() - c.queue_stall.root_complex_ns - c.queue_stall.switch_ns;
                device_latency = device_latency.max(device);
                fimm_ready &= c.storage_contention_ns == 0;
                self.scratch.push(lpn);
            }
            let seen = Completed { kind, lpns: &self.scratch, cluster: first.cluster, device_latency, fimm_ready };
            if let Some(action) = self.manager.on_complete(now, &seen, &self.watch.bus_utilisation) {
                self.carry_out(now, action);
            }
        }
        self.slots[slot as usize] = Slot { pages: s.pages, ..Slot::default() };
        self.free_slots.push(slot);
        if self.closed {
            self.push(now, Event::Issue);
        }
    }

    /// Schedules the copies an action needs; a redirected write needs none.
    fn carry_out(&mut self, now: Nanos, action: Action) {
        for (mv, carry) in action.moves {
            let from_fimm = self.shape.fimm_index(mv.from.cluster, mv.from.fimm);
            // The old slot is free for the layout from now on: its FTL must not carry it.
            let from_flash = self.flash_slot(from_fimm, mv.from.slot);
            if let Some(gc) = self.gc.as_mut() {
                gc.trim(from_fimm, mv.from.slot);
            }
            let (at, read_first) = match carry {
                Carry::Redirect => {
                    self.tally.redirects += 1;
                    // The write was timed where it was routed; its data now lives here.
                    let to_fimm = self.shape.fimm_index(mv.to.cluster, mv.to.fimm);
                    self.flash_write(now, to_fimm, mv.to.slot);
                    continue;
                }
                // A stalled read's page reaches the endpoint when the read is served.
                Carry::FromEndpoint => (self.watch.read_in_flight(from_fimm, mv.lpn, now).unwrap_or(now), false),
                Carry::ReadAgain => (now, true),
            };
            self.copy_programmed.insert(mv.lpn, (mv.from, from_flash, Nanos::MAX));
            if action.kind == ActionKind::Migrate {
                self.migrating[mv.from.cluster as usize][0] += 1;
                self.migrating[mv.to.cluster as usize][1] += 1;
            }
            self.seq += 1;
            self.copies.insert(self.seq, PendingCopy { mv, kind: action.kind, read_first, from_flash, decided: now });
            let key = self.seq;
            self.push(at, Event::Copy(key));
        }
    }

    fn copy(&mut self, now: Nanos, key: u64) -> Result<(), TripleARunError> {
        let PendingCopy { mv, kind, read_first, from_flash, decided } =
            self.copies.remove(&key).expect("a pending copy");
        let measured = decided >= self.measure_from;
        let (from, to) = (self.addr(mv.from), self.addr(mv.to));
        if read_first {
            let op = FimmOp::read(page_addr(from_flash, &self.cfg.fabric.fimm), PAGE);
            let c = self.fabric.cluster_mut(from.switch, from.cluster)?.submit(now, from.fimm, op)?;
            self.tally.copy_reads += 1;
            if measured {
                self.tally.classes.extra_read(&c);
            }
            self.copies.insert(key, PendingCopy { mv, kind, read_first: false, from_flash, decided });
            self.push(c.done, Event::Copy(key));
            return Ok(());
        }
        let to_fimm = self.shape.fimm_index(mv.to.cluster, mv.to.fimm);
        let flash = self.flash_write(now, to_fimm, mv.to.slot);
        let op = FimmOp::program(page_addr(flash, &self.cfg.fabric.fimm), PAGE);
        let c = if from.switch == to.switch && from.cluster == to.cluster {
            self.fabric.cluster_mut(to.switch, to.cluster)?.submit(now, to.fimm, op)?
        } else {
            self.fabric.migrate(now, from, to, op)?
        };
        self.tally.copies += 1;
        if let Some(p) = self.copy_programmed.get_mut(&mv.lpn) {
            p.2 = c.media_done;
        }
        let migration = kind == ActionKind::Migrate;
        if migration && measured {
            self.tally.classes.copy_landed(decided, &c);
        }
        // Landed once the target endpoint holds it: its write buffer, not this cap, is what
        // holds back programs the dies cannot take yet.
        self.push(c.done, Event::CopyDone { migration, from: mv.from.cluster, to: mv.to.cluster });
        Ok(())
    }
}

/// The layout's slots are 4 KiB parts of flash pages; a FIMM keeps `spare_fraction` of them
/// for moved pages, the rest (whole chunks) for the static layout.
/// The requests routed to FIMM `fimm` (an index over the fabric) and not yet issued to it,
/// as the management module sees them.
fn stalled_on<'a>(watch: &'a Watch, shape: &FabricShape, fimm: u32, now: Nanos) -> impl Iterator<Item = Stalled<'a>> {
    let (cluster, within) = (fimm / shape.fimms_per_cluster, fimm % shape.fimms_per_cluster);
    watch.stalled(fimm, now).map(move |o| Stalled {
        kind: o.kind,
        cluster,
        fimm: within,
        lpns: std::slice::from_ref(&o.lpn),
    })
}

fn layout_config(cfg: &TripleAConfig) -> Result<LayoutConfig, TripleARunError> {
    let fimm = &cfg.fabric.fimm;
    if fimm.page_bytes == 0 || !fimm.page_bytes.is_multiple_of(PAGE) {
        return Err(TripleARunError::Config(format!(
            "a flash page of {} B is not whole 4 KiB blocks",
            fimm.page_bytes
        )));
    }
    if !(0.0..1.0).contains(&cfg.spare_fraction) {
        return Err(TripleARunError::Config(format!(
            "the spare fraction must be in [0, 1), not {}",
            cfg.spare_fraction
        )));
    }
    if cfg.chunk_pages == 0 {
        return Err(TripleARunError::Config("a chunk must be at least one page".into()));
    }
    let physical = fimm.pages() * u64::from(fimm.page_bytes / PAGE);
    let slots = match &cfg.gc {
        Some(gc) => GcState::logical_slots(gc, physical)?,
        None => physical,
    };
    let user_slots = ((slots as f64 * (1.0 - cfg.spare_fraction)) as u64) / cfg.chunk_pages * cfg.chunk_pages;
    if user_slots == 0 {
        return Err(TripleARunError::Config(format!(
            "a FIMM of {slots} slots holds no {}-page chunk (--chunk)",
            cfg.chunk_pages
        )));
    }
    Ok(LayoutConfig { chunk_pages: cfg.chunk_pages, user_slots, spare_slots: slots - user_slots })
}
