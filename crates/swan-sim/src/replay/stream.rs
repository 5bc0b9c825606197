//! The second pass over a trace: records turned into volume requests with arrival times.

use super::{ReplayError, ReplayMode, MAX_REQUEST_BLOCKS};
use crate::trace::{AddressPolicy, TraceOp, TraceReader, BLOCK_BYTES};
use std::io::BufRead;
use std::path::PathBuf;

/// One request to issue: `blocks` 4 KiB blocks from `block` of the volume.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReplayRequest {
    /// Arrival in ns from the replay's start (0 in a closed loop); never before the previous one.
    pub at_ns: u64,
    /// The record's own time in the trace, whatever the replay mode.
    pub trace_ns: u64,
    pub op: TraceOp,
    pub block: u64,
    pub blocks: u64,
    /// The issuing application (see [`crate::trace::apps`]); every piece carries its record's.
    pub app: u32,
}

impl ReplayRequest {
    pub fn offset_bytes(&self) -> u64 {
        self.block * BLOCK_BYTES
    }

    pub fn len_bytes(&self) -> u64 {
        self.blocks * BLOCK_BYTES
    }
}

/// What is left of a record cut into pieces.
#[derive(Clone, Copy, Debug)]
struct Rest {
    /// The next piece's first trace block, and the blocks left from it.
    first: u64,
    left: u64,
    op: TraceOp,
    at_ns: u64,
    trace_ns: u64,
    app: u32,
}

/// Yields a trace's requests mapped into a volume (see the module comment of [`super`]);
/// reads one line at a time.
pub struct Replayer<R> {
    path: PathBuf,
    reader: TraceReader<R>,
    mode: ReplayMode,
    policy: AddressPolicy,
    volume_blocks: u64,
    span_bytes: u64,
    /// Records with data to replay (the scan's count: `max_requests` applied).
    records_total: u64,
    records_done: u64,
    /// The rest of a record cut into pieces.
    rest: Option<Rest>,
    last_at: u64,
}

impl<R: BufRead> Replayer<R> {
    pub(super) fn new(
        path: PathBuf,
        reader: TraceReader<R>,
        mode: ReplayMode,
        policy: AddressPolicy,
        volume_blocks: u64,
        span_bytes: u64,
        records_total: u64,
    ) -> Self {
        Replayer {
            path,
            reader,
            mode,
            policy,
            volume_blocks,
            span_bytes,
            records_total,
            records_done: 0,
            rest: None,
            last_at: 0,
        }
    }

    /// Records (trace requests with data) started so far.
    pub fn records_done(&self) -> u64 {
        self.records_done
    }

    pub fn records_total(&self) -> u64 {
        self.records_total
    }

    /// Application names by id, as far as the trace has been read.
    pub fn application_names(&self) -> &[String] {
        self.reader.applications().names()
    }

    /// Lines skipped as malformed so far.
    pub fn skipped(&self) -> u64 {
        self.reader.skipped()
    }

    /// The next piece of the current record, placed by the policy.
    fn piece(&mut self) -> Option<ReplayRequest> {
        let r = self.rest?;
        let n = r.left.min(MAX_REQUEST_BLOCKS);
        self.rest = (r.left > n).then_some(Rest { first: r.first + n, left: r.left - n, ..r });
        let extent = self.policy.map(r.first * BLOCK_BYTES, n * BLOCK_BYTES, self.volume_blocks, self.span_bytes);
        Some(ReplayRequest {
            at_ns: r.at_ns,
            trace_ns: r.trace_ns,
            op: r.op,
            block: extent.start_block,
            blocks: extent.blocks,
            app: r.app,
        })
    }
}

impl<R: BufRead> Iterator for Replayer<R> {
    type Item = Result<ReplayRequest, ReplayError>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(p) = self.piece() {
            return Some(Ok(p));
        }
        while self.records_done < self.records_total {
            let r = match self.reader.next() {
                Some(Ok(r)) => r,
                None => {
                    // The first pass counted more: the file changed under us.
                    let (done, total) = (self.records_done, self.records_total);
                    self.records_total = done;
                    return Some(Err(ReplayError::Changed { path: self.path.clone(), done, total }));
                }
                Some(Err(e)) => {
                    self.records_total = self.records_done;
                    return Some(Err(ReplayError::at_line(&self.path, e)));
                }
            };
            if r.size_bytes == 0 {
                continue;
            }
            self.records_done += 1;
            let at = self.mode.arrival_ns(r.time_ns).max(self.last_at);
            self.last_at = at;
            let first = r.offset_bytes / BLOCK_BYTES;
            let blocks = r.end_bytes().div_ceil(BLOCK_BYTES) - first;
            self.rest = Some(Rest { first, left: blocks, op: r.op, at_ns: at, trace_ns: r.time_ns, app: r.app });
            return self.piece().map(Ok);
        }
        None
    }
}
