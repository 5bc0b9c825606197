//! The autonomic management module (§4): observations in, page moves out.
//!
//! The driver tells [`Autonomic`] three things: a request was served ([`Autonomic::on_complete`],
//! Eq. 1 on its device-level latency), a request stalled in a switch-level queue
//! ([`Autonomic::on_stall`], Eq. 3 over the requests stalled for that FIMM), and a queue filled
//! up ([`Autonomic::on_queue_full`], the queue examination). Each may answer with an
//! [`Action`]: pages moved in the [`DataLayout`] at once, each with how its data gets to the
//! new place ([`Carry`]). The driver performs the copies on its fabric model and reports them
//! done ([`Autonomic::copies_done`]); until then they count against the in-flight cap.
//!
//! The map changes when the move is decided, not when its copy lands: the simulator carries
//! no data, so a read in between is timed at the new place. A real module would switch the
//! map after the copy (`TripleAConfig::map_after_copy` in the simulator); the difference is
//! one copy's time per moved page, which is long where the copy's program queues behind
//! others on its die (docs/findings/triple-a.md, Fig. 11).

use super::detect::{self, Laggards, PageTiming};
use super::layout::{DataLayout, Location, Move, PageHasher};
use super::{AutonomicConfig, GcLaggard, Nanos, TripleAError};
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    Read,
    Write,
}

/// A request the fabric has served, as the management module monitors it.
#[derive(Clone, Copy, Debug)]
pub struct Completed<'a> {
    pub kind: OpKind,
    /// Its pages, all on `cluster`.
    pub lpns: &'a [u64],
    pub cluster: u32,
    /// Its device-level latency: from leaving the switch-level queue until served.
    pub device_latency: Nanos,
    /// Its FIMM was free when the request reached the cluster; only then can a long latency
    /// be blamed on the shared bus (Eq. 1's condition).
    pub fimm_ready: bool,
}

/// A request waiting in a switch-level queue, not yet issued to its FIMM.
#[derive(Clone, Copy, Debug)]
pub struct Stalled<'a> {
    pub kind: OpKind,
    pub cluster: u32,
    /// Its FIMM within `cluster`.
    pub fimm: u32,
    /// Its pages on that FIMM.
    pub lpns: &'a [u64],
}

/// How a moved page's data reaches its new place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Carry {
    /// A stalled write not issued yet: it simply goes to the new place; nothing is copied.
    Redirect,
    /// The page is in the old cluster's endpoint (the read or write that showed the
    /// contention brought it there): move it over the fabric and program it.
    FromEndpoint,
    /// Read it again from the old FIMM first (migration without shadow cloning).
    ReadAgain,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ActionKind {
    /// To another cluster under the same switch (link contention, or a whole cluster lagging).
    Migrate,
    /// To other FIMMs of the same cluster (storage contention).
    Reshape,
}

/// A decision: these pages have moved; carry each one's data as it says.
#[derive(Clone, Debug, PartialEq)]
pub struct Action {
    pub kind: ActionKind,
    pub moves: Vec<(Move, Carry)>,
}

/// What the management module detected and did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct AutonomicStats {
    pub hot_detections: u64,
    pub laggards_by_latency: u64,
    pub laggards_by_queue: u64,
    /// Laggards (by either detector) found while collecting garbage.
    pub laggards_collecting: u64,
    /// Stalls on a collecting FIMM left unexamined ([`GcLaggard::Exempt`]).
    pub gc_stalls_exempted: u64,
    /// Hot clusters left alone: no cold cluster under their switch.
    pub no_cold_cluster: u64,
    /// Detections not acted on because the in-flight cap was reached (stalls of reads are not
    /// even examined while reshaping has no budget left; see [`Autonomic::wants_stalls`]).
    pub deferred: u64,
    pub migrated_pages: u64,
    pub reshaped_pages: u64,
    /// Moved pages written at their new place beyond what the workload wrote (§6.5's extra
    /// writes): every move except a redirected write.
    pub extra_page_writes: u64,
}

/// The management module. See the module docs.
#[derive(Clone, Debug)]
pub struct Autonomic {
    cfg: AutonomicConfig,
    timing: PageTiming,
    layout: DataLayout,
    /// When each page last moved, for the hysteresis ([`AutonomicConfig::settle`]).
    moved_at: HashMap<u64, Nanos, BuildHasherDefault<PageHasher>>,
    /// Copies in flight, per management: [migration, reshaping]. Each has its own budget,
    /// so that one cannot starve the other.
    in_flight: [u32; 2],
    /// Per cluster: the FIMM the next page moved there goes to (round-robin keeps the stripe).
    next_fimm: Vec<u32>,
    stats: AutonomicStats,
}

impl Autonomic {
    pub fn new(cfg: AutonomicConfig, timing: PageTiming, layout: DataLayout) -> Result<Self, TripleAError> {
        cfg.validate()?;
        let clusters = layout.shape().clusters() as usize;
        Ok(Self {
            cfg,
            timing,
            layout,
            moved_at: HashMap::default(),
            in_flight: [0; 2],
            next_fimm: vec![0; clusters],
            stats: AutonomicStats::default(),
        })
    }

    pub fn layout(&self) -> &DataLayout {
        &self.layout
    }

    pub fn resolve(&self, lpn: u64) -> Location {
        self.layout.resolve(lpn)
    }

    pub fn stats(&self) -> AutonomicStats {
        self.stats
    }

    /// Copied pages in flight for `kind`'s management.
    pub fn in_flight(&self, kind: ActionKind) -> u32 {
        self.in_flight[kind as usize]
    }

    /// `n` copies of earlier `kind` actions have landed.
    pub fn copies_done(&mut self, kind: ActionKind, n: u32) {
        let f = &mut self.in_flight[kind as usize];
        debug_assert!(n <= *f, "{n} copies done with {f} in flight");
        *f = f.saturating_sub(n);
    }

    /// Eq. 1 on a served request; a hot cluster's pages of it migrate to the coldest cold
    /// cluster under the same switch. `bus_utilisation` is indexed by cluster.
    pub fn on_complete(&mut self, now: Nanos, done: &Completed, bus_utilisation: &[f64]) -> Option<Action> {
        if !self.cfg.migration || !done.fimm_ready || done.lpns.is_empty() {
            return None;
        }
        let fimms = self.layout.shape().fimms_per_cluster;
        let t_exe = self.timing.t_exe(done.kind == OpKind::Write);
        let pages = done.lpns.len() as u32;
        if !detect::is_hot(done.device_latency, pages, fimms, self.timing.t_dma, t_exe) {
            return None;
        }
        self.stats.hot_detections += 1;
        // The served request's pages are in the endpoint now, a write's as much as a read's.
        let carry =
            if done.kind == OpKind::Write || self.cfg.shadow_cloning { Carry::FromEndpoint } else { Carry::ReadAgain };
        self.migrate(now, done.cluster, done.lpns.iter().map(|&l| (l, carry)), bus_utilisation)
    }

    /// Whether [`Autonomic::on_stall`] could act on stalled requests of these kinds now: a
    /// driver may skip gathering them when it could not (the hot path of a busy array).
    pub fn wants_stalls(&self, any_write: bool) -> bool {
        self.cfg.by_latency() && (any_write || self.in_flight[ActionKind::Reshape as usize] < self.cfg.max_in_flight)
    }

    /// Eq. 3 over the requests stalled for one FIMM (every entry of `stalled` is for the same
    /// FIMM); a laggard's stalled pages are reshaped onto the other FIMMs of its cluster.
    pub fn on_stall(&mut self, now: Nanos, stalled: &[Stalled]) -> Option<Action> {
        self.on_stall_gc(now, stalled, false)
    }

    /// [`Autonomic::on_stall`] for a FIMM that may be `collecting` garbage, which
    /// [`AutonomicConfig::gc_laggard`] says what to make of.
    pub fn on_stall_gc(&mut self, now: Nanos, stalled: &[Stalled], collecting: bool) -> Option<Action> {
        let first = stalled.first()?;
        if !self.cfg.by_latency() {
            return None;
        }
        debug_assert!(stalled.iter().all(|s| (s.cluster, s.fimm) == (first.cluster, first.fimm)));
        let gc = if collecting { self.cfg.gc_laggard } else { GcLaggard::Blind };
        match gc {
            GcLaggard::Exempt => {
                self.stats.gc_stalls_exempted += 1;
                return None;
            }
            GcLaggard::Laggard => {}
            GcLaggard::Blind => {
                let pages = stalled.iter().map(|s| (s.kind == OpKind::Write, s.lpns.len() as u32));
                if !detect::is_laggard(pages, self.timing, self.cfg.t_sla) {
                    return None;
                }
            }
        }
        self.stats.laggards_by_latency += 1;
        self.stats.laggards_collecting += u64::from(collecting);
        self.reshape(now, first.cluster, first.fimm, stalled)
    }

    /// The queue examination over a full switch-level queue: the FIMM with the most stalled
    /// requests is the laggard and its pages are reshaped; if every FIMM of its cluster lags
    /// alike, the cluster's stalled pages migrate to a cold cluster instead.
    pub fn on_queue_full(&mut self, now: Nanos, stalled: &[Stalled], bus_utilisation: &[f64]) -> Option<Action> {
        if !self.cfg.by_queue() || stalled.is_empty() {
            return None;
        }
        let fimms = self.layout.shape().fimms_per_cluster;
        let mut counts: HashMap<(u32, u32), u32> = HashMap::new();
        for s in stalled {
            *counts.entry((s.cluster, s.fimm)).or_default() += 1;
        }
        let (&(cluster, _), _) = counts.iter().max_by_key(|&(&(c, f), &n)| (n, std::cmp::Reverse((c, f))))?;
        let per_fimm: Vec<u32> = (0..fimms).map(|f| counts.get(&(cluster, f)).copied().unwrap_or(0)).collect();
        let ours: Vec<Stalled> = stalled.iter().filter(|s| s.cluster == cluster).copied().collect();
        match detect::laggards_by_queue(&per_fimm, self.cfg.similar_stalls) {
            Laggards::None => None,
            Laggards::One(fimm) => {
                self.stats.laggards_by_queue += 1;
                self.reshape(now, cluster, fimm, &ours)
            }
            Laggards::All => {
                self.stats.laggards_by_queue += 1;
                let shadow = self.cfg.shadow_cloning;
                let pages = ours.iter().flat_map(move |s| s.lpns.iter().map(move |&l| (l, carry_of(s.kind, shadow))));
                self.migrate(now, cluster, pages, bus_utilisation)
            }
        }
    }

    /// A laggard's stalled pages onto the other FIMMs of its cluster.
    fn reshape(&mut self, now: Nanos, cluster: u32, laggard: u32, stalled: &[Stalled]) -> Option<Action> {
        if self.layout.shape().fimms_per_cluster < 2 {
            return None;
        }
        let shadow = self.cfg.shadow_cloning;
        let pages = stalled
            .iter()
            .filter(|s| s.fimm == laggard)
            .flat_map(move |s| s.lpns.iter().map(move |&lpn| (lpn, carry_of(s.kind, shadow))));
        self.move_pages(now, ActionKind::Reshape, cluster, Some(laggard), pages)
    }

    /// Pages of cluster `from` to the coldest cold cluster under its switch.
    fn migrate(
        &mut self,
        now: Nanos,
        from: u32,
        pages: impl Iterator<Item = (u64, Carry)>,
        bus_utilisation: &[f64],
    ) -> Option<Action> {
        let Some(to) = self.cold_sibling(from, bus_utilisation) else {
            self.stats.no_cold_cluster += 1;
            return None;
        };
        self.move_pages(now, ActionKind::Migrate, to, None, pages)
    }

    /// Moves each page that may move to the next FIMM of cluster `to` (not `except`), as long
    /// as one has room.
    fn move_pages(
        &mut self,
        now: Nanos,
        kind: ActionKind,
        to: u32,
        except: Option<u32>,
        pages: impl Iterator<Item = (u64, Carry)>,
    ) -> Option<Action> {
        let mut moves = Vec::new();
        for (lpn, carry) in pages {
            if !self.may_move(now, lpn, carry, kind) {
                continue;
            }
            let Some(fimm) = self.dest_fimm(to, except) else { break };
            if let Some(mv) = self.layout.relocate(lpn, to, fimm) {
                self.record(now, lpn, carry, kind);
                moves.push((mv, carry));
            }
        }
        (!moves.is_empty()).then_some(Action { kind, moves })
    }

    /// The page has settled since it last moved, and a copy (if it needs one) fits under the cap.
    fn may_move(&mut self, now: Nanos, lpn: u64, carry: Carry, kind: ActionKind) -> bool {
        if self.moved_at.get(&lpn).is_some_and(|&t| now < t + self.cfg.settle) {
            return false;
        }
        if carry != Carry::Redirect && self.in_flight[kind as usize] >= self.cfg.max_in_flight {
            self.stats.deferred += 1;
            return false;
        }
        true
    }

    fn record(&mut self, now: Nanos, lpn: u64, carry: Carry, kind: ActionKind) {
        if carry != Carry::Redirect {
            self.in_flight[kind as usize] += 1;
            self.stats.extra_page_writes += 1;
        }
        match kind {
            ActionKind::Migrate => self.stats.migrated_pages += 1,
            ActionKind::Reshape => self.stats.reshaped_pages += 1,
        }
        self.moved_at.insert(lpn, now);
    }

    /// The cluster under the same switch with the lowest bus utilisation, if it is cold
    /// (Eq. 2); ties go to the lowest number.
    fn cold_sibling(&self, hot: u32, bus_utilisation: &[f64]) -> Option<u32> {
        let shape = self.layout.shape();
        let share = self.cfg.cold_share(shape.fimms_per_cluster);
        let util = |c: u32| bus_utilisation.get(c as usize).copied().unwrap_or(0.0);
        shape
            .siblings(hot)
            .filter(|&c| c != hot && detect::is_cold(util(c), share))
            .min_by(|&a, &b| util(a).total_cmp(&util(b)).then(a.cmp(&b)))
    }

    /// The next FIMM of `cluster` (round-robin, skipping `except` and full FIMMs).
    fn dest_fimm(&mut self, cluster: u32, except: Option<u32>) -> Option<u32> {
        let fimms = self.layout.shape().fimms_per_cluster;
        for _ in 0..fimms {
            let f = self.next_fimm[cluster as usize] % fimms;
            self.next_fimm[cluster as usize] = (f + 1) % fimms;
            if Some(f) != except && self.layout.free_slots(cluster, f) > 0 {
                return Some(f);
            }
        }
        None
    }
}

/// A stalled write is redirected before it is issued; a stalled read's pages are copied from
/// the endpoint once it has served them (shadow copying, §4.2), or read again.
fn carry_of(kind: OpKind, shadow_cloning: bool) -> Carry {
    match kind {
        OpKind::Write => Carry::Redirect,
        OpKind::Read if shadow_cloning => Carry::FromEndpoint,
        OpKind::Read => Carry::ReadAgain,
    }
}
