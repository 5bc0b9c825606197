//! Each measured window of a trace on its own (see [`crate::replay::Window`]): its requests,
//! bytes, simulated span and latencies, and, in SWAN, its reads by R-group role — what one
//! phase of an application run (YCSB's Load, A, B, …) would have shown had it been measured
//! alone, over the array state the phases before it left.

use super::reads::{ReadQueue, ReadRoles};
use crate::metrics::Latencies;
use swan_core::driver::GroupRole;
use swan_core::scheme::{ReqOp, Request};
use swan_core::BLOCK_BYTES;
use swan_models::Nanos;

/// What one window measured.
#[derive(Clone, Debug, Default)]
pub struct WindowOutput {
    pub reads: u64,
    pub writes: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Simulated time its first request was issued and its last one completed.
    pub first_issue_ns: Option<Nanos>,
    pub last_completion_ns: Nanos,
    pub latencies: Latencies,
    /// SWAN: its reads by the role of the R-group they landed on.
    pub read_roles: ReadRoles,
}

impl WindowOutput {
    /// A request of this window, issued at `issued_at`, completed at `now`.
    pub(super) fn complete(
        &mut self,
        req: &Request,
        issued_at: Nanos,
        now: Nanos,
        role: Option<(GroupRole, ReadQueue)>,
    ) {
        let bytes = u64::from(req.blocks) * BLOCK_BYTES;
        match req.op {
            ReqOp::Read => {
                self.reads += 1;
                self.read_bytes += bytes;
            }
            ReqOp::Write => {
                self.writes += 1;
                self.write_bytes += bytes;
            }
            ReqOp::Trim | ReqOp::Flush => return,
        }
        self.latencies.record(req.op == ReqOp::Read, now - issued_at);
        self.first_issue_ns = Some(self.first_issue_ns.map_or(issued_at, |t| t.min(issued_at)));
        self.last_completion_ns = self.last_completion_ns.max(now);
        if let Some((role, queue)) = role {
            self.read_roles.record(role, now - issued_at, queue);
        }
    }

    /// Simulated seconds from its first issue to its last completion (0 if it had none).
    pub fn span_s(&self) -> f64 {
        self.first_issue_ns.map_or(0.0, |t| (self.last_completion_ns - t) as f64 / 1e9)
    }

    /// Bytes read and written per simulated second of its span, in MB/s.
    pub fn mbps(&self) -> f64 {
        let s = self.span_s();
        if s > 0.0 {
            (self.read_bytes + self.write_bytes) as f64 / s / 1e6
        } else {
            0.0
        }
    }
}
