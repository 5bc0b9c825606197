//! A block trace as a Triple-A workload (§5.2's real workloads, Table 2, Fig. 9–11): replayed
//! in a closed loop of depth D, looped for as long as the run lasts.
//!
//! Policy, stated in every report ([`TraceWorkload::statement`]):
//! - **Closed loop, order kept, timestamps ignored**: a request is issued when one of D slots
//!   is free, in the trace's order. The excerpts were recorded on other machines; replaying
//!   them at their own times would measure those machines' idle gaps, not the array.
//! - **Looped**: when the trace ends it starts again from its first request, as many times as
//!   the simulated time needs (the excerpts hold 1,000 to 25,000 requests, a fraction of a
//!   second of the array's work). Looping replays the same addresses again, so data that was
//!   hot stays hot: that favours a management that moves hot data.
//! - **Addresses**: each request is expanded to the 4 KiB pages covering its byte range (the
//!   replay's rule, [`crate::replay`]); trace page `p` is array page `(base + p) mod pages`,
//!   `base` a whole chunk of the static layout chosen by the seed (the paper does not say
//!   where a workload's address space sits in the pool; over seeds its busy ranges fall on
//!   different clusters and switches). A trace wider than the array wraps modulo its page
//!   space and the statement says so (a 4x16 array holds 14.4 TiB of user pages: none of the
//!   excerpts comes near).
//! - Device numbers are not used: every request addresses the one array.

use super::{TripleAConfig, TripleADriver, TripleARunError};
use crate::replay::{self, human_bytes, OpenTrace, ReplayError, ReplayMode, ReplaySpec, Replayer, TraceInput};
use crate::rng::SimRng;
use crate::source::{ArrivalSource, Next, Pacing, SourceError};
use crate::trace::{AddressPolicy, TraceFormat, TraceOp, BLOCK_BYTES};
use std::path::Path;
use swan_core::scheme::{ReqOp, Request};
use swan_core::triple_a::StaticLayout;
use swan_models::Nanos;

/// The closed loop's depth for traces: what Table 2's runs keep in flight, latency × IOPS
/// by Little's law, the median of its eleven rows (142–300; hm 202, web 208). Not fitted to
/// any result (docs/triple-a.md, "Traces"). `swan triple-a --help` states the value.
pub const TRACE_DEPTH: u32 = 215;

/// A trace checked and ready to replay (its first pass done: a malformed line is an error
/// naming the file and the line before anything runs).
#[derive(Clone, Debug)]
pub struct TraceWorkload {
    trace: OpenTrace,
    spec: ReplaySpec,
    depth: u32,
}

impl TraceWorkload {
    /// Opens the trace at `path` (`format` guessed when `None`) for a closed loop of `depth`.
    pub fn open(path: &Path, format: Option<TraceFormat>, depth: u32) -> Result<Self, ReplayError> {
        let spec = ReplaySpec {
            path: path.to_path_buf(),
            format,
            mode: ReplayMode::Closed(depth.max(1)),
            policy: AddressPolicy::Wrap,
            skip_bad: false,
            max_requests: None,
            windows: Vec::new(),
        };
        let trace = replay::open(&spec)?;
        Ok(Self { trace, spec, depth })
    }

    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// Requests in one pass over the trace (records with data, big ones cut at the replay's
    /// maximum request).
    pub fn requests_per_pass(&self) -> u64 {
        self.trace.scan.requests
    }

    /// The share of the trace's requests that read.
    pub fn read_fraction(&self) -> f64 {
        let s = &self.trace.scan;
        s.reads as f64 / (s.reads + s.writes).max(1) as f64
    }

    /// The array page the trace's first page lands on, under `seed`: a whole chunk, uniform
    /// over the array's chunks.
    pub fn base_page(layout: &StaticLayout, seed: u64) -> u64 {
        let chunk = layout.config().chunk_pages;
        let chunks = layout.pages() / chunk;
        SimRng::fork(seed, 0x7EAC_EBA5).below(chunks) * chunk
    }

    /// What the replay does with this trace on `layout` under `seed`: the trace, the loop,
    /// where its addresses land and whether any wrap.
    pub fn statement(&self, layout: &StaticLayout, seed: u64) -> String {
        let s = &self.trace.scan;
        let pages = layout.pages();
        let base = Self::base_page(layout, seed);
        let span_pages = s.span_bytes.div_ceil(BLOCK_BYTES);
        let wraps = base.saturating_add(span_pages) > pages;
        let other_events = s.other_events_note().map(|n| format!("\n  {n}")).unwrap_or_default();
        format!(
            "trace {}: {} format ({}), {} requests ({} reads, {} writes; {} read, {} written)\n  \
             closed loop of depth {}, the trace's order kept and its timestamps ignored, looped from its \
             first request when it ends\n  \
             addresses: 4 KiB pages covering each request; the trace spans {}, the array holds {}; trace page 0 \
             is array page {base} (chunk {}, chosen by seed {seed}); {}{other_events}",
            self.trace.path.display(),
            self.trace.format,
            self.trace.format_from,
            s.requests,
            s.reads,
            s.writes,
            human_bytes(s.read_bytes),
            human_bytes(s.write_bytes),
            self.depth,
            human_bytes(s.span_bytes),
            human_bytes(pages * BLOCK_BYTES),
            base / layout.config().chunk_pages,
            if wraps { "addresses past the array's end wrap modulo its page space" } else { "no address wraps" },
        )
    }

    fn replayer(&self, pages: u64) -> Result<Replayer<TraceInput>, ReplayError> {
        self.trace.replayer(&self.spec, pages)
    }
}

/// The trace as the driver's source: endless, one pass after another.
struct LoopedTrace {
    workload: TraceWorkload,
    replayer: Replayer<TraceInput>,
    pages: u64,
    base: u64,
}

impl ArrivalSource for LoopedTrace {
    fn pacing(&self) -> Pacing {
        Pacing::Closed { depth: self.workload.depth.max(1) }
    }

    fn next(&mut self, now: Nanos) -> Result<Option<Next>, SourceError> {
        let r = match self.replayer.next() {
            Some(r) => r,
            None => {
                self.replayer = self.workload.replayer(self.pages)?;
                self.replayer.next().ok_or(SourceError::EmptyPass)?
            }
        };
        let r = r?;
        let op = match r.op {
            TraceOp::Read => ReqOp::Read,
            TraceOp::Write => ReqOp::Write,
        };
        // The driver wraps each page modulo the array; a request is at most the replay's
        // maximum (8,192 pages).
        let lba = (r.block % self.pages + self.base) % self.pages;
        let blocks = u32::try_from(r.blocks).expect("a replay request fits in u32 pages");
        Ok(Some(Next { at: now, req: Request::new(op, lba, blocks), window: None }))
    }

    fn finite(&self) -> bool {
        false
    }
}

impl TripleADriver {
    /// A run of `cfg` replaying `workload` in a closed loop, its base chunk chosen by `seed`.
    pub fn trace(mut cfg: TripleAConfig, workload: &TraceWorkload, seed: u64) -> Result<Self, TripleARunError> {
        cfg.gc_seed = seed;
        Self::new(cfg, |layout| {
            let pages = layout.pages();
            let replayer = workload.replayer(pages).map_err(SourceError::from)?;
            let base = TraceWorkload::base_page(&layout, seed);
            Ok(Box::new(LoopedTrace { workload: workload.clone(), replayer, pages, base }) as Box<dyn ArrivalSource>)
        })
    }

    /// What replaying `workload` under `seed` on this run's array does ([`TraceWorkload::statement`]).
    pub fn trace_statement(&self, workload: &TraceWorkload, seed: u64) -> String {
        workload.statement(&self.static_layout(), seed)
    }
}
