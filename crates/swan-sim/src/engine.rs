//! The event-driven engine: one scheme, its member SSD models, a network link and a
//! workload, run in virtual time.
//!
//! Requests come from an [`ArrivalSource`] (the fio-like generator, or a block trace through
//! [`crate::replay`]), which the engine asks for the next request when one is due.
//!
//! Events are typed values in a binary heap ordered by (time, insertion sequence), so ties
//! resolve in a fixed order and a seed reproduces a run exactly. The hot path is per
//! request, not per page: a phase of member I/O is handed to the SSD models, which answer
//! with completion times computed from their dies' and links' busy-until times, and the
//! engine schedules one event for the whole phase.
//!
//! The engine reads no clock and touches no file: progress is reported through a callback
//! and results are returned as values; `output` writes them.

use crate::ggc::{GgcDriver, GgcReport, TimelineWindow};
use crate::metrics::{Latencies, MemberTraffic, MemberTrafficMbps, Row};
use crate::prefill::{self, Prefill, PrefillReport};
use crate::rng::SimRng;
use crate::source::{ArrivalSource, Next, Pacing, SyntheticSource};
use crate::workload::{Generator, WorkloadSpec};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};
use swan_core::ggc::GgcConfig;
use swan_core::io::{IoClass, IoKind, IoPlan, MemberIo};
use swan_core::scheme::release::{release_due, release_for_waiting_write, RELEASE_AFTER_NS};
use swan_core::scheme::{ArrayScheme, ArraySpec, Counters, GcJobId, ReqOp, Request, Submitted};
use swan_core::BLOCK_BYTES;
use swan_models::link::Link;
use swan_models::ssd::{Ssd, SsdConfig};
use swan_models::{DevOp, DevOpKind, Device, Nanos};
use thiserror::Error;

const NS_PER_S: f64 = 1e9;

/// The random stream of the pre-fill's overwrites (the workload draws from stream 1).
const PREFILL_STREAM: u64 = 0x9F11;

/// Array software time of a request that needs no member I/O (a read of never-written
/// blocks, a trim): it completes through the event queue after this long, so simulated
/// time always advances and a closed loop of such requests cannot recurse.
pub const NO_IO_LATENCY_NS: Nanos = 1_000;

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
}

impl SimConfig {
    /// The scheme's name in reports: the GGC policy's when the array coordinates GC.
    pub fn scheme_label(&self) -> String {
        match &self.ggc {
            Some(g) => {
                let target = g.force_target.map(|t| format!("@{}%", t * 100.0)).unwrap_or_default();
                let bound = g.force_victims.map(|v| format!("/{v}v")).unwrap_or_default();
                format!("{}{target}{bound}", g.policy.scheme_name())
            }
            None => self.array.kind.to_string(),
        }
    }
}

#[derive(Debug, Error)]
pub enum SimError {
    #[error("invalid array: {0}")]
    Geometry(#[from] swan_core::geometry::GeometryError),
    #[error("invalid SSD model: {0}")]
    Ssd(String),
    #[error("invalid workload: {0}")]
    Workload(String),
    #[error("invalid run: {0}")]
    Config(String),
    #[error("{0}")]
    Source(String),
    /// A trace run's trace could not be opened or checked before the run.
    #[error(transparent)]
    Trace(#[from] crate::replay::ReplayError),
    #[error("the array stalled: no user request completed for {seconds} simulated seconds at t = {at_s:.1} s ({stalled} requests waiting for free space); GC cannot keep up or cannot make progress")]
    Stalled { seconds: f64, at_s: f64, stalled: usize },
}

/// What a run produced.
#[derive(Debug)]
pub struct RunOutput {
    pub rows: Vec<Row>,
    pub latencies: Latencies,
    pub ssd_read_latency: Histogram<u64>,
    pub ssd_write_latency: Histogram<u64>,
    pub counters: Counters,
    pub requests: u64,
    pub sim_ns: Nanos,
    pub volume_blocks: u64,
    pub user_write_blocks: u64,
    pub user_read_blocks: u64,
    /// Blocks the array wrote to its members (data, parity, summaries, GC moves).
    pub member_write_blocks: u64,
    /// NAND pages programmed by all SSDs (host writes and internal GC copies).
    pub nand_program_pages: u64,
    pub ssd_host_write_pages: u64,
    pub ssd_gc_copied_pages: u64,
    pub ssd_erases: u64,
    pub ssd_map_dram_bytes: u64,
    pub scheme_heap_bytes: u64,
    pub ssd_heap_bytes: u64,
    pub modelled_blocks: u64,
    /// Simulated time during which user writes waited for GC to free a segment
    /// (the front-end stalled).
    pub stall_ns: Nanos,
    /// GC coordination and per-SSD GC counts (Harmonia).
    pub ggc: GgcReport,
    /// What the untimed pre-fill did, if the run had one (not part of any figure above).
    pub prefill: Option<PrefillReport>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum What {
    /// Generate and send the next request (closed loop refill or open-loop arrival).
    Issue,
    /// A write's payload has crossed the network.
    Arrive(u32),
    /// A phase of a request's member I/O completed.
    ReqPhase(u32),
    /// A read's payload has crossed the network back.
    Deliver(u32),
    /// A phase of a GC job completed.
    GcPhase(u32),
    /// The GGC coordinator's wake-up (poll or idle check).
    Ggc,
    /// The oldest GC victim awaiting deferred release may have waited long enough.
    Release,
    Tick,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Event {
    at: Nanos,
    seq: u64,
    what: What,
}

impl Ord for Event {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap and we want the earliest event first.
        (other.at, other.seq).cmp(&(self.at, self.seq))
    }
}

impl PartialOrd for Event {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Member I/O waiting for earlier phases: flattened, with phase boundaries.
#[derive(Debug, Default)]
struct Pending {
    ios: Vec<MemberIo>,
    ends: Vec<usize>,
    next: usize,
}

impl Pending {
    fn load(&mut self, plan: &IoPlan) {
        self.ios.clear();
        self.ends.clear();
        self.next = 1;
        for k in 0..plan.phase_count() {
            self.ios.extend_from_slice(plan.phase(k));
            self.ends.push(self.ios.len());
        }
    }

    fn has_next(&self) -> bool {
        self.next < self.ends.len()
    }

    fn take_next(&mut self) -> (usize, usize) {
        let range = (self.ends[self.next - 1], self.ends[self.next]);
        self.next += 1;
        range
    }
}

#[derive(Debug, Default)]
struct InFlight {
    req: Option<Request>,
    issued_at: Nanos,
    pending: Pending,
}

#[derive(Debug, Default)]
struct GcSlot {
    id: GcJobId,
    pending: Pending,
    members_mask: u64,
}

pub struct Engine {
    cfg: SimConfig,
    scheme: ArrayScheme,
    ssds: Vec<Ssd>,
    link: Link,
    source: Box<dyn ArrivalSource>,
    pacing: Pacing,
    /// A timed source's next request, already scheduled as an `Issue` event.
    upcoming: Option<Next>,
    /// The source has no more requests: the run ends once the outstanding ones complete.
    exhausted: bool,
    /// Why the source failed; ends the run after the current event.
    source_error: Option<String>,
    events: BinaryHeap<Event>,
    seq: u64,
    now: Nanos,
    reqs: Vec<InFlight>,
    free_reqs: Vec<u32>,
    gcs: Vec<GcSlot>,
    free_gcs: Vec<u32>,
    stalled: VecDeque<u32>,
    /// Deferred release: since when the oldest finished job's victim has waited.
    release_since: Option<Nanos>,
    /// The scheme changed since it last said no GC job can start: `start_gc` depends on
    /// nothing else, so only then is it worth asking again.
    gc_may_start: bool,
    plan: IoPlan,
    /// Reads prefer to preempt GC (SWAN): re-check GC phase completions against the
    /// members' backlog, which preempting reads push back.
    gc_can_be_preempted: bool,
    stopping: bool,
    ggc: GgcDriver,
    measure_from: Nanos,
    /// The pre-fill's report; the scheme's counters as it left them, which the run's
    /// counters are taken from.
    prefilled: Option<PrefillReport>,
    counters_at_start: Counters,
    // Measurements.
    latencies: Latencies,
    requests: u64,
    user_write_blocks: u64,
    user_read_blocks: u64,
    member_write_blocks: u64,
    last_completion: Nanos,
    /// Total time writes spent waiting for free space, and when the current wait began.
    stall_ns: Nanos,
    stall_since: Option<Nanos>,
    /// When the current interval began.
    interval_start: Nanos,
    interval: Interval,
    rows: Vec<Row>,
    prev_counters: Counters,
    prev_ssd_gc_pages: u64,
}

#[derive(Debug, Default)]
struct Interval {
    user_read_bytes: u64,
    user_write_bytes: u64,
    traffic: Vec<MemberTraffic>,
    gc_groups: u64,
    array_gc_write_blocks: u64,
}

impl Engine {
    /// An engine drawing its requests from `cfg.workload`.
    pub fn new(cfg: SimConfig) -> Result<Self, SimError> {
        if cfg.trace.is_some() {
            return Err(SimError::Config("a trace run needs its trace opened: build it with replay::engine".into()));
        }
        let (workload, seed) = (cfg.workload.clone(), cfg.seed);
        Self::with_source(cfg, move |volume_blocks| {
            let gen = Generator::new(&workload, volume_blocks, SimRng::fork(seed, 1)).map_err(SimError::Workload)?;
            Ok(Box::new(SyntheticSource::new(gen, workload.arrival).map_err(SimError::Config)?))
        })
    }

    /// An engine drawing its requests from the source `make_source` builds for a volume of
    /// the given number of blocks.
    pub fn with_source(
        cfg: SimConfig,
        make_source: impl FnOnce(u64) -> Result<Box<dyn ArrivalSource>, SimError>,
    ) -> Result<Self, SimError> {
        check_run_settings(&cfg)?;
        let mut scheme = cfg.array.build()?;
        let mut ssds = build_ssds(&cfg, scheme.members())?;
        let prefilled = match cfg.prefill {
            Some(spec) => Some(prefill_array(&cfg, spec, &mut scheme, &mut ssds)?),
            None => None,
        };
        let counters_at_start = scheme.counters().clone();
        let source = make_source(scheme.volume_blocks())?;
        if !source.finite() && cfg.stop.sim_seconds.is_none() && cfg.stop.write_bytes.is_none() {
            return Err(SimError::Config("say when to stop: a simulated duration or bytes to write".into()));
        }
        let gc_can_be_preempted = matches!(cfg.array.kind, swan_core::scheme::SchemeKind::Swan(_));
        let ggc = GgcDriver::new(cfg.ggc, scheme.members(), cfg.timeline).map_err(SimError::Config)?;
        let members = scheme.members() as usize;
        Ok(Self {
            link: Link::new(cfg.network_mbps, 0),
            scheme,
            ssds,
            pacing: source.pacing(),
            source,
            upcoming: None,
            exhausted: false,
            source_error: None,
            events: BinaryHeap::new(),
            seq: 0,
            now: 0,
            reqs: Vec::new(),
            free_reqs: Vec::new(),
            gcs: Vec::new(),
            free_gcs: Vec::new(),
            stalled: VecDeque::new(),
            release_since: None,
            gc_may_start: true,
            plan: IoPlan::new(),
            gc_can_be_preempted,
            stopping: false,
            ggc,
            measure_from: (cfg.measure_from_s * NS_PER_S) as Nanos,
            prefilled,
            prev_counters: counters_at_start.clone(),
            counters_at_start,
            latencies: Latencies::default(),
            requests: 0,
            user_write_blocks: 0,
            user_read_blocks: 0,
            member_write_blocks: 0,
            last_completion: 0,
            stall_ns: 0,
            stall_since: None,
            interval_start: 0,
            interval: Interval { traffic: vec![MemberTraffic::default(); members], ..Default::default() },
            rows: Vec::new(),
            prev_ssd_gc_pages: 0,
            cfg,
        })
    }

    pub fn scheme(&self) -> &ArrayScheme {
        &self.scheme
    }

    /// What the untimed pre-fill did, if this run had one.
    pub fn prefill_report(&self) -> Option<&PrefillReport> {
        self.prefilled.as_ref()
    }

    fn push(&mut self, at: Nanos, what: What) {
        self.seq += 1;
        self.events.push(Event { at, seq: self.seq, what });
    }

    fn interval_ns(&self) -> Nanos {
        self.cfg.interval_ms * 1_000_000
    }

    /// Run to the stop rule. `progress` is called once per interval with the fraction done.
    pub fn run(mut self, progress: &mut dyn FnMut(f64)) -> Result<RunOutput, SimError> {
        if self.prefilled.is_none() {
            // A pre-filled array was formatted before its fill.
            self.scheme.format(&mut self.plan);
            self.gc_may_start = true;
            let n = self.plan.len();
            self.submit_ios(0, n, None);
        }
        match self.pacing {
            Pacing::Closed { depth } => {
                for _ in 0..depth.max(1) {
                    self.push(0, What::Issue);
                }
            }
            Pacing::Timed => self.schedule_next(),
        }
        let first_tick = self.interval_ns();
        self.push(first_tick, What::Tick);
        while let Some(ev) = self.events.pop() {
            debug_assert!(ev.at >= self.now, "time went backwards");
            self.now = ev.at;
            match ev.what {
                What::Issue => self.issue(),
                What::Arrive(slot) => self.arrive(slot),
                What::ReqPhase(slot) => self.req_phase_done(slot),
                What::Deliver(slot) => self.complete(slot),
                What::GcPhase(slot) => self.gc_phase_done(slot),
                What::Release => {
                    self.pace_release();
                    self.retry_stalled();
                }
                What::Ggc => {
                    if let Some(at) = self.ggc.on_wakeup(&mut self.ssds, self.now) {
                        self.push(at, What::Ggc);
                    }
                }
                What::Tick => {
                    if self.tick(progress)? {
                        break;
                    }
                }
            }
            if let Some(e) = self.source_error.take() {
                return Err(SimError::Source(e));
            }
            self.pump_gc();
        }
        Ok(self.finish())
    }

    /// Ask a timed source for its next request and schedule its arrival.
    fn schedule_next(&mut self) {
        match self.source.next(self.now) {
            Ok(Some(next)) => {
                self.upcoming = Some(next);
                self.push(next.at.max(self.now), What::Issue);
            }
            Ok(None) => self.exhaust(),
            Err(e) => self.source_error = Some(e),
        }
    }

    fn exhaust(&mut self) {
        self.exhausted = true;
        self.end_if_drained();
    }

    /// Requests issued and not yet completed (waiting for space included).
    fn outstanding(&self) -> usize {
        self.reqs.len() - self.free_reqs.len()
    }

    /// Once the source is exhausted, the run ends with its last request.
    fn end_if_drained(&mut self) {
        if self.exhausted && !self.stopping && self.outstanding() == 0 {
            self.stopping = true;
            self.push(self.now, What::Tick);
        }
    }

    fn issue(&mut self) {
        if self.stopping {
            return;
        }
        let next = match self.pacing {
            Pacing::Timed => match self.upcoming.take() {
                Some(next) => next,
                None => return,
            },
            Pacing::Closed { .. } => match self.source.next(self.now) {
                Ok(Some(next)) => next,
                Ok(None) => return self.exhaust(),
                Err(e) => {
                    self.source_error = Some(e);
                    return;
                }
            },
        };
        if self.outstanding() == 0 {
            // An idle array is not a stalled one: measure quiet time from here (a trace may
            // pause for minutes).
            self.last_completion = self.now;
        }
        if let Some(at) = self.ggc.on_arrival(self.now) {
            self.push(at, What::Ggc);
        }
        let req = next.req;
        // Warm the scheme's maps for the requests coming next: their memory waits overlap
        // this one's work (the hot path waits on memory more than it computes).
        if let Some(r) = self.source.ahead(crate::source::LOOKAHEAD) {
            self.scheme.prefetch(r, false);
        }
        if let Some(r) = self.source.ahead(crate::source::LOOKAHEAD / 2) {
            self.scheme.prefetch(r, true);
        }
        let slot = match self.free_reqs.pop() {
            Some(s) => s,
            None => {
                self.reqs.push(InFlight::default());
                (self.reqs.len() - 1) as u32
            }
        };
        let r = &mut self.reqs[slot as usize];
        r.req = Some(req);
        r.issued_at = self.now;
        if self.pacing == Pacing::Timed {
            // Only now, with this request outstanding, may an exhausted source end the run.
            self.schedule_next();
        }
        if req.op == ReqOp::Write {
            let arrives = self.link.inbound(self.now, u64::from(req.blocks) * BLOCK_BYTES);
            if arrives > self.now {
                self.push(arrives, What::Arrive(slot));
                return;
            }
        }
        self.arrive(slot);
    }

    fn arrive(&mut self, slot: u32) {
        let req = self.reqs[slot as usize].req.expect("live request");
        self.gc_may_start = true;
        match self.scheme.submit(&req, &mut self.plan).expect("sources stay inside the volume") {
            Submitted::NoSpace => {
                if self.stalled.is_empty() {
                    self.stall_since = Some(self.now);
                }
                self.stalled.push_back(slot);
            }
            Submitted::Planned => self.execute(slot),
        }
    }

    /// Hand the request's freshly planned I/O to the members.
    fn execute(&mut self, slot: u32) {
        if self.plan.is_empty() {
            self.reqs[slot as usize].pending.ends.clear();
            self.push(self.now + NO_IO_LATENCY_NS, What::ReqPhase(slot));
            return;
        }
        let n0 = self.plan.phase(0).len();
        let done = self.submit_ios(0, n0, None);
        if self.plan.phase_count() > 1 {
            let plan = std::mem::take(&mut self.plan);
            self.reqs[slot as usize].pending.load(&plan);
            self.plan = plan;
        } else {
            self.reqs[slot as usize].pending.ends.clear();
        }
        self.push(done, What::ReqPhase(slot));
    }

    /// Submit `plan[start..end]` (or a pending list's range) to the members at `now`;
    /// returns when the last completes.
    fn submit_ios(&mut self, start: usize, end: usize, from: Option<(bool, u32)>) -> Nanos {
        let mut done = self.now;
        let mut mask = 0u64;
        for i in start..end {
            let io = match from {
                None => self.plan.ios()[i],
                Some((true, s)) => self.reqs[s as usize].pending.ios[i],
                Some((false, s)) => self.gcs[s as usize].pending.ios[i],
            };
            mask |= 1u64 << (io.member % 64);
            done = done.max(self.submit_io(io));
        }
        if let Some((false, s)) = from {
            self.gcs[s as usize].members_mask = mask;
        }
        done
    }

    fn submit_io(&mut self, io: MemberIo) -> Nanos {
        let kind = match io.kind {
            IoKind::Read(_) => DevOpKind::Read,
            IoKind::Write(_) => DevOpKind::Write,
            IoKind::Trim => DevOpKind::Trim,
            IoKind::Flush => DevOpKind::Flush,
        };
        let bytes = io.bytes();
        let t = &mut self.interval.traffic[io.member as usize];
        let gc = io.class == IoClass::Gc;
        match (kind, gc) {
            (DevOpKind::Read, false) => t.user_read += bytes,
            (DevOpKind::Read, true) => t.gc_read += bytes,
            (DevOpKind::Write, false) => t.user_write += bytes,
            (DevOpKind::Write, true) => t.gc_write += bytes,
            _ => {}
        }
        if kind == DevOpKind::Write {
            self.member_write_blocks += u64::from(io.count);
            if gc {
                self.interval.array_gc_write_blocks += u64::from(io.count);
            }
        }
        let done = self.ssds[io.member as usize]
            .submit(self.now, DevOp { kind, block: io.block, count: io.count, class: io.class });
        if let Some(at) = self.ggc.after_member_io(&mut self.ssds, io.member, kind, io.class, self.now, done) {
            self.push(at, What::Ggc);
        }
        done
    }

    fn req_phase_done(&mut self, slot: u32) {
        if self.reqs[slot as usize].pending.has_next() {
            let (a, b) = self.reqs[slot as usize].pending.take_next();
            let done = self.submit_ios(a, b, Some((true, slot)));
            self.push(done, What::ReqPhase(slot));
            return;
        }
        let req = self.reqs[slot as usize].req.expect("live request");
        if req.op == ReqOp::Read {
            let delivered = self.link.outbound(self.now, u64::from(req.blocks) * BLOCK_BYTES);
            if delivered > self.now {
                self.push(delivered, What::Deliver(slot));
                return;
            }
        }
        self.complete(slot);
    }

    fn complete(&mut self, slot: u32) {
        let r = &mut self.reqs[slot as usize];
        let req = r.req.take().expect("live request");
        let latency = self.now - r.issued_at;
        let measured = r.issued_at >= self.measure_from;
        self.free_reqs.push(slot);
        self.requests += 1;
        self.last_completion = self.now;
        let bytes = u64::from(req.blocks) * BLOCK_BYTES;
        match req.op {
            ReqOp::Read => {
                self.user_read_blocks += u64::from(req.blocks);
                self.interval.user_read_bytes += bytes;
                if measured {
                    self.latencies.record(true, latency);
                }
            }
            ReqOp::Write => {
                self.user_write_blocks += u64::from(req.blocks);
                self.interval.user_write_bytes += bytes;
                if measured {
                    self.latencies.record(false, latency);
                }
                if let Some(limit) = self.cfg.stop.write_bytes {
                    if !self.stopping && self.user_write_blocks * BLOCK_BYTES >= limit {
                        // Close the run now: the last interval is cut short rather than
                        // padded with the idle tail of requests no longer being issued.
                        self.stopping = true;
                        self.push(self.now, What::Tick);
                    }
                }
            }
            ReqOp::Trim | ReqOp::Flush => {}
        }
        if matches!(self.pacing, Pacing::Closed { .. }) {
            self.issue();
        }
        self.end_if_drained();
    }

    /// Start every GC job the scheme wants now.
    fn pump_gc(&mut self) {
        if !self.gc_may_start {
            return;
        }
        while let Some(id) = self.scheme.start_gc(&mut self.plan) {
            self.interval.gc_groups |= self.scheme.status().gc_groups;
            if self.plan.is_empty() {
                self.finish_gc(id);
                continue;
            }
            let slot = match self.free_gcs.pop() {
                Some(s) => s,
                None => {
                    self.gcs.push(GcSlot::default());
                    (self.gcs.len() - 1) as u32
                }
            };
            let plan = std::mem::take(&mut self.plan);
            self.gcs[slot as usize].id = id;
            self.gcs[slot as usize].pending.load(&plan);
            self.plan = plan;
            let end = self.gcs[slot as usize].pending.ends[0];
            let done = self.submit_ios(0, end, Some((false, slot)));
            self.push(done, What::GcPhase(slot));
        }
        self.gc_may_start = false;
    }

    fn gc_phase_done(&mut self, slot: u32) {
        if self.gc_can_be_preempted {
            // Reads that preempted this phase pushed its work back inside the SSDs.
            let mask = self.gcs[slot as usize].members_mask;
            let late = (0..self.ssds.len().min(64))
                .filter(|m| mask & (1 << m) != 0)
                .map(|m| self.ssds[m].busy_until())
                .max()
                .unwrap_or(0);
            if late > self.now {
                self.push(late, What::GcPhase(slot));
                return;
            }
        }
        if self.gcs[slot as usize].pending.has_next() {
            let (a, b) = self.gcs[slot as usize].pending.take_next();
            let done = self.submit_ios(a, b, Some((false, slot)));
            self.push(done, What::GcPhase(slot));
            return;
        }
        let id = self.gcs[slot as usize].id;
        self.free_gcs.push(slot);
        self.finish_gc(id);
    }

    fn finish_gc(&mut self, id: GcJobId) {
        self.scheme.finish_gc(id, &mut self.plan);
        self.gc_may_start = true;
        // The follow-up (summaries of sealed GC segments, TRIM of the victim) is
        // fire-and-forget: it occupies the members but nothing waits for it.
        let n = self.plan.len();
        self.submit_ios(0, n, None);
        self.pace_release();
        self.retry_stalled();
    }

    /// Deferred release ([`swan_core::scheme::LogConfig::defer_release`], as the server
    /// runs): give victims back when core's rule says a sync point would, or at once while
    /// writes wait for space and no running job can add to the batch (as the server's
    /// writes that run out of space do). The sync point itself costs nothing here: the
    /// modelled SSDs keep no volatile cache to flush.
    fn pace_release(&mut self) {
        let pending = self.scheme.pending_release();
        if pending == 0 {
            self.release_since = None;
            return;
        }
        let since = match self.release_since {
            Some(t) => t,
            None => {
                self.release_since = Some(self.now);
                self.push(self.now + RELEASE_AFTER_NS, What::Release);
                self.now
            }
        };
        let gc_running = self.gcs.len() > self.free_gcs.len();
        let starved = !self.stalled.is_empty() && release_for_waiting_write(pending, gc_running);
        let due = starved || release_due(pending, self.cfg.array.rgroups, self.now - since);
        if let Some(la) = self.scheme.log_mut().filter(|_| due) {
            la.release_deferred(&mut self.plan);
            let n = self.plan.len();
            self.submit_ios(0, n, None);
            self.release_since = None;
            self.gc_may_start = true;
        }
    }

    /// Space was freed: retry writes that were waiting for it, in arrival order.
    fn retry_stalled(&mut self) {
        while let Some(&slot) = self.stalled.front() {
            let req = self.reqs[slot as usize].req.expect("stalled request");
            match self.scheme.submit(&req, &mut self.plan).expect("validated request") {
                Submitted::NoSpace => break,
                Submitted::Planned => {
                    self.stalled.pop_front();
                    self.execute(slot);
                }
            }
        }
        if self.stalled.is_empty() {
            if let Some(since) = self.stall_since.take() {
                self.stall_ns += self.now - since;
            }
        }
    }

    /// Close an interval; returns true when the run is over.
    fn tick(&mut self, progress: &mut dyn FnMut(f64)) -> Result<bool, SimError> {
        if self.now == self.interval_start {
            // The stop landed exactly on an interval boundary: nothing left to record.
            return Ok(self.stopping);
        }
        let secs = (self.now - self.interval_start) as f64 / NS_PER_S;
        let mbps = |bytes: u64| bytes as f64 / secs / 1e6;
        let status = self.scheme.status();
        let c = self.scheme.counters().clone();
        let victims = c.victims - self.prev_counters.victims;
        let victim_util = (victims > 0).then(|| {
            (c.victim_valid_blocks - self.prev_counters.victim_valid_blocks) as f64
                / (c.victim_payload_blocks - self.prev_counters.victim_payload_blocks) as f64
        });
        let ssd_gc_pages: u64 = self.ssds.iter().map(|s| s.stats().gc_pages_copied).sum();
        let members = self
            .interval
            .traffic
            .iter()
            .map(|t| MemberTrafficMbps {
                read: mbps(t.user_read),
                write: mbps(t.user_write),
                gc_read: mbps(t.gc_read),
                gc_write: mbps(t.gc_write),
            })
            .collect();
        self.rows.push(Row {
            t_s: self.now as f64 / NS_PER_S,
            user_read_mbps: mbps(self.interval.user_read_bytes),
            user_write_mbps: mbps(self.interval.user_write_bytes),
            free_segments: status.free_segments,
            victim_util,
            front_group: if self.cfg.array.kind.is_log_structured() { status.front_group } else { None },
            gc_groups: self.interval.gc_groups | status.gc_groups,
            ssd_gc_pages: ssd_gc_pages - self.prev_ssd_gc_pages,
            array_gc_write_blocks: self.interval.array_gc_write_blocks,
            members,
        });
        self.prev_counters = c;
        self.prev_ssd_gc_pages = ssd_gc_pages;
        self.interval_start = self.now;
        let members = self.interval.traffic.len();
        self.interval = Interval { traffic: vec![MemberTraffic::default(); members], ..Default::default() };

        let t = self.now as f64 / NS_PER_S;
        let mut done = self.stopping;
        let mut fraction: f64 = 0.0;
        if let Some(limit) = self.cfg.stop.sim_seconds {
            done |= t >= limit - 1e-9;
            fraction = fraction.max(t / limit);
        }
        if let Some(limit) = self.cfg.stop.write_bytes {
            fraction = fraction.max((self.user_write_blocks * BLOCK_BYTES) as f64 / limit as f64);
        }
        if let Some(f) = self.source.fraction_done() {
            fraction = fraction.max(f);
        }
        progress(fraction.min(1.0));
        if done {
            return Ok(true);
        }
        let quiet = (self.now - self.last_completion) as f64 / NS_PER_S;
        if quiet > self.cfg.stall_limit_s && self.outstanding() > 0 {
            return Err(SimError::Stalled { seconds: quiet, at_s: t, stalled: self.stalled.len() });
        }
        if !self.stopping {
            let next = self.now + self.interval_ns();
            self.push(next, What::Tick);
        }
        Ok(false)
    }

    fn finish(mut self) -> RunOutput {
        self.latencies.close();
        if let Some(since) = self.stall_since.take() {
            self.stall_ns += self.now - since;
        }
        let mut ssd_read_latency = crate::metrics::new_histogram();
        let mut ssd_write_latency = crate::metrics::new_histogram();
        let (mut host_w, mut gc_c, mut erases, mut dram, mut ssd_heap, mut pages) = (0, 0, 0, 0, 0, 0);
        for ssd in &self.ssds {
            let s = ssd.stats();
            ssd_read_latency.add(&s.read_latency_us).expect("same histogram bounds");
            ssd_write_latency.add(&s.write_latency_us).expect("same histogram bounds");
            host_w += s.host_pages_written;
            gc_c += s.gc_pages_copied;
            erases += s.erases;
            dram = ssd.map_dram_bytes();
            ssd_heap += ssd.model_bytes();
            pages += ssd.config().user_pages;
        }
        let ggc = self.ggc.finish(&self.ssds);
        RunOutput {
            ggc,
            rows: self.rows,
            latencies: self.latencies,
            ssd_read_latency,
            ssd_write_latency,
            counters: self.scheme.counters().since(&self.counters_at_start),
            prefill: self.prefilled,
            requests: self.requests,
            sim_ns: self.now,
            volume_blocks: self.scheme.volume_blocks(),
            user_write_blocks: self.user_write_blocks,
            user_read_blocks: self.user_read_blocks,
            member_write_blocks: self.member_write_blocks,
            nand_program_pages: host_w + gc_c,
            ssd_host_write_pages: host_w,
            ssd_gc_copied_pages: gc_c,
            ssd_erases: erases,
            ssd_map_dram_bytes: dram,
            scheme_heap_bytes: self.scheme.heap_bytes(),
            ssd_heap_bytes: ssd_heap,
            modelled_blocks: pages,
            stall_ns: self.stall_ns,
        }
    }
}

/// The run's own settings (reporting interval, aging, measurement start), refused before
/// any SSD is built.
fn check_run_settings(cfg: &SimConfig) -> Result<(), SimError> {
    if cfg.interval_ms == 0 {
        return Err(SimError::Config("the reporting interval must be at least 1 ms".into()));
    }
    if !(0.0..1.0).contains(&cfg.age_fraction) {
        return Err(SimError::Config(format!("aging fraction must be within 0..1, got {}", cfg.age_fraction)));
    }
    if !(0.0..=1.0).contains(&cfg.age_spread) {
        return Err(SimError::Config(format!("age spread must be within 0..1, got {}", cfg.age_spread)));
    }
    if !(cfg.measure_from_s.is_finite() && cfg.measure_from_s >= 0.0) {
        return Err(SimError::Config(format!("measurement start must be ≥ 0 s, got {}", cfg.measure_from_s)));
    }
    Ok(())
}

/// One modelled SSD per member, filled or aged as the run asks (SSD `i` aged by a share
/// that falls with `i` when the ages are spread).
fn build_ssds(cfg: &SimConfig, members: u32) -> Result<Vec<Ssd>, SimError> {
    cfg.ssd.validate().map_err(|e| SimError::Ssd(e.to_string()))?;
    let member_pages = cfg.ssd.user_pages;
    if member_pages < cfg.array.member_blocks {
        return Err(SimError::Config(format!(
            "members of {} blocks do not fit SSDs of {member_pages} pages",
            cfg.array.member_blocks
        )));
    }
    let mut ssds = Vec::with_capacity(members as usize);
    for i in 0..members {
        let mut ssd = Ssd::new(cfg.ssd.clone()).map_err(|e| SimError::Ssd(e.to_string()))?;
        if cfg.fill_first {
            ssd.fill_sequential(1.0);
            ssd.reset_stats();
        }
        if cfg.age_fraction > 0.0 {
            let fraction = cfg.age_fraction * (1.0 - cfg.age_spread * f64::from(i) / f64::from(members));
            ssd.age_random(fraction, cfg.seed ^ (u64::from(i) + 1).wrapping_mul(0xA076_1D64_78BD_642F));
            ssd.reset_stats();
        }
        ssds.push(ssd);
    }
    Ok(ssds)
}

/// The untimed pre-fill: the array brought to steady state by overwrites drawn like the
/// workload's, before the clock starts.
fn prefill_array(
    cfg: &SimConfig,
    spec: prefill::Prefill,
    scheme: &mut ArrayScheme,
    ssds: &mut [Ssd],
) -> Result<prefill::PrefillReport, SimError> {
    let mut overwrites = Generator::new(
        &prefill::overwrite_spec(&cfg.workload),
        scheme.volume_blocks(),
        SimRng::fork(cfg.seed, PREFILL_STREAM),
    )
    .map_err(SimError::Workload)?;
    let report = prefill::run(scheme, ssds, spec, &mut overwrites).map_err(SimError::Config)?;
    ssds.iter_mut().for_each(Ssd::reset_stats);
    Ok(report)
}
