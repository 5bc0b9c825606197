//! One member's recorded trace replayed on one SSD model alone, open loop: every request
//! submitted at its recorded time, whatever the SSD has still to do. The SSD model times an
//! operation when it is submitted (its dies are FIFO servers), so an open-loop replay needs
//! no event queue: each request's completion is known at once, and its wait behind earlier
//! work is inside it.

use crate::engine::{SimConfig, SimError};
use crate::metrics::new_histogram;
use crate::trace::blkparse::{self, Action};
use crate::trace::BLOCK_BYTES;
use hdrhistogram::Histogram;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use swan_core::io::IoClass;
use swan_models::ssd::Ssd;
use swan_models::{DevOp, DevOpKind, Nanos};
use thiserror::Error;

/// Why a member's trace could not be replayed; every message names the file, and the line
/// when one is to blame.
#[derive(Debug, Error)]
pub enum ReplayError {
    #[error(transparent)]
    Trace(#[from] crate::replay::ReplayError),
    #[error("{}:{line}: blocks {block}..{end} reach past the SSD's {pages} pages", .path.display())]
    PastEnd { path: PathBuf, line: u64, block: u64, end: u64, pages: u64 },
}

/// One kind of request's latencies over a replay, µs: each whole, its service time (what it
/// would have taken on the SSD idle: its own pages, the GC it set off itself, the command
/// latency) and its queueing (the rest: waiting behind earlier requests and the GC they set
/// off).
#[derive(Clone, Debug)]
pub struct Split {
    pub latency: Histogram<u64>,
    pub service: Histogram<u64>,
    pub queueing: Histogram<u64>,
}

impl Default for Split {
    fn default() -> Self {
        Split { latency: new_histogram(), service: new_histogram(), queueing: new_histogram() }
    }
}

impl Split {
    fn record(&mut self, latency_ns: Nanos, service_ns: Nanos) {
        let service_ns = service_ns.min(latency_ns);
        self.latency.saturating_record(latency_ns / 1_000);
        self.service.saturating_record(service_ns / 1_000);
        self.queueing.saturating_record((latency_ns - service_ns) / 1_000);
    }

    /// Adds `other`'s requests (another SSD's).
    pub fn add(&mut self, other: &Split) {
        self.latency.add(&other.latency).expect("same histogram bounds");
        self.service.add(&other.service).expect("same histogram bounds");
        self.queueing.add(&other.queueing).expect("same histogram bounds");
    }

    pub fn requests(&self) -> u64 {
        self.latency.len()
    }
}

/// One kind of request's latencies over a replay: all of them, and those of each issuer.
#[derive(Clone, Debug, Default)]
pub struct ByIssuer {
    pub all: Split,
    /// A user request's I/O (`[user]` in the trace).
    pub user: Split,
    /// The array's GC (`[gc]`).
    pub gc: Split,
}

impl ByIssuer {
    fn record(&mut self, gc: bool, latency_ns: Nanos, service_ns: Nanos) {
        self.all.record(latency_ns, service_ns);
        if gc { &mut self.gc } else { &mut self.user }.record(latency_ns, service_ns);
    }

    fn add(&mut self, other: &ByIssuer) {
        self.all.add(&other.all);
        self.user.add(&other.user);
        self.gc.add(&other.gc);
    }
}

/// What replaying one member's trace measured.
#[derive(Clone, Debug, Default)]
pub struct MemberReplay {
    pub reads: ByIssuer,
    pub writes: ByIssuer,
    /// Discards carried out (not timed: they cost only the command).
    pub discards: u64,
    /// Requests recorded earlier than the one before them, submitted with it instead.
    pub out_of_order: u64,
}

impl MemberReplay {
    /// Adds `other`'s requests (another SSD's).
    pub fn add(&mut self, other: &MemberReplay) {
        self.reads.add(&other.reads);
        self.writes.add(&other.writes);
        self.discards += other.discards;
        self.out_of_order += other.out_of_order;
    }
}

/// Member `member` of the run `cfg`, as its SSD stood when the run's clock started: built,
/// filled and aged exactly as the run built it. Refused for runs whose members saw work the
/// trace does not hold: an untimed pre-fill, Harmonia's forced GC, members behind a fabric.
pub fn member_ssd(cfg: &SimConfig, member: u32) -> Result<Ssd, SimError> {
    let refuse = |why: &str| Err(SimError::Config(format!("a member's trace cannot be replayed alone: {why}")));
    if cfg.prefill.is_some() {
        return refuse("the run's untimed pre-fill wrote to its SSDs before the trace began");
    }
    if cfg.ggc.is_some() {
        return refuse("Harmonia's forced GC runs on the SSDs without a request in the trace");
    }
    if cfg.fabric.is_some() {
        return refuse("its members are clusters behind a fabric, not SSDs");
    }
    let members = cfg.array.members();
    if member >= members {
        return Err(SimError::Config(format!("the array has {members} members, not {}", member + 1)));
    }
    cfg.ssd.validate().map_err(SimError::Ssd)?;
    crate::engine::build_ssd(cfg, member, members)
}

/// Replays the blkparse trace at `path` (gzipped if its name ends in `.gz`) on `ssd`.
pub fn replay(ssd: &mut Ssd, path: &Path) -> Result<MemberReplay, ReplayError> {
    replay_lines(ssd, path, crate::replay::open_file(path)?)
}

/// Replays the blkparse lines of `reader` (named `path` in messages) on `ssd`, open loop at
/// their recorded times (a line timed before the one above it goes with it). Reads, writes
/// and discards are carried out as user operations (a trace carries no priority); flushes
/// and lines without a request are passed over, and a malformed line is an error. A line
/// whose process field is `[gc]` is counted as the array GC's, any other as the user's.
pub fn replay_lines(ssd: &mut Ssd, path: &Path, mut reader: impl BufRead) -> Result<MemberReplay, ReplayError> {
    let mut out = MemberReplay::default();
    let mut line = String::new();
    let (mut line_no, mut last): (u64, Nanos) = (0, 0);
    loop {
        line.clear();
        let read = reader.read_line(&mut line).map_err(|source| {
            let e = crate::replay::ReplayError::Read { path: path.to_path_buf(), line: line_no + 1, source };
            ReplayError::Trace(e)
        })?;
        if read == 0 {
            break;
        }
        line_no += 1;
        let bad = |error| crate::replay::ReplayError::BadLine { path: path.to_path_buf(), line: line_no, error };
        let Some(r) = blkparse::parse_request(&line).map_err(bad)? else { continue };
        let block = r.offset_bytes / BLOCK_BYTES;
        let end = r.offset_bytes.saturating_add(r.size_bytes).div_ceil(BLOCK_BYTES);
        if end > ssd.user_pages() {
            let pages = ssd.user_pages();
            return Err(ReplayError::PastEnd { path: path.to_path_buf(), line: line_no, block, end, pages });
        }
        let kind = match r.action {
            Action::Read => DevOpKind::Read,
            Action::Write => DevOpKind::Write,
            Action::Discard => DevOpKind::Trim,
        };
        if r.time_ns < last {
            out.out_of_order += 1;
        }
        let at = r.time_ns.max(last);
        last = at;
        let count = u32::try_from(end - block).expect("a request of fewer than 2^32 blocks");
        let served = ssd.submit_split(at, DevOp { kind, block, count, class: IoClass::User });
        let gc = line.trim_end().ends_with("[gc]");
        match r.action {
            Action::Read => out.reads.record(gc, served.done - at, served.service_ns),
            Action::Write => out.writes.record(gc, served.done - at, served.service_ns),
            Action::Discard => out.discards += 1,
        }
    }
    Ok(out)
}
